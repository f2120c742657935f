#!/bin/sh
# run-fuzz-elf.sh - automake test: the ELF reader's fuzz target
# (tests/fuzz/fuzz_elf, the rank library check's learn/elfread.c) over its seed
# corpus (tests/fuzz/make-corpus-elf.sh made it) and the standalone driver's
# deterministic mutations. FUZZ_ITERATIONS and FUZZ_SEED pass through.
srcdir=${srcdir:-.}
builddir=${builddir:-.}
prog=$builddir/tests/fuzz/fuzz_elf
corpus=$srcdir/tests/fuzz/corpus-elf

if [ ! -x "$prog" ]; then
	echo "run-fuzz-elf.sh: $prog not built (make check builds it)" >&2
	exit 99
fi
if [ ! -d "$corpus" ]; then
	echo "run-fuzz-elf.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$prog" "$corpus"
