/*
 * dataset.h - sweep rows grouped into replayable contexts.
 *
 * Owns the step from a bot_sweep (one row per measured call) to what the
 * replay scores: contexts keyed by (fabric, bot_ctx_key), and per context
 * and arm the measured samples, the trimmed mean (doc/formats.md section 7:
 * samples outside [median/4, 4*median] dropped), AUTO's cost-table entry,
 * AUTO's choice and cost, the best arm, and the prior the policies plan
 * from. Rows whose algorithm or protocol (not both) is `auto` are partly
 * forced: counted, never used. Every inconsistency that makes a context
 * unscorable is an error naming FILE:LINE of one of its rows.
 */
#ifndef BOT_DATASET_H
#define BOT_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "common/sweep.h"
#include "policies/context.h"

#define BOT_DS_ERR_MAX 512

/* The times (us) a row may carry: 1 ns to about 2.8 hours per call
 * (measured_us; auto_us from 0). Outside, the row is an error. */
#define BOT_DS_US_MIN 1e-3
#define BOT_DS_US_MAX 1e10

/* Where the policies' prior comes from (doc/replay.md). */
enum bot_prior_src {
	BOT_PRIOR_DATA = 0,	/* auto_us of the rows; the simulator's cost model when unknown */
	BOT_PRIOR_SIM = 1,	/* always the simulator's cost model (fabric must be known to it) */
	BOT_PRIOR_NONE = 2	/* no prior: policies leave every call to AUTO */
};

struct bot_ds_arm {
	double *samples;	/* measured_us, in row order */
	uint32_t n, cap;
	uint32_t nrows;		/* rows of this arm (unsupported ones included) */
	double auto_us;		/* NAN unknown, -1 unsupported, >= 0 cost-table entry */
	uint64_t auto_nbytes;	/* the nbytes auto_us was given for (the smallest seen) */
	double mean;		/* trimmed mean (us); NAN without samples */
	uint32_t outliers;	/* samples dropped by the trim */
	int usable;		/* >= 1 sample and auto_us != -1 */
};

struct bot_ds_ctx {
	uint16_t fabric;	/* index into bot_dataset.fabrics */
	uint64_t key;		/* bot_ctx_key */
	uint64_t nbytes;	/* first row's nbytes (the simulator's prior needs bytes) */
	uint32_t row;		/* index of the first row (for FILE:LINE) */
	struct bot_ds_arm arm[BOT_NARMS];
	double *auto_samples;	/* auto,auto rows: stock NCCL measured */
	uint32_t nauto, auto_cap;
	double auto_rows_mean;	/* trimmed mean of auto_samples; NAN when none */

	/* Derived by bot_dataset_build() once a context's rows are in. */
	int best_arm;		/* argmin of mean over usable arms */
	double best_us;
	int auto_arm;		/* AUTO's arm, -1 when AUTO is known only from auto,auto rows */
	double auto_mean;	/* latency of a call left to AUTO (us) */
	double auto_loss;	/* auto_mean / best_us - 1 */
	int has_prior;
	float prior[BOT_NARMS];	/* what policies see; -1 for arms not usable */
	int prior_from_sim;
	int unreachable;	/* after bot_dataset_rebase(): the best arm of all is not allowed */
	uint32_t nccl_nodes;	/* the nodes NCCL counts (bot_sim_nccl_nodes for a simulator's
				 * fabric, else the key's): what bot_arm_measurable needs */
	double best_all_us;	/* best over every usable arm (= best_us unless rebased) */
};

struct bot_dataset {
	struct bot_ds_ctx *ctx;	/* sorted by (fabric, key) */
	size_t nctx, cap;
	char (*fabrics)[BOT_SWEEP_FABRIC_MAX + 1];
	size_t nfabrics;
	/* Counters reported as warnings. */
	uint64_t rows, partial_rows, outliers;
	size_t skipped_no_forced;	/* contexts with auto,auto or partly forced rows only */
	size_t skipped_auto_unknown;	/* AUTO's choice unknown (no cost table, no auto,auto rows) */
	size_t prior_sim, prior_none;	/* contexts whose prior came from the simulator / is absent */
};

/* Names of the files the rows came from: rows [end[i-1], end[i]) came from
 * name[i]. Used only for FILE:LINE messages; may be NULL (then "<memory>"). */
struct bot_ds_files {
	const char *const *name;
	const size_t *end;
	size_t n;
};

struct bot_ds_opts {
	enum bot_prior_src prior;
	const char *prior_fabric;	/* simulator fabric for data fabrics it does not know; NULL = none */
	const char *sim_fabrics;	/* without files: the simulator fabrics to generate, names
					 * or families (bot_sim_select); NULL = builtin */
	int sim_outliers_set;		/* without files: 1 = every generated fabric's */
	double sim_outliers;		/* outlier chance per call (bot_sim_opts.outlier_p) */
};

void bot_dataset_init(struct bot_dataset *ds);
void bot_dataset_free(struct bot_dataset *ds);

/* Group the rows of sw into contexts, trim, pick AUTO's and the best arm,
 * build priors. Returns 0, or -1 with "FILE:LINE: reason" in err. */
int bot_dataset_build(struct bot_dataset *ds, const struct bot_sweep *sw,
		      const struct bot_ds_files *files, const struct bot_ds_opts *opts,
		      char *err, size_t errlen);

/* Measure losses against the best arm the allow-list can reach
 * (bot_arm_allowed() with AUTO's arm and `allow`) instead of the best of
 * all: best_arm, best_us and auto_loss are recomputed; contexts whose best
 * arm of all is out of reach are marked unreachable (best_all_us keeps
 * it). Contexts whose AUTO arm is unknown keep every arm. Returns the
 * number of unreachable contexts. */
size_t bot_dataset_rebase(struct bot_dataset *ds, uint32_t allow);

/* Trimmed mean of n samples: mean of those within [median/4, 4*median]
 * (median = lower median). *dropped (may be NULL) gets the number dropped.
 * NAN when n == 0. */
double bot_trimmed_mean(const double *x, size_t n, uint32_t *dropped);

/* Loss of an arm in a context (mean/best - 1); for arms that are not usable
 * (BOT_ARM_AUTO included) the loss of a call left to AUTO. */
double bot_ds_arm_loss(const struct bot_ds_ctx *c, int arm);
/* The arm that really runs when a plan says `arm`: itself when usable, else
 * AUTO's arm (-1 when AUTO is known only from auto,auto rows). */
int bot_ds_effective_arm(const struct bot_ds_ctx *c, int arm);
/* Latency (us) of a call planned on `arm`: the arm's mean when usable,
 * else what a call left to AUTO costs (auto_mean). */
double bot_ds_arm_us(const struct bot_ds_ctx *c, int arm);

#endif
