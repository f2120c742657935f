/*
 * test_limits.c - the bounds of one batch of spool files (learn/compile.h
 * BOT_COMPILE_MAX_*), with learn/compile.c and learn/spoolsweep.c built
 * here under small bounds (tests/Makefile.inc): 3 files, 20 clean samples,
 * 4 contexts. Past a bound a batch is refused whole with the bound named;
 * at the bound it is read.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/spool.h"
#include "common/sweep.h"
#include "learn/compile.h"
#include "learn/spoolsweep.h"
#include "tests/unit/testutil.h"

#if BOT_COMPILE_MAX_FILES != 3 || BOT_COMPILE_MAX_SAMPLES != 20 || BOT_COMPILE_MAX_CONTEXTS != 4
#error "test_limits is built with small bounds (tests/Makefile.inc)"
#endif

static char dir[64], logged[4096];

static void collect(void *arg, int level, const char *msg)
{
	size_t n = strlen(logged);

	(void)arg;
	snprintf(logged + n, sizeof(logged) - n, "%s: %s\n", bot_log_level_name(level), msg);
}

static const struct bot_log test_log = { collect, NULL };

/* <dir>/<name>: nsamples clean samples of ring/simple, each of its own
 * collective, on nctx communicator sizes (contexts) in turn. */
static void write_spool(const char *name, unsigned nsamples, unsigned nctx, unsigned rank)
{
	size_t len = BOT_SPOOL_HDR_SIZE + nsamples * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	uint8_t *buf = calloc(1, len);
	struct bot_spool_hdr h;
	char path[160];
	uint32_t crc;
	FILE *f;

	ck_assert_ptr_nonnull(buf);
	memset(&h, 0, sizeof(h));
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = nsamples;
	strcpy(h.build_id, "nccl-bot test");
	h.pid = 100 + rank;
	bot_spool_pack_hdr(buf, &h);
	for (unsigned i = 0; i < nsamples; i++) {
		struct bot_spool_rec r;

		memset(&r, 0, sizeof(r));
		r.kind = BOT_SPOOL_SAMPLE;
		r.coll = BOT_COLL_ALLREDUCE;
		r.arm = (uint8_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE);
		r.nchannels = 8;
		r.auto_arm = BOT_SPOOL_ARM_NONE;
		r.decided = BOT_SPOOL_ARM_NONE;
		r.comm_id = 0x1000 + rank;	/* one comm per file: no minimum over ranks */
		r.nranks = 16 + i % nctx;
		r.nnodes = 2;
		r.nbytes = 8u << 20;
		r.seq = i;
		r.duration_ns = 100000;
		for (int a = 0; a < BOT_SPOOL_NCOST; a++)
			r.cost[a] = -1.0f;
		r.cost[r.arm] = 100.0f;
		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r);
	}
	crc = bot_spool_crc32c(0, buf, len - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		buf[len - 8 + i] = (uint8_t)(crc >> (8 * i));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
}

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "limits");
	logged[0] = 0;
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

/* Read dir as one batch: bot_compile_read's rc, err filled. */
static int read_batch(struct bot_compile_report *rep, char *err, size_t errlen)
{
	const char *paths[] = { dir };
	struct bot_kb *kb;
	uint64_t *src;
	size_t nsrc;
	int rc = bot_compile_read(paths, 1, NULL, &kb, &src, &nsrc, rep, &test_log, err, errlen);

	if (rc == 0) {
		bot_kb_free(kb);
		free(src);
	}
	return rc;
}

START_TEST(test_files_bound)
{
	struct bot_compile_paths list;
	char err[512], p[4][96];
	const char *paths[] = { p[0], p[1], p[2], p[3] };

	write_spool("nb-1.spool", 1, 1, 1);
	write_spool("nb-2.spool", 1, 1, 2);
	write_spool("nb-3.spool", 1, 1, 3);
	snprintf(p[0], sizeof(p[0]), "%s", dir);
	ck_assert_msg(bot_compile_list(paths, 1, &list, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(list.n, 3);
	bot_compile_paths_free(&list);
	write_spool("nb-4.spool", 1, 1, 4);
	ck_assert_int_eq(bot_compile_list(paths, 1, &list, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "more than 3 spool files in one batch: refused whole"), "%s", err);
	ck_assert_uint_eq(list.n, 0);
	/* named one by one: the same bound */
	for (int i = 0; i < 4; i++)
		snprintf(p[i], sizeof(p[i]), "%s/nb-%d.spool", dir, i + 1);
	ck_assert_int_eq(bot_compile_list(paths, 4, &list, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nb-4.spool: more than 3 spool files"), "%s", err);
	ck_assert_int_eq(bot_compile_list(paths, 3, &list, err, sizeof(err)), 0);
	bot_compile_paths_free(&list);
}
END_TEST

START_TEST(test_samples_bound)
{
	struct bot_compile_report rep;
	char err[512];

	write_spool("nb-1.spool", 10, 1, 1);
	write_spool("nb-2.spool", 10, 1, 2);
	ck_assert_msg(read_batch(&rep, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(rep.collectives, 20);
	write_spool("nb-3.spool", 1, 1, 3);
	ck_assert_int_eq(read_batch(&rep, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nb-3.spool: more than 20 clean samples in one batch: refused "
			     "whole"), "%s", err);
}
END_TEST

START_TEST(test_contexts_bound)
{
	struct bot_compile_report rep;
	char err[512];

	write_spool("nb-1.spool", 4, 4, 1);
	ck_assert_msg(read_batch(&rep, err, sizeof(err)) == 0, "%s", err);
	write_spool("nb-2.spool", 5, 5, 2);
	ck_assert_int_eq(read_batch(&rep, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nb-2.spool: more than 4 contexts in one batch"), "%s", err);
}
END_TEST

/* spool sweep: past the bound no row of the conversion is kept. */
START_TEST(test_sweep_rows_bound)
{
	struct bot_spoolsweep_report rep;
	struct bot_sweep sw;
	const char *paths[] = { dir };

	write_spool("nb-1.spool", 10, 1, 1);
	write_spool("nb-2.spool", 10, 1, 2);
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_spoolsweep(paths, 1, "f1", &sw, &rep, &test_log), 0);
	ck_assert_uint_eq(sw.nrows, 20);
	write_spool("nb-3.spool", 1, 1, 3);
	ck_assert_int_eq(bot_spoolsweep(paths, 1, "f1", &sw, &rep, &test_log), -1);
	ck_assert_uint_eq(sw.nrows, 20);	/* the first conversion's rows only */
	ck_assert_msg(strstr(logged, "nb-3.spool: more than 20 rows in one conversion: refused "
			     "whole"), "%s", logged);
	bot_sweep_free(&sw);
}
END_TEST

static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_files_bound);
	tcase_add_test(tc, test_samples_bound);
	tcase_add_test(tc, test_contexts_bound);
	tcase_add_test(tc, test_sweep_rows_bound);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(limits_suite)
