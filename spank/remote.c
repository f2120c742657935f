/*
 * remote.c - slurmstepd (the remote context) on each node of a step.
 *
 * Owns applying, never deciding: srun (or sbatch) decided once for the
 * whole step, and this copies the pinned values (SLURM_NCCL_BOT_PIN_*,
 * which survive --export=NONE) into the variables NCCL reads, identical
 * bytes on every node. Nothing it reads decides whether, or with which
 * table, a task of an srun step runs nccl-bot: it reads no shared state
 * and, for srun's steps, no kill switch, for a file that differs between
 * nodes must not give some ranks nccl-bot's tuner and others NCCL's own (a
 * hang). The batch step, one task on one node, is the exception
 * (batch_kill_switch). The other files it reads only label what the
 * step's harvest stamps into its delta: slurm.conf's ClusterName=,
 * topology.conf beside it (the leaf switches the step spans), the fabric
 * map (fabric_map=, or config='s map: the step's fabric, step_fabric) and
 * the job's facts the prolog wrote under spool_dir= (spank/jobfacts.h).
 *
 * One check is per node, because it is about this node: the rank library
 * the step is pointed at must be here and be a tuner plugin. If it is not,
 * NCCL would silently run its own tuner on this node's ranks while the
 * others run ours, so each task fails before it starts, with a message
 * naming the node on the user's terminal (task_init runs in the task, as
 * the user, its output already the task's). user_init cannot stop the
 * step itself: an optional plugin's failing callback is only logged.
 *
 * Also the step's spool directory and its harvest (doc/slurm.md,
 * "Measurements: spool and harvest"): when srun's decision says the step
 * measures (BOT_SPANK_MEASURE_VAR), init_post_opt (root) makes this node's
 * spool directory (spank/spooldir.h) and user_init points NCCL_BOT_SPOOL at
 * it; when the node's last task has exited (slurm_spank_task_exit, root;
 * else slurm_spank_exit) the plugin spawns nccl-bot-harvest-read, which reads the spool as the job's user, and
 * validates its stream here (learn/harvest.h's bot_harvest_collect) into a
 * delta in outbox_dir= stamped with root-side facts only, then removes the
 * directory. A node that cannot make its spool directory only measures
 * nothing: the table, not the spool, decides the algorithms.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/readall.h"
#include "common/writeall.h"
#include "common/settings.h"
#include "learn/harvest.h"
#include "learn/ranklib.h"
#include "spank/context.h"
#include "spank/decide.h"
#include "spank/fabricgen.h"
#include "spank/fabricmap.h"
#include "spank/jobfacts.h"
#include "spank/spooldir.h"

/* The harvest's bound in slurm_spank_exit: the helper's stream must be in
 * within this (slurmstepd waits for the callback; PrologEpilogTimeout and
 * the step's end are not to be held up). */
#define REMOTE_HARVEST_MS 2000u
/* Arguments after DIR for the helper's report half (report_args). */
#define REPORT_ARGS 10

/* Set in user_init, read in each task's task_init (a child of this
 * slurmstepd): why this node cannot run the step's tasks. */
static char node_failure[PATH_MAX + 512];

#define PIN_MAX (256 * 1024)

static int get(spank_t sp, const char *name, char *buf, int len)
{
	return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS;
}

/* Set in init_post_opt when this node's spool directory was made: its
 * path, for NCCL_BOT_SPOOL in user_init. */
static char spool_path[PATH_MAX];
/* When init_post_opt saw the step start (unix seconds): the delta's start. */
static uint64_t step_start;

/* The step's facts from Slurm (root-side: never the job's environment). */
struct step_facts {
	uid_t uid;
	gid_t gid;
	uint32_t job, step, restart, nnodes, ntasks, array_job, array_task;
	char name[BOT_SPANK_SPOOL_NAME_MAX];	/* the spool directory's */
};

static int facts(spank_t sp, struct step_facts *f)
{
	char v[16];

	memset(f, 0, sizeof(*f));
	if (spank_get_item(sp, S_JOB_UID, &f->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &f->gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &f->job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &f->step) != ESPANK_SUCCESS)
		return -1;
	/* S_SLURM_RESTART_COUNT is the batch step's (22.05: 0 in an srun step
	 * of a requeued job, observed); else the step's SLURM_RESTART_COUNT,
	 * which slurmctld sets but a user could change in an srun step: it
	 * only names the user's own step (doc/security.md) */
	if (spank_get_item(sp, S_SLURM_RESTART_COUNT, &f->restart) != ESPANK_SUCCESS)
		f->restart = 0;
	if (!f->restart && get(sp, "SLURM_RESTART_COUNT", v, sizeof(v))) {
		char *end;
		unsigned long r = strtoul(v, &end, 10);

		if (v[0] >= '0' && v[0] <= '9' && !*end && r < 0xfffffff0ul)
			f->restart = (uint32_t)r;
	}
	if (spank_get_item(sp, S_JOB_NNODES, &f->nnodes) != ESPANK_SUCCESS || !f->nnodes)
		f->nnodes = 1;	/* the batch step says 0: it runs on one node */
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &f->ntasks) != ESPANK_SUCCESS)
		f->ntasks = 0;
	/* an array task has both ids; any other job says an array id (its own
	 * job id in 22.05) with task NO_VAL */
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &f->array_job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &f->array_task) != ESPANK_SUCCESS ||
	    !f->array_job || f->array_task >= 0xfffffff0u) {
		f->array_job = 0;	/* formats.md section 13: 0 none */
		f->array_task = BOT_DELTA_NONE;
	}
	return bot_spank_spool_name(f->job, f->restart, f->step, bot_spank.node, f->name,
				    sizeof(f->name));
}

