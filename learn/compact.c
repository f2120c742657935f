/*
 * compact.c - the compactor (learn/compact.h, doc/formats.md section 14).
 *
 * Order of a fabric's transaction: ledger file, snapshot, `current`
 * (bot_store_publish), then the inbox cleanup and the provenance lines. A
 * crash before `current` leaves the old state, whose ledger does not hold
 * the new identities, so the deltas still in the inbox merge again (but a
 * fabric's first publish crashed after its snapshot's rename: that snapshot
 * is the state, learn/store.h, completed by the next run); a crash after it
 * leaves the new state, whose ledger holds them, so those still in the
 * inbox are duplicates. Either way every delta counts exactly once.
 * held/ is a second inbox with the same rule: a held delta merged is in
 * the ledger before it leaves held/; moves into held/ and out of it to the
 * quarantine are single renames of a delta never counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/readall.h"
#include "learn/compact.h"
#include "learn/compile.h"
#include "learn/crash.h"
#include "learn/fabricdir.h"
#include "learn/ledger.h"
#include "learn/lock.h"
#include "learn/ship.h"
#include "learn/store.h"
#include "policies/context.h"

#define ERRMAX 1024

void bot_compact_conf_default(struct bot_compact_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->window = 86400;
	c->user_cap = 4096;
	c->account_cap = 4 * 4096;
	c->dedup_windows = 14;
	c->settle = 300;
	c->max_wait = 3600;
	c->consensus_min = 4;
	c->consensus_users = 3;
	c->hold_windows = 0;	/* dedup_windows - 1 */
	c->retention = 8;
	c->now = -1;
	c->max_bytes = BOT_COMPACT_MAX_BYTES;
}

static const char *const reason_names[BOT_Q_NREASONS] = {
	"unreadable", "inconsistent-step", "unknown-fabric", "too-old", "impossible-context",
	"consensus",
};

const char *bot_compact_reason_name(int reason)
{
	return reason >= 0 && reason < BOT_Q_NREASONS ? reason_names[reason] : "unknown";
}

/* ---- provenance text ------------------------------------------------------------ */

struct text {
	char *p;
	size_t n, cap;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (t->p && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		{
			size_t nc = (t->cap ? t->cap * 2 : 4096) + (size_t)k;
			char *np = realloc(t->p, nc);

			if (!np)
				return;
			t->p = np;
			t->cap = nc;
		}
	}
}

/* One delta of the inbox, as its header says (records are read again at
 * merge time, one step at a time, so memory is bounded by a step). */
struct item {
	char *name;
	struct bot_delta_hdr h;
	uint64_t identity;
	int64_t mtime;
	int done;			/* quarantined or removed */
	int held;			/* it lies in held/, not in the inbox */
};

struct group {
	size_t first, n;		/* items[first .. first+n) */
	uint64_t order;			/* the smallest identity: merge order */
};

struct run {
	const struct bot_compact_conf *c;
	struct bot_compact_result *r;
	const struct bot_log *log;
	int infd, qfd, hfd;
	char inpath[4200], qpath[4200], hpath[4200];
	int64_t now;
	uint64_t wnow;
	struct item *it;
	size_t nit;
	struct group *g;
	size_t ng;
	struct text early;		/* provenance of quarantines before a fabric */
	uint64_t nread;			/* deltas read, for c->progress */
	/* per directory (inbox 0, held/ 1) whose listing was cut: the job step
	 * of its last delta listed, which may have more deltas past the cut */
	int cut[2];
	struct bot_delta_hdr cut_h[2];
};

/* A file name as one word of a provenance line: a byte outside
 * [A-Za-z0-9._+-] (a blank, a control character) becomes '?'. */
static const char *word(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = (src[i] >= 'a' && src[i] <= 'z') || (src[i] >= 'A' && src[i] <= 'Z') ||
			 (src[i] >= '0' && src[i] <= '9') || strchr("._+-", src[i]) ? src[i] : '?';
	dst[i] = 0;
	return dst;
}

/* The directory a delta lies in: the inbox, or held/. */
static int item_fd(const struct run *x, const struct item *it)
{
	return it->held ? x->hfd : x->infd;
}

static const char *item_dir(const struct run *x, const struct item *it)
{
	return it->held ? x->hpath : x->inpath;
}

/* Remove a delta that left (merged and published, or a duplicate), and a
 * held one's .why: 0, or -1 with errno. */
static int remove_item(struct run *x, struct item *it)
{
	char wname[512 + 8];

	if (unlinkat(item_fd(x, it), it->name, 0) < 0 && errno != ENOENT)
		return -1;
	if (it->held) {
		snprintf(wname, sizeof(wname), "%s.why", it->name);
		unlinkat(x->hfd, wname, 0);
	}
	return 0;
}

/* ---- quarantine ------------------------------------------------------------ */


/* The reason next to a quarantined or held delta: dirfd/wname created
 * O_EXCL, "reason\n" with the reason escaped first (a newline in it becomes
 * \x0a, the line's own end stays a newline), fsynced. A failure only costs
 * the reason: it is warned about, the move goes on. */
static void write_why(struct run *x, int dirfd, const char *dirpath, const char *wname,
		      const char *why)
{
	char line[ERRMAX + 2];
	int fd;

	snprintf(line, sizeof(line) - 1, "%s", why);
	bot_log_esc_inplace(line, sizeof(line) - 1);
	strcat(line, "\n");
	fd = openat(dirfd, wname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return;
	if (write(fd, line, strlen(line)) < 0 || fsync(fd) < 0)
		bot_log_msg(x->log, BOT_LOG_WARN, "%s/%s: %s", dirpath, wname, strerror(errno));
	close(fd);
}
/* Move inbox/name to quarantine/ with name.why ("reason\n"), never over an
 * existing file: name, name.1, name.2, ...; a byte of the name outside
 * [A-Za-z0-9._+-] becomes '?' there (as in the provenance lines), so what
 * is quarantined can be listed and dropped. */
static int quarantine(struct run *x, struct item *it, int reason, const char *why)
{
	char base[512], target[512 + 16], wname[512 + 24];
	struct stat st;
	int k;

	word(base, sizeof(base), it->name);
	for (k = 0; k < 1000; k++) {
		if (k)
			snprintf(target, sizeof(target), "%s.%d", base, k);
		else
			snprintf(target, sizeof(target), "%s", base);
		snprintf(wname, sizeof(wname), "%s.why", target);
		if (fstatat(x->qfd, target, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
		    fstatat(x->qfd, wname, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			break;
	}
	if (k == 1000) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s/%s: 1000 quarantined copies of that name; "
			    "left in the inbox", x->qpath, it->name);
		return -1;
	}
	write_why(x, x->qfd, x->qpath, wname, why);
	if (renameat(item_fd(x, it), it->name, x->qfd, target) < 0) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s/%s: cannot quarantine: %s", item_dir(x, it),
			    it->name, strerror(errno));
		return -1;
	}
	fsync(x->qfd);
	fsync(item_fd(x, it));
	if (it->held) {	/* its .why in held/ said why it was held */
		snprintf(wname, sizeof(wname), "%s.why", it->name);
		unlinkat(x->hfd, wname, 0);
		it->held = 0;
	}
	it->done = 1;
	x->r->quarantined++;
	x->r->by_reason[reason]++;
	bot_log_msg(x->log, BOT_LOG_WARN, "quarantined %s: %s", it->name, why);
	return 0;
}

