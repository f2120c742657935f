/*
 * compile.h - from what ranks measured to the next step table (learn/).
 *
 * The learning loop without shared state: spool files of earlier jobs (what
 * `nccl-bot spool` reads) become a knowledge base - each context's prior is
 * the cost-table row NCCL handed the tuner, each clean sample a latency,
 * with arrival skew removed by taking the minimum over the ranks of one
 * collective (same commId, collective and sequence number) - and the policy
 * plans every context into a step table (doc/formats.md section 8).
 *
 * Used by the environment for a step (learn/stepenv.h: both halves from
 * spool files, the planning half on a fabric's state) and by the merge of a
 * job into a fabric's state (learn/merge.h: the reading half). Skipped files
 * are reported through the caller's log (learn/log.h), never printed.
 */
#ifndef BOT_LEARN_COMPILE_H
#define BOT_LEARN_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/spool.h"
#include "common/state.h"
#include "common/table.h"
#include "learn/log.h"
#include "policies/kb.h"
#include "policies/policy.h"

struct bot_compile_opts {
	struct bot_policy policy;	/* id, parameters and allow-list */
	uint64_t seed;
	uint32_t ncomms;		/* communicators expected to share a context */
	uint64_t calls;			/* calls per communicator in a job: the
					 * least a context is planned for (its
					 * state's own count, when larger, wins:
					 * bot_compile_round_calls) */
	int64_t round;			/* job index; < 0 = the number of jobs seen */
	unsigned min_bytes_log2;	/* contexts below 2^k bytes are left to AUTO */
};

struct bot_compile_report {
	size_t files, files_rejected;
	uint64_t samples, samples_unclean, collectives;	/* collectives: after the min over ranks */
	size_t contexts, entries, dropped;		/* dropped: over the size budget */
	/* of entries and dropped: "leave it to AUTO" entries (formats.md 8, a
	 * v2 table; a dropped one gets the policy on the prior) */
	size_t entries_auto, dropped_auto;
	size_t files_merged_before;		/* skipped: already in the state (bot_compile_read) */
	size_t files_duplicate;			/* skipped: the same bytes as another file read */
	uint64_t jobs;				/* distinct table digests among the files */
	uint64_t round;				/* the round planned */
};

/* The calls per communicator and job a table is planned for by default,
 * and the least a rank summary must report to count as a whole one in the
 * state's summaries (formats.md 12): one of c < 500 calls counts c / 500,
 * so that summaries carrying few or no calls, which cost a principal
 * nothing against the compactor's calls cap, cannot pull a context's calls
 * per job below the default the compile would use anyway. */
#define BOT_COMPILE_CALLS 500u

void bot_compile_opts_default(struct bot_compile_opts *o);

/* The calls per communicator a context's plan is made for: what its ranks'
 * summaries say a communicator made in a job (bot_kb_calls_per_comm), when
 * the state records that and it is more than floor_calls, else
 * floor_calls. A probe runs one communicator's whole job, and the budget
 * and the worst-case lump rule weigh that lump against the calls so far;
 * planned for fewer calls than the jobs make, a probe costs that many times
 * what it was allowed (doc/policies.md, "How many calls a round holds"). */
uint64_t bot_compile_round_calls(const struct bot_kb_ctx *c, uint64_t floor_calls);

/* Bounds of one batch (one job's files, or one reader's arguments): past
 * them the whole batch is refused with the reason, never cut. */
#ifndef BOT_COMPILE_MAX_FILES
#define BOT_COMPILE_MAX_FILES 65536u		/* spool files listed */
#endif
#ifndef BOT_COMPILE_MAX_SAMPLES
#define BOT_COMPILE_MAX_SAMPLES (1ull << 26)	/* clean samples kept for the reduce */
#endif
#ifndef BOT_COMPILE_MAX_CONTEXTS
#define BOT_COMPILE_MAX_CONTEXTS (1u << 20)	/* contexts (the state's own limit) */
#endif

