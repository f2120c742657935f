/*
 * hotpath.c - cost of one getCollInfo call, side by side.
 *
 * Loads the built libnccl-tuner-bot.so with dlopen() as NCCL does, gives it
 * a step table with N contexts for the comm's shape (N = 1, 100, 2000), and
 * times ncclTunerPlugin_v5.getCollInfo on a stream of (collective, nBytes)
 * calls drawn from those contexts (plus misses), next to two references
 * called the same way through a function pointer:
 *   noop  - a plugin whose getCollInfo returns at once;
 *   scan  - NCCL's example tuner's shape: a linear scan of 100 rules
 *           (collective, byte range, nNodes, nRanks, numPipeOps, regBuff),
 *           first match wins (without the example's per-rule logging).
 * Calls are timed in batches of BATCH with CLOCK_MONOTONIC; the median and
 * p99 are over batches (ns per call). The cost table is NCCL's contiguous
 * float[7][3].
 *
 * The last row, "corr", is the slow path: the 2000-context table plus scale
 * corrections for every (collective, arm, log2 bytes per rank < 36), a comm
 * whose shape (64 ranks, 8 nodes) is not in the table, and calls of 1 KiB
 * .. 16 GiB, so every call takes the argmin of the corrected costs over the
 * allowed arms (tuner/decide.c bot_decide_dyn()).
 *
 * usage: hotpath SO [calls [corr]]          the table of results (with
 *                                           "corr": its corr row only)
 *        hotpath SO --count VARIANT N NCTX  run N calls only (for callgrind;
 *                                           NCTX "corr" = the corr row)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/table.h"
#include "policies/context.h"

#define BATCH 256
#define NSTREAM 4096
#define NRULES 100

typedef void (*logger_t)(int, unsigned long, const char *, int, const char *, ...);
typedef int (*gci_t)(void *ctx, int coll, size_t nbytes, int pipe, float **table, int na, int np,
		     int reg, int *nch);

struct tuner_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, logger_t log,
		    void *nvl, void *constants);
	gci_t getCollInfo;
	int (*finalize)(void *ctx);
};

struct rule {
	int coll;
	size_t lo, hi;
	int algo, proto, nch, nnodes, nranks, pipe, reg;
};

static struct rule rules[NRULES];
static int scan_nnodes = 2, scan_nranks = 16;

static int __attribute__((noinline)) noop_gci(void *ctx, int coll, size_t nbytes, int pipe,
					       float **table, int na, int np, int reg, int *nch)
{
	return 0;
}

static int __attribute__((noinline)) scan_gci(void *ctx, int coll, size_t nbytes, int pipe,
					       float **table, int na, int np, int reg, int *nch)
{
	float *t = (float *)table;

	for (int i = 0; i < NRULES; i++) {
		const struct rule *r = &rules[i];

		if (r->coll != coll || nbytes < r->lo || nbytes > r->hi)
			continue;
		if (r->nnodes != -1 && r->nnodes != scan_nnodes)
			continue;
		if (r->nranks != -1 && r->nranks != scan_nranks)
			continue;
		if (r->pipe != -1 && r->pipe != pipe)
			continue;
		if (r->reg != -1 && r->reg != reg)
			continue;
		if (r->algo < na && r->proto < np && t[r->algo * np + r->proto] >= 0.0f) {
			t[r->algo * np + r->proto] = 0.0f;
			if (r->nch > 0)
				*nch = r->nch;
		}
		return 0;
	}
	return 0;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng = bot_mix64(rng + 0x9e3779b97f4a7c15ULL);
	return rng;
}

static struct bot_table table;
static char text[BOT_TABLE_MAX_TEXT + 1];
static int s_coll[NSTREAM];
static size_t s_bytes[NSTREAM];
static int corr_mode;	/* add corrections; the comm's shape is not in the table */

/* A table with nctx contexts for shape (16, 2) and a call stream that hits
 * them (7 in 8) or misses. */
