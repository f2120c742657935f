/*
 * profiler.c - profiler plugin v4..v6: sampled GPU timing of collectives
 * (DESIGN "Measurement", design review M5, M6, S3, S4), linked per comm to
 * the tuner.
 *
 * Link. NCCL calls profiler init and then tuner init for the same
 * communicator on the same thread with no other comm's init in between (ABI
 * notes section 3), so a "last profiler init" per OS thread (a small global
 * table keyed by the thread id: no TLS, see struct link_ent) read by the
 * tuner's init links the two: the rank, and the comm's measurement object.
 *
 * Windows. The event mask is process-global and NCCL copies it into each
 * task at the API call, before the tuner runs. So the tuner's getCollInfo
 * of call k decides whether call k+1 opens a window of W calls
 * (NCCL_BOT_WINDOW, 16..64, default 32), every 100 W calls of the comm
 * (duty cycle 1%), at a phase taken from the commId so that every rank of
 * the comm measures the same calls (arrival skew is removed later by the
 * minimum over ranks). The mask is Coll|KernelCh while any window is open
 * and 0 otherwise; the plugin owns it and writes it at every init and at
 * every window transition. Because the mask is process-wide, every comm's
 * collectives emit events while any comm's window is open, so the duty
 * cycle is also bounded per process, by time: after the mask has been on
 * for T, no window opens for 98 T (a comm whose turn falls in that quiet
 * time skips a period). Ranks of one comm then mostly, not always, measure
 * the same calls; the minimum over ranks pairs those that match. A graph capture seen in a GroupApi/CollApi
 * event (v5+) drops every open window at once, and a window whose comm
 * stopped calling is closed after 2 s by the next event's check. This is
 * measurement, not a decision: counters and the clock are fine here.
 *
 * Events. A Coll at or above the size threshold, not captured, with a
 * parseable func/algo/proto, becomes a refcounted record: one reference for
 * its stopEvent (which only means "enqueued") and one for its KernelCh
 * children, which arrive later on the proxy thread, possibly after the
 * tuner's finalize; the last reference turns it into a spool sample:
 * duration = latest KernelChStop pTimer - earliest KernelCh start pTimer,
 * attributed to the descriptor's algo/proto (not the tuner's decision),
 * labelled (aggregate, channels missing, out of range, first use of the
 * algorithm) and joined with the cost row the tuner side copied for that
 * context during a window. Handles are tagged in their first 8 bytes; API
 * events get static sentinels (NCCL keeps passing them as parents after
 * their stop). Nothing is ever returned as an error.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/table.h"
#include "policies/context.h"
#include "policies/policy.h"
#include "tuner/env.h"
#include "tuner/profiler.h"
#include "tuner/spool.h"
#include "tuner/tuner.h"

#define TAG_COLL 0x6c6c6f632d746f62ull		/* "bot-coll" */
#define TAG_KCH 0x68636b2d2d746f62ull		/* "bot--kch" */
#define TAG_GROUP 0x70726f672d746f62ull		/* "bot-grop" */
#define TAG_API 0x6970612d2d746f62ull		/* "bot--api" */

#define NSLOTS 128		/* cost rows per comm, by (coll, bucket) */
#define GROUP_MAX 16		/* Colls tracked per group for aggregates */
#define MAXCH 64
#define STUCK_NS 2000000000ull	/* a window open this long is closed, and a record
				 * still missing KernelCh events this long after its
				 * Coll is completed */
#define SCAN_NS 100000000ull	/* at most one scan for both per 100 ms */

struct api_sentinel {
	uint64_t tag;
	int captured;
};

static struct api_sentinel api_plain = { TAG_API, 0 }, api_captured = { TAG_API, 1 };

struct slot {
	uint16_t key;		/* coll * 256 + bucket + 1; 0 = empty; published last */
	uint8_t auto_arm, decided;
	float cost[BOT_NARMS];
};

struct bot_meas {
	/* first: the tuner's pointer; alone on its cache line, so the proxy
	 * thread's atomic refs updates never bounce the tuner's counter */
	_Alignas(64) struct bot_meas_hot hot;
	_Alignas(64) int refs;
	uint8_t abi, policy;
	uint64_t comm_id;
	uint32_t rank, nranks, nnodes;
	uint64_t min_bytes;
	uint32_t window, period;
	/* window state: tuner thread, except win_counted/win_open_ns (win_lock) */
	uint64_t ncalls;		/* getCollInfo calls, as of the last transition */
	uint64_t next;			/* ncalls of the next transition */
	uint32_t win_left;
	uint64_t win_start;
	uint32_t cap_skip, cap_level;	/* capture back-off: windows to skip */
	int cap_seen;			/* set by a captured API event */
	int win_counted;
	uint64_t win_open_ns;
	struct bot_meas *all_prev, *all_next;	/* registry, win_lock */
	struct slot slot[NSLOTS];
	uint32_t algo_seen;
	uint64_t calls[BOT_NCOLL][BOT_NBUCKETS];	/* window calls (tuner thread) */
	uint32_t captured[BOT_NCOLL][BOT_NBUCKETS];
	char lock;			/* live list */
	int finalized;			/* profiler finalize ran (lock) */
	struct coll *live;
};

_Static_assert(offsetof(struct bot_meas, refs) >= sizeof(struct bot_meas_hot) &&
		       offsetof(struct bot_meas, refs) % 64 == 0, "hot on its own cache line");

struct kch {
	uint64_t tag;
	struct coll *coll;
	uint64_t start, stop;
	uint8_t state;			/* 1 started, 2 stop recorded, 4 stopped */
};

struct group {
	uint64_t tag;
	int refs;
	int n;
	struct {
		uint8_t coll, arm;
		uint64_t nbytes;
	} e[GROUP_MAX];
};

