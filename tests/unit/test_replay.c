/*
 * test_replay.c - the replay's arithmetic and contracts: loss math on a
 * hand-built dataset, outlier trimming, feedback delay in jobs mode,
 * determinism across runs and thread counts, the optimised engine against
 * its --reference path (bit for bit), harm against AUTO (saved - lost =
 * calls x best x loss difference), leave-one-fabric-out splits, Holm and
 * the sign-flip test on known values, split parsing, the JSON keys, and bad
 * input files, extreme times included (an error naming FILE:LINE, never a
 * crash; tests/cli checks the exit status).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policies/policy.h"
#include "replay/dataset.h"
#include "replay/replay.h"
#include "sim/sim.h"
#include "tests/unit/testutil.h"

#define MiB 1048576ULL

static void push(struct bot_sweep *sw, int fab, int coll, uint64_t nbytes, uint32_t nodes,
		 int algo, int proto, double auto_us, double us)
{
	struct bot_sweep_row r;

	memset(&r, 0, sizeof(r));
	r.fabric = (uint16_t)fab;
	r.coll = (int8_t)coll;
	r.algo = (int8_t)algo;
	r.proto = (int8_t)proto;
	r.nchannels = r.captured = r.aggregate = -1;
	r.num_pipe_ops = -1;
	r.nbytes = nbytes;
	r.nnodes = nodes;
	r.nranks = nodes * 8;
	r.auto_us = auto_us;
	r.measured_us = us;
	ck_assert_int_eq(bot_sweep_push(sw, &r), 0);
}

/* Two contexts at 16 nodes, three arms each:
 *   A: ring/simple auto 10 (100 us), tree/simple auto 12 (80 us), ring/ll auto 20 (200 us)
 *      AUTO = ring/simple, best = tree/simple: AUTO's loss 100/80 - 1 = 0.25
 *   B: ring/simple auto 5 (50 us), tree/simple auto 6 (60 us), ring/ll auto 7 (55 us)
 *      AUTO = ring/simple = best: loss 0 */
static void tiny(struct bot_dataset *ds)
{
	struct bot_sweep sw;
	struct bot_ds_opts o = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	char err[512];
	int f;

	bot_sweep_init(&sw);
	f = bot_sweep_fabric(&sw, "tiny");
	for (int i = 0; i < 3; i++) {
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 16, BOT_ALGO_RING, BOT_PROTO_SIMPLE, 10, 100);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 16, BOT_ALGO_TREE, BOT_PROTO_SIMPLE, 12, 80);
		push(&sw, f, BOT_COLL_ALLGATHER, MiB, 16, BOT_ALGO_RING, BOT_PROTO_SIMPLE, 5, 50);
		push(&sw, f, BOT_COLL_ALLGATHER, MiB, 16, BOT_ALGO_TREE, BOT_PROTO_SIMPLE, 6, 60);
		push(&sw, f, BOT_COLL_ALLGATHER, MiB, 16, BOT_ALGO_RING, BOT_PROTO_LL, 7, 55);
	}
	push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 16, BOT_ALGO_RING, BOT_PROTO_LL, 20, 200);
	/* An outlier (more than 4x the median) that the trim must drop. */
	push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 16, BOT_ALGO_TREE, BOT_PROTO_SIMPLE, 12, 8000);
	/* A partly forced row: counted, not used. */
	push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 16, BOT_ALGO_TREE, -1, NAN, 1);
	bot_dataset_init(ds);
	ck_assert_msg(!bot_dataset_build(ds, &sw, NULL, &o, err, sizeof(err)), "%s", err);
	bot_sweep_free(&sw);
}

static const struct bot_ds_ctx *find(const struct bot_dataset *ds, int coll)
{
	for (size_t i = 0; i < ds->nctx; i++)
		if ((int)bot_key_coll(ds->ctx[i].key) == coll)
			return &ds->ctx[i];
	return NULL;
}

START_TEST(test_loss_math)
{
	struct bot_dataset ds;
	const struct bot_ds_ctx *a, *b;
	double loss[2];
	struct bot_summary s;

	tiny(&ds);
	ck_assert_uint_eq(ds.nctx, 2);
	ck_assert_uint_eq(ds.partial_rows, 1);
	ck_assert_uint_eq(ds.outliers, 1);
	a = find(&ds, BOT_COLL_ALLREDUCE);
	b = find(&ds, BOT_COLL_ALLGATHER);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(a->auto_arm, bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE));
	ck_assert_int_eq(a->best_arm, bot_arm(BOT_ALGO_TREE, BOT_PROTO_SIMPLE));
	ck_assert_double_eq_tol(a->arm[a->best_arm].mean, 80, 1e-12);
	ck_assert_double_eq_tol(a->auto_loss, 0.25, 1e-12);
	ck_assert_double_eq_tol(bot_ds_arm_loss(a, bot_arm(BOT_ALGO_RING, BOT_PROTO_LL)), 1.5, 1e-12);
	/* An arm the data cannot run costs what AUTO costs. */
	ck_assert_double_eq_tol(bot_ds_arm_loss(a, BOT_ARM_AUTO), 0.25, 1e-12);
	ck_assert_double_eq_tol(bot_ds_arm_loss(a, bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE)), 0.25, 1e-12);
	ck_assert_double_eq_tol(b->auto_loss, 0, 1e-12);
	/* The prior hides arms without data. */
	ck_assert(a->has_prior);
	ck_assert(a->prior[bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE)] < 0);
	ck_assert_float_eq(a->prior[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)], 10);

	loss[0] = a->auto_loss;
	loss[1] = b->auto_loss;
	bot_summarize(loss, NULL, 2, &s);
	ck_assert_uint_eq(s.contexts, 2);
	ck_assert_uint_eq(s.over_10pct, 1);
	ck_assert_double_eq_tol(s.mean, 0.125, 1e-12);
	ck_assert_double_eq_tol(s.p50, 0, 1e-12);
	ck_assert_double_eq_tol(s.p99, 0.25, 1e-12);
	ck_assert_double_eq_tol(s.max, 0.25, 1e-12);
	bot_dataset_free(&ds);
}
END_TEST

