/*
 * spool.c - the rank-side spool writer (tuner/spool.h, format in
 * common/spool.h and doc/formats.md section 9).
 *
 * Samples are stored already packed (160 B each) in chunks allocated as they
 * fill, up to BOT_SPOOL_MAX_SAMPLES per process; past that new samples are
 * dropped and counted (deterministic, and the file says so in its header).
 * Summaries of finished communicators are kept the same way; live ones are
 * generated at each rewrite from their measurement objects.
 *
 * One spin lock (no pthread symbols: see tuner.c) guards the store; a
 * rewrite copies the records out under the lock and does the I/O outside
 * it, so an event callback waits at most for a memcpy. Only one rewrite runs
 * at a time (others skip). The file is written as .<name>.tmp, fsynced and
 * renamed over <name>: a reader sees the old or the new file, never a torn
 * one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/spool.h"
#include "policies/context.h"
#include "tuner/profiler.h"
#include "tuner/spool.h"

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
static char *path, *tmp_path;
static uint64_t digest, host_hash;
static bot_nccl_logger_t logger;
static char logged_failure;
static uint64_t next_flush_ns;

static struct store samples, summaries;
static void **live;
static size_t nlive, caplive;
static struct bot_spool_stats stats;

static void spin_lock(char *l)
{
	while (__atomic_test_and_set(l, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void spin_unlock(char *l)
{
	__atomic_clear(l, __ATOMIC_RELEASE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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
	spin_lock(&lock);
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
	tmp_path = malloc(n);
	if (!path || !tmp_path) {
		free(path);
		free(tmp_path);
		path = tmp_path = NULL;
		rc = -1;
		goto out;
	}
	snprintf(path, n, "%s/nb-%s-%ld.spool", dir, host, (long)owner_pid);
	snprintf(tmp_path, n, "%s/.nb-%s-%ld.spool.tmp", dir, host, (long)owner_pid);
	digest = table_digest;
	logger = log;
	next_flush_ns = now_ns() + BOT_SPOOL_PERIOD_NS;
	ready = 1;
	atexit(spool_atexit);
out:
	spin_unlock(&lock);
	return rc;
}

void bot_spool_add(const struct bot_spool_rec *r)
{
	spin_lock(&lock);
	store_add(&samples, r, BOT_SPOOL_MAX_SAMPLES);
	stats.samples = samples.n;
	stats.dropped = samples.dropped;
	spin_unlock(&lock);
}

void bot_spool_register(void *meas)
{
	spin_lock(&lock);
	if (nlive == caplive) {
		size_t nc = caplive ? caplive * 2 : 16;
		void **nl = realloc(live, nc * sizeof(*nl));

		if (!nl) {
			spin_unlock(&lock);
			return;		/* its summaries are lost: learning only */
		}
		live = nl;
		caplive = nc;
	}
	live[nlive++] = meas;
	spin_unlock(&lock);
}

static void emit_summary(const struct bot_spool_rec *r, void *arg)
{
	store_add(arg, r, BOT_SPOOL_MAX_SUMMARIES);
}

void bot_spool_retire(void *meas)
{
	spin_lock(&lock);
	for (size_t i = 0; i < nlive; i++)
		if (live[i] == meas) {
			bot_prof_summaries(meas, emit_summary, &summaries);
			live[i] = live[--nlive];
			break;
		}
	spin_unlock(&lock);
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

static void buf_store(struct buf *b, const struct store *s)
{
	for (uint32_t i = 0; i < s->n && !b->oom; i += CHUNK_RECS) {
		size_t k = s->n - i < CHUNK_RECS ? s->n - i : CHUNK_RECS;
		size_t len = k * BOT_SPOOL_REC_SIZE;

		if (b->n + len > b->cap) {
			size_t nc = (b->n + len) * 2;
			uint8_t *np = realloc(b->p, nc);

			if (!np) {
				b->oom = 1;
				return;
			}
			b->p = np;
			b->cap = nc;
		}
		memcpy(b->p + b->n, s->chunk[i / CHUNK_RECS], len);
		b->n += len;
	}
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void fail(const char *what, int err)
{
	__atomic_add_fetch(&stats.failures, 1, __ATOMIC_RELAXED);
	if (logger && !__atomic_exchange_n(&logged_failure, 1, __ATOMIC_RELAXED))
		logger(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		       "nccl-bot: spool %s: %s: %s (measurements of this process are not kept; "
		       "decisions are unaffected)", path ? path : "?", what, strerror(err));
}

int bot_spool_flush(void)
{
	struct buf b = { 0 };
	struct bot_spool_hdr h;
	uint8_t hdr[BOT_SPOOL_HDR_SIZE], trailer[BOT_SPOOL_TRAILER_SIZE] = { 0 };
	uint32_t crc;
	int fd, rc = -1;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || getpid() != owner_pid)
		return -1;
	if (__atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE))
		return -1;
	memset(&h, 0, sizeof(h));
	spin_lock(&lock);
	buf_store(&b, &samples);
	buf_store(&b, &summaries);
	for (size_t i = 0; i < nlive; i++)
		bot_prof_summaries(live[i], buf_rec, &b);
	h.flags = (samples.dropped ? BOT_SPOOL_HF_SAMPLES_DROPPED : 0) |
		  (summaries.dropped ? BOT_SPOOL_HF_SUMMARIES_DROPPED : 0);
	h.table_digest = digest;
	spin_unlock(&lock);
	__atomic_store_n(&next_flush_ns, now_ns() + BOT_SPOOL_PERIOD_NS, __ATOMIC_RELAXED);
	if (b.oom) {
		fail("building the file", ENOMEM);
		goto out;
	}
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = b.n / BOT_SPOOL_REC_SIZE;
	strncpy(h.build_id, "nccl-bot " PACKAGE_VERSION, BOT_SPOOL_BUILD_ID_SIZE);
	h.host_hash = host_hash;
	h.pid = (uint32_t)owner_pid;
	bot_spool_pack_hdr(hdr, &h);
	crc = bot_spool_crc32c(0, hdr, sizeof(hdr));
	crc = bot_spool_crc32c(crc, b.p, b.n);
	trailer[0] = (uint8_t)crc;
	trailer[1] = (uint8_t)(crc >> 8);
	trailer[2] = (uint8_t)(crc >> 16);
	trailer[3] = (uint8_t)(crc >> 24);

	fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		fail("open", errno);
		goto out;
	}
	if (write_all(fd, hdr, sizeof(hdr)) || (b.n && write_all(fd, b.p, b.n)) ||
	    write_all(fd, trailer, sizeof(trailer)) || fsync(fd)) {
		fail("write", errno);
		close(fd);
		unlink(tmp_path);
		goto out;
	}
	if (close(fd) || rename(tmp_path, path)) {
		fail("rename", errno);
		unlink(tmp_path);
		goto out;
	}
	__atomic_add_fetch(&stats.writes, 1, __ATOMIC_RELAXED);
	rc = 0;
out:
	free(b.p);
	__atomic_clear(&writing, __ATOMIC_RELEASE);
	return rc;
}

void bot_spool_tick(void)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	if (now_ns() >= __atomic_load_n(&next_flush_ns, __ATOMIC_RELAXED))
		bot_spool_flush();
}

void bot_spool_get_stats(struct bot_spool_stats *s)
{
	spin_lock(&lock);
	*s = stats;
	spin_unlock(&lock);
}
