#!/bin/sh
# tests/cli/test_harvest.sh - `nccl-bot harvest` as a user meets it: usage
# errors exit 2, a delta written with one line saying where (exit 0), the
# same step harvested again never replaces it (exit 1), rejected files
# named with their reason while the good ones still make the delta, a
# directory with nothing valid writes nothing (exit 1), SPOOL given as
# files, the name built from --cluster/--job/--restart/--step/--node, and a
# delta stranded with two links (a harvest killed between link and unlink)
# repaired by the next harvest so that ship takes it.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
spool=$top_srcdir/tests/fuzz/corpus-spool
bot=${NCCL_BOT:-./nccl-bot}
export NCCL_BOT_CONFIG=none	# never the host's /etc/nccl-bot/site.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

mkdir -p "$tmp/sp" "$tmp/ob" "$tmp/ob2" "$tmp/bad" "$tmp/empty"
cp "$spool/valid-mixed" "$tmp/sp/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/sp/nb-a-2.spool"
cp "$spool/bad-crc" "$tmp/sp/nb-a-3.spool"
ln -s "$tmp/sp/nb-a-1.spool" "$tmp/sp/nb-a-4.spool"
cp "$spool/bad-crc" "$tmp/bad/nb-b-1.spool"

expect "harvest --help" 0 "--outbox DIR" -- "$bot" harvest --help
expect "harvest in the command list" 0 "harvest" -- "$bot" --help
expect "harvest needs an outbox" 2 "needs --outbox.*; missing: --outbox" -- "$bot" harvest --fabric f "$tmp/sp"
# an empty --outbox is a usage error naming it, as --report-dir '' is (it was
# tried as a path: "harvest: : the outbox: No such file or directory", exit 1)
expect "harvest --outbox '': a usage error" 2 "harvest: --outbox '': want a directory" -- \
	"$bot" harvest --outbox "" --fabric f --job 1 --node n1 --nodes 2 "$tmp/sp"
# an outbox that is a link is refused as one (it said "Not a directory")
mkdir -p "$tmp/realob" && ln -s "$tmp/realob" "$tmp/linkob"
expect "harvest: an outbox that is a symbolic link, named as one" 1 "linkob: the outbox: a symbolic link \(not followed" -- \
	"$bot" harvest --outbox "$tmp/linkob" --fabric f --job 1 --node n1 --nodes 2 "$tmp/sp"
# ... also named "linkob/" or "linkob/." (written through the link until
# 2026-12-04), and "linkob/.." goes through it: refused
for o in linkob/ linkob/.; do
	expect "  ... --outbox $o" 1 "linkob: the outbox: a symbolic link \(not followed" -- \
		"$bot" harvest --outbox "$tmp/$o" --fabric f --job 1 --node n1 --nodes 2 "$tmp/sp"
done
expect "  ... --outbox linkob/..: refused" 1 "linkob/..: the outbox: a '..' component" -- \
	"$bot" harvest --outbox "$tmp/linkob/.." --fabric f --job 1 --node n1 --nodes 2 "$tmp/sp"
expect "  ... nothing written through the link" 0 "^0$" -- sh -c "ls '$tmp/realob' '$tmp' | grep -c '\\.nbd$' || true"
# an identity that breaks its rule names its option (--node 'n 1' said
# "pass --node", --job a.b no option, until 2026-12-04)
expect "harvest --node 'n 1': the option named" 2 "^nccl-bot: harvest: --node: node 'n 1' is not " -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 1 --node 'n 1' "$tmp/sp"
grep -q "pass --node" "$tmp/out" && bad "  ... no 'pass --node' when --node was passed" ||
	ok "  ... no 'pass --node' when --node was passed"
expect "harvest --job a.b: the option named" 2 "^nccl-bot: harvest: --job: job 'a\.b' is not " -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job a.b --node n1 "$tmp/sp"
expect "harvest needs spool paths" 2 "needs --outbox.*; missing: the spool paths$" -- "$bot" harvest --outbox "$tmp/ob" --fabric f
expect "harvest needs a fabric, and says which is missing" 2 "; missing: --fabric$" -- "$bot" harvest --outbox "$tmp/ob" "$tmp/sp"
expect "harvest: several missing, separated" 2 "; missing: --outbox \(or outbox_dir in the site configuration\), --fabric and the spool paths$" -- \
	"$bot" harvest
