/*
 * spool.c - the rank-side spool writer (tuner/spool.h, format in
 * common/spool.h and doc/formats.md section 9).
 *
 * Samples are stored already packed (160 B each) in chunks allocated as they
 * fill, up to BOT_SPOOL_MAX_SAMPLES per process; past that new samples are
 * dropped and counted (deterministic, and the file says so in its header).
 * Summaries of finished communicators are kept the same way; live ones are
 * generated at each rewrite by their sources' callbacks (bot_spool_register).
 *
 * One spin lock (tuner/util.h) guards the store. The stores are
 * append-only (a record below the count never changes, chunks never move),
 * so a rewrite takes only the counts and the live summaries
 * under the lock and then checksums and writes the chunks in place, outside
 * it: an event callback never waits for a copy of the file. Only one
 * rewrite runs at a time: a periodic one skips when another is running;
 * finalize and exit wait for it (bounded) and then write.
 *
 * The directory is opened once (O_DIRECTORY|O_NOFOLLOW) and every name is
 * resolved from that descriptor (openat/renameat), so a chdir() or a swapped
 * symlink cannot move the file. The file is written as .<name>.tmp, created
 * fresh (unlink, O_CREAT|O_EXCL, 0600: a file planted in a shared directory
 * cannot keep its owner), fsynced, renamed over <name>, and the directory is
 * fsynced: a reader sees the old or the new file, never a torn one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/spool.h"
#include "policies/context.h"
#include "tuner/env.h"
#include "tuner/spool.h"
#include "tuner/util.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define CHUNK_RECS 512
#define MAX_CHUNKS ((BOT_SPOOL_MAX_SAMPLES + CHUNK_RECS - 1) / CHUNK_RECS)

struct store {
	uint8_t *chunk[MAX_CHUNKS];
	uint32_t n;
	uint64_t dropped;
};

static char lock;
static char writing;
static int ready;
static pid_t owner_pid;
static char *path;		/* for messages */
static char *name, *tmp_name;	/* relative to dir_fd */
static char *dir_path;
static int dir_fd = -1;
static uint64_t digest, host_hash;
static bot_nccl_logger_t logger;
static char logged_failure;
static uint64_t next_flush_ns;
static uint64_t period_ns = BOT_SPOOL_PERIOD_NS;	/* a test hook may shorten it */

static struct store samples, summaries;

struct source {
	void *obj;
	bot_spool_summaries_fn fn;
};
static struct source *live;
static size_t nlive, caplive;

/* Append one packed record; caller holds the lock. */
static void store_add(struct store *s, const struct bot_spool_rec *r, uint32_t cap)
{
	uint32_t c = s->n / CHUNK_RECS;

	if (s->n >= cap || c >= MAX_CHUNKS) {
		s->dropped++;
		return;
	}
	if (!s->chunk[c]) {
		s->chunk[c] = malloc((size_t)CHUNK_RECS * BOT_SPOOL_REC_SIZE);
		if (!s->chunk[c]) {
			s->dropped++;
			return;
		}
	}
	bot_spool_pack_rec(s->chunk[c] + (size_t)(s->n % CHUNK_RECS) * BOT_SPOOL_REC_SIZE, r);
	s->n++;
}

static void spool_atexit(void)
{
	bot_spool_flush();
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			*s = '_';
}

int bot_spool_setup(const char *dir, uint64_t table_digest, bot_nccl_logger_t log)
{
	char host[256] = "unknown";
	size_t n;
	int rc = 0;

	if (!dir || !*dir)
		return -1;
	bot_spin_lock(&lock);
	if (ready) {
		if (!digest)
			digest = table_digest;
		if (!logger)
			logger = log;
		goto out;
	}
	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	host_hash = bot_digest64(host, strlen(host));
	host[64] = 0;
	sanitize(host);
	owner_pid = getpid();
	n = strlen(dir) + strlen(host) + 64;
	path = malloc(n);
	name = malloc(n);
	tmp_name = malloc(n);
	dir_path = strdup(dir);
	if (!path || !name || !tmp_name || !dir_path) {
		free(path);
		free(name);
		free(tmp_name);
		free(dir_path);
		path = name = tmp_name = dir_path = NULL;
		rc = -1;
		goto out;
	}
	snprintf(name, n, "nb-%s-%ld.spool", host, (long)owner_pid);
	snprintf(tmp_name, n, ".nb-%s-%ld.spool.tmp", host, (long)owner_pid);
	snprintf(path, n, "%s/%s", dir, name);
	/* a missing directory is retried (and reported) at the first rewrite */
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	digest = table_digest;
	logger = log;
	bot_renv_test_spool_period_ns(&period_ns);
	next_flush_ns = bot_now_ns() + period_ns;
	ready = 1;
	atexit(spool_atexit);
out:
	bot_spin_unlock(&lock);
	return rc;
}

