/*
 * test_sim.c - unit tests of the fabric simulator (sim/sim*.c).
 *
 * Checks: determinism for a seed; -1 exactly where NCCL 2.28 would not
 * offer an arm; the AUTO table against values computed by hand from the
 * cost-model formulas (worked in the comments); latency growing with size;
 * noise statistics; the frozen calibration error against the recorded
 * bounds (recomputed from data/external/sweep under $srcdir); and AUTO being
 * wrong by > 10% on a realistic minority of contexts.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"
#include "tests/unit/testutil.h"

static const struct bot_fabric *fab(const char *name)
{
	const struct bot_fabric *f = bot_sim_fabric_find(name);

	ck_assert_ptr_nonnull(f);
	return f;
}

/* A small sweep: 2 and 16 nodes, 1 KiB .. 1 MiB, `samples` rows per arm;
 * opts (may be NULL) adds the fabric and the outlier rate. */
static void gen_with(uint64_t seed, unsigned samples, const struct bot_sim_opts *opts,
		     struct bot_sweep *sw)
{
	static const unsigned nodes[] = { 2, 16 };
	struct bot_sim_opts o;

	memset(&o, 0, sizeof(o));
	if (opts)
		o = *opts;
	o.seed = seed;
	o.samples = samples;
	o.nodes = nodes;
	o.nnodes = 2;
	o.min_bytes = 1024;
	o.max_bytes = 1 << 20;
	bot_sweep_init(sw);
	ck_assert_int_eq(bot_sim_generate(&o, sw), 0);
}

static void gen(uint64_t seed, struct bot_sweep *sw)
{
	gen_with(seed, 4, NULL, sw);
}

/* --sim-outliers: the same draws, the outlier rate replaced. A rate of 0
 * leaves the body of the noise (no row above the default's), 0.3 turns
 * about 30 % of the rows into 2-10x outliers of the same draw. */
static void gen_outliers(int set, double p, struct bot_sweep *sw)
{
	struct bot_sim_opts o;

	memset(&o, 0, sizeof(o));
	o.only = fab("h100-ib-ndr");
	o.outliers_set = set;
	o.outlier_p = p;
	gen_with(3, 8, &o, sw);
}

START_TEST(test_outlier_rate)
{
	struct bot_sweep def, none, hi;
	size_t lower = 0, out = 0;

	gen_outliers(0, 0, &def);
	gen_outliers(1, 0, &none);
	gen_outliers(1, 0.3, &hi);
	ck_assert_uint_gt(def.nrows, 1000);
	ck_assert_uint_eq(def.nrows, none.nrows);
	ck_assert_uint_eq(def.nrows, hi.nrows);
	for (size_t i = 0; i < def.nrows; i++) {
		double r = hi.rows[i].measured_us / none.rows[i].measured_us;

		ck_assert(none.rows[i].measured_us <= def.rows[i].measured_us);
		lower += none.rows[i].measured_us < def.rows[i].measured_us;
		ck_assert(r == 1.0 || (r >= 2.0 && r <= 10.0 + 1e-9));
		out += r != 1.0;
	}
	/* h100-ib-ndr's own rate is 0.3 %: a few rows lose their outlier */
	ck_assert_uint_gt(lower, 0);
	ck_assert_uint_lt(lower, def.nrows / 50);
	ck_assert_uint_gt(out, def.nrows / 4);
	ck_assert_uint_lt(out, def.nrows * 7 / 20);
	bot_sweep_free(&def);
	bot_sweep_free(&none);
	bot_sweep_free(&hi);
}
END_TEST

