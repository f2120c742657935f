/*
 * job_script.c - the prolog/epilog context: slurmstepd's "spank epilog"
 * process, as root, once per node of a job after it ends.
 *
 * Owns the job's end on each node: the sweep of spool directories its
 * steps left behind on this node (a slurmstepd that crashed or was killed
 * before its slurm_spank_exit harvested). They are removed, not harvested:
 * a step that ended that way may have left half-written files, the epilog
 * has no step facts (step id, step nodes) to stamp a delta with, and its
 * time is the node's (a slow epilog hits PrologEpilogTimeout, which drains
 * the node). Removal goes through spank/spooldir.h: a directory fd, links
 * removed and never followed, a bounded number of entries. It must never
 * fail (a failing epilog drains the node, optional plugin or not), never
 * make a slurmctld RPC and never touch a shared filesystem.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spank/context.h"
#include "spank/spooldir.h"

#define SWEEP_MAX_SCAN 100000u	/* entries of spool_dir looked at */

int bot_spank_job_epilog(spank_t sp)
{
	char err[PATH_MAX + 256];
	struct dirent *e;
	unsigned scanned = 0, removed = 0;
	uint32_t job = 0;
	int base, lfd;
	DIR *d;

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
		if (bot_spank_spool_remove(base, e->d_name, err, sizeof(err)) < 0)
			slurm_error("nccl-bot: epilog of job %u: spool_dir %s: %s", job,
				    bot_spank.args.spool_dir, err);
		else
			removed++;
	}
	closedir(d);
	close(base);
	if (removed)
		slurm_info("nccl-bot: epilog of job %u: removed %u spool director%s a step left "
			   "unharvested", job, removed, removed == 1 ? "y" : "ies");
	return 0;
}
