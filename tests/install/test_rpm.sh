#!/bin/sh
# test_rpm.sh - `make rpm` builds the binary RPMs of packaging/rpm/nccl-bot.spec
# on this (Debian) machine, and they hold the split the Debian packages hold
# (doc/slurm.md, "RPM packages"): the rank-side library under
# /opt/nccl-bot/VERSION/lib in nccl-bot-rank-VERSION alone, the SPANK plugin
# in Slurm's plugin directory in slurm-spank-nccl-bot alone (Release naming
# the Slurm major of the headers, requiring the exact rank package and
# nccl-bot, its plugstack.conf line under /usr/share, nothing under
# /etc/slurm), the command and its helper in nccl-bot, the container
# snippets in the noarch nccl-bot-containers; no file in two packages; and
# the packaged nccl-bot, helper, rank library and plugin need the same
# libraries (DT_NEEDED) as the ones the tree built, and the rank library
# and the plugin export the same names and need the same newest glibc.
#
# Run in the configured and built tree (builddir=DIR otherwise); nothing is
# installed (rpm -qp on the files), so root is not needed. Skips (77)
# without rpmbuild, rpm2archive or readelf. Leaves the RPMs in rpm/RPMS/.
# Ends with "N passed, N failed, N skipped".
set -u
b=${builddir:-.}
for tool in rpmbuild rpm rpm2archive readelf tar make; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "test_rpm.sh: $tool not found (Debian: apt-get install rpm binutils), skipping" >&2
		exit 77
	fi
done
if [ ! -f "$b/Makefile" ] || [ ! -x "$b/nccl-bot" ]; then
	echo "test_rpm.sh: $b is not a configured and built tree (run configure and make first)" >&2
	exit 99
fi
b=$(cd "$b" && pwd)
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
skip() { skip=$((skip + 1)); echo "SKIP - $1"; }
finish() {
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ] || exit 1
	exit 0
}

