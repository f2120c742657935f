/*
 * test_policies.c - unit tests of policies/: names, size buckets, keys,
 * plans, statistics, the knowledge base and every policy.
 *
 * The policy tests drive small closed loops: a deterministic "fabric" with
 * known true latencies answers each communicator's arm with a slightly noisy
 * sample, and the tests check the properties every policy must keep
 * (determinism, never an unsupported arm, warm start on AUTO's arm,
 * convergence to a better arm, robustness to outliers, well-formed plans).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/context.h"
#include "policies/kb.h"
#include "policies/plan.h"
#include "policies/policy.h"
#include "policies/stats.h"
#include "tests/unit/testutil.h"

/* ---- context ------------------------------------------------------------ */

START_TEST(test_size_bucket)
{
	ck_assert_uint_eq(bot_size_bucket(0), 0);
	ck_assert_uint_eq(bot_size_bucket(1), 0);
	ck_assert_uint_eq(bot_size_bucket(2), 4);
	ck_assert_uint_eq(bot_size_bucket(3), 4);
	ck_assert_uint_eq(bot_size_bucket(4), 8);
	ck_assert_uint_eq(bot_size_bucket(5), 9);
	ck_assert_uint_eq(bot_size_bucket(6), 10);
	ck_assert_uint_eq(bot_size_bucket(7), 11);
	ck_assert_uint_eq(bot_size_bucket(8), 12);
	ck_assert_uint_eq(bot_size_bucket(1 << 20), 80);
	ck_assert_uint_eq(bot_size_bucket(5 << 18), 81);
	ck_assert_uint_eq(bot_size_bucket(6 << 18), 82);
	ck_assert_uint_eq(bot_size_bucket(7 << 18), 83);
	ck_assert_uint_eq(bot_size_bucket((7 << 18) + 12345), 83);
	ck_assert_uint_eq(bot_size_bucket(2 << 20), 84);
	ck_assert_uint_eq(bot_size_bucket((2 << 20) - 1), 83);
	ck_assert_uint_eq(bot_size_bucket(UINT64_MAX), 255);
	ck_assert_uint_eq(bot_size_bucket(1ULL << 40), 160);
}
END_TEST

START_TEST(test_bucket_lo)
{
	ck_assert_uint_eq(bot_bucket_lo(0), 0);
	ck_assert_uint_eq(bot_bucket_lo(4), 2);
	ck_assert_uint_eq(bot_bucket_lo(80), 1 << 20);
	ck_assert_uint_eq(bot_bucket_lo(81), 5 << 18);
	ck_assert_uint_eq(bot_bucket_lo(84), 2 << 20);
	ck_assert_uint_eq(bot_bucket_lo(255), 7ULL << 61);
	for (unsigned b = 8; b < 256; b++) {
		ck_assert_uint_eq(bot_size_bucket(bot_bucket_lo(b)), b);
		/* Buckets 5-7 hold nothing, so 8's predecessor is 4. */
		ck_assert_uint_eq(bot_size_bucket(bot_bucket_lo(b) - 1), b == 8 ? 4 : b - 1);
	}
}
END_TEST

START_TEST(test_key)
{
	uint64_t k = bot_ctx_key(BOT_COLL_ALLREDUCE, 80, 128, 16);

	ck_assert_uint_eq(bot_key_coll(k), 4);
	ck_assert_uint_eq(bot_key_bucket(k), 80);
	ck_assert_uint_eq(bot_key_nranks(k), 128);
	ck_assert_uint_eq(bot_key_nnodes(k), 16);
	ck_assert_uint_eq(k, 0x0450001000000080ULL);
	ck_assert_uint_eq(bot_key_nnodes(bot_ctx_key(0, 0, 1, 100000)), 65535);
	ck_assert_uint_eq(bot_key_nranks(bot_ctx_key(0, 0, UINT32_MAX, 1)), UINT32_MAX);
	/* Keys sort by collective, then size, then nodes, then ranks. */
	ck_assert(bot_ctx_key(1, 0, 1, 1) > bot_ctx_key(0, 255, 65535, 65535));
	ck_assert(bot_ctx_key(1, 9, 1, 1) > bot_ctx_key(1, 8, 9999, 9999));
	ck_assert(bot_ctx_key(1, 9, 1, 2) > bot_ctx_key(1, 9, 9999, 1));
	ck_assert(bot_ctx_key(1, 9, 5, 2) > bot_ctx_key(1, 9, 4, 2));
}
END_TEST

