/*
 * lock.h - how writers of a state directory exclude each other, apart from
 * the store (learn/store.h) so that a writer can lock its own way.
 *
 * The lock every writer takes today (`nccl-bot state add`, the merge of
 * learn/merge.h) is an exclusive flock(2) of <dir>/<fabric>/.lock, held
 * from reading `current` to publishing (doc/formats.md section 12): merges
 * of one fabric run one after the other, merges of different fabrics in
 * parallel. A writer that excludes others by other means (a compactor that
 * is the only writer of its state directory, or that locks the whole
 * directory once) hands the merge a struct bot_lock of its own, or one
 * saying the lock is already held.
 */
#ifndef BOT_LEARN_LOCK_H
#define BOT_LEARN_LOCK_H

#include <stddef.h>

/*
 * Lock a fabric: creates <dir>/<fabric>/ (dir must exist) and its .lock
 * (a regular file, never through a link) and takes an exclusive flock.
 * With wait, blocks while another process holds it; without, returns -2 at
 * once when it is held. Returns an fd for bot_lock_release, -1 with err, or
 * -2 (busy, without wait).
 */
int bot_lock_fabric(const char *dir, const char *fabric, int wait, char *err, size_t errlen);
void bot_lock_release(int fd);

/* A lock as a writer uses it: acquire before loading the fabric's current
 * snapshot, release after publishing (or giving up). acquire returns 0 or
 * -1 with err. */
struct bot_lock {
	int (*acquire)(struct bot_lock *l, const char *dir, const char *fabric, char *err,
		       size_t errlen);
	void (*release)(struct bot_lock *l);
	int fd;			/* the flock's fd while held; -1 */
	void *arg;		/* an implementation's own */
};

/* The flock above, waiting while another writer holds it. */
void bot_lock_init_flock(struct bot_lock *l);
/* The caller already holds the fabric's lock (or is the only writer):
 * acquire and release do nothing. */
void bot_lock_init_held(struct bot_lock *l);

#endif