mkvar() { sed -n "s/^$1 = //p" "$b/Makefile" | head -n 1; }
version=$(mkvar PACKAGE_VERSION)
libdir=$(rpm --eval '%{_libdir}')
plugdir=$libdir/slurm
# configure found Slurm's headers: its output variable HAVE_SLURM_TRUE is empty
with_slurm=no
grep -q "^HAVE_SLURM_TRUE=''" "$b/config.log" 2>/dev/null && with_slurm=yes
slurm_inc=/usr/include
case $(mkvar SLURM_CPPFLAGS) in -I*) slurm_inc=$(mkvar SLURM_CPPFLAGS); slurm_inc=${slurm_inc#-I} ;; esac

# ---- make rpm -------------------------------------------------------------
t0=$(date +%s)
(cd "$b" && make rpm) >"$tmp/make.log" 2>&1
rc=$?
t1=$(date +%s)
echo "# make rpm: exit $rc, $((t1 - t0)) s"
if [ $rc -ne 0 ]; then
	bad "make rpm exits 0 (got $rc)"
	tail -n 25 "$tmp/make.log" | sed 's/^/    /'
	finish
fi
ok "make rpm exits 0 ($((t1 - t0)) s)"

# NAME of each RPM file under rpm/RPMS
: >"$tmp/names"
for f in "$b"/rpm/RPMS/*/*.rpm; do
	[ -f "$f" ] || continue
	printf '%s %s\n' "$(rpm -qp --qf '%{NAME}' "$f" 2>/dev/null)" "$f" >>"$tmp/names"
done
rpmof() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/names"; }
want="nccl-bot nccl-bot-rank-$version nccl-bot-containers"
[ $with_slurm = yes ] && want="$want slurm-spank-nccl-bot"
for n in $want; do
	if [ -n "$(rpmof "$n")" ]; then ok "rpm/RPMS holds $n"; else bad "rpm/RPMS lacks $n"; fi
done
got=$(awk '{ print $1 }' "$tmp/names" | sort | tr '\n' ' ')
wsorted=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
if [ "$got" = "$wsorted" ]; then ok "exactly these packages: $got"; else bad "packages: $got, want $wsorted"; fi
main=$(rpmof nccl-bot) rank=$(rpmof "nccl-bot-rank-$version")
spank=$(rpmof slurm-spank-nccl-bot) cont=$(rpmof nccl-bot-containers)
[ -n "$main" ] && [ -n "$rank" ] && [ -n "$cont" ] || finish

# each package's files: "PATH MODE LINKTO"
for n in $want; do
	rpm -qp --qf '[%{FILENAMES}\t%{FILEMODES:perms}\t%{FILELINKTOS}\n]' "$(rpmof "$n")" >"$tmp/files.$n"
	awk -F '\t' '$2 !~ /^d/ { print $1 }' "$tmp/files.$n" >"$tmp/plain.$n"
done
has() { grep -qx -- "$2" "$tmp/plain.$1"; }  # PACKAGE PATH: a file (not a dir)
only_in() {  # PACKAGE PATTERN: files matching PATTERN (grep -E) exist, in PACKAGE alone
	if ! grep -Eq -- "$2" "$tmp/plain.$1"; then bad "$1 holds no file matching $2"; return; fi
	others=
	for n in $want; do
		[ "$n" = "$1" ] && continue
		grep -Eq -- "$2" "$tmp/plain.$n" && others="$others $n"
	done
	if [ -z "$others" ]; then ok "files matching $2 are in $1 alone"; else bad "files matching $2 also in$others"; fi
}

# ---- the rank-side library --------------------------------------------------
rdir=/opt/nccl-bot/$version/lib
if has "nccl-bot-rank-$version" "$rdir/libnccl-tuner-bot.so"; then ok "rank: $rdir/libnccl-tuner-bot.so"
else bad "rank: no $rdir/libnccl-tuner-bot.so"; fi
link=$(awk -F '\t' -v p="$rdir/libnccl-profiler-bot.so" '$1 == p { print $3 }' "$tmp/files.nccl-bot-rank-$version")
if [ "$link" = libnccl-tuner-bot.so ]; then ok "rank: libnccl-profiler-bot.so -> libnccl-tuner-bot.so"
else bad "rank: libnccl-profiler-bot.so links to '$link'"; fi
only_in "nccl-bot-rank-$version" '^/opt/'
# only /opt/nccl-bot/VERSION (and rpm's build-id links)
stray=$(grep -Ev "^($rdir/|/usr/lib/\.build-id/)" "$tmp/plain.nccl-bot-rank-$version" | tr '\n' ' ')
if [ -z "$stray" ]; then ok "rank: nothing outside $rdir"; else bad "rank: files outside $rdir: $stray"; fi
if rpm -qp --provides "$rank" | grep -q "^nccl-bot-rank = $version-"; then ok "rank provides nccl-bot-rank = $version"
else bad "rank does not provide nccl-bot-rank = $version"; fi
if rpm -qp --conflicts --obsoletes "$rank" | grep -q .; then bad "rank conflicts or obsoletes: $(rpm -qp --conflicts --obsoletes "$rank" | tr '\n' ' ')"
else ok "rank: no Conflicts or Obsoletes (versions co-install)"; fi

# ---- the SPANK plugin -------------------------------------------------------
if [ $with_slurm = yes ]; then
	if has slurm-spank-nccl-bot "$plugdir/spank_nccl_bot.so"; then ok "spank: $plugdir/spank_nccl_bot.so"
	else bad "spank: no $plugdir/spank_nccl_bot.so"; fi
	only_in slurm-spank-nccl-bot 'spank_nccl_bot\.so$'
	only_in slurm-spank-nccl-bot '^/usr/share/slurm-spank-nccl-bot/plugstack\.conf$'
	if grep -q '^/etc/slurm' "$tmp/files.slurm-spank-nccl-bot"; then bad "spank: writes /etc/slurm"
	else ok "spank: nothing under /etc/slurm (never enabled)"; fi
	# Release carries the Slurm major.minor of the headers
	hex=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]*\).*/\1/p' "$slurm_inc/slurm/slurm_version.h")
	n=$(printf '%d' "0x$hex")
	major=$(printf '%d.%02d' $((n >> 16 & 255)) $((n >> 8 & 255)))
	vr=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$spank")
	case $vr in
	"$version-"*".slurm$major"|"$version-"*".slurm$major."*) ok "spank: $vr names Slurm $major" ;;
	*) bad "spank: version-release $vr does not name Slurm $major" ;;
	esac
	req=$(rpm -qp --requires "$spank")
	mvr=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$main")
	for r in "nccl-bot-rank-$version = $mvr" "nccl-bot = $mvr"; do
		if printf '%s\n' "$req" | grep -qx "$r"; then ok "spank requires $r"; else bad "spank does not require $r"; fi
	done
	if printf '%s\n' "$req" | grep -q "slurm >= $major"; then ok "spank requires slurm >= $major"
	else bad "spank: no Requires on Slurm $major"; fi
	# the plugstack line names the installed plugin, optional
	rpm2archive - <"$spank" | tar -xzf - -C "$tmp" ./usr/share/slurm-spank-nccl-bot/plugstack.conf 2>/dev/null
	line=$(grep -v '^#' "$tmp/usr/share/slurm-spank-nccl-bot/plugstack.conf" 2>/dev/null | head -n 1)
	case $line in
	"optional $plugdir/spank_nccl_bot.so "*) ok "plugstack line: $line" ;;
	*) bad "plugstack line '$line' is not 'optional $plugdir/spank_nccl_bot.so ...'" ;;
	esac
