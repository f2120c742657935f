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
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

expect "help" 0 "replay" -- "$bot" --help
expect "no subcommand" 2 "usage" -- "$bot"
expect "unknown subcommand" 2 "unknown subcommand" -- "$bot" frobnicate
# `help CMD` is CMD's own help, for every subcommand (it printed the list).
for cmd in env harvest replay sim spool state ship compact report doctor fabric demo; do
	"$bot" "$cmd" --help >"$tmp/help-own" 2>&1
	"$bot" help "$cmd" >"$tmp/help-cmd" 2>"$tmp/help-err"
	hrc=$?
	if [ $hrc = 0 ] && [ ! -s "$tmp/help-err" ] && grep -q "^usage: nccl-bot $cmd" "$tmp/help-cmd" &&
		cmp -s "$tmp/help-own" "$tmp/help-cmd"; then
		ok "help $cmd is $cmd --help"
	else
		bad "help $cmd (exit $hrc):"; head -n 3 "$tmp/help-cmd" "$tmp/help-err" | sed 's/^/    /'
	fi
done
expect "help state add" 0 "^usage: nccl-bot state add" -- "$bot" help state add
expect "help (the list)" 0 "^  replay " -- "$bot" help
expect "help nosuch" 2 "^nccl-bot: help: unknown subcommand 'nosuch'" -- "$bot" help nosuch
expect "replay --help" 0 "--mode" -- "$bot" replay --help
expect "sim --help" 0 "--fabric" -- "$bot" sim --help
expect "replay bad option" 2 "--frob" -- "$bot" replay --frob
expect "replay bad mode" 2 "mode" -- "$bot" replay --mode sideways
# a full standard output is an error (exit 1, said), not a success with the
# output lost (until 2026-12-04 every subcommand that did not check exited 0)
if [ -w /dev/full ]; then
	# sim's reports are flushed one by one: the first failed flush is
	# said with its reason (it said "a write failed") and once
	for c in "--version" "help state" "spool show $top_srcdir/tests/fuzz/corpus-spool/valid-mixed" \
		"sim --list" "sim --list --auto-report"; do
		# shellcheck disable=SC2086 # $c is a command line
		"$bot" $c >/dev/full 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 1 ] && grep -q "^nccl-bot: .*standard output: No space left on device$" "$tmp/err" &&
			[ "$(wc -l <"$tmp/err")" -eq 1 ]; then
			ok "$c >/dev/full: exit 1, said"
		else
			bad "$c >/dev/full: exit $rc"; sed 's/^/    /' "$tmp/err" | head -n 3
		fi
	done
fi
expect "replay unknown policy" 2 "nosuchpolicy" -- "$bot" replay --policy nosuchpolicy
# AUTO is the baseline of every run: --policy auto alone is refused, in a list
# left out with a note (it printed a second row of the same key in the CSV)
expect "replay --policy auto: refused" 2 "--policy auto: AUTO is the baseline every replay prints" -- \
	"$bot" replay --policy auto
expect "replay --policy auto,greedy: auto left out, one AUTO row" 0 "auto left out" -- \
	"$bot" replay --policy auto,greedy --sim-fabrics h100-roce --mode per-call --calls 20 --format csv
n=$(grep -c '^per-call,auto,all,' "$tmp/out")
[ "$n" = 1 ] && ok "  ... one per-call,auto,all row" || bad "  ... $n per-call,auto,all rows"
# a repeated --policy replaces the earlier one, auto included: no refusal
# and no note for an auto that a later --policy replaced
expect "replay --policy auto --policy greedy: the last counts" 0 "^per-call,greedy,all," -- \
	"$bot" replay --policy auto --policy greedy --sim-fabrics h100-roce --mode per-call --calls 20 --format csv
if grep -q "auto left out\|--policy auto:" "$tmp/out"; then bad "  ... a replaced --policy auto still reported"
else ok "  ... nothing said about the replaced --policy auto"; fi
expect "replay --policy greedy --policy auto: refused" 2 "--policy auto: AUTO is the baseline" -- \
	"$bot" replay --policy greedy --policy auto
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

# Harm against AUTO is in the JSON of every policy; the optimised engine
# prints exactly what the plain one (--reference) prints; progress only on a
# terminal unless asked for.
"$bot" replay --data "$tmp/f1.csv" --data "$tmp/f2.csv" --train-nodes 4 --test-nodes 4 \
	--policy thompson,ucb1 --mode per-call,jobs --calls 40 --jobs 3 --no-tune --format json \
	>"$tmp/fast.json" 2>"$tmp/fast.err"
"$bot" replay --data "$tmp/f1.csv" --data "$tmp/f2.csv" --train-nodes 4 --test-nodes 4 \
	--policy thompson,ucb1 --mode per-call,jobs --calls 40 --jobs 3 --no-tune --format json \
	--reference >"$tmp/ref.json" 2>/dev/null
for key in '"harmed"' '"worst_excess"' '"saved"' '"lost"'; do
	if grep -q "$key" "$tmp/fast.json"; then ok "json has $key"; else bad "json lacks $key"; fi
done
grep -v '"seconds"' "$tmp/fast.json" >"$tmp/fast.nosec"
grep -v '"seconds"' "$tmp/ref.json" >"$tmp/ref.nosec"
if [ "$(wc -l <"$tmp/fast.nosec")" -gt 20 ] && cmp -s "$tmp/fast.nosec" "$tmp/ref.nosec"; then
	ok "replay: optimised and --reference engines print the same numbers"
else
	bad "replay: optimised and --reference engines differ"
fi
# --worst N --harmed ranks by run loss minus AUTO's, plain --worst by run loss.
for how in plain harmed; do
	h=
	[ $how = harmed ] && h=--harmed
	# shellcheck disable=SC2086
	"$bot" replay --data "$tmp/f1.csv" --data "$tmp/f2.csv" --train-nodes 4 --test-nodes 4 \
		--policy thompson --mode jobs --jobs 3 --no-tune --worst 6 $h >"$tmp/worst-$how" 2>/dev/null
	if awk -v how=$how '
		/^ worst 6 contexts of thompson/ { on = 1; head = $0; next }
		on && /%/ { r = $3 + 0; a = $5 + 0; k = how == "harmed" ? r - a : r
			    if (n++ && k > last + 1e-9) bad = 1; last = k }
		END { exit !(n == 6 && !bad && (how == "harmed") == (head ~ /against AUTO/)) }' "$tmp/worst-$how"; then
		ok "replay --worst ($how) ranked"
	else
		bad "replay --worst ($how) not ranked"
	fi
done
if ! grep -q '%' "$tmp/fast.err"; then ok "replay: no progress when stderr is not a terminal"
else bad "replay: progress printed to a file"; fi
expect "replay --progress always" 0 "jobs +100%" -- "$bot" replay --data "$tmp/f1.csv" --train-nodes 4 \
	--test-nodes 4 --policy greedy --no-tune --mode jobs --jobs 2 --progress always
expect "replay --progress sometimes" 2 "--progress" -- "$bot" replay --progress sometimes

# Valid but extreme numbers are refused, never printed as inf% or nan.
sed '3s/,[^,]*,,1,,$/,1e308,,1,,/' "$tmp/f1.csv" >"$tmp/huge.csv"
sed '3s/,[^,]*,,1,,$/,1e-300,,1,,/' "$tmp/f1.csv" >"$tmp/tiny.csv"
expect "replay: measured_us 1e308" 1 "huge.csv:3: measured_us 1e\+308 is out of the range" -- \
	"$bot" replay --data "$tmp/huge.csv" --train-nodes 4 --test-nodes 4 --no-tune
expect "replay: measured_us 1e-300" 1 "tiny.csv:3: measured_us 1e-300 is out of the range" -- \
	"$bot" replay --data "$tmp/tiny.csv" --train-nodes 4 --test-nodes 4 --no-tune
expect "replay --sample-rate 4.9e-324" 2 "--sample-rate '4.9e-324': too small for a double \\(below about 2.2e-308" -- \
	"$bot" replay --sample-rate 4.9e-324
expect "replay --skew 1e308" 2 "--skew '1e308': out of range" -- "$bot" replay --skew 1e308
expect "replay --alpha 1e-300" 0 "" -- "$bot" replay --data "$tmp/f1.csv" --train-nodes 4 --test-nodes 4 \
	--policy greedy --no-tune --mode jobs --jobs 2 --alpha 1e-300 --sample-rate 1e-300 --skew 1e-300
if grep -Eqi 'inf|nan' "$tmp/out"; then bad "extreme options printed inf or nan"; else ok "extreme options: finite report"; fi

# --budget: the safe-exploration budget of every budgeted policy, a
# fraction 0..1 in the decimal grammar; kept through tuning; -free ignore it.
for v in -0.01 1.5 nan inf 1e400 0x1p-4 +0.1 ' 0.1' '' 1e 00.01; do
	expect "replay --budget '$v' refused" 2 "replay: --budget '$(printf '%s' "$v" | sed 's/[+.]/\\&/g')'" -- \
		"$bot" replay --budget "$v"
