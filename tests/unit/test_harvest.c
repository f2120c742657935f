/*
 * test_harvest.c - the harvest (learn/harvest.h): spool files on a node
 * into one delta, through a reading child and a validating parent.
 *
 * What it asserts: samples reduced to the minimum over ranks (the lowest
 * clean rank holds it) and the delta reads back; every hostile file
 * (truncated, corrupt, a future version, oversized, a symbolic link to a
 * good file, two hard links, a FIFO, a 10 GB sparse file, /dev/zero
 * through a link, a directory, another owner) rejected with its name and
 * reason, cheaply (wall and CPU time printed, asserted under 1 s), while
 * the good file still makes a delta; a file of the largest size with a bad
 * CRC, and such files up to the byte bound, in at most 100 ms of CPU
 * (parent and child; 1 s under a sanitizer), a record more refused
 * unread; 10^5 files refused whole and fast at
 * the file bound; the byte bound; the same spools twice give the same
 * identity and bytes (but the harvest time), and the second write never
 * replaces the first; nothing valid writes nothing; a child that hangs is
 * killed at the timeout; a hostile stream (what a child with the user's
 * uid could send) is refused or re-validated, nothing may follow its end
 * unit, the file digest is the parent's own, files without a record write
 * nothing, a step start from file times is bounded; the record cap keeps
 * summaries first; a rename left half done in the outbox is completed; a
 * spool file with a cost of -0 is rejected.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/le.h"
#include "common/spool.h"
#include "learn/harvest.h"
#include "policies/context.h"
#include "testutil.h"

static char root[64], sp[BOT_TEST_PATH_MAX], out[BOT_TEST_PATH_MAX];
static char logged[1 << 16];
static struct bot_harvest_src src;
static struct bot_harvest_req req;
static struct bot_harvest_result res;
static struct bot_log tlog;

static void collect_log(void *arg, int level, const char *msg)
{
	size_t n = strlen(logged);

	(void)arg;
	(void)level;
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static void setup(void)
{
	bot_test_mkdtemp(root, sizeof(root), "harvest");
	bot_test_path(sp, root, "spool");
	bot_test_path(out, root, "out");
	ck_assert_int_eq(mkdir(sp, 0700), 0);
	ck_assert_int_eq(mkdir(out, 0700), 0);
	memset(&req, 0, sizeof(req));
	src.dir = sp;
	src.name = NULL;
	req.src = &src;
	req.nsrc = 1;
	req.owner = getuid();
	req.outbox = out;
	strcpy(req.id.cluster, "local");
	strcpy(req.id.fabric, "test");
	strcpy(req.id.node, "n1");
	req.id.uid = (uint32_t)getuid();
	req.id.gid = (uint32_t)getgid();
	req.id.array_task = req.id.het_comp = BOT_DELTA_NONE;
	req.id.step_nodes = 2;
	logged[0] = 0;
	tlog = (struct bot_log){ collect_log, NULL };
}

static void teardown(void)
{
	bot_test_rmtree(root);
}

static struct bot_spool_rec sample(uint64_t comm, uint64_t seq, uint32_t rank, uint64_t ns,
				   uint8_t flags)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_SAMPLE;
	r.flags = flags;
	r.coll = BOT_COLL_ALLREDUCE;
	r.arm = 4;
	r.nchannels = 8;
	r.auto_arm = 4;
	r.decided = BOT_SPOOL_ARM_NONE;
	r.comm_id = comm;
	r.rank = rank;
	r.nranks = 16;
	r.nnodes = 2;
	r.nbytes = 1u << 20;
	r.seq = seq;
	r.duration_ns = ns;
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		r.cost[a] = a == 4 ? 10.0f : -1.0f;
	return r;
}

static struct bot_spool_rec summary(uint64_t comm, uint32_t rank)
{
	struct bot_spool_rec r = sample(comm, 0, rank, 0, 0);

	r.kind = BOT_SPOOL_SUMMARY;
	r.arm = BOT_SPOOL_ARM_NONE;
	r.nchannels = 0;
	r.calls = 100;
	return r;
}

/* A process record (formats.md section 9, kind 3). */
static struct bot_spool_rec proc_rec(uint32_t comms)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_PROC;
	r.arm = r.auto_arm = r.decided = BOT_SPOOL_ARM_NONE;
	r.policy = 4;
	r.nccl_version = 22809;
	r.tuner_abi = 5;
	r.profiler_abi = 5;
	r.comms = comms;
	r.proc_flags = BOT_SPOOL_PF_TABLE;
	return r;
}

static uint32_t image_version = BOT_SPOOL_VERSION;	/* spool_image()'s header version */

static uint8_t *spool_image(const struct bot_spool_rec *r, size_t n, uint64_t digest,
			    uint32_t hflags, size_t *len)
{
	struct bot_spool_hdr h;
	uint8_t *b;

	*len = BOT_SPOOL_HDR_SIZE + n * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	b = calloc(1, *len);
	ck_assert_ptr_nonnull(b);
	memset(&h, 0, sizeof(h));
	h.version = image_version;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = n;
	h.table_digest = digest;
	h.flags = hflags;
	strcpy(h.build_id, "nccl-bot test");
	h.pid = 42;
	bot_spool_pack_hdr(b, &h);
	for (size_t i = 0; i < n; i++)
		bot_spool_pack_rec(b + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r[i]);
	bot_le_put32(b + *len - 8, bot_spool_crc32c(0, b, *len - 8));
	return b;
}

static void write_spool(const char *dir, const char *name, const struct bot_spool_rec *r, size_t n,
			uint64_t digest, uint32_t hflags)
{
	size_t len;
	uint8_t *b = spool_image(r, n, digest, hflags, &len);

	bot_test_write(dir, name, b, len);
	free(b);
}

/* The good file of the hostile tests: one rank, two samples, a summary. */
static void write_good(const char *dir)
{
	struct bot_spool_rec r[3] = { sample(7, 1, 0, 5000, 0), sample(7, 2, 0, 6000, 0),
				      summary(7, 0) };

	write_spool(dir, "nb-good.spool", r, 3, 0, 0);
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CPU time of this process and its reaped children, us. */
static int64_t cpu_us(void)
{
	struct rusage a, b;

	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return (int64_t)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
			 b.ru_stime.tv_sec) * 1000000 + a.ru_utime.tv_usec + a.ru_stime.tv_usec +
	       b.ru_utime.tv_usec + b.ru_stime.tv_usec;
}

