#!/bin/sh
# tests/cli/test_cli.sh - the nccl-bot command as a user meets it: help and
# usage errors, bad sweep files rejected with FILE:LINE and a non-zero exit
# (never a crash), deterministic simulation, and the replay's JSON shape.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
data=$top_srcdir/tests/cli/data
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# expect_rc NAME WANT_RC [GREP_PATTERN] -- CMD...: run, check the exit status
# and that stderr+stdout match the pattern.
expect() {
	name=$1 want=$2 pat=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$name: exit $got, want $want"; sed 's/^/    /' "$tmp/out" | head -n 5; return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
		bad "$name: output lacks /$pat/"; sed 's/^/    /' "$tmp/out" | head -n 5; return
	fi
	ok "$name"
}

expect "help" 0 "replay" -- "$bot" --help
expect "no subcommand" 2 "usage" -- "$bot"
expect "unknown subcommand" 2 "unknown subcommand" -- "$bot" frobnicate
expect "replay --help" 0 "--mode" -- "$bot" replay --help
expect "sim --help" 0 "--fabric" -- "$bot" sim --help
expect "replay bad option" 2 "--frob" -- "$bot" replay --frob
expect "replay bad mode" 2 "mode" -- "$bot" replay --mode sideways
expect "replay unknown policy" 2 "nosuchpolicy" -- "$bot" replay --policy nosuchpolicy
expect "sim unknown fabric" 2 "nosuchfabric" -- "$bot" sim --fabric nosuchfabric
expect "overlapping splits with tuning" 2 "overlap" -- "$bot" replay --train-nodes 4-8 --test-nodes 8-16

# Bad data: FILE:LINE and exit 1, whatever the trouble.
expect "malformed row" 1 "malformed.csv:4" -- "$bot" replay --data "$data/malformed.csv"
expect "unknown collective" 1 "unknown-coll.csv:3" -- "$bot" replay --data "$data/unknown-coll.csv"
expect "unknown protocol" 1 "unknown-proto.csv:3" -- "$bot" replay --data "$data/unknown-proto.csv"
expect "NaN time" 1 "nan.csv:2" -- "$bot" replay --data "$data/nan.csv"
expect "negative time" 1 "negative.csv:2" -- "$bot" replay --data "$data/negative.csv"
expect "zero time" 1 "zero.csv:3" -- "$bot" replay --data "$data/zero.csv"
expect "empty file" 1 "empty.csv" -- "$bot" replay --data "$data/empty.csv"
expect "missing column" 1 "missing-column.csv:1" -- "$bot" replay --data "$data/missing-column.csv"
expect "missing arms" 1 "missing-arms.csv:[0-9]+" -- "$bot" replay --data "$data/missing-arms.csv"
expect "missing file" 1 "no-such-file.csv" -- "$bot" replay --data "$tmp/no-such-file.csv"

# The simulator is deterministic for a seed and differs across seeds.
"$bot" sim --fabric h100-ib-ndr --nodes 4 --coll allreduce --samples 2 --seed 7 >"$tmp/a.csv" 2>&1
"$bot" sim --fabric h100-ib-ndr --nodes 4 --coll allreduce --samples 2 --seed 7 >"$tmp/b.csv" 2>&1
"$bot" sim --fabric h100-ib-ndr --nodes 4 --coll allreduce --samples 2 --seed 8 >"$tmp/c.csv" 2>&1
if cmp -s "$tmp/a.csv" "$tmp/b.csv" && ! cmp -s "$tmp/a.csv" "$tmp/c.csv" && [ "$(wc -l <"$tmp/a.csv")" -gt 10 ]; then
	ok "sim deterministic per seed"
else
	bad "sim deterministic per seed"
fi

# A simulated sweep replays, and the JSON carries the documented keys.
expect "replay of a sim sweep" 0 "" -- "$bot" replay --data "$tmp/a.csv" --train-nodes 4 --test-nodes 4 \
	--policy thompson,greedy --mode jobs --jobs 3 --format json --no-tune
for key in '"auto"' '"policies"' '"name"' '"contexts"' '"over_10pct"' '"mean"' '"p99"' '"max"'; do
	if grep -q "$key" "$tmp/out"; then ok "json has $key"; else bad "json lacks $key"; fi
done

# The order of --data files changes nothing (fabrics are numbered by name).
"$bot" sim --fabric a100-ib-hdr --nodes 4 --coll allreduce --samples 2 --seed 3 >"$tmp/f1.csv" 2>/dev/null
"$bot" sim --fabric h100-roce --nodes 4 --coll allreduce --samples 2 --seed 3 >"$tmp/f2.csv" 2>/dev/null
"$bot" replay --data "$tmp/f1.csv" --data "$tmp/f2.csv" --train-nodes 4 --test-nodes 4 --policy thompson \
	--mode jobs --jobs 3 --no-tune --format csv >"$tmp/o12.csv" 2>/dev/null
"$bot" replay --data "$tmp/f2.csv" --data "$tmp/f1.csv" --train-nodes 4 --test-nodes 4 --policy thompson \
	--mode jobs --jobs 3 --no-tune --format csv >"$tmp/o21.csv" 2>/dev/null
if [ -s "$tmp/o12.csv" ] && cmp -s "$tmp/o12.csv" "$tmp/o21.csv"; then
	ok "replay independent of the order of --data files"
else
	bad "replay depends on the order of --data files"
fi

# Two sizes in one size bucket carry their own costs (what spool sweep writes).
printf '%s\n' 'fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us' \
	'f1,allreduce,1048576,16,2,ring,simple,50,55' 'f1,allreduce,1100000,16,2,ring,simple,52,57' \
	'f1,allreduce,1048576,16,2,tree,simple,40,60' 'f1,allreduce,1100000,16,2,tree,simple,41,61' \
	>"$tmp/bucket.csv"
expect "two sizes in one bucket" 0 "" -- "$bot" replay --data "$tmp/bucket.csv" --train-nodes 2 \
	--test-nodes 2 --policy greedy --no-tune --mode jobs --jobs 2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
