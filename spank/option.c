/*
 * option.c - the user's option --nccl-bot[=POLICY|shadow|off]
 * (spank/option.h).
 */
#include <stdio.h>
#include <string.h>

#include "spank/context.h"
#include "spank/decide.h"
#include "spank/option.h"

static int opt_cb(int val, const char *optarg, int remote);

static char opt_name[] = "nccl-bot";
static char opt_arginfo[] = "POLICY|shadow|off";
static char opt_usage[] =
	"(optional argument) run the step's NCCL collectives under nccl-bot's tuner: the "
	"cluster's policy, or POLICY if this cluster lets users pick it; shadow only "
	"measures; off keeps nccl-bot out even where the administrator enabled it. "
	"See spank_nccl_bot(8).";

static struct spank_option opt = {
	opt_name, opt_arginfo, opt_usage, 2 /* optional argument */, 0, opt_cb,
};

static int opt_cb(int val, const char *optarg, int remote)
{
	char err[BOT_SPANK_ERR_MAX];
	int kind, policy;

	(void)val;
	bot_spank.opt_seen = 1;
	bot_spank.opt_null = !optarg || !*optarg || !strcmp(optarg, "(null)");
	snprintf(bot_spank.opt_value, sizeof(bot_spank.opt_value), "%s",
		 bot_spank.opt_null ? "" : optarg);
	if (remote)
		return 0;	/* decided where the user typed it: never again here */
	/* which policies users may pick matters only where nccl-bot is on:
	 * with enable=off the step runs without it whatever was picked, and
	 * is told so (bot_spank_gate); the value's spelling is still checked */
	if (bot_spank_opt_parse(optarg, bot_spank.args_ok &&
				bot_spank.args.enable != BOT_SPANK_ENABLE_OFF ? &bot_spank.args :
				NULL, &kind, &policy, err, sizeof(err)) < 0) {
		slurm_error("nccl-bot: %s", err);
		return -1;
	}
	return 0;
}

int bot_spank_option_register(spank_t sp)
{
	spank_err_t rc = spank_option_register(sp, &opt);

	if (rc != ESPANK_SUCCESS) {
		slurm_error("nccl-bot: cannot register --nccl-bot: %s", spank_strerror(rc));
		return -1;
	}
	return 0;
}
