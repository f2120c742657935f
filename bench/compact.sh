#!/bin/sh
# compact.sh - `nccl-bot compact` merging an inbox of deltas into a
# 2,000-context state (target: 1,000 deltas in <= 2 s). Per size (default
# 1,000 and 10,000 deltas): a fresh state directory whose fabric's state is
# built first by compacting bench/deltagen.c's seed deltas (2,000 contexts,
# 3 arms, not timed), then N deltas of steps of 1..4 nodes of 50 users
# (deltagen deltas), then, side by side in the same run, reading the
# inbox's bytes (`cat` of its files to /dev/null, the floor) and
# `nccl-bot compact --state DIR --now T` (T fixed, so every step is ready).
# Checks that every delta was merged. Prints per size: deltas, bytes,
# contexts in the state, compact and read seconds, their ratio, and
# PASS/MISS against 2 s per 1,000 deltas (the target is for 1,000; larger
# sizes are shown against the same rate to see how it scales).
#
# usage: bench/compact.sh [path/to/nccl-bot] [N...]
# Run from the top of the source tree after `make` (it links the built
# libbotcommon and libbotpolicy). Needs ~130 MB in $TMPDIR for 10,000.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in -*) echo "usage: bench/compact.sh [path/to/nccl-bot] [N...]" >&2; exit 2 ;; esac
bot=${1:-$top/nccl-bot}
[ $# -gt 0 ] && shift
sizes=${*:-1000 10000}
for n in $sizes; do
	case $n in
	''|*[!0-9]*|0) echo "usage: bench/compact.sh [path/to/nccl-bot] [N...]: N is a positive number of deltas, not '$n'" >&2; exit 2 ;;
	esac
done
T=2000000000	# the compactor's --now; deltas end at T - 600
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$bot" ] || { echo "compact.sh: $bot not built (run make)" >&2; exit 1; }
for lib in "$top/.libs/libbotcommon.a" "$top/.libs/libbotpolicy.a"; do
	[ -f "$lib" ] || { echo "compact.sh: $lib not built (run make)" >&2; exit 1; }
done
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 ${CFLAGS:-} -I"$top" -o "$tmp/deltagen" \
	"$top/bench/deltagen.c" "$top/.libs/libbotcommon.a" "$top/.libs/libbotpolicy.a" -lm

now() { date +%s%N; }
# contexts in the fabric's current snapshot (its YAML export, one "- context:" each)
contexts() { "$bot" state export --state "$1" --fabric bench | grep -c '^- context:' || true; }

printf '%-8s %10s %9s %10s %10s %9s %s\n' deltas bytes contexts compact_s read_s ratio \
	"target (2 s per 1,000)"
fail=0
for n in $sizes; do
	st=$tmp/state
	mkdir -p "$st/inbox"
	"$tmp/deltagen" seed "$st/inbox" $T
	"$bot" compact --state "$st" --now $T >"$tmp/seed.out" 2>&1 ||
		{ cat "$tmp/seed.out" >&2; exit 1; }
	grep -q "merged 100 delta" "$tmp/seed.out" || { cat "$tmp/seed.out" >&2; exit 1; }
	ctx=$(contexts "$st")
	"$tmp/deltagen" deltas "$st/inbox" $T "$n"
	bytes=$(cat "$st/inbox"/*.nbd | wc -c)
	t0=$(now)
	cat "$st/inbox"/*.nbd >/dev/null
	t1=$(now)
	"$bot" compact --state "$st" --now $T >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; exit 1; }
	t2=$(now)
	grep -q "merged $n delta.*, 0 quarantined, 0 waiting" "$tmp/out" ||
		{ echo "compact.sh: not all $n merged:" >&2; cat "$tmp/out" >&2; exit 1; }
	[ -z "$(ls "$st/inbox")" ] || { echo "compact.sh: inbox not empty" >&2; exit 1; }
	ok=$(awk -v c="$((t2 - t1))" -v n="$n" 'BEGIN { print (c / 1e9 <= 2 * n / 1000) ? "PASS" : "MISS" }')
	[ "$ok" = PASS ] || fail=1
	awk -v n="$n" -v b="$bytes" -v x="$ctx" -v c="$((t2 - t1))" -v r="$((t1 - t0))" -v ok="$ok" 'BEGIN {
		printf "%-8d %10d %9d %10.3f %10.4f %9.0f %s (%.2f s allowed)\n", n, b, x, c / 1e9, r / 1e9,
			c / r, ok, 2 * n / 1000
	}'
	sed -n 's/^compact: bench: /         /p' "$tmp/out"
	rm -rf "$st"
done
exit $fail
