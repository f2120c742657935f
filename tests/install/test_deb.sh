#!/bin/bash
# tests/install/test_deb.sh - the Debian packages as an administrator meets
# them (doc/packaging.md): `make deb` (or deb/ reused when it was built from
# HEAD with a clean tree), lintian with nothing beyond the documented
# overrides, the split (dpkg -c), then installed on this machine with dpkg:
# the service account made by the postinst without systemd as PID 1, the
# tmpfiles.d directories, the units pass systemd-analyze verify and no
# timer is enabled, /etc/slurm untouched; the installed `nccl-bot doctor`
# on a plugstack.conf that includes the shipped line; one `srun --nccl-bot`
# job of NCCL emulator ranks on the test cluster (tests/slurm/cluster.sh)
# with the INSTALLED plugin, whose tasks load the INSTALLED rank library and
# whose harvest (the installed helper) fills the tmpfiles.d outbox, then
# ship and compact run as the units run them (the account; ship with
# CAP_DAC_OVERRIDE alone, and refused without it); a second version of the
# rank library's package (make deb DEB_OTHER_VERSION=, rank-only profile)
# installed beside the first, which stays untouched, while a step started
# with the first waits (its ranks then load the first, its pinned one; a
# step started after the line names the second gets the second: what
# doc/admin.md's "Upgrades" promises of running steps); finally everything
# purged and nothing left behind (dpkg -S, the files, the directories). The
# account stays after the purge, on purpose (debian/nccl-bot.postrm says
# why); the test checks that too.
#
# Run as root from the build tree after `make` (CI's "packages" stage; not
# in make check: it installs packages). Skips (77) where this is not root
# or dpkg-buildpackage, debhelper or lintian are missing; the cluster part
# is skipped where Slurm or munge are missing or the emulator is not built.
# Ends with "N passed, N failed, N skipped".
set -u
builddir=$(pwd)
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
t0=$(date +%s)

if [ "$(id -u)" != 0 ]; then
	echo "test_deb.sh: installs packages: run as root"; exit 77
fi
for c in dpkg-buildpackage dh lintian dpkg; do
	command -v $c >/dev/null 2>&1 || { echo "test_deb.sh: $c not installed (scripts/setup installs it)"; exit 77; }
done
[ -f Makefile ] || { echo "test_deb.sh: run from a configured build tree"; exit 99; }
# one install test at a time on a machine: they install and purge the same
# packages and system paths (tests/install/*.sh take this lock; CI runs
# them one after the other anyway)
exec 9>/run/lock/nccl-bot-install-tests.lock
if command -v flock >/dev/null 2>&1 && ! flock -w 1800 9; then
	echo "test_deb.sh: another install test holds /run/lock/nccl-bot-install-tests.lock"; exit 99
fi

pass=0 fail=0 skip=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; return 1; fi
}
T=$(mktemp -d)
chmod 755 "$T"
OUT=$T/out
CLUSTER_UP=
finish() {
	[ -n "$CLUSTER_UP" ] && cluster_down
	rm -rf "$T"
}
trap finish EXIT

V=$(sed -n 's/^VERSION = //p' Makefile)
V2=$V.1
RANK=nccl-bot-rank-$V
RANK2=nccl-bot-rank-$V2
PKGS="slurm-spank-nccl-bot nccl-bot-containers $RANK $RANK2 nccl-bot"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ARCH=$(dpkg --print-architecture)
PLUGIN=/usr/lib/$MA/slurm-wlm/spank_nccl_bot.so
installed() { [ "$(dpkg-query -W -f '${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
known() { dpkg-query -W -f '${db:Status-Status}\n' "$1" 2>/dev/null | grep -qv '^not-installed$'; }

# a machine this test runs on is one it may install on: leftovers of an
# earlier run (or of the guides' test) are purged first, and the account is
# removed so that this run sees the postinst make it
left=
for p in $PKGS; do known "$p" && left="$left $p"; done
# (and any other version of the rank library, e.g. the guides' test's 0.2.0)
for p in $(dpkg-query -W -f '${Package}\n' 'nccl-bot-rank-*' 2>/dev/null); do
	case " $left " in *" $p "*) ;; *) known "$p" && left="$left $p" ;; esac
done
if [ -n "$left" ]; then
	echo "# purging what an earlier run left:$left"
	dpkg --purge $left >/dev/null 2>&1