int bot_spank_remote_post_opt(spank_t sp)
{
	char v[16], err[PATH_MAX + 256];
	struct step_facts f;
	int base, rc;

	spool_path[0] = 0;
	step_start = (uint64_t)time(NULL);
	/* enable=off: nothing of ours runs, even where a user set the
	 * variable by hand (doc/security.md) */
	if (!bot_spank.args_ok || bot_spank.args.enable == BOT_SPANK_ENABLE_OFF ||
	    !get(sp, BOT_SPANK_MEASURE_VAR, v, sizeof(v)) || strcmp(v, "1"))
		return 0;
	if (facts(sp, &f) < 0) {
		slurm_error("nccl-bot: no spool directory: the step's ids or node name (%s) are "
			    "not known here", bot_spank.node);
		return 0;
	}
	if (f.step == BOT_DELTA_STEP_EXTERN || f.step == BOT_DELTA_STEP_INTERACTIVE)
		return 0;
	base = bot_spank_spool_base(bot_spank.args.spool_dir, 1, err, sizeof(err));
	if (base < 0) {
		slurm_error("nccl-bot: %s; step %u.%u measures nothing on this node", err, f.job,
			    f.step);
		return 0;
	}
	rc = bot_spank_spool_make(base, f.name, f.uid, f.gid, err, sizeof(err));
	close(base);
	if (rc < 0) {
		slurm_error("nccl-bot: spool_dir %s: %s; step %u.%u measures nothing on this node",
			    bot_spank.args.spool_dir, err, f.job, f.step);
		return 0;
	}
	if ((size_t)snprintf(spool_path, sizeof(spool_path), "%s/%.*s", bot_spank.args.spool_dir,
			     (int)(sizeof(f.name) - 1), f.name) >= sizeof(spool_path))
		spool_path[0] = 0;
	return 0;
}

/*
 * The kill switch, read here for the batch step only. The batch step's
 * decision was pinned at submission (spank/allocator.c), maybe hours
 * before the job starts; a switch the administrator placed meanwhile must
 * stop it too, or "switched off in seconds" would not hold for queued
 * jobs. Reading it on a node cannot split this step between tuners: the
 * batch step is the job script alone, one task on one node, and this
 * slurmstepd is its only one (the sruns in the script are steps of their
 * own, which decide in srun and read the switch there: never here, where
 * nodes might see the switch differently). The step then runs without
 * nccl-bot: the pinned variables and the pins are taken out of its
 * environment (a variable holding our pinned value is ours, one the user
 * set differs and stays), and its report info says why. 1 when it did.
 */
static int batch_kill_switch(spank_t sp, char *buf)
{
	char var[128], cur[PATH_MAX + 256], *val;
	uint32_t step = 0;
	struct stat st;

	if (!bot_spank.args_ok || !bot_spank.args.kill_switch[0] ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    step != BOT_DELTA_STEP_BATCH || stat(bot_spank.args.kill_switch, &st) < 0)
		return 0;
	val = malloc(PIN_MAX);
	for (size_t i = 0; bot_spank_pinned[i]; i++) {
		snprintf(var, sizeof(var), "%s%s", BOT_SPANK_PIN_PREFIX, bot_spank_pinned[i]);
		if (!get(sp, var, buf, PIN_MAX))
			continue;
		/* without memory to compare, ours or not: taken out (the step
		 * must not run with nccl-bot) */
		if (!val || (get(sp, bot_spank_pinned[i], val, PIN_MAX) && !strcmp(buf, val)))
			spank_unsetenv(sp, bot_spank_pinned[i]);
		spank_unsetenv(sp, var);
	}
	free(val);
	spank_unsetenv(sp, BOT_SPANK_MEASURE_VAR);
	if (get(sp, BOT_SPANK_REPORT_INFO_VAR, cur, sizeof(cur))) {
		/* "MODE PLUGIN SOURCE" (spank/report.c): the source's "(why)"
		 * is what the report shows */
		snprintf(cur, sizeof(cur), "on none prior (nccl-bot switched off by the "
			 "administrator: the kill switch %s exists)", bot_spank.args.kill_switch);
		bot_log_esc_inplace(cur, sizeof(cur));
		spank_setenv(sp, BOT_SPANK_REPORT_INFO_VAR, cur, 1);
	}
	slurm_info("nccl-bot: the kill switch %s exists: the batch step runs without nccl-bot",
		   bot_spank.args.kill_switch);
	return 1;
}

