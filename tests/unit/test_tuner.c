/*
 * test_tuner.c - the BUILT libnccl-tuner-bot.so driven exactly as NCCL does.
 *
 * dlopen()s the library by absolute path (BOT_TUNER_SO, or $BOT_TUNER_SO),
 * finds the plugin structs with dlsym(), and calls them with NCCL's real
 * calling convention: v5 init(ctx, commId, nRanks, nNodes, logger, nvl,
 * constants), getCollInfo with a CONTIGUOUS float[7][3] cost table cast to
 * float** (never row pointers), finalize. The layouts are declared here
 * independently of tuner/nccl_abi.h, from NCCL's facts (doc/nccl-abi.md), so a mistake in
 * the plugin's header is not shared by its test.
 *
 * Checks: never revives a -1 entry, never empties the table, always returns
 * success, a forced arm is a 0.0 entry, and the cases that must leave the
 * table untouched (no table, NCCL_ALGO/NCCL_PROTO, below min bytes, bad
 * digest, unknown shape, arms outside Ring/Tree/PAT/AUTO's/allow-list); an
 * unknown table version and an allocation failure fail init. The policy on
 * the prior: without a table (NCCL_BOT_POLICY/SEED/MIN_BYTES/ALLOW, bad
 * values -> WARN and defaults), learning policies probe the runner-up only
 * on comms whose probe bucket is below 16 and never with tuner v3/v4; sweep
 * cycles the allowed supported arms per context; scale corrections pick the
 * argmin of the corrected costs where the table decides nothing. Expected
 * decisions are computed here independently (double for "within 2x").
 */
#include <check.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/table.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "policies/plan.h"
#include "tests/unit/testutil.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif
#ifndef BOT_HINTLOG_SO
#define BOT_HINTLOG_SO "tests/unit/.libs/hintlog.so"
#endif

/* ---- NCCL's side of the ABI (doc/nccl-abi.md, tuner and profiler ABIs) ---- */

typedef void (*logger_t)(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...);

typedef struct {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int collNetSupport,
			   int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
			   int *nChannels);
	int (*destroy)(void *ctx);
} tuner_v2_t;

typedef struct {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int *nChannels);
	int (*destroy)(void *ctx);
} tuner_v3_t;

typedef struct {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*destroy)(void *ctx);
} tuner_v4_t;

typedef struct {
	int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain;
} nvl_t;

typedef struct {
	double d[144];	/* 1152 bytes */
} constants_t;

typedef struct {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, logger_t log,
		    nvl_t *nvl, constants_t *constants);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*finalize)(void *ctx);
	int (*getChunkSize)(void *ctx, int collType, size_t nBytes, int algo, int proto,
			    int nChannels, size_t *chunkSize);
} tuner_v6_t;	/* v5 is the same without getChunkSize */

typedef struct {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes,
		    int nRanks, int rank, logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, void *descr);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int eState, void *args);
	int (*finalize)(void *ctx);
} profiler_v5_t;

#define NALGO 7
#define NPROTO 3
#define ARM(a, p) ((a) * NPROTO + (p))
#define COMM 0x5eed5eed12345678ULL
#define MiB (1024 * 1024)

static void *so;
static const tuner_v6_t *v5, *v6;
static const tuner_v4_t *v4;
static const tuner_v3_t *v3;
static const tuner_v2_t *v2;
static const profiler_v5_t *p5;

static nvl_t nvl = { 2, 8, 8 };
static constants_t constants;
static int nwarn;
static char lastlog[4096], alllog[65536];

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lastlog, sizeof(lastlog), fmt, ap);
	va_end(ap);
	if (level == 2)
		nwarn++;
	if (strlen(alllog) + strlen(lastlog) + 2 < sizeof(alllog)) {
		strcat(alllog, lastlog);
		strcat(alllog, "\n");
	}
}

/* ---- allocation failure injection ---------------------------------------- */
/* Interposes malloc for the whole process (the executable's definition wins
 * for the dlopen()ed library too); off except in one test. Not under ASan,
 * which owns malloc. */
#if defined(__SANITIZE_ADDRESS__)
#define BOT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BOT_ASAN 1
#endif
#endif
#ifndef BOT_ASAN
#define BOT_FAIL_MALLOC 1
extern void *__libc_malloc(size_t n);
static int fail_malloc;

void *malloc(size_t n);
void *malloc(size_t n)
{
	if (fail_malloc)
		return NULL;
	return __libc_malloc(n);
}
#endif

/* ---- the NCCL that loaded the plugin -------------------------------------- */
/* NCCL exports ncclGetVersion(); so does this test binary (linked with
 * --export-dynamic-symbol), answering what a test sets, or failing while
 * fake_version is 0 (the plugin then knows only the tuner ABI version).
 * The plugin asks only the object that holds the logger it is given: the
 * logger above lives here too, as NCCL's lives in libnccl. */
static int fake_version;

int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
	if (!fake_version)
		return 4;	/* ncclInvalidArgument */
	*version = fake_version;
	return 0;
}

static void setup(void)
{
	const char *path = getenv("BOT_TUNER_SO");

	if (!path || !*path)
		path = BOT_TUNER_SO;
	unsetenv("NCCL_BOT_TABLE");
	unsetenv("NCCL_BOT_POLICY");
	unsetenv("NCCL_BOT_SEED");
	unsetenv("NCCL_BOT_MIN_BYTES");
	unsetenv("NCCL_BOT_ALLOW");
	unsetenv("NCCL_BOT_DEBUG");
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_PROTO");
	/* exactly how NCCL opens a plugin */
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(so != NULL, "dlopen %s: %s", path, dlerror());
	v6 = dlsym(so, "ncclTunerPlugin_v6");
	v5 = dlsym(so, "ncclTunerPlugin_v5");
	v4 = dlsym(so, "ncclTunerPlugin_v4");
	v3 = dlsym(so, "ncclTunerPlugin_v3");
	v2 = dlsym(so, "ncclTunerPlugin_v2");
	p5 = dlsym(so, "ncclProfiler_v5");
	ck_assert(v6 && v5 && v4 && v3 && v2 && p5);
	nwarn = 0;
	fake_version = 0;
	lastlog[0] = alllog[0] = '\0';
}

static void teardown(void)
{
	dlclose(so);
}

/* ---- helpers --------------------------------------------------------------- */

/* A cost table like NCCL's: entries in us, -1 where unsupported. */
static void cost_init(float t[NALGO][NPROTO])
{
	for (int a = 0; a < NALGO; a++)
		for (int p = 0; p < NPROTO; p++)
			t[a][p] = 10.0f + (float)(a * NPROTO + p);
	t[2][0] = t[2][1] = t[2][2] = -1.0f;	/* no CollNet */
	t[3][0] = t[3][1] = t[3][2] = -1.0f;
	t[5][0] = t[5][1] = t[5][2] = -1.0f;	/* no NVLS tree */
}

static int same(float a[NALGO][NPROTO], float b[NALGO][NPROTO])
{
	return memcmp(a, b, sizeof(float) * NALGO * NPROTO) == 0;
}

static struct bot_table tbl;
static char text[BOT_TABLE_MAX_TEXT + 2];

/* A table for shape (16 ranks, 2 nodes) with one allreduce entry at 2 MiB
 * (bucket 84) forcing `arm` with nchannels 8, and min bytes 2^20. */
static void table_one(int arm)
{
	bot_table_init(&tbl, 2, 99);
	bot_table_shape(&tbl, 16, 2);
	memset(&tbl.entries[0], 0, sizeof(tbl.entries[0]));
	tbl.entries[0].coll = BOT_COLL_ALLREDUCE;
	tbl.entries[0].bucket = 84;
	tbl.entries[0].plan.exploit = (uint8_t)arm;
	tbl.entries[0].plan.nchannels = 8;
	tbl.nentries = 1;
}

/* table_one()'s entry probes arm on buckets [lo, hi). */
static void table_probe(int arm, unsigned lo, unsigned hi)
{
	tbl.entries[0].plan.nprobe = 1;
	tbl.entries[0].plan.probe[0].arm = (uint8_t)arm;
	tbl.entries[0].plan.probe[0].lo = (uint16_t)lo;
	tbl.entries[0].plan.probe[0].hi = (uint16_t)hi;
}

static void set_table(void)
{
	ck_assert_int_eq(bot_table_normalize(&tbl), 0);
	ck_assert_int_gt(bot_table_encode(&tbl, text, sizeof(text)), 0);
	setenv("NCCL_BOT_TABLE", text, 1);
}