START_TEST(test_ctx_format)
{
	char buf[64];
	int n;

	n = bot_ctx_format(bot_ctx_key(BOT_COLL_ALLREDUCE, 80, 128, 16), buf, sizeof(buf));
	ck_assert_str_eq(buf, "allreduce/1MiB+0/n16/r128");
	ck_assert_int_eq(n, (int)strlen(buf));
	bot_ctx_format(bot_ctx_key(BOT_COLL_ALLGATHER, 81, 8, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "allgather/1MiB+1/n1/r8");
	bot_ctx_format(bot_ctx_key(BOT_COLL_BROADCAST, 0, 2, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "broadcast/1B+0/n1/r2");
	bot_ctx_format(bot_ctx_key(BOT_COLL_REDUCE, 43, 2, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "reduce/1KiB+3/n1/r2");
	bot_ctx_format(bot_ctx_key(BOT_COLL_REDUCESCATTER, 122, 2, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "reducescatter/1GiB+2/n1/r2");
	bot_ctx_format(bot_ctx_key(BOT_COLL_REDUCESCATTER, 4 * 42, 2, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "reducescatter/4096GiB+0/n1/r2");
	/* Truncation always terminates. */
	n = bot_ctx_format(bot_ctx_key(BOT_COLL_ALLREDUCE, 80, 128, 16), buf, 5);
	ck_assert_str_eq(buf, "allr");
	ck_assert_int_eq(n, 25);
	ck_assert_int_eq(bot_ctx_format(bot_ctx_key(4, 80, 128, 16), NULL, 0), 25);
}
END_TEST

START_TEST(test_names)
{
	char buf[32];

	for (int i = 0; i < BOT_NCOLL; i++)
		ck_assert_int_eq(bot_coll_parse(bot_coll_name(i)), i);
	for (int i = 0; i < BOT_NALGO; i++)
		ck_assert_int_eq(bot_algo_parse(bot_algo_name(i)), i);
	for (int i = 0; i < BOT_NPROTO; i++)
		ck_assert_int_eq(bot_proto_parse(bot_proto_name(i)), i);
	for (int a = 0; a < BOT_NARMS; a++) {
		snprintf(buf, sizeof(buf), "%s/%s", bot_algo_name(bot_arm_algo(a)),
			 bot_proto_name(bot_arm_proto(a)));
		ck_assert_str_eq(bot_arm_name(a), buf);
		ck_assert_int_eq(bot_arm_parse(buf), a);
	}
	ck_assert_str_eq(bot_arm_name(5), "ring/simple");
	ck_assert_int_eq(bot_arm_parse("NVLS_TREE/LL128"), bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128));
	ck_assert_int_eq(bot_coll_parse("AllReduce"), BOT_COLL_ALLREDUCE);
	ck_assert_int_eq(bot_coll_parse("ReduceScatter"), BOT_COLL_REDUCESCATTER);
	ck_assert_int_eq(bot_coll_parse("AllGather"), BOT_COLL_ALLGATHER);
	ck_assert_int_eq(bot_algo_parse("TREE"), BOT_ALGO_TREE);
	ck_assert_int_eq(bot_algo_parse("COLLNET_DIRECT"), BOT_ALGO_COLLNET_DIRECT);
	ck_assert_int_eq(bot_algo_parse("CollNetChain"), BOT_ALGO_COLLNET_CHAIN);
	ck_assert_int_eq(bot_algo_parse("NVLS_TREE"), BOT_ALGO_NVLS_TREE);
	ck_assert_int_eq(bot_algo_parse("NVLS"), BOT_ALGO_NVLS);
	ck_assert_int_eq(bot_algo_parse("PAT"), BOT_ALGO_PAT);
	ck_assert_int_eq(bot_proto_parse("LL128"), BOT_PROTO_LL128);
	ck_assert_int_eq(bot_proto_parse("SIMPLE"), BOT_PROTO_SIMPLE);
	ck_assert_int_eq(bot_proto_parse("Simple"), BOT_PROTO_SIMPLE);
	ck_assert_int_eq(bot_proto_parse("LL"), BOT_PROTO_LL);
	/* Near misses and bad input. */
	ck_assert_int_eq(bot_proto_parse("LL12"), -1);
	ck_assert_int_eq(bot_algo_parse("rings"), -1);
	ck_assert_int_eq(bot_algo_parse(""), -1);
	ck_assert_int_eq(bot_algo_parse(NULL), -1);
	ck_assert_int_eq(bot_coll_parse("all"), -1);
	ck_assert_int_eq(bot_arm_parse("ring"), -1);
	ck_assert_int_eq(bot_arm_parse("ring/"), -1);
	ck_assert_ptr_null(bot_coll_name(5));
	ck_assert_ptr_null(bot_algo_name(-1));
	ck_assert_ptr_null(bot_proto_name(3));
	ck_assert_ptr_null(bot_arm_name(21));
	/* Length-bounded variants. */
	ck_assert_int_eq(bot_algo_parse_n("ring,simple", 4), BOT_ALGO_RING);
	ck_assert_int_eq(bot_proto_parse_n("simplex", 6), BOT_PROTO_SIMPLE);
	ck_assert_int_eq(bot_coll_parse_n("allreduce", 3), -1);
}
END_TEST

START_TEST(test_digest)
{
	/* FNV-1a 64 of "" is the offset basis; of "a" 0xaf63dc4c8601ec8c. */
	ck_assert_uint_eq(bot_digest64("", 0), bot_mix64(0xcbf29ce484222325ULL));
	ck_assert_uint_eq(bot_digest64("a", 1), bot_mix64(0xaf63dc4c8601ec8cULL));
	ck_assert_uint_ne(bot_digest64("ab", 2), bot_digest64("ba", 2));
	/* splitmix64 finaliser of 0 is 0; of 1 a known value. */
	ck_assert_uint_eq(bot_mix64(0), 0);
	ck_assert_uint_eq(bot_mix64(1), 0x5692161d100b05e5ULL);
	ck_assert_uint_eq(bot_rng(1, 2, 3, 4), bot_mix64(bot_mix64(bot_mix64(1 ^ 2) ^ 3) ^ 4));
	ck_assert_uint_lt(bot_probe_bucket(1, 2, 3, 4), 256);
}
END_TEST

/* ---- plan --------------------------------------------------------------- */

START_TEST(test_plan_check)
{
	struct bot_plan p;

	memset(&p, 0, sizeof(p));
	p.exploit = 5;
	ck_assert_int_eq(bot_plan_check(&p), 0);
	p.exploit = BOT_ARM_AUTO;
	ck_assert_int_eq(bot_plan_check(&p), 0);
	p.exploit = 21;
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.exploit = 0;
	p.nprobe = 2;
	p.probe[0] = (struct bot_probe){ 1, 0, 10 };
	p.probe[1] = (struct bot_probe){ 2, 10, 256 };
	ck_assert_int_eq(bot_plan_check(&p), 0);
	ck_assert_int_eq(bot_plan_arm(&p, 0), 1);
	ck_assert_int_eq(bot_plan_arm(&p, 9), 1);
	ck_assert_int_eq(bot_plan_arm(&p, 10), 2);
	ck_assert_int_eq(bot_plan_arm(&p, 255), 2);
	p.probe[1].lo = 9;	/* overlap */
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.probe[1].lo = 10;
	p.probe[1].hi = 257;	/* out of range */
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.probe[1].hi = 10;	/* empty */
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.probe[1].hi = 20;
	p.probe[1].arm = 30;	/* bad arm */
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.probe[1].arm = 3;
	p.nprobe = 5;
	ck_assert_int_ne(bot_plan_check(&p), 0);
	p.nprobe = 2;
	ck_assert_int_eq(bot_plan_arm(&p, 100), 0);
	ck_assert_int_ne(bot_plan_check(NULL), 0);
}
END_TEST

/* ---- stats -------------------------------------------------------------- */

static int same_stats(const struct bot_stats *a, const struct bot_stats *b)
{
	if (a->n != b->n || a->sum_q != b->sum_q || a->sumsq_q != b->sumsq_q ||
	    a->nbins != b->nbins)
		return 0;
	for (uint32_t i = 0; i < a->nbins; i++)
		if (a->bins[i].bin != b->bins[i].bin || a->bins[i].count != b->bins[i].count)
			return 0;
	return 1;
}

START_TEST(test_q)
{
	ck_assert_int_eq(bot_q_from_ns(1), 0);
	ck_assert_int_eq(bot_q_from_ns(2), 64);
	ck_assert_int_eq(bot_q_from_ns(1024), 640);
	ck_assert_int_eq(bot_q_from_ns(1000), 638);	/* 64*log2(1000) = 637.8 */
	ck_assert_int_eq(bot_q_from_us(1), 638);
	ck_assert_int_eq(bot_q_from_ns(0), -1);
	ck_assert_int_eq(bot_q_from_ns(-5), -1);
	ck_assert_int_eq(bot_q_from_ns(NAN), -1);
	ck_assert_int_eq(bot_q_from_ns(INFINITY), BOT_Q_MAX);
	ck_assert_int_eq(bot_q_from_ns(0x1p50), BOT_Q_MAX);
	ck_assert_int_eq(bot_q_from_ns(0.5), 0);
	ck_assert(fabs(bot_us_from_q(640) - 1.024) < 1e-12);
}
END_TEST

START_TEST(test_stats_merge)
{
	struct bot_stats a, b, ab, ba, all;
	uint64_t sum = 0, sumsq = 0;

	bot_stats_init(&a);
	bot_stats_init(&b);
	bot_stats_init(&ab);
	bot_stats_init(&ba);
	bot_stats_init(&all);
	for (int i = 0; i < 200; i++) {
		int q = 600 + (int)(bot_mix64((uint64_t)i) % 97);

		ck_assert_int_eq(bot_stats_add_q(i % 3 ? &a : &b, q, 1), 0);
		ck_assert_int_eq(bot_stats_add_q(&all, q, 1), 0);
		sum += (uint64_t)q;
		sumsq += (uint64_t)q * (uint64_t)q;
	}
	ck_assert_int_eq(bot_stats_merge(&ab, &a), 0);
	ck_assert_int_eq(bot_stats_merge(&ab, &b), 0);
	ck_assert_int_eq(bot_stats_merge(&ba, &b), 0);
	ck_assert_int_eq(bot_stats_merge(&ba, &a), 0);
	ck_assert(same_stats(&ab, &ba));
	ck_assert(same_stats(&ab, &all));
	ck_assert_uint_eq(all.n, 200);
	ck_assert_uint_eq(all.sum_q, sum);
	ck_assert_uint_eq(all.sumsq_q, sumsq);
	for (uint32_t i = 1; i < all.nbins; i++)
		ck_assert_uint_lt(all.bins[i - 1].bin, all.bins[i].bin);
	/* Merging an empty one changes nothing; copy is equal. */
	bot_stats_free(&ba);
	ck_assert_int_eq(bot_stats_merge(&ab, &ba), 0);
	ck_assert(same_stats(&ab, &all));
	ck_assert_int_eq(bot_stats_copy(&ba, &ab), 0);
	ck_assert(same_stats(&ba, &ab));
	/* Bad q is refused. */
	ck_assert_int_ne(bot_stats_add_q(&a, -1, 1), 0);
	ck_assert_int_ne(bot_stats_add_q(&a, BOT_Q_MAX + 1, 1), 0);
	bot_stats_free(&a);
	bot_stats_free(&b);
	bot_stats_free(&ab);
	bot_stats_free(&ba);
	bot_stats_free(&all);
}
END_TEST

START_TEST(test_stats_decay)
{
	struct bot_stats s, a, b;
	unsigned alive = 0, same = 1;
	uint64_t total = 0;

	/* a count that loses a sample or more on average is rounded down
	 * (33 / 2 = 16); exact fractions are exact */
	bot_stats_init(&s);
	bot_stats_add_q(&s, 100, 33);
	bot_stats_add_q(&s, 200, 10);
	bot_stats_decay(&s, 1, 2, 7);
	ck_assert_uint_eq(s.nbins, 2);
	ck_assert_uint_eq(s.bins[0].count, 16);
	ck_assert_uint_eq(s.bins[1].count, 5);
	ck_assert_uint_eq(s.n, 21);
	ck_assert_uint_eq(s.sum_q, 16 * 100 + 5 * 200);
	ck_assert_uint_eq(s.sumsq_q, 16 * 10000 + 5 * 40000);
	bot_stats_decay(&s, 1, 1, 8);	/* no-op */
	ck_assert_uint_eq(s.n, 21);
	/* Below that, rounded up with the chance of its fraction: 2,000 bins
	 * of one sample keep 15/16 on average (1,875; rounded down, none of
	 * them survived); the same histogram and nonce decay alike, another
	 * nonce differently; over 40 decays a sparse arm follows
	 * 2000 x (15/16)^k, 151 after 40, as its calls do */
	bot_stats_init(&a);
	bot_stats_init(&b);
	for (int q = 0; q < 2000; q++) {
		ck_assert_int_eq(bot_stats_add_q(&a, q, 1), 0);
		ck_assert_int_eq(bot_stats_add_q(&b, q, 1), 0);
	}
	bot_stats_decay(&a, 15, 16, 1);
	bot_stats_decay(&b, 15, 16, 1);
	ck_assert_uint_eq(a.n, b.n);
	for (uint32_t i = 0; i < a.nbins; i++)
		same &= a.bins[i].bin == b.bins[i].bin;
	ck_assert(same);
	ck_assert_msg(a.n > 1875 - 40 && a.n < 1875 + 40, "%llu of 2000 kept", (unsigned long long)a.n);
	bot_stats_free(&b);
	bot_stats_init(&b);
	for (int q = 0; q < 2000; q++)
		ck_assert_int_eq(bot_stats_add_q(&b, q, 1), 0);
	bot_stats_decay(&b, 15, 16, 2);
	same = a.nbins == b.nbins;
	for (uint32_t i = 0; same && i < a.nbins; i++)
		same &= a.bins[i].bin == b.bins[i].bin;
	ck_assert(!same);
	for (uint64_t k = 2; k <= 40; k++)
		bot_stats_decay(&a, 15, 16, k);
	total = a.n;
	ck_assert_msg(total > 115 && total < 190, "%llu kept after 40 decays (151 expected)",
		      (unsigned long long)total);
	/* A histogram that one decay left as it was decays again at the
	 * next (the nonce differs): 4,096 arms of one sample each, decayed
	 * 64 times, keep (15/16)^64 = 1.6 % (66) */
	for (uint64_t h = 0; h < 4096; h++) {
		bot_stats_free(&b);
		bot_stats_init(&b);
		ck_assert_int_eq(bot_stats_add_q(&b, (int)(h % 2560), 1), 0);
		for (uint64_t k = 1; k <= 64; k++)
			bot_stats_decay(&b, 15, 16, bot_mix64(h) + k);
		alive += b.n > 0;
	}
	ck_assert_msg(alive > 30 && alive < 110, "%u of 4096 alive after 64 decays (66 expected)", alive);
	bot_stats_free(&a);
	bot_stats_free(&b);
	/* the caps' scaling rounds every count down: 10 bins of one sample
	 * to 5 of 10 keep none, never more than the allowance */
	bot_stats_free(&s);
	bot_stats_init(&s);
	for (int q = 0; q < 10; q++)
		ck_assert_int_eq(bot_stats_add_q(&s, q, 1), 0);
	bot_stats_scale_down(&s, 5, 10);
	ck_assert_uint_eq(s.n, 0);
	bot_stats_decay(&s, 0, 1, 9);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(s.nbins, 0);
	ck_assert(isnan(bot_stats_robust_q(&s, NULL)));
	ck_assert_int_eq(bot_stats_median_q(&s), -1);
	bot_stats_free(&s);
}
END_TEST

START_TEST(test_stats_robust)
{
	struct bot_stats s;
	uint64_t used;
	double loc, sd, want, sd2;

	bot_stats_init(&s);
	bot_stats_add_q(&s, 700, 10);
	bot_stats_add_q(&s, 702, 10);
	ck_assert_int_eq(bot_stats_median_q(&s), 700);	/* lower median */
	/* The location is the q of the arithmetic mean latency, not the mean
	 * q: (2^(700/64) + 2^(702/64)) / 2, slightly above 701. */
	want = 700 + 64 * log2((1 + exp2(2.0 / 64)) / 2);
	ck_assert(want > 701 && want < 701.01);
	ck_assert(fabs(bot_stats_robust_q(&s, &used) - want) < 1e-9);
	ck_assert_uint_eq(used, 20);
	/* Outliers ten and twenty times slower, and one five times faster, are
	 * outside the window (a factor of four). */
	bot_stats_add_q(&s, 700 + 213, 2);
	bot_stats_add_q(&s, 700 + 277, 1);
	bot_stats_add_q(&s, 700 - 150, 1);
	ck_assert(fabs(bot_stats_robust_q(&s, &used) - want) < 1e-9);
	ck_assert_uint_eq(used, 20);
	ck_assert(fabs(bot_stats_robust_sd_q(&s) - sqrt(20.0 / 19.0)) < 1e-12);
	bot_stats_robust(&s, &loc, &sd, &used);
	ck_assert(fabs(loc - want) < 1e-9);
	ck_assert(fabs(sd - sqrt(20.0 / 19.0)) < 1e-12);
	ck_assert_uint_eq(used, 20);
	/* A slow sample within the window counts in the mean and the spread:
	 * one at 3.9x moves the mean latency by (3.9 - 1.01) / 21. */
	bot_stats_add_q(&s, 700 + 126, 1);
	bot_stats_robust(&s, &loc, &sd2, &used);
	ck_assert_uint_eq(used, 21);
	ck_assert(fabs(loc - (700 + 64 * log2((10 + 10 * exp2(2.0 / 64) + exp2(126.0 / 64)) / 21))) < 1e-9);
	ck_assert(sd2 > 5 * sd);
	/* The mean spread is the coefficient of variation of 2^(q/64) over the
	 * window, in q units; the slow sample weighs more on it than on the
	 * spread of q (it moves a mean more than a log). */
	{
		double x[3] = { 1, exp2(2.0 / 64), exp2(126.0 / 64) }, k[3] = { 10, 10, 1 };
		double m = 0, v = 0, msd, l2, s2;
		uint64_t u2;

		for (int i = 0; i < 3; i++)
			m += k[i] * x[i] / 21;
		for (int i = 0; i < 3; i++)
			v += k[i] * (x[i] - m) * (x[i] - m) / 20;
		bot_stats_robust_mean(&s, &l2, &s2, &msd, &u2);
		ck_assert(fabs(l2 - loc) < 1e-12 && s2 == sd2 && u2 == 21);
		ck_assert(fabs(msd - 64 / log(2.0) * sqrt(v) / m) < 1e-9);
		ck_assert(msd > 1.3 * sd2);
	}
	/* The window edge (+-128) is inclusive. */
	bot_stats_add_q(&s, 700 + 128, 1);
	ck_assert_uint_eq((bot_stats_robust_q(&s, &used), used), 22);
	ck_assert(fabs(bot_stats_robust_us(&s) - bot_us_from_q(bot_stats_robust_q(&s, NULL))) < 1e-12);
	bot_stats_free(&s);
	bot_stats_add_q(&s, 640, 1);
	ck_assert_double_eq(bot_stats_robust_sd_q(&s), 0);
	{
		double msd = -1;

		bot_stats_robust_mean(&s, NULL, NULL, &msd, NULL);
		ck_assert_double_eq(msd, 0);	/* below two samples */
	}
	ck_assert(fabs(bot_stats_robust_us(&s) - 1.024) < 1e-9);
	/* Negative offsets below the median use the table too. */
	bot_stats_add_q(&s, 640 - 65, 1);
	ck_assert_int_eq(bot_stats_median_q(&s), 575);
	ck_assert(fabs(bot_stats_robust_q(&s, NULL) - (575 + 64 * log2((1 + exp2(65.0 / 64)) / 2))) < 1e-9);
	bot_stats_free(&s);
}
END_TEST

/* The robust summary bit for bit against its definition computed the slow
 * way (libm per bin, a second pass for the spread): the planner's numbers,
 * and the replay's, must not move when the summary is made faster. */
START_TEST(test_stats_robust_bits)
{
	uint64_t h = 99;

	for (int t = 0; t < 300; t++) {
		struct bot_stats s;
		uint64_t used, c = 0;
		double loc, sd, sum = 0, ref_loc = NAN, ref_sd = 0;
		int64_t s1 = 0, s2 = 0;
		int m;

		bot_stats_init(&s);
		for (int k = 0; k < 1 + t % 40; k++) {
			h = bot_mix64(h + 1);
			bot_stats_add_q(&s, 600 + (int)(h % 400), 1 + (uint32_t)(h >> 60));
		}
		m = bot_stats_median_q(&s);
		for (uint32_t i = 0; i < s.nbins; i++) {
			int64_t d = (int64_t)s.bins[i].bin - m, k = s.bins[i].count;

			if (d < -BOT_MEAN_TRIM_Q || d > BOT_MEAN_TRIM_Q)
				continue;
			c += (uint64_t)k;
			s1 += k * d;
			s2 += k * d * d;
			sum += (double)s.bins[i].count * exp2((double)d / 64.0);
		}
		if (c)
			ref_loc = m + 64.0 * log2(sum / (double)c);
		if (c > 1) {
			double v = ((double)s2 - (double)s1 * (double)s1 / (double)c) / (double)(c - 1);

			ref_sd = v > 0 ? sqrt(v) : 0;
		}
		bot_stats_robust(&s, &loc, &sd, &used);
		ck_assert_uint_eq(used, c);
		ck_assert_mem_eq(&loc, &ref_loc, sizeof(loc));
		ck_assert_mem_eq(&sd, &ref_sd, sizeof(sd));
		bot_stats_free(&s);
	}
}
END_TEST

/* ---- kb ----------------------------------------------------------------- */

START_TEST(test_kb)
{
	struct bot_kb *kb = bot_kb_new(), *c;
	float pr[BOT_NARMS];
	size_t n = 0;

	ck_assert_ptr_nonnull(kb);
	for (int a = 0; a < BOT_NARMS; a++)
		pr[a] = a % 2 ? -1.0f : 10.0f + a;
	for (unsigned i = 0; i < 1000; i++) {
		uint64_t k = bot_ctx_key(i % 5, 40 + (i / 5) % 100, 8 * (1 + i / 500), 1 + i / 500);

		ck_assert_int_eq(bot_kb_set_prior(kb, k, pr), 0);
		ck_assert_int_eq(bot_kb_add_us(kb, k, 2, 5.0 + i % 7), 0);
	}
	ck_assert_uint_eq(bot_kb_count(kb), 1000);
	for (size_t i = 0; i < bot_kb_count(kb); i++) {
		const struct bot_kb_ctx *x = bot_kb_at(kb, i);

		ck_assert_ptr_eq(bot_kb_find(kb, x->key), x);
		ck_assert_int_eq(x->has_prior, 1);
		ck_assert_uint_eq(x->arm[2].n, 1);
		ck_assert(x->prior[1] < 0);
	}
	ck_assert_uint_eq(bot_kb_at(kb, 0)->key, bot_ctx_key(0, 40, 8, 1));
	ck_assert_ptr_null(bot_kb_at(kb, 1000));
	ck_assert_ptr_null(bot_kb_find(kb, 12345));
	ck_assert_int_ne(bot_kb_add_us(kb, 1, 21, 1.0), 0);
	ck_assert_int_ne(bot_kb_add_us(kb, 1, 0, 0), 0);
	ck_assert_int_ne(bot_kb_add_us(kb, 1, 0, NAN), 0);
	ck_assert_int_ne(bot_kb_add_us(kb, 1, 0, INFINITY), 0);
	/* Clone is deep and keeps order. */
	c = bot_kb_clone(kb);
	ck_assert_ptr_nonnull(c);
	bot_kb_add_us(kb, bot_kb_at(kb, 3)->key, 2, 99.0);
	ck_assert_uint_eq(bot_kb_at(c, 3)->arm[2].n, 1);
	ck_assert_uint_eq(bot_kb_at(kb, 3)->arm[2].n, 2);
	for (size_t i = 0; i < bot_kb_count(c); i++)
		ck_assert_uint_eq(bot_kb_at(c, i)->key, bot_kb_at(kb, i)->key);
	/* Scale peers: allreduce bucket 44 at 1 and 2 nodes (i = 24, 524). */
	for (size_t i = bot_kb_peer_first(c, bot_ctx_key(4, 44, 64, 64)); i != BOT_KB_NONE;
	     i = bot_kb_peer_next(c, i)) {
		ck_assert_uint_eq(bot_key_coll(bot_kb_at(c, i)->key), 4);
		ck_assert_uint_eq(bot_kb_bpr_bucket(bot_kb_at(c, i)->key), 44);
		n++;
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(bot_kb_bpr_bucket(bot_ctx_key(BOT_COLL_ALLGATHER, 80, 16, 2)), 64);
	/* Decay: two bins of one sample, halved (each kept with chance 1/2,
	 * test_stats_decay), then all gone */
	bot_kb_decay(kb, 1, 2, 1);
	ck_assert_uint_le(bot_kb_at(kb, 3)->arm[2].n, 2);
	bot_kb_decay(kb, 0, 1, 2);
	ck_assert_uint_eq(bot_kb_at(kb, 3)->arm[2].n, 0);
	bot_kb_free(kb);
	bot_kb_free(c);
	bot_kb_free(NULL);
}
END_TEST

/* ---- policies ----------------------------------------------------------- */

#define KEY bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 64, 8)
#define BAD_ARM 8	/* collnet_direct/simple: unsupported, great fake data */

static const int arms_used[] = { 0, 1, 2, 3, 4, 5, 18, 20 };

/* A context's calls as a state holds them (formats.md 12): every rank's
 * summaries added, so a communicator's `calls` count nRanks times. */
static void add_calls(struct bot_kb *kb, uint64_t key, uint64_t calls)
{
	ck_assert_int_eq(bot_kb_add_calls(kb, key, calls * bot_key_nranks(key)), 0);
}

/* A context: AUTO thinks tree/ll (0) is best at 10 us. */
static void fill_prior(float pr[BOT_NARMS])
{
	for (int a = 0; a < BOT_NARMS; a++)
		pr[a] = -1.0f;
	pr[0] = 10.0f;
	pr[1] = 11.0f;
	pr[2] = 14.0f;
	pr[3] = 16.0f;
	pr[4] = 13.0f;
	pr[5] = 12.0f;
	pr[18] = 25.0f;
	pr[20] = 60.0f;
}

/* True latencies: ring/simple (5) is 30 % faster than tree/ll; optionally
 * tree/ll is much slower than AUTO thinks. */
static double truth(int arm, int auto_bad)
{
	switch (arm) {
	case 0: return auto_bad ? 16.0 : 10.0;
	case 1: return 14.0;	/* worse than AUTO thinks (11) */
	case 2: return 13.0;
	case 3: return 17.0;
	case 4: return 12.5;
	case 5: return 7.0;
	case 18: return 26.0;
	case 20: return 50.0;
	default: return 1.0;
	}
}

static double noisy(double us, uint64_t i)
{
	return us * (1.0 + 0.02 * ((double)(bot_mix64(i) % 1001) / 1000.0 - 0.5));
}

/* n samples of arm in context key: noisy(us, first), noisy(us, first + 1), ... */
static void add_noisy(struct bot_kb *kb, uint64_t key, int arm, int n, double us, uint64_t first)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(bot_kb_add_us(kb, key, arm, noisy(us, first + (uint64_t)i)), 0);
}

static struct bot_kb *make_kb(void)
{
	struct bot_kb *kb = bot_kb_new();
	float pr[BOT_NARMS];

	fill_prior(pr);
	ck_assert_ptr_nonnull(kb);
	ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
	/* The unsupported arm looks wonderful. */
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(bot_kb_add_us(kb, KEY, BAD_ARM, 0.5), 0);
	return kb;
}

static int arm_ok(int arm)
{
	if (arm == BOT_ARM_AUTO)
		return 1;
	for (unsigned i = 0; i < sizeof(arms_used) / sizeof(arms_used[0]); i++)
		if (arm == arms_used[i])
			return 1;
	return 0;
}

static void check_plan_arms(const struct bot_plan *p)
{
	ck_assert_int_eq(bot_plan_check(p), 0);
	ck_assert_msg(arm_ok(p->exploit), "exploit %d", p->exploit);
	for (unsigned i = 0; i < p->nprobe; i++)
		ck_assert_msg(arm_ok(p->probe[i].arm), "probe %d", p->probe[i].arm);
}

/* Run `rounds` rounds of ncomms communicators, each adding `per` samples of
 * its arm. Returns the final plan. */
static void run_loop_calls(const struct bot_policy *p, struct bot_kb *kb, unsigned rounds,
			   unsigned ncomms, unsigned calls, unsigned per, int auto_bad,
			   struct bot_plan *last)
{
	for (unsigned r = 0; r < rounds; r++) {
		struct bot_shape s = { 42, ncomms, calls, r, 0 };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(p, kb, KEY, &s, &pl), 0);
		check_plan_arms(&pl);
		for (unsigned c = 0; c < ncomms; c++) {
			uint64_t comm = 1000 * r + c;
			int arm = bot_plan_arm(&pl, bot_probe_bucket(42, comm, KEY, ncomms > 1 ? 0 : r));

			if (arm == BOT_ARM_AUTO)
				arm = 0;
			for (unsigned k = 0; k < per; k++)
				ck_assert_int_eq(bot_kb_add_us(kb, KEY, arm,
							       noisy(truth(arm, auto_bad), comm * 31 + k)), 0);
		}
		/* the round's calls: safe exploration's samples-to-calls rate */
		add_calls(kb, KEY, (uint64_t)ncomms * calls);
	}
	if (last) {
		struct bot_shape s = { 42, ncomms, calls, rounds, 0 };

		ck_assert_int_eq(bot_policy_plan(p, kb, KEY, &s, last), 0);
	}
}

/* Rounds of 100 calls per communicator (a lump whenever a probe happens). */
static void run_loop(const struct bot_policy *p, struct bot_kb *kb, unsigned rounds,
		     unsigned ncomms, unsigned per, int auto_bad, struct bot_plan *last)
{
	run_loop_calls(p, kb, rounds, ncomms, 100, per, auto_bad, last);
}

static int learns(int id)
{
	return id != BOT_POLICY_AUTO && id != BOT_POLICY_SWEEP && id != BOT_POLICY_GREEDY_COLD &&
	       id != BOT_POLICY_GREEDY && id != BOT_POLICY_FROZEN && id != BOT_POLICY_GREEDY_FREE;
}

static int warm(int id)
{
	return id == BOT_POLICY_GREEDY || id == BOT_POLICY_EGREEDY || id == BOT_POLICY_UCB1 ||
	       id == BOT_POLICY_THOMPSON || id == BOT_POLICY_FROZEN || id == BOT_POLICY_SHADOW ||
	       id == BOT_POLICY_GREEDY_FREE || id == BOT_POLICY_EGREEDY_FREE ||
	       id == BOT_POLICY_UCB1_FREE || id == BOT_POLICY_THOMPSON_FREE;
}

static int budget_free(int id)
{
	return id == BOT_POLICY_GREEDY_FREE || id == BOT_POLICY_EGREEDY_FREE ||
	       id == BOT_POLICY_UCB1_FREE || id == BOT_POLICY_THOMPSON_FREE;
}

/* Stateless arm restriction: an NVLS arm that is supported and looks far
 * better is never planned while AUTO picks another algorithm, unless the
 * allow-list names it. */
START_TEST(test_policy_allow_list)
{
	const int nvls = bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	struct bot_policy p;
	int seen = 0;

	ck_assert(!bot_arm_allowed(nvls, 0, 0));
	ck_assert(bot_arm_allowed(nvls, bot_arm(BOT_ALGO_NVLS, BOT_PROTO_LL), 0));
	ck_assert(bot_arm_allowed(nvls, 0, 1u << nvls));
	ck_assert(bot_arm_allowed(bot_arm(BOT_ALGO_PAT, BOT_PROTO_SIMPLE), 0, 0));
	ck_assert(!bot_arm_allowed(BOT_NARMS, 0, ~0u));
	/* the NVLS family: AUTO on NVLS_TREE allows NVLS and the other way
	 * round; CollNet Direct and Chain stay apart, and neither joins NVLS */
	ck_assert(bot_arm_allowed(nvls, bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE), 0));
	ck_assert(bot_arm_allowed(bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128), nvls, 0));
	ck_assert(!bot_arm_allowed(bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE),
				   bot_arm(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_SIMPLE), 0));
	ck_assert(!bot_arm_allowed(bot_arm(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_SIMPLE),
				   bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE), 0));
	ck_assert(!bot_arm_allowed(nvls, bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE), 0));
	ck_assert(!bot_arm_allowed(bot_arm(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_LL),
				   bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE), 0));
	ck_assert_uint_eq(bot_arm_family_mask(bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL)),
			  7u << 12 | 7u << 15);
	ck_assert_uint_eq(bot_arm_family_mask(bot_arm(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_LL)), 7u << 9);
	ck_assert_uint_eq(bot_arm_family_mask(BOT_ARM_AUTO), 0);
	for (int a = 0; a < BOT_NARMS; a++)
		for (int x = 0; x < BOT_NARMS; x++)
			ck_assert_int_eq(bot_arm_allowed(a, x, 0),
					 bot_arm_allowed(a, -1, 0) || ((bot_arm_family_mask(x) >> a) & 1));
	for (int allow = 0; allow < 2; allow++) {
		ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
		p.allow = allow ? 1u << nvls : 0;
		for (unsigned nc = 1; nc <= 8; nc *= 8) {
			struct bot_kb *kb = bot_kb_new();
			float pr[BOT_NARMS];

			fill_prior(pr);
			pr[nvls] = 12.0f;
			ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
			/* AUTO's arm measured too: without it nothing is known to
			 * beat AUTO, and the budgeted policies stay with it */
			for (int k = 0; k < 20; k++) {
				ck_assert_int_eq(bot_kb_add_us(kb, KEY, nvls, 2.0), 0);
				ck_assert_int_eq(bot_kb_add_us(kb, KEY, 0, 10.0), 0);
			}
			for (uint64_t r = 0; r < 30; r++) {
				struct bot_shape s = { 5, nc, 100, r, 0 };
				struct bot_plan pl;

				ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
				if (pl.exploit == nvls)
					seen |= 1 << allow;
				for (unsigned i = 0; i < pl.nprobe; i++)
					if (pl.probe[i].arm == nvls)
						seen |= 1 << allow;
			}
			bot_kb_free(kb);
		}
	}
	ck_assert_msg(!(seen & 1), "%s planned a forbidden NVLS arm", bot_policy_name(_i));
	/* Without feedback, only the warm policies are sure to reach it. */
	if (warm(_i))
		ck_assert_msg(seen & 2, "%s never used an allow-listed arm", bot_policy_name(_i));
}
END_TEST

