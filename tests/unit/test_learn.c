/*
 * test_learn.c - the launch and learning library (learn/): the merge of a
 * job into a fabric's state (learn/merge.h), the writers' lock apart from
 * the store (learn/lock.h, learn/store.h), the environment for a step
 * (learn/stepenv.h) and spool files to a sweep (learn/spoolsweep.h).
 * Also what a job directory may hold besides spool files (FIFOs,
 * directories and links named *.spool, nothing at all), listings that fail
 * part-way (readdir() is interposed below), publishing under umask 077 and
 * messages that stay on one line.
 *
 * Spool files are written byte by byte with the format's packing helpers,
 * as the ranks of a job would leave them: one file per rank, each with
 * samples of the same collectives and a context summary.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/state.h"
#include "common/table.h"
#include "learn/compile.h"
#include "learn/fabricdir.h"
#include "learn/lock.h"
#include "learn/log.h"
#include "learn/merge.h"
#include "learn/spoolsweep.h"
#include "learn/stepenv.h"
#include "learn/store.h"
#include "policies/policy.h"
#include "tests/unit/testutil.h"

#define FABRIC "h100-ib"
#define NRANKS 16
#define NNODES 2
#define NBYTES (8u << 20)

static char dir[64], state[96];

/* ---- readdir() that fails on demand ---------------------------------------- */

/* The library is linked into this program: its readdir() calls land here.
 * With readdir_fail set, a listing fails part-way (EIO after that many
 * entries), as a flaky network file system would. */
static int readdir_fail;
static int readdir_left;

struct dirent *readdir(DIR *d)
{
	static struct dirent *(*real)(DIR *);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "readdir");
	if (readdir_fail && readdir_left-- <= 0) {
		errno = EIO;
		return NULL;
	}
	return real(d);
}

/* ---- what the library logged ------------------------------------------- */

static char logged[16384];

static void collect(void *arg, int level, const char *msg)
{
	size_t n = strlen(logged);

	(void)arg;
	snprintf(logged + n, sizeof(logged) - n, "%s: %s\n", bot_log_level_name(level), msg);
}

static const struct bot_log test_log = { collect, NULL };

/* ---- spool files ---------------------------------------------------------- */

static struct bot_spool_rec rec(int kind, uint64_t comm, uint32_t rank, uint64_t seq, int arm,
				uint64_t ns)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)kind;
	r.coll = BOT_COLL_ALLREDUCE;
	r.arm = kind == BOT_SPOOL_SAMPLE ? (uint8_t)arm : BOT_SPOOL_ARM_NONE;
	r.nchannels = kind == BOT_SPOOL_SAMPLE ? 8 : 0;
	r.auto_arm = (uint8_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);
	r.decided = BOT_SPOOL_ARM_NONE;
	r.policy = BOT_POLICY_THOMPSON;
	r.comm_id = comm;
	r.rank = rank;
	r.nranks = NRANKS;
	r.nnodes = NNODES;
	r.nbytes = kind == BOT_SPOOL_SAMPLE ? NBYTES : bot_bucket_lo(bot_size_bucket(NBYTES));
	r.seq = kind == BOT_SPOOL_SAMPLE ? seq : 0;
	r.duration_ns = kind == BOT_SPOOL_SAMPLE ? ns : 0;
	r.calls = kind == BOT_SPOOL_SUMMARY ? 1000 : 0;
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		r.cost[a] = -1.0f;
	r.cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_LL)] = 100.0f;
	r.cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] = 120.0f;
	return r;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Rank `rank` of job `job`: 8 samples of two arms (AUTO's ring/ll twice as
 * slow as ring/simple; rank 1 a microsecond later) and a summary, in
 * <dir>/<sub>/nb-<job>-<rank>.spool. */
static void write_rank(const char *sub, unsigned job, uint32_t rank)
{
	enum { N = 9 };
	struct bot_spool_hdr h;
	size_t len = BOT_SPOOL_HDR_SIZE + N * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	uint8_t *buf = calloc(1, len);
	uint64_t comm = 0x1000 + job;
	char path[256];
	uint32_t crc;

	ck_assert_ptr_nonnull(buf);
	memset(&h, 0, sizeof(h));
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = N;
	h.table_digest = 0x77 + job;
	strcpy(h.build_id, "nccl-bot test");
	h.pid = 100 + rank;
	bot_spool_pack_hdr(buf, &h);
	for (unsigned i = 0; i < N; i++) {
		int arm = bot_arm(BOT_ALGO_RING, i % 2 ? BOT_PROTO_SIMPLE : BOT_PROTO_LL);
		struct bot_spool_rec r = i == N - 1 ? rec(BOT_SPOOL_SUMMARY, comm, rank, 0, 0, 0) :
				rec(BOT_SPOOL_SAMPLE, comm, rank, i, arm,
				    (i % 2 ? 100000 : 200000) + 1000 * rank);

		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r);
	}
	crc = bot_spool_crc32c(0, buf, len - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		buf[len - 8 + i] = (uint8_t)(crc >> (8 * i));
	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/nb-%u-%u.spool", dir, sub, job, rank);
	write_file(path, buf, len);
	free(buf);
}

/* A job of two ranks in <dir>/job<j>/. */
static void write_job(unsigned job)
{
	char sub[32];

	snprintf(sub, sizeof(sub), "job%u", job);
	write_rank(sub, job, 0);
	write_rank(sub, job, 1);
}

static void job_path(unsigned job, char *out, size_t len)
{
	snprintf(out, len, "%s/job%u", dir, job);
}

/* The name `current` holds ("" when there is none). */
static void current(char out[64])
{
	char path[160];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/current", state, FABRIC);
	out[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(out, 1, 63, f);
	fclose(f);
	out[n] = 0;
	if (n && out[n - 1] == '\n')
		out[n - 1] = 0;
}

/* What the current state holds apart from its lineage (the parent differs
 * with the order of merges; the statistics and sources do not): the name
 * the same state would have with parent 0. */
static void content(char out[BOT_STATE_NAME_MAX])
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	uint8_t *b;
	size_t n;

	ck_assert_msg(bot_store_load(state, FABRIC, &s, NULL, err, sizeof(err)) == 0, "%s", err);
	s.parent = 0;
	ck_assert_int_eq(bot_state_encode(&s, &b, &n, err, sizeof(err)), 0);
	bot_state_snap_name(b, n, out);
	free(b);
	bot_state_free(&s);
}

/* The parent chain from `current`: its length, every link present. */
static size_t chain_length(void)
{
	struct bot_store_entry *v;
	char err[BOT_STATE_ERR_MAX];
	size_t n;

	ck_assert_msg(bot_store_history(state, FABRIC, 64, &v, &n, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < n; i++)
		ck_assert(v[i].present);
	free(v);
	return n;
}

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "learn");
	snprintf(state, sizeof(state), "%s/state", dir);
	ck_assert_int_eq(mkdir(state, 0755), 0);
	logged[0] = 0;
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

static int merge(unsigned job, int partial, struct bot_lock *lock, struct bot_merge_result *res)
{
	char path[128];
	const char *paths[] = { path };
	struct bot_merge_req req = { state, FABRIC, paths, 1, partial, lock };

	job_path(job, path, sizeof(path));
	return bot_merge_job(&req, res, &test_log);
}

