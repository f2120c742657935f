#!/usr/bin/env bash
# bench/replay_comms.sh - what the number of communicators per context costs
# the default policy (doc/policies.md "On the ranks"): jobs mode on the
# built-in fabrics, --allow all, one replay seed, with C communicators per
# context in the jobs and the planner told 8 (srun's default, `nccl-bot env
# --comms`) or the true C (`nccl-bot replay --plan-comms`), next to AUTO and
# thompson-free planned for the true C. Prints contexts above 10 % / mean /
# harmed per cell, measured side by side in one run.
#
# Usage: bench/replay_comms.sh [--seed N] [--comms "8 4 2 1"]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seed=0
comms="8 4 2 1"
. "$here/bench/lib.sh"
bench_init bench/replay_comms.sh "seed comms" "$@"
start=$(date +%s.%N)

run() {	# run OUT.csv POLICIES ARGS...: one jobs-mode replay, CSV to OUT
	local out=$1 pol=$2
	shift 2
	"$bot" replay --policy "$pol" --mode jobs --allow all --seed "$seed" --progress never \
		--format csv "$@" >"$tmp/$out" 2>"$tmp/$out.err" ||
		{ echo "bench/replay_comms.sh: failed: $bot replay $*" >&2; cat "$tmp/$out.err" >&2; exit 1; }
}
cell() {	# cell FILE POLICY: ">10% / mean / harmed" of the policy's overall row
	awk -F, -v p="$2" '$2 == p && $3 == "all" { printf "%d / %.2f%% / %d", $5, 100 * $6, $16 }' "$tmp/$1"
}

printf '# bench/replay_comms.sh: jobs mode, replay seed %s, --allow all; >10%% / mean / harmed\n' "$seed"
printf '%-6s  %-22s  %-22s  %-22s  %-22s\n' comms "planned for 8" "planned for comms" \
	"thompson-free" AUTO
for c in $comms; do
	run "c$c-p8.csv" thompson --comms "$c" --plan-comms 8
	run "c$c-pc.csv" thompson,thompson-free --comms "$c" --plan-comms "$c"
	printf '%-6s  %-22s  %-22s  %-22s  %-22s\n' "$c" "$(cell "c$c-p8.csv" thompson)" \
		"$(cell "c$c-pc.csv" thompson)" "$(cell "c$c-pc.csv" thompson-free)" \
		"$(cell "c$c-pc.csv" auto)"
done
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "\nwall time %.1f s (bench/replay_comms.sh)\n", b - a }'
