#!/bin/sh
# tests/cli/test_report.sh - the user's report outside Slurm (formats.md
# section 17): `nccl-bot harvest --report-dir` writes the node's part (0700
# directory, 0600 file, even when no spool file was valid), `nccl-bot report
# DIR` merges two nodes' parts of a step and two steps of a job, --json,
# JOBID found through ./nccl-bot-JOBID, NCCL_BOT_REPORT_DIR and
# --plugstack's report_dir=, a part that fails to parse named and skipped,
# and the usage errors; an arm the step did not measure (AUTO's, once
# learning moved off it) from the fabric's state (--state, NCCL_BOT_STATE,
# plugstack.conf's state_dir=) before NCCL's cost model.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
spool=$top_srcdir/tests/fuzz/corpus-spool
corpus=$top_srcdir/tests/fuzz/corpus-report
bot=$(cd "$(dirname "${NCCL_BOT:-./nccl-bot}")" && pwd)/$(basename "${NCCL_BOT:-./nccl-bot}")
export NCCL_BOT_CONFIG=none
unset NCCL_BOT_REPORT_DIR NCCL_BOT_STATE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

mkdir -p "$tmp/sp" "$tmp/ob" "$tmp/ob2"
cp "$spool/valid-mixed" "$tmp/sp/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/sp/nb-a-2.spool"
cp "$spool/bad-crc" "$tmp/sp/nb-a-3.spool"

expect "harvest --help names --report-dir" 0 "--report-dir DIR" -- "$bot" harvest --help
expect "report --help" 0 "JOBID\|DIR" -- "$bot" report --help
expect "report in the command list" 0 "report" -- "$bot" --help
expect "report needs one argument" 2 "usage" -- "$bot" report
expect "report unknown option" 2 "usage" -- "$bot" report --frob x
# an empty --plugstack is a usage error naming it, as --svg '' and --state ''
# are (it was read as a missing file: "no report_dir=: : No such file")
expect "report --plugstack '': a usage error" 2 "report: --plugstack wants a file name" -- "$bot" report --plugstack "" 77
expect "report of a step id names the job id" 2 "77.0 is a step id: give the job id, 77" -- "$bot" report 77.0
expect "report of a het component names the leader" 2 "77\\+1 is a component of heterogeneous job 77: give the job id, 77" -- "$bot" report 77+1
expect "report of a het component's step names the leader" 2 "77\\+1\\.0 is a step of a component of heterogeneous job 77: give the job id, 77" -- "$bot" report 77+1.0
# an array task (squeue's A_T): its report is under its own job id (it said
# "no parts of job 134_1 in nccl-bot-134_1" until 2026-12-04)
expect "report of an array task says how to find its job id" 2 "134_1 is task 1 of array job 134: its report is under the task's own job id, which .squeue -h -j 134_1 -o %A" -- "$bot" report 134_1

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
expect "  ... expected ranks: the largest communicator where the tasks say fewer" 0 \
	"tuner loaded on 0 of 16 expected ranks" -- "$bot" report "$tmp/rep/99"
expect "  ... the same in --json's step" 0 '"ranks_loaded":0,"ranks_expected":16,' -- \
	"$bot" report --json "$tmp/rep/99"
expect "report --json" 0 '^\{"dir":.*"steps":\[\{"job":"99","step":"0","nodes":"n1 n2","parts":2' -- \
	"$bot" report --json "$tmp/rep/99"
if command -v python3 >/dev/null 2>&1; then
	expect "  ... is JSON" 0 "" -- sh -c "'$bot' report --json '$tmp/rep/99' | python3 -m json.tool >/dev/null"
fi
# A report directory that cannot be used: said plainly, the delta kept (exit 0)
: >"$tmp/notadir"; mkdir -m 700 "$tmp/ob3"
expect "harvest: an unusable --report-dir names 'no report part written', keeps the delta" 0 \
	"no report part written: .*notadir.*the delta does not depend on it" -- \
	"$bot" harvest --outbox "$tmp/ob3" --fabric f --job 97 --node n1 --nodes 2 \
	--report-dir "$tmp/notadir" "$tmp/sp/nb-a-1.spool"
expect "  ... the delta is there" 0 "" -- sh -c "ls '$tmp/ob3'/*.nbd >/dev/null"
expect "harvest with nothing valid still writes the part (exit 1: no delta)" 1 "report part" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 98 --node n1 \
	--report-dir "$tmp/rep/98" "$tmp/sp/nb-a-3.spool"
expect "  ... a step that measured nothing: 0 contexts" 0 "^end 0$" -- cat "$tmp/rep/98/98.0.n1.part"

