#!/bin/sh
# tests/cli/test_state_cli.sh - `nccl-bot state show|export|import|verify|
# rollback|quarantine` as a person meets them: YAML that reads back to the
# same snapshot, refusals that name FILE:LINE:COL, a verify that finds each
# kind of damage and exits 1, a quarantine whose release never overwrites.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

snap=$top_srcdir/tests/fuzz/corpus-state/valid-v3-summaries.nbs
spool=$top_srcdir/tests/fuzz/corpus-spool
yc=$top_srcdir/tests/fuzz/corpus-stateyaml
F=h100-ib-ndr

expect "state --help names every action" 0 "quarantine" -- "$bot" state --help
for v in show export import verify rollback quarantine; do
	grep -q "nccl-bot state $v" "$tmp/out" || bad "state --help lacks $v"
done
expect "state unknown action" 2 "unknown action 'frob'" -- "$bot" state frob
expect "an option of another action, named with its action" 2 "^nccl-bot: state show: --as is import's option" -- \
	"$bot" state show --as x --state "$tmp" --fabric x
# ... before --as is compared with --fabric (export --as was said to be
# "state import: --as F2 and --fabric F1 differ" until 2026-12-04)
expect "export --as: import's option" 2 "^nccl-bot: state export: --as is import's option" -- \
	"$bot" state export --as x2 --state "$tmp" --fabric x
expect "show --partial: add's option" 2 "^nccl-bot: state show: --partial is add's option" -- \
	"$bot" state show --partial x.nbs

# show: YAML, what was learned per context (formats.md section 16)
expect "show FILE" 0 "^nccl-bot-state-show: 1" -- "$bot" state show "$snap"
if grep -q '^  learned: {arm: ring/ll, robust_us: 96.9133, samples: 26, confidence: medium}' \
	"$tmp/out" && grep -q '^  auto: {arm: ring/ll128, prior_us: 152.78261' "$tmp/out" &&
	grep -q '^  auto_loss_pct: 37.92' "$tmp/out"; then
	ok "show: best arm, its samples and confidence, AUTO's arm and loss"
else
	bad "show: learned/auto/auto_loss_pct lines missing"; sed 's/^/    /' "$tmp/out" | head -n 20
fi
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
	if python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert len(d["contexts"]) > 3' \
		"$tmp/out"; then ok "show: another YAML reader takes it"; else bad "show: not YAML"; fi
fi

# show: an arm with a slow draw kept (3x) and one dropped (10x): `used` 4 of
# 5, `evidence` 3 (used less the outlier), and a mean spread wider than the
# log spread, since the kept slow draw moves a mean more than a log
mkdir "$tmp/ev"
cat >"$tmp/ev.yaml" <<'EOF'
nccl-bot-state: 2
fabric: h100-ib-ndr
rounds: 1
parent: "0000000000000000"
ledger: "0000000000000000"
epoch: 0
sources: []
contexts:
- context: allgather/1MiB+2/n4/r4
  key: "0x0252000400000004"
  calls: 500
  explore: 0
  summaries: 65536
  prior: {ring/ll: 117.39176, ring/ll128: 83.51304, ring/simple: 149.56801}
  arms:
    ring/ll128: {n: 5, bins: [[1024, 3], [1124, 1], [1236, 1]]}
EOF
expect "import one arm with outliers" 0 "published" -- \
	"$bot" state import --state "$tmp/ev" --fabric $F "$tmp/ev.yaml"
expect "show it" 0 "evidence: 3" -- "$bot" state show --state "$tmp/ev" --fabric $F
if tr -d '\n' <"$tmp/out" | grep -q 'samples: 5, .*used: 4, evidence: 3}' &&
	tr -d '\n' <"$tmp/out" | sed 's/.* spread_octaves: \([0-9.]*\), mean_spread_octaves: \([0-9.]*\),.*/\1 \2/' |
	awk '{ exit !($2 > 1.1 * $1 && $1 > 0) }'; then
	ok "show: used, evidence and the mean spread of an arm with outliers"
else
	bad "show: used/evidence/mean_spread_octaves wrong"; sed 's/^/    /' "$tmp/out" | tail -n 5
fi
# a prior beyond a float, or so small it would be stored as 0: each said
# (1e308 was "not a finite number" and 1e-300 became 0 silently until 2026-12-04)
sed 's/ring\/ll: 117.39176/ring\/ll: 1e308/' "$tmp/ev.yaml" >"$tmp/ev-big.yaml"
expect "import a prior of 1e308" 1 "ev-big.yaml:.*prior ring/ll: '1e308' is beyond a float \(at most about 3.4e38\)" -- \
	"$bot" state import --state "$tmp/ev" --fabric $F "$tmp/ev-big.yaml"
sed 's/ring\/ll: 117.39176/ring\/ll: 1e-300/' "$tmp/ev.yaml" >"$tmp/ev-tiny.yaml"
expect "import a prior of 1e-300" 1 "ev-tiny.yaml:.*'1e-300' is too small for a float \(it would be stored as 0" -- \
	"$bot" state import --state "$tmp/ev" --fabric $F "$tmp/ev-tiny.yaml"
sed 's/ring\/ll: 117.39176/ring\/ll: 0.0e-300/' "$tmp/ev.yaml" >"$tmp/ev-zero.yaml"
mkdir "$tmp/ev0"
expect "import a prior of 0.0e-300 (zero)" 0 "published" -- \
	"$bot" state import --state "$tmp/ev0" --fabric $F "$tmp/ev-zero.yaml"

# export FILE -> import into an empty state directory -> the same snapshot
mkdir "$tmp/a" "$tmp/b"
expect "export SNAPSHOT" 0 "" -- "$bot" state export "$snap" -o "$tmp/two.yaml"
expect "import into an empty state dir" 0 "published .*/$F/snap-" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/two.yaml"
# the same again: nothing published, as `state add` of nothing new
n0=$(ls "$tmp/a/$F" | grep -c '^snap-')
expect "import of what is current: unchanged" 0 "two.yaml: unchanged: it holds what the current .*/$F/snap-.* holds; nothing published" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/two.yaml"
[ "$(ls "$tmp/a/$F" | grep -c '^snap-')" -eq "$n0" ] && ok "an unchanged import adds no snapshot" ||
	bad "an unchanged import added a snapshot"