/* A list of spool files, malloc()ed, and how to open each. */
struct bot_compile_paths {
	char **v;		/* each file's path as messages name it: DIR/NAME, or as given */
	size_t n, cap;
	struct bot_compile_at {
		int dirfd;	/* the listed directory's fd, or AT_FDCWD (a path as given) */
		size_t name;	/* where the name to open from dirfd starts in v[i] */
	} *at;
	size_t atcap;
	int *dirs;		/* directory fds, closed by bot_compile_paths_free */
	size_t ndirs, dircap;
};
/*
 * The spool files that paths name, in the order given, a directory standing
 * for every *.spool entry in it (not hidden ones), sorted by name: what every
 * reader of spool files reads (`env --spool`, `state add`, `spool show`,
 * `spool sweep`). A directory is opened once and its entries are later
 * opened through that fd. Entries are not opened here: one that is not a
 * regular file (a FIFO, a directory named x.spool, a link) is refused when
 * read, with its reason. 0, or -1 with err (a path that does not exist, a
 * directory that cannot be listed or whose listing fails part-way, over
 * BOT_COMPILE_MAX_FILES files, out of memory) and *out empty.
 */
int bot_compile_list(const char *const *paths, size_t npaths, struct bot_compile_paths *out,
		     char *err, size_t errlen);
void bot_compile_paths_free(struct bot_compile_paths *p);
/*
 * Read file i of p whole and validate it: common/spool.h's bot_spool_read_at
 * from the directory it was listed in (no link, no FIFO or device, a size
 * cap), with control characters in the reason escaped. 0 with *f filled
 * (bot_spool_free), or -1 with "PATH: reason" in err.
 */
int bot_compile_read_file(const struct bot_compile_paths *p, size_t i, struct bot_spool_file *f,
			  char *err, size_t errlen);

/*
 * The reading half: spool files (as bot_compile_list expands them) -> a
 * knowledge base in key order (priors
 * by bot_kb_offer_prior, calls from summaries, clean samples reduced to the
 * minimum over ranks) in *kb, and the files' ids in *src (malloc()ed,
 * *nsrc of them; section 12: bot_digest64 of the bytes). With dedup (may
 * be NULL), files already merged into that state are skipped and counted in
 * rep->files_merged_before. A file that fails validation is skipped whole
 * and named on log (a warning with its reason): it only costs learning.
 * Within the batch, a second file with the same bytes is skipped and named
 * on log. Returns 0, or -1 with err when nothing can be read (a path that
 * cannot be listed, out of memory) or the batch is over a bound above
 * (BOT_COMPILE_MAX_*: refused whole, the bound named).
 */
int bot_compile_read(const char *const *paths, size_t npaths, const struct bot_state *dedup,
		     struct bot_kb **kb, uint64_t **src, size_t *nsrc,
		     struct bot_compile_report *rep, const struct bot_log *log, char *err,
		     size_t errlen);
/*
 * The reading half for records already read and validated (the compactor's
 * deltas: each node's records, reduced on its node): records of any number
 * of sources added to one batch are gathered and reduced exactly as
 * bot_compile_read does with files (priors offered, calls from summaries,
 * clean samples reduced to the minimum over ranks across all sources).
 * add returns 0, -1 out of memory, -2 past BOT_COMPILE_MAX_SAMPLES clean
 * samples or -3 past BOT_COMPILE_MAX_CONTEXTS (the batch is then to be
 * refused whole); finish reduces and hands out a knowledge base in key
 * order (bot_kb_free) and the counts (rep may be NULL): 0, or -1 out of
 * memory. A batch is finished once.
 */
struct bot_compile_batch;
struct bot_compile_batch *bot_compile_batch_new(void);
int bot_compile_add_records(struct bot_compile_batch *b, const struct bot_spool_rec *recs,
			    size_t n);
int bot_compile_batch_finish(struct bot_compile_batch *b, struct bot_kb **kb,
			     struct bot_compile_report *rep);
void bot_compile_batch_free(struct bot_compile_batch *b);

/*
 * The planning half: every context of kb with a prior at or above the size
 * threshold, planned by o->policy for the given job round, into t (which
 * the caller allocated; it is initialised here). The result depends on
 * kb's content, not on the order contexts were added. Fills rep's
 * contexts, entries, dropped and round. Returns 0, or -1 with err.
 */
int bot_compile_plan(const struct bot_kb *kb, const struct bot_compile_opts *o, uint64_t round,
		     struct bot_table *t, struct bot_compile_report *rep, char *err, size_t errlen);
/* Both halves; the round is o->round, or the distinct table digests seen. */
int bot_compile_spools(const char *const *paths, size_t npaths, const struct bot_compile_opts *o,
		       struct bot_table *t, struct bot_compile_report *rep,
		       const struct bot_log *log, char *err, size_t errlen);

#endif
