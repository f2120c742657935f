# lib.sh - what the emulator's shell checks (calls.sh, loop.sh, spool-v2.sh)
# share: sourced, not run, by a script run from the top build directory (as
# automake runs it), with `. "$(dirname "$0")/lib.sh"`.
#
#	emu_begin KEEP
#	    top (the build directory), emu, bot and so (NCCL_BOT_SO or the
#	    built rank library, made absolute); exit 99 ("NAME.sh: FILE not
#	    built") when one is missing. tmp: a new directory
#	    ${TMPDIR:-/tmp}/nccl-bot-NAME.XXXXXX, removed at exit unless KEEP is
#	    not empty (then its path is printed); INT, TERM and HUP exit 1, so
#	    that it is removed then too
#	ok TEXT, bad TEXT
#	    one line "PASS TEXT" / "FAIL TEXT", counted in npass and nfail
#	emu_end
#	    "N passed, N failed"; its status (the script's, as its last
#	    command) is 0 when none failed

emu_name=$(basename "$0" .sh)
npass=0
nfail=0
ok() { npass=$((npass + 1)); echo "PASS $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL $*"; }

emu_begin() {
	top=$(pwd)
	so=${NCCL_BOT_SO:-$top/tuner/libnccl-tuner-bot.so}
	emu=$top/tests/emulator/nccl-emu
	bot=$top/nccl-bot
	for f in "$emu" "$bot" "$so"; do
		if [ ! -e "$f" ]; then
			echo "$emu_name.sh: $f not built" >&2
			exit 99
		fi
	done
	so=$(cd "$(dirname "$so")" && pwd)/$(basename "$so")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/nccl-bot-$emu_name.XXXXXX") || exit 99
	if [ -n "$1" ]; then
		echo "# keeping $tmp"
	else
		trap 'rm -rf "$tmp"' EXIT
	fi
	trap 'exit 1' INT TERM HUP
}

emu_end() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
}
