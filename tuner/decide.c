/*
 * decide.c - per-communicator decision contexts: from the step table (or,
 * with none, the NCCL_BOT_* environment) to the dense decision array
 * (decide.h), the per-call decision of dynamic cells, plus the context pool.
 *
 * Contexts come from a static pool of BOT_DECIDE_POOL slots claimed with an
 * atomic exchange (no allocation, no lock); past that, malloc. A context we
 * cannot get fails comm init with a named reason, because running AUTO on
 * one rank while the others follow the table would hang the job. The same
 * holds for the scale-correction rows (malloc'd at init, only when the
 * table has corrections this comm uses).
 *
 * The step table is decoded at every comm init, under a spin lock, into one
 * static struct: init is rare and cheap next to NCCL's own, and this keeps
 * the rule simple (the table in the environment at init is the one used).
 * Decoding outcomes (trouble the same on every rank falls back the same way
 * everywhere, logged; trouble that could strike one rank fails init):
 *	no table            the policy from NCCL_BOT_POLICY on the prior (NCCL's
 *	                    cost table), seed NCCL_BOT_SEED, threshold
 *	                    NCCL_BOT_MIN_BYTES, allow-list NCCL_BOT_ALLOW, in the
 *	                    one grammar of common/settings.h (tuner/env.h); a
 *	                    refused value is logged (WARN) and replaced by its
 *	                    default, the same on every rank given the same
 *	                    environment
 *	digest or syntax    the prior (AUTO), logged: same bytes, same outcome
 *	unknown version     init fails (another build may be loaded elsewhere)
 * NCCL_ALGO / NCCL_PROTO set: touch nothing, logged once per process.
 *
 * Cells the table does not decide (no entry, or shape absent) and every cell
 * without a table get "the policy on the prior", at or above the size
 * threshold; in a table of format 3 or later that policy never probes
 * (greedy's rule below: every probe a rank runs is then one the planner
 * budgeted, formats.md 8). A cell whose entry's plan gives this comm AUTO (the exploit
 * "AUTO's arm", written BOT_ARM_AUTO, outside the probe ranges) is decided:
 * it is left to NCCL (marked BOT_DECIDE_PLANNED), except under sweep. The
 * planner budgeted that context's probes (doc/policies.md); a probe of the
 * rank's own there would spend exploration no budget counted.
 *	auto                      leave NCCL's choice, always
 *	sweep                     SWEEP: a per-cell call counter cycles over the
 *	                          allowed supported arms of each call's cost
 *	                          table (dataset recording; counters are the
 *	                          exception to rank consistency: an asymmetric
 *	                          extra tuner call, e.g. ncclGroupSimulateEnd
 *	                          on one rank, shifts that rank's cycle; sweeps
 *	                          are controlled runs and the emulator reports it)
 *	egreedy ucb1 thompson etc ucb1-cold thompson-cold
 *	                          without a table or with one of format 1 or
 *	                          2: PROBE for communicators whose probe bucket
 *	                          bot_probe_bucket(seed, commId, ctxkey, 0) is
 *	                          below BOT_DECIDE_PROBE_WIDTH (tuner v5+ only:
 *	                          v3/v4 pass no commId), else as below
 *	greedy greedy-cold frozen shadow, learning policies off-probe, and
 *	the learning policies with a table of format 3 or later
 *	                          PRIOR when the table has scale corrections for
 *	                          the context's bytes per rank, else AUTO
 * The prior is NCCL's cost entry times the table's correction for (coll,
 * arm, log2 bytes per rank), 1 where it has none. PRIOR forces the argmin of
 * the prior over the allowed supported arms; PROBE forces the runner-up:
 * the allowed supported arm with the smallest prior strictly above the
 * argmin's, if it is within 2x of it, else the argmin. Either is forced only
 * when it differs from AUTO's own choice (without corrections PRIOR is
 * AUTO's choice: AUTO's arm is always allowed).
 *
 * AUTO's search cap (decide.h) is chosen per comm at init (cost_cap()). A
 * call whose table has no entry >= 0 (2.31's symmetric scheduler passes
 * one all -1, with numPipeOps 0) finds nothing usable on any path: it is
 * left untouched, nChannels too, and no sweep counter moves.
 *
 * Arithmetic on the rank (rank consistency: "integer and compare"): float
 * compares of NCCL's entries, which are identical on every rank; "within
 * 2x" on the IEEE-754 bit patterns as integers (for non-negative floats the
 * pattern is monotonic, and 2x adds 1 to the exponent field: +0x00800000;
 * see twice_bits()); and one documented exception, the scale correction
 * cost * (q16 / 65536) as one f32 multiply. IEEE multiplication is exactly
 * rounded, so it gives the same bits on every conforming CPU; the library is
 * built with -ffp-contract=off (no fused multiply-add) and float arithmetic
 * in SSE/NEON registers (FLT_EVAL_METHOD 0), and the factor is converted
 * from Q16 once, at init, with the same exactly-rounded conversion. The
 * dynamic decision does these compares and this multiply in vector lanes
 * (4 wide, or 8 with AVX2 where the CPU has it): per lane the same IEEE
 * operation, so the width never changes a decision.
 *
 * No pthread calls: their symbols were re-versioned in glibc 2.34 and the
 * library must load on 2.28. Atomics are compiler builtins.
 */
#include <errno.h>
#include <float.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BOT_TUNER_NO_AVX2)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "common/settings.h"
#include "common/table.h"
#include "policies/plan.h"
#include "tuner/decide.h"
#include "tuner/env.h"
#include "tuner/messages.h"
#include "tuner/ncclver.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define BOT_DECIDE_POOL 256

static struct bot_decide_ctx pool[BOT_DECIDE_POOL];
static unsigned char pool_used[BOT_DECIDE_POOL];

static struct bot_table table;	/* guarded by table_lock */
static char table_lock;
static char logged_algo_env;

