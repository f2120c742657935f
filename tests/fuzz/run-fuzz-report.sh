#!/bin/sh
# run-fuzz-report.sh - automake test: runs the report fuzz target's standalone
# driver (tests/fuzz/fuzz_report, built from fuzz_report.c and driver.c) over
# the seed corpus and a deterministic mutation loop. Honours $srcdir and
# $builddir (default: the current directory); FUZZ_ITERATIONS and FUZZ_SEED
# pass through to the driver. Exit status is the driver's.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_report
corpus=$srcdir/tests/fuzz/corpus-report

if [ ! -x "$prog" ]; then
	echo "run-fuzz-report.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-report.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
