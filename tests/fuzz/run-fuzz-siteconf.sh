#!/bin/sh
# run-fuzz-siteconf.sh - automake test: runs the siteconf fuzz target's standalone
# driver (tests/fuzz/fuzz_siteconf, built from fuzz_siteconf.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_siteconf
corpus=$srcdir/tests/fuzz/corpus-siteconf

if [ ! -x "$prog" ]; then
	echo "run-fuzz-siteconf.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-siteconf.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