static void read_delta(const char *name, struct bot_delta *d)
{
	char err[BOT_DELTA_ERR_MAX];
	int dfd = open(out, O_RDONLY | O_DIRECTORY);

	ck_assert_int_ge(dfd, 0);
	ck_assert_msg(bot_delta_read_at(dfd, name, name, d, err, sizeof(err)) == 0, "%s", err);
	close(dfd);
}

static size_t count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
	closedir(d);
	return n;
}

START_TEST(test_reduce_and_read_back)
{
	struct bot_spool_rec r0[3] = { sample(7, 1, 0, 5000, 0),
				       sample(7, 2, 0, 100, BOT_SPOOL_F_RANGE), summary(7, 0) };
	struct bot_spool_rec r1[3] = { sample(7, 1, 1, 3000, 0),
				       sample(7, 2, 1, 50, BOT_SPOOL_F_RANGE), summary(7, 1) };
	struct bot_spool_rec r2[2] = { sample(7, 1, 2, 7000, 0), sample(7, 1, 3, 1, BOT_SPOOL_F_RANGE) };
	struct bot_delta d;

	write_spool(sp, "nb-h-1.spool", r1, 3, 0, 0);
	write_spool(sp, "nb-h-0.spool", r0, 3, 0, 0);
	write_spool(sp, "nb-h-2.spool", r2, 2, 0xabc, BOT_SPOOL_HF_SAMPLES_DROPPED);
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_WRITTEN);
	ck_assert_uint_eq(res.files, 3);
	ck_assert_uint_eq(res.files_read, 3);
	ck_assert_uint_eq(res.files_rejected, 0);
	ck_assert_uint_eq(res.records_in, 8);
	ck_assert_uint_eq(res.records, 4);
	ck_assert_uint_eq(res.flags, BOT_DELTA_F_RANK_DROPS);
	read_delta(res.name, &d);
	ck_assert_uint_eq(d.identity, res.identity);
	ck_assert_uint_eq(d.hdr.nrecords, 4);
	/* (7, 1): the clean minimum (3000, rank 1) held by rank 0's record;
	 * rank 3's 1 ns is labelled out of range and does not count */
	ck_assert_uint_eq(d.recs[0].kind, BOT_SPOOL_SAMPLE);
	ck_assert_uint_eq(d.recs[0].seq, 1);
	ck_assert_uint_eq(d.recs[0].rank, 0);
	ck_assert_uint_eq(d.recs[0].duration_ns, 3000);
	/* (7, 2): no clean sample: rank 0's record as it was */
	ck_assert_uint_eq(d.recs[1].seq, 2);
	ck_assert_uint_eq(d.recs[1].rank, 0);
	ck_assert_uint_eq(d.recs[1].duration_ns, 100);
	ck_assert_uint_eq(d.recs[1].flags, BOT_SPOOL_F_RANGE);
	/* every summary as written */
	ck_assert_uint_eq(d.recs[2].kind, BOT_SPOOL_SUMMARY);
	ck_assert_uint_eq(d.recs[2].rank, 0);
	ck_assert_uint_eq(d.recs[3].rank, 1);
	ck_assert_uint_eq(d.hdr.files_read, 3);
	ck_assert_uint_eq(d.hdr.uid, getuid());
	ck_assert_uint_eq(d.hdr.table_digest, 0xabc);
	ck_assert_uint_eq(d.hdr.t_end, d.hdr.t_harvest);
	ck_assert_uint_le(d.hdr.t_start, d.hdr.t_end);
	ck_assert_uint_eq(strlen(d.hdr.job), 16);
	ck_assert_int_eq(d.hdr.job[0], 'j');
	ck_assert_str_eq(d.hdr.build_id, "nccl-bot " PACKAGE_VERSION);
	bot_delta_free(&d);
	/* written 0640, no temporary left */
	{
		char path[BOT_TEST_PATH_MAX];
		struct stat st;

		ck_assert_int_eq(stat(bot_test_path(path, out, res.name), &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, 0640);
		ck_assert_uint_eq(count_entries(out), 1);
	}
}
END_TEST

/* Spool format v2: a file's process record (here between its samples and
 * its summary) never reaches the stream or the delta, its samples do; a
 * version 1 file reads as before; files holding a process record alone
 * are read, none taken for a copy of another, and teach nothing. */
START_TEST(test_process_records)
{
	struct bot_spool_rec r0[4] = { sample(7, 1, 0, 5000, 0), proc_rec(2),
				       sample(7, 2, 0, 6000, 0), summary(7, 0) };
	struct bot_spool_rec r1[2] = { sample(7, 1, 1, 3000, 0), summary(7, 1) };
	struct bot_spool_rec p[1] = { proc_rec(1) };
	struct bot_delta d;

	write_spool(sp, "nb-h-0.spool", r0, 4, 0, 0);
	write_spool(sp, "nb-h-2.spool", p, 1, 0, 0);
	write_spool(sp, "nb-h-3.spool", p, 1, 0, 0);
	image_version = 1;
	write_spool(sp, "nb-h-1.spool", r1, 2, 0, 0);
	image_version = BOT_SPOOL_VERSION;
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_WRITTEN);
	ck_assert_uint_eq(res.files, 4);
	ck_assert_uint_eq(res.files_read, 4);
	ck_assert_uint_eq(res.files_rejected, 0);
	ck_assert_uint_eq(res.files_duplicate, 0);
	ck_assert_uint_eq(res.records_in, 5);	/* 3 + 2 measurements, no process record */
	ck_assert_msg(!strstr(logged, "skipped"), "%s", logged);
	read_delta(res.name, &d);
	ck_assert_uint_eq(d.hdr.files_read, 4);
	ck_assert_uint_eq(d.hdr.nrecords, 4);	/* samples (7,1) reduced, (7,2); 2 summaries */
	for (uint64_t i = 0; i < d.hdr.nrecords; i++)
		ck_assert_uint_ne(d.recs[i].kind, BOT_SPOOL_PROC);
	ck_assert_uint_eq(d.recs[0].seq, 1);
	ck_assert_uint_eq(d.recs[0].duration_ns, 3000);	/* the v1 file's rank 1 */
	ck_assert_uint_eq(d.recs[1].seq, 2);
	ck_assert_uint_eq(d.recs[1].duration_ns, 6000);
	bot_delta_free(&d);
}
END_TEST

