/*
 * test_spool.c - measurement and spool, end to end through the BUILT
 * libnccl-tuner-bot.so: dlopen() by path, profiler init then tuner init,
 * getCollInfo with NCCL's contiguous float[7][3] table, and the profiler
 * events NCCL 2.28 emits while the process-global mask asks for them
 * (GroupApi/CollApi, Group, Coll on the "launch" thread; KernelCh start /
 * KernelChStop / stop with fake pTimers from a proxy thread), then the
 * spool file read back with the tools' reader (common/spool.h).
 *
 * Checks: sample durations and arm attribution from the descriptor (not
 * the decision), AUTO's and the decided arm, the cost row, labels
 * (aggregate, channels missing, out of range, first use of an algorithm),
 * windows and the duty cycle, nothing below min bytes, nothing during
 * capture, late KernelCh events after the tuner's finalize and after the
 * profiler's finalize, records missing a KernelCh completed after the stuck
 * timeout, the threshold/policy spelled as the tuner reads them, NaN and
 * infinite cost entries, a chdir() and a planted temporary file, no write
 * from a forked child, corrupt files rejected with reasons, and `nccl-bot
 * spool sweep` output accepted by bot_sweep_parse. The ABI layouts are the
 * emulator's (tests/emulator/nccl_abi.h, per version, from NCCL's facts in
 * doc/nccl-abi.md), independent of tuner/'s.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/sweep.h"
#include "common/table.h"
#include "policies/context.h"
#include "tests/emulator/nccl_abi.h"
#include "tests/unit/testutil.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif
#ifndef BOT_NCCL_BOT
#define BOT_NCCL_BOT "./nccl-bot"
#endif

/* The client side of the ABI as the emulator declares it, independently of
 * the plugin's own tuner/nccl_abi.h. */
typedef emu_logger_t logger_t;
typedef struct emu_tuner_v5 tuner_v5_t;
typedef struct emu_profiler_v5 profiler_v5_t;

#define EV_GROUP 1u
#define EV_COLL 2u
#define EV_KCH 64u
#define EV_GROUP_API 256u
#define EV_COLL_API 512u
#define KCH_STOP 22

#define NALGO 7
#define NPROTO 3
#define MiB (1024 * 1024)
#define COMM 0x5eed5eed12345678ULL

static const char *algo_str[] = { "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
				  "NVLS_TREE", "PAT" };
static const char *proto_str[] = { "LL", "LL128", "SIMPLE" };
static const char *func_str[] = { "Broadcast", "Reduce", "AllGather", "ReduceScatter",
				  "AllReduce" };

static void *so;
static const tuner_v5_t *t5;
static const profiler_v5_t *p5;
static char dir[64];	/* the spool directory, one per test */

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
}

/* ---- an emulated NCCL for one comm ---------------------------------------- */

struct kop {			/* one Coll's KernelCh work for the proxy */
	void *pctx;
	void *coll;
	int nch, reported;	/* channels reported (< nch: missing) */
	uint64_t t0, dur;
	int bad_stop;		/* stop before start */
};

struct comm {
	void *pctx, *tctx;
	int mask;		/* NCCL's process-global ncclProfilerEventMask */
	uint64_t seq[5];
	uint64_t clock;
	/* proxy thread */
	pthread_t proxy;
	pid_t proxy_tid;	/* the thread that delivers KernelCh events */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct kop q[4096];
	unsigned head, tail;
	int stop;
	int hold;		/* deliver nothing until stop */
	/* counters */
	unsigned measured;	/* Coll events delivered with a non-NULL handle */
};

/* What each call looks like. */
struct opts {
	int ncoll;		/* Colls in the group (same func/algo/proto): 2 = aggregate */
	int force_arm;		/* descriptor arm (-1: NCCL's argmin after the tuner) */
	int nch;		/* descriptor nChannels */
	int reported;		/* KernelCh channels reported (default nch) */
	uint64_t dur_ns;
	int captured;
	int bad_stop;
};

static void deliver(const struct kop *k)
{
	void *h[64];

	for (int c = 0; c < k->reported; c++) {
		struct emu_prof_descr_v5 d;

		memset(&d, 0, sizeof(d));
		d.type = EV_KCH;
		d.parentObj = k->coll;
		d.kernelCh.channelId = (uint8_t)c;
		d.kernelCh.pTimer = k->t0 + 7 * (uint64_t)c;	/* channel skew */
		h[c] = NULL;
		p5->startEvent(k->pctx, &h[c], &d);
	}
	for (int c = 0; c < k->reported; c++) {
		union emu_prof_state_v5 stop = {
			.kernelCh.pTimer = k->bad_stop ? k->t0 : k->t0 + k->dur - 5 * (uint64_t)c
		};

		if (!h[c])
			continue;
		p5->recordEventState(h[c], KCH_STOP, &stop);
		p5->stopEvent(h[c]);
	}
}

static void *proxy_main(void *arg)
{
	struct comm *c = arg;

	__atomic_store_n(&c->proxy_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while ((c->head == c->tail || c->hold) && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->head == c->tail && c->stop)
			break;
		{
			struct kop k = c->q[c->tail % 4096];

			pthread_mutex_unlock(&c->mu);
			deliver(&k);
			pthread_mutex_lock(&c->mu);
			c->tail++;
			pthread_cond_broadcast(&c->cv);
		}
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static void push(struct comm *c, const struct kop *k)
{
	pthread_mutex_lock(&c->mu);
	while (c->head - c->tail == 4096)
		pthread_cond_wait(&c->cv, &c->mu);
	c->q[c->head++ % 4096] = *k;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void drain(struct comm *c)
{
	pthread_mutex_lock(&c->mu);
	while (c->head != c->tail)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

static void comm_open_log(struct comm *c, int rank, logger_t log)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	ck_assert_int_eq(p5->init(&c->pctx, COMM, &c->mask, "test", 2, 16, rank, log), 0);
	ck_assert_int_eq(t5->init(&c->tctx, COMM, 16, 2, log, NULL, NULL), 0);
	ck_assert_int_eq(pthread_create(&c->proxy, NULL, proxy_main, c), 0);
}

static void comm_open(struct comm *c, int rank)
{
	comm_open_log(c, rank, logger);
}

static void proxy_stop(struct comm *c)
{
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->proxy, NULL);
}

/* NCCL teardown order: tuner finalize, proxy drains, profiler finalize. */
static void comm_close(struct comm *c)
{
	ck_assert_int_eq(t5->finalize(c->tctx), 0);
	proxy_stop(c);
	ck_assert_int_eq(p5->finalize(c->pctx), 0);
}

static int cost_poison;	/* NaN, inf and >= 3.6e9 entries in the table */

static void cost_init(float t[NALGO][NPROTO])
{
	for (int a = 0; a < NALGO; a++)
		for (int p = 0; p < NPROTO; p++)
			t[a][p] = 100.0f + (float)(a * NPROTO + p);
	if (cost_poison) {
		t[0][0] = NAN;
		t[0][1] = INFINITY;
		t[6][0] = 4e9f;
		t[4][1] = -0.0f;	/* written as 0, never -0 */
	}
	t[1][2] = 90.0f;	/* AUTO: ring/simple */
	t[2][0] = t[2][1] = t[2][2] = -1.0f;
	t[3][0] = t[3][1] = t[3][2] = -1.0f;
	t[5][0] = t[5][1] = t[5][2] = -1.0f;
}

static int argmin(const float *t)
{
	int best = -1;

	for (int i = 0; i < NALGO * NPROTO; i++)
		if (t[i] >= 0 && (best < 0 || t[i] < t[best]))
			best = i;
	return best;
}

/* One collective: API-time mask, API events, getCollInfo, Group/Coll, and
 * the KernelCh work queued to the proxy. Returns NCCL's arm. */
static int call(struct comm *c, int coll, size_t nbytes, const struct opts *o)
{
	int mask = __atomic_load_n(&c->mask, __ATOMIC_RELAXED);
	int want = mask & (EV_COLL | EV_KCH), nch = 0, arm, n = o->ncoll ? o->ncoll : 1;
	float t[NALGO][NPROTO];
	void *hg = NULL, *hc = NULL, *hgrp = NULL, *h[8] = { 0 };
	struct emu_prof_descr_v5 d;

	if (want) {
		memset(&d, 0, sizeof(d));
		d.type = EV_GROUP_API;
		d.groupApi.graphCaptured = o->captured;
		p5->startEvent(c->pctx, &hg, &d);
		memset(&d, 0, sizeof(d));
		d.type = EV_COLL_API;
		d.parentObj = hg;
		d.collApi.func = func_str[coll];
		d.collApi.count = nbytes / 4;
		d.collApi.datatype = "ncclFloat32";
		d.collApi.graphCaptured = o->captured;
		p5->startEvent(c->pctx, &hc, &d);
		p5->stopEvent(hc);
	}
	cost_init(t);
	ck_assert_int_eq(t5->getCollInfo(c->tctx, coll, nbytes * (size_t)n, 1, (float **)t, NALGO,
					 NPROTO, 0, &nch), 0);
	arm = o->force_arm >= 0 ? o->force_arm : argmin(&t[0][0]);
	if (want) {
		memset(&d, 0, sizeof(d));
		d.type = EV_GROUP;
		p5->startEvent(c->pctx, &hgrp, &d);
		for (int i = 0; i < n; i++) {
			memset(&d, 0, sizeof(d));
			d.type = EV_COLL;
			d.parentObj = hc;
			d.coll.seqNumber = c->seq[coll]++;
			d.coll.func = func_str[coll];
			d.coll.count = coll == 2 || coll == 3 ? nbytes / 16 : nbytes / 4;
			d.coll.datatype = "ncclFloat32";
			d.coll.nChannels = (uint8_t)o->nch;
			d.coll.algo = algo_str[arm / 3];
			d.coll.proto = proto_str[arm % 3];
			d.coll.parentGroup = hgrp;
			p5->startEvent(c->pctx, &h[i], &d);
			if (h[i]) {
				struct kop k = { c->pctx, h[i], o->nch, o->reported ? o->reported : o->nch,
						 c->clock, o->dur_ns, o->bad_stop };

				c->measured++;
				push(c, &k);
			}
			c->clock += o->dur_ns + 1000;
		}
		for (int i = 0; i < n; i++)
			p5->stopEvent(h[i]);	/* "enqueued" */
		p5->stopEvent(hgrp);
		p5->stopEvent(hg);
	}
	return arm;
}

static const struct opts plain = { 1, -1, 8, 0, 100000, 0, 0 };

/* ---- spool reading --------------------------------------------------------- */

static struct bot_spool_file sf;
static char spool_path[BOT_TEST_PATH_MAX + 256];

static int find_spool(char *out, size_t n)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int found = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (!strncmp(e->d_name, "nb-", 3) && strstr(e->d_name, ".spool")) {
			snprintf(out, n, "%s/%s", dir, e->d_name);
			found++;
		}
	closedir(dp);
	return found;
}

/* Threads of this process named like the library's spool writer. */
static int writer_threads(void)
{
	DIR *dp = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp))) {
		char p[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;	/* it just ended */
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "nccl-bot-spool", 14))
			n++;
		fclose(f);
	}
	closedir(dp);
	return n;
}

