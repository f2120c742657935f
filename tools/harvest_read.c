/*
 * harvest_read.c - nccl-bot-harvest-read, the reading half of a harvest in
 * a process of its own (doc/formats.md, "The harvest helper").
 *
 *   nccl-bot-harvest-read UID GID GROUPS DIR [KEY=VALUE...]
 *
 * spank_nccl_bot.so starts it with posix_spawn from slurmstepd (root, many
 * threads: a fork without exec could hang on a lock another thread held)
 * with the stream's pipe as stdout, /dev/null as stdin and stderr, and an
 * empty environment. Before it reads anything it becomes the job's user
 * for good: every descriptor past 2 closed, the groups GROUPS names (a
 * comma-separated list of gids, as Slurm resolved the job's; "-": the
 * user database's for UID, else GID alone), then gid and uid (real, effective and
 * saved), no new privileges, rlimits (address space, CPU time, file size,
 * descriptors, no core). Then learn/harvest.h's bot_harvest_read lists DIR
 * and writes the unit stream on stdout: spool files owned by UID only. A
 * setup that fails writes the stream's error unit (code 3) and exits 3;
 * the parent (bot_harvest_collect) trusts nothing it says anyway.
 *
 * With report=TEMPLATE (and job=, step=, node=, restart=, nodes=, tasks=,
 * leaves=, info=, token=: the step's facts from the parent, formats.md
 * section 17; job= is "J+K" for a heterogeneous job's component K, whose
 * part goes into the leader J's directory)
 * it then also writes this node's report part, as the user, once the
 * stream is out and its pipe closed: the parent has its delta by then and
 * waits for this process only within its fixed bound. For the batch step
 * it appends the one-line summary to the script's output, the path its
 * task recorded in DIR/stdout.path (spank/remote.c), when that is a
 * regular file of the user's.
 *
 * Exit status: 0 the stream was written, 1 writing it failed, 2 usage,
 * 3 the setup failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/le.h"
#include "common/readall.h"
#include "learn/harvest.h"
#include "learn/report.h"

#define HELPER_AS (1024ull << 20)	/* a spool file (<= ~160 MiB) and the listing */
#define HELPER_CPU_S 10
#define HELPER_NOFILE 64
#define HELPER_GROUPS 1024

static int parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v >= 0xffffffffull)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };

	return setrlimit(res, &rl);
}

/* "g1,g2,...": 0 with groups[0..*n), or -1 */
static int parse_groups(const char *s, gid_t *groups, int *n)
{
	*n = 0;
	while (*s) {
		char one[16];
		size_t len = strcspn(s, ",");
		uint32_t g;

		if (!len || len >= sizeof(one) || *n >= HELPER_GROUPS)
			return -1;
		memcpy(one, s, len);
		one[len] = 0;
		if (parse_id(one, &g) < 0)
			return -1;
		groups[(*n)++] = (gid_t)g;
		s += len;
		if (*s == ',' && !*++s)
			return -1;
	}
	return 0;
}

/* Become uid:gid with the job's groups, for good. */
static int drop(uid_t uid, gid_t gid, const gid_t *given, int ngiven)
{
	gid_t groups[HELPER_GROUPS];
	int ng = HELPER_GROUPS;
	struct passwd *pw;

	if (getuid() == 0 || geteuid() == 0) {
		if (ngiven >= 0) {
			if (setgroups((size_t)ngiven, given) < 0)
				return -1;
		} else {
			pw = getpwuid(uid);
			if (!pw || getgrouplist(pw->pw_name, gid, groups, &ng) < 0) {
				groups[0] = gid;
				ng = 1;
			}
			if (setgroups((size_t)ng, groups) < 0)
				return -1;
		}
	}
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	/* no way back */
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -1;
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
		return -1;
	return 0;
}

/* An AddressSanitizer build (CI's) reserves terabytes of address space for
 * its shadow: an address-space limit would fail its every later mapping.
 * Only there is RLIMIT_AS left alone. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

/* RLIMIT_FSIZE: nothing is written while the spool is read (soft 0); the
 * report part afterwards raises it (the hard limit stays the user's). */