done
expect "replay --skew +0.5 refused" 2 "--skew '\+0.5': expected a decimal number" -- "$bot" replay --skew +0.5
budget_run() {	# budget_run OUT [--budget X]: thompson and thompson-free on one fabric, CSV
	out=$1
	shift
	"$bot" replay --sim-fabrics h100-ib-ndr --mode jobs --policy thompson,thompson-free --format csv "$@" \
		>"$tmp/$out" 2>"$tmp/$out.err" || bad "replay $* failed: $(head -n 3 "$tmp/$out.err")"
}
budget_run b-def.csv
budget_run b-001.csv --budget 0.01
budget_run b-0.csv --budget 0
budget_run b-05.csv --budget 0.5
# row POLICY FILE: the policy's overall row, without its params column
row() { awk -F, -v p="$1" '$2 == p && $3 == "all" { $15 = ""; print }' "$2"; }
if [ -s "$tmp/b-def.csv" ] && cmp -s "$tmp/b-def.csv" "$tmp/b-001.csv"; then ok "replay --budget 0.01 is the default"
else bad "replay --budget 0.01 differs from the default"; fi
# budget 0: thompson never leaves AUTO's arm here (nothing lost), the default does
lost0=$(awk -F, '$2 == "thompson" && $3 == "all" { print $19 }' "$tmp/b-0.csv")
lostd=$(awk -F, '$2 == "thompson" && $3 == "all" { print $19 }' "$tmp/b-def.csv")
if [ "$lost0" = 0 ] && [ -n "$lostd" ] && [ "$lostd" != 0 ]; then ok "replay --budget 0: thompson loses nothing (default: $lostd s)"
else bad "replay --budget 0: thompson lost '$lost0' s, default '$lostd' s"; fi
if [ -n "$(row thompson "$tmp/b-05.csv")" ] && [ "$(row thompson "$tmp/b-05.csv")" != "$(row thompson "$tmp/b-def.csv")" ]
then ok "replay --budget 0.5 changes thompson's result"; else bad "replay --budget 0.5 changes nothing"; fi
if [ -n "$(row thompson-free "$tmp/b-0.csv")" ] && [ "$(row thompson-free "$tmp/b-0.csv")" = "$(row thompson-free "$tmp/b-def.csv")" ] &&
	[ "$(row thompson-free "$tmp/b-05.csv")" = "$(row thompson-free "$tmp/b-def.csv")" ]
then ok "replay --budget: thompson-free ignores it"; else bad "replay --budget changed thompson-free"; fi
if grep -q '^jobs,thompson,all,.*budget=0\.5,' "$tmp/b-05.csv" && grep -q '^jobs,thompson-free,all,.*budget=none,' "$tmp/b-05.csv"
then ok "replay --budget: the tuned parameters carry it"; else bad "replay --budget: params lack it"; fi
expect "replay --budget 0.02 --no-tune: parameters line" 0 "thompson +defaults: .* budget=0\.02$" -- "$bot" replay \
	--sim-fabrics h100-ib-ndr --mode jobs --jobs 2 --policy thompson,thompson-free --no-tune --budget 0.02
if grep -Eq "thompson-free +defaults: .* budget=none$" "$tmp/out"; then ok "replay --budget: thompson-free's line says none"
else bad "replay --budget: thompson-free's parameters line"; fi
expect "replay --budget 0.02 --format json" 0 '"budget": 0\.02}' -- "$bot" replay --sim-fabrics h100-ib-ndr \
	--mode jobs --jobs 2 --policy thompson,thompson-free --no-tune --budget 0.02 --format json
if grep -q '"budget": null}' "$tmp/out"; then ok "replay --budget: JSON budget null for thompson-free"
else bad "replay --budget: JSON lacks thompson-free's null budget"; fi

# sweep is never clipped: its parameters say no budget, as the -free
# variants' do (they said budget=0.01, the default it never applies, until
# 2026-12-04)
expect "replay: sweep's parameters line says budget=none" 0 "sweep +defaults: .* budget=none$" -- "$bot" replay \
	--sim-fabrics h100-ib-ndr --mode jobs --jobs 2 --policy sweep --no-tune --budget 0.02
# JSON's allow is a bit mask; allow_list says it as --allow does (the JSON had
# only the mask, 28672 for nvls, until 2026-12-04)
expect "replay --allow nvls --format json: allow_list" 0 '"allow": 28672, "allow_list": "nvls",' -- "$bot" replay \
	--sim-fabrics h100-ib-ndr --mode jobs --jobs 2 --policy greedy --no-tune --allow nvls --format json
expect "replay: sweep's JSON budget is null" 0 '"params": .*"budget": null}' -- "$bot" replay \
	--sim-fabrics h100-ib-ndr --mode jobs --jobs 2 --policy sweep --no-tune --format json
# --plan-comms: the planner told C communicators, the jobs having --comms
expect "replay --plan-comms 0 refused" 2 "replay: --plan-comms '0'" -- "$bot" replay --plan-comms 0
expect "replay --plan-comms: the header says so" 0 "2 comms x 500 calls, sample rate 0\.01, feedback after each job; planned for 8 comms" -- \
	"$bot" replay --sim-fabrics h100-ib-ndr --mode jobs --policy thompson --no-tune --comms 2 --plan-comms 8
expect "replay --plan-comms: JSON plan_comms" 0 '"comms": 2, "plan_comms": 8,' -- "$bot" replay --sim-fabrics h100-ib-ndr \
	--mode jobs --jobs 2 --policy thompson --no-tune --comms 2 --plan-comms 8 --format json
# per call there is one communicator whatever --comms says (for the list's
# other modes), and JSON says so
expect "replay per-call: JSON comms 1" 0 '"mode": "per-call", "calls": [0-9]*, "jobs": [0-9]*, "comms": 1, "plan_comms": 1,' -- \
	"$bot" replay --sim-fabrics h100-ib-ndr --mode per-call,jobs --jobs 2 --calls 50 --policy thompson \
	--no-tune --comms 2 --plan-comms 8 --format json
budget_run pc-8.csv --comms 2 --plan-comms 8 --no-tune
budget_run pc-2.csv --comms 2 --plan-comms 2 --no-tune
budget_run pc-none.csv --comms 2 --no-tune
if [ -n "$(row thompson "$tmp/pc-8.csv")" ] && [ "$(row thompson "$tmp/pc-8.csv")" != "$(row thompson "$tmp/pc-2.csv")" ] &&
	[ "$(row thompson "$tmp/pc-2.csv")" = "$(row thompson "$tmp/pc-none.csv")" ]
then ok "replay --plan-comms: planning for 8 of 2 communicators changes thompson, planning for 2 is the default"
else bad "replay --plan-comms: no effect, or --plan-comms 2 is not --comms 2"; fi
# per call there is one communicator and one call a round: it does not apply
# to the per-call rows of a list with jobs
"$bot" replay --sim-fabrics h100-ib-ndr --mode per-call,jobs --jobs 2 --calls 50 --policy thompson \
	--no-tune --format csv 2>/dev/null | grep '^per-call,' >"$tmp/pc-call.csv"
"$bot" replay --sim-fabrics h100-ib-ndr --mode per-call,jobs --jobs 2 --calls 50 --policy thompson \
	--no-tune --format csv --plan-comms 8 2>/dev/null | grep '^per-call,' >"$tmp/pc-call8.csv"
if [ -s "$tmp/pc-call.csv" ] && cmp -s "$tmp/pc-call.csv" "$tmp/pc-call8.csv"; then ok "replay --plan-comms: per-call mode ignores it"
else bad "replay --plan-comms changed per-call mode"; fi
# a tuned run too (its grid points are planned as the scored run is)
budget_run pc-t8.csv --comms 2 --plan-comms 8 --tune-contexts 64
budget_run pc-t2.csv --comms 2 --tune-contexts 64
if [ -n "$(row thompson "$tmp/pc-t8.csv")" ] && [ "$(row thompson "$tmp/pc-t8.csv")" != "$(row thompson "$tmp/pc-t2.csv")" ]
then ok "replay --plan-comms: a tuned run changes with it"; else bad "replay --plan-comms: no effect on a tuned run"; fi

# The second simulator family, and leave-one-fabric-out.
expect "sim --fabric alt" 0 "h100-ib-auto" -- "$bot" sim --fabric alt --nodes 4 --coll allreduce --samples 1
expect "sim --fabric nope" 2 "nope" -- "$bot" sim --fabric builtin,nope
expect "replay --sim-fabrics nope" 2 "--sim-fabrics 'nope'" -- "$bot" replay --sim-fabrics nope
# an empty list or item is said as such, not as '(empty name)' (until 2026-12-04)
expect "replay --sim-fabrics ''" 2 "^nccl-bot: replay: --sim-fabrics '': empty: want a fabric or family name" -- \
	"$bot" replay --sim-fabrics ''
expect "replay --sim-fabrics alt," 2 "^nccl-bot: replay: --sim-fabrics 'alt,': an empty item" -- \
	"$bot" replay --sim-fabrics alt,
expect "sim --fabric ''" 2 "^nccl-bot: sim: --fabric: invalid value '': empty: want a fabric or family name" -- \
	"$bot" sim --fabric ''
# numbers past a double either way, each said as such; a subnormal is a number
expect "replay --skew 1e309" 2 "--skew '1e309': beyond the range of a double" -- "$bot" replay --skew 1e309
expect "replay --skew 1e-400" 2 "--skew '1e-400': too small for a double" -- "$bot" replay --skew 1e-400
# Heavy-tailed noise on demand: the built-in sweep's outlier rate.
expect "replay --sim-outliers 0.7" 2 "--sim-outliers '0.7': out of range 0..0.5" -- "$bot" replay --sim-outliers 0.7
expect "replay --sim-outliers with --data" 2 "--sim-outliers shapes the built-in sweep" -- \
	"$bot" replay --sim-outliers 0.1 "$data/malformed.csv"
