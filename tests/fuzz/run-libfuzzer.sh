#!/bin/sh
# run-libfuzzer.sh - builds the sweep fuzz target with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer and runs it.
#
#   tests/fuzz/run-libfuzzer.sh [SECONDS] [libFuzzer options...]
#
# Run from the top source or build directory (make fuzz does). Environment:
# CC (default clang), srcdir (default .), FUZZ_OUT (build and work directory,
# default tests/fuzz/libfuzzer). The seed corpus is copied into
# $FUZZ_OUT/corpus, which keeps what libFuzzer finds between runs; crashes
# land in $FUZZ_OUT as crash-*. tests/fuzz/sweep.dict is the dictionary.
# Exit status is libFuzzer's.
set -e
srcdir=${srcdir:-.}
CC=${CC:-clang}
out=${FUZZ_OUT:-tests/fuzz/libfuzzer}
secs=${1:-60}
[ $# -gt 0 ] && shift

mkdir -p "$out/corpus"
ctx=$srcdir/policies/context.c
if [ ! -f "$ctx" ]; then
	echo "run-libfuzzer.sh: $ctx missing" >&2
	exit 2
fi
$CC -g -O1 -std=c11 -D_GNU_SOURCE -ffp-contract=off \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$srcdir" "$srcdir/common/sweep.c" "$ctx" "$srcdir/tests/fuzz/fuzz_sweep.c" \
	-lm -o "$out/fuzz_sweep"
cp "$srcdir"/tests/fuzz/corpus/* "$out/corpus/"
dict=$(cd "$srcdir/tests/fuzz" && pwd)/sweep.dict
cd "$out"
exec ./fuzz_sweep -max_total_time="$secs" -max_len=4096 -timeout=10 \
	-dict="$dict" "$@" corpus
