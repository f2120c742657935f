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

int bot_open_regular_at(int dirfd, const char *name, const char *path, uint64_t max,
			int one_link, struct stat *st_out, char *err, size_t errlen)
{
	struct stat st, fst;
	const char *kind;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;

		bot_errf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? -2 : -1;
	}
	kind = bot_file_kind(st.st_mode);
	if (!S_ISREG(st.st_mode))
		return bot_errf(err, errlen, "%s: %s, not a regular file", path,
				kind ? kind : "not a regular file");
	if ((uint64_t)st.st_size > max)
		return bot_errf(err, errlen, "%s: %lld bytes, over the %llu-byte limit", path,
				(long long)st.st_size, (unsigned long long)max);
	if (st.st_nlink == 0) {
		bot_errf(err, errlen, "%s: removed while being opened", path);
		return -2;
	}
	if (one_link && st.st_nlink != 1)
		return bot_errf(err, errlen, "%s: %lu hard links (one is allowed)", path,
				(unsigned long)st.st_nlink);
	fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		bot_errf(err, errlen, "%s: %s", path,
			 e == ELOOP ? "a symbolic link, not a regular file" : strerror(e));
		return e == ENOENT ? -2 : -1;
	}
	if (fstat(fd, &fst) < 0) {
		int e = errno;

		close(fd);
		return bot_errf(err, errlen, "%s: %s", path, strerror(e));
	}
	if (fst.st_nlink == 0) {
		close(fd);
		bot_errf(err, errlen, "%s: removed while being opened", path);
		return -2;
	}
	if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    !S_ISREG(fst.st_mode) || (one_link && fst.st_nlink != 1) ||
	    (uint64_t)fst.st_size > max) {
		close(fd);
		return bot_errf(err, errlen, "%s: replaced while being opened", path);
	}
	if (st_out)
		*st_out = fst;
	return fd;
}
