/*
 * test_windows.c - measurement windows and the record pool of the BUILT
 * libnccl-tuner-bot.so, driven as NCCL 2.28 drives it (dlopen() by path,
 * profiler init then tuner init per comm, getCollInfo with a contiguous
 * float[7][3] table, profiler v5 events; layouts from
 * tests/emulator/nccl_abi.h, independent of tuner/'s).
 *
 * Checks: every NCCL's event mask follows the windows when two NCCLs in
 * one process (each its own mask int) load the library, a mask is never
 * written after its NCCL's last measuring comm is gone, more than 8 such
 * NCCLs measure in the first 8 only; a window whose comm went idle is
 * closed by Group, small Coll or KernelCh events of other comms (no arming
 * point, no measured Coll needed), and the quiet time after a long stuck
 * window is capped; a dead record is never reused before its quarantine
 * ends, however many there are (a late KernelCh event on an old handle
 * changes nothing new), and a full pool measures nothing more and says so.
 * Each test runs in its own process (Check's fork mode), so every test
 * gets the library's statics fresh.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/spool.h"
#include "policies/context.h"
#include "tests/emulator/nccl_abi.h"
#include "tests/unit/testutil.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif

#define EV_GROUP 1u
#define EV_COLL 2u
#define EV_KCH 64u
#define EV_GROUP_API 256u
#define KCH_STOP 22
#define MASK_ON (EV_COLL | EV_KCH)

#define NALGO 7
#define NPROTO 3
#define MiB (1024 * 1024)
#define WINDOW 16
#define PERIOD (WINDOW * 100)

static void *so;
static const struct emu_tuner_v5 *t5;
static const struct emu_profiler_v5 *p5;
static char dir[64];
static char alllog[16384];

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	char line_[1024];
	va_list ap;

	(void)level;
	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(line_, sizeof(line_), fmt, ap);
	va_end(ap);
	if (strlen(alllog) + strlen(line_) + 2 < sizeof(alllog)) {
		strcat(alllog, line_);
		strcat(alllog, "\n");
	}
}

static unsigned occurrences(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* CLOCK_MONOTONIC in ns (the library's clock for windows) */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- a comm: profiler init then tuner init on this thread ------------------ */

struct comm {
	void *pctx, *tctx;
	int *mask;
};

static void comm_open(struct comm *c, uint64_t id, int *mask, int rank, int tuner)
{
	memset(c, 0, sizeof(*c));
	c->mask = mask;
	ck_assert_int_eq(p5->init(&c->pctx, id, mask, "test", 2, 16, rank, logger), 0);
	if (tuner)
		ck_assert_int_eq(t5->init(&c->tctx, id, 16, 2, logger, NULL, NULL), 0);
}

static void comm_close(struct comm *c)
{
	if (c->tctx)
		ck_assert_int_eq(t5->finalize(c->tctx), 0);
	ck_assert_int_eq(p5->finalize(c->pctx), 0);
}

/* One getCollInfo (4 MiB allreduce); the mask after it. */
static int gci(struct comm *c)
{
	float t[NALGO][NPROTO];
	int nch = 0;

	for (int i = 0; i < NALGO * NPROTO; i++)
		((float *)t)[i] = 100.0f + (float)i;
	ck_assert_int_eq(t5->getCollInfo(c->tctx, BOT_COLL_ALLREDUCE, 4 * MiB, 1, (float **)t,
					 NALGO, NPROTO, 0, &nch), 0);
	return __atomic_load_n(c->mask, __ATOMIC_RELAXED);
}

/* Calls until the mask reads want (at most n calls); the calls made, or -1.
 * *before (when not NULL): the clock just before the call that got it. */
static int until_mask_at(struct comm *c, int want, int n, uint64_t *before)
{
	for (int i = 1; i <= n; i++) {
		uint64_t t = mono_ns();

		if (gci(c) == want) {
			if (before)
				*before = t;
			return i;
		}
	}
	return -1;
}

static int until_mask(struct comm *c, int want, int n)
{
	return until_mask_at(c, want, n, NULL);
}

/* ---- events ------------------------------------------------------------------ */

static void group_event(void *pctx)
{
	struct emu_prof_descr_v5 d;
	void *h = NULL;

	memset(&d, 0, sizeof(d));
	d.type = EV_GROUP;
	p5->startEvent(pctx, &h, &d);
	p5->stopEvent(h);
}

