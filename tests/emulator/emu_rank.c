/*
 * emu_rank.c - one emulated rank process: NCCL as the plugin sees it.
 *
 * What NCCL does and this file reproduces (nccl_abi.h names the NCCL sources):
 * - Loading: the tuner loader and the profiler loader each dlopen() the same
 *   absolute path with RTLD_NOW|RTLD_LOCAL and probe their symbols newest
 *   first, in the emulated release's order. A failed open or probe is
 *   silent: the process continues without that plugin (recorded).
 * - Per communicator, on the thread that creates it: profiler init, then
 *   tuner init (commId = hash of the unique id; for a split,
 *   hash(parent, splitCount, color)). A tuner init error fails the comm.
 * - ncclGetVersion(), exported by the nccl-emu binary as libnccl exports
 *   it, answers the emulated release's code (22907 for 2.29), so that a
 *   plugin can tell 2.28 from 2.29 (both load tuner v5).
 * - Per collective: the process-global event mask is read at API time
 *   (before the tuner), GroupApi/CollApi events (v5+), then getCollInfo on a
 *   fresh contiguous float[numAlgo][3] cost table, NCCL's argmin over
 *   entries >= 0 and below the release's cap (3.6e9 up to 2.28, FLT_MAX
 *   from 2.29; ties to the lowest index; none -> the collective fails),
 *   v6 getChunkSize, then KernelLaunch / Group / Coll start+stop on the
 *   launch thread, and one KernelCh start/KernelChStop/
 *   stop per channel from the comm's proxy thread, `lag` collectives behind.
 *   Each event is built once as the newest (v6) descriptor and laid out
 *   for the loaded profiler version, as NCCL 2.28+'s adapters do: its own
 *   layout, in a heap block of exactly that version's size, zeroed as NCCL
 *   zeroes its stack descriptor, and freed as soon as startEvent returns,
 *   so that valgrind or ASan flag a plugin that reads past the end (v4 is
 *   104 bytes and has no coll.parentGroup) or keeps the pointer.
 * - Teardown: tuner finalize, then the proxy drains (late KernelCh events
 *   after the tuner is gone), then profiler finalize; each loader dlcloses.
 * - v2 tuners go through NCCL's adapter (support flags derived from the
 *   table, the returned pair forced to 0.0 unless IGNORE).
 *
 * Every launched decision (algo, proto, nChannels, chunk) is folded into a
 * per-comm running hash; rank-local inputs (regBuff, extra simulate calls,
 * profiler presence, thread layout, allocation failure, env) are injected as
 * the scenario asks, and so are cost tables with entries at or above 3.6e9
 * (the same on every rank). Nothing here sleeps: threads meet on condvars.
 */
#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/emulator/emu.h"

/* Probe lists, numAlgo and caps from doc/nccl-abi.md ("Loading", "Tuner
 * calls"); codes are ncclGetVersion()'s (major * 10000 + minor * 100 +
 * patch) of the patch releases whose sources it cites. */
const struct emu_version emu_versions[] = {
	{ "2.21", 22105, { 2 }, { 0 }, 6, EMU_CAP_228 },
	{ "2.22", 22203, { 3, 2 }, { 0 }, 6, EMU_CAP_228 },
	{ "2.24", 22403, { 4, 3, 2 }, { 2, 1 }, 7, EMU_CAP_228 },
	{ "2.27", 22707, { 4, 3, 2 }, { 4, 3, 2, 1 }, 7, EMU_CAP_228 },
	{ "2.28", 22809, { 5, 4, 3, 2 }, { 5, 4, 3, 2, 1 }, 7, EMU_CAP_228 },
	{ "2.29", 22907, { 5, 4, 3, 2 }, { 6, 5, 4, 3, 2, 1 }, 7, FLT_MAX },
	{ "2.30", 23007, { 6, 5, 4, 3, 2 }, { 6, 5, 4, 3, 2, 1 }, 7, FLT_MAX },
};
const unsigned emu_nversions = sizeof(emu_versions) / sizeof(emu_versions[0]);

const struct emu_version *emu_version_find(const char *name)
{
	for (unsigned i = 0; i < emu_nversions; i++)
		if (!strcmp(emu_versions[i].name, name))
			return &emu_versions[i];
	return NULL;
}

static const char *const func_str[EMU_NUM_FUNCS] = {
	"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"
};
static const char *const algo_str[EMU_NUM_ALGOS] = {
	"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"
};
static const char *const proto_str[EMU_NUM_PROTOS] = { "LL", "LL128", "SIMPLE" };

/* ---- layout: ranks, nodes, communicators ---- */

static unsigned comm_color(unsigned kind, unsigned r, unsigned n)
{
	switch (kind) {
	case 2:
		return r % 2;
	case 3:
		return r < n / 2 ? 0 : 1;
	default:
		return 0;
	}
}

static uint64_t comm_id_of(uint64_t seed, unsigned kind, unsigned color)
{
	/* seed mixed first: seed ^ constant would make seed 2's world the
	 * commId of seed 1's second world (commIds must differ across jobs) */
	uint64_t world = emu_mix64(emu_mix64(seed) ^ 0xc0ffee01ULL);

	switch (kind) {
	case 0:
		return world;
	case 1:
		return emu_mix64(emu_mix64(seed) ^ 0xc0ffee02ULL);
	default:	/* ncclCommSplit: hash(parent hash, splitCount, color) */
		return emu_mix64(emu_mix64(world ^ (kind - 1)) ^ (color + 1));
	}
}

/* nranks, nnodes and r's rank in the comm (kind, color of r). */
static void comm_shape(unsigned kind, unsigned r, unsigned n, unsigned rpn, unsigned *nranks,
		       unsigned *nnodes, unsigned *crank)
{
	unsigned color = comm_color(kind, r, n), last_node = ~0u;

	*nranks = *nnodes = *crank = 0;
	for (unsigned q = 0; q < n; q++) {
		if (comm_color(kind, q, n) != color)
			continue;
		if (q == r)
			*crank = *nranks;
		(*nranks)++;
		if (q / rpn != last_node) {	/* members are sorted: nodes ascend */
			(*nnodes)++;
			last_node = q / rpn;
		}
	}
}

