/*
 * test_table.c - unit tests of the step-table codec (common/table_*.c,
 * doc/formats.md section 8).
 *
 * Round trips (empty, full plans, corrections, the size budget's largest
 * table), the exact byte layout of a small table checked by hand, the
 * canonical form (normalize, one encoding per table), every decoder error
 * class and which ones are fatal, the digest, and the size budget (fit).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/table.h"
#include "policies/context.h"
#include "tests/unit/testutil.h"

static struct bot_table *ta, *tb;
static char text[BOT_TABLE_MAX_TEXT + 64];

static void setup(void)
{
	ta = calloc(1, sizeof(*ta));
	tb = calloc(1, sizeof(*tb));
	ck_assert_ptr_nonnull(ta);
	ck_assert_ptr_nonnull(tb);
}

static void teardown(void)
{
	free(ta);
	free(tb);
}

static void add_entry(struct bot_table *t, int shape, int coll, int bucket, int exploit, int nch)
{
	struct bot_table_entry *e = &t->entries[t->nentries++];

	memset(e, 0, sizeof(*e));
	e->shape = (uint8_t)shape;
	e->coll = (uint8_t)coll;
	e->bucket = (uint8_t)bucket;
	e->plan.exploit = (uint8_t)exploit;
	e->plan.nchannels = (uint8_t)nch;
}

static void add_probe(struct bot_table *t, int arm, int lo, int hi)
{
	struct bot_plan *p = &t->entries[t->nentries - 1].plan;

	p->probe[p->nprobe].arm = (uint8_t)arm;
	p->probe[p->nprobe].lo = (uint16_t)lo;
	p->probe[p->nprobe].hi = (uint16_t)hi;
	p->nprobe++;
}

static long encode(const struct bot_table *t)
{
	return bot_table_encode(t, text, sizeof(text));
}

static void assert_same(const struct bot_table *a, const struct bot_table *b)
{
	ck_assert_uint_eq(a->version, b->version);
	ck_assert_uint_eq(a->policy, b->policy);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->min_bytes_log2, b->min_bytes_log2);
	ck_assert_uint_eq(a->seed, b->seed);
	ck_assert_uint_eq(a->allow, b->allow);
	ck_assert_uint_eq(a->nshapes, b->nshapes);
	ck_assert_uint_eq(a->nentries, b->nentries);
	ck_assert_uint_eq(a->ncorr, b->ncorr);
	for (unsigned i = 0; i < a->nshapes; i++) {
		ck_assert_uint_eq(a->shapes[i].nranks, b->shapes[i].nranks);
		ck_assert_uint_eq(a->shapes[i].nnodes, b->shapes[i].nnodes);
	}
	for (unsigned i = 0; i < a->nentries; i++) {
		const struct bot_table_entry *x = &a->entries[i], *y = &b->entries[i];

		ck_assert_uint_eq(x->shape, y->shape);
		ck_assert_uint_eq(x->coll, y->coll);
		ck_assert_uint_eq(x->bucket, y->bucket);
		ck_assert_uint_eq(x->plan.exploit, y->plan.exploit);
		ck_assert_uint_eq(x->plan.nchannels, y->plan.nchannels);
		ck_assert_uint_eq(x->plan.nprobe, y->plan.nprobe);
		for (unsigned k = 0; k < x->plan.nprobe; k++) {
			ck_assert_uint_eq(x->plan.probe[k].arm, y->plan.probe[k].arm);
			ck_assert_uint_eq(x->plan.probe[k].lo, y->plan.probe[k].lo);
			ck_assert_uint_eq(x->plan.probe[k].hi, y->plan.probe[k].hi);
		}
	}
	for (unsigned i = 0; i < a->ncorr; i++) {
		ck_assert_uint_eq(a->corr[i].coll, b->corr[i].coll);
		ck_assert_uint_eq(a->corr[i].arm, b->corr[i].arm);
		ck_assert_uint_eq(a->corr[i].bpr_log2, b->corr[i].bpr_log2);
		ck_assert_uint_eq(a->corr[i].q16, b->corr[i].q16);
	}
}

/* A table with two shapes, plans with probes, and corrections. */
static void fill_sample(struct bot_table *t)
{
	bot_table_init(t, 5, 0x0123456789abcdefULL);
	t->flags = BOT_TABLE_F_MEASURE;
	t->min_bytes_log2 = 16;
	t->allow = 1u << bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE);
	ck_assert_int_eq(bot_table_shape(t, 16, 2), 0);
	ck_assert_int_eq(bot_table_shape(t, 8, 1), 1);
	ck_assert_int_eq(bot_table_shape(t, 16, 2), 0);
	add_entry(t, 0, BOT_COLL_ALLREDUCE, 80, bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE), 0);
	add_probe(t, bot_arm(BOT_ALGO_TREE, BOT_PROTO_SIMPLE), 0, 32);
	add_probe(t, bot_arm(BOT_ALGO_RING, BOT_PROTO_LL128), 32, 64);
	add_probe(t, bot_arm(BOT_ALGO_PAT, BOT_PROTO_SIMPLE), 200, 256);
	add_entry(t, 1, BOT_COLL_ALLGATHER, 100, bot_arm(BOT_ALGO_PAT, BOT_PROTO_SIMPLE), 16);
	add_entry(t, 0, BOT_COLL_BROADCAST, 255, BOT_ARM_AUTO, 64);
	add_probe(t, bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL), 0, 1);
	add_probe(t, bot_arm(BOT_ALGO_TREE, BOT_PROTO_LL128), 1, 2);
	add_probe(t, BOT_ARM_AUTO, 2, 3);
	add_probe(t, bot_arm(BOT_ALGO_TREE, BOT_PROTO_SIMPLE), 255, 256);
	t->corr[t->ncorr++] = (struct bot_table_corr){ 4, 4, 20, 0x18000 };
	t->corr[t->ncorr++] = (struct bot_table_corr){ 2, 1, 10, 0xffffffffu };
	ck_assert_int_eq(bot_table_normalize(t), 0);
}

