#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load` cases that need root: a dedicated tmpfs (--tmpfs), a zram
# device as DEST, loop devices as SOURCE and DEST, a full filesystem.
# Every mount, loop device and zram device a test creates is recorded and
# removed in teardown, also when the test fails. Pre-existing zram devices
# and other loop devices are never touched.

load helpers/common

setup_file() {
	fixtures_init
}

setup() {
	is_root || skip "needs root (mount, losetup, zram)"
	require_loader
	setup_out
	CLEAN=$BATS_TEST_TMPDIR/cleanup
	: >"$CLEAN"
}

# Undo in reverse order of creation.
teardown() {
	local kind arg
	is_root || return 0
	[ -f "${CLEAN:-}" ] || return 0
	tac "$CLEAN" | while read -r kind arg; do
		case $kind in
		mount)
			# stacked mounts too (a second tmpfs over the first)
			while mountpoint -q "$arg"; do
				umount "$arg" 2>/dev/null || umount -l "$arg" 2>/dev/null || break
			done ;;
		loop)
			losetup -d "$arg" 2>/dev/null ;;
		dir)
			rm -rf "$arg" ;;
		zram)
			umount "/dev/zram$arg" 2>/dev/null
			echo 1 >"/sys/block/zram$arg/reset" 2>/dev/null
			echo "$arg" >/sys/class/zram-control/hot_remove 2>/dev/null ;;
		esac
	done
	return 0
}

# Register a mount point before mounting (teardown umounts it).
track() {
	echo "$1 $2" >>"$CLEAN"
}

mounted() {
	mountpoint -q "$1"
}

# new_loop FILE [losetup options]: attach, print the device
new_loop() {
	local f=$1 dev
	shift
	dev=$(losetup -f --show "$@" "$f") || fail "losetup failed"
	track loop "$dev"
	echo "$dev"
}

# new_zram: hot-add a zram device, print its number
new_zram() {
	local n
	[ -e /sys/class/zram-control/hot_add ] || skip "no zram-control (modprobe zram)"
	n=$(cat /sys/class/zram-control/hot_add) || fail "zram hot_add failed"
	track zram "$n"
	# udev may be slow to create the node
	local i
	for i in $(seq 50); do
		[ -b "/dev/zram$n" ] && break
		sleep 0.1
	done
	[ -b "/dev/zram$n" ] || fail "/dev/zram$n did not appear"
	echo "$n"
}

# ---- --tmpfs ----------------------------------------------------------------

@test "--tmpfs: load into our tmpfs, loop-mount read-only, same tree" {
	local mnt=$BATS_TEST_TMPDIR/ram sq=$BATS_TEST_TMPDIR/sq
	mkdir -p "$mnt" "$sq"
	track mount "$mnt"
	rb load --tmpfs="$mnt" "$FIX/sqfs.zst" image.squashfs
	expect_status 0
	mounted "$mnt" || fail "$mnt is not mounted after a successful load"
	assert_equal "$(findmnt -n -o FSTYPE "$mnt")" tmpfs
	# The lazy copier's flags (lib/tmpfs.h): nothing runs from the
	# tmpfs itself, also after it was shrunk to the image (a remount).
	run findmnt -n -o OPTIONS "$mnt"
	[[ ",$output," == *,noexec,* ]]
	[[ ",$output," == *,nosuid,* ]]
	[[ ",$output," == *,nodev,* ]]
	cmp "$FIX/sqfs.raw" "$mnt/image.squashfs"
	track mount "$sq"
	mount -o loop,ro "$mnt/image.squashfs" "$sq"
	diff -r --no-dereference "$FIX/tree" "$sq"
}

@test "--tmpfs: the tmpfs holds at least the image" {
	local mnt=$BATS_TEST_TMPDIR/ram size
	mkdir -p "$mnt"
	track mount "$mnt"
	rb load --tmpfs="$mnt" "$FIX/sqfs.xz" image
	expect_status 0
	size=$(stat -c %s "$FIX/sqfs.raw")
	[ "$(df -B1 --output=size "$mnt" | tail -1)" -ge "$size" ]
}

