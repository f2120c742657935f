#!/bin/sh
# run-live.sh - `make check` driver for the live NCCL check (tests/live/).
#
# Runs tests/live/live_nccl against the built libnccl-tuner-bot.so: two
# processes on GPU 0 posing as two hosts (NCCL_HOSTID) over Socket/lo, so
# NCCL really calls the tuner; see tests/live/README.md. Exit 77 (automake
# SKIP) with a reason when the program was not built (configure found no
# CUDA or NCCL) or when there is no GPU. Run from the top build directory
# (automake does). Environment: NCCL_BOT_SO overrides the plugin,
# LIVE_LOGDIR the directory for the ranks' logs [tests/live/logs].
set -u
top=$(pwd)
so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot.so}
bin=$top/tests/live/live_nccl
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
exec "$bin" "$so" "${LIVE_LOGDIR:-$top/tests/live/logs}"