/* Arms the ranks cannot measure (bot_arm_measurable: CollNet, NVLS across
 * nodes; the profiler reports no channels for them) are never forced
 * without samples: a probe of one would be paid in every job and never
 * learned from. On one node NVLS is measurable, and the same plan reaches
 * it (so that the test can fail). */
static unsigned unmeasurable_uses(int id, uint32_t nnodes, int samples)
{
	const int nvls = bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	const int nvls_tree = bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE);
	const int cn = bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE);
	uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 64, nnodes);
	struct bot_policy p;
	unsigned uses = 0;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(id)), 0);
	p.allow = 1u << cn;		/* the admin's opt-in */
	for (unsigned nc = 1; nc <= 8; nc *= 8) {
		struct bot_kb *kb = bot_kb_new();
		float pr[BOT_NARMS];

		for (int a = 0; a < BOT_NARMS; a++)
			pr[a] = -1.0f;
		pr[nvls_tree] = 10.0f;	/* AUTO */
		pr[nvls] = 10.5f;
		pr[cn] = 10.4f;
		pr[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] = 30.0f;
		ck_assert_int_eq(bot_kb_set_prior(kb, key, pr), 0);
		ck_assert_int_eq(bot_kb_add_calls(kb, key, 1000000ull * 64), 0);
		for (int k = 0; k < 40; k++)	/* AUTO's arm, measured */
			ck_assert_int_eq(bot_kb_add_us(kb, key, nvls_tree, 10.0), 0);
		for (int k = 0; k < 20 && samples; k++) {
			ck_assert_int_eq(bot_kb_add_us(kb, key, nvls, 5.0), 0);
			ck_assert_int_eq(bot_kb_add_us(kb, key, cn, 5.0), 0);
		}
		for (uint64_t r = 0; r < 40; r++) {
			struct bot_shape s = { 5, nc, 100, r, 0 };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, key, &s, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			for (unsigned i = 0; i < pl.nprobe; i++)
				uses += pl.probe[i].arm == nvls || pl.probe[i].arm == cn;
			if (!samples)
				uses += pl.exploit == nvls || pl.exploit == cn;
		}
		bot_kb_free(kb);
	}
	return uses;
}

START_TEST(test_policy_unmeasurable)
{
	ck_assert(!bot_arm_measurable(bot_arm(BOT_ALGO_NVLS, BOT_PROTO_LL), 2));
	ck_assert(bot_arm_measurable(bot_arm(BOT_ALGO_NVLS, BOT_PROTO_LL), 1));
	ck_assert(bot_arm_measurable(bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL), 8));
	ck_assert(!bot_arm_measurable(bot_arm(BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_SIMPLE), 1));
	ck_assert(!bot_arm_measurable(bot_arm(BOT_ALGO_COLLNET_DIRECT, BOT_PROTO_SIMPLE), 4));
	ck_assert(bot_arm_measurable(bot_arm(BOT_ALGO_RING, BOT_PROTO_LL), 64));
	ck_assert(!bot_arm_measurable(BOT_NARMS, 1));
	/* across nodes: neither probed nor exploited without samples, nor
	 * probed with them (an import's) */
	ck_assert_uint_eq(unmeasurable_uses(_i, 8, 0), 0);
	ck_assert_uint_eq(unmeasurable_uses(_i, 8, 1), 0);
}
END_TEST

