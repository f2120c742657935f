#!/bin/sh
# test_so_deps.sh - the rank-side library loads everywhere it must: it needs
# only libc/libpthread/libdl (DT_NEEDED), no symbol newer than GLIBC_2.28
# (so it loads on EL8-era containers), and exports exactly the NCCL plugin
# structs. Runs on the built tuner/libnccl-tuner-bot.so ($BOT_TUNER_SO).
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
	libc.so.*|libpthread.so.*|libdl.so.*) ;;
	*) bad "DT_NEEDED $lib (only libc, libpthread, libdl are allowed)" ;;
	esac
done
[ $fail -eq 0 ] && ok "DT_NEEDED: $(echo $needed)"

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
