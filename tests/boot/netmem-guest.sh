#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest side of the netmem boot case (tests/boot/run.sh): run from the
# host's share by the client's init. dochog fills more anonymous memory
# than the client has, from a corpus whose every line holds a marker;
# once loaded it leaves its pages untouched until the network tier wrote
# some back (bd_stat), then touches every page again and verifies it.
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
dev=$(report swap_device)
zdir=/sys/block/${dev#/dev/}
echo "RBTEST netmem-backing=$(cat "$zdir/backing_dev" 2>/dev/null)"

# 4 MiB of text, every line with the marker: what the server must never see.
seq 1 65536 | sed 's/^/RBTEST-NETMEM-MARKER line /; s/$/ of the documents/' > /tmp/corpus
rm -f /tmp/go
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
wait_until 600 lost && echo "RBTEST netmem-lost=seen"
wait_until 1200 connected && echo "RBTEST netmem-reconnected=seen"
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

# The policy's process amends the report each period: wait for the reads.
read_back() { v=$(report swap_net_bytes_read); [ -n "$v" ] && [ "$v" != 0 ]; }
wait_until 300 read_back || echo "RBTEST netmem-report=no reads"
# The policy's process: out of the OOM killer's reach, locked in RAM.
for p in /proc/[0-9]*; do
	[ "$(cat "$p/oom_score_adj" 2>/dev/null)" = -1000 ] || continue
	grep -q ramboot "$p/cmdline" 2>/dev/null || continue
	echo "RBTEST netmem-daemon pid=${p#/proc/} $(grep '^VmLck:' "$p/status" | tr -s ' \t' ' ')"
done