/* A context whose AUTO is unmeasurable (NVLS across nodes, picked by NCCL)
 * and unmeasured: nothing a probe measures could ever be judged against
 * it, so the budgeted policies spend nothing there, whatever the prior
 * says of NVLS_TREE; with AUTO's arm measured (an import) they do probe. */
static unsigned probes_beside_unmeasurable_auto(int id, int auto_samples)
{
	const int nvls = bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	const int nvls_tree = bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_SIMPLE);
	uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 64, 8);
	struct bot_policy p;
	struct bot_kb *kb = bot_kb_new();
	float pr[BOT_NARMS];
	unsigned probes = 0;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(id)), 0);
	for (int a = 0; a < BOT_NARMS; a++)
		pr[a] = -1.0f;
	pr[nvls] = 10.0f;	/* AUTO */
	pr[nvls_tree] = 10.2f;
	pr[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] = 10.4f;
	ck_assert_int_eq(bot_kb_set_prior(kb, key, pr), 0);
	ck_assert_int_eq(bot_kb_add_calls(kb, key, 1000000ull * 64), 0);
	for (int k = 0; k < 40 && auto_samples; k++)
		ck_assert_int_eq(bot_kb_add_us(kb, key, nvls, 10.0), 0);
	for (uint64_t r = 0; r < 40; r++) {
		struct bot_shape s = { 5, 8, 500, r, 0 };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(&p, kb, key, &s, &pl), 0);
		for (unsigned i = 0; i < pl.nprobe; i++)
			probes += pl.probe[i].arm != BOT_ARM_AUTO;
		probes += pl.exploit != BOT_ARM_AUTO;
	}
	bot_kb_free(kb);
	return probes;
}

START_TEST(test_policy_unmeasurable_auto)
{
	struct bot_policy p;
	unsigned with = 0;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	if (_i == BOT_POLICY_AUTO || _i == BOT_POLICY_SWEEP || !isfinite(p.par.budget))
		return;
	ck_assert_uint_eq(probes_beside_unmeasurable_auto(_i, 0), 0);
	with = probes_beside_unmeasurable_auto(_i, 1);
	if (_i == BOT_POLICY_THOMPSON)
		ck_assert_uint_gt(with, 0);	/* so that the test can fail */
}
END_TEST

/* The same plans on one node, where NVLS is measurable, do use it. */
START_TEST(test_policy_unmeasurable_can_fail)
{
	ck_assert_uint_gt(unmeasurable_uses(BOT_POLICY_SWEEP, 1, 0), 0);
	ck_assert_uint_gt(unmeasurable_uses(BOT_POLICY_THOMPSON_FREE, 1, 0), 0);
}
END_TEST

START_TEST(test_policy_registry)
{
	struct bot_policy p;
	struct bot_policy_params g;

	for (int id = 0; id < BOT_NPOLICY; id++) {
		unsigned n = 0, dflt = 0;

		ck_assert_int_eq(bot_policy_parse(bot_policy_name(id)), id);
		ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(id)), 0);
		ck_assert_int_eq(p.id, id);
		/* the defaults are one of the grid's points: the replay's tuning
		 * keeps them unless a point beats them by its margin, and finds
		 * them by comparing the parameters */
		for (; bot_policy_grid(id, n, &g) == 0; n++)
			dflt += !memcmp(&g, &p.par, sizeof(g));
		ck_assert_uint_ge(n, 1);
		ck_assert_uint_le(n, 12);
		ck_assert_msg(dflt == 1, "%s: its defaults are %u of its %u grid points, want 1",
			      bot_policy_name(id), dflt, n);
	}
	ck_assert_int_eq(bot_policy_parse("Thompson-Cold"), BOT_POLICY_THOMPSON_COLD);
	ck_assert_int_eq(bot_policy_parse("nope"), -1);
	ck_assert_int_eq(bot_policy_init(&p, "nope"), -1);
	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	ck_assert_int_eq(bot_policy_set(&p, "share", 2), 0);
	ck_assert_double_eq(p.par.share, 2);
	ck_assert_int_eq(bot_policy_set(&p, "probe_frac", 2), -1);
	ck_assert_int_eq(bot_policy_set(&p, "bogus", 1), -1);
	ck_assert_int_eq(bot_policy_set(&p, "discount", NAN), -1);
	ck_assert_int_eq(bot_policy_set(&p, "budget", 0.05), 0);
	ck_assert_double_eq(p.par.budget, 0.05);
	/* the unbudgeted ones ignore a budget (a -free variant given one
	 * clipped until 2026-12-04, unlike what doc/policies.md says) */
	{
		static const char *const none[] = { "thompson-free", "greedy-free", "auto", "sweep" };

		for (unsigned i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
			ck_assert_int_eq(bot_policy_init(&p, none[i]), 0);
			ck_assert_int_eq(bot_policy_set(&p, "budget", 0.05), 0);
			ck_assert_msg(!isfinite(p.par.budget), "%s took a budget", none[i]);
		}
	}
	ck_assert_int_eq(bot_policy_grid(BOT_NPOLICY, 0, &g), -1);
}
END_TEST

START_TEST(test_policy_no_prior)
{
	struct bot_kb *kb = bot_kb_new();
	float none[BOT_NARMS];
	uint64_t k2 = bot_ctx_key(1, 80, 8, 1);
	struct bot_policy p;
	struct bot_plan pl;
	struct bot_shape s = { 1, 8, 10, 3, 0 };

	for (int a = 0; a < BOT_NARMS; a++)
		none[a] = -1.0f;
	bot_kb_add_us(kb, KEY, 5, 3.0);		/* data but no prior */
	bot_kb_set_prior(kb, k2, none);		/* prior with nothing supported */
	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	for (uint64_t key = KEY; ; key = k2) {
		memset(&pl, 0x55, sizeof(pl));
		ck_assert_int_eq(bot_policy_plan(&p, kb, key, &s, &pl), 0);
		ck_assert_uint_eq(pl.exploit, BOT_ARM_AUTO);
		ck_assert_uint_eq(pl.nprobe, 0);
		memset(&pl, 0x55, sizeof(pl));
		ck_assert_int_eq(bot_policy_plan(&p, kb, 777, &s, &pl), 0);
		ck_assert_uint_eq(pl.exploit, BOT_ARM_AUTO);
		ck_assert_uint_eq(pl.nprobe, 0);
		if (key == k2)
			break;
	}
	ck_assert_int_eq(bot_policy_plan(&p, NULL, KEY, &s, &pl), 0);
	ck_assert_uint_eq(pl.exploit, BOT_ARM_AUTO);
	ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, NULL, &pl), -1);
	ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, NULL), -1);
	ck_assert_int_eq(bot_prior_argmin(none), -1);
	bot_kb_free(kb);
}
END_TEST

START_TEST(test_policy_determinism)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb(), *c;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	run_loop(&p, kb, 6, 8, 3, 0, NULL);
	c = bot_kb_clone(kb);
	ck_assert_ptr_nonnull(c);
	for (unsigned nc = 1; nc <= 16; nc *= 4)
		for (uint64_t r = 0; r < 20; r++) {
			struct bot_shape s = { 9, nc, 100, r, 0 };
			struct bot_plan a, b;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &a), 0);
			for (int i = 0; i < 100; i++) {
				ck_assert_int_eq(bot_policy_plan(&p, i % 2 ? c : kb, KEY, &s, &b), 0);
				ck_assert(!memcmp(&a, &b, sizeof(a)));
			}
		}
	bot_kb_free(kb);
	bot_kb_free(c);
}
END_TEST

START_TEST(test_policy_unsupported)
{
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	for (unsigned nc = 1; nc <= 64; nc *= 8) {
		struct bot_kb *kb = make_kb();

		/* run_loop checks every plan's arms. */
		run_loop(&p, kb, nc == 1 ? 200 : 25, nc, 3, 1, NULL);
		bot_kb_free(kb);
	}
}
END_TEST

START_TEST(test_policy_warm_start)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb();
	struct bot_plan pl;
	float pr[BOT_NARMS];

	fill_prior(pr);
	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	for (uint64_t r = 0; r < 10; r++) {
		struct bot_shape s = { 3, 8, 100, r, 0 };

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
		check_plan_arms(&pl);
		/* the budgeted policies leave AUTO's arm to NCCL (BOT_ARM_AUTO),
		 * AUTO and the -free variants force it */
		if (warm(_i) || _i == BOT_POLICY_AUTO || _i == BOT_POLICY_GREEDY_COLD ||
		    _i == BOT_POLICY_UCB1_COLD || _i == BOT_POLICY_THOMPSON_COLD)
			ck_assert_int_eq(pl.exploit, _i == BOT_POLICY_AUTO || budget_free(_i) ?
					 bot_prior_argmin(pr) : BOT_ARM_AUTO);
	}
	bot_kb_free(kb);
}
END_TEST

START_TEST(test_policy_converges)
{
	struct bot_policy p;
	struct bot_plan pl;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	/* Weak explorers need enough exploration to meet the arm at all. */
	bot_policy_set(&p, "epsilon", 0.1);
	bot_policy_set(&p, "etc_rounds", 4);
	/* ... and the schedules and flat-belief policies more budget than 1 %
	 * to do it within these few rounds (their probes are not steered by
	 * the prior, so the budget clips most of them). */
	if (_i == BOT_POLICY_EGREEDY || _i == BOT_POLICY_ETC || _i == BOT_POLICY_UCB1_COLD ||
	    _i == BOT_POLICY_THOMPSON_COLD)
		bot_policy_set(&p, "budget", 0.1);
	/* Jobs: 8 communicators, a few samples each per round. */
	{
		struct bot_kb *kb = make_kb();
		int auto_bad = !learns(_i);

		run_loop(&p, kb, 30, 8, 3, auto_bad, &pl);
		if (learns(_i) || _i == BOT_POLICY_GREEDY || _i == BOT_POLICY_FROZEN)
			ck_assert_msg(pl.exploit == 5, "%s exploit %d", bot_policy_name(_i), pl.exploit);
		bot_kb_free(kb);
	}
	/* Per call: one communicator, immediate feedback. */
	{
		struct bot_kb *kb = make_kb();
		int auto_bad = !learns(_i);
		unsigned used5 = 0;

		/* one call a round, every call measured: per call for the
		 * budget too (a round of 100 calls on one communicator is a
		 * lump, and arms the worst-case lump rule holds back stay
		 * unmeasured there) */
		run_loop_calls(&p, kb, 300, 1, 1, 1, auto_bad, &pl);
		if (learns(_i) || _i == BOT_POLICY_GREEDY || _i == BOT_POLICY_FROZEN) {
			ck_assert_msg(pl.exploit == 5, "%s exploit %d", bot_policy_name(_i), pl.exploit);
			/* ... and mostly uses it afterwards. */
			for (uint64_t r = 300; r < 400; r++) {
				struct bot_shape s = { 42, 1, 1, r, 0 };

				bot_policy_plan(&p, kb, KEY, &s, &pl);
				used5 += bot_plan_arm(&pl, bot_probe_bucket(42, 7, KEY, r)) == 5;
			}
			ck_assert_msg(used5 >= 90, "%s used 5 %u times", bot_policy_name(_i), used5);
		}
		bot_kb_free(kb);
	}
	/* One communicator running rounds of 100 calls (a lump): the arms the
	 * worst-case lump rule holds back (rated 2.5x and 6x) stay unmeasured,
	 * and the learners still settle on arm 5. */
	{
		struct bot_kb *kb = make_kb();
		int auto_bad = !learns(_i);

		run_loop(&p, kb, 300, 1, 1, auto_bad, &pl);
		if (learns(_i) || _i == BOT_POLICY_GREEDY || _i == BOT_POLICY_FROZEN)
			ck_assert_msg(pl.exploit == 5, "%s exploit %d (rounds of 100 calls)",
				      bot_policy_name(_i), pl.exploit);
		bot_kb_free(kb);
	}
}
END_TEST

START_TEST(test_policy_outliers)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb();
	struct bot_plan pl;

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	run_loop(&p, kb, 30, 8, 3, 1, &pl);
	if (_i == BOT_POLICY_AUTO || _i == BOT_POLICY_SWEEP) {
		bot_kb_free(kb);
		return;
	}
	/* Make sure the good arm is well measured, then spoil it a little. */
	for (int i = 0; i < 40; i++)
		bot_kb_add_us(kb, KEY, 5, noisy(7.0, 5000 + (uint64_t)i));
	for (int i = 0; i < 40; i++)
		bot_kb_add_us(kb, KEY, 0, noisy(16.0, 6000 + (uint64_t)i));
	for (int i = 0; i < 6; i++)
		bot_kb_add_us(kb, KEY, 5, 140.0 + i);
	for (uint64_t r = 30; r < 60; r++) {
		struct bot_shape s = { 42, 8, 100, r, 0 };

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
		check_plan_arms(&pl);
		if (_i != BOT_POLICY_ETC || r >= 40)
			ck_assert_msg(pl.exploit == 5, "%s exploit %d", bot_policy_name(_i), pl.exploit);
	}
	bot_kb_free(kb);
}
END_TEST