static int fsize(rlim_t soft)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) < 0)
		return -1;
	rl.rlim_cur = soft > rl.rlim_max ? rl.rlim_max : soft;
	return setrlimit(RLIMIT_FSIZE, &rl);
}

static int setup(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	closefrom(3);
	if (drop(uid, gid, groups, ngroups) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if ((!ASAN_BUILD && limit(RLIMIT_AS, HELPER_AS) < 0) || limit(RLIMIT_CPU, HELPER_CPU_S) < 0 ||
	    fsize(0) < 0 || limit(RLIMIT_NOFILE, HELPER_NOFILE) < 0 ||
	    limit(RLIMIT_CORE, 0) < 0)
		return -1;
	return 0;
}

/* The stream's X unit, code 3: the child's setup failed. */
static void setup_failed(int e)
{
	uint8_t u[BOT_HARVEST_UNIT] = { 'X' };

	bot_le_put16(u + 2, 3);
	bot_le_put32(u + 4, (uint32_t)e);
	(void)!write(1, u, sizeof(u));
}

/* The report's half: what the parent passed after DIR. */
struct report {
	const char *tmpl, *info, *dir;
	struct bot_report_part id;
	struct bot_report_builder *b;
	uid_t uid;
	int oom;
};

static void on_file(void *arg, const struct bot_spool_file *f)
{
	struct report *r = arg;

	bot_report_builder_file(r->b, !f);
	if (f && bot_report_builder_add(r->b, f->recs, (size_t)f->hdr.nrecords) < 0)
		r->oom = 1;
}

static int parse_report_arg(struct report *r, const char *a)
{
	uint32_t v;

	if (!strncmp(a, "report=", 7) && a[7] == '/') {
		r->tmpl = a + 7;
	} else if (!strncmp(a, "info=", 5)) {
		r->info = a + 5;
	} else if (!strncmp(a, "job=", 4)) {
		bot_report_job_token(r->id.job, sizeof(r->id.job), a + 4);
	} else if (!strncmp(a, "token=", 6)) {
		char *end;

		if (strlen(a + 6) != 16 || strspn(a + 6, "0123456789abcdef") != 16)
			return -1;
		r->id.token = strtoull(a + 6, &end, 16);
	} else if (!strncmp(a, "step=", 5)) {
		bot_report_token(r->id.step, sizeof(r->id.step), a + 5);
	} else if (!strncmp(a, "node=", 5)) {
		bot_report_token(r->id.node, sizeof(r->id.node), a + 5);
	} else {
		const char *eq = strchr(a, '=');

		if (!eq || parse_id(eq + 1, &v) < 0)
			return -1;
		if (!strncmp(a, "restart=", 8))
			r->id.restart = v;
		else if (!strncmp(a, "nodes=", 6) && v && v <= 65536)
			r->id.step_nodes = v;
		else if (!strncmp(a, "tasks=", 6) && v <= (1u << 20))
			r->id.expected_ranks = v;
		else if (!strncmp(a, "leaves=", 7) && v < 65536)
			r->id.leaf_switches = v;
		else
			return -1;
	}
	return 0;
}

/* The batch step's output file, as its task recorded it: the summary
 * appended there, to a regular file of the user's only. */
static void append_summary(const struct report *r, const char *line)
{
	const struct bot_open_rule rule = { .what = "stdout.path", .max = 4096, .one_link = 1,
					    .check_owner = 1, .uid = r->uid };
	char err[PATH_MAX + 256], path[4097];
	uint8_t *buf = NULL;
	size_t len = 0;
	struct stat st;
	int dfd, fd;

	dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	if (bot_read_at(dfd, "stdout.path", "stdout.path", &rule, &buf, &len, err,
			sizeof(err)) < 0 || !len || len >= sizeof(path) || buf[0] != '/') {
		free(buf);
		close(dfd);
		return;
	}
	close(dfd);
	memcpy(path, buf, len);
	path[len] = 0;
	free(buf);
	if (strlen(path) != len)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == r->uid)
		(void)!write(fd, line, strlen(line));
	close(fd);
}

