/*
 * profiler.h - the profiler side of libnccl-tuner-bot.so: sampled GPU
 * timing of collectives (DESIGN "Measurement"), called from the ABI entry
 * points in plugin.c, plus the two tiny hooks the tuner calls.
 *
 * Per communicator the profiler keeps one refcounted object (struct
 * bot_meas) that both the profiler context and the linked tuner context
 * reference: KernelCh events arrive on NCCL's proxy thread, possibly after
 * the tuner's finalize. The tuner's getCollInfo touches only its hot part
 * (struct bot_meas_hot): a call counter per context and the call number at
 * which the next measurement-window transition is due. Everything else
 * happens at those rare transitions (bot_prof_collinfo) and in events,
 * which NCCL delivers only while a window holds the process-global event
 * mask on.
 *
 * Nothing here changes a decision: a window call decides with the same
 * bot_tuner_decide() as any other call.
 */
#ifndef BOT_PROFILER_H
#define BOT_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/context.h"
#include "tuner/nccl_abi.h"
#include "tuner/tuner.h"

/* NCCL profiler event descriptor, v5/v6 layout (112 B; ABI notes 2.3).
 * v4 has the same offsets with a uint8_t type. */
struct bot_nccl_prof_descr {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			bool graphCaptured;
			int groupDepth;
		} groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
		uint8_t pad[88];
	};
};

/* State arguments: an 8-byte union; KernelChStop passes the stop pTimer. */
struct bot_nccl_prof_state_args {
	uint64_t pTimer;
};

/* Event type bits and states we use. */
#define BOT_PROF_GROUP (1u << 0)
#define BOT_PROF_COLL (1u << 1)
#define BOT_PROF_KERNEL_CH (1u << 6)
#define BOT_PROF_GROUP_API (1u << 8)
#define BOT_PROF_COLL_API (1u << 9)
#define BOT_PROF_STATE_KERNEL_CH_STOP 22
/* The mask while a window is open (implies Group, and on v5+ GroupApi and
 * CollApi, which carry graphCaptured). */
#define BOT_PROF_MASK_ON (BOT_PROF_COLL | BOT_PROF_KERNEL_CH)

/* Windows: W calls (NCCL_BOT_WINDOW, 16..64) every 100 W calls of a comm. */
#define BOT_PROF_PERIOD_FACTOR 100

/* The part of struct bot_meas the tuner's hot path touches: a down-counter
 * to the next window transition. Only the comm's tuner thread writes it
 * (NCCL never calls getCollInfo concurrently for one comm).
 *
 * Per-context call counts are kept only for window calls (in
 * bot_prof_collinfo): counting every call in a dense per-comm array cost
 * 1.1 ns median per getCollInfo (bench/hotpath.sh, profcost), over the 1 ns
 * budget; summaries scale window counts by period/window. */
struct bot_meas_hot {
	uint64_t left;		/* calls until bot_prof_collinfo() must run (>= 1) */
};

/* Hot path: whether a window transition is due (or a window call), i.e.
 * whether to call bot_prof_collinfo() instead of deciding directly. */
static inline int bot_meas_count(struct bot_meas_hot *m, int coll, size_t nbytes)
{
	(void)coll;
	(void)nbytes;
	return --m->left == 0;
}

/* getCollInfo at a window transition or inside a window: copies the cost
 * row and AUTO's arm for measured contexts, decides with bot_tuner_decide(),
 * notes the decided arm, and opens/closes the window (writes the mask). */
void bot_prof_collinfo(struct bot_tuner_ctx *c, int coll, size_t nbytes, float **table,
		       int numAlgo, int numProto, int *nChannels);

/* Tuner init: the measurement object of the profiler init this thread just
 * linked (bot_prof_link_take() returned a rank for this comm), with a
 * reference; NULL when none or measurement is off. Tuner finalize drops it. */
struct bot_meas_hot *bot_prof_tuner_attach(void);
void bot_prof_tuner_detach(struct bot_meas_hot *m);

/* Profiler ABI (abi 4, 5 or 6). Every call returns success. */
int bot_prof_init(void **ctx, int abi, uint64_t comm_id, int *mask, int nnodes, int nranks,
		  int rank, bot_nccl_logger_t log);
int bot_prof_start(void *ctx, void **handle, struct bot_nccl_prof_descr *d);
int bot_prof_stop(void *handle);
int bot_prof_record(void *handle, int state, struct bot_nccl_prof_state_args *a);
int bot_prof_finalize(void *ctx);

/* Spool writer callback: emit the context-summary records of one live
 * measurement object (tuner/spool.c holds the registry). */
struct bot_spool_rec;
void bot_prof_summaries(void *meas, void (*emit)(const struct bot_spool_rec *r, void *arg),
			void *arg);

#endif