/* A Coll record. Its memory is type-stable: records come from a
 * process-wide pool and go back to it, never to free(), while the library is
 * loaded, so a late or stray KernelCh event (a proxy shared with other
 * comms outlives this comm's profiler finalize) only ever touches a record,
 * never freed memory. A record that completed while KernelCh events could
 * still come (abandoned at finalize, or completed by the stuck scan) is
 * "dead": events on it are ignored, and it is reused only after
 * QUARANTINE_NS (or when the quarantine holds QUARANTINE_MAX records). */
struct coll {
	uint64_t tag;
	struct bot_meas *m;
	struct group *g;
	struct coll *prev, *next;	/* m->live (m->lock); pool lists (pool_lock) */
	struct coll *pool_all;		/* every record ever allocated */
	int refs;			/* Coll stop + "KernelCh children done" */
	int kref;			/* 1 while the KernelCh reference is held */
	int coll_stopped;
	int abandoned;			/* finalize: no sample */
	int timed_out;			/* stuck scan: channels missing */
	int dead;			/* completed; events ignored */
	int nstarted, nstopped;
	uint8_t coll, arm, nch;
	uint64_t nbytes, seq;
	uint64_t born_ns, died_ns;
	struct kch ch[MAXCH];
};

/* Link from profiler init to the tuner init that follows on the same OS
 * thread (ABI notes section 3). A small global table keyed by the thread
 * id, not thread-local storage: TLS in a dlopen()ed library either needs
 * __tls_get_addr (a DT_NEEDED on the dynamic loader) or, initial-exec, the
 * static TLS surplus, which a big process (PyTorch) can exhaust on glibc
 * 2.28 ("cannot allocate memory in static TLS block"), and NCCL would then
 * run without the plugin. Entries are overwritten per thread, evicted
 * oldest first, and cleared when their measurement object dies. */
#define LINK_SLOTS 64
struct link_ent {
	pid_t tid;			/* 0 = free */
	uint64_t age;
	struct bot_prof_link l;
	struct bot_meas *meas;		/* from profiler init, not referenced */
	struct bot_meas *taken;		/* link_take -> tuner_attach */
};
static struct link_ent links[LINK_SLOTS];
static uint64_t link_age;
static char link_lock;

#define QUARANTINE_NS (60ull * 1000000000ull)
#define QUARANTINE_MAX 4096
static char pool_lock;
/* Never freed: the library is linked -z nodelete (stays mapped after
 * dlclose), so the pool stays reachable and late events stay safe. */
static struct coll *pool_free, *pool_all;
static struct coll *quar_head, *quar_tail;	/* dead records, oldest first */
static unsigned quar_n;

static char win_lock;
static int open_windows;
static uint64_t busy_since_ns;	/* open_windows went 0 -> 1 (win_lock) */
static uint64_t quiet_until_ns;	/* no window opens before this (win_lock) */
static int *mask_ptr;
static struct bot_meas *all_meas;
static uint64_t last_scan_ns;

/* Test hook, not a setting (deliberately absent from doc/formats.md):
 * NCCL_BOT_TEST_STUCK_NS (tuner/env.h), read at every profiler init,
 * replaces STUCK_NS for records (not for windows) and caps SCAN_NS at the
 * same value, so that tests/unit/test_spool.c sees overdue records
 * completed without waiting 2 s. Unset or not a number: the defaults.
 * Measurement only: decisions never read it. */
static uint64_t rec_stuck_ns = STUCK_NS, scan_ns = SCAN_NS;
/* Test hook too: NCCL_BOT_TEST_NO_QUIET=1 at profiler init turns the
 * process-wide quiet time off, so that tests counting windows do not depend
 * on how long the scheduler kept a window open (one preemption of a few ms
 * inside a window would otherwise silence the rest of a short test). */
static int no_quiet;

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

/* win_lock held */
static void set_mask_locked(void)
{
	if (mask_ptr)
		__atomic_store_n(mask_ptr, open_windows > 0 ? (int)BOT_PROF_MASK_ON : 0,
				 __ATOMIC_RELAXED);
}

/* win_lock held: the mask was on from busy_since_ns until now; stay quiet
 * 98 times as long, a duty cycle of ~1% for the process. (A lone comm calling
 * at a steady rate reaches its next window after 99 times its window's
 * length, so this never skips its windows.) */
static void windows_quiet_locked(void)
{
	uint64_t now = now_ns();

	if (__atomic_load_n(&no_quiet, __ATOMIC_RELAXED))
		return;
	quiet_until_ns = now + (now - busy_since_ns) * (BOT_PROF_PERIOD_FACTOR - 2);
}

/* win_lock held */
static void window_uncount(struct bot_meas *m)
{
	if (!m->win_counted)
		return;
	__atomic_store_n(&m->win_counted, 0, __ATOMIC_RELEASE);
	if (open_windows > 0 && --open_windows == 0)
		windows_quiet_locked();
}

/* ---- link ------------------------------------------------------------------ */

