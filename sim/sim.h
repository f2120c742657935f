/*
 * sim.h - the fabric simulator behind `nccl-bot sim` and the replay's
 * built-in default.
 *
 * Owns the named fabrics, an independent implementation of NCCL 2.28's AUTO
 * cost model (what NCCL would put in the tuner's cost table) and a separate,
 * physically motivated "measured" latency model with log-normal noise and
 * rare outliers, calibrated against data/external and frozen.
 * Deterministic for a seed: a sample is a pure function of (seed, fabric,
 * context, arm, sample index).
 */
#ifndef BOT_SIM_H
#define BOT_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/sweep.h"
#include "policies/context.h"

struct bot_fabric;

unsigned bot_sim_nfabrics(void);
const struct bot_fabric *bot_sim_fabric(unsigned i);
const struct bot_fabric *bot_sim_fabric_find(const char *name);
const char *bot_sim_fabric_name(const struct bot_fabric *f);
/* One-line human description ("8x H100 SXM per node, 8x 400G IB NDR rails, ..."). */
const char *bot_sim_fabric_desc(const struct bot_fabric *f);
unsigned bot_sim_gpus_per_node(const struct bot_fabric *f);
/* The nodes NCCL counts for a context the simulator keys by nnodes nodes:
 * nodes of one NVLink domain (MNNVL, gb200's trays) are one NCCL node
 * (NCCL groups ranks into nodes by their NVLink reach); else nnodes. */
unsigned bot_sim_nccl_nodes(const struct bot_fabric *f, unsigned nnodes);
/* "builtin" (the four scoring fabrics), "alt" (the second family, built
 * from specifications: doc/simulator.md) or "calibration". */
const char *bot_sim_fabric_family(const struct bot_fabric *f);
/* Resolve a comma list of fabric names and family names (builtin, alt,
 * calibration) into at most max distinct fabrics, in list order. 0, or -1
 * with the offending name (or "more than N fabrics") in bad. */
int bot_sim_select(const char *list, const struct bot_fabric **out, unsigned max, unsigned *n,
		   char *bad, size_t badlen);
unsigned bot_sim_max_nodes(const struct bot_fabric *f);
/* The node counts the fabric is simulated at, lo..hi: its own range, from
 * the first count with two ranks (what `sim --list` prints and what
 * bot_sim_generate keeps of a node list). */
void bot_sim_node_range(const struct bot_fabric *f, unsigned *lo, unsigned *hi);
/* 1 when bot_sim_generate simulates the fabric at nnodes nodes. */
int bot_sim_has_nodes(const struct bot_fabric *f, unsigned nnodes);

/* AUTO's cost table (us, -1 = unsupported) for a context, as NCCL 2.28 would
 * fill it with numPipeOps = 1. */
void bot_sim_auto_table(const struct bot_fabric *f, int coll, uint64_t nbytes,
			unsigned nnodes, float out[BOT_NARMS]);
/* Expected measured latency (us) of an arm without noise or outliers; < 0
 * when the arm is unsupported (its AUTO entry is -1). */
double bot_sim_true_us(const struct bot_fabric *f, int coll, uint64_t nbytes,
		       unsigned nnodes, int arm);
/* One noisy measured call (us), sample index i. */
double bot_sim_sample_us(const struct bot_fabric *f, int coll, uint64_t nbytes,
			 unsigned nnodes, int arm, uint64_t seed, uint64_t i);

struct bot_sim_opts {
	uint64_t seed;
	unsigned samples;		/* rows per (context, arm); default 16 */
	const unsigned *nodes;		/* node counts; NULL = default list */
	unsigned nnodes;
	uint64_t min_bytes, max_bytes;	/* default 1 KiB .. 4 GiB, powers of two */
	unsigned coll_mask;		/* bit per enum bot_coll; 0 = all five */
	const struct bot_fabric *only;	/* NULL = every fabric */
	int outliers_set;		/* 1: outlier_p replaces every fabric's own */
	double outlier_p;		/* chance per call of a 2-10x outlier (fabrics'
					 * own: 0.3-0.5 %); a stress for heavy tails */
};

/* The default node list (1..64) used when opts->nodes is NULL. */
extern const unsigned bot_sim_default_nodes[];
extern const unsigned bot_sim_default_nnodes;

/* Append a forced-arm sweep to sw: every supported arm of every context,
 * `samples` rows each, auto_us filled. 0, or -1 on allocation failure. */
int bot_sim_generate(const struct bot_sim_opts *opts, struct bot_sweep *sw);

#endif