START_TEST(test_trim)
{
	double x[] = { 1, 10, 10, 10, 1000 }, y[] = { 7 };
	uint32_t dropped;

	ck_assert_double_eq_tol(bot_trimmed_mean(x, 5, &dropped), 10, 1e-12);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_double_eq_tol(bot_trimmed_mean(y, 1, &dropped), 7, 1e-12);
	ck_assert_uint_eq(dropped, 0);
	ck_assert(isnan(bot_trimmed_mean(x, 0, NULL)));
	/* Bounds are inclusive: 4x and x/4 of the median stay. */
	{
		double z[] = { 2.5, 10, 40 };

		ck_assert_double_eq_tol(bot_trimmed_mean(z, 3, &dropped), 52.5 / 3, 1e-12);
		ck_assert_uint_eq(dropped, 0);
	}
}
END_TEST

/* A small simulated dataset: one fabric, allreduce, nodes 4 and 16. */
static void simdata_colls(struct bot_dataset *ds, uint32_t coll_mask);

static void simdata(struct bot_dataset *ds)
{
	simdata_colls(ds, 1u << BOT_COLL_ALLREDUCE);
}

static void simdata_colls(struct bot_dataset *ds, uint32_t coll_mask)
{
	static const unsigned nodes[] = { 4, 16 };
	struct bot_sim_opts so;
	struct bot_sweep sw;
	struct bot_ds_opts o = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	char err[512];

	memset(&so, 0, sizeof(so));
	so.seed = 3;
	so.samples = 6;
	so.nodes = nodes;
	so.nnodes = 2;
	so.min_bytes = 64 * 1024;
	so.max_bytes = 256 * MiB;
	so.coll_mask = coll_mask;
	so.only = bot_sim_fabric(0);
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sim_generate(&so, &sw), 0);
	bot_dataset_init(ds);
	ck_assert_msg(!bot_dataset_build(ds, &sw, NULL, &o, err, sizeof(err)), "%s", err);
	bot_sweep_free(&sw);
	ck_assert_uint_gt(ds->nctx, 4);
}