/* The writer ends once nothing is live and everything was written: after
 * the last finalize the file is complete, whatever the finalize's bounded
 * wait saw on a loaded machine. */
static void wait_writer_gone(void)
{
	for (unsigned i = 0; i < 3000 && writer_threads(); i++)
		usleep(10000);
	ck_assert_int_eq(writer_threads(), 0);
}

/* The file's process record (kind 3), set aside by read_spool(). */
static struct bot_spool_rec sf_proc;
static uint64_t sf_nrec_file;	/* records in the file, the process record included */

/* Read this test's one spool file. Every test here initialised our tuner
 * with NCCL_BOT_SPOOL set, so the file is version 2 and its last record is
 * the process record (the writer puts it last): checked to be the only one
 * and set aside in sf_proc, so that sf.recs are the measurements. */
static void read_spool(void)
{
	char err[BOT_SPOOL_ERR_MAX];

	wait_writer_gone();
	ck_assert_int_eq(find_spool(spool_path, sizeof(spool_path)), 1);
	ck_assert_msg(bot_spool_read_file(spool_path, &sf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(sf.hdr.version, 2);
	ck_assert_uint_ge(sf.hdr.nrecords, 1);
	sf_nrec_file = sf.hdr.nrecords;
	sf_proc = sf.recs[sf.hdr.nrecords - 1];
	ck_assert_uint_eq(sf_proc.kind, BOT_SPOOL_PROC);
	sf.hdr.nrecords--;
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
		ck_assert_uint_ne(sf.recs[i].kind, BOT_SPOOL_PROC);
}

static unsigned count(int kind, int flag)
{
	unsigned n = 0;

	for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
		if (sf.recs[i].kind == kind && (!flag || (sf.recs[i].flags & flag)))
			n++;
	return n;
}

/* ---- fixture ----------------------------------------------------------------- */

static void setup(void)
{
	const char *path = getenv("BOT_TUNER_SO");

	if (!path || !*path)
		path = BOT_TUNER_SO;
	unsetenv("NCCL_BOT_TABLE");
	unsetenv("NCCL_BOT_POLICY");
	unsetenv("NCCL_BOT_MIN_BYTES");
	unsetenv("NCCL_BOT_WINDOW");
	unsetenv("NCCL_BOT_MEASURE_V4");
	/* the stuck scan's 2 s is wall clock: a test thread descheduled that
	 * long (the sanitizer pass of CI, both cores busy) had a record
	 * completed as "channels missing" mid-test; tests of the scan set
	 * their own */
	setenv("NCCL_BOT_TEST_STUCK_NS", "600000000000", 1);
	unsetenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS");
	unsetenv("NCCL_BOT_TEST_SPOOL_NO_THREAD");
	/* Windows by call counts only: the profiler's time-based quiet would
	 * make window counts depend on scheduling (a test hook, tuner/env.h). */
	setenv("NCCL_BOT_TEST_NO_QUIET", "1", 1);
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_PROTO");
	bot_test_mkdtemp(dir, sizeof(dir), "spool");
	setenv("NCCL_BOT_SPOOL", dir, 1);
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(so != NULL, "dlopen %s: %s", path, dlerror());
	t5 = dlsym(so, "ncclTunerPlugin_v5");
	p5 = dlsym(so, "ncclProfiler_v5");
	ck_assert(t5 && p5);
	memset(&sf, 0, sizeof(sf));
	cost_poison = 0;
}

static void teardown(void)
{
	bot_spool_free(&sf);
	bot_test_rmtree(dir);
}

/* ---- tests ------------------------------------------------------------------ */

/* 100k calls: windows of 32 every 3200 calls; samples exact; attribution
 * from the descriptor; summary counts every call. */
START_TEST(test_round_trip_and_duty)
{
	struct comm c;
	struct opts o = plain;
	const unsigned ncalls = 100000;
	unsigned samples, first = 0;

	o.force_arm = bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL128);	/* not AUTO's ring/simple */
	comm_open(&c, 3);
	ck_assert_int_eq(c.mask, 0);
	for (unsigned i = 0; i < ncalls; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &o);
	drain(&c);
	ck_assert_uint_gt(c.measured, 0);
	ck_assert_uint_le(c.measured, ncalls / 100 + 32);
	comm_close(&c);
	ck_assert_int_eq(c.mask, 0);
	read_spool();
	ck_assert_uint_eq(sf.hdr.pid, (uint32_t)getpid());
	/* the process record: tuner and profiler v5, one comm, measured on
	 * the prior (no table); the test binary exports no ncclGetVersion() */
	ck_assert_uint_eq(sf_proc.tuner_abi, 5);
	ck_assert_uint_eq(sf_proc.profiler_abi, 5);
	ck_assert_uint_eq(sf_proc.comms, 1);
	ck_assert_uint_eq(sf_proc.proc_flags, BOT_SPOOL_PF_MEASURED | BOT_SPOOL_PF_PRIOR);
	ck_assert_uint_eq(sf_proc.policy, 0);
	ck_assert_uint_eq(sf_proc.nccl_version, 0);
	samples = count(BOT_SPOOL_SAMPLE, 0);
	ck_assert_uint_eq(samples, c.measured);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		if (r->kind == BOT_SPOOL_SUMMARY) {
			ck_assert_uint_eq(r->coll, BOT_COLL_ALLREDUCE);
			/* window calls x 100 */
			ck_assert_uint_eq(r->calls, (uint64_t)c.measured * 100);
			ck_assert_uint_eq(bot_size_bucket(r->nbytes), bot_size_bucket(4 * MiB));
			ck_assert_uint_eq(r->auto_arm, bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
			ck_assert_uint_eq(r->decided, BOT_SPOOL_ARM_NONE);
			continue;
		}
		ck_assert_uint_eq(r->arm, bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL128));
		ck_assert_uint_eq(r->auto_arm, bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
		ck_assert_uint_eq(r->decided, BOT_SPOOL_ARM_NONE);	/* no table: auto */
		ck_assert_uint_eq(r->nbytes, 4 * MiB);
		ck_assert_uint_eq(r->nchannels, 8);
		ck_assert_uint_eq(r->rank, 3);
		ck_assert_uint_eq(r->nranks, 16);
		ck_assert_uint_eq(r->nnodes, 2);
		ck_assert_uint_eq(r->comm_id, COMM);
		/* max stop - min start: channel 0 stops last (t0+dur), starts first */
		ck_assert_uint_eq(r->duration_ns, 100000);
		ck_assert(r->cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] == 90.0f);
		ck_assert(r->cost[bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_LL)] == -1.0f);
		if (r->flags & BOT_SPOOL_F_FIRST_ALGO)
			first++;
		else
			ck_assert_uint_eq(r->flags, 0);
	}
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(count(BOT_SPOOL_SUMMARY, 0), 1);
}
END_TEST

/* With a step table that forces an arm and allows measurement: the sample's
 * decided arm is the table's, the arm what the descriptor says ran. */
START_TEST(test_decided_from_table)
{
	static struct bot_table tbl;
	static char text[BOT_TABLE_MAX_TEXT + 1];
	struct comm c;
	unsigned n = 0;

	bot_table_init(&tbl, 2, 7);
	tbl.flags |= BOT_TABLE_F_MEASURE;
	bot_table_shape(&tbl, 16, 2);
	memset(&tbl.entries[0], 0, sizeof(tbl.entries[0]));
	tbl.entries[0].coll = BOT_COLL_ALLREDUCE;
	tbl.entries[0].bucket = (uint8_t)bot_size_bucket(4 * MiB);
	tbl.entries[0].plan.exploit = (uint8_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);
	tbl.nentries = 1;
	ck_assert_int_eq(bot_table_normalize(&tbl), 0);
	ck_assert_int_gt(bot_table_encode(&tbl, text, sizeof(text)), 0);
	setenv("NCCL_BOT_TABLE", text, 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		ck_assert_int_eq(call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain),
				 bot_arm(BOT_ALGO_RING, BOT_PROTO_LL));
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(sf.hdr.table_digest, tbl.digest ? tbl.digest : sf.hdr.table_digest);
	/* the process record: the table's policy, decided from the table */
	ck_assert_uint_eq(sf_proc.policy, 2);
	ck_assert_uint_eq(sf_proc.proc_flags & (BOT_SPOOL_PF_TABLE | BOT_SPOOL_PF_PRIOR),
			  BOT_SPOOL_PF_TABLE);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		ck_assert_uint_eq(r->decided, bot_arm(BOT_ALGO_RING, BOT_PROTO_LL));
		ck_assert_uint_eq(r->auto_arm, bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
		ck_assert_uint_eq(r->policy, 2);
		if (r->kind == BOT_SPOOL_SAMPLE) {
			ck_assert_uint_eq(r->arm, bot_arm(BOT_ALGO_RING, BOT_PROTO_LL));
			n++;
		}
	}
	ck_assert_uint_gt(n, 0);

	/* a table without the measure flag: nothing measured, mask stays 0 */
	bot_spool_free(&sf);
	tbl.flags &= (uint8_t)~BOT_TABLE_F_MEASURE;
	ck_assert_int_gt(bot_table_encode(&tbl, text, sizeof(text)), 0);
	setenv("NCCL_BOT_TABLE", text, 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	ck_assert_uint_eq(c.measured, 0);
	ck_assert_int_eq(c.mask, 0);
	comm_close(&c);
}
END_TEST

START_TEST(test_labels)
{
	struct comm c;
	struct opts agg = plain, miss = plain, zero = plain, range = plain, bad = plain;

	agg.ncoll = 2;
	miss.reported = 5;
	zero.nch = 0;
	range.dur_ns = 100000000;	/* 100 ms against a ~100 us prior */
	bad.bad_stop = 1;
	comm_open(&c, 1);
	for (unsigned i = 0; i < 20000; i++) {
		const struct opts *o = i % 5 == 0 ? &agg : i % 5 == 1 ? &miss : i % 5 == 2 ? &zero :
				       i % 5 == 3 ? &range : &bad;

		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, o);
	}
	comm_close(&c);
	read_spool();
	ck_assert_uint_gt(count(BOT_SPOOL_SAMPLE, BOT_SPOOL_F_AGGREGATE), 0);
	ck_assert_uint_gt(count(BOT_SPOOL_SAMPLE, BOT_SPOOL_F_CHANNELS), 0);
	ck_assert_uint_gt(count(BOT_SPOOL_SAMPLE, BOT_SPOOL_F_RANGE), 0);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		if (r->kind != BOT_SPOOL_SAMPLE)
			continue;
		ck_assert_msg(r->flags & (BOT_SPOOL_F_AGGREGATE | BOT_SPOOL_F_CHANNELS |
					  BOT_SPOOL_F_RANGE), "unlabelled sample flags %x", r->flags);
		if (r->flags & BOT_SPOOL_F_AGGREGATE)
			ck_assert_uint_eq(r->nbytes, 8 * MiB);	/* the summed bytes */
		if (r->nchannels == 0)
			ck_assert(r->flags & BOT_SPOOL_F_CHANNELS);
	}
}
END_TEST

