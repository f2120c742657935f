#!/bin/sh
# run-fuzz-doctor.sh - automake test: the fuzz target of what `nccl-bot
# doctor` parses (tests/fuzz/fuzz_doctor: plugstack.conf text, enroot and
# Apptainer bind lines, a version line, the loader's cache) over its seed
# corpus and the standalone driver's deterministic mutations. FUZZ_ITERATIONS and
# FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_doctor
corpus=$srcdir/tests/fuzz/corpus-doctor

if [ ! -x "$prog" ]; then
	echo "run-fuzz-doctor.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-doctor.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
