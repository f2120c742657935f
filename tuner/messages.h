/*
 * messages.h - the log lines of the rank-side library that something else
 * reads: the live NCCL check (tests/live/live_nccl.c) parses them from
 * NCCL's INFO output, so they are written from these formats in one place.
 * Change a format here and both sides follow; other log lines stay next to
 * the code that prints them.
 */
#ifndef BOT_TUNER_MESSAGES_H
#define BOT_TUNER_MESSAGES_H

/* decide.c, one fixed arm's decision under NCCL_BOT_DEBUG=1: comm id, coll,
 * nBytes, size bucket, arm, then "forced", "shadow" or why it was left */
#define BOT_MSG_ARM "nccl-bot: comm %016llx coll %d nbytes %zu bucket %u: arm %d %s"

/* decide.c, once per process when NCCL_ALGO or NCCL_PROTO is set */
#define BOT_MSG_ALGO_ENV \
	"nccl-bot: NCCL_ALGO or NCCL_PROTO is set: leaving every cost table untouched"

/* measure.c, profiler init of a measuring comm: ABI, comm id, rank, window,
 * period, size threshold */
#define BOT_MSG_MEASURING \
	"nccl-bot: profiler v%d comm %016llx rank %d: measuring windows of %u calls every %u " \
	"calls at or above %llu bytes"

#endif