START_TEST(test_policy_random_kbs)
{
	struct bot_policy p;
	uint64_t h = 0x1234 + (uint64_t)_i;
	struct bot_kb *okb = make_kb();
	struct bot_plan_memo *memo, *other = bot_plan_memo_new(okb);

	ck_assert_int_eq(bot_policy_init(&p, bot_policy_name(_i)), 0);
	ck_assert_ptr_nonnull(other);
	for (int t = 0; t < 60; t++) {
		struct bot_kb *kb = bot_kb_new();
		float pr[BOT_NARMS];

		for (int c = 0; c < 6; c++) {
			uint64_t key = bot_ctx_key((unsigned)(c % 2) * 4, 76 + 4 * (unsigned)(c / 2), 16, 2);

			for (int a = 0; a < BOT_NARMS; a++) {
				h = bot_mix64(h + 1);
				pr[a] = h % 3 == 0 ? -1.0f : (float)(1 + h % 1000) / 10.0f;
			}
			bot_kb_set_prior(kb, key, pr);
			for (int k = 0; k < 40; k++) {
				h = bot_mix64(h + 1);
				bot_kb_add_us(kb, key, (int)(h % BOT_NARMS), 0.01 + (double)(h >> 40) / 1e5);
			}
		}
		memo = bot_plan_memo_new(kb);
		ck_assert_ptr_nonnull(memo);
		for (int c = 0; c < 6; c++) {
			uint64_t key = bot_ctx_key((unsigned)(c % 2) * 4, 76 + 4 * (unsigned)(c / 2), 16, 2);
			const struct bot_kb_ctx *x = bot_kb_find(kb, key);

			for (uint64_t r = 0; r < 8; r++) {
				struct bot_shape s = { h, (uint32_t)(1u << r), r * 7, r, 0 };
				struct bot_plan pl, pm;

				ck_assert_int_eq(bot_policy_plan(&p, kb, key, &s, &pl), 0);
				ck_assert_int_eq(bot_plan_check(&pl), 0);
				/* A memo (warm from earlier keys, and one made for
				 * another kb, which is ignored) changes nothing. */
				ck_assert_int_eq(bot_policy_plan_memo(&p, kb, memo, key, &s, &pm), 0);
				ck_assert_mem_eq(&pm, &pl, sizeof(pl));
				ck_assert_int_eq(bot_policy_plan_memo(&p, kb, other, key, &s, &pm), 0);
				ck_assert_mem_eq(&pm, &pl, sizeof(pl));
				if (pl.exploit != BOT_ARM_AUTO)
					ck_assert(x->prior[pl.exploit] >= 0);
				/* a probe "AUTO" (left to NCCL) only while
				 * another arm is exploited (safe_clip) */
				for (unsigned i = 0; i < pl.nprobe; i++)
					ck_assert(pl.probe[i].arm == BOT_ARM_AUTO ?
						  pl.exploit != BOT_ARM_AUTO :
						  x->prior[pl.probe[i].arm] >= 0 &&
						  pl.probe[i].arm != pl.exploit);
			}
		}
		bot_plan_memo_free(memo);
		bot_kb_free(kb);
	}
	bot_plan_memo_free(other);
	bot_kb_free(okb);
}
END_TEST

START_TEST(test_policy_probes_shrink)
{
	/* Thompson explores at first and stops probing once it is sure
	 * (without the budget: with it, a first round of 8 communicators
	 * cannot afford one communicator's round on an unmeasured arm). */
	struct bot_policy p;
	struct bot_kb *kb = make_kb();
	struct bot_plan pl;
	struct bot_shape s = { 42, 8, 100, 0, 0 };
	unsigned w0 = 0, w1 = 0;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	bot_policy_plan(&p, kb, KEY, &s, &pl);
	ck_assert_uint_eq(pl.nprobe, 0);
	ck_assert_int_eq(bot_policy_init(&p, "thompson-free"), 0);
	bot_policy_plan(&p, kb, KEY, &s, &pl);
	for (unsigned i = 0; i < pl.nprobe; i++)
		w0 += pl.probe[i].hi - pl.probe[i].lo;
	run_loop(&p, kb, 40, 8, 5, 0, &pl);
	for (unsigned i = 0; i < pl.nprobe; i++)
		w1 += pl.probe[i].hi - pl.probe[i].lo;
	ck_assert_uint_gt(w0, 0);
	ck_assert_uint_lt(w1, w0);
	ck_assert_uint_le(w0, 128);
	bot_kb_free(kb);
}
END_TEST

START_TEST(test_policy_sweep_covers)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb();
	int seen[BOT_NARMS] = { 0 };

	ck_assert_int_eq(bot_policy_init(&p, "sweep"), 0);
	for (uint64_t r = 0; r < 2; r++) {
		struct bot_shape s = { 1, 8, 100, r, 0 };
		struct bot_plan pl;

		bot_policy_plan(&p, kb, KEY, &s, &pl);
		check_plan_arms(&pl);
		for (unsigned b = 0; b < 256; b++)
			seen[bot_plan_arm(&pl, b)] = 1;
	}
	for (unsigned i = 0; i < sizeof(arms_used) / sizeof(arms_used[0]); i++)
		ck_assert(seen[arms_used[i]]);
	bot_kb_free(kb);
}
END_TEST

/* Safe exploration: where AUTO's arm is the best and every other arm is
 * 40 % slower, the default policies' calls cost at most (1 + budget) of
 * AUTO's alone plus what the Gaussian bounds miss (here: 1.5 %). Jobs: 8 communicators, 5 samples each. */
START_TEST(test_safe_budget)
{
	static const char *const names[] = { "thompson", "ucb1", "egreedy", "thompson-free" };
	double cost[4];

	for (int v = 0; v < 4; v++) {
		struct bot_kb *kb = make_kb();
		struct bot_policy p;
		double c = 0, base = 0;

		ck_assert_int_eq(bot_policy_init(&p, names[v]), 0);
		for (unsigned r = 0; r < 40; r++) {
			struct bot_shape s = { 42, 8, 100, r, 0 };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
			for (unsigned k = 0; k < 8; k++) {
				uint64_t comm = 1000 * r + k;
				int arm = bot_plan_arm(&pl, bot_probe_bucket(42, comm, KEY, 0));
				double t = arm == 0 || arm == BOT_ARM_AUTO ? 10.0 : 14.0;

				if (arm == BOT_ARM_AUTO)
					arm = 0;
				c += 100 * t;
				base += 100 * 10.0;
				for (unsigned j = 0; j < 5; j++)
					ck_assert_int_eq(bot_kb_add_us(kb, KEY, arm, noisy(t, comm * 31 + j)), 0);
			}
			add_calls(kb, KEY, 800);
		}
		cost[v] = c / base - 1;
		bot_kb_free(kb);
	}
	for (int v = 0; v < 3; v++)
		ck_assert_msg(cost[v] <= 0.015, "%s spent %.4f", names[v], cost[v]);
	ck_assert_msg(cost[3] >= 0, "%s spent %.4f", names[3], cost[3]);
}
END_TEST

/* Savings pay for probes: with AUTO's arm alone measured, 1 % of 1,000
 * calls cannot pay one communicator's probe of the next arm (charged the
 * cost model's 1.1x, times 1.05); once an arm measured 40 % faster than
 * AUTO is exploited, its savings can. Without AUTO's own samples nothing
 * is known to beat AUTO: the budgeted policy stays with it (left to NCCL,
 * never forced). */
START_TEST(test_safe_savings)
{
	struct bot_policy p;
	struct bot_shape sh = { 42, 8, 100, 0, 0 };
	unsigned probes[2] = { 0, 0 };

	ck_assert_int_eq(bot_policy_init(&p, "egreedy"), 0);
	for (int v = 0; v < 2; v++) {
		struct bot_kb *kb = make_kb();

		for (int i = 0; i < 20; i++) {
			ck_assert_int_eq(bot_kb_add_us(kb, KEY, 0, noisy(10.0, (uint64_t)i)), 0);
			if (v)
				ck_assert_int_eq(bot_kb_add_us(kb, KEY, 5, noisy(6.0, (uint64_t)i + 99)), 0);
		}
		add_calls(kb, KEY, v ? 400 : 200);
		for (uint64_t r = 0; r < 16; r++) {
			struct bot_plan pl;

			sh.round = r;
			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(pl.exploit, v ? 5 : BOT_ARM_AUTO);
			probes[v] += pl.nprobe;
		}
		bot_kb_free(kb);
	}
	ck_assert_uint_eq(probes[0], 0);
	ck_assert_uint_gt(probes[1], 0);
	/* AUTO's arm never measured here: an arm measured 5x faster than
	 * AUTO's prior is not trusted over stock NCCL */
	{
		struct bot_kb *kb = make_kb();
		struct bot_plan pl;

		add_noisy(kb, KEY, 5, 20, 2.0, 0);
		add_calls(kb, KEY, 2000);
		ck_assert_int_eq(bot_policy_init(&p, "greedy"), 0);
		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(pl.exploit, BOT_ARM_AUTO);
		ck_assert_int_eq(bot_policy_init(&p, "greedy-free"), 0);
		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(pl.exploit, 5);
		bot_kb_free(kb);
	}
}
END_TEST

/* Plan rounds 0..n-1 one call at a time (seed 7, one communicator) and
 * count the rounds whose exploit is `arm` (any arm but AUTO when arm < 0);
 * of those, the rounds with a probe of AUTO's (*auto_probes) and those
 * whose AUTO range is 16 buckets or more (*refreshed; both may be NULL).
 * Every plan is valid, holds at most one range of AUTO's, and names AUTO
 * as BOT_ARM_AUTO, never by its arm index auto_arm. */
static unsigned per_call_rounds(const struct bot_policy *p, const struct bot_kb *kb, int arm, int auto_arm,
				unsigned n, unsigned *auto_probes, unsigned *refreshed)
{
	unsigned exploited = 0;

	for (uint64_t r = 0; r < n; r++) {
		struct bot_shape sh = { 7, 1, 1, r, 0 };
		struct bot_plan pl;
		unsigned w = 0, nauto = 0;

		ck_assert_int_eq(bot_policy_plan(p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(bot_plan_check(&pl), 0);
		if (arm < 0 ? pl.exploit == BOT_ARM_AUTO : pl.exploit != arm)
			continue;
		exploited++;
		for (unsigned i = 0; i < pl.nprobe; i++) {
			ck_assert_int_ne(pl.probe[i].arm, auto_arm);
			if (pl.probe[i].arm == BOT_ARM_AUTO) {
				w += pl.probe[i].hi - pl.probe[i].lo;
				nauto++;
			}
		}
		ck_assert_uint_le(nauto, 1);
		if (auto_probes)
			*auto_probes += nauto;
		if (refreshed)
			*refreshed += w >= 16;
	}
	return exploited;
}

/* While another arm is exploited, AUTO's own arm is measured again through
 * probes that leave the call to NCCL (BOT_ARM_AUTO), never forced: one
 * slow draw had inflated AUTO's estimate (21 samples at 10 us, one at 36),
 * another arm (5, 9.8 us) looked better and was exploited, and without a
 * probe of AUTO that estimate was never corrected: the replay's per-call
 * harm (h100-roce allgather 4 GiB, ring/ll128 exploited at +3.2 %). Since
 * the belief's spread is the mean's own (bot_stats_robust_mean), that slow
 * draw widens AUTO's belief as much as it moves its mean, and 2 % is no
 * longer taken for a win: arm 5 at 9.8 us is never exploited. At 9.0 us
 * (10 % faster) it is, and AUTO is probed meanwhile. The probe ranges name
 * BOT_ARM_AUTO, never AUTO's arm index (0 here). */
START_TEST(test_safe_auto_remeasured)
{
	static const double arm5_us[2] = { 9.8, 9.0 };
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (int faster = 0; faster < 2; faster++) {
		struct bot_kb *kb = make_kb();
		unsigned exploited, auto_probes = 0;

		add_noisy(kb, KEY, 0, 21, 10.0, 0);
		ck_assert_int_eq(bot_kb_add_us(kb, KEY, 0, 36.0), 0);
		add_noisy(kb, KEY, 5, 12, arm5_us[faster], 50);
		add_calls(kb, KEY, 34);
		exploited = per_call_rounds(&p, kb, -1, 0, 200, &auto_probes, NULL);
		if (!faster) {
			ck_assert_uint_eq(exploited, 0);
		} else {
			ck_assert_uint_gt(exploited, 100);
			ck_assert_uint_gt(auto_probes, 0);
		}
		bot_kb_free(kb);
	}
}
END_TEST

/* A window that a few more slow draws would have carried off is no
 * measurement: AUTO's arm drew 3 samples at 8x its prior and 2 at it (the
 * lower median is 8x, the window keeps the three), which made AUTO look 8x
 * slower with three samples behind it, and arm 5 (12 us, 20 % slower than
 * AUTO truly is) was exploited. The evidence is the window's samples less
 * those it dropped (one), a lone sample 8x slower than its prior is
 * doubted, and arm 5 is not exploited. */
START_TEST(test_safe_contested_window)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb();

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	add_noisy(kb, KEY, 0, 3, 80.0, 0);
	add_noisy(kb, KEY, 0, 2, 10.0, 10);
	add_noisy(kb, KEY, 5, 12, 12.0, 50);
	add_calls(kb, KEY, 17);
	ck_assert_uint_eq(per_call_rounds(&p, kb, 5, 0, 100, NULL, NULL), 0);
	bot_kb_free(kb);
}
END_TEST

/* The baseline refresh: AUTO's arm measured 3x slower than NCCL's model on
 * 6 samples (its first draws outliers, or AUTO truly that slow) while arm 5
 * is exploited keeps a probe range of AUTO's of 16 buckets or more every
 * round, until AUTO has 20 samples; not when AUTO measured within 2x of
 * its model (1.8x), not for a policy that plans no probe (greedy, frozen),
 * and not where the ranks cannot measure AUTO's arm (NVLS across 8 nodes,
 * its samples imported: they would never grow). */
START_TEST(test_safe_baseline_refresh)
{
	static const struct {
		const char *policy;
		int auto_arm, n;
		double us, arm5;
		int refresh;
	} cases[] = {
		{ "thompson", 0, 6, 30.0, 15.0, 1 },
		{ "ucb1", 0, 6, 30.0, 15.0, 1 },
		{ "thompson", 0, 25, 30.0, 15.0, 0 },
		{ "thompson", 0, 6, 18.0, 9.0, 0 },
		{ "greedy", 0, 6, 30.0, 15.0, 0 },
		{ "frozen", 0, 6, 30.0, 15.0, 0 },
		{ "thompson", 14, 6, 15.0, 8.0, 0 },
	};

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bot_policy p;
		struct bot_kb *kb = make_kb();
		unsigned exploited, refreshed = 0;

		ck_assert_int_eq(bot_policy_init(&p, cases[c].policy), 0);
		if (cases[c].auto_arm) {
			float pr[BOT_NARMS];

			fill_prior(pr);
			pr[cases[c].auto_arm] = 5.0f;	/* NCCL's choice: nvls/simple */
			ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
		}
		add_noisy(kb, KEY, cases[c].auto_arm, cases[c].n, cases[c].us, 0);
		add_noisy(kb, KEY, 5, 30, cases[c].arm5, 100);
		add_calls(kb, KEY, (uint64_t)cases[c].n + 30);
		exploited = per_call_rounds(&p, kb, 5, cases[c].auto_arm, 100, NULL, &refreshed);
		ck_assert_msg(exploited > 90, "case %u (%s): exploited %u", c, cases[c].policy, exploited);
		if (cases[c].refresh)
			ck_assert_msg(refreshed == exploited, "case %u: refreshed %u of %u", c, refreshed,
				      exploited);
		else
			ck_assert_msg(refreshed == 0, "case %u: refreshed %u", c, refreshed);
		bot_kb_free(kb);
	}
}
END_TEST