START_TEST(test_empty_round_trip)
{
	long n;

	bot_table_init(ta, 0, 42);
	n = encode(ta);
	ck_assert_int_eq(n, (long)strlen(text));
	ck_assert_int_eq(n, (long)bot_table_encoded_len(ta));
	/* 24-byte header -> 32 base64 characters */
	ck_assert_int_eq(n, BOT_TABLE_HEAD_LEN + 32);
	ck_assert_int_eq(strncmp(text, "NBT3.", 5), 0);
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
	assert_same(ta, tb);
	ck_assert_uint_eq(tb->version, 3);
	ck_assert_uint_eq(tb->min_bytes_log2, 20);
	/* version 2 and 1 tables (an older srun's) are still written and
	 * read as such: prefix and version byte */
	for (uint8_t v = 2; v >= 1; v--) {
		char want[6] = "NBTv.";

		want[3] = (char)('0' + v);
		ta->version = v;
		n = encode(ta);
		ck_assert_int_eq(strncmp(text, want, 5), 0);
		ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
		ck_assert_uint_eq(tb->version, v);
		assert_same(ta, tb);
	}
}
END_TEST

START_TEST(test_sample_round_trip)
{
	long n;

	fill_sample(ta);
	/* normalize sorted shapes: (8,1) first, entries renumbered */
	ck_assert_uint_eq(ta->shapes[0].nranks, 8);
	ck_assert_uint_eq(ta->entries[0].coll, BOT_COLL_ALLGATHER);
	ck_assert_uint_eq(ta->entries[0].shape, 0);
	ck_assert_uint_eq(ta->entries[1].coll, BOT_COLL_BROADCAST);
	ck_assert_uint_eq(ta->entries[1].shape, 1);
	n = encode(ta);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
	assert_same(ta, tb);
	/* the decoder does not need the NUL: a longer buffer with junk after */
	text[n] = '!';
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
	/* re-encoding the decoded table gives the same bytes */
	{
		char again[512];

		ck_assert_int_eq(bot_table_encode(tb, again, sizeof(again)), n);
		ck_assert_int_eq(memcmp(again, text, (size_t)n), 0);
	}
}
END_TEST

