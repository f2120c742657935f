#!/bin/sh
# tests/cli/test_doctor.sh - `nccl-bot doctor` as a node health check, on a
# plugstack.conf, plugins and directories made in a temporary directory:
# the healthy case (exit 0, nothing printed), then each problem alone
# (exit 1, one line naming it): no plugin line, two, a missing plugin, a
# library that is not a Slurm plugin, a plugin built for another Slurm, a
# plugin that needs a library not found here (DT_NEEDED), a
# bad argument, a missing or profiler-less rank library, a spool not on a
# tmpfs or writable by others, a bad outbox, enroot and Apptainer
# configurations without our binds or hook; warnings that keep exit 0 (a
# kill switch, enable=off, an unread plugstack.conf.d drop-in); --json;
# usage errors (exit 2). Also the contrib/ environment snippets: the enroot
# hook and the APPTAINERENV_ printer keep nccl-bot's variables and leave a
# user's own alone.
#
# The plugins are made here with the C compiler (a shared object with
# plugin_name, plugin_type and plugin_version, as SPANK_PLUGIN() makes
# them), so no Slurm is needed; the rank library is the build's.
set -u
bot=${NCCL_BOT:-./nccl-bot}
top=${abs_top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
cc=${CC:-cc}
tmp=$(mktemp -d)
spool=/dev/shm/nb-doctor-$$
trap 'rm -rf "$tmp" "$spool" "$spool.bad" "$spool.lnk" "$spool.dangling"' EXIT
EXPECT_BASIC=1
. "${top_srcdir:-${srcdir:-.}}/tests/cli/lib.sh"

if [ ! -f "$top/tuner/libnccl-tuner-bot.so" ]; then
	echo "SKIP: no tuner/libnccl-tuner-bot.so built"; exit 77
fi
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
	echo "SKIP: /dev/shm is not a tmpfs here"; exit 77
fi
# fake_plugin FILE VERSION_NUMBER [NAME]: a shared object as SPANK_PLUGIN() makes one
fake_plugin() {
	printf 'const char plugin_name[] = "%s";\nconst char plugin_type[] = "spank";\nconst unsigned int plugin_version = %s;\nconst unsigned int spank_plugin_version = 1;\n' \
		"${3:-nccl_bot}" "$2" >"$tmp/p.c"
	$cc -shared -fPIC -o "$1" "$tmp/p.c"
}
mkdir -p "$tmp/plugins" "$tmp/other" "$tmp/outbox" "$tmp/etc/plugstack.conf.d" "$tmp/nolib" \
	"$tmp/tuneronly"
if ! fake_plugin "$tmp/plugins/spank_nccl_bot.so" 0x160508; then
	echo "SKIP: no C compiler ($cc) to make a plugin with"; exit 77
fi
fake_plugin "$tmp/other/spank_nccl_bot.so" 0x180b05
chmod 755 "$tmp/outbox"
lib=$top/tuner
base="lib_prefix=$lib spool_dir=$spool"
# plug ARGS...: plugstack.conf naming the 22.05 plugin with ARGS
plug() { echo "optional $tmp/plugins/spank_nccl_bot.so $*" >"$tmp/etc/plugstack.conf"; }
doc() { "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
	--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 "$@"; }

plug $base enable=default mode=shadow state_dir=$tmp
expect "healthy: exit 0" 0 "" -- doc
expect "  ... and nothing printed" 0 "" -- test ! -s "$tmp/out"
expect "  ... -v lists the checks and says healthy" 0 "^healthy$" -- doc -v
expect "  ... the plugin's version read from the file" 0 "ok: plugin version: .*built for Slurm 22.05.8, this is 22.05.8" -- doc -v
expect "  ... the rank library a tuner and profiler plugin" 0 "ok: rank library: $lib/libnccl-tuner-bot.so" -- doc -v
expect "  ... a missing spool_dir on a tmpfs is made later" 0 "ok: spool: spool_dir=$spool: not there yet" -- doc -v
expect "plugin built for 22.05, this is 24.11: exit 1, says which package" 1 \
	"^problem: plugin version: .*built for Slurm 22.05, this is Slurm 24.11 (--slurm-version).*install the package built for 24.11" -- \
	doc --slurm-version 24.11.5
expect "  ... the minor counts too (22.05 plugin, Slurm 22.11)" 1 "built for Slurm 22.05, this is Slurm 22.11" -- \
	doc --slurm-version 22.11
expect "  ... the micro does not (22.05.8 plugin, Slurm 22.05.2)" 0 "" -- doc --slurm-version 22.05.2
echo "optional $tmp/other/spank_nccl_bot.so $base" >"$tmp/etc/plugstack.conf"
expect "plugin built for 24.11, this is 22.05: exit 1" 1 "built for Slurm 24.11, this is Slurm 22.05" -- doc
echo "optional spank_nccl_bot.so $base" >"$tmp/etc/plugstack.conf"
expect "a plugin named without a path is found in --plugin-dir" 0 "" -- doc --plugin-dir "$tmp/nolib:$tmp/plugins"
expect "  ... and not found elsewhere: exit 1" 1 "^problem: plugin: .*not found in PluginDir ($tmp/nolib)" -- \
	doc --plugin-dir "$tmp/nolib"
printf 'ClusterName=x\n  pluginDir=%s:%s # the plugins\n' "$tmp/nolib" "$tmp/plugins" >"$tmp/etc/slurm.conf"
expect "  ... else in slurm.conf's PluginDir= beside plugstack.conf" 0 "ok: plugin version: $tmp/plugins/spank_nccl_bot.so" -- doc -v
rm "$tmp/etc/slurm.conf"
echo "optional $tmp/nolib/spank_nccl_bot.so $base" >"$tmp/etc/plugstack.conf"
expect "a missing plugin file: exit 1" 1 "^problem: plugin: $tmp/nolib/spank_nccl_bot.so: No such file" -- doc
cp "$lib/libnccl-tuner-bot.so" "$tmp/nolib/spank_nccl_bot.so"
expect "a library that is not a Slurm plugin: exit 1" 1 "^problem: plugin: .*not a Slurm plugin: does not export plugin_type" -- doc
fake_plugin "$tmp/nolib/spank_nccl_bot.so" 0x160508 pyxis
expect "another SPANK plugin under our name: exit 1" 1 "a Slurm plugin of type 'spank' named 'pyxis'" -- doc
fake_plugin "$tmp/nolib/spank_nccl_bot.so" 0x160508 && chmod 666 "$tmp/nolib/spank_nccl_bot.so"
expect "a plugin others may write: exit 1" 1 "^problem: plugin: .*writable by group or others (mode 666)" -- doc

# the plugin's needed libraries (DT_NEEDED) must load here: a node where
# one is missing drops the optional plugin silently
mkdir -p "$tmp/deplib" "$tmp/plugdeps"
printf 'int nb_doctor_dep(void) { return 1; }\n' >"$tmp/dep.c"
$cc -shared -fPIC -Wl,-soname,libnb-doctor-dep.so.1 -o "$tmp/deplib/libnb-doctor-dep.so.1" "$tmp/dep.c"
ln -s libnb-doctor-dep.so.1 "$tmp/deplib/libnb-doctor-dep.so"
# plugdep FILE [LDFLAGS...]: the 22.05 plugin, needing libnb-doctor-dep.so.1
plugdep() {
	out=$1
	shift
	printf 'const char plugin_name[] = "nccl_bot";\nconst char plugin_type[] = "spank";\nconst unsigned int plugin_version = 0x160508;\nint nb_doctor_dep(void);\nint use(void) { return nb_doctor_dep(); }\n' >"$tmp/pd.c"
	$cc -shared -fPIC -o "$out" "$tmp/pd.c" -L"$tmp/deplib" -lnb-doctor-dep "$@"
}
plugdep "$tmp/plugdeps/spank_nccl_bot.so"
echo "optional $tmp/plugdeps/spank_nccl_bot.so $base" >"$tmp/etc/plugstack.conf"
expect "the plugin needs a library not found here: exit 1, naming it" 1 \
	"^problem: plugin libraries: $tmp/plugdeps/spank_nccl_bot.so needs libnb-doctor-dep.so.1, which is not found.*/etc/ld.so.cache.*run without nccl-bot" -- doc
expect "  ... libc.so.6 (found in the loader's cache or system directories) is not named" 0 "" -- \
	sh -c "! grep -q 'needs libc' '$tmp/out'"
plugdep "$tmp/plugdeps/spank_nccl_bot.so" '-Wl,-rpath,$ORIGIN/../deplib'
expect "  ... found through the plugin's DT_RUNPATH (\$ORIGIN): healthy" 0 \
	"^ok: plugin libraries: $tmp/plugdeps/spank_nccl_bot.so: its [0-9] needed libraries load here (libnb-doctor-dep.so.1" -- doc -v
{ printf '\177ELF\001\001\001'; head -c 80 /dev/zero; } >"$tmp/deplib/libnb-doctor-dep.so.1"
expect "  ... a file of that name that is no 64-bit shared object: exit 1, says why" 1 \
	"needs libnb-doctor-dep.so.1, which is not found ($tmp/plugdeps/../deplib/libnb-doctor-dep.so.1: a 32-bit ELF file" -- doc
rm -f "$tmp/deplib/libnb-doctor-dep.so.1"
expect "  ... and when it is gone: exit 1" 1 "needs libnb-doctor-dep.so.1, which is not found (looked in \$ORIGIN/../deplib, /etc/ld.so.cache" -- doc
plug $base
expect "the build's plugin needs libc and libm alone; the rank library resolves" 0 \
	"^ok: rank library: $lib/libnccl-tuner-bot.so: its .* needed libraries load here" -- doc -v

echo "optional /usr/lib/slurm/other.so" >"$tmp/etc/plugstack.conf"
expect "plugstack.conf without the plugin: exit 1" 1 "names no spank_nccl_bot.so" -- doc
plug $base
echo "optional $tmp/plugins/spank_nccl_bot.so $base" >"$tmp/etc/plugstack.conf.d/nccl-bot.conf"
echo "include $tmp/etc/plugstack.conf.d/*.conf" >>"$tmp/etc/plugstack.conf"
expect "named twice (plugstack.conf and an included file): exit 1" 1 \
	"^problem: plugstack: spank_nccl_bot.so is named 2 times ($tmp/etc/plugstack.conf:1 and $tmp/etc/plugstack.conf.d/nccl-bot.conf:1)" -- doc
echo "include $tmp/etc/plugstack.conf.d/*.conf" >"$tmp/etc/plugstack.conf"
expect "the line in an included plugstack.conf.d file: healthy" 0 "ok: plugstack: $tmp/etc/plugstack.conf.d/nccl-bot.conf:1" -- doc -v
# the packages' line is linked into plugstack.conf.d (doc/admin.md): Slurm
# follows the link, so does doctor; a link someone else owns is refused
mv "$tmp/etc/plugstack.conf.d/nccl-bot.conf" "$tmp/shipped-plugstack.conf"
ln -s "$tmp/shipped-plugstack.conf" "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
expect "the line linked into plugstack.conf.d: followed, healthy" 0 "ok: plugstack: .*spank_nccl_bot.so" -- doc -v
if [ "$(id -u)" = 0 ]; then
	chown -h nobody "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
	expect "  ... a link owned by another user: refused" 1 "nccl-bot.conf: a symbolic link owned by uid" -- doc
fi
rm "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
mv "$tmp/shipped-plugstack.conf" "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
chmod 0666 "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
expect "a plugstack.conf.d file writable by everyone (it names what root loads): exit 1" 1 \
	"^problem: plugstack: $tmp/etc/plugstack.conf.d/nccl-bot.conf: writable by everyone (mode 666)" -- doc
chmod 0644 "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
echo "optional /usr/lib/slurm/other.so" >"$tmp/etc/plugstack.conf"
expect "a plugstack.conf.d file no include line reads: a warning" 1 \
	"^warning: plugstack: $tmp/etc/plugstack.conf.d/nccl-bot.conf names spank_nccl_bot.so, but $tmp/etc/plugstack.conf does not include it" -- doc
rm "$tmp/etc/plugstack.conf.d/nccl-bot.conf"
echo "include $tmp/etc/plugstack.conf" >"$tmp/etc/plugstack.conf"
expect "an include loop ends: exit 1 (no plugin), no hang" 1 "names no spank_nccl_bot.so" -- doc
plug $base
expect "required, not optional: a warning only" 0 "" -- sh -c "sed -i 's/^optional/required/' '$tmp/etc/plugstack.conf' && true"
expect "  ... printed" 0 "^warning: plugstack: .*loaded 'required'" -- doc

plug $base mode=bogus
expect "a bad argument: exit 1, naming it" 1 "^problem: arguments: $tmp/etc/plugstack.conf:1: plugstack.conf argument mode=bogus: want shadow or on" -- doc
plug $base spool_dir=/a
expect "an argument given twice: exit 1" 1 "^problem: arguments: .*spool_dir" -- doc
# every bad argument is a problem line, and the other checks still run (the
# plugin stops at the first; doctor's help promises one line per problem)
plug lib_prefix=$tmp/nolib spool_dir=$spool enable=maybe mode=shdow foo=bar
expect "three bad arguments: exit 1, the first named" 1 "^problem: arguments: .*argument enable=maybe: want off" -- doc
expect "  ... the second" 1 "^problem: arguments: .*argument mode=shdow: want shadow or on" -- doc
expect "  ... the third" 1 "^problem: arguments: .*argument 'foo': unknown" -- doc
expect "  ... said how many, and that the checks use defaults" 1 "^warning: arguments: .*3 of 5 arguments do not parse" -- doc
expect "  ... and the missing rank library still reported" 1 "^problem: rank library: lib_prefix=$tmp/nolib: " -- doc
plug lib_prefix=$tmp/nolib spool_dir=$spool
expect "no rank library under lib_prefix: exit 1" 1 "^problem: rank library: lib_prefix=$tmp/nolib: .*libnccl-tuner-bot.so" -- doc
printf 'const char ncclTunerPlugin_v2[8], ncclTunerPlugin_v3[8], ncclTunerPlugin_v4[8],\n  ncclTunerPlugin_v5[8], ncclTunerPlugin_v6[8];\n' >"$tmp/t.c"
$cc -shared -fPIC -o "$tmp/tuneronly/libnccl-tuner-bot.so" "$tmp/t.c"
plug lib_prefix=$tmp/tuneronly spool_dir=$spool
expect "a tuner without the profiler: exit 1" 1 "^problem: rank library: .*without the profiler symbols" -- doc
ln -s "$tmp/t.c" "$tmp/tuneronly/libnccl-profiler-bot.so"
plug enable=off lib_prefix=$tmp/nolib spool_dir=$spool
expect "enable=off: problems become warnings, exit 0" 0 "^warning: rank library: lib_prefix=$tmp/nolib" -- doc

plug lib_prefix=$lib spool_dir=$tmp/spool
expect "spool_dir not on a tmpfs: exit 1" 1 "^problem: spool: spool_dir=$tmp/spool: $tmp is not on a tmpfs" -- doc
mkdir "$spool.bad" && chmod 777 "$spool.bad"
plug lib_prefix=$lib spool_dir=$spool.bad
expect "spool_dir others may write: exit 1" 1 "^problem: spool: spool_dir $spool.bad: not a directory of uid" -- doc
mkdir -m 700 "$spool"
plug $base
expect "spool_dir there, 0700: others cannot search it: exit 1" 1 "^problem: spool: spool_dir=$spool: mode 700: others cannot search it" -- doc
chmod 711 "$spool"
expect "spool_dir there, 0711: healthy" 0 "ok: spool: spool_dir=$spool: a tmpfs" -- doc -v
ln -s /dev/shm/nb-doctor-none-$$ "$spool.dangling"
plug lib_prefix=$lib spool_dir=$spool.dangling
expect "spool_dir a dangling link: a problem, not 'made later'" 1 "^problem: spool: spool_dir $spool.dangling: a symbolic link (refused)" -- doc
rm -f "$spool.dangling"
plug $base
# a link to it is refused, also named with a trailing '/' (which resolved
# the link at its last name, so the O_NOFOLLOW open passed, until 2026-12-04)
ln -s "$spool" "$spool.lnk"
plug lib_prefix=$lib spool_dir=$spool.lnk/
expect "spool_dir a link, named with a trailing /: exit 1" 1 "^problem: spool: spool_dir $spool.lnk: a symbolic link (refused)" -- doc
plug lib_prefix=$lib spool_dir=$spool/.
expect "  ... the directory itself with a trailing /.: healthy" 0 "ok: spool: spool_dir=$spool: a tmpfs" -- doc -v
rm -f "$spool.lnk"
plug $base
# doctor as a user: the plugin's 0711 directory of root cannot be opened, and
# is right (a problem, "Permission denied", until 2026-12-04)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	chmod 755 "$tmp"
	expect "doctor as a user: root's 0711 spool_dir is healthy" 0 \
		"ok: spool: spool_dir=$spool: a tmpfs, root's and writable by it alone (judged from its inode" -- \
		runuser -u nobody -- "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
		--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 --node -v
	chmod 700 "$spool"
	expect "  ... root's 0700 spool_dir: others cannot search it" 1 \
		"problem: spool: spool_dir=$spool: mode 700: others cannot search it" -- \
		runuser -u nobody -- "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
		--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 --node
	chmod 711 "$spool"
	# the outbox is root's, whoever runs doctor (until 2026-12-04: "want uid 65534")
	mkdir -p -m 755 "$tmp/uoutbox"
	plug $base outbox_dir=$tmp/uoutbox harvest_helper=$top/nccl-bot-harvest-read
	expect "  ... root's outbox is healthy for a user too" 0 "ok: outbox: outbox_dir=$tmp/uoutbox" -- \
		runuser -u nobody -- "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
		--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 --node -v
	rmdir "$tmp/uoutbox"
	chmod 777 "$spool.bad"
	plug lib_prefix=$lib spool_dir=$spool.bad
	expect "  ... a spool_dir others may write is still a problem" 1 \
		"problem: spool: spool_dir=$spool.bad: not a directory of root writable by it alone" -- \
		runuser -u nobody -- "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
		--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 --node
	# a spool_dir under a directory the user cannot search is a problem
	# ("not there yet" until 2026-12-04): the job's ranks could not reach it
	chmod 755 "$tmp"
	mkdir -m 700 "$tmp/shut"
	plug lib_prefix=$lib spool_dir=$tmp/shut/spool
	expect "  ... a spool_dir under a directory the user cannot search: exit 1" 1 \
		"problem: spool: spool_dir=$tmp/shut/spool: Permission denied (as uid " -- \
		runuser -u nobody -- "$bot" doctor --plugstack "$tmp/etc/plugstack.conf" --slurm-version 22.05.8 \
		--enroot-dir "$tmp/enroot" --apptainer-conf "$tmp/apptainer.conf" --node-name n1 --node
	rmdir "$tmp/shut"
	chmod 700 "$tmp"
	plug $base
fi
plug lib_prefix=$lib spool_dir=/dev/shm/nb-doctor-%n-$$
expect "%n is the node name (--node-name)" 0 "spool_dir=/dev/shm/nb-doctor-n1-$$" -- doc -v
expect "  ... which plugstack.conf --node-name changes" 0 "spool_dir=/dev/shm/nb-doctor-n7-$$" -- doc -v --node-name n7

if [ "$(id -u)" -eq 0 ]; then
	plug $base outbox_dir=$tmp/outbox harvest_helper=$top/nccl-bot-harvest-read
	expect "outbox and helper: healthy (root)" 0 "ok: harvest helper" -- doc -v
	chmod 777 "$tmp/outbox"
	expect "an outbox others may write: exit 1" 1 "^problem: outbox: outbox_dir=$tmp/outbox: owned by uid 0, mode 777: want root" -- doc
	chmod 755 "$tmp/outbox"
	plug $base outbox_dir=$tmp/outbox harvest_helper=$tmp/nolib/helper
	expect "a missing harvest helper: exit 1" 1 "^problem: harvest helper: harvest_helper=$tmp/nolib/helper" -- doc
fi
plug $base outbox_dir=$tmp/nooutbox
expect "a missing outbox: exit 1" 1 "^problem: outbox: outbox_dir=$tmp/nooutbox: No such file" -- doc

plug $base kill_switch=$tmp/kill
touch "$tmp/kill"
expect "the kill switch in place: a warning, exit 0" 0 "^warning: kill switch: kill_switch=$tmp/kill exists" -- doc
expect "  ... --node does not look at it" 0 "" -- doc --node
expect "  ... and prints nothing" 0 "" -- test ! -s "$tmp/out"
plug $base state_dir=$tmp/nostate
expect "a missing state_dir: exit 1" 1 "^problem: state: state_dir=$tmp/nostate" -- doc
expect "  ... not a node's business (--node): exit 0" 0 "" -- doc --node
# mode=on without a state source: it runs, and learns nothing across jobs
# (said; shadow mode decides nothing, so nothing to say there)
plug $base mode=on
expect "mode=on, no state_dir= and no config=: a warning, exit 0" 0 \
	"^warning: state: mode=on, no state_dir= (nor one in config=): every step plans from NCCL's cost model" -- doc
plug $base
expect "  ... shadow mode (the default): nothing printed" 0 "" -- doc
expect "  ... (nothing)" 0 "" -- test ! -s "$tmp/out"
plug $base mode=on
expect "  ... not a node's business (--node)" 0 "" -- doc --node
expect "  ... and prints nothing" 0 "" -- test ! -s "$tmp/out"
printf 'version: 2\nstate_dir: %s\n' "$tmp" >"$tmp/site.yaml"
plug $base config=$tmp/site.yaml
expect "a site configuration that parses: exit 0" 0 "^ok: config: config=$tmp/site.yaml" -- doc -v
plug $base config=$tmp/site.yaml mode=on
doc >"$tmp/o3" 2>&1
expect "  ... its state_dir is a state source: no warning" 0 "" -- \
	sh -c "! grep '^warning: state' '$tmp/o3'"
printf 'version: 2\nstate_dir: %s\nstat_dir: /x\n' "$tmp" >"$tmp/site.yaml"
expect "a site configuration the plugin refuses: exit 1, names the file, line and key" 1 \
	"^problem: config: config=$tmp/site.yaml: $tmp/site.yaml:3:1: unknown key 'stat_dir': steps run on the prior" -- doc
expect "  ... not a node's business (--node): exit 0" 0 "" -- doc --node
printf 'version: 2\nstate_dir: %s\noutbox_dir: %s/outbox\n' "$tmp" "$tmp" >"$tmp/site.yaml"
plug $base config=$tmp/site.yaml outbox_dir=$tmp/outbox
doc >"$tmp/o2" 2>&1
expect "its outbox_dir the plugin's outbox_dir=: no outbox problem" 0 "" -- \
	sh -c "! grep '^problem: outbox' '$tmp/o2'"
plug $base config=$tmp/site.yaml outbox_dir=$tmp/other
expect "  ... another one: exit 1 (ship would never see the deltas)" 1 \
	"^problem: outbox: $tmp/site.yaml has outbox_dir $tmp/outbox, which ship empties, but the harvest writes into outbox_dir=$tmp/other" -- doc
plug $base config=$tmp/site.yaml
expect "  ... no outbox_dir= at all: exit 1" 1 "^problem: outbox: .*no outbox_dir= (nowhere)" -- doc
plug $base config=$tmp/site.yaml
printf 'version: 2\nstate_dir: %s/nostate\n' "$tmp" >"$tmp/site.yaml"
expect "the site configuration's state_dir missing: exit 1" 1 "^problem: state: state_dir $tmp/nostate ($tmp/site.yaml)" -- doc
printf 'version: 2\nfabric_map:\n  a:\n    nodes: "n[1-"\n' >"$tmp/site.yaml"
expect "a fabric_map in it that does not parse: exit 1" 1 "^problem: config: config=$tmp/site.yaml: $tmp/site.yaml:4:12: fabric_map: a: nodes: .* without" -- doc
printf 'version: 2\nfabric_map:\n  a:\n    nodes: n1\n' >"$tmp/site.yaml"
printf 'n1 a\n' >"$tmp/fabric.map"
plug $base config=$tmp/site.yaml fabric_map=$tmp/fabric.map
expect "fabric_map= and config='s fabric_map both: exit 1, names both" 1 \
	"^problem: fabric map: two fabric maps: fabric_map=$tmp/fabric.map and the fabric_map of $tmp/site.yaml" -- doc

# containers: the snippets made from contrib/ for this test's paths
plug $base
mkdir -p "$tmp/enroot/mounts.d" "$tmp/enroot/hooks.d"
expect "enroot without our mounts or hook: exit 1" 1 "^problem: enroot: $tmp/enroot/mounts.d binds no $lib and no $spool" -- doc
sed -e "s|@RANKDIR@|$lib|g" -e "s|@SPOOLDIR@|$spool|g" "$srcdir/contrib/enroot/50-nccl-bot.fstab.in" \
	>"$tmp/enroot/mounts.d/50-nccl-bot.fstab"
expect "  ... with the mounts, no hook: exit 1" 1 "^problem: enroot: $tmp/enroot/hooks.d: no executable" -- doc
cp "$srcdir/contrib/enroot/50-nccl-bot.sh" "$tmp/enroot/hooks.d/"
expect "  ... with both: healthy" 0 "ok: enroot: $tmp/enroot/hooks.d: nccl-bot's hook" -- doc -v
rmdir "$spool"
expect "  ... but the spool directory missing: exit 1 (enroot would fail)" 1 "enroot refuses to start a container" -- doc
mkdir -m 711 "$spool"
echo "bind path = /etc/localtime" >"$tmp/apptainer.conf"
expect "apptainer.conf without our binds: exit 1" 1 "^problem: apptainer: $tmp/apptainer.conf binds no" -- doc
sed -e "s|@RANKDIR@|$lib|g" -e "s|@SPOOLDIR@|$spool|g" "$srcdir/contrib/apptainer/nccl-bot-apptainer.conf.in" \
	>>"$tmp/apptainer.conf"
expect "  ... with them: healthy" 0 "ok: apptainer: $tmp/apptainer.conf binds $lib and $spool" -- doc -v

# the built snippets bind every version's directory when the rank library's
# is the versioned default (DIR/VERSION/lib): a step pinned to the previous
# version (a batch job queued before an upgrade) still finds its library in
# a container started after the new snippets are installed
rankdir=$(sed -n 's/^rankdir = //p' "$top/Makefile")
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top/Makefile")
case $rankdir in
*/"$version"/lib)
	all=${rankdir%/"$version"/lib}
	expect "the enroot mounts bind every version ($all), not only $version" 0 \
		"^$all $all none " -- cat "$top/contrib/enroot/50-nccl-bot.fstab"
	expect "  ... and so do the Apptainer bind lines" 0 \
		"^bind path = $all\$" -- cat "$top/contrib/apptainer/nccl-bot-apptainer.conf"
	;;
