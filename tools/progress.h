/*
 * progress.h - progress of long work on a terminal: one line on stderr,
 * rewritten in place ("nccl-bot: sim: writing rows 40% (1.2M of 3.0M)"),
 * at most ten times a second, and cleared at the end; nothing at all when
 * stderr is not a terminal, so what scripts and logs see does not change.
 * Commands only (learn/ reports progress through a callback its caller
 * turns into this).
 */
#ifndef BOT_TOOLS_PROGRESS_H
#define BOT_TOOLS_PROGRESS_H

#include <stdint.h>

struct bot_progress {
	int on;			/* stderr is a terminal */
	const char *what;	/* "sim: writing rows" */
	uint64_t total;		/* 0: a count without a percentage */
	uint64_t last_ms;	/* when the line was last drawn */
	int drawn;		/* something is on the line */
};

/* Start: on when stderr is a terminal (NCCL_BOT_PROGRESS=0 turns it off). */
void bot_progress_start(struct bot_progress *p, const char *what, uint64_t total);
/* done of total: the line redrawn when 100 ms have passed or done == total. */
void bot_progress_update(struct bot_progress *p, uint64_t done);
/* The line cleared; p may be started again. */
void bot_progress_end(struct bot_progress *p);
/* For learn/'s callbacks (struct bot_compact_conf's progress): arg is a
 * started struct bot_progress; its total becomes total. */
void bot_progress_cb(void *arg, uint64_t done, uint64_t total);

#endif