# Options that cannot apply are refused, naming the option, before any work
# (the other --sim-* options with --data; --harmed without --worst; --worst
# outside the table; the same sweep file twice, which counts its samples twice).
for o in "--sim-fabrics alt" "--sim-seed 3" "--sim-samples 4"; do
	# shellcheck disable=SC2086 # $o is an option and its value
	expect "replay $o with --data" 2 "^nccl-bot: replay: ${o% *} shapes the built-in sweep; it does not apply to --data files$" -- \
		"$bot" replay --data "$tmp/f1.csv" $o --train-nodes 4 --test-nodes 4 --no-tune
done
expect "replay --sim-seed with a positional file" 2 "--sim-seed shapes the built-in sweep" -- \
	"$bot" replay "$tmp/f1.csv" --sim-seed 3
# --epoch/--delay without the epochs mode, --prior-fabric without --data (each
# was taken and ignored until 2026-12-04)
for o in "--epoch 50" "--delay 3"; do
	# shellcheck disable=SC2086 # $o is an option and its value
	expect "replay $o in jobs mode" 2 "^nccl-bot: replay: ${o% *} shapes the epochs mode; give --mode epochs" -- \
		"$bot" replay --data "$tmp/f1.csv" --mode per-call,jobs $o --train-nodes 4 --test-nodes 4 --no-tune
done
# --jobs without the jobs mode was taken and ignored as well (until 2026-12-04)
expect "replay --jobs in per-call mode" 2 "^nccl-bot: replay: --jobs shapes the jobs mode; give --mode jobs" -- \
	"$bot" replay --data "$tmp/f1.csv" --mode per-call,epochs --jobs 3 --train-nodes 4 --test-nodes 4 --no-tune
# --comms, --plan-comms, --sample-rate and --skew shape the rounds of jobs and
# epochs: per call alone they were taken and ignored (until 2026-12-04)
for o in "--comms 4" "--plan-comms 4" "--sample-rate 0.5" "--skew 0.1"; do
	expect "replay $o in per-call mode" 2 "^nccl-bot: replay: ${o% *} shapes the rounds of the jobs and epochs modes" -- \
		"$bot" replay --data "$tmp/f1.csv" --mode per-call $o --train-nodes 4 --test-nodes 4 --no-tune
done
expect "replay --comms with epochs in the list" 0 "" -- \
	"$bot" replay --data "$tmp/f1.csv" --mode per-call,epochs --comms 2 --train-nodes 4 \
	--test-nodes 4 --no-tune --policy greedy --calls 100 --progress never
expect "replay --tune-contexts with --no-tune" 2 "^nccl-bot: replay: --tune-contexts shapes the tuning; --no-tune runs none" -- \
	"$bot" replay --data "$tmp/f1.csv" --tune-contexts 8 --no-tune --train-nodes 4 --test-nodes 4
expect "replay --delay with epochs in the list" 0 "" -- "$bot" replay --data "$tmp/f1.csv" --mode jobs,epochs \
	--delay 3 --train-nodes 4 --test-nodes 4 --no-tune --policy greedy --calls 100 --jobs 2
expect "replay --prior-fabric without --data" 2 "^nccl-bot: replay: --prior-fabric .*without --data" -- \
	"$bot" replay --prior-fabric h100-ib-ndr
# with --prior none, --prior-fabric still picks AUTO's arm for a fabric the
# simulator does not know whose rows carry no auto_us (doc/replay.md, AUTO rule 3)
awk -F, -v OFS=, '/^fabric,/ { print; next } { $1 = "mycluster"; $8 = ""; print }' "$tmp/f1.csv" >"$tmp/mine.csv"
expect "replay --prior none of an unknown fabric without auto_us" 1 "23 contexts skipped: AUTO's choice unknown" -- \
	"$bot" replay --data "$tmp/mine.csv" --prior none --train-nodes 4 --test-nodes 4 --no-tune --policy greedy --calls 100
# every context skipped: the message names the file and the way out (it said
# only "no scorable context in the data" until 2026-12-04)
expect "replay of an unknown fabric without auto_us" 1 \
	"^nccl-bot: replay: no scorable context in $tmp/mine.csv: AUTO's choice is unknown.*--prior-fabric NAME" -- \
	"$bot" replay --data "$tmp/mine.csv" --train-nodes 4 --test-nodes 4 --no-tune --policy greedy --calls 100
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1024,2,1,auto,auto,,5" >"$tmp/autoonly.csv"
expect "replay of stock runs alone" 1 "^nccl-bot: replay: no scorable context in $tmp/autoonly.csv: no context has a forced arm" -- \
	"$bot" replay --data "$tmp/autoonly.csv"
expect "replay --prior none --prior-fabric: AUTO's arm from that fabric" 0 "^  greedy +23 " -- \
	"$bot" replay --data "$tmp/mine.csv" --prior none --prior-fabric a100-ib-hdr --train-nodes 4 --test-nodes 4 \
	--no-tune --policy greedy --calls 100
if grep -q "skipped" "$tmp/out"; then bad "replay --prior none --prior-fabric: contexts still skipped"
else ok "replay --prior none --prior-fabric: no context skipped"; fi
expect "replay --harmed without --worst" 2 "^nccl-bot: replay: --harmed .*--worst" -- \
	"$bot" replay --data "$tmp/f1.csv" --harmed --train-nodes 4 --test-nodes 4 --no-tune
expect "replay --harmed --worst 0" 2 "^nccl-bot: replay: --harmed .*--worst" -- \
	"$bot" replay --data "$tmp/f1.csv" --harmed --worst 0 --train-nodes 4 --test-nodes 4 --no-tune
for fmt in json csv; do
	expect "replay --worst 3 --format $fmt" 2 "^nccl-bot: replay: --worst .*table.*--format $fmt" -- \
		"$bot" replay --data "$tmp/f1.csv" --worst 3 --format $fmt --train-nodes 4 --test-nodes 4 --no-tune
done
expect "replay --worst 0 --format json (no list asked for)" 0 '"policies"' -- \
	"$bot" replay --data "$tmp/f1.csv" --worst 0 --format json --policy thompson --mode jobs --jobs 2 \
	--train-nodes 4 --test-nodes 4 --no-tune
# sim --calibrate --data '' looked in / ("/aws-g5-a10g.csv", until
# 2026-12-04); the empty path is shown as '' (exit 1), as everywhere
# (test_usage.sh)
expect "sim --output '': a usage error" 2 "^nccl-bot: sim: --output: invalid value '': want a file name" -- \
	"$bot" sim --fabric a100-ib-hdr --output ''
expect "sim --calibrate --data ''" 1 "^nccl-bot: sim: --calibrate: --data '': No such file or directory$" -- \
	"$bot" sim --calibrate --data ''
# the earlier row's auto_us is said with the digits that read back to it (it
# was "%.9g": "differs from auto_us 1" for 1.0000000001, until 2026-12-04)
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1024,2,1,ring,ll,1.0000000001,5" "f,allreduce,1024,2,1,ring,ll,1.0000000002,5" >"$tmp/au.csv"
expect "replay: auto_us differing past 9 digits" 1 \
	'au.csv:3: auto_us "1.0000000002": differs from auto_us 1.0000000001 on line 2' -- "$bot" replay --data "$tmp/au.csv"
# an arm's rows of two sizes of one bucket, one auto_us known and one empty:
# the empty one was said "auto_us nan differs"
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1048576,2,1,ring,ll,130,5" "f,allreduce,1100000,2,1,ring,ll,,5" >"$tmp/aue.csv"
expect "replay: an arm's auto_us known and empty in one context" 1 \
	'aue.csv:3: auto_us empty differs from the value given on .*aue.csv:2 for ring/ll' -- \
	"$bot" replay --data "$tmp/aue.csv"
# an auto_us differing from an earlier file's row names that file (it said
# "line 2 of an earlier input", and which of several was left to guess)
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1024,2,1,ring,ll,7,5" >"$tmp/aua.csv"
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1024,2,1,tree,ll,9,5" >"$tmp/aub.csv"
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"f,allreduce,1024,2,1,tree,ll,8,5" >"$tmp/auc.csv"
expect "replay: auto_us differing from another file's row names it" 1 \
	"auc.csv:2: auto_us \"8\": differs from auto_us 9 on line 2 of $tmp/aub.csv for" -- \
	"$bot" replay --data "$tmp/aua.csv" --data "$tmp/aub.csv" --data "$tmp/auc.csv"
# a test split that selects no context of the data says which node counts
# the data has (it named the option alone)
expect "replay: test split with no context names the data's node counts" 1 \
	"^nccl-bot: replay: no context of the data is in the test split \\(--test-nodes 16-32; the data's node counts: 1\\)$" -- \
	"$bot" replay --data "$tmp/aua.csv"
expect "replay --data twice" 2 "^nccl-bot: replay: --data '$tmp/f1.csv': named twice" -- \
	"$bot" replay --data "$tmp/f1.csv" --data "$tmp/f1.csv" --train-nodes 4 --test-nodes 4 --no-tune
