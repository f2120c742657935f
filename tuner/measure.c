/*
 * measure.c - profiler contexts and event dispatch (tuner/measure.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "common/table.h"
#include "policies/context.h"
#include "tuner/env.h"
#include "tuner/link.h"
#include "tuner/measure.h"
#include "tuner/messages.h"
#include "tuner/records.h"
#include "tuner/spoolwriter.h"
#include "tuner/windows.h"

/* Whether this comm measures, and with what: from the step table when
 * there is one (flag BOT_TABLE_F_MEASURE, min_bytes_log2, policy, digest),
 * else from the environment (read like the tuner reads it, tuner/env.h).
 * Always needs NCCL_BOT_SPOOL; on profiler v4 (NCCL 2.27, where a CUDA
 * graph capture cannot be seen) also NCCL_BOT_MEASURE_V4=1. */
static struct bot_win *meas_new(const struct bot_env *env, uint64_t comm_id, int abi,
				int nnodes, int nranks, int rank, bot_nccl_logger_t log,
				uint64_t *min_bytes)
{
	static char logged_v4;
	const char *spool = getenv(BOT_ENV_SPOOL);
	const char *text = getenv(BOT_ENV_TABLE);
	struct bot_rec_id id;
	struct bot_rec_comm *rc;
	unsigned min_log2;
	uint64_t digest = 0;
	uint8_t policy = 0;

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
		/* a table the tuner refuses (tuner/decide.c: a policy id this
		 * build does not know, with correction rows or before format
		 * 3, fails the communicator's init) is not measured either */
		ok = bot_table_decode(text, strlen(text), t) == BOT_TABLE_OK &&
		     (t->flags & BOT_TABLE_F_MEASURE) &&
		     !(t->policy >= BOT_NPOLICY && (t->ncorr || t->version < 3));
		if (ok) {
			min_log2 = t->min_bytes_log2 < 63 ? t->min_bytes_log2 : 63;
			/* as the tuner: an unknown policy id whose table
			 * holds only plans is auto */
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
	memset(&id, 0, sizeof(id));
	id.comm_id = comm_id;
	id.rank = (uint32_t)rank;
	id.nranks = (uint32_t)nranks;
	id.nnodes = nnodes < 1 ? 1 : (uint32_t)nnodes;
	id.policy = policy;
	id.min_bytes = *min_bytes = 1ull << min_log2;
	id.scale = BOT_WIN_PERIOD_FACTOR;
	id.window = env->window;
	id.log = log;
	rc = bot_rec_new(&id);
	if (!rc)
		return NULL;
	return bot_win_new(rc, comm_id, env->window);
}

#define BOT_STR_(x) #x
#define BOT_STR(x) BOT_STR_(x)

bot_nccl_result_t bot_meas_init(void **ctx, int abi, uint64_t comm_id, int *mask, int nnodes,
				int nranks, int rank, bot_nccl_logger_t log)
{
	static char logged_masks;
	struct bot_env env;
	struct bot_win *w;
	uint64_t stuck, pool, min_bytes = 0;

	bot_spool_note_profiler(abi);	/* the process record: measuring or not */
	if (!bot_renv_test_stuck_ns(&stuck))
		stuck = BOT_REC_STUCK_NS;
	if (!bot_renv_test_pool_max(&pool) || pool > BOT_REC_POOL_MAX * 4ull)
		pool = BOT_REC_POOL_MAX;
	bot_rec_set_stuck_ns(stuck);
	bot_rec_set_pool_max((unsigned)pool);
	bot_win_set_test_hooks(stuck, bot_renv_test_no_quiet());
	bot_renv_read(&env, bot_renv_has_table(), log);
	w = meas_new(&env, comm_id, abi, nnodes, nranks, rank, log, &min_bytes);
	if (bot_win_mask(w, mask) < 0) {
		/* its NCCL's mask cannot be held: measuring would switch other
		 * NCCLs' events on for nothing (tuner/windows.h) */
		if (log && !__atomic_exchange_n(&logged_masks, 1, __ATOMIC_RELAXED))
			log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
			    "nccl-bot: %s: not measuring this communicator (decisions are "
			    "unaffected)",
			    mask ? "more than " BOT_STR(BOT_WIN_MASKS) " NCCL libraries in this "
				   "process measure" : "NCCL passed no event mask");
		bot_win_put(w);
		w = NULL;
	}
	bot_link_put(comm_id, nranks < 0 ? 0 : (uint32_t)nranks, nnodes < 0 ? 0 : (uint32_t)nnodes,
		     rank, w);
	if (w && log)
		log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_PROFILE, __FILE__, __LINE__,
		    BOT_MSG_MEASURING, abi, (unsigned long long)comm_id,
		    rank, bot_win_window(w), bot_win_period(w), (unsigned long long)min_bytes);
	*ctx = w;
	return BOT_NCCL_SUCCESS;
}

