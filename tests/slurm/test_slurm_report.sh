#!/bin/bash
# test_slurm_report.sh - the user's report on the test cluster
# (tests/slurm/cluster.sh; doc/formats.md section 17): each node's part
# written by the harvest reader as the job's user into the report
# directory (default nccl-bot-<jobid>/ in the submit directory,
# report_dir=, NCCL_BOT_REPORT_DIR), the one-line summary on srun's
# terminal and in an sbatch output file, `nccl-bot report JOBID` finding
# the directory, its picture (--svg, rendered), shadow mode, a step that
# measured nothing, and other users: a job of nobody's gets a report of
# nobody's (root never wrote into it), and nobody cannot read root's. Skips (77) as test_slurm.sh does.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
. "$srcdir/tests/slurm/cluster.sh"

. "$srcdir/tests/slurm/lib.sh"
slurm_test_needs test_slurm_report.sh "$LIB/libnccl-tuner-bot.so" "$BOT" "$HELPER" "$EMU"

t0=$(date +%s%N)
cluster_init || exit 99
trap 'cluster_down' EXIT
SPOOL=$D/shm
OUTBOX=$D/outbox
mkdir -p "$OUTBOX/n1" "$OUTBOX/n2" "$OUTBOX/n3" "$OUTBOX/n4" "$D/work"
printf 'n1 a\nn2 a\nn3 b\nn4 b\n' >"$D/fabric.map"
ARGS="lib_prefix=$LIB policies=ucb1 spool_dir=$SPOOL outbox_dir=$OUTBOX/%n fabric_map=$D/fabric.map harvest_helper=$HELPER"
cluster_plugstack enable=opt-in mode=on $ARGS
# heterogeneous jobs are scheduled by backfill only, every bf_interval
# (default 30 s)
sed -i 's/^SchedulerType=.*/&\nSchedulerParameters=bf_interval=1/' "$SLURM_CONF"
cluster_up || exit 99
OUT=$D/out
ERR=$D/err
NOBODY=
id nobody >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1 && NOBODY=1
# the summary line of step $1 on srun's stderr
summary() { grep "nccl-bot: step $1: " "$ERR"; }
has() { grep -q -- "$2" "$1" || { echo "  $1 lacks '$2':"; sed 's/^/    /' "$1" | head -n 20; return 1; }; }
undrained() {
	st=$(sinfo -h -p debug -o '%t' | sort -u | tr '\n' ' ')
	case $st in *drain*|*drng*|*down*|*fail*) echo "  node states: $st"; return 1 ;; esac
}
EMUCMD="\"$EMU\" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 4000 --plugin \"\$NCCL_TUNER_PLUGIN\" --table \"\$NCCL_BOT_TABLE\" --spool \"\$NCCL_BOT_SPOOL\" --measured sim; echo \$SLURM_JOB_ID"
export NCCL_BOT_WINDOW=16

# ---- srun: the summary on the terminal, the parts in the submit directory ------
cd "$D/work" || exit 99
run srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
summary "$job.0" | sed 's/^/  # /'
check "srun: one summary line of the step on srun's terminal" test "$(summary "$job.0" | wc -l)" -eq 1
check "  ... calls decided, saved or lost vs AUTO, contexts over 10%, ranks (the emulator runs 2 per task: 4 ranks of 2 tasks), versions, where" \
	sh -c "grep 'nccl-bot: step $job.0: ' '$ERR' | grep -Eq '[0-9]+ calls decided, est\. (saved|lost) ~?[0-9.]+ (s|ms|us) vs AUTO, [0-9]+ contexts lost >10%, tuner loaded on 4 of 4 ranks, NCCL [^,]+, tuner [^,]+, profiler [^;]+; report: $D/work/nccl-bot-$job\$'"
check "  ... a part per node in nccl-bot-<jobid>/ of the submit directory" \
	test -f "nccl-bot-$job/$job.0.n1.part" -a -f "nccl-bot-$job/$job.0.n2.part"
