#!/bin/bash
# test_slurm.sh - spank_nccl_bot.so in a real Slurm cluster of four emulated
# nodes on this host (tests/slurm/cluster.sh): srun, sbatch and salloc as
# users meet it, and plugstack.conf as administrators write it. Tasks print
# their environment; every check says what it expected. Skips (77) only
# where Slurm is not installed (scripts/setup installs it), where this is
# not root (slurmd runs as root), or where the plugin was not built.
#
# Prints one line per check, then "N passed, N failed" and the time taken.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
. "$srcdir/tests/slurm/cluster.sh"

. "$srcdir/tests/slurm/lib.sh"
slurm_test_needs test_slurm.sh "$LIB/libnccl-tuner-bot.so"

t0=$(date +%s%N)
cluster_init || exit 99
trap 'cluster_down' EXIT
# srun, sbatch and salloc run from the cluster's directory: a step's report
# directory (nccl-bot-<jobid>/ in the working directory) and sbatch's
# output files stay out of the build tree and go with the cluster
mkdir -p "$D/work" && cd "$D/work" || exit 99
BASE="lib_prefix=$LIB policies=ucb1"
cluster_plugstack enable=opt-in mode=on $BASE
cluster_up || exit 99
t_up=$(date +%s%N)

# A task's line: its node, then the variables NCCL reads.
SHOW='echo "$SLURMD_NODENAME tuner=${NCCL_TUNER_PLUGIN-} profiler=${NCCL_PROFILER_PLUGIN-} table=${NCCL_BOT_TABLE-}"'
OUT=$D/out
ERR=$D/err