expect "export --state" 0 "" -- "$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/two-again.yaml"
# -o naming the fabric's own `current` (or a snapshot): refused, the state
# kept (the export replaced `current`, exit 0, until 2026-12-05)
acur=$(cat "$tmp/a/$F/current")
expect "export -o the fabric's current: refused" 1 "-o $tmp/a/$F/current: a fabric's own state file" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/a/$F/current"
expect "export -o a snapshot of the fabric: refused" 1 "a fabric's own state file" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/a/$F/$acur"
[ "$(cat "$tmp/a/$F/current")" = "$acur" ] && ok "  ... current kept" || bad "  ... current replaced"
# ... also where `current` is missing (an interrupted first publish: the
# lone snapshot is the fabric's state), and the state directory's .lease
# (both replaced, exit 0, until 2026-12-05)
mkdir "$tmp/ns"
cp -p "$tmp/a/$F/$acur" "$tmp/ns/$acur"
expect "export -o a snapshot where there is no current: refused" 1 "-o $tmp/ns/$acur: a snapshot" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/$acur"
cmp -s "$tmp/ns/$acur" "$tmp/a/$F/$acur" && ok "  ... the snapshot kept" || bad "  ... the snapshot replaced"
mkdir "$tmp/ns/inbox"
: >"$tmp/ns/.lease"
expect "export -o a state directory's .lease: refused" 1 "-o $tmp/ns/.lease: the compactor's lease" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/.lease"
[ ! -s "$tmp/ns/.lease" ] && ok "  ... the lease kept" || bad "  ... the lease replaced"
# ... and the compactor's ledger, its files and provenance.log (a ledger
# file replaced, exit 0, until 2026-12-05)
mkdir -p "$tmp/ns/.ledger/$F"
echo keep >"$tmp/ns/.ledger/$F/ledger-0123456789abcdef.nbl"
expect "export -o a ledger file: refused" 1 "-o $tmp/ns/.ledger/$F/ledger-0123456789abcdef.nbl: inside a state directory's ledger" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/.ledger/$F/ledger-0123456789abcdef.nbl"
[ "$(cat "$tmp/ns/.ledger/$F/ledger-0123456789abcdef.nbl")" = keep ] && ok "  ... the ledger file kept" ||
	bad "  ... the ledger file replaced"
expect "export -o the ledger's provenance.log: refused" 1 "inside a state directory's ledger" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/.ledger/provenance.log"
expect "export -o .ledgerx beside a state directory: written" 0 "" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/.ledgerx"
# ... looking at the .ledger that is the state directory's, not the first
# "/.ledger" of the path: a state directory under a .ledgers directory had
# its ledger replaced (exit 0), and a user's own .ledger directory, no state
# directory around it, was refused (until 2026-12-05)
mkdir -p "$tmp/ns/.ledgers/st/inbox" "$tmp/ns/.ledgers/st/.ledger/$F" "$tmp/own.ledger/.ledger/reports"
: >"$tmp/ns/.ledgers/st/.lease"
echo keep >"$tmp/ns/.ledgers/st/.ledger/$F/provenance.log"
expect "export -o a ledger file of a state directory under .ledgers/: refused" 1 "inside a state directory's ledger" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/.ledgers/st/.ledger/$F/provenance.log"
[ "$(cat "$tmp/ns/.ledgers/st/.ledger/$F/provenance.log")" = keep ] && ok "  ... the ledger file kept" ||
	bad "  ... the ledger file replaced"
expect "export -o into a user's own .ledger directory (no state directory): written" 0 "" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/own.ledger/.ledger/reports/a.yaml"
expect "  ... and directly in it" 0 "" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/own.ledger/.ledger/a.yaml"
rm -rf "$tmp/own.ledger"
# ... and a state directory's inbox, quarantine and held: a held or
# quarantined delta was replaced, exit 0 (until 2026-12-05); a user's own
# directory named inbox is no state directory's
mkdir "$tmp/ns/held" "$tmp/ns/quarantine" "$tmp/own-inbox" "$tmp/own-inbox/inbox"
for d in held quarantine inbox; do
	echo keep >"$tmp/ns/$d/c.1.0.0.n1.nbd"
	expect "export -o a delta in the state directory's $d: refused" 1 "in a state directory's inbox, quarantine or held" -- \
		"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/ns/$d/c.1.0.0.n1.nbd"
	[ "$(cat "$tmp/ns/$d/c.1.0.0.n1.nbd")" = keep ] && ok "  ... the delta kept" || bad "  ... the delta replaced"
done
expect "export -o into a user's own directory named inbox: written" 0 "" -- \
	"$bot" state export --state "$tmp/a" --fabric $F -o "$tmp/own-inbox/inbox/a.yaml"
rm -rf "$tmp/own-inbox"
rm -rf "$tmp/ns"
if cmp -s "$tmp/two.yaml" "$tmp/two-again.yaml" && cmp -s "$snap" "$tmp/a/$F/$(cat "$tmp/a/$F/current")"; then
	ok "export, import, export: the same YAML and the same snapshot bytes"
else
	bad "export/import round trip changed the state"
fi
# an export cut short at a line's end (a copy interrupted, a full disk) is
# refused, not imported as a smaller state (it was, until schema 3's
# ncontexts, 2026-12-04); the current snapshot stays
before=$(cat "$tmp/a/$F/current")
# cut before its last context: what is left is a whole YAML document
last=$(grep -n '^- context:' "$tmp/two.yaml" | tail -n 1 | cut -d: -f1)
head -n $((last - 1)) "$tmp/two.yaml" >"$tmp/cut.yaml"
expect "import of an export cut at a line's end" 1 "cut.yaml: no ncontexts: a schema 3 export ends with it: the file was cut short" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/cut.yaml"
head -c 1500 "$tmp/two.yaml" >"$tmp/cut.yaml"
expect "import of an export cut mid-line" 1 "cut.yaml:.*\(the file does not end with its ncontexts line: cut short\?\)$" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/cut.yaml"
[ "$(cat "$tmp/a/$F/current")" = "$before" ] && ok "a cut export publishes nothing" ||
	bad "a cut export changed current"
expect "export to stdout" 0 "^nccl-bot-state: 3" -- "$bot" state export --state "$tmp/a" --fabric $F
# -o naming a directory: said so, before a temporary file is made beside it
mkdir "$tmp/adir"
expect "export -o DIR: is a directory" 1 "^nccl-bot: state export: -o $tmp/adir: is a directory; the export was not written$" -- \
	"$bot" state export "$snap" -o "$tmp/adir"
expect "export -o '': a usage error" 2 "^nccl-bot: state: -o wants a file name \(or - for standard output\)$" -- \
	"$bot" state export "$snap" -o ''
expect "show --svg '': a usage error" 2 "^nccl-bot: state: --svg wants a file name$" -- \
	"$bot" state show "$snap" --svg ''
expect "export -o into a missing directory" 1 "^nccl-bot: state export: -o $tmp/nodir/x\.yaml: directory $tmp/nodir does not exist" -- \
	"$bot" state export "$snap" -o "$tmp/nodir/x.yaml"
# -o at a symbolic link (-o /dev/stdout) or a device (-o /dev/null, as
# root): refused, the link or device kept (the rename replaced either with a
# regular file until 2026-12-05)
ln -s "$tmp/target.yaml" "$tmp/olink"
expect "export -o a symbolic link: refused" 1 "^nccl-bot: state export: -o $tmp/olink: a symbolic link, not a regular file" -- \
	"$bot" state export "$snap" -o "$tmp/olink"
if [ -L "$tmp/olink" ] && [ ! -e "$tmp/target.yaml" ]; then ok "  ... the link kept"; else bad "  ... the link replaced"; fi
mkfifo "$tmp/ofifo"
expect "show --svg a FIFO: refused" 1 "^nccl-bot: state show: --svg $tmp/ofifo: a FIFO, not a regular file" -- \
	"$bot" state show --svg "$tmp/ofifo" "$snap"
