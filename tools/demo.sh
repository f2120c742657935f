# demo.sh - what `nccl-bot demo` runs (sourced by no one; run by
# tools/cmd_demo.c with /bin/sh, installed as $(pkgdatadir)/demo.sh).
#
# Two emulated training jobs under `srun --nccl-bot` on a throwaway Slurm
# cluster of four nodes on this host (cluster.sh, the test cluster of
# tests/slurm/), the second deciding from what the first measured: each
# node's harvest -> nccl-bot ship -> nccl-bot compact -> the fabric's
# snapshot, from which job 2's srun compiles its step table. Prints the
# two srun summary lines, job 2's report (and its picture where `nccl-bot
# report` draws one), the simulator's true latencies, and checks that job
# 2 saved time against AUTO, on its summary line and in the simulator's
# truth (exit 1 otherwise). Job 1 is a calibration run (sweep).
#
# The caller (cmd_demo.c) has checked root, Slurm, munge and the files,
# made the empty directory NB_DEMO_DIR, and passes:
#   NB_DEMO_CLUSTER  cluster.sh          NB_DEMO_BOT     nccl-bot
#   NB_DEMO_PLUGIN   spank_nccl_bot.so   NB_DEMO_LIBDIR  the rank library's directory
#   NB_DEMO_HELPER   nccl-bot-harvest-read
#   NB_DEMO_EMU      the NCCL emulator   NB_DEMO_SVG     where the picture goes
#   NB_DEMO_KEEP     1: leave NB_DEMO_DIR (its daemons stopped all the same)
# Lines "@@ N TEXT" on stdout are progress (stage N of 7) for the caller to
# draw on a terminal, never shown; every other line is the demo's output.
# On SIGINT/SIGTERM/SIGHUP, or any failure, the EXIT trap cancels the jobs,
# stops every daemon by its PID (cluster_down) and removes the directory;
# the caller then kills whatever of its descendants is still there (it is
# their subreaper: slurmstepd leaves slurmd's process tree).
set -u
for v in NB_DEMO_DIR NB_DEMO_CLUSTER NB_DEMO_BOT NB_DEMO_PLUGIN NB_DEMO_LIBDIR NB_DEMO_HELPER \
	NB_DEMO_EMU NB_DEMO_SVG; do
	eval "[ -n \"\${$v:-}\" ]" || { echo "demo.sh: $v is not set (run nccl-bot demo)" >&2; exit 2; }
done
. "$NB_DEMO_CLUSTER" || exit 1
BOT=$NB_DEMO_BOT
# The simulated fabric and the training job's collectives: on a100-ib-hdr
# (sim/), two nodes, NCCL 2.28's cost model picks ring for allreduces of
# 16 and 64 MiB where tree is ~60% faster in the simulator's measured
# model; allgather 4 MiB is a control where AUTO is right. Each job: 2
# tasks (one per node), each an emulator of 8 ranks (4 per node: comms of
# 8 and 4 ranks on 2 nodes, 4 on 1), 400,000 collectives per communicator.
# Chosen by measurement (2026-12-01): with these, job 2's line showed
# more estimated time saved than job 1's in every run tried (job 1 lost
# 36 ms to saved 196 ms, job 2 saved 2.2-3.8 s); with 32 MiB allreduces
# as well, or 200,000 calls, it did not in 1 run of 5 or more. Since step
# table format v3 a context the table does not name is not probed
# (doc/policies.md "On the ranks"): a learning job 1 decided nothing and job
# 2 probed within the budget job 1's calls earned, a coin toss on one job
# (its line lost 162 ms in 1 run of 10, where one communicator's probe of
# tree on one node cost more than the others' probes saved). So job 1 is a
# calibration run now (sweep): every arm measured in one job, and job 2
# exploits what was faster. Measured in 10 runs: job 1's line lost 13-84 s,
# job 2's saved 4.4-10.1 s (simulator truth 265-266 us against AUTO's 368.6
# us; job 1 620.6 us). Since the ranks' summaries count the windows their
# process's quiet time skipped (doc/formats.md section 9, 2026-12-01), the
# lines count about 25 times the calls, as many as ran: in 10 runs job 1's
# lost 325-1957 s, job 2's saved 191-308 s (the truth: 103.6 us saved per
# collective, about 2.5 million collectives). (The line's
# saving is an estimate: where job 2 runs tree and AUTO's ring ran in no
# call of the step, ring's latency comes from the fabric's state, which
# job 1 measured, or else NCCL's cost model, which believes ring faster;
# doc/formats.md section 17. The runs above predate the state's use.)
FABRIC=a100-ib-hdr
WORK=allreduce:16M,allreduce:64M,allgather:4M
CALLS=400000
SRUN_PID=
STARTED=