/*
 * A quarantine before the delta's fabric is known to be sound (unreadable,
 * an inconsistent step, a fabric outside the site's list): moved as usual,
 * and its provenance line kept for <state>/.ledger/provenance.log (what
 * the header does not say, because the reader refused it, is "-").
 */
static void quarantine_early(struct run *x, struct item *it, int reason, const char *why,
			     int hdr_ok)
{
	char name[BOT_DELTA_NAME_MAX + 16];

	if (quarantine(x, it, reason, why) < 0)
		return;
	word(name, sizeof(name), it->name);
	if (hdr_ok)
		text_add(&x->early, "%lld quarantined %s %s %u %s %s %s\n", (long long)x->now,
			 bot_compact_reason_name(reason), name, it->h.uid,
			 it->h.account[0] ? it->h.account : "-", it->h.node, it->h.fabric);
	else
		text_add(&x->early, "%lld quarantined %s %s - - - -\n", (long long)x->now,
			 bot_compact_reason_name(reason), name);
}

/*
 * Move inbox/name to held/name (the same name: the next run lists held/
 * as it lists the inbox) with name.why ("reason\n") written first, so a
 * crash leaves at worst a .why without its delta (ignored). A name already
 * held stays in the inbox (said). 0, or -1.
 */
static int hold(struct run *x, struct item *it, const char *why)
{
	char wname[512 + 8];
	struct stat st;

	if (it->held)
		return 0;
	if (fstatat(x->hfd, it->name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s/%s: a delta of that name is held already; "
			    "left in the inbox", x->hpath, it->name);
		return -1;
	}
	snprintf(wname, sizeof(wname), "%s.why", it->name);
	unlinkat(x->hfd, wname, 0);	/* a .why a crash left */
	write_why(x, x->hfd, x->hpath, wname, why);
	if (renameat(x->infd, it->name, x->hfd, it->name) < 0) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s/%s: cannot hold: %s", x->inpath, it->name,
			    strerror(errno));
		unlinkat(x->hfd, wname, 0);
		return -1;
	}
	fsync(x->hfd);
	fsync(x->infd);
	it->held = 1;
	bot_log_msg(x->log, BOT_LOG_INFO, "held %s: %s", it->name, why);
	return 0;
}

/* Append the early quarantines' lines to <state>/.ledger/provenance.log
 * (0600 in a 0700 directory); a failure is a warning (the .why stays). */
static void flush_early(struct run *x)
{
	char err[ERRMAX], path[4200];
	int top;

	if (!x->early.n)
		return;
	top = bot_ledger_open_dir(x->c->state, NULL, path, sizeof(path), err, sizeof(err));
	if (top < 0 || bot_ledger_provenance(top, path, x->early.p, x->early.n, err,
					     sizeof(err)) < 0)
		bot_log_msg(x->log, BOT_LOG_WARN, "%s", err);
	if (top >= 0)
		close(top);
	x->early.n = 0;
}

/* ---- listing and grouping ----------------------------------------------------- */

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->h.cluster, b->h.cluster)) || (c = strcmp(a->h.job, b->h.job)))
		return c;
	if (a->h.restart != b->h.restart)
		return a->h.restart < b->h.restart ? -1 : 1;
	if (a->h.step != b->h.step)
		return a->h.step < b->h.step ? -1 : 1;
	/* a step's deltas with an identity from Slurm first (make_groups) */
	if ((a->h.flags ^ b->h.flags) & BOT_DELTA_F_SLURM)
		return a->h.flags & BOT_DELTA_F_SLURM ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int same_step(const struct item *a, const struct item *b)
{
	return !strcmp(a->h.cluster, b->h.cluster) && !strcmp(a->h.job, b->h.job) &&
	       a->h.restart == b->h.restart && a->h.step == b->h.step;
}

static int in_list(const char *s, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, v[i]))
			return 1;
	return 0;
}

/* Read every delta's header of one directory (the whole file is
 * validated), quarantine what the reader refuses; at most c->max_bytes of
 * deltas per run and directory (by size, the first by name, at least one;
 * the rest wait for the next run): a full held/ never starves the inbox. */
static int list_dir(struct run *x, int dfd, const char *dpath, int held)
{
	uint64_t bytes = 0;
	size_t listed = 0;
	char err[ERRMAX], **names;
	uint64_t max_bytes = x->c->max_bytes ? x->c->max_bytes : BOT_COMPACT_MAX_BYTES;
	struct item *nit;
	size_t n, first = x->nit;
	int more;

	if (bot_ship_list(dfd, dpath, BOT_COMPACT_MAX_INBOX, &names, &n, &more, err,
			  sizeof(err)) < 0) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s", err);
		return -1;
	}
	if (!held)
		x->r->unlisted = (size_t)more;
	if (more)
		bot_log_msg(x->log, BOT_LOG_INFO, "%s: more than %u deltas; the rest wait for the "
			    "next run", dpath, BOT_COMPACT_MAX_INBOX);
	nit = realloc(x->it, (x->nit + n + 1) * sizeof(*x->it));
	if (!nit) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		bot_log_msg(x->log, BOT_LOG_ERROR, "out of memory");
		return -1;
	}
	x->it = nit;
	memset(x->it + x->nit, 0, (n + 1) * sizeof(*x->it));
	for (size_t i = 0; i < n; i++) {
		struct item *it = &x->it[x->nit];
		char path[4500];
		struct bot_delta d;
		struct stat st;
		uint64_t size = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				st.st_size > 0 ? (uint64_t)st.st_size : 0;

		if (listed && bytes + size > max_bytes) {
			bot_log_msg(x->log, BOT_LOG_INFO, "%s: more than %" PRIu64 " bytes of deltas; "
				    "%zu wait for the next run", dpath, max_bytes, n - i);
			for (size_t j = i; j < n; j++)
				free(names[j]);
			more = 1;
			break;
		}
		bytes += size;
		listed++;
		memset(it, 0, sizeof(*it));
		it->name = names[i];
		it->held = held;
		if (held)
			x->r->held_listed++;
		else
			x->r->inbox++;
		snprintf(path, sizeof(path), "%s/%s", dpath, names[i]);
		if (bot_delta_read_at(dfd, names[i], path, &d, err, sizeof(err)) < 0) {
			/* gone meanwhile (nobody else removes these files): nothing to do */
			if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
				bot_log_esc_inplace(err, sizeof(err));
				quarantine_early(x, it, BOT_Q_UNREADABLE, err, 0);
			}
			free(names[i]);
			it->name = NULL;
			continue;
		}
		it->h = d.hdr;
		it->identity = d.identity;
		bot_delta_free(&d);
		it->mtime = fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 ?
			    (int64_t)st.st_mtime : x->now;
		x->nit++;
	}
	/* the last listed: its step may go on past the cut, unless it is the
	 * first listed too (a step over a whole run's bound merges in part,
	 * or it never would) */
	if (more && x->nit > first) {
		const struct bot_delta_hdr *a = &x->it[first].h, *b = &x->it[x->nit - 1].h;

		x->cut[held] = strcmp(a->cluster, b->cluster) || strcmp(a->job, b->job) ||
			       a->restart != b->restart || a->step != b->step;
		x->cut_h[held] = *b;
	}
	free(names);
	return 0;
}