else
	skip "the SPANK plugin's package (configure found no Slurm headers)"
fi

# ---- nccl-bot and the containers' snippets ----------------------------------
for p in /usr/bin/nccl-bot /usr/libexec/nccl-bot/nccl-bot-harvest-read; do
	if has nccl-bot "$p"; then ok "nccl-bot: $p"; else bad "nccl-bot: no $p"; fi
done
only_in nccl-bot '^/usr/bin/nccl-bot$'
only_in nccl-bot '^/usr/share/man/man1/nccl-bot\.1'
only_in nccl-bot-containers '^/usr/share/nccl-bot/(enroot|apptainer)/'
if [ "$(rpm -qp --qf '%{ARCH}' "$cont")" = noarch ]; then ok "nccl-bot-containers is noarch"
else bad "nccl-bot-containers is $(rpm -qp --qf '%{ARCH}' "$cont")"; fi
if rpm2archive - <"$cont" | tar -xzOf - ./usr/share/nccl-bot/enroot/mounts.d/50-nccl-bot.fstab 2>/dev/null |
	grep -q "^/opt/nccl-bot /opt/nccl-bot none "; then
	ok "containers: the enroot mount binds /opt/nccl-bot (every version, $rdir among them)"
else bad "containers: the enroot mount does not bind /opt/nccl-bot"; fi
# the service pieces: tmpfiles.d where systemd-tmpfiles reads it; the units
# and the account from contrib/systemd/ and contrib/sysusers.d/ where the
# tree has them
if has nccl-bot /usr/lib/tmpfiles.d/nccl-bot.conf; then ok "nccl-bot: /usr/lib/tmpfiles.d/nccl-bot.conf"
else bad "nccl-bot: no /usr/lib/tmpfiles.d/nccl-bot.conf"; fi
rpm -qp --scripts "$main" >"$tmp/scripts" 2>&1
if grep -Eq 'systemctl[^;|&]* (enable|start|restart)( |$)' "$tmp/scripts"; then
	bad "nccl-bot's scriptlets enable or start a unit: $(grep -E 'systemctl' "$tmp/scripts" | tr '\n' ' ')"
else ok "nccl-bot's scriptlets enable and start nothing"; fi
units=$(grep -E '\.(service|timer)$' "$tmp/plain.nccl-bot" | tr '\n' ' ')
if [ -z "$units" ] && [ ! -d "$b/contrib/systemd" ] && [ ! -d "${srcdir:-$b}/contrib/systemd" ]; then
	skip "service pieces: the tree has no contrib/systemd/ yet"
