/*
 * dirscan.c - visiting every entry of a directory (common/dirscan.h).
 */
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "common/dirscan.h"

int bot_dir_scan(int dirfd, int (*visit)(const struct dirent *e, void *arg), void *arg)
{
	int fd = dup(dirfd), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		rc = errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	rewinddir(d);	/* a dup shares the offset an earlier listing left at the end */
	for (;;) {
		errno = 0;
		e = readdir(d);
		if (!e) {
			rc = errno ? -errno : 0;
			break;
		}
		rc = visit(e, arg);
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}