static void *coll_start(void *pctx, size_t nbytes, uint8_t nch, uint64_t seq)
{
	struct emu_prof_descr_v5 d;
	void *h = NULL;

	memset(&d, 0, sizeof(d));
	d.type = EV_COLL;
	d.coll.seqNumber = seq;
	d.coll.func = "AllReduce";
	d.coll.count = nbytes / 4;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = nch;
	d.coll.algo = "RING";
	d.coll.proto = "SIMPLE";
	ck_assert_int_eq(p5->startEvent(pctx, &h, &d), 0);
	return h;
}

static void *kch_start(void *pctx, void *parent, uint8_t ch, uint64_t ptimer)
{
	struct emu_prof_descr_v5 d;
	void *h = NULL;

	memset(&d, 0, sizeof(d));
	d.type = EV_KCH;
	d.parentObj = parent;
	d.kernelCh.channelId = ch;
	d.kernelCh.pTimer = ptimer;
	ck_assert_int_eq(p5->startEvent(pctx, &h, &d), 0);
	return h;
}

static void kch_stop(void *h, uint64_t ptimer)
{
	union emu_prof_state_v5 st;

	memset(&st, 0, sizeof(st));
	st.kernelCh.pTimer = ptimer;
	ck_assert_int_eq(p5->recordEventState(h, KCH_STOP, &st), 0);
	ck_assert_int_eq(p5->stopEvent(h), 0);
}

/* ---- fixture ------------------------------------------------------------------ */

