#!/bin/sh
# spool-v2.sh - spool format v2 (doc/formats.md section 9): every rank
# process whose tuner loaded leaves a spool file with its process record,
# measuring or not, and the record names what ran. In `make check` (about
# 2 s): nccl-emu (8 rank processes, 4 comms each) against the built rank
# library on several NCCL releases, each job's files read back with
# `nccl-bot spool show`, then harvested with `nccl-bot harvest`.
#
#   n  one file per rank process (8), each with exactly the process line
#      expected: NCCL version as x.y.z, tuner and profiler ABI, 4 comms,
#      the policy, the flags
#   s  samples in the files of a measuring job; none in the others, whose
#      files hold the process record alone (64 + 160 + 8 bytes)
#   h  a measuring job's v2 files harvest into a delta (their samples, no
#      process record); a job that measured nothing writes none ("hold no
#      record"), and no file is skipped as a copy of another
# and once: a version 1 file (a fuzz seed) still reads.
#
# Jobs: NCCL 2.28 (tuner v5, profiler v5, no table, thompson, measuring);
# 2.30 with a generated step table (tuner v6, profiler v6, ucb1, measuring);
# 2.27 (tuner v4, profiler v4: measures nothing without NCCL_BOT_MEASURE_V4);
# 2.27 with NCCL_BOT_MEASURE_V4=1 (measures); 2.21 (tuner v2 pass-through,
# no profiler). NCCL_BOT_SO: the plugin; SPOOLV2_KEEP=1 keeps the directory.
set -u
srcdir=${srcdir:-.}
. "$(dirname "$0")/lib.sh"
emu_begin "${SPOOLV2_KEEP:-}"

# job NAME RELEASE POLICY TABLE(table|no-table) MEASURE_V4 MEASURES(1|0) 'PROCESS LINE'
job() {
	name=$1 rel=$2 pol=$3 tab=$4 v4=$5 meas=$6 want=$7
	dir=$tmp/$name
	mkdir -p "$dir/spool" "$dir/outbox"
	notable=
	[ "$tab" = no-table ] && notable=--no-table
	# shellcheck disable=SC2086
	NCCL_BOT_MEASURE_V4=$v4 "$emu" --suite consistency --scenario base --policy "$pol" \
		$notable --nccl "$rel" --spool "$dir/spool" --calls-each 3000 --timeout 120 \
		--plugin "$so" >"$dir/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || ! grep -q '^PASS consistency/' "$dir/out"; then
		bad "$name/run: nccl-emu rc $rc"
		grep -E '^(FAIL|    !!)' "$dir/out" | head -n 5 | cut -c1-300
		return
	fi

	# n: one file per rank process, each with the expected process line
	nfiles=$(find "$dir/spool" -name '*.spool' | wc -l)
	"$bot" spool show "$dir/spool" >"$dir/show" 2>"$dir/show.err"
	src=$?
	nwant=$(grep -cxF "  process: $want" "$dir/show")
	if [ "$src" -eq 0 ] && [ "$nfiles" -eq 8 ] && [ "$nwant" -eq 8 ]; then
		ok "$name/n-process: 8 files, each '$want'"
	else
		bad "$name/n-process: show rc $src, $nfiles files, $nwant with '$want'"
		grep 'process' "$dir/show" | sort | uniq -c | head -n 3
		head -n 3 "$dir/show.err"
	fi

	# s: samples where it measures; else the process record alone
	samples=$(awk '/^  [0-9]+ samples \(/ { n += $1 } END { print n + 0 }' "$dir/show")
	small=$(find "$dir/spool" -name '*.spool' -size 232c | wc -l)
	if [ "$meas" = 1 ] && [ "$samples" -gt 0 ]; then
		ok "$name/s-samples: $samples samples"
	elif [ "$meas" = 0 ] && [ "$samples" -eq 0 ] && [ "$small" -eq 8 ]; then
		ok "$name/s-no-samples: every file is the process record alone (232 bytes)"
	else
		bad "$name/s: $samples samples, $small files of 232 bytes (measures: $meas)"
	fi

	# h: the harvest takes the samples of v2 files, never the process record
	"$bot" harvest --outbox "$dir/outbox" --fabric f --nodes 8 "$dir/spool" \
		>"$dir/harvest" 2>&1
	hrc=$?
	ndelta=$(find "$dir/outbox" -name '*.nbd' | wc -l)
	if grep -q 'skipped\|: rejected: ' "$dir/harvest"; then
		bad "$name/h-harvest: a file was skipped as a copy, or rejected"
		head -n 3 "$dir/harvest"
	elif [ "$meas" = 1 ] && [ "$hrc" -eq 0 ] && [ "$ndelta" -eq 1 ]; then
		ok "$name/h-harvest: one delta from the 8 files"
	elif [ "$meas" = 0 ] && [ "$hrc" -eq 1 ] && [ "$ndelta" -eq 0 ] &&
	     grep -q 'the 8 spool file(s) read hold no record' "$dir/harvest"; then
		ok "$name/h-harvest: 8 files read, no record, no delta"
	else
		bad "$name/h-harvest: rc $hrc, $ndelta deltas (measures: $meas)"
		head -n 3 "$dir/harvest"
	fi
}

job v5-nccl-2.28 2.28 thompson no-table 0 1 \
	"NCCL 2.28.9, tuner v5, profiler v5, 4 comms, policy thompson, flags measured,prior"
job v6-nccl-2.30-table 2.30 ucb1 table 0 1 \
	"NCCL 2.30.7, tuner v6, profiler v6, 4 comms, policy ucb1, flags table,measured"
job v4-nccl-2.27 2.27 thompson no-table 0 0 \
	"NCCL 2.27.7, tuner v4, profiler v4, 4 comms, policy thompson, flags prior"
job v4-nccl-2.27-measure 2.27 thompson no-table 1 1 \
	"NCCL 2.27.7, tuner v4, profiler v4, 4 comms, policy thompson, flags measured,prior"
job v2-nccl-2.21 2.21 thompson no-table 0 0 \
	"NCCL 2.21.5, tuner v2, profiler none, 4 comms, policy auto, flags prior"

# a version 1 file still reads (no process record)
v1=$srcdir/tests/fuzz/corpus-spool/valid-mixed
if "$bot" spool show "$v1" >"$tmp/v1" 2>&1 && grep -q ': spool v1, ' "$tmp/v1" &&
   grep -q '^  process: no record (a version 1 file)$' "$tmp/v1" &&
   grep -q '^  4 samples (1 clean)' "$tmp/v1"; then
	ok "v1/read: a version 1 file reads, without a process record"
else
	bad "v1/read: $(head -n 2 "$tmp/v1")"
fi

emu_end
