/*
 * cmd_state.c - `nccl-bot state`: per-fabric learned state outside Slurm
 * (doc/formats.md section 12).
 *
 *   nccl-bot state add    --state DIR --fabric F SPOOL...   merge one job's spool files
 *   nccl-bot state show   --state DIR --fabric F | FILE    what was learned, as YAML
 *   nccl-bot state export --state DIR --fabric F [-o FILE] the state as YAML (section 16)
 *   nccl-bot state import --state DIR --fabric F FILE      ... published as a new snapshot
 *   nccl-bot state verify|rollback|quarantine              cmd_state_verify.c, cmd_state_admin.c
 *
 * This file parses the options of every action. `add` is the merge of one
 * job (learn/merge.h): a read-modify-publish cycle under the fabric's lock;
 * this file says what happened. show, export and import go through
 * learn/stateyaml.h. `nccl-bot env --state` compiles step tables from what
 * `add` and `import` publish.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/readall.h"
#include "common/state.h"
#include "common/writeall.h"
#include "learn/lock.h"
#include "learn/merge.h"
#include "learn/statesvg.h"
#include "learn/stateyaml.h"
#include "learn/store.h"
#include "tools/cmd.h"

static void state_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot state add --state DIR --fabric F [--partial] SPOOL...\n"
		"       nccl-bot state show --state DIR --fabric F [--svg FILE]\n"
		"       nccl-bot state show [--svg FILE] SNAPSHOT\n"
		"       nccl-bot state export --state DIR --fabric F [-o FILE]\n"
		"       nccl-bot state export SNAPSHOT [-o FILE]\n"
		"       nccl-bot state import --state DIR --fabric F [--as F] FILE\n"
		"       nccl-bot state verify --state DIR [--fabric F]\n"
		"       nccl-bot state rollback --state DIR --fabric F [--to SNAP | --steps N]\n"
		"       nccl-bot state quarantine --state DIR [list | show NAME | release NAME |\n"
		"                                 drop NAME]\n"
		"\n"
		"  add         merge one job's spool files (FILE or DIR of *.spool, all of the\n"
		"              job's ranks at once) into the fabric's state and publish a new\n"
		"              snapshot; files merged before are skipped, so adding a job twice\n"
		"              is a no-op; a job with a file that fails validation, or with some\n"
		"              files merged before, is refused (exit status 1): a job is merged\n"
		"              whole, once; paths holding no *.spool file are an error\n"
		"  show        what the fabric's current snapshot (or a snapshot FILE) learned,\n"
		"              as YAML: per context the best arm and its samples, AUTO's arm and\n"
		"              AUTO's estimated loss against the best (not for import);\n"
		"              with --svg, that loss drawn instead: per collective, by message\n"
		"              size, one line per node count\n"
		"  export      the fabric's current state (or a SNAPSHOT file) as YAML (stdout,\n"
		"              or FILE written whole)\n"
		"  import      check a YAML export and publish it as the fabric's new snapshot\n"
		"              (its parent the current one); another fabric's export only with\n"
		"              --as F\n"
		"  verify      check every fabric's current snapshot and every snapshot kept\n"
		"              (digest, contents, fabric, parent chain); exit status 1 names\n"
		"              each problem\n"
		"  rollback    point the fabric's current back along its parent chain: to the\n"
		"              kept snapshot SNAP (snap-<digest>.nbs) or N snapshots back\n"
		"              (default 1)\n"
		"  quarantine  deltas the compactor refused (DIR/quarantine): list them (default),\n"
		"              show one's reason, release one back to DIR/inbox, or drop one\n"
		"\n"
		"  --state DIR    state directory (default $NCCL_BOT_STATE); DIR/F/ is created\n"
		"  --fabric F     fabric name, [a-z0-9][a-z0-9._-]{0,63}\n"
		"  --partial      add: merge the valid, new files of a job anyway (their\n"
		"                 collectives lose the minimum over the other files' ranks)\n"
		"  -o, --output FILE   export: write FILE (temporary file, fsync, rename);\n"
		"                 - is standard output (./- names a file -)\n"
		"  --svg FILE     show: write the picture to FILE (written whole, as -o;\n"
		"                 - is standard output)\n"
		"  --as F         import: the export's fabric may differ; it becomes F\n"
		"  --to SNAP      rollback: the snapshot to make current\n"
		"  --steps N      rollback: how many snapshots back (1..1000000)\n");
}

static int state_add(const char *dir, const char *fabric, const char *const *paths, size_t n,
		     int partial)
{
	struct bot_merge_req req = { dir, fabric, paths, n, partial, NULL };
	struct bot_log log = { bot_cmd_log, "state add" };
	struct bot_merge_result res;
	int rc = bot_merge_job(&req, &res, &log);

	switch (res.outcome) {
	case BOT_MERGE_PUBLISHED:
		fprintf(stderr, "nccl-bot: state add: %s: merged %zu spool file(s) (%zu already "
			"merged, %zu rejected), %" PRIu64 " collectives after the minimum over "
			"ranks; %zu contexts, round %" PRIu64 "; published %s%s%s/%s\n", fabric,
			res.merged, res.merged_before, res.rejected, res.collectives, res.contexts,
			res.round, dir, bot_path_sep(dir), fabric, res.snapshot);
		return 0;
	case BOT_MERGE_NOTHING_NEW:
		fprintf(stderr, "nccl-bot: state add: %s: nothing new (%zu file(s) read, %zu "
			"already merged, %zu rejected); %s%s\n", fabric, res.files,
			res.merged_before, res.rejected,
			res.snapshot[0] ? res.snapshot : "no snapshot yet",
			res.snapshot[0] ? " unchanged" : "");
		return res.rejected ? 1 : 0;
	case BOT_MERGE_REFUSED:
		/* what happened to the valid files (none merged) and the remedy,
		 * only where there are valid new files to merge */
		/* the valid new files a partial merge would take (a second
		 * copy of one within the batch is not counted) */
		if (res.valid_new && res.rejected)
			fprintf(stderr, "nccl-bot: state add: %s: nothing merged: %zu file(s) "
				"rejected; --partial merges the %zu valid new one(s)\n", fabric,
				res.rejected, res.valid_new);
		else if (res.valid_new)
			fprintf(stderr, "nccl-bot: state add: %s: nothing merged: %zu file(s) "
				"merged before; --partial merges the %zu new one(s)\n", fabric,
				res.merged_before, res.valid_new);
		return 1;
	case BOT_MERGE_FAILED:
		break;
	}
	return rc < 0 ? 1 : 0;
}

