/*
 * ship.c - outbox -> inbox (learn/ship.h, doc/formats.md section 14).
 *
 * Each delta is claimed by creating its temporary name in the inbox
 * O_EXCL and holding an flock on it; only the claimer looks at the final
 * name, writes and renames, so two shippers never both write one name.
 * Every step that changes a directory is followed by its fsync, and the
 * outbox copy is removed only after the inbox holds the delta durably.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/readall.h"
#include "learn/crash.h"
#include "learn/fabricdir.h"
#include "learn/ship.h"

#define CHUNK (1u << 20)
#define STALE_EMPTY_S 60	/* an empty unlocked claim older than this is a dead one */
#define MAX_ARGS 64

struct ship {
	const struct bot_ship_opts *o;
	struct bot_ship_result *r;
	const struct bot_log *log;
	int outfd, infd;
	char inpath[4096];
	double deadline;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bot_ship_list(int dirfd, const char *path, size_t max, char ***names, size_t *n, int *more,
		  char *err, size_t errlen)
{
	int dfd = dup(dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	char **v = NULL;
	size_t cnt = 0, cap = 0, seen = 0;	/* seen: every *.nbd entry, kept or not */
	struct dirent *e;

	*names = NULL;
	*n = 0;
	*more = 0;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return bot_log_errf(err, errlen, "%s: %s", path, strerror(errno));
	}
	rewinddir(d);
	for (;;) {
		size_t len;

		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno) {
				int e2 = errno;

				closedir(d);
				for (size_t i = 0; i < cnt; i++)
					free(v[i]);
				free(v);
				return bot_log_errf(err, errlen, "%s: cannot list the directory: %s",
						    path, strerror(e2));
			}
			break;
		}
		len = strlen(e->d_name);
		if (len < 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".nbd"))
			continue;
		seen++;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			char **nv = realloc(v, nc * sizeof(*nv));

			if (!nv)
				goto oom;
			v = nv;
			cap = nc;
		}
		if (!(v[cnt] = strdup(e->d_name)))
			goto oom;
		cnt++;
		if (max && cnt >= 2 * max) {
			/* keep the first max by name: memory stays bounded by 2 x max names */
			qsort(v, cnt, sizeof(*v), cmp_str);
			for (size_t i = max; i < cnt; i++)
				free(v[i]);
			cnt = max;
		}
	}
	closedir(d);
	if (cnt > 1)
		qsort(v, cnt, sizeof(*v), cmp_str);
	if (cnt > max) {
		for (size_t i = max; i < cnt; i++)
			free(v[i]);
		cnt = max;
	}
	if (seen > cnt)	/* how many wait for a later run, whatever was trimmed on the way */
		*more = seen - cnt > INT_MAX ? INT_MAX : (int)(seen - cnt);
	*names = v;
	*n = cnt;
	return 0;
oom:
	closedir(d);
	for (size_t i = 0; i < cnt; i++)
		free(v[i]);
	free(v);
	return bot_log_errf(err, errlen, "%s: out of memory", path);
}

/* Whether name in dirfd is still the file st described. */
static int same_file(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;

	return fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st->st_dev &&
	       now.st_ino == st->st_ino;
}

/* Remove the outbox copy (only the file that was shipped) and make it
 * durable. */
static void drop_outbox(struct ship *s, const char *name, const struct stat *st)
{
	if (same_file(s->outfd, name, st))
		unlinkat(s->outfd, name, 0);
	fsync(s->outfd);
}

/*
 * Claim the temporary name: the fd of .<name>.tmp created O_EXCL and
 * flocked, -2 busy (another shipper holds it), or -1 an error. A claim
 * left by a dead shipper (unlocked, and not empty or old) is removed first.
 */
static int claim(struct ship *s, const char *tmp)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		struct stat st;
		int fd = openat(s->infd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0640), old;

		if (fd >= 0) {
			while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
				;
			return fd;
		}
		if (errno != EEXIST)
			return -1;
		old = openat(s->infd, tmp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (old < 0) {
			if (errno == ENOENT)
				continue;	/* renamed meanwhile: look again */
			return -1;
		}
		if (flock(old, LOCK_EX | LOCK_NB) < 0 || fstat(old, &st) < 0 ||
		    (st.st_size == 0 && time(NULL) - st.st_mtime < STALE_EMPTY_S)) {
			/* held, or maybe created a moment ago and not yet locked */
			close(old);
			return -2;
		}
		if (same_file(s->infd, tmp, &st))
			unlinkat(s->infd, tmp, 0);
		close(old);
	}
	return -2;
}

