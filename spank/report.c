/*
 * report.c - the user's report of a step, on the launcher's side
 * (doc/formats.md section 17): where the report directory is, decided
 * once with the step and pinned (SLURM_NCCL_BOT_REPORT_DIR, with the
 * decision's facts in SLURM_NCCL_BOT_REPORT_INFO), and srun's one-line
 * summary at the step's end (the local context's slurm_spank_exit, as the
 * user): a bounded wait for the nodes' parts, merged, one line on the
 * terminal. The parts themselves are written on the nodes by the harvest
 * reader as the user (tools/harvest_read.c, started by spank/remote.c);
 * nothing here runs as root.
 */
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "learn/report.h"
#include "policies/context.h"
#include "spank/context.h"
#include "spank/decide.h"

/* srun's wait for the nodes' parts (formats.md section 17). */
#define REPORT_WAIT_MS 3000
#define REPORT_POLL_MS 50

void bot_spank_report_unpin(void)
{
	unsetenv(BOT_SPANK_REPORT_VAR);
	unsetenv(BOT_SPANK_REPORT_INFO_VAR);
}

/* The working directory with '%' doubled (a template's literal). */
static int cwd_template(char *out, size_t len)
{
	char cwd[PATH_MAX];
	size_t k = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	for (const char *p = cwd; *p; p++) {
		if (k + 3 >= len)
			return -1;
		if (*p == '%')
			out[k++] = '%';
		out[k++] = *p;
	}
	out[k] = 0;
	return 0;
}

void bot_spank_report_pin(const struct bot_spank_args *a, int shadow, int plugin,
			  const char *source)
{
	char tmpl[PATH_MAX], cwd[PATH_MAX], probe[PATH_MAX], err[PATH_MAX + 128];
	char info[PATH_MAX + 64];
	const char *user = getenv("NCCL_BOT_REPORT_DIR");

	tmpl[0] = 0;
	if (user && *user) {
		if (user[0] == '/')
			snprintf(tmpl, sizeof(tmpl), "%s", user);
		else if (cwd_template(cwd, sizeof(cwd)) == 0 &&
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
	if (!tmpl[0] && cwd_template(cwd, sizeof(cwd) - 16) == 0)
		snprintf(tmpl, sizeof(tmpl), "%.*s/nccl-bot-%%j", PATH_MAX - 16, cwd);
	if (!tmpl[0]) {
		bot_spank_report_unpin();
		return;
	}
	snprintf(info, sizeof(info), "%s %s %s", shadow ? "shadow" : "on",
		 plugin == BOT_REPORT_PLUGIN_KEPT ? "kept" :
		 plugin == BOT_REPORT_PLUGIN_REPLACED ? "replaced" : "none", source);
	bot_log_esc_inplace(info, sizeof(info));
	if (setenv(BOT_SPANK_REPORT_VAR, tmpl, 1) < 0 ||
	    setenv(BOT_SPANK_REPORT_INFO_VAR, info, 1) < 0)
		bot_spank_report_unpin();
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

int bot_spank_local_exit(spank_t sp)
{
	const struct bot_log log = { quiet, NULL };
	const char *tmpl = getenv(BOT_SPANK_REPORT_VAR);
	struct bot_report_set set;
	struct bot_report_part m;
	uint32_t job = 0, step = 0, nnodes = 0, ntasks = 0;
	char jobs[16], steps[16], name[40], dir[PATH_MAX], err[PATH_MAX + 128], line[2 * PATH_MAX];
	struct passwd *pw;
	int measured;

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
	if (!job)
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS || !nnodes)
		nnodes = step_nodes ? step_nodes : env_u32("SLURM_STEP_NUM_NODES", "SLURM_NNODES");
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS || !ntasks)
		ntasks = step_tasks ? step_tasks : env_u32("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS");
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
	if (measured) {
		long end = ms_now() + REPORT_WAIT_MS;

		/* a poll of the directory: the nodes write their parts as the
		 * step ends, srun only waits a bounded time for them */
		while (bot_report_dir_count(dir, jobs, steps) < (int)(nnodes ? nnodes : 1) &&
		       ms_now() < end)
			poll(NULL, 0, REPORT_POLL_MS);
	}
	bot_report_part_init(&m);
	if (bot_report_dir_read(dir, jobs, steps, &set, &log) == 0) {
		for (size_t i = 0; i < set.n; i++)
			if (bot_report_merge(&m, &set.v[i], BOT_REPORT_SAME_STEP) < 0)
				break;
		bot_report_set_free(&set);
	}
	if (!m.nparts) {
		bot_report_part_info(&m, getenv(BOT_SPANK_REPORT_INFO_VAR));
		m.expected_ranks = ntasks;
	}
	bot_report_summary(&m, name, dir, line, sizeof(line));
	bot_log_esc_inplace(line, sizeof(line));
	if (!m.nparts && measured)
		slurm_spank_log("%s (no node's part arrived within %d s)", line,
				REPORT_WAIT_MS / 1000);
	else
		slurm_spank_log("%s", line);
	bot_report_part_free(&m);
	return 0;
}
