#!/bin/sh
# run-fuzz-jobfacts.sh - automake test: the job's facts file's parser's
# fuzz target (tests/fuzz/fuzz_jobfacts) over its seed corpus and the
# standalone driver's deterministic mutations. FUZZ_ITERATIONS and
# FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_jobfacts
corpus=$srcdir/tests/fuzz/corpus-jobfacts

if [ ! -x "$prog" ]; then
	echo "run-fuzz-jobfacts.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
exec "$prog" "$corpus"
