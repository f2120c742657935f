/*
 * spooldir.c - a step's spool directory on one node (spank/spooldir.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/delta.h"
#include "learn/log.h"
#include "spank/spooldir.h"

void bot_spank_step_str(uint32_t step, char *buf, size_t len)
{
	if (step == BOT_DELTA_STEP_BATCH)
		snprintf(buf, len, "batch");
	else if (step == BOT_DELTA_STEP_EXTERN)
		snprintf(buf, len, "extern");
	else if (step == BOT_DELTA_STEP_INTERACTIVE)
		snprintf(buf, len, "interactive");
	else
		snprintf(buf, len, "%" PRIu32, step);
}

static int node_ok(const char *node)
{
	if (!node || !*node || strlen(node) >= BOT_DELTA_STR)
		return 0;
	for (const char *p = node; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return strcmp(node, ".") && strcmp(node, "..");
}

int bot_spank_spool_name(uint32_t job, uint32_t restart, uint32_t step, const char *node,
			 char *out, size_t len)
{
	char s[16];
	int n;

	if (!node_ok(node))
		return -1;
	bot_spank_step_str(step, s, sizeof(s));
	n = snprintf(out, len, "%" PRIu32 ".%" PRIu32 ".%s.%s", job, restart, s, node);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int bot_spank_spool_of_job(const char *name, uint32_t job, const char *node)
{
	char pre[16];
	size_t np, nn, nl = strlen(name);
	const char *p;

	if (!node_ok(node))
		return 0;
	np = (size_t)snprintf(pre, sizeof(pre), "%" PRIu32 ".", job);
	nn = strlen(node);
	if (nl < np + nn + 4 || memcmp(name, pre, np) || memcmp(name + nl - nn, node, nn) ||
	    name[nl - nn - 1] != '.')
		return 0;
	/* between: <restart>.<step> */
	p = name + np;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '.' || p + 1 >= name + nl - nn - 1)
		return 0;
	for (p++; p < name + nl - nn - 1; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')))
			return 0;
	return 1;
}

int bot_spank_spool_parse(const char *name, uint32_t job, const char *node, uint32_t *restart,
			  uint32_t *step)
{
	char pre[16], st[16], want[BOT_SPANK_SPOOL_NAME_MAX];
	const char *p;
	uint64_t r = 0, v = 0;
	size_t k = 0;

	if (!bot_spank_spool_of_job(name, job, node))
		return -1;
	p = name + snprintf(pre, sizeof(pre), "%" PRIu32 ".", job);
	for (; *p >= '0' && *p <= '9'; p++)
		if ((r = r * 10 + (uint64_t)(*p - '0')) >= 0xfffffff0u)
			return -1;
	for (p++; *p != '.' && k + 1 < sizeof(st); p++)
		st[k++] = *p;
	st[k] = 0;
	if (!strcmp(st, "batch"))
		v = BOT_DELTA_STEP_BATCH;
	else if (!strcmp(st, "extern"))
		v = BOT_DELTA_STEP_EXTERN;
	else if (!strcmp(st, "interactive"))
		v = BOT_DELTA_STEP_INTERACTIVE;
	else {
		for (const char *q = st; *q; q++)
			if (*q < '0' || *q > '9' || (v = v * 10 + (uint64_t)(*q - '0')) > 0xfffffff0u)
				return -1;
	}
	/* the name must be the one bot_spank_spool_name makes (no leading zeros) */
	if (bot_spank_spool_name(job, (uint32_t)r, (uint32_t)v, node, want, sizeof(want)) < 0 ||
	    strcmp(want, name))
		return -1;
	*restart = (uint32_t)r;
	*step = (uint32_t)v;
	return 0;
}

int bot_spank_spool_base(const char *base, int create, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (base[0] != '/')
		return bot_log_errf(err, errlen, "spool_dir %s: not an absolute path", base);
	if (create && mkdir(base, 0711) < 0 && errno != EEXIST)
		return bot_log_errf(err, errlen, "spool_dir %s: cannot make it: %s", base,
				    strerror(errno));
	fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if ((e == ELOOP || e == ENOTDIR) && lstat(base, &st) == 0)
			bot_log_errf(err, errlen, "spool_dir %s: %s", base, S_ISLNK(st.st_mode) ?
				     "a symbolic link (refused)" : "not a directory");
		else
			bot_log_errf(err, errlen, "spool_dir %s: %s", base, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		close(fd);
		errno = EPERM;
		return bot_log_errf(err, errlen, "spool_dir %s: not a directory of uid %u "
				    "writable by it alone (refused: someone else made it?)",
				    base, (unsigned)geteuid());
	}
	return fd;
}

