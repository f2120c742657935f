#!/bin/sh
# tests/container/test_container_ns.sh - a rank in a container, as if the
# host's file system were not there: in a new mount namespace (unshare
# --mount, root) a root file system is made from a tmpfs and bind mounts
# only, laid out as contrib/'s enroot mounts.d entry and Apptainer binds lay
# out a container: the rank library bound read-only at its fixed path
# (/opt/nccl-bot/lib), the spool tmpfs at its fixed path
# (/dev/shm/nccl-bot), the NCCL emulator and the few libc files it and the
# library need. Then, chrooted there, with the variables the SPANK plugin
# sets (NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN by absolute path, the
# step table, NCCL_BOT_SPOOL under the spool), emulator ranks load the
# tuner, decide alike from the table, and write their spool files, which
# the host finds in the directory it bound. A probe shows /usr/local, /work,
# the build directory and /etc absent inside. Then ranks with the spool
# bound read-only: they decide alike, and NCCL's log says the spool file
# could not be created on a read-only file system.
#
# Skips (77), saying why, as non-root or where unshare/mount is refused
# (an unprivileged container).
set -u
builddir=$(pwd)
srcdir=$(cd "${srcdir:-.}" && pwd)
bot=$builddir/nccl-bot
emu=$builddir/tests/emulator/nccl-emu
lib=$builddir/tuner/libnccl-tuner-bot.so
cc=${CC:-cc}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: test_container_ns.sh needs root (mount namespaces, bind mounts, chroot)"; exit 77
fi
for p in unshare mount chroot; do
	command -v $p >/dev/null 2>&1 || { echo "SKIP: no $p"; exit 77; }
done
for f in "$bot" "$emu" "$lib"; do
	[ -f "$f" ] || { echo "test_container_ns.sh: $f not built" >&2; exit 99; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/mnt"
if ! unshare --mount --propagation private mount -t tmpfs nbprobe "$tmp/mnt" >"$tmp/out" 2>&1; then
	echo "SKIP: unshare --mount or mounting a tmpfs is not permitted here: $(head -n 1 "$tmp/out")"
	exit 77
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; sed 's/^/    /' "$tmp/out" | head -n 20; fi
}

