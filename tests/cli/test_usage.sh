#!/bin/sh
# tests/cli/test_usage.sh - usage errors as a new user meets them: every
# message starts with "nccl-bot: CMD:" (getopt's own too), an option is never
# taken for a file or a value, a refused value is refused before any work
# (the demo's --svg before its cluster starts), and paths in messages are
# written as the user gave the directory ("spool/" does not become
# "spool//x.spool").
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli/lib.sh"

# getopt's messages (an unknown option, a missing value) name the command
# after "nccl-bot:", as the command's own messages do.
for cmd in env harvest "spool sweep" "state add" "state show" "state export" ship compact \
	report fabric "fabric generate" demo replay sim doctor; do
	# shellcheck disable=SC2086 # $cmd is one or two words
	expect "$cmd: unknown option named with the command" 2 "^nccl-bot: $cmd: .*--frob" -- \
		"$bot" $cmd --frob
done
for cmd in env "state add" ship compact report; do
	# shellcheck disable=SC2086
	expect "$cmd: missing value named with the command" 2 "^nccl-bot: $cmd: .*--state" -- \
		"$bot" $cmd --state
done

# spool show has options too: --help, and an unknown one is a usage error,
# not a missing file; "--" ends the options.
# the top-level help names --version, as the man page does (neither did
# until 2026-12-05), and --version answers
expect "nccl-bot --help names --version" 0 "nccl-bot --version. prints the release" -- "$bot" --help
expect "nccl-bot --version" 0 "^nccl-bot [0-9]+\.[0-9]+\.[0-9]+$" -- "$bot" --version
expect "spool show --help" 0 "^usage: nccl-bot spool show" -- "$bot" spool show --help
expect "spool show -h" 0 "^usage: nccl-bot spool show" -- "$bot" spool show -h
expect "spool show --frob" 2 "^nccl-bot: spool show: unknown option '--frob'" -- \
	"$bot" spool show --frob
expect "spool show -- a missing file" 1 "^nccl-bot: spool show: -x: No such file" -- \
	"$bot" spool show -- -x
# after "--" a file named like an option is read (the old build took "--"
# for a file too, and failed on it)
botabs=$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")
mkdir "$tmp/dash"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed" "$tmp/dash/-x"
expect "spool show -- a file named -x" 0 "" -- \
	sh -c 'cd "$1" && exec "$2" spool show -- -x' sh "$tmp/dash" "$botabs"
expect "spool show, options only" 2 "^usage:" -- "$bot" spool show --
# an option after the files is one too (it was opened as a file), found
# before any file is shown; after "--" it is a file
expect "spool show FILE --frob" 2 "^nccl-bot: spool show: unknown option '--frob'" -- \
	"$bot" spool show "$tmp/dash/-x" --frob
grep -q "spool v" "$tmp/out" && bad "spool show FILE --frob: nothing shown first" ||
	ok "spool show FILE --frob: nothing shown first"
expect "spool show FILE --help" 0 "^usage: nccl-bot spool show" -- "$bot" spool show "$tmp/dash/-x" --help
expect "spool show FILE -- --frob: a file" 1 "^nccl-bot: spool show: --frob: No such file" -- \
	"$bot" spool show "$tmp/dash/-x" -- --frob
# spool show's rejections name the command too
printf 'garbage\n' >"$tmp/bad.spool"
expect "spool show: a rejected file named with the command" 1 \
	"^nccl-bot: spool show: .*bad.spool: truncated" -- "$bot" spool show "$tmp/bad.spool"

# sim: an unknown option is unknown also as the last word (not "missing
# value"); -h is --help
expect "sim: unknown last option" 2 "unknown option '--frob'" -- "$bot" sim --frob
expect "sim -h" 0 "^usage: nccl-bot sim" -- "$bot" sim -h
expect "sim: a node range without a count of the default list" 2 "hold no count of the default list" -- \
	"$bot" sim --fabric h100-roce --nodes 5-5
expect "sim: a bad node list is still that" 2 "expected decimal counts" -- \
	"$bot" sim --fabric h100-roce --nodes x
# an empty item of a list is refused, naming the option and the value (",":
# "hold no count of the default list"; "4,,8" was taken as 4,8)
for v in ',' '4,,8' '4,' ',4'; do
	expect "sim --nodes '$v': an empty item" 2 "^nccl-bot: sim: --nodes: invalid value '$v': an empty item" -- \
		"$bot" sim --fabric h100-roce --nodes "$v" --coll allreduce --samples 1 --min-bytes 4 --max-bytes 4