[ -p "$tmp/ofifo" ] && ok "  ... the FIFO kept" || bad "  ... the FIFO replaced"
# --svg -: standard output, "as -o" (--help); it wrote a file named - in
# the working directory until 2026-12-05
abot=$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")
asnap=$(cd "$(dirname "$snap")" && pwd)/$(basename "$snap")
(cd "$tmp" && "$abot" state show --svg - "$asnap" >"$tmp/svg-out" 2>/dev/null)
if head -n 2 "$tmp/svg-out" | grep -q "<svg" && [ ! -e "$tmp/-" ]; then
	ok "show --svg -: the picture on standard output"
else
	bad "show --svg -: not on standard output"
fi
if mknod "$tmp/onull" c 1 3 2>/dev/null; then
	expect "export -o a device: refused" 1 "-o $tmp/onull: a device, not a regular file" -- \
		"$bot" state export "$snap" -o "$tmp/onull"
	[ -c "$tmp/onull" ] && ok "  ... the device kept" || bad "  ... the device replaced"
fi
# --state naming a fabric's own directory (it holds `current`): refused
# by import, env and show, nothing made inside it (a nested fabric
# directory was learned into and read from silently until 2026-12-04)
expect "import into a fabric's directory given as --state" 1 "$tmp/a/$F: holds a fabric's .current. itself: a fabric's directory, not the state directory" -- \
	"$bot" state import --state "$tmp/a/$F" --fabric $F "$tmp/two.yaml"
[ ! -e "$tmp/a/$F/$F" ] && ok "no fabric directory made inside a fabric's directory" ||
	bad "a fabric directory was made inside $tmp/a/$F"
expect "env with a fabric's directory as --state" 1 "holds a fabric's .current. itself" -- \
	"$bot" env --state "$tmp/a/$F" --fabric $F --lib "$PWD/tuner/libnccl-tuner-bot.so"
expect "show with a fabric's directory as --state" 1 "holds a fabric's .current. itself" -- \
	"$bot" state show --state "$tmp/a/$F" --fabric $F
# an empty file: the refusal asks for the schema exports are written with
: >"$tmp/empty.yaml"
expect "import an empty file: the schema written, and 1 still read" 1 \
	"empty.yaml: not a state export \(want a mapping with nccl-bot-state: 3; 1 and 2 still read\)" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/empty.yaml"
# a fabric whose current snapshot is format v1 (formats.md 12: still read)
# takes state add and a compactor's publish; the compactor adds no source
# but keeps those state add merged, so adding the same file again after a
# compaction is still skipped
v1=$top_srcdir/tests/fuzz/corpus-state/valid-one-job.nbs
mkdir -p "$tmp/v1s/$F" "$tmp/v1sp" "$tmp/v1out"
cp "$v1" "$tmp/v1s/$F/snap-20b182203279e728.nbs"
echo snap-20b182203279e728.nbs >"$tmp/v1s/$F/current"
chmod 644 "$tmp/v1s/$F/current" "$tmp/v1s/$F/snap-20b182203279e728.nbs"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-v2-mixed" "$tmp/v1sp/nb-a-1.spool"
expect "state add onto a v1 current" 0 "merged 1 spool file.*round 2; published" -- \
	"$bot" state add --state "$tmp/v1s" --fabric $F "$tmp/v1sp/nb-a-1.spool"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-summary" "$tmp/v1sp/nb-b-2.spool"
"$bot" harvest --outbox "$tmp/v1out" --fabric $F --job 55 --node n1 --nodes 4 \
	"$tmp/v1sp/nb-b-2.spool" >/dev/null 2>&1
"$bot" ship --outbox "$tmp/v1out" --state "$tmp/v1s" >/dev/null 2>&1
expect "compact onto it" 0 "merged 1 delta.*published snap-" -- \
	"$bot" compact --state "$tmp/v1s" --settle 0
expect "  ... the sources state add merged are kept" 0 "^sources: 9$" -- \
	"$bot" state show --state "$tmp/v1s" --fabric $F
expect "  ... so adding the file again is still skipped" 0 "nothing new" -- \
	"$bot" state add --state "$tmp/v1s" --fabric $F "$tmp/v1sp/nb-a-1.spool"
expect "  ... and the chain verifies" 0 "3 snapshot\(s\), 0 problem" -- \
	"$bot" state verify --state "$tmp/v1s"
# a newer schema's export is refused naming the schema, even where a key
# that schema brought comes before nccl-bot-state (it said "unknown key")
printf 'new_key: 1\nnccl-bot-state: 4\nfabric: %s\n' $F >"$tmp/s4.yaml"
expect "import of a newer schema, its new key first" 1 \
	"s4.yaml:2:17: schema 4: this build reads schemas 1 to 3 \(a newer format\)" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/s4.yaml"
# a state written before format v3 (formats.md 12) still reads, and an
# import of its export publishes the same state as v3 (summaries 0)
v2=$top_srcdir/tests/fuzz/corpus-state/valid-v2-two-jobs.nbs
mkdir "$tmp/v2"
expect "show a v2 snapshot" 0 "^  auto_loss_pct: 37.92" -- "$bot" state show "$v2"
expect "export a v2 snapshot" 0 "" -- "$bot" state export "$v2" -o "$tmp/v2.yaml"
expect "import it" 0 "published .*/$F/snap-" -- "$bot" state import --state "$tmp/v2" --fabric $F "$tmp/v2.yaml"
if "$bot" state export --state "$tmp/v2" --fabric $F | grep -q '^  summaries: 0$' &&
	! "$bot" state export --state "$tmp/v2" --fabric $F | grep '^  summaries: ' | grep -vq ': 0$'; then
	ok "a v2 snapshot's contexts read with summaries 0"
else
	bad "a v2 snapshot's summaries are not 0"
fi
expect "export, no state yet" 1 "no state yet" -- "$bot" state export --state "$tmp/b" --fabric $F
expect "import: another fabric's export" 1 "holds fabric 'h100-ib-ndr', not 'roce' \\(pass --as roce" -- \
	"$bot" state import --state "$tmp/b" --fabric roce "$tmp/two.yaml"
[ ! -e "$tmp/b/roce/current" ] && ok "import: a refused import publishes nothing" ||
	bad "import published a refused export"
expect "import --as" 0 "published .*/roce/snap-" -- \
	"$bot" state import --state "$tmp/b" --fabric roce --as roce "$tmp/two.yaml"
expect "import: show's output" 1 "show.yaml:1:1: a .state show. rendering" -- \
	"$bot" state import --state "$tmp/b" --fabric $F "$yc/show.yaml"
expect "import: an alias" 1 "aliases.yaml:2:9: an anchor \\(&f\\)" -- \
	"$bot" state import --state "$tmp/b" --fabric f "$yc/aliases.yaml"
