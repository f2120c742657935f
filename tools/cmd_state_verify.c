/*
 * cmd_state_verify.c - `nccl-bot state verify --state DIR [--fabric F]`:
 * is the state directory sound? What the crash tests call after killing a
 * writer.
 *
 * Per fabric (every directory of DIR named by section 12's rule, but the
 * fleet's inbox/, quarantine/ and held/; or the one --fabric names): `current` is
 * loaded by the store's own reader (learn/store.h, every rule of section
 * 12), then every snap-*.nbs kept is read (no link, no FIFO, one hard
 * link), its digest checked against its name, parsed, and its fabric
 * checked; the parent chain from `current` is walked and said to end at a
 * fabric's first snapshot or at a removed one (retention). Each snapshot's
 * own parent is said too. Leftover temporary files of an interrupted
 * publish are named but are no problem. Exit 0 when all is sound, 1 naming
 * each problem on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/readall.h"
#include "common/state.h"
#include "learn/ledger.h"
#include "learn/log.h"
#include "learn/store.h"
#include "policies/context.h"
#include "tools/cmd.h"

struct snapinfo {
	uint64_t digest, parent;
	int ok;
};

/* How a snapshot is opened: regular, one link, at most the snapshot limit. */
static const struct bot_open_rule snap_rule = { "snapshot", BOT_STATE_MAX_FILE, 1, 0, 0, 0, 0 };

static int problem(unsigned *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int problem(unsigned *n, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nccl-bot: state verify: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	(*n)++;
	return -1;
}

static const struct snapinfo *find(const struct snapinfo *v, size_t n, uint64_t d)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].digest == d)
			return &v[i];
	return NULL;
}

/* What keep_snap is told and counts. */
#define SCAN_SAID 8	/* foreign names said one by one; the rest counted */

struct snap_scan {
	const char *fabric;
	unsigned foreign;	/* names that are neither state nor its leftovers */
	char said[SCAN_SAID][NAME_MAX + 1];	/* the smallest of them (strcmp), so
						 * every host says the same ones */
	char **tmps;		/* temporaries left by a publish, said after the scan */
	size_t ntmp, tmpcap;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int cmp_ptr_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keep n among the SCAN_SAID smallest foreign names seen so far. */
static void said_keep(struct snap_scan *scan, const char *n)
{
	unsigned have = scan->foreign < SCAN_SAID ? scan->foreign : SCAN_SAID, big = 0;

	if (strlen(n) > NAME_MAX)
		return; /* a readdir name never is */
	if (have < SCAN_SAID) {
		strcpy(scan->said[have], n);
		return;
	}
	for (unsigned i = 1; i < SCAN_SAID; i++)
		if (strcmp(scan->said[i], scan->said[big]) > 0)
			big = i;
	if (strcmp(n, scan->said[big]) < 0)
		strcpy(scan->said[big], n);
}

/* A fabric directory's snapshots: what else is there is said and passed
 * over (arg: a struct snap_scan). */
static int keep_snap(const struct dirent *e, void *arg)
{
	struct snap_scan *scan = arg;
	const char *fabric = scan->fabric, *n = e->d_name;
	char esc[1100];

	if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "current") || !strcmp(n, ".lock"))
		return 0;
	if (n[0] == '.' && strlen(n) > 4 && !strcmp(n + strlen(n) - 4, ".tmp")) {
		/* said in name order after the scan; said now if memory fails */
		if (scan->ntmp == scan->tmpcap) {
			size_t cap = scan->tmpcap ? 2 * scan->tmpcap : 8;
			char **v = realloc(scan->tmps, cap * sizeof(*v));

			if (v) {
				scan->tmps = v;
				scan->tmpcap = cap;
			}
		}
		if (scan->ntmp < scan->tmpcap && (scan->tmps[scan->ntmp] = strdup(n)))
			scan->ntmp++;
		else
			printf("%s: %s: a temporary file left by an interrupted publish "
			       "(harmless)\n", fabric, bot_log_esc(esc, sizeof(esc), n));
		return 0;
	}
	if (!bot_state_snap_name_ok(n)) {
		/* said after the scan, and only of a fabric's directory: in
		 * another directory they are one problem, not a line each */
		said_keep(scan, n);
		scan->foreign++;
		return 0;
	}
	return 1;
}

