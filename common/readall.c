/*
 * readall.c - reading a whole file that a reader will validate
 * (common/readall.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errf.h"
#include "common/readall.h"

int bot_read_whole(int fd, const char *name, size_t max, uint8_t **buf, size_t *len, char *err,
		    size_t errlen)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;

	*buf = NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return bot_errf(err, errlen, "%s: not a regular file", name);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return bot_errf(err, errlen, "%s: %lld bytes: over the %zu-byte limit", name,
			   (long long)st.st_size, max);
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return bot_errf(err, errlen, "%s: out of memory", name);
	}
	/* Read one byte past the size: a file that grew is caught, not cut. */
	while (got <= (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(b);
			close(fd);
			return bot_errf(err, errlen, "%s: %s", name, strerror(e));
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(b);
		return bot_errf(err, errlen, "%s: changed while being read", name);
	}
	*buf = b;
	*len = got;
	return 0;
}

const char *bot_file_kind(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return NULL;
}

/* The reason a file of mode m is refused (a link, a FIFO, ...). */
static int wrong_kind(char *err, size_t errlen, const char *path, const char *what, mode_t m)
{
	const char *kind = bot_file_kind(m);

	if (S_ISLNK(m)) {
		bot_errf(err, errlen, "%s: a symbolic link, not a %s (%ss are read without "
			 "following links)", path, what, what);
		return -BOT_OPEN_LINK;
	}
	if (kind)
		bot_errf(err, errlen, "%s: %s, not a %s", path, kind, what);
	else
		bot_errf(err, errlen, "%s: not a regular file", path);
	return -BOT_OPEN_KIND;
}

/* The rules that do not need the file open: 0 or -(refusal). */
static int check_rules(const struct stat *st, const char *path, const struct bot_open_rule *r,
		       char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode))
		return wrong_kind(err, errlen, path, r->what, st->st_mode);
	if ((uint64_t)st->st_size > r->max) {
		bot_errf(err, errlen, "%s: %lld bytes, over the largest %s a reader accepts (%zu "
			 "bytes)", path, (long long)st->st_size, r->what, r->max);
		return -BOT_OPEN_SIZE;
	}
	if (r->one_link && st->st_nlink != 1) {
		bot_errf(err, errlen, "%s: %llu hard links (a %s has exactly one)", path,
			 (unsigned long long)st->st_nlink, r->what);
		return -BOT_OPEN_LINKS;
	}
	if (r->check_owner && st->st_uid != r->uid && !(r->root_ok && st->st_uid == 0)) {
		bot_errf(err, errlen, "%s: owned by uid %u, not uid %u%s", path, (unsigned)st->st_uid,
			 (unsigned)r->uid, r->root_ok ? " or root" : "");
		return -BOT_OPEN_OWNER;
	}
	if (r->owner_writes && ((st->st_mode & S_IWOTH) ||
				((st->st_mode & S_IWGRP) && st->st_gid != 0 &&
				 !(st->st_uid == r->uid && r->uid != 0)))) {
		bot_errf(err, errlen, "%s: writable by %s (mode %03o): refused as a %s its "
			 "owner alone may write (chmod go-w)", path,
			 (st->st_mode & S_IWOTH) ? "everyone" : "its group",
			 (unsigned)(st->st_mode & 0777), r->what);
		return -BOT_OPEN_WRITABLE;
	}
	return 0;
}

int bot_open_at(int dirfd, const char *name, const char *path, const struct bot_open_rule *r,
		struct stat *st, char *err, size_t errlen)
{
	struct stat fst;
	int fd, rc;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;

		bot_errf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? -BOT_OPEN_GONE : -BOT_OPEN_ERRNO;
	}
	if (st->st_nlink == 0) {	/* being removed as we look (an unlink racing us) */
		bot_errf(err, errlen, "%s: removed while being looked at", path);
		return -BOT_OPEN_GONE;
	}
	if ((rc = check_rules(st, path, r, err, errlen)) < 0)
		return rc;
	fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		return wrong_kind(err, errlen, path, r->what, S_IFLNK);
	if (fd < 0) {
		int e = errno;

		bot_errf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? -BOT_OPEN_GONE : -BOT_OPEN_ERRNO;
	}
	if (fstat(fd, &fst) < 0) {
		int e = errno;

		close(fd);
		bot_errf(err, errlen, "%s: %s", path, strerror(e));
		return -BOT_OPEN_ERRNO;
	}
	if (fst.st_dev != st->st_dev || fst.st_ino != st->st_ino || !S_ISREG(fst.st_mode)) {
		close(fd);
		bot_errf(err, errlen, "%s: replaced while being opened", path);
		return -BOT_OPEN_CHANGED;
	}
	if (fst.st_nlink == 0) {	/* removed since we looked: gone, not refused */
		close(fd);
		bot_errf(err, errlen, "%s: removed while being opened", path);
		return -BOT_OPEN_GONE;
	}
	if ((rc = check_rules(&fst, path, r, err, errlen)) < 0) {
		close(fd);
		return rc;
	}
	*st = fst;
	return fd;
}

int bot_read_at(int dirfd, const char *name, const char *path, const struct bot_open_rule *r,
		uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int fd = bot_open_at(dirfd, name, path, r, &st, err, errlen);

	*buf = NULL;
	if (fd < 0)
		return -1;
	/* reads one byte past the size: a file that changed is refused, not cut */
	return bot_read_whole(fd, path, r->max, buf, len, err, errlen);
}

const char *bot_path_sep(const char *dir)
{
	size_t n = strlen(dir);

	return n && dir[n - 1] == '/' ? "" : "/";
}

const char *bot_path_shown(const char *path)
{
	return *path ? path : "''";
}
