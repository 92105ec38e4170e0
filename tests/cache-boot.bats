#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot` with ramboot.cache= (docs/cache.md, "At boot"), as root,
# on real loop devices: a cache made by `ramboot cache init` and
# `refresh` on a loop device over a file; the fixture root ($RAMBOOT_ROOT)
# holds proc/cmdline, the "server's" image under root/images/, and dev
# and sys as links to the real ones. A hit boots from a read-only loop
# device over the active slot without opening the image (the fault
# shim logs every open of it); a miss boots from the network and
# refreshes the cache behind the boot; a cache that cannot be used (a
# corrupt state, a label nobody carries, a device that is not a cache)
# is a fallback that leaves the device untouched and nothing attached.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/fault

setup_file() {
	local d=$BATS_FILE_TMPDIR i
	faultinj_build
	mkdir -p "$d/tree"
	for i in 1 2 3; do
		seq -f "file $i: line %g, text that compresses" 1 20000 >"$d/tree/text$i.txt"
		head -c 300000 /dev/urandom >"$d/tree/data$i.bin"
	done
	mkdir -p "$d/tree/etc" "$d/tree/sbin"
	echo cached >"$d/tree/etc/marker"
	cp -a "$d/tree" "$d/tree2"
	head -c 100000 /dev/urandom >"$d/tree2/data2.bin"
	echo rebuilt >"$d/tree2/etc/marker"
	mksquashfs "$d/tree" "$d/a.img" -quiet -no-progress -noappend >/dev/null
	mksquashfs "$d/tree2" "$d/b.img" -quiet -no-progress -noappend >/dev/null
	# a.img's size, one byte of a file's data changed: another image
	cp "$d/a.img" "$d/a2.img"
	printf '\x5a' | dd of="$d/a2.img" bs=1 seek=200000 conv=notrunc status=none
}

setup() {
	require_loader
	is_root || skip "needs root (loop devices, mounts)"
	T=$BATS_TEST_TMPDIR
	D=$BATS_FILE_TMPDIR
	R=$T/root
	IMG=$R/root/images/x.img
	LOOPS=()
	mkdir -p "$R/proc" "$R/root/images" "$R/etc"
	ln -s /dev "$R/dev"
	ln -s /sys "$R/sys"
	: >"$R/proc/cmdline"
	serve "$D/a.img"
}

# Nothing of a test stays, even when it failed: the loop devices the
# boot made over a slot, the cache's own, the refresh behind the boot.
teardown() {
	local l
	wait_refresh || true
	# a refresh behind a hit may still be asking the server
	kill_env "RAMBOOT_ROOT=$R" >/dev/null
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT"; fi
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram" || umount -l "$R/run/ramboot/ram"
	fi
	[ -z "${CACHE:-}" ] || losetup -d "$CACHE" 2>/dev/null || true
}

# The image the "server" publishes, with its manifest.
serve() { # squashfs
	cp "$1" "$IMG"
	"$RAMBOOT_BIN" manifest "$IMG" >"$IMG.manifest"
}

# A cache on a loop device over a 64 MiB file: $CACHE.
make_cache() {
	truncate -s 64M "$T/cache.img"
	CACHE=$(losetup -f --show "$T/cache.img")
	"$RAMBOOT_BIN" cache init "$CACHE" >/dev/null
}

refresh() {
	"$RAMBOOT_BIN" cache refresh --cache="$CACHE" --manifest="$IMG.manifest" "$IMG" >/dev/null
}

# `ramboot boot` in the fixture root, the rules of $FI first (one rule
# fires per call: the first), then every open of the image and of its
# manifest logged by the fault shim (rules without an action).
rb() {
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ="${FI:+$FI;}open:path=*/root/images/x.img;open:path=*/root/images/x.img.manifest" \
		FAULTINJ_LOG="$T/opens.log" LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot "$@"
	local l
	l=$(report cache_image)
	[ -z "$l" ] || LOOPS+=("/dev/${l##*/}")
}

report() { # key -> value
	sed -n "s/^$1=//p" "$R/run/ramboot/report" 2>/dev/null
}

# The network image on a read-only loop device, as the hook mounts it
# (losetup -r): $HOOKLOOP, the one a switch moves onto the slot.
hook_loop() {
	HOOKLOOP=$(losetup -r -f --show "$IMG")
	LOOPS+=("$HOOKLOOP")
}