stage() { printf '@@ %s %s\n' "$1" "$2"; }
ms() { echo $(($(date +%s%N) / 1000000)); }
cleanup() {
	rc=$?
	trap '' INT TERM HUP
	stage 7 "stopping the cluster"
	if [ -n "$SRUN_PID" ]; then
		kill -KILL "$SRUN_PID" 2>/dev/null
		wait "$SRUN_PID" 2>/dev/null
	fi
	if [ -n "$STARTED" ]; then
		# the jobs still running (an interrupt) end before their nodes'
		# slurmd stop, so no slurmstepd is left waiting for them
		timeout 5 scancel --quiet --signal=KILL --user=root >/dev/null 2>&1
		timeout 5 scancel --quiet --user=root >/dev/null 2>&1
	fi
	[ -n "${NB_DEMO_KEEP:-}" ] && CLUSTER_KEEP=1
	cluster_down
	exit $rc
}
trap cleanup EXIT
trap 'echo "nccl-bot demo: interrupted (SIGINT)" >&2; exit 130' INT
trap 'echo "nccl-bot demo: interrupted (SIGTERM)" >&2; exit 143' TERM
trap 'echo "nccl-bot demo: interrupted (SIGHUP)" >&2; exit 129' HUP

# est_loss FILE: job's srun line -> its estimated loss against AUTO in
# seconds (saved: negative), e.g. "est. saved ~1.24 s" -> -1.24
est_loss() {
	sed -n 's/.* est\. \(saved\|lost\) ~\{0,1\}\([0-9.]*\) \([mun]*s\) vs AUTO.*/\1 \2 \3/p' "$1" |
		awk '{ m = $3 == "s" ? 1 : $3 == "ms" ? 1e-3 : $3 == "us" ? 1e-6 : 1e-9
		       printf "%.9f\n", ($1 == "saved" ? -1 : 1) * $2 * m; exit }'
}
# truth FILE: the emulator's LOSS lines of a job (one per task): the mean
# simulated latency per call of what ran, and of AUTO's choices
truth() {
	awk '/^LOSS / { for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
		c += v["calls"]; m += v["calls"] * v["mean_us"]; au += v["calls"] * v["auto_us"] }
		END { if (c) printf "%.1f %.1f\n", m / c, au / c }' "$1"
}

