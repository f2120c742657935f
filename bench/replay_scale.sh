#!/usr/bin/env bash
# bench/replay_scale.sh - the replay at fleet scale, side by side: jobs mode
# (20 jobs x 8 comms) on generated fleets of 10^4 and 10^5 test contexts,
# with the engine as it is and with the plain engine kept for comparison
# (`--reference`: no plan memo, one sign-flip draw at a time; the same
# numbers, which this script checks).
#
# Fleets (generated here with `nccl-bot sim`, 4 samples per arm):
#   fleet    copies of the four built-in fabrics under their own names
#            (h100-ib-ndr-c7, ...), each copy with its own noise seed, at
#            4,6,8 nodes (tuning) and 16,24,32 (scored): 1,380 scored
#            contexts per copy; 8 copies = 11,040, 73 copies = 100,740.
#   scales   ONE fabric seen at many scales (h100-ib-ndr at every node count
#            16-64, copies shifted by 64 nodes each): 5,635 scored contexts
#            per copy, every context borrowing from every other scale of its
#            size; 2 copies = 11,270, 8 = 45,080.
# Prints per run: wall and CPU seconds, peak memory, contexts per second;
# then the time ratio reference/new, and growth from 10^4 to 10^5 (time and
# memory against the 9.1x growth in contexts).
#
# Usage: bench/replay_scale.sh [--quick] [--policy LIST]
#   --quick   fleet 10^4 and scales 11,270 only (about a minute here)
#   --policy  policies to run (default thompson, the default learning
#             policy; `all` for every policy)
# NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps data and outputs.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
quick=0
policy=thompson
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--policy) [ $# -ge 2 ] || { echo "bench/replay_scale.sh: --policy needs a value" >&2; exit 2; }; policy=$2; shift ;;
	*) echo "usage: bench/replay_scale.sh [--quick] [--policy LIST]" >&2; exit 2 ;;
	esac
	shift
done
. "$here/bench/lib.sh"
bench_bot bench/replay_scale.sh
bot=$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")
bench_tmp
timer=
[ -x /usr/bin/time ] && timer=/usr/bin/time

fleet() {	# fleet COPIES OUT
	local k
	for ((k = 0; k < $1; k++)); do
		"$bot" sim --nodes 4,6,8,16,24,32 --samples 4 --seed "$k" |
			awk -F, -v OFS=, -v k="$k" 'NR == 1 { if (k == 0) print; next } { $1 = $1 "-c" k; print }'
	done >"$2"
}

scales() {	# scales COPIES OUT
	local k
	{
		"$bot" sim --fabric h100-ib-ndr --nodes 4,5,6,7,8 --samples 4 --seed 0 |
			awk -F, -v OFS=, 'NR > 1 { $1 = "scales" } { print }'
		for ((k = 0; k < $1; k++)); do
			"$bot" sim --fabric h100-ib-ndr --nodes "$(seq -s, 16 64)" --samples 4 --seed "$k" |
				awk -F, -v OFS=, -v k="$k" 'NR == 1 { next } { $1 = "scales"; $5 += 64 * k; $4 = $5 * 8; print }'
		done
	} >"$2"
}

# measure NAME DATA ENGINE: one replay; prints a result line and keeps the JSON.
measure() {
	local name=$1 data=$2 engine=$3 out=$tmp/$1-$3.json args=()
	[ "$engine" = reference ] && args=(--reference)
	if [ -n "$timer" ]; then
		$timer -f "%e %U %S %M" -o "$tmp/time" "$bot" replay --data "$data" --test-nodes 16-65535 \
			--mode jobs --jobs 20 --comms 8 --policy "$policy" --progress never --format json \
			${args[@]+"${args[@]}"} >"$out" 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
	else
		local t0 t1
		t0=$(date +%s.%N)
		"$bot" replay --data "$data" --test-nodes 16-65535 --mode jobs --jobs 20 --comms 8 \
			--policy "$policy" --progress never --format json ${args[@]+"${args[@]}"} \
			>"$out" 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f 0 0 0\n", b - a }' >"$tmp/time"
	fi
	local ctx
	ctx=$(grep -o '"contexts": [0-9]*' "$out" | awk 'NR == 1 { print $2 }')
	read -r wall user sys rss <"$tmp/time"
	echo "$name $engine $ctx $wall $user $sys $rss" >>"$tmp/results"
	awk -v n="$name" -v e="$engine" -v c="$ctx" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
		printf "  %-14s %-9s %8d contexts  wall %7.1f s  cpu %7.1f s  peak %7.0f MB  %8.0f contexts/s (wall)\n",
			n, e, c, w, u + s, r / 1024, c / (w > 0 ? w : 1) }'
}

same() {	# same NAME: the engines printed the same numbers
	if cmp -s <(grep -v '"seconds"' "$tmp/$1-new.json") <(grep -v '"seconds"' "$tmp/$1-reference.json"); then
		echo "  $1: new and reference engines print the same numbers (JSON identical but for seconds)"
	else
		echo "  $1: new and reference engines DIFFER" >&2
		exit 1
	fi
}

: >"$tmp/results"
echo "# bench/replay_scale.sh: jobs mode, 20 jobs x 8 comms, policy $policy, $(nproc 2>/dev/null || echo ?) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
fleet 8 "$tmp/fleet-1e4.csv"
scales 2 "$tmp/scales-11k.csv"
measure fleet-1e4 "$tmp/fleet-1e4.csv" new
measure fleet-1e4 "$tmp/fleet-1e4.csv" reference
same fleet-1e4
measure scales-11k "$tmp/scales-11k.csv" new
measure scales-11k "$tmp/scales-11k.csv" reference
same scales-11k
if [ "$quick" = 0 ]; then
	fleet 73 "$tmp/fleet-1e5.csv"
	scales 8 "$tmp/scales-45k.csv"
	measure fleet-1e5 "$tmp/fleet-1e5.csv" new
	measure scales-45k "$tmp/scales-45k.csv" new
	measure scales-45k "$tmp/scales-45k.csv" reference
	same scales-45k
fi
echo
awk '
{ wall[$1, $2] = $4; cpu[$1, $2] = $5 + $6; rss[$1, $2] = $7; ctx[$1] = $3 }
function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
END {
	for (c in ctx) if (((c, "reference") in wall) && ((c, "new") in wall))
		printf "  %-14s reference / new: wall %sx, cpu %sx\n", c, ratio(wall[c, "reference"], wall[c, "new"]),
			ratio(cpu[c, "reference"], cpu[c, "new"])
	if (("fleet-1e5", "new") in wall)
		printf "  fleet 10^4 -> 10^5 (contexts x%.2f): wall x%s, cpu x%s, peak memory x%s\n",
			ctx["fleet-1e5"] / ctx["fleet-1e4"], ratio(wall["fleet-1e5", "new"], wall["fleet-1e4", "new"]),
			ratio(cpu["fleet-1e5", "new"], cpu["fleet-1e4", "new"]), ratio(rss["fleet-1e5", "new"], rss["fleet-1e4", "new"])
	if (("scales-45k", "new") in wall)
		printf "  scales 11k -> 45k (contexts x%.2f): new wall x%s, reference wall x%s\n",
			ctx["scales-45k"] / ctx["scales-11k"], ratio(wall["scales-45k", "new"], wall["scales-11k", "new"]),
			ratio(wall["scales-45k", "reference"], wall["scales-11k", "reference"])
}' "$tmp/results"