/* Header bytes as formats.md section 8 lays them out, checked by hand. */
START_TEST(test_layout)
{
	long n;
	uint8_t *raw;

	bot_table_init(ta, 3, 0x1122334455667788ULL);
	ta->flags = 1;
	ta->min_bytes_log2 = 17;
	ta->allow = 0x00102030;
	bot_table_shape(ta, 0x01020304, 7);
	add_entry(ta, 0, 4, 84, 7, 9);
	add_probe(ta, 1, 10, 20);
	ck_assert_int_eq(bot_table_normalize(ta), 0);
	n = encode(ta);
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
	raw = tb->raw;
	{
		static const uint8_t want[] = {
			3, 3, 1, 17,
			0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
			0x30, 0x20, 0x10, 0x00,
			1, 0, 1, 0, 0, 0, 0, 0,
			/* shape */
			0x04, 0x03, 0x02, 0x01, 7, 0, 0, 0,
			/* entry */
			0, 4, 84, 7, 9, 1, 1, 10, 19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		};

		ck_assert_int_eq(memcmp(raw, want, sizeof(want)), 0);
		/* digest = bot_digest64 of the payload, 16 lower-case hex */
		{
			char hex[17];

			snprintf(hex, sizeof(hex), "%016llx",
				 (unsigned long long)bot_digest64(want, sizeof(want)));
			ck_assert_int_eq(memcmp(text + 5, hex, 16), 0);
			ck_assert_uint_eq(tb->digest, bot_digest64(want, sizeof(want)));
		}
	}
}
END_TEST

/* Base64url alphabet, no padding: every payload length mod 3. */
START_TEST(test_base64_tails)
{
	for (int ncorr = 0; ncorr < 3; ncorr++) {
		long n;

		bot_table_init(ta, 0, 0);
		for (int i = 0; i < ncorr; i++)
			ta->corr[ta->ncorr++] = (struct bot_table_corr){ 0, (uint8_t)i, 0, 0xfbff };
		/* one shape makes the payload length 32 + 8 * ncorr: 2, 1, 0 mod 3 */
		bot_table_shape(ta, 2, 1);
		ck_assert_int_eq(bot_table_normalize(ta), 0);
		n = encode(ta);
		ck_assert_ptr_null(memchr(text, '=', (size_t)n));
		ck_assert_ptr_null(memchr(text, '+', (size_t)n));
		ck_assert_ptr_null(memchr(text, '/', (size_t)n));
		ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
		assert_same(ta, tb);
	}
}
END_TEST

START_TEST(test_digest_corruption)
{
	long n;

	fill_sample(ta);
	n = encode(ta);
	/* flip each payload character to another valid one: digest mismatch
	 * (or, for the last character, non-canonical trailing bits) */
	for (long i = BOT_TABLE_HEAD_LEN; i < n; i++) {
		char c = text[i];
		int err;

		text[i] = c == 'A' ? 'B' : 'A';
		err = bot_table_decode(text, (size_t)n, tb);
		ck_assert_msg(err == BOT_TABLE_EDIGEST || err == BOT_TABLE_ESYNTAX,
			      "char %ld: err %d", i, err);
		ck_assert(!bot_table_err_fatal(err));
		text[i] = c;
	}
	/* a wrong digest */
	text[5] = text[5] == '0' ? '1' : '0';
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), BOT_TABLE_EDIGEST);
	/* upper-case hex is not canonical */
	text[5] = 'A';
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), BOT_TABLE_ESYNTAX);
}
END_TEST