# The policy a step table was compiled for (doc/formats.md section 8: the
# payload's second byte), "" for no table.
table_policy() {
	t=$1
	[ -n "$t" ] || return 0
	p=${t#NBT3.*.}
	p=$(printf '%s' "$p" | tr '_-' '/+')
	while [ $((${#p} % 4)) -ne 0 ]; do p="$p="; done
	printf '%s' "$p" | base64 -d 2>/dev/null | od -An -tu1 -j1 -N1 | tr -d ' '
}
# field NAME LINE: a task line's value of NAME
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# every task line names our library and one table; they are all alike
alike_ours() {
	want_lines=$1
	[ "$(wc -l <"$OUT")" -eq "$want_lines" ] || { echo "  want $want_lines lines:"; cat "$OUT"; return 1; }
	[ "$(cut -d' ' -f2- "$OUT" | sort -u | wc -l)" -eq 1 ] || { echo "  tasks differ:"; cat "$OUT"; return 1; }
	l=$(head -n 1 "$OUT")
	[ "$(field tuner "$l")" = "$LIB/libnccl-tuner-bot.so" ] &&
		[ "$(field profiler "$l")" = "$LIB/libnccl-tuner-bot.so" ] &&
		case $(field table "$l") in NBT3.*) true ;; *) false ;; esac ||
		{ echo "  not ours:"; cat "$OUT" "$ERR"; return 1; }
}
policy_is() {
	got=$(table_policy "$(field table "$(head -n 1 "$OUT")")")
	[ "$got" = "$1" ] || { echo "  table policy '$got', want $1"; return 1; }
}
none_ours() {
	! grep -q 'table=NBT3' "$OUT" && ! grep -q "tuner=$LIB" "$OUT" ||
		{ echo "  nccl-bot set:"; cat "$OUT"; return 1; }
}
err_has() { grep -q -- "$1" "$ERR" || { echo "  stderr lacks '$1':"; cat "$ERR"; return 1; }; }

# ---- users ---------------------------------------------------------------
for cmd in srun sbatch salloc; do
	check "$cmd --help lists --nccl-bot" sh -c "$cmd --help 2>&1 | grep -q -- '--nccl-bot=POLICY|shadow|off'"
done

run srun -N4 -n4 --nccl-bot=ucb1 sh -c "$SHOW"
check "srun --nccl-bot=ucb1: every task on 4 nodes has the same tuner, profiler and table" alike_ours 4
check "srun --nccl-bot=ucb1: 4 nodes" test "$(cut -d' ' -f1 "$OUT" | sort -u | tr '\n' ' ')" = "n1 n2 n3 n4 "
check "srun --nccl-bot=ucb1: the table's policy is ucb1 (4)" policy_is 4

# NCCL emulator ranks (tests/emulator/): each task loads the library NCCL
# is pointed at and decides from the table it was given, as NCCL would
EMU=$builddir/tests/emulator/nccl-emu
if [ -x "$EMU" ]; then
	run srun -N4 -n4 --nccl-bot=ucb1 sh -c "\"$EMU\" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 200 --plugin \"\$NCCL_TUNER_PLUGIN\" --table \"\$NCCL_BOT_TABLE\""
	check "emulator ranks on 4 nodes load the pinned library and decide alike from the table" \
		test "$(grep -c '^PASS consistency/ucb1/base: 6 comms: 6 IDENTICAL' "$OUT")" -eq 4
	check "  ... and nothing failed" test "$(grep -c '^[0-9]* passed, 0 failed' "$OUT")" -eq 4
else
	echo "skip - emulator ranks ($EMU not built)"
fi

run srun -N2 -n2 sh -c "$SHOW"
check "opt-in, no option: nothing set" none_ours

run srun -N1 -n1 --nccl-bot=sweep true
check "a policy the cluster does not allow is refused" test $? -ne 0
check "  ... with a message naming the allowed ones" err_has "this cluster does not let users pick that policy; allowed: greedy,ucb1, shadow or off"

run srun -N1 -n1 --nccl-bot=bogus true
check "an unknown policy is refused" test $? -ne 0
check "  ... naming it" err_has "nccl-bot=bogus: not a policy"

# ranks that are grandchildren of the task (a torchrun-like launcher)
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "sh -c 'sh -c \"\$0\" & wait' '$SHOW'"
check "grandchild ranks (a launcher in between) inherit the same values" alike_ours 2

run srun -N2 -n2 --export=NONE --nccl-bot=ucb1 /bin/sh -c "$SHOW"
check "srun --export=NONE --nccl-bot=ucb1: the decision reaches the tasks" alike_ours 2

# ---- the administrator's default ------------------------------------------
cluster_plugstack enable=default mode=on policy=greedy $BASE
run srun -N2 -n2 sh -c "$SHOW"
check "enable=default, no option: every task gets nccl-bot" alike_ours 2
check "  ... with the admin's policy greedy (2)" policy_is 2

run srun -N2 -n2 --nccl-bot=off sh -c "$SHOW"
check "enable=default, --nccl-bot=off: nothing set" none_ours
# a step that runs no NCCL, not asked for: no line on every user's terminal
# (one per step until 2026-12-04), srun -v shows it
run srun -N2 -n2 true
check "enable=default, a step that loads no tuner: no summary line" test "$(grep -c 'nccl-bot: step' "$ERR")" = 0
run srun -v -N1 -n1 true
check "  ... srun -v shows it" err_has "nccl-bot: step [0-9]*\.0: "
run srun -N1 -n1 --nccl-bot true
check "  ... and so does a step that asked" err_has "nccl-bot: step [0-9]*\.0: "

NCCL_TUNER_PLUGIN=mine.so run srun -N1 -n1 sh -c "$SHOW"
check "admin default keeps a user's NCCL_TUNER_PLUGIN (and sets nothing)" grep -q 'tuner=mine.so profiler= table=$' "$OUT"
check "  ... and one line says nccl-bot stood aside" \
	err_has "nccl-bot: step: nccl-bot stood aside: the tuner plugin is the user's mine.so, kept"

# the report's facts pinned with the decision ("MODE PLUGIN SOURCE"): who won
INFO='echo "info=${SLURM_NCCL_BOT_REPORT_INFO-}"'
NCCL_PROFILER_PLUGIN=myprof.so run srun -N1 -n1 sh -c "$INFO"
check "admin default keeps a user's NCCL_PROFILER_PLUGIN: the report info says kept" \
	grep -q '^info=on kept prior$' "$OUT" || cat "$OUT"

NCCL_TUNER_PLUGIN=mine.so run srun -N1 -n1 --nccl-bot=ucb1 sh -c "$SHOW"
check "--nccl-bot replaces a user's NCCL_TUNER_PLUGIN" alike_ours 1
check "  ... with a warning naming it" err_has "replacing the user's NCCL_TUNER_PLUGIN=mine.so"
NCCL_TUNER_PLUGIN=mine.so run srun -N1 -n1 --nccl-bot=ucb1 sh -c "$INFO"
check "  ... and the report info says replaced" grep -q '^info=on replaced prior$' "$OUT" || cat "$OUT"

# a user's plugin named in --export's list, which srun keeps out of its own
# environment: read from srun's command line, as if it were in it (replaced
# unseen until 2026-12-04); sbatch's list is SLURM_EXPORT_ENV, which its
# sruns inherit too
mine_kept() {
	[ "$(wc -l <"$OUT")" -eq "$1" ] && [ "$(sed 's/^n[1-4] //' "$OUT" | sort -u)" = "tuner=mine.so profiler= table=" ] ||
		{ echo "  want $1 lines, mine.so alone:"; cat "$OUT" "$ERR"; return 1; }
}
run srun -N2 -n2 --export=ALL,NCCL_TUNER_PLUGIN=mine.so sh -c "$SHOW"
check "srun --export=ALL,NCCL_TUNER_PLUGIN=mine.so: the admin's default keeps it on every node" mine_kept 2
check "  ... and one line says nccl-bot stood aside" \
	err_has "nccl-bot: step: nccl-bot stood aside: the tuner plugin is the user's mine.so, kept"
run srun -N2 -n2 --export=ALL,NCCL_TUNER_PLUGIN=mine.so --nccl-bot=ucb1 sh -c "$SHOW"
check "  ... --nccl-bot replaces it" alike_ours 2
check "  ... with a warning naming it" err_has "replacing the user's NCCL_TUNER_PLUGIN=mine.so"
run sbatch --wait -N1 --export=ALL,NCCL_TUNER_PLUGIN=mine.so -o "$D/exp.out" --wrap "$SHOW; srun -N1 -n1 sh -c '$SHOW'"
check "sbatch --export=ALL,NCCL_TUNER_PLUGIN=mine.so: the batch step and its srun keep it" \
	test "$(grep -c 'tuner=mine.so profiler= table=$' "$D/exp.out")" = 2
NCCL_TUNER_PLUGIN=mine.so SLURM_EXPORT_ENV=NONE SRUN_EXPORT_ENV=ALL run srun -N1 -n1 sh -c "$SHOW"
check "SRUN_EXPORT_ENV=ALL over SLURM_EXPORT_ENV=NONE (as srun reads them): the user's tuner kept" mine_kept 1
NCCL_TUNER_PLUGIN=mine.so run srun -N2 -n2 --export=NONE /bin/sh -c "$SHOW"
check "srun --export=NONE: srun's own NCCL_TUNER_PLUGIN does not reach the tasks, nothing kept" \
	alike_ours 2
# an empty NCCL_TUNER_PLUGIN is unset (as NCCL reads it): nothing kept
NCCL_TUNER_PLUGIN= run srun -N1 -n1 sh -c "$INFO"
check "an empty NCCL_TUNER_PLUGIN: the report info says none, not kept" grep -q '^info=on none prior$' "$OUT" || cat "$OUT"
run srun -N1 -n1 --nccl-bot=OFF sh -c "$SHOW"
check "--nccl-bot=OFF (any case, as policy names): nothing set" none_ours

# ---- sbatch and salloc ------------------------------------------------------
cat >"$D/job.sh" <<EOF
#!/bin/sh
#SBATCH -N2
#SBATCH --nccl-bot=ucb1
#SBATCH -o $D/job.out
echo "batch \$(SLURMD_NODENAME=b; $SHOW)"
srun -N2 -n2 sh -c '$SHOW'
EOF
timeout 60 sbatch --wait "$D/job.sh" >"$D/sbatch.out" 2>&1
check "#SBATCH --nccl-bot=ucb1: the job ran" test $? -eq 0
grep -v -e '^batch' -e '^nccl-bot: step ' "$D/job.out" >"$OUT" 2>/dev/null; : >"$ERR"
check "#SBATCH --nccl-bot=ucb1: the inner srun's tasks get nccl-bot" alike_ours 2
check "  ... with ucb1's table" policy_is 4
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "#SBATCH --nccl-bot=ucb1: the batch step itself gets nccl-bot (pinned at submit)" grep -q "tuner=$LIB/libnccl-tuner-bot.so" "$OUT"
check "  ... with ucb1's table" policy_is 4

sed 's/--nccl-bot=ucb1/--nccl-bot/' "$D/job.sh" >"$D/job2.sh"
timeout 60 sbatch --wait "$D/job2.sh" >"$D/sbatch.out" 2>&1
check "#SBATCH --nccl-bot (bare): the job and its inner srun ran (\"(null)\" handled)" test $? -eq 0
grep -v -e '^batch' -e '^nccl-bot: step ' "$D/job.out" >"$OUT" 2>/dev/null
check "#SBATCH --nccl-bot (bare): the inner srun's tasks get nccl-bot" alike_ours 2
check "  ... with the admin's policy greedy (2)" policy_is 2

# sbatch --export=NONE: the batch step and its inner srun get only SLURM_*
# from the submission; the pins carry the decision (this one takes ~10 s:
# Slurm loads the user's login environment for --export=NONE)
# (tasks of the inner srun inherit --export=NONE: no PATH, absolute paths)
sed 's|^srun -N2 -n2 sh|/usr/bin/srun -N2 -n2 /bin/sh|' "$D/job.sh" >"$D/job3.sh"
timeout 60 sbatch --export=NONE --wait "$D/job3.sh" >"$D/sbatch.out" 2>&1
check "sbatch --export=NONE, #SBATCH --nccl-bot=ucb1: the job ran" test $? -eq 0
grep -v -e '^batch' -e '^nccl-bot: step ' "$D/job.out" >"$OUT" 2>/dev/null
check "  ... the inner srun's tasks get nccl-bot" alike_ours 2
check "  ... with ucb1's table" policy_is 4
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... and so does the batch step" grep -q "tuner=$LIB/libnccl-tuner-bot.so profiler=$LIB/libnccl-tuner-bot.so table=NBT3" "$OUT"

# sbatch --export-file: sbatch drops its own environment (our variables with
# it) after the plugin ran, so the batch step cannot get nccl-bot; its sruns
# get the option and decide. Said to a user who asked (silent until
# 2026-12-04)
printf 'PATH=/usr/bin:/bin\0HOME=/tmp\0' >"$D/env.file"
timeout 60 sbatch --export-file="$D/env.file" --wait "$D/job.sh" >"$D/sbatch.out" 2>&1
check "sbatch --export-file, #SBATCH --nccl-bot=ucb1: the job ran" test $? -eq 0
check "  ... sbatch says the batch step runs without nccl-bot" \
	grep -q "nccl-bot: the batch step runs without nccl-bot: sbatch --export-file" "$D/sbatch.out"
grep -v -e '^batch' -e '^nccl-bot: step ' "$D/job.out" >"$OUT" 2>/dev/null
check "  ... the inner srun's tasks get nccl-bot" alike_ours 2
check "  ... with ucb1's table" policy_is 4
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... the batch step gets none of ours" grep -q "tuner= profiler= table=$" "$OUT"

# SBATCH_EXPORT_FILE is no input variable of sbatch (22.05 to 25.05 read
# none): the batch step keeps nccl-bot, nothing said (taken for
# --export-file, the batch step left without nccl-bot, until 2026-12-04)
SBATCH_EXPORT_FILE="$D/env.file" timeout 60 sbatch --wait "$D/job.sh" >"$D/sbatch.out" 2>&1
check "SBATCH_EXPORT_FILE set: the job ran" test $? -eq 0
check "  ... nothing said of --export-file" sh -c "! grep -q -- '--export-file' '$D/sbatch.out'"
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... the batch step gets nccl-bot" grep -q "tuner=$LIB/libnccl-tuner-bot.so profiler=$LIB/libnccl-tuner-bot.so table=NBT3" "$OUT"

# a heterogeneous job's later component with #SBATCH --export-file: sbatch
# reads it after the batch step's (the first component's) environment is
# built, which keeps nccl-bot (the whole script was read, the batch step
# left without nccl-bot, until 2026-12-04)
{ head -n 4 "$D/job.sh"; echo "#SBATCH hetjob"; echo "#SBATCH -N1 --export-file=$D/env.file"
  tail -n 2 "$D/job.sh"; } >"$D/jobhet.sh"
timeout 60 sbatch --wait "$D/jobhet.sh" >"$D/sbatch.out" 2>&1
check "#SBATCH hetjob, then #SBATCH --export-file: the job ran" test $? -eq 0
check "  ... nothing said of --export-file" sh -c "! grep -q -- '--export-file' '$D/sbatch.out'"
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... the batch step gets nccl-bot" grep -q "tuner=$LIB/libnccl-tuner-bot.so profiler=$LIB/libnccl-tuner-bot.so table=NBT3" "$OUT"
# on the command line, an --export-file of any component is the job's
# (sbatch reads them all first): said (":" was taken for the script until
# 2026-12-04)
timeout 60 sbatch --wait -N2 : --export-file="$D/env.file" -N1 "$D/job.sh" >"$D/sbatch.out" 2>&1
check "sbatch -N2 : --export-file=F -N1: the job ran" test $? -eq 0
check "  ... sbatch says the batch step runs without nccl-bot" \
	grep -q "nccl-bot: the batch step runs without nccl-bot: sbatch --export-file" "$D/sbatch.out"
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... the batch step gets none of ours" grep -q "tuner= profiler= table=$" "$OUT"

# #SBATCH --export-file where the command line names everything else the
# script is read for (-p, -A, GPUs, -D, --export): said (the script was not
# read then until 2026-12-04)
{ head -n 1 "$D/job.sh"; echo "#SBATCH --export-file=$D/env.file"; tail -n +2 "$D/job.sh"; } >"$D/jobef.sh"
timeout 60 sbatch --wait -p debug -A acct1 --gpus=0 -D "$D/work" --export=ALL "$D/jobef.sh" \
	>"$D/sbatch.out" 2>&1
check "sbatch -p -A --gpus=0 -D --export, #SBATCH --export-file: the job ran" test $? -eq 0
check "  ... sbatch says the batch step runs without nccl-bot" \
	grep -q "nccl-bot: the batch step runs without nccl-bot: sbatch --export-file" "$D/sbatch.out"
grep '^batch' "$D/job.out" | sed 's/^batch //' >"$OUT"
check "  ... the batch step gets none of ours" grep -q "tuner= profiler= table=$" "$OUT"

run salloc -N2 --nccl-bot=ucb1 srun -N2 -n2 sh -c "$SHOW"
grep -v '^salloc' "$OUT" >"$OUT.t"; mv "$OUT.t" "$OUT"
check "salloc --nccl-bot=ucb1 + srun: every task gets ucb1" alike_ours 2
check "  ... with ucb1's table" policy_is 4

# a heterogeneous step: one decision for all its components (made in
# srun's second init_post_opt; tests/slurm/test_slurm_misc.sh has more)
run srun -N1 -n1 --nccl-bot=ucb1 sh -c "$SHOW" : -N1 -n1 sh -c "$SHOW"
check "a heterogeneous step: both components get the same nccl-bot variables" alike_ours 2
check "  ... with ucb1's table" policy_is 4
run salloc -N2 --nccl-bot=ucb1 srun -N1 -n1 sh -c "$SHOW" : -N1 -n1 sh -c "$SHOW"
check "a heterogeneous step inside salloc --nccl-bot=ucb1: both components alike" alike_ours 2

# ---- rollout controls ---------------------------------------------------------
cluster_plugstack enable=opt-in mode=shadow $BASE
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "mode=shadow: the tasks get nccl-bot" alike_ours 2
check "  ... with the shadow policy (11)" policy_is 11
check "  ... and the user is told" err_has "shadow mode on this cluster"

cluster_plugstack enable=opt-in mode=on kill_switch=$D/disable $BASE
touch "$D/disable"
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "kill switch present: nothing set" none_ours
check "  ... the user is told" err_has "kill switch $D/disable exists"
rm -f "$D/disable"
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "kill switch removed: nccl-bot again" alike_ours 2
# a batch step decided at submission, queued, then the switch placed: its
# slurmstepd (the batch step is one task on one node) drops what was pinned
ended() { timeout 60 srun -N1 -n1 -w "$2" --dependency=afterany:"$1" true >/dev/null 2>&1; }
job=$(timeout 60 sbatch -H --parsable -N1 -w n2 --nccl-bot=ucb1 -o "$D/ks.out" \
	--wrap "$SHOW; $INFO; env | grep -c '^SLURM_NCCL_BOT_PIN_'" 2>"$ERR")
touch "$D/disable"
scontrol release "$job"
ended "$job" n2
sed -n 's/^n2 //p' "$D/ks.out" >"$OUT"
check "a queued batch step, the kill switch placed before it starts: it ran" test -s "$OUT" ||
	cat "$D/ks.out"
check "  ... with nothing of ours" none_ours
check "  ... no pins left in its environment" test "$(tail -n 1 "$D/ks.out")" = 0
check "  ... its report info says why" \
	grep -q "^info=on none prior (nccl-bot switched off by the administrator: the kill switch $D/disable exists)" \
	"$D/ks.out"
check "  ... and the slurmd log" grep -q "nccl-bot: the kill switch $D/disable exists: the batch step runs without nccl-bot" \
	"$D"/log/slurmd-n2.log
rm -f "$D/disable"
job=$(timeout 60 sbatch -H --parsable -N1 -w n2 --nccl-bot=ucb1 -o "$D/ks.out" --wrap "$SHOW" 2>"$ERR")
scontrol release "$job"
ended "$job" n2
check "  ... without the switch the same batch step gets nccl-bot" grep -q "tuner=$LIB/libnccl-tuner-bot.so" "$D/ks.out"

cluster_plugstack enable=default mode=on partitions=other $BASE
run srun -N1 -n1 -p other sh -c "$SHOW"
check "partitions=other: a step in partition other gets nccl-bot" alike_ours 1
run srun -N1 -n1 sh -c "$SHOW"
check "partitions=other: a step in debug does not" none_ours
# a job submitted to several partitions: where the step is decided the one
# it runs in is known inside an allocation, not for srun's own (until
# 2026-12-04 the list was taken as one name: never enabled)
run srun -N1 -n1 -p other,debug --nccl-bot sh -c "$SHOW"
check "partitions=other, srun -p other,debug --nccl-bot: not used" none_ours
check "  ... and the user is told why" err_has "may run in any of partitions other,debug, and nccl-bot is not enabled in debug"
run sbatch --wait -N1 -p debug,other -o "$D/parts.out" --wrap "echo part=\$SLURM_JOB_PARTITION; srun -N1 -n1 --nccl-bot sh -c '$SHOW'"
part_decided() {
	p=$(sed -n 's/^part=//p' "$D/parts.out")
	case $p in
	other) grep -q "tuner=$LIB/libnccl-tuner-bot.so" "$D/parts.out" ;;
	debug) grep -q "tuner= profiler= table=$" "$D/parts.out" ;;
	*) false ;;
	esac || { echo "  partition '$p':"; cat "$D/parts.out"; return 1; }
}
check "sbatch -p debug,other: its srun decides by the partition the job runs in" part_decided

