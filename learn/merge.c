/*
 * merge.c - one job into a fabric's state (learn/merge.h): lock, load,
 * read, check the job is whole, merge into a copy, publish, unlock.
 *
 * The merge goes into a fresh state (the current one's contents, then the
 * job's), so a failure half-way leaves the loaded state untouched and
 * nothing is published. Spool-file ids become sources of the new state,
 * which is how a file is never merged twice.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/compile.h"
#include "learn/fabricdir.h"
#include "learn/merge.h"
#include "learn/store.h"
#include "policies/context.h"

/* A job is merged whole, once: its samples are reduced over all of its
 * ranks together. A part of a job merged alone keeps its ranks' arrival
 * skew (and counts the job twice in rounds). A job whose new files all
 * failed validation is refused too, not "nothing new": a compactor must
 * not acknowledge corrupt input as merged. */
static int job_whole(const struct bot_merge_req *req, const struct bot_merge_result *res,
		     const struct bot_log *log)
{
	char why[128] = "";

	if (req->partial)
		return 1;
	if (res->rejected && !res->merged) {
		char before[64] = "";

		if (res->merged_before)
			snprintf(before, sizeof(before), " (%zu merged before)", res->merged_before);
		bot_log_msg(log, BOT_LOG_ERROR, "%s: of this job's %zu spool file(s), %zu failed "
			    "validation (rejected, named above) and none is new%s; nothing merged: "
			    "fix or remove the rejected files", req->fabric, res->files, res->rejected,
			    before);
		return 0;
	}
	if (!res->merged || (!res->rejected && !res->merged_before))
		return 1;
	/* each reason said only where it holds: never "0 failed validation" */
	if (res->rejected)
		snprintf(why, sizeof(why), "%zu failed validation (rejected, named above)%s",
			 res->rejected, res->merged_before ? " and " : "");
	if (res->merged_before)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%zu were merged before",
			 res->merged_before);
	bot_log_msg(log, BOT_LOG_ERROR, "%s: of this job's %zu spool file(s), %s; nothing "
		    "merged, not even the %zu valid new file(s): a job is merged whole, once. "
		    "%s the valid new ones alone (a partial merge)", req->fabric, res->files, why,
		    res->merged, res->rejected ? "Fix or remove the rejected files, or merge" :
		    "Merge");
	return 0;
}

/* Paths that hold no spool file: an error naming them (an empty or
 * misnamed directory is not a job, nor part of one: formats.md section 12,
 * "Merging"), names[0..n-1] of them. */
static void nothing_listed(const struct bot_merge_req *req, const char *const *names, size_t n,
			   const struct bot_log *log)
{
	char list[1024];
	size_t m = 0;

	list[0] = 0;
	for (size_t i = 0; i < n && m < sizeof(list); i++) {
		if (i == 4) {
			snprintf(list + m, sizeof(list) - m, " and %zu more", n - 4);
			break;
		}
		m += (size_t)snprintf(list + m, sizeof(list) - m, "%s%s", i ? ", " : "", names[i]);
	}
	bot_log_msg(log, BOT_LOG_ERROR, "%s: no spool files in %s (a job's files are named "
		    "*.spool, or a directory holds them); nothing merged", req->fabric,
		    n ? list : "no path");
}

/* Each path listed alone, before the state is touched: *files the spool
 * files they hold in all, and an error naming those that hold none (a
 * directory without *.spool entries), or one that cannot be listed. 0 or
 * -1 (said on log). */
static int list_paths(const struct bot_merge_req *req, size_t *files, const struct bot_log *log)
{
	const char **empty = calloc(req->npaths ? req->npaths : 1, sizeof(*empty));
	char err[BOT_STATE_ERR_MAX];
	size_t nempty = 0;
	int rc = 0;

	*files = 0;
	if (!empty) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: out of memory; nothing merged", req->fabric);
		return -1;
	}
	for (size_t i = 0; i < req->npaths; i++) {
		struct bot_compile_paths one;

		if (bot_compile_list(&req->paths[i], 1, &one, err, sizeof(err)) < 0) {
			bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing merged", err);
			rc = -1;
			break;
		}
		if (one.n == 0)
			empty[nempty++] = req->paths[i];
		*files += one.n;
		bot_compile_paths_free(&one);
	}
	if (rc == 0 && (nempty || !req->npaths)) {
		nothing_listed(req, empty, nempty, log);
		rc = -1;
	}
	free(empty);
	return rc;
}

