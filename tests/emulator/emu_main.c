/*
 * emu_main.c - the NCCL emulator's driver: suites, scenarios, verdicts.
 *
 *   nccl-emu [options]                 (see usage() or tests/emulator/README.md)
 *
 * A scenario forks one process per rank group, each running emu_rank_main()
 * against the plugin; each sends one fixed-size record per (rank, comm)
 * through a pipe. The parent groups records by communicator and gives each
 * a verdict:
 *   IDENTICAL     every rank launched the same decision sequence
 *   INIT-FAILED   tuner init returned an error on some rank(s) (a loud
 *                 comm-creation failure); the others agree
 *   DIVERGED      ranks that all initialised launched different sequences
 *   UNSAFE        getCollInfo failed, revived an entry (a -1, or one at
 *                 or above the release's search cap made pickable), emptied
 *                 the table, wrote NaN, wrote past numAlgo, or nChannels >
 *                 64; or the profiler's finalize failed (how the fixtures
 *                 report a parent handle that was not what NCCL passes)
 *   CRASH         a rank process died or hit the timeout
 * and each scenario checks its verdicts against what doc/design.md promises.
 * Prints one line per scenario and "N passed, N failed, N skipped"; exits 1
 * on any failure.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/emulator/emu.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

static const char *const policy_names[] = {
	"auto", "sweep", "greedy", "egreedy", "ucb1", "thompson", "etc",
	"greedy-cold", "ucb1-cold", "thompson-cold", "frozen", "shadow",
};
#define NPOLICY 12

enum verdict { V_IDENT, V_INITFAIL, V_DIVERGED, V_UNSAFE, V_CRASH, NV };
static const char *const vname[NV] = { "IDENTICAL", "INIT-FAILED", "DIVERGED", "UNSAFE",
				       "CRASH" };

enum expect {
	X_STRICT,		/* every comm IDENTICAL */
	X_INIT,			/* IDENTICAL or INIT-FAILED (loud) */
	X_CAUGHT,		/* also DIVERGED: documented residual risk, caught here */
	X_MUST_DIVERGE,		/* a bad fixture: at least one comm DIVERGED */
	X_MUST_INITFAIL,	/* the victim's comms INIT-FAILED, the rest IDENTICAL */
	X_MUST_UNSAFE,		/* a bad fixture: at least one comm UNSAFE */
};

static int n_pass, n_fail, n_skip;
static int verbose;
static int no_tables;

/* ---- running a scenario ---- */