/* Is h's job step one whose deltas a cut listing may have left out? */
static int step_cut(const struct run *x, const struct bot_delta_hdr *h)
{
	for (int d = 0; d < 2; d++) {
		const struct bot_delta_hdr *c = &x->cut_h[d];

		if (x->cut[d] && !strcmp(c->cluster, h->cluster) && !strcmp(c->job, h->job) &&
		    c->restart == h->restart && c->step == h->step)
			return 1;
	}
	return 0;
}

/* held/ and the inbox, sorted by job step */
static int list_inbox(struct run *x)
{
	if (list_dir(x, x->hfd, x->hpath, 1) < 0 || list_dir(x, x->infd, x->inpath, 0) < 0)
		return -1;
	if (x->nit > 1)
		qsort(x->it, x->nit, sizeof(*x->it), cmp_item);
	return 0;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	return (a->order > b->order) - (a->order < b->order);
}

/* Groups of one job step each; steps whose deltas disagree on uid, fabric,
 * step nodes, account or the trust bits (what the caps charge) are
 * quarantined whole; unknown fabrics too. The step's window is that of its
 * latest step end (process_fabric). */
static int make_groups(struct run *x)
{
	x->g = calloc(x->nit ? x->nit : 1, sizeof(*x->g));
	if (!x->g)
		return -1;
	for (size_t i = 0; i < x->nit;) {
		size_t j = i + 1, end;
		const char *bad = NULL;
		uint64_t order = x->it[i].identity;

		while (j < x->nit && same_step(&x->it[i], &x->it[j]))
			j++;
		/* A delta without an identity from Slurm is its uid's claim (formats
		 * 13 "Trust"): one naming a job step that has deltas with that
		 * identity is quarantined alone, so that a user who can ship cannot
		 * get another user's step quarantined by naming it. They sort last;
		 * the group is the deltas before them. */
		end = j;
		if (x->it[i].h.flags & BOT_DELTA_F_SLURM) {
			char why[ERRMAX];

			for (j = i + 1; j < end && (x->it[j].h.flags & BOT_DELTA_F_SLURM); j++)
				;
			if (j < end)
				snprintf(why, sizeof(why), "a delta without an identity from Slurm "
					 "names job step %s.%s.%u.%u, whose other deltas have one",
					 x->it[i].h.cluster, x->it[i].h.job, x->it[i].h.restart,
					 x->it[i].h.step);
			for (size_t k = j; k < end; k++)
				quarantine_early(x, &x->it[k], BOT_Q_GROUP, why, 1);
		}
		for (size_t k = i + 1; k < j && !bad; k++) {
			const struct bot_delta_hdr *a = &x->it[i].h, *b = &x->it[k].h;

			if (a->uid != b->uid)
				bad = "uid";
			else if (strcmp(a->fabric, b->fabric))
				bad = "fabric";
			else if (a->step_nodes != b->step_nodes)
				bad = "step nodes";
			else if (strcmp(a->account, b->account))
				bad = "account";
			else if ((a->flags ^ b->flags) & (BOT_DELTA_F_SLURM | BOT_DELTA_F_ACCOUNT))
				bad = "flags (identity from Slurm, account trusted)";
			if (x->it[k].identity < order)
				order = x->it[k].identity;
		}
		if (bad) {
			char why[ERRMAX];

			snprintf(why, sizeof(why), "the deltas of job step %s.%s.%u.%u disagree on "
				 "the %s", x->it[i].h.cluster, x->it[i].h.job, x->it[i].h.restart,
				 x->it[i].h.step, bad);
			for (size_t k = i; k < j; k++)
				quarantine_early(x, &x->it[k], BOT_Q_GROUP, why, 1);
		} else if (x->c->nfabrics &&
			   !in_list(x->it[i].h.fabric, x->c->fabrics, x->c->nfabrics)) {
			char why[ERRMAX];

			snprintf(why, sizeof(why), "fabric %s is not in the site's fabric list",
				 x->it[i].h.fabric);
			for (size_t k = i; k < j; k++)
				quarantine_early(x, &x->it[k], BOT_Q_FABRIC, why, 1);
		} else {
			x->g[x->ng++] = (struct group){ i, j - i, order };
		}
		i = end;
	}
	if (x->ng > 1)
		qsort(x->g, x->ng, sizeof(*x->g), cmp_group);
	return 0;
}

/* ---- one step's checks ---------------------------------------------------------- */

/* A context the step could not have produced: the reason, or NULL. */
static const char *impossible(const struct bot_delta *d, size_t *at, char *why, size_t cap)
{
	const struct bot_delta_hdr *h = &d->hdr;
	uint64_t span = (h->t_end - h->t_start) + 60;
	uint64_t max_ranks = h->job_gpus ? h->job_gpus : 64ull * h->step_nodes;

	for (size_t i = 0; i < h->nrecords; i++) {
		const struct bot_spool_rec *r = &d->recs[i];

		*at = i;
		if (r->nnodes > h->step_nodes)
			snprintf(why, cap, "nNodes %u over the step's %u nodes", r->nnodes,
				 h->step_nodes);
		else if (r->nranks > max_ranks)
			snprintf(why, cap, "nRanks %u over the %s %llu", r->nranks,
				 h->job_gpus ? "job's GPUs" : "64 x step nodes =",
				 (unsigned long long)max_ranks);
		else if (r->kind == BOT_SPOOL_SUMMARY && r->calls > span * 1000000ull)
			snprintf(why, cap, "%llu calls in a step of %llu s (+60)",
				 (unsigned long long)r->calls,
				 (unsigned long long)(h->t_end - h->t_start));
		else if (r->kind == BOT_SPOOL_SAMPLE && r->duration_ns > span * 1000000000ull)
			snprintf(why, cap, "a duration of %llu ns in a step of %llu s (+60)",
				 (unsigned long long)r->duration_ns,
				 (unsigned long long)(h->t_end - h->t_start));
		else
			continue;
		return why;
	}
	return NULL;
}

