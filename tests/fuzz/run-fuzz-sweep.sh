#!/bin/sh
# run-fuzz-sweep.sh - automake test: runs the sweep fuzz target's standalone
# driver (tests/fuzz/fuzz_sweep, built from fuzz_sweep.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_sweep
corpus=$srcdir/tests/fuzz/corpus

if [ ! -x "$prog" ]; then
	echo "run-fuzz-sweep.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-sweep.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
