#!/bin/sh
# tests/cli/test_compact.sh - `nccl-bot ship` and `nccl-bot compact` as an
# admin meets them (doc/formats.md section 14): usage errors, empty runs,
# a file that is not a delta shipped then quarantined with its reason, a
# FIFO in the outbox refused without hanging, a held lease, the metrics
# textfile, the ship command and the crash test hook. The merge logic
# itself is tests/unit/test_compact.c's.
set -u
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
unset NCCL_BOT_STATE NCCL_BOT_TEST_CRASH_AT
export NCCL_BOT_CONFIG=none	# never the host's /etc/nccl-bot/site.yaml

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# expect NAME WANT_RC PATTERN -- CMD...: exit status and output (stdout+stderr)
expect() {
	name=$1 want=$2 pat=$3
	shift 4
	timeout 60 "$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$name: exit $got, want $want"; sed 's/^/    /' "$tmp/out" | head -n 5; return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
		bad "$name: output lacks /$pat/"; sed 's/^/    /' "$tmp/out" | head -n 5; return
	fi
	ok "$name"
}

st=$tmp/state ob=$tmp/outbox
mkdir -p "$st" "$ob"

expect "ship --help" 0 "--outbox" -- "$bot" ship --help
expect "compact --help" 0 "--user-cap" -- "$bot" compact --help
expect "ship without options" 2 "required" -- "$bot" ship
expect "compact --fabric inbox: a usage error" 2 "--fabric 'inbox': not a fabric name" -- \
	"$bot" compact --state "$st" --fabric inbox
expect "compact without --state" 2 "--state is required" -- "$bot" compact
expect "compact bad cap" 2 "--user-cap '0'" -- "$bot" compact --state "$st" --user-cap 0
expect "compact bad retention" 2 "--retention '1'" -- "$bot" compact --state "$st" --retention 1
expect "ship bad timeout" 2 "--timeout" -- "$bot" ship --outbox "$ob" --state "$st" --timeout 1x
# an empty path is a usage error naming the option, never ": No such file"
expect "ship --outbox ''" 2 "ship: --outbox: empty" -- "$bot" ship --outbox "" --state "$st"
expect "ship --state ''" 2 "ship: --state: empty" -- "$bot" ship --outbox "$ob" --state ""
expect "ship --metrics-dir ''" 2 "ship: --metrics-dir: empty" -- "$bot" ship --outbox "$ob" --state "$st" --metrics-dir ""
expect "compact --state ''" 2 "compact: --state: empty" -- "$bot" compact --state ""
expect "compact --metrics-dir ''" 2 "compact: --metrics-dir: empty" -- "$bot" compact --state "$st" --metrics-dir ""
expect "compact --config missing" 2 "site configuration: .*nope.yaml" -- "$bot" compact --state "$st" --config "$tmp/nope.yaml"

expect "ship empty outbox" 0 "0 shipped" -- "$bot" ship --outbox "$ob" --state "$st"
expect "compact empty inbox" 0 "inbox: 0 delta" -- "$bot" compact --state "$st"

# the metrics are a side output: the run's summary stands, the exit status
# says the textfile was not written (as ship's does)
expect "compact: metrics dir missing" 1 "compact: metrics: .*/nometrics: No such file" -- \
	"$bot" compact --state "$st" --metrics-dir "$tmp/nometrics"
grep -q "inbox: 0 delta" "$tmp/out" && ok "compact: metrics dir missing: summary kept" ||
	bad "compact: metrics dir missing: summary kept"
# a run that stopped (no state directory) has nothing to summarise
expect "compact: state missing" 1 "compact: .*/nostate: No such file" -- \
	"$bot" compact --state "$tmp/nostate"
! grep -q "^compact:" "$tmp/out" && ok "compact: state missing: no summary" ||
	bad "compact: state missing: no summary"

# a file that is not a delta: shipped as it is, quarantined by the compactor
printf 'not a delta' >"$ob/c.1.0.0.n0.nbd"
expect "ship a file" 0 "1 shipped" -- "$bot" ship --outbox "$ob" --state "$st"
[ ! -e "$ob/c.1.0.0.n0.nbd" ] && [ -f "$st/inbox/c.1.0.0.n0.nbd" ] && ok "moved to the inbox" ||
	bad "moved to the inbox"
mkdir -p "$tmp/metrics"
expect "compact quarantines" 0 "1 quarantined" -- "$bot" compact --state "$st" --metrics-dir "$tmp/metrics"
grep -q "truncated" "$st/quarantine/c.1.0.0.n0.nbd.why" 2>/dev/null && ok "reason in .why" ||
	bad "reason in .why"
