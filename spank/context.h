/*
 * context.h - what the per-context files of spank_nccl_bot.so share: the
 * plugin's state in this process (its plugstack.conf arguments and the
 * user's option as it reached this process) and one entry point per
 * callback each context implements. spank/plugin.c dispatches to them by
 * spank_context(); every Slurm process loads the plugin afresh, so this
 * state never outlives one srun, sbatch, salloc, slurmstepd or prolog.
 */
#ifndef BOT_SPANK_CONTEXT_H
#define BOT_SPANK_CONTEXT_H

#include "learn/log.h"
#include "spank/args.h"
#include "spank/compat.h"

struct bot_spank_plugin {
	struct bot_spank_args args;
	int args_ok;				/* the arguments parsed */
	char args_err[BOT_SPANK_ERR_MAX];	/* else why not */
	int opt_seen;				/* --nccl-bot reached this process */
	char opt_value[128];			/* its value ("" for a bare option) */
	int opt_null;				/* NULL, "" or "(null)": a bare option */
	int setup_done;				/* the arguments were parsed in this process */
	char node[256];				/* this node's name (%n), "" not known */
};

extern struct bot_spank_plugin bot_spank;

/* learn/ messages to the user (local and allocator context): errors and
 * warnings on the terminal, the rest at debug level. */
extern const struct bot_log bot_spank_user_log;
/* learn/ messages to the slurmd log (remote and job_script context). */
extern const struct bot_log bot_spank_daemon_log;

/* spank/local.c: srun */
int bot_spank_local_post_opt(spank_t sp);
int bot_spank_local_user_init(spank_t sp);

/* spank/report.c: the report directory pinned with the decision (plugin:
 * learn/report.h's enum bot_report_plugin; source: the decision's;
 * workdir: the batch job's -D/--chdir, NULL for this process's working
 * directory), taken out with the pins; srun's one-line summary at the
 * step's end */
void bot_spank_report_pin(const struct bot_spank_args *a, int shadow, int plugin,
			  const char *source, const char *workdir);
void bot_spank_report_unpin(void);
int bot_spank_local_exit(spank_t sp);
void bot_spank_report_step(spank_t sp);	/* at local_user_init: the step's size */
void bot_spank_report_step_size(uint32_t nodes, uint32_t tasks);	/* ... of a het step */

/* spank/allocator.c: sbatch and salloc */
int bot_spank_alloc_post_opt(spank_t sp);

/* spank/remote.c: slurmstepd */
int bot_spank_remote_user_init(spank_t sp);
int bot_spank_remote_task_init(spank_t sp);
int bot_spank_remote_post_opt(spank_t sp);	/* the step's spool directory */
int bot_spank_remote_task_exit(spank_t sp);	/* its harvest after the last task */
int bot_spank_remote_exit(spank_t sp);		/* ... or at the step's end */

/* spank/remote.c, used by job_script.c too: the job's facts the prolog
 * recorded (spank/jobfacts.h) into a delta's identity (account and bit4,
 * GPUs when nnodes is 1, het ids, the job string; 0, or -1 when there are
 * none), and the harvest of one spool directory of basefd into a delta
 * stamped with id (cluster, when empty, fabric and node filled here),
 * bounded by left ms. */
struct bot_delta_hdr;
struct bot_spank_jobfacts;
struct timespec;
int bot_spank_job_facts(int base, uint32_t job, uint32_t nnodes, struct bot_delta_hdr *id,
			struct bot_spank_jobfacts *jf);
/* extra: the helper's report arguments after DIR (the step's harvest),
 * NULL for none (the epilog's harvest of a leftover writes no part: the
 * step's pinned report directory is not in the epilog's environment). */
void bot_spank_harvest_dir(spank_t sp, const char *name, struct bot_delta_hdr *id, long left,
			   char *const *extra, const char *what, const struct timespec *t0);

/* spank/job_script.c: the job's prolog and epilog on each node */
int bot_spank_job_prolog(spank_t sp);	/* the job's facts (spank/jobfacts.h) */
int bot_spank_job_epilog(spank_t sp);

/* spank/local.c, used by allocator.c too: decide for a step launched from
 * this process and put the decision into its environment (setenv). seed:
 * the step's. what: "step" or "batch step" for messages. sub: NULL for
 * srun (the fabric from the job's nodes, the partition and account from
 * the job's environment); at submission (sbatch, salloc) what the
 * submission names (spank/submit.h; "" not known, with why), the
 * partitions' fabric from the map. */
struct bot_spank_submission {
	const char *partition, *account;	/* "" not known */
	const char *partition_why, *account_why;	/* why not, for messages */
	int gpus;	/* the submission asks for a GPU (spank/submit.h) */
	const char *chdir;	/* the job's -D/--chdir, "" not named */
	const char *export_list;	/* sbatch's --export (SBATCH_EXPORT), NULL none */
	int export_file;	/* sbatch's --export-file (or #SBATCH): the
				 * batch step gets the file's environment, not ours */
};

/* spank/local.c, used by allocator.c too: this process's own command line
 * (/proc/self/cmdline, NUL-separated words) into buf, at most max bytes;
 * its length (0 when it cannot be read). */
size_t bot_spank_own_cmdline(char *buf, size_t max);
int bot_spank_decide_here(uint64_t seed, const char *what,
			  const struct bot_spank_submission *sub);

#endif
