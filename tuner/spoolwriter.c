/*
 * spoolwriter.c - the rank-side spool writer (tuner/spoolwriter.h, format in
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
 * rewrite runs at a time (`writing`).
 *
 * Who rewrites. A writer thread of the library's own, never one of NCCL's:
 * NCCL's callbacks only add to the store, which counts `changes`. The
 * writer is started at the first bot_spool_register() (a measuring profiler
 * init) with every signal blocked, detached; it sleeps on a futex and
 * rewrites every period (BOT_SPOOL_PERIOD_NS) unless the file would come
 * out the same, and at once when finalize asks (bot_spool_flush(), which
 * waits at most BOT_SPOOL_FINALIZE_WAIT_NS, and not at all when nothing
 * changed since the last rewrite). It ends once no communicator is live and
 * everything has been tried, so it never outlives NCCL's use of the library
 * (and a later measuring init starts another). It touches no NCCL object:
 * only the store, the sources' summaries and the file. If it cannot be
 * started the spool is written at finalize and exit only, by the thread that
 * finalizes or exits (logged once). atexit writes synchronously, after
 * waiting up to ~5 s for a rewrite already running, and stops the writer.
 * Nothing is written from a forked child (getpid() is compared with the pid
 * recorded at setup; the writer thread does not exist there).
 *
 * The process record (kind 3). Tuner init notes each communicator it
 * opened (bot_spool_note_tuner: sets the spool up, counts a change), so a
 * process that never measures still has something to write: no writer
 * thread is started for it, and its tuner finalizes and atexit write the
 * file, holding the process record alone. The profiler's ABI and
 * "measured" are noted at profiler init and at a window's arming (never on
 * getCollInfo's path), possibly before the spool is set up. The record goes
 * last in the file, once the tuner noted a comm.
 *
 * pthread_create is bound to the version glibc 2.28 has (below), and the
 * .so names libpthread.so.0, where 2.28 defines it (tuner/pthread_link.c,
 * checked by tests/unit/test_so_deps.sh).
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
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/le.h"
#include "common/spool.h"
#include "policies/context.h"
#include "tuner/env.h"
#include "tuner/spoolwriter.h"
#include "tuner/util.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* pthread_create as glibc 2.28 defines it, in libpthread.so.0. glibc 2.34
 * moved it into libc.so.6 as pthread_create@@GLIBC_2.34 and kept this
 * version there as a compat symbol, so binding to it loads on both. The
 * .so is linked against a stand-in libpthread.so.0 (tuner/pthread_link.c),
 * so that it names libpthread.so.0 in DT_NEEDED and as the file of this
 * version, which is where glibc 2.28 finds it. */
#if defined(__x86_64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver pthread_create, pthread_create@GLIBC_2.17");
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
static int closing;		/* atexit ran: the writer stops */
static pid_t owner_pid;
static char *path;		/* for messages */
static char *name, *tmp_name;	/* relative to dir_fd */
static char *dir_path;
static int dir_fd = -1;
static uint64_t digest, host_hash;
static bot_nccl_logger_t logger;
static char logged_failure;	/* a failure said, no success since (under `writing`) */
static unsigned failures_said;	/* at most SPOOL_FAILURES_SAID per process */
#define SPOOL_FAILURES_SAID 3
static uint64_t period_ns = BOT_SPOOL_PERIOD_NS;	/* a test hook may shorten it */

/* What the file holds. `changes` counts what callbacks added (lock); a
 * rewrite records the count it took as tried, and as written once the file
 * holds it (or would come out byte for byte the same: written_crc and
 * written_nrec, under `writing`). */
static uint64_t changes, tried_changes, written_changes;
static uint32_t written_crc;
static uint64_t written_nrec;	/* records + 1 of the last file written; 0: none */

/* The writer thread. writer_on: started and not yet ended (lock);
 * writer_failed: pthread_create failed, never tried again. Finalize asks
 * with ++requests (lock) and a wake on wake_word; the writer answers with
 * served = the requests it saw before its rewrite, and a wake on
 * done_word. */
static int writer_on, writer_failed, no_thread;
static uint32_t wake_word, done_word;
static uint64_t requests, served;

static struct store samples, summaries;

/* The process record. Tuner fields under the lock; the profiler ABI and
 * the measured flag are atomics (noted before or without a setup). */
