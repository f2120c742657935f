/*
 * profiler.h - the profiler side of libnccl-tuner-bot.so, called from the
 * ABI entry points in plugin.c. bot_prof_link_take() (tuner.h) is how the
 * tuner's init finds the profiler init of the same comm.
 */
#ifndef BOT_PROFILER_H
#define BOT_PROFILER_H

#include <stdint.h>

#include "tuner/nccl_abi.h"

int bot_prof_init(void **ctx, uint64_t comm_id, int *mask, int nnodes, int nranks, int rank);
int bot_prof_start(void *ctx, void **handle, struct bot_nccl_prof_descr *d);
int bot_prof_stop(void *handle);
int bot_prof_record(void *handle, int state, struct bot_nccl_prof_state_args *a);
int bot_prof_finalize(void *ctx);

#endif
