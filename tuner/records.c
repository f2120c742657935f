/*
 * records.c - per-communicator records of measured collectives
 * (tuner/records.h).
 *
 * Events. A Coll at or above the size threshold, not captured, with a
 * parseable func/algo/proto, becomes a refcounted record: one reference for
 * its stopEvent (which only means "enqueued") and one for its KernelCh
 * children, which arrive later on the proxy thread; the last reference
 * turns it into a spool sample. Handles are tagged in their first 8 bytes
 * (NCCL only hands the pointer back); API events get static sentinels,
 * since NCCL keeps passing them as parents after their stop. Nothing is
 * ever returned as an error.
 *
 * Records come from a process-wide pool and go back to it, never to
 * free(), while the library is loaded (it is linked -z nodelete), so a late
 * or stray KernelCh event (a proxy shared with other comms outlives this
 * comm's profiler finalize) only ever touches a record, never freed
 * memory. A record that completed while KernelCh events could still come
 * (abandoned at finalize, or completed by the stuck scan) is "dead": events
 * on it are ignored, and it is reused only after BOT_REC_QUARANTINE_NS,
 * however many there are: reusing one sooner would hand a late event of
 * the old Coll a new Coll's record (a wrong duration, a phantom channel).
 * Memory is bounded by the pool's size instead (BOT_REC_POOL_MAX records):
 * with no record free or old enough and the pool full, a Coll is not
 * measured, and counted. The proxy thread reads a record's links
 * (KernelCh -> Coll) with one atomic load each.
 *
 * Communicators with records are kept in a registry, so that the stuck scan
 * reaches every record, also those of a communicator whose windows and
 * profiler context are gone. This is measurement, not a decision: counters
 * and the clock are fine here.
 */
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "policies/context.h"
#include "tuner/records.h"
#include "tuner/spoolwriter.h"
#include "tuner/strcache.h"
#include "tuner/util.h"

#define TAG_COLL 0x6c6c6f632d746f62ull		/* "bot-coll" */
#define TAG_KCH 0x68636b2d2d746f62ull		/* "bot--kch" */
#define TAG_GROUP 0x70726f672d746f62ull		/* "bot-grop" */
#define TAG_API 0x6970612d2d746f62ull		/* "bot--api" */

#define NSLOTS 128		/* cost rows per comm, by (coll, bucket) */
#define GROUP_MAX 16		/* Colls tracked per group for aggregates */
#define MAXCH 64
#define SCAN_BATCH 64		/* records dropped per communicator per pass */
#define SCAN_COMMS 16		/* communicators visited per scan */

/* NCCL's search cap up to 2.28, the convention of the spool's cost rows
 * (doc/formats.md section 9): what is at or above it is stored as -1. */
#define ROW_CAP 3.6e9f

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

struct coll;

struct bot_rec_comm {
	int refs;
	struct bot_rec_id id;
	uint64_t min_bytes;		/* id.min_bytes, read by event threads */
	struct bot_rec_comm *all_prev, *all_next;	/* registry (reg_lock) */
	struct slot slot[NSLOTS];
	uint32_t algo_seen;
	uint64_t calls[BOT_NCOLL][BOT_NBUCKETS];	/* window calls (tuner thread) */
	uint64_t periods, measured;	/* arming points, windows opened (tuner thread) */
	uint32_t captured[BOT_NCOLL][BOT_NBUCKETS];
	char lock;			/* live list */
	int finalized;			/* profiler finalize ran (lock) */
	struct coll *live;
};

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