check "  ... the directory 0700, the parts 0600" \
	test "$(stat -c %a "nccl-bot-$job") $(stat -c %a "nccl-bot-$job/$job.0.n1.part")" = "700 600"
check "  ... each part says its node's facts (the prior: no state_dir=; one leaf, 1 expected rank, policy ucb1)" \
	sh -c "grep -qx 'fabric prior' '$D/work/nccl-bot-$job/$job.0.n1.part' && grep -qx 'policy ucb1' '$D/work/nccl-bot-$job/$job.0.n1.part' && grep -qx 'leaf_switches 1' '$D/work/nccl-bot-$job/$job.0.n1.part' && grep -qx 'expected_ranks 1' '$D/work/nccl-bot-$job/$job.0.n1.part'"
check "  ... with the contexts the ranks measured" grep -q '^arm ' "nccl-bot-$job/$job.0.n1.part"
"$BOT" report "$job" >"$D/report.out" 2>&1
check "nccl-bot report JOBID finds ./nccl-bot-JOBID and merges the step's two parts" \
	has "$D/report.out" "step $job.0: 2 part(s) (n1 n2)"
check "  ... per context: AUTO's arm, ours, the best known, loss and saved/lost" \
	sh -c "grep -q 'best known' '$D/report.out' && grep -q 'loss ours' '$D/report.out'"
# the picture of this job's report (issue 11): drawn, well-formed, rendered
# to a PNG of the size the SVG says with something on it
if command -v xmllint >/dev/null 2>&1 && command -v rsvg-convert >/dev/null 2>&1; then
	"$BOT" report "$job" --svg "$D/report.svg" >/dev/null 2>"$D/svg.err"
	sed 's/^/  # /' "$D/svg.err"
	check "nccl-bot report JOBID --svg FILE: the job's picture, panels with known losses" \
		grep -Eq "report.svg: picture of job $job: [1-9][0-9]* panel\(s\), [1-9][0-9]* context\(s\), [1-9][0-9]* with a known loss" "$D/svg.err"
	check "  ... well-formed (xmllint)" xmllint --noout "$D/report.svg"
	check "  ... titled with the job; the calls decided, the ranks (4 of 4), a panel per collective and scale" \
		sh -c "grep -q '<title>nccl-bot report: job $job</title>' '$D/report.svg' && grep -Eq '>[0-9]+ calls decided of [0-9]+; ' '$D/report.svg' && grep -q 'tuner loaded on 4 of 4 ranks' '$D/report.svg' && grep -Eq '>(broadcast|reduce|allgather|reducescatter|allreduce), [0-9]+ nodes?, [0-9]+ ranks?<' '$D/report.svg'"
	check "  ... AUTO's and our loss, the arms each used" \
		sh -c "grep -q '>nccl-bot<' '$D/report.svg' && grep -q '>AUTO&#39;s arm<' '$D/report.svg' && grep -Eq '>(ring|tree|nvls|nvls_tree|collnet_direct|collnet_chain|pat)/(ll|ll128|simple)<' '$D/report.svg'"
	rsvg-convert -o "$D/report.png" "$D/report.svg"
	svgwh=$(sed -n 's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)[.0-9]*".*/\1 \2/p' "$D/report.svg")
	pngwh=$(od -An -tu1 -j16 -N8 "$D/report.png" 2>/dev/null | awk '{ printf "%d %d", (($1*256+$2)*256+$3)*256+$4, (($5*256+$6)*256+$7)*256+$8 }')
	pngsz=$(wc -c <"$D/report.png")
	check "  ... rendered (rsvg-convert) to a PNG of ${pngwh:-?}, as the SVG says, not blank ($pngsz bytes)" \
		sh -c "test '$pngwh' = '$svgwh' && test '${svgwh% *}' = 880 && test '${svgwh#* }' -gt 500 && test '$pngsz' -gt 30000"
