/*
 * test_state.c - per-fabric learned state (common/state.h, formats.md 12),
 * the state directory around it (learn/store.h, learn/lock.h) and the
 * knowledge-base merge it relies on (policies/kb.h).
 *
 * Checks: a state survives encode -> parse -> encode byte for byte; the
 * encoding does not depend on insertion order; every truncation and every
 * flipped byte is rejected, and structurally bad files (with a valid CRC)
 * are rejected with a reason naming the file; merging is order-independent
 * (priors included) and halves an arm whose counters would overflow;
 * version 1 files read as states without lineage;
 * the state directory publishes atomically, keeps the previous snapshot,
 * and refuses a damaged `current`, a snapshot whose bytes do not match its
 * name, and a snapshot of another fabric. Beside it, the compactor's files
 * next to the state: a damaged ledger of the right name and size is
 * rewritten, the metrics textfile is 0644 whatever the umask; -0 is never
 * a prior.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/state.h"
#include "learn/ledger.h"
#include "learn/lock.h"
#include "learn/metrics.h"
#include "learn/store.h"
#include "policies/context.h"
#include "tests/unit/testutil.h"

static char dir[64];

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "state");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

static uint64_t key_of(unsigned coll, unsigned bucket, uint32_t nranks, uint32_t nnodes)
{
	return bot_ctx_key(coll, bucket, nranks, nnodes);
}

/* A small state: three contexts added out of key order, priors, calls,
 * samples on two arms, two sources. */
static void fill(struct bot_state *s, int reverse)
{
	uint64_t keys[3] = { key_of(BOT_COLL_ALLREDUCE, 84, 16, 2), key_of(BOT_COLL_ALLGATHER, 90, 64, 8),
			     key_of(BOT_COLL_ALLREDUCE, 80, 16, 2) };
	float prior[BOT_NARMS];

	ck_assert_int_eq(bot_state_init(s, "h100-ib"), 0);
	for (int a = 0; a < BOT_NARMS; a++)
		prior[a] = -1.0f;
	for (int i = 0; i < 3; i++) {
		int k = reverse ? 2 - i : i;

		prior[bot_arm(1, 0)] = 100.0f + (float)k;
		prior[bot_arm(1, 2)] = 0.0f;
		ck_assert_int_eq(bot_kb_offer_prior(s->kb, keys[k], prior), 0);
		ck_assert_int_eq(bot_kb_add_calls(s->kb, keys[k], 1000 + (uint64_t)k), 0);
		for (int j = 0; j < 5; j++) {
			ck_assert_int_eq(bot_kb_add_us(s->kb, keys[k], bot_arm(1, 0), 90.0 + j), 0);
			ck_assert_int_eq(bot_kb_add_us(s->kb, keys[k], bot_arm(0, 2), 200.0 * (k + 1)), 0);
		}
	}
	ck_assert_int_eq(bot_state_add_source(s, reverse ? 7 : 3), 0);
	ck_assert_int_eq(bot_state_add_source(s, reverse ? 3 : 7), 0);
	ck_assert_int_eq(bot_state_add_source(s, 3), 0);	/* present: no-op */
	s->rounds = 2;
}

static void encode(const struct bot_state *s, uint8_t **b, size_t *n)
{
	char err[BOT_STATE_ERR_MAX];

	ck_assert_msg(bot_state_encode(s, b, n, err, sizeof(err)) == 0, "%s", err);
}

static void fix_crc(uint8_t *b, size_t n)
{
	uint32_t crc = bot_spool_crc32c(0, b, n - BOT_STATE_TRAILER_SIZE);

	for (int i = 0; i < 4; i++)
		b[n - 8 + i] = (uint8_t)(crc >> (8 * i));
}