unsigned emu_layout_shapes(unsigned n, unsigned rpn, struct emu_shape *out, unsigned max)
{
	unsigned k = 0;

	for (unsigned kind = 0; kind < EMU_NCOMM_KINDS; kind++) {
		for (unsigned r = 0; r < n; r++) {
			unsigned nr, nn, cr, j;

			comm_shape(kind, r, n, rpn, &nr, &nn, &cr);
			for (j = 0; j < k; j++)
				if (out[j].nranks == nr && out[j].nnodes == nn)
					break;
			if (j == k && k < max)
				out[k++] = (struct emu_shape){ nr, nn };
		}
	}
	return k;
}

/* ---- process and communicator state ---- */

struct emu_proc;

struct proxy_op {
	void *coll;		/* the Coll handle (may be NULL) */
	uint8_t nch;
	uint64_t t0, dur;
};

#define PROXY_CAP_EXTRA 64

struct emu_comm {
	struct emu_proc *p;
	unsigned grank, kind, color, crank, nranks, nnodes;
	uint64_t comm_id;
	char name[32];
	const float *costs;		/* [coll][size][arm]: what NCCL hands the tuner */
	const float *run_costs;		/* the same before EMU_A_HUGE: KernelCh durations */
	void *tctx, *pctx;
	int tuner_ok, prof_ok;
	uint64_t seq[EMU_NUM_FUNCS];
	uint64_t rng;			/* rank-local randomness */
	uint64_t gpu_clock;
	struct emu_result res;
	/* proxy thread */
	int has_proxy;
	pthread_t proxy;
	pthread_mutex_t mu;
	pthread_cond_t cv_prod, cv_cons;
	struct proxy_op *ring;
	unsigned cap;
	uint64_t head, tail;
	int flush, tuner_gone;
	/* driver */
	pthread_t thr;
	int inited;
	struct emu_comm *parent;	/* split: created after the parent */
};

struct emu_proc {
	const struct emu_cfg *cfg;
	unsigned proc, nranks;
	void *th, *ph;
	int tver, pver, same_handle;
	const void *tsym, *psym;
	char tname[32];
	int mask;			/* ncclProfilerEventMask: process-global */
	struct emu_comm *comms;
	unsigned ncomms;
	float *costs_by_nodes[65], *huge_by_nodes[65];
	pthread_mutex_t init_mu;
	pthread_cond_t init_cv;
	int alloc_victim;		/* this process fails allocations in comm inits */
	uint32_t allow;			/* the allow-list of the table it was given (0: none) */
};

static int is_victim(const struct emu_proc *p, unsigned victim)
{
	unsigned v = victim % p->nranks;
	unsigned rpp = p->cfg->ranks_per_proc;

	return v / rpp == p->proc;
}

/* ---- logger ---- */

static __thread struct emu_comm *log_comm;
static int g_verbose;

static void emu_logger(int level, unsigned long flags, const char *file, int line,
		       const char *fmt, ...)
{
	struct emu_comm *c = log_comm;
	char buf[1024];	/* a spool path of PATH_MAX is not cut off (it was 255 bytes) */
	va_list ap;

	(void)flags, (void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (g_verbose > 1 || (g_verbose && level == EMU_LOG_WARN))
		fprintf(stderr, "  [rank %u %s] %s\n", c ? c->grank : 0, c ? c->name : "-", buf);
	if (!c)
		return;
	c->res.log_lines++;
	if (strcasestr(buf, "digest"))
		c->res.log_digest++;
	if (level == EMU_LOG_WARN) {
		c->res.log_warn++;
		snprintf(c->res.msg, sizeof(c->res.msg), "%.159s", buf);
	}
}

/* ---- ncclGetVersion ---- */

/* The emulated release's code in a rank process; 0 in the parent. */
static int emu_nccl_code;

/* libnccl's export (ncclResult_t ncclGetVersion(int *version); NULL ->
 * ncclInvalidArgument), exported from this binary
 * (-Wl,--export-dynamic-symbol=ncclGetVersion, Makefile.inc) so that a
 * plugin looking it up among the loaded objects finds it as it would find
 * libnccl's. Calls during a comm's inits are counted for the report. */
int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
	if (log_comm)
		log_comm->res.ver_calls++;
	if (!version || !emu_nccl_code)
		return EMU_NCCL_INVALID_ARGUMENT;
	*version = emu_nccl_code;
	return EMU_NCCL_SUCCESS;
}

/* ---- loading (tuner loader and profiler loader, as NCCL) ---- */

static void load_plugins(struct emu_proc *p, int skip_profiler)
{
	const struct emu_cfg *cfg = p->cfg;
	char sym[40];

	p->tver = p->pver = 0;
	if (!cfg->plugin)
		return;
	p->th = dlopen(cfg->plugin, RTLD_NOW | RTLD_LOCAL);
	if (p->th) {
		for (const int *v = cfg->ver->tuner; *v; v++) {
			snprintf(sym, sizeof(sym), "ncclTunerPlugin_v%d", *v);
			p->tsym = dlsym(p->th, sym);
			if (p->tsym) {
				p->tver = *v;
				break;
			}
		}
		if (!p->tver) {		/* NCCL: "using internal tuner instead" */
			dlclose(p->th);
			p->th = NULL;
		} else {
			const char *name = *(const char *const *)p->tsym;

			snprintf(p->tname, sizeof(p->tname), "%s", name ? name : "(null)");
		}
	}
	if (skip_profiler || !cfg->ver->prof[0])
		return;
	p->ph = dlopen(cfg->plugin, RTLD_NOW | RTLD_LOCAL);
	if (!p->ph)
		return;
	for (const int *v = cfg->ver->prof; *v; v++) {
		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", *v);
		p->psym = dlsym(p->ph, sym);
		if (p->psym) {
			p->pver = *v;
			break;
		}
	}
	if (!p->pver) {
		dlclose(p->ph);
		p->ph = NULL;
	}
	p->same_handle = p->th && p->ph && p->th == p->ph;
}

static void unload_plugins(struct emu_proc *p)
{
	if (p->th)
		dlclose(p->th);
	if (p->ph)
		dlclose(p->ph);
}

/* ---- tuner calls ---- */

#define CANARY 12345.5f

static uint64_t default_chunk(int proto)
{
	return proto == EMU_PROTO_SIMPLE ? 131072 : proto == EMU_PROTO_LL128 ? 122880 : 16384;
}