static void eval_opts(struct bot_eval_opts *e, int mode, const int *pols, size_t np)
{
	char err[128];

	memset(e, 0, sizeof(*e));
	bot_replay_opts_default(&e->run, mode);
	e->run.seed = 11;
	if (mode == BOT_MODE_PERCALL)
		e->run.calls = 60;
	if (mode == BOT_MODE_EPOCHS)
		e->run.calls = 1000;
	ck_assert_int_eq(bot_nodeset_parse("4", &e->train, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_nodeset_parse("16", &e->test, err, sizeof(err)), 0);
	e->tune = 1;
	e->tune_contexts = 4;
	e->history = 1;
	e->threads = 1;
	e->policies = pols;
	e->npolicies = np;
	e->alpha = 0.05;
}

/* Jobs mode: a job's feedback reaches only later jobs. With one job the
 * sampling rate cannot matter; a greedy policy then runs AUTO's arm. */
START_TEST(test_feedback_delay)
{
	struct bot_dataset ds;
	struct bot_replay_opts o;
	struct bot_policy th, gr;
	size_t *idx, n;
	struct bot_ctx_result *r1, *r2;
	char err[256];

	simdata(&ds);
	n = ds.nctx;
	idx = malloc(n * sizeof(*idx));
	r1 = calloc(n, sizeof(*r1));
	r2 = calloc(n, sizeof(*r2));
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* thompson-free: the budgeted default probes nothing in 3 jobs here,
	 * so only the unconstrained planner shows feedback reaching a job */
	bot_policy_init(&th, "thompson-free");
	bot_policy_init(&gr, "greedy");
	for (int p = 0; p < 2; p++) {
		const struct bot_policy *pol = p ? &gr : &th;

		for (int jobs = 1; jobs <= 3; jobs += 2) {
			struct bot_kb *k1[1] = { bot_kb_new() }, *k2[1] = { bot_kb_new() };
			int differs = 0;

			bot_replay_opts_default(&o, BOT_MODE_JOBS);
			o.jobs = (uint32_t)jobs;
			o.sample_rate = 1;
			ck_assert_msg(!bot_replay_run(&ds, idx, n, pol, &o, k1, r1, err, sizeof(err)), "%s", err);
			o.sample_rate = 0;
			ck_assert_msg(!bot_replay_run(&ds, idx, n, pol, &o, k2, r2, err, sizeof(err)), "%s", err);
			for (size_t i = 0; i < n; i++) {
				if (jobs == 1)
					ck_assert_double_eq(r1[i].run_loss, r2[i].run_loss);
				if (jobs == 1 && p == 1)
					ck_assert_double_eq_tol(r1[i].run_loss, ds.ctx[i].auto_loss, 1e-12);
				differs |= r1[i].run_loss != r2[i].run_loss;
			}
			if (jobs == 3 && p == 0)
				ck_assert_msg(differs, "feedback never changed a later job");
			bot_kb_free(k1[0]);
			bot_kb_free(k2[0]);
		}
	}
	free(idx);
	free(r1);
	free(r2);
	bot_dataset_free(&ds);
}
END_TEST

START_TEST(test_determinism)
{
	static const int pols[] = { BOT_POLICY_THOMPSON, BOT_POLICY_UCB1, BOT_POLICY_FROZEN, BOT_POLICY_SHADOW };
	struct bot_dataset ds;

	simdata(&ds);
	for (int mode = 0; mode < BOT_NMODES; mode++) {
		struct bot_eval e1, e2, e3;
		struct bot_eval_opts o;
		char err[256];

		eval_opts(&o, mode, pols, 4);
		ck_assert_msg(!bot_eval_run(&ds, &o, &e1, err, sizeof(err)), "%s", err);
		ck_assert_msg(!bot_eval_run(&ds, &o, &e2, err, sizeof(err)), "%s", err);
		o.threads = 3;
		ck_assert_msg(!bot_eval_run(&ds, &o, &e3, err, sizeof(err)), "%s", err);
		ck_assert_uint_eq(e1.ntest, e3.ntest);
		for (size_t k = 0; k < e1.npol; k++) {
			ck_assert(!memcmp(e1.pol[k].res, e2.pol[k].res, e1.ntest * sizeof(*e1.pol[k].res)));
			ck_assert(!memcmp(e1.pol[k].res, e3.pol[k].res, e1.ntest * sizeof(*e1.pol[k].res)));
			ck_assert(!memcmp(&e1.pol[k].pol, &e3.pol[k].pol, sizeof(e1.pol[k].pol)));
			ck_assert(!memcmp(&e1.pol[k].all, &e3.pol[k].all, sizeof(e1.pol[k].all)));
		}
		/* shadow runs AUTO's arm on every call. */
		ck_assert_double_eq_tol(e1.pol[3].all.mean, e1.auto_all.mean, 1e-12);
		bot_eval_free(&e1);
		bot_eval_free(&e2);
		bot_eval_free(&e3);
	}
	bot_dataset_free(&ds);
}
END_TEST

/* Two simulated fabrics (h100-ib-ndr, gb200-nvl), allreduce and
 * allgather, nodes 4 and 16. */
static void twofab(struct bot_dataset *ds)
{
	static const unsigned nodes[] = { 4, 16 };
	struct bot_sim_opts so;
	struct bot_sweep sw;
	struct bot_ds_opts dso = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	char err[512];

	memset(&so, 0, sizeof(so));
	so.seed = 5;
	so.samples = 4;
	so.nodes = nodes;
	so.nnodes = 2;
	so.min_bytes = 4096;
	so.max_bytes = 64 * MiB;
	so.coll_mask = (1u << BOT_COLL_ALLREDUCE) | (1u << BOT_COLL_ALLGATHER);
	bot_sweep_init(&sw);
	so.only = bot_sim_fabric(0);
	ck_assert_int_eq(bot_sim_generate(&so, &sw), 0);
	so.only = bot_sim_fabric(3);
	ck_assert_int_eq(bot_sim_generate(&so, &sw), 0);
	bot_dataset_init(ds);
	ck_assert_msg(!bot_dataset_build(ds, &sw, NULL, &dso, err, sizeof(err)), "%s", err);
	bot_sweep_free(&sw);
	ck_assert_uint_eq(ds->nfabrics, 2);
}

/* The optimised engine (a plan memo per round, the vectorised sign-flip
 * test) gives exactly the numbers of the plain one, in every mode, on two
 * fabrics (a memo each). */
START_TEST(test_reference_identical)
{
	static const int pols[] = { BOT_POLICY_THOMPSON, BOT_POLICY_UCB1, BOT_POLICY_GREEDY,
				    BOT_POLICY_FROZEN };
	struct bot_dataset ds;
	char err[512];

	twofab(&ds);
	for (int mode = 0; mode < BOT_NMODES; mode++) {
		struct bot_eval e1, e2;
		struct bot_eval_opts o;

		eval_opts(&o, mode, pols, 4);
		o.threads = 2;
		ck_assert_msg(!bot_eval_run(&ds, &o, &e1, err, sizeof(err)), "%s", err);
		o.run.reference = 1;
		ck_assert_msg(!bot_eval_run(&ds, &o, &e2, err, sizeof(err)), "%s", err);
		for (size_t k = 0; k < e1.npol; k++) {
			ck_assert(!memcmp(e1.pol[k].res, e2.pol[k].res, e1.ntest * sizeof(*e1.pol[k].res)));
			ck_assert(!memcmp(&e1.pol[k].all, &e2.pol[k].all, sizeof(e1.pol[k].all)));
			ck_assert(!memcmp(e1.pol[k].p_adj, e2.pol[k].p_adj, e1.nscen * sizeof(double)));
			ck_assert_uint_eq(e1.pol[k].better, e2.pol[k].better);
			ck_assert_uint_eq(e1.pol[k].worse, e2.pol[k].worse);
		}
		bot_eval_free(&e1);
		bot_eval_free(&e2);
	}
	bot_dataset_free(&ds);
}
END_TEST

/* Leave one fabric out: the held-out fabric's test contexts only are
 * scored, tuning never sees it, history comes from it alone; and the
 * numbers differ from tuning on everything only through the parameters. */
START_TEST(test_lofo)
{
	static const int pols[] = { BOT_POLICY_THOMPSON };
	struct bot_dataset ds;
	char err[512];

	twofab(&ds);
	for (size_t h = 0; h < 2; h++) {
		struct bot_eval e;
		struct bot_eval_opts o;
		size_t ntest = 0;

		eval_opts(&o, BOT_MODE_JOBS, pols, 1);
		o.lofo = 1;
		o.holdout = h;
		ck_assert_msg(!bot_eval_run(&ds, &o, &e, err, sizeof(err)), "%s", err);
		for (size_t i = 0; i < ds.nctx; i++)
			ntest += ds.ctx[i].fabric == h && bot_key_nnodes(ds.ctx[i].key) == 16;
		ck_assert_uint_eq(e.ntest, ntest);
		for (size_t i = 0; i < e.ntest; i++)
			ck_assert_uint_eq(ds.ctx[e.test[i]].fabric, h);
		for (size_t i = 0; i < e.ntrain; i++)
			ck_assert_uint_eq(ds.ctx[e.train[i]].fabric, h);
		ck_assert_uint_gt(e.ntuneset, 0);
		for (size_t i = 0; i < e.ntuneset; i++)
			ck_assert_uint_ne(ds.ctx[e.tuneset[i]].fabric, h);
		ck_assert_uint_eq(e.pol[0].all.contexts, ntest);
		bot_eval_free(&e);
	}
	bot_dataset_free(&ds);
}
END_TEST

/* The vectorised sign-flip test and the plain loop agree to the bit, for
 * lengths around the 64-difference word boundary, with zeros and NaNs. */
START_TEST(test_signflip_fast)
{
	static const size_t len[] = { 1, 2, 7, 63, 64, 65, 128, 129, 500 };
	double d[500];

	for (size_t t = 0; t < sizeof(len) / sizeof(len[0]); t++) {
		for (uint64_t seed = 0; seed < 3; seed++) {
			int d1, d2;
			double p1, p2;

			for (size_t i = 0; i < len[t]; i++) {
				uint64_t h = bot_rng(seed, 77, t, i);

				d[i] = (double)(h % 2001) / 1000.0 - 0.9;	/* a slight positive mean */
				if (h % 17 == 0)
					d[i] = 0;
				if (h % 29 == 0)
					d[i] = NAN;
			}
			p1 = bot_signflip(d, len[t], seed, &d1);
			p2 = bot_signflip_reference(d, len[t], seed, &d2);
			ck_assert_msg(p1 == p2, "n %zu seed %llu: %.17g vs %.17g", len[t],
				      (unsigned long long)seed, p1, p2);
			ck_assert_int_eq(d1, d2);
		}
	}
}
END_TEST

/* Tuning counts harm: a grid point with a lower training mean and tail that
 * harms 1 context in 100 loses to one that harms none (each harmed context
 * weighs as one 100 points worse); without harm the lower mean wins. */
START_TEST(test_tune_objective)
{
	ck_assert(bot_replay_tune_objective(0.005, 0.02, 0) < bot_replay_tune_objective(0.007, 0.03, 0));
	ck_assert(bot_replay_tune_objective(0.007, 0.03, 0) < bot_replay_tune_objective(0.005, 0.02, 0.01));
	ck_assert(fabs(bot_replay_tune_objective(0.01, 0.04, 0.02) - 0.04) < 1e-12);
}
END_TEST

/* Tuning keeps the defaults unless a point beats them by more than the
 * margin (10 %): within it the lowest objective on 256 training contexts
 * is noise (its p99 is about the third worst context). Without defaults
 * in the grid, or beaten clearly, the lowest wins, ties the earlier. */
START_TEST(test_tune_pick)
{
	const double near[] = { 0.0100, 0.0095, 0.0092, 0.0101 };	/* 0.92 x point 0 */
	const double far[] = { 0.0100, 0.0095, 0.0089, 0.0101 };	/* 0.89 x */
	const double tie[] = { 0.02, 0.01, 0.01 };
	const double zero[] = { 0.0, 0.0, 0.0 };

	ck_assert_uint_eq(bot_replay_tune_pick(near, 4, 0), 0);
	ck_assert_uint_eq(bot_replay_tune_pick(near, 4, 3), 3);	/* 0.911 x point 3 */
	ck_assert_uint_eq(bot_replay_tune_pick(far, 4, 3), 2);		/* 0.881 x */
	ck_assert_uint_eq(bot_replay_tune_pick(near, 4, 1), 1);	/* 0.968 x */
	ck_assert_uint_eq(bot_replay_tune_pick(far, 4, 0), 2);
	ck_assert_uint_eq(bot_replay_tune_pick(near, 4, -1), 2);
	ck_assert_uint_eq(bot_replay_tune_pick(tie, 3, -1), 1);
	ck_assert_uint_eq(bot_replay_tune_pick(tie, 3, 0), 1);
	ck_assert_uint_eq(bot_replay_tune_pick(zero, 3, 2), 2);	/* perfect defaults stand */
	ck_assert_uint_eq(bot_replay_tune_pick(near, 1, 0), 0);
}
END_TEST

/* Harm: saved - lost is the time AUTO would have taken minus the policy's,
 * so per context it equals calls x best x (AUTO's loss - run loss); harmed
 * and worst_excess follow the run losses. */
START_TEST(test_harm)
{
	struct bot_dataset ds;
	struct bot_policy th;
	struct bot_replay_opts o;
	struct bot_ctx_result *r;
	struct bot_summary s;
	double *al;
	size_t *idx, n;
	char err[256];
	int any = 0;

	/* allgather too: h100-ib-ndr's multi-node allreduce is mostly NVLS,
	 * which no rank can measure, and its contexts stay on AUTO */
	simdata_colls(&ds, 1u << BOT_COLL_ALLREDUCE | 1u << BOT_COLL_ALLGATHER);
	n = ds.nctx;
	idx = malloc(n * sizeof(*idx));
	r = calloc(n, sizeof(*r));
	al = malloc(n * sizeof(*al));
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		al[i] = ds.ctx[i].auto_loss;
	}
	bot_policy_init(&th, "thompson");
	for (int mode = 0; mode < 2; mode++) {
		struct bot_kb *kb[1] = { bot_kb_new() };
		double calls;

		bot_replay_opts_default(&o, mode);
		o.calls = 40;
		calls = mode == BOT_MODE_PERCALL ? 40.0 : 40.0 * o.jobs * o.comms;
		ck_assert_msg(!bot_replay_run(&ds, idx, n, &th, &o, kb, r, err, sizeof(err)), "%s", err);
		for (size_t i = 0; i < n; i++) {
			double want = calls * ds.ctx[i].best_us * 1e-6 * (al[i] - r[i].run_loss);

			ck_assert(r[i].saved >= 0 && r[i].lost >= 0);
			ck_assert_msg(fabs(r[i].saved - r[i].lost - want) <= 1e-9 * (fabs(want) + 1e-6),
				      "context %zu: saved %g lost %g, want net %g", i, r[i].saved, r[i].lost, want);
			any |= r[i].saved > 0;
		}
		bot_kb_free(kb[0]);
	}
	ck_assert_msg(any, "thompson never beat AUTO anywhere");
	/* Summaries: two contexts over AUTO by 1 and 3 points, one under. */
	r[0].run_loss = al[0] + 0.01;
	r[1].run_loss = al[1] + 0.03;
	r[2].run_loss = al[2] - 0.2;
	r[0].saved = 1, r[0].lost = 2;
	r[1].saved = 0, r[1].lost = 0.5;
	r[2].saved = 4, r[2].lost = 0;
	bot_summarize_harm(r, al, 3, &s);
	ck_assert_uint_eq(s.harmed, 1);
	ck_assert_double_eq_tol(s.worst_excess, 0.03, 1e-12);
	ck_assert_double_eq_tol(s.saved, 5, 1e-12);
	ck_assert_double_eq_tol(s.lost, 2.5, 1e-12);
	bot_summarize_harm(r, al, 0, &s);
	ck_assert(isnan(s.worst_excess) && s.harmed == 0);
	/* AUTO's own arm, its loss computed two ways: a rounding residue is
	 * no excess (it printed as -0.00%, and -7.4e-15 in JSON and CSV) */
	r[0].run_loss = al[0] - 7.4e-15;
	bot_summarize_harm(r, al, 1, &s);
	ck_assert_msg(s.worst_excess == 0 && !signbit(s.worst_excess), "worst_excess %g",
		      s.worst_excess);
	r[0].run_loss = al[0] + 7.4e-15;
	bot_summarize_harm(r, al, 1, &s);
	ck_assert_msg(s.worst_excess == 0, "worst_excess %g", s.worst_excess);
	free(idx);
	free(r);
	free(al);
	bot_dataset_free(&ds);
}
END_TEST

