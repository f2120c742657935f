/*
 * report.c - the user's report of a step, on the launcher's side
 * (doc/formats.md section 17): where the report directory is, decided
 * once with the step and pinned (SLURM_NCCL_BOT_REPORT_DIR, with the
 * decision's facts in SLURM_NCCL_BOT_REPORT_INFO, the step's token in
 * SLURM_NCCL_BOT_REPORT_TOKEN and its fabric in SLURM_NCCL_BOT_FABRIC for
 * the harvest's deltas), and srun's one-line
 * summary at the step's end (the local context's slurm_spank_exit, as the
 * user): a bounded wait for the nodes' parts, merged, one line on the
 * terminal. The parts themselves are written on the nodes by the harvest
 * reader as the user (tools/harvest_read.c, started by spank/remote.c);
 * an arm the step did not measure takes the fabric's learned state
 * (spank/reportstate.h) before NCCL's cost model; nothing here runs as root.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/settings.h"
#include "learn/report.h"
#include "policies/context.h"
#include "spank/context.h"
#include "spank/decide.h"
#include "spank/reportstate.h"

/* srun's wait for the nodes' parts (formats.md section 17). */
#define REPORT_WAIT_MS 3000
#define REPORT_POLL_MS 50

void bot_spank_report_unpin(void)
{
	unsetenv(BOT_SPANK_REPORT_VAR);
	unsetenv(BOT_SPANK_REPORT_INFO_VAR);
	unsetenv(BOT_SPANK_REPORT_TOKEN_VAR);
	unsetenv(BOT_SPANK_FABRIC_VAR);
}

/* A new step's token: 64 random bits, never 0 (0: unknown). */
static uint64_t new_token(void)
{
	uint64_t t = 0;

	if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != (ssize_t)sizeof(t)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = ((uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec) * 0x9e3779b97f4a7c15ull ^
		    (uint64_t)getpid() << 16;
	}
	return t ? t : 1;
}

/* The working directory with '%' doubled (a template's literal). */
/* Why the user could not write the report directory dir, or "" when it
 * seems writable: it cannot be made in its parent, or is not a writable
 * directory. */
static void report_dir_problem(const char *dir, char *out, size_t len)
{
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	out[0] = 0;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			snprintf(out, len, "%s is not a directory", dir);
		else if (access(dir, W_OK | X_OK) < 0)
			snprintf(out, len, "cannot write %s: %s", dir, strerror(errno));
		return;
	}
	if (errno != ENOENT) {
		snprintf(out, len, "%s: %s", dir, strerror(errno));
		return;
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	*slash = 0;
	if (access(parent[0] ? parent : "/", W_OK | X_OK) < 0)
		snprintf(out, len, "cannot make %.2000s: %.2000s: %s (NCCL_BOT_REPORT_DIR names "
			 "another directory)", dir, parent[0] ? parent : "/", strerror(errno));
}

/* The step's working directory as a template (each '%' doubled): this
 * process's, or workdir (a batch job's -D/--chdir: where its script and
 * sruns run), relative to this process's. */
/* Did the user ask for nccl-bot (--nccl-bot, --nccl-bot=POLICY or shadow)? */
static int asked_for(void)
{
	return bot_spank.opt_seen && (bot_spank.opt_null || strcasecmp(bot_spank.opt_value, "off"));
}

static int cwd_template(const char *workdir, char *out, size_t len)
{
	char cwd[PATH_MAX];
	size_t k = 0;

	if (workdir && workdir[0] == '/') {
		if (strlen(workdir) >= sizeof(cwd))
			return -1;
		strcpy(cwd, workdir);
	} else if (!getcwd(cwd, sizeof(cwd))) {
		return -1;
	} else if (workdir && *workdir) {
		size_t n = strlen(cwd);

		if (n + 1 + strlen(workdir) >= sizeof(cwd))
			return -1;
		snprintf(cwd + n, sizeof(cwd) - n, "%s%s", n > 1 ? "/" : "", workdir);
	}
	bot_path_dir_trim(cwd);
	for (const char *p = cwd; *p; p++) {
		if (k + 3 >= len)
			return -1;
		if (*p == '%')
			out[k++] = '%';
		out[k++] = *p;
	}
	/* "/" as the directory: "" before the "/name" the callers add */
	if (k == 1 && out[0] == '/')
		k = 0;
	out[k] = 0;
	return 0;
}