fi
if id nccl-bot >/dev/null 2>&1; then
	echo "# removing the nccl-bot account an earlier install left (purge keeps it)"
	userdel nccl-bot 2>/dev/null
	getent group nccl-bot >/dev/null && groupdel nccl-bot 2>/dev/null
fi
slurmsum() { find /etc/slurm -type f -exec md5sum {} + 2>/dev/null | sort; }
# the spool tmpfs is also what the plugin makes on demand (the test
# cluster's jobs with the default spool_dir=): one there before the install
# is not the package's to remove; an empty one goes first, so that the
# install is seen to make it
before=
for d in /var/spool/nccl-bot/outbox /var/spool/nccl-bot /dev/shm/nccl-bot; do
	[ -d "$d" ] && [ ! -L "$d" ] && rmdir "$d" 2>/dev/null
done
for d in /dev/shm/nccl-bot /var/spool/nccl-bot; do
	[ -e "$d" ] && before="$before $d" && echo "# $d was there before the install: not checked after the purge"
done
slurm_before=$(slurmsum)

# ---- build ---------------------------------------------------------------
head=$(git -C "$srcdir" rev-parse HEAD 2>/dev/null || echo none)
dirty=$(git -C "$srcdir" status --porcelain --untracked-files=no 2>/dev/null | head -n 1)
DEB=$builddir/deb
if [ "$head" != none ] && [ -z "$dirty" ] && [ "$(cat "$DEB/BUILT-FROM" 2>/dev/null)" = "$head clean " ] &&
	ls "$DEB"/*.changes >/dev/null 2>&1; then
	echo "# deb/ was built from HEAD ($head), clean: reused"
	ok "make deb (reused deb/ of HEAD)"
else
	tb=$(date +%s%N)
	if make deb >"$T/make-deb.log" 2>&1; then
		ok "make deb ($(( ($(date +%s%N) - tb) / 1000000 )) ms)"
	else
		bad "make deb"; tail -n 30 "$T/make-deb.log"
	fi
fi
SLURM_MM=$(dpkg-deb -f "$DEB"/slurm-spank-nccl-bot_*_"$ARCH".deb Version 2>/dev/null | sed -n 's/.*+slurm//p')
D_BOT=$DEB/nccl-bot_$V-1_$ARCH.deb
D_RANK=$DEB/${RANK}_$V-1_$ARCH.deb
D_SPANK=$DEB/slurm-spank-nccl-bot_$V-1+slurm${SLURM_MM}_$ARCH.deb
D_CONT=$DEB/nccl-bot-containers_$V-1_all.deb
check "the four packages: nccl-bot, $RANK, slurm-spank-nccl-bot (+slurm$SLURM_MM), nccl-bot-containers" \
	test -f "$D_BOT" -a -f "$D_RANK" -a -f "$D_SPANK" -a -f "$D_CONT" || { ls "$DEB"; exit 1; }

# the Slurm major in the version is the one of the headers it was built with
hdr=$(sed -n 's/^#define SLURM_VERSION_NUMBER[ \t]*0x\([0-9a-fA-F]*\).*/\1/p' /usr/include/slurm/slurm_version.h 2>/dev/null)
if [ -n "$hdr" ] && ! grep -q '^SLURM_CPPFLAGS = -I' Makefile; then
	n=$((0x$hdr))
	check "  ... slurm-spank-nccl-bot's version names the Slurm of the headers ($((n >> 16)).$(printf %02d $(((n >> 8) & 255))))" \
		test "$SLURM_MM" = "$((n >> 16)).$(printf %02d $(((n >> 8) & 255)))"
fi
dpkg-deb -f "$D_SPANK" Depends >"$OUT"
check "  ... it depends on exactly $RANK $V-1 and nccl-bot $V-1, and on that Slurm" \
	grep -q "$RANK (= $V-1), nccl-bot (= $V-1)" "$OUT" ||
	{ cat "$OUT"; false; }
check "  ... and on that Slurm's major only" grep -q "slurm-wlm-basic-plugins (>= $SLURM_MM~), slurm-wlm-basic-plugins (<< " "$OUT"