static void make_table(int nctx)
{
	bot_table_init(&table, 2, 1234);
	table.min_bytes_log2 = 0;
	bot_table_shape(&table, 16, 2);
	bot_table_shape(&table, 32, 4);
	/* 5 x 256 contexts per shape: past that, contexts of another shape */
	for (int i = 0; i < nctx; i++) {
		struct bot_table_entry *e = &table.entries[table.nentries++];
		int j = i % (BOT_NCOLL * BOT_NBUCKETS);

		memset(e, 0, sizeof(*e));
		e->shape = (uint8_t)(i / (BOT_NCOLL * BOT_NBUCKETS));
		e->coll = (uint8_t)(j % BOT_NCOLL);
		e->bucket = (uint8_t)(j / BOT_NCOLL);
		e->plan.exploit = (uint8_t)(next() % 2 ? bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE) :
					   bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL128));
		e->plan.nprobe = 1;
		e->plan.probe[0] = (struct bot_probe){ bot_arm(BOT_ALGO_RING, BOT_PROTO_LL), 0, 16 };
	}
	table.ncorr = 0;
	for (int c = 0; corr_mode && c < BOT_NCOLL; c++)
		for (int a = 0; a < BOT_NARMS; a++)
			for (int l = 0; l < 36; l++)
				table.corr[table.ncorr++] = (struct bot_table_corr){
					(uint8_t)c, (uint8_t)a, (uint8_t)l,
					(uint32_t)(32768 + next() % 65536) };
	if (bot_table_normalize(&table) || bot_table_encode(&table, text, sizeof(text)) < 0) {
		fprintf(stderr, "hotpath: cannot build a table of %d contexts\n", nctx);
		exit(1);
	}
	setenv("NCCL_BOT_TABLE", text, 1);
	for (int i = 0; i < NSTREAM; i++) {
		uint64_t r = next();

		if (corr_mode) {
			/* 1 KiB .. 16 GiB: every call through a correction row */
			size_t lo = (size_t)1 << (10 + (r >> 8) % 25);

			s_coll[i] = (int)(r >> 40) % BOT_NCOLL;
			s_bytes[i] = lo + (size_t)(r >> 20) % lo;
		} else if (r % 8 == 0 || nctx == 0) {
			s_coll[i] = (int)(r >> 8) % BOT_NCOLL;
			s_bytes[i] = (size_t)1 << (r >> 16) % 40;
		} else {
			int n = nctx < BOT_NCOLL * BOT_NBUCKETS ? nctx : BOT_NCOLL * BOT_NBUCKETS;
			const struct bot_table_entry *e = &table.entries[(r >> 8) % (uint64_t)n];
			uint64_t lo = bot_bucket_lo(e->bucket);

			s_coll[i] = e->coll;
			s_bytes[i] = (size_t)(lo ? lo : 1);
		}
	}
}