struct coll {
	uint64_t tag;
	struct bot_rec_comm *rc;
	struct group *g;
	struct coll *prev, *next;	/* rc->live (rc->lock); pool lists (pool_lock) */
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

static char pool_lock;
/* Never freed: the library stays mapped after dlclose (-z nodelete), so the
 * pool stays reachable and late events stay safe. */
static struct coll *pool_free, *pool_all;
static struct coll *quar_head, *quar_tail;	/* dead records, oldest first */
static unsigned pool_n;				/* records allocated (pool_lock) */
static unsigned pool_max = BOT_REC_POOL_MAX;
static uint64_t pool_dropped, pool_reported;	/* Colls not measured: no record */

static char reg_lock;
static struct bot_rec_comm *all_comms;

static uint64_t stuck_ns = BOT_REC_STUCK_NS;

void bot_rec_set_stuck_ns(uint64_t ns)
{
	__atomic_store_n(&stuck_ns, ns, __ATOMIC_RELAXED);
}

void bot_rec_set_pool_max(unsigned n)
{
	__atomic_store_n(&pool_max, n, __ATOMIC_RELAXED);
}

/* ---- communicators ------------------------------------------------------------- */

static void record_summaries(void *obj, void (*emit)(const struct bot_spool_rec *r, void *arg),
		      void *arg);

struct bot_rec_comm *bot_rec_new(const struct bot_rec_id *id)
{
	struct bot_rec_comm *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return NULL;
	rc->refs = 1;
	rc->id = *id;
	rc->min_bytes = id->min_bytes;
	bot_spin_lock(&reg_lock);
	rc->all_next = all_comms;
	if (all_comms)
		all_comms->all_prev = rc;
	all_comms = rc;
	bot_spin_unlock(&reg_lock);
	bot_spool_register(rc, record_summaries);
	return rc;
}

/* A reference to rc unless its count already reached 0. */
static int rec_tryref(struct bot_rec_comm *rc)
{
	int r = __atomic_load_n(&rc->refs, __ATOMIC_RELAXED);

	while (r > 0 && !__atomic_compare_exchange_n(&rc->refs, &r, r + 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_RELAXED))
		;
	return r > 0;
}

void bot_rec_put(struct bot_rec_comm *rc)
{
	if (!rc || __atomic_sub_fetch(&rc->refs, 1, __ATOMIC_ACQ_REL))
		return;
	bot_spin_lock(&reg_lock);
	if (rc->all_prev)
		rc->all_prev->all_next = rc->all_next;
	else if (all_comms == rc)
		all_comms = rc->all_next;
	if (rc->all_next)
		rc->all_next->all_prev = rc->all_prev;
	bot_spin_unlock(&reg_lock);
	bot_spool_retire(rc);
	free(rc);
}

void bot_rec_period(struct bot_rec_comm *rc, int measured)
{
	/* one writer (the comm's tuner thread); the spool thread reads */
	__atomic_store_n(&rc->periods, rc->periods + 1, __ATOMIC_RELAXED);
	if (measured)
		__atomic_store_n(&rc->measured, rc->measured + 1, __ATOMIC_RELAXED);
}

void bot_rec_period_captured(struct bot_rec_comm *rc)
{
	if (!rc->measured)
		return;
	__atomic_store_n(&rc->periods, rc->periods - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&rc->measured, rc->measured - 1, __ATOMIC_RELAXED);
}

/* A context's window calls as all its calls: the comm's calls over its
 * periods (periods x window x scale) shared out as its window calls were
 * (wcalls of all wtotal), so periods the quiet time skipped, and windows
 * cut short (a capture, a comm that stopped calling), count as the windows
 * that ran; without a period counted, window calls x scale. An estimate;
 * at most UINT64_MAX. */
static uint64_t scaled_calls(const struct bot_rec_comm *rc, uint64_t wcalls, uint64_t wtotal,
			     uint64_t periods, uint64_t measured)
{
	double c = (double)wcalls * (double)rc->id.scale;

	if (measured && wtotal && rc->id.window)
		c = c * (double)periods * (double)rc->id.window / (double)wtotal;
	return c >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)c;
}

/* ---- cost rows (window calls, tuner thread) ------------------------------------ */

static struct slot *slot_find(struct bot_rec_comm *rc, unsigned coll, unsigned bucket,
			      int insert)
{
	uint16_t key = (uint16_t)(coll * BOT_NBUCKETS + bucket + 1);
	unsigned h = (unsigned)(bot_mix64(key) % NSLOTS);

	for (unsigned i = 0; i < NSLOTS; i++) {
		struct slot *s = &rc->slot[(h + i) % NSLOTS];
		uint16_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (k == key)
			return s;
		if (k == 0)
			return insert ? s : NULL;
	}
	return NULL;
}

/* A cost entry as the spool keeps it: -1 for unsupported, NaN, infinite or
 * at/above ROW_CAP; -0 as 0 (readers refuse -0): x + 0.0f is +0 for -0 and
 * x otherwise, without a branch (no -ffast-math here). */
static float cost_clean(float x)
{
	return !(x >= 0.0f) || x >= ROW_CAP ? -1.0f : x + 0.0f;
}

