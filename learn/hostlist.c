/*
 * hostlist.c - Slurm host lists without Slurm (learn/hostlist.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/hostlist.h"
#include "learn/log.h"

int bot_hostlist_name_ok(const char *s)
{
	if (!*s || strlen(s) >= BOT_HOSTLIST_NAME)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* One name of the list (no top-level comma): "pre[ranges]post" or plain. */
static int expand_one(const char *s, size_t len, int (*cb)(void *, const char *), void *arg,
		      size_t *count, char *err, size_t errlen)
{
	char buf[BOT_HOSTLIST_NAME * 2];
	const char *lb = memchr(s, '[', len), *rb;
	size_t pre, post;

	if (!lb) {
		if (len >= BOT_HOSTLIST_NAME)
			return bot_log_errf(err, errlen, "a name longer than %d bytes",
					    BOT_HOSTLIST_NAME - 1);
		memcpy(buf, s, len);
		buf[len] = 0;
		if (!bot_hostlist_name_ok(buf))
			return bot_log_errf(err, errlen, "'%s': not a name", buf);
		if (++*count > BOT_HOSTLIST_MAX_NAMES)
			return bot_log_errf(err, errlen, "over %u names", BOT_HOSTLIST_MAX_NAMES);
		return cb(arg, buf);
	}
	rb = memchr(lb, ']', len - (size_t)(lb - s));
	if (!rb || memchr(rb + 1, '[', len - (size_t)(rb + 1 - s)))
		return bot_log_errf(err, errlen, "'%.*s': one [...] per name", (int)len, s);
	pre = (size_t)(lb - s);
	post = len - (size_t)(rb + 1 - s);
	if (pre + post >= BOT_HOSTLIST_NAME)
		return bot_log_errf(err, errlen, "'%.*s': too long", (int)len, s);
	for (const char *p = lb + 1; p < rb;) {
		const char *e = memchr(p, ',', (size_t)(rb - p));
		const char *dash;
		unsigned long lo, hi;
		size_t width;
		char *end;

		if (!e)
			e = rb;
		dash = memchr(p, '-', (size_t)(e - p));
		if (p == e || !isdigit((unsigned char)*p))
			return bot_log_errf(err, errlen, "'%.*s': a range is N or N-M", (int)len, s);
		width = (size_t)((dash ? dash : e) - p);
		lo = strtoul(p, &end, 10);
		if (end != (dash ? dash : e) || width > 9)
			return bot_log_errf(err, errlen, "'%.*s': a range is N or N-M", (int)len, s);
		hi = lo;
		if (dash) {
			if (!isdigit((unsigned char)dash[1]) || e - dash - 1 > 9)
				return bot_log_errf(err, errlen, "'%.*s': a range is N or N-M",
						    (int)len, s);
			hi = strtoul(dash + 1, &end, 10);
			if (end != e || hi < lo)
				return bot_log_errf(err, errlen, "'%.*s': a range is N or N-M "
						    "with N <= M", (int)len, s);
		}
		if (hi - lo >= BOT_HOSTLIST_MAX_NAMES)
			return bot_log_errf(err, errlen, "over %u names", BOT_HOSTLIST_MAX_NAMES);
		for (unsigned long v = lo; v <= hi; v++) {
			int n = snprintf(buf, sizeof(buf), "%.*s%0*lu%.*s", (int)pre, s, (int)width,
					 v, (int)post, rb + 1);
			int rc;

			if (n < 0 || n >= BOT_HOSTLIST_NAME)
				return bot_log_errf(err, errlen, "a name longer than %d bytes",
						    BOT_HOSTLIST_NAME - 1);
			if (!bot_hostlist_name_ok(buf))
				return bot_log_errf(err, errlen, "'%s': not a name", buf);
			if (++*count > BOT_HOSTLIST_MAX_NAMES)
				return bot_log_errf(err, errlen, "over %u names",
						    BOT_HOSTLIST_MAX_NAMES);
			if ((rc = cb(arg, buf)))
				return rc;
		}
		p = e < rb ? e + 1 : rb;
		if (e < rb && p == rb)
			return bot_log_errf(err, errlen, "'%.*s': an empty range", (int)len, s);
	}
	return 0;
}

int bot_hostlist_expand(const char *expr, int (*cb)(void *arg, const char *name), void *arg,
			char *err, size_t errlen)
{
	size_t count = 0;
	const char *p = expr;

	if (!*p)
		return bot_log_errf(err, errlen, "an empty host list");
	while (*p) {
		const char *q = p;
		int depth = 0, rc;

		while (*q && (depth || *q != ',')) {
			if (*q == '[' && depth++)
				return bot_log_errf(err, errlen, "nested [");
			if (*q == ']' && !depth--)
				return bot_log_errf(err, errlen, "a ] without [");
			q++;
		}
		if (depth)
			return bot_log_errf(err, errlen, "a [ without ]");
		if (q == p)
			return bot_log_errf(err, errlen, "an empty name in '%s'", expr);
		if ((rc = expand_one(p, (size_t)(q - p), cb, arg, &count, err, errlen)))
			return rc;
		p = *q ? q + 1 : q;
		if (*q && !*p)
			return bot_log_errf(err, errlen, "a list ending in ','");
	}
	return 0;
}