static pid_t thread_id(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* link_lock held: this thread's entry, or NULL */
static struct link_ent *link_find(pid_t tid)
{
	for (unsigned i = 0; i < LINK_SLOTS; i++)
		if (links[i].tid == tid)
			return &links[i];
	return NULL;
}

/* Profiler init: this thread's entry (replacing what it held), else a free
 * or the oldest one. */
static void link_put(const struct bot_prof_link *l, struct bot_meas *m)
{
	pid_t tid = thread_id();
	struct link_ent *e;

	spin_lock(&link_lock);
	e = link_find(tid);
	if (!e) {
		e = &links[0];
		for (unsigned i = 0; i < LINK_SLOTS; i++) {
			if (!links[i].tid) {
				e = &links[i];
				break;
			}
			if (links[i].age < e->age)
				e = &links[i];
		}
	}
	e->tid = tid;
	e->age = ++link_age;
	e->l = *l;
	e->meas = m;
	e->taken = NULL;
	spin_unlock(&link_lock);
}

/* A measurement object died: no entry may hand it out. */
static void link_forget(struct bot_meas *m)
{
	spin_lock(&link_lock);
	for (unsigned i = 0; i < LINK_SLOTS; i++) {
		if (links[i].meas == m)
			links[i].meas = NULL;
		if (links[i].taken == m)
			links[i].taken = NULL;
	}
	spin_unlock(&link_lock);
}

int bot_prof_link_take(uint64_t comm_id, int by_id, uint32_t nranks, uint32_t nnodes)
{
	pid_t tid = thread_id();
	struct link_ent *e;
	int rank = -1;

	spin_lock(&link_lock);
	e = link_find(tid);
	if (e) {
		if (e->l.valid && (by_id ? e->l.comm_id == comm_id :
				   e->l.nranks == nranks && e->l.nnodes == nnodes)) {
			rank = e->l.rank;
			e->taken = e->meas;
		} else {
			e->taken = NULL;
		}
		e->l.valid = 0;
		e->meas = NULL;
		if (!e->taken)
			e->tid = 0;
	}
	spin_unlock(&link_lock);
	return rank;
}

static void meas_unref(struct bot_meas *m);

/* A reference to m unless its count already reached 0. */
static int meas_tryref(struct bot_meas *m)
{
	int r = __atomic_load_n(&m->refs, __ATOMIC_RELAXED);

	while (r > 0 && !__atomic_compare_exchange_n(&m->refs, &r, r + 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_RELAXED))
		;
	return r > 0;
}

struct bot_meas_hot *bot_prof_tuner_attach(void)
{
	pid_t tid = thread_id();
	struct link_ent *e;
	struct bot_meas *m = NULL;

	spin_lock(&link_lock);
	e = link_find(tid);
	if (e) {
		m = e->taken;
		e->taken = NULL;
		e->tid = 0;
		/* a reference only while it is alive (never from 0) */
		if (m && !meas_tryref(m))
			m = NULL;
	}
	spin_unlock(&link_lock);
	return m ? &m->hot : NULL;
}

void bot_prof_tuner_detach(struct bot_meas_hot *h)
{
	if (!h)
		return;
	meas_unref((struct bot_meas *)h);
	bot_spool_flush();
}

/* ---- measurement objects ---------------------------------------------------- */

static void meas_unref(struct bot_meas *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL))
		return;
	spin_lock(&win_lock);
	window_uncount(m);
	if (m->all_prev)
		m->all_prev->all_next = m->all_next;
	else if (all_meas == m)
		all_meas = m->all_next;
	if (m->all_next)
		m->all_next->all_prev = m->all_prev;
	set_mask_locked();
	spin_unlock(&win_lock);
	link_forget(m);
	bot_spool_retire(m);
	free(m);
}

/* Whether this process measures, and with what: from the step table when
 * there is one (flag BOT_TABLE_F_MEASURE, min_bytes_log2, policy, digest),
 * else from the environment, read with the same grammar as the tuner's
 * (tuner/env.h), so the two agree. Always needs NCCL_BOT_SPOOL; on profiler
 * v4 (NCCL 2.27, where a CUDA graph capture cannot be seen) also
 * NCCL_BOT_MEASURE_V4=1. */
static struct bot_meas *meas_new(const struct bot_env *env, uint64_t comm_id, int abi,
				 int nnodes, int nranks, int rank, bot_nccl_logger_t log)
{
	static char logged_v4;
	const char *spool = getenv(BOT_ENV_SPOOL);
	const char *text = getenv(BOT_ENV_TABLE);
	unsigned min_log2;
	uint64_t digest = 0;
	uint8_t policy = 0;
	struct bot_meas *m;

	if (!spool || !*spool || nranks < 1 || rank < 0 || rank >= nranks)
		return NULL;
	if (abi < 5 && !env->measure_v4) {
		if (log && !__atomic_exchange_n(&logged_v4, 1, __ATOMIC_RELAXED))
			log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
			    "nccl-bot: profiler v%d (NCCL 2.27) cannot see CUDA graph captures: "
			    "not measuring (set NCCL_BOT_MEASURE_V4=1 if this job captures no "
			    "graphs); decisions are unaffected", abi);
		return NULL;
	}
	if (text && *text) {
		struct bot_table *t = malloc(sizeof(*t));
		int ok;

		if (!t)
			return NULL;
		ok = bot_table_decode(text, strlen(text), t) == BOT_TABLE_OK &&
		     (t->flags & BOT_TABLE_F_MEASURE);
		if (ok) {
			min_log2 = t->min_bytes_log2 < 63 ? t->min_bytes_log2 : 63;
			/* as the tuner: an unknown policy id is auto */
			policy = t->policy < BOT_NPOLICY ? t->policy : 0;
			digest = t->digest;
		}
		free(t);
		if (!ok)
			return NULL;
	} else {
		policy = (uint8_t)env->policy;
		min_log2 = env->min_bytes_log2;
	}
	if (bot_spool_setup(spool, digest, log) < 0)
		return NULL;
	m = aligned_alloc(64, (sizeof(*m) + 63) & ~(size_t)63);
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->refs = 1;
	m->abi = (uint8_t)abi;
	m->policy = policy;
	m->comm_id = comm_id;
	m->rank = (uint32_t)rank;
	m->nranks = (uint32_t)nranks;
	m->nnodes = nnodes < 1 ? 1 : (uint32_t)nnodes;
	m->min_bytes = 1ull << min_log2;
	m->window = env->window;
	m->period = m->window * BOT_PROF_PERIOD_FACTOR;
	/* first arming point: same on every rank of the comm */
	m->next = 1 + bot_mix64(comm_id) % (m->period - m->window);
	m->hot.left = m->next;
	spin_lock(&win_lock);
	m->all_next = all_meas;
	if (all_meas)
		all_meas->all_prev = m;
	all_meas = m;
	spin_unlock(&win_lock);
	bot_spool_register(m);
	return m;
}

