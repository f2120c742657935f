/*
 * job_script.c - the prolog/epilog context: slurmstepd's "spank prolog" and
 * "spank epilog" processes, as root, once per node of a job, at its start
 * and after its end.
 *
 * Owns the job's facts and the job's end on each node. The prolog records
 * what only it knows, from slurmd's environment for the job, for the
 * step's harvest (spank/jobfacts.h: the account, GPUs, heterogeneous job id
 * and start). The epilog harvests each spool directory a step left here (a
 * slurmstepd that crashed or was killed before its harvest) into a delta
 * through the same helper and bounds as the step's harvest (spank/
 * remote.c), stamped with what the epilog knows (root-side facts only),
 * then removes it and the facts file. Its time is the node's (a slow
 * epilog hits PrologEpilogTimeout, which drains the node): all its
 * harvests share one bound, and removal goes through spank/spooldir.h (a
 * directory fd, links removed and never followed, a bounded number of
 * entries). It must never fail (a failing epilog drains the node, optional
 * plugin or not), never make a slurmctld RPC and never touch a shared
 * filesystem.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/delta.h"
#include "spank/context.h"
#include "spank/jobfacts.h"
#include "spank/spooldir.h"

#define SWEEP_MAX_SCAN 100000u	/* entries of spool_dir looked at */
/* What all of one epilog's harvests of leftovers may take together (the
 * epilog's time is the node's: PrologEpilogTimeout drains it). */
#define EPILOG_HARVEST_MS 2000u

/*
 * The job's prolog on this node (root; with PrologFlags=Alloc at the
 * allocation, else before the node's first step): its environment is
 * slurmd's for the job, built from slurmctld's message and never from the
 * user's (observed, 22.05: a user's SLURM_JOB_ACCOUNT does not reach it),
 * so what it says of the account, GPUs and heterogeneous job is trusted.
 * It is written where the step's harvest (root, spank/remote.c) reads it.
 * One small file and one fsync; never fails the prolog.
 */
int bot_spank_job_prolog(spank_t sp)
{
	struct bot_spank_jobfacts f;
	char err[PATH_MAX + 256], name[BOT_SPANK_SPOOL_NAME_MAX];
	uint32_t job = 0;
	int base;

	if (!bot_spank.args_ok || bot_spank.args.enable == BOT_SPANK_ENABLE_OFF ||
	    !bot_spank.args.outbox_dir[0] ||
	    spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !job ||
	    bot_spank_jobfacts_name(job, bot_spank.node, name, sizeof(name)) < 0)
		return 0;
	bot_spank_jobfacts_from_env(&f, bot_getenv);
	f.start = (uint64_t)time(NULL);
	base = bot_spank_spool_base(bot_spank.args.spool_dir, 1, err, sizeof(err));
	if (base < 0) {
		slurm_error("nccl-bot: prolog of job %u: %s; its deltas carry no account", job,
			    err);
		return 0;
	}
	if (bot_spank_jobfacts_write(base, name, &f, err, sizeof(err)) < 0)
		slurm_error("nccl-bot: prolog of job %u: spool_dir %s: %s; its deltas carry no "
			    "account", job, bot_spank.args.spool_dir, err);
	close(base);
	return 0;
}

/* A decimal of the epilog's environment (slurmd's, root-side): 0, or -1. */
static int env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || *v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n >= 0xfffffff0ul)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* What the epilog knows of the job, for every leftover's delta. */
struct leftover_ctx {
	int ready;			/* looked for the facts */
	int ok;				/* enough of them to harvest */
	struct bot_delta_hdr proto;	/* the identity, less restart and step */
	char why[128];			/* else why not */
};

