/*
 * plugin.c - the ABI entry points of libnccl-tuner-bot.so.
 *
 * One shared object is both NCCL's tuner and its profiler (both environment
 * variables name the same path, so dlopen() returns one instance). It
 * exports ncclTunerPlugin_v2..v6 and ncclProfiler_v4..v6 and nothing else
 * (tuner/exports.map); every function here is a thin adapter: the tuner's
 * onto the decision (decide.h) and the measurement windows (windows.h), the
 * profiler's onto measure.h, except stopEvent and recordEventState, which
 * carry only a handle and go straight to the records (records.h).
 *
 * getCollInfo: the measurement windows' counter (on a measuring comm),
 * then the decision. The rare call the windows wait for goes around the
 * decision: bot_win_before(), the decision, bot_win_after(). The decision
 * is made here in both cases; measurement never makes or changes it.
 *
 * Versions: v2 (NCCL 2.21) has no cost table, so it cannot see which arms
 * are valid: pass-through, it returns success and leaves every output
 * alone. v3/v4 (2.22, 2.24) decide without a commId (exploit arms only);
 * v5/v6 (2.28, 2.30) decide with probes. v6's getChunkSize is NULL (keep
 * NCCL's). regBuff is never looked at: it differs between ranks. Profiler
 * v4 (2.27) and v5/v6 (2.28+) have their own descriptor layouts, each read
 * by its own entry point.
 *
 * The spool's process record (tuner/spoolwriter.h): each successful tuner init
 * (v2 included) is noted with its ABI version when NCCL_BOT_SPOOL is set,
 * each profiler init with its own (v6 has its init entry point for that
 * alone), and every tuner finalize has the file brought up to date.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/settings.h"
#include "common/spool.h"
#include "tuner/decide.h"
#include "tuner/measure.h"
#include "tuner/nccl_abi.h"
#include "tuner/ncclver.h"
#include "tuner/records.h"
#include "tuner/spoolwriter.h"
#include "tuner/windows.h"

/* ---- the process record (init and finalize only) --------------------------- */

/* A comm our tuner opened (c NULL: v2's pass-through), when NCCL_BOT_SPOOL
 * is set. The NCCL version is the one the comm's init looked up (every ABI
 * since 2026-12-04), else (v2's pass-through, or none found) looked up once
 * per process. */
static void note_tuner(int abi, const struct bot_decide_ctx *c, bot_nccl_logger_t log)
{
	const char *dir = getenv(BOT_ENV_SPOOL);
	uint32_t ver;

	if (!dir || !*dir)
		return;
	ver = c && c->nccl_version > 0 ? (uint32_t)c->nccl_version : 0;
	if (!ver && !bot_spool_nccl_known()) {
		int v = bot_ncclver((const void *)(uintptr_t)log);

		ver = v > 0 ? (uint32_t)v : 0;
	}
	bot_spool_note_tuner(dir, abi, ver, c ? c->policy : 0,
			     c && c->from_table ? BOT_SPOOL_PF_TABLE : BOT_SPOOL_PF_PRIOR,
			     c ? c->digest : 0, log);
}

#define BOT_EXPORT __attribute__((visibility("default")))
#define BOT_PLUGIN_NAME "nccl-bot"

/* ---- tuner v2: pass-through ---------------------------------------------- */

static char v2_ctx;

