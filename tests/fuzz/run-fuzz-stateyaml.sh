#!/bin/sh
# run-fuzz-stateyaml.sh - automake test: runs the stateyaml fuzz target's standalone
# driver (tests/fuzz/fuzz_stateyaml, built from fuzz_stateyaml.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_stateyaml
corpus=$srcdir/tests/fuzz/corpus-stateyaml

if [ ! -x "$prog" ]; then
	echo "run-fuzz-stateyaml.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-stateyaml.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