static int v2_adapter(struct emu_comm *c, int coll, size_t nbytes, int pipeops, float *tbl,
		      int *nch)
{
	const struct emu_tuner_v2 *t = c->p->tsym;
	int algo = -1, proto = -1, rc;
	int nvls = tbl[EMU_ALGO_NVLS * 3 + EMU_PROTO_SIMPLE] != EMU_ALGO_PROTO_IGNORE ||
		   tbl[EMU_ALGO_NVLS_TREE * 3 + EMU_PROTO_SIMPLE] != EMU_ALGO_PROTO_IGNORE;
	int collnet = tbl[EMU_ALGO_COLLNET_CHAIN * 3 + EMU_PROTO_SIMPLE] != EMU_ALGO_PROTO_IGNORE;

	rc = t->getCollInfo(c->tctx, coll, nbytes, collnet, nvls, pipeops, &algo, &proto, nch);
	if (rc)
		return rc;
	if (algo >= 0 && algo < c->p->cfg->ver->num_algo && proto >= 0 && proto < EMU_NUM_PROTOS &&
	    tbl[algo * 3 + proto] != EMU_ALGO_PROTO_IGNORE)
		tbl[algo * 3 + proto] = 0.0f;
	return 0;
}

/*
 * The stateless arm restriction, written here independently of the plugin
 * (doc/design.md "Contexts and arms"): forcing an algorithm whose first use
 * sets up connections and GPU buffers (CollNet Direct, CollNet Chain, NVLS,
 * NVLS_TREE) is fine only when AUTO picks the same family for this call
 * (NVLS and NVLS_TREE are one family: their buffers are shared; each CollNet
 * is its own) or the table's allow-list names the arm. Tree, Ring and PAT
 * are always fine.
 */
static int first_use_violation(int algo, int auto_algo, int arm, uint32_t allow)
{
	int fam = algo == EMU_ALGO_NVLS_TREE ? EMU_ALGO_NVLS : algo;
	int afam = auto_algo == EMU_ALGO_NVLS_TREE ? EMU_ALGO_NVLS : auto_algo;

	if (algo == EMU_ALGO_TREE || algo == EMU_ALGO_RING || algo == EMU_ALGO_PAT)
		return 0;
	return fam != afam && !(allow >> arm & 1u);
}

/* One getCollInfo as NCCL does it; 0 and the decision, or -1 (the
 * collective fails). `launched` = 0 for an ncclGroupSimulateEnd call. */
static int decide(struct emu_comm *c, int coll, unsigned si, int pipeops, int regbuff,
		  int *arm_out, int *nch_out, uint64_t *chunk_out, int launched)
{
	struct emu_proc *p = c->p;
	int na = p->cfg->ver->num_algo, n = na * EMU_NUM_PROTOS;
	float cap = p->cfg->ver->cap;
	float tbl[EMU_NUM_ARMS + 4], before[EMU_NUM_ARMS];
	const float *src = c->costs + ((size_t)coll * EMU_NSIZES + si) * EMU_NUM_ARMS;
	size_t nbytes = emu_size(si);
	int nch = 0, rc = 0, arm, auto_arm;
	uint64_t chunk = 0;

	/* numAlgo 6 (2.21/2.22): no PAT row */
	memcpy(tbl, src, (size_t)n * sizeof(float));
	for (int i = n; i < EMU_NUM_ARMS + 4; i++)
		tbl[i] = CANARY;
	memcpy(before, tbl, (size_t)n * sizeof(float));
	if (p->tver && c->tuner_ok) {
		switch (p->tver) {
		case 6:
		case 5:
			rc = ((const struct emu_tuner_v5 *)p->tsym)->getCollInfo(
				c->tctx, coll, nbytes, pipeops, (float **)(void *)tbl, na,
				EMU_NUM_PROTOS, regbuff, &nch);
			break;
		case 4:
			rc = ((const struct emu_tuner_v4 *)p->tsym)->getCollInfo(
				c->tctx, coll, nbytes, pipeops, (float **)(void *)tbl, na,
				EMU_NUM_PROTOS, regbuff, &nch);
			break;
		case 3:
			rc = ((const struct emu_tuner_v3 *)p->tsym)->getCollInfo(
				c->tctx, coll, nbytes, pipeops, (float **)(void *)tbl, na,
				EMU_NUM_PROTOS, &nch);
			break;
		case 2:
			rc = v2_adapter(c, coll, nbytes, pipeops, tbl, &nch);
			break;
		}
	}
	if (rc) {
		c->res.err_rc++;
		return -1;
	}
	for (int i = n; i < EMU_NUM_ARMS + 4; i++)
		if (tbl[i] != CANARY)
			c->res.err_oob++;
	for (int i = 0; i < n; i++) {
		if (tbl[i] != tbl[i])
			c->res.err_nan++;
		/* revived: an entry NCCL marked unsupported (< 0) no longer
		 * negative, or one its argmin would never pick (at or above this
		 * release's cap) made pickable. A v2 plugin writes nothing: NCCL's
		 * adapter forces the pair it returns, as NCCL does for any entry
		 * but -1, so for v2 only the first part applies. */
		if ((before[i] < 0.0f && !(tbl[i] < 0.0f)) ||
		    (p->tver >= 3 && !emu_nccl_usable(before[i], cap) &&
		     emu_nccl_usable(tbl[i], cap)))
			c->res.err_revived++;
	}
	if (nch < 0 || nch > EMU_MAXCHANNELS)
		c->res.err_nch++;
	arm = emu_nccl_argmin(tbl, n, cap);
	auto_arm = emu_nccl_argmin(before, n, cap);
	if (arm < 0) {		/* "no algorithm/protocol available" */
		if (auto_arm < 0)
			c->res.nccl_none++;	/* NCCL's own table: not the plugin */
		else
			c->res.err_empty++;	/* the plugin left nothing usable */
		return -1;
	}
	if (launched && arm != auto_arm)
		c->res.overrides++;
	if (launched && arm != auto_arm && first_use_violation(arm / 3, auto_arm / 3, arm, p->allow))
		c->res.err_firstuse++;
	if (launched && before[arm] >= EMU_CAP_228) {
		if (tbl[arm] != before[arm])
			c->res.huge_forced++;
		else
			c->res.auto_huge++;
	}
	if (p->tver == 6 && c->tuner_ok) {
		const struct emu_tuner_v6 *t = p->tsym;
		size_t cs = default_chunk(arm % 3);

		if (t->getChunkSize &&
		    t->getChunkSize(c->tctx, coll, nbytes, arm / 3, arm % 3, nch ? nch : 1, &cs))
			c->res.err_rc++;
		chunk = cs;
	}
	*arm_out = arm;
	*nch_out = nch;
	*chunk_out = chunk;
	return 0;
}