# The switch after the refresh was done or given up (bounded: 60 s).
wait_switch() {
	local i
	for i in $(seq 1 600); do
		[ -n "$(report cache_switched)" ] && return 0
		[ -n "$(report cache_switch_error)" ] && return 0
		[ -n "$(report cache_error)" ] && return 0
		sleep 0.1
	done
	return 1
}

# The refresh behind the boot has ended (bounded: 60 s).
wait_refresh() {
	local i
	for i in $(seq 1 600); do
		[ -e "$R/run/ramboot/report" ] || return 0
		[ "$(report cache)" != miss ] && return 0
		[ -n "$(report cache_error)" ] && return 0
		sleep 0.1
	done
	return 1
}

# The opens of the image the shim logged; "none logged" is only trusted
# when the shim was loaded and saw the manifest opened (else: "no shim").
opens_of_image() {
	if ! grep -qE '^faultinj pid=[0-9]+ loaded prog=ramboot rules=' "$T/opens.log" 2>/dev/null ||
		! grep -q 'call=open .*/root/images/x\.img\.manifest action=' "$T/opens.log"; then
		echo "no shim, or it saw no manifest opened" >&2
		echo "no shim"
		return 0
	fi
	grep -c 'call=open .*/root/images/x\.img action=' "$T/opens.log" || true
}

# No loop device over a slot of the cache, and only ours over its file.
nothing_attached() {
	run losetup -a
	refute_output --partial '/images/x.img/'
	run losetup -j "$T/cache.img"
	assert_output --partial "$CACHE"
	[ "$(losetup -j "$T/cache.img" | wc -l)" -eq 1 ]
}

@test "cache hit: a read-only loop device over the active slot; the image is never opened" {
	make_cache
	refresh
	rb --cmdline="ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	loop=$(report cache_image)
	assert_output "RAMBOOT_IMAGE=$loop"
	[ "$(report cache)" = hit ]
	[ "$(report mode_done)" = cache ]
	[ "$(report cache_slot)" = a ]
	[ "$(report cache_generation)" = 1 ]
	[ "$(report cache_verified)" = refresh ]
	[ "$(report fstype)" = squashfs ]
	[ "$(report fallback)" = "" ]
	[ "$(report cache_device)" = "$R$CACHE" ]
	# the loop device: read-only, over the slot
	run cat "/sys/block/${loop##*/}/ro"
	assert_output 1
	run cat "/sys/block/${loop##*/}/loop/backing_file"
	assert_output /images/x.img/a
	[ "$(opens_of_image)" -eq 0 ]
	# the slot is the image, byte for byte
	cmp "$loop" "$D/a.img"
	[[ "$stderr" == *"booting from the local cache"* ]]
	run env RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_line --index 0 "ramboot: running from the local cache (slot a of $R$CACHE, generation 1, verified when it was written)"
}

@test "RAMBOOT_CACHE alone (ltsp.conf) asks for the cache: a hit" {
	make_cache
	refresh
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" RAMBOOT_CACHE="$CACHE" \
		"$RAMBOOT_BIN" boot --cmdline="ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report mode_asked)" = cache ]
	[ "$(report cache)" = hit ]
	LOOPS+=("/dev/$(report cache_image | sed 's,.*/,,')")
	assert_output "RAMBOOT_IMAGE=$(report cache_image)"
}

@test "the hook hands the slot back (--drop): its loop device goes" {
	make_cache
	refresh
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	loop=$(report cache_image)
	[ -b "$loop" ]
	run env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --drop="$loop" --reason="cannot mount the RAM copy"
	assert_success
	[ "$(report cache)" = fallback ]
	[ "$(report cache_image)" = "" ]
	[ "$(report mode_done)" = off ]
	nothing_attached
}

@test "cache miss: the network image, the refresh behind the boot, then a hit on the other slot" {
	make_cache
	refresh
	serve "$D/b.img"
	hook_loop
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report mode_done)" = cache ]
	# (the slot and generation the boot found, a and 1, may already be
	# the refresh's by now: it runs behind the boot and amends them)
	wait_refresh
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
	[ "$(report cache_generation)" = 2 ]
	[ "$(report cache_error)" = "" ]
	[ "$(report cache_bytes_local)" -gt 0 ]
	[ "$(report cache_bytes_network)" -gt 0 ]
	# the refresh read the image: the shim saw it opened
	[ "$(opens_of_image)" -gt 0 ]
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_success
	assert_line "generation: 2"
	assert_line "active: b"
	: >"$T/opens.log"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	[ "$(report cache_slot)" = b ]
	[ "$(opens_of_image)" -eq 0 ]
	cmp "$(report cache_image)" "$D/b.img"
}