else
	echo "skip - the report's picture (xmllint or rsvg-convert not installed: scripts/setup)"
fi
"$BOT" report --json "$job" >"$D/report.json" 2>&1
check "  ... --json" has "$D/report.json" "\"steps\":\[{\"job\":\"$job\",\"step\":\"0\""
check "  ... from elsewhere: not found, the places tried named (exit 1)" \
	sh -c "cd / && ! '$BOT' report --plugstack /dev/null '$job' 2>&1 | grep -q 'no parts of job $job in nccl-bot-$job'; test \$? -ne 0"

# with a state directory the table comes from fabric a (no learned state yet)
mkdir -p "$D/nbstate"
cluster_plugstack enable=opt-in mode=on state_dir=$D/nbstate $ARGS
run srun -N1 -n1 -w n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "a step planned from fabric a's state: its part says fabric a" \
	grep -qx 'fabric a' "nccl-bot-$job/$job.0.n2.part"
cluster_plugstack enable=opt-in mode=on $ARGS

# a step that measured nothing still says so (a part with no context)
run srun -N1 -n1 -w n3 --nccl-bot=ucb1 true
job0=$(sed -n 's/.*nccl-bot: step \([0-9]*\)\.0: .*/\1/p' "$ERR")
check "a step that measured nothing: a line saying 0 calls decided" \
	sh -c "grep -q 'nccl-bot: step $job0.0: 0 calls decided' '$ERR'"
check "  ... and its part" test -f "nccl-bot-$job0/$job0.0.n3.part"

# a one-node step in a two-node allocation: srun stops waiting once its one
# node's part is there (the step's size from local_user_init, not the job's)
run salloc -N2 -w n3,n4 sh -c 'a=$(date +%s%N); srun -N1 -n1 -w n3 --nccl-bot=ucb1 true; echo "ms $(( ($(date +%s%N) - a) / 1000000 ))"'
ms=$(sed -n 's/^ms //p' "$OUT")
check "a 1-node step in a 2-node allocation: srun waits for one part only (${ms:-?} ms < 2500)" \
	test "${ms:-9999}" -lt 2500
check "  ... its line counts the step's one rank" grep -q 'tuner loaded on [0-9]* of 1 ranks' "$ERR"

# shadow mode: the line says shadow and claims nothing
cluster_plugstack enable=opt-in mode=shadow $ARGS
run srun -N1 -n1 -w n1 --nccl-bot sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "shadow mode: the line says shadow, no time saved or lost claimed" \
	sh -c "grep 'nccl-bot: step $job.0: ' '$ERR' | grep -q 'shadow: measured only, NCCL.s choice stands' && ! grep 'nccl-bot: step $job.0: ' '$ERR' | grep -q 'saved'"
check "  ... the part says mode shadow" grep -qx 'mode shadow' "nccl-bot-$job/$job.0.n1.part"

# ---- report_dir= and NCCL_BOT_REPORT_DIR ------------------------------------------
cluster_plugstack enable=opt-in mode=on "report_dir=$D/reports/%u/%j" $ARGS
run srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "report_dir=$D/reports/%u/%j: the parts are there" \
	test -f "$D/reports/root/$job/$job.0.n1.part" -a -f "$D/reports/root/$job/$job.0.n2.part"
check "  ... the summary says where" sh -c "grep 'nccl-bot: step $job.0: ' '$ERR' | grep -q 'report: $D/reports/root/$job\$'"
check "  ... nothing in the submit directory" test ! -e "nccl-bot-$job"
(cd / && "$BOT" report --plugstack "$D/etc/plugstack.conf" "$job") >"$D/report.out" 2>&1
check "  ... nccl-bot report JOBID finds it through plugstack.conf's report_dir=" \
	has "$D/report.out" "step $job.0: 2 part(s)"
