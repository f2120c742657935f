/*
 * testutil.h - what every unit test shares: a scratch directory made and
 * removed per test, small file helpers, and the Check runner's main().
 *
 * Header-only (static functions), so a test stays one .c file. Scratch
 * directories live under $TMPDIR (default /tmp) and are removed without a
 * shell (nftw, depth first, never following links), so a test that leaves
 * a FIFO, a symlink or a read-only file behind still cleans up.
 *
 *	static char dir[64];
 *	static void setup(void) { bot_test_mkdtemp(dir, sizeof(dir), "state"); }
 *	static void teardown(void) { bot_test_rmtree(dir); }
 *	...
 *	BOT_TEST_MAIN(state_suite)
 */
#ifndef BOT_TESTUTIL_H
#define BOT_TESTUTIL_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOT_TEST_PATH_MAX 512

/* A fresh directory $TMPDIR/nb-<tag>-XXXXXX into dir (len bytes); fails
 * the test when it cannot be made or its name does not fit. */
static inline void bot_test_mkdtemp(char *dir, size_t len, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	int n;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	n = snprintf(dir, len, "%s/nb-%s-XXXXXX", tmp, tag);
	ck_assert_msg(n > 0 && (size_t)n < len, "TMPDIR %s: scratch path too long", tmp);
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
}

static inline int bot_test_rm_one(const char *path, const struct stat *st, int type,
				  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP) {
		if (rmdir(path) != 0)
			fprintf(stderr, "testutil: cannot remove %s\n", path);
	} else if (unlink(path) != 0) {
		fprintf(stderr, "testutil: cannot remove %s\n", path);
	}
	return 0;
}

/* Remove a scratch directory and everything in it (never follows links). */
static inline void bot_test_rmtree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, bot_test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name into path (BOT_TEST_PATH_MAX bytes). */
static inline const char *bot_test_path(char *path, const char *dir, const char *name)
{
	ck_assert_int_lt(snprintf(path, BOT_TEST_PATH_MAX, "%s/%s", dir, name), BOT_TEST_PATH_MAX);
	return path;
}

/* Write len bytes into dir/name (created or truncated). */
static inline void bot_test_write(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[BOT_TEST_PATH_MAX];
	FILE *f = fopen(bot_test_path(path, dir, name), "wb");

	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Run a suite; the process exit status. */
static inline int bot_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* main() for a test whose suite comes from fn(). */
#define BOT_TEST_MAIN(fn)		\
	int main(void)			\
	{				\
		return bot_test_run(fn());	\
	}

#endif
