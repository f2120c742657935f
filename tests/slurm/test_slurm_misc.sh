#!/bin/bash
# test_slurm_misc.sh - spank_nccl_bot.so on the test cluster
# (tests/slurm/cluster.sh), the parts that need the job's prolog and
# epilog: heterogeneous steps with one decision for every component
# (identical variables, one table, per-component deltas with their het
# ids), the job's account and GPUs in deltas (the prolog's root-side facts,
# bit4 only for an account from Slurm), the epilog's harvest of what a
# killed step left, the batch step's fabric at submission, and the fabric
# map taken from the site configuration (config=, no fabric_map=). Skips
# (77) as test_slurm.sh does.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
. "$srcdir/tests/slurm/cluster.sh"

. "$srcdir/tests/slurm/lib.sh"
slurm_test_needs test_slurm_misc.sh "$LIB/libnccl-tuner-bot.so" "$BOT" "$HELPER" "$EMU"

t0=$(date +%s%N)
cluster_init || exit 99
trap 'cluster_down' EXIT
# srun, sbatch and salloc run from the cluster's directory: a step's report
# directory (nccl-bot-<jobid>/ in the working directory) and sbatch's
# output files stay out of the build tree and go with the cluster
mkdir -p "$D/work" && cd "$D/work" || exit 99
# two GPUs per node (character devices stand in for them: Slurm only needs
# the files to exist), where the host has them
GPUS=
if [ -c /dev/tty1 ] && [ -c /dev/tty2 ]; then
	GPUS=1
	sed -i 's/^\(NodeName=n\[[0-9]-[0-9]\] .*\) State=UNKNOWN$/\1 Gres=gpu:2 State=UNKNOWN/' "$SLURM_CONF"
	sed -i 's/^MailProg=/GresTypes=gpu\nMailProg=/' "$SLURM_CONF"
	echo 'NodeName=n[1-4] Name=gpu File=/dev/tty[1-2]' >"$D/etc/gres.conf"
fi
# heterogeneous jobs are scheduled by backfill only, every bf_interval
# (default 30 s)
sed -i 's/^SchedulerType=.*/&\nSchedulerParameters=bf_interval=1/' "$SLURM_CONF"
# a killed slurmstepd's job ends after KillWait (default 30 s)
echo 'KillWait=2' >>"$SLURM_CONF"
SPOOL=$D/shm
OUTBOX=$D/outbox
mkdir -p "$OUTBOX/n1" "$OUTBOX/n2" "$OUTBOX/n3" "$OUTBOX/n4"
printf 'n1 a\nn2 a\nn3 b\nn4 b\n' >"$D/fabric.map"
ARGS="lib_prefix=$LIB policies=ucb1 spool_dir=$SPOOL outbox_dir=$OUTBOX/%n fabric_map=$D/fabric.map harvest_helper=$HELPER"
cluster_plugstack enable=opt-in mode=on $ARGS
cluster_up || exit 99
t_up=$(date +%s%N)
OUT=$D/out
ERR=$D/err
undrained() {
	st=$(sinfo -h -p debug -o '%t' | sort -u | tr '\n' ' ')
	case $st in *drain*|*drng*|*down*|*fail*) echo "  node states: $st"; return 1 ;; esac
}
ended() { timeout 60 srun -N"$(echo "$2" | tr ',' '\n' | wc -l)" -w "$2" --dependency=afterany:"$1" true >/dev/null 2>&1; }
# u32 FILE OFFSET, u64 FILE OFFSET, str FILE OFFSET: delta header fields
# (doc/formats.md section 13)
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
u64() { od -An -tx8 -j "$2" -N8 "$1" | tr -d ' '; }
str() { dd if="$1" bs=1 skip="$2" count=64 2>/dev/null | tr -d '\0'; }