mkdir -p "$D/etc/plugstack.conf.d"
mv "$D/etc/plugstack.conf" "$D/etc/plugstack.conf.d/nccl-bot.conf"
: >"$D/etc/plugstack.conf"
(cd / && "$BOT" report --plugstack "$D/etc/plugstack.conf" "$job") >"$D/report.out" 2>&1
check "  ... and through plugstack.conf.d/" has "$D/report.out" "step $job.0: 2 part(s)"
rm -rf "$D/etc/plugstack.conf.d"
cluster_plugstack enable=opt-in mode=on "report_dir=$D/reports/%u/%j" $ARGS
run env NCCL_BOT_REPORT_DIR="$D/mine/r%j" srun -N1 -n1 -w n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "the user's NCCL_BOT_REPORT_DIR wins over report_dir=" test -f "$D/mine/r$job/$job.0.n2.part"
(cd / && NCCL_BOT_REPORT_DIR="$D/mine/r%j" "$BOT" report --plugstack /dev/null "$job") >"$D/report.out" 2>&1
check "  ... nccl-bot report JOBID finds it through NCCL_BOT_REPORT_DIR" has "$D/report.out" "step $job.0: 1 part(s)"
cluster_plugstack enable=opt-in mode=on $ARGS

# ---- sbatch: the summary in the batch output file ---------------------------------
printf '#!/bin/sh\n#SBATCH --nccl-bot=ucb1\n%s\nsrun -N1 -n1 sh -c %s\n' "$EMUCMD" "'$EMUCMD'" >"$D/work/batch.sh"
run sbatch -W -N1 -w n4 -o "$D/work/batch-%j.out" "$D/work/batch.sh"
job=$(sed -n 's/^Submitted batch job //p' "$OUT")
sed 's/^/  # /' "$D/work/batch-$job.out"
check "sbatch: the batch step's summary line is in the output file" \
	sh -c "grep -Eq '^nccl-bot: step $job\.batch: [0-9]+ calls decided, .* tuner loaded on 2 of 2 ranks, .*; report: $D/work/nccl-bot-$job\$' '$D/work/batch-$job.out'"
check "  ... once" test "$(grep -c "nccl-bot: step $job\.batch: " "$D/work/batch-$job.out")" -eq 1
check "  ... and the inner srun's own line" grep -q "nccl-bot: step $job\.0: " "$D/work/batch-$job.out"
check "  ... the batch step's part beside the inner step's" \
	test -f "nccl-bot-$job/$job.batch.n4.part" -a -f "nccl-bot-$job/$job.0.n4.part"
"$BOT" report "$job" >"$D/report.out" 2>&1
check "  ... nccl-bot report: both steps and the job's total" \
	sh -c "grep -q 'step $job.batch: 1 part' '$D/report.out' && grep -q 'step $job.0: 1 part' '$D/report.out' && grep -q 'job total' '$D/report.out'"

# under the administrator's default a step that loads no tuner prints no
# line, but one whose parts were expected and did not come says why
cluster_plugstack enable=default mode=on $ARGS
run env NCCL_BOT_REPORT_DIR=/etc/passwd/r%j srun -N1 -n1 -w n1 sh -c "$EMUCMD"
check "enable=default: a report that cannot be written is said, not asked for" \
	has "$ERR" "(no node's part arrived within 3 s: /etc/passwd/r[0-9]*: Not a directory"
run srun -N1 -n1 -w n1 true
check "  ... a step that loads no tuner: no line" sh -c "! grep -q 'nccl-bot: step' '$ERR'"
cluster_plugstack enable=opt-in mode=on $ARGS

# a batch step that loads no tuner (NCCL in the script's sruns, or none): its
# part is written, no line in the output (one in every job's until 2026-12-04)
job=$(timeout 60 sbatch --parsable --wait -N1 -w n1 --nccl-bot=ucb1 -o "$D/work/quiet-%j.out" \
	--wrap "srun -N1 -n1 true" 2>"$ERR")
