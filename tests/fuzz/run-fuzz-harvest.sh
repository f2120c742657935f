#!/bin/sh
# run-fuzz-harvest.sh - automake test: runs the harvest stream's fuzz target
# (tests/fuzz/fuzz_harvest, learn/harvest.c's bot_harvest_collect, built
# from fuzz_harvest.c and driver.c) over its seed corpus
# (tests/fuzz/corpus-harvest, made by make-corpus-harvest.sh) and the
# driver's deterministic mutation loop. FUZZ_ITERATIONS and FUZZ_SEED pass
# through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_harvest
corpus=$srcdir/tests/fuzz/corpus-harvest

if [ ! -x "$prog" ]; then
	echo "run-fuzz-harvest.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-harvest.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