START_TEST(test_min_bytes_and_capture)
{
	struct comm c;
	struct opts cap = plain;
	unsigned seen = 0;

	cap.captured = 1;
	comm_open(&c, 0);
	/* below the 1 MiB default: windows open, nothing measured */
	for (unsigned i = 0; i < 20000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 512 * 1024, &plain);
	ck_assert_uint_eq(c.measured, 0);
	/* captured calls: the window is dropped at once (only the first call
	 * after an arming point sees the mask), with a back-off; nothing measured */
	for (unsigned i = 0; i < 20000; i++) {
		if (c.mask)
			seen++;
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &cap);
	}
	ck_assert_uint_eq(c.measured, 0);
	ck_assert_uint_le(seen, 4);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), 0);
	ck_assert_uint_eq(count(BOT_SPOOL_SUMMARY, 0), 2);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		ck_assert_uint_gt(r->calls, 0);
		ck_assert_uint_le(r->calls, 20000 + 3200);
		if (r->nbytes >= MiB)
			ck_assert_uint_gt(r->captured_calls, 0);
		else
			ck_assert_uint_eq(r->captured_calls, 0);
	}
}
END_TEST

/* KernelCh events after the tuner's finalize (the proxy lags): no crash,
 * samples kept. Also run under ASan by the sanitizer build. */
START_TEST(test_late_events)
{
	struct comm c;

	comm_open(&c, 0);
	pthread_mutex_lock(&c.mu);	/* hold the proxy back */
	for (unsigned i = 0; i < 3300 + 200; i++) {
		pthread_mutex_unlock(&c.mu);
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
		pthread_mutex_lock(&c.mu);
	}
	pthread_mutex_unlock(&c.mu);
	ck_assert_int_eq(t5->finalize(c.tctx), 0);
	proxy_stop(&c);		/* drains: every KernelCh after the tuner is gone */
	ck_assert_int_eq(p5->finalize(c.pctx), 0);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), c.measured);
}
END_TEST

/* KernelCh events after the PROFILER's finalize (a proxy shared with other
 * comms outlives this comm): records still waiting are abandoned (no
 * sample), and the late start/record/stop events touch no freed memory and
 * free nothing twice (glibc's double-free check, or ASan in the sanitizer
 * build, aborts the test otherwise). */
START_TEST(test_late_events_after_profiler_finalize)
{
	struct comm c;
	unsigned measured;

	comm_open(&c, 0);
	pthread_mutex_lock(&c.mu);
	c.hold = 1;		/* the proxy delivers nothing until stopped */
	pthread_mutex_unlock(&c.mu);
	for (unsigned i = 0; i < 3300 + 200; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	measured = c.measured;
	ck_assert_uint_gt(measured, 0);
	pthread_mutex_lock(&c.mu);
	ck_assert_uint_eq(c.tail, 0);	/* nothing delivered yet */
	pthread_mutex_unlock(&c.mu);
	/* NCCL's order with a shared proxy: both finalizes, then the proxy's
	 * events for this comm's last collectives */
	ck_assert_int_eq(t5->finalize(c.tctx), 0);
	pthread_mutex_lock(&c.mu);
	ck_assert_uint_eq(c.tail, 0);
	pthread_mutex_unlock(&c.mu);
	ck_assert_int_eq(p5->finalize(c.pctx), 0);
	proxy_stop(&c);		/* drains: every KernelCh after the profiler is gone */
	/* a second comm reuses the pool: still sane */
	{
		struct comm d;

		comm_open(&d, 1);
		for (unsigned i = 0; i < 4000; i++)
			call(&d, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
		comm_close(&d);
		read_spool();
		/* only the second comm's samples: the first one's were abandoned */
		ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), d.measured);
		for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
			if (sf.recs[i].kind == BOT_SPOOL_SAMPLE)
				ck_assert_uint_eq(sf.recs[i].rank, 1);
	}
}
END_TEST

/* A Coll that misses KernelCh channels for good is completed by the
 * periodic scan once its Coll stopped more than the stuck timeout ago (2 s),
 * labelled channels-missing (without it, it would never complete and
 * nothing would reach the spool: comm_close() abandons what is left). The
 * profiler's test hook NCCL_BOT_TEST_STUCK_NS=0 makes every stopped record
 * overdue and lets every scan run, instead of a 3 s sleep. The other half,
 * that a record is not completed before the timeout, is
 * test_late_events_after_profiler_finalize (its held records stay
 * unfinished until finalize abandons them). */
START_TEST(test_missing_channels_complete)
{
	struct comm c;
	struct opts miss = plain;
	unsigned first;

	setenv("NCCL_BOT_TEST_STUCK_NS", "0", 1);	/* read at profiler init */
	miss.reported = 5;	/* of 8 */
	comm_open(&c, 0);
	for (unsigned i = 0; i < 3300; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &miss);
	drain(&c);
	first = c.measured;
	ck_assert_uint_gt(first, 0);
	/* the next arming point scans (and completes the last ones); these
	 * calls are below the 1 MiB threshold, so nothing new is measured */
	for (unsigned i = 0; i < 3300; i++)
		call(&c, BOT_COLL_ALLREDUCE, 512 * 1024, &miss);
	ck_assert_uint_eq(c.measured, first);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), first);
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, BOT_SPOOL_F_CHANNELS), first);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
		if (sf.recs[i].kind == BOT_SPOOL_SAMPLE)
			ck_assert_uint_eq(sf.recs[i].nchannels, 8);
}
END_TEST

/* NCCL_BOT_MIN_BYTES and NCCL_BOT_POLICY as the tuner reads them: the
 * threshold rounded up to a power of two (10^6 -> 2^20), the policy name
 * case-insensitive. */
START_TEST(test_env_as_tuner)
{
	struct comm c;

	setenv("NCCL_BOT_MIN_BYTES", "1000000", 1);
	setenv("NCCL_BOT_POLICY", "Thompson", 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 1000000, &plain);
	ck_assert_uint_eq(c.measured, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 2 * MiB, &plain);
	ck_assert_uint_gt(c.measured, 0);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), c.measured);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
		ck_assert_uint_eq(sf.recs[i].policy, 5);	/* thompson */
}
END_TEST

/* A refused NCCL_BOT_MIN_BYTES (octal: common/settings.h) is the default
 * 1 MiB for the profiler as for the tuner, not 8 or 10 bytes. */
START_TEST(test_env_refused_as_tuner)
{
	struct comm c;

	setenv("NCCL_BOT_MIN_BYTES", "010", 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 512 * 1024, &plain);
	ck_assert_uint_eq(c.measured, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 2 * MiB, &plain);
	ck_assert_uint_gt(c.measured, 0);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), c.measured);
}
END_TEST

/* ---- profiler v4 (NCCL 2.27): its own 104-byte descriptor --------------------- */

/* NCCL 2.27's v4 descriptor as the emulator declares it (104 bytes, a
 * one-byte type, no coll.parentGroup: a Coll's Group is its parentObj).
 * 2.27 passes a 104-byte stack object; the test passes 104-byte heap
 * objects, so a read past one is a heap overflow (ASan, valgrind). */
typedef struct emu_prof_descr_v4 v4_descr_t;
typedef struct emu_profiler_v4 v4_profiler_t;
_Static_assert(sizeof(v4_descr_t) == 104, "NCCL 2.27's v4 descriptor is 104 bytes");

static v4_descr_t *v4_new(uint8_t type, void *parent)
{
	v4_descr_t *d = malloc(sizeof(*d));

	ck_assert_ptr_nonnull(d);
	memset(d, 0, sizeof(*d));
	d->type = type;
	d->parentObj = parent;
	return d;
}

/* NCCL_BOT_MEASURE_V4=1 on tuner v4 + profiler v4, as NCCL 2.27 drives
 * them (linked by nranks/nnodes; events on one thread here): every group
 * holds two Colls of the same func/algo/proto, so every sample is an
 * aggregate with the summed bytes. That label comes from the Group handle,
 * which v4 passes as the Coll's parentObj. */
