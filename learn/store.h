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
 * snapshots without `current`) and publishing by temporary file + fsync +
 * rename, so that a reader sees the old snapshot or the new one.
 *
 * The store does not lock. A writer holds the fabric's writer lock from
 * load to publish: learn/lock.h's flock of <dir>/<fabric>/.lock, or a lock
 * of its own (a compactor that is the only writer of a state directory).
 * Readers need no lock.
 */
#ifndef BOT_LEARN_STORE_H
#define BOT_LEARN_STORE_H

#include <stddef.h>

#include "common/state.h"

#define BOT_STORE_PATH_MAX 4096

/*
 * The fabric's directory <dir>/<fabric> as a directory fd, never through a
 * symbolic link; its path in fdir (may be NULL). The fabric name is checked
 * (bot_state_fabric_ok) and dir must be an existing directory. With create,
 * a missing fabric directory is made (mode 0755). Returns the fd, -1 with
 * err, or (without create) -2 when the fabric directory does not exist.
 */
int bot_store_open_fabric(const char *dir, const char *fabric, int create,
			  char fdir[BOT_STORE_PATH_MAX], char *err, size_t errlen);

/*
 * The fabric's current snapshot, checked against its name's digest and its
 * fabric. Returns 0 (loaded; *snap names it when not NULL), 1 (the fabric
 * has no state yet: *out is an empty state of that fabric), or -1 with err
 * naming the file and the problem (*out empty).
 */
int bot_store_load(const char *dir, const char *fabric, struct bot_state *out,
		   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen);

/*
 * Write s as a new snapshot of its fabric and point `current` at it, the
 * caller holding the fabric's writer lock. The snapshot is durable before
 * `current` names it. 0 with its name in snap, or -1 with err; on failure
 * `current` still names the previous snapshot.
 */
int bot_store_publish(const char *dir, const struct bot_state *s, char snap[BOT_STATE_NAME_MAX],
		      char *err, size_t errlen);

#endif
