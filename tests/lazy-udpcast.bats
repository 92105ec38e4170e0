#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot lazy --udpcast: the copy comes from a multicast stream while the
# boot reads the image through its read-only loop device; when the stream
# fails (no session, another image, a compressed or stalled stream) the
# copy is made from the image as without --udpcast, and the loop device is
# switched all the same.
#
# As root: a squashfs image on a read-only loop device, mounted as a boot
# would (as in tests/lazy.bats). A stand-in udp-receiver in $PATH plays
# the stream for the quick cases; with udpcast installed, network
# namespaces on one host (as in tests/udpcast.bats) carry a real session:
# `ramboot serve` in one, the copier in another (only its network
# namespace: its mounts stay ours). Teardown removes the mounts, the loop
# device, the namespaces and their processes, also after a failure, and
# checks that nothing is left.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/udpcast-lab

setup_file() {
	local d=$BATS_FILE_TMPDIR
	make_tree "$d/tree"
	mksquashfs "$d/tree" "$d/base.sqfs" -quiet -no-progress -noappend \
		-all-root -no-xattrs -noI -noD -noF -noX >/dev/null
	"${RAMBOOT_BIN:-$BATS_TEST_DIRNAME/../ramboot}" manifest -o "$d/base.man" "$d/base.sqfs"
	sha256sum "$d/base.sqfs" | cut -d' ' -f1 >"$d/base.sha256"
}

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	IMG=$T/image.sqfs
	cp "$BATS_FILE_TMPDIR/base.sqfs" "$IMG"
	MAN=$BATS_FILE_TMPDIR/base.man
	SHA=$(cat "$BATS_FILE_TMPDIR/base.sha256")
	SIZE=$(stat -c %s "$IMG")
	# The server's copy of the image: what the session sends. The image
	# the loop device reads is another file, so that the page cache of
	# the image holds only what the boot read.
	SRV=$T/server.sqfs
	cp "$IMG" "$SRV"
	# The status file beside a boot report, as under /run/ramboot.
	mkdir -p "$T/run"
	STATUS=$T/run/lazy
	LOOP=
	MNT=$T/mnt
	RAM=$T/ram
	NS=rblu$$
}