/* Replay the one context of ds; no arm of it may have a sample afterwards. */
static void run_feeds_nothing(const struct bot_dataset *ds, const struct bot_policy *p,
			      const struct bot_replay_opts *o, struct bot_ctx_result *r)
{
	struct bot_kb *kb[1] = { bot_kb_new() };
	const struct bot_kb_ctx *k;
	size_t idx[1] = { 0 };
	char err[512];

	ck_assert_msg(!bot_replay_run(ds, idx, 1, p, o, kb, r, err, sizeof(err)), "%s", err);
	k = bot_kb_find(kb[0], ds->ctx[0].key);
	for (int a = 0; k && a < BOT_NARMS; a++)
		ck_assert_uint_eq(k->arm[a].n, 0);
	bot_kb_free(kb[0]);
}

/* Real data that knows AUTO only from auto,auto rows (no cost table): the
 * calls a plan leaves to AUTO are measured as the ranks measure them, under
 * the arm the prior (the cost table a tuner would see) names AUTO's. Before,
 * they fed nothing, and a policy never learned AUTO's latency there. */
START_TEST(test_auto_rows_feed)
{
	struct bot_sweep sw;
	struct bot_ds_opts dopt = { BOT_PRIOR_DATA, "h100-roce", NULL, 0, 0 };
	struct bot_dataset ds;
	struct bot_replay_opts o;
	struct bot_policy th;
	struct bot_ctx_result r[1];
	struct bot_kb *kb[1];
	const struct bot_kb_ctx *k;
	size_t idx[1] = { 0 };
	char err[512];
	int f, x;

	bot_sweep_init(&sw);
	f = bot_sweep_fabric(&sw, "realish");
	for (int i = 0; i < 3; i++) {
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, BOT_ALGO_RING, BOT_PROTO_SIMPLE, NAN, 200);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, BOT_ALGO_TREE, BOT_PROTO_SIMPLE, NAN, 150);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, BOT_ALGO_RING, BOT_PROTO_LL, NAN, 300);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, BOT_ALGO_TREE, BOT_PROTO_LL, NAN, 310);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, -1, -1, NAN, 123);
	}
	bot_dataset_init(&ds);
	ck_assert_msg(!bot_dataset_build(&ds, &sw, NULL, &dopt, err, sizeof(err)), "%s", err);
	bot_sweep_free(&sw);
	ck_assert_uint_eq(ds.nctx, 1);
	ck_assert_int_eq(ds.ctx[0].auto_arm, -1);	/* known from auto,auto rows only */
	ck_assert(ds.ctx[0].has_prior);
	x = bot_prior_argmin(ds.ctx[0].prior);
	ck_assert_int_ge(x, 0);

	bot_policy_init(&th, "thompson");
	bot_replay_opts_default(&o, BOT_MODE_JOBS);
	o.jobs = 3;
	kb[0] = bot_kb_new();
	ck_assert_msg(!bot_replay_run(&ds, idx, 1, &th, &o, kb, r, err, sizeof(err)), "%s", err);
	k = bot_kb_find(kb[0], ds.ctx[0].key);
	ck_assert_ptr_nonnull(k);
	/* AUTO's calls (most of 3 jobs x 8 communicators x 500 calls, 1 %
	 * measured) are samples of the prior's argmin, at AUTO's 123 us times
	 * the arrival skew (1 + |N(0, 0.02)|) */
	ck_assert_uint_ge(k->arm[x].n, 50);
	ck_assert_double_ge(bot_stats_robust_us(&k->arm[x]), 123 * 0.99);
	ck_assert_double_le(bot_stats_robust_us(&k->arm[x]), 123 * 1.1);
	bot_kb_free(kb[0]);
	/* A frozen run feeds nothing, AUTO's calls included. */
	o.frozen = 1;
	run_feeds_nothing(&ds, &th, &o, r);
	bot_dataset_free(&ds);

	/* Without a prior there is no arm to label AUTO's calls with: nothing
	 * is fed (the policies leave every call to AUTO there). */
	bot_sweep_init(&sw);
	f = bot_sweep_fabric(&sw, "realish");
	for (int i = 0; i < 3; i++) {
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, BOT_ALGO_RING, BOT_PROTO_SIMPLE, NAN, 200);
		push(&sw, f, BOT_COLL_ALLREDUCE, MiB, 2, -1, -1, NAN, 123);
	}
	dopt.prior = BOT_PRIOR_NONE;
	bot_dataset_init(&ds);
	ck_assert_msg(!bot_dataset_build(&ds, &sw, NULL, &dopt, err, sizeof(err)), "%s", err);
	bot_sweep_free(&sw);
	ck_assert_uint_eq(ds.nctx, 1);
	ck_assert(!ds.ctx[0].has_prior);
	o.frozen = 0;
	run_feeds_nothing(&ds, &th, &o, r);
	ck_assert_double_eq_tol(r[0].run_loss, ds.ctx[0].auto_loss, 1e-12);
	bot_dataset_free(&ds);
}
END_TEST

