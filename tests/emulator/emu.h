/*
 * emu.h - the NCCL emulator's internal interfaces.
 *
 * The emulator (tests/emulator/) plays NCCL towards a tuner+profiler plugin:
 * forked processes are ranks, each drives several communicators through
 * the plugin exactly as NCCL 2.21 .. 2.30 would (see nccl_abi.h, which
 * names the NCCL sources), records NCCL's resulting decisions per
 * communicator as a running hash, and the parent compares ranks.
 *
 *	emu_main.c	command line, suites, scenarios, verdicts, report
 *	emu_rank.c	one rank process: loading, communicators, threads,
 *			profiler events and the proxy thread
 *	emu_cost.c	NCCL-like cost tables (the simulator's, or internal)
 *	emu_table.c	NCCL_BOT_TABLE values (common/table.h encoder) and
 *			the corrupting / version-bumping mutators
 *	emu_alloc.c	allocation-failure interposer (malloc & co.)
 *	fixture.c	fixture plugins, good and deliberately bad
 */
#ifndef EMU_H
#define EMU_H

#include <stddef.h>
#include <stdint.h>

#include "tests/emulator/nccl_abi.h"

/* ---- emulated NCCL versions ---- */

struct emu_version {
	const char *name;	/* "2.28" */
	int code;		/* what ncclGetVersion() answers: 22809 for 2.28.9 */
	int tuner[6];		/* tuner ABI versions in probe order, 0-terminated */
	int prof[7];		/* profiler ABI versions in probe order, 0-terminated */
	int num_algo;		/* NCCL_NUM_ALGORITHMS handed to getCollInfo */
	float cap;		/* AUTO's search cap: entries >= cap are never picked */
};

/* AUTO's search cap (doc/nccl-abi.md, "Tuner calls"): NCCL's argmin starts
 * at 3.6e9 us up to 2.28 and at FLT_MAX from 2.29. */
#define EMU_CAP_228 3.6e9f

extern const struct emu_version emu_versions[];
extern const unsigned emu_nversions;
const struct emu_version *emu_version_find(const char *name);

/* NCCL's pick over a cost table of n entries: the smallest entry >= 0 and
 * below cap, ties to the lowest index; -1 when there is none (NaN, -1, cap
 * and above never qualify). */
static inline int emu_nccl_argmin(const float *t, int n, float cap)
{
	float best = cap;
	int arm = -1;

	for (int i = 0; i < n; i++) {
		if (t[i] >= 0.0f && t[i] < best) {
			best = t[i];
			arm = i;
		}
	}
	return arm;
}

/* An entry NCCL's argmin may pick under cap. */
static inline int emu_nccl_usable(float x, float cap)
{
	return x >= 0.0f && x < cap;
}

/* ---- asymmetries (bits) ---- */

#define EMU_A_REGBUFF	0x001	/* regBuff random per rank per call */
#define EMU_A_SIMULATE	0x002	/* extra ncclGroupSimulateEnd-style calls on one rank */
#define EMU_A_NOPROF	0x004	/* profiler symbol probe skipped on one rank */
#define EMU_A_THREADS	0x008	/* per-rank random thread layout and interleaving */
#define EMU_A_ALLOCFAIL	0x010	/* allocations refused in every comm init on one rank */
#define EMU_A_ENV	0x020	/* decision-irrelevant NCCL_BOT_* differences on one rank */
#define EMU_A_CORRUPT	0x040	/* one rank's NCCL_BOT_TABLE has a flipped payload byte */
#define EMU_A_BADVER	0x080	/* one rank's NCCL_BOT_TABLE is format version 4 */
#define EMU_A_ENVPOLICY	0x100	/* one rank's NCCL_BOT_POLICY differs (launcher error) */
/* Not an asymmetry (every rank gets the same tables): some cost tables hold
 * entries in [3.6e9, FLT_MAX], which only 2.29+ may pick (emu_cost_huge()). */
#define EMU_A_HUGE	0x200

