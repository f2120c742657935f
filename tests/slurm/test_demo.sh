#!/bin/bash
# test_demo.sh - `nccl-bot demo` (tools/cmd_demo.c, tools/demo.sh): the
# README's first command. A run to its end (stdout not a terminal): two
# srun summary lines, the second saving time against AUTO (its line and the
# simulator's truth), job 2's report,
# exit 0, no progress drawn, its temporary directory removed and none of
# its processes left; the same on a terminal (script(1)) draws progress;
# with a stand-in `nccl-bot report --svg` (agreement R), "picture: FILE";
# SIGINT at its first line (the cluster starting), once the cluster is up
# and while job 1 runs, SIGTERM while it learns, SIGHUP at job 2's report:
# each waits for the demo's own line (never a sleep), then
# nothing of it is left running (the PIDs of its pid files, any process
# naming its directory) and it exits non-zero; without root or without
# Slurm's commands: a message saying what is missing, exit 1, nothing
# started. Skips (77) as the other tests/slurm/ scripts do.
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(cd "${builddir:-.}" && pwd)
. "$srcdir/tests/slurm/cluster.sh"
. "$srcdir/tests/slurm/lib.sh"
slurm_test_needs test_demo.sh "$LIB/libnccl-tuner-bot.so" "$BOT" "$HELPER" "$EMU"

