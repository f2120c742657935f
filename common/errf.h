/*
 * errf.h - the one way common/ readers report a problem: format it into
 * the caller's buffer (which may be NULL) and return -1, so that a check
 * reads `return bot_errf(err, errlen, "%s: reason", name);`.
 */
#ifndef BOT_COMMON_ERRF_H
#define BOT_COMMON_ERRF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int __attribute__((format(printf, 3, 4)))
bot_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#endif