START_TEST(test_profiler_v4_descriptor)
{
	const v4_profiler_t *p4 = dlsym(so, "ncclProfiler_v4");
	const struct emu_tuner_v4 *t4 = dlsym(so, "ncclTunerPlugin_v4");
	void *pctx = NULL, *tctx = NULL;
	int mask = 0;
	unsigned measured = 0, nagg = 0;
	uint64_t clock = 1000;

	ck_assert(p4 && t4);
	setenv("NCCL_BOT_MEASURE_V4", "1", 1);
	ck_assert_int_eq(p4->init(&pctx, &mask, "v4", COMM, 2, 16, 5, logger), 0);
	ck_assert_ptr_nonnull(pctx);
	ck_assert_int_eq(t4->init(16, 2, logger, &tctx), 0);
	for (unsigned i = 0; i < 20000; i++) {
		int want = __atomic_load_n(&mask, __ATOMIC_RELAXED) & (EV_COLL | EV_KCH);
		float t[NALGO][NPROTO];
		int nch = 0, arm;
		void *hg = NULL, *hc[2] = { NULL, NULL };
		v4_descr_t *dg, *dc[2];

		cost_init(t);
		ck_assert_int_eq(t4->getCollInfo(tctx, BOT_COLL_ALLREDUCE, 8 * MiB, 1, (float **)t,
						 NALGO, NPROTO, 0, &nch), 0);
		if (!want)
			continue;
		arm = argmin(&t[0][0]);
		dg = v4_new(EV_GROUP, NULL);
		p4->startEvent(pctx, &hg, dg);
		for (int k = 0; k < 2; k++) {
			dc[k] = v4_new(EV_COLL, hg);
			dc[k]->coll.seqNumber = 2 * i + (unsigned)k;
			dc[k]->coll.func = "AllReduce";
			dc[k]->coll.count = 4 * MiB / 4;
			dc[k]->coll.datatype = "ncclFloat32";
			dc[k]->coll.nChannels = 2;
			dc[k]->coll.algo = algo_str[arm / 3];
			dc[k]->coll.proto = proto_str[arm % 3];
			p4->startEvent(pctx, &hc[k], dc[k]);
		}
		for (int k = 0; k < 2; k++) {
			void *hk[2] = { NULL, NULL };

			if (!hc[k])
				continue;
			measured++;
			for (int c = 0; c < 2; c++) {
				v4_descr_t *dk = v4_new(EV_KCH, hc[k]);

				dk->kernelCh.channelId = (uint8_t)c;
				dk->kernelCh.pTimer = clock;
				p4->startEvent(pctx, &hk[c], dk);
				free(dk);
			}
			for (int c = 0; c < 2; c++) {
				union emu_prof_state_v4 st = { .kernelCh.pTimer = clock + 90000 };

				ck_assert_ptr_nonnull(hk[c]);
				p4->recordEventState(hk[c], KCH_STOP, &st);
				p4->stopEvent(hk[c]);
			}
			clock += 100000;
		}
		for (int k = 0; k < 2; k++) {
			p4->stopEvent(hc[k]);
			free(dc[k]);
		}
		p4->stopEvent(hg);
		free(dg);
	}
	ck_assert_uint_gt(measured, 0);
	ck_assert_int_eq(t4->destroy(tctx), 0);
	ck_assert_int_eq(p4->finalize(pctx), 0);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), measured);
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		if (r->kind != BOT_SPOOL_SAMPLE)
			continue;
		ck_assert_uint_eq(r->rank, 5);
		ck_assert_uint_eq(r->nchannels, 2);
		ck_assert_uint_eq(r->duration_ns, 90000);
		ck_assert_msg(r->flags & BOT_SPOOL_F_AGGREGATE, "sample %llu flags %x",
			      (unsigned long long)i, r->flags);
		ck_assert_uint_eq(r->nbytes, 8 * MiB);	/* the two Colls' bytes */
		nagg++;
	}
	ck_assert_uint_eq(nagg, measured);
}
END_TEST

/* NaN, infinite and >= 3.6e9 cost entries are stored as -1 (unsupported),
 * -0 as 0: the reader would reject the whole file otherwise. */
START_TEST(test_nan_cost)
{
	struct comm c;
	unsigned n = 0;

	cost_poison = 1;
	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	read_spool();
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		if (r->flags & BOT_SPOOL_F_NO_COST)
			continue;
		ck_assert(r->cost[bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL)] == -1.0f);
		ck_assert(r->cost[bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL128)] == -1.0f);
		ck_assert(r->cost[bot_arm(BOT_ALGO_PAT, BOT_PROTO_LL)] == -1.0f);
		ck_assert(r->cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] == 90.0f);
		ck_assert(r->cost[bot_arm(4, 1)] == 0.0f && !signbit(r->cost[bot_arm(4, 1)]));
		n++;
	}
	ck_assert_uint_gt(n, 0);
}
END_TEST

/* This host's name as the file name spells it: at most 64 characters,
 * outside [A-Za-z0-9._-] made '_'. */
static void spool_host(char host[256])
{
	memset(host, 0, 256);
	if (gethostname(host, 255) || !host[0])
		strcpy(host, "unknown");
	host[64] = 0;
	for (char *p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			*p = '_';
}

/* base is nb-<host>-<pid>-<16 lowercase hex>.spool for this host and pid;
 * the token goes to *token. */
static int spool_name_ok(const char *base, pid_t pid, char token[17])
{
	char host[256], want[400];
	size_t n;

	spool_host(host);
	n = (size_t)snprintf(want, sizeof(want), "nb-%s-%ld-", host, (long)pid);
	if (strncmp(base, want, n) || strlen(base) != n + 16 + 6 || strcmp(base + n + 16, ".spool"))
		return 0;
	for (size_t i = n; i < n + 16; i++)
		if (!((base[i] >= '0' && base[i] <= '9') || (base[i] >= 'a' && base[i] <= 'f')))
			return 0;
	if (token) {
		memcpy(token, base + n, 16);
		token[16] = 0;
	}
	return 1;
}

/* The spool directory is opened once: a relative NCCL_BOT_SPOOL and a
 * chdir() later still write there. A file (here a symlink to a victim)
 * planted under the temporary name is replaced, never followed. The name
 * carries a per-process random token, so the plant is made once the first
 * rewrite showed it, and a second communicator's rewrite meets it. */
START_TEST(test_spool_dir_fd)
{
	struct comm c;
	char cwd[512], victim[BOT_TEST_PATH_MAX + 16], tmpname[BOT_TEST_PATH_MAX + 128];
	char spdir[BOT_TEST_PATH_MAX], p[BOT_TEST_PATH_MAX + 256], err[BOT_SPOOL_ERR_MAX];
	const char *base;
	unsigned measured;
	struct stat st;
	FILE *f;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(mkdir("sp", 0700), 0);
	setenv("NCCL_BOT_SPOOL", "sp", 1);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	ck_assert_ptr_nonnull(f);
	fputs("keep", f);
	fclose(f);
	comm_open(&c, 0);
	ck_assert_int_eq(chdir(cwd), 0);	/* the application moves */
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	measured = c.measured;
	wait_writer_gone();
	/* the file is in sp/, named nb-<host>-<pid>-<token>.spool */
	snprintf(spdir, sizeof(spdir), "%s/sp", dir);
	{
		DIR *dp = opendir(spdir);
		struct dirent *e;
		int n = 0;

		ck_assert_ptr_nonnull(dp);
		while ((e = readdir(dp)))
			if (e->d_name[0] != '.') {
				snprintf(p, sizeof(p), "%s/%s", spdir, e->d_name);
				n++;
			}
		closedir(dp);
		ck_assert_int_eq(n, 1);
	}
	base = strrchr(p, '/') + 1;
	ck_assert_msg(spool_name_ok(base, getpid(), NULL), "%s", base);
	/* a link planted under the temporary name .<name>.tmp */
	snprintf(tmpname, sizeof(tmpname), "%s/.%s.tmp", spdir, base);
	ck_assert_int_eq(symlink(victim, tmpname), 0);
	comm_open(&c, 1);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	measured += c.measured;
	wait_writer_gone();
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq((int)st.st_size, 4);	/* untouched */
	ck_assert_int_ne(lstat(tmpname, &st), 0);	/* renamed away */
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_msg(bot_spool_read_file(p, &sf, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), measured);
}
END_TEST

START_TEST(test_fork_child_never_writes)
{
	struct comm c;
	char path[BOT_TEST_PATH_MAX + 256];
	pid_t pid;
	int st;

	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* a DataLoader-style child: finalizes and exits (atexit too) */
		c.stop = 1;
		t5->finalize(c.tctx);
		p5->finalize(c.pctx);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 0);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(sf.hdr.pid, (uint32_t)getpid());
}
END_TEST

/* ---- the process record on the rank side ---------------------------------- */

/* Our tuner without our profiler (a user's own, or none): nothing is
 * measured and no writer thread starts, yet tuner finalize writes a file
 * holding the process record alone. A second comm is counted; the file is
 * rewritten only when the record changed. */
START_TEST(test_proc_tuner_only)
{
	void *t1 = NULL, *t2 = NULL;
	char path[BOT_TEST_PATH_MAX + 256];
	struct stat st1, st2;

	ck_assert_int_eq(t5->init(&t1, COMM, 16, 2, logger, NULL, NULL), 0);
	ck_assert_int_eq(writer_threads(), 0);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 0);	/* not at init */
	ck_assert_int_eq(t5->init(&t2, COMM + 1, 8, 1, logger, NULL, NULL), 0);
	ck_assert_int_eq(t5->finalize(t1), 0);
	ck_assert_int_eq(writer_threads(), 0);
	read_spool();
	ck_assert_uint_eq(sf.hdr.nrecords, 0);
	ck_assert_uint_eq(sf_nrec_file, 1);
	ck_assert_uint_eq(sf.hdr.pid, (uint32_t)getpid());
	ck_assert_uint_eq(sf_proc.tuner_abi, 5);
	ck_assert_uint_eq(sf_proc.profiler_abi, 0);
	ck_assert_uint_eq(sf_proc.comms, 2);
	ck_assert_uint_eq(sf_proc.proc_flags, BOT_SPOOL_PF_PRIOR);
	ck_assert_uint_eq(stat(spool_path, &st1), 0);
	bot_spool_free(&sf);
	/* nothing changed: the second finalize leaves the file alone */
	ck_assert_int_eq(t5->finalize(t2), 0);
	ck_assert_uint_eq(stat(spool_path, &st2), 0);
	ck_assert_uint_eq(st1.st_ino, st2.st_ino);
}
END_TEST

/* Tuner v2 (NCCL 2.21: pass-through) counts as loaded: tuner v2, policy
 * auto, on the prior. */
START_TEST(test_proc_tuner_v2)
{
	const struct emu_tuner_v2 *t2 = dlsym(so, "ncclTunerPlugin_v2");
	void *ctx = NULL;

	ck_assert_ptr_nonnull(t2);
	ck_assert_int_eq(t2->init(16, 2, logger, &ctx), 0);
	ck_assert_int_eq(t2->destroy(ctx), 0);
	read_spool();
	ck_assert_uint_eq(sf.hdr.nrecords, 0);
	ck_assert_uint_eq(sf_proc.tuner_abi, 2);
	ck_assert_uint_eq(sf_proc.profiler_abi, 0);
	ck_assert_uint_eq(sf_proc.policy, 0);
	ck_assert_uint_eq(sf_proc.comms, 1);
	ck_assert_uint_eq(sf_proc.proc_flags, BOT_SPOOL_PF_PRIOR);
}
END_TEST

