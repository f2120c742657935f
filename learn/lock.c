/*
 * lock.c - the fabric's writer lock (learn/lock.h): flock(2) of
 * <dir>/<fabric>/.lock, released by closing the fd (also when the process
 * dies, so a crashed writer never leaves a fabric locked).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn/log.h"
#include "learn/lock.h"
#include "learn/fabricdir.h"

int bot_lock_fabric(const char *dir, const char *fabric, int wait, char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX];
	struct stat st;
	int dfd, fd;

	dfd = bot_fabricdir_open(dir, fabric, 1, fdir, err, errlen);
	if (dfd < 0)
		return -1;
	fd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		close(dfd);
		return bot_log_errf(err, errlen, "%s/.lock: %s", fdir,
				e == ELOOP ? "a symbolic link" : strerror(e));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(dfd);
		close(fd);
		return bot_log_errf(err, errlen, "%s/.lock: not a regular file", fdir);
	}
	/* root taking the lock of a fabric the service account owns: the
	 * .lock it made is the owner's too, else the owner's next open
	 * (O_RDWR) is refused and the fabric's compactions fail */
	if (geteuid() == 0 && st.st_uid == 0 && st.st_nlink == 1) {
		struct stat dst;

		if (fstat(dfd, &dst) == 0 && dst.st_uid != 0 &&
		    fchown(fd, dst.st_uid, dst.st_gid) < 0) {
			int e = errno;

			close(dfd);
			close(fd);
			return bot_log_errf(err, errlen, "%s/.lock: cannot give it to the fabric "
					    "directory's owner (uid %u): %s", fdir,
					    (unsigned)dst.st_uid, strerror(e));
		}
	}
	close(dfd);
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		close(fd);
		if (e == EWOULDBLOCK && !wait) {
			bot_log_errf(err, errlen, "%s/.lock: held by another writer", fdir);
			return -2;
		}
		return bot_log_errf(err, errlen, "%s/.lock: cannot lock: %s", fdir, strerror(e));
	}
	return fd;
}

void bot_lock_release(int fd)
{
	if (fd >= 0)
		close(fd);	/* releases the flock */
}

static int flock_acquire(struct bot_lock *l, const char *dir, const char *fabric, char *err,
			 size_t errlen)
{
	l->fd = bot_lock_fabric(dir, fabric, 1, err, errlen);
	return l->fd < 0 ? -1 : 0;
}

static void flock_release(struct bot_lock *l)
{
	bot_lock_release(l->fd);
	l->fd = -1;
}

void bot_lock_init_flock(struct bot_lock *l)
{
	memset(l, 0, sizeof(*l));
	l->acquire = flock_acquire;
	l->release = flock_release;
	l->fd = -1;
}

static int held_acquire(struct bot_lock *l, const char *dir, const char *fabric, char *err,
			size_t errlen)
{
	(void)l;
	(void)dir;
	(void)fabric;
	(void)err;
	(void)errlen;
	return 0;
}

static void held_release(struct bot_lock *l)
{
	(void)l;
}

void bot_lock_init_held(struct bot_lock *l)
{
	memset(l, 0, sizeof(*l));
	l->acquire = held_acquire;
	l->release = held_release;
	l->fd = -1;
}