int bot_spank_remote_user_init(spank_t sp)
{
	char var[128], err[PATH_MAX + 128];
	struct bot_ranklib lib;
	char *buf;
	int pinned = 0;

	node_failure[0] = 0;
	buf = malloc(PIN_MAX);
	if (!buf) {
		slurm_error("nccl-bot: out of memory");
		return 0;
	}
	if (batch_kill_switch(sp, buf)) {
		free(buf);
		return 0;
	}
	for (size_t i = 0; bot_spank_pinned[i]; i++) {
		snprintf(var, sizeof(var), "%s%s", BOT_SPANK_PIN_PREFIX, bot_spank_pinned[i]);
		if (!get(sp, var, buf, PIN_MAX))
			continue;
		pinned++;
		if (spank_setenv(sp, bot_spank_pinned[i], buf, 1) != ESPANK_SUCCESS)
			slurm_error("nccl-bot: cannot set %s", bot_spank_pinned[i]);
	}
	if (!pinned) {
		free(buf);
		return 0;
	}
	if (spool_path[0] && spank_setenv(sp, BOT_ENV_SPOOL, spool_path, 1) != ESPANK_SUCCESS)
		slurm_error("nccl-bot: cannot set %s", BOT_ENV_SPOOL);
	snprintf(var, sizeof(var), "%sNCCL_TUNER_PLUGIN", BOT_SPANK_PIN_PREFIX);
	if (get(sp, var, buf, PIN_MAX) && bot_ranklib_check(buf, &lib, err, sizeof(err)) < 0) {
		uint32_t nodeid = 0;

		spank_get_item(sp, S_JOB_NODEID, &nodeid);
		snprintf(node_failure, sizeof(node_failure), "the rank-side library %s", err);
		bot_log_esc_inplace(node_failure, sizeof(node_failure));
		slurm_error("nccl-bot: node %u of the step cannot run it with nccl-bot: %s; its "
			    "tasks here do not start", nodeid, node_failure);
	}
	free(buf);
	return 0;
}

/* The batch step's output file (formats.md section 17): each task of the
 * batch step (as the user, its stdout already the script's output)
 * records where its stdout goes into the step's spool directory, where the
 * harvest reader appends the step's summary line at the end. */
