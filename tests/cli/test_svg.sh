#!/bin/sh
# tests/cli/test_svg.sh - the pictures. `nccl-bot state show --svg FILE`: a
# fabric's state drawn (AUTO's estimated loss by size, one chart per
# collective, one line per node count); `nccl-bot report DIR --svg FILE`: a
# job's report drawn (per collective and scale, AUTO's and our loss by
# size, the arms used, time saved and lost; hostile strings of the parts
# escaped; hundreds of contexts; nothing measured: no picture). Each
# picture well-formed (xmllint) and rendered (rsvg-convert) to a PNG of the
# size the SVG says, with something drawn on it. Skips (77) when xmllint or
# rsvg-convert is missing: scripts/setup installs both (libxml2-utils,
# librsvg2-bin).
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

# ---- report --svg ---------------------------------------------------------------
export NCCL_BOT_CONFIG=none
unset NCCL_BOT_REPORT_DIR
# part JOB NODE WHY: a part of step 0 (formats.md 17), contexts ascending:
# allgather at 4 sizes on 1 node (AUTO's arm ring/ll chosen, the best);
# reducescatter with no arm measured (no known loss); allreduce at 23 sizes
# on 2 nodes, AUTO's ring/ll below 1M then ring/simple, ours tree/ll below
# 64K, ring/ll128 below 16M, then ring/simple, AUTO's 5-32% slower where
# they differ
part() {
	awk -v J="$1" -v N="$2" -v W="$3" 'BEGIN {
	printf "nccl-bot-report-part 2\njob %s\nstep 0\nnode %s\nstep_nodes 2\nexpected_ranks 8\n", J, N
	print "mode on"; print "policy ucb1"; print "fabric prior"
	if (W != "") print "fabric_why " W
	print "files 1 0"; print "procs 8 8 8 0"; print "nccl 22809 8"; print "tuner 5 8"; print "profiler 4 8"
	n = 0
	for (b = 60; b <= 72; b += 4) {
		printf "ctx allgather %d 8 1 500 ring/ll ring/ll\ndecided ring/ll 500\n", b
		printf "arm ring/ll 30 9000 %d\narm ring/simple 10 8000 %d\n", 9000 + b * 10, 10000 + b * 5
		n++
	}
	print "ctx reducescatter 80 16 2 200 ring/simple -"; n++
	for (b = 40; b <= 128; b += 4) {
		a = b < 80 ? "ring/ll" : "ring/simple"
		o = b < 60 ? "tree/ll" : b < 100 ? "ring/ll128" : "ring/simple"
		base = 10000 + b * b * 20
		printf "ctx allreduce %d 16 2 1000 %s %s\ndecided %s 1000\n", b, a, o, o
		printf "arm %s 50 %d %d\n", o, base - 500, base
		if (a != o) printf "arm %s 20 %d %d\n", a, base, int(base * (1.05 + (b % 12) / 40))
		n++
	}
	printf "end %d\n", n
	}'
}
# render NAME: NAME.svg well-formed and rendered to NAME.png of the size it
# says, not blank; "W H" of the PNG in $wh
render() {
	xmllint --noout "$tmp/$1.svg" 2>"$tmp/xl" && ok "$1: xmllint: well-formed" ||
		{ bad "$1: xmllint"; head -n 5 "$tmp/xl"; }
	grep -qi 'nan\|inf[^o]' "$tmp/$1.svg" && bad "$1: a number not finite" || ok "$1: no nan/inf"
	sw=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)[.0-9]*".*/\1 \2/p' "$tmp/$1.svg")
	rsvg-convert -o "$tmp/$1.png" "$tmp/$1.svg" 2>"$tmp/rs" || { bad "$1: rsvg-convert"; head -n 5 "$tmp/rs"; }
	wh=$(png_wh "$tmp/$1.png")
	printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"><rect width="100%%" height="100%%" fill="#ffffff"/></svg>\n' \
		${sw% *} ${sw#* } >"$tmp/blank.svg"
	rsvg-convert -o "$tmp/blank.png" "$tmp/blank.svg"
	sa=$(wc -c <"$tmp/$1.png") sb=$(wc -c <"$tmp/blank.png")
	[ "$wh" = "$sw" ] && [ "$sa" -gt $((sb * 10)) ] &&
		ok "$1: rendered to a PNG of $wh as the SVG says, $sa bytes against $sb blank" ||
		bad "$1: PNG $wh ($sa bytes), SVG $sw, blank $sb bytes"
}

