#!/bin/sh
# tests/cli/test_readme.sh - every ```sh and ```bash block of the README run
# as a new user would run it: each block in a fresh empty directory (HOME
# there too) holding links to the build tree's nccl-bot, tuner/ and the
# source tree's data/, with `sh -e` (bash -e for ```bash), so every command
# of a block must succeed. Exit 1 names FILE:LINE of each block that failed
# and shows the end of its output. A block fenced as another shell
# (```shell, ```console, ```zsh, ```sh-session) fails: it would be neither
# run nor skipped.
#
# usage: tests/cli/test_readme.sh [FILE.md...]   (default: README.md)
#
# doc/admin.md and doc/user.md are not run here: their blocks install the
# packages and need a Slurm cluster, and tests/install/test_guides.sh runs
# them (as root, against the test cluster, with the packages of deb/).
#
# A block that must not run here (it installs packages, needs a job's spool
# files, a Slurm cluster or root's directories, or runs for minutes) is
# marked by an HTML comment on the line just before its fence, which
# Markdown does not show:
#	<!-- check: skip REASON -->
# The reason is printed with the skip; a marker without one is an error.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
top_srcdir=$(cd "$top_srcdir" && pwd)
builddir=$(pwd)
bot=${NCCL_BOT:-$builddir/nccl-bot}
case $bot in /*) ;; *) bot=$builddir/$bot ;; esac
[ -x "$bot" ] || { echo "test_readme: $bot: not built"; exit 1; }
[ $# = 0 ] && set -- "$top_srcdir/README.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0

# The checker checked first, on a guide of its own: a block that passes, one
# that fails halfway (sh -e), a marked one that would fail, a marker without
# a reason, a block in another language (not run).
if [ -z "${NB_README_SELF:-}" ]; then
	cat >"$tmp/self.md" <<'SELF'
```sh
./nccl-bot sim --list | grep -q h100-roce
```
```bash
false
echo not reached > reached
```
<!-- check: skip slow on purpose -->
```sh
exit 3
```
<!-- check: skip -->
```sh
true
```
```python
raise SystemExit(1)
```
```console
$ true
```
SELF
	NB_README_SELF=1 NCCL_BOT=$bot top_srcdir=$top_srcdir sh "$0" "$tmp/self.md" >"$tmp/self.out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "^ok - $tmp/self.md:1 " "$tmp/self.out" &&
		grep -q "^FAIL - $tmp/self.md:4: exit 1" "$tmp/self.out" &&
		grep -q "^skip - $tmp/self.md:9: slow on purpose" "$tmp/self.out" &&
		grep -q "^FAIL - $tmp/self.md:13: a skip marker without a reason" "$tmp/self.out" &&
		grep -q "^FAIL - $tmp/self.md:19: a \`\`\`console block: fence it \`\`\`sh (run) or mark it skip" "$tmp/self.out" &&
		grep -q "^readme: 1 passed, 3 failed, 1 skipped" "$tmp/self.out"; then
		echo "ok - the checker: runs, fails with sh -e, honours and demands skip reasons, refuses other shells' fences"
		pass=$((pass + 1))
	else
		echo "FAIL - the checker on its own guide (exit $rc):"
		sed 's/^/    /' "$tmp/self.out"
		fail=$((fail + 1))
	fi
fi

for md in "$@"; do
	[ -f "$md" ] || { echo "FAIL - $md: no such file"; fail=$((fail + 1)); continue; }
	rm -f "$tmp"/block.* "$tmp/list"
	# one file per block (block.N), and "N LINE SHELL REASON" per block
	awk -v dir="$tmp" '
	/^<!-- check: skip/ { reason = $0; sub(/^<!-- check: skip */, "", reason)
		sub(/ *-->.*$/, "", reason); if (reason == "") reason = "(no reason)"
		marked = NR; next }
	!inb && /^```(shell|console|zsh|sh-session|shellsession) *$/ { n++; sh = substr($0, 4); sub(/ *$/, "", sh)
		printf "%d %d other:%s %s\n", n, NR, sh, (marked == NR - 1) ? reason : "" > (dir "/list")
		inb = 1; printf "" > (dir "/block." n); next }
	!inb && /^```(sh|bash) *$/ { inb = 1; n++; sh = substr($0, 4); sub(/ *$/, "", sh)
		printf "%d %d %s %s\n", n, NR, sh, (marked == NR - 1) ? reason : "" > (dir "/list")
		printf "" > (dir "/block." n); next }
	inb && /^```/ { inb = 0; close(dir "/block." n); next }
	inb { print > (dir "/block." n) }
	END { if (inb) printf "%d %d unclosed\n", n, NR > (dir "/list") }' "$md"
	[ -f "$tmp/list" ] || continue
	while read -r n line sh reason; do
		name="$md:$line"
		if [ "$sh" = unclosed ]; then
			echo "FAIL - $md: a code block is not closed"; fail=$((fail + 1)); continue
		fi
		if [ "$reason" = "(no reason)" ]; then
			echo "FAIL - $name: a skip marker without a reason"; fail=$((fail + 1)); continue
		fi
		if [ -n "$reason" ]; then
			echo "skip - $name: $reason"; skip=$((skip + 1)); continue
		fi
		case $sh in other:*)
			echo "FAIL - $name: a \`\`\`${sh#other:} block: fence it \`\`\`sh (run) or mark it skip"
			fail=$((fail + 1)); continue ;;
		esac
		work=$tmp/run.$n
		rm -rf "$work"
		mkdir -p "$work/tuner"
		ln -s "$bot" "$work/nccl-bot"
		ln -s "$top_srcdir/data" "$work/data"
		for so in "$builddir"/tuner/*.so; do
			[ -e "$so" ] && ln -s "$so" "$work/tuner/"
		done
		(cd "$work" && HOME=$work NCCL_BOT_STATE= timeout 300 "$sh" -e "$tmp/block.$n") \
			>"$tmp/out.$n" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			echo "ok - $name ($(wc -l <"$tmp/block.$n") lines)"; pass=$((pass + 1))
		else
			echo "FAIL - $name: exit $rc; the end of its output:"
			tail -n 15 "$tmp/out.$n" | sed 's/^/    /'
			fail=$((fail + 1))
		fi
	done <"$tmp/list"
done
echo "readme: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
