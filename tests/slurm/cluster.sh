# cluster.sh - a Slurm cluster of four emulated nodes on this host, for
# tests/slurm/ and `nccl-bot demo` (sourced, not run; installed as
# $(pkgdatadir)/cluster.sh for the demo, tools/demo.sh). doc/slurm.md, "The
# test cluster", says what it is built from and why each setting is there.
#
#	. tests/slurm/cluster.sh
#	cluster_init            # $D: slurm.conf, topology.conf, munge key
#	                        # ($CLUSTER_DIR, an empty directory, if set;
#	                        # else a new one under $TMPDIR)
#	cluster_plugstack ARGS  # the plugin's plugstack.conf line
#	cluster_up              # munged, slurmctld, slurmd n1..n4; nodes idle
#	...                     # srun/sbatch/salloc with SLURM_CONF=$D/etc/slurm.conf
#	cluster_down            # every daemon stopped by its PID, $D removed
#
# Nodes n1..n4 listen on 127.0.0.1 with their own ports; n1, n2 sit under
# leaf switch leaf1 and have feature fabric_a, n3, n4 under leaf2 with
# fabric_b (two fabrics). munged runs with its own socket and key in $D,
# so nothing of the host's munge or Slurm is used or changed. The daemons
# run in the foreground as children of the test (-D, -F): stopping one is
# kill + wait on its PID, nothing is left behind, also on failure (the
# caller traps EXIT to cluster_down).

cluster_have_slurm() {
	for p in slurmctld slurmd munged mungekey; do
		command -v $p >/dev/null 2>&1 || [ -x /usr/sbin/$p ] || return 1
	done
	command -v srun >/dev/null 2>&1 && command -v sinfo >/dev/null 2>&1
}

cluster_init() {
	PATH=$PATH:/usr/sbin
	if [ -n "${CLUSTER_DIR:-}" ]; then
		D=$CLUSTER_DIR
		[ -d "$D" ] || { echo "cluster: $D: not a directory" >&2; return 1; }
	else
		D=$(mktemp -d "${TMPDIR:-/tmp}/nb-slurm-XXXXXX") || return 1
	fi
	chmod 755 "$D"
	mkdir -p "$D/etc" "$D/state" "$D/log" "$D/run" "$D/munge" "$D/spool/n1" "$D/spool/n2" \
		"$D/spool/n3" "$D/spool/n4"
	CLUSTER_PIDS=
	# ports: a block chosen from the PID, so two runs on one host do not
	# meet, below Linux's ephemeral range (32768 and up), where an outgoing
	# connection could hold one of them; a block with a port already in use
	# (another test's cluster whose PID is the same modulo 1500, any other
	# socket: observed, slurmctld then dies with "Address already in use")
	# is passed over for the next one
	base=$((20000 + ($$ % 1500) * 8))
	if command -v ss >/dev/null 2>&1; then
		used=" $(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u | tr '\n' ' ') "
		tries=0
		while [ $tries -lt 1500 ]; do
			clash=
			for p in 0 1 2 3 4 5; do
				case $used in *" $((base + p)) "*) clash=1 ;; esac
			done
			[ -z "$clash" ] && break
			base=$((20000 + ((base - 20000) / 8 + 1) % 1500 * 8))
			tries=$((tries + 1))
		done
	fi
	H=$(hostname -s)
	chown munge:munge "$D/munge" 2>/dev/null
	chmod 755 "$D/munge"
	mungekey -c -k "$D/munge/munge.key" >/dev/null 2>&1 ||
		dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2>/dev/null
	chown munge:munge "$D/munge/munge.key" 2>/dev/null
	chmod 400 "$D/munge/munge.key"
	cat >"$D/etc/slurm.conf" <<EOF
