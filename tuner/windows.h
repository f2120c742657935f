/*
 * windows.h - when measurement happens: measurement windows, their duty
 * cycle, NCCL's process-global event mask, and the back-off after a CUDA
 * graph capture.
 *
 * The event mask is process-global and NCCL copies it into each collective
 * at the API call, before the tuner runs. So the getCollInfo of call k
 * decides whether call k+1 opens a window of W calls (NCCL_BOT_WINDOW,
 * 16..64, default 32), every 100 W calls of the communicator (duty cycle
 * 1%), at a phase taken from the commId so that every rank of the comm
 * measures the same calls. The mask is Coll|KernelCh while any window is
 * open and 0 otherwise; the plugin owns it and writes it at every profiler
 * init and at every window transition: every mask, when several NCCLs in
 * the process load this library (each its own mask int, BOT_WIN_MASKS at
 * most with measuring comms).
 *
 * Owns struct bot_win, one per measuring communicator, referenced by the
 * profiler context and by the linked tuner context (tuner/link.h), and
 * through it that communicator's records (tuner/records.h). The tuner's
 * getCollInfo touches only struct bot_win_hot: a down-counter to the next
 * call the windows care about. That call, and every call inside a window,
 * goes through bot_win_before() and bot_win_after() around the decision,
 * which the entry point (plugin.c) makes itself: nothing here decides or
 * calls the decision, and a window call decides like any other.
 */
#ifndef BOT_TUNER_WINDOWS_H
#define BOT_TUNER_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "tuner/nccl_abi.h"
#include "tuner/records.h"

/* While a window is open: Coll and KernelCh (NCCL adds Group, and on v5+
 * GroupApi and CollApi, which carry graphCaptured). */
#define BOT_WIN_MASK_ON (BOT_NCCL_PROF_COLL | BOT_NCCL_PROF_KERNEL_CH)
/* A window of W calls every BOT_WIN_PERIOD_FACTOR W calls. */
#define BOT_WIN_PERIOD_FACTOR 100
/* A window open this long is closed (its comm stopped calling); the test
 * hook for the records' stuck time replaces it (tuner/env.h). */
#define BOT_WIN_STUCK_NS 2000000000ull
/* At most one scan for stuck windows and records per 100 ms. */
#define BOT_WIN_SCAN_NS 100000000ull
/* The process's quiet time after a busy mask is at most this many stuck
 * times (10 minutes): windows.c says why. */
#define BOT_WIN_QUIET_MAX_STUCK 300
/* Distinct NCCL masks (NCCLs in one process with measuring comms). */
#define BOT_WIN_MASKS 8

/*
 * The part getCollInfo touches: calls until the next one the windows wait
 * for (>= 1 between calls). Only the comm's tuner thread writes it (NCCL never calls
 * getCollInfo concurrently for one comm). Calls are not counted per
 * context here: a dense per-comm array cost 1.1 ns median per getCollInfo
 * (bench/hotpath.sh, profcost), over the 1 ns budget; window calls are
 * counted in the records, and the comm's calls over its periods
 * (bot_rec_period: the quiet time skips some windows) are shared out as
 * the window calls were.
 */
struct bot_win_hot {
	uint64_t left;
};

struct bot_win;

/* Hot path, per getCollInfo of a measuring comm: count the call; 1 when it
 * is one the windows wait for (a transition, or a call inside a window):
 * then bracket the decision with bot_win_before() and bot_win_after(),
 * which also re-arm the counter. */
static inline int bot_win_tick(struct bot_win_hot *h)
{
	return --h->left == 0;
}

/* What bot_win_before() saw, for bot_win_after(). */
struct bot_win_call {
	int in_window;
	struct bot_rec_row row;
};
void bot_win_before(struct bot_win_hot *h, struct bot_win_call *wc, int coll, size_t nbytes,
		    const float *t, int numAlgo, int numProto);
void bot_win_after(struct bot_win_hot *h, struct bot_win_call *wc, int coll, size_t nbytes,
		   const float *t, int numAlgo, int numProto);

/* A communicator's windows over its records rc (whose reference it takes
 * over: on failure too). The first arming point comes from comm_id, the
 * same on every rank. One reference, the caller's; NULL without memory. */
struct bot_win *bot_win_new(struct bot_rec_comm *rc, uint64_t comm_id, unsigned window);
/* A reference unless it is already dying (0 then); the signature
 * tuner/link.h asks for. */
int bot_win_ref(void *w);
/* Drop a reference; the last one closes its window, forgets its link and
 * drops the records' reference. */
void bot_win_put(struct bot_win *w);
struct bot_win_hot *bot_win_hot(struct bot_win *w);
struct bot_win *bot_win_of(struct bot_win_hot *h);
struct bot_rec_comm *bot_win_rec(struct bot_win *w);
unsigned bot_win_window(const struct bot_win *w);
unsigned bot_win_period(const struct bot_win *w);

/* Profiler init: the mask of the NCCL calling (process-global for that
 * NCCL), and this comm's windows w (NULL when it does not measure). With
 * w, the mask is held until w's last reference goes; -1 when it cannot be
 * (BOT_WIN_MASKS other masks held, or no mask): then w must not measure
 * (the caller drops it). A mask that no measuring comm holds is set to 0
 * and not written again. Every held mask is written now. */
int bot_win_mask(struct bot_win *w, int *mask);
/* Profiler finalize: this comm's window no longer counts. */
void bot_win_close(struct bot_win *w);
/* A captured API call: drop every open window now, and skip this comm's
 * next windows (2^k of them after k captures in a row, k <= 6). */
void bot_win_capture(struct bot_win *w);
/* Close windows whose comm stopped calling, then complete records that
 * miss KernelCh events (bot_rec_scan); at most once per scan period, on
 * one thread. Any thread, any event: it costs one coarse clock read
 * between scans. */
void bot_win_poll(void);

/* Test hooks (tuner/env.h): the stuck time of windows (the scan period is
 * capped at it; the quiet time at BOT_WIN_QUIET_MAX_STUCK of it), and no
 * process-wide quiet time. */
void bot_win_set_test_hooks(uint64_t scan_ns, int no_quiet);

#endif