START_TEST(test_holm)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 }, adj[4];

	bot_holm(p, 4, adj);
	ck_assert_double_eq_tol(adj[0], 0.03, 1e-12);
	ck_assert_double_eq_tol(adj[1], 0.06, 1e-12);
	ck_assert_double_eq_tol(adj[2], 0.06, 1e-12);
	ck_assert_double_eq_tol(adj[3], 0.02, 1e-12);
	{
		double q[] = { 0.5, 0.9 };

		bot_holm(q, 2, q);	/* in place; capped at 1 */
		ck_assert_double_eq_tol(q[0], 1, 1e-12);
		ck_assert_double_eq_tol(q[1], 1, 1e-12);
	}
}
END_TEST

START_TEST(test_signflip)
{
	double a[] = { 1, 2, 3, 4, 5 }, z[] = { 0, 0, 0 }, sym[] = { 1, -1, 2, -2, 3, -3 };
	double t[20], mix[23];
	int dir;
	double p;

	/* All five positive: exactly 2 of 32 sign patterns reach |sum| = 15,
	 * p = 1/16 up to Monte Carlo error (10^4 draws: sd 0.0024). */
	p = bot_signflip(a, 5, 1, &dir);
	ck_assert_msg(fabs(p - 0.0625) < 0.01, "p %g", p);
	ck_assert_int_eq(dir, 1);
	/* Deterministic for a seed. */
	ck_assert(bot_signflip(a, 5, 1, NULL) == p);
	/* Zero differences are dropped; nothing left -> p = 1. */
	ck_assert_double_eq_tol(bot_signflip(z, 3, 1, &dir), 1, 1e-12);
	ck_assert_int_eq(dir, 0);
	/* A zero mean is never significant. */
	ck_assert_double_eq_tol(bot_signflip(sym, 6, 1, &dir), 1, 1e-12);
	/* 20 equal positive differences: exact p = 2^-19, below what 10^4 draws
	 * resolve, so the smallest p the test gives. */
	for (int i = 0; i < 20; i++)
		t[i] = 1;
	ck_assert_double_eq_tol(bot_signflip(t, 20, 1, &dir), 1.0 / (BOT_SIGNFLIP_DRAWS + 1), 1e-15);
	/* The mean decides the direction: one large gain outweighs many small
	 * exploration costs (a signed-rank test would call this "worse"). */
	mix[0] = -10;
	for (int i = 1; i < 23; i++)
		mix[i] = 0.1;
	bot_signflip(mix, 23, 1, &dir);
	ck_assert_int_eq(dir, -1);
}
END_TEST

