# lib.sh - what every tests/slurm/ script starts with (sourced after
# cluster.sh, not run): the built files the scripts use, the skips, the
# check counters and helpers.
#
#	slurm_test_needs NAME [FILE...]
#	    skips (77) where Slurm or munge is not installed, where this is
#	    not root (slurmd runs as root) or where the plugin was not built;
#	    fails (99) where one of FILEs was not built. NAME starts each line.
#	ok NAME, bad NAME   one line "ok - NAME" / "FAIL - NAME", counted in
#	                    $pass and $fail
#	check NAME CMD...   ok or bad as the command's status says; with
#	                    CHECK_SHOWS_OUT=1 a failure shows $OUT's first lines
#	run CMD...          the command, bounded to 60 s, into $OUT and $ERR

CLUSTER_PLUGIN=$builddir/spank/spank_nccl_bot.so
LIB=$builddir/tuner
BOT=$builddir/nccl-bot
HELPER=$builddir/nccl-bot-harvest-read
EMU=$builddir/tests/emulator/nccl-emu

slurm_test_needs() {
	name=$1
	shift
	if ! cluster_have_slurm; then
		echo "$name: Slurm or munge not installed (scripts/setup installs them)" >&2
		exit 77
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "$name: the test cluster's slurmd must run as root" >&2
		exit 77
	fi
	if [ ! -f "$CLUSTER_PLUGIN" ]; then
		echo "$name: $CLUSTER_PLUGIN not built (no Slurm headers, or a sanitizer build)" >&2
		exit 77
	fi
	for f in "$@"; do
		[ -x "$f" ] || [ -f "$f" ] || { echo "$name: $f not built" >&2; exit 99; }
	done
}

pass=0
fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() {
	name=$1
	shift
	if "$@"; then
		ok "$name"
	else
		bad "$name"
		if [ -n "${CHECK_SHOWS_OUT:-}" ]; then sed 's/^/    /' "$OUT" | head -n 12; fi
		return 1	# so that "check ... || diagnostics" shows them
	fi
}
run() { timeout 60 "$@" >"$OUT" 2>"$ERR"; }
