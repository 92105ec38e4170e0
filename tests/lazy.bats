#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot lazy: the command line and the loop device checks against fixture
# roots; then, as root on the real kernel, a squashfs image mounted through
# a read-only loop device is copied to RAM and the loop device switched to
# the copy, after which the image file is deleted and every file of the
# mounted tree must still read back identical. The failure cases (wrong
# hash, too little memory, a writable loop device, a stalled source, a
# signal) must leave the loop device on the image and nothing behind.
#
# Every root test cleans up in teardown, also after a failure: the mount,
# the loop device, the tmpfs, a zram device left in use by a switch.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/fault
load helpers/profile

setup_file() {
	local d=$BATS_FILE_TMPDIR
	make_tree "$d/tree"
	mksquashfs "$d/tree" "$d/base.sqfs" -quiet -no-progress -noappend \
		-all-root -no-xattrs -noI -noD -noF -noX >/dev/null
	sha256sum "$d/base.sqfs" | cut -d' ' -f1 >"$d/base.sha256"
	if is_root; then
		faultinj_build
	fi
}

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	IMG=$T/image.sqfs
	cp "$BATS_FILE_TMPDIR/base.sqfs" "$IMG"
	SHA=$(cat "$BATS_FILE_TMPDIR/base.sha256")
	SIZE=$(stat -c %s "$IMG")
	STATUS=$T/status
	LOOP=
	MNT=$T/mnt
	RAM=$T/ram
}

teardown() {
	local _ zid=
	# A loop device set up inside a test's mount namespace.
	if [ -z "$LOOP" ] && [ -s "$T/loopname" ]; then
		LOOP=$(cat "$T/loopname")
	fi
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount "$MNT" || umount -l "$MNT"
	fi
	if [ -n "$LOOP" ] && [ -e "/sys/block/${LOOP#/dev/}/loop" ]; then
		losetup -d "$LOOP"
	fi
	# A switch to zram leaves the device to the loop device: ours to
	# remove once the loop device let go of it.
	if [ -f "$STATUS" ] && grep -qx 'state=switched' "$STATUS" &&
		grep -q '^copy=/dev/zram' "$STATUS"; then
		zid=$(sed -n 's|^copy=/dev/zram||p' "$STATUS")
	fi
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		mountpoint -q "$RAM" 2>/dev/null || break
		umount "$RAM" 2>/dev/null || sleep 0.2
	done
	if mountpoint -q "$RAM" 2>/dev/null; then
		umount -l "$RAM"
	fi
	if [ -n "$zid" ] && [ -e "/sys/block/zram$zid" ]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			echo 1 >"/sys/block/zram$zid/reset" 2>/dev/null && break
			sleep 0.2
		done
		echo "$zid" >/sys/class/zram-control/hot_remove || true
	fi
}

# st KEY: the value of KEY in the status file.
st() {
	sed -n "s/^$1=//p" "$STATUS"
}

require_root() {
	is_root || skip "needs root: loop devices, mounts, LOOP_CHANGE_FD"
}

# attach [rw]: the image on a loop device (read-only unless rw), mounted
# at $MNT as a boot would, with part of it read (in the page cache).
attach() {
	local ro=-r
	[ "${1:-}" = rw ] && ro=
	# Nothing of the image in the page cache yet (written back first:
	# dirty pages are not dropped): the reads below are the boot's.
	sync "$IMG"
	dd if="$IMG" iflag=nocache count=0 status=none
	LOOP=$(losetup $ro --show -f "$IMG")
	mkdir -p "$MNT"
	mount -t squashfs -o ro "$LOOP" "$MNT"
	cat "$MNT/text/file1.txt" >/dev/null
}

backing() {
	cat "/sys/block/${LOOP#/dev/}/loop/backing_file"
}

# The network image is gone: every file must come from the RAM copy.
assert_tree_from_ram() {
	rm -f "$IMG"
	[ ! -e "$IMG" ] || fail "image still there"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	run find "$MNT" -type f -exec cat {} +
	[ "$status" -eq 0 ] || fail "reading the tree failed: $output"
	run diff -r --no-dereference "$BATS_FILE_TMPDIR/tree" "$MNT"
	[ "$status" -eq 0 ] || fail "tree differs: $output"
}

# The failure contract: the loop device still reads the image, the tmpfs
# is gone with the directory made for it, nothing of a copy remains.
assert_nothing_left() {
	[ "$(backing)" = "$IMG" ] || fail "loop device now backed by $(backing)"
	! mountpoint -q "$RAM" || fail "tmpfs left mounted at $RAM"
	[ ! -e "$RAM" ] || fail "$RAM left behind"
	! grep -q " $RAM " /proc/mounts || fail "a mount at $RAM is left"
	[ "$(st state)" = gave-up ] || fail "status state=$(st state)"
}

# --- the command line -------------------------------------------------------