expect "replay --data and a positional file, the same" 2 "--data '$tmp/f1.csv': named twice" -- \
	"$bot" replay --data "$tmp/f1.csv" "$tmp/f1.csv" --train-nodes 4 --test-nodes 4 --no-tune
expect "replay --data twice by two paths" 2 "--data '$tmp/./f1.csv': the same file as '$tmp/f1.csv'" -- \
	"$bot" replay --data "$tmp/f1.csv" --data "$tmp/./f1.csv" --train-nodes 4 --test-nodes 4 --no-tune
# standard input ("-") redirected from a file named too: its rows counted twice
expect "replay --data FILE --data - <FILE" 2 "^nccl-bot: replay: --data '-': the same file as '$tmp/f1.csv'" -- \
	sh -c 'exec "$1" replay --data "$2" --data - --train-nodes 4 --test-nodes 4 --no-tune <"$2"' sh "$bot" "$tmp/f1.csv"
jitter_run() {	# jitter_run OUT [--sim-outliers P]: thompson on h100-ib-ndr, per call, CSV
	out=$1
	shift
	"$bot" replay --sim-fabrics h100-ib-ndr --mode per-call --calls 50 --policy thompson --no-tune \
		--format csv "$@" >"$tmp/$out" 2>"$tmp/$out.err" || bad "replay $* failed: $(head -n 3 "$tmp/$out.err")"
}
jitter_run j-def.csv
jitter_run j-own.csv --sim-outliers 0.003	# h100-ib-ndr's own rate
jitter_run j-hi.csv --sim-outliers 0.2
if [ -s "$tmp/j-def.csv" ] && cmp -s "$tmp/j-def.csv" "$tmp/j-own.csv"; then ok "replay --sim-outliers: the fabric's own rate is the default"
else bad "replay --sim-outliers 0.003 differs from h100-ib-ndr's default"; fi
if [ -s "$tmp/j-hi.csv" ] && ! cmp -s "$tmp/j-def.csv" "$tmp/j-hi.csv"; then ok "replay --sim-outliers 0.2 changes the sweep"
else bad "replay --sim-outliers 0.2: no effect"; fi
expect "replay --lofo" 0 '"holdout": "h100-ib-auto"' -- "$bot" replay --sim-fabrics h100-ib-auto,h100-efa \
	--lofo --policy thompson --mode jobs --jobs 2 --tune-contexts 8 --format json
# the held-out line says what was done: no tuning with --no-tune, no history
# without --history train (it said "tuned on ... history from its own N"
# whatever they said, until 2026-12-04)
expect "replay --lofo --no-tune: no tuning, no history" 0 \
	"held-out fabric h100-efa: default parameters \(--no-tune\), no history; scored on its 345 test" -- \
	"$bot" replay --sim-fabrics h100-ib-auto,h100-efa --lofo --policy thompson --mode jobs --jobs 2 --no-tune
# with --tune-contexts, the subset that tuned (it said all 345)
expect "replay --lofo --tune-contexts: the subset said" 0 \
	"held-out fabric h100-efa: parameters tuned on 8 of the other fabrics' 345 training contexts, no history" -- \
	"$bot" replay --sim-fabrics h100-ib-auto,h100-efa --lofo --policy thompson --mode jobs --jobs 2 --tune-contexts 8
expect "replay --lofo one fabric" 1 "--lofo needs at least two fabrics" -- "$bot" replay \
	--data "$tmp/f1.csv" --train-nodes 4 --test-nodes 4 --lofo --no-tune

# Two sizes in one size bucket carry their own costs (what spool sweep writes).
printf '%s\n' 'fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us' \
	'f1,allreduce,1048576,16,2,ring,simple,50,55' 'f1,allreduce,1100000,16,2,ring,simple,52,57' \
	'f1,allreduce,1048576,16,2,tree,simple,40,60' 'f1,allreduce,1100000,16,2,tree,simple,41,61' \
	>"$tmp/bucket.csv"
expect "two sizes in one bucket" 0 "" -- "$bot" replay --data "$tmp/bucket.csv" --train-nodes 2 \
	--test-nodes 2 --policy greedy --no-tune --mode jobs --jobs 2

# Learned state (formats.md section 12): a snapshot from the fuzz corpus (two
# emulated jobs on h100-ib-ndr), read by `state show` and `env --state`; bad
# snapshots, pointers and options rejected with the file and the reason.
snap=$top_srcdir/tests/fuzz/corpus-state/valid-two-jobs.nbs
lib=$PWD/tuner/libnccl-tuner-bot.so	# the rank-side library, built
expect "state --help" 0 "state add" -- "$bot" state --help
expect "state unknown action" 2 "unknown action" -- "$bot" state frob
expect "state show file" 0 "fabric: h100-ib-ndr" -- "$bot" state show "$snap"
expect "state add needs a fabric" 2 "--fabric" -- "$bot" state add --state "$tmp" "$tmp"
expect "state bad fabric name" 2 "want \[a-z0-9\]" -- "$bot" state add --state "$tmp" --fabric "../x" "$tmp"
expect "env --state file" 0 "NCCL_BOT_TABLE='NBT3" -- "$bot" env --state "$snap" --policy thompson --lib "$lib"
expect "env --state file, other fabric" 1 "holds fabric 'h100-ib-ndr', not 'roce'" -- \
	"$bot" env --state "$snap" --fabric roce --lib "$lib"
expect "env --state dir without --fabric" 2 "--fabric" -- "$bot" env --state "$tmp" --lib "$lib"
expect "env --fabric with --prior-only" 2 "goes with --state" -- "$bot" env --prior-only --fabric f --lib "$lib"
expect "env --state and --spool" 2 "exclude" -- "$bot" env --state "$snap" --spool "$tmp" --lib "$lib"
expect "env --fabric without a state dir" 2 "NCCL_BOT_STATE" -- env -u NCCL_BOT_STATE "$bot" env --fabric f --lib "$lib"
mkdir "$tmp/st"
expect "env --state dir, no state yet" 0 "no learned state yet" -- \
	"$bot" env --state "$tmp/st" --fabric h100-ib-ndr --policy thompson --lib "$lib"
expect "state show, no state yet" 1 "no state yet" -- "$bot" state show --state "$tmp/st" --fabric h100-ib-ndr
mkdir "$tmp/badspool"
echo "not a spool file" >"$tmp/badspool/nb-x-1.spool"
expect "state add, bad spool file" 1 "nb-x-1.spool: truncated" -- \
	"$bot" state add --state "$tmp/st" --fabric h100-ib-ndr "$tmp/badspool"
if [ ! -e "$tmp/st/h100-ib-ndr/current" ] && grep -q "1 failed validation (rejected, named above) and none is new" "$tmp/out" &&
	! grep -q -- "--partial" "$tmp/out"; then
	ok "state add refuses a job whose every file is bad, publishes nothing"
else
	bad "state add published a snapshot from bad files, or took them for nothing new"
	sed 's/^/    /' "$tmp/out" | head -n 5
fi
# a good file and a bad one, no --partial: nothing merged, said so with the remedy
mkdir "$tmp/mixedjob"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed" "$tmp/mixedjob/nb-a-1.spool"
echo "not a spool file" >"$tmp/mixedjob/nb-x-2.spool"
expect "state add, a good and a bad file" 1 \
	"h100-ib-ndr: nothing merged: 1 file\(s\) rejected; --partial merges the 1 valid new one\(s\)" -- \
	"$bot" state add --state "$tmp/st" --fabric h100-ib-ndr "$tmp/mixedjob"
[ ! -e "$tmp/st/h100-ib-ndr/current" ] && ok "state add, a good and a bad file: nothing published" ||
	bad "state add, a good and a bad file: published"
# ... with a second copy (a hard link) of the good file: still 1 valid new
# one, not 2 (the copy is skipped; it said 2 until 2026-12-04)
ln "$tmp/mixedjob/nb-a-1.spool" "$tmp/mixedjob/nb-a-3.spool"
expect "state add, a good file twice and a bad one: the copy not counted" 1 \
	"h100-ib-ndr: nothing merged: 1 file\(s\) rejected; --partial merges the 1 valid new one\(s\)" -- \
	"$bot" state add --state "$tmp/st" --fabric h100-ib-ndr "$tmp/mixedjob"
rm "$tmp/mixedjob/nb-a-3.spool"
mkdir "$tmp/emptyjob"
expect "state add, no spool files" 1 "no spool files in .*/emptyjob" -- \
	"$bot" state add --state "$tmp/st" --fabric h100-ib-ndr "$tmp/emptyjob"
# an empty directory beside a good job's files is the same error, naming it
# alone, nothing published (each path given is part of the job)
mkdir "$tmp/goodjob"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed" "$tmp/goodjob/nb-a-1.spool"
expect "state add, a good file and an empty directory" 1 "no spool files in [^ ]*/emptyjob \\(" -- \
	"$bot" state add --state "$tmp/st" --fabric h100-ib-ndr "$tmp/goodjob/nb-a-1.spool" "$tmp/emptyjob"
if [ ! -e "$tmp/st/h100-ib-ndr/current" ] && ! grep -q "goodjob\|published" "$tmp/out"; then
	ok "state add, a good file and an empty directory: nothing published, the good file not named"
else
	bad "state add, a good file and an empty directory: published, or named the good file"
	sed 's/^/    /' "$tmp/out" | head -n 5
