#!/bin/sh
# run-fuzz-state.sh - automake test: runs the state fuzz target's standalone
# driver (tests/fuzz/fuzz_state, built from fuzz_state.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_state
corpus=$srcdir/tests/fuzz/corpus-state

if [ ! -x "$prog" ]; then
	echo "run-fuzz-state.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-state.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