@test "cache miss: the refresh reads the content-addressed image the manifest names, not IMAGE being rebuilt" {
	make_cache
	refresh
	cp "$D/b.img" "$IMG"
	"$RAMBOOT_BIN" publish --content-addressed "$IMG" >/dev/null
	# The next rebuild has replaced IMAGE, its manifest not published
	# yet: the manifest still names b's bytes, IMAGE holds others.
	cp "$D/a.img" "$IMG.new"
	mv "$IMG.new" "$IMG"
	hook_loop
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	wait_refresh
	[ "$(report cache_error)" = "" ]
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
	# never a switch onto other bytes than the root's: the slot is not
	# the running image's size
	wait_switch
	[ -z "$(report cache_switched)" ]
	[[ "$(report cache_switch_error)" == "the slot is of $(stat -c %s "$D/b.img") bytes, the image of $(stat -c %s "$D/a.img")" ]]
	# kept under the image's own name: the next boot hits
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	cmp "$(report cache_image)" "$D/b.img"
}

@test "an empty cache: a miss, and the refresh fills slot a" {
	make_cache
	hook_loop
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	wait_refresh
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = a ]
	[ "$(report cache_generation)" = 1 ]
}

@test "a corrupt state: a fallback, the network image, nothing attached, no refresh" {
	make_cache
	refresh
	mkdir "$T/m"
	mount "$CACHE" "$T/m"
	sed -i 's/^generation 1$/generation 9/' "$T/m/images/x.img/state"
	umount "$T/m"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache)" = fallback ]
	[ "$(report fallback)" = "cache unusable" ]
	[ "$(report mode_done)" = off ]
	[[ "$(report error)" == *"state of x.img"* ]]
	[[ "$stderr" == *"booting from the network image"* ]]
	nothing_attached
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line "state: corrupt"
}

@test "a label nobody carries: a fallback, nothing opened but by probing" {
	make_cache
	rb --cmdline="ramboot=cache ramboot.cache=LABEL=no-such-cache-label ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache)" = fallback ]
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"no block device carries it"* ]]
	nothing_attached
}

@test "found by its label: LABEL= of the cache's file system" {
	truncate -s 64M "$T/cache.img"
	CACHE=$(losetup -f --show "$T/cache.img")
	label=rbt$$
	"$RAMBOOT_BIN" cache init --label="$label" "$CACHE" >/dev/null
	refresh
	rb --cmdline="ramboot=cache ramboot.cache=LABEL=$label ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = hit ]
	[ "$(report cache_device)" = "$R$CACHE" ]
}

@test "found by its UUID; the other disks read 4 KiB each, not probed whole" {
	truncate -s 64M "$T/cache.img"
	CACHE=$(losetup -f --show "$T/cache.img")
	"$RAMBOOT_BIN" cache init --label=rbt$$ "$CACHE" >/dev/null
	refresh
	uuid=$(blkid -s UUID -o value "$CACHE")
	[ -n "$uuid" ]
	# Two other disks: an ext4 labelled otherwise, swap with the label.
	truncate -s 64M "$T/other.img" "$T/swap.img"
	mkfs.ext4 -q -F -L someones "$T/other.img"
	mkswap -L rbt$$ "$T/swap.img" >/dev/null 2>&1
	LOOPS+=("$(losetup -f --show "$T/other.img")" "$(losetup -f --show "$T/swap.img")")
	# Each other disk: its first 4 KiB read by ramboot, not a byte more
	# (rule A fails a read past 4096 bytes, rule B logs every read): the
	# shim counts ramboot's own reads, never udev's probes.
	FI=
	for l in "${LOOPS[@]}"; do
		FI+="${FI:+;}pread,read:path=*/dev/${l##*/}:after=4097:errno=EIO;pread,read:path=*/dev/${l##*/}"
	done
	rb --cmdline="ramboot=cache ramboot.cache=UUID=$uuid ramboot.image=/root/images/x.img"
	FI=
	assert_success
	[ "$(report cache)" = hit ]
	[ "$(report cache_device)" = "$R$CACHE" ]
	grep -qE '^faultinj pid=[0-9]+ loaded prog=ramboot rules=6' "$T/opens.log"
	[ "$(grep -c 'rule=2 call=p\?read' "$T/opens.log")" -ge 1 ]
	[ "$(grep -c 'rule=4 call=p\?read' "$T/opens.log")" -ge 1 ]
	[ "$(grep -c 'action=errno' "$T/opens.log")" -eq 0 ]
	# The swap carries the label too, but is not ext: not a second cache.
	rb --cmdline="ramboot=cache ramboot.cache=LABEL=rbt$$ ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	[ "$(report cache_device)" = "$R$CACHE" ]
}