cluster_plugstack enable=default mode=on require_gpus=1 $BASE
run srun -N1 -n1 sh -c "$SHOW"
check "require_gpus=1: a step without GPUs is left alone" none_ours
run srun -N1 -n1 --nccl-bot sh -c "$SHOW"
check "  ... and a user who asked is told" err_has "the step asks for no GPUs (require_gpus=1"

cluster_plugstack enable=off $BASE
run srun -N1 -n1 --nccl-bot=ucb1 sh -c "$SHOW"
check "enable=off: nothing set, even when asked" none_ours
check "  ... the user is told" err_has "switched off on this cluster (enable=off)"
run srun -N1 -n1 --nccl-bot=greedy sh -c "$SHOW"
check "  ... a policy users may not pick: the step still runs (it failed until 2026-12-04)" grep -q "^n[1-4] tuner= " "$OUT"
check "  ... told nccl-bot is off" err_has "switched off on this cluster (enable=off)"

# two plugstack.conf lines loading the plugin: off, loudly, not each hook twice
printf 'optional %s enable=default mode=on %s\noptional %s enable=default mode=on %s\n' \
	"$CLUSTER_PLUGIN" "$BASE" "$CLUSTER_PLUGIN" "$BASE" >"$D/etc/plugstack.conf.new" &&
	mv -f "$D/etc/plugstack.conf.new" "$D/etc/plugstack.conf"
