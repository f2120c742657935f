/*
 * store.c - the state directory: load the current snapshot, publish a new
 * one (learn/store.h, doc/formats.md section 12).
 *
 * Every file is opened relative to the fabric's directory fd, opened once
 * without following links; `current` and snapshots must be regular files
 * with one link (opened non-blocking, so a FIFO fails instead of hanging).
 * Publishing never rewrites a file in place: a snapshot is written under a
 * temporary name, fsynced and renamed, then `current` is replaced the same
 * way, so a reader sees the previous snapshot or the new one. What is
 * published is readable by every user whatever the writer's umask: files
 * are made 0644 before they are renamed into place, and a fabric directory
 * the store creates 0755 (readers compile step tables as themselves).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/readall.h"
#include "learn/crash.h"
#include "learn/log.h"
#include "learn/store.h"

int bot_store_open_fabric(const char *dir, const char *fabric, int create,
			  char fdir_out[BOT_STORE_PATH_MAX], char *err, size_t errlen)
{
	char fdir[BOT_STORE_PATH_MAX];
	const char *hint = create ? " (create the state directory first)" : "";
	struct stat st;
	int fd, created = 0;

	if (err && errlen)
		err[0] = 0;
	if (!bot_state_fabric_ok(fabric))
		return bot_log_errf(err, errlen, "fabric name '%s' is not [a-z0-9][a-z0-9._-]{0,63}", fabric);
	if ((size_t)snprintf(fdir, sizeof(fdir), "%s/%s", dir, fabric) >= sizeof(fdir))
		return bot_log_errf(err, errlen, "%s/%s: path too long", dir, fabric);
	if (fdir_out)
		memcpy(fdir_out, fdir, sizeof(fdir));
	if (stat(dir, &st) < 0)
		return bot_log_errf(err, errlen, "%s: %s%s", dir, strerror(errno), hint);
	if (!S_ISDIR(st.st_mode))
		return bot_log_errf(err, errlen, "%s: not a directory%s", dir, hint);
	if (create) {
		if (mkdir(fdir, 0755) == 0)
			created = 1;
		else if (errno != EEXIST)
			return bot_log_errf(err, errlen, "%s: %s", fdir, strerror(errno));
	}
	fd = open(fdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* mkdir's mode went through the umask: readers need 0755 */
	if (fd >= 0 && created && fchmod(fd, 0755) < 0) {
		int e = errno;

		close(fd);
		return bot_log_errf(err, errlen, "%s: cannot make it mode 0755: %s", fdir,
				    strerror(e));
	}
	if (fd >= 0)
		return fd;
	if (errno == ENOENT && !create)
		return -2;
	return bot_log_errf(err, errlen, "%s: %s", fdir,
			errno == ENOTDIR || errno == ELOOP ? "not a directory (or a symbolic link)" :
			strerror(errno));
}

/* Read dirfd/name (a regular file, not a link, one link) of at most max bytes. */
static int slurp_at(int dirfd, const char *fdir, const char *name, size_t max, uint8_t **buf,
		    size_t *len, char *err, size_t errlen)
{
	char path[BOT_STORE_PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fdir, name);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", path,
				errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink != 1) {
		close(fd);
		return bot_log_errf(err, errlen, "%s: has %lu hard links (want 1)", path,
				(unsigned long)st.st_nlink);
	}
	if (bot_read_whole(fd, path, max, buf, len, err, errlen) < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	return 0;
}

/* Any snap-*.nbs in the fabric directory? 1, 0, or -1 with err (a
 * directory that cannot be listed: never taken for one without snapshots,
 * which would start the fabric over). */
static int has_snapshots(int dirfd, const char *fdir, char *err, size_t errlen)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int found = 0;

	if (!d) {
		int e2 = errno;

		if (fd >= 0)
			close(fd);
		return bot_log_errf(err, errlen, "%s: cannot list the directory: %s", fdir,
				    strerror(e2));
	}
	while (!found) {
		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno) {
				int e2 = errno;

				closedir(d);
				return bot_log_errf(err, errlen, "%s: cannot list the directory: %s",
						    fdir, strerror(e2));
			}
			break;
		}
		found = bot_state_snap_name_ok(e->d_name);
	}
	closedir(d);
	return found;
}

