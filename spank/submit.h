/*
 * submit.h - what a submission names before the job exists: the partition
 * and the account of an sbatch or salloc, for the decision made at
 * submission (spank/allocator.c). Slurm hands a SPANK plugin neither the
 * command's options nor the batch script's #SBATCH lines, so they are
 * read here the way sbatch reads them: its own command line (the options
 * before the first non-option argument, which is sbatch's script), the
 * script's leading #SBATCH block, and slurm.conf's Default=YES partition.
 * Precedence, as sbatch's: the command line, then the environment
 * (SBATCH_PARTITION...: the caller's), then the script, then the default.
 *
 * Pure parsers over bytes already read (bounded by the caller, as the
 * user); no Slurm here, so the unit test and the fuzz target drive them.
 * A value that does not fit, or anything the scan cannot tell, leaves the
 * field unknown (""): the decision then says so, it never guesses.
 */
#ifndef BOT_SPANK_SUBMIT_H
#define BOT_SPANK_SUBMIT_H

#include <limits.h>
#include <stddef.h>

#define BOT_SPANK_SUBMIT_VALUE_MAX 1024	/* a partition list or account, NUL included */
#define BOT_SPANK_SCRIPT_READ_MAX 65536	/* bytes of a batch script read for #SBATCH */
#define BOT_SPANK_SCRIPT_LINES_MAX 4096	/* lines of it looked at */
#define BOT_SPANK_CONF_READ_MAX (4u << 20)	/* bytes of slurm.conf */

struct bot_spank_submit {
	char partition[BOT_SPANK_SUBMIT_VALUE_MAX];	/* "" not named */
	char account[BOT_SPANK_SUBMIT_VALUE_MAX];	/* "" not named */
	char script[PATH_MAX];		/* sbatch's script; "" none (stdin, --wrap) */
	char chdir[PATH_MAX];		/* -D/--chdir: the job's working directory; "" not named */
	int gpus;	/* an option asks for a GPU (-G, --gpus, --gpus-per-*, --gres or
			 * --tres-per-task naming gpu, mps or shard, with a count other
			 * than 0); 1 when the scan is unsure (it may) */
	int gpus_named;	/* an option names GPUs (0 included): it, not the command's
			 * variables or the script, decides */
	char export_[4096];	/* sbatch's --export ("" none; salloc has none) */
	int export_file;	/* sbatch's --export-file (command line or #SBATCH):
				 * sbatch replaces its own environment with the
				 * file's after the plugin ran (Slurm 22.05-25.05) */
	int unsure;	/* the command line holds an option the scan cannot read
			 * (another plugin's flag, an ambiguous prefix): partition and
			 * account are "" and must not be guessed from elsewhere */
};

/*
 * The command line as /proc/self/cmdline has it (argv NUL-separated, n
 * bytes, argv[0] first and skipped): -p/--partition and -A/--account
 * among the options before the first non-option argument (a later one
 * wins, as with getopt), and that argument as the script when sbatch
 * says so (want_script; never with --wrap). Fills s (zeroed first).
 */
void bot_spank_submit_cmdline(const char *buf, size_t n, int want_script,
			      struct bot_spank_submit *s);

/*
 * A batch script's first n bytes: the #SBATCH lines of its leading block
 * (after the "#!" line, up to the first line that is neither blank nor a
 * comment, or the first "#SBATCH hetjob" (a later component's lines);
 * BOT_SPANK_SCRIPT_LINES_MAX lines at most; a line cut by n is not read),
 * -p/--partition and -A/--account in them (a later one wins).
 * Only the fields of s still "" are filled. 0, or -1 when the bytes are
 * no batch script (no "#!" first line: sbatch refuses those).
 */
int bot_spank_submit_script(const char *buf, size_t n, struct bot_spank_submit *s);

/*
 * slurm.conf's first n bytes: the partition with Default=YES (the last
 * one, as slurmctld keeps it) into out. 0, or -1 when none is named there
 * (Include'd files are not followed: then unknown too).
 */
int bot_spank_conf_default_partition(const char *buf, size_t n, char *out, size_t len);

/*
 * srun's command line (as bot_spank_submit_cmdline reads one, with srun's
 * options), what the step is decided by that srun keeps out of its own
 * environment (spank/local.c): `srun --gpus=1` and `--export=...` set
 * nothing there a plugin could read. gpus: 1 when an option before the
 * command asks for a GPU (the `gpus` rule of struct bot_spank_submit);
 * export_list: --export's value (the last one), NULL when none, pointing
 * into a static copy (valid until the next call). Every component of a
 * heterogeneous step's command line ("A : B") is read.
 */
struct bot_spank_srun {
	int gpus;			/* 1 also when unsure */
	const char *export_list;	/* NULL also when unsure */
	int unsure;	/* an option the scan cannot read (another plugin's flag) */
};
void bot_spank_srun_cmdline(const char *buf, size_t n, struct bot_spank_srun *r);

/*
 * What the tasks' variable `name` will be under an --export list (srun's
 * or sbatch's: "ALL,NAME=value", "NONE", "A,B"; items split at commas
 * outside double quotes, ALL/NONE/NIL in any case), given its value
 * env_value in the launcher's environment (NULL: unset): NULL for NONE or
 * NIL anywhere (srun reads no further); with ALL, env_value, else the
 * list's NAME=value (the launcher's environment is applied last); without
 * ALL, the list's NAME=value (into out, outlen bytes; NULL when it does not
 * fit), env_value where the list names NAME alone, NULL where it does not
 * name it. list NULL (no --export): env_value.
 */
const char *bot_spank_export_value(const char *list, const char *name, const char *env_value,
				   char *out, size_t outlen);

/*
 * The command's own input variables for GPUs, PREFIX + GPUS, GPUS_PER_NODE,
 * GPUS_PER_TASK, GPUS_PER_SOCKET, GRES, TRES_PER_TASK (SBATCH_, SALLOC_),
 * read with get: 1 when one asks for a GPU (as its option would), 0 when
 * they name GPUs with a count of 0 only, -1 when none names GPUs.
 */
int bot_spank_submit_env_gpus(const char *prefix, const char *(*get)(const char *name));

#endif
