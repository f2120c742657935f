#!/bin/sh
# run-fuzz-table.sh - automake test: runs the step-table fuzz target's
# standalone driver (tests/fuzz/fuzz_table, built from fuzz_table.c and
# driver.c) over its seed corpus (tests/fuzz/corpus-table) and the driver's
# deterministic mutation loop. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_table
corpus=$srcdir/tests/fuzz/corpus-table

if [ ! -x "$prog" ]; then
	echo "run-fuzz-table.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-table.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
