#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot verity: the hash file `verity format` writes is the one
# `veritysetup format` writes (veritysetup verifies it, byte for byte the
# same with the same salt and UUID); the command line and its exit codes.
# Then, as root on a kernel with dm-verity, a squashfs image on a
# read-only loop device and its hash file on another one are mapped with
# `verity open`: the mapping reads back the image and mounts; a flipped
# byte in the data is an I/O error on its block only; the data loop device
# switched to another file under the mapping (LOOP_CHANGE_FD) keeps
# reading, verified against the same tree.
#
# Every root test cleans up in teardown, also after a failure: the mount,
# the mapping (verity close, else dmsetup remove), the loop devices.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common

SALT=0123456789abcdef0123456789abcdef

setup_file() {
	local d=$BATS_FILE_TMPDIR
	make_tree "$d/tree"
	mksquashfs "$d/tree" "$d/base.sqfs" -quiet -no-progress -noappend \
		-all-root -no-xattrs -noI -noD -noF -noX >/dev/null
}

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	IMG=$T/image.sqfs
	setup_out
	HASH=$OUT/image.verity
	cp "$BATS_FILE_TMPDIR/base.sqfs" "$IMG"
	MNT=$T/mnt
	NAME=rbtest-verity-$$-$BATS_TEST_NUMBER
	DLOOP=
	HLOOP=
}

teardown() {
	local l
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount "$MNT" || umount -l "$MNT"
	fi
	if [ -e "/dev/mapper/$NAME" ] || { command -v dmsetup >/dev/null &&
		dmsetup info "$NAME" >/dev/null 2>&1; }; then
		"$RAMBOOT_BIN" verity close "$NAME" || dmsetup remove "$NAME" || true
		rm -f "/dev/mapper/$NAME"
	fi
	for l in $DLOOP $HLOOP; do
		if [ -e "/sys/block/${l#/dev/}/loop" ]; then
			losetup -d "$l"
		fi
	done
}

require_veritysetup() {
	command -v veritysetup >/dev/null || skip "no veritysetup (apt-get install cryptsetup-bin)"
}

# Root and a kernel with device-mapper and its verity target.
require_dm_verity() {
	is_root || skip "needs root: loop devices, device-mapper, mounts"
	command -v dmsetup >/dev/null || skip "no dmsetup (apt-get install dmsetup)"
	modprobe dm-verity 2>/dev/null || true
	dmsetup version >/dev/null 2>&1 || skip "no device-mapper in this kernel"
	dmsetup targets 2>/dev/null | grep -q '^verity ' || skip "no dm_verity module in this kernel"
}

