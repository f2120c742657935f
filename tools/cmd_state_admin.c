/*
 * cmd_state_admin.c - the state directory's administration by people:
 *
 *   nccl-bot state rollback --state DIR --fabric F [--to SNAP | --steps N]
 *   nccl-bot state quarantine --state DIR [list | show NAME | release NAME | drop NAME]
 *
 * rollback hands the move to the store (bot_store_rollback, learn/store.c),
 * which takes the fabric's writer lock (learn/lock.h). quarantine works
 * on <DIR>/quarantine/ (doc/formats.md section 14), where the compactor
 * moves refused deltas as <name>.nbd with the reason in <name>.nbd.why:
 * list them (name, reason, size, age), show one (and its header, read by
 * common/delta.h's bot_delta_read_at), release one back to
 * <DIR>/inbox/ (a rename that never overwrites), or drop one (both files).
 * Every name is checked (no '/', no leading dot, ends in .nbd) and every
 * file is opened through the directory's fd without following links.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/dirscan.h"
#include "common/readall.h"
#include "common/state.h"
#include "learn/lock.h"
#include "learn/log.h"
#include "learn/store.h"
#include "learn/yamlout.h"
#include "tools/cmd.h"

#define WHY_MAX 4096	/* a reason file read at most */

int bot_state_rollback(const struct bot_state_opts *o)
{
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX];
	int rc;

	if (o->to && o->steps) {
		fprintf(stderr, "nccl-bot: state rollback: --to and --steps exclude each other\n");
		return 2;
	}
	if (o->to && !bot_state_snap_name_ok(o->to)) {
		fprintf(stderr, "nccl-bot: state rollback: --to '%s': want snap-<16 hex>.nbs\n",
			o->to);
		return 2;
	}
	/* the store takes the fabric's writer lock (lock NULL: its flock) */
	rc = bot_store_rollback(o->dir, o->fabric, o->to, o->to ? 0 : o->steps ? (unsigned)o->steps : 1,
				NULL, snap, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state rollback: %s\n", err);
		return 1;
	}
	fprintf(stderr, "nccl-bot: state rollback: %s%s%s: current is now %s\n", o->dir,
		bot_path_sep(o->dir), o->fabric, snap);
	return 0;
}

/* ---- quarantine ---------------------------------------------------------- */

/* The length of the delta name a quarantined file holds: the name itself
 * (X.nbd), or X.nbd of a later copy X.nbd.N (N 1..999, as the compactor
 * names them, never overwriting); 0 when it is neither. */
static size_t qname_base(const char *n)
{
	size_t len = strlen(n), d = 0;

	while (d < len && d < 4 && n[len - 1 - d] >= '0' && n[len - 1 - d] <= '9')
		d++;
	if (d >= 1 && d <= 3 && len > d + 1 && n[len - 1 - d] == '.' && n[len - d] != '0')
		len -= d + 1;
	return len >= 5 && !strncmp(n + len - 4, ".nbd", 4) ? len : 0;
}

/* A delta's name as the quarantine holds it: no '/', no leading dot, no
 * control character, X.nbd or X.nbd.N with something before .nbd. */