#define LOG(c, lvl, flags, ...)							\
	do {									\
		if ((c)->log)							\
			(c)->log((lvl), (flags), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

static struct bot_decide_ctx *ctx_get(void)
{
	struct bot_decide_ctx *c;

	for (unsigned i = 0; i < BOT_DECIDE_POOL; i++)
		if (!__atomic_exchange_n(&pool_used[i], 1, __ATOMIC_ACQUIRE)) {
			pool[i].from_pool = 1;
			return &pool[i];
		}
	c = malloc(sizeof(*c));
	if (c)
		c->from_pool = 0;
	return c;
}

static void ctx_put(struct bot_decide_ctx *c)
{
	if (!c)
		return;
	free(c->corr);
	c->corr = NULL;
	if (c->from_pool)
		__atomic_store_n(&pool_used[c - pool], 0, __ATOMIC_RELEASE);
	else
		free(c);
}

static void lock_table(void)
{
	while (__atomic_test_and_set(&table_lock, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock_table(void)
{
	__atomic_clear(&table_lock, __ATOMIC_RELEASE);
}

static int env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* Whether an arm may be forced without looking at AUTO's choice: Ring, Tree
 * and PAT, and the table's allow-list. Anything else (CollNet, NVLS) may
 * trigger connection setup or GPU allocation on first use. */
static int arm_static_ok(unsigned arm, uint32_t allow)
{
	unsigned algo = arm / BOT_NPROTO;

	return algo == BOT_ALGO_RING || algo == BOT_ALGO_TREE || algo == BOT_ALGO_PAT ||
	       (allow >> arm & 1);
}

static int find_shape(const struct bot_table *t, uint32_t nranks, uint32_t nnodes)
{
	if (nnodes > 65535)
		nnodes = 65535;
	for (unsigned i = 0; i < t->nshapes; i++)
		if (t->shapes[i].nranks == nranks && t->shapes[i].nnodes == nnodes)
			return (int)i;
	return -1;
}

/* Reduce the table to this comm's cells. Every probe bucket depends only on
 * (seed, commId, context key, epoch 0), all known now. */
static void build_cells(struct bot_decide_ctx *c, const struct bot_table *t, int has_comm_id)
{
	int shape = find_shape(t, c->nranks, c->nnodes);
	unsigned min_bucket = 4u * t->min_bytes_log2;

	if (shape < 0)
		return;
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct bot_table_entry *e = &t->entries[i];
		struct bot_decide_cell *cell;
		unsigned arm;

		if (e->shape != shape || e->bucket < min_bucket)
			continue;
		if (has_comm_id) {
			uint64_t key = bot_ctx_key(e->coll, e->bucket, c->nranks, c->nnodes);

			arm = (unsigned)bot_plan_arm(&e->plan,
						     bot_probe_bucket(t->seed, c->comm_id, key, 0));
		} else {
			arm = e->plan.exploit;
		}
		cell = &c->cell[e->coll][e->bucket];
		if (arm >= BOT_NARMS) {
			/* AUTO by the plan: left to NCCL in a v2 table; in a v1
			 * table, the policy on the prior, as v1's ranks decide
			 * (formats.md 8: every rank decides the same bytes alike) */
			if (t->version >= 2)
				cell->aux = BOT_DECIDE_PLANNED;
			continue;
		}
		cell->arm = (uint8_t)arm;
		if (!arm_static_ok(arm, t->allow))
			cell->arm |= BOT_DECIDE_NEEDS_AUTO;
		/* NCCL uses nChannels unclamped as channelHi+1 on the CollNet
		 * path (and multi-node NVLS); the plugin does not know the comm's
		 * channel count, so a channel hint is kept for Ring, Tree and
		 * PAT only, where NCCL schedules by traffic and caps it. */
		cell->nchannels = arm_static_ok(arm, 0) ? e->plan.nchannels : 0;
		c->ncells++;
	}
}

/* ---- the policy on the prior ------------------------------------------------ */

/* Learning policies probe the runner-up by the prior without a plan (no
 * table, or a table of format 1 or 2). */
static int policy_learns(unsigned id)
{
	return bot_policy_probes_on_prior((int)id);
}

/* No table: the decision inputs from the environment (tuner/env.h: a
 * refused value has already been replaced by its default, and reported). */
static void env_inputs(struct bot_decide_ctx *c, const struct bot_env *e, uint32_t *allow)
{
	c->policy = (uint8_t)e->policy;
	c->seed = e->seed;
	c->min_bytes_log2 = (uint8_t)e->min_bytes_log2;
	*allow = e->allow;
	c->shadow = c->policy == BOT_POLICY_SHADOW;
}

/* log2 of the bytes per rank of a size bucket, as policies/kb.c
 * bot_kb_bpr_bucket() defines it: nBytes itself, except for allgather and
 * reducescatter, whose nBytes is the whole buffer (nRanks x the per-rank
 * part): the bucket of the bucket's lower bound / nRanks. The bucket's
 * lower bound stands for every size in it, so a cell has one value. */
static unsigned cell_bpr_log2(unsigned coll, unsigned bucket, uint32_t nranks)
{
	if ((coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER) && nranks > 1)
		bucket = bot_size_bucket(bot_bucket_lo(bucket) / nranks);
	return bucket / 4;
}

/* Give every undecided cell at or above the threshold its dynamic mode, and
 * build the correction rows it needs. t is NULL without a table. A table of
 * format 3 or later never probes on the prior: every probe there is one
 * the planner budgeted (formats.md 8). Returns 0, or -1 when the rows
 * cannot be allocated (logged; init fails). */
static int build_dynamic(struct bot_decide_ctx *c, const struct bot_table *t, int has_comm_id)
{
	uint64_t has[BOT_NCOLL] = { 0 };
	uint16_t rowidx[BOT_NCOLL][64];
	unsigned nrows = 0, min_bucket = 4u * c->min_bytes_log2;
	int learn = policy_learns(c->policy) && has_comm_id && (!t || t->version < 3);

	if (c->policy == BOT_POLICY_AUTO)
		return 0;
	if (t && c->policy != BOT_POLICY_SWEEP)
		for (unsigned i = 0; i < t->ncorr; i++)
			if (t->corr[i].coll < BOT_NCOLL && t->corr[i].bpr_log2 < 64 &&
			    t->corr[i].arm < BOT_NARMS)
				has[t->corr[i].coll] |= 1ULL << t->corr[i].bpr_log2;
	memset(rowidx, 0xff, sizeof(rowidx));
	for (unsigned coll = 0; coll < BOT_NCOLL; coll++) {
		for (unsigned b = min_bucket; b < BOT_NBUCKETS; b++) {
			struct bot_decide_cell *cell = &c->cell[coll][b];
			unsigned l = cell_bpr_log2(coll, b, c->nranks);
			uint16_t row = BOT_DECIDE_NOCORR;

			if (cell->arm != BOT_DECIDE_AUTO)
				continue;
			if (cell->aux == BOT_DECIDE_PLANNED && c->policy != BOT_POLICY_SWEEP)
				continue;
			if (c->policy == BOT_POLICY_SWEEP) {
				cell->arm = BOT_DECIDE_SWEEP;
				cell->aux = 0;
				c->ndyn++;
				continue;
			}
			if (has[coll] >> l & 1) {
				if (rowidx[coll][l] == BOT_DECIDE_NOCORR)
					rowidx[coll][l] = (uint16_t)nrows++;
				row = rowidx[coll][l];
			}
			if (learn && bot_probe_bucket(c->seed, c->comm_id,
						      bot_ctx_key(coll, b, c->nranks, c->nnodes),
						      0) < BOT_DECIDE_PROBE_WIDTH)
				cell->arm = BOT_DECIDE_PROBE;
			else if (row != BOT_DECIDE_NOCORR)
				cell->arm = BOT_DECIDE_PRIOR;
			else
				continue;
			cell->aux = row;
			c->ndyn++;
		}
	}
	if (!nrows)
		return 0;
	c->corr = malloc(nrows * sizeof(*c->corr));
	if (!c->corr) {
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: cannot allocate the scale corrections (%zu bytes): failing "
		    "communicator init", nrows * sizeof(*c->corr));
		return -1;
	}
	c->ncorr_rows = nrows;
	for (unsigned r = 0; r < nrows; r++)
		for (unsigned a = 0; a < BOT_DECIDE_NLANE; a++)
			c->corr[r][a] = 1.0f;
	for (unsigned i = 0; i < t->ncorr; i++) {
		const struct bot_table_corr *k = &t->corr[i];

		if (k->coll < BOT_NCOLL && k->bpr_log2 < 64 && k->arm < BOT_NARMS &&
		    rowidx[k->coll][k->bpr_log2] != BOT_DECIDE_NOCORR)
			/* the only float arithmetic of the library besides
			 * the per-call multiply: exactly rounded, the same
			 * on every rank (see the top of this file) */
			c->corr[rowidx[k->coll][k->bpr_log2]][k->arm] =
				(float)k->q16 * (1.0f / 65536.0f);
	}
	return 0;
}

/* Decode the table (or read the environment) and fill c's cells. Returns 0,
 * or -1 when init must fail (reason already logged). */
static int load_table(struct bot_decide_ctx *c, const struct bot_env *e, int has_comm_id)
{
	const char *text = getenv(BOT_ENV_TABLE);
	uint32_t allow;
	int err, ret = 0;

	if (!text || !*text) {
		env_inputs(c, e, &allow);
		for (unsigned a = 0; a < BOT_NARMS; a++)
			if (bot_arm_allowed((int)a, -1, allow))
				c->allow_static |= 1u << a;
		return build_dynamic(c, NULL, has_comm_id);
	}
	lock_table();
	err = bot_table_decode(text, strlen(text), &table);
	if (err == BOT_TABLE_OK && table.policy >= BOT_NPOLICY &&
	    (table.ncorr || table.version < 3)) {
		/* a policy of a newer build: its correction rows, and before
		 * format 3 the cells the plans leave (probes on the prior), are
		 * used as that policy says, which this build cannot know */
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE: policy id %u is not known to this build (this is "
		    "nccl-bot " PACKAGE_VERSION ", policies 0-%d) and the table %s: failing "
		    "communicator init rather than deciding differently from other ranks; load the "
		    "nccl-bot build that compiled the table", (unsigned)table.policy,
		    BOT_NPOLICY - 1, table.ncorr ? "has scale corrections whose use depends on it" :
		    "is of a format before 3, where the policy decides what the plans leave");
		ret = -1;
	} else if (err == BOT_TABLE_OK) {
		if (table.policy >= BOT_NPOLICY)
			/* decisions are the table's plans alone: only the label */
			LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
			    "nccl-bot: NCCL_BOT_TABLE: policy id %u is not known to this build "
			    "(this is nccl-bot " PACKAGE_VERSION ", policies 0-%d): labelled auto; "
			    "the decisions are the table's plans", (unsigned)table.policy,
			    BOT_NPOLICY - 1);
		c->from_table = 1;
		c->digest = table.digest;
		c->policy = table.policy < BOT_NPOLICY ? table.policy : BOT_POLICY_AUTO;
		c->seed = table.seed;
		c->min_bytes_log2 = table.min_bytes_log2;
		c->shadow = (table.flags & BOT_TABLE_F_SHADOW) || table.policy == BOT_POLICY_SHADOW;
		for (unsigned a = 0; a < BOT_NARMS; a++)
			if (bot_arm_allowed((int)a, -1, table.allow))
				c->allow_static |= 1u << a;
		build_cells(c, &table, has_comm_id);
		ret = build_dynamic(c, &table, has_comm_id);
	} else if (err == BOT_TABLE_EPREFIX) {
		/* the digest covers the payload only: not a build mismatch */
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE: its prefix NBT%c. does not name its payload's "
		    "format version (the text was edited or damaged after it was compiled): "
		    "failing communicator init rather than deciding differently from other "
		    "ranks; give every rank the table as the launcher compiled it", text[3]);
		ret = -1;
	} else if (bot_table_err_fatal(err)) {
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE: %s (this is nccl-bot " PACKAGE_VERSION
		    ", reading table formats %d-%d): failing communicator init rather than "
		    "deciding differently from other ranks; load the nccl-bot build that compiled "
		    "the table", bot_table_strerror(err), BOT_TABLE_VERSION_MIN, BOT_TABLE_VERSION);
		ret = -1;
	} else if (err == BOT_TABLE_ESIZE && strlen(text) > BOT_TABLE_MAX_TEXT) {
		/* the same on every rank (one environment), so every rank falls
		 * back alike; the numbers tell a cut or a wrong variable apart */
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE rejected: %s (%zu characters, at most %d); leaving "
		    "NCCL's choice (the prior) for this communicator", bot_table_strerror(err),
		    strlen(text), BOT_TABLE_MAX_TEXT);
		c->table_rejected = 1;
	} else {
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE rejected: %s; leaving NCCL's choice (the prior) "
		    "for this communicator", bot_table_strerror(err));
		c->table_rejected = 1;
	}
	unlock_table();
	return ret;
}

