#!/usr/bin/env bash
# bench/replay_sparse.sh - sparse feedback, side by side: the replay with
# fewer samples per communicator's round than its defaults (jobs mode 5,
# epochs mode 1), as on the ranks for a context that makes few calls per
# job (the profiler measures about 1 % of calls: 50 calls a communicator's
# job give 0.5 samples). What was spent is counted from samples, so a probe
# that returned none yet has cost nothing so far; the sample lag
# (doc/policies.md) charges such a probe the rounds it runs until counted.
#
# Runs, per sample rate and replay seed: the default policy (thompson;
# --policy NAME for another) with its default parameters,
#   built-in fabrics: --no-tune --mode jobs,epochs --allow all --best reachable
#   real data:        data/external/sweep/*.csv --train-nodes 1-4
#                     --test-nodes 1-64 --history none --no-tune
#                     --mode jobs,epochs --allow all
# each with --sample-rate RATE ("default" leaves the replay's 0.01). Per
# rate and mode: contexts above 10 %, mean and mean / AUTO's mean, harmed
# (contexts whose run loss exceeds AUTO's by more than 2 points: largest
# over the seeds, total over them), worst excess, whether it meets "no
# context harmed, mean at most AUTO's", and AUTO's line (bench/lib.sh
# bench_worst_table). Over several seeds each column is the WORST over them.
# Exit 0 whether the targets are met or not; non-zero only when a run fails.
#
# Usage: bench/replay_sparse.sh [--seeds "0 1"] [--rates "default 0.002 0.001 0.0002"]
#            [--policy NAME]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0 1"
rates="default 0.002 0.001 0.0002"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_sparse.sh "seeds rates policy" "$@"
start=$(date +%s.%N)

# One file per (data, rate, seed): b_RATE_SEED.csv, r_RATE_SEED.csv
bench_replay_grid bench/replay_sparse.sh b "$rates" default --sample-rate --policy "$policy" \
	--no-tune --mode jobs,epochs --allow all --best reachable
bench_replay_grid bench/replay_sparse.sh r "$rates" default --sample-rate --policy "$policy" \
	"$here"/data/external/sweep/*.csv --train-nodes 1-4 --test-nodes 1-64 --history none \
	--no-tune --mode jobs,epochs --allow all

version=$("$bot" --version 2>/dev/null || echo nccl-bot)
echo "# bench/replay_sparse.sh: $policy, sample rates {$rates}, replay seeds {$seeds} (worst case), --allow all, $version"
echo "## built-in fabrics (--no-tune, scored at 16-32 nodes)"
bench_worst_table rate "$rates" 0 "$tmp"/b_*.csv
echo
echo "## real data (data/external, every node count)"
bench_worst_table rate "$rates" 0 "$tmp"/r_*.csv
bench_wall bench/replay_sparse.sh
