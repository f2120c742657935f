/*
 * readall.h - reading a whole file that a reader will validate: a regular
 * file only, under a size cap, refused when it changes while read. Used by
 * the spool reader (spool_read.c), the snapshot reader (state.c) and the
 * state directory (learn/store.c); and the words for a file of the wrong
 * kind.
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

/*
 * Open dirfd/name for reading the way every reader of untrusted files does:
 * looked at first without following a link (a device is never opened, a
 * FIFO never waited on), opened O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC, and the
 * open file must be the one seen: a regular file of at most max bytes and,
 * with one_link, exactly one hard link. path names it in messages. Returns
 * the fd (its fstat in *st when not NULL), -2 when the name does not exist
 * or the file was removed while being opened (err says so), or -1 with "PATH: reason" in err.
 */
int bot_open_regular_at(int dirfd, const char *name, const char *path, uint64_t max,
			int one_link, struct stat *st, char *err, size_t errlen);

/* What a file that is not a regular one is, for messages ("a FIFO"); NULL
 * for a regular file or a kind without a name. */
const char *bot_file_kind(mode_t m);

#endif
