/*
 * allocator.c - sbatch and salloc (the allocator context, as the user).
 *
 * Owns the table pinned at submission: sbatch's batch step (the script's
 * own processes) and salloc's shell get the decision made here, with what
 * is known before the job exists (its partition and account only when the
 * environment names them: SBATCH_PARTITION, ...; a partitions= filter with
 * the partition unknown leaves the batch step without nccl-bot). Each srun
 * inside the allocation decides its own step again (spank/local.c): the
 * option reaches it through the SLURM_SPANK_* variable Slurm sets for the
 * batch script, and what this pinned is taken out or replaced there.
 */
#include "spank/context.h"

int bot_spank_alloc_post_opt(spank_t sp)
{
	(void)sp;
	return bot_spank_decide_here(0, "batch step");
}
