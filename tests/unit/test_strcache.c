/*
 * test_strcache.c - tuner/strcache.h, the profiler's cache of NCCL's
 * descriptor strings, under threads that refill it all the time.
 *
 * Checks: a single thread gets each string's own id, hits and misses; four
 * threads drawing from 16 strings for 8 slots (every call may evict) never
 * get another string's id. The cache before 2026-12-04 (the pointer read,
 * then the id, with no check that the slot was not refilled in between)
 * gave 66-389 wrong ids in 20 million calls here, on 2 cores.
 */
#include <check.h>
#include <pthread.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "tuner/strcache.h"

#define NSTR 16
#define CALLS 5000000L
#define THREADS 4

static char strs[NSTR][4];
static struct bot_strcache cache;
static long wrong, parsed;

/* the id is the string's first letter; a little work so that a writer is
 * caught in the middle more often */
static int parse(const char *s)
{
	volatile int k = 0;

	for (int j = 0; j < 50; j++)
		k += j;
	__atomic_add_fetch(&parsed, 1, __ATOMIC_RELAXED);
	return s[0] - 'a';
}

START_TEST(test_single_thread)
{
	struct bot_strcache c;

	memset(&c, 0, sizeof(c));
	for (int i = 0; i < NSTR; i++)
		strs[i][0] = (char)('a' + i);
	parsed = 0;
	ck_assert_int_eq(bot_strcache_get(&c, NULL, parse), -1);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(bot_strcache_get(&c, strs[i], parse), i);
	ck_assert_int_eq(parsed, 4);	/* hits after the first round */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < NSTR; i++)
			ck_assert_int_eq(bot_strcache_get(&c, strs[i], parse), i);
}
END_TEST

static void *draw(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg;
	long bad = 0;

	for (long n = 0; n < CALLS; n++) {
		int k;

		r = r * 1103515245u + 12345u;
		k = (int)((r >> 16) % NSTR);
		if (bot_strcache_get(&cache, strs[k], parse) != k)
			bad++;
	}
	__atomic_add_fetch(&wrong, bad, __ATOMIC_RELAXED);
	return NULL;
}

START_TEST(test_threads_never_mislabel)
{
	pthread_t t[THREADS];

	for (int i = 0; i < NSTR; i++)
		strs[i][0] = (char)('a' + i);
	memset(&cache, 0, sizeof(cache));
	wrong = parsed = 0;
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, draw, (void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_msg(wrong == 0, "%ld of %ld calls got another string's id", wrong,
		      THREADS * CALLS);
	ck_assert_int_gt(parsed, 1000);		/* the slots were refilled */
	ck_assert_int_lt(parsed, THREADS * CALLS);	/* and hit */
}
END_TEST

static Suite *strcache_suite(void)
{
	Suite *s = suite_create("strcache");
	TCase *tc = tcase_create("cache");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_single_thread);
	tcase_add_test(tc, test_threads_never_mislabel);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(strcache_suite)