t0=$(date +%s%N)
T=$(mktemp -d "${TMPDIR:-/tmp}/nb-test-demo-XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -m 1777 "$T/tmp"
export TMPDIR=$T/tmp
OUT=$T/out
ERR=$T/err

# leftovers DIR: the processes whose command line or environment names DIR
# (munged, slurmctld, slurmd by their -f/-S, slurmstepd and the ranks by
# SLURM_CONF); none expected
leftovers() {
	found=
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		if grep -qsF "$1" "$p/cmdline" "$p/environ" 2>/dev/null; then
			found="$found ${p#/proc/}($(tr '\0' ' ' <"$p/cmdline" | cut -c1-60))"
		fi
	done
	[ -z "$found" ] || { echo "  left running:$found"; return 1; }
}
# pids_dead PID...: every one of them has ended
pids_dead() {
	[ $# -ge 1 ] || { echo "  no PIDs (munged, slurmctld, 4 slurmd expected)"; return 1; }
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && { echo "  PID $p still running"; return 1; }
	done
	return 0
}
# loss N: job N's srun line's estimated loss in seconds (saved: negative)
loss() {
	grep '^  nccl-bot: step [0-9]*\.0: ' "$OUT" | sed -n "$1p" |
		sed -n 's/.* est\. \(saved\|lost\) ~\{0,1\}\([0-9.]*\) \([mun]*s\) vs AUTO.*/\1 \2 \3/p' |
		awk '{ m = $3 == "s" ? 1 : $3 == "ms" ? 1e-3 : $3 == "us" ? 1e-6 : 1e-9
		       printf "%.9f\n", ($1 == "saved" ? -1 : 1) * $2 * m }'
}
empty_tmp() { [ -z "$(ls -A "$TMPDIR")" ] || { echo "  left in TMPDIR: $(ls -A "$TMPDIR")"; return 1; }; }

# ---- a run to its end, stdout and stderr not a terminal ---------------------------
cd "$T" || exit 99
a=$(date +%s%N)
timeout 120 "$BOT" demo >"$OUT" 2>"$ERR"
rc=$?
ms=$((($(date +%s%N) - a) / 1000000))
echo "  # the demo took $ms ms"
sed 's/^/  # /' "$OUT" | grep -E 'nccl-bot: step|result|truth|job [12]|picture|stopped' | cut -c1-200
check "the demo exits 0 ($ms ms)" test $rc = 0 || sed 's/^/    /' "$ERR" | tail -n 20
check "  ... two srun summary lines, one per job" test "$(grep -c '^  nccl-bot: step [0-9]*\.0: ' "$OUT")" = 2
l1=$(loss 1)
l2=$(loss 2)
check "  ... the second saves time against AUTO (${l2:-?} s; negative: saved), not just less than the calibration run (${l1:-?} s)" \
	awk "BEGIN { exit !(\"$l1\" != \"\" && \"$l2\" != \"\" && $l2 + 0 < 0 && $l2 + 0 < $l1 + 0) }"
check "  ... and its decisions did: the simulator's truth below AUTO's" \
	awk -v t="$(sed -n 's/^  job 1 [0-9.]* us, job 2 \([0-9.]*\) us$/\1/p' "$OUT")" \
		-v a="$(sed -n "s/^truth (the simulator's latency of what ran, per collective): AUTO's choices \([0-9.]*\) us,$/\1/p" "$OUT")" \
		'BEGIN { exit !(t != "" && a != "" && t + 0 < a + 0) }'
check "  ... and it says so" grep -q '^result: job 2.s line shows a saving against AUTO, and so does the truth' "$OUT"
check "  ... job 2's report: the step's parts, per context, the totals" \
	sh -c "grep -q '^report of job 2 (nccl-bot report [0-9]*):' '$OUT' && grep -q '^  step [0-9]*\.0: 2 part(s) (n1 n2)' '$OUT' && grep -q '^    job total: ' '$OUT'"
# srun's line and `nccl-bot report` take AUTO's latency from the same
# place (the fabric's state before NCCL's cost model, formats.md 17): job
# 2's line and its report's step total agree (the line rounds to 3 digits)
net=$(sed -n 's/^    step total: .* net \([0-9.]*\) \([mun]*s\) \(saved\|lost\) vs AUTO.*/\3 \1 \2/p' "$OUT" |
	awk '{ m = $3 == "s" ? 1 : $3 == "ms" ? 1e-3 : $3 == "us" ? 1e-6 : 1e-9
	       printf "%.9f\n", ($1 == "saved" ? -1 : 1) * $2 * m }')
check "  ... job 2's line and its report agree on the time (${l2:-?} s, report ${net:-?} s)" \
	awk -v l="$l2" -v n="$net" 'BEGIN { d = l - n; if (d < 0) d = -d; a = n < 0 ? -n : n
		exit !(l != "" && n != "" && d <= 0.006 * a + 1e-4) }'
check "  ... where its picture is, or that there is none" grep -q '^picture: ' "$OUT"
# the fabric the introduction names is the one the learning lines and the
# report name (the fabric map called it "a")
check "  ... one name for the fabric: a100-ib-hdr in the introduction, the learning lines, the report" \
	sh -c "grep -q 'simulated fabric, a100-ib-hdr, ' '$OUT' && grep -q \"into fabric a100-ib-hdr's state: snap-\" '$OUT' &&
		grep -q \"^job 2 (decides from fabric a100-ib-hdr's state)\" '$OUT' &&
		grep -q '^  step [0-9]*\.0: .*, fabric a100-ib-hdr[ ,]' '$OUT' && ! grep -qw 'fabric a' '$OUT'"
# the README shows the output's last lines: truth, result, stopped
check "  ... its last lines are truth, result and stopped, as the README shows" \
	sh -c "tail -n 4 '$OUT' | sed -n '1s/^truth .*/t/p;3s/^result: .*/r/p;4s/^stopped: .*/s/p' | tr -d '\n' | grep -qx trs"
check "  ... the explanation first (a few lines)" \
	test "$(sed -n '1{/^nccl-bot demo: /p}' "$OUT" | wc -l)" = 1 -a "$(sed -n '/^cluster: up/=' "$OUT")" -le 9
check "  ... no progress when not on a terminal (no \\r, no escape, no @@ line)" \
	sh -c "! grep -q \$(printf '\\r\\|\\033') '$OUT' '$ERR' && ! grep -q '^@@' '$OUT' '$ERR'"
check "  ... every process stopped, the temporary directory removed" \
	sh -c "grep -qx 'stopped: every process the demo started; its temporary directory removed' '$OUT'"
check "  ... nothing of it running" leftovers "$TMPDIR/nccl-bot-demo."
check "  ... nothing left in TMPDIR" empty_tmp
check "  ... stderr empty" test ! -s "$ERR" || sed 's/^/    /' "$ERR" | head -n 5

# ---- on a terminal: the progress line ---------------------------------------------
if script -qfec true /dev/null >/dev/null 2>&1; then
	timeout 120 script -qfec "'$BOT' demo --svg '$T/p.svg'" /dev/null >"$T/tty" 2>&1
	check "on a terminal: progress drawn in place (stage of 7), then cleared" \
		sh -c "grep -q 'nccl-bot: demo: starting munged, slurmctld and slurmd n1-n4 ([0-9]* s)  28% (2 of 7)' '$T/tty' && grep -q 'nccl-bot: demo: job 1 running (a calibration run, every arm in turn) ([0-9]* s)  42% (3 of 7)' '$T/tty' && grep -q \"\$(printf '\\r\\033')\\[K\" '$T/tty'"
	check "  ... the same summary lines" test "$(grep -c 'nccl-bot: step [0-9]*\.0: ' "$T/tty")" = 2
	check "  ... nothing left" sh -c "$(declare -f leftovers); leftovers '$TMPDIR/nccl-bot-demo.' && test -z \"\$(ls -A '$TMPDIR')\""
else
	echo "skip - on a terminal (no script(1))"
fi

# ---- the picture: a stand-in `nccl-bot report` that draws one -----------------------
# (agreement R: `nccl-bot report JOBID --svg FILE`, exit 0 and FILE written;
# until the real one lands, tools/demo.sh run as the command runs it, with an
# nccl-bot whose report --help names --svg and whose --svg writes FILE)
cat >"$T/bot-svg" <<EOF
#!/bin/sh
if [ "\$1" = report ]; then
	case " \$* " in
	*" --help "*) "$BOT" report --help; echo "  --svg FILE        (stand-in)"; exit 0 ;;
	*" --svg "*) echo "\$*" >"$T/svg.args"; echo '<svg xmlns="http://www.w3.org/2000/svg"/>' >"\$4"; exit 0 ;;
	esac