# ---- heterogeneous steps: one decision for every component -------------------------
# every task line: the node, then every variable of ours (NCCL_BOT_*,
# NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN, their pins) but the node's own
# spool directory
SHOW='echo "$SLURMD_NODENAME $(env | grep -E "^(NCCL_BOT_|NCCL_TUNER_PLUGIN|NCCL_PROFILER_PLUGIN|SLURM_NCCL_BOT_)" | grep -v "^NCCL_BOT_SPOOL=" | sort | tr "\n" " ")"'
alike_ours() {
	[ "$(wc -l <"$OUT")" -eq "$1" ] || { echo "  want $1 lines:"; cat "$OUT" "$ERR"; return 1; }
	[ "$(cut -d' ' -f2- "$OUT" | sort -u | wc -l)" -eq 1 ] || { echo "  tasks differ:"; cat "$OUT"; return 1; }
	grep -q "NCCL_TUNER_PLUGIN=$LIB/libnccl-tuner-bot.so .*" "$OUT" && grep -q 'NCCL_BOT_TABLE=NBT3\.' "$OUT" ||
		{ echo "  not ours:"; cat "$OUT" "$ERR"; return 1; }
}
run srun -N1 -n1 -w n1 --nccl-bot=ucb1 sh -c "$SHOW" : -N1 -n2 -w n2 sh -c "$SHOW"
check "srun --nccl-bot=ucb1 A : B: all 3 tasks of both components have the same variables and table" alike_ours 3
check "  ... on n1 and n2" test "$(cut -d' ' -f1 "$OUT" | sort | tr '\n' ' ')" = "n1 n2 n2 "
run salloc -N1 -w n1 : -N1 -w n3 srun -N1 -n1 --nccl-bot=ucb1 sh -c "$SHOW" : -N1 -n1 sh -c "$SHOW"
check "salloc A : B, then srun --nccl-bot=ucb1 A : B: both components alike" alike_ours 2
cluster_plugstack enable=opt-in mode=on $ARGS state_dir=$D/nostate
run salloc -N1 -w n1 : -N1 -w n3 srun -v -N1 -n1 --nccl-bot=ucb1 true : -N1 -n1 true
check "  ... n1 and n3 span two fabrics: the prior, and srun -v says why" \
	grep -q 'heterogeneous step: policy ucb1, table from the prior (.*span fabrics a and b' "$ERR" || grep nccl-bot "$ERR"
cluster_plugstack enable=opt-in mode=on $ARGS
run salloc -N1 -w n1 : -N1 -w n2 srun --het-group=0,1 --nccl-bot=ucb1 sh -c "$SHOW"
check "salloc A : B, then srun --het-group=0,1 --nccl-bot=ucb1: both components alike" alike_ours 2
run salloc -N1 -w n1 : -N1 -w n2 --nccl-bot=ucb1 srun --het-group=0,1 sh -c "$SHOW"
check "salloc --nccl-bot=ucb1 A : B, then srun --het-group=0,1 (the option inherited): alike" alike_ours 2
run srun -N1 -n1 -w n1 sh -c "$SHOW" : -N1 -n1 -w n2 sh -c "$SHOW"
check "a heterogeneous step without the option (opt-in): nothing of ours" \
	test "$(grep -c 'NCCL_BOT_TABLE' "$OUT")" -eq 0

# measured: each component's delta carries the het job id and its component
EMUCMD="\"$EMU\" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 4000 --plugin \"\$NCCL_TUNER_PLUGIN\" --table \"\$NCCL_BOT_TABLE\" --spool \"\$NCCL_BOT_SPOOL\" --measured sim --seed \$((SLURM_JOB_ID + 3)); echo \$SLURM_JOB_ID"
export NCCL_BOT_WINDOW=16
run srun -N1 -n1 -w n1 --nccl-bot=ucb1 sh -c "$EMUCMD" : -N1 -n1 -w n2 sh -c "$EMUCMD"
het=$(tail -n 1 "$OUT")
ended $((het + 1)) n1,n2
ha=$OUTBOX/n1/nbtest.$het+0.0.0.n1.nbd
hb=$OUTBOX/n2/nbtest.$het+1.0.0.n2.nbd
check "a measured heterogeneous step: both components' ranks ran" test "$(grep -c '^PASS consistency/ucb1/base' "$OUT")" -eq 2
check "  ... a delta per component, named $het+0 and $het+1" test -f "$ha" -a -f "$hb" ||
	ls -R "$OUTBOX" | sed 's/^/  # /'