/* ---- profiler events ---- */

static void *proxy_main(void *arg);

static void proxy_push(struct emu_comm *c, const struct proxy_op *op)
{
	pthread_mutex_lock(&c->mu);
	while (c->head - c->tail == c->cap)
		pthread_cond_wait(&c->cv_prod, &c->mu);
	c->ring[c->head % c->cap] = *op;
	c->head++;
	if (c->head - c->tail > c->p->cfg->lag)
		pthread_cond_signal(&c->cv_cons);
	pthread_mutex_unlock(&c->mu);
}

/* ---- profiler calls, in the loaded version's layout ---- */

/* The emulator's own view of an event: a zeroed newest descriptor (every
 * byte, not just the first union member an initializer would clear). */
static void ev_init(struct emu_prof_descr_v6 *e, uint64_t type, void *parent)
{
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->parentObj = parent;
}

static void *xmalloc0(size_t n)
{
	void *q = malloc(n);

	if (!q) {
		fprintf(stderr, "emu: out of memory\n");
		exit(3);
	}
	return memset(q, 0, n);
}

/* Lay e (the newest descriptor, what NCCL knows about the event) out as a
 * v4 descriptor, the way NCCL 2.27 fills its own: the Coll's Group handle
 * goes to parentObj, and only the members of the event's type are set.
 * 0 = NCCL would not send this event to a v4 plugin. */
static int layout_v4(struct emu_prof_descr_v4 *d, const struct emu_prof_descr_v6 *e)
{
	if (e->type & ~(uint64_t)EMU_PROF_V4_TYPES)
		return 0;		/* API / copy-engine events: v5+ only */
	d->type = (uint8_t)e->type;
	d->parentObj = e->parentObj;
	d->rank = e->rank;
	switch (e->type) {
	case EMU_PROF_GROUP:
		break;
	case EMU_PROF_COLL:
		d->parentObj = e->coll.parentGroup;
		d->coll.seqNumber = e->coll.seqNumber;
		d->coll.func = e->coll.func;
		d->coll.sendBuff = e->coll.sendBuff;
		d->coll.recvBuff = e->coll.recvBuff;
		d->coll.count = e->coll.count;
		d->coll.root = e->coll.root;
		d->coll.datatype = e->coll.datatype;
		d->coll.nChannels = e->coll.nChannels;
		d->coll.nWarps = e->coll.nWarps;
		d->coll.algo = e->coll.algo;
		d->coll.proto = e->coll.proto;
		break;
	case EMU_PROF_KERNEL_CH:
		d->kernelCh.channelId = e->kernelCh.channelId;
		d->kernelCh.pTimer = e->kernelCh.pTimer;
		break;
	default:		/* not emulated */
		return 0;
	}
	return 1;
}

/* startEvent with e laid out for the loaded version; the handle or NULL. */
static void *prof_start(struct emu_comm *c, const struct emu_prof_descr_v6 *e)
{
	struct emu_proc *p = c->p;
	void *h = NULL;

	switch (p->pver) {
	case 4: {
		struct emu_prof_descr_v4 *d = xmalloc0(sizeof(*d));

		if (layout_v4(d, e))
			((const struct emu_profiler_v4 *)p->psym)->startEvent(c->pctx, &h, d);
		free(d);
		break;
	}
	case 5: {
		struct emu_prof_descr_v5 *d = xmalloc0(sizeof(*d));

		/* every v5 member is where v6 has it (nccl_abi.h asserts the
		 * offsets), and the emulator sends no v6-only type */
		if (!(e->type & ~(uint64_t)EMU_PROF_V5_TYPES)) {
			memcpy(d, e, sizeof(*d));
			((const struct emu_profiler_v5 *)p->psym)->startEvent(c->pctx, &h, d);
		}
		free(d);
		break;
	}
	case 6: {
		struct emu_prof_descr_v6 *d = xmalloc0(sizeof(*d));

		memcpy(d, e, sizeof(*d));
		((const struct emu_profiler_v6 *)p->psym)->startEvent(c->pctx, &h, d);
		free(d);
		break;
	}
	}
	return h;
}

/* recordEventState(KernelChStop) with the version's own state arguments */
static void prof_kch_stop(struct emu_comm *c, void *h, uint64_t ptimer)
{
	struct emu_proc *p = c->p;

	switch (p->pver) {
	case 4: {
		union emu_prof_state_v4 *a = xmalloc0(sizeof(*a));

		a->kernelCh.pTimer = ptimer;
		((const struct emu_profiler_v4 *)p->psym)->recordEventState(
			h, EMU_PROF_V4_STATE_KERNEL_CH_STOP, a);
		free(a);
		break;
	}
	case 5: {
		union emu_prof_state_v5 *a = xmalloc0(sizeof(*a));

		a->kernelCh.pTimer = ptimer;
		((const struct emu_profiler_v5 *)p->psym)->recordEventState(
			h, EMU_PROF_V5_STATE_KERNEL_CH_STOP, a);
		free(a);
		break;
	}
	case 6: {
		union emu_prof_state_v6 *a = xmalloc0(sizeof(*a));

		a->kernelCh.pTimer = ptimer;
		((const struct emu_profiler_v6 *)p->psym)->recordEventState(
			h, EMU_PROF_V6_STATE_KERNEL_CH_STOP, a);
		free(a);
		break;
	}
	}
}

static void prof_stop(struct emu_comm *c, void *h)
{
	struct emu_proc *p = c->p;

	if (!h)
		return;
	if (p->pver == 4)
		((const struct emu_profiler_v4 *)p->psym)->stopEvent(h);
	else if (p->pver == 5)
		((const struct emu_profiler_v5 *)p->psym)->stopEvent(h);
	else if (p->pver == 6)
		((const struct emu_profiler_v6 *)p->psym)->stopEvent(h);
}

static int prof_finalize(struct emu_comm *c)
{
	struct emu_proc *p = c->p;

	switch (p->pver) {
	case 4:
		return ((const struct emu_profiler_v4 *)p->psym)->finalize(c->pctx);
	case 5:
		return ((const struct emu_profiler_v5 *)p->psym)->finalize(c->pctx);
	case 6:
		return ((const struct emu_profiler_v6 *)p->psym)->finalize(c->pctx);
	default:	/* v1..v3: init and finalize only */
		return ((const struct emu_profiler_v1 *)p->psym)->finalize(c->pctx);
	}
}

