/*
 * progress.c - one updating line on a terminal (progress.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/progress.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* n as "950", "12.3K", "4.5M" into buf. */
static const char *count(char *buf, size_t len, uint64_t n)
{
	if (n < 10000)
		snprintf(buf, len, "%llu", (unsigned long long)n);
	else if (n < 10000000)
		snprintf(buf, len, "%.1fK", n / 1e3);
	else
		snprintf(buf, len, "%.1fM", n / 1e6);
	return buf;
}

void bot_progress_start(struct bot_progress *p, const char *what, uint64_t total)
{
	const char *e = getenv("NCCL_BOT_PROGRESS");

	memset(p, 0, sizeof(*p));
	p->on = isatty(STDERR_FILENO) && !(e && !strcmp(e, "0"));
	p->what = what;
	p->total = total;
}

void bot_progress_update(struct bot_progress *p, uint64_t done)
{
	char a[32], b[32];
	uint64_t t;

	if (!p->on)
		return;
	t = now_ms();
	if (p->drawn && t - p->last_ms < 100 && done != p->total)
		return;
	p->last_ms = t;
	p->drawn = 1;
	if (p->total)
		fprintf(stderr, "\r\033[Knccl-bot: %s %3llu%% (%s of %s)", p->what,
			(unsigned long long)(done >= p->total ? 100 : done * 100 / p->total),
			count(a, sizeof(a), done), count(b, sizeof(b), p->total));
	else
		fprintf(stderr, "\r\033[Knccl-bot: %s %s", p->what, count(a, sizeof(a), done));
	fflush(stderr);
}

void bot_progress_end(struct bot_progress *p)
{
	if (p->on && p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->drawn = 0;
}

void bot_progress_cb(void *arg, uint64_t done, uint64_t total)
{
	struct bot_progress *p = arg;

	p->total = total;
	bot_progress_update(p, done);
}
