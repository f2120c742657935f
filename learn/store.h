/*
 * store.h - the state directory (doc/formats.md section 12): per fabric,
 * content-addressed snapshots and the `current` pointer naming the
 * published one.
 *
 *   <dir>/<fabric>/snap-<digest>.nbs   immutable snapshots (common/state.h)
 *   <dir>/<fabric>/current             "snap-<digest>.nbs\n"
 *
 * Owns that layout, what a reader refuses in it (links, FIFOs, files with
 * several hard links, a pointer that is not a snapshot name, a snapshot
 * whose bytes do not match its name or that holds another fabric,
 * snapshots with a lineage but no `current`), publishing by temporary file
 * + fsync + rename, so that a reader sees the old snapshot or the new one,
 * the parent chain (each snapshot names the one it was made from),
 * retention along it and rollback.
 *
 * A fabric without `current` whose one snapshot is a version 2 or later
 * first snapshot (parent 0) is a first publish interrupted after the
 * snapshot's rename and before `current` (kill -9, a crash, or `current`
 * deleted; a publish that fails there takes its snapshot back): that
 * snapshot is the fabric's state, for readers as for writers, and the next
 * writer completes the publish (bot_store_complete) before it loads.
 * Several such snapshots (left by builds that started such a fabric over)
 * are refused: the admin names the one to keep (rollback --to).
 *
 * The store does not lock, but for rollback. A writer holds the fabric's
 * writer lock from load to publish (and prune): learn/lock.h's flock of
 * <dir>/<fabric>/.lock, or a lock of its own (a compactor that is the only
 * writer of a state directory). Readers need no lock.
 */
#ifndef BOT_LEARN_STORE_H
#define BOT_LEARN_STORE_H

#include <stddef.h>

#include "common/state.h"
#include "learn/fabricdir.h"
#include "learn/lock.h"

#define BOT_STORE_RETENTION_DEFAULT 8	/* snapshots kept along the chain */
#define BOT_STORE_RETENTION_MIN 2	/* current and its parent (the undo) */


/*
 * The fabric's current snapshot (or the one of an interrupted first
 * publish, above), checked against its name's digest and its fabric.
 * Returns 0 (loaded; *snap names it when not NULL), 1 (the fabric has no
 * state yet: no directory, or no snapshot; *out is an empty state of that
 * fabric),
 * or -1 with err naming the file and the problem (*out empty). A state
 * made from what was loaded gets parent = bot_state_snap_digest(snap)
 * (0 when there was none) before it is published.
 */
/*
 * The snapshot name a fabric directory's `current` holds (dfd: the fabric
 * directory, fdir: its path for messages), read as every reader here reads
 * it (no link, a name and a newline): 0 with cur, 1 when there is no
 * `current`, or -1 with err.
 */
int bot_store_read_current(int dfd, const char *fdir, char cur[BOT_STATE_NAME_MAX], char *err,
			   size_t errlen);
int bot_store_load(const char *dir, const char *fabric, struct bot_state *out,
		   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen);

/*
 * Write s as a new snapshot of its fabric and point `current` at it, the
 * caller holding the fabric's writer lock; then keep `retention` snapshots
 * along the chain (bot_store_prune). The snapshot is durable before
 * `current` names it. s->parent must be what it replaces: the digest of
 * the snapshot `current` names (without `current`, the interrupted first
 * publish's, above), or 0 when the fabric has no state yet; anything else
 * is refused (the state was made from another snapshot: a writer without
 * the lock, or a stale copy), and so is a fabric holding snapshots with a
 * lineage but no `current`. Returns 0 with the new name
 * in snap; 1 when it published but pruning failed (err says why; the next
 * publish prunes again); -1 with err, `current` still naming the previous
 * snapshot (one to a fabric without `current` removes its snapshot
 * again). retention 0 means BOT_STORE_RETENTION_DEFAULT; 1 is refused.
 */
int bot_store_publish(const char *dir, const struct bot_state *s, char snap[BOT_STATE_NAME_MAX],
		      char *err, size_t errlen);
int bot_store_publish_keep(const char *dir, const struct bot_state *s, unsigned retention,
			   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen);

/*
 * For a writer holding the fabric's writer lock, before it loads: a first
 * publish interrupted before `current` (above) is completed: its snapshot
 * checked whole, `current` written to name it, temporaries removed.
 * Returns 1 with the snapshot's name in snap (completed: say so), 0
 * (nothing to complete), or -1 with err (what a load would refuse, or the
 * write failed).
 */
int bot_store_complete(const char *dir, const char *fabric, char snap[BOT_STATE_NAME_MAX],
		       char *err, size_t errlen);

/*
 * Keep `current` and its retention-1 nearest ancestors (the parent chain)
 * and remove every other snap-*.nbs of the fabric, and temporaries a
 * crashed writer left; the caller holds the fabric's writer lock. Nothing
 * is removed when the chain cannot be followed (a snapshot on it
 * unreadable) or there is no `current`. 0, or -1 with err.
 */
int bot_store_prune(const char *dir, const char *fabric, unsigned retention, char *err,
		    size_t errlen);

/*
 * Point `current` at an ancestor, atomically, under the fabric's writer
 * lock (lock NULL: the flock, waiting for it): the snapshot named target
 * ("snap-<16 hex>.nbs"), or with target NULL the one `steps` (>= 1) back
 * along the parent chain from `current`. The target must be present, one
 * link, its bytes matching its name, and hold this fabric. By name it also
 * restores a `current` that was lost. Nothing is removed (the next
 * publish prunes). 0 with the name now current in snap, or -1 with err.
 */
int bot_store_rollback(const char *dir, const char *fabric, const char *target, unsigned steps,
		       struct bot_lock *lock, char snap[BOT_STATE_NAME_MAX], char *err,
		       size_t errlen);

/* One snapshot of the parent chain, from its header. */
struct bot_store_entry {
	char name[BOT_STATE_NAME_MAX];
	int present;			/* 0: named as a parent, removed by retention */
	struct bot_state_hdr hdr;	/* when present */
};

/*
 * The parent chain from `current`: current first, at most max entries;
 * the last one is absent (present 0) when the chain goes on past what
 * retention kept. *v is malloc()ed (free it); *n 0 when the fabric has no
 * `current`. Reads headers only. 0, or -1 with err.
 */
int bot_store_history(const char *dir, const char *fabric, size_t max,
		      struct bot_store_entry **v, size_t *n, char *err, size_t errlen);

#endif
