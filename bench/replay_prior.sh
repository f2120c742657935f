#!/usr/bin/env bash
# bench/replay_prior.sh - a wrong prior, side by side: the real data
# (data/external/sweep/*.csv) replayed with the prior the replay picks by
# default (the simulator's model where it knows the hardware, none
# elsewhere) and with each built-in simulator fabric's model named as the
# prior of every data fabric (`nccl-bot replay --prior-fabric F`), one
# table. The issue asks that a wrong prior cost little: no context harmed,
# mean loss at most AUTO's.
#
# Runs, per prior and replay seed: the default policy (thompson; --policy
# NAME for another), bench/replay's real-data command
#   --train-nodes 1-4 --test-nodes 1-64 --history none --no-tune
#   --mode per-call,jobs,epochs --allow all
# Per prior and mode: contexts above 10 %, mean and mean / AUTO's mean,
# harmed (largest over the seeds and total over them), worst excess, and
# AUTO's line. Over several seeds each column is the WORST over them.
# Exit 0 whether the targets are met or not; non-zero only when a run fails.
#
# Usage: bench/replay_prior.sh [--seeds "0 1 2 3 4"] [--policy NAME]
#            [--priors "default h100-ib-ndr a100-ib-hdr h100-roce gb200-nvl"]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0 1 2 3 4"
priors="default h100-ib-ndr a100-ib-hdr h100-roce gb200-nvl"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_prior.sh "seeds priors policy" "$@"
real=()
for f in "$here"/data/external/sweep/*.csv; do [ -f "$f" ] && real+=("$f"); done
if [ ${#real[@]} -eq 0 ]; then
	echo "bench/replay_prior.sh: no data/external/sweep/*.csv" >&2
	exit 2
fi
start=$(date +%s.%N)

# One file per (prior, seed): p_PRIOR_SEED.csv (fabric names hold no '_')
for p in $priors; do
	pf=()
	[ "$p" = default ] || pf=(--prior-fabric "$p")
	for s in $seeds; do
		out=$tmp/p_${p}_$s.csv
		"$bot" replay --progress never --format csv --policy "$policy" ${pf[@]+"${pf[@]}"} "${real[@]}" \
			--train-nodes 1-4 --test-nodes 1-64 --history none --no-tune --mode per-call,jobs,epochs \
			--allow all --seed "$s" >"$out" 2>"$out.err" ||
			{ echo "bench/replay_prior.sh: failed: prior $p, seed $s" >&2; cat "$out.err" >&2; exit 1; }
	done
done

echo "# bench/replay_prior.sh: $policy on the real data under priors {$priors}, replay seeds {$seeds} (worst case), --allow all, $("$bot" --version 2>/dev/null || echo nccl-bot)"
# Columns of the replay's CSV (doc/replay.md): 1 mode 2 policy 3 fabric
# 4 contexts 5 over_10pct 6 mean 16 harmed 17 worst_excess.
awk -F, -v priors="$priors" '
function pct(x) { return sprintf("%.2f%%", 100 * x) }
FNR == 1 {
	n = split(FILENAME, parts, "/")
	split(parts[n], f, "_")	# p PRIOR SEED.csv
	prior = f[2]
	next
}
$3 != "all" { next }
{
	k = ($2 == "auto" ? "AUTO" : prior) SUBSEP $1
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
	np = split(priors, pr, " ")
	printf "%-10s %-12s %5s %7s %9s %7s %6s %8s  %s\n", "mode", "prior", ">10%", "mean", "mean/AUTO",
		"harmed", "total", "worst+", "meets"
	for (i = 1; i <= nm; i++) {
		m = modes[i]
		if (!(m in seen)) continue
		a = "AUTO" SUBSEP m
		printf "%-10s %-12s %5d %7s %9s %7s %6s %8s  %s\n", m " (" CTX[m] ")", "AUTO", OVER[a], pct(MEAN[a]),
			"1", "-", "-", "-", "-"
		for (j = 1; j <= np; j++) {
			k = pr[j] SUBSEP m
			if (!(k in OVER)) continue
			ok = HARM[k] == 0 && MEAN[k] <= MEAN[a] + 1e-12
			printf "%-10s %-12s %5d %7s %9.3f %7d %6d %8s  %s\n", "", pr[j], OVER[k], pct(MEAN[k]),
				(MEAN[a] > 0 ? MEAN[k] / MEAN[a] : 0), HARM[k], TOT[k], pct(WX[k]), ok ? "yes" : "no"
		}
	}
}' "$tmp"/p_*.csv

end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "\nwall time %.1f s (bench/replay_prior.sh)\n", b - a }'
