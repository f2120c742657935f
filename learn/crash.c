/*
 * crash.c - the crash test hook (learn/crash.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/crash.h"

void bot_crash_point(const char *name)
{
	const char *at = getenv(BOT_CRASH_ENV);

	if (!at || !*at)
		return;
	if (!strcmp(at, name)) {
		raise(SIGKILL);	/* what kill -9 leaves: no handler, no flush */
		_exit(137);	/* not reached */
	}
	if (!strncmp(at, "stop:", 5) && !strcmp(at + 5, name))
		raise(SIGSTOP);	/* the test acts, then continues us (SIGCONT) */
}
