#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load http://NAME:PORT/...` with NAME from DNS: Debian's dnsmasq
# answers in a network namespace of the test's own (root), whose
# /etc/resolv.conf is /etc/netns/NS/resolv.conf (`ip netns exec` mounts
# it over /etc/resolv.conf), and Python's http.server serves the image
# there. A name that does not exist, a server that never answers (a
# socket of the test's that reads and says nothing), and
# the initramfs's case: no resolv.conf, the server in klibc ipconfig's
# /run/net-DEVICE.conf (IPV4DNS0), read below RAMBOOT_ROOT.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common

setup() {
	require_loader
	is_root || skip "needs root (network namespaces)"
	PATH=$PATH:/usr/sbin:/sbin
	command -v dnsmasq >/dev/null ||
		skip "dnsmasq not installed (tests/deps.sh install: dnsmasq-base)"
	command -v ip >/dev/null || skip "ip not installed (tests/deps.sh install: iproute2)"
	setup_out
	W=$BATS_TEST_TMPDIR/www
	mkdir -p "$W"
	PIDS=()
	NS=rbdns$$
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	mkdir -p "/etc/netns/$NS"
	resolv 127.0.0.1
	head -c $((2 * 1048576 + 12345)) /dev/urandom >"$W/x.img"
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/x.img.manifest" "$W/x.img"
	ip netns exec "$NS" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv \
		--no-hosts --bind-interfaces --listen-address=127.0.0.1 --user=root \
		--pid-file="$BATS_TEST_TMPDIR/dnsmasq.pid" --local=/lab/ \
		--address=/image.lab/127.0.0.1 --log-facility=- 2>"$BATS_TEST_TMPDIR/dnsmasq.log" &
	PIDS+=("$!")
	# a DNS server that takes every query and never answers
	ip netns exec "$NS" python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.2", 53))
time.sleep(3600)' &
	PIDS+=("$!")
	ip netns exec "$NS" python3 -m http.server 8080 --bind 127.0.0.1 --directory "$W" \
		>/dev/null 2>&1 &
	PIDS+=("$!")
	# both listen (dnsmasq on TCP as well as UDP)
	for _ in $(seq 100); do
		in_ns python3 -c 'import socket
for p in 53, 8080:
	socket.create_connection(("127.0.0.1", p), 1).close()' 2>/dev/null && return 0
		sleep 0.1
	done
	fail "dnsmasq or http.server does not listen in $NS: $(cat "$BATS_TEST_TMPDIR/dnsmasq.log")"
}

teardown() {
	kill_pids
	if [ -n "${NS:-}" ]; then
		ip netns del "$NS" 2>/dev/null || true
		rm -rf "/etc/netns/${NS:?}"
	fi
}

# resolv SERVER: the namespace's /etc/resolv.conf names SERVER, one
# second for each of two attempts
resolv() {
	printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$1" >"/etc/netns/$NS/resolv.conf"
}

in_ns() {
	ip netns exec "$NS" "$@"
}

# rb_ns ARGS: ramboot in the namespace, at most 60 s
rb_ns() {
	run --separate-stderr timeout 60 ip netns exec "$NS" "$RAMBOOT_BIN" "$@"
}

@test "dns: a host name from dnsmasq: a verified copy" {
	rb_ns load --progress=none http://image.lab:8080/x.img "$OUT/x.img"
	assert_loaded "$W/x.img" "$OUT/x.img"
	grep -q 'chunks ok' <<<"$stderr" || fail "not verified by chunks: $stderr"
}

@test "dns: a name the server does not know is not found" {
	rb_ns load --progress=none http://nothere.lab:8080/x.img "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: http://nothere.lab:8080/x.img.manifest: host not found"
}

@test "dns: a server that never answers ends in a clear error, after its attempts" {
	resolv 127.0.0.2
	rb_ns load --progress=none http://image.lab:8080/x.img "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: http://image.lab:8080/x.img.manifest: no answer from the DNS servers"
}

@test "dns: the second server answers when the first does not" {
	printf 'nameserver 127.0.0.2\nnameserver 127.0.0.1\noptions timeout:1\n' \
		>"/etc/netns/$NS/resolv.conf"
	rb_ns load --progress=none http://image.lab:8080/x.img "$OUT/x.img"
	assert_loaded "$W/x.img" "$OUT/x.img"
}

@test "dns: in the initramfs, the server DHCP gave to ipconfig (/run/net-*.conf)" {
	local r=$BATS_TEST_TMPDIR/root
	mkdir -p "$r/run" "$r/etc" "$r/proc"
	cat /proc/meminfo >"$r/proc/meminfo"
	# no nameserver in resolv.conf; what klibc ipconfig writes
	echo 'search lab' >"$r/etc/resolv.conf"
	cat >"$r/run/net-eth0.conf" <<'CONF'
DEVICE='eth0'
PROTO='dhcp'
IPV4ADDR='127.0.0.1'
IPV4DNS0='127.0.0.1'
IPV4DNS1='0.0.0.0'
DNSDOMAIN='lab'
CONF
	run --separate-stderr timeout 60 ip netns exec "$NS" env RAMBOOT_ROOT="$r" \
		"$RAMBOOT_BIN" load --progress=none http://image.lab:8080/x.img "$OUT/x.img"
	assert_loaded "$W/x.img" "$OUT/x.img"
	rm "$r/run/net-eth0.conf" "$OUT/x.img"
	run --separate-stderr timeout 60 ip netns exec "$NS" env RAMBOOT_ROOT="$r" \
		"$RAMBOOT_BIN" load --progress=none http://image.lab:8080/x.img "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: http://image.lab:8080/x.img.manifest: host not in /etc/hosts, and no DNS server known"
}