static void record_stdout(spank_t sp)
{
	const struct bot_write_rule rule = { .mode = 0600, .chmod = 1, .clear_stale = 1 };
	char target[4097], err[PATH_MAX + 256];
	uint32_t step = 0;
	ssize_t n;
	int dfd;

	if (!spool_path[0] || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    step != BOT_DELTA_STEP_BATCH)
		return;
	n = readlink("/proc/self/fd/1", target, sizeof(target) - 1);
	if (n <= 0 || target[0] != '/')
		return;
	dfd = open(spool_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	(void)bot_write_whole_at(dfd, NULL, "stdout.path", target, (size_t)n, &rule, err,
				 sizeof(err));
	close(dfd);
}

int bot_spank_remote_task_init(spank_t sp)
{
	char node[256];

	if (!node_failure[0]) {
		record_stdout(sp);
		return 0;
	}
	/* the task's environment names the node (slurmstepd's own does not) */
	if (!get(sp, "SLURMD_NODENAME", node, sizeof(node)) && gethostname(node, sizeof(node)) < 0)
		strcpy(node, "?");
	node[sizeof(node) - 1] = 0;
	bot_log_esc_inplace(node, sizeof(node));
	/* the task's stderr: the user's terminal or the job's output file */
	fprintf(stderr, "nccl-bot: error: node %s cannot run this step with nccl-bot: %s; the "
		"step's tasks on %s do not start (without it NCCL would run its own tuner on "
		"this node only)\n", node, node_failure, node);
	fflush(stderr);
	_exit(126);
}

/* ---- the harvest at the step's end ------------------------------------------ */

/* The slurm.conf this slurmstepd runs with (its own environment's
 * SLURM_CONF, a daemon's, else the default). */
static const char *slurm_conf_path(void)
{
	const char *conf = getenv("SLURM_CONF");

	return conf && conf[0] == '/' ? conf : "/etc/slurm/slurm.conf";
}

/* ClusterName= of slurm.conf (SLURM_CONF of this slurmstepd, a daemon's
 * environment, else /etc/slurm/slurm.conf), read once: the cluster the
 * deltas name. "local" when it cannot be read. */
static void cluster_name(char *out, size_t len)
{
	const struct bot_open_rule rule = { .what = "slurm.conf", .max = 4u << 20 };
	const char *conf = slurm_conf_path();
	uint8_t *buf = NULL;
	size_t n = 0;
	char err[256];

	snprintf(out, len, "local");
	if (bot_read_at(AT_FDCWD, conf, conf, &rule, &buf, &n, err, sizeof(err)) < 0) {
		slurm_info("nccl-bot: %s; deltas name the cluster 'local'", err);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t e = i;

		while (e < n && buf[e] != '\n')
			e++;
		while (i < e && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		if (e - i > 12 && !strncasecmp((const char *)buf + i, "ClusterName=", 12)) {
			size_t k = 0;

			for (i += 12; i < e && k + 1 < len && buf[i] != ' ' && buf[i] != '\t' &&
			     buf[i] != '#' && buf[i] != '\r'; i++)
				out[k++] = (char)buf[i];
			out[k] = 0;
			break;
		}
		i = e + 1;
	}
	free(buf);
	if (!out[0] || strlen(out) >= BOT_DELTA_STR)
		snprintf(out, len, "local");
}

struct leaf_count {
	const struct bot_fabricgen *g;
	unsigned char *seen;	/* per switch */
	uint32_t n;
	int unknown;		/* a node under no leaf */
};

static int count_leaf(void *arg, const char *name)
{
	struct leaf_count *c = arg;
	const struct bot_fabricgen_node *n = bot_fabricgen_find(c->g, name);

	if (!n || n->leaf < 0) {
		c->unknown = 1;
		return 1;
	}
	if (!c->seen[n->leaf]) {
		c->seen[n->leaf] = 1;
		c->n++;
	}
	return 0;
}

/* How many leaf switches of topology.conf (beside slurm.conf) the step's
 * nodes span: 0 when unknown (no topology.conf, a node under no leaf). The
 * node list is the step's SLURM_STEP_NODELIST, which the user could change
 * in an srun step: it is informational only (doc/security.md). */
static uint32_t leaf_switches(spank_t sp)
{
	const struct bot_open_rule rule = { .what = "topology.conf",
					    .max = BOT_FABRICGEN_MAX_BYTES };
	const char *conf = slurm_conf_path(), *slash = strrchr(conf, '/');
	char path[PATH_MAX], err[PATH_MAX + 256], *nodes;
	struct bot_fabricgen g;
	struct leaf_count c;
	uint8_t *buf = NULL;
	size_t len = 0;
	uint32_t n = 0;

	if ((size_t)snprintf(path, sizeof(path), "%.*stopology.conf", (int)(slash - conf + 1),
			     conf) >= sizeof(path) || access(path, F_OK) < 0)
		return 0;
	nodes = malloc(65536);
	if (!nodes)
		return 0;
	if (!get(sp, "SLURM_STEP_NODELIST", nodes, 65536))
		snprintf(nodes, 65536, "%s", bot_spank.node);
	memset(&g, 0, sizeof(g));
	if (bot_read_at(AT_FDCWD, path, path, &rule, &buf, &len, err, sizeof(err)) < 0 ||
	    bot_fabricgen_topology(&g, path, (const char *)buf, len, err, sizeof(err)) < 0) {
		slurm_info("nccl-bot: %s; deltas say 0 leaf switches (unknown)", err);
		goto out;
	}
	memset(&c, 0, sizeof(c));
	c.g = &g;
	c.seen = calloc(g.nsw ? g.nsw : 1, 1);
	if (c.seen && bot_hostlist_expand(nodes, count_leaf, &c, err, sizeof(err)) == 0 &&
	    !c.unknown)
		n = c.n;
	free(c.seen);
out:
	bot_fabricgen_free(&g);
	free(buf);
	free(nodes);
	return n;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The helper must be root's and writable by root alone: it starts as root. */
static int helper_ok(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return bot_log_errf(err, errlen, "harvest_helper %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & 0100))
		return bot_log_errf(err, errlen, "harvest_helper %s: not an executable of root's "
				    "that only root can write", path);
	return 0;
}

/* Spawn the helper as the reading half on a pipe: its pid, *fd the read end. */
static pid_t spawn_reader(spank_t sp, uid_t uid_, gid_t gid_, const char *dir,
			  char *const *extra, int *fd, char *err, size_t errlen)
{
	char uid[16], gid[16], *groups, *argv[6 + REPORT_ARGS];
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	gid_t *gids = NULL;
	int ngids = 0, p[2], rc;
	size_t cap, k = 0;
	sigset_t all, none;
	pid_t pid = -1;

	if (helper_ok(bot_spank.args.harvest_helper, err, errlen) < 0)
		return -1;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) != ESPANK_SUCCESS ||
	    ngids < 0) {
		gids = NULL;
		ngids = 0;
	}
	cap = 16 * (size_t)(ngids + 1) + 2;
	groups = malloc(cap);
	if (!groups)
		return bot_log_errf(err, errlen, "out of memory");
	/* the job's groups as Slurm resolved them; "-": the user database's */
	k = (size_t)snprintf(groups, cap, "%s", ngids ? "" : "-");
	for (int i = 0; i < ngids; i++)
		k += (size_t)snprintf(groups + k, cap - k, "%s%u", i ? "," : "", (unsigned)gids[i]);
	snprintf(uid, sizeof(uid), "%u", (unsigned)uid_);
	snprintf(gid, sizeof(gid), "%u", (unsigned)gid_);
	argv[0] = bot_spank.args.harvest_helper;
	argv[1] = uid;
	argv[2] = gid;
	argv[3] = groups;
	argv[4] = (char *)dir;
	argv[5] = NULL;
	for (int i = 0; extra && extra[i] && i < REPORT_ARGS; i++) {
		argv[5 + i] = extra[i];
		argv[6 + i] = NULL;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(groups);
		return bot_log_errf(err, errlen, "pipe: %s", strerror(errno));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(groups);
	close(p[1]);
	if (rc) {
		close(p[0]);
		return bot_log_errf(err, errlen, "cannot start %s: %s", argv[0], strerror(rc));
	}
	*fd = p[0];
	return pid;
}

/* The helper's report half (tools/harvest_read.c): the step's facts
 * after DIR, when the decision pinned a report directory. */

struct report_args {
	char v[REPORT_ARGS][PATH_MAX + 16];
	char *argv[REPORT_ARGS + 1];
};

static char *const *report_args(spank_t sp, const struct step_facts *f,
				const struct bot_delta_hdr *id, struct report_args *r)
{
	char tmpl[PATH_MAX], info[PATH_MAX], token[24];
	uint32_t local = 0;
	int k = 0;

	if (!get(sp, BOT_SPANK_REPORT_VAR, tmpl, sizeof(tmpl)) || tmpl[0] != '/')
		return NULL;
	if (!get(sp, BOT_SPANK_REPORT_INFO_VAR, info, sizeof(info)))
		info[0] = 0;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS)
		local = 0;
	snprintf(r->v[k++], sizeof(r->v[0]), "report=%s", tmpl);
	snprintf(r->v[k++], sizeof(r->v[0]), "info=%s", info);
	/* a heterogeneous job's component: J+K, in the leader J's directory */
	if (id->het_job)
		snprintf(r->v[k++], sizeof(r->v[0]), "job=%u+%u", (unsigned)id->het_job,
			 (unsigned)id->het_comp);
	else
		snprintf(r->v[k++], sizeof(r->v[0]), "job=%u", (unsigned)f->job);
	/* the helper refuses a malformed one: only a well-formed token passes */
	if (get(sp, BOT_SPANK_REPORT_TOKEN_VAR, token, sizeof(token)) && strlen(token) == 16 &&
	    strspn(token, "0123456789abcdef") == 16)
		snprintf(r->v[k++], sizeof(r->v[0]), "token=%s", token);
	if (f->step == BOT_DELTA_STEP_BATCH)
		snprintf(r->v[k++], sizeof(r->v[0]), "step=batch");
	else
		snprintf(r->v[k++], sizeof(r->v[0]), "step=%u", (unsigned)f->step);
	snprintf(r->v[k++], sizeof(r->v[0]), "node=%.255s", bot_spank.node);
	snprintf(r->v[k++], sizeof(r->v[0]), "restart=%u", (unsigned)f->restart);
	snprintf(r->v[k++], sizeof(r->v[0]), "nodes=%u", (unsigned)f->nnodes);
	snprintf(r->v[k++], sizeof(r->v[0]), "tasks=%u", (unsigned)local);
	snprintf(r->v[k++], sizeof(r->v[0]), "leaves=%u", (unsigned)id->leaf_switches);
	for (int i = 0; i < k; i++)
		r->argv[i] = r->v[i];
	r->argv[k] = NULL;
	return r->argv;
}

/* The helper writes the report part after its stream: wait for its exit
 * until the harvest's bound, never longer; reap() kills what is left. The
 * pidfd is readable once it has exited; without one (Linux < 5.3) the pid
 * is polled every ms with waitid(WNOWAIT), which leaves the zombie to
 * reap(); ECHILD (slurmstepd reaped it) counts as exited. */
static void wait_helper(pid_t pid, int pidfd, const struct timespec *t0)
{
	struct pollfd q = { pidfd, POLLIN, 0 };
	long left = (long)REMOTE_HARVEST_MS - ms_since(t0);

	if (left <= 0)
		return;
	if (pidfd < 0) {
		const struct timespec ms = { 0, 1000000 };

		for (; left > 0; left = (long)REMOTE_HARVEST_MS - ms_since(t0)) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
				if (errno != EINTR)
					return;	/* ECHILD: gone already */
			} else if (si.si_pid == pid) {
				return;
			}
			nanosleep(&ms, NULL);
		}
		return;
	}
	while (poll(&q, 1, (int)left) < 0 && errno == EINTR) {
		left = (long)REMOTE_HARVEST_MS - ms_since(t0);
		if (left <= 0)
			break;
	}
}

