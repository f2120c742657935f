#!/bin/sh
# test_tuner_noavx2.sh - test_tuner against the rank library built without
# the AVX2 scan (tuner/libnccl-tuner-bot-noavx2.so, -DBOT_TUNER_NO_AVX2): the
# 4-lane dynamic decision that CPUs without AVX2 and aarch64 run must decide
# exactly as the 8-lane one, which test_tuner checks on AVX2 machines.
so=${builddir:-.}/tuner/libnccl-tuner-bot-noavx2.so
if [ ! -f "$so" ]; then
	echo "test_tuner_noavx2.sh: $so not built" >&2
	exit 99
fi
BOT_TUNER_SO=$so exec ${builddir:-.}/tests/unit/test_tuner