static void deliver_kernel_ch(struct emu_comm *c, const struct proxy_op *op)
{
	void *h[EMU_MAXCHANNELS];
	int late = __atomic_load_n(&c->tuner_gone, __ATOMIC_ACQUIRE);

	for (unsigned ch = 0; ch < op->nch; ch++) {
		uint64_t skew = (op->t0 >> 3) % 97 * ch;
		struct emu_prof_descr_v6 e;

		/* NCCL fills no rank for KernelCh; parentObj is the Coll
		 * handle, NULL when the plugin gave none */
		ev_init(&e, EMU_PROF_KERNEL_CH, op->coll);
		e.kernelCh.channelId = (uint8_t)ch;
		e.kernelCh.pTimer = op->t0 + skew;
		h[ch] = prof_start(c, &e);
	}
	for (unsigned ch = 0; ch < op->nch; ch++) {
		if (!h[ch])
			continue;
		prof_kch_stop(c, h[ch], op->t0 + op->dur + ch);
		prof_stop(c, h[ch]);
	}
	c->res.kch_events += op->nch;
	if (late)
		c->res.late_kch_events += op->nch;
}

static void *proxy_main(void *arg)
{
	struct emu_comm *c = arg;
	unsigned lag = c->p->cfg->lag;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct proxy_op op;

		while (!(c->head - c->tail > lag || (c->flush && c->head != c->tail) ||
			 (c->flush && c->head == c->tail)))
			pthread_cond_wait(&c->cv_cons, &c->mu);
		if (c->head == c->tail)
			break;		/* flushed and drained */
		op = c->ring[c->tail % c->cap];
		c->tail++;
		pthread_cond_signal(&c->cv_prod);
		pthread_mutex_unlock(&c->mu);
		deliver_kernel_ch(c, &op);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static unsigned sched_channels(int nch, size_t nbytes)
{
	unsigned n = nch > 0 ? (unsigned)nch : (unsigned)(nbytes >> 16);

	if (n < 1)
		n = 1;
	return n > 32 ? 32 : n;
}

static void fill_coll(struct emu_comm *c, int coll, size_t nbytes, int arm, unsigned nch,
		      const char **func, size_t *count, const char **dtype, uint64_t *seq)
{
	*func = func_str[coll];
	if (coll == 0 || coll == 2) {	/* rewritten to bytes */
		*dtype = "ncclInt8";
		*count = coll == 2 ? nbytes / c->nranks : nbytes;
	} else {
		*dtype = "ncclFloat32";
		*count = coll == 3 ? nbytes / c->nranks / 4 : nbytes / 4;
	}
	*seq = c->seq[coll]++;
	(void)arm, (void)nch;
}

/* ---- one collective ---- */

static void fold(struct emu_comm *c, int arm, int nch, uint64_t chunk)
{
	uint64_t v = (uint64_t)(arm / 3) | (uint64_t)(arm % 3) << 8 | (uint64_t)(nch & 0xffff) << 16;
	uint64_t n;

	c->res.hash_ac = emu_mix64(c->res.hash_ac ^ v);
	c->res.hash = emu_mix64(emu_mix64(c->res.hash ^ v) ^ chunk);
	n = ++c->res.count;
	if (!(n & (n - 1))) {
		unsigned k = (unsigned)__builtin_ctzll(n);

		if (k < EMU_NCKPT)
			c->res.ckpt[k] = c->res.hash;
	}
	c->res.arm_hist[arm]++;
	if (nch)
		c->res.nch_set++;
}

static void gen_call(const struct emu_comm *c, uint64_t i, int *coll, unsigned *si, int *pipeops)
{
	uint64_t r = emu_mix64(emu_mix64(c->p->cfg->seed ^ c->comm_id) ^ i);
	const struct emu_cfg *cfg = c->p->cfg;

	if (cfg->nwork) {	/* --workload: a fixed cycle of contexts */
		*coll = cfg->work[i % cfg->nwork].coll;
		*si = cfg->work[i % cfg->nwork].si;
		*pipeops = 1;
		return;
	}
	*coll = (r & 7) < 5 ? (int)(r & 7) : 4;		/* allreduce-heavy */
	*si = (unsigned)((r >> 8) % EMU_NSIZES);
	*pipeops = ((r >> 40) & 15) == 0 ? 2 : 1;
}

static void launch(struct emu_comm *c, uint64_t i)
{
	struct emu_proc *p = c->p;
	const struct emu_cfg *cfg = p->cfg;
	int coll, pipeops, regbuff = 0, arm, nch;
	unsigned si;
	uint64_t chunk;
	int mask = 0, want_coll, want_kch, want_group, want_capi, want_gapi, want_kl;
	void *h_gapi = NULL, *h_capi = NULL, *h_group = NULL, *h_coll = NULL, *h_kl = NULL;
	struct emu_prof_descr_v6 e;
	size_t nbytes;

	gen_call(c, i, &coll, &si, &pipeops);
	nbytes = emu_size(si);
	if (cfg->asym & EMU_A_REGBUFF)
		regbuff = (int)(emu_rand(&c->rng) & 1);
	if ((cfg->asym & EMU_A_SIMULATE) && c->grank == EMU_VICTIM_SIMULATE % p->nranks &&
	    emu_rand(&c->rng) % 16 == 0) {
		/* ncclGroupSimulateEnd: the tuner runs, nothing is launched */
		int scoll = coll, spo = pipeops, sarm, snch;
		unsigned ssi = si;
		uint64_t sch;

		if (emu_rand(&c->rng) & 1) {
			scoll = (int)(emu_rand(&c->rng) % EMU_NUM_FUNCS);
			ssi = (unsigned)(emu_rand(&c->rng) % EMU_NSIZES);
		}
		decide(c, scoll, ssi, spo, regbuff, &sarm, &snch, &sch, 0);
		c->res.sim_calls++;
	}

	/* API time: the task inherits the mask before the tuner runs */
	if (c->prof_ok && p->pver >= 4)
		mask = __atomic_load_n(&p->mask, __ATOMIC_RELAXED);
	want_kch = mask & EMU_PROF_KERNEL_CH;
	want_coll = mask & (EMU_PROF_COLL | EMU_PROF_PROXY_OP | EMU_PROF_PROXY_STEP |
			    EMU_PROF_NET_PLUGIN | EMU_PROF_KERNEL_CH);
	want_group = want_coll || (mask & EMU_PROF_GROUP);
	want_kl = p->pver >= 5 && (mask & EMU_PROF_KERNEL_LAUNCH);
	want_capi = p->pver >= 5 && (want_coll || (mask & EMU_PROF_COLL_API));
	want_gapi = p->pver >= 5 && (want_capi || want_kl ||
				     (mask & (EMU_PROF_GROUP_API | EMU_PROF_P2P_API)));
	/* NCCL sets rank only in Coll (and P2p, proxy) descriptors */
	if (want_gapi) {
		ev_init(&e, EMU_PROF_GROUP_API, NULL);
		e.groupApi.groupDepth = 1;
		h_gapi = prof_start(c, &e);
	}
	if (want_capi) {
		uint64_t dummy;

		ev_init(&e, EMU_PROF_COLL_API, h_gapi);
		fill_coll(c, coll, nbytes, 0, 0, &e.collApi.func, &e.collApi.count,
			  &e.collApi.datatype, &dummy);
		c->seq[coll]--;		/* only fill_coll for the Coll event counts */
		e.collApi.stream = (void *)(uintptr_t)0x5000;
		h_capi = prof_start(c, &e);
		prof_stop(c, h_capi);
	}

	/* group end: the tuner */
	if (decide(c, coll, si, pipeops, regbuff, &arm, &nch, &chunk, 1)) {
		prof_stop(c, h_gapi);
		return;			/* the collective failed */
	}
	fold(c, arm, nch, chunk);
	if (cfg->nwork)
		c->res.work_arm[i % cfg->nwork][arm]++;

	if (want_kl) {
		ev_init(&e, EMU_PROF_KERNEL_LAUNCH, h_gapi);
		e.kernelLaunch.stream = (void *)(uintptr_t)0x5000;
		h_kl = prof_start(c, &e);
		prof_stop(c, h_kl);
	}
	if (want_group || want_coll) {
		unsigned sch = sched_channels(nch, nbytes);
		uint64_t dur;
		float cost = c->run_costs[((size_t)coll * EMU_NSIZES + si) * EMU_NUM_ARMS +
					  (arm < EMU_NUM_ARMS ? arm : 0)];

		if (cfg->measured == EMU_MEAS_SIM) {
			/* the simulated truth for the arm that ran; one sample per
			 * collective (same on every rank), plus rank-local skew */
			double us = emu_measured_us(coll, nbytes, c->nnodes, arm, cfg->seed,
						    emu_mix64(c->comm_id) + i);

			dur = (uint64_t)((us > 0 ? us : 1.0) * 1000.0) +
			      (emu_rand(&c->rng) & 1023);
		} else {
			dur = (uint64_t)((cost > 0 ? cost : 1.0f) * 1000.0f) +
			      (emu_rand(&c->rng) & 1023);
		}
		if (want_group) {
			ev_init(&e, EMU_PROF_GROUP, NULL);
			h_group = prof_start(c, &e);
		}
		if (want_coll) {
			/* v5+: parentObj is the CollApi handle and the Group's
			 * goes to coll.parentGroup; layout_v4() moves it to a v4
			 * descriptor's parentObj */
			ev_init(&e, EMU_PROF_COLL, h_capi);
			e.rank = (int)c->crank;
			fill_coll(c, coll, nbytes, arm, sch, &e.coll.func, &e.coll.count,
				  &e.coll.datatype, &e.coll.seqNumber);
			e.coll.sendBuff = (const void *)(uintptr_t)0x1000;
			e.coll.recvBuff = (void *)(uintptr_t)0x2000;
			e.coll.nChannels = (uint8_t)sch;
			e.coll.nWarps = 16;
			e.coll.algo = algo_str[arm / 3];
			e.coll.proto = proto_str[arm % 3];
			e.coll.parentGroup = h_group;
			h_coll = prof_start(c, &e);
			c->res.coll_events++;
		}
		if (want_kch && c->has_proxy) {
			struct proxy_op op = { h_coll, (uint8_t)sch, c->gpu_clock, dur };

			proxy_push(c, &op);
		}
		c->gpu_clock += dur + 100;
		/* enqueued: Coll and Group stop right away */
		prof_stop(c, h_coll);
		prof_stop(c, h_group);
	}
	prof_stop(c, h_gapi);
}

/* ---- init and teardown of one communicator ---- */

static void tuner_constants(struct emu_tuner_constants *k)
{
	static const double base[3] = { 6.6, 14.0, 8.4 };

	memset(k, 0, sizeof(*k));
	for (int a = 0; a < EMU_NUM_ALGOS; a++)
		for (int pr = 0; pr < EMU_NUM_PROTOS; pr++) {
			k->baseLatencies[a][pr] = base[pr];
			k->hwLatencies[2][a][pr] = a == EMU_ALGO_TREE ? 5.0 + pr : 2.7 + pr;
		}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 3; j++)
			k->llMaxBws[i][j] = 39.0 + 10 * i;
}