done
expect "sim --coll 'allreduce,': an empty item" 2 "^nccl-bot: sim: --coll: invalid value 'allreduce,': an empty item" -- \
	"$bot" sim --fabric h100-roce --nodes 1 --coll allreduce, --samples 1 --min-bytes 4 --max-bytes 4
expect "replay --mode 'jobs,,epochs': an empty item" 2 "^nccl-bot: replay: --mode 'jobs,,epochs': an empty item" -- \
	"$bot" replay --mode jobs,,epochs
# sim's sizes are powers of two: a range without one is refused, not an
# empty sweep with exit 0
expect "sim: a size range without a power of two" 2 "holds no power of two" -- \
	"$bot" sim --fabric h100-roce --nodes 1 --coll allreduce --min-bytes 3 --max-bytes 3
expect "sim: 3 to 4 holds 4" 0 "^h100-roce,allreduce,4," -- \
	"$bot" sim --fabric h100-roce --nodes 1 --coll allreduce --samples 1 --min-bytes 3 --max-bytes 4

# compact --fabric takes a fabric name, as state does
expect "compact --fabric ''" 2 "^nccl-bot: compact: --fabric '': want" -- \
	"$bot" compact --state "$tmp" --fabric ''
expect "compact --fabric UPPER" 2 "^nccl-bot: compact: --fabric 'UPPER': want" -- \
	"$bot" compact --state "$tmp" --fabric UPPER
expect "compact: the unexpected argument named" 2 "unexpected argument 'stray'" -- \
	"$bot" compact --state "$tmp" stray

# env --lib '' is a usage error naming the option
expect "env --lib ''" 2 "^nccl-bot: env: --lib '': want" -- "$bot" env --prior-only --lib ''

# demo --svg: a file name, refused before anything starts. PATH holds no
# Slurm: without the check the demo would stop at its missing commands
# (exit 1), never start a cluster.
expect "demo --svg ''" 2 "^nccl-bot: demo: --svg '': want a file name" -- \
	env PATH=/nonexistent "$bot" demo --svg ''
expect "demo --svg DIR" 2 "^nccl-bot: demo: --svg '.*': want a file name, not a directory" -- \
	env PATH=/nonexistent "$bot" demo --svg "$tmp"
expect "demo --svg in a missing directory" 2 "^nccl-bot: demo: --svg '.*': directory .*/missing does not exist" -- \
	env PATH=/nonexistent "$bot" demo --svg "$tmp/missing/demo.svg"
: >"$tmp/plainfile"
expect "demo --svg under a file" 2 "^nccl-bot: demo: --svg '.*': .*/plainfile is not a directory" -- \
	env PATH=/nonexistent "$bot" demo --svg "$tmp/plainfile/demo.svg"

# harvest's numbers follow the settings grammar too (README: no blanks,
# signs or leading zeros): --nodes 02 was taken as 2, --step 007 as 7
mkdir -p "$tmp/empty" "$tmp/ob"
for o in "--nodes 02" "--nodes +1" "--restart 01" "--step 007" "--nodes 4294967296"; do
	# shellcheck disable=SC2086
	expect "harvest $o refused" 2 "^nccl-bot: harvest: ${o%% *} '.*': want decimal" -- \
		"$bot" harvest --outbox "$tmp/ob" --fabric a $o "$tmp/empty"
done
expect "harvest --step batch still taken" 1 "no spool file" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric a --step batch "$tmp/empty"

# A directory given with a trailing '/': one '/' before the file's name.
mkdir "$tmp/sp" "$tmp/outbox" "$tmp/state"
printf 'garbage\n' >"$tmp/sp/bad.spool"
expect "harvest DIR/: one slash" 1 "sp/bad.spool: rejected" -- \
	"$bot" harvest --fabric a --outbox "$tmp/outbox" "$tmp/sp/"
expect "spool show DIR/: one slash" 1 "sp/bad.spool: truncated" -- "$bot" spool show "$tmp/sp/"
expect "state add DIR/: one slash" 1 "sp/bad.spool: truncated" -- \
	"$bot" state add --state "$tmp/state" --fabric a "$tmp/sp/"