teardown() {
	local _ n p
	lab_teardown
	if [ -n "${COPIER:-}" ]; then
		kill -KILL "$COPIER" 2>/dev/null || true
		wait "$COPIER" 2>/dev/null || true
	fi
	# A background copier still running.
	if [ -f "$STATUS" ] && ! grep -qE '^state=(switched|gave-up)$' "$STATUS"; then
		p=$(sed -n 's/^pid=//p' "$STATUS")
		[ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true
		sleep 0.2
	fi
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount "$MNT" || umount -l "$MNT"
	fi
	if [ -n "$LOOP" ] && [ -e "/sys/block/${LOOP#/dev/}/loop" ]; then
		losetup -d "$LOOP"
	fi
	# The loop device lets go of the copy a moment after losetup -d.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		mountpoint -q "$RAM" 2>/dev/null || break
		umount "$RAM" 2>/dev/null || sleep 0.2
	done
	if mountpoint -q "$RAM" 2>/dev/null; then
		umount -l "$RAM"
	fi
	# A switch to zram leaves the device to the loop device: ours to
	# remove once the loop device let go of it.
	if [ -f "$STATUS" ] && grep -qx 'state=switched' "$STATUS" &&
		grep -q '^copy=/dev/zram' "$STATUS"; then
		n=$(sed -n 's|^copy=/dev/zram||p' "$STATUS")
		if [ -e "/sys/block/zram$n" ]; then
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				echo 1 >"/sys/block/zram$n/reset" 2>/dev/null && break
				sleep 0.2
			done
			echo "$n" >/sys/class/zram-control/hot_remove || true
			[ ! -e "/sys/block/zram$n" ] || { echo "# zram$n is left" >&3; return 1; }
		fi
	fi
	# Nothing left: no mount below the test's directory, no loop device
	# over its files, no namespace of ours.
	! grep -q " $T/" /proc/mounts || { echo "# a mount is left below $T" >&3; return 1; }
	[ -z "$(losetup -j "$IMG" 2>/dev/null)" ] || { echo "# a loop device is left on $IMG" >&3; return 1; }
	! losetup -a 2>/dev/null | grep -qF "$T/" || { echo "# a loop device is left on a file below $T" >&3; return 1; }
	! ip netns list 2>/dev/null | grep -q "^${NS}" || { echo "# a network namespace is left" >&3; return 1; }
}

# st KEY: the value of KEY in the status file.
st() {
	sed -n "s/^$1=//p" "$STATUS"
}

# rep KEY: the value of KEY in the boot report beside it.
rep() {
	sed -n "s/^$1=//p" "$T/run/report"
}

require_root() {
	is_root || skip "needs root: loop devices, mounts, LOOP_CHANGE_FD"
}

# attach: the image on a read-only loop device, mounted at $MNT as a boot
# would, with part of it read (in the page cache); nothing else of it
# there.
attach() {
	sync "$IMG"
	dd if="$IMG" iflag=nocache count=0 status=none
	LOOP=$(losetup -r --show -f "$IMG")
	mkdir -p "$MNT"
	mount -t squashfs -o ro "$LOOP" "$MNT"
	cat "$MNT/text/file1.txt" >/dev/null
	# What the boot read of the image: in the page cache.
	RES=$(fincore -b -n -r -o RES "$IMG")
	# A boot report for the copier to amend.
	printf 'mode=lazy\nmode_done=lazy\n' >"$T/run/report"
}

backing() {
	cat "/sys/block/${LOOP#/dev/}/loop/backing_file"
}

# The image is gone: every file must come from the RAM copy.
assert_tree_from_ram() {
	rm -f "$IMG"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	run find "$MNT" -type f -exec cat {} +
	[ "$status" -eq 0 ] || fail "reading the tree failed: $output"
	run diff -r --no-dereference "$BATS_FILE_TMPDIR/tree" "$MNT"
	[ "$status" -eq 0 ] || fail "tree differs: $output"
}

# A switch to the copy made from the image, after a fallback for REASON.
assert_network_copy() {
	[ "$(st state)" = switched ] || fail "state=$(st state): $(cat "$STATUS")"
	[ "$(st source)" = network ]
	[ "$(st source_fallback)" = "$1" ]
	[ -n "$(st source_error)" ]
	[ "$(st hash)" = ok ]
	[ "$(st sha256)" = "$SHA" ]
	[ $(($(st bytes_cached) + $(st bytes_network))) -eq "$SIZE" ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	[ "$(rep lazy_source)" = network ]
	[ "$(rep lazy_source_fallback)" = "$1" ]
	[ -z "$(rep lazy_gave_up)" ]
}

# lazy_fake ARGS: the copier with the stand-in udp-receiver.
lazy_fake() {
	run --separate-stderr env PATH="$T/bin:$PATH" "$RAMBOOT_BIN" lazy --image="$IMG" \
		--tmpfs="$RAM" --status="$STATUS" "$@"
}

# serve FILE: one session of FILE from the sender's namespace, in the
# background, bounded.
serve() {
	ip netns exec "$NS-s" timeout 60 "$RAMBOOT_BIN" serve --once --interface=eth0 \
		--rate=50Mbit "$1" >"$T/serve.log" 2>&1 &
	SERVE=$!
}

# lazy_lab ARGS: the copier in the client's network namespace only (its
# mounts are ours), bounded.
lazy_lab() {
	run --separate-stderr nsenter --net="/run/netns/$NS-1" timeout 90 "$RAMBOOT_BIN" lazy \
		--image="$IMG" --tmpfs="$RAM" --status="$STATUS" --manifest="$MAN" "$@"
}

# ---- the command line ----

@test "lazy --udpcast: bad options are usage errors, nothing run or made" {
	fake_receiver "exit 0"
	for o in portbase=9001 portbase=x interface=-x "interface=a b" start-timeout=0 \
		receive-timeout=99999 foo=1 portbase portbase=9000,portbase=9002 "=" ","; do
		lazy_fake --manifest="$MAN" --udpcast="$o"
		expect_status 2
		assert_equal "$(echo "$stderr" | wc -l)" 1
		[[ $stderr == *"--udpcast: "* ]]
	done
	[ ! -e "$T/args" ]
	[ ! -e "$STATUS" ]
	[ ! -e "$RAM" ]
	rb lazy --help
	assert_output --partial '--udpcast[=OPTS]'
}

# ---- a stand-in udp-receiver ----

@test "lazy --udpcast: the copy comes from the stream; the image is not copied" {
	require_root
	attach
	fake_receiver "exec cat '$SRV'"
	lazy_fake --manifest="$MAN" --udpcast=portbase=9010,interface=lab0,start-timeout=7,receive-timeout=3
	expect_status 0
	run cat "$T/args"
	assert_output "--nokbd --stat-period 5000 --start-timeout 7 --receive-timeout 3 --portbase 9010 --interface lab0"
	[ "$(st state)" = switched ]
	[ "$(st source)" = udpcast ]
	[ -z "$(st source_fallback)" ]
	[ "$(st bytes_stream)" -eq "$SIZE" ]
	[ "$(st bytes_network)" -eq 0 ]
	[ "$(st bytes_cached)" -eq 0 ]
	# Of the image the copier read only what the page cache held (the
	# boot's reads) and its first page, to compare them with the copy.
	[ "$(st bytes_compared)" -gt 0 ]
	[ "$(st bytes_compared)" -le $((RES + 4096)) ]
	[ "$(st hash)" = ok ]
	[ "$(st sha256)" = "$SHA" ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	[ "$(rep lazy_source)" = udpcast ]
	[ -n "$(sed -n '/^lazy_source_fallback=$/p' "$T/run/report")" ]
	[[ $stderr == *"from the udpcast stream, sha256 ok"* ]]
	assert_tree_from_ram
}

@test "lazy --udpcast: a stream of another image fails verification: the copy is made from the image" {
	require_root
	attach
	# The same size, one byte changed where the boot did not read.
	cp "$SRV" "$T/other.sqfs"
	printf 'X' | dd of="$T/other.sqfs" bs=1 seek=$((SIZE - 5000)) conv=notrunc status=none
	fake_receiver "exec cat '$T/other.sqfs'"
	lazy_fake --sha256="$SHA" --udpcast
	expect_status 0
	assert_network_copy hash-mismatch
	[[ $(st source_error) == *"SHA-256 is "*", not $SHA" ]]
	[[ $stderr == *"copying from $IMG"* ]]
	assert_tree_from_ram
}

@test "lazy --udpcast: with chunk hashes, another image is told by its first chunk" {
	require_root
	attach
	"$RAMBOOT_BIN" manifest --chunk-size=64K -o "$T/chunks.man" "$IMG"
	cp "$SRV" "$T/other.sqfs"
	printf 'X' | dd of="$T/other.sqfs" bs=1 seek=1000 conv=notrunc status=none
	# Two chunks of another image, then nothing: told by the first,
	# long before the stream could count as stalled.
	fake_receiver "head -c 131072 '$T/other.sqfs'; echo \$\$ >'$T/pid'; exec sleep 60"
	lazy_fake --manifest="$T/chunks.man" --udpcast=receive-timeout=60 --stall-timeout=60
	expect_status 0
	assert_network_copy hash-mismatch
	[[ $(st source_error) == *"chunk 0 of the stream is not the manifest's"* ]]
	[ "$(st bytes_stream)" -lt 131072 ]
	run ! kill -0 "$(cat "$T/pid")"
}

@test "lazy --udpcast: a stream that is not what the boot read is not switched to" {
	require_root
	attach
	# The image on the loop device is not the manifest's: the stream is.
	# Its copy verifies, but differs from what the mount read.
	cp "$SRV" "$T/new.sqfs"
	printf 'X' | dd of="$T/new.sqfs" bs=1 seek=100 conv=notrunc status=none
	"$RAMBOOT_BIN" manifest -o "$T/new.man" "$T/new.sqfs"
	fake_receiver "exec cat '$T/new.sqfs'"
	lazy_fake --manifest="$T/new.man" --udpcast
	# The copy from the image fails the same hash: given up, unchanged.
	expect_status 1
	[ "$(st source_fallback)" = image-differs ]
	[ "$(st gave_up)" = hash-mismatch ]
	[ "$(backing)" = "$IMG" ]
	run ! mountpoint -q "$RAM"
	[ ! -e "$RAM" ]
}

@test "lazy --udpcast: a compressed, a longer, a shorter stream: the copy is made from the image" {
	require_root
	attach
	zstd -q -1 -c "$SRV" >"$T/srv.zst"
	fake_receiver "exec cat '$T/srv.zst'"
	lazy_fake --manifest="$MAN" --udpcast
	expect_status 0
	assert_network_copy compressed
	[[ $(st source_error) == *"zstd-compressed"*"raw image"* ]]
	umount "$MNT"
	losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$RAM" 2>/dev/null && break; sleep 0.2; done
	attach
	fake_receiver "cat '$SRV'; echo more"
	lazy_fake --manifest="$MAN" --udpcast
	expect_status 0
	assert_network_copy size-mismatch
	[[ $(st source_error) == *"longer than $IMG"* ]]
	umount "$MNT"
	losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$RAM" 2>/dev/null && break; sleep 0.2; done
	attach
	fake_receiver "exec head -c $((SIZE - 4096)) '$SRV'"
	lazy_fake --manifest="$MAN" --udpcast
	expect_status 0
	assert_network_copy size-mismatch
	[[ $(st source_error) == *"ended after $((SIZE - 4096)) bytes"* ]]
}

@test "lazy --udpcast: a failed or stalled receiver, or none: the copy is made from the image" {
	require_root
	attach
	# The whole image, then a failure: not trusted.
	fake_receiver "cat '$SRV'; exit 3"
	lazy_fake --manifest="$MAN" --udpcast
	expect_status 0
	assert_network_copy stream-lost
	[[ $(st source_error) == *"udp-receiver failed (exit 3)"* ]]
	umount "$MNT"
	losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$RAM" 2>/dev/null && break; sleep 0.2; done
	attach
	# Part of it, then silence: --stall-timeout ends it, the receiver is
	# stopped.
	fake_receiver "head -c 100000 '$SRV'; echo \$\$ >'$T/pid'; exec sleep 60"
	lazy_fake --manifest="$MAN" --udpcast=receive-timeout=30 --stall-timeout=2
	expect_status 0
	assert_network_copy stall
	run ! kill -0 "$(cat "$T/pid")"
	umount "$MNT"
	losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$RAM" 2>/dev/null && break; sleep 0.2; done
	attach
	run --separate-stderr env PATH=/nonexistent "$RAMBOOT_BIN" lazy --image="$IMG" \
		--tmpfs="$RAM" --status="$STATUS" --manifest="$MAN" --udpcast
	expect_status 0
	assert_network_copy receiver
	[[ $(st source_error) == *"cannot run udp-receiver"* ]]
}

@test "lazy --udpcast: without a hash to check it against, the stream is not used" {
	require_root
	attach
	fake_receiver "exec cat '$SRV'"
	lazy_fake --udpcast
	expect_status 0
	[ ! -e "$T/args" ]
	[ "$(st state)" = switched ]
	[ "$(st source)" = network ]
	[ "$(st source_fallback)" = unverified ]
	[ "$(st hash)" = none ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
}

@test "lazy --udpcast --background --wait-loop: the stream is received before the loop device exists" {
	require_root
	fake_receiver "exec cat '$SRV'"
	local n=0
	# As the boot starts it: in the background, before the loop device.
	env PATH="$T/bin:$PATH" "$RAMBOOT_BIN" lazy --image="$IMG" --tmpfs="$RAM" \
		--status="$STATUS" --manifest="$MAN" --udpcast --background --wait-loop=60
	# The whole stream is in, the copier waits for the loop device.
	until [ "$(st state)" = waiting-loop ] && [ "$(st bytes_stream)" = "$SIZE" ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "the stream was not received first: $(cat "$STATUS")"
		sleep 0.1
	done
	[ -n "$(st verified)" ]
	attach
	n=0
	until [ "$(st state)" = switched ] || [ "$(st state)" = gave-up ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "no switch: $(cat "$STATUS")"
		sleep 0.1
	done
	[ "$(st state)" = switched ] || fail "$(cat "$STATUS" "$STATUS.log")"
	[ "$(st source)" = udpcast ]
	[ "$(st bytes_network)" -eq 0 ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	assert_tree_from_ram
}

@test "lazy --udpcast: SIGTERM while receiving gives up cleanly, the receiver stopped" {
	require_root
	attach
	fake_receiver "head -c 100000 '$SRV'; echo \$\$ >'$T/pid'; exec sleep 60"
	env PATH="$T/bin:$PATH" "$RAMBOOT_BIN" lazy --image="$IMG" --tmpfs="$RAM" \
		--status="$STATUS" --manifest="$MAN" --udpcast 2>"$T/err" &
	COPIER=$!
	local n=0 rc=0
	until [ -s "$T/pid" ] && [ "$(st state)" = receiving ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "not receiving: $(cat "$STATUS")"
		sleep 0.1
	done
	kill -TERM "$COPIER"
	wait "$COPIER" || rc=$?
	COPIER=
	[ "$rc" -eq 143 ] || fail "exit $rc, expected death by SIGTERM (143): $(cat "$T/err")"
	[ "$(st gave_up)" = signal ]
	[ "$(backing)" = "$IMG" ]
	run ! kill -0 "$(cat "$T/pid")"
	run ! mountpoint -q "$RAM"
	[ ! -e "$RAM" ]
}

@test "lazy --udpcast: a zram target is written from the stream and switched to" {
	require_root
	[ -d /sys/class/zram-control ] || skip "no zram-control (zram module missing)"
	# zram has whole pages only: the image padded to them, as a block
	# device image is.
	truncate -s $(((SIZE + 4095) / 4096 * 4096)) "$IMG"
	SIZE=$(stat -c %s "$IMG")
	cp "$IMG" "$SRV"
	"$RAMBOOT_BIN" manifest -o "$T/pad.man" "$IMG"
	attach
	fake_receiver "exec cat '$SRV'"
	run --separate-stderr env PATH="$T/bin:$PATH" "$RAMBOOT_BIN" lazy --image="$IMG" \
		--target=zram --status="$STATUS" --manifest="$T/pad.man" --udpcast
	expect_status 0
	local dev
	dev=$(st copy)
	[[ $dev == /dev/zram* ]]
	[ "$(st source)" = udpcast ]
	[ "$(st bytes_network)" -eq 0 ]
	[ "$(backing)" = "$dev" ]
	cmp "$dev" "$SRV"
	assert_tree_from_ram
}

@test "lazy --udpcast: a signed manifest checks the stream's copy as any other" {
	require_root
	"$RAMBOOT_BIN" keygen "$T/lab" >/dev/null
	mkdir -p "$T/keys"
	cp "$T/lab.pub" "$T/keys/"
	cp "$MAN" "$T/signed.man"
	"$RAMBOOT_BIN" sign --key="$T/lab" "$T/signed.man"
	attach
	fake_receiver "exec cat '$SRV'"
	lazy_fake --manifest="$T/signed.man" --signed --keys="$T/keys" --udpcast
	expect_status 0
	[ "$(st source)" = udpcast ]
	[ "$(st hash)" = ok ]
	[[ $(st signed_by) == "lab "* ]]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	umount "$MNT"
	losetup -d "$LOOP"
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$RAM" 2>/dev/null && break; sleep 0.2; done
	# Another image in the stream: refused by the signed hash too.
	attach
	cp "$SRV" "$T/other.sqfs"
	printf 'X' | dd of="$T/other.sqfs" bs=1 seek=$((SIZE - 5000)) conv=notrunc status=none
	fake_receiver "exec cat '$T/other.sqfs'"
	lazy_fake --manifest="$T/signed.man" --signed --keys="$T/keys" --udpcast
	expect_status 0
	assert_network_copy hash-mismatch
}

# ---- a session in network namespaces ----

@test "lazy --udpcast lab: the copy comes from the session, the loop device switches to it" {
	need_lab
	lab 78 1
	attach
	serve "$SRV"
	lazy_lab --udpcast=start-timeout=20
	cat "$T/serve.log"
	echo "$stderr"
	expect_status 0
	wait "$SERVE"
	[ "$(st source)" = udpcast ]
	[ -z "$(st source_fallback)" ]
	[ "$(st hash)" = ok ]
	[ "$(st bytes_stream)" -eq "$SIZE" ]
	# The image was not copied: only what the boot read was compared.
	[ "$(st bytes_network)" -eq 0 ]
	[ "$(st bytes_cached)" -eq 0 ]
	[ "$(st bytes_compared)" -le $((RES + 4096)) ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	[ "$(rep lazy_source)" = udpcast ]
	assert_tree_from_ram
}

@test "lazy --udpcast lab: no session within the start timeout: the copy is made from the image" {
	need_lab
	lab 78 1
	attach
	lazy_lab --udpcast=start-timeout=2
	echo "$stderr"
	expect_status 0
	assert_network_copy no-session
	[[ $(st source_error) == *"udp-receiver failed"* ]]
	assert_tree_from_ram
}

@test "lazy --udpcast lab: a session of another image: verification fails, the copy is made from the image" {
	need_lab
	lab 78 1
	attach
	cp "$SRV" "$T/other.sqfs"
	printf 'X' | dd of="$T/other.sqfs" bs=1 seek=$((SIZE - 5000)) conv=notrunc status=none
	serve "$T/other.sqfs"
	lazy_lab --udpcast=start-timeout=20
	echo "$stderr"
	expect_status 0
	# Told by the chunk hashes of the manifest (4 MiB chunks), before
	# the end of the stream; the sender is left to teardown.
	assert_network_copy hash-mismatch
	[[ $(st source_error) == *"chunk 1 of the stream is not the manifest's"* ]]
	assert_tree_from_ram
}
