/*
 * readall.h - reading a whole file that a reader will validate: a regular
 * file only, under a size cap, refused when it changes while read. Used by
 * the spool reader (spool_read.c), the snapshot reader (state.c) and the
 * state directory (learn/store.c); opening a file that a user may have
 * planted (bot_open_at: never through a link, never a FIFO or device, a
 * size cap, optionally one link and an owner) for the spool reader, the
 * delta reader and the harvest; and the words for a file of the wrong kind.
 */
#ifndef BOT_COMMON_READALL_H
#define BOT_COMMON_READALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Read the whole regular file open on fd (closed here), at most max bytes,
 * into *buf (malloc()ed, *len bytes): 0, or -1 with "name: reason" in err
 * (not a regular file, over max, a read error, changed while read). */
int bot_read_whole(int fd, const char *name, size_t max, uint8_t **buf, size_t *len, char *err,
		   size_t errlen);

/* What bot_open_at accepts. */
struct bot_open_rule {
	const char *what;	/* "spool file", "delta": named in refusals */
	size_t max;		/* the largest size accepted, bytes */
	int one_link;		/* refuse a file with more than one hard link */
	int check_owner;	/* refuse a file not owned by uid */
	uid_t uid;
	int root_ok;		/* with check_owner: root's files are accepted too */
	int owner_writes;	/* refuse a file others may write: writable by all,
				 * or by a group other than root's unless it is the
				 * reader's own file (a configuration that decides
				 * what root or a service account does) */
};

/* Why bot_open_at refused a file (its return value, negated). */
enum bot_open_refusal {
	BOT_OPEN_ERRNO = 1,	/* stat or open failed (errno) */
	BOT_OPEN_LINK,		/* a symbolic link */
	BOT_OPEN_KIND,		/* a FIFO, device, socket or directory */
	BOT_OPEN_SIZE,		/* over r->max */
	BOT_OPEN_LINKS,		/* more than one hard link (r->one_link) */
	BOT_OPEN_OWNER,		/* another owner (r->check_owner) */
	BOT_OPEN_CHANGED,	/* replaced between the look and the open */
	BOT_OPEN_GONE,		/* no such name (removed meanwhile) */
	BOT_OPEN_WRITABLE,	/* writable by others (r->owner_writes) */
};

/*
 * Open dirfd/name for reading (path names it in messages), the safe way: it
 * is looked at first without following a link, so a device is never opened
 * and a FIFO never waited on, then opened O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC
 * and checked again on the open file (the same inode, a regular file, the
 * same rules). Returns the fd with *st filled, or -(enum bot_open_refusal)
 * with "PATH: reason" in err.
 */
int bot_open_at(int dirfd, const char *name, const char *path, const struct bot_open_rule *r,
		struct stat *st, char *err, size_t errlen);
/* bot_open_at, then bot_read_whole: 0, or -1 with "PATH: reason". */
int bot_read_at(int dirfd, const char *name, const char *path, const struct bot_open_rule *r,
		uint8_t **buf, size_t *len, char *err, size_t errlen);

/* What a file that is not a regular one is, for messages ("a FIFO"); NULL
 * for a regular file or a kind without a name. */
const char *bot_file_kind(mode_t m);

/* What goes between a directory and a name in the path a message shows
 * (the `path` of bot_open_at): "/", or "" after a directory given as
 * "spool/" or "/", so that no message says "spool//x.spool". */
const char *bot_path_sep(const char *dir);

/* A path as a message shows it: path itself, or "''" for the empty path
 * (which otherwise reads ": No such file or directory"). */
const char *bot_path_shown(const char *path);

#endif
