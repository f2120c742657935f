/*
 * replay.h - score policies against AUTO on a dataset (`nccl-bot replay`).
 *
 * Owns the replay protocols (per-call, jobs, epochs), the train/test split
 * by node count, hyperparameter tuning on the training split, the history a
 * policy carries from the training scales into the test scales, the loss
 * summaries and the paired tests against AUTO. doc/replay.md states every
 * choice; this header is the map.
 *
 * Everything is deterministic for a seed: randomness is bot_rng() keyed by
 * what it decides, and threads only run independent tasks whose results go
 * to fixed slots, so the thread count never changes a number.
 */
#ifndef BOT_REPLAY_H
#define BOT_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>

#include "policies/kb.h"
#include "policies/policy.h"
#include "replay/dataset.h"

enum bot_replay_mode {
	BOT_MODE_PERCALL = 0,	/* T calls per context, immediate feedback: an upper bound */
	BOT_MODE_JOBS = 1,	/* J jobs x C comms, one arm per (comm, job), feedback after the job */
	BOT_MODE_EPOCHS = 2,	/* online: one arm per (comm, epoch), feedback `delay` epochs late */
	BOT_NMODES = 3
};

const char *bot_replay_mode_name(int mode);
int bot_replay_mode_parse(const char *s);	/* mode or -1 */

struct bot_replay_opts {
	int mode;
	uint64_t seed;
	uint64_t calls;		/* per context (per-call), per comm and job (jobs), per comm (epochs) */
	uint32_t jobs;		/* jobs mode */
	uint32_t comms;		/* communicators sharing a context (jobs, epochs) */
	uint32_t plan_comms;	/* communicators the planner assumes (what a step table
				 * is compiled for, `nccl-bot env --comms`); 0 = comms */
	double sample_rate;	/* fraction of calls whose latency reaches the planner (jobs, epochs) */
	uint32_t epoch;		/* calls per epoch (epochs) */
	uint32_t delay;		/* epochs between a measurement and the first plan using it (>= 1) */
	double skew_sd;		/* arrival-skew noise: samples times 1+|N(0, skew_sd)| (jobs, epochs) */
	int frozen;		/* no sample reaches the knowledge base (the frozen policy's scored run) */
	int reference;		/* the unoptimised path (no plan memo, plain sign-flip loop):
				 * the same numbers, slower; kept to prove it (tests, bench) */
	/* Called after every round with the contexts it planned (may be NULL;
	 * called from worker threads). */
	void (*progress)(void *arg, uint64_t contexts);
	void *progress_arg;
};

void bot_replay_opts_default(struct bot_replay_opts *o, int mode);
/* Rounds a run of these options has (0 for an invalid mode). */
uint64_t bot_replay_rounds(const struct bot_replay_opts *o);

/* Node-count sets: "4-8", "4,8", "2,16-32". */
#define BOT_NODESET_MAX 32
struct bot_nodeset {
	uint32_t lo[BOT_NODESET_MAX], hi[BOT_NODESET_MAX];
	unsigned n;
};
/* 0, or -1 with a reason in err. */
int bot_nodeset_parse(const char *s, struct bot_nodeset *out, char *err, size_t errlen);
int bot_nodeset_has(const struct bot_nodeset *s, uint32_t nnodes);
void bot_nodeset_format(const struct bot_nodeset *s, char *buf, size_t len);

/* Per-context outcome of one run. */
struct bot_ctx_result {
	double run_loss;	/* call-weighted mean loss over every call, exploration included */
	double final_loss;	/* loss of the final plan's exploit arm */
	int final_arm;		/* the final plan's exploit arm (BOT_ARM_AUTO possible) */
	double saved, lost;	/* seconds against AUTO over every call (doc/formats.md:
				 * sum of max(0, t(AUTO) - t(x)) and of max(0, t(x) - t(AUTO))) */
};