static void make_rules(void)
{
	for (int i = 0; i < NRULES; i++) {
		struct rule *r = &rules[i];
		uint64_t x = next();

		r->coll = (int)(i % BOT_NCOLL);
		r->lo = (size_t)1 << (i / BOT_NCOLL * 2);
		r->hi = r->lo * 4 - 1;
		r->algo = (int)(x % 2);
		r->proto = 2;
		r->nch = -1;
		r->nnodes = -1;
		r->nranks = -1;
		r->pipe = -1;
		r->reg = -1;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static float cost[7][3];

static void run(gci_t fn, void *ctx, long ncalls)
{
	int nch = 0;

	for (long i = 0; i < ncalls; i++) {
		int k = (int)(i & (NSTREAM - 1));

		fn(ctx, s_coll[k], s_bytes[k], 1, (float **)cost, 7, 3, 0, &nch);
	}
}

/* Median and p99 ns per call over batches. */
static void measure(gci_t volatile fn, void *ctx, long ncalls, double *med, double *p99)
{
	long nb = ncalls / BATCH;
	double *v = malloc(sizeof(double) * (size_t)nb);
	int nch = 0;

	run(fn, ctx, ncalls / 10);	/* warm up */
	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (int i = 0; i < BATCH; i++) {
			int k = (int)((b * BATCH + i) & (NSTREAM - 1));

			fn(ctx, s_coll[k], s_bytes[k], 1, (float **)cost, 7, 3, 0, &nch);
		}
		v[b] = (now_ns() - t0) / BATCH;
	}
	qsort(v, (size_t)nb, sizeof(double), cmp_double);
	*med = v[nb / 2];
	*p99 = v[nb * 99 / 100];
	free(v);
}

int main(int argc, char **argv)
{
	static const int nctxs[] = { 1, 100, 2000 };
	const struct tuner_v5 *t5;
	long ncalls = 4000000;
	int corr_only;
	void *so;

	if (argc < 2) {
		fprintf(stderr, "usage: hotpath SO [calls] | hotpath SO --count noop|scan|bot N NCTX\n");
		return 2;
	}
	so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!so || !(t5 = dlsym(so, "ncclTunerPlugin_v5"))) {
		fprintf(stderr, "hotpath: %s: %s\n", argv[1], dlerror());
		return 1;
	}
	for (int a = 0; a < 7; a++)
		for (int p = 0; p < 3; p++)
			cost[a][p] = a == 2 || a == 3 || a == 5 ? -1.0f : 10.0f + (float)(a * 3 + p);
	make_rules();

	if (argc == 6 && !strcmp(argv[2], "--count")) {
		long n = atol(argv[4]);
		void *ctx = NULL;

		corr_mode = !strcmp(argv[5], "corr");
		make_table(corr_mode ? 2000 : atoi(argv[5]));
		if (t5->init(&ctx, 0xabcdefULL, corr_mode ? 64 : 16, corr_mode ? 8 : 2, NULL, NULL,
			     NULL))
			return 1;
		run(!strcmp(argv[3], "bot") ? t5->getCollInfo :
		    !strcmp(argv[3], "scan") ? scan_gci : noop_gci, ctx, n);
		t5->finalize(ctx);
		return 0;
	}
	if (argc > 2)
		ncalls = atol(argv[2]);
	corr_only = argc > 3 && !strcmp(argv[3], "corr");

	printf("%-9s %10s %10s %10s %10s %10s %10s %9s %9s\n", "contexts", "bot_med", "bot_p99",
	       "noop_med", "scan_med", "scan_p99", "bot-noop", "bot/scan", "(-noop)");
	for (unsigned i = 0; i <= sizeof(nctxs) / sizeof(nctxs[0]); i++) {
		double bm, bp, nm, np, sm, sp;
		void *ctx = NULL;

		corr_mode = i == sizeof(nctxs) / sizeof(nctxs[0]);
		if (corr_only && !corr_mode)
			continue;
		make_table(corr_mode ? 2000 : nctxs[i]);
		if (t5->init(&ctx, 0xabcdefULL, corr_mode ? 64 : 16, corr_mode ? 8 : 2, NULL, NULL,
			     NULL)) {
			fprintf(stderr, "hotpath: init failed\n");
			return 1;
		}
		measure(noop_gci, NULL, ncalls, &nm, &np);
		measure(t5->getCollInfo, ctx, ncalls, &bm, &bp);
		measure(scan_gci, NULL, ncalls, &sm, &sp);
		if (corr_mode)
			printf("%-9s", "corr");
		else
			printf("%-9d", nctxs[i]);
		printf(" %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.3f %9.3f\n", bm, bp,
		       nm, sm, sp, bm - nm, bm / sm, (bm - nm) / (sm - nm > 0 ? sm - nm : 1));
		t5->finalize(ctx);
	}
	return 0;
}
