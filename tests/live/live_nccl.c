/*
 * live_nccl.c - the one check against real NCCL on a real GPU: does NCCL
 * load libnccl-tuner-bot.so, call its tuner, and run the arms it forces?
 *
 * NCCL never calls the tuner for a one-rank communicator, and rejects two
 * ranks on one GPU of one host (design-review-nccl.md M10). So the parent
 * starts two processes on GPU 0 that claim different hosts (NCCL_HOSTID)
 * and talk over the Socket transport on loopback: NCCL sees a 2-rank,
 * 2-node communicator and calls the plugin for every collective.
 *
 * Two runs, each of two ranks (children exec'ed from this program, so the
 * parent's CUDA state is not inherited): NCCL_TUNER_PLUGIN=none (stock
 * NCCL, AUTO's choices) and NCCL_TUNER_PLUGIN=NCCL_PROFILER_PLUGIN=the
 * built .so with a step table (common/table.h's encoder) that forces known
 * arms for allreduce at some sizes. Each rank runs allreduces of several
 * sizes; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,COLL makes NCCL
 * print "AllReduce: N Bytes -> Algo A proto P" per collective, which the
 * parent parses from rank 0's output. Checks:
 *   - the plugin run loads "nccl-bot" as tuner (and not in the none run);
 *   - every forced size ran the forced (algo, proto), and the plugin's
 *     debug line says "forced";
 *   - sizes the table leaves alone run what stock NCCL ran.
 * The ncclUniqueId comes from ncclGetUniqueId() in the parent and reaches
 * each child through a pipe.
 *
 * Exit: 0 pass, 1 fail, 77 skip (no GPU: cudaGetDeviceCount() fails or
 * finds none; automake counts SKIP), 99 a setup error.
 *
 * usage: live_nccl PLUGIN.so [LOGDIR]
 *        live_nccl --child RANK FD    (internal)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

#include "common/table.h"
#include "policies/context.h"

#define MiB ((size_t)1 << 20)
#define TIMEOUT_S 180

/* Allreduce sizes (bytes) and the arm the table forces at each (-1: none;
 * 256 KiB is below the table's 1 MiB threshold, 64 MiB has no entry). */
