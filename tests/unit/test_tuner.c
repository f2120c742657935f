/*
 * test_tuner.c - the BUILT libnccl-tuner-bot.so driven exactly as NCCL does.
 *
 * dlopen()s the library by absolute path (BOT_TUNER_SO, or $BOT_TUNER_SO),
 * finds the plugin structs with dlsym(), and calls them with NCCL's real
 * calling convention: v5 init(ctx, commId, nRanks, nNodes, logger, nvl,
 * constants), getCollInfo with a CONTIGUOUS float[7][3] cost table cast to
 * float** (never row pointers), finalize. The layouts are declared here
 * independently of tuner/nccl_abi.h, from the ABI notes, so a mistake in
 * the plugin's header is not shared by its test.
 *
 * Checks: never revives a -1 entry, never empties the table, always returns
 * success, a forced arm is a 0.0 entry, and the cases that must leave the
 * table untouched (no table, NCCL_ALGO/NCCL_PROTO, below min bytes, bad
 * digest, unknown shape, arms outside Ring/Tree/PAT/AUTO's/allow-list); an
 * unknown table version and an allocation failure fail init.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/table.h"
#include "policies/context.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif

/* ---- NCCL's side of the ABI (ABI notes section 1.1, 2.1) ----------------- */

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

static void setup(void)
{
	const char *path = getenv("BOT_TUNER_SO");

	if (!path || !*path)
		path = BOT_TUNER_SO;
	unsetenv("NCCL_BOT_TABLE");
	unsetenv("NCCL_BOT_POLICY");
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
static char text[BOT_TABLE_MAX_TEXT + 1];

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
	/* a policy name without a table: auto, logged */
	setenv("NCCL_BOT_POLICY", "thompson", 1);
	ctx = open5(COMM, 16, 2);
	ck_assert_ptr_nonnull(strstr(alllog, "needs a step table"));
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 0);
	ck_assert(same(t, ref));
	ck_assert_int_eq(v5->finalize(ctx), 0);
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
	ck_assert(t[4][2] == 0.0f && t[4][1] == 1.0f && nch == 8);
	ck_assert_int_eq(v5->finalize(ctx), 0);

	/* on the allow-list: forced even when AUTO prefers Tree */
	table_one(nvls);
	tbl.allow = 1u << nvls;
	set_table();
	ctx = open5(COMM, 16, 2);
	ck_assert_int_eq(call5(ctx, 4, 2 * MiB, t), 8);
	ck_assert(t[4][2] == 0.0f);
	ck_assert_int_eq(v5->finalize(ctx), 0);

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
	tbl.entries[0].plan.nprobe = 1;
	tbl.entries[0].plan.probe[0].arm = (uint8_t)probe;
	tbl.entries[0].plan.probe[0].lo = 0;
	tbl.entries[0].plan.probe[0].hi = 128;
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
	for (int i = 0; i < 4; i++)
		ctx[i] = open5(COMM + (uint64_t)i, 16, 2);
	for (int it = 0; it < 200000; it++) {
		float t[NALGO][NPROTO], ref[NALGO][NPROTO];
		int nch = 0, any = 0, changed = 0, zero_at = -1;
		int numAlgo = (r & 1) ? NALGO : 6;
		size_t nbytes;

		r = bot_mix64(r);
		for (int k = 0; k < NALGO * NPROTO; k++) {
			uint64_t z = bot_mix64(r + (uint64_t)k);

			((float *)t)[k] = (z & 3) == 0 ? -1.0f : (float)(z >> 40) / 1024.0f;
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
			if (now != was) {
				changed++;
				ck_assert(now == 0.0f);
				zero_at = k;
			}
		}
		/* rows past numAlgo belong to nobody: never touched */
		for (int k = numAlgo * NPROTO; k < NALGO * NPROTO; k++)
			ck_assert(((float *)t)[k] == ((float *)ref)[k]);
		ck_assert_int_le(changed, 1);
		nforced += changed;
		if (changed) {
			int algo = zero_at / NPROTO, best = -1;

			/* AUTO's argmin over entries >= 0, ties to the lowest index */
			for (int k = 0; k < numAlgo * NPROTO; k++)
				if (((float *)ref)[k] >= 0.0f &&
				    (best < 0 || ((float *)ref)[k] < ((float *)ref)[best]))
					best = k;
			ck_assert(algo == BOT_ALGO_RING || algo == BOT_ALGO_TREE || algo == BOT_ALGO_PAT ||
				  (tbl.allow >> zero_at & 1) || algo == best / NPROTO);
			ck_assert(nbytes >= 1024);
		} else {
			ck_assert_int_eq(nch, 0);
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
	tbl.entries[0].plan.nprobe = 1;
	tbl.entries[0].plan.probe[0] = (struct bot_probe){ ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE), 0, 100 };
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

static Suite *tuner_suite(void)
{
	Suite *s = suite_create("tuner");
	TCase *tc = tcase_create("so");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_exports);
	tcase_add_test(tc, test_no_table_untouched);
	tcase_add_test(tc, test_forced_arm);
	tcase_add_test(tc, test_never_revive);
	tcase_add_test(tc, test_arm_restriction);
	tcase_add_test(tc, test_min_bytes);
	tcase_add_test(tc, test_nccl_algo_env);
	tcase_add_test(tc, test_bad_digest_prior);
	tcase_add_test(tc, test_unknown_version_fails_init);
	tcase_add_test(tc, test_shape_not_in_table);
	tcase_add_test(tc, test_probes);
	tcase_add_test(tc, test_v2_pass_through);
	tcase_add_test(tc, test_odd_inputs);
	tcase_add_test(tc, test_safety_properties);
	tcase_add_test(tc, test_two_ranks_same_decisions);
	tcase_add_test(tc, test_pool_and_malloc);
	tcase_add_test(tc, test_profiler_link);
	tcase_add_test(tc, test_debug_same_decisions);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tuner_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