/* ---- the merge ------------------------------------------------------------ */

START_TEST(test_merge_publishes_then_nothing_new)
{
	struct bot_merge_result res;
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], cur[64];

	write_job(1);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_uint_eq(res.files, 2);
	ck_assert_uint_eq(res.merged, 2);
	ck_assert_uint_eq(res.merged_before + res.rejected, 0);
	/* 8 collectives seen by both ranks: 8 after the minimum over ranks */
	ck_assert_uint_eq(res.collectives, 8);
	ck_assert_uint_eq(res.contexts, 1);
	ck_assert_uint_eq(res.round, 1);
	current(cur);
	ck_assert_str_eq(cur, res.snapshot);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &s, snap, err, sizeof(err)), 0);
	ck_assert_str_eq(snap, res.snapshot);
	ck_assert_uint_eq(s.nsources, 2);
	ck_assert_uint_eq(s.rounds, 1);
	/* the minimum over ranks: one sample per collective */
	{
		const struct bot_kb_ctx *c = bot_kb_at(s.kb, 0);
		int ll = bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);

		ck_assert_uint_eq(c->arm[ll].n, 4);
		ck_assert_uint_eq(c->calls, 2000);
	}
	bot_state_free(&s);

	/* The same job again: nothing new, nothing published, success. */
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_NOTHING_NEW);
	ck_assert_uint_eq(res.merged_before, 2);
	ck_assert_uint_eq(res.merged, 0);
	ck_assert_str_eq(res.snapshot, cur);
	ck_assert_uint_eq(res.round, 1);
	{
		char again[64];

		current(again);
		ck_assert_str_eq(again, cur);
	}
}
END_TEST

START_TEST(test_merge_order_independent)
{
	struct bot_merge_result res;
	char a[64], b[64];

	write_job(1);
	write_job(2);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	ck_assert_int_eq(merge(2, 0, NULL, &res), 0);
	ck_assert_uint_eq(res.round, 2);
	content(a);
	ck_assert_uint_eq(chain_length(), 2);
	snprintf(state, sizeof(state), "%s/state2", dir);
	ck_assert_int_eq(mkdir(state, 0755), 0);
	ck_assert_int_eq(merge(2, 0, NULL, &res), 0);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	content(b);
	ck_assert_str_eq(a, b);
}
END_TEST

/* A job with a bad file is refused whole, the bad file named; partial
 * merges the rest; a job half merged before is refused too. */