/* Write buf to fd in chunks, never past the deadline: 0, -1 error, -2 out
 * of time. */
static int write_bounded(struct ship *s, int fd, const uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t want = len - done < CHUNK ? len - done : CHUNK;
		ssize_t w;

		if (mono() > s->deadline)
			return -2;
		w = write(fd, buf + done, want);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	return 0;
}

/* Read the inbox's name and compare it with buf: 1 same bytes, 0 other. */
/* How deltas are opened: the outbox's must have one link (a hard link to
 * another file is not the harvest's); one in the inbox is only compared. */
static const struct bot_open_rule outbox_delta = { "delta", BOT_DELTA_MAX_FILE, 1, 0, 0, 0, 0 };
static const struct bot_open_rule inbox_delta = { "delta", BOT_DELTA_MAX_FILE, 0, 0, 0, 0, 0 };

static int inbox_same(struct ship *s, const char *name, const uint8_t *buf, size_t len)
{
	char path[4500], err[512];
	uint8_t *have;
	size_t hlen;
	int same;

	snprintf(path, sizeof(path), "%s/%s", s->inpath, name);
	if (bot_read_at(s->infd, name, path, &inbox_delta, &have, &hlen, err, sizeof(err)) < 0)
		return 0;
	same = hlen == len && !memcmp(have, buf, len);
	free(have);
	return same;
}

/*
 * Whether an outbox file may be shipped as it claims (formats.md 13
 * "Trust"): one written by root or by the account ship runs as (the
 * harvest's) may claim anything; one of another owner only its owner's uid
 * and neither trust bit (bit3 identity from Slurm, bit4 account trusted).
 * A refusal is said; the file stays in the outbox.
 */
static int trusted_owner(struct ship *s, const char *opath, const char *name,
			 const struct stat *st, const uint8_t *buf, size_t len)
{
	struct bot_delta d;
	char err[768];
	int ok;

	if (st->st_uid == 0 || st->st_uid == geteuid())
		return 1;
	if (bot_delta_parse(name, 1, buf, len, &d, err, sizeof(err)) < 0) {
		bot_log_msg(s->log, BOT_LOG_WARN, "%s: owned by uid %u and not a valid delta (%s); "
			    "kept in the outbox", opath, (unsigned)st->st_uid, err);
		return 0;
	}
	ok = d.hdr.uid == st->st_uid && !(d.hdr.flags & (BOT_DELTA_F_SLURM | BOT_DELTA_F_ACCOUNT));
	if (!ok)
		bot_log_msg(s->log, BOT_LOG_WARN, "%s: owned by uid %u but claims %s; kept in the "
			    "outbox (only root or the service account ship Slurm identities)", opath,
			    (unsigned)st->st_uid, d.hdr.uid != st->st_uid ? "another uid" :
			    "identity from Slurm or a trusted account");
	bot_delta_free(&d);
	return ok;
}

