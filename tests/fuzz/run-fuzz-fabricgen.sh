#!/bin/sh
# run-fuzz-fabricgen.sh - automake test: the fabric generator's readers'
# fuzz target (tests/fuzz/fuzz_fabricgen: topology.conf, slurm.conf, host
# lists) over its seed corpus and the standalone driver's deterministic
# mutations. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_fabricgen
corpus=$srcdir/tests/fuzz/corpus-fabricgen

if [ ! -x "$prog" ]; then
	echo "run-fuzz-fabricgen.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
exec "$prog" "$corpus"