START_TEST(test_nodeset)
{
	struct bot_nodeset s;
	char err[128], buf[64];

	ck_assert_int_eq(bot_nodeset_parse("4-8", &s, err, sizeof(err)), 0);
	ck_assert(bot_nodeset_has(&s, 4) && bot_nodeset_has(&s, 6) && bot_nodeset_has(&s, 8));
	ck_assert(!bot_nodeset_has(&s, 3) && !bot_nodeset_has(&s, 9));
	ck_assert_int_eq(bot_nodeset_parse("4,8", &s, err, sizeof(err)), 0);
	ck_assert(bot_nodeset_has(&s, 4) && !bot_nodeset_has(&s, 6) && bot_nodeset_has(&s, 8));
	ck_assert_int_eq(bot_nodeset_parse("2,16-32", &s, err, sizeof(err)), 0);
	bot_nodeset_format(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2,16-32");
	ck_assert_int_ne(bot_nodeset_parse("", &s, err, sizeof(err)), 0);
	ck_assert_int_ne(bot_nodeset_parse("8-4", &s, err, sizeof(err)), 0);
	ck_assert_int_ne(bot_nodeset_parse("4,", &s, err, sizeof(err)), 0);
	ck_assert_int_ne(bot_nodeset_parse("x", &s, err, sizeof(err)), 0);
	ck_assert_int_ne(bot_nodeset_parse("0-4", &s, err, sizeof(err)), 0);
	ck_assert_int_ne(bot_nodeset_parse("-4", &s, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "-4"));
}
END_TEST

/* What bot_eval_print writes for one evaluation, as a string (free it). */
static char *printed(const struct bot_eval *e, int fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	bot_eval_print(f, fmt, &e, 1);
	fclose(f);
	return buf;
}

START_TEST(test_json_keys)
{
	static const int pols[] = { BOT_POLICY_THOMPSON, BOT_POLICY_GREEDY };
	static const char *const keys[] = {
		"\"auto\": {", "\"policies\": [", "\"name\": \"auto\"", "\"name\": \"thompson\"",
		"\"contexts\":", "\"over_10pct\":", "\"mean\":", "\"p99\":", "\"max\":", "\"fabrics\":",
		"\"harmed\":", "\"worst_excess\":", "\"saved\":", "\"lost\":",
	};
	struct bot_dataset ds;
	struct bot_eval e;
	struct bot_eval_opts o;
	char err[256], *buf;

	simdata(&ds);
	eval_opts(&o, BOT_MODE_JOBS, pols, 2);
	o.tune = 0;
	ck_assert_msg(!bot_eval_run(&ds, &o, &e, err, sizeof(err)), "%s", err);
	buf = printed(&e, BOT_FMT_JSON);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ck_assert_msg(strstr(buf, keys[i]), "JSON lacks %s:\n%s", keys[i], buf);
	free(buf);
	bot_eval_free(&e);
	bot_dataset_free(&ds);
}
END_TEST

/* The table keeps its columns whatever the numbers: a huge loss in exponent
 * form (JSON keeps it exact), no -0.00%, a zero the same 0s in every
 * column, the allow-list as --allow spells it, and a header that says the
 * defaults were used when the training split had nothing to tune on. */
START_TEST(test_table_cosmetics)
{
	static const int pols[] = { BOT_POLICY_THOMPSON };
	struct bot_dataset ds;
	struct bot_eval e;
	struct bot_eval_opts o;
	char err[256], *buf, *line, *save = NULL;
	size_t headlen = 0, rows = 0;

	simdata(&ds);
	eval_opts(&o, BOT_MODE_JOBS, pols, 1);
	o.tune = 0;
	ck_assert_msg(!bot_eval_run(&ds, &o, &e, err, sizeof(err)), "%s", err);
	e.auto_all.mean = e.auto_all.max = 9e12;	/* 9e9 us measured against 1e-3 */
	e.pol[0].all.worst_excess = -7.4e-15;
	e.pol[0].all.saved = 2e-5;
	e.pol[0].all.lost = 1e-10;
	e.auto_all.lost = 0;
	e.opts.tune = 1;
	e.ntuneset = 0;
	e.opts.allow = 0;
	buf = printed(&e, BOT_FMT_TABLE);
	ck_assert_msg(strstr(buf, "allow-list none\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "parameters (defaults: the training split has no context to tune on)"),
		      "%s", buf);
	ck_assert_msg(!strstr(buf, "tuned on the training split"), "%s", buf);
	ck_assert_msg(strstr(buf, " 9.0e+14%"), "%s", buf);
	ck_assert_msg(!strstr(buf, "-0.00%"), "%s", buf);
	ck_assert_msg(!strstr(buf, " 0.0ms") && !strstr(buf, " 0.0us"), "%s", buf);
	ck_assert_msg(strstr(buf, "20.0us"), "%s", buf);
	/* the all-fabrics block: AUTO's and thompson's rows end their lost
	 * column where the head does, before the tests' columns */
	for (line = strtok_r(strstr(buf, "\n all fabrics"), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "  policy ", 9)) {
			ck_assert_ptr_nonnull(strstr(line, "  mean/AUTO"));
			headlen = (size_t)(strstr(line, "  mean/AUTO") - line);
		} else if (!strncmp(line, "  AUTO ", 7) || !strncmp(line, "  thompson ", 11)) {
			ck_assert_msg(headlen && strlen(line) >= headlen && line[headlen - 1] == 's' &&
				      (!line[headlen] || line[headlen] == ' '),
				      "a row out of the head's columns (%zu):\n%s", headlen, buf);
			rows++;
		}
	}
	ck_assert_uint_eq(rows, 2);
	free(buf);
	e.opts.allow = (1u << BOT_NARMS) - 1;
	buf = printed(&e, BOT_FMT_TABLE);
	ck_assert_msg(strstr(buf, "allow-list all\n"), "%s", buf);
	free(buf);
	e.opts.allow = 7u << bot_arm(BOT_ALGO_NVLS, 0) | 1u << bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);
	buf = printed(&e, BOT_FMT_TABLE);
	ck_assert_msg(strstr(buf, "allow-list ring/ll,nvls\n"), "%s", buf);
	free(buf);
	buf = printed(&e, BOT_FMT_JSON);
	ck_assert_msg(strstr(buf, "\"mean\": 9e+12"), "%s", buf);
	free(buf);
	bot_eval_free(&e);
	bot_dataset_free(&ds);
}
END_TEST