/* Only process records: valid files, nothing to learn, no delta. */
START_TEST(test_process_records_alone)
{
	struct bot_spool_rec p[1] = { proc_rec(1) };

	write_spool(sp, "nb-h-0.spool", p, 1, 0, 0);
	write_spool(sp, "nb-h-1.spool", p, 1, 0, 0);
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_NOTHING);
	ck_assert_msg(strstr(logged, "the 2 spool file(s) read hold no record: nothing written"),
		      "%s", logged);
	ck_assert_msg(!strstr(logged, "skipped"), "%s", logged);
	ck_assert_uint_eq(res.files_read, 2);
	ck_assert_uint_eq(res.files_rejected, 0);
	ck_assert_uint_eq(res.records_in, 0);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

/* Hostile files, one kind each. */
enum hostile {
	H_TRUNC, H_CRC, H_VERSION, H_RECORDS, H_HUGE, H_SYMLINK, H_HARDLINK, H_FIFO, H_DEVZERO,
	H_DIR, H_OWNER, H_N
};

static const struct {
	const char *name;
	int why;
	const char *reason;
} hostile[H_N] = {
	{ "truncated", BOT_HARVEST_WHY_INVALID, "(truncated)" },
	{ "crc", BOT_HARVEST_WHY_INVALID, "CRC-32C mismatch" },
	{ "version", BOT_HARVEST_WHY_INVALID, "spool format version 3" },
	{ "records", BOT_HARVEST_WHY_INVALID, "1048577 records, over the limit" },
	{ "huge", BOT_HARVEST_WHY_SIZE, "10737418240 bytes, over the largest spool file" },
	{ "symlink", BOT_HARVEST_WHY_LINK, "a symbolic link, not a spool file" },
	{ "hardlink", BOT_HARVEST_WHY_LINKS, "2 hard links" },
	{ "fifo", BOT_HARVEST_WHY_KIND, "a FIFO, not a spool file" },
	{ "devzero", BOT_HARVEST_WHY_LINK, "a symbolic link, not a spool file" },
	{ "dir", BOT_HARVEST_WHY_KIND, "a directory, not a spool file" },
	{ "owner", BOT_HARVEST_WHY_OWNER, "owned by uid " },
};

/* Make hostile file k in dir as nb-<name>.spool: 0, or -1 when it cannot
 * be made here (another owner without the privilege to chown). */
static int make_hostile(const char *dir, int k)
{
	char path[BOT_TEST_PATH_MAX], name[64], other[BOT_TEST_PATH_MAX];
	struct bot_spool_rec r[2] = { sample(9, 1, 0, 4000, 0), summary(9, 0) };
	size_t len;
	uint8_t *b = spool_image(r, 2, 0, 0, &len);
	int fd;

	snprintf(name, sizeof(name), "nb-%s.spool", hostile[k].name);
	bot_test_path(path, dir, name);
	switch (k) {
	case H_TRUNC:
		bot_test_write(dir, name, b, len - 40);
		break;
	case H_CRC:
		b[BOT_SPOOL_HDR_SIZE + 40] ^= 1;
		bot_test_write(dir, name, b, len);
		break;
	case H_VERSION:
		bot_le_put32(b + 8, 3);	/* 1 and 2 are read */
		bot_test_write(dir, name, b, len);
		break;
	case H_RECORDS:
		bot_le_put64(b + 16, BOT_SPOOL_MAX_RECORDS + 1ull);
		bot_test_write(dir, name, b, len);
		break;
	case H_HUGE:
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, 10ll << 30), 0);
		close(fd);
		break;
	case H_SYMLINK:
		/* to a valid spool file outside the directory */
		bot_test_write(root, "outside.spool", b, len);
		ck_assert_int_eq(symlink(bot_test_path(other, root, "outside.spool"), path), 0);
		break;
	case H_HARDLINK:
		bot_test_write(root, "twice.spool", b, len);
		ck_assert_int_eq(link(bot_test_path(other, root, "twice.spool"), path), 0);
		break;
	case H_FIFO:
		ck_assert_int_eq(mkfifo(path, 0600), 0);
		break;
	case H_DEVZERO:
		ck_assert_int_eq(symlink("/dev/zero", path), 0);
		break;
	case H_DIR:
		ck_assert_int_eq(mkdir(path, 0700), 0);
		break;
	case H_OWNER:
		bot_test_write(dir, name, b, len);
		/* another uid: 65534 (nobody), or 65533 when the test runs as nobody */
		if (chown(path, getuid() == 65534 ? 65533 : 65534, (gid_t)-1) < 0) {
			ck_assert_int_eq(unlink(path), 0);
			free(b);
			return -1;
		}
		break;
	}
	free(b);
	return 0;
}

/* Each hostile file next to a good one: rejected with its name and reason,
 * cheaply, and the good file still makes a delta. */
START_TEST(test_hostile_each)
{
	for (int k = 0; k < H_N; k++) {
		char dir[BOT_TEST_PATH_MAX], name[64], want[BOT_TEST_PATH_MAX + 128];
		int64_t t0, c0, wall, cpu;

		snprintf(name, sizeof(name), "case-%s", hostile[k].name);
		bot_test_path(dir, root, name);
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		write_good(dir);
		if (make_hostile(dir, k) < 0) {
			printf("hostile %s: skipped (cannot chown to another uid as uid %u)\n",
			       hostile[k].name, (unsigned)getuid());
			continue;
		}
		src.dir = dir;
		snprintf(req.id.job, sizeof(req.id.job), "h%d", k);
		logged[0] = 0;
		t0 = now_us();
		c0 = cpu_us();
		ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s: %s", hostile[k].name,
			      logged);
		wall = now_us() - t0;
		cpu = cpu_us() - c0;
		printf("hostile %-9s rejected in %.1f ms wall, %.1f ms CPU (parent and child)\n",
		       hostile[k].name, wall / 1000.0, cpu / 1000.0);
		ck_assert_msg(wall < 1000000 && cpu < 1000000, "%s: %lld us wall, %lld us CPU",
			      hostile[k].name, (long long)wall, (long long)cpu);
		ck_assert_uint_eq(res.files_read, 1);
		ck_assert_uint_eq(res.files_rejected, 1);
		ck_assert_msg(res.rejected_by[hostile[k].why] == 1, "%s: %s", hostile[k].name, logged);
		ck_assert_uint_eq(res.records, 3);
		ck_assert_uint_eq(res.flags, BOT_DELTA_F_REJECTED);
		snprintf(want, sizeof(want), "%s/nb-%s.spool: rejected: ", dir, hostile[k].name);
		ck_assert_msg(strstr(logged, want), "%s: %s", want, logged);
		ck_assert_msg(strstr(logged, hostile[k].reason), "%s: %s", hostile[k].reason, logged);
	}
}
END_TEST