/* Load the snapshot FILE when given, else the fabric's current one (its
 * name into snap), for show/export: 0, or the exit status. */
static int load_state(const char *verb, const char *dir, const char *fabric, const char *file,
		      struct bot_state *s, char snap[BOT_STATE_NAME_MAX])
{
	char err[BOT_STATE_ERR_MAX];
	int rc;

	if (file) {
		if (bot_state_read_file(file, s, err, sizeof(err)) < 0) {
			fprintf(stderr, "nccl-bot: state %s: %s\n", verb, err);
			return 1;
		}
		return 0;
	}
	rc = bot_store_load(dir, fabric, s, snap, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state %s: %s\n", verb, err);
		return 1;
	}
	if (rc == 1) {
		fprintf(stderr, "nccl-bot: state %s: %s%s%s: no state yet (no `current`)\n", verb,
			dir, bot_path_sep(dir), fabric);
		bot_state_free(s);
		return 1;
	}
	return 0;
}

/* Write text to stdout; 0 or 1. */
static int put_stdout(const char *verb, const char *text, size_t len)
{
	if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
		fprintf(stderr, "nccl-bot: state %s: standard output: %s\n", verb, strerror(errno));
		return 1;
	}
	return 0;
}

/* The picture of `show --svg` written to svg: 0 or 1. */
static int show_svg(const struct bot_state *s, const char *snap, const char *file,
		    const char *svg)
{
	struct bot_statesvg_info in;
	char err[BOT_STATE_ERR_MAX], *text;
	size_t len;
	int rc, stdout_;

	if (bot_statesvg_loss(s, snap, file, &text, &len, &in, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: state show: %s: %s\n", svg, err);
		return 1;
	}
	/* - is standard output, as for -o (it wrote a file named - until
	 * 2026-12-05, though --help says "as -o"); ./- names a file - */
	stdout_ = !strcmp(svg, "-");
	rc = stdout_ ? put_stdout("show", text, len) :
		       bot_cmd_write_file("state show", "--svg", svg, "the picture", text, len);
	free(text);
	if (rc == 0)
		fprintf(stderr, "nccl-bot: state show: %s: %zu chart(s), %zu line(s), %zu "
			"context(s) with a known loss%s\n", stdout_ ? "standard output" : svg,
			in.charts, in.lines, in.points,
			in.dropped ? " (some node counts left out: at most 64 lines a chart)" : "");
	return rc;
}

static int state_show(const char *dir, const char *fabric, const char *file, const char *svg)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "", *text;
	size_t len;
	int rc;

	if ((rc = load_state("show", dir, fabric, file, &s, snap)) != 0)
		return rc;
	if (svg) {
		rc = show_svg(&s, snap, file, svg);
		bot_state_free(&s);
		return rc;
	}
	rc = bot_stateyaml_show(&s, snap, file, &text, &len, err, sizeof(err));
	bot_state_free(&s);
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state show: %s\n", err);
		return 1;
	}
	rc = put_stdout("show", text, len);
	free(text);
	return rc;
}

