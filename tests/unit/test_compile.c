/*
 * test_compile.c - spool files -> step table (learn/compile.h).
 *
 * Builds spool files byte by byte with the format's packing helpers (the
 * way two ranks of a job would leave them), compiles them and checks what a
 * launcher would hand the next job: the measured-faster arm becomes the
 * exploit arm where AUTO is wrong, the minimum over ranks removes arrival
 * skew, labelled samples and corrupt files teach nothing, small contexts are
 * left to AUTO, and the table encodes and decodes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/sweep.h"
#include "learn/compile.h"
#include "tests/unit/testutil.h"

#ifndef BOT_NCCL_BOT
#define BOT_NCCL_BOT "./nccl-bot"
#endif

#define COMM 0x1234abcdULL
#define NRANKS 16
#define NNODES 2
#define NBYTES (8u << 20)

static char dir[64];

static const int LL = 3 * 1 + 0;	/* ring/ll */
static const int SIMPLE = 3 * 1 + 2;	/* ring/simple */

static void fill_cost(float cost[BOT_SPOOL_NCOST])
{
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		cost[a] = -1.0f;
	cost[LL] = 100.0f;	/* AUTO's choice */
	cost[SIMPLE] = 120.0f;
}

static struct bot_spool_rec sample(int arm, uint64_t seq, uint64_t ns, uint32_t rank)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = BOT_SPOOL_SAMPLE;
	r.coll = BOT_COLL_ALLREDUCE;
	r.arm = (uint8_t)arm;
	r.nchannels = 8;
	r.auto_arm = (uint8_t)LL;
	r.decided = BOT_SPOOL_ARM_NONE;
	r.policy = BOT_POLICY_THOMPSON;
	r.comm_id = COMM;
	r.rank = rank;
	r.nranks = NRANKS;
	r.nnodes = NNODES;
	r.nbytes = NBYTES;
	r.seq = seq;
	r.duration_ns = ns;
	fill_cost(r.cost);
	return r;
}

/* Write a spool file of n records; corrupt = flip a byte after the CRC. */
static void write_spool(const char *name, const struct bot_spool_rec *r, size_t n, uint64_t digest,
			int corrupt)
{
	struct bot_spool_hdr h;
	size_t len = BOT_SPOOL_HDR_SIZE + n * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	uint8_t *buf = calloc(1, len);
	uint32_t crc;
	char path[128];
	FILE *f;

	ck_assert_ptr_nonnull(buf);
	memset(&h, 0, sizeof(h));
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = n;
	h.table_digest = digest;
	strcpy(h.build_id, "nccl-bot test");
	h.pid = 42;
	bot_spool_pack_hdr(buf, &h);
	for (size_t i = 0; i < n; i++)
		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r[i]);
	crc = bot_spool_crc32c(0, buf, len - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		buf[len - 8 + i] = (uint8_t)(crc >> (8 * i));
	if (corrupt)
		buf[BOT_SPOOL_HDR_SIZE + 40] ^= 0x55;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
}

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "compile");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

/* What the library logged, one message per line. */
static char logged[4096];

static void collect(void *arg, int level, const char *msg)
{
	size_t n = strlen(logged);

	(void)arg;
	snprintf(logged + n, sizeof(logged) - n, "%d %s\n", level, msg);
}

static const struct bot_table_entry *find_entry(const struct bot_table *t, unsigned coll,
						 unsigned bucket)
{
	for (unsigned i = 0; i < t->nentries; i++)
		if (t->entries[i].coll == coll && t->entries[i].bucket == bucket)
			return &t->entries[i];
	return NULL;
}

/* Two ranks saw the same collectives; rank 1 waited for a late peer, so its
 * spans are longer. AUTO's ring/ll is really 2x slower than ring/simple. */
static void two_ranks(uint64_t digest)
{
	struct bot_spool_rec r0[40], r1[40];

	for (int i = 0; i < 40; i++) {
		int arm = i % 2 ? SIMPLE : LL;
		uint64_t ns = arm == LL ? 200000 : 100000;

		r0[i] = sample(arm, (uint64_t)i, ns + 1000 * (uint64_t)(i % 3), 0);
		r1[i] = sample(arm, (uint64_t)i, ns * 3, 1);	/* skewed */
	}
	write_spool("nb-a-1.spool", r0, 40, digest, 0);
	write_spool("nb-b-2.spool", r1, 40, digest, 0);
}