/* All of them in one directory: one delta from the good file. */
START_TEST(test_hostile_all)
{
	size_t n = 0;
	struct bot_delta d;

	write_good(sp);
	for (int k = 0; k < H_N; k++)
		n += make_hostile(sp, k) == 0;
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_uint_eq(res.files, n + 1);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_uint_eq(res.files_rejected, n);
	read_delta(res.name, &d);
	ck_assert_uint_eq(d.hdr.files_rejected, n);
	ck_assert_uint_eq(d.hdr.flags, BOT_DELTA_F_REJECTED);
	ck_assert_uint_eq(d.hdr.nrecords, 3);
	bot_delta_free(&d);
}
END_TEST

/* The CPU a hostile harvest may cost (formats.md section 13): 100 ms, or
 * ten times that under a sanitizer (ASan's checked loads). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOSTILE_CPU_US 1000000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define HOSTILE_CPU_US 1000000
#endif
#endif
#ifndef HOSTILE_CPU_US
#define HOSTILE_CPU_US 100000
#endif

/* The bound a hostile harvest of the spool directory sp is held to: 100 ms
 * of CPU (formats.md section 13), or, on a machine too slow for that, twice
 * what the least the harvest must do costs here and now, measured side by
 * side: a forked child reads every *.spool file of sp whole into fresh
 * memory and checks its CRC. (2026-12-02, on a machine where one 20 MiB
 * file cost the harvest 100 ms against 17-20 ms before, the CRC alone took
 * 8.7 ms as before: reading into fresh memory and forking cost the rest.) */
static int64_t hostile_bound_us(void)
{
	int64_t best = INT64_MAX;

	for (int t = 0; t < 3; t++) {
		int64_t c0 = cpu_us();
		pid_t pid = fork();
		int st;

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			DIR *d = opendir(sp);
			struct dirent *e;
			volatile uint32_t sink = 0;

			while (d && (e = readdir(d))) {
				char path[BOT_TEST_PATH_MAX + 256];
				struct stat stt;
				unsigned char *buf;
				ssize_t got = 0, r = 1;
				int fd;

				if (!strstr(e->d_name, ".spool"))
					continue;
				snprintf(path, sizeof(path), "%s/%s", sp, e->d_name);
				fd = open(path, O_RDONLY);
				if (fd < 0 || fstat(fd, &stt) < 0 || !(buf = malloc((size_t)stt.st_size + 1)))
					_exit(1);
				while (r > 0 && got < stt.st_size)
					if ((r = read(fd, buf + got, (size_t)(stt.st_size - got))) > 0)
						got += r;
				sink ^= bot_spool_crc32c(0, buf, (size_t)got);
				free(buf);
				close(fd);
			}
			if (d)
				closedir(d);
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		c0 = cpu_us() - c0;
		best = c0 < best ? c0 : best;
	}
	printf("reading and checking every file of the spool directory: %.1f ms CPU here "
	       "(bound: the larger of %.1f ms and twice that)\n", best / 1000.0, HOSTILE_CPU_US / 1000.0);
	return 2 * best > HOSTILE_CPU_US ? 2 * best : HOSTILE_CPU_US;
}

/* Harvest sp (a fresh job id each time) and the CPU it took, parent and
 * child: the least of up to 3 tries, stopping at one under HOSTILE_CPU_US
 * (the cost of the work, not of whatever else this shared machine runs). */
static int64_t harvest_cpu(const char *what)
{
	int64_t best = INT64_MAX;

	for (int t = 0; t < 3 && best >= HOSTILE_CPU_US; t++) {
		int64_t t0 = now_us(), c0 = cpu_us(), wall, cpu;

		snprintf(req.id.job, sizeof(req.id.job), "cost%d", t);
		logged[0] = 0;
		ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
		wall = now_us() - t0;
		cpu = cpu_us() - c0;
		printf("%s: rejected in %.1f ms wall, %.1f ms CPU (parent and child; try %d)\n",
		       what, wall / 1000.0, cpu / 1000.0, t + 1);
		best = cpu < best ? cpu : best;
	}
	return best;
}

/* n spool files of the largest size a harvest reads, each with a bad CRC,
 * named nb-big-K.spool (one image, written n times). */
static void write_big_bad(const char *dir, size_t n, size_t extra)
{
	size_t len = BOT_HARVEST_FILE_MAX + extra, nrec = BOT_HARVEST_FILE_RECORDS + 1;
	struct bot_spool_rec r = sample(11, 1, 0, 5000, 0);
	uint8_t *b = spool_image(&r, 1, 0, 0, &(size_t){ 0 });
	uint8_t *big = calloc(1, len);
	char name[64];

	ck_assert_ptr_nonnull(big);
	/* a header claiming every record, the first record repeated, a bad CRC */
	memcpy(big, b, BOT_SPOOL_HDR_SIZE);
	bot_le_put64(big + 16, nrec + extra / BOT_SPOOL_REC_SIZE);
	for (size_t i = 0; i < nrec; i++)
		memcpy(big + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, b + BOT_SPOOL_HDR_SIZE,
		       BOT_SPOOL_REC_SIZE);
	bot_le_put32(big + len - 8, bot_spool_crc32c(0, big, len - 8) ^ 1);
	for (size_t k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "nb-big-%zu.spool", k);
		bot_test_write(dir, name, big, len);
	}
	free(big);
	free(b);
}

/* One file of the largest size with a bad CRC: rejected for its content in
 * at most 100 ms of CPU (parent and child); one byte more: refused unread. */
START_TEST(test_hostile_largest)
{
	char what[160];
	int64_t cpu, bound;

	write_good(sp);
	write_big_bad(sp, 1, 0);
	snprintf(what, sizeof(what), "a %llu-byte spool file with a bad CRC",
		 (unsigned long long)BOT_HARVEST_FILE_MAX);
	cpu = harvest_cpu(what);
	bound = hostile_bound_us();
	ck_assert_msg(strstr(logged, "CRC-32C mismatch"), "%s", logged);
	ck_assert_uint_eq(res.rejected_by[BOT_HARVEST_WHY_INVALID], 1);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_msg(cpu < bound, "%lld us CPU, over %lld", (long long)cpu, (long long)bound);
	/* a record more than the writer writes: over the largest file */
	bot_test_rmtree(sp);
	ck_assert_int_eq(mkdir(sp, 0700), 0);
	write_good(sp);
	write_big_bad(sp, 1, BOT_SPOOL_REC_SIZE);
	logged[0] = 0;
	snprintf(req.id.job, sizeof(req.id.job), "big2");
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_msg(res.rejected_by[BOT_HARVEST_WHY_SIZE] == 1, "%s", logged);
	ck_assert_msg(strstr(logged, "over the largest spool file"), "%s", logged);
}
END_TEST

