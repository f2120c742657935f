/*
 * windows.c - measurement windows (tuner/windows.h).
 *
 * Because the mask is process-wide, every comm's collectives emit events
 * while any comm's window is open, so the duty cycle is also bounded per
 * process, by time: after the mask has been on for T, no window opens for
 * 98 T, at most BOT_WIN_QUIET_MAX_STUCK stuck times (a comm whose turn
 * falls in that quiet time skips a period). Ranks of one comm then mostly,
 * not always, measure the same calls; the minimum over ranks pairs those
 * that match. A graph capture seen in a GroupApi/CollApi event (v5+) drops
 * every open window at once, and a window whose comm stopped calling is
 * closed after the stuck time by the next scan, which any Group, Coll or
 * KernelCh event may run (bot_win_poll), not only this library's own
 * calls: with the mask on, those events are what the process pays for.
 *
 * One process can hold several NCCLs (PyTorch's and CuPy's libnccl, say)
 * that load this one library: each passes its own mask int. Every mask of
 * a NCCL that has a measuring comm is kept (BOT_WIN_MASKS at most, each
 * held by its measuring comms' windows) and written at every transition;
 * a mask is set to 0 when its last measuring comm goes, and never written
 * after, so a NCCL that unloads is never touched. This is measurement, not
 * a decision: counters and the clock are fine here.
 */
#include <stdlib.h>
#include <string.h>

#include "policies/context.h"
#include "tuner/link.h"
#include "tuner/records.h"
#include "tuner/spoolwriter.h"
#include "tuner/util.h"
#include "tuner/windows.h"

struct bot_win {
	/* first: the tuner's pointer; alone on its cache line, so that the
	 * atomic reference updates of other threads never bounce it */
	_Alignas(64) struct bot_win_hot hot;
	_Alignas(64) int refs;
	struct bot_rec_comm *rc;
	uint64_t comm_id;
	uint32_t window, period;
	uint64_t grid, pidx;		/* the current period: its first call - 1, its index */
	/* tuner thread, except counted/open_ns (win_lock) */
	uint64_t ncalls;		/* getCollInfo calls, as of the last transition */
	uint64_t next;			/* ncalls of the next transition */
	uint32_t win_left;
	uint32_t cap_skip, cap_level;	/* capture back-off: windows to skip */
	int cap_seen;			/* set by a captured API event */
	int counted;			/* this comm's window counts in open_windows */
	int mslot;			/* its NCCL's mask in masks[], or -1 */
	uint64_t open_ns;
	struct bot_win *all_prev, *all_next;	/* registry (win_lock) */
};

_Static_assert(offsetof(struct bot_win, hot) == 0, "hot first: bot_win_of()");
_Static_assert(offsetof(struct bot_win, refs) >= sizeof(struct bot_win_hot) &&
		       offsetof(struct bot_win, refs) % 64 == 0, "hot on its own cache line");

static char win_lock;
static int open_windows;
static uint64_t busy_since_ns;	/* open_windows went 0 -> 1 (win_lock) */
static uint64_t quiet_until_ns;	/* no window opens before this (win_lock) */
/* NCCL's masks (win_lock): p, held by refs windows of measuring comms */
static struct {
	int *p;
	unsigned refs;
} masks[BOT_WIN_MASKS];
static struct bot_win *all_wins;
static uint64_t last_scan_ns;	/* coarse clock (bot_win_poll) */
static uint64_t scan_ns = BOT_WIN_SCAN_NS;
static uint64_t stuck_ns = BOT_WIN_STUCK_NS;
static int no_quiet;

void bot_win_set_test_hooks(uint64_t ns, int nq)
{
	__atomic_store_n(&scan_ns, ns < BOT_WIN_SCAN_NS ? ns : BOT_WIN_SCAN_NS, __ATOMIC_RELAXED);
	__atomic_store_n(&stuck_ns, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&no_quiet, nq, __ATOMIC_RELAXED);
}