# a spool file present twice (copied under another name): the delta skips
# the copy, so the part counts nothing of it (its samples and processes were
# counted twice until 2026-12-05), and the report says it skipped one
mkdir -p "$tmp/spdup" "$tmp/obdup"
cp "$spool/valid-v2-mixed" "$tmp/spdup/nb-a-1.spool"
cp "$spool/valid-v2-mixed" "$tmp/spdup/nb-a-2.spool"
expect "harvest: a copied spool file is skipped by the delta" 0 \
	"nb-a-2.spool: skipped: the same records as a file read before" -- \
	"$bot" harvest --outbox "$tmp/obdup" --fabric f --job 96 --node n1 --nodes 2 \
	--report-dir "$tmp/rep/96" "$tmp/spdup"
expect "  ... and by the part: one file read, one copy, its process and sample once" 0 "" -- \
	sh -c "grep -qx 'files 1 0 1' '$tmp/rep/96/96.0.n1.part' && grep -qx 'procs 1 1 1 0' '$tmp/rep/96/96.0.n1.part' && grep -qx 'arm ring/simple 1 101000 101000' '$tmp/rep/96/96.0.n1.part'"
expect "  ... a part in version 3 (files R J D is 3's; a reader of 1-2 names the version)" 0 "" -- \
	sh -c "head -n 1 '$tmp/rep/96/96.0.n1.part' | grep -qx 'nccl-bot-report-part 3'"
expect "  ... the report says it skipped the copy" 0 \
	"tuner loaded on 1 of 16 expected ranks .*spool files 1 read, 0 rejected.*\(1 spool file\(s\) skipped: the same records as a file read before" -- \
	sh -c "'$bot' report '$tmp/rep/96' | tr '\n' ' '"
expect "  ... and --json counts it" 0 '"files_read":1,"files_rejected":0,"files_duplicate":1,' -- \
	"$bot" report --json "$tmp/rep/96"

# a file the delta rejects for its records' nNodes (2, on a step of one
# node) is rejected in the part too: the part counted it read, with its
# samples and processes, until 2026-12-05
mkdir -p "$tmp/spnn" "$tmp/obnn"
cp "$spool/valid-v2-mixed" "$tmp/spnn/nb-a-1.spool"
expect "harvest: a file whose nNodes passes the step's is rejected (none valid: exit 1)" 1 \
	"nb-a-1.spool: rejected: record [0-9]+: nNodes 2 over the step's 1 node" -- \
	"$bot" harvest --outbox "$tmp/obnn" --fabric f --job 95 --node n1 --nodes 1 \
	--report-dir "$tmp/rep/95" "$tmp/spnn"
expect "  ... and the part says so: none read, one rejected, nothing of it counted" 0 "" -- \
	sh -c "grep -qx 'files 0 1' '$tmp/rep/95/95.0.n1.part' && grep -qx 'procs 0 0 0 0' '$tmp/rep/95/95.0.n1.part' && grep -qx 'end 0' '$tmp/rep/95/95.0.n1.part'"

# JOBID: ./nccl-bot-JOBID, $NCCL_BOT_REPORT_DIR, --plugstack's report_dir=
mkdir -p "$tmp/cwd"
cp -r "$tmp/rep/99" "$tmp/cwd/nccl-bot-99"
expect "report JOBID finds ./nccl-bot-JOBID" 0 "step 99\.0: 2 part" -- \
	sh -c "cd '$tmp/cwd' && '$bot' report --plugstack /dev/null 99"
expect "report JOBID through NCCL_BOT_REPORT_DIR (%j)" 0 "step 99\.0: 2 part" -- \
	env NCCL_BOT_REPORT_DIR="$tmp/rep/%j" sh -c "cd / && '$bot' report --plugstack /dev/null 99"
# an NCCL_BOT_REPORT_DIR that does not expand is said, naming the variable,
# as srun says it (it was passed over in silence: the places tried never
# named it)
expect "report JOBID: a refused NCCL_BOT_REPORT_DIR is said (exit 1)" 1 \
	"NCCL_BOT_REPORT_DIR: report directory $tmp/rep/%x: '%x' is not %j, %u or %%" -- \
	env NCCL_BOT_REPORT_DIR="$tmp/rep/%x" sh -c "cd / && '$bot' report --plugstack /dev/null 99"
echo "optional /x/spank_nccl_bot.so enable=opt-in report_dir=$tmp/rep/%j mode=on" >"$tmp/plugstack.conf"
expect "report JOBID through plugstack.conf's report_dir=" 0 "step 99\.0: 2 part" -- \
	sh -c "cd / && '$bot' report --plugstack '$tmp/plugstack.conf' 99"
# report_dir= found and tried: its directory listed, no "nor report_dir="
expect "report JOBID: report_dir='s directory tried, listed" 1 \
	"^nccl-bot: report: no parts of job 55 in nccl-bot-55, $tmp/rep/55$" -- \
	sh -c "cd / && '$bot' report --plugstack '$tmp/plugstack.conf' 55"