# ---- lintian -------------------------------------------------------------
lintian --fail-on error,warning "$DEB"/nccl-bot_"$V"-1_"$ARCH".changes >"$T/lintian" 2>&1
lrc=$?
grep -v '^running with root privileges' "$T/lintian" | sed 's/^/#   lintian: /'
check "lintian: no error, no warning (exit 0)" test $lrc -eq 0
check "  ... nothing but info lines" sh -c "! grep -q '^[EW]:' '$T/lintian'"
lintian --show-overrides "$DEB"/nccl-bot_"$V"-1_"$ARCH".changes 2>/dev/null | grep '^O:' | sort -u >"$T/overrides"
check "  ... the overrides in use: /opt for the rank library, the static libyaml, no ITP" \
	sh -c "grep -q '$RANK: dir-or-file-in-opt' '$T/overrides' && grep -q 'slurm-spank-nccl-bot: embedded-library libyaml' '$T/overrides'"

# ---- the split -----------------------------------------------------------
files() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
files "$D_RANK" >"$OUT"
check "$RANK: /opt/nccl-bot/$V/lib/libnccl-tuner-bot.so and the profiler link, nothing else outside /usr/share/doc and lintian's" \
	sh -c "grep -qx '/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so' '$OUT' && grep -qx '/opt/nccl-bot/$V/lib/libnccl-profiler-bot.so' '$OUT' && ! grep -v -e '^/opt/nccl-bot/' -e '^/usr/share/doc/' -e '^/usr/share/lintian/' -e '^/$' -e '^/usr/$' -e '^/usr/share/$' -e '^/opt/$' '$OUT' | grep -q ."
files "$D_SPANK" >"$OUT"
check "slurm-spank-nccl-bot: the plugin in Slurm's plugin dir, the plugstack line under /usr/share, the man page" \
	sh -c "grep -qx '$PLUGIN' '$OUT' && grep -qx /usr/share/slurm-spank-nccl-bot/plugstack.conf '$OUT' && grep -qx /usr/share/man/man8/spank_nccl_bot.8.gz '$OUT'"
files "$D_BOT" >"$OUT"
check "nccl-bot: the command, the helper, the man pages, the units, sysusers.d and tmpfiles.d" \
	sh -c "for f in /usr/bin/nccl-bot /usr/libexec/nccl-bot/nccl-bot-harvest-read /usr/share/man/man1/nccl-bot.1.gz /usr/share/man/man1/nccl-bot-ship.1.gz /lib/systemd/system/nccl-bot-ship.service /lib/systemd/system/nccl-bot-ship.timer /lib/systemd/system/nccl-bot-compact.service /lib/systemd/system/nccl-bot-compact.timer /usr/lib/sysusers.d/nccl-bot.conf /usr/lib/tmpfiles.d/nccl-bot.conf; do grep -qx \"\$f\" '$OUT' || { echo \"  missing \$f\"; exit 1; }; done"
files "$D_CONT" >"$OUT"
check "nccl-bot-containers: the enroot and Apptainer snippets under /usr/share/nccl-bot" \
	sh -c "grep -qx /usr/share/nccl-bot/enroot/mounts.d/50-nccl-bot.fstab '$OUT' && grep -qx /usr/share/nccl-bot/enroot/hooks.d/50-nccl-bot.sh '$OUT' && grep -qx /usr/share/nccl-bot/apptainer/nccl-bot-apptainer.conf '$OUT'"
# an upgrade keeps the timers an administrator enabled running: no preinst
# stops them (deb-systemd-invoke stop on upgrade), the postinst try-restarts
rm -rf "$T/ctl" && dpkg-deb -e "$D_BOT" "$T/ctl"
check "nccl-bot: an upgrade does not stop the timers in the preinst" \
	sh -c "! grep -q 'deb-systemd-invoke stop' '$T/ctl/preinst' 2>/dev/null"
check "  ... and the postinst try-restarts the ones running" \
	sh -c "grep -q 'deb-systemd-invoke try-restart .*nccl-bot-ship.timer' '$T/ctl/postinst'"
check "  ... a removal stops them (prerm)" \
	sh -c "grep -A2 '\"\$1\" = remove' '$T/ctl/prerm' | grep -q 'deb-systemd-invoke stop nccl-bot-ship.timer nccl-bot-compact.timer'"
for d in "$D_BOT" "$D_RANK" "$D_SPANK" "$D_CONT"; do files "$d"; done >"$OUT"
check "no package ships anything under /etc (the plugin is never enabled by a package)" \
	sh -c "! grep -q '^/etc' '$OUT'"