static void copy_one(struct ship *s, const char *name)
{
	char opath[4500], tmp[BOT_DELTA_NAME_MAX + 16], err[768];
	struct stat st, ist;
	uint8_t *buf;
	size_t len;
	int fd, tfd, rc;

	snprintf(opath, sizeof(opath), "%s%s%s", s->o->outbox, bot_path_sep(s->o->outbox), name);
	fd = bot_open_at(s->outfd, name, opath, &outbox_delta, &st, err, sizeof(err));
	if (fd == -BOT_OPEN_GONE) {
		s->r->duplicate++;	/* gone: another shipper took it */
		return;
	}
	if (fd < 0) {
		s->r->refused++;
		bot_log_msg(s->log, BOT_LOG_WARN, "%s; kept in the outbox", err);
		return;
	}
	if (bot_read_whole(fd, opath, BOT_DELTA_MAX_FILE, &buf, &len, err, sizeof(err)) < 0) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "%s; kept in the outbox", err);
		return;
	}
	if (!trusted_owner(s, opath, name, &st, buf, len)) {
		s->r->refused++;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	tfd = claim(s, tmp);
	if (tfd == -2) {
		s->r->busy++;
		goto out;
	}
	if (tfd < 0) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "%s/%s: %s; %s kept in the outbox", s->inpath, tmp,
			    strerror(errno), name);
		goto out;
	}
	if (fstatat(s->infd, name, &ist, AT_SYMLINK_NOFOLLOW) == 0) {
		unlinkat(s->infd, tmp, 0);
		close(tfd);
		if (inbox_same(s, name, buf, len)) {
			s->r->duplicate++;
			drop_outbox(s, name, &st);
		} else {
			s->r->conflict++;
			bot_log_msg(s->log, BOT_LOG_WARN, "%s: the inbox holds another file of that "
				    "name (%s/%s); kept in the outbox, never overwritten. The same "
				    "step harvested again clears itself: once the compactor has "
				    "taken the inbox's, the next run ships this one and the ledger "
				    "drops it as a duplicate. Otherwise compare the two (cmp) and "
				    "remove the one that is wrong", opath, s->inpath, name);
		}
		goto out;
	}
	rc = write_bounded(s, tfd, buf, len);
	if (rc == 0 && (fchmod(tfd, 0640) < 0 || fsync(tfd) < 0))
		rc = -1;
	if (rc < 0) {
		int e = errno;

		unlinkat(s->infd, tmp, 0);
		close(tfd);
		if (rc == -2) {
			s->r->left++;
			s->r->timed_out = 1;
		} else {
			s->r->failed++;
			bot_log_msg(s->log, BOT_LOG_WARN, "%s/%s: %s; %s kept in the outbox",
				    s->inpath, tmp, strerror(e), name);
		}
		goto out;
	}
	bot_crash_point("ship-after-tmp");
	if (fstat(tfd, &ist) < 0 || !same_file(s->infd, tmp, &ist) ||
	    renameat(s->infd, tmp, s->infd, name) < 0 || fsync(s->infd) < 0) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "%s/%s: cannot rename into place: %s; kept in "
			    "the outbox", s->inpath, name, strerror(errno));
		close(tfd);
		goto out;
	}
	close(tfd);
	bot_crash_point("ship-after-rename");
	s->r->shipped++;
	drop_outbox(s, name, &st);
out:
	free(buf);
}

/* Wait for pid until the deadline; kill its process group past it. The
 * exit status, or -1 (killed at the deadline or by a signal). */
static int wait_bounded(struct ship *s, pid_t pid, int *timed_out)
{
	int status;

	*timed_out = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		struct timespec nap = { 0, 10 * 1000 * 1000 };

		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (mono() > s->deadline) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
}

/* What a failed execvp's errno e means for the command named cmd, beside
 * strerror: a bare name is looked up in PATH, where EACCES also says a
 * directory of PATH this user may not search. */
static const char *exec_hint(int e, const char *cmd)
{
	int bare = !strchr(cmd, '/');

	if (e == ENOENT)
		return bare ? " (not found in PATH)" : " (not found)";
	if (e == EACCES && bare)
		return " (not found in PATH, or not executable, or in a directory of PATH this user "
		       "may not search)";
	return "";
}