expect "import: a duplicate key" 1 "dup.yaml:7:1: duplicate key 'epoch' \\(first at line 6\\)" -- \
	"$bot" state import --state "$tmp/b" --fabric $F "$yc/dup.yaml"
sed 's/\[\[1024/[[3000/' "$yc/export-small.yaml" >"$tmp/badbin.yaml"
grep -q 3000 "$tmp/badbin.yaml" || sed 's/bins: \[\[\([0-9]*\)/bins: [[3000/' "$yc/export-small.yaml" >"$tmp/badbin.yaml"
expect "import: a bin out of range" 1 "badbin.yaml:[0-9]+:[0-9]+: bin: '3000' is not a number 0..2560" -- \
	"$bot" state import --state "$tmp/b" --fabric $F "$tmp/badbin.yaml"
ln -s "$tmp/two.yaml" "$tmp/link.yaml"
expect "import: a symbolic link" 1 "link.yaml: a symbolic link" -- \
	"$bot" state import --state "$tmp/b" --fabric $F "$tmp/link.yaml"
mkfifo "$tmp/fifo.yaml"
expect "import: a FIFO, never waited on" 1 "fifo.yaml: a FIFO" -- \
	timeout 30 "$bot" state import --state "$tmp/b" --fabric $F "$tmp/fifo.yaml"
expect "import needs a FILE" 2 "one YAML FILE" -- "$bot" state import --state "$tmp/b" --fabric $F

# verify: sound directories exit 0; each kind of damage exits 1 naming it
mkdir "$tmp/v"
"$bot" state add --state "$tmp/v" --fabric $F "$spool/valid-mixed" >/dev/null 2>&1
"$bot" state add --state "$tmp/v" --fabric $F "$spool/valid-summary" >/dev/null 2>&1
"$bot" state import --state "$tmp/v" --fabric roce --as roce "$tmp/two.yaml" >/dev/null 2>&1
mkdir "$tmp/v/inbox" "$tmp/v/quarantine" "$tmp/v/held"	# the fleet's, not fabrics
n=$(ls "$tmp/v/$F" | grep -c '^snap-')
[ "$n" -ge 2 ] && ok "two adds, $n snapshots" || bad "two adds left $n snapshots"
expect "verify, sound" 0 "2 fabric\\(s\\), [0-9]+ snapshot\\(s\\), 0 problem\\(s\\)" -- \
	"$bot" state verify --state "$tmp/v"
grep -q "chain from current" "$tmp/out" && ok "verify says where the chain ends" ||
	bad "verify: no chain line"
expect "verify one fabric" 0 "1 fabric\\(s\\)" -- "$bot" state verify --state "$tmp/v" --fabric roce
# a link to a file at the top (an admin's site.yaml) is no fabric; a link
# to a directory is, and is refused (the store never follows one); the
# first was a fabric "not a directory" until 2026-12-04
ln -s "$tmp/two.yaml" "$tmp/v/site.yaml"
expect "verify: a link to a file at the top is no fabric" 0 "2 fabric\\(s\\), [0-9]+ snapshot\\(s\\), 0 problem\\(s\\)" -- \
	"$bot" state verify --state "$tmp/v"
ln -s "$tmp/v/roce" "$tmp/v/roce2"
expect "verify: a link to a directory at the top is a fabric, refused" 1 "$tmp/v/roce2: not a directory \\(or a symbolic link\\)" -- \
	"$bot" state verify --state "$tmp/v"
rm "$tmp/v/site.yaml" "$tmp/v/roce2"
: >"$tmp/v/$F/.snap-0123456789abcdef.nbs.tmp"
expect "verify: a leftover temporary file is no problem" 0 "interrupted publish" -- \
	"$bot" state verify --state "$tmp/v"
# several: said in name order (readdir's until 2026-12-04)
for t in 3 1 2; do : >"$tmp/v/$F/.x$t.tmp"; done
expect "verify: leftover temporaries" 0 "interrupted publish" -- "$bot" state verify --state "$tmp/v" --fabric $F
[ "$(sed -n 's/^[^:]*: \(\.[^:]*\.tmp\): a temporary file .*/\1/p' "$tmp/out" | tr '\n' ' ')" = \
	".snap-0123456789abcdef.nbs.tmp .x1.tmp .x2.tmp .x3.tmp " ] && ok "  ... in name order" ||
	{ bad "  ... in name order"; sed 's/^/    /' "$tmp/out"; }
rm -f "$tmp/v/$F/".x?.tmp
old=$(ls "$tmp/v/$F" | grep '^snap-' | grep -v "$(cat "$tmp/v/$F/current")" | head -n 1)
cp "$tmp/v/$F/$old" "$tmp/saved.nbs"
printf 'x' >>"$tmp/v/$F/$old"
expect "verify: a damaged kept snapshot" 1 "$old: its bytes' digest does not match its name" -- \
	"$bot" state verify --state "$tmp/v"
rm "$tmp/v/$F/$old"
ln "$tmp/saved.nbs" "$tmp/v/$F/$old"
expect "verify: a snapshot with two hard links" 1 "$old: 2 hard links" -- \
	"$bot" state verify --state "$tmp/v"
rm "$tmp/v/$F/$old"
ln -s "$tmp/saved.nbs" "$tmp/v/$F/$old"
expect "verify: a snapshot that is a link" 1 "$old: a symbolic link" -- "$bot" state verify --state "$tmp/v"
rm "$tmp/v/$F/$old"
cp "$tmp/a/$F/$(cat "$tmp/a/$F/current")" "$tmp/v/roce/$(cat "$tmp/a/$F/current")" 2>/dev/null
expect "verify: a snapshot of another fabric" 1 "holds fabric 'h100-ib-ndr', not 'roce'" -- \
	"$bot" state verify --state "$tmp/v" --fabric roce
rm -f "$tmp/v/roce/"snap-*
# a damaged snapshot that current names: one problem, not one for the load
# and one for the snapshot (two until 2026-12-04); the chain breaks there
cur=$(cat "$tmp/v/$F/current")
cp "$tmp/v/$F/$cur" "$tmp/saved-cur.nbs"
printf 'x' >>"$tmp/v/$F/$cur"
expect "verify: a damaged current snapshot" 1 "1 problem\\(s\\)" -- "$bot" state verify --state "$tmp/v" --fabric $F
[ "$(grep -c "$cur" "$tmp/out")" -eq 3 ] && grep -q "current $cur: its snapshot is refused" "$tmp/out" &&
	grep -q "$cur: its bytes' digest does not match" "$tmp/out" && grep -q "broken at $cur" "$tmp/out" &&
	ok "verify: the damaged current said once as a problem, and where the chain breaks" ||
	{ bad "verify: damaged current lines"; sed 's/^/    /' "$tmp/out"; }
# ... also where that snapshot is a link or a FIFO (an entry, not a file:
# two problems until 2026-12-04)
rm "$tmp/v/$F/$cur"
ln -s "$tmp/saved-cur.nbs" "$tmp/v/$F/$cur"
expect "verify: a current snapshot that is a link" 1 "snapshot\\(s\\), 1 problem\\(s\\)$" -- "$bot" state verify --state "$tmp/v" --fabric $F
grep -q "$cur: a symbolic link" "$tmp/out" && grep -q "current $cur: its snapshot is refused" "$tmp/out" &&
	ok "verify: the linked current said once, as a link" || { bad "verify: linked current lines"; sed 's/^/    /' "$tmp/out"; }
