/*
 * jobfacts.h - a job's root-side facts on one node (doc/formats.md
 * section 13, "The job's facts on a node").
 *
 * Owns the small file that carries what only the job's prolog knows to the
 * step's harvest: the job's account, its GPUs on this node and its
 * heterogeneous job id. The prolog and epilog run with slurmd's
 * environment for the job (built from slurmctld's message, never from the
 * user's), while slurmstepd has only the step's environment, which the
 * user controls, and SPANK items that have none of these (22.05). So the
 * job's prolog (root) writes <spool_dir>/.job.<job>.<node> (root, 0600),
 * the harvest (root, in slurmstepd) reads it, and the job's epilog removes
 * it. No Slurm here: the unit test drives it as any user.
 */
#ifndef BOT_SPANK_JOBFACTS_H
#define BOT_SPANK_JOBFACTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/delta.h"

#define BOT_SPANK_JOBFACTS_MAX 4096	/* the file's largest size */

struct bot_spank_jobfacts {
	char account[BOT_DELTA_STR];	/* "" unknown */
	uint32_t gpus;			/* the job's GPUs on this node, 0 unknown */
	uint32_t het_job;		/* the heterogeneous job's id (its leader), 0 none */
	uint64_t start;			/* when the prolog ran, unix seconds */
};

/* From a prolog's or epilog's environment (get: getenv or a test's):
 * SLURM_JOB_ACCOUNT (kept only when it fits the delta's account rule),
 * SLURM_JOB_GPUS (a list of indices and ranges: counted), SLURM_HET_JOB_ID;
 * start is left 0 (the caller's clock). */
void bot_spank_jobfacts_from_env(struct bot_spank_jobfacts *f,
				 const char *(*get)(const char *name));

/* The file's name for job on node: 0, or -1 (a node name outside the rule). */
int bot_spank_jobfacts_name(uint32_t job, const char *node, char *out, size_t len);

/* The text (formats.md): its length, or -1 when it does not fit. */
int bot_spank_jobfacts_encode(const struct bot_spank_jobfacts *f, char *out, size_t len);

/* Parse the text: 0, or -1 with the line and the problem in err. */
int bot_spank_jobfacts_parse(const char *buf, size_t len, struct bot_spank_jobfacts *f,
			     char *err, size_t errlen);

/* Write basefd/name (root, 0600, through a temporary, fsynced, renamed):
 * 0, or -1 with the reason in err. */
int bot_spank_jobfacts_write(int basefd, const char *name, const struct bot_spank_jobfacts *f,
			     char *err, size_t errlen);

/* Read basefd/name: a regular file owned by root with one link, at most
 * BOT_SPANK_JOBFACTS_MAX bytes, never a link followed. 0, or -1 (errno
 * ENOENT: not there; else the reason in err). */
int bot_spank_jobfacts_read(int basefd, const char *name, struct bot_spank_jobfacts *f,
			    char *err, size_t errlen);

#endif
