#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot` with ramboot.source=udpcast: the RAM copy is read from a
# udpcast session (ramboot serve), checked like any copy, and read again
# from the network image when the session cannot give a good one. The
# client runs in a fixture root ($RAMBOOT_ROOT, as tests/boot-cmd.bats)
# and, for a real session, in a network namespace of its own (entered
# with nsenter --net, so that its tmpfs stays visible here) linked to the
# sender's by a veth pair. Namespaces, processes and mounts go in
# teardown, also after a failure.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031
load helpers/common
load helpers/udpcast-lab

setup() {
	is_root || skip "needs root (tmpfs mounts, network namespaces)"
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/root/images" "$R/etc" "$BATS_TEST_TMPDIR/bin"
	: >"$R/proc/cmdline"
	printf 'MemTotal: 8100000 kB\nMemFree: 8000000 kB\nMemAvailable: 8000000 kB\n' \
		>"$R/proc/meminfo"
	IMG=$R/root/images/x.img
	make_sqfs "$IMG" one
	"$RAMBOOT_BIN" manifest "$IMG" >"$IMG.manifest"
	NS=rbub$$
	ZRAM_ID=
}

teardown() {
	lab_teardown
	if [ -n "$ZRAM_ID" ] && [ -e "/sys/block/zram$ZRAM_ID" ]; then
		echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
		echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
	fi
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram" || umount -l "$R/run/ramboot/ram"
	fi
}

make_sqfs() { # path seed
	local d=$BATS_TEST_TMPDIR/tree.$2
	mkdir -p "$d/etc" "$d/sbin"
	echo "$2" >"$d/etc/hostname"
	head -c 600000 /dev/urandom >"$d/sbin/init"
	mksquashfs "$d" "$1" -quiet -noappend -no-progress >/dev/null
}

report() { # key -> value
	sed -n "s/^$1=//p" "$R/run/ramboot/report"
}

# boot CMDLINE [PATH]: ramboot boot in the fixture root, in the client's
# network namespace once lab has made it; PATH replaces $PATH.
boot() {
	local pre=()
	[ "${#NETS[@]}" -eq 0 ] || pre=(nsenter "--net=/run/netns/$NS-c")
	run --separate-stderr timeout 120 "${pre[@]}" env -u RAMBOOT RAMBOOT_ROOT="$R" \
		PATH="${2:-$PATH}" "$RAMBOOT_BIN" boot --json --cmdline="ramboot=ram ramboot.image=/root/images/x.img $1"
	echo "$stderr"
}

# serve IMAGE: one session of ramboot serve in the sender's namespace, in
# the background.
serve() {
	ip netns exec "$NS-s" timeout 60 "$RAMBOOT_BIN" serve --once --interface=eth0 \
		--rate=20Mbit "$1" >"$BATS_TEST_TMPDIR/serve.log" 2>&1 &
}

assert_copy() { # the RAM copy is the image, verified
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	cmp "$IMG" "$R/run/ramboot/ram/x.img"
	[ "$(report mode_done)" = ram ]
	[ "$(report hash)" = ok ]
	[ "$(report fstype)" = squashfs ]
	[ "$(report fallback)" = "" ]
}

@test "boot udpcast: a session: the copy comes from it, verified" {
	need_lab
	lab 79 c
	serve "$IMG"
	boot "ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=20"
	assert_success
	cat "$BATS_TEST_TMPDIR/serve.log"
	assert_copy
	[ "$(report source_used)" = udpcast ]
	[ "$(report source_fallback)" = "" ]
	grep -q '^  "source_used": "udpcast",$' "$R/run/ramboot/report.json"
	grep -q '^  "source_fallback": "",$' "$R/run/ramboot/report.json"
	grep -q "session 1 done" "$BATS_TEST_TMPDIR/serve.log"
}

@test "boot udpcast: no session: the image is read from the network, verified" {
	need_lab
	lab 79 c
	boot "ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=2"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == "udpcast: udp-receiver failed"* ]]
	grep -q '^  "source_fallback": "udpcast: udp-receiver failed' "$R/run/ramboot/report.json"
	[ "$(echo "$stderr" | grep -c "reading the network image instead")" = 1 ]
}

