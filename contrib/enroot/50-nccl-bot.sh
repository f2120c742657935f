#!/bin/sh
# nccl-bot: enroot hook (link or copy into /etc/enroot/hooks.d/, executable).
#
# enroot starts a container with the image's environment; the variables the
# SPANK plugin set for the step would be lost. This hook runs on the host at
# container start, with the task's environment, and appends to
# $ENROOT_ENVIRON (KEY=VALUE lines, read after the image's):
#  - NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN when they are nccl-bot's
#    decision for the step (equal to their SLURM_NCCL_BOT_PIN_ copies): a
#    user's own plugin, or the image's, is left alone;
#  - every NCCL_BOT_* variable (the table, the spool, the report directory).
# A value holding a newline cannot be written as one line and is skipped
# (none of ours holds one). Nothing else is read or changed.
set -eu
[ -n "${ENROOT_ENVIRON:-}" ] || exit 0

keep() {
	case $2 in
	*"
"*) echo "nccl-bot hook: $1 holds a newline; not kept" >&2; return 0 ;;
	esac
	printf '%s=%s\n' "$1" "$2" >>"$ENROOT_ENVIRON"
}

for name in NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN; do
	eval "val=\${$name-} pin=\${SLURM_NCCL_BOT_PIN_$name-}"
	if [ -n "$val" ] && [ "$val" = "$pin" ]; then
		keep "$name" "$val"
	fi
done
# Names only from `env`; the values through the shell, never parsed from text.
for name in $(env | sed -n 's/^\(NCCL_BOT_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u); do
	eval "val=\${$name-}"
	keep "$name" "$val"
done
exit 0