/* ---- the decision out of line -------------------------------------------------- */

/* NCCL picks the smallest usable entry, ties to the lowest index; the
 * algorithm of that entry, or -1 when none is usable. */
static int auto_algo(const float *t, int numAlgo, int numProto, uint32_t cap_bits)
{
	int best = -1;
	float v = 0;

	for (int i = 0; i < numAlgo * numProto; i++)
		if (t[i] >= 0.0f && (best < 0 || t[i] < v)) {
			best = i;
			v = t[i];
		}
	/* the smallest entry >= 0 over the cap means none is usable */
	return best < 0 || !bot_decide_usable(v, cap_bits) ? -1 : best / numProto;
}

static void debug_log(const struct bot_decide_ctx *c, int coll, size_t nbytes, int arm,
		      int forced)
{
	LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_TUNING,
	    BOT_MSG_ARM, (unsigned long long)c->comm_id, coll, nbytes, bot_util_bucket(nbytes), arm,
	    forced ? "forced" : c->shadow ? "shadow" : "left to NCCL (unsupported or not allowed)");
}

/* The decision for any cell (the inline bot_decide() calls it for the
 * fixed arms it does not finish: BOT_DECIDE_SLOW or NEEDS_AUTO set, a NULL
 * cost table, or one shaped other than NCCL's 7 x 3). */
