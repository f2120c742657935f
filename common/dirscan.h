/*
 * dirscan.h - visiting every entry of a directory, the one loop of the
 * listings (the spool batch, the harvest's sources, the store's snapshots,
 * the ledger's files, the state commands): a read error part-way is an
 * error, never a shorter listing taken for the whole.
 */
#ifndef BOT_COMMON_DIRSCAN_H
#define BOT_COMMON_DIRSCAN_H

#include <dirent.h>

/*
 * Call visit(e, arg) for each entry of the directory open on dirfd (not
 * closed, its offset not used: the listing starts at the first entry),
 * "." and ".." included. visit returns 0 to go on, or a positive value
 * to stop. Returns 0 when every entry was visited, visit's positive value
 * when it stopped the scan, or -errno when the directory could not be
 * read (part-way included).
 */
int bot_dir_scan(int dirfd, int (*visit)(const struct dirent *e, void *arg), void *arg);

#endif