# format [ARGS]: verity format IMG HASH --export; sets ROOT and VSALT.
format() {
	rb verity format --export "$@" "$IMG" "$HASH"
	expect_status 0
	ROOT=$(sed -n 's/^VERITY_ROOT_HASH=//p' <<<"$output")
	VSALT=$(sed -n 's/^VERITY_SALT=//p' <<<"$output")
	[ ${#ROOT} -eq 64 ] || fail "no root hash in: $output"
}

# attach: the image and its hash file on read-only loop devices.
attach() {
	DLOOP=$(losetup -r --show -f "$IMG")
	HLOOP=$(losetup -r --show -f "$HASH")
}

# LOOP_CHANGE_FD of loop device $1 to the file $2 (what ramboot lazy does).
change_fd() {
	python3 -c 'import fcntl, os, sys
loop = os.open(sys.argv[1], os.O_RDONLY)
new = os.open(sys.argv[2], os.O_RDONLY)
fcntl.ioctl(loop, 0x4C06, new)  # LOOP_CHANGE_FD' "$1" "$2"
}

# read_block DEV N: read block N (4096 bytes) of DEV past the page cache.
read_block() {
	dd if="$1" of=/dev/null bs=4096 skip="$2" count=1 iflag=direct status=none
}

@test "verity format: veritysetup verify accepts the hash file, and finds a changed byte" {
	require_veritysetup
	format
	veritysetup verify "$IMG" "$HASH" "$ROOT"
	run veritysetup verify "$IMG" "$HASH" "$(printf '%064d' 0)"
	[ "$status" -ne 0 ]
	corrupt_byte "$IMG" $((5 * 4096 + 100))
	run veritysetup verify "$IMG" "$HASH" "$ROOT"
	[ "$status" -ne 0 ]
}

@test "verity format: the hash file veritysetup format writes, byte for byte (same salt and UUID)" {
	require_veritysetup
	local uuid
	format --salt="$SALT"
	[ "$VSALT" = "$SALT" ]
	uuid=$(blkid -p -s UUID -o value "$HASH")
	[ -n "$uuid" ] || fail "blkid finds no UUID in the hash file"
	veritysetup format --hash=sha256 --data-block-size=4096 --hash-block-size=4096 \
		--salt="$SALT" --uuid="$uuid" "$IMG" "$T/theirs" >"$T/theirs.out"
	grep -q "^Root hash:[[:space:]]*$ROOT\$" "$T/theirs.out" || fail "$(cat "$T/theirs.out")"
	cmp "$HASH" "$T/theirs"
	# The same image and salt: the same file again.
	rm "$HASH"
	format --salt="$SALT"
	cmp "$HASH" "$T/theirs"
	# No salt at all.
	format --salt=- -f
	[ "$VSALT" = - ]
	veritysetup verify "$IMG" "$HASH" "$ROOT"
}

@test "verity format: output, human and --export" {
	local blocks
	blocks=$(($(stat -c %s "$IMG") / 4096))
	rb verity format "$IMG" "$HASH"
	expect_status 0
	[[ "${lines[0]}" =~ ^root\ hash:\ +[0-9a-f]{64}$ ]]
	[[ "${lines[1]}" =~ ^salt:\ +[0-9a-f]{64}$ ]]
	[ "${lines[2]}" = "data blocks: $blocks of 4096 bytes" ]
	[ "${lines[3]}" = "hash file:   $(stat -c %s "$HASH") bytes" ]
	[ -z "$stderr" ]
	rb verity format --export --salt=AB -f "$IMG" "$HASH"
	expect_status 0
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[0]}" =~ ^VERITY_ROOT_HASH=[0-9a-f]{64}$ ]]
	[ "${lines[1]}" = VERITY_SALT=ab ]
	[ "${lines[2]}" = "VERITY_DATA_BLOCKS=$blocks" ]
	[ "${lines[3]}" = "VERITY_HASH_SIZE=$(stat -c %s "$HASH")" ]
	# A random salt each time: another root hash.
	rb verity format --export -f "$IMG" "$HASH"
	[[ "${lines[1]}" =~ ^VERITY_SALT=[0-9a-f]{64}$ ]]
}

@test "verity format: an image that is not whole 4096-byte blocks is refused, nothing written (exit 1)" {
	printf 'x' >>"$IMG"
	rb verity format "$IMG" "$HASH"
	expect_status 1
	[[ "$stderr" == *"not a whole number of 4096-byte blocks"* ]]
	[ ! -e "$HASH" ]
	: >"$T/empty"
	rb verity format "$T/empty" "$HASH"
	expect_status 1
	assert_no_output_left
}

@test "verity format: runtime errors exit 1 and keep what was there" {
	rb verity format "$T/missing" "$HASH"
	expect_status 1
	[[ "$stderr" == "ramboot: verity: error: $T/missing: No such file or directory" ]]
	echo old >"$HASH"
	rb verity format "$IMG" "$HASH"
	expect_status 1
	[ "$(cat "$HASH")" = old ]
	ln -s "$HASH" "$T/link"
	rb verity format -f "$IMG" "$T/link"
	expect_status 1
	[ "$(cat "$HASH")" = old ]
	rb verity format -f "$IMG" "$IMG"
	expect_status 1
	cmp "$IMG" "$BATS_FILE_TMPDIR/base.sqfs"
	rb verity format -f "$IMG" "$HASH"
	expect_status 0
	[ "$(stat -c %s "$HASH")" -gt 4096 ]
}

@test "verity: usage errors exit 2" {
	local r
	r=$(printf '%064d' 0)
	for args in "" "bogus" "format" "format $IMG" "format $IMG $HASH extra" \
		"format --salt=abc $IMG $HASH" "format --salt=xy $IMG $HASH" \
		"format --salt=$(printf '%0514d' 0) $IMG $HASH" "format --bogus $IMG $HASH" \
		"open" "open a b $r" "open a b $r name extra" "open a b 1234 name" \
		"open a b ${r}0 name" "open a b ${r%0}g name" "open a b $r .name" \
		"open a b $r na/me" "open a b $r $(printf '%0128d' 0)" "open --salt=q a b $r name" \
		"close" "close a b" "close ../x"; do
		# shellcheck disable=SC2086 # one word per argument
		rb verity $args
		if [ "$status" -ne 2 ]; then
			show_run
			fail "verity $args: exit $status, expected 2"
		fi
		[[ "$stderr" == *"see 'ramboot verity --help'"* ]]
	done
	[ ! -e "$HASH" ]
	rb verity --help
	expect_status 0
	[[ "$output" == *"ramboot verity format"* ]]
	rb verity open --help
	expect_status 0
	rb help
	[[ "$output" == *"verity "* ]]
}

@test "verity open: devices that are not block devices, or no device-mapper (exit 1)" {
	local root r
	format
	rb verity open "$IMG" "$HASH" "$ROOT" name
	expect_status 1
	[[ "$stderr" == *"$IMG: not a block device"* ]]
	# close: /dev/mapper/control below the root prefix is missing.
	root=$T/root
	mkdir -p "$root/dev/mapper"
	run --separate-stderr env RAMBOOT_ROOT="$root" "$RAMBOOT_BIN" verity close name
	expect_status 1
	[[ "$stderr" == *"$root/dev/mapper/control"*"no device-mapper"* ]]
	# A character device is no block device either.
	r=$(printf '%064d' 0)
	rb verity open /dev/null /dev/null "$r" name
	expect_status 1
	[[ "$stderr" == *"/dev/null: not a block device"* ]]
}

@test "verity open (root): the mapping reads back the image and mounts; close removes it" {
	require_dm_verity
	format --salt="$SALT"
	attach
	rb verity open "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 0
	[ "$output" = "/dev/mapper/$NAME" ]
	[ -b "/dev/mapper/$NAME" ]
	[ "$(blockdev --getro "/dev/mapper/$NAME")" = 1 ]
	[ "$(blockdev --getsize64 "/dev/mapper/$NAME")" = "$(stat -c %s "$IMG")" ]
	# The table: the loop devices by major:minor, the tree after the
	# superblock's block.
	dmsetup table "$NAME" >"$T/table"
	read -r _ _ target ver data hash _ _ blocks start alg digest salt <"$T/table"
	[ "$target $ver $alg $digest $salt $start" = "verity 1 sha256 $ROOT $SALT 1" ]
	[ "$data" = "$(lsblk -dno MAJ:MIN "$DLOOP" | tr -d ' ')" ]
	[ "$hash" = "$(lsblk -dno MAJ:MIN "$HLOOP" | tr -d ' ')" ]
	[ "$blocks" = $(($(stat -c %s "$IMG") / 4096)) ]
	cmp "/dev/mapper/$NAME" "$IMG"
	mkdir -p "$MNT"
	mount -t squashfs -o ro "/dev/mapper/$NAME" "$MNT"
	diff -r --no-dereference "$BATS_FILE_TMPDIR/tree" "$MNT"
	# Mounted: close refuses, and the mapping stays.
	rb verity close "$NAME"
	expect_status 1
	[[ "$stderr" == *"in use"* ]]
	[ -b "/dev/mapper/$NAME" ]
	umount "$MNT"
	rb verity close "$NAME"
	expect_status 0
	[ ! -e "/dev/mapper/$NAME" ]
	run dmsetup info "$NAME"
	[ "$status" -ne 0 ]
	rb verity close "$NAME"
	expect_status 1
	[[ "$stderr" == *"no such mapping"* ]]
}

@test "verity open (root): a wrong root hash, salt or hash device is refused before any mapping" {
	require_dm_verity
	local bad
	format
	attach
	bad=$(printf '%s' "$ROOT" | tr '0-9a-f' '1-9a-f0')
	rb verity open "$DLOOP" "$HLOOP" "$bad" "$NAME"
	expect_status 1
	[[ "$stderr" == *"root hash is not the one of this hash tree"* ]]
	rb verity open --salt="$SALT" "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 1
	[[ "$stderr" == *"salt is not the one given"* ]]
	# The data device as the hash device: no superblock.
	rb verity open "$DLOOP" "$DLOOP" "$ROOT" "$NAME"
	expect_status 1
	[[ "$stderr" == *"no verity superblock"* ]]
	run dmsetup info "$NAME"
	[ "$status" -ne 0 ]
	[ ! -e "/dev/mapper/$NAME" ]
	# The right salt is taken; a name in use is refused.
	rb verity open --salt="$VSALT" "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 0
	rb verity open "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 1
	[[ "$stderr" == *"a mapping of that name exists"* ]]
	[ -b "/dev/mapper/$NAME" ]
}

@test "verity open (root): a flipped byte in the data is an I/O error on its block only" {
	require_dm_verity
	format
	corrupt_byte "$IMG" $((5 * 4096 + 100))
	attach
	rb verity open "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 0
	read_block "/dev/mapper/$NAME" 4
	read_block "/dev/mapper/$NAME" 6
	run --separate-stderr read_block "/dev/mapper/$NAME" 5
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Input/output error"* ]]
	run cmp "/dev/mapper/$NAME" "$IMG"
	[ "$status" -ne 0 ]
}

@test "verity open (root): LOOP_CHANGE_FD of the data loop device under the mapping keeps it reading, verified" {
	require_dm_verity
	command -v python3 >/dev/null || skip "no python3"
	format
	attach
	rb verity open "$DLOOP" "$HLOOP" "$ROOT" "$NAME"
	expect_status 0
	mkdir -p "$MNT"
	mount -t squashfs -o ro "/dev/mapper/$NAME" "$MNT"
	cat "$MNT/text/file1.txt" >/dev/null
	# An identical copy (the RAM copy of a lazy boot), the image gone:
	# every read now comes from the copy, through the same tree.
	cp "$IMG" "$T/copy.sqfs"
	change_fd "$DLOOP" "$T/copy.sqfs"
	[ "$(cat "/sys/block/${DLOOP#/dev/}/loop/backing_file")" = "$T/copy.sqfs" ]
	rm "$IMG"
	# Nothing of the tree cached above the mapping: mounted again.
	umount "$MNT"
	blockdev --flushbufs "/dev/mapper/$NAME"
	mount -t squashfs -o ro "/dev/mapper/$NAME" "$MNT"
	diff -r --no-dereference "$BATS_FILE_TMPDIR/tree" "$MNT"
	cmp "/dev/mapper/$NAME" "$BATS_FILE_TMPDIR/base.sqfs"
	# A copy with one byte changed under the mapping: that block fails.
	cp "$T/copy.sqfs" "$T/bad.sqfs"
	corrupt_byte "$T/bad.sqfs" $((5 * 4096 + 100))
	change_fd "$DLOOP" "$T/bad.sqfs"
	read_block "/dev/mapper/$NAME" 4
	run read_block "/dev/mapper/$NAME" 5
	[ "$status" -ne 0 ]
	umount "$MNT"
	rb verity close "$NAME"
	expect_status 0
}