check "a batch step that loads no tuner: its part, no line of its own in the output" \
	sh -c "test -f '$D/work/nccl-bot-$job/$job.batch.n1.part' && ! grep -q 'step $job\.batch: ' '$D/work/quiet-$job.out'"

# ---- one run's parts: the step's token (audit 6) -----------------------------------
# a stale part of the next job id (another cluster's job, a wrapped id, an
# earlier run) already in its report directory is not this step's
run srun -N1 -n1 -w n1 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
next=$((job + 1))
check "each part records its step's token" grep -Eq '^token [0-9a-f]{16}$' "nccl-bot-$job/$job.0.n1.part"
mkdir -m 700 "nccl-bot-$next"
sed -e "s/^job .*/job $next/" -e 's/^node .*/node n3/' -e 's/^token .*/token 0000000000000001/' \
	"nccl-bot-$job/$job.0.n1.part" >"nccl-bot-$next/$next.0.n3.part"
chmod 600 "nccl-bot-$next/$next.0.n3.part"
run srun -N1 -n1 -w n1 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
summary "$job.0" | sed 's/^/  # /'
check "a stale part of the same job id in the directory: not merged (job $job: 2 of 2 ranks)" \
	sh -c "test '$job' = '$next' && grep 'nccl-bot: step $job.0: ' '$ERR' | grep -q 'tuner loaded on 2 of 2 ranks'"
"$BOT" report "$job" >"$D/report.out" 2>&1
check "  ... nccl-bot report warns that the step has parts of different runs" \
	has "$D/report.out" "step $job.0 has parts of different runs"

# ---- a heterogeneous step: one report in the leader's directory (review 2) ---------
run srun -N1 -n1 -w n1 --nccl-bot=ucb1 sh -c "$EMUCMD" : -N1 -n1 -w n2 sh -c "$EMUCMD"
het=$(grep -E "^[0-9]+$" "$OUT" | sort -n | head -n 1)
summary "$het.0" | sed 's/^/  # /'
check "heterogeneous step: both components' parts (J+0, J+1) in the leader's directory" \
	test -f "nccl-bot-$het/$het+0.0.n1.part" -a -f "nccl-bot-$het/$het+1.0.n2.part" -a ! -e "nccl-bot-$((het + 1))"
check "  ... srun's line counts every component's ranks (4 of 4)" \
	sh -c "grep 'nccl-bot: step $het.0: ' '$ERR' | grep -q 'tuner loaded on 4 of 4 ranks'"
"$BOT" report "$het" >"$D/report.out" 2>&1
check "  ... nccl-bot report LEADER: one step of both components' parts" \
	has "$D/report.out" "step $het.0: 2 part(s) (n1 n2)"

# sbatch -D DIR: the batch step's part goes where its sruns' go, DIR/nccl-bot-J
# (until 2026-12-04 into sbatch's own working directory: one job, two places)
mkdir -p "$D/wd"
job=$(timeout 60 sbatch --parsable --wait -N1 -w n1 --nccl-bot=ucb1 -D "$D/wd" -o "$D/wd/b.out" \
	--wrap "srun -N1 -n1 true" 2>"$ERR")
check "sbatch -D DIR: the batch step's and its srun's parts in DIR/nccl-bot-J" \
	test -f "$D/wd/nccl-bot-$job/$job.batch.n1.part" -a -f "$D/wd/nccl-bot-$job/$job.0.n1.part" -a \
	! -e "$D/work/nccl-bot-$job" || ls -R "$D/wd" "$D/work"