void bot_spank_report_pin(const struct bot_spank_args *a, int shadow, int plugin,
			  const char *source, const char *workdir)
{
	char tmpl[PATH_MAX], cwd[PATH_MAX], probe[PATH_MAX], err[PATH_MAX + 128];
	char info[PATH_MAX + 64], token[24];
	const char *user = getenv("NCCL_BOT_REPORT_DIR");

	/* the fabric the step's deltas go to, and this run's token: with the
	 * pins, whatever becomes of the report directory */
	snprintf(token, sizeof(token), "%016llx", (unsigned long long)new_token());
	if (setenv(BOT_SPANK_FABRIC_VAR, a->fabric[0] ? a->fabric : "-", 1) < 0 ||
	    setenv(BOT_SPANK_REPORT_TOKEN_VAR, token, 1) < 0) {
		bot_spank_report_unpin();
		return;
	}
	tmpl[0] = 0;
	if (user && *user) {
		if (user[0] == '/')
			snprintf(tmpl, sizeof(tmpl), "%s", user);
		else if (cwd_template(workdir, cwd, sizeof(cwd)) == 0 &&
			 (size_t)snprintf(tmpl, sizeof(tmpl), "%.*s/%s", PATH_MAX / 2, cwd, user) >=
			 sizeof(tmpl))
			tmpl[0] = 0;
		if (bot_report_dir_expand(tmpl, "1", "u", probe, sizeof(probe), err,
					  sizeof(err)) < 0) {
			bot_log_esc_inplace(err, sizeof(err));
			slurm_spank_log("nccl-bot: warning: NCCL_BOT_REPORT_DIR: %s; the report goes "
					"to the default directory", err);
			tmpl[0] = 0;
		}
	}
	if (!tmpl[0] && a->report_dir[0])
		snprintf(tmpl, sizeof(tmpl), "%s", a->report_dir);
	if (!tmpl[0] && cwd_template(workdir, cwd, sizeof(cwd) - 16) == 0)
		snprintf(tmpl, sizeof(tmpl), "%.*s/nccl-bot-%%j", PATH_MAX - 16, cwd);
	if (!tmpl[0]) {
		unsetenv(BOT_SPANK_REPORT_VAR);
		unsetenv(BOT_SPANK_REPORT_INFO_VAR);
		return;
	}
	snprintf(info, sizeof(info), "%s %s %s", shadow ? "shadow" : "on",
		 plugin == BOT_REPORT_PLUGIN_KEPT ? "kept" :
		 plugin == BOT_REPORT_PLUGIN_REPLACED ? "replaced" : "none", source);
	bot_log_esc_inplace(info, sizeof(info));
	if (setenv(BOT_SPANK_REPORT_VAR, tmpl, 1) < 0 ||
	    setenv(BOT_SPANK_REPORT_INFO_VAR, info, 1) < 0) {
		unsetenv(BOT_SPANK_REPORT_VAR);
		unsetenv(BOT_SPANK_REPORT_INFO_VAR);
	}
}

/* What srun knew of the step at local_user_init (at its exit Slurm 22.05
 * answers ESPANK_NOT_AVAIL): its nodes and tasks, 0 unknown. */
static uint32_t step_nodes, step_tasks;

void bot_spank_report_step(spank_t sp)
{
	if (spank_get_item(sp, S_JOB_NNODES, &step_nodes) != ESPANK_SUCCESS)
		step_nodes = 0;
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &step_tasks) != ESPANK_SUCCESS)
		step_tasks = 0;
}

void bot_spank_report_step_size(uint32_t nodes, uint32_t tasks)
{
	step_nodes = nodes;
	step_tasks = tasks;
}

static long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint32_t env_u32(const char *a, const char *b)
{
	const char *v = getenv(a);
	char *end;
	unsigned long x;

	if (!v && b)
		v = getenv(b);
	if (!v || *v < '0' || *v > '9')
		return 0;
	x = strtoul(v, &end, 10);
	return *end || x > 0xffffffful ? 0 : (uint32_t)x;
}