int bot_spank_spool_open(int basefd, const char *name, uid_t uid, char *err, size_t errlen)
{
	struct stat st;
	int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		bot_log_errf(err, errlen, "%s: %s", name, e == ELOOP || e == ENOTDIR ?
			     "not a directory (a link?)" : strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid) {
		close(fd);
		errno = EPERM;
		return bot_log_errf(err, errlen, "%s: not a directory owned by uid %u", name,
				    (unsigned)uid);
	}
	return fd;
}

int bot_spank_spool_make(int basefd, const char *name, uid_t uid, gid_t gid, char *err,
			 size_t errlen)
{
	struct stat st;
	int fd, made = 1;

	if (mkdirat(basefd, name, 0700) < 0) {
		if (errno != EEXIST)
			return bot_log_errf(err, errlen, "%s: cannot make it: %s", name,
					    strerror(errno));
		made = 0;
	}
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", name, errno == ELOOP ||
				    errno == ENOTDIR ? "there and not a directory (a link?): "
				    "refused" : strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return bot_log_errf(err, errlen, "%s: %s", name, strerror(errno));
	}
	if (!made) {
		/* someone's: ours only when it is exactly what we would have made */
		int ok = st.st_uid == uid && st.st_gid == gid && (st.st_mode & 07777) == 0700;

		close(fd);
		if (!ok)
			return bot_log_errf(err, errlen, "%s: already there, owned by %u:%u mode "
					    "%04o, not the step's: refused", name,
					    (unsigned)st.st_uid, (unsigned)st.st_gid,
					    (unsigned)(st.st_mode & 07777));
		return 1;
	}
	if ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0) {
		int e = errno;

		close(fd);
		unlinkat(basefd, name, AT_REMOVEDIR);
		return bot_log_errf(err, errlen, "%s: cannot give it to %u:%u: %s", name,
				    (unsigned)uid, (unsigned)gid, strerror(e));
	}
	if (fchmod(fd, 0700) < 0) {
		int e = errno;

		close(fd);
		unlinkat(basefd, name, AT_REMOVEDIR);
		return bot_log_errf(err, errlen, "%s: chmod: %s", name, strerror(e));
	}
	close(fd);
	return 0;
}

/* Empty the directory fd (consumed), depth levels deep at most. */
static int empty_dir(int fd, unsigned depth, unsigned *budget, const char *name, char *err,
		     size_t errlen)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return bot_log_errf(err, errlen, "%s: cannot list it: %s", name, strerror(errno));
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!*budget) {
			rc = bot_log_errf(err, errlen, "%s: over %u entries: left", name,
					  BOT_SPANK_SPOOL_REMOVE_MAX);
			break;
		}
		(*budget)--;
		/* unlinkat never follows: a link is removed, not its target */
		if (unlinkat(dirfd(d), e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			rc = bot_log_errf(err, errlen, "%s: cannot remove an entry: %s", name,
					  strerror(errno));
			break;
		}
		if (depth >= BOT_SPANK_SPOOL_DEPTH_MAX) {
			rc = bot_log_errf(err, errlen, "%s: nested over %u levels: left", name,
					  BOT_SPANK_SPOOL_DEPTH_MAX);
			break;
		}
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				 O_NONBLOCK | O_CLOEXEC);

		if (sub < 0 || empty_dir(sub, depth + 1, budget, name, err, errlen) < 0 ||
		    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0) {
			if (sub < 0 || !err[0])
				bot_log_errf(err, errlen, "%s: cannot remove a directory in it: %s",
					     name, strerror(errno));
			rc = -1;
			break;
		}
	}
	closedir(d);
	return rc;
}

int bot_spank_spool_remove(int basefd, const char *name, char *err, size_t errlen)
{
	unsigned budget = BOT_SPANK_SPOOL_REMOVE_MAX;
	int fd;

	if (err && errlen)
		err[0] = 0;
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP || errno == ENOTDIR) {
			/* not a directory: one entry, removed without following */
			if (unlinkat(basefd, name, 0) == 0 || errno == ENOENT)
				return 0;
		}
		return bot_log_errf(err, errlen, "%s: %s", name, strerror(errno));
	}
	if (empty_dir(fd, 0, &budget, name, err, errlen) < 0)
		return -1;
	if (unlinkat(basefd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return bot_log_errf(err, errlen, "%s: cannot remove it: %s", name, strerror(errno));
	return 0;
}