/* What keep_fabric learns of the top directory: the directory (to stat
 * an entry whose type readdir leaves unknown) and how many of its files
 * are neither state nor the product's own. */
struct top_scan {
	int dfd;
	unsigned others;
	int fabric_files;	/* a `current` or a snapshot: a fabric's directory */
};

/* An entry's type, asked of the file system where readdir does not say
 * (DT_UNKNOWN: XFS without ftype, some network file systems). */
static int entry_type(int dfd, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type;
	if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	if (S_ISREG(st.st_mode))
		return DT_REG;
	if (S_ISDIR(st.st_mode))
		return DT_DIR;
	return S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
}

/* The Prometheus textfiles ship and compact write when --metrics-dir is
 * the state directory itself (nccl-bot-ship.prom, nccl-bot-compact.prom). */
static int product_metrics(const char *n)
{
	size_t len = strlen(n);

	return !strncmp(n, "nccl-bot-", 9) && len > 14 && !strcmp(n + len - 5, ".prom");
}

/* A name of a step's spool directory, <job>.<restart>.<step>.<node>
 * (formats.md 13, "A step's spool directory under Slurm"): decimal job
 * and restart, a decimal or named step, a node. A fabric may be named so
 * too; only one without any state is judged by it. */
static int spool_leaf_name(const char *n)
{
	static const char *const named[] = { "batch.", "extern.", "interactive." };
	size_t k;

	for (int part = 0; part < 2; part++) {
		for (k = 0; n[k] >= '0' && n[k] <= '9'; k++)
			;
		if (!k || n[k] != '.')
			return 0;
		n += k + 1;
	}
	for (k = 0; n[k] >= '0' && n[k] <= '9'; k++)
		;
	if (k && n[k] == '.')
		return n[k + 1] != 0;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strncmp(n, named[i], strlen(named[i])))
			return n[strlen(named[i])] != 0;
	return 0;
}

/* The top directory's fabrics: the fleet's directories (formats.md
 * section 14) are not fabrics. Counts in the top_scan the regular files
 * that are neither hidden (the lease, the ledgers, a publish's temporary)
 * nor the product's metrics: a report's parts, a spool's files. Other
 * directories (lost+found, an admin's) are not counted: a state directory
 * on its own file system has them. */
static int keep_fabric(const struct dirent *e, void *arg)
{
	struct top_scan *t = arg;
	int fleet = !strcmp(e->d_name, "inbox") || !strcmp(e->d_name, "quarantine") ||
		    !strcmp(e->d_name, "held");
	int type = entry_type(t->dfd, e);
	struct stat st;

	/* a link to a file (site.yaml -> ...) is a file here; a link to a
	 * directory, or a dangling one, is taken for a fabric, which the
	 * store refuses (fabric directories are opened without following) */
	if (type == DT_LNK && fstatat(t->dfd, e->d_name, &st, 0) == 0 && !S_ISDIR(st.st_mode))
		type = DT_REG;
	if (bot_state_fabric_ok(e->d_name) && !fleet && type != DT_REG)
		return 1;
	if (type == DT_REG && (!strcmp(e->d_name, "current") || bot_state_snap_name_ok(e->d_name)))
		t->fabric_files = 1;
	/* a step's spool directory whose node name is no fabric name
	 * (capitals, 64+ characters) is a spool's too */
	if (!fleet && e->d_name[0] != '.' &&
	    ((type == DT_REG && !product_metrics(e->d_name)) ||
	     (type == DT_DIR && spool_leaf_name(e->d_name))))
		t->others++;
	return 0;
}

/* The ledger `current` names (formats.md 14): present and sound, else the
 * compactor refuses the fabric. Opened without making any directory. */