# a plugstack.conf that cannot be read is named with why (it read as if it
# had no report_dir= until 2026-12-04)
expect "report JOBID: a --plugstack that is not there, said" 1 \
	"no parts of job 99 in nccl-bot-99 \(and no report_dir=: $tmp/nope/plugstack.conf: No such file or directory\)" -- \
	sh -c "cd / && '$bot' report --plugstack '$tmp/nope/plugstack.conf' 99"
# SLURM_CONF=slurm.conf (relative, no directory): plugstack.conf beside it,
# in the current directory (it used to fall back to /etc/slurm)
mkdir -p "$tmp/etcrel"
cp "$tmp/plugstack.conf" "$tmp/etcrel/plugstack.conf"
expect "report JOBID: a relative SLURM_CONF's plugstack.conf, from here" 0 "step 99\.0: 2 part" -- \
	env SLURM_CONF=slurm.conf sh -c "cd '$tmp/etcrel' && '$bot' report 99"
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

# v2 (formats.md 17): parts of a heterogeneous job's components are the
# leader's step; parts of the same step with another token (a stale run)
# are warned about and shown apart; medians merge sample-weighted
mkdir -m 700 "$tmp/v2"
part() { # FILE JOB NODE TOKEN TREE_MED [RING_MED]
	{
		printf 'nccl-bot-report-part 2\njob %s\nstep 0\nnode %s\n' "$2" "$3"
		[ -n "$4" ] && printf 'token %s\n' "$4"
		printf 'policy ucb1\nctx allreduce 80 8 2 1000 ring/simple tree/simple\n'
		printf 'arm tree/simple 10 %s %s\n' "$(($5 - 1000))" "$5"
		[ -n "${6:-}" ] && printf 'arm ring/simple 10 %s %s\n' "$(($6 - 1000))" "$6"
		printf 'end 1\n'
	} >"$tmp/v2/$1"
}
part 5+0.0.n1.part 5+0 n1 00000000000000aa 120000 110000
part 5+1.0.n2.part 5+1 n2 00000000000000aa 100000
cp -rp "$tmp/v2" "$tmp/cwd/nccl-bot-5"
expect "report JOBID of a heterogeneous job: every component's parts (5+0, 5+1) in one step" 0 \
	"step 5\.0: 2 part\(s\) \(n1 n2\)" -- sh -c "cd '$tmp/cwd' && '$bot' report --plugstack /dev/null 5"
expect "  ... medians sample-weighted: tree 110 us against AUTO's 110 us, nothing saved (the minimum said 10 ms saved)" 0 \
	"tree/simple +20 samples, median 110\.0 us.*" -- sh -c "'$bot' report '$tmp/v2' | tr '\n' ' ' | grep -E 'saved 0( us| s|\.000 ms|\.0+ ?[mu]?s)?, lost 0' >/dev/null && '$bot' report '$tmp/v2'"
part 5.0.n3.part 5 n3 00000000000000bb 100000 110000
expect "a stale part of the same step (another token): warned, shown on its own" 0 \
	"step 5\.0 has parts of different runs" -- "$bot" report "$tmp/v2"
expect "  ... the step's own parts still merged apart" 0 "step 5\.0: 2 part\(s\) \(n1 n2\)" -- \
	"$bot" report "$tmp/v2"
rm -f "$tmp/v2/5.0.n3.part"

# a requeued job's earlier run left a part on a node the rerun did not use:
# shown, but the job's total counts the latest run (the highest restart
# count) alone (both runs' calls were added until 2026-12-04); runs of one
# restart count cannot be ordered and both still count
mkdir -m 700 "$tmp/rq"
rqpart() { # NODE TOKEN RESTART
	{
		printf 'nccl-bot-report-part 2\njob 7\nstep 0\nnode %s\nrestart %s\ntoken %s\n' "$1" "$3" "$2"
		printf 'policy ucb1\nctx allreduce 80 8 1 1000 ring/simple tree/simple\n'
		printf 'decided tree/simple 1000\narm ring/simple 10 90000 100000\narm tree/simple 10 40000 50000\nend 1\n'
	} >"$tmp/rq/7.0.$1.part"
}
rqpart n1 00000000000000aa 1
rqpart n3 00000000000000bb 0
expect "an earlier run's part: the job's total counts the latest run" 0 \
	"^  job total: 1000 calls decided of 1000, saved 50\.000 ms" -- "$bot" report --plugstack /dev/null "$tmp/rq"
expect "  ... the earlier run shown, and said not counted" 0 \
	"an earlier run of step 7\.0, restart 0 of 1: shown, not counted in the job's total" -- \
	"$bot" report --plugstack /dev/null "$tmp/rq"
expect "  ... the warning says which run counts" 0 "the job's total counts the latest run's" -- \
	"$bot" report --plugstack /dev/null "$tmp/rq"
expect "  ... --json marks the earlier run's step" 0 \
	'"token":"00000000000000aa".*"in_job_total":true\},\{[^{]*"token":"00000000000000bb".*"in_job_total":false\}\],"jobs".*"job":\{"totals":\{"calls":1000,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/rq"
