#!/bin/sh
# run-fuzz-delta.sh - automake test: runs the delta-reader fuzz target's
# standalone driver (tests/fuzz/fuzz_delta, built from fuzz_delta.c and
# driver.c) over its seed corpus (tests/fuzz/corpus-delta) and the driver's
# deterministic mutation loop. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_delta
corpus=$srcdir/tests/fuzz/corpus-delta

if [ ! -x "$prog" ]; then
	echo "run-fuzz-delta.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-delta.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