static void verify_ledger(const char *dir, const char *fabric, uint64_t digest,
			  unsigned *problems)
{
	char lpath[BOT_FABRIC_PATH_MAX + 80], err[BOT_LEDGER_ERR_MAX], lname[BOT_LEDGER_NAME_MAX];
	struct bot_ledger l;
	int ldir;

	snprintf(lpath, sizeof(lpath), "%s/.ledger/%s", dir, fabric);
	bot_ledger_file_name(digest, lname);
	ldir = open(lpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ldir < 0) {
		problem(problems, "%s: current's ledger %s: %s (a compactor refuses this fabric)",
			lpath, lname, strerror(errno));
		return;
	}
	if (bot_ledger_load(ldir, lpath, fabric, digest, &l, err, sizeof(err)) < 0)
		problem(problems, "current's ledger %s: %s (a compactor refuses this fabric)",
			lname, err);
	else {
		printf("%s: ledger %s: ok, %zu identities\n", fabric, lname, l.nids);
		bot_ledger_free(&l);
	}
	close(ldir);
}

/* A problem for path (dir/name, name may be NULL) writable by every user:
 * any user could then change what every job plans from; security.md says
 * no other user writes the state, its fabric directories or their files
 * (a `chmod -R 777` verified clean until 2026-12-05). */
static void writable_by_others(const char *dir, const char *name, const struct stat *st,
			       unsigned *problems)
{
	problem(problems, "%s%s%s: mode %04o: writable by every user, who could change what "
		"every job plans from (chmod o-w it)", dir, name ? "/" : "", name ? name : "",
		(unsigned)(st->st_mode & 07777));
}

/* A problem where fdir/name, a regular file, is not readable by every
 * user, or (writable_by_others) is writable by every user
 * user: every job's tuner reads `current` and the snapshot it names, so a
 * snapshot restored from a backup mode 0600 (then `rollback --to` it) left
 * every job on the prior while a root verify saw nothing wrong (until
 * 2026-12-05). Writers make them 0644 (formats.md section 12). */
static void unreadable_by_all(int fd, const char *fdir, const char *name, unsigned *problems)
{
	struct stat st;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return;
	if ((st.st_mode & 0444) != 0444)
		problem(problems, "%s/%s: mode %04o: not readable by every user, and every job "
			"reads it (chmod 0644 it)", fdir, name, (unsigned)(st.st_mode & 07777));
	else if (st.st_mode & S_IWOTH)
		writable_by_others(fdir, name, &st, problems);
}

/* Whether a load refused for err is a fabric without `current` whose
 * snapshot (named at err's start, fdir/snap-<16 hex>.nbs) is refused: the
 * per-snapshot checks say why. */
static int no_current_snap_refused(int fd, const char *fdir, const char *err)
{
	char cur[BOT_STATE_NAME_MAX], why[BOT_STATE_ERR_MAX], name[BOT_STATE_NAME_MAX];
	size_t n = strlen(fdir);

	if (bot_store_read_current(fd, fdir, cur, why, sizeof(why)) != 1)
		return 0;
	const size_t len = sizeof("snap-0123456789abcdef.nbs") - 1;

	if (strncmp(err, fdir, n) || err[n] != '/' || strlen(err + n + 1) <= len)
		return 0;
	memcpy(name, err + n + 1, len);
	name[len] = 0;
	return bot_state_snap_name_ok(name) && err[n + 1 + len] == ':';
}

/* Whether fdir's `current` holds a snapshot name that is there, as any
 * kind of entry (its snapshot could not be loaded: the per-snapshot checks
 * list the name and say why), the name into cur. */
static int current_names_listed(int fd, const char *fdir, char cur[BOT_STATE_NAME_MAX])
{
	char why[BOT_STATE_ERR_MAX];
	struct stat st;
	int ok = bot_store_read_current(fd, fdir, cur, why, sizeof(why)) == 0 &&
		 fstatat(fd, cur, &st, AT_SYMLINK_NOFOLLOW) == 0;

	if (!ok)
		cur[0] = 0;
	return ok;
}

/* One fabric; adds to *problems and *snaps, and sets *found when the
 * directory holds a `current` or a snapshot. */
