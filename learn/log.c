/*
 * log.c - messages through the caller's callback (log.h).
 *
 * A message is formatted into a stack buffer; one that does not fit (a long
 * path in it) is formatted again into an allocation of its size, so nothing
 * is cut. When that allocation fails the shortened text is handed on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "learn/log.h"

void bot_log_msg(const struct bot_log *log, int level, const char *fmt, ...)
{
	char buf[1024], *big = NULL;
	va_list ap;
	int n;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf) && (big = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	log->fn(log->arg, level, big ? big : buf);
	free(big);
}

const char *bot_log_level_name(int level)
{
	switch (level) {
	case BOT_LOG_ERROR:
		return "error";
	case BOT_LOG_WARN:
		return "warning";
	default:
		return "info";
	}
}