static int qname_ok(const char *n)
{
	size_t len = strlen(n);

	if (len < 5 || len >= 320 || n[0] == '.' || !qname_base(n))
		return 0;
	for (const char *p = n; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/* <dir>/<sub> as a directory fd, never through a link: fd or -1 (said,
 * unless quiet_enoent and it does not exist). */
static int open_sub(const char *dir, const char *sub, char *path, size_t plen, int quiet_enoent)
{
	char opened[4200];
	int fd;

	/* path, for messages, says "state/quarantine" also for "state/" */
	snprintf(opened, sizeof(opened), "%s/%s", dir, sub);
	snprintf(path, plen, "%s%s%s", dir, bot_path_sep(dir), sub);
	fd = open(opened, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && !(quiet_enoent && errno == ENOENT))
		fprintf(stderr, "nccl-bot: state quarantine: %s: %s\n", path,
			errno == ELOOP || errno == ENOTDIR ? "not a directory (or a symbolic link)" :
			strerror(errno));
	return fd;
}

/* The reason of qdir/<name>.why, one line, escaped, into why. */
static void read_why(int qfd, const char *qpath, const char *name, char *why, size_t wlen)
{
	static const struct bot_open_rule why_rule = { "reason file", WHY_MAX, 1, 0, 0, 0, 0 };
	char wname[330], path[4500], err[600];
	uint8_t *b;
	size_t len;

	snprintf(wname, sizeof(wname), "%s.why", name);
	snprintf(path, sizeof(path), "%s/%s", qpath, wname);
	if (bot_read_at(qfd, wname, path, &why_rule, &b, &len, err, sizeof(err)) < 0) {
		snprintf(why, wlen, "(no reason: %s)", err);
		bot_log_esc_inplace(why, wlen);
		return;
	}
	while (len && (b[len - 1] == '\n' || b[len - 1] == '\r'))
		len--;
	snprintf(why, wlen, "%.*s", (int)len, (const char *)b);
	bot_log_esc_inplace(why, wlen);
	free(b);
}

static void age_str(time_t mtime, char *buf, size_t len)
{
	long long s = (long long)(time(NULL) - mtime);

	if (s < 0)
		s = 0;
	if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

static int emit_print(struct bot_yamlout *y)
{
	const char *text;
	size_t len;
	char err[300];
	int rc = 0;

	if (bot_yamlout_finish(y, &text, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s\n", err);
		rc = 1;
	} else if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
		fprintf(stderr, "nccl-bot: state quarantine: standard output: %s\n",
			strerror(errno));
		rc = 1;
	}
	bot_yamlout_free(y);
	return rc;
}

static int keep_qname(const struct dirent *e, void *arg)
{
	(void)arg;
	return qname_ok(e->d_name);
}

/* The fields of one quarantined delta into the open map y. */
static void q_fields(struct bot_yamlout *y, int qfd, const char *qpath, const char *name,
		     const struct stat *st)
{
	char why[WHY_MAX + 64], age[32];

	read_why(qfd, qpath, name, why, sizeof(why));
	age_str(st->st_mtime, age, sizeof(age));
	bot_yamlout_str(y, "name");
	bot_yamlout_str(y, name);
	bot_yamlout_str(y, "reason");
	bot_yamlout_str(y, why);
	bot_yamlout_str(y, "bytes");
	bot_yamlout_u64(y, (uint64_t)st->st_size);
	bot_yamlout_str(y, "age");
	bot_yamlout_str(y, age);
}

static int q_list(int qfd, const char *qpath)
{
	struct bot_yamlout *y = bot_yamlout_new();
	char **names = NULL;
	size_t n = 0;
	int rc;

	if (!y) {
		fprintf(stderr, "nccl-bot: state quarantine: %s: out of memory\n", qpath);
		return 1;
	}
	/* a listing cut short is an error, never a shorter list */
	if (bot_dir_names(qfd, keep_qname, NULL, &names, &n) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s: cannot list the directory: %s\n",
			qpath, strerror(errno));
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		bot_yamlout_free(y);
		return 1;
	}
	bot_yamlout_map(y, 0);
	bot_yamlout_str(y, "quarantine");
	bot_yamlout_str(y, qpath);
	bot_yamlout_str(y, "deltas");
	bot_yamlout_seq(y, 0);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		/* not only regular files: a quarantined link or FIFO is listed too */
		if (fstatat(qfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			free(names[i]);
			continue;
		}
		bot_yamlout_map(y, 1);
		q_fields(y, qfd, qpath, names[i], &st);
		bot_yamlout_end(y);
		free(names[i]);
	}
	free(names);
	bot_yamlout_end(y);
	bot_yamlout_end(y);
	rc = emit_print(y);
	return rc;
}

/* No quarantine directory yet: the list's document with no delta, through
 * the emitter like any other (the path may need quoting). */
static int q_list_empty(const char *qpath)
{
	struct bot_yamlout *y = bot_yamlout_new();

	if (!y) {
		fprintf(stderr, "nccl-bot: state quarantine: %s: out of memory\n", qpath);
		return 1;
	}
	bot_yamlout_map(y, 0);
	bot_yamlout_str(y, "quarantine");
	bot_yamlout_str(y, qpath);
	bot_yamlout_str(y, "deltas");
	bot_yamlout_seq(y, 1);
	bot_yamlout_end(y);
	bot_yamlout_end(y);
	return emit_print(y);
}

/* The delta's header into the open map y (common/delta.h's reader, so what
 * it refuses is said: "header: null" and the reason). */
static void q_header(struct bot_yamlout *y, int qfd, const char *qpath, const char *name)
{
	static const char *const fnames[] = { "records-dropped", "file-rejected", "rank-drops",
					      "identity-from-slurm", "account-trusted" };
	const struct bot_delta_hdr *h;
	char path[4500], err[BOT_DELTA_ERR_MAX], canon[BOT_DELTA_NAME_MAX];
	struct bot_delta d;

	static const struct bot_open_rule rule = { "delta", BOT_DELTA_MAX_FILE, 1, 0, 0, 0, 0 };
	uint8_t *buf;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", qpath, name);
	bot_yamlout_str(y, "header");
	/* the name is not checked against the header: a second copy was
	 * quarantined as NAME.nbd.N, a name with odd bytes sanitised */
	rc = bot_read_at(qfd, name, path, &rule, &buf, &len, err, sizeof(err));
	if (rc == 0) {
		rc = bot_delta_parse(path, 0, buf, len, &d, err, sizeof(err));
		free(buf);
	}
	if (rc < 0) {
		bot_yamlout_null(y);
		bot_log_esc_inplace(err, sizeof(err));
		bot_yamlout_str(y, "unreadable");
		bot_yamlout_str(y, err);
		return;
	}
	h = &d.hdr;
	bot_yamlout_map(y, 0);
#define KSTR(k, v) (bot_yamlout_str(y, k), bot_yamlout_quoted(y, v))
#define KNUM(k, v) (bot_yamlout_str(y, k), bot_yamlout_u64(y, v))
/* an id that may be absent (BOT_DELTA_NONE): null then */
#define KOPT(k, v) (bot_yamlout_str(y, k), (v) == BOT_DELTA_NONE ? bot_yamlout_null(y) : \
		    bot_yamlout_u64(y, v))
	bot_yamlout_str(y, "identity");
	bot_yamlout_hex64(y, d.identity, 1);
	if (bot_delta_name(h, canon) == 0)
		KSTR("canonical_name", canon);
	KSTR("cluster", h->cluster);
	KSTR("job", h->job);
	KSTR("fabric", h->fabric);
	KSTR("node", h->node);
	KNUM("uid", h->uid);
	KNUM("gid", h->gid);
	KNUM("restart", h->restart);
	bot_yamlout_str(y, "step");
	if (h->step == BOT_DELTA_STEP_BATCH || h->step == BOT_DELTA_STEP_INTERACTIVE ||
	    h->step == BOT_DELTA_STEP_EXTERN)
		bot_yamlout_str(y, h->step == BOT_DELTA_STEP_BATCH ? "batch" :
				h->step == BOT_DELTA_STEP_EXTERN ? "extern" : "interactive");
	else
		bot_yamlout_u64(y, h->step);
	KNUM("array_job", h->array_job);
	KOPT("array_task", h->array_task);
	KNUM("het_job", h->het_job);
	KOPT("het_comp", h->het_comp);
	KSTR("account", h->account);
	KNUM("step_nodes", h->step_nodes);
	KNUM("step_tasks", h->step_tasks);
	KNUM("job_gpus", h->job_gpus);
	KNUM("leaf_switches", h->leaf_switches);
	KNUM("t_start", h->t_start);
	KNUM("t_end", h->t_end);
	KNUM("t_harvest", h->t_harvest);
	KNUM("files_read", h->files_read);
	KNUM("files_rejected", h->files_rejected);
	KNUM("records", h->nrecords);
	bot_yamlout_str(y, "table_digest");
	bot_yamlout_hex64(y, h->table_digest, 1);
	KSTR("build_id", h->build_id);
	bot_yamlout_str(y, "flags");
	bot_yamlout_seq(y, 1);
	for (unsigned b = 0; b < sizeof(fnames) / sizeof(fnames[0]); b++)
		if (h->flags & (1u << b))
			bot_yamlout_str(y, fnames[b]);
	bot_yamlout_end(y);
#undef KSTR
#undef KNUM
#undef KOPT
	bot_yamlout_end(y);
	bot_delta_free(&d);
}

static int q_show(int qfd, const char *qpath, const char *name)
{
	struct bot_yamlout *y;
	struct stat st;

	if (fstatat(qfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, name,
			strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: not a regular file\n", qpath,
			name);
		return 1;
	}
	if (!(y = bot_yamlout_new())) {
		fprintf(stderr, "nccl-bot: state quarantine: out of memory\n");
		return 1;
	}
	bot_yamlout_map(y, 0);
	q_fields(y, qfd, qpath, name, &st);
	q_header(y, qfd, qpath, name);
	bot_yamlout_end(y);
	return emit_print(y);
}

static int fsync_fd(int fd)
{
	return fsync(fd);
}

/* What a non-regular file is, for a message. */
static const char *kind_name(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISDIR(m) ? "a directory" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
	       "not a regular file";
}

static int q_release(int qfd, const char *qpath, const char *dir, const char *name)
{
	char ipath[4200], wname[330], dname[330];
	struct stat st;
	int ifd, rc;

	/* only a regular file can be a delta: a FIFO or a link goes back to no inbox */
	if (fstatat(qfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, name,
			strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s, not a delta: not released "
			"(`nccl-bot state quarantine drop %s` removes it)\n", qpath, name,
			kind_name(st.st_mode), name);
		return 1;
	}
	if ((ifd = open_sub(dir, "inbox", ipath, sizeof(ipath), 0)) < 0)
		return 1;
	/* a copy X.nbd.N goes back as X.nbd, the name the delta reader wants */
	snprintf(dname, sizeof(dname), "%.*s", (int)qname_base(name), name);
	/* never overwrite: a delta of that name already in the inbox stays */
	rc = renameat2(qfd, name, ifd, dname, RENAME_NOREPLACE);
	if (rc < 0 && (errno == EINVAL || errno == ENOSYS)) {
		/* a file system without RENAME_NOREPLACE: link (fails on EEXIST), unlink */
		rc = linkat(qfd, name, ifd, dname, 0);
		if (rc == 0 && unlinkat(qfd, name, 0) < 0) {
			unlinkat(ifd, dname, 0);
			rc = -1;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: release %s/%s -> %s/%s: %s\n", qpath,
			name, ipath, dname, errno == EEXIST ? "a delta of that name is already in the "
			"inbox (left as it is)" : strerror(errno));
		close(ifd);
		return 1;
	}
	if (fsync_fd(ifd) < 0 || fsync_fd(qfd) < 0)
		fprintf(stderr, "nccl-bot: state quarantine: fsync: %s\n", strerror(errno));
	close(ifd);
	snprintf(wname, sizeof(wname), "%s.why", name);
	if (unlinkat(qfd, wname, 0) < 0 && errno != ENOENT)
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, wname,
			strerror(errno));
	fprintf(stderr, "nccl-bot: state quarantine: released %s to %s/%s\n", name, ipath, dname);
	return 0;
}