/* win_lock held: every mask we hold follows the open windows */
static void set_mask_locked(void)
{
	int v = open_windows > 0 ? (int)BOT_WIN_MASK_ON : 0;

	for (unsigned i = 0; i < BOT_WIN_MASKS; i++)
		if (masks[i].p)
			__atomic_store_n(masks[i].p, v, __ATOMIC_RELAXED);
}

/* win_lock held: the mask was on from busy_since_ns until now; stay quiet
 * 98 times as long, a duty cycle of ~1% for the process. (A lone comm
 * calling at a steady rate reaches its next window after 99 times its
 * window's length, so this never skips its windows.)
 *
 * At most BOT_WIN_QUIET_MAX_STUCK stuck times (10 minutes by default). A
 * window open longer than the stuck time is closed as stuck, so one
 * window explains at most one stuck time of busy mask; overlapping
 * windows of several comms can chain into a few. A busy time far beyond
 * that is a window nobody closed for a while: its comm went quiet and
 * nothing else ran (no event, no scan), which cost nothing, since events
 * are the cost. Quiet for 98 times that (an idle hour: four days) would
 * stop learning for the rest of the job. The cap is in stuck times, not
 * in one window's calls, because a window's length in time is not known:
 * 98 x 3 stuck times lets the duty cycle stay ~1% for busy periods of up
 * to 3 stuck times (6 s by default), and bounds the pause any busy period
 * can cause to 10 minutes. */
static void quiet_locked(void)
{
	uint64_t now = bot_now_ns(), busy = now - busy_since_ns;
	uint64_t cap = __atomic_load_n(&stuck_ns, __ATOMIC_RELAXED) * BOT_WIN_QUIET_MAX_STUCK;
	uint64_t q;

	if (__atomic_load_n(&no_quiet, __ATOMIC_RELAXED))
		return;
	q = busy > cap / (BOT_WIN_PERIOD_FACTOR - 2) ? cap : busy * (BOT_WIN_PERIOD_FACTOR - 2);
	quiet_until_ns = now + q;
}

/* win_lock held */
static void uncount_locked(struct bot_win *w)
{
	if (!w->counted)
		return;
	__atomic_store_n(&w->counted, 0, __ATOMIC_RELEASE);
	if (open_windows > 0 && --open_windows == 0)
		quiet_locked();
}

/* ---- lifetime --------------------------------------------------------------- */

/* The arming point of the current period: a call drawn from the comm id and
 * the period's index, the same on every rank of the comm, leaving room for
 * the window before the next period. Drawn anew each period: with one
 * offset for good, comms calling in lockstep kept their arming points at
 * the same distance, and one that fell in another's quiet time once fell
 * there every time (a comm of the emulator opened no window in a whole
 * job), so its ranks wrote no summary and the state missed its calls. */
static uint64_t arming_point(const struct bot_win *w)
{
	uint64_t h = w->pidx ? bot_mix64(w->comm_id + w->pidx * 0x9e3779b97f4a7c15ull)
			     : bot_mix64(w->comm_id);

	return w->grid + 1 + h % (w->period - w->window);
}

/* Past the current period's arming point: the next period's. */
static uint64_t next_period(struct bot_win *w)
{
	w->grid += w->period;
	w->pidx++;
	return arming_point(w);
}

struct bot_win *bot_win_new(struct bot_rec_comm *rc, uint64_t comm_id, unsigned window)
{
	struct bot_win *w = aligned_alloc(64, (sizeof(*w) + 63) & ~(size_t)63);

