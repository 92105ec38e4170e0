#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest side of the netmem boot case (tests/boot/run.sh): run from the
# host's share by the client's init. dochog fills more anonymous memory
# than the client has, from a corpus whose every line holds a marker;
# once loaded it leaves its pages untouched until the network tier wrote
# some back (bd_stat), then touches every page again and verifies it.
# Then the link is cut (the host's QEMU monitor: set_link off): a small
# process whose pages went to the server touches them, waits and gets an
# error, while a heartbeat (no page on the server) goes on; the link comes
# back, the tier reconnects; a second tier set up while the first holds
# the mapping's name fails half-way and must undo its NBD connection;
# `ramboot swap --off` takes the tier down; a tier started again with
# stderr closed lives on, and goes with --off too.
# Prints RBTEST netmem-* lines for the host.
share=${0%/*}
docs=${RBTEST_NETMEM_DOCS:-18}
zdir=

report() { sed -n "s/^$1=//p" /run/ramboot/report 2>/dev/null | head -n 1; }

wait_until() { # TENTHS COMMAND...: run COMMAND every 0.1 s until it succeeds
	_w=0
	_max=$1
	shift
	while [ $_w -lt "$_max" ]; do
		"$@" && return 0
		sleep 0.1
		_w=$((_w + 1))
	done
	return 1
}

connected() { [ "$(report swap_net_state)" = connected ]; }
wait_until 600 connected
echo "RBTEST netmem-state=$(report swap_net_state)"

# Init in a cgroup of its own with the memory controller, as systemd
# puts itself in init.scope after the switch of root: the tier's process
# (started before, in the initramfs) must find it and set its
# memory.swap.max to 0 within a period or two.
cg=/sys/fs/cgroup
echo "RBTEST netmem-pid1-before=$(report swap_net_pid1)"
# A new cgroup's memory.swap.max says max: read before init is in it.
if mount -t cgroup2 cgroup2 "$cg" && echo +memory > "$cg/cgroup.subtree_control" &&
	mkdir "$cg/init.scope" && new=$(cat "$cg/init.scope/memory.swap.max") &&
	echo 1 > "$cg/init.scope/cgroup.procs"; then
	echo "RBTEST netmem-pid1-cgroup=$(sed -n 's/^0:://p' /proc/1/cgroup) swap.max-new=$new"
else
	echo "RBTEST netmem-pid1-cgroup=failed"
fi
pid1_safe() { [ "$(cat "$cg/init.scope/memory.swap.max" 2>/dev/null)" = 0 ] && [ "$(report swap_net_pid1)" = protected ]; }
wait_until 200 pid1_safe
echo "RBTEST netmem-pid1 swap.max=$(cat "$cg/init.scope/memory.swap.max" 2>&1) report=$(report swap_net_pid1)"
dev=$(report swap_device)
zdir=/sys/block/${dev#/dev/}
echo "RBTEST netmem-backing=$(cat "$zdir/backing_dev" 2>/dev/null)"

# 4 MiB of text, every line with the marker: what the server must never see.
seq 1 65536 | sed 's/^/RBTEST-NETMEM-MARKER line /; s/$/ of the documents/' > /tmp/corpus
rm -f /tmp/go /tmp/go2
# The victim of the cut: 8 MiB loaded first, untouched from then on, so
# the workload pushes its pages out, and the policy writes them back.
"$share/dochog" -n 1 -s 8 -r -W /tmp/go2 /tmp/corpus > /tmp/victim.out 2>&1 &
victim=$!
"$share/dochog" -n "$docs" -s 12 -r -W /tmp/go /tmp/corpus > /tmp/dochog.out 2>&1 &
hog=$!
loaded() { grep -q "^doc $docs\$" /tmp/dochog.out; }
wait_until 3000 loaded || echo "RBTEST netmem-load=timeout"
echo "RBTEST netmem-loaded=$(grep -c '^doc ' /tmp/dochog.out)"
echo "RBTEST netmem-swaps $(tail -n +2 /proc/swaps | tr -s ' \t' ' ')"

# At least 4 MiB on the network before the pages are touched again;
# what the policy sees (I/O stalls pause it), every 5 s meanwhile.
on_net() { read -r c _ < "$zdir/bd_stat" && [ "$c" -ge 1024 ]; }
i=0
while ! on_net && [ $i -lt 60 ]; do
	read -r c r w < "$zdir/bd_stat"
	psi=$(sed -n "s/^full //p" /proc/pressure/io)
	echo "RBTEST netmem-wait bd_stat=$c,$r,$w $psi"
	sleep 5
	i=$((i + 1))
done
on_net || echo "RBTEST netmem-writeback=timeout"
echo "RBTEST netmem-bd-before=$(cat "$zdir/bd_stat")"

# The host kills the server now and starts it again a few seconds later:
# the tier sees the connection lost, connects again, and the pages on the
# server read back through the new connection.
lost() { [ "$(report swap_net_state)" = lost ]; }
echo "RBTEST netmem-ready-to-cut"
# The driver finds the connection gone only on a request: the policy's
# writeback may be paused (I/O stalls), so read a block of the NBD device
# once the server is down; it completes after the reconnection.
sleep 1
nbd=$(sed -n 's/^nbd=//p' /run/ramboot/netmem 2>/dev/null)
dd if="/dev/nbd${nbd:-0}" of=/dev/null bs=4096 count=1 2>/dev/null &
probe=$!
# The shell may miss a short lost (it may wait on its own pages on the
# server meanwhile): the host checks the tier's lines in the kernel log.
wait_until 200 lost && echo "RBTEST netmem-lost=seen"
wait_until 1200 connected && echo "RBTEST netmem-reconnected=seen"
wait "$probe"
echo "RBTEST netmem-probe-exit=$?"
touch /tmp/go
while kill -0 "$hog" 2>/dev/null; do
	read -r c r w < "$zdir/bd_stat"
	echo "RBTEST netmem-retouch bd_stat=$c,$r,$w"
	sleep 10
done
wait "$hog"
echo "RBTEST netmem-dochog-exit=$?"
sed 's/^/RBTEST netmem-dochog /' /tmp/dochog.out | grep -v ' doc [0-9]*$'
echo "RBTEST netmem-bd-after=$(cat "$zdir/bd_stat")"
echo "RBTEST netmem-pid1-swap-current=$(cat "$cg/init.scope/memory.swap.current" 2>&1)"

# The policy's process amends the report each period: wait for the reads.
read_back() { v=$(report swap_net_bytes_read); [ -n "$v" ] && [ "$v" != 0 ]; }
wait_until 300 read_back || echo "RBTEST netmem-report=no reads"
# The policy's process: out of the OOM killer's reach, locked in RAM.
for p in /proc/[0-9]*; do
	[ "$(cat "$p/oom_score_adj" 2>/dev/null)" = -1000 ] || continue
	grep -q ramboot "$p/cmdline" 2>/dev/null || continue
	echo "RBTEST netmem-daemon pid=${p#/proc/} $(grep '^VmLck:' "$p/status" | tr -s ' \t' ' ')"
done

up() { cut -d' ' -f1 /proc/uptime; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
pid=$(sed -n 's/^pid=//p' /run/ramboot/netmem 2>/dev/null)
echo "RBTEST netmem-record $(tr '\n' ' ' < /run/ramboot/netmem 2>/dev/null)"
echo "RBTEST netmem-daemon-sigign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null) fd2=$(readlink "/proc/$pid/fd/2" 2>/dev/null)"

# The network cut. A heartbeat first: a process with no page on the server.
# It ends by itself and is waited for: a process left to init (its sleep,
# were it killed) would wake init when it exits, and init's own pages may
# be on the server (a read that fails there kills init: a panic).
: > /tmp/hb
rm -f /tmp/hb.stop
( while [ ! -e /tmp/hb.stop ]; do up >> /tmp/hb; sleep 1; done ) &
hb=$!
echo "RBTEST netmem-cut-link"
sleep 3
t0=$(up)
touch /tmp/go2
wait_until 1200 lost && echo "RBTEST netmem-cut-lost=seen after $(secs "$t0" "$(up)") s"
ramboot status 2>&1 | grep '^swap_net' | sed 's/^/RBTEST netmem-cut-status /'
wait "$victim"
rc=$?
t1=$(up)
echo "RBTEST netmem-cut-victim exit=$rc waited=$(secs "$t0" "$t1") s"
sed 's/^/RBTEST netmem-cut-victim-out /' /tmp/victim.out | grep -v ' doc [0-9]*$'
beats=$(awk -v a="$t0" -v b="$t1" '$1 > a && $1 < b' /tmp/hb | wc -l)
echo "RBTEST netmem-cut-heartbeat=$beats in $(secs "$t0" "$t1") s"
touch /tmp/hb.stop
wait "$hb"
echo "RBTEST netmem-daemon-after-cut=$(kill -0 "$pid" 2>/dev/null && echo alive || echo gone)"
t2=$(up)
echo "RBTEST netmem-link-restore"
wait_until 1800 connected && echo "RBTEST netmem-cut-reconnected=seen after $(secs "$t2" "$(up)") s"

# A second tier while the first holds the mapping's name: its dm-crypt
# step fails after its NBD device is connected. It must undo that, and
# leave zram alone with one warning.
nbd_up() { for s in /sys/block/nbd*/size; do [ "$(cat "$s")" != 0 ] && echo "${s%/size}"; done | sed 's,.*/,,' | tr '\n' ' '; }
echo "RBTEST netmem-half-nbd-before=$(nbd_up)"
server=$(report swap_net)
ramboot swap --size=16M --no-tune --net="$server" > /tmp/half.out 2> /tmp/half.err
echo "RBTEST netmem-half rc=$? dev=$(cat /tmp/half.out)"
sed 's/^/RBTEST netmem-half-err /' /tmp/half.err
half=$(cat /tmp/half.out)
echo "RBTEST netmem-half-backing=$(cat "/sys/block/${half#/dev/}/backing_dev" 2>/dev/null)"
echo "RBTEST netmem-half-nbd-after=$(nbd_up)"
ramboot swap --off "$half" 2>&1 | sed 's/^/RBTEST netmem-half-off /'
wait_until 100 connected

# The teardown.
dms() { set -- /sys/block/dm-*; [ -e "$1" ] && echo $# || echo 0; }
echo "RBTEST netmem-off-before mapper=$(cd /dev/mapper 2>/dev/null && echo ./*) dm=$(dms) nbd=$(nbd_up)"
ramboot swap --off "$dev" > /tmp/off.out 2>&1
echo "RBTEST netmem-off rc=$?"
sed 's/^/RBTEST netmem-off-out /' /tmp/off.out
echo "RBTEST netmem-off-mapper=$([ -e /dev/mapper/ramboot-netmem ] && echo present || echo gone) dm=$(dms)"
echo "RBTEST netmem-off-nbd=$(nbd_up)"
echo "RBTEST netmem-off-swaps=$(tail -n +2 /proc/swaps | wc -l)"
echo "RBTEST netmem-off-zram=$([ -e "$zdir" ] && echo present || echo gone)"
state=$(sed -n 's/^State:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
echo "RBTEST netmem-off-daemon=$(case $state in ''|Z*) echo gone ;; *) echo "alive $state" ;; esac)"
echo "RBTEST netmem-off-record=$([ -e /run/ramboot/netmem ] && echo present || echo gone)"
echo "RBTEST netmem-off-state=$(report swap_net_state)"

# Once more, the tier started with stderr closed: its process must live
# on (it takes no signal for a write that fails), and go with --off.
ramboot swap --size=16M --no-tune --net="$server" --net-period=1 > /tmp/again.out 2>&-
echo "RBTEST netmem-again rc=$? dev=$(cat /tmp/again.out)"
again=$(cat /tmp/again.out)
pid=$(sed -n 's/^pid=//p' /run/ramboot/netmem 2>/dev/null)
sleep 5
echo "RBTEST netmem-again-daemon=$(kill -0 "$pid" 2>/dev/null && echo alive || echo gone) state=$(report swap_net_state) sigign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)"
ramboot swap --off "$again" > /tmp/off.out 2>&1
echo "RBTEST netmem-again-off rc=$? nbd=$(nbd_up) mapper=$([ -e /dev/mapper/ramboot-netmem ] && echo present || echo gone) state=$(report swap_net_state)"
sed 's/^/RBTEST netmem-again-off-out /' /tmp/off.out