rqpart n3 00000000000000bb 1
expect "  ... two runs of one restart count: both count, said" 0 \
	"runs of one restart count cannot be ordered" -- "$bot" report --plugstack /dev/null "$tmp/rq"
expect "  ... (2000 calls)" 0 "^  job total: 2000 calls decided of 2000" -- \
	"$bot" report --plugstack /dev/null "$tmp/rq"

# a job of a shadow step and a step that decided (formats.md 17, merging):
# the job's total keeps step 1's 1000 calls x (100 - 50) us saved, the
# shadow step's 1000 calls count as AUTO's (it said shadow, nothing saved,
# until 2026-12-04)
mkdir -m 700 "$tmp/mix"
for s in 0 1; do
	{
		printf 'nccl-bot-report-part 2\njob 61\nstep %s\nnode n1\n' $s
		[ $s = 0 ] && printf 'mode shadow\n'
		printf 'policy ucb1\nctx allreduce 80 8 1 1000 ring/simple tree/simple\n'
		printf 'decided tree/simple 1000\narm ring/simple 10 90000 100000\n'
		printf 'arm tree/simple 10 40000 50000\nend 1\n'
	} >"$tmp/mix/61.$s.n1.part"
done
expect "a shadow step and a step that decided: the job's total keeps what the step saved" 0 \
	"job total: 1000 calls decided of 2000, saved 50\.000 ms, lost 0 us, net 50\.000 ms saved" -- \
	"$bot" report --plugstack /dev/null "$tmp/mix"
expect "  ... the shadow step's own total still claims nothing" 0 \
	"step total \(shadow: NCCL's choice stood, nothing saved or lost\): 1000 calls" -- \
	"$bot" report --plugstack /dev/null "$tmp/mix"
expect "  ... --json's job totals too" 0 \
	'"job":\{"totals":\{"calls":2000,"calls_decided":1000,"saved":0\.05,"lost":0,"net":0\.05,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/mix"

# equal sums of different terms: 100 ns saved (101 - 1) and 100 ns lost
# (120 - 20) differ in their last bits; net is 0, said "saved", not "lost"
# with 1.3e-23 s ("lost 1.32e-17 us" on the summary line) until 2026-12-04;
# a context's own loss of 1600 calls on AUTO's arm is 0.0%, not -0.0%
mkdir -m 700 "$tmp/fp"
{
	printf 'nccl-bot-report-part 2\njob 62\nstep 0\nnode n1\npolicy ucb1\n'
	printf 'ctx allgather 82 8 4 1600 ring/ll128 -\ndecided - 1600\n'
	printf 'arm ring/ll128 240 83540 83983\n'
	printf 'ctx allreduce 80 8 1 1 ring/simple tree/simple\ndecided tree/simple 1\n'
	printf 'arm ring/simple 10 101 101\narm tree/simple 10 1 1\n'
	printf 'ctx allreduce 84 8 1 1 ring/simple tree/simple\ndecided tree/simple 1\n'
	printf 'arm ring/simple 10 20 20\narm tree/simple 10 120 120\nend 3\n'
} >"$tmp/fp/62.0.n1.part"
expect "saved and lost equal: net 0 saved, not lost by rounding" 0 \
	"step total: 2 calls decided of 1602, saved 0\.1 us, lost 0\.1 us, net 0 us saved vs AUTO" -- \
	"$bot" report --plugstack /dev/null "$tmp/fp"
# a context's 100 ns saved reads in us (it read "saved 0.000 ms" until
# 2026-12-05, as if nothing were saved); nothing is "0 us", as on srun's line
expect "  ... a time below 1 us in us, not 0.000 ms" 0 \
	"AUTO 0\.1 us, ours 0\.0 us; loss ours 0\.0%, AUTO 10000\.0%; saved 0\.1 us, lost 0 us" -- \
	"$bot" report --plugstack /dev/null "$tmp/fp"
expect "  ... --json's net is 0" 0 '"totals":\{[^}]*"saved":1e-07,"lost":1e-07,"net":0,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/fp"
# the picture writes times as the text does (bot_report_span): it wrote
# "0.0 us" for 100 ns and for none until 2026-12-05
expect "  ... --svg: the same times as the text" 0 "saved 0\.1 us, lost 0\.1 us, net 0 us saved vs AUTO" -- \
	sh -c "'$bot' report --plugstack /dev/null --svg '$tmp/fp.svg' '$tmp/fp' >/dev/null && cat '$tmp/fp.svg'"
expect "  ... AUTO's own arm: loss ours 0.0%, never -0.0%" 0 "AUTO 84\.0 us, ours 84\.0 us; loss ours 0\.0%," -- \
	"$bot" report --plugstack /dev/null "$tmp/fp"