static void *open5(uint64_t comm, size_t nranks, size_t nnodes)
{
	void *ctx = (void *)1;

	ck_assert_int_eq(v5->init(&ctx, comm, nranks, nnodes, logger, &nvl, &constants), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

/* One getCollInfo through v5 with a fresh cost table; returns nChannels. */
static int call5(void *ctx, int coll, size_t nbytes, float t[NALGO][NPROTO])
{
	int nch = 0;

	cost_init(t);
	ck_assert_int_eq(v5->getCollInfo(ctx, coll, nbytes, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	return nch;
}

/* ---- tests ------------------------------------------------------------------ */

START_TEST(test_exports)
{
	ck_assert_str_eq(v2->name, "nccl-bot");
	ck_assert_str_eq(v3->name, "nccl-bot");
	ck_assert_str_eq(v4->name, "nccl-bot");
	ck_assert_str_eq(v5->name, "nccl-bot");
	ck_assert_str_eq(v6->name, "nccl-bot");
	ck_assert_str_eq(p5->name, "nccl-bot");
	ck_assert_ptr_nonnull(dlsym(so, "ncclProfiler_v4"));
	ck_assert_ptr_nonnull(dlsym(so, "ncclProfiler_v6"));
	/* no v1 ABIs, nothing internal */
	ck_assert_ptr_null(dlsym(so, "ncclTunerPlugin_v1"));
	ck_assert_ptr_null(dlsym(so, "ncclProfiler_v3"));
	ck_assert_ptr_null(dlsym(so, "bot_tuner_open"));
	ck_assert_ptr_null(dlsym(so, "bot_table_decode"));
	ck_assert_ptr_null(dlsym(so, "bot_size_bucket"));
	ck_assert_ptr_null(v6->getChunkSize);
}
END_TEST

START_TEST(test_no_table_untouched)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	void *ctx = open5(COMM, 16, 2);

	cost_init(ref);
	for (int c = 0; c < 5; c++)
		for (size_t n = 1; n < ((size_t)1 << 40); n *= 3) {
			ck_assert_int_eq(call5(ctx, c, n, t), 0);
			ck_assert(same(t, ref));
		}
	ck_assert_int_eq(v5->finalize(ctx), 0);
	ck_assert_ptr_nonnull(strstr(alllog, "policy auto (from the environment)"));
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

START_TEST(test_forced_arm)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	int tree_simple = ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE);
	void *ctx;

	table_one(tree_simple);
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_ptr_nonnull(strstr(lastlog, "1 contexts decided"));
	cost_init(ref);
	/* 2 MiB .. 2.5 MiB - 1 is bucket 84 */
	for (size_t n = 2 * MiB; n < 2 * MiB + MiB / 2; n += 4099) {
		ck_assert_int_eq(call5(ctx, BOT_COLL_ALLREDUCE, n, t), 8);
		ck_assert(((float *)t)[tree_simple] == 0.0f);
		((float *)t)[tree_simple] = ((float *)ref)[tree_simple];
		ck_assert(same(t, ref));
	}
	/* other buckets and collectives: untouched, nChannels untouched */
	ck_assert_int_eq(call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB + MiB / 2, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB - 1, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(call5(ctx, BOT_COLL_ALLGATHER, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* the same through v6, v4 and v3 (no commId: exploit) */
	{
		void *c6 = NULL, *c4 = NULL, *c3 = NULL;
		int nch = 0;

		ck_assert_int_eq(v6->init(&c6, COMM, 16, 2, logger, &nvl, &constants), 0);
		cost_init(t);
		ck_assert_int_eq(v6->getCollInfo(c6, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 1, &nch), 0);
		ck_assert(((float *)t)[tree_simple] == 0.0f && nch == 8);
		ck_assert_int_eq(v6->finalize(c6), 0);

		ck_assert_int_eq(v4->init(16, 2, logger, &c4), 0);
		cost_init(t);
		nch = 0;
		ck_assert_int_eq(v4->getCollInfo(c4, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
		ck_assert(((float *)t)[tree_simple] == 0.0f && nch == 8);
		ck_assert_int_eq(v4->destroy(c4), 0);

		/* NCCL 2.22: float[6][3], no PAT row */
		ck_assert_int_eq(v3->init(16, 2, logger, &c3), 0);
		cost_init(t);
		nch = 0;
		ck_assert_int_eq(v3->getCollInfo(c3, 4, 2 * MiB, 1, (float **)t, 6, NPROTO, &nch), 0);
		ck_assert(((float *)t)[tree_simple] == 0.0f && nch == 8);
		ck_assert_int_eq(v3->destroy(c3), 0);
	}
}
END_TEST

/* AUTO's search cap per NCCL version: an entry in [3.6e9, FLT_MAX) is one
 * NCCL 2.29+ picks and 2.28 and older never do. Tuner v6 (2.30+) and v5
 * with ncclGetVersion() >= 2.29 may force it; v5 without a version, or
 * 2.28, and v3/v4 never. FLT_MAX itself, inf and NaN: never. */
static int cap_forced(int abi, int version, float entry, int *nch)
{
	float t[NALGO][NPROTO];
	int ring_simple = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
	void *ctx = NULL;

	fake_version = version;
	*nch = 0;
	if (abi == 6)
		ck_assert_int_eq(v6->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 0);
	else if (abi == 5)
		ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 0);
	else
		ck_assert_int_eq(v4->init(16, 2, logger, &ctx), 0);
	cost_init(t);
	((float *)t)[ring_simple] = entry;
	ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1, (float **)t, NALGO,
					 NPROTO, 0, nch), 0);
	ck_assert_int_eq(v5->finalize(ctx), 0);
	return ((float *)t)[ring_simple] == 0.0f;
}

START_TEST(test_cap_per_version)
{
	int nch;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	/* an ordinary entry: forced everywhere */
	ck_assert(cap_forced(5, 0, 100.0f, &nch) && nch == 8);
	/* 4e9 and just below FLT_MAX: 2.29+ only */
	ck_assert(cap_forced(6, 0, 4e9f, &nch) && nch == 8);
	ck_assert(cap_forced(6, 0, nextafterf(FLT_MAX, 0.0f), &nch) && nch == 8);
	ck_assert(cap_forced(5, 22907, 4e9f, &nch) && nch == 8);
	ck_assert_ptr_nonnull(strstr(alllog, "NCCL 22907, AUTO's cap FLT_MAX"));
	ck_assert(cap_forced(5, 22900, 3.6e9f, &nch) && nch == 8);
	ck_assert(!cap_forced(5, 22809, 4e9f, &nch) && nch == 0);
	ck_assert_ptr_nonnull(strstr(alllog, "NCCL 22809, AUTO's cap 3.6e9 us"));
	ck_assert(!cap_forced(5, 22809, 3.6e9f, &nch) && nch == 0);
	ck_assert(cap_forced(5, 22809, nextafterf(3.6e9f, 0.0f), &nch) && nch == 8);
	ck_assert(!cap_forced(5, 0, 4e9f, &nch) && nch == 0);
	alllog[0] = '\0';
	ck_assert(!cap_forced(4, 22907, 4e9f, &nch) && nch == 0);
	/* the init line names the NCCL under every ABI, not v5's alone (it
	 * said "NCCL 0" under v3, v4 and v6) */
	ck_assert_ptr_nonnull(strstr(alllog, "NCCL 22907, AUTO's cap 3.6e9 us"));
	alllog[0] = '\0';
	ck_assert(cap_forced(6, 23001, 4e9f, &nch) && nch == 8);
	ck_assert_ptr_nonnull(strstr(alllog, "NCCL 23001, AUTO's cap FLT_MAX"));
	/* never: FLT_MAX, inf, NaN, negative (-0.0 is >= 0: forced) */
	ck_assert(!cap_forced(6, 0, FLT_MAX, &nch) && nch == 0);
	ck_assert(!cap_forced(6, 0, INFINITY, &nch) && nch == 0);
	ck_assert(!cap_forced(6, 0, NAN, &nch) && nch == 0);
	ck_assert(!cap_forced(6, 0, -NAN, &nch) && nch == 0);
	ck_assert(!cap_forced(6, 0, -1e-30f, &nch) && nch == 0);
	ck_assert(cap_forced(6, 0, -0.0f, &nch) && nch == 8);
	ck_assert(cap_forced(5, 0, 1e-45f, &nch) && nch == 8);	/* subnormal */
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

static int forced_arm(const float *now, const float *was, int n);

/* NCCL's logger in an object that exports no ncclGetVersion() (NCCL linked
 * statically, its symbols hidden: tests/unit/hintlog.c) while another
 * object, this binary (first in load order), exports one saying 2.29.7:
 * the version is unknown, so tuner v5 keeps 2.28's cap, 3.6e9, as every
 * rank would. Before, the first ncclGetVersion() in load order answered,
 * whichever NCCL that was. */
static char hint_lines[8192];

static void hint_sink(int level, const char *line)
{
	(void)level;
	if (strlen(hint_lines) + strlen(line) + 2 < sizeof(hint_lines)) {
		strcat(hint_lines, line);
		strcat(hint_lines, "\n");
	}
}

START_TEST(test_version_only_from_logger_object)
{
	const char *path = getenv("BOT_HINTLOG_SO");
	int ring_simple = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE), nch;
	void *h, *ctx = NULL;
	logger_t hl;
	void (**sink)(int, const char *);
	float t[NALGO][NPROTO];

	if (!path || !*path)
		path = BOT_HINTLOG_SO;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
	hl = (logger_t)dlsym(h, "hintlog_logger");
	sink = dlsym(h, "hintlog_sink");
	ck_assert(hl && sink);
	*sink = hint_sink;
	table_one(ring_simple);
	set_table();
	/* the logger here: this binary's 2.29.7, FLT_MAX */
	ck_assert(cap_forced(5, 22907, 4e9f, &nch) && nch == 8);
	/* the logger there: unknown, 3.6e9 */
	hint_lines[0] = '\0';
	ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, hl, &nvl, &constants), 0);
	cost_init(t);
	((float *)t)[ring_simple] = 4e9f;
	nch = 0;
	ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1, (float **)t, NALGO,
					 NPROTO, 0, &nch), 0);
	ck_assert(((float *)t)[ring_simple] == 4e9f && nch == 0);
	ck_assert_msg(strstr(hint_lines, "NCCL unknown, AUTO's cap 3.6e9 us"), "%s", hint_lines);
	/* below the cap: forced as ever */
	cost_init(t);
	ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1, (float **)t, NALGO,
					 NPROTO, 0, &nch), 0);
	ck_assert(((float *)t)[ring_simple] == 0.0f && nch == 8);
	ck_assert_int_eq(v5->finalize(ctx), 0);
	/* no logger at all: unknown too */
	ctx = NULL;
	ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, NULL, &nvl, &constants), 0);
	cost_init(t);
	((float *)t)[ring_simple] = 4e9f;
	nch = 0;
	ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1, (float **)t, NALGO,
					 NPROTO, 0, &nch), 0);
	ck_assert(((float *)t)[ring_simple] == 4e9f && nch == 0);
	ck_assert_int_eq(v5->finalize(ctx), 0);
	*sink = NULL;
	dlclose(h);
}
END_TEST

/* The same cap in the dynamic decisions: with every entry but one at 4e9,
 * sweep cycles over those entries on 2.29+ and leaves such a row alone
 * before (AUTO has no usable entry there: NCCL fails the collective). */
START_TEST(test_cap_sweep)
{
	for (int k = 0; k < 3; k++) {
		static const int abi[] = { 6, 5, 5 }, ver[] = { 0, 22907, 22809 };
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		unsigned nforced = 0;
		void *ctx = NULL;
		int nch = 0;

		setenv("NCCL_BOT_POLICY", "sweep", 1);
		fake_version = ver[k];
		if (abi[k] == 6)
			ck_assert_int_eq(v6->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 0);
		else
			ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 0);
		for (int i = 0; i < 30; i++) {
			for (int a = 0; a < NALGO * NPROTO; a++)
				((float *)ref)[a] = a < 3 || a >= 18 ? 4e9f + (float)a * 1e6f : -1.0f;
			memcpy(t, ref, sizeof(t));
			ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1,
							 (float **)t, NALGO, NPROTO, 0, &nch), 0);
			nforced += forced_arm((float *)t, (float *)ref, NALGO * NPROTO) >= 0;
		}
		/* 6 arms (Tree, PAT) usable on 2.29+: 5 of 6 calls force one */
		ck_assert_uint_eq(nforced, k < 2 ? 25 : 0);
		ck_assert_int_eq(v5->finalize(ctx), 0);
	}
}
END_TEST