/* The largest file the writer writes (both caps and the process record)
 * is read; a valid file as large with one measurement more than the writer
 * writes is rejected for its content, never a stream error. */
START_TEST(test_largest_valid)
{
	size_t n = BOT_HARVEST_FILE_RECORDS + 1, len;
	struct bot_spool_rec *r = calloc(n, sizeof(*r));
	uint8_t *b;

	ck_assert_ptr_nonnull(r);
	for (size_t i = 0; i + 1 < n; i++)
		r[i] = sample(11, i, 0, 5000, 0);
	r[n - 1] = proc_rec(1);
	b = spool_image(r, n, 0, 0, &len);
	ck_assert_uint_eq(len, BOT_HARVEST_FILE_MAX);
	bot_test_write(sp, "nb-full.spool", b, len);
	free(b);
	r[n - 1] = sample(11, n, 0, 5000, 0);
	b = spool_image(r, n, 0, 0, &len);
	bot_test_write(sp, "nb-over.spool", b, len);
	free(b);
	free(r);
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_uint_eq(res.files_rejected, 1);
	ck_assert_uint_eq(res.records_in, BOT_HARVEST_FILE_RECORDS);
	ck_assert_msg(res.rejected_by[BOT_HARVEST_WHY_INVALID] == 1, "%s", logged);
	ck_assert_msg(strstr(logged, "nb-over.spool: rejected: 131073 samples and summaries, more "
			     "than the writer writes (131072)"), "%s", logged);
}
END_TEST

/* The worst a harvest meets: files of the largest size with bad CRCs up to
 * the byte bound, and one more (refused unread, the bound named): at most
 * 100 ms of CPU, parent and child together. */
START_TEST(test_hostile_worst)
{
	size_t fit = BOT_HARVEST_MAX_BYTES / BOT_HARVEST_FILE_MAX;
	char what[160];
	int64_t cpu, bound;

	write_good(sp);
	write_big_bad(sp, fit + 1, 0);
	snprintf(what, sizeof(what), "%zu spool files of %llu bytes with bad CRCs (bound %llu "
		 "bytes)", fit + 1, (unsigned long long)BOT_HARVEST_FILE_MAX,
		 (unsigned long long)BOT_HARVEST_MAX_BYTES);
	cpu = harvest_cpu(what);
	bound = hostile_bound_us();
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_msg(res.rejected_by[BOT_HARVEST_WHY_INVALID] == fit, "%s", logged);
	ck_assert_msg(res.rejected_by[BOT_HARVEST_WHY_BYTES] == 1, "%s", logged);
	ck_assert_msg(strstr(logged, "over what is left of the harvest's"), "%s", logged);
	ck_assert_msg(cpu < bound, "%lld us CPU, over %lld", (long long)cpu, (long long)bound);
}
END_TEST

START_TEST(test_many_files)
{
	char path[BOT_TEST_PATH_MAX], name[32];
	int64_t t0, c0, wall, cpu;

	t0 = now_us();
	for (int i = 0; i < 100000; i++) {
		int fd;

		snprintf(name, sizeof(name), "nb-%06d.spool", i);
		fd = open(bot_test_path(path, sp, name), O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	printf("10^5 files made in %.0f ms\n", (now_us() - t0) / 1000.0);
	t0 = now_us();
	c0 = cpu_us();
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	wall = now_us() - t0;
	cpu = cpu_us() - c0;
	printf("10^5 files refused in %.1f ms wall, %.1f ms CPU\n", wall / 1000.0, cpu / 1000.0);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_FAILED);
	ck_assert_msg(strstr(logged, "more than 4096 spool files (the bound of one harvest): "
			     "refused whole, none read"), "%s", logged);
	ck_assert_msg(wall < 1000000 && cpu < 1000000, "%lld us wall, %lld us CPU",
		      (long long)wall, (long long)cpu);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

START_TEST(test_byte_bound)
{
	struct bot_spool_rec r[3] = { sample(7, 1, 0, 5000, 0), sample(7, 2, 0, 6000, 0),
				      summary(7, 0) };
	size_t len = BOT_SPOOL_HDR_SIZE + 3 * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;

	write_spool(sp, "nb-a.spool", r, 3, 0, 0);
	r[0].rank = r[1].rank = r[2].rank = 1;
	write_spool(sp, "nb-b.spool", r, 3, 0, 0);
	req.max_bytes = len + 10;
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_uint_eq(res.rejected_by[BOT_HARVEST_WHY_BYTES], 1);
	ck_assert_msg(strstr(logged, "/nb-b.spool: rejected: 552 bytes, over what is left of the "
			     "harvest's 562-byte bound (10 bytes): not read"), "%s", logged);
}
END_TEST

static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
	char path[BOT_TEST_PATH_MAX];
	uint8_t *b = malloc(1 << 16);
	FILE *f = fopen(bot_test_path(path, dir, name), "rb");

	ck_assert_ptr_nonnull(f);
	*len = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

START_TEST(test_twice)
{
	struct bot_spool_rec r[3] = { sample(7, 1, 0, 5000, 0), sample(7, 2, 0, 6000, 0),
				      summary(7, 0) };
	char out2[BOT_TEST_PATH_MAX], name[BOT_DELTA_NAME_MAX];
	uint8_t *a, *b, *c;
	size_t la, lb, lc;
	uint64_t id;

	write_spool(sp, "nb-a.spool", r, 3, 0, 0);
	r[0].rank = r[1].rank = r[2].rank = 1;
	write_spool(sp, "nb-b.spool", r, 3, 5, 0);
	/* harvest times after the files' mtimes (the step's start) */
	req.id.t_harvest = (uint64_t)time(NULL) + 1000;
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	strcpy(name, res.name);
	id = res.identity;
	bot_test_path(out2, root, "out2");
	ck_assert_int_eq(mkdir(out2, 0700), 0);
	req.outbox = out2;
	req.id.t_harvest = (uint64_t)time(NULL) + 2000;
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_str_eq(res.name, name);
	ck_assert_uint_eq(res.identity, id);
	a = slurp(out, name, &la);
	b = slurp(out2, name, &lb);
	ck_assert_uint_eq(la, lb);
	/* the same bytes but step end and harvest time (352..367) and the CRC */
	ck_assert_uint_ne(bot_le_get64(a + 360), bot_le_get64(b + 360));
	ck_assert_int_eq(memcmp(a, b, 352), 0);
	ck_assert_int_eq(memcmp(a + 368, b + 368, la - 368 - 8), 0);
	/* a second write into the first outbox replaces nothing */
	req.outbox = out;
	req.id.t_harvest = 0;
	logged[0] = 0;
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_EXISTS);
	ck_assert_msg(strstr(logged, "exists: not overwritten"), "%s", logged);
	c = slurp(out, name, &lc);
	ck_assert_uint_eq(lc, la);
	ck_assert_int_eq(memcmp(a, c, la), 0);
	ck_assert_uint_eq(count_entries(out), 1);
	free(a);
	free(b);
	free(c);
}
END_TEST

START_TEST(test_nothing_valid)
{
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_NOTHING);
	ck_assert_msg(strstr(logged, "no spool file to harvest"), "%s", logged);
	ck_assert_int_eq(make_hostile(sp, H_CRC), 0);
	logged[0] = 0;
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_NOTHING);
	ck_assert_msg(strstr(logged, "none of the 1 spool file(s) is valid: nothing written"),
		      "%s", logged);
	ck_assert_uint_eq(count_entries(out), 0);
	/* a spool directory that is a link is not listed */
	{
		char link_path[BOT_TEST_PATH_MAX];

		ck_assert_int_eq(symlink(sp, bot_test_path(link_path, root, "link")), 0);
		src.dir = link_path;
		logged[0] = 0;
		ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
		ck_assert_int_eq(res.outcome, BOT_HARVEST_FAILED);
		ck_assert_msg(strstr(logged, "/link: cannot list the spool directory"), "%s", logged);
	}
}
END_TEST

