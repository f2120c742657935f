#!/usr/bin/env bash
# bench/replay_budget.sh - the safe-exploration budget's trade-off, side by
# side: the default learning policy (thompson; --policy NAME for another)
# under several budgets (`nccl-bot replay --budget X`) and its -free variant
# (no budget), one table.
#
# Runs, each per replay seed (and sim seed for the built-in fabrics):
#   built-in fabrics, tuned at 4-8 nodes, scored at 16-32, --allow all:
#     per-call, jobs (--jobs 20 --comms 8), epochs (defaults E=100, D=2)
#   real data (bench/replay's command): data/external/sweep/*.csv
#     --train-nodes 1-4 --test-nodes 1-64 --history none --no-tune
#     --mode per-call,jobs --allow all
# Per budget and mode: contexts above 10 %, mean, p99, harmed, worst excess,
# saved and lost seconds against AUTO (the replay's CSV columns), and AUTO's
# line. Over several seeds each column is the WORST over them (largest
# count, loss, harm and lost; smallest saved), as bench/replay does.
# "meets" says whether the line meets the issue's target for its mode
# (bench/replay's: per-call 0 above 10 %, p99 < 2 %, mean < 0.3 %, 0 harmed;
# jobs and epochs 0, p99 < 5 %, mean < 0.5 %, 0 harmed; real data 0 harmed
# and mean at most AUTO's).
# Exit 0 whether targets are met or not; non-zero only when a run fails.
#
# Usage: bench/replay_budget.sh [--seeds "0 1 2"] [--sim-seeds "0 1"]
#            [--budgets "0.005 0.01 0.02 0.04"] [--policy NAME]
#        (defaults: replay seed 0, sim seed 0; NCCL_BOT=path/to/nccl-bot;
#        BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0"
sim_seeds="0"
budgets="0.005 0.01 0.02 0.04"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_budget.sh "seeds sim-seeds budgets policy" "$@"
free=$policy-free
if ! "$bot" replay --policy "$free" --help >/dev/null 2>&1; then free=""; fi
start=$(date +%s.%N)

run() {	# run OUT.csv ARGS...: one replay, CSV to OUT, stderr to OUT.err
	local out=$1
	shift
	"$bot" replay --progress never --format csv "$@" >"$out" 2>"$out.err" ||
		{ echo "bench/replay_budget.sh: failed: $bot replay $*" >&2; cat "$out.err" >&2; exit 1; }
}

real=()
for f in "$here"/data/external/sweep/*.csv; do [ -f "$f" ] && real+=("$f"); done
# One file per (budget label, kind, seeds): b_LABEL_sim_S_T.csv, b_LABEL_real_S.csv;
# LABEL is the budget, or "none" for the -free variant.
labels=$budgets
[ -n "$free" ] && labels="$labels none"
for label in $labels; do
	if [ "$label" = none ]; then pol=(--policy "$free"); else pol=(--policy "$policy" --budget "$label"); fi
	for s in $seeds; do
		for t in $sim_seeds; do
			run "$tmp/b_${label}_sim_${s}_$t.csv" "${pol[@]}" --mode per-call,jobs,epochs --jobs 20 --comms 8 \
				--seed "$s" --sim-seed "$t" --allow all
		done
		if [ ${#real[@]} -gt 0 ]; then
			run "$tmp/b_${label}_real_$s.csv" "${pol[@]}" "${real[@]}" --train-nodes 1-4 --test-nodes 1-64 \
				--history none --no-tune --mode per-call,jobs --allow all --seed "$s"
		fi
	done
done

echo "# bench/replay_budget.sh: $policy under budgets {$budgets}${free:+ and $free (no budget)}, replay seeds {$seeds} x sim seeds {$sim_seeds} (worst case), --allow all, $("$bot" --version 2>/dev/null || echo nccl-bot)"
[ ${#real[@]} -gt 0 ] || echo "# no data/external/sweep/*.csv: real-data lines left out"
# Columns of the replay's CSV (doc/replay.md): 1 mode 2 policy 3 fabric
# 4 contexts 5 over_10pct 6 mean 9 p99 16 harmed 17 worst_excess 18 saved
# 19 lost.
awk -F, -v labels="$labels" -v free="$free" '
function pct(x) { return sprintf("%.2f%%", 100 * x) }
function sec(x) { return x >= 1000 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
function worse(k, ctx, over, mean, p99, harm, wx, sv, ls) {
	if (!(k in OVER)) { CTX[k] = ctx; OVER[k] = over; MEAN[k] = mean; P99[k] = p99; HARM[k] = harm; WX[k] = wx; SV[k] = sv; LS[k] = ls; return }
	if (over > OVER[k]) OVER[k] = over
	if (mean > MEAN[k]) MEAN[k] = mean
	if (p99 > P99[k]) P99[k] = p99
	if (harm > HARM[k]) HARM[k] = harm
	if (wx > WX[k]) WX[k] = wx
	if (sv < SV[k]) SV[k] = sv
	if (ls > LS[k]) LS[k] = ls
}
FNR == 1 {
	n = split(FILENAME, parts, "/"); base = parts[n]
	split(base, f, "_")	# b LABEL sim|real ...
	label = f[2]; kind = f[3]
	next
}
$3 != "all" { next }
{
	mode = kind == "real" ? "real " $1 : $1
	if ($2 == "auto") worse("AUTO" SUBSEP mode, $4, $5, $6, $9, 0, 0, 0, 0)
	else worse(label SUBSEP mode, $4, $5, $6, $9, $16, $17, $18, $19)
	seen[mode] = 1
}
END {
	nm = split("per-call|jobs|epochs|real per-call|real jobs", modes, "|")
	nl = split(labels, lab, " ")
	printf "%-18s %-20s %5s %7s %8s %7s %8s %10s %10s  %s\n", "mode", "budget", ">10%", "mean", "p99",
		"harmed", "worst+", "saved s", "lost s", "meets"
	for (i = 1; i <= nm; i++) {
		m = modes[i]
		if (!(m in seen)) continue
		name = m == "jobs" ? "jobs (J=20, C=8)" : m
		if (m ~ /^real/) name = name " (" CTX["AUTO" SUBSEP m] ")"
		a = "AUTO" SUBSEP m
		printf "%-18s %-20s %5d %7s %8s %7s %8s %10s %10s  %s\n", name, "AUTO", OVER[a], pct(MEAN[a]),
			pct(P99[a]), "-", "-", "-", "-", "-"
		for (j = 1; j <= nl; j++) {
			k = lab[j] SUBSEP m
			if (!(k in OVER)) continue
			if (m == "per-call") ok = OVER[k] == 0 && P99[k] < 0.02 && MEAN[k] < 0.003 && HARM[k] == 0
			else if (m ~ /^real/) ok = HARM[k] == 0 && MEAN[k] <= MEAN[a] + 1e-12
			else ok = OVER[k] == 0 && P99[k] < 0.05 && MEAN[k] < 0.005 && HARM[k] == 0
			b = lab[j] == "none" ? "none (" free ")" : sprintf("%g%%", 100 * lab[j])
			printf "%-18s %-20s %5d %7s %8s %7d %8s %10s %10s  %s\n", "", b, OVER[k], pct(MEAN[k]),
				pct(P99[k]), HARM[k], pct(WX[k]), sec(SV[k]), sec(LS[k]), ok ? "yes" : "no"
		}
	}
}' "$tmp"/b_*.csv

end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "\nwall time %.1f s (bench/replay_budget.sh)\n", b - a }'
