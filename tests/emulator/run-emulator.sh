#!/bin/sh
# run-emulator.sh - `make check` driver for the NCCL emulator.
#
# Runs nccl-emu's check suite (fixtures, ABI per NCCL release, consistency
# of every scenario and policy) against the built libnccl-tuner-bot.so, and
# for the check suite also the consistency suite without step tables (every
# policy on the prior, from NCCL_BOT_POLICY: probes, sweep counters).
# Run from the top build directory (automake does). Environment:
#   NCCL_BOT_SO   plugin to test [tuner/libnccl-tuner-bot.so]
#   EMU_SUITE     check | long | fixtures | abi | cap | consistency [check]
#   EMU_ARGS      extra nccl-emu options (e.g. "--calls 1000000")
#   EMU_LONG_NCCL releases the long suite runs on [2.28 2.29 2.30]: AUTO's
#                 search cap is 3.6e9 on 2.28, FLT_MAX on 2.29 (tuner v5,
#                 known from ncclGetVersion()) and 2.30 (tuner v6)
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
if [ "${EMU_SUITE:-check}" = long ]; then
	rc=0
	for v in ${EMU_LONG_NCCL:-2.28 2.29 2.30}; do
		echo "# the long suite on NCCL $v"
		# shellcheck disable=SC2086
		"$emu" --suite long --nccl "$v" --plugin "$so" --fixtures "$fix" ${EMU_ARGS:-} ||
			rc=1
	done
	exit $rc
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
