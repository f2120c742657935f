#!/bin/sh
# tests/install/test_guides.sh - doc/admin.md's and doc/user.md's ```sh blocks
# run in order, as root, against the four-node test cluster
# (tests/slurm/cluster.sh; doc/slurm.md, "The test cluster"), with the
# packages of deb/ installed the way doc/admin.md installs them and removed
# the way it removes them; then nothing of them may be left on the host.
# Ends with "N passed, N failed, N skipped" (.ci/run's stage "packages",
# agreement Q). Not in `make check`: it installs packages on this machine.
#
# usage: tests/install/test_guides.sh [--standin]
#   run from the build tree (srcdir= names the source tree when apart)
#   --standin: development aid while no packages exist: the in-tree build
#     stands in for them (the blocks that install or remove packages are
#     skipped; the plugin, the rank library, the helper and the command are
#     the build tree's, the units are made up; see standin_* below). Not
#     what CI runs.
#
# Order: admin.md's blocks up to its "Uninstall" section, then user.md's
# (a user on the cluster the admin has just set up), then admin.md's
# Uninstall blocks. Each block runs as `sh -e` (```bash: `bash -e`; every
# command must succeed), in one working directory shared by all blocks
# (files carry over from block to block, shell variables do not), bounded
# to 300 s.
#
# Markers, HTML comments on the lines just before a block's fence (Markdown
# does not show them; several may stack):
#	<!-- check: skip REASON -->   not run here; the reason is printed
#	<!-- check: expect ERE -->    the block's output (stdout and stderr)
#	                              must have a line matching ERE (grep -E)
#	<!-- check: reject ERE -->    ... and no line matching ERE
#
# What is substituted here, and why (nothing else is):
# - /etc/slurm in a block is the test cluster's configuration directory
#   ($D/etc, with SLURM_CONF=$D/etc/slurm.conf): the host's Slurm is not
#   configured and is never touched. That plugstack.conf starts as Debian's
#   does, with one `include .../plugstack.conf.d/*.conf` line, and the
#   cluster has a partition `gpu` of n1 and n2 (fabric a), as the guides'
#   example cluster does.
# - systemctl is a stand-in, also where PID 1 is systemd (here it is not:
#   `ps -p 1`), because slurmd is the test cluster's, not a unit, and a test
#   must not enable timers on the host: `restart slurmd` restarts the test
#   cluster's daemons (this script owns them: the stand-in asks it through
#   a FIFO and waits for its answer); `enable --now`/`disable --now` of a
#   timer checks that it and its service are installed, verified by
#   `systemd-analyze verify` where that exists; `start X.service` runs the
#   unit's ExecStart= once as the unit runs it (User=, Group=,
#   AmbientCapabilities= through setpriv; ConditionPathExists= honoured):
#   what the timer would start.
# - `python train.py` is the NCCL emulator (tests/emulator/nccl-emu: two
#   rank processes per task that load NCCL_TUNER_PLUGIN as NCCL does, decide
#   from NCCL_BOT_TABLE and write spool files to NCCL_BOT_SPOOL, with
#   NCCL_BOT_WINDOW=16 so that its short run measures, as tests/slurm/'s
#   jobs do); without NCCL_TUNER_PLUGIN (nccl-bot off) it says so and
#   exits 0.
#
# What is made before the blocks run: deb/'s packages (`make deb` when it
# holds none), and for a block that names NAME-V/deb/ (doc/admin.md's
# "Upgrades": a newer release's packages, built in that release's own
# source tree) release V's full set, built from this tree with `make deb
# DEBDIR=... DEB_OTHER_VERSION=V` (about 25 s) into $T/NAME-V/deb and linked
# into the working directory as NAME-V: each version's packages in a
# directory of their own, as an administrator has them, so that a pattern
# there matches one version. V must differ from deb/'s version, and the
# guide must name deb/'s rank package (nccl-bot-rank-<deb/'s version>) as
# the one the upgrade replaces: an example version that no longer matches
# the tree fails here, by name. --standin skips the blocks of a section
# whose heading names Upgrade (one build, no second release).
set -u
srcdir=$(cd "${srcdir:-.}" && pwd)
builddir=$(pwd)
STANDIN=
[ "${1:-}" = --standin ] && STANDIN=1
pass=0 fail=0 skip=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
finish() {
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail = 0 ]
	exit
}
ADMIN=$srcdir/doc/admin.md
USER=$srcdir/doc/user.md
EMU=$builddir/tests/emulator/nccl-emu
. "$srcdir/tests/slurm/cluster.sh"