@test "a label only on a file system that is not ext: no cache carries it" {
	make_cache
	truncate -s 16M "$T/swap.img"
	mkswap -L rbs$$ "$T/swap.img" >/dev/null 2>&1
	LOOPS+=("$(losetup -f --show "$T/swap.img")")
	rb --cmdline="ramboot=cache ramboot.cache=LABEL=rbs$$ ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = fallback ]
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"no block device carries it"* ]]
}

@test "a device that is not a cache: a fallback, its bytes untouched" {
	truncate -s 32M "$T/other.img"
	mkfs.ext4 -q -F -L someones "$T/other.img"
	CACHE=$(losetup -f --show "$T/other.img")
	sum=$(sha256sum <"$T/other.img")
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"not a ramboot cache"* ]]
	[ "$(sha256sum <"$T/other.img")" = "$sum" ]
	# bytes that hold no file system at all: not even mounted
	losetup -d "$CACHE"
	head -c 4M /dev/urandom >"$T/other.img"
	CACHE=$(losetup -f --show "$T/other.img")
	sum=$(sha256sum <"$T/other.img")
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"not a ramboot cache"* ]]
	[ "$(sha256sum <"$T/other.img")" = "$sum" ]
	run losetup -a
	refute_output --partial '/images/x.img/'
}

@test "ramboot=cache without ramboot.cache=: a fallback; ramboot=off said outright: nothing" {
	rb --cmdline="ramboot=cache ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report fallback)" = "cache unusable" ]
	run env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --query \
		--cmdline="ramboot=off ramboot.cache=LABEL=x ramboot.image=/root/images/x.img"
	assert_line mode=off
	run env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --query \
		--cmdline="ramboot.cache=LABEL=x ramboot.image=/root/images/x.img"
	assert_line mode=cache
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --query \
		--cmdline="ramboot=ram ramboot.cache=LABEL=x ramboot.image=/root/images/x.img"
	assert_line mode=ram
	[[ "$stderr" == *"ramboot.cache= is not used with ramboot=ram"* ]]
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --query \
		--cmdline="ramboot.cache=sda2 ramboot.image=/root/images/x.img"
	[[ "$stderr" == *"invalid value 'sda2'"* ]]
}

@test "ramboot.verify=signed: an unsigned manifest is not signed; the cache is not used" {
	make_cache
	refresh
	rb --cmdline="ramboot=cache ramboot.verify=signed ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report fallback)" = "not signed" ]
	[ "$(opens_of_image)" -eq 0 ]
	nothing_attached
}

@test "a flipped byte in the slot with ramboot.verity=1: a read error to its reader, the scrub marks the slot bad" {
	dmsetup targets 2>/dev/null | grep -q '^verity ' ||
		skip "no dm-verity in this kernel (dmsetup targets): the slot through it is not tested here"
	make_cache
	"$RAMBOOT_BIN" manifest --verity "$IMG" >"$IMG.manifest"
	refresh
	# one byte of a file's data flipped in slot a, its superblock intact
	mkdir -p "$T/m"
	mount "$CACHE" "$T/m"
	printf '\x5a' | dd of="$T/m/images/x.img/a" bs=1 seek=200000 conv=notrunc status=none
	umount "$T/m"
	rb --cmdline="ramboot=cache ramboot.verity=1 ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = hit ]
	[ "$(report cache_verified)" = verity ]
	dev=$(report verity_device)
	[ -b "$dev" ]
	run cat "$dev"
	[ "$status" -ne 0 ]
	for _ in $(seq 1200); do
		[ -n "$(report cache_scrub)" ] && break
		sleep 0.1
	done
	[ "$(report cache_scrub)" = bad ]
	dmsetup remove "${dev##*/}" 2>/dev/null || dmsetup remove ramboot-verity 2>/dev/null || true
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line --partial "bad: slot a"
}