/* Does the state directory hold nothing for this fabric yet (no directory
 * of its name)? Anything else, an error included, says no: the locked path
 * then decides as before. */
static int fabric_absent(const struct bot_merge_req *req)
{
	char err[BOT_STATE_ERR_MAX];
	int fd = bot_fabricdir_open(req->dir, req->fabric, 0, NULL, err, sizeof(err));

	if (fd >= 0)
		close(fd);
	return fd == -2;
}

/* A job's files read and judged (job_whole) before the lock, for a fabric
 * without state: what the locked path would read, said on log as it says
 * it. */
struct early {
	struct bot_compile_report rep;
	struct bot_kb *batch;
	uint64_t *src;
	size_t nsrc;
};

static void early_free(struct early *e)
{
	bot_kb_free(e->batch);
	free(e->src);
	memset(e, 0, sizeof(*e));
}

/* The outcome the batch would have: PUBLISHED when it would merge (e holds
 * it), else NOTHING_NEW, REFUSED, or FAILED when it cannot be read (the
 * reason said); res's files, rejected and merged filled. */
static enum bot_merge_outcome judge_early(const struct bot_merge_req *req, struct early *e,
					  struct bot_merge_result *res, const struct bot_log *log)
{
	char err[BOT_STATE_ERR_MAX];