# ---- the guides into blocks -----------------------------------------------------
# guide_blocks MD PHASE-PREFIX OUTDIR: OUTDIR/N.sh (the block), OUTDIR/N.meta
# (its markers: "skip REASON", "expect ERE", "reject ERE"), and one line
# "N LINE SHELL PHASE SECTION" per block in OUTDIR/list, PHASE being main,
# or last for the blocks under a heading that names Uninstall; SECTION
# upgrade under a heading that names Upgrade, else -.
guide_blocks() {
	awk -v dir="$3" -v md="$1" '
	!inb && /^#+ / { last = ($0 ~ /Uninstall/); upg = ($0 ~ /Upgrade/) }
	/^<!-- check: / { m = $0; sub(/^<!-- check: */, "", m); sub(/ *-->.*$/, "", m)
		meta = meta m "\n"; mline = NR; next }
	!inb && /^```(sh|bash) *$/ { inb = 1; n++; sh = substr($0, 4); sub(/ *$/, "", sh)
		printf "%d %d %s %s %s\n", n, NR, sh, last ? "last" : "main", upg ? "upgrade" : "-" >> (dir "/list")
		printf "%s", (mline == NR - 1) ? meta : "" > (dir "/" n ".meta"); close(dir "/" n ".meta")
		meta = ""; printf "" > (dir "/" n ".sh"); next }
	!inb && mline != NR { meta = "" }
	inb && /^```/ { inb = 0; close(dir "/" n ".sh"); next }
	inb { print > (dir "/" n ".sh") }
	END { if (inb) printf "%d %d unclosed main -\n", n, NR >> (dir "/list") }' "$1"
}

# guide_releases BLOCKDIR...: the directories NAME-V (a newer release's
# packages in NAME-V/deb/) that the blocks not skipped name, one a line
guide_releases() {
	for g in "$@"; do
		while read -r n line sh ph sect; do
			grep -q '^skip' "$g/$n.meta" || cat "$g/$n.sh"
		done <"$g/list"
	done | grep -o '[a-z][a-z-]*-[0-9][0-9a-z.+~]*/deb/' | sed 's|/deb/$||' | sort -u
}

# ---- one block: run it, serve its systemctl requests, check its output ------------
# run_block NAME FILE META [SHELL [SECTION]]: the block's output in $T/out
# (SHELL: sh for ```sh, bash for ```bash; SECTION as guide_blocks says)
run_block() {
	name=$1 blk=$2 meta=$3 bsh=${4:-sh} sect=${5:--}
	reason=$(sed -n 's/^skip *//p' "$meta" | head -n 1)
	if grep -q '^skip' "$meta"; then
		if [ -z "$reason" ]; then bad "$name: a skip marker without a reason"; return; fi
		skipped "$name: $reason"
		return
	fi
	if [ -n "$STANDIN" ] && [ "$sect" = upgrade ]; then
		skipped "$name: needs a second release's packages (--standin)"
		return
	fi
	if [ -n "$STANDIN" ] && grep -Eq 'apt-get|dpkg-query' "$blk"; then
		skipped "$name: installs or removes packages (--standin)"
		return
	fi
	sed -e "s|/etc/slurm|$D/etc|g" "$blk" >"$T/run.sh"
	[ -n "$STANDIN" ] && standin_sed "$T/run.sh"
	(cd "$W" && PATH=$SHIM:$PATH timeout 300 "$bsh" -e "$T/run.sh" >"$T/out" 2>&1 </dev/null
		echo "done $?" >"$CTL") &
	bpid=$!
	rc=
	while [ -z "$rc" ]; do
		read -r req arg <"$CTL" || continue
		case $req in
		done) rc=$arg ;;
		restart)
			if guide_restart >>"$T/restarts.log" 2>&1; then echo ok >"$ACK"; else
				tail -n 20 "$T/restarts.log" >&2
				echo fail >"$ACK"
			fi ;;
		esac
	done
	wait "$bpid"
	why=
	[ "$rc" = 0 ] || why="exit $rc"
	while read -r kind ere; do
		case $kind in
		expect) grep -Eq -- "$ere" "$T/out" || why="${why:+$why; }no line matches /$ere/" ;;
		reject) grep -Eq -- "$ere" "$T/out" && why="${why:+$why; }a line matches /$ere/" ;;
		skip) ;;
		*) why="${why:+$why; }unknown marker '$kind'" ;;
		esac
	done <"$meta"
	if [ -z "$why" ]; then
		nchk=$(grep -c '^expect\|^reject' "$meta")
		ok "$name ($(wc -l <"$blk") lines, $nchk output checks)"
	else
		bad "$name: $why; the end of its output:"
		tail -n 15 "$T/out" | sed 's/^/    /'
	fi
}