hd="$tmp/r<&\"'x"
mkdir -m 700 "$hd"
part 42 n1 'no map <&"> here' >"$hd/42.0.n1.part"
part 42 n2 'no map <&"> here' >"$hd/42.0.n2.part"
chmod 600 "$hd"/*.part
"$bot" report "$hd" --svg "$tmp/r.svg" >"$tmp/stdout" 2>"$tmp/out"
rc=$?
if [ $rc = 0 ] && grep -q "job total: " "$tmp/stdout" &&
	grep -q "r.svg: picture of job 42: 3 panel(s), 28 context(s), 27 with a known loss" "$tmp/out"; then
	ok "report DIR --svg: the text report, and 3 panels of 28 contexts, 27 with a known loss"
else
	bad "report --svg: rc $rc"; sed 's/^/    /' "$tmp/out"
fi
render r
[ "${wh#* }" -gt 1100 ] && ok "r: three panels high (${wh#* } px)" || bad "r: $wh"
for w in '<title>nccl-bot report: job 42</title>' '>allgather, 1 node, 8 ranks<' \
	'>reducescatter, 2 nodes, 16 ranks<' '>allreduce, 2 nodes, 16 ranks<' '>AUTO<' '>nccl-bot<' \
	'>AUTO&#39;s arm<' '>nccl-bot&#39;s<' '>tree/ll<' '>ring/ll128<' '>ring/simple<' '>0%<' \
	'>loss vs the best known arm<' '>message size (bytes, log2 scale)<' '>256<' '>4G<' \
	'no loss known' '>23000 calls at 23 size(s), 23 with a known loss; saved ' \
	'25000 calls decided of 25200; saved ' 'tuner loaded on 16 of 16 ranks; NCCL 2.28.9, tuner v5, profiler v4' \
	'fabric prior (no map &lt;&amp;&quot;&gt; here)' "from $tmp/r&lt;&amp;&quot;&#39;x<"; do
	grep -qF -- "$w" "$tmp/r.svg" || bad "r.svg lacks '$w'"
done
grep -qF 'no map <' "$tmp/r.svg" && bad "r.svg: the part's string unescaped" || ok "r: the part's fabric_why and the directory escaped"
# the time saved: the text report's total, drawn
saved=$(sed -n 's/^  job total: .*, saved \([0-9.]* [mu]*s\), lost.*/\1/p' "$tmp/stdout")
[ -n "$saved" ] && grep -qF "saved $saved, lost 0 us, net $saved saved vs AUTO" "$tmp/r.svg" &&
	ok "r: the job's time saved as the text report says ($saved)" || bad "r: time saved '$saved'"
# AUTO's and our lines: allgather's and allreduce's, none where nothing is known
n=$(grep -c '<polyline' "$tmp/r.svg")
[ "$n" = 4 ] && ok "r: 4 lines (AUTO and ours in 2 panels; none without a known loss)" || bad "r: $n lines"
# the arms used: ours tree/ll at 5 sizes (its colour: tree's, 2/3 towards
# white for ll) plus its legend swatch; ring/ll: AUTO's at 10 sizes of
# allreduce and 4 of allgather, ours at allgather's 4, a swatch in each legend
n=$(grep -c 'fill="#f1c9aa"' "$tmp/r.svg")
[ "$n" = 6 ] && ok "r: ours tree/ll at 5 sizes (5 cells and its legend)" || bad "r: tree/ll $n cells, want 6"
n=$(grep -c 'fill="#aad0e5"' "$tmp/r.svg")
[ "$n" = 20 ] && ok "r: ring/ll in 18 cells (AUTO's 10 + 4, ours 4) and 2 legends" || bad "r: ring/ll $n, want 20"

# --json with --svg: the JSON on stdout untouched, the picture written
"$bot" report --json --svg "$tmp/j.svg" "$hd" >"$tmp/j.json" 2>"$tmp/out"
rc=$?
if [ $rc = 0 ] && cmp -s "$tmp/r.svg" "$tmp/j.svg" && head -c 8 "$tmp/j.json" | grep -q '^{"dir":' &&
	{ ! command -v python3 >/dev/null 2>&1 || python3 -m json.tool "$tmp/j.json" >/dev/null; }; then
	ok "report --json --svg: the JSON on stdout, the same picture in the file"
