#!/usr/bin/env bash
# bench/replay_fabrics.sh - the replay against the number of fabric names:
# the same rows, 65,536 contexts of 4 arms (262,144 rows, about 23 MB),
# once under 256 fabric names (256 node counts each) and once under 65,536
# (one context each), the names introduced in neither name nor number order.
# Every per-name step of the path (the sweep reader's name lookup, the
# dataset's name order, the per-fabric summaries, the per-round fabric
# loops) scales with the names, so the time ratio 65,536 / 256 names says
# whether one of them is quadratic: near 1x when none is (0.5-0.6x on
# 2 shared CPUs: 10.1 s / 18.8 s; fewer names share more neighbours to
# plan from), 4x with the scans this replaced (81 s / 20 s).
#
# Data: `nccl-bot sim` h100-ib-ndr, allreduce 1 MiB at 16 nodes, one sample
# of ring/ll, ring/ll128, ring/simple and tree/simple, copied under fabric
# fab-XXXX (XXXX = (j * 40503) mod N in hex, j the copy) and nnodes 16 + k
# (the k-th context of that fabric; nranks = 8 nnodes).
# Run: replay --test-nodes 16-65535 --policy thompson --no-tune (jobs mode).
# Prints wall seconds and peak memory per run, then the ratio.
#
# Usage: bench/replay_fabrics.sh [--contexts 65536] [--names "256 65536"]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps data and outputs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
contexts=65536
names="256 65536"
. "$here/bench/lib.sh"
bench_init bench/replay_fabrics.sh "contexts names" "$@"
timer=
[ -x /usr/bin/time ] && timer=/usr/bin/time

# sweep NAMES OUT: $contexts contexts spread over NAMES fabric names
sweep() {
	"$bot" sim --fabric h100-ib-ndr --nodes 16 --samples 1 --coll allreduce \
		--min-bytes 1MiB --max-bytes 1MiB |
		awk -F, -v OFS=, -v n="$1" -v blocks="$contexts" '
		NR == 1 { print; next }
		$6 == "ring" || ($6 == "tree" && $7 == "simple") { row[++m] = $0 }
		END {
			if (n > 65536 || blocks / n > 65535 - 16) {
				print "bench/replay_fabrics.sh: " n " names for " blocks " contexts: " \
					"at most 65536 names and 65519 contexts a name" >"/dev/stderr"
				exit 1
			}
			for (b = 0; b < blocks; b++) {
				j = b % n; k = int(b / n)
				for (i = 1; i <= m; i++) {
					split(row[i], f, ",")
					f[1] = sprintf("fab-%04x", (j * 40503) % n)
					f[5] = 16 + k; f[4] = f[5] * 8
					line = f[1]
					for (c = 2; c <= 13; c++) line = line "," f[c]
					print line
				}
			}
		}' >"$2"
}

# run NAMES: one replay; appends "NAMES WALL RSS" to $tmp/results
run() {
	local data=$tmp/names-$1.csv out=$tmp/names-$1.json t0 t1
	local -a args=(replay --data "$data" --test-nodes 16-65535 --policy thompson --no-tune
		--progress never --format json)
	if [ -n "$timer" ]; then
		$timer -f "%e %M" -o "$tmp/time" "$bot" "${args[@]}" >"$out" 2>"$out.err" ||
			{ echo "bench/replay_fabrics.sh: failed: $1 names" >&2; cat "$out.err" >&2; exit 1; }
	else
		t0=$(date +%s.%N)
		"$bot" "${args[@]}" >"$out" 2>"$out.err" ||
			{ echo "bench/replay_fabrics.sh: failed: $1 names" >&2; cat "$out.err" >&2; exit 1; }
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f 0\n", b - a }' >"$tmp/time"
	fi
	read -r wall rss <"$tmp/time"
	echo "$1 $wall $rss" >>"$tmp/results"
	awk -v n="$1" -v w="$wall" -v r="$rss" -v c="$contexts" 'BEGIN {
		printf "  %6d names  %6d contexts  wall %7.2f s  peak %6.0f MB\n", n, c, w, r / 1024 }'
}

: >"$tmp/results"
echo "# bench/replay_fabrics.sh: $contexts contexts, names {$names}, $(nproc 2>/dev/null || echo ?) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
for n in $names; do
	sweep "$n" "$tmp/names-$n.csv"
	run "$n"
done
awk 'NR == 1 { n0 = $1; w0 = $2 }
     NR > 1 { printf "  %d names / %d names: wall %.2fx\n", $1, n0, (w0 > 0 ? $2 / w0 : 0) }' "$tmp/results"