/* A probe of AUTO's that the planner made itself becomes the refresh's
 * range, widened: one range of BOT_ARM_AUTO, at least 16 buckets and at
 * least as wide as the planner's. A -free variant plans as its namesake
 * without the budget, so its plan on the same round shows the planner's
 * own probe: e-greedy's is narrow (5 buckets), Thompson's wide (32-96).
 * AUTO's arm: 4 samples at 1.4-2.6x its model, 2.3x on average (the
 * refresh is due); arm 5: 30 at 18 us (exploited). */
START_TEST(test_safe_refresh_merges_probe)
{
	static const char *const names[2][2] = { { "egreedy", "egreedy-free" },
						  { "thompson", "thompson-free" } };
	unsigned narrow = 0, wide = 0;

	for (int k = 0; k < 2; k++) {
		struct bot_policy p, free_p;
		struct bot_kb *kb = bot_kb_new();
		float pr[BOT_NARMS];

		ck_assert_ptr_nonnull(kb);
		for (int a = 0; a < BOT_NARMS; a++)
			pr[a] = -1.0f;
		pr[0] = 10.0f;	/* AUTO's arm, tree/ll */
		pr[5] = 12.0f;
		ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
		ck_assert_int_eq(bot_policy_init(&p, names[k][0]), 0);
		ck_assert_int_eq(bot_policy_init(&free_p, names[k][1]), 0);
		add_noisy(kb, KEY, 0, 3, 26.0, 0);
		add_noisy(kb, KEY, 0, 1, 14.0, 10);
		add_noisy(kb, KEY, 5, 30, 18.0, 100);
		add_calls(kb, KEY, 5000);
		for (uint64_t r = 0; r < 200; r++) {
			struct bot_shape sh = { 7, 1, 1, r, 0 };
			struct bot_plan pl, pf;
			unsigned wf = 0, wt = 0, nauto = 0;

			ck_assert_int_eq(bot_policy_plan(&free_p, kb, KEY, &sh, &pf), 0);
			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			ck_assert_int_eq(pl.exploit, 5);
			for (unsigned i = 0; i < pf.nprobe; i++)
				if (pf.probe[i].arm == 0 || pf.probe[i].arm == BOT_ARM_AUTO)
					wf += pf.probe[i].hi - pf.probe[i].lo;
			for (unsigned i = 0; i < pl.nprobe; i++) {
				ck_assert_int_ne(pl.probe[i].arm, 0);
				if (pl.probe[i].arm == BOT_ARM_AUTO) {
					wt += pl.probe[i].hi - pl.probe[i].lo;
					nauto++;
				}
			}
			ck_assert_uint_eq(nauto, 1);
			ck_assert_uint_ge(wt, 16);
			ck_assert_uint_ge(wt, wf);
			narrow += wf > 0 && wf < 16;
			wide += wf > 16;
		}
		bot_kb_free(kb);
	}
	ck_assert_uint_gt(narrow, 100);
	ck_assert_uint_gt(wide, 50);
}
END_TEST

/* The sample lag: where a communicator's round yields fewer than one sample
 * on average, a probe runs for several rounds before the budget counts it
 * (it counts samples), so it is charged that many rounds. AUTO's arm
 * measured here at its model's 10 us, every other arm unmeasured (the
 * cheapest, tree/ll128, rated 1.1x: 0.155 of a call per call); 40,000
 * calls so far, rounds of 8 communicators x 500 calls, so the slack is
 * 440 calls and one communicator's round on tree/ll128 is charged 77.5.
 * With 400 samples (5 a round) it is probed; with 8 (0.1 a round, a lag of
 * 10: 775) not; with 10x the calls and 40 samples (0.05, a lag of 20:
 * 1,550 against a slack of 4,040) again. Before the lag, the sparse
 * context probed as the dense one, round after round, none of it counted
 * until a sample came back (replay, 0.1 % sampling: 16 real-data contexts
 * harmed in epochs mode, 1 with the lag). */
START_TEST(test_safe_sample_lag)
{
	static const struct {
		int samples;
		uint64_t calls;
		int probes;
	} cases[] = {
		{ 400, 40000, 1 },
		{ 8, 40000, 0 },
		{ 40, 400000, 1 },
	};
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bot_kb *kb = make_kb();
		unsigned probed = 0;

		add_noisy(kb, KEY, 0, cases[c].samples, 10.0, 0);
		add_calls(kb, KEY, cases[c].calls);
		for (uint64_t r = 0; r < 32; r++) {
			struct bot_shape sh = { 3, 8, 500, r, 0 };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			ck_assert_int_eq(pl.exploit, BOT_ARM_AUTO);
			for (unsigned i = 0; i < pl.nprobe; i++)
				probed += pl.probe[i].arm != BOT_ARM_AUTO;
		}
		if (cases[c].probes)
			ck_assert_msg(probed > 0, "case %u: no probe", c);
		else
			ck_assert_msg(probed == 0, "case %u: %u probes", c, probed);
		bot_kb_free(kb);
	}
}
END_TEST

/* Rounds in flight (bot_shape.inflight: rounds that ran earlier plans and
 * whose feedback the knowledge base has not seen, the replay's --delay - 1)
 * were paid without being counted: a probe is charged them too, the budget
 * earns nothing from their calls until they are counted, and an arm without
 * samples is tried on a range that holds about one communicator over the
 * rounds before its first sample can be seen (11 buckets at 8
 * communicators; 8 with 3 rounds in flight, 1 with 29). With AUTO measured,
 * 40,000 calls counted and 500-call rounds of 8 communicators, the plan
 * probes with up to 29 rounds in flight; with 200, the one-bucket range is
 * the same as at 29 but its charge over 201 rounds is more than the slack,
 * so none is made. */
START_TEST(test_safe_inflight)
{
	static const struct {
		uint32_t inflight;
		unsigned widest;	/* widest range of an arm without samples */
		int probes;
	} cases[] = {
		{ 0, 11, 1 },
		{ 3, 8, 1 },
		{ 29, 1, 1 },
		{ 200, 0, 0 },
	};
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bot_kb *kb = make_kb();
		unsigned probed = 0, widest = 0;

		add_noisy(kb, KEY, 0, 400, 10.0, 0);
		add_calls(kb, KEY, 40000);
		for (uint64_t r = 0; r < 64; r++) {
			struct bot_shape sh = { 3, 8, 500, r, cases[c].inflight };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			ck_assert_int_eq(pl.exploit, BOT_ARM_AUTO);
			for (unsigned i = 0; i < pl.nprobe; i++) {
				unsigned w = (unsigned)(pl.probe[i].hi - pl.probe[i].lo);

				if (pl.probe[i].arm == BOT_ARM_AUTO)
					continue;
				probed++;
				if (w > widest)
					widest = w;
			}
		}
		ck_assert_msg(cases[c].probes ? probed > 0 : probed == 0, "case %u: %u probes", c,
			      probed);
		ck_assert_msg(widest == cases[c].widest, "case %u: widest %u", c, widest);
		bot_kb_free(kb);
	}
}
END_TEST

/* Rounds in flight and the exploit: an arm measured faster than AUTO's on
 * average (12 samples, 9.0 us against 10) but widely spread has a positive
 * pessimistic excess; at 16,000 calls the slack covers it for this round
 * and not for 3 more in flight, where the exploit falls back to AUTO. Per
 * call (one communicator, one call a round) a probe's range shrinks to fit
 * the slack of the rounds it will be charged: less of it with rounds in
 * flight. */