START_TEST(test_merge_job_whole_or_partial)
{
	struct bot_merge_result res;
	char path[160], cur[64];

	write_job(1);
	snprintf(path, sizeof(path), "%s/job1/nb-1-9.spool", dir);
	write_file(path, "not a spool file\n", 17);
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_uint_eq(res.files, 3);
	ck_assert_uint_eq(res.rejected, 1);
	ck_assert_uint_eq(res.merged, 0);
	ck_assert_msg(strstr(logged, "warning: rejected ") && strstr(logged, "nb-1-9.spool: "),
		      "%s", logged);
	ck_assert_msg(strstr(logged, "error: " FABRIC ": of this job's 3 spool file(s), 1 failed "
			     "validation"), "%s", logged);
	current(cur);
	ck_assert_str_eq(cur, "");

	ck_assert_int_eq(merge(1, 1, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_uint_eq(res.merged, 2);
	ck_assert_uint_eq(res.rejected, 1);
	current(cur);
	ck_assert_str_eq(cur, res.snapshot);

	/* job 1's good files again, next to a new rank: not whole */
	unlink(path);
	write_rank("job1", 1, 2);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_uint_eq(res.merged_before, 2);
	ck_assert_str_eq(res.snapshot, cur);
	ck_assert_msg(strstr(logged, "of this job's 3 spool file(s), 2 were merged before; "),
		      "%s", logged);
	ck_assert_msg(!strstr(logged, "failed validation"), "%s", logged);
	current(path);
	ck_assert_str_eq(path, cur);
}
END_TEST

START_TEST(test_merge_failures_publish_nothing)
{
	struct bot_merge_result res;
	const char *paths[] = { "/nonexistent/nb-job" };
	struct bot_merge_req req = { state, FABRIC, paths, 1, 0, NULL };
	char cur[64];

	ck_assert_int_eq(bot_merge_job(&req, &res, &test_log), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_msg(strstr(logged, "error: /nonexistent/nb-job: No such file"), "%s", logged);
	current(cur);
	ck_assert_str_eq(cur, "");
	/* a state directory that does not exist */
	write_job(1);
	snprintf(state, sizeof(state), "%s/nosuch", dir);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_msg(strstr(logged, "nosuch: No such file or directory (create the state "
			     "directory first); nothing merged"), "%s", logged);
}
END_TEST

/* ---- the lock, apart from the store ------------------------------------- */

START_TEST(test_lock_try_while_held)
{
	char err[256];
	int fd, fd2;

	fd = bot_lock_fabric(state, FABRIC, 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	/* flock: another open file description of .lock conflicts, even here */
	ck_assert_int_eq(bot_lock_fabric(state, FABRIC, 0, err, sizeof(err)), -2);
	ck_assert_msg(strstr(err, FABRIC "/.lock: held by another writer"), "%s", err);
	/* another fabric is not locked */
	fd2 = bot_lock_fabric(state, "roce", 0, err, sizeof(err));
	ck_assert_msg(fd2 >= 0, "%s", err);
	bot_lock_release(fd2);
	bot_lock_release(fd);
	fd = bot_lock_fabric(state, FABRIC, 0, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	bot_lock_release(fd);
}
END_TEST

/* The merge takes the fabric's flock: while the test holds it, a merge in
 * a child waits, and publishes once it is released. */
START_TEST(test_merge_waits_for_the_lock)
{
	char err[256], cur[64];
	int fd, status;
	pid_t pid;

	write_job(1);
	fd = bot_lock_fabric(state, FABRIC, 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bot_merge_result res;

		close(fd);	/* the child's copy would hold the lock too */
		_exit(merge(1, 0, NULL, &res) == 0 && res.outcome == BOT_MERGE_PUBLISHED ? 0 : 1);
	}
	usleep(300 * 1000);
	current(cur);
	ck_assert_msg(!cur[0], "published while the lock was held: %s", cur);
	ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
	bot_lock_release(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	current(cur);
	ck_assert(cur[0]);
}
END_TEST

/* Four merges at once lose nothing: the snapshot of four in a row. */
START_TEST(test_concurrent_merges_lose_nothing)
{
	char seq[64], par[64];
	struct bot_merge_result res;
	pid_t pid[4];
	int status;

	for (unsigned j = 0; j < 4; j++) {
		write_job(j);
		ck_assert_int_eq(merge(j, 0, NULL, &res), 0);
	}
	content(seq);
	snprintf(state, sizeof(state), "%s/par", dir);
	ck_assert_int_eq(mkdir(state, 0755), 0);
	for (unsigned j = 0; j < 4; j++) {
		pid[j] = fork();
		ck_assert_int_ge(pid[j], 0);
		if (pid[j] == 0)
			_exit(merge(j, 0, NULL, &res) == 0 && res.outcome == BOT_MERGE_PUBLISHED ?
			      0 : 1);
	}
	for (unsigned j = 0; j < 4; j++) {
		ck_assert_int_eq(waitpid(pid[j], &status, 0), pid[j]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	content(par);
	ck_assert_str_eq(par, seq);
	/* each merge made from the one before it: a chain of four */
	ck_assert_uint_eq(chain_length(), 4);
}
END_TEST

/* A writer with a lock of its own: the merge calls it around the whole
 * transaction and never touches the flock file. */
struct counting {
	int acquired, released, fail;
	char fabric[64];
};

static int count_acquire(struct bot_lock *l, const char *d, const char *fabric, char *err,
			 size_t errlen)
{
	struct counting *c = l->arg;

	(void)d;
	ck_assert_int_eq(c->acquired, c->released);
	c->acquired++;
	snprintf(c->fabric, sizeof(c->fabric), "%s", fabric);
	if (c->fail) {
		snprintf(err, errlen, "the compactor's lock is busy");
		return -1;
	}
	return 0;
}

static void count_release(struct bot_lock *l)
{
	struct counting *c = l->arg;

	c->released++;
}

START_TEST(test_merge_with_its_own_lock)
{
	struct counting c = { 0 };
	struct bot_lock lock = { count_acquire, count_release, -1, &c };
	struct bot_lock held;
	struct bot_merge_result res;
	char path[160], cur[64];
	struct stat st;

	write_job(1);
	write_job(2);
	ck_assert_int_eq(merge(1, 0, &lock, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_int_eq(c.acquired, 1);
	ck_assert_int_eq(c.released, 1);
	ck_assert_str_eq(c.fabric, FABRIC);
	snprintf(path, sizeof(path), "%s/%s/.lock", state, FABRIC);
	ck_assert_int_eq(stat(path, &st), -1);

	/* a lock that cannot be taken: nothing read, nothing published */
	c.fail = 1;
	current(cur);
	ck_assert_int_eq(merge(2, 0, &lock, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_int_eq(c.released, 1);
	ck_assert_msg(strstr(logged, "error: the compactor's lock is busy; nothing merged"), "%s",
		      logged);
	current(path);
	ck_assert_str_eq(path, cur);

	/* already held: the merge runs without locking anything */
	bot_lock_init_held(&held);
	ck_assert_int_eq(merge(2, 0, &held, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_uint_eq(res.round, 2);
	snprintf(path, sizeof(path), "%s/%s/.lock", state, FABRIC);
	ck_assert_int_eq(stat(path, &st), -1);
}
END_TEST

/* A fabric's first merge whose lock cannot be taken: read before the lock
 * (a fabric without state), yet nothing merged is what it says. */
START_TEST(test_first_merge_lock_fails)
{
	struct counting c = { .fail = 1 };
	struct bot_lock lock = { count_acquire, count_release, -1, &c };
	struct bot_merge_result res;
	char cur[64];

	write_job(1);
	ck_assert_int_eq(merge(1, 0, &lock, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_int_eq(c.acquired, 1);
	ck_assert_uint_eq(res.merged, 0);
	ck_assert_msg(strstr(logged, "error: the compactor's lock is busy; nothing merged"), "%s",
		      logged);
	current(cur);
	ck_assert_str_eq(cur, "");
}
END_TEST

/* The store publishes without a lock file (its caller locks) and creates
 * the fabric directory when the caller's lock did not. */
START_TEST(test_store_publish_without_flock)
{
	struct bot_state s, l;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], got[BOT_STATE_NAME_MAX];
	char path[160];
	struct stat st;

	ck_assert_int_eq(bot_state_init(&s, "fresh"), 0);
	s.rounds = 3;
	ck_assert_msg(bot_store_publish(state, &s, snap, err, sizeof(err)) == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/fresh/.lock", state);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(bot_store_load(state, "fresh", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, snap);
	ck_assert_uint_eq(l.rounds, 3);
	bot_state_free(&l);
	bot_state_free(&s);
	/* no fabric directory: open without create says so, apart from errors */
	ck_assert_int_eq(bot_fabricdir_open(state, "none", 0, NULL, err, sizeof(err)), -2);
	ck_assert_int_eq(bot_fabricdir_open(state, "Bad/Name", 0, NULL, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "fabric name 'Bad/Name'"), "%s", err);
}
END_TEST

/* root making a fabric in a state directory another user owns gives the
 * fabric's directory to that user; the user, swapping the state directory
 * for a symbolic link meanwhile (another process, RENAME_EXCHANGE in a
 * loop), must never get a directory root made elsewhere: by path, root's
 * stat saw the user's directory and its mkdir the link's target, and about
 * one in four opens gave the user a directory in the target (until
 * 2026-12-05). Root only (the chown). */
START_TEST(test_fabricdir_owner_swap)
{
#ifdef SYS_renameat2
	char top[160], sd[200], lk[200], tg[200], fab[32], path[260], err[BOT_STATE_ERR_MAX];
	unsigned stolen = 0;
	struct stat st;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		return;
	snprintf(top, sizeof(top), "%s/swap", dir);
	snprintf(sd, sizeof(sd), "%s/st", top);
	snprintf(lk, sizeof(lk), "%s/st2", top);
	snprintf(tg, sizeof(tg), "%s/target", top);
	ck_assert_int_eq(mkdir(top, 0755), 0);
	ck_assert_int_eq(mkdir(sd, 0755), 0);
	ck_assert_int_eq(mkdir(tg, 0755), 0);
	ck_assert_int_eq(symlink(tg, lk), 0);
	ck_assert_int_eq(chown(sd, 65534, 65534), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (;;)
			if (syscall(SYS_renameat2, AT_FDCWD, sd, AT_FDCWD, lk, 2 /* RENAME_EXCHANGE */) < 0)
				_exit(1);
	}
	for (int i = 0; i < 1000; i++) {
		int fd;

		snprintf(fab, sizeof(fab), "f%d", i);
		fd = bot_fabricdir_open(sd, fab, 1, NULL, err, sizeof(err));
		if (fd >= 0)
			close(fd);
	}
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/* the swapper ran throughout: a filesystem without RENAME_EXCHANGE
	 * failed its first exchange, and nothing was tested (said, not
	 * passed silently) */
	if (!WIFSIGNALED(status)) {
		fprintf(stderr, "test_fabricdir_owner_swap: skipped: renameat2(RENAME_EXCHANGE) "
			"fails in %s\n", top);
		return;
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "%s/f%d", tg, i);
		if (lstat(path, &st) == 0 && st.st_uid != 0)
			stolen++;
	}
	ck_assert_msg(stolen == 0, "%u directories made outside the state directory were given "
		      "to its owner", stolen);
#endif
}
END_TEST

/* ---- the environment for a step -------------------------------------------- */

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif

#define THEIR_TUNER "/opt/theirs/libnccl-tuner-theirs.so"
#define THEIR_PROFILER "/opt/theirs/libnccl-profiler-inspector.so"

static struct bot_table decoded;

/* Build with the library, the user's variables and who wins; 0 expected. */
static void build(struct bot_stepenv_req *req, const char *tuner, const char *profiler,
		  enum bot_stepenv_who who, struct bot_stepenv *env)
{
	req->lib = BOT_TUNER_SO;
	req->user_tuner = tuner;
	req->user_profiler = profiler;
	req->who = who;
	logged[0] = 0;
	ck_assert_msg(bot_stepenv_build(req, env, &test_log) == 0, "%s", logged);
}

/* The table of env, decoded into `decoded`. */
static const struct bot_table *table_of(const struct bot_stepenv *env)
{
	const char *text = bot_stepenv_get(env, "NCCL_BOT_TABLE");

	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(strncmp(text, "NBT3.", 5), 0);
	ck_assert_int_eq(bot_table_decode(text, strlen(text), &decoded), BOT_TABLE_OK);
	return &decoded;
}

static const char *lib_real(void)
{
	static char real[PATH_MAX];

	ck_assert_ptr_nonnull(realpath(BOT_TUNER_SO, real));
	return real;
}

/* Both variables name our library; the table lets ranks measure or not. */
static void ours(const struct bot_stepenv *env, int measured)
{
	ck_assert_int_eq(env->used, 1);
	ck_assert_uint_eq(env->nvars, 3);
	ck_assert_str_eq(env->var[0].name, "NCCL_TUNER_PLUGIN");
	ck_assert_str_eq(env->var[0].value, BOT_TUNER_SO);	/* as given */
	ck_assert_str_eq(env->var[1].name, "NCCL_PROFILER_PLUGIN");
	ck_assert_str_eq(env->var[1].value, BOT_TUNER_SO);
	ck_assert_str_eq(env->var[2].name, "NCCL_BOT_TABLE");
	ck_assert_int_eq(env->measured, measured);
	ck_assert_int_eq(!!(table_of(env)->flags & BOT_TABLE_F_MEASURE), measured);
}

START_TEST(test_stepenv_explicit_replaces_theirs)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	char link[128];

	bot_stepenv_req_default(&req);
	/* nobody else's plugin: ours, measuring, nothing said */
	build(&req, NULL, "", BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_str_eq(logged, "");
	ck_assert_str_eq(env.note, "");
	bot_stepenv_free(&env);
	/* their tuner: replaced, named */
	build(&req, THEIR_TUNER, NULL, BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_msg(strstr(logged, "warning: replacing the user's NCCL_TUNER_PLUGIN=" THEIR_TUNER
			     " with nccl-bot's "), "%s", logged);
	ck_assert_msg(!strstr(logged, "NCCL_PROFILER_PLUGIN"), "%s", logged);
	bot_stepenv_free(&env);
	/* their profiler only: replaced, named; we measure */
	build(&req, NULL, THEIR_PROFILER, BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_msg(strstr(logged, "warning: replacing the user's NCCL_PROFILER_PLUGIN="
			     THEIR_PROFILER), "%s", logged);
	ck_assert_msg(!strstr(logged, "NCCL_TUNER_PLUGIN"), "%s", logged);
	bot_stepenv_free(&env);
	/* both */
	build(&req, THEIR_TUNER, THEIR_PROFILER, BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_msg(strstr(logged, "NCCL_TUNER_PLUGIN=" THEIR_TUNER) &&
		      strstr(logged, "NCCL_PROFILER_PLUGIN=" THEIR_PROFILER), "%s", logged);
	bot_stepenv_free(&env);
	/* variables naming our library, or a link to it, are not theirs */
	snprintf(link, sizeof(link), "%s/libnccl-profiler-bot.so", dir);
	ck_assert_int_eq(symlink(lib_real(), link), 0);
	build(&req, BOT_TUNER_SO, link, BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_str_eq(logged, "");
	bot_stepenv_free(&env);
}
END_TEST

START_TEST(test_stepenv_admin_default_keeps_theirs)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	char link[128];

	bot_stepenv_req_default(&req);
	/* nobody else's plugin: ours */
	build(&req, NULL, NULL, BOT_STEPENV_DEFAULT, &env);
	ours(&env, 1);
	ck_assert_str_eq(logged, "");
	bot_stepenv_free(&env);

	/* their tuner: nccl-bot is not used at all, and says so; our library
	 * is not even looked at */
	req.lib = "/nonexistent/libnccl-tuner-bot.so";
	req.user_tuner = THEIR_TUNER;
	req.user_profiler = NULL;
	req.who = BOT_STEPENV_DEFAULT;
	logged[0] = 0;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), 0);
	ck_assert_int_eq(env.used, 0);
	ck_assert_uint_eq(env.nvars, 0);
	ck_assert_ptr_null(bot_stepenv_get(&env, "NCCL_BOT_TABLE"));
	ck_assert_str_eq(env.note, "nccl-bot not used: the tuner plugin is the user's " THEIR_TUNER);
	ck_assert_msg(strstr(logged, "info: keeping the user's NCCL_TUNER_PLUGIN=" THEIR_TUNER
			     ": nccl-bot is not used for this step"), "%s", logged);
	bot_stepenv_free(&env);
	/* their tuner and profiler: the same, both named */
	build(&req, THEIR_TUNER, THEIR_PROFILER, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 0);
	ck_assert_uint_eq(env.nvars, 0);
	ck_assert_msg(strstr(logged, "NCCL_PROFILER_PLUGIN=" THEIR_PROFILER), "%s", logged);
	bot_stepenv_free(&env);

	/* their profiler only: our tuner decides, their profiler stays, the
	 * table forbids measuring, and the note says why for the report */
	build(&req, NULL, THEIR_PROFILER, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 1);
	ck_assert_uint_eq(env.nvars, 3);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_TUNER_PLUGIN"), BOT_TUNER_SO);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_PROFILER_PLUGIN"), THEIR_PROFILER);
	ck_assert_int_eq(env.measured, 0);
	ck_assert_uint_eq(table_of(&env)->flags & BOT_TABLE_F_MEASURE, 0);
	ck_assert_str_eq(env.note, "nothing measured: the profiler plugin is the user's "
		THEIR_PROFILER);
	ck_assert_msg(strstr(logged, "info: keeping the user's NCCL_PROFILER_PLUGIN="
			     THEIR_PROFILER ": nccl-bot's tuner decides, nothing is measured"),
		      "%s", logged);
	bot_stepenv_free(&env);
	/* the same with our tuner named explicitly by the user */
	build(&req, BOT_TUNER_SO, THEIR_PROFILER, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 1);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_PROFILER_PLUGIN"), THEIR_PROFILER);
	ck_assert_uint_eq(table_of(&env)->flags & BOT_TABLE_F_MEASURE, 0);
	bot_stepenv_free(&env);
	/* a profiler variable naming a link to our library is ours */
	snprintf(link, sizeof(link), "%s/libnccl-profiler-bot.so", dir);
	ck_assert_int_eq(symlink(lib_real(), link), 0);
	build(&req, NULL, link, BOT_STEPENV_DEFAULT, &env);
	ours(&env, 1);
	ck_assert_str_eq(env.note, "");
	bot_stepenv_free(&env);
}
END_TEST

/* The table says what the request says. */
START_TEST(test_stepenv_prior_table)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	const struct bot_table *t;

	bot_stepenv_req_default(&req);
	req.policy = BOT_POLICY_SHADOW;
	req.seed = 0x1234567890abcdefULL;
	req.min_bytes_log2 = 16;
	req.allow = 1u << bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	req.measure = 0;
	build(&req, NULL, NULL, BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 0);
	t = table_of(&env);
	ck_assert_uint_eq(t->policy, BOT_POLICY_SHADOW);
	ck_assert(t->seed == 0x1234567890abcdefULL);
	ck_assert_uint_eq(t->min_bytes_log2, 16);
	ck_assert_uint_eq(t->allow, req.allow);
	ck_assert_uint_eq(t->flags, BOT_TABLE_F_SHADOW);
	ck_assert_uint_eq(t->nentries, 0);
	bot_stepenv_free(&env);
}
END_TEST

/* Spool files and a fabric's state plan the same table for the same job. */
START_TEST(test_stepenv_spool_and_state)
{
	struct bot_stepenv_req req;
	struct bot_stepenv a, b, c;
	struct bot_merge_result res;
	char path[128], snap[256];
	const char *spools[] = { path };

	write_job(1);
	job_path(1, path, sizeof(path));
	bot_stepenv_req_default(&req);
	req.policy = BOT_POLICY_GREEDY;
	req.source = BOT_STEPENV_SPOOL;
	req.spool = spools;
	req.nspool = 1;
	build(&req, NULL, NULL, BOT_STEPENV_EXPLICIT, &a);
	ck_assert_uint_eq(a.compile.files, 2);
	ck_assert_uint_eq(a.compile.collectives, 8);
	ck_assert_uint_eq(a.compile.round, 1);
	/* greedy on ring/simple measured faster than AUTO's ring/ll: an entry */
	ck_assert_uint_eq(table_of(&a)->nentries, 1);

	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	req.source = BOT_STEPENV_STATE;
	req.spool = NULL;
	req.nspool = 0;
	req.state = state;
	req.fabric = FABRIC;
	build(&req, NULL, NULL, BOT_STEPENV_EXPLICIT, &b);
	ck_assert_str_eq(b.fabric, FABRIC);
	ck_assert_str_eq(b.snapshot, res.snapshot);
	ck_assert_uint_eq(b.sources, 2);
	ck_assert_str_eq(bot_stepenv_get(&a, "NCCL_BOT_TABLE"), bot_stepenv_get(&b, "NCCL_BOT_TABLE"));
	/* the snapshot file itself, its fabric checked */
	snprintf(snap, sizeof(snap), "%s/%s/%s", state, FABRIC, res.snapshot);
	req.state = snap;
	build(&req, NULL, NULL, BOT_STEPENV_EXPLICIT, &c);
	ck_assert_str_eq(bot_stepenv_get(&a, "NCCL_BOT_TABLE"), bot_stepenv_get(&c, "NCCL_BOT_TABLE"));
	ck_assert_str_eq(c.snapshot, "");
	bot_stepenv_free(&c);
	req.fabric = "roce";
	logged[0] = 0;
	ck_assert_int_eq(bot_stepenv_build(&req, &c, &test_log), -1);
	ck_assert_msg(strstr(logged, "holds fabric '" FABRIC "', not 'roce'"), "%s", logged);
	/* a fabric without state yet: a table without entries, said */
	req.state = state;
	build(&req, NULL, NULL, BOT_STEPENV_EXPLICIT, &c);
	ck_assert_msg(strstr(logged, "info: ") && strstr(logged, "/roce: no learned state yet"), "%s",
		      logged);
	ck_assert_uint_eq(table_of(&c)->nentries, 0);
	ck_assert_str_eq(c.snapshot, "");
	bot_stepenv_free(&c);
	bot_stepenv_free(&b);
	bot_stepenv_free(&a);
}
END_TEST

START_TEST(test_stepenv_refusals)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	const char *spools[] = { "/nonexistent/spool" };

	bot_stepenv_req_default(&req);
	/* the rank library check, with the path and the reason */
	req.lib = "/dev/null";
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -1);
	ck_assert_msg(strstr(logged, "error: the rank-side library /dev/null: a character device"),
		      "%s", logged);
	ck_assert_uint_eq(env.nvars, 0);
	req.lib = "tuner/libnccl-tuner-bot.so";
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -1);
	ck_assert_msg(strstr(logged, "not an absolute path"), "%s", logged);
	req.lib = dir;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -1);
	ck_assert_msg(strstr(logged, "a directory, not a shared library"), "%s", logged);
	/* an explicit request checks the library even when the user has a tuner */
	req.user_tuner = THEIR_TUNER;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -1);
	req.user_tuner = NULL;
	/* a table that cannot be built: an error, no variables */
	req.lib = BOT_TUNER_SO;
	req.source = BOT_STEPENV_SPOOL;
	req.spool = spools;
	req.nspool = 1;
	logged[0] = 0;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -1);
	ck_assert_msg(strstr(logged, "/nonexistent/spool: No such file"), "%s", logged);
	ck_assert_uint_eq(env.nvars, 0);
	ck_assert_int_eq(env.used, 0);
	/* requests that do not hang together: -2 */
	req.nspool = 0;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);
	req.source = BOT_STEPENV_PRIOR;
	req.nspool = 1;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);
	req.nspool = 0;
	req.source = BOT_STEPENV_STATE;
	req.state = state;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);	/* a directory: which fabric? */
	req.fabric = "Bad/Name";
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);
	req.fabric = FABRIC;
	req.comms = 0;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);
	req.comms = 8;
	req.lib = NULL;
	ck_assert_int_eq(bot_stepenv_build(&req, &env, &test_log), -2);
}
END_TEST


/* NCCL_TUNER_PLUGIN / NCCL_PROFILER_PLUGIN=none (any case): the user turned
 * NCCL's plugin off; not a plugin of the user's named "none". Nothing is
 * trimmed: " none" is a name NCCL would dlopen. */
START_TEST(test_stepenv_none)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;

	bot_stepenv_req_default(&req);
	/* admin default, profiler off: our tuner decides, nothing measured */
	build(&req, NULL, "none", BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 1);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_TUNER_PLUGIN"), BOT_TUNER_SO);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_PROFILER_PLUGIN"), "none");
	ck_assert_int_eq(env.measured, 0);
	ck_assert_uint_eq(table_of(&env)->flags & BOT_TABLE_F_MEASURE, 0);
	ck_assert_str_eq(env.note, "nothing measured: the user turned NCCL's profiler off "
		"(NCCL_PROFILER_PLUGIN=none)");
	ck_assert_msg(!strstr(logged, "user's none"), "%s", logged);
	bot_stepenv_free(&env);
	build(&req, NULL, "NONE", BOT_STEPENV_DEFAULT, &env);
	ck_assert_str_eq(env.note, "nothing measured: the user turned NCCL's profiler off "
		"(NCCL_PROFILER_PLUGIN=NONE)");
	bot_stepenv_free(&env);
	/* admin default, tuner off: nccl-bot not used, and why */
	build(&req, "None", NULL, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 0);
	ck_assert_uint_eq(env.nvars, 0);
	ck_assert_str_eq(env.note, "nccl-bot not used: the user turned NCCL's tuner plugin off "
		"(NCCL_TUNER_PLUGIN=None)");
	ck_assert_msg(strstr(logged, "info: keeping the user's NCCL_TUNER_PLUGIN=None (NCCL's "
			     "tuner plugin turned off): nccl-bot is not used"), "%s", logged);
	bot_stepenv_free(&env);
	/* an explicit request: ours replace them, the warning says they were off */
	build(&req, "none", "nOnE", BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_msg(strstr(logged, "warning: replacing the user's NCCL_TUNER_PLUGIN=none (the "
			     "user had turned NCCL's tuner plugin off) with nccl-bot's "
			     BOT_TUNER_SO) &&
		      strstr(logged, "warning: replacing the user's NCCL_PROFILER_PLUGIN=nOnE (the "
			     "user had turned NCCL's profiler plugin off)"), "%s", logged);
	bot_stepenv_free(&env);
	/* " none" is a file name to NCCL: a plugin of the user's */
	build(&req, " none", NULL, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 0);
	ck_assert_str_eq(env.note, "nccl-bot not used: the tuner plugin is the user's  none");
	bot_stepenv_free(&env);
}
END_TEST

