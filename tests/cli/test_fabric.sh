#!/bin/sh
# tests/cli/test_fabric.sh - `nccl-bot fabric` as an administrator meets it:
# generate a fabric map from a slurm.conf and topology.conf like the test
# cluster's (two fabrics by feature, one network by top switch), written
# atomically with -o and read back by `nccl-bot fabric NODELIST`, which says
# what a step there plans from (one fabric, or the prior and why); the same
# map as a site configuration (generate --yaml, fabric --config); usage
# errors and a bad site configuration exit 2, an unreadable or bad map
# file, or two maps at once, exit 1 naming it.
set -u
bot=${NCCL_BOT:-./nccl-bot}
# no test reads the host's /etc/nccl-bot/site.yaml (formats.md section 15)
NCCL_BOT_CONFIG=none
export NCCL_BOT_CONFIG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
EXPECT_BASIC=1
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

cat >"$tmp/slurm.conf" <<'CONF'
ClusterName=nbtest
NodeName=n[1-2] NodeHostname=h Port=[7001-7002] CPUs=2 Features=fabric_a State=UNKNOWN
NodeName=n[3-4] NodeHostname=h Port=[7003-7004] CPUs=2 Features=fabric_b State=UNKNOWN
NodeName=cpu1 CPUs=8
PartitionName=debug Nodes=n[1-4] Default=YES
CONF
cat >"$tmp/topology.conf" <<'CONF'
SwitchName=leaf1 Nodes=n[1-2]
SwitchName=leaf2 Nodes=n[3-4]
SwitchName=spine Switches=leaf[1-2]
CONF

expect "generate: one line per node with a fabric feature, sorted" 0 "" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf"
if [ "$(grep -v '^#' "$tmp/out" | grep -v '^nccl-bot:')" = "n1 a
n2 a
n3 b
n4 b" ]; then ok "  ... n1 n2 in a, n3 n4 in b"; else bad "  ... map:"; cat "$tmp/out"; fi
expect "  ... a node without one is a comment saying why" 0 "# node cpu1 has no feature starting with fabric_" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf"
expect "  ... and the count goes to stderr" 0 "4 node(s) mapped, 1 without a fabric" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf"
expect "generate --by top-switch -o: topology.conf beside slurm.conf is found" 0 "4 node(s) mapped" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" --by top-switch -o "$tmp/top.map"
expect "  ... the map names the spine" 0 "^n3 spine$" -- cat "$tmp/top.map"
expect "  ... no temporary left" 0 "" -- test -z "$(ls -A "$tmp" | grep tmp)"
"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" -o "$tmp/fabric.map" 2>/dev/null
# -o - is standard output, not a file named "-"
mkdir "$tmp/dash"
expect "generate -o -: the map on standard output" 0 "^n3 b$" -- \
	sh -c 'cd "$1" && exec "$2" fabric generate --slurm-conf ../slurm.conf -o -' sh "$tmp/dash" \
	"$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")"
expect "  ... no file named -" 0 "" -- test ! -e "$tmp/dash/-"
expect "fabric NODELIST: one fabric" 0 "^step: fabric a " -- "$bot" fabric --map "$tmp/fabric.map" 'n[1-2]'
expect "  ... each node's line" 0 "^n2 a$" -- "$bot" fabric --map "$tmp/fabric.map" 'n[1-2]'
cp "$tmp/fabric.map" "$tmp/w.map" && chmod 0666 "$tmp/w.map"
expect "a fabric map writable by everyone: refused, naming it and the mode" 1 \
	"$tmp/w.map: writable by everyone .mode 666." -- "$bot" fabric --map "$tmp/w.map" 'n[1-2]'
expect "fabric NODELIST: two fabrics: the prior, and why" 0 "^step: the prior (the step's nodes span fabrics a and b)" -- \
	"$bot" fabric --map "$tmp/fabric.map" 'n[2-3]'
expect "fabric NODELIST: a node not in the map" 0 "^step: the prior (node cpu1 is not in the fabric map)" -- \
	"$bot" fabric --map "$tmp/fabric.map" cpu1
expect "  ... shown as -" 0 "^cpu1 -$" -- "$bot" fabric --map "$tmp/fabric.map" cpu1
expect "a bad host list: usage, exit 2" 2 "n\[1-: a \[ without \]" -- "$bot" fabric --map "$tmp/fabric.map" 'n[1-'
expect "no --map: usage, exit 2" 2 "usage" -- "$bot" fabric n1
expect "--by bogus: exit 2" 2 "want feature:PREFIX, features or top-switch" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" --by bogus
# Nodes topology.conf names but slurm.conf does not are no nodes of the
# cluster: left out and counted apart (they were listed "has no feature")
mkdir "$tmp/extra" && cp "$tmp/slurm.conf" "$tmp/extra/"
printf 'SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[3-6]\n' >"$tmp/extra/topology.conf"
expect "topology.conf's extra nodes: left out, counted apart" 0 "2 node(s) of topology.conf not in slurm.conf, left out" -- \
	"$bot" fabric generate --slurm-conf "$tmp/extra/slurm.conf"
