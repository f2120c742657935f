#!/bin/sh
# run-fuzz-spool.sh - automake test: runs the spool-reader fuzz target's
# standalone driver (tests/fuzz/fuzz_spool, built from fuzz_spool.c and
# driver.c) over its seed corpus (tests/fuzz/corpus-spool) and the driver's
# deterministic mutation loop. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_spool
corpus=$srcdir/tests/fuzz/corpus-spool

if [ ! -x "$prog" ]; then
	echo "run-fuzz-spool.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-spool.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
