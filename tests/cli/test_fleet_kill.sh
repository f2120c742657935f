#!/bin/sh
# tests/cli/test_fleet_kill.sh - kill -9 at random points of `nccl-bot
# harvest`, `ship` and `compact` (doc/formats.md sections 13 and 14): after
# every run `state verify` passes and the state is exactly the old or the new
# one, no delta is lost or half-written under its final name, and at the end
# the fabric holds what a pipeline that was never killed holds (each delta
# counted exactly once).
#
# Each run snapshots the work directory (cp -a), runs the same command to
# completion on a copy (the "new" outcome; compact with a fixed --now, so it
# is deterministic), then runs it on the real directory under
# `timeout -s KILL <random delay>` (the delay is fault injection, not
# synchronisation) and compares. FLEET_KILL_RUNS (default 212) sets the runs.
set -u
top_srcdir=${top_srcdir:-${srcdir:-.}}
spool=$top_srcdir/tests/fuzz/corpus-spool
bot=${NCCL_BOT:-./nccl-bot}
runs=${FLEET_KILL_RUNS:-212}
tmp=$(mktemp -d)
# FLEET_KILL_KEEP=DIR: keep the work directory and a trace of every run there
trap '[ -n "${FLEET_KILL_KEEP:-}" ] && rm -rf "$FLEET_KILL_KEEP" && cp -a "$tmp" "$FLEET_KILL_KEEP"; rm -rf "$tmp"' EXIT
pass=0
fail=0
unset NCCL_BOT_STATE NCCL_BOT_TEST_CRASH_AT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL - run ${run:-setup} ($op): $1"; }

F=fab
# a fixed clock for every compact, a little ahead of the harvests' clock
NOW=$(($(date +%s) + 300))
# caps high enough that no step is scaled (a delta counted twice would show
# in the calls); a step merges when all its nodes' deltas are in, never by
# settle or max_wait (with --now close to the inbox mtimes, a step could
# settle with one node, and its late delta wait for the settle time)
CONF="--user-cap 1000000000 --settle 1000000 --max-wait 2000000"
# The largest kill delay per command, in ms: it starts at about twice a full
# run here, then follows the machine: one more after a run that was killed,
# one less after one that finished, so about half the runs die on a fast
# machine as on a loaded one (the delay itself stays uniform in 1..max).
max_h=8 max_s=6 max_c=12
adapt() { # VAR RC
	eval "m=\$$1"
	if [ "$2" -eq 137 ]; then m=$((m + 1)); elif [ "$m" -gt 1 ]; then m=$((m - 1)); fi
	eval "$1=$m"
}

# three spool sources (2 nodes each, several contexts); job k uses source k % 3
for s in 0 1 2; do mkdir -p "$tmp/sp$s"; done
cp "$spool/valid-mixed" "$tmp/sp0/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/sp1/nb-a-1.spool"
cp "$spool/valid-mixed" "$tmp/sp2/nb-a-1.spool"
cp "$spool/valid-summary" "$tmp/sp2/nb-a-2.spool"

W=$tmp/w		# the directories every command works on: W/ob (outbox), W/st (state)
mkdir -p "$W/ob" "$W/st"

rand_ms() { # 1..$1 (timeout 0 would mean no timeout)
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo $((r % $1 + 1))
}

# run_op OP ROOT ARGS: the command of this run on ROOT/ob and ROOT/st
h_job= h_node=
run_op() {
	o=$1 root=$2
	shift 2
	case $o in
	harvest) "$@" "$bot" harvest --outbox "$root/ob" --fabric $F --cluster c --job "$h_job" \
			--node "$h_node" --nodes 2 "$tmp/sp$h_src" ;;
	ship) "$@" "$bot" ship --outbox "$root/ob" --state "$root/st" ;;
	compact) "$@" "$bot" compact --state "$root/st" --now $NOW $CONF ;;
	esac
}

# names DIR: the *.nbd names in DIR (not hidden), one a line, sorted
names() { ls "$1" 2>/dev/null | grep '\.nbd$' | sort; }
# hidden DIR: the hidden names in DIR
hidden() { ls -A "$1" 2>/dev/null | grep '^\.' | sort; }

# readable FILE: the delta reader takes it (a compact of a scratch state
# directory reads every inbox delta whole when it lists it)
readable() {
	rm -rf "$tmp/scratch"
	mkdir -p "$tmp/scratch/inbox"
	cp "$1" "$tmp/scratch/inbox/"
	"$bot" compact --state "$tmp/scratch" --now $NOW >"$tmp/scratch.out" 2>&1 &&
		grep -q 'inbox: 1 delta(s) listed, 0 quarantined' "$tmp/scratch.out"
}