static void setup(void)
{
	const char *path = getenv("BOT_TUNER_SO");

	if (!path || !*path)
		path = BOT_TUNER_SO;
	unsetenv("NCCL_BOT_TABLE");
	unsetenv("NCCL_BOT_POLICY");
	unsetenv("NCCL_BOT_MIN_BYTES");
	unsetenv("NCCL_BOT_MEASURE_V4");
	/* nothing stuck unless a test asks for it: with the default (2 s), a
	 * loaded machine (an instrumented build beside other suites) stalling
	 * this process that long timed out records and windows that the test
	 * expects to be live, and a's stopped Colls became flagged samples */
	setenv("NCCL_BOT_TEST_STUCK_NS", "600000000000", 1);
	/* windows by call counts unless a test asks for the quiet time */
	setenv("NCCL_BOT_TEST_NO_QUIET", "1", 1);
	unsetenv("NCCL_BOT_TEST_POOL_MAX");
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_PROTO");
	setenv("NCCL_BOT_WINDOW", "16", 1);
	bot_test_mkdtemp(dir, sizeof(dir), "win");
	setenv("NCCL_BOT_SPOOL", dir, 1);
	so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(so != NULL, "dlopen %s: %s", path, dlerror());
	t5 = dlsym(so, "ncclTunerPlugin_v5");
	p5 = dlsym(so, "ncclProfiler_v5");
	ck_assert(t5 && p5);
	alllog[0] = '\0';
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

/* ---- NCCL masks ------------------------------------------------------------------ */

/* Two NCCLs in one process (PyTorch's and CuPy's libnccl) load this one
 * library, each with its own mask int: both follow every window, whichever
 * profiler init came last. Before, only the last init's mask was written:
 * m1, on when m2's init came, stayed on for good (every collective of that
 * NCCL profiled). A NCCL whose last measuring comm is gone is never
 * written again (it may be unloaded); a mask of a comm that does not
 * measure is set to 0 and left alone. */
START_TEST(test_two_nccl_masks)
{
	static int m1 = 5, m2 = 6, m3 = 99;
	struct comm a, b, c;

	comm_open(&a, 0x1111, &m1, 0, 1);
	ck_assert_int_eq(m1, 0);
	ck_assert_int_gt(until_mask(&a, MASK_ON, 2 * PERIOD), 0);
	/* the second NCCL's first comm, during a's window */
	comm_open(&b, 0x2222, &m2, 0, 1);
	ck_assert_int_eq(m2, MASK_ON);
	ck_assert_int_eq(m1, MASK_ON);
	ck_assert_int_gt(until_mask(&a, 0, WINDOW + 1), 0);
	ck_assert_int_eq(m2, 0);
	ck_assert_int_eq(m1, 0);	/* was left on */
	/* b's windows drive both masks too */
	ck_assert_int_gt(until_mask(&b, MASK_ON, 2 * PERIOD), 0);
	ck_assert_int_eq(m1, MASK_ON);
	ck_assert_int_gt(until_mask(&b, 0, WINDOW + 1), 0);
	ck_assert_int_eq(m1, 0);

	/* a comm that does not measure (no spool), in a third NCCL, during a
	 * window: its mask goes to 0 and stays there */
	ck_assert_int_gt(until_mask(&a, MASK_ON, 2 * PERIOD), 0);
	unsetenv("NCCL_BOT_SPOOL");
	comm_open(&c, 0x3333, &m3, 0, 1);
	setenv("NCCL_BOT_SPOOL", dir, 1);
	ck_assert_ptr_null(c.pctx);
	ck_assert_int_eq(m3, 0);
	ck_assert_int_eq(m1, MASK_ON);
	ck_assert_int_eq(m2, MASK_ON);

	/* b's NCCL loses its last comm while a's window is open: m2 goes to 0
	 * at once and is never written again */
	comm_close(&b);
	ck_assert_int_eq(m2, 0);
	ck_assert_int_eq(m1, MASK_ON);
	m2 = 77;		/* that NCCL's memory, reused */
	ck_assert_int_gt(until_mask(&a, 0, WINDOW + 1), 0);
	ck_assert_int_gt(until_mask(&a, MASK_ON, 2 * PERIOD), 0);
	ck_assert_int_gt(until_mask(&a, 0, WINDOW + 1), 0);
	ck_assert_int_eq(m2, 77);
	ck_assert_int_eq(m3, 0);
	comm_close(&c);
	comm_close(&a);
	ck_assert_int_eq(m1, 0);
	ck_assert_int_eq(m2, 77);
}
END_TEST

/* At most 8 NCCLs' masks are held: a ninth NCCL's comms do not measure
 * (logged once), its mask is set to 0; another comm of a held NCCL still
 * measures, and a slot comes back when its NCCL's last comm goes. */
START_TEST(test_mask_slots)
{
	static int m[10];
	struct comm c[10], more, again;

	for (int i = 0; i < 8; i++) {
		comm_open(&c[i], 0x100 + (uint64_t)i, &m[i], 0, 0);
		ck_assert_ptr_nonnull(c[i].pctx);
	}
	m[8] = 3;
	comm_open(&c[8], 0x108, &m[8], 0, 0);
	ck_assert_ptr_null(c[8].pctx);
	ck_assert_int_eq(m[8], 0);
	ck_assert_ptr_nonnull(strstr(alllog, "more than 8 NCCL libraries"));
	comm_open(&c[9], 0x109, &m[9], 0, 0);
	ck_assert_ptr_null(c[9].pctx);
	ck_assert_uint_eq(occurrences(alllog, "more than 8 NCCL libraries"), 1);
	/* the same NCCL as comm 0 */
	comm_open(&more, 0x200, &m[0], 0, 0);
	ck_assert_ptr_nonnull(more.pctx);
	/* NCCL 7's only comm goes: room for NCCL 8 */
	comm_close(&c[7]);
	comm_open(&again, 0x300, &m[8], 0, 0);
	ck_assert_ptr_nonnull(again.pctx);
	comm_close(&again);
	comm_close(&more);
	for (int i = 0; i < 7; i++)
		comm_close(&c[i]);
	comm_close(&c[8]);
	comm_close(&c[9]);
}
END_TEST

/* ---- stuck windows ------------------------------------------------------------------ */

/* A window whose comm went idle closes after the stuck time (hook: 50 ms)
 * at the next Group, Coll of any size or KernelCh event of any comm, also
 * one that does not measure: no arming point and no measured Coll needed.
 * Before, only those two ran the scan, so with p2p or small collectives
 * after it the mask stayed on and everything was profiled. An event
 * before the stuck time leaves the window open; that is asserted only
 * when this process itself was not stalled past the stuck time between
 * the opening call and the event (a loaded machine: then it tries again,
 * up to STUCK_TRIES times). */
#define STUCK_NS 50000000ull
#define STUCK_TRIES 40
START_TEST(test_stuck_window_closes_on_events)
{
	static int m = 0;
	struct comm a, b, idle;

	setenv("NCCL_BOT_TEST_STUCK_NS", "50000000", 1);
	comm_open(&a, 0x1111, &m, 0, 1);
	comm_open(&b, 0x2222, &m, 1, 1);	/* the same NCCL, measuring */
	unsetenv("NCCL_BOT_SPOOL");
	comm_open(&idle, 0x3333, &m, 0, 1);	/* does not measure */
	setenv("NCCL_BOT_SPOOL", dir, 1);
	ck_assert_ptr_null(idle.pctx);
	for (int kind = 0; kind < 4; kind++) {
		void *h;
		int tries = 0;
		uint64_t opened;

		for (;;) {
			ck_assert_int_gt(until_mask_at(&a, MASK_ON, 2 * PERIOD, &opened), 0);
			/* not stuck yet: events leave it open */
			group_event(b.pctx);
			if (mono_ns() - opened < STUCK_NS)
				break;
			ck_assert_msg(++tries < STUCK_TRIES, "stalled past the stuck time %d times",
				      tries);
			sleep_ms(2 * STUCK_NS / 1000000);	/* closed by the next event */
			group_event(b.pctx);
			ck_assert_int_eq(m, 0);
		}
		ck_assert_int_eq(m, MASK_ON);
		sleep_ms(3 * STUCK_NS / 1000000);
		switch (kind) {
		case 0:		/* a group (p2p traffic has one too) */
			group_event(b.pctx);
			break;
		case 1:		/* a collective below the size threshold */
			h = coll_start(b.pctx, 512 * 1024, 8, 1);
			ck_assert_ptr_null(h);
			p5->stopEvent(h);
			break;
		case 2:		/* a kernel channel with no parent of ours */
			h = kch_start(b.pctx, NULL, 0, 1);
			ck_assert_ptr_null(h);
			break;
		case 3:		/* a group of a comm that does not measure */
			group_event(idle.pctx);
			break;
		}
		ck_assert_msg(m == 0, "kind %d: mask still %d", kind, m);
	}
	comm_close(&idle);
	comm_close(&b);
	comm_close(&a);
}
END_TEST

/* The calls at which comm `id` (rank `rank`) opens its windows in its first
 * `np` periods, alone in the process (no quiet time), into start[]. */
static void window_starts(uint64_t id, int rank, unsigned np, long *start)
{
	static int m = 0;
	struct comm a;
	long call = 0;
	unsigned k = 0;
	int on = 0;

	comm_open(&a, id, &m, rank, 1);
	while (k < np && call < (long)(np + 1) * PERIOD) {
		int now = gci(&a) == MASK_ON;

		call++;
		if (now && !on)
			start[k++] = call;
		on = now;
	}
	comm_close(&a);
	ck_assert_uint_eq(k, np);
}

/* A graph capture seen on comm a while only b's window was open (the mask
 * is process-wide) drops the windows, but backs off none of a's own: a's
 * next window saw no capture. Counted over a's first 6 periods: a window in
 * each (a back-off for the stale capture skipped the second: 5). */
START_TEST(test_capture_outside_window)
{
	static int m = 0;
	struct comm a, b;
	struct emu_prof_descr_v5 d;
	void *h = NULL;
	unsigned windows = 0;
	int on = 0;

	comm_open(&a, 0x1111, &m, 0, 1);
	comm_open(&b, 0x2222, &m, 0, 1);
	ck_assert_int_gt(until_mask(&b, MASK_ON, 2 * PERIOD), 0);
	memset(&d, 0, sizeof(d));
	d.type = EV_GROUP_API;
	d.groupApi.graphCaptured = 1;
	p5->startEvent(a.pctx, &h, &d);
	if (h)
		p5->stopEvent(h);
	ck_assert_int_eq(m, 0);		/* every window dropped */
	for (int i = 0; i < 6 * PERIOD; i++) {
		int now = gci(&a) == MASK_ON;

		windows += now && !on;
		on = now;
	}
	ck_assert_uint_eq(windows, 6);
	comm_close(&b);
	comm_close(&a);
}
END_TEST

/* Each period's arming point is drawn anew from the comm id and the
 * period's index: the same on every rank of the comm, always leaving room
 * for the window in its period, and not at one offset for good (comms
 * calling in lockstep kept the same distance, and one whose arming points
 * fell in another's quiet time fell there every period: it never measured). */
START_TEST(test_arming_points_drawn_per_period)
{
	enum { NP = 8 };
	long s0[NP], s1[NP];
	int distinct = 0;

	window_starts(0xabcdef12, 0, NP, s0);
	window_starts(0xabcdef12, 1, NP, s1);
	for (unsigned p = 0; p < NP; p++) {
		long off = s0[p] - (long)p * PERIOD;

		ck_assert_int_eq(s0[p], s1[p]);		/* every rank alike */
		ck_assert_int_ge(off, 1);
		ck_assert_int_le(off, PERIOD - WINDOW + 1);
		distinct += p && s0[p] - s0[p - 1] != PERIOD;
	}
	ck_assert_int_gt(distinct, 0);
}
END_TEST

/* The quiet time after a stuck window is at most 300 stuck times (hook:
 * 5 ms -> 1.5 s; 10 minutes by default), not 98 times however long the
 * mask stayed on (here 300 ms -> 29 s; an idle hour -> four days without
 * measurement). The quiet time itself still holds: no window in it. */
START_TEST(test_quiet_capped)
{
	static int m = 0;
	struct comm a, b;
	uint64_t before, after, done;
	int seen;

	setenv("NCCL_BOT_TEST_STUCK_NS", "5000000", 1);
	unsetenv("NCCL_BOT_TEST_NO_QUIET");
	comm_open(&a, 0x1111, &m, 0, 1);
	comm_open(&b, 0x2222, &m, 1, 1);
	ck_assert_int_gt(until_mask(&a, MASK_ON, 2 * PERIOD), 0);
	sleep_ms(300);
	/* a measured Coll of another comm: scanned before, too. The quiet
	 * time starts somewhere in [before, after]: the checks below are
	 * timed from the end that keeps them true whatever this process's
	 * stalls (a loaded machine) */
	before = mono_ns();
	p5->stopEvent(coll_start(b.pctx, 4 * MiB, 8, 1));
	after = mono_ns();
	ck_assert_int_eq(m, 0);
	/* quiet: a's next arming point opens nothing */
	seen = 0;
	for (int i = 0; i < 2 * PERIOD; i++)
		seen |= gci(&a);
	done = mono_ns();
	if (done - before < 1000000000ull)
		ck_assert_int_eq(seen, 0);
	/* past 1.5 s: open again */
	if (done - after < 1800000000ull)
		sleep_ms((unsigned)((1800000000ull - (done - after)) / 1000000ull));
	ck_assert_int_gt(until_mask(&a, MASK_ON, 2 * PERIOD), 0);
	comm_close(&b);
	comm_close(&a);
}
END_TEST

/* ---- the record pool --------------------------------------------------------------- */

static struct bot_spool_file sf;

/* The process's one spool file. */
static void read_spool(void)
{
	char err[BOT_SPOOL_ERR_MAX], path[BOT_TEST_PATH_MAX + 256];
	DIR *dp = opendir(dir);
	struct dirent *e;
	int found = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)))
		if (!strncmp(e->d_name, "nb-", 3) && strstr(e->d_name, ".spool")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			found++;
		}
	closedir(dp);
	ck_assert_int_eq(found, 1);
	ck_assert_msg(bot_spool_read_file(path, &sf, err, sizeof(err)) == 0, "%s", err);
}