static void comm_init(struct emu_comm *c)
{
	struct emu_proc *p = c->p;
	int fail_alloc = 0;

	if (c->parent) {	/* ncclCommSplit needs its parent */
		pthread_mutex_lock(&p->init_mu);
		while (!c->parent->inited)
			pthread_cond_wait(&p->init_cv, &p->init_mu);
		pthread_mutex_unlock(&p->init_mu);
	}
	/* every allocation made by the plugin during this comm's inits fails */
	fail_alloc = p->alloc_victim;

	log_comm = c;
	if (fail_alloc)
		emu_alloc_fail_begin();
	/* profiler init, then tuner init, on this thread */
	if (p->pver) {
		int rc;

		if (p->pver >= 5)
			rc = ((const struct emu_profiler_v5 *)p->psym)->init(
				&c->pctx, c->comm_id, &p->mask, c->name, (int)c->nnodes,
				(int)c->nranks, (int)c->crank, emu_logger);
		else if (p->pver == 4)
			rc = ((const struct emu_profiler_v4 *)p->psym)->init(
				&c->pctx, &p->mask, c->name, c->comm_id, (int)c->nnodes,
				(int)c->nranks, (int)c->crank, emu_logger);
		else	/* v1..v3: init only; their events are not emulated */
			rc = ((const struct emu_profiler_v1 *)p->psym)->init(&c->pctx, &p->mask);
		c->res.prof_init_rc = rc;
		c->prof_ok = rc == 0;	/* NCCL continues without a failed profiler */
	}
	if (p->tver) {
		int rc;

		if (p->tver >= 5) {
			struct emu_nvl_domain_info nvl = { (int)c->nnodes,
							   (int)(c->nranks / c->nnodes),
							   (int)((c->nranks + c->nnodes - 1) / c->nnodes) };
			struct emu_tuner_constants k;

			tuner_constants(&k);
			rc = ((const struct emu_tuner_v5 *)p->tsym)->init(
				&c->tctx, c->comm_id, c->nranks, c->nnodes, emu_logger, &nvl, &k);
		} else {	/* v2..v4 share the init signature */
			rc = ((const struct emu_tuner_v3 *)p->tsym)->init(c->nranks, c->nnodes,
									  emu_logger, &c->tctx);
		}
		c->res.init_rc = rc;
		c->tuner_ok = rc == 0;
		if (rc) {
			c->res.status = EMU_ST_INIT_FAILED;
			if (!c->res.log_warn)
				snprintf(c->res.msg, sizeof(c->res.msg),
					 "tuner init returned %d (no WARN logged)", rc);
		}
	}
	if (fail_alloc)
		c->res.alloc_refused = emu_alloc_fail_end();
	log_comm = NULL;

	if (c->prof_ok && p->pver >= 4) {
		c->cap = p->cfg->lag + PROXY_CAP_EXTRA;
		c->ring = calloc(c->cap, sizeof(*c->ring));
		if (!c->ring || pthread_create(&c->proxy, NULL, proxy_main, c)) {
			fprintf(stderr, "emu: cannot start a proxy thread\n");
			exit(3);
		}
		c->has_proxy = 1;
	}
	pthread_mutex_lock(&p->init_mu);
	c->inited = 1;
	pthread_cond_broadcast(&p->init_cv);
	pthread_mutex_unlock(&p->init_mu);
}