check "  ... het job $het, components 0 and 1 in the headers" \
	test "$(u32 "$ha" 296):$(u32 "$ha" 300):$(u32 "$hb" 296):$(u32 "$hb" 300)" = "$het:0:$het:1"
check "  ... one table digest in both (non-zero)" \
	test -f "$ha" -a "$(u64 "$ha" 384)" = "$(u64 "$hb" 384)" -a "$(u64 "$ha" 384)" != 0000000000000000
# the delta reader (common/delta.h) through nccl-bot's quarantine tooling
mkdir -p "$D/qstate/quarantine"
cp "$hb" "$D/qstate/quarantine/" 2>/dev/null
"$BOT" state quarantine --state "$D/qstate" show "${hb##*/}" >"$D/q.out" 2>&1
check "  ... which the delta reader takes: het_job $het, het_comp 1" \
	sh -c "grep -q 'het_job: $het\$' '$D/q.out' && grep -q 'het_comp: 1\$' '$D/q.out' ||
		{ sed 's/^/  # /' '$D/q.out'; exit 1; }"

# ---- the job's account and GPUs (the prolog's facts) -----------------------------------
GPUOPT=
[ -n "$GPUS" ] && GPUOPT=--gpus=1
run env SLURM_JOB_ACCOUNT=evil srun -N1 -n1 -w n3 -A acct1 $GPUOPT --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
ended "$job" n3
d=$OUTBOX/n3/nbtest.$job.0.0.n3.nbd
check "srun -A acct1: the delta's account is acct1, trusted (bit4)" \
	test -f "$d" -a "$(str "$d" 392):$(($(u32 "$d" 12) & 24))" = "acct1:24"
if [ -n "$GPUS" ]; then
	check "srun --gpus=1: the delta says 1 GPU" test "$(u32 "$d" 336)" = 1
fi
check "  ... no het ids" test "$(u32 "$d" 296):$(u32 "$d" 300)" = "0:4294967295"
run env SLURM_JOB_ACCOUNT=evil srun -N1 -n1 -w n3 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
ended "$job" n3
d=$OUTBOX/n3/nbtest.$job.0.0.n3.nbd
check "no -A (no account in Slurm), SLURM_JOB_ACCOUNT=evil in the user's environment: no account, bit4 clear" \
	test -f "$d" -a "$(str "$d" 392):$(($(u32 "$d" 12) & 24))" = ":8"
check "  ... no GPUs asked: 0 (unknown)" test "$(u32 "$d" 336)" = 0
check "the prolog's facts file is gone after the job" test ! -e "$SPOOL/.job.$job.n3"

# ---- the epilog harvests what a killed step left ---------------------------------------
# the task measures, says so, then waits (bounded) for the test to let it go
GO=$D/go
WAITGO="i=0; while [ ! -e $GO ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
timeout 60 srun -N1 -n1 -w n4 --nccl-bot=ucb1 sh -c "$EMUCMD >$D/killed.out; touch $D/ready.\$SLURM_JOB_ID; $WAITGO" >"$OUT" 2>"$ERR" &
spid=$!
i=0
until ls "$D"/ready.* >/dev/null 2>&1 || [ $i -gt 600 ]; do sleep 0.1; i=$((i + 1)); done
job=$(ls "$D"/ready.* 2>/dev/null | sed 's/.*ready\.//')
stepd=$(pgrep -f "^slurmstepd: \[$job\.0\]" | head -n 1)
check "a measuring step is running on n4 (job $job, its slurmstepd $stepd)" test -n "$job" -a -n "$stepd"
[ -n "$stepd" ] && kill -KILL "$stepd"
touch "$GO"
scancel "$job" 2>/dev/null
wait $spid
ended "$job" n4
check "its slurmstepd killed: the epilog harvested its spool into n4's outbox" \
	test -f "$OUTBOX/n4/nbtest.$job.0.0.n4.nbd" || { grep -h "job $job" "$D"/log/slurmd-n4.log | grep nccl-bot | sed 's/^/  # /'; ls -A "$OUTBOX/n4" "$SPOOL"; }
