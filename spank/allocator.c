/*
 * allocator.c - sbatch and salloc (the allocator context, as the user).
 *
 * Owns the table pinned at submission: sbatch's batch step (the script's
 * own processes) and salloc's shell get the decision made here, with what
 * is known before the job exists. Its partitions come from the command
 * line's -p/--partition, else SBATCH_PARTITION (sbatch) or
 * SALLOC_PARTITION (salloc): Slurm hands a SPANK plugin neither its options
 * nor the script's #SBATCH lines (observed, 22.05: no S_JOB_ARGV, no
 * partition in the environment). The fabric is the one the fabric map
 * gives those partitions (spank/fabricmap.h), else the batch step runs on
 * the prior, and the decision says why; a partition requested only by
 * #SBATCH -p is not seen, so that batch step runs on the prior, never on a
 * guessed fabric. A partitions= filter with the partition unknown leaves
 * the batch step without nccl-bot. Each srun inside the allocation decides
 * its own step again (spank/local.c): the option reaches it through the
 * SLURM_SPANK_* variable Slurm sets for the batch script, and what this
 * pinned is taken out or replaced there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spank/context.h"

#define CMDLINE_MAX 65536
#define PARTITION_MAX 1024

/*
 * The partitions of this process's own command line (/proc/self/cmdline):
 * the first "-p X", "-pX", "--partition X" or "--partition=X". The first,
 * because a script's own arguments follow sbatch's; the scan cannot tell
 * an option's value from the script without sbatch's option table, so a
 * "-p" among the script's arguments is taken only when sbatch's own
 * options named none (it then names a partition the map has or not: the
 * table's source, never the step's safety, is at stake). 0 found.
 */
static int cmdline_partition(char *out, size_t len)
{
	char *buf = malloc(CMDLINE_MAX + 1);
	size_t n = 0;
	ssize_t r;
	int fd, found = -1;

	if (!buf)
		return -1;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -1;
	}
	while (n < CMDLINE_MAX && (r = read(fd, buf + n, CMDLINE_MAX - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	for (size_t i = strlen(buf) + 1; i < n && found < 0;) {
		const char *a = buf + i, *v = NULL;
		size_t al = strlen(a);

		i += al + 1;
		if (!strcmp(a, "-p") || !strcmp(a, "--partition"))
			v = i < n ? buf + i : NULL;
		else if (!strncmp(a, "--partition=", 12))
			v = a + 12;
		else if (a[0] == '-' && a[1] == 'p' && a[2])
			v = a + 2;
		if (v && *v && strlen(v) < len) {
			strcpy(out, v);
			found = 0;
		}
	}
	free(buf);
	return found;
}

int bot_spank_alloc_post_opt(spank_t sp)
{
	static char part[PARTITION_MAX];
	const char *env;

	(void)sp;
	part[0] = 0;
	if (cmdline_partition(part, sizeof(part)) < 0) {
		/* each command reads its own variable */
		env = getenv(strcmp(program_invocation_short_name, "salloc") ? "SBATCH_PARTITION"
			     : "SALLOC_PARTITION");
		if (env && strlen(env) < sizeof(part))
			strcpy(part, env);
	}
	return bot_spank_decide_here(0, "batch step", part);
}