START_TEST(test_deterministic)
{
	struct bot_sweep a, b, c;
	size_t i, diff = 0;

	gen(7, &a);
	gen(7, &b);
	gen(8, &c);
	ck_assert_uint_gt(a.nrows, 1000);
	ck_assert_uint_eq(a.nrows, b.nrows);
	ck_assert_uint_eq(a.nrows, c.nrows);
	for (i = 0; i < a.nrows; i++) {
		ck_assert(a.rows[i].measured_us == b.rows[i].measured_us);
		ck_assert(a.rows[i].auto_us == c.rows[i].auto_us);
		ck_assert(a.rows[i].measured_us > 0);
		if (a.rows[i].measured_us != c.rows[i].measured_us)
			diff++;
	}
	ck_assert_uint_gt(diff, a.nrows * 9 / 10);
	/* a sample is a pure function of its inputs */
	ck_assert(bot_sim_sample_us(fab("h100-roce"), 4, 1 << 20, 8, 5, 3, 11) ==
		  bot_sim_sample_us(fab("h100-roce"), 4, 1 << 20, 8, 5, 3, 11));
	bot_sweep_free(&a);
	bot_sweep_free(&b);
	bot_sweep_free(&c);
}
END_TEST

static unsigned supported(const struct bot_fabric *f, int coll, uint64_t nb, unsigned nodes,
			  unsigned *mask)
{
	float t[BOT_NARMS];
	unsigned n = 0;
	int a;

	bot_sim_auto_table(f, coll, nb, nodes, t);
	*mask = 0;
	for (a = 0; a < BOT_NARMS; a++) {
		double tu = bot_sim_true_us(f, coll, nb, nodes, a);

		if (t[a] < 0) {
			ck_assert(t[a] == -1.0f);
			ck_assert(tu < 0);
			continue;
		}
		ck_assert(tu > 0);
		*mask |= 1u << a;
		n++;
	}
	return n;
}

#define ARM(a, p) (1u << bot_arm(BOT_ALGO_##a, BOT_PROTO_##p))
#define ARMS3(a) (ARM(a, LL) | ARM(a, LL128) | ARM(a, SIMPLE))

START_TEST(test_supported)
{
	unsigned m, i, c, ni;

	/* broadcast/reduce: ring only */
	ck_assert_uint_eq(supported(fab("h100-ib-ndr"), BOT_COLL_BROADCAST, 1 << 20, 4, &m), 3);
	ck_assert_uint_eq(m, ARMS3(RING));
	/* allreduce on H100 IB with SHARP across nodes: tree, ring, collnet
	 * direct/chain, NVLS (with SHARP) and NVLS tree, Simple for the last four */
	supported(fab("h100-ib-ndr"), BOT_COLL_ALLREDUCE, 1 << 20, 4, &m);
	ck_assert_uint_eq(m, ARMS3(TREE) | ARMS3(RING) | ARM(COLLNET_DIRECT, SIMPLE) |
			  ARM(COLLNET_CHAIN, SIMPLE) | ARM(NVLS, SIMPLE) | ARM(NVLS_TREE, SIMPLE));
	/* one node: NVLS, no NVLS tree, no CollNet */
	supported(fab("h100-ib-ndr"), BOT_COLL_ALLREDUCE, 1 << 20, 1, &m);
	ck_assert_uint_eq(m, ARMS3(TREE) | ARMS3(RING) | ARM(NVLS, SIMPLE));
	/* RoCE: no SHARP, so no multi-node NVLS and no CollNet */
	supported(fab("h100-roce"), BOT_COLL_ALLREDUCE, 1 << 20, 4, &m);
	ck_assert_uint_eq(m, ARMS3(TREE) | ARMS3(RING) | ARM(NVLS_TREE, SIMPLE));
	/* allgather: ring (+ NVLS on one node); PAT never with 8 GPUs per node */
	supported(fab("h100-roce"), BOT_COLL_ALLGATHER, 1 << 20, 1, &m);
	ck_assert_uint_eq(m, ARMS3(RING) | ARM(NVLS, SIMPLE));
	supported(fab("h100-roce"), BOT_COLL_ALLGATHER, 1 << 20, 2, &m);
	ck_assert_uint_eq(m, ARMS3(RING));
	/* A100: no NVLS */
	supported(fab("a100-ib-hdr"), BOT_COLL_ALLREDUCE, 1 << 20, 1, &m);
	ck_assert_uint_eq(m, ARMS3(TREE) | ARMS3(RING));
	/* GB200: NVLS allgather only up to 32 local ranks (8 trays) */
	supported(fab("gb200-nvl"), BOT_COLL_ALLGATHER, 1 << 20, 8, &m);
	ck_assert_uint_eq(m, ARMS3(RING) | ARM(NVLS, SIMPLE));
	supported(fab("gb200-nvl"), BOT_COLL_ALLGATHER, 1 << 20, 12, &m);
	ck_assert_uint_eq(m, ARMS3(RING));
	/* PAT: one GPU per node only (the a10g calibration fabric) */
	supported(fab("aws-g5-a10g"), BOT_COLL_REDUCESCATTER, 1 << 20, 4, &m);
	ck_assert_uint_eq(m, ARMS3(RING) | ARM(PAT, SIMPLE));
	/* never all -1 on any scoring context */
	for (i = 0; i < bot_sim_nfabrics(); i++)
		for (c = 0; c < BOT_NCOLL; c++)
			for (ni = 0; ni < bot_sim_default_nnodes; ni++)
				ck_assert_uint_gt(supported(bot_sim_fabric(i), (int)c, 4096,
							    bot_sim_default_nodes[ni], &m), 0);
}
END_TEST

