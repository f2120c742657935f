/*
 * hostlist.h - Slurm host lists ("n[01-16,20],gpu7") expanded without
 * Slurm, for the files an administrator writes: slurm.conf and
 * topology.conf (spank/fabricgen.h) and the site configuration's fabric
 * map (learn/siteconf.h). Where Slurm's own hostlist code is at hand (srun)
 * the plugin uses that instead (spank/compat.h).
 *
 * Owns the grammar: names separated by commas, at most one bracket group
 * per name holding N or N-M ranges separated by commas (zero padding kept
 * as written, at most 9 digits), every name 1-64 bytes of
 * [A-Za-z0-9._-], at most 262,144 names in one list.
 */
#ifndef BOT_LEARN_HOSTLIST_H
#define BOT_LEARN_HOSTLIST_H

#include <stddef.h>

#define BOT_HOSTLIST_NAME 65		/* a name, NUL included */
#define BOT_HOSTLIST_MAX_NAMES 262144u

/* Is s a name (1-64 bytes of [A-Za-z0-9._-])? */
int bot_hostlist_name_ok(const char *s);

/* Expand a Slurm host list, calling cb for each name in order (a non-zero
 * return stops with it). One bracket group per name, ranges and single
 * numbers, zero padding kept ("n[01-03,7]"). 0, or -1 with the reason. */
int bot_hostlist_expand(const char *expr, int (*cb)(void *arg, const char *name), void *arg,
			char *err, size_t errlen);

#endif