grep -q 'nccl_bot_compact_last_run_deltas{outcome="quarantined",reason="unreadable"} 1' \
	"$tmp/metrics/nccl-bot-compact.prom" 2>/dev/null && ok "metrics textfile" || bad "metrics textfile"
# this run's counts are gauges (they reset every run: a counter would lie to rate())
grep -q '^# TYPE nccl_bot_compact_last_run_deltas gauge$' "$tmp/metrics/nccl-bot-compact.prom" &&
	! grep -q ' counter$' "$tmp/metrics/nccl-bot-compact.prom" && ok "compact metrics are gauges" ||
	bad "compact metrics are gauges"

# the same name quarantined again: a copy .nbd.1 that the quarantine
# commands see, show, release (to its delta name) and drop (review 1, 6)
printf 'not a delta' >"$st/inbox/c.1.0.0.n0.nbd"
expect "compact quarantines a second copy" 0 "1 quarantined" -- "$bot" compact --state "$st"
[ -f "$st/quarantine/c.1.0.0.n0.nbd.1" ] && ok "second copy is .nbd.1" || bad "second copy is .nbd.1"
# a state directory that is not there is an error, not "nothing refused"
# (exit 0 with deltas: [] until 2026-12-04)
expect "quarantine list of a missing state directory" 1 "state quarantine: --state $tmp/nostate: No such file" -- \
	"$bot" state quarantine --state "$tmp/nostate" list
expect "quarantine list shows the copy" 0 "name: c.1.0.0.n0.nbd.1," -- "$bot" state quarantine --state "$st" list
expect "quarantine show the copy" 0 "reason: .*truncated" -- "$bot" state quarantine --state "$st" show c.1.0.0.n0.nbd.1
expect "quarantine release the copy" 0 "released" -- "$bot" state quarantine --state "$st" release c.1.0.0.n0.nbd.1
[ -f "$st/inbox/c.1.0.0.n0.nbd" ] && [ ! -e "$st/quarantine/c.1.0.0.n0.nbd.1" ] &&
	[ ! -e "$st/quarantine/c.1.0.0.n0.nbd.1.why" ] && ok "released as its delta name" ||
	bad "released as its delta name"
expect "compact quarantines it again" 0 "1 quarantined" -- "$bot" compact --state "$st"
expect "quarantine drop the copy" 0 "dropped" -- "$bot" state quarantine --state "$st" drop c.1.0.0.n0.nbd.1
[ ! -e "$st/quarantine/c.1.0.0.n0.nbd.1" ] && ok "dropped" || bad "dropped"
expect "quarantine: not a copy suffix" 2 "not a delta name" -- "$bot" state quarantine --state "$st" show c.1.0.0.n0.nbd.x

# a name with a control character: quarantined under a name the quarantine
# commands can list and drop (review 1, 20)
printf 'junk' >"$st/inbox/$(printf 'c.7\033x.nbd')"
expect "compact quarantines a control-character name" 0 "1 quarantined" -- "$bot" compact --state "$st"
[ -f "$st/quarantine/c.7?x.nbd" ] && [ -f "$st/quarantine/c.7?x.nbd.why" ] &&
	[ ! -e "$st/quarantine/$(printf 'c.7\033x.nbd')" ] && ok "quarantined under c.7?x.nbd" ||
	bad "quarantined under c.7?x.nbd"
expect "quarantine list shows it" 0 "name: 'c.7\\?x.nbd" -- "$bot" state quarantine --state "$st" list
expect "quarantine drop it" 0 "dropped" -- "$bot" state quarantine --state "$st" drop 'c.7?x.nbd'

# a FIFO is refused, never waited on (timeout 60 would fail the test)
mkfifo "$ob/fifo.nbd"
expect "ship refuses a FIFO" 1 "a FIFO" -- "$bot" ship --outbox "$ob" --state "$st"
rm -f "$ob/fifo.nbd"

# a held lease: exit 0 at once, naming the holder
if command -v flock >/dev/null 2>&1; then
	: >"$st/.lease"
	expect "lease held" 0 "another compactor holds the lease" -- \
		flock "$st/.lease" "$bot" compact --state "$st"
fi

# the ship command: exit 0 = shipped
printf 'x' >"$ob/c.2.0.0.n0.nbd"
expect "ship command fails" 1 "exit status 1" -- "$bot" ship --outbox "$ob" --ship-command false
# a program that cannot run is said so, not read as its exit status 127
expect "ship command not found" 1 "cannot run the ship command $tmp/nocmd: No such file or directory \(not found\); .*kept in the outbox" -- \
	"$bot" ship --outbox "$ob" --ship-command "$tmp/nocmd"
