/*
 * fixture.c - plugins the emulator tests itself with.
 *
 * One source, one variant per -DFIX_* macro, each built as its own .so:
 *   FIX_GOOD        exports tuner v2..v6 and profiler v1..v6 (so the probe
 *                   order of every emulated release is visible); always
 *                   Ring/Simple when supported; a refcounting profiler
 *                   that reads each version's own descriptor layout and
 *                   validates every parent and group handle it is given.
 *   FIX_NOOP        tuner v5 that leaves every table alone (stock AUTO).
 *   FIX_NOSYM       exports no plugin symbol at all (NCCL must go on).
 *   FIX_BAD_REGBUFF decides from regBuff (rank-local): must be DIVERGED.
 *   FIX_BAD_COUNTER decides from a process-wide call counter: must be
 *                   DIVERGED under extra simulate calls or other
 *                   interleavings.
 *   FIX_BAD_PROF    decides from whether its profiler was initialised:
 *                   must be DIVERGED when one rank has no profiler.
 *   FIX_BAD_CAP     takes every entry below FLT_MAX for one NCCL may pick,
 *                   as 2.29+ does, on any release: on 2.28 it forces
 *                   entries NCCL never picks (>= 3.6e9), which must be
 *                   UNSAFE under scenario huge.
 * The bad ones prove the harness can fail. The others force an entry only
 * where NCCL's argmin could pick it: >= 0 and below the search cap of the
 * NCCL that loaded them (doc/nccl-abi.md, "Tuner calls"), which they learn
 * from ncclGetVersion() at tuner init.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/emulator/nccl_abi.h"

#define ARM(a, p) ((a) * EMU_NUM_PROTOS + (p))

static __attribute__((unused)) int ctx_token;

/* libnccl's export, found (weakly) in whatever loaded the fixture: the
 * emulator's binary exports it. */
int ncclGetVersion(int *version) __attribute__((weak));

/* AUTO's search cap of the NCCL in this process (set at tuner init). */
static __attribute__((unused)) float cap = 3.6e9f;

static __attribute__((unused)) void learn_cap(void)
{
	int v = 0;

#if defined(FIX_BAD_CAP)
	(void)v;
	cap = FLT_MAX;		/* the mistake: 2.29's cap on every release */
#else
	cap = ncclGetVersion && ncclGetVersion(&v) == EMU_NCCL_SUCCESS && v >= 22900 ? FLT_MAX
										  : 3.6e9f;
#endif
}

static __attribute__((unused)) int force(float **tbl, int numAlgo, int algo, int proto)
{
	float *t = (float *)(void *)tbl;

	if (algo >= numAlgo || !(t[ARM(algo, proto)] >= 0.0f && t[ARM(algo, proto)] < cap))
		return 0;
	t[ARM(algo, proto)] = 0.0f;
	return 1;
}

#if defined(FIX_NOSYM)

int fixture_nothing_here;

#else

static __attribute__((unused)) uint64_t n_calls;		/* FIX_BAD_COUNTER: process-wide */
static __attribute__((unused)) int prof_seen;			/* FIX_BAD_PROF */

static int get_coll_info(void *ctx, int coll, size_t nbytes, int pipeops, float **tbl,
			 int numAlgo, int numProto, int regBuff, int *nChannels)
{
	(void)ctx, (void)coll, (void)nbytes, (void)pipeops, (void)numProto, (void)regBuff;
	(void)nChannels, (void)tbl, (void)numAlgo;
#if defined(FIX_GOOD)
	force(tbl, numAlgo, EMU_ALGO_RING, EMU_PROTO_SIMPLE);
#elif defined(FIX_BAD_REGBUFF)
	if (!(regBuff && force(tbl, numAlgo, EMU_ALGO_TREE, EMU_PROTO_SIMPLE)))
		force(tbl, numAlgo, EMU_ALGO_RING, EMU_PROTO_SIMPLE);
#elif defined(FIX_BAD_COUNTER)
	if (__atomic_fetch_add(&n_calls, 1, __ATOMIC_RELAXED) % 7 == 0)
		force(tbl, numAlgo, EMU_ALGO_RING, EMU_PROTO_LL);
	else
		force(tbl, numAlgo, EMU_ALGO_RING, EMU_PROTO_SIMPLE);
#elif defined(FIX_BAD_PROF)
	force(tbl, numAlgo, EMU_ALGO_RING,
	      __atomic_load_n(&prof_seen, __ATOMIC_RELAXED) ? EMU_PROTO_LL : EMU_PROTO_SIMPLE);
#elif defined(FIX_BAD_CAP)
	force(tbl, numAlgo, EMU_ALGO_RING, EMU_PROTO_SIMPLE);
#endif
	return 0;
}