/* Our profiler initialised but not measuring (a table without the measure
 * flag): profiler v5 in the record, not "measured"; the table's flag. */
START_TEST(test_proc_profiler_not_measuring)
{
	static struct bot_table tbl;
	static char text[BOT_TABLE_MAX_TEXT + 1];
	struct comm c;

	bot_table_init(&tbl, 4, 7);	/* ucb1; flag bit1 (measure) not set */
	ck_assert_int_eq(bot_table_normalize(&tbl), 0);
	ck_assert_int_gt(bot_table_encode(&tbl, text, sizeof(text)), 0);
	setenv("NCCL_BOT_TABLE", text, 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	ck_assert_uint_eq(c.measured, 0);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(sf.hdr.nrecords, 0);
	ck_assert_uint_ne(sf.hdr.table_digest, 0);	/* the table's, noted by the tuner */
	ck_assert_uint_eq(sf_proc.tuner_abi, 5);
	ck_assert_uint_eq(sf_proc.profiler_abi, 5);
	ck_assert_uint_eq(sf_proc.policy, 4);
	ck_assert_uint_eq(sf_proc.proc_flags, BOT_SPOOL_PF_TABLE);
}
END_TEST

/* A process in which our tuner initialised nothing (the user's own tuner,
 * or NCCL_TUNER_PLUGIN pointing elsewhere) and whose profiler measured
 * nothing writes no spool file (formats.md 9, "Who writes a file"): not
 * at profiler finalize, not at exit. */
START_TEST(test_proc_profiler_alone_no_file)
{
	char path[BOT_TEST_PATH_MAX + 256];
	pid_t pid;
	int st = -1;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		void *pctx = NULL;
		int mask = 0;

		if (p5->init(&pctx, COMM, &mask, "alone", 2, 16, 0, logger) != 0 || !pctx)
			_exit(3);
		if (p5->finalize(pctx) != 0)
			_exit(4);
		exit(0);	/* atexit runs */
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 0);
}
END_TEST

/* Without NCCL_BOT_SPOOL nothing is written. */
START_TEST(test_proc_no_spool)
{
	void *t = NULL;
	char path[BOT_TEST_PATH_MAX + 256];

	unsetenv("NCCL_BOT_SPOOL");
	ck_assert_int_eq(t5->init(&t, COMM, 16, 2, logger, NULL, NULL), 0);
	ck_assert_int_eq(t5->finalize(t), 0);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 0);
}
END_TEST

/* A process that never finalizes writes at exit (atexit); a forked child
 * of a process whose tuner was noted never writes, even when its own tuner
 * opens a comm and it exits normally. */
START_TEST(test_proc_at_exit_and_fork)
{
	char path[BOT_TEST_PATH_MAX + 256];
	void *t = NULL;
	pid_t pid, child;
	int st;

	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		void *a = NULL, *b = NULL;

		if (t5->init(&a, COMM, 16, 2, logger, NULL, NULL) ||
		    t5->init(&b, COMM + 1, 16, 2, logger, NULL, NULL))
			_exit(1);
		exit(0);	/* no finalize: atexit writes */
	}
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	read_spool();
	ck_assert_uint_eq(sf.hdr.pid, (uint32_t)child);
	ck_assert_uint_eq(sf_proc.comms, 2);
	ck_assert_uint_eq(sf_proc.tuner_abi, 5);
	bot_spool_free(&sf);

	ck_assert_int_eq(t5->init(&t, COMM, 16, 2, logger, NULL, NULL), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		void *a = NULL;

		if (t5->init(&a, COMM + 2, 16, 2, logger, NULL, NULL) || t5->finalize(a))
			_exit(1);
		exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 1);	/* the first child's only */
	ck_assert_int_eq(t5->finalize(t), 0);
	ck_assert_int_eq(find_spool(path, sizeof(path)), 2);	/* and this process's */
}
END_TEST

/* ---- who writes the spool ------------------------------------------------- */

/* Entries of directory d that are not hidden (a spool file, not its
 * temporary name). */
static int count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		n += e->d_name[0] != '.';
	closedir(dp);
	return n;
}

/* What a logger saw of the spool: messages naming it, and the thread of
 * the first one. */
static int spool_logs;
static pid_t spool_log_tid;
static char spool_log_msg[512];
static int spool_log_level;	/* NCCL's level of the first: 2 WARN, 3 INFO */
/* Every spool line seen, "LEVEL message\n" each, in order. */
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static char seen_log[8192];

static void spool_logger(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!strstr(msg, "spool"))
		return;
	pthread_mutex_lock(&seen_mu);
	if (strlen(seen_log) + strlen(msg) + 8 < sizeof(seen_log))
		sprintf(seen_log + strlen(seen_log), "%d %s\n", level, msg);
	pthread_mutex_unlock(&seen_mu);
	if (__atomic_fetch_add(&spool_logs, 1, __ATOMIC_ACQ_REL) == 0) {
		memcpy(spool_log_msg, msg, sizeof(msg));
		spool_log_level = level;
		__atomic_store_n(&spool_log_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	}
}

/* A spool directory that is a symbolic link is refused, named as one (it
 * said "Not a directory"), and a trailing '/' does not get around the
 * refusal (it followed the link until 2026-12-04). */
START_TEST(test_spool_dir_link)
{
	struct comm c;
	char real[BOT_TEST_PATH_MAX], link[BOT_TEST_PATH_MAX], slash[BOT_TEST_PATH_MAX + 2];
	DIR *dp;
	struct dirent *e;
	int n = 0;

	bot_test_path(real, dir, "real");
	bot_test_path(link, dir, "link");
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, link), 0);
	snprintf(slash, sizeof(slash), "%s/.", link);	/* "link/" or "link/." */
	setenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS", "1000000", 1);
	setenv("NCCL_BOT_SPOOL", slash, 1);
	comm_open_log(&c, 0, spool_logger);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	/* the first periodic rewrite fails and logs (as in the test below) */
	for (unsigned i = 0; i < 2000 && !__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE); i++)
		usleep(5000);
	comm_close(&c);
	wait_writer_gone();
	ck_assert_int_ge(__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE), 1);
	ck_assert_msg(strstr(spool_log_msg, "opening the directory: a symbolic link, not "
				 "followed (measurements"), "%s", spool_log_msg);
	/* lost measurements are a WARN: NCCL_DEBUG=WARN, as most jobs run,
	 * shows it (an INFO until 2026-12-04) */
	ck_assert_int_eq(spool_log_level, 2);
	dp = opendir(real);
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		n += e->d_name[0] != '.';
	closedir(dp);
	ck_assert_int_eq(n, 0);
}
END_TEST

/* A relative NCCL_BOT_SPOOL is the directory it named at the first init,
 * even when it is missing then and the application moves (chdir) before
 * the first rewrite opens it: until 2026-12-04 it was opened against the
 * working directory of that rewrite, here one holding a directory of the
 * same name, which got the file. */
START_TEST(test_spool_dir_relative_missing)
{
	struct comm c;
	char cwd[512], meant[BOT_TEST_PATH_MAX], elsewhere[BOT_TEST_PATH_MAX];
	char wrong[BOT_TEST_PATH_MAX + 16];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	bot_test_path(meant, dir, "later");
	bot_test_path(elsewhere, dir, "elsewhere");
	snprintf(wrong, sizeof(wrong), "%s/later", elsewhere);
	ck_assert_int_eq(mkdir(elsewhere, 0700), 0);
	ck_assert_int_eq(mkdir(wrong, 0700), 0);
	ck_assert_int_eq(chdir(dir), 0);
	setenv("NCCL_BOT_SPOOL", "later", 1);
	comm_open(&c, 0);			/* dir/later does not exist yet */
	ck_assert_int_eq(chdir(elsewhere), 0);	/* the application moves */
	ck_assert_int_eq(mkdir(meant, 0700), 0);	/* the launcher makes it late */
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	wait_writer_gone();
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(count_entries(meant), 1);
	ck_assert_int_eq(count_entries(wrong), 0);
}
END_TEST

/* A relative NCCL_BOT_SPOOL under a working directory so deep that the two
 * joined pass PATH_MAX is kept relative (opened as the application gave
 * it): made absolute, its open failed with ENAMETOOLONG where the relative
 * name had worked (until 2026-12-04). */
START_TEST(test_spool_dir_relative_deep)
{
	struct comm c;
	char cwd[PATH_MAX], comp[256], top[512];
	size_t len;
	int depth = 0;
	DIR *dp;
	struct dirent *e;

	ck_assert_ptr_nonnull(getcwd(top, sizeof(top)));
	ck_assert_int_eq(chdir(dir), 0);
	/* a working directory of PATH_MAX - 4 bytes: "spool" beside it is
	 * over PATH_MAX, absolute */
	for (;;) {
		size_t want;

		ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
		len = strlen(cwd);
		if (len >= PATH_MAX - 4)
			break;
		want = PATH_MAX - 4 - len - 1;
		if (want > 200)
			want = 200;
		if (want < 1)
			want = 1;
		memset(comp, 'd', want);
		comp[want] = 0;
		ck_assert_int_eq(mkdir(comp, 0700), 0);
		ck_assert_int_eq(chdir(comp), 0);
		depth++;
	}
	ck_assert_int_eq(strlen(cwd), PATH_MAX - 4);
	ck_assert_int_eq(mkdir("spool", 0700), 0);
	setenv("NCCL_BOT_SPOOL", "spool", 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	wait_writer_gone();
	ck_assert_int_eq(count_entries("spool"), 1);
	/* the tree, removed from inside (its paths are over PATH_MAX) */
	dp = opendir("spool");
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ck_assert_int_eq(unlinkat(dirfd(dp), e->d_name, 0), 0);
	closedir(dp);
	ck_assert_int_eq(rmdir("spool"), 0);
	for (; depth > 0; depth--) {
		ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
		ck_assert_int_eq(chdir(".."), 0);
		ck_assert_int_eq(rmdir(strrchr(cwd, '/') + 1), 0);
	}
	ck_assert_int_eq(chdir(top), 0);
}
END_TEST

/* A spool directory with a '..' component is refused ("link/.." goes
 * through the link, to its target's parent: written there until
 * 2026-12-04), and says so. */
START_TEST(test_spool_dir_dotdot)
{
	struct comm c;
	char a[BOT_TEST_PATH_MAX], b[BOT_TEST_PATH_MAX + 4], link[BOT_TEST_PATH_MAX];
	char up[BOT_TEST_PATH_MAX + 4];
	DIR *dp;
	struct dirent *e;
	int n = 0;

	bot_test_path(a, dir, "a");
	snprintf(b, sizeof(b), "%s/b", a);
	bot_test_path(link, dir, "link");
	ck_assert_int_eq(mkdir(a, 0700), 0);
	ck_assert_int_eq(mkdir(b, 0700), 0);
	ck_assert_int_eq(symlink(b, link), 0);
	snprintf(up, sizeof(up), "%s/..", link);	/* resolves to a */
	setenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS", "1000000", 1);
	setenv("NCCL_BOT_SPOOL", up, 1);
	comm_open_log(&c, 0, spool_logger);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	comm_close(&c);
	wait_writer_gone();
	ck_assert_int_ge(__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE), 1);
	ck_assert_msg(strstr(spool_log_msg, "a '..' component is refused in a spool directory"),
		      "%s", spool_log_msg);
	dp = opendir(a);
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		n += e->d_name[0] != '.' && strcmp(e->d_name, "b");
	closedir(dp);
	ck_assert_int_eq(n, 0);
}
END_TEST