# what `systemctl restart slurmd` does here: the test cluster's daemons
# stopped by their PIDs and started again on the same directory
guide_restart() {
	CLUSTER_KEEP=1 cluster_down
	cluster_up
}

# ---- the stand-ins: systemctl, python, and the FIFOs between them and us -------------
make_shims() {
	mkdir -p "$SHIM"
	cat >"$SHIM/systemctl" <<'EOF'
#!/bin/sh
# systemctl as tests/install/test_guides.sh stands it in (see there)
set -u
me="systemctl (test_guides.sh's stand-in)"
unitfile() {
	for d in ${NB_GUIDE_UNITDIRS:-} /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
		[ -f "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	echo "$me: unit $1 is not installed" >&2
	return 1
}
key() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
verify() {
	f=$(unitfile "$1") || return 1
	if command -v systemd-analyze >/dev/null 2>&1 && [ -z "${NB_GUIDE_STANDIN:-}" ]; then
		systemd-analyze verify "$f" || { echo "$me: systemd-analyze verify $f failed" >&2; return 1; }
	fi
}
start() {
	unit=$1
	f=$(unitfile "$unit") || return 1
	cond=$(key "$f" ConditionPathExists)
	if [ -n "$cond" ] && [ ! -e "$cond" ]; then
		echo "$me: $unit: condition $cond not met: not started"
		return 0
	fi
	user=$(key "$f" User) group=$(key "$f" Group) caps=$(key "$f" AmbientCapabilities)
	exe=$(key "$f" ExecStart | sed 's/^[-@+!:]*//')
	[ -n "$exe" ] || { echo "$me: $unit: no ExecStart=" >&2; return 1; }
	set --
	if [ -n "$user" ] && [ "$user" != root ]; then
		set -- setpriv --reuid="$user" --regid="${group:-$user}" --init-groups
		for c in $caps; do
			c=$(echo "$c" | tr 'A-Z' 'a-z' | sed 's/^cap_//')
			set -- "$@" --inh-caps=+"$c" --ambient-caps=+"$c"
		done
	fi
	echo "$me: $unit: $exe${user:+ (as $user)}"
	# shellcheck disable=SC2086
	"$@" $exe
}
verb=${1:-}
[ $# -gt 0 ] && shift
now=
[ "${1:-}" = --now ] && { now=1; shift; }
rc=0
case $verb in
restart)
	for u in "$@"; do
		case $u in slurmd|slurmd.service|slurmctld|slurmctld.service) ;;
		*) echo "$me: restart $u: only slurmd and slurmctld" >&2; exit 1 ;;
		esac
	done
	echo "restart $*" >"$NB_GUIDE_CTL"
	read -r answer <"$NB_GUIDE_ACK"
	[ "$answer" = ok ] || { echo "$me: the test cluster did not come back" >&2; exit 1; }
	echo "$me: restarted the test cluster's $*" ;;