/* A table with nothing usable, all entries -1 as 2.31's symmetric scheduler
 * passes it (numPipeOps 0): left untouched in every kind of cell, nChannels
 * too, and a sweep's counter does not move (the next calls decide as if the
 * ignored ones never came). */
START_TEST(test_all_ignored)
{
	static const char *const policies[] = { "sweep", "thompson", "greedy", "auto" };

	for (unsigned p = 0; p < 2 * sizeof(policies) / sizeof(policies[0]); p++) {
		void *a, *b;
		uint64_t r = 5;

		/* with a table (fixed arms, an arm that needs AUTO's, corrections)
		 * and without (the policy on the prior, debug on every other) */
		unsetenv("NCCL_BOT_TABLE");
		setenv("NCCL_BOT_POLICY", policies[p / 2], 1);
		if (p & 1) {
			setenv("NCCL_BOT_DEBUG", "1", 1);
		} else {
			unsetenv("NCCL_BOT_DEBUG");
			table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
			tbl.policy = (uint8_t)bot_policy_parse(policies[p / 2]);
			tbl.min_bytes_log2 = 10;
			tbl.entries[1] = tbl.entries[0];
			tbl.entries[1].bucket = 88;
			tbl.entries[1].plan.exploit = ARM(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
			tbl.nentries = 2;
			for (int l = 10; l < 30; l++)
				tbl.corr[tbl.ncorr++] = (struct bot_table_corr){
					BOT_COLL_ALLGATHER, ARM(BOT_ALGO_RING, BOT_PROTO_LL), (uint8_t)l,
					20000 };
			set_table();
		}
		a = open5(COMM, 16, 2);
		b = open5(COMM, 16, 2);
		for (int i = 0; i < 3000; i++) {
			float ta[NALGO][NPROTO], tb[NALGO][NPROTO], ign[NALGO][NPROTO];
			int coll, na = 0, nb = 0, ni = 5;
			size_t n;

			r = bot_mix64(r);
			coll = (int)(r % 5);
			n = (size_t)1 << (10 + (r >> 8) % 20);
			/* an all-ignored call on a only, with numPipeOps 0 */
			for (int k = 0; k < NALGO * NPROTO; k++)
				((float *)ign)[k] = -1.0f;
			memcpy(ta, ign, sizeof(ta));
			ck_assert_int_eq(v5->getCollInfo(a, coll, n, 0, (float **)ta, NALGO, NPROTO,
							 0, &ni), 0);
			ck_assert(same(ta, ign));
			ck_assert_int_eq(ni, 5);
			/* the same ordinary call on both */
			cost_init(ta);
			((float *)ta)[ARM(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE)] = 5.0f;
			memcpy(tb, ta, sizeof(tb));
			v5->getCollInfo(a, coll, n, 1, (float **)ta, NALGO, NPROTO, 0, &na);
			v5->getCollInfo(b, coll, n, 1, (float **)tb, NALGO, NPROTO, 0, &nb);
			ck_assert_msg(same(ta, tb) && na == nb, "policy %s call %d", policies[p / 2], i);
		}
		v5->finalize(a);
		v5->finalize(b);
	}
}
END_TEST

START_TEST(test_never_revive)
{
	float t[NALGO][NPROTO];
	int nch = 0;
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_LL128));
	set_table();
	ctx = open5(COMM, 16, 2);
	cost_init(t);
	t[1][1] = -1.0f;	/* LL128 disabled */
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(t[1][1] == -1.0f);
	ck_assert_int_eq(nch, 0);
	/* any negative value counts as unsupported, and so does NaN */
	cost_init(t);
	t[1][1] = -0.5f;
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(t[1][1] == -0.5f);
	ck_assert_int_eq(v5->finalize(ctx), 0);
}
END_TEST

START_TEST(test_arm_restriction)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	int nvls = ARM(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	int nch = 0;
	void *ctx;

	table_one(nvls);
	set_table();
	ctx = open5(COMM, 16, 2);
	/* NVLS supported but AUTO prefers Tree: not forced */
	cost_init(ref);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	/* AUTO's own algorithm is NVLS (LL128 cheapest): forcing NVLS/Simple is fine */
	cost_init(t);
	t[4][1] = 1.0f;
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	/* no channel hint for NVLS: NCCL would use it unclamped (multi-node) */
	ck_assert(t[4][2] == 0.0f && t[4][1] == 1.0f && nch == 0);
	/* the NVLS family: AUTO picks NVLS_TREE, so NVLS's buffers exist: forced */
	cost_init(t);
	t[5][2] = 1.0f;
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(t[4][2] == 0.0f && t[5][2] == 1.0f);
	/* AUTO picks CollNet Chain: NVLS is not of its family, untouched */
	cost_init(t);
	t[3][2] = 1.0f;
	memcpy(ref, t, sizeof(ref));
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* and the other way round: NVLS_TREE forced when AUTO picks NVLS */
	table_one(ARM(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE));
	set_table();
	ctx = open5(COMM, 16, 2);
	cost_init(t);
	t[5][2] = 30.0f;
	t[4][0] = 1.0f;
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(t[5][2] == 0.0f && t[4][0] == 1.0f);
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* CollNet Direct and Chain stay apart: Direct not forced when AUTO picks Chain */
	table_one(ARM(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE));
	set_table();
	ctx = open5(COMM, 16, 2);
	cost_init(t);
	t[2][2] = 20.0f;
	t[3][2] = 1.0f;
	memcpy(ref, t, sizeof(ref));
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* on the allow-list: forced even when AUTO prefers Tree */
	table_one(nvls);
	tbl.allow = 1u << nvls;
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(t[4][2] == 0.0f);
	ck_assert_int_eq(v5->finalize(ctx), 0);

	cost_init(ref);
	/* CollNet never supported here: untouched even when allowed */
	table_one(ARM(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE));
	tbl.allow = 1u << ARM(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE);
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* PAT is statically allowed; absent in a 2.22 table (numAlgo 6): untouched */
	table_one(ARM(BOT_ALGO_PAT, BOT_PROTO_SIMPLE));
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 8);
	ck_assert(t[6][2] == 0.0f);
	cost_init(t);
	nch = 0;
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, 6, NPROTO, 0, &nch), 0);
	ck_assert(same(t, ref) && nch == 0);
	ck_assert_int_eq(v5->finalize(ctx), 0);
}
END_TEST

START_TEST(test_min_bytes)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	tbl.min_bytes_log2 = 22;	/* 4 MiB: the 2 MiB entry is below */
	set_table();
	ctx = open5(COMM, 16, 2);
	cost_init(ref);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
}
END_TEST

START_TEST(test_nccl_algo_env)
{
	static const char *vars[] = { "NCCL_ALGO", "NCCL_PROTO" };
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];

	cost_init(ref);
	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	for (int i = 0; i < 2; i++) {
		void *ctx;

		setenv(vars[i], "ring", 1);
		alllog[0] = '\0';
		ctx = open5(COMM, 16, 2);
		ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
		ck_assert(same(t, ref));
		ck_assert_int_eq(v5->finalize(ctx), 0);
		/* logged once per process */
		if (i == 0)
			ck_assert_ptr_nonnull(strstr(alllog, "NCCL_ALGO or NCCL_PROTO is set"));
		else
			ck_assert_ptr_null(strstr(alllog, "NCCL_ALGO or NCCL_PROTO is set"));
		unsetenv(vars[i]);
	}
}
END_TEST

START_TEST(test_bad_digest_prior)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	void *ctx;
	size_t n;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	n = strlen(text);
	text[n - 3] = text[n - 3] == 'A' ? 'B' : 'A';
	setenv("NCCL_BOT_TABLE", text, 1);
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(alllog, "digest"));
	cost_init(ref);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
	/* garbage: the prior too */
	setenv("NCCL_BOT_TABLE", "hello", 1);
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
	/* the init line says the table was rejected, not "from the
	 * environment" (until 2026-12-04) */
	ck_assert_ptr_nonnull(strstr(lastlog, "policy auto (from none: NCCL_BOT_TABLE was "
				     "rejected, NCCL's choice everywhere)"));
	/* over the size budget: the prior, and the message says by how much */
	memset(text, 'A', BOT_TABLE_MAX_TEXT + 1);
	memcpy(text, "NBT3.", 5);
	text[BOT_TABLE_MAX_TEXT + 1] = 0;
	setenv("NCCL_BOT_TABLE", text, 1);
	alllog[0] = 0;
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
	ck_assert_ptr_nonnull(strstr(alllog, "over the size budget (98305 characters, at most "
				     "98304); leaving NCCL's choice"));
}
END_TEST

START_TEST(test_unknown_version_fails_init)
{
	void *ctx = NULL;
	void *c4 = NULL;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	text[3] = '7';
	setenv("NCCL_BOT_TABLE", text, 1);
	ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 3);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(lastlog, "version"));
	ck_assert_int_eq(v4->init(16, 2, logger, &c4), 3);
	/* v2 is pass-through and never reads the table */
	ck_assert_int_eq(v2->init(16, 2, logger, &c4), 0);
}
END_TEST

/* A prefix this build reads over a payload of another format version (the
 * digest covers the payload only: an edited prefix) fails init as an
 * unknown version does, but says what is wrong: it read "format version
 * unknown to this build (... reading table formats 1-3)" of an NBT2. table,
 * pointing at a build mismatch that was not there. */
START_TEST(test_prefix_payload_mismatch)
{
	void *ctx = NULL;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	ck_assert(!strncmp(text, "NBT3.", 5));
	text[3] = '2';
	setenv("NCCL_BOT_TABLE", text, 1);
	ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 3);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_msg(strstr(lastlog, "prefix NBT2. does not name its payload's format version"),
		      "%s", lastlog);
	ck_assert_msg(!strstr(lastlog, "unknown to this build"), "%s", lastlog);
}
END_TEST

/* A policy id this build does not know (a newer build's table): with
 * correction rows, whose use depends on the policy, init fails as for an
 * unknown format; without them the table's plans are all there is, and the
 * label is auto, said in a WARN (silent, and the rows dropped, until
 * 2026-12-04). */
/* set_table(), then v5 init must fail with one WARN holding want */
static void init_fails(const char *want)
{
	void *ctx = NULL;

	set_table();
	nwarn = 0;
	ck_assert_int_eq(v5->init(&ctx, COMM, 16, 2, logger, &nvl, &constants), 3);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(lastlog, "policy id 16 is not known to this build"));
	ck_assert_msg(strstr(lastlog, want), "%s", lastlog);
}