static void near(double got, double want)
{
	ck_assert_msg(fabs(got - want) <= 1e-4 * want, "got %.6f want %.6f", got, want);
}

START_TEST(test_auto_by_hand)
{
	float t[BOT_NARMS];

	/*
	 * h100-ib-ndr, allreduce, 1 node = 8 ranks, ring/LL, 64 KiB.
	 * Single-node ring graph: 24 channels x 20 GB/s -> busBw 480.
	 * Ring LL: min(llMaxBw[Hopper][1 node] = 141, 480 * .5) = 141;
	 * alg bw = 141 * nRanks / nsteps = 141 * 8 / 14 = 80.5714.
	 * Latency: base 6.6 + nsteps 14 * NVLink ring LL 0.6 = 15.0.
	 * time = 15.0 + 65536 / (1000 * 80.5714) = 15.81340.
	 */
	bot_sim_auto_table(fab("h100-ib-ndr"), BOT_COLL_ALLREDUCE, 65536, 1, t);
	near(t[bot_arm(BOT_ALGO_RING, BOT_PROTO_LL)], 15.0 + 65536.0 / (1000.0 * 141.0 * 8 / 14));

	/*
	 * h100-ib-ndr, allreduce, 4 nodes = 32 ranks, tree/Simple, 1 MiB.
	 * Multi-node tree graph 16 ch x bwInter 24 -> 384; tree allreduce
	 * min(384 * .92, 16 * perChMaxTreeBw[Hopper][>=3 nodes] 36) = 353.28;
	 * alg = x .5 = 176.64; tree correction Simple at log2(1 MiB / 64) = 14
	 * is .5 -> 88.32 GB/s.
	 * Latency: base 8.4 + 2 * ((8 - 1) * NVLink tree Simple 4.0 +
	 * log2(4) * NET tree Simple 14) = 8.4 + 112 = 120.4.
	 * time = 120.4 + 1048576 / 88320 = 132.27246.
	 */
	bot_sim_auto_table(fab("h100-ib-ndr"), BOT_COLL_ALLREDUCE, 1 << 20, 4, t);
	near(t[bot_arm(BOT_ALGO_TREE, BOT_PROTO_SIMPLE)], 120.4 + 1048576.0 / 88320.0);

	/*
	 * a100-ib-hdr, allgather, 2 nodes = 16 ranks, ring/Simple, 16 MiB.
	 * 2 nodes use bwIntra: 8 ch x 24 = 192; alg = 192 * 16 / 15 = 204.8.
	 * Latency: base 8.4; intra NVLink ring Simple 3.4 but the AMD net
	 * overhead 2 x 3 = 6 is larger; 1 inter step at NET ring Simple 14:
	 * 8.4 + (15 - 1) * 6 + 14 = 106.4. time = 106.4 + 16777216 / 204800
	 * = 188.32.
	 */
	bot_sim_auto_table(fab("a100-ib-hdr"), BOT_COLL_ALLGATHER, 16 << 20, 2, t);
	near(t[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)], 188.32);
}
END_TEST