run srun -N1 -n1 sh -c "$SHOW"
check "the plugin on two plugstack.conf lines: nothing set" none_ours
check "  ... and the step ran" grep -q "^n[1-4] tuner=" "$OUT"
run srun -N1 -n1 --nccl-bot sh -c "$SHOW"
check "  ... a user who asked is told why" err_has "plugstack.conf loads spank_nccl_bot.so on two lines; remove one"
check "  ... no summary line" test "$(grep -c 'nccl-bot: step' "$ERR")" = 0

cluster_plugstack enable=bogus $BASE
run srun -N1 -n1 --nccl-bot sh -c "$SHOW"
check "a bad plugstack.conf argument: nothing set" none_ours
check "  ... and the step ran" grep -q "^n[1-4] tuner=" "$OUT"
check "  ... and the user who asked is told which argument" err_has "plugstack.conf argument enable=bogus: want off, opt-in or default"

# ---- the site configuration and a fabric's state -------------------------------
mkdir -p "$D/nbstate"
printf 'version: 1\nstate_dir: %s\nfabrics: [a, b]\n' "$D/nbstate" >"$D/site.yaml"
cluster_plugstack enable=opt-in mode=on config=$D/site.yaml fabric=a $BASE
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "config= with state_dir and fabric=a (no state yet): the step gets nccl-bot" alike_ours 2
check "  ... quietly (the step's summary line only)" sh -c "! grep -v '^nccl-bot: step ' '$ERR' | grep -q ."
cluster_plugstack enable=opt-in mode=on config=$D/missing.yaml fabric=a $BASE
run srun -N2 -n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "config= naming a missing file: the step still gets nccl-bot (the prior)" alike_ours 2
check "  ... and the user is told" err_has "missing.yaml"