static void verify_fabric(const char *dir, const char *fabric, unsigned *problems, size_t *snaps,
			  int *found)
{
	char fdir[BOT_FABRIC_PATH_MAX], err[BOT_STATE_ERR_MAX], cur[BOT_STATE_NAME_MAX] = "";
	char path[BOT_FABRIC_PATH_MAX + 64], esc[1100];
	struct snapinfo *info = NULL;
	char **names = NULL;
	size_t nnames = 0, ninfo = 0;
	struct bot_state s;
	struct snap_scan scan = { .fabric = fabric };
	struct stat dst, sst, lst;
	int fd, rc, rc2, e;

	fd = bot_fabricdir_open(dir, fabric, 0, fdir, err, sizeof(err));
	if (fd == -2) {
		problem(problems, "%s%s%s: no such fabric directory", dir, bot_path_sep(dir), fabric);
		return;
	}
	if (fd < 0) {
		problem(problems, "%s", err);
		return;
	}
	if (fstat(fd, &dst) < 0)
		dst.st_mode = 0755;	/* nothing said */
	if (dst.st_mode & S_IWOTH)
		writable_by_others(fdir, NULL, &dst, problems);
	/* every job opens the fabric's directory (root's verify passed a
	 * 0700 one until 2026-12-05); writers make it 0755 */
	if ((dst.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		problem(problems, "%s: mode %04o: not readable by every user, and every job reads "
			"the fabric's state in it (chmod 0755 it)", fdir,
			(unsigned)(dst.st_mode & 07777));
	/* the service account owns the state directory and compacts into
	 * every fabric's: one it cannot write, as one root made there (an older release's `state
	 * import` as root) stops every compaction of the fabric */
	if (stat(dir, &sst) == 0 && sst.st_uid != 0 && dst.st_uid != sst.st_uid &&
	    !(dst.st_gid == sst.st_gid && (dst.st_mode & S_IWGRP)) && !(dst.st_mode & S_IWOTH))
		problem(problems, "%s: owned by uid %u, the state directory by uid %u: its "
			"compactor (the state directory's owner) cannot write it (chown -R %u:%u "
			"it)", fdir, (unsigned)dst.st_uid, (unsigned)sst.st_uid,
			(unsigned)sst.st_uid, (unsigned)sst.st_gid);
	/* ... nor open its .lock (O_RDWR) in a directory it can write: one
	 * root made (an older release's root `state import`, the directory
	 * chowned alone) failed every compaction with ".lock: Permission
	 * denied" while verify said 0 problems (until 2026-12-05) */
	else if (sst.st_uid != 0 && fstatat(fd, ".lock", &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
		 S_ISREG(lst.st_mode) && lst.st_uid != sst.st_uid &&
		 !(lst.st_gid == sst.st_gid && (lst.st_mode & S_IWGRP)) && !(lst.st_mode & S_IWOTH))
		problem(problems, "%s/.lock: owned by uid %u, the state directory by uid %u: its "
			"compactor (the state directory's owner) cannot take the fabric's lock, and "
			"every compaction of the fabric fails (chown %u:%u it)", fdir,
			(unsigned)lst.st_uid, (unsigned)sst.st_uid, (unsigned)sst.st_uid,
			(unsigned)sst.st_gid);
	rc = bot_store_load(dir, fabric, &s, cur, err, sizeof(err));
	if (rc < 0 && current_names_listed(fd, fdir, cur)) {
		/* the snapshot it names is refused below, with the reason: one
		 * problem, not two; the chain is followed from it */
		printf("%s: current %s: its snapshot is refused (the problem is listed once, with "
		       "the snapshots)\n", fabric, cur);
	} else if (rc < 0 && no_current_snap_refused(fd, fdir, err)) {
		/* no `current`, and the one snapshot that would be the state
		 * is refused: listed once, below (it was two problems until
		 * 2026-12-05) */
		cur[0] = 0;
		printf("%s: no `current`, and its snapshot is refused (the problem is listed once, "
		       "with the snapshots)\n", fabric);
	} else if (rc < 0) {
		cur[0] = 0;
		problem(problems, "%s", err);
	} else if (rc == 1)
		printf("%s: no state yet (no `current`)\n", fabric);
	else if (bot_store_read_current(fd, fdir, path, err, sizeof(err)) == 1)
		printf("%s: no `current`: its one snapshot %s is the state (a first publish "
		       "interrupted before `current`; the next state add or compactor run completes "
		       "it): %zu contexts, %zu sources, round %" PRIu64 "\n", fabric, cur,
		       bot_kb_count(s.kb), s.nsources, s.rounds);
	else
		printf("%s: current %s: %zu contexts, %zu sources, round %" PRIu64 "\n", fabric, cur,
		       bot_kb_count(s.kb), s.nsources, s.rounds);
	if (rc == 0 && s.ledger)
		verify_ledger(dir, fabric, s.ledger, problems);
	unreadable_by_all(fd, fdir, "current", problems);
	if (rc >= 0)
		bot_state_free(&s);
	rc2 = bot_dir_names(fd, keep_snap, &scan, &names, &nnames);
	e = errno;
	if (scan.ntmp > 1)
		qsort(scan.tmps, scan.ntmp, sizeof(*scan.tmps), cmp_ptr_name);
	for (size_t i = 0; i < scan.ntmp; i++) {
		printf("%s: %s: a temporary file left by an interrupted publish (harmless)\n",
		       fabric, bot_log_esc(esc, sizeof(esc), scan.tmps[i]));
		free(scan.tmps[i]);
	}
	free(scan.tmps);
	if (rc2 < 0)
		problem(problems, "%s: cannot list the directory: %s", fdir, strerror(e));
	/* nothing of a state, only other files: a mistyped --state (a spool
	 * or report directory) would otherwise verify clean */
	else if (rc == 1 && !nnames && scan.foreign)
		problem(problems, "%s: no `current` and no snapshot, only %u other file(s): not "
			"a fabric's state directory (does --state name the state directory?)", fdir,
			scan.foreign);
	else if (rc == 1 && !nnames && spool_leaf_name(fabric))
		problem(problems, "%s: no `current` and no snapshot, and named as a step's spool "
			"directory (<job>.<restart>.<step>.<node>): not a fabric's state directory "
			"(does --state name the state directory?)", fdir);
	if (rc != 1 || nnames) {
		*found = 1;
		unsigned nsaid = scan.foreign < SCAN_SAID ? scan.foreign : SCAN_SAID;

		qsort(scan.said, nsaid, sizeof(scan.said[0]), cmp_name);
		for (unsigned i = 0; i < nsaid; i++)
			printf("%s: %s: not a snapshot name (ignored)\n", fabric,
			       bot_log_esc(esc, sizeof(esc), scan.said[i]));
		if (scan.foreign > SCAN_SAID)
			printf("%s: %u more names that are not snapshot names (ignored)\n", fabric,
			       scan.foreign - SCAN_SAID);
	}
	info = calloc(nnames ? nnames : 1, sizeof(*info));
	for (size_t i = 0; info && i < nnames; i++) {
		char want[BOT_STATE_NAME_MAX];
		uint8_t *b;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", fdir, names[i]);
		info[ninfo].digest = strtoull(names[i] + 5, NULL, 16);
		unreadable_by_all(fd, fdir, names[i], problems);
		if (bot_read_at(fd, names[i], path, &snap_rule, &b, &len, err, sizeof(err)) < 0) {
			problem(problems, "%s", err);
			ninfo++;
			continue;
		}
		bot_state_snap_name(b, len, want);
		if (strcmp(want, names[i]))
			problem(problems, "%s: its bytes' digest does not match its name (%s)", path,
				want);
		else if (bot_state_parse(path, b, len, &s, err, sizeof(err)) < 0)
			problem(problems, "%s", err);
		else {
			if (strcmp(s.fabric, fabric))
				problem(problems, "%s: holds fabric '%s', not '%s'", path, s.fabric,
					fabric);
			else
				info[ninfo].ok = 1;
			info[ninfo].parent = s.parent;
			bot_state_free(&s);
		}
		free(b);
		ninfo++;
	}
	*snaps += ninfo;
	for (size_t i = 0; i < ninfo; i++) {
		const struct snapinfo *p;

		if (!info[i].ok)
			continue;
		p = find(info, ninfo, info[i].parent);
		if (!info[i].parent)
			printf("%s: %s: ok, a first snapshot (no parent)\n", fabric, names[i]);
		else
			printf("%s: %s: ok, parent snap-%016" PRIx64 ".nbs (%s)\n", fabric, names[i],
			       info[i].parent, p ? "kept" : "removed");
	}
	if (cur[0] && info) {
		uint64_t dgst = strtoull(cur + 5, NULL, 16);
		size_t steps = 0;
		const struct snapinfo *p = find(info, ninfo, dgst);

		while (p && p->ok && p->parent && steps <= ninfo) {
			dgst = p->parent;
			p = find(info, ninfo, dgst);
			steps++;
		}
		if (steps > ninfo)
			problem(problems, "%s: the parent chain from current loops", fdir);
		else if (!p)
			printf("%s: chain from current: %zu snapshot(s) kept, then snap-%016" PRIx64
			       ".nbs (removed)\n", fabric, steps, dgst);
		else if (p->ok)
			printf("%s: chain from current: %zu snapshot(s) kept, ending at the fabric's "
			       "first snapshot\n", fabric, steps + 1);
		else
			printf("%s: chain from current: broken at snap-%016" PRIx64 ".nbs (refused "
			       "above)\n", fabric, dgst);
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(info);
	close(fd);
}

int bot_state_verify(const struct bot_state_opts *o)
{
	unsigned problems = 0, nfab = 0;
	struct top_scan top = { -1, 0, 0 };
	struct stat dst;
	size_t snaps = 0;
	int found = 0;
	char **fabs = NULL;
	size_t n = 0;

	if (o->nargs) {
		fprintf(stderr, "nccl-bot: state verify: unexpected argument '%s'\n", o->args[0]);
		return 2;
	}
	if (o->fabric) {
		verify_fabric(o->dir, o->fabric, &problems, &snaps, &found);
		nfab = 1;
	} else {
		int dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0) {
			fprintf(stderr, "nccl-bot: state verify: %s: %s\n", o->dir, strerror(errno));
			return 1;
		}
		/* a listing cut short is a problem; the fabrics read are verified */
		if (fstat(dfd, &dst) < 0)
			dst.st_mode = 0755;	/* nothing said */
		if (dst.st_mode & S_IWOTH)
			writable_by_others(o->dir, NULL, &dst, &problems);
		if (!(dst.st_mode & S_IXOTH))
			problem(&problems, "%s: mode %04o: not searchable by every user, and every "
				"job reads the fabrics' state under it (chmod o+x it)", o->dir,
				(unsigned)(dst.st_mode & 07777));
		top.dfd = dfd;
		if (bot_dir_names(dfd, keep_fabric, &top, &fabs, &n) < 0)
			problem(&problems, "%s: cannot list the directory: %s", o->dir,
				strerror(errno));
		close(dfd);
		for (size_t i = 0; i < n; i++) {
			verify_fabric(o->dir, fabs[i], &problems, &snaps, &found);
			free(fabs[i]);
		}
		free(fabs);
		nfab = (unsigned)n;
		/* no fabric's state anywhere, and files of something else at
		 * the top: a report's or a spool's directory given as --state
		 * (verified clean until 2026-12-03) */
		if (!found && top.fabric_files)
			problem(&problems, "%s: holds a fabric's `current` or snapshot itself: a "
				"fabric's directory, not the state directory (give its parent as "
				"--state, and its name as --fabric)", o->dir);
		else if (!found && top.others)
			problem(&problems, "%s: no fabric's state, and %u other file(s) at its top "
				"(a report's or a spool's files?): not a state directory (does "
				"--state name the state directory?)", o->dir, top.others);
	}
	if (!nfab)
		printf("%s: no fabric directory (a state directory before its first `state "
		       "add`, or --state names another directory)\n", o->dir);
	printf("state verify: %u fabric(s), %zu snapshot(s), %u problem(s)\n", nfab, snaps,
	       problems);
	return problems ? 1 : 0;
}
