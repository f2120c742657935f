/*
 * log.c - messages through the caller's callback (log.h), and the one
 * escaping helper that keeps every message on one line.
 *
 * A message is formatted into a stack buffer; one that does not fit (a long
 * path in it) is formatted again into an allocation of its size, so nothing
 * is cut. Control characters are then escaped (at most four bytes each);
 * when an allocation fails the shortened text is handed on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/log.h"

static int is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

char *bot_log_esc(char *dst, size_t dstlen, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!dstlen)
		return dst;
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		if (!is_ctl(*p)) {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = (char)*p;
			continue;
		}
		if (o + 4 >= dstlen)
			break;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[*p >> 4];
		dst[o++] = hex[*p & 15];
	}
	dst[o] = 0;
	return dst;
}

void bot_log_esc_inplace(char *s, size_t cap)
{
	char small[1024], *tmp = small;
	size_t n;
	int any = 0;

	if (!s || !cap)
		return;
	for (n = 0; n < cap && s[n]; n++)
		any |= is_ctl((unsigned char)s[n]);
	if (n == cap)	/* not terminated: cut */
		s[--n] = 0;
	if (!any)
		return;
	if (n + 1 > sizeof(small) && !(tmp = malloc(n + 1))) {
		/* no room to copy: blank the control characters instead */
		for (size_t i = 0; i < n; i++)
			if (is_ctl((unsigned char)s[i]))
				s[i] = '?';
		return;
	}
	memcpy(tmp, s, n + 1);
	bot_log_esc(s, cap, tmp);
	if (tmp != small)
		free(tmp);
}

int bot_log_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		bot_log_esc_inplace(err, errlen);
	}
	return -1;
}

void bot_log_msg(const struct bot_log *log, int level, const char *fmt, ...)
{
	char buf[1024], *big = NULL, *esc, *msg;
	const char *p;
	size_t cap;
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
	msg = big ? big : buf;
	for (p = msg; *p && !is_ctl((unsigned char)*p); p++)
		;
	if (!*p) {
		log->fn(log->arg, level, msg);
		free(big);
		return;
	}
	/* A control character takes four bytes escaped. */
	cap = strlen(msg) * 4 + 1;
	esc = malloc(cap);
	if (esc) {
		bot_log_esc(esc, cap, msg);
		log->fn(log->arg, level, esc);
	} else {
		bot_log_esc_inplace(msg, big ? (size_t)n + 1 : sizeof(buf));
		log->fn(log->arg, level, msg);
	}
	free(esc);
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