@test "lazy --help lists the options and exit codes" {
	rb lazy --help
	expect_status 0
	assert_output --partial 'Usage: ramboot lazy --image=FILE'
	assert_output --partial '--min-free=SIZE'
	assert_output --partial '--background'
	assert_output --partial 'Exit codes: 0 switched'
	rb help
	assert_output --partial 'lazy'
}

@test "lazy: bad command lines exit 2 and make nothing" {
	rb lazy
	expect_status 2
	[[ $stderr == *"ramboot: lazy: error: --image is required"* ]]
	rb lazy --image="$IMG" --target=disk
	expect_status 2
	rb lazy --image="$IMG" --target=zram --tmpfs="$RAM"
	expect_status 2
	rb lazy --image="$IMG" --sha256=abc
	expect_status 2
	rb lazy --image="$IMG" --tmpfs=relative/dir
	expect_status 2
	rb lazy --image="$IMG" --min-free=lots
	expect_status 2
	rb lazy --image="$IMG" --rate=-1
	expect_status 2
	rb lazy --image="$IMG" extra
	expect_status 2
	[ ! -e "$STATUS" ]
	[ ! -e "$RAM" ]
}

@test "lazy: --wait-loop and --profile on bad command lines exit 2" {
	rb lazy --image="$IMG" --wait-loop=soon
	expect_status 2
	[[ $stderr == *"--wait-loop: 'soon' is not a number of seconds"* ]]
	rb lazy --image="$IMG" --wait-loop=5 --loop=/dev/loop0
	expect_status 2
	[[ $stderr == *"--wait-loop looks for the loop device: not with --loop"* ]]
	rb lazy --image="$IMG" --profile=
	expect_status 2
	[ ! -e "$STATUS" ]
	rb lazy --help
	assert_output --partial '--wait-loop=S'
	assert_output --partial '--profile=FILE'
}

# --- the loop device, against fixture roots -------------------------------------

# fake_loop N BACKING RO SECTORS: /sys/block/loopN in the fixture root $R.
fake_loop() {
	local d=$R/sys/block/loop$1
	mkdir -p "$d/loop"
	echo "$2" >"$d/loop/backing_file"
	echo "$3" >"$d/ro"
	echo "$4" >"$d/size"
	echo 0 >"$d/loop/offset"
	echo 0 >"$d/loop/sizelimit"
	echo "       0        0" >"$d/inflight"
}

fixture_root() {
	R=$(fake_root 4000000)
	mkdir -p "$R/sys/block" "$R/dev"
	export RAMBOOT_ROOT=$R
}

@test "lazy: no loop device backed by the image is an error (exit 1)" {
	fixture_root
	fake_loop 0 /srv/other.img 1 $((SIZE / 512))
	rb lazy --image="$IMG" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"ramboot: lazy: error: no loop device is backed by $IMG"* ]]
	[ "$(st gave_up)" = loop ]
	[ ! -e "$R/run/ramboot/ram" ]
}

@test "lazy: --rate and --min-free take the units; the status file says bytes per second" {
	fixture_root
	fake_loop 0 /srv/other.img 1 $((SIZE / 512))
	rb lazy --image="$IMG" --status="$STATUS" --rate=100Mbit --min-free=256MiB
	expect_status 1
	[[ $stderr != *warning* ]]
	[ "$(st max_bytes_per_second)" = 12500000 ]
	rb lazy --image="$IMG" --status="$STATUS" --rate=12MiB/s --min-free=1G
	expect_status 1
	[ "$(st max_bytes_per_second)" = 12582912 ]
}

@test "lazy: the old --rate and --min-free spellings are bytes still, with a warning each" {
	fixture_root
	fake_loop 0 /srv/other.img 1 $((SIZE / 512))
	rb lazy --image="$IMG" --status="$STATUS" --rate=64M --min-free=268435456
	expect_status 1
	[[ $stderr == *"ramboot: lazy: warning: --rate=64M: deprecated spelling, write --rate=64MiB/s"* ]]
	[[ $stderr == *"ramboot: lazy: warning: --min-free=268435456: deprecated spelling, write --min-free=268435456B"* ]]
	[ "$(st max_bytes_per_second)" = 67108864 ]
	rb lazy --image="$IMG" --status="$STATUS" --rate=500m
	expect_status 1
	[[ $stderr == *"write --rate=500MiB/s"* ]]
	[ "$(st max_bytes_per_second)" = 524288000 ]
}

@test "lazy: ambiguous --rate and sizes that are no sizes exit 2 and make nothing" {
	rb lazy --image="$IMG" --status="$STATUS" --rate=12MB/s
	expect_status 2
	[[ $stderr == *"--rate: '12MB/s' is ambiguous"* ]]
	rb lazy --image="$IMG" --status="$STATUS" --rate=100Mbps
	expect_status 2
	rb lazy --image="$IMG" --status="$STATUS" --min-free=12MB/s
	expect_status 2
	[[ $stderr == *"--min-free: '12MB/s' is not a size"* ]]
	rb lazy --image="$IMG" --status="$STATUS" --min-free=1.5
	expect_status 2
	[ ! -e "$STATUS" ]
}

