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
 * Each rank: 2 warm-up rounds, then a timed main loop of up to 27 batches
 * of 8 rounds of 16 calls (1 MiB x5, 4 MiB x5, 2 MiB x4, 256 KiB x2 in a
 * fixed interleaved order, so any 16 consecutive calls - one measurement
 * window - hold every main size), a CUDA event between consecutive calls,
 * cudaStreamSynchronize around each batch; after each batch both ranks
 * agree (a 4-byte max-allreduce) whether to stop: all batches done, or
 * MAIN_BUDGET_S spent. Then the arm probe: 3 calls of every size, each
 * synchronized. NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING makes
 * NCCL print "AllReduce: N Bytes -> Algo A proto P" for every call on rank
 * 0; the ranks print their per-size timings ("live-timing ..." lines).
 *
 * Checks (one line each, "N passed, N failed" at the end):
 *   - every job's two ranks exited 0 within TIMEOUT_S;
 *   - nccl-bot was loaded as tuner and profiler in bot and meas, not in
 *     none; the profiler measured in meas (its "measuring windows" line on
 *     both ranks) and not in bot;
 *   - per size, from all of rank 0's TUNING lines: forced sizes ran the
 *     table's arm in bot and meas on every call, with the plugin's "arm K
 *     forced" debug line; the other sizes ran what none ran;
 *   - the spool (common/spool.h's reader): one valid file per meas rank
 *     with the table's digest; per main size >= 1 MiB and rank, clean
 *     samples of the arm the table forces, whose median duration is within
 *     0.05x..20x of the rank's CUDA-event median per call at that size, no
 *     sample of another arm, and a context summary whose decided arm is the
 *     table's and whose auto_arm is what the none job ran; every sample's
 *     arm is the one NCCL printed for its size.
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
 *        live_nccl --child RANK FD        (internal)
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

extern char **environ;

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define ARM(a, p) ((a) * BOT_NPROTO + (p))

#define MIN_BYTES_LOG2 20	/* the table's threshold: 1 MiB */
#define TIMEOUT_S 120		/* a job still running then is killed (init included) */
#define MAIN_BUDGET_S 45	/* the main loop stops after this (both ranks agree) */
#define ROUND 16		/* calls per round of the main loop */
#define BATCH_ROUNDS 8
#define BATCH_CALLS (ROUND * BATCH_ROUNDS)
#define MAX_BATCHES 27		/* 27 x 128 = 3,456 timed calls */
#define WARM_ROUNDS 2
#define PROBE_REPS 3
#define WINDOW 16		/* NCCL_BOT_WINDOW of the meas job */
#define PERIOD (100 * WINDOW)	/* one window per 100 windows' worth of calls */
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

/* ---- the rank processes ------------------------------------------------------ */

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

static int child(int rank, int fd)
{
	static double per_batch[NSIZES][MAX_BATCHES];
	static cudaEvent_t ev[BATCH_CALLS + 1];
	size_t maxb = sizes[NSIZES - 1].bytes, got = 0;
	ncclUniqueId id;
	long calls = 0, main_calls = 0;
	int nb = 0, hflag;
	double t0, tmain;
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
	CUDA_OK("cudaSetDevice(0)", cudaSetDevice(0));
	CUDA_OK("cudaStreamCreate", cudaStreamCreate(&stream));
	CUDA_OK("cudaMalloc (64 MiB)", cudaMalloc(&buf, maxb));
	CUDA_OK("cudaMalloc (stop flag)", cudaMalloc((void **)&dflag, sizeof(int)));
	CUDA_OK("cudaMemset", cudaMemset(buf, 0, maxb));
	for (int i = 0; i <= BATCH_CALLS; i++)
		CUDA_OK("cudaEventCreate", cudaEventCreate(&ev[i]));
	t0 = now_s();
	nr = ncclCommInitRank(&comm, 2, id, rank);
	if (nr != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclCommInitRank(2 ranks, rank %d): %s (%s)\n", rank,
			rank, ncclGetErrorString(nr), ncclGetLastError(NULL));
		return 1;
	}
	printf("live rank %d: ncclCommInitRank took %.1f s\n", rank, now_s() - t0);

	for (int i = 0; i < WARM_ROUNDS * ROUND; i++, calls++)
		if (allreduce(sizes[pattern[i % ROUND]].bytes))
			return 1;
	CUDA_OK("cudaStreamSynchronize after the warm-up", cudaStreamSynchronize(stream));

	tmain = now_s();
	for (;;) {
		double sum[NSIZES] = { 0 };
		int cnt[NSIZES] = { 0 };

		CUDA_OK("cudaEventRecord", cudaEventRecord(ev[0], stream));
		for (int i = 0; i < BATCH_CALLS; i++) {
			if (allreduce(sizes[pattern[i % ROUND]].bytes))
				return 1;
			CUDA_OK("cudaEventRecord", cudaEventRecord(ev[i + 1], stream));
		}
		calls += BATCH_CALLS;
		main_calls += BATCH_CALLS;
		CUDA_OK("cudaStreamSynchronize after a timed batch", cudaStreamSynchronize(stream));
		for (int i = 0; i < BATCH_CALLS; i++) {
			float ms;

			CUDA_OK("cudaEventElapsedTime", cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
			sum[pattern[i % ROUND]] += (double)ms * 1000.0;
			cnt[pattern[i % ROUND]]++;
		}
		for (int s = 0; s < NSIZES; s++)
			if (cnt[s])
				per_batch[s][nb] = sum[s] / cnt[s];
		nb++;
		/* both ranks stop together: the max of their flags */
		hflag = nb >= MAX_BATCHES || now_s() - tmain >= MAIN_BUDGET_S;
		CUDA_OK("cudaMemcpyAsync (stop flag in)",
			cudaMemcpyAsync(dflag, &hflag, sizeof(int), cudaMemcpyHostToDevice, stream));
		nr = ncclAllReduce(dflag, dflag, 1, ncclInt32, ncclMax, comm, stream);
		if (nr != ncclSuccess) {
			fprintf(stderr, "live rank %d: ncclAllReduce of the stop flag: %s (%s)\n", rank,
				ncclGetErrorString(nr), ncclGetLastError(comm));
			return 1;
		}
		calls++;
		CUDA_OK("cudaMemcpyAsync (stop flag out)",
			cudaMemcpyAsync(&hflag, dflag, sizeof(int), cudaMemcpyDeviceToHost, stream));
		CUDA_OK("cudaStreamSynchronize after the stop flag", cudaStreamSynchronize(stream));
		if (hflag)
			break;
	}
	printf("live-main rank %d batches %d calls %ld seconds %.2f stopped-by %s\n", rank, nb,
	       main_calls, now_s() - tmain, nb >= MAX_BATCHES ? "all-batches" : "time-budget");
	for (int s = 0; s < NSIZES; s++) {
		double v[MAX_BATCHES], med;

		if (!sizes[s].per_round)
			continue;
		memcpy(v, per_batch[s], sizeof(v));
		med = median(v, nb);
		printf("live-timing rank %d bytes %zu calls %d batches %d median_us %.3f "
		       "min_us %.3f max_us %.3f\n", rank, sizes[s].bytes,
		       sizes[s].per_round * BATCH_ROUNDS * nb, nb, med, v[0], v[nb - 1]);
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
static struct {
	char name[48];
	int ok;
} checks[MAXCHECKS];
static int nchecks;

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

enum { JNONE, JBOT, JMEAS, NJOBS };

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
	"NCCL_COMM_ID", NULL
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
	for (int r = 0; r < 2; r++)
		if (env_build(&env[r], j, r, plugin, table_text, spool)) {
			why_add(jb->why, sizeof(jb->why), "out of memory building the environment");
			goto out;
		}
	t0 = now_s();
	for (int r = 0; r < 2; r++) {
		char path[PATHBUF], rs[16], fds[16];
		char *args[5];
		int p[2];

		snprintf(path, sizeof(path), "%s/%s-%d.log", dir, jb->tag, r);
		if (pipe(p)) {
			why_add(jb->why, sizeof(jb->why), "pipe: %s", strerror(errno));
			break;
		}
		snprintf(rs, sizeof(rs), "%d", r);
		snprintf(fds, sizeof(fds), "%d", p[0]);
		args[0] = (char *)self;
		args[1] = "--child";
		args[2] = rs;
		args[3] = fds;
		args[4] = NULL;
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
} logs[NJOBS];

static char measuring_needle[160];

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
		    sscanf(line, "live-main rank %d batches %d", &rk, &nb) == 2 && rk == rank)
			L->batches[rank] = nb;
	}
	fclose(f);
}