fi
expect "state add, an empty directory before a good one, new fabric" 1 "typo6: no spool files in [^ ]*/emptyjob \\(" -- \
	"$bot" state add --state "$tmp/st" --fabric typo6 "$tmp/emptyjob" "$tmp/goodjob"
[ ! -e "$tmp/st/typo6" ] && ok "state add, an empty directory beside a good one: no fabric directory made" ||
	bad "state add, an empty directory beside a good one made a fabric directory"
# a job half merged before, nothing rejected: the refusal names the files
# merged before and never says "0 failed validation"
expect "state add, a job's first file" 0 "whole1: merged 1 spool file" -- \
	"$bot" state add --state "$tmp/st" --fabric whole1 "$tmp/goodjob"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-summary" "$tmp/goodjob/nb-b-2.spool"
expect "state add, half merged before" 1 "whole1: of this job's 2 spool file\\(s\\), 1 were merged before; nothing merged" -- \
	"$bot" state add --state "$tmp/st" --fabric whole1 "$tmp/goodjob"
if ! grep -q "failed validation\|rejected, named above" "$tmp/out"; then
	ok "state add, half merged before: no rejection spoken of"
else
	bad "state add, half merged before: speaks of rejected files"; sed 's/^/    /' "$tmp/out" | head -n 5
fi
rm "$tmp/goodjob/nb-b-2.spool"
# a mistyped fabric with nothing to merge leaves nothing behind for state verify to list
expect "state add, no spool files, new fabric" 1 "no spool files in .*/emptyjob" -- \
	"$bot" state add --state "$tmp/st" --fabric typo "$tmp/emptyjob"
expect "state add, no such path, new fabric" 1 "nosuchjob" -- \
	"$bot" state add --state "$tmp/st" --fabric typo2 "$tmp/nosuchjob"
[ ! -e "$tmp/st/typo" ] && [ ! -e "$tmp/st/typo2" ] && ok "state add with nothing to merge: no fabric directory made" ||
	bad "state add with nothing to merge made a fabric directory"
# nor does a job refused for its files (every file bad, or a bad one without
# --partial): the refusal is said as for a fabric with state
mkdir "$tmp/badjob"
echo "not a spool file" >"$tmp/badjob/nb-x-2.spool"
expect "state add, every file bad, new fabric" 1 "typo3: of this job's 1 spool file\(s\), 1 failed validation" -- \
	"$bot" state add --state "$tmp/st" --fabric typo3 "$tmp/badjob"
[ "$(grep -c 'rejected .*nb-x-2.spool' "$tmp/out")" = 1 ] && ok "state add, every file bad, new fabric: the file named once" ||
	bad "state add, every file bad, new fabric: the file named $(grep -c 'rejected' "$tmp/out") times"
expect "state add, every file bad, --partial, new fabric" 1 "typo4: nothing new \(1 file\(s\) read, 0 already merged, 1 rejected\)" -- \
	"$bot" state add --state "$tmp/st" --fabric typo4 --partial "$tmp/badjob"
expect "state add, a good and a bad file, new fabric" 1 "typo5: nothing merged: 1 file\(s\) rejected; --partial merges" -- \
	"$bot" state add --state "$tmp/st" --fabric typo5 "$tmp/mixedjob"
[ ! -e "$tmp/st/typo3" ] && [ ! -e "$tmp/st/typo4" ] && [ ! -e "$tmp/st/typo5" ] &&
	ok "state add refused for its files: no fabric directory made" ||
	bad "state add refused for its files made a fabric directory"
head -c 300 "$snap" >"$tmp/trunc.nbs"
expect "truncated snapshot" 1 "trunc.nbs: checksum mismatch" -- "$bot" env --state "$tmp/trunc.nbs" --lib "$lib"
expect "not a snapshot" 1 "bad magic" -- "$bot" state show "$top_srcdir/tests/cli/test_cli.sh"
# A published snapshot round-trips through a state directory; the table from
# the directory equals the table from the file (same bytes, same plan).
mkdir -p "$tmp/st/h100-ib-ndr"
cp "$snap" "$tmp/st/h100-ib-ndr/snap-0000000000000000.nbs"
echo "snap-0000000000000000.nbs" >"$tmp/st/h100-ib-ndr/current"
expect "snapshot not matching its name" 1 "does not match its name" -- \
	"$bot" env --state "$tmp/st" --fabric h100-ib-ndr --lib "$lib"
echo "../../etc/passwd" >"$tmp/st/h100-ib-ndr/current"
expect "current naming a path" 1 "does not hold a snapshot name" -- \
	"$bot" state show --state "$tmp/st" --fabric h100-ib-ndr
a=$("$bot" env --state "$snap" --policy thompson --round 2 --lib "$lib" 2>/dev/null)
b=$("$bot" env --state "$snap" --policy thompson --lib "$lib" 2>/dev/null)
c=$("$bot" env --state "$snap" --policy thompson --round 5 --lib "$lib" 2>/dev/null)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
	ok "env --state plans the state's round (2) unless --round says otherwise"
else
	bad "env --state round: default and --round 2 differ, or --round 5 changes nothing"
fi

# spool show DIR: every *.spool file of the directory, sorted by name (as
# env --spool reads them); other names and hidden files are not spool files.
sp=$top_srcdir/tests/fuzz/corpus-spool
mkdir "$tmp/spd"
cp "$sp/valid-summary" "$tmp/spd/nb-b-2.spool"
cp "$sp/valid-mixed" "$tmp/spd/nb-a-1.spool"
cp "$sp/valid-empty" "$tmp/spd/notes.txt"
cp "$sp/bad-crc" "$tmp/spd/.nb-c-3.spool.tmp"
expect "spool show DIR" 0 "nb-a-1.spool: spool v1" -- "$bot" spool show "$tmp/spd"
if [ "$(grep -c ': spool v1' "$tmp/out")" -eq 2 ] &&
	[ "$(grep ': spool v1' "$tmp/out" | head -n 1 | sed 's/:.*//')" = "$tmp/spd/nb-a-1.spool" ] &&
	! grep -q 'notes.txt\|nb-c-3' "$tmp/out"; then
	ok "spool show DIR: its two *.spool files, sorted, nothing else"
else
	bad "spool show DIR: not exactly nb-a-1 then nb-b-2"; sed 's/^/    /' "$tmp/out" | head -n 5
fi
cp "$sp/bad-crc" "$tmp/spd/nb-c-3.spool"
expect "spool show DIR with a bad file" 1 "nb-c-3.spool: offset 864: CRC-32C mismatch" -- \
	"$bot" spool show "$tmp/spd"
# Entries named *.spool that are not regular files: a FIFO is refused, never
# waited on (state add holds the fabric's lock meanwhile); a directory and a
# symbolic link are refused too, each named with its reason.
mkdir "$tmp/odd" "$tmp/st2"
cp "$sp/valid-mixed" "$tmp/odd/nb-a-1.spool"
mkfifo "$tmp/odd/nb-f-2.spool"
expect "state add, a FIFO named *.spool" 1 "nb-f-2.spool: a FIFO, not a spool file" -- \
	timeout 30 "$bot" state add --state "$tmp/st2" --fabric f "$tmp/odd"
expect "spool show DIR with a FIFO" 1 "nb-f-2.spool: a FIFO, not a spool file" -- \
	timeout 30 "$bot" spool show "$tmp/odd"
expect "spool show FIFO" 1 "nb-f-2.spool: a FIFO, not a spool file" -- \
	timeout 30 "$bot" spool show "$tmp/odd/nb-f-2.spool"
expect "spool sweep DIR with a FIFO" 1 "nb-f-2.spool: a FIFO, not a spool file" -- \
	timeout 30 "$bot" spool sweep "$tmp/odd"
expect "env --spool DIR with a FIFO" 0 "nb-f-2.spool: a FIFO, not a spool file" -- \
	timeout 30 "$bot" env --spool "$tmp/odd" --lib "$lib"
expect "  ... counted as rejected" 0 "env: 2 spool file\(s\) \(1 rejected, 0 the same bytes as another\)" -- \
	timeout 30 "$bot" env --spool "$tmp/odd" --lib "$lib"
# the same directory twice: its files counted as the same bytes, not "0
# skipped" (until 2026-12-04)
expect "env --spool DIR --spool DIR: the copies counted" 0 "env: 4 spool file\(s\) \(2 rejected, 1 the same bytes as another\)" -- \
	timeout 30 "$bot" env --spool "$tmp/odd" --spool "$tmp/odd" --lib "$lib"
rm "$tmp/odd/nb-f-2.spool"
mkdir "$tmp/odd/x.spool"
expect "state add, a directory named x.spool" 1 "x.spool: a directory, not a spool file" -- \
	"$bot" state add --state "$tmp/st2" --fabric f "$tmp/odd"
rmdir "$tmp/odd/x.spool"
ln -s nb-a-1.spool "$tmp/odd/nb-l-3.spool"
expect "state add, a link named *.spool" 1 "nb-l-3.spool: a symbolic link, not a spool file" -- \
	"$bot" state add --state "$tmp/st2" --fabric f "$tmp/odd"
if [ ! -e "$tmp/st2/f/current" ]; then ok "state add published nothing from odd entries"; else
	bad "state add published a job with odd entries"; fi
