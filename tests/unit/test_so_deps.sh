#!/bin/sh
# test_so_deps.sh - the rank-side library loads everywhere it must: it needs
# only libc.so.6 and libpthread.so.0 (DT_NEEDED), no symbol newer than
# GLIBC_2.28 (so it loads on EL8-era containers), takes pthread_create
# (the spool's writer thread) in the version glibc 2.28 has, from the file
# glibc 2.28 has it in, and exports exactly the NCCL plugin structs. Runs
# on the built tuner/libnccl-tuner-bot.so ($BOT_TUNER_SO).
set -u
so=${BOT_TUNER_SO:-${builddir:-.}/tuner/libnccl-tuner-bot.so}
fail=0

bad() { echo "FAIL - $1"; fail=1; }
ok() { echo "ok - $1"; }

for tool in readelf objdump; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "test_so_deps.sh: $tool not found, skipping" >&2
		exit 77
	fi
done
if [ ! -f "$so" ]; then
	echo "test_so_deps.sh: $so not built" >&2
	exit 99
fi

needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
	case $lib in
	libc.so.6|libpthread.so.0) ;;
	*) bad "DT_NEEDED $lib (only libc.so.6 and libpthread.so.0 are allowed)" ;;
	esac
done
[ $fail -eq 0 ] && ok "DT_NEEDED: $(echo $needed)"

# pthread_create: glibc 2.34 moved it from libpthread.so.0 into libc.so.6
# as pthread_create@@GLIBC_2.34 (the old version stays as a compat
# symbol). The .so must take the old version (x86-64 GLIBC_2.2.5, aarch64
# GLIBC_2.17), name libpthread.so.0 in DT_NEEDED, and record every pthread_*
# version as libpthread.so.0's (DT_VERNEED): glibc 2.28 defines them there,
# and before 2.30 it fails a versioned reference whose named file lacks the
# symbol ("not defined in file libc.so.6 with link time reference") when
# that file comes first in the lookup scope. tuner/pthread_link.c.
case $(readelf -h "$so" | sed -n 's/^ *Machine: *//p') in
*X86-64*) base=GLIBC_2.2.5 ;;
*AArch64*) base=GLIBC_2.17 ;;
*) base= ;;
esac
# "pthread_create@GLIBC_2.2.5 (3)" per undefined pthread_* symbol
prefs=$(readelf -W --dyn-syms "$so" | awk '$7 == "UND" && $8 ~ /^pthread_/ { print $8 $9 }')
# the file of each version index (DT_VERNEED)
vfile() {
	readelf -V "$so" | awk -v want="$1" '
		/\.gnu\.version_r/ { inr = 1; next }
		inr && /File:/ { for (i = 1; i < NF; i++) if ($i == "File:") f = $(i + 1) }
		inr && /Name:/ { for (i = 1; i < NF; i++) if ($i == "Version:" && $(i + 1) == want) print f }'
}
pfail=0
case " $(echo $prefs) " in
*" pthread_create@"*) ;;
*) bad "pthread_create is not referenced (the spool's writer thread): '$(echo $prefs)'"; pfail=1 ;;
esac
for r in $prefs; do
	sym=${r%%@*}
	ver=${r#*@}
	idx=${ver#*(}
	idx=${idx%)}
	ver=${ver%%(*}
	file=$(vfile "$idx")
	if [ "$sym" = pthread_create ] && [ -n "$base" ] && [ "$ver" != "$base" ]; then
		bad "pthread_create@$ver, want @$base (the version glibc 2.28 has)"
		pfail=1
	fi
	if [ "$file" != libpthread.so.0 ]; then
		bad "$sym@$ver is recorded as ${file:-no file}'s, want libpthread.so.0's (glibc < 2.30)"
		pfail=1
	fi
done
if [ -n "$prefs" ]; then
	case " $(echo $needed) " in
	*" libpthread.so.0 "*) ;;
	*) bad "pthread symbols referenced but libpthread.so.0 is not in DT_NEEDED"; pfail=1 ;;
	esac