struct run {
	struct emu_result *r;	/* [rank * kinds + kind] */
	unsigned n;
	double secs;
	int crashed[1024];	/* per process: exit status / signal */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A rank process ends with _exit(), which skips LeakSanitizer's check at
 * exit: in an ASan build run it here, so that what the plugin (or the rank
 * code) leaks in a rank process is reported, and aborts the process (a
 * CRASH) under abort_on_error, when ASAN_OPTIONS asks for leaks
 * (detect_leaks, the default on Linux). */
static void rank_exit(int rc)
{
#ifdef __SANITIZE_ADDRESS__
	__lsan_do_leak_check();
#endif
	_exit(rc);
}

static int run_scenario(const struct emu_cfg *cfg, struct run *out)
{
	unsigned nr = cfg->nprocs * cfg->ranks_per_proc;
	pid_t pid[1024];
	int fds[1024];
	double t0 = now();

	if (cfg->nprocs > 1024)
		return -1;
	memset(out, 0, sizeof(*out));
	out->n = nr * EMU_NCOMM_KINDS;
	out->r = calloc(out->n, sizeof(*out->r));
	if (!out->r)
		return -1;
	fflush(stdout);
	fflush(stderr);
	for (unsigned p = 0; p < cfg->nprocs; p++) {
		int pfd[2];

		if (pipe(pfd))
			return -1;
		pid[p] = fork();
		if (pid[p] < 0)
			return -1;
		if (!pid[p]) {
			close(pfd[0]);
			for (unsigned q = 0; q < p; q++)
				close(fds[q]);
			rank_exit(emu_rank_main(cfg, p, pfd[1]));
		}
		close(pfd[1]);
		fds[p] = pfd[0];
	}
	for (unsigned p = 0; p < cfg->nprocs; p++) {
		struct emu_result rec;
		int st;

		for (;;) {
			ssize_t got = 0, k;

			while (got < (ssize_t)sizeof(rec)) {
				k = read(fds[p], (char *)&rec + got, sizeof(rec) - (size_t)got);
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					break;
				got += k;
			}
			if (got != (ssize_t)sizeof(rec))
				break;
			if (rec.magic == EMU_RESULT_MAGIC && rec.grank >= 0 &&
			    (unsigned)rec.grank < nr && rec.kind >= 0 &&
			    rec.kind < EMU_NCOMM_KINDS)
				out->r[(unsigned)rec.grank * EMU_NCOMM_KINDS + (unsigned)rec.kind] = rec;
		}
		close(fds[p]);
		while (waitpid(pid[p], &st, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(st))
			out->crashed[p] = 1000 + WTERMSIG(st);
		else if (WEXITSTATUS(st))
			out->crashed[p] = WEXITSTATUS(st);
	}
	for (unsigned i = 0; i < out->n; i++) {
		struct emu_result *x = &out->r[i];
		unsigned proc = (i / EMU_NCOMM_KINDS) / cfg->ranks_per_proc;

		if (x->magic != EMU_RESULT_MAGIC || out->crashed[proc]) {
			x->grank = (int32_t)(i / EMU_NCOMM_KINDS);
			x->kind = (int32_t)(i % EMU_NCOMM_KINDS);
			x->status = EMU_ST_CRASH;
			snprintf(x->msg, sizeof(x->msg), "%s %d",
				 out->crashed[proc] >= 1000 ? "killed by signal" : "exit status",
				 out->crashed[proc] >= 1000 ? out->crashed[proc] - 1000
							    : out->crashed[proc]);
		}
	}
	out->secs = now() - t0;
	return 0;
}

/* ---- verdicts ---- */

struct comm_v {
	int kind, color;
	enum verdict v;
	char detail[600];
};

static uint64_t unsafe_count(const struct emu_result *x)
{
	return x->err_rc + x->err_revived + x->err_empty + x->err_nch + x->err_nan + x->err_oob +
	       x->err_firstuse +
	       (x->prof_fini_rc != 0);
}

/* Verdicts for every distinct communicator; returns how many. */
static unsigned judge(const struct run *run, struct comm_v *cv, unsigned max)
{
	unsigned ncv = 0;

	for (unsigned i = 0; i < run->n; i++) {
		const struct emu_result *a = &run->r[i];
		struct comm_v *c = NULL;
		char *d;
		size_t dl;
		int ngroups = 0, nfail = 0, crash = 0, unsafe = 0;
		uint64_t gh[64], gn[64];
		char granks[64][128];

		if (a->status == EMU_ST_CRASH && a->kind < 0)
			continue;
		for (unsigned j = 0; j < ncv; j++)
			if (cv[j].kind == a->kind && cv[j].color == a->color)
				c = &cv[j];
		if (c || ncv == max)
			continue;
		c = &cv[ncv++];
		c->kind = a->kind;
		c->color = a->color;
		d = c->detail;
		dl = sizeof(c->detail);
		d[0] = 0;
		for (unsigned j = i; j < run->n; j++) {
			const struct emu_result *b = &run->r[j];
			int g;

			if (b->kind != a->kind || b->color != a->color)
				continue;
			if (b->status == EMU_ST_CRASH) {
				crash++;
				snprintf(d + strlen(d), dl - strlen(d), " rank %d %s;", b->grank,
					 b->msg);
				continue;
			}
			if (unsafe_count(b)) {
				unsafe++;
				snprintf(d + strlen(d), dl - strlen(d),
					 " rank %d: rc %llu revived %llu empty %llu nch %llu nan %llu"
					 " oob %llu first-use %llu profiler-finalize %d;", b->grank,
					 (unsigned long long)b->err_rc,
					 (unsigned long long)b->err_revived,
					 (unsigned long long)b->err_empty,
					 (unsigned long long)b->err_nch,
					 (unsigned long long)b->err_nan,
					 (unsigned long long)b->err_oob,
					 (unsigned long long)b->err_firstuse, b->prof_fini_rc);
			}
			if (b->status == EMU_ST_INIT_FAILED) {
				nfail++;
				snprintf(d + strlen(d), dl - strlen(d),
					 " rank %d init rc %d: %s;", b->grank, b->init_rc, b->msg);
				continue;
			}
			for (g = 0; g < ngroups; g++)
				if (gh[g] == b->hash && gn[g] == b->count)
					break;
			if (g == ngroups && g < 64) {
				gh[g] = b->hash;
				gn[g] = b->count;
				granks[g][0] = 0;
				ngroups++;
			}
			if (g < 64)
				snprintf(granks[g] + strlen(granks[g]),
					 sizeof(granks[g]) - strlen(granks[g]), "%s%d",
					 granks[g][0] ? "," : "", b->grank);
		}
		if (crash)
			c->v = V_CRASH;
		else if (unsafe)
			c->v = V_UNSAFE;
		else if (ngroups > 1)
			c->v = V_DIVERGED;
		else if (nfail)
			c->v = V_INITFAIL;
		else
			c->v = V_IDENT;
		if (ngroups > 1) {
			/* first checkpoint (2^k calls) where the groups differ */
			int first = -1;

			for (unsigned k = 0; k < EMU_NCKPT && first < 0; k++) {
				uint64_t h0 = 0;
				int seen = 0;

				for (unsigned j = i; j < run->n; j++) {
					const struct emu_result *b = &run->r[j];

					if (b->kind != a->kind || b->color != a->color ||
					    b->status != EMU_ST_OK)
						continue;
					if (!seen)
						h0 = b->ckpt[k], seen = 1;
					else if (b->ckpt[k] != h0)
						first = (int)k;
				}
			}
			for (int g = 0; g < ngroups; g++)
				snprintf(d + strlen(d), dl - strlen(d), " {%s}=%016llx/n=%llu",
					 granks[g], (unsigned long long)gh[g],
					 (unsigned long long)gn[g]);
			if (first >= 0)
				snprintf(d + strlen(d), dl - strlen(d),
					 "; first difference within calls [%llu, %llu)",
					 first ? 1ULL << (first - 1) : 0ULL, 1ULL << first);
		}
	}
	return ncv;
}

static const char *comm_name(int kind, int color, char *buf, size_t n)
{
	static const char *const k[] = { "world", "world2", "parity", "half" };

	snprintf(buf, n, "%s.%d", kind >= 0 && kind < 4 ? k[kind] : "?", color);
	return buf;
}

static int rank_in_comm(const struct run *run, int grank, int kind, int color)
{
	const struct emu_result *x = &run->r[(unsigned)grank * EMU_NCOMM_KINDS + (unsigned)kind];

	return x->kind == kind && x->color == color;
}

/* ---- reporting ---- */

static void summary(const struct run *run, char *buf, size_t n)
{
	uint64_t arms = 0, calls = 0, over = 0, nch = 0, sim = 0, coll = 0, kch = 0, late = 0;
	uint64_t ahuge = 0, fhuge = 0, none = 0;
	unsigned refused = 0, digest = 0, warns = 0;
	size_t len;

	for (unsigned i = 0; i < run->n; i++) {
		const struct emu_result *x = &run->r[i];

		for (int a = 0; a < EMU_NUM_ARMS; a++)
			if (x->arm_hist[a])
				arms |= 1ULL << a;
		calls += x->count;
		over += x->overrides;
		nch += x->nch_set;
		sim += x->sim_calls;
		coll += x->coll_events;
		kch += x->kch_events;
		late += x->late_kch_events;
		refused += x->alloc_refused;
		digest += x->log_digest;
		warns += x->log_warn;
		ahuge += x->auto_huge;
		fhuge += x->huge_forced;
		none += x->nccl_none;
	}
	snprintf(buf, n,
		 "calls %llu, arms used %d, overridden %.1f%%, nChannels set %.1f%%, simulate %llu,"
		 " Coll ev %llu, KernelCh ev %llu (late %llu), allocs refused %u, WARN %u,"
		 " 'digest' log lines %u",
		 (unsigned long long)calls, __builtin_popcountll(arms),
		 calls ? 100.0 * (double)over / (double)calls : 0.0,
		 calls ? 100.0 * (double)nch / (double)calls : 0.0, (unsigned long long)sim,
		 (unsigned long long)coll, (unsigned long long)kch, (unsigned long long)late,
		 refused, warns, digest);
	len = strlen(buf);
	if ((ahuge || fhuge || none) && len < n)
		snprintf(buf + len, n - len,
			 ", entries >= 3.6e9 launched: by AUTO %llu, forced %llu; failed by NCCL"
			 " (nothing below its cap) %llu", (unsigned long long)ahuge,
			 (unsigned long long)fhuge, (unsigned long long)none);
}

static void result_line(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result_line(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok > 0)
		n_pass++;
	else if (ok == 0)
		n_fail++;
	else
		n_skip++;
	printf("%s %s: ", ok > 0 ? "PASS" : ok == 0 ? "FAIL" : "SKIP", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- scenarios ---- */

static struct emu_cfg base_cfg;		/* from the command line */

struct scn {
	const char *name;
	unsigned asym;
	int thread_mode;
	enum expect expect;
	unsigned nprocs, rpp;	/* 0 = default */
	int needs_table;	/* 1 = needs, -1 = only without a table */
};

static const struct scn scenarios[] = {
	{ "base", 0, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "regbuff", EMU_A_REGBUFF, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "simulate", EMU_A_SIMULATE, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "noprof", EMU_A_NOPROF, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "threads", EMU_A_THREADS, EMU_T_RAND, X_STRICT, 0, 0, 0 },
	{ "tpc", 0, EMU_T_TPC, X_STRICT, 0, 0, 0 },
	{ "allocfail", EMU_A_ALLOCFAIL, EMU_T_RR, X_INIT, 0, 0, 0 },
	{ "env", EMU_A_ENV, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "multi", EMU_A_REGBUFF | EMU_A_THREADS, EMU_T_RAND, X_STRICT, 4, 2, 0 },
	{ "corrupt", EMU_A_CORRUPT, EMU_T_RR, X_CAUGHT, 0, 0, 1 },
	{ "badver", EMU_A_BADVER, EMU_T_RR, X_MUST_INITFAIL, 0, 0, 1 },
	{ "envpolicy", EMU_A_ENVPOLICY, EMU_T_RR, X_CAUGHT, 0, 0, -1 },
	{ "huge", EMU_A_HUGE, EMU_T_RR, X_STRICT, 0, 0, 0 },
	{ "combined", EMU_A_REGBUFF | EMU_A_SIMULATE | EMU_A_NOPROF | EMU_A_THREADS |
			      EMU_A_ALLOCFAIL | EMU_A_ENV | EMU_A_HUGE, EMU_T_RAND, X_INIT, 0, 0, 0 },
};
#define NSCN (sizeof(scenarios) / sizeof(scenarios[0]))

static const struct scn *scn_find(const char *name)
{
	for (unsigned i = 0; i < NSCN; i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

/* Check verdicts against the expectation; 1 pass, 0 fail. */
static int check(const struct emu_cfg *cfg, const struct run *run, enum expect ex,
		 char *why, size_t wl, FILE *det)
{
	struct comm_v cv[64];
	unsigned n = judge(run, cv, 64), cnt[NV] = { 0 };
	int ok = 1;
	unsigned bv = EMU_VICTIM_BADVER % (cfg->nprocs * cfg->ranks_per_proc);
	char nm[32];

	why[0] = 0;
	for (unsigned i = 0; i < n; i++)
		cnt[cv[i].v]++;
	snprintf(why, wl, "%u comms:", n);
	for (int v = 0; v < NV; v++)
		if (cnt[v])
			snprintf(why + strlen(why), wl - strlen(why), " %u %s", cnt[v], vname[v]);
	for (unsigned i = 0; i < n; i++) {
		int good;

		switch (ex) {
		case X_STRICT:
			good = cv[i].v == V_IDENT;
			break;
		case X_INIT:
			good = cv[i].v == V_IDENT || cv[i].v == V_INITFAIL;
			break;
		case X_CAUGHT:
		case X_MUST_DIVERGE:
			good = cv[i].v <= V_DIVERGED;
			break;
		case X_MUST_UNSAFE:
			good = cv[i].v <= V_UNSAFE;
			break;
		case X_MUST_INITFAIL:
			if (rank_in_comm(run, (int)bv, cv[i].kind, cv[i].color))
				good = cv[i].v == V_INITFAIL &&
				       run->r[bv * EMU_NCOMM_KINDS + (unsigned)cv[i].kind].status ==
					       EMU_ST_INIT_FAILED;
			else
				good = cv[i].v == V_IDENT;
			break;
		default:
			good = 0;
		}
		if (!good)
			ok = 0;
		if (!good || verbose || cv[i].v == V_DIVERGED || cv[i].v == V_INITFAIL ||
		    cv[i].v == V_UNSAFE)
			fprintf(det, "    %s %s %s%s\n", good ? "  " : "!!",
			       comm_name(cv[i].kind, cv[i].color, nm, sizeof(nm)), vname[cv[i].v],
			       cv[i].detail);
	}
	if (ex == X_MUST_DIVERGE && !cnt[V_DIVERGED]) {
		ok = 0;
		snprintf(why + strlen(why), wl - strlen(why), " (expected a DIVERGED comm)");
	}
	if (ex == X_MUST_UNSAFE && !cnt[V_UNSAFE]) {
		ok = 0;
		snprintf(why + strlen(why), wl - strlen(why), " (expected an UNSAFE comm)");
	}
	return ok;
}

static const char *expect_name(enum expect ex)
{
	static const char *const n[] = { "all IDENTICAL", "IDENTICAL or INIT-FAILED",
					 "IDENTICAL, INIT-FAILED or DIVERGED-caught",
					 "must detect DIVERGED", "victim INIT-FAILED, rest IDENTICAL",
					 "must detect UNSAFE" };
	return n[ex];
}

/* The corrupted rank must fall back to the prior (invariant 2, doc/design.md): its
 * sequence equals the one it launches with no table at all. */
static int corrupt_reference(const struct emu_cfg *cfg, const struct run *run, char *why,
			     size_t wl)
{
	struct emu_cfg ref = *cfg;
	struct run rr;
	unsigned v = EMU_VICTIM_CORRUPT % (cfg->nprocs * cfg->ranks_per_proc);
	int ok = 1, same_as_table = 1;

	ref.table = NULL;
	ref.asym &= ~(unsigned)EMU_A_CORRUPT;
	if (run_scenario(&ref, &rr))
		return 0;
	for (unsigned k = 0; k < EMU_NCOMM_KINDS; k++) {
		const struct emu_result *x = &run->r[v * EMU_NCOMM_KINDS + k];
		const struct emu_result *y = &rr.r[v * EMU_NCOMM_KINDS + k];
		const struct emu_result *z = &run->r[((v + 2) % (cfg->nprocs * cfg->ranks_per_proc)) *
						      EMU_NCOMM_KINDS + k];

		if (x->status == EMU_ST_INIT_FAILED)
			continue;	/* loud: also acceptable */
		if (x->status != EMU_ST_OK || y->status != EMU_ST_OK || x->hash != y->hash ||
		    x->count != y->count)
			ok = 0;
		if (z->kind == x->kind && z->color == x->color && z->hash != x->hash)
			same_as_table = 0;
	}
	snprintf(why, wl, "corrupted rank %u %s the no-table (prior) run%s", v,
		 ok ? "matches" : "does NOT match",
		 same_as_table ? " (table and prior agree on these calls)" : "");
	free(rr.r);
	return ok;
}

static void run_named(const char *label, const struct emu_cfg *cfg, enum expect ex,
		      int corrupt_ref)
{
	struct run run;
	char why[256], sum[400], extra[200] = "", *det = NULL;
	size_t detlen = 0;
	FILE *df;
	int ok;

	if (run_scenario(cfg, &run)) {
		result_line(0, label, "could not fork/pipe: %s", strerror(errno));
		return;
	}
	df = open_memstream(&det, &detlen);
	if (!df)
		df = stdout;
	ok = check(cfg, &run, ex, why, sizeof(why), df);
	if (df != stdout)
		fclose(df);
	if (corrupt_ref) {
		int r = corrupt_reference(cfg, &run, extra, sizeof(extra));

		ok = ok && r;
	}
	summary(&run, sum, sizeof(sum));
	result_line(ok, label, "%s [expect %s] %s%s%s (%.2f s)", why, expect_name(ex),
		    extra, extra[0] ? "; " : "", sum, run.secs);
	if (det)
		fputs(det, stdout);
	free(det);
	if (cfg->nwork)
		emu_loop_report(cfg, run.r, run.n);
	free(run.r);
}

static void cfg_for(const struct scn *s, struct emu_cfg *cfg, const char *table,
		    const char *tcor, const char *tbad, const char *policy)
{
	*cfg = base_cfg;
	cfg->asym = s->asym;
	cfg->thread_mode = s->thread_mode;
	if (s->nprocs) {
		cfg->nprocs = s->nprocs;
		cfg->ranks_per_proc = s->rpp;
	}
	cfg->table = table;
	cfg->table_corrupt = tcor;
	cfg->table_badver = tbad;
	cfg->policy = table ? NULL : policy;
}

/* ---- suites ---- */

static char *fixture_path(const char *dir, const char *name)
{
	static char buf[8][1100];
	static int i;
	char *b = buf[i++ & 7];

	snprintf(b, sizeof(buf[0]), "%.1024s/fixture-%.40s.so", dir, name);
	return access(b, R_OK) ? NULL : b;
}

/* The step table for a policy: generated over the layouts' shapes, the
 * --table value, or NULL (no tables; err says why when it is an error). */
static char *make_table(int pol, char *err, size_t errlen)
{
	struct emu_shape shapes[16], sh2[16];
	unsigned nshapes, n2;

	err[0] = 0;
	if (no_tables)
		return NULL;
	if (base_cfg.table)
		return strdup(base_cfg.table);
	if (!emu_table_available())
		return NULL;
	/* shapes of the default layout and of the 4x2 "multi" one */
	nshapes = emu_layout_shapes(base_cfg.nprocs * base_cfg.ranks_per_proc,
				    base_cfg.ranks_per_node, shapes, 16);
	n2 = emu_layout_shapes(8, base_cfg.ranks_per_node, sh2, 16);
	for (unsigned i = 0; i < n2 && nshapes < 16; i++) {
		unsigned j;

		for (j = 0; j < nshapes; j++)
			if (shapes[j].nranks == sh2[i].nranks && shapes[j].nnodes == sh2[i].nnodes)
				break;
		if (j == nshapes)
			shapes[nshapes++] = sh2[i];
	}
	return emu_table_build(pol, base_cfg.seed, shapes, nshapes, err, errlen);
}

static void suite_fixtures(const char *dir)
{
	static const struct {
		const char *fx, *scn;
		enum expect ex;
		const char *why;
		const char *nccl;	/* the release, NULL: --nccl */
	} t[] = {
		{ "good", "base", X_STRICT, "always ring/simple", NULL },
		{ "good", "combined", X_STRICT, "all asymmetries", NULL },
		{ "good", "huge", X_STRICT, "its cap from ncclGetVersion", "2.28" },
		{ "good", "huge", X_STRICT, "its cap from ncclGetVersion", "2.29" },
		{ "noop", "combined", X_STRICT, "leaves AUTO alone", NULL },
		{ "bad_regbuff", "regbuff", X_MUST_DIVERGE, "decides from regBuff", NULL },
		{ "bad_counter", "base", X_STRICT, "counter bug invisible without asymmetry",
		  NULL },
		{ "bad_counter", "simulate", X_MUST_DIVERGE, "counter + extra simulate calls",
		  NULL },
		{ "bad_counter", "threads", X_MUST_DIVERGE, "counter + other interleavings", NULL },
		{ "bad_prof", "noprof", X_MUST_DIVERGE, "decides from profiler presence", NULL },
		{ "bad_cap", "huge", X_MUST_UNSAFE, "2.29's cap on 2.28: forces entries >= 3.6e9",
		  "2.28" },
		{ "bad_cap", "huge", X_STRICT, "2.29's cap on 2.29 is right", "2.29" },
		{ "nosym", "base", X_STRICT, "no symbols: NCCL goes on with AUTO", NULL },
		{ "missing", "base", X_STRICT, "dlopen fails: NCCL goes on with AUTO", NULL },
	};
	char label[128];

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct scn *s = scn_find(t[i].scn);
		struct emu_cfg cfg;
		char *so = strcmp(t[i].fx, "missing") ? fixture_path(dir, t[i].fx)
						      : "/nonexistent/libnccl-missing.so";

		snprintf(label, sizeof(label), "fixture/%s/%s%s%s (%s)", t[i].fx, t[i].scn,
			 t[i].nccl ? "/nccl-" : "", t[i].nccl ? t[i].nccl : "", t[i].why);
		if (!so) {
			result_line(-1, label, "fixture-%s.so not found in %s", t[i].fx, dir);
			continue;
		}
		cfg_for(s, &cfg, NULL, NULL, NULL, NULL);
		if (t[i].nccl)
			cfg.ver = emu_version_find(t[i].nccl);
		cfg.plugin = so;
		if (cfg.calls > 20000)
			cfg.calls = 20000;
		run_named(label, &cfg, t[i].ex, 0);
	}
}

/* Per emulated release: which ABI got loaded, and what that implies. */
static void abi_one(const char *so, const char *who, int real, const struct emu_version *v,
		    const char *table, uint64_t *hash_ac_out)
{
	/* expected tuner / profiler versions for a plugin exporting
	 * tuner v2..v6 and profiler v1..v6 (fixture) or v4..v6 (nccl-bot) */
	int exp_t = v->tuner[0];
	int exp_p = 0;
	struct emu_cfg cfg = base_cfg;
	struct run run;
	char label[128], why[256], sum[400], *det = NULL;
	size_t detlen = 0;
	FILE *df;
	int ok;

	for (const int *p = v->prof; *p; p++)
		if (!real || *p >= 4) {
			exp_p = *p;
			break;
		}
	cfg.plugin = so;
	cfg.ver = v;
	cfg.asym = EMU_A_REGBUFF;
	cfg.thread_mode = EMU_T_RR;
	cfg.table = table;
	cfg.policy = NULL;
	if (cfg.calls > 10000)
		cfg.calls = 10000;
	snprintf(label, sizeof(label), "abi/%s/nccl-%s", who, v->name);
	if (run_scenario(&cfg, &run)) {
		result_line(0, label, "fork failed");
		return;
	}
	df = open_memstream(&det, &detlen);
	if (!df)
		df = stdout;
	ok = check(&cfg, &run, X_STRICT, why, sizeof(why), df);
	if (df != stdout)
		fclose(df);
	{
		const struct emu_result *x = &run.r[0];
		uint64_t over = 0, coll = 0, asked = 0;
		char msg[300] = "";

		for (unsigned i = 0; i < run.n; i++) {
			over += run.r[i].overrides;
			coll += run.r[i].coll_events;
			asked += run.r[i].ver_calls;
		}
		if (x->tuner_ver != exp_t || x->prof_ver != exp_p) {
			ok = 0;
			snprintf(msg, sizeof(msg), "loaded tuner v%d profiler v%d, expected v%d/v%d; ",
				 x->tuner_ver, x->prof_ver, exp_t, exp_p);
		}
		if (x->tuner_ver && x->prof_ver && !x->same_handle) {
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "tuner and profiler dlopen handles differ; ");
		}
		if (real && strcmp(x->tuner_name, "nccl-bot")) {
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "struct name '%s' != 'nccl-bot'; ", x->tuner_name);
		}
		if (real && exp_t == 2 && over) {	/* v2: pass-through */
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "v2 must be pass-through but overrode %llu calls; ",
				 (unsigned long long)over);
		}
		if (!exp_p && coll) {
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "profiler events without a profiler; ");
		}
		if (!real && !over) {
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "fixture decisions never took effect; ");
		}
		/* 2.28 and 2.29 both load tuner v5; only ncclGetVersion() tells
		 * them apart (their search caps differ, doc/nccl-abi.md) */
		if (real && x->tuner_ver == 5 && !asked) {
			ok = 0;
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "tuner v5 never asked ncclGetVersion(); ");
		}
		summary(&run, sum, sizeof(sum));
		result_line(ok, label, "%s tuner v%d, profiler %s%d%s, %s, ncclGetVersion() %llu"
			    " calls (answers %d); %s%s (%.2f s)", why,
			    x->tuner_ver, x->prof_ver ? "v" : "none/", x->prof_ver,
			    x->prof_ver >= 4 ? " (decide+learn)" : " (decide-only)",
			    x->same_handle ? "one dlopen handle" : "-", (unsigned long long)asked,
			    v->code, msg, sum, run.secs);
		if (det)
			fputs(det, stdout);
		free(det);
		for (unsigned k = 0; k < EMU_NCOMM_KINDS && hash_ac_out; k++)
			hash_ac_out[k] = run.r[k].hash_ac;
	}
	free(run.r);
}