# Hostile entries named *.spool, each next to a valid file, for each of the
# three readers: refused by kind or size before any byte is read, with the
# reason; never followed, never waited on (timeout 10: a hang fails).
# state add and spool show exit 1, env --spool skips the entry and goes on.
for h in fifo shadow zero sparse dir; do
	mkdir "$tmp/hz-$h"
	cp "$sp/valid-mixed" "$tmp/hz-$h/nb-a-1.spool"
done
mkfifo "$tmp/hz-fifo/x.spool"
ln -s /etc/shadow "$tmp/hz-shadow/x.spool"
ln -s /dev/zero "$tmp/hz-zero/x.spool"
truncate -s 10G "$tmp/hz-sparse/x.spool"
mkdir "$tmp/hz-dir/x.spool"
for h in fifo shadow zero sparse dir; do
	case $h in
	fifo) why="a FIFO, not a spool file" ;;
	shadow | zero) why="a symbolic link, not a spool file" ;;
	sparse) why="10737418240 bytes, over the largest spool file a reader accepts" ;;
	dir) why="a directory, not a spool file" ;;
	esac
	expect "state add, $h named x.spool" 1 "hz-$h/x.spool: $why" -- \
		timeout 10 "$bot" state add --state "$tmp/st2" --fabric f "$tmp/hz-$h"
	expect "spool show, $h named x.spool" 1 "hz-$h/x.spool: $why" -- \
		timeout 10 "$bot" spool show "$tmp/hz-$h"
	expect "env --spool, $h named x.spool" 0 "rejected .*hz-$h/x.spool: $why" -- \
		timeout 10 "$bot" env --spool "$tmp/hz-$h" --lib "$lib"
	if [ "$h" != dir ]; then	# named alone (a directory named alone is a job directory)
		expect "spool show $h x.spool named alone" 1 "hz-$h/x.spool: $why" -- \
			timeout 10 "$bot" spool show "$tmp/hz-$h/x.spool"
		expect "state add $h x.spool named alone" 1 "hz-$h/x.spool: $why" -- \
			timeout 10 "$bot" state add --state "$tmp/st2" --fabric f "$tmp/hz-$h/x.spool"
	fi
done
if [ ! -e "$tmp/st2/f/current" ]; then ok "state add published nothing from hostile entries"; else
	bad "state add published a job with hostile entries"; fi
# a character device itself (where this user may make one)
if mknod "$tmp/hz-zero/c.spool" c 1 5 2>/dev/null; then
	expect "spool show, a device named c.spool" 1 "c.spool: a character device, not a spool file" -- \
		timeout 10 "$bot" spool show "$tmp/hz-zero"
	rm -f "$tmp/hz-zero/c.spool"
fi

# A first publish killed at any point (formats.md 12) leaves a fabric without
# state, never one refused forever: `state show` says "no state yet" or shows
# it, and a retry of `state add` publishes. At each named step of the store
# (its test hook), then 50 times at random points (SIGKILL after 0-4 ms).
mkdir "$tmp/kjob"
cp "$sp/valid-mixed" "$tmp/kjob/nb-a-1.spool"
cp "$sp/valid-summary" "$tmp/kjob/nb-b-2.spool"
# killed_first_publish LABEL CMD...: run the killed add, then check and retry
killed_first_publish() {
	label=$1
	shift
	rm -rf "$tmp/ks"
	mkdir "$tmp/ks"
	"$@" >/dev/null 2>&1
	"$bot" state show --state "$tmp/ks" --fabric f >"$tmp/out" 2>&1
	src=$?
	if [ "$src" -ne 0 ] && ! grep -q "no state yet" "$tmp/out"; then
		bad "$label: state show after the kill: exit $src"; sed 's/^/    /' "$tmp/out" | head -n 3
		return 1
	fi
	if ! "$bot" state add --state "$tmp/ks" --fabric f "$tmp/kjob" >"$tmp/out" 2>&1; then
		bad "$label: the retry of state add failed"; sed 's/^/    /' "$tmp/out" | head -n 3
		return 1
	fi
	if ! "$bot" state show --state "$tmp/ks" --fabric f >"$tmp/out" 2>&1 ||
		! grep -q "^rounds: 1" "$tmp/out" ||
		[ "$(ls -a "$tmp/ks/f" | grep -c '^\.snap-\|^\.current')" -ne 0 ] ||
		[ "$(ls "$tmp/ks/f" | grep -c '^snap-')" -ne 1 ]; then
		bad "$label: after the retry: not one snapshot of round 1, or temporaries left"
		ls -a "$tmp/ks/f" | sed 's/^/    /'
		return 1
	fi
	return 0
}
for step in publish-snapshot-tmp publish-after-snapshot publish-current-tmp publish-after-current; do
	if killed_first_publish "killed at $step" env NCCL_BOT_TEST_CRASH_AT=$step \
		"$bot" state add --state "$tmp/ks" --fabric f "$tmp/kjob"; then
		ok "state add killed at $step: no state or the state, and a retry publishes"
	fi
done
i=0 killed_ok=0
while [ $i -lt 50 ]; do
	us=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	us=$((us % 4000))
	if killed_first_publish "killed after ${us} us" timeout -s KILL \
		"$(printf '0.%06d' "$us")" "$bot" state add --state "$tmp/ks" --fabric f "$tmp/kjob"; then
		killed_ok=$((killed_ok + 1))
	fi
	i=$((i + 1))
done
[ "$killed_ok" -eq 50 ] && ok "50 first publishes killed at random points: each retry publishes"

# rounds stops at 2^64-1: a merge there keeps it (it wrapped to 0 until
# 2026-12-04)
mkdir "$tmp/rmax"
printf 'nccl-bot-state: 2\nfabric: f\nrounds: %s\nparent: "0000000000000000"\nledger: "0000000000000000"\nepoch: 0\nsources: []\ncontexts: []\n' \
	18446744073709551615 >"$tmp/rmax.yaml"
expect "import rounds 2^64-1" 0 "published" -- "$bot" state import --state "$tmp/rmax" --fabric f "$tmp/rmax.yaml"
expect "state add at rounds 2^64-1" 0 "round 18446744073709551615; published" -- \
	"$bot" state add --state "$tmp/rmax" --fabric f "$tmp/kjob"
expect "rounds kept at 2^64-1" 0 "^rounds: 18446744073709551615$" -- "$bot" state show --state "$tmp/rmax" --fabric f

mkdir "$tmp/spempty"
expect "spool show empty DIR" 1 "spempty: no \*.spool files" -- "$bot" spool show "$tmp/spempty"
expect "spool show missing path" 1 "nosuch: No such file" -- "$bot" spool show "$tmp/nosuch"

# env --lib: the rank library check (an absolute path to an ELF shared object
# for this machine exporting the tuner symbols), with the path (a relative one
# made absolute, lexically) and the reason; no export line is printed when it
# fails.
for p in /tmp /dev/null /etc/passwd "$top_srcdir/tests/cli/test_cli.sh" "$bot"; do
	expect "env --lib $p refused" 1 "rank-side library (/.*)?/$(basename "$p"): " -- \
		"$bot" env --prior-only --lib "$p"
	if grep -q '^export' "$tmp/out"; then bad "env --lib $p printed export lines"; fi
done
expect "env --lib directory reason" 1 "/tmp: a directory, not a shared library" -- \
	"$bot" env --prior-only --lib /tmp
expect "env --lib device reason" 1 "/dev/null: a character device" -- "$bot" env --prior-only --lib /dev/null
expect "env --lib text reason" 1 "/etc/passwd: not an ELF file" -- "$bot" env --prior-only --lib /etc/passwd
expect "env --lib missing" 1 "nosuch.so: No such file" -- "$bot" env --prior-only --lib "$tmp/nosuch.so"
head -c 1000 "$lib" >"$tmp/trunc.so"
expect "env --lib truncated" 1 "trunc.so: truncated" -- "$bot" env --prior-only --lib "$tmp/trunc.so"
expect "env --lib the built library" 0 "^export NCCL_TUNER_PLUGIN='$lib'" -- \
	"$bot" env --prior-only --lib "$lib"
botabs=$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")
(cd "$(dirname "$lib")" && "$botabs" env --prior-only --lib "./$(basename "$lib")") >"$tmp/out" 2>&1
if grep -q "^export NCCL_PROFILER_PLUGIN='$lib'" "$tmp/out"; then
	ok "env --lib relative: exported as an absolute path"
else
	bad "env --lib relative"; sed 's/^/    /' "$tmp/out" | head -n 5
fi

# A link in the library's path is kept in what NCCL is pointed at (a container
# binding only /opt/nccl-bot/<version> opens that path), also for a relative
# --lib taken from a current directory reached through the link.
ln -s "$(dirname "$lib")" "$tmp/optlink"
expect "env --lib through a link: exported as given" 0 \
	"^export NCCL_TUNER_PLUGIN='$tmp/optlink/libnccl-tuner-bot.so'" -- \
	"$bot" env --prior-only --lib "$tmp/optlink//./libnccl-tuner-bot.so"
(cd "$tmp/optlink" && "$botabs" env --prior-only --lib libnccl-tuner-bot.so) >"$tmp/out" 2>&1
if grep -q "^export NCCL_PROFILER_PLUGIN='$tmp/optlink/libnccl-tuner-bot.so'" "$tmp/out"; then
	ok "env --lib relative in a linked directory: the link kept"
else
	bad "env --lib relative in a linked directory"; sed 's/^/    /' "$tmp/out" | head -n 5
fi