/* opts.budget replaces the budget of every budgeted policy in every grid
 * point of the tuning, so the chosen point and the scored run have it; the
 * -free variants keep none; unset, the default (0.01) stays. Budget 0 and
 * a budget of 1 change what thompson does. */
START_TEST(test_eval_budget)
{
	static const int pols[] = { BOT_POLICY_THOMPSON, BOT_POLICY_THOMPSON_FREE, BOT_POLICY_GREEDY };
	static const double budgets[] = { -1, 0, 0.03, 1 };
	struct bot_dataset ds;
	struct bot_eval e[4];
	int differs0 = 0, differs1 = 0;

	/* allgather too: on h100-ib-ndr's 16-node allreduce the arms within
	 * reach of AUTO's NVLS_TREE are NVLS (not measurable across nodes,
	 * never probed) and arms the worst-case rule holds back */
	simdata_colls(&ds, 1u << BOT_COLL_ALLREDUCE | 1u << BOT_COLL_ALLGATHER);
	for (int b = 0; b < 4; b++) {
		struct bot_eval_opts o;
		char err[256];

		eval_opts(&o, BOT_MODE_JOBS, pols, 3);
		o.history = 0;
		o.budget_set = budgets[b] >= 0;
		o.budget = budgets[b];
		ck_assert_msg(!bot_eval_run(&ds, &o, &e[b], err, sizeof(err)), "%s", err);
		for (size_t k = 0; k < 3; k++) {
			const struct bot_policy_result *pr = &e[b].pol[k];

			ck_assert_uint_gt(pr->grid_points, 1);
			if (pr->pol.id == BOT_POLICY_THOMPSON_FREE)
				ck_assert(isinf(pr->pol.par.budget));
			else
				ck_assert_msg(pr->pol.par.budget == (b ? budgets[b] : 0.01),
					      "%s: budget %g after tuning (grid point %u), want %g",
					      bot_policy_name(pr->pol.id), pr->pol.par.budget,
					      pr->grid_chosen, b ? budgets[b] : 0.01);
		}
	}
	/* thompson (k = 0) on the test contexts: budget 0 and 1 each differ
	 * from the default; thompson-free (k = 1) is the same in every run. */
	for (size_t i = 0; i < e[0].ntest; i++) {
		differs0 |= e[1].pol[0].res[i].run_loss != e[0].pol[0].res[i].run_loss;
		differs1 |= e[3].pol[0].res[i].run_loss != e[0].pol[0].res[i].run_loss;
		for (int b = 1; b < 4; b++)
			ck_assert_double_eq(e[b].pol[1].res[i].run_loss, e[0].pol[1].res[i].run_loss);
	}
	/* untuned: the defaults with the budget */
	{
		struct bot_eval_opts o;
		struct bot_eval u;
		char err[256];

		eval_opts(&o, BOT_MODE_JOBS, pols, 3);
		o.tune = 0;
		o.budget_set = 1;
		o.budget = 0.03;
		ck_assert_msg(!bot_eval_run(&ds, &o, &u, err, sizeof(err)), "%s", err);
		ck_assert_uint_eq(u.pol[0].grid_points, 0);
		ck_assert_double_eq(u.pol[0].pol.par.budget, 0.03);
		ck_assert_double_eq(u.pol[2].pol.par.budget, 0.03);
		ck_assert(isinf(u.pol[1].pol.par.budget));
		bot_eval_free(&u);
	}
	ck_assert_msg(differs0, "budget 0 changed no run of thompson");
	ck_assert_msg(differs1, "budget 1 changed no run of thompson");
	/* budget 0 explores less: no more loss than the default anywhere in sum */
	ck_assert(e[1].pol[0].all.lost <= e[0].pol[0].all.lost);
	for (int b = 0; b < 4; b++)
		bot_eval_free(&e[b]);
	bot_dataset_free(&ds);
}
END_TEST

/* Load one file as `nccl-bot replay --data FILE` does; the message in msg,
 * the file's path (gone by then) in path (BOT_TEST_PATH_MAX bytes). */
static int load_file(const char *content, char *msg, size_t len, char *path)
{
	struct bot_ds_opts o = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	struct bot_dataset ds;
	struct bot_nodeset train, test;
	const char *files[1] = { path };
	char dir[BOT_TEST_PATH_MAX];
	int rc;

	bot_test_mkdtemp(dir, sizeof(dir), "replay");
	bot_test_write(dir, "data.csv", content, strlen(content));
	bot_test_path(path, dir, "data.csv");
	ck_assert_int_eq(bot_nodeset_parse("4-8", &train, msg, len), 0);
	ck_assert_int_eq(bot_nodeset_parse("16-32", &test, msg, len), 0);
	msg[0] = 0;
	bot_dataset_init(&ds);
	rc = bot_replay_load(&ds, files, 1, &o, &train, &test, 0, 16, msg, len);
	bot_dataset_free(&ds);
	bot_test_rmtree(dir);
	return rc;
}

#define HDR "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n"

static const struct {
	const char *name, *content;
	int line;
} bad_inputs[] = {
	{ "malformed row", HDR "f1,allreduce,1048576,128,16,ring,simple,50,55\nf1,allreduce,1048576,128,16,ring\n", 3 },
	{ "unknown collective", HDR "f1,alltoall,1048576,128,16,ring,simple,50,55\n", 2 },
	{ "unknown algorithm", HDR "f1,allreduce,1048576,128,16,hypercube,simple,50,55\n", 2 },
	{ "NaN time", HDR "f1,allreduce,1048576,128,16,ring,simple,50,nan\n", 2 },
	{ "negative time", HDR "f1,allreduce,1048576,128,16,ring,simple,50,-2\n", 2 },
	{ "zero time", HDR "f1,allreduce,1048576,128,16,ring,simple,50,55\nf1,allreduce,1048576,128,16,tree,simple,40,0\n", 3 },
	{ "missing arms", HDR "f1,allreduce,1048576,128,16,ring,simple,-1,\nf1,allreduce,1048576,128,16,tree,ll,-1,\n", 2 },
	{ "auto_us disagrees", HDR "f1,allreduce,1048576,128,16,ring,simple,50,55\nf1,allreduce,1048576,128,16,ring,simple,51,56\n", 3 },
	{ "auto_us missing for one arm", HDR "f1,allreduce,1048576,128,16,ring,simple,50,55\nf1,allreduce,1048576,128,16,tree,simple,,56\n", 3 },
	{ "huge time", HDR "f1,allreduce,1048576,128,16,ring,simple,50,55\nf1,allreduce,1048576,128,16,tree,simple,40,1e308\n", 3 },
	{ "tiny time", HDR "f1,allreduce,1048576,128,16,ring,simple,50,1e-300\n", 2 },
	{ "huge auto_us", HDR "f1,allreduce,1048576,128,16,ring,simple,1e300,55\n", 2 },
	{ "header only", HDR, 1 },
	{ "empty file", "", 0 },
};