void bot_decide_full(struct bot_decide_ctx *c, int coll, size_t nbytes, float *t,
		     int numAlgo, int numProto, int *nChannels)
{
	struct bot_decide_cell cell;
	unsigned arm, algo, proto, idx, bucket;
	int forced = 0;

	/* NCCL's table has 3 protocols and 6 or 7 algorithms; a shape no NCCL
	 * passes is left alone rather than indexed with a negative stride */
	if ((unsigned)coll >= BOT_NCOLL || !t || numAlgo <= 0 || numProto <= 0)
		return;
	bucket = bot_util_bucket(nbytes);
	cell = c->cell[coll][bucket];
	if (cell.arm == BOT_DECIDE_AUTO)
		return;
	if (cell.arm & BOT_DECIDE_DYN) {
		bot_decide_dyn(c, &c->cell[coll][bucket], coll, nbytes, t, numAlgo, numProto);
		return;
	}
	arm = cell.arm & BOT_DECIDE_ARM_MASK;
	algo = arm / BOT_NPROTO;
	proto = arm % BOT_NPROTO;
	if (algo >= (unsigned)numAlgo || proto >= (unsigned)numProto)
		goto out;
	idx = algo * (unsigned)numProto + proto;
	if (!bot_decide_usable(t[idx], c->cap_bits))
		goto out;
	if ((cell.arm & BOT_DECIDE_NEEDS_AUTO) &&
	    bot_algo_family(auto_algo(t, numAlgo, numProto, c->cap_bits)) != bot_algo_family((int)algo))
		goto out;
	if (c->shadow)
		goto out;
	bot_decide_force(&t[idx]);
	if (cell.nchannels && nChannels)
		*nChannels = cell.nchannels;
	forced = 1;
out:
	if (__builtin_expect(c->debug, 0))
		debug_log(c, coll, nbytes, (int)arm, forced);
}

/* ---- the per-call decision of dynamic cells ---------------------------------- */

/* The bit pattern of a float as an integer, sign cleared: the values here
 * are >= 0 (NCCL's supported entries times non-negative factors), and -0.0
 * must order as 0. For non-negative floats the pattern is monotonic in the
 * value, so patterns compare as the values do. */
static inline uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u & 0x7fffffffu;
}

/* The pattern of 2x, exactly, without a float operation: zero and
 * subnormals double their mantissa (a shift, which also crosses into the
 * first normal binade correctly); normals add 1 to the exponent field
 * (+0x00800000); from 2^127 up, 2x overflows to +inf (0x7f800000). NaN
 * patterns (above +inf) also map to +inf. */
static inline uint32_t twice_bits(uint32_t b)
{
	if (b < 0x00800000u)
		return b << 1;
	if (b >= 0x7f000000u)
		return 0x7f800000u;
	return b + 0x00800000u;
}

static inline unsigned ctz32(uint32_t m)
{
	return (unsigned)__builtin_ctz(m);
}