START_TEST(test_unknown_policy)
{
	float t[NALGO][NPROTO];
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	tbl.policy = BOT_NPOLICY;
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(nwarn, 1);
	ck_assert_ptr_nonnull(strstr(alllog, "policy id 16 is not known to this build"));
	ck_assert_ptr_nonnull(strstr(alllog, "labelled auto"));
	ck_assert_int_eq(call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, t), 8);
	/* the plan still forced */
	ck_assert(((float *)t)[ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] == 0.0f);
	ck_assert_int_eq(v5->finalize(ctx), 0);
	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	tbl.policy = BOT_NPOLICY;
	tbl.corr[tbl.ncorr++] = (struct bot_table_corr){ BOT_COLL_ALLGATHER,
		ARM(BOT_ALGO_RING, BOT_PROTO_LL), 20, 20000 };
	init_fails("failing communicator init");
	/* before format 3 the policy decides what the plans leave (probes on
	 * the prior): failing too, corrections or not */
	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	tbl.policy = BOT_NPOLICY;
	tbl.version = 2;
	init_fails("a format before 3");
}
END_TEST

START_TEST(test_shape_not_in_table)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	cost_init(ref);
	ctx = open5(COMM, 16, 4);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
	ctx = open5(COMM, 8, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
}
END_TEST

/* Probes: the arm is the plan's for this comm's probe bucket, computed here
 * from formats.md section 4 independently. */
START_TEST(test_probes)
{
	float t[NALGO][NPROTO];
	int exploit = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
	int probe = ARM(BOT_ALGO_TREE, BOT_PROTO_LL);
	int seen[2] = { 0, 0 };

	table_one(exploit);
	table_probe(probe, 0, 128);
	set_table();
	for (uint64_t comm = 1; comm <= 64; comm++) {
		uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 16, 2);
		unsigned pb = bot_probe_bucket(99, comm * 0x9e3779b97f4a7c15ULL, key, 0);
		int want = pb < 128 ? probe : exploit;
		void *ctx = open5(comm * 0x9e3779b97f4a7c15ULL, 16, 2);

		call5(ctx, 4, 2 * MiB, t);
		ck_assert_msg(((float *)t)[want] == 0.0f, "comm %llu pb %u",
			      (unsigned long long)comm, pb);
		seen[want == probe]++;
		ck_assert_int_eq(v5->finalize(ctx), 0);
	}
	ck_assert_int_gt(seen[0], 0);
	ck_assert_int_gt(seen[1], 0);
	/* v4 has no commId: always the exploit arm */
	{
		void *c4 = NULL;
		int nch = 0;

		ck_assert_int_eq(v4->init(16, 2, logger, &c4), 0);
		cost_init(t);
		v4->getCollInfo(c4, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch);
		ck_assert(((float *)t)[exploit] == 0.0f);
		v4->destroy(c4);
	}
}
END_TEST

START_TEST(test_v2_pass_through)
{
	void *ctx = NULL;
	int algo = -1, proto = -1, nch = 0;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	ck_assert_int_eq(v2->init(16, 2, logger, &ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(v2->getCollInfo(ctx, 4, 2 * MiB, 0, 1, 1, &algo, &proto, &nch), 0);
	ck_assert_int_eq(algo, -1);
	ck_assert_int_eq(proto, -1);
	ck_assert_int_eq(nch, 0);
	ck_assert_int_eq(v2->destroy(ctx), 0);
}
END_TEST

START_TEST(test_odd_inputs)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	int nch = 0;
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	ctx = open5(COMM, 16, 2);
	cost_init(ref);
	/* collective out of range (Send, AllGatherV, -1): untouched */
	for (int c = -1; c < 16; c++) {
		if (c >= 0 && c < 5)
			continue;
		cost_init(t);
		ck_assert_int_eq(v5->getCollInfo(ctx, c, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
		ck_assert(same(t, ref));
	}
	/* NULL table and NULL nChannels */
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, NULL, NALGO, NPROTO, 0, &nch), 0);
	cost_init(t);
	ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, NULL), 0);
	ck_assert(t[1][2] == 0.0f);
	/* huge and zero sizes */
	ck_assert_int_eq(call5(ctx, 4, SIZE_MAX, t), 0);
	ck_assert_int_eq(call5(ctx, 4, 0, t), 0);
	ck_assert_int_eq(v5->finalize(ctx), 0);
	/* a NULL context (init never ran) */
	cost_init(t);
	ck_assert_int_eq(v5->getCollInfo(NULL, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch), 0);
	ck_assert(same(t, ref));
}
END_TEST

/* Random tables, random cost tables with random unsupported entries,
 * random calls: the safety properties hold on every call. */
START_TEST(test_safety_properties)
{
	uint64_t r = 12345;
	void *ctx[4];
	int nforced = 0;

	bot_table_init(&tbl, 2, 7);
	tbl.allow = 0x55555;
	tbl.min_bytes_log2 = 10;
	bot_table_shape(&tbl, 16, 2);
	for (int c = 0; c < BOT_NCOLL; c++)
		for (int b = 0; b < 256; b += 3) {
			struct bot_table_entry *e = &tbl.entries[tbl.nentries++];

			memset(e, 0, sizeof(*e));
			r = bot_mix64(r);
			e->coll = (uint8_t)c;
			e->bucket = (uint8_t)b;
			e->plan.exploit = (uint8_t)(r % 22 == 21 ? BOT_ARM_AUTO : r % 21);
			e->plan.nchannels = (uint8_t)(r >> 8) % 65;
			e->plan.nprobe = 1;
			e->plan.probe[0].arm = (uint8_t)((r >> 16) % 21);
			e->plan.probe[0].lo = 0;
			e->plan.probe[0].hi = (uint16_t)(1 + (r >> 24) % 256);
		}
	set_table();
	/* contexts 0, 1 through v5 (NCCL 2.28: cap 3.6e9), 2, 3 through v6
	 * (2.30: cap FLT_MAX) */
	for (int i = 0; i < 4; i++) {
		ctx[i] = NULL;
		ck_assert_int_eq((i < 2 ? v5 : v6)->init(&ctx[i], COMM + (uint64_t)i, 16, 2, logger,
							 &nvl, &constants), 0);
	}
	for (int it = 0; it < 200000; it++) {
		static const float odd[] = { -0.0f, 0.0f, 1e-45f, 3.6e9f, FLT_MAX, INFINITY, NAN,
					     -NAN, -INFINITY, 0x1.ad2900p31f };
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int nch = 0, any = 0, changed = 0, zero_at = -1;
		int numAlgo = (r & 1) ? NALGO : 6;
		float cap = (it & 3) < 2 ? 3.6e9f : FLT_MAX;
		size_t nbytes;

		r = bot_mix64(r);
		for (int k = 0; k < NALGO * NPROTO; k++) {
			uint64_t z = bot_mix64(r + (uint64_t)k);

			/* some entries at or above NCCL's search cap (3.6e9 us
			 * up to 2.28, FLT_MAX from 2.29): NCCL never picks them,
			 * so they are never forced; and odd values */
			((float *)t)[k] = (z & 3) == 0 ? -1.0f : (z & 31) == 1 ? 4e9f :
					  (z & 31) == 2 ? odd[(z >> 8) % 10] :
					  (float)(z >> 40) / 1024.0f;
		}
		memcpy(ref, t, sizeof(t));
		nbytes = (size_t)(r >> (r & 63));
		ck_assert_int_eq(v5->getCollInfo(ctx[it & 3], (int)((r >> 8) % 7), nbytes, 1,
						 (float **)t, numAlgo, NPROTO, (int)(r >> 9) & 1, &nch), 0);
		for (int k = 0; k < numAlgo * NPROTO; k++) {
			float was = ((float *)ref)[k], now = ((float *)t)[k];

			if (was < 0.0f)
				ck_assert_msg(now == was, "revived entry %d", k);
			if (now >= 0.0f)
				any = 1;
			if (memcmp(&now, &was, sizeof(now))) {
				changed++;
				/* +0.0 exactly: never a negative value (2.31 picks it) */
				ck_assert(now == 0.0f && !signbit(now));
				zero_at = k;
			}
		}
		/* rows past numAlgo belong to nobody: never touched */
		for (int k = numAlgo * NPROTO; k < NALGO * NPROTO; k++)
			ck_assert(!memcmp(&((float *)t)[k], &((float *)ref)[k], sizeof(float)));
		ck_assert_int_le(changed, 1);
		nforced += changed;
		if (changed) {
			int algo = zero_at / NPROTO, best = -1;

			ck_assert(((float *)ref)[zero_at] >= 0.0f && ((float *)ref)[zero_at] < cap);
			/* a channel hint only where NCCL caps it (not CollNet/NVLS) */
			if (nch)
				ck_assert(algo == BOT_ALGO_RING || algo == BOT_ALGO_TREE ||
					  algo == BOT_ALGO_PAT);
			/* AUTO's argmin over usable entries, ties to the lowest index */
			for (int k = 0; k < numAlgo * NPROTO; k++)
				if (((float *)ref)[k] >= 0.0f && ((float *)ref)[k] < cap &&
				    (best < 0 || ((float *)ref)[k] < ((float *)ref)[best]))
					best = k;
			ck_assert(algo == BOT_ALGO_RING || algo == BOT_ALGO_TREE || algo == BOT_ALGO_PAT ||
				  (tbl.allow >> zero_at & 1) ||
				  bot_algo_family(algo) == bot_algo_family(best / NPROTO));
			ck_assert(nbytes >= 1024);
		} else if (nch) {
			/* forcing an entry that already was +0.0 changes nothing
			 * but nChannels */
			int zero = 0;

			for (int k = 0; k < numAlgo * NPROTO; k++)
				zero |= ((float *)ref)[k] == 0.0f && !signbit(((float *)ref)[k]);
			ck_assert(zero);
		}
		/* never empties: if an entry was >= 0 before, one still is */
		{
			int had = 0;

			for (int k = 0; k < numAlgo * NPROTO; k++)
				had |= ((float *)ref)[k] >= 0.0f;
			ck_assert_int_eq(any, had);
		}
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(v5->finalize(ctx[i]), 0);
	/* the properties were exercised on forced calls, not only on no-ops */
	ck_assert_int_gt(nforced, 10000);
}
END_TEST

/* Rank consistency in one process: two "ranks" of one comm (same commId)
 * decide identically whatever regBuff each passes. */
START_TEST(test_two_ranks_same_decisions)
{
	void *a, *b;
	uint64_t r = 1;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	table_probe(ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE), 0, 100);
	set_table();
	a = open5(COMM, 16, 2);
	b = open5(COMM, 16, 2);
	for (int i = 0; i < 10000; i++) {
		float ta[NALGO][NPROTO], tb2[NALGO][NPROTO];
		int na = 0, nb = 0;
		size_t n;

		r = bot_mix64(r);
		n = (size_t)(r >> (40 + (r & 15)));
		cost_init(ta);
		cost_init(tb2);
		v5->getCollInfo(a, (int)(r % 5), n, 1, (float **)ta, NALGO, NPROTO, 0, &na);
		v5->getCollInfo(b, (int)(r % 5), n, 1, (float **)tb2, NALGO, NPROTO, 1, &nb);
		ck_assert(same(ta, tb2));
		ck_assert_int_eq(na, nb);
	}
	v5->finalize(a);
	v5->finalize(b);
}
END_TEST

