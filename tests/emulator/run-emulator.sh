#!/bin/sh
# run-emulator.sh - `make check` driver for the NCCL emulator.
#
# Runs nccl-emu's check suite (fixtures, ABI per NCCL release, consistency
# of every scenario and policy) against the built libnccl-tuner-bot.so, and
# for the check suite also the consistency suite without step tables (every
# policy on the prior, from NCCL_BOT_POLICY: probes, sweep counters).
# Run from the top build directory (automake does). Environment:
#   NCCL_BOT_SO   plugin to test [tuner/libnccl-tuner-bot.so]
#   EMU_SUITE     check | long | fixtures | abi | consistency [check]
#   EMU_ARGS      extra nccl-emu options (e.g. "--calls 1000000")
set -u
top=$(pwd)
so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot.so}
emu=$top/tests/emulator/nccl-emu
fix=$top/tests/emulator/.libs
[ -d "$fix" ] || fix=$(dirname "$emu")
if [ ! -x "$emu" ]; then
	echo "run-emulator.sh: $emu not built" >&2
	exit 99
fi
# shellcheck disable=SC2086
"$emu" --suite "${EMU_SUITE:-check}" --plugin "$so" --fixtures "$fix" ${EMU_ARGS:-}
rc=$?
if [ "${EMU_SUITE:-check}" = check ]; then
	echo "# the same consistency suite without step tables"
	# shellcheck disable=SC2086
	"$emu" --suite consistency --no-table --plugin "$so" --fixtures "$fix" ${EMU_ARGS:-} ||
		rc=1
fi
exit $rc