rm "$tmp/v/$F/$cur"
mkfifo "$tmp/v/$F/$cur"
expect "verify: a current snapshot that is a FIFO" 1 "snapshot\\(s\\), 1 problem\\(s\\)$" -- "$bot" state verify --state "$tmp/v" --fabric $F
rm "$tmp/v/$F/$cur"
cp "$tmp/saved-cur.nbs" "$tmp/v/$F/$cur"
# names that are no snapshot's in a fabric's directory: said, the 8
# smallest one by one in order (the same on every host, whatever readdir's
# order; the first 8 read until 2026-12-04) and the rest counted
for i in 10 9 8 7 6 5 4 3 2 1; do : >"$tmp/v/$F/note$i.txt"; done
expect "verify: other files in a fabric's directory" 0 "$F: 2 more names that are not snapshot names \\(ignored\\)" -- \
	"$bot" state verify --state "$tmp/v" --fabric $F
[ "$(sed -n 's/^.*: \(note[0-9]*\)\.txt: not a snapshot name (ignored)$/\1/p' "$tmp/out" | tr '\n' ' ')" = \
	"note1 note10 note2 note3 note4 note5 note6 note7 " ] &&
	ok "verify: the 8 smallest other names said one by one, in order" ||
	{ bad "verify: not the 8 smallest other names"; sed 's/^/    /' "$tmp/out"; }
rm -f "$tmp/v/$F/"note*.txt
echo "snap-0000000000000000.nbs" >"$tmp/v/$F/current"
expect "verify: current names a missing snapshot" 1 "current. names snap-0000000000000000.nbs, which is not there \\(deleted or moved\\): restore it, or point .current. at a kept snapshot" -- "$bot" state verify --state "$tmp/v"
expect "verify needs --state" 2 "--state" -- env -u NCCL_BOT_STATE "$bot" state verify
# an empty --state is a usage error naming it (it said ": No such file or
# directory"); an empty NCCL_BOT_STATE counts as unset
expect "show --state '': empty, named" 2 "^nccl-bot: state show: --state: empty" -- \
	"$bot" state show --state "" --fabric f
expect "verify --state '': empty, named" 2 "^nccl-bot: state verify: --state: empty" -- \
	"$bot" state verify --state ""
expect "NCCL_BOT_STATE='': as if unset" 2 "needs --state DIR \\(or NCCL_BOT_STATE\\)" -- \
	env NCCL_BOT_STATE= "$bot" state verify
# A mistyped --state (a spool directory: job directories holding .spool
# files) is not a state that verifies clean: a "fabric" with no current, no
# snapshot and only other files is a problem. An empty directory has no
# fabric yet, and says so (exit 0: a state before its first state add).
mkdir -p "$tmp/notstate/job1" "$tmp/emptystate"
: >"$tmp/notstate/job1/r0.n1.spool"
expect "verify: a spool directory for --state" 1 "job1: no .current. and no snapshot, only 1 other file\\(s\\): not a fabric's state directory" -- \
	"$bot" state verify --state "$tmp/notstate"
# ... one problem a directory, not a line per spool file (until 2026-12-04)
grep -q "r0.n1.spool" "$tmp/out" && bad "verify: a spool file listed in a directory that is no fabric's" ||
	ok "verify: no line per file of a directory that is no fabric's"
expect "verify: an empty state directory says it has no fabric" 0 "emptystate: no fabric directory" -- \
	"$bot" state verify --state "$tmp/emptystate"

# a report directory (flat: parts at the top) and a spool directory whose
# step directories are empty both verified clean until 2026-12-03
mkdir -p "$tmp/flatrep" "$tmp/spoolsteps/77.0.0.n1" "$tmp/spoolsteps/77.0.batch.n2"
: >"$tmp/flatrep/77.0.n1.part"
: >"$tmp/flatrep/77.0.n2.part"
expect "verify: a flat report directory for --state" 1 "flatrep: no fabric's state, and 2 other file\\(s\\) at its top" -- \
	"$bot" state verify --state "$tmp/flatrep"
expect "verify: empty step spool directories for --state" 1 "77\\.0\\.batch\\.n2: no .current. and no snapshot, and named as a step's spool directory" -- \
	"$bot" state verify --state "$tmp/spoolsteps"
# step spool directories whose node names are no fabric names (capitals)
# and a fabric's own directory given as --state: problems, the latter
# said as such (the first verified clean, the second blamed a report's or
# a spool's files, until 2026-12-04)
mkdir -p "$tmp/capspool/77.0.0.GPU01" "$tmp/capspool/77.0.0.GPU02"
: >"$tmp/capspool/77.0.0.GPU01/r0.GPU01.spool"
expect "verify: step spool directories of capitalised nodes for --state" 1 "capspool: no fabric's state, and 2 other file\\(s\\) at its top" -- \
	"$bot" state verify --state "$tmp/capspool"
expect "verify: a fabric's directory for --state" 1 "$tmp/a/$F: holds a fabric's .current. or snapshot itself: a fabric's directory, not the state directory \\(give its parent as --state" -- \
	"$bot" state verify --state "$tmp/a/$F"
# a fabric directory made ahead of its first add is no problem
# a state directory on its own file system (lost+found), an admin's
# directory, and the metrics ship and compact write when --metrics-dir is
# the state directory itself, before any state: no problem (the metrics
# files and lost+found were one until 2026-12-04)
mkdir -p "$tmp/fsstate/lost+found" "$tmp/fsstate/Admin Notes" "$tmp/fsout"
expect "ship --metrics-dir into the state directory" 0 "0 shipped" -- \
	"$bot" ship --state "$tmp/fsstate" --outbox "$tmp/fsout" --metrics-dir "$tmp/fsstate"
[ -f "$tmp/fsstate/nccl-bot-ship.prom" ] && ok "ship wrote its metrics into the state directory" ||
	bad "ship wrote no nccl-bot-ship.prom into the state directory"
expect "verify: lost+found, an admin's directory and ship's metrics are no problem" 0 "no fabric directory" -- \
	"$bot" state verify --state "$tmp/fsstate"
: >"$tmp/fsstate/notes.txt"
expect "verify: a stray file beside them still is" 1 "fsstate: no fabric's state, and 1 other file\\(s\\) at its top" -- \
	"$bot" state verify --state "$tmp/fsstate"
mkdir -p "$tmp/readystate/h100-roce"
expect "verify: an empty fabric directory made ahead" 0 "h100-roce: no state yet" -- \
	"$bot" state verify --state "$tmp/readystate"

# rollback: against the store's rollback (a shim says it is not there yet)
expect "rollback --to and --steps" 2 "exclude" -- \
	"$bot" state rollback --state "$tmp/a" --fabric $F --to snap-0123456789abcdef.nbs --steps 2
