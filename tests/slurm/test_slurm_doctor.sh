#!/bin/bash
# test_slurm_doctor.sh - `nccl-bot doctor` against the test cluster
# (tests/slurm/cluster.sh): the real plugin built here, the real Slurm's
# version (slurmd -V), the cluster's own plugstack.conf. Run as each
# slurmd's HealthCheckProgram (at its start), on the host for
# every node name and as a job step on every node (where %n is the node
# the task runs on, as a health check sees it): healthy; then one node's
# outbox removed: that node alone reports it, exit 1 naming the node's
# path; a plugstack.conf naming the plugin twice is refused; no node
# drained. Skips (77) as test_slurm.sh does.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
. "$srcdir/tests/slurm/cluster.sh"

. "$srcdir/tests/slurm/lib.sh"
slurm_test_needs test_slurm_doctor.sh
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
	echo "test_slurm_doctor.sh: /dev/shm is not a tmpfs here" >&2
	exit 77
fi
CHECK_SHOWS_OUT=1

cluster_init || exit 99
SPOOL=/dev/shm/nb-doctor-$$
trap 'cluster_down; rm -rf "$SPOOL"-n[1-4]' EXIT
OUTBOX=$D/outbox
mkdir -p "$OUTBOX/n1" "$OUTBOX/n2" "$OUTBOX/n3" "$OUTBOX/n4"
ARGS="enable=opt-in mode=shadow lib_prefix=$LIB spool_dir=$SPOOL-%n outbox_dir=$OUTBOX/%n harvest_helper=$HELPER state_dir=$D/state"
cluster_plugstack $ARGS
# the node health check: slurmd runs it at its start (and every
# HealthCheckInterval); it records what doctor said, per node
cat >"$D/healthcheck.sh" <<HC
#!/bin/sh
"$BOT" doctor --node --plugstack "$D/etc/plugstack.conf" >"$D/hc-\$SLURMD_NODENAME.out.tmp" 2>&1
echo "rc=\$?" >>"$D/hc-\$SLURMD_NODENAME.out.tmp"
mv "$D/hc-\$SLURMD_NODENAME.out.tmp" "$D/hc-\$SLURMD_NODENAME.out"
HC
chmod 755 "$D/healthcheck.sh"
printf 'HealthCheckProgram=%s\nHealthCheckInterval=3600\nHealthCheckNodeState=ANY\n' \
	"$D/healthcheck.sh" >>"$D/etc/slurm.conf"
cluster_up || exit 99
OUT=$D/out
PS=$D/etc/plugstack.conf
undrained() {
	st=$(sinfo -h -p debug -o '%t' | sort -u | tr '\n' ' ')
	case $st in *drain*|*drng*|*down*|*fail*) echo "  node states: $st"; return 1 ;; esac
}

# slurmd ran the health check before the node went idle (cluster_up waits
# for idle); bounded poll for its file all the same (renamed when done)
i=0
while [ "$(ls "$D"/hc-n[1-4].out 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 100 ]; do
	i=$((i + 1)); sleep 0.1
done
cat "$D"/hc-n[1-4].out >"$OUT" 2>/dev/null
check "as slurmd's HealthCheckProgram on n1..n4: exit 0, nothing printed" \
	test "$(grep -c '^rc=0$' "$OUT")" -eq 4 -a "$(wc -l <"$OUT")" -eq 4
timeout 30 "$BOT" doctor -v --plugstack "$PS" --node-name n1 >"$OUT" 2>&1
check "on the host: the cluster's plugstack.conf is healthy (exit 0)" test $? -eq 0
check "  ... the plugin's version against slurmd -V" \
	grep -q "^ok: plugin version: $CLUSTER_PLUGIN: built for Slurm .*, this is " "$OUT"
ver=$(slurmd -V | awk '{ print $2 }')
check "  ... which is this Slurm ($ver)" grep -q "this is $ver" "$OUT"
check "  ... state_dir= checked without --node" grep -q "^ok: state: state_dir=$D/state" "$OUT"
for n in n1 n2 n3 n4; do
	timeout 30 "$BOT" doctor --node --plugstack "$PS" --node-name $n >"$OUT" 2>&1
	check "  ... --node for $n: exit 0, nothing printed" test $? -eq 0 -a ! -s "$OUT"
done

# as a job step on each node: %n is the node the task runs on
timeout 60 srun -N4 -n4 -l sh -c "\"$BOT\" doctor --node -v --plugstack \"$PS\"; echo rc=\$?" >"$OUT" 2>&1
check "on every node (srun -N4): healthy, exit 0" test "$(grep -c 'rc=0$' "$OUT")" -eq 4
check "  ... each with its own outbox (%n)" \
	test "$(grep -c "ok: outbox: outbox_dir=$OUTBOX/n[1-4]\$" "$OUT")" -eq 4
rmdir "$OUTBOX/n3"
timeout 60 srun -N4 -n4 -l sh -c "\"$BOT\" doctor --node --plugstack \"$PS\"; echo rc=\$?" >"$OUT" 2>&1
check "n3's outbox removed: n3 alone fails (exit 1)" \
	test "$(grep -c 'rc=1$' "$OUT")" -eq 1 -a "$(grep -c 'rc=0$' "$OUT")" -eq 3
check "  ... with one line naming n3's outbox" \
	test "$(grep -c "problem: outbox: outbox_dir=$OUTBOX/n3: No such file" "$OUT")" -eq 1
mkdir "$OUTBOX/n3"
cp "$PS" "$D/etc/twice.conf" && cat "$PS" >>"$D/etc/twice.conf"
timeout 30 "$BOT" doctor --node --plugstack "$D/etc/twice.conf" --node-name n1 >"$OUT" 2>&1
check "a plugstack.conf naming the plugin twice: exit 1" test $? -eq 1
check "  ... said" grep -q "named 2 times" "$OUT"
check "no node drained" undrained

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
