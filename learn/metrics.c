/*
 * metrics.c - the Prometheus textfile (learn/metrics.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/writeall.h"
#include "learn/log.h"
#include "learn/metrics.h"

int bot_metrics_write(const char *dir, const char *name, const char *text, size_t len,
		      char *err, size_t errlen)
{
	/* mode 0644 whatever the umask (a collector may run as another user),
	 * no directory fsync: a collector's view, not state */
	const struct bot_write_rule r = { .mode = 0644, .chmod = 1, .clear_stale = 1 };
	int dfd, rc;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir, strerror(errno));
	rc = bot_write_whole_at(dfd, dir, name, text, len, &r, err, errlen);
	close(dfd);
	if (rc < 0)
		bot_log_esc_inplace(err, errlen);
	return rc;
}
