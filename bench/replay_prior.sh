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
# harmed (largest over the seeds and total over them), worst excess, whether
# it meets the targets, and AUTO's line (bench/lib.sh bench_worst_table).
# Over several seeds each column is the WORST over them.
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
bench_replay_grid bench/replay_prior.sh p "$priors" default --prior-fabric --policy "$policy" \
	"${real[@]}" --train-nodes 1-4 --test-nodes 1-64 --history none --no-tune \
	--mode per-call,jobs,epochs --allow all

echo "# bench/replay_prior.sh: $policy on the real data under priors {$priors}, replay seeds {$seeds} (worst case), --allow all, $("$bot" --version 2>/dev/null || echo nccl-bot)"
bench_worst_table prior "$priors" 0 "$tmp"/p_*.csv
bench_wall bench/replay_prior.sh