expect "harvest bad fabric" 2 "--fabric 'H100'" -- "$bot" harvest --outbox "$tmp/ob" --fabric H100 "$tmp/sp"
# the state directory's own directories are no fabric: a delta of one
# failed the compactor on every run, kept in the inbox (until 2026-12-05)
expect "harvest --fabric inbox: refused" 2 "--fabric 'inbox': want a fabric name \\(inbox, quarantine and held" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric inbox --job 1 --node n1 --nodes 2 "$tmp/sp"
expect "harvest bad step" 2 "--step 'last'" -- "$bot" harvest --outbox "$tmp/ob" --fabric f --step last "$tmp/sp"
# an empty --node or --cluster is refused as --job '' is (--node '' fell
# back to the hostname until 2026-12-04)
for o in --node --cluster --job; do
	expect "harvest $o ''" 2 "^nccl-bot: harvest: $o '': want \\[A-Za-z0-9" -- \
		"$bot" harvest --outbox "$tmp/ob" --fabric f "$o" '' "$tmp/sp"
done
expect "harvest bad nodes" 2 "--nodes '0'" -- "$bot" harvest --outbox "$tmp/ob" --fabric f --nodes 0 "$tmp/sp"
expect "harvest bad cluster" 2 "cluster 'a/b' is not" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --cluster a/b "$tmp/sp"
expect "harvest bad job" 2 "job '1.2' is not" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 1.2 "$tmp/sp"
expect "harvest unknown option" 2 "usage" -- "$bot" harvest --frob

dname=alps.1234.1.batch.n1.nbd
expect "harvest writes a delta" 0 \
	"wrote $tmp/ob/$dname: [0-9]+ records from 2 spool file\(s\), 2 rejected" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric h100-ib-ndr --cluster alps --job 1234 \
	--restart 1 --step batch --node n1 --nodes 2 "$tmp/sp"
if grep -q "nb-a-3.spool: rejected: offset [0-9]*: CRC-32C mismatch" "$tmp/out" &&
	grep -q "nb-a-4.spool: rejected: a symbolic link, not a spool file" "$tmp/out"; then
	ok "harvest names each rejected file with its reason"
else
	bad "harvest rejected files"; sed 's/^/    /' "$tmp/out" | head -n 8
fi
if [ -f "$tmp/ob/$dname" ] && [ "$(stat -c %a "$tmp/ob/$dname")" = 640 ] &&
	[ "$(head -c 8 "$tmp/ob/$dname")" = NBDELTA1 ]; then
	ok "the delta is in the outbox, mode 0640"
else
	bad "the delta in the outbox"; ls -la "$tmp/ob"
fi
cp "$tmp/ob/$dname" "$tmp/first.nbd"
expect "harvest again: never replaced" 1 "$dname exists: not overwritten" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric h100-ib-ndr --cluster alps --job 1234 \
	--restart 1 --step batch --node n1 --nodes 2 "$tmp/sp"
if cmp -s "$tmp/first.nbd" "$tmp/ob/$dname" && [ "$(ls -A "$tmp/ob" | wc -l)" -eq 1 ]; then
	ok "the first delta is untouched, no temporary left"
else
	bad "the first delta changed"; ls -la "$tmp/ob"
fi

# The default job comes from the files' digests: the same files, the same name.
"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --nodes 2 "$tmp/sp" >"$tmp/o1" 2>&1
"$bot" harvest --outbox "$tmp/ob2" --fabric f --node n1 --nodes 2 "$tmp/sp" >"$tmp/o2" 2>&1
n1=$(ls "$tmp/ob" | grep '^local\.j')
n2=$(ls "$tmp/ob2")
if [ -n "$n1" ] && [ "$n1" = "$n2" ] && echo "$n1" | grep -Eq '^local\.j[0-9a-f]{15}\.0\.0\.n1\.nbd$'; then
	ok "default job string: the same files give the same name ($n1)"
else
	bad "default job string: '$n1' vs '$n2'"; cat "$tmp/o1" "$tmp/o2"
