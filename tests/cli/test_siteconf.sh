#!/bin/sh
# tests/cli/test_siteconf.sh - the site configuration as ship, compact and
# harvest read it (doc/formats.md section 15), and the compactor's metrics
# textfile (section 14) checked with --now.
#
# Configuration: a file gives the state and outbox directories and the
# knobs, an option overrides its key with the same grammar, NCCL_BOT_CONFIG
# names the file, NCCL_BOT_CONFIG=none reads none; a bad file (unknown key,
# an alias, deep nesting, a bad value) exits 2 naming the file, line and
# problem. The host's /etc/nccl-bot/site.yaml is never read: every run has
# NCCL_BOT_CONFIG set (to a file of ours, or none) or --config.
#
# Metrics: nccl_bot_inbox_oldest_seconds and nccl_bot_snapshot_age_seconds
# have exact values under --now (mtimes set with touch), and both textfiles
# are valid Prometheus text: every sample's family has one HELP and one
# TYPE before it, and no label names a user (uid, user, account, job).
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
spool=$top_srcdir/tests/fuzz/corpus-spool
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
unset NCCL_BOT_STATE NCCL_BOT_TEST_CRASH_AT
export NCCL_BOT_CONFIG=none

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

st=$tmp/state ob=$tmp/outbox sp=$tmp/spool
mkdir -p "$st" "$ob" "$sp" "$tmp/metrics"
cp "$spool/valid-mixed" "$sp/nb-a-1.spool"

# ---- configuration --------------------------------------------------------------

cat >"$tmp/site.yaml" <<YAML
version: 1
state_dir: $st
outbox_dir: $ob
metrics_dir: $tmp/metrics
retention: 3
settle: 300
max_wait: 3600
fabrics: [f1, f2]
YAML

# harvest takes outbox_dir from the file; ship takes outbox_dir and state_dir
expect "harvest: outbox_dir from --config" 0 "wrote $ob/local.5.0.0.n1.nbd" -- \
	"$bot" harvest --config "$tmp/site.yaml" --fabric f1 --job 5 --node n1 --nodes 2 "$sp"
expect "ship: no --outbox/--state without a file" 2 "required" -- "$bot" ship
expect "ship: directories from NCCL_BOT_CONFIG" 0 "$ob: 1 shipped" -- \
	env NCCL_BOT_CONFIG="$tmp/site.yaml" "$bot" ship
[ -f "$st/inbox/local.5.0.0.n1.nbd" ] && ok "shipped into state_dir's inbox" ||
	bad "shipped into state_dir's inbox"
[ -f "$tmp/metrics/nccl-bot-ship.prom" ] && ok "ship: metrics_dir from the file" ||
	bad "ship: metrics_dir from the file"
# --ship-command overrides ship_command (here: none) with the file's grammar
expect "ship: --ship-command with a control character" 2 \
	"--ship-command 'a.*ship_command: a control character" -- \
	"$bot" ship --config "$tmp/site.yaml" --ship-command "$(printf 'a\tb')"

# compact: state_dir from the file, the fabric list, and an option over a key
t0=$(date +%s)
touch -d "@$t0" "$st/inbox/local.5.0.0.n1.nbd"
expect "compact: state_dir from the file (1 of 2 nodes: waits)" 0 "f1: .* 1 waiting; .*nothing published \\(1 waiting for more nodes or the settle time, [0-9]+ s; a step merges as it is after [0-9]+ s\\)" -- \
	"$bot" compact --config "$tmp/site.yaml" --now $((t0 + 100))
expect "compact: --settle overrides the file's settle" 0 "f1: merged 1 delta" -- \
	"$bot" compact --config "$tmp/site.yaml" --now $((t0 + 100)) --settle 60
expect "compact: an override against another key of the file" 2 "options with the site configuration: max_wait 3600 is below settle 4000" -- \
	"$bot" compact --config "$tmp/site.yaml" --settle 4000
expect "compact: options checked together, whatever their order" 0 "" -- \
	"$bot" compact --config "$tmp/site.yaml" --settle 4000 --max-wait 5000
expect "compact: --window with the file's range (>= 60)" 2 "--window '59': window: '59' is not a number 60\.\." -- \
	"$bot" compact --config "$tmp/site.yaml" --window 59
# a fabric outside the file's list is quarantined
"$bot" harvest --outbox "$ob" --fabric f3 --job 6 --node n1 --nodes 2 "$sp" >/dev/null 2>&1
"$bot" ship --config "$tmp/site.yaml" >/dev/null 2>&1
expect "compact: the file's fabric list" 0 "1 quarantined" -- \
	"$bot" compact --config "$tmp/site.yaml"
grep -q "fabric f3 is not in the site's fabric list" "$st/quarantine/local.6.0.0.n1.nbd.why" 2>/dev/null &&
	ok "unknown fabric: .why" || bad "unknown fabric: .why"
# --state wins over state_dir
mkdir -p "$tmp/other"
expect "compact: --state overrides state_dir" 0 "inbox: 0 delta" -- \
	"$bot" compact --config "$tmp/site.yaml" --state "$tmp/other"
