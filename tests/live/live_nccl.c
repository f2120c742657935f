/*
 * live_nccl.c - the one check against real NCCL on a real GPU: does NCCL
 * load libnccl-tuner-bot.so, call its tuner, run the arms it forces, does
 * the profiler measure them into the spool, and what does the plugin cost?
 *
 * NCCL never calls the tuner for a one-rank communicator, and rejects two
 * ranks on one GPU of one host (design-review-nccl.md M10). So the parent
 * starts two processes on GPU 0 that claim different hosts (NCCL_HOSTID)
 * and talk over the Socket transport on loopback: NCCL sees a 2-rank,
 * 2-node communicator and calls the plugin for every collective.
 *
 * Three jobs, each of two ranks (children exec'ed from this program, so the
 * parent's CUDA state is not inherited), run the same calls:
 *	none	NCCL_TUNER_PLUGIN=NCCL_PROFILER_PLUGIN=none: stock NCCL, AUTO;
 *	bot	tuner and profiler = the built .so, a step table (common/table.h's
 *		encoder, measure flag set), NCCL_BOT_DEBUG=1, no NCCL_BOT_SPOOL:
 *		deciding, not measuring;
 *	meas	the same plus NCCL_BOT_SPOOL=LOGDIR/meas-spool and
 *		NCCL_BOT_WINDOW=16: deciding and measuring.
 * The table (built after the none job) forces tree/simple at 1 MiB, ring/ll
 * at 4 MiB, tree/ll at 16 MiB, ring/simple at 32 MiB, and AUTO's own arm
 * (what the none job ran) at 2 MiB; 256 KiB is below its 1 MiB threshold
 * and 64 MiB has no entry, so both are left to NCCL.
 *
 * Each rank: 2 warm-up rounds (the second one timed), then a timed main
 * loop of batches of 2 rounds of 16 calls (1 round when a warm-up round took
 * over BATCH_TARGET_S / 2; both ranks agree with a max-allreduce), up to
 * MAX_MAIN_CALLS calls. A round is 1 MiB x5, 4 MiB x5, 2 MiB x4, 256 KiB x2
 * in a fixed interleaved order, so any 16 consecutive calls - one
 * measurement window - hold every main size. A CUDA event between
 * consecutive calls, cudaStreamSynchronize around each batch: batches are
 * short (well under 1 s of GPU time), so a window that spans a batch's
 * synchronize stays open far less than the profiler's 2 s cut-off (a window
 * open longer is closed early, then ~98x that long passes in quiet time).
 * After each batch both ranks agree (a 4-byte max-allreduce) whether to
 * stop: MAX_MAIN_CALLS made, or MAIN_BUDGET_S spent - in the meas job
 * (NCCL 2.28+) only once PERIOD + WINDOW main-loop calls are made (the
 * first window, armed at a commId-derived call up to PERIOD - WINDOW, has
 * then closed) or MEAS_MAX_S has passed. Then the arm probe: 3 calls of
 * every size, each synchronized. NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING makes NCCL print "AllReduce: N Bytes ->
 * Algo A proto P" for every call on rank 0; the ranks print their per-size
 * timings ("live-timing ..." lines) and calls ("live-main", "live-calls").
 *
 * Checks (one line each, "N passed, N failed" at the end):
 *   - every job's two ranks exited 0 within TIMEOUT_S;
 *   - nccl-bot was loaded as tuner and profiler in bot and meas, not in
 *     none; the profiler measured in meas (its "measuring windows" line on
 *     both ranks) and not in bot;
 *   - per size, from all of rank 0's TUNING lines: forced sizes ran the
 *     table's arm in bot and meas on every call, with the plugin's "arm K
 *     forced" debug line; the other sizes ran what none ran;
 *   - no job ran with NCCL_ALGO/NCCL_PROTO set (an /etc/nccl.conf can set
 *     them: NCCL's "set by environment" line, the tuner's line);
 *   - the spool (common/spool.h's reader): one valid file per meas rank
 *     with the table's digest; per main size >= 1 MiB and rank, samples of
 *     the arm the table forces with a duration, clean ones (or, when there
 *     is none, ones labelled only out of range: a WARNING with the numbers),
 *     whose median duration is within 0.05x..20x of the rank's CUDA-event
 *     median per call at that size, no sample of another arm, and a context
 *     summary whose decided arm is the table's and whose auto_arm is what
 *     the none job ran; every sample's arm is the one NCCL printed for its
 *     size. Before NCCL 2.28 these measurement checks are SKIPPED (the
 *     profiler measures only with profiler v5+, doc/formats.md).
 * Overhead (time per call, median over batches, per size, none vs bot vs
 * meas) is reported, not checked: a WARNING line where a ratio passes 1.5
 * at a size whose arm is stock NCCL's.
 *
 * Exit: 0 pass, 1 fail, 77 skip (no GPU: cudaGetDeviceCount() fails or
 * finds none; automake counts SKIP), 99 a setup error.
 *
 * usage: live_nccl PLUGIN.so [LOGDIR]    (logs, spool, report.txt in LOGDIR)
 *        live_nccl --selftest DIR         (the checks on canned logs and spool
 *                                          files; no GPU needed)
 *        live_nccl --child JOB RANK FD    (internal)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* nccl.h declares some functions as f() (not prototypes in C). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cuda_runtime_api.h>
#include <nccl.h>
#pragma GCC diagnostic pop

#include "common/spool.h"
#include "common/table.h"
#include "policies/context.h"
#include "tuner/messages.h"

extern char **environ;

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define ARM(a, p) ((a) * BOT_NPROTO + (p))

#define MIN_BYTES_LOG2 20	/* the table's threshold: 1 MiB */
#define TIMEOUT_S 120		/* a job still running then is killed (init included) */
#define MAIN_BUDGET_S 45	/* the main loop stops after this (both ranks agree)... */
#define MEAS_MAX_S 75		/* ...in meas, once PERIOD + WINDOW calls are made, or after this */
#define ROUND 16		/* calls per round of the main loop */
#define BATCH_ROUNDS_MAX 2	/* rounds per batch: 2, or 1 when a round is slow */
#define BATCH_CALLS_MAX (ROUND * BATCH_ROUNDS_MAX)
#define BATCH_TARGET_S 0.25	/* a batch's GPU time should stay under this */
#define MAX_MAIN_CALLS 3456	/* timed calls at most */
#define MAX_BATCHES (MAX_MAIN_CALLS / ROUND)
#define WARM_ROUNDS 2
#define PROBE_REPS 3
#define WINDOW 16		/* NCCL_BOT_WINDOW of the meas job */
#define PERIOD (100 * WINDOW)	/* one window per 100 windows' worth of calls */
#define MEAS_MIN_CALLS (PERIOD + WINDOW)	/* meas: main-loop calls before the budget */
#define MEAS_NCCL_VERSION 22800	/* measurement needs NCCL 2.28 (profiler v5+) */
#define RATIO_LO 0.05		/* sample median / CUDA-event median */
#define RATIO_HI 20.0
#define WARN_RATIO 1.5		/* overhead WARNING above this, same arm only */
#define ARM_BAD (-2)		/* NCCL printed names we could not map */
#define PATHBUF 4400
#define LINEBUF 4096

enum role {
	BELOW,		/* under the table's threshold: left to NCCL, never measured */
	FORCED,		/* the table forces .arm */
	AUTOS,		/* the table forces AUTO's own arm, read from the none job */
	LEFT,		/* no table entry: AUTO (greedy without corrections) */
};

static const struct {
	size_t bytes;
	int role;
	int arm;	/* FORCED: the arm; else -1 */
	int per_round;	/* calls per main-loop round; 0: in the arm probe only */
} sizes[] = {
	{ 256 * KiB, BELOW, -1, 2 },
	{ 1 * MiB, FORCED, ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE), 5 },
	{ 2 * MiB, AUTOS, -1, 4 },
	{ 4 * MiB, FORCED, ARM(BOT_ALGO_RING, BOT_PROTO_LL), 5 },
	{ 16 * MiB, FORCED, ARM(BOT_ALGO_TREE, BOT_PROTO_LL), 0 },
	{ 32 * MiB, FORCED, ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE), 0 },
	{ 64 * MiB, LEFT, -1, 0 },
};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

/* One round, indices into sizes[]: 1 MiB at 0,3,7,10,14; 4 MiB at
 * 1,4,8,11,15; 2 MiB at 2,6,9,13; 256 KiB at 5,12 (checked by --selftest
 * against per_round). */
static const unsigned char pattern[ROUND] = { 1, 3, 2, 1, 3, 0, 2, 1, 3, 2, 1, 3, 0, 2, 1, 3 };

static int size_index(unsigned long long bytes)
{
	for (int s = 0; s < NSIZES; s++)
		if (sizes[s].bytes == bytes)
			return s;
	return -1;
}

static int measured(int s)
{
	return sizes[s].per_round > 0 && sizes[s].bytes >= ((size_t)1 << MIN_BYTES_LOG2);
}

static const char *arm_str(int arm)
{
	if (arm == ARM_BAD)
		return "(unknown names)";
	if (arm == BOT_SPOOL_ARM_NONE)
		return "255 (AUTO)";
	return arm >= 0 && arm < BOT_NARMS ? bot_arm_name(arm) : "-";
}