START_TEST(test_monotonic)
{
	unsigned i, c, ni;
	int a;

	for (i = 0; i < bot_sim_nfabrics(); i++) {
		const struct bot_fabric *f = bot_sim_fabric(i);

		for (c = 0; c < BOT_NCOLL; c++)
			for (ni = 0; ni < bot_sim_default_nnodes; ni++)
				for (a = 0; a < BOT_NARMS; a++) {
					unsigned n = bot_sim_default_nodes[ni];
					double prev = 0;
					uint64_t b;

					for (b = 1024; b <= (UINT64_C(4) << 30); b <<= 1) {
						double t = bot_sim_true_us(f, (int)c, b, n, a);

						if (t < 0)
							break;
						ck_assert_msg(t >= prev * 0.99, "%s coll %u n %u arm %d",
							      bot_sim_fabric_name(f), c, n, a);
						prev = t;
					}
					if (prev > 0)
						ck_assert(prev > 1000);	/* 4 GiB takes > 1 ms */
				}
	}
}
END_TEST

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

START_TEST(test_noise)
{
	const struct bot_fabric *f = fab("h100-roce");
	enum { N = 20001 };
	double *v = malloc(N * sizeof(double));
	double t = bot_sim_true_us(f, BOT_COLL_ALLREDUCE, 1 << 22, 16, 5);
	unsigned i, out = 0;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < N; i++) {
		v[i] = bot_sim_sample_us(f, BOT_COLL_ALLREDUCE, 1 << 22, 16, 5, 42, i);
		if (v[i] > 1.9 * t)
			out++;
	}
	qsort(v, N, sizeof(double), dcmp);
	ck_assert_msg(fabs(v[N / 2] / t - 1) < 0.01, "median %.3f true %.3f", v[N / 2], t);
	/* log-normal spread about sigma: the 84th percentile near e^sigma */
	ck_assert(v[(int)(N * 0.8413)] / t > exp(0.5 * 0.05));
	ck_assert(v[(int)(N * 0.8413)] / t < exp(2.0 * 0.05));
	ck_assert_msg(out >= N / 1000 && out <= N * 6 / 1000, "outliers %u of %d", out, N);
	free(v);
}
END_TEST

