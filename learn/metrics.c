/*
 * metrics.c - the Prometheus textfile (learn/metrics.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "learn/log.h"
#include "learn/metrics.h"

int bot_metrics_write(const char *dir, const char *name, const char *text, size_t len,
		      char *err, size_t errlen)
{
	char tmp[256];
	size_t done = 0;
	int dfd, fd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir, strerror(errno));
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		close(dfd);
		return bot_log_errf(err, errlen, "%s/%s: %s", dir, tmp, strerror(e));
	}
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	{
		int ok = done == len && fsync(fd) == 0, e;

		if (close(fd) < 0)
			ok = 0;
		if (ok && renameat(dfd, tmp, dfd, name) == 0)
			goto done;
		e = errno;
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return bot_log_errf(err, errlen, "%s/%s: %s", dir, name, strerror(e ? e : EIO));
	}
done:
	close(dfd);
	return 0;
}
