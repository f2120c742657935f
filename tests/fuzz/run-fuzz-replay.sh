#!/bin/sh
# run-fuzz-replay.sh - automake test: runs the replay fuzz target's standalone
# driver (tests/fuzz/fuzz_replay, built from fuzz_replay.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_replay
corpus=$srcdir/tests/fuzz/corpus-replay

if [ ! -x "$prog" ]; then
	echo "run-fuzz-replay.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-replay.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