expect "rollback --to a path" 2 "want snap-<16 hex>.nbs" -- \
	"$bot" state rollback --state "$tmp/a" --fabric $F --to ../x
expect "rollback --steps 0" 2 "--steps '0'" -- "$bot" state rollback --state "$tmp/a" --fabric $F --steps 0
cur=$(cat "$tmp/a/$F/current")
expect "rollback: a fabric without an earlier snapshot" 1 "snap-[0-9a-f]{16}.nbs has no parent: nothing to roll back to" -- \
	"$bot" state rollback --state "$tmp/a" --fabric $F
[ "$(cat "$tmp/a/$F/current")" = "$cur" ] && ok "rollback: a refused rollback leaves current" ||
	bad "rollback: a refused rollback moved current"
# a second import (another state) makes a child of the first; rolling back
# one step returns to it
sed 's/^rounds: .*/rounds: 99/' "$tmp/two.yaml" >"$tmp/two-r99.yaml"
expect "import again (a child snapshot)" 0 "published" -- \
	"$bot" state import --state "$tmp/a" --fabric $F "$tmp/two-r99.yaml"
child=$(cat "$tmp/a/$F/current")
"$bot" state rollback --state "$tmp/a" --fabric $F >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$child" != "$cur" ] && [ "$(cat "$tmp/a/$F/current")" = "$cur" ]; then
	ok "rollback: one step back names the parent again"
else
	bad "rollback: exit $rc"; sed 's/^/    /' "$tmp/out" | head -n 5
fi
# the child restored from a backup mode 0600: no user but root could read
# it as current (every job on the prior) while a root verify said 0 problems
# (until 2026-12-05): verify names it, rollback --to it is refused
chmod 600 "$tmp/a/$F/$child"
expect "verify: a snapshot not readable by every user" 1 "$tmp/a/$F/$child: mode 0600: not readable by every user" -- \
	"$bot" state verify --state "$tmp/a" --fabric $F
expect "rollback --to a snapshot not readable by every user: refused" 1 "$child: mode 0600: not readable by every user.*chmod 0644" -- \
	"$bot" state rollback --state "$tmp/a" --fabric $F --to "$child"
[ "$(cat "$tmp/a/$F/current")" = "$cur" ] && ok "  ... current kept" || bad "  ... current moved"
chmod 644 "$tmp/a/$F/$child"
# a state directory, fabric directory, current or snapshot writable by every
# user (a `chmod -R 777`): any user could change what every job plans from;
# verify names each (it verified clean until 2026-12-05)
chmod 777 "$tmp/a" "$tmp/a/$F"
chmod 666 "$tmp/a/$F/current"
expect "verify: a state directory writable by every user" 1 "^nccl-bot: state verify: $tmp/a: mode 0777: writable by every user" -- \
	"$bot" state verify --state "$tmp/a"
grep -q "^nccl-bot: state verify: $tmp/a/$F: mode 0777: writable by every user" "$tmp/out" &&
	grep -q "^nccl-bot: state verify: $tmp/a/$F/current: mode 0666: writable by every user" "$tmp/out" &&
	ok "  ... its fabric directory and current too" || bad "  ... fabric directory or current not named"
chmod 755 "$tmp/a" "$tmp/a/$F"
chmod 644 "$tmp/a/$F/current"
expect "  ... and clean once fixed" 0 " 0 problem" -- "$bot" state verify --state "$tmp/a"
# ... and one no other user can read or enter (mode 0700): every job is
# refused the fabric's state while root's verify passed it (until 2026-12-05)
chmod 700 "$tmp/a" "$tmp/a/$F"
expect "verify: a state directory not searchable by every user" 1 "^nccl-bot: state verify: $tmp/a: mode 0700: not searchable by every user" -- \
	"$bot" state verify --state "$tmp/a"
grep -q "^nccl-bot: state verify: $tmp/a/$F: mode 0700: not readable by every user" "$tmp/out" &&
	ok "  ... its fabric directory too" || bad "  ... fabric directory not named"
chmod 755 "$tmp/a" "$tmp/a/$F"

# quarantine (formats.md section 14)
mkdir "$tmp/q"
expect "quarantine list, none yet" 0 "deltas: \\[\\]" -- "$bot" state quarantine --state "$tmp/q"
mkdir "$tmp/q/quarantine" "$tmp/q/inbox"
printf 'DELTA' >"$tmp/q/quarantine/c.1234.0.0.n1.nbd"
printf 'contradicts the fabric on 5 of 6 contexts\n' >"$tmp/q/quarantine/c.1234.0.0.n1.nbd.why"
printf 'DELTA2' >"$tmp/q/quarantine/c.99.0.batch.n2.nbd"
printf 'escape \033[31m, not UTF-8 \377\n' >"$tmp/q/quarantine/c.99.0.batch.n2.nbd.why"
expect "quarantine list" 0 "name: c.1234.0.0.n1.nbd, reason: contradicts the fabric on 5 of 6 contexts, bytes: 5" -- \
	"$bot" state quarantine --state "$tmp/q" list
if ! grep -q "$(printf '\033')" "$tmp/out" && grep -q 'x1b' "$tmp/out" && grep -q 'UTF-8 \\xff' "$tmp/out"; then
	ok "quarantine list escapes a reason's control characters and bytes that are not UTF-8"
else
	bad "quarantine list printed a raw escape"
fi
expect "quarantine show" 0 "reason: contradicts" -- \
	"$bot" state quarantine --state "$tmp/q" show c.1234.0.0.n1.nbd
# show prints a delta's header through the delta reader, or why it cannot
expect "quarantine show, an unreadable delta" 0 "unreadable: .*c.1234.0.0.n1.nbd: truncated: 5 bytes" -- \
	"$bot" state quarantine --state "$tmp/q" show c.1234.0.0.n1.nbd
grep -q '^header: null$' "$tmp/out" && ok "quarantine show: header null when unreadable" ||
	bad "quarantine show: no 'header: null'"
mkdir "$tmp/hsp"
cp "$top_srcdir/tests/fuzz/corpus-spool/valid-mixed" "$tmp/hsp/nb-a-1.spool"
"$bot" harvest --outbox "$tmp/q/quarantine" --fabric f1 --cluster alps --job 4321 --node n7 \
	--nodes 2 --step batch "$tmp/hsp" >/dev/null 2>&1
expect "quarantine show, a delta's header" 0 "canonical_name: \"alps.4321.0.batch.n7.nbd\"" -- \
	"$bot" state quarantine --state "$tmp/q" show alps.4321.0.batch.n7.nbd
if grep -q '^  job: "4321"$' "$tmp/out" && grep -q '^  step: batch$' "$tmp/out" &&
	grep -q '^  step_nodes: 2$' "$tmp/out" && grep -q '^  records: [1-9]' "$tmp/out" &&
	grep -q '^  array_task: null$' "$tmp/out" && grep -q '^  flags: \[\]$' "$tmp/out"; then
	ok "quarantine show: identity fields, counts and flags"
else
	bad "quarantine show: header fields"; sed 's/^/    /' "$tmp/out" | head -n 40
