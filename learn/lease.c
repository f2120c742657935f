/*
 * lease.c - the compactor's lease (learn/lease.h): flock of <state>/.lease,
 * the holder's "host pid start" written into it once held.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "learn/lease.h"
#include "learn/log.h"

/* What the file says of its holder: "HOST PID", escaped, or "unknown". */
static void read_holder(int fd, char *out, size_t cap)
{
	char buf[BOT_LEASE_HOLDER_MAX], host[BOT_LEASE_HOLDER_MAX];
	unsigned long pid;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n > 0) {
		buf[n] = 0;
		if (sscanf(buf, "%127s %lu", host, &pid) == 2) {
			char tmp[BOT_LEASE_HOLDER_MAX + 32];

			snprintf(tmp, sizeof(tmp), "%s %lu", host, pid);
			bot_log_esc(out, cap, tmp);
			return;
		}
	}
	snprintf(out, cap, "unknown");
}

int bot_lease_take(const char *dir, int wait, struct bot_lease *l, char *err, size_t errlen)
{
	char host[128], line[256];
	struct stat st;
	int dfd, fd;

	l->fd = -1;
	l->holder[0] = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir, strerror(errno));
	fd = openat(dfd, BOT_LEASE_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	close(dfd);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s/%s: %s", dir, BOT_LEASE_FILE,
				    errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return bot_log_errf(err, errlen, "%s/%s: not a regular file with one link", dir,
				    BOT_LEASE_FILE);
	}
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		if (e == EWOULDBLOCK && !wait) {
			read_holder(fd, l->holder, sizeof(l->holder));
			close(fd);
			return 1;
		}
		close(fd);
		return bot_log_errf(err, errlen, "%s/%s: cannot lock: %s", dir, BOT_LEASE_FILE,
				    strerror(e));
	}
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = 0;
	for (char *p = host; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			*p = '_';
	snprintf(line, sizeof(line), "%s %ld %lld\n", host, (long)getpid(),
		 (long long)time(NULL));
	/* for people only: a failure to write it does not matter */
	if (ftruncate(fd, 0) == 0 && pwrite(fd, line, strlen(line), 0) < 0)
		line[0] = 0;
	l->fd = fd;
	return 0;
}

void bot_lease_release(struct bot_lease *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}