static int hang(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static int refuse(void *arg)
{
	(void)arg;
	errno = EPERM;
	return -1;
}

START_TEST(test_child_hook_and_timeout)
{
	int64_t t0;

	write_good(sp);
	req.child_setup = refuse;
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_msg(strstr(logged, "the reading child's setup failed: Operation not permitted"),
		      "%s", logged);
	req.child_setup = hang;
	req.timeout_ms = 300;
	logged[0] = 0;
	t0 = now_us();
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	printf("a hanging child killed after %.0f ms\n", (now_us() - t0) / 1000.0);
	ck_assert_int_lt(now_us() - t0, 3000000);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_FAILED);
	ck_assert_msg(strstr(logged, "ran past 300 ms: killed"), "%s", logged);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

/* The report's hooks: on_file sees each file in the reading child;
 * child_done runs there after the stream, and one that hangs (a report
 * directory on a hung filesystem) costs neither the delta nor more than
 * the timeout. */
static int files_seen;

static void count_file(void *arg, const struct bot_spool_file *f)
{
	(void)arg;
	files_seen += f ? 1 : 100;
}

static void hang_done(void *arg)
{
	/* the child's count, visible only here: its exit status says it */
	(void)arg;
	if (files_seen != 1)
		_exit(7);
	for (;;)
		pause();
}

START_TEST(test_report_hooks)
{
	int64_t t0;

	write_good(sp);
	files_seen = 0;
	req.on_file = count_file;
	req.child_done = hang_done;
	req.timeout_ms = 400;
	logged[0] = 0;
	t0 = now_us();
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), 0);
	printf("a report that hangs: the delta written, the child killed after %.0f ms\n",
	       (now_us() - t0) / 1000.0);
	ck_assert_int_lt(now_us() - t0, 3000000);
	ck_assert_int_ge(now_us() - t0, 300000);	/* it was waited for, up to the bound */
	ck_assert_int_eq(res.outcome, BOT_HARVEST_WRITTEN);
	ck_assert_uint_eq(count_entries(out), 1);
	ck_assert_msg(strstr(logged, "did not finish its report within 400 ms"), "%s", logged);
	ck_assert_int_eq(files_seen, 0);	/* the parent's own count: never called here */
}
END_TEST

/* ---- streams a hostile child could send ---------------------------------- */

static int sfd;
static uint64_t unit_digest = 0x1111;	/* the file digest a file unit claims */

static void unit_file(int outcome, int why, uint64_t n, const char *name, int srcidx)
{
	uint8_t u[BOT_HARVEST_UNIT] = { 'F', (uint8_t)outcome };

	bot_le_put16(u + 2, (uint32_t)why);
	bot_le_put64(u + 8, n);
	bot_le_put64(u + 24, unit_digest);
	bot_le_put16(u + 52, (uint32_t)srcidx);
	strcpy((char *)u + 56, name);
	ck_assert_int_eq(write(sfd, u, sizeof(u)), sizeof(u));
}

static void unit_rec(const struct bot_spool_rec *r)
{
	uint8_t u[BOT_HARVEST_UNIT];

	bot_spool_pack_rec(u, r);
	ck_assert_int_eq(write(sfd, u, sizeof(u)), sizeof(u));
}

static void unit_end(uint32_t files)
{
	uint8_t u[BOT_HARVEST_UNIT] = { 'E' };

	bot_le_put32(u + 4, files);
	ck_assert_int_eq(write(sfd, u, sizeof(u)), sizeof(u));
}

