#!/bin/sh
# tests/cli/test_report.sh - the user's report outside Slurm (formats.md
# section 17): `nccl-bot harvest --report-dir` writes the node's part (0700
# directory, 0600 file, even when no spool file was valid), `nccl-bot report
# DIR` merges two nodes' parts of a step and two steps of a job, --json,
# JOBID found through ./nccl-bot-JOBID, NCCL_BOT_REPORT_DIR and
# --plugstack's report_dir=, a part that fails to parse named and skipped,
# and the usage errors.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
spool=$top_srcdir/tests/fuzz/corpus-spool
corpus=$top_srcdir/tests/fuzz/corpus-report
bot=$(cd "$(dirname "${NCCL_BOT:-./nccl-bot}")" && pwd)/$(basename "${NCCL_BOT:-./nccl-bot}")
export NCCL_BOT_CONFIG=none
unset NCCL_BOT_REPORT_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# expect NAME WANT_RC GREP_PATTERN -- CMD...
expect() {
	tname=$1 want=$2 pat=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$tname: exit $got, want $want"; sed "s/^/    /" "$tmp/out" | head -n 12; return
	fi
	if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
		bad "$tname: output lacks /$pat/"; sed "s/^/    /" "$tmp/out" | head -n 12; return
	fi
	ok "$tname"
}

mkdir -p "$tmp/sp" "$tmp/ob" "$tmp/ob2"
cp "$spool/valid-mixed" "$tmp/sp/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/sp/nb-a-2.spool"
cp "$spool/bad-crc" "$tmp/sp/nb-a-3.spool"

expect "harvest --help names --report-dir" 0 "--report-dir DIR" -- "$bot" harvest --help
expect "report --help" 0 "JOBID\|DIR" -- "$bot" report --help
expect "report in the command list" 0 "report" -- "$bot" --help
expect "report needs one argument" 2 "usage" -- "$bot" report
expect "report unknown option" 2 "usage" -- "$bot" report --frob x

expect "harvest --report-dir writes the node's part" 0 "report part $tmp/rep/99/99.0.n1.part" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 99 --node n1 --nodes 2 \
	--report-dir "$tmp/rep/99" "$tmp/sp"
expect "  ... the directory 0700, the part 0600" 0 "^700 600$" -- \
	sh -c "echo \$(stat -c %a '$tmp/rep/99') \$(stat -c %a '$tmp/rep/99/99.0.n1.part')"
expect "  ... it names the files read and rejected, the fabric" 0 "" -- \
	sh -c "grep -qx 'files 2 1' '$tmp/rep/99/99.0.n1.part' && grep -qx 'fabric f' '$tmp/rep/99/99.0.n1.part'"
expect "a second node of the step" 0 "report part" -- \
	"$bot" harvest --outbox "$tmp/ob2" --fabric f --job 99 --node n2 --nodes 2 \
	--report-dir "$tmp/rep/99" "$tmp/sp/nb-a-1.spool"
expect "a second step" 0 "report part" -- \
	"$bot" harvest --outbox "$tmp/ob2" --fabric f --job 99 --step 1 --node n1 --nodes 2 \
	--report-dir "$tmp/rep/99" "$tmp/sp/nb-a-2.spool"
expect "report DIR: the step's two parts merged" 0 "step 99\.0: 2 part\(s\) \(n1 n2\)" -- \
	"$bot" report "$tmp/rep/99"
expect "  ... per context: AUTO's arm, ours, the best known, loss, saved and lost" 0 \
	"AUTO ring/simple, ours ring/simple, best known ring/simple" -- "$bot" report "$tmp/rep/99"
expect "  ... the second step, and the job's total over both" 0 "job total: " -- \
	sh -c "'$bot' report '$tmp/rep/99' | grep -q 'step 99.1: 1 part' && '$bot' report '$tmp/rep/99'"
expect "report --json" 0 '^\{"dir":.*"steps":\[\{"job":"99","step":"0","nodes":"n1 n2","parts":2' -- \
	"$bot" report --json "$tmp/rep/99"
if command -v python3 >/dev/null 2>&1; then
	expect "  ... is JSON" 0 "" -- sh -c "'$bot' report --json '$tmp/rep/99' | python3 -m json.tool >/dev/null"
fi
expect "harvest with nothing valid still writes the part (exit 1: no delta)" 1 "report part" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 98 --node n1 \
	--report-dir "$tmp/rep/98" "$tmp/sp/nb-a-3.spool"
expect "  ... a step that measured nothing: 0 contexts" 0 "^end 0$" -- cat "$tmp/rep/98/98.0.n1.part"

# JOBID: ./nccl-bot-JOBID, $NCCL_BOT_REPORT_DIR, --plugstack's report_dir=
mkdir -p "$tmp/cwd"
cp -r "$tmp/rep/99" "$tmp/cwd/nccl-bot-99"
expect "report JOBID finds ./nccl-bot-JOBID" 0 "step 99\.0: 2 part" -- \
	sh -c "cd '$tmp/cwd' && '$bot' report --plugstack /dev/null 99"
expect "report JOBID through NCCL_BOT_REPORT_DIR (%j)" 0 "step 99\.0: 2 part" -- \
	env NCCL_BOT_REPORT_DIR="$tmp/rep/%j" sh -c "cd / && '$bot' report --plugstack /dev/null 99"
echo "optional /x/spank_nccl_bot.so enable=opt-in report_dir=$tmp/rep/%j mode=on" >"$tmp/plugstack.conf"
expect "report JOBID through plugstack.conf's report_dir=" 0 "step 99\.0: 2 part" -- \
	sh -c "cd / && '$bot' report --plugstack '$tmp/plugstack.conf' 99"
expect "report JOBID not found: the places tried (exit 1)" 1 "no parts of job 97 in nccl-bot-97" -- \
	sh -c "cd / && '$bot' report --plugstack '$tmp/plugstack.conf' 97"

# a part that does not parse is named and skipped; one of another name too
cp "$corpus/bad-end.part" "$tmp/rep/99/99.0.n3.part"
cp "$tmp/rep/99/99.0.n1.part" "$tmp/rep/99/99.0.n4.part"
ln -s "$tmp/rep/99/99.0.n1.part" "$tmp/rep/99/99.0.n5.part"
expect "a bad part is named with its line, the others still merged" 0 "99\.0\.n3\.part:6: 'end' does not count" -- \
	"$bot" report "$tmp/rep/99"
expect "  ... a copied part whose content names another node" 0 "n4\.part: its job, step and node say 99\.0\.n1\.part" -- \
	"$bot" report "$tmp/rep/99"
expect "  ... a symbolic link" 0 "n5\.part: .*symbolic link" -- "$bot" report "$tmp/rep/99"
expect "  ... still two parts in step 99.0" 0 "step 99\.0: 2 part\(s\) \(n1 n2\)" -- "$bot" report "$tmp/rep/99"
expect "report of an empty directory (exit 1)" 1 "no parts in" -- "$bot" report "$tmp/ob"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