# same_but_clock A B: the same delta but for the clock (step end and harvest
# time, offsets 344..367, and so the CRC): cmp -l counts from 1
same_but_clock() {
	[ "$(stat -c %s "$1")" = "$(stat -c %s "$2")" ] || return 1
	sz=$(stat -c %s "$1")
	cmp -l "$1" "$2" | awk -v crc=$((sz - 7)) '
		{ if (!(($1 >= 345 && $1 <= 368) || ($1 >= crc && $1 < crc + 4))) bad = 1 }
		END { exit bad }'
}

# The snapshot a fabric's state is: `current`'s, or without `current` the one
# first snapshot an interrupted first publish left (formats.md 12), which the
# next compactor run completes before it merges.
effective_current() {
	if [ -f "$1/current" ]; then
		cat "$1/current"
	elif [ "$(ls "$1" 2>/dev/null | grep -c '^snap-.*\.nbs$')" -eq 1 ]; then
		ls "$1" | grep '^snap-.*\.nbs$'
	fi
}

killed=0 finished=0 effect=0
k_h=0 k_s=0 k_c=0 n_h=0 n_s=0 n_c=0
hseq=0
start=$(date +%s)
run=0
while [ $run -lt "$runs" ]; do
	run=$((run + 1))
	case $((run % 4)) in
	1 | 2) op=harvest ;;
	3) op=ship ;;
	0) op=compact ;;
	esac
	if [ $op = harvest ]; then
		h_job=k$((hseq / 2)) h_node=n$((hseq % 2 + 1)) h_src=$((hseq / 2 % 3))
		hseq=$((hseq + 1))
	fi
	rm -rf "$tmp/old" "$tmp/new"
	cp -a "$W" "$tmp/old"
	cp -a "$W" "$tmp/new"
	run_op $op "$tmp/new" >"$tmp/new.out" 2>&1
	nrc=$?
	case $op in
	harvest) ms=$(rand_ms $max_h); n_h=$((n_h + 1)) ;;
	ship) ms=$(rand_ms $max_s); n_s=$((n_s + 1)) ;;
	compact) ms=$(rand_ms $max_c); n_c=$((n_c + 1)) ;;
	esac
	run_op $op "$W" timeout -s KILL "$(printf '0.%03d' "$ms")" >"$tmp/run.out" 2>&1
	rc=$?
	{ echo "== run $run $op ${h_job:-}.${h_node:-} killed after ${ms} ms: exit $rc (copy $nrc)"
		sed 's/^/   copy: /' "$tmp/new.out"; sed 's/^/   real: /' "$tmp/run.out"; } >>"$tmp/trace"
	case $op in harvest) adapt max_h $rc ;; ship) adapt max_s $rc ;; compact) adapt max_c $rc ;; esac
	if [ $rc -eq 137 ]; then
		killed=$((killed + 1))
		case $op in harvest) k_h=$((k_h + 1)) ;; ship) k_s=$((k_s + 1)) ;; compact) k_c=$((k_c + 1)) ;; esac
		# did it die mid-way (something on disk changed) rather than before it began?
		if [ "$(cd "$tmp/old" && find . | sort)" != "$(cd "$W" && find . | sort)" ]; then
			effect=$((effect + 1))
		fi
	else
		finished=$((finished + 1))
		[ $rc -eq $nrc ] || bad "finished with exit $rc, the copy with $nrc"
	fi

	# every run: the state directory verifies
	if "$bot" state verify --state "$W/st" >"$tmp/verify.out" 2>&1; then ok; else
		bad "state verify exits 1 (killed after ${ms} ms)"; sed 's/^/    /' "$tmp/verify.out" | head -n 8
	fi

	case $op in
	harvest)
		dn=c.$h_job.0.0.$h_node.nbd
		[ $nrc -eq 0 ] && [ -f "$tmp/new/ob/$dn" ] || bad "the copy's harvest wrote no $dn (exit $nrc)"
		# the outbox: the old deltas untouched, and no delta or the complete one
		[ "$(names "$W/ob" | grep -v "^$dn\$")" = "$(names "$tmp/old/ob")" ] && ok ||
			bad "the outbox's other deltas changed"
		if [ -e "$W/ob/$dn" ]; then
			if same_but_clock "$W/ob/$dn" "$tmp/new/ob/$dn" && readable "$W/ob/$dn"; then ok; else
				bad "a partial or unreadable $dn under its final name (killed after ${ms} ms)"
				sed 's/^/    /' "$tmp/scratch.out" | head -n 4
			fi
		fi
		for h in $(hidden "$W/ob"); do
			[ "$h" = ".$dn.tmp" ] || bad "outbox: unexpected hidden file $h"
		done
		# a rerun succeeds or says the delta exists; then the complete delta is there
		run_op harvest "$W" >"$tmp/rerun.out" 2>&1
		hr=$?
		if { [ $hr -eq 0 ] && grep -q "wrote " "$tmp/rerun.out"; } ||
			{ [ $hr -eq 1 ] && grep -q "$dn exists: not overwritten" "$tmp/rerun.out"; }; then ok; else
			bad "harvest rerun: exit $hr"; sed 's/^/    /' "$tmp/rerun.out" | head -n 4
		fi
		if [ -f "$W/ob/$dn" ] && same_but_clock "$W/ob/$dn" "$tmp/new/ob/$dn" && readable "$W/ob/$dn" &&
			[ -z "$(hidden "$W/ob")" ]; then ok; else
			bad "after the rerun: $dn missing, unreadable or a temporary left"; ls -la "$W/ob" | sed 's/^/    /'
		fi
		;;
	ship)
		# every delta in exactly one of outbox/inbox, or in both with the same bytes
		for d in $(names "$tmp/old/ob") $(names "$tmp/old/st/inbox"); do
			src=$tmp/old/ob/$d
			[ -f "$src" ] || src=$tmp/old/st/inbox/$d
			inb=no outb=no
			if [ -e "$W/st/inbox/$d" ]; then
				cmp -s "$W/st/inbox/$d" "$src" && inb=yes || { bad "inbox/$d differs from the delta shipped"; continue; }
			fi
			if [ -e "$W/ob/$d" ]; then
				cmp -s "$W/ob/$d" "$src" && outb=yes || { bad "outbox/$d changed"; continue; }
			fi
			[ $inb = yes ] || [ $outb = yes ] || bad "$d lost (killed after ${ms} ms)"
		done
		ok
		# nothing else under a final name; only claims of those deltas are hidden in the inbox
		(names "$tmp/old/ob"; names "$tmp/old/st/inbox") | sort -u >"$tmp/old.names"
		extra=$( (names "$W/st/inbox"; names "$W/ob") | sort -u | comm -13 "$tmp/old.names" -)
		[ -z "$extra" ] && ok || bad "new names appeared: $extra"
		for h in $(hidden "$W/st/inbox"); do
			c=${h#.}
			case $h in
			.*.nbd.tmp) grep -qxF "${c%.tmp}" "$tmp/old.names" || bad "inbox: a claim for no delta: $h" ;;
			*) bad "inbox: unexpected hidden file $h" ;;
			esac
		done
		[ -z "$(hidden "$W/ob")" ] || bad "outbox: hidden files: $(hidden "$W/ob")"
		if [ $rc -eq 0 ]; then
			# (a delta behind an empty claim younger than 60 s waits: "busy")
			[ "$(names "$W/st/inbox")" = "$(names "$tmp/new/st/inbox")" ] &&
				[ "$(names "$W/ob")" = "$(names "$tmp/new/ob")" ] && ok ||
				bad "a finished ship left other directories than the copy's"
		fi
		;;
	compact)
		oc=$(effective_current "$tmp/old/st/$F")
		nc=$(cat "$tmp/new/st/$F/current" 2>/dev/null)
		# the killed run's state read as readers read it: a run killed
		# before it completed an interrupted first publish leaves no
		# `current` over the one first snapshot, which is the state (it
		# read '' here, and failed when the old state was such a
		# snapshot and the copy only completed it: old = new)
		cc=$(effective_current "$W/st/$F")
		if [ "$cc" = "$oc" ] || [ "$cc" = "$nc" ]; then ok; else
			bad "current is '$cc': neither the old '$oc' nor the new '$nc'"
		fi
		if [ -n "$cc" ] && [ "$cc" = "$nc" ]; then
			cmp -s "$W/st/$F/$cc" "$tmp/new/st/$F/$nc" && ok || bad "$cc is not the completed copy's bytes"
		fi
		[ $rc -ne 0 ] || [ "$cc" = "$nc" ] || bad "a finished compact published '$cc', the copy '$nc'"
		# the inbox: what the completed copy kept <= what is left <= what was there
		names "$tmp/old/st/inbox" >"$tmp/in.old"
		names "$tmp/new/st/inbox" >"$tmp/in.new"
		names "$W/st/inbox" >"$tmp/in.now"
		[ -z "$(comm -13 "$tmp/in.old" "$tmp/in.now")" ] && [ -z "$(comm -23 "$tmp/in.new" "$tmp/in.now")" ] && ok ||
			bad "the inbox lost deltas the copy kept, or grew"
		# nothing published: only duplicates (merged by an earlier publish
		# whose cleanup was killed) may have left the inbox; the copy's run
		# appended a "duplicate" provenance line for each
		if [ "$cc" = "$oc" ] && [ "$oc" != "$nc" ]; then
			pl=$(cat "$tmp/old/st/.ledger/$F/provenance.log" 2>/dev/null | wc -l)
			tail -n +$((pl + 1)) "$tmp/new/st/.ledger/$F/provenance.log" >"$tmp/prov.new" 2>/dev/null
			for d in $(comm -23 "$tmp/in.old" "$tmp/in.now"); do
				grep -q "^[0-9]* duplicate - $d " "$tmp/prov.new" && ok ||
					bad "$d left the inbox without a publish, and is no duplicate"
			done
		fi
		[ -z "$(names "$W/st/quarantine")" ] || bad "a good delta was quarantined: $(names "$W/st/quarantine")"
		# the same steps from one corpus never contradict the fabric: nothing held
		[ -z "$(names "$W/st/held")" ] || bad "a good delta was held: $(names "$W/st/held")"
		;;
	esac
