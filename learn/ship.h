/*
 * ship.h - moving deltas from a node's outbox into the state directory's
 * inbox (doc/formats.md section 14, "Ship"): `nccl-bot ship`, run from a
 * timer by the service account.
 *
 * For every *.nbd of the outbox (not hidden; regular, one link, at most
 * 48 MiB, opened as every reader of untrusted files opens: no link, no
 * FIFO, the same inode): copy to <state>/inbox/.<name>.tmp (O_EXCL, 0640),
 * fsync, rename to <name>, fsync the inbox, then remove it from the outbox.
 * A name already in the inbox with the same bytes is done (removed from the
 * outbox); with other bytes the outbox file is kept and reported (a
 * conflict; never overwritten). With a ship command, each delta is handed
 * to it instead (`CMD... FILE`, no shell, exit 0 = shipped, then removed).
 *
 * Safe against itself: the O_EXCL temporary name is the claim on a name,
 * so of two shippers only one copies a given delta at a time; the other
 * leaves it for the next run ("busy"). A claimer holds an flock on its
 * temporary file while it works, so a temporary file left by a shipper that
 * died (unlocked, not empty) is removed and the delta shipped again. A run
 * never takes longer than its timeout: checked between files and between
 * chunks of a copy; what is left waits for the next run.
 */
#ifndef BOT_LEARN_SHIP_H
#define BOT_LEARN_SHIP_H

#include <stddef.h>

#include "learn/log.h"

#define BOT_SHIP_MAX_FILES 65536u	/* deltas looked at per run (the rest: next run) */

struct bot_ship_opts {
	const char *outbox;		/* the node's outbox */
	const char *state;		/* the state directory: deltas go to state/inbox */
	double timeout;			/* seconds a run may take (> 0) */
	const char *command;		/* NULL or "": copy; else split on blanks, no shell */
};

struct bot_ship_result {
	size_t seen;			/* *.nbd entries looked at */
	size_t shipped;			/* copied (or handed to the command) and removed */
	size_t duplicate;		/* already in the inbox with the same bytes: removed */
	size_t conflict;		/* in the inbox with other bytes: kept, reported */
	size_t busy;			/* another shipper is copying it: left for the next run */
	size_t refused;			/* not a regular file with one link, too big: kept */
	size_t failed;			/* an I/O error or the command failed: kept */
	size_t left;			/* not reached before the timeout, or not listed (over the cap) */
	int timed_out;
};

/*
 * The *.nbd entries of a directory open on dirfd (not hidden), sorted by
 * name, at most max of them (the first max by name; *more says how many
 * others there were, at most INT_MAX). Entries are not opened here. 0 with *names (free each
 * and the array), or -1 with err (a listing that fails part-way is an
 * error, never a shorter list).
 */
int bot_ship_list(int dirfd, const char *path, size_t max, char ***names, size_t *n, int *more,
		  char *err, size_t errlen);

/* One run: 0 (what happened to each delta is counted and, for problems,
 * on log), or -1 when the outbox or the inbox cannot be opened (on log). */
int bot_ship_run(const struct bot_ship_opts *o, struct bot_ship_result *r,
		 const struct bot_log *log);

#endif