START_TEST(test_roundtrip_canonical)
{
	struct bot_state a, b, c;
	uint8_t *ba, *bb, *bc;
	size_t na, nb, nc;
	char err[BOT_STATE_ERR_MAX];
	const struct bot_kb_ctx *x;

	fill(&a, 0);
	fill(&b, 1);
	encode(&a, &ba, &na);
	encode(&b, &bb, &nb);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(ba, bb, na);
	ck_assert_msg(bot_state_parse("s.nbs", ba, na, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(c.fabric, "h100-ib");
	ck_assert_uint_eq(c.rounds, 2);
	ck_assert_uint_eq(c.nsources, 2);
	ck_assert(c.src[0] == 3 && c.src[1] == 7);
	ck_assert_uint_eq(bot_kb_count(c.kb), 3);
	x = bot_kb_find(c.kb, key_of(BOT_COLL_ALLGATHER, 90, 64, 8));
	ck_assert_ptr_nonnull(x);
	ck_assert(x->has_prior && x->prior[bot_arm(1, 0)] == 101.0f);
	ck_assert(x->prior[bot_arm(1, 2)] == 0.0f && x->prior[0] == -1.0f);
	ck_assert_uint_eq(x->calls, 1001);
	ck_assert_uint_eq(x->arm[bot_arm(1, 0)].n, 5);
	ck_assert_uint_eq(x->arm[bot_arm(0, 2)].n, 5);
	ck_assert_uint_eq(x->arm[bot_arm(0, 0)].n, 0);
	ck_assert_uint_eq(x->arm[bot_arm(1, 0)].sum_q, bot_kb_find(a.kb, x->key)->arm[bot_arm(1, 0)].sum_q);
	ck_assert_uint_eq(x->arm[bot_arm(1, 0)].sumsq_q, bot_kb_find(a.kb, x->key)->arm[bot_arm(1, 0)].sumsq_q);
	encode(&c, &bc, &nc);
	ck_assert_uint_eq(nc, na);
	ck_assert_mem_eq(bc, ba, na);
	free(ba);
	free(bb);
	free(bc);
	bot_state_free(&a);
	bot_state_free(&b);
	bot_state_free(&c);
}
END_TEST

START_TEST(test_every_truncation_and_flip_rejected)
{
	struct bot_state a, c;
	uint8_t *b;
	size_t n;
	char err[BOT_STATE_ERR_MAX];

	fill(&a, 0);
	encode(&a, &b, &n);
	for (size_t len = 0; len < n; len++) {
		ck_assert_int_eq(bot_state_parse("t.nbs", b, len, &c, err, sizeof(err)), -1);
		ck_assert_ptr_null(c.kb);
		ck_assert_msg(strncmp(err, "t.nbs: ", 7) == 0, "%s", err);
	}
	for (size_t i = 0; i < n; i++) {
		b[i] ^= 0x20;
		ck_assert_msg(bot_state_parse("t.nbs", b, n, &c, err, sizeof(err)) == -1,
			      "flip at %zu accepted", i);
		b[i] ^= 0x20;
	}
	free(b);
	bot_state_free(&a);
}
END_TEST

/* Offsets in fill()'s encoding: header 128, 2 sources, first context. */
#define CTX0 (BOT_STATE_HDR_SIZE + 2 * BOT_STATE_SRC_SIZE)

static void expect_reject(uint8_t *b, size_t n, const char *want)
{
	struct bot_state c;
	char err[BOT_STATE_ERR_MAX];

	fix_crc(b, n);
	ck_assert_int_eq(bot_state_parse("bad.nbs", b, n, &c, err, sizeof(err)), -1);
	ck_assert_ptr_null(c.kb);
	ck_assert_msg(strstr(err, "bad.nbs: ") == err && strstr(err, want), "'%s' lacks '%s'", err,
		      want);
}

START_TEST(test_structural_rejections)
{
	struct bot_state a;
	uint8_t *b, *m;
	size_t n;
	float neg0 = -0.0f;
	uint32_t bits;

	fill(&a, 0);
	encode(&a, &b, &n);
	m = malloc(n + 8);
	ck_assert_ptr_nonnull(m);
#define FRESH() memcpy(m, b, n)
	FRESH(); m[8] = 4;			expect_reject(m, n, "version 4");
	FRESH(); m[8] = 0;			expect_reject(m, n, "version 0");
	FRESH(); m[123] = 1;			expect_reject(m, n, "offset 120: reserved");
	FRESH(); m[12] = 1;			expect_reject(m, n, "unknown flags");
	FRESH(); m[16] = 'H';			expect_reject(m, n, "fabric name");
	FRESH(); m[16 + 10] = 'x';		expect_reject(m, n, "NUL padded");
	FRESH(); m[88] = 3;			expect_reject(m, n, "context 0");	/* 3 sources */
	FRESH(); m[92] = 0;			expect_reject(m, n, "after the last context");
	FRESH(); m[91] = 0x10;			expect_reject(m, n, "over the limits");
	FRESH(); memcpy(m + BOT_STATE_HDR_SIZE, b + BOT_STATE_HDR_SIZE + 8, 8);
						expect_reject(m, n, "not strictly ascending");
	FRESH(); m[CTX0 + 16] = 2;		expect_reject(m, n, "unknown flags");
	FRESH(); m[CTX0 + 22] = 0x40;		expect_reject(m, n, "arms over 20");
	memcpy(&bits, &neg0, 4);
	FRESH(); memcpy(m + CTX0 + 24, &bits, 4);	/* little-endian hosts */
						expect_reject(m, n, "prior entry 0");
	FRESH(); m[CTX0 + 16] = 0;		expect_reject(m, n, "without a prior row");
	/* first arm's histogram: nbins u32 at CTX0 + 124 (after explore at
	 * 108 and summaries at 116), bins after it */
	FRESH(); memset(m + CTX0 + 124, 0, 4);	expect_reject(m, n, "bins");
	FRESH(); memset(m + CTX0 + 128 + 4, 0, 4);	expect_reject(m, n, "zero count");
	FRESH(); m[CTX0 + 128 + 1] = 0x20;	expect_reject(m, n, "bin over 2560");
	/* trailing bytes before the trailer */
	memcpy(m, b, n - 8);
	memset(m + n - 8, 0, 16);
	expect_reject(m, n + 8, "after the last context");
	free(m);
	free(b);
	bot_state_free(&a);
}
END_TEST

START_TEST(test_keys_must_ascend)
{
	struct bot_state a;
	uint8_t *b;
	size_t n;
	uint64_t k0;

	/* Two contexts, no samples: records are exactly CTX_SIZE apart. */
	ck_assert_int_eq(bot_state_init(&a, "f"), 0);
	ck_assert_int_eq(bot_kb_add_calls(a.kb, key_of(BOT_COLL_ALLREDUCE, 80, 8, 1), 1), 0);
	ck_assert_int_eq(bot_kb_add_calls(a.kb, key_of(BOT_COLL_ALLREDUCE, 81, 8, 1), 1), 0);
	encode(&a, &b, &n);
	memcpy(&k0, b + BOT_STATE_HDR_SIZE, 8);
	memcpy(b + BOT_STATE_HDR_SIZE, b + BOT_STATE_HDR_SIZE + BOT_STATE_CTX_SIZE, 8);
	memcpy(b + BOT_STATE_HDR_SIZE + BOT_STATE_CTX_SIZE, &k0, 8);
	expect_reject(b, n, "keys not strictly ascending");
	free(b);
	bot_state_free(&a);
}
END_TEST

START_TEST(test_merge_order_independent)
{
	struct bot_state x, y, ab, ba;
	uint8_t *b1, *b2;
	size_t n1, n2;
	uint64_t k = key_of(BOT_COLL_ALLREDUCE, 84, 16, 2);
	float p1[BOT_NARMS], p2[BOT_NARMS];

	ck_assert_int_eq(bot_state_init(&x, "f"), 0);
	ck_assert_int_eq(bot_state_init(&y, "f"), 0);
	for (int a = 0; a < BOT_NARMS; a++)
		p1[a] = p2[a] = -1.0f;
	p1[3] = 10.0f;
	p2[3] = 12.0f;	/* another NCCL version's row */
	ck_assert_int_eq(bot_kb_offer_prior(x.kb, k, p2), 0);
	ck_assert_int_eq(bot_kb_offer_prior(y.kb, k, p1), 0);
	ck_assert_int_eq(bot_kb_add_us(x.kb, k, 3, 50.0), 0);
	ck_assert_int_eq(bot_kb_add_us(y.kb, k, 3, 50.0), 0);
	ck_assert_int_eq(bot_kb_add_us(y.kb, k + 1, 4, 70.0), 0);
	ck_assert_int_eq(bot_kb_add_calls(x.kb, k, 5), 0);
	ck_assert_int_eq(bot_kb_add_calls(y.kb, k, 7), 0);
	ck_assert_int_eq(bot_state_init(&ab, "f"), 0);
	ck_assert_int_eq(bot_state_init(&ba, "f"), 0);
	ck_assert_int_eq(bot_kb_merge(ab.kb, x.kb), 0);
	ck_assert_int_eq(bot_kb_merge(ab.kb, y.kb), 0);
	ck_assert_int_eq(bot_kb_merge(ba.kb, y.kb), 0);
	ck_assert_int_eq(bot_kb_merge(ba.kb, x.kb), 0);
	encode(&ab, &b1, &n1);
	encode(&ba, &b2, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(b1, b2, n1);
	ck_assert(bot_kb_find(ab.kb, k)->prior[3] == 10.0f);
	ck_assert_uint_eq(bot_kb_find(ab.kb, k)->calls, 12);
	ck_assert_uint_eq(bot_kb_find(ab.kb, k)->arm[3].n, 2);
	free(b1);
	free(b2);
	bot_state_free(&x);
	bot_state_free(&y);
	bot_state_free(&ab);
	bot_state_free(&ba);
}
END_TEST

/* A bin that would pass 2^32-1 halves the merged arm (c >> k for the
 * smallest k that fits), deterministically, instead of blocking the merge;
 * so does an arm that would pass 2^40 samples. */
START_TEST(test_merge_overflow_halves)
{
	struct bot_kb *a = bot_kb_new(), *b = bot_kb_new(), *a2;
	struct bot_kb_ctx *c;
	const struct bot_stats *st;
	struct bot_state x, y;
	uint8_t *b1, *b2;
	size_t n1, n2;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	c = bot_kb_get(a, 1);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[0], 100, UINT32_MAX - 1), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[0], 90, 7), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[0], 80, 1), 0);	/* 1 >> 1 = 0: dropped */
	ck_assert_int_eq(bot_stats_add_q(&c->arm[1], 100, 5), 0);	/* another arm: kept */
	c = bot_kb_get(b, 1);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[0], 100, 2), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[1], 100, 5), 0);
	a2 = bot_kb_clone(a);
	ck_assert_ptr_nonnull(a2);
	ck_assert_int_eq(bot_kb_merge(a, b), 1);	/* one arm halved */
	st = &bot_kb_find(a, 1)->arm[0];
	ck_assert_uint_eq(st->nbins, 2);
	ck_assert_uint_eq(st->bins[0].bin, 90);
	ck_assert_uint_eq(st->bins[0].count, 3);
	ck_assert_uint_eq(st->bins[1].bin, 100);
	ck_assert_uint_eq(st->bins[1].count, (uint32_t)(((uint64_t)UINT32_MAX + 1) >> 1));
	ck_assert_uint_eq(st->n, 3 + (((uint64_t)UINT32_MAX + 1) >> 1));
	ck_assert_uint_eq(st->sum_q, 3 * 90 + 100 * (((uint64_t)UINT32_MAX + 1) >> 1));
	ck_assert_uint_eq(bot_kb_find(a, 1)->arm[1].n, 10);
	/* the same merge again gives the same bytes (deterministic) */
	ck_assert_int_eq(bot_kb_merge(a2, b), 1);
	ck_assert_int_eq(bot_state_init(&x, "f"), 0);
	ck_assert_int_eq(bot_state_init(&y, "f"), 0);
	ck_assert_int_eq(bot_kb_merge(x.kb, a), 0);
	ck_assert_int_eq(bot_kb_merge(y.kb, a2), 0);
	encode(&x, &b1, &n1);
	encode(&y, &b2, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(b1, b2, n1);
	free(b1);
	free(b2);
	bot_state_free(&x);
	bot_state_free(&y);
	bot_kb_free(a2);
	bot_kb_free(b);

	/* over 2^40 samples: 300 bins of 2^32-1 each merged with one more bin
	 * of 2^32-1: halved until the arm holds at most 2^40 */
	b = bot_kb_new();
	ck_assert_ptr_nonnull(b);
	c = bot_kb_get(a, 2);
	for (int q = 0; q < 256; q++)
		ck_assert_int_eq(bot_stats_add_q(&c->arm[3], q, UINT32_MAX), 0);
	c = bot_kb_get(b, 2);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[3], 1000, UINT32_MAX), 0);
	ck_assert_int_eq(bot_kb_merge(a, b), 1);
	st = &bot_kb_find(a, 2)->arm[3];
	ck_assert_uint_le(st->n, BOT_STATS_MAX_N);
	ck_assert_uint_eq(st->nbins, 257);
	ck_assert_uint_eq(st->bins[0].count, UINT32_MAX >> 1);
	ck_assert_uint_eq(st->n, 257 * (uint64_t)(UINT32_MAX >> 1));
	bot_kb_free(a);
	bot_kb_free(b);
}
END_TEST

