/*
 * plugin.c - spank_nccl_bot.so's entry points: the slurm_spank_* callbacks
 * Slurm looks up, each dispatching by spank_context() to the file that
 * owns that context (like NVIDIA's pyxis): spank/local.c (srun),
 * spank/allocator.c (sbatch, salloc), spank/remote.c (slurmstepd),
 * spank/job_script.c (prolog and epilog). Also owns the plugin's state in
 * this process and the two log sinks learn/ writes to.
 *
 * Every callback returns success unless a user's own command must stop
 * (a refused --nccl-bot value, in the option's callback). The plugin is
 * meant to be loaded `optional` (doc/slurm.md): nothing here may fail a
 * node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spank/context.h"
#include "spank/option.h"

#ifndef BOT_HARVEST_HELPER
#define BOT_HARVEST_HELPER "/usr/libexec/nccl-bot/nccl-bot-harvest-read"
#endif

#ifndef BOT_RANK_LIBDIR
#define BOT_RANK_LIBDIR "/opt/nccl-bot/" PACKAGE_VERSION "/lib"
#endif

SPANK_PLUGIN(nccl_bot, 1);

struct bot_spank_plugin bot_spank;

static void user_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == BOT_LOG_ERROR)
		slurm_spank_log("nccl-bot: error: %s", msg);
	else if (level == BOT_LOG_WARN)
		slurm_spank_log("nccl-bot: warning: %s", msg);
	else
		slurm_debug("nccl-bot: %s", msg);
}

static void daemon_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == BOT_LOG_ERROR)
		slurm_error("nccl-bot: %s", msg);
	else if (level == BOT_LOG_WARN)
		slurm_info("nccl-bot: warning: %s", msg);
	else
		slurm_debug("nccl-bot: %s", msg);
}

const struct bot_log bot_spank_user_log = { user_log, NULL };
const struct bot_log bot_spank_daemon_log = { daemon_log, NULL };

/* The name %n stands for: this node's name where Slurm says it (slurmd's
 * processes), else the host's short name (srun, sbatch, salloc). */
static const char *node_name(spank_t sp, char *buf, size_t len)
{
	const char *v = getenv("SLURMD_NODENAME");

	if (v && *v && strlen(v) < len)
		return strcpy(buf, v);
	if (spank_remote(sp) == 1 && spank_getenv(sp, "SLURMD_NODENAME", buf, (int)len) ==
	    ESPANK_SUCCESS && *buf)
		return buf;
	if (gethostname(buf, len) < 0)
		return NULL;
	buf[len - 1] = 0;
	buf[strcspn(buf, ".")] = 0;
	return buf;
}

/* The plugin's arguments into bot_spank: once per process (slurm_spank_init,
 * or job_prolog/job_epilog, which Slurm calls without slurm_spank_init). */
static void setup(spank_t sp, spank_context_t ctx, int ac, char **av)
{
	const char *node;

	if (bot_spank.setup_done) {
		/* a second plugstack.conf line naming this plugin: Slurm loads
		 * the same object twice, so both lines' hooks share one state
		 * and each runs twice (two summaries, the second line's
		 * arguments over the first's); off, loudly, in every context
		 * alike, until one line is removed (nccl-bot doctor names it) */
		bot_spank.args_ok = 0;
		snprintf(bot_spank.args_err, sizeof(bot_spank.args_err), "plugstack.conf loads "
			 "spank_nccl_bot.so on two lines; remove one");
		slurm_error("nccl-bot: %s; nccl-bot is off", bot_spank.args_err);
		return;
	}
	memset(&bot_spank, 0, sizeof(bot_spank));
	bot_spank_args_defaults(&bot_spank.args, BOT_RANK_LIBDIR);
	snprintf(bot_spank.args.harvest_helper, sizeof(bot_spank.args.harvest_helper), "%s",
		 BOT_HARVEST_HELPER);
	node = node_name(sp, bot_spank.node, sizeof(bot_spank.node));
	if (!node)
		bot_spank.node[0] = 0;
	bot_spank.args_ok = bot_spank_args_parse(&bot_spank.args, ac, av, node,
						 bot_spank.args_err,
						 sizeof(bot_spank.args_err)) == 0;
	if (!bot_spank.args_ok) {
		/* A broken line turns nccl-bot off, loudly in the logs; users
		 * hear it when they ask for it (spank/local.c). */
		if (ctx == S_CTX_REMOTE || ctx == S_CTX_SLURMD || ctx == S_CTX_JOB_SCRIPT)
			slurm_error("nccl-bot: %s; nccl-bot is off", bot_spank.args_err);
		else
			slurm_debug("nccl-bot: %s; nccl-bot is off", bot_spank.args_err);
	}
	bot_spank.setup_done = 1;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	setup(sp, ctx, ac, av);
	switch (ctx) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
	case S_CTX_REMOTE:
		bot_spank_option_register(sp);
		break;
	default:
		break;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return bot_spank_local_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return bot_spank_alloc_post_opt(sp);
	case S_CTX_REMOTE:
		return bot_spank_remote_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_LOCAL)
		return bot_spank_local_user_init(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		return bot_spank_remote_user_init(sp);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		return bot_spank_remote_task_init(sp);
	return 0;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	static int calls;

	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	/* a second line's call in the same process (see setup): once */
	if (calls++)
		return 0;
	if (!bot_spank.setup_done)
		setup(sp, S_CTX_JOB_SCRIPT, ac, av);
	return bot_spank_job_prolog(sp);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	static int calls;

	if (spank_context() != S_CTX_JOB_SCRIPT)
		return 0;
	if (calls++)
		return 0;
	if (!bot_spank.setup_done)
		setup(sp, S_CTX_JOB_SCRIPT, ac, av);
	return bot_spank_job_epilog(sp);
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		return bot_spank_remote_task_exit(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		return bot_spank_remote_exit(sp);
	if (spank_context() == S_CTX_LOCAL)
		return bot_spank_local_exit(sp);
	return 0;
}