/* ---- events ------------------------------------------------------------------- */

/* ctx is a struct bot_win, but only the launch thread's events (API, Coll)
 * may look at it: a KernelCh event can come from a proxy thread shared with
 * other comms after this comm's profiler finalize freed ctx, and it needs
 * nothing but its parent, a type-stable record (tuner/records.h). Only the
 * members each kind of event needs are read and copied: this runs for
 * every event while a window is open.
 *
 * Group, Coll (any size) and channel 0's KernelCh starts poll the stuck
 * scan (bot_win_poll: a coarse clock read between scans), whatever comm
 * they come from: while the mask is on they are what the process pays, and
 * a window whose comm went idle must close even when the only traffic left
 * is p2p, small collectives or another NCCL's. (Every operation's KernelCh
 * events follow its Group, which polls already: one poll per operation on
 * the proxy thread, not one per channel, keeps the cost of a window at
 * three clock reads per collective, ~15 ns, bench/hotpath.sh.) */

static void *coll_event(struct bot_win *w, const struct bot_rec_event *e)
{
	return bot_rec_coll(bot_win_rec(w), e);
}

static void *api_event(struct bot_win *w, const struct bot_rec_event *e)
{
	if (e->api.captured)
		bot_win_capture(w);
	return bot_rec_api(bot_win_rec(w), e);
}

/* What the layouts share. Each entry point reads its own descriptor, but
 * the Coll members have the same names in v4 and v5/v6, so one macro
 * copies them, and the prologue is start_begin(). Only the members of the
 * event's own kind are read: NCCL 2.28's v4 adapter leaves the others
 * uninitialised. */
#define COLL_MEMBERS(e, d)					\
	do {							\
		(e).coll.seq = (d)->coll.seqNumber;		\
		(e).coll.func = (d)->coll.func;			\
		(e).coll.count = (d)->coll.count;		\
		(e).coll.datatype = (d)->coll.datatype;		\
		(e).coll.nchannels = (d)->coll.nChannels;	\
		(e).coll.algo = (d)->coll.algo;			\
		(e).coll.proto = (d)->coll.proto;		\
	} while (0)

/* Before reading: no handle until one is made, and the stuck-window poll
 * (kch0: a KernelCh start of channel 0). 0 when there is nothing to read. */
static inline int start_begin(void *ctx, void **handle, const void *d, uint64_t type, int kch0)
{
	if (!handle)
		return 0;
	*handle = NULL;
	if (!d)
		return 0;
	if (type == BOT_NCCL_PROF_GROUP || type == BOT_NCCL_PROF_COLL || kch0)
		bot_win_poll();
	return ctx != NULL;
}

/* v4: the 104-byte layout only. A Coll's Group is its parentObj; there are
 * no API events (a v4 type is one byte). */