START_TEST(test_learns_faster_arm)
{
	const char *paths[] = { dir };
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t)), *u = malloc(sizeof(*u));
	const struct bot_table_entry *e;
	char err[256], *text = malloc(BOT_TABLE_MAX_TEXT + 1);
	long n;

	ck_assert(t && u && text);
	two_ranks(7);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "greedy");
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.files, 2);
	ck_assert_uint_eq(rep.files_rejected, 0);
	ck_assert_uint_eq(rep.samples, 80);
	/* One collective per (comm, seq): the minimum over the two ranks. */
	ck_assert_uint_eq(rep.collectives, 40);
	ck_assert_uint_eq(rep.jobs, 1);
	ck_assert_uint_eq(rep.round, 1);
	e = find_entry(t, BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES));
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->plan.exploit, SIMPLE);
	ck_assert_uint_eq(t->nshapes, 1);
	ck_assert_uint_eq(t->shapes[e->shape].nranks, NRANKS);
	ck_assert_uint_eq(t->shapes[e->shape].nnodes, NNODES);
	ck_assert(t->flags & BOT_TABLE_F_MEASURE);
	/* What the launcher exports decodes to the same table. */
	n = bot_table_encode(t, text, BOT_TABLE_MAX_TEXT + 1);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, u), 0);
	ck_assert_uint_eq(u->nentries, t->nentries);
	ck_assert_int_eq(u->entries[0].plan.exploit, SIMPLE);
	free(t);
	free(u);
	free(text);
}
END_TEST

/* Rank 0 is on time: ring/ll (AUTO's) 100 us, ring/simple 150 us. Rank 1
 * waited for a late peer on every ring/ll call: 400 us there. The minimum
 * over ranks keeps ring/ll, so the plan stays AUTO's (no entry); rank 1's
 * spans alone (or an average over ranks) would move the job to ring/simple. */