/* The plugin exports exactly tuner v2..v6 and profiler v4..v6 (issue 3);
 * checked in a child so the parent never maps the plugin. */
static void abi_exports(const char *so)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
		static const char *const want[] = { "ncclTunerPlugin_v2", "ncclTunerPlugin_v3",
			"ncclTunerPlugin_v4", "ncclTunerPlugin_v5", "ncclTunerPlugin_v6",
			"ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6" };
		static const char *const not[] = { "ncclTunerPlugin_v1", "ncclProfiler_v1",
			"ncclProfiler_v2", "ncclProfiler_v3" };
		int bad = 0;

		if (!h) {
			printf("    dlopen: %s\n", dlerror());
			_exit(2);
		}
		for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (!dlsym(h, want[i])) {
				printf("    missing export %s\n", want[i]);
				bad = 1;
			}
		for (unsigned i = 0; i < sizeof(not) / sizeof(not[0]); i++)
			if (dlsym(h, not[i])) {
				printf("    unexpected export %s\n", not[i]);
				bad = 1;
			}
		fflush(stdout);
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	result_line(WIFEXITED(st) && !WEXITSTATUS(st), "abi/nccl-bot/exports",
		    "tuner v2..v6 and profiler v4..v6 exported, tuner v1 / profiler v1..v3 not");
}

