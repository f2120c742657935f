#!/bin/sh
# fuzz.sh - every parser's fuzz target under libFuzzer (clang, ASan+UBSan)
# for at least RUNS executions each (default 10^6), one after the other,
# then one line per target: executions, seconds, crashes, and a last line
# "fuzz: N passed, N failed, 0 skipped" (one per target, for .ci/run's
# summary). Exit status 1 when any target failed to build, crashed, leaked
# or timed out, or ran fewer executions.
#
# usage: bench/fuzz.sh [RUNS] [TARGET...]
# Run from the top of the source tree. Targets default to every one that
# tests/fuzz/run-libfuzzer.sh knows. Each target keeps its corpus and any
# crash-* files under tests/fuzz/libfuzzer/TARGET (make clean-fuzz removes them).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1000000}
case $runs in
''|*[!0-9]*|0) echo "usage: bench/fuzz.sh [RUNS] [TARGET...]: RUNS is a positive number of executions, not '$runs'" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
targets=${*:-"sweep table spool state settings elf delta ledger siteconf stateyaml harvest report replay
	spank_args fabricgen jobfacts doctor"}
fail=0
npass=0
nfail=0
results=
i=0
ntargets=$(echo "$targets" | wc -w)
for t in $targets; do
	out=$top/tests/fuzz/libfuzzer/$t
	log=$out.log
	mkdir -p "$out"
	rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*
	start=$(date +%s.%N)
	i=$((i + 1))
	srcdir=$top FUZZ_TARGET=$t FUZZ_OUT=$out sh "$top/tests/fuzz/run-libfuzzer.sh" 86400 \
		-runs="$runs" -print_final_stats=1 >"$log" 2>&1 &
	pid=$!
	# on a terminal, one line rewritten each second: the target and the
	# executions libFuzzer last reported; nothing otherwise
	if [ -t 2 ]; then
		while kill -0 $pid 2>/dev/null; do
			n=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -n 1)
			printf '\r\033[Kfuzz: %s (%d of %d): %s of %s executions' "$t" $i $ntargets \
				"${n:-0}" "$runs" >&2
			sleep 1
		done
		printf '\r\033[K' >&2
	fi
	wait $pid
	rc=$?
	end=$(date +%s.%N)
	done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	crashes=$(ls "$out" | grep -cE '^(crash|leak|timeout|oom)-')
	secs=$(echo "$end - $start" | bc)
	line=$(printf '%-10s %10s executions  %7.1f s  %s crashes  (rc %s)' "$t" "${done_runs:-0}" \
		"$secs" "$crashes" "$rc")
	echo "$line"
	results="$results$line
"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ] || [ "${done_runs:-0}" -lt "$runs" ]; then
		echo "  see $log" >&2
		fail=1
		nfail=$((nfail + 1))
	else
		npass=$((npass + 1))
	fi
done
echo "== $(echo "$targets" | wc -w) targets, at least $runs executions each: $([ $fail = 0 ] && echo "0 crashes" || echo FAILED)"
echo "fuzz: $npass passed, $nfail failed, 0 skipped"
exit $fail