/* This node's part into the report directory; the batch step's line. */
static void write_report(struct report *r)
{
	char dir[PATH_MAX], err[BOT_REPORT_ERR_MAX + PATH_MAX], line[2 * PATH_MAX], step[160];
	char leader[BOT_REPORT_TOKEN_MAX];
	struct bot_report_part p = r->id;
	struct passwd *pw;

	if (r->oom || fsize(RLIM_INFINITY) < 0)
		return;
	signal(SIGXFSZ, SIG_IGN);
	pw = getpwuid(r->uid);
	/* %j: the job's, a heterogeneous component's leader's */
	bot_report_job_leader(r->id.job, leader, sizeof(leader));
	if (bot_report_dir_expand(r->tmpl, leader, pw ? pw->pw_name : NULL, dir, sizeof(dir),
				  err, sizeof(err)) < 0)
		return;
	p.ctx = NULL;
	p.nctx = 0;
	if (bot_report_builder_finish(r->b, &p) < 0)
		return;
	if (bot_report_part_write(dir, &p, NULL, 0, err, sizeof(err)) == 0 &&
	    !strcmp(p.step, "batch")) {
		struct bot_report_totals t;

		/* a batch step that loaded no tuner (NCCL ran in the script's
		 * sruns, which print their own lines, or not at all): its
		 * part, and no line in every job's output */
		bot_report_totals(&p, &t);
		if (!t.ranks_loaded) {
			bot_report_part_free(&p);
			return;
		}
		snprintf(step, sizeof(step), "%s.%s", p.job, p.step);
		bot_report_summary(&p, step, dir, line, sizeof(line) - 1);
		strcat(line, "\n");
		append_summary(r, line);
	} else if (!strcmp(p.step, "batch")) {
		/* the batch step's line says why there is no report instead
		 * of nothing (srun's steps say it in srun, spank/report.c) */
		bot_log_esc_inplace(err, sizeof(err));
		snprintf(line, sizeof(line), "nccl-bot: step %.64s.batch: no report: %.3000s\n",
			 p.job, err);
		append_summary(r, line);
	}
	bot_report_part_free(&p);
}

int main(int argc, char **argv)
{
	struct bot_harvest_src src;
	struct bot_harvest_req req;
	static gid_t groups[HELPER_GROUPS];
	static struct report rep;
	uint32_t uid, gid;
	int ngroups = -1, rc;

	bot_report_part_init(&rep.id);
	for (int i = 5; i < argc; i++)
		if (parse_report_arg(&rep, argv[i]) < 0) {
			fprintf(stderr, "nccl-bot-harvest-read: bad argument '%s'\n", argv[i]);
			return 2;
		}
	if (argc < 5 || parse_id(argv[1], &uid) < 0 || parse_id(argv[2], &gid) < 0 ||
	    (strcmp(argv[3], "-") && parse_groups(argv[3], groups, &ngroups) < 0) ||
	    argv[4][0] != '/') {
		fprintf(stderr, "usage: nccl-bot-harvest-read UID GID GROUPS|- DIR (absolute)\n");
		return 2;
	}
	if (setup((uid_t)uid, (gid_t)gid, groups, ngroups) < 0) {
		setup_failed(errno);
		return 3;
	}
	memset(&req, 0, sizeof(req));
	src.dir = argv[4];
	src.name = NULL;
	req.src = &src;
	req.nsrc = 1;
	req.owner = (uid_t)uid;
	/* the step's nodes (nodes=, 0 when not passed): the part rejects a
	 * file as the parent's re-validation will (learn/harvest.c) */
	req.id.step_nodes = rep.id.step_nodes;
	if (rep.tmpl && rep.id.job[0] && rep.id.step[0] && rep.id.node[0]) {
		rep.b = bot_report_builder_new();
		rep.uid = (uid_t)uid;
		rep.dir = argv[4];
		if (rep.info)
			bot_report_part_info(&rep.id, rep.info);
		if (rep.b) {
			req.on_file = on_file;
			req.on_file_arg = &rep;
		}
	}
	rc = bot_harvest_read(&req, 1) < 0 ? 1 : 0;
	/* the stream is out: the parent's EOF, and its delta, come now */
	close(1);
	if (!rc && rep.b)
		write_report(&rep);
	bot_report_builder_free(rep.b);
	return rc;
}