/* No delta (no outbox or fabric) but a report: the stream is read and
 * dropped until EOF, within the bound. */
static void drain(int fd, const struct timespec *t0)
{
	char buf[4096];
	struct pollfd q = { fd, POLLIN, 0 };

	for (;;) {
		long left = (long)REMOTE_HARVEST_MS - ms_since(t0);

		if (left <= 0 || poll(&q, 1, (int)left) <= 0 || read(fd, buf, sizeof(buf)) <= 0)
			break;
	}
}

/* Reap the helper: it is done, or killed now (never waited for long).
 * slurmstepd may reap children itself (waitpid says ECHILD), so the kill
 * goes through a pidfd taken right after the spawn (never another
 * process that reused the pid), or the pid where there is none. */
static void reap(pid_t pid, int pidfd)
{
	struct timespec ts = { 0, 1000000 };
	int status;

	if (waitpid(pid, &status, WNOHANG) == pid)
		goto out;
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	else
		kill(pid, SIGKILL);
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			break;
		nanosleep(&ts, NULL);
	}
out:
	if (pidfd >= 0)
		close(pidfd);
}

/*
 * What the job's prolog recorded on this node (spank/jobfacts.h: root-side
 * facts slurmstepd has no other way to learn without an RPC): the account,
 * trusted (bit4) because it came from slurmd, never the user; the job's
 * GPUs on this node, stamped only for a step on this node alone (the
 * compactor bounds a step's ranks by them, and a node knows only its own
 * share); the heterogeneous job id, whose component is this job's offset
 * from it (Slurm numbers a heterogeneous job's components from its
 * leader's id: observed, 22.05). No file (a plugin added after slurmd
 * started, a prolog that failed): none of them, and the log says why.
 * Fills id's job string too. -1 when there are no facts (*jf zeroed).
 */