void bot_rec_row_before(struct bot_rec_comm *rc, struct bot_rec_row *row, int coll,
			size_t nbytes, const float *t, int numAlgo, int numProto)
{
	row->measured = (unsigned)coll < BOT_NCOLL && t && nbytes >= rc->min_bytes &&
			numProto == BOT_NPROTO && numAlgo >= 1 && numAlgo <= BOT_NALGO;
	if (row->measured)
		for (int i = 0; i < BOT_NARMS; i++)
			row->before[i] = i < numAlgo * numProto ? t[i] : -1.0f;
}

void bot_rec_row_after(struct bot_rec_comm *rc, const struct bot_rec_row *row, int coll,
		       size_t nbytes, const float *t, int numAlgo, int numProto)
{
	unsigned bucket = bot_util_bucket(nbytes);
	const float *before = row->before;
	struct slot *s;
	int best = -1, decided = -1;

	if ((unsigned)coll < BOT_NCOLL) {
		uint64_t *p = &rc->calls[coll][bucket];

		/* one writer: the comm's tuner thread */
		__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	}
	if (!row->measured)
		return;
	s = slot_find(rc, (unsigned)coll, bucket, 1);
	for (int i = 0; i < BOT_NARMS; i++) {
		if (before[i] >= 0.0f && before[i] < ROW_CAP &&
		    (best < 0 || before[i] < before[best]))
			best = i;
		if (i < numAlgo * numProto && t[i] == 0.0f && before[i] != 0.0f)
			decided = i;
	}
	/* the first window call of a context fills its slot; the row is NCCL's
	 * model for the context and does not change after */
	if (s && !__atomic_load_n(&s->key, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < BOT_NARMS; i++)
			s->cost[i] = cost_clean(before[i]);
		s->auto_arm = best < 0 ? BOT_SPOOL_ARM_NONE : (uint8_t)best;
		s->decided = decided < 0 ? BOT_SPOOL_ARM_NONE : (uint8_t)decided;
		__atomic_store_n(&s->key, (uint16_t)(coll * BOT_NBUCKETS + bucket + 1),
				 __ATOMIC_RELEASE);
	}
}

/* ---- descriptor strings ---------------------------------------------------------- */

/* tuner/strcache.h: a hit never pairs a pointer with another string's id */
static struct bot_strcache func_cache, algo_cache, proto_cache;

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
static uint64_t coll_nbytes(const struct bot_rec_comm *rc, int coll, size_t count,
			    const char *dtype)
{
	uint64_t n = (uint64_t)count * (uint64_t)dtype_size(dtype);

	if (coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER)
		n *= rc->id.nranks;
	return n;
}

/* ---- samples ------------------------------------------------------------------------ */

static void sample_init(struct bot_spool_rec *r, struct bot_rec_comm *rc, int coll, int arm,
			uint64_t nbytes)
{
	struct slot *s = slot_find(rc, (unsigned)coll, bot_util_bucket(nbytes), 0);

	memset(r, 0, sizeof(*r));
	r->kind = BOT_SPOOL_SAMPLE;
	r->coll = (uint8_t)coll;
	r->arm = (uint8_t)arm;
	r->policy = rc->id.policy;
	r->comm_id = rc->id.comm_id;
	r->rank = rc->id.rank;
	r->nranks = rc->id.nranks;
	r->nnodes = rc->id.nnodes > rc->id.nranks ? rc->id.nranks : rc->id.nnodes;
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
	if (!(__atomic_fetch_or(&rc->algo_seen, 1u << bot_arm_algo(arm), __ATOMIC_RELAXED) &
	      (1u << bot_arm_algo(arm))))
		r->flags |= BOT_SPOOL_F_FIRST_ALGO;
}

static void group_unref(struct group *g)
{
	if (g && !__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL))
		free(g);
}

/* ---- the record pool ------------------------------------------------------------------ */

static struct coll *coll_alloc(uint64_t now)
{
	struct coll *r = NULL;
	int grow = 0;