@test "lazy: several loop devices backed by the image are refused" {
	fixture_root
	fake_loop 0 "$IMG" 1 $((SIZE / 512))
	fake_loop 3 "$IMG" 1 $((SIZE / 512))
	rb lazy --image="$IMG" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"several loop devices are backed by $IMG (loop"*"--loop"* ]]
}

@test "lazy: a writable loop device is refused before anything is made" {
	fixture_root
	fake_loop 2 "$IMG" 0 $((SIZE / 512))
	rb lazy --image="$IMG" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"/dev/loop2: not read-only"* ]]
	[ "$(st state)" = gave-up ]
	[ ! -e "$R/run/ramboot/ram" ]
}

@test "lazy: a loop device of another size is refused" {
	fixture_root
	fake_loop 1 "$IMG" 1 $((SIZE / 512 - 8))
	rb lazy --image="$IMG" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"/dev/loop1: $((SIZE / 512 - 8)) sectors, but $IMG gives $((SIZE / 512))"* ]]
}

@test "lazy: the status file defaults to /run/ramboot/lazy below the root prefix" {
	fixture_root
	fake_loop 0 /srv/other.img 1 8
	rb lazy --image="$IMG"
	expect_status 1
	grep -qx 'state=gave-up' "$R/run/ramboot/lazy"
	grep -qx "image=$IMG" "$R/run/ramboot/lazy"
}

@test "lazy: IMAGE.profile of the image is used, another image's is not, 'none' turns it off" {
	fixture_root
	fake_loop 0 /srv/other.img 1 8
	# IMAGE.profile beside the image: taken by default.
	write_profile "$IMG.profile" "$IMG" 0 8192
	rb lazy --image="$IMG" --status="$STATUS"
	expect_status 1
	[ "$(st profile)" = used ]
	[ "$(st profile_file)" = "$IMG.profile" ]
	# --profile=none: not even looked at.
	rb lazy --image="$IMG" --status="$STATUS" --profile=none
	[ "$(st profile)" = none ]
	[ -z "$(st profile_file)" ]
	# Another image's profile (one byte differs): not applied.
	cp "$IMG" "$T/other"
	printf 'X' | dd of="$T/other" bs=1 seek=100 conv=notrunc status=none
	write_profile "$T/other.profile" "$T/other" 0 8192
	rb lazy --image="$IMG" --status="$STATUS" --profile="$T/other.profile"
	[ "$(st profile)" = mismatch ]
	[ "$(st profile_file)" = "$T/other.profile" ]
	[[ $stderr == *"profile $T/other.profile was not recorded on $IMG; copying in offset order"* ]]
	# Only the image-sha256 of --sha256 in common: used; with another one, not.
	printf 'ramboot-profile 1\nimage-size %s\nimage-sha256 %s\npage-size 4096\n' \
		"$SIZE" "$SHA" >"$T/sha.profile"
	rb lazy --image="$IMG" --status="$STATUS" --profile="$T/sha.profile" --sha256="$SHA"
	[ "$(st profile)" = used ]
	rb lazy --image="$IMG" --status="$STATUS" --profile="$T/sha.profile"
	[ "$(st profile)" = mismatch ]
	# A profile that does not parse: said so, never a reason to stop.
	echo 'ramboot-profile 9' >"$T/bad.profile"
	rb lazy --image="$IMG" --status="$STATUS" --profile="$T/bad.profile"
	[ "$(st profile)" = error ]
	[ "$(st gave_up)" = loop ]
	# A directory named IMAGE.profile is no profile.
	rm "$IMG.profile"
	mkdir "$IMG.profile"
	rb lazy --image="$IMG" --status="$STATUS"
	[ "$(st profile)" = none ]
}

# --- the real kernel --------------------------------------------------------

@test "lazy: tmpfs copy, switch, the image deleted: every file reads back identical" {
	require_root
	attach
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" --sha256="$SHA"
	expect_status 0
	[[ $stderr == *"$LOOP now reads $RAM/image.sqfs"* ]]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	cmp "$BATS_FILE_TMPDIR/base.sqfs" "$RAM/image.sqfs"
	[ "$(stat -c %s "$RAM/image.sqfs")" = "$SIZE" ]
	# The timeline.
	[ "$(st state)" = switched ]
	[ "$(st hash)" = ok ]
	[ "$(st sha256)" = "$SHA" ]
	[ "$(st size)" = "$SIZE" ]
	[ "$(st loop)" = "$LOOP" ]
	[ "$(st target)" = tmpfs ]
	[ "$(st copy)" = "$RAM/image.sqfs" ]
	[ -z "$(st gave_up)" ]
	[[ $(st started) =~ ^[0-9]+\.[0-9]+$ ]]
	[[ $(st verified) =~ ^[0-9]+\.[0-9]+$ ]]
	[[ $(st switched) =~ ^[0-9]+\.[0-9]+$ ]]
	# What the boot read came from the page cache; all bytes counted once.
	[ "$(st bytes_cached)" -gt 0 ]
	[ "$(st bytes_network)" -gt 0 ]
	[ $(($(st bytes_cached) + $(st bytes_network))) -eq "$SIZE" ]
	assert_tree_from_ram
}