# One grammar for every setting (formats.md 11): refused spellings are usage
# errors naming the option, the value and what is wanted.
expect "env --seed ' -1'" 2 "--seed ' -1': want a u64" -- "$bot" env --prior-only --lib "$lib" --seed ' -1'
expect "env --seed +7" 2 "--seed '\+7': want a u64" -- "$bot" env --prior-only --lib "$lib" --seed +7
expect "env --seed 010" 2 "--seed '010'.*leading zero" -- "$bot" env --prior-only --lib "$lib" --seed 010
expect "env --min-bytes 010" 2 "--min-bytes '010': want a byte count.*leading zero" -- \
	"$bot" env --prior-only --lib "$lib" --min-bytes 010
expect "env --min-bytes 1M" 2 "--min-bytes '1M'" -- "$bot" env --prior-only --lib "$lib" --min-bytes 1M
expect "env --min-bytes ' 1'" 2 "--min-bytes ' 1'" -- "$bot" env --prior-only --lib "$lib" --min-bytes ' 1'
expect "env --allow 'nvls,'" 2 "--allow 'nvls,': want all, none, or" -- \
	"$bot" env --prior-only --lib "$lib" --allow 'nvls,'
expect "env --allow 'all,nvls'" 2 "--allow 'all,nvls'.*: 'all'" -- "$bot" env --prior-only --lib "$lib" --allow all,nvls
expect "env --allow 'none,ring'" 2 "--allow 'none,ring'.*: 'none'" -- \
	"$bot" env --prior-only --lib "$lib" --allow none,ring
expect "env --allow 'nvls,frob'" 2 "unknown name: 'frob'" -- "$bot" env --prior-only --lib "$lib" --allow nvls,frob
expect "env --policy ' auto'" 2 "--policy ' auto'" -- "$bot" env --prior-only --lib "$lib" --policy ' auto'
expect "env --comms 0" 2 "--comms '0': want decimal digits, from 1 to 65536" -- \
	"$bot" env --spool "$tmp" --lib "$lib" --comms 0
expect "env --comms 65537" 2 "--comms '65537'" -- "$bot" env --spool "$tmp" --lib "$lib" --comms 65537
expect "env --comms +8" 2 "--comms '\+8'" -- "$bot" env --spool "$tmp" --lib "$lib" --comms +8
expect "env --round 2^62+1" 2 "--round '4611686018427387905': want decimal digits, up to 2\^62" -- \
	"$bot" env --spool "$tmp" --lib "$lib" --round 4611686018427387905
expect "env --round -1" 2 "--round '-1'" -- "$bot" env --spool "$tmp" --lib "$lib" --round -1
# all and none are lists of their own: every arm, and no arm beyond the defaults
all=$("$bot" env --prior-only --lib "$lib" --allow all 2>/dev/null | grep NCCL_BOT_TABLE)
none=$("$bot" env --prior-only --lib "$lib" --allow none 2>/dev/null | grep NCCL_BOT_TABLE)
dflt=$("$bot" env --prior-only --lib "$lib" 2>/dev/null | grep NCCL_BOT_TABLE)
if [ -n "$all" ] && [ "$none" = "$dflt" ] && [ "$all" != "$none" ]; then
	ok "env --allow all and none: every arm, and the default"
else
	bad "env --allow all/none: all '$all' none '$none' default '$dflt'"
fi
# --round and --comms mean nothing for a table without learned entries
expect "env --prior-only --round" 2 "--round goes with --spool or --state" -- \
	"$bot" env --prior-only --lib "$lib" --round 3
expect "env --prior-only --comms" 2 "--comms goes with --spool or --state" -- \
	"$bot" env --prior-only --lib "$lib" --comms 4

# replay and sim take their numbers, seeds, byte counts, policy names and
# allow-lists in the same grammar.
expect "replay --seed +7" 2 "replay: --seed '\+7': want a u64" -- "$bot" replay --seed +7
expect "replay --sim-seed ' 1'" 2 "--sim-seed ' 1'" -- "$bot" replay --sim-seed ' 1'
expect "replay --jobs 010" 2 "--jobs '010': want decimal digits, from 1 to 100000 .*leading zero" -- \
	"$bot" replay --jobs 010
expect "replay --threads 0x2" 2 "--threads '0x2'" -- "$bot" replay --threads 0x2
expect "replay --allow 'nvls,'" 2 "replay: --allow 'nvls,'" -- "$bot" replay --allow 'nvls,'
expect "replay --policy 'thompson,'" 2 "--policy 'thompson,'" -- "$bot" replay --policy 'thompson,'
expect "sim --seed -1" 2 "sim: --seed '-1': want a u64" -- "$bot" sim --seed -1
expect "sim --samples 010" 2 "--samples '010'.*leading zero" -- "$bot" sim --samples 010
expect "sim --min-bytes 1K" 2 "--min-bytes '1K': want a byte count" -- "$bot" sim --min-bytes 1K
expect "sim --max-bytes 2TiB" 2 "--max-bytes '2TiB'.*from 1 to 1TiB" -- "$bot" sim --max-bytes 2TiB
# its range is said once: not "<= 2^63" (the grammar's bound) beside it
expect "sim --min-bytes 0" 2 "^nccl-bot: sim: --min-bytes '0': want a byte count: decimal digits, optionally followed by KiB, MiB, GiB or TiB, from 1 to 1TiB \\(out of range\\)$" -- "$bot" sim --min-bytes 0
expect "sim --nodes 04" 2 "--nodes: invalid value '04'" -- "$bot" sim --nodes 04
# A node list that leaves a chosen fabric no count of its range is refused,
# naming the fabric and the range (it used to write only the header, exit 0).
expect "sim --nodes 100" 2 "^nccl-bot: sim: --nodes: invalid value '100': selects no node count of fabric h100-ib-ndr \\(simulated at 1-64 nodes\\)$" -- \
	"$bot" sim --nodes 100
expect "sim aws-g5-a10g --nodes 16" 2 "--nodes: invalid value '16': .*fabric aws-g5-a10g \\(simulated at 2-8 nodes\\)" -- \
	"$bot" sim --fabric aws-g5-a10g --nodes 16
expect "sim aws-g5-a10g --nodes 1" 2 "--nodes: invalid value '1': .*fabric aws-g5-a10g \\(simulated at 2-8 nodes\\)" -- \
	"$bot" sim --fabric aws-g5-a10g --nodes 1
expect "sim calibration --nodes 8 (modal-a100 has none)" 2 "fabric modal-a100 \\(simulated at 1-4 nodes\\)" -- \
	"$bot" sim --fabric calibration --nodes 8
expect "sim aws-g5-a10g --nodes 1,2 (2 is in range)" 0 "^aws-g5-a10g,allreduce,1024,2,2," -- \
	"$bot" sim --fabric aws-g5-a10g --nodes 1,2 --coll allreduce --samples 1 --max-bytes 1KiB
# A node count named twice is simulated once.
sim1() { "$bot" sim --fabric h100-ib-ndr --coll allreduce --samples 1 --max-bytes 2KiB "$@" 2>/dev/null; }
sim1 --nodes 4-8 >"$tmp/n48.csv"
sim1 --nodes 4,4-8 >"$tmp/n448.csv"
sim1 --nodes 4 >"$tmp/n4.csv"
sim1 --nodes 4,4 >"$tmp/n44.csv"
sim1 --nodes 8,4-8 >"$tmp/n848.csv"
if [ "$(wc -l <"$tmp/n48.csv")" -gt 2 ] && cmp -s "$tmp/n48.csv" "$tmp/n448.csv" &&
	cmp -s "$tmp/n4.csv" "$tmp/n44.csv" &&
	[ "$(sort "$tmp/n848.csv" | uniq -d | wc -l)" = 0 ] &&
	[ "$(wc -l <"$tmp/n848.csv")" = "$(wc -l <"$tmp/n48.csv")" ]; then
	ok "sim --nodes: a count named twice is simulated once"
else
	bad "sim --nodes: repeated counts (lines: 4-8 $(wc -l <"$tmp/n48.csv"), 4,4-8 $(wc -l <"$tmp/n448.csv"), 4 $(wc -l <"$tmp/n4.csv"), 4,4 $(wc -l <"$tmp/n44.csv"))"
fi
# --list prints the node range each fabric is simulated at: the default
# list's rows of each fabric span exactly that range.
"$bot" sim --list 2>/dev/null | awk '/ GPU\/node, [0-9]+-[0-9]+ nodes, / { print $1, $4 }' >"$tmp/ranges"
nr=0 nbad=0
while read -r fab range; do
	nr=$((nr + 1))
	got=$("$bot" sim --fabric "$fab" --coll allreduce --samples 1 --max-bytes 1KiB 2>/dev/null |
		awk -F, 'NR > 1 { n = $5 + 0; if (lo == "" || n < lo) lo = n; if (n > hi) hi = n } END { print lo "-" hi }')
	if [ "$got" != "$range" ]; then
		nbad=$((nbad + 1)); echo "    $fab: --list says $range nodes, simulated at $got"
	fi