/* A contradicted (context, arm) of a step set aside: the direction (+1:
 * slower than the fabric, -1: faster), the step's uid and its index in
 * the run's list of steps set aside (struct cand). */
struct sig {
	uint64_t key;
	int arm, dir;
	uint32_t uid;
	size_t cand;
};

struct sigs {
	struct sig *v;
	size_t n, cap;
};

/*
 * Consensus (section 14): N contradicted of M comparable (context, arm).
 * With sg, each contradicted (context, arm) is appended there (when the
 * step contradicts; dropped otherwise). -1: out of memory.
 */
static int contradicts(const struct run *x, const struct bot_kb *step, const struct bot_kb *fab,
		       uint64_t *bad, uint64_t *comparable, struct sigs *sg, uint32_t uid,
		       size_t cand)
{
	size_t n0 = sg ? sg->n : 0;

	*bad = *comparable = 0;
	for (size_t i = 0; i < bot_kb_count(step); i++) {
		const struct bot_kb_ctx *s = bot_kb_at(step, i), *f = bot_kb_find(fab, s->key);

		if (!f)
			continue;
		for (int a = 0; a < BOT_NARMS; a++) {
			double qs, qf;

			if (s->arm[a].n < 8 || f->arm[a].n < 64)
				continue;
			qs = bot_stats_robust_q(&s->arm[a], NULL);
			qf = bot_stats_robust_q(&f->arm[a], NULL);
			if (isnan(qs) || isnan(qf))
				continue;
			(*comparable)++;
			if (fabs(qs - qf) <= BOT_Q_PER_OCTAVE)
				continue;
			(*bad)++;
			if (!sg)
				continue;
			if (sg->n == sg->cap) {
				size_t nc = sg->cap ? sg->cap * 2 : 64;
				struct sig *nv = realloc(sg->v, nc * sizeof(*nv));

				if (!nv)
					return -1;
				sg->v = nv;
				sg->cap = nc;
			}
			sg->v[sg->n++] = (struct sig){ s->key, a, qs > qf ? 1 : -1, uid, cand };
		}
	}
	if (*bad >= x->c->consensus_min && 2 * *bad >= *comparable && *bad > 0)
		return 1;
	if (sg)
		sg->n = n0;
	return 0;
}

static int cmp_sig(const void *pa, const void *pb)
{
	const struct sig *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	if (a->dir != b->dir)
		return a->dir < b->dir ? -1 : 1;
	return (a->uid > b->uid) - (a->uid < b->uid);
}

/* A step set aside because it contradicts the fabric: its deltas
 * (cidx[first .. first+n)), its window, and the verdict. */
struct cand {
	size_t first, n;
	uint64_t sw, bad, comparable;
	int accepted;
};

/* Accept every step set aside that shares a contradicted (context, arm)
 * and direction with steps of at least c->consensus_users distinct uids
 * (sorting the signatures: n log n, whatever the inbox holds). */
static void consensus_accept(const struct run *x, struct sigs *sg, struct cand *cd)
{
	if (sg->n > 1)
		qsort(sg->v, sg->n, sizeof(*sg->v), cmp_sig);
	for (size_t i = 0; i < sg->n;) {
		size_t j = i + 1;
		uint64_t users = 1;

		while (j < sg->n && sg->v[j].key == sg->v[i].key && sg->v[j].arm == sg->v[i].arm &&
		       sg->v[j].dir == sg->v[i].dir) {
			users += sg->v[j].uid != sg->v[j - 1].uid;
			j++;
		}
		if (users >= x->c->consensus_users)
			for (size_t k = i; k < j; k++)
				cd[sg->v[k].cand].accepted = 1;
		i = j;
	}
}

struct principal {
	int kind;
	uint64_t id;
	uint64_t cap;
};

/* Cap the step's samples and calls by what its principals have left in the
 * window, and charge them: *offered and *admitted count samples. */
static int apply_caps(struct run *x, struct bot_ledger *l, const struct bot_delta_hdr *h,
		      struct bot_kb *step, uint64_t *offered, uint64_t *admitted, int *capped)
{
	struct principal p[2];
	int np = 0;

	p[np++] = (struct principal){ BOT_LEDGER_UID, h->uid, x->c->user_cap };
	/* an account is trusted only with an identity from Slurm (formats 13 "Trust") */
	if ((h->flags & BOT_DELTA_F_SLURM) && (h->flags & BOT_DELTA_F_ACCOUNT) && h->account[0])
		p[np++] = (struct principal){ BOT_LEDGER_ACCOUNT,
					      bot_digest64(h->account, strlen(h->account)),
					      x->c->account_cap };
	*capped = 0;
	for (size_t i = 0; i < bot_kb_count(step); i++) {
		struct bot_kb_ctx *c = bot_kb_get(step, bot_kb_at(step, i)->key);
		uint64_t allow;

		for (int a = 0; a < BOT_NARMS; a++) {
			struct bot_stats *s = &c->arm[a];

			if (!s->n)
				continue;
			*offered += s->n;
			allow = UINT64_MAX;
			for (int k = 0; k < np; k++) {
				uint64_t used = bot_ledger_used(l, p[k].kind, p[k].id, c->key, a);
				uint64_t left = used >= p[k].cap ? 0 : p[k].cap - used;

				if (left < allow)
					allow = left;
			}
			if (s->n > allow) {
				bot_stats_scale_down(s, allow, s->n);	/* counts x allow / n, down */
				*capped = 1;
			}
			*admitted += s->n;
			for (int k = 0; k < np; k++)
				if (bot_ledger_use_add(l, p[k].kind, p[k].id, c->key, a, s->n) < 0)
					return -1;
		}
		/* calls count once per rank (formats.md 12), samples once per
		 * communicator's call: a cap of n samples allows n x 100 of a
		 * communicator's calls, nRanks times that as stored */
		allow = UINT64_MAX;
		for (int k = 0; k < np; k++) {
			uint64_t cap = bot_key_rank_calls(c->key, p[k].cap > UINT64_MAX / 100 ?
								  UINT64_MAX : p[k].cap * 100);
			uint64_t used = bot_ledger_used(l, p[k].kind, p[k].id, c->key,
							BOT_LEDGER_CALLS);
			uint64_t left = used >= cap ? 0 : cap - used;

			if (left < allow)
				allow = left;
		}
		if (c->calls > allow) {
			/* the summaries scale alike: a cap must never make a
			 * job's communicators look less busy (formats.md 14) */
			bot_kb_set_calls(c, allow);
			*capped = 1;
		}
		for (int k = 0; k < np; k++)
			if (bot_ledger_use_add(l, p[k].kind, p[k].id, c->key, BOT_LEDGER_CALLS,
					       c->calls) < 0)
				return -1;
	}
	return 0;
}