enable|disable)
	for u in "$@"; do
		verify "$u" || rc=1
		case $u in *.timer) verify "${u%.timer}.service" || rc=1 ;; esac
		echo "$me: $verb${now:+ --now} $u: verified; its service runs when started"
	done ;;
start)
	for u in "$@"; do
		case $u in *.service) start "$u" || rc=1 ;;
		*) echo "$me: start $u: only services" >&2; rc=1 ;;
		esac
	done ;;
*)
	echo "$me: '$verb' is not stood in" >&2
	rc=1 ;;
esac
exit $rc
EOF
	cat >"$SHIM/python" <<EOF
#!/bin/sh
# 'python train.py' as tests/install/test_guides.sh stands it in: the NCCL
# emulator, two ranks per task, loading the plugin and table of the step
[ "\${1:-}" = train.py ] || { echo "python (stand-in): only 'python train.py'" >&2; exit 2; }
if [ -z "\${NCCL_TUNER_PLUGIN:-}" ]; then
	echo "train.py: no NCCL_TUNER_PLUGIN: NCCL's own choice, nothing of nccl-bot"
	exit 0
fi
NCCL_BOT_WINDOW=16
export NCCL_BOT_WINDOW
if [ -n "\${NCCL_BOT_SPOOL:-}" ]; then set -- --spool "\$NCCL_BOT_SPOOL"; else set -- --no-spool; fi
exec "$EMU" --suite consistency --scenario base --policy ucb1 --procs 2 --calls-each 4000 \\
	--plugin "\$NCCL_TUNER_PLUGIN" --table "\$NCCL_BOT_TABLE" "\$@" --measured sim
EOF
	chmod 755 "$SHIM/systemctl" "$SHIM/python"
}

# ---- --standin: the build tree instead of the packages --------------------------------
standin_prepare() {
	S=$T/standin
	mkdir -p "$S/bin" "$S/units"
	ln -s "$builddir/nccl-bot" "$S/bin/nccl-bot"
	STANDIN_ARGS="lib_prefix=$builddir/tuner harvest_helper=$builddir/nccl-bot-harvest-read"
	printf '# stand-in for the package line\noptional %s enable=opt-in mode=shadow %s\n' \
		"$builddir/spank/spank_nccl_bot.so" "$STANDIN_ARGS" >"$S/plugstack.conf"
	printf 'd /dev/shm/nccl-bot 0711 root root -\nd /var/spool/nccl-bot/outbox 0750 root root -\n' \
		>"$S/tmpfiles.conf"
	# run as root: without the package there is no account, and
	# standin_sed makes the state directory root's (-o root), where root's
	# ship and compact run; as User=nccl-bot (2026-12-05) the compactor
	# failed with "state/.lease: Permission denied" in root's directory
	for u in ship compact; do
		printf '[Service]\nType=oneshot\nConditionPathExists=/etc/nccl-bot/site.yaml\nExecStart=%s %s --config /etc/nccl-bot/site.yaml\n' \
			"$builddir/nccl-bot" $u >"$S/units/nccl-bot-$u.service"
		printf '[Timer]\nOnCalendar=*:0/10\n' >"$S/units/nccl-bot-$u.timer"
	done
	SHIM_EXTRA_PATH=$S/bin
	NB_GUIDE_UNITDIRS=$S/units NB_GUIDE_STANDIN=1
	export NB_GUIDE_UNITDIRS NB_GUIDE_STANDIN
}
standin_sed() {
	sed -i -e "s|/usr/share/slurm-spank-nccl-bot/plugstack.conf|$S/plugstack.conf|g" \
		-e "s|/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_nccl_bot.so|$builddir/spank/spank_nccl_bot.so $STANDIN_ARGS|g" \
		-e "s|/usr/lib/tmpfiles.d/nccl-bot.conf|$S/tmpfiles.conf|g" \
		-e "s|-o nccl-bot -g nccl-bot|-o root -g root|g" "$1"
}