static bot_nccl_result_t v2_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	*ctx = &v2_ctx;
	note_tuner(2, NULL, log);
	if (log)
		log(BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING, __FILE__, __LINE__,
		    "nccl-bot: tuner v2 (NCCL 2.21) has no cost table: leaving NCCL's choice");
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t v2_get_coll_info(void *ctx, int collType, size_t nBytes,
					  int collNetSupport, int nvlsSupport, int numPipeOps,
					  int *algorithm, int *protocol, int *nChannels)
{
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t v2_destroy(void *ctx)
{
	bot_spool_flush();
	return BOT_NCCL_SUCCESS;
}

/* ---- tuner v3..v6 -------------------------------------------------------- */

/* A call the measurement windows wait for (1 in ~100 of a measuring comm's
 * calls): out of line, to keep the hot path short. */
static __attribute__((noipa, cold)) void
window_call(struct bot_decide_ctx *c, int collType, size_t nBytes, float **collCostTable,
	    int numAlgo, int numProto, int *nChannels)
{
	const float *t = (const float *)collCostTable;
	struct bot_win_call wc;

	bot_win_before(c->meas, &wc, collType, nBytes, t, numAlgo, numProto);
	bot_decide(c, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	bot_win_after(c->meas, &wc, collType, nBytes, t, numAlgo, numProto);
}

static inline __attribute__((always_inline)) void
get_coll_info(struct bot_decide_ctx *c, int collType, size_t nBytes, float **collCostTable,
	      int numAlgo, int numProto, int *nChannels)
{
	if (!c)
		return;
	/* the windows' counter first: one decrement-and-test on the comm's
	 * hot cache line (counting after the decision, or a __builtin_expect
	 * here, cost 1-3 instructions more per call: bench/hotpath.sh) */
	if (c->meas && bot_win_tick(c->meas))
		window_call(c, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	else
		bot_decide(c, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
}

/* Link to the profiler init that just ran on this thread (the rank, and the
 * windows when the comm measures), then open the decision context. */
static bot_nccl_result_t tuner_open(void **ctx, int abi, int has_comm_id, uint64_t comm_id,
				    size_t nRanks, size_t nNodes, bot_nccl_logger_t log)
{
	struct bot_decide_ctx *c;
	struct bot_win_hot *meas;
	int rank = bot_meas_tuner_link(comm_id, has_comm_id, nRanks, nNodes, &meas);
	int rc = bot_decide_open(&c, abi, has_comm_id, comm_id, nRanks, nNodes, rank, log);

	if (rc != BOT_NCCL_SUCCESS) {
		bot_meas_tuner_unlink(meas);
		*ctx = NULL;
		return rc;
	}
	c->meas = meas;
	*ctx = c;
	note_tuner(abi, c, log);
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t v3_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	return tuner_open(ctx, 3, 0, 0, nRanks, nNodes, log);
}

static bot_nccl_result_t v4_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	return tuner_open(ctx, 4, 0, 0, nRanks, nNodes, log);
}

static bot_nccl_result_t v5_init(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
				 bot_nccl_logger_t log, struct bot_nccl_nvl_domain_info *nvl,
				 struct bot_nccl_tuner_constants *constants)
{
	return tuner_open(ctx, 5, 1, commId, nRanks, nNodes, log);
}

static bot_nccl_result_t v6_init(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
				 bot_nccl_logger_t log, struct bot_nccl_nvl_domain_info *nvl,
				 struct bot_nccl_tuner_constants *constants)
{
	return tuner_open(ctx, 6, 1, commId, nRanks, nNodes, log);
}

static bot_nccl_result_t v3_get_coll_info(void *ctx, int collType, size_t nBytes, int numPipeOps,
					  float **collCostTable, int numAlgo, int numProto,
					  int *nChannels)
{
	get_coll_info(ctx, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t v4_get_coll_info(void *ctx, int collType, size_t nBytes, int numPipeOps,
					  float **collCostTable, int numAlgo, int numProto,
					  int regBuff, int *nChannels)
{
	get_coll_info(ctx, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t tuner_fini(void *ctx)
{
	struct bot_decide_ctx *c = ctx;

	if (!c)
		return BOT_NCCL_SUCCESS;
	bot_meas_tuner_unlink(c->meas);
	c->meas = NULL;
	bot_decide_close(c);
	/* the process record even where nothing measures (no-op when the
	 * file is current, or the spool is not set up) */
	bot_spool_flush();
	return BOT_NCCL_SUCCESS;
}

/* ---- profiler v4..v6 ----------------------------------------------------- */

static bot_nccl_result_t prof_v4_init(void **ctx, int *mask, const char *commName,
				      uint64_t commHash, int nNodes, int nRanks, int rank,
				      bot_nccl_logger_t log)
{
	return bot_meas_init(ctx, 4, commHash, mask, nNodes, nRanks, rank, log);
}

static bot_nccl_result_t prof_v5_init(void **ctx, uint64_t commId, int *mask,
				      const char *commName, int nNodes, int nRanks, int rank,
				      bot_nccl_logger_t log)
{
	return bot_meas_init(ctx, 5, commId, mask, nNodes, nRanks, rank, log);
}

/* v6's init has v5's signature; it exists so the process record says v6 */
static bot_nccl_result_t prof_v6_init(void **ctx, uint64_t commId, int *mask,
				      const char *commName, int nNodes, int nRanks, int rank,
				      bot_nccl_logger_t log)
{
	return bot_meas_init(ctx, 6, commId, mask, nNodes, nRanks, rank, log);
}

/* ---- exported structs ---------------------------------------------------- */

BOT_EXPORT const struct bot_nccl_tuner_v2 ncclTunerPlugin_v2 = {
	BOT_PLUGIN_NAME, v2_init, v2_get_coll_info, v2_destroy
};
BOT_EXPORT const struct bot_nccl_tuner_v3 ncclTunerPlugin_v3 = {
	BOT_PLUGIN_NAME, v3_init, v3_get_coll_info, tuner_fini
};
BOT_EXPORT const struct bot_nccl_tuner_v4 ncclTunerPlugin_v4 = {
	BOT_PLUGIN_NAME, v4_init, v4_get_coll_info, tuner_fini
};
BOT_EXPORT const struct bot_nccl_tuner_v5 ncclTunerPlugin_v5 = {
	BOT_PLUGIN_NAME, v5_init, v4_get_coll_info, tuner_fini
};
BOT_EXPORT const struct bot_nccl_tuner_v6 ncclTunerPlugin_v6 = {
	BOT_PLUGIN_NAME, v6_init, v4_get_coll_info, tuner_fini, NULL
};

BOT_EXPORT const struct bot_nccl_profiler_v4 ncclProfiler_v4 = {
	BOT_PLUGIN_NAME, prof_v4_init, bot_meas_start_v4, bot_rec_stop, bot_rec_state,
	bot_meas_finalize
};
BOT_EXPORT const struct bot_nccl_profiler_v5 ncclProfiler_v5 = {
	BOT_PLUGIN_NAME, prof_v5_init, bot_meas_start_v5, bot_rec_stop, bot_rec_state,
	bot_meas_finalize
};
BOT_EXPORT const struct bot_nccl_profiler_v5 ncclProfiler_v6 = {
	BOT_PLUGIN_NAME, prof_v6_init, bot_meas_start_v5, bot_rec_stop, bot_rec_state,
	bot_meas_finalize
};
