/*
 * args.h - the plugstack.conf arguments of spank_nccl_bot.so.
 *
 * Owns the words an administrator writes after the plugin's path in
 * plugstack.conf ("enable=default mode=shadow policy=greedy ..."), their
 * defaults, and the rules that check them: every value goes through the
 * settings grammar (common/settings.h) where it is a number or a policy,
 * every bad word is an error naming the argument, and "%n" in a path is
 * the node name (several slurmd on one host each get their own paths).
 * No Slurm here: the unit test and the fuzz target run it without one.
 * spank(8) lists the arguments (man/spank_nccl_bot.8).
 */
#ifndef BOT_SPANK_ARGS_H
#define BOT_SPANK_ARGS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define BOT_SPANK_LIST_MAX 1024		/* a comma-separated list, NUL included */
#define BOT_SPANK_ERR_MAX 512
#define BOT_SPANK_FABRIC_MAX 65		/* formats.md section 12's names, NUL included */

enum bot_spank_enable {
	BOT_SPANK_ENABLE_OFF = 0,	/* nobody gets nccl-bot, the option is refused */
	BOT_SPANK_ENABLE_OPT_IN = 1,	/* only steps that ask with --nccl-bot */
	BOT_SPANK_ENABLE_DEFAULT = 2,	/* every step, but those that say --nccl-bot=off */
};

enum bot_spank_mode {
	BOT_SPANK_MODE_SHADOW = 0,	/* ranks measure and report, NCCL's choice stands */
	BOT_SPANK_MODE_ON = 1,		/* the policy decides */
};

struct bot_spank_args {
	int enable;			/* enum bot_spank_enable, default opt-in */
	int mode;			/* enum bot_spank_mode, default shadow */
	int policy;			/* the default policy (formats.md section 10), default greedy */
	uint32_t policies;		/* bit per policy a user may pick; policy= always in */
	char partitions[BOT_SPANK_LIST_MAX];	/* "" = every partition */
	char accounts[BOT_SPANK_LIST_MAX];	/* "" = every account */
	char exclude_accounts[BOT_SPANK_LIST_MAX];
	unsigned min_bytes_log2;	/* default 20 (1 MiB) */
	char state_dir[PATH_MAX];	/* "" = no learned state: the prior */
	char outbox_dir[PATH_MAX];
	char spool_dir[PATH_MAX];
	char lib_prefix[PATH_MAX];	/* the directory of libnccl-tuner-bot.so */
	char fabric_map[PATH_MAX];
	char report_dir[PATH_MAX];
	char kill_switch[PATH_MAX];	/* "" = none */
	char config[PATH_MAX];		/* the site YAML (learn/siteconf.h); "" = none read */
	char harvest_helper[PATH_MAX];	/* nccl-bot-harvest-read (spank/remote.c) */
	char fabric[BOT_SPANK_FABRIC_MAX];	/* the fabric of every node; "" = unknown */
	char fabric_why[256];		/* not an argument: why the step has no fabric
					 * (set where the step's nodes were resolved) */
	uint64_t timeout_ms;		/* bound on building a step's table, default 2000 */
	int require_gpus;		/* 0/1, default 0 */
	unsigned set;			/* bit per argument given (enum bot_spank_arg) */
};

/* The arguments, in the order of the man page. */
enum bot_spank_arg {
	BOT_SPANK_A_ENABLE, BOT_SPANK_A_MODE, BOT_SPANK_A_POLICY, BOT_SPANK_A_POLICIES,
	BOT_SPANK_A_PARTITIONS, BOT_SPANK_A_ACCOUNTS, BOT_SPANK_A_EXCLUDE_ACCOUNTS,
	BOT_SPANK_A_MIN_BYTES, BOT_SPANK_A_STATE_DIR, BOT_SPANK_A_OUTBOX_DIR,
	BOT_SPANK_A_SPOOL_DIR, BOT_SPANK_A_LIB_PREFIX, BOT_SPANK_A_FABRIC_MAP,
	BOT_SPANK_A_REPORT_DIR, BOT_SPANK_A_KILL_SWITCH, BOT_SPANK_A_REQUIRE_GPUS,
	BOT_SPANK_A_CONFIG, BOT_SPANK_A_FABRIC, BOT_SPANK_A_TIMEOUT_MS,
	BOT_SPANK_A_HARVEST_HELPER, BOT_SPANK_A_COUNT
};

/* The argument's name ("enable"). */
const char *bot_spank_arg_name(enum bot_spank_arg a);

/* Every default; lib_prefix is default_lib_prefix (the configured rank
 * library directory). */
void bot_spank_args_defaults(struct bot_spank_args *a, const char *default_lib_prefix);

/*
 * Parse ac words av (as SPANK hands them to every callback) over the
 * defaults already in *a. node is the node name for "%n" (NULL or "": a
 * path with %n is an error: where the node is not known, such a path
 * cannot be used). 0, or -1 with "ARG=VALUE: reason" in err. A word that is
 * not KEY=VALUE, an unknown key, a key given twice and an empty value are
 * errors.
 */
int bot_spank_args_parse(struct bot_spank_args *a, int ac, char *const *av, const char *node,
			 char *err, size_t errlen);

/*
 * Expand "%n" in a path to node and "%%" to "%"; any other "%" is an error.
 * 0, or -1 with the reason in err (too long, a bad % sequence, %n without
 * a node, a node name holding '/').
 */
int bot_spank_path_expand(const char *in, const char *node, char *out, size_t outlen, char *err,
			  size_t errlen);

/* Is item one of the comma-separated names in list? (exact, case kept) */
int bot_spank_list_has(const char *list, const char *item);

/* Is a policy id one a user may pick (policies= or policy=)? */
int bot_spank_policy_allowed(const struct bot_spank_args *a, int policy);

/* "ucb1,greedy" into buf: the names of the policies a user may pick. */
void bot_spank_policies_str(const struct bot_spank_args *a, char *buf, size_t len);

#endif