int bot_prof_init(void **ctx, int abi, uint64_t comm_id, int *mask, int nnodes, int nranks,
		  int rank, bot_nccl_logger_t log)
{
	struct bot_meas *m;
	struct bot_prof_link l;
	struct bot_env env;
	uint64_t stuck;

	if (!bot_renv_test_stuck_ns(&stuck))
		stuck = STUCK_NS;
	__atomic_store_n(&rec_stuck_ns, stuck, __ATOMIC_RELAXED);
	__atomic_store_n(&scan_ns, stuck < SCAN_NS ? stuck : SCAN_NS, __ATOMIC_RELAXED);
	__atomic_store_n(&no_quiet, bot_renv_test_no_quiet(), __ATOMIC_RELAXED);
	bot_renv_read(&env, bot_renv_has_table(), log);
	m = meas_new(&env, comm_id, abi, nnodes, nranks, rank, log);

	memset(&l, 0, sizeof(l));
	l.comm_id = comm_id;
	l.nranks = nranks < 0 ? 0 : (uint32_t)nranks;
	l.nnodes = nnodes < 0 ? 0 : (uint32_t)nnodes;
	l.rank = rank;
	l.valid = 1;
	link_put(&l, m);
	spin_lock(&win_lock);
	if (mask)
		mask_ptr = mask;
	set_mask_locked();
	spin_unlock(&win_lock);
	if (m && log)
		log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		    "nccl-bot: profiler v%d comm %016llx rank %d: measuring windows of %u calls "
		    "every %u calls at or above %llu bytes", abi, (unsigned long long)comm_id,
		    rank, m->window, m->period, (unsigned long long)m->min_bytes);
	/* No memory or measurement off only costs learning: success, no context. */
	*ctx = m;
	return BOT_NCCL_SUCCESS;
}

/* ---- windows (tuner thread) -------------------------------------------------- */

/* 1 when the window opened; 0 in the process's quiet time. */
static int window_open(struct bot_meas *m)
{
	uint64_t now = now_ns();

	spin_lock(&win_lock);
	if (open_windows == 0 && now < quiet_until_ns) {
		spin_unlock(&win_lock);
		return 0;
	}
	if (open_windows == 0)
		busy_since_ns = now;
	m->win_open_ns = now;
	__atomic_store_n(&m->win_counted, 1, __ATOMIC_RELEASE);
	open_windows++;
	set_mask_locked();
	spin_unlock(&win_lock);
	return 1;
}

static void window_close(struct bot_meas *m)
{
	spin_lock(&win_lock);
	window_uncount(m);
	set_mask_locked();
	spin_unlock(&win_lock);
}

/* A capture was seen: drop every open window now (M6c). */
static void windows_drop_all(void)
{
	spin_lock(&win_lock);
	for (struct bot_meas *m = all_meas; m; m = m->all_next)
		window_uncount(m);
	if (open_windows > 0)
		windows_quiet_locked();
	open_windows = 0;
	set_mask_locked();
	spin_unlock(&win_lock);
}

static unsigned live_drop(struct bot_meas *m, int (*pick)(struct coll *r, uint64_t now),
			  uint64_t now);
static int pick_stuck(struct coll *r, uint64_t now);

/* Close windows whose comm stopped calling, and complete records whose
 * KernelCh events are overdue, labelled channels-missing (rate-limited by
 * the clock). */