/* Version 2 carries the lineage and each context's explore; version 1
 * files still read, as a state with all of them 0. */
START_TEST(test_v1_read_v2_lineage)
{
	struct bot_state a, c;
	uint8_t *b1, *b2, *b3;
	size_t n1, n2, n3;
	char err[BOT_STATE_ERR_MAX];
	uint64_t k = key_of(BOT_COLL_ALLGATHER, 90, 64, 8);

	fill(&a, 0);
	ck_assert_msg(bot_state_encode_version(&a, 1, &b1, &n1, err, sizeof(err)) == 0, "%s", err);
	encode(&a, &b2, &n2);
	ck_assert_uint_eq(n2, n1 + 32 + 3 * 16);	/* header +32, 3 contexts +16 */
	ck_assert_uint_eq(b1[8], 1);
	ck_assert_uint_eq(b2[8], 3);
	ck_assert_msg(bot_state_parse("v1.nbs", b1, n1, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(c.version, 1);
	ck_assert(c.parent == 0 && c.ledger == 0 && c.epoch == 0);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->explore, 0);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->arm[bot_arm(1, 0)].n, 5);
	encode(&c, &b3, &n3);			/* read v1, written v3: the same state */
	ck_assert_uint_eq(n3, n2);
	ck_assert_mem_eq(b3, b2, n2);
	free(b3);
	bot_state_free(&c);

	/* lineage and explore round-trip in v2; v1 cannot hold them */
	a.parent = 0x0123456789abcdefull;
	a.ledger = 42;
	a.epoch = 20421;
	((struct bot_kb_ctx *)bot_kb_find(a.kb, k))->explore = 77;
	free(b2);
	encode(&a, &b2, &n2);
	ck_assert_msg(bot_state_parse("v3.nbs", b2, n2, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(c.version, 3);
	ck_assert(c.parent == 0x0123456789abcdefull && c.ledger == 42 && c.epoch == 20421);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->explore, 77);
	encode(&c, &b3, &n3);
	ck_assert_uint_eq(n3, n2);
	ck_assert_mem_eq(b3, b2, n2);
	free(b1);
	ck_assert_int_eq(bot_state_encode_version(&c, 1, &b1, &n1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "version 1 has no"), "%s", err);
	c.parent = c.ledger = c.epoch = 0;
	ck_assert_int_eq(bot_state_encode_version(&c, 1, &b1, &n1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "has no explore"), "%s", err);
	ck_assert_int_eq(bot_state_encode_version(&c, 4, &b1, &n1, err, sizeof(err)), -1);
	free(b2);
	free(b3);
	bot_state_free(&c);

	/* merges keep the larger explore */
	{
		struct bot_kb *x = bot_kb_new(), *y = bot_kb_new();

		ck_assert_ptr_nonnull(x);
		ck_assert_ptr_nonnull(y);
		bot_kb_get(x, k)->explore = 5;
		bot_kb_get(y, k)->explore = 9;
		ck_assert_int_eq(bot_kb_merge(x, y), 0);
		ck_assert_uint_eq(bot_kb_find(x, k)->explore, 9);
		bot_kb_get(y, k)->explore = 3;
		ck_assert_int_eq(bot_kb_merge(x, y), 0);
		ck_assert_uint_eq(bot_kb_find(x, k)->explore, 9);
		bot_kb_free(y);
		y = bot_kb_clone(x);
		ck_assert_uint_eq(bot_kb_find(y, k)->explore, 9);
		bot_kb_free(y);
		y = bot_kb_sorted(x);
		ck_assert_uint_eq(bot_kb_find(y, k)->explore, 9);
		bot_kb_free(x);
		bot_kb_free(y);
	}
	bot_state_free(&a);
}
END_TEST

/* Version 3 adds each context's summaries (formats.md 12); version 2 files
 * read as a state whose summaries are 0, and write back byte for byte in
 * version 2; merges add summaries. */
START_TEST(test_v2_read_v3_summaries)
{
	struct bot_state a, c;
	uint8_t *b2, *b3, *b4;
	size_t n2, n3, n4;
	char err[BOT_STATE_ERR_MAX];
	uint64_t k = key_of(BOT_COLL_ALLGATHER, 90, 64, 8);
	struct bot_kb_ctx *x;

	fill(&a, 0);
	a.parent = 9;
	((struct bot_kb_ctx *)bot_kb_find(a.kb, k))->explore = 5;
	ck_assert_msg(bot_state_encode_version(&a, 2, &b2, &n2, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(b2[8], 2);
	encode(&a, &b3, &n3);
	ck_assert_uint_eq(n3, n2 + 3 * 8);	/* 3 contexts +8 */
	ck_assert_msg(bot_state_parse("v2.nbs", b2, n2, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(c.version, 2);
	ck_assert_uint_eq(c.parent, 9);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->explore, 5);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->summaries, 0);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->arm[bot_arm(1, 0)].n, 5);
	ck_assert_msg(bot_state_encode_version(&c, 2, &b4, &n4, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(n4, n2);
	ck_assert_mem_eq(b4, b2, n2);
	free(b4);
	encode(&c, &b4, &n4);			/* read v2, written v3: the same state */
	ck_assert_uint_eq(n4, n3);
	ck_assert_mem_eq(b4, b3, n3);
	free(b4);

	/* summaries round-trip in v3; v2 and v1 cannot hold them */
	x = bot_kb_get(c.kb, k);
	x->summaries = 3 * 65536 + 1;
	ck_assert_double_eq_tol(bot_kb_calls_per_comm(x), (double)x->calls * 65536 / (3 * 65536 + 1),
				1e-9);
	encode(&c, &b4, &n4);
	bot_state_free(&c);
	ck_assert_msg(bot_state_parse("v3.nbs", b4, n4, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(bot_kb_find(c.kb, k)->summaries, 3 * 65536 + 1);
	free(b4);
	ck_assert_int_eq(bot_state_encode_version(&c, 2, &b4, &n4, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "version 2 has no summaries"), "%s", err);
	c.parent = 0;
	c.ledger = 0;
	c.epoch = 0;
	((struct bot_kb_ctx *)bot_kb_find(c.kb, k))->explore = 0;
	ck_assert_int_eq(bot_state_encode_version(&c, 1, &b4, &n4, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "version 1 has no summaries"), "%s", err);

	/* a state written before v3 holds calls without summaries: merged
	 * with a job that has both, its calls get summaries at the job's
	 * calls per summary (rounded down), both ways round, so old calls
	 * do not count as the new job's */
	{
		uint64_t k2 = key_of(BOT_COLL_ALLREDUCE, 80, 16, 2);
		struct bot_kb *old = bot_kb_new(), *job = bot_kb_new(), *y;

		ck_assert_int_eq(bot_kb_add_calls(old, k2, 100000), 0);
		ck_assert_int_eq(bot_kb_add_counts(job, k2, 640000, 128 * 65536), 0);
		y = bot_kb_clone(old);
		ck_assert_int_eq(bot_kb_merge(y, job), 0);
		ck_assert_uint_eq(bot_kb_find(y, k2)->calls, 740000);
		ck_assert_uint_eq(bot_kb_find(y, k2)->summaries, 148 * 65536);
		ck_assert_double_eq_tol(bot_kb_calls_per_comm(bot_kb_find(y, k2)), 5000, 1e-9);
		bot_kb_free(y);
		y = bot_kb_clone(job);
		ck_assert_int_eq(bot_kb_merge(y, old), 0);
		ck_assert_uint_eq(bot_kb_find(y, k2)->summaries, 148 * 65536);
		bot_kb_free(y);
		/* rounded down: 1 call at a ratio of 3 calls per summary */
		y = bot_kb_new();
		ck_assert_int_eq(bot_kb_add_counts(y, k2, 3, 65536), 0);
		ck_assert_int_eq(bot_kb_add_counts(y, k2, 1, 0), 0);
		ck_assert_uint_eq(bot_kb_find(y, k2)->summaries, 65536 + 21845);
		bot_kb_free(y);
		bot_kb_free(old);
		bot_kb_free(job);
	}

	/* merges add them, saturating */
	{
		struct bot_kb *y = bot_kb_new();

		ck_assert_int_eq(bot_kb_add_counts(y, k, 1, UINT64_MAX - 2), 0);
		ck_assert_int_eq(bot_kb_merge(y, c.kb), 0);
		ck_assert_uint_eq(bot_kb_find(y, k)->summaries, UINT64_MAX);
		bot_kb_free(y);
		y = bot_kb_new();
		ck_assert_int_eq(bot_kb_merge(y, c.kb), 0);
		ck_assert_int_eq(bot_kb_merge(y, c.kb), 0);
		ck_assert_uint_eq(bot_kb_find(y, k)->summaries, 2 * (3 * 65536 + 1));
		ck_assert_uint_eq(bot_kb_find(y, k)->calls, 2 * bot_kb_find(c.kb, k)->calls);
		bot_kb_free(y);
	}
	free(b2);
	free(b3);
	bot_state_free(&c);
	bot_state_free(&a);
}
END_TEST

/* Sources inserted in one batch: sorted, unique, the same as one by one. */
START_TEST(test_add_sources_batch)
{
	struct bot_state a, b;
	uint64_t ids[] = { 9, 3, 7, 3, 1, 12, 9 };

	ck_assert_int_eq(bot_state_init(&a, "f"), 0);
	ck_assert_int_eq(bot_state_init(&b, "f"), 0);
	ck_assert_int_eq(bot_state_add_source(&a, 7), 0);
	ck_assert_int_eq(bot_state_add_source(&a, 2), 0);
	ck_assert_int_eq(bot_state_add_source(&b, 7), 0);
	ck_assert_int_eq(bot_state_add_source(&b, 2), 0);
	ck_assert_int_eq(bot_state_add_sources(&a, ids, 7), 0);
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(bot_state_add_source(&b, ids[i]), 0);
	ck_assert_uint_eq(a.nsources, 6);
	ck_assert_uint_eq(b.nsources, 6);
	ck_assert_mem_eq(a.src, b.src, 6 * sizeof(uint64_t));
	ck_assert_int_eq(bot_state_add_sources(&a, ids, 0), 0);
	ck_assert_uint_eq(a.nsources, 6);
	bot_state_free(&a);
	bot_state_free(&b);
}
END_TEST

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_directory)
{
	struct bot_state a, l;
	char err[BOT_STATE_ERR_MAX], s1[BOT_STATE_NAME_MAX], s2[BOT_STATE_NAME_MAX], got[BOT_STATE_NAME_MAX];
	char path[256];
	struct stat st;
	int fd;

	/* No state yet. */
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), 1);
	ck_assert_uint_eq(bot_kb_count(l.kb), 0);
	bot_state_free(&l);
	ck_assert_int_eq(bot_store_load("/nonexistent/nb", "h100-ib", &l, got, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/nb"));

	fill(&a, 0);
	fd = bot_lock_fabric(dir, "h100-ib", 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	ck_assert_msg(bot_store_publish(dir, &a, s1, err, sizeof(err)) == 0, "%s", err);
	a.rounds = 3;
	/* a state not made from what `current` names is refused */
	ck_assert_int_eq(bot_store_publish(dir, &a, s2, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "made from no snapshot, but `current` names snap-"), "%s", err);
	a.parent = 42;
	ck_assert_int_eq(bot_store_publish(dir, &a, s2, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "made from snap-000000000000002a.nbs, but `current` names"),
		      "%s", err);
	a.parent = bot_state_snap_digest(s1);
	ck_assert_msg(bot_store_publish(dir, &a, s2, err, sizeof(err)) == 0, "%s", err);
	bot_lock_release(fd);
	ck_assert_str_ne(s1, s2);
	/* The previous snapshot stays; no temporary is left. */
	snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, s1);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/h100-ib/.%s.tmp", dir, s2);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, s2);
	ck_assert_uint_eq(l.rounds, 3);
	ck_assert_uint_eq(l.parent, bot_state_snap_digest(s1));
	bot_state_free(&l);
	a.parent = 0;

	/* Another fabric's directory is separate. */
	ck_assert_int_eq(bot_store_load(dir, "roce", &l, got, err, sizeof(err)), 1);
	bot_state_free(&l);
	ck_assert_int_eq(bot_store_load(dir, "Bad/Name", &l, got, err, sizeof(err)), -1);

	/* A damaged pointer. */
	snprintf(path, sizeof(path), "%s/h100-ib/current", dir);
	write_file(path, "snap-zz.nbs\n", 12);
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "current") && strstr(err, "snapshot name"), "%s", err);

	/* A snapshot whose bytes changed after publication. */
	{
		char line[64];
		uint8_t *b;
		size_t n;

		snprintf(line, sizeof(line), "%s\n", s1);
		write_file(path, line, strlen(line));
		encode(&a, &b, &n);
		b[100] ^= 1;
		fix_crc(b, n);
		snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, s1);
		write_file(path, b, n);
		free(b);
	}
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "does not match its name"), "%s", err);

	/* A snapshot of another fabric under this fabric's name. */
	{
		struct bot_state o;
		char so[BOT_STATE_NAME_MAX], line[64], from[256], to[256];

		ck_assert_int_eq(bot_state_init(&o, "roce"), 0);
		fd = bot_lock_fabric(dir, "roce", 1, err, sizeof(err));
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(bot_store_publish(dir, &o, so, err, sizeof(err)), 0);
		bot_lock_release(fd);
		snprintf(from, sizeof(from), "%s/roce/%s", dir, so);
		snprintf(to, sizeof(to), "%s/h100-ib/%s", dir, so);
		ck_assert_int_eq(rename(from, to), 0);
		snprintf(line, sizeof(line), "%s\n", so);
		snprintf(path, sizeof(path), "%s/h100-ib/current", dir);
		write_file(path, line, strlen(line));
		bot_state_free(&o);
	}
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds fabric 'roce'"), "%s", err);
	bot_state_free(&a);
}
END_TEST