/* A PRIOR/PROBE cell without corrections multiplies by 1 (exact). */
static const float ones[BOT_DECIDE_NLANE] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
};

/*
 * The scan: one pass over NCCL's row that finds the supported (usable)
 * arms, AUTO's arm by NCCL's rule (the smallest usable entry, ties to the
 * lowest index) and the argmin of the prior over the supported static arms.
 * It runs on the arms as lanes of vectors (GCC/Clang vector extensions): 8
 * lanes with AVX2 where the CPU has it (checked once, at comm init), else 4
 * (SSE2 on x86-64, NEON on aarch64, scalar code elsewhere). Every lane does
 * exactly what a loop over the arms does, whatever the width: the same
 * float compares for "usable"; the same f32 multiply for the prior, in the
 * lanes of supported static arms only (the others multiply +0.0, which
 * raises nothing); and integer compares of the bit patterns with the sign
 * cleared, which for values >= 0 order as the values do (-0.0 as 0).
 * Patterns of usable entries and of priors are at most +inf's (entries
 * finite, factors finite and >= 0: a prior can round to +inf, never to
 * NaN), so INT32_MAX (also the mask that clears the sign)
 * marks a lane out of the running and signed compares order the rest. An
 * argmin is the minimum over all lanes, then the lowest lane holding it:
 * ties to the lowest arm, as NCCL breaks them. The lanes past NCCL's row
 * (21..23, or past a shorter row) hold -1: never usable.
 */
struct dyn_scan {
	uint32_t sup;		/* usable arms (0: none, the rest is unset) */
	unsigned auto_arm;	/* AUTO's arm */
	uint32_t be;		/* smallest prior pattern over the usable static arms,
				 * INT32_MAX when there is none */
	unsigned e;		/* its lowest arm (0 when none) */
};

typedef float bot_v4f __attribute__((vector_size(16)));
typedef int32_t bot_v4i __attribute__((vector_size(16)));

/* NCCL's row of n entries, padded with -1 (unsupported) to BOT_DECIDE_NLANE;
 * reads t[0..n) only. */
static void pad_row(float *buf, const float *t, unsigned n)
{
	for (unsigned i = 0; i < BOT_DECIDE_NLANE; i++)
		buf[i] = i < n ? t[i] : -1.0f;
}

/* ---- 4 lanes: 6 groups -------------------------------------------------------- */

#define NV4 (BOT_DECIDE_NLANE / 4)
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define BOT_HAVE_SHUFFLEVECTOR 1
#endif
#endif
/* loops over the groups, unrolled so that the groups stay in registers */
#define FOR_V4(k) _Pragma("GCC unroll 6") for (unsigned k = 0; k < NV4; k++)

static inline bot_v4i v4i_splat(int32_t x)
{
	return (bot_v4i){ x, x, x, x };
}

static inline bot_v4i v4i_min(bot_v4i a, bot_v4i b)
{
	bot_v4i lt = a < b;

	return (a & lt) | (b & ~lt);
}

/* The minimum over every lane of v[0..NV4), in every lane. */
static inline bot_v4i v4i_hmin(const bot_v4i *v)
{
	bot_v4i m = v4i_min(v4i_min(v4i_min(v[0], v[1]), v4i_min(v[2], v[3])),
			    v4i_min(v[4], v[5]));
#if defined(__SSE2__)
	m = v4i_min(m, (bot_v4i)_mm_shuffle_epi32((__m128i)m, _MM_SHUFFLE(1, 0, 3, 2)));
	return v4i_min(m, (bot_v4i)_mm_shuffle_epi32((__m128i)m, _MM_SHUFFLE(2, 3, 0, 1)));
#elif defined(BOT_HAVE_SHUFFLEVECTOR)
	m = v4i_min(m, __builtin_shufflevector(m, m, 2, 3, 0, 1));
	return v4i_min(m, __builtin_shufflevector(m, m, 1, 0, 3, 2));
#else
	int32_t a = m[0] < m[1] ? m[0] : m[1], b = m[2] < m[3] ? m[2] : m[3];

	return v4i_splat(a < b ? a : b);
#endif
}

/* Bit i set where lane i of the masks m[0..NV4) (0 or -1 per lane) is set. */
static inline uint32_t v4i_bits(const bot_v4i *m)
{
#if defined(__SSE2__)
	__m128i a = _mm_packs_epi32((__m128i)m[0], (__m128i)m[1]);
	__m128i b = _mm_packs_epi32((__m128i)m[2], (__m128i)m[3]);
	__m128i c = _mm_packs_epi32((__m128i)m[4], (__m128i)m[5]);

	return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(a, b)) |
	       ((uint32_t)_mm_movemask_epi8(_mm_packs_epi16(c, c)) & 0xffu) << 16;
#else
	/* each lane keeps its own bit, then the lanes are ORed together */
	bot_v4i acc = v4i_splat(0);

	FOR_V4(k)
		acc |= m[k] & (bot_v4i){ 1 << (4 * k), 2 << (4 * k), 4 << (4 * k), 8 << (4 * k) };
	return (uint32_t)(acc[0] | acc[1] | acc[2] | acc[3]);
#endif
}

/* The lowest lane of v[0..NV4) equal to m (which some lane holds). */
static inline unsigned v4i_first(const bot_v4i *v, bot_v4i m)
{
	bot_v4i eq[NV4];

	FOR_V4(k)
		eq[k] = v[k] == m;
	return ctz32(v4i_bits(eq));
}

static inline __attribute__((always_inline)) void
scan_v4(const float *t, unsigned n, const float *f, const int32_t *stat_lane, float cap1,
	struct dyn_scan *o)
{
	const bot_v4i big = v4i_splat(INT32_MAX);
	const bot_v4f zero = { 0.0f, 0.0f, 0.0f, 0.0f };
	const bot_v4f cap = { cap1, cap1, cap1, cap1 };
	float buf[BOT_DECIDE_NLANE];
	bot_v4i usable[NV4], key[NV4], q[NV4], m;

