#!/bin/sh
# run.sh - differential fuzzing of this tree's libnccl-tuner-bot.so against
# a reference revision's (tests/difftest/difftest.c says what is compared
# and which differences are intended).
#
#   tests/difftest/run.sh [CALLS [SEED]]      (default 10000000 calls, seed 1)
#
# Run from the top of the source tree after `make`. Environment:
#   REF_REV   the reference revision (default 813b7d5, the parent of the
#             rank-side split); its .so is built from `git archive` in a
#             temporary directory (autoreconf, configure, make: a minute)
#   REF_SO    a reference .so already built (skips the build)
#   REF_TABLE_VERSION  the newest step-table format the reference reads
#             (default: BOT_TABLE_VERSION in REF_REV's common/table.h, 1
#             where it has none; with REF_SO, 1): valid tables are written
#             in formats both builds read
#   NEW_SO    the library under test (default tuner/libnccl-tuner-bot.so)
#   CC        compiler for the driver and the fake NCCL (default cc)
#   KEEP=1    keep the temporary directory
# Exit status: the driver's (1 on any unclassified difference).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
calls=${1:-10000000}
seed=${2:-1}
rev=${REF_REV:-813b7d5}
new=${NEW_SO:-$top/tuner/libnccl-tuner-bot.so}
cc=${CC:-cc}
tmp=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then
	echo "run.sh: keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

[ -f "$new" ] || { echo "run.sh: $new not built (run make)" >&2; exit 2; }
new=$(cd "$(dirname "$new")" && pwd)/$(basename "$new")
if [ -n "${REF_SO:-}" ]; then
	ref=$(cd "$(dirname "$REF_SO")" && pwd)/$(basename "$REF_SO")
else
	echo "run.sh: building the reference .so of $rev in $tmp/ref"
	mkdir "$tmp/ref"
	git -C "$top" archive "$rev" | tar -x -C "$tmp/ref"
	(cd "$tmp/ref" && autoreconf -fi && ./configure && make -j2 tuner/libnccl-tuner-bot.so) \
		> "$tmp/ref.log" 2>&1 || { tail -20 "$tmp/ref.log" >&2; exit 2; }
	ref=$tmp/ref/tuner/libnccl-tuner-bot.so
fi

$cc -std=c11 -O2 -Wall -Wextra -shared -fPIC -o "$tmp/fake_nccl.so" \
	"$top/tests/difftest/fake_nccl.c"
$cc -std=c11 -O2 -Wall -Wextra -I"$top" -o "$tmp/difftest" "$top/tests/difftest/difftest.c" \
	"$top/common/settings.c" "$top/common/table_decode.c" "$top/common/table_encode.c" \
	"$top/policies/context.c" -ldl -lm

# the newest table format the reference reads
if [ -z "${REF_TABLE_VERSION:-}" ]; then
	REF_TABLE_VERSION=1
	if [ -z "${REF_SO:-}" ]; then
		v=$(git -C "$top" show "$rev:common/table.h" 2>/dev/null |
			sed -n 's/^#define BOT_TABLE_VERSION \([0-9][0-9]*\)$/\1/p')
		[ -z "$v" ] || REF_TABLE_VERSION=$v
	fi
fi
echo "run.sh: new $new"
echo "run.sh: ref $ref ($rev, table formats up to $REF_TABLE_VERSION)"
# the builds read only what the driver sets in their own namespaces
env -u NCCL_BOT_TABLE -u NCCL_BOT_POLICY -u NCCL_BOT_SEED -u NCCL_BOT_MIN_BYTES \
	-u NCCL_BOT_ALLOW -u NCCL_BOT_DEBUG -u NCCL_BOT_SPOOL -u NCCL_ALGO -u NCCL_PROTO \
	DIFFTEST_REF_TABLE_VERSION=$REF_TABLE_VERSION \
	"$tmp/difftest" "$new" "$ref" "$tmp/fake_nccl.so" "$calls" "$seed"