void bot_spool_add(const struct bot_spool_rec *r)
{
	bot_spin_lock(&lock);
	store_add(&samples, r, BOT_SPOOL_MAX_SAMPLES);
	bot_spin_unlock(&lock);
}

void bot_spool_register(void *obj, bot_spool_summaries_fn fn)
{
	bot_spin_lock(&lock);
	if (nlive == caplive) {
		size_t nc = caplive ? caplive * 2 : 16;
		struct source *nl = realloc(live, nc * sizeof(*nl));

		if (!nl) {
			bot_spin_unlock(&lock);
			return;		/* its summaries are lost: learning only */
		}
		live = nl;
		caplive = nc;
	}
	live[nlive].obj = obj;
	live[nlive].fn = fn;
	nlive++;
	bot_spin_unlock(&lock);
}

static void emit_summary(const struct bot_spool_rec *r, void *arg)
{
	store_add(arg, r, BOT_SPOOL_MAX_SUMMARIES);
}

void bot_spool_retire(void *obj)
{
	bot_spin_lock(&lock);
	for (size_t i = 0; i < nlive; i++)
		if (live[i].obj == obj) {
			live[i].fn(obj, emit_summary, &summaries);
			live[i] = live[--nlive];
			break;
		}
	bot_spin_unlock(&lock);
}

/* ---- rewriting the file ---------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t n, cap;
	int oom;
};

static void buf_rec(const struct bot_spool_rec *r, void *arg)
{
	struct buf *b = arg;

	if (b->oom)
		return;
	if (b->n + BOT_SPOOL_REC_SIZE > b->cap) {
		size_t nc = b->cap * 2 + BOT_SPOOL_REC_SIZE * 64;
		uint8_t *np = realloc(b->p, nc);

		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	bot_spool_pack_rec(b->p + b->n, r);
	b->n += BOT_SPOOL_REC_SIZE;
}

/* 0, or -1 with errno set (never a stale one). */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void fail(const char *what, int err)
{
	if (logger && !__atomic_exchange_n(&logged_failure, 1, __ATOMIC_RELAXED))
		logger(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		       "nccl-bot: spool %s: %s: %s (measurements of this process are not kept; "
		       "decisions are unaffected)", path ? path : "?", what, strerror(err));
}

/* A consistent view of an append-only store: its first n records. */
struct view {
	uint8_t *chunk[MAX_CHUNKS];
	uint32_t n;
};

static void view_take(struct view *v, const struct store *s)
{
	v->n = s->n;
	memcpy(v->chunk, s->chunk, sizeof(v->chunk[0]) * ((v->n + CHUNK_RECS - 1) / CHUNK_RECS));
}

static uint32_t view_crc(uint32_t crc, const struct view *v)
{
	for (uint32_t i = 0; i < v->n; i += CHUNK_RECS) {
		size_t k = v->n - i < CHUNK_RECS ? v->n - i : CHUNK_RECS;

		crc = bot_spool_crc32c(crc, v->chunk[i / CHUNK_RECS], k * BOT_SPOOL_REC_SIZE);
	}
	return crc;
}

static int view_write(int fd, const struct view *v)
{
	for (uint32_t i = 0; i < v->n; i += CHUNK_RECS) {
		size_t k = v->n - i < CHUNK_RECS ? v->n - i : CHUNK_RECS;

		if (write_all(fd, v->chunk[i / CHUNK_RECS], k * BOT_SPOOL_REC_SIZE))
			return -1;
	}
	return 0;
}

