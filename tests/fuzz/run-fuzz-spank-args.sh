#!/bin/sh
# run-fuzz-spank-args.sh - automake test: the plugstack.conf arguments' fuzz target
# (tests/fuzz/fuzz_spank_args) over its seed corpus and the standalone
# driver's deterministic mutations. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_spank_args
corpus=$srcdir/tests/fuzz/corpus-spank-args

if [ ! -x "$prog" ]; then
	echo "run-fuzz-spank-args.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
exec "$prog" "$corpus"