	if (bot_compile_read(req->paths, req->npaths, NULL, &e->batch, &e->src, &e->nsrc,
			     &e->rep, log, err, sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing merged", err);
		return BOT_MERGE_FAILED;
	}
	res->files = e->rep.files;
	res->rejected = e->rep.files_rejected;
	res->merged = res->valid_new = e->nsrc;
	if (!job_whole(req, res, log))
		return BOT_MERGE_REFUSED;
	return e->nsrc ? BOT_MERGE_PUBLISHED : BOT_MERGE_NOTHING_NEW;
}

/* next = cur + batch, with cur's sources and the batch's, made from the
 * snapshot `from` names ("" when the fabric had none). An arm whose
 * counters would overflow is halved (bot_stats_merge), said on the log. */
static int merge_into(struct bot_state *next, const struct bot_state *cur, const char *from,
		      const struct bot_kb *batch, const uint64_t *src, size_t nsrc,
		      const struct bot_log *log)
{
	int halved;

	if (bot_state_init(next, cur->fabric) < 0 || bot_kb_merge(next->kb, cur->kb) < 0 ||
	    (halved = bot_kb_merge(next->kb, batch)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: merging failed: out of memory; nothing "
			    "published", cur->fabric);
		return -1;
	}
	if (halved)
		bot_log_msg(log, BOT_LOG_WARN, "%s: %d arm histogram(s) would have passed 2^32-1 "
			    "samples in a bin or 2^40 in all: halved (formats.md section 12)",
			    cur->fabric, halved);
	next->rounds = cur->rounds + (cur->rounds < UINT64_MAX);
	next->parent = bot_state_snap_digest(from);
	/* the compactor's ledger (its dedup set and the window's use) goes on
	 * with the fabric: a state add between two compactions must not make
	 * the next one forget what it merged */
	next->ledger = cur->ledger;
	next->epoch = cur->epoch;	/* the decay its statistics went through */
	/* sorted already: one copy; the batch's sorted and merged once */
	if (bot_state_add_sources(next, cur->src, cur->nsources) < 0 ||
	    bot_state_add_sources(next, src, nsrc) < 0)
		goto oom;
	return 0;
oom:
	if (cur->nsources + nsrc > BOT_STATE_MAX_SOURCES)
		bot_log_msg(log, BOT_LOG_ERROR, "%s: merging failed: the state would hold more "
			    "than %u sources; nothing published", cur->fabric,
			    BOT_STATE_MAX_SOURCES);
	else
		bot_log_msg(log, BOT_LOG_ERROR, "%s: merging failed: out of memory; nothing "
			    "published", cur->fabric);
	return -1;
}

int bot_merge_job(const struct bot_merge_req *req, struct bot_merge_result *res,
		  const struct bot_log *log)
{
	struct bot_state cur = { 0 }, next = { 0 };
	struct bot_compile_report rep;
	struct bot_lock own, *lock = req->lock;
	struct bot_kb *batch = NULL;
	uint64_t *src = NULL;
	size_t nsrc = 0;
	struct early early = { 0 };
	char err[BOT_STATE_ERR_MAX], old[BOT_STATE_NAME_MAX];
	int loaded, pub;

	memset(res, 0, sizeof(*res));
	res->outcome = BOT_MERGE_FAILED;
	/* The inputs are listed before the state is touched: a path that does
	 * not exist, or lists no spool file (alone or beside paths that do:
	 * each path is a part of the job, and an empty one a mistake to name,
	 * not to merge around), leaves no trace in the state
	 * directory (taking the lock makes the fabric's directory, so a
	 * mistyped fabric would otherwise stay behind, and `state verify`
	 * would list it). They are listed again under the lock and read. For
	 * a fabric without state they are read here, before the lock: a batch
	 * that would not merge (a file that fails validation, or none new) is
	 * refused without making the fabric's directory, and one that would is
	 * merged from this read if the fabric still has no state under the
	 * lock (else read again there, quietly: said once). */
	if (list_paths(req, &res->files, log) < 0)
		return -1;
	if (fabric_absent(req)) {
		res->outcome = judge_early(req, &early, res, log);
		if (res->outcome != BOT_MERGE_PUBLISHED) {
			early_free(&early);
			res->merged = 0;
			return res->outcome <= BOT_MERGE_NOTHING_NEW ? 0 : -1;
		}
		res->outcome = BOT_MERGE_FAILED;
	}
	if (!lock) {
		bot_lock_init_flock(&own);
		lock = &own;
	}
	if (lock->acquire(lock, req->dir, req->fabric, err, sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing merged", err);
		early_free(&early);
		res->merged = 0;	/* the early read's count: nothing was */
		return -1;
	}
	if (bot_store_complete(req->dir, req->fabric, res->snapshot, err, sizeof(err)) > 0)
		bot_log_msg(log, BOT_LOG_WARN, "%s: completed an interrupted first publish: "
			    "`current` now names %s", req->fabric, res->snapshot);
	loaded = bot_store_load(req->dir, req->fabric, &cur, res->snapshot, err, sizeof(err));
	if (loaded < 0) {
		/* the store's message names the file and, for a lost
		 * `current`, what to do ("fix or move the file" was wrong
		 * advice there) */
		bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing merged (nccl-bot state verify lists "
			    "the fabric's snapshots)", err);
		goto out;
	}
	res->contexts = bot_kb_count(cur.kb);
	res->round = cur.rounds;
	if (early.batch && loaded == 1) {	/* still no state: the early read */
		batch = early.batch;
		src = early.src;
		nsrc = early.nsrc;
		rep = early.rep;
		early.batch = NULL;
		early.src = NULL;
	} else if (bot_compile_read(req->paths, req->npaths, &cur, &batch, &src, &nsrc, &rep,
				    early.batch ? NULL : log, err, sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing merged", err);
		goto out;
	}
	early_free(&early);
	res->files = rep.files;
	res->merged = res->valid_new = nsrc;
	res->merged_before = rep.files_merged_before;
	res->rejected = rep.files_rejected;
	if (res->files == 0) {	/* emptied since they were listed */
		nothing_listed(req, req->paths, req->npaths, log);
		goto out;
	}
	if (!job_whole(req, res, log)) {
		res->merged = 0;
		res->outcome = BOT_MERGE_REFUSED;
		goto out;
	}
	if (nsrc == 0) {
		res->outcome = BOT_MERGE_NOTHING_NEW;
		goto out;
	}
	if (merge_into(&next, &cur, res->snapshot, batch, src, nsrc, log) < 0)
		goto out;
	memcpy(old, res->snapshot, sizeof(old));
	pub = bot_store_publish(req->dir, &next, res->snapshot, err, sizeof(err));
	if (pub < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s; nothing published", err);
		memcpy(res->snapshot, old, sizeof(old));	/* what `current` still names */
		goto out;
	}
	if (pub == 1)
		bot_log_msg(log, BOT_LOG_WARN, "%s: published, but older snapshots were not "
			    "pruned: %s", req->fabric, err);
	res->collectives = rep.collectives;
	res->contexts = bot_kb_count(next.kb);
	res->round = next.rounds;
	res->outcome = BOT_MERGE_PUBLISHED;
out:
	lock->release(lock);
	early_free(&early);
	bot_state_free(&next);
	bot_state_free(&cur);
	bot_kb_free(batch);
	free(src);
	if (res->outcome != BOT_MERGE_PUBLISHED)
		res->merged = 0;
	return res->outcome <= BOT_MERGE_NOTHING_NEW ? 0 : -1;
}