START_TEST(test_min_over_ranks)
{
	struct bot_spool_rec r0[40], r1[40];
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	char one[128], err[256];
	const char *both[] = { dir }, *skewed[] = { one };

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 40; i++) {
		int arm = i % 2 ? SIMPLE : LL;

		r0[i] = sample(arm, (uint64_t)i, arm == LL ? 100000 : 150000, 0);
		r1[i] = sample(arm, (uint64_t)i, arm == LL ? 400000 : 150000, 1);
	}
	write_spool("nb-a-1.spool", r0, 40, 7, 0);
	write_spool("nb-b-2.spool", r1, 40, 7, 0);
	snprintf(one, sizeof(one), "%s/nb-b-2.spool", dir);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "greedy");
	ck_assert_int_eq(bot_compile_spools(both, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.collectives, 40);
	ck_assert_uint_eq(t->nentries, 0);
	ck_assert_int_eq(bot_compile_spools(skewed, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(t->nentries, 1);
	ck_assert_int_eq(t->entries[0].plan.exploit, SIMPLE);
	/* thompson's ranks give a context the table does not name the
	 * policy on the prior (tuner/decide.c): the corrected prior's argmin
	 * (and, in a table of format 1 or 2, a probe of 1 in 16
	 * communicators), which the budgeted plan did not choose: its "leave
	 * it to AUTO" is an entry, AUTO with no probe; greedy's above needs
	 * none */
	bot_policy_init(&o.policy, "thompson");
	ck_assert_int_eq(bot_compile_spools(both, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(t->nentries, 1);
	ck_assert_int_eq(t->entries[0].plan.exploit, BOT_ARM_AUTO);
	ck_assert_int_eq(t->entries[0].plan.nprobe, 0);
	ck_assert_int_eq(t->entries[0].plan.nchannels, 0);
	/* counted apart, so "dropped" and "entries" say what they decide */
	ck_assert_uint_eq(rep.entries, 1);
	ck_assert_uint_eq(rep.entries_auto, 1);
	ck_assert_uint_eq(rep.dropped_auto, 0);
	ck_assert_int_eq(bot_compile_spools(skewed, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.entries_auto, 0);
	free(t);
}
END_TEST

START_TEST(test_bad_inputs_teach_nothing)
{
	const char *paths[] = { dir };
	struct bot_spool_rec r[20];
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	char err[256], path[128];
	struct bot_log log = { collect, NULL };

	ck_assert(t);
	/* A corrupt file claiming ring/simple is wonderful: skipped whole. */
	for (int i = 0; i < 20; i++)
		r[i] = sample(SIMPLE, (uint64_t)i, 1000, 0);
	write_spool("nb-c-3.spool", r, 20, 9, 1);
	/* Labelled samples (aggregate, out of range) claiming the same. */
	for (int i = 0; i < 20; i++) {
		r[i] = sample(SIMPLE, (uint64_t)(100 + i), 1000, 0);
		r[i].flags = i % 2 ? BOT_SPOOL_F_AGGREGATE : BOT_SPOOL_F_RANGE;
	}
	write_spool("nb-d-4.spool", r, 20, 9, 0);
	/* A file that is not a spool at all, and one not named *.spool. */
	snprintf(path, sizeof(path), "%s/nb-e-5.spool", dir);
	ck_assert_int_eq(system((snprintf(err, sizeof(err), "echo hello > '%s'", path), err)), 0);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	ck_assert_int_eq(system((snprintf(err, sizeof(err), "echo hello > '%s'", path), err)), 0);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "greedy");
	logged[0] = 0;
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, &log, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.files, 3);
	ck_assert_uint_eq(rep.files_rejected, 2);
	/* each skipped file named on the log, as a warning, with its reason */
	ck_assert_msg(strstr(logged, "1 rejected ") && strstr(logged, "nb-c-3.spool: ") &&
		      strstr(logged, "nb-e-5.spool: "), "%s", logged);
	ck_assert_msg(!strstr(logged, "nb-d-4") && !strstr(logged, "notes.txt"), "%s", logged);
	ck_assert_uint_eq(rep.samples, 20);
	ck_assert_uint_eq(rep.samples_unclean, 20);
	ck_assert_uint_eq(rep.collectives, 0);
	/* Nothing learned: greedy on the prior is AUTO, so no entry at all. */
	ck_assert_uint_eq(t->nentries, 0);
	/* A missing path is an error that names it. */
	{
		const char *missing[] = { "/nonexistent/nb-bot" };

		ck_assert_int_eq(bot_compile_spools(missing, 1, &o, t, &rep, NULL, err, sizeof(err)), -1);
		ck_assert_ptr_nonnull(strstr(err, "/nonexistent/nb-bot"));
	}
	free(t);
}
END_TEST

START_TEST(test_small_contexts_left_to_auto)
{
	const char *paths[] = { dir };
	struct bot_spool_rec r[40];
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	char err[256];

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 40; i++) {
		r[i] = sample(i % 2 ? SIMPLE : LL, (uint64_t)i, i % 2 ? 1000 : 5000, 0);
		r[i].nbytes = 64 << 10;	/* below the 1 MiB default */
	}
	write_spool("nb-f-6.spool", r, 40, 3, 0);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "greedy");
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.collectives, 40);
	ck_assert_uint_eq(rep.contexts, 0);
	ck_assert_uint_eq(t->nentries, 0);
	o.min_bytes_log2 = 10;
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(t->nentries, 1);
	ck_assert_int_eq(t->entries[0].plan.exploit, SIMPLE);
	free(t);
}
END_TEST