/* A refused spool directory is said once per process, as a refused
 * NCCL_BOT_* value is (tuner/env.c): it was a WARN at every profiler init
 * and every tuner init, two per communicator. */
START_TEST(test_spool_dir_dotdot_once)
{
	struct comm c;
	char up[BOT_TEST_PATH_MAX + 4];

	bot_test_path(up, dir, "x/..");
	setenv("NCCL_BOT_SPOOL", up, 1);
	for (int i = 0; i < 3; i++) {
		comm_open_log(&c, 0, spool_logger);
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
		drain(&c);
		comm_close(&c);
	}
	ck_assert_int_eq(__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE), 1);
	ck_assert_msg(strstr(spool_log_msg, "a '..' component is refused in a spool directory"),
		      "%s", spool_log_msg);
}
END_TEST

/* The spool directory goes into NCCL's log as every NCCL_BOT_* value does:
 * printable ASCII (a newline or an escape in it went out as it was). */
START_TEST(test_spool_dir_shown_printable)
{
	struct comm c;
	char up[BOT_TEST_PATH_MAX + 8];

	bot_test_path(up, dir, "x\n\033[2J/..");
	setenv("NCCL_BOT_SPOOL", up, 1);
	comm_open_log(&c, 0, spool_logger);
	call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	comm_close(&c);
	ck_assert_int_eq(__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE), 1);
	ck_assert_msg(strstr(spool_log_msg, "x??[2J/..'") && !strchr(spool_log_msg, '\n') &&
		      !strchr(spool_log_msg, '\033'), "%s", spool_log_msg);
}
END_TEST

static int seen_has(const char *what)
{
	int r;

	pthread_mutex_lock(&seen_mu);
	r = strstr(seen_log, what) != NULL;
	pthread_mutex_unlock(&seen_mu);
	return r;
}

/* A directory missing at the first rewrites and made later: the WARN that
 * measurements are not kept is followed by one that they were written
 * after all (until 2026-12-05 the WARN was the last word, and a later
 * real failure was never said). */
START_TEST(test_spool_failure_then_written)
{
	struct comm c;
	char late[BOT_TEST_PATH_MAX];

	setenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS", "1000000", 1);
	setenv("NCCL_BOT_SPOOL", bot_test_path(late, dir, "late"), 1);
	comm_open_log(&c, 0, spool_logger);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	/* the first periodic rewrite fails and says so */
	for (unsigned i = 0; i < 2000 && !seen_has("opening the directory"); i++)
		usleep(5000);
	ck_assert_msg(seen_has("2 nccl-bot: spool ") && seen_has("opening the directory"), "%s",
		      seen_log);
	ck_assert_int_eq(mkdir(late, 0700), 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	wait_writer_gone();
	ck_assert_int_eq(count_entries(late), 1);
	ck_assert_msg(seen_has("2 nccl-bot: spool ") && seen_has(": written after all"), "%s",
		      seen_log);
}
END_TEST

/* The periodic rewrite runs on none of NCCL's threads: not on the proxy
 * thread that delivers the KernelCh stop completing a sample, not on the
 * launch thread (whose getCollInfo and Coll events complete records too).
 * The rewrite period is 1 ms (a test hook) and the spool directory does not
 * exist, so the first periodic rewrite fails and logs, and the logger
 * records on which thread; the test waits for it before any finalize. */
START_TEST(test_periodic_rewrite_off_nccl_threads)
{
	struct comm c;
	char missing[BOT_TEST_PATH_MAX];
	pid_t proxy;

	setenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS", "1000000", 1);
	setenv("NCCL_BOT_SPOOL", bot_test_path(missing, dir, "missing"), 1);
	comm_open_log(&c, 0, spool_logger);
	ck_assert_ptr_nonnull(c.pctx);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	ck_assert_uint_gt(c.measured, 0);
	proxy = __atomic_load_n(&c.proxy_tid, __ATOMIC_ACQUIRE);
	ck_assert_int_gt(proxy, 0);
	for (unsigned i = 0; i < 2000 && !__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE); i++)
		usleep(5000);
	ck_assert_msg(__atomic_load_n(&spool_logs, __ATOMIC_ACQUIRE) > 0,
		      "no periodic rewrite within 10 s of the samples");
	ck_assert_msg(strstr(spool_log_msg, "opening the directory"), "%s", spool_log_msg);
	ck_assert_int_eq(spool_log_level, 2);
	ck_assert_msg(spool_log_tid != proxy, "the spool was rewritten on the proxy thread");
	ck_assert_msg(spool_log_tid != (pid_t)syscall(SYS_gettid),
		      "the spool was rewritten on the launch thread");
	comm_close(&c);
}
END_TEST


/* With nothing but time passing (no event after the last sample), the
 * writer brings the file up to date within the period: here 1 ms. */
START_TEST(test_periodic_rewrite_without_events)
{
	struct comm c;
	char err[BOT_SPOOL_ERR_MAX];
	int got = 0;

	setenv("NCCL_BOT_TEST_SPOOL_PERIOD_NS", "1000000", 1);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	drain(&c);
	ck_assert_uint_gt(c.measured, 0);
	for (unsigned i = 0; i < 2000 && !got; i++) {
		if (find_spool(spool_path, sizeof(spool_path)) == 1 &&
		    bot_spool_read_file(spool_path, &sf, err, sizeof(err)) == 0) {
			got = count(BOT_SPOOL_SAMPLE, 0) == c.measured;
			bot_spool_free(&sf);
		}
		if (!got)
			usleep(5000);
	}
	ck_assert_msg(got, "the spool did not reach %u samples before finalize", c.measured);
	comm_close(&c);
	read_spool();
	ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), c.measured);
}
END_TEST

/* The writer thread: none at library load or for a comm that does not
 * measure; one from the first measuring profiler init, named, with every
 * signal NCCL or the application may use blocked; gone once the last comm
 * finalized and its file is complete (it never keeps a process waiting),
 * and back for the next measuring comm. */
START_TEST(test_writer_thread_lifetime)
{
	struct comm c;
	void *pctx = NULL;
	int mask = 0;
	char spool[BOT_TEST_PATH_MAX];

	ck_assert_int_eq(writer_threads(), 0);
	snprintf(spool, sizeof(spool), "%s", getenv("NCCL_BOT_SPOOL"));
	unsetenv("NCCL_BOT_SPOOL");
	ck_assert_int_eq(p5->init(&pctx, COMM + 1, &mask, "off", 2, 16, 0, logger), 0);
	ck_assert_ptr_null(pctx);
	ck_assert_int_eq(writer_threads(), 0);
	setenv("NCCL_BOT_SPOOL", spool, 1);
	for (int round = 0; round < 2; round++) {
		DIR *dp;
		struct dirent *e;
		int seen = 0;

		comm_open(&c, 0);
		/* named by itself once it runs */
		for (unsigned i = 0; i < 1000 && !writer_threads(); i++)
			usleep(1000);
		ck_assert_int_eq(writer_threads(), 1);
		dp = opendir("/proc/self/task");
		ck_assert_ptr_nonnull(dp);
		while ((e = readdir(dp))) {
			char p[300], line[256];
			FILE *f;
			unsigned long long blk = 0;
			int mine = 0;

			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "/proc/self/task/%s/status", e->d_name);
			f = fopen(p, "r");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f)) {
				if (!strncmp(line, "Name:\tnccl-bot-spool", 20))
					mine = 1;
				if (!strncmp(line, "SigBlk:", 7))
					blk = strtoull(line + 7, NULL, 16);
			}
			fclose(f);
			if (!mine)
				continue;
			seen = 1;
			for (int sig = 1; sig < 32; sig++)
				if (sig != SIGKILL && sig != SIGSTOP)
					ck_assert_msg(blk >> (sig - 1) & 1,
						      "signal %d not blocked in the writer", sig);
		}
		closedir(dp);
		ck_assert(seen);
		for (unsigned i = 0; i < 4000; i++)
			call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
		comm_close(&c);
		read_spool();	/* waits for the writer to end */
		ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0) > 0, 1);
		bot_spool_free(&sf);
	}
}
END_TEST

/* Without a writer thread (pthread_create failed; a test hook stands for
 * it), measurement goes on and finalize writes the file itself; said once
 * in the log. */
START_TEST(test_no_writer_thread)
{
	struct comm c;
	unsigned total = 0;

	setenv("NCCL_BOT_TEST_SPOOL_NO_THREAD", "1", 1);
	for (int round = 0; round < 2; round++) {
		comm_open_log(&c, 0, spool_logger);
		ck_assert_int_eq(writer_threads(), 0);
		for (unsigned i = 0; i < 4000; i++)
			call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
		comm_close(&c);
		total += c.measured;
		ck_assert_int_eq(writer_threads(), 0);
		read_spool();
		ck_assert_uint_gt(c.measured, 0);
		ck_assert_uint_eq(count(BOT_SPOOL_SAMPLE, 0), total);
		bot_spool_free(&sf);
	}
	ck_assert_int_eq(spool_logs, 1);
	ck_assert_msg(strstr(spool_log_msg, "cannot start the writer thread") &&
		      strstr(spool_log_msg, "at finalize and exit only"), "%s", spool_log_msg);
}
END_TEST