START_TEST(test_unknown_version)
{
	long n;
	int err;

	bot_table_init(ta, 0, 1);
	n = encode(ta);
	text[3] = '4';
	err = bot_table_decode(text, (size_t)n, tb);
	ck_assert_int_eq(err, BOT_TABLE_EVERSION);
	ck_assert(bot_table_err_fatal(err));
	ck_assert_ptr_nonnull(strstr(bot_table_strerror(err), "version"));
	/* NBT1 prefix but payload version 2 with a valid digest */
	{
		struct bot_table *t = tb;
		uint8_t raw[24] = { 2 };
		char buf[128];

		memcpy(buf, "NBT1.", 5);
		snprintf(buf + 5, sizeof(buf) - 5, "%016llx.",
			 (unsigned long long)bot_digest64(raw, sizeof(raw)));
		/* 24 zero-ish bytes: "AgAAAA..." */
		strcpy(buf + 22, "AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
		err = bot_table_decode(buf, strlen(buf), t);
		ck_assert_int_eq(err, BOT_TABLE_EPREFIX);	/* its own error since 2026-12-04 */
		ck_assert(bot_table_err_fatal(err));
		ck_assert_ptr_nonnull(strstr(bot_table_strerror(err), "prefix does not name"));
		/* a payload version byte no build writes, under a prefix read here */
		raw[0] = 9;
		snprintf(buf + 5, sizeof(buf) - 5, "%016llx.",
			 (unsigned long long)bot_digest64(raw, sizeof(raw)));
		strcpy(buf + 22, "CQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
		ck_assert_int_eq(bot_table_decode(buf, strlen(buf), t), BOT_TABLE_EPREFIX);
	}
	/* any number of version digits, and whatever follows the dot: a
	 * version past 2^32 was once read as "not a table" (the prior) */
	{
		static const char *other[] = {
			"NBT4294967297.0123456789abcdef.AAAA", "NBT10.0000000000000000.AAAA",
			"NBT4.x", "NBT01.0000000000000000.AAAA", "NBT18446744073709551617.",
		};

		for (unsigned i = 0; i < sizeof(other) / sizeof(other[0]); i++)
			ck_assert_msg(bot_table_decode(other[i], strlen(other[i]), tb) ==
					      BOT_TABLE_EVERSION, "%s", other[i]);
	}
}
END_TEST

START_TEST(test_syntax_errors)
{
	static const char *bad[] = {
		"", "NBT", "nbt1.0000000000000000.AAAA", "NBT1-0000000000000000.AAAA",
		"NBT1.000000000000000.AAAAA", "NBT1.0000000000000000-AAAA",
		"NBT1.0000000000000000.AA=A", "NBT1.0000000000000000.A", "XYZ1.0000000000000000.AAAA",
		"NBTx.0000000000000000.AAAA", "NBT1.000000000000000g.AAAA", "NBT12",
		"NBT2-0000000000000000.AAAA",
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = bot_table_decode(bad[i], strlen(bad[i]), tb);

		ck_assert_msg(err == BOT_TABLE_ESYNTAX, "%s: %d", bad[i], err);
		ck_assert(!bot_table_err_fatal(err));
	}
	/* the prefix written, and those still read */
	ck_assert_str_eq(bot_table_strerror(BOT_TABLE_ESYNTAX), "not a step table (want "
			 "NBT3.<16 hex>.<base64url>; NBT1. and NBT2. still read)");
}
END_TEST

/* A payload with a valid digest but bad contents: EFORMAT, not fatal. */
static int decode_raw(const uint8_t *raw, size_t n)
{
	static char buf[1024];
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o;

	/* the prefix names the payload's version byte */
	snprintf(buf, sizeof(buf), "NBT%u.%016llx.", n ? (unsigned)raw[0] % 10 : 1u,
		 (unsigned long long)bot_digest64(raw, n));
	o = BOT_TABLE_HEAD_LEN;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)raw[i] << 16 | (i + 1 < n ? (uint32_t)raw[i + 1] << 8 : 0) |
			     (i + 2 < n ? raw[i + 2] : 0);

		buf[o++] = b64[v >> 18];
		buf[o++] = b64[(v >> 12) & 63];
		if (i + 1 < n)
			buf[o++] = b64[(v >> 6) & 63];
		if (i + 2 < n)
			buf[o++] = b64[v & 63];
	}
	return bot_table_decode(buf, o, tb);
}