# ---- other users ----------------------------------------------------------------
if [ -n "$NOBODY" ]; then
	mkdir -p "$D/nob"
	chown nobody "$D/nob"
	run runuser -u nobody -- sh -c "cd '$D/nob' && srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c '$EMUCMD'"
	job=$(tail -n 1 "$OUT")
	check "a job of nobody's: its summary line on its terminal" grep -q "nccl-bot: step $job.0: " "$ERR"
	check "  ... its report directory and parts are nobody's (root never wrote there)" \
		test "$(find "$D/nob/nccl-bot-$job" \! -user nobody | wc -l)" -eq 0 -a \
		"$(find "$D/nob/nccl-bot-$job" -type f | wc -l)" -eq 2
	check "  ... the directory 0700" test "$(stat -c %a "$D/nob/nccl-bot-$job")" = 700
	rootjob=$(ls -d "$D"/work/nccl-bot-* | head -n 1)
	check "nobody cannot list or read root's report directory" \
		sh -c "! runuser -u nobody -- ls '$rootjob' >/dev/null 2>&1 && ! runuser -u nobody -- cat '$rootjob'/*.part >/dev/null 2>&1"
	check "  ... nor through nccl-bot report" \
		sh -c "! runuser -u nobody -- '$BOT' report '$rootjob' >/dev/null 2>&1"
	# a report directory nobody cannot make (nccl-bot-JOB/ in /): srun's
	# line and the batch step's say why (srun's blamed the nodes, with a
	# "//" path, and the batch step's said nothing, until 2026-12-04)
	run runuser -u nobody -- sh -c "cd / && srun -N1 -n1 -w n1 --nccl-bot=ucb1 true"
	check "a report directory nobody cannot make: srun's line says why" \
		has "$ERR" "(no node's part arrived within 3 s: cannot make /nccl-bot-[0-9]*: /: Permission denied"
	check "  ... and names it without a doubled /" sh -c "! grep -q 'report: //' '$ERR'"
	run runuser -u nobody -- sh -c "cd / && sbatch --wait -N1 -w n1 --nccl-bot=ucb1 -o '$D/nob/b.out' --wrap true"
	check "  ... the batch step's line in its output file says why" \
		has "$D/nob/b.out" "^nccl-bot: step [0-9]*.batch: no report: .*/nccl-bot-[0-9]*.*Permission denied"
else
	echo "skip - other users (no user nobody or no runuser)"
fi
check "no node drained" undrained

# ---- without pidfd_open (Linux < 5.3; review 1) -------------------------------------
# slurmd (and the slurmstepd, helper it starts) under a seccomp filter that
# fails pidfd_open: the harvest polls for the helper's exit, which writes
# the part and the batch step's line after its stream
NOPIDFD=$builddir/tests/slurm/nopidfd
if [ -x "$NOPIDFD" ] && "$NOPIDFD" true 2>/dev/null; then
	CLUSTER_KEEP=1 cluster_down
	mkdir -p "$D/nopidfd"
	printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$NOPIDFD" "$(command -v slurmd)" >"$D/nopidfd/slurmd"
	chmod 755 "$D/nopidfd/slurmd"
	PATH=$D/nopidfd:$PATH cluster_up || exit 99
	run srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
	job=$(tail -n 1 "$OUT")
	check "no pidfd: both nodes' parts written (the harvest waits for the helper by polling)" \
		test -f "nccl-bot-$job/$job.0.n1.part" -a -f "nccl-bot-$job/$job.0.n2.part"
	check "  ... srun's line counts both nodes' ranks" \
		sh -c "grep 'nccl-bot: step $job.0: ' '$ERR' | grep -q 'tuner loaded on 4 of 4 ranks'"
	run sbatch -W -N1 -w n4 -o "$D/work/batch-%j.out" "$D/work/batch.sh"
	job=$(sed -n 's/^Submitted batch job //p' "$OUT")
	check "  ... sbatch: the batch step's summary line is in the output file" \
		test "$(grep -c "^nccl-bot: step $job\.batch: " "$D/work/batch-$job.out")" -eq 1
	check "  ... no node drained" undrained
else
	echo "skip - no pidfd (tests/slurm/nopidfd not built or seccomp refused)"
fi

t1=$(date +%s%N)
echo "$pass passed, $fail failed in $(((t1 - t0) / 1000000)) ms"
[ $fail -eq 0 ]