fi

expect "harvest of files given one by one" 0 "wrote .*: [0-9]+ records from 1 spool file\(s\), 0 rejected" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --job 77 --nodes 2 "$tmp/sp/nb-a-1.spool"
expect "harvest of a link given as a file" 1 "nb-a-4.spool: rejected: a symbolic link" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --job 78 --nodes 2 "$tmp/sp/nb-a-4.spool"
expect "harvest, nothing valid" 1 "none of the 1 spool file\(s\) is valid: nothing written" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --job 79 "$tmp/bad"
expect "harvest, no spool file" 1 "no spool file to harvest" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --job 80 "$tmp/empty"
expect "harvest, --nodes too small" 1 "rejected: record 0: nNodes 2 over the step's 1 node" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --node n1 --job 81 "$tmp/sp/nb-a-1.spool"
expect "harvest, outbox missing" 1 "the outbox: No such file" -- \
	"$bot" harvest --outbox "$tmp/nonexistent" --fabric f --node n1 --nodes 2 "$tmp/sp"
if ls "$tmp/ob" | grep -q '\.79\.\|\.80\.\|\.81\.\|\.78\.'; then
	bad "a refused harvest wrote a delta"; ls "$tmp/ob"
else
	ok "refused harvests wrote nothing"
fi

# A harvest killed between link and unlink (file systems without
# RENAME_NOREPLACE) left a delta with two links, which ship refuses; the
# next harvest into the outbox completes the rename and ship takes it.
mkdir -p "$tmp/ob3" "$tmp/st/inbox"
"$bot" harvest --outbox "$tmp/ob3" --fabric f --node n1 --job 90 --nodes 2 "$tmp/sp" >/dev/null 2>&1
ln "$tmp/ob3/local.90.0.0.n1.nbd" "$tmp/ob3/.local.90.0.0.n1.nbd.tmp"
expect "ship refuses a delta with two links" 1 "2 hard links" -- \
	"$bot" ship --outbox "$tmp/ob3" --state "$tmp/st"
expect "the next harvest completes the rename" 0 "completed an interrupted rename of 1 delta" -- \
	"$bot" harvest --outbox "$tmp/ob3" --fabric f --node n1 --job 91 --nodes 2 "$tmp/sp"
expect "ship takes both" 0 "2 shipped" -- "$bot" ship --outbox "$tmp/ob3" --state "$tmp/st"
if [ -z "$(ls -A "$tmp/ob3")" ] && [ -f "$tmp/st/inbox/local.90.0.0.n1.nbd" ]; then
	ok "the stranded delta reached the inbox, no temporary left"
else
	bad "stranded delta"; ls -la "$tmp/ob3" "$tmp/st/inbox"
fi

# A fabric of 64 characters (formats.md section 12's longest, which a state
# holds) is harvested, shipped and compacted into its state: the delta's
# fabric field is used whole (section 13), as the state's header is.
f64=$(printf 'f%.0s' $(seq 64))
mkdir -p "$tmp/ob4" "$tmp/st4"
expect "harvest, a 64-character fabric" 0 "wrote $tmp/ob4/local.92.0.0.n1.nbd" -- \
	"$bot" harvest --outbox "$tmp/ob4" --fabric "$f64" --node n1 --job 92 --nodes 2 "$tmp/sp"
expect "harvest, a 65-character fabric" 2 "--fabric '${f64}f': want" -- \
	"$bot" harvest --outbox "$tmp/ob4" --fabric "${f64}f" --node n1 --job 93 --nodes 2 "$tmp/sp"
expect "ship, a 64-character fabric" 0 "1 shipped" -- "$bot" ship --outbox "$tmp/ob4" --state "$tmp/st4"
expect "compact, a 64-character fabric" 0 "$f64: merged 1 delta" -- \
	"$bot" compact --state "$tmp/st4" --now $(($(date +%s) + 7200))
[ -f "$tmp/st4/$f64/current" ] && [ -z "$(ls -A "$tmp/st4/quarantine")" ] &&
	ok "a 64-character fabric's delta reached its state" ||
	bad "a 64-character fabric's delta did not reach its state"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
