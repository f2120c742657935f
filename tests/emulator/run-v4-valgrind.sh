#!/bin/sh
# run-v4-valgrind.sh - measuring jobs under valgrind, one per profiler ABI,
# above all NCCL 2.27's profiler v4 (`make check`); in a sanitizer build
# the same jobs against an ASan+UBSan-instrumented copy of the plugin.
#
# nccl-emu hands the plugin each profiler version's own descriptor layout in
# a heap block of exactly that version's size (v4: 104 bytes, one-byte type,
# the Coll's Group in parentObj, no coll.parentGroup; v5/v6: 112 bytes), so
# memcheck (or ASan) sees any read past the end. Each job measures
# (NCCL_BOT_SPOOL, a thompson policy, windows of 16 calls,
# NCCL_BOT_MEASURE_V4=1 for 2.27) and must show
#   a  no valgrind error in the parent or any rank process (invalid reads
#      and writes, uninitialised values that decide something, definite
#      leaks; nothing suppressed), or in a sanitizer build no ASan, LSan or
#      UBSan report from any process,
#   b  spool files in the spool directory that `nccl-bot spool show` reads,
#      holding samples, after Coll events were sent,
#   c  decisions IDENTICAL on every rank, as in every emulator run.
# Jobs: 2.27 one thread per rank (base) and a thread per comm (tpc: Coll
# and KernelCh events on different threads), 2.28 (v5) and 2.30 (v6).
# In an AddressSanitizer build (configure --enable-sanitizers; nccl-emu is
# instrumented) valgrind cannot run, and the real plugin is never
# instrumented (it must not depend on libasan), so the jobs run without
# valgrind against tuner/libnccl-tuner-bot-asan.so, the same sources built
# with the sanitizers for the checks only (tuner/Makefile.inc), with
# ASAN_OPTIONS detect_leaks=1:abort_on_error=1:halt_on_error=1 and
# UBSAN_OPTIONS halt_on_error=1 (added to what the caller set), each
# process's reports in its own log file.
# Run from the top build directory (automake does). Environment:
#   NCCL_BOT_SO   plugin to test [tuner/libnccl-tuner-bot.so; in a
#                 sanitizer build tuner/libnccl-tuner-bot-asan.so, which
#                 must be instrumented]
#   V4VG_CALLS    collectives per comm per job [4000]
#   V4VG_KEEP=1   keep the temporary directory (logs, spool files)
set -u
top=$(pwd)
emu=$top/tests/emulator/nccl-emu
bot=$top/nccl-bot
calls=${V4VG_CALLS:-4000}

for f in "$emu" "$bot"; do
	if [ ! -x "$f" ]; then
		echo "run-v4-valgrind.sh: $f not built" >&2
		exit 99
	fi
done
if nm -D "$emu" 2>/dev/null | grep -q '__asan_init'; then
	# sanitizer build: the instrumented copy of the plugin, no valgrind
	san=1
	so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot-asan.so}
	if [ ! -f "$so" ]; then
		echo "run-v4-valgrind.sh: $so not built (make check builds it in a sanitizer build)" >&2
		exit 99
	fi
	if ! nm -D "$so" 2>/dev/null | grep -q ' U __asan_init'; then
		echo "run-v4-valgrind.sh: $so is not ASan-instrumented" >&2
		exit 99
	fi
	echo "AddressSanitizer build: jobs under ASan+UBSan against $(basename "$so"), no valgrind"
else
	san=0
	so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot.so}
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "SKIP: valgrind not installed (scripts/setup installs it)"
		exit 77
	fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/v4vg.XXXXXX") || exit 99