# ---- install ---------------------------------------------------------------
ti=$(date +%s%N)
dpkg -i "$D_BOT" "$D_RANK" "$D_SPANK" "$D_CONT" >"$T/install.log" 2>&1
check "dpkg -i of the four packages ($(( ($(date +%s%N) - ti) / 1000000 )) ms)" test $? -eq 0 || tail -n 20 "$T/install.log"
check "  ... all four installed" sh -c "for p in nccl-bot $RANK slurm-spank-nccl-bot nccl-bot-containers; do [ \"\$(dpkg-query -W -f '\${db:Status-Status}' \$p)\" = installed ] || exit 1; done"
[ -d /run/systemd/system ] && echo "# systemd runs as PID 1 here" || echo "# no systemd as PID 1 here"
check "the nccl-bot account exists: a system uid, no login shell" \
	sh -c "getent passwd nccl-bot | awk -F: '\$3 < 1000 && \$7 ~ /nologin\$/ { f = 1 } END { exit !f }'"
check "tmpfiles.d ran: /dev/shm/nccl-bot root's 0711, /var/spool/nccl-bot/outbox root's 0750" \
	test "$(stat -c '%U %a' /dev/shm/nccl-bot 2>&1) $(stat -c '%U %a' /var/spool/nccl-bot/outbox 2>&1)" = "root 711 root 750"
check "no timer or service of ours is enabled (no link under /etc/systemd)" \
	sh -c "! find /etc/systemd -name 'nccl-bot*' 2>/dev/null | grep -q ."
check "/etc/slurm untouched" test "$(slurmsum)" = "$slurm_before"
check "the installed nccl-bot is version $V" test "$(/usr/bin/nccl-bot --version 2>&1)" = "nccl-bot $V"
if command -v systemd-analyze >/dev/null 2>&1; then
	(cd /lib/systemd/system && systemd-analyze verify --man=no nccl-bot-ship.service nccl-bot-ship.timer \
		nccl-bot-compact.service nccl-bot-compact.timer) >"$OUT" 2>&1
	check "systemd-analyze verify of the installed units: exit 0, nothing to say" \
		test $? -eq 0 -a ! -s "$OUT" || cat "$OUT"
else
	skipped "systemd-analyze verify (not installed)"
fi

# ---- doctor ------------------------------------------------------------------
# the administrator's plugstack.conf: the shipped line, included as the
# guide says; a slurm.conf beside it for PluginDir
mkdir -p "$T/etc"
printf 'include /usr/share/slurm-spank-nccl-bot/plugstack.conf\n' >"$T/etc/plugstack.conf"
printf 'PluginDir=/usr/lib/%s/slurm-wlm\n' "$MA" >"$T/etc/slurm.conf"
if command -v slurmd >/dev/null 2>&1 || [ -x /usr/sbin/slurmd ]; then
	PATH=$PATH:/usr/sbin /usr/bin/nccl-bot doctor -v --node --plugstack "$T/etc/plugstack.conf" >"$OUT" 2>&1
	check "the installed nccl-bot doctor --node on the shipped line: healthy (exit 0)" test $? -eq 0 ||
		sed 's/^/    /' "$OUT"
	check "  ... the installed plugin, built for this Slurm" grep -q "^ok: plugin version: $PLUGIN: built for Slurm $SLURM_MM" "$OUT"
	check "  ... the installed rank library under /opt/nccl-bot/$V/lib (the plugin's default lib_prefix)" \
		grep -q "/opt/nccl-bot/$V/lib" "$OUT"
	check "  ... the shipped line: optional, opt-in, shadow" \
		grep -q "^optional $PLUGIN enable=opt-in mode=shadow" /usr/share/slurm-spank-nccl-bot/plugstack.conf
else
	skipped "nccl-bot doctor (no slurmd to ask the version)"
fi

# ---- a second version of the rank library, built now ---------------------------
# (rank-only: the same source as $V, another version); installed beside the
# first while a step runs (below), or after the cluster part where that is
# skipped
find "/opt/nccl-bot/$V" -exec stat -c '%n %i %s %Y %a' {} + | sort >"$T/first.before"
md5sum "/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so" >>"$T/first.before"
tb=$(date +%s%N)
DEB_BUILD_PROFILES=pkg.nccl-bot.rank-only make deb DEBDIR="$T/deb2" DEB_OTHER_VERSION="$V2" >"$T/deb2.log" 2>&1
check "make deb DEB_OTHER_VERSION=$V2 (profile pkg.nccl-bot.rank-only): $RANK2 alone ($(( ($(date +%s%N) - tb) / 1000000 )) ms)" \
	test "$(cd "$T/deb2" 2>/dev/null && ls ./*.deb)" = "./${RANK2}_$V2-1_$ARCH.deb" || tail -n 20 "$T/deb2.log"