for c in "harvest --fabric a --outbox $tmp/outbox" "spool show" "spool sweep" \
	"state add --state $tmp/state --fabric a"; do
	# shellcheck disable=SC2086
	"$bot" $c "$tmp/sp/" >"$tmp/out" 2>&1
	if grep -q 'sp//' "$tmp/out"; then
		bad "$c DIR/: a doubled slash"; sed 's/^/    /' "$tmp/out" | head -n 3
	else
		ok "$c DIR/: no doubled slash"
	fi
done

# ... and a state directory or outbox given so: "st/a", "st/inbox", "ob/x"
# in every message, never "st//a" (the paths opened are unchanged)
mkdir -p "$tmp/t7/st" "$tmp/t7/ob" "$tmp/t7/sp"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed" "$tmp/t7/sp/nb-a-1.spool"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-summary" "$tmp/t7/sp/nb-a-2.spool"
st=$tmp/t7/st/ ob=$tmp/t7/ob/
{
	for i in 1 1; do
		"$bot" harvest --outbox "$ob" --fabric a --cluster c --job $i --restart 1 --step batch \
			--node n1 --nodes 2 "$tmp/t7/sp"
	done
	"$bot" ship --outbox "$ob" --state "$st"
	printf junk >"$tmp/t7/st/inbox/c.9.1.batch.n1.nbd"
	"$bot" compact --state "$st"
	"$bot" state quarantine --state "$st" show c.9.1.batch.n1.nbd
	"$bot" state add --state "$st" --fabric a "$tmp/t7/sp"
	"$bot" state export --state "$st" --fabric a -o "$tmp/t7/x.yaml"
	"$bot" state export --state "$st" --fabric b
	sed -i 's/^rounds: .*/rounds: 99/' "$tmp/t7/x.yaml"
	"$bot" state import --state "$st" --fabric a "$tmp/t7/x.yaml"
	"$bot" state rollback --state "$st" --fabric a
	"$bot" state rollback --state "$st" --fabric a --to snap-0000000000000000.nbs
} >"$tmp/t7/out" 2>&1
for m in "wrote $tmp/t7/ob/c.1.1.batch.n1.nbd" "$tmp/t7/ob/c.1.1.batch.n1.nbd exists" \
	"quarantined c.9.1.batch.n1.nbd: $tmp/t7/st/inbox/c.9" "unreadable: '$tmp/t7/st/quarantine/c.9" \
	"published $tmp/t7/st/a/snap-" "of $tmp/t7/st/a" "export: $tmp/t7/st/b: no state yet" \
	"rollback: $tmp/t7/st/a: current is now" "rollback: $tmp/t7/st/a/snap-0000000000000000.nbs: no such"; do
	grep -qF -- "$m" "$tmp/t7/out" && ok "trailing '/': $m" || bad "trailing '/': $m"
done
if grep -q 't7/[a-z]*//' "$tmp/t7/out"; then
	bad "state directory or outbox DIR/: a doubled slash"; grep 't7/[a-z]*//' "$tmp/t7/out" | head -n 5
else
	ok "state directory or outbox DIR/: no doubled slash"
fi

# ship_command of blanks alone names no program (split on blanks, the
# delta's own path became the command): refused as an option and in the file
mkdir "$tmp/sob"
printf 'x' >"$tmp/sob/local.j1.0.0.n1.nbd"
expect "ship --ship-command of blanks" 2 "^nccl-bot: ship: --ship-command '   ': .*no program" -- \
	"$bot" ship --outbox "$tmp/sob" --ship-command '   '
printf 'version: 1\nstate_dir: %s\nship_command: "  "\n' "$tmp/scst" >"$tmp/sc.yaml"
expect "ship_command of blanks in the site configuration" 2 "site configuration: .*sc.yaml: ship_command: .*no program" -- \
	"$bot" ship --outbox "$tmp/sob" --config "$tmp/sc.yaml"
[ -e "$tmp/sob/local.j1.0.0.n1.nbd" ] && ok "ship_command of blanks: the delta is kept" ||
	bad "ship_command of blanks: the delta is gone"
# ... and only ship refuses it: the readers that do not read the key still
# take the file (a site whose shipping was broken keeps compacting)
mkdir -p "$tmp/scst/inbox"
expect "compact with a blanks ship_command in the file" 0 "" -- \
	"$bot" compact --config "$tmp/sc.yaml"