#define NDEAD 4200

/* More dead records than the old quarantine size (4096) within their
 * quarantine: a new Coll gets a new record, never one that late events of
 * an abandoned Coll still name; those late events change nothing (the new
 * Coll's sample is exact). Before, the oldest dead record was reused at
 * once and the late KernelCh landed on the new Coll (a phantom channel
 * 0: the real one refused, the sample lost). */
START_TEST(test_dead_records_not_reused)
{
	static void *h[NDEAD];
	void *k[4], *hb, *kb, *late;
	static int m;
	struct comm a, b;
	unsigned n = 0;

	setenv("NCCL_BOT_TEST_POOL_MAX", "5000", 1);
	comm_open(&a, 0x1111, &m, 0, 0);
	ck_assert_ptr_nonnull(a.pctx);
	for (unsigned i = 0; i < NDEAD; i++) {
		h[i] = coll_start(a.pctx, 4 * MiB, 2, i);
		ck_assert_ptr_nonnull(h[i]);
		if (i < 4)
			k[i] = kch_start(a.pctx, h[i], 0, 1000);
		p5->stopEvent(h[i]);	/* "enqueued" */
	}
	/* a's proxy is shared and lags: finalize abandons every one */
	comm_close(&a);

	comm_open(&b, 0x2222, &m, 1, 0);
	hb = coll_start(b.pctx, 4 * MiB, 2, 7);
	ck_assert_ptr_nonnull(hb);
	for (unsigned i = 0; i < NDEAD; i++)
		ck_assert_msg(hb != h[i], "a dead record (Coll %u of %u) reused in quarantine", i,
			      NDEAD);
	/* the abandoned Colls' late events */
	for (unsigned i = 0; i < NDEAD; i++) {
		late = kch_start(b.pctx, h[i], 0, 5);
		ck_assert_msg(late == NULL, "a late KernelCh of Coll %u landed", i);
	}
	for (int i = 0; i < 4; i++)
		if (k[i])
			kch_stop(k[i], 999999);
	/* b's own Coll: 2 channels, 50 us */
	kb = kch_start(b.pctx, hb, 0, 100000);
	ck_assert_ptr_nonnull(kb);
	kch_stop(kb, 150000);
	kb = kch_start(b.pctx, hb, 1, 100010);
	ck_assert_ptr_nonnull(kb);
	kch_stop(kb, 149000);
	p5->stopEvent(hb);
	comm_close(&b);
	read_spool();
	for (uint64_t i = 0; i < sf.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &sf.recs[i];

		if (r->kind != BOT_SPOOL_SAMPLE)
			continue;
		n++;
		ck_assert_uint_eq(r->rank, 1);
		ck_assert_uint_eq(r->seq, 7);
		ck_assert_uint_eq(r->duration_ns, 50000);
		ck_assert_uint_eq(r->nchannels, 2);
		ck_assert_uint_eq(r->flags & (BOT_SPOOL_F_CHANNELS | BOT_SPOOL_F_RANGE), 0);
	}
	ck_assert_uint_eq(n, 1);
	bot_spool_free(&sf);
}
END_TEST