check "  ... and removed the directory" test ! -e "$SPOOL/$job.0.0.n4"
d=$OUTBOX/n4/nbtest.$job.0.0.n4.nbd
check "  ... stamped from root-side facts: bit3, step 0, the job's 1 node, fabric b, a start" \
	test -f "$d" -a "$(($(u32 "$d" 12) & 8)):$(u32 "$d" 284):$(u32 "$d" 328):$(str "$d" 144)" = "8:0:1:b" -a "$(u32 "$d" 344)" != 0
check "  ... the slurmd log names the epilog's harvest" \
	grep -q "nccl-bot: epilog of job $job: $job\.0\.0\.n4: [0-9]* spool files read" "$D/log/slurmd-n4.log"

# a hostile leftover: 5,000 entries, a FIFO, a link to /etc/shadow; the
# epilog refuses it unread, removes it within its budget, drains nothing
job=$(sbatch -H -N1 -w n2 --parsable -o /dev/null --wrap true)
mkdir -m 0700 "$SPOOL/$job.0.0.n2"
(cd "$SPOOL/$job.0.0.n2" && seq 1 5000 | sed 's/$/.spool/' | xargs touch && mkfifo f.spool && ln -s /etc/shadow s.spool)
shadow=$(stat -c '%s %Y' /etc/shadow 2>/dev/null)
scontrol release "$job"
ended "$job" n2
check "a hostile leftover (5,000 entries, a FIFO, a link): removed by the epilog" test ! -e "$SPOOL/$job.0.0.n2"
check "  ... no delta from it" test -z "$(ls "$OUTBOX/n2" | grep "^nbtest\.$job\.")"
ms=$(grep -h "nccl-bot: epilog of job $job: removed" "$D/log/slurmd-n2.log" | sed -n 's/.*(\([0-9]*\) ms)$/\1/p')
check "  ... within the epilog's budget (${ms:-?} ms < 2500)" test -n "$ms" -a "${ms:-9999}" -lt 2500
check "  ... /etc/shadow untouched" test "$(stat -c '%s %Y' /etc/shadow 2>/dev/null)" = "$shadow"

# ---- the batch step's table at submission: the partition's fabric ----------------------
# fabric a has a snapshot (emulator ranks' spool added with nccl-bot state
# add); the map gives partition debug fabric a, other fabric b (no state)
STATE=$D/nbstate
mkdir -p "$STATE" "$D/emuspool"
"$EMU" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 4000 \
	--plugin "$LIB/libnccl-tuner-bot.so" --spool "$D/emuspool" --measured sim >/dev/null 2>&1