[ -d "$tmp/other/inbox" ] && ok "--state used" || bad "--state used"
# NCCL_BOT_CONFIG=none: no file, so no state directory
expect "NCCL_BOT_CONFIG=none reads no file" 2 "--state is required" -- "$bot" compact
# an empty file: the refusal asks for the version written, and says 1 still reads
: >"$tmp/empty.yaml"
expect "an empty file: the version written, and 1 still read" 2 \
	"site configuration: $tmp/empty.yaml: not a site configuration \(want a mapping with version: 2; version 1 still read\)" -- \
	env NCCL_BOT_CONFIG="$tmp/empty.yaml" "$bot" compact --state "$tmp/other"

# bad files: exit 2, naming the file, the line and the problem
bad_conf() {	# NAME PATTERN CONTENT
	printf '%s' "$3" >"$tmp/bad.yaml"
	expect "bad config: $1" 2 "site configuration: $tmp/bad.yaml:$2" -- \
		"$bot" compact --config "$tmp/bad.yaml"
	expect "bad config via NCCL_BOT_CONFIG: $1" 2 "site configuration: $tmp/bad.yaml:$2" -- \
		env NCCL_BOT_CONFIG="$tmp/bad.yaml" "$bot" ship
}
bad_conf "unknown key" "4:1: unknown key 'stat_dir'" \
	"version: 1
retention: 4
# a typo
stat_dir: /x
"
bad_conf "alias" "2:9: an anchor \(&s\): anchors and aliases are refused" \
	"version: 1
settle: &s 10
max_wait: *s
"
nest=$(awk 'BEGIN { for (i = 0; i < 200; i++) printf "["; printf "a"; for (i = 0; i < 200; i++) printf "]" }')
bad_conf "deep nesting" "2:[0-9]+: " "version: 1
fabrics: $nest
"
nest=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "{k: "; printf "1"; for (i = 0; i < 40; i++) printf "}" }')
bad_conf "deep mapping" "2:[0-9]+: " "version: 1
window: $nest
"
bad_conf "bad number" "2:[0-9]+: retention: '1' is not a number 2\.\.1024" "version: 1
retention: 1
"
bad_conf "relative path" "2:[0-9]+: state_dir: 'state' is not an absolute path" "version: 1
state_dir: state
"
bad_conf "no version" "1:1: no version" "retention: 4
"
# a newer version's file is refused naming its version wherever the
# version line stands, not for the key or value that version brought
# (it said "unknown key 'new_key'" when the key came first)
bad_conf "a newer version, its key before the version" "3:10: version 3: this build reads versions 1 to 2 \(a newer format\)" \
	"new_key: 1
retention: 2000
version: 3
"
bad_conf "a newer version, a value out of this build's range first" "2:10: version 3: this build reads versions 1 to 2 \(a newer format\)" \
	"retention: 2000
version: 3
"
bad_conf "  ... a known version keeps the key's refusal" "1:1: unknown key 'new_key'" \
	"new_key: 1
version: 2
"
# a file others may write decides ship_command (run with CAP_DAC_OVERRIDE)
# and the fabric stamped by root: refused, naming the file and the mode
cp "$tmp/site.yaml" "$tmp/w.yaml"
chmod 0666 "$tmp/w.yaml"
expect "a site configuration writable by everyone: refused" 2 \
	"site configuration: $tmp/w.yaml: writable by everyone \\(mode 666\\)" -- \
	"$bot" ship --config "$tmp/w.yaml"
if [ "$(id -u)" = 0 ] && chgrp 65534 "$tmp/w.yaml" 2>/dev/null; then
	chmod 0664 "$tmp/w.yaml"
	expect "  ... root's file writable by another group: refused" 2 \
		"site configuration: $tmp/w.yaml: writable by its group \\(mode 664\\)" -- \
		"$bot" ship --config "$tmp/w.yaml"
	chgrp 0 "$tmp/w.yaml"
	expect "  ... writable by root's group: taken" 0 "0 shipped" -- "$bot" ship --config "$tmp/w.yaml"
fi
expect "a missing --config file" 2 "site configuration: $tmp/none.yaml: No such file" -- \
	"$bot" ship --config "$tmp/none.yaml"
expect "a missing NCCL_BOT_CONFIG file" 2 "site configuration: $tmp/none.yaml: No such file" -- \
	env NCCL_BOT_CONFIG="$tmp/none.yaml" "$bot" compact --state "$st"
expect "harvest with --outbox reads no file" 0 "wrote" -- \
	env NCCL_BOT_CONFIG="$tmp/bad.yaml" "$bot" harvest --outbox "$ob" --fabric f1 --job 7 --node n1 --nodes 2 "$sp"

# ---- metrics, exact under --now ---------------------------------------------------

st=$tmp/m-state ob=$tmp/m-outbox md=$tmp/m-metrics
mkdir -p "$st" "$ob" "$md"
prom=$md/nccl-bot-compact.prom
metric() { grep -E "^$1 " "$prom" | awk '{ print $2 }'; }

