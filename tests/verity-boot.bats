#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot.verity=1 in `ramboot boot`, against fixture trees ($RAMBOOT_ROOT
# as in boot-cmd.bats). Every way the mapping cannot be made is a
# fallback: no RAMBOOT_IMAGE line, report fallback=verity unavailable,
# verity=failed, and nothing left behind (RAM copy, loop devices, the copy
# of the hash tree). The root cases use real loop devices; where the
# kernel has device-mapper the mapping itself is made and dropped again.
# Booting through the mapping is tested in QEMU (tests/boot/run.sh,
# verity-* cases).

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/bootroot

setup() {
	bootroot_init 8000000 9000000
	IMG=$R/root/images/x86_64.img
}

teardown() {
	if [ -e "$R/dev/mapper/ramboot-verity" ]; then
		RAMBOOT_ROOT=$R "$BIN" verity close ramboot-verity 2>/dev/null || true
	fi
	ram_umount
	# A loop device of ours that outlived the test fails the next check.
	loops_of "$R" | while read -r l; do losetup -d "/dev/$l" 2>/dev/null || true; done
}

# Loop devices whose backing file is below dir.
loops_of() {
	local f
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] || continue
		case $(cat "$f") in "$1"/*)
			f=${f#/sys/block/}
			echo "${f%%/*}"
			;;
		esac
	done
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices, mount)"
}

# A squashfs image of whole 4 KiB blocks with a manifest; --verity also
# writes the hash tree beside it (IMAGE.verity).
make_image() { # [--verity]
	local d=$BATS_TEST_TMPDIR/tree
	mkdir -p "$d/etc" "$d/sbin"
	echo verity >"$d/etc/hostname"
	head -c 200000 /dev/urandom >"$d/sbin/init"
	mksquashfs "$d" "$IMG" -quiet -noappend -no-progress >/dev/null
	"$BIN" manifest "$@" -o "$IMG.manifest" "$IMG" >/dev/null
}

# The mapping failed as it must: no stdout line, the report says so, and
# nothing of it is left.
assert_verity_fallback() {
	assert_success
	assert_output ""
	[ "$(report fallback)" = "verity unavailable" ] || fail "fallback=$(report fallback)"
	[ "$(report verity)" = failed ]
	[ -z "$(report verity_device)" ]
	[ "$(report mode_done)" = off ]
	[ ! -e "$R/run/ramboot/verity" ] || [ -z "$(ls -A "$R/run/ramboot/verity")" ] ||
		fail "hash tree copy left: $(ls "$R/run/ramboot/verity")"
	[ -z "$(loops_of "$R")" ] || fail "loop devices left: $(loops_of "$R")"
	! grep -qs " $R/run/ramboot/ram " /proc/mounts || fail "RAM copy left mounted"
}

@test "verity boot: ramboot=off ramboot.verity=1 and no manifest: fallback, nothing on stdout" {
	make_image
	rm "$IMG.manifest"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"no manifest"* ]]
	[[ "$stderr" == *"verity unavailable"* ]]
	[ "$(echo "$stderr" | grep -c .)" = 1 ] || fail "not one line: $stderr"
}

@test "verity boot: a manifest without verity-root: fallback with ram, before any copy" {
	make_image
	rb --cmdline="ramboot=ram ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"no verity-root"* ]]
	[ "$(report bytes)" = 0 ]
	[ ! -e "$R/run/ramboot/ram" ] || [ -z "$(ls -A "$R/run/ramboot/ram")" ]
}

@test "verity boot: a value that does not parse counts as asked for" {
	make_image
	rm "$IMG.manifest"
	rb --cmdline="ramboot=prefetch ramboot.verity=maybe" --image="$IMG"
	assert_verity_fallback
	[[ "$stderr" == *"ramboot.verity=: invalid value 'maybe'"* ]]
}

@test "verity boot: ramboot.verity=0 and no setting change nothing" {
	make_image
	rb --cmdline="ramboot.verity=0" --image="$IMG"
	assert_success
	assert_output ""
	[ -z "$(report verity)" ]
	[ -z "$(report fallback)" ]
	if grep -q '^verity' "$R/run/ramboot/report"; then fail "verity keys in the report"; fi
}

@test "verity boot: --mounted (the script mounts the root itself): fallback, no lazy copier" {
	make_image --verity
	rb --mounted --cmdline="ramboot=lazy ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"mounts the root from the image itself"* ]]
	[ ! -e "$R/run/ramboot/lazy" ]
}

@test "verity boot: ramboot.verify=signed and an unsigned manifest: fallback before any mapping" {
	make_image --verity
	mkdir -p "$R/etc/ramboot/keys"
	"$BIN" keygen "$BATS_TEST_TMPDIR/k" >/dev/null
	cp "$BATS_TEST_TMPDIR/k.pub" "$R/etc/ramboot/keys/lab.pub"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[ "$(report verify)" = signed ]
	[[ "$(report error)" == *"not signed"* || "$(report error)" == *"no signature"* ]] ||
		fail "error=$(report error)"
}

@test "verity boot: the hash tree is missing or of another size: fallback" {
	make_image --verity
	mv "$IMG.verity" "$BATS_TEST_TMPDIR/tree.verity"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"x86_64.img.verity"* ]]
	head -c 4096 "$BATS_TEST_TMPDIR/tree.verity" >"$IMG.verity"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"the image's hash tree has"* ]] || fail "error=$(report error)"
}

# The root cases: loop devices under the fixture's /dev (nodes made here
# and by ramboot), sysfs and the device-mapper control node of the host.
fixture_dev() {
	mkdir -p "$R/dev/mapper"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control"
	mknod "$R/dev/loop-control" c 10 237
	if [ -e /dev/mapper/control ]; then
		mknod "$R/dev/mapper/control" c "$((16#$(stat -c %t /dev/mapper/control)))" \
			"$((16#$(stat -c %T /dev/mapper/control)))"
	fi
	ln -s /sys "$R/sys"
}

has_dm_verity() {
	[ -e /sys/module/dm_verity ] || modprobe -q dm-verity 2>/dev/null
	[ -e /sys/module/dm_verity ] || grep -qw verity /proc/misc 2>/dev/null
}

@test "verity boot: a hash tree that is not the manifest's (root): fallback, loop devices gone" {
	need_root
	make_image --verity
	fixture_dev
	# Another image's tree, of the same size: its top block does not
	# give the manifest's root hash.
	printf 'x' | dd of="$BATS_TEST_TMPDIR/tree/sbin/init" bs=1 seek=100 conv=notrunc 2>/dev/null
	mksquashfs "$BATS_TEST_TMPDIR/tree" "$BATS_TEST_TMPDIR/other.img" -quiet -noappend \
		-no-progress >/dev/null
	"$BIN" verity format -f --salt="$(sed -n "s/^verity-salt //p" "$IMG.manifest")" \
		"$BATS_TEST_TMPDIR/other.img" "$BATS_TEST_TMPDIR/other.verity" \
		>/dev/null
	if [ "$(stat -c %s "$BATS_TEST_TMPDIR/other.verity")" = "$(stat -c %s "$IMG.verity")" ]; then
		cp "$BATS_TEST_TMPDIR/other.verity" "$IMG.verity"
	else
		# sizes differ: flip a byte of the tree's top block instead
		printf '\377' | dd of="$IMG.verity" bs=1 seek=4200 conv=notrunc 2>/dev/null
	fi
	rb --cmdline="ramboot=ram ramboot.verity=1" --image="$IMG"
	assert_verity_fallback
	[[ "$(report error)" == *"root hash"* ]] || fail "error=$(report error)"
	[ -z "$(report ram_path)" ]
}

@test "verity boot: ram (root): the copy is mapped, or without device-mapper dropped again" {
	need_root
	make_image --verity
	fixture_dev
	rb --cmdline="ramboot=ram ramboot.verity=1" --image="$IMG"
	assert_success
	if ! has_dm_verity; then
		# This kernel cannot map it: the verified copy is not booted.
		assert_verity_fallback
		[ "$(report hash)" = ok ]
		return 0
	fi
	assert_output "RAMBOOT_IMAGE=$R/dev/mapper/ramboot-verity"
	[ "$(report verity)" = on ]
	[ "$(report mode_done)" = ram ]
	[ "$(report fstype)" = squashfs ]
	[ "$(report verity_root)" = "$(sed -n 's/^verity-root //p' "$IMG.manifest")" ]
	cmp "$IMG" "$R/dev/mapper/ramboot-verity"
	# The hook hands it back: mapping, loop devices and copy go.
	rb --drop="$R/dev/mapper/ramboot-verity" --reason="test"
	assert_success
	[ ! -e "$R/dev/mapper/ramboot-verity" ]
	[ "$(report mode_done)" = off ]
	[ "$(report verity)" = failed ]
	[ -z "$(loops_of "$R")" ] || fail "loop devices left: $(loops_of "$R")"
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then fail "RAM copy left mounted"; fi
}

@test "verity boot: off (root): the network image is mapped, or without device-mapper a fallback" {
	need_root
	make_image --verity
	fixture_dev
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_success
	if ! has_dm_verity; then
		assert_verity_fallback
		[[ "$(report error)" == *"device-mapper"* || "$(report error)" == *"verity"* ]]
		return 0
	fi
	assert_output "RAMBOOT_IMAGE=$R/dev/mapper/ramboot-verity"
	[ "$(report mode_done)" = off ]
	[ -z "$(report fallback)" ]
	[ -n "$(loops_of "$R")" ]
	rb --drop="$R/dev/mapper/ramboot-verity" --reason="test"
	[ -z "$(loops_of "$R")" ] || fail "loop devices left: $(loops_of "$R")"
}

# ---- an attacker's or a tired admin's paths ----

@test "verity boot: a symlink at /run/ramboot/verity or at the tree's copy is not followed" {
	make_image --verity
	mkdir -p "$R/run/ramboot" "$BATS_TEST_TMPDIR/elsewhere"
	echo precious >"$BATS_TEST_TMPDIR/elsewhere/x86_64.img.verity"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$R/run/ramboot/verity"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_success
	assert_output ""
	[ "$(report fallback)" = "verity unavailable" ]
	[[ "$(report error)" == *"not a directory"* ]] || fail "error=$(report error)"
	[ "$(cat "$BATS_TEST_TMPDIR/elsewhere/x86_64.img.verity")" = precious ]
	# a link where the copy goes: removed, never written through
	rm "$R/run/ramboot/verity"
	mkdir -m 0700 "$R/run/ramboot/verity"
	ln -s "$BATS_TEST_TMPDIR/elsewhere/x86_64.img.verity" "$R/run/ramboot/verity/x86_64.img.verity"
	rb --cmdline="ramboot.verity=1" --image="$IMG"
	assert_success
	[ "$(report fallback)" = "verity unavailable" ]
	[ "$(cat "$BATS_TEST_TMPDIR/elsewhere/x86_64.img.verity")" = precious ]
	[ ! -e "$R/run/ramboot/verity/x86_64.img.verity" ]
	[ ! -L "$R/run/ramboot/verity/x86_64.img.verity" ]
}

@test "verity boot: a full disk while the tree is copied: fallback, no part of the copy left" {
	load helpers/fault
	faultinj_build
	make_image --verity
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ='write:path=*/run/ramboot/verity/*:errno=ENOSPC' \
		FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" LD_PRELOAD="$FAULTINJ_SO" \
		"$BIN" boot --cmdline="ramboot.verity=1" --image="$IMG"
	assert_success
	assert_output ""
	grep -q 'errno=ENOSPC\|ENOSPC' "$BATS_TEST_TMPDIR/fi.log"
	[ "$(report fallback)" = "verity unavailable" ]
	[[ "$(report error)" == *"No space left"* ]] || fail "error=$(report error)"
	[ -z "$(ls -A "$R/run/ramboot/verity" 2>/dev/null)" ]
}

@test "verity boot: a read of the tree that never returns (a server gone): the boot goes on" {
	load helpers/fault
	faultinj_build
	make_image --verity
	# as on a hard NFS mount whose server is gone: only SIGKILL ends it
	run --separate-stderr timeout 90 env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ='read:path=*.img.verity:hang' \
		FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" LD_PRELOAD="$FAULTINJ_SO" \
		"$BIN" boot --cmdline="ramboot.verity=1 ramboot.timeout=1" --image="$IMG"
	[ "$status" -eq 0 ]
	assert_output ""
	grep -q 'action=hang' "$BATS_TEST_TMPDIR/fi.log"
	[ "$(report fallback)" = "verity unavailable" ]
	[[ "$(report error)" == *"did not end within 16 s"* ]] || fail "error=$(report error)"
	[ -z "$(ls -A "$R/run/ramboot/verity" 2>/dev/null)" ]
}

@test "verity boot: --drop of the mapping never empties a directory a link at /run/ramboot/verity leads to" {
	mkdir -p "$R/run/ramboot" "$BATS_TEST_TMPDIR/elsewhere"
	echo precious >"$BATS_TEST_TMPDIR/elsewhere/keep"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$R/run/ramboot/verity"
	printf 'mode_asked=off\nmode_done=off\nram_path=\nverity=on\nverity_device=%s\nfallback=\nerror=\n' \
		"$R/dev/mapper/ramboot-verity" >"$R/run/ramboot/report"
	rb --drop="$R/dev/mapper/ramboot-verity" --reason="test"
	assert_success
	[ "$(cat "$BATS_TEST_TMPDIR/elsewhere/keep")" = precious ]
	[ -L "$R/run/ramboot/verity" ]
	[ "$(report verity)" = failed ]
	[ "$(report mode_done)" = off ]
}
