/*
 * store.c - the state directory: load the current snapshot, publish a new
 * one, prune along the parent chain, roll back (learn/store.h,
 * doc/formats.md section 12).
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
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/readall.h"
#include "common/writeall.h"
#include "learn/crash.h"
#include "learn/ledger.h"
#include "learn/log.h"
#include "learn/store.h"

/* Read dirfd/name (a regular file, not a link, one link) of at most max bytes. */
static int slurp_at(int dirfd, const char *fdir, const char *name, size_t max, uint8_t **buf,
		    size_t *len, char *err, size_t errlen)
{
	char path[BOT_FABRIC_PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fdir, name);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", path,
				errno == ELOOP ? "a symbolic link" : strerror(errno));
	/* 0 links: replaced (`current`) or pruned (a snapshot) since we
	 * opened it, by a publish racing us: what we read is the file whole,
	 * as it was (a reader failed with "has 0 hard links" until
	 * 2026-12-05) */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
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

/* The header of snapshot dirfd/name: 0, -1 with err, or -2 when there is
 * no such file (err empty). A regular file with one link, not followed. */
static int read_head(int dirfd, const char *fdir, const char *name, struct bot_state_hdr *h,
		     char *err, size_t errlen)
{
	char path[BOT_FABRIC_PATH_MAX + 64];
	uint8_t b[BOT_STATE_HDR_SIZE];
	size_t got = 0;
	struct stat st;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", fdir, name);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (err && errlen)
			err[0] = 0;
		return -2;
	}
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", path,
				    errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {	/* 0: as slurp_at */
		close(fd);
		return bot_log_errf(err, errlen, "%s: not a regular file with one link", path);
	}
	while (got < sizeof(b)) {
		ssize_t r = read(fd, b + got, sizeof(b) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			return bot_log_errf(err, errlen, "%s: %s", path, strerror(e));
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	rc = bot_state_parse_header(path, b, got, h, err, errlen);
	if (rc < 0)
		bot_log_esc_inplace(err, errlen);
	return rc;
}

/* ".snap-<16 hex>.nbs.tmp": a snapshot's temporary (write_atomic). */
static int is_snap_tmp(const char *s)
{
	char name[BOT_STATE_NAME_MAX];
	size_t n = strlen(s);

	if (n != 30 || s[0] != '.' || strcmp(s + 26, ".tmp"))
		return 0;
	memcpy(name, s + 1, 25);
	name[25] = 0;
	return bot_state_snap_name_ok(name);
}

struct snap_list {
	int tmps;
	char (*v)[BOT_STATE_NAME_MAX];
	size_t n, cap;
};

/* bot_dir_scan's visitor: 0, or 1 out of memory. */
static int list_snap(const struct dirent *e, void *arg)
{
	struct snap_list *l = arg;

	if (l->tmps ? !is_snap_tmp(e->d_name) : !bot_state_snap_name_ok(e->d_name))
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 16;
		void *nv = realloc(l->v, nc * sizeof(*l->v));

		if (!nv)
			return 1;
		l->v = nv;
		l->cap = nc;
	}
	strcpy(l->v[l->n++], e->d_name);
	return 0;
}

/* The fabric's snap-*.nbs names (or with tmps, their temporaries) sorted, listed in full: a listing that
 * fails part-way is an error, never a shorter list. */
static int list_snaps(int dirfd, const char *fdir, int tmps, char (**names)[BOT_STATE_NAME_MAX],
		      size_t *n, char *err, size_t errlen)
{
	struct snap_list l = { tmps, NULL, 0, 0 };
	int rc = bot_dir_scan(dirfd, list_snap, &l);

	*names = NULL;
	*n = 0;
	if (rc) {
		free(l.v);
		if (rc > 0)
			return bot_log_errf(err, errlen, "%s: out of memory", fdir);
		return bot_log_errf(err, errlen, "%s: cannot list the directory: %s", fdir,
				    strerror(-rc));
	}
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), (int (*)(const void *, const void *))strcmp);
	*names = l.v;
	*n = l.n;
	return 0;
}

