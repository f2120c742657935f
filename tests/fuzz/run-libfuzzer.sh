#!/bin/sh
# run-libfuzzer.sh - builds a fuzz target with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer and runs it.
#
#   tests/fuzz/run-libfuzzer.sh [SECONDS] [libFuzzer options...]
#
# Run from the top source or build directory (make fuzz does). Environment:
# FUZZ_TARGET (sweep, table, spool, state, settings, elf, delta, ledger, siteconf,
# stateyaml, harvest, report, replay, spank_args, fabricgen, jobfacts or
# doctor; default sweep), CC (default
# clang), srcdir (default .), FUZZ_OUT (build and work directory, default
# tests/fuzz/libfuzzer/TARGET). The target's seed corpus is copied into
# $FUZZ_OUT/corpus, which keeps what libFuzzer finds between runs; crashes
# land in $FUZZ_OUT as crash-*. The sweep target uses tests/fuzz/sweep.dict.
# Exit status is libFuzzer's.
set -e
srcdir=${srcdir:-.}
CC=${CC:-clang}
target=${FUZZ_TARGET:-sweep}
out=${FUZZ_OUT:-tests/fuzz/libfuzzer/$target}
secs=${1:-60}
maxlen=4096
libs=
[ $# -gt 0 ] && shift

p=$srcdir/policies
case $target in
sweep)	src="$srcdir/common/sweep.c $p/context.c"; corpus=corpus ;;
table)	src="$srcdir/common/table_decode.c $srcdir/common/table_encode.c $p/context.c"; corpus=corpus-table ;;
spool)	src="$srcdir/common/spool_codec.c $srcdir/common/spool_read.c $srcdir/common/readall.c $p/context.c"; corpus=corpus-spool ;;
state)	src="$srcdir/common/state.c $srcdir/common/readall.c $srcdir/common/spool_codec.c $srcdir/common/spool_read.c
		$p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-state ;;
settings)	src="$srcdir/common/settings.c $p/context.c"; corpus=corpus-settings ;;
delta)	src="$srcdir/common/delta.c $srcdir/common/state.c $srcdir/common/readall.c $srcdir/common/spool_codec.c
		$p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-delta ;;
elf)	src="$srcdir/learn/elfread.c"; corpus=corpus-elf; maxlen=16384 ;;
ledger)	src="$srcdir/learn/ledger.c $srcdir/learn/log.c $srcdir/common/state.c $srcdir/common/readall.c
		$srcdir/common/spool_codec.c $srcdir/common/writeall.c $srcdir/common/dirscan.c
		$p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-ledger ;;
siteconf|stateyaml)
	src="$srcdir/learn/yamlin.c $srcdir/learn/yamlout.c $srcdir/learn/siteconf.c $srcdir/learn/hostlist.c
		$srcdir/learn/stateyaml.c $srcdir/learn/log.c $srcdir/common/settings.c
		$srcdir/common/state.c $srcdir/common/readall.c $srcdir/common/spool_codec.c
		$srcdir/common/spool_read.c $p/context.c $p/kb.c $p/stats.c $p/policy.c $p/plan.c"
	corpus=corpus-$target; maxlen=16384; libs=-lyaml ;;
harvest)	src="$srcdir/learn/harvest.c $srcdir/learn/log.c $srcdir/common/delta.c $srcdir/common/state.c
		$srcdir/common/readall.c $srcdir/common/spool_codec.c $srcdir/common/spool_read.c
		$srcdir/common/dirscan.c $srcdir/common/writeall.c $srcdir/common/settings.c $p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-harvest; maxlen=8192 ;;
report)	src="$srcdir/learn/report.c $srcdir/learn/reportsvg.c $srcdir/learn/svg.c $srcdir/learn/log.c
		$srcdir/common/readall.c $srcdir/common/writeall.c $srcdir/common/dirscan.c
		$srcdir/common/spool_codec.c
		$p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-report ;;
