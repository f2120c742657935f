#!/bin/sh
# calls.sh - how many calls a rank's summaries say (doc/formats.md section 9):
# window calls x 100, x the periods over those measured. A process skips
# windows in its quiet time (tuner/windows.c: after the mask was on for T,
# no window opens for 98 T), so window calls x 100 alone said a fraction of
# the calls made, and the policies, which compare a round's calls with the
# calls so far (doc/policies.md), held back probes that long. In `make
# check` (about 1 s): nccl-emu, 8 rank processes, every communicator making
# 20,000 calls of allreduce 64 MiB; each summary's calls must be within 2x
# of 20,000 (window calls x 100 alone: 3,200 here), and a state made from
# the job must hold, per context, the sum of its summaries' calls. (Ranks
# whose windows never opened write none: the state's calls over nRanks
# then fall short of 20,000 per communicator, the safe side.)
# NCCL_BOT_SO: the plugin.
set -u
. "$(dirname "$0")/lib.sh"
emu_begin ""

mkdir "$tmp/spool" "$tmp/state"
if "$emu" --suite consistency --scenario base --policy thompson --workload allreduce:64M \
	--calls-each 20000 --procs 8 --timeout 120 --spool "$tmp/spool" --plugin "$so" \
	>"$tmp/out" 2>&1; then
	ok "the emulated job ran"
else
	bad "the emulated job failed"
	sed 's/^/    /' "$tmp/out" | tail -n 12
fi
"$bot" spool show "$tmp/spool" >"$tmp/show" 2>&1
# "comm ID rank R/N nodes M allreduce 67108864 B+: CALLS calls (...)"
sed -n 's/^ *comm .*: \([0-9]*\) calls (.*/\1/p' "$tmp/show" >"$tmp/calls"
n=$(wc -l <"$tmp/calls")
off=$(awk '$1 < 10000 || $1 > 40000' "$tmp/calls" | wc -l)
if [ "$n" -gt 0 ] && [ "$off" -eq 0 ]; then
	ok "summaries: $n, each within 2x of 20000 calls ($(sort -n "$tmp/calls" | head -n 1)-$(sort -n "$tmp/calls" | tail -n 1))"
else
	bad "summaries: $off of $n more than 2x off 20000 calls: $(sort -n "$tmp/calls" | uniq -c | tr '\n' ' ')"
fi
# the state: per context, the sum of its summaries' calls (each rank's once,
# formats.md 12), whatever ranks wrote one
if "$bot" state add --state "$tmp/state" --fabric emu "$tmp/spool" >"$tmp/add" 2>&1; then
	ok "state add"
else
	bad "state add failed"
	sed 's/^/    /' "$tmp/add"
fi
"$bot" state show --state "$tmp/state" --fabric emu >"$tmp/state.yaml" 2>&1
# "comm ID rank R/N nodes M allreduce 67108864 B+: CALLS calls": per nodes/ranks
sed -n 's/^ *comm [0-9a-f]* rank [0-9]*\/\([0-9]*\) nodes \([0-9]*\) .*: \([0-9]*\) calls (.*/\2 \1 \3/p' \
	"$tmp/show" | awk '{ s["n" $1 "/r" $2] += $3 } END { for (k in s) print k, s[k] }' | sort >"$tmp/want"
awk '/^- context: / { split($3, p, "/"); k = p[3] "/" p[4] } /^  calls: / { print k, $2 }' \
	"$tmp/state.yaml" | sort >"$tmp/got"
if [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"; then
	ok "state: each context holds the sum of its summaries' calls ($(tr '\n' ' ' <"$tmp/got"))"
else
	bad "state: want $(tr '\n' ' ' <"$tmp/want"), got $(tr '\n' ' ' <"$tmp/got")"
fi
emu_end