/* Relative names are the user's, even ones NCCL may resolve to our file:
 * where its dlopen search leads on a rank is not known here. */
START_TEST(test_stepenv_relative_names_theirs)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;

	bot_stepenv_req_default(&req);
	build(&req, "libnccl-tuner-bot.so", NULL, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 0);
	bot_stepenv_free(&env);
	build(&req, "bot", NULL, BOT_STEPENV_DEFAULT, &env);
	ck_assert_int_eq(env.used, 0);
	ck_assert_str_eq(env.note, "nccl-bot not used: the tuner plugin is the user's bot");
	bot_stepenv_free(&env);
	build(&req, NULL, "bot", BOT_STEPENV_EXPLICIT, &env);
	ours(&env, 1);
	ck_assert_msg(strstr(logged, "replacing the user's NCCL_PROFILER_PLUGIN=bot"), "%s",
		      logged);
	bot_stepenv_free(&env);
}
END_TEST

/* /opt/nccl-bot a link to site storage: the variables name the path as
 * given (a container binding only /opt/nccl-bot/<version> opens it), and a
 * user's variable naming the resolved file is still ours. */
START_TEST(test_stepenv_lib_path_kept)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	char tdir[PATH_MAX], link[PATH_MAX], lib[PATH_MAX + 64], want[PATH_MAX + 64];

	snprintf(tdir, sizeof(tdir), "%s", lib_real());
	*strrchr(tdir, '/') = 0;
	snprintf(link, sizeof(link), "%s/opt", dir);
	ck_assert_int_eq(symlink(tdir, link), 0);
	snprintf(lib, sizeof(lib), "%s//opt/./libnccl-tuner-bot.so", dir);
	snprintf(want, sizeof(want), "%s/opt/libnccl-tuner-bot.so", dir);
	bot_stepenv_req_default(&req);
	req.user_tuner = lib_real();
	req.user_profiler = NULL;
	req.who = BOT_STEPENV_DEFAULT;
	req.lib = lib;
	logged[0] = 0;
	ck_assert_msg(bot_stepenv_build(&req, &env, &test_log) == 0, "%s", logged);
	ck_assert_int_eq(env.used, 1);
	ck_assert_str_eq(env.lib, want);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_TUNER_PLUGIN"), want);
	ck_assert_str_eq(bot_stepenv_get(&env, "NCCL_PROFILER_PLUGIN"), want);
	ck_assert_str_eq(logged, "");
	bot_stepenv_free(&env);
}
END_TEST