@test "after the refresh the mounted image's loop device moves onto the new slot (LOOP_CHANGE_FD)" {
	make_cache
	refresh
	serve "$D/b.img"
	hook_loop
	mkdir "$T/mnt"
	mount -t squashfs -o ro "$HOOKLOOP" "$T/mnt"
	run cat "$T/mnt/etc/marker"
	assert_output rebuilt
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	wait_switch
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
	[ "$(report cache_switch_error)" = "" ]
	[ -n "$(report cache_switched)" ]
	[ -n "$(report cache_refresh_seconds)" ]
	[ "$(report cache_image)" = "$R$HOOKLOOP" ]
	# the loop device reads the slot now, still read-only; the network
	# image is no longer held by it
	run cat "/sys/block/${HOOKLOOP##*/}/loop/backing_file"
	assert_output /images/x.img/b
	run cat "/sys/block/${HOOKLOOP##*/}/ro"
	assert_output 1
	run losetup -j "$IMG"
	assert_output ""
	# the mounted file system goes on, from the local disk
	run cat "$T/mnt/etc/marker"
	assert_output rebuilt
	cmp "$HOOKLOOP" "$D/b.img"
	umount "$T/mnt"
	run env RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" status
	assert_output --partial "cache_switched="
	assert_line --index 0 --partial "ramboot: running from the local cache (slot b of $R$CACHE, generation 2, refreshed behind the boot, switched at "
}

@test "a root on a read-write loop device is not switched: the report says why, the slot waits for the next boot" {
	make_cache
	refresh
	serve "$D/b.img"
	HOOKLOOP=$(losetup -f --show "$IMG")
	LOOPS+=("$HOOKLOOP")
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	wait_switch
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_switched)" = "" ]
	[[ "$(report cache_switch_error)" == *"${HOOKLOOP##*/}: not read-only"* ]]
	run cat "/sys/block/${HOOKLOOP##*/}/loop/backing_file"
	assert_output "$IMG"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	[ "$(report cache_slot)" = b ]
}

# Rewrite the state of x.img in the cache with sed expression $1, its
# check line made again (a state the refresh could have written).
edit_state() { # sed-expression
	local st=$T/m/images/x.img/state body
	mkdir -p "$T/m"
	mount "$CACHE" "$T/m"
	body=$(sed '/^check /d' "$st" | sed "$1")
	printf '%s\ncheck %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$st"
	umount "$T/m"
}

# Overwrite the first bytes of slot $1 (its file system's superblock).
rot_slot() { # a|b
	mkdir -p "$T/m"
	mount "$CACHE" "$T/m"
	dd if=/dev/zero of="$T/m/images/x.img/$1" bs=4096 count=1 conv=notrunc status=none
	umount "$T/m"
}

@test "a slot that fails its check at boot is marked bad: the network boots, the refresh writes the other slot" {
	make_cache
	refresh
	rot_slot a
	hook_loop
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache_marked_bad)" = a ]
	[ "$(report fallback)" = "" ]
	[[ "$(report error)" == *"slot a: no file system that blkid knows: marked bad"* ]]
	[[ "$stderr" == *"marked bad; the network image boots"* ]]
	wait_switch
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
	[ -n "$(report cache_switched)" ]
	cmp "$HOOKLOOP" "$D/a.img"
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_success
	assert_line "active: b"
	assert_line --partial "bad: slot a (marked at "
	run "$RAMBOOT_BIN" cache status --json --cache="$CACHE"
	assert_output --partial '"bad":["a"]'
	# the hook's loop device holds slot b now: free it for the next boot
	losetup -d "$HOOKLOOP"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	[ "$(report cache_slot)" = b ]
	[ "$(report cache_marked_bad)" = "" ]
}