# state rollback from a damaged `current` (its parent field changed): the
# parent it names is not known, which is not "the chain was pruned at" a
# snapshot that never existed
mkdir "$tmp/rb"
printf 'nccl-bot-state: 1\nfabric: a\nrounds: 0\nepoch: 0\nsources: []\ncontexts: []\n' >"$tmp/s0.yaml"
sed 's/rounds: 0/rounds: 1/' "$tmp/s0.yaml" >"$tmp/s1.yaml"
"$bot" state import --state "$tmp/rb" --fabric a "$tmp/s0.yaml" >/dev/null 2>&1
"$bot" state import --state "$tmp/rb" --fabric a "$tmp/s1.yaml" >/dev/null 2>&1
cur=$(cat "$tmp/rb/a/current")
# the parent digest is the u64 at offset 96 (doc/formats.md section 12)
printf 'X' | dd of="$tmp/rb/a/$cur" bs=1 seek=96 conv=notrunc 2>/dev/null
expect "rollback from a damaged current: its parent not known" 1 "the parent of $cur is not known .*damaged.*--to" -- \
	"$bot" state rollback --state "$tmp/rb" --fabric a
if grep -q "pruned at" "$tmp/out"; then bad "rollback: no 'pruned at' a name never kept"; else ok "rollback: no 'pruned at' a name never kept"; fi
# the same two steps back, the damaged snapshot being the middle one: it is
# the one named (its header named the missing parent), not `current`
mkdir "$tmp/rb2"
sed 's/rounds: 0/rounds: 2/' "$tmp/s0.yaml" >"$tmp/s2.yaml"
for y in s0 s1 s2; do
	"$bot" state import --state "$tmp/rb2" --fabric a "$tmp/$y.yaml" >/dev/null 2>&1
done
mid=$(ls "$tmp/rb2/a" | grep '^snap-' | while read -r f; do
	"$bot" state show "$tmp/rb2/a/$f" 2>/dev/null | grep -q '^rounds: 1' && echo "$f"; done)
printf 'X' | dd of="$tmp/rb2/a/$mid" bs=1 seek=96 conv=notrunc 2>/dev/null
expect "rollback, a damaged middle snapshot: named" 1 "the parent of $mid is not known" -- \
	"$bot" state rollback --state "$tmp/rb2" --fabric a --steps 2
# a `current` that holds no snapshot name: --steps cannot step back from it
# and says so; --to repairs it (it refused until 2026-12-04, exactly when a
# restore is needed)
first=$(ls "$tmp/rb2/a" | grep '^snap-' | while read -r f; do
	"$bot" state show "$tmp/rb2/a/$f" 2>/dev/null | grep -q '^rounds: 0' && echo "$f"; done)
echo garbage >"$tmp/rb2/a/current"
expect "rollback --steps from a current with no name" 1 "rb2/a/current: does not hold a snapshot name" -- \
	"$bot" state rollback --state "$tmp/rb2" --fabric a --steps 1
expect "rollback --to repairs a current with no name" 0 "current is now $first" -- \
	"$bot" state rollback --state "$tmp/rb2" --fabric a --to "$first"
[ "$(cat "$tmp/rb2/a/current")" = "$first" ] && ok "rollback --to: current names $first" ||
	bad "rollback --to: current holds '$(cat "$tmp/rb2/a/current")'"
: >"$tmp/rb2/a/current"
expect "rollback --to repairs an empty current" 0 "current is now $first" -- \
	"$bot" state rollback --state "$tmp/rb2" --fabric a --to "$first"

# spool sweep of a directory without spool files: named, exit 1, as spool
# show does (it printed a header-only CSV and exited 0)
mkdir "$tmp/nospool"
expect "spool sweep DIR without spool files" 1 "^nccl-bot: spool sweep: .*/nospool: no \\*\\.spool files" -- \
	"$bot" spool sweep "$tmp/nospool"
"$bot" spool sweep "$tmp/nospool" 2>/dev/null >"$tmp/csv"
[ -s "$tmp/csv" ] && bad "spool sweep, no spool file: no CSV" || ok "spool sweep, no spool file: no CSV"
# ... nor when every file named is rejected (it printed the header alone)
printf 'not a spool file\n' >"$tmp/nospool.spool"
expect "spool sweep of a rejected file: named, exit 1" 1 "nospool.spool: .*rejected" -- \
	"$bot" spool sweep "$tmp/nospool.spool"
"$bot" spool sweep "$tmp/nospool.spool" 2>/dev/null >"$tmp/csv"
[ -s "$tmp/csv" ] && bad "spool sweep, every file rejected: no CSV" || ok "spool sweep, every file rejected: no CSV"
expect "spool sweep: a DIR without them beside one with them" 1 "nospool: no \\*\\.spool files" -- \
	"$bot" spool sweep "$tmp/nospool" "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed"