fi
rm "$tmp/q/quarantine/alps.4321.0.batch.n7.nbd"
for n in ../x.nbd .x.nbd x.spool x/y.nbd; do
	expect "quarantine: bad name $n" 2 "not a delta name" -- "$bot" state quarantine --state "$tmp/q" show "$n"
done
printf 'OTHER' >"$tmp/q/inbox/c.1234.0.0.n1.nbd"
expect "quarantine release, name taken in the inbox" 1 "already in the inbox" -- \
	"$bot" state quarantine --state "$tmp/q" release c.1234.0.0.n1.nbd
[ "$(cat "$tmp/q/inbox/c.1234.0.0.n1.nbd")" = OTHER ] && [ -e "$tmp/q/quarantine/c.1234.0.0.n1.nbd" ] &&
	ok "release never overwrites" || bad "release overwrote the inbox's delta"
rm "$tmp/q/inbox/c.1234.0.0.n1.nbd"
expect "quarantine release" 0 "released" -- "$bot" state quarantine --state "$tmp/q" release c.1234.0.0.n1.nbd
[ "$(cat "$tmp/q/inbox/c.1234.0.0.n1.nbd")" = DELTA ] && [ ! -e "$tmp/q/quarantine/c.1234.0.0.n1.nbd" ] &&
	[ ! -e "$tmp/q/quarantine/c.1234.0.0.n1.nbd.why" ] && ok "release moved the delta, dropped its reason" ||
	bad "release left the quarantine as it was"
expect "quarantine drop" 0 "dropped" -- "$bot" state quarantine --state "$tmp/q" drop c.99.0.batch.n2.nbd
[ -z "$(ls "$tmp/q/quarantine")" ] && ok "drop removed both files" || bad "drop left files"
expect "quarantine drop, gone" 1 "No such file" -- "$bot" state quarantine --state "$tmp/q" drop c.99.0.batch.n2.nbd
expect "quarantine bad action" 2 "want list" -- "$bot" state quarantine --state "$tmp/q" frob

# verify where readdir gives no entry types (XFS without ftype, some NFS):
# the same verdicts, asked of the file system (a shim preloaded that makes
# every d_type DT_UNKNOWN; without entry_type's fstatat a stray file at the
# top was a fabric "not a directory")
shim=$PWD/tests/unit/.libs/dtunknown.so
if [ -f "$shim" ]; then
	mkdir -p "$tmp/dtu/st/lost+found" "$tmp/dtu/bare/lost+found"
	"$bot" state import --state "$tmp/dtu/st" --fabric $F "$tmp/two.yaml" >/dev/null 2>&1
	: >"$tmp/dtu/st/nccl-bot-ship.prom"
	ln -s "$tmp/two.yaml" "$tmp/dtu/st/site.yaml"
	: >"$tmp/dtu/bare/notes.txt"
	for d in st bare; do
		"$bot" state verify --state "$tmp/dtu/$d" >"$tmp/dtu/$d.plain" 2>&1
		rp=$?
		env LD_PRELOAD="$shim" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
			"$bot" state verify --state "$tmp/dtu/$d" >"$tmp/dtu/$d.unknown" 2>&1
		ru=$?
		if [ "$rp" -eq "$ru" ] && cmp -s "$tmp/dtu/$d.plain" "$tmp/dtu/$d.unknown"; then
			ok "verify $d: the same verdict (exit $rp) without readdir's types"
		else
			bad "verify $d: exit $rp with readdir's types, $ru without"
			diff "$tmp/dtu/$d.plain" "$tmp/dtu/$d.unknown" | sed 's/^/    /' | head -n 6
		fi
	done
	grep -q "bare: no fabric's state, and 1 other file(s) at its top" "$tmp/dtu/bare.unknown" &&
		ok "verify without readdir's types: the stray file counted, not a fabric" ||
		bad "verify without readdir's types: no stray-file problem"
	grep -q "0 problem(s)" "$tmp/dtu/st.unknown" && ok "verify without readdir's types: the sound state is sound" ||
		bad "verify without readdir's types: the sound state has problems"
else
	echo "# skipped: $shim not built (make check builds it)"
fi

# A `current` lost over a fabric's one, first snapshot (formats.md 12): that
# snapshot is the state (an interrupted first publish), for every reader;
# the next state add completes the publish and builds on it: nothing
# learned is lost (until 2026-12-04 it was read as "no state yet" and the
# next add published over it, pruning the first job's snapshot).
mkdir -p "$tmp/lc/st" "$tmp/lc/two" "$tmp/lc/other"
"$bot" state add --state "$tmp/lc/st" --fabric $F "$spool/valid-mixed" >/dev/null 2>&1
first=$(cat "$tmp/lc/st/$F/current")
rm "$tmp/lc/st/$F/current"
expect "show, current lost over a first snapshot: its state" 0 "^rounds: 1" -- \
	"$bot" state show --state "$tmp/lc/st" --fabric $F
expect "verify, current lost over a first snapshot: said, no problem" 0 \
	"no .current.: its one snapshot $first is the state" -- "$bot" state verify --state "$tmp/lc/st"
expect "the next add completes the first publish and merges after it" 0 \
	"completed an interrupted first publish: .current. now names $first" -- \
	"$bot" state add --state "$tmp/lc/st" --fabric $F "$spool/valid-summary"
expect "show after: both jobs" 0 "^rounds: 2" -- "$bot" state show --state "$tmp/lc/st" --fabric $F
expect "verify after: the chain keeps the first snapshot" 0 "chain from current: 2 snapshot.s. kept" -- \
	"$bot" state verify --state "$tmp/lc/st"
# an older build's two interrupted first publishes: refused, naming the way out
"$bot" state add --state "$tmp/lc/two" --fabric $F "$spool/valid-mixed" >/dev/null 2>&1
a1=$(cat "$tmp/lc/two/$F/current")
rm "$tmp/lc/two/$F/current"
"$bot" state add --state "$tmp/lc/other" --fabric $F "$spool/valid-summary" >/dev/null 2>&1
a2=$(cat "$tmp/lc/other/$F/current")
cp "$tmp/lc/other/$F/$a2" "$tmp/lc/two/$F/"
expect "add over two first snapshots without current: refused" 1 "several first snapshots" -- \
	"$bot" state add --state "$tmp/lc/two" --fabric $F "$spool/valid-summary"
# one piece of advice, the store's: state add no longer adds "fix or move
# the file", which read as "delete a snapshot" here
if "$bot" state add --state "$tmp/lc/two" --fabric $F "$spool/valid-summary" 2>&1 |
	grep -q "fix or move"; then
	bad "add over two first snapshots: no contrary advice"
else
	ok "add over two first snapshots: no contrary advice"
fi
expect "rollback --to names the one to keep" 0 "" -- \
	"$bot" state rollback --state "$tmp/lc/two" --fabric $F --to "$a1"
expect "add after: merges after the named one" 0 "" -- \
	"$bot" state add --state "$tmp/lc/two" --fabric $F "$spool/valid-summary"
