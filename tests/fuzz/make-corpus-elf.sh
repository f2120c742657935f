#!/bin/sh
# make-corpus-elf.sh - how the seed corpus of the ELF reader's fuzz target
# (tests/fuzz/corpus-elf, read by tests/fuzz/fuzz_elf.c and by
# tests/unit/test_ranklib.c) was made. Not part of `make check`: the seeds
# are committed, so that every build fuzzes the same bytes. Needs gcc and
# GNU ld on x86-64 (the seeds are x86-64 objects whatever the host; the
# readers are given that machine explicitly).
#
#   tests/fuzz/make-corpus-elf.sh [OUTDIR]     (default tests/fuzz/corpus-elf)
#
# Seeds: small shared objects exporting the NCCL plugin symbols with a GNU
# hash table, a System V one, symbol versions, and only some of them (an
# older tuner); a copy whose Bloom filter is zeroed (dlsym() finds nothing);
# a Slurm plugin's constants (slurm-plugin.so); then copies with one header
# field changed (32-bit, big-endian, an
# executable's type, another machine), a truncated copy and a text file.
set -eu
out=${1:-tests/fuzz/corpus-elf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/syms.c" <<'C'
struct plugin { const char *name; void *fn[6]; };
#define P(n) const struct plugin n = { #n, { 0 } };
P(ncclTunerPlugin_v2) P(ncclTunerPlugin_v3) P(ncclTunerPlugin_v4)
#ifndef OLDER
P(ncclTunerPlugin_v5) P(ncclTunerPlugin_v6)
#endif
P(ncclProfiler_v4) P(ncclProfiler_v6)
void ncclProfiler_v5(void) { }	/* a function: not a plugin struct */
__attribute__((visibility("hidden"))) P(ncclTunerPlugin_v7)
C
printf 'NBOT_1 { global: ncclTunerPlugin_v*; ncclProfiler_v*; local: *; };\n' >"$tmp/ver.map"
so() {
	gcc -O1 -fPIC -shared -nostdlib -Wl,-z,max-page-size=4096 -Wl,-z,norelro \
		-Wl,--build-id=none -s "$@" "$tmp/syms.c"
}
mkdir -p "$out"
so -Wl,--hash-style=gnu -o "$out/gnu-hash.so"
so -Wl,--hash-style=sysv -o "$out/sysv-hash.so"
so -Wl,--hash-style=gnu -Wl,--version-script="$tmp/ver.map" -o "$out/versioned.so"
so -Wl,--hash-style=both -DOLDER -o "$out/older-tuner.so"
# patch BYTE VALUE SRC DST: one byte of the ELF header changed
patch() {
	cp "$3" "$4"
	printf "$(printf '\\%03o' "$2")" | dd of="$4" bs=1 seek="$1" conv=notrunc status=none
}
patch 4 1 "$out/gnu-hash.so" "$out/class32"	# EI_CLASS: ELFCLASS32
patch 5 2 "$out/gnu-hash.so" "$out/big-endian"	# EI_DATA: ELFDATA2MSB
patch 16 2 "$out/gnu-hash.so" "$out/exec-type"	# e_type: ET_EXEC
patch 18 183 "$out/gnu-hash.so" "$out/aarch64"	# e_machine: EM_AARCH64 (183 = 0xb7, 0)
# zeroed-bloom.so: gnu-hash.so with its GNU hash table's Bloom words zeroed:
# the loader's lookup stops at the filter, so dlsym() finds nothing in it
# (the symbols and buckets are intact) and the check must refuse it
cp "$out/gnu-hash.so" "$out/zeroed-bloom.so"
off=$((0x$(readelf -SW "$out/gnu-hash.so" |
	sed -n 's/.* \.gnu\.hash  *GNU_HASH  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')))
nwords=$(od -An -tu4 -j $((off + 8)) -N4 "$out/gnu-hash.so" | tr -d ' ')
dd if=/dev/zero of="$out/zeroed-bloom.so" bs=1 seek=$((off + 16)) count=$((8 * nwords)) \
	conv=notrunc status=none
head -c 2000 "$out/gnu-hash.so" >"$out/truncated"
printf 'root:x:0:0:root:/root:/bin/sh\nnot an ELF file, but long enough for a header.\n' >"$out/text"
# slurm-plugin.so: what SPANK_PLUGIN() leaves in a plugin (plugin_name,
# plugin_type, plugin_version as initialised constants), for the object
# reader nccl-bot doctor uses (bot_elf_object)
printf 'const char plugin_name[] = "nccl_bot";\nconst char plugin_type[] = "spank";\nconst unsigned int plugin_version = 0x160508;\n' >"$tmp/plugin.c"
gcc -O1 -fPIC -shared -nostdlib -Wl,-z,max-page-size=4096 -Wl,-z,norelro -Wl,--build-id=none -s \
	-Wl,--hash-style=gnu -o "$out/slurm-plugin.so" "$tmp/plugin.c"