/*
 * Run one policy over contexts ctxs[0..n) of ds, all advancing in lockstep
 * round by round. kbs[f] is fabric f's knowledge base (ds->nfabrics of
 * them): it may hold history; priors are set for the contexts, and every
 * sample fed back is added, so it is the history of a later run. Returns 0,
 * or -1 with a message in err (a policy that fails to plan, out of memory).
 */
int bot_replay_run(const struct bot_dataset *ds, const size_t *ctxs, size_t n,
		   const struct bot_policy *pol, const struct bot_replay_opts *o,
		   struct bot_kb **kbs, struct bot_ctx_result *out, char *err, size_t errlen);

/* Loss summary over contexts. Percentiles are nearest-rank. */
struct bot_summary {
	size_t contexts, over_10pct;
	double mean, p50, p90, p99, max;
	double final_mean;	/* mean loss of the final plans */
	/* Harm against AUTO (0 for AUTO itself; doc/replay.md "Harm"). */
	size_t harmed;		/* contexts whose run loss exceeds AUTO's by > BOT_HARM_MARGIN */
	double worst_excess;	/* largest run loss - AUTO's run loss; NAN without contexts */
	double saved, lost;	/* seconds, summed over the contexts */
};
void bot_summarize(const double *run_loss, const double *final_loss, size_t n,
		   struct bot_summary *s);

/* A context is harmed when the policy's run loss exceeds AUTO's by more
 * than this (2 points). */
#define BOT_HARM_MARGIN 0.02
/* What tuning minimises over a grid point's training run (lower wins):
 * mean + p99/4 + harmed, harmed the share of the training contexts whose run
 * loss exceeds AUTO's by more than BOT_HARM_MARGIN (doc/replay.md). */
double bot_replay_tune_objective(double mean, double p99, double harmed);
/* The policy's defaults stand unless a grid point's training objective is
 * below theirs by more than this share (doc/replay.md "Tuning"). */
#define BOT_REPLAY_TUNE_MARGIN 0.10
/* The grid point tuning keeps, of n with objectives obj[] (lower wins, ties:
 * the earlier point): the lowest, unless dflt (the point that holds the
 * policy's defaults; -1: none does) is within BOT_REPLAY_TUNE_MARGIN of it. */
unsigned bot_replay_tune_pick(const double *obj, unsigned n, int dflt);
/* Fill s's harm fields from per-context results and AUTO's run losses
 * (the other fields are left alone). */
void bot_summarize_harm(const struct bot_ctx_result *res, const double *auto_loss, size_t n,
			struct bot_summary *s);

/* Paired sign-flip permutation test of mean(d[0..n)) against 0, two-sided,
 * with BOT_SIGNFLIP_DRAWS deterministic draws keyed by seed. Zero and NaN
 * differences are dropped. *direction (may be NULL): +1 when the mean is
 * positive, -1 negative, 0 none. Returns p in (0, 1]. */
#define BOT_SIGNFLIP_DRAWS 10000
double bot_signflip(const double *d, size_t n, uint64_t seed, int *direction);
/* The same test as a plain loop, one draw at a time: the reference the
 * faster bot_signflip() must match exactly (tests, --reference). */
double bot_signflip_reference(const double *d, size_t n, uint64_t seed, int *direction);
/* Holm-Bonferroni adjusted p-values (adj may alias p). */
void bot_holm(const double *p, size_t n, double *adj);

/* ---- evaluation: split, tune, history, score, test ---- */

