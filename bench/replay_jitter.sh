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
# over the seeds, total over them), worst excess, whether it meets "no
# context harmed, mean at most AUTO's", and AUTO's line (bench/lib.sh
# bench_worst_table). Over several seeds each column is the WORST over them.
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
bench_replay_grid bench/replay_jitter.sh j "$rates" own --sim-outliers --policy "$policy" \
	--sim-fabrics builtin,alt --sim-samples 48 --no-tune --mode per-call,jobs,epochs --allow all \
	--best reachable

echo "# bench/replay_jitter.sh: $policy on builtin,alt with outlier rates {$rates}, replay seeds {$seeds} (worst case), --allow all, $("$bot" --version 2>/dev/null || echo nccl-bot)"
bench_worst_table rate "$rates" 1 "$tmp"/j_*.csv
bench_wall bench/replay_jitter.sh