cat <<EOF
nccl-bot demo: what nccl-bot does for a Slurm user, on this machine alone (no GPU).
  A throwaway Slurm cluster (4 nodes on this host, its own munged) loads nccl-bot's SPANK
  plugin. Two training jobs run \`srun --nccl-bot\`: on 2 nodes, NCCL emulator ranks on a
  simulated fabric, $FABRIC, where NCCL's cost model (AUTO) picks ring for 16 and 64 MiB
  allreduces and tree is about 60% faster. Job 1 calibrates (--nccl-bot=sweep: every arm
  in turn, as an administrator does once per new fabric); its measurements are harvested,
  shipped and compacted into the fabric's state; job 2 decides from that. Each srun prints
  one line: what nccl-bot saved or lost vs AUTO.
EOF

stage 1 "writing the cluster's configuration"
t0=$(ms)
CLUSTER_DIR=$NB_DEMO_DIR
CLUSTER_PLUGIN=$NB_DEMO_PLUGIN
cluster_init || exit 1
mkdir -p "$D/work" "$D/state" "$D/spool" "$D/outbox/n1" "$D/outbox/n2" "$D/outbox/n3" "$D/outbox/n4" ||
	exit 1
# the jobs' nodes n1, n2 are the simulated fabric's: its learned state and
# the report carry the name the introduction gives (n3, n4, unused, are
# another fabric)
printf 'n1 %s\nn2 %s\nn3 b\nn4 b\n' "$FABRIC" "$FABRIC" >"$D/fabric.map"
# mode=on: nccl-bot decides (a site starts in shadow mode); policy=thompson,
# the learning policy (a site's default is greedy); policies=sweep lets job 1
# be a calibration run (--nccl-bot=sweep)
cluster_plugstack enable=opt-in mode=on policy=thompson policies=sweep lib_prefix="$NB_DEMO_LIBDIR" \
	spool_dir="$D/spool" outbox_dir="$D/outbox/%n" fabric_map="$D/fabric.map" \
	harvest_helper="$NB_DEMO_HELPER" state_dir="$D/state" || exit 1

stage 2 "starting munged, slurmctld and slurmd n1-n4"
STARTED=1
cluster_up || { echo "nccl-bot demo: the cluster did not start (its logs are above)" >&2; exit 1; }
echo "cluster: up in $(( ($(ms) - t0) )) ms: munged, slurmctld, slurmd n1-n4 in $D"

cd "$D/work" || exit 1
# measurement windows of 16 calls (every 1,600) instead of the default, so a
# job of seconds measures enough (NCCL_BOT_WINDOW, doc/formats.md section 11)
NCCL_BOT_WINDOW=16
export NCCL_BOT_WINDOW
EMUCMD="\"$NB_DEMO_EMU\" --suite consistency --scenario base --policy thompson --procs 8 --ranks-per-node 4 --fabric $FABRIC --workload $WORK --measured sim --calls-each $CALLS --plugin \"\$NCCL_TUNER_PLUGIN\" --table \"\$NCCL_BOT_TABLE\" --spool \"\$NCCL_BOT_SPOOL\" --seed \$((SLURM_JOB_ID * 2 + SLURM_PROCID))"

# job N STAGE WHAT [POLICY]: one training job on n1, n2; its line into $D/line.N
job() {
	stage "$2" "job $1 running ($3)"
	echo "job $1 ($3): srun --nccl-bot${4:+=$4} on n1, n2, 16 emulated ranks"
	srun -N2 -n2 -w n1,n2 -J "train$1" --nccl-bot${4:+=$4} sh -c "$EMUCMD" >"$D/job$1.out" 2>"$D/job$1.err" &
	SRUN_PID=$!
	wait "$SRUN_PID"
	src=$?
	SRUN_PID=
	grep '^nccl-bot: step [0-9]*\.0: ' "$D/job$1.err" | head -n 1 >"$D/line.$1"
	if [ $src != 0 ] || [ ! -s "$D/line.$1" ]; then
		echo "nccl-bot demo: job $1 failed (srun exit $src); its output:" >&2
		tail -n 20 "$D/job$1.err" "$D/job$1.out" >&2
		exit 1
	fi
	sed 's/^/  /' "$D/line.$1"
	jobid=$(sed -n 's/^nccl-bot: step \([0-9]*\)\.0: .*/\1/p' "$D/line.$1")
}

job 1 3 "a calibration run, every arm in turn" sweep
job1=$jobid

stage 4 "learning: harvest, ship, compact"
# the nodes' harvests run as job 1's steps end; a job on the same nodes
# that depends on it starts only once both have ended
srun -N2 -n2 -w n1,n2 -J wait --dependency=afterany:"$job1" true >/dev/null 2>&1 &
SRUN_PID=$!
wait "$SRUN_PID"
SRUN_PID=
n=$(ls "$D/outbox/n1" "$D/outbox/n2" | grep -c "\.$job1\..*\.nbd$")
for node in n1 n2; do
	"$BOT" ship --outbox "$D/outbox/$node" --state "$D/state" >>"$D/learn.log" 2>&1 ||
		{ echo "nccl-bot demo: ship failed:" >&2; cat "$D/learn.log" >&2; exit 1; }
done
# --settle 0: both nodes' deltas are in (a site's compactor waits 300 s for
# late ones)
"$BOT" compact --state "$D/state" --settle 0 >>"$D/learn.log" 2>&1 ||
	{ echo "nccl-bot demo: compact failed:" >&2; cat "$D/learn.log" >&2; exit 1; }
snap=$(sed -n 's/.*published \(snap-[0-9a-f]*\.nbs\).*/\1/p' "$D/learn.log" | tail -n 1)
[ -n "$snap" ] || { echo "nccl-bot demo: nothing learned from job 1:" >&2; cat "$D/learn.log" >&2; exit 1; }
echo "learning: $n deltas (job 1's measurements, one per node) harvested, shipped (nccl-bot ship)"
echo "  and compacted (nccl-bot compact) into fabric $FABRIC's state: $snap"

job 2 5 "decides from fabric $FABRIC's state"
job2=$jobid

stage 6 "job 2's report"
echo "report of job 2 (nccl-bot report $job2):"
"$BOT" report "$job2" >"$D/report.txt" 2>&1
sed 's/^/  /' "$D/report.txt"
if "$BOT" report --help 2>&1 | grep -q -- '--svg'; then
	if "$BOT" report "$job2" --svg "$NB_DEMO_SVG" >"$D/svg.log" 2>&1 && [ -s "$NB_DEMO_SVG" ]; then
		echo "picture: $NB_DEMO_SVG"
	else
		echo "picture: none ($(head -n 1 "$D/svg.log"))"
	fi
else
	echo "picture: none (this nccl-bot's report draws no picture yet)"
fi

set -- $(truth "$D/job1.out") $(truth "$D/job2.out")
t2=
if [ $# = 4 ]; then
	echo "truth (the simulator's latency of what ran, per collective): AUTO's choices $2 us,"
	echo "  job 1 $1 us, job 2 $3 us"
	t2=$3 ta=$4
fi
# learning helped when job 2, which decides from what job 1 measured, saves
# time against AUTO: its srun line says so, and so does the simulator's
# truth (job 1, a calibration run, loses by design: it is no yardstick)
l2=$(est_loss "$D/line.2")
if [ -n "$l2" ] && [ -n "$t2" ] && awk "BEGIN { exit !($l2 < 0 && $t2 < $ta) }"; then
	echo "result: job 2's line shows a saving against AUTO, and so does the truth: learning helped"
else
	echo "result: job 2 did NOT save time against AUTO (its line: ${l2:-?} s, negative: saved; truth ${t2:-?} us against AUTO's ${ta:-?} us)"
	exit 1
fi
exit 0