static int tuner_init5(void **ctx, uint64_t id, size_t nr, size_t nn, emu_logger_t log,
		       struct emu_nvl_domain_info *nvl, struct emu_tuner_constants *k)
{
	(void)id, (void)nr, (void)nn, (void)log, (void)nvl, (void)k;
	learn_cap();
	*ctx = &ctx_token;
	return 0;
}

static int tuner_fini(void *ctx)
{
	return ctx == &ctx_token ? 0 : 3;
}

const struct emu_tuner_v5 ncclTunerPlugin_v5 = { "fixture", tuner_init5, get_coll_info,
						  tuner_fini };

#if defined(FIX_GOOD)
static int tuner_init2(size_t nr, size_t nn, emu_logger_t log, void **ctx)
{
	(void)nr, (void)nn, (void)log;
	learn_cap();
	*ctx = &ctx_token;
	return 0;
}

static int gci3(void *ctx, int coll, size_t nbytes, int pipeops, float **tbl, int na, int np,
		int *nch)
{
	return get_coll_info(ctx, coll, nbytes, pipeops, tbl, na, np, 0, nch);
}

static int gci2(void *ctx, int coll, size_t nbytes, int cn, int nvls, int pipeops, int *algo,
		int *proto, int *nch)
{
	(void)ctx, (void)coll, (void)nbytes, (void)cn, (void)nvls, (void)pipeops, (void)nch;
	*algo = EMU_ALGO_RING;
	*proto = EMU_PROTO_SIMPLE;
	return 0;
}

static int chunk6(void *ctx, int coll, size_t nbytes, int algo, int proto, int nch, size_t *cs)
{
	(void)ctx, (void)coll, (void)nbytes, (void)algo, (void)proto, (void)nch;
	if (*cs < 65536)
		*cs = 65536;
	return 0;
}

const struct emu_tuner_v2 ncclTunerPlugin_v2 = { "fixture", tuner_init2, gci2, tuner_fini };
const struct emu_tuner_v3 ncclTunerPlugin_v3 = { "fixture", tuner_init2, gci3, tuner_fini };
const struct emu_tuner_v4 ncclTunerPlugin_v4 = { "fixture", tuner_init2, get_coll_info,
						  tuner_fini };
const struct emu_tuner_v6 ncclTunerPlugin_v6 = { "fixture", tuner_init5, get_coll_info,
						  tuner_fini, chunk6 };
#endif

#if defined(FIX_GOOD) || defined(FIX_BAD_PROF)

/* A refcounting profiler: Coll records outlive their stopEvent until the
 * last KernelCh child stops; every handle is checked by its tag, and every
 * Coll must name a live Group record as its group (v4: parentObj; v5+:
 * coll.parentGroup), so an emulator that wires v4 like v5 fails here. Any
 * bad handle makes finalize fail, which the emulator reports as UNSAFE. */
#define TAG_GROUP 0x6772707367727073ULL
#define TAG_COLL 0xc011c011c011c011ULL
#define TAG_KCH 0x4b43484b43484b43ULL
#define TAG_DEAD 0xdeaddeaddeaddeadULL

struct rec {
	uint64_t tag;
	int refs;
	struct rec *parent;
};

static int bad_handles;

static void bad(void)
{
	__atomic_add_fetch(&bad_handles, 1, __ATOMIC_RELAXED);
}

static void put(struct rec *r)
{
	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		r->tag = TAG_DEAD;
		free(r);
	}
}

static int prof_init5(void **ctx, uint64_t id, int *mask, const char *name, int nn, int nr,
		      int rank, emu_logger_t log)
{
	(void)id, (void)name, (void)nn, (void)nr, (void)rank, (void)log;
	__atomic_store_n(&prof_seen, 1, __ATOMIC_RELAXED);
	*mask = EMU_PROF_COLL | EMU_PROF_KERNEL_CH;
	*ctx = &ctx_token;
	return 0;
}

/* Every version's startEvent, from the fields it read out of its own
 * descriptor: `group` is the Coll's Group handle wherever that version
 * keeps it, `parent` the parentObj. */