done
took=$(($(date +%s) - start))
echo "runs: $runs ($n_h harvest, $n_s ship, $n_c compact) in ${took}s; killed $killed" \
	"($k_h harvest, $k_s ship, $k_c compact; $effect of them mid-way, with something on disk" \
	"changed), finished $finished; kill delays up to ${max_h}/${max_s}/${max_c} ms at the end"
[ $((killed * 100)) -ge $((runs * 30)) ] && ok ||
	bad "only $killed of $runs runs were killed (want >= 30%)"
[ "$effect" -gt 0 ] && ok || bad "no kill landed mid-way"

# The end: everything to completion. An empty claim younger than 60 s is a
# live shipper's for ship: the time passing is simulated by ageing them.
op=final run=final
for c in "$W"/st/inbox/.*.tmp; do
	[ -e "$c" ] && touch -d '@'$(($(date +%s) - 120)) "$c"
done
"$bot" ship --outbox "$W/ob" --state "$W/st" >"$tmp/out" 2>&1 || { bad "final ship"; cat "$tmp/out"; }
"$bot" compact --state "$W/st" --now $NOW $CONF >"$tmp/out" 2>&1 || { bad "final compact"; cat "$tmp/out"; }
[ -z "$(names "$W/ob")" ] && [ -z "$(names "$W/st/inbox")" ] && ok ||
	bad "left after the final run: $(names "$W/ob") $(names "$W/st/inbox")"