/* The rank that gets each one-rank asymmetry (modulo the number of ranks). */
#define EMU_VICTIM_SIMULATE	3
#define EMU_VICTIM_NOPROF	5
#define EMU_VICTIM_ALLOCFAIL	2
#define EMU_VICTIM_ENV		6
#define EMU_VICTIM_CORRUPT	1
#define EMU_VICTIM_BADVER	7

enum emu_thread_mode {
	EMU_T_RR = 0,		/* one thread, round-robin over the comms */
	EMU_T_TPC,		/* one thread per comm */
	EMU_T_RAND,		/* per rank: one of the above, random interleaving */
};

enum emu_cost_mode { EMU_COST_SIM = 0, EMU_COST_INTERNAL };

/* Where KernelCh durations come from: NCCL's cost for the arm (default) or
 * the simulator's measured latency of the arm that ran (--measured sim). */
enum emu_meas_mode { EMU_MEAS_COST = 0, EMU_MEAS_SIM };
#define EMU_NWORK_MAX 8		/* entries of --workload */

/* A scenario run as the parent hands it to every rank process (fork copy). */
struct emu_cfg {
	const char *plugin;		/* absolute path, NULL = no plugin */
	const struct emu_version *ver;
	unsigned nprocs, ranks_per_proc, ranks_per_node;
	uint64_t calls;			/* collectives per communicator */
	uint64_t seed;
	unsigned asym;			/* EMU_A_* */
	int thread_mode;		/* enum emu_thread_mode */
	unsigned lag;			/* proxy-thread lag, in collectives */
	const char *policy;		/* NCCL_BOT_POLICY when there is no table */
	const char *table;		/* NCCL_BOT_TABLE for every rank, or NULL */
	const char *table_corrupt;	/* the corrupted rank's value */
	const char *table_badver;	/* the version-4 rank's value */
	int timeout_s;
	int verbose;
	/* learning loop (emu_loop.c); zero = the default behaviour */
	int measured;			/* enum emu_meas_mode: KernelCh durations */
	unsigned nwork;			/* > 0: call i is work[i % nwork] (--workload) */
	struct emu_work {
		int coll;
		unsigned si;		/* index into the emu_size() list */
	} work[EMU_NWORK_MAX];
};

/* ---- results (one per rank and communicator, sent through a pipe) ---- */

#define EMU_NCOMM_KINDS 4	/* world, world2, parity split, half split */
#define EMU_NCKPT 24

enum emu_status {
	EMU_ST_OK = 0,
	EMU_ST_INIT_FAILED,	/* tuner init returned non-zero: comm creation failed */
	EMU_ST_CRASH,		/* the rank process died or timed out */
};

struct emu_result {
	uint32_t magic;
	int32_t grank, kind, color, crank, nranks, nnodes;
	uint64_t comm_id;
	int32_t status, init_rc, prof_init_rc;
	int32_t prof_fini_rc;		/* profiler finalize (fixtures report bad handles) */
	int32_t tuner_ver, prof_ver, same_handle;
	uint64_t count;			/* launched collectives */
	uint64_t hash;			/* (algo, proto, nChannels, chunk) sequence */
	uint64_t hash_ac;		/* (algo, proto, nChannels) only */
	uint64_t ckpt[EMU_NCKPT];	/* hash after 2^k launched collectives */
	uint64_t arm_hist[EMU_NUM_ARMS];
	uint64_t overrides;		/* NCCL's choice differed from AUTO's */
	uint64_t nch_set;		/* calls with nChannels != 0 */
	uint64_t sim_calls;		/* extra simulate calls (not launched) */
	uint64_t err_rc, err_revived, err_empty, err_nch, err_nan, err_oob;
	uint64_t err_firstuse;		/* launched: an algorithm with first-use setup (CollNet,
					 * NVLS) forced outside AUTO's family and the allow-list */
	uint64_t nccl_none;		/* collectives NCCL failed on its own: nothing in
					 * its table was below the cap (not the plugin's doing) */
	uint64_t auto_huge;		/* launched: AUTO's own pick was >= 3.6e9 (2.29+) */
	uint64_t huge_forced;		/* launched: the plugin forced an entry that came
					 * in at >= 3.6e9 (2.29+ only, else revived) */
	uint32_t ver_calls;		/* ncclGetVersion() calls during this comm's inits */
	uint64_t coll_events, kch_events, late_kch_events;
	uint32_t log_warn, log_lines, log_digest, alloc_refused;
	char tuner_name[32];
	char msg[160];			/* last WARN at init, or why init failed */
	uint64_t work_arm[EMU_NWORK_MAX][EMU_NUM_ARMS];	/* --workload: launched arms per entry */
};