D_RANK2=$T/deb2/${RANK2}_$V2-1_$ARCH.deb

# ---- one Slurm job with the installed plugin ---------------------------------
. "$srcdir/tests/slurm/cluster.sh"
EMU=$builddir/tests/emulator/nccl-emu
if ! cluster_have_slurm; then
	skipped "a job on the test cluster (Slurm or munge not installed)"
elif [ ! -x "$EMU" ] && ! make tests/emulator/nccl-emu >/dev/null 2>&1; then
	skipped "a job on the test cluster (the emulator tests/emulator/nccl-emu is not built)"
else
	CLUSTER_PLUGIN=$PLUGIN
	cluster_init || exit 99
	CLUSTER_UP=1
	mkdir -p "$D/work"
	# the installed defaults: lib_prefix (/opt/nccl-bot/$V/lib), spool_dir
	# (/dev/shm/nccl-bot), harvest_helper (/usr/libexec/nccl-bot/...); the
	# outbox the package's tmpfiles.d made
	cluster_plugstack enable=opt-in mode=on policies=ucb1 fabric=a outbox_dir=/var/spool/nccl-bot/outbox
	if cluster_up; then
		EMUCMD="echo \"tuner=\$NCCL_TUNER_PLUGIN profiler=\$NCCL_PROFILER_PLUGIN\"; \"$EMU\" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 4000 --plugin \"\$NCCL_TUNER_PLUGIN\" --table \"\$NCCL_BOT_TABLE\" --spool \"\$NCCL_BOT_SPOOL\" --measured sim"
		(cd "$D/work" && timeout 120 srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$EMUCMD") >"$OUT" 2>"$T/err"
		job=$(sed -n 's/^nccl-bot: step \([0-9]*\)\.0: .*/\1/p' "$T/err" | head -n 1)
		check "srun --nccl-bot=ucb1 on n1,n2 with the installed plugin: both tasks get the installed rank library" \
			test "$(grep -c "^tuner=/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so profiler=/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so\$" "$OUT")" -eq 2 ||
			{ cat "$OUT" "$T/err"; }
		check "  ... the emulator ranks load it and decide alike" \
			test "$(grep -c '^PASS consistency/ucb1/base' "$OUT")" -eq 2
		check "  ... the step's line: the tuner loaded on 4 of 4 ranks (the installed helper wrote the report parts)" \
			grep -q "^nccl-bot: step $job\.0: .*tuner loaded on 4 of 4 ranks" "$T/err" || cat "$T/err"
		# the job's end (its epilog) before looking at the outbox
		timeout 60 srun -N2 -w n1,n2 --dependency=afterany:"$job" true >/dev/null 2>&1
		ls /var/spool/nccl-bot/outbox >"$OUT"
		check "  ... the installed helper's harvest: one delta per node in the tmpfiles.d outbox, root's 0640" \
			test "$(grep -c "^nbtest\.$job\.0\.0\.n[12]\.nbd\$" "$OUT"):$(stat -c '%U %a' /var/spool/nccl-bot/outbox/nbtest."$job".0.0.n1.nbd 2>&1)" = "2:root 640"

		# ship and compact as their units run them: the account, ship with
		# CAP_DAC_OVERRIDE alone (the unit's AmbientCapabilities), a site
		# configuration in the place of /etc/nccl-bot/site.yaml
		mkdir -p "$T/state"
		chown nccl-bot:nccl-bot "$T/state"
		printf 'version: 2\nstate_dir: %s\noutbox_dir: /var/spool/nccl-bot/outbox\n' "$T/state" >"$T/site.yaml"
		unit_cmd() { sed -n 's|^ExecStart=||p' "/lib/systemd/system/nccl-bot-$1.service" | sed "s|/etc/nccl-bot/site.yaml|$T/site.yaml|"; }
		user=$(sed -n 's/^User=//p' /lib/systemd/system/nccl-bot-ship.service)
		if command -v setpriv >/dev/null 2>&1; then
			# shellcheck disable=SC2046
			setpriv --reuid="$user" --regid="$user" --init-groups -- $(unit_cmd ship) >"$OUT" 2>&1
			check "ship as $user without the capability: refused (root's outbox), nothing moved" \
				test $? -ne 0 -a "$(ls /var/spool/nccl-bot/outbox | grep -c "\.$job\.")" -eq 2
			# shellcheck disable=SC2046
			setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=+dac_override \
				--ambient-caps=+dac_override -- $(unit_cmd ship) >"$OUT" 2>&1
			check "ship as the unit runs it ($user, CAP_DAC_OVERRIDE): exit 0, the outbox empty" \
				test $? -eq 0 -a -z "$(ls /var/spool/nccl-bot/outbox)" || cat "$OUT"
			check "  ... both deltas in the inbox, the account's" \
				test "$(find "$T/state/inbox" -name "nbtest.$job.*.nbd" -user "$user" | wc -l)" -eq 2
			# shellcheck disable=SC2046
			setpriv --reuid="$user" --regid="$user" --init-groups -- $(unit_cmd compact) >"$OUT" 2>&1
			check "compact as the unit runs it ($user, no capability): exit 0, fabric a's current written, the account's" \
				test $? -eq 0 -a "$(stat -c %U "$T/state/a/current" 2>&1)" = "$user" || cat "$OUT"
		else
			skipped "ship and compact as the account (no setpriv)"
		fi

		# a step running across an upgrade (doc/admin.md, "Upgrades"): its
		# two tasks start with $V pinned, say so through the FIFO up, and
		# wait for the shared lock on gate, which this test holds while
		# $RANK2 is installed beside $RANK and the line is pointed at $V2
		# (lib_prefix=: a newer release's plugin names its own version by
		# default); a step started then gets $V2; released, the first
		# step's ranks load the library its pin names, $V's
		mkfifo "$T/up" && exec 7<>"$T/up"
		: >"$T/gate" && exec 6>"$T/gate" && flock 6
		ACROSS="echo up >'$T/up'; flock -s '$T/gate' true; $EMUCMD"
		(cd "$D/work" && exec 6>&- 7>&- && timeout 120 srun -N2 -n2 -w n1,n2 --nccl-bot=ucb1 sh -c "$ACROSS") \
			>"$T/across.out" 2>"$T/across.err" &
		apid=$!
		a="" b=""
		read -r -t 60 -u 7 a && read -r -t 60 -u 7 b
		check "a step with $V's library pinned: both tasks started, waiting" test "$a $b" = "up up" ||
			cat "$T/across.out" "$T/across.err"
		dpkg -i "$D_RANK2" >"$T/install2.log" 2>&1
		check "  ... meanwhile dpkg -i $RANK2 beside $RANK (exit 0)" test $? -eq 0 || tail -n 20 "$T/install2.log"
		cluster_plugstack enable=opt-in mode=on policies=ucb1 fabric=a outbox_dir=/var/spool/nccl-bot/outbox \
			lib_prefix=/opt/nccl-bot/$V2/lib
		(cd "$D/work" && timeout 120 srun -N2 -n2 -w n3,n4 --nccl-bot=ucb1 sh -c "$EMUCMD") >"$OUT" 2>"$T/err"
		check "  ... a step started now (n3,n4): both tasks get $V2's library and load it" \
			test "$(grep -c "^tuner=/opt/nccl-bot/$V2/lib/libnccl-tuner-bot.so profiler=/opt/nccl-bot/$V2/lib/libnccl-tuner-bot.so\$" "$OUT"):$(grep -c '^PASS consistency/ucb1/base' "$OUT")" = 2:2 ||
			cat "$OUT" "$T/err"
		flock -u 6
		exec 6>&- 7<&-
		wait "$apid"
		arc=$?
		check "  ... released, the first step's ranks load $V's library, which its pin names, and finish (exit 0)" \
			test "$arc:$(grep -c "^tuner=/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so profiler=/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so\$" "$T/across.out"):$(grep -c '^PASS consistency/ucb1/base' "$T/across.out")" = 0:2:2 ||
			cat "$T/across.out" "$T/across.err"
		# both steps harvested into the outbox, and the purge keeps an
		# outbox with deltas not shipped (debian/nccl-bot.postrm): the
		# jobs' ends (their epilogs, on their nodes), then their deltas go
		for e in "$T/across.err:n1,n2" "$T/err:n3,n4"; do
			j=$(sed -n 's/^nccl-bot: step \([0-9]*\)\.0: .*/\1/p' "${e%:*}" | head -n 1)
			[ -n "$j" ] && timeout 60 srun -N2 -w "${e##*:}" --dependency=afterany:"$j" true >/dev/null 2>&1
		done
		rm -f /var/spool/nccl-bot/outbox/nbtest.*.nbd
	else
		bad "the test cluster starts with the installed plugin"
	fi
	cluster_down
	CLUSTER_UP=
fi

# ---- a second version side by side ---------------------------------------------
if ! installed "$RANK2"; then
	dpkg -i "$D_RANK2" >"$T/install2.log" 2>&1
fi
check "$RANK2 installed beside $RANK: both installed, neither replaced" \
	sh -c "[ \"\$(dpkg-query -W -f '\${db:Status-Status}' $RANK)\" = installed ] && [ \"\$(dpkg-query -W -f '\${db:Status-Status}' $RANK2)\" = installed ]" ||
	tail -n 20 "$T/install2.log"
check "  ... /opt/nccl-bot/$V/lib and /opt/nccl-bot/$V2/lib" \
	test -f "/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so" -a -f "/opt/nccl-bot/$V2/lib/libnccl-tuner-bot.so" -a -L "/opt/nccl-bot/$V2/lib/libnccl-profiler-bot.so"
check "  ... the second is version $V2 (its build id)" grep -aq "nccl-bot $V2" "/opt/nccl-bot/$V2/lib/libnccl-tuner-bot.so"
find "/opt/nccl-bot/$V" -exec stat -c '%n %i %s %Y %a' {} + | sort >"$T/first.after"
md5sum "/opt/nccl-bot/$V/lib/libnccl-tuner-bot.so" >>"$T/first.after"
check "  ... the first untouched (inode, size, mtime, mode, bytes)" cmp -s "$T/first.before" "$T/first.after"
check "  ... slurm-spank-nccl-bot still the one built for $V" installed slurm-spank-nccl-bot

# ---- remove and purge ------------------------------------------------------------
dpkg --purge slurm-spank-nccl-bot nccl-bot-containers "$RANK" "$RANK2" nccl-bot >"$T/purge.log" 2>&1
check "dpkg --purge of all five: exit 0" test $? -eq 0 || tail -n 20 "$T/purge.log"
check "  ... none known to dpkg any more" sh -c "for p in $PKGS; do [ -z \"\$(dpkg-query -W -f '\${db:Status-Status}' \$p 2>/dev/null | grep -v not-installed)\" ] || exit 1; done"
check "  ... dpkg -S owns nothing of ours" sh -c "! dpkg -S /usr/bin/nccl-bot /opt/nccl-bot '$PLUGIN' /usr/share/nccl-bot /usr/share/slurm-spank-nccl-bot /usr/libexec/nccl-bot /lib/systemd/system/nccl-bot-ship.service >/dev/null 2>&1"
left=
for f in /opt/nccl-bot /usr/share/nccl-bot /usr/share/slurm-spank-nccl-bot /usr/libexec/nccl-bot /usr/bin/nccl-bot \
	"$PLUGIN" /usr/share/doc/nccl-bot /usr/share/doc/"$RANK" /usr/lib/tmpfiles.d/nccl-bot.conf \
	/usr/lib/sysusers.d/nccl-bot.conf /lib/systemd/system/nccl-bot-ship.service /lib/systemd/system/nccl-bot-ship.timer \
	/lib/systemd/system/nccl-bot-compact.service /lib/systemd/system/nccl-bot-compact.timer \
	/var/spool/nccl-bot /dev/shm/nccl-bot /var/lib/systemd/deb-systemd-helper-enabled/nccl-bot-ship.timer.dsh-also; do
	case " $before " in *" $f "*) continue ;; esac
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done
check "  ... nothing left: /opt/nccl-bot, /usr/share/nccl-bot, the plugin, the units, the outbox, the spool" test -z "$left" ||
	echo "    left:$left"
check "  ... the man pages gone" sh -c "! ls /usr/share/man/man*/nccl-bot* /usr/share/man/man8/spank_nccl_bot* 2>/dev/null | grep -q ."
check "  ... /etc/slurm untouched" test "$(slurmsum)" = "$slurm_before"
check "  ... the nccl-bot account kept (files on the shared state are its own; postrm says why)" \
	sh -c "getent passwd nccl-bot >/dev/null"

echo "# test_deb.sh took $(($(date +%s) - t0)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