expect "show after: round 2" 0 "^rounds: 2" -- "$bot" state show --state "$tmp/lc/two" --fabric $F

# root (the admin) importing a new fabric into a state directory the service
# account owns: the fabric's directory and .lock are the account's, so its
# next writer (the compactor) can take the lock and publish (both were
# root's until 2026-12-05: ".lock: Permission denied" on every compaction,
# and `state verify` saw nothing wrong)
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	own=$(mktemp -d)
	chmod 755 "$own"
	mkdir "$own/st"
	chown nobody "$own/st"
	"$bot" state export "$snap" -o "$own/x.yaml" 2>/dev/null
	sed 's/^rounds: .*/rounds: 9/' "$own/x.yaml" >"$own/y.yaml"
	chmod 644 "$own/x.yaml" "$own/y.yaml"
	expect "root imports a new fabric into the account's state dir" 0 "published" -- \
		"$bot" state import --state "$own/st" --fabric $F "$own/x.yaml"
	expect "  ... the account publishes after it" 0 "published .*parent snap-" -- \
		runuser -u nobody -- "$bot" state import --state "$own/st" --fabric $F "$own/y.yaml"
	expect "  ... and verify finds nothing wrong" 0 " 0 problem" -- "$bot" state verify --state "$own/st"
	# a fabric directory root made (an older release's import as root):
	# verify names it (it said 0 problems until 2026-12-05)
	mkdir "$own/st/roce"
	"$bot" state import --state "$own/st" --fabric roce --as roce "$own/x.yaml" >/dev/null 2>&1
	expect "verify: a fabric directory the account cannot write" 1 "$own/st/roce: owned by uid 0, the state directory by uid [0-9]+: its compactor" -- \
		"$bot" state verify --state "$own/st"
	# ... and a root-owned .lock in a fabric directory the account owns
	# (the directory chowned alone): every compaction failed with
	# ".lock: Permission denied" while verify said nothing (until 2026-12-05)
	chown root "$own/st/$F/.lock"
	expect "verify: a .lock the account cannot open" 1 "$own/st/$F/\.lock: owned by uid 0, the state directory by uid [0-9]+: its compactor .*cannot take the fabric's lock" -- \
		"$bot" state verify --state "$own/st"
	rm -rf "$own"
fi

# no `current` and its one snapshot damaged: one problem, said once (the
# store's refusal and the snapshot's check were two until 2026-12-05)
mkdir "$tmp/nc"
"$bot" state import --state "$tmp/nc" --fabric $F "$tmp/two.yaml" >/dev/null 2>&1
nc=$(cat "$tmp/nc/$F/current")
rm "$tmp/nc/$F/current"
printf 'X' | dd of="$tmp/nc/$F/$nc" bs=1 seek=200 conv=notrunc 2>/dev/null
expect "verify: no current, its snapshot damaged: one problem" 1 "1 snapshot\(s\), 1 problem\(s\)$" -- \
	"$bot" state verify --state "$tmp/nc"
grep -q "no .current., and its snapshot is refused" "$tmp/out" && ok "  ... said once" ||
	bad "  ... not said"

# a fabric named as the compactor's inbox, quarantine or held directory:
# refused (its state was written into the inbox, and verify skipped it,
# until 2026-12-05)
mkdir "$tmp/rsv"
for n in inbox quarantine held; do
	expect "import into a fabric named $n: refused" 2 "--fabric '$n': not a fabric name \\(inbox, quarantine and held" -- \
		"$bot" state import --state "$tmp/rsv" --fabric $n --as $n "$tmp/two.yaml"
done
# ... and by every verb: verify --fabric inbox told the admin to make the
# compactor's 0750 inbox world-readable ("chmod 0755 it") until 2026-12-05
mkdir -m 750 "$tmp/rsv/inbox"
expect "verify --fabric inbox: a usage error" 2 "--fabric 'inbox': not a fabric name" -- \
	"$bot" state verify --state "$tmp/rsv" --fabric inbox
! grep -q "chmod 0755" "$tmp/out" && ok "  ... no chmod 0755 of the inbox advised" || bad "  ... chmod 0755 of the inbox advised"
expect "show --fabric held: a usage error" 2 "--fabric 'held': not a fabric name" -- \
	"$bot" state show --state "$tmp/rsv" --fabric held
# ... and env, which planned from "held" as a fabric with no state yet and
# printed a table of the prior, exit 0, until 2026-12-05
mkdir -m 750 "$tmp/rsv/held"
expect "env --fabric held: a usage error" 2 "env: --fabric 'held': not a fabric name \\(inbox, quarantine and held" -- \
	"$bot" env --state "$tmp/rsv" --fabric held --lib "$PWD/tuner/libnccl-tuner-bot.so"
! grep -q "^export" "$tmp/out" && ok "  ... no export lines" || bad "  ... export lines printed"
rmdir "$tmp/rsv/held"
rmdir "$tmp/rsv/inbox"
[ -z "$(ls "$tmp/rsv")" ] && ok "  ... nothing made" || bad "  ... something made"

# `current` naming a snapshot that is gone (moved away by hand): every
# reader says so and how back, rather than "No such file or directory"
# (until 2026-12-05)
mkdir "$tmp/gone"
sed 's/calls: 500/calls: 600/' "$tmp/ev.yaml" >"$tmp/ev-600.yaml"
expect "gone: first import" 0 "published" -- \
	"$bot" state import --state "$tmp/gone" --fabric $F "$tmp/ev.yaml"
first=$(cat "$tmp/gone/$F/current")
mv "$tmp/gone/$F/$first" "$tmp/first.nbs"
for v in show export; do
	expect "gone, no other snapshot: $v says how back" 1 "current. names $first, which is not there \\(deleted or moved\\) and no other snapshot is kept: restore it from a backup, or remove .*/current" -- \
		"$bot" state $v --state "$tmp/gone" --fabric $F
done
expect "gone, no other snapshot: import refused, saying why" 1 "current. names $first, which is not there" -- \
	"$bot" state import --state "$tmp/gone" --fabric $F "$tmp/ev-600.yaml"
expect "gone, no other snapshot: env refused, saying why" 1 "current. names $first, which is not there" -- \
	"$bot" env --state "$tmp/gone" --fabric $F --lib "$PWD/tuner/libnccl-tuner-bot.so"
mv "$tmp/first.nbs" "$tmp/gone/$F/$first"
expect "gone: second import" 0 "published .*parent $first" -- \
	"$bot" state import --state "$tmp/gone" --fabric $F "$tmp/ev-600.yaml"
second=$(cat "$tmp/gone/$F/current")
mv "$tmp/gone/$F/$second" "$tmp/second.nbs"
expect "gone, one kept: verify names the way back" 1 "current. names $second, which is not there \\(deleted or moved\\): restore it, or point .current. at a kept snapshot with nccl-bot state rollback --to SNAP" -- \
	"$bot" state verify --state "$tmp/gone"
expect "gone, one kept: the advice works" 0 "current is now $first" -- \
	"$bot" state rollback --state "$tmp/gone" --fabric $F --to "$first"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