START_TEST(test_format_errors)
{
	uint8_t raw[80];
	long n;

	fill_sample(ta);
	n = encode(ta);
	ck_assert_int_eq(bot_table_decode(text, (size_t)n, tb), 0);
	memcpy(raw, tb->raw, 24);
	/* good empty header decodes */
	raw[16] = raw[18] = raw[20] = 0;
	raw[17] = raw[19] = raw[21] = 0;
	ck_assert_int_eq(decode_raw(raw, 24), 0);
	/* truncated header, trailing byte, counts that disagree with the length */
	ck_assert_int_eq(decode_raw(raw, 23), BOT_TABLE_EFORMAT);
	raw[24] = 0;
	ck_assert_int_eq(decode_raw(raw, 25), BOT_TABLE_EFORMAT);
	raw[16] = 1;
	ck_assert_int_eq(decode_raw(raw, 24), BOT_TABLE_EFORMAT);
	raw[16] = 0;
	/* unknown flag, reserved bytes, allow bits beyond arm 20, min_bytes_log2 > 63 */
	raw[2] = 0x08;
	ck_assert_int_eq(decode_raw(raw, 24), BOT_TABLE_EFORMAT);
	raw[2] = 0;
	raw[22] = 1;
	ck_assert_int_eq(decode_raw(raw, 24), BOT_TABLE_EFORMAT);
	raw[22] = 0;
	raw[14] = 0x20;	/* bit 21 */
	ck_assert_int_eq(decode_raw(raw, 24), BOT_TABLE_EFORMAT);
	raw[14] = 0;
	raw[3] = 64;
	ck_assert_int_eq(decode_raw(raw, 24), BOT_TABLE_EFORMAT);
	raw[3] = 20;
	/* one shape, one entry: vary fields */
	raw[16] = 1;
	raw[18] = 1;
	memset(raw + 24, 0, 28);
	raw[24] = 4;	/* nranks 4 */
	raw[28] = 1;	/* nnodes 1 */
	raw[32 + 1] = 4;	/* allreduce */
	raw[32 + 2] = 80;
	raw[32 + 3] = 5;	/* ring/simple */
	ck_assert_int_eq(decode_raw(raw, 52), 0);
	raw[32 + 3] = 21;	/* arm out of range */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32 + 3] = 0xff;	/* AUTO is fine */
	ck_assert_int_eq(decode_raw(raw, 52), 0);
	raw[32 + 4] = 65;	/* nchannels > 64 */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32 + 4] = 0;
	raw[32 + 1] = 5;	/* collective 5 */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32 + 1] = 4;
	raw[32] = 1;	/* shape index out of range */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32] = 0;
	raw[32 + 5] = 2;	/* two probes: overlapping [0,10) [5,10) */
	raw[38] = 1; raw[39] = 0; raw[40] = 9;
	raw[41] = 1; raw[42] = 5; raw[43] = 9;
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[42] = 10;	/* [10, 10): empty */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[43] = 255;	/* [10, 256) */
	ck_assert_int_eq(decode_raw(raw, 52), 0);
	raw[32 + 5] = 5;	/* nprobe > 4 */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32 + 5] = 1;	/* now the second probe's bytes are junk in an unused slot */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[32 + 5] = 2;
	raw[51] = 1;	/* reserved */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
	raw[51] = 0;
	raw[24] = 0;	/* nranks 0 */
	ck_assert_int_eq(decode_raw(raw, 52), BOT_TABLE_EFORMAT);
}
END_TEST

START_TEST(test_canonical)
{
	/* duplicates are rejected by normalize; unsorted input is sorted */
	bot_table_init(ta, 0, 0);
	bot_table_shape(ta, 4, 1);
	add_entry(ta, 0, 4, 90, 5, 0);
	add_entry(ta, 0, 2, 90, 5, 0);
	add_entry(ta, 0, 4, 80, 5, 0);
	ck_assert_int_eq(bot_table_encode(ta, text, sizeof(text)), BOT_TABLE_EINVAL);
	ck_assert_int_eq(bot_table_normalize(ta), 0);
	ck_assert_uint_eq(ta->entries[0].coll, 2);
	ck_assert_uint_eq(ta->entries[1].bucket, 80);
	ck_assert_int_gt(encode(ta), 0);
	add_entry(ta, 0, 4, 80, 1, 0);
	ck_assert_int_eq(bot_table_normalize(ta), BOT_TABLE_EINVAL);
	/* probes out of order are not canonical */
	bot_table_init(ta, 0, 0);
	bot_table_shape(ta, 4, 1);
	add_entry(ta, 0, 4, 90, 5, 0);
	add_probe(ta, 1, 50, 60);
	add_probe(ta, 1, 10, 20);
	ck_assert_int_eq(encode(ta), BOT_TABLE_EINVAL);
	/* too small a buffer */
	bot_table_init(ta, 0, 0);
	ck_assert_int_eq(bot_table_encode(ta, text, 54), BOT_TABLE_ESIZE);
	ck_assert_int_eq(bot_table_encode(ta, text, 55), 54);
}
END_TEST

/* Size budget: the largest table that fits decodes; one more entry does not
 * encode; fit() drops the tail and says how many. */