/* path's directory, as the user wrote it ("." for a bare name) */
static void out_dir(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	snprintf(dir, cap, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
		 slash ? path : ".");
}

/* whether directory p is a state directory: its compactor's .lease, or a
 * shipped-into inbox/ beside a quarantine/ (a compactor ran) */
static int is_state_dir(char *p, size_t cap)
{
	size_t n = strlen(p);
	struct stat st;
	int rc;

	if (n + sizeof("/quarantine") > cap)
		return 0;
	strcpy(p + n, "/.lease");
	rc = lstat(p, &st) == 0;
	strcpy(p + n, "/inbox");
	if (!rc && lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
		strcpy(p + n, "/quarantine");
		rc = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
	}
	p[n] = 0;
	return rc;
}

/* what of a state directory's own directory dir (as the user wrote it) is:
 * "ledger" for its .ledger or a .ledger/<fabric>, "deltas" for its inbox,
 * quarantine or held; NULL for none. The last or the one but last
 * component of dir's real path is looked at, and the directory holding it
 * must be a state directory. Until 2026-12-05 the first "/.ledger" anywhere
 * in the path was: a user's own ~/.ledger/reports/x.svg was refused, a
 * state directory under a .ledgers/ directory had its ledger replaced,
 * and a held or quarantined delta was replaced, all exit 0. */
static const char *state_own_dir(const char *dir)
{
	char *real = realpath(dir, NULL), *sl, *buf;
	const char *what = NULL;
	size_t cap;

	if (!real)
		return NULL;
	cap = strlen(real) + 16;
	buf = malloc(cap);
	if (!buf) {
		free(real);
		return NULL;
	}
	for (int up = 0; up < 2 && (sl = strrchr(real, '/')) != NULL && sl != real; up++) {
		const char *w = !strcmp(sl + 1, ".ledger") ? "ledger" :
				up == 0 && (!strcmp(sl + 1, "inbox") || !strcmp(sl + 1, "quarantine") ||
					    !strcmp(sl + 1, "held")) ? "deltas" : NULL;

		*sl = 0;
		if (w) {
			snprintf(buf, cap, "%s", real);
			what = is_state_dir(buf, cap) ? w : NULL;
			break;
		}
	}
	free(buf);
	free(real);
	return what;
}