static void windows_scan(uint64_t now)
{
	struct bot_meas *stuck[16];
	unsigned nstuck = 0;

	if (now - __atomic_load_n(&last_scan_ns, __ATOMIC_RELAXED) <
	    __atomic_load_n(&scan_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&last_scan_ns, now, __ATOMIC_RELAXED);
	spin_lock(&win_lock);
	for (struct bot_meas *m = all_meas; m; m = m->all_next) {
		if (m->win_counted && now - m->win_open_ns > STUCK_NS)
			window_uncount(m);
		/* hold m across the unlocked drop (not one already dying) */
		if (nstuck < 16 && __atomic_load_n(&m->live, __ATOMIC_RELAXED) && meas_tryref(m))
			stuck[nstuck++] = m;
	}
	set_mask_locked();
	spin_unlock(&win_lock);
	for (unsigned i = 0; i < nstuck; i++) {
		live_drop(stuck[i], pick_stuck, now);
		meas_unref(stuck[i]);
	}
}

static struct slot *slot_find(struct bot_meas *m, unsigned coll, unsigned bucket, int insert)
{
	uint16_t key = (uint16_t)(coll * BOT_NBUCKETS + bucket + 1);
	unsigned h = (unsigned)(bot_mix64(key) % NSLOTS);

	for (unsigned i = 0; i < NSLOTS; i++) {
		struct slot *s = &m->slot[(h + i) % NSLOTS];
		uint16_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (k == key)
			return s;
		if (k == 0)
			return insert ? s : NULL;
	}
	return NULL;
}

/* A cost entry as the spool keeps it: -1 for unsupported, NaN, infinite or
 * at/above NCCL's search cap (3.6e9 us, never chosen by NCCL). */
static float cost_clean(float x)
{
	return !(x >= 0.0f) || x >= 3.6e9f ? -1.0f : x;
}

void bot_prof_collinfo(struct bot_tuner_ctx *c, int coll, size_t nbytes, float **table,
		       int numAlgo, int numProto, int *nChannels)
{
	struct bot_meas *m = (struct bot_meas *)c->meas;
	float *t = (float *)table, before[BOT_NARMS];
	int in_win, measure;

	m->ncalls = m->next;		/* hot.left counted down to this call */
	in_win = m->win_left > 0 && __atomic_load_n(&m->win_counted, __ATOMIC_ACQUIRE);
	measure = in_win && (unsigned)coll < BOT_NCOLL && t && nbytes >= m->min_bytes &&
		  numProto == BOT_NPROTO && numAlgo >= 1 && numAlgo <= BOT_NALGO;

	if (measure)
		for (int i = 0; i < BOT_NARMS; i++)
			before[i] = i < numAlgo * numProto ? t[i] : -1.0f;
	bot_tuner_decide(c, coll, nbytes, table, numAlgo, numProto, nChannels);
	if (in_win && (unsigned)coll < BOT_NCOLL) {
		uint64_t *p = &m->calls[coll][bot_tuner_bucket(nbytes)];

		__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
	if (measure) {
		unsigned bucket = bot_tuner_bucket(nbytes);
		struct slot *s = slot_find(m, (unsigned)coll, bucket, 1);
		int best = -1, decided = -1;

		for (int i = 0; i < BOT_NARMS; i++) {
			if (before[i] >= 0.0f && before[i] < 3.6e9f &&
			    (best < 0 || before[i] < before[best]))
				best = i;
			if (i < numAlgo * numProto && t[i] == 0.0f && before[i] != 0.0f)
				decided = i;
		}
		/* the first window call of a context fills its slot; the row is
		 * NCCL's model for the context and does not change after */
		if (s && !__atomic_load_n(&s->key, __ATOMIC_ACQUIRE)) {
			for (int i = 0; i < BOT_NARMS; i++)
				s->cost[i] = cost_clean(before[i]);
			s->auto_arm = best < 0 ? BOT_SPOOL_ARM_NONE : (uint8_t)best;
			s->decided = decided < 0 ? BOT_SPOOL_ARM_NONE : (uint8_t)decided;
			__atomic_store_n(&s->key, (uint16_t)(coll * BOT_NBUCKETS + bucket + 1),
					 __ATOMIC_RELEASE);
		}
	}
	if (m->win_left > 0) {
		if (!in_win)
			m->win_left = 0;	/* dropped: capture, or closed as stuck */
		else
			m->win_left--;
		if (m->win_left == 0) {
			window_close(m);
			/* a capture seen during this window: skip 2^k windows, k <= 6 */
			if (__atomic_exchange_n(&m->cap_seen, 0, __ATOMIC_RELAXED)) {
				m->cap_skip = 1u << m->cap_level;
				if (m->cap_level < 6)
					m->cap_level++;
			} else {
				m->cap_level = 0;
			}
			m->next = m->win_start + m->period;
		} else {
			m->next = m->ncalls + 1;
		}
	} else {
		/* arming point: call ncalls decides that calls ncalls+1.. are measured */
		windows_scan(now_ns());
		m->win_start = m->ncalls;
		if (m->cap_skip) {
			m->cap_skip--;
			m->next = m->ncalls + m->period;
		} else if (window_open(m)) {
			m->win_left = m->window;
			m->next = m->ncalls + 1;
		} else {
			m->next = m->ncalls + m->period;
		}
	}
	m->hot.left = m->next - m->ncalls;
}

/* ---- descriptor parsing ------------------------------------------------------ */

/* NCCL's strings are literals with stable addresses: remember the last few
 * pointers (a racy cache is fine: a miss only parses again). */
struct str_cache {
	const char *p[8];
	int id[8];
	unsigned next;
};

static int cached_parse(struct str_cache *c, const char *s, int (*parse)(const char *))
{
	int id;
	unsigned i;

	if (!s)
		return -1;
	for (i = 0; i < 8; i++)
		if (__atomic_load_n(&c->p[i], __ATOMIC_ACQUIRE) == s)
			return __atomic_load_n(&c->id[i], __ATOMIC_RELAXED);
	id = parse(s);
	i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED) % 8;
	__atomic_store_n(&c->p[i], NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&c->id[i], id, __ATOMIC_RELAXED);
	__atomic_store_n(&c->p[i], s, __ATOMIC_RELEASE);
	return id;
}

static struct str_cache func_cache, algo_cache, proto_cache;

static int dtype_size(const char *s)
{
	static const struct {
		const char *name;
		int size;
	} t[] = {
		{ "ncclInt8", 1 }, { "ncclUint8", 1 }, { "Unknown", 1 }, { "ncclInt32", 4 },
		{ "ncclUint32", 4 }, { "ncclInt64", 8 }, { "ncclUint64", 8 },
		{ "ncclFloat16", 2 }, { "ncclFloat32", 4 }, { "ncclFloat64", 8 },
		{ "ncclBfloat16", 2 }, { "ncclFloat8e4m3", 1 }, { "ncclFloat8e5m2", 1 },
	};

	if (!s)
		return 0;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].name))
			return t[i].size;
	return 0;
}

/* The tuner's nBytes for a collective: count x type size, x nranks for
 * AllGather/ReduceScatter (count is per rank). 0 when unknown. */
static uint64_t coll_nbytes(const struct bot_meas *m, int coll, size_t count, const char *dtype)
{
	uint64_t n = (uint64_t)count * (uint64_t)dtype_size(dtype);

	if (coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER)
		n *= m->nranks;
	return n;
}

/* ---- samples ------------------------------------------------------------------ */

static void sample_init(struct bot_spool_rec *r, struct bot_meas *m, int coll, int arm,
			uint64_t nbytes)
{
	struct slot *s = slot_find(m, (unsigned)coll, bot_tuner_bucket(nbytes), 0);

	memset(r, 0, sizeof(*r));
	r->kind = BOT_SPOOL_SAMPLE;
	r->coll = (uint8_t)coll;
	r->arm = (uint8_t)arm;
	r->policy = __atomic_load_n(&m->policy, __ATOMIC_RELAXED);
	r->comm_id = m->comm_id;
	r->rank = m->rank;
	r->nranks = m->nranks;
	r->nnodes = m->nnodes > m->nranks ? m->nranks : m->nnodes;
	r->nbytes = nbytes > BOT_SPOOL_MAX_BYTES ? BOT_SPOOL_MAX_BYTES : nbytes;
	if (s) {
		memcpy(r->cost, s->cost, sizeof(r->cost));
		r->auto_arm = s->auto_arm;
		r->decided = s->decided;
	} else {
		for (int i = 0; i < BOT_NARMS; i++)
			r->cost[i] = -1.0f;
		r->auto_arm = r->decided = BOT_SPOOL_ARM_NONE;
		r->flags |= BOT_SPOOL_F_NO_COST;
	}
	if (!(__atomic_fetch_or(&m->algo_seen, 1u << bot_arm_algo(arm), __ATOMIC_RELAXED) &
	      (1u << bot_arm_algo(arm))))
		r->flags |= BOT_SPOOL_F_FIRST_ALGO;
}

