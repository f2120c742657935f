/*
 * merge.h - one job's spool files into a fabric's learned state, as one
 * transaction (doc/formats.md section 12, "Merging").
 *
 * Under the fabric's writer lock (learn/lock.h): load the current snapshot
 * (or start empty), read the job's spool files (learn/compile.h: bad files
 * named and skipped, files merged before skipped), reduce them (the minimum
 * over ranks of each collective), merge into a copy of the state and
 * publish a new snapshot whose parent is the one loaded (learn/store.h;
 * then snapshots past the default retention are removed). An arm whose
 * counters would overflow is halved (policies/stats.h), never refused. A job is merged whole and once:
 * one with a file that fails validation, or with files merged before next
 * to new ones, is refused unless the request says partial; so is one whose
 * every new file failed validation (a compactor must never acknowledge
 * corrupt input as merged). A path that holds no spool file (an empty or
 * misnamed directory), alone or beside paths that do, or one that cannot
 * be listed, is an error naming it (nothing merged), found before the state directory is touched (no fabric directory
 * is made for a mistyped fabric). Nothing is published
 * when no file is new or anything fails: `current` keeps naming the
 * previous snapshot.
 *
 * Used by `nccl-bot state add`; later by the compactor, with its own lock.
 */
#ifndef BOT_LEARN_MERGE_H
#define BOT_LEARN_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/state.h"
#include "learn/lock.h"
#include "learn/log.h"

struct bot_merge_req {
	const char *dir;		/* the state directory (it must exist) */
	const char *fabric;		/* [a-z0-9][a-z0-9._-]{0,63} */
	const char *const *paths;	/* the job's spool files and directories of them */
	size_t npaths;
	int partial;			/* merge the valid new files of a job that is not whole */
	struct bot_lock *lock;		/* NULL: the fabric's flock, waiting for it */
};

enum bot_merge_outcome {
	BOT_MERGE_PUBLISHED = 0,	/* a new snapshot holds the job */
	BOT_MERGE_NOTHING_NEW = 1,	/* every file was merged before (or, partial, every
					 * new one was rejected): nothing published */
	BOT_MERGE_REFUSED = 2,		/* the job is not whole (a file rejected, or some
					 * merged before) and partial was not asked for */
	BOT_MERGE_FAILED = 3,		/* an error (on the log): nothing published; also
					 * paths without any spool file */
};

struct bot_merge_result {
	enum bot_merge_outcome outcome;
	size_t files;			/* spool files read */
	size_t merged;			/* merged now */
	size_t valid_new;		/* valid files not merged before (a second copy
					 * of one in the batch not counted): what the
					 * job, or a partial merge, would merge */
	size_t merged_before;		/* skipped: already sources of the state */
	size_t rejected;		/* failed validation: skipped, named on the log */
	uint64_t collectives;		/* merged now, after the minimum over ranks */
	size_t contexts;		/* in the fabric's state after the merge */
	uint64_t round;			/* the state's merge rounds after the merge */
	char snapshot[BOT_STATE_NAME_MAX];	/* published now, or the current one ("" when
						 * the fabric has none) */
};

/*
 * Merge one job. Warnings (skipped files) and the reason of a refusal or
 * failure go to log. Returns 0 (published, or nothing new) or -1 (refused,
 * or failed); *res says which and what was counted either way.
 */
int bot_merge_job(const struct bot_merge_req *req, struct bot_merge_result *res,
		  const struct bot_log *log);

#endif
