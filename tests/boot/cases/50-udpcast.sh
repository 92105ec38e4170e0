# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/50-udpcast.sh - ramboot.source=udpcast: the image by multicast.
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

# udpcast_case NAME: ramboot=ram ramboot.source=udpcast. QEMU's user
# network passes no multicast: the client's virtio-net NIC is a tap device
# in a network namespace of its own, where `ramboot serve` runs udp-sender
# on the tap; the client sets a static address (rbtest.ip=) and receives
# the image with udp-receiver from its initramfs. The namespace (and the
# tap and sender in it) goes at the end, and on an exit or a signal.
udpcast_case() {
	case_begin "$1"
	if ! command -v udp-sender >/dev/null || [ ! -x /usr/bin/udp-receiver ]; then
		skip "$name" "udpcast not installed (apt-get install udpcast)"
		return
	fi
	uc_ns=rbuc$$
	uc_qemu=$qemu_bin
	uc_serve=
	uc_stop() {
		[ -z "$uc_serve" ] || { kill "$uc_serve" 2>/dev/null; wait "$uc_serve" 2>/dev/null; }
		uc_serve=
		for p in $(ip netns pids "$uc_ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$uc_ns" 2>/dev/null
		qemu_bin=$uc_qemu
	}
	trap 'uc_stop; boot_cleanup' EXIT
	trap 'uc_stop; exit 130' INT TERM
	if ! ip netns add "$uc_ns" || ! ip -n "$uc_ns" tuntap add dev rbtap0 mode tap ||
		! ip -n "$uc_ns" addr add 10.80.0.1/24 brd + dev rbtap0 ||
		! ip -n "$uc_ns" link set rbtap0 up || ! ip -n "$uc_ns" link set lo up ||
		! ip -n "$uc_ns" route add 224.0.0.0/4 dev rbtap0; then
		fail "cannot make the network namespace with a tap device"
	else
		# Sessions one after the other: one that starts before the
		# guest's NIC is there fails and the next one waits for it.
		ip netns exec "$uc_ns" "$rbtool" serve --interface=rbtap0 "$net/x86_64.img" \
			> "$logs/$name.serve" 2>&1 &
		uc_serve=$!
		# QEMU in the namespace, its NIC on the tap device.
		printf '#!/bin/sh\nexec ip netns exec %s %s "$@" -netdev tap,id=n0,ifname=rbtap0,script=no,downscript=no -device virtio-net-pci,netdev=n0\n' \
			"$uc_ns" "$uc_qemu" > "$logs/$name.qemu.sh"
		chmod 0755 "$logs/$name.qemu.sh"
		qemu_bin=$logs/$name.qemu.sh
		boot "$name" 9p "ramboot=ram ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=120 ramboot.sha256=$img_sha rbtest.ip=10.80.0.2/24"
		expect_done && {
			expect_root ram
			expect mode_asked ram
			expect mode_done ram
			expect source_used udpcast
			has_key source_fallback || fail "report: no source_fallback= line"
			expect source_fallback ""
			expect fallback ""
			expect hash ok
			expect fstype squashfs
			expect_ram_copy
		}
		grep -q "session [0-9]* done" "$logs/$name.serve" ||
			fail "no udpcast session was completed: $(tail -n 3 "$logs/$name.serve")"
	fi
	uc_stop
	trap boot_cleanup EXIT
	trap - INT TERM
	result "$name"
}