static void leftover_facts(spank_t sp, int base, uint32_t job, struct leftover_ctx *c)
{
	struct bot_spank_jobfacts jf;
	const char *cl = getenv("SLURM_CLUSTER_NAME");
	uint32_t uid, gid, nnodes;

	(void)sp;
	c->ready = 1;
	memset(&c->proto, 0, sizeof(c->proto));
	if (env_u32("SLURM_JOB_UID", &uid) < 0 || env_u32("SLURM_JOB_GID", &gid) < 0 ||
	    env_u32("SLURM_JOB_NUM_NODES", &nnodes) < 0 || !nnodes) {
		snprintf(c->why, sizeof(c->why), "the epilog's environment lacks the job's "
			 "uid, gid or node count");
		return;
	}
	c->proto.uid = uid;
	c->proto.gid = gid;
	c->proto.step_nodes = nnodes;	/* the job's: at least the step's */
	c->proto.array_task = BOT_DELTA_NONE;
	/* an array task: both ids, as the step's harvest names it */
	if (env_u32("SLURM_ARRAY_JOB_ID", &c->proto.array_job) < 0 ||
	    env_u32("SLURM_ARRAY_TASK_ID", &c->proto.array_task) < 0 || !c->proto.array_job) {
		c->proto.array_job = 0;
		c->proto.array_task = BOT_DELTA_NONE;
	}
	if (bot_spank_job_facts(base, job, nnodes, &c->proto, &jf) < 0 || !jf.start ||
	    jf.start > (uint64_t)time(NULL)) {
		snprintf(c->why, sizeof(c->why), "the job's start is not known (no facts from "
			 "its prolog)");
		return;
	}
	c->proto.t_start = jf.start;
	if (cl && *cl && strlen(cl) < sizeof(c->proto.cluster) &&
	    strspn(cl, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
	    strlen(cl))
		snprintf(c->proto.cluster, sizeof(c->proto.cluster), "%s", cl);
	c->ok = 1;
}

/* A leftover spool directory into a delta, within the epilog's budget. */
static void harvest_leftover(spank_t sp, int base, uint32_t job, const char *name,
			     struct leftover_ctx *c, const struct timespec *t0)
{
	struct bot_delta_hdr id;
	char err[PATH_MAX + 256], what[320];
	uint32_t restart, step;
	int dfd;

	if (!c->ready)
		leftover_facts(sp, base, job, c);
	if (!c->ok) {
		slurm_info("nccl-bot: epilog of job %u: %s not harvested: %s", job, name, c->why);
		return;
	}
	if (bot_spank_spool_parse(name, job, bot_spank.node, &restart, &step) < 0)
		return;
	dfd = bot_spank_spool_open(base, name, c->proto.uid, err, sizeof(err));
	if (dfd < 0) {
		slurm_error("nccl-bot: epilog of job %u: spool_dir %s: %s; not harvested", job,
			    bot_spank.args.spool_dir, err);
		return;
	}
	close(dfd);
	id = c->proto;
	id.restart = restart;
	id.step = step;
	snprintf(what, sizeof(what), "epilog of job %u: %s", job, name);
	bot_spank_harvest_dir(sp, name, &id, (long)EPILOG_HARVEST_MS - ms_since(t0), NULL, what,
			      t0);
}

/*
 * The job's epilog on this node (root): each spool directory a step of the
 * job left here (its slurmstepd died before its harvest) is harvested into
 * a delta, as the step's harvest would, with what the epilog knows (doc/
 * formats.md section 13, "What a crashed step left"), then removed. All
 * the harvests share EPILOG_HARVEST_MS; past it a directory is only
 * removed. Then the job's facts file goes. Always returns success.
 */
int bot_spank_job_epilog(spank_t sp)
{
	char err[PATH_MAX + 256], name[BOT_SPANK_SPOOL_NAME_MAX];
	struct leftover_ctx c;
	struct timespec t0;
	struct dirent *e;
	unsigned scanned = 0, removed = 0;
	uint32_t job = 0;
	int base, lfd;
	DIR *d;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&c, 0, sizeof(c));
	if (!bot_spank.args_ok || !bot_spank.node[0] ||
	    spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !job)
		return 0;
	base = bot_spank_spool_base(bot_spank.args.spool_dir, 0, err, sizeof(err));
	if (base < 0) {
		if (errno != ENOENT)
			slurm_error("nccl-bot: epilog of job %u: %s", job, err);
		return 0;
	}
	lfd = dup(base);
	d = lfd < 0 ? NULL : fdopendir(lfd);
	if (!d) {
		if (lfd >= 0)
			close(lfd);
		close(base);
		return 0;
	}
	while ((e = readdir(d)) && scanned++ < SWEEP_MAX_SCAN) {
		if (!bot_spank_spool_of_job(e->d_name, job, bot_spank.node))
			continue;
		if (bot_spank.args.enable != BOT_SPANK_ENABLE_OFF)
			harvest_leftover(sp, base, job, e->d_name, &c, &t0);
		if (bot_spank_spool_remove(base, e->d_name, err, sizeof(err)) < 0)
			slurm_error("nccl-bot: epilog of job %u: spool_dir %s: %s", job,
				    bot_spank.args.spool_dir, err);
		else
			removed++;
	}
	closedir(d);
	if (bot_spank_jobfacts_name(job, bot_spank.node, name, sizeof(name)) == 0 &&
	    unlinkat(base, name, 0) < 0 && errno != ENOENT)
		slurm_error("nccl-bot: epilog of job %u: spool_dir %s: cannot remove %s: %s", job,
			    bot_spank.args.spool_dir, name, strerror(errno));
	close(base);
	if (removed)
		slurm_info("nccl-bot: epilog of job %u: removed %u spool director%s a step left "
			   "unharvested (%ld ms)", job, removed, removed == 1 ? "y" : "ies",
			   ms_since(&t0));
	return 0;
}
