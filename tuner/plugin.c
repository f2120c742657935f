/*
 * plugin.c - the ABI entry points of libnccl-tuner-bot.so.
 *
 * One shared object is both NCCL's tuner and its profiler (both environment
 * variables name the same path, so dlopen() returns one instance). It
 * exports ncclTunerPlugin_v2..v6 and ncclProfiler_v4..v6 and nothing else
 * (tuner/exports.map); every function is a thin adapter onto tuner.c or
 * profiler.c.
 *
 * Versions: v2 (NCCL 2.21) has no cost table, so it cannot see which arms
 * are valid: pass-through, it returns success and leaves every output
 * alone. v3/v4 (2.22, 2.24) decide without a commId (exploit arms only);
 * v5/v6 (2.28, 2.30) decide with probes. v6's getChunkSize is NULL (keep
 * NCCL's). regBuff is never looked at: it differs between ranks.
 */
#include <stddef.h>

#include "tuner/nccl_abi.h"
#include "tuner/profiler.h"
#include "tuner/tuner.h"

#define BOT_EXPORT __attribute__((visibility("default")))
#define BOT_PLUGIN_NAME "nccl-bot"

/* ---- tuner v2: pass-through ---------------------------------------------- */

static char v2_ctx;

static bot_nccl_result_t v2_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	*ctx = &v2_ctx;
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
	return BOT_NCCL_SUCCESS;
}

/* ---- tuner v3..v6 -------------------------------------------------------- */

/* The decision; with the linked profiler measuring, first count the call
 * and, only at a window transition or inside a window, go through
 * bot_prof_collinfo() (which decides with the same bot_tuner_decide()). */
static inline __attribute__((always_inline)) void
bot_get_coll_info(struct bot_tuner_ctx *c, int collType, size_t nBytes,
				     float **collCostTable, int numAlgo, int numProto,
				     int *nChannels)
{
	if (!c)
		return;
	if (c->meas && bot_meas_count(c->meas, collType, nBytes))
		bot_prof_collinfo(c, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	else
		bot_tuner_decide(c, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
}

static bot_nccl_result_t v3_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	return bot_tuner_open((struct bot_tuner_ctx **)ctx, 3, 0, 0, nRanks, nNodes, log);
}

static bot_nccl_result_t v4_init(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx)
{
	return bot_tuner_open((struct bot_tuner_ctx **)ctx, 4, 0, 0, nRanks, nNodes, log);
}

static bot_nccl_result_t v5_init(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
				 bot_nccl_logger_t log, struct bot_nccl_nvl_domain_info *nvl,
				 struct bot_nccl_tuner_constants *constants)
{
	return bot_tuner_open((struct bot_tuner_ctx **)ctx, 5, 1, commId, nRanks, nNodes, log);
}

static bot_nccl_result_t v6_init(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
				 bot_nccl_logger_t log, struct bot_nccl_nvl_domain_info *nvl,
				 struct bot_nccl_tuner_constants *constants)
{
	return bot_tuner_open((struct bot_tuner_ctx **)ctx, 6, 1, commId, nRanks, nNodes, log);
}

static bot_nccl_result_t v3_get_coll_info(void *ctx, int collType, size_t nBytes, int numPipeOps,
					  float **collCostTable, int numAlgo, int numProto,
					  int *nChannels)
{
	bot_get_coll_info(ctx, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t v4_get_coll_info(void *ctx, int collType, size_t nBytes, int numPipeOps,
					  float **collCostTable, int numAlgo, int numProto,
					  int regBuff, int *nChannels)
{
	bot_get_coll_info(ctx, collType, nBytes, collCostTable, numAlgo, numProto, nChannels);
	return BOT_NCCL_SUCCESS;
}

static bot_nccl_result_t tuner_fini(void *ctx)
{
	bot_tuner_close(ctx);
	return BOT_NCCL_SUCCESS;
}

/* ---- profiler v4..v6 ----------------------------------------------------- */

static bot_nccl_result_t prof_v4_init(void **ctx, int *mask, const char *commName,
				      uint64_t commHash, int nNodes, int nRanks, int rank,
				      bot_nccl_logger_t log)
{
	return bot_prof_init(ctx, 4, commHash, mask, nNodes, nRanks, rank, log);
}

static bot_nccl_result_t prof_v5_init(void **ctx, uint64_t commId, int *mask,
				      const char *commName, int nNodes, int nRanks, int rank,
				      bot_nccl_logger_t log)
{
	return bot_prof_init(ctx, 5, commId, mask, nNodes, nRanks, rank, log);
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
	BOT_PLUGIN_NAME, prof_v4_init, bot_prof_start, bot_prof_stop, bot_prof_record,
	bot_prof_finalize
};
BOT_EXPORT const struct bot_nccl_profiler_v5 ncclProfiler_v5 = {
	BOT_PLUGIN_NAME, prof_v5_init, bot_prof_start, bot_prof_stop, bot_prof_record,
	bot_prof_finalize
};
BOT_EXPORT const struct bot_nccl_profiler_v5 ncclProfiler_v6 = {
	BOT_PLUGIN_NAME, prof_v5_init, bot_prof_start, bot_prof_stop, bot_prof_record,
	bot_prof_finalize
};