static void comm_fini(struct emu_comm *c)
{
	struct emu_proc *p = c->p;

	/* commCleanup: tuner finalize first ... */
	if (p->tver && c->tuner_ok) {
		if (p->tver >= 5)
			((const struct emu_tuner_v5 *)p->tsym)->finalize(c->tctx);
		else
			((const struct emu_tuner_v3 *)p->tsym)->destroy(c->tctx);
	}
	__atomic_store_n(&c->tuner_gone, 1, __ATOMIC_RELEASE);
	/* ... the proxy still delivers what it had (late events) ... */
	if (c->has_proxy) {
		pthread_mutex_lock(&c->mu);
		c->flush = 1;
		pthread_cond_signal(&c->cv_cons);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->proxy, NULL);
		free(c->ring);
	}
	/* ... then commFree: profiler finalize */
	if (p->pver && c->prof_ok)
		c->res.prof_fini_rc = prof_finalize(c);
}

/* ---- drivers ---- */

static void *comm_thread(void *arg)
{
	struct emu_comm *c = arg;

	comm_init(c);
	if (c->res.status == EMU_ST_OK)
		for (uint64_t i = 0; i < c->p->cfg->calls; i++)
			launch(c, i);
	comm_fini(c);
	return NULL;
}

static void run_tpc(struct emu_proc *p)
{
	for (unsigned i = 0; i < p->ncomms; i++)
		if (pthread_create(&p->comms[i].thr, NULL, comm_thread, &p->comms[i])) {
			fprintf(stderr, "emu: pthread_create failed\n");
			exit(3);
		}
	for (unsigned i = 0; i < p->ncomms; i++)
		pthread_join(p->comms[i].thr, NULL);
}

static void run_one_thread(struct emu_proc *p, int random_order, uint64_t *rng)
{
	unsigned *act = calloc(p->ncomms, sizeof(*act)), nact = 0;
	uint64_t *next = calloc(p->ncomms, sizeof(*next));

	if (!act || !next)
		exit(3);
	for (unsigned i = 0; i < p->ncomms; i++) {
		comm_init(&p->comms[i]);
		if (p->comms[i].res.status == EMU_ST_OK && p->cfg->calls)
			act[nact++] = i;
	}
	if (!random_order) {
		for (uint64_t k = 0; k < p->cfg->calls; k++)
			for (unsigned j = 0; j < nact; j++)
				launch(&p->comms[act[j]], k);
	} else {
		while (nact) {
			unsigned j = (unsigned)(emu_rand(rng) % nact), ci = act[j];

			launch(&p->comms[ci], next[ci]++);
			if (next[ci] == p->cfg->calls)
				act[j] = act[--nact];
		}
	}
	for (unsigned i = p->ncomms; i-- > 0;)
		comm_fini(&p->comms[i]);
	free(act);
	free(next);
}

/* ---- the rank process ---- */

static void set_env(struct emu_proc *p)
{
	const struct emu_cfg *cfg = p->cfg;
	const char *table = cfg->table;

	if ((cfg->asym & EMU_A_CORRUPT) && cfg->table_corrupt && is_victim(p, EMU_VICTIM_CORRUPT))
		table = cfg->table_corrupt;
	if ((cfg->asym & EMU_A_BADVER) && cfg->table_badver && is_victim(p, EMU_VICTIM_BADVER))
		table = cfg->table_badver;
	/* a valid table's allow-list; a corrupt or unknown one leaves the prior
	 * (no table: NCCL_BOT_ALLOW, which the emulator never sets) */
	p->allow = table && table == cfg->table ? EMU_TABLE_ALLOW : 0;
	if (table)
		setenv("NCCL_BOT_TABLE", table, 1);
	else
		unsetenv("NCCL_BOT_TABLE");
	if (cfg->policy)
		setenv("NCCL_BOT_POLICY", cfg->policy, 1);
	if ((cfg->asym & EMU_A_ENV) && is_victim(p, EMU_VICTIM_ENV)) {
		/* never decision inputs: debug level, spool trouble */
		setenv("NCCL_BOT_DEBUG", "1", 1);
		setenv("NCCL_BOT_SPOOL", "/nonexistent/nccl-bot-emu-spool", 1);
		if (table) {	/* with a table, the knobs must be ignored */
			setenv("NCCL_BOT_POLICY",
			       cfg->policy && !strcmp(cfg->policy, "sweep") ? "greedy" : "sweep", 1);
			setenv("NCCL_BOT_SEED", "987654321", 1);
			setenv("NCCL_BOT_MIN_BYTES", "1", 1);
		}
	}
	if ((cfg->asym & EMU_A_ENVPOLICY) && is_victim(p, EMU_VICTIM_ENV))
		setenv("NCCL_BOT_POLICY",
		       cfg->policy && !strcmp(cfg->policy, "sweep") ? "greedy" : "sweep", 1);
}