printf 'n1 a\nn2 a\nn3 b\nn4 b\n' >"$D/fabric.map"
cluster_plugstack enable=opt-in mode=on state_dir=$D/nbstate fabric_map=$D/fabric.map $BASE
run srun -v -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$SHOW"
check "fabric_map=: a step on n1,n2 gets nccl-bot" alike_ours 2
check "  ... planned from fabric a's state" err_has "table from the fabric a (no learned state yet)"
run srun -v -N4 -n4 --nccl-bot=ucb1 sh -c "$SHOW"
check "fabric_map=: a step on n1..n4 gets nccl-bot" alike_ours 4
check "  ... on the prior: it spans both fabrics" err_has "table from the prior (the step's nodes span fabrics a and b)"
# a user who is not root (srun, its plugin and the tasks run as that user)
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1; then
	run runuser -u nobody -- srun -v -D / -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$SHOW"
	grep -v '^srun:' "$OUT" >"$OUT.t"; mv "$OUT.t" "$OUT"
	check "as user nobody: every task gets nccl-bot" alike_ours 2
	check "  ... planned from fabric a's state (a map owned by root is read)" err_has "table from the fabric a (no learned state yet)"
	run runuser -u nobody -- srun -D / -N2 -n2 sh -c 'id -un'
	check "  ... the tasks ran as nobody" test "$(sort -u "$OUT")" = nobody
