/*
 * allocator.c - sbatch and salloc (the allocator context, as the user).
 *
 * Owns the table pinned at submission: sbatch's batch step (the script's
 * own processes) and salloc's shell get the decision made here, with what
 * is known before the job exists. Slurm hands a SPANK plugin neither the
 * command's options nor the script's #SBATCH lines (observed, 22.05: no
 * S_JOB_ARGV, no partition in the environment), so they are read here as
 * sbatch reads them (spank/submit.h), each in sbatch's order of
 * precedence: the partition from the command line's -p/--partition, else
 * SBATCH_PARTITION (sbatch) or SALLOC_PARTITION (salloc), else the batch
 * script's #SBATCH -p, else slurm.conf's Default=YES partition; the
 * account from -A/--account, SBATCH_ACCOUNT or SALLOC_ACCOUNT, #SBATCH -A.
 * The script (sbatch's first non-option argument; none when it comes on
 * stdin or from --wrap) and slurm.conf are read by this process, as the
 * user, bounded in size and lines, never through a link, a FIFO or a
 * device. What is still unknown stays unknown: the gate then leaves the
 * batch step alone where partitions=, accounts= or exclude_accounts= need
 * it, and says so (sbatch -v; the terminal when the user asked), and the
 * fabric is the prior's, never a guessed one (spank/local.c).
 *
 * The fabric is the one the fabric map gives those partitions
 * (spank/fabricmap.h). Each srun inside the allocation decides its own
 * step again (spank/local.c): the option reaches it through the
 * SLURM_SPANK_* variable Slurm sets for the batch script, and what this
 * pinned is taken out or replaced there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/readall.h"
#include "spank/context.h"
#include "spank/submit.h"

#define CMDLINE_MAX 65536

/* This process's own command line, bounded, read as a submission's. */
static void read_cmdline(int sbatch, struct bot_spank_submit *s)
{
	char *buf = malloc(CMDLINE_MAX + 1);
	size_t n;

	memset(s, 0, sizeof(*s));
	if (!buf)
		return;
	n = bot_spank_own_cmdline(buf, CMDLINE_MAX);
	if (n)
		bot_spank_submit_cmdline(buf, n, sbatch, s);
	free(buf);
}

/* The first max bytes of path (the user's file, read as the user), the
 * safe way (common/readall.h: no link, FIFO or device). 0 with *len. */
static int read_head(const char *path, const char *what, size_t max, char *buf, size_t *len)
{
	const struct bot_open_rule rule = { .what = what, .max = (size_t)1 << 40 };
	char err[PATH_MAX + 256];
	struct stat st;
	ssize_t r;
	int fd = bot_open_at(AT_FDCWD, path, path, &rule, &st, err, sizeof(err));

	*len = 0;
	if (fd < 0) {
		bot_log_esc_inplace(err, sizeof(err));
		slurm_debug("nccl-bot: %s: not read", err);
		return -1;
	}
	while (*len < max) {
		r = read(fd, buf + *len, max - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	return 0;
}

/* The slurm.conf sbatch reads: SLURM_CONF, else the default. */
static const char *conf_path(void)
{
	const char *conf = getenv("SLURM_CONF");

	return conf && conf[0] == '/' ? conf : "/etc/slurm/slurm.conf";
}

int bot_spank_alloc_post_opt(spank_t sp)
{
	static struct bot_spank_submit s;
	static char why[2][128];
	int sbatch = strcmp(program_invocation_short_name, "salloc") != 0;
	const char *env;
	size_t n;
	char *buf;

	(void)sp;
	read_cmdline(sbatch, &s);
	why[0][0] = why[1][0] = 0;
	if (s.unsure) {
		/* an option the scan cannot read: a -p or -A after it is not
		 * seen, so nothing is guessed from the environment, the
		 * script or slurm.conf either */
		snprintf(why[0], sizeof(why[0]), "%s's command line has an option nccl-bot cannot "
			 "read", sbatch ? "sbatch" : "salloc");
		snprintf(why[1], sizeof(why[1]), "%s", why[0]);
		{
			/* an --export-file before the option not read is sbatch's */
			const struct bot_spank_submission sub = { "", "", why[0], why[1], s.gpus,
								  "", NULL, s.export_file };

			return bot_spank_decide_here(0, "batch step", &sub);
		}
	}
	/* each command reads its own variables, which beat the script */
	if (!s.partition[0] && (env = getenv(sbatch ? "SBATCH_PARTITION" : "SALLOC_PARTITION")) &&
	    strlen(env) < sizeof(s.partition))
		strcpy(s.partition, env);
	if (!s.account[0] && (env = getenv(sbatch ? "SBATCH_ACCOUNT" : "SALLOC_ACCOUNT")) &&
	    strlen(env) < sizeof(s.account))
		strcpy(s.account, env);
	/* as sbatch reads them: the command line, the environment, the script */
	if (!s.gpus_named) {
		int e = bot_spank_submit_env_gpus(sbatch ? "SBATCH_" : "SALLOC_", bot_getenv);

		if (e >= 0) {
			s.gpus = e;
			s.gpus_named = 1;
		}
	}
	if (sbatch && !s.export_[0] && (env = getenv("SBATCH_EXPORT")) &&
	    strlen(env) < sizeof(s.export_))
		strcpy(s.export_, env);
	/* --export-file has no input variable (sbatch 22.05 to 25.05 reads no
	 * SBATCH_EXPORT_FILE); the script is read for an #SBATCH one also
	 * when the command line names everything else */
	buf = (!s.partition[0] || !s.account[0] || !s.gpus_named || !s.chdir[0] ||
	       (sbatch && (!s.export_[0] || !s.export_file))) ?
	      malloc(BOT_SPANK_CONF_READ_MAX) : NULL;
	if (buf && s.script[0] && read_head(s.script, "batch script", BOT_SPANK_SCRIPT_READ_MAX,
					    buf, &n) == 0 &&
	    bot_spank_submit_script(buf, n, &s) < 0)
		slurm_debug("nccl-bot: %s is no batch script (no #! line): no #SBATCH read",
			    s.script);
	if (buf && !s.partition[0]) {
		if (read_head(conf_path(), "slurm.conf", BOT_SPANK_CONF_READ_MAX, buf, &n) == 0 &&
		    bot_spank_conf_default_partition(buf, n, s.partition, sizeof(s.partition)) == 0)
			slurm_debug("nccl-bot: the partition is %s's default, %s", conf_path(),
				    s.partition);
	}
	free(buf);
	if (!s.partition[0])
		snprintf(why[0], sizeof(why[0]), "not given by -p, %s, #SBATCH -p or a "
			 "Default=YES partition", sbatch ? "SBATCH_PARTITION" : "SALLOC_PARTITION");
	if (!s.account[0])
		snprintf(why[1], sizeof(why[1]), "not given by -A, %s%s", sbatch ? "SBATCH_ACCOUNT"
			 : "SALLOC_ACCOUNT", sbatch ? " or #SBATCH -A" : "");
	{
		const struct bot_spank_submission sub = { s.partition, s.account, why[0], why[1],
							  s.gpus, s.chdir,
							  s.export_[0] ? s.export_ : NULL,
							  s.export_file };

		return bot_spank_decide_here(0, "batch step", &sub);
	}
}