START_TEST(test_safe_inflight_exploit)
{
	unsigned exploited[2] = { 0, 0 }, width[2] = { 0, 0 };
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (int v = 0; v < 2; v++) {
		uint32_t inflight = v ? 3 : 0;
		struct bot_kb *kb = make_kb(), *pk = make_kb();

		add_noisy(kb, KEY, 0, 40, 10.0, 0);
		for (int i = 0; i < 12; i++)
			ck_assert_int_eq(bot_kb_add_us(kb, KEY, 5, 9.0 * (i % 2 ? 0.7 : 1.3)), 0);
		add_calls(kb, KEY, 16000);
		add_noisy(pk, KEY, 0, 40, 10.0, 0);
		add_noisy(pk, KEY, 5, 5, 10.5, 500);
		add_calls(pk, KEY, 50);
		for (uint64_t r = 0; r < 16; r++) {
			struct bot_shape sh = { 3, 8, 500, r, inflight };
			struct bot_shape one = { 3, 1, 1, r, inflight };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			exploited[v] += pl.exploit == 5;
			ck_assert_int_eq(bot_policy_plan(&p, pk, KEY, &one, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			for (unsigned i = 0; i < pl.nprobe; i++)
				if (pl.probe[i].arm != BOT_ARM_AUTO)
					width[v] += (unsigned)(pl.probe[i].hi - pl.probe[i].lo);
		}
		bot_kb_free(kb);
		bot_kb_free(pk);
	}
	ck_assert_uint_eq(exploited[0], 16);
	ck_assert_uint_eq(exploited[1], 0);
	ck_assert_uint_gt(width[1], 0);
	/* 1,758 buckets over the 16 rounds, 1,305 with 3 in flight: fewer,
	 * but a range cut to what one round's slack covers and then charged
	 * four rounds would overdraw the slack and be dropped (770) */
	ck_assert_msg(width[1] * 4 < width[0] * 3 && width[1] * 2 > width[0],
		      "probed %u buckets, %u with 3 in flight", width[0], width[1]);
}
END_TEST

/* When the exploit a policy planned has no samples of its own (only
 * borrowed evidence or the prior favour it), it becomes a probe and the
 * round's exploit is the arm measured here to be confidently faster than
 * AUTO's, not AUTO's: the replay's h100-roce allreduce 4 GiB with --history
 * train kept AUTO (the cost model 1.8x off) for rounds while ring/ll128 had
 * measured 45 % faster. Only with enough of its own samples (20): with 5 it
 * stays AUTO's. */
START_TEST(test_safe_fallback_exploit)
{
	struct bot_policy p;
	unsigned measured[2] = { 0, 0 };

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (int many = 0; many < 2; many++) {
		struct bot_kb *kb = make_kb();
		/* arm 5's neighbour sizes measured it 3x faster than its prior:
		 * the corrected prior makes it thompson's favourite, unmeasured */
		uint64_t nb = bot_ctx_key(BOT_COLL_ALLREDUCE, 80, 64, 8);
		float pr[BOT_NARMS];

		fill_prior(pr);
		ck_assert_int_eq(bot_kb_set_prior(kb, nb, pr), 0);
		add_noisy(kb, nb, 5, 40, 4.0, 7);
		add_noisy(kb, KEY, 0, 40, 10.0, 0);
		add_noisy(kb, KEY, 4, (many ? 24 : 5), 6.0, 300);
		add_calls(kb, KEY, 4000);
		for (uint64_t r = 0; r < 32; r++) {
			struct bot_shape sh = { 5, 8, 500, r, 0 };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			measured[many] += pl.exploit == 4;
		}
		bot_kb_free(kb);
	}
	ck_assert_uint_eq(measured[0], 0);
	ck_assert_uint_gt(measured[1], 16);
}
END_TEST

/* The common offset: NCCL's cost model 2x too fast for every arm the
 * neighbouring sizes measured (arms 0-4 at twice their prior, 10 samples
 * each), AUTO's arm 0 measured here at 20 us (2x too), and arm 5 (prior
 * 12 us, 1.2x AUTO's) measured nowhere. The arms' corrections shrink
 * towards the error they share, so arm 5 is believed near 24 us and
 * greedy-free (the posterior's argmin, no budget) keeps AUTO's arm; shrunk
 * towards 0, arm 5 kept most of NCCL's level (15 us) and was exploited,
 * unmeasured, as 25 % faster than AUTO. Where a neighbour did measure arm
 * 5 at its prior (12 us: NCCL right about it alone), that evidence still
 * makes it the pick. */
START_TEST(test_corrections_common_offset)
{
	static const double arm_us[5] = { 20.0, 22.0, 28.0, 32.0, 26.0 };
	struct bot_policy p;

	ck_assert_int_eq(bot_policy_init(&p, "greedy-free"), 0);
	for (int measured5 = 0; measured5 < 2; measured5++) {
		struct bot_kb *kb = make_kb();
		struct bot_shape sh = { 7, 1, 1, 0, 0 };
		struct bot_plan pl;
		float pr[BOT_NARMS];

		fill_prior(pr);
		for (int d = -2; d <= 2; d++) {
			uint64_t nb = bot_ctx_key(BOT_COLL_ALLREDUCE, (unsigned)(84 + d), 64, 8);

			if (!d)
				continue;
			ck_assert_int_eq(bot_kb_set_prior(kb, nb, pr), 0);
			for (int a = 0; a < 5; a++)
				add_noisy(kb, nb, a, 10, arm_us[a], (uint64_t)(100 * a + 10 * (d + 2)));
			if (measured5)
				add_noisy(kb, nb, 5, 10, 12.0, (uint64_t)(600 + 10 * (d + 2)));
		}
		add_noisy(kb, KEY, 0, 20, 20.0, 900);
		add_calls(kb, KEY, 20);
		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(bot_plan_check(&pl), 0);
		if (measured5)
			ck_assert_int_eq(pl.exploit, 5);
		else
			ck_assert_msg(pl.exploit == 0 || pl.exploit == BOT_ARM_AUTO, "exploit %d",
				      pl.exploit);
		bot_kb_free(kb);
	}
}
END_TEST

/* One communicator running a round of many calls is as lumpy as one of
 * several: a probe that lands runs the arm for the whole round (a job with
 * one communicator per context, plain data parallel), so it is charged the
 * whole round and dropped when the budget does not cover that. Per call (one
 * call a round) a range still shrinks to what the budget covers. Before,
 * one communicator meant "per call" whatever the round held: replay jobs
 * mode with --comms 1 --plan-comms 1 harmed 145 contexts, 51 with this rule. */
START_TEST(test_safe_single_comm_lump)
{
	struct bot_policy p;
	struct bot_kb *kb = make_kb();
	unsigned guess[2] = { 0, 0 };

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	add_noisy(kb, KEY, 0, 20, 10.0, 0);
	add_calls(kb, KEY, 20);
	for (int lumpy = 0; lumpy < 2; lumpy++)
		for (uint64_t r = 0; r < 64; r++) {
			struct bot_shape sh = { 11, 1, lumpy ? 500 : 1, r, 0 };
			struct bot_plan pl;

			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
			ck_assert_int_eq(bot_plan_check(&pl), 0);
			for (unsigned i = 0; i < pl.nprobe; i++)
				guess[lumpy] += pl.probe[i].arm != BOT_ARM_AUTO && pl.probe[i].arm != 0;
		}
	ck_assert_uint_gt(guess[0], 0);	/* per call: narrowed probes */
	ck_assert_uint_eq(guess[1], 0);	/* a round of 500 calls: too dear */
	bot_kb_free(kb);
}
END_TEST

/* The worst-case lump rule: where a probe is one communicator's round of 500
 * calls, an arm without samples that NCCL's model rates 2.0x AUTO's (above
 * SAFE_TRUST 1.6) is probed only once even 2.5x that ratio would cost at most
 * 2 % of the context's calls so far: 500 x (2.0 x 2.5 - 1) = 2,000 calls, so
 * not with 4,000 calls behind (2 % of 8,000 is 160), yes with 200,000; an arm
 * rated 1.5x is probed either way, and per call the rule does not apply. The
 * budget is set to cover every probe, so only this rule can drop one. On the
 * real data (aws-g5-a10g) such an arm was 5.25x, and its one communicator's
 * job harmed the context by 2.7 points. Calls are a communicator's, stored
 * as a state stores them (add_calls), sampled at 1 %; `rounds` is the
 * state's, the round planned. */
static uint64_t wc_calls_per_sample = 100;	/* AUTO's arm sampled at 1 % */
static uint32_t wc_inflight;			/* rounds in flight */
static float wc_arm2_prior;			/* > 0: arm 2 rated so (us), and measured: */
static double wc_arm2_us = 20.0;		/* its latency */
static int wc_arm2_n = 40;			/* its samples */

/* The rule's context: AUTO's arm (0) at 10 us with `samples` samples and
 * `calls` calls, arm 1 rated 1.5x (trusted), arm 5 rated 2.0x (judged),
 * and where wc_arm2_prior is set, arm 2 rated and measured as the wc_arm2_
 * variables say (the model's miss here);
 * *p an ETC policy that probes every arm, still exploring, with a budget
 * that covers any probe. */
static struct bot_kb *wc_kb(uint64_t calls, int samples, struct bot_policy *p)
{
	struct bot_kb *kb = bot_kb_new();
	float pr[BOT_NARMS];

	ck_assert_ptr_nonnull(kb);
	for (int a = 0; a < BOT_NARMS; a++)
		pr[a] = -1.0f;
	pr[0] = 10.0f;		/* AUTO's arm */
	pr[1] = 15.0f;		/* 1.5x: trusted */
	pr[5] = 20.0f;		/* 2.0x */
	if (wc_arm2_prior > 0)
		pr[2] = wc_arm2_prior;
	ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
	add_noisy(kb, KEY, 0, samples, 10.0, 0);
	if (wc_arm2_prior > 0)
		add_noisy(kb, KEY, 2, wc_arm2_n, wc_arm2_us, 0);
	add_calls(kb, KEY, calls);
	ck_assert_int_eq(bot_policy_init(p, "etc"), 0);	/* probes every arm */
	bot_policy_set(p, "budget", 1.0);
	bot_policy_set(p, "etc_rounds", 1e9);	/* still exploring at any round */
	return kb;
}

/* AUTO's arm's samples for `calls` calls at wc_calls_per_sample, at least 40
 * (at 1 %, 5 samples a communicator's round: no sample lag) */
static int wc_samples(uint64_t calls)
{
	return (int)(calls / wc_calls_per_sample > 40 ? calls / wc_calls_per_sample : 40);
}

static unsigned worst_case_rounds(uint64_t calls, uint64_t rounds, uint32_t ncomms, uint32_t per,
				  int arm)
{
	struct bot_policy p;
	struct bot_kb *kb = wc_kb(calls, wc_samples(calls), &p);
	unsigned hits = 0;

	for (uint64_t r = 0; r < 3; r++) {	/* one ETC cycle: every arm */
		struct bot_shape sh = { 7, ncomms, per, rounds + r, wc_inflight };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(bot_plan_check(&pl), 0);
		for (unsigned i = 0; i < pl.nprobe; i++)
			hits += pl.probe[i].arm == arm;
		hits += pl.exploit == arm;
	}
	bot_kb_free(kb);
	return hits;
}

/* The calls so far made in rounds of the shape's size. */
static unsigned worst_case_probes(uint64_t calls, uint32_t ncomms, uint32_t per, int arm)
{
	return worst_case_rounds(calls, calls / ((uint64_t)ncomms * per), ncomms, per, arm);
}

/* worst_filter: a cold policy whose optimism ties an arm the rule forbids
 * (2.0x, lower index) with one it allows (1.5x) probes the allowed one. */
START_TEST(test_safe_worst_filter)
{
	struct bot_kb *kb = bot_kb_new();
	struct bot_policy p;
	float pr[BOT_NARMS];
	unsigned h1 = 0, h5 = 0;

	for (int a = 0; a < BOT_NARMS; a++)
		pr[a] = -1.0f;
	pr[0] = 10.0f;
	pr[1] = 20.0f;
	pr[5] = 15.0f;
	ck_assert_int_eq(bot_kb_set_prior(kb, KEY, pr), 0);
	add_noisy(kb, KEY, 0, 40, 10.0, 0);
	add_calls(kb, KEY, 4000);
	ck_assert_int_eq(bot_policy_init(&p, "ucb1-cold"), 0);
	bot_policy_set(&p, "budget", 1.0);
	for (uint64_t r = 0; r < 5; r++) {
		struct bot_shape sh = { 7, 1, 100, r, 0 };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		for (unsigned i = 0; i < pl.nprobe; i++) {
			h1 += pl.probe[i].arm == 1;
			h5 += pl.probe[i].arm == 5;
		}
	}
	ck_assert_uint_eq(h1, 0);
	ck_assert_uint_gt(h5, 0);
	bot_kb_free(kb);
}
END_TEST

START_TEST(test_safe_worst_case_lump)
{
	ck_assert_uint_eq(worst_case_probes(4000, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(4000, 8, 500, 1), 0);
	ck_assert_uint_gt(worst_case_probes(200000, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(4000, 1, 1, 5), 0);	/* per call */
	/* the boundary: 500 x 4 <= 0.02 x (N + 4,000) from N = 96,000 calls */
	ck_assert_uint_eq(worst_case_probes(95999, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(96000, 8, 500, 5), 0);
	/* The state's rounds count merges, not jobs (one compactor run
	 * merges many steps): 200,000 calls in one round or in 50 are judged
	 * alike, by the shape's round. */
	ck_assert_uint_gt(worst_case_rounds(200000, 1, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_rounds(200000, 50, 8, 500, 5), 0);
	/* Sampled at 0.02 %, 0.1 samples a communicator's round: the lump is
	 * the 10 rounds it runs before it is counted (the sample lag), 500 x
	 * 10 x 4 <= 0.02 x (N + 4,000) from N = 996,000 calls (200 samples
	 * then, still 0.1 a round) */
	wc_calls_per_sample = 5000;
	ck_assert_uint_eq(worst_case_probes(200000, 8, 500, 5), 0);
	ck_assert_uint_eq(worst_case_probes(990000, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(1000000, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(200000, 8, 500, 1), 0);	/* 1.5x: trusted */
	wc_calls_per_sample = 100;
	/* 3 rounds in flight: the lump adds the communicators expected in the
	 * arm's range over them and is compared with the calls run, those in
	 * flight included. The arm is judged by the rule, so its range is the
	 * SAFE_WORST_LUMP one, 2 buckets (4,000 x 2/256 x 3 = 93.75 calls):
	 * 593.75 x 4 <= 0.02 x (N + 16,000) from N = 102,750 (with the 8-bucket
	 * range of an arm charged a guess, 159,000) */
	wc_inflight = 3;
	ck_assert_uint_eq(worst_case_probes(96000, 8, 500, 5), 0);
	ck_assert_uint_eq(worst_case_probes(102749, 8, 500, 5), 0);
	ck_assert_uint_gt(worst_case_probes(102750, 8, 500, 5), 0);
	wc_inflight = 0;
}
END_TEST

/* The model's miss here: where an arm measured in this context is slower
 * against AUTO's than NCCL's model said, every arm without samples is judged
 * as if the model understated it as much. Arm 2, measured 2.0x AUTO's arm:
 * rated 2.0x (no miss), the 1.5x arm 1 is trusted and probed with 4,000 calls
 * behind; rated 1.2x (a miss of 1.67), arm 1 counts as 2.5x and the
 * worst-case lump rule holds it back: 500 x (2.5 x 2.5 - 1) <= 0.02 x (N +
 * 4,000) from N = 127,250 calls (the noisy samples put it between 127,000
 * and 127,600); once admitted it is tried on the rule's narrow range, 2
 * buckets instead of 11. The budget's charge for arm 1 grows as much. The
 * miss counts from 3 samples of evidence, and at most 4x: arm 2 rated 1.05x
 * and measured 5x (a miss of 4.8) makes arm 1 a 6x arm, admitted from
 * (500 x (6 x 2.5 - 1)) / 0.02 - 4,000 = 346,000 calls (uncapped: 442,000).
 * Arm 1's widths summed over 3 rounds (an ETC cycle) of 8 communicators x
 * 500 calls. */
static unsigned miss_width(float arm2_prior, uint64_t calls, double budget)
{
	struct bot_policy p;
	struct bot_kb *kb;
	unsigned w1 = 0;

	wc_arm2_prior = arm2_prior;
	kb = wc_kb(calls, wc_samples(calls), &p);
	wc_arm2_prior = 0;
	bot_policy_set(&p, "budget", budget);
	for (uint64_t r = 0; r < 3; r++) {
		struct bot_shape sh = { 7, 8, 500, calls / 4000 + r, 0 };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(bot_plan_check(&pl), 0);
		for (unsigned i = 0; i < pl.nprobe; i++)
			if (pl.probe[i].arm == 1)
				w1 += pl.probe[i].hi - pl.probe[i].lo;
	}
	bot_kb_free(kb);
	return w1;
}

START_TEST(test_safe_model_miss)
{
	unsigned near, far;

	ck_assert_uint_gt(miss_width(20.0f, 4000, 1.0), 0);
	ck_assert_uint_eq(miss_width(12.0f, 4000, 1.0), 0);
	ck_assert_uint_eq(miss_width(12.0f, 127000, 1.0), 0);
	ck_assert_uint_gt(miss_width(12.0f, 127600, 1.0), 0);
	ck_assert_uint_eq(miss_width(20.0f, 4000000, 1.0), 3 * 11);
	ck_assert_uint_eq(miss_width(12.0f, 4000000, 1.0), 3 * 2);
	/* two samples of arm 2 are not yet evidence of a miss */
	wc_arm2_n = 2;
	ck_assert_uint_gt(miss_width(12.0f, 4000, 1.0), 0);
	wc_arm2_n = 40;
	/* the cap */
	wc_arm2_us = 50.0;
	ck_assert_uint_eq(miss_width(10.5f, 340000, 1.0), 0);
	ck_assert_uint_gt(miss_width(10.5f, 350000, 1.0), 0);
	wc_arm2_us = 20.0;
	/* the budget's charge, with both admitted by the rule (200,000
	 * calls): a communicator's round on arm 1 is charged 500 x (1.5 x
	 * 1.05 - 1) = 288 calls without the miss, 500 x (2.5 x 1.05 - 1) = 812
	 * with it; at a budget of 2.2 % the slack is about 550 (arm 2's
	 * samples spent about 3,930 of 0.022 x 204,000) */
	near = miss_width(20.0f, 200000, 0.022);
	far = miss_width(12.0f, 200000, 0.022);
	ck_assert_uint_gt(near, 0);
	ck_assert_uint_eq(far, 0);
}
END_TEST

/* A state counts a context's calls once per rank (formats.md 12): 64 ranks
 * of 8 communicators x 500 calls store 256,000 for one job. Read as a
 * communicator's calls, that one job would be 64 jobs' worth and admit the
 * 2.0x arm the worst-case lump rule holds back for 24 jobs; the policies
 * divide by the key's nRanks. */
START_TEST(test_safe_rank_calls)
{
	ck_assert_uint_eq(bot_key_nranks(KEY), 64);
	ck_assert_uint_eq(worst_case_probes(4000, 8, 500, 5), 0);	/* 256,000 stored */
	ck_assert_uint_eq(worst_case_probes(92000, 8, 500, 5), 0);	/* 23 jobs */
	ck_assert_uint_gt(worst_case_probes(96000, 8, 500, 5), 0);	/* 24 jobs */
}
END_TEST

/* The worst-case lump rule bounds one communicator's lump, so an arm it
 * judges (rated above 1.6x) is first tried on a range that two or more of
 * the round's 8 communicators land in at most 0.3 % of the time: 2 buckets
 * (3: 0.37 %), where an arm charged a guess within 1.6x gets 11. With one
 * communicator (a round of 500 calls: lumpy) no two can land in a range, and
 * per call (one call a round) ranges are not lumps: neither is narrowed.
 * `calls` as a state stores them (64 ranks). */
static void worst_widths(uint32_t ncomms, uint32_t per, uint64_t calls, unsigned *w1,
			 unsigned *w5)
{
	struct bot_policy p;
	struct bot_kb *kb = wc_kb(calls, 40000, &p);	/* arm 5 admitted at these calls */

	*w1 = *w5 = 0;
	for (uint64_t r = 0; r < 3; r++) {
		struct bot_shape sh = { 7, ncomms, per, 1000 + r, 0 };
		struct bot_plan pl;

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &sh, &pl), 0);
		ck_assert_int_eq(bot_plan_check(&pl), 0);
		for (unsigned i = 0; i < pl.nprobe; i++) {
			unsigned w = pl.probe[i].hi - pl.probe[i].lo;

			if (pl.probe[i].arm == 1 && w > *w1)
				*w1 = w;
			if (pl.probe[i].arm == 5 && w > *w5)
				*w5 = w;
		}
	}
	bot_kb_free(kb);
}

START_TEST(test_safe_worst_range)
{
	unsigned w1, w5;

	worst_widths(8, 500, 4000000, &w1, &w5);
	ck_assert_uint_eq(w1, 11);
	ck_assert_uint_eq(w5, 2);
	/* one communicator: its round is the lump, admitted from 100,000 of a
	 * communicator's calls (500 x 4 <= 0.02 x (N + 500)) */
	worst_widths(1, 500, 64 * 200000ull, &w1, &w5);
	ck_assert_uint_gt(w5, 2);
	worst_widths(1, 1, 4000000, &w1, &w5);	/* per call */
	ck_assert_uint_gt(w5, 2);
}
END_TEST

/* A probe charged a guess (an arm without samples here) is narrowed so that
 * two or more of the round's communicators land in it with probability at
 * most 5 %: with 8 communicators, ranges of at most 11 buckets (12: 5.1 %),
 * where one communicator's share (32) holds two or more 26 % of the time;
 * per call (one communicator) it is not narrowed. Counted over 400 rounds:
 * the ranges that two or more communicators ran (at most 8 %). */
START_TEST(test_safe_guess_lumps)
{
	struct bot_kb *kb = make_kb();
	struct bot_policy p;
	unsigned lumps = 0, probed = 0, ranges = 0;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	bot_policy_set(&p, "budget", 1.0);	/* every probe affordable */
	add_noisy(kb, KEY, 0, 40, 10.0, 0);
	add_calls(kb, KEY, 4000);
	for (uint64_t r = 0; r < 400; r++) {
		struct bot_shape s = { 42, 8, 100, r, 0 };
		struct bot_plan pl;
		unsigned on[BOT_NARMS] = { 0 };

		ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
		ranges += pl.nprobe;
		for (unsigned i = 0; i < pl.nprobe; i++)
			ck_assert_uint_le(pl.probe[i].hi - pl.probe[i].lo, 11);
		for (unsigned c = 0; c < 8; c++) {
			int arm = bot_plan_arm(&pl, bot_probe_bucket(42, 1000 * r + c, KEY, 0));

			if (arm != BOT_ARM_AUTO && arm != 0)
				on[arm]++;
		}
		for (int a = 0; a < BOT_NARMS; a++) {
			probed += on[a] > 0;
			lumps += on[a] > 1;
		}
	}
	ck_assert_uint_gt(probed, 100);
	ck_assert_msg(lumps * 100 <= ranges * 8, "%u of %u probe ranges ran on two or more communicators",
		      lumps, ranges);
	{
		struct bot_shape s = { 42, 1, 1, 0, 0 };
		struct bot_plan pl;
		unsigned wide = 0;

		for (uint64_t r = 0; r < 50; r++) {
			s.round = r;
			ck_assert_int_eq(bot_policy_plan(&p, kb, KEY, &s, &pl), 0);
			for (unsigned i = 0; i < pl.nprobe; i++)
				wide += pl.probe[i].hi - pl.probe[i].lo > 11;
		}
		ck_assert_uint_gt(wide, 0);
	}
	bot_kb_free(kb);
}
END_TEST

/* The budget spent, in section 12's unit: 100 calls of which 10 measured
 * on an arm 40 % slower than AUTO's cost at least 4 AUTO calls; a larger
 * stored explore wins; no calls, nothing to convert. */
START_TEST(test_explore_spent)
{
	struct bot_kb *kb = make_kb();
	struct bot_policy p;
	uint64_t e;

	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	ck_assert_uint_eq(bot_policy_explore_spent(&p, kb, KEY), 0);
	add_noisy(kb, KEY, 0, 90, 10.0, 0);
	add_noisy(kb, KEY, 5, 10, 14.0, 500);
	ck_assert_uint_eq(bot_policy_explore_spent(&p, kb, KEY), 0);
	add_calls(kb, KEY, 100);
	e = bot_policy_explore_spent(&p, kb, KEY);
	ck_assert_uint_ge(e, 4 * 65536);
	ck_assert_uint_le(e, 6 * 65536);
	bot_kb_get(kb, KEY)->explore = 100 * 65536;
	ck_assert_uint_eq(bot_policy_explore_spent(&p, kb, KEY), 100 * 65536);
	bot_kb_free(kb);
	/* a lone sample far slower than its prior, which the planner sets
	 * aside as an outlier, was paid for all the same: one call on an arm
	 * 5x AUTO's costs at least 3 AUTO calls */
	kb = make_kb();
	add_noisy(kb, KEY, 0, 99, 10.0, 0);
	ck_assert_int_eq(bot_kb_add_us(kb, KEY, 1, 50.0), 0);
	add_calls(kb, KEY, 100);
	ck_assert_uint_ge(bot_policy_explore_spent(&p, kb, KEY), 3 * 65536);
	bot_kb_free(kb);
	/* samples beyond an arm's window cut its evidence, never its charge:
	 * 10 calls at 2x AUTO's, with 6 more far beyond the window, still cost
	 * at least the 10 calls' excess (charged on the window's samples, not
	 * on the 4 samples of evidence left) */
	kb = make_kb();
	add_noisy(kb, KEY, 0, 84, 10.0, 0);
	add_noisy(kb, KEY, 5, 10, 20.0, 500);
	add_noisy(kb, KEY, 5, 6, 200.0, 600);
	add_calls(kb, KEY, 100);
	ck_assert_uint_ge(bot_policy_explore_spent(&p, kb, KEY), 9 * 65536);
	bot_kb_free(kb);
}
END_TEST

/* Scale transfer's weight is learned: other node counts whose AUTO errors
 * agree (ring/simple 2x faster than AUTO says at 2, 4 and 8 nodes) move an
 * unseen scale (32 nodes), ones that contradict each other (2x faster,
 * 2x slower, 2x faster) do not. Leave-one-scale-out inside the kb. */
START_TEST(test_scale_skill)
{
	static const uint32_t nodes[] = { 2, 4, 8 };
	float pr[BOT_NARMS];

	fill_prior(pr);
	for (int agree = 0; agree < 2; agree++) {
		struct bot_kb *kb = bot_kb_new();
		uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 256, 32);
		struct bot_shape s = { 1, 8, 100, 0, 0 };
		struct bot_policy p;
		struct bot_plan pl;

		ck_assert_int_eq(bot_kb_set_prior(kb, key, pr), 0);
		for (unsigned n = 0; n < 3; n++) {
			uint64_t k = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 8 * nodes[n], nodes[n]);
			double t5 = agree || n != 1 ? pr[5] / 2 : pr[5] * 2;

			ck_assert_int_eq(bot_kb_set_prior(kb, k, pr), 0);
			for (int i = 0; i < 20; i++) {
				bot_kb_add_us(kb, k, 5, noisy(t5, (uint64_t)(i + 100 * n + 1)));
				bot_kb_add_us(kb, k, 0, noisy(pr[0], (uint64_t)(i + 100 * n + 5000)));
			}
		}
		ck_assert_int_eq(bot_policy_init(&p, "greedy-free"), 0);
		ck_assert_int_eq(bot_policy_plan(&p, kb, key, &s, &pl), 0);
		ck_assert_msg(pl.exploit == (agree ? 5 : 0), "agree %d exploit %d", agree, pl.exploit);
		bot_kb_free(kb);
	}
}
END_TEST

/* Scale peers whose cost model is off in level (every arm 2x slower than
 * NCCL says at 2 and 8 nodes, four samples an arm) predict each other well:
 * a held-out peer's error is predicted as the planner borrows it, shrunk
 * towards the offset every arm shares, not towards 0 (which judged the
 * transfer at 0.74 here, by a prediction the planner does not make).
 * Peers that contradict each other still transfer nothing. */
START_TEST(test_scale_skill_level)
{
	static const uint32_t nodes[] = { 2, 8 };
	static const int arms[] = { 0, 1, 2, 4, 5 };
	float pr[BOT_NARMS];
	struct bot_policy p;

	fill_prior(pr);
	ck_assert_int_eq(bot_policy_init(&p, "thompson"), 0);
	for (int agree = 0; agree < 2; agree++) {
		struct bot_kb *kb = bot_kb_new();
		uint64_t key = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 256, 32);
		double skill;

		ck_assert_int_eq(bot_kb_set_prior(kb, key, pr), 0);
		ck_assert_double_eq(bot_policy_scale_skill(&p, kb, key), 0);	/* no peers */
		for (unsigned n = 0; n < 2; n++) {
			uint64_t k = bot_ctx_key(BOT_COLL_ALLREDUCE, 84, 8 * nodes[n], nodes[n]);
			double f = agree || n == 0 ? 2.0 : 0.5;

			ck_assert_int_eq(bot_kb_set_prior(kb, k, pr), 0);
			for (unsigned i = 0; i < sizeof(arms) / sizeof(arms[0]); i++)
				add_noisy(kb, k, arms[i], 4, f * pr[arms[i]], 100 * n + 10 * i + 1);
		}
		skill = bot_policy_scale_skill(&p, kb, key);
		if (agree)
			ck_assert_msg(skill >= 0.9, "level errors that agree: skill %.3f", skill);
		else
			ck_assert_msg(skill == 0, "errors that contradict: skill %.3f", skill);
		bot_kb_free(kb);
	}
}
END_TEST

START_TEST(test_scale_transfer)
{
	/* Neighbouring sizes show that ring/simple is twice as fast as AUTO
	 * says; with share on, an unmeasured context starts on it. */
	struct bot_kb *kb = bot_kb_new();
	float pr[BOT_NARMS];
	struct bot_policy p;
	struct bot_plan pl;
	struct bot_shape s = { 1, 8, 100, 0, 0 };

	fill_prior(pr);
	for (int d = -8; d <= 8; d += 4) {
		uint64_t k = bot_ctx_key(BOT_COLL_ALLREDUCE, (unsigned)(84 + d), 64, 8);

		bot_kb_set_prior(kb, k, pr);
		if (!d)
			continue;
		for (int i = 0; i < 10; i++) {
			bot_kb_add_us(kb, k, 5, noisy(6.0, (uint64_t)(i + 100 * d + 1000)));
			bot_kb_add_us(kb, k, 0, noisy(10.0, (uint64_t)(i + 100 * d + 5000)));
		}
	}
	ck_assert_int_eq(bot_policy_init(&p, "greedy-free"), 0);
	bot_policy_plan(&p, kb, KEY, &s, &pl);
	ck_assert_int_eq(pl.exploit, 5);
	/* with the exploration budget, an arm never measured here is not
	 * trusted over AUTO's on borrowed evidence alone */
	ck_assert_int_eq(bot_policy_init(&p, "greedy"), 0);
	bot_policy_plan(&p, kb, KEY, &s, &pl);
	ck_assert_int_eq(pl.exploit, BOT_ARM_AUTO);
	ck_assert_int_eq(bot_policy_init(&p, "greedy-free"), 0);
	bot_policy_set(&p, "share", 0);
	bot_policy_plan(&p, kb, KEY, &s, &pl);
	ck_assert_int_eq(pl.exploit, 0);
	bot_kb_free(kb);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("policies");
	TCase *tc = tcase_create("core");
	TCase *tp = tcase_create("policy");

	tcase_add_test(tc, test_size_bucket);
	tcase_add_test(tc, test_bucket_lo);
	tcase_add_test(tc, test_key);
	tcase_add_test(tc, test_ctx_format);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_digest);
	tcase_add_test(tc, test_plan_check);
	tcase_add_test(tc, test_q);
	tcase_add_test(tc, test_stats_merge);
	tcase_add_test(tc, test_stats_decay);
	tcase_add_test(tc, test_stats_robust);
	tcase_add_test(tc, test_stats_robust_bits);
	tcase_add_test(tc, test_kb);
	suite_add_tcase(s, tc);

	tcase_set_timeout(tp, 120);
	tcase_add_test(tp, test_policy_registry);
	tcase_add_loop_test(tp, test_policy_no_prior, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_determinism, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_unsupported, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_warm_start, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_converges, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_outliers, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_random_kbs, 0, BOT_NPOLICY);
	tcase_add_test(tp, test_policy_probes_shrink);
	tcase_add_test(tp, test_policy_sweep_covers);
	tcase_add_test(tp, test_scale_transfer);
	tcase_add_test(tp, test_safe_savings);
	tcase_add_loop_test(tp, test_policy_allow_list, 0, BOT_NPOLICY);
	tcase_add_loop_test(tp, test_policy_unmeasurable, 0, BOT_NPOLICY);
	tcase_add_test(tp, test_policy_unmeasurable_can_fail);
	tcase_add_loop_test(tp, test_policy_unmeasurable_auto, 0, BOT_NPOLICY);
	tcase_add_test(tp, test_safe_budget);
	tcase_add_test(tp, test_safe_guess_lumps);
	tcase_add_test(tp, test_safe_auto_remeasured);
	tcase_add_test(tp, test_safe_contested_window);
	tcase_add_test(tp, test_safe_baseline_refresh);
	tcase_add_test(tp, test_safe_refresh_merges_probe);
	tcase_add_test(tp, test_safe_sample_lag);
	tcase_add_test(tp, test_safe_inflight);
	tcase_add_test(tp, test_safe_inflight_exploit);
	tcase_add_test(tp, test_safe_single_comm_lump);
	tcase_add_test(tp, test_safe_fallback_exploit);
	tcase_add_test(tp, test_corrections_common_offset);
	tcase_add_test(tp, test_safe_worst_case_lump);
	tcase_add_test(tp, test_safe_worst_filter);
	tcase_add_test(tp, test_scale_skill);
	tcase_add_test(tp, test_scale_skill_level);
	tcase_add_test(tp, test_explore_spent);
	tcase_add_test(tp, test_safe_rank_calls);
	tcase_add_test(tp, test_safe_worst_range);
	tcase_add_test(tp, test_safe_model_miss);
	suite_add_tcase(s, tp);
	return s;
}

BOT_TEST_MAIN(suite)