/*
 * A fabric directory without `current`: 0 no snapshot; 1 one snapshot, a
 * version 2 or later first snapshot (parent 0) of this fabric, named in
 * lone: a first publish interrupted between its snapshot's rename and
 * `current` (the snapshot is durable and whole: it is the fabric's state,
 * and the next writer completes the publish); 3 several such first
 * snapshots and nothing else (first publishes interrupted under builds
 * that started a fabric over: which one holds the state is the admin's
 * call); 2 anything else (a `current` existed and is gone); or -1 with
 * err (it cannot be listed: never taken for one without snapshots). On 3,
 * lone and other name two of them.
 */
static int without_current(int dirfd, const char *fdir, const char *fabric,
			   char lone[BOT_STATE_NAME_MAX], char other[BOT_STATE_NAME_MAX], char *err,
			   size_t errlen)
{
	char (*names)[BOT_STATE_NAME_MAX];
	char why[BOT_STATE_ERR_MAX];
	size_t n, firsts = 0;
	int rc = 0;

	if (list_snaps(dirfd, fdir, 0, &names, &n, err, errlen) < 0)
		return -1;
	/* to the end or the first that is not ours to adopt: a lineage after
	 * two first snapshots is still a lost `current` (2), whatever the
	 * names' order */
	for (size_t i = 0; i < n && rc != 2; i++) {
		struct bot_state_hdr h;

		if (read_head(dirfd, fdir, names[i], &h, why, sizeof(why)) == 0 &&
		    h.version >= 2 && h.parent == 0 && !strcmp(h.fabric, fabric)) {
			strcpy(firsts ? other : lone, names[i]);
			rc = ++firsts > 1 ? 3 : 1;
		} else
			rc = 2;	/* a lineage, version 1, or unreadable: not ours to drop */
	}
	free(names);
	return rc;
}

/* err for without_current()'s 2 and 3. */
static int refuse_without_current(int w, const char *fdir, const char *fabric, const char *a,
				  const char *b, char *err, size_t errlen)
{
	if (w == 3)
		return bot_log_errf(err, errlen, "%s: holds several first snapshots (%s, %s, ...) "
				    "and no `current` (first publishes interrupted under an older "
				    "nccl-bot): name the one to keep, nccl-bot state rollback "
				    "--state DIR --fabric %s --to SNAP (state verify lists them)", fdir, a, b,
				    fabric);
	return bot_log_errf(err, errlen, "%s: holds snapshots but no `current`: restore it (echo "
			    "snap-<digest>.nbs > %s/current, or nccl-bot state rollback to a "
			    "snapshot) rather than start the fabric over", fdir, fdir);
}

/* The name `current` holds into cur: 0, 1 when there is no `current`, or
 * -1 with err. */
static int read_current(int dfd, const char *fdir, char cur[BOT_STATE_NAME_MAX], char *err,
			size_t errlen);

int bot_store_read_current(int dfd, const char *fdir, char cur[BOT_STATE_NAME_MAX], char *err,
			   size_t errlen)
{
	return read_current(dfd, fdir, cur, err, errlen);
}