# (as a user who may not search a directory of PATH, execvp says EACCES)
expect "ship command not in PATH" 1 "cannot run the ship command nb-no-such-cmd: .*\(not found in PATH(\)|, or)" -- \
	"$bot" ship --outbox "$ob" --ship-command nb-no-such-cmd
# the FILE it gets: the outbox as given, one '/' (it got "ob//c...nbd" for --outbox ob/)
printf '#!/bin/sh\necho "FILE=$1" >&2\nexit 1\n' >"$tmp/showfile"
chmod +x "$tmp/showfile"
expect "ship command's FILE, --outbox DIR/" 1 "exit status 1" -- \
	"$bot" ship --outbox "$ob/" --ship-command "$tmp/showfile"
grep -q "^FILE=$ob/c.2.0.0.n0.nbd\$" "$tmp/out" && ok "ship command's FILE has one '/' after --outbox DIR/" ||
	{ bad "ship command's FILE after --outbox DIR/"; sed 's/^/    /' "$tmp/out" | head -n 3; }
expect "ship command" 0 "1 shipped" -- "$bot" ship --outbox "$ob" --ship-command "test -s" --metrics-dir "$tmp/metrics"
grep -q 'nccl_bot_ship_last_run_deltas{outcome="shipped"} 1' "$tmp/metrics/nccl-bot-ship.prom" &&
	ok "ship metrics" || bad "ship metrics"
grep -q '^# TYPE nccl_bot_ship_last_run_deltas gauge$' "$tmp/metrics/nccl-bot-ship.prom" &&
	! grep -q ' counter$' "$tmp/metrics/nccl-bot-ship.prom" && ok "ship metrics are gauges" ||
	bad "ship metrics are gauges"

# a conflict: the inbox holds another file of the name; kept, exit 1, and the
# message says what clears it and what to do otherwise
printf 'mine' >"$ob/c.9.0.0.n0.nbd"
printf 'theirs' >"$st/inbox/c.9.0.0.n0.nbd"
expect "ship conflict" 1 "c.9.0.0.n0.nbd: the inbox holds another file of that name .*kept in the outbox, never overwritten\\. The same step harvested again clears itself.* compare the two \\(cmp\\) and remove the one that is wrong" -- \
	"$bot" ship --outbox "$ob" --state "$st"
[ "$(cat "$ob/c.9.0.0.n0.nbd")" = mine ] && [ "$(cat "$st/inbox/c.9.0.0.n0.nbd")" = theirs ] &&
	ok "ship conflict: both files as they were" || bad "ship conflict: a file changed"
rm -f "$ob/c.9.0.0.n0.nbd" "$st/inbox/c.9.0.0.n0.nbd"

# no quarantine yet, a state path YAML must quote: the empty list through
# the emitter, never printf (a plain `r: #y` would read as a mapping and a comment)
mkdir -p "$tmp/r: #y"
expect "quarantine list, none yet" 0 "" -- "$bot" state quarantine --state "$tmp/r: #y" list
grep -qxF "quarantine: '$tmp/r: #y/quarantine'" "$tmp/out" && grep -qx 'deltas: \[\]' "$tmp/out" &&
	ok "empty quarantine list: the path quoted" || bad "empty quarantine list: the path not quoted"

# the crash test hook: the process dies as kill -9 would, at the named point
printf 'y' >"$ob/c.3.0.0.n0.nbd"
expect "crash hook" 137 "" -- env NCCL_BOT_TEST_CRASH_AT=ship-after-rename "$bot" ship --outbox "$ob" --state "$st"
expect "after the crash" 0 "1 already there" -- "$bot" ship --outbox "$ob" --state "$st"

# a run that fails to publish says nothing merged in provenance.log: the
# ledger's name made a directory (found by the same run on a copy: the ledger
# is a function of the state and the deltas), so its rename fails after the
# merge; the deltas stay in the inbox and the log names none of them merged
spool=${top_srcdir:-${srcdir:-.}}/tests/fuzz/corpus-spool
pv=$tmp/pv pst=$tmp/pv/st
mkdir -p "$pv/sp" "$pv/ob1" "$pv/ob2" "$pst"
cp "$spool/valid-mixed" "$pv/sp/a.spool"
for n in n1 n2; do
	"$bot" harvest --outbox "$pv/ob1" --fabric fab --cluster c --job 1 --node $n --nodes 2 "$pv/sp" >/dev/null 2>&1
	"$bot" harvest --outbox "$pv/ob2" --fabric fab --cluster c --job 2 --node $n --nodes 2 "$pv/sp" >/dev/null 2>&1