START_TEST(test_round_counts_jobs)
{
	const char *paths[] = { dir };
	struct bot_spool_rec r[4];
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	char err[256];

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 4; i++)
		r[i] = sample(LL, (uint64_t)i, 200000, 0);
	write_spool("nb-g-1.spool", r, 4, 11, 0);
	write_spool("nb-g-2.spool", r, 4, 11, 0);
	write_spool("nb-h-3.spool", r, 4, 12, 0);
	bot_compile_opts_default(&o);
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.jobs, 2);
	ck_assert_uint_eq(rep.round, 2);
	o.round = 7;
	ck_assert_int_eq(bot_compile_spools(paths, 1, &o, t, &rep, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(rep.round, 7);
	free(t);
}
END_TEST

/* `nccl-bot spool sweep`: a sample whose process had not copied its
 * context's cost row yet (flag "no cost row": the event mask is process-wide)
 * gets the row another file carries, whatever the file order, so every arm
 * of the context has auto_us and the sweep parses. */
START_TEST(test_spool_sweep_fills_cost_rows)
{
	struct bot_spool_rec a[4], b[4];
	struct bot_sweep sw;
	char cmd[512], err[BOT_SWEEP_ERR_MAX], *out = malloc(1 << 16);
	FILE *p;
	size_t n;

	ck_assert_ptr_nonnull(out);
	for (int i = 0; i < 4; i++) {
		a[i] = sample(LL, (uint64_t)i, 200000, 0);
		a[i].flags = BOT_SPOOL_F_NO_COST;
		for (int k = 0; k < BOT_SPOOL_NCOST; k++)
			a[i].cost[k] = -1.0f;
		b[i] = sample(SIMPLE, (uint64_t)(10 + i), 100000, 1);
	}
	write_spool("nb-a-1.spool", a, 4, 5, 0);	/* read first: no row */
	write_spool("nb-b-2.spool", b, 4, 5, 0);
	snprintf(cmd, sizeof(cmd), "%s spool sweep --fabric f1 '%s' 2>/dev/null",
		 getenv("BOT_NCCL_BOT") ? getenv("BOT_NCCL_BOT") : BOT_NCCL_BOT, dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, (1 << 16) - 1, p);
	ck_assert_int_eq(pclose(p), 0);
	bot_sweep_init(&sw);
	ck_assert_msg(bot_sweep_parse(&sw, "out.csv", out, n, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(sw.nrows, 8);
	for (size_t i = 0; i < sw.nrows; i++) {
		int arm = bot_arm(sw.rows[i].algo, sw.rows[i].proto);

		ck_assert(sw.rows[i].auto_us == (arm == LL ? 100.0 : 120.0));
	}
	bot_sweep_free(&sw);
	free(out);
}
END_TEST

/* The calls of the jobs' summaries, as ranks write them: in each of `jobs`
 * jobs every rank of each of 8 communicators reports the `calls` calls its
 * communicator made. */
static int simple_probed_after(unsigned jobs, uint64_t calls)
{
	struct bot_compile_batch *b = bot_compile_batch_new();
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	const struct bot_table_entry *e;
	struct bot_kb *kb = NULL;
	struct bot_spool_rec r;
	char err[256];
	int hit = 0;
	/* AUTO's arm, measured at the profiler's 1 % (at least 40): a sample
	 * or more a communicator's job, so no sample lag (doc/policies.md) */
	uint64_t nsamples = (uint64_t)jobs * 8 * calls / 100;

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(t);
	if (nsamples < 40)
		nsamples = 40;
	for (uint64_t i = 0; i < nsamples; i++) {
		r = sample(LL, i, 100000, 0);
		r.cost[SIMPLE] = 200.0f;	/* NCCL's model: 2.0x AUTO's */
		ck_assert_int_eq(bot_compile_add_records(b, &r, 1), 0);
	}
	for (unsigned j = 0; j < jobs; j++)
		for (unsigned c = 0; c < 8; c++)
			for (uint32_t rank = 0; rank < NRANKS; rank++) {
				r = sample(LL, 0, 0, rank);
				r.kind = BOT_SPOOL_SUMMARY;
				r.comm_id = COMM + 8 * j + c;
				r.decided = (uint8_t)LL;
				r.duration_ns = 0;
				r.seq = 0;
				r.calls = calls;
				r.cost[SIMPLE] = 200.0f;
				ck_assert_int_eq(bot_compile_add_records(b, &r, 1), 0);
			}
	ck_assert_int_eq(bot_compile_batch_finish(b, &kb, NULL), 0);
	bot_compile_batch_free(b);
	ck_assert_uint_eq(bot_kb_find(kb, bot_ctx_key(BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES),
						      NRANKS, NNODES))->calls,
			  8ull * NRANKS * calls * jobs);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "etc");	/* probes every arm it may */
	bot_policy_set(&o.policy, "budget", 1.0);
	bot_policy_set(&o.policy, "etc_rounds", 1e9);
	for (unsigned round = jobs; round < jobs + 3; round++) {
		ck_assert_msg(bot_compile_plan(kb, &o, round, t, &rep, err, sizeof(err)) == 0, "%s",
			      err);
		e = find_entry(t, BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES));
		for (unsigned i = 0; e && i < e->plan.nprobe; i++)
			hit |= e->plan.probe[i].arm == SIMPLE;
		hit |= e && e->plan.exploit == SIMPLE;
	}
	bot_kb_free(kb);
	free(t);
	return hit;
}

