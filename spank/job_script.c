/*
 * job_script.c - the prolog/epilog context: slurmstepd's "spank epilog"
 * process, as root, once per node of a job after it ends.
 *
 * Owns the job's end on each node. Today it does nothing and returns
 * success: slurmd decides at start whether any plugin has an epilog, so
 * having one from the first release means the later sweep of what crashed
 * steps left (the epilogue harvest) needs no slurmd restart. It must never
 * fail (a failing epilog drains the node, optional plugin or not), never
 * make a slurmctld RPC and never touch a shared filesystem.
 */
#include "spank/context.h"

int bot_spank_job_epilog(spank_t sp)
{
	(void)sp;
	return 0;
}