done
NOW=$(($(date +%s) + 300))
PV="--now $NOW --settle 1000000 --max-wait 2000000"
"$bot" ship --outbox "$pv/ob1" --state "$pst" >/dev/null 2>&1
expect "provenance: first job published" 0 "published snap-" -- "$bot" compact --state "$pst" $PV
"$bot" ship --outbox "$pv/ob2" --state "$pst" >/dev/null 2>&1
cp -a "$pst" "$pv/copy"
"$bot" compact --state "$pv/copy" $PV >/dev/null 2>&1
lname=$(cd "$pv/copy/.ledger/fab" && ls -t ledger-*.nbl | head -n 1)
mkdir "$pst/.ledger/fab/$lname"
expect "provenance: a publish that fails" 1 "FAILED, nothing published" -- "$bot" compact --state "$pst" $PV
grep -q "fab: merged 0 delta(s) of 0 job step(s)" "$tmp/out" && grep -q "inbox: 2 delta(s) listed, 0 quarantined, 2 left" "$tmp/out" &&
	ok "a publish that fails: none counted merged, both left" ||
	{ bad "a publish that fails: none counted merged, both left"; sed 's/^/    /' "$tmp/out"; }
[ -f "$pst/inbox/c.2.0.0.n1.nbd" ] && ! grep -q " merged - c\.2\." "$pst/.ledger/fab/provenance.log" &&
	grep -q " merged - c\.1\.0\.0\.n1\.nbd" "$pst/.ledger/fab/provenance.log" &&
	ok "provenance: nothing logged merged that was not published" ||
	{ bad "provenance: nothing logged merged that was not published"; sed 's/^/    /' "$pst/.ledger/fab/provenance.log"; }

# root running ship or compact by hand in the service account's state
# directory: refused, nothing made (root's inbox, .lease and .ledger, and
# root's 0640 deltas, failed the account's next ship and compact with
# "Permission denied" while verify saw nothing, until 2026-12-05)
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	own=$tmp/own
	mkdir -p "$own/st" "$own/ob"
	chmod 755 "$tmp" "$own"
	chown nobody "$own/st"
	expect "root compact in the account's state dir: refused" 1 "compact as root into a state directory uid [0-9]+ \\(nobody\\) owns: .*runuser -u nobody -- nccl-bot compact" -- \
		"$bot" compact --state "$own/st"
	expect "root ship into the account's state dir: refused" 1 "ship as root into a state directory uid [0-9]+ \\(nobody\\) owns" -- \
		"$bot" ship --outbox "$own/ob" --state "$own/st"
	# ... advising what works: the account alone cannot open root's 0750
	# outbox (the unit keeps CAP_DAC_OVERRIDE); runuser was advised and
	# failed with "Permission denied" (until 2026-12-05)
	grep -q "CAP_DAC_OVERRIDE.*systemctl start nccl-bot-ship.service, or setpriv --reuid=nobody --regid=[0-9]* --init-groups --inh-caps=+dac_override --ambient-caps=+dac_override -- nccl-bot ship" "$tmp/out" &&
		! grep -q "runuser" "$tmp/out" && ok "  ... advising the unit or setpriv with CAP_DAC_OVERRIDE, not runuser" ||
		{ bad "  ... advising the unit or setpriv with CAP_DAC_OVERRIDE, not runuser"; sed 's/^/    /' "$tmp/out"; }
	[ -z "$(ls -A "$own/st")" ] && ok "  ... nothing made there" ||
		{ bad "  ... nothing made there"; ls -la "$own/st" | sed 's/^/    /'; }
	chmod 750 "$own/ob"
	expect "  ... (runuser alone cannot open root's 0750 outbox)" 1 "ob: Permission denied" -- \
		runuser -u nobody -- "$bot" ship --outbox "$own/ob" --state "$own/st"
	if command -v setpriv >/dev/null; then
		setpriv --reuid=nobody --regid="$(stat -c %g "$own/st")" --init-groups --inh-caps=+dac_override \
			--ambient-caps=+dac_override -- "$bot" ship --outbox "$own/ob" --state "$own/st" >"$tmp/out" 2>&1
		[ $? -eq 0 ] && [ -d "$own/st/inbox" ] && ok "  ... the advised setpriv runs it" ||
			{ bad "  ... the advised setpriv runs it"; sed 's/^/    /' "$tmp/out"; }
		rm -rf "$own/st/inbox"
	fi
	chmod 755 "$own/ob"
	expect "the account's own compact runs" 0 "" -- runuser -u nobody -- "$bot" compact --state "$own/st"
	expect "the account's own ship runs" 0 "" -- runuser -u nobody -- "$bot" ship --outbox "$own/ob" --state "$own/st"
	expect "root compact in root's own state dir still runs" 0 "" -- "$bot" compact --state "$st"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
