#!/bin/sh
# test_spank_so.sh - spank_nccl_bot.so exports only what Slurm's SPANK
# loader looks up (the slurm_spank_* callbacks, plugin_name, plugin_type,
# plugin_version): none of libbotlearn's names, nor libyaml's, can clash
# with another plugin's or Slurm's own in slurmstepd; and it needs libc.so.6
# and libm.so.6 alone (libyaml is linked in). Skips (77) where the
# plugin is not built (no Slurm headers, or a sanitizer build).
set -u
so=${builddir:-.}/spank/spank_nccl_bot.so
if [ ! -f "$so" ]; then
	echo "test_spank_so.sh: $so not built (no Slurm headers, or a sanitizer build)" >&2
	exit 77
fi
command -v objdump >/dev/null 2>&1 || { echo "test_spank_so.sh: no objdump" >&2; exit 77; }
fail=0
got=$(objdump -T "$so" | awk '$2 == "g" && $0 !~ /\*UND\*/ {print $NF}' | sort | tr '\n' ' ')
for sym in $got; do
	case $sym in
	slurm_spank_*|plugin_name|plugin_type|plugin_version) ;;
	*) echo "FAIL - exports $sym"; fail=1 ;;
	esac
done
for sym in plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_init_post_opt \
	slurm_spank_local_user_init slurm_spank_user_init slurm_spank_task_init \
	slurm_spank_job_epilog; do
	case " $got " in
	*" $sym "*) ;;
	*) echo "FAIL - does not export $sym"; fail=1 ;;
	esac
done
# the plugin's name and type as the loader reads them
if ! strings -a "$so" | grep -qx nccl_bot; then
	echo "FAIL - no plugin_name nccl_bot"; fail=1
fi
# no libslurm: spank_* and slurm_* come from the process that loads it
if readelf -d "$so" | grep NEEDED | grep -q slurm; then
	echo "FAIL - links a Slurm library: $(readelf -d "$so" | grep NEEDED | grep slurm)"; fail=1
fi
# libc and libm alone (DT_NEEDED): a node missing any other library (as
# libyaml-0.so.2 was) cannot load the optional plugin, and its tasks would
# run without our tuner while the other nodes' use it
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in $needed; do
	case $lib in
	libc.so.6|libm.so.6) ;;
	*) echo "FAIL - needs $lib (only libc.so.6 and libm.so.6 are allowed; configure links" \
		"libyaml's static archive where it links into a shared object)"; fail=1 ;;
	esac
done
case " $needed " in
*" libc.so.6 "*) ;;
*) echo "FAIL - DT_NEEDED has no libc.so.6 ($needed): readelf output changed?"; fail=1 ;;
esac
# libyaml's own names stay inside (the version script hides them)
if objdump -T "$so" | awk '$0 !~ /\*UND\*/' | grep -q ' yaml_'; then
	echo "FAIL - exports libyaml's symbols"; fail=1
fi
[ $fail -eq 0 ] && echo "ok - exports: $got" && echo "ok - DT_NEEDED: $needed"
exit $fail