# a context with samples but no calls (its summaries lost, or none written):
# no run loss to judge, so it is neither "lost >10%" nor "harmed", and the
# totals say how many were left out (it counted in both until 2026-12-05);
# the other context, with calls, still counts
mkdir -m 700 "$tmp/nc"
{
	printf 'nccl-bot-report-part 2\njob 63\nstep 0\nnode n1\npolicy ucb1\n'
	printf 'ctx allreduce 80 8 1 0 ring/simple tree/simple\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 120000\n'
	printf 'ctx allreduce 84 8 1 1000 ring/simple tree/simple\ndecided tree/simple 1000\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 130000\nend 2\n'
} >"$tmp/nc/63.0.n1.part"
expect "a context without calls is not judged lost >10% or harmed" 0 \
	"step total: 1000 calls decided of 1000, saved 0 us, lost 30\.000 ms, net 30\.000 ms lost vs AUTO; 1 contexts lost >10%, 1 harmed \(worse than AUTO by > 2 points\), 0 unknown, 1 without calls \(not judged\)$" -- \
	"$bot" report --plugstack /dev/null "$tmp/nc"
expect "  ... its line says so" 0 "ours 120\.0 us; loss ours 20\.0%, AUTO 0\.0%; saved 0 us, lost 0 us; no calls, not judged$" -- \
	"$bot" report --plugstack /dev/null "$tmp/nc"
expect "  ... --json's totals" 0 '"totals":\{[^}]*"over10":1,"harmed":1,"unknown":0,"no_calls":1,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/nc"
expect "  ... --json's context says it too" 0 '"context":"allreduce/1MiB\+0/n1/r8","calls":0,"auto":"ring/simple","chosen":"tree/simple","best":"ring/simple","arms":\[[^]]*\],"decided":\{\},"no_calls":true,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/nc"

# calls whose decided arm is unknown (a summary with 255 and no cost row:
# the tuner had no record of the context), 'decided ?': counted apart, not
# as left to AUTO (they were '-' until 2026-12-05, AUTO's calls at AUTO's
# latency, which pulled ours towards AUTO's: 'loss ours 16.7%' here)
mkdir -m 700 "$tmp/uk"
{
	printf 'nccl-bot-report-part 3\njob 65\nstep 0\nnode n1\npolicy ucb1\n'
	printf 'ctx allreduce 80 8 1 1000 ring/simple tree/simple\n'
	printf 'decided tree/simple 200\ndecided - 100\ndecided ? 700\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 140000\nend 1\n'
} >"$tmp/uk/65.0.n1.part"
expect "calls whose decided arm is unknown: counted apart, not as AUTO's" 0 \
	"step total: 200 calls decided of 1000 \(700 whose decided arm is unknown, not counted as AUTO's\), saved 0 us, lost 8\.000 ms" -- \
	"$bot" report --plugstack /dev/null "$tmp/uk"
expect "  ... the context names them; ours is the decided arms' (200 tree, 100 AUTO's)" 0 \
	"decided \? \(unknown, not counted as AUTO's\): 700 calls.*ours 126\.7 us; loss ours 26\.7%" -- \
	sh -c "'$bot' report --plugstack /dev/null '$tmp/uk' | tr '\n' ' '"
expect "  ... --json's totals" 0 '"totals":\{"calls":1000,"calls_decided":200,[^}]*"calls_unknown":700,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/uk"
expect "  ... and its context: calls per decided arm, judged (it had calls)" 0 \
	'"decided":\{"tree/simple":200,"-":100,"\?":700\},"no_calls":false,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/uk"
# at the 2^40 cap a context's calls are less than its '-' and '?' calls
# together: calls decided are the arms' (0 here), not calls less the two
# (which wrapped to 18446742974197923840)
mkdir -m 700 "$tmp/ukcap"
{
	printf 'nccl-bot-report-part 3\njob 66\nstep 0\nnode n1\npolicy ucb1\n'
	printf 'ctx allreduce 80 8 1 1099511627776 ring/simple -\n'
	printf 'decided - 1099511627776\ndecided ? 1099511627776\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 140000\nend 1\n'
} >"$tmp/ukcap/66.0.n1.part"
expect "  ... at the calls' cap, calls decided do not wrap" 0 \
	'"totals":\{"calls":1099511627776,"calls_decided":0,[^}]*"calls_unknown":1099511627776,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/ukcap"
# where most calls' decided arm is unknown, ours is unknown (formats.md 17),
# whatever the ctx line's arm: it said tree/simple, an arm 200 of 1000 calls
# decided, or none of them (a context whose calls are all '?')
mkdir -m 700 "$tmp/ukmost"
{
	printf 'nccl-bot-report-part 3\njob 67\nstep 0\nnode n1\npolicy ucb1\n'
	printf 'ctx allreduce 80 8 1 1000 ring/simple tree/simple\ndecided ? 1000\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 140000\n'
	printf 'ctx allreduce 84 8 1 1000 ring/simple tree/simple\n'
	printf 'decided tree/simple 200\ndecided - 100\ndecided ? 700\n'
	printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 110000 140000\nend 2\n'
} >"$tmp/ukmost/67.0.n1.part"
expect "  ... most calls unknown: ours unknown, not the ctx line's arm" 0 \
	'"context":"allreduce/1MiB\+0/n1/r8","calls":1000,"auto":"ring/simple","chosen":null,.*"context":"allreduce/2MiB\+0/n1/r8","calls":1000,"auto":"ring/simple","chosen":null,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/ukmost"