esac

plug $base mode=bogus
expect "--json: one object" 1 '"healthy": false' -- doc --json
cp "$tmp/out" "$tmp/json"
if command -v python3 >/dev/null 2>&1; then
	expect "  ... that parses, one problem" 0 "" -- python3 -c \
		'import json,sys; d=json.load(open(sys.argv[1])); assert d["problems"] == 1 and not d["healthy"], d' "$tmp/json"
fi
expect "usage: a bad --slurm-version: exit 2" 2 "want X.Y or X.Y.Z" -- doc --slurm-version x
expect "usage: an unknown option: exit 2" 2 "usage: nccl-bot doctor" -- doc --bogus
expect "usage: --help: exit 0" 0 "usage: nccl-bot doctor" -- "$bot" doctor --help
# A relative --plugstack or SLURM_CONF is the user's, from the current
# directory (before, --plugstack etc/plugstack.conf was a node problem, "not
# an absolute path", and a relative SLURM_CONF was passed over without a
# word for /etc/slurm/plugstack.conf).
plug $base
botabs=$(cd "$(dirname "$bot")" && pwd)/$(basename "$bot")
rel() { (cd "$tmp" && "$botabs" doctor --slurm-version 22.05.8 --enroot-dir "$tmp/enroot" \
	--apptainer-conf "$tmp/apptainer.conf" --node-name n1 "$@"); }
