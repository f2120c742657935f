#!/bin/sh
# run-live.sh - `make check` driver for the live NCCL check (tests/live/).
#
# First runs `live_nccl --selftest` (the checks on canned NCCL logs and
# spool files: needs no GPU), then tests/live/live_nccl against the built
# libnccl-tuner-bot.so: two processes on GPU 0 posing as two hosts
# (NCCL_HOSTID) over Socket/lo, so NCCL really calls the tuner and the
# profiler; see tests/live/README.md. Exit 77 (automake SKIP) with a reason
# when the program was not built (configure found no CUDA or NCCL) or when
# there is no GPU, but only if the selftest passed: a failed selftest is
# exit 1 (the GPU check still runs where there is a GPU). Run from the top
# build directory (automake does). Environment: NCCL_BOT_SO overrides the
# plugin, LIVE_LOGDIR the directory for everything the check writes (the
# ranks' logs, the spool, report.txt, selftest/) [tests/live/logs].
set -u
top=$(pwd)
so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot.so}
bin=$top/tests/live/live_nccl
logdir=${LIVE_LOGDIR:-$top/tests/live/logs}
if [ ! -x "$bin" ]; then
	echo "SKIP: tests/live/live_nccl not built: configure found no CUDA runtime and NCCL" \
		"(--with-cuda=DIR --with-nccl=DIR)"
	exit 77
fi
if [ ! -f "$so" ]; then
	echo "run-live.sh: $so not built" >&2
	exit 99
fi
so=$(cd "$(dirname "$so")" && pwd)/$(basename "$so")
mkdir -p "$logdir" || exit 99

"$bin" --selftest "$logdir/selftest"
st=$?
if [ "$st" -ne 0 ]; then
	echo "run-live.sh: live_nccl --selftest failed (exit $st): the live check's own log" \
		"parsing or spool checks are wrong; reports in $logdir/selftest/*/report.txt"
fi

"$bin" "$so" "$logdir"
rc=$?
if [ "$rc" -eq 77 ]; then
	# counted by tests/summarize.sh next to the selftest's line
	echo "live: 0 passed, 0 failed, 1 skipped"
fi
if [ "$st" -ne 0 ]; then
	exit 1
fi
exit "$rc"