# an administrator's shell: none of the variables tests set for nccl-bot
unset NCCL_BOT_CONFIG NCCL_BOT_STATE NCCL_BOT_REPORT_DIR NCCL_BOT_SPOOL
T=$(mktemp -d) || exit 99
chmod 755 "$T"
W=$T/work SHIM=$T/bin CTL=$T/ctl ACK=$T/ack
mkdir -p "$W"
mkfifo "$CTL" "$ACK" || exit 99
NB_GUIDE_CTL=$CTL NB_GUIDE_ACK=$ACK
export NB_GUIDE_CTL NB_GUIDE_ACK
CLUSTER_PIDS=
trap 'cluster_down; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
make_shims

# ---- the checker checked first, on a guide of its own: a block that passes with
# its expected line, one that fails halfway (sh -e), one whose expected line is
# missing, one with a rejected line, a skip, a skip without a reason, an unknown
# systemctl verb, the Uninstall phase
D=$T/self
mkdir -p "$D/etc" "$T/selfblocks"
cat >"$T/self.md" <<'SELF'
<!-- check: expect ^/.*/etc$ -->
```sh
echo /etc/slurm
```
```sh
false
echo not reached
```
<!-- check: expect ^never -->
```sh
echo something
```
<!-- check: reject ^bad -->
```sh
echo bad
```
<!-- check: skip slow on purpose -->
```sh
exit 3
```
<!-- check: skip -->
```sh
true
```
```sh
systemctl frobnicate x
```
## 9. Uninstall
```sh
true
```
SELF
guide_blocks "$T/self.md" main "$T/selfblocks"
# (parsed, never run: the release directories its blocks name)
mkdir -p "$T/relblocks"
cat >"$T/rel.md" <<'REL'
## 11. Upgrades
```sh
apt-get install ./deb/nccl-bot_*.deb ./x-1.2.3/deb/x_*.deb ./x-1.2.3/deb/y_*.deb ./nccl-bot-0.9.1/deb/z.deb
```
<!-- check: skip not this one -->
```sh
ls nccl-bot-7.0.0/deb/
```
REL
guide_blocks "$T/rel.md" main "$T/relblocks"
(
	pass=0 fail=0 skip=0 STANDIN=
	while read -r n line sh phase sect; do
		run_block "self.md:$line ($phase)" "$T/selfblocks/$n.sh" "$T/selfblocks/$n.meta" "$sh" "$sect"
	done <"$T/selfblocks/list"
	echo "self: $pass $fail $skip"
) >"$T/self.out" 2>&1
if grep -q "^ok - self.md:2 (main)" "$T/self.out" &&
	grep -q "^FAIL - self.md:5 (main): exit 1" "$T/self.out" &&
	grep -q "^FAIL - self.md:10 (main): no line matches /^never/" "$T/self.out" &&
	grep -q "^FAIL - self.md:14 (main): a line matches /^bad/" "$T/self.out" &&
	grep -q "^skip - self.md:18 (main): slow on purpose" "$T/self.out" &&
	grep -q "^FAIL - self.md:22 (main): a skip marker without a reason" "$T/self.out" &&
	grep -q "^FAIL - self.md:25 (main): exit 1" "$T/self.out" &&
	grep -q "^ok - self.md:29 (last)" "$T/self.out" &&
	grep -q "^self: 2 5 1$" "$T/self.out" &&
	[ "$(guide_releases "$T/relblocks" | tr '\n' ' ')" = "nccl-bot-0.9.1 x-1.2.3 " ] &&
	[ "$(awk '{ print $5 }' "$T/relblocks/list" | sort -u)" = upgrade ]; then
	ok "the checker: runs blocks with /etc/slurm mapped, fails on a failing command, a missing or rejected line, a reasonless skip, an unknown systemctl verb; defers Uninstall; finds the newer releases' directories"
else
	bad "the checker on its own guide:"
	sed 's/^/    /' "$T/self.out"
fi
rm -rf "$D"
unset D

# ---- the guides' blocks: parse both (both must exist) -----------------------------
mkdir -p "$T/admin" "$T/user"
for md in "$ADMIN" "$USER"; do
	[ -f "$md" ] || { bad "$md: no such file"; finish; }
done
guide_blocks "$ADMIN" main "$T/admin"
guide_blocks "$USER" main "$T/user"
if grep -q unclosed "$T/admin/list" "$T/user/list"; then
	bad "a guide has a code block that is not closed"
	finish
