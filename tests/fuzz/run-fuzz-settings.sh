#!/bin/sh
# run-fuzz-settings.sh - automake test: the settings grammar's fuzz target
# (tests/fuzz/fuzz_settings) over its seed corpus and the standalone
# driver's deterministic mutations. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_settings
corpus=$srcdir/tests/fuzz/corpus-settings

if [ ! -x "$prog" ]; then
	echo "run-fuzz-settings.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
exec "$prog" "$corpus"