static void command_one(struct ship *s, const char *name)
{
	char opath[4500], err[768], cmd[4096], *argv[MAX_ARGS + 2];
	struct stat st;
	int fd, argc = 0, rc, timed_out, ep[2], exec_err = 0;
	pid_t pid;
	ssize_t got;

	snprintf(opath, sizeof(opath), "%s%s%s", s->o->outbox, bot_path_sep(s->o->outbox), name);
	fd = bot_open_at(s->outfd, name, opath, &outbox_delta, &st, err, sizeof(err));
	if (fd == -BOT_OPEN_GONE) {
		s->r->duplicate++;
		return;
	}
	if (fd < 0) {
		s->r->refused++;
		bot_log_msg(s->log, BOT_LOG_WARN, "%s; kept in the outbox", err);
		return;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {	/* what trusted_owner reads */
		uint8_t *buf;
		size_t len;
		int ok;

		if (bot_read_whole(fd, opath, BOT_DELTA_MAX_FILE, &buf, &len, err, sizeof(err)) < 0) {
			s->r->failed++;
			bot_log_msg(s->log, BOT_LOG_WARN, "%s; kept in the outbox", err);
			return;
		}
		ok = trusted_owner(s, opath, name, &st, buf, len);
		free(buf);
		if (!ok) {
			s->r->refused++;
			return;
		}
	} else {
		close(fd);
	}
	snprintf(cmd, sizeof(cmd), "%s", s->o->command);
	for (char *tok = strtok(cmd, " \t"); tok && argc < MAX_ARGS; tok = strtok(NULL, " \t"))
		argv[argc++] = tok;
	if (argc == 0) {	/* never the delta as the program (nccl-bot ship refuses it first) */
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "the ship command names no program; %s kept in "
			    "the outbox", opath);
		return;
	}
	argv[argc++] = opath;
	argv[argc] = NULL;
	/* a failed execvp's errno comes back on ep (closed by a good exec), so
	 * that a program not found is said, not read as its exit status 127 */
	if (pipe2(ep, O_CLOEXEC) < 0) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "cannot start the ship command: %s",
			    strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "cannot start the ship command: %s",
			    strerror(errno));
		close(ep[0]);
		close(ep[1]);
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY), e;
		ssize_t w;

		close(ep[0]);
		setpgid(0, 0);
		if (null >= 0)
			dup2(null, 0);
		execvp(argv[0], argv);
		e = errno;
		/* the parent reads e; where it cannot, exit status 127 says enough */
		w = write(ep[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(ep[1]);
	setpgid(pid, pid);
	while ((got = read(ep[0], &exec_err, sizeof(exec_err))) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (got != (ssize_t)sizeof(exec_err))
		exec_err = 0;
	rc = wait_bounded(s, pid, &timed_out);
	if (exec_err) {
		s->r->failed++;
		bot_log_msg(s->log, BOT_LOG_WARN, "cannot run the ship command %s: %s%s; %s kept in "
			    "the outbox", argv[0], strerror(exec_err), exec_hint(exec_err, argv[0]),
			    opath);
		return;
	}
	if (rc == 0) {
		s->r->shipped++;
		drop_outbox(s, name, &st);
		return;
	}
	if (timed_out) {
		s->r->left++;
		s->r->timed_out = 1;
		bot_log_msg(s->log, BOT_LOG_WARN, "ship command on %s: killed at the run's "
			    "timeout; kept in the outbox", opath);
		return;
	}
	s->r->failed++;
	bot_log_msg(s->log, BOT_LOG_WARN, "ship command on %s: %s %d%s; kept in the outbox", opath,
		    rc < 0 ? "killed, or" : "exit status", rc, rc == 127 ? " (a shell's 'command "
		    "not found')" : rc == 126 ? " (a shell's 'cannot execute')" : "");
}

static int open_inbox(struct ship *s, char *err, size_t errlen)
{
	int sfd = open(s->o->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* for messages: "state/inbox" also for "state/" (opened through sfd) */
	snprintf(s->inpath, sizeof(s->inpath), "%s%sinbox", s->o->state,
		 bot_path_sep(s->o->state));
	if (sfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", s->o->state, strerror(errno));
	if (mkdirat(sfd, "inbox", 0750) == 0) {
		int fd = openat(sfd, "inbox", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0) {
			fchmod(fd, 0750);
			close(fd);
		}
		fsync(sfd);
	}
	s->infd = openat(sfd, "inbox", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(sfd);
	if (s->infd < 0)
		return bot_log_errf(err, errlen, "%s: %s", s->inpath, errno == ENOTDIR ||
				    errno == ELOOP ? "not a directory (or a symbolic link)" :
				    strerror(errno));
	return 0;
}

int bot_ship_run(const struct bot_ship_opts *o, struct bot_ship_result *r,
		 const struct bot_log *log)
{
	struct ship s = { o, r, log, -1, -1, "", 0 };
	char err[768], **names = NULL;
	size_t n = 0;
	int more, rc = -1;

	memset(r, 0, sizeof(*r));
	s.deadline = mono() + (o->timeout > 0 ? o->timeout : 60);
	s.outfd = open(o->outbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s.outfd < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: %s", o->outbox, strerror(errno));
		return -1;
	}
	if ((!o->command || !*o->command) &&
	    (bot_statedir_as_owner(o->state, "ship", err, sizeof(err)) < 0 ||
	     open_inbox(&s, err, sizeof(err)) < 0)) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		goto out;
	}
	if (bot_ship_list(s.outfd, o->outbox, BOT_SHIP_MAX_FILES, &names, &n, &more, err,
			  sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (mono() > s.deadline) {
			r->left += n - i;
			r->timed_out = 1;
			break;
		}
		r->seen++;
		if (o->command && *o->command)
			command_one(&s, names[i]);
		else
			copy_one(&s, names[i]);
	}
	if (more) {
		r->left += (size_t)more;	/* not listed this run: they wait too */
		bot_log_msg(log, BOT_LOG_INFO, "%s: more than %u deltas; the rest wait for the "
			    "next run", o->outbox, BOT_SHIP_MAX_FILES);
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	close(s.outfd);
	if (s.infd >= 0)
		close(s.infd);
	return rc;
}