	if (!w) {
		bot_rec_put(rc);
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	w->refs = 1;
	w->mslot = -1;
	w->rc = rc;
	w->comm_id = comm_id;
	w->window = window;
	w->period = window * BOT_WIN_PERIOD_FACTOR;
	w->next = arming_point(w);
	w->hot.left = w->next;
	bot_spin_lock(&win_lock);
	w->all_next = all_wins;
	if (all_wins)
		all_wins->all_prev = w;
	all_wins = w;
	bot_spin_unlock(&win_lock);
	return w;
}

int bot_win_ref(void *obj)
{
	struct bot_win *w = obj;
	int r = __atomic_load_n(&w->refs, __ATOMIC_RELAXED);

	while (r > 0 && !__atomic_compare_exchange_n(&w->refs, &r, r + 1, 0, __ATOMIC_ACQ_REL,
						     __ATOMIC_RELAXED))
		;
	return r > 0;
}

void bot_win_put(struct bot_win *w)
{
	if (!w || __atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL))
		return;
	bot_spin_lock(&win_lock);
	uncount_locked(w);
	if (w->all_prev)
		w->all_prev->all_next = w->all_next;
	else if (all_wins == w)
		all_wins = w->all_next;
	if (w->all_next)
		w->all_next->all_prev = w->all_prev;
	/* the last measuring comm of its NCCL: 0, and never written again
	 * (that NCCL may be unloaded next) */
	if (w->mslot >= 0 && !--masks[w->mslot].refs) {
		__atomic_store_n(masks[w->mslot].p, 0, __ATOMIC_RELAXED);
		masks[w->mslot].p = NULL;
	}
	set_mask_locked();
	bot_spin_unlock(&win_lock);
	bot_link_forget(w);
	bot_rec_put(w->rc);
	free(w);
}

struct bot_win_hot *bot_win_hot(struct bot_win *w)
{
	return &w->hot;
}

struct bot_win *bot_win_of(struct bot_win_hot *h)
{
	return (struct bot_win *)h;
}

struct bot_rec_comm *bot_win_rec(struct bot_win *w)
{
	return w->rc;
}

unsigned bot_win_window(const struct bot_win *w)
{
	return w->window;
}

unsigned bot_win_period(const struct bot_win *w)
{
	return w->period;
}

/* ---- the mask ------------------------------------------------------------------ */

int bot_win_mask(struct bot_win *w, int *mask)
{
	int slot = -1, ret = 0;

	bot_spin_lock(&win_lock);
	for (unsigned i = 0; mask && i < BOT_WIN_MASKS && slot < 0; i++)
		if (masks[i].p == mask)
			slot = (int)i;
	if (w && mask && slot < 0)
		for (unsigned i = 0; i < BOT_WIN_MASKS && slot < 0; i++)
			if (!masks[i].p) {
				slot = (int)i;
				masks[i].p = mask;
				masks[i].refs = 0;
			}
	if (w) {
		if (slot >= 0) {
			masks[slot].refs++;
			w->mslot = slot;
		} else {
			ret = -1;	/* no room (or no mask): this comm cannot measure */
		}
	}
	/* a mask no measuring comm holds: off, and left alone from now on */
	if (mask && slot < 0)
		__atomic_store_n(mask, 0, __ATOMIC_RELAXED);
	set_mask_locked();
	bot_spin_unlock(&win_lock);
	return ret;
}

/* 1 when the window opened; 0 in the process's quiet time. */
static int window_open(struct bot_win *w)
{
	uint64_t now = bot_now_ns();

	bot_spin_lock(&win_lock);
	if (open_windows == 0 && now < quiet_until_ns) {
		bot_spin_unlock(&win_lock);
		return 0;
	}
	if (open_windows == 0)
		busy_since_ns = now;
	w->open_ns = now;
	__atomic_store_n(&w->counted, 1, __ATOMIC_RELEASE);
	open_windows++;
	set_mask_locked();
	bot_spin_unlock(&win_lock);
	return 1;
}

void bot_win_close(struct bot_win *w)
{
	bot_spin_lock(&win_lock);
	uncount_locked(w);
	set_mask_locked();
	bot_spin_unlock(&win_lock);
}

