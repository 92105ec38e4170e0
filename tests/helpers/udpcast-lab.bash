# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The udpcast lab of the bats files (udpcast, boot-udpcast, lazy-udpcast;
# netmem-server for its clients of the network memory tier):
# network namespaces on one host joined by a bridge, `ramboot serve` in
# the sender's, ramboot in the clients'; and a stand-in udp-receiver for
# the cases that need no network. The caller sets NS (a name prefix of
# its own) in setup and calls lab_teardown in teardown; lab sets NETS,
# the namespaces it made.

# need_lab: skip without root, udpcast, nsenter or network namespaces.
need_lab() {
	[ "$(id -u)" = 0 ] || skip "needs root: network namespaces"
	if ! command -v udp-sender >/dev/null || ! command -v udp-receiver >/dev/null; then
		skip "udpcast (udp-sender, udp-receiver) not installed"
	fi
	command -v nsenter >/dev/null || skip "nsenter not installed"
	ip netns add "$NS-probe" 2>/dev/null || skip "cannot make network namespaces"
	ip netns del "$NS-probe"
}

# lab NET NAME...: a bridge in $NS-br; the sender in $NS-s (10.NET.0.1)
# and a namespace $NS-NAME per client (10.NET.0.11, .12, ...), each on a
# veth pair named eth0 on its side, with a multicast route over it.
lab() {
	local net=$1 i a k=10
	shift
	NETS=("$NS-br")
	ip netns add "$NS-br"
	ip -n "$NS-br" link add br0 type bridge mcast_snooping 0
	ip -n "$NS-br" link set br0 up
	for i in s "$@"; do
		NETS+=("$NS-$i")
		ip netns add "$NS-$i"
		ip link add "$NS-$i" type veth peer name eth0 netns "$NS-$i"
		ip link set "$NS-$i" netns "$NS-br"
		ip -n "$NS-br" link set "$NS-$i" master br0 up
		if [ "$i" = s ]; then
			a=10.$net.0.1
		else
			k=$((k + 1))
			a=10.$net.0.$k
		fi
		ip -n "$NS-$i" addr add "$a/24" brd + dev eth0
		ip -n "$NS-$i" link set eth0 up
		ip -n "$NS-$i" link set lo up
		ip -n "$NS-$i" route add 224.0.0.0/4 dev eth0
	done
}

# lab_teardown: every process in the namespaces killed, the namespaces
# removed (their veth pairs go with them), and a link of ours left in this
# namespace (a setup cut short) removed by its name.
lab_teardown() {
	local n p
	for n in "${NETS[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
	done
	for n in "${NETS[@]}"; do
		ip netns del "$n" 2>/dev/null || true
	done
	for p in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep "^${NS}" | cut -d@ -f1); do
		ip link del "$p" 2>/dev/null || true
	done
}

# fake_receiver BODY: a stand-in udp-receiver in $BATS_TEST_TMPDIR/bin that
# records its arguments in $BATS_TEST_TMPDIR/args, then runs BODY (its
# stdout is the stream).
fake_receiver() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	cat >"$BATS_TEST_TMPDIR/bin/udp-receiver" <<EOF
#!/bin/sh
echo "\$@" >"$BATS_TEST_TMPDIR/args"
$1
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-receiver"
}