int bot_spank_job_facts(int base, uint32_t job, uint32_t nnodes, struct bot_delta_hdr *id,
			struct bot_spank_jobfacts *jf)
{
	char name[BOT_SPANK_SPOOL_NAME_MAX], err[PATH_MAX + 256];
	int rc = -1;

	id->het_job = 0;
	id->het_comp = BOT_DELTA_NONE;
	memset(jf, 0, sizeof(*jf));
	if (bot_spank_jobfacts_name(job, bot_spank.node, name, sizeof(name)) < 0)
		goto out;
	if (bot_spank_jobfacts_read(base, name, jf, err, sizeof(err)) < 0) {
		slurm_info("nccl-bot: job %u: %s; its delta carries no account", job,
			   errno == ENOENT ? "the job's prolog recorded no facts here" : err);
		goto out;
	}
	rc = 0;
	if (jf->account[0]) {
		snprintf(id->account, sizeof(id->account), "%s", jf->account);
		id->flags |= BOT_DELTA_F_ACCOUNT;
	}
	if (nnodes == 1)
		id->job_gpus = jf->gpus;
	if (jf->het_job && jf->het_job <= job && job - jf->het_job < 4096) {
		id->het_job = jf->het_job;
		id->het_comp = job - jf->het_job;
	}
out:
	if (id->array_job && id->array_task != BOT_DELTA_NONE)
		snprintf(id->job, sizeof(id->job), "%u_%u", (unsigned)id->array_job,
			 (unsigned)id->array_task);
	else if (id->het_job)
		snprintf(id->job, sizeof(id->job), "%u+%u", (unsigned)id->het_job,
			 (unsigned)id->het_comp);
	else
		snprintf(id->job, sizeof(id->job), "%u", (unsigned)job);
	return rc;
}

/* The step's nodes through the fabric map (bot_hostlist_expand's callback). */
struct span {
	const struct bot_fabricmap *m;
	struct bot_fabricmap_step st;
};

static int span_add(void *arg, const char *name)
{
	struct span *sp = arg;

	bot_fabricmap_step_add(sp->m, &sp->st, name);
	return sp->st.state < 0;
}

/*
 * The fabric a step's delta goes to (doc/slurm.md): this node's own, and
 * only when the whole step is on it, else none ("", why said): latencies
 * of communicators that cross fabrics are no one fabric's. A fabric the
 * decision pinned (BOT_SPANK_FABRIC_VAR, where the step was decided: all
 * the job's nodes on it) must be this node's. When the decision named none
 * ("-": it ran on the prior because the job's nodes span fabrics, have one
 * of unknown fabric, or were not known, as for a heterogeneous step or a
 * batch step of an unknown partition) or there is no pin (the epilog, a
 * step decided by an older plugin), the step's own node list
 * (SLURM_STEP_NODELIST; the batch step: this node) is mapped here: all on
 * this node's fabric, or no delta. That list is the job's environment,
 * which a user could change: like the spool's records, it only ever
 * speaks for the user's own measurements (doc/security.md).
 */