static void group_unref(struct group *g)
{
	if (g && !__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL))
		free(g);
}

/* ---- the record pool ---------------------------------------------------------- */

static struct coll *coll_alloc(uint64_t now)
{
	struct coll *r = NULL;

	spin_lock(&pool_lock);
	if (pool_free) {
		r = pool_free;
		pool_free = r->next;
	} else if (quar_head && (quar_n > QUARANTINE_MAX ||
				 now - quar_head->died_ns > QUARANTINE_NS)) {
		r = quar_head;
		quar_head = r->next;
		if (!quar_head)
			quar_tail = NULL;
		quar_n--;
	}
	spin_unlock(&pool_lock);
	if (r) {
		struct coll *all = r->pool_all;

		/* the tag goes last: a stray event never sees a half-built record */
		__atomic_store_n(&r->tag, 0, __ATOMIC_RELEASE);
		memset((char *)r + sizeof(r->tag), 0, sizeof(*r) - sizeof(r->tag));
		r->pool_all = all;
		return r;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	spin_lock(&pool_lock);
	r->pool_all = pool_all;
	pool_all = r;
	spin_unlock(&pool_lock);
	return r;
}

/* Back to the pool. Dead records (events may still come) go to the
 * quarantine; others are reusable at once. */
static void coll_release(struct coll *r, int dead)
{
	spin_lock(&pool_lock);
	if (dead) {
		r->died_ns = now_ns();
		r->next = NULL;
		if (quar_tail)
			quar_tail->next = r;
		else
			quar_head = r;
		quar_tail = r;
		quar_n++;
	} else {
		r->next = pool_free;
		pool_free = r;
	}
	spin_unlock(&pool_lock);
}

static void free_coll(struct coll *r, int dead)
{
	struct bot_meas *m = r->m;

	spin_lock(&m->lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		m->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	spin_unlock(&m->lock);
	group_unref(r->g);
	r->g = NULL;
	r->m = NULL;
	coll_release(r, dead);
	meas_unref(m);
}

/* The last reference: turn the record into a sample (none when abandoned
 * at finalize). */
static void coll_complete(struct coll *r)
{
	struct bot_meas *m = r->m;
	struct bot_spool_rec s;
	uint64_t nbytes = r->nbytes, lo = UINT64_MAX, hi = 0, dur = 0;
	int same = 0, ok = 1, n = 0, nstopped;
	int timed_out = __atomic_load_n(&r->timed_out, __ATOMIC_ACQUIRE);
	int dead = timed_out || __atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE);

	/* from here on, late KernelCh events on this record are ignored */
	__atomic_store_n(&r->dead, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE)) {
		free_coll(r, 1);
		return;
	}
	if (r->g) {
		uint64_t sum = 0;

		for (int i = 0; i < r->g->n && i < GROUP_MAX; i++)
			if (r->g->e[i].coll == r->coll && r->g->e[i].arm == r->arm) {
				same++;
				sum += r->g->e[i].nbytes;
			}
		if (same > 1 || r->g->n > GROUP_MAX)
			nbytes = sum > nbytes ? sum : nbytes;
	}
	nstopped = __atomic_load_n(&r->nstopped, __ATOMIC_ACQUIRE);
	for (int c = 0; c < MAXCH; c++) {
		const struct kch *k = &r->ch[c];
		uint8_t st = __atomic_load_n(&k->state, __ATOMIC_ACQUIRE);

		if (!(st & 1))
			continue;
		n++;
		if ((st & 6) != 6 || k->stop <= k->start) {
			ok = 0;
			continue;
		}
		if (k->start < lo)
			lo = k->start;
		if (k->stop > hi)
			hi = k->stop;
	}
	sample_init(&s, m, r->coll, r->arm, nbytes);
	s.nchannels = r->nch;
	s.seq = r->seq;
	if (same > 1 || (r->g && r->g->n > GROUP_MAX))
		s.flags |= BOT_SPOOL_F_AGGREGATE;
	if (timed_out || n != r->nch || nstopped != r->nch)
		s.flags |= BOT_SPOOL_F_CHANNELS;
	if (!ok || hi <= lo) {
		s.flags |= BOT_SPOOL_F_RANGE;
	} else {
		float prior = s.cost[r->arm];

		dur = hi - lo;
		if (dur > BOT_SPOOL_MAX_NS) {
			dur = 0;
			s.flags |= BOT_SPOOL_F_RANGE;
		} else if (prior > 0.0f && ((float)dur < 0.05f * prior * 1000.0f ||
					    (float)dur > 20.0f * prior * 1000.0f)) {
			s.flags |= BOT_SPOOL_F_RANGE;
		}
	}
	s.duration_ns = dur;
	bot_spool_add(&s);
	free_coll(r, dead);
	bot_spool_tick();
}