static void suite_abi(const char *dir, const char *real)
{
	uint64_t h28[EMU_NCOMM_KINDS] = { 0 }, h29[EMU_NCOMM_KINDS] = { 0 };
	uint64_t h30[EMU_NCOMM_KINDS] = { 0 };
	char *good = dir ? fixture_path(dir, "good") : NULL, *table, err[200];

	for (unsigned i = 0; i < emu_nversions; i++) {
		if (good)
			abi_one(good, "fixture", 0, &emu_versions[i], NULL, NULL);
		else
			result_line(-1, "abi/fixture", "fixture-good.so not found");
	}
	if (!real) {
		result_line(-1, "abi/nccl-bot", "plugin not built (set NCCL_BOT_SO or --plugin)");
		return;
	}
	abi_exports(real);
	table = make_table(2, err, sizeof(err));	/* greedy: decisions to see */
	if (!table && err[0])
		result_line(0, "abi/table", "%s", err);
	for (unsigned i = 0; i < emu_nversions; i++) {
		const char *n = emu_versions[i].name;

		abi_one(real, "nccl-bot", 1, &emu_versions[i], table,
			!strcmp(n, "2.28") ? h28 : !strcmp(n, "2.29") ? h29 :
			!strcmp(n, "2.30") ? h30 : NULL);
	}
	free(table);
	/* NCCL's own tables have no entry at or above 3.6e9, so the caps of
	 * 2.28 and 2.30 make no difference here (suite cap: where they do) */
	result_line(!memcmp(h28, h30, sizeof(h28)) && !memcmp(h29, h30, sizeof(h29)),
		    "abi/nccl-bot/v5-equals-v6",
		    "tuner v5 (2.28, 2.29) and v6 (2.30) launch the same (algo, proto, nChannels) "
		    "sequences");
}