static const struct {
	size_t bytes;
	int algo, proto;
} sizes[] = {
	{ 256 * 1024, -1, -1 },
	{ 1 * MiB, BOT_ALGO_TREE, BOT_PROTO_SIMPLE },
	{ 4 * MiB, BOT_ALGO_RING, BOT_PROTO_LL },
	{ 16 * MiB, BOT_ALGO_TREE, BOT_PROTO_LL },
	{ 32 * MiB, BOT_ALGO_RING, BOT_PROTO_SIMPLE },
	{ 64 * MiB, -1, -1 },
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define REPS 3

/* ---- the rank processes ---- */

static int child(int rank, int fd)
{
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t stream;
	void *buf;
	size_t got = 0;
	ncclResult_t nr;
	cudaError_t ce;

	while (got < sizeof(id)) {
		ssize_t n = read(fd, (char *)&id + got, sizeof(id) - got);

		if (n <= 0) {
			fprintf(stderr, "live rank %d: reading the unique id: %s\n", rank,
				n < 0 ? strerror(errno) : "pipe closed");
			return 99;
		}
		got += (size_t)n;
	}
	close(fd);
	if ((ce = cudaSetDevice(0)) != cudaSuccess || (ce = cudaStreamCreate(&stream)) != cudaSuccess ||
	    (ce = cudaMalloc(&buf, sizes[NSIZES - 1].bytes)) != cudaSuccess) {
		fprintf(stderr, "live rank %d: CUDA: %s\n", rank, cudaGetErrorString(ce));
		return 99;
	}
	cudaMemset(buf, 0, sizes[NSIZES - 1].bytes);
	if ((nr = ncclCommInitRank(&comm, 2, id, rank)) != ncclSuccess) {
		fprintf(stderr, "live rank %d: ncclCommInitRank: %s\n", rank, ncclGetErrorString(nr));
		return 1;
	}
	for (unsigned i = 0; i < NSIZES; i++)
		for (int r = 0; r < REPS; r++) {
			nr = ncclAllReduce(buf, buf, sizes[i].bytes / sizeof(float), ncclFloat, ncclSum,
					   comm, stream);
			if (nr != ncclSuccess) {
				fprintf(stderr, "live rank %d: ncclAllReduce %zu bytes: %s\n", rank,
					sizes[i].bytes, ncclGetErrorString(nr));
				return 1;
			}
			if ((ce = cudaStreamSynchronize(stream)) != cudaSuccess) {
				fprintf(stderr, "live rank %d: sync: %s\n", rank, cudaGetErrorString(ce));
				return 1;
			}
		}
	ncclCommDestroy(comm);
	cudaFree(buf);
	printf("live rank %d: done\n", rank);
	return 0;
}

/* ---- the parent ---- */

static struct bot_table table;
static char table_text[BOT_TABLE_MAX_TEXT + 1];

static int build_table(void)
{
	int shape;

	bot_table_init(&table, 2 /* greedy */, 1);
	table.min_bytes_log2 = 20;
	shape = bot_table_shape(&table, 2, 2);
	for (unsigned i = 0; i < NSIZES; i++) {
		struct bot_table_entry *e;

		if (sizes[i].algo < 0)
			continue;
		e = &table.entries[table.nentries++];
		memset(e, 0, sizeof(*e));
		e->shape = (uint8_t)shape;
		e->coll = BOT_COLL_ALLREDUCE;
		e->bucket = (uint8_t)bot_size_bucket(sizes[i].bytes);
		e->plan.exploit = (uint8_t)bot_arm(sizes[i].algo, sizes[i].proto);
	}
	if (bot_table_normalize(&table) ||
	    bot_table_encode(&table, table_text, sizeof(table_text)) < 0)
		return -1;
	return 0;
}

/* Run one 2-rank job; rank r's output goes to LOGDIR/<tag>-<r>.log. */
static int run_job(const char *self, const char *tag, const char *plugin, const char *dir)
{
	ncclUniqueId id;
	pid_t pid[2];
	int st[2], ok = 1;
	ncclResult_t nr;
	time_t t0;

	if ((nr = ncclGetUniqueId(&id)) != ncclSuccess) {
		fprintf(stderr, "live: ncclGetUniqueId: %s\n", ncclGetErrorString(nr));
		return -1;
	}
	for (int r = 0; r < 2; r++) {
		int p[2];
		char path[4200], rs[8], fds[16], host[32];

		if (pipe(p)) {
			perror("live: pipe");
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s-%d.log", dir, tag, r);
		pid[r] = fork();
		if (pid[r] < 0) {
			perror("live: fork");
			return -1;
		}
		if (pid[r] == 0) {
			int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			close(p[1]);
			if (out < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
				_exit(99);
			snprintf(host, sizeof(host), "nccl-bot-live-host-%d", r);
			setenv("NCCL_HOSTID", host, 1);
			setenv("NCCL_NET", "Socket", 1);
			setenv("NCCL_SOCKET_IFNAME", "lo", 1);
			setenv("NCCL_IB_DISABLE", "1", 1);
			setenv("NCCL_NVLS_ENABLE", "0", 1);
			setenv("NCCL_COLLNET_ENABLE", "0", 1);
			setenv("NCCL_DEBUG", "INFO", 1);
			setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV,TUNING,COLL", 1);
			unsetenv("NCCL_ALGO");
			unsetenv("NCCL_PROTO");
			unsetenv("NCCL_DEBUG_FILE");
			setenv("NCCL_TUNER_PLUGIN", plugin, 1);
			if (strcmp(plugin, "none") != 0) {
				setenv("NCCL_PROFILER_PLUGIN", plugin, 1);
				setenv("NCCL_BOT_TABLE", table_text, 1);
				setenv("NCCL_BOT_DEBUG", "1", 1);
			} else {
				unsetenv("NCCL_PROFILER_PLUGIN");
				unsetenv("NCCL_BOT_TABLE");
			}
			snprintf(rs, sizeof(rs), "%d", r);
			snprintf(fds, sizeof(fds), "%d", p[0]);
			execl(self, self, "--child", rs, fds, (char *)NULL);
			_exit(99);
		}
		close(p[0]);
		if (write(p[1], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
			perror("live: write unique id");
			ok = 0;
		}
		close(p[1]);
	}
	/* wait, with a timeout: a hang is a failure, not a stuck test */
	t0 = time(NULL);
	for (int r = 0; r < 2; r++) {
		while (waitpid(pid[r], &st[r], WNOHANG) == 0) {
			if (time(NULL) - t0 > TIMEOUT_S) {
				fprintf(stderr, "live: %s: rank %d still running after %d s: killed\n",
					tag, r, TIMEOUT_S);
				kill(pid[0], SIGKILL);
				kill(pid[1], SIGKILL);
				waitpid(pid[r], &st[r], 0);
				st[r] = -1;
				break;
			}
			usleep(100000);
		}
	}
	for (int r = 0; r < 2; r++)
		if (st[r] == -1 || !WIFEXITED(st[r]) || WEXITSTATUS(st[r]) != 0) {
			fprintf(stderr, "live: %s: rank %d failed (%s/%s-%d.log)\n", tag, r, dir, tag, r);
			ok = 0;
		}
	return ok ? 0 : -1;
}

/* From a rank log: the (algo, proto) names NCCL printed for the first
 * AllReduce of `bytes`; 1 when found. Also whether `needle` appears. */
static int find_arm(const char *path, size_t bytes, char *algo, char *proto)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "AllReduce: ");
		long n;
		char a[32], pr[32];

		if (p && sscanf(p, "AllReduce: %ld Bytes -> Algo %31s proto %31s", &n, a, pr) == 3 &&
		    (size_t)n == bytes) {
			strcpy(algo, a);
			strcpy(proto, pr);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int grep_file(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static int ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if ((*a | 0x20) != (*b | 0x20))
			return 0;
	return !*a && !*b;
}

int main(int argc, char **argv)
{
	char dir[4096], self[4096], p0[4300], n0[4300], needle[128];
	int ndev = 0, fails = 0;
	cudaError_t ce;
	ssize_t sl;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child(atoi(argv[2]), atoi(argv[3]));
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: live_nccl PLUGIN.so [LOGDIR]\n");
		return 99;
	}
	ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev < 1) {
		printf("SKIP: live NCCL check needs a GPU: cudaGetDeviceCount() %s (%d devices); "
		       "run tests/live on a GPU machine (tests/live/README.md)\n",
		       ce != cudaSuccess ? cudaGetErrorString(ce) : "found none", ndev);
		return 77;
	}
	if (argv[1][0] != '/') {
		fprintf(stderr, "live: give the plugin's absolute path (NCCL dlopen()s it)\n");
		return 99;
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		perror("live: /proc/self/exe");
		return 99;
	}
	self[sl] = 0;
	snprintf(dir, sizeof(dir), "%s", argc == 3 ? argv[2] : "tests/live/logs");
	mkdir(dir, 0755);
	if (build_table()) {
		fprintf(stderr, "live: cannot encode the step table\n");
		return 99;
	}
	printf("live: %d GPU(s); 2 ranks on GPU 0 as 2 hosts over Socket/lo; plugin %s\n", ndev,
	       argv[1]);
	if (run_job(self, "none", "none", dir) || run_job(self, "bot", argv[1], dir)) {
		printf("FAIL: a job failed; see the logs in %s\n", dir);
		return 1;
	}
	snprintf(p0, sizeof(p0), "%s/bot-0.log", dir);
	snprintf(n0, sizeof(n0), "%s/none-0.log", dir);
	if (!grep_file(p0, "TUNER/Plugin: Using nccl-bot")) {
		printf("FAIL: NCCL did not load nccl-bot as its tuner (%s)\n", p0);
		fails++;
	}
	if (grep_file(n0, "Using nccl-bot")) {
		printf("FAIL: nccl-bot loaded with NCCL_TUNER_PLUGIN=none (%s)\n", n0);
		fails++;
	}
	printf("%-10s %-16s %-16s %-16s %s\n", "bytes", "stock NCCL", "forced", "with nccl-bot",
	       "result");
	for (unsigned i = 0; i < NSIZES; i++) {
		char na[32] = "?", np[32] = "?", ba[32] = "?", bp[32] = "?", want[40], s1[72], s2[72];
		int hn = find_arm(n0, sizes[i].bytes, na, np), hb = find_arm(p0, sizes[i].bytes, ba, bp);
		int ok;

		if (sizes[i].algo >= 0) {
			snprintf(want, sizeof(want), "%s/%s", bot_algo_name(sizes[i].algo),
				 bot_proto_name(sizes[i].proto));
			ok = hb && ieq(ba, bot_algo_name(sizes[i].algo)) &&
			     ieq(bp, bot_proto_name(sizes[i].proto));
			snprintf(needle, sizeof(needle), "nbytes %zu bucket %u: arm %d forced",
				 sizes[i].bytes, bot_size_bucket(sizes[i].bytes),
				 bot_arm(sizes[i].algo, sizes[i].proto));
			if (ok && !grep_file(p0, needle))
				ok = 0;
		} else {
			snprintf(want, sizeof(want), "-");
			ok = hb && hn && ieq(ba, na) && ieq(bp, np);
		}
		snprintf(s1, sizeof(s1), "%s/%s", na, np);
		snprintf(s2, sizeof(s2), "%s/%s", ba, bp);
		printf("%-10zu %-16s %-16s %-16s %s\n", sizes[i].bytes, s1, want, s2,
		       ok ? "ok" : !hb ? "FAIL (no NCCL TUNING line)" : "FAIL");
		fails += !ok;
	}
	printf("%s: %d of %zu sizes wrong; logs in %s\n", fails ? "FAIL" : "PASS", fails, NSIZES,
	       dir);
	return fails ? 1 : 0;
}
