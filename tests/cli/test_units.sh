#!/bin/sh
# tests/cli/test_units.sh - the service pieces of contrib/ (the packages
# install them): the systemd units and timers for ship and compact pass
# `systemd-analyze verify` with nothing to say (it runs offline: no systemd
# as PID 1 needed), each timer starts its service and is the only thing to
# enable, the services run as the service account and their ExecStart is a
# command line the built nccl-bot accepts; the sysusers.d file makes the
# account (systemd-sysusers --root) and the tmpfiles.d file the spool and
# the outbox with the modes doctor wants (systemd-tmpfiles --root).
# Skips (77) where systemd-analyze is missing.
set -u
bot=${NCCL_BOT:-./nccl-bot}
top=${abs_top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "${top_srcdir:-$srcdir}/tests/cli/lib.sh"
units=$srcdir/contrib/systemd
tmpfiles=$top/contrib/tmpfiles.d/nccl-bot.conf

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not installed"; exit 77
fi
[ -f "$tmpfiles" ] || { echo "$tmpfiles not built"; exit 99; }
case $bot in /*) ;; *) bot=$(pwd)/$bot ;; esac

# verify: the units as installed, with ExecStart's /usr/bin/nccl-bot being
# the built one (verify wants it executable); it exits 0 on an unknown key
# or a bad value and only says so, so the check is "exit 0, nothing said"
mkdir "$tmp/u"
for f in nccl-bot-ship.service nccl-bot-ship.timer nccl-bot-compact.service nccl-bot-compact.timer; do
	sed "s|/usr/bin/nccl-bot |$bot |" "$units/$f" >"$tmp/u/$f"
done
verify() { (cd "$1" && systemd-analyze verify --man=no ./*.service ./*.timer) >"$tmp/out" 2>&1 &&
	! [ -s "$tmp/out" ]; }
if verify "$tmp/u"; then ok "systemd-analyze verify: 2 services, 2 timers, nothing to say"
else bad "systemd-analyze verify: 2 services, 2 timers, nothing to say"; sed 's/^/    /' "$tmp/out"; fi
# the check itself: a misspelt key and a bad value are caught
cp -r "$tmp/u" "$tmp/v"
sed -i 's/^Nice=10/Nicee=10/; s/^ProtectSystem=full/ProtectSystem=bogus/' "$tmp/v/nccl-bot-ship.service"
if verify "$tmp/v"; then bad "a misspelt key and a bad value are caught"
else
	grep -q "Unknown key 'Nicee'" "$tmp/out" && grep -q 'protect system value.*bogus' "$tmp/out" &&
		ok "a misspelt key and a bad value are caught" || { bad "a misspelt key and a bad value are caught"; cat "$tmp/out"; }
fi

for s in ship compact; do
	svc=$units/nccl-bot-$s.service tim=$units/nccl-bot-$s.timer
	expect "nccl-bot-$s.service runs as the service account" 0 '' -- \
		sh -c "grep -qx 'User=nccl-bot' '$svc' && grep -qx 'Group=nccl-bot' '$svc'"
	expect "nccl-bot-$s.service: oneshot, waits for /etc/nccl-bot/site.yaml, has no [Install]" 0 '' -- \
		sh -c "grep -qx 'Type=oneshot' '$svc' && grep -qx 'ConditionPathExists=/etc/nccl-bot/site.yaml' '$svc' && ! grep -q '^\[Install\]' '$svc'"
	expect "nccl-bot-$s.timer is wanted by timers.target (what enable links)" 0 '' -- \
		grep -qx 'WantedBy=timers.target' "$tim"
	expect "nccl-bot-$s.service is hardened (NoNewPrivileges, ProtectSystem, PrivateTmp, a syscall filter)" 0 '' -- \
		sh -c "grep -qx 'NoNewPrivileges=yes' '$svc' && grep -qx 'ProtectSystem=full' '$svc' && grep -qx 'PrivateTmp=yes' '$svc' && grep -qx 'SystemCallFilter=@system-service' '$svc'"
done
expect "only ship keeps a capability: CAP_DAC_OVERRIDE (root's outbox); compact none" 0 '' -- \
	sh -c "grep -qx 'CapabilityBoundingSet=CAP_DAC_OVERRIDE' '$units/nccl-bot-ship.service' && grep -qx 'CapabilityBoundingSet=' '$units/nccl-bot-compact.service' && ! grep -q Ambient '$units/nccl-bot-compact.service'"

# ExecStart's command lines, run with a site configuration in the place of
# /etc/nccl-bot/site.yaml: ship moves a delta-less outbox's nothing, compact
# an empty inbox's nothing, both exit 0
mkdir -p "$tmp/state" "$tmp/outbox"
printf 'version: 2\nstate_dir: %s\noutbox_dir: %s\n' "$tmp/state" "$tmp/outbox" >"$tmp/site.yaml"
for s in ship compact; do
	cmd=$(sed -n 's|^ExecStart=/usr/bin/nccl-bot ||p' "$units/nccl-bot-$s.service" | sed "s|/etc/nccl-bot/site.yaml|$tmp/site.yaml|")
	# shellcheck disable=SC2086
	expect "ExecStart of nccl-bot-$s.service ($cmd) runs: exit 0" 0 '' -- env -u NCCL_BOT_CONFIG "$bot" $cmd
done

# the account: systemd-sysusers into an empty root
if command -v systemd-sysusers >/dev/null 2>&1; then
	mkdir -p "$tmp/root/etc"
	expect "sysusers.d: systemd-sysusers makes the account" 0 '' -- \
		sh -c "systemd-sysusers --root='$tmp/root' - <'$srcdir/contrib/sysusers.d/nccl-bot.conf'"
	expect "  ... nccl-bot, a system uid, no login shell" 0 '' -- \
		awk -F: '$1 == "nccl-bot" && $3 < 1000 && $7 ~ /nologin$/ { f = 1 } END { exit !f }' "$tmp/root/etc/passwd"
else
	echo "skip - sysusers.d (no systemd-sysusers)"
fi

# the directories: systemd-tmpfiles into an empty root
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	spool=$(awk '$1 == "d" && $2 ~ /shm/ { print $2 }' "$tmpfiles")
	outbox=$(awk '$1 == "d" && $2 ~ /outbox$/ { print $2 }' "$tmpfiles")
	expect "tmpfiles.d: systemd-tmpfiles --create makes them" 0 '' -- \
		sh -c "systemd-tmpfiles --root='$tmp/root' --create - <'$tmpfiles'"
	expect "  ... the spool $spool: root's, 0711" 0 '' -- \
		test "$(stat -c '%U %a' "$tmp/root$spool")" = "root 711"
	expect "  ... the outbox $outbox: root's, 0750 (doctor's private_dir)" 0 '' -- \
		test "$(stat -c '%U %a' "$tmp/root$outbox")" = "root 750"
else
	echo "skip - tmpfiles.d (no systemd-tmpfiles)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