static void suite_consistency(const char *real, const char *only_scn, int only_policy,
			      uint64_t calls_each, uint64_t calls_combined)
{
	int selfchecked = 0;

	if (!real) {
		result_line(-1, "consistency", "plugin not built (set NCCL_BOT_SO or --plugin)");
		return;
	}
	for (int pol = 0; pol < NPOLICY; pol++) {
		char *table, *tcor = NULL, *tbad = NULL, err[200] = "";

		if (only_policy >= 0 && pol != only_policy)
			continue;
		table = make_table(pol, err, sizeof(err));
		if (!table && err[0]) {
			result_line(0, "table/build", "policy %s: %s", policy_names[pol], err);
			continue;
		}
		if (table && !selfchecked++) {
			int r = emu_table_selfcheck(table, err, sizeof(err));

			result_line(!r, "table/digest",
				    "%s (%zu bytes; formats.md 8: FNV-1a 64 + mix64 over the "
				    "base64url payload)", r ? err : "encoder agrees", strlen(table));
		}
		if (table) {
			tcor = emu_table_corrupt(table);
			tbad = emu_table_badver(table);
		}
		for (unsigned i = 0; i < NSCN; i++) {
			const struct scn *s = &scenarios[i];
			struct emu_cfg cfg;
			char label[128];
			enum expect ex = s->expect;

			if (only_scn && strcmp(only_scn, s->name))
				continue;
			snprintf(label, sizeof(label), "consistency/%s/%s%s", policy_names[pol],
				 s->name, table ? "" : " (no table)");
			if ((s->needs_table > 0 && !table) || (s->needs_table < 0 && table)) {
				if (only_scn)
					result_line(-1, label, "%s", table ? "needs a run without a table"
									   : "needs a step table");
				continue;
			}
			/* sweep may count calls (documented residual risk, caught here) */
			if (pol == 1 && (s->asym & EMU_A_SIMULATE) && ex != X_MUST_INITFAIL)
				ex = X_CAUGHT;
			cfg_for(s, &cfg, table, tcor, tbad, policy_names[pol]);
			cfg.plugin = real;
			cfg.calls = !strcmp(s->name, "combined") ? calls_combined : calls_each;
			run_named(label, &cfg, ex, (s->asym & EMU_A_CORRUPT) != 0);
		}
		free(table);
		free(tcor);
		free(tbad);
	}
}