START_TEST(test_size_budget)
{
	unsigned n = 0;
	long len;
	int dropped;

	bot_table_init(ta, 2, 7);
	bot_table_shape(ta, 64, 8);
	bot_table_shape(ta, 128, 16);
	for (int s = 0; s < 2 && n < BOT_TABLE_MAX_ENTRIES; s++)
		for (int c = 0; c < BOT_NCOLL && n < BOT_TABLE_MAX_ENTRIES; c++)
			for (int b = 0; b < 256 && n < BOT_TABLE_MAX_ENTRIES; b++, n++)
				add_entry(ta, s, c, b, 5, 0);
	ck_assert_uint_eq(ta->nentries, 2560);
	ck_assert_int_eq(bot_table_normalize(ta), 0);
	len = encode(ta);
	ck_assert_int_gt(len, 0);
	ck_assert_int_le(len, BOT_TABLE_MAX_TEXT);
	ck_assert_int_eq(bot_table_decode(text, (size_t)len, tb), 0);
	assert_same(ta, tb);

	/* 2560 entries fit in 96 KiB; fill with corrections to the limit */
	while (ta->ncorr < BOT_TABLE_MAX_CORR &&
	       bot_table_encoded_len(ta) + 11 <= BOT_TABLE_MAX_TEXT) {
		unsigned i = ta->ncorr;

		ta->corr[i] = (struct bot_table_corr){ (uint8_t)(i / (21 * 64) % 5), (uint8_t)(i / 64 % 21),
						       (uint8_t)(i % 64), i };
		ta->ncorr++;
	}
	ck_assert_int_eq(bot_table_normalize(ta), 0);
	len = encode(ta);
	ck_assert_int_gt(len, BOT_TABLE_MAX_TEXT - 11);
	ck_assert_int_eq(bot_table_decode(text, (size_t)len, tb), 0);
	/* over budget */
	ta->corr[ta->ncorr] = (struct bot_table_corr){ 4, 20, 63, 1 };
	ta->ncorr++;
	ta->corr[ta->ncorr] = (struct bot_table_corr){ 4, 20, 62, 1 };
	ta->ncorr++;
	ck_assert_int_eq(bot_table_normalize(ta), 0);
	ck_assert_int_gt((long)bot_table_encoded_len(ta), BOT_TABLE_MAX_TEXT);
	ck_assert_int_eq(encode(ta), BOT_TABLE_ESIZE);
	/* decoder refuses text over the budget without looking further */
	memset(text, 'A', BOT_TABLE_MAX_TEXT + 1);
	ck_assert_int_eq(bot_table_decode(text, BOT_TABLE_MAX_TEXT + 1, tb), BOT_TABLE_ESIZE);
	/* a newer format over this budget is another build's table (fatal),
	 * not an oversized one of ours (until 2026-12-04 the size came first) */
	{
		static char big[BOT_TABLE_MAX_TEXT + 2];

		memset(big, 'A', sizeof(big) - 1);
		memcpy(big, "NBT9.", 5);
		ck_assert_int_eq(bot_table_decode(big, sizeof(big) - 1, tb), BOT_TABLE_EVERSION);
		memcpy(big, "NBT3.", 5);
		ck_assert_int_eq(bot_table_decode(big, sizeof(big) - 1, tb), BOT_TABLE_ESIZE);
	}
	ck_assert(!bot_table_err_fatal(BOT_TABLE_ESIZE));

	/* fit keeps the head */
	ta->ncorr = 0;
	dropped = bot_table_fit(ta, 2000);
	ck_assert_int_gt(dropped, 0);
	ck_assert_uint_eq(ta->nentries + (unsigned)dropped, 2560);
	ck_assert_int_le((long)bot_table_encoded_len(ta), 2000);
	ta->nentries++;
	ck_assert_int_gt((long)bot_table_encoded_len(ta), 2000);
	ta->nentries--;
	ck_assert_int_eq(bot_table_fit(ta, 2000), 0);
	ck_assert_int_eq(bot_table_fit(ta, 40), BOT_TABLE_ESIZE);
}
END_TEST

static Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_empty_round_trip);
	tcase_add_test(tc, test_sample_round_trip);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_base64_tails);
	tcase_add_test(tc, test_digest_corruption);
	tcase_add_test(tc, test_unknown_version);
	tcase_add_test(tc, test_syntax_errors);
	tcase_add_test(tc, test_format_errors);
	tcase_add_test(tc, test_canonical);
	tcase_add_test(tc, test_size_budget);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(table_suite)
