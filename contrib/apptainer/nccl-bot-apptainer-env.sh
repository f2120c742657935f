#!/bin/sh
# nccl-bot: the APPTAINERENV_ copies of the step's variables, for
# `apptainer exec --cleanenv` and `--containall`, which start from an empty
# environment but set NAME from APPTAINERENV_NAME (Singularity:
# SINGULARITYENV_NAME).
#
# Run it from Slurm's TaskProlog (slurm.conf TaskProlog=, or call it from
# the site's own): a TaskProlog's "export NAME=VALUE" lines on standard
# output become the task's environment. It prints one such line per
# variable and runtime:
#  - NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN when they are nccl-bot's
#    decision (equal to their SLURM_NCCL_BOT_PIN_ copies);
#  - every NCCL_BOT_* variable.
# Values holding a newline are skipped (none of ours does); nothing else is
# read or changed.
set -eu

copy() {
	case $2 in
	*"
"*) return 0 ;;
	esac
	printf 'export APPTAINERENV_%s=%s\n' "$1" "$2"
	printf 'export SINGULARITYENV_%s=%s\n' "$1" "$2"
}

for name in NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN; do
	eval "val=\${$name-} pin=\${SLURM_NCCL_BOT_PIN_$name-}"
	if [ -n "$val" ] && [ "$val" = "$pin" ]; then
		copy "$name" "$val"
	fi
done
for name in $(env | sed -n 's/^\(NCCL_BOT_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u); do
	eval "val=\${$name-}"
	copy "$name" "$val"
done
exit 0
