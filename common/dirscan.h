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

/* The names of the entries of the directory open on dirfd that keep(e, arg)
 * accepts, strdup()ed into *names (*n of them, sorted by strcmp; the caller
 * frees each and the array): 0, or -1 with errno when reading the directory
 * or memory failed part-way (what was read is in *names). */
int bot_dir_names(int dirfd, int (*keep)(const struct dirent *e, void *arg), void *arg,
		  char ***names, size_t *n);

#endif
