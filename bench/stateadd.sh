#!/bin/sh
# stateadd.sh - `nccl-bot state add` against the number of spool files:
# 10^4, 10^5 and 2x10^5 small valid files (bench/spoolgen.c, 392 bytes
# each, every one a new source), each count merged into a fresh fabric as
# jobs of at most 50,000 files (a batch holds at most 65,536: formats.md 9),
# timed next to `cat` of the same files to /dev/null in the same run.
# Prints, per count: seconds for state add and for cat, their ratio, and
# how the time grew against the file count (1.0 = linear; a sorted insert
# per source made it ~2x per doubling).
#
# usage: bench/stateadd.sh [path/to/nccl-bot]
# Run from the top of the source tree after `make` (it links the built
# libbotcommon and libbotpolicy). Needs ~600 MB in $TMPDIR (inodes mostly).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in -*) echo "usage: bench/stateadd.sh [path/to/nccl-bot]" >&2; exit 2 ;; esac
bot=${1:-$top/nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
per_job=50000

[ -x "$bot" ] || { echo "stateadd.sh: $bot not built (run make)" >&2; exit 1; }
for lib in "$top/.libs/libbotcommon.a" "$top/.libs/libbotpolicy.a"; do
	[ -f "$lib" ] || { echo "stateadd.sh: $lib not built (run make)" >&2; exit 1; }
done
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 ${CFLAGS:-} -I"$top" -o "$tmp/spoolgen" \
	"$top/bench/spoolgen.c" "$top/.libs/libbotcommon.a" "$top/.libs/libbotpolicy.a" -lm

now() { date +%s%N; }

printf '%-8s %6s %10s %10s %12s %14s\n' files jobs add_s cat_s add/cat growth/count
prev_n=0 prev_t=0
for n in 10000 100000 200000; do
	# the files, as jobs of at most per_job files each
	jobs=0 made=0
	while [ "$made" -lt "$n" ]; do
		k=$((n - made < per_job ? n - made : per_job))
		mkdir "$tmp/job$jobs"
		"$tmp/spoolgen" "$tmp/job$jobs" "$k" "$made"
		made=$((made + k))
		jobs=$((jobs + 1))
	done
	mkdir "$tmp/state"
	t0=$(now)
	j=0
	while [ "$j" -lt "$jobs" ]; do
		"$bot" state add --state "$tmp/state" --fabric bench "$tmp/job$j" 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; exit 1; }
		j=$((j + 1))
	done
	t1=$(now)
	find "$tmp" -name 'nb-bench-*.spool' -exec cat {} + >/dev/null
	t2=$(now)
	grep -q "round $jobs;" "$tmp/err" || { echo "stateadd.sh: not $jobs rounds" >&2; cat "$tmp/err" >&2; exit 1; }
	add=$((t1 - t0)) cat=$((t2 - t1))
	awk -v n="$n" -v jobs="$jobs" -v a="$add" -v c="$cat" -v pn="$prev_n" -v pt="$prev_t" 'BEGIN {
		g = pn ? sprintf("%.2f", (a / pt) / (n / pn)) : "-"
		printf "%-8d %6d %10.3f %10.3f %12.2f %14s\n", n, jobs, a / 1e9, c / 1e9, a / c, g
	}'
	prev_n=$n prev_t=$add
	rm -rf "$tmp"/job* "$tmp/state"
done