	bot_spin_lock(&pool_lock);
	if (pool_free) {
		r = pool_free;
		pool_free = r->next;
	} else if (quar_head && now > quar_head->died_ns &&
		   now - quar_head->died_ns > BOT_REC_QUARANTINE_NS) {
		/* (now was read before the lock: a record that died since is
		 * younger than now, never "older than 2^64 ns") */
		r = quar_head;
		quar_head = r->next;
		if (!quar_head)
			quar_tail = NULL;
	} else if (pool_n < __atomic_load_n(&pool_max, __ATOMIC_RELAXED)) {
		pool_n++;	/* reserved: allocated below */
		grow = 1;
	} else {
		pool_dropped++;
	}
	bot_spin_unlock(&pool_lock);
	if (r) {
		struct coll *all = r->pool_all;

		/* the tag goes last: a stray event never sees a half-built record */
		__atomic_store_n(&r->tag, 0, __ATOMIC_RELEASE);
		memset((char *)r + sizeof(r->tag), 0, sizeof(*r) - sizeof(r->tag));
		r->pool_all = all;
		return r;
	}
	if (!grow)
		return NULL;
	r = calloc(1, sizeof(*r));
	bot_spin_lock(&pool_lock);
	if (!r) {
		pool_n--;
		bot_spin_unlock(&pool_lock);
		return NULL;
	}
	r->pool_all = pool_all;
	pool_all = r;
	bot_spin_unlock(&pool_lock);
	return r;
}

/* Back to the pool. Dead records (events may still come) go to the
 * quarantine; others are reusable at once. */
static void coll_release(struct coll *r, int dead)
{
	bot_spin_lock(&pool_lock);
	if (dead) {
		r->died_ns = bot_now_ns();
		r->next = NULL;
		if (quar_tail)
			quar_tail->next = r;
		else
			quar_head = r;
		quar_tail = r;
	} else {
		r->next = pool_free;
		pool_free = r;
	}
	bot_spin_unlock(&pool_lock);
}

static void free_coll(struct coll *r, int dead)
{
	struct bot_rec_comm *rc = r->rc;

	bot_spin_lock(&rc->lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		rc->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	bot_spin_unlock(&rc->lock);
	group_unref(r->g);
	r->g = NULL;
	r->rc = NULL;
	coll_release(r, dead);
	bot_rec_put(rc);
}

/* ---- completion ------------------------------------------------------------------------- */

/* The last reference: turn the record into a sample (none when abandoned
 * at finalize). */
static void coll_complete(struct coll *r)
{
	struct bot_rec_comm *rc = r->rc;
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
	sample_init(&s, rc, r->coll, r->arm, nbytes);
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

/* ---- events -------------------------------------------------------------------------- */

void *bot_rec_api(struct bot_rec_comm *rc, const struct bot_rec_event *e)
{
	int coll;

	if (!e->api.captured)
		return &api_plain;
	coll = bot_strcache_get(&func_cache, e->api.func, bot_coll_parse);
	if (e->type == BOT_NCCL_PROF_COLL_API && coll >= 0 && coll < BOT_NCOLL) {
		uint64_t n = coll_nbytes(rc, coll, e->api.count, e->api.datatype);

		__atomic_add_fetch(&rc->captured[coll][bot_util_bucket(n)], 1, __ATOMIC_RELAXED);
	}
	return &api_captured;
}

void *bot_rec_coll(struct bot_rec_comm *rc, const struct bot_rec_event *e)
{
	int coll = bot_strcache_get(&func_cache, e->coll.func, bot_coll_parse);
	int algo = bot_strcache_get(&algo_cache, e->coll.algo, bot_algo_parse);
	int proto = bot_strcache_get(&proto_cache, e->coll.proto, bot_proto_parse);
	struct group *g = e->coll.group;
	uint64_t nbytes, now;
	struct coll *r;

	if (coll < 0 || coll >= BOT_NCOLL || algo < 0 || proto < 0)
		return NULL;
	nbytes = coll_nbytes(rc, coll, e->coll.count, e->coll.datatype);
	if (e->coll.api_parent == &api_captured)
		return NULL;		/* captured calls are never measured */
	if (nbytes < __atomic_load_n(&rc->min_bytes, __ATOMIC_RELAXED) || nbytes == 0)
		return NULL;
	now = bot_now_ns();
	if (e->coll.nchannels == 0) {
		/* CollNet / multi-node NVLS: channels unknown; label and skip */
		struct bot_spool_rec s;

		sample_init(&s, rc, coll, bot_arm(algo, proto), nbytes);
		s.flags |= BOT_SPOOL_F_CHANNELS;
		s.seq = e->coll.seq;
		bot_spool_add(&s);
		return NULL;
	}
	r = coll_alloc(now);
	if (!r)
		return NULL;
	r->rc = rc;
	r->refs = 2;		/* stopEvent + all KernelCh children stopped */
	r->kref = 1;
	r->coll = (uint8_t)coll;
	r->arm = (uint8_t)bot_arm(algo, proto);
	r->nch = e->coll.nchannels > MAXCH ? MAXCH : e->coll.nchannels;
	r->nbytes = nbytes;
	r->seq = e->coll.seq;
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
	__atomic_add_fetch(&rc->refs, 1, __ATOMIC_RELAXED);
	bot_spin_lock(&rc->lock);
	if (rc->finalized)
		r->abandoned = 1;	/* an event after finalize: never sampled */
	r->next = rc->live;
	if (rc->live)
		rc->live->prev = r;
	rc->live = r;
	bot_spin_unlock(&rc->lock);
	__atomic_store_n(&r->tag, TAG_COLL, __ATOMIC_RELEASE);
	return r;
}

/* KernelCh events come from the proxy thread only (one per comm, or one
 * shared by comms that share resources); a record may be completed
 * concurrently by the stuck scan or finalize, which is why the fields the
 * completion reads are atomics and the record's memory is type-stable. */
void *bot_rec_kch(void *parent, unsigned channel, uint64_t ptimer)
{
	struct coll *r = parent;
	struct kch *k;
	unsigned c = channel;

	if (!r || __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE) != TAG_COLL || c >= MAXCH ||
	    __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE))
		return NULL;
	k = &r->ch[c];
	if (__atomic_load_n(&k->state, __ATOMIC_ACQUIRE) || r->nstarted >= r->nch)
		return NULL;	/* a channel twice, or more than nChannels */
	r->nstarted++;
	k->tag = TAG_KCH;
	__atomic_store_n(&k->coll, r, __ATOMIC_RELEASE);
	k->start = ptimer;
	__atomic_store_n(&k->state, 1, __ATOMIC_RELEASE);
	return k;
}