static int start_any(void *ctx, void **h, uint64_t type, void *parent, void *group,
		     unsigned nch)
{
	struct rec *r;

	*h = NULL;
	if (ctx != &ctx_token)
		bad();
	if (type != EMU_PROF_GROUP && type != EMU_PROF_COLL && type != EMU_PROF_KERNEL_CH)
		return 0;
	r = malloc(sizeof(*r));
	if (!r)
		return 0;
	r->parent = NULL;
	r->refs = 1;
	if (type == EMU_PROF_GROUP) {
		r->tag = TAG_GROUP;
	} else if (type == EMU_PROF_COLL) {
		const struct rec *g = group;

		if (!g || g->tag != TAG_GROUP)
			bad();
		r->tag = TAG_COLL;
		r->refs = 1 + (int)nch;
	} else {
		struct rec *p = parent;

		r->tag = TAG_KCH;
		if (p && p->tag != TAG_COLL)
			bad();
		r->parent = p && p->tag == TAG_COLL ? p : NULL;
	}
	*h = r;
	return 0;
}

static int prof_start5(void *ctx, void **h, struct emu_prof_descr_v5 *d)
{
	int coll = d->type == EMU_PROF_COLL;

	return start_any(ctx, h, d->type, d->parentObj, coll ? d->coll.parentGroup : NULL,
			 coll ? d->coll.nChannels : 0);
}

static int prof_stop(void *h)
{
	struct rec *r = h;

	if (r->tag != TAG_GROUP && r->tag != TAG_COLL && r->tag != TAG_KCH) {
		bad();
		return 0;
	}
	if (r->tag == TAG_KCH && r->parent)
		put(r->parent);
	put(r);
	return 0;
}

static int record_any(void *h, int state, int kch_stop)
{
	struct rec *r = h;

	if (r->tag != TAG_KCH || state != kch_stop)
		bad();
	return 0;
}

static int prof_record5(void *h, int state, union emu_prof_state_v5 *a)
{
	(void)a;
	return record_any(h, state, EMU_PROF_V5_STATE_KERNEL_CH_STOP);
}

static int prof_fini(void *ctx)
{
	return ctx == &ctx_token && !__atomic_load_n(&bad_handles, __ATOMIC_RELAXED) ? 0 : 3;
}

const struct emu_profiler_v5 ncclProfiler_v5 = { "fixture", prof_init5, prof_start5, prof_stop,
						 prof_record5, prof_fini };

#if defined(FIX_GOOD)
static int prof_init1(void **ctx, int *mask)
{
	*mask = 0;
	*ctx = &ctx_token;
	return 0;
}

static int prof_init4(void **ctx, int *mask, const char *name, uint64_t id, int nn, int nr,
		      int rank, emu_logger_t log)
{
	return prof_init5(ctx, id, mask, name, nn, nr, rank, log);
}

/* v4: a one-byte type, and the Coll's Group is its parentObj */
static int prof_start4(void *ctx, void **h, struct emu_prof_descr_v4 *d)
{
	int coll = d->type == EMU_PROF_COLL;

	return start_any(ctx, h, d->type, d->parentObj, coll ? d->parentObj : NULL,
			 coll ? d->coll.nChannels : 0);
}

static int prof_record4(void *h, int state, union emu_prof_state_v4 *a)
{
	(void)a;
	return record_any(h, state, EMU_PROF_V4_STATE_KERNEL_CH_STOP);
}

static int prof_start6(void *ctx, void **h, struct emu_prof_descr_v6 *d)
{
	int coll = d->type == EMU_PROF_COLL;

	return start_any(ctx, h, d->type, d->parentObj, coll ? d->coll.parentGroup : NULL,
			 coll ? d->coll.nChannels : 0);
}

static int prof_record6(void *h, int state, union emu_prof_state_v6 *a)
{
	(void)a;
	return record_any(h, state, EMU_PROF_V6_STATE_KERNEL_CH_STOP);
}

const struct emu_profiler_v1 ncclProfiler_v1 = { "fixture", prof_init1, NULL, NULL, NULL,
						 prof_fini };
const struct emu_profiler_v1 ncclProfiler_v2 = { "fixture", prof_init1, NULL, NULL, NULL,
						 prof_fini };
const struct emu_profiler_v1 ncclProfiler_v3 = { "fixture", prof_init1, NULL, NULL, NULL,
						 prof_fini };
const struct emu_profiler_v4 ncclProfiler_v4 = { "fixture", prof_init4, prof_start4, prof_stop,
						 prof_record4, prof_fini };
const struct emu_profiler_v6 ncclProfiler_v6 = { "fixture", prof_init5, prof_start6, prof_stop,
						 prof_record6, prof_fini };
#endif
#endif
#endif