NCCL_BOT_CONFIG=none "$BOT" state add --state "$STATE" --fabric a "$D"/emuspool/*.spool >"$D/add.out" 2>&1
check "a snapshot of fabric a to plan from" test $? -eq 0 -a -n "$(ls "$D"/emuspool/*.spool 2>/dev/null)" ||
	sed 's/^/  # /' "$D/add.out"
printf 'n1 a\nn2 a\nn3 b\nn4 b\npartition:debug a\npartition:other b\n' >"$D/fabric2.map"
cluster_plugstack enable=opt-in mode=on state_dir=$STATE \
	${ARGS/fabric_map=$D\/fabric.map/fabric_map=$D\/fabric2.map}
BATCHSHOW='echo "table=${NCCL_BOT_TABLE-}"'
# submit PARTITION_ARGS...: sbatch -v with them; the verbose line into $ERR,
# the batch step's table into $D/batch.out
submit() {
	job=$(timeout 60 sbatch -v --parsable -N1 -w n1 --nccl-bot=ucb1 -o "$D/batch.out" "$@" \
		--wrap "$BATCHSHOW" 2>"$ERR")
	ended "$job" n1
}
submit -p debug
check "sbatch -p debug (fabric a): the batch step's table from fabric a's snapshot" \
	grep -q 'nccl-bot: batch step: policy ucb1, table from the fabric a snapshot' "$ERR" ||
	grep nccl-bot "$ERR"
ta=$(sed -n 's/^table=//p' "$D/batch.out")
submit --partition=other
check "sbatch --partition=other (fabric b): fabric b, which has no learned state yet" \
	grep -q "table from the fabric b (no learned state yet)" "$ERR" || grep nccl-bot "$ERR"
tb=$(sed -n 's/^table=//p' "$D/batch.out")
check "  ... the two batch steps' tables differ (fabric a's has learned entries)" \
	test -n "$ta" -a -n "$tb" -a "$ta" != "$tb"
SBATCH_PARTITION=debug submit
check "SBATCH_PARTITION=debug: fabric a's snapshot" \
	grep -q 'table from the fabric a snapshot' "$ERR" || grep nccl-bot "$ERR"
submit -p debug,other
check "sbatch -p debug,other: the prior (the partitions span fabrics a and b)" \
	grep -q 'table from the prior (the partitions span fabrics a and b)' "$ERR" ||
	grep nccl-bot "$ERR"
submit
check "sbatch without a partition: slurm.conf's Default=YES partition debug, fabric a's snapshot" \
	grep -q 'table from the fabric a snapshot' "$ERR" || grep nccl-bot "$ERR"
check "  ... the batch step got a table" grep -q '^table=NBT3\.' "$D/batch.out"
# the script's own #SBATCH block, as sbatch reads it (the environment wins)
printf '#!/bin/sh\n#SBATCH -N1\n\n# a comment\n#SBATCH --partition=other -A acct1\n%s\n#SBATCH -p debug\n' \
	"$BATCHSHOW" >"$D/part.sh"
submit_script() {
	job=$(timeout 60 sbatch -v --parsable -w n1 --nccl-bot=ucb1 -o "$D/batch.out" "$@" \
		2>"$ERR")
	ended "$job" n1
}
submit_script "$D/part.sh"
check "#SBATCH --partition=other in the script: fabric b (no learned state yet)" \
	grep -q "table from the fabric b (no learned state yet)" "$ERR" || grep nccl-bot "$ERR"
SBATCH_PARTITION=debug submit_script "$D/part.sh"
check "  ... SBATCH_PARTITION=debug beats it (as in sbatch): fabric a" \
	grep -q 'table from the fabric a snapshot' "$ERR" || grep nccl-bot "$ERR"
cat "$D/part.sh" | timeout 60 sbatch -v --parsable -w n1 --nccl-bot=ucb1 -o "$D/batch.out" \
	2>"$ERR" >"$D/job"
ended "$(cat "$D/job")" n1
check "  ... a script on stdin is not read: the default partition's fabric a" \
	grep -q 'table from the fabric a snapshot' "$ERR" || grep nccl-bot "$ERR"

# partitions=, accounts=, exclude_accounts= for the batch step: the
# partition and account from the command line, the environment, the script
cluster_plugstack enable=default mode=on partitions=other $ARGS
submit_script "$D/part.sh"
check "partitions=other, #SBATCH --partition=other: the batch step gets nccl-bot" \
	grep -q '^table=NBT3\.' "$D/batch.out" || grep nccl-bot "$ERR"
submit
check "partitions=other, no partition named: the default partition debug is not enabled" \
	grep -q '^table=$' "$D/batch.out"
check "  ... the user is told" grep -q 'nccl-bot: not enabled in partition debug' "$ERR" ||
	grep nccl-bot "$ERR"
cluster_plugstack enable=default mode=on partitions=debug $ARGS
submit
check "partitions=debug, no partition named: slurm.conf's default debug, nccl-bot" \
	grep -q '^table=NBT3\.' "$D/batch.out" || grep nccl-bot "$ERR"
cluster_plugstack enable=default mode=on exclude_accounts=acct1 $ARGS
submit -A acct1
check "exclude_accounts=acct1, sbatch -A acct1: the batch step is left alone" \
	grep -q '^table=$' "$D/batch.out" || cat "$D/batch.out"
check "  ... and told why (the user asked)" grep -q 'nccl-bot: not enabled for account acct1' "$ERR" ||
	grep nccl-bot "$ERR"
SBATCH_ACCOUNT=acct1 submit
check "  ... SBATCH_ACCOUNT=acct1: left alone" grep -q '^table=$' "$D/batch.out"
submit_script "$D/part.sh"
check "  ... #SBATCH -A acct1: left alone" grep -q '^table=$' "$D/batch.out"
submit -A acct2
check "  ... sbatch -A acct2: nccl-bot" grep -q '^table=NBT3\.' "$D/batch.out" || grep nccl-bot "$ERR"
job=$(timeout 60 sbatch -v --parsable -N1 -w n1 -o "$D/batch.out" --wrap "$BATCHSHOW" 2>"$ERR")
ended "$job" n1
check "  ... no account named (it may be the user's default, acct1): left alone" \
	grep -q '^table=$' "$D/batch.out"
check "  ... and sbatch -v says why" \
	grep -q 'nccl-bot: batch step: the account is not known at submission (not given by -A, SBATCH_ACCOUNT or #SBATCH -A)' "$ERR" ||
	grep nccl-bot "$ERR"
cluster_plugstack enable=default mode=on accounts=acct1 $ARGS
submit -A acct1
check "accounts=acct1, sbatch -A acct1: the batch step gets nccl-bot" \
	grep -q '^table=NBT3\.' "$D/batch.out" || grep nccl-bot "$ERR"
submit_script "$D/part.sh"
check "  ... #SBATCH -A acct1: nccl-bot" grep -q '^table=NBT3\.' "$D/batch.out" || grep nccl-bot "$ERR"

# ---- the same map in the site configuration (config=, formats.md 15 v2) ---------------
# no fabric_map=: config= names a version 2 file whose fabric_map gives
# n1,n2 and partition debug fabric a, n3,n4 and partition other fabric b,
# and whose state_dir is the state above
cat >"$D/site.yaml" <<SITE
version: 2
state_dir: $STATE
fabric_map:
  a:
    nodes: "n[1-2]"
    partitions: [debug]
  b:
    nodes: [n3, n4]
    partitions: other
SITE
YARGS="${ARGS/fabric_map=$D\/fabric.map /} config=$D/site.yaml"
cluster_plugstack enable=opt-in mode=on $YARGS
run srun -v -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "config= with fabric_map: srun on n1,n2 plans from fabric a's snapshot" \
	grep -q 'table from the fabric a snapshot' "$ERR" || grep nccl-bot "$ERR"
ended "$job" n1,n2
d=$OUTBOX/n1/nbtest.$job.0.0.n1.nbd
check "  ... the epilog stamps the delta with the map's fabric a" \
	test -f "$d" -a "$(str "$d" 144)" = a || grep -h "job $job" "$D"/log/slurmd-n1.log | grep nccl-bot | sed 's/^/  # /'
run srun -v -N1 -n1 -w n3 --nccl-bot=ucb1 sh -c "$EMUCMD"
check "  ... on n3: fabric b (no learned state yet)" \
	grep -q 'table from the fabric b (no learned state yet)' "$ERR" || grep nccl-bot "$ERR"
run srun -v -N2 -n2 -w n2,n3 --nccl-bot=ucb1 sh -c "$EMUCMD"
job=$(tail -n 1 "$OUT")
check "  ... n2,n3: the prior (the step's nodes span fabrics a and b)" \
	grep -q "table from the prior (the step's nodes span fabrics a and b)" "$ERR" || grep nccl-bot "$ERR"
ended "$job" n2,n3
check "  ... and no delta on either node (its nodes mapped through the same map)" \
	test -n "$job" -a -z "$(ls "$OUTBOX/n2" "$OUTBOX/n3" | grep "^nbtest\.$job\.")"
check "  ... the slurmd log says why" \
	sh -c "grep -h 'nccl-bot' '$D'/log/slurmd-n2.log | grep -q 'step ran on the prior: the step.s nodes span fabrics a and b'"
submit -p debug
check "  ... sbatch -p debug: the map's partition gives fabric a's snapshot" \
	grep -q 'nccl-bot: batch step: policy ucb1, table from the fabric a snapshot' "$ERR" ||
	grep nccl-bot "$ERR"
cluster_plugstack enable=opt-in mode=on $YARGS fabric_map=$D/fabric.map
run srun -v -N1 -n1 -w n1 --nccl-bot=ucb1 true
check "fabric_map= and config= with a map: refused, the user is told naming both" \
	grep -q "two fabric maps: fabric_map=$D/fabric.map and the fabric_map of $D/site.yaml" "$ERR" ||
	grep nccl-bot "$ERR"
check "  ... and the step runs on the prior" \
	grep -q 'table from the prior (the fabric map cannot be read)' "$ERR" || grep nccl-bot "$ERR"
cluster_plugstack enable=opt-in mode=on $ARGS

# require_gpus=1 reads the GPUs a step asks for on srun's and sbatch's
# command lines and in #SBATCH (it read only the environment, where they
# put none of their own options, until 2026-12-04: --gpus steps were left out)
if [ -n "$GPUS" ]; then
	TUNER="tuner=$LIB/libnccl-tuner-bot.so"
	has_ours() { grep -q "$TUNER" "$1" || { echo "  not ours:"; cat "$1" "$ERR"; return 1; }; }
	cluster_plugstack enable=default mode=on require_gpus=1 $ARGS
	SHOWT='echo "tuner=${NCCL_TUNER_PLUGIN-}"'
	for o in --gpus=1 --gres=gpu:1 --gpus-per-node=1 -G1; do
		run srun -N1 -n1 -w n1 "$o" sh -c "$SHOWT"
		check "require_gpus=1: srun $o gets nccl-bot" has_ours "$OUT"
	done
	run srun -N1 -n1 -w n1 --gres=gpu:0 sh -c "$SHOWT"
	check "  ... srun --gres=gpu:0 does not" grep -q '^tuner=$' "$OUT"
	run sbatch --wait -N1 -w n1 --gpus=1 -o "$D/g.out" --wrap "$SHOWT"
	check "  ... sbatch --gpus=1: the batch step gets it" has_ours "$D/g.out"
	printf '#!/bin/sh\n#SBATCH --gres=gpu:1\n%s\n' "$SHOWT" >"$D/g.sh"
	run sbatch --wait -N1 -w n1 -o "$D/g2.out" "$D/g.sh"
	check "  ... #SBATCH --gres=gpu:1: the batch step gets it" has_ours "$D/g2.out"
	cluster_plugstack enable=opt-in mode=on $ARGS
else
	echo "skip - require_gpus=1 with GPUs (no /dev/tty1, /dev/tty2 to stand in for them)"
fi

# a heterogeneous step's summary counts every component's ranks
run srun -N1 -n2 -w n1 --nccl-bot=ucb1 true : -N2 -n3 -w n2,n3 true
check "a heterogeneous step of 2+3 ranks: the summary expects 5" \
	grep -q 'nccl-bot: step [0-9]*\.0: .* of 5 ranks' "$ERR" || grep nccl-bot "$ERR"

check "no node drained" undrained
t1=$(date +%s%N)
echo "# cluster up in $(((t_up - t0) / 1000000)) ms, whole test $(((t1 - t0) / 1000000)) ms"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