/* ---- the file's name -------------------------------------------------------- */

/* nb-<host>-<pid>-<16 hex>.spool: the pid alone collides for ranks in
 * separate PID namespaces (both pid 1) that share the hostname and the
 * directory, so a per-process token follows it. */
START_TEST(test_spool_name)
{
	struct comm c;
	char token[17];
	const char *base;

	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	read_spool();
	base = strrchr(spool_path, '/') + 1;
	ck_assert_msg(spool_name_ok(base, getpid(), token), "%s", base);
	ck_assert_str_ne(token, "0000000000000000");
	ck_assert_uint_eq(sf.hdr.pid, (uint32_t)getpid());
	/* readers take any *.spool: this name and an older one, side by side */
	{
		char old[BOT_TEST_PATH_MAX + 256], host[256], cmd[BOT_TEST_PATH_MAX + 512];
		char out[4096];
		size_t n;
		FILE *p;

		spool_host(host);
		snprintf(old, sizeof(old), "%s/nb-%s-%ld.spool", dir, host, (long)getpid());
		ck_assert_int_eq(link(spool_path, old), 0);
		snprintf(cmd, sizeof(cmd), "%s spool show '%s' 2>&1",
			 getenv("BOT_NCCL_BOT") ? getenv("BOT_NCCL_BOT") : BOT_NCCL_BOT, dir);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		ck_assert_int_eq(pclose(p), 0);
		ck_assert_msg(strstr(out, spool_path) && strstr(out, old), "%s", out);
	}
}
END_TEST

/* Two instances of the library in one process (dlmopen into two new link
 * namespaces: the same pid, hostname, directory and AT_RANDOM bytes) write
 * two files under two names, both whole. */
START_TEST(test_two_instances_two_files)
{
	const char *path = getenv("BOT_TUNER_SO");
	char names[2][BOT_TEST_PATH_MAX + 256], tokens[2][17];
	int n = 0;

	if (!path || !*path)
		path = BOT_TUNER_SO;
	for (int k = 0; k < 2; k++) {
		void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
		const tuner_v5_t *t;
		const profiler_v5_t *p;
		void *pctx = NULL, *tctx = NULL;
		int mask = 0;

		ck_assert_msg(h != NULL, "dlmopen %s: %s", path, dlerror());
		t = dlsym(h, "ncclTunerPlugin_v5");
		p = dlsym(h, "ncclProfiler_v5");
		ck_assert(t && p && t != t5 && p != p5);
		ck_assert_int_eq(p->init(&pctx, COMM + (uint64_t)k, &mask, "ns", 2, 16, k, logger), 0);
		ck_assert_ptr_nonnull(pctx);
		ck_assert_int_eq(t->init(&tctx, COMM + (uint64_t)k, 16, 2, logger, NULL, NULL), 0);
		for (unsigned i = 0; i < 4000; i++) {
			float tab[NALGO][NPROTO];
			int nch = 0;

			cost_init(tab);
			ck_assert_int_eq(t->getCollInfo(tctx, BOT_COLL_ALLREDUCE, 4 * MiB, 1,
							(float **)tab, NALGO, NPROTO, 0, &nch), 0);
		}
		ck_assert_int_eq(t->finalize(tctx), 0);
		ck_assert_int_eq(p->finalize(pctx), 0);
		/* the library stays mapped (-z nodelete): no dlclose */
	}
	wait_writer_gone();
	{
		DIR *dp = opendir(dir);
		struct dirent *e;

		ck_assert_ptr_nonnull(dp);
		while ((e = readdir(dp)))
			if (e->d_name[0] != '.') {
				ck_assert_int_lt(n, 2);
				ck_assert_msg(spool_name_ok(e->d_name, getpid(), tokens[n]), "%s",
					      e->d_name);
				snprintf(names[n++], sizeof(names[0]), "%s/%s", dir, e->d_name);
			}
		closedir(dp);
	}
	ck_assert_int_eq(n, 2);
	ck_assert_str_ne(tokens[0], tokens[1]);
	for (int k = 0; k < 2; k++) {
		char err[BOT_SPOOL_ERR_MAX];
		unsigned summaries = 0;

		ck_assert_msg(bot_spool_read_file(names[k], &sf, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(sf.hdr.pid, (uint32_t)getpid());
		for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
			if (sf.recs[i].kind == BOT_SPOOL_SUMMARY) {
				summaries++;
				/* each file holds its own instance's comm */
				ck_assert_uint_eq(sf.recs[i].comm_id,
						  COMM + (uint64_t)(sf.recs[i].rank == 1));
			}
		ck_assert_uint_eq(summaries, 1);
		bot_spool_free(&sf);
	}
}
END_TEST

/* ---- reader ------------------------------------------------------------------ */

static uint8_t *slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b = malloc(1 << 24);

	ck_assert(f && b);
	*n = fread(b, 1, 1 << 24, f);
	fclose(f);
	return b;
}

static void expect_reject(const uint8_t *b, size_t n, const char *why)
{
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];

	ck_assert_int_eq(bot_spool_parse("x.spool", b, n, &f, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why) && !strncmp(err, "x.spool: ", 9), "'%s' lacks '%s'", err,
		      why);
	ck_assert_ptr_null(f.recs);
}

static void recrc(uint8_t *b, size_t n)
{
	uint32_t crc = bot_spool_crc32c(0, b, n - 8);

	b[n - 8] = (uint8_t)crc;
	b[n - 7] = (uint8_t)(crc >> 8);
	b[n - 6] = (uint8_t)(crc >> 16);
	b[n - 5] = (uint8_t)(crc >> 24);
}

START_TEST(test_reader_rejects)
{
	struct comm c;
	size_t n;
	uint8_t *b, *x;
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];

	/* CRC-32C check value */
	ck_assert_uint_eq(bot_spool_crc32c(0, "123456789", 9), 0xe3069283u);
	comm_open(&c, 0);
	for (unsigned i = 0; i < 4000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	read_spool();
	b = slurp(spool_path, &n);
	ck_assert_uint_eq(n, 64 + 160 * sf_nrec_file + 8);
	ck_assert_int_eq(bot_spool_parse("x.spool", b, n, &f, err, sizeof(err)), 0);
	bot_spool_free(&f);
	x = malloc(n);

	memcpy(x, b, n);
	x[0] = 'X';
	expect_reject(x, n, "bad magic");
	memcpy(x, b, n);
	x[100] ^= 1;
	expect_reject(x, n, "CRC-32C mismatch");
	expect_reject(b, n - 1, "truncated");
	expect_reject(b, 10, "truncated");
	memcpy(x, b, n);
	x[12] = 128;		/* record size */
	expect_reject(x, n, "record size 128");
	memcpy(x, b, n);
	x[8] = 3;		/* version */
	recrc(x, n);
	expect_reject(x, n, "version 3");
	memcpy(x, b, n);
	x[8] = 0;
	recrc(x, n);
	expect_reject(x, n, "version 0");
	memcpy(x, b, n);
	x[8] = 1;		/* this file has a process record: not in a version 1 file */
	recrc(x, n);
	expect_reject(x, n, "record " );
	expect_reject(x, n, "a process record (kind 3) in a version 1 file");
	memcpy(x, b, n);
	x[64 + 2] = 9;		/* collective of record 0, CRC fixed: a range check */
	recrc(x, n);
	expect_reject(x, n, "record 0");
	memcpy(x, b, n);
	x[64 + 29] = 1;		/* reserved byte */
	recrc(x, n);
	expect_reject(x, n, "reserved");
	/* a cost entry of -0 (review finding 15): a spool file an older rank
	 * library wrote with one is refused whole, with the reason */
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		size_t at = 64 + 160 * i + 76 + 4 * (size_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE);

		if (sf.recs[i].flags & BOT_SPOOL_F_NO_COST)
			continue;
		memcpy(x, b, n);
		x[at] = x[at + 1] = x[at + 2] = 0;
		x[at + 3] = 0x80;
		recrc(x, n);
		expect_reject(x, n, "is -0, not -1 or a finite value >= 0");
		break;
	}
	free(x);
	free(b);
}
END_TEST

/* ---- the process record (kind 3, spool format v2): the codec ---------------- */

static struct bot_spool_rec proc_rec(void)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_PROC;
	r.arm = r.auto_arm = r.decided = BOT_SPOOL_ARM_NONE;
	r.policy = 4;
	r.nccl_version = 22809;
	r.tuner_abi = 5;
	r.profiler_abi = 6;
	r.comms = 0x01020304;
	r.proc_flags = BOT_SPOOL_PF_TABLE | BOT_SPOOL_PF_MEASURED;
	return r;
}

static struct bot_spool_rec sample_rec(void)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_SAMPLE;
	r.coll = BOT_COLL_ALLREDUCE;
	r.arm = 4;
	r.nchannels = 8;
	r.auto_arm = 4;
	r.decided = BOT_SPOOL_ARM_NONE;
	r.comm_id = 7;
	r.nranks = 2;
	r.nnodes = 1;
	r.nbytes = MiB;
	r.seq = 1;
	r.duration_ns = 1000;
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		r.cost[a] = -1.0f;
	r.cost[4] = 10.0f;
	return r;
}

/* A whole file image: header version v, the records given. */
static uint8_t *image(uint32_t v, const struct bot_spool_rec *r, size_t n, size_t *len)
{
	struct bot_spool_hdr h;
	uint8_t *b;

	*len = BOT_SPOOL_HDR_SIZE + n * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	b = calloc(1, *len);
	ck_assert_ptr_nonnull(b);
	memset(&h, 0, sizeof(h));
	h.version = v;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = n;
	strcpy(h.build_id, "nccl-bot test");
	bot_spool_pack_hdr(b, &h);
	for (size_t i = 0; i < n; i++)
		bot_spool_pack_rec(b + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r[i]);
	recrc(b, *len);
	return b;
}

/* Pack: the wire layout of formats.md section 9, byte for byte; unpack:
 * the same record back; the reader takes it in a v2 file. */
