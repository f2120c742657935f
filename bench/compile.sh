#!/bin/sh
# compile.sh - a step table compiled from a 2,000-context snapshot (the
# work of `nccl-bot env --state` and, later, of srun before every step):
# the snapshot is generated deterministically by bench/compilebench.c
# through bot_state_encode, then timed side by side in one run: reading its
# bytes (the floor), read + parse + plan + encode in-process (median of 21),
# and the whole `nccl-bot env --state FILE --policy thompson` command (median of 11; adds the
# process start and the rank library check), and `nccl-bot --help` alone (median of 11: the
# process start, dynamic linking included). Prints the absolute times, the
# ratio to reading the bytes and the target: compile <= 20 ms.
#
# usage: bench/compile.sh [path/to/nccl-bot] [path/to/libnccl-tuner-bot.so]
# Run from the top of the source tree after `make`.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in -*) echo "usage: bench/compile.sh [path/to/nccl-bot] [path/to/libnccl-tuner-bot.so]" >&2; exit 2 ;; esac
bot=${1:-$top/nccl-bot}
so=${2:-$top/tuner/libnccl-tuner-bot.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$bot" ] && [ -f "$so" ] || { echo "compile.sh: $bot or $so not built (run make)" >&2; exit 1; }
libs=
for l in botlearn botcommon botpolicy; do
	[ -f "$top/.libs/lib$l.a" ] || { echo "compile.sh: lib$l.a not built (run make)" >&2; exit 1; }
	libs="$libs $top/.libs/lib$l.a"
done
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 ${CFLAGS:-} -I"$top" -o "$tmp/compilebench" \
	"$top/bench/compilebench.c" $libs -lm -ldl
"$tmp/compilebench" gen "$tmp/snap.nbs"
set -- $("$tmp/compilebench" time "$tmp/snap.nbs" 21)
read_ms=$2 compile_ms=$5 entries=$8
i=0
: >"$tmp/cmd"
while [ $i -lt 11 ]; do
	t0=$(date +%s%N)
	"$bot" env --state "$tmp/snap.nbs" --policy thompson --lib "$so" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/cmd"
	i=$((i + 1))
done
cmd_ms=$(sort -n "$tmp/cmd" | sed -n 6p | awk '{ printf "%.3f", $1 / 1000 }')
# the process start alone (dynamic linking included): what the command adds
i=0
: >"$tmp/start"
while [ $i -lt 11 ]; do
	t0=$(date +%s%N)
	"$bot" --help >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/start"
	i=$((i + 1))
done
start_ms=$(sort -n "$tmp/start" | sed -n 6p | awk '{ printf "%.3f", $1 / 1000 }')
awk -v r="$read_ms" -v c="$compile_ms" -v m="$cmd_ms" -v s="$start_ms" -v e="$entries" 'BEGIN {
	printf "read the snapshot bytes     %8.3f ms\n", r
	printf "compile (parse+plan+encode) %8.3f ms = %.0fx reading the bytes (%d table entries)\n", c, c / r, e
	printf "nccl-bot env --state (thompson) %4.3f ms = %.0fx reading the bytes\n", m, m / r
	printf "nccl-bot --help (process start) %4.3f ms\n", s
	printf "target: compile <= 20 ms: %s (%.2fx the target)\n", c <= 20 ? "ok" : "MISS", c / 20
}'