@test "boot udpcast: a stream of another image fails its hash: read from the network" {
	need_lab
	lab 79 c
	make_sqfs "$BATS_TEST_TMPDIR/other.img" two
	serve "$BATS_TEST_TMPDIR/other.img"
	boot "ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=20"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == "hash mismatch: "* ]]
}

@test "boot udpcast: no udp-receiver: read from the network" {
	# Only the binary's own directory: the test's bin/ holds no receiver.
	boot "ramboot.source=udpcast" "$BATS_TEST_TMPDIR/bin"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == *"cannot run udp-receiver"* ]]
}

@test "boot udpcast: a receiver that fails after the whole image: read from the network" {
	fake_receiver "cat '$IMG'; exit 3"
	boot "ramboot.source=udpcast ramboot.udpcast=start-timeout=3" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == *"udp-receiver failed (exit 3)"* ]]
}

@test "boot udpcast: a stream with no file system is dropped (no verification): read from the network" {
	fake_receiver "head -c 700000 /dev/zero"
	boot "ramboot.source=udpcast ramboot.verify=off ramboot.manifest=none" \
		"$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	cmp "$IMG" "$R/run/ramboot/ram/x.img"
	[ "$(report hash)" = none ]
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == *"no file system"* ]]
}

# zram_boot CMDLINE: a boot into a new zram device; its id in ZRAM_ID.
zram_boot() {
	[ -e /sys/class/zram-control/hot_add ] || skip "no zram module"
	ln -s /sys "$R/sys"
	ln -s /dev "$R/dev"
	before=$(find /sys/block -maxdepth 1 -name 'zram*' | sort | tr '\n' ' ')
	boot "ramboot.source=udpcast ramboot.target=zram $1" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	[[ $output =~ ^RAMBOOT_IMAGE=$R/dev/zram([0-9]+)$ ]]
	ZRAM_ID=${BASH_REMATCH[1]}
	cmp -n "$(stat -c %s "$IMG")" "$IMG" "/dev/zram$ZRAM_ID"
	# One new device, the copy's: none left from the udpcast attempt.
	after=$(find /sys/block -maxdepth 1 -name 'zram*' | grep -v "/zram$ZRAM_ID\$" | sort | tr '\n' ' ')
	[ "$before" = "$after" ]
}

@test "boot udpcast: into zram, a stream that fails its hash: the same device takes the network image" {
	fake_receiver "head -c 700000 /dev/zero"
	zram_boot ""
	[ "$(report hash)" = ok ]
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == "hash mismatch: "* ]]
}

@test "boot udpcast: into zram without a manifest (no size for the stream): the network image" {
	fake_receiver "exec cat '$IMG'"
	zram_boot "ramboot.verify=off ramboot.manifest=none"
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == *"image size unknown"* ]]
}

@test "boot udpcast: the copy from the session is used as is (stand-in receiver), udpcast options passed" {
	fake_receiver "exec cat '$IMG'"
	boot "ramboot.source=udpcast ramboot.udpcast=portbase=9010,start-timeout=7" \
		"$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_copy
	[ "$(report source_used)" = udpcast ]
	[ "$(report source_fallback)" = "" ]
	[[ $(cat "$BATS_TEST_TMPDIR/args") == *"--start-timeout 7 "*"--portbase 9010"* ]]
}

@test "boot udpcast: ramboot.verify=signed with an unsigned manifest: no copy at all, no retry" {
	fake_receiver "exec cat '$IMG'"
	boot "ramboot.source=udpcast ramboot.verify=signed" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "not signed" ]
	[ "$(report source_fallback)" = "" ]
	[ ! -e "$BATS_TEST_TMPDIR/args" ]
	run ! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