@test "a slot marked bad is never booted nor taken as up to date; a refresh rewrites it and the mark goes" {
	make_cache
	refresh
	edit_state "s/^refresh /bad a 1718000500\nrefresh /"
	TZ=UTC run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_success
	assert_line --partial "bad: slot a (marked at 2024-06-10 06:21:40 UTC ("
	run "$RAMBOOT_BIN" cache status --json --cache="$CACHE"
	assert_output --partial '"bad":["a"]'
	[[ $output != *"2024-06-10"* ]]
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache)" = miss ] || [ "$(report cache)" = refreshed ]
	[[ "$stderr" == *"its slot is marked bad"* ]]
	wait_refresh
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line "active: b"
	assert_line --partial "bad: slot a"
	# the image of slot a again: written into a, its mark gone
	serve "$D/b.img"
	refresh
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line "active: a"
	assert_line "bad: no"
}

@test "offline: the image cannot be read; with ramboot.cache.offline= a slot young enough boots (cache=offline)" {
	make_cache
	refresh
	rm "$IMG" "$IMG.manifest"
	# not asked for: the network boot's fallback, the cache not used
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report fallback)" = "image not found" ]
	nothing_attached
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.cache.offline=7d ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = offline ]
	[ "$(report mode_done)" = cache ]
	[ "$(report cache_slot)" = a ]
	[ "$(report fallback)" = "" ]
	[ "$(report cache_age)" -ge 0 ]
	[ "$(report cache_age)" -le 604800 ]
	[[ "$(report error)" == *"x.img: No such file or directory"* ]]
	[[ "$stderr" == *"cache: OFFLINE: "*"not checked against the server"* ]]
	loop=$(report cache_image)
	assert_output "RAMBOOT_IMAGE=$loop"
	cmp "$loop" "$D/a.img"
	run env RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" status
	assert_output --partial "OFFLINE"
}

@test "offline: a slot older than the age allowed, or refreshed in the clock's future, does not boot" {
	make_cache
	refresh
	rm "$IMG" "$IMG.manifest"
	edit_state "s/^refresh [0-9]*/refresh $(( $(date +%s) - 90000 ))/"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.cache.offline=1d ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache)" = fallback ]
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"no offline boot: "*"more than ramboot.cache.offline= allows (86400 s)"* ]]
	nothing_attached
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.cache.offline=2d ramboot.image=/root/images/x.img"
	[ "$(report cache)" = offline ]
	losetup -d "$(report cache_image)"
	edit_state "s/^refresh [0-9]*/refresh $(( $(date +%s) + 90000 ))/"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.cache.offline=2d ramboot.image=/root/images/x.img"
	[ "$(report cache)" = fallback ]
	[[ "$(report error)" == *"in this clock's future"* ]]
}

@test "offline: a manifest that cannot be read (EIO) boots the slot; one that is read and refused never does" {
	make_cache
	refresh
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" FAULTINJ="open:path=*x.img.manifest:errno=EIO" \
		LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot \
		--cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.cache.offline=1h ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = offline ]
	[[ "$(report error)" == *"Input/output error"* ]]
	LOOPS+=("$(report cache_image)")
	losetup -d "$(report cache_image)"
	# an unsigned manifest under ramboot.verify=signed: refused, not offline
	rb --cmdline="ramboot=cache ramboot.verify=signed ramboot.cache=$CACHE ramboot.cache.offline=1h ramboot.image=/root/images/x.img"
	[ "$(report fallback)" = "not signed" ]
	nothing_attached
}

@test "ramboot.cache.offline= in ramboot.conf and on the command line; bad values are warnings" {
	printf 'RAMBOOT_CACHE_OFFLINE=3d\n' >"$R/etc/ramboot.conf"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --explain \
		--cmdline="ramboot.cache=LABEL=x ramboot.image=/root/images/x.img"
	assert_success
	assert_output --partial "cache.offline"
	assert_output --partial "3d"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot --query \
		--cmdline="ramboot.cache=LABEL=x ramboot.cache.offline=soon ramboot.image=/root/images/x.img"
	[[ "$stderr" == *"invalid value 'soon'"* ]]
}