int bot_cmd_out_problem(const char *path, char *why, size_t cap)
{
	char dir[4096];
	const char *own;
	struct stat st;

	if (!*path)
		return snprintf(why, cap, "an empty name, not a file name"), -1;
	if (path[strlen(path) - 1] == '/')
		return snprintf(why, cap, "a directory, not a file name"), -1;
	out_dir(path, dir, sizeof(dir));
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT)
			snprintf(why, cap, "directory %s does not exist", dir);
		else if (errno == ENOTDIR)
			snprintf(why, cap, "%s is not a directory", dir);
		else
			snprintf(why, cap, "directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return snprintf(why, cap, "%s is not a directory", dir), -1;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return snprintf(why, cap, "is a directory"), -1;
	/* a fabric's own files (its directory holds `current`): an export
	 * written over `current` or a snapshot replaced the learned state,
	 * exit 0 (until 2026-12-05) */
	{
		const char *sl = strrchr(path, '/'), *base = sl ? sl + 1 : path;
		char cur[sizeof(dir) + 16];

		snprintf(cur, sizeof(cur), "%s/current", dir);
		if ((!strcmp(base, "current") || !strcmp(base, ".lock") ||
		     bot_state_snap_name_ok(base)) &&
		    lstat(cur, &st) == 0 && S_ISREG(st.st_mode))
			return snprintf(why, cap, "a fabric's own state file (%s holds `current`): "
					"it would replace the learned state; write it elsewhere",
					dir), -1;
		/* a snapshot there is one also where `current` is missing (an
		 * interrupted first publish, whose lone snapshot is the
		 * fabric's state): the export replaced it, exit 0 (until
		 * 2026-12-05) */
		if (bot_state_snap_name_ok(base) && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			return snprintf(why, cap, "a snapshot (a fabric's own state file): it would "
					"replace the learned state; write it elsewhere"), -1;
		/* the state directory's compactor lease: a compactor running
		 * keeps its flock on the file replaced, and the next one runs
		 * beside it */
		snprintf(cur, sizeof(cur), "%s/inbox", dir);
		if (!strcmp(base, ".lease") && lstat(cur, &st) == 0 && S_ISDIR(st.st_mode))
			return snprintf(why, cap, "the compactor's lease (%s is a state directory): "
					"a running compactor would keep its lock on the file "
					"replaced and the next would run beside it; write it "
					"elsewhere", dir), -1;
	}
	/* the compactor's ledger (.ledger/ and .ledger/<fabric>/: the ledger
	 * files and provenance.log): a ledger file replaced by an export left
	 * the fabric's `current` naming a ledger that no longer reads, exit 0
	 * (until 2026-12-05) */
	own = state_own_dir(dir);
	if (own && !strcmp(own, "ledger"))
		return snprintf(why, cap, "inside a state directory's ledger (.ledger): it "
				"would replace the compactor's own files; write it "
				"elsewhere"), -1;
	if (own)
		return snprintf(why, cap, "in a state directory's inbox, quarantine or held: it "
				"would replace a delta; write it elsewhere"), -1;
	/* FILE is replaced by a rename: a device (-o /dev/null), a FIFO or a
	 * symbolic link (-o /dev/stdout) would be replaced by a regular file,
	 * not written to; only a regular file (or none) is replaced */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return snprintf(why, cap, "%s, not a regular file (it would be replaced, not "
			       "written to)",
			       S_ISLNK(st.st_mode) ? "a symbolic link" :
			       S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
			       S_ISFIFO(st.st_mode) ? "a FIFO" : "a socket"), -1;
	return 0;
}

/* FILE written whole: FILE.tmp-<pid> created O_EXCL in FILE's directory,
 * fsynced, renamed over FILE, the directory fsynced (common/writeall.h; the
 * mode 0644 through the umask). 0 or 1. (cmd.h) */
int bot_cmd_write_file(const char *cmd, const char *opt, const char *path, const char *what,
		       const char *text, size_t len)
{
	char tmp[4200], dir[4096], err[2 * sizeof(tmp) + 256];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct bot_write_rule r = { .mode = 0644, .sync_dir = 1, .tmp = tmp };
	int dfd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid()) >= sizeof(tmp)) {
		fprintf(stderr, "nccl-bot: %s: %s %s: path too long; %s was not written\n", cmd,
			opt, path, what);
		return 1;
	}
	/* the usual mistakes named before a temporary file is made (else a
	 * directory at path reads "cannot rename FILE.tmp-PID to FILE") */
	if (bot_cmd_out_problem(path, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: %s: %s %s: %s; %s was not written\n", cmd, opt, path,
			err, what);
		return 1;
	}
	out_dir(path, dir, sizeof(dir));
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", base, (long)getpid());
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "nccl-bot: %s: %s %s: directory %s: %s; %s was not written\n", cmd,
			opt, path, dir, strerror(errno), what);
		return 1;
	}
	/* messages name the files as the user wrote them: a bare FILE alone */
	rc = bot_write_whole_at(dfd, slash ? dir : NULL, base, text, len, &r, err, sizeof(err));
	close(dfd);
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: %s: %s %s: %s; %s was not written\n", cmd, opt, path, err,
			what);
		return 1;
	}
	return 0;
}