/* A full pool (hook: 8 records): the ninth Coll is not measured, nor is a
 * new comm's while the eight are dead and young; each profiler finalize
 * says how many went unmeasured since the last report. */
START_TEST(test_pool_full)
{
	void *h[9], *hb;
	static int m;
	struct comm a, b;

	setenv("NCCL_BOT_TEST_POOL_MAX", "8", 1);
	comm_open(&a, 0x1111, &m, 0, 0);
	for (unsigned i = 0; i < 9; i++) {
		h[i] = coll_start(a.pctx, 4 * MiB, 2, i);
		if (i < 8)
			ck_assert_ptr_nonnull(h[i]);
		else
			ck_assert_ptr_null(h[i]);
		p5->stopEvent(h[i]);
	}
	comm_close(&a);
	ck_assert_ptr_nonnull(strstr(alllog, "nccl-bot: 1 collectives not measured: the record "
					     "pool (8 records) was full"));
	comm_open(&b, 0x2222, &m, 1, 0);
	hb = coll_start(b.pctx, 4 * MiB, 2, 0);
	ck_assert_ptr_null(hb);
	hb = coll_start(b.pctx, 4 * MiB, 2, 1);
	ck_assert_ptr_null(hb);
	ck_assert_ptr_null(kch_start(b.pctx, h[0], 0, 1));
	alllog[0] = '\0';
	comm_close(&b);
	ck_assert_ptr_nonnull(strstr(alllog, "nccl-bot: 2 collectives not measured"));
	alllog[0] = '\0';
	comm_open(&b, 0x3333, &m, 1, 0);
	comm_close(&b);
	ck_assert_ptr_null(strstr(alllog, "not measured"));
}
END_TEST

static Suite *windows_suite(void)
{
	Suite *s = suite_create("windows");
	TCase *tc = tcase_create("so");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_two_nccl_masks);
	tcase_add_test(tc, test_mask_slots);
	tcase_add_test(tc, test_stuck_window_closes_on_events);
	tcase_add_test(tc, test_quiet_capped);
	tcase_add_test(tc, test_arming_points_drawn_per_period);
	tcase_add_test(tc, test_capture_outside_window);
	tcase_add_test(tc, test_dead_records_not_reused);
	tcase_add_test(tc, test_pool_full);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(windows_suite)