@test "--tmpfs: run twice, the second load refuses: one tmpfs, the first copy kept" {
	local mnt=$BATS_TEST_TMPDIR/ram
	mkdir -p "$mnt"
	track mount "$mnt"
	rb load --tmpfs="$mnt" "$FIX/sqfs.zst" image
	expect_status 0
	rb load --tmpfs="$mnt" "$FIX/sqfs.zst" image
	expect_status 1
	[[ $stderr == *"$mnt: already a mount point"* ]] || fail "stderr: $stderr"
	# one tmpfs on the directory, and the first copy is still there and whole
	[ "$(findmnt -n -o TARGET -M "$mnt" | wc -l)" -eq 1 ]
	[ "$(awk -v m="$mnt" '$5 == m' /proc/self/mountinfo | wc -l)" -eq 1 ]
	cmp "$FIX/sqfs.raw" "$mnt/image"
}

@test "--tmpfs: failed load unmounts our tmpfs, exit 1" {
	local mnt=$BATS_TEST_TMPDIR/ram f=$BATS_TEST_TMPDIR/bad.zst
	mkdir -p "$mnt"
	track mount "$mnt"
	head -c $(($(stat -c %s "$FIX/sqfs.zst") / 2)) "$FIX/sqfs.zst" >"$f"
	rb load --tmpfs="$mnt" "$f" image
	assert_load_fail 1 "$mnt/image"
	! mounted "$mnt" || fail "our tmpfs is still mounted at $mnt"
}

@test "--tmpfs: wrong --sha256 unmounts our tmpfs, exit 1" {
	local mnt=$BATS_TEST_TMPDIR/ram
	mkdir -p "$mnt"
	track mount "$mnt"
	rb load --tmpfs="$mnt" --sha256="$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" \
		"$FIX/sqfs.raw" image
	assert_load_fail 1 "$mnt/image"
	! mounted "$mnt" || fail "our tmpfs is still mounted at $mnt"
}

@test "--tmpfs: not enough memory, exit 3, nothing mounted" {
	local mnt=$BATS_TEST_TMPDIR/ram
	mkdir -p "$mnt"
	track mount "$mnt"
	rb load --tmpfs="$mnt" --min-free=1T "$FIX/sqfs.raw" image
	assert_load_fail 3 "$mnt/image"
	! mounted "$mnt" || fail "tmpfs mounted although the load was refused"
}

@test "--tmpfs: from a pipe" {
	local mnt=$BATS_TEST_TMPDIR/ram
	mkdir -p "$mnt"
	track mount "$mnt"
	rb_pipe "$FIX/sqfs.gz" load --tmpfs="$mnt" - image
	expect_status 0
	cmp "$FIX/sqfs.raw" "$mnt/image"
}

# ---- full filesystem ----------------------------------------------------------

@test "DEST on a full filesystem (1M tmpfs): exit 1, no file left" {
	local small=$BATS_TEST_TMPDIR/small
	mkdir -p "$small"
	track mount "$small"
	mount -t tmpfs -o size=1M tmpfs "$small"
	OUT=$small
	rb load --min-free=0 "$FIX/sqfs.raw" "$small/img"
	assert_load_fail 1 "$small/img"
	rb load --min-free=0 "$FIX/sqfs.zst" "$small/img"
	assert_load_fail 1 "$small/img"
	rb_pipe "$FIX/sqfs.xz" load --min-free=0 - "$small/img"
	assert_load_fail 1 "$small/img"
}

# ---- zram as DEST -------------------------------------------------------------

@test "zram: load into a hot-added device, same bytes, mountable" {
	local n size sq=$BATS_TEST_TMPDIR/sq
	n=$(new_zram)
	rb load "$FIX/sqfs.zst" "/dev/zram$n"
	expect_status 0
	size=$(stat -c %s "$FIX/sqfs.raw")
	[ "$(cat "/sys/block/zram$n/disksize")" -ge "$size" ] || fail "disksize not set"
	cmp -n "$size" "$FIX/sqfs.raw" "/dev/zram$n"
	mkdir -p "$sq"
	track mount "$sq"
	mount -t squashfs -o ro "/dev/zram$n" "$sq"
	diff -r --no-dereference "$FIX/tree" "$sq"
}

@test "zram: xz multi-block and --sha256 into a device" {
	local n
	n=$(new_zram)
	rb load -j2 --sha256="$(cat "$FIX/sqfs.sha256")" "$FIX/sqfs.mb.xz" "/dev/zram$n"
	expect_status 0
	cmp -n "$(stat -c %s "$FIX/sqfs.raw")" "$FIX/sqfs.raw" "/dev/zram$n"
}