@test "lazy: network reads wait while the boot's reads are in flight, page cache reads do not" {
	require_root
	attach
	# The real loop device, seen through a fixture /sys whose inflight
	# counters the test sets: the boot has a read waiting.
	fixture_root
	local n=${LOOP#/dev/loop} _ pid
	fake_loop "$n" "$IMG" 1 $((SIZE / 512))
	mkdir -p "$R/sys/dev/block"
	ln -s "../../block/loop$n" "$R/sys/dev/block/$(cat "/sys/block/loop$n/dev")"
	echo "       1        0" >"$R/sys/block/loop$n/inflight"
	"$RAMBOOT_BIN" lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" \
		2>"$T/err" &
	pid=$!
	for _ in $(seq 1 100); do
		[ "$(st yields 2>/dev/null)" -gt 0 ] 2>/dev/null && break
		sleep 0.1
	done
	[ "$(st yields)" -gt 0 ] || fail "no back-off seen: $(cat "$STATUS")"
	[ "$(st state)" = copying ]
	[ "$(st bytes_network)" -eq 0 ]
	[ "$(st bytes_cached)" -gt 0 ]
	# The boot's read is done: the copy goes on.
	echo "       0        0" >"$R/sys/block/loop$n/inflight"
	wait "$pid" || fail "exit $?: $(cat "$T/err")"
	[ "$(st state)" = switched ]
	[ "$(st bytes_network)" -gt 0 ]
	[ $(($(st bytes_cached) + $(st bytes_network))) -eq "$SIZE" ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
}

@test "lazy: finds the loop device by its backing file" {
	require_root
	attach
	rb lazy --image="$IMG" --tmpfs="$RAM" --status="$STATUS"
	expect_status 0
	[ "$(st loop)" = "$LOOP" ]
	[ "$(st hash)" = none ]
	[ "$(st sha256)" = "$SHA" ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	assert_tree_from_ram
}

@test "lazy: a wrong --sha256 gives up, frees the copy, stays on the image (exit 1)" {
	require_root
	attach
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" \
		--sha256="$(printf '0%.0s' {1..64})"
	expect_status 1
	[[ $stderr == *"ramboot: lazy: error: $IMG: SHA-256 mismatch"*"$LOOP stays on $IMG"* ]]
	assert_nothing_left
	[ "$(st gave_up)" = hash-mismatch ]
	[ "$(st hash)" = mismatch ]
	[ -z "$(st switched)" ]
	[ -z "$(st verified)" ]
	cmp "$IMG" "$BATS_FILE_TMPDIR/base.sqfs"
}

@test "lazy: a manifest of another size gives up before anything is made" {
	require_root
	attach
	printf 'ramboot-manifest 1\nsize %d\nsha256 %s\n' $((SIZE + 4096)) "$SHA" >"$T/m"
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" --manifest="$T/m"
	expect_status 1
	[[ $stderr == *"the manifest says $((SIZE + 4096))"* ]]
	assert_nothing_left
	[ "$(st gave_up)" = size-mismatch ]
}

@test "lazy: --min-free larger than RAM exits 3 and makes nothing" {
	require_root
	attach
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" --min-free=64T
	expect_status 3
	[[ $stderr == *"ramboot: lazy: error: not enough memory"* ]]
	assert_nothing_left
	[ "$(st gave_up)" = memory ]
}

@test "lazy: a loop device that is not read-only is refused" {
	require_root
	attach rw
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"$LOOP: not read-only; LOOP_CHANGE_FD"* ]]
	assert_nothing_left
	[ "$(st gave_up)" = loop ]
}

@test "lazy: a device that is not a loop device is refused" {
	require_root
	attach
	rb lazy --image="$IMG" --loop=/dev/null --tmpfs="$RAM" --status="$STATUS"
	expect_status 1
	[[ $stderr == *"/dev/null: not a block device"* ]]
	assert_nothing_left
}

@test "lazy: a stalled source gives up after --stall-timeout (exit 1), nothing left" {
	require_root
	faultinj_require_dynamic "$RAMBOOT_BIN"
	attach
	local t0=$SECONDS
	# bounded here: a stall timer that never fires fails, not hangs
	run --separate-stderr faultinj_run 'pread:path=image.sqfs:after=2M:stall' \
		timeout 30 "$RAMBOOT_BIN" lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" \
		--status="$STATUS" --stall-timeout=2
	[ $((SECONDS - t0)) -lt 15 ] || fail "took $((SECONDS - t0)) s"
	expect_status 1
	assert_fault_fired 'call=pread .*action=stall'
	[[ $stderr == *"no data for 2 s (--stall-timeout); the source stalled"* ]]
	assert_nothing_left
	[ "$(st gave_up)" = stall ]
	[ "$(st bytes_network)" -lt "$SIZE" ]
}

@test "lazy: SIGTERM while copying gives up cleanly and dies of the signal" {
	require_root
	faultinj_require_dynamic "$RAMBOOT_BIN"
	attach
	FAULTINJ='pread:path=image.sqfs:after=1M:stall' FAULTINJ_LOG=$(faultinj_log) \
		LD_PRELOAD=$FAULTINJ_SO "$RAMBOOT_BIN" lazy --image="$IMG" --loop="$LOOP" \
		--tmpfs="$RAM" --status="$STATUS" --stall-timeout=0 2>"$T/err" &
	local pid=$!
	faultinj_wait 'action=stall' >/dev/null
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ] || fail "exit $rc, expected death by SIGTERM (143): $(cat "$T/err")"
	grep -q 'interrupted by signal 15' "$T/err"
	assert_nothing_left
	[ "$(st gave_up)" = signal ]
}