static int read_current(int dfd, const char *fdir, char cur[BOT_STATE_NAME_MAX], char *err,
			size_t errlen)
{
	char path[BOT_FABRIC_PATH_MAX + 64], line[64];
	uint8_t *cb;
	size_t clen;
	int cfd = openat(dfd, "current", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (cfd < 0 && errno == ENOENT)
		return 1;
	if (cfd >= 0)
		close(cfd);
	/* anything else is reported by the read, with the reason */
	if (slurp_at(dfd, fdir, "current", sizeof(line) - 1, &cb, &clen, err, errlen) < 0)
		return -1;
	memcpy(line, cb, clen);
	line[clen] = 0;
	free(cb);
	snprintf(path, sizeof(path), "%s/current", fdir);
	if (clen == 0 || line[clen - 1] != '\n' ||
	    (line[clen - 1] = 0, !bot_state_snap_name_ok(line)))
		return bot_log_errf(err, errlen, "%s: does not hold a snapshot name (want "
				    "\"snap-<16 hex>.nbs\" and a newline)", path);
	strcpy(cur, line);
	return 0;
}

/* Snapshot dfd/name, whole: its bytes match its name, it parses, it holds
 * fabric. 0 with *out, or -1 with err. */
static int load_snap(int dfd, const char *fdir, const char *name, const char *fabric,
		     struct bot_state *out, char *err, size_t errlen)
{
	char path[BOT_FABRIC_PATH_MAX + 64], digest[BOT_STATE_NAME_MAX];
	uint8_t *b;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (slurp_at(dfd, fdir, name, BOT_STATE_MAX_FILE, &b, &len, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", fdir, name);
	bot_state_snap_name(b, len, digest);
	if (strcmp(digest, name)) {
		free(b);
		return bot_log_errf(err, errlen, "%s: content does not match its name (digest %.16s): "
				"the file was changed or damaged", path, digest + 5);
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
	return 0;
}

/* Has `current` appeared in dfd since a reader found none? (A writer
 * completed or published meanwhile: the reader without the lock reads
 * again rather than refuse what it half saw.) */
static int current_appeared(int dfd)
{
	return faccessat(dfd, "current", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* How many times bot_store_load reads a fabric racing its writers. */
#define BOT_STORE_LOAD_TRIES 16

/* Is snapshot dfd/name absent (not damaged, not unreadable: gone)? */
static int snap_missing(int dfd, const char *name)
{
	return faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* err for a `current` naming a snapshot that is not there: the way back
 * depends on whether another snapshot is kept. -1. */
static int say_current_missing(int dfd, const char *fdir, const char *cur, char *err,
			       size_t errlen)
{
	char (*names)[BOT_STATE_NAME_MAX];
	size_t n;

	if (list_snaps(dfd, fdir, 0, &names, &n, err, errlen) < 0)
		return -1;
	free(names);
	if (n == 0)
		return bot_log_errf(err, errlen, "%s: `current` names %s, which is not there "
				    "(deleted or moved) and no other snapshot is kept: restore it "
				    "from a backup, or remove %s/current to start the fabric over "
				    "from the prior", fdir, cur, fdir);
	return bot_log_errf(err, errlen, "%s: `current` names %s, which is not there (deleted "
			    "or moved): restore it, or point `current` at a kept snapshot with "
			    "nccl-bot state rollback --to SNAP (`state verify` lists them)", fdir,
			    cur);
}

int bot_store_load(const char *dir, const char *fabric, struct bot_state *out,
		   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX], cur[BOT_STATE_NAME_MAX];
	int dfd, rc, adopted;

	memset(out, 0, sizeof(*out));
	if (snap)
		snap[0] = 0;
	dfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen);
	if (dfd == -1)
		return -1;
	/* a reader reads again while a writer races it (each time because
	 * `current` moved on: the writer made progress), a few times: once
	 * only, two publishes with retention 2 during the second read of a
	 * busy fabric refused the new `current` as "not there" (until
	 * 2026-12-05) */
	for (int tries = 1;; tries++) {
		int again = tries < BOT_STORE_LOAD_TRIES;

		adopted = 0;
		rc = dfd >= 0 ? read_current(dfd, fdir, cur, err, errlen) : 1;
		if (rc == 1 && dfd >= 0) {
			char other[BOT_STATE_NAME_MAX];
			int w;

			bot_crash_point("load-without-current");	/* test hook */
			w = without_current(dfd, fdir, fabric, cur, other, err, errlen);

			if (w >= 2 && again && current_appeared(dfd))
				continue;
			if (w < 0 || w >= 2) {
				close(dfd);
				return w < 0 ? -1 : refuse_without_current(w, fdir, fabric, cur, other,
									   err, errlen);
			}
			/* the interrupted publish's snapshot is the state */
			rc = w == 1 ? 0 : 1;
			adopted = w == 1;
		}
		if (rc == 1) {
			if (dfd >= 0)
				close(dfd);
			if (bot_state_init(out, fabric) < 0)
				return bot_log_errf(err, errlen, "out of memory");
			return 1;
		}
		if (rc < 0) {
			close(dfd);
			return -1;
		}
		bot_crash_point("load-snapshot");	/* test hook */
		rc = load_snap(dfd, fdir, cur, fabric, out, err, errlen);
		if (rc < 0 && adopted && again && current_appeared(dfd))
			continue;	/* completed, published over and pruned meanwhile */
		if (rc < 0 && !adopted && snap_missing(dfd, cur)) {
			char now[BOT_STATE_NAME_MAX], why[8];

			/* published over and pruned between our two reads */
			if (read_current(dfd, fdir, now, why, sizeof(why)) == 0 && strcmp(now, cur)) {
				if (again)
					continue;
				bot_log_errf(err, errlen, "%s: `current` moved on %d times while "
					     "its snapshot was read (each pruned before it was "
					     "opened): the writers publish faster than a read; "
					     "try again", fdir, tries);
			} else
				say_current_missing(dfd, fdir, cur, err, errlen);
		}
		break;
	}
	close(dfd);
	if (rc < 0)
		return -1;
	if (snap)
		strcpy(snap, cur);
	return 0;
}

/* Write buf to dirfd/name via .<name>.tmp + fchmod 0644 + fsync + rename
 * (common/writeall.h; the mode open() asked for went through the umask:
 * published state is for every reader; a temporary left by a crashed writer
 * is ours to replace, we hold the lock); a failure names the step and the
 * file it failed on. */
static int write_atomic(int dirfd, const char *fdir, const char *name, const void *buf,
			size_t len, const char *hook, char *err, size_t errlen)
{
	const struct bot_write_rule r = {
		.mode = 0644, .chmod = 1, .clear_stale = 1,
		.before_rename = bot_crash_point, .point = hook,
	};

	if (bot_write_whole_at(dirfd, fdir, name, buf, len, &r, err, errlen) < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	return 0;
}

/* The parent chain from snapshot `from`, at most max entries into v (*n):
 * a snapshot that is not there ends it as an absent entry. 0, or -1 with
 * err (one on the chain cannot be read: its header is damaged, it is a
 * link, or it holds another fabric). */
static int walk_chain(int dirfd, const char *fdir, const char *fabric, const char *from,
		      size_t max, struct bot_store_entry *v, size_t *n, char *err, size_t errlen)
{
	char name[BOT_STATE_NAME_MAX];

	*n = 0;
	strcpy(name, from);
	while (*n < max) {
		struct bot_store_entry *e = &v[(*n)++];
		int rc;

		memset(e, 0, sizeof(*e));
		strcpy(e->name, name);
		rc = read_head(dirfd, fdir, name, &e->hdr, err, errlen);
		if (rc == -2)
			break;		/* removed by retention (or never kept) */
		if (rc < 0)
			return -1;
		if (strcmp(e->hdr.fabric, fabric))
			return bot_log_errf(err, errlen, "%s/%s: holds fabric '%s', not '%s'", fdir,
					    name, e->hdr.fabric, fabric);
		e->present = 1;
		if (e->hdr.parent == 0)
			break;
		bot_state_snap_name_of(e->hdr.parent, name);
	}
	return 0;
}

/* bot_store_prune on an open fabric directory. */
static int prune_at(int dirfd, const char *fdir, const char *fabric, unsigned retention,
		    char *err, size_t errlen)
{
	char cur[BOT_STATE_NAME_MAX], (*names)[BOT_STATE_NAME_MAX] = NULL;
	struct bot_store_entry *keep;
	size_t nkeep = 0, n = 0;
	int rc;

	if (retention < BOT_STORE_RETENTION_MIN)
		return bot_log_errf(err, errlen, "retention %u: keep at least %d snapshots",
				    retention, BOT_STORE_RETENTION_MIN);
	rc = read_current(dirfd, fdir, cur, err, errlen);
	if (rc != 0)
		return rc < 0 ? -1 : bot_log_errf(err, errlen, "%s: no `current`: nothing pruned",
						  fdir);
	keep = calloc(retention, sizeof(*keep));
	if (!keep)
		return bot_log_errf(err, errlen, "%s: out of memory", fdir);
	if (walk_chain(dirfd, fdir, fabric, cur, retention, keep, &nkeep, err, errlen) < 0 ||
	    list_snaps(dirfd, fdir, 0, &names, &n, err, errlen) < 0) {
		free(keep);
		return -1;
	}
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		int kept = 0;

		for (size_t j = 0; j < nkeep && !kept; j++)
			kept = keep[j].present && !strcmp(keep[j].name, names[i]);
		if (kept)
			continue;
		if (unlinkat(dirfd, names[i], 0) < 0 && errno != ENOENT && rc == 0)
			rc = bot_log_errf(err, errlen, "%s/%s: cannot remove: %s", fdir, names[i],
					  strerror(errno));
	}
	free(names);
	/* temporaries of writers killed before their rename (we hold the lock:
	 * no writer is between its write and its rename now) */
	if (rc == 0 && list_snaps(dirfd, fdir, 1, &names, &n, err, errlen) == 0) {
		for (size_t i = 0; i < n; i++)
			unlinkat(dirfd, names[i], 0);
		free(names);
	}
	free(keep);
	if (rc == 0 && fsync(dirfd) < 0)
		rc = bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
	return rc;
}

int bot_store_publish(const char *dir, const struct bot_state *s, char snap[BOT_STATE_NAME_MAX],
		      char *err, size_t errlen)
{
	return bot_store_publish_keep(dir, s, 0, snap, err, errlen);
}

/* Is s->parent what the fabric's `current` names (0: none, and no lineage
 * left without it)? 0, or -1 with err; *nocur 1 when the fabric has no
 * `current` (no snapshot, or an interrupted first publish's). */
static int parent_ok(int dirfd, const char *fdir, const struct bot_state *s, int *nocur,
		     char *err, size_t errlen)
{
	char cur[BOT_STATE_NAME_MAX], want[BOT_STATE_NAME_MAX];
	int rc = read_current(dirfd, fdir, cur, err, errlen);

	*nocur = 0;
	if (rc < 0)
		return -1;
	if (rc == 1) {
		char other[BOT_STATE_NAME_MAX];
		int w = without_current(dirfd, fdir, s->fabric, cur, other, err, errlen);

		if (w < 0)
			return -1;
		if (w >= 2)
			return refuse_without_current(w, fdir, s->fabric, cur, other, err, errlen);
		*nocur = 1;
		if (w == 0 && s->parent == 0)
			return 0;
		if (w == 1 && s->parent == bot_state_snap_digest(cur))
			return 0;
		if (s->parent)
			bot_state_snap_name_of(s->parent, want);
		if (w == 0)
			return bot_log_errf(err, errlen, "%s: the new snapshot was made from %s, but "
					    "the fabric has no `current` and no snapshot: nothing "
					    "published", fdir, want);
		return bot_log_errf(err, errlen, "%s: the new snapshot was made from %s, but the "
				    "fabric's state is %s (its first publish was interrupted before "
				    "`current`): nothing published; load and merge again", fdir,
				    s->parent ? want : "no snapshot", cur);
	}
	if (s->parent == bot_state_snap_digest(cur))
		return 0;
	if (s->parent)
		bot_state_snap_name_of(s->parent, want);
	return bot_log_errf(err, errlen, "%s: the new snapshot was made from %s, but `current` "
			    "names %s (another writer published meanwhile, or the state was not "
			    "loaded under the fabric's lock): nothing published; load and merge "
			    "again", fdir, s->parent ? want : "no snapshot", cur);
}

int bot_store_publish_keep(const char *dir, const struct bot_state *s, unsigned retention,
			   char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX], line[BOT_STATE_NAME_MAX + 1];
	uint8_t *b;
	size_t len;
	int dirfd, rc = -1, nocur = 0, renamed = 0;

	snap[0] = 0;
	if (retention == 0)
		retention = BOT_STORE_RETENTION_DEFAULT;
	if (retention < BOT_STORE_RETENTION_MIN)
		return bot_log_errf(err, errlen, "retention %u: keep at least %d snapshots (the "
				    "current one and the previous, its undo)", retention,
				    BOT_STORE_RETENTION_MIN);
	if (bot_state_encode(s, &b, &len, err, errlen) < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	bot_state_snap_name(b, len, snap);
	dirfd = bot_fabricdir_open(dir, s->fabric, 1, fdir, err, errlen);
	if (dirfd < 0)
		goto out;
	if (parent_ok(dirfd, fdir, s, &nocur, err, errlen) < 0)
		goto out;
	snprintf(line, sizeof(line), "%s\n", snap);
	/* The snapshot is durable before `current` names it. */
	if (write_atomic(dirfd, fdir, snap, b, len, "publish-snapshot-tmp", err, errlen) < 0)
		goto out;
	renamed = 1;
	if (fsync(dirfd) < 0) {
		bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
		goto out;
	}
	bot_crash_point("publish-after-snapshot");	/* test hook (learn/crash.h) */
	if (write_atomic(dirfd, fdir, "current", line, strlen(line), "publish-current-tmp", err,
			 errlen) < 0)
		goto out;
	renamed = 0;	/* `current` names it: published */
	if (fsync(dirfd) < 0) {
		bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
		goto out;
	}
	bot_crash_point("publish-after-current");
	rc = prune_at(dirfd, fdir, s->fabric, retention, err, errlen) < 0 ? 1 : 0;
out:
	/* A publish to a fabric without `current` that failed after its
	 * snapshot's rename takes the snapshot back: alone it would be the
	 * fabric's state (an interrupted first publish, read and completed as
	 * one) while the caller says nothing was published, and beside the
	 * interrupted first publish's snapshot it is a lineage without
	 * `current`, refused to every reader. Only a kill leaves one. */
	if (rc < 0 && renamed && nocur &&
	    faccessat(dirfd, "current", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
	    unlinkat(dirfd, snap, 0) == 0)
		fsync(dirfd);
	if (dirfd >= 0)
		close(dirfd);
	free(b);
	if (rc < 0)
		snap[0] = 0;
	return rc;
}

int bot_store_prune(const char *dir, const char *fabric, unsigned retention, char *err,
		    size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX];
	int dirfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen), rc;

	if (dirfd == -2)
		return 0;	/* no fabric directory: nothing to keep or remove */
	if (dirfd < 0)
		return -1;
	rc = prune_at(dirfd, fdir, fabric, retention, err, errlen);
	close(dirfd);
	return rc;
}

int bot_store_complete(const char *dir, const char *fabric, char snap[BOT_STATE_NAME_MAX],
		       char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX], other[BOT_STATE_NAME_MAX], line[BOT_STATE_NAME_MAX + 1];
	struct bot_state s;
	int dirfd, rc, w;

	snap[0] = 0;
	dirfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen);
	if (dirfd == -2)
		return 0;
	if (dirfd < 0)
		return -1;
	rc = read_current(dirfd, fdir, snap, err, errlen);
	if (rc <= 0) {
		snap[0] = 0;
		close(dirfd);
		return rc;	/* a `current` (or one a load reports) */
	}
	w = without_current(dirfd, fdir, fabric, snap, other, err, errlen);
	if (w != 1) {
		if (w >= 2)
			refuse_without_current(w, fdir, fabric, snap, other, err, errlen);
		snap[0] = 0;
		close(dirfd);
		return w == 0 ? 0 : -1;
	}
	/* what the interrupted writer had left to do: the snapshot checked
	 * whole first (`current` never names a bad one), then `current`, then
	 * its temporaries gone */
	rc = load_snap(dirfd, fdir, snap, fabric, &s, err, errlen);
	if (rc == 0) {
		bot_state_free(&s);
		snprintf(line, sizeof(line), "%s\n", snap);
		rc = write_atomic(dirfd, fdir, "current", line, strlen(line),
				  "publish-current-tmp", err, errlen);
	}
	if (rc == 0 && fsync(dirfd) < 0)
		rc = bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
	if (rc == 0 && prune_at(dirfd, fdir, fabric, BOT_STORE_RETENTION_MIN, err, errlen) < 0)
		rc = -1;
	close(dirfd);
	if (rc < 0) {
		snap[0] = 0;
		return -1;
	}
	return 1;
}

/* Rollback with the lock held, on the open fabric directory. */
static int rollback_at(int dirfd, const char *fdir, const char *fabric, const char *target,
		       unsigned steps, char snap[BOT_STATE_NAME_MAX], char *err, size_t errlen)
{
	char cur[BOT_STATE_NAME_MAX], to[BOT_STATE_NAME_MAX], line[BOT_STATE_NAME_MAX + 1];
	struct bot_state s;
	struct stat st;
	int rc = read_current(dirfd, fdir, cur, err, errlen);

	/* a damaged `current` is what --to repairs; --steps needs it whole */
	if (rc < 0 && !target)
		return -1;
	if (target) {
		if (!bot_state_snap_name_ok(target))
			return bot_log_errf(err, errlen, "%s: '%s' is not a snapshot name (want "
					    "snap-<16 hex>.nbs)", fdir, target);
		strcpy(to, target);
	} else {
		struct bot_store_entry *v;
		size_t n;

		if (rc == 1)
			return bot_log_errf(err, errlen, "%s: no `current` to step back from (name "
					    "the snapshot to restore)", fdir);
		if (steps < 1 || steps > BOT_STATE_MAX_SOURCES)
			return bot_log_errf(err, errlen, "%s: %u steps back: want 1 or more", fdir,
					    steps);
		v = calloc((size_t)steps + 1, sizeof(*v));
		if (!v)
			return bot_log_errf(err, errlen, "%s: out of memory", fdir);
		if (walk_chain(dirfd, fdir, fabric, cur, (size_t)steps + 1, v, &n, err,
			       errlen) < 0) {
			free(v);
			return -1;
		}
		if (n < (size_t)steps + 1 || !v[steps].present) {
			int pruned = n && !v[n - 1].present, damaged = 0;
			size_t back = pruned && n >= 2 ? n - 2 : n ? n - 1 : 0;
			char why[BOT_STATE_ERR_MAX];
			struct bot_state cs;

			/* a missing parent named by a damaged snapshot (the
			 * one whose header names it, v[n - 2]) is no pruning:
			 * that header cannot be trusted */
			if (pruned && n >= 2) {
				damaged = load_snap(dirfd, fdir, v[n - 2].name, fabric, &cs, why,
						    sizeof(why)) < 0;
				if (!damaged)
					bot_state_free(&cs);
			}
			if (pruned && n < 2)
				bot_log_errf(err, errlen, "%s: `current` names %s, which is not "
					     "there; name a kept snapshot to restore (--to; `state "
					     "verify` lists them)", fdir, cur);
			else if (damaged)
				bot_log_errf(err, errlen, "%s: %u step(s) back from %s: the parent of "
					     "%s is not known (%s); name a kept snapshot to restore "
					     "(--to; `state verify` lists them)", fdir, steps, cur,
					     v[n - 2].name, why);
			else if (pruned)
				bot_log_errf(err, errlen, "%s: %u step(s) back from %s: only %zu older "
					     "snapshot(s) kept (the chain was pruned at %s)", fdir,
					     steps, cur, back, v[n - 1].name);
			else if (back == 0)
				bot_log_errf(err, errlen, "%s: %s has no parent: nothing to roll "
					     "back to", fdir, cur);
			else
				bot_log_errf(err, errlen, "%s: %u step(s) back from %s: only %zu "
					     "older snapshot(s) (the chain begins at %s)", fdir, steps,
					     cur, back, v[n - 1].name);
			free(v);
			return -1;
		}
		strcpy(to, v[steps].name);
		free(v);
	}
	if (fstatat(dirfd, to, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return bot_log_errf(err, errlen, "%s/%s: no such snapshot (retention may have "
				    "removed it)", fdir, to);
	/* the whole target checked: `current` never names a bad snapshot */
	if (load_snap(dirfd, fdir, to, fabric, &s, err, errlen) < 0)
		return -1;
	if (s.ledger) {
		/* the compactor refuses a `current` whose ledger is gone (formats.md 14) */
		char lname[BOT_LEDGER_NAME_MAX], lrel[BOT_LEDGER_NAME_MAX + 80];

		bot_ledger_file_name(s.ledger, lname);
		snprintf(lrel, sizeof(lrel), "../.ledger/%s/%s", fabric, lname);
		if (fstatat(dirfd, lrel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
			bot_state_free(&s);
			return bot_log_errf(err, errlen, "%s/%s: its ledger %s/../.ledger/%s/%s is "
					    "gone (kept ledgers are fewer than snapshots): a compactor "
					    "could not merge after it; roll back less far", fdir, to,
					    fdir, fabric, lname);
		}
	}
	bot_state_free(&s);
	/* every job reads the current snapshot: one restored from a backup
	 * mode 0600 would leave them all on the prior (until 2026-12-05) */
	if (fstatat(dirfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 0444) != 0444)
		return bot_log_errf(err, errlen, "%s/%s: mode %04o: not readable by every user, and "
				    "every job reads the current snapshot (chmod 0644 it, then roll "
				    "back)", fdir, to, (unsigned)(st.st_mode & 07777));
	strcpy(snap, to);
	if (rc == 0 && !strcmp(cur, to))
		return 0;	/* already current */
	snprintf(line, sizeof(line), "%s\n", to);
	if (write_atomic(dirfd, fdir, "current", line, strlen(line), "publish-current-tmp", err,
			 errlen) < 0)
		return -1;
	if (fsync(dirfd) < 0)
		return bot_log_errf(err, errlen, "%s: fsync: %s", fdir, strerror(errno));
	return 0;
}

int bot_store_rollback(const char *dir, const char *fabric, const char *target, unsigned steps,
		       struct bot_lock *lock, char snap[BOT_STATE_NAME_MAX], char *err,
		       size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX];
	struct bot_lock own;
	int dirfd, rc;

	snap[0] = 0;
	/* a fabric that does not exist is not made by taking its lock */
	dirfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen);
	if (dirfd == -2)
		return bot_log_errf(err, errlen, "%s: no such fabric directory", fdir);
	if (dirfd < 0)
		return -1;
	close(dirfd);
	if (!lock) {
		bot_lock_init_flock(&own);
		lock = &own;
	}
	if (lock->acquire(lock, dir, fabric, err, errlen) < 0)
		return -1;
	dirfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen);
	if (dirfd == -2)
		bot_log_errf(err, errlen, "%s: no such fabric directory", fdir);
	rc = dirfd < 0 ? -1 : rollback_at(dirfd, fdir, fabric, target, steps, snap, err, errlen);
	if (dirfd >= 0)
		close(dirfd);
	lock->release(lock);
	if (rc < 0)
		snap[0] = 0;
	return rc;
}

int bot_store_history(const char *dir, const char *fabric, size_t max,
		      struct bot_store_entry **v, size_t *n, char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX], cur[BOT_STATE_NAME_MAX];
	int dirfd, rc;

	*v = NULL;
	*n = 0;
	dirfd = bot_fabricdir_open(dir, fabric, 0, fdir, err, errlen);
	if (dirfd == -2)
		return 0;
	if (dirfd < 0)
		return -1;
	rc = read_current(dirfd, fdir, cur, err, errlen);
	if (rc == 0 && max > 0) {
		*v = calloc(max, sizeof(**v));
		if (!*v)
			rc = bot_log_errf(err, errlen, "%s: out of memory", fdir);
		else
			rc = walk_chain(dirfd, fdir, fabric, cur, max, *v, n, err, errlen);
		if (rc < 0) {
			free(*v);
			*v = NULL;
			*n = 0;
		}
	}
	close(dirfd);
	return rc < 0 ? -1 : 0;
}