static int merge_step(struct bot_kb *fab, const struct bot_kb *step)
{
	for (size_t i = 0; i < bot_kb_count(step); i++) {
		const struct bot_kb_ctx *s = bot_kb_at(step, i);
		struct bot_kb_ctx *d;

		/* prior rows follow the newest merged step (section 14, "Decay") */
		if (bot_kb_add_counts(fab, s->key, s->calls, s->summaries) < 0 ||
		    (s->has_prior && bot_kb_set_prior(fab, s->key, s->prior) < 0) ||
		    !(d = bot_kb_get(fab, s->key)))
			return -1;
		for (int a = 0; a < BOT_NARMS; a++)
			/* a bin that would pass 2^32-1 halves the arm (section 12) */
			if (s->arm[a].n && bot_stats_merge(&d->arm[a], &s->arm[a]) < 0)
				return -1;
	}
	return 0;
}

/* 15/16 per window elapsed since the state's epoch, at most 64 times:
 * histograms, call and summaries counts (alike, so that their quotient,
 * a communicator's calls per job, stays). */
static void decay_windows(struct bot_kb *kb, uint64_t epoch, uint64_t now)
{
	uint64_t windows = now - epoch;

	if (windows > 64)
		windows = 64;
	for (uint64_t w = 0; w < windows; w++) {
		/* the window decayed into is the nonce (formats.md 14) */
		bot_kb_decay(kb, 15, 16, now - windows + 1 + w);
		for (size_t i = 0; i < bot_kb_count(kb); i++) {
			struct bot_kb_ctx *c = bot_kb_get(kb, bot_kb_at(kb, i)->key);

			/* the summaries follow the calls' own rounding down:
			 * decay never makes a job look less busy */
			if (c->calls)
				bot_kb_set_calls(c, c->calls / 16 * 15 + c->calls % 16 * 15 / 16);
			else
				c->summaries = c->summaries / 16 * 15;
		}
	}
}

/* ---- one fabric ---------------------------------------------------------------- */

/* time outcome reason name uid account node fabric */
static void prov(struct run *x, struct text *t, const struct item *it, const char *outcome,
		 const char *reason)
{
	text_add(t, "%lld %s %s %s %u %s %s %s\n", (long long)x->now, outcome,
		 reason ? reason : "-", it->name, it->h.uid, it->h.account[0] ? it->h.account : "-",
		 it->h.node, it->h.fabric);
}

static void quarantine_prov(struct run *x, struct text *t, struct bot_compact_fabric *fr,
			    struct item *it, int reason, const char *why)
{
	if (quarantine(x, it, reason, why) == 0) {
		fr->quarantined++;
		prov(x, t, it, "quarantined", bot_compact_reason_name(reason));
	}
}

/* Read the step's records, check them and reduce them into *kb. Returns 0,
 * or 1 when the step was quarantined (or lost a delta it needs). */
static int read_step(struct run *x, struct text *t, struct bot_compact_fabric *fr,
		     size_t *idx, size_t n, struct bot_kb **kb)
{
	struct bot_compile_batch *b = bot_compile_batch_new();
	char err[ERRMAX], why[256];
	const char *bad = NULL;

	*kb = NULL;
	if (!b)
		return -1;
	for (size_t k = 0; k < n && !bad; k++) {
		struct item *it = &x->it[idx[k]];
		char path[4500];
		struct bot_delta d;
		size_t at;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", item_dir(x, it), it->name);
		rc = bot_delta_read_at(item_fd(x, it), it->name, path, &d, err, sizeof(err));
		if (x->c->progress)
			x->c->progress(x->c->progress_arg, ++x->nread, x->nit);
		if (rc < 0) {
			quarantine_prov(x, t, fr, it, BOT_Q_UNREADABLE, err);
			bot_compile_batch_free(b);
			return 1;	/* the rest of the step waits for the next run */
		}
		if (impossible(&d, &at, why, sizeof(why))) {
			snprintf(err, sizeof(err), "a context the step could not have produced: "
				 "%s record %zu: %s", it->name, at, why);
			bad = err;
		} else if ((rc = bot_compile_add_records(b, d.recs, (size_t)d.hdr.nrecords)) < 0) {
			bot_delta_free(&d);
			bot_compile_batch_free(b);
			if (rc == -1)
				return -1;
			snprintf(err, sizeof(err), "over the bounds of one batch (%s)", rc == -2 ?
				 "clean samples" : "contexts");
			for (size_t j = 0; j < n; j++)
				quarantine_prov(x, t, fr, &x->it[idx[j]], BOT_Q_IMPOSSIBLE, err);
			return 1;
		}
		bot_delta_free(&d);
	}
	if (bad) {
		for (size_t j = 0; j < n; j++)
			quarantine_prov(x, t, fr, &x->it[idx[j]], BOT_Q_IMPOSSIBLE, bad);
		bot_compile_batch_free(b);
		return 1;
	}
	if (bot_compile_batch_finish(b, kb, NULL) < 0) {
		bot_compile_batch_free(b);
		return -1;
	}
	bot_compile_batch_free(b);
	return 0;
}

/* Cap one step's samples (learn/ledger.h uses), merge them into fab, add
 * its identities to the ledger and its deltas to rm[]; frees step. 0, or
 * -1 with the reason in err. */