static int state_export(const char *dir, const char *fabric, const char *file, const char *out)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "", *text;
	size_t len;
	int rc;

	if ((rc = load_state("export", dir, fabric, file, &s, snap)) != 0)
		return rc;
	if (file) {
		dir = file;
		fabric = s.fabric;
	}
	rc = bot_stateyaml_export(&s, &text, &len, err, sizeof(err));
	bot_state_free(&s);
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state export: %s: %s\n", dir, err);
		return 1;
	}
	rc = out ? bot_cmd_write_file("state export", "-o", out, "the export", text, len) :
		   put_stdout("export", text, len);
	free(text);
	if (rc == 0 && out && !file)
		fprintf(stderr, "nccl-bot: state export: %s: %s of %s%s%s\n", out, snap, dir,
			bot_path_sep(dir), fabric);
	return rc;
}

/* Whether a and b encode the same, their parents aside (an import of what
 * is current publishes nothing, as `state add` of nothing new). */
static int same_state(const struct bot_state *a, const struct bot_state *b)
{
	struct bot_state t = *a;
	char err[BOT_STATE_ERR_MAX];
	uint8_t *ea, *eb;
	size_t la, lb;
	int same;

	t.parent = b->parent;
	if (bot_state_encode(&t, &ea, &la, err, sizeof(err)) < 0)
		return 0;
	if (bot_state_encode(b, &eb, &lb, err, sizeof(err)) < 0) {
		free(ea);
		return 0;
	}
	same = la == lb && !memcmp(ea, eb, la);
	free(ea);
	free(eb);
	return same;
}

/* FILE (YAML, formats.md 16) published as the fabric's next snapshot under
 * its lock: its parent the current one, the compactor's ledger carried on. */