@test "zram: failed load resets the device, exit 1" {
	local n f=$BATS_TEST_TMPDIR/bad.zst
	n=$(new_zram)
	cp "$FIX/sqfs.zst" "$f"
	corrupt_byte "$f" $(($(stat -c %s "$f") / 2))
	rb load "$f" "/dev/zram$n"
	assert_load_fail 1
	assert_equal "$(cat "/sys/block/zram$n/disksize")" 0
}

@test "zram: wrong --sha256 resets the device, exit 1" {
	local n
	n=$(new_zram)
	rb load --sha256="$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" "$FIX/sqfs.raw" "/dev/zram$n"
	assert_load_fail 1
	assert_equal "$(cat "/sys/block/zram$n/disksize")" 0
}

@test "zram: a device already initialised is refused and left alone" {
	local n
	n=$(new_zram)
	echo 16M >"/sys/block/zram$n/disksize"
	printf 'keep me' | dd of="/dev/zram$n" conv=notrunc status=none
	rb load "$FIX/sqfs.raw" "/dev/zram$n"
	[ "$status" -ne 0 ] || { show_run; fail "loaded into an initialised zram device"; }
	grep -qE '^ramboot: load: ' <<<"$stderr"
	assert_equal "$(cat "/sys/block/zram$n/disksize")" $((16 * 1024 * 1024))
	assert_equal "$(head -c 7 "/dev/zram$n")" 'keep me'
}

# ---- loop devices ---------------------------------------------------------------

@test "block-device SOURCE (read-only loop): raw image round trip" {
	local dev
	dev=$(new_loop "$FIX/sqfs.raw" -r)
	rb load "$dev" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "block-device SOURCE with --sha256 and --expect-fs" {
	local dev
	dev=$(new_loop "$FIX/sqfs.raw" -r)
	rb load --sha256="$(cat "$FIX/sqfs.sha256")" --expect-fs=squashfs "$dev" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "block-device SOURCE holding a zstd stream padded to 512 bytes is refused" {
	# a loop device rounds down to sectors; the padded stream has trailing
	# zeros after the frame, which is trailing garbage
	local f=$BATS_TEST_TMPDIR/padded.zst dev size
	cp "$FIX/sqfs.zst" "$f"
	size=$(stat -c %s "$f")
	truncate -s $(((size + 1023) / 512 * 512)) "$f"
	dev=$(new_loop "$f" -r)
	rb load "$dev" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "block-device SOURCE --prefetch" {
	local dev
	dev=$(new_loop "$FIX/sqfs.raw" -r)
	cd "$OUT"
	rb load --prefetch "$dev"
	expect_status 0
	assert_no_output_left
}

@test "block-device DEST (loop on a file of the image size)" {
	local dev back=$BATS_TEST_TMPDIR/backing size
	size=$(stat -c %s "$FIX/sqfs.raw")
	truncate -s "$size" "$back"
	dev=$(new_loop "$back")
	rb load "$FIX/sqfs.lzo" "$dev"
	expect_status 0
	cmp -n "$size" "$FIX/sqfs.raw" "$dev"
}

@test "block-device DEST smaller than the image: exit 1" {
	local dev back=$BATS_TEST_TMPDIR/backing
	truncate -s 1M "$back"
	dev=$(new_loop "$back")
	rb load "$FIX/sqfs.zst" "$dev"
	assert_load_fail 1
}

# ---- without privileges -----------------------------------------------------

@test "--tmpfs as an unprivileged user: refused with a message, nothing mounted" {
	command -v setpriv >/dev/null || skip "no setpriv"
	local d
	d=$(mktemp -d /tmp/ramboot-test.XXXXXX)
	track dir "$d"
	chmod 755 "$d"
	cp "$FIX/sqfs.zst" "$d/img.zst"
	mkdir -m 777 "$d/mnt"
	track mount "$d/mnt"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$RAMBOOT_BIN" load --tmpfs="$d/mnt" "$d/img.zst" image
	[ "$status" -ne 0 ] || { show_run; fail "loaded without privileges"; }
	grep -qE '^ramboot: load: ' <<<"$stderr" || { show_run; fail "no error line"; }
	! mounted "$d/mnt" || fail "something is mounted at $d/mnt"
	[ -z "$(ls -A "$d/mnt")" ] || fail "output left in $d/mnt"
}