replay)	src="$srcdir/replay/dataset.c $srcdir/replay/replay.c $srcdir/common/sweep.c
		$srcdir/sim/sim.c $srcdir/sim/sim_auto.c $srcdir/sim/sim_model.c $srcdir/sim/sim_calib.c
		$srcdir/sim/sim_family.c $p/context.c $p/kb.c $p/stats.c $p/policy.c $p/plan.c"
	corpus=corpus-replay; libs=-lpthread ;;
spank_args|doctor)
	# the plugin's arguments and the decision (spank/args.c, decide.c,
	# fabricmap.c, submit.c) and what they reach in learn/ (the site
	# configuration's map through libyaml), common/ and policies/; doctor
	# adds its own file and the spool directory checks
	src="$srcdir/spank/args.c $srcdir/spank/decide.c $srcdir/spank/childread.c $srcdir/spank/fabricmap.c $srcdir/spank/submit.c
		$srcdir/learn/siteconf.c $srcdir/learn/yamlin.c $srcdir/learn/hostlist.c $srcdir/learn/log.c $srcdir/learn/stepenv.c $srcdir/learn/compile.c $srcdir/learn/store.c
		$srcdir/learn/ranklib.c $srcdir/learn/elfread.c $srcdir/learn/crash.c $srcdir/learn/fabricdir.c
		$srcdir/learn/ledger.c $srcdir/learn/lock.c $srcdir/learn/merge.c $srcdir/common/settings.c
		$srcdir/common/state.c $srcdir/common/readall.c $srcdir/common/writeall.c
		$srcdir/common/dirscan.c $srcdir/common/delta.c $srcdir/common/table_encode.c
		$srcdir/common/table_decode.c $srcdir/common/spool_codec.c $srcdir/common/spool_read.c
		$p/context.c $p/kb.c $p/stats.c $p/policy.c $p/plan.c"
	corpus=corpus-spank-args; libs=-lyaml
	if [ "$target" = doctor ]; then
		src="$src $srcdir/spank/doctor.c $srcdir/spank/spooldir.c"
		corpus=corpus-doctor
	fi ;;
fabricgen)	src="$srcdir/spank/fabricgen.c $srcdir/learn/hostlist.c $srcdir/learn/log.c $srcdir/common/state.c
		$srcdir/common/readall.c $srcdir/common/spool_codec.c $p/context.c $p/kb.c $p/stats.c"
	corpus=corpus-fabricgen ;;
jobfacts)	src="$srcdir/spank/jobfacts.c $srcdir/learn/log.c $srcdir/common/readall.c
		$srcdir/common/writeall.c"
	corpus=corpus-jobfacts ;;
*)	echo "run-libfuzzer.sh: FUZZ_TARGET '$target': want sweep, table, spool, state, settings, elf," \
		"delta, ledger, siteconf, stateyaml, harvest, report, replay, spank_args, fabricgen," \
		"jobfacts or doctor" >&2
	exit 2 ;;
esac
for f in $src; do
	if [ ! -f "$f" ]; then
		echo "run-libfuzzer.sh: $f missing" >&2
		exit 2
	fi
done
mkdir -p "$out/corpus"
# shellcheck disable=SC2086
$CC -g -O1 -std=c11 -D_GNU_SOURCE -ffp-contract=off \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$srcdir" $src "$srcdir/tests/fuzz/fuzz_$target.c" $libs -lm -o "$out/fuzz_$target"
cp "$srcdir/tests/fuzz/$corpus"/* "$out/corpus/"
dict=
if [ "$target" = sweep ]; then
	dict=-dict=$(cd "$srcdir/tests/fuzz" && pwd)/sweep.dict
fi
cd "$out"
# shellcheck disable=SC2086
exec "./fuzz_$target" -max_total_time="$secs" -max_len="$maxlen" -timeout=10 $dict "$@" corpus