/* The state's calls count every rank's summary (formats.md 12), 16 ranks
 * here; the worst-case lump rule (doc/policies.md) compares a
 * communicator's round with a communicator's calls so far: an arm the model
 * rates 2.0x is held back until 24 jobs of 8 communicators x 500 calls, not
 * until 24 / 16 of them. */
START_TEST(test_rank_calls_per_communicator)
{
	ck_assert_int_eq(simple_probed_after(2, 500), 0);
	ck_assert_int_eq(simple_probed_after(23, 500), 0);
	ck_assert_int_eq(simple_probed_after(24, 500), 1);
}
END_TEST

/* A probe runs one communicator's whole job. Jobs of 5,000 calls per
 * communicator make lumps ten times the table's default 500: planned for
 * 500, the rule admitted the 2.0x arm after 3 such jobs, where a probe cost
 * ten times what it was allowed. The state's summaries (formats.md 12) say
 * how many calls a communicator makes in a job, and the table is planned
 * for that: held back until 24 jobs, as with 500-call jobs. */
START_TEST(test_round_calls_from_summaries)
{
	struct bot_kb_ctx c;

	ck_assert_int_eq(simple_probed_after(3, 5000), 0);
	ck_assert_int_eq(simple_probed_after(23, 5000), 0);
	ck_assert_int_eq(simple_probed_after(24, 5000), 1);
	/* fewer calls than the default: planned for the default, as before */
	ck_assert_int_eq(simple_probed_after(23, 50), 0);
	memset(&c, 0, sizeof(c));
	c.calls = 10 * 5000 + 7;
	ck_assert_uint_eq(bot_compile_round_calls(&c, 500), 500);	/* no summaries */
	c.summaries = 10 * 65536;
	ck_assert_uint_eq(bot_compile_round_calls(&c, 500), 5001);	/* rounded up */
	ck_assert_uint_eq(bot_compile_round_calls(&c, 8000), 8000);
	c.calls = UINT64_MAX;
	c.summaries = 1;
	ck_assert_uint_eq(bot_compile_round_calls(&c, 500), UINT64_MAX);
}
END_TEST

/* Summaries carrying few or no calls cost a principal nothing against the
 * compactor's calls cap; each counts as calls / 500 of one (formats.md 12),
 * so 8,000 of them cannot drag a context of 5,000-call jobs down to the
 * default: 128 honest summaries of 5,000 calls, 4,000 of 0 and 4,000 of 1
 * calls give about 4,700 calls per job (every summary whole: 79). */
START_TEST(test_summaries_few_calls)
{
	struct bot_compile_batch *b = bot_compile_batch_new();
	struct bot_kb *kb = NULL;
	struct bot_spool_rec r;
	const struct bot_kb_ctx *c;

	ck_assert_ptr_nonnull(b);
	for (unsigned i = 0; i < 8128; i++) {
		r = sample(LL, 0, 0, i % NRANKS);
		r.kind = BOT_SPOOL_SUMMARY;
		r.comm_id = COMM + i / NRANKS;
		r.duration_ns = 0;
		r.seq = 0;
		r.calls = i < 128 ? 5000 : i < 4128 ? 0 : 1;
		ck_assert_int_eq(bot_compile_add_records(b, &r, 1), 0);
	}
	ck_assert_int_eq(bot_compile_batch_finish(b, &kb, NULL), 0);
	bot_compile_batch_free(b);
	c = bot_kb_find(kb, bot_ctx_key(BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES), NRANKS, NNODES));
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->summaries, 128 * 65536 + 4000 * (65536 / 500));
	ck_assert_uint_gt(bot_compile_round_calls(c, 500), 4700);
	bot_kb_free(kb);
}
END_TEST

/* Summaries i..j of one communicator (ranks i..j-1, calls[i..j-1]) as one
 * batch: the calls it stores for the context. */
