/*
 * reportstate.c - the fabric's learned state for srun's one-line summary,
 * read in a child bounded in time (spank/reportstate.h; formats.md 17).
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

#include "learn/store.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "spank/reportstate.h"

/* The child: the state loaded, each arm of m's contexts cut to its median
 * bin, the image written to fd. Exit 0 written, 1 no state, 2 not read. */
static void child(int fd, const char *dir, const char *fabric, const struct bot_report_part *m)
{
	struct bot_state s, r;
	char snap[BOT_STATE_NAME_MAX], err[BOT_STATE_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0, off = 0;
	int rc;

	/* srun's own handlers are not this reader's: a Ctrl-C ends it */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	rc = bot_store_load(dir, fabric, &s, snap, err, sizeof(err));
	if (rc != 0)
		_exit(rc > 0 ? 1 : 2);
	if (bot_state_init(&r, fabric) < 0)
		_exit(2);
	for (size_t i = 0; i < m->nctx; i++) {
		const struct bot_report_ctx *c = &m->ctx[i];
		uint64_t key = bot_ctx_key(c->coll, c->bucket, c->nranks, c->nnodes);
		const struct bot_kb_ctx *k = bot_kb_find(s.kb, key);
		struct bot_kb_ctx *d;

		if (!k)
			continue;
		for (int a = 0; a < BOT_NARMS; a++) {
			int q = k->arm[a].n ? bot_stats_median_q(&k->arm[a]) : -1;

			if (q < 0)
				continue;
			d = bot_kb_get(r.kb, key);
			if (!d || bot_stats_add_q(&d->arm[a], q, 1) < 0)
				_exit(2);
		}
	}
	if (bot_state_encode(&r, &buf, &len, err, sizeof(err)) < 0)
		_exit(2);
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(2);
		off += (size_t)w;
	}
	_exit(0);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)((now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000);
}

int bot_spank_report_state(const char *state_dir, const char *fabric, uint64_t timeout_ms,
			   const struct bot_report_part *m, struct bot_state *out, char *why,
			   size_t whylen)
{
	size_t cap = 1u << 16, n = 0;
	uint8_t *buf;
	struct timespec t0;
	int p[2], status = 0, done = 0;
	long bound = timeout_ms > 60000 ? 60000 : (long)timeout_ms;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (!state_dir || !*state_dir || !fabric || !strcmp(fabric, "prior") ||
	    !bot_state_fabric_ok(fabric) || !m->nctx) {
		snprintf(why, whylen, "no fabric state to read");
		return -1;
	}
	buf = malloc(cap);
	if (!buf || pipe2(p, O_CLOEXEC) < 0) {
		free(buf);
		snprintf(why, whylen, "cannot start the state reader: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "cannot start the state reader: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(buf);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(p[1], state_dir, fabric, m);
	}
	close(p[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(why, whylen, "reading the state took over %ld ms (timeout_ms=)", bound);
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		long left = bound - ms_since(&t0);
		ssize_t got;
		int pr;

		if (left <= 0)
			break;
		pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0)
			continue;
		if (n == cap) {
			uint8_t *nb = cap < BOT_SPANK_REPORT_STATE_MAX ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				snprintf(why, whylen, "the state reader said over %u bytes",
					 BOT_SPANK_REPORT_STATE_MAX);
				break;
			}
			buf = nb;
			cap *= 2;
		}
		got = read(p[0], buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			done = got == 0;
			if (!done)
				snprintf(why, whylen, "read: %s", strerror(errno));
			break;
		}
		n += (size_t)got;
	}
	close(p[0]);
	if (!done) {
		kill(pid, SIGKILL);
		/* reaped once the kill lands, waited for at most about 100 ms (a
		 * child just forked is not yet scheduled; 1 ms left zombies in
		 * srun); one stuck in the kernel (a hung filesystem) is left */
		for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
			usleep(1000);
		free(buf);
		return -1;
	}
	{
		pid_t w;

		while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (w != pid) {
			/* SIGCHLD ignored, or another reaper took it: its exit
			 * status is unknown, so its answer is not taken */
			snprintf(why, whylen, "the state reader's exit was not seen: %s",
				 strerror(errno));
			free(buf);
			return -1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, whylen, WIFEXITED(status) && WEXITSTATUS(status) == 1 ?
			 "fabric %s has no learned state yet" : "fabric %s's state cannot be read",
			 fabric);
		free(buf);
		return -1;
	}
	{
		char err[BOT_STATE_ERR_MAX];

		if (bot_state_parse("the state reader's answer", buf, n, out, err,
				    sizeof(err)) < 0) {
			snprintf(why, whylen, "%s", err);
			free(buf);
			return -1;
		}
	}
	free(buf);
	if (strcmp(out->fabric, fabric)) {
		bot_state_free(out);
		memset(out, 0, sizeof(*out));
		snprintf(why, whylen, "the state reader answered for another fabric");
		return -1;
	}
	why[0] = 0;
	return 0;
}