# a communicator over two nodes whose ranks knew its decided arm on one
# node and not on the other ('?', no record of the context there): one
# communicator's 100 calls, tree's, not 200 (100 tree + 100 '?')
mkdir -m 700 "$tmp/uknodes"
for n in 1 2; do
	if [ $n = 1 ]; then dec=tree/simple d=tree/simple; else dec=- d='?'; fi
	printf 'nccl-bot-report-part 3\njob 68\nstep 0\nnode n%s\nstep_nodes 2\npolicy ucb1\nctx allreduce 80 8 2 100 ring/simple %s\ndecided %s 100\narm ring/simple 10 90000 100000\narm tree/simple 10 110000 140000\nend 1\n' \
		$n $dec "$d" >"$tmp/uknodes/68.0.n$n.part"
done
expect "  ... a node's '?' calls of a communicator another node knew are not counted twice" 0 \
	"step total: 100 calls decided of 100, saved 0 us, lost 4\.000 ms" -- \
	"$bot" report --plugstack /dev/null "$tmp/uknodes"

# a part of one node: an 8-rank communicator (nnodes 1) and a 16-rank one
# (nnodes 2), the base of the two-jobs case below
mkdir -m 700 "$tmp/tp"
for n in n1; do
	{
		printf 'nccl-bot-report-part 2\njob 64\nstep 0\nnode %s\npolicy ucb1\n' $n
		printf 'ctx allreduce 80 8 1 1000 ring/simple tree/simple\ndecided tree/simple 1000\n'
		printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 40000 50000\n'
		printf 'ctx allreduce 80 16 2 500 ring/simple tree/simple\ndecided tree/simple 500\n'
		printf 'arm ring/simple 10 90000 100000\narm tree/simple 10 40000 50000\nend 2\n'
	} >"$tmp/tp/64.0.$n.part"
done