expect "  ... slurm.conf's own counted as before" 0 "4 node(s) mapped, 1 without a fabric" -- \
	"$bot" fabric generate --slurm-conf "$tmp/extra/slurm.conf"
if grep -q "n5\|n6" "$tmp/out"; then bad "  ... n5 and n6 not in the map"; else ok "  ... n5 and n6 not in the map"; fi
mkdir "$tmp/notopo" && cp "$tmp/slurm.conf" "$tmp/notopo/"
expect "--by top-switch without topology.conf: exit 1" 1 "needs topology.conf" -- \
	"$bot" fabric generate --slurm-conf "$tmp/notopo/slurm.conf" --by top-switch
expect "topology.conf that is not one: exit 1, naming the line" 1 "slurm.conf:1: not a SwitchName= line" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" --topology "$tmp/slurm.conf"
printf 'SwitchName=a Switches=b\nSwitchName=b Switches=a\n' >"$tmp/loop.conf"
expect "a loop of switches: exit 1, naming the file" 1 "loop.conf: switch a is in a loop" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" --topology "$tmp/loop.conf"
expect "a missing slurm.conf: exit 1, naming it" 1 "missing.conf" -- \
	"$bot" fabric generate --slurm-conf "$tmp/missing.conf"
ln -s "$tmp/slurm.conf" "$tmp/link.conf"
expect "slurm.conf through a link: refused" 1 "link.conf" -- \
	"$bot" fabric generate --slurm-conf "$tmp/link.conf"
# values in double quotes, as slurm.conf allows (the quotes were kept, so
# the nodes had no fabric_ feature, exit 0, until 2026-12-04); an Include
# line is refused by name (its nodes would be missing)
mkdir "$tmp/q"
printf 'NodeName=q[1-2] Features="fabric_qa,gpu" CPUs=4\nNodeName=q3 Features="big, fabric_qb"\n' >"$tmp/q/slurm.conf"
: >"$tmp/q/topology.conf"
expect "generate: quoted Features= values" 0 "^q3 qb$" -- "$bot" fabric generate --slurm-conf "$tmp/q/slurm.conf"
grep -q "^q1 qa$" "$tmp/out" && grep -q "^q2 qa$" "$tmp/out" && grep -q "3 node(s) mapped, 0 without" "$tmp/out" &&
	ok "  ... every node mapped" || { bad "  ... every node mapped"; sed 's/^/    /' "$tmp/out"; }
# a '#' is a comment even inside quotes (as Slurm cuts it), and a quote
# left without its end is part of the word, as Slurm reads it
printf 'NodeName=q1 Features=fabric_qa Comment="GPU#3 spare"\n' >"$tmp/q/open.conf"
expect "generate: a comment inside quotes, the quote left open" 0 "^q1 qa$" -- \
	"$bot" fabric generate --slurm-conf "$tmp/q/open.conf" --topology "$tmp/q/topology.conf"
# a backslash-escaped '#' is a '#' in the value, not a comment (the node lost
# its Features= after it until 2026-12-04), and a backslash escapes any
# character, as Slurm reads slurm.conf
printf 'NodeName=q1 Comment=GPU\\#3 Features=fabric_qa\nNodeName=q2 Comment=x\\\\#y Features=fabric_qb\nNodeName=q3 Features=fabric\\_qc\n' >"$tmp/q/esc.conf"
expect "generate: an escaped '#' is no comment" 0 "^q1 qa$" -- \
	"$bot" fabric generate --slurm-conf "$tmp/q/esc.conf" --topology "$tmp/q/topology.conf"
grep -q "^q3 qc$" "$tmp/out" && grep -q "node q2 has no feature" "$tmp/out" &&
	ok "  ... an escaped backslash before '#': a comment; other escapes dropped" ||
	{ bad "  ... an escaped backslash before '#': a comment; other escapes dropped"; sed 's/^/    /' "$tmp/out"; }
printf 'ClusterName=c\ninclude nodes.conf\n' >"$tmp/q/inc.conf"
expect "generate: Include is refused by name" 1 "inc.conf:2: 'Include' is not followed (its lines would be missing)" -- \
	"$bot" fabric generate --slurm-conf "$tmp/q/inc.conf" --topology "$tmp/q/topology.conf"