/* A user's value with control characters stays on one line in messages
 * and in the note. */
START_TEST(test_stepenv_values_escaped)
{
	struct bot_stepenv_req req;
	struct bot_stepenv env;

	bot_stepenv_req_default(&req);
	build(&req, "/opt/x\n/evil", NULL, BOT_STEPENV_DEFAULT, &env);
	ck_assert_str_eq(env.note, "nccl-bot not used: the tuner plugin is the user's "
		"/opt/x\\x0a/evil");
	ck_assert_msg(strstr(logged, "NCCL_TUNER_PLUGIN=/opt/x\\x0a/evil: nccl-bot is not used"),
		      "%s", logged);
	bot_stepenv_free(&env);
}
END_TEST

/* ---- spool files to a sweep ---------------------------------------------- */

START_TEST(test_spoolsweep)
{
	struct bot_spoolsweep_report rep;
	struct bot_sweep sw;
	char path[160];
	const char *paths[] = { path, "/nonexistent/nb" };
	int ll = bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);

	write_job(1);
	job_path(1, path, sizeof(path));
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_spoolsweep(paths, 1, "f1", &sw, &rep, &test_log), 0);
	ck_assert_uint_eq(rep.files, 2);
	ck_assert_uint_eq(rep.bad, 0);
	ck_assert_uint_eq(rep.rows, 16);	/* every clean sample of both ranks */
	ck_assert_uint_eq(rep.summaries, 2);
	ck_assert_uint_eq(sw.nrows, 16);
	for (size_t i = 0; i < sw.nrows; i++) {
		int arm = bot_arm(sw.rows[i].algo, sw.rows[i].proto);

		ck_assert_str_eq(sw.fabrics[sw.rows[i].fabric], "f1");
		ck_assert(sw.rows[i].auto_us == (arm == ll ? 100.0 : 120.0));
	}
	/* a bad file and a missing path: named, counted, the rest converted */
	snprintf(path, sizeof(path), "%s/job1/nb-1-9.spool", dir);
	write_file(path, "not a spool file\n", 17);
	job_path(1, path, sizeof(path));
	logged[0] = 0;
	ck_assert_int_eq(bot_spoolsweep(paths, 2, "f1", &sw, &rep, &test_log), 0);
	ck_assert_uint_eq(rep.bad, 2);
	ck_assert_uint_eq(rep.rows, 16);
	ck_assert_uint_eq(sw.nrows, 32);
	ck_assert_msg(strstr(logged, "nb-1-9.spool: ") && strstr(logged, "/nonexistent/nb: "), "%s",
		      logged);
	ck_assert_int_eq(bot_spoolsweep(paths, 1, "Bad/Name", &sw, &rep, &test_log), -2);
	bot_sweep_free(&sw);
}
END_TEST


