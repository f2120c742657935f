/*
 * decide.h - the rank-side decision: per-communicator decision contexts
 * and the hot path of getCollInfo.
 *
 * At comm init the decision inputs (the step table NCCL_BOT_TABLE, or
 * without one the NCCL_BOT_* environment) are reduced to a dense array
 * cell[collective][size bucket] holding this communicator's one decision per
 * context, and its nChannels. getCollInfo is then one array load and a few
 * compares: no locks, allocation, syscalls or logging (unless
 * NCCL_BOT_DEBUG). AUTO cells and the common fixed arm (forced into NCCL's
 * float[7][3] table) are decided inline (bot_decide()), dynamic cells by
 * bot_decide_dyn(), the other fixed arms by bot_decide_full().
 *
 * A cell is either
 *	AUTO		leave NCCL's choice;
 *	a fixed arm	from the table's plan for this comm's probe bucket;
 *	dynamic		decided per call from NCCL's own cost table, which is
 *			identical on every rank (decide.c): the argmin of the
 *			prior with scale corrections (PRIOR), the runner-up arm
 *			by the prior (PROBE, learning policies on the prior), or
 *			the next arm of a per-cell call counter (SWEEP, the one
 *			decision that counts calls: an exception to rank
 *			consistency, see decide.c).
 *
 * Everything a decision depends on is identical on every rank of the comm
 * (rank consistency): the table bytes (or the environment the launcher
 * gives every rank), the commId, the context key and NCCL's cost table.
 * Trouble that could strike one rank only (no memory for the context, a
 * table version this build does not know) fails init.
 *
 * Owns nothing of measurement: the entry points keep the linked
 * measurement's hot counter in the context (meas), next to the cells they
 * load anyway, and bracket window calls themselves (plugin.c).
 */
#ifndef BOT_TUNER_DECIDE_H
#define BOT_TUNER_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "policies/context.h"
#include "tuner/nccl_abi.h"
#include "tuner/util.h"

/* cell.arm: the arm index (0..20) in the low 5 bits, or BOT_DECIDE_AUTO, or
 * a dynamic mode (BOT_DECIDE_DYN set). */
#define BOT_DECIDE_AUTO 0xff
#define BOT_DECIDE_ARM_MASK 0x1f
/* Set when the arm is not statically allowed (not Ring/Tree/PAT and not in
 * the table's allow-list): force it only when it is AUTO's own algorithm
 * for this very call. */
#define BOT_DECIDE_NEEDS_AUTO 0x40
/* Set on every fixed arm of a context that is shadow or logs decisions
 * (NCCL_BOT_DEBUG): it keeps them off the inline path, so that a cell.arm
 * below BOT_DECIDE_SLOW is an arm the inline path may force unconditionally
 * (given a usable entry and NCCL's 7x3 table). */
#define BOT_DECIDE_SLOW 0x20
/* Dynamic cells, decided per call by bot_decide_dyn(). */
#define BOT_DECIDE_DYN 0x80
#define BOT_DECIDE_PRIOR (BOT_DECIDE_DYN | 0)	/* argmin of the corrected prior */
#define BOT_DECIDE_PROBE (BOT_DECIDE_DYN | 1)	/* runner-up by the prior */
#define BOT_DECIDE_SWEEP (BOT_DECIDE_DYN | 2)	/* cycle the allowed supported arms */
/* cell.aux of a PRIOR/PROBE cell without scale corrections. */
#define BOT_DECIDE_NOCORR 0xffff
/* cell.aux of an AUTO cell the table planned (its plan's arm for this comm is
 * AUTO): left to NCCL, never given the policy on the prior (decide.c). */
#define BOT_DECIDE_PLANNED 0xfffe

/* Probes on the prior (no table, or a table of format 1 or 2): communicators
 * whose probe bucket (0..255) is below this probe the runner-up arm (1 in 16
 * communicators per context). A format 3 table has none (decide.c). */