START_TEST(test_calibration_bounds)
{
	const char *src = getenv("srcdir");
	char path[4096], err[BOT_SWEEP_ERR_MAX];
	static const char *const files[] = { "aws-g5-a10g.csv", "modal-a100.csv" };
	struct bot_sweep sw;
	struct bot_sim_calerr e;
	unsigned i;

	bot_sweep_init(&sw);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/data/external/sweep/%s", src ? src : ".", files[i]);
		ck_assert_msg(bot_sweep_read(&sw, path, err, sizeof(err)) == 0, "%s", err);
	}
	ck_assert_int_eq(bot_sim_calerr(&sw, &bot_sim_frozen, &e), 0);
	ck_assert_uint_gt(e.nabs, 200);
	ck_assert_uint_gt(e.nratio, 200);
	ck_assert_msg(e.abs_med <= BOT_SIM_CAL_ABS_MED_MAX, "abs median %.3f", e.abs_med);
	ck_assert_msg(e.abs_p90 <= BOT_SIM_CAL_ABS_P90_MAX, "abs p90 %.3f", e.abs_p90);
	ck_assert_msg(e.ratio_med <= BOT_SIM_CAL_RATIO_MED_MAX, "ratio median %.3f", e.ratio_med);
	ck_assert_msg(e.ratio_p90 <= BOT_SIM_CAL_RATIO_P90_MAX, "ratio p90 %.3f", e.ratio_p90);
	/* and the frozen set is at least as good as the hand-set prior */
	{
		struct bot_sim_calerr pe;

		ck_assert_int_eq(bot_sim_calerr(&sw, &bot_sim_prior, &pe), 0);
		ck_assert(e.objective < pe.objective);
	}
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_auto_wrong_minority)
{
	unsigned i, n;

	for (i = 0; i < bot_sim_nfabrics(); i++) {
		const struct bot_fabric *f = bot_sim_fabric(i);
		double tune = bot_sim_auto_wrong(f, 4, 8, 0.1, &n);
		double score = bot_sim_auto_wrong(f, 16, 32, 0.1, &n);

		ck_assert_uint_gt(n, 100);
		ck_assert_msg(score > 0.02 && score < 0.30, "%s: %.3f at 16-32 nodes",
			      bot_sim_fabric_name(f), score);
		ck_assert_msg(tune > 0.02 && tune < 0.30, "%s: %.3f at 4-8 nodes",
			      bot_sim_fabric_name(f), tune);
	}
}
END_TEST

START_TEST(test_fabric_names)
{
	unsigned i;

	ck_assert_uint_ge(bot_sim_nfabrics(), 4);
	for (i = 0; i < bot_sim_nfabrics(); i++) {
		const struct bot_fabric *f = bot_sim_fabric(i);

		ck_assert_ptr_eq(bot_sim_fabric_find(bot_sim_fabric_name(f)), f);
		ck_assert(strlen(bot_sim_fabric_desc(f)) > 20);
		ck_assert_uint_ge(bot_sim_max_nodes(f), 32);
	}
	ck_assert_ptr_null(bot_sim_fabric(bot_sim_nfabrics()));
	ck_assert_ptr_null(bot_sim_fabric_find("no-such-fabric"));
	ck_assert_uint_eq(bot_sim_gpus_per_node(fab("gb200-nvl")), 4);
}
END_TEST

/* The second family: found by name and by family, every fabric generates
 * a sweep whose every context has a supported arm, AUTO is wrong on some
 * contexts of the fabrics built to fool it and on none of h100-ib-auto. */