START_TEST(test_pool_and_malloc)
{
	static void *ctx[600];

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	for (int i = 0; i < 600; i++)
		ctx[i] = open5(COMM + (uint64_t)i, 16, 2);
	for (int i = 0; i < 600; i += 2)
		ck_assert_int_eq(v5->finalize(ctx[i]), 0);
	for (int i = 0; i < 600; i += 2)
		ctx[i] = open5(COMM + (uint64_t)i, 16, 2);
	for (int i = 0; i < 600; i++)
		ck_assert_int_eq(v5->finalize(ctx[i]), 0);
#ifdef BOT_FAIL_MALLOC
	/* pool exhausted and malloc failing: init fails with a named reason */
	for (int i = 0; i < 256; i++)
		ctx[i] = open5(COMM + (uint64_t)i, 16, 2);
	{
		void *c = (void *)1;
		int rc;

		fail_malloc = 1;
		rc = v5->init(&c, COMM, 16, 2, logger, &nvl, &constants);
		fail_malloc = 0;
		ck_assert_int_eq(rc, 3);
		ck_assert_ptr_nonnull(strstr(lastlog, "cannot allocate"));
	}
	for (int i = 0; i < 256; i++)
		ck_assert_int_eq(v5->finalize(ctx[i]), 0);
#endif
}
END_TEST

START_TEST(test_profiler_link)
{
	void *pctx = NULL, *h = (void *)1;
	int mask = 0x7ff;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	ck_assert_int_eq(p5->init(&pctx, COMM, &mask, "comm", 2, 16, 5, logger), 0);
	ck_assert_int_eq(mask, 0);
	ck_assert_int_eq(p5->startEvent(pctx, &h, NULL), 0);
	ck_assert_ptr_null(h);
	ck_assert_int_eq(p5->stopEvent(NULL), 0);
	ck_assert_int_eq(p5->recordEventState(NULL, 22, NULL), 0);
	{
		void *ctx = open5(COMM, 16, 2);

		ck_assert_ptr_nonnull(strstr(lastlog, "profiler rank 5"));
		v5->finalize(ctx);
		/* the link is consumed: the next comm has none */
		ctx = open5(COMM, 16, 2);
		ck_assert_ptr_nonnull(strstr(lastlog, "profiler rank -1"));
		v5->finalize(ctx);
	}
	/* events after the tuner's finalize still work */
	ck_assert_int_eq(p5->startEvent(pctx, &h, NULL), 0);
	ck_assert_int_eq(p5->finalize(pctx), 0);
}
END_TEST

START_TEST(test_debug_same_decisions)
{
	float t[NALGO][NPROTO];
	void *ctx;

	table_one(ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	set_table();
	setenv("NCCL_BOT_DEBUG", "1", 1);
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 8);
	ck_assert(t[1][2] == 0.0f);
	ck_assert_ptr_nonnull(strstr(lastlog, "forced"));
	v5->finalize(ctx);
}
END_TEST

/* ---- the policy on the prior, sweep, scale corrections ---------------------- */
/*
 * Expected decisions, written from man/nccl-bot.7 independently of
 * tuner/decide.c: AUTO = NCCL's argmin (entries >= 0, ties to the lowest index);
 * the allowed arms are bot_arm_allowed(a, AUTO, allow-list); the prior of
 * an arm is its entry times its correction (f32); PRIOR forces the argmin of
 * the prior, PROBE the runner-up (smallest prior strictly above the argmin's)
 * when it is within 2x (checked here in double, exactly); nothing is written
 * when the choice is AUTO's own. -1 = table untouched.
 */
static int auto_of(const float *t, int n)
{
	int best = -1;

	for (int i = 0; i < n; i++)
		if (t[i] >= 0.0f && (best < 0 || t[i] < t[best]))
			best = i;
	return best;
}

static int expect_prior(const float *t, int n, uint32_t allow, const float *corr, int probe)
{
	int a = auto_of(t, n), e = -1, r = -1, arm;
	float v[NALGO * NPROTO];

	if (a < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!(t[i] >= 0.0f) || !bot_arm_allowed(i, a, allow))
			continue;
		v[i] = corr ? t[i] * corr[i] : t[i];
		if (e < 0 || v[i] < v[e])
			e = i;
	}
	arm = e;
	if (probe) {
		for (int i = 0; i < n; i++)
			if (t[i] >= 0.0f && bot_arm_allowed(i, a, allow) && v[i] > v[e] &&
			    (r < 0 || v[i] < v[r]))
				r = i;
		if (r >= 0 && (double)v[r] <= 2.0 * (double)v[e])
			arm = r;
	}
	return arm == a ? -1 : arm;
}

/* The arm forced by the last call (the one entry that became 0.0), -1 if the
 * table is untouched; fails on anything else. */
static int forced_arm(const float *now, const float *was, int n)
{
	int arm = -1;

	for (int i = 0; i < NALGO * NPROTO; i++) {
		if (now[i] == was[i] && !memcmp(&now[i], &was[i], sizeof(float)))
			continue;
		ck_assert_msg(i < n && was[i] >= 0.0f && now[i] == 0.0f && arm < 0,
			      "entry %d changed from %g to %g", i, was[i], now[i]);
		arm = i;
	}
	return arm;
}

/* Random cost tables with -1 entries, ties and exact 2x steps. */
static void cost_random(float t[NALGO][NPROTO], uint64_t *r)
{
	static const float vals[] = { 10.0f, 20.0f, 20.000002f, 19.999998f, 40.0f, 5.0f, 12.5f,
				      25.0f, 100.0f, 0.001f };

	for (int k = 0; k < NALGO * NPROTO; k++) {
		uint64_t z;

		*r = bot_mix64(*r + (uint64_t)k);
		z = *r;
		if ((z & 7) < 2)
			((float *)t)[k] = -1.0f;
		else if ((z & 7) < 5)
			((float *)t)[k] = vals[(z >> 8) % (sizeof(vals) / sizeof(vals[0]))];
		else
			((float *)t)[k] = (float)((z >> 20) % 100000) / 64.0f;
	}
}

/* Learning policies without a table: probes by the probe bucket, the
 * runner-up rule, never elsewhere; the same for two contexts of one comm. */
START_TEST(test_no_table_probes)
{
	static const char *learn[] = { "egreedy", "ucb1", "thompson", "etc", "ucb1-cold",
				       "thompson-cold", "Thompson_Cold" };
	uint64_t r = 77, seed = 0x1234abcdULL;
	unsigned nprobe_ctx = 0, nctx = 0, nforced = 0;

	setenv("NCCL_BOT_SEED", "0x1234abcd", 1);
	for (unsigned p = 0; p < sizeof(learn) / sizeof(learn[0]); p++) {
		setenv("NCCL_BOT_POLICY", learn[p], 1);
		for (uint64_t k = 1; k <= 40; k++) {
			uint64_t comm = k * 0x9e3779b97f4a7c15ULL + p;
			void *a = open5(comm, 16, 2), *b = open5(comm, 16, 2);

			for (int it = 0; it < 200; it++) {
				float ta[NALGO][NPROTO], tb[NALGO][NPROTO], ref[NALGO][NPROTO];
				int coll, na = 0, nb = 0, got, want, pb_probe;
				size_t n;
				unsigned bucket;

				r = bot_mix64(r);
				coll = (int)(r % 5);
				n = (size_t)1 << (16 + (r >> 8) % 20);
				n += (size_t)((r >> 16) % n);
				bucket = bot_size_bucket(n);
				cost_random(ta, &r);
				memcpy(tb, ta, sizeof(ta));
				memcpy(ref, ta, sizeof(ta));
				ck_assert_int_eq(v5->getCollInfo(a, coll, n, 1, (float **)ta, NALGO,
								 NPROTO, 0, &na), 0);
				ck_assert_int_eq(v5->getCollInfo(b, coll, n, 1, (float **)tb, NALGO,
								 NPROTO, 1, &nb), 0);
				/* identical decisions, regBuff notwithstanding */
				ck_assert(same(ta, tb) && na == 0 && nb == 0);
				got = forced_arm((float *)ta, (float *)ref, NALGO * NPROTO);
				pb_probe = bot_probe_bucket(seed, comm,
							    bot_ctx_key((unsigned)coll, bucket, 16, 2),
							    0) < 16;
				want = n >= MiB && pb_probe ?
					       expect_prior((float *)ref, NALGO * NPROTO, 0, NULL, 1) : -1;
				ck_assert_msg(got == want, "policy %s comm %llx coll %d n %zu: got %d want %d",
					      learn[p], (unsigned long long)comm, coll, n, got, want);
				nctx++;
				nprobe_ctx += n >= MiB && pb_probe;
				nforced += got >= 0;
			}
			v5->finalize(a);
			v5->finalize(b);
		}
	}
	/* about 1 in 16 probes, and the probes did force something */
	ck_assert_uint_gt(nprobe_ctx, nctx / 40);
	ck_assert_uint_lt(nprobe_ctx, nctx / 8);
	ck_assert_uint_gt(nforced, 50);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* The runner-up rule on hand-made tables: strictly above, within 2x
 * (boundary exact), allowed arms only. */
START_TEST(test_runner_up_rule)
{
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];
	uint64_t comm = 0;
	void *ctx;
	int nch = 0;

	/* find a comm that probes allreduce at 2 MiB on (16, 2), seed 0 */
	while (bot_probe_bucket(0, comm, bot_ctx_key(4, 84, 16, 2), 0) >= 16)
		comm++;
	setenv("NCCL_BOT_POLICY", "ucb1", 1);
	ctx = open5(comm, 16, 2);
	for (int c = 0; c < 6; c++) {
		int want;

		for (int k = 0; k < NALGO * NPROTO; k++)
			((float *)t)[k] = -1.0f;
		t[1][2] = 10.0f;		/* AUTO: ring/simple */
		switch (c) {
		case 0:				/* exactly 2x: probed */
			t[0][2] = 20.0f;
			t[6][2] = 30.0f;
			want = ARM(0, 2);
			break;
		case 1:				/* one ulp above 2x: not probed */
			t[0][2] = 20.000002f;
			want = -1;
			break;
		case 2:				/* a tie with AUTO is not "above" */
			t[0][2] = 10.0f;
			t[0][1] = 15.0f;
			want = ARM(0, 1);
			break;
		case 3:				/* NVLS is cheaper but not allowed */
			t[4][2] = 11.0f;
			t[0][0] = 12.0f;
			want = ARM(0, 0);
			break;
		case 4:				/* another protocol of AUTO's algorithm */
			t[1][0] = 19.0f;
			t[0][0] = 19.5f;
			want = ARM(1, 0);
			break;
		default:			/* nothing else supported */
			want = -1;
			break;
		}
		memcpy(ref, t, sizeof(t));
		ck_assert_int_eq(v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0,
						 &nch), 0);
		ck_assert_int_eq(forced_arm((float *)t, (float *)ref, NALGO * NPROTO), want);
		ck_assert_int_eq(want, expect_prior((float *)ref, NALGO * NPROTO, 0, NULL, 1));
	}
	v5->finalize(ctx);
	/* NVLS joins with NCCL_BOT_ALLOW */
	setenv("NCCL_BOT_ALLOW", "nvls/simple", 1);
	ctx = open5(comm, 16, 2);
	for (int k = 0; k < NALGO * NPROTO; k++)
		((float *)t)[k] = -1.0f;
	t[1][2] = 10.0f;
	t[4][2] = 11.0f;
	t[0][0] = 12.0f;
	memcpy(ref, t, sizeof(t));
	v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch);
	ck_assert_int_eq(forced_arm((float *)t, (float *)ref, NALGO * NPROTO), ARM(4, 2));
	v5->finalize(ctx);
}
END_TEST

