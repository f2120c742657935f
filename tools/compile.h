/*
 * compile.h - from what ranks measured to the next step table.
 *
 * The learning loop without shared state: spool files of earlier jobs (what
 * `nccl-bot spool` reads) become a knowledge base - each context's prior is
 * the cost-table row NCCL handed the tuner, each clean sample a latency,
 * with arrival skew removed by taking the minimum over the ranks of one
 * collective (same commId, collective and sequence number) - and the policy
 * plans every context into a step table (doc/formats.md section 8).
 *
 * Used by `nccl-bot env --spool`; later the compactor's per-fabric state
 * takes the place of the spool files, and the planning half stays.
 */
#ifndef BOT_COMPILE_H
#define BOT_COMPILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/table.h"
#include "policies/kb.h"
#include "policies/policy.h"

struct bot_compile_opts {
	struct bot_policy policy;	/* id, parameters and allow-list */
	uint64_t seed;
	uint32_t ncomms;		/* communicators expected to share a context */
	uint64_t calls;			/* calls per communicator in a job */
	int64_t round;			/* job index; < 0 = the number of jobs seen */
	unsigned min_bytes_log2;	/* contexts below 2^k bytes are left to AUTO */
};

struct bot_compile_report {
	size_t files, files_rejected;
	uint64_t samples, samples_unclean, collectives;	/* collectives: after the min over ranks */
	size_t contexts, entries, dropped;		/* dropped: over the size budget */
	uint64_t jobs;				/* distinct table digests among the files */
	uint64_t round;				/* the round planned */
};

void bot_compile_opts_default(struct bot_compile_opts *o);

/*
 * Read the spool files (a directory means every *.spool file in it, sorted
 * by name), build the knowledge base and plan every context into t (which
 * the caller allocated; it is initialised here). A file that fails
 * validation is skipped whole and named on `warn` (may be NULL) with its
 * reason: it only costs learning. Returns 0, or -1 with err set when
 * nothing can be compiled (a path cannot be read, out of memory).
 */
int bot_compile_spools(const char *const *paths, size_t npaths, const struct bot_compile_opts *o,
		       struct bot_table *t, struct bot_compile_report *rep, FILE *warn, char *err,
		       size_t errlen);

#endif