else
	bad "report --json --svg: rc $rc"; sed 's/^/    /' "$tmp/out"
fi

# one context; hundreds (every collective, 8 scales, 81 sizes: 40 panels, 32 drawn)
mkdir -m 700 "$tmp/one" "$tmp/many"
printf 'nccl-bot-report-part 2\njob 7\nstep 0\nnode n1\nctx allreduce 80 8 1 10 ring/ll ring/simple\narm ring/simple 3 1000 1000\narm ring/ll 3 1500 1500\nend 1\n' \
	>"$tmp/one/7.0.n1.part"
awk 'BEGIN {
	printf "nccl-bot-report-part 2\njob 8\nstep 0\nnode n1\n"
	split("broadcast reduce allgather reducescatter allreduce", cn, " ")
	for (c = 1; c <= 5; c++) for (b = 40; b <= 200; b += 2) for (s = 1; s <= 8; s++) {
		o = (b + s) % 3 == 0 ? "tree/ll128" : (b % 5 == 0 ? "nvls/simple" : "ring/simple")
		printf "ctx %s %d %d %d %d ring/simple %s\n", cn[c], b, 8 * s, s, 10 + s, o
		printf "arm ring/simple 10 1000 %d\n", 1000 + (b * 7 + s * 13) % 300
		if (o != "ring/simple") printf "arm %s 10 1000 %d\n", o, 1000 + (b * 11 + s) % 300
		n++
	}
	printf "end %d\n", n }' >"$tmp/many/8.0.n1.part"
chmod 600 "$tmp/one"/*.part "$tmp/many"/*.part
"$bot" report "$tmp/one" --svg "$tmp/one.svg" >/dev/null 2>"$tmp/out" &&
	grep -q "picture of job 7: 1 panel(s), 1 context(s), 1 with a known loss" "$tmp/out" &&
	grep -q '>50%<' "$tmp/one.svg" && ok "one context: one panel, AUTO's 50% loss on its axis" ||
	{ bad "one context"; sed 's/^/    /' "$tmp/out"; }
render one
"$bot" report "$tmp/many" --svg "$tmp/many.svg" >/dev/null 2>"$tmp/out" &&
	grep -q "picture of job 8: 32 panel(s), 2592 context(s), 2592 with a known loss (panels of the fewest calls left out)" "$tmp/out" &&
	grep -q '>8 panel(s) of the fewest calls left out (648 context(s); at most 32 drawn)' "$tmp/many.svg" &&
	ok "3240 contexts in 40 panels: the 32 of the most calls drawn, the rest said" ||
	{ bad "hundreds of contexts"; sed 's/^/    /' "$tmp/out"; }
render many

# nothing measured: no picture; usage and file errors
mkdir -m 700 "$tmp/none"
printf 'nccl-bot-report-part 2\njob 9\nstep 0\nnode n1\nend 0\n' >"$tmp/none/9.0.n1.part"
chmod 600 "$tmp/none/9.0.n1.part"
"$bot" report "$tmp/none" --svg "$tmp/none.svg" >"$tmp/stdout" 2>"$tmp/out"
[ $? = 1 ] && [ ! -e "$tmp/none.svg" ] && grep -q "job 9: nothing measured" "$tmp/out" &&
	grep -q "step 9.0: 1 part" "$tmp/stdout" &&
	ok "nothing measured: the text report, no picture, exit 1 saying why" ||
	{ bad "nothing measured"; sed 's/^/    /' "$tmp/out"; }
"$bot" report "$hd" --svg "" >/dev/null 2>"$tmp/out"
[ $? = 2 ] && grep -q "svg wants a file name" "$tmp/out" && ok "--svg '': a usage error" || bad "--svg ''"
"$bot" report "$hd" --svg "$tmp/nodir/r.svg" >/dev/null 2>"$tmp/out"
[ $? = 1 ] && grep -q "nodir" "$tmp/out" && ok "report --svg into a missing directory: exit 1, named" ||
	bad "report --svg into a missing directory"
"$bot" report --help | grep -q -- "--svg FILE" && ok "report --help names --svg" || bad "report --help"

echo "svg: $pass passed, $fail failed"
[ "$fail" = 0 ]