@test "boot udpcast: not enough memory is not retried" {
	printf 'MemTotal: 300000 kB\nMemFree: 200000 kB\nMemAvailable: 200000 kB\n' \
		>"$R/proc/meminfo"
	fake_receiver "exec cat '$IMG'"
	boot "ramboot.source=udpcast" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_output ""
	[ "$(report fallback)" = "not enough memory" ]
	[ "$(report source_used)" = udpcast ]
	[ "$(report source_fallback)" = "" ]
	run ! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

@test "boot udpcast: ramboot.source=network (the default) never runs udp-receiver" {
	fake_receiver "exit 1"
	boot "" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[ "$(report source_fallback)" = "" ]
	[ ! -e "$BATS_TEST_TMPDIR/args" ]
}

@test "boot udpcast: ramboot=lazy: the copier takes the stream and switches the loop device to it" {
	local loop st
	ln -s /sys "$R/sys"
	ln -s /dev "$R/dev"
	fake_receiver "exec cat '$IMG'"
	boot "ramboot.source=udpcast ramboot=lazy" "$BATS_TEST_TMPDIR/bin:$PATH"
	assert_success
	assert_output ""
	[ "$(report mode_done)" = lazy ]
	# what LTSP does after its PRE_INITRD_BOTTOM hooks
	loop=$(losetup -r -f --show "$IMG")
	for _ in $(seq 300); do
		st=$(sed -n 's/^state=//p' "$R/run/ramboot/lazy" 2>/dev/null)
		case $st in switched | gave-up*) break ;; esac
		sleep 0.1
	done
	backing=$(cat "/sys/block/${loop#/dev/}/loop/backing_file")
	losetup -d "$loop"
	[ "$st" = switched ]
	[ "$(sed -n 's/^source=//p' "$R/run/ramboot/lazy")" = udpcast ]
	[ -z "$(sed -n 's/^source_fallback=//p' "$R/run/ramboot/lazy")" ]
	[[ $backing == "$R/run/ramboot/ram/"* ]]
	[ -s "$BATS_TEST_TMPDIR/args" ]   # the receiver ran
	[ "$(report lazy_source)" = udpcast ]
}

@test "boot udpcast: a client after the session has ended: the image from the network, verified" {
	need_lab
	lab 79 c
	serve "$IMG"
	boot "ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=20"
	[ "$(report source_used)" = udpcast ]
	wait
	# The one session is over and no other comes.
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram"
	fi
	rm -rf "$R/run/ramboot"
	boot "ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=2"
	assert_success
	assert_copy
	[ "$(report source_used)" = network ]
	[[ $(report source_fallback) == "udpcast: udp-receiver failed"* ]]
}

@test "boot udpcast: the client's link is cut mid-stream: the image from the network, verified" {
	local n=0 pid rx
	need_lab
	lab 79 c
	# 4 MiB at 4 Mbit/s: about 8 s on the wire.
	head -c 4194304 /dev/urandom >"$BATS_TEST_TMPDIR/tree.one/big"
	mksquashfs "$BATS_TEST_TMPDIR/tree.one" "$IMG" -quiet -noappend -no-progress >/dev/null
	"$RAMBOOT_BIN" manifest "$IMG" >"$IMG.manifest"
	ip netns exec "$NS-s" timeout 60 "$RAMBOOT_BIN" serve --once --interface=eth0 \
		--rate=4Mbit "$IMG" >"$BATS_TEST_TMPDIR/serve.log" 2>&1 &
	nsenter "--net=/run/netns/$NS-c" env -u RAMBOOT RAMBOOT_ROOT="$R" timeout 120 \
		"$RAMBOOT_BIN" boot --cmdline="ramboot=ram ramboot.image=/root/images/x.img \
		ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=20,receive-timeout=3" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	while :; do
		rx=$(ip netns exec "$NS-c" cat /sys/class/net/eth0/statistics/rx_bytes)
		[ "$rx" -lt 1048576 ] || break
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "the stream never started"
		sleep 0.1
	done
	ip -n "$NS-c" link set eth0 down
	wait "$pid"
	cat "$BATS_TEST_TMPDIR/err"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img" ]
	cmp "$IMG" "$R/run/ramboot/ram/x.img"
	[ "$(report hash)" = ok ]
	[ "$(report source_used)" = network ]
	[ -n "$(report source_fallback)" ]
	[ "$(report fallback)" = "" ]
}