@test "lazy: SIGTERM while preparing (the tmpfs just mounted) gives up cleanly" {
	require_root
	faultinj_require_dynamic "$RAMBOOT_BIN"
	attach
	FAULTINJ='mount:path=*/ram:delay_ms=1500' FAULTINJ_LOG=$(faultinj_log) \
		LD_PRELOAD=$FAULTINJ_SO "$RAMBOOT_BIN" lazy --image="$IMG" --loop="$LOOP" \
		--tmpfs="$RAM" --status="$STATUS" 2>"$T/err" &
	local pid=$!
	faultinj_wait 'call=mount' >/dev/null
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ] || fail "exit $rc, expected death by SIGTERM (143): $(cat "$T/err")"
	grep -q 'interrupted by signal 15' "$T/err"
	assert_nothing_left
	[ "$(st gave_up)" = signal ]
}

@test "lazy: zram target with a manifest and a rate cap, the image deleted: reads identical" {
	require_root
	[ -d /sys/class/zram-control ] || skip "no zram-control (zram module missing)"
	attach
	"$RAMBOOT_BIN" manifest -o "$T/m" "$IMG"
	rb lazy --image="$IMG" --loop="$LOOP" --target=zram --status="$STATUS" \
		--manifest="$T/m" --rate=64MiB/s
	expect_status 0
	local dev
	dev=$(st copy)
	[[ $dev == /dev/zram* ]]
	[ "$(backing)" = "$dev" ]
	[ "$(st target)" = zram ]
	[ "$(st hash)" = ok ]
	[ "$(cat "/sys/block/${dev#/dev/}/disksize")" = "$SIZE" ]
	[ $(($(st bytes_cached) + $(st bytes_network))) -eq "$SIZE" ]
	cmp <(head -c "$SIZE" "$dev") "$BATS_FILE_TMPDIR/base.sqfs"
	assert_tree_from_ram
}

@test "lazy: a zram target gives up cleanly on a wrong hash: the device is removed" {
	require_root
	[ -d /sys/class/zram-control ] || skip "no zram-control (zram module missing)"
	attach
	rb lazy --image="$IMG" --loop="$LOOP" --target=zram --status="$STATUS" \
		--sha256="$(printf 'f%.0s' {1..64})"
	expect_status 1
	local dev
	dev=$(st copy)
	[[ $dev == /dev/zram* ]]
	[ "$(backing)" = "$IMG" ]
	[ "$(st gave_up)" = hash-mismatch ]
	# Reset and removed (or, if someone else got its number since, at
	# least not holding our image any more).
	if [ -e "/sys/block/${dev#/dev/}" ]; then
		[ "$(cat "/sys/block/${dev#/dev/}/disksize")" != "$SIZE" ]
	fi
}

@test "lazy --background returns at once; the child switches and reports it" {
	require_root
	attach
	rb lazy --image="$IMG" --tmpfs="$RAM" --status="$STATUS" --sha256="$SHA" --background
	expect_status 0
	[[ $stderr == *"copying $IMG to RAM in the background (pid "* ]]
	local _
	for _ in $(seq 1 300); do
		case $(st state) in switched | gave-up) break ;; esac
		sleep 0.1
	done
	[ "$(st state)" = switched ] || fail "state $(st state): $(cat "$STATUS.log")"
	[ "$(st hash)" = ok ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	# The pid in the status file is the child's, and it exits.
	local pid _
	pid=$(st pid)
	[ "$pid" -gt 0 ]
	for _ in $(seq 1 100); do
		[ -d "/proc/$pid" ] || break
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || break
		sleep 0.1
	done
	grep -q "$LOOP now reads $RAM/image.sqfs" "$STATUS.log"
	assert_tree_from_ram
}

# hidden_run SHA: in a mount namespace of its own, start a background copy
# (reads slowed down so that it is still copying), then hide every path it
# was given and /proc, /sys, /dev, as the initramfs's switch of root does
# for a process left behind; wait for the copier to end. Prints what is
# left mounted at $T/run/ram and whether the directory is still there.
hidden_run() {
	# shellcheck disable=SC2016
	run --separate-stderr unshare -m --propagation private bash -c '
		set -eu
		T=$1 IMG=$2 LOOP=$3 SHA=$4 SO=$5 BIN=$6 LOG=$7
		out=$(FAULTINJ="pread:path=image.sqfs:delay_ms=150" FAULTINJ_LOG=$LOG \
			LD_PRELOAD=$SO "$BIN" lazy --background --image="$IMG" --loop="$LOOP" \
			--tmpfs="$T/run/ram" --status="$T/run/status" --sha256="$SHA" 2>&1)
		echo "$out" >&2
		pid=${out##*pid }
		pid=${pid%%)*}
		mount -t tmpfs hide "$T/run"
		mount -t tmpfs hide /proc
		mount -t tmpfs hide /sys
		mount -t tmpfs hide /dev
		while kill -0 "$pid"; do sleep 0.1; done 2>&-
		umount /proc /sys /dev "$T/run"
		echo "mounted: $(grep -c " $T/run/ram " /proc/self/mounts || true)"
		if [ -e "$T/run/ram" ]; then echo "dir: yes"; else echo "dir: no"; fi
	' _ "$T" "$IMG" "$LOOP" "$1" "$FAULTINJ_SO" "$RAMBOOT_BIN" "$(faultinj_log)"
}

@test "lazy --background: no path is needed once started (switched with all hidden)" {
	require_root
	faultinj_require_dynamic "$RAMBOOT_BIN"
	attach
	mkdir -p "$T/run"
	STATUS=$T/run/status
	hidden_run "$SHA"
	expect_status 0
	[ "$(st state)" = switched ] || fail "state $(st state): $(cat "$STATUS.log")"
	[ "$(st hash)" = ok ]
	assert_fault_fired 'call=pread .*action=delay_ms:150'
	[ "$(backing)" != "$IMG" ]
	assert_line 'mounted: 1'
	assert_tree_from_ram
}

@test "lazy --background: no path is needed to give up either (copy freed, tmpfs gone)" {
	require_root
	faultinj_require_dynamic "$RAMBOOT_BIN"
	attach
	mkdir -p "$T/run"
	STATUS=$T/run/status
	hidden_run "$(printf '0%.0s' {1..64})"
	expect_status 0
	[ "$(st state)" = gave-up ]
	[ "$(st gave_up)" = hash-mismatch ]
	[ "$(backing)" = "$IMG" ]
	assert_line 'mounted: 0'
	assert_line 'dir: no'
	grep -q 'SHA-256 mismatch' "$STATUS.log"
}

# --- the boot profile on the real kernel ---------------------------------------

# pad_image: the image grows by 8 MiB of zeros after the file system (the
# kernel reads only what the superblock counts), so that ranges far from
# both ends, which hashing the image's ends never reads, exist.
pad_image() {
	truncate -s +8M "$IMG"
	SIZE=$(stat -c %s "$IMG")
	SHA=$(sha256sum "$IMG" | cut -d' ' -f1)
}

# drop_image_cache: what the mount read of the image leaves the page cache.
drop_image_cache() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$IMG"
}

@test "lazy: a boot profile's ranges are copied first, in its order, then the rest by offset" {
	require_root
	command -v python3 >/dev/null || skip "no python3"
	pad_image
	attach
	# Three ranges in the padding, not in offset order.
	write_profile "$IMG.profile" "$IMG" 6291456 65536 3145728 32768 4718592 16384
	# Hashing its ends read the image with readahead: only what the
	# copier reads itself is in the page cache now.
	drop_image_cache
	rb lazy -v --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" --sha256="$SHA"
	expect_status 0
	[ "$(st state)" = switched ]
	[ "$(st profile)" = used ]
	[ "$(st profile_file)" = "$IMG.profile" ]
	# The order handed out: the page cache, the profile's three ranges
	# in its order, then only offset order.
	grep -oE 'copy [0-9]+ [0-9]+ \((page cache|profile|offset order)\)' <<<"$stderr" \
		>"$T/order"
	sed -n 's/ (profile)$//p' "$T/order" >"$T/prof"
	printf 'copy %s\n' '6291456 65536' '3145728 32768' '4718592 16384' | diff - "$T/prof"
	run awk '/\(offset order\)/ { seq = 1 } seq && !/\(offset order\)/ { print }' "$T/order"
	[ -z "$output" ] || fail "not in offset order after the profile: $output"
	run awk '/\(page cache\)/ && seen { print } /\(profile\)/ { seen = 1 }' "$T/order"
	[ -z "$output" ] || fail "page cache after the profile: $output"
	[ $(($(st bytes_cached) + $(st bytes_network))) -eq "$SIZE" ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	assert_tree_from_ram
}

@test "lazy: another image's profile is not applied; the copy switches in offset order" {
	require_root
	pad_image
	attach
	cp "$IMG" "$T/other"
	printf 'X' | dd of="$T/other" bs=1 seek=$((SIZE - 1)) conv=notrunc status=none
	write_profile "$T/other.profile" "$T/other" 6291456 65536
	rb lazy -v --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" \
		--profile="$T/other.profile"
	expect_status 0
	[ "$(st state)" = switched ]
	[ "$(st profile)" = mismatch ]
	[[ $stderr != *"(profile)"* ]]
	[[ $stderr == *"was not recorded on $IMG"* ]]
	[ "$(backing)" = "$RAM/image.sqfs" ]
	assert_tree_from_ram
}

# --- --wait-loop: started before the loop device exists ------------------------

@test "lazy --wait-loop: started before losetup, switches once the image is mounted and all hidden" {
	require_root
	mkdir -p "$T/srv" "$T/under" "$T/run"
	mv "$IMG" "$T/srv/image.sqfs"
	IMG=$T/srv/image.sqfs
	STATUS=$T/run/status
	# In a mount namespace of its own, as an initramfs: the copier starts,
	# then the image is set up on a loop device and mounted over the
	# directory that holds it (its path is gone), then /proc, /sys, /dev
	# and the run directory are hidden, as after the switch of root.
	# shellcheck disable=SC2016
	run --separate-stderr unshare -m --propagation private bash -c '
		set -eu
		T=$1 IMG=$2 SHA=$3 BIN=$4 TREE=$5
		out=$("$BIN" lazy --background --wait-loop=20 --image="$IMG" \
			--tmpfs="$T/run/ram" --status="$T/run/status" --sha256="$SHA" 2>&1)
		echo "$out" >&2
		pid=${out##*pid }
		pid=${pid%%)*}
		echo "state before: $(sed -n "s/^state=//p" "$T/run/status")"
		mount --bind "$T/srv" "$T/under"
		loop=$(losetup -r --show -f "$IMG")
		echo "$loop" >"$T/loopname"
		mount -t squashfs -o ro "$loop" "$T/srv"
		[ ! -e "$IMG" ]
		cat "$T/srv/text/file1.txt" >/dev/null
		mount -t tmpfs hide /proc
		mount -t tmpfs hide /sys
		mount -t tmpfs hide /dev
		mount -t tmpfs hide "$T/run"
		while kill -0 "$pid"; do sleep 0.1; done 2>&-
		umount /proc /sys /dev "$T/run"
		echo "backing: $(cat "/sys/block/${loop#/dev/}/loop/backing_file")"
		# The network image gone: every file from the RAM copy.
		rm "$T/under/image.sqfs"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		find "$T/srv" -type f -exec cat {} + >/dev/null
		diff -r --no-dereference "$TREE" "$T/srv" && echo "tree: same"
		umount "$T/srv" "$T/under"
	' _ "$T" "$IMG" "$SHA" "$RAMBOOT_BIN" "$BATS_FILE_TMPDIR/tree"
	LOOP=$(cat "$T/loopname")
	expect_status 0
	assert_line 'state before: waiting-loop'
	[ "$(st state)" = switched ] || fail "state $(st state): $(cat "$STATUS.log")"
	[ "$(st loop)" = "$LOOP" ]
	[ "$(st hash)" = ok ]
	assert_line "backing: $T/run/ram/image.sqfs"
	assert_line 'tree: same'
	grep -q "$LOOP now reads $T/run/ram/image.sqfs" "$STATUS.log"
}

@test "lazy --wait-loop: no loop device in time gives up, frees everything" {
	require_root
	rb lazy --background --wait-loop=2 --image="$IMG" --tmpfs="$RAM" --status="$STATUS"
	expect_status 0
	[ "$(st state)" = waiting-loop ]
	mountpoint -q "$RAM" || fail "the tmpfs is made before the wait"
	local pid=${stderr##*pid } _
	pid=${pid%%)*}
	[ "$pid" -gt 0 ]
	for _ in $(seq 1 100); do
		[ "$(st state)" = gave-up ] && break
		sleep 0.1
	done
	[ "$(st state)" = gave-up ] || fail "state $(st state): $(cat "$STATUS.log")"
	[ "$(st gave_up)" = no-loop-device ]
	[ -z "$(st loop)" ]
	grep -q "no loop device backed by $IMG within 2 s (--wait-loop)" "$STATUS.log"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null || fail "the copier is still running"
	! mountpoint -q "$RAM" || fail "tmpfs left mounted at $RAM"
	[ ! -e "$RAM" ] || fail "$RAM left behind"
	! grep -q " $RAM " /proc/mounts || fail "a mount at $RAM is left"
}

# change_fd DEV FILE: LOOP_CHANGE_FD, the loop device now reads FILE.
change_fd() {
	python3 -c 'import fcntl, os, sys
dev = os.open(sys.argv[1], os.O_RDONLY)
new = os.open(sys.argv[2], os.O_RDONLY)
fcntl.ioctl(dev, 0x4C06, new)' "$1" "$2"
}

@test "lazy: the loop device moved to another file during the copy: no switch, gives up, copy freed" {
	require_root
	command -v python3 >/dev/null || skip "no python3"
	# (before attach, which drops the image's pages: the copy must be slow)
	faultinj_require_dynamic "$RAMBOOT_BIN"
	cp "$IMG" "$T/other.sqfs"
	attach
	# Every read of the image slowed down too, page-cache hits included
	# (--rate paces the network reads only): the move comes mid-copy.
	FAULTINJ='pread,read,copy_file_range:path=image.sqfs:delay_ms=30' \
		FAULTINJ_LOG=$(faultinj_log) LD_PRELOAD=$FAULTINJ_SO \
		"$RAMBOOT_BIN" lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" \
		--status="$STATUS" --rate=512K/s 2>"$T/err" &
	local pid=$! rc=0 _
	for _ in $(seq 100); do
		[ "$(st state 2>/dev/null)" = copying ] && break
		sleep 0.1
	done
	[ "$(st state)" = copying ] || { kill "$pid"; wait "$pid"; fail "state=$(st state), not copying"; }
	change_fd "$LOOP" "$T/other.sqfs"
	[ "$(backing)" = "$T/other.sqfs" ]
	wait "$pid" || rc=$?
	[ "$rc" -eq 1 ] || fail "exit $rc, expected 1: $(cat "$T/err")"
	grep -q "$LOOP: no longer backed by the image since the copy started" "$T/err"
	[ "$(st gave_up)" = loop ]
	[ -z "$(st switched)" ]
	[ "$(backing)" = "$T/other.sqfs" ]
	run ! mountpoint -q "$RAM"
	[ ! -e "$RAM" ]
	cmp "$T/other.sqfs" "$IMG"
}

@test "lazy --signed: an unsigned manifest and a tampered one are refused before a copy; a signed one switches" {
	require_root
	"$RAMBOOT_BIN" keygen "$T/lab" >/dev/null
	mkdir -p "$T/keys"
	cp "$T/lab.pub" "$T/keys/"
	"$RAMBOOT_BIN" manifest -o "$T/unsigned.man" "$IMG"
	# another image of the same size, signed; its signature put under
	# the body of this image's manifest
	cp "$IMG" "$T/other.sqfs"
	printf 'X' | dd of="$T/other.sqfs" bs=1 seek=4096 conv=notrunc status=none
	"$RAMBOOT_BIN" manifest -o "$T/other.man" "$T/other.sqfs"
	"$RAMBOOT_BIN" sign --key="$T/lab" "$T/other.man"
	{ cat "$T/unsigned.man"; grep '^signature ' "$T/other.man"; } >"$T/tampered.man"
	attach
	for m in unsigned tampered; do
		rm -f "$STATUS"
		rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" \
			--manifest="$T/$m.man" --signed --keys="$T/keys"
		expect_status 1
		[[ $stderr == *"ramboot: lazy: error: $T/$m.man: "* ]] || fail "$m: $stderr"
		# One category for a manifest that is not signed by a trusted
		# key, as the loader's (LOAD_SIGNATURE): signature.
		[ "$(st gave_up)" = signature ] || fail "$m: gave_up=$(st gave_up)"
		[ -z "$(st signed_by)" ]
		[ -z "$(st switched)" ]
		[ "$(backing)" = "$IMG" ]
		[ ! -e "$RAM" ] || fail "$m: $RAM made"
	done
	cp "$T/unsigned.man" "$T/signed.man"
	"$RAMBOOT_BIN" sign --key="$T/lab" "$T/signed.man"
	rm -f "$STATUS"
	rb lazy --image="$IMG" --loop="$LOOP" --tmpfs="$RAM" --status="$STATUS" \
		--manifest="$T/signed.man" --signed --keys="$T/keys"
	expect_status 0
	[[ $(st signed_by) == "lab "* ]]
	[ "$(st state)" = switched ]
	[ "$(backing)" = "$RAM/image.sqfs" ]
}

@test "lazy: a real loop device of another size than the image (it grew since losetup) is refused" {
	require_root
	attach
	local sectors=$((SIZE / 512))
	truncate -s $((SIZE + 65536)) "$IMG"
	[ "$(cat "/sys/block/${LOOP#/dev/}/size")" -eq "$sectors" ]
	# named, found by its backing file, waited for
	for how in "--loop=$LOOP" "" --wait-loop=2; do
		rm -f "$STATUS"
		# shellcheck disable=SC2086 # none, or one word
		rb lazy --image="$IMG" $how --tmpfs="$RAM" --status="$STATUS"
		expect_status 1
		[[ $stderr == *"$LOOP: $sectors sectors, but $IMG gives $((sectors + 128))"* ]] ||
			fail "${how:-found}: $stderr"
		[ "$(st gave_up)" = loop ] || fail "${how:-found}: gave_up=$(st gave_up)"
		[ -z "$(st switched)" ]
		[ "$(backing)" = "$IMG" ]
		[ ! -e "$RAM" ] || fail "${how:-found}: $RAM made"
	done
}