#define BOT_DECIDE_PROBE_WIDTH 16

/* Arms padded to 6 vectors of 4 (or 3 of 8) lanes for the dynamic decision
 * (decide.c); lanes 21..23 are never supported. */
#define BOT_DECIDE_NLANE 24

struct bot_decide_cell {
	uint8_t arm;
	uint8_t nchannels;	/* 0 = keep NCCL's choice */
	uint16_t aux;		/* PRIOR/PROBE: correction row or BOT_DECIDE_NOCORR;
				 * SWEEP: the call counter (wraps; the same on every
				 * rank that sees the same calls) */
};

struct bot_win_hot;

struct bot_decide_ctx {
	struct bot_decide_cell cell[BOT_NCOLL][BOT_NBUCKETS];
	uint8_t shadow;		/* decide, never write (policy shadow) */
	uint8_t debug;		/* NCCL_BOT_DEBUG: log decisions */
	uint8_t from_pool;
	uint8_t abi;		/* tuner ABI version that opened it */
	uint8_t policy;		/* formats.md section 10 */
	uint8_t from_table;	/* decision inputs came from NCCL_BOT_TABLE */
	uint8_t table_rejected;	/* NCCL_BOT_TABLE was set and rejected: NCCL decides */
	uint8_t min_bytes_log2;
	uint8_t avx2;		/* the dynamic decision's scan runs 8 lanes wide (decide.c) */
	uint32_t ncells;	/* cells that hold a fixed arm */
	uint32_t ndyn;		/* dynamic cells */
	uint32_t allow_static;	/* arms allowed whatever AUTO picks:
				 * bot_arm_allowed(a, -1, allow-list) */
	uint32_t measurable;	/* arms a rank can measure on this comm's nodes
				 * (bot_arm_measurable): what a sweep cycles through */
	uint64_t seed;
	uint64_t comm_id;
	uint32_t nranks, nnodes;
	/* not the decision's: the linked measurement windows' hot counter,
	 * NULL when the comm does not measure (set and dropped by plugin.c) */
	struct bot_win_hot *meas;
	uint32_t cap_bits;	/* AUTO's search cap for this comm's NCCL, as bits */
	float cap;		/* the same, for the dynamic decision's vector scan */
	int nccl_version;	/* what decided it: ncclGetVersion(), 0 unknown */
	uint64_t digest;	/* step-table digest, 0 without a table */
	uint32_t ncorr_rows;
	float (*corr)[BOT_DECIDE_NLANE];	/* scale-correction factors per row and arm
					 * (1.0 where the table has none, and in the
					 * padding lanes); malloc'd */
	/* allow_static as one int32 per lane: -1 allowed, 0 not (padding: 0) */
	int32_t stat_lane[BOT_DECIDE_NLANE];
	bot_nccl_logger_t log;
};

/* Open a context for a communicator. has_comm_id is 0 for tuner v3/v4
 * (no commId: probes are not used, every comm uses the exploit arm).
 * prof_rank (the linked profiler's rank, -1 if none) is only logged.
 * Returns BOT_NCCL_SUCCESS with *out set, or BOT_NCCL_INTERNAL_ERROR after a
 * WARN naming the reason (no memory, unknown table version). */
int bot_decide_open(struct bot_decide_ctx **out, int abi, int has_comm_id, uint64_t comm_id,
		    size_t nranks, size_t nnodes, int prof_rank, bot_nccl_logger_t log);
void bot_decide_close(struct bot_decide_ctx *c);

/* AUTO's search cap (doc/nccl-abi.md, AUTO's choice): NCCL picks the
 * smallest entry x with 0 <= x < cap, ties to the lowest index, where cap is
 * 3.6e9 us up to NCCL 2.28 and FLT_MAX from 2.29 (inf and NaN never). An
 * entry outside that range is one NCCL never picks, so the decision never
 * forces it either, and never counts it as AUTO's. The context's cap is
 * fixed at init (bot_decide_open()), kept as its bit pattern. */