static void coll_unref(struct coll *r)
{
	if (!__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
		coll_complete(r);
}

/* Drop the KernelCh reference, once, whoever gets here first: the last
 * channel's stop, the stuck scan, or finalize. */
static void coll_kref_drop(struct coll *r)
{
	if (__atomic_exchange_n(&r->kref, 0, __ATOMIC_ACQ_REL))
		coll_unref(r);
}

static void *coll_start(struct bot_meas *m, struct bot_nccl_prof_descr *d)
{
	int coll = cached_parse(&func_cache, d->coll.func, bot_coll_parse);
	int algo = cached_parse(&algo_cache, d->coll.algo, bot_algo_parse);
	int proto = cached_parse(&proto_cache, d->coll.proto, bot_proto_parse);
	struct group *g = d->coll.parentGroup;
	uint64_t nbytes, now;
	struct coll *r;

	if (coll < 0 || coll >= BOT_NCOLL || algo < 0 || proto < 0)
		return NULL;
	nbytes = coll_nbytes(m, coll, d->coll.count, d->coll.datatype);
	if (m->abi >= 5 && d->parentObj == &api_captured)
		return NULL;		/* captured calls are never measured */
	if (nbytes < __atomic_load_n(&m->min_bytes, __ATOMIC_RELAXED) || nbytes == 0)
		return NULL;
	now = now_ns();
	windows_scan(now);
	if (d->coll.nChannels == 0) {
		/* CollNet / multi-node NVLS: channels unknown; label and skip */
		struct bot_spool_rec s;

		sample_init(&s, m, coll, bot_arm(algo, proto), nbytes);
		s.flags |= BOT_SPOOL_F_CHANNELS;
		s.seq = d->coll.seqNumber;
		bot_spool_add(&s);
		return NULL;
	}
	r = coll_alloc(now);
	if (!r)
		return NULL;
	r->m = m;
	r->refs = 2;		/* stopEvent + all KernelCh children stopped */
	r->kref = 1;
	r->coll = (uint8_t)coll;
	r->arm = (uint8_t)bot_arm(algo, proto);
	r->nch = d->coll.nChannels > MAXCH ? MAXCH : d->coll.nChannels;
	r->nbytes = nbytes;
	r->seq = d->coll.seqNumber;
	r->born_ns = now;
	if (g && g->tag == TAG_GROUP) {
		int i = __atomic_fetch_add(&g->n, 1, __ATOMIC_RELAXED);

		if (i < GROUP_MAX) {
			g->e[i].coll = r->coll;
			g->e[i].arm = r->arm;
			g->e[i].nbytes = nbytes;
		}
		__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
		r->g = g;
	}
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	spin_lock(&m->lock);
	if (m->finalized)
		r->abandoned = 1;	/* an event after finalize: never sampled */
	r->next = m->live;
	if (m->live)
		m->live->prev = r;
	m->live = r;
	spin_unlock(&m->lock);
	__atomic_store_n(&r->tag, TAG_COLL, __ATOMIC_RELEASE);
	return r;
}

/* KernelCh events come from the proxy thread only (one per comm, or one
 * shared by comms that share resources); a record may be completed
 * concurrently by the stuck scan or finalize, which is why the fields the
 * completion reads are atomics and the record's memory is type-stable. */
static void *kch_start(struct bot_nccl_prof_descr *d)
{
	struct coll *r = d->parentObj;
	struct kch *k;
	unsigned c = d->kernelCh.channelId;

	if (!r || __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE) != TAG_COLL || c >= MAXCH ||
	    __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE))
		return NULL;
	k = &r->ch[c];
	if (k->state || r->nstarted >= r->nch)
		return NULL;	/* a channel twice, or more than nChannels */
	r->nstarted++;
	k->tag = TAG_KCH;
	k->coll = r;
	k->start = d->kernelCh.pTimer;
	__atomic_store_n(&k->state, 1, __ATOMIC_RELEASE);
	return k;
}

static uint64_t descr_type(const struct bot_meas *m, const struct bot_nccl_prof_descr *d)
{
	return m->abi >= 5 ? d->type : *(const uint8_t *)d;
}

int bot_prof_start(void *ctx, void **handle, struct bot_nccl_prof_descr *d)
{
	struct bot_meas *m = ctx;
	uint64_t type;

	if (!handle)
		return BOT_NCCL_SUCCESS;
	*handle = NULL;
	if (!m || !d)
		return BOT_NCCL_SUCCESS;
	type = descr_type(m, d);
	if (m->abi >= 5 && (type == BOT_PROF_GROUP_API || type == BOT_PROF_COLL_API)) {
		int cap = type == BOT_PROF_GROUP_API ? d->groupApi.graphCaptured :
						       d->collApi.graphCaptured;

		if (cap) {
			__atomic_store_n(&m->cap_seen, 1, __ATOMIC_RELAXED);
			windows_drop_all();
			if (type == BOT_PROF_COLL_API) {
				int coll = cached_parse(&func_cache, d->collApi.func, bot_coll_parse);

				if (coll >= 0 && coll < BOT_NCOLL) {
					uint64_t n = coll_nbytes(m, coll, d->collApi.count,
								 d->collApi.datatype);

					__atomic_add_fetch(&m->captured[coll][bot_tuner_bucket(n)], 1,
							   __ATOMIC_RELAXED);
				}
			}
			*handle = &api_captured;
		} else {
			*handle = &api_plain;
		}
	} else if (type == BOT_PROF_GROUP) {
		struct group *g = calloc(1, sizeof(*g));

		if (g) {
			g->tag = TAG_GROUP;
			g->refs = 1;
		}
		*handle = g;
	} else if (type == BOT_PROF_COLL) {
		*handle = coll_start(m, d);
	} else if (type == BOT_PROF_KERNEL_CH) {
		*handle = kch_start(d);
	}
	return BOT_NCCL_SUCCESS;
}