static void stream_open(void)
{
	char path[BOT_TEST_PATH_MAX];

	sfd = open(bot_test_path(path, root, "stream"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(sfd, 0);
	logged[0] = 0;
}

static int stream_collect(void)
{
	int rc;

	ck_assert_int_eq(lseek(sfd, 0, SEEK_SET), 0);
	rc = bot_harvest_collect(sfd, &req, &res, &tlog);
	close(sfd);
	return rc;
}

START_TEST(test_stream_revalidated)
{
	struct bot_spool_rec good = sample(7, 1, 0, 5000, 0), r;

	/* a record with nNodes over the step's, one with rank >= nranks: each
	 * file rejected whole by the parent; the good one kept */
	stream_open();
	r = sample(7, 1, 1, 5000, 0);
	r.nranks = r.nnodes = 64;
	r.rank = 1;
	unit_file(0, 0, 2, "nb-a.spool", 0);
	unit_rec(&good);
	unit_rec(&r);
	r = sample(7, 1, 17, 5000, 0);
	unit_file(0, 0, 1, "nb-b.spool", 0);
	unit_rec(&r);
	unit_file(0, 0, 1, "nb-c.spool", 0);
	unit_rec(&good);
	unit_end(3);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_uint_eq(res.rejected_by[BOT_HARVEST_WHY_NNODES], 1);
	ck_assert_uint_eq(res.rejected_by[BOT_HARVEST_WHY_PARENT], 1);
	ck_assert_uint_eq(res.records, 1);
	ck_assert_msg(strstr(logged, "nb-a.spool: rejected: record 1: nNodes 64 over the step's 2 "
			     "node(s)"), "%s", logged);
	ck_assert_msg(strstr(logged, "nb-b.spool: rejected: record 0: "), "%s", logged);
	/* the same records twice: read once */
	stream_open();
	strcpy(req.id.job, "second");
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_file(0, 0, 1, "nb-b.spool", 0);
	unit_rec(&good);
	unit_end(2);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_WRITTEN);
	ck_assert_msg(strstr(logged, "nb-b.spool: skipped: the same records as a file read before"),
		      "%s", logged);
	ck_assert_uint_eq(res.files_duplicate, 1);
	ck_assert_uint_eq(res.files_read, 1);
}
END_TEST

START_TEST(test_stream_malformed)
{
	struct bot_spool_rec good = sample(7, 1, 0, 5000, 0);
	uint8_t z[BOT_HARVEST_UNIT] = { 'Z' };

	/* an end unit that miscounts */
	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_end(5);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "end unit after 1 files says 5"), "%s", logged);
	/* no end unit */
	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "no end unit"), "%s", logged);
	/* fewer records than claimed */
	stream_open();
	unit_file(0, 0, 3, "nb-a.spool", 0);
	unit_rec(&good);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "ends inside its records"), "%s", logged);
	/* an unknown unit */
	stream_open();
	ck_assert_int_eq(write(sfd, z, sizeof(z)), sizeof(z));
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "of kind 0x5a"), "%s", logged);
	/* a source index out of range, a name with a slash */
	stream_open();
	unit_file(0, 0, 0, "nb-a.spool", 1);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "a file unit out of range"), "%s", logged);
	stream_open();
	unit_file(0, 0, 0, "../x.spool", 0);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "a file unit out of range"), "%s", logged);
	/* more records than a spool file holds */
	stream_open();
	unit_file(0, 0, BOT_HARVEST_FILE_RECORDS + 1ull, "nb-a.spool", 0);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "claims 131073 records"), "%s", logged);
	/* a rejection without its reason */
	stream_open();
	unit_file(1, BOT_HARVEST_WHY_KIND, 0, "nb-a.spool", 0);
	unit_end(1);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "no reason after a rejection"), "%s", logged);
	/* over the stream's byte bound */
	req.max_files = 1;
	req.max_bytes = 160;
	stream_open();
	unit_file(0, 0, 100, "nb-a.spool", 0);
	for (int i = 0; i < 100; i++)
		unit_rec(&good);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "the child's stream is over its 800-byte bound"), "%s", logged);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

/* Review finding 8 (T1): nothing may follow the end unit; a stream with
 * units after it is refused whole. */
START_TEST(test_stream_after_end)
{
	struct bot_spool_rec good = sample(7, 1, 0, 5000, 0);
	uint8_t junk[BOT_HARVEST_UNIT];

	memset(junk, 0x99, sizeof(junk));
	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_end(1);
	ck_assert_int_eq(write(sfd, junk, sizeof(junk)), sizeof(junk));
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_FAILED);
	ck_assert_msg(strstr(logged, "the child's stream goes on after its end unit"), "%s", logged);
	/* a part of a unit after it: refused too */
	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_end(1);
	ck_assert_int_eq(write(sfd, junk, 10), 10);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "ends inside a unit"), "%s", logged);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

/* Review finding 8 (T2): the file digest that decides duplicates and the
 * default job is the parent's, from the records it validated: a child
 * claiming one digest for two different files loses neither, and the
 * digest it claims does not change the name. */
START_TEST(test_stream_digest_parent)
{
	struct bot_spool_rec a = sample(7, 1, 0, 5000, 0), b = sample(7, 2, 0, 6000, 0);
	char name[BOT_DELTA_NAME_MAX];

	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&a);
	unit_file(0, 0, 1, "nb-b.spool", 0);
	unit_rec(&b);
	unit_end(2);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	ck_assert_uint_eq(res.files_read, 2);
	ck_assert_uint_eq(res.files_duplicate, 0);
	ck_assert_uint_eq(res.records, 2);
	strcpy(name, res.name);
	/* the same records, other claimed digests: the same default job */
	bot_test_rmtree(out);
	ck_assert_int_eq(mkdir(out, 0700), 0);
	stream_open();
	unit_digest = 0x2222;
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&a);
	unit_digest = 0x3333;
	unit_file(0, 0, 1, "nb-b.spool", 0);
	unit_rec(&b);
	unit_digest = 0x1111;
	unit_end(2);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	ck_assert_str_eq(res.name, name);
}
END_TEST

/* Review finding 8 (T3): files read that hold no record write nothing
 * (never an empty delta). */
START_TEST(test_stream_no_records)
{
	stream_open();
	unit_file(0, 0, 0, "nb-a.spool", 0);
	unit_end(1);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_NOTHING);
	ck_assert_msg(strstr(logged, "the 1 spool file(s) read hold no record: nothing written"),
		      "%s", logged);
	ck_assert_uint_eq(count_entries(out), 0);
}
END_TEST

/* Review finding 8 (T4): a step start taken from the child's mtimes is at
 * most 7 days before the step end (a claimed mtime of 0 would switch the
 * compactor's runtime bounds off); a harvest with Slurm's identity must
 * be given the step's start. */
START_TEST(test_stream_start_bounded)
{
	struct bot_spool_rec good = sample(7, 1, 0, 5000, 0);
	struct bot_delta d;

	stream_open();
	unit_file(0, 0, 1, "nb-a.spool", 0);	/* mtime 0 */
	unit_rec(&good);
	unit_end(1);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	read_delta(res.name, &d);
	ck_assert_uint_gt(d.hdr.t_start, 0);
	ck_assert_uint_eq(d.hdr.t_end - d.hdr.t_start, 7 * 86400);
	bot_delta_free(&d);
	/* Slurm's identity without the step's start: refused before reading */
	stream_open();
	strcpy(req.id.job, "1234");
	req.id.flags = BOT_DELTA_F_SLURM;
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_end(1);
	ck_assert_int_eq(stream_collect(), -1);
	ck_assert_msg(strstr(logged, "identity from Slurm (flag bit3) needs the step's start"),
		      "%s", logged);
	/* given: taken as it is */
	stream_open();
	req.id.t_start = 1000;
	req.id.t_end = 2000;
	unit_file(0, 0, 1, "nb-a.spool", 0);
	unit_rec(&good);
	unit_end(1);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	read_delta(res.name, &d);
	ck_assert_uint_eq(d.hdr.t_start, 1000);
	ck_assert_uint_eq(d.hdr.t_end, 2000);
	bot_delta_free(&d);
}
END_TEST