expect "a relative --plugstack is read from here" 0 "ok: plugstack: $tmp/etc/plugstack.conf" -- \
	rel -v --plugstack etc/plugstack.conf
expect "a relative SLURM_CONF's plugstack.conf is read from here" 0 "ok: plugstack: $tmp/etc/plugstack.conf" -- \
	env SLURM_CONF=etc/slurm.conf sh -c "cd '$tmp' && exec '$botabs' doctor -v --slurm-version 22.05.8 --enroot-dir '$tmp/enroot' --apptainer-conf '$tmp/apptainer.conf' --node-name n1"
expect "doctor --plugstack '': a usage error, not a node problem" 2 "^nccl-bot: doctor: --plugstack: empty path" -- \
	"$bot" doctor --plugstack '' --slurm-version 22.05.8
# without --slurm-version: refused before slurmd -V is asked (a slurmd on
# PATH that leaves a mark; it was run first until 2026-12-04)
mkdir -p "$tmp/probebin"
printf '#!/bin/sh\n: >"%s"\necho "slurm 23.02.7"\n' "$tmp/probed" >"$tmp/probebin/slurmd"
chmod +x "$tmp/probebin/slurmd"
expect "doctor --plugstack '' without --slurm-version" 2 "^nccl-bot: doctor: --plugstack: empty path" -- \
	env PATH="$tmp/probebin:$PATH" "$bot" doctor --plugstack ''
