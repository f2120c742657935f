#!/bin/sh
# tests/summarize.sh BUILD_DIR LABEL - count test cases from an automake
# parallel-tests run: Check suites report "Checks: N, Failures: F, Errors: E",
# script tests may print "N passed, N failed[, N skipped]"; any other test
# counts as one case by its .trs result. Prints "LABEL: P passed, F failed, S skipped".
set -eu
dir=$1
label=$2
p=0 f=0 s=0
for trs in $(find "$dir" -name '*.trs' | sort); do
	log=${trs%.trs}.log
	res=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" 2>/dev/null | tail -n 1 || true)
	# a script may run several suites, each ending with its own line: add them
	plain=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" 2>/dev/null || true)
	tp=0 tf=0 ts=0
	if [ -n "$line" ]; then
		n=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
		fl=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
		er=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
		tp=$((n - fl - er)); tf=$((fl + er))
	elif [ -n "$plain" ]; then
		while IFS= read -r l; do
			tp=$((tp + $(echo "$l" | sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed.*/\2/')))
			tf=$((tf + $(echo "$l" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
			case $l in *skipped*) ts=$((ts + $(echo "$l" | sed -E 's/.* ([0-9]+) skipped.*/\1/'))) ;; esac
		done <<EOF2
$plain
EOF2
	else
		case $res in PASS) tp=1 ;; SKIP) ts=1 ;; esac
	fi
	# A test that failed or crashed counts as a failure even if its own
	# counts said otherwise.
	case $res in PASS | SKIP) ;; *) [ "$tf" -gt 0 ] || tf=1 ;; esac
	p=$((p + tp)); f=$((f + tf)); s=$((s + ts))
done
echo "$label: $p passed, $f failed, $s skipped"