/*
 * AUTO's search cap per release (doc/nccl-abi.md, "Tuner calls": entries at
 * or above 3.6e9 are never picked up to 2.28, everything below FLT_MAX from
 * 2.29) on the cost tables of scenario huge, per policy and release:
 * - every release stays IDENTICAL and safe: a plugin that takes 2.29's cap
 *   on 2.28 forces entries NCCL never picks (UNSAFE, revived; the bad_cap
 *   fixture shows it);
 * - tuner v5 on 2.29 launches what v6 launches on 2.30: the same NCCL cap,
 *   which v5 can only learn from ncclGetVersion(); a plugin that keeps 2.28's
 *   cap there leaves the entries alone and differs;
 * - on 2.29 and 2.30 the sweep policy (every allowed supported arm in turn)
 *   forces entries >= 3.6e9, on 2.27 and 2.28 never (that would be revived).
 */
static void suite_cap(const char *real, uint64_t calls)
{
	static const char *const rel[] = { "2.27", "2.28", "2.29", "2.30" };
	static const int pols[] = { 1, 2, 5 };	/* sweep, greedy, thompson */
	const struct scn *huge = scn_find("huge");

	if (!real) {
		result_line(-1, "cap", "plugin not built (set NCCL_BOT_SO or --plugin)");
		return;
	}
	for (unsigned pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
		int pol = pols[pi];
		char *table, err[200] = "", label[128];
		uint64_t h[4][EMU_NCOMM_KINDS], forced[4] = { 0 };
		int ran[4] = { 0 };

		table = make_table(pol, err, sizeof(err));
		if (!table && err[0]) {
			result_line(0, "cap/table", "policy %s: %s", policy_names[pol], err);
			continue;
		}
		for (unsigned ri = 0; ri < 4; ri++) {
			struct emu_cfg cfg;
			struct run run;
			char why[256], sum[600], *det = NULL;
			size_t detlen = 0;
			FILE *df;
			int ok;

			cfg_for(huge, &cfg, table, NULL, NULL, policy_names[pol]);
			cfg.ver = emu_version_find(rel[ri]);
			cfg.plugin = real;
			cfg.asym |= EMU_A_REGBUFF;
			cfg.calls = calls;
			snprintf(label, sizeof(label), "cap/%s/nccl-%s%s", policy_names[pol],
				 rel[ri], table ? "" : " (no table)");
			if (run_scenario(&cfg, &run)) {
				result_line(0, label, "could not fork/pipe: %s", strerror(errno));
				continue;
			}
			df = open_memstream(&det, &detlen);
			if (!df)
				df = stdout;
			ok = check(&cfg, &run, X_STRICT, why, sizeof(why), df);
			if (df != stdout)
				fclose(df);
			for (unsigned i = 0; i < run.n; i++)
				forced[ri] += run.r[i].huge_forced;
			for (unsigned k = 0; k < EMU_NCOMM_KINDS; k++)
				h[ri][k] = run.r[k].hash_ac;
			ran[ri] = ok;
			summary(&run, sum, sizeof(sum));
			result_line(ok, label, "%s, cap %s [expect all IDENTICAL] %s (%.2f s)", why,
				    cfg.ver->cap == EMU_CAP_228 ? "3.6e9" : "FLT_MAX", sum, run.secs);
			if (det)
				fputs(det, stdout);
			free(det);
			free(run.r);
		}
		snprintf(label, sizeof(label), "cap/%s/v5-on-2.29-equals-v6-on-2.30%s",
			 policy_names[pol], table ? "" : " (no table)");
		result_line(ran[2] && ran[3] && !memcmp(h[2], h[3], sizeof(h[2])) &&
			    (pol != 1 || (forced[2] && forced[3])), label,
			    "(algo, proto, nChannels) sequences %s; entries >= 3.6e9 forced on "
			    "2.27/2.28/2.29/2.30: %llu/%llu/%llu/%llu%s",
			    !memcmp(h[2], h[3], sizeof(h[2])) ? "equal" : "DIFFER",
			    (unsigned long long)forced[0], (unsigned long long)forced[1],
			    (unsigned long long)forced[2], (unsigned long long)forced[3],
			    pol == 1 ? " (sweep: must be > 0 on 2.29 and 2.30)" : "");
		free(table);
	}
}

