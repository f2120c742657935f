#!/bin/sh
# test_includes.sh - the direction of dependencies (doc/architecture.md),
# checked on every #include of the source tree:
#
#  - the rank side (tuner/) includes only its own headers, the rank-side
#    halves of common/ and the integer vocabulary of policies/ (RANK_OK
#    below), and no system header that would pull a library other than libc
#    (RANK_SYS_BAD), but for <pthread.h> in tuner/spoolwriter.c, whose writer
#    thread takes pthread_create at glibc 2.28's version (test_so_deps.sh
#    checks the .so);
#  - policies/ includes nothing of common/, learn/, tuner/, tools/ or spank/
#    (policies know no formats, no NCCL, no Slurm and do no I/O);
#  - common/ includes nothing of learn/, sim/, replay/, tuner/, tools/ or
#    spank/ (formats know nothing of learning or of their users);
#  - learn/, sim/ and replay/ include nothing of tools/, spank/ or tuner/;
#  - and, a dependency of another kind, the emulator's standalone build
#    names every source of the sim library (below);
#  - spank/ includes nothing of tools/ or tuner/;
#  - nothing includes tools/ except tools/ itself.
#
# Prints one line per violation, then "N passed, N failed".
set -u
top=${srcdir:-.}
cd "$top" || exit 99

RANK_OK='tuner/ common/table.h common/spool.h common/elfhash.h
common/settings.h common/le.h policies/context.h policies/plan.h'
RANK_SYS_BAD='yaml.h math.h check.h slurm/ pthread.h'

pass=0
fail=0
bad() {
	echo "FAIL: $1"
	fail=$((fail + 1))
}

# quoted includes of FILE, one per line
quoted() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}
system() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$1"
}

# forbid DIRS... : no file under DIR may include a path starting with any
# of the prefixes in $forbidden
check_dir() {
	dir=$1
	forbidden=$2
	[ -d "$dir" ] || return 0
	for f in $(find "$dir" -name '*.[ch]' | sort); do
		ok=1
		for inc in $(quoted "$f"); do
			for p in $forbidden; do
				case $inc in
				"$p"*) bad "$f includes \"$inc\" ($dir must not depend on $p)"; ok=0 ;;
				esac
			done
		done
		[ $ok -eq 1 ] && pass=$((pass + 1))
	done
}

# the rank side: an allow-list
for f in $(find tuner -name '*.[ch]' | sort); do
	ok=1
	for inc in $(quoted "$f"); do
		allowed=0
		for a in $RANK_OK; do
			case $inc in
			"$a"*) allowed=1 ;;
			esac
		done
		# a header next to the file ("foo.h" from tuner/)
		case $inc in
		*/*) ;;
		*) [ -f "tuner/$inc" ] && allowed=1 ;;
		esac
		if [ $allowed -eq 0 ]; then
			bad "$f includes \"$inc\", which the rank-side library must not link (allowed: $RANK_OK)"
			ok=0
		fi
	done
	for inc in $(system "$f"); do
		[ "$f" = tuner/spoolwriter.c ] && [ "$inc" = pthread.h ] && continue
		for b in $RANK_SYS_BAD; do
			case $inc in
			"$b"*) bad "$f includes <$inc>: the rank-side library links libc only"; ok=0 ;;
			esac
		done
	done
	[ $ok -eq 1 ] && pass=$((pass + 1))
done

check_dir policies "common/ learn/ sim/ replay/ tuner/ tools/ spank/"
check_dir common "learn/ sim/ replay/ tuner/ tools/ spank/"
check_dir learn "tools/ spank/ tuner/"
check_dir sim "tools/ spank/ tuner/ learn/"
check_dir replay "tools/ spank/ tuner/"
check_dir spank "tools/ tuner/"
# relative includes that climb out of a directory hide a dependency
for f in $(find policies common tuner learn sim replay spank tools -name '*.[ch]' 2>/dev/null | sort); do
	for inc in $(quoted "$f"); do
		case $inc in
		../*) bad "$f includes \"$inc\": name the header from the top (\"dir/file.h\")" ;;
		esac
	done
done
# tools/ is a leaf: nothing else includes it
for f in $(find . -path ./tools -prune -o -path ./.git -prune -o -name '*.[ch]' -print | sort); do
	for inc in $(quoted "$f"); do
		case $inc in
		tools/*) bad "$f includes \"$inc\": nothing depends on command code" ;;
		esac
	done
done

# The emulator's standalone build (tests/emulator/standalone.mk, README's
# command) compiles the sim library from its own list: every .c of
# sim/Makefile.inc's must be in it (sim_family.c was missing, so the build
# did not link, until 2026-12-04).
if [ -f tests/emulator/standalone.mk ] && [ -f sim/Makefile.inc ]; then
	miss=
	for c in $(sed -n '/^libbotsim_la_SOURCES/,/^$/p' sim/Makefile.inc | tr ' \t\\' '\n\n\n' | grep '^sim/.*\.c$'); do
		grep -q "$c" tests/emulator/standalone.mk || miss="$miss $c"
	done
	if [ -z "$miss" ]; then pass=$((pass + 1)); else
		bad "standalone.mk lacks$miss"; fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
