#!/bin/sh
# make-corpus-harvest.sh - how the seed corpus of the harvest stream's fuzz
# target (tests/fuzz/corpus-harvest, read by tests/fuzz/fuzz_harvest.c) was
# made. Not part of `make check`: the seeds are committed, so that every
# build fuzzes the same bytes. Needs tests/fuzz/harvest_stream (the real
# reading half, bot_harvest_read; `make check` builds it); run from the
# build directory:
#
#   tests/fuzz/make-corpus-harvest.sh [SRCDIR] [OUTDIR]   (default . and SRCDIR/tests/fuzz/corpus-harvest)
#
# Seeds: streams the reading half writes from the spool corpus in one or
# two directories (the fuzz target's two sources): files read, a duplicate,
# files rejected (invalid content, cut short, a symbolic link, over the
# byte bound), files without records, and the error units (a directory
# that cannot be opened, over the file bound); then copies of one with a
# unit after the end, without its end unit, and cut inside a unit. File
# times are fixed (one older than the 7 days the step start may reach back).
set -eu
src=${1:-.}
out=${2:-$src/tests/fuzz/corpus-harvest}
prog=${HARVEST_STREAM:-./tests/fuzz/harvest_stream}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
spool=$src/tests/fuzz/corpus-spool
mkdir -p "$out"
# put DIR NAME SEED [MTIME]: a copy of a spool seed as DIR/NAME
put() {
	mkdir -p "$tmp/$1"
	cp "$spool/$3" "$tmp/$1/$2"
	touch -d "@${4:-1699999000}" "$tmp/$1/$2"
}
# stream NAME [OPTIONS] DIR...: the reading half's stream as NAME
stream() {
	name=$1
	shift
	"$prog" "$@" >"$out/$name"
}
put a nb-a-1.spool valid-mixed
put a nb-a-2.spool valid-summary 1699998000
put b nb-b-1.spool valid-summary
put c nb-c-1.spool valid-mixed 1690000000
put c nb-c-2.spool bad-crc
put c nb-c-3.spool truncated
ln -s nb-c-1.spool "$tmp/c/nb-c-4.spool"
touch -h -d @1699999000 "$tmp/c/nb-c-4.spool"
put d nb-d-1.spool valid-empty
put e nb-e-1.spool valid-summary
put e nb-e-2.spool valid-mixed
stream valid-two-dirs "$tmp/a" "$tmp/b"
stream valid-rejected "$tmp/c"
stream valid-empty "$tmp/d"
stream over-bytes -b 300 "$tmp/e"
stream error-dir "$tmp/missing"
stream error-files -f 1 "$tmp/e"
f=$out/valid-two-dirs
n=$(wc -c <"$f")
cp "$f" "$out/after-end"
head -c 160 "$f" >>"$out/after-end"
head -c $((n - 160)) "$f" >"$out/no-end"
head -c $((n - 100)) "$f" >"$out/cut"