/* NCCL's cost tables for nnodes, [coll][size][arm]; huge: as rewritten by
 * emu_cost_huge() (scenario huge). */
static const float *costs_for(struct emu_proc *p, unsigned nnodes, int huge)
{
	const size_t n = (size_t)EMU_NUM_FUNCS * EMU_NSIZES * EMU_NUM_ARMS;
	float *t;

	if (nnodes > 64)
		nnodes = 64;
	if (!p->costs_by_nodes[nnodes]) {
		t = malloc(sizeof(float) * n);
		if (!t)
			exit(3);
		for (int coll = 0; coll < EMU_NUM_FUNCS; coll++)
			for (unsigned i = 0; i < EMU_NSIZES; i++)
				emu_cost_table(coll, emu_size(i), nnodes,
					       t + ((size_t)coll * EMU_NSIZES + i) * EMU_NUM_ARMS);
		p->costs_by_nodes[nnodes] = t;
	}
	if (!huge)
		return p->costs_by_nodes[nnodes];
	if (!p->huge_by_nodes[nnodes]) {
		t = malloc(sizeof(float) * n);
		if (!t)
			exit(3);
		memcpy(t, p->costs_by_nodes[nnodes], sizeof(float) * n);
		for (int coll = 0; coll < EMU_NUM_FUNCS; coll++)
			for (unsigned i = 0; i < EMU_NSIZES; i++)
				emu_cost_huge(coll, i, nnodes,
					      t + ((size_t)coll * EMU_NSIZES + i) * EMU_NUM_ARMS);
		p->huge_by_nodes[nnodes] = t;
	}
	return p->huge_by_nodes[nnodes];
}

int emu_rank_main(const struct emu_cfg *cfg, unsigned proc, int wfd)
{
	struct emu_proc *p = calloc(1, sizeof(*p));
	unsigned rpp = cfg->ranks_per_proc, k = 0;
	uint64_t prng;
	int mode, rc = 0;

	if (!p)
		return 3;
	if (cfg->timeout_s > 0)
		alarm((unsigned)cfg->timeout_s);
	g_verbose = cfg->verbose;
	emu_nccl_code = cfg->ver->code;
	p->cfg = cfg;
	p->proc = proc;
	p->nranks = cfg->nprocs * rpp;
	pthread_mutex_init(&p->init_mu, NULL);
	pthread_cond_init(&p->init_cv, NULL);
	prng = emu_mix64(cfg->seed ^ 0x9a0c ^ ((uint64_t)proc << 32));
	p->alloc_victim = (cfg->asym & EMU_A_ALLOCFAIL) && is_victim(p, EMU_VICTIM_ALLOCFAIL);

	set_env(p);
	load_plugins(p, (cfg->asym & EMU_A_NOPROF) && is_victim(p, EMU_VICTIM_NOPROF));

	p->ncomms = rpp * EMU_NCOMM_KINDS;
	p->comms = calloc(p->ncomms, sizeof(*p->comms));
	if (!p->comms)
		return 3;
	for (unsigned lr = 0; lr < rpp; lr++) {
		unsigned r = proc * rpp + lr;

		for (unsigned kind = 0; kind < EMU_NCOMM_KINDS; kind++, k++) {
			struct emu_comm *c = &p->comms[k];

			c->p = p;
			c->grank = r;
			c->kind = kind;
			c->color = comm_color(kind, r, p->nranks);
			comm_shape(kind, r, p->nranks, cfg->ranks_per_node, &c->nranks, &c->nnodes,
				   &c->crank);
			c->comm_id = comm_id_of(cfg->seed, kind, c->color);
			snprintf(c->name, sizeof(c->name), "%s.%u",
				 (const char *[]){ "world", "world2", "parity", "half" }[kind],
				 c->color);
			c->costs = costs_for(p, c->nnodes, (cfg->asym & EMU_A_HUGE) != 0);
			c->run_costs = costs_for(p, c->nnodes, 0);
			c->rng = emu_mix64(cfg->seed ^ 0x5eed ^ ((uint64_t)r << 8) ^ kind);
			c->parent = kind >= 2 ? &p->comms[lr * EMU_NCOMM_KINDS] : NULL;
			pthread_mutex_init(&c->mu, NULL);
			pthread_cond_init(&c->cv_prod, NULL);
			pthread_cond_init(&c->cv_cons, NULL);
			c->res.magic = EMU_RESULT_MAGIC;
			c->res.grank = (int32_t)r;
			c->res.kind = (int32_t)kind;
			c->res.color = (int32_t)c->color;
			c->res.crank = (int32_t)c->crank;
			c->res.nranks = (int32_t)c->nranks;
			c->res.nnodes = (int32_t)c->nnodes;
			c->res.comm_id = c->comm_id;
			c->res.hash = c->res.hash_ac = 0x6e63636c626f74ULL;
		}
	}

	mode = cfg->thread_mode;
	if (cfg->asym & EMU_A_THREADS)
		mode = EMU_T_RAND;
	if (mode == EMU_T_TPC)
		run_tpc(p);
	else if (mode == EMU_T_RR)
		run_one_thread(p, 0, &prng);
	else if (emu_rand(&prng) % 3 == 0)
		run_tpc(p);
	else
		run_one_thread(p, 1, &prng);

	unload_plugins(p);
	for (unsigned i = 0; i < p->ncomms; i++) {
		struct emu_result *res = &p->comms[i].res;

		res->tuner_ver = p->tver;
		res->prof_ver = p->pver;
		res->same_handle = p->same_handle;
		snprintf(res->tuner_name, sizeof(res->tuner_name), "%s", p->tname);
		if (write(wfd, res, sizeof(*res)) != (ssize_t)sizeof(*res))
			rc = 4;
	}
	/* everything this process allocated, so that valgrind's leak check
	 * (run-v4-valgrind.sh) sees the plugin's leaks only; the plugin must
	 * keep no pointer into it either (the mask lives here) */
	for (unsigned n = 0; n < 65; n++) {
		free(p->costs_by_nodes[n]);
		free(p->huge_by_nodes[n]);
	}
	free(p->comms);
	free(p);
	return rc;
}