if [ ! -e "$tmp/probed" ]; then ok "doctor --plugstack '': slurmd -V not run"
else bad "doctor --plugstack '': slurmd -V was run before the usage error"; fi
# the other paths and names given empty: usage errors, before slurmd -V
# (each was taken, and checked as a path or name, until 2026-12-04)
for o in --plugin-dir --node-name --enroot-dir --apptainer-conf; do
	expect "doctor $o ''" 2 "^nccl-bot: doctor: $o: empty (leave the option out for the default)$" -- \
		env PATH="$tmp/probebin:$PATH" "$bot" doctor "$o" ''
done
[ ! -e "$tmp/probed" ] && ok "doctor, empty options: slurmd -V not run" ||
	bad "doctor, empty options: slurmd -V was run before the usage error"
# a relative --plugstack from a working directory that is gone: refused
# before slurmd -V is run (it was made absolute after, until 2026-12-04)
mkdir "$tmp/gone"
(cd "$tmp/gone" && rmdir "$tmp/gone" && env PATH="$tmp/probebin:$PATH" "$botabs" doctor --plugstack etc/p.conf) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "^nccl-bot: doctor: --plugstack " "$tmp/out" && [ ! -e "$tmp/probed" ]; then
	ok "doctor: a relative --plugstack in a deleted directory: a usage error before slurmd -V"
