/*
 * util.h - the primitives rank-side files share: a spin lock, the
 * monotonic clocks (precise and coarse), and the size bucket inline.
 *
 * No pthread locks in the library: pthread symbols were re-versioned in
 * glibc 2.34, and libnccl-tuner-bot.so must load on glibc 2.28 (the one
 * pthread call, the spool's writer thread, is pinned to 2.28's version:
 * tuner/spoolwriter.c). The lock is a compiler-builtin test-and-set that yields
 * while it waits; it guards only short, rare sections (init, window
 * transitions, record lists, the spool store), never getCollInfo's
 * decision.
 */
#ifndef BOT_TUNER_UTIL_H
#define BOT_TUNER_UTIL_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

static inline void bot_spin_lock(char *l)
{
	while (__atomic_test_and_set(l, __ATOMIC_ACQUIRE))
		sched_yield();
}

static inline void bot_spin_unlock(char *l)
{
	__atomic_clear(l, __ATOMIC_RELEASE);
}

static inline uint64_t bot_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The coarse monotonic clock (the kernel's tick, 1-10 ms; a few ns to
 * read): for throttling only, never compared with bot_now_ns(). */
static inline uint64_t bot_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Size bucket of doc/formats.md section 2 (the same as bot_size_bucket()),
 * inline for getCollInfo and the profiler's events. For n >= 4 with top
 * bit e, n >> (e - 2) is 4..7, i.e. 4 + the two bits below the top one: the
 * bucket 4e + those bits is 4(e - 1) + (n >> (e - 2)). */
static inline unsigned bot_util_bucket(uint64_t n)
{
	unsigned e;

	if (n < 4)
		return n > 1 ? 4 : 0;
	e = (unsigned)__builtin_clzll(n) ^ 63u;
	return 4 * e - 4 + (unsigned)(n >> (e - 2));
}

#endif