static uint64_t batch_calls(const uint64_t *calls, unsigned i, unsigned j)
{
	struct bot_compile_batch *b = bot_compile_batch_new();
	struct bot_kb *kb = NULL;
	struct bot_spool_rec r;
	uint64_t got;

	ck_assert_ptr_nonnull(b);
	for (; i < j; i++) {
		r = sample(LL, 0, 0, i);
		r.kind = BOT_SPOOL_SUMMARY;
		r.duration_ns = 0;
		r.calls = calls[i];
		ck_assert_int_eq(bot_compile_add_records(b, &r, 1), 0);
	}
	ck_assert_int_eq(bot_compile_batch_finish(b, &kb, NULL), 0);
	bot_compile_batch_free(b);
	got = bot_kb_find(kb, bot_ctx_key(BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES), NRANKS,
					  NNODES))->calls;
	bot_kb_free(kb);
	return got;
}

/* Calls add up whatever the batches: each rank's estimate once. A
 * communicator's ranks can come in several batches (the compactor merges a
 * step's late delta alone, `state add --partial` then the fixed file); a
 * rule per batch and communicator (the largest estimate times nRanks, tried
 * 2026-12-01) counted the communicator again in each. */
START_TEST(test_calls_add_across_batches)
{
	const uint64_t calls[] = { 200, 500, 300, 400 };

	ck_assert_uint_eq(batch_calls(calls, 0, 4), 1400);
	ck_assert_uint_eq(batch_calls(calls, 0, 2) + batch_calls(calls, 2, 4), 1400);
}
END_TEST

/* More shapes than a table holds (256): the most-called contexts keep theirs. */
START_TEST(test_shapes_past_the_limit_by_calls)
{
	struct bot_kb *kb = bot_kb_new();
	struct bot_compile_opts o;
	struct bot_compile_report rep = { 0 };
	struct bot_table *t = malloc(sizeof(*t));
	float cost[BOT_SPOOL_NCOST];
	char err[256];
	int have_low = 0, have_high = 0;

	ck_assert_ptr_nonnull(kb);
	ck_assert_ptr_nonnull(t);
	fill_cost(cost);
	for (uint32_t i = 0; i < 300; i++) {
		uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, bot_size_bucket(NBYTES), 2 * (i + 1), i + 1);

		ck_assert_int_eq(bot_kb_offer_prior(kb, key, cost), 0);
		/* calls rise with i but keys do not sort that way everywhere */
		ck_assert_int_eq(bot_kb_add_calls(kb, key, 1000 + (uint64_t)((i * 7919) % 300)), 0);
	}
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, "sweep");
	ck_assert_msg(bot_compile_plan(kb, &o, 0, t, &rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(t->nshapes, BOT_TABLE_MAX_SHAPES);
	ck_assert_uint_eq(t->nentries, BOT_TABLE_MAX_SHAPES);
	ck_assert_uint_eq(rep.dropped, 300 - BOT_TABLE_MAX_SHAPES);
	for (unsigned s = 0; s < t->nshapes; s++) {
		uint32_t i = t->shapes[s].nnodes - 1;
		uint64_t calls = (uint64_t)((i * 7919) % 300);

		/* kept: the 256 most-called, i.e. calls 44..299 */
		ck_assert_msg(calls >= 300 - BOT_TABLE_MAX_SHAPES, "shape of a %llu-call context kept",
			      (unsigned long long)calls);
		have_low |= calls == 300 - BOT_TABLE_MAX_SHAPES;
		have_high |= calls == 299;
	}
	ck_assert(have_low && have_high);
	bot_kb_free(kb);
	free(t);
}
END_TEST

static Suite *compile_suite(void)
{
	Suite *s = suite_create("compile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_learns_faster_arm);
	tcase_add_test(tc, test_min_over_ranks);
	tcase_add_test(tc, test_bad_inputs_teach_nothing);
	tcase_add_test(tc, test_small_contexts_left_to_auto);
	tcase_add_test(tc, test_round_counts_jobs);
	tcase_add_test(tc, test_spool_sweep_fills_cost_rows);
	tcase_add_test(tc, test_shapes_past_the_limit_by_calls);
	tcase_add_test(tc, test_rank_calls_per_communicator);
	tcase_add_test(tc, test_round_calls_from_summaries);
	tcase_add_test(tc, test_summaries_few_calls);
	tcase_add_test(tc, test_calls_add_across_batches);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(compile_suite)