static void quiet(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= BOT_LOG_WARN)
		slurm_debug("nccl-bot: %s", msg);
}

/* A heterogeneous step's nodes and tasks: srun's environment has each
 * component's (SLURM_HET_SIZE of them); 0 when it does not say. */
static void het_counts(uint32_t *nnodes, uint32_t *ntasks)
{
	uint32_t size = env_u32("SLURM_HET_SIZE", NULL), n = 0, t = 0;
	char a[64], b[64];

	if (size < 2 || size > 4096)
		return;
	for (uint32_t k = 0; k < size; k++) {
		snprintf(a, sizeof(a), "SLURM_STEP_NUM_NODES_HET_GROUP_%u", k);
		snprintf(b, sizeof(b), "SLURM_NNODES_HET_GROUP_%u", k);
		n += env_u32(a, b);
		snprintf(a, sizeof(a), "SLURM_STEP_NUM_TASKS_HET_GROUP_%u", k);
		snprintf(b, sizeof(b), "SLURM_NTASKS_HET_GROUP_%u", k);
		t += env_u32(a, b);
	}
	if (n)
		*nnodes = n;
	if (t)
		*ntasks = t;
}

/* The parts srun's summary takes (formats.md 17): its job's (every
 * component's), its step's, its token's, the user's. */
static size_t step_parts(const char *dir, const struct bot_report_filter *f,
			 struct bot_report_set *set, const struct bot_log *log)
{
	if (bot_report_dir_select(dir, f, set, log) < 0)
		return 0;
	return set->n;
}