int bot_store_load(const char *dir, const char *fabric, struct bot_state *out,
		   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen)
{
	char fdir[BOT_STORE_PATH_MAX], path[BOT_STORE_PATH_MAX + 64], cur[64];
	char name[BOT_STATE_NAME_MAX];
	uint8_t *b, *cb;
	size_t len, clen;
	int dfd, rc;

	memset(out, 0, sizeof(*out));
	if (snap)
		snap[0] = 0;
	dfd = bot_store_open_fabric(dir, fabric, 0, fdir, err, errlen);
	if (dfd == -1)
		return -1;
	if (dfd >= 0) {
		int cfd = openat(dfd, "current", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

		if (cfd >= 0)
			close(cfd);
		else if (errno != ENOENT)
			goto read_current;	/* reported below, with the reason */
		else if ((rc = has_snapshots(dfd, fdir, err, errlen)) != 0) {
			close(dfd);
			if (rc < 0)
				return -1;
			return bot_log_errf(err, errlen, "%s: holds snapshots but no `current`: restore "
					"it (echo snap-<digest>.nbs > %s/current) rather than start "
					"the fabric over", fdir, fdir);
		} else {
			close(dfd);
			dfd = -1;
		}
	}
	if (dfd < 0) {
		if (bot_state_init(out, fabric) < 0)
			return bot_log_errf(err, errlen, "out of memory");
		return 1;
	}
read_current:
	rc = slurp_at(dfd, fdir, "current", sizeof(cur) - 1, &cb, &clen, err, errlen);
	if (rc < 0) {
		close(dfd);
		return -1;
	}
	memcpy(cur, cb, clen);
	cur[clen] = 0;
	free(cb);
	snprintf(path, sizeof(path), "%s/current", fdir);
	if (clen == 0 || cur[clen - 1] != '\n' || (cur[clen - 1] = 0, !bot_state_snap_name_ok(cur))) {
		close(dfd);
		return bot_log_errf(err, errlen, "%s: does not hold a snapshot name (want "
				"\"snap-<16 hex>.nbs\" and a newline)", path);
	}
	rc = slurp_at(dfd, fdir, cur, BOT_STATE_MAX_FILE, &b, &len, err, errlen);
	close(dfd);
	if (rc < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", fdir, cur);
	bot_state_snap_name(b, len, name);
	if (strcmp(name, cur)) {
		free(b);
		return bot_log_errf(err, errlen, "%s: content does not match its name (digest %.16s): "
				"the file was changed or damaged", path, name + 5);
	}
	rc = bot_state_parse(path, b, len, out, err, errlen);
	free(b);
	if (rc < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	if (strcmp(out->fabric, fabric)) {
		bot_log_errf(err, errlen, "%s: holds fabric '%s', not '%s'", path, out->fabric, fabric);
		bot_state_free(out);
		return -1;
	}
	if (snap)
		strcpy(snap, cur);
	return 0;
}

/* Write buf to dirfd/name via .<name>.tmp + fchmod 0644 + fsync + rename;
 * a failure names the step and the file it failed on. */
static int write_atomic(int dirfd, const char *fdir, const char *name, const void *buf,
			size_t len, char *err, size_t errlen)
{
	char tmp[64];
	const uint8_t *p = buf;
	const char *step;
	size_t done = 0;
	int fd, e;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	/* A temporary left by a crashed writer is ours to replace (we hold the lock). */
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		return bot_log_errf(err, errlen, "%s/%s: cannot remove a stale temporary: %s", fdir,
				    tmp, strerror(errno));
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s/%s: cannot create: %s", fdir, tmp,
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
	/* the mode open() asked for went through the umask: published state
	 * is for every reader */
	step = "cannot make it mode 0644";
	if (fchmod(fd, 0644) < 0)
		goto fail;
	step = "cannot fsync";
	if (fsync(fd) < 0)
		goto fail;
	step = "cannot close";
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		return bot_log_errf(err, errlen, "cannot rename %s/%s to %s/%s: %s", fdir, tmp, fdir,
				    name, strerror(e));
	}
	return 0;
fail:
	e = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return bot_log_errf(err, errlen, "%s/%s: %s: %s", fdir, tmp, step, strerror(e));
}

int bot_store_publish(const char *dir, const struct bot_state *s, char snap[BOT_STATE_NAME_MAX],
		      char *err, size_t errlen)
{
	char fdir[BOT_STORE_PATH_MAX], line[BOT_STATE_NAME_MAX + 1];
	uint8_t *b;
	size_t len;
	int dirfd, rc = -1;

	snap[0] = 0;
	if (bot_state_encode(s, &b, &len, err, errlen) < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	bot_state_snap_name(b, len, snap);
	dirfd = bot_store_open_fabric(dir, s->fabric, 1, fdir, err, errlen);
	if (dirfd < 0)
		goto out;
	snprintf(line, sizeof(line), "%s\n", snap);
	/* The snapshot is durable before `current` names it. */
	if (write_atomic(dirfd, fdir, snap, b, len, err, errlen) < 0)
		goto out;
	if (fsync(dirfd) < 0) {
		bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
		goto out;
	}
	bot_crash_point("publish-after-snapshot");	/* test hook (learn/crash.h) */
	if (write_atomic(dirfd, fdir, "current", line, strlen(line), err, errlen) < 0)
		goto out;
	if (fsync(dirfd) < 0) {
		bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	free(b);
	if (rc < 0)
		snap[0] = 0;
	return rc;
}