	if (n != BOT_NARMS) {
		pad_row(buf, t, n);
		t = buf;
	}
	FOR_V4(k) {
		bot_v4f x, fv;
		bot_v4i st, sa, prior;

		if (k < NV4 - 1)
			memcpy(&x, &t[4 * k], sizeof(x));
		else	/* t[20] and padding: never past NCCL's 21 entries */
			x = (bot_v4f){ t[20], -1.0f, -1.0f, -1.0f };
		memcpy(&st, &stat_lane[4 * k], sizeof(st));
		memcpy(&fv, &f[4 * k], sizeof(fv));
		usable[k] = (x >= zero) & (x < cap);
		key[k] = ((bot_v4i)x & big) | (big & ~usable[k]);
		sa = usable[k] & st;
		/* the one float operation (see the top of this file) */
		prior = (bot_v4i)((bot_v4f)((bot_v4i)x & sa) * fv) & big;
		q[k] = prior | (big & ~sa);
	}
	o->sup = v4i_bits(usable);
	if (!o->sup)
		return;
	m = v4i_hmin(key);
	o->auto_arm = v4i_first(key, m);
	m = v4i_hmin(q);
	o->be = (uint32_t)m[0];
	o->e = o->be != INT32_MAX ? v4i_first(q, m) : 0;
}

/* ---- 8 lanes (AVX2): 3 groups --------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(BOT_TUNER_NO_AVX2)
#define BOT_TUNER_DECIDE_HAVE_AVX2 1
#define NV8 (BOT_DECIDE_NLANE / 8)

#define FOR_V8(k) _Pragma("GCC unroll 3") for (unsigned k = 0; k < NV8; k++)

typedef float bot_v8f __attribute__((vector_size(32)));
typedef int32_t bot_v8i __attribute__((vector_size(32)));

#define AVX2 __attribute__((target("avx2")))

static inline AVX2 bot_v8i v8i_splat(int32_t x)
{
	return (bot_v8i){ x, x, x, x, x, x, x, x };
}

/* The minimum over every lane of v[0..3), in every lane. */
static inline AVX2 bot_v8i v8i_hmin(const bot_v8i *v)
{
	__m256i m = _mm256_min_epi32(_mm256_min_epi32((__m256i)v[0], (__m256i)v[1]),
				     (__m256i)v[2]);

	m = _mm256_min_epi32(m, _mm256_permute2x128_si256(m, m, 1));
	m = _mm256_min_epi32(m, _mm256_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
	return (bot_v8i)_mm256_min_epi32(m, _mm256_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
}

static inline AVX2 uint32_t v8i_bits(const bot_v8i *m)
{
	return (uint32_t)_mm256_movemask_ps((__m256)m[0]) |
	       (uint32_t)_mm256_movemask_ps((__m256)m[1]) << 8 |
	       (uint32_t)_mm256_movemask_ps((__m256)m[2]) << 16;
}

static inline AVX2 unsigned v8i_first(const bot_v8i *v, bot_v8i m)
{
	bot_v8i eq[NV8];

	FOR_V8(k)
		eq[k] = v[k] == m;
	return ctz32(v8i_bits(eq));
}

static inline __attribute__((always_inline)) AVX2 void
scan_v8(const float *t, unsigned n, const float *f, const int32_t *stat_lane, float cap1,
	struct dyn_scan *o)
{
	const bot_v8i big = v8i_splat(INT32_MAX);
	const bot_v8f zero = { 0, 0, 0, 0, 0, 0, 0, 0 };
	const bot_v8f cap = { cap1, cap1, cap1, cap1, cap1, cap1, cap1, cap1 };
	float buf[BOT_DECIDE_NLANE];
	bot_v8i usable[NV8], key[NV8], q[NV8], m;

	if (n != BOT_NARMS) {
		pad_row(buf, t, n);
		t = buf;
	}
	FOR_V8(k) {
		bot_v8f x, fv;
		bot_v8i st, sa, prior;

		if (k < NV8 - 1) {
			memcpy(&x, &t[8 * k], sizeof(x));
		} else {
			/* t[16..20] and padding: never past NCCL's 21 entries */
			__m128 hi = _mm_move_ss(_mm_set1_ps(-1.0f), _mm_load_ss(&t[20]));

			x = (bot_v8f)_mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&t[16])),
							  hi, 1);
		}
		memcpy(&st, &stat_lane[8 * k], sizeof(st));
		memcpy(&fv, &f[8 * k], sizeof(fv));
		usable[k] = (x >= zero) & (x < cap);
		key[k] = ((bot_v8i)x & big) | (big & ~usable[k]);
		sa = usable[k] & st;
		/* the one float operation (see the top of this file) */
		prior = (bot_v8i)((bot_v8f)((bot_v8i)x & sa) * fv) & big;
		q[k] = prior | (big & ~sa);
	}
	o->sup = v8i_bits(usable);
	if (!o->sup)
		return;
	m = v8i_hmin(key);
	o->auto_arm = v8i_first(key, m);
	m = v8i_hmin(q);
	o->be = (uint32_t)m[0];
	o->e = o->be != INT32_MAX ? v8i_first(q, m) : 0;
}

/* Whether the CPU and the OS (XCR0: SSE and AVX state) support AVX2. */
static int cpu_avx2(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6 || __get_cpuid_max(0, NULL) < 7)
		return 0;
	__cpuid_count(7, 0, a, b, c, d);
	return (b & bit_AVX2) != 0;
}
#endif

/* 1 when scan_v8 runs here (found once per process). */
static int use_avx2(void)
{
#ifdef BOT_TUNER_DECIDE_HAVE_AVX2
	static int cached = -1;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v < 0) {
		v = cpu_avx2();
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
#else
	return 0;
#endif
}

