/*
 * option.h - the user's option --nccl-bot[=POLICY|shadow|off].
 *
 * Owns the option's registration (from slurm_spank_init, in every
 * context that takes options: srun, sbatch and salloc list it in --help
 * and accept it; `#SBATCH --nccl-bot` too) and its callback, which checks
 * the value where the user typed it (srun, sbatch, salloc: a refused value
 * fails the command with a message naming the allowed policies) and only
 * records it elsewhere (slurmstepd calls it once or twice, so it is
 * idempotent). The value as it reached this process is in
 * bot_spank_plugin.opt_*.
 */
#ifndef BOT_SPANK_OPTION_H
#define BOT_SPANK_OPTION_H

#include "spank/compat.h"

/* Register the option. 0, or -1 (logged) when Slurm refuses it. */
int bot_spank_option_register(spank_t sp);

#endif