/* Policies that leave NCCL's choice without a table, and v3/v4 (no
 * commId) under learning policies: nothing is ever written. */
START_TEST(test_no_table_leave_alone)
{
	static const char *pols[] = { "auto", "shadow", "frozen", "greedy", "greedy-cold",
				      "thompson", "egreedy" };
	uint64_t r = 5;

	for (unsigned p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
		int learning = p >= 5;
		void *ctx[4];

		setenv("NCCL_BOT_POLICY", pols[p], 1);
		alllog[0] = '\0';
		if (learning) {
			ck_assert_int_eq(v4->init(16, 2, logger, &ctx[0]), 0);
			ck_assert_int_eq(v3->init(16, 2, logger, &ctx[1]), 0);
			ck_assert_ptr_nonnull(strstr(alllog, "no probes"));
		} else {
			for (int i = 0; i < 4; i++)
				ctx[i] = open5(COMM + (uint64_t)i * 0x1000193, 16, 2);
		}
		for (int it = 0; it < 20000; it++) {
			float t[NALGO][NPROTO], ref[NALGO][NPROTO];
			int nch = 0;
			size_t n;

			r = bot_mix64(r);
			n = (size_t)(r >> (r & 63));
			cost_random(t, &r);
			memcpy(ref, t, sizeof(t));
			if (learning && (it & 1))
				v3->getCollInfo(ctx[1], (int)(r % 5), n, 1, (float **)t, NALGO, NPROTO, &nch);
			else if (learning)
				v4->getCollInfo(ctx[0], (int)(r % 5), n, 1, (float **)t, NALGO, NPROTO, 0, &nch);
			else
				v5->getCollInfo(ctx[it & 3], (int)(r % 5), n, 1, (float **)t, NALGO,
						NPROTO, 0, &nch);
			ck_assert_msg(same(t, ref), "policy %s wrote the table", pols[p]);
			ck_assert_int_eq(nch, 0);
		}
		if (learning) {
			v4->destroy(ctx[0]);
			v3->destroy(ctx[1]);
		} else {
			for (int i = 0; i < 4; i++)
				v5->finalize(ctx[i]);
		}
	}
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* Bad values: a WARN naming the variable and the value, then the default. */
START_TEST(test_bad_env)
{
	/* the grammar of common/settings.h: no octal, no hex byte counts, no
	 * blanks or signs, switches 0/1 only */
	static const struct {
		const char *var, *val;
	} bad[] = {
		{ "NCCL_BOT_POLICY", "thompsn" },
		{ "NCCL_BOT_SEED", "12x" },
		{ "NCCL_BOT_SEED", "-1" },
		{ "NCCL_BOT_MIN_BYTES", "lots" },
		{ "NCCL_BOT_MIN_BYTES", "18446744073709551615" },
		{ "NCCL_BOT_ALLOW", "nvls/fast" },
		{ "NCCL_BOT_MIN_BYTES", "010" },
		{ "NCCL_BOT_MIN_BYTES", "0x200000" },
		{ "NCCL_BOT_MIN_BYTES", " 4194304" },
		{ "NCCL_BOT_SEED", "010" },
		{ "NCCL_BOT_SEED", "+7" },
		{ "NCCL_BOT_ALLOW", "nvls,,tree" },
		{ "NCCL_BOT_DEBUG", "yes" },
	};
	float t[NALGO][NPROTO], ref[NALGO][NPROTO];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {		/* a fresh process: WARNs are once per process */
			void *ctx;
			int st = 0;

			setenv("NCCL_BOT_POLICY", "greedy", 1);
			setenv(bad[i].var, bad[i].val, 1);
			nwarn = 0;
			ctx = open5(COMM, 16, 2);
			st |= nwarn != 1;
			st |= !strstr(alllog, bad[i].var) || !strstr(alllog, bad[i].val) ? 2 : 0;
			st |= !strstr(alllog, "default") || !strstr(alllog, "fix the launcher") ? 4 : 0;
			/* a bad policy name is auto, the rest keep greedy */
			st |= !strstr(alllog, i == 0 ? "policy auto" : "policy greedy") ? 8 : 0;
			/* a refused threshold is the default 2^20 */
			st |= !strstr(alllog, "min bytes 2^20") ? 16 : 0;
			v5->finalize(ctx);
			/* the second init of the process: no second WARN */
			ctx = open5(COMM, 16, 2);
			st |= nwarn != 1 ? 32 : 0;
			v5->finalize(ctx);
			_exit(st);
		}
		{
			int status;

			ck_assert_int_eq(waitpid(pid, &status, 0), pid);
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s=%s: status %d",
				      bad[i].var, bad[i].val, WEXITSTATUS(status));
		}
	}
	/* a bad seed decides as seed 0: the probes of thompson match */
	setenv("NCCL_BOT_POLICY", "thompson", 1);
	for (uint64_t comm = 1; comm < 300; comm++) {
		void *a, *b;
		float tb[NALGO][NPROTO];

		setenv("NCCL_BOT_SEED", "zero", 1);
		a = open5(comm, 16, 2);
		setenv("NCCL_BOT_SEED", "0", 1);
		b = open5(comm, 16, 2);
		call5(a, 4, 2 * MiB, t);
		call5(b, 4, 2 * MiB, tb);
		ck_assert(same(t, tb));
		v5->finalize(a);
		v5->finalize(b);
	}
	/* NCCL_BOT_MIN_BYTES rounds up to a power of two: 3 MB -> 4 MiB */
	setenv("NCCL_BOT_POLICY", "sweep", 1);
	setenv("NCCL_BOT_MIN_BYTES", "3000000", 1);
	{
		void *ctx = open5(COMM, 16, 2);

		ck_assert_ptr_nonnull(strstr(lastlog, "min bytes 2^22"));
		cost_init(ref);
		for (int i = 0; i < 8; i++) {
			call5(ctx, 4, 4 * MiB - 1, t);
			ck_assert(same(t, ref));
		}
		for (int i = 0, nf = 0; i < 8; i++) {
			call5(ctx, 4, 4 * MiB, t);
			nf += !same(t, ref);
			if (i == 7)
				ck_assert_int_gt(nf, 0);
		}
		v5->finalize(ctx);
	}
}
END_TEST

/* A first read of a refused variable without a logger (an init with a NULL
 * logger) reports nothing and uses nothing up: the next init with a logger
 * still WARNs, once. Before, the first read marked it reported. */
START_TEST(test_warn_after_silent_init)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {		/* a fresh process: WARNs are once per process */
		void *ctx = NULL;
		int st = 0;

		setenv("NCCL_BOT_POLICY", "thompsn", 1);
		if (v5->init(&ctx, COMM, 16, 2, NULL, &nvl, &constants) || !ctx)
			st |= 1;
		else
			v5->finalize(ctx);
		nwarn = 0;
		alllog[0] = '\0';
		ctx = open5(COMM, 16, 2);
		st |= nwarn != 1 ? 2 : 0;
		st |= !strstr(alllog, "thompsn") ? 4 : 0;
		v5->finalize(ctx);
		ctx = open5(COMM, 16, 2);
		st |= nwarn != 1 ? 8 : 0;
		v5->finalize(ctx);
		_exit(st);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d",
		      WEXITSTATUS(status));
}
END_TEST

/* Sweep: per context, the k-th allowed supported arm the ranks can measure
 * (or AUTO's own), k = calls mod count; the comm spans 2 nodes, so NVLS is
 * not measurable (policies/plan.h bot_arm_measurable). */
static void sweep_check(void *ctx, int with_allow_nvls)
{
	static const size_t sizes[] = { 2 * MiB, 3 * MiB, 64 * MiB };
	unsigned calls[BOT_NCOLL][3] = { { 0 } };
	uint64_t r = 99;

	for (int it = 0; it < 3000; it++) {
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int coll, si, list[NALGO * NPROTO], nl = 0, a, got, want, nch = 0;

		r = bot_mix64(r);
		coll = (int)(r % 5);
		si = (int)((r >> 8) % 3);
		cost_init(t);
		t[4][0] = t[4][1] = t[4][2] = 50.0f;	/* NVLS supported, not AUTO's */
		if ((r >> 16) & 1)
			t[1][1] = -1.0f;		/* LL128 off on some calls */
		memcpy(ref, t, sizeof(t));
		a = auto_of((float *)ref, NALGO * NPROTO);
		for (int k = 0; k < NALGO * NPROTO; k++)
			if (ref[k / 3][k % 3] >= 0.0f &&
			    bot_arm_allowed(k, a, with_allow_nvls ? 7u << 12 : 0) &&
			    (k == a || bot_arm_measurable(k, 2)))
				list[nl++] = k;
		want = list[calls[coll][si]++ % (unsigned)nl];
		ck_assert_int_eq(v5->getCollInfo(ctx, coll, sizes[si], 1, (float **)t, NALGO, NPROTO,
						 0, &nch), 0);
		got = forced_arm((float *)t, (float *)ref, NALGO * NPROTO);
		ck_assert_msg(got == (want == a ? -1 : want), "call %d coll %d size %zu: got %d want %d",
			      it, coll, sizes[si], got, want);
		/* allowed or not, NVLS across nodes is never swept */
		ck_assert(t[4][0] == 50.0f && t[4][1] == 50.0f && t[4][2] == 50.0f);
	}
}