void bot_win_capture(struct bot_win *w)
{
	__atomic_store_n(&w->cap_seen, 1, __ATOMIC_RELAXED);
	bot_spin_lock(&win_lock);
	for (struct bot_win *x = all_wins; x; x = x->all_next)
		uncount_locked(x);
	if (open_windows > 0)
		quiet_locked();
	open_windows = 0;
	set_mask_locked();
	bot_spin_unlock(&win_lock);
}

void bot_win_poll(void)
{
	uint64_t c = bot_coarse_ns(), last = __atomic_load_n(&last_scan_ns, __ATOMIC_RELAXED);
	uint64_t now, stuck;

	/* one thread per scan period; the others go on at once */
	if (c - last < __atomic_load_n(&scan_ns, __ATOMIC_RELAXED) ||
	    !__atomic_compare_exchange_n(&last_scan_ns, &last, c, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	now = bot_now_ns();	/* the precise clock, as open_ns */
	stuck = __atomic_load_n(&stuck_ns, __ATOMIC_RELAXED);
	bot_spin_lock(&win_lock);
	for (struct bot_win *w = all_wins; w; w = w->all_next)
		if (w->counted && now - w->open_ns > stuck)
			uncount_locked(w);
	set_mask_locked();
	bot_spin_unlock(&win_lock);
	bot_rec_scan(now);
}

/* ---- window calls (tuner thread) ------------------------------------------------- */

void bot_win_before(struct bot_win_hot *h, struct bot_win_call *wc, int coll, size_t nbytes,
		    const float *t, int numAlgo, int numProto)
{
	struct bot_win *w = bot_win_of(h);

	w->ncalls = w->next;		/* hot.left counted down to this call */
	wc->in_window = w->win_left > 0 && __atomic_load_n(&w->counted, __ATOMIC_ACQUIRE);
	if (wc->in_window)
		bot_rec_row_before(w->rc, &wc->row, coll, nbytes, t, numAlgo, numProto);
}

void bot_win_after(struct bot_win_hot *h, struct bot_win_call *wc, int coll, size_t nbytes,
		   const float *t, int numAlgo, int numProto)
{
	struct bot_win *w = bot_win_of(h);

	if (wc->in_window)
		bot_rec_row_after(w->rc, &wc->row, coll, nbytes, t, numAlgo, numProto);
	if (w->win_left > 0) {
		if (!wc->in_window)
			w->win_left = 0;	/* dropped: capture, or closed as stuck */
		else
			w->win_left--;
		if (w->win_left == 0) {
			bot_win_close(w);
			/* a capture seen during this window: skip 2^k windows, k <= 6 */
			if (__atomic_exchange_n(&w->cap_seen, 0, __ATOMIC_RELAXED)) {
				bot_rec_period_captured(w->rc);
				w->cap_skip = 1u << w->cap_level;
				if (w->cap_level < 6)
					w->cap_level++;
			} else {
				w->cap_level = 0;
			}
			w->next = next_period(w);
		} else {
			w->next = w->ncalls + 1;
		}
	} else {
		/* arming point: call ncalls decides that calls ncalls+1.. are measured */
		bot_win_poll();
		if (w->cap_skip) {
			/* a capture's back-off: not a period of the estimate (its
			 * calls are mostly captured ones, counted apart; counting
			 * it gave the eager contexts half again in test_spool's
			 * test_min_bytes_and_capture) */
			w->cap_skip--;
			w->next = next_period(w);
		} else {
			/* a capture counts when seen in this window: one seen while
			 * another comm's window had the mask on does not back off,
			 * or take out, this comm's next clean one */
			__atomic_store_n(&w->cap_seen, 0, __ATOMIC_RELAXED);
			if (window_open(w)) {
				bot_spool_note_measured();	/* the process record's flag */
				bot_rec_period(w->rc, 1);
				w->win_left = w->window;
				w->next = w->ncalls + 1;
			} else {
				bot_rec_period(w->rc, 0);	/* the quiet time skipped it */
				w->next = next_period(w);
			}
		}
	}
	h->left = w->next - w->ncalls;
}