START_TEST(test_fabric_names)
{
	ck_assert(bot_state_fabric_ok("h100-ib-ndr"));
	ck_assert(bot_state_fabric_ok("a"));
	ck_assert(bot_state_fabric_ok("0.x_y-z"));
	ck_assert(!bot_state_fabric_ok(""));
	ck_assert(!bot_state_fabric_ok(".hidden"));
	ck_assert(!bot_state_fabric_ok("-x"));
	ck_assert(!bot_state_fabric_ok("Upper"));
	ck_assert(!bot_state_fabric_ok("a/b"));
	ck_assert(!bot_state_fabric_ok(".."));
	ck_assert(bot_state_fabric_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	ck_assert(!bot_state_fabric_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}
END_TEST

START_TEST(test_encode_refuses_over_2_40_samples)
{
	struct bot_state a;
	struct bot_kb_ctx *c;
	uint8_t *b = (uint8_t *)1;
	size_t n = 1;
	char err[BOT_STATE_ERR_MAX];

	ck_assert_int_eq(bot_state_init(&a, "f"), 0);
	c = bot_kb_get(a.kb, 42);
	ck_assert_ptr_nonnull(c);
	for (int q = 0; q < 257; q++)	/* 257 x (2^32 - 1) > 2^40 */
		ck_assert_int_eq(bot_stats_add_q(&c->arm[2], q, UINT32_MAX), 0);
	ck_assert_int_eq(bot_state_encode(&a, &b, &n, err, sizeof(err)), -1);
	ck_assert_ptr_null(b);
	ck_assert_msg(strstr(err, "000000000000002a arm 2: more than 2^40"), "%s", err);
	bot_state_free(&a);
}
END_TEST

/* Keys the context key rules forbid (section 3) are not contexts. */
START_TEST(test_invalid_keys_rejected)
{
	static const uint64_t bad_keys[] = {
		5,					/* 0 nodes */
		(uint64_t)BOT_NCOLL << 56 | 1ull << 32 | 1,	/* collective 5 */
		1ull << 32,				/* 0 ranks */
		3ull << 32 | 2,				/* 3 nodes, 2 ranks */
	};

	for (unsigned i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++) {
		struct bot_state a;
		uint8_t *b;
		size_t n;

		ck_assert_int_eq(bot_state_init(&a, "f"), 0);
		ck_assert_int_eq(bot_kb_add_calls(a.kb, bad_keys[i], 1), 0);
		encode(&a, &b, &n);
		expect_reject(b, n, "is not a context");
		free(b);
		bot_state_free(&a);
	}
}
END_TEST

/* Hostile or damaged state directories fail cleanly, never hang or follow. */
START_TEST(test_directory_hazards)
{
	struct bot_state a, l;
	char err[BOT_STATE_ERR_MAX], got[BOT_STATE_NAME_MAX], path[256], other[256];
	int fd;

	/* a FIFO as `current` (an open without O_NONBLOCK would hang) */
	snprintf(path, sizeof(path), "%s/f1", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/f1/current", dir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(bot_store_load(dir, "f1", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "f1/current: not a regular file"), "%s", err);

	/* the fabric directory as a symbolic link: not followed */
	snprintf(other, sizeof(other), "%s/victim", dir);
	ck_assert_int_eq(mkdir(other, 0755), 0);
	snprintf(path, sizeof(path), "%s/f2", dir);
	ck_assert_int_eq(symlink("victim", path), 0);
	ck_assert_int_eq(bot_store_load(dir, "f2", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "symbolic link"), "%s", err);
	ck_assert_int_eq(bot_lock_fabric(dir, "f2", 1, err, sizeof(err)), -1);
	snprintf(path, sizeof(path), "%s/victim/.lock", dir);
	ck_assert_int_eq(access(path, F_OK), -1);

	/* snapshots with a lineage without `current`: not "no state yet",
	 * and no publish starts the fabric over */
	fill(&a, 0);
	strcpy(a.fabric, "f3");
	fd = bot_lock_fabric(dir, "f3", 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	ck_assert_int_eq(bot_store_publish(dir, &a, got, err, sizeof(err)), 0);
	a.parent = bot_state_snap_digest(got);
	a.rounds++;
	ck_assert_int_eq(bot_store_publish(dir, &a, got, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/f3/current", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(bot_store_load(dir, "f3", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds snapshots but no `current`"), "%s", err);
	a.parent = 0;
	ck_assert_int_eq(bot_store_publish(dir, &a, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds snapshots but no `current`"), "%s", err);
	bot_lock_release(fd);
	/* a version 1 snapshot alone without `current`: refused too (v1 has
	 * no parent to tell a first snapshot) */
	{
		char name[BOT_STATE_NAME_MAX], p2[256];
		uint8_t *b;
		size_t n;

		strcpy(a.fabric, "f5");
		ck_assert_int_eq(bot_state_encode_version(&a, 1, &b, &n, err, sizeof(err)), 0);
		bot_state_snap_name(b, n, name);
		snprintf(p2, sizeof(p2), "%s/f5", dir);
		ck_assert_int_eq(mkdir(p2, 0755), 0);
		snprintf(p2, sizeof(p2), "%s/f5/%s", dir, name);
		write_file(p2, b, n);
		free(b);
		ck_assert_int_eq(bot_store_load(dir, "f5", &l, got, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "holds snapshots but no `current`"), "%s", err);
		/* and read through `current`, a v1 snapshot loads */
		snprintf(p2, sizeof(p2), "%s/f5/current", dir);
		snprintf(path, sizeof(path), "%s\n", name);
		write_file(p2, path, strlen(path));
		ck_assert_msg(bot_store_load(dir, "f5", &l, got, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(l.version, 1);
		ck_assert_uint_eq(l.rounds, a.rounds);
		bot_state_free(&l);
	}

	/* a snapshot with a second hard link */
	strcpy(a.fabric, "f4");
	fd = bot_lock_fabric(dir, "f4", 1, err, sizeof(err));
	ck_assert_int_eq(bot_store_publish(dir, &a, got, err, sizeof(err)), 0);
	bot_lock_release(fd);
	snprintf(path, sizeof(path), "%s/f4/%s", dir, got);
	snprintf(other, sizeof(other), "%s/hardlink", dir);
	ck_assert_int_eq(link(path, other), 0);
	ck_assert_int_eq(bot_store_load(dir, "f4", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "hard links"), "%s", err);
	bot_state_free(&a);
}
END_TEST

/* snap-*.nbs files (and, with tmps, other dot files but .lock) in dir/fabric. */
static int count_snaps(const char *fabric, int tmps)
{
	char path[256];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, fabric);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (tmps ? (e->d_name[0] == '.' && strcmp(e->d_name, ".") &&
			    strcmp(e->d_name, "..") && strcmp(e->d_name, ".lock")) :
			   bot_state_snap_name_ok(e->d_name))
			n++;
	closedir(d);
	return n;
}

/* Publish s as the next snapshot after *prev ("" first): parent, rounds. */
static void publish_next(struct bot_state *s, char prev[BOT_STATE_NAME_MAX], unsigned keep)
{
	char err[BOT_STATE_ERR_MAX];

	s->parent = bot_state_snap_digest(prev);
	s->rounds++;
	ck_assert_msg(bot_store_publish_keep(dir, s, keep, prev, err, sizeof(err)) == 0, "%s", err);
}

/* The name a state's snapshot gets; with put, the snapshot written under
 * that name into its fabric's directory (which exists), as a writer killed
 * before `current` leaves it. */
static void snap_of_state(const struct bot_state *s, char name[BOT_STATE_NAME_MAX], int put)
{
	char path[512];
	uint8_t *b;
	size_t n;

	encode(s, &b, &n);
	bot_state_snap_name(b, n, name);
	if (put) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, s->fabric, name);
		write_file(path, b, n);
	}
	free(b);
}

static void snap_name_of_state(const struct bot_state *s, char name[BOT_STATE_NAME_MAX])
{
	snap_of_state(s, name, 0);
}

/* A first publish that failed at .current.tmp (disk full) leaves no state
 * (it said nothing was published); one killed at any step leaves either no
 * state (killed before the snapshot's rename) or the snapshot as the state, read by every reader and never refused and
 * never published over: the next writer completes the publish
 * (bot_store_complete) and leaves no temporary. A `current` deleted over a
 * fabric's one, first snapshot is the same case: nothing learned is lost. */
START_TEST(test_interrupted_first_publish)
{
	static const char *steps[] = { "publish-snapshot-tmp", "publish-after-snapshot",
				       "publish-current-tmp", "publish-after-current" };
	struct bot_state a, l;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], got[BOT_STATE_NAME_MAX];
	char want[BOT_STATE_NAME_MAX], path[256];

	fill(&a, 0);
	strcpy(a.fabric, "g0");
	snap_name_of_state(&a, want);
	snprintf(path, sizeof(path), "%s/g0", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/g0/.current.tmp", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);	/* `current` cannot be written */
	ck_assert_int_eq(bot_store_publish(dir, &a, snap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ".current.tmp"), "%s", err);
	/* a failure says nothing was published, and nothing was: the snapshot
	 * is taken back (left alone, it would be the state) */
	ck_assert_int_eq(count_snaps("g0", 0), 0);
	ck_assert_int_eq(bot_store_load(dir, "g0", &l, got, err, sizeof(err)), 1);
	ck_assert_str_eq(got, "");
	bot_state_free(&l);
	/* one killed there leaves the snapshot, without `current` */
	{
		char p2[256];
		uint8_t *b;
		size_t n;

		encode(&a, &b, &n);
		snprintf(p2, sizeof(p2), "%s/g0/%s", dir, want);
		write_file(p2, b, n);
		free(b);
	}
	ck_assert_int_eq(count_snaps("g0", 0), 1);
	ck_assert_int_eq(bot_store_load(dir, "g0", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(bot_kb_count(l.kb), bot_kb_count(a.kb));
	ck_assert_uint_eq(l.rounds, a.rounds);
	bot_state_free(&l);
	/* a writer completing it cannot write `current` yet: an error, and the
	 * snapshot stays the state */
	ck_assert_int_eq(bot_store_complete(dir, "g0", got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ".current.tmp"), "%s", err);
	ck_assert_int_eq(bot_store_load(dir, "g0", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, want);
	bot_state_free(&l);
	/* another first state would start the fabric over: refused */
	a.rounds = 5;
	ck_assert_int_eq(bot_store_publish(dir, &a, snap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "first publish was interrupted") && strstr(err, want), "%s",
		      err);
	ck_assert_int_eq(count_snaps("g0", 0), 1);
	/* a state made from it that fails at `current` too (as the writer's
	 * completion did) is taken back: the fabric still reads the first
	 * snapshot, never a lineage without `current` */
	a.parent = bot_state_snap_digest(want);
	ck_assert_int_eq(bot_store_publish(dir, &a, snap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ".current.tmp"), "%s", err);
	ck_assert_int_eq(count_snaps("g0", 0), 1);
	ck_assert_int_eq(bot_store_load(dir, "g0", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, want);
	bot_state_free(&l);
	ck_assert_int_eq(rmdir(path), 0);	/* space again */
	/* a state made from it publishes, `current` then names the new one */
	a.parent = bot_state_snap_digest(want);
	ck_assert_msg(bot_store_publish(dir, &a, snap, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(bot_store_load(dir, "g0", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, snap);
	ck_assert_uint_eq(l.parent, bot_state_snap_digest(want));
	bot_state_free(&l);
	ck_assert_int_eq(count_snaps("g0", 0), 2);	/* the chain: new, and its parent */
	ck_assert_int_eq(count_snaps("g0", 1), 0);
	a.parent = 0;
	a.rounds = 1;

	/* killed (SIGKILL) at each step of a first publish */
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char fab[8];
		pid_t pid;
		int status;

		snprintf(fab, sizeof(fab), "k%u", i);
		strcpy(a.fabric, fab);
		snap_name_of_state(&a, want);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			setenv("NCCL_BOT_TEST_CRASH_AT", steps[i], 1);
			bot_store_publish(dir, &a, snap, err, sizeof(err));
			_exit(0);	/* not reached when the hook works */
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "%s: not killed",
			      steps[i]);
		/* before the snapshot's rename: no state; after it: the state */
		ck_assert_int_eq(bot_store_load(dir, fab, &l, got, err, sizeof(err)),
				 i == 0 ? 1 : 0);
		ck_assert_str_eq(got, i == 0 ? "" : want);
		bot_state_free(&l);
		/* the next writer: completes (1), or finds nothing to (0) */
		ck_assert_int_eq(bot_store_complete(dir, fab, got, err, sizeof(err)),
				 i == 1 || i == 2 ? 1 : 0);
		if (i == 0) {	/* nothing to complete: the retry publishes */
			ck_assert_msg(bot_store_publish(dir, &a, snap, err, sizeof(err)) == 0,
				      "%s: %s", steps[i], err);
		}
		ck_assert_int_eq(bot_store_load(dir, fab, &l, got, err, sizeof(err)), 0);
		ck_assert_str_eq(got, want);
		ck_assert_uint_eq(l.rounds, a.rounds);
		bot_state_free(&l);
		ck_assert_int_eq(count_snaps(fab, 0), 1);
		ck_assert_msg(count_snaps(fab, 1) == 0, "%s: a temporary is left", steps[i]);
		snprintf(path, sizeof(path), "%s/%s/current", dir, fab);
		ck_assert_msg(access(path, F_OK) == 0, "%s: no `current`", steps[i]);
	}

	/* `current` deleted over the one, first snapshot: its state is read */
	snprintf(path, sizeof(path), "%s/k3/current", dir);
	ck_assert_int_eq(unlink(path), 0);
	strcpy(a.fabric, "k3");
	snap_name_of_state(&a, want);
	ck_assert_int_eq(bot_store_load(dir, "k3", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, want);
	bot_state_free(&l);

	/* two first snapshots without `current` (an older build's two
	 * interrupted first publishes): refused, naming the way out */
	{
		char other[BOT_STATE_NAME_MAX];

		a.rounds = 7;
		snap_of_state(&a, other, 1);
		ck_assert_int_eq(bot_store_load(dir, "k3", &l, got, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "several first snapshots") && strstr(err, "--to"), "%s",
			      err);
		ck_assert_int_eq(bot_store_complete(dir, "k3", got, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "several first snapshots"), "%s", err);
		a.parent = 0;
		ck_assert_int_eq(bot_store_publish(dir, &a, snap, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "several first snapshots"), "%s", err);
		ck_assert_int_eq(count_snaps("k3", 0), 2);
		/* the admin names one: it is the state; the other goes at the
		 * next publish */
		ck_assert_msg(bot_store_rollback(dir, "k3", other, 0, NULL, got, err,
						 sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(bot_store_load(dir, "k3", &l, got, err, sizeof(err)), 0);
		ck_assert_str_eq(got, other);
		ck_assert_uint_eq(l.rounds, 7);
		bot_state_free(&l);
	}
	bot_state_free(&a);
}
END_TEST

/* Two first snapshots and a snapshot made from one of them, without
 * `current`: a lineage whose `current` is gone (restore it), never "several
 * first snapshots" (rolling back to one of them would drop the lineage),
 * whatever order the names sort in. */
START_TEST(test_lineage_beside_first_snapshots)
{
	struct bot_state a, l;
	char err[BOT_STATE_ERR_MAX], f1[BOT_STATE_NAME_MAX], f2[BOT_STATE_NAME_MAX];
	char c[BOT_STATE_NAME_MAX], got[BOT_STATE_NAME_MAX], path[256];
	uint8_t *b;
	size_t n;

	fill(&a, 0);
	strcpy(a.fabric, "lf");
	snprintf(path, sizeof(path), "%s/lf", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	a.rounds = 1;
	snap_of_state(&a, f1, 1);
	a.rounds = 2;
	snap_of_state(&a, f2, 1);
	/* the child named after both first snapshots (listed last) */
	a.parent = bot_state_snap_digest(f1);
	for (a.rounds = 3;; a.rounds++) {
		encode(&a, &b, &n);
		bot_state_snap_name(b, n, c);
		if (strcmp(c, f1) > 0 && strcmp(c, f2) > 0)
			break;
		free(b);
	}
	snprintf(path, sizeof(path), "%s/lf/%s", dir, c);
	write_file(path, b, n);
	free(b);
	ck_assert_int_eq(bot_store_load(dir, "lf", &l, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds snapshots but no `current`") &&
		      !strstr(err, "several first"), "%s", err);
	ck_assert_int_eq(bot_store_complete(dir, "lf", got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds snapshots but no `current`"), "%s", err);
	bot_state_free(&a);
}
END_TEST

/* A child that loads `fabric` stopping (SIGSTOP) at test hook `hook`, and
 * writes what it loaded (or its error) to the pipe p (made here; the
 * parent's read end is p[0]). Its pid. */
static pid_t reader_stopping_at(const char *hook, const char *fabric, int p[2])
{
	char at[64];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct bot_state l;
		char err[BOT_STATE_ERR_MAX], got[BOT_STATE_NAME_MAX];
		int rc;

		snprintf(at, sizeof(at), "stop:%s", hook);
		setenv("NCCL_BOT_TEST_CRASH_AT", at, 1);
		rc = bot_store_load(dir, fabric, &l, got, err, sizeof(err));
		if (write(p[1], rc == 0 ? got : err, strlen(rc == 0 ? got : err) + 1) < 0)
			_exit(2);
		_exit(rc == 0 ? 0 : 1);
	}
	close(p[1]);
	return pid;
}

/* The reader of reader_stopping_at, exited with status st: it loaded
 * snapshot `want`. */
static void reader_loaded(int fd, int st, const char *want)
{
	char msg[BOT_STATE_ERR_MAX] = "";
	ssize_t r = read(fd, msg, sizeof(msg) - 1);

	ck_assert_int_ge(r, 0);
	close(fd);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader refused: %s", msg);
	ck_assert_str_eq(msg, want);
}

/* A reader without the lock that found no `current` while a writer
 * completed an interrupted first publish and published after it (a lineage
 * and `current` by the time it lists the snapshots) reads again: the new
 * state, never "holds snapshots but no `current`: restore it", which would
 * send an admin to roll a sound fabric back. Made to happen with the test
 * hook's stop (no sleeps). */
START_TEST(test_reader_races_completion)
{
	struct bot_state a;
	char err[BOT_STATE_ERR_MAX], first[BOT_STATE_NAME_MAX], snap[BOT_STATE_NAME_MAX];
	char got[BOT_STATE_NAME_MAX], p2[256];
	pid_t pid;
	int st, p[2];

	fill(&a, 0);
	strcpy(a.fabric, "race");
	snprintf(p2, sizeof(p2), "%s/race", dir);
	ck_assert_int_eq(mkdir(p2, 0755), 0);
	snap_of_state(&a, first, 1);	/* a first publish killed before `current` */
	pid = reader_stopping_at("load-without-current", "race", p);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert_msg(WIFSTOPPED(st), "the reader did not stop at the hook (status %d)", st);
	/* meanwhile, a writer: completes, publishes after it */
	ck_assert_int_eq(bot_store_complete(dir, "race", got, err, sizeof(err)), 1);
	a.parent = bot_state_snap_digest(first);
	a.rounds++;
	ck_assert_msg(bot_store_publish(dir, &a, snap, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	reader_loaded(p[0], st, snap);
	bot_state_free(&a);
}
END_TEST

/* A reader without the lock beside a writer publishing as fast as it can:
 * every load succeeds. `current` renamed over, or a snapshot pruned, after
 * the reader opened it has 0 links, and the reader refused it ("has 0 hard
 * links (want 1)") until 2026-12-05. */
START_TEST(test_reader_races_publishes)
{
	struct bot_state a, l;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], got[BOT_STATE_NAME_MAX];
	char first[BOT_STATE_ERR_MAX] = "";
	unsigned long loads = 0, failed = 0;
	struct timespec t0, t;
	pid_t pid;
	int st;

	fill(&a, 0);
	strcpy(a.fabric, "busy");
	ck_assert_msg(bot_store_publish(dir, &a, snap, err, sizeof(err)) == 0, "%s", err);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (;;) {
			a.parent = bot_state_snap_digest(snap);
			a.rounds++;
			if (bot_store_publish(dir, &a, snap, err, sizeof(err)) < 0)
				_exit(1);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int rc = bot_store_load(dir, "busy", &l, got, err, sizeof(err));

		loads++;
		if (rc < 0 && !failed++)
			strcpy(first, err);
		if (rc >= 0)
			bot_state_free(&l);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1500000000L);
	ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0);	/* the writer still writes */
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(failed == 0, "%lu of %lu loads failed, the first: %s", failed, loads, first);
	bot_state_free(&a);
}
END_TEST

/* A reader that finds the snapshot `current` named pruned reads again, and
 * again: a second race (two more publishes, retention 2) was refused as
 * "`current` names ..., which is not there" until 2026-12-05. */
START_TEST(test_reader_races_prunes_twice)
{
	struct bot_state a;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX];
	unsigned stops = 0;
	pid_t pid;
	int st, p[2];

	fill(&a, 0);
	strcpy(a.fabric, "prunes");
	ck_assert_msg(bot_store_publish_keep(dir, &a, 2, snap, err, sizeof(err)) == 0, "%s", err);
	pid = reader_stopping_at("load-snapshot", "prunes", p);
	for (;;) {
		ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
		if (!WIFSTOPPED(st))
			break;
		/* at each of its first two reads, two publishes prune what it read */
		for (int i = 0; i < 2 && stops < 2; i++) {
			a.parent = bot_state_snap_digest(snap);
			a.rounds++;
			ck_assert_msg(bot_store_publish_keep(dir, &a, 2, snap, err, sizeof(err)) == 0,
				      "%s", err);
		}
		stops++;
		ck_assert_int_eq(kill(pid, SIGCONT), 0);
	}
	reader_loaded(p[0], st, snap);
	ck_assert_uint_eq(stops, 3);
	bot_state_free(&a);
}
END_TEST

/* After a publish, `current` and its K-1 nearest ancestors are kept; other
 * snapshots (older ones, orphans) are removed. */
START_TEST(test_retention)
{
	struct bot_state a, o;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "", names[12][BOT_STATE_NAME_MAX];
	char orphan[BOT_STATE_NAME_MAX], path[512];
	struct bot_store_entry *v;
	size_t n;

	fill(&a, 0);
	for (int i = 0; i < 12; i++) {
		publish_next(&a, snap, 0);
		strcpy(names[i], snap);
	}
	ck_assert_int_eq(count_snaps("h100-ib", 0), BOT_STORE_RETENTION_DEFAULT);
	for (int i = 0; i < 12; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, names[i]);
		ck_assert_int_eq(stat(path, &st) == 0, i >= 12 - BOT_STORE_RETENTION_DEFAULT);
	}
	/* the chain: current first, then the parents kept, then one removed */
	ck_assert_int_eq(bot_store_history(dir, "h100-ib", 100, &v, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, BOT_STORE_RETENTION_DEFAULT + 1);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(v[i].name, names[11 - i]);
		ck_assert_int_eq(v[i].present, i < BOT_STORE_RETENTION_DEFAULT);
	}
	ck_assert_uint_eq(v[0].hdr.rounds, a.rounds);
	ck_assert_uint_eq(v[0].hdr.parent, bot_state_snap_digest(names[10]));
	free(v);
	ck_assert_int_eq(bot_store_history(dir, "h100-ib", 3, &v, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 3);
	free(v);
	ck_assert_int_eq(bot_store_history(dir, "nothing", 3, &v, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 0);

	/* a snapshot off the chain (another history's) goes at the next publish */
	ck_assert_int_eq(bot_state_init(&o, "h100-ib"), 0);
	o.rounds = 99;
	{
		uint8_t *b;
		size_t len;

		encode(&o, &b, &len);
		bot_state_snap_name(b, len, orphan);
		snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, orphan);
		write_file(path, b, len);
		free(b);
		snprintf(path, sizeof(path), "%s/h100-ib/.snap-0123456789abcdef.nbs.tmp", dir);
		write_file(path, "x", 1);
	}
	bot_state_free(&o);
	ck_assert_int_eq(count_snaps("h100-ib", 0), BOT_STORE_RETENTION_DEFAULT + 1);
	publish_next(&a, snap, 2);	/* a retention of 2: current and its parent */
	ck_assert_int_eq(count_snaps("h100-ib", 0), 2);
	ck_assert_int_eq(count_snaps("h100-ib", 1), 0);
	snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, names[11]);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(bot_store_prune(dir, "h100-ib", 1, err, sizeof(err)), -1);
	ck_assert_int_eq(bot_store_publish_keep(dir, &a, 1, snap, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "retention 1"), "%s", err);
	ck_assert_int_eq(bot_store_prune(dir, "none", 2, err, sizeof(err)), 0);
	bot_state_free(&a);
}
END_TEST

/* Rollback moves `current` back along the chain, by steps or by name, under
 * the lock; it refuses what is not there or not this fabric's. */
START_TEST(test_rollback)
{
	struct bot_state a, l, o;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "", names[4][BOT_STATE_NAME_MAX];
	char got[BOT_STATE_NAME_MAX], path[512], other[BOT_STATE_NAME_MAX];
	char want[3 * BOT_STATE_NAME_MAX + 128];

	fill(&a, 0);
	for (int i = 0; i < 4; i++) {
		publish_next(&a, snap, 0);
		strcpy(names[i], snap);
	}
	ck_assert_msg(bot_store_rollback(dir, "h100-ib", NULL, 1, NULL, got, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_str_eq(got, names[2]);
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, names[2]);
	bot_state_free(&l);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 2, NULL, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, names[0]);
	/* past the first snapshot */
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 1, NULL, got, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s has no parent: nothing to roll back to", names[0]);
	ck_assert_msg(strstr(err, want), "%s", err);
	ck_assert_str_eq(got, "");
	/* by name, forward again (nothing was removed) */
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", names[3], 0, NULL, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, names[3]);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", names[3], 0, NULL, got, err, sizeof(err)), 0);
	/* more steps than the chain holds: how many it does, where it begins */
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 5, NULL, got, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "5 step(s) back from %s: only 3 older snapshot(s) (the chain "
		 "begins at %s)", names[3], names[0]);
	ck_assert_msg(strstr(err, want), "%s", err);
	/* not there, not a name, not this fabric's */
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", "snap-0000000000000001.nbs", 0, NULL, got,
					    err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no such snapshot"), "%s", err);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", "../current", 0, NULL, got, err,
					    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a snapshot name"), "%s", err);
	ck_assert_int_eq(bot_state_init(&o, "roce"), 0);
	other[0] = 0;
	publish_next(&o, other, 0);
	{
		char from[256];

		snprintf(from, sizeof(from), "%s/roce/%s", dir, other);
		snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, other);
		ck_assert_int_eq(rename(from, path), 0);
	}
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", other, 0, NULL, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "holds fabric 'roce'"), "%s", err);
	ck_assert_int_eq(bot_store_rollback(dir, "nosuch", NULL, 1, NULL, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no such fabric directory"), "%s", err);
	bot_state_free(&o);
	/* a state made after a rollback descends from the target */
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 2, NULL, got, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, names[1]);
	l.parent = bot_state_snap_digest(got);
	ck_assert_int_eq(bot_kb_add_calls(l.kb, key_of(BOT_COLL_ALLREDUCE, 84, 16, 2), 1), 0);
	ck_assert_msg(bot_store_publish(dir, &l, snap, err, sizeof(err)) == 0, "%s", err);
	bot_state_free(&l);
	/* `current` lost: restored by name, not by steps */
	snprintf(path, sizeof(path), "%s/h100-ib/current", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 1, NULL, got, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no `current` to step back from"), "%s", err);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", snap, 0, NULL, got, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_store_load(dir, "h100-ib", &l, got, err, sizeof(err)), 0);
	ck_assert_str_eq(got, snap);
	bot_state_free(&l);
	/* the lock is taken: busy while another writer holds it */
	{
		struct bot_lock held;
		int fd = bot_lock_fabric(dir, "h100-ib", 1, err, sizeof(err));

		ck_assert_int_ge(fd, 0);
		bot_lock_init_held(&held);
		ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 1, &held, got, err,
						    sizeof(err)), 0);
		ck_assert_str_eq(got, names[1]);
		bot_lock_release(fd);
	}
	/* the parent pruned (retention): said so, with where */
	snprintf(path, sizeof(path), "%s/h100-ib/%s", dir, names[0]);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(bot_store_rollback(dir, "h100-ib", NULL, 1, NULL, got, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "1 step(s) back from %s: only 0 older snapshot(s) kept (the "
		 "chain was pruned at %s)", names[1], names[0]);
	ck_assert_msg(strstr(err, want), "%s", err);
	bot_state_free(&a);
}
END_TEST

/* Review finding 13: a ledger file of the right name and size but damaged
 * bytes is rewritten, not taken for the same ledger. */
START_TEST(test_ledger_write_repairs)
{
	char path[512], err[BOT_LEDGER_ERR_MAX], name[BOT_LEDGER_NAME_MAX], full[700];
	struct bot_ledger l, m;
	uint64_t d1, d2;
	int ldir;
	FILE *f;

	ldir = bot_ledger_open_dir(dir, "f1", path, sizeof(path), err, sizeof(err));
	ck_assert_msg(ldir >= 0, "%s", err);
	ck_assert_int_eq(bot_ledger_init(&l, "f1"), 0);
	bot_ledger_set_window(&l, 10);
	for (uint64_t i = 0; i < 100; i++)
		ck_assert_int_eq(bot_ledger_add_id(&l, bot_mix64(i), 7), 0);
	ck_assert_msg(bot_ledger_write(ldir, path, &l, &d1, err, sizeof(err)) == 0, "%s", err);
	/* one byte flipped in place: same name, same size */
	bot_ledger_file_name(d1, name);
	snprintf(full, sizeof(full), "%s/%s", path, name);
	f = fopen(full, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 200, SEEK_SET), 0);
	ck_assert_int_eq(fputc(0x5a, f), 0x5a);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(bot_ledger_load(ldir, path, "f1", d1, &m, err, sizeof(err)), -1);
	/* the next write of the same ledger repairs it */
	ck_assert_msg(bot_ledger_write(ldir, path, &l, &d2, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d2, d1);
	ck_assert_msg(bot_ledger_load(ldir, path, "f1", d1, &m, err, sizeof(err)) == 0, "%s", err);
	ck_assert(bot_ledger_has(&m, bot_mix64(42)));
	bot_ledger_free(&m);
	bot_ledger_free(&l);
	close(ldir);
}
END_TEST

/* Review finding 16: the metrics textfile is 0644 whatever the umask (a
 * collector running as another user reads it). */
START_TEST(test_metrics_mode)
{
	char err[512], path[256];
	struct stat st;
	mode_t old = umask(077);
	int rc = bot_metrics_write(dir, "x.prom", "a 1\n", 4, err, sizeof(err));

	umask(old);
	ck_assert_msg(rc == 0, "%s", err);
	snprintf(path, sizeof(path), "%s/x.prom", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(st.st_size, 4);
}
END_TEST

/* Review finding 15: -0 is never a prior. The knowledge base stores 0 for
 * it, and a snapshot holding one is refused (formats.md 12: "never -0"). */
START_TEST(test_negative_zero_prior)
{
	struct bot_state s, t;
	uint64_t key = key_of(BOT_COLL_ALLREDUCE, 84, 16, 2);
	float prior[BOT_NARMS];
	const struct bot_kb_ctx *c;
	char err[BOT_STATE_ERR_MAX];
	uint32_t bits;
	uint8_t *b;
	size_t n;

	for (int a = 0; a < BOT_NARMS; a++)
		prior[a] = -1.0f;
	prior[0] = -0.0f;
	prior[1] = 12.5f;
	ck_assert_int_eq(bot_state_init(&s, "f1"), 0);
	ck_assert_int_eq(bot_kb_set_prior(s.kb, key, prior), 0);
	c = bot_kb_find(s.kb, key);
	ck_assert_ptr_nonnull(c);
	memcpy(&bits, &c->prior[0], sizeof(bits));
	ck_assert_uint_eq(bits, 0);
	/* a snapshot with -0 in the row: refused, naming the entry */
	encode(&s, &b, &n);
	memcpy(&bits, b + BOT_STATE_HDR_SIZE + 24, sizeof(bits));
	ck_assert_uint_eq(bits, 0);
	b[BOT_STATE_HDR_SIZE + 24 + 3] = 0x80;
	fix_crc(b, n);
	ck_assert_int_eq(bot_state_parse("x.nbs", b, n, &t, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "prior entry 0 is not -1 or a finite value >= 0"), "%s", err);
	free(b);
	bot_state_free(&s);
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip_canonical);
	tcase_add_test(tc, test_every_truncation_and_flip_rejected);
	tcase_add_test(tc, test_structural_rejections);
	tcase_add_test(tc, test_keys_must_ascend);
	tcase_add_test(tc, test_invalid_keys_rejected);
	tcase_add_test(tc, test_merge_order_independent);
	tcase_add_test(tc, test_merge_overflow_halves);
	tcase_add_test(tc, test_v1_read_v2_lineage);
	tcase_add_test(tc, test_v2_read_v3_summaries);
	tcase_add_test(tc, test_add_sources_batch);
	tcase_add_test(tc, test_directory);
	tcase_add_test(tc, test_directory_hazards);
	tcase_add_test(tc, test_interrupted_first_publish);
	tcase_add_test(tc, test_reader_races_completion);
	tcase_add_test(tc, test_reader_races_publishes);
	tcase_add_test(tc, test_reader_races_prunes_twice);
	tcase_add_test(tc, test_lineage_beside_first_snapshots);
	tcase_add_test(tc, test_retention);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_fabric_names);
	tcase_add_test(tc, test_encode_refuses_over_2_40_samples);
	tcase_add_test(tc, test_ledger_write_repairs);
	tcase_add_test(tc, test_metrics_mode);
	tcase_add_test(tc, test_negative_zero_prior);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(state_suite)