#define BOT_DECIDE_CAP_228 3.6e9f	/* exact in binary32 */

static inline uint32_t bot_decide_bits(float x)
{
	union {
		float f;
		uint32_t u;
	} v = { x };

	return v.u;
}

/* 0 <= x < cap, on the bit patterns: one integer compare in the common
 * case, and exactly the float test. Non-negative floats order as their
 * patterns; every negative value, NaN (either sign) and +inf has a pattern
 * at or above a finite cap's; and -0.0 (0x80000000), which NCCL's >= 0
 * accepts, is the one pattern let through by name. */
static inline int bot_decide_usable(float x, uint32_t cap_bits)
{
	uint32_t u = bot_decide_bits(x);

	return u < cap_bits || u == 0x80000000u;
}

/* The only write into NCCL's cost table, +0.0 (never negative: 2.31 would
 * pick a negative entry, doc/nccl-abi.md, AUTO's choice), into an entry
 * that was usable (>= 0), so that the table never loses its last usable
 * entry and -1 is never revived. Every write goes through here. */
static inline void bot_decide_force(float *entry)
{
	*entry = 0.0f;
}

/* A dynamic cell's decision (decide.c); same guarantees as below. */
void bot_decide_dyn(struct bot_decide_ctx *c, struct bot_decide_cell *cell, int coll,
		    size_t nbytes, float *t, int numAlgo, int numProto);

/* The decision for any cell and any arguments, out of line (decide.c). */
void bot_decide_full(struct bot_decide_ctx *c, int coll, size_t nbytes, float *t,
		     int numAlgo, int numProto, int *nChannels);

/*
 * The decision. The cost table is NCCL's contiguous float[numAlgo][numProto]
 * (typed float**). Writes 0.0 into the chosen arm's entry when that entry is
 * usable (never revives a negative entry, never empties the table), and sets
 * *nChannels only when forcing with a non-zero channel count. Not const:
 * a SWEEP cell counts its calls (NCCL never calls it concurrently for one
 * comm).
 *
 * Inline: AUTO cells, and fixed arms below BOT_DECIDE_SLOW with NCCL's
 * numAlgo >= 7 (as unsigned, as the general path compares it) and numProto
 * 3, where the arm is its own table index. Dynamic cells go to
 * bot_decide_dyn(); the other fixed arms (arms that need AUTO's
 * algorithm, shadow, debug, cost tables of another shape or NULL) to
 * bot_decide_full(), which would decide the inline cases the same.
 */
static inline __attribute__((always_inline)) void
bot_decide(struct bot_decide_ctx *c, int coll, size_t nbytes, float **table, int numAlgo,
	   int numProto, int *nChannels)
{
	struct bot_decide_cell *cell;
	float *t = (float *)table;
	unsigned arm;

	if ((unsigned)coll >= BOT_NCOLL)
		return;
	cell = &c->cell[coll][bot_util_bucket(nbytes)];
	arm = cell->arm;
	if (__builtin_expect(arm < BOT_DECIDE_SLOW, 1) && t && numProto == BOT_NPROTO &&
	    (unsigned)numAlgo >= BOT_NALGO) {
		/* read before the store, which may alias it (uint8_t) */
		unsigned nch = cell->nchannels;

		if (bot_decide_usable(t[arm], c->cap_bits)) {
			bot_decide_force(&t[arm]);
			if (nch && nChannels)
				*nChannels = (int)nch;
		}
		return;
	}
	if (arm == BOT_DECIDE_AUTO)
		return;
	if (arm & BOT_DECIDE_DYN) {
		if (t)
			bot_decide_dyn(c, cell, coll, nbytes, t, numAlgo, numProto);
		return;
	}
	bot_decide_full(c, coll, nbytes, t, numAlgo, numProto, nChannels);
}

#endif