/* ---- spool directory (so that the plugin measures) ---- */

static char spool_tmp[64];

static void spool_cleanup(void)
{
	DIR *d;
	struct dirent *e;
	int fd;

	if (!spool_tmp[0])
		return;
	fd = open(spool_tmp, O_RDONLY | O_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(fd, e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(spool_tmp);
}

/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: nccl-emu [options]\n"
"  --suite S          check (fixtures+abi+cap+consistency), fixtures, abi, cap,\n"
"                     consistency, long (cap, consistency with combined at\n"
"                     --calls 1000000) [check]\n"
"  --plugin PATH      plugin .so (absolute path; default $NCCL_BOT_SO)\n"
"  --fixtures DIR     where fixture-*.so are [directory of this binary]\n"
"  --scenario NAME    only this scenario (base regbuff simulate noprof threads tpc\n"
"                     allocfail env multi corrupt badver envpolicy huge combined)\n"
"  --policy NAME      only this policy [all 12]\n"
"  --calls N          collectives per comm in the combined run [100000]\n"
"  --calls-each N     collectives per comm in the single-asymmetry runs [20000]\n"
"  --procs N          rank processes [8]     --ranks-per-node N [2]\n"
"  --nccl VER         emulated NCCL release for consistency runs: 2.21 2.22 2.24\n"
"                     2.27 2.28 2.29 2.30 [2.28]\n"
"  --costs sim|internal  cost tables [sim when built with the simulator]\n"
"  --fabric NAME      simulator fabric [the first]\n"
"  --table TEXT       use this NCCL_BOT_TABLE instead of generated ones\n"
"  --no-table         run without step tables (policy from NCCL_BOT_POLICY)\n"
"  --lag N            proxy-thread lag in collectives [8]\n"
"  --seed N           [1]      --timeout S per scenario [600]\n"
"  --spool DIR        NCCL_BOT_SPOOL for every rank [a temporary directory]\n"
"  --no-spool         no NCCL_BOT_SPOOL (the plugin does not measure)\n"
"  --workload LIST    calls cycle over COLL:SIZE,... (e.g. allgather:1536K,allreduce:64M)\n"
"                     instead of the random mix; prints CTX/LOSS lines per run\n"
"  --measured cost|sim  KernelCh durations: NCCL's cost of the arm [cost], or the\n"
"                     simulator's measured latency of the arm that ran (needs --costs sim)\n"
"  --explain          with --workload: print the CTX lines of --table (no run) and exit\n"
"  -v, --verbose      every comm's verdict; -vv also the plugin's log lines\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "suite", 1, 0, 's' }, { "plugin", 1, 0, 'p' }, { "fixtures", 1, 0, 'F' },
		{ "scenario", 1, 0, 'S' }, { "policy", 1, 0, 'P' }, { "calls", 1, 0, 'n' },
		{ "calls-each", 1, 0, 'e' }, { "procs", 1, 0, 'N' },
		{ "ranks-per-node", 1, 0, 'R' }, { "nccl", 1, 0, 'V' }, { "costs", 1, 0, 'c' },
		{ "fabric", 1, 0, 'f' }, { "table", 1, 0, 't' }, { "no-table", 0, 0, 'T' },
		{ "lag", 1, 0, 'l' }, { "seed", 1, 0, 'z' }, { "timeout", 1, 0, 'o' },
		{ "spool", 1, 0, 'w' }, { "no-spool", 0, 0, 'W' }, { "verbose", 0, 0, 'v' },
		{ "help", 0, 0, 'h' }, { "workload", 1, 0, 0x101 }, { "measured", 1, 0, 0x102 },
		{ "explain", 0, 0, 0x103 },
		{ 0, 0, 0, 0 }
	};
	const char *suite = "check", *plugin = getenv("NCCL_BOT_SO"), *fixtures = NULL;
	const char *only_scn = NULL, *fabric = NULL, *spool = NULL;
	int only_policy = -1, costs = -1, no_table = 0, no_spool = 0, o, explain = 0;
	const char *workload = NULL;
	uint64_t calls = 100000, calls_each = 20000;
	char err[256], fxdir[1024], *plugin_abs = NULL;
	static const char *const clear[] = { "NCCL_BOT_TABLE", "NCCL_BOT_POLICY",
		"NCCL_BOT_SEED", "NCCL_BOT_MIN_BYTES", "NCCL_BOT_DEBUG", "NCCL_BOT_SPOOL",
		"NCCL_BOT_REPORT_DIR", "NCCL_ALGO", "NCCL_PROTO", "NCCL_TUNER_PLUGIN",
		"NCCL_PROFILER_PLUGIN" };

	base_cfg.ver = emu_version_find("2.28");
	base_cfg.nprocs = 8;
	base_cfg.ranks_per_proc = 1;
	base_cfg.ranks_per_node = 2;
	base_cfg.seed = 1;
	base_cfg.lag = 8;
	base_cfg.timeout_s = 600;
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case 's': suite = optarg; break;
		case 'p': plugin = optarg; break;
		case 'F': fixtures = optarg; break;
		case 'S':
			only_scn = optarg;
			if (!scn_find(optarg)) {
				fprintf(stderr, "nccl-emu: unknown scenario '%s'\n", optarg);
				return 2;
			}
			break;
		case 'P':
			for (only_policy = 0; only_policy < NPOLICY; only_policy++)
				if (!strcmp(policy_names[only_policy], optarg))
					break;
			if (only_policy == NPOLICY) {
				fprintf(stderr, "nccl-emu: unknown policy '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n': calls = strtoull(optarg, NULL, 0); break;
		case 'e': calls_each = strtoull(optarg, NULL, 0); break;
		case 'N': base_cfg.nprocs = (unsigned)atoi(optarg); break;
		case 'R': base_cfg.ranks_per_node = (unsigned)atoi(optarg); break;
		case 'V':
			base_cfg.ver = emu_version_find(optarg);
			if (!base_cfg.ver) {
				fprintf(stderr, "nccl-emu: unknown NCCL version '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c': costs = !strcmp(optarg, "internal") ? EMU_COST_INTERNAL : EMU_COST_SIM; break;
		case 'f': fabric = optarg; break;
		case 't': base_cfg.table = optarg; break;
		case 'T': no_table = 1; break;
		case 'l': base_cfg.lag = (unsigned)atoi(optarg); break;
		case 'z': base_cfg.seed = strtoull(optarg, NULL, 0); break;
		case 'o': base_cfg.timeout_s = atoi(optarg); break;
		case 'w': spool = optarg; break;
		case 'W': no_spool = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return 0;
		case 0x101: workload = optarg; break;
		case 0x102:
			if (strcmp(optarg, "sim") && strcmp(optarg, "cost")) {
				fprintf(stderr, "nccl-emu: --measured: cost or sim, not '%s'\n", optarg);
				return 2;
			}
			base_cfg.measured = !strcmp(optarg, "sim") ? EMU_MEAS_SIM : EMU_MEAS_COST;
			break;
		case 0x103: explain = 1; break;
		default: usage(stderr); return 2;
		}
	}
	if (base_cfg.nprocs < 2 || base_cfg.nprocs > 1024 || !base_cfg.ranks_per_node) {
		fprintf(stderr, "nccl-emu: --procs must be 2..1024\n");
		return 2;
	}
	base_cfg.verbose = verbose;
	for (unsigned i = 0; i < sizeof(clear) / sizeof(clear[0]); i++)
		unsetenv(clear[i]);
	if (!spool && !no_spool) {
		const char *tmp = getenv("TMPDIR");

		snprintf(spool_tmp, sizeof(spool_tmp), "%.40s/nccl-emu-spool.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (mkdtemp(spool_tmp)) {
			spool = spool_tmp;
			atexit(spool_cleanup);
		} else {
			spool_tmp[0] = 0;
		}
	}
	if (spool)
		setenv("NCCL_BOT_SPOOL", spool, 1);
	if (costs < 0) {
#ifndef EMU_NO_SIM
		costs = EMU_COST_SIM;
#else
		costs = EMU_COST_INTERNAL;
#endif
	}
	if (emu_cost_setup(costs, fabric, err, sizeof(err))) {
		fprintf(stderr, "nccl-emu: %s\n", err);
		return 2;
	}
	if (base_cfg.measured == EMU_MEAS_SIM && !emu_cost_is_sim()) {
		fprintf(stderr, "nccl-emu: --measured sim needs the simulator's cost tables\n");
		return 2;
	}
	if (workload && emu_work_parse(&base_cfg, workload, err, sizeof(err))) {
		fprintf(stderr, "nccl-emu: %s\n", err);
		return 2;
	}
	if (explain) {
		if (!base_cfg.nwork) {
			fprintf(stderr, "nccl-emu: --explain needs --workload\n");
			return 2;
		}
		emu_loop_report(&base_cfg, NULL, 0);
		return 0;
	}
	if (!fixtures) {
		char self[1024];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			*strrchr(self, '/') = 0;
			/* libtool puts the real binary in .libs/ */
			snprintf(fxdir, sizeof(fxdir), "%s", self);
			if (strlen(self) > 6 && !strcmp(self + strlen(self) - 6, "/.libs"))
				fxdir[strlen(self) - 6] = 0;
			fixtures = fxdir;
		}
	}
	if (plugin && *plugin) {
		plugin_abs = realpath(plugin, NULL);	/* NCCL gets an absolute path */
		if (!plugin_abs)
			printf("# plugin %s: %s (runs against it are skipped)\n", plugin,
			       strerror(errno));
	}
	if (no_table)
		base_cfg.table = NULL;
	base_cfg.calls = calls;
	printf("# nccl-emu: NCCL %s, %u processes x %u ranks, %u ranks/node, %d comms per rank,"
	       " costs: %s, tables: %s, allocation interposer: %s\n", base_cfg.ver->name,
	       base_cfg.nprocs, base_cfg.ranks_per_proc, base_cfg.ranks_per_node,
	       EMU_NCOMM_KINDS, emu_cost_desc(),
	       no_table ? "off" : base_cfg.table ? "given" : emu_table_available() ? "generated"
										 : "unavailable",
	       emu_alloc_interposed() ? "on" : "off");
	printf("# plugin: %s; spool: %s\n", plugin_abs ? plugin_abs : "(none)",
	       spool ? spool : "(none)");

	no_tables = no_table;
	if (!strcmp(suite, "fixtures") || !strcmp(suite, "check"))
		suite_fixtures(fixtures ? fixtures : ".");
	if (!strcmp(suite, "abi") || !strcmp(suite, "check"))
		suite_abi(fixtures, plugin_abs);
	if (!strcmp(suite, "cap") || !strcmp(suite, "check") || !strcmp(suite, "long"))
		suite_cap(plugin_abs, calls_each);
	if (!strcmp(suite, "consistency") || !strcmp(suite, "check") || !strcmp(suite, "long")) {
		if (!strcmp(suite, "long") && calls < 1000000)
			calls = 1000000;
		suite_consistency(plugin_abs, only_scn, only_policy, calls_each, calls);
	}
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	free(plugin_abs);
	return n_fail ? 1 : 0;
}