START_TEST(test_sweep_no_table)
{
	void *ctx;

	setenv("NCCL_BOT_POLICY", "sweep", 1);
	ctx = open5(COMM, 16, 2);
	sweep_check(ctx, 0);
	v5->finalize(ctx);
	setenv("NCCL_BOT_ALLOW", "nvls", 1);
	ctx = open5(COMM, 16, 2);
	sweep_check(ctx, 1);
	v5->finalize(ctx);
	/* v4 (no commId) sweeps too: it counts calls, not commIds */
	{
		void *c4 = NULL;
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int nch = 0, nf = 0;

		unsetenv("NCCL_BOT_ALLOW");
		ck_assert_int_eq(v4->init(16, 2, logger, &c4), 0);
		cost_init(ref);
		for (int i = 0; i < 12; i++) {
			cost_init(t);
			v4->getCollInfo(c4, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch);
			nf += !same(t, ref);
		}
		/* 9 allowed supported arms (Tree, Ring, PAT): 8 of 9 forced */
		ck_assert_int_ge(nf, 10);
		v4->destroy(c4);
	}
}
END_TEST

/* NCCL_BOT_ALLOW=all at the ranks (common/settings.h): sweep cycles over
 * every supported arm the ranks can measure, NVLS on one node included,
 * CollNet and NVLS across nodes not (the profiler gives them no channels:
 * a sweep would measure nothing), and nothing is refused. */
START_TEST(test_allow_all_sweep)
{
	for (unsigned nodes = 1; nodes <= 2; nodes++) {
		unsigned seen[NALGO * NPROTO] = { 0 }, n = 0;
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		void *ctx;
		int nch = 0;

		for (int k = 0; k < NALGO * NPROTO; k++)
			n += bot_arm_measurable(k, nodes);
		ck_assert_uint_eq(n, nodes == 1 ? 15 : 12);
		setenv("NCCL_BOT_POLICY", "sweep", 1);
		setenv("NCCL_BOT_ALLOW", "all", 1);
		ctx = open5(COMM, 8 * nodes, nodes);
		ck_assert_int_eq(nwarn, 0);
		for (unsigned i = 0; i < 3 * n; i++) {
			int arm;

			for (int k = 0; k < NALGO * NPROTO; k++)
				((float *)ref)[k] = 10.0f + (float)k;	/* every arm supported */
			memcpy(t, ref, sizeof(t));
			ck_assert_int_eq(v5->getCollInfo(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, 1,
							 (float **)t, NALGO, NPROTO, 0, &nch), 0);
			arm = forced_arm((float *)t, (float *)ref, NALGO * NPROTO);
			seen[arm < 0 ? 0 : arm]++;	/* -1: AUTO's own, tree/ll */
		}
		for (int k = 0; k < NALGO * NPROTO; k++)
			ck_assert_msg(seen[k] == (bot_arm_measurable(k, nodes) ? 3u : 0u),
				      "%u nodes: arm %d swept %u times", nodes, k, seen[k]);
		v5->finalize(ctx);
	}
	/* "none" is the default spelled out: Ring, Tree, PAT and AUTO's only */
	{
		void *ctx;

		setenv("NCCL_BOT_ALLOW", "none", 1);
		ctx = open5(COMM, 16, 2);
		ck_assert_int_eq(nwarn, 0);
		sweep_check(ctx, 0);
		v5->finalize(ctx);
	}
}
END_TEST

/* Sweep from a table (policy id 1): table entries stay fixed, the rest
 * cycles; the table's allow-list counts. */
START_TEST(test_sweep_table)
{
	float t[NALGO][NPROTO];
	void *ctx;

	table_one(ARM(BOT_ALGO_TREE, BOT_PROTO_LL));
	tbl.entries[0].bucket = 88;	/* 4 MiB; sweep_check() uses 2, 3 and 64 MiB */
	tbl.policy = 1;
	tbl.allow = 7u << 12;
	set_table();
	ctx = open5(COMM, 16, 2);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(call5(ctx, 4, 4 * MiB, t), 8);
		ck_assert(t[0][0] == 0.0f);
	}
	sweep_check(ctx, 1);
	v5->finalize(ctx);
}
END_TEST

/* A table with corrections: allreduce/allgather at some bytes per rank. */
static float corr_f[BOT_NCOLL][64][NALGO * NPROTO];

static void table_corr(uint64_t *r)
{
	table_one(ARM(BOT_ALGO_TREE, BOT_PROTO_LL));
	for (int c = 0; c < BOT_NCOLL; c++)
		for (int l = 0; l < 64; l++)
			for (int a = 0; a < NALGO * NPROTO; a++)
				corr_f[c][l][a] = 1.0f;
	for (int c = 0; c < BOT_NCOLL; c++)
		for (int l = 14; l < 30; l++)
			for (int a = 0; a < NALGO * NPROTO; a++) {
				uint32_t q;

				*r = bot_mix64(*r);
				if (*r % 3 == 0)
					continue;
				q = (uint32_t)(*r >> 8) % 200000;
				if (*r % 7 == 0)
					q = 65536;
				tbl.corr[tbl.ncorr++] = (struct bot_table_corr){ (uint8_t)c, (uint8_t)a,
										  (uint8_t)l, q };
				corr_f[c][l][a] = (float)q / 65536.0f;
			}
}

START_TEST(test_corrections)
{
	uint64_t r = 4242;
	unsigned nforced = 0, ndiffer_auto = 0;
	void *ctx[3];

	table_corr(&r);
	set_table();
	/* (32, 4) and (8, 1): shapes not in the table; (16, 2): its shape */
	ctx[0] = open5(COMM, 32, 4);
	ck_assert_ptr_nonnull(strstr(lastlog, "correction rows"));
	ctx[1] = open5(COMM + 1, 8, 1);
	ctx[2] = open5(COMM + 2, 16, 2);
	for (int it = 0; it < 60000; it++) {
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int coll, k = it % 3, got, want, nch = 0;
		uint32_t nr = k == 0 ? 32 : k == 1 ? 8 : 16, nn = k == 0 ? 4 : k == 1 ? 1 : 2;
		unsigned bucket, l;
		size_t n;

		r = bot_mix64(r);
		coll = (int)(r % 5);
		n = (size_t)1 << (18 + (r >> 8) % 16);
		n += (size_t)((r >> 16) % n);
		bucket = bot_size_bucket(n);
		/* bytes per rank as policies/kb.c defines it */
		l = bot_kb_bpr_bucket(bot_ctx_key((unsigned)coll, bucket, nr, nn)) / 4;
		cost_random(t, &r);
		memcpy(ref, t, sizeof(t));
		ck_assert_int_eq(v5->getCollInfo(ctx[k], coll, n, 1, (float **)t, NALGO, NPROTO, 0,
						 &nch), 0);
		got = forced_arm((float *)t, (float *)ref, NALGO * NPROTO);
		if (k == 2 && coll == 4 && bucket == 84) {
			/* the table's own entry: unaffected by corrections */
			want = ref[0][0] >= 0.0f ? ARM(0, 0) : -1;
			ck_assert_int_eq(nch, ref[0][0] >= 0.0f ? 8 : 0);
		} else if (n < MiB) {
			want = -1;
		} else {
			want = expect_prior((float *)ref, NALGO * NPROTO, 0, corr_f[coll][l], 0);
		}
		ck_assert_msg(got == want, "it %d shape %u/%u coll %d n %zu l %u: got %d want %d", it,
			      nr, nn, coll, n, l, got, want);
		nforced += got >= 0;
		ndiffer_auto += got >= 0 && k != 2;
	}
	ck_assert_uint_gt(nforced, 5000);
	ck_assert_uint_gt(ndiffer_auto, 1000);
	for (int i = 0; i < 3; i++)
		v5->finalize(ctx[i]);
}
END_TEST

/* Corrections combined with probes (thompson), the auto policy ignoring
 * corrections, and the fixed arithmetic on special values. */
START_TEST(test_corrections_policies)
{
	uint64_t r = 31337;
	void *ctx;

	/* auto: never written, corrections or not */
	table_corr(&r);
	tbl.policy = 0;
	tbl.nentries = 0;
	set_table();
	ctx = open5(COMM, 32, 4);
	for (int it = 0; it < 5000; it++) {
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int nch = 0;

		r = bot_mix64(r);
		cost_random(t, &r);
		memcpy(ref, t, sizeof(t));
		v5->getCollInfo(ctx, (int)(r % 5), (size_t)1 << (20 + r % 10), 1, (float **)t, NALGO,
				NPROTO, 0, &nch);
		ck_assert(same(t, ref));
	}
	v5->finalize(ctx);

	/* thompson: probing comms take the runner-up by the corrected prior
	 * in a format 2 table; in a format 3 table no comm probes on the
	 * prior, every one takes the corrected prior's argmin (formats.md 8) */
	for (int ver = 2; ver <= 3; ver++) {
		table_corr(&r);
		tbl.policy = 5;
		tbl.version = (uint8_t)ver;
		set_table();
		for (uint64_t comm = 1; comm <= 64; comm++) {
			ctx = open5(comm, 32, 4);
			for (int it = 0; it < 100; it++) {
				float t[NALGO][NPROTO], ref[NALGO][NPROTO];
				int coll, nch = 0, pb, want;
				size_t n;
				unsigned bucket, l;

				r = bot_mix64(r);
				coll = (int)(r % 5);
				n = (size_t)1 << (20 + (r >> 8) % 12);
				bucket = bot_size_bucket(n);
				l = bot_kb_bpr_bucket(bot_ctx_key((unsigned)coll, bucket, 32, 4)) / 4;
				pb = ver < 3 &&
				     bot_probe_bucket(99, comm, bot_ctx_key((unsigned)coll, bucket, 32, 4), 0) < 16;
				cost_random(t, &r);
				memcpy(ref, t, sizeof(t));
				v5->getCollInfo(ctx, coll, n, 1, (float **)t, NALGO, NPROTO, 0, &nch);
				want = expect_prior((float *)ref, NALGO * NPROTO, 0, corr_f[coll][l], pb);
				ck_assert_int_eq(forced_arm((float *)t, (float *)ref, NALGO * NPROTO), want);
			}
			v5->finalize(ctx);
		}
	}

	/* zero, huge, infinite and -0.0 entries: decided, deterministic, safe */
	table_corr(&r);
	set_table();
	ctx = open5(COMM, 32, 4);
	{
		static const float special[] = { 0.0f, -0.0f, 3.0e38f, 1.0e-40f, 1.0f / 0.0f };

		for (int it = 0; it < 20000; it++) {
			float t[NALGO][NPROTO], ref[NALGO][NPROTO], t2[NALGO][NPROTO];
			int nch = 0;

			r = bot_mix64(r);
			cost_random(t, &r);
			for (int k = 0; k < 4; k++)
				((float *)t)[(r >> (8 + 5 * k)) % 21] = special[(r >> (30 + 3 * k)) % 5];
			memcpy(ref, t, sizeof(t));
			memcpy(t2, t, sizeof(t));
			v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t, NALGO, NPROTO, 0, &nch);
			v5->getCollInfo(ctx, 4, 2 * MiB, 1, (float **)t2, NALGO, NPROTO, 1, &nch);
			forced_arm((float *)t, (float *)ref, NALGO * NPROTO);
			ck_assert(same(t, t2));
		}
	}
	v5->finalize(ctx);
}
END_TEST

