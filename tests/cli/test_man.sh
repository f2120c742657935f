#!/bin/sh
# tests/cli/test_man.sh - the commands of nccl-bot(1)'s EXAMPLES section run
# as a reader would type them: each .EX (or .nf) block of the section, its
# roff escapes undone (\- is -, \e is \) and its continued lines joined, in a
# fresh empty directory with the build's nccl-bot first on PATH, with sh -e,
# so every command of a block must succeed. Exit 1 names each block that
# failed and shows the end of its output.
#
# A command that cannot run here is skipped by a pattern below (an extended
# regular expression matched against the command), with its reason; "block"
# skips the whole block where one of its commands matches (its commands need
# each other). A pattern that matches no command fails: the page changed and
# the list must follow it.
#
# usage: tests/cli/test_man.sh [PAGE]   (default: man/nccl-bot.1)
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
top_srcdir=$(cd "$top_srcdir" && pwd)
builddir=$(pwd)
bot=${NCCL_BOT:-$builddir/nccl-bot}
case $bot in /*) ;; *) bot=$builddir/$bot ;; esac
[ -x "$bot" ] || { echo "test_man: $bot: not built"; exit 1; }
page=${1:-$top_srcdir/man/nccl-bot.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0

# KIND|PATTERN|REASON, KIND "line" (the command) or "block" (its block)
cat >"$tmp/skips" <<'EOF'
line|^nccl-bot demo$|starts a Slurm cluster as root (tests/slurm/test_demo.sh runs it)
line|^nccl-bot replay --mode per-call,jobs$|about half a minute on the built-in fabrics (test_cli.sh runs both modes on one fabric)
block|mpirun|needs the installed rank library and a job between env and state add
block|nccl-bot harvest|needs a job step's spool files
EOF

[ -f "$page" ] || { echo "FAIL - $page: no such file"; exit 1; }
# one file per block (block.N), one command a line
awk -v dir="$tmp" '
/^\.SH / { inex = ($0 ~ /^\.SH "?EXAMPLES"?[ \t]*$/); inb = 0; next }
inex && /^\.(EX|nf)/ { inb = 1; n++; cont = ""; printf "" > (dir "/block." n); next }
inex && /^\.(EE|fi)/ { inb = 0; close(dir "/block." n); next }
inex && inb {
	line = $0
	gsub(/\\-/, "-", line)
	gsub(/\\e/, "\\\\", line)
	if (line ~ /\\$/) { cont = cont substr(line, 1, length(line) - 1); next }
	line = cont line; cont = ""
	sub(/^[ \t]+/, "", line)
	if (line != "") print line > (dir "/block." n)
}' "$page"
ls "$tmp"/block.* >/dev/null 2>&1 || { echo "FAIL - $page: no EXAMPLES block"; exit 1; }

mkdir "$tmp/bin"
ln -s "$bot" "$tmp/bin/nccl-bot"
: >"$tmp/used"
n=1
while [ -f "$tmp/block.$n" ]; do
	name="$page EXAMPLES block $n"
	breason=
	: >"$tmp/run.sh"
	while IFS='|' read -r kind pat reason; do
		if [ "$kind" = block ] && grep -Eq -- "$pat" "$tmp/block.$n"; then
			breason=$reason
			echo "$pat" >>"$tmp/used"
		fi
	done <"$tmp/skips"
	if [ -n "$breason" ]; then
		echo "skip - $name: $breason"; skip=$((skip + 1)); n=$((n + 1)); continue
	fi
	while IFS= read -r cmd; do
		lreason=
		while IFS='|' read -r kind pat reason; do
			if [ "$kind" = line ] && printf '%s\n' "$cmd" | grep -Eq -- "$pat"; then
				lreason=$reason
				echo "$pat" >>"$tmp/used"
			fi
		done <"$tmp/skips"
		if [ -n "$lreason" ]; then
			echo "skip - $name: '$cmd': $lreason"; skip=$((skip + 1))
		else
			printf '%s\n' "$cmd" >>"$tmp/run.sh"
		fi
	done <"$tmp/block.$n"
	if [ -s "$tmp/run.sh" ]; then
		work=$tmp/work.$n
		mkdir "$work"
		(cd "$work" && HOME=$work PATH="$tmp/bin:$PATH" NCCL_BOT_CONFIG=none NCCL_BOT_STATE='' \
			timeout 300 sh -e "$tmp/run.sh") >"$tmp/out.$n" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			echo "ok - $name ($(wc -l <"$tmp/run.sh") commands)"; pass=$((pass + 1))
		else
			echo "FAIL - $name: exit $rc; the commands and the end of their output:"
			sed 's/^/    $ /' "$tmp/run.sh"
			tail -n 15 "$tmp/out.$n" | sed 's/^/    /'
			fail=$((fail + 1))
		fi
	fi
	n=$((n + 1))
done
while IFS='|' read -r kind pat reason; do
	if ! grep -Fxq -- "$pat" "$tmp/used"; then
		echo "FAIL - the skip pattern '$pat' matches no command of $page (update the list)"
		fail=$((fail + 1))
	fi
done <"$tmp/skips"

# nccl-bot(7)'s EXIT STATUS AND ERRORS lists every case where the rank
# library fails communicator init. A table whose NBTn. prefix does not name
# its payload's version is one (tuner/decide.c, formats.md 8: "prefix
# mismatch"); the page said "exactly three cases" without it, and its
# NCCL_BOT_TABLE entry said every NCCL_BOT_* knob is ignored with a table.
page7=$top_srcdir/man/nccl-bot.7
exit7=$(sed -n '/^\.SH "EXIT STATUS AND ERRORS"/,/^\.SH /p' "$page7" | tr '\n' ' ')
emu=$builddir/tests/emulator/nccl-emu
so=$builddir/tuner/libnccl-tuner-bot.so
if [ -x "$emu" ] && [ -f "$so" ]; then
	t=$("$bot" env --prior-only --policy greedy --lib "$so" | sed -n "s/^export NCCL_BOT_TABLE='NBT3\.\(.*\)'$/NBT2.\1/p")
	"$emu" --plugin "$so" --suite consistency --scenario base --policy greedy --procs 2 \
		--calls-each 100 --table "$t" -v >"$tmp/emu7" 2>&1
	if grep -q "prefix NBT2\. does not name its payload's format version.*failing communicator init" "$tmp/emu7"; then
		echo "ok - a table whose prefix was edited fails communicator init"; pass=$((pass + 1))
	else
		echo "FAIL - a table whose prefix was edited: no failing init"; sed 's/^/    /' "$tmp/emu7" | head -n 8
		fail=$((fail + 1))
	fi
fi
case $exit7 in
*"exactly four cases"*prefix*"format version"*)
	echo "ok - nccl-bot(7) EXIT STATUS names the prefix mismatch among four cases"; pass=$((pass + 1)) ;;
*) printf 'FAIL - nccl-bot(7) EXIT STATUS does not name the prefix mismatch: %.200s\n' "$exit7"
	fail=$((fail + 1)) ;;
esac
if grep -q 'NCCL_BOT_\*\\fR knobs below are ignored' "$page7"; then
	echo "FAIL - nccl-bot(7) says every NCCL_BOT_* knob is ignored with a table"; fail=$((fail + 1))
else
	echo "ok - nccl-bot(7): only the four no-table knobs are ignored with a table"; pass=$((pass + 1))
fi

# Every NCCL_BOT_* variable the code names (test hooks NCCL_BOT_TEST_*
# aside) has its row in doc/formats.md section 11's table of environment
# variables: NCCL_BOT_CONFIG and NCCL_BOT_PROGRESS had none; so does every
# SLURM_NCCL_BOT_* srun hands the step's nodes (none had one; the pins'
# prefix SLURM_NCCL_BOT_PIN_ is the row `SLURM_NCCL_BOT_PIN_<NAME>`).
sect11=$(sed -n '/^## 11\./,/^## 12\./p' "$top_srcdir/doc/formats.md")
for v in $(cd "$top_srcdir" && grep -rhoE '"(SLURM_)?NCCL_BOT_[A-Z0-9_]+"' --include=*.c --include=*.h \
	tools learn spank common tuner | tr -d '"' | grep -v '^NCCL_BOT_TEST_' | sort -u); do
	if printf '%s\n' "$sect11" | grep -q "^| \`$v\(\` \|<NAME>\` \)|"; then
		pass=$((pass + 1))
	else
		echo "FAIL - $v is read by the code but has no row in doc/formats.md section 11"
		fail=$((fail + 1))
	fi
done
# The pins stay in the tasks' environment (spank/remote.c copies them and
# takes nothing out but under the kill switch; doc/slurm.md: a nested srun
# tells its values by them); section 11 said the nodes take every
# SLURM_NCCL_BOT_* out of it.
if printf '%s\n' "$sect11" | tr '\n' ' ' | grep -q "takes every one of them out of the tasks' environment"; then
	echo "FAIL - formats.md 11 says the SLURM_NCCL_BOT_* variables are taken out of the tasks' environment"
	fail=$((fail + 1))
else
	echo "ok - formats.md 11: the SLURM_NCCL_BOT_* variables stay in the tasks' environment"
	pass=$((pass + 1))
fi
echo "man: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