ClusterName=nbtest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.sock
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
PrologFlags=Alloc
PrologEpilogTimeout=5
SlurmctldPort=$base
SlurmdPort=$((base + 1))
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmdDebug=debug
PlugStackConfig=$D/etc/plugstack.conf
TopologyPlugin=topology/tree
NodeName=n[1-2] NodeHostname=$H NodeAddr=127.0.0.1 Port=[$((base + 2))-$((base + 3))] CPUs=2 RealMemory=1000 Features=fabric_a State=UNKNOWN
NodeName=n[3-4] NodeHostname=$H NodeAddr=127.0.0.1 Port=[$((base + 4))-$((base + 5))] CPUs=2 RealMemory=1000 Features=fabric_b State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=other Nodes=n[1-4] MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
	cat >"$D/etc/topology.conf" <<EOF
SwitchName=leaf1 Nodes=n[1-2]
SwitchName=leaf2 Nodes=n[3-4]
SwitchName=spine Switches=leaf[1-2]
EOF
	: >"$D/etc/plugstack.conf"
	SLURM_CONF=$D/etc/slurm.conf
	export SLURM_CONF
}

# The plugin's line, written before slurmd starts (slurmd looks for
# prolog/epilog plugins only then) and replaced atomically afterwards
# (srun, sbatch and slurmstepd read it again for every step).
cluster_plugstack() {
	echo "optional $CLUSTER_PLUGIN $*" >"$D/etc/plugstack.conf.new" &&
		mv -f "$D/etc/plugstack.conf.new" "$D/etc/plugstack.conf"
}

cluster_start() {
	log=$1
	shift
	"$@" >>"$log" 2>&1 </dev/null &
	CLUSTER_PIDS="$! $CLUSTER_PIDS"
}

cluster_up() {
	if [ "$(id -un munge 2>/dev/null)" = munge ]; then
		cluster_start "$D/log/munged.out" runuser -u munge -- munged -F -S "$D/munge/munge.sock" \
			--key-file="$D/munge/munge.key" --pid-file="$D/munge/munged.pid" \
			--seed-file="$D/munge/seed" --log-file="$D/munge/munged.log"
	else
		cluster_start "$D/log/munged.out" munged -F -f -S "$D/munge/munge.sock" --key-file="$D/munge/munge.key" \
			--pid-file="$D/munge/munged.pid" --seed-file="$D/munge/seed" \
			--log-file="$D/munge/munged.log"
	fi
	i=0
	until munge -n -S "$D/munge/munge.sock" </dev/null >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 300 ] && { echo "cluster: munged did not start" >&2; cat "$D/munge/munged.log" >&2; return 1; }
		sleep 0.05
	done
	cluster_start "$D/log/slurmctld.out" slurmctld -D -c -f "$SLURM_CONF"
	for n in n1 n2 n3 n4; do
		cluster_start "$D/log/slurmd-$n.out" slurmd -D -f "$SLURM_CONF" -N $n
	done
	# bounded poll until all four nodes are idle: 30 s of wall time at most
	# (each sinfo bounded too: without a slurmctld one waits its message
	# timeout), and at once when a daemon has died (a port taken after all)
	end=$(($(date +%s) + 30))
	while :; do
		s=$(timeout 2 sinfo -h -p debug -o '%t' 2>/dev/null | sort -u | tr '\n' ' ')
		[ "$s" = "idle " ] && [ "$(timeout 2 sinfo -h -p debug -o '%D' 2>/dev/null)" = 4 ] && break
		dead=
		for p in $CLUSTER_PIDS; do
			kill -0 "$p" 2>/dev/null || dead=1
		done
		if [ -n "$dead" ] || [ "$(date +%s)" -ge "$end" ]; then
			echo "cluster: nodes not idle${dead:+ (a daemon exited)}: $s (ports $base..$((base + 5)))" >&2
			tail -n 20 "$D"/log/*.log "$D"/log/*.out >&2
			return 1
		fi
		sleep 0.1
	done
}

cluster_down() {
	# newest first: the slurmd, slurmctld, then munged they talk to
	for p in $CLUSTER_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	CLUSTER_PIDS=
	[ -n "${D:-}" ] && [ -z "${CLUSTER_KEEP:-}" ] && rm -rf "$D"
}