/* A context the table plans as "leave it to AUTO" (the exploit is AUTO's
 * arm, written BOT_ARM_AUTO, for every communicator outside the plan's
 * probe ranges, or with no probe at all) is left to NCCL: the rank adds no
 * probe of its own. The no-table probe (1 in 16 communicators, the prior's
 * runner-up within 2x) there spent exploration the planner's budget never
 * counted: the demo's job 2 ran ring/simple on one of its communicators of
 * a context whose state said ring/ll128 was 14 % faster. A context the
 * table does not name still gets the policy on the prior: in a format 2
 * table that probes 1 in 16 communicators; in a format 3 table it never
 * probes (formats.md 8: every probe a rank runs is one the planner
 * budgeted), and without corrections it leaves the call to NCCL. */
START_TEST(test_planned_auto_no_prior_probe)
{
	int probe = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
	unsigned low[2] = { 0, 0 }, ranged = 0, unplanned = 0, unprobed = 0;
	unsigned b64 = bot_size_bucket(64 * MiB);

	for (int run = 0; run < 4; run++) {
		int withprobe = run & 1, ver = run < 2 ? 2 : 3;

		table_one(BOT_ARM_AUTO);
		tbl.version = (uint8_t)ver;
		tbl.policy = BOT_POLICY_THOMPSON;
		tbl.entries[0].plan.nchannels = 0;
		if (withprobe)
			table_probe(probe, 128, 256);
		set_table();
		for (uint64_t k = 1; k <= 600; k++) {
			uint64_t comm = k * 0x9e3779b97f4a7c15ULL;
			unsigned pb = bot_probe_bucket(99, comm,
						       bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 16, 2), 0);
			unsigned pb64 = bot_probe_bucket(99, comm,
							 bot_ctx_key(BOT_COLL_ALLREDUCE, b64, 16, 2), 0);
			float t[NALGO][NPROTO], ref[NALGO][NPROTO];
			void *ctx = open5(comm, 16, 2);
			int want;

			cost_init(t);
			memcpy(ref, t, sizeof(t));
			call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, t);
			want = withprobe && pb >= 128 ? probe : -1;
			ck_assert_msg(forced_arm((float *)t, (float *)ref, NALGO * NPROTO) == want,
				      "planned AUTO: probe range %d comm %llx bucket %u: forced %d, want %d",
				      withprobe, (unsigned long long)comm, pb,
				      forced_arm((float *)t, (float *)ref, NALGO * NPROTO), want);
			low[withprobe] += pb < 16;
			ranged += withprobe && pb >= 128;
			/* 64 MiB has no entry: the policy on the prior; format
			 * 2 probes there, format 3 leaves it to NCCL */
			cost_init(t);
			memcpy(ref, t, sizeof(t));
			call5(ctx, BOT_COLL_ALLREDUCE, 64 * MiB, t);
			want = ver == 2 && pb64 < 16 ?
				expect_prior((float *)ref, NALGO * NPROTO, 0, NULL, 1) : -1;
			ck_assert_msg(forced_arm((float *)t, (float *)ref, NALGO * NPROTO) == want,
				      "format %d: unplanned 64 MiB comm %llx bucket %u: forced %d, want %d",
				      ver, (unsigned long long)comm, pb64,
				      forced_arm((float *)t, (float *)ref, NALGO * NPROTO), want);
			unplanned += ver == 2 && pb64 < 16 && want >= 0;
			unprobed += ver == 3 && pb64 < 16 &&
				    expect_prior((float *)ref, NALGO * NPROTO, 0, NULL, 1) >= 0;
			ck_assert_int_eq(v5->finalize(ctx), 0);
		}
	}
	/* the cases above all happened */
	ck_assert_uint_gt(low[0], 0);
	ck_assert_uint_gt(low[1], 0);
	ck_assert_uint_gt(ranged, 0);
	ck_assert_uint_gt(unplanned, 0);
	ck_assert_uint_gt(unprobed, 0);	/* format 3: comms that format 2 would probe */
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* A probe range of AUTO (BOT_ARM_AUTO, what the budgeted policies write for
 * a probe of AUTO's own arm while another arm is exploited) leaves those
 * communicators' calls to NCCL: no forced arm, no probe of the rank's own;
 * the other communicators run the exploit. */
START_TEST(test_probe_range_auto)
{
	int exploit = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
	unsigned in = 0, out = 0;

	table_one(exploit);
	tbl.policy = BOT_POLICY_THOMPSON;
	tbl.entries[0].plan.nchannels = 0;
	table_probe(BOT_ARM_AUTO, 128, 256);
	set_table();
	for (uint64_t k = 1; k <= 400; k++) {
		uint64_t comm = k * 0x9e3779b97f4a7c15ULL;
		unsigned pb = bot_probe_bucket(99, comm, bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 16, 2), 0);
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		void *ctx = open5(comm, 16, 2);

		cost_init(t);
		memcpy(ref, t, sizeof(t));
		call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, t);
		ck_assert_int_eq(forced_arm((float *)t, (float *)ref, NALGO * NPROTO),
				 pb >= 128 ? -1 : exploit);
		in += pb >= 128;
		out += pb < 128;
		ck_assert_int_eq(v5->finalize(ctx), 0);
	}
	ck_assert_uint_gt(in, 0);
	ck_assert_uint_gt(out, 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

/* The same planned AUTO in a version 1 table (an older srun's) is decided
 * as version 1's ranks decide it: the policy on the prior, so that ranks of
 * both builds given the same bytes agree (formats.md 8). */
START_TEST(test_planned_auto_v1_table)
{
	unsigned probed = 0;

	table_one(BOT_ARM_AUTO);
	tbl.version = 1;
	tbl.policy = BOT_POLICY_THOMPSON;
	tbl.entries[0].plan.nchannels = 0;
	set_table();
	ck_assert_int_eq(strncmp(getenv("NCCL_BOT_TABLE"), "NBT1.", 5), 0);
	for (uint64_t k = 1; k <= 600; k++) {
		uint64_t comm = k * 0x9e3779b97f4a7c15ULL;
		unsigned pb = bot_probe_bucket(99, comm, bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 16, 2), 0);
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		void *ctx = open5(comm, 16, 2);
		int want;

		cost_init(t);
		memcpy(ref, t, sizeof(t));
		call5(ctx, BOT_COLL_ALLREDUCE, 2 * MiB, t);
		want = pb < 16 ? expect_prior((float *)ref, NALGO * NPROTO, 0, NULL, 1) : -1;
		ck_assert_int_eq(forced_arm((float *)t, (float *)ref, NALGO * NPROTO), want);
		probed += want >= 0;
		ck_assert_int_eq(v5->finalize(ctx), 0);
	}
	ck_assert_uint_gt(probed, 0);
	ck_assert_int_eq(nwarn, 0);
}
END_TEST

static Suite *tuner_suite(void)
{
	Suite *s = suite_create("tuner");
	TCase *tc = tcase_create("so");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exports);
	tcase_add_test(tc, test_no_table_untouched);
	tcase_add_test(tc, test_forced_arm);
	tcase_add_test(tc, test_cap_per_version);
	tcase_add_test(tc, test_version_only_from_logger_object);
	tcase_add_test(tc, test_cap_sweep);
	tcase_add_test(tc, test_all_ignored);
	tcase_add_test(tc, test_never_revive);
	tcase_add_test(tc, test_arm_restriction);
	tcase_add_test(tc, test_min_bytes);
	tcase_add_test(tc, test_nccl_algo_env);
	tcase_add_test(tc, test_bad_digest_prior);
	tcase_add_test(tc, test_unknown_version_fails_init);
	tcase_add_test(tc, test_prefix_payload_mismatch);
	tcase_add_test(tc, test_unknown_policy);
	tcase_add_test(tc, test_shape_not_in_table);
	tcase_add_test(tc, test_probes);
	tcase_add_test(tc, test_v2_pass_through);
	tcase_add_test(tc, test_odd_inputs);
	tcase_add_test(tc, test_safety_properties);
	tcase_add_test(tc, test_two_ranks_same_decisions);
	tcase_add_test(tc, test_pool_and_malloc);
	tcase_add_test(tc, test_profiler_link);
	tcase_add_test(tc, test_debug_same_decisions);
	tcase_add_test(tc, test_no_table_probes);
	tcase_add_test(tc, test_runner_up_rule);
	tcase_add_test(tc, test_no_table_leave_alone);
	tcase_add_test(tc, test_bad_env);
	tcase_add_test(tc, test_warn_after_silent_init);
	tcase_add_test(tc, test_sweep_no_table);
	tcase_add_test(tc, test_allow_all_sweep);
	tcase_add_test(tc, test_sweep_table);
	tcase_add_test(tc, test_corrections);
	tcase_add_test(tc, test_corrections_policies);
	tcase_add_test(tc, test_planned_auto_no_prior_probe);
	tcase_add_test(tc, test_planned_auto_v1_table);
	tcase_add_test(tc, test_probe_range_auto);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(tuner_suite)