# a map with DOS line ends: the CR is named (it was "not a fabric name")
printf 'n1 a\r\nn2 a\r\n' >"$tmp/crlf.map"
expect "a map with CRLF line ends: the CR named" 1 "crlf.map:1: not a fabric name .*(the line holds a CR: DOS line ends?" -- \
	"$bot" fabric --map "$tmp/crlf.map" n1

# ---- the map in the site configuration (formats.md section 15, version 2) ----
expect "generate --yaml -o: a site configuration" 0 "4 node(s) mapped, 1 without a fabric" -- \
	"$bot" fabric generate --slurm-conf "$tmp/slurm.conf" --yaml -o "$tmp/site.yaml"
expect "  ... version 2 with fabric_map" 0 "^fabric_map:$" -- cat "$tmp/site.yaml"
expect "  ... nodes as host lists" 0 "^    - n\[1-2\]$" -- cat "$tmp/site.yaml"
expect "  ... the node without a fabric is a comment" 0 "^# node cpu1 has no feature" -- cat "$tmp/site.yaml"
expect "fabric --config FILE NODELIST: one fabric" 0 "^step: fabric a " -- \
	"$bot" fabric --config "$tmp/site.yaml" 'n[1-2]'
expect "  ... each node's line" 0 "^n4 b$" -- "$bot" fabric --config "$tmp/site.yaml" 'n[3-4]'
expect "  ... two fabrics: the prior, and why" 0 "^step: the prior (the step's nodes span fabrics a and b)" -- \
	"$bot" fabric --config "$tmp/site.yaml" 'n[2-3]'
expect "  ... the same map as the text one" 0 "" -- test "$("$bot" fabric --config "$tmp/site.yaml" 'n[1-4],cpu1')" = \
	"$("$bot" fabric --map "$tmp/fabric.map" 'n[1-4],cpu1')"
expect "NCCL_BOT_CONFIG names it: the same" 0 "^step: fabric b " -- \
	env NCCL_BOT_CONFIG="$tmp/site.yaml" "$bot" fabric 'n[3-4]'
cat >"$tmp/hand.yaml" <<'CONF'
version: 2
state_dir: /var/lib/nccl-bot/state
fabric_map:
  h100:
    nodes: "gpu[01-04]"
    partitions: [gpu]
  a100:
    nodes: [gpu05, "old[1-2]"]
CONF
expect "a map written by hand: host lists expanded" 0 "^old2 a100$" -- \
	"$bot" fabric --config "$tmp/hand.yaml" 'gpu[03-05],old2'
expect "  ... spanning h100 and a100" 0 "span fabrics h100 and a100" -- \
	"$bot" fabric --config "$tmp/hand.yaml" 'gpu[03-05],old2'
expect "--map and --config with a map: refused, exit 1, naming both" 1 \
	"two fabric maps: --map $tmp/fabric.map and the fabric_map of $tmp/hand.yaml (line 3)" -- \
	"$bot" fabric --map "$tmp/fabric.map" --config "$tmp/hand.yaml" n1
printf 'version: 1\nfabric_map:\n  a:\n    nodes: n1\n' >"$tmp/v1.yaml"
expect "fabric_map in a version 1 file: exit 2, FILE:LINE:COL" 2 "v1.yaml:2:1: fabric_map needs version: 2" -- \
	"$bot" fabric --config "$tmp/v1.yaml" n1
printf 'version: 2\nfabric_map:\n  a:\n    nodes: n[1-2]\n  b:\n    nodes: n2\n' >"$tmp/dup.yaml"
expect "a node in two fabrics: exit 2, naming both lines" 2 "dup.yaml:6:12: fabric_map: b: node n2 is already in fabric a (line 4)" -- \
	"$bot" fabric --config "$tmp/dup.yaml" n1
printf 'version: 2\nfabric_map:\n  a:\n    nodes: n[1-\n' >"$tmp/badhl.yaml"
expect "a bad host list: exit 2, naming fabric and key" 2 "badhl.yaml:4:12: fabric_map: a: nodes: 'n\[1-': a \[ without \]" -- \
	"$bot" fabric --config "$tmp/badhl.yaml" n1
printf 'version: 1\nstate_dir: /srv\n' >"$tmp/nomap.yaml"
expect "--config without a map: usage, exit 2" 2 "no fabric map: give --map FILE" -- \
	"$bot" fabric --config "$tmp/nomap.yaml" n1
expect "--map with a configuration without a map: the text map" 0 "^step: fabric a " -- \
	"$bot" fabric --map "$tmp/fabric.map" --config "$tmp/nomap.yaml" n1
expect "--map alone reads no site configuration (NCCL_BOT_CONFIG ignored)" 0 "^step: fabric a " -- \
	env NCCL_BOT_CONFIG="$tmp/hand.yaml" "$bot" fabric --map "$tmp/fabric.map" n1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