@test "ramboot=lazy on a hit: the slot is copied into RAM from the local disk and its loop device switched to the copy" {
	make_cache
	refresh
	cp /proc/meminfo "$R/proc/meminfo"
	rb --cmdline="ramboot=lazy ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	loop=$(report cache_image)
	assert_output "RAMBOOT_IMAGE=$loop"
	[ "$(report cache)" = hit ]
	[ "$(report mode_done)" = lazy ]
	[ "$(report fallback)" = "" ]
	# the hook mounts the slot's loop device
	MNT=$T/mnt
	mkdir -p "$MNT"
	mount -t squashfs -o ro "$loop" "$MNT"
	# the copy's end, however slow the host: the report says it (the
	# bound, 10 minutes, only ends a broken copy's wait)
	for _ in $(seq 6000); do
		[ -n "$(report lazy_switched)" ] && break
		[ -n "$(report lazy_gave_up)" ] && break
		sleep 0.1
	done
	[ "$(report lazy_gave_up)" = "" ]
	[ -n "$(report lazy_switched)" ]
	[ "$(report lazy_source)" = cache ]
	run grep -x "source=cache" "$R/run/ramboot/lazy"
	assert_success
	backing=$(cat "/sys/block/${loop##*/}/loop/backing_file")
	[[ $backing == "$R/run/ramboot/ram/"* ]]
	# nothing of the image was read from the network
	[ "$(opens_of_image)" -eq 0 ]
	run cat "$MNT/etc/marker"
	assert_output cached
	cmp "$loop" "$D/a.img"
}

@test "ramboot=lazy on a hit, the copier cannot start (memory short): the boot stays on the slot, the report says why" {
	make_cache
	refresh
	printf 'MemTotal: 1048576 kB\nMemFree: 1024 kB\nMemAvailable: 1024 kB\n' >"$R/proc/meminfo"
	rb --cmdline="ramboot=lazy ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output "RAMBOOT_IMAGE=$(report cache_image)"
	[ "$(report cache)" = hit ]
	[ "$(report mode_done)" = cache ]
	[ "$(report fallback)" = "" ]
	[ "$(report target)" = "" ]
	[[ "$(report error)" == "not enough memory: image "* ]]
	[[ $stderr == *"the copy of the slot into RAM (ramboot=lazy): not enough memory: image "*"; running from the local disk"* ]]
	# the boot runs on from the slot, not from the network image
	[[ $stderr != *"booting from the network image"* ]]
}

@test "the switch refused (EINVAL) or the refresh child killed before it: the report says so, the state is committed, the next boot hits" {
	make_cache
	refresh
	serve "$D/b.img"
	hook_loop
	# ioctls on the loop devices the switch opens (through its /dev):
	# 1 and 2 LOOP_GET_STATUS64 (the look, the check), 3 LOOP_CHANGE_FD
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" FAULTINJ="ioctl:path=*/root/dev:nth=3:errno=EINVAL" \
		FAULTINJ_LOG="$T/fi.log" LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot \
		--cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	wait_switch
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_switched)" = "" ]
	[[ "$(report cache_switch_error)" == *"${HOOKLOOP##*/}: Invalid argument"* ]]
	run cat "/sys/block/${HOOKLOOP##*/}/loop/backing_file"
	assert_output "$IMG"
	run grep -c 'action=errno' "$T/fi.log"
	assert_output 1
	# killed at the switch: the refresh is committed, nothing switched
	serve "$D/a.img"
	losetup -d "$HOOKLOOP"
	hook_loop
	: >"$T/fi.log"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" FAULTINJ="ioctl:path=*/root/dev:nth=3:signal=KILL" \
		FAULTINJ_LOG="$T/fi.log" LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot \
		--cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	for _ in $(seq 300); do
		grep -q 'action=signal' "$T/fi.log" 2>/dev/null && break
		sleep 0.1
	done
	run grep -c 'action=signal' "$T/fi.log"
	assert_output 1
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_switched)" = "" ]
	run cat "/sys/block/${HOOKLOOP##*/}/loop/backing_file"
	assert_output "$IMG"
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line "active: a"
	assert_line "generation: 3"
	losetup -d "$HOOKLOOP"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	[ "$(report cache)" = hit ]
	[ "$(report cache_slot)" = a ]
	cmp "$(report cache_image)" "$D/a.img"
}

@test "offline with ramboot=lazy: the slot boots and stays on the disk (no manifest to verify a RAM copy against)" {
	make_cache
	refresh
	rm "$IMG" "$IMG.manifest"
	cp /proc/meminfo "$R/proc/meminfo"
	rb --cmdline="ramboot=lazy ramboot.cache=$CACHE ramboot.cache.offline=1d ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = offline ]
	[ "$(report mode_done)" = cache ]
	[ "$(report fallback)" = "" ]
	[ ! -e "$R/run/ramboot/lazy" ]
	assert_output "RAMBOOT_IMAGE=$(report cache_image)"
}

