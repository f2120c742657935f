/*
 * crash.h - the crash test hook of the fleet's writers (ship, compact and
 * the publish they call): named points where a test makes the process die
 * as kill -9 would, to check that every interruption leaves the old state
 * or the new one (doc/formats.md section 14, "Test hook").
 *
 * Compiled in always. NCCL_BOT_TEST_CRASH_AT=<point> makes the process
 * kill itself with SIGKILL when it reaches that point (no atexit handler,
 * no flush: what kill -9 leaves); NCCL_BOT_TEST_CRASH_AT=stop:<point> makes
 * it stop there (SIGSTOP) so that a test can change the directory under it
 * (waitpid WUNTRACED) and continue it: a race made to happen, no sleeps.
 * Unset or empty, a point costs one getenv and a compare. Not a setting: a
 * test hook, documented as such.
 */
#ifndef BOT_LEARN_CRASH_H
#define BOT_LEARN_CRASH_H

#define BOT_CRASH_ENV "NCCL_BOT_TEST_CRASH_AT"

/* SIGKILL here when NCCL_BOT_TEST_CRASH_AT names this point. */
void bot_crash_point(const char *name);

#endif