static void read_logs(const char *dir)
{
	memset(logs, 0, sizeof(logs));
	snprintf(measuring_needle, sizeof(measuring_needle),
		 ": measuring windows of %d calls every %d calls at or above %zu bytes", WINDOW, PERIOD,
		 (size_t)1 << MIN_BYTES_LOG2);
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

static int no_sample_note, no_kernelch_note, no_spool_note, nwarnings;

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
			if (j == JMEAS && !L->measuring[r])
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
			if (!ms[r][s].dur) {
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
			if (bot_spool_clean(x))
				m->dur[m->ndur++] = (double)x->duration_ns / 1000.0;
			else if (x->flags & BOT_SPOOL_F_RANGE)
				m->lab_dur_us = (double)x->duration_ns / 1000.0;
			m->clean += bot_spool_clean(x);
		}
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
			    "(rank 0 / 1); the first window has closed by call %d at the latest "
			    "(NCCL_BOT_WINDOW=%d, a window every %d calls at a commId-derived phase).\n",
			    logs[JMEAS].calls[0], logs[JMEAS].calls[1], PERIOD, WINDOW, PERIOD);
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
			double ev = logs[JMEAS].med_us[r][s], med = -1.0, ratio = -1.0;
			char w[2048] = "", name[48], cnt[24], dec[24], aut[24], n1[24], n2[24], n3[24];

			if (have[r]) {
				med = median(m->dur, m->ndur);
				if (med > 0 && ev > 0)
					ratio = med / ev;
			}
			if (want < 0)
				why_add(w, sizeof(w), "the table's arm is unknown (stock NCCL's arm "
					"at this size is unknown)");
			if (!have[r]) {
				why_add(w, sizeof(w), "no spool file");
			} else if (!m->n) {
				why_add(w, sizeof(w), "no sample of %zu bytes (no window call of this size "
					"was measured)", sizes[s].bytes);
			} else if (!m->clean) {
				why_add(w, sizeof(w), "no clean sample of %s: %d of %d samples have that "
					"arm, labelled aggregate %d, channels missing %d, out of range %d, "
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
			if (have[r] && m->clean) {
				if (ev <= 0)
					why_add(w, sizeof(w), "no 'live-timing' line for %zu bytes in "
						"%s/meas-%d.log", sizes[s].bytes, dir, r);
				else if (ratio < RATIO_LO || ratio > RATIO_HI)
					why_add(w, sizeof(w), "median clean duration %.1f us is %.3gx the "
						"CUDA-event median %.1f us, outside %.2gx..%.3gx", med, ratio,
						ev, RATIO_LO, RATIO_HI);
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
			snprintf(cnt, sizeof(cnt), "%d/%d", m->clean, m->n);
			snprintf(dec, sizeof(dec), "%s", m->nsum ? arm_str(m->decided) : "-");
			snprintf(aut, sizeof(aut), "%s", m->nsum ? arm_str(m->autoa) : "-");
			say("%-9zu %-5d %-14s %-11s %-11s %-11s %-7s %-14s %-14s %s%s%s\n",
			    sizes[s].bytes, r, arm_str(want), cnt, num(n1, sizeof(n1), med, 1),
			    num(n2, sizeof(n2), ev, 1), num(n3, sizeof(n3), ratio, 3), dec, aut,
			    w[0] ? "FAIL" : "ok", w[0] ? ": " : "", w);
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
		for (int s = 0; s < NSIZES; s++)
			free(ms[r][s].dur);
		if (have[r])
			bot_spool_free(&sf[r]);
	}
}

static void report_overhead(void)
{
	say("\n== overhead (time per collective, us: median over timed batches of the per-size "
	    "mean between CUDA events, rank 0; not a pass/fail check) ==\n");
	say("main loop batches of %d calls: none %d, bot %d, meas %d (at most %d; stopped after "
	    "%d s)\n", BATCH_CALLS, logs[JNONE].batches[0], logs[JBOT].batches[0],
	    logs[JMEAS].batches[0], MAX_BATCHES, MAIN_BUDGET_S);
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
	no_sample_note = no_kernelch_note = no_spool_note = nwarnings = 0;
	read_logs(dir);
	for (int s = 0; s < NSIZES; s++)
		autoarm[s] = auto_arm(s);
	check_jobs();
	check_loading(dir);
	check_arms(dir, autoarm);
	check_meas(dir, spooldir, digest, autoarm);
	report_overhead();
	if (count_checks(0)) {
		say("\nfailed:");
		for (int i = 0; i < nchecks; i++)
			if (!checks[i].ok)
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

static const char *const nccl_algo[BOT_NALGO] = {
	"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
};
static const char *const nccl_proto[BOT_NPROTO] = { "LL", "LL128", "Simple" };

/* Canned arms: stock NCCL ring/ll at 256 KiB, ring/simple above. */
static int st_auto(int s)
{
	return s == 0 ? ARM(BOT_ALGO_RING, BOT_PROTO_LL) : ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
}

enum { ST_GOOD, ST_BAD, ST_NOSAMPLES, ST_NOSPOOL };

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
	char path[PATHBUF];
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
	if (j != JNONE) {
		fprintf(f, "h:1:1 [%d] NCCL INFO TUNER/Plugin: Using nccl-bot (v5)\n", r);
		fprintf(f, "h:1:1 [%d] NCCL INFO PROFILER/Plugin: Loaded nccl-bot (v5)\n", r);
	}
	if (j == JMEAS)
		fprintf(f, "h:1:1 [%d] NCCL INFO nccl-bot: profiler v5 comm 00000000deadbeef rank %d: "
			"measuring windows of %d calls every %d calls at or above %zu bytes\n", r, r,
			WINDOW, PERIOD, (size_t)1 << MIN_BYTES_LOG2);
	for (int rep = 0; rep < 3; rep++)
		for (int s = 0; s < NSIZES; s++) {
			int want = j == JNONE ? -1 : table_arm(s, autoarm);
			int arm = want >= 0 ? want : autoarm[s];

			if (variant == ST_BAD && j == JBOT && rep == 1 && s == 1)
				arm = ARM(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
			fprintf(f, "h:1:1 [%d] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x1 "
				"count %zu datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3\n", r,
				rep * NSIZES + s, sizes[s].bytes / 4);
			if (r == 0)
				fprintf(f, "h:1:2 [0] NCCL INFO AllReduce: %zu Bytes -> Algo %s proto %s "
					"channel{Lo..Hi}={0..1}%s\n", sizes[s].bytes,
					nccl_algo[arm / BOT_NPROTO], nccl_proto[arm % BOT_NPROTO],
					rep == 2 ? " cgaClusterSize 1" : "");
			if (want >= 0)
				fprintf(f, "h:1:2 [%d] NCCL INFO nccl-bot: comm 00000000deadbeef coll 4 "
					"nbytes %zu bucket %u: arm %d forced\n", r, sizes[s].bytes,
					bot_size_bucket(sizes[s].bytes), want);
		}
	fprintf(f, "live-main rank %d batches 27 calls 3456 seconds 20.00 stopped-by all-batches\n",
		r);
	for (int s = 0; s < NSIZES; s++)
		if (sizes[s].per_round)
			fprintf(f, "live-timing rank %d bytes %zu calls %d batches 27 median_us %.3f "
				"min_us 1.0 max_us 99999.0\n", r, sizes[s].bytes,
				sizes[s].per_round * BATCH_ROUNDS * 27, st_med(j, s, variant));
	fprintf(f, "live-calls rank %d total 3536 main 3456\nlive rank %d: done\n", r, r);
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
	for (int r = 0; variant != ST_NOSPOOL && r < 2; r++)
		if (st_write_spool(spooldir, r, digest, variant)) {
			snprintf(msg, sizeof(msg), "case %s: cannot write rank %d's spool file", cname, r);
			st_check(0, msg);
			return;
		}
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	rep_file = fopen(path, "w");
	rep_stdout = 0;
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
	if (nchecks != 21) {
		printf("live-selftest: case %s: %d checks, expected 21\n", cname, nchecks);
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
		printf("live-selftest: case %s: ok, %d checks passed and %d failed as expected\n",
		       cname, count_checks(1), count_checks(0));
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

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "--selftest"))
		return selftest(argv[2]);
	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: live_nccl PLUGIN.so [LOGDIR]\n"
			"       live_nccl --selftest DIR\n");
		return 99;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
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
	say("live: %d GPU(s), NCCL %d; 2 ranks on GPU 0 as 2 hosts over Socket/lo; plugin %s; "
	    "logs, spool and report.txt in %s\n", ndev, ver, argv[1], dir);
	say("live: 3 jobs (none, bot, meas), each: NCCL init, ~3,500 allreduces (main loop stops "
	    "after %d batches or %d s), arm probe; each killed after %d s\n", MAX_BATCHES,
	    MAIN_BUDGET_S, TIMEOUT_S);

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
	say("live: %d passed, %d failed\n", count_checks(1), failed);
	if (rep_file)
		fclose(rep_file);
	return failed ? 1 : 0;
}