struct bot_eval_opts {
	struct bot_replay_opts run;
	struct bot_nodeset train, test;
	int tune;			/* tune on the training split (else defaults) */
	size_t tune_contexts;		/* at most this many training contexts in tuning (0 = all) */
	int history;			/* run the chosen policy on the training split first */
	unsigned threads;
	uint32_t allow;			/* arms probed beyond bot_arm_allowed()'s defaults */
	/* budget_set: every policy with a safe-exploration budget (finite
	 * par.budget; not the -free variants) gets `budget` instead of its
	 * default, in tuning (every grid point), history and scoring alike. */
	int budget_set;
	double budget;
	const int *policies;		/* policy ids */
	size_t npolicies;
	double alpha;			/* significance level after Holm (0.05) */
	/* Leave one fabric out (lofo != 0): only fabric `holdout`'s test
	 * contexts are scored, with parameters tuned on the OTHER fabrics'
	 * training contexts and history (if any) from its own training ones. */
	int lofo;
	size_t holdout;
	unsigned worst;			/* table format: list this many worst contexts per policy */
	int worst_excess;		/* ... ranked by run loss - AUTO's (the harmed ones first) */
	/* Called with the fraction of the evaluation done, from any thread,
	 * one call at a time (may be NULL). */
	void (*progress)(void *arg, double frac);
	void *progress_arg;
};

/* A scenario: the test contexts of one (fabric, collective, nnodes). */
struct bot_scenario {
	uint16_t fabric;
	uint8_t coll;
	uint32_t nnodes;
	size_t first, n;		/* test contexts [first, first+n) (they are sorted) */
};

struct bot_policy_result {
	struct bot_policy pol;		/* with the chosen parameters */
	unsigned grid_points;		/* 0 = not tuned */
	unsigned grid_chosen;
	double tune_mean, tune_p99, tune_harmed;	/* of the chosen point on the training split */
	struct bot_ctx_result *res;	/* per test context */
	struct bot_summary all;
	struct bot_summary *fabric;	/* per fabric (ds->nfabrics) */
	double *p_adj;			/* per scenario, Holm-adjusted */
	int *direction;			/* per scenario: -1 better than AUTO, +1 worse, 0 tie */
	size_t better, worse;		/* significant scenarios */
};

struct bot_eval {
	const struct bot_dataset *ds;
	struct bot_eval_opts opts;
	size_t *test, ntest;		/* context indices, sorted */
	size_t *train, ntrain;		/* history (the held-out fabric's only, with holdout) */
	size_t *tuneset, ntuneset;	/* tuning (the other fabrics' only, with holdout) */
	struct bot_summary auto_all;
	struct bot_summary *auto_fabric;
	size_t *fabric_contexts;	/* test contexts per fabric */
	size_t *fabric_first;		/* fabric f's test contexts: positions in test of */
	size_t *fabric_pos;		/* fabric_pos[fabric_first[f] .. fabric_first[f + 1]) */
	struct bot_scenario *scen;
	size_t nscen;
	struct bot_policy_result *pol;
	size_t npol;
	double seconds;			/* wall time of the evaluation */
	pthread_mutex_t progress_lock;	/* progress_done, and calls of opts.progress */
	uint64_t progress_done, progress_total;	/* context-rounds */
};

/* 0, or -1 with a message (no test context, a policy failing...). */
int bot_eval_run(const struct bot_dataset *ds, const struct bot_eval_opts *o,
		 struct bot_eval *ev, char *err, size_t errlen);
void bot_eval_free(struct bot_eval *ev);

/* ---- input (replay/replay_load.c) ---- */

/* Read sweep files into a dataset; with no file, generate the simulator's
 * built-in fabrics (seed sim_seed, `samples` rows per arm) at the node
 * counts of the two splits. A file without data rows is an error
 * ("FILE:1: no data rows"). Returns 0, or -1 with "FILE:LINE: reason". */
int bot_replay_load(struct bot_dataset *ds, const char *const *files, size_t nfiles,
		    const struct bot_ds_opts *opts, const struct bot_nodeset *train,
		    const struct bot_nodeset *test, uint64_t sim_seed, unsigned samples,
		    char *err, size_t errlen);

/* ---- output (replay/replay_out.c) ---- */
enum bot_format { BOT_FMT_TABLE = 0, BOT_FMT_JSON = 1, BOT_FMT_CSV = 2 };

/* Print the evaluations of several modes on one dataset. */
void bot_eval_print(FILE *f, enum bot_format fmt, const struct bot_eval *const *ev, size_t n);

#endif
