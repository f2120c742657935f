#!/bin/sh
# tests/cli/test_progress.sh - progress of long work (tools/progress.h):
# `nccl-bot sim` (--calibrate's fit too) and `compact` draw one updating
# line on stderr when it is a terminal (a pseudo-terminal from script(1)),
# and write nothing more when it is not: the output that scripts and logs
# see is unchanged.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
bot=${NCCL_BOT:-./nccl-bot}
case $bot in /*) ;; *) bot=$(pwd)/$bot ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
esc=$(printf '\033')
cr=$(printf '\r')

# not a terminal: stderr empty, the sweep the same to a file and to stdout
"$bot" sim --fabric h100-roce --nodes 4-8 --output "$tmp/a.csv" 2>"$tmp/err" >"$tmp/out"
rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ] &&
	ok "sim, stderr not a terminal: nothing on stderr" || bad "sim: rc $rc, stderr $(head -c 200 "$tmp/err")"
"$bot" sim --fabric h100-roce --nodes 4-8 2>"$tmp/err" >"$tmp/b.csv"
[ ! -s "$tmp/err" ] && cmp -s "$tmp/a.csv" "$tmp/b.csv" && ok "sim: the same rows to stdout" ||
	bad "sim to stdout differs or wrote to stderr"

have_script=0
script -qfec true /dev/null >/dev/null 2>&1 && have_script=1
# on a terminal: one line redrawn (\r, erase to its end), cleared at the end
if [ $have_script = 1 ]; then
	script -qfec "'$bot' sim --fabric h100-roce --nodes 4-8 --output '$tmp/c.csv'" /dev/null \
		>"$tmp/tty" 2>&1
	if grep -q "nccl-bot: sim: rows written 100% (" "$tmp/tty" &&
		grep -q "nccl-bot: sim: fabrics simulated" "$tmp/tty" &&
		[ "$(tail -c 4 "$tmp/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] &&
		[ "$(wc -l <"$tmp/tty")" = 0 ]; then
		ok "sim on a terminal: one updating line, cleared at the end"
	else
		bad "sim on a terminal:"; od -c "$tmp/tty" | head -n 8
	fi
	cmp -s "$tmp/a.csv" "$tmp/c.csv" && ok "sim on a terminal: the same sweep" ||
		bad "sim on a terminal wrote another sweep"
	NCCL_BOT_PROGRESS=0 script -qfec "'$bot' sim --fabric h100-roce --nodes 4 --output '$tmp/d.csv'" \
		/dev/null >"$tmp/tty" 2>&1
	[ ! -s "$tmp/tty" ] && ok "NCCL_BOT_PROGRESS=0: nothing on a terminal" ||
		bad "NCCL_BOT_PROGRESS=0 still drew"
else
	echo "# script(1) not installed: the terminal half is not checked"
fi

# sim --calibrate: the fit's trials counted on a terminal, nothing on a
# stderr that is not one, the report (stdout) the same either way
cal=$top_srcdir/data/external/sweep
"$bot" sim --calibrate --data "$cal" >"$tmp/cal.out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/err" ] && grep -q "^fitted " "$tmp/cal.out" &&
	ok "sim --calibrate, stderr not a terminal: nothing on stderr" ||
	bad "sim --calibrate: rc $rc, stderr $(head -c 200 "$tmp/err")"
if [ $have_script = 1 ]; then
	script -qfec "'$bot' sim --calibrate --data '$cal' >'$tmp/cal.tty.out'" /dev/null \
		>"$tmp/tty" 2>&1
	grep -q "nccl-bot: sim: --calibrate: fit trials   0% (0 of " "$tmp/tty" &&
		grep -q "nccl-bot: sim: --calibrate: fit trials 100% (" "$tmp/tty" &&
		[ "$(tail -c 4 "$tmp/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] &&
		[ "$(wc -l <"$tmp/tty")" = 0 ] &&
		ok "sim --calibrate on a terminal: the fit's progress, the line cleared" ||
		{ bad "sim --calibrate on a terminal"; od -c "$tmp/tty" | head -n 8; }
	cmp -s "$tmp/cal.out" "$tmp/cal.tty.out" &&
		ok "sim --calibrate: the same report with and without a terminal" ||
		{ bad "sim --calibrate reports differ"; diff "$tmp/cal.out" "$tmp/cal.tty.out" | head; }
fi

# compact: six deltas of three steps; the run's report the same with and
# without a terminal, the progress line only on a terminal
spool=$top_srcdir/tests/fuzz/corpus-spool
NOW=$(($(date +%s) + 300))
CONF="--user-cap 1000000000 --settle 1000000 --max-wait 2000000"
for s in 0 1 2; do mkdir -p "$tmp/sp$s"; cp "$spool/valid-mixed" "$tmp/sp$s/nb-a-1.spool"; done
for w in p t; do
	mkdir -p "$tmp/$w/ob" "$tmp/$w/st"
	for i in 0 1 2 3 4 5; do
		"$bot" harvest --outbox "$tmp/$w/ob" --fabric f1 --cluster c --job k$((i / 2)) \
			--node n$((i % 2 + 1)) --nodes 2 "$tmp/sp$((i / 2))" >/dev/null 2>&1 ||
			bad "harvest $w $i"
	done
	"$bot" ship --outbox "$tmp/$w/ob" --state "$tmp/$w/st" >/dev/null 2>&1 || bad "ship $w"
done
"$bot" compact --state "$tmp/p/st" --now $NOW $CONF >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "merged 6 delta(s) of 3 job step(s)" "$tmp/out" && [ $rc = 0 ] &&
	! grep -q "$cr\|$esc" "$tmp/out" "$tmp/err" && ok "compact, not a terminal: no progress line" ||
	{ bad "compact not on a terminal (rc $rc)"; cat "$tmp/out" "$tmp/err"; }
if [ $have_script = 1 ]; then
	# stderr on the terminal, the report (stdout) into a file
	script -qfec "'$bot' compact --state '$tmp/t/st' --now $NOW $CONF >'$tmp/t.out'" /dev/null \
		>"$tmp/tty" 2>&1
	grep -q "nccl-bot: compact: deltas read 100% (6 of 6)" "$tmp/tty" &&
		[ "$(tail -c 4 "$tmp/tty" | od -An -c | tr -d ' ')" = '\r033[K' ] &&
		ok "compact on a terminal: deltas read, the line cleared" ||
		{ bad "compact on a terminal"; od -c "$tmp/tty" | head -n 8; }
	sed 's/in [0-9.]* s/in T s/' "$tmp/out" >"$tmp/o1"
	sed 's/in [0-9.]* s/in T s/' "$tmp/t.out" >"$tmp/o2"
	cmp -s "$tmp/o1" "$tmp/o2" && ok "compact: the same report with and without a terminal" ||
		{ bad "compact reports differ"; diff "$tmp/o1" "$tmp/o2" | head; }
fi

echo "progress: $pass passed, $fail failed"
[ "$fail" = 0 ]