grep -q '^fabric,' "$tmp/out" && ok "spool sweep: the other path converted" ||
	bad "spool sweep: the other path converted"

# -o - (--output -) is standard output, not a file named "-"
mkdir "$tmp/odash"
mkdir "$tmp/oxst"
"$bot" state import --state "$tmp/oxst" --fabric a "$tmp/s0.yaml" >/dev/null 2>&1
expect "state export -o -: the YAML on standard output" 0 "^nccl-bot-state: " -- \
	sh -c 'cd "$1" && exec "$2" state export --state "$3" --fabric a -o -' sh "$tmp/odash" \
	"$botabs" "$tmp/oxst"
expect "state export --output -: the same" 0 "^nccl-bot-state: " -- \
	sh -c 'cd "$1" && exec "$2" state export --state "$3" --fabric a --output -' sh "$tmp/odash" \
	"$botabs" "$tmp/oxst"
expect "sim --output -: the CSV on standard output" 0 "^h100-roce,allreduce,4," -- \
	sh -c 'cd "$1" && exec "$2" sim --fabric h100-roce --nodes 1 --coll allreduce --samples 1 --min-bytes 4 --max-bytes 4 --output -' \
	sh "$tmp/odash" "$botabs"
expect "  ... no file named -" 0 "" -- test ! -e "$tmp/odash/-"

# The empty path is shown as '' (it read ": No such file or directory")
mkdir "$tmp/est" "$tmp/eob"
for c in "spool show" "spool sweep" "state add --state $tmp/est --fabric a" "state show" \
	"state export" "report" "replay --data" "harvest --outbox $tmp/eob --fabric a"; do
	# shellcheck disable=SC2086 # $c is several words
	expect "${c%% --*} '': the empty path shown" 1 "^nccl-bot: ${c%% --*}: '': " -- "$bot" $c ''
done

# a byte count's unit: past TiB on sim is out of its range (1 to 1TiB);
# elsewhere an unknown unit is named (both said "no blanks or signs")
for o in "--min-bytes 1PiB" "--max-bytes 2EiB"; do
	# shellcheck disable=SC2086
	expect "sim $o: out of range" 2 "^nccl-bot: sim: ${o%% *} '.*': want .*from 1 to 1TiB \\(out of range\\)$" -- \
		"$bot" sim --fabric h100-roce --nodes 1 $o
done
expect "sim --min-bytes 1PB: an unknown unit" 2 "\\(an unknown unit 'PB'\\)$" -- \
	"$bot" sim --fabric h100-roce --nodes 1 --min-bytes 1PB
expect "env --min-bytes 1PiB: an unknown unit" 2 "^nccl-bot: env: --min-bytes '1PiB': .*\\(an unknown unit 'PiB'\\)$" -- \
	"$bot" env --prior-only --min-bytes 1PiB
expect "sim --min-bytes '1 MiB': still the syntax" 2 "not in the grammar: a blank, a sign" -- \
	"$bot" sim --fabric h100-roce --nodes 1 --min-bytes '1 MiB'

# Every long option of a subcommand's --help is in its man page: its section
# of nccl-bot(1) (or the synopsis), or nccl-bot-ship(1) and nccl-bot-compact(1).
# replay's section says that --help lists every option, so it is left out.
for cmd in env harvest sim spool state report doctor fabric demo ship compact; do
	case $cmd in
	ship | compact) sed 's/\\-/-/g' "$top_srcdir/man/nccl-bot-$cmd.1" >"$tmp/man" ;;
	*) sed 's/\\-/-/g' "$top_srcdir/man/nccl-bot.1" | awk -v c="$cmd" '
		/^\.SH "nccl-bot / { on = ($0 == ".SH \"nccl-bot " c "\"") }
		/^\.SH SYNOPSIS/ { syn = 1; next }
		/^\.SH/ && !/nccl-bot/ { syn = 0 }
		on || syn' >"$tmp/man" ;;
	esac
	missing=
	for o in $("$bot" $cmd --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qF -- "$o" "$tmp/man" || missing="$missing $o"
	done
	if [ -s "$tmp/man" ] && [ -z "$missing" ]; then
		ok "$cmd: every option of --help is in the man page"
	else
		bad "$cmd: --help options not in the man page:$missing"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