/*
 * After the scan: the allowed arms are bot_arm_allowed(a, auto_arm, allow)
 * for every a: the supported static arms plus the supported protocols of
 * AUTO's algorithm family (bot_arm_family_mask: NVLS and NVLS_TREE together;
 * so they hold auto_arm). PRIOR: the argmin of the prior
 * over the allowed arms: the scan's over the static ones, then the
 * family's others in ascending order, replacing on a smaller prior or an
 * equal one at a lower arm. PROBE: the runner-up, the allowed arm with the
 * smallest prior strictly above that minimum (ties to the lowest), if it is
 * within 2x of it. SWEEP: the k-th allowed arm, k = the cell's call counter
 * mod their count. Inlined into each width's function.
 */
static inline __attribute__((always_inline)) void
dyn_decide(struct bot_decide_ctx *c, struct bot_decide_cell *cell, int coll, size_t nbytes,
	   float *t, const float *f, const struct dyn_scan *s)
{
	const uint32_t stat = c->allow_static;
	uint32_t allowed, m, be, br = UINT32_MAX, b;
	unsigned arm, i, r = 0, cnt;
	int forced = 0;

	allowed = s->sup & (stat | bot_arm_family_mask((int)s->auto_arm));
	if (cell->arm == BOT_DECIDE_SWEEP) {
		/* the k-th allowed supported arm, k = counter mod their count,
		 * of those the ranks can measure (and AUTO's own): a sweep of
		 * CollNet or NVLS across nodes would measure nothing */
		uint32_t sw = allowed & (c->measurable |
					 (s->auto_arm < BOT_NARMS ? 1u << s->auto_arm : 0u));

		if (!sw)
			sw = allowed;
		for (cnt = 0, m = sw; m; m &= m - 1)
			cnt++;
		for (i = cell->aux++ % cnt, m = sw; i; i--)
			m &= m - 1;
		arm = ctz32(m);
	} else {
		be = s->be;
		arm = s->e;
		for (m = allowed & ~stat; m; m &= m - 1) {
			i = ctz32(m);
			b = f32_bits(t[i] * f[i]);
			if (b < be || (b == be && i < arm)) {
				be = b;
				arm = i;
			}
		}
		if (cell->arm == BOT_DECIDE_PROBE) {
			/* the runner-up: the smallest prior strictly above */
			for (m = allowed; m; m &= m - 1) {
				i = ctz32(m);
				b = f32_bits(t[i] * f[i]);
				if (b > be && b < br) {
					br = b;
					r = i;
				}
			}
			if (br != UINT32_MAX && br <= twice_bits(be))
				arm = r;
		}
	}
	if (arm != s->auto_arm && !c->shadow) {
		bot_decide_force(&t[arm]);
		forced = 1;
	}
	if (__builtin_expect(c->debug, 0))
		LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_TUNING,
		    "nccl-bot: comm %016llx coll %d nbytes %zu bucket %u: %s arm %u (AUTO %u) %s",
		    (unsigned long long)c->comm_id, coll, nbytes, bot_util_bucket(nbytes),
		    cell->arm == BOT_DECIDE_SWEEP ? "sweep" :
		    cell->arm == BOT_DECIDE_PROBE ? "probe" : "prior", arm, s->auto_arm,
		    forced ? "forced" : c->shadow ? "shadow" : "AUTO's own");
}

static void dyn_v4(struct bot_decide_ctx *c, struct bot_decide_cell *cell, int coll, size_t nbytes,
		   float *t, unsigned n, const float *f)
{
	struct dyn_scan s;

	scan_v4(t, n, f, c->stat_lane, c->cap, &s);
	if (s.sup)
		dyn_decide(c, cell, coll, nbytes, t, f, &s);
}

#ifdef BOT_TUNER_DECIDE_HAVE_AVX2
static AVX2 void dyn_v8(struct bot_decide_ctx *c, struct bot_decide_cell *cell, int coll,
			size_t nbytes, float *t, unsigned n, const float *f)
{
	struct dyn_scan s;

	scan_v8(t, n, f, c->stat_lane, c->cap, &s);
	if (s.sup)
		dyn_decide(c, cell, coll, nbytes, t, f, &s);
}
#endif

void bot_decide_dyn(struct bot_decide_ctx *c, struct bot_decide_cell *cell, int coll,
		    size_t nbytes, float *t, int numAlgo, int numProto)
{
	const float *f;

	/* arm = algo * 3 + proto is the table index only for 3 protocols */
	if (numProto != BOT_NPROTO || numAlgo <= 0 || numAlgo > BOT_NALGO)
		return;
	/* a SWEEP cell's aux is its counter: no corrections */
	f = cell->arm != BOT_DECIDE_SWEEP && cell->aux != BOT_DECIDE_NOCORR ? c->corr[cell->aux] : ones;
#ifdef BOT_TUNER_DECIDE_HAVE_AVX2
	if (c->avx2) {
		dyn_v8(c, cell, coll, nbytes, t, (unsigned)numAlgo * BOT_NPROTO, f);
		return;
	}
#endif
	dyn_v4(c, cell, coll, nbytes, t, (unsigned)numAlgo * BOT_NPROTO, f);
}

/* After the cells are built: allow_static per lane for the scan, the scan's
 * width, and BOT_DECIDE_SLOW on the fixed arms the inline path must leave to
 * bot_decide_full() (shadow: never written; debug: logged). */
static void finish_cells(struct bot_decide_ctx *c)
{
	for (unsigned a = 0; a < BOT_DECIDE_NLANE; a++)
		c->stat_lane[a] = a < BOT_NARMS && (c->allow_static >> a & 1) ? -1 : 0;
	c->avx2 = (uint8_t)use_avx2();
	if (!c->shadow && !c->debug)
		return;
	for (unsigned coll = 0; coll < BOT_NCOLL; coll++)
		for (unsigned b = 0; b < BOT_NBUCKETS; b++)
			if (c->cell[coll][b].arm < BOT_DECIDE_SLOW)
				c->cell[coll][b].arm |= BOT_DECIDE_SLOW;
}