static void step_fabric(spank_t sp, char *out, size_t len, char *why, size_t whylen)
{
	char pin[BOT_SPANK_FABRIC_MAX + 8], err[PATH_MAX + 256], *nodes;
	struct bot_fabricmap m;
	struct span span;
	const char *f;
	int have = 0, rc;

	why[0] = 0;
	out[0] = 0;
	/* this node's fabric: fabric=, or the fabric map's (fabric_map= or the
	 * fabric_map of config=: a root-side fact, read as root, once) */
	if (bot_spank.args.fabric[0]) {
		snprintf(out, len, "%s", bot_spank.args.fabric);
	} else {
		rc = bot_fabricmap_load_site(bot_spank.args.fabric_map, bot_spank.args.config, &m,
					     err, sizeof(err));
		if (rc < 0)
			slurm_error("nccl-bot: %s", err);
		have = rc > 0;
		f = have ? bot_fabricmap_lookup(&m, bot_spank.node) : NULL;
		if (f)
			snprintf(out, len, "%s", f);
	}
	if (!out[0]) {
		snprintf(why, whylen, "this node's fabric is not known: fabric=, fabric_map= or "
			 "config='s fabric_map");
		goto out;
	}
	if (sp && get(sp, BOT_SPANK_FABRIC_VAR, pin, sizeof(pin)) && strcmp(pin, "-")) {
		if (strcmp(pin, out))
			snprintf(why, whylen, "the step's table is fabric %.64s's, this node is on "
				 "%.64s", pin, out);
		goto out;
	}
	if (!have)
		goto out;	/* fabric=: every node's */
	nodes = malloc(65536);
	if (!nodes) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	if (!sp || !get(sp, "SLURM_STEP_NODELIST", nodes, 65536))
		snprintf(nodes, 65536, "%s", bot_spank.node);
	memset(&span, 0, sizeof(span));
	span.m = &m;
	if (bot_hostlist_expand(nodes, span_add, &span, err, sizeof(err)) < 0 &&
	    span.st.state >= 0)
		snprintf(why, whylen, "the step's node list does not read: %.200s", err);
	else if (span.st.state < 0)
		snprintf(why, whylen, "the step ran on the prior: %.200s", span.st.why);
	else if (span.st.state == 0 || strcmp(span.st.fabric, out))
		snprintf(why, whylen, "the step's nodes are not on this node's fabric %.64s", out);
	free(nodes);
out:
	if (have)
		bot_fabricmap_free(&m);
	if (why[0]) {
		bot_log_esc_inplace(why, whylen);
		out[0] = 0;
	}
}

/*
 * basefd/name, a spool directory of id->uid, into a delta stamped with id
 * (everything but cluster, fabric and node, which this fills: the step's
 * fabric, step_fabric), read by the helper as id->uid within left ms.
 * Logs (what: "step 5.0"); never fails the caller. The caller removes the
 * directory.
 */
void bot_spank_harvest_dir(spank_t sp, const char *name, struct bot_delta_hdr *id, long left,
			   char *const *extra, const char *what, const struct timespec *t0)
{
	char err[PATH_MAX + 512], dir[PATH_MAX], fabric[BOT_SPANK_FABRIC_MAX], why[256];
	struct bot_harvest_src src;
	struct bot_harvest_req req;
	struct bot_harvest_result res;
	int fd = -1, pidfd, n, rc;
	pid_t pid;

	n = snprintf(dir, sizeof(dir), "%s/%s", bot_spank.args.spool_dir, name);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;
	step_fabric(sp, fabric, sizeof(fabric), why, sizeof(why));
	if (!bot_spank.args.outbox_dir[0] || !fabric[0]) {
		slurm_info("nccl-bot: %s: no delta (%s)%s; removed", dir,
			   !fabric[0] ? why : "no outbox_dir=", extra ? ", the report part only" : "");
		if (!extra || helper_ok(bot_spank.args.harvest_helper, err, sizeof(err)) < 0)
			return;	/* no part without a helper: srun's line says so */
	}
	if (left < 100) {
		slurm_error("nccl-bot: %s: no time left to harvest it; removed", dir);
		return;
	}
	pid = spawn_reader(sp, id->uid, id->gid, dir, extra, &fd, err, sizeof(err));
	if (pid < 0) {
		slurm_error("nccl-bot: %s: not harvested: %s", dir, err);
		return;
	}
	/* -1 before Linux 5.3: the pid */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (!bot_spank.args.outbox_dir[0] || !fabric[0]) {
		/* the report only */
		drain(fd, t0);
		close(fd);
		wait_helper(pid, pidfd, t0);
		reap(pid, pidfd);
		return;
	}
	memset(&req, 0, sizeof(req));
	src.dir = dir;
	src.name = NULL;
	req.src = &src;
	req.nsrc = 1;
	req.owner = id->uid;
	req.timeout_ms = (unsigned)left;
	req.outbox = bot_spank.args.outbox_dir;
	req.id = *id;
	req.id.flags |= BOT_DELTA_F_SLURM;
	if (!req.id.cluster[0])
		cluster_name(req.id.cluster, sizeof(req.id.cluster));
	snprintf(req.id.fabric, sizeof(req.id.fabric), "%s", fabric);
	snprintf(req.id.node, sizeof(req.id.node), "%.*s", BOT_DELTA_STR - 1, bot_spank.node);
	rc = bot_harvest_collect(fd, &req, &res, &bot_spank_daemon_log);
	close(fd);
	if (extra)
		wait_helper(pid, pidfd, t0);
	reap(pid, pidfd);
	if (rc == 0)
		slurm_info("nccl-bot: %s: %zu spool files read, %zu rejected, %llu records: %s "
			   "(%ld ms)", what, res.files_read, res.files_rejected,
			   (unsigned long long)res.records, res.path, ms_since(t0));
	else
		slurm_info("nccl-bot: %s: no delta (%s; %zu files, %zu rejected; %ld ms)", what,
			   res.outcome == BOT_HARVEST_EXISTS ? "already there" :
			   res.outcome == BOT_HARVEST_NOTHING ? "nothing to harvest" : "failed",
			   res.files, res.files_rejected, ms_since(t0));
}

