# lib.sh - what the tests/cli/ scripts share (sourced, not run): the check
# counters and the expect helper. The script makes $tmp (expect writes
# $tmp/out) and prints "$pass passed, $fail failed" at its end.
#
#	ok NAME, bad NAME   one line "ok - NAME" / "FAIL - NAME", counted in
#	                    $pass and $fail
#	expect NAME WANT_RC PATTERN -- CMD...
#	    ok where CMD exits WANT_RC and, where PATTERN is not empty, a line
#	    of its output (stdout and stderr, in $tmp/out) matches PATTERN: an
#	    extended regular expression, or a basic one where the script set
#	    EXPECT_BASIC=1; else bad, with the output's first lines

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
expect() {
	tname=$1 want=$2 pat=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$tname: exit $got, want $want"; sed 's/^/    /' "$tmp/out" | head -n 12; return
	fi
	flags=-Eq
	[ -n "${EXPECT_BASIC:-}" ] && flags=-q
	if [ -n "$pat" ] && ! grep $flags -- "$pat" "$tmp/out"; then
		bad "$tname: output lacks /$pat/"; sed 's/^/    /' "$tmp/out" | head -n 12; return
	fi
	ok "$tname"
}