void *bot_rec_group(void)
{
	struct group *g = calloc(1, sizeof(*g));

	if (g) {
		g->tag = TAG_GROUP;
		g->refs = 1;
	}
	return g;
}

bot_nccl_result_t bot_rec_stop(void *handle)
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
		struct coll *r = __atomic_load_n(&k->coll, __ATOMIC_ACQUIRE);	/* once */

		if (!r || __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE) ||
		    (__atomic_load_n(&k->state, __ATOMIC_ACQUIRE) & 4))
			return BOT_NCCL_SUCCESS;
		__atomic_or_fetch(&k->state, 4, __ATOMIC_RELEASE);
		if (__atomic_add_fetch(&r->nstopped, 1, __ATOMIC_ACQ_REL) == r->nch)
			coll_kref_drop(r);
	}
	return BOT_NCCL_SUCCESS;
}

bot_nccl_result_t bot_rec_state(void *handle, int state, union bot_nccl_prof_state_args *a)
{
	struct kch *k = handle;
	struct coll *r;

	if (!k || !a || state != BOT_NCCL_PROF_STATE_KERNEL_CH_STOP ||
	    __atomic_load_n(&k->tag, __ATOMIC_ACQUIRE) != TAG_KCH)
		return BOT_NCCL_SUCCESS;
	/* one load: a record's reuse clears k->coll, never between a check
	 * and its use */
	r = __atomic_load_n(&k->coll, __ATOMIC_ACQUIRE);
	if (!r || __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE))
		return BOT_NCCL_SUCCESS;
	k->stop = a->pTimer;
	__atomic_or_fetch(&k->state, 2, __ATOMIC_RELEASE);
	return BOT_NCCL_SUCCESS;
}

/* ---- finalize and the stuck scan ------------------------------------------------------ */

/* Drop the KernelCh references of live records of rc chosen by pick():
 * collected under rc->lock (a record on the list is alive), dropped outside
 * every lock (the last one may complete the record and free rc). Returns
 * the number dropped; at most SCAN_BATCH per call. */
static unsigned live_drop(struct bot_rec_comm *rc, int (*pick)(struct coll *r, uint64_t now),
			  uint64_t now)
{
	struct coll *got[SCAN_BATCH];
	unsigned n = 0;

	bot_spin_lock(&rc->lock);
	for (struct coll *r = rc->live; r && n < SCAN_BATCH; r = r->next)
		if (pick(r, now) && __atomic_exchange_n(&r->kref, 0, __ATOMIC_ACQ_REL)) {
			/* our reference now: keeps r (and rc) alive until unref */
			got[n++] = r;
		}
	bot_spin_unlock(&rc->lock);
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
	    now - r->born_ns <= __atomic_load_n(&stuck_ns, __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&r->timed_out, 1, __ATOMIC_RELEASE);
	return 1;
}

