#!/usr/bin/env bash
# bench/replay_delay.sh - late feedback, side by side: epochs mode with the
# feedback of a round reaching the knowledge base D rounds later (--delay D;
# the replay's default is 2, the next round's plan sees the round before
# last). What was spent is counted from samples, so the D - 1 rounds in
# flight when a probe is planned have been paid and not yet seen; safe
# exploration charges a probe those rounds too (doc/policies.md, "Rounds in
# flight").
#
# Runs, per delay and replay seed: the default policy (thompson; --policy
# NAME for another) with its default parameters, epochs mode,
#   built-in fabrics: --no-tune --allow all --best reachable
#   real data:        data/external/sweep/*.csv --train-nodes 1-4
#                     --test-nodes 1-64 --history none --no-tune --allow all
# each with --delay D. Per delay: contexts above 10 %, mean and mean /
# AUTO's mean, harmed (largest over the seeds, total over them), worst
# excess, whether it meets "no context harmed, mean at most AUTO's", and
# AUTO's line (bench/lib.sh bench_worst_table). Over several seeds each
# column is the WORST over them. Exit 0 whether the targets are met or not;
# non-zero only when a run fails.
#
# Usage: bench/replay_delay.sh [--seeds "0 1"] [--delays "2 8 30"] [--policy NAME]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0 1"
delays="2 8 30"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_delay.sh "seeds delays policy" "$@"
start=$(date +%s.%N)

# One file per (data, delay, seed): b_DELAY_SEED.csv, r_DELAY_SEED.csv
bench_replay_grid bench/replay_delay.sh b "$delays" none --delay --policy "$policy" \
	--no-tune --mode epochs --allow all --best reachable
bench_replay_grid bench/replay_delay.sh r "$delays" none --delay --policy "$policy" \
	"$here"/data/external/sweep/*.csv --train-nodes 1-4 --test-nodes 1-64 --history none \
	--no-tune --mode epochs --allow all

version=$("$bot" --version 2>/dev/null || echo nccl-bot)
echo "# bench/replay_delay.sh: $policy, epochs mode, delays {$delays}, replay seeds {$seeds} (worst case), --allow all, $version"
echo "## built-in fabrics (--no-tune, scored at 16-32 nodes)"
bench_worst_table delay "$delays" 0 "$tmp"/b_*.csv
echo
echo "## real data (data/external, every node count)"
bench_worst_table delay "$delays" 0 "$tmp"/r_*.csv
bench_wall bench/replay_delay.sh
