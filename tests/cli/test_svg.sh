#!/bin/sh
# tests/cli/test_svg.sh - `nccl-bot state show --svg FILE`: a fabric's state
# drawn (AUTO's estimated loss by size, one chart per collective, one line
# per node count), the picture well-formed (xmllint) and rendered
# (rsvg-convert) to a PNG of the size the SVG says, with something drawn on
# it. Skips (77) when xmllint or rsvg-convert is missing: scripts/setup
# installs both (libxml2-utils, librsvg2-bin).
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
bot=${NCCL_BOT:-./nccl-bot}
for t in xmllint rsvg-convert od; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "SKIP: $t not installed (scripts/setup installs libxml2-utils and librsvg2-bin)"
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# A state as an export (formats.md 16): allgather and allreduce, 24 sizes
# from 1KiB (bucket 40) up, 2, 4 and 8 nodes; AUTO's arm (ring/ll, the
# prior's argmin) slower than ring/simple by 0-49/64 of an octave; at 8
# nodes allreduce's bucket 100 has no samples of AUTO's arm: no known loss.
gen() {
	awk -v F="$1" 'BEGIN {
	print "nccl-bot-state: 1"; print "fabric: " F; print "rounds: 1"
	print "parent: \"0000000000000000\""; print "ledger: \"0000000000000000\""
	print "epoch: 0"; print "sources: []"; print "contexts:"
	split("2 4 8", nodes, " ")
	for (coll = 2; coll <= 4; coll += 2)
		for (b = 40; b <= 132; b += 4)
			for (i = 1; i <= 3; i++) {
				n = nodes[i]
				printf "- key: \"0x%02x%02x%04x%08x\"\n", coll, b, n, n * 8
				print "  calls: 100"; print "  explore: 0"
				print "  prior: {ring/ll: 10, ring/simple: 20}"
				print "  arms:"
				base = 600 + b * 4; d = (b * n * 7) % 50
				if (!(coll == 4 && b == 100 && n == 8))
					print "    ring/ll: {n: 20, bins: [[" base + d ", 20]]}"
				print "    ring/simple: {n: 20, bins: [[" base ", 20]]}"
			}
	}'
}

# png_wh FILE: "WIDTH HEIGHT" from the PNG's IHDR (bytes 16-23, big-endian)
png_wh() {
	od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d\n", (($1*256+$2)*256+$3)*256+$4,
		(($5*256+$6)*256+$7)*256+$8 }'
}

mkdir -p "$tmp/st"
gen demo >"$tmp/demo.yaml"
"$bot" state import --state "$tmp/st" --fabric demo "$tmp/demo.yaml" >"$tmp/out" 2>&1 ||
	{ bad "import of the generated state"; cat "$tmp/out"; }

"$bot" state show --state "$tmp/st" --fabric demo --svg "$tmp/a.svg" >"$tmp/stdout" 2>"$tmp/out"
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/stdout" ] &&
	grep -q "a.svg: 2 chart(s), 6 line(s), 143 context(s) with a known loss" "$tmp/out"; then
	ok "show --svg: 2 charts, 6 lines, 143 of 144 contexts with a loss"
else
	bad "show --svg: rc $rc"; sed 's/^/    /' "$tmp/out"
fi
if xmllint --noout "$tmp/a.svg" 2>"$tmp/xl"; then ok "xmllint: well-formed"; else
	bad "xmllint"; head -n 5 "$tmp/xl"; fi
grep -qi 'nan\|inf' "$tmp/a.svg" && bad "a number not finite in the SVG" || ok "no nan/inf"
for w in '>allgather: AUTO' '>allreduce: AUTO' '>2 nodes, 16 ranks<' '>8 nodes, 64 ranks<' \
	'>4K<' '>1M<' '>4G<' '>0%<' '>60%<' 'fabric demo, snapshot snap-'; do
	grep -q "$w" "$tmp/a.svg" || bad "the SVG lacks '$w'"
done
# 2 charts x 3 lines; allreduce at 8 nodes is broken in two by the gap
n=$(grep -c '<polyline' "$tmp/a.svg")
[ "$n" = 7 ] && ok "7 polylines (one line broken by an unknown loss)" || bad "$n polylines, want 7"

# rendered: the size the SVG says, and not a blank page (a blank page of
# the same size compresses to a small fraction of it)
w=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9.]*\)".*/\1/p' "$tmp/a.svg")
h=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)[.0-9]*".*/\2/p' "$tmp/a.svg")
if rsvg-convert -o "$tmp/a.png" "$tmp/a.svg" 2>"$tmp/rs"; then ok "rsvg-convert renders it"
else bad "rsvg-convert"; head -n 5 "$tmp/rs"; fi
wh=$(png_wh "$tmp/a.png")
[ "$wh" = "880 704" ] && [ "$w $h" = "880 704" ] && ok "PNG 880x704, as the SVG says" ||
	bad "PNG $wh, SVG $w x $h, want 880 704"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"><rect width="100%%" height="100%%" fill="#ffffff"/></svg>\n' \
	"$w" "$h" >"$tmp/blank.svg"
rsvg-convert -o "$tmp/blank.png" "$tmp/blank.svg"
sa=$(wc -c <"$tmp/a.png") sb=$(wc -c <"$tmp/blank.png")
[ "$(png_wh "$tmp/blank.png")" = "$wh" ] && [ "$sa" -gt $((sb * 10)) ] &&
	ok "PNG not blank: $sa bytes against $sb for a blank page of its size" ||
	bad "PNG $sa bytes, blank $sb"

# a snapshot FILE, an empty state, and options of other actions
snapf=$(ls "$tmp"/st/demo/snap-*.nbs | head -n 1)
"$bot" state show --svg "$tmp/b.svg" "$snapf" >"$tmp/out" 2>&1 &&
	grep -q "fabric demo, /" "$tmp/b.svg" && xmllint --noout "$tmp/b.svg" &&
	ok "show --svg SNAPSHOT: titled with the file" || bad "show --svg SNAPSHOT"
mkdir -p "$tmp/e"
"$bot" state import --state "$tmp/e" --fabric h100-ib-ndr --as h100-ib-ndr \
	"$top_srcdir/tests/fuzz/corpus-stateyaml/export-empty.yaml" >/dev/null 2>&1
"$bot" state show --state "$tmp/e" --fabric h100-ib-ndr --svg "$tmp/e.svg" >"$tmp/out" 2>&1 &&
	xmllint --noout "$tmp/e.svg" && grep -q 'no context learned yet' "$tmp/e.svg" &&
	grep -q '>no data<' "$tmp/e.svg" && ok "an empty state: one chart saying so" ||
	{ bad "empty state"; sed 's/^/    /' "$tmp/out"; }
"$bot" state export --state "$tmp/st" --fabric demo --svg "$tmp/x.svg" >"$tmp/out" 2>&1
[ $? = 2 ] && [ ! -e "$tmp/x.svg" ] && ok "--svg with export: a usage error" || bad "export --svg"
"$bot" state show --state "$tmp/st" --fabric demo --svg "$tmp/nodir/a.svg" >"$tmp/out" 2>&1
[ $? = 1 ] && grep -q "nodir" "$tmp/out" && ok "--svg into a missing directory: exit 1, named" ||
	bad "--svg into a missing directory"

echo "svg: $pass passed, $fail failed"
[ "$fail" = 0 ]
