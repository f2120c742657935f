/*
 * childread.c - a function in a forked child, its answer read within a
 * bound (childread.h says who uses it and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spank/childread.h"

/* Milliseconds until end, rounded up: 0 only once the end has passed (a
 * bound of 200 ms that gave up after 199.6 ms failed a unit test under
 * load). */
static long ms_left(const struct timespec *end)
{
	struct timespec now;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (long long)(end->tv_sec - now.tv_sec) * 1000000000LL + (end->tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (long)((ns + 999999) / 1000000);
}

static void run_child(int p[2], void (*fn)(int, void *), void *arg)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };

	close(p[0]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	fn(p[1], arg);
	_exit(2);
}

/* Reap pid if it ends within about 100 ms (a child just killed, or one that
 * has just written its last byte, may not have run to its end yet): 0, or
 * -1 when it was not seen to end. */
static int reap(pid_t pid, struct bot_spank_childread *r)
{
	for (int i = 0; i < 100; i++) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			r->exited = 1;
			r->status = st;
			return 0;
		}
		if (w < 0 && errno != EINTR)
			return 0;	/* ECHILD: ignored SIGCHLD, or reaped elsewhere */
		if (w == 0)
			usleep(1000);
	}
	return -1;
}

int bot_spank_childread(void (*fn)(int fd, void *arg), void *arg, uint64_t timeout_ms,
			size_t max, struct bot_spank_childread *r, char *why, size_t whylen)
{
	size_t cap = max < 65536 ? max : 65536;
	struct timespec end;
	int p[2], eof = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	why[0] = 0;
	if (timeout_ms > 24ull * 3600 * 1000)
		timeout_ms = 24ull * 3600 * 1000;	/* no overflow below */
	r->buf = malloc(cap ? cap : 1);
	if (!r->buf || pipe2(p, O_CLOEXEC) < 0) {
		snprintf(why, whylen, "cannot start the state reader: %s", strerror(errno));
		free(r->buf);
		r->buf = NULL;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "cannot start the state reader: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(r->buf);
		r->buf = NULL;
		return -1;
	}
	if (pid == 0)
		run_child(p, fn, arg);
	close(p[1]);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)(timeout_ms / 1000);
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		long left = ms_left(&end);
		ssize_t got;
		int pr;

		if (left <= 0) {
			snprintf(why, whylen, "reading the state took over %llu ms (timeout_ms=)",
				 (unsigned long long)timeout_ms);
			break;
		}
		pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0)
			continue;	/* the bound is checked above */
		if (r->len == cap && cap < max) {
			size_t ncap = cap <= max / 2 ? cap * 2 : max;
			uint8_t *nb = realloc(r->buf, ncap ? ncap : 1);

			if (!nb) {
				snprintf(why, whylen, "the state reader's answer: out of memory");
				break;
			}
			r->buf = nb;
			cap = ncap;
		}
		if (r->len == cap) {
			/* max bytes read: only the end of the pipe may follow */
			uint8_t extra;

			got = read(p[0], &extra, 1);
			if (got > 0) {
				snprintf(why, whylen, "the state reader said over %zu bytes", max);
				break;
			}
		} else {
			got = read(p[0], r->buf + r->len, cap - r->len);
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0) {
			eof = 1;
			break;
		}
		if (got < 0) {
			snprintf(why, whylen, "read: %s", strerror(errno));
			break;
		}
		r->len += (size_t)got;
	}
	close(p[0]);
	if (!eof)
		kill(pid, SIGKILL);
	if (reap(pid, r) < 0 && eof) {
		/* it closed the pipe but lives on: its answer is in, it
		 * is not left running (r->exited stays 0) */
		kill(pid, SIGKILL);
		if (reap(pid, r) == 0)
			r->exited = 0;
	}
	if (!eof) {
		free(r->buf);
		r->buf = NULL;
		r->len = 0;
		return -1;
	}
	return 0;
}
