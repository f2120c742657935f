/*
 * remote.c - slurmstepd (the remote context) on each node of a step.
 *
 * Owns applying, never deciding: srun (or sbatch) decided once for the
 * whole step, and this copies the pinned values (SLURM_NCCL_BOT_PIN_*,
 * which survive --export=NONE) into the variables NCCL reads, identical
 * bytes on every node. It reads no shared state, no kill switch and no
 * configuration file: a file that differs between nodes must not give
 * some ranks nccl-bot's tuner and others NCCL's own (a hang).
 *
 * One check is per node, because it is about this node: the rank library
 * the step is pointed at must be here and be a tuner plugin. If it is not,
 * NCCL would silently run its own tuner on this node's ranks while the
 * others run ours, so each task fails before it starts, with a message
 * naming the node on the user's terminal (task_init runs in the task, as
 * the user, its output already the task's). user_init cannot stop the
 * step itself: an optional plugin's failing callback is only logged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/ranklib.h"
#include "spank/context.h"
#include "spank/decide.h"

/* Set in user_init, read in each task's task_init (a child of this
 * slurmstepd): why this node cannot run the step's tasks. */
static char node_failure[PATH_MAX + 512];

#define PIN_MAX (256 * 1024)

static int get(spank_t sp, const char *name, char *buf, int len)
{
	return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS;
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

int bot_spank_remote_task_init(spank_t sp)
{
	char node[256];

	if (!node_failure[0])
		return 0;
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