fi
[ $pfail -eq 0 ] && ok "pthread symbols from libpthread.so.0 at glibc 2.28's versions: $(echo $prefs)"

# highest GLIBC_x.y[.z] symbol version referenced
maxv=$(objdump -T "$so" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
	sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
if [ -n "$maxv" ]; then
	major=${maxv%%.*}
	rest=${maxv#*.}
	minor=${rest%%.*}
	if [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -gt 28 ]; }; then
		bad "needs GLIBC_$maxv (> 2.28): $(objdump -T "$so" | grep "GLIBC_$maxv" | awk '{print $NF}' | tr '\n' ' ')"
	else
		ok "highest glibc symbol version GLIBC_$maxv"
	fi
fi

# no static TLS: an initial-exec TLS variable sets DF_STATIC_TLS, and on glibc
# 2.28 a dlopen() of such a library can fail ("cannot allocate memory in static
# TLS block") in big processes (PyTorch), leaving NCCL without the plugin
if readelf -d "$so" | grep -E '\(FLAGS\)' | grep -q STATIC_TLS; then
	bad "DT_FLAGS has STATIC_TLS (initial-exec thread-local storage)"
else
	ok "no STATIC_TLS flag"
fi
if readelf -lW "$so" | grep -Eq '^[[:space:]]*TLS[[:space:]]'; then
	bad "a PT_TLS segment (thread-local storage)"
else
	ok "no PT_TLS segment"
fi

# exported (defined, global) dynamic symbols: exactly the plugin structs
want="ncclProfiler_v4 ncclProfiler_v5 ncclProfiler_v6 ncclTunerPlugin_v2 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6"
got=$(objdump -T "$so" | awk '$2 == "g" && $0 !~ /\*UND\*/ {print $NF}' | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$got" = "$want" ]; then
	ok "exports: $got"
else
	bad "exports '$got', want '$want'"
fi

# only the rank-side halves of common/: the table decoder and the spool
# record codec, never the table encoder or the spool reader. The .so hides
# every name but the plugin structs, so look where the names still are: the
# objects of the convenience archive it is linked from (whole, so every
# object in it is in the .so), and the .so's own symbol table when it is not
# stripped. A missing archive is a failure, not a pass.
forbidden='bot_table_encode|bot_table_normalize|bot_spool_parse|bot_spool_read_file'
if command -v nm >/dev/null 2>&1; then
	ar=$(dirname "$so")/.libs/libbotrank.a
	if [ ! -f "$ar" ]; then
		bad "no $ar to check for tool-side halves"
	else
		hits=$(nm -A --defined-only "$ar" 2>/dev/null | grep -Ew "($forbidden)" | tr '\n' ' ')
		if nm --defined-only "$so" >/dev/null 2>&1; then
			hits="$hits$(nm --defined-only "$so" 2>/dev/null | grep -Ew "($forbidden)" | tr '\n' ' ')"
		fi
		if [ -n "$hits" ]; then
			bad "tool-side code in the rank-side library: $hits"
		else
			ok "no table encoder or spool reader in $(basename "$ar") and the .so"
		fi
	fi
else
	echo "test_so_deps.sh: nm not found, skipping the tool-side-halves check" >&2
fi

# no libm, no C++ runtime, no yaml in undefined symbols either
if objdump -T "$so" | grep -E '\*UND\*' | grep -Eq '\b(log2?|exp2?|pow|sqrt|floor|ceil|lround|yaml_[a-z_]+|_Z[A-Za-z0-9_]+)$'; then
	bad "undefined math/yaml/C++ symbols: $(objdump -T "$so" | grep -E '\*UND\*' | awk '{print $NF}' | tr '\n' ' ')"
else
	ok "no libm, libyaml or C++ symbols"
fi
exit $fail