void bot_rec_finalize(struct bot_rec_comm *rc)
{
	/* NCCL destroys the comm's proxy before profiler finalize, unless it
	 * is shared with other comms: records still alive lost (or will get
	 * late) KernelCh events. Abandon them: no sample; finalize drops their
	 * KernelCh reference (once), their stopEvent reference stays with
	 * NCCL, and late events find a dead record, never freed memory. */
	uint64_t dropped, reported;

	bot_spin_lock(&rc->lock);
	rc->finalized = 1;
	bot_spin_unlock(&rc->lock);
	while (live_drop(rc, pick_abandon, 0) == SCAN_BATCH)
		;
	bot_spin_lock(&pool_lock);
	dropped = pool_dropped;
	reported = pool_reported;
	pool_reported = dropped;
	bot_spin_unlock(&pool_lock);
	if (dropped > reported && rc->id.log)
		rc->id.log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
			   "nccl-bot: %llu collectives not measured: the record pool (%u records) "
			   "was full (records of abandoned collectives are kept %llu s, in case "
			   "late events name them)",
			   (unsigned long long)(dropped - reported),
			   __atomic_load_n(&pool_max, __ATOMIC_RELAXED),
			   (unsigned long long)(BOT_REC_QUARANTINE_NS / 1000000000ull));
}

void bot_rec_scan(uint64_t now)
{
	struct bot_rec_comm *got[SCAN_COMMS];
	unsigned n = 0;

	bot_spin_lock(&reg_lock);
	/* hold each across the unlocked drop (not one already dying) */
	for (struct bot_rec_comm *rc = all_comms; rc && n < SCAN_COMMS; rc = rc->all_next)
		if (__atomic_load_n(&rc->live, __ATOMIC_RELAXED) && rec_tryref(rc))
			got[n++] = rc;
	bot_spin_unlock(&reg_lock);
	for (unsigned i = 0; i < n; i++) {
		live_drop(got[i], pick_stuck, now);
		bot_rec_put(got[i]);
	}
}

/* ---- summaries ------------------------------------------------------------------------ */

static void record_summaries(void *obj, void (*emit)(const struct bot_spool_rec *r, void *arg),
		      void *arg)
{
	struct bot_rec_comm *rc = obj;
	struct bot_spool_rec r;
	/* one reading of the counters for every context of the pass (the
	 * tuner thread may go on counting) */
	uint64_t periods = __atomic_load_n(&rc->periods, __ATOMIC_RELAXED);
	uint64_t measured = __atomic_load_n(&rc->measured, __ATOMIC_RELAXED);
	uint64_t wtotal = 0;

	for (unsigned c = 0; c < BOT_NCOLL; c++)
		for (unsigned b = 0; b < BOT_NBUCKETS; b++)
			wtotal += __atomic_load_n(&rc->calls[c][b], __ATOMIC_RELAXED);
	for (unsigned c = 0; c < BOT_NCOLL; c++)
		for (unsigned b = 0; b < BOT_NBUCKETS; b++) {
			/* window calls scaled to all calls (an estimate) */
			uint64_t calls = scaled_calls(rc, __atomic_load_n(&rc->calls[c][b],
									  __ATOMIC_RELAXED),
						      wtotal, periods, measured);
			uint64_t cap = __atomic_load_n(&rc->captured[c][b], __ATOMIC_RELAXED);
			struct slot *s;

			if (!calls && !cap)
				continue;
			memset(&r, 0, sizeof(r));
			r.kind = BOT_SPOOL_SUMMARY;
			r.coll = (uint8_t)c;
			r.arm = BOT_SPOOL_ARM_NONE;
			r.policy = rc->id.policy;
			r.comm_id = rc->id.comm_id;
			r.rank = rc->id.rank;
			r.nranks = rc->id.nranks;
			r.nnodes = rc->id.nnodes > rc->id.nranks ? rc->id.nranks : rc->id.nnodes;
			r.nbytes = bot_bucket_lo(b);
			if (r.nbytes > BOT_SPOOL_MAX_BYTES)
				r.nbytes = BOT_SPOOL_MAX_BYTES;
			/* captured API calls seen by the profiler; calls is at least that */
			r.calls = calls > cap ? calls : cap;
			r.captured_calls = cap;
			s = slot_find(rc, c, b, 0);
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