static int merge_group(struct run *x, struct bot_compact_fabric *fr, struct text *t,
		       struct bot_ledger *led, struct bot_kb *fab, const struct bot_delta_hdr *h,
		       struct bot_kb *step, const size_t *idx, size_t n, uint64_t sw, uint64_t W,
		       size_t *rm, size_t *nrm, char *err, size_t errlen)
{
	uint64_t off = 0, adm = 0;
	int capped;

	if (apply_caps(x, led, h, step, &off, &adm, &capped) < 0) {
		bot_kb_free(step);
		if (led->nuse >= BOT_LEDGER_MAX_USES)
			snprintf(err, errlen, "the ledger's usage table is full (%u principal x "
				 "context x arm entries this window); the fabric merges again next "
				 "window", BOT_LEDGER_MAX_USES);
		else
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (merge_step(fab, step) < 0) {
		bot_kb_free(step);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	bot_kb_free(step);
	fr->offered += off;
	fr->admitted += adm;
	fr->capped_steps += (uint64_t)capped;
	fr->steps++;
	for (size_t k = 0; k < n; k++) {
		if (bot_ledger_add_id(led, x->it[idx[k]].identity, sw < W ? sw : W) < 0) {
			if (led->nids >= BOT_LEDGER_MAX_IDS)
				snprintf(err, errlen, "the ledger is full (%u identities within the "
					 "dedup horizon); lower dedup_windows", BOT_LEDGER_MAX_IDS);
			else
				snprintf(err, errlen, "out of memory");
			return -1;
		}
		rm[(*nrm)++] = idx[k];	/* logged "merged" once published */
	}
	fr->merged += n;
	return 0;
}

static int process_fabric(struct run *x, struct bot_compact_fabric *fr, const size_t *gi,
			  size_t ngi)
{
	const struct bot_compact_conf *c = x->c;
	char err[ERRMAX], lpath[4200], snap[BOT_STATE_NAME_MAX];
	struct bot_state cur = { 0 };
	struct bot_ledger led = { 0 };
	struct text t = { 0 };
	size_t *rm = NULL, nrm = 0, *idx = NULL, *cidx = NULL, ncidx = 0, ncd = 0;
	struct cand *cd = NULL;
	struct sigs sg = { NULL, 0, 0 };
	uint64_t ledger_digest = 0, epoch = 0, W, horizon, digest;
	uint64_t hold_w = c->hold_windows ? c->hold_windows : c->dedup_windows - 1;
	int ldir = -1, lockfd = -1, rc = -1, loaded, pub;

	ldir = bot_ledger_open_dir(c->state, fr->fabric, lpath, sizeof(lpath), err, sizeof(err));
	if (ldir < 0)
		goto fail;
	lockfd = bot_lock_fabric(c->state, fr->fabric, 1, err, sizeof(err));
	if (lockfd < 0)
		goto fail;
	if (bot_store_complete(c->state, fr->fabric, snap, err, sizeof(err)) > 0)
		bot_log_msg(x->log, BOT_LOG_WARN, "%s: completed an interrupted first publish: "
			    "`current` now names %s", fr->fabric, snap);
	loaded = bot_store_load(c->state, fr->fabric, &cur, snap, err, sizeof(err));
	if (loaded < 0)
		goto fail;
	if (loaded == 0) {	/* the snapshot carries them (section 12 v2) */
		ledger_digest = cur.ledger;
		epoch = cur.epoch;
		cur.parent = bot_state_snap_digest(snap);
	}
	if (ledger_digest) {
		if (bot_ledger_load(ldir, lpath, fr->fabric, ledger_digest, &led, err,
				    sizeof(err)) < 0)
			goto fail;
	} else if (bot_ledger_init(&led, fr->fabric) < 0) {
		snprintf(err, sizeof(err), "%s: bad fabric name", fr->fabric);
		goto fail;
	}
	/*
	 * The horizon is the compactor's own clock's, never the ledger's: one run
	 * with a clock far ahead must not make every later delta too old. A ledger
	 * more than one window ahead of the clock stops the fabric (said, nothing
	 * quarantined); one window ahead (a little skew) keeps its uses.
	 */
	if (led.window > x->wnow + 1) {
		snprintf(err, sizeof(err), "the ledger is from the future (clock?): its window %"
			 PRIu64 ", now %" PRIu64 " (x %" PRIu64 " s); fix the clock or roll back",
			 led.window, x->wnow, c->window);
		goto fail;
	}
	W = x->wnow > led.window ? x->wnow : led.window;
	bot_ledger_set_window(&led, W);
	horizon = x->wnow + 1 > c->dedup_windows ? x->wnow + 1 - c->dedup_windows : 0;
	/* forget what left the horizon before adding: a full ledger frees room */
	bot_ledger_prune(&led, horizon);
	if (epoch && W > epoch)
		decay_windows(cur.kb, epoch, W);
	rm = malloc((x->nit ? x->nit : 1) * sizeof(*rm));
	idx = malloc((x->nit ? x->nit : 1) * sizeof(*idx));
	cidx = malloc((x->nit ? x->nit : 1) * sizeof(*cidx));
	cd = malloc((ngi ? ngi : 1) * sizeof(*cd));
	if (!rm || !idx || !cidx || !cd) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	for (size_t g = 0; g < ngi; g++) {
		const struct group *gr = &x->g[gi[g]];
		const struct bot_delta_hdr *h = &x->it[gr->first].h;
		int64_t newest = INT64_MIN, oldest = INT64_MAX;
		uint64_t t_end = 0, sw, bad, comparable;
		struct bot_kb *step = NULL;
		size_t n = 0, j;
		int r;

		for (size_t k = gr->first; k < gr->first + gr->n; k++)
			if (x->it[k].h.t_end > t_end)
				t_end = x->it[k].h.t_end;
		sw = t_end / c->window;
		for (size_t k = gr->first; k < gr->first + gr->n; k++) {
			struct item *it = &x->it[k];

			if (it->done)
				continue;
			if (bot_ledger_has(&led, it->identity)) {
				if (remove_item(x, it) == 0) {
					it->done = 1;
					fr->duplicate++;
					prov(x, &t, it, "duplicate", NULL);
				}
				continue;
			}
			for (j = 0; j < n && x->it[idx[j]].identity != it->identity; j++)
				;
			if (j < n) {
				/* the same identity twice in one run counts once */
				if (remove_item(x, it) == 0) {
					it->done = 1;
					fr->duplicate++;
					prov(x, &t, it, "duplicate", NULL);
				}
				continue;
			}
			idx[n++] = k;
			if (it->mtime > newest)
				newest = it->mtime;
			if (it->mtime < oldest)
				oldest = it->mtime;
		}
		if (!n)
			continue;
		if (t_end > (uint64_t)(x->now > 0 ? x->now : 0) + c->window) {
			/* its identity would leave the ledger before the step left the horizon */
			char why[256];

			snprintf(why, sizeof(why), "a context the step could not have produced: it "
				 "ends in the future (%" PRIu64 ", now %lld + one window)", t_end,
				 (long long)x->now);
			for (size_t k = 0; k < n; k++)
				quarantine_prov(x, &t, fr, &x->it[idx[k]], BOT_Q_IMPOSSIBLE, why);
			continue;
		}
		if (sw < horizon) {
			for (size_t k = 0; k < n; k++)
				quarantine_prov(x, &t, fr, &x->it[idx[k]], BOT_Q_TOO_OLD,
						"too old to dedup: the step ended before the "
						"ledger's horizon");
			continue;
		}
		/* a step cut by the listing's bounds waits for all of it to be
		 * listed (it is merged whole, once): the next run lists it first */
		if (n < h->step_nodes && step_cut(x, h)) {
			fr->waiting += n;
			continue;
		}
		if (!(n >= h->step_nodes || x->now - newest >= (int64_t)c->settle ||
		      x->now - oldest >= (int64_t)c->max_wait)) {
			fr->waiting += n;
			continue;
		}
		r = read_step(x, &t, fr, idx, n, &step);
		if (r < 0) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
		if (r > 0)
			continue;
		r = contradicts(x, step, cur.kb, &bad, &comparable, &sg, h->uid, ncd);
		if (r != 0) {
			bot_kb_free(step);
			if (r < 0) {
				snprintf(err, sizeof(err), "out of memory");
				goto fail;
			}
			/* set aside: decided once every step of the run was seen */
			cd[ncd++] = (struct cand){ ncidx, n, sw, bad, comparable, 0 };
			memcpy(cidx + ncidx, idx, n * sizeof(*idx));
			ncidx += n;
			continue;
		}
		if (merge_group(x, fr, &t, &led, cur.kb, h, step, idx, n, sw, W, rm, &nrm, err,
				sizeof(err)) < 0)
			goto fail;
	}
	consensus_accept(x, &sg, cd);
	for (size_t k = 0; k < ncd; k++) {
		const struct cand *q = &cd[k];
		const size_t *ci = cidx + q->first;
		const struct bot_delta_hdr *h = &x->it[ci[0]].h;
		struct bot_kb *step = NULL;
		char why[256];
		int r;

		if (q->accepted) {
			r = read_step(x, &t, fr, cidx + q->first, q->n, &step);
			if (r < 0) {
				snprintf(err, sizeof(err), "out of memory");
				goto fail;
			}
			if (r > 0)
				continue;
			if (merge_group(x, fr, &t, &led, cur.kb, h, step, ci, q->n, q->sw, W, rm,
					&nrm, err, sizeof(err)) < 0)
				goto fail;
			fr->accepted += q->n;
		} else if (x->wnow > q->sw + hold_w) {
			snprintf(why, sizeof(why), "contradicted the fabric on %" PRIu64 " of %" PRIu64
				 " contexts and fewer than %" PRIu64 " users agreed within %" PRIu64
				 " windows", q->bad, q->comparable, c->consensus_users, hold_w);
			for (size_t j = 0; j < q->n; j++)
				quarantine_prov(x, &t, fr, &x->it[ci[j]], BOT_Q_CONSENSUS, why);
		} else {
			snprintf(why, sizeof(why), "contradicts the fabric on %" PRIu64 " of %" PRIu64
				 " contexts; held until %" PRIu64 " users agree, at most %" PRIu64
				 " windows after the step's", q->bad, q->comparable, c->consensus_users,
				 hold_w);
			for (size_t j = 0; j < q->n; j++) {
				struct item *it = &x->it[ci[j]];

				if (it->held) {
					fr->held++;
				} else if (hold(x, it, why) == 0) {
					fr->held++;
					fr->held_new++;
					prov(x, &t, it, "held", "consensus");
				} else {
					fr->waiting++;
				}
			}
		}
	}
	if (fr->duplicate) {
		fsync(x->infd);
		fsync(x->hfd);
	}
	if (!fr->steps) {
		rc = 0;
		goto out;	/* nothing to publish; lines for duplicates and quarantines */
	}
	if (bot_ledger_write(ldir, lpath, &led, &digest, err, sizeof(err)) < 0)
		goto fail;
	bot_crash_point("compact-after-ledger");
	cur.ledger = digest;
	cur.epoch = W;
	if (cur.rounds < UINT64_MAX)	/* stops there, never wraps to 0 */
		cur.rounds++;
	pub = bot_store_publish_keep(c->state, &cur, c->retention, fr->snapshot, err, sizeof(err));
	if (pub < 0)
		goto fail;
	if (pub > 0) {	/* published; old snapshots stay until the next run */
		bot_log_msg(x->log, BOT_LOG_WARN, "%s", err);
		err[0] = 0;
	}
	bot_crash_point("compact-after-current");
	bot_ledger_prune_files(ldir, c->retention < 2 ? 2 : c->retention, digest);
	/* only now "merged": a run whose publish fails logs none (they stay in
	 * the inbox and are logged by the run that publishes them) */
	for (size_t k = 0; k < nrm; k++)
		prov(x, &t, &x->it[rm[k]], "merged", NULL);
	if (t.n && bot_ledger_provenance(ldir, lpath, t.p, t.n, err, sizeof(err)) < 0)
		bot_log_msg(x->log, BOT_LOG_WARN, "%s", err);
	t.n = 0;
	for (size_t k = 0, first_held = 1; k < nrm; k++) {
		struct item *it = &x->it[rm[k]];

		if (it->held && first_held) {
			first_held = 0;
			bot_crash_point("compact-before-held-cleanup");
		}
		if (remove_item(x, it) < 0)
			bot_log_msg(x->log, BOT_LOG_WARN, "%s/%s: merged, but cannot remove it: %s "
				    "(the next run drops it as a duplicate)", item_dir(x, it),
				    it->name, strerror(errno));
		it->done = 1;
		it->held = 0;
		if (k == 0)
			bot_crash_point("compact-mid-cleanup");
	}
	fsync(x->infd);
	fsync(x->hfd);
	rc = 0;
	goto out;
fail:
	bot_log_esc_inplace(err, sizeof(err));
	bot_log_msg(x->log, BOT_LOG_ERROR, "%s: %s; nothing published for this fabric",
		    fr->fabric, err);
	fr->failed = 1;
	fr->snapshot[0] = 0;
	/* what was not published stays in the inbox, is not counted merged
	 * (the summary's and the metrics' backlog subtract it) */
	for (size_t k = 0; k < nrm; k++)
		x->it[rm[k]].done = 0;
	fr->merged = fr->steps = fr->accepted = 0;
	fr->offered = fr->admitted = fr->capped_steps = 0;
out:
	if (t.n && ldir >= 0 && bot_ledger_provenance(ldir, lpath, t.p, t.n, err, sizeof(err)) < 0)
		bot_log_msg(x->log, BOT_LOG_WARN, "%s", err);
	if (lockfd >= 0)
		bot_lock_release(lockfd);
	if (ldir >= 0)
		close(ldir);
	bot_state_free(&cur);
	bot_ledger_free(&led);
	free(t.p);
	free(rm);
	free(idx);
	free(cidx);
	free(cd);
	free(sg.v);
	return rc;
}

/* ---- the run ---------------------------------------------------------------------- */

static int open_dirs(struct run *x)
{
	int sfd = open(x->c->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *sep = bot_path_sep(x->c->state);

	/* for messages: "state/inbox" also for "state/" (opened through sfd) */
	snprintf(x->inpath, sizeof(x->inpath), "%s%sinbox", x->c->state, sep);
	snprintf(x->qpath, sizeof(x->qpath), "%s%squarantine", x->c->state, sep);
	snprintf(x->hpath, sizeof(x->hpath), "%s%sheld", x->c->state, sep);
	if (sfd < 0) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s: %s", x->c->state, strerror(errno));
		return -1;
	}
	mkdirat(sfd, "inbox", 0750);
	mkdirat(sfd, "quarantine", 0750);
	mkdirat(sfd, "held", 0750);
	x->infd = openat(sfd, "inbox", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	x->qfd = openat(sfd, "quarantine", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	x->hfd = openat(sfd, "held", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(sfd);
	if (x->infd < 0 || x->qfd < 0 || x->hfd < 0) {
		bot_log_msg(x->log, BOT_LOG_ERROR, "%s: %s", x->infd < 0 ? x->inpath :
			    x->qfd < 0 ? x->qpath : x->hpath,
			    errno == ENOTDIR || errno == ELOOP ?
			    "not a directory (or a symbolic link)" : strerror(errno));
		return -1;
	}
	return 0;
}

static int cmp_fab(const void *a, const void *b)
{
	return strcmp(((const struct bot_compact_fabric *)a)->fabric,
		      ((const struct bot_compact_fabric *)b)->fabric);
}

int bot_compact_run(const struct bot_compact_conf *c, struct bot_compact_result *r,
		    const struct bot_log *log)
{
	struct run x = { c, r, log, -1, -1, -1, "", "", "", 0, 0, NULL, 0, NULL, 0, { NULL, 0, 0 }, 0, { 0, 0 },
			 { { 0 }, { 0 } } };
	struct bot_lease lease;
	char err[ERRMAX];
	size_t *gi = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!c->window || c->retention < 2 || !c->state) {
		bot_log_msg(log, BOT_LOG_ERROR, "compact: window must be > 0 and retention >= 2");
		r->failed = r->stopped = 1;
		return -1;
	}
	if (c->dedup_windows < 2) {
		/* with 1, a step that ended in the previous window is already too old */
		bot_log_msg(log, BOT_LOG_ERROR, "compact: dedup_windows must be at least 2");
		r->failed = r->stopped = 1;
		return -1;
	}
	if (c->hold_windows >= c->dedup_windows || !c->consensus_users) {
		/* a held step must still dedup when it is accepted */
		bot_log_msg(log, BOT_LOG_ERROR, "compact: hold_windows must be below dedup_windows "
			    "and consensus_users at least 1");
		r->failed = r->stopped = 1;
		return -1;
	}
	if (bot_statedir_as_owner(c->state, "compact", err, sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		r->failed = r->stopped = 1;
		return -1;
	}
	rc = bot_lease_take(c->state, c->wait, &lease, err, sizeof(err));
	if (rc < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		r->failed = r->stopped = 1;
		return -1;
	}
	if (rc == 1) {
		r->busy = 1;
		memcpy(r->holder, lease.holder, sizeof(r->holder));
		return 0;
	}
	x.now = c->now >= 0 ? c->now : (int64_t)time(NULL);
	x.wnow = (uint64_t)(x.now > 0 ? x.now : 0) / c->window;
	rc = open_dirs(&x) < 0 || list_inbox(&x) < 0 || make_groups(&x) < 0;
	flush_early(&x);
	if (rc) {
		r->failed = r->stopped = 1;
		goto out;
	}
	gi = malloc((x.ng ? x.ng : 1) * sizeof(*gi));
	r->fab = calloc(x.ng ? x.ng : 1, sizeof(*r->fab));
	if (!gi || !r->fab) {
		r->failed = r->stopped = 1;
		goto out;
	}
	/* fabrics in name order; each fabric's groups in identity order */
	for (size_t g = 0; g < x.ng; g++) {
		const char *f = x.it[x.g[g].first].h.fabric;
		size_t k;

		for (k = 0; k < r->nfab && strcmp(r->fab[k].fabric, f); k++)
			;
		if (k == r->nfab) {
			if (c->nonly && !in_list(f, c->only, c->nonly))
				continue;
			snprintf(r->fab[r->nfab++].fabric, sizeof(r->fab[0].fabric), "%s", f);
		}
	}
	if (r->nfab > 1)
		qsort(r->fab, r->nfab, sizeof(*r->fab), cmp_fab);
	for (size_t k = 0; k < r->nfab; k++) {
		size_t n = 0;

		for (size_t g = 0; g < x.ng; g++)
			if (!strcmp(x.it[x.g[g].first].h.fabric, r->fab[k].fabric))
				gi[n++] = g;
		if (process_fabric(&x, &r->fab[k], gi, n) < 0)
			r->failed = 1;
		r->held += r->fab[k].held;
	}
	for (size_t i = 0; i < x.nit; i++) {
		if (x.it[i].done)
			continue;
		if (x.it[i].held) {	/* held for another fabric than --fabric asked */
			if (c->nonly && !in_list(x.it[i].h.fabric, c->only, c->nonly))
				r->held++;
			continue;
		}
		if (c->nonly && !in_list(x.it[i].h.fabric, c->only, c->nonly))
			r->skipped++;
		if (x.now - x.it[i].mtime > (int64_t)r->oldest_s)
			r->oldest_s = (uint64_t)(x.now - x.it[i].mtime);
	}
out:
	bot_lease_release(&lease);
	for (size_t i = 0; i < x.nit; i++)
		free(x.it[i].name);
	free(x.it);
	free(x.g);
	free(x.early.p);
	free(gi);
	if (x.infd >= 0)
		close(x.infd);
	if (x.qfd >= 0)
		close(x.qfd);
	if (x.hfd >= 0)
		close(x.hfd);
	return r->failed ? -1 : 0;
}

void bot_compact_result_free(struct bot_compact_result *r)
{
	free(r->fab);
	r->fab = NULL;
	r->nfab = 0;
}