/* ---- what a job directory may hold that is no spool file ------------------- */

/* A FIFO, a directory and a symbolic link named *.spool are refused with
 * their reason, never waited on (the fabric lock is held meanwhile): the job
 * is not whole; partial merges the regular files. */
START_TEST(test_merge_refuses_odd_entries)
{
	struct bot_merge_result res;
	char path[160], cur[64];

	write_job(1);
	snprintf(path, sizeof(path), "%s/job1/nb-1-7.spool", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_uint_eq(res.files, 3);
	ck_assert_uint_eq(res.rejected, 1);
	ck_assert_msg(strstr(logged, "nb-1-7.spool: a FIFO, not a spool file"), "%s", logged);
	current(cur);
	ck_assert_str_eq(cur, "");
	unlink(path);

	ck_assert_int_eq(mkdir(path, 0755), 0);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_msg(strstr(logged, "nb-1-7.spool: a directory, not a spool file"), "%s", logged);
	rmdir(path);

	snprintf(cur, sizeof(cur), "nb-1-0.spool");
	ck_assert_int_eq(symlink(cur, path), 0);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_msg(strstr(logged, "nb-1-7.spool: a symbolic link, not a spool file"), "%s",
		      logged);
	/* partial: the two regular files */
	ck_assert_int_eq(merge(1, 1, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_uint_eq(res.merged, 2);
}
END_TEST

/* Named one by one, the same: a FIFO, a device and a link as given. */
START_TEST(test_explicit_odd_paths_refused)
{
	struct bot_compile_paths list;
	struct bot_spool_file f;
	char fifo[160], link[160], good[160], err[512];
	const char *paths[] = { fifo, "/dev/null", link, good };

	write_job(1);
	snprintf(fifo, sizeof(fifo), "%s/x.spool", dir);
	snprintf(link, sizeof(link), "%s/l.spool", dir);
	snprintf(good, sizeof(good), "%s/job1/nb-1-0.spool", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink(good, link), 0);
	ck_assert_msg(bot_compile_list(paths, 4, &list, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(list.n, 4);
	ck_assert_int_eq(bot_compile_read_file(&list, 0, &f, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "x.spool: a FIFO, not a spool file"), "%s", err);
	ck_assert_int_eq(bot_compile_read_file(&list, 1, &f, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/dev/null: a character device, not a spool file");
	ck_assert_int_eq(bot_compile_read_file(&list, 2, &f, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "l.spool: a symbolic link"), "%s", err);
	ck_assert_msg(bot_compile_read_file(&list, 3, &f, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(f.hdr.nrecords, 9);
	bot_spool_free(&f);
	bot_compile_paths_free(&list);
}
END_TEST

/* A job whose every new file fails validation is refused, not "nothing new"
 * (a compactor would acknowledge it); partial says nothing new. */
START_TEST(test_merge_all_rejected_refused)
{
	struct bot_merge_result res;
	char path[160], cur[64];

	snprintf(path, sizeof(path), "%s/job1", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/job1/nb-1-0.spool", dir);
	write_file(path, "not a spool file\n", 17);
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_uint_eq(res.files, 1);
	ck_assert_uint_eq(res.rejected, 1);
	ck_assert_msg(strstr(logged, "error: " FABRIC ": of this job's 1 spool file(s), 1 failed "
			     "validation (rejected, named above) and none is new; nothing merged"), "%s", logged);
	ck_assert_int_eq(merge(1, 1, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_NOTHING_NEW);
	current(cur);
	ck_assert_str_eq(cur, "");

	/* merged before, and a new file that is bad: refused too */
	unlink(path);
	write_job(1);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	snprintf(path, sizeof(path), "%s/job1/nb-1-9.spool", dir);
	write_file(path, "not a spool file\n", 17);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_REFUSED);
	ck_assert_uint_eq(res.merged_before, 2);
	ck_assert_msg(strstr(logged, "none is new (2 merged before)"), "%s", logged);
}
END_TEST

/* Paths without a single spool file are an error naming them. */
START_TEST(test_merge_no_files_is_an_error)
{
	struct bot_merge_result res;
	char path[160];

	snprintf(path, sizeof(path), "%s/job1", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_uint_eq(res.files, 0);
	ck_assert_msg(strstr(logged, "error: " FABRIC ": no spool files in ") &&
		      strstr(logged, "/job1 "), "%s", logged);
	/* ... and the state directory is not touched: no fabric directory
	 * (its lock) is left behind for a fabric that merged nothing */
	snprintf(path, sizeof(path), "%s/%s", state, FABRIC);
	ck_assert_msg(access(path, F_OK) != 0, "%s was made", path);
	/* misnamed files are not spool files either */
	snprintf(path, sizeof(path), "%s/job1/nb-1-0.spl", dir);
	write_file(path, "x", 1);
	logged[0] = 0;
	ck_assert_int_eq(merge(1, 1, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_msg(strstr(logged, "no spool files in "), "%s", logged);
}
END_TEST

/* A listing that fails part-way is an error, never a shorter job; a fabric
 * directory that cannot be listed is not one without snapshots. */
START_TEST(test_readdir_errors)
{
	struct bot_merge_result res;
	struct bot_compile_paths list;
	struct bot_state s;
	char path[160], err[BOT_STATE_ERR_MAX];
	const char *paths[] = { path };
	struct stat st;

	write_job(1);
	job_path(1, path, sizeof(path));
	readdir_fail = 1;
	readdir_left = 2;	/* ".", ".." or a file, then EIO */
	ck_assert_int_eq(bot_compile_list(paths, 1, &list, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/job1: cannot list the directory: Input/output error"), "%s",
		      err);
	ck_assert_uint_eq(list.n, 0);
	readdir_left = 3;
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_int_eq(res.outcome, BOT_MERGE_FAILED);
	ck_assert_msg(strstr(logged, "cannot list the directory"), "%s", logged);
	readdir_fail = 0;

	/* the failed listing came before the state was touched: no fabric
	 * directory; one without `current` (as a merge that failed later
	 * leaves it) is listed for snapshots */
	snprintf(path, sizeof(path), "%s/%s", state, FABRIC);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(mkdir(state, 0755) == 0 || errno == EEXIST, 1);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	readdir_fail = 1;
	readdir_left = 0;
	ck_assert_int_eq(bot_store_load(state, FABRIC, &s, NULL, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, FABRIC ": cannot list the directory: Input/output error"), "%s",
		      err);
	readdir_fail = 0;
	ck_assert_int_eq(bot_store_load(state, FABRIC, &s, NULL, err, sizeof(err)), 1);
	bot_state_free(&s);
}
END_TEST

/* Published state is readable by every user, whatever the writer's umask. */
START_TEST(test_publish_under_umask_077)
{
	struct bot_merge_result res;
	char path[192];
	struct stat st;
	mode_t old = umask(077);

	write_job(1);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	umask(old);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	snprintf(path, sizeof(path), "%s/%s", state, FABRIC);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	snprintf(path, sizeof(path), "%s/%s/current", state, FABRIC);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	snprintf(path, sizeof(path), "%s/%s/%s", state, FABRIC, res.snapshot);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
}
END_TEST

/* A rename that fails names both names; the temporary is gone. A `current`
 * that is not a regular file stops a publish before anything is written. */
START_TEST(test_publish_rename_failure_named)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], next[BOT_STATE_NAME_MAX];
	char path[192], want[320];
	uint8_t *b;
	size_t n;
	struct stat st;

	ck_assert_int_eq(bot_state_init(&s, FABRIC), 0);
	ck_assert_msg(bot_store_publish(state, &s, snap, err, sizeof(err)) == 0, "%s", err);
	s.parent = bot_state_snap_digest(snap);
	s.rounds = 1;
	ck_assert_int_eq(bot_state_encode(&s, &b, &n, err, sizeof(err)), 0);
	bot_state_snap_name(b, n, next);
	free(b);
	snprintf(path, sizeof(path), "%s/%s/%s", state, FABRIC, next);
	ck_assert_int_eq(mkdir(path, 0755), 0);	/* the new name a directory: rename fails */
	snprintf(path, sizeof(path), "%s/%s/%s/x", state, FABRIC, next);
	write_file(path, "x", 1);
	ck_assert_int_eq(bot_store_publish(state, &s, snap, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot rename %s/%s/.%s.tmp to %s/%s/%s: ", state, FABRIC,
		 next, state, FABRIC, next);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	snprintf(path, sizeof(path), "%s/%s/.%s.tmp", state, FABRIC, next);
	ck_assert_int_eq(stat(path, &st), -1);
	/* `current` a directory */
	snprintf(path, sizeof(path), "%s/%s/current", state, FABRIC);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(bot_store_publish(state, &s, snap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "/current: not a regular file"), "%s", err);
	bot_state_free(&s);
}
END_TEST

/* A merge that would overflow a histogram bin halves that arm (formats.md
 * 12: one busy context never blocks a fabric), says so, and publishes. */
START_TEST(test_merge_bin_overflow_halves)
{
	struct bot_state s;
	struct bot_merge_result res;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], cur[64];
	uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES), NRANKS, NNODES);
	int ll = bot_arm(BOT_ALGO_RING, BOT_PROTO_LL), simple = bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
	int q = bot_q_from_ns(200000);
	const struct bot_stats *st;
	struct bot_kb_ctx *c;

	ck_assert_int_eq(bot_state_init(&s, FABRIC), 0);
	c = bot_kb_get(s.kb, key);
	ck_assert_ptr_nonnull(c);
	/* job 1's ring/ll collectives take 200 us after the minimum over ranks */
	ck_assert_int_eq(bot_stats_add_q(&c->arm[ll], q, UINT32_MAX - 1), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[ll], q - 100, 3), 0);
	ck_assert_msg(bot_store_publish(state, &s, snap, err, sizeof(err)) == 0, "%s", err);
	bot_state_free(&s);
	write_job(1);
	ck_assert_int_eq(merge(1, 0, NULL, &res), 0);
	ck_assert_int_eq(res.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_msg(strstr(logged, "warning: " FABRIC ": 1 arm histogram(s) would have passed "
			     "2^32-1"), "%s", logged);
	current(cur);
	ck_assert_str_eq(cur, res.snapshot);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &s, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.parent, bot_state_snap_digest(snap));
	st = &bot_kb_find(s.kb, key)->arm[ll];
	ck_assert_uint_eq(st->nbins, 2);
	ck_assert_uint_eq(st->bins[0].count, 1);	/* 3 >> 1 */
	ck_assert_uint_eq(st->bins[1].count, ((uint64_t)UINT32_MAX - 1 + 4) >> 1);
	ck_assert_uint_eq(bot_kb_find(s.kb, key)->arm[simple].n, 4);	/* not halved */
	bot_state_free(&s);
}
END_TEST

/* One line per message: control characters in a file name are escaped. */
START_TEST(test_messages_one_line)
{
	struct bot_merge_result res;
	char path[160];
	const char *p;

	write_job(1);
	snprintf(path, sizeof(path), "%s/job1/nb\n1\x1b[31m.spool", dir);
	write_file(path, "not a spool file\n", 17);
	ck_assert_int_eq(merge(1, 0, NULL, &res), -1);
	ck_assert_msg(strstr(logged, "nb\\x0a1\\x1b[31m.spool: truncated"), "%s", logged);
	/* no raw escape, and every line is a whole message ("level: ...") */
	ck_assert_msg(!strchr(logged, '\x1b'), "%s", logged);
	for (p = logged; *p; p = strchr(p, '\n') + 1)
		ck_assert_msg(!strncmp(p, "error: ", 7) || !strncmp(p, "warning: ", 9) ||
			      !strncmp(p, "info: ", 6), "a message over two lines: %s", logged);
	{
		char buf[64];

		bot_log_esc(buf, sizeof(buf), "a\tb\x7f");
		ck_assert_str_eq(buf, "a\\x09b\\x7f");
		bot_log_esc(buf, sizeof(buf), buf);	/* twice is once */
		ck_assert_str_eq(buf, "a\\x09b\\x7f");
		bot_log_esc(buf, 6, "ab\ncd");	/* an escape that does not fit is cut whole */
		ck_assert_str_eq(buf, "ab");
	}
}
END_TEST

/* spool sweep: a FIFO among the files is named and skipped, never waited on. */
START_TEST(test_spoolsweep_fifo)
{
	struct bot_spoolsweep_report rep;
	struct bot_sweep sw;
	char path[160];
	const char *paths[] = { path };

	write_job(1);
	snprintf(path, sizeof(path), "%s/job1/nb-1-5.spool", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	job_path(1, path, sizeof(path));
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_spoolsweep(paths, 1, "f1", &sw, &rep, &test_log), 0);
	ck_assert_uint_eq(rep.files, 3);
	ck_assert_uint_eq(rep.bad, 1);
	ck_assert_uint_eq(rep.rows, 16);
	ck_assert_msg(strstr(logged, "nb-1-5.spool: a FIFO, not a spool file"), "%s", logged);
	bot_sweep_free(&sw);
}
END_TEST

static Suite *learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *merge_tc = tcase_create("merge");
	TCase *env_tc = tcase_create("stepenv");
	TCase *sweep_tc = tcase_create("spoolsweep");

	tcase_add_checked_fixture(merge_tc, setup, teardown);
	tcase_add_test(merge_tc, test_merge_publishes_then_nothing_new);
	tcase_add_test(merge_tc, test_fabricdir_owner_swap);
	tcase_add_test(merge_tc, test_merge_order_independent);
	tcase_add_test(merge_tc, test_merge_job_whole_or_partial);
	tcase_add_test(merge_tc, test_merge_failures_publish_nothing);
	tcase_add_test(merge_tc, test_lock_try_while_held);
	tcase_add_test(merge_tc, test_merge_waits_for_the_lock);
	tcase_add_test(merge_tc, test_concurrent_merges_lose_nothing);
	tcase_add_test(merge_tc, test_first_merge_lock_fails);
	tcase_add_test(merge_tc, test_merge_with_its_own_lock);
	tcase_add_test(merge_tc, test_store_publish_without_flock);
	tcase_add_test(merge_tc, test_merge_refuses_odd_entries);
	tcase_add_test(merge_tc, test_explicit_odd_paths_refused);
	tcase_add_test(merge_tc, test_merge_all_rejected_refused);
	tcase_add_test(merge_tc, test_merge_no_files_is_an_error);
	tcase_add_test(merge_tc, test_readdir_errors);
	tcase_add_test(merge_tc, test_publish_under_umask_077);
	tcase_add_test(merge_tc, test_publish_rename_failure_named);
	tcase_add_test(merge_tc, test_merge_bin_overflow_halves);
	tcase_add_test(merge_tc, test_messages_one_line);
	suite_add_tcase(s, merge_tc);
	tcase_add_checked_fixture(env_tc, setup, teardown);
	tcase_add_test(env_tc, test_stepenv_explicit_replaces_theirs);
	tcase_add_test(env_tc, test_stepenv_admin_default_keeps_theirs);
	tcase_add_test(env_tc, test_stepenv_prior_table);
	tcase_add_test(env_tc, test_stepenv_spool_and_state);
	tcase_add_test(env_tc, test_stepenv_refusals);
	tcase_add_test(env_tc, test_stepenv_none);
	tcase_add_test(env_tc, test_stepenv_relative_names_theirs);
	tcase_add_test(env_tc, test_stepenv_lib_path_kept);
	tcase_add_test(env_tc, test_stepenv_values_escaped);
	suite_add_tcase(s, env_tc);
	tcase_add_checked_fixture(sweep_tc, setup, teardown);
	tcase_add_test(sweep_tc, test_spoolsweep);
	tcase_add_test(sweep_tc, test_spoolsweep_fifo);
	suite_add_tcase(s, sweep_tc);
	return s;
}

BOT_TEST_MAIN(learn_suite)
