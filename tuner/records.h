/*
 * records.h - what measurement records, per communicator: the profiler's
 * Group, Coll and KernelCh events turned into spool samples, the cost row
 * and call counts of each measured context, and the context summaries
 * (doc/formats.md section 9).
 *
 * Owns struct bot_rec_comm (one per measuring communicator, refcounted:
 * the measurement windows hold one reference and every live Coll record
 * one, because KernelCh events arrive on NCCL's proxy thread, possibly
 * after both finalizes), the event handles NCCL hands back to us, the
 * process-wide record pool, and the completion of a Coll into a sample:
 * duration = latest KernelChStop pTimer - earliest KernelCh start pTimer,
 * attributed to the descriptor's algo/proto (not the tuner's decision),
 * labelled (aggregate, channels missing, out of range, first use of the
 * algorithm) and joined with the cost row copied during a window.
 *
 * Knows nothing of windows or decisions: a window call hands it the cost
 * row before and after the decision (bot_rec_row_*), the event dispatch
 * hands it events already read from the descriptor of whichever profiler
 * ABI delivered them (struct bot_rec_event). Below it is only the spool
 * writer.
 */
#ifndef BOT_TUNER_RECORDS_H
#define BOT_TUNER_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "policies/context.h"
#include "tuner/nccl_abi.h"

struct bot_rec_comm;

/* Who measures, with what threshold: fixed at profiler init. */
struct bot_rec_id {
	uint64_t comm_id;
	uint32_t rank, nranks, nnodes;
	uint8_t policy;		/* doc/formats.md section 10, for the records */
	uint64_t min_bytes;	/* nothing smaller is measured */
	uint32_t scale;		/* all calls per window call (period / window) */
	uint32_t window;	/* calls per window (NCCL_BOT_WINDOW) */
	bot_nccl_logger_t log;	/* NCCL's, for profiler finalize's report; may be NULL */
};

/* A Coll or API event as measurement needs it, whatever the ABI version
 * (only the members of its kind are set). */
struct bot_rec_event {
	unsigned type;		/* BOT_NCCL_PROF_COLL, _GROUP_API or _COLL_API */
	union {
		struct {
			void *api_parent;	/* its CollApi handle (v5+; NULL on v4) */
			void *group;		/* its Group handle (v4: parentObj; v5+:
						 * coll.parentGroup) */
			uint64_t seq;
			const char *func, *datatype, *algo, *proto;
			size_t count;
			uint8_t nchannels;
		} coll;
		struct {
			int captured;	/* graphCaptured */
			const char *func, *datatype;	/* CollApi only */
			size_t count;
		} api;
	};
};

/* A new communicator's records, registered with the spool writer for its
 * summaries (one reference, the caller's). NULL without memory. */
struct bot_rec_comm *bot_rec_new(const struct bot_rec_id *id);
/* Drop a reference; the last one retires its summaries into the spool. */
void bot_rec_put(struct bot_rec_comm *rc);

/* A window call, around the decision (tuner thread): before it, whether the
 * call is measured and NCCL's row as it was; after it, the call counted and,
 * the first time a context is measured, its cost row, AUTO's arm and the
 * arm the decision forced (what a 0.0 entry that was not 0.0 says). */
struct bot_rec_row {
	int measured;
	float before[BOT_NARMS];
};
void bot_rec_row_before(struct bot_rec_comm *rc, struct bot_rec_row *row, int coll,
			size_t nbytes, const float *t, int numAlgo, int numProto);
/* A period of the comm's windows began at an arming point (tuner thread):
 * measured when its window opened, not when the process's quiet time
 * skipped it (a capture's back-off is no period here). The summaries share
 * the comm's calls over its periods out as the window calls were
 * (formats.md section 9). */
void bot_rec_period(struct bot_rec_comm *rc, int measured);
/* The window just closed saw a graph capture: its period was mostly
 * captured calls (counted apart), so it counts in neither periods nor
 * measured (tuner thread). */
void bot_rec_period_captured(struct bot_rec_comm *rc);
void bot_rec_row_after(struct bot_rec_comm *rc, const struct bot_rec_row *row, int coll,
		       size_t nbytes, const float *t, int numAlgo, int numProto);

/* A GroupApi/CollApi event (v5+): counts a captured CollApi call for its
 * context; returns the handle NCCL keeps passing as the parent. */
void *bot_rec_api(struct bot_rec_comm *rc, const struct bot_rec_event *e);
/* A Group start: its handle (NULL without memory). */
void *bot_rec_group(void);
/* A Coll start: its handle, or NULL (not measured; also when the record
 * pool is exhausted, counted and reported at profiler finalize). */
void *bot_rec_coll(struct bot_rec_comm *rc, const struct bot_rec_event *e);
/* A KernelCh start: parent is what NCCL passes, the Coll's handle (or
 * anything else: then nothing happens). Needs no communicator: the record
 * is the parent, even after the comm's profiler finalize. */
void *bot_rec_kch(void *parent, unsigned channel, uint64_t ptimer);
/* stopEvent and recordEventState for every handle, with the profiler ABI's
 * signatures (the entry points use them as they are). Always success. */
bot_nccl_result_t bot_rec_stop(void *handle);
bot_nccl_result_t bot_rec_state(void *handle, int state, union bot_nccl_prof_state_args *a);

/* Profiler finalize: records still waiting for KernelCh events are
 * abandoned (no sample; late events find a dead record, never freed
 * memory). Logs (INFO) how many Colls went unmeasured for want of a
 * record since the last report. */
void bot_rec_finalize(struct bot_rec_comm *rc);

/* Complete, labelled channels-missing, the records of every communicator
 * whose Coll stopped more than the stuck time ago and still misses KernelCh
 * events (the proxy lost them). */
void bot_rec_scan(uint64_t now);

/* Default 2 s; a test hook replaces it (tuner/env.h). */
#define BOT_REC_STUCK_NS 2000000000ull
void bot_rec_set_stuck_ns(uint64_t ns);

/* The record pool: at most this many records, ever (each ~2.7 KB: 11 MB).
 * A dead record (one that late KernelCh events may still name) is reused
 * only after BOT_REC_QUARANTINE_NS; while none is free or old enough and
 * the pool is full, Colls are not measured (counted). A test hook
 * replaces the size (tuner/env.h). */
#define BOT_REC_POOL_MAX 4096
#define BOT_REC_QUARANTINE_NS (60ull * 1000000000ull)
void bot_rec_set_pool_max(unsigned n);

#endif
