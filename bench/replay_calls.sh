#!/usr/bin/env bash
# bench/replay_calls.sh - short runs, side by side: the default policy with
# fewer calls per context (per call) and per communicator's job (jobs mode)
# than the replay's 500. The budget bounds what probing costs in
# expectation; a probe that happens costs what it costs, and in a short run
# one call is a large share of it (doc/policies.md, "Where the replay still
# sees harm", short runs).
#
# Runs, per call count and replay seed: thompson (--policy NAME for another)
# with its default parameters on the built-in fabrics,
#   --no-tune --mode per-call,jobs --allow all --best reachable --calls C
# ("default" leaves the replay's 500). Per count and mode: contexts above
# 10 %, mean and mean / AUTO's mean, harmed (largest over the seeds, total
# over them), worst excess, and AUTO's line (bench/lib.sh
# bench_worst_table). Over several seeds each column is the WORST over them.
# Exit 0 whether targets are met or not; non-zero only when a run fails.
#
# Usage: bench/replay_calls.sh [--seeds "0"] [--calls "50 100 200 300 default"]
#            [--policy NAME]
#        (NCCL_BOT=path/to/nccl-bot; BENCH_OUT=DIR keeps the CSVs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seeds="0"
calls="50 100 200 300 default"
policy=thompson
. "$here/bench/lib.sh"
bench_init bench/replay_calls.sh "seeds calls policy" "$@"
start=$(date +%s.%N)

# One file per (calls, seed): c_CALLS_SEED.csv
bench_replay_grid bench/replay_calls.sh c "$calls" default --calls --policy "$policy" \
	--no-tune --mode per-call,jobs --allow all --best reachable

version=$("$bot" --version 2>/dev/null || echo nccl-bot)
echo "# bench/replay_calls.sh: $policy, calls {$calls}, replay seeds {$seeds} (worst case), --allow all, $version"
bench_worst_table calls "$calls" 0 "$tmp"/c_*.csv
bench_wall bench/replay_calls.sh
