#!/bin/sh
# make-corpus-delta.sh - how the seed corpus of the delta reader's fuzz
# target (tests/fuzz/corpus-delta, read by tests/fuzz/fuzz_delta.c) was
# made. Not part of `make check`: the seeds are committed, so that every
# build fuzzes the same bytes. Needs a built nccl-bot; run from the build
# directory:
#
#   tests/fuzz/make-corpus-delta.sh [SRCDIR] [OUTDIR]   (default . and SRCDIR/tests/fuzz/corpus-delta)
#
# Seeds: deltas `nccl-bot harvest` writes from the spool corpus (samples and
# summaries, summaries only, no records; a batch step and a restart; a
# fabric of 64 characters, its header field used whole), then copies of one
# with a bad CRC, cut short, and with the wrong magic.
set -eu
src=${1:-.}
out=${2:-$src/tests/fuzz/corpus-delta}
bot=${NCCL_BOT:-./nccl-bot}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
spool=$src/tests/fuzz/corpus-spool
mkdir -p "$out" "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/out"
cp "$spool/valid-mixed" "$tmp/a/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/a/nb-a-2.spool"
cp "$spool/valid-summary" "$tmp/b/nb-b-1.spool"
cp "$spool/valid-empty" "$tmp/c/nb-c-1.spool"
# harvest NAME ARGS...: one delta of fabric $fabric, renamed NAME in the corpus
fabric=h100-ib-ndr
harvest() {
	name=$1
	shift
	rm -f "$tmp/out"/*
	"$bot" harvest --outbox "$tmp/out" --fabric "$fabric" --node n1 --nodes 2 "$@" 2>/dev/null
	cp "$tmp/out"/*.nbd "$out/$name"
}
harvest valid-mixed --job 1234 --step 0 "$tmp/a"
harvest valid-summary --cluster alps --job 1234_7 --step batch --restart 1 "$tmp/b"
harvest valid-empty "$tmp/c"
fabric=h100-ib-ndr.$(printf 'x%.0s' $(seq 52))	# 64 characters, no NUL in the field
harvest valid-fabric64 --job 1235 "$tmp/a"
f=$out/valid-mixed
n=$(wc -c <"$f")
cp "$f" "$out/bad-crc"
printf '\001' | dd of="$out/bad-crc" bs=1 seek=$((n - 100)) conv=notrunc status=none
head -c $((n - 60)) "$f" >"$out/truncated"
cp "$f" "$out/bad-magic"
printf 'X' | dd of="$out/bad-magic" bs=1 seek=0 conv=notrunc status=none
