/*
 * fabricdir.h - a fabric's directory in a state directory, <dir>/<fabric>
 * (doc/formats.md section 12), opened the one safe way: the fabric name
 * checked, never through a symbolic link, created mode 0755 whatever the
 * umask when asked. The store (learn/store.h) keeps snapshots in it and
 * the writers' lock (learn/lock.h) its .lock file; both open it here.
 * Also who may write into the state directory around it: ship and compact
 * run as its owner (bot_statedir_as_owner).
 */
#ifndef BOT_LEARN_FABRICDIR_H
#define BOT_LEARN_FABRICDIR_H

#include <stddef.h>

#define BOT_FABRIC_PATH_MAX 4096

/*
 * The fabric's directory <dir>/<fabric> as a directory fd, never through a
 * symbolic link; its path in fdir (may be NULL). The fabric name is checked
 * (bot_state_fabric_ok) and dir must be an existing directory. With create,
 * a missing fabric directory is made (mode 0755; made by root in a state
 * directory another user owns, that user's; inbox, quarantine and held,
 * the compactor's directories, are refused). Returns the fd, -1 with
 * err, or (without create) -2 when the fabric directory does not exist.
 */
int bot_fabricdir_open(const char *dir, const char *fabric, int create,
		       char fdir[BOT_FABRIC_PATH_MAX], char *err, size_t errlen);

/*
 * The compactor's and ship's check before they write into state directory
 * dir: 0, or -1 with err when this process is root and dir belongs to
 * another user (the service account). What root made there (inbox,
 * .lease, .ledger/<fabric>, deltas 0640 root:root) the account could not
 * write or read, and its next ship or compact failed with "Permission
 * denied" while `state verify` saw nothing; run as the owner instead.
 * A dir that cannot be stat'ed is left to the caller's own open.
 */
int bot_statedir_as_owner(const char *dir, const char *what, char *err, size_t errlen);

#endif