int bot_spank_local_exit(spank_t sp)
{
	const struct bot_log log = { quiet, NULL };
	const char *tmpl = getenv(BOT_SPANK_REPORT_VAR), *tok = getenv(BOT_SPANK_REPORT_TOKEN_VAR);
	struct bot_report_filter f;
	struct bot_report_set set;
	struct bot_report_part m;
	uint32_t job = 0, step = 0, nnodes = 0, ntasks = 0, het;
	char jobs[16], steps[16], name[40], dir[PATH_MAX], err[PATH_MAX + 128], line[2 * PATH_MAX];
	struct passwd *pw;
	int measured, have_state = 0;
	struct bot_report_totals tot;
	struct bot_state st;
	const char *names[1] = { NULL };
	const struct bot_kb *kbs[1] = { NULL };
	struct bot_report_states states = { 1, names, kbs };
	struct bot_report_lookup lookup = { bot_report_state_arms, &states };
	char why[BOT_STATE_ERR_MAX + 64];

	if (!tmpl || !*tmpl)
		return 0;
	/* at srun's exit Slurm 22.05 answers ESPANK_NOT_AVAIL for the ids: its
	 * own environment has them (the user's srun: their own summary) */
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !job)
		job = env_u32("SLURM_JOB_ID", "SLURM_JOBID");
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
		if (!getenv("SLURM_STEP_ID") && !getenv("SLURM_STEPID"))
			return 0;
		step = env_u32("SLURM_STEP_ID", "SLURM_STEPID");
	}
	/* a heterogeneous job's parts are its leader's (formats.md 17) */
	het = env_u32("SLURM_HET_JOB_ID", NULL);
	if (het && env_u32("SLURM_HET_SIZE", NULL) > 1)
		job = het;
	if (!job)
		return 0;
	/* what local_user_init recorded wins: for a heterogeneous step the
	 * items here are its first component's (observed, 22.05) */
	if (step_nodes)
		nnodes = step_nodes;
	else if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS || !nnodes)
		nnodes = env_u32("SLURM_STEP_NUM_NODES", "SLURM_NNODES");
	if (step_tasks)
		ntasks = step_tasks;
	else if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS || !ntasks)
		ntasks = env_u32("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS");
	if (!step_nodes || !step_tasks)
		het_counts(&nnodes, &ntasks);
	snprintf(jobs, sizeof(jobs), "%u", job);
	snprintf(steps, sizeof(steps), "%u", step);
	snprintf(name, sizeof(name), "%u.%u", job, step);
	pw = getpwuid(getuid());
	if (bot_report_dir_expand(tmpl, jobs, pw ? pw->pw_name : NULL, dir, sizeof(dir), err,
				  sizeof(err)) < 0) {
		slurm_debug("nccl-bot: %s", err);
		return 0;
	}
	/* parts come from the nodes' harvest helper: none installed here, none
	 * expected there (one plugstack.conf for the cluster) */
	measured = getenv(BOT_SPANK_MEASURE_VAR) && !strcmp(getenv(BOT_SPANK_MEASURE_VAR), "1") &&
		   access(bot_spank.args.harvest_helper, X_OK) == 0;
	f.job = jobs;
	f.step = steps;
	f.token = tok && strlen(tok) == 16 ? strtoull(tok, NULL, 16) : 0;
	memset(&set, 0, sizeof(set));
	if (measured) {
		long end = ms_now() + REPORT_WAIT_MS;

		/* a poll of the directory: the nodes write their parts as the
		 * step ends, srun only waits a bounded time for them (this
		 * run's parts only: a stale part of the same job id is not) */
		while (step_parts(dir, &f, &set, &log) < (nnodes ? nnodes : 1) && ms_now() < end) {
			bot_report_set_free(&set);
			poll(NULL, 0, REPORT_POLL_MS);
		}
	} else {
		step_parts(dir, &f, &set, &log);
	}
	bot_report_part_init(&m);
	for (size_t i = 0; i < set.n; i++)
		if (bot_report_merge(&m, &set.v[i], BOT_REPORT_SAME_STEP) < 0)
			break;
	bot_report_set_free(&set);
	if (!m.nparts)
		bot_report_part_info(&m, getenv(BOT_SPANK_REPORT_INFO_VAR));
	/* srun knows how many ranks the step has (every component of a
	 * heterogeneous one): a node whose part did not arrive still counts */
	if (ntasks > m.expected_ranks)
		m.expected_ranks = ntasks;
	/* arms the step did not measure (AUTO's, once learning moved off it):
	 * the fabric's state before NCCL's cost model (formats.md 17), read in
	 * a bounded child; a state that cannot be had is the cost model */
	if (m.nparts && !m.shadow && bot_spank.args.state_dir[0]) {
		if (bot_spank_report_state(bot_spank.args.state_dir, m.fabric,
					   bot_spank.args.timeout_ms, &m, &st, why,
					   sizeof(why)) == 0) {
			names[0] = st.fabric;
			kbs[0] = st.kb;
			m.lookup = &lookup;
			have_state = 1;
		} else {
			bot_log_esc_inplace(why, sizeof(why));
			slurm_debug("nccl-bot: report: %s; arms not measured come from NCCL's cost "
				    "model", why);
		}
	}
	bot_report_summary(&m, name, dir, line, sizeof(line));
	bot_log_esc_inplace(line, sizeof(line));
	bot_report_totals(&m, &tot);
	if (!asked_for() && ((m.nparts && !tot.ranks_loaded) || (!m.nparts && !measured))) {
		/* a step that ran no NCCL under the administrator's default
		 * (`srun hostname`): its parts say so; no line on the user's
		 * terminal for every such step (srun -v shows it); nor for a
		 * step nothing was measured of (no parts expected). A step
		 * whose parts were expected and did not come is said below */
		slurm_verbose("%s", line);
	} else if (!m.nparts && measured) {
		char why_not[2 * PATH_MAX + 256];

		/* the parts are written as the user, as srun runs: a directory
		 * this user cannot write here is the likely reason, said */
		report_dir_problem(dir, why_not, sizeof(why_not));
		bot_log_esc_inplace(why_not, sizeof(why_not));
		slurm_spank_log("%s (no node's part arrived within %d s%s%s)", line,
				REPORT_WAIT_MS / 1000, why_not[0] ? ": " : "", why_not);
	}
	else
		slurm_spank_log("%s", line);
	bot_report_part_free(&m);
	if (have_state)
		bot_state_free(&st);
	return 0;
}