else
	for u in nccl-bot-ship.service nccl-bot-ship.timer nccl-bot-compact.service nccl-bot-compact.timer; do
		if has nccl-bot "/usr/lib/systemd/system/$u"; then ok "nccl-bot: /usr/lib/systemd/system/$u"
		else bad "nccl-bot: no /usr/lib/systemd/system/$u (units: $units)"; fi
	done
	if has nccl-bot /usr/lib/sysusers.d/nccl-bot.conf; then ok "nccl-bot: /usr/lib/sysusers.d/nccl-bot.conf"
	else bad "nccl-bot: no /usr/lib/sysusers.d/nccl-bot.conf"; fi
	if grep -q 'systemd-sysusers' "$tmp/scripts"; then ok "nccl-bot's %post makes the account (systemd-sysusers)"
	else bad "nccl-bot's scriptlets do not run systemd-sysusers"; fi
	if grep -Eq '^/etc/systemd/|\.wants/' "$tmp/plain.nccl-bot"; then bad "nccl-bot enables a unit"
	else ok "nccl-bot enables no unit"; fi
fi

# no file (directories aside) in two packages
dups=$(cat "$tmp"/plain.* | grep -v '^/usr/lib/\.build-id/' | sort | uniq -d | tr '\n' ' ')
if [ -z "$dups" ]; then ok "no file is in two packages"; else bad "files in two packages: $dups"; fi

# ---- the packaged ELF files need what the tree's do --------------------------
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' '; }
# exported names and the highest GLIBC_ version referenced (the rank
# library's must stay at 2.28: test_so_deps.sh)
exports() { readelf -W --dyn-syms "$1" 2>/dev/null | awk '$5 == "GLOBAL" && $7 != "UND" { sub(/@.*/, "", $8); print $8 }' | sort | tr '\n' ' '; }
maxglibc() { readelf -W --dyn-syms "$1" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sort -t. -k1,1 -k2,2n -k3,3n -u | tail -n 1; }
mkdir -p "$tmp/root"
for f in "$main" "$rank" ${spank:+"$spank"}; do
	rpm2archive - <"$f" | tar -xzf - -C "$tmp/root" || bad "rpm2archive $f"
done
cmp_needed() {  # NAME PACKAGED TREE
	if [ ! -f "$2" ]; then bad "$1: $2 is not in the package"; return; fi
	if [ ! -f "$3" ]; then skip "$1: $3 not built in the tree"; return; fi
	pn=$(needed "$2") tn=$(needed "$3")
	if [ -n "$pn" ] && [ "$pn" = "$tn" ]; then ok "$1: DT_NEEDED as the tree's: $pn"
	else bad "$1: DT_NEEDED '$pn', the tree's '$tn'"; fi
	[ "${4:-}" = interface ] || return
	pe=$(exports "$2") te=$(exports "$3")
	if [ -n "$pe" ] && [ "$pe" = "$te" ]; then ok "$1: exports as the tree's: $pe"
	else bad "$1: exports '$pe', the tree's '$te'"; fi
	pg=$(maxglibc "$2") tg=$(maxglibc "$3")
	if [ -n "$pg" ] && [ "$pg" = "$tg" ]; then ok "$1: highest glibc version as the tree's: $pg"
	else bad "$1: highest glibc version '$pg', the tree's '$tg'"; fi
}
cmp_needed nccl-bot "$tmp/root/usr/bin/nccl-bot" "$b/nccl-bot"
cmp_needed nccl-bot-harvest-read "$tmp/root/usr/libexec/nccl-bot/nccl-bot-harvest-read" "$b/nccl-bot-harvest-read"
cmp_needed libnccl-tuner-bot.so "$tmp/root$rdir/libnccl-tuner-bot.so" "$b/tuner/libnccl-tuner-bot.so" interface
# the rank library loads into any job: libc and libpthread alone (test_so_deps.sh)
rn=$(needed "$tmp/root$rdir/libnccl-tuner-bot.so")
case " $rn" in
" libc.so.6 libpthread.so.0 "|" libc.so.6 ") ok "rank: needs libc (and libpthread.so.0) alone" ;;
*) bad "rank: needs '$rn'" ;;
esac
if [ $with_slurm = yes ]; then
	cmp_needed spank_nccl_bot.so "$tmp/root$plugdir/spank_nccl_bot.so" "$b/spank/spank_nccl_bot.so" interface
fi
finish
