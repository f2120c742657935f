/*
 * measure.h - the profiler side of libnccl-tuner-bot.so: per communicator,
 * whether and how it measures, and the events NCCL delivers.
 *
 * Owns the profiler context (a struct bot_win, or NULL when this comm does
 * not measure): profiler init decides from the step table or the
 * environment whether to measure, opens the spool, creates the comm's
 * records and windows and leaves the link for the tuner init that follows
 * on the same thread; profiler finalize closes them. Events are read from
 * the descriptor of the ABI version that delivered them, v4 (104 bytes, a
 * Coll's Group is its parentObj) or v5/v6 (112 bytes, coll.parentGroup),
 * and nothing past a v4 descriptor is ever read (doc/nccl-abi.md, profiler
 * descriptors); then they go to the windows (captures) and the records.
 *
 * The tuner side of the link is here too (bot_meas_tuner_link/unlink): the
 * entry points hand the comm's windows to its decision context, which only
 * stores them for getCollInfo. Nothing here changes a decision.
 */
#ifndef BOT_TUNER_MEASURE_H
#define BOT_TUNER_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "tuner/nccl_abi.h"
#include "tuner/windows.h"

/* Profiler ABI (abi 4, 5 or 6). Every call returns success: no memory or
 * measurement off only cost learning (*ctx NULL). stopEvent and
 * recordEventState carry only a handle: they are tuner/records.h's
 * bot_rec_stop() and bot_rec_state(). */
bot_nccl_result_t bot_meas_init(void **ctx, int abi, uint64_t comm_id, int *mask, int nnodes,
				int nranks, int rank, bot_nccl_logger_t log);
bot_nccl_result_t bot_meas_start_v4(void *ctx, void **handle, struct bot_nccl_prof_descr_v4 *d);
bot_nccl_result_t bot_meas_start_v5(void *ctx, void **handle, struct bot_nccl_prof_descr_v5 *d);
bot_nccl_result_t bot_meas_finalize(void *ctx);

/* Tuner init: the rank and windows of the profiler init this thread just
 * ran for this comm (tuner/link.h; by_id: the tuner ABI passes a commId).
 * Returns the rank or -1; *hot is the windows' hot part with a reference,
 * or NULL when the comm does not measure. */
int bot_meas_tuner_link(uint64_t comm_id, int by_id, size_t nranks, size_t nnodes,
			struct bot_win_hot **hot);
/* Tuner finalize: drop that reference and write the spool. */
void bot_meas_tuner_unlink(struct bot_win_hot *hot);

#endif