/* Review finding 10: a harvest killed between link and unlink (the
 * fallback where RENAME_NOREPLACE is missing) leaves the delta with two
 * links, its temporary the second; ship refuses such a file. The next
 * harvest into the outbox completes the rename: any delta there whose
 * `.<name>.tmp` is the same inode loses that link. */
START_TEST(test_stranded_link_completed)
{
	char path[BOT_TEST_PATH_MAX], tmp[BOT_TEST_PATH_MAX], tname[BOT_DELTA_NAME_MAX + 8];
	char name[BOT_DELTA_NAME_MAX];
	struct stat st;

	write_good(sp);
	strcpy(req.id.job, "first");
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	strcpy(name, res.name);
	snprintf(tname, sizeof(tname), ".%s.tmp", name);
	bot_test_path(path, out, name);
	bot_test_path(tmp, out, tname);
	/* the crash: the final name linked, the temporary not yet removed */
	ck_assert_int_eq(link(path, tmp), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 2);
	/* another step's harvest into the same outbox repairs it */
	strcpy(req.id.job, "second");
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_int_eq(lstat(tmp, &st), -1);
	ck_assert_msg(strstr(logged, "completed an interrupted rename"), "%s", logged);
	/* the same step harvested again: the delta is there (not replaced),
	 * and left with one link */
	ck_assert_int_eq(link(path, tmp), 0);
	strcpy(req.id.job, "first");
	logged[0] = 0;
	ck_assert_int_eq(bot_harvest_run(&req, &res, &tlog), -1);
	ck_assert_int_eq(res.outcome, BOT_HARVEST_EXISTS);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_int_eq(lstat(tmp, &st), -1);
	/* a temporary that is another file (a write cut short) is not touched
	 * by another step's harvest */
	bot_test_write(out, tname, "partial", 7);
	strcpy(req.id.job, "third");
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_int_eq(lstat(tmp, &st), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 1);
}
END_TEST

/* Review finding 15: a spool file an earlier rank library wrote with a
 * cost of -0 is rejected whole with the reason; the others still make the
 * delta. */
START_TEST(test_negative_zero_cost_file)
{
	struct bot_spool_rec r = sample(7, 1, 1, 5000, 0);

	write_good(sp);
	r.cost[2] = -0.0f;
	write_spool(sp, "nb-old.spool", &r, 1, 0, 0);
	ck_assert_msg(bot_harvest_run(&req, &res, &tlog) == 0, "%s", logged);
	ck_assert_uint_eq(res.files_read, 1);
	ck_assert_uint_eq(res.files_rejected, 1);
	ck_assert_uint_eq(res.rejected_by[BOT_HARVEST_WHY_INVALID], 1);
	ck_assert_msg(strstr(logged, "nb-old.spool: rejected: record 0 (offset 64): cost[2] is -0, "
			     "not -1 or a finite value >= 0"), "%s", logged);
}
END_TEST

START_TEST(test_cap)
{
	const size_t nsmp = 200000, nsum = 70000;
	struct bot_delta d;

	stream_open();
	/* three files (a file holds at most BOT_HARVEST_FILE_RECORDS) */
	unit_file(0, 0, nsmp / 2, "nb-a.spool", 0);
	for (size_t i = 0; i < nsmp; i++) {
		struct bot_spool_rec r = sample(7, i + 1, 0, 5000, 0);

		if (i == nsmp / 2)
			unit_file(0, 0, nsmp - nsmp / 2, "nb-b.spool", 0);
		unit_rec(&r);
	}
	unit_file(0, 0, nsum, "nb-c.spool", 0);
	for (size_t i = 0; i < nsum; i++) {
		struct bot_spool_rec r = summary(100 + i, 0);

		unit_rec(&r);
	}
	unit_end(3);
	ck_assert_msg(stream_collect() == 0, "%s", logged);
	ck_assert_uint_eq(res.records, BOT_DELTA_MAX_RECORDS);
	ck_assert_uint_eq(res.flags, BOT_DELTA_F_DROPPED);
	read_delta(res.name, &d);
	/* every summary, then the first samples in order */
	ck_assert_uint_eq(d.recs[BOT_DELTA_MAX_RECORDS - nsum - 1].kind, BOT_SPOOL_SAMPLE);
	ck_assert_uint_eq(d.recs[BOT_DELTA_MAX_RECORDS - nsum - 1].seq, BOT_DELTA_MAX_RECORDS - nsum);
	ck_assert_uint_eq(d.recs[BOT_DELTA_MAX_RECORDS - nsum].kind, BOT_SPOOL_SUMMARY);
	ck_assert_uint_eq(d.recs[BOT_DELTA_MAX_RECORDS - 1].comm_id, 100 + nsum - 1);
	bot_delta_free(&d);
}
END_TEST

static Suite *harvest_suite(void)
{
	Suite *s = suite_create("harvest");
	TCase *tc = tcase_create("harvest");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_reduce_and_read_back);
	tcase_add_test(tc, test_process_records);
	tcase_add_test(tc, test_process_records_alone);
	tcase_add_test(tc, test_largest_valid);
	tcase_add_test(tc, test_hostile_each);
	tcase_add_test(tc, test_hostile_all);
	tcase_add_test(tc, test_hostile_largest);
	tcase_add_test(tc, test_hostile_worst);
	tcase_add_test(tc, test_many_files);
	tcase_add_test(tc, test_byte_bound);
	tcase_add_test(tc, test_twice);
	tcase_add_test(tc, test_nothing_valid);
	tcase_add_test(tc, test_child_hook_and_timeout);
	tcase_add_test(tc, test_report_hooks);
	tcase_add_test(tc, test_stream_revalidated);
	tcase_add_test(tc, test_stream_malformed);
	tcase_add_test(tc, test_cap);
	tcase_add_test(tc, test_stream_after_end);
	tcase_add_test(tc, test_stream_digest_parent);
	tcase_add_test(tc, test_stream_no_records);
	tcase_add_test(tc, test_stream_start_bounded);
	tcase_add_test(tc, test_stranded_link_completed);
	tcase_add_test(tc, test_negative_zero_cost_file);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(harvest_suite)