START_TEST(test_proc_round_trip)
{
	struct bot_spool_rec r = proc_rec(), back, recs[3] = { sample_rec(), proc_rec(),
							       sample_rec() };
	uint8_t u[BOT_SPOOL_REC_SIZE], want[BOT_SPOOL_REC_SIZE] = { 3, 0, 0, 0xff, 0, 0xff, 0xff, 4 };
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];
	size_t n;
	uint8_t *b;

	bot_spool_pack_rec(u, &r);
	want[8] = 0x19;		/* 22809 = 0x5919 */
	want[9] = 0x59;
	want[12] = 5;
	want[16] = 6;
	want[20] = 4;		/* 0x01020304, little-endian */
	want[21] = 3;
	want[22] = 2;
	want[23] = 1;
	want[24] = 3;
	ck_assert_mem_eq(u, want, sizeof(want));
	bot_spool_unpack_rec(&back, u);
	ck_assert_mem_eq(&back, &r, sizeof(r));
	ck_assert_int_eq(bot_spool_proc_check(&back, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_spool_rec_pad_zero(u), 1);
	/* not a measurement: what a delta and the harvest's stream refuse */
	ck_assert_int_eq(bot_spool_rec_check(&back, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "process record"), "%s", err);
	/* a measurement with process fields set is refused too */
	recs[0].comms = 1;
	ck_assert_int_eq(bot_spool_rec_check(&recs[0], err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "process-record fields"), "%s", err);
	recs[0].comms = 0;

	b = image(2, recs, 3, &n);
	ck_assert_msg(bot_spool_parse("x.spool", b, n, &f, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(f.hdr.version, 2);
	ck_assert_uint_eq(f.hdr.nrecords, 3);
	ck_assert_mem_eq(&f.recs[1], &r, sizeof(r));
	ck_assert_uint_eq(f.recs[0].kind, BOT_SPOOL_SAMPLE);
	ck_assert_uint_eq(f.recs[0].comms, 0);
	bot_spool_free(&f);
	free(b);
	/* version 1: a file without a process record still reads */
	recs[1] = sample_rec();
	recs[1].seq = 2;
	b = image(1, recs, 2, &n);
	ck_assert_msg(bot_spool_parse("x.spool", b, n, &f, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(f.hdr.version, 1);
	ck_assert_uint_eq(f.hdr.nrecords, 2);
	bot_spool_free(&f);
	free(b);
}
END_TEST

/* Every refusal of a process record, each naming the record. */
START_TEST(test_proc_rejects)
{
	struct bot_spool_rec recs[3] = { sample_rec(), proc_rec(), proc_rec() };
	struct bot_spool_rec bad;
	size_t n;
	uint8_t *b;

	/* in a version 1 file */
	b = image(1, recs, 2, &n);
	expect_reject(b, n, "record 1 (offset 224): a process record (kind 3) in a version 1 file");
	free(b);
	/* two in one file: the second is named, with the first's index */
	b = image(2, recs, 3, &n);
	expect_reject(b, n, "record 2 (offset 384): a second process record (the first is "
		      "record 1");
	/* a byte its layout does not specify: 28 and 159 */
	free(b);
	b = image(2, recs, 2, &n);
	b[64 + 160 + 28] = 1;
	recrc(b, n);
	expect_reject(b, n, "record 1 (offset 224): process record: bytes 28..159 not zero");
	b[64 + 160 + 28] = 0;
	b[64 + 160 + 159] = 0x80;
	recrc(b, n);
	expect_reject(b, n, "bytes 28..159 not zero");
	free(b);
	/* each field out of its range */
#define PROC_BAD(field, value, why)							do {											bad = proc_rec();								bad.field = value;								recs[1] = bad;									b = image(2, recs, 2, &n);							expect_reject(b, n, why);							free(b);								} while (0)
	PROC_BAD(flags, 1, "bytes 1..6 are 1 0 255 0 255 255");
	PROC_BAD(coll, 4, "bytes 1..6 are 0 4 255");
	PROC_BAD(arm, 3, "bytes 1..6 are 0 0 3 0");
	PROC_BAD(nchannels, 8, "bytes 1..6 are 0 0 255 8");
	PROC_BAD(auto_arm, 0, "bytes 1..6 are 0 0 255 0 0 255");
	PROC_BAD(decided, 0, "bytes 1..6 are 0 0 255 0 255 0");
	PROC_BAD(policy, 16, "process record: policy 16 out of range");
	{
		/* the -free ids 12..15 (formats.md section 10) are policies too: a
		 * process running thompson-free and its samples are read */
		struct bot_spool_file f;
		char err[BOT_SPOOL_ERR_MAX];

		bad = proc_rec();
		bad.policy = 15;
		recs[1] = bad;
		recs[0].policy = 15;
		b = image(2, recs, 2, &n);
		ck_assert_msg(bot_spool_parse("x.spool", b, n, &f, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(f.recs[0].policy, 15);
		bot_spool_free(&f);
		free(b);
		recs[0] = sample_rec();
	}
	PROC_BAD(tuner_abi, 1, "process record: tuner ABI 1 (want 2..6)");
	PROC_BAD(tuner_abi, 7, "process record: tuner ABI 7 (want 2..6)");
	PROC_BAD(profiler_abi, 3, "process record: profiler ABI 3 (want 0 or 4..6)");
	PROC_BAD(profiler_abi, 7, "process record: profiler ABI 7");
	PROC_BAD(comms, 0, "process record: 0 communicators");
	PROC_BAD(proc_flags, 8, "process record: unknown flag bits 0x8");
#undef PROC_BAD
	/* 0 is a profiler ABI (none), 2 and 6 the tuner's bounds */
	bad = proc_rec();
	bad.profiler_abi = 0;
	bad.tuner_abi = 2;
	ck_assert_int_eq(bot_spool_proc_check(&bad, NULL, 0), 0);
	bad.tuner_abi = 6;
	ck_assert_int_eq(bot_spool_proc_check(&bad, NULL, 0), 0);
	/* measurement fields in the struct (never on the wire: pack drops them) */
	bad.comm_id = 1;
	ck_assert_int_eq(bot_spool_proc_check(&bad, NULL, 0), -1);
	bad = proc_rec();
	bad.cost[3] = -0.0f;
	ck_assert_int_eq(bot_spool_proc_check(&bad, NULL, 0), -1);
}
END_TEST

/* `nccl-bot spool sweep` -> a sweep CSV that bot_sweep_parse accepts, one
 * row per clean sample. */
START_TEST(test_sweep_conversion)
{
	struct comm c;
	struct bot_sweep sw;
	char cmd[BOT_TEST_PATH_MAX + 512], err[BOT_SWEEP_ERR_MAX], *out = malloc(1 << 22);
	FILE *p;
	size_t n;
	unsigned clean = 0;

	comm_open(&c, 0);
	for (unsigned i = 0; i < 10000; i++)
		call(&c, BOT_COLL_ALLREDUCE, 4 * MiB, &plain);
	comm_close(&c);
	read_spool();
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++)
		clean += bot_spool_clean(&sf.recs[i]);
	ck_assert_uint_gt(clean, 0);
	snprintf(cmd, sizeof(cmd), "%s spool sweep --fabric test-fab '%s' 2>/dev/null",
		 getenv("BOT_NCCL_BOT") ? getenv("BOT_NCCL_BOT") : BOT_NCCL_BOT, dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, (1 << 22) - 1, p);
	ck_assert_int_eq(pclose(p), 0);
	bot_sweep_init(&sw);
	ck_assert_msg(bot_sweep_parse(&sw, "out.csv", out, n, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(sw.nrows, clean);
	for (size_t i = 0; i < sw.nrows; i++) {
		ck_assert_int_eq(sw.rows[i].coll, BOT_COLL_ALLREDUCE);
		ck_assert_int_eq(sw.rows[i].algo, BOT_ALGO_RING);
		ck_assert_int_eq(sw.rows[i].proto, BOT_PROTO_SIMPLE);
		ck_assert(sw.rows[i].auto_us == 90.0);
		ck_assert(sw.rows[i].measured_us == 100.0);
		ck_assert_str_eq(sw.fabrics[sw.rows[i].fabric], "test-fab");
	}
	bot_sweep_free(&sw);
	free(out);
}
END_TEST

static Suite *spool_suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("so");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_round_trip_and_duty);
	tcase_add_test(tc, test_decided_from_table);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_min_bytes_and_capture);
	tcase_add_test(tc, test_late_events);
	tcase_add_test(tc, test_late_events_after_profiler_finalize);
	tcase_add_test(tc, test_missing_channels_complete);
	tcase_add_test(tc, test_env_as_tuner);
	tcase_add_test(tc, test_env_refused_as_tuner);
	tcase_add_test(tc, test_profiler_v4_descriptor);
	tcase_add_test(tc, test_nan_cost);
	tcase_add_test(tc, test_spool_dir_fd);
	tcase_add_test(tc, test_spool_dir_link);
	tcase_add_test(tc, test_spool_dir_relative_missing);
	tcase_add_test(tc, test_spool_failure_then_written);
	tcase_add_test(tc, test_spool_dir_relative_deep);
	tcase_add_test(tc, test_spool_dir_dotdot);
	tcase_add_test(tc, test_spool_dir_dotdot_once);
	tcase_add_test(tc, test_spool_dir_shown_printable);
	tcase_add_test(tc, test_fork_child_never_writes);
	tcase_add_test(tc, test_periodic_rewrite_off_nccl_threads);
	tcase_add_test(tc, test_periodic_rewrite_without_events);
	tcase_add_test(tc, test_writer_thread_lifetime);
	tcase_add_test(tc, test_no_writer_thread);
	tcase_add_test(tc, test_spool_name);
	tcase_add_test(tc, test_two_instances_two_files);
	tcase_add_test(tc, test_reader_rejects);
	tcase_add_test(tc, test_proc_round_trip);
	tcase_add_test(tc, test_proc_tuner_only);
	tcase_add_test(tc, test_proc_tuner_v2);
	tcase_add_test(tc, test_proc_profiler_not_measuring);
	tcase_add_test(tc, test_proc_profiler_alone_no_file);
	tcase_add_test(tc, test_proc_no_spool);
	tcase_add_test(tc, test_proc_at_exit_and_fork);
	tcase_add_test(tc, test_proc_rejects);
	tcase_add_test(tc, test_sweep_conversion);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(spool_suite)
