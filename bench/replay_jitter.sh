#!/usr/bin/env bash
# bench/replay_jitter.sh - heavy-tailed noise, side by side: the simulator's
# two families (builtin, alt) replayed with each fabric's own outlier rate
# (0.3-0.5 % of calls 2-10x slow) and with every fabric's rate raised
# (`nccl-bot replay --sim-outliers P`: 3 % and 8 % by default), one table.
# Real clusters have slow calls (a congested spine, a straggler, the first
# calls of a job); a policy that takes a few slow draws of AUTO's arm for
# its latency exploits a slower arm and harms the context.
#
# Runs, per rate and replay seed: the default policy (thompson; --policy
# NAME for another) with its default parameters, on
#   --sim-fabrics builtin,alt --sim-samples 48 --no-tune
#   --mode per-call,jobs,epochs --allow all --best reachable
# (48 rows per arm, so that a rate of a few percent is a few rows). Per
# rate and mode: contexts above 10 %, mean and mean / AUTO's mean, harmed
# (contexts whose run loss exceeds AUTO's by more than 2 points: largest
# over the seeds, total over them), worst excess, and AUTO's line. Over
# several seeds each column is the WORST over them.
# Exit 0 whether the targets are met or not; non-zero only when a run fails.
#
# Usage: bench/replay_jitter.sh [--seeds "0 1 2"] [--rates "own 0.03 0.08"]
#            [--policy NAME]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0 1 2"
rates="own 0.03 0.08"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_jitter.sh "seeds rates policy" "$@"
start=$(date +%s.%N)

# One file per (rate, seed): j_RATE_SEED.csv (rates hold no '_')
for r in $rates; do
	ro=()
	[ "$r" = own ] || ro=(--sim-outliers "$r")
	for s in $seeds; do
		out=$tmp/j_${r}_$s.csv
		"$bot" replay --progress never --format csv --policy "$policy" ${ro[@]+"${ro[@]}"} \
			--sim-fabrics builtin,alt --sim-samples 48 --no-tune --mode per-call,jobs,epochs \
			--allow all --best reachable --seed "$s" >"$out" 2>"$out.err" ||
			{ echo "bench/replay_jitter.sh: failed: rate $r, seed $s" >&2; cat "$out.err" >&2; exit 1; }
	done
done

echo "# bench/replay_jitter.sh: $policy on builtin,alt with outlier rates {$rates}, replay seeds {$seeds} (worst case), --allow all, $("$bot" --version 2>/dev/null || echo nccl-bot)"
# Columns of the replay's CSV (doc/replay.md): 1 mode 2 policy 3 fabric
# 4 contexts 5 over_10pct 6 mean 16 harmed 17 worst_excess.
awk -F, -v rates="$rates" '
function pct(x) { return sprintf("%.2f%%", 100 * x) }
FNR == 1 {
	n = split(FILENAME, parts, "/")
	split(parts[n], f, "_")	# j RATE SEED.csv
	rate = f[2]
	next
}
$3 != "all" { next }
{
	k = rate SUBSEP ($2 == "auto" ? "AUTO" : "pol") SUBSEP $1
	if (!(k in OVER) || $5 > OVER[k]) OVER[k] = $5
	if (!(k in MEAN) || $6 > MEAN[k]) MEAN[k] = $6
	if ($2 != "auto") {
		if (!(k in HARM) || $16 > HARM[k]) HARM[k] = $16
		TOT[k] += $16
		if (!(k in WX) || $17 > WX[k]) WX[k] = $17
	}
	CTX[$1] = $4
	seen[$1] = 1
}
END {
	nm = split("per-call jobs epochs", modes, " ")
	nr = split(rates, rs, " ")
	printf "%-15s %-6s %-9s %5s %7s %9s %7s %6s %8s\n", "mode", "rate", "policy", ">10%", "mean",
		"mean/AUTO", "harmed", "total", "worst+"
	for (i = 1; i <= nm; i++) {
		m = modes[i]
		if (!(m in seen)) continue
		for (j = 1; j <= nr; j++) {
			a = rs[j] SUBSEP "AUTO" SUBSEP m
			k = rs[j] SUBSEP "pol" SUBSEP m
			if (!(k in OVER)) continue
			printf "%-15s %-6s %-9s %5d %7s %9s %7s %6s %8s\n", (j == 1 ? m " (" CTX[m] ")" : ""),
				rs[j], "AUTO", OVER[a], pct(MEAN[a]), "1", "-", "-", "-"
			printf "%-15s %-6s %-9s %5d %7s %9.3f %7d %6d %8s\n", "", "", "'"$policy"'", OVER[k],
				pct(MEAN[k]), (MEAN[a] > 0 ? MEAN[k] / MEAN[a] : 0), HARM[k], TOT[k], pct(WX[k])
		}
	}
}' "$tmp"/j_*.csv

end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "\nwall time %.1f s (bench/replay_jitter.sh)\n", b - a }'