/* A number for a table cell, "-" when absent (negative). */
static const char *num(char *out, size_t cap, double v, int prec)
{
	if (v < 0)
		snprintf(out, cap, "-");
	else
		snprintf(out, cap, "%.*f", prec, v);
	return out;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v. -1 for an empty set. */
static double median(double *v, int n)
{
	if (n <= 0)
		return -1.0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* snprintf whose truncation is an error (-1) rather than a warning. */
static int fmt(char *out, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *out, size_t cap, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(out, cap, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* NCCL 2.28 prints these (copied from its source: change with NCCL):
 *	NCCL_TUNING_FMT		NCCL src/enqueue.cc (INFO NCCL_TUNING, rank 0 only;
 *				names from ncclAlgoToString/ncclProtoToString:
 *				TREE RING ... NVLS_TREE PAT, LL LL128 SIMPLE)
 *	NCCL_ENV_SET_FMT	NCCL src/graph/tuning.cc (INFO NCCL_ENV)
 * The plugin's own lines come from its formats in tuner/messages.h, so the
 * checks parse what the plugin prints and the selftest writes the same. */
#define NCCL_TUNING_FMT "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"
#define BOT_MEASURING_FMT BOT_MSG_MEASURING
#define BOT_ARM_FMT BOT_MSG_ARM
#define BOT_ALGO_ENV_LINE BOT_MSG_ALGO_ENV
#define NCCL_ENV_SET_FMT "%s set by environment to %s"

static int nccl_ver;		/* ncclGetVersion() of the run (the selftest sets it) */

static const char meas_na_why[] =
	"the profiler measures only as profiler v5+ linked to the tuner by commId (NCCL 2.28+); "
	"on 2.27 (profiler v4) it decides and measures nothing unless NCCL_BOT_MEASURE_V4=1, and "
	"older NCCL has no GPU timestamps (doc/formats.md, doc/nccl-abi.md). The measurement "
	"checks (spool files, samples per size, spool arms) and the profiler's 'measuring "
	"windows' line are SKIPPED; the decision checks (jobs, loading, environment, arms) run";

/* "2.28.9" from NCCL's version code (2.9+: major*10000 + minor*100 + patch). */
static const char *ver_str(int v)
{
	static char b[32];

	if (v >= 20900)
		snprintf(b, sizeof(b), "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	else
		snprintf(b, sizeof(b), "%d.%d.%d", v / 1000, v / 100 % 10, v % 100);
	return b;
}

/* ---- the rank processes ------------------------------------------------------ */

enum { JNONE, JBOT, JMEAS, NJOBS };

static int crank;
static ncclComm_t comm;
static cudaStream_t stream;
static void *buf;
static int *dflag;

#define CUDA_OK(what, call)								\
	do {										\
		cudaError_t e_ = (call);						\
		if (e_ != cudaSuccess) {						\
			fprintf(stderr, "live rank %d: %s: %s\n", crank, (what),	\
				cudaGetErrorString(e_));				\
			return 1;							\
		}									\
	} while (0)

static int allreduce(size_t bytes)
{
	ncclResult_t nr = ncclAllReduce(buf, buf, bytes / sizeof(float), ncclFloat, ncclSum, comm,
					stream);

	if (nr != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclAllReduce of %zu bytes: %s (%s)\n", crank, bytes,
			ncclGetErrorString(nr), ncclGetLastError(comm));
		return -1;
	}
	return 0;
}

/* Both ranks' max of *v (a 4-byte allreduce through the device flag), synchronized. */
static int agree_max(int *v, const char *what)
{
	ncclResult_t nr;

	CUDA_OK("cudaMemcpyAsync (flag in)",
		cudaMemcpyAsync(dflag, v, sizeof(int), cudaMemcpyHostToDevice, stream));
	nr = ncclAllReduce(dflag, dflag, 1, ncclInt32, ncclMax, comm, stream);
	if (nr != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclAllReduce of %s: %s (%s)\n", crank, what,
			ncclGetErrorString(nr), ncclGetLastError(comm));
		return 1;
	}
	CUDA_OK("cudaMemcpyAsync (flag out)",
		cudaMemcpyAsync(v, dflag, sizeof(int), cudaMemcpyDeviceToHost, stream));
	CUDA_OK("cudaStreamSynchronize after an agreement", cudaStreamSynchronize(stream));
	return 0;
}

static int child(int job, int rank, int fd)
{
	static double per_batch[NSIZES][MAX_BATCHES];
	static cudaEvent_t ev[BATCH_CALLS_MAX + 1];
	size_t maxb = sizes[NSIZES - 1].bytes, got = 0;
	ncclUniqueId id;
	long calls = 0, main_calls = 0, min_calls = 0;
	int nb = 0, hflag, ver = 0, round_us, rounds, bcalls;
	double t0, tmain, el;
	const char *stopped;
	ncclResult_t nr;

	crank = rank;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (got < sizeof(id)) {
		ssize_t n = read(fd, (char *)&id + got, sizeof(id) - got);

		if (n <= 0) {
			fprintf(stderr, "live rank %d: reading the unique id from fd %d: %s\n", rank, fd,
				n < 0 ? strerror(errno) : "pipe closed early");
			return 99;
		}
		got += (size_t)n;
	}
	close(fd);
	/* the meas job measures (NCCL 2.28+): its first window must have
	 * closed before the time budget may stop the main loop */
	ncclGetVersion(&ver);
	if (job == JMEAS && ver >= MEAS_NCCL_VERSION)
		min_calls = MEAS_MIN_CALLS;
	CUDA_OK("cudaSetDevice(0)", cudaSetDevice(0));
	CUDA_OK("cudaStreamCreate", cudaStreamCreate(&stream));
	CUDA_OK("cudaMalloc (64 MiB)", cudaMalloc(&buf, maxb));
	CUDA_OK("cudaMalloc (stop flag)", cudaMalloc((void **)&dflag, sizeof(int)));
	CUDA_OK("cudaMemset", cudaMemset(buf, 0, maxb));
	for (int i = 0; i <= BATCH_CALLS_MAX; i++)
		CUDA_OK("cudaEventCreate", cudaEventCreate(&ev[i]));
	t0 = now_s();
	nr = ncclCommInitRank(&comm, 2, id, rank);
	if (nr != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclCommInitRank(2 ranks, rank %d): %s (%s)\n", rank,
			rank, ncclGetErrorString(nr), ncclGetLastError(NULL));
		return 1;
	}
	printf("live rank %d: ncclCommInitRank took %.1f s\n", rank, now_s() - t0);

	/* warm-up: the first round connects every arm; the last one is timed */
	for (int w = 0; w < WARM_ROUNDS; w++) {
		t0 = now_s();
		for (int i = 0; i < ROUND; i++, calls++)
			if (allreduce(sizes[pattern[i]].bytes))
				return 1;
		CUDA_OK("cudaStreamSynchronize after the warm-up", cudaStreamSynchronize(stream));
	}
	/* batch size: both ranks take the slower rank's round time */
	el = (now_s() - t0) * 1e6;
	round_us = el > 2e9 ? 2000000000 : (int)el;
	if (agree_max(&round_us, "the warm-up round time"))
		return 1;
	calls++;
	rounds = (double)round_us * 1e-6 * BATCH_ROUNDS_MAX <= BATCH_TARGET_S ? BATCH_ROUNDS_MAX : 1;
	bcalls = rounds * ROUND;

	tmain = now_s();
	for (;;) {
		double sum[NSIZES] = { 0 };
		int cnt[NSIZES] = { 0 };

		CUDA_OK("cudaEventRecord", cudaEventRecord(ev[0], stream));
		for (int i = 0; i < bcalls; i++) {
			if (allreduce(sizes[pattern[i % ROUND]].bytes))
				return 1;
			CUDA_OK("cudaEventRecord", cudaEventRecord(ev[i + 1], stream));
		}
		calls += bcalls;
		main_calls += bcalls;
		CUDA_OK("cudaStreamSynchronize after a timed batch", cudaStreamSynchronize(stream));
		for (int i = 0; i < bcalls; i++) {
			float ms;

			CUDA_OK("cudaEventElapsedTime", cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
			sum[pattern[i % ROUND]] += (double)ms * 1000.0;
			cnt[pattern[i % ROUND]]++;
		}
		for (int s = 0; s < NSIZES; s++)
			if (cnt[s])
				per_batch[s][nb] = sum[s] / cnt[s];
		nb++;
		/* both ranks stop together (the max of their flags); main_calls
		 * is the same on both */
		el = now_s() - tmain;
		hflag = main_calls + bcalls > MAX_MAIN_CALLS ||
			(el >= MAIN_BUDGET_S && main_calls >= min_calls) || el >= MEAS_MAX_S;
		if (agree_max(&hflag, "the stop flag"))
			return 1;
		calls++;
		if (hflag)
			break;
	}
	el = now_s() - tmain;
	stopped = main_calls + bcalls > MAX_MAIN_CALLS ? "all-batches" :
		  main_calls >= min_calls ? "time-budget" : "meas-limit";
	printf("live-main rank %d batches %d calls %ld seconds %.2f stopped-by %s batch-calls %d "
	       "warm-round-ms %.1f budget-after-calls %ld\n", rank, nb, main_calls, el, stopped,
	       bcalls, round_us / 1000.0, min_calls);
	for (int s = 0; s < NSIZES; s++) {
		double v[MAX_BATCHES], med;

		if (!sizes[s].per_round)
			continue;
		memcpy(v, per_batch[s], sizeof(v));
		med = median(v, nb);
		printf("live-timing rank %d bytes %zu calls %d batches %d median_us %.3f "
		       "min_us %.3f max_us %.3f\n", rank, sizes[s].bytes,
		       sizes[s].per_round * rounds * nb, nb, med, v[0], v[nb - 1]);
	}

	/* the arm probe: every size, each call on its own */
	for (int s = 0; s < NSIZES; s++)
		for (int r = 0; r < PROBE_REPS; r++, calls++) {
			if (allreduce(sizes[s].bytes))
				return 1;
			CUDA_OK("cudaStreamSynchronize in the arm probe", cudaStreamSynchronize(stream));
		}
	printf("live-calls rank %d total %ld main %ld\n", rank, calls, main_calls);
	/* let the proxy thread deliver the last KernelCh events to the
	 * profiler before the communicator's finalize */
	usleep(300000);
	nr = ncclCommDestroy(comm);
	if (nr != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclCommDestroy: %s\n", rank, ncclGetErrorString(nr));
		return 1;
	}
	cudaFree(buf);
	cudaFree(dflag);
	printf("live rank %d: done\n", rank);
	return 0;
}

/* ---- the report -------------------------------------------------------------- */

static FILE *rep_file;		/* LOGDIR/report.txt */
static int rep_stdout = 1;	/* 0 in the selftest */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (rep_stdout) {
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	if (rep_file) {
		va_start(ap, fmt);
		vfprintf(rep_file, fmt, ap);
		va_end(ap);
	}
}

/* Append to a reason buffer, "; " between reasons. */
static void why_add(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_add(char *why, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;

	if (n && n + 3 < cap) {
		memcpy(why + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(why + n, cap - n, fmt, ap);
	va_end(ap);
}

#define MAXCHECKS 48
#define NMEAS_CHECKS 8		/* spool files, 3 sizes x 2 ranks, spool arms */
#define NCHECKS (3 + 3 + 1 + NSIZES + NMEAS_CHECKS)	/* jobs, load, env, arms, meas */
static struct {
	char name[48];
	int ok;
} checks[MAXCHECKS];
static int nchecks;

/* ok: 1 passed, 0 failed, 2 skipped */
static void record(const char *name, int ok)
{
	if (nchecks < MAXCHECKS) {
		snprintf(checks[nchecks].name, sizeof(checks[nchecks].name), "%s", name);
		checks[nchecks].ok = ok;
		nchecks++;
	}
}

static int count_checks(int ok)
{
	int n = 0;

	for (int i = 0; i < nchecks; i++)
		n += checks[i].ok == ok;
	return n;
}

/* ---- jobs -------------------------------------------------------------------- */

static struct job {
	const char *tag;
	int ran;		/* started */
	int ok;			/* both ranks exited 0 in time */
	pid_t pid[2];
	double secs;
	char why[1024];
} jobs[NJOBS] = { { .tag = "none" }, { .tag = "bot" }, { .tag = "meas" } };

static const char *const env_drop[] = {
	"NCCL_ALGO", "NCCL_PROTO", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
	"NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_HOSTID", "NCCL_NET",
	"NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE",
	"NCCL_COMM_ID", "NCCL_MNNVL_ENABLE", "NCCL_CONF_FILE", NULL
};

static int env_dropped(const char *kv)
{
	size_t n = strcspn(kv, "=");

	if (!strncmp(kv, "NCCL_BOT_", 9))
		return 1;
	for (int i = 0; env_drop[i]; i++)
		if (strlen(env_drop[i]) == n && !strncmp(kv, env_drop[i], n))
			return 1;
	return 0;
}

struct envv {
	char **v;
	size_t n, own;		/* v[own..n) are ours (malloc'ed) */
};

static int env_add(struct envv *e, const char *name, const char *val)
{
	size_t len = strlen(name) + strlen(val) + 2;
	char *s = malloc(len);

	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", name, val);
	e->v[e->n++] = s;
	return 0;
}

static void env_free(struct envv *e)
{
	if (!e->v)
		return;
	for (size_t i = e->own; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	e->v = NULL;
}

/* The environment of rank r of job j: ours, without the caller's NCCL_BOT_*
 * and the NCCL variables set here. Built before fork(): the child only
 * opens its log and execs. */
static int env_build(struct envv *e, int j, int r, const char *plugin, const char *table_text,
		     const char *spool)
{
	char host[40], win[16];
	size_t n = 0;
	int rc = 0;

	while (environ[n])
		n++;
	e->v = calloc(n + 32, sizeof(*e->v));
	e->n = 0;
	if (!e->v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!env_dropped(environ[i]))
			e->v[e->n++] = environ[i];
	e->own = e->n;
	snprintf(host, sizeof(host), "nccl-bot-live-host-%d", r);
	snprintf(win, sizeof(win), "%d", WINDOW);
	rc |= env_add(e, "NCCL_HOSTID", host);
	rc |= env_add(e, "NCCL_NET", "Socket");
	rc |= env_add(e, "NCCL_SOCKET_IFNAME", "lo");
	rc |= env_add(e, "NCCL_IB_DISABLE", "1");
	rc |= env_add(e, "NCCL_NVLS_ENABLE", "0");
	rc |= env_add(e, "NCCL_COLLNET_ENABLE", "0");
	rc |= env_add(e, "NCCL_MNNVL_ENABLE", "0");
	/* no ~/.nccl.conf (NCCL still reads /etc/nccl.conf: the environment
	 * check reports NCCL_ALGO/NCCL_PROTO set from there) */
	rc |= env_add(e, "NCCL_CONF_FILE", "/dev/null");
	rc |= env_add(e, "NCCL_DEBUG", "INFO");
	rc |= env_add(e, "NCCL_DEBUG_SUBSYS", "INIT,ENV,TUNING");
	if (j == JNONE) {
		rc |= env_add(e, "NCCL_TUNER_PLUGIN", "none");
		rc |= env_add(e, "NCCL_PROFILER_PLUGIN", "none");
	} else {
		rc |= env_add(e, "NCCL_TUNER_PLUGIN", plugin);
		rc |= env_add(e, "NCCL_PROFILER_PLUGIN", plugin);
		rc |= env_add(e, "NCCL_BOT_TABLE", table_text);
		rc |= env_add(e, "NCCL_BOT_DEBUG", "1");
	}
	if (j == JMEAS) {
		rc |= env_add(e, "NCCL_BOT_SPOOL", spool);
		rc |= env_add(e, "NCCL_BOT_WINDOW", win);
	}
	e->v[e->n] = NULL;
	return rc ? -1 : 0;
}

static int status_ok(int st)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void status_str(int st, char *out, size_t cap)
{
	if (st == -1)
		snprintf(out, cap, "lost (waitpid failed)");
	else if (WIFEXITED(st))
		snprintf(out, cap, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(out, cap, "status 0x%x", st);
}

/* Wait for both ranks: a rank that failed takes the other down at once (it
 * would wait for its peer forever); past TIMEOUT_S both are killed. */
static void wait_job(struct job *jb, double t0, const char *dir)
{
	int st[2] = { 0, 0 }, done[2] = { 0, 0 }, timed_out = 0, killed_for = -1;

	while (!done[0] || !done[1]) {
		for (int r = 0; r < 2; r++) {
			pid_t w;

			if (done[r])
				continue;
			w = waitpid(jb->pid[r], &st[r], WNOHANG);
			if (w == jb->pid[r]) {
				done[r] = 1;
			} else if (w < 0 && errno != EINTR) {
				done[r] = 1;
				st[r] = -1;
			}
		}
		for (int r = 0; r < 2; r++)
			if (done[r] && !status_ok(st[r]) && !done[!r] && killed_for < 0 && !timed_out) {
				kill(jb->pid[!r], SIGKILL);
				killed_for = r;
			}
		if (!timed_out && now_s() - t0 > TIMEOUT_S) {
			timed_out = 1;
			for (int r = 0; r < 2; r++)
				if (!done[r])
					kill(jb->pid[r], SIGKILL);
		}
		if (!done[0] || !done[1])
			usleep(50000);
	}
	jb->secs = now_s() - t0;
	jb->ok = !timed_out && status_ok(st[0]) && status_ok(st[1]);
	if (timed_out)
		why_add(jb->why, sizeof(jb->why), "still running after %d s: killed (a hang, or far "
			"slower than expected; the last lines of %s/%s-0.log and -1.log show where)",
			TIMEOUT_S, dir, jb->tag);
	for (int r = 0; r < 2; r++) {
		char s[96];

		if (status_ok(st[r]) || (timed_out && st[r] != -1 && WIFSIGNALED(st[r]) &&
					 WTERMSIG(st[r]) == SIGKILL))
			continue;
		status_str(st[r], s, sizeof(s));
		if (killed_for >= 0 && r == !killed_for)
			why_add(jb->why, sizeof(jb->why), "rank %d %s after rank %d failed", r, s,
				killed_for);
		else
			why_add(jb->why, sizeof(jb->why), "rank %d %s, expected exit 0 (%s/%s-%d.log)",
				r, s, dir, jb->tag, r);
	}
}

static int comm_id_noted;

static void run_job(struct job *jb, int j, const char *self, const char *dir, const char *plugin,
		    const char *table_text, const char *spool)
{
	struct envv env[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	ncclUniqueId id;
	ncclResult_t nr;
	double t0;
	int started = 0;

	jb->ran = 1;
	say("live: job %s: starting 2 ranks (logs %s/%s-0.log, -1.log)\n", jb->tag, dir, jb->tag);
	fflush(stdout);
	if ((nr = ncclGetUniqueId(&id)) != ncclSuccess) {
		why_add(jb->why, sizeof(jb->why), "ncclGetUniqueId in the parent: %s",
			ncclGetErrorString(nr));
		return;
	}
	if (getenv("NCCL_COMM_ID") && !comm_id_noted) {
		/* unset before the first NCCL call: NCCL set it from /etc/nccl.conf */
		say("live: NOTE: NCCL_COMM_ID=%s came from /etc/nccl.conf: the parent's "
		    "ncclGetUniqueId() created no bootstrap root; rank 0 creates it at that address "
		    "(it reads the same file). A job that hangs in init may be this.\n",
		    getenv("NCCL_COMM_ID"));
		comm_id_noted = 1;
	}
	for (int r = 0; r < 2; r++)
		if (env_build(&env[r], j, r, plugin, table_text, spool)) {
			why_add(jb->why, sizeof(jb->why), "out of memory building the environment");
			goto out;
		}
	t0 = now_s();
	for (int r = 0; r < 2; r++) {
		char path[PATHBUF], js[16], rs[16], fds[16];
		char *args[6];
		int p[2];

		snprintf(path, sizeof(path), "%s/%s-%d.log", dir, jb->tag, r);
		if (pipe(p)) {
			why_add(jb->why, sizeof(jb->why), "pipe: %s", strerror(errno));
			break;
		}
		snprintf(js, sizeof(js), "%d", j);
		snprintf(rs, sizeof(rs), "%d", r);
		snprintf(fds, sizeof(fds), "%d", p[0]);
		args[0] = (char *)self;
		args[1] = "--child";
		args[2] = js;
		args[3] = rs;
		args[4] = fds;
		args[5] = NULL;
		jb->pid[r] = fork();
		if (jb->pid[r] < 0) {
			why_add(jb->why, sizeof(jb->why), "fork: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			break;
		}
		if (jb->pid[r] == 0) {
			/* async-signal-safe calls only: the parent has threads */
			static const char msg[] = "live: execve of the live_nccl program failed\n";
			int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			ssize_t w;

			close(p[1]);
			if (out < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
				_exit(126);
			if (out > 2)
				close(out);
			signal(SIGPIPE, SIG_DFL);
			execve(self, args, env[r].v);
			w = write(2, msg, sizeof(msg) - 1);
			(void)w;
			_exit(127);
		}
		started++;
		close(p[0]);
		if (write(p[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			why_add(jb->why, sizeof(jb->why), "writing the unique id to rank %d: %s", r,
				strerror(errno));
		close(p[1]);
	}
	if (started < 2) {
		for (int r = 0; r < started; r++) {
			kill(jb->pid[r], SIGKILL);
			waitpid(jb->pid[r], NULL, 0);
		}
		goto out;
	}
	wait_job(jb, t0, dir);
	say("live: job %s: %s in %.1f s%s%s\n", jb->tag, jb->ok ? "done" : "FAILED", jb->secs,
	    jb->why[0] ? ": " : "", jb->why);
out:
	env_free(&env[0]);
	env_free(&env[1]);
	fflush(stdout);
}

/* ---- reading the logs -------------------------------------------------------- */

struct arminfo {
	int n;		/* TUNING lines for the size in rank 0's log */
	int arm;	/* the first line's arm, ARM_BAD when NCCL's names did not map */
	int nother;	/* lines with another arm than the first */
	int other;	/* the last such arm */
};

static struct joblog {
	int readable[2];
	struct arminfo arms[NSIZES];
	int tuner, profiler;		/* rank 0's load lines */
	int measuring[2];		/* the profiler's "measuring windows" line, as set */
	int measuring_other[2];		/* a "measuring windows" line with other values */
	uint32_t forced[NSIZES];	/* arms the plugin logged "forced" for (rank 0) */
	double med_us[2][NSIZES];	/* CUDA-event median per call; -1 absent */
	long calls[2], main_calls[2];
	int batches[2];
	/* the live-main line */
	long loop_calls[2], budget_after[2];
	int batch_calls[2];
	double loop_s[2];
	char stopped[2][24];
	/* NCCL_ALGO/NCCL_PROTO in effect: NCCL's ENV line (the value), the tuner's line */
	char algo_env[2][96];
	int tuner_algo_env[2];
} logs[NJOBS];

static char measuring_needle[256];

/* "... AllReduce: N Bytes -> Algo A proto P ..." (NCCL_TUNING, rank 0). */
static int tuning_line(const char *line, unsigned long long *bytes, int *arm)
{
	const char *p = strstr(line, "AllReduce: ");
	char a[32], pr[32];
	int algo, proto;

	if (!p || sscanf(p, "AllReduce: %llu Bytes -> Algo %31s proto %31s", bytes, a, pr) != 3)
		return 0;
	algo = bot_algo_parse(a);
	proto = bot_proto_parse(pr);
	*arm = algo < 0 || proto < 0 ? ARM_BAD : ARM(algo, proto);
	return 1;
}

/* NCCL's "NCCL_ALGO set by environment to X" (or NCCL_PROTO): appended to out. */
static void env_line(const char *line, char *out, size_t cap)
{
	static const char *const vars[] = { "NCCL_ALGO", "NCCL_PROTO" };

	for (int i = 0; i < 2; i++) {
		char needle[64];
		const char *p;
		size_t n;

		snprintf(needle, sizeof(needle), NCCL_ENV_SET_FMT, vars[i], "");
		if (!(p = strstr(line, needle)))
			continue;
		p += strlen(needle);
		n = strcspn(p, "\r\n");
		why_add(out, cap, "%s=%.*s", vars[i], (int)(n > 32 ? 32 : n), p);
	}
}

static void read_log(const char *dir, int j, int rank)
{
	struct joblog *L = &logs[j];
	char path[PATHBUF], line[LINEBUF];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d.log", dir, jobs[j].tag, rank);
	f = fopen(path, "r");
	if (!f)
		return;
	L->readable[rank] = 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;
		unsigned b;
		int arm, s, rk, nb;
		long c1, c2;
		double med;
		const char *p;
		char word[32];

		if (rank == 0 && tuning_line(line, &n, &arm) && (s = size_index(n)) >= 0) {
			struct arminfo *a = &L->arms[s];

			if (a->n++ == 0) {
				a->arm = arm;
			} else if (arm != a->arm) {
				a->nother++;
				a->other = arm;
			}
			continue;
		}
		if (strstr(line, "TUNER/Plugin: Using nccl-bot"))
			L->tuner |= rank == 0;
		if (strstr(line, "PROFILER/Plugin: Loaded nccl-bot"))
			L->profiler |= rank == 0;
		if (strstr(line, measuring_needle))
			L->measuring[rank] = 1;
		else if (strstr(line, ": measuring windows of "))
			L->measuring_other[rank] = 1;
		if (rank == 0 && (p = strstr(line, "nccl-bot: comm ")) && (p = strstr(p, " nbytes ")) &&
		    sscanf(p, " nbytes %llu bucket %u: arm %d %31s", &n, &b, &arm, word) == 4 &&
		    !strcmp(word, "forced") && (s = size_index(n)) >= 0 && arm >= 0 && arm < BOT_NARMS)
			L->forced[s] |= 1u << arm;
		if (!strncmp(line, "live-timing ", 12) &&
		    sscanf(line, "live-timing rank %d bytes %llu calls %ld batches %d median_us %lf",
			   &rk, &n, &c1, &nb, &med) == 5 && rk == rank && (s = size_index(n)) >= 0)
			L->med_us[rank][s] = med;
		if (!strncmp(line, "live-calls ", 11) &&
		    sscanf(line, "live-calls rank %d total %ld main %ld", &rk, &c1, &c2) == 3 &&
		    rk == rank) {
			L->calls[rank] = c1;
			L->main_calls[rank] = c2;
		}
		if (!strncmp(line, "live-main ", 10) &&
		    sscanf(line, "live-main rank %d batches %d", &rk, &nb) == 2 && rk == rank) {
			int bc = 0;

			L->batches[rank] = nb;
			if (sscanf(line, "live-main rank %*d batches %*d calls %ld seconds %lf "
				   "stopped-by %23s batch-calls %d warm-round-ms %*f "
				   "budget-after-calls %ld", &c1, &med, L->stopped[rank], &bc,
				   &c2) == 5) {
				L->loop_calls[rank] = c1;
				L->loop_s[rank] = med;
				L->batch_calls[rank] = bc;
				L->budget_after[rank] = c2;
			}
		}
		env_line(line, L->algo_env[rank], sizeof(L->algo_env[rank]));
		if (strstr(line, BOT_ALGO_ENV_LINE))
			L->tuner_algo_env[rank] = 1;
	}
	fclose(f);
}

static void read_logs(const char *dir)
{
	char full[256], *p;

	memset(logs, 0, sizeof(logs));
	/* the profiler's line for this test's values, from ": measuring" on */
	snprintf(full, sizeof(full), BOT_MEASURING_FMT, 5, 0ull, 0, (unsigned)WINDOW,
		 (unsigned)PERIOD, 1ull << MIN_BYTES_LOG2);
	p = strstr(full, ": measuring");
	snprintf(measuring_needle, sizeof(measuring_needle), "%s", p ? p : full);
	for (int j = 0; j < NJOBS; j++) {
		for (int r = 0; r < 2; r++)
			for (int s = 0; s < NSIZES; s++)
				logs[j].med_us[r][s] = -1.0;
		for (int r = 0; r < 2; r++)
			read_log(dir, j, r);
	}
}

/* AUTO's arm at size s: what the none job ran on every call, or -1. */
static int auto_arm(int s)
{
	const struct arminfo *a = &logs[JNONE].arms[s];

	return a->n > 0 && !a->nother && a->arm >= 0 ? a->arm : -1;
}

/* The arm the table forces at size s (-1: none), given AUTO's arms. */
static int table_arm(int s, const int *autoarm)
{
	if (sizes[s].role == FORCED)
		return sizes[s].arm;
	if (sizes[s].role == AUTOS)
		return autoarm[s];
	return -1;
}

/* ---- the step table -------------------------------------------------------------- */

static struct bot_table table, decoded;
static char table_text[BOT_TABLE_MAX_TEXT + 1];

static int build_table(const int *autoarm, uint64_t *digest)
{
	int shape;

	bot_table_init(&table, 2 /* greedy */, 1);
	table.flags = BOT_TABLE_F_MEASURE;
	table.min_bytes_log2 = MIN_BYTES_LOG2;
	shape = bot_table_shape(&table, 2, 2);
	if (shape < 0)
		return -1;
	for (int s = 0; s < NSIZES; s++) {
		struct bot_table_entry *e;
		int arm = table_arm(s, autoarm);

		if (arm < 0)
			continue;
		e = &table.entries[table.nentries++];
		memset(e, 0, sizeof(*e));
		e->shape = (uint8_t)shape;
		e->coll = BOT_COLL_ALLREDUCE;
		e->bucket = (uint8_t)bot_size_bucket(sizes[s].bytes);
		e->plan.exploit = (uint8_t)arm;
	}
	if (bot_table_normalize(&table) ||
	    bot_table_encode(&table, table_text, sizeof(table_text)) < 0 ||
	    bot_table_decode(table_text, strlen(table_text), &decoded) != BOT_TABLE_OK)
		return -1;
	*digest = decoded.digest;
	return 0;
}

/* ---- the checks ---------------------------------------------------------------- */

static int no_sample_note, no_kernelch_note, no_spool_note, nwarnings, nmeas_warnings;

static void check_jobs(void)
{
	say("\n== jobs (2 ranks each, killed after %d s) ==\n", TIMEOUT_S);
	say("%-6s %-9s %-9s %s\n", "job", "seconds", "result", "why");
	for (int j = 0; j < NJOBS; j++) {
		char name[48];

		say("%-6s %-9.1f %-9s %s\n", jobs[j].tag, jobs[j].secs, jobs[j].ok ? "ok" : "FAIL",
		    jobs[j].ok ? "" : jobs[j].ran ? jobs[j].why : "not started");
		snprintf(name, sizeof(name), "job %s", jobs[j].tag);
		record(name, jobs[j].ok);
	}
}

static void check_loading(const char *dir)
{
	say("\n== plugin loading (rank 0's NCCL INFO lines; the profiler's line on both ranks) ==\n");
	say("%-6s %-8s %-10s %-16s %s\n", "job", "tuner", "profiler", "measuring", "result");
	for (int j = 0; j < NJOBS; j++) {
		const struct joblog *L = &logs[j];
		char why[1024] = "", name[48], meas[32];
		int want = j != JNONE, ok = 1;

		if (!L->readable[0])
			why_add(why, sizeof(why), "%s/%s-0.log unreadable", dir, jobs[j].tag);
		if (L->tuner != want)
			why_add(why, sizeof(why), "%s 'TUNER/Plugin: Using nccl-bot'", want ?
				"no line" : "unexpected line");
		if (L->profiler != want)
			why_add(why, sizeof(why), "%s 'PROFILER/Plugin: Loaded nccl-bot'", want ?
				"no line" : "unexpected line");
		for (int r = 0; r < 2; r++) {
			if (j == JMEAS && !L->measuring[r] && nccl_ver >= MEAS_NCCL_VERSION)
				why_add(why, sizeof(why), "rank %d: no '%s' line from the profiler%s", r,
					measuring_needle + 2, L->measuring_other[r] ?
					" (one with other values)" : "");
			if (j != JMEAS && (L->measuring[r] || L->measuring_other[r]))
				why_add(why, sizeof(why), "rank %d: the profiler measures without "
					"NCCL_BOT_SPOOL ('measuring windows' line)", r);
		}
		ok = !why[0];
		snprintf(meas, sizeof(meas), "%s/%s", L->measuring[0] ? "yes" : "no",
			 L->measuring[1] ? "yes" : "no");
		say("%-6s %-8s %-10s %-16s %s%s%s\n", jobs[j].tag, L->tuner ? "nccl-bot" : "-",
		    L->profiler ? "nccl-bot" : "-", meas, ok ? "ok" : "FAIL",
		    ok ? "" : ": ", why);
		snprintf(name, sizeof(name), "load %s", jobs[j].tag);
		record(name, ok);
	}
}

static int algo_env_note;

/* NCCL_ALGO/NCCL_PROTO are removed from the ranks' environment, but NCCL
 * reads /etc/nccl.conf into it: then NCCL prints "NCCL_ALGO set by
 * environment to X" and the tuner leaves every cost table alone. */
static void check_env(void)
{
	char why[1024] = "";

	say("\n== environment (NCCL_ALGO and NCCL_PROTO must be unset: NCCL's '%s' line, the "
	    "tuner's '%s' line) ==\n", "NCCL_ALGO set by environment to", BOT_ALGO_ENV_LINE);
	say("%-6s %-34s %-34s %s\n", "job", "rank 0 (NCCL)", "rank 1 (NCCL)", "tuner's line");
	for (int j = 0; j < NJOBS; j++) {
		const struct joblog *L = &logs[j];

		say("%-6s %-34s %-34s %s\n", jobs[j].tag, L->algo_env[0][0] ? L->algo_env[0] : "-",
		    L->algo_env[1][0] ? L->algo_env[1] : "-",
		    L->tuner_algo_env[0] || L->tuner_algo_env[1] ? "PRINTED" : "-");
		for (int r = 0; r < 2; r++) {
			if (L->algo_env[r][0])
				why_add(why, sizeof(why), "%s rank %d: NCCL ran with %s", jobs[j].tag, r,
					L->algo_env[r]);
			if (L->tuner_algo_env[r])
				why_add(why, sizeof(why), "%s rank %d: the tuner printed 'NCCL_ALGO or "
					"NCCL_PROTO is set' and forced nothing", jobs[j].tag, r);
		}
	}
	if (why[0]) {
		algo_env_note = 1;
		say("WARNING: NCCL_ALGO or NCCL_PROTO WAS SET in the ranks although this test removes "
		    "them from their environment: NCCL read them from /etc/nccl.conf (the ranks get "
		    "NCCL_CONF_FILE=/dev/null, so not from ~/.nccl.conf). NCCL then runs those "
		    "arms and the tuner forces nothing: the arms and measurement results below say "
		    "nothing about the plugin. Remove them from /etc/nccl.conf and run again.\n");
	}
	say("environment: %s%s%s\n", why[0] ? "FAIL" : "ok", why[0] ? ": " : "", why);
	record("nccl env", !why[0]);
}

static void arm_cell(const struct arminfo *a, char *out, size_t cap)
{
	if (!a->n)
		snprintf(out, cap, "no line");
	else if (a->nother)
		snprintf(out, cap, "%s+%d other", arm_str(a->arm), a->nother);
	else
		snprintf(out, cap, "%s", arm_str(a->arm));
}

static void check_arms(const char *dir, const int *autoarm)
{
	say("\n== arms (rank 0's 'AllReduce: N Bytes -> Algo A proto P' lines, every call) ==\n");
	say("%-9s %-26s %-20s %-20s %-20s %s\n", "bytes", "table", "stock NCCL", "nccl-bot",
	    "nccl-bot+meas", "result");
	for (int s = 0; s < NSIZES; s++) {
		int want = table_arm(s, autoarm), run = want >= 0 ? want : autoarm[s];
		char why[1024] = "", tcell[40], c[3][40], name[48];

		if (sizes[s].role == FORCED)
			snprintf(tcell, sizeof(tcell), "forces %s", arm_str(want));
		else if (sizes[s].role == AUTOS)
			snprintf(tcell, sizeof(tcell), "forces AUTO's %s",
				 want >= 0 ? arm_str(want) : "(unknown)");
		else if (sizes[s].role == BELOW)
			snprintf(tcell, sizeof(tcell), "below threshold");
		else
			snprintf(tcell, sizeof(tcell), "no entry");
		for (int j = 0; j < NJOBS; j++) {
			const struct arminfo *a = &logs[j].arms[s];

			arm_cell(a, c[j], sizeof(c[j]));
			if (!a->n) {
				why_add(why, sizeof(why), "%s: no TUNING line for %zu bytes in %s/%s-0.log",
					jobs[j].tag, sizes[s].bytes, dir, jobs[j].tag);
				continue;
			}
			if (a->arm == ARM_BAD || (a->nother && a->other == ARM_BAD))
				why_add(why, sizeof(why), "%s: NCCL printed algorithm/protocol names "
					"this test cannot map", jobs[j].tag);
			if (a->nother)
				why_add(why, sizeof(why), "%s: %d of %d calls ran %s, the others %s",
					jobs[j].tag, a->nother, a->n, arm_str(a->other), arm_str(a->arm));
			if (j == JNONE)
				continue;
			if (run < 0)
				why_add(why, sizeof(why), "%s: expected arm unknown (stock NCCL's is "
					"not known)", jobs[j].tag);
			else if (a->arm != run || (a->nother && a->other != run))
				why_add(why, sizeof(why), "%s ran %s, expected %s (%s)", jobs[j].tag,
					arm_str(a->arm != run ? a->arm : a->other), arm_str(run),
					want >= 0 ? "the table's arm" : "stock NCCL's arm");
			if (want >= 0 && !(logs[j].forced[s] >> want & 1))
				why_add(why, sizeof(why), "%s: no plugin line 'nbytes %zu bucket %u: arm "
					"%d forced' in %s/%s-0.log", jobs[j].tag, sizes[s].bytes,
					bot_size_bucket(sizes[s].bytes), want, dir, jobs[j].tag);
		}
		if (sizes[s].role == AUTOS && want < 0)
			why_add(why, sizeof(why), "the table could not force AUTO's arm: stock NCCL's "
				"arm at this size is unknown");
		say("%-9zu %-26s %-20s %-20s %-20s %s%s%s\n", sizes[s].bytes, tcell, c[0], c[1],
		    c[2], why[0] ? "FAIL" : "ok", why[0] ? ": " : "", why);
		snprintf(name, sizeof(name), "arms %zu", sizes[s].bytes);
		record(name, !why[0]);
	}
}

struct mstat {
	int n;			/* samples at the size */
	int arm_n;		/* of the expected arm */
	int clean;		/* clean, of the expected arm */
	int wrong, wrong_arm;	/* of another arm; one of them */
	int agg, ch, range, first;	/* labels on expected-arm samples */
	int ndur;
	double *dur;		/* clean durations, us */
	int nrdur;
	double *rdur;		/* durations of samples labelled only out of range, us */
	double *rcost;		/* their cost row's entry for their arm (NCCL's model), us */
	int nrcost;
	double lab_dur_us;	/* a labelled sample's duration (out of range) */
	int nsum, decided, autoa, nocost, sum_mixed;
	float cost_us;		/* the summary's cost entry for the expected arm */
};

static void check_meas(const char *dir, const char *spooldir, uint64_t digest, const int *autoarm)
{
	static struct mstat ms[2][NSIZES];
	struct bot_spool_file sf[2];
	char fname[2][300] = { "", "" }, why[2048] = "";
	int have[2] = { 0, 0 }, nsamples = 0, nsummaries = 0, nch_only = 0, nfiles = 0;
	struct dirent *de;
	DIR *d;

	memset(ms, 0, sizeof(ms));
	memset(sf, 0, sizeof(sf));
	say("\n== measurement (spool of the meas job: %s) ==\n", spooldir);
	d = opendir(spooldir);
	if (!d)
		why_add(why, sizeof(why), "cannot open %s: %s", spooldir, strerror(errno));
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[PATHBUF], err[BOT_SPOOL_ERR_MAX];
		struct bot_spool_file f;
		int r = -1;

		if (strncmp(de->d_name, "nb-", 3) || len < 10 || strcmp(de->d_name + len - 6, ".spool"))
			continue;
		nfiles++;
		snprintf(path, sizeof(path), "%s/%s", spooldir, de->d_name);
		if (bot_spool_read_file(path, &f, err, sizeof(err))) {
			why_add(why, sizeof(why), "rejected by the reader: %s", err);
			continue;
		}
		for (int k = 0; k < 2; k++)
			if (jobs[JMEAS].pid[k] > 0 && f.hdr.pid == (uint32_t)jobs[JMEAS].pid[k])
				r = k;
		if (r < 0) {
			why_add(why, sizeof(why), "%s: header pid %u is neither rank's (pids %d, %d)",
				de->d_name, f.hdr.pid, (int)jobs[JMEAS].pid[0], (int)jobs[JMEAS].pid[1]);
			bot_spool_free(&f);
			continue;
		}
		if (have[r]) {
			why_add(why, sizeof(why), "two spool files of rank %d (%s, %s)", r, fname[r],
				de->d_name);
			bot_spool_free(&f);
			continue;
		}
		sf[r] = f;
		have[r] = 1;
		snprintf(fname[r], sizeof(fname[r]), "%s", de->d_name);
	}
	if (d)
		closedir(d);
	for (int r = 0; r < 2; r++) {
		if (!have[r]) {
			why_add(why, sizeof(why), "no spool file of rank %d (pid %d): measurement was "
				"off in that process or it never flushed (look for 'nccl-bot:' lines "
				"in %s/meas-%d.log)", r, (int)jobs[JMEAS].pid[r], dir, r);
			continue;
		}
		if (sf[r].hdr.table_digest != digest)
			why_add(why, sizeof(why), "%s: table digest %016llx, the job's table has "
				"%016llx", fname[r], (unsigned long long)sf[r].hdr.table_digest,
				(unsigned long long)digest);
		for (uint64_t i = 0; i < sf[r].hdr.nrecords; i++)
			if (sf[r].recs[i].rank != (uint32_t)r || sf[r].recs[i].nranks != 2) {
				why_add(why, sizeof(why), "%s: record %llu has rank %u of %u, expected "
					"rank %d of 2", fname[r], (unsigned long long)i,
					sf[r].recs[i].rank, sf[r].recs[i].nranks, r);
				break;
			}
	}
	if (!nfiles)
		no_spool_note = 1;
	say("%-6s %-40s %-9s %-9s %-9s %s\n", "rank", "file", "records", "samples", "summaries",
	    "header flags");
	for (int r = 0; r < 2; r++) {
		int ns = 0, nu = 0;

		if (!have[r]) {
			say("%-6d %-40s\n", r, "(none)");
			continue;
		}
		for (uint64_t i = 0; i < sf[r].hdr.nrecords; i++) {
			ns += sf[r].recs[i].kind == BOT_SPOOL_SAMPLE;
			nu += sf[r].recs[i].kind == BOT_SPOOL_SUMMARY;
		}
		say("%-6d %-40s %-9llu %-9d %-9d 0x%x%s\n", r, fname[r],
		    (unsigned long long)sf[r].hdr.nrecords, ns, nu, sf[r].hdr.flags,
		    sf[r].hdr.flags ? " (caps hit: records dropped)" : "");
	}
	say("spool files: %s%s%s\n", why[0] ? "FAIL" : "ok", why[0] ? ": " : "", why);
	record("spool files", !why[0]);

	/* tally */
	for (int r = 0; r < 2; r++) {
		if (!have[r])
			continue;
		for (int s = 0; s < NSIZES; s++) {
			ms[r][s].dur = calloc(sf[r].hdr.nrecords + 1, sizeof(double));
			ms[r][s].rdur = calloc(sf[r].hdr.nrecords + 1, sizeof(double));
			ms[r][s].rcost = calloc(sf[r].hdr.nrecords + 1, sizeof(double));
			if (!ms[r][s].dur || !ms[r][s].rdur || !ms[r][s].rcost) {
				say("live: out of memory\n");
				exit(99);
			}
		}
		for (uint64_t i = 0; i < sf[r].hdr.nrecords; i++) {
			const struct bot_spool_rec *x = &sf[r].recs[i];
			int s, want;
			struct mstat *m;

			if (x->kind == BOT_SPOOL_SUMMARY) {
				nsummaries++;
				s = -1;
				for (int k = 0; k < NSIZES; k++)
					if (x->coll == BOT_COLL_ALLREDUCE &&
					    bot_size_bucket(x->nbytes) == bot_size_bucket(sizes[k].bytes))
						s = k;
				if (s < 0)
					continue;
				m = &ms[r][s];
				want = table_arm(s, autoarm);
				if (m->nsum++ == 0) {
					m->decided = x->decided;
					m->autoa = x->auto_arm;
					m->nocost = !!(x->flags & BOT_SPOOL_F_NO_COST);
					m->cost_us = want >= 0 && want < BOT_NARMS ? x->cost[want] : -1.0f;
				} else if (x->decided != m->decided || x->auto_arm != m->autoa) {
					m->sum_mixed = 1;
				}
				continue;
			}
			nsamples++;
			if ((x->flags & BOT_SPOOL_F_CHANNELS) && !x->duration_ns)
				nch_only++;
			s = x->coll == BOT_COLL_ALLREDUCE ? size_index(x->nbytes) : -1;
			if (s < 0)
				continue;
			m = &ms[r][s];
			want = table_arm(s, autoarm);
			if (want < 0)
				want = autoarm[s];
			m->n++;
			if (x->arm != want) {
				m->wrong++;
				m->wrong_arm = x->arm;
				continue;
			}
			m->arm_n++;
			m->agg += !!(x->flags & BOT_SPOOL_F_AGGREGATE);
			m->ch += !!(x->flags & BOT_SPOOL_F_CHANNELS);
			m->range += !!(x->flags & BOT_SPOOL_F_RANGE);
			m->first += !!(x->flags & BOT_SPOOL_F_FIRST_ALGO);
			if (bot_spool_clean(x)) {
				m->dur[m->ndur++] = (double)x->duration_ns / 1000.0;
			} else if (x->flags & BOT_SPOOL_F_RANGE) {
				m->lab_dur_us = (double)x->duration_ns / 1000.0;
				/* only out of range (against NCCL's model), with a duration */
				if ((x->flags & BOT_SPOOL_F_UNCLEAN) == BOT_SPOOL_F_RANGE &&
				    x->duration_ns) {
					m->rdur[m->nrdur++] = (double)x->duration_ns / 1000.0;
					if (want < BOT_NARMS && x->cost[want] > 0.0f)
						m->rcost[m->nrcost++] = (double)x->cost[want];
				}
			}
			m->clean += bot_spool_clean(x);
		}
	}
	{
		const struct joblog *L = &logs[JMEAS];

		say("meas main loop: %ld / %ld calls (rank 0 / 1) in %.1f s, stopped by %s; %ld "
		    "calls in all with warm-up, agreements and probe (the time budget stops it only "
		    "after %d calls or %d s: the first window has closed by call %d)\n",
		    L->loop_calls[0], L->loop_calls[1], L->loop_s[0],
		    L->stopped[0][0] ? L->stopped[0] : "-", L->calls[0], MEAS_MIN_CALLS, MEAS_MAX_S,
		    PERIOD);
	}
	if (!nsamples) {
		no_sample_note = 1;
		say("NO SAMPLE ARRIVED: the spool files hold %d context summaries and 0 samples. ",
		    nsummaries);
		if (nsummaries)
			say("Windows opened (the tuner counted window calls), but the profiler recorded "
			    "no measured collective: it got no Coll/KernelCh events from NCCL.\n");
		else if (logs[JMEAS].calls[0] <= 0 || logs[JMEAS].calls[1] <= 0)
			say("No window opened or measurement was off, and the meas job did not report "
			    "its calls (no 'live-calls' line: it did not finish).\n");
		else
			say("No window opened or measurement was off: the meas job made %ld / %ld calls "
			    "(rank 0 / 1; main loop stopped by %s after %ld); the first window has "
			    "closed by call %d at the latest (NCCL_BOT_WINDOW=%d, a window every %d "
			    "calls at a commId-derived phase).\n", logs[JMEAS].calls[0],
			    logs[JMEAS].calls[1], logs[JMEAS].stopped[0][0] ? logs[JMEAS].stopped[0] :
			    "-", logs[JMEAS].loop_calls[0], PERIOD, WINDOW, PERIOD);
	} else if (nch_only == nsamples) {
		no_kernelch_note = 1;
		say("NO KERNELCH EVENTS: all %d samples are labelled 'channels missing' with no "
		    "duration: the profiler saw Coll events but no KernelCh events.\n", nsamples);
	}

	say("%-9s %-5s %-14s %-11s %-11s %-11s %-7s %-14s %-14s %s\n", "bytes", "rank", "arm",
	    "clean/all", "sample us", "events us", "ratio", "decided", "auto_arm", "result");
	for (int s = 0; s < NSIZES; s++) {
		int want = table_arm(s, autoarm);

		if (!measured(s))
			continue;
		for (int r = 0; r < 2; r++) {
			struct mstat *m = &ms[r][s];
			double ev = logs[JMEAS].med_us[r][s], med = -1.0, ratio = -1.0, model = -1.0;
			char w[2048] = "", warn[1024] = "", name[48], cnt[40], dec[24], aut[24];
			char n1[24], n2[24], n3[24];
			/* the duration set checked: clean samples, else those labelled
			 * only out of range (a WARNING with the numbers) */
			int use_range = have[r] && !m->clean && m->nrdur > 0;
			const char *what = use_range ? "out-of-range-only" : "clean";

			if (have[r]) {
				med = use_range ? median(m->rdur, m->nrdur) : median(m->dur, m->ndur);
				if (med > 0 && ev > 0)
					ratio = med / ev;
				if (use_range)
					model = median(m->rcost, m->nrcost);
			}
			if (want < 0)
				why_add(w, sizeof(w), "the table's arm is unknown (stock NCCL's arm "
					"at this size is unknown)");
			if (!have[r]) {
				why_add(w, sizeof(w), "no spool file");
			} else if (!m->n) {
				why_add(w, sizeof(w), "no sample of %zu bytes (no window call of this size "
					"was measured)", sizes[s].bytes);
			} else if (!m->clean && !use_range) {
				why_add(w, sizeof(w), "no clean sample of %s and none labelled only out "
					"of range with a duration: %d of %d samples have that arm, "
					"labelled aggregate %d, channels missing %d, out of range %d, "
					"first use %d", arm_str(want), m->arm_n, m->n, m->agg, m->ch,
					m->range, m->first);
				if (m->range && m->cost_us > 0)
					why_add(w, sizeof(w), "out of range vs NCCL's model: e.g. %.1f us "
						"measured vs %.1f us modelled (kept only within 0.05x..20x; "
						"GPU time-slicing between the two rank processes can make "
						"this setup far slower than the model)", m->lab_dur_us,
						(double)m->cost_us);
			}
			if (m->wrong)
				why_add(w, sizeof(w), "%d samples ran %s, not %s", m->wrong,
					arm_str(m->wrong_arm), arm_str(want));
			if (have[r] && (m->clean || use_range)) {
				if (ev <= 0)
					why_add(w, sizeof(w), "no 'live-timing' line for %zu bytes in "
						"%s/meas-%d.log", sizes[s].bytes, dir, r);
				else if (ratio < RATIO_LO || ratio > RATIO_HI)
					why_add(w, sizeof(w), "median %s duration %.1f us is %.3gx the "
						"CUDA-event median %.1f us, outside %.2gx..%.3gx", what, med,
						ratio, ev, RATIO_LO, RATIO_HI);
			}
			if (use_range) {
				char mc[24];

				fmt(warn, sizeof(warn), "WARNING: %zu bytes rank %d: no clean sample; "
				    "%d samples of %s have a duration and no label but out of range "
				    "(over 20x or under 0.05x NCCL's model): their median %.1f us, the "
				    "CUDA-event median %.1f us (ratio %.3g, within %.2gx..%.3gx), "
				    "NCCL's modelled time %s us (sample/model %.3g). NCCL models Socket "
				    "on lo at its assumed 10 Gbps and the two rank processes time-slice "
				    "one GPU, so this setup can run far from the model: the samples "
				    "arrived with sane durations, only the profiler's clean label is "
				    "missing.\n", sizes[s].bytes, r, m->nrdur, arm_str(want), med, ev,
				    ratio, RATIO_LO, RATIO_HI, num(mc, sizeof(mc), model, 1),
				    model > 0 ? med / model : -1.0);
				if (w[0])
					why_add(w, sizeof(w), "(no clean sample: the %d used are labelled "
						"only out of range; NCCL's modelled time %s us)", m->nrdur,
						num(mc, sizeof(mc), model, 1));
			}
			if (have[r]) {
				if (!m->nsum)
					why_add(w, sizeof(w), "no context summary for the size's bucket %u",
						bot_size_bucket(sizes[s].bytes));
				else {
					if (m->nocost)
						why_add(w, sizeof(w), "the summary has no cost row (flag "
							"bit5): the context was never measured in a window");
					if (m->decided != (want < 0 ? BOT_SPOOL_ARM_NONE : want))
						why_add(w, sizeof(w), "summary decided %s, expected %s (the "
							"table's arm)", arm_str(m->decided), arm_str(want));
					if (m->autoa != autoarm[s])
						why_add(w, sizeof(w), "summary auto_arm %s, expected %s (what "
							"stock NCCL ran)", arm_str(m->autoa),
							arm_str(autoarm[s]));
					if (m->sum_mixed)
						why_add(w, sizeof(w), "%d summaries for the bucket disagree",
							m->nsum);
				}
			}
			if (use_range)
				snprintf(cnt, sizeof(cnt), "0+%dr/%d", m->nrdur, m->n);
			else
				snprintf(cnt, sizeof(cnt), "%d/%d", m->clean, m->n);
			snprintf(dec, sizeof(dec), "%s", m->nsum ? arm_str(m->decided) : "-");
			snprintf(aut, sizeof(aut), "%s", m->nsum ? arm_str(m->autoa) : "-");
			say("%-9zu %-5d %-14s %-11s %-11s %-11s %-7s %-14s %-14s %s%s%s\n",
			    sizes[s].bytes, r, arm_str(want), cnt, num(n1, sizeof(n1), med, 1),
			    num(n2, sizeof(n2), ev, 1), num(n3, sizeof(n3), ratio, 3), dec, aut,
			    w[0] ? "FAIL" : use_range ? "ok (WARNING)" : "ok", w[0] ? ": " : "", w);
			if (use_range && !w[0]) {
				say("%s", warn);
				nmeas_warnings++;
			}
			snprintf(name, sizeof(name), "meas %zu rank %d", sizes[s].bytes, r);
			record(name, !w[0]);
		}
	}

	/* every sample: a size of this test, the arm NCCL printed for it */
	{
		char w[2048] = "";
		int bad = 0;

		for (int r = 0; r < 2; r++)
			for (uint64_t i = 0; have[r] && i < sf[r].hdr.nrecords; i++) {
				const struct bot_spool_rec *x = &sf[r].recs[i];
				const struct arminfo *a;
				int s = size_index(x->nbytes);

				if (x->kind != BOT_SPOOL_SAMPLE)
					continue;
				if (x->coll != BOT_COLL_ALLREDUCE || s < 0) {
					if (bad++ < 3)
						why_add(w, sizeof(w), "rank %d record %llu: %s of %llu bytes, "
							"not an allreduce size of this test", r,
							(unsigned long long)i, bot_coll_name(x->coll),
							(unsigned long long)x->nbytes);
					continue;
				}
				a = &logs[JMEAS].arms[s];
				if (a->n && !a->nother && x->arm == a->arm)
					continue;
				if (bad++ < 3)
					why_add(w, sizeof(w), "rank %d record %llu: %zu bytes ran %s, NCCL "
						"printed %s", r, (unsigned long long)i, sizes[s].bytes,
						arm_str(x->arm), !a->n ? "no line for the size" :
						a->nother ? "more than one arm" : arm_str(a->arm));
			}
		if (bad > 3)
			why_add(w, sizeof(w), "%d such samples in all", bad);
		say("spool arms (each of the %d samples: an allreduce size of this test, the arm "
		    "NCCL printed for it): %s%s%s\n", nsamples, w[0] ? "FAIL" : "ok",
		    w[0] ? ": " : "", w);
		record("spool arms", !w[0]);
	}
	for (int r = 0; r < 2; r++) {
		for (int s = 0; s < NSIZES; s++) {
			free(ms[r][s].dur);
			free(ms[r][s].rdur);
			free(ms[r][s].rcost);
		}
		if (have[r])
			bot_spool_free(&sf[r]);
	}
}

static void report_overhead(void)
{
	say("\n== overhead (time per collective, us: median over timed batches of the per-size "
	    "mean between CUDA events, rank 0; not a pass/fail check) ==\n");
	for (int j = 0; j < NJOBS; j++) {
		const struct joblog *L = &logs[j];

		say("main loop %-4s: %d batches of %d calls = %ld calls in %.1f s, stopped by %s\n",
		    jobs[j].tag, L->batches[0], L->batch_calls[0], L->loop_calls[0], L->loop_s[0],
		    L->stopped[0][0] ? L->stopped[0] : "-");
	}
	say("(at most %d calls; stopped after %d s, meas only after %d calls or %d s)\n",
	    MAX_MAIN_CALLS, MAIN_BUDGET_S, MEAS_MIN_CALLS, MEAS_MAX_S);
	say("%-9s %-14s %-9s %-10s %-10s %-10s %-9s %-13s\n", "bytes", "stock arm", "same arm",
	    "none", "bot", "bot+meas", "bot/none", "bot+meas/none");
	for (int s = 0; s < NSIZES; s++) {
		double n = logs[JNONE].med_us[0][s], b = logs[JBOT].med_us[0][s],
		       m = logs[JMEAS].med_us[0][s];
		double rb = n > 0 && b > 0 ? b / n : -1.0, rm = n > 0 && m > 0 ? m / n : -1.0;
		const struct arminfo *a0 = &logs[JNONE].arms[s], *a1 = &logs[JBOT].arms[s],
				     *a2 = &logs[JMEAS].arms[s];
		char c[5][24];
		int same = a0->n && a1->n && a2->n && !a0->nother && !a1->nother && !a2->nother &&
			   a0->arm == a1->arm && a0->arm == a2->arm && a0->arm >= 0;

		if (!sizes[s].per_round)
			continue;
		say("%-9zu %-14s %-9s %-10s %-10s %-10s %-9s %-13s%s\n", sizes[s].bytes,
		    arm_str(a0->n ? a0->arm : -1), same ? "yes" : "no",
		    num(c[0], sizeof(c[0]), n, 1), num(c[1], sizeof(c[1]), b, 1),
		    num(c[2], sizeof(c[2]), m, 1), num(c[3], sizeof(c[3]), rb, 3),
		    num(c[4], sizeof(c[4]), rm, 3), same ? "" : !a0->n || !a1->n || !a2->n ?
		    " (arm not known)" : " (arm differs: not an overhead comparison)");
		if (same && rb > WARN_RATIO) {
			say("WARNING: %zu bytes: bot/none = %.2f, above %.1f with stock NCCL's arm\n",
			    sizes[s].bytes, rb, WARN_RATIO);
			nwarnings++;
		}
		if (same && rm > WARN_RATIO) {
			say("WARNING: %zu bytes: bot+meas/none = %.2f, above %.1f with stock NCCL's arm\n",
			    sizes[s].bytes, rm, WARN_RATIO);
			nwarnings++;
		}
	}
	if (!nwarnings)
		say("(no WARNING: every same-arm ratio is at or below %.1f)\n", WARN_RATIO);
}

/* All checks on LOGDIR's logs and spool; the jobs[] outcome must be set. */
static void analyze(const char *dir, const char *spooldir, uint64_t digest)
{
	int autoarm[NSIZES];

	nchecks = 0;
	no_sample_note = no_kernelch_note = no_spool_note = nwarnings = nmeas_warnings = 0;
	algo_env_note = 0;
	read_logs(dir);
	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = auto_arm(s);
	check_jobs();
	check_loading(dir);
	check_env();
	check_arms(dir, autoarm);
	if (nccl_ver >= MEAS_NCCL_VERSION) {
		check_meas(dir, spooldir, digest, autoarm);
	} else {
		char name[48];

		say("\n== measurement: SKIPPED: NCCL %s < 2.28 ==\n%s\n", ver_str(nccl_ver),
		    meas_na_why);
		record("spool files", 2);
		for (int s = 0; s < NSIZES; s++)
			for (int r = 0; measured(s) && r < 2; r++) {
				snprintf(name, sizeof(name), "meas %zu rank %d", sizes[s].bytes, r);
				record(name, 2);
			}
		record("spool arms", 2);
	}
	report_overhead();
	if (count_checks(0)) {
		say("\nfailed:");
		for (int i = 0; i < nchecks; i++)
			if (!checks[i].ok)
				say(" [%s]", checks[i].name);
		say("\n");
	}
	if (count_checks(2)) {
		say("%sskipped:", count_checks(0) ? "" : "\n");
		for (int i = 0; i < nchecks; i++)
			if (checks[i].ok == 2)
				say(" [%s]", checks[i].name);
		say("\n");
	}
}

/* ---- files ------------------------------------------------------------------- */

static int mkdirs(const char *path)
{
	char p[PATH_MAX];
	size_t n = strlen(path);

	if (!n || n >= sizeof(p))
		return -1;
	memcpy(p, path, n + 1);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -1;
			*c = '/';
		}
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

/* Empty (of files) or create a directory. */
static int fresh_dir(const char *path)
{
	struct dirent *de;
	DIR *d;

	if (mkdirs(path))
		return -1;
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char p[PATHBUF];
		struct stat sb;

		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (!lstat(p, &sb) && !S_ISDIR(sb.st_mode))
			unlink(p);
	}
	closedir(d);
	return 0;
}

/* ---- selftest: the checks on canned logs and spool files ------------------------ */

/* NCCL 2.28.9's spellings in the TUNING line (ncclAlgoToString and
 * ncclProtoToString, src/collectives.cc); older NCCL printed ncclAlgoStr's
 * "Tree", "NVLSTree", "Simple" (the parser takes both, tested below). */
static const char *const nccl_algo[BOT_NALGO] = {
	"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"
};
static const char *const nccl_proto[BOT_NPROTO] = { "LL", "LL128", "SIMPLE" };

/* Canned arms: stock NCCL ring/ll at 256 KiB, ring/simple above. */
static int st_auto(int s)
{
	return s == 0 ? ARM(BOT_ALGO_RING, BOT_PROTO_LL) : ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
}

/* good: all pass; bad: the named checks fail; nosamples, nospool: spool
 * trouble; range: no clean sample, only out-of-range ones (WARNINGs, one size
 * 1000x off: fails); old: NCCL 2.27 (measurement skipped); algoenv: NCCL_ALGO
 * set by /etc/nccl.conf (the environment check fails) */
enum { ST_GOOD, ST_BAD, ST_NOSAMPLES, ST_NOSPOOL, ST_RANGE, ST_OLD, ST_ALGOENV };

static double st_med(int j, int s, int variant)
{
	static const double base[] = { 120, 480, 900, 1800, 7000, 13000, 26000 };

	/* bad: bot twice as slow at 256 KiB (same arm: a WARNING) and 1 MiB
	 * (forced arm: none) */
	if (variant == ST_BAD && j == JBOT && s <= 1)
		return base[s] * 2.0;
	return base[s] * (j == JNONE ? 1.0 : j == JBOT ? 1.02 : 1.04);
}

static int st_write_log(const char *dir, int j, int r, int variant)
{
	char path[PATHBUF], line[512];
	FILE *f;
	int autoarm[NSIZES];

	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = st_auto(s);
	if (fmt(path, sizeof(path), "%s/%s-%d.log", dir, jobs[j].tag, r))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "h:1:1 [%d] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo\n", r);
	if (variant == ST_ALGOENV) {
		snprintf(line, sizeof(line), NCCL_ENV_SET_FMT, "NCCL_ALGO", "Ring");
		fprintf(f, "h:1:1 [%d] NCCL INFO %s\n", r, line);
	}
	if (j != JNONE) {
		fprintf(f, "h:1:1 [%d] NCCL INFO TUNER/Plugin: Using nccl-bot (v5)\n", r);
		fprintf(f, "h:1:1 [%d] NCCL INFO PROFILER/Plugin: Loaded nccl-bot (v5)\n", r);
		if (variant == ST_ALGOENV)
			fprintf(f, "h:1:1 [%d] NCCL INFO %s\n", r, BOT_ALGO_ENV_LINE);
	}
	if (j == JMEAS && variant == ST_OLD)
		fprintf(f, "h:1:1 [%d] NCCL INFO nccl-bot: profiler v4 (NCCL 2.27) cannot see CUDA "
			"graph captures: not measuring\n", r);
	else if (j == JMEAS) {
		snprintf(line, sizeof(line), BOT_MEASURING_FMT, 5, 0xdeadbeefull, r, (unsigned)WINDOW,
			 (unsigned)PERIOD, 1ull << MIN_BYTES_LOG2);
		fprintf(f, "h:1:1 [%d] NCCL INFO %s\n", r, line);
	}
	for (int rep = 0; rep < 3; rep++)
		for (int s = 0; s < NSIZES; s++) {
			int want = j == JNONE ? -1 : table_arm(s, autoarm);
			int arm = want >= 0 ? want : autoarm[s];

			if (variant == ST_BAD && j == JBOT && rep == 1 && s == 1)
				arm = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
			fprintf(f, "h:1:1 [%d] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x1 "
				"count %zu datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3\n", r,
				rep * NSIZES + s, sizes[s].bytes / 4);
			if (r == 0) {
				snprintf(line, sizeof(line), NCCL_TUNING_FMT, "AllReduce",
					 (long)sizes[s].bytes, nccl_algo[arm / BOT_NPROTO],
					 nccl_proto[arm % BOT_NPROTO], 0, 1);
				fprintf(f, "h:1:2 [0] NCCL INFO %s%s\n", line,
					rep == 2 ? " cgaClusterSize 1" : "");
			}
			if (want >= 0) {
				snprintf(line, sizeof(line), BOT_ARM_FMT, 0xdeadbeefull, BOT_COLL_ALLREDUCE,
					 sizes[s].bytes, bot_size_bucket(sizes[s].bytes), want,
					 "forced");
				fprintf(f, "h:1:2 [%d] NCCL INFO %s\n", r, line);
			}
		}
	fprintf(f, "live-main rank %d batches 108 calls 3456 seconds 20.00 stopped-by all-batches "
		"batch-calls 32 warm-round-ms 20.0 budget-after-calls %d\n", r,
		j == JMEAS && variant != ST_OLD ? MEAS_MIN_CALLS : 0);
	for (int s = 0; s < NSIZES; s++)
		if (sizes[s].per_round)
			fprintf(f, "live-timing rank %d bytes %zu calls %d batches 108 median_us %.3f "
				"min_us 1.0 max_us 99999.0\n", r, sizes[s].bytes,
				sizes[s].per_round * 2 * 108, st_med(j, s, variant));
	fprintf(f, "live-calls rank %d total 3618 main 3456\nlive rank %d: done\n", r, r);
	return fclose(f) ? -1 : 0;
}

static void st_rec(struct bot_spool_rec *x, int kind, int r, size_t bytes, int arm, int decided,
		   int autoa)
{
	memset(x, 0, sizeof(*x));
	x->kind = (uint8_t)kind;
	x->coll = BOT_COLL_ALLREDUCE;
	x->arm = kind == BOT_SPOOL_SAMPLE ? (uint8_t)arm : BOT_SPOOL_ARM_NONE;
	x->nchannels = kind == BOT_SPOOL_SAMPLE ? 2 : 0;
	x->decided = (uint8_t)decided;
	x->auto_arm = (uint8_t)autoa;
	x->policy = 2;
	x->comm_id = 0xdeadbeef;
	x->rank = (uint32_t)r;
	x->nranks = 2;
	x->nnodes = 2;
	x->nbytes = bytes;
	for (int i = 0; i < BOT_NARMS; i++)
		x->cost[i] = i < 6 ? 400.0f + 100.0f * (float)i : -1.0f;
}

static int st_write_spool(const char *spooldir, int r, uint64_t digest, int variant)
{
	struct bot_spool_rec recs[64];
	struct bot_spool_hdr h;
	int n = 0, autoarm[NSIZES];
	char path[PATHBUF];
	uint8_t *b;
	size_t len;
	uint32_t crc;
	FILE *f;

	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = st_auto(s);
	for (int s = 0; s < NSIZES; s++) {
		int want = table_arm(s, autoarm), run = want >= 0 ? want : autoarm[s];

		if (!sizes[s].per_round)
			continue;
		if (!measured(s)) {
			/* below the threshold: window calls counted, no cost row */
			st_rec(&recs[n], BOT_SPOOL_SUMMARY, r, sizes[s].bytes, 0, BOT_SPOOL_ARM_NONE,
			       BOT_SPOOL_ARM_NONE);
			for (int i = 0; i < BOT_NARMS; i++)
				recs[n].cost[i] = -1.0f;
			recs[n].flags = BOT_SPOOL_F_NO_COST;
			recs[n++].calls = 200;
			continue;
		}
		st_rec(&recs[n], BOT_SPOOL_SUMMARY, r, sizes[s].bytes, 0, want, autoarm[s]);
		if (variant == ST_BAD && r == 0 && s == 2)
			recs[n].decided = BOT_SPOOL_ARM_NONE;
		recs[n++].calls = 500;
		if (variant == ST_NOSAMPLES || (variant == ST_BAD && r == 1 && s == 3))
			continue;
		for (int k = 0; k < 4; k++) {
			struct bot_spool_rec *x = &recs[n++];

			st_rec(x, BOT_SPOOL_SAMPLE, r, sizes[s].bytes, run, want, autoarm[s]);
			x->seq = (uint64_t)(100 + k);
			x->duration_ns = (uint64_t)(st_med(JMEAS, s, variant) * (0.8 + 0.05 * k) * 1000.0);
			if (variant == ST_BAD && r == 0 && s == 1)
				x->duration_ns *= 1000;
			if (k == 0)
				x->flags = s == 1 ? BOT_SPOOL_F_FIRST_ALGO : BOT_SPOOL_F_RANGE;
			if (variant == ST_RANGE && (s == 1 || (s == 3 && r == 1))) {
				/* all out of range: 40x NCCL's model (4 MiB rank 1:
				 * also 1000x the CUDA events) */
				x->flags |= BOT_SPOOL_F_RANGE;
				x->cost[run] = (float)((double)x->duration_ns / 1000.0 / 40.0);
				if (s == 3)
					x->duration_ns *= 1000;
			}
		}
	}
	if (variant == ST_BAD && r == 1) {
		/* a 32 MiB sample of tree/ll: NCCL printed ring/simple */
		st_rec(&recs[n], BOT_SPOOL_SAMPLE, r, 32 * MiB, ARM(BOT_ALGO_TREE, BOT_PROTO_LL),
		       ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE), autoarm[5]);
		recs[n++].duration_ns = 13000000;
	}
	memset(&h, 0, sizeof(h));
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = (uint64_t)n;
	h.table_digest = digest;
	memcpy(h.build_id, "nccl-bot test", 13);
	h.pid = (uint32_t)jobs[JMEAS].pid[r];
	len = BOT_SPOOL_HDR_SIZE + (size_t)n * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	b = calloc(1, len);
	if (!b)
		return -1;
	bot_spool_pack_hdr(b, &h);
	for (int i = 0; i < n; i++)
		bot_spool_pack_rec(b + BOT_SPOOL_HDR_SIZE + (size_t)i * BOT_SPOOL_REC_SIZE, &recs[i]);
	crc = bot_spool_crc32c(0, b, len - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		b[len - BOT_SPOOL_TRAILER_SIZE + i] = (uint8_t)(crc >> (8 * i));
	if (fmt(path, sizeof(path), "%s/nb-selftest-%d.spool", spooldir, (int)jobs[JMEAS].pid[r])) {
		free(b);
		return -1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len) {
		if (f)
			fclose(f);
		free(b);
		return -1;
	}
	free(b);
	return fclose(f) ? -1 : 0;
}

static int st_pass, st_fail;

static void st_check(int ok, const char *what)
{
	if (ok) {
		st_pass++;
	} else {
		st_fail++;
		printf("live-selftest: FAIL: %s\n", what);
	}
}

/* Run the checks on a canned case; whether exactly the named checks failed. */
static void st_case(const char *top, const char *cname, int variant, const char *const *want_fail)
{
	char dir[PATHBUF], spooldir[PATHBUF + 16], path[PATHBUF + 16], msg[512];
	int autoarm[NSIZES], ok = 1, nwant = 0;
	uint64_t digest;

	snprintf(dir, sizeof(dir), "%s/%s", top, cname);
	snprintf(spooldir, sizeof(spooldir), "%s/meas-spool", dir);
	if (fresh_dir(dir) || fresh_dir(spooldir)) {
		fmt(msg, sizeof(msg), "case %s: cannot create %s", cname, spooldir);
		st_check(0, msg);
		return;
	}
	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = st_auto(s);
	if (build_table(autoarm, &digest)) {
		snprintf(msg, sizeof(msg), "case %s: cannot build the step table", cname);
		st_check(0, msg);
		return;
	}
	for (int j = 0; j < NJOBS; j++) {
		jobs[j].ran = 1;
		jobs[j].ok = !(variant == ST_BAD && j == JBOT);
		snprintf(jobs[j].why, sizeof(jobs[j].why), "%s",
			 jobs[j].ok ? "" : "rank 1 exit 1, expected exit 0 (canned)");
		jobs[j].secs = 30.0;
		jobs[j].pid[0] = 4000 + 2 * j;
		jobs[j].pid[1] = 4001 + 2 * j;
		for (int r = 0; r < 2; r++)
			if (st_write_log(dir, j, r, variant)) {
				snprintf(msg, sizeof(msg), "case %s: cannot write %s's log", cname,
					 jobs[j].tag);
				st_check(0, msg);
				return;
			}
	}
	for (int r = 0; variant != ST_NOSPOOL && variant != ST_OLD && r < 2; r++)
		if (st_write_spool(spooldir, r, digest, variant)) {
			snprintf(msg, sizeof(msg), "case %s: cannot write rank %d's spool file", cname, r);
			st_check(0, msg);
			return;
		}
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	rep_file = fopen(path, "w");
	rep_stdout = 0;
	nccl_ver = variant == ST_OLD ? 22709 : 22809;
	analyze(dir, spooldir, digest);
	if (rep_file)
		fclose(rep_file);
	rep_file = NULL;
	rep_stdout = 1;

	for (; want_fail[nwant]; nwant++) {
		int found = 0;

		for (int i = 0; i < nchecks; i++)
			if (!strcmp(checks[i].name, want_fail[nwant]))
				found = 1 + !checks[i].ok;
		if (found != 2) {
			printf("live-selftest: case %s: check [%s] %s, expected it to fail\n", cname,
			       want_fail[nwant], found ? "passed" : "missing");
			ok = 0;
		}
	}
	if (count_checks(0) != nwant) {
		printf("live-selftest: case %s: %d checks failed, expected %d\n", cname,
		       count_checks(0), nwant);
		ok = 0;
	}
	if (nchecks != NCHECKS) {
		printf("live-selftest: case %s: %d checks, expected %d\n", cname, nchecks, NCHECKS);
		ok = 0;
	}
	if (count_checks(2) != (variant == ST_OLD ? NMEAS_CHECKS : 0)) {
		printf("live-selftest: case %s: %d checks skipped, expected %d\n", cname,
		       count_checks(2), variant == ST_OLD ? NMEAS_CHECKS : 0);
		ok = 0;
	}
	if (nmeas_warnings != (variant == ST_RANGE ? 2 : 0)) {
		printf("live-selftest: case %s: %d measurement WARNING lines, expected %d\n", cname,
		       nmeas_warnings, variant == ST_RANGE ? 2 : 0);
		ok = 0;
	}
	if (algo_env_note != (variant == ST_ALGOENV)) {
		printf("live-selftest: case %s: the NCCL_ALGO/NCCL_PROTO WARNING %s\n", cname,
		       algo_env_note ? "is there, not expected" : "is missing");
		ok = 0;
	}
	if (variant == ST_NOSAMPLES && !no_sample_note) {
		printf("live-selftest: case %s: the 'NO SAMPLE ARRIVED' note is missing\n", cname);
		ok = 0;
	}
	if (nwarnings != (variant == ST_BAD)) {
		printf("live-selftest: case %s: %d overhead WARNING lines, expected %d\n", cname,
		       nwarnings, variant == ST_BAD);
		ok = 0;
	}
	if (variant == ST_NOSPOOL && !no_spool_note) {
		printf("live-selftest: case %s: no-spool not noticed\n", cname);
		ok = 0;
	}
	fmt(msg, sizeof(msg), "case %s (report %s)", cname, path);
	st_check(ok, msg);
	if (ok)
		printf("live-selftest: case %s: ok, %d checks passed, %d failed and %d skipped as "
		       "expected\n", cname, count_checks(1), count_checks(0), count_checks(2));
}

static int selftest(const char *top)
{
	static const char *const none[] = { NULL };
	static const char *const bad[] = { "job bot", "arms 1048576", "meas 1048576 rank 0",
					   "meas 2097152 rank 0", "meas 4194304 rank 1",
					   "spool arms", NULL };
	static const char *const nosamples[] = { "meas 1048576 rank 0", "meas 1048576 rank 1",
						 "meas 2097152 rank 0", "meas 2097152 rank 1",
						 "meas 4194304 rank 0", "meas 4194304 rank 1", NULL };
	static const char *const nospool[] = { "spool files", "meas 1048576 rank 0",
					       "meas 1048576 rank 1", "meas 2097152 rank 0",
					       "meas 2097152 rank 1", "meas 4194304 rank 0",
					       "meas 4194304 rank 1", NULL };
	static const char *const range[] = { "meas 4194304 rank 1", NULL };
	static const char *const algoenv[] = { "nccl env", NULL };
	static const struct {
		const char *line;
		int ok;
		unsigned long long bytes;
		int arm;
	} lines[] = {
		{ "h:1:2 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo Tree proto Simple "
		  "channel{Lo..Hi}={0..1}", 1, 1048576, ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE) },
		{ "h:1:2 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo Ring proto LL channel{Lo..Hi}="
		  "{0..3} cgaClusterSize 1", 1, 4194304, ARM(BOT_ALGO_RING, BOT_PROTO_LL) },
		{ "x AllReduce: 8 Bytes -> Algo NVLSTree proto LL128 channel{Lo..Hi}={0..0}", 1, 8,
		  ARM(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128) },
		{ "x AllReduce: 8 Bytes -> Algo CollNetDirect proto Simple", 1, 8,
		  ARM(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE) },
		/* NCCL 2.28.9's spellings (ncclAlgoToString, ncclProtoToString) */
		{ "h:1:2 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto SIMPLE "
		  "channel{Lo..Hi}={0..1}", 1, 1048576, ARM(BOT_ALGO_TREE, BOT_PROTO_SIMPLE) },
		{ "h:1:2 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto LL "
		  "channel{Lo..Hi}={0..3}", 1, 4194304, ARM(BOT_ALGO_RING, BOT_PROTO_LL) },
		{ "x AllReduce: 8 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..0}", 1, 8,
		  ARM(BOT_ALGO_RING, BOT_PROTO_LL128) },
		{ "x AllReduce: 8 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..0}", 1, 8,
		  ARM(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE) },
		{ "x AllReduce: 8 Bytes -> Algo NVLS proto SIMPLE channel{Lo..Hi}={0..0}", 1, 8,
		  ARM(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE) },
		{ "x AllReduce: 8 Bytes -> Algo COLLNET_DIRECT proto SIMPLE channel{Lo..Hi}={0..0}", 1,
		  8, ARM(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE) },
		{ "x AllReduce: 8 Bytes -> Algo COLLNET_CHAIN proto SIMPLE channel{Lo..Hi}={0..0}", 1,
		  8, ARM(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_SIMPLE) },
		{ "x AllReduce: 8 Bytes -> Algo PAT proto SIMPLE channel{Lo..Hi}={0..0}", 1, 8,
		  ARM(BOT_ALGO_PAT, BOT_PROTO_SIMPLE) },
		{ "x AllReduce: 8 Bytes -> Algo Unknown proto SIMPLE channel{Lo..Hi}={0..0}", 1, 8,
		  ARM_BAD },
		{ "x AllReduce: 8 Bytes -> Algo Hyper proto Simple", 1, 8, ARM_BAD },
		{ "h:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x1 count 4", 0, 0, 0 },
		{ "h:1:1 [0] NCCL INFO AllGather: 1048576 Bytes -> Algo Ring proto Simple", 0, 0, 0 },
	};
	int cnt[NSIZES] = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdirs(top)) {
		printf("live-selftest: cannot create %s: %s\n", top, strerror(errno));
		return 99;
	}
	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		unsigned long long n = 0;
		int arm = -9, got = tuning_line(lines[i].line, &n, &arm);
		char msg[256];

		snprintf(msg, sizeof(msg), "tuning_line(\"%.60s...\"): got %d %llu %d, expected %d "
			 "%llu %d", lines[i].line, got, n, arm, lines[i].ok, lines[i].bytes,
			 lines[i].arm);
		st_check(got == lines[i].ok && (!got || (n == lines[i].bytes && arm == lines[i].arm)),
			 msg);
	}
	for (int i = 0; i < ROUND; i++)
		cnt[pattern[i]]++;
	for (int s = 0; s < NSIZES; s++) {
		char msg[128];

		snprintf(msg, sizeof(msg), "pattern: %zu bytes %d times per round, sizes[] says %d",
			 sizes[s].bytes, cnt[s], sizes[s].per_round);
		st_check(cnt[s] == sizes[s].per_round, msg);
	}
	st_case(top, "good", ST_GOOD, none);
	st_case(top, "bad", ST_BAD, bad);
	st_case(top, "nosamples", ST_NOSAMPLES, nosamples);
	st_case(top, "nospool", ST_NOSPOOL, nospool);
	st_case(top, "range", ST_RANGE, range);
	st_case(top, "old", ST_OLD, none);
	st_case(top, "algoenv", ST_ALGOENV, algoenv);
	printf("live-selftest: %d passed, %d failed\n", st_pass, st_fail);
	return st_fail ? 1 : 0;
}

/* ---- main -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	char dir[PATH_MAX], self[PATH_MAX], spooldir[PATHBUF], path[PATHBUF];
	int ndev = 0, ver = 0, autoarm[NSIZES], failed;
	uint64_t digest = 0;
	cudaError_t ce;
	ssize_t sl;
	FILE *f;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "--selftest"))
		return selftest(argv[2]);
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: live_nccl PLUGIN.so [LOGDIR]\n"
			"       live_nccl --selftest DIR\n");
		return 99;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Before any NCCL call: with NCCL_COMM_ID set, ncclGetUniqueId() only
	 * parses that address and creates no bootstrap root (the ranks would
	 * wait for one forever); NCCL_CONF_FILE=/dev/null keeps NCCL from
	 * reading ~/.nccl.conf (it still reads /etc/nccl.conf). */
	unsetenv("NCCL_COMM_ID");
	setenv("NCCL_CONF_FILE", "/dev/null", 1);
	ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev < 1) {
		printf("SKIP: live NCCL check needs a GPU: cudaGetDeviceCount() %s (%d devices); "
		       "run tests/live on a GPU machine (tests/live/README.md)\n",
		       ce != cudaSuccess ? cudaGetErrorString(ce) : "found none", ndev);
		return 77;
	}
	if (argv[1][0] != '/' || access(argv[1], R_OK)) {
		fprintf(stderr, "live: give the plugin's absolute path (NCCL dlopen()s it): %s %s\n",
			argv[1], argv[1][0] != '/' ? "is relative" : "is not readable");
		return 99;
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		perror("live: /proc/self/exe");
		return 99;
	}
	self[sl] = 0;
	if (mkdirs(argc == 3 ? argv[2] : "tests/live/logs") ||
	    !realpath(argc == 3 ? argv[2] : "tests/live/logs", dir)) {
		fprintf(stderr, "live: cannot create the log directory %s: %s\n",
			argc == 3 ? argv[2] : "tests/live/logs", strerror(errno));
		return 99;
	}
	snprintf(spooldir, sizeof(spooldir), "%s/meas-spool", dir);
	if (fresh_dir(spooldir)) {
		fprintf(stderr, "live: cannot create or empty %s: %s\n", spooldir, strerror(errno));
		return 99;
	}
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	rep_file = fopen(path, "we");
	signal(SIGPIPE, SIG_IGN);
	/* the parent's ncclGetUniqueId() runs the bootstrap root: on lo too */
	setenv("NCCL_SOCKET_IFNAME", "lo", 1);
	ncclGetVersion(&ver);
	nccl_ver = ver;
	say("live: %d GPU(s), NCCL %d (%s); 2 ranks on GPU 0 as 2 hosts over Socket/lo; plugin %s; "
	    "logs, spool and report.txt in %s\n", ndev, ver, ver_str(ver), argv[1], dir);
	say("live: 3 jobs (none, bot, meas), each: NCCL init, up to %d allreduces in batches of "
	    "%d (main loop stops after %d s; meas only once %d calls are made, at most after %d s), "
	    "arm probe; each killed after %d s\n", MAX_MAIN_CALLS, BATCH_CALLS_MAX, MAIN_BUDGET_S,
	    MEAS_MIN_CALLS, MEAS_MAX_S, TIMEOUT_S);
	if (ver < MEAS_NCCL_VERSION)
		say("live: NCCL %s is older than 2.28: %s\n", ver_str(ver), meas_na_why);

	run_job(&jobs[JNONE], JNONE, self, dir, "none", "", "");
	read_logs(dir);
	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = auto_arm(s);
	if (build_table(autoarm, &digest)) {
		say("live: cannot encode the step table\n");
		return 99;
	}
	snprintf(path, sizeof(path), "%s/table.txt", dir);
	if ((f = fopen(path, "we"))) {
		fprintf(f, "%s\n", table_text);
		fclose(f);
	}
	for (int s = 0; s < NSIZES; s++)
		if (sizes[s].role == AUTOS && autoarm[s] >= 0)
			say("live: stock NCCL ran %s at %zu bytes: the table forces that arm there\n",
			    arm_str(autoarm[s]), sizes[s].bytes);
		else if (sizes[s].role == AUTOS)
			say("live: stock NCCL's arm at %zu bytes is unknown (the none job printed no "
			    "single arm): the table leaves that size to AUTO\n", sizes[s].bytes);
	run_job(&jobs[JBOT], JBOT, self, dir, argv[1], table_text, "");
	run_job(&jobs[JMEAS], JMEAS, self, dir, argv[1], table_text, spooldir);

	analyze(dir, spooldir, digest);
	failed = count_checks(0);
	say("\n%s; logs, spool and report in %s\n", failed ? "FAIL" : "PASS", dir);
	if (count_checks(2))
		say("live: %d passed, %d failed, %d skipped\n", count_checks(1), failed,
		    count_checks(2));
	else
		say("live: %d passed, %d failed\n", count_checks(1), failed);
	if (rep_file)
		fclose(rep_file);
	return failed ? 1 : 0;
}