START_TEST(test_bad_input)
{
	char msg[2048], path[BOT_TEST_PATH_MAX], want[BOT_TEST_PATH_MAX + 32];
	int rc = load_file(bad_inputs[_i].content, msg, sizeof(msg), path);

	ck_assert_msg(rc == -1, "%s: rc %d, want -1 (%s)", bad_inputs[_i].name, rc, msg);
	if (bad_inputs[_i].line)
		snprintf(want, sizeof(want), "%s:%d", path, bad_inputs[_i].line);
	else
		snprintf(want, sizeof(want), "%s", path);
	ck_assert_msg(strstr(msg, want), "%s: message lacks %s: %s", bad_inputs[_i].name, want, msg);
}
END_TEST

/* A sweep of nf fabrics named f<k> (k = 0..nf-1, so name order is not
 * number order: f10 < f9), one context each, the fabrics introduced in the
 * order (k0 + step * i) % nf (step odd, nf a power of two: every k once). */
static char *many_fabrics_csv(unsigned nf, unsigned k0, unsigned step)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fprintf(f, "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n");
	for (unsigned i = 0; i < nf; i++) {
		unsigned k = (k0 + step * i) % nf;
		uint64_t h = bot_mix64(k);
		double ring = 10 + (double)(h % 97), tree = 10 + (double)((h >> 8) % 89);

		for (unsigned s = 0; s < 3; s++) {
			fprintf(f, "f%u,allreduce,1048576,128,16,ring,simple,%g,%g\n", k, ring,
				ring * (1 + 0.01 * s));
			fprintf(f, "f%u,allreduce,1048576,128,16,tree,simple,%g,%g\n", k, tree,
				tree * (1.2 - 0.1 * s));
		}
	}
	fclose(f);
	return buf;
}

/* Many fabric names in two file orders: the fabrics are numbered in name
 * order whatever the order of the file (the numbers key the random draws),
 * so the dataset and every byte of the printed evaluation are the same.
 * The sweep reader's name index and the dataset's ranking are sorts and
 * hashes now; this pins that they give the numbering the scans gave. */
START_TEST(test_many_fabrics_order)
{
	static const int pols[] = { BOT_POLICY_THOMPSON };
	const unsigned nf = 4096;
	struct bot_ds_opts dso = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	char *out[2], err[512];

	for (int v = 0; v < 2; v++) {
		char *csv = many_fabrics_csv(nf, v ? 77 : 0, v ? 40503 : 1);
		struct bot_sweep sw;
		struct bot_dataset ds;
		struct bot_eval e;
		struct bot_eval_opts o;

		bot_sweep_init(&sw);
		ck_assert_msg(!bot_sweep_parse(&sw, "many.csv", csv, strlen(csv), err, sizeof(err)),
			      "%s", err);
		free(csv);
		ck_assert_uint_eq(sw.nfabrics, nf);
		ck_assert_uint_eq(sw.nrows, (size_t)nf * 6);
		for (size_t r = 0; r < sw.nrows; r += 6) {
			unsigned k = (unsigned)strtoul(sw.fabrics[sw.rows[r].fabric] + 1, NULL, 10);

			ck_assert_uint_eq(k, ((v ? 77 : 0) + (v ? 40503u : 1u) * (unsigned)(r / 6)) % nf);
			ck_assert_int_eq(bot_sweep_fabric(&sw, sw.fabrics[sw.rows[r].fabric]),
					 sw.rows[r].fabric);
		}
		bot_dataset_init(&ds);
		ck_assert_msg(!bot_dataset_build(&ds, &sw, NULL, &dso, err, sizeof(err)), "%s", err);
		bot_sweep_free(&sw);
		ck_assert_uint_eq(ds.nfabrics, nf);
		ck_assert_uint_eq(ds.nctx, nf);
		for (size_t f = 1; f < ds.nfabrics; f++)
			ck_assert_int_lt(strcmp(ds.fabrics[f - 1], ds.fabrics[f]), 0);
		for (size_t i = 0; i < ds.nctx; i++)
			ck_assert_uint_eq(ds.ctx[i].fabric, i);
		eval_opts(&o, BOT_MODE_JOBS, pols, 1);
		o.run.jobs = 3;
		ck_assert_msg(!bot_eval_run(&ds, &o, &e, err, sizeof(err)), "%s", err);
		ck_assert_uint_eq(e.ntest, nf);
		out[v] = printed(&e, BOT_FMT_CSV);
		bot_eval_free(&e);
		bot_dataset_free(&ds);
	}
	ck_assert_str_eq(out[0], out[1]);
	ck_assert_ptr_nonnull(strstr(out[0], "\njobs,thompson,f4095,1,"));
	free(out[0]);
	free(out[1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("replay");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_loss_math);
	tcase_add_test(t, test_trim);
	tcase_add_test(t, test_feedback_delay);
	tcase_add_test(t, test_determinism);
	tcase_add_test(t, test_reference_identical);
	tcase_add_test(t, test_signflip_fast);
	tcase_add_test(t, test_lofo);
	tcase_add_test(t, test_harm);
	tcase_add_test(t, test_tune_objective);
	tcase_add_test(t, test_tune_pick);
	tcase_add_test(t, test_auto_rows_feed);
	tcase_add_test(t, test_holm);
	tcase_add_test(t, test_signflip);
	tcase_add_test(t, test_nodeset);
	tcase_add_test(t, test_json_keys);
	tcase_add_test(t, test_table_cosmetics);
	tcase_add_test(t, test_eval_budget);
	tcase_add_test(t, test_many_fabrics_order);
	tcase_add_loop_test(t, test_bad_input, 0, (int)(sizeof(bad_inputs) / sizeof(bad_inputs[0])));
	suite_add_tcase(s, t);
	return s;
}

BOT_TEST_MAIN(suite)