bot_nccl_result_t bot_meas_start_v4(void *ctx, void **handle, struct bot_nccl_prof_descr_v4 *d)
{
	struct bot_rec_event e;

	if (!start_begin(ctx, handle, d, d ? d->type : 0,
			 d && d->type == BOT_NCCL_PROF_KERNEL_CH && d->kernelCh.channelId == 0))
		return BOT_NCCL_SUCCESS;
	switch (d->type) {
	case BOT_NCCL_PROF_KERNEL_CH:
		*handle = bot_rec_kch(d->parentObj, d->kernelCh.channelId, d->kernelCh.pTimer);
		break;
	case BOT_NCCL_PROF_GROUP:
		*handle = bot_rec_group();
		break;
	case BOT_NCCL_PROF_COLL:
		e.type = BOT_NCCL_PROF_COLL;
		e.coll.api_parent = NULL;
		e.coll.group = d->parentObj;
		COLL_MEMBERS(e, d);
		*handle = coll_event(ctx, &e);
		break;
	}
	return BOT_NCCL_SUCCESS;
}

/* v5 and v6: the 112-byte layout. A Coll's parentObj is its CollApi
 * handle, its Group coll.parentGroup. */
bot_nccl_result_t bot_meas_start_v5(void *ctx, void **handle, struct bot_nccl_prof_descr_v5 *d)
{
	struct bot_rec_event e;

	if (!start_begin(ctx, handle, d, d ? d->type : 0,
			 d && d->type == BOT_NCCL_PROF_KERNEL_CH && d->kernelCh.channelId == 0))
		return BOT_NCCL_SUCCESS;
	switch (d->type) {
	case BOT_NCCL_PROF_KERNEL_CH:
		*handle = bot_rec_kch(d->parentObj, d->kernelCh.channelId, d->kernelCh.pTimer);
		break;
	case BOT_NCCL_PROF_GROUP:
		*handle = bot_rec_group();
		break;
	case BOT_NCCL_PROF_COLL:
		e.type = BOT_NCCL_PROF_COLL;
		e.coll.api_parent = d->parentObj;
		e.coll.group = d->coll.parentGroup;
		COLL_MEMBERS(e, d);
		*handle = coll_event(ctx, &e);
		break;
	case BOT_NCCL_PROF_GROUP_API:
		e.type = BOT_NCCL_PROF_GROUP_API;
		e.api.captured = d->groupApi.graphCaptured;
		e.api.func = e.api.datatype = NULL;
		e.api.count = 0;
		*handle = api_event(ctx, &e);
		break;
	case BOT_NCCL_PROF_COLL_API:
		e.type = BOT_NCCL_PROF_COLL_API;
		e.api.captured = d->collApi.graphCaptured;
		e.api.func = d->collApi.func;
		e.api.count = d->collApi.count;
		e.api.datatype = d->collApi.datatype;
		*handle = api_event(ctx, &e);
		break;
	}
	return BOT_NCCL_SUCCESS;
}

bot_nccl_result_t bot_meas_finalize(void *ctx)
{
	struct bot_win *w = ctx;

	if (!w)
		return BOT_NCCL_SUCCESS;
	bot_win_close(w);
	bot_rec_finalize(bot_win_rec(w));
	bot_win_put(w);
	bot_spool_flush();
	return BOT_NCCL_SUCCESS;
}

/* ---- the tuner's side of the link ------------------------------------------------ */

static uint32_t clamp32(size_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int bot_meas_tuner_link(uint64_t comm_id, int by_id, size_t nranks, size_t nnodes,
			struct bot_win_hot **hot)
{
	void *w = NULL;
	int rank = bot_link_take(comm_id, by_id, clamp32(nranks), clamp32(nnodes), &w,
				 bot_win_ref);

	*hot = w ? bot_win_hot(w) : NULL;
	return rank;
}

void bot_meas_tuner_unlink(struct bot_win_hot *hot)
{
	if (!hot)
		return;
	bot_win_put(bot_win_of(hot));
	bot_spool_flush();
}