START_TEST(test_alt_family)
{
	const struct bot_fabric *sel[32];
	unsigned n, i, nalt = 0;
	char bad[96];

	ck_assert_int_eq(bot_sim_select("builtin", sel, 32, &n, bad, sizeof(bad)), 0);
	ck_assert_uint_eq(n, bot_sim_nfabrics());
	for (i = 0; i < n; i++)
		ck_assert_ptr_eq(sel[i], bot_sim_fabric(i));
	ck_assert_int_eq(bot_sim_select("alt", sel, 32, &n, bad, sizeof(bad)), 0);
	ck_assert_uint_ge(n, 5);
	for (i = 0; i < n; i++) {
		const struct bot_fabric *f = sel[i];
		unsigned cnt;
		double w = bot_sim_auto_wrong(f, 16, 32, 0.1, &cnt);
		struct bot_sim_opts o;
		struct bot_sweep sw;
		unsigned nodes[] = { 4, 16 };

		ck_assert_str_eq(bot_sim_fabric_family(f), "alt");
		ck_assert_ptr_eq(bot_sim_fabric_find(bot_sim_fabric_name(f)), f);
		memset(&o, 0, sizeof(o));
		o.samples = 2;
		o.nodes = nodes;
		o.nnodes = 2;
		o.only = f;
		bot_sweep_init(&sw);
		ck_assert_int_eq(bot_sim_generate(&o, &sw), 0);
		ck_assert_uint_gt(sw.nrows, 100);
		ck_assert_str_eq(sw.fabrics[0], bot_sim_fabric_name(f));
		for (size_t r = 0; r < sw.nrows; r++)
			ck_assert(isfinite(sw.rows[r].measured_us) && sw.rows[r].measured_us > 0);
		bot_sweep_free(&sw);
		if (!strcmp(bot_sim_fabric_name(f), "h100-ib-auto"))
			ck_assert_msg(w < 0.01, "h100-ib-auto: AUTO wrong on %.3f", w);
		else
			nalt += w > 0.02;
		ck_assert_msg(w < 0.5, "%s: AUTO wrong on %.3f", bot_sim_fabric_name(f), w);
	}
	ck_assert_uint_ge(nalt, 4);
	/* mixed names and families, duplicates once */
	ck_assert_int_eq(bot_sim_select("h100-efa,alt,h100-roce", sel, 32, &n, bad, sizeof(bad)), 0);
	ck_assert_ptr_eq(sel[0], bot_sim_fabric_find("h100-efa"));
	ck_assert_ptr_eq(sel[n - 1], bot_sim_fabric_find("h100-roce"));
	ck_assert_int_eq(bot_sim_select("alt,nope", sel, 32, &n, bad, sizeof(bad)), -1);
	ck_assert_str_eq(bad, "nope");
	ck_assert_int_eq(bot_sim_select("alt,", sel, 32, &n, bad, sizeof(bad)), -1);
	ck_assert_int_eq(bot_sim_select("alt", sel, 2, &n, bad, sizeof(bad)), -1);
}
END_TEST

/* The rerun noise pairs each row with the next of its (fabric, context,
 * arm): a scan per row took minutes for a sweep of a few 100k unpaired
 * rows (check's 60 s timeout ends it); sorted, a fraction of a second.
 * Unsupported rows (auto_us -1, an empty measured_us) are no reruns. */
START_TEST(test_repeat_sigma_large)
{
	struct bot_sweep sw;
	struct bot_sweep_row r;
	int fab;
	unsigned np = 0;
	double sig;

	bot_sweep_init(&sw);
	fab = bot_sweep_fabric(&sw, "aws-g5-a10g");
	ck_assert_int_ge(fab, 0);
	memset(&r, 0, sizeof(r));
	r.fabric = (uint16_t)fab;
	r.coll = 4;
	r.algo = 1;
	r.proto = 2;
	r.nranks = 2;
	r.nnodes = 2;
	r.auto_us = NAN;
	r.nchannels = r.captured = r.aggregate = -1;
	r.num_pipe_ops = -1;
	for (uint32_t i = 0; i < 400000; i++) {
		r.nbytes = 1048576 + i;
		r.measured_us = 100;
		ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	}
	/* two reruns of 1048576, |ln ratio| ln 2 each; an unsupported pair */
	r.nbytes = 1048576;
	r.measured_us = 200;
	ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	r.measured_us = 400;
	ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	r.nbytes = 1048577;
	r.auto_us = -1;
	r.measured_us = NAN;
	ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	sig = bot_sim_repeat_sigma(&sw, &np);
	ck_assert_uint_eq(np, 2);
	ck_assert_double_eq_tol(sig, log(2.0) / (0.6745 * 1.4142135623730951), 1e-12);
	bot_sweep_free(&sw);
}
END_TEST

static Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_outlier_rate);
	tcase_add_test(tc, test_supported);
	tcase_add_test(tc, test_auto_by_hand);
	tcase_add_test(tc, test_monotonic);
	tcase_add_test(tc, test_noise);
	tcase_add_test(tc, test_calibration_bounds);
	tcase_add_test(tc, test_auto_wrong_minority);
	tcase_add_test(tc, test_fabric_names);
	tcase_add_test(tc, test_alt_family);
	tcase_add_test(tc, test_repeat_sigma_large);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(sim_suite)