fi

# ---- can it run here? --------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "test_guides.sh: not root: the guides install packages and run slurmd" >&2
	finish_skip=1
elif ! cluster_have_slurm; then
	echo "test_guides.sh: Slurm or munge not installed (scripts/setup installs them)" >&2
	finish_skip=1
elif [ -z "$STANDIN" ] && ! command -v apt-get >/dev/null 2>&1; then
	echo "test_guides.sh: no apt-get: the admin guide installs Debian packages" >&2
	finish_skip=1
else
	finish_skip=
fi
if [ -n "$finish_skip" ]; then
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail = 0 ] || exit 1
	exit 77
fi
if [ -n "$STANDIN" ]; then
	for f in nccl-bot nccl-bot-harvest-read spank/spank_nccl_bot.so tuner/libnccl-tuner-bot.so; do
		[ -f "$builddir/$f" ] || { bad "--standin: $builddir/$f not built"; finish; }
	done
	standin_prepare
	SHIM=$SHIM:$SHIM_EXTRA_PATH
else
	if ! ls "$builddir"/deb/nccl-bot_*.deb >/dev/null 2>&1; then
		if ! grep -q '^deb:' "$builddir/Makefile" 2>/dev/null; then
			echo "test_guides.sh: no packages in $builddir/deb and no 'make deb' target" >&2
			echo "$pass passed, $fail failed, $skip skipped"
			exit 77
		fi
		echo "# make deb (deb/ holds no packages)"
		if ! make -C "$builddir" deb >"$T/make-deb.log" 2>&1; then
			bad "make deb"
			tail -n 20 "$T/make-deb.log" | sed 's/^/    /'
			finish
		fi
	fi
	ln -s "$builddir/deb" "$W/deb"
	# a newer release's packages where a block names them (the header says how)
	V=$(sed -n 's/^VERSION = //p' "$builddir/Makefile")
	rels=$(guide_releases "$T/admin" "$T/user")
	for rel in $rels; do
		rv=${rel##*-}
		if [ "$rv" = "$V" ]; then
			bad "a guide names $rel/deb/ as a newer release, but $V is deb/'s version"
			finish
		fi
		if ! grep -q "nccl-bot-rank-$V\([^0-9a-z.+~]\|\$\)" "$ADMIN"; then
			bad "doc/admin.md upgrades to $rv but never names deb/'s rank package nccl-bot-rank-$V: its example versions are not this tree's"
			finish
		fi
		tb=$(date +%s)
		if make -C "$builddir" deb DEBDIR="$T/$rel/deb" DEB_OTHER_VERSION="$rv" >"$T/make-deb-$rv.log" 2>&1; then
			ok "$rel/deb/: release $rv's packages for the upgrade (make deb DEB_OTHER_VERSION=$rv, $(($(date +%s) - tb)) s)"
		else
			bad "make deb DEB_OTHER_VERSION=$rv"
			tail -n 20 "$T/make-deb-$rv.log" | sed 's/^/    /'
			finish
		fi
		ln -s "$T/$rel" "$W/$rel"
	done
fi
# one install test at a time on this host: they install and purge the same
# packages and make the same directories (tests/install/test_deb.sh, run by
# hand beside this one, purged the packages under it once)
LOCK=/run/lock/nccl-bot-install-tests.lock
[ -d /run/lock ] || LOCK=/tmp/nccl-bot-install-tests.lock
exec 9>>"$LOCK"
if command -v flock >/dev/null 2>&1 && ! flock -w 900 9; then
	bad "another install test has held $LOCK for 15 minutes"
	finish
fi
HAD_ACCOUNT=
id nccl-bot >/dev/null 2>&1 && HAD_ACCOUNT=1
# the guides make and remove these; a host that has them already (another
# installation, or a run that was killed) cannot tell ours from its own
pkgpaths="/usr/bin/nccl-bot /opt/nccl-bot /usr/share/slurm-spank-nccl-bot"
[ -n "$STANDIN" ] && pkgpaths=
for p in /etc/nccl-bot /var/lib/nccl-bot /var/spool/nccl-bot $pkgpaths; do
	if [ -e "$p" ]; then
		bad "$p exists before the guides make anything: remove the earlier installation first"
		finish
	fi
done
[ -x "$EMU" ] || make -C "$builddir" tests/emulator/nccl-emu >"$T/make-emu.log" 2>&1 ||
	{ bad "tests/emulator/nccl-emu cannot be built (the stand-in for python train.py)"; finish; }

# ---- the test cluster, as the guides' example cluster ---------------------------------
cluster_init || exit 99
mkdir -p "$D/etc/plugstack.conf.d"
echo "include $D/etc/plugstack.conf.d/*.conf" >"$D/etc/plugstack.conf"
echo 'PartitionName=gpu Nodes=n[1-2] MaxTime=INFINITE State=UP OverSubscribe=YES' >>"$SLURM_CONF"
cluster_up || exit 99

t0=$(date +%s)
for phase in main last; do
	for g in admin user; do
		[ $phase = last ] && [ $g = user ] && continue
		md=$ADMIN
		[ $g = user ] && md=$USER
		while read -r n line sh ph sect; do
			[ "$ph" = $phase ] || continue
			run_block "doc/$g.md:$line" "$T/$g/$n.sh" "$T/$g/$n.meta" "$sh" "$sect"
		done <"$T/$g/list"
	done
done
t1=$(date +%s)
echo "# the guides' blocks took $((t1 - t0)) s"

# ---- nothing left --------------------------------------------------------------------
if [ -z "$STANDIN" ]; then
	left=$(dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' 'nccl-bot*' 'slurm-spank-nccl-bot' 2>/dev/null |
		awk '$2 !~ /^un/ && $2 !~ /^pn/ { print $1 }')
	if [ -z "$left" ]; then ok "no package of nccl-bot left installed or with its configuration files"
	else bad "packages left: $left"; fi
	found=
	for p in /usr/bin/nccl-bot /usr/libexec/nccl-bot /opt/nccl-bot /usr/share/nccl-bot \
		/usr/share/slurm-spank-nccl-bot /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_nccl_bot.so \
		/usr/lib/tmpfiles.d/nccl-bot.conf /lib/systemd/system/nccl-bot-ship.service \
		/usr/lib/systemd/system/nccl-bot-ship.service /etc/nccl-bot /var/lib/nccl-bot \
		/var/spool/nccl-bot /dev/shm/nccl-bot "$D/etc/plugstack.conf.d/nccl-bot.conf" \
		/usr/share/doc/nccl-bot* /usr/share/doc/slurm-spank-nccl-bot /usr/share/lintian/overrides/nccl-bot* \
		/usr/share/man/man1/nccl-bot* /usr/share/man/man8/spank_nccl_bot*; do
		[ -e "$p" ] || [ -L "$p" ] && found="$found $p"
	done
	if [ -z "$found" ]; then ok "no file of nccl-bot left, of either release (commands, rank libraries, plugin, units, documentation, configuration, state, outbox, spool)"
	else bad "left behind:$found"; fi
	if grep -q nccl-bot "$D/etc/plugstack.conf"; then bad "plugstack.conf still names nccl-bot"
	else ok "plugstack.conf names nccl-bot no more"; fi
	if [ -z "$HAD_ACCOUNT" ] && id nccl-bot >/dev/null 2>&1; then
		echo "# the service account nccl-bot stays (doc/admin.md says so); removed here, as it was not there before"
		userdel nccl-bot 2>/dev/null
	fi
else
	# the stand-in's uninstall ran without apt-get: what the guide made itself
	rm -rf /etc/nccl-bot /var/lib/nccl-bot /var/spool/nccl-bot /dev/shm/nccl-bot
fi
st=$(sinfo -h -o '%t' | sort -u | tr '\n' ' ')
case $st in
*drain*|*drng*|*down*|*fail*) bad "a node drained or down: $st"; tail -n 20 "$D"/log/slurmd-n1.log | sed 's/^/    /' ;;
*) ok "no node drained ($st)" ;;
esac
finish
