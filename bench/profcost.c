/*
 * profcost.c - what measurement costs, side by side (run by hotpath.sh).
 *
 * Loads the built libnccl-tuner-bot.so as NCCL does and prints:
 *  1. ns per getCollInfo without a spool (no measurement object: the hot
 *     path as decided) and with NCCL_BOT_SPOOL set (the window down-counter;
 *     the 1% window calls, which copy the cost row, included);
 *  2. profiler cost per collective, the event sequence NCCL 2.28 emits for
 *     one collective on 8 channels: GroupApi, CollApi, Group, Coll start/
 *     stop plus 8 x KernelCh start/KernelChStop/stop (all on one thread
 *     here), with the mask at 0 (NCCL checks the mask and calls nothing)
 *     versus a window open (every event delivered, a sample spooled).
 * Medians over batches; ns per call or per collective.
 *
 * usage: profcost SO [calls]
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the client side of the ABI, as the emulator declares it (not the plugin's own) */
#include "tests/emulator/nccl_abi.h"

#define BATCH 256

static const struct emu_tuner_v5 *t5;
static const struct emu_profiler_v5 *p5;
static volatile int mask;
static float cost[7][3];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return v[n / 2];
}

static double gci_median(void *ctx, long ncalls)
{
	long nb = ncalls / BATCH;
	double *v = malloc(sizeof(double) * (size_t)nb), m;
	int nch = 0;

	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (int i = 0; i < BATCH; i++)
			t5->getCollInfo(ctx, 4, (size_t)4 << 20, 1, (float **)cost, 7, 3, 0, &nch);
		v[b] = (now_ns() - t0) / BATCH;
	}
	m = median(v, nb);
	free(v);
	return m;
}

static uint64_t seq, clk;

/* One collective's events as NCCL emits them; deliver = mask on. */
static void one(void *pctx, int deliver)
{
	void *hg = NULL, *hc = NULL, *hgrp = NULL, *hcoll = NULL, *hk[8];
	struct emu_prof_descr_v5 d;

	if (!(mask | deliver))
		return;		/* NCCL: mask 0, the plugin is not called */
	memset(&d, 0, sizeof(d));
	d.type = 1u << 8;
	p5->startEvent(pctx, &hg, &d);
	memset(&d, 0, sizeof(d));
	d.type = 1u << 9;
	d.parentObj = hg;
	d.collApi.func = "AllReduce";
	d.collApi.count = 1 << 20;
	d.collApi.datatype = "ncclFloat32";
	p5->startEvent(pctx, &hc, &d);
	p5->stopEvent(hc);
	memset(&d, 0, sizeof(d));
	d.type = 1;
	p5->startEvent(pctx, &hgrp, &d);
	memset(&d, 0, sizeof(d));
	d.type = 2;
	d.parentObj = hc;
	d.coll.seqNumber = seq++;
	d.coll.func = "AllReduce";
	d.coll.count = 1 << 20;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = 8;
	d.coll.algo = "RING";
	d.coll.proto = "SIMPLE";
	d.coll.parentGroup = hgrp;
	p5->startEvent(pctx, &hcoll, &d);
	p5->stopEvent(hcoll);
	p5->stopEvent(hgrp);
	p5->stopEvent(hg);
	for (int c = 0; c < 8; c++) {
		memset(&d, 0, sizeof(d));
		d.type = 1u << 6;
		d.parentObj = hcoll;
		d.kernelCh.channelId = (uint8_t)c;
		d.kernelCh.pTimer = clk + (uint64_t)c;
		hk[c] = NULL;
		p5->startEvent(pctx, &hk[c], &d);
	}
	for (int c = 0; c < 8; c++) {
		union emu_prof_state_v5 stop = { .kernelCh.pTimer = clk + 100000 };

		p5->recordEventState(hk[c], 22, &stop);
		p5->stopEvent(hk[c]);
	}
	clk += 200000;
}

static double prof_median(void *pctx, int deliver, long n)
{
	long nb = n / 64;
	double *v = malloc(sizeof(double) * (size_t)nb), m;

	for (long b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (int i = 0; i < 64; i++)
			one(pctx, deliver);
		v[b] = (now_ns() - t0) / 64;
	}
	m = median(v, nb);
	free(v);
	return m;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/profcost.XXXXXX", cmd[64];
	long ncalls = argc > 2 ? atol(argv[2]) : 4000000;
	void *so, *tctx = NULL, *pctx = NULL, *tctx2 = NULL, *pctx2 = NULL;
	double off, on, poff, pon;

	if (argc < 2) {
		fprintf(stderr, "usage: profcost SO [calls]\n");
		return 2;
	}
	so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!so || !(t5 = dlsym(so, "ncclTunerPlugin_v5")) || !(p5 = dlsym(so, "ncclProfiler_v5"))) {
		fprintf(stderr, "profcost: %s: %s\n", argv[1], dlerror());
		return 1;
	}
	for (int a = 0; a < 7; a++)
		for (int p = 0; p < 3; p++)
			cost[a][p] = a == 2 || a == 3 || a == 5 ? -1.0f : 10.0f + (float)(a * 3 + p);
	unsetenv("NCCL_BOT_TABLE");
	unsetenv("NCCL_BOT_SPOOL");
	p5->init(&pctx, 0xabcdefULL, (int *)&mask, "bench", 2, 16, 0, NULL);
	t5->init(&tctx, 0xabcdefULL, 16, 2, NULL, NULL, NULL);
	if (!mkdtemp(dir))
		return 1;
	setenv("NCCL_BOT_SPOOL", dir, 1);
	p5->init(&pctx2, 0xabcdef1ULL, (int *)&mask, "bench", 2, 16, 0, NULL);
	t5->init(&tctx2, 0xabcdef1ULL, 16, 2, NULL, NULL, NULL);

	gci_median(tctx, ncalls / 10);
	off = gci_median(tctx, ncalls);
	on = gci_median(tctx2, ncalls);
	printf("getCollInfo ns/call (median): no spool %.2f, measuring (window down-counter) %.2f, "
	       "difference %.2f ns, ratio %.3f\n", off, on, on - off, on / off);
	mask = 0;
	poff = prof_median(pctx2, 0, 40000);
	pon = prof_median(pctx2, 1, 40000);
	printf("profiler ns per collective (median; 8 channels, events on one thread): "
	       "mask 0 %.2f, window on %.2f, ratio %.1fx; at 1%% duty %.2f ns per collective\n",
	       poff, pon, poff > 0 ? pon / poff : 0.0, poff * 0.99 + pon * 0.01);
	t5->finalize(tctx);
	t5->finalize(tctx2);
	p5->finalize(pctx);
	p5->finalize(pctx2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? 1 : 0;
}
