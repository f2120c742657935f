/*
 * childread.h - a function run in a forked child whose answer is read from
 * a pipe within a time bound. srun reads the fabric's state this way twice:
 * for the step's decision (spank/decide.c) and for the latencies of its
 * one-line summary (spank/reportstate.c); a state on a hung filesystem then
 * costs srun the bound, never the step.
 *
 * The child runs fn(fd, arg) with default signal handlers (srun's are not
 * its own) and must _exit; a return from fn exits 2. A child past the bound,
 * or one that says more than max bytes, is killed, and so is one that
 * closed the pipe but has not ended about 100 ms later (its answer stands,
 * its exit is not reported as seen). Either way the parent reaps it if it
 * ends within about 100 ms of its last byte or of the kill; one stuck in
 * the kernel is left behind rather than waited for.
 */
#ifndef BOT_SPANK_CHILDREAD_H
#define BOT_SPANK_CHILDREAD_H

#include <stddef.h>
#include <stdint.h>

struct bot_spank_childread {
	uint8_t *buf;	/* what the child wrote (malloc'd: the caller frees) */
	size_t len;
	int exited;	/* its exit was seen: status holds its wait status */
	int status;
};

/* 0: the child closed its end of the pipe (r->buf, r->len; r->exited says
 * whether its exit status was seen: not when SIGCHLD is ignored or another
 * reaper took it). -1 with a reason in why (r->buf NULL): it could not be
 * started, the bound of timeout_ms passed ("... took over N ms
 * (timeout_ms=)"), it said more than max bytes, or the pipe failed. */
int bot_spank_childread(void (*fn)(int fd, void *arg), void *arg, uint64_t timeout_ms,
			size_t max, struct bot_spank_childread *r, char *why, size_t whylen);

#endif