@test "the refresh behind the boot ends in the image the look chose: a manifest rolled back meanwhile is refused, nothing switched" {
	make_cache
	refresh
	cp "$IMG.manifest" "$T/a.manifest"
	# a2.img: a.img's size, another image; the boot reads its manifest
	serve "$D/a2.img"
	hook_loop
	# the manifest rolled back to a.img's (the image slot a holds) once
	# the look is done, as the refresh starts (its first open of the image)
	FI="open:path=*/root/images/x.img:times=1:rename=$T/a.manifest>$IMG.manifest" \
		rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	wait_switch
	grep -q 'action=rename' "$T/opens.log"
	[[ "$(report cache_error)" == *"the manifest now names another image"*"than the one the boot chose"*"nothing refreshed" ]]
	[ "$(report cache_switched)" = "" ]
	run cat "/sys/block/${HOOKLOOP##*/}/loop/backing_file"
	assert_output "$IMG"
	cmp "$HOOKLOOP" "$D/a2.img"
	run "$RAMBOOT_BIN" cache status --cache="$CACHE"
	assert_line "active: a"
	assert_line "generation: 1"
}

@test "at boot, a slot holding another image of the same size is a miss" {
	make_cache
	refresh
	serve "$D/a2.img"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache)" = miss ] || [ "$(report cache)" = refreshed ]
	[ "$(report cache_image)" = "" ]
	[[ "$stderr" == *"does not hold this image (another one)"* ]]
	wait_refresh
	[ "$(report cache)" = refreshed ]
	[ "$(report cache_slot)" = b ]
}

@test "at boot, a slot that is not the size its state says is marked bad, never booted" {
	make_cache
	refresh
	mkdir -p "$T/m"
	mount "$CACHE" "$T/m"
	head -c 4096 /dev/zero >>"$T/m/images/x.img/a"
	umount "$T/m"
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	assert_output ""
	[ "$(report cache_marked_bad)" = a ]
	[[ "$(report error)" == *"slot a: not the size the state says: marked bad"* ]]
	wait_refresh
	[ "$(report cache_slot)" = b ]
}

@test "a slot that fails at boot is not marked bad once it holds another image" {
	local dir=$R/cachedir st
	mkdir "$dir"
	"$RAMBOOT_BIN" cache init "$dir" >/dev/null
	"$RAMBOOT_BIN" cache refresh --cache="$dir" --manifest="$IMG.manifest" "$IMG" >/dev/null
	st=$dir/images/x.img/state
	# the state as a refresh of another image of that size into slot a
	# would leave it (only the image's hash differs)
	body=$(sed '/^check /d' "$st" | sed "s/^slot a \([0-9]*\) [0-9a-f]*/slot a \1 $(sha256sum <"$D/a2.img" | cut -d' ' -f1)/")
	printf '%s\ncheck %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$T/state.other"
	dd if=/dev/zero of="$dir/images/x.img/a" bs=4096 count=1 conv=notrunc status=none
	# that state put in place after the look, before the mark
	FI="open:path=*/root/images/x.img:times=1:rename=$T/state.other>$st" \
		rb --cmdline="ramboot=cache ramboot.cache=/cachedir ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report cache_marked_bad)" = a ]
	wait_refresh
	grep -q 'action=rename' "$T/opens.log"
	run ! grep -q '^bad a' "$st"
}

@test "a device that is not a cache, its journal to replay: a fallback, not a byte written, its mount count unchanged" {
	truncate -s 32M "$T/other.img"
	mkfs.ext4 -q -F -L someones "$T/other.img"
	debugfs -w -R "feature needs_recovery" "$T/other.img" >/dev/null 2>&1
	dumpe2fs -h "$T/other.img" 2>/dev/null | grep -q 'features:.*needs_recovery'
	CACHE=$(losetup -f --show "$T/other.img")
	sum=$(sha256sum <"$T/other.img")
	rb --cmdline="ramboot=cache ramboot.cache=$CACHE ramboot.image=/root/images/x.img"
	assert_success
	[ "$(report fallback)" = "cache unusable" ]
	[[ "$(report error)" == *"not a ramboot cache"* ]]
	[ "$(sha256sum <"$T/other.img")" = "$sum" ]
	dumpe2fs -h "$T/other.img" 2>/dev/null | grep -q '^Mount count: *0$'
}
