#!/bin/sh
# hotpath.sh - ns per getCollInfo of the built libnccl-tuner-bot.so at 1,
# 100 and 2,000 step-table contexts, side by side in one run with a no-op
# plugin and a 100-rule linear scan (NCCL's example tuner's shape), then
# callgrind instructions per call when valgrind is installed. Prints the
# ratios against the targets: median <= 25 ns and <= 0.5x the scan.
#
# usage: bench/hotpath.sh [path/to/libnccl-tuner-bot.so] [calls]
# Run from the top of the source tree after `make` (CC and CFLAGS honoured).
# With one context the call stream hits that context (7 calls in 8), which is
# also the scan's best case (its first rule matches): a conservative ratio.
# The "corr" row: every call through the scale corrections (the slow path);
# "corr-4ln": the same with the 4-lane (no AVX2) build, when it is built.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in -*) echo "usage: bench/hotpath.sh [path/to/libnccl-tuner-bot.so] [calls]" >&2; exit 2 ;; esac
so=${1:-$top/tuner/libnccl-tuner-bot.so}
calls=${2:-4000000}
case $calls in
''|*[!0-9]*|0) echo "hotpath.sh: calls must be a positive integer, not '$calls'" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -f "$so" ] || { echo "hotpath.sh: $so not built (run make)" >&2; exit 1; }
so=$(cd "$(dirname "$so")" && pwd)/$(basename "$so")
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 ${CFLAGS:-} -I"$top" -o "$tmp/hotpath" \
	"$top/bench/hotpath.c" "$top/common/table_decode.c" "$top/common/table_encode.c" \
	"$top/policies/context.c" -ldl

echo "== ns per call (median / p99 over batches of 256 calls), $(uname -m), $calls calls each"
"$tmp/hotpath" "$so" "$calls" | tee "$tmp/out"
# The corr row again with the library built without the AVX2 scan (what
# CPUs without AVX2 run; aarch64 runs the same 4-lane code), when `make check`
# built it next to the library.
so4=$(dirname "$so")/libnccl-tuner-bot-noavx2.so
if [ -f "$so4" ]; then
	"$tmp/hotpath" "$so4" "$calls" corr | sed -n 's/^corr    /corr-4ln/p' | tee -a "$tmp/out"
fi
awk 'NR > 1 {
	ok = ($2 <= 25 && $8 <= 0.5) ? "ok" : "MISS"
	printf "contexts %-8s median %.2f ns = %.2fx the 25 ns target; %.3fx the scan (target <= 0.5), %.3fx net of the call: %s\n",
		$1, $2, $2 / 25, $8, $9, ok
}' "$tmp/out"

if command -v valgrind >/dev/null 2>&1; then
	echo "== callgrind instructions per call (difference of two runs, loop included)"
	ir() {
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
			"$tmp/hotpath" "${4:-$so}" --count "$1" "$2" "$3" 2>&1 |
			sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
	}
	for nctx in 1 100 2000 corr; do
		line="contexts $nctx:"
		for v in noop scan bot; do
			a=$(ir $v 100000 $nctx)
			b=$(ir $v 300000 $nctx)
			eval "ir_$v=\$(( (b - a) / 200000 ))"
			line="$line $v $(( (b - a) / 200000 ))"
		done
		echo "$line  bot/scan $(awk -v b=$ir_bot -v s=$ir_scan 'BEGIN { printf "%.3f", b / s }')"
	done
	if [ -f "$so4" ]; then
		a=$(ir bot 100000 corr "$so4")
		b=$(ir bot 300000 corr "$so4")
		echo "contexts corr-4ln: bot $(( (b - a) / 200000 ))"
	fi
else
	echo "== valgrind not installed: no callgrind counts"
fi

# Measurement cost (bench/profcost.c): getCollInfo without a spool vs with
# the measuring object (window down-counter), and the profiler cost per
# collective (8 channels) with the mask 0 vs a window open.
echo "== measurement: getCollInfo and profiler cost per collective (median)"
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 ${CFLAGS:-} -I"$top" -o "$tmp/profcost" "$top/bench/profcost.c" -ldl
"$tmp/profcost" "$so" "$calls"