/* One step's spool directory on this node into a delta (the caller
 * removes it). Logs; never fails the caller. */
static void harvest_one(spank_t sp, const struct step_facts *f, int base,
			const struct timespec *t0)
{
	static struct report_args rargs;
	struct bot_spank_jobfacts jf;
	struct bot_delta_hdr id;
	char *const *extra;
	char what[64];

	memset(&id, 0, sizeof(id));
	id.uid = f->uid;
	id.gid = f->gid;
	id.restart = f->restart;
	id.step = f->step;
	id.array_job = f->array_job;
	id.array_task = f->array_task;
	id.step_nodes = f->nnodes;
	id.step_tasks = f->ntasks;
	id.leaf_switches = leaf_switches(sp);	/* 0: unknown */
	id.t_start = step_start ? step_start : (uint64_t)time(NULL);
	bot_spank_job_facts(base, f->job, f->nnodes, &id, &jf);
	extra = report_args(sp, f, &id, &rargs);
	snprintf(what, sizeof(what), "step %u.%u", f->job, f->step);
	bot_spank_harvest_dir(sp, f->name, &id, (long)REMOTE_HARVEST_MS - ms_since(t0), extra,
			      what, t0);
}

/* Harvest this node's spool of the step and remove it, once per
 * slurmstepd (the last task's exit, else the step's exit). */
static int harvested;

static void harvest_step(spank_t sp)
{
	char err[PATH_MAX + 256];
	struct timespec t0;
	struct step_facts f;
	int base, dfd;

	if (harvested)
		return;
	harvested = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!bot_spank.args_ok || facts(sp, &f) < 0)
		return;
	base = bot_spank_spool_base(bot_spank.args.spool_dir, 0, err, sizeof(err));
	if (base < 0)
		return;	/* no spool_dir: nothing ever measured here */
	dfd = bot_spank_spool_open(base, f.name, f.uid, err, sizeof(err));
	if (dfd < 0) {
		if (errno != ENOENT)
			slurm_error("nccl-bot: spool_dir %s: %s; removing it",
				    bot_spank.args.spool_dir, err);
		else {
			close(base);
			return;
		}
	} else {
		close(dfd);
		harvest_one(sp, &f, base, &t0);
	}
	if (bot_spank_spool_remove(base, f.name, err, sizeof(err)) < 0)
		slurm_error("nccl-bot: spool_dir %s: %s", bot_spank.args.spool_dir, err);
	close(base);
}

/*
 * The harvest runs when the node's last task has exited, before slurmstepd
 * tells srun so: once srun has every task's exit, the step's end reaches
 * slurmctld, whose kill of the step's processes (proctrack: every
 * descendant of this slurmstepd, the helper too) can arrive while
 * slurm_spank_exit is still harvesting (observed: a helper that takes a
 * few hundred ms is killed). Here srun still waits for this node's last
 * task, so the step's end waits for the harvest's bound at most.
 */
int bot_spank_remote_task_exit(spank_t sp)
{
	static uint32_t exited;
	uint32_t local = 0;

	if (!spool_path[0] || harvested)
		return 0;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS || !local)
		return 0;	/* the step's exit harvests */
	if (++exited >= local)
		harvest_step(sp);
	return 0;
}

int bot_spank_remote_exit(spank_t sp)
{
	harvest_step(sp);
	return 0;
}