static int state_import(const char *dir, const char *fabric, const char *as, const char *file)
{
	struct bot_state in, cur;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], out[BOT_STATE_NAME_MAX];
	int lk, rc;

	if (bot_stateyaml_import_file(file, &in, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: state import: %s\n", err);
		return 1;
	}
	if (strcmp(in.fabric, fabric) && !(as && !strcmp(as, fabric))) {
		fprintf(stderr, "nccl-bot: state import: %s holds fabric '%s', not '%s' (pass --as "
			"%s to import it as %s)\n", file, in.fabric, fabric, fabric, fabric);
		bot_state_free(&in);
		return 1;
	}
	strcpy(in.fabric, fabric);
	lk = bot_lock_fabric(dir, fabric, 1, err, sizeof(err));
	if (lk < 0) {
		fprintf(stderr, "nccl-bot: state import: %s\n", err);
		bot_state_free(&in);
		return 1;
	}
	if (bot_store_complete(dir, fabric, snap, err, sizeof(err)) > 0)
		fprintf(stderr, "nccl-bot: state import: %s%s%s: completed an interrupted first "
			"publish: `current` now names %s\n", dir, bot_path_sep(dir), fabric, snap);
	rc = bot_store_load(dir, fabric, &cur, snap, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state import: %s\n", err);
		bot_lock_release(lk);
		bot_state_free(&in);
		return 1;
	}
	/* the new snapshot's parent is the current one; the compactor's ledger
	 * goes on with it (it is the fabric's, not the export's) */
	in.ledger = rc == 0 ? cur.ledger : 0;
	if (rc == 0 && same_state(&in, &cur)) {
		bot_lock_release(lk);
		fprintf(stderr, "nccl-bot: state import: %s: unchanged: it holds what the current "
			"%s%s%s/%s holds; nothing published\n", file, dir, bot_path_sep(dir), fabric,
			snap);
		bot_state_free(&cur);
		bot_state_free(&in);
		return 0;
	}
	in.parent = rc == 0 ? bot_state_snap_digest(snap) : 0;
	bot_state_free(&cur);
	rc = bot_store_publish(dir, &in, out, err, sizeof(err));
	bot_lock_release(lk);
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state import: %s\n", err);
		bot_state_free(&in);
		return 1;
	}
	fprintf(stderr, "nccl-bot: state import: %s: %zu contexts; published %s%s%s/%s (parent "
		"%s)\n", file, bot_kb_count(in.kb), dir, bot_path_sep(dir), fabric, out,
		snap[0] && in.parent ? snap : "none");
	bot_state_free(&in);
	return 0;
}