[ "${V4VG_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
npass=0
nfail=0
ok() { npass=$((npass + 1)); echo "PASS $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL $*"; }

# job NAME RELEASE SCENARIO MEASURE_V4
job() {
	name=$1
	v4=$4
	dir=$tmp/$name
	mkdir -p "$dir/spool" "$dir/vg"
	set -- --suite consistency --scenario "$3" --policy thompson --no-table --nccl "$2" \
		--spool "$dir/spool" --calls-each "$calls" --timeout 300 --plugin "$so"
	if [ "$san" = 1 ]; then
		# a report aborts the process (a rank's abort is a CRASH in
		# nccl-emu); each process writes its ASan and LSan reports to
		# san/asan.PID (nccl-emu runs LeakSanitizer in each rank
		# process before its _exit); UBSan may ignore its log_path in
		# an ASan build and print to stderr, hence the output too
		mkdir -p "$dir/san"
		NCCL_BOT_MEASURE_V4=$v4 NCCL_BOT_WINDOW=16 \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=1:halt_on_error=1:log_path=$dir/san/asan" \
		UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1:log_path=$dir/san/ubsan" \
			"$emu" "$@" >"$dir/out" 2>&1
		rc=$?

		# a: no report in any log file, nor on the output
		pat='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: [A-Za-z]*Sanitizer'
		nrep=$(find "$dir/san" -type f | wc -l)
		nout=$(grep -cE "$pat" "$dir/out")
		if [ "$nrep" -eq 0 ] && [ "$nout" -eq 0 ]; then
			ok "$name/a-asan: no ASan, LSan or UBSan report from any process"
		else
			bad "$name/a-asan: sanitizer reports in $nrep process logs, $nout report lines in the output (rc $rc)"
			# the first report, with its stack and where the block came from
			first=$(find "$dir/san" -type f | sort | head -n 1)
			[ -n "$first" ] || first=$dir/out
			awk -v pat="$pat" '$0 ~ pat { p = 1 } p { print "    " $0; if (/^SUMMARY: / || ++n >= 40) exit }' "$first"
		fi
	else
		# children of fork() stay under valgrind, each with its own log; a
		# process with an error exits 99, which nccl-emu reports as CRASH
		NCCL_BOT_MEASURE_V4=$v4 NCCL_BOT_WINDOW=16 valgrind --error-exitcode=99 \
			--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
			--log-file="$dir/vg/vg.%p" "$emu" "$@" >"$dir/out" 2>&1
		rc=$?

		# a: every process (the parent and 8 rank processes) logged an error
		# summary, and it says 0
		nlog=$(find "$dir/vg" -name 'vg.*' | wc -l)
		nclean=$(grep -l 'ERROR SUMMARY: 0 errors' "$dir"/vg/vg.* 2>/dev/null | wc -l)
		if [ "$nlog" -ge 9 ] && [ "$nclean" -eq "$nlog" ]; then
			ok "$name/a-valgrind: 0 errors in $nlog processes"
		else
			bad "$name/a-valgrind: $((nlog - nclean)) of $nlog processes with errors (rc $rc)"
			# the first error, with its stack and where the block came from
			for l in "$dir"/vg/vg.*; do
				grep -q 'ERROR SUMMARY: 0 errors' "$l" && continue
				grep -m1 -B1 -A22 -E 'Invalid|uninitialised|definitely lost|Process terminating' \
					"$l" | sed 's/^/    /'
				break
			done
		fi
	fi

	# b: spool files that nccl-bot reads, with samples, from Coll events
	coll=$(sed -n 's/.* Coll ev \([0-9]*\),.*/\1/p' "$dir/out" | head -n 1)
	files=$(find "$dir/spool" -name '*.spool' | sort)
	nfiles=$(echo "$files" | grep -c . || true)
	samples=0
	bad_show=
	for f in $files; do
		if ! "$bot" spool show "$f" >"$dir/show" 2>&1; then
			bad_show="$bad_show $(basename "$f")"
			continue
		fi
		n=$(sed -n 's/^  \([0-9]*\) samples (.*/\1/p' "$dir/show" | head -n 1)
		samples=$((samples + ${n:-0}))
	done
	if [ "${coll:-0}" -gt 0 ] && [ "$nfiles" -gt 0 ] && [ "$samples" -gt 0 ] &&
	   [ -z "$bad_show" ]; then
		ok "$name/b-spool: $nfiles spool files, $samples samples from $coll Coll events"
	else
		bad "$name/b-spool: Coll events ${coll:-none}, $nfiles spool files, $samples samples${bad_show:+, unreadable:$bad_show}"
	fi

	# c: the emulator's own verdict (IDENTICAL on every rank)
	if [ "$rc" -eq 0 ] && grep -q '^PASS consistency/' "$dir/out"; then
		ok "$name/c-identical: $(sed -n 's/^PASS consistency\/[^:]*: \([^[]*\)\[.*/\1/p' "$dir/out" | head -n 1)"
	else
		bad "$name/c-identical: rc $rc"
		grep -E '^(FAIL|    !!)' "$dir/out" | head -n 8 | cut -c1-300
	fi
}

job v4-nccl-2.27-base 2.27 base 1
job v4-nccl-2.27-tpc 2.27 tpc 1
job v5-nccl-2.28-base 2.28 base ""
job v6-nccl-2.30-base 2.30 base ""

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