# a directory of two jobs: --json's "jobs" has each job's totals ("job"
# alone, the last job's, was all it said until 2026-12-04)
mkdir -m 700 "$tmp/two"
cp -p "$tmp/tp/64.0.n1.part" "$tmp/two/"
sed 's/^job 64$/job 66/; s/ 1000 ring/ 3000 ring/; s/tree.simple 1000$/tree\/simple 3000/' "$tmp/tp/64.0.n1.part" >"$tmp/two/66.0.n1.part"
chmod 600 "$tmp/two"/*.part
expect "--json of a directory of two jobs: each job's totals in \"jobs\"" 0 \
	'"jobs":\[\{"job":"64","totals":\{"calls":1500,"calls_decided":1500,"saved":0\.075,[^]]*\},\{"job":"66","totals":\{"calls":3500,"calls_decided":3500,"saved":0\.175,[^]]*\}\],"job":\{"totals":\{"calls":3500,' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/two"
if command -v python3 >/dev/null 2>&1; then
	expect "  ... is JSON" 0 "" -- sh -c "'$bot' report --json --plugstack /dev/null '$tmp/two' | python3 -m json.tool >/dev/null"
fi
# the text names each job's total there (both said "job total:")
expect "  ... the text names each job's total" 0 \
	"job 64 total: 1500 calls decided of 1500.* job 66 total: 3500 calls decided of 3500" -- \
	sh -c "'$bot' report --plugstack /dev/null '$tmp/two' | tr '\n' ' '"
expect "  ... one job's stays \"job total:\"" 0 "^  job total: 1500 calls" -- \
	"$bot" report --plugstack /dev/null "$tmp/tp"
# a heterogeneous component's total is named by its leader, as "jobs" names it
sed 's/^job 64$/job 67+1/' "$tmp/tp/64.0.n1.part" >"$tmp/two/67+1.0.n1.part"
chmod 600 "$tmp/two/67+1.0.n1.part"
expect "  ... a component's job total named by its leader (67, not 67+1)" 0 "^  job 67 total: 1500 calls" -- \
	"$bot" report --plugstack /dev/null "$tmp/two"
rm -f "$tmp/two/67+1.0.n1.part"

# an arm the step did not measure (formats.md 17, "Latency of an arm"):
# the step ran only our ring/simple (101 us); NCCL's row puts AUTO's
# tree/ll at 100/105 of it (96 us): lost. The fabric's state (state add of
# a spool fixture, ring/simple 101 us, plus tree/ll measured at 149 us
# through export/import) says AUTO's arm is slower: saved.
mkdir -m 700 "$tmp/est" "$tmp/st" "$tmp/st2"
{
	printf 'nccl-bot-report-part 2\njob 60\nstep 0\nnode n1\nfabric f\npolicy ucb1\n'
	printf 'ctx allreduce 88 16 2 1000 tree/ll ring/simple\n'
	printf 'cost 100 101 102 103 104 105 -1 -1 -1 -1 -1 -1 112 113 114 -1 -1 -1 118 119 120\n'
	printf 'decided ring/simple 1000\narm ring/simple 10 100000 101000\nend 1\n'
} >"$tmp/est/60.0.n1.part"
"$bot" state add --state "$tmp/st" --fabric f "$spool/valid-mixed" >/dev/null 2>&1
"$bot" state export --state "$tmp/st" --fabric f -o "$tmp/st.yaml" >/dev/null 2>&1
sed 's|^    ring/simple: {n: 1, bins: \[\[1064, 1\]\]}$|    tree/ll: {n: 1, bins: [[1100, 1]]}\n&|' \
	"$tmp/st.yaml" >"$tmp/st2.yaml"
expect "a state with AUTO's arm measured (state add, export, import)" 0 "" -- \
	"$bot" state import --state "$tmp/st2" --fabric f "$tmp/st2.yaml"
expect "  ... it holds tree/ll and ring/simple" 0 "tree/ll: \{samples: 1" -- \
	"$bot" state show --state "$tmp/st2" --fabric f
expect "no state: AUTO's arm from NCCL's cost model, lost and harmed" 0 \
	"AUTO 96\.2 us \(estimated: NCCL's cost model\), ours 101\.0 us.*lost 4\.810 ms.*harmed" -- \
	"$bot" report --plugstack /dev/null "$tmp/est"
# a cost at or above 3.6e9 us (NCCL's cap; the spool stores it as -1) is
# refused naming the bound: the message said "-1 or a finite number >= 0",
# which 3.6e9 is (until 2026-12-05)
mkdir -m 700 "$tmp/capcost"
sed 's/^cost 100 /cost 3.6e9 /' "$tmp/est/60.0.n1.part" >"$tmp/capcost/60.0.n1.part"
expect "a cost at NCCL's cap (3.6e9 us) is refused naming the bound" 1 \
	"60\.0\.n1\.part:8: a cost is -1 \(unsupported\) or a number of us from 0 to below 3\.6e9" -- \
	"$bot" report --plugstack /dev/null "$tmp/capcost"
# ours was measured: no "(estimated)" on its latency (it had one whenever AUTO's
# was estimated); the best known arm, AUTO's from the cost model, says so
expect "  ... ours measured, not marked estimated; the losses are" 0 \
	"ours 101\.0 us; loss ours [0-9.]+%, AUTO 0\.0% \(estimated\);" -- \
	"$bot" report --plugstack /dev/null "$tmp/est"
expect "  ... a best known arm from the cost model says so" 0 \
	"best known [a-z_]+/[a-z0-9]+ \(estimated: NCCL's cost model\)$" -- \
	"$bot" report --plugstack /dev/null "$tmp/est"
expect "--state DIR: AUTO's arm from the fabric's state, saved, not harmed" 0 \
	"AUTO 14[89]\.[0-9] us \(estimated: the fabric's state\), ours 101\.0 us; loss ours 0\.0%, AUTO [0-9.]+% \(estimated\); .*lost 0 us$" -- \
	"$bot" report --plugstack /dev/null --state "$tmp/st2" "$tmp/est"
expect "  ... the step's total: est. saved, 0 harmed" 0 "step total: .*est\. saved 4[78]\.[0-9]+ ms, lost 0 us.* 0 harmed" -- \
	"$bot" report --plugstack /dev/null --state "$tmp/st2" "$tmp/est"
expect "  ... --json names the source of each latency" 0 \
	'"t_auto_source":"state","t_ours_source":"step","best_source":"step".*"harmed":false' -- \
	"$bot" report --json --plugstack /dev/null --state "$tmp/st2" "$tmp/est"
expect "  ... and without it, the cost model's" 0 '"t_auto_source":"cost".*"harmed":true' -- \
	"$bot" report --json --plugstack /dev/null "$tmp/est"
expect "  ... --svg: the picture's note names where AUTO's latency came from" 0 \
	"latency where the step did not run its arm: the fabric.{1,6}s state in 1 context\(s\), NCCL.{1,6}s cost model in 0" -- \
	sh -c "'$bot' report --plugstack /dev/null --state '$tmp/st2' --svg '$tmp/est.svg' '$tmp/est' >/dev/null && cat '$tmp/est.svg'"
# a picture that cannot be written: named by its option and file, said not
# written, exit 1; the text report (the main output) still printed, as
# compact's summary is when its metrics textfile fails
expect "--svg in a missing directory: exit 1, the option and the directory named" 1 \
	"^nccl-bot: report: --svg $tmp/nodir/x\.svg: directory $tmp/nodir does not exist; the picture was not written$" -- \
	"$bot" report --plugstack /dev/null --state "$tmp/st2" --svg "$tmp/nodir/x.svg" "$tmp/est"
grep -q "step total:" "$tmp/out" && ok "  ... the text report still printed" ||
	bad "  ... the text report still printed"
expect "NCCL_BOT_STATE finds the state" 0 "estimated: the fabric's state" -- \
	env NCCL_BOT_STATE="$tmp/st2" "$bot" report --plugstack /dev/null "$tmp/est"
echo "optional /x/spank_nccl_bot.so enable=opt-in state_dir=$tmp/st2 mode=on" >"$tmp/plugstack-st.conf"
expect "plugstack.conf's state_dir= finds the state" 0 "estimated: the fabric's state" -- \
	"$bot" report --plugstack "$tmp/plugstack-st.conf" "$tmp/est"
expect "a state without AUTO's arm: the cost model still" 0 "estimated: NCCL's cost model" -- \
	"$bot" report --plugstack /dev/null --state "$tmp/st" "$tmp/est"
printf 'garbage\n' >"$tmp/st2/f/current.bad" && mv "$tmp/st2/f/current" "$tmp/st2/f/current.ok" &&
	mv "$tmp/st2/f/current.bad" "$tmp/st2/f/current"
expect "a state that cannot be read: said, the cost model, exit 0" 0 \
	"warning: .*fabric f's arms not measured come from NCCL's cost model" -- \
	"$bot" report --plugstack /dev/null --state "$tmp/st2" "$tmp/est"
expect "--state without a directory (exit 2)" 2 "--state wants a directory" -- \
	"$bot" report --state "" "$tmp/est"

# a heterogeneous job's component: its part is the leader's J+K (it was
# J_K, the array task's form, until 2026-12-04), so `report J` finds it
expect "harvest --job 900+1: the part is 900+1's" 0 "report part $tmp/het/nccl-bot-900/900\+1\.0\.n1\.part" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 900+1 --node n1 --nodes 2 \
	--report-dir "$tmp/het/nccl-bot-900" "$tmp/sp/nb-a-1.spool"
expect "  ... report 900 finds it, a component's step" 0 "^step 900\+1\.0: 1 part" -- \
	sh -c "cd '$tmp/het' && '$bot' report --plugstack /dev/null 900"
# the part's bounds at the harvest: --nodes (step_nodes 1..65536) and the
# extern and interactive steps (a part's step is a number or batch); each
# wrote a part the reader refused until 2026-12-04
expect "harvest --nodes 65537: refused" 2 "^nccl-bot: harvest: --nodes '65537': .*from 1 to 65536" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 95 --node n1 --nodes 65537 "$tmp/sp/nb-a-1.spool"
for st in extern interactive; do
	expect "harvest --step $st --report-dir: refused" 2 "^nccl-bot: harvest: --report-dir: the $st step has no report part" -- \
		"$bot" harvest --outbox "$tmp/ob" --fabric f --job 95 --node n1 --step $st --report-dir "$tmp/x$st" \
		"$tmp/sp/nb-a-1.spool"
done
[ ! -e "$tmp/xextern" ] && ok "  ... nothing written" || bad "  ... nothing written"
# a directory of more than 4096 parts: the first 4096 by name read, the rest
# named and left out (the whole report was refused until 2026-12-04)
mkdir -m 700 "$tmp/many"
i=1
while [ $i -le 4097 ]; do
	printf 'nccl-bot-report-part 2\njob 7\nstep 0\nnode n%s\nend 0\n' $i >"$tmp/many/7.0.n$i.part"
	i=$((i + 1))
done
chmod 600 "$tmp/many"/*.part
expect "report of 4097 parts: the first 4096 by name, the last named" 0 \
	"many: 4097 parts, over 4096: 7\.0\.n999\.part and the 0 after it \(by name\) not read" -- \
	"$bot" report --plugstack /dev/null "$tmp/many"
grep -q "^step 7\.0: 4096 part(s)" "$tmp/out" && ok "  ... the step's 4096 parts reported" ||
	{ bad "  ... the step's 4096 parts reported"; sed 's/^/    /' "$tmp/out" | head -n 5; }

# a report directory others can write is refused; as root, parts of users
# other than the directory's owner are not read
mkdir -m 700 "$tmp/g"
chmod 777 "$tmp/g"
expect "harvest --report-dir into a directory others can write: refused" 0 \
	"writable by group or others" -- \
	"$bot" harvest --outbox "$tmp/ob" --fabric f --job 96 --node n1 --nodes 2 --report-dir "$tmp/g" \
	"$tmp/sp/nb-a-1.spool"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chown nobody "$tmp/v2"
	expect "root reading another user's directory: root's own parts are not taken" 1 \
		"not owned|no parts in" -- "$bot" report "$tmp/v2"
	chown nobody "$tmp/v2"/*.part
	expect "  ... the owner's are" 0 "step 5\.0: 2 part" -- "$bot" report "$tmp/v2"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
