/*
 * writeall.c - writing a whole file under a temporary name, then renaming
 * it into place (common/writeall.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errf.h"
#include "common/writeall.h"

/* The separator between dir and a name in messages: none without a dir or
 * after a dir that ends in '/'. */
static const char *sep(const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	return n == 0 || dir[n - 1] == '/' ? "" : "/";
}

/* Rename tmp to name without replacing it: RENAME_NOREPLACE, or a hard link
 * where the file system lacks it (link fails on an existing name too). 0
 * renamed, 1 the name exists, -1 errno. */
static int rename_new(int dirfd, const char *tmp, const char *name)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		return 1;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (linkat(dirfd, tmp, dirfd, name, 0) < 0)
		return errno == EEXIST ? 1 : -1;
	unlinkat(dirfd, tmp, 0);
	return 0;
}

int bot_write_whole_at(int dirfd, const char *dir, const char *name, const void *buf, size_t len,
		       const struct bot_write_rule *r, char *err, size_t errlen)
{
	const char *d = dir ? dir : "", *s = sep(dir), *tmp = r->tmp, *step;
	const uint8_t *p = buf;
	char tbuf[300], mstep[40];
	size_t done = 0;
	int fd, rc, e;

	if (!tmp) {
		if ((size_t)snprintf(tbuf, sizeof(tbuf), ".%s.tmp", name) >= sizeof(tbuf))
			return bot_errf(err, errlen, "%s%s%s: name too long", d, s, name);
		tmp = tbuf;
	}
	if (r->clear_stale && unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		return bot_errf(err, errlen, "%s%s%s: cannot remove a stale temporary: %s", d, s,
				tmp, strerror(errno));
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, r->mode);
	if (fd < 0)
		return bot_errf(err, errlen, "%s%s%s: cannot create: %s", d, s, tmp,
				strerror(errno));
	step = "cannot write";
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			goto fail;
		}
		done += (size_t)w;
	}
	snprintf(mstep, sizeof(mstep), "cannot make it mode 0%o", (unsigned)r->mode);
	step = mstep;
	if (r->chmod && fchmod(fd, r->mode) < 0)
		goto fail;
	step = "cannot fsync";
	if (fsync(fd) < 0)
		goto fail;
	step = "cannot close";
	e = close(fd);
	fd = -1;
	if (e < 0)
		goto fail;
	if (r->before_rename)
		r->before_rename(r->point);
	rc = r->no_replace ? rename_new(dirfd, tmp, name) : renameat(dirfd, tmp, dirfd, name);
	if (rc == 1) {
		unlinkat(dirfd, tmp, 0);
		return 1;
	}
	if (rc < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		return bot_errf(err, errlen, "cannot rename %s%s%s to %s%s%s: %s", d, s, tmp, d, s,
				name, strerror(e));
	}
	if (r->sync_dir && fsync(dirfd) < 0)
		return bot_errf(err, errlen, "%s: fsync: %s", dir ? dir : ".", strerror(errno));
	return 0;
fail:
	e = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return bot_errf(err, errlen, "%s%s%s: %s: %s", d, s, tmp, step, strerror(e));
}