else
	echo "skip - a user who is not root (no user nobody or no runuser)"
fi
printf 'n1 a\n' >"$D/fabric.map"
run srun -v -N1 -n1 -w n3 --nccl-bot=ucb1 sh -c "$SHOW"
check "fabric_map=: a node the map does not name: the prior" err_has "table from the prior (node n3 is not in the fabric map)"

# ---- a node without the rank library ------------------------------------------
# srun sees the library (a bind mount in its own mount namespace); the
# nodes' slurmstepd do not.
mkdir -p "$D/lib"
cluster_plugstack enable=opt-in mode=on lib_prefix=$D/lib policies=ucb1
if unshare -m true 2>/dev/null; then
	timeout 60 unshare -m sh -c "mount --bind '$LIB' '$D/lib' && srun -N1 -n1 -w n3 --nccl-bot=ucb1 sh -c 'echo ran'" >"$OUT" 2>"$ERR"
	check "a node without the rank library: the step fails" test $? -ne 0
	check "  ... its task never ran" sh -c "! grep -q ran '$OUT'"
	check "  ... the message names the node" err_has "node n3 cannot run this step with nccl-bot: the rank-side library"
else
	echo "skip - a node without the rank library (no mount namespace here)"
fi

# nodes stayed up: nothing drained
undrained() {
	st=$(sinfo -h -p debug -o '%t' | sort -u | tr '\n' ' ')
	case $st in *drain*|*drng*|*down*|*fail*) echo "  node states: $st"; return 1 ;; esac
}
check "no node drained or down" undrained

t1=$(date +%s%N)
echo "$pass passed, $fail failed; cluster up in $(((t_up - t0) / 1000000)) ms, all in $(((t1 - t0) / 1000000)) ms"
[ $fail -eq 0 ]