done <"$tmp/ranges"
if [ "$nr" -ge 12 ] && [ "$nbad" = 0 ]; then ok "sim --list: each fabric's node range is the one simulated ($nr fabrics)"
else bad "sim --list node ranges ($nr fabrics read, $nbad wrong)"; fi
expect "sim --list: aws-g5-a10g is 2-8 nodes" 0 "^aws-g5-a10g +1 GPU/node, 2-8 nodes," -- "$bot" sim --list
# --calibrate away from the source tree: the message says where the default
# points and how to name the data (it only said "cannot open").
mkdir "$tmp/elsewhere"
expect "sim --calibrate outside the source tree" 1 \
	"^nccl-bot: sim: --calibrate: data/external/sweep/aws-g5-a10g.csv: cannot open: .*relative to the current directory.*give --data SRCDIR/data/external/sweep\\)$" -- \
	sh -c 'cd "$1" && exec "$2" sim --calibrate' sh "$tmp/elsewhere" "$botabs"
# The reports are fixed: an option that shapes a sweep is refused, not ignored
# (the old build printed every fabric for --auto-report --fabric X --output F,
# exit 0, and never wrote F).
expect "sim --auto-report refuses --fabric" 2 "^nccl-bot: sim: --fabric applies to a sweep, not to --auto-report" -- \
	"$bot" sim --auto-report --fabric a100-ib-hdr --output "$tmp/ar.txt"
if [ ! -e "$tmp/ar.txt" ]; then ok "sim --auto-report --output: no file written"
else bad "sim --auto-report --output wrote $tmp/ar.txt"; fi
expect "sim --calibrate refuses --seed=" 2 "^nccl-bot: sim: --seed applies to a sweep, not to --calibrate" -- \
	"$bot" sim --calibrate --seed=3
expect "sim --list refuses --nodes" 2 "^nccl-bot: sim: --nodes applies to a sweep, not to --list" -- \
	"$bot" sim --nodes 4 --list
# --list with another report prints both (it used to print the list alone)
expect "sim --list --auto-report exits 0" 0 "^aws-g5-a10g " -- "$bot" sim --list --auto-report
if grep -q "^# share of contexts where AUTO's arm" "$tmp/out"; then
	ok "sim --list --auto-report prints both reports"
else bad "sim --list --auto-report: $(head -c 300 "$tmp/out")"; fi
# a calibration that fails: exit 1, the list printed before its error,
# and the AUTO report still printed after it (it was held back until
# 2026-12-04)
expect "sim --list --calibrate --auto-report with a missing --data" 1 "--calibrate: $tmp/nonexist/aws-g5-a10g.csv: cannot open" -- \
	"$bot" sim --list --calibrate --auto-report --data "$tmp/nonexist"
lst=$(grep -n '^aws-g5-a10g ' "$tmp/out" | head -n 1 | cut -d: -f1)
cal=$(grep -n -- '--calibrate: ' "$tmp/out" | head -n 1 | cut -d: -f1)
rep=$(grep -n "^# share of contexts where AUTO's arm" "$tmp/out" | head -n 1 | cut -d: -f1)
if [ -n "$lst" ] && [ -n "$cal" ] && [ -n "$rep" ] && [ "$lst" -lt "$cal" ] && [ "$cal" -lt "$rep" ]; then
	ok "sim --list --calibrate --auto-report: list, the calibration's error, then the AUTO report"
else bad "sim: list at line ${lst:-none}, error at ${cal:-none}, report at ${rep:-none}"; fi
expect "sim: --data without --calibrate" 2 "^nccl-bot: sim: --data is read by --calibrate only" -- \
	"$bot" sim --fabric h100-roce --data "$tmp"
expect "sim --calibrate --data without the files" 1 "--calibrate: $tmp/elsewhere/aws-g5-a10g.csv: cannot open: .*--data DIR names the directory of aws-g5-a10g.csv" -- \
	"$bot" sim --calibrate --data "$tmp/elsewhere"
# Unsupported arms (auto_us -1) are no measurement: the rerun noise paired
# their empty measured_us (NaN) and said sigma 0.045 from 37 pairs instead of
# the data's 0.060 from 36, and calibrated with their ignored measurements.
mkdir "$tmp/calu"
cp "$top_srcdir/data/external/sweep/aws-g5-a10g.csv" "$top_srcdir/data/external/sweep/modal-a100.csv" "$tmp/calu/"
"$bot" sim --calibrate --data "$top_srcdir/data/external/sweep" 2>&1 | sed 1d >"$tmp/calu.want"
printf '%s\n' "aws-g5-a10g,allgather,1310720,5,5,tree,ll,-1," "aws-g5-a10g,allgather,1310720,5,5,tree,ll,-1," \
	"aws-g5-a10g,allgather,1310720,5,5,tree,ll,-1,5" "aws-g5-a10g,allgather,1310720,5,5,tree,ll,-1,500" \
	>>"$tmp/calu/aws-g5-a10g.csv"
"$bot" sim --calibrate --data "$tmp/calu" 2>&1 | sed 1d >"$tmp/calu.got"
if grep -q "^repeated-run noise: sigma 0\.0" "$tmp/calu.want" && cmp -s "$tmp/calu.want" "$tmp/calu.got"; then
	ok "sim --calibrate: unsupported arms' rows change nothing"
else bad "sim --calibrate with unsupported rows: $(diff "$tmp/calu.want" "$tmp/calu.got" | head -n 5)"; fi
# Nothing to calibrate with was a report of errors 0 from 0 rows and the
# prior as the fit, exit 0: a header alone, or rows of other fabrics only.
mkdir "$tmp/calh" "$tmp/calo"
echo "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" >"$tmp/calh/aws-g5-a10g.csv"
cp "$tmp/calh/aws-g5-a10g.csv" "$tmp/calh/modal-a100.csv"
expect "sim --calibrate: a header alone" 1 "^nccl-bot: sim: --calibrate: $tmp/calh/aws-g5-a10g.csv:1: no data rows$" -- \
	"$bot" sim --calibrate --data "$tmp/calh"
printf '%s\n' "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us" \
	"mine,allreduce,1048576,8,1,ring,ll,,5" "aws-g5-a10g,allreduce,1048576,8,1,auto,auto,,5" \
	>"$tmp/calo/aws-g5-a10g.csv"
cp "$tmp/calo/aws-g5-a10g.csv" "$tmp/calo/modal-a100.csv"
expect "sim --calibrate: no row of the calibration fabrics" 1 \
	"^nccl-bot: sim: --calibrate: $tmp/calo: no measured forced-arm row of fabric aws-g5-a10g or modal-a100" -- \
	"$bot" sim --calibrate --data "$tmp/calo"
if ! grep -q "objective" "$tmp/out"; then ok "sim --calibrate with nothing to fit prints no report"
else bad "sim --calibrate with nothing to fit: $(head -c 300 "$tmp/out")"; fi
cp "$top_srcdir/data/external/sweep/aws-g5-a10g.csv" "$top_srcdir/data/external/sweep/modal-a100.csv" "$tmp/calo/"
echo "aws-g5-a10g,allgather,1310720,5,5,ring,ll,7,6720.0" >>"$tmp/calo/modal-a100.csv"
expect "sim --calibrate: auto_us differing from the other file's row names it" 1 \
	"modal-a100.csv:[0-9]+: auto_us \"7\": differs from auto_us empty on line [0-9]+ of $tmp/calo/aws-g5-a10g.csv for" -- \
	"$bot" sim --calibrate --data "$tmp/calo"
expect "sim --min-bytes 1KiB" 0 "^h100-ib-ndr,allreduce,1024," -- "$bot" sim --fabric h100-ib-ndr \
	--nodes 4 --coll allreduce --samples 1 --min-bytes 1KiB --max-bytes 2KiB

# env is an explicit request: a user's own plugins are replaced, and named.
NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner-x.so NCCL_PROFILER_PLUGIN=/opt/other/libprof.so \
	"$bot" env --prior-only --lib "$lib" >"$tmp/out" 2>&1
if grep -q "replacing the user's NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner-x.so with nccl-bot's $lib" "$tmp/out" &&
	grep -q "replacing the user's NCCL_PROFILER_PLUGIN=/opt/other/libprof.so" "$tmp/out" &&
	grep -q "^export NCCL_PROFILER_PLUGIN='$lib'" "$tmp/out"; then
	ok "env replaces the user's plugins, naming them"
else
	bad "env replacing the user's plugins"; sed 's/^/    /' "$tmp/out" | head -n 5
fi
NCCL_TUNER_PLUGIN=NONE "$bot" env --prior-only --lib "$lib" >"$tmp/out" 2>&1
if grep -q "replacing the user's NCCL_TUNER_PLUGIN=NONE (the user had turned NCCL's tuner plugin off)" \
	"$tmp/out" && grep -q "^export NCCL_TUNER_PLUGIN='$lib'" "$tmp/out"; then
	ok "env replaces NCCL_TUNER_PLUGIN=none, saying the user had turned it off"
else
	bad "env and NCCL_TUNER_PLUGIN=none"; sed 's/^/    /' "$tmp/out" | head -n 5
fi
ln -s "$lib" "$tmp/libnccl-profiler-bot.so"
NCCL_TUNER_PLUGIN=$lib NCCL_PROFILER_PLUGIN=$tmp/libnccl-profiler-bot.so \
	"$bot" env --prior-only --lib "$lib" >"$tmp/out" 2>&1
if ! grep -q "replacing" "$tmp/out" && grep -q "^export NCCL_TUNER_PLUGIN='$lib'" "$tmp/out"; then
	ok "env: plugin variables naming our library (or a link to it) are not the user's"
else
	bad "env warned about our own library"; sed 's/^/    /' "$tmp/out" | head -n 5
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