"$bot" state verify --state "$W/st" >"$tmp/out" 2>&1 && ok || { bad "final verify"; cat "$tmp/out"; }

# A clean pipeline, never killed, over the same harvests
C=$tmp/clean
mkdir -p "$C/ob" "$C/st"
i=0
while [ $i -lt $hseq ]; do
	"$bot" harvest --outbox "$C/ob" --fabric $F --cluster c --job k$((i / 2)) --node n$((i % 2 + 1)) \
		--nodes 2 "$tmp/sp$((i / 2 % 3))" >/dev/null 2>&1 || bad "clean harvest $i"
	i=$((i + 1))
done
"$bot" ship --outbox "$C/ob" --state "$C/st" >/dev/null 2>&1 || bad "clean ship"
"$bot" compact --state "$C/st" --now $NOW $CONF >"$tmp/out" 2>&1 || bad "clean compact"
grep -q "merged $hseq delta(s) of $((hseq / 2)) job step(s), 0 duplicate(s), 0 quarantined, 0 waiting" "$tmp/out" &&
	ok || { bad "clean compact did not merge all $hseq deltas"; cat "$tmp/out"; }

# totals: the samples (n of every arm) and calls of every context, and the
# whole learned part of the export, equal the clean pipeline's
"$bot" state export --state "$W/st" --fabric $F >"$tmp/killed.yaml" 2>&1 || bad "export"
"$bot" state export --state "$C/st" --fabric $F >"$tmp/clean.yaml" 2>&1 || bad "clean export"
total() {
	awk '/^  calls: / { c += $2 } { while (match($0, /\{n: [0-9]+/)) {
		s += substr($0, RSTART + 4, RLENGTH - 4); $0 = substr($0, RSTART + RLENGTH) } }
		END { printf "%d samples, %d calls\n", s, c }' "$1"
}
tk=$(total "$tmp/killed.yaml") tc=$(total "$tmp/clean.yaml")
echo "totals: killed pipeline $tk; clean pipeline $tc"
[ "$tk" = "$tc" ] && [ "$tc" != "0 samples, 0 calls" ] && ok || bad "totals differ: $tk vs $tc"
sed -n '/^contexts:/,$p' "$tmp/killed.yaml" >"$tmp/k.ctx"
sed -n '/^contexts:/,$p' "$tmp/clean.yaml" >"$tmp/c.ctx"
cmp -s "$tmp/k.ctx" "$tmp/c.ctx" && ok || { bad "learned contexts differ"; diff "$tmp/k.ctx" "$tmp/c.ctx" | head; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