$cc -o "$tmp/probe" "$srcdir/tests/container/probe.c" || { echo "test_container_ns.sh: cannot build the probe" >&2; exit 99; }
# the libc files the emulator, the library and the probe load: the only
# host files the root gets besides our three
libs=$( (ldd "$emu"; ldd "$lib"; ldd "$tmp/probe") | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
mkdir -p "$tmp/root" "$tmp/spool/42.0.0.n1"
chmod 711 "$tmp/spool"
chmod 700 "$tmp/spool/42.0.0.n1"
# a table as srun pins it for a step on the prior; policy sweep, because a
# learning policy's table from the prior alone decides nothing since table
# format v3 (doc/formats.md section 8: no probe where the table has no
# entry), and "it loaded" is shown by decisions
"$bot" env --prior-only --policy sweep --lib "$lib" >"$tmp/env" 2>"$tmp/out" || { cat "$tmp/out"; exit 99; }
table=$(sed -n "s/^export NCCL_BOT_TABLE='\(.*\)'$/\1/p" "$tmp/env")
[ -n "$table" ] || { echo "test_container_ns.sh: no table from nccl-bot env" >&2; exit 99; }

cat >"$tmp/inside.sh" <<'INSIDE'
set -eu
R=$1 lib=$2 spool=$3 emu=$4 probe=$5 libs=$6 table=$7 builddir=$8
# a private root: nothing of the host but what is bound below
mount -t tmpfs -o mode=755 nbroot "$R"
mkdir -p "$R/opt/nccl-bot/lib" "$R/dev/shm/nccl-bot" "$R/bin" "$R/tmp" "$R/proc"
# /proc, as every container runtime mounts it (the sanitizer build's leak
# checker reads it)
mount -t proc nbproc "$R/proc"
# bindfile SRC DST: one file, at DST inside the root
bindfile() { mkdir -p "$R$(dirname "$2")"; : >"$R$2"; mount --bind "$1" "$R$2"; }
# the lib_prefix at its fixed path, read-only (enroot mounts.d: bind,ro)
mount --bind "$(dirname "$lib")" "$R/opt/nccl-bot/lib"
mount -o remount,bind,ro "$R/opt/nccl-bot/lib"
# the spool tmpfs (enroot mounts.d: bind,rw)
mount --bind "$spool" "$R/dev/shm/nccl-bot"
bindfile "$emu" /bin/nccl-emu
bindfile "$probe" /bin/probe
for l in $libs; do bindfile "$l" "$l"; done
echo "--- probe"
chroot "$R" /bin/probe /opt/nccl-bot/lib/libnccl-tuner-bot.so /dev/shm/nccl-bot/42.0.0.n1 \
	/usr/local /work "$builddir" /etc /usr/bin /home /root
echo "--- read-only"
# (a failed redirection on ':' would end this shell: a child tries)
if sh -c ': >"$1"' sh "$R/opt/nccl-bot/lib/x" 2>/dev/null; then
	echo "lib writable"; else echo "lib read-only"; fi
echo "--- ranks"
cd "$R"
exec chroot "$R" /bin/nccl-emu --suite consistency --scenario base --policy sweep --procs 2 \
	--calls-each 2000 --plugin /opt/nccl-bot/lib/libnccl-tuner-bot.so --table "$table" \
	--spool /dev/shm/nccl-bot/42.0.0.n1 --measured sim -v
INSIDE
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	NCCL_TUNER_PLUGIN=/opt/nccl-bot/lib/libnccl-tuner-bot.so \
	NCCL_PROFILER_PLUGIN=/opt/nccl-bot/lib/libnccl-tuner-bot.so \
	NCCL_BOT_TABLE="$table" NCCL_BOT_SPOOL=/dev/shm/nccl-bot/42.0.0.n1 \
	timeout 300 unshare --mount --propagation private sh "$tmp/inside.sh" "$tmp/root" "$lib" \
	"$tmp/spool" "$emu" "$tmp/probe" "$libs" "$table" "$builddir" >"$tmp/out" 2>&1
rc=$?
cp "$tmp/out" "$tmp/run.log"
check "the emulator ranks ran in the minimal root (exit 0)" test $rc -eq 0
check "  ... the library at its fixed path, seen inside" grep -q "^present /opt/nccl-bot/lib/libnccl-tuner-bot.so$" "$tmp/out"
check "  ... the step's spool directory, seen inside" grep -q "^present /dev/shm/nccl-bot/42.0.0.n1$" "$tmp/out"
for p in /usr/local /work "$builddir" /etc /usr/bin /home /root; do
	check "  ... the host's $p invisible" grep -q "^absent $p\$" "$tmp/out"
done
check "  ... the library bound read-only" grep -q "^lib read-only$" "$tmp/out"
check "the tuner loaded by absolute path and decided alike on every rank (PASS)" \
	grep -q "^PASS consistency" "$tmp/out"
check "  ... the tuner changed some of NCCL's choices (it loaded)" \
	sh -c "grep '^PASS consistency' '$tmp/out' | grep -q 'overridden [0-9.]*[1-9][0-9.]*%'"
check "  ... no failure" grep -q " 0 failed" "$tmp/out"; grep "^PASS consistency" "$tmp/run.log" | head -n 3
n=$(find "$tmp/spool/42.0.0.n1" -name '*.spool' -type f | wc -l)
check "spool files written through the bind mount, on the host ($n)" test "$n" -ge 1
"$bot" spool show "$tmp/spool/42.0.0.n1" >"$tmp/out" 2>&1
check "  ... and they read back" test $? -eq 0
check "nothing left mounted on the host" sh -c "! grep -q '$tmp/root' /proc/mounts"

# The spool bound read-only (a container that binds it ro, or a
# read-only image path): the ranks still decide, and NCCL's log says what
# failed in words a user can act on. It said "spool ...: unlink: Read-only
# file system" (the stale temporary name's removal, the first write step),
# as if something of the user's were being removed.
mkdir -p "$tmp/rospool"
cat >"$tmp/ro.sh" <<'RO'
set -eu
mount --bind "$1" "$1"
mount -o remount,bind,ro "$1"
exec "$2" --suite consistency --scenario base --policy sweep --procs 2 --calls-each 200 \
	--plugin "$3" --table "$4" --spool "$1" -vv
RO
timeout 120 unshare --mount --propagation private sh "$tmp/ro.sh" "$tmp/rospool" "$emu" "$lib" \
	"$table" >"$tmp/out" 2>&1
rc=$?
cp "$tmp/out" "$tmp/ro.log"
check "a read-only spool: the ranks ran and decided alike (exit 0)" test $rc -eq 0
check "  ... the log says the file could not be created on a read-only file system" \
	grep -q "nccl-bot: spool $tmp/rospool/nb-[^ ]*\.spool: creating the file: Read-only file system (measurements of this process are not kept" "$tmp/out"
check "  ... and never 'unlink'" sh -c "! grep -q 'spool .*: unlink' '$tmp/out'"

[ "$fail" -eq 0 ] || { echo "--- the run:"; sed "s/^/    /" "$tmp/run.log"; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