int bot_prof_stop(void *handle)
{
	uint64_t tag;

	if (!handle)
		return BOT_NCCL_SUCCESS;
	tag = __atomic_load_n((uint64_t *)handle, __ATOMIC_ACQUIRE);
	if (tag == TAG_COLL) {
		struct coll *r = handle;

		/* once: NCCL stops a Coll once; a second stop is ignored */
		if (!__atomic_exchange_n(&r->coll_stopped, 1, __ATOMIC_ACQ_REL))
			coll_unref(r);
	} else if (tag == TAG_GROUP) {
		group_unref(handle);
	} else if (tag == TAG_KCH) {
		struct kch *k = handle;
		struct coll *r = k->coll;

		if (!r || __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE) || (k->state & 4))
			return BOT_NCCL_SUCCESS;
		__atomic_or_fetch(&k->state, 4, __ATOMIC_RELEASE);
		if (__atomic_add_fetch(&r->nstopped, 1, __ATOMIC_ACQ_REL) == r->nch)
			coll_kref_drop(r);
	}
	return BOT_NCCL_SUCCESS;
}

int bot_prof_record(void *handle, int state, struct bot_nccl_prof_state_args *a)
{
	struct kch *k = handle;

	if (!k || !a || state != BOT_PROF_STATE_KERNEL_CH_STOP ||
	    __atomic_load_n(&k->tag, __ATOMIC_ACQUIRE) != TAG_KCH || !k->coll ||
	    __atomic_load_n(&k->coll->dead, __ATOMIC_ACQUIRE))
		return BOT_NCCL_SUCCESS;
	k->stop = a->pTimer;
	__atomic_or_fetch(&k->state, 2, __ATOMIC_RELEASE);
	return BOT_NCCL_SUCCESS;
}

/* Drop the KernelCh references of live records of m chosen by pick():
 * collected under m->lock (a record on the list is alive), dropped outside
 * every lock (the last one may complete the record and free m). Returns the
 * number dropped; at most SCAN_BATCH per call. */
#define SCAN_BATCH 64
static unsigned live_drop(struct bot_meas *m, int (*pick)(struct coll *r, uint64_t now),
			  uint64_t now)
{
	struct coll *got[SCAN_BATCH];
	unsigned n = 0;

	spin_lock(&m->lock);
	for (struct coll *r = m->live; r && n < SCAN_BATCH; r = r->next)
		if (pick(r, now) && __atomic_exchange_n(&r->kref, 0, __ATOMIC_ACQ_REL)) {
			/* our reference now: keeps r (and m) alive until unref */
			got[n++] = r;
		}
	spin_unlock(&m->lock);
	for (unsigned i = 0; i < n; i++)
		coll_unref(got[i]);
	return n;
}

static int pick_abandon(struct coll *r, uint64_t now)
{
	(void)now;
	__atomic_store_n(&r->abandoned, 1, __ATOMIC_RELEASE);
	return 1;
}

/* Coll stopped ("enqueued") long ago and a KernelCh still missing: the
 * proxy lost it (ring wrap, a channel never reported). */
static int pick_stuck(struct coll *r, uint64_t now)
{
	if (!__atomic_load_n(&r->coll_stopped, __ATOMIC_ACQUIRE) ||
	    now - r->born_ns <= __atomic_load_n(&rec_stuck_ns, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&r->timed_out, 1, __ATOMIC_RELEASE);
	return 1;
}

int bot_prof_finalize(void *ctx)
{
	struct bot_meas *m = ctx;

	if (!m)
		return BOT_NCCL_SUCCESS;
	spin_lock(&win_lock);
	window_uncount(m);
	set_mask_locked();
	spin_unlock(&win_lock);
	/* NCCL destroys the comm's proxy before profiler finalize, unless it
	 * is shared with other comms: records still alive lost (or will get
	 * late) KernelCh events. Abandon them: no sample; finalize drops their
	 * KernelCh reference (once), their stopEvent reference stays with
	 * NCCL, and late events find a dead record, never freed memory. */
	spin_lock(&m->lock);
	m->finalized = 1;
	spin_unlock(&m->lock);
	while (live_drop(m, pick_abandon, 0) == SCAN_BATCH)
		;
	meas_unref(m);
	bot_spool_flush();
	return BOT_NCCL_SUCCESS;
}

/* ---- summaries ---------------------------------------------------------------- */

void bot_prof_summaries(void *meas, void (*emit)(const struct bot_spool_rec *r, void *arg),
			void *arg)
{
	struct bot_meas *m = meas;
	struct bot_spool_rec r;

	for (unsigned c = 0; c < BOT_NCOLL; c++)
		for (unsigned b = 0; b < BOT_NBUCKETS; b++) {
			/* window calls scaled to all calls (an estimate) */
			uint64_t calls = __atomic_load_n(&m->calls[c][b], __ATOMIC_RELAXED) *
					 (m->period / m->window);
			uint64_t cap = __atomic_load_n(&m->captured[c][b], __ATOMIC_RELAXED);
			struct slot *s;

			if (!calls && !cap)
				continue;
			memset(&r, 0, sizeof(r));
			r.kind = BOT_SPOOL_SUMMARY;
			r.coll = (uint8_t)c;
			r.arm = BOT_SPOOL_ARM_NONE;
			r.policy = __atomic_load_n(&m->policy, __ATOMIC_RELAXED);
			r.comm_id = m->comm_id;
			r.rank = m->rank;
			r.nranks = m->nranks;
			r.nnodes = m->nnodes > m->nranks ? m->nranks : m->nnodes;
			r.nbytes = bot_bucket_lo(b);
			if (r.nbytes > BOT_SPOOL_MAX_BYTES)
				r.nbytes = BOT_SPOOL_MAX_BYTES;
			/* captured API calls seen by the profiler; calls is at least that */
			r.calls = calls > cap ? calls : cap;
			r.captured_calls = cap;
			s = slot_find(m, c, b, 0);
			if (s) {
				memcpy(r.cost, s->cost, sizeof(r.cost));
				r.auto_arm = s->auto_arm;
				r.decided = s->decided;
			} else {
				for (int i = 0; i < BOT_NARMS; i++)
					r.cost[i] = -1.0f;
				r.auto_arm = r.decided = BOT_SPOOL_ARM_NONE;
				r.flags = BOT_SPOOL_F_NO_COST;
			}
			emit(&r, arg);
		}
}