static int q_drop(int qfd, const char *qpath, const char *name)
{
	char wname[330];
	struct stat st;

	if (fstatat(qfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, name,
			strerror(errno));
		return 1;
	}
	/* whatever the compactor renamed here (a FIFO, a symbolic link, ...)
	 * goes by its name, never opened; only a directory is left alone */
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: a directory, not something "
			"the compactor quarantines (left as it is)\n", qpath, name);
		return 1;
	}
	if (unlinkat(qfd, name, 0) < 0) {
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, name,
			strerror(errno));
		return 1;
	}
	snprintf(wname, sizeof(wname), "%s.why", name);
	if (unlinkat(qfd, wname, 0) < 0 && errno != ENOENT)
		fprintf(stderr, "nccl-bot: state quarantine: %s/%s: %s\n", qpath, wname,
			strerror(errno));
	if (fsync_fd(qfd) < 0)
		fprintf(stderr, "nccl-bot: state quarantine: fsync: %s\n", strerror(errno));
	fprintf(stderr, "nccl-bot: state quarantine: dropped %s\n", name);
	return 0;
}

int bot_state_quarantine(const struct bot_state_opts *o)
{
	const char *act = o->nargs ? o->args[0] : "list";
	char qpath[4200];
	int qfd, rc, need = strcmp(act, "list") != 0;

	if (o->fabric) {
		fprintf(stderr, "nccl-bot: state quarantine: takes no --fabric (the quarantine is "
			"the state directory's)\n");
		return 2;
	}
	if ((strcmp(act, "list") && strcmp(act, "show") && strcmp(act, "release") &&
	     strcmp(act, "drop")) || o->nargs > 1 + need || (need && o->nargs != 2)) {
		fprintf(stderr, "nccl-bot: state quarantine: want list, show NAME, release NAME or "
			"drop NAME\n");
		return 2;
	}
	if (need && !qname_ok(o->args[1])) {
		char esc[400];

		fprintf(stderr, "nccl-bot: state quarantine: '%s' is not a delta name (no '/', no "
			"leading '.', ends in .nbd or .nbd.N)\n", bot_log_esc(esc, sizeof(esc), o->args[1]));
		return 2;
	}
	qfd = open_sub(o->dir, "quarantine", qpath, sizeof(qpath), !need);
	if (qfd < 0 && !need && errno == ENOENT) {
		struct stat st;

		/* no quarantine/ yet is nothing refused, in a state directory
		 * that is there: a mistyped --state is not */
		int r = stat(o->dir, &st);

		if (r < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "nccl-bot: state quarantine: --state %s: %s\n", o->dir,
				r < 0 ? strerror(errno) : "not a directory");
			return 1;
		}
		return q_list_empty(qpath);
	}
	if (qfd < 0)
		return 1;
	if (!strcmp(act, "list"))
		rc = q_list(qfd, qpath);
	else if (!strcmp(act, "show"))
		rc = q_show(qfd, qpath, o->args[1]);
	else if (!strcmp(act, "release"))
		rc = q_release(qfd, qpath, o->dir, o->args[1]);
	else
		rc = q_drop(qfd, qpath, o->args[1]);
	close(qfd);
	return rc;
}
