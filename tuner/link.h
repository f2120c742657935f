/*
 * link.h - which profiler context a tuner context belongs to.
 *
 * NCCL calls profiler init and then tuner init for the same communicator on
 * the same thread, with no other communicator's init in between
 * (doc/nccl-abi.md, linking tuner and profiler). So a "last profiler init"
 * per OS thread, taken by the tuner init that follows on that thread, links
 * the two: the rank (which the tuner ABI never passes) and the profiler's
 * per-communicator object, which the tuner side then drives (measurement
 * windows are armed from getCollInfo).
 *
 * Owns only that hand-over. The object is opaque here (void *): the caller
 * says how to take a reference to it, and says when one dies.
 */
#ifndef BOT_TUNER_LINK_H
#define BOT_TUNER_LINK_H

#include <stdint.h>

/* Profiler init: this thread's link, replacing what it held. obj may be
 * NULL (not measuring): the rank is still handed over. */
void bot_link_put(uint64_t comm_id, uint32_t nranks, uint32_t nnodes, int rank, void *obj);

/* Tuner init: take (and clear) this thread's link if it is for this comm:
 * the same comm_id when the tuner ABI passes one (by_id: v5+), else (tuner
 * v3/v4, NCCL <= 2.27) the same nranks and nnodes. Returns the rank, or -1
 * with *obj NULL. On a match *obj is the linked object with a reference
 * taken by ref() under the link's lock (so it cannot die in between), or
 * NULL when there is none or ref() refuses (it is already dying). */
int bot_link_take(uint64_t comm_id, int by_id, uint32_t nranks, uint32_t nnodes, void **obj,
		  int (*ref)(void *obj));

/* obj is dying: no link may hand it out any more. */
void bot_link_forget(void *obj);

#endif