else
	bad "doctor: relative --plugstack in a deleted directory: exit $rc, probed: $([ -e "$tmp/probed" ] && echo yes || echo no)"
	sed 's/^/    /' "$tmp/out" | head -n 3
fi

# contrib/'s environment snippets
env -i PATH="$PATH" ENROOT_ENVIRON="$tmp/environ" NCCL_TUNER_PLUGIN=/opt/b/lib.so \
	SLURM_NCCL_BOT_PIN_NCCL_TUNER_PLUGIN=/opt/b/lib.so NCCL_PROFILER_PLUGIN=/user/prof.so \
	SLURM_NCCL_BOT_PIN_NCCL_PROFILER_PLUGIN=/opt/b/lib.so NCCL_BOT_TABLE='AAAA b=c' \
	NCCL_BOT_SPOOL=/dev/shm/nccl-bot/1.0.0.n1 OTHER=x sh "$srcdir/contrib/enroot/50-nccl-bot.sh"
expect "enroot hook: our tuner kept" 0 "^NCCL_TUNER_PLUGIN=/opt/b/lib.so$" -- cat "$tmp/environ"
expect "  ... NCCL_BOT_* kept, values whole" 0 "^NCCL_BOT_TABLE=AAAA b=c$" -- cat "$tmp/environ"
expect "  ... the spool" 0 "^NCCL_BOT_SPOOL=/dev/shm/nccl-bot/1.0.0.n1$" -- cat "$tmp/environ"
expect "  ... a user's profiler (not our pin) and other variables not written" 0 "" -- \
	sh -c "! grep -q 'PROFILER\|OTHER' '$tmp/environ'"
env -i PATH="$PATH" NCCL_TUNER_PLUGIN=/opt/b/lib.so SLURM_NCCL_BOT_PIN_NCCL_TUNER_PLUGIN=/opt/b/lib.so \
	NCCL_BOT_POLICY=ucb1 NCCL_PROFILER_PLUGIN=/user/prof.so \
	sh "$srcdir/contrib/apptainer/nccl-bot-apptainer-env.sh" >"$tmp/taskprolog"
expect "APPTAINERENV_ copies for a TaskProlog" 0 "^export APPTAINERENV_NCCL_TUNER_PLUGIN=/opt/b/lib.so$" -- cat "$tmp/taskprolog"
expect "  ... and SINGULARITYENV_" 0 "^export SINGULARITYENV_NCCL_BOT_POLICY=ucb1$" -- cat "$tmp/taskprolog"
expect "  ... a user's profiler not copied" 0 "" -- sh -c "! grep -q PROFILER '$tmp/taskprolog'"
expect "  ... no ENROOT_ENVIRON: the hook does nothing" 0 "" -- env -i sh "$srcdir/contrib/enroot/50-nccl-bot.sh"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