#define EMU_RESULT_MAGIC 0x454d5531u	/* "EMU1" */

/* Run one rank process: everything of process `proc`; results to wfd. */
int emu_rank_main(const struct emu_cfg *cfg, unsigned proc, int wfd);

/* ---- cost tables ---- */

/* The fixed list of nBytes values calls are drawn from. */
#define EMU_NSIZES 84
uint64_t emu_size(unsigned i);
int emu_cost_setup(int mode, const char *fabric, char *err, size_t errlen);
const char *emu_cost_desc(void);
/* NCCL's cost table (us, -1 unsupported) for numPipeOps = 1. */
void emu_cost_table(int coll, uint64_t nbytes, unsigned nnodes, float out[EMU_NUM_ARMS]);
/* EMU_A_HUGE: turn some of t's entries into values in [3.6e9, FLT_MAX] and
 * +inf, or leave t alone; a pure function of (coll, si, nnodes) and t, so
 * the same on every rank. */
void emu_cost_huge(int coll, unsigned si, unsigned nnodes, float t[EMU_NUM_ARMS]);

/* The simulator's truth for the fabric of the cost tables (sim/sim.h):
 * one measured call (sample i of seed), and the noiseless expectation.
 * < 0 when the arm is unsupported or the simulator is not in use. */
double emu_measured_us(int coll, uint64_t nbytes, unsigned nnodes, int arm, uint64_t seed,
		       uint64_t i);
double emu_true_us(int coll, uint64_t nbytes, unsigned nnodes, int arm);
int emu_cost_is_sim(void);

/* ---- learning loop (emu_loop.c) ---- */

/* Parse "allgather:1536K,allreduce:64M" into cfg->work; 0 or -1 (err). */
int emu_work_parse(struct emu_cfg *cfg, const char *spec, char *err, size_t errlen);
/* One CTX line per (communicator shape of the layout, workload entry) and a
 * LOSS line: arms launched (from r[n], NULL = none: table only), AUTO's arm,
 * the simulator's best arm, the step table's exploit arm, true latencies. */
void emu_loop_report(const struct emu_cfg *cfg, const struct emu_result *r, unsigned n);

/* ---- step tables ---- */

/* The allow-list of the tables emu_table_build() writes (NVLS/Simple). */
#define EMU_TABLE_ALLOW (1u << (EMU_ALGO_NVLS * 3 + EMU_PROTO_SIMPLE))

/* Communicator shapes (nranks, nnodes) of a run layout. */
struct emu_shape { uint32_t nranks, nnodes; };
unsigned emu_layout_shapes(unsigned nranks_total, unsigned ranks_per_node,
			   struct emu_shape *out, unsigned max);

int emu_table_available(void);
/* A step table for a policy id with random-but-seeded plans over the
 * shapes. Returns a malloc'ed string or NULL (err filled). */
char *emu_table_build(int policy, uint64_t seed, const struct emu_shape *shapes,
		      unsigned nshapes, char *err, size_t errlen);
/* Flip one payload byte, keeping the digest (-> digest mismatch). */
char *emu_table_corrupt(const char *text);
/* Re-encode as format version 4 (one no build reads) with a valid digest. */
char *emu_table_badver(const char *text);
/* Own implementation of the formats.md digest; for self-checks. */
uint64_t emu_digest(const uint8_t *p, size_t n);
int emu_table_selfcheck(const char *text, char *err, size_t errlen);

/* ---- allocation-failure interposer ---- */

void emu_alloc_fail_begin(void);
/* Ends the window; returns how many allocations were refused in it. */
unsigned emu_alloc_fail_end(void);
int emu_alloc_interposed(void);

/* ---- helpers ---- */

static inline uint64_t emu_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64 stream */
static inline uint64_t emu_rand(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return emu_mix64(*s);
}

#endif