/* wait: finalize and exit, which must not lose what they add, wait up to
 * ~5 s for a running rewrite; the periodic tick skips. */
static int flush(int wait)
{
	static struct view vs, vm;	/* under `writing` */
	struct buf b = { 0 };
	struct bot_spool_hdr h;
	uint8_t hdr[BOT_SPOOL_HDR_SIZE], trailer[BOT_SPOOL_TRAILER_SIZE] = { 0 };
	uint64_t t0 = bot_now_ns();
	uint32_t crc;
	int fd, rc = -1;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || getpid() != owner_pid)
		return -1;
	while (__atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, 1000000 };

		if (!wait || bot_now_ns() - t0 > 5000000000ull)
			return -1;
		nanosleep(&ts, NULL);
	}
	memset(&h, 0, sizeof(h));
	bot_spin_lock(&lock);
	view_take(&vs, &samples);
	view_take(&vm, &summaries);
	for (size_t i = 0; i < nlive; i++)
		live[i].fn(live[i].obj, buf_rec, &b);
	h.flags = (samples.dropped ? BOT_SPOOL_HF_SAMPLES_DROPPED : 0) |
		  (summaries.dropped ? BOT_SPOOL_HF_SUMMARIES_DROPPED : 0);
	h.table_digest = digest;
	bot_spin_unlock(&lock);
	__atomic_store_n(&next_flush_ns, bot_now_ns() + period_ns, __ATOMIC_RELAXED);
	if (b.oom) {
		fail("building the file", ENOMEM);
		goto out;
	}
	if (dir_fd < 0) {
		dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir_fd < 0) {
			fail("opening the directory", errno);
			goto out;
		}
	}
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = vs.n + vm.n + b.n / BOT_SPOOL_REC_SIZE;
	strncpy(h.build_id, "nccl-bot " PACKAGE_VERSION, BOT_SPOOL_BUILD_ID_SIZE);
	h.host_hash = host_hash;
	h.pid = (uint32_t)owner_pid;
	bot_spool_pack_hdr(hdr, &h);
	crc = bot_spool_crc32c(0, hdr, sizeof(hdr));
	crc = view_crc(crc, &vs);
	crc = view_crc(crc, &vm);
	crc = bot_spool_crc32c(crc, b.p, b.n);
	trailer[0] = (uint8_t)crc;
	trailer[1] = (uint8_t)(crc >> 8);
	trailer[2] = (uint8_t)(crc >> 16);
	trailer[3] = (uint8_t)(crc >> 24);

	/* a fresh file of ours: whatever sits under the temporary name goes */
	if (unlinkat(dir_fd, tmp_name, 0) && errno != ENOENT) {
		fail("unlink", errno);
		goto out;
	}
	fd = openat(dir_fd, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		fail("open", errno);
		goto out;
	}
	if (write_all(fd, hdr, sizeof(hdr)) || view_write(fd, &vs) || view_write(fd, &vm) ||
	    (b.n && write_all(fd, b.p, b.n)) || write_all(fd, trailer, sizeof(trailer)) ||
	    fsync(fd)) {
		int e = errno;

		close(fd);
		unlinkat(dir_fd, tmp_name, 0);
		fail("write", e);
		goto out;
	}
	if (close(fd)) {
		int e = errno;

		unlinkat(dir_fd, tmp_name, 0);
		fail("close", e);
		goto out;
	}
	if (renameat(dir_fd, tmp_name, dir_fd, name)) {
		int e = errno;

		unlinkat(dir_fd, tmp_name, 0);
		fail("rename", e);
		goto out;
	}
	/* the rename itself is durable only once the directory is */
	if (fsync(dir_fd) && errno != EINVAL) {
		fail("fsync of the directory", errno);
		goto out;
	}
	rc = 0;
out:
	free(b.p);
	__atomic_clear(&writing, __ATOMIC_RELEASE);
	return rc;
}

int bot_spool_flush(void)
{
	return flush(1);
}

void bot_spool_tick(void)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	if (bot_now_ns() >= __atomic_load_n(&next_flush_ns, __ATOMIC_RELAXED))
		flush(0);
}
