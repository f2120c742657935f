/*
 * decide.h - the one decision per step: does it run nccl-bot, with which
 * policy and table, and who wins between the user's plugins and ours.
 *
 * Made once, where the step is launched (srun's local context, or sbatch's
 * and salloc's allocator context for the batch step and the shell), and
 * carried to every task in the environment; code on the compute nodes
 * only copies it (spank/remote.c). No Slurm here: what the launcher knows
 * about the step comes in a struct, so the unit test drives every rule.
 *
 * Two halves:
 * - the gate (bot_spank_gate): enable=, the user's option, the kill
 *   switch, partitions/accounts filters, require_gpus, mode=shadow ->
 *   used or not, the policy, whose request it is, and why;
 * - the build (bot_spank_build): learn/stepenv.h's environment for a
 *   step, from the fabric's current snapshot when state_dir= and the
 *   fabric are known, in a child process bounded by timeout_ms (a hung
 *   shared filesystem never stalls the launch), falling back to the
 *   prior, which is built in the launcher itself.
 */
#ifndef BOT_SPANK_DECIDE_H
#define BOT_SPANK_DECIDE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "learn/log.h"
#include "spank/args.h"

/* The user's option value */
enum bot_spank_opt {
	BOT_SPANK_OPT_NONE = 0,		/* not given */
	BOT_SPANK_OPT_BARE = 1,		/* --nccl-bot: the admin's policy */
	BOT_SPANK_OPT_OFF = 2,		/* --nccl-bot=off */
	BOT_SPANK_OPT_POLICY = 3,	/* --nccl-bot=POLICY (shadow is a policy) */
};

/*
 * Parse the option's value as it reaches a context: NULL, "" and "(null)"
 * are the bare option (Slurm hands a bare option on as the text "(null)"
 * to nested sruns and the prolog/epilog). *policy is set for
 * BOT_SPANK_OPT_POLICY. 0, or -1 with a message for the user in err (an
 * unknown policy, one this cluster does not let users pick: the allowed
 * ones listed). a may be NULL: only the syntax is checked.
 */
int bot_spank_opt_parse(const char *value, const struct bot_spank_args *a, int *kind,
			int *policy, char *err, size_t errlen);

/* What the launcher knows about the step. */
struct bot_spank_step {
	int opt;			/* enum bot_spank_opt */
	int opt_policy;			/* BOT_SPANK_OPT_POLICY */
	const char *partition;		/* NULL: not known */
	const char *account;		/* NULL: not known */
	/* At submission (sbatch, salloc): why a NULL partition or account is
	 * not known (for the reason). A submission whose account is not known
	 * is left alone where exclude_accounts= is set: the job may run under
	 * the user's default account, which may be the excluded one. NULL
	 * for srun, which knows its job's. */
	const char *partition_why;
	const char *account_why;
	int has_gpus;
	int kill_switch;		/* the kill_switch= file exists */
};

struct bot_spank_gate {
	int used;			/* the step gets nccl-bot */
	int policy;			/* used: the table's policy */
	int explicit_;			/* the user asked (who wins: learn/stepenv.h) */
	int tell;			/* reason is worth the user's attention */
	char reason[PATH_MAX + 256];	/* why not used, or what changed the request */
};

void bot_spank_gate(const struct bot_spank_args *a, const struct bot_spank_step *s,
		    struct bot_spank_gate *g);

/* Does the launcher's environment ask for GPUs (get: getenv or a test's)? */
int bot_spank_env_has_gpus(const char *(*get)(const char *name));

#define BOT_SPANK_MAX_VARS 3

struct bot_spank_decision {
	int used;			/* variables to set (0: nccl-bot not used) */
	int measured;			/* the table lets ranks measure: a spool dir per node */
	size_t nvars;
	char *name[BOT_SPANK_MAX_VARS];	/* malloc()ed */
	char *value[BOT_SPANK_MAX_VARS];
	char source[320];		/* "prior" or "fabric F snapshot S", "prior (why)" */
	char note[PATH_MAX + 128];	/* learn/stepenv.h's note: who won, "" when nothing */
};

/*
 * Build the step's variables for a gate that said used; seed is the
 * step's (the job and step ids: every task has the same). user_tuner and
 * user_profiler are the launcher's NCCL_TUNER_PLUGIN/NCCL_PROFILER_PLUGIN.
 * 0 with *d filled (free with bot_spank_decision_free), or -1 when not even
 * the prior can be built (the rank library is missing here: logged).
 */
int bot_spank_build(const struct bot_spank_args *a, const struct bot_spank_gate *g,
		    uint64_t seed, const char *user_tuner, const char *user_profiler,
		    struct bot_spank_decision *d, const struct bot_log *log);
void bot_spank_decision_free(struct bot_spank_decision *d);

/* Tests only: called in the state-reading child before it reads (a test
 * makes it stall to see the bound hold). NULL in the plugin. */
extern void (*bot_spank_test_child_hook)(void);

/* The rank library a step is pointed at: <lib_prefix>/libnccl-tuner-bot.so. */
#define BOT_SPANK_RANK_SO "libnccl-tuner-bot.so"

/*
 * The variables that carry a decision past srun --export=NONE (which
 * forwards SLURM_* only): SLURM_NCCL_BOT_PIN_<name>. Remote code copies
 * each into <name>.
 */
#define BOT_SPANK_PIN_PREFIX "SLURM_NCCL_BOT_PIN_"
extern const char *const bot_spank_pinned[BOT_SPANK_MAX_VARS + 1];	/* NULL-ended */

/*
 * "1" when the step's ranks measure (the decision's measured): the remote
 * context then makes each node's spool directory and sets NCCL_BOT_SPOOL
 * to it (spank/spooldir.h: a path every node computes from its own facts,
 * so it needs no deciding there). Set with the pins, taken out with them.
 */
#define BOT_SPANK_MEASURE_VAR "SLURM_NCCL_BOT_MEASURE"

/*
 * The step's report directory (a template: %j and %u expanded where the
 * part is written, formats.md section 17) and the decision's facts for
 * the report ("MODE PLUGIN SOURCE"): set with the pins by
 * spank/report.c, taken out with them.
 */
#define BOT_SPANK_REPORT_VAR "SLURM_NCCL_BOT_REPORT_DIR"
#define BOT_SPANK_REPORT_INFO_VAR "SLURM_NCCL_BOT_REPORT_INFO"
/* The step's token (16 hex digits, formats.md section 17): which report
 * parts are this run's. Pinned with the report by spank/report.c. */
#define BOT_SPANK_REPORT_TOKEN_VAR "SLURM_NCCL_BOT_REPORT_TOKEN"
/* The fabric the decision put the step's nodes on ("-": none, the step
 * spans fabrics or a node's fabric is not known): the harvest stamps
 * deltas with it and writes none for "-" (doc/slurm.md). Pinned with the
 * report by spank/report.c. */
#define BOT_SPANK_FABRIC_VAR "SLURM_NCCL_BOT_FABRIC"

#endif
