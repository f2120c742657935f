/*
 * test_delta.c - the delta codec (common/delta.h, doc/formats.md section
 * 13): a round trip that re-encodes to the same bytes, the canonical name
 * and order, an identity that is stable (a pinned value) and ignores
 * counts and times, every refusal of the reader naming the file and the
 * offset or record, and bot_delta_read_at's safe open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/le.h"
#include "common/spool.h"
#include "policies/context.h"
#include "testutil.h"

#define NAME "alps.1234_7.2.3.nid001.nbd"

static char dir[64];

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "delta");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

static struct bot_delta_hdr hdr(void)
{
	struct bot_delta_hdr h;

	memset(&h, 0, sizeof(h));
	strcpy(h.cluster, "alps");
	strcpy(h.job, "1234_7");
	strcpy(h.fabric, "h100-ib-ndr");
	strcpy(h.node, "nid001");
	h.uid = 1000;
	h.gid = 100;
	h.restart = 2;
	h.step = 3;
	h.array_job = 1234;
	h.array_task = 7;
	h.het_comp = BOT_DELTA_NONE;
	h.step_nodes = 4;
	h.t_start = 1000;
	h.t_end = 2000;
	h.t_harvest = 2001;
	h.files_read = 8;
	h.table_digest = 0x1234;
	strcpy(h.build_id, "nccl-bot 0.1");
	return h;
}

static struct bot_spool_rec rec(int kind, uint64_t comm, uint64_t seq, int arm, uint32_t rank)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)kind;
	r.coll = BOT_COLL_ALLREDUCE;
	r.auto_arm = 4;
	r.decided = BOT_SPOOL_ARM_NONE;
	r.comm_id = comm;
	r.rank = rank;
	r.nranks = 16;
	r.nnodes = 2;
	r.nbytes = 1u << 20;
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		r.cost[a] = a == 4 ? 10.0f : -1.0f;
	if (kind == BOT_SPOOL_SAMPLE) {
		r.arm = (uint8_t)arm;
		r.nchannels = 8;
		r.seq = seq;
		r.duration_ns = 1000 + seq;
	} else {
		r.arm = BOT_SPOOL_ARM_NONE;
		r.calls = 100;
	}
	return r;
}

/* A few records in the canonical order. */
static size_t records(struct bot_spool_rec *r)
{
	size_t n = 0;

	r[n++] = rec(BOT_SPOOL_SAMPLE, 5, 1, 4, 0);
	r[n++] = rec(BOT_SPOOL_SAMPLE, 5, 2, 4, 0);
	r[n++] = rec(BOT_SPOOL_SAMPLE, 5, 2, 5, 0);
	r[n++] = rec(BOT_SPOOL_SAMPLE, 9, 1, 4, 3);
	r[n++] = rec(BOT_SPOOL_SUMMARY, 5, 0, 0, 0);
	r[n++] = rec(BOT_SPOOL_SUMMARY, 5, 0, 0, 1);
	return n;
}

static uint8_t *image(size_t *len)
{
	struct bot_spool_rec r[8];
	struct bot_delta_hdr h = hdr();
	char err[BOT_DELTA_ERR_MAX];
	uint8_t *buf;
	size_t n = records(r);

	ck_assert_msg(bot_delta_encode(&h, r, n, &buf, len, err, sizeof(err)) == 0, "%s", err);
	return buf;
}

static void fix_crc(uint8_t *b, size_t len)
{
	bot_le_put32(b + len - 8, bot_spool_crc32c(0, b, len - 8));
}

/* The image refused, the reason holding want. */
static void expect_refused(const uint8_t *b, size_t len, const char *want)
{
	struct bot_delta d;
	char err[BOT_DELTA_ERR_MAX] = "";

	ck_assert_msg(bot_delta_parse(NAME, 1, b, len, &d, err, sizeof(err)) < 0,
		      "accepted, want '%s'", want);
	ck_assert_ptr_null(d.recs);
	ck_assert_msg(strncmp(err, NAME ": ", strlen(NAME) + 2) == 0, "not named: %s", err);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
}