int bot_cmd_state(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "svg", required_argument, NULL, 'g' },
		{ "as", required_argument, NULL, 'a' },
		{ "to", required_argument, NULL, 't' },
		{ "steps", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const verbs[] = { "add", "show", "export", "import", "verify",
					     "rollback", "quarantine" };
	struct bot_state_opts o;
	const char *verb, *svg = NULL;
	uint64_t v;
	int c, known = 0, e;

	memset(&o, 0, sizeof(o));
	o.dir = getenv("NCCL_BOT_STATE");
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		state_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = argv[1];
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		known |= !strcmp(verb, verbs[i]);
	if (!known) {
		fprintf(stderr, "nccl-bot: state: unknown action '%s' (add, show, export, import, "
			"verify, rollback or quarantine)\n", verb);
		return 2;
	}
	{
		char name[32];

		snprintf(name, sizeof(name), "state %s", verb);
		bot_cmd_progname(argv + 1, name);
	}
	if (o.dir && !*o.dir)
		o.dir = NULL;
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.dir = optarg;
			break;
		case 'f':
			o.fabric = optarg;
			break;
		case 'P':
			o.partial = 1;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: state: -o wants a file name (or - for "
					"standard output)\n");
				return 2;
			}
			o.out = strcmp(optarg, "-") ? optarg : NULL;	/* - is stdout */
			break;
		case 'g':
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: state: --svg wants a file name\n");
				return 2;
			}
			svg = optarg;
			break;
		case 'a':
			o.as = optarg;
			break;
		case 't':
			o.to = optarg;
			break;
		case 'n':
			e = bot_set_range(optarg, 1, 1000000, &v);
			if (e < 0)
				return bot_cmd_bad_value("state rollback", "--steps", optarg,
							 BOT_SET_NUMBER, "from 1 to 1000000", e, 0);
			o.steps = (unsigned long)v;
			break;
		case 'h':
			state_usage(stdout);
			return 0;
		default:
			state_usage(stderr);
			return 2;
		}
	}
	o.nargs = argc - 1 - optind;
	o.args = argv + 1 + optind;
	{
		/* an option of another action, named with its action */
		const char *opt = o.partial && strcmp(verb, "add") ? "--partial is add's" :
				  o.out && strcmp(verb, "export") ? "-o is export's" :
				  o.as && strcmp(verb, "import") ? "--as is import's" :
				  svg && strcmp(verb, "show") ? "--svg is show's" :
				  o.to && strcmp(verb, "rollback") ? "--to is rollback's" :
				  o.steps && strcmp(verb, "rollback") ? "--steps is rollback's" : NULL;

		if (opt) {
			fprintf(stderr, "nccl-bot: state %s: %s option (see `nccl-bot state "
				"--help`)\n", verb, opt);
			return 2;
		}
	}
	/* an empty --state names nothing (it read ": No such file or
	 * directory"); an empty NCCL_BOT_STATE is an unset one */
	if (o.dir && !*o.dir) {
		if (o.dir != getenv("NCCL_BOT_STATE")) {
			fprintf(stderr, "nccl-bot: state %s: --state: empty (leave the option out for "
				"$NCCL_BOT_STATE)\n", verb);
			return 2;
		}
		o.dir = NULL;
	}
	if (o.as && !o.fabric)
		o.fabric = o.as;
	if (o.as && strcmp(o.as, o.fabric)) {
		fprintf(stderr, "nccl-bot: state import: --as %s and --fabric %s differ\n", o.as,
			o.fabric);
		return 2;
	}
	if (o.fabric && !bot_state_fabric_ok(o.fabric)) {
		fprintf(stderr, "nccl-bot: state: --fabric '%s': want [a-z0-9][a-z0-9._-]{0,63}\n",
			o.fabric);
		return 2;
	}
	/* the state directory's own directories: verify --fabric inbox told
	 * the admin to make the compactor's 0750 inbox world-readable
	 * ("chmod 0755 it"), show and export said "no state yet" (until
	 * 2026-12-05) */
	if (o.fabric && bot_state_fabric_reserved(o.fabric)) {
		fprintf(stderr, "nccl-bot: state: --fabric '%s': not a fabric name "
			BOT_STATE_RESERVED_WHY "\n", o.fabric);
		return 2;
	}
	if (!strcmp(verb, "show")) {
		if (o.nargs == 1 && !o.fabric)
			return state_show(NULL, NULL, o.args[0], svg);
		if (o.nargs == 0 && o.fabric && o.dir)
			return state_show(o.dir, o.fabric, NULL, svg);
		fprintf(stderr, "nccl-bot: state show: give a snapshot FILE, or --fabric F with "
			"--state DIR (or NCCL_BOT_STATE)\n");
		return 2;
	}
	if (!strcmp(verb, "verify") || !strcmp(verb, "quarantine")) {
		if (!o.dir) {
			fprintf(stderr, "nccl-bot: state %s: needs --state DIR (or NCCL_BOT_STATE)\n",
				verb);
			return 2;
		}
		return !strcmp(verb, "verify") ? bot_state_verify(&o) : bot_state_quarantine(&o);
	}
	if (!strcmp(verb, "export") && o.nargs == 1 && !o.fabric)
		return state_export(NULL, NULL, o.args[0], o.out);
	if (!o.dir || !o.fabric) {
		fprintf(stderr, "nccl-bot: state %s: needs --state DIR (or NCCL_BOT_STATE) and "
			"--fabric F\n", verb);
		return 2;
	}
	if (!strcmp(verb, "export") || !strcmp(verb, "rollback")) {
		if (o.nargs) {
			fprintf(stderr, "nccl-bot: state %s: unexpected argument '%s'\n", verb,
				o.args[0]);
			return 2;
		}
		return !strcmp(verb, "export") ? state_export(o.dir, o.fabric, NULL, o.out) :
		       bot_state_rollback(&o);
	}
	if (!strcmp(verb, "import")) {
		if (o.nargs != 1) {
			fprintf(stderr, "nccl-bot: state import: give one YAML FILE (from `state "
				"export`)\n");
			return 2;
		}
		return state_import(o.dir, o.fabric, o.as, o.args[0]);
	}
	if (o.nargs < 1) {
		fprintf(stderr, "nccl-bot: state add: needs --state DIR (or NCCL_BOT_STATE), "
			"--fabric F and the job's spool files or directories\n");
		return 2;
	}
	return state_add(o.dir, o.fabric, (const char *const *)o.args, (size_t)o.nargs, o.partial);
}