"$bot" harvest --outbox "$ob" --fabric f1 --job 11 --node n1 --nodes 2 "$sp" >/dev/null 2>&1
"$bot" ship --outbox "$ob" --state "$st" --metrics-dir "$md" >/dev/null 2>&1
touch -d "@$t0" "$st/inbox/local.11.0.0.n1.nbd"
expect "metrics: a step waiting" 0 "1 waiting" -- \
	"$bot" compact --state "$st" --now $((t0 + 123)) --metrics-dir "$md"
v=$(metric nccl_bot_inbox_oldest_seconds)
[ "$v" = 123 ] && ok "inbox_oldest_seconds = 123" || bad "inbox_oldest_seconds = '$v', want 123"
[ "$(metric nccl_bot_inbox_backlog)" = 1 ] && ok "inbox_backlog = 1" || bad "inbox_backlog"
grep -q '^nccl_bot_snapshot_age_seconds' "$prom" && bad "snapshot age without a snapshot" ||
	ok "no snapshot age before a publish"
expect "metrics: settled, merged" 0 "f1: merged 1 delta.*published" -- \
	"$bot" compact --state "$st" --now $((t0 + 400)) --metrics-dir "$md"
[ "$(metric nccl_bot_inbox_oldest_seconds)" = 0 ] && ok "inbox_oldest_seconds = 0 when empty" ||
	bad "inbox_oldest_seconds when empty"
# current replaced at t0+1000 (as if); a second step's delta arrived at t0+1500
touch -d "@$((t0 + 1000))" "$st/f1/current"
"$bot" harvest --outbox "$ob" --fabric f1 --job 12 --node n1 --nodes 2 "$sp" >/dev/null 2>&1
"$bot" ship --outbox "$ob" --state "$st" >/dev/null 2>&1
touch -d "@$((t0 + 1500))" "$st/inbox/local.12.0.0.n1.nbd"
expect "metrics: the second step waits" 0 "1 waiting" -- \
	"$bot" compact --state "$st" --now $((t0 + 1600)) --metrics-dir "$md"
v=$(metric 'nccl_bot_snapshot_age_seconds\{fabric="f1"\}')
[ "$v" = 600 ] && ok "snapshot_age_seconds{f1} = 600" || bad "snapshot_age_seconds = '$v', want 600"
v=$(metric nccl_bot_inbox_oldest_seconds)
[ "$v" = 100 ] && ok "inbox_oldest_seconds = 100" || bad "inbox_oldest_seconds = '$v', want 100"

# Prometheus text: HELP and TYPE once per family, before its samples; labels
# only outcome, reason, fabric; never a user's
promcheck() {
	awk '
	/^# HELP / { if (help[$3]++) { print "HELP twice: " $3; bad = 1 } next }
	/^# TYPE / { if (type[$3]++) { print "TYPE twice: " $3; bad = 1 }
		     if ($4 !~ /^(counter|gauge)$/) { print "type " $4; bad = 1 } next }
	/^#/ || /^$/ { next }
	{
		name = $1; sub(/\{.*/, "", name)
		if (name !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) { print "bad name: " $0; bad = 1 }
		if (!help[name] || !type[name]) { print "no HELP/TYPE before: " $0; bad = 1 }
		if ($2 !~ /^[0-9]+(\.[0-9]+)?$/ || NF != 2) { print "bad value: " $0; bad = 1 }
		lab = $1
		if (lab ~ /\{/) {
			sub(/^[^{]*\{/, "", lab); sub(/\}$/, "", lab)
			n = split(lab, kv, ",")
			for (i = 1; i <= n; i++) {
				k = kv[i]; sub(/=.*/, "", k)
				if (kv[i] !~ /^[a-z_]+="[a-z0-9._-]*"$/) { print "bad label: " kv[i]; bad = 1 }
				if (k ~ /uid|user|account|job/ || k !~ /^(outcome|reason|fabric)$/) {
					print "label " k ": " $0; bad = 1
				}
			}
		}
		samples++
	}
	END { if (!samples) { print "no samples"; bad = 1 } exit bad }' "$1"
}
for f in "$md/nccl-bot-compact.prom" "$md/nccl-bot-ship.prom"; do
	if out=$(promcheck "$f"); then
		ok "valid Prometheus text, no user labels: ${f##*/}"
	else
		bad "Prometheus text ${f##*/}: $out"
	fi
done
# the check itself refuses a user label and a family without HELP
printf '# HELP a x\n# TYPE a gauge\na{uid="7"} 1\n' >"$tmp/p1"
printf '# TYPE b gauge\nb 1\n' >"$tmp/p2"
promcheck "$tmp/p1" >/dev/null && bad "promcheck took a uid label" || ok "promcheck refuses a uid label"
promcheck "$tmp/p2" >/dev/null && bad "promcheck took no HELP" || ok "promcheck refuses no HELP"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