/*
 * AUTO's search cap for the NCCL that opened this context (decide.h). It
 * changes which entries a decision may force and which arm counts as
 * AUTO's, so it must be the same on every rank of the comm (rank
 * consistency): it comes from the tuner ABI version NCCL chose and from
 * ncclGetVersion() (tuner/ncclver.h), and NCCL itself fails communicator
 * init when its ranks run different NCCL versions, which then probe the
 * same ABI of the same library. Tuner v6 is loaded only by 2.30 and later:
 * FLT_MAX. v3 and v4 only by 2.27 and older (2.28 probes v5 first): 3.6e9.
 * v5 is 2.28 or 2.29: FLT_MAX when ncclGetVersion() says 2.29 or later,
 * else 3.6e9 (a 2.29 taken for 2.28 only leaves entries in [3.6e9,
 * FLT_MAX) alone, as every build before did). The lookup asks only the
 * object that holds the logger NCCL passes (libnccl, or the program NCCL
 * is linked into): a NCCL that does not export ncclGetVersion() reads as
 * unknown, hence 3.6e9, on every rank, never as whatever other NCCL the
 * process happened to load.
 */
static float cost_cap(int abi, bot_nccl_logger_t log, int *version)
{
	/* looked up for every ABI: the init line and the spool's process
	 * record say it (they said "NCCL 0" under v3, v4 and v6); only v5's
	 * cap reads it, and it is the same on every rank */
	*version = bot_ncclver((const void *)(uintptr_t)log);
	if (abi >= 6)
		return FLT_MAX;
	if (abi <= 4)
		return BOT_DECIDE_CAP_228;
	return *version >= BOT_NCCL_VERSION(2, 29, 0) ? FLT_MAX : BOT_DECIDE_CAP_228;
}

_Static_assert(sizeof(float) == 4 && FLT_MAX == 0x1.fffffep127f, "IEEE-754 binary32");

int bot_decide_open(struct bot_decide_ctx **out, int abi, int has_comm_id, uint64_t comm_id,
		    size_t nranks, size_t nnodes, int prof_rank, bot_nccl_logger_t log)
{
	struct bot_decide_ctx *c = ctx_get();
	unsigned char from_pool;
	struct bot_env env;

	*out = NULL;
	if (!c) {
		if (log)
			log(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING, __FILE__, __LINE__,
			    "nccl-bot: cannot allocate the per-communicator context (%zu bytes): "
			    "failing communicator init", sizeof(*c));
		return BOT_NCCL_INTERNAL_ERROR;
	}
	from_pool = c->from_pool;
	memset(c, 0, sizeof(*c));
	memset(c->cell, BOT_DECIDE_AUTO, sizeof(c->cell));
	c->from_pool = from_pool;
	c->abi = (uint8_t)abi;
	c->comm_id = comm_id;
	c->nranks = nranks > UINT32_MAX ? UINT32_MAX : (uint32_t)nranks;
	c->nnodes = nnodes > UINT32_MAX ? UINT32_MAX : (uint32_t)nnodes;
	for (unsigned a = 0; a < BOT_NARMS; a++)
		if (bot_arm_measurable((int)a, c->nnodes))
			c->measurable |= 1u << a;
	c->log = log;
	c->cap = cost_cap(abi, log, &c->nccl_version);
	c->cap_bits = bot_decide_bits(c->cap);
	/* the whole environment, once per init; with a table only the
	 * variables the table does not replace are used */
	bot_renv_read(&env, bot_renv_has_table(), log);
	c->debug = (uint8_t)env.debug;

	if (env_set("NCCL_ALGO") || env_set("NCCL_PROTO")) {
		if (!__atomic_exchange_n(&logged_algo_env, 1, __ATOMIC_RELAXED))
			LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING,
			    BOT_MSG_ALGO_ENV);
		*out = c;
		return BOT_NCCL_SUCCESS;
	}
	if (load_table(c, &env, has_comm_id) < 0) {
		ctx_put(c);
		return BOT_NCCL_INTERNAL_ERROR;
	}
	finish_cells(c);
	LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING,
	    "nccl-bot " PACKAGE_VERSION ": tuner v%d comm %016llx nranks %u nnodes %u: "
	    "table %016llx, policy %s (from %s), seed 0x%llx, allowed arms 0x%06x, %u contexts "
	    "decided, %u on the prior (%u correction rows), min bytes 2^%u, profiler rank %d, "
	    "NCCL %.0d%s, AUTO's cap %s%s%s",
	    abi,
	    (unsigned long long)comm_id, c->nranks, c->nnodes, (unsigned long long)c->digest,
	    bot_policy_name(c->policy) ? bot_policy_name(c->policy) : "unknown",
	    c->from_table ? "the table" : c->table_rejected ? "none: NCCL_BOT_TABLE was "
	    "rejected, NCCL's choice everywhere" : "the environment", (unsigned long long)c->seed,
	    (unsigned)c->allow_static, c->ncells, c->ndyn, c->ncorr_rows,
	    c->min_bytes_log2, prof_rank, c->nccl_version,
	    c->nccl_version > 0 ? "" : "unknown",	/* %.0d prints no 0 */
	    c->cap == BOT_DECIDE_CAP_228 ? "3.6e9 us" : "FLT_MAX",
	    c->shadow ? ", shadow (never written)" : "",
	    has_comm_id ? "" : ", no commId (exploit arms only, no probes)");
	*out = c;
	return BOT_NCCL_SUCCESS;
}

void bot_decide_close(struct bot_decide_ctx *c)
{
	ctx_put(c);
}