static uint32_t proc_comms, proc_tuner_abi, proc_nccl, proc_flags;
static uint8_t proc_policy;
static uint32_t proc_prof_abi;
static char proc_measured;

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
		if (!s->dropped++)
			changes++;	/* the header's flag */
		return;
	}
	if (!s->chunk[c]) {
		s->chunk[c] = malloc((size_t)CHUNK_RECS * BOT_SPOOL_REC_SIZE);
		if (!s->chunk[c]) {
			if (!s->dropped++)
				changes++;
			return;
		}
	}
	bot_spool_pack_rec(s->chunk[c] + (size_t)(s->n % CHUNK_RECS) * BOT_SPOOL_REC_SIZE, r);
	s->n++;
	changes++;
}

static int flush(void);

static void futex_wake(uint32_t *w)
{
	__atomic_add_fetch(w, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleep until *w is no longer seen, a wake, or ns passed (or a signal). */
static void futex_wait(uint32_t *w, uint32_t seen, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

/* The process is ending: stop the writer, write here. */
static void spool_atexit(void)
{
	__atomic_store_n(&closing, 1, __ATOMIC_RELEASE);
	futex_wake(&wake_word);
	flush();
}

/* ---- the file's name ------------------------------------------------------- */

#define SIP_ROUND(v0, v1, v2, v3)						\
	do {									\
		v0 += v1; v1 = v1 << 13 | v1 >> 51; v1 ^= v0; v0 = v0 << 32 | v0 >> 32; \
		v2 += v3; v3 = v3 << 16 | v3 >> 48; v3 ^= v2;			\
		v0 += v3; v3 = v3 << 21 | v3 >> 43; v3 ^= v0;			\
		v2 += v1; v1 = v1 << 17 | v1 >> 47; v1 ^= v2; v2 = v2 << 32 | v2 >> 32; \
	} while (0)

/* SipHash-2-4 (Aumasson and Bernstein) of n bytes (a multiple of 8) under
 * a 128-bit key: a keyed pseudo-random function, so its output tells
 * nothing about the key. (Reference vector, key 00..0f and the 8 bytes
 * 00..07: 0x93f5f5799a932462.) */
static uint64_t siphash24(const uint8_t key[16], const uint8_t *in, size_t n)
{
	uint64_t k0 = bot_le_get64(key), k1 = bot_le_get64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)n << 56;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t m = bot_le_get64(in + i);

		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* This process's (and this instance's) token in the file name: two ranks
 * in separate PID namespaces may share the hostname, the pid (1) and the
 * directory. Keyed by the kernel's 16 random bytes of this exec
 * (AT_RANDOM: different in every process), over the pid, where this
 * instance of the library is mapped (a second copy or a dlmopen() namespace
 * in the same process sees the same AT_RANDOM) and the clocks. AT_RANDOM
 * also seeds glibc's stack guard and pointer guard, so it goes through
 * SipHash, never into the name itself or through an invertible mix. */
static uint64_t name_token(pid_t pid)
{
	const uint8_t *r = (const uint8_t *)getauxval(AT_RANDOM);
	uint8_t key[16] = { 0 }, m[32];
	struct timespec rt = { 0, 0 };

	if (r)
		memcpy(key, r, sizeof(key));
	clock_gettime(CLOCK_REALTIME, &rt);
	bot_le_put64(m, (uint64_t)pid);
	bot_le_put64(m + 8, (uint64_t)(uintptr_t)&lock);
	bot_le_put64(m + 16, bot_now_ns());
	bot_le_put64(m + 24, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
	return siphash24(key, m, sizeof(m));
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
	char host[256] = "unknown", cwd[PATH_MAX];
	uint64_t token;
	size_t n;
	int rc = 0;

	if (!dir || !*dir)
		return -1;
	/* "link/.." goes through the link: refused, the same on every rank
	 * of the environment (nothing measured) */
	if (bot_path_has_dotdot(dir)) {
		static char logged_dotdot;
		char shown[208];

		/* once per process, as a refused NCCL_BOT_* value (tuner/env.c):
		 * it came at every profiler and tuner init, two per comm */
		if (log && !__atomic_exchange_n(&logged_dotdot, 1, __ATOMIC_RELAXED)) {
			bot_env_show(dir, shown, sizeof(shown));
			log(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
			    "nccl-bot: %s='%s': a '..' component is refused in a spool directory "
			    "(it could lead through a link): not measuring", BOT_ENV_SPOOL, shown);
		}
		return -1;
	}
	bot_spin_lock(&lock);
	if (ready) {
		if (!digest && table_digest) {
			digest = table_digest;
			changes++;	/* the header's */
		}
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
	/* A relative directory is made absolute now, against the working
	 * directory of the first init: a directory missing now is opened at
	 * the first rewrite, and by then the application may have moved
	 * (chdir), which would put the file elsewhere or nowhere. Kept
	 * relative when the working directory is unknown, or so deep that
	 * the two joined pass PATH_MAX (an open would fail where the
	 * relative name works). */
	if (dir[0] != '/' && getcwd(cwd, sizeof(cwd)) && strlen(cwd) + strlen(dir) + 2 <= PATH_MAX) {
		size_t lc = strlen(cwd), ld = strlen(dir), sep = cwd[1] != 0;

		dir_path = malloc(lc + sep + ld + 1);
		if (dir_path) {
			memcpy(dir_path, cwd, lc);
			dir_path[lc] = '/';	/* overwritten by dir when cwd is "/" */
			memcpy(dir_path + lc + sep, dir, ld + 1);
		}
	} else {
		dir_path = strdup(dir);
	}
	n = (dir_path ? strlen(dir_path) : 0) + strlen(host) + 96;	/* "/." ".tmp" and -<pid>-<16 hex>.spool */
	path = malloc(n);
	name = malloc(n);
	tmp_name = malloc(n);
	/* "link/" or "link/." would follow the link O_NOFOLLOW refuses: no
	 * trailing '/' or "/." (common/settings.h) */
	if (dir_path)
		bot_path_dir_trim(dir_path);
	if (!path || !name || !tmp_name || !dir_path) {
		free(path);
		free(name);
		free(tmp_name);
		free(dir_path);
		path = name = tmp_name = dir_path = NULL;
		rc = -1;
		goto out;
	}
	token = name_token(owner_pid);
	snprintf(name, n, "nb-%s-%ld-%016llx.spool", host, (long)owner_pid,
		 (unsigned long long)token);
	snprintf(tmp_name, n, ".%s.tmp", name);
	snprintf(path, n, "%s/%s", dir_path, name);
	/* NCCL_BOT_SPOOL's bytes go to NCCL's log as every value of the
	 * environment does: printable only (common/settings.h) */
	bot_env_show(path, path, n);
	/* a missing directory is retried (and reported) at the first rewrite */
	dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	digest = table_digest;
	logger = log;
	bot_renv_test_spool_period_ns(&period_ns);
	no_thread = bot_renv_test_spool_no_thread();
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	atexit(spool_atexit);
out:
	bot_spin_unlock(&lock);
	return rc;
}

/* ---- the process record ------------------------------------------------------- */

void bot_spool_note_tuner(const char *dir, int abi, uint32_t nccl_version, uint8_t policy,
			  uint32_t flags, uint64_t table_digest, bot_nccl_logger_t log)
{
	if (bot_spool_setup(dir, table_digest, log) < 0)
		return;
	bot_spin_lock(&lock);
	if (!proc_comms)
		proc_policy = policy;
	if (proc_comms < UINT32_MAX)
		proc_comms++;
	if (abi > 0 && (uint32_t)abi > proc_tuner_abi)
		proc_tuner_abi = (uint32_t)abi;
	if (!proc_nccl)
		proc_nccl = nccl_version;
	proc_flags |= flags & (BOT_SPOOL_PF_TABLE | BOT_SPOOL_PF_PRIOR);
	changes++;
	bot_spin_unlock(&lock);
}

int bot_spool_nccl_known(void)
{
	uint32_t v;

	bot_spin_lock(&lock);
	v = proc_nccl;
	bot_spin_unlock(&lock);
	return v != 0;
}

void bot_spool_note_profiler(int abi)
{
	uint32_t old = __atomic_load_n(&proc_prof_abi, __ATOMIC_RELAXED);

	if (abi <= 0 || (uint32_t)abi <= old)
		return;
	bot_spin_lock(&lock);
	if ((uint32_t)abi > proc_prof_abi) {
		__atomic_store_n(&proc_prof_abi, (uint32_t)abi, __ATOMIC_RELAXED);
		changes++;
	}
	bot_spin_unlock(&lock);
}

void bot_spool_note_measured(void)
{
	if (__atomic_load_n(&proc_measured, __ATOMIC_RELAXED))
		return;
	bot_spin_lock(&lock);
	if (!proc_measured) {
		__atomic_store_n(&proc_measured, 1, __ATOMIC_RELAXED);
		changes++;
	}
	bot_spin_unlock(&lock);
}

/* Lock held: the process record into the rewrite's buffer, when the tuner
 * noted a communicator. */
static void buf_rec(const struct bot_spool_rec *r, void *arg);

static void proc_emit_locked(void *b)
{
	struct bot_spool_rec r;

	if (!proc_comms)
		return;
	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_PROC;
	r.arm = r.auto_arm = r.decided = BOT_SPOOL_ARM_NONE;
	r.policy = proc_policy;
	r.nccl_version = proc_nccl;
	r.tuner_abi = proc_tuner_abi;
	r.profiler_abi = __atomic_load_n(&proc_prof_abi, __ATOMIC_RELAXED);
	r.comms = proc_comms;
	r.proc_flags = proc_flags |
		       (__atomic_load_n(&proc_measured, __ATOMIC_RELAXED) ? BOT_SPOOL_PF_MEASURED : 0);
	buf_rec(&r, b);
}

void bot_spool_add(const struct bot_spool_rec *r)
{
	bot_spin_lock(&lock);
	store_add(&samples, r, BOT_SPOOL_MAX_SAMPLES);
	bot_spin_unlock(&lock);
}

/* ---- the writer thread ---------------------------------------------------- */

/* Lock held: nothing live, nothing asked, everything tried. */
static int writer_idle_locked(void)
{
	return !nlive && __atomic_load_n(&requests, __ATOMIC_ACQUIRE) ==
				 __atomic_load_n(&served, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&tried_changes, __ATOMIC_ACQUIRE) == changes;
}

static void *writer_main(void *arg)
{
	uint64_t next = bot_now_ns() + period_ns;

	(void)arg;
	prctl(PR_SET_NAME, "nccl-bot-spool", 0, 0, 0);
	for (;;) {
		uint32_t seen = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
		uint64_t req = __atomic_load_n(&requests, __ATOMIC_ACQUIRE);
		uint64_t now = bot_now_ns();

		if (__atomic_load_n(&closing, __ATOMIC_ACQUIRE))
			break;
		if (req != __atomic_load_n(&served, __ATOMIC_RELAXED) || now >= next) {
			flush();
			__atomic_store_n(&served, req, __ATOMIC_RELEASE);
			futex_wake(&done_word);
			next = bot_now_ns() + period_ns;
			continue;
		}
		bot_spin_lock(&lock);
		if (writer_idle_locked()) {
			writer_on = 0;
			bot_spin_unlock(&lock);
			return NULL;
		}
		bot_spin_unlock(&lock);
		futex_wait(&wake_word, seen, next - now);
	}
	bot_spin_lock(&lock);
	writer_on = 0;
	bot_spin_unlock(&lock);
	return NULL;
}

/* Start the writer (writer_on already set). Every signal blocked: the
 * thread inherits this thread's mask, and handles none. */
static void writer_start(void)
{
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;
	int rc = EAGAIN;

	if (!no_thread && !(rc = pthread_attr_init(&a))) {
		rc = pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, &old);
		if (!rc)
			rc = pthread_create(&t, &a, writer_main, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&a);
	}
	if (!rc)
		return;
	bot_spin_lock(&lock);
	writer_on = 0;
	writer_failed = 1;
	bot_spin_unlock(&lock);
	if (logger)
		logger(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		       "nccl-bot: spool %s: cannot start the writer thread: %s (the spool is "
		       "written at finalize and exit only; decisions are unaffected)",
		       path ? path : "?", strerror(rc));
}

void bot_spool_register(void *obj, bot_spool_summaries_fn fn)
{
	pid_t pid = getpid();
	int start = 0;

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
	changes++;
	if (ready && pid == owner_pid && !writer_on && !writer_failed &&
	    !__atomic_load_n(&closing, __ATOMIC_ACQUIRE)) {
		writer_on = 1;
		start = 1;
	}
	bot_spin_unlock(&lock);
	if (start)
		writer_start();
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
			changes++;
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

/* A WARN: measurements are being lost, and a job run with NCCL_DEBUG=WARN
 * (the level most jobs run at) must see it, as it sees a refused
 * NCCL_BOT_* value (tuner/env.c). Once until a rewrite succeeds again
 * (spool_written says so, so that the WARN is never the last word on a
 * file that was written after all), and SPOOL_FAILURES_SAID times per
 * process at most. Both run under `writing`. */
static void spool_fail(const char *what, int err)
{
	if (!logger || logged_failure || failures_said >= SPOOL_FAILURES_SAID)
		return;
	logged_failure = 1;
	failures_said++;
	logger(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
	       "nccl-bot: spool %s: %s%s%s (measurements of this process are not kept unless a "
	       "later rewrite succeeds; decisions are unaffected)", path ? path : "?", what,
	       err ? ": " : "", err ? strerror(err) : "");
}

static void spool_written(void)
{
	if (!logged_failure)
		return;
	logged_failure = 0;
	if (logger)
		logger(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		       "nccl-bot: spool %s: written after all (an earlier rewrite failed; the "
		       "measurements of this process are kept)", path ? path : "?");
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

/* One rewrite, by the writer or, without one, by the thread that finalizes
 * or exits, after waiting up to ~5 s for a rewrite already running (two
 * meet only at exit, or without a writer). Nothing is written when the file
 * would come out the same as the last one written. */
static int flush(void)
{
	static struct view vs, vm;	/* under `writing` */
	struct buf b = { 0 };
	struct bot_spool_hdr h;
	uint8_t hdr[BOT_SPOOL_HDR_SIZE], trailer[BOT_SPOOL_TRAILER_SIZE] = { 0 };
	uint64_t t0 = bot_now_ns(), took, nrec;
	uint32_t crc;
	int fd, rc = -1;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || getpid() != owner_pid)
		return -1;
	while (__atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, 1000000 };

		if (bot_now_ns() - t0 > 5000000000ull)
			return -1;
		nanosleep(&ts, NULL);
	}
	memset(&h, 0, sizeof(h));
	bot_spin_lock(&lock);
	took = changes;
	if (took == __atomic_load_n(&written_changes, __ATOMIC_RELAXED) && !nlive) {
		/* nothing added, nothing live: the file is current */
		bot_spin_unlock(&lock);
		__atomic_store_n(&tried_changes, took, __ATOMIC_RELEASE);
		rc = 0;
		goto out;
	}
	view_take(&vs, &samples);
	view_take(&vm, &summaries);
	for (size_t i = 0; i < nlive; i++)
		live[i].fn(live[i].obj, buf_rec, &b);
	proc_emit_locked(&b);
	h.flags = (samples.dropped ? BOT_SPOOL_HF_SAMPLES_DROPPED : 0) |
		  (summaries.dropped ? BOT_SPOOL_HF_SUMMARIES_DROPPED : 0);
	h.table_digest = digest;
	bot_spin_unlock(&lock);
	__atomic_store_n(&tried_changes, took, __ATOMIC_RELEASE);
	if (b.oom) {
		spool_fail("building the file", ENOMEM);
		goto out;
	}
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = vs.n + vm.n + b.n / BOT_SPOOL_REC_SIZE;
	if (!h.nrecords && !h.flags && !written_nrec) {
		/* nothing measured and no tuner noted (our profiler alone: the
		 * user's or the image's tuner): no file (formats.md 9, "Who
		 * writes a file"); an empty one counted as a spool file of the
		 * step everywhere files are counted */
		__atomic_store_n(&written_changes, took, __ATOMIC_RELEASE);
		rc = 0;
		goto out;
	}
	strncpy(h.build_id, "nccl-bot " PACKAGE_VERSION, BOT_SPOOL_BUILD_ID_SIZE);
	h.host_hash = host_hash;
	h.pid = (uint32_t)owner_pid;
	bot_spool_pack_hdr(hdr, &h);
	crc = bot_spool_crc32c(0, hdr, sizeof(hdr));
	crc = view_crc(crc, &vs);
	crc = view_crc(crc, &vm);
	crc = bot_spool_crc32c(crc, b.p, b.n);
	nrec = h.nrecords;
	if (nrec + 1 == written_nrec && crc == written_crc) {
		/* live summaries only, and they did not move */
		__atomic_store_n(&written_changes, took, __ATOMIC_RELEASE);
		rc = 0;
		goto out;
	}
	trailer[0] = (uint8_t)crc;
	trailer[1] = (uint8_t)(crc >> 8);
	trailer[2] = (uint8_t)(crc >> 16);
	trailer[3] = (uint8_t)(crc >> 24);
	if (dir_fd < 0) {
		dir_fd = open(dir_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir_fd < 0) {
			int e = errno;
			char one;

			/* readlink, not lstat: glibc 2.28's symbols (test_so_deps) */
			/* a link is said as one, without ELOOP's or ENOTDIR's
			 * text ("Not a directory": it may well name one) */
			if ((e == ELOOP || e == ENOTDIR) && readlink(dir_path, &one, 1) >= 0)
				spool_fail("opening the directory: a symbolic link, not followed", 0);
			else
				spool_fail("opening the directory", e);
			goto out;
		}
	}

	/* a fresh file of ours: whatever sits under the temporary name goes.
	 * The steps are said as what they do for the file: "unlink: Read-only
	 * file system" (a read-only bind of the spool in a container) read as
	 * if something of the user's were being removed */
	if (unlinkat(dir_fd, tmp_name, 0) && errno != ENOENT) {
		int e = errno;

		spool_fail(e == EROFS ? "creating the file" :
			   "removing a stale temporary file before writing it", e);
		goto out;
	}
	fd = openat(dir_fd, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		spool_fail("creating the file", errno);
		goto out;
	}
	if (write_all(fd, hdr, sizeof(hdr)) || view_write(fd, &vs) || view_write(fd, &vm) ||
	    (b.n && write_all(fd, b.p, b.n)) || write_all(fd, trailer, sizeof(trailer)) ||
	    fsync(fd)) {
		int e = errno;

		close(fd);
		unlinkat(dir_fd, tmp_name, 0);
		spool_fail("write", e);
		goto out;
	}
	if (close(fd)) {
		int e = errno;

		unlinkat(dir_fd, tmp_name, 0);
		spool_fail("close", e);
		goto out;
	}
	if (renameat(dir_fd, tmp_name, dir_fd, name)) {
		int e = errno;

		unlinkat(dir_fd, tmp_name, 0);
		spool_fail("rename", e);
		goto out;
	}
	/* the rename itself is durable only once the directory is */
	if (fsync(dir_fd) && errno != EINVAL) {
		spool_fail("fsync of the directory", errno);
		goto out;
	}
	written_nrec = nrec + 1;
	written_crc = crc;
	__atomic_store_n(&written_changes, took, __ATOMIC_RELEASE);
	spool_written();
	rc = 0;
out:
	free(b.p);
	__atomic_clear(&writing, __ATOMIC_RELEASE);
	return rc;
}

int bot_spool_flush(void)
{
	uint64_t mine = 0, t0;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || getpid() != owner_pid)
		return -1;
	/* nothing added or retired since the last rewrite: no wait at all */
	bot_spin_lock(&lock);
	if (changes == __atomic_load_n(&written_changes, __ATOMIC_ACQUIRE)) {
		bot_spin_unlock(&lock);
		return 0;
	}
	if (writer_on)
		mine = __atomic_add_fetch(&requests, 1, __ATOMIC_ACQ_REL);
	bot_spin_unlock(&lock);
	if (!mine)
		return flush();	/* no writer: here, as at exit */
	futex_wake(&wake_word);
	t0 = bot_now_ns();
	for (;;) {
		uint32_t seen = __atomic_load_n(&done_word, __ATOMIC_ACQUIRE);
		uint64_t waited = bot_now_ns() - t0;

		if (__atomic_load_n(&served, __ATOMIC_ACQUIRE) >= mine)
			return 0;
		if (waited >= BOT_SPOOL_FINALIZE_WAIT_NS)
			return -1;	/* the writer finishes it, or exit does */
		futex_wait(&done_word, seen, BOT_SPOOL_FINALIZE_WAIT_NS - waited);
	}
}