fi
exec "$BOT" "\$@"
EOF
chmod 755 "$T/bot-svg"
mkdir "$T/direct"
env NB_DEMO_DIR="$T/direct" NB_DEMO_CLUSTER="$srcdir/tests/slurm/cluster.sh" NB_DEMO_BOT="$T/bot-svg" \
	NB_DEMO_PLUGIN="$CLUSTER_PLUGIN" NB_DEMO_LIBDIR="$LIB" NB_DEMO_HELPER="$HELPER" NB_DEMO_EMU="$EMU" \
	NB_DEMO_SVG="$T/pic.svg" NCCL_BOT_CONFIG=none timeout 120 sh "$srcdir/tools/demo.sh" >"$OUT" 2>"$ERR"
rc=$?
check "where report draws a picture: 'picture: FILE', FILE written (exit $rc)" \
	sh -c "test $rc = 0 && grep -qx 'picture: $T/pic.svg' '$OUT' && test -s '$T/pic.svg'"
check "  ... asked for as nccl-bot report JOBID --svg FILE" \
	grep -Eqx "report [0-9]+ --svg $T/pic.svg" "$T/svg.args"
check "  ... its directory removed" test ! -e "$T/direct"
check "  ... nothing of it running" leftovers "$T/direct"

# ---- interrupted: SIGINT or SIGTERM after a line of its own --------------------------
# interrupt SIGNAL MARKER: the demo (--keep) until a line starting MARKER,
# then SIGNAL; its status in $irc, its kept directory in $kept, the PIDs of
# its daemons' pid files (read just before the signal) in $pids
interrupt() {
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	timeout 120 "$BOT" demo --keep >"$T/fifo" 2>"$ERR" &
	pid=$!
	sent=
	pids=
	dir=
	: >"$OUT"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$OUT"
		case $line in
		"cluster: up in "*) dir=${line##* in } ;;
		esac
		case $line in
		"$2"*)
			if [ -z "$sent" ]; then
				[ -n "$dir" ] && pids=$(cat "$dir"/run/*.pid "$dir"/munge/munged.pid 2>/dev/null)
				kill -"$1" "$pid" && sent=1
			fi
			;;
		esac
	done <"$T/fifo"
	wait "$pid"
	irc=$?
	kept=$(sed -n 's/^kept: \(.*\) (--keep)$/\1/p' "$OUT")
	[ -n "$sent" ] || echo "  never saw '$2'"
}
for c in "INT nccl-bot demo: what" "INT cluster: up" "INT job 1 (" "TERM learning: " "HUP report of job 2"; do
	set -- $c
	sig=$1
	shift
	interrupt "$sig" "$*"
	check "SIG$sig after '$*': exits non-zero ($irc), says so" \
		sh -c "test '$irc' != 0 && test -n '$sent' && grep -q 'nccl-bot demo: interrupted (SIG$sig)' '$ERR'"
	if [ "$*" = "nccl-bot demo: what" ]; then
		# stopped while starting: pid files there may be, or not yet
		[ -z "$pids" ] || check "  ... the daemons of its pid files ($(echo $pids)) have ended" pids_dead $pids
	else
		check "  ... the daemons of its pid files ($(echo $pids)) have ended" pids_dead $pids
	fi
	check "  ... nothing of it running" leftovers "$TMPDIR/nccl-bot-demo."
	check "  ... no result line" sh -c "! grep -q '^result: ' '$OUT'"
	[ -n "$kept" ] && rm -rf "$kept"
done
check "  ... and no directory but the kept ones" empty_tmp

# ---- a relative TMPDIR: the script and the cluster's files name the directory from
# other working directories (job 1 runs in DIR/work), so it is made absolute
mkdir -m 1777 "$T/reltmp"
export TMPDIR=reltmp
interrupt INT "cluster: up"
export TMPDIR=$T/tmp
case $dir in /*) abs=1 ;; *) abs= ;; esac
check "a relative TMPDIR: the demo's directory is absolute ($dir)" \
	sh -c "test -n '$abs' && test '${dir%/*}' = '$T/reltmp'"
check "  ... the daemons of its pid files ($(echo $pids)) have ended" pids_dead $pids
check "  ... nothing of it running" leftovers "reltmp/nccl-bot-demo."
[ -n "$kept" ] && rm -rf "$kept"

# ---- what it needs ------------------------------------------------------------------
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$BOT" demo >"$OUT" 2>"$ERR"
	rc=$?
	check "as user nobody: exit 1, a message saying it must run as root, and how" \
		sh -c "test $rc = 1 && grep -q 'nccl-bot: demo: must run as root' '$ERR' && grep -q 'sudo nccl-bot demo' '$ERR'"
	check "  ... nothing started, nothing written" sh -c "test ! -s '$OUT' && test -z \"\$(ls -A '$TMPDIR')\""
else
	echo "skip - as user nobody (no user nobody or no setpriv)"
fi
mkdir -p "$T/nopath"
env PATH="$T/nopath" "$BOT" demo >"$OUT" 2>"$ERR"
rc=$?
check "without Slurm's and munge's commands in /usr/bin (not on PATH): exit 1, what is missing, scripts/setup" \
	sh -c "test $rc = 1 && grep -q 'Slurm or munge is not installed (missing: munge srun sinfo scancel)' '$ERR' && grep -q 'scripts/setup' '$ERR'"
check "  ... nothing started" sh -c "test ! -s '$OUT' && test -z \"\$(ls -A '$TMPDIR')\""
# root runs demo.sh: one that others may write is refused before anything
# starts (the mode restored at once, also if the check fails)
mode=$(stat -c %a "$srcdir/tools/demo.sh")
chmod g+w "$srcdir/tools/demo.sh"
"$BOT" demo >"$OUT" 2>"$ERR"
rc=$?
chmod "$mode" "$srcdir/tools/demo.sh"
check "a demo.sh the group may write: refused as root's to run, exit 1" \
	sh -c "test $rc = 1 && grep -q 'tools/demo.sh is owned by uid [0-9]*, mode [0-7]*: the demo runs it as root' '$ERR'"
check "  ... nothing started" sh -c "test ! -s '$OUT' && test -z \"\$(ls -A '$TMPDIR')\""
mkdir -p "$T/with space"
env TMPDIR="$T/with space" "$BOT" demo >"$OUT" 2>"$ERR"
rc=$?
check "a TMPDIR with a blank: exit 1, says why, nothing started or left" \
	sh -c "test $rc = 1 && grep -q 'cannot name a path with blanks' '$ERR' && test ! -s '$OUT' && test -z \"\$(ls -A '$T/with space')\""
"$BOT" demo --bogus >/dev/null 2>"$ERR"
check "an unknown option: usage, exit 2" test $? = 2

t1=$(date +%s%N)
echo "$pass passed, $fail failed in $(((t1 - t0) / 1000000)) ms"
[ $fail -eq 0 ]