START_TEST(test_round_trip)
{
	struct bot_spool_rec r[8];
	struct bot_delta d;
	struct bot_delta_hdr h = hdr();
	char err[BOT_DELTA_ERR_MAX];
	uint8_t *b = NULL, *b2 = NULL;
	size_t len, len2, n = records(r);

	b = image(&len);
	ck_assert_uint_eq(len, BOT_DELTA_HDR_SIZE + n * BOT_SPOOL_REC_SIZE + 8);
	ck_assert_msg(bot_delta_parse(NAME, 1, b, len, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.hdr.nrecords, n);
	ck_assert_str_eq(d.hdr.cluster, "alps");
	ck_assert_str_eq(d.hdr.job, "1234_7");
	ck_assert_str_eq(d.hdr.fabric, "h100-ib-ndr");
	ck_assert_str_eq(d.hdr.node, "nid001");
	ck_assert_str_eq(d.hdr.build_id, "nccl-bot 0.1");
	ck_assert_uint_eq(d.hdr.uid, 1000);
	ck_assert_uint_eq(d.hdr.step_nodes, 4);
	ck_assert_uint_eq(d.hdr.array_task, 7);
	ck_assert_uint_eq(d.hdr.het_comp, BOT_DELTA_NONE);
	ck_assert_uint_eq(d.hdr.t_harvest, 2001);
	ck_assert_uint_eq(d.hdr.files_read, 8);
	ck_assert_uint_eq(d.hdr.table_digest, 0x1234);
	ck_assert_uint_eq(d.identity, bot_delta_identity(&h));
	ck_assert_uint_eq(d.digest, bot_digest64(b, len));
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(d.recs[i].comm_id, r[i].comm_id);
		ck_assert_uint_eq(d.recs[i].seq, r[i].seq);
		ck_assert_uint_eq(d.recs[i].rank, r[i].rank);
		ck_assert_uint_eq(d.recs[i].duration_ns, r[i].duration_ns);
	}
	/* one delta, one byte string */
	ck_assert_int_eq(bot_delta_encode(&d.hdr, d.recs, n, &b2, &len2, err, sizeof(err)), 0);
	ck_assert_uint_eq(len2, len);
	ck_assert_int_eq(memcmp(b, b2, len), 0);
	bot_delta_free(&d);
	ck_assert_ptr_null(d.recs);
	/* an empty delta is a delta */
	free(b2);
	ck_assert_int_eq(bot_delta_encode(&h, NULL, 0, &b2, &len2, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_delta_parse(NAME, 1, b2, len2, &d, err, sizeof(err)), 0);
	ck_assert_uint_eq(d.hdr.nrecords, 0);
	bot_delta_free(&d);
	free(b2);
	free(b);
}
END_TEST

START_TEST(test_name)
{
	struct bot_delta_hdr h = hdr();
	char name[BOT_DELTA_NAME_MAX];

	ck_assert_int_eq(bot_delta_name(&h, name), 0);
	ck_assert_str_eq(name, NAME);
	h.step = BOT_DELTA_STEP_BATCH;
	strcpy(h.cluster, "my.cluster");
	strcpy(h.job, "77+1");
	strcpy(h.node, "gpu-01.example");
	bot_delta_name(&h, name);
	ck_assert_str_eq(name, "my_cluster.77+1.2.batch.gpu-01_example.nbd");
	h.step = BOT_DELTA_STEP_EXTERN;
	bot_delta_name(&h, name);
	ck_assert_str_eq(name, "my_cluster.77+1.2.extern.gpu-01_example.nbd");
	h.step = BOT_DELTA_STEP_INTERACTIVE;
	h.restart = 4294967295u;
	bot_delta_name(&h, name);
	ck_assert_str_eq(name, "my_cluster.77+1.4294967295.interactive.gpu-01_example.nbd");
	/* the longest name fits */
	memset(h.cluster, 'c', 63);
	memset(h.job, 'j', 63);
	memset(h.node, 'n', 63);
	h.step = 0xfffffff0u;
	ck_assert_int_eq(bot_delta_name(&h, name), 0);
	ck_assert_uint_eq(strlen(name), 63 * 3 + 10 + 10 + 4 + 4);
	h.node[0] = 0;
	ck_assert_int_eq(bot_delta_name(&h, name), -1);
}
END_TEST

START_TEST(test_identity)
{
	struct bot_delta_hdr h = hdr(), g;
	uint64_t id = bot_delta_identity(&h);

	/* pinned: the identity is part of the format (the compactor's ledger
	 * holds it across versions) */
	ck_assert_msg(id == 0x39d80df75d63b77full, "identity %016llx", (unsigned long long)id);
	/* counts and times do not enter */
	g = h;
	g.t_start = 1;
	g.t_end = 5;
	g.t_harvest = 9;
	g.files_read = 1;
	g.files_rejected = 3;
	g.nrecords = 77;
	g.table_digest = 0;
	g.step_nodes = 9;
	g.step_tasks = 3;
	g.job_gpus = 8;
	g.leaf_switches = 2;
	g.flags = BOT_DELTA_F_DROPPED | BOT_DELTA_F_REJECTED;
	strcpy(g.build_id, "nccl-bot 9");
	strcpy(g.account, "acct");
	ck_assert_uint_eq(bot_delta_identity(&g), id);
	/* each identity field does */
	g = h;
	strcpy(g.node, "nid002");
	ck_assert_uint_ne(bot_delta_identity(&g), id);
	g = h;
	g.uid = 1001;
	ck_assert_uint_ne(bot_delta_identity(&g), id);
	g = h;
	g.restart = 3;
	ck_assert_uint_ne(bot_delta_identity(&g), id);
	g = h;
	g.step = 4;
	ck_assert_uint_ne(bot_delta_identity(&g), id);
	g = h;
	strcpy(g.fabric, "other");
	ck_assert_uint_ne(bot_delta_identity(&g), id);
	g = h;
	g.het_job = 5;
	ck_assert_uint_ne(bot_delta_identity(&g), id);
}
END_TEST

START_TEST(test_order)
{
	struct bot_spool_rec r[8], s[8];
	struct bot_delta_hdr h = hdr();
	char err[BOT_DELTA_ERR_MAX];
	uint8_t *b = NULL;
	size_t len, n = records(r);

	/* any input order sorts to the canonical one */
	for (size_t i = 0; i < n; i++)
		s[i] = r[n - 1 - i];
	bot_delta_sort(s, n);
	ck_assert_int_eq(memcmp(r, s, n * sizeof(*r)), 0);
	/* the encoder refuses what is not in order, a record section 9
	 * refuses, and nNodes over the step's nodes */
	s[0] = r[1];
	s[1] = r[0];
	ck_assert_int_eq(bot_delta_encode(&h, s, n, &b, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "record 1: not in the canonical order"), "%s", err);
	ck_assert_ptr_null(b);
	memcpy(s, r, sizeof(r));
	s[2].rank = 99;
	ck_assert_int_eq(bot_delta_encode(&h, s, n, &b, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "record 2: "), "%s", err);
	memcpy(s, r, sizeof(r));
	h.step_nodes = 1;
	ck_assert_int_eq(bot_delta_encode(&h, s, n, &b, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "record 0: nNodes 2 over the step's 1 nodes"), "%s", err);
	h = hdr();
	strcpy(h.fabric, "UPPER");
	ck_assert_int_eq(bot_delta_encode(&h, s, n, &b, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "fabric 'UPPER'"), "%s", err);
}
END_TEST

/* A fabric of 64 characters (section 12's longest, as a state holds it)
 * fills its whole field, reads back whole and keeps its last character in
 * the identity and the re-encoding; one character wrong in the full field,
 * or bytes after its NUL, are refused. */
START_TEST(test_fabric_whole_field)
{
	struct bot_spool_rec r[8];
	struct bot_delta_hdr h = hdr(), h63;
	struct bot_delta d;
	char err[BOT_DELTA_ERR_MAX], name[BOT_DELTA_NAME_MAX];
	uint8_t *b, *b2, *c;
	size_t len, len2, n = records(r);

	memset(h.fabric, 'f', BOT_DELTA_FABRIC_MAX);
	h.fabric[BOT_DELTA_FABRIC_MAX] = 0;
	h.fabric[10] = '.';
	ck_assert_msg(bot_delta_encode(&h, r, n, &b, &len, err, sizeof(err)) == 0, "%s", err);
	ck_assert_mem_eq(b + 144, h.fabric, 64);
	ck_assert_uint_eq(b[208], 'n');	/* the node's field right after, untouched */
	ck_assert_msg(bot_delta_parse(NAME, 1, b, len, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(strlen(d.hdr.fabric), 64);
	ck_assert_str_eq(d.hdr.fabric, h.fabric);
	ck_assert_str_eq(d.hdr.node, "nid001");
	ck_assert_uint_eq(d.identity, bot_delta_identity(&h));
	h63 = h;
	h63.fabric[63] = 0;
	ck_assert_uint_ne(d.identity, bot_delta_identity(&h63));
	ck_assert_int_eq(bot_delta_name(&d.hdr, name), 0);
	ck_assert_str_eq(name, NAME);
	ck_assert_msg(bot_delta_encode(&d.hdr, d.recs, d.hdr.nrecords, &b2, &len2, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(len2, len);
	ck_assert_mem_eq(b2, b, len);
	bot_delta_free(&d);
	free(b2);

	c = malloc(len);
	ck_assert_ptr_nonnull(c);
	memcpy(c, b, len);
	c[144 + 63] = 'F';
	fix_crc(c, len);
	h.fabric[63] = 'F';	/* said whole, all 64 characters */
	snprintf(err, sizeof(err), "header: fabric '%s' is not [a-z0-9][a-z0-9._-]{0,63}",
		 h.fabric);
	expect_refused(c, len, err);
	memcpy(c, b, len);
	c[144 + 40] = 0;
	fix_crc(c, len);
	expect_refused(c, len, "offset 144: fabric not NUL padded");
	free(c);
	free(b);
}
END_TEST

/* One refusal per line: mutate a fresh image at an offset, fix the CRC
 * unless the test is the CRC, and expect the reason. */
START_TEST(test_refusals)
{
	size_t len, rec0 = BOT_DELTA_HDR_SIZE;
	uint8_t *b = image(&len), *c = malloc(len + 16), *big;

#define MUT(stmt, crc, want)                      \
	do {                                      \
		memcpy(c, b, len);                \
		stmt;                             \
		if (crc)                          \
			fix_crc(c, len);          \
		expect_refused(c, len, want);     \
	} while (0)

	ck_assert_ptr_nonnull(c);
	expect_refused(b, 100, "truncated: 100 bytes");
	expect_refused(b, len - 1, "truncated");
	memcpy(c, b, len);
	c[len] = 0;
	fix_crc(c, len + 1);
	expect_refused(c, len + 1, "trailing bytes");
	MUT(c[0] = 'X', 1, "offset 0: bad magic");
	MUT(bot_le_put32(c + 8, 2), 1, "offset 8: delta format version 2");
	MUT(c[12] = 0x20, 1, "offset 12: unknown flags 0x20");
	MUT(bot_le_put64(c + 376, (1u << 18) + 1), 1, "offset 376: 262145 records, over the limit");
	MUT(bot_le_put64(c + 376, 7), 1, "length");
	MUT(c[len - 20] ^= 1, 0, "CRC-32C mismatch");
	MUT(c[len - 2] = 1, 0, "CRC-32C mismatch");
	MUT(memset(c + 16, 'a', 64), 1, "offset 16: cluster not NUL padded");
	MUT(c[16 + 10] = 'x', 1, "offset 16: cluster not NUL padded");
	MUT(c[17] = ' ', 1, "cluster 'a");
	MUT(memset(c + 80, 0, 64), 1, "job '' is not");
	MUT(c[84] = '.', 1, "job '1234.7' is not");
	MUT(c[144] = 'H', 1, "fabric 'H100-ib-ndr'");
	/* the state directory's own directories: the compactor could not
	 * write such a fabric and failed it on every run, the delta kept in
	 * the inbox (until 2026-12-05); refused, so it is quarantined */
	MUT((memset(c + 144, 0, 64), memcpy(c + 144, "inbox", 5)), 1,
	    "fabric 'inbox' is not a fabric name");
	MUT((memset(c + 144, 0, 64), memcpy(c + 144, "held", 4)), 1,
	    "fabric 'held' is not a fabric name");
	MUT(c[208] = '/', 1, "node '/id001'");
	MUT(c[392] = '\n', 1, "account");
	MUT(c[456] = 1, 1, "build id");
	MUT(c[470] = 'x', 1, "offset 456: build id not NUL padded");
	MUT(c[310] = 1, 1, "offset 304: reserved bytes not zero");
	MUT(c[511] = 1, 1, "offset 472: reserved bytes not zero");
	MUT(bot_le_put32(c + 284, 0xfffffff1u), 1, "step id 0xfffffff1");
	MUT(bot_le_put32(c + 288, 0), 1, "array task 7 without an array job");
	MUT(bot_le_put32(c + 300, 1), 1, "het component 1 without a het job");
	MUT(bot_le_put32(c + 328, 0), 1, "step nodes 0");
	MUT(bot_le_put32(c + 328, 1), 1, "record 0 (offset 512): nNodes 2 over the step's 1 nodes");
	MUT(bot_le_put64(c + 344, 3000), 1, "step end 2000 before its start 3000");
	MUT(c[12] = BOT_DELTA_F_ACCOUNT, 1, "account trusted");
	MUT(c[rec0 + 160] = 7, 1, "record 1 (offset 672): ");
	MUT(c[rec0 + 160 + 29] = 1, 1, "record 1 (offset 672): reserved bytes not zero");
	MUT(c[rec0 + 160 * 2 + 74] = 1, 1, "record 2 (offset 832): reserved bytes not zero");
	MUT(bot_le_put64(c + rec0 + 160 + 40, 0), 1, "record 1 (offset 672): not in the canonical order");
	MUT(bot_le_put32(c + rec0 + 160 * 4 + 16, 5), 1, "record 5 (offset 1312): not in the canonical");
	/* over 48 MiB: refused before anything else is read */
	big = calloc(1, (size_t)BOT_DELTA_MAX_FILE + 1);
	ck_assert_ptr_nonnull(big);
	memcpy(big, b, BOT_DELTA_HDR_SIZE);
	expect_refused(big, (size_t)BOT_DELTA_MAX_FILE + 1, "over the 50331648-byte limit");
	free(big);
	/* the name is the header's, or the file is refused */
	{
		struct bot_delta d;
		char err[BOT_DELTA_ERR_MAX];

		ck_assert_int_eq(bot_delta_parse("dir/x.nbd", 1, b, len, &d, err, sizeof(err)), -1);
		ck_assert_str_eq(err, "dir/x.nbd: not the name its header gives (" NAME ")");
		ck_assert_int_eq(bot_delta_parse("dir/" NAME, 1, b, len, &d, err, sizeof(err)), 0);
		bot_delta_free(&d);
		ck_assert_int_eq(bot_delta_parse("x.nbd", 0, b, len, &d, err, sizeof(err)), 0);
		bot_delta_free(&d);
	}
#undef MUT
	free(c);
	free(b);
}
END_TEST

/* Review finding 15: a cost entry of -0 is refused (section 9: -1 or a
 * finite value >= 0, never -0), by the encoder and the reader. */
START_TEST(test_negative_zero_cost)
{
	struct bot_spool_rec r[8];
	struct bot_delta_hdr h = hdr();
	char err[BOT_DELTA_ERR_MAX];
	uint8_t *b, *buf;
	size_t n = records(r), len, off;
	uint32_t bits = 0x80000000u;

	r[0].flags &= (uint8_t)~BOT_SPOOL_F_NO_COST;
	r[0].cost[2] = -0.0f;
	ck_assert_int_eq(bot_delta_encode(&h, r, n, &buf, &len, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "cost[2] is -0"), "%s", err);
	b = image(&len);
	off = BOT_DELTA_HDR_SIZE + 76 + 4 * 2;
	bot_le_put32(b + off, bits);
	fix_crc(b, len);
	expect_refused(b, len, "record 0 (offset 512): cost[2] is -0, not -1 or a finite value >= 0");
	free(b);
}
END_TEST

START_TEST(test_read_at)
{
	struct bot_delta d;
	char err[BOT_DELTA_ERR_MAX], path[BOT_TEST_PATH_MAX];
	size_t len;
	uint8_t *b = image(&len);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	bot_test_write(dir, NAME, b, len);
	ck_assert_msg(bot_delta_read_at(dfd, NAME, NAME, &d, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(d.hdr.nrecords, 6);
	bot_delta_free(&d);
	/* another name */
	bot_test_write(dir, "other.nbd", b, len);
	ck_assert_int_eq(bot_delta_read_at(dfd, "other.nbd", "other.nbd", &d, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "other.nbd: not the name its header gives"), "%s", err);
	/* a second link */
	ck_assert_int_eq(link(bot_test_path(path, dir, NAME), bot_test_path(path + 256, dir, "l.nbd")), 0);
	ck_assert_int_eq(bot_delta_read_at(dfd, NAME, NAME, &d, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, NAME ": 2 hard links (a delta has exactly one)"), "%s", err);
	/* a symbolic link, to a valid delta */
	ck_assert_int_eq(symlink("l.nbd", bot_test_path(path, dir, "s.nbd")), 0);
	ck_assert_int_eq(bot_delta_read_at(dfd, "s.nbd", "s.nbd", &d, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "s.nbd: a symbolic link, not a delta"), "%s", err);
	/* a FIFO is never waited on */
	ck_assert_int_eq(mkfifo(bot_test_path(path, dir, "f.nbd"), 0600), 0);
	ck_assert_int_eq(bot_delta_read_at(dfd, "f.nbd", "f.nbd", &d, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "f.nbd: a FIFO, not a delta"), "%s", err);
	ck_assert_int_eq(bot_delta_read_at(dfd, "none.nbd", "none.nbd", &d, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "none.nbd: No such file"), "%s", err);
	close(dfd);
	free(b);
}
END_TEST

static Suite *delta_suite(void)
{
	Suite *s = suite_create("delta");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_name);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_fabric_whole_field);
	tcase_add_test(tc, test_read_at);
	tcase_add_test(tc, test_negative_zero_cost);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(delta_suite)
