#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The boot hooks under busybox sh, as in the initramfs: the LTSP hook
# (sourced in LTSP's shell) and the initramfs-tools boot script, with a
# stub ramboot, a fake root mount and shell-function stubs for mount
# and umount. Nothing is really mounted.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
HOOK=$TOP/initrd-hooks/ltsp-hook.sh
SCRIPT=$TOP/initrd-hooks/initramfs-tools/script
LIB=$TOP/initrd-hooks/ramboot-lib.sh

setup() {
	command -v busybox >/dev/null || skip "no busybox (busybox-static)"
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/root/images" "$T/ram" "$T/run"
	: >"$T/ram/x86_64.img"
	: >"$T/log"
}

teardown() {
	# the root-only test mounts for real: leave nothing behind
	if [ -n "${T:-}" ] && grep -qs " $T/" /proc/mounts; then
		umount "$T/run/check" 2>/dev/null
	fi
	if [ -n "${T:-}" ] && [ -f "$T/real.img" ] && command -v losetup >/dev/null; then
		losetup -j "$T/real.img" | cut -d: -f1 | while read -r dev; do
			losetup -d "$dev"
		done
	fi
	return 0
}

# A stub `ramboot`: logs its arguments and RAMBOOT* environment; `boot
# --drop=...` only logs, any other call prints $1 on stdout and exits
# with $2.
stub() {
	cat >"$T/ramboot" <<EOF
#!/bin/sh
echo "args: \$*" >>"$T/log"
case "\$*" in *--drop=*) exit 0 ;; esac
env | grep '^RAMBOOT' | sort >>"$T/log"
cat "$T/out"
exit ${2:-0}
EOF
	chmod +x "$T/ramboot"
	printf '%s' "$1" >"$T/out"
}

# The report `ramboot boot` leaves after a RAM copy: fstype $1 (may be
# empty), ram_path $2.
report() {
	printf 'mode_asked=ram\nmode_done=ram\nram_path=%s\ntarget=tmpfs\nfstype=%s\nfallback=\n' \
		"${2:-$T/ram/x86_64.img}" "$1" >"$T/run/report"
}

# What the stubbed check mount shows: a root file system.
check_root() {
	mkdir -p "$T/run/check/etc" "$T/run/check/sbin"
	: >"$T/run/check/sbin/init"
}

# grep that must not match. (`! grep` would not fail a test: errexit
# ignores a negated command.)
no_grep() {
	! grep "$@"
}

# The drop call the hooks make when they do not use the copy.
dropped() { # path reason
	grep -qFx "args: boot --drop=$1 --reason=$2" "$T/log"
}

# Source the LTSP hook in busybox sh the way LTSP's run_parameters does
# (eval of PRE_INITRD_BOTTOM_RAMBOOT), after LTSP-like state.
# $1: the ltsp.image value kernel_vars sets; $2: rootmnt; $3: the status
# of the stubbed mount (REAL=1: no mount/umount stubs).
ltsp() {
	{
		cat <<EOF
kernel_vars() {
	test "\$kernel_vars" = "1" && return 0 || kernel_vars=1
	IMAGE='$1'
}
EOF
		if [ -z "${REAL:-}" ]; then
			cat <<EOF
mount() { echo "mount \$*" >>"$T/log"; return ${3:-0}; }
umount() { echo "umount \$*" >>"$T/log"; }
modprobe() { :; }
EOF
		fi
		printf '%s\n' "${LTSP_PRE:-}"
		cat <<EOF
rootmnt='${2:-$T/root}'
RAMBOOT_BIN='${LTSP_BIN-$T/ramboot}'
ramboot_bin_search='${LTSP_SEARCH:-$T/no/ramboot}'
ramboot_lib='${LTSP_LIB:-$LIB}'
ramboot_dir='$T/run'
RAMBOOT=ram
RAMBOOT_SWAP_SIZE='min(ram / 2, 4G)'
IMAGE_TO_RAM=1
PRE_INITRD_BOTTOM_RAMBOOT=". $HOOK"
# LTSP runs under set -e; run_parameters does \`re eval "\$parameters"\`
set -e
re() { "\$@" || { echo "LTSP boot error!"; exit 1; }; }
re eval "\$PRE_INITRD_BOTTOM_RAMBOOT"
echo "status=\$?"
kernel_vars
echo "IMAGE=\$IMAGE"
echo "IMAGE_TO_RAM=\$IMAGE_TO_RAM"
set | sed -n 's/^\(ramboot_[a-z_]*\)=.*/leak: \1/p'
EOF
	} >"$T/ltsp.sh"
	run busybox sh "$T/ltsp.sh"
}

@test "hooks: shellcheck -s sh on every hook" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck -s sh "$HOOK" "$SCRIPT" "$LIB" "$TOP/initrd-hooks/initramfs-tools/hook" \
		"$TOP/initrd-hooks/initramfs-tools/order.conf" "$TOP/initrd-hooks/install.sh"
	assert_success
}

@test "hooks: image list rewriting keeps options and later images" {
	run busybox sh -c ". '$HOOK'
		ramboot_image_list 'images/x86_64.img,fstype=squashfs,,boot.img,subdir=boot' /run/ramboot/ram/x86_64.img
		ramboot_image_list 'x.img' /dev/zram2
		ramboot_image_list '/srv/a b.img,ro' '/run/ramboot/ram/a b.img'
		ramboot_image_path 'images/x86_64.img,fstype=squashfs,,b.img' /root
		ramboot_image_path '/abs/x.img,ro' /root
		ramboot_image_path 'x.img' /sysroot/"
	assert_success
	assert_output "/run/ramboot/ram/x86_64.img,fstype=squashfs,,boot.img,subdir=boot
/dev/zram2
/run/ramboot/ram/a b.img,ro
/root/images/x86_64.img
/abs/x.img
/sysroot/x.img"
}

@test "hooks: ltsp: RAM copy replaces the first image, settings exported" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	: >"$T/run/check/boot.img"   # opened inside the first image
	ltsp "images/x86_64.img,fstype=squashfs,,boot.img,subdir=boot"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/ram/x86_64.img,fstype=squashfs,,boot.img,subdir=boot"
	assert_line "IMAGE_TO_RAM=0"
	refute_line --partial "leak:"
	run cat "$T/log"
	assert_line "args: boot --image=$T/root/images/x86_64.img"
	assert_line "RAMBOOT=ram"
	assert_line "RAMBOOT_SWAP_SIZE=min(ram / 2, 4G)"
	refute_line --partial "RAMBOOT_BIN"
	refute_line --partial "--drop"
	# the check mount, and nothing else ($T/root is no mount point)
	run grep -E '^u?mount' "$T/log"
	assert_output "mount -t squashfs -o ro,loop $T/ram/x86_64.img $T/run/check
umount $T/run/check"
}

@test "hooks: ltsp: a quoted RAM path with spaces" {
	mkdir -p "$T/ram dir"
	: >"$T/ram dir/x.img"
	stub "RAMBOOT_IMAGE='$T/ram dir/x.img'"
	report erofs "$T/ram dir/x.img"
	check_root
	ltsp "x.img,ro"
	assert_success
	assert_line "IMAGE=$T/ram dir/x.img,ro"
	grep -qFx "mount -t erofs -o ro,loop $T/ram dir/x.img $T/run/check" "$T/log"
}

@test "hooks: ltsp: the network root is unmounted after the check mount" {
	# /proc is a mount point on any Linux: stands in for the root mount
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "IMAGE=$T/ram/x86_64.img"
	run grep -E '^u?mount' "$T/log"
	assert_output "mount -t squashfs -o ro,loop $T/ram/x86_64.img $T/run/check
umount $T/run/check
umount /proc"
}

@test "hooks: ltsp: a lazy boot over HTTP: its loop device replaces the image, named as such (no dm-verity)" {
	mkdir -p "$T/dev/mapper"
	: >"$T/dev/loop0"
	: >"$T/dev/mapper/ramboot-verity"
	check_root
	stub "RAMBOOT_IMAGE=$T/dev/loop0"
	report squashfs "$T/dev/loop0"
	sed -i 's/^mode_done=ram$/mode_done=lazy/' "$T/run/report"
	ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/dev/loop0"
	assert_output --partial "image through $T/dev/loop0, copied to RAM behind the boot"
	refute_output --partial "dm-verity"
	# ramboot.verity=1: the mapping, named as such
	stub "RAMBOOT_IMAGE=$T/dev/mapper/ramboot-verity"
	report squashfs "$T/dev/mapper/ramboot-verity"
	printf 'mode_done=off\nverity_device=%s\n' "$T/dev/mapper/ramboot-verity" >>"$T/run/report"
	sed -i '/^mode_done=ram$/d' "$T/run/report"
	ltsp "images/x86_64.img"
	assert_success
	assert_output --partial "image through dm-verity: $T/dev/mapper/ramboot-verity"
}

@test "hooks: ltsp: a hit of the local disk cache: the slot replaces the image, the network root is unmounted, IMAGE_TO_RAM is LTSP's" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	sed -i 's/^mode_done=ram$/mode_done=cache/' "$T/run/report"
	check_root
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/ram/x86_64.img"
	# the admin's own setting: a slot on a disk may still go to RAM
	assert_line "IMAGE_TO_RAM=1"
	assert_output --partial "image from the local cache: $T/ram/x86_64.img"
	refute_output --partial "dm-verity"
	run grep -E '^u?mount' "$T/log"
	assert_output "mount -t squashfs -o ro,loop $T/ram/x86_64.img $T/run/check
umount $T/run/check
umount /proc"
}

@test "hooks: ltsp: rootmnt with trailing slashes: the network root is still unmounted" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	ltsp "images/x86_64.img" /proc/
	assert_success
	assert_line "IMAGE=$T/ram/x86_64.img"
	grep -qx "args: boot --image=/proc/images/x86_64.img" "$T/log"
	grep -qx "umount /proc" "$T/log"
	: >"$T/log"
	ltsp "images/x86_64.img" /proc//
	assert_line "IMAGE=$T/ram/x86_64.img"
	grep -qx "umount /proc" "$T/log"
}

@test "hooks: ltsp: rootmnt / is never unmounted" {
	run busybox sh -c ". '$HOOK'
		for m in /root/ /root// /root / // /x/y/; do ramboot_strip_slash \"\$m\"; done"
	assert_output "/root
/root
/root
/
/
/x/y"
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	ltsp "x.img" /
	assert_success
	assert_line "IMAGE=$T/ram/x86_64.img"
	grep -qx "args: boot --image=/x.img" "$T/log"
	no_grep -qx "umount /" "$T/log"
}

@test "hooks: ltsp: no fstype in the report: the copy is dropped, the network root kept" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report ""
	check_root
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	assert_line "IMAGE_TO_RAM=1"
	refute_line --partial "leak:"
	dropped "$T/ram/x86_64.img" "unknown file system"
	no_grep -q "mount" "$T/log"
}

@test "hooks: ltsp: a copy that does not mount is dropped, the network root kept" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	ltsp "images/x86_64.img,fstype=squashfs" /proc 32
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img,fstype=squashfs"
	assert_line "IMAGE_TO_RAM=1"
	dropped "$T/ram/x86_64.img" "cannot mount the RAM copy"
	grep -q "^mount -t squashfs -o ro,loop $T/ram/x86_64.img $T/run/check" "$T/log"
	no_grep -q "^umount" "$T/log"
}

@test "hooks: ltsp: a copy without /etc or /sbin/init is dropped after the check mount" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report ext4
	mkdir -p "$T/run/check/sbin"
	: >"$T/run/check/sbin/init"
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "IMAGE=images/x86_64.img"
	assert_line "IMAGE_TO_RAM=1"
	dropped "$T/ram/x86_64.img" "no root file system in the RAM copy"
	run grep -E '^u?mount' "$T/log"
	# ext4 read-only as LTSP mounts it: no journal replay
	assert_output "mount -t ext4 -o ro,noload,loop $T/ram/x86_64.img $T/run/check
umount $T/run/check"
}

@test "hooks: ltsp: a copy of the file the manifest names without the running kernel's modules is dropped; with them, or without any, taken" {
	local kind
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	for kind in other this none other-not-named; do
		rm -rf "$T/run/check"
		: >"$T/log"
		report squashfs
		check_root
		if [ "$kind" = other-not-named ]; then
			echo "source=$T/root/images/x86_64.img" >>"$T/run/report"
		else
			echo "source=$T/root/images/x86_64.img.sha256-0123456789abcdef" >>"$T/run/report"
		fi
		case $kind in
		other | other-not-named) mkdir -p "$T/run/check/lib/modules/0.0.0-older" ;;
		this) mkdir -p "$T/run/check/usr/lib/modules/$(uname -r)" ;;
		esac
		ltsp "images/x86_64.img"
		assert_success
		if [ "$kind" = other ]; then
			assert_line "IMAGE=images/x86_64.img"
			dropped "$T/ram/x86_64.img" "no modules of the running kernel in the RAM copy"
		else
			assert_line "IMAGE=$T/ram/x86_64.img"
			refute_line --partial "leak:"
		fi
	done
}

@test "hooks: ltsp: an absolute /sbin/init symlink is enough" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	mkdir -p "$T/run/check/etc" "$T/run/check/sbin"
	ln -s /nonexistent/lib/systemd/systemd "$T/run/check/sbin/init"
	ltsp "images/x86_64.img"
	assert_line "IMAGE=$T/ram/x86_64.img"
}

@test "hooks: ltsp: a zram copy is check-mounted as a block device" {
	dev=$(find /dev -maxdepth 1 -type b -print 2>/dev/null | head -n 1)
	[ -n "$dev" ] || skip "no block device node in /dev"
	stub "RAMBOOT_IMAGE=$dev"
	report squashfs "$dev"
	check_root
	ltsp "images/x86_64.img,fstype=squashfs"
	assert_line "IMAGE=$dev,fstype=squashfs"
	grep -qFx "mount -t squashfs -o ro $dev $T/run/check" "$T/log"
}

@test "hooks: ltsp: a list whose second image lies inside the first: that image must be in the copy" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report iso9660
	mkdir -p "$T/run/check/casper"
	: >"$T/run/check/casper/filesystem.squashfs"
	ltsp "x.iso,fstype=iso9660,loop,ro,,casper/filesystem.squashfs,fstype=squashfs"
	assert_line "IMAGE=$T/ram/x86_64.img,fstype=iso9660,loop,ro,,casper/filesystem.squashfs,fstype=squashfs"
	: >"$T/log"
	ltsp "x.iso,,casper/other.squashfs"
	assert_line "IMAGE=x.iso,,casper/other.squashfs"
	dropped "$T/ram/x86_64.img" "no root file system in the RAM copy"
}

@test "hooks: ltsp: failure leaves IMAGE alone and returns 0" {
	stub "" 1
	ltsp "images/x86_64.img,fstype=squashfs" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img,fstype=squashfs"
	assert_line "IMAGE_TO_RAM=1"
	no_grep -q umount "$T/log"
	no_grep -q -- --drop "$T/log"
}

@test "hooks: ltsp: off / prefetch (empty stdout) leaves IMAGE alone" {
	stub ""
	ltsp "images/x86_64.img"
	assert_success
	assert_line "IMAGE=images/x86_64.img"
	assert_line "IMAGE_TO_RAM=1"
	no_grep -q -- --drop "$T/log"
}

@test "hooks: ltsp: odd output or a missing copy changes nothing" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img
extra line"
	ltsp "images/x86_64.img"
	assert_line "IMAGE=images/x86_64.img"
	stub "something else"
	ltsp "images/x86_64.img"
	assert_line "IMAGE=images/x86_64.img"
	no_grep -q -- --drop "$T/log"   # no report: no copy was made
	stub "RAMBOOT_IMAGE=$T/ram/missing.img"
	report squashfs "$T/ram/missing.img"
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	dropped "$T/ram/missing.img" "RAM copy missing"
	no_grep -q "mount" "$T/log"
}

@test "hooks: ltsp: a copy announced in an unusable form is dropped (the report's ram_path)" {
	# a newline in the name: the quoted value spans two lines; the
	# report has the control character as a space
	: >"$T/ram/a
b.img"
	stub "RAMBOOT_IMAGE='$T/ram/a
b.img'"
	report squashfs "$T/ram/a b.img"
	check_root
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	assert_line "IMAGE_TO_RAM=1"
	dropped "$T/ram/a b.img" "bad ramboot boot output"
	no_grep -q "mount" "$T/log"
}

@test "hooks: ltsp: no binary, no library, or an NFS chroot boot (no image): nothing happens" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	ltsp ""
	assert_success
	assert_line "status=0"
	assert_line "IMAGE="
	run cat "$T/log"
	assert_output ""
	LTSP_LIB=$T/missing-lib.sh ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	assert_line --partial "missing-lib.sh: missing or broken"
	refute_line --partial "leak:"
	echo 'if then' >"$T/broken-lib.sh"
	LTSP_LIB=$T/broken-lib.sh ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	run cat "$T/log"
	assert_output ""
	rm "$T/ramboot"
	ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	assert_line --partial "ramboot binary not found"
}

@test "hooks: ltsp: ltsp.img's gzip-compressed program is unpacked beside itself and run; a broken one is named, the next one is taken" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	check_root
	mkdir -p "$T/bin"
	gzip -c "$T/ramboot" >"$T/bin/ramboot.gz"
	rm "$T/ramboot"
	LTSP_BIN='' LTSP_SEARCH="$T/bin/ramboot $T/bin/ramboot.gz $T/no/ramboot" ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/ram/x86_64.img"
	refute_line --partial "leak:"
	[ -x "$T/bin/ramboot" ]
	[ ! -e "$T/bin/ramboot.gz" ]
	grep -q '^args: boot --image=' "$T/log"
	# not gzip: named, and the next one in the list (the client's initrd's)
	rm "$T/bin/ramboot"
	echo 'not gzip' >"$T/bin/ramboot.gz"
	mkdir -p "$T/initrd/usr/sbin"
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mv "$T/ramboot" "$T/initrd/usr/sbin/ramboot"
	LTSP_BIN='' LTSP_SEARCH="$T/bin/ramboot $T/bin/ramboot.gz $T/initrd/usr/sbin/ramboot" ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line --partial "$T/bin/ramboot.gz: cannot unpack it (zcat)"
	assert_line "IMAGE=$T/ram/x86_64.img"
	[ ! -e "$T/bin/ramboot" ]
	[ ! -e "$T/bin/ramboot.tmp" ]
	# nothing at all: one line, and LTSP goes on with the network image
	LTSP_BIN='' LTSP_SEARCH="$T/bin/ramboot $T/no/ramboot.gz" ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
	assert_line --partial "ramboot binary not found (neither in ltsp.img nor in the client's initrd"
}

@test "hooks: ltsp: real check mounts (squashfs, ext4) under busybox leave nothing mounted (root)" {
	[ "$(id -u)" = 0 ] || skip "needs root (mount)"
	command -v mksquashfs >/dev/null || skip "no mksquashfs"
	mkdir -p "$T/tree/etc" "$T/tree/sbin" "$T/bin"
	ln -s /lib/systemd/systemd "$T/tree/sbin/init"
	mksquashfs "$T/tree" "$T/real.img" -quiet -no-progress -noappend >/dev/null
	for a in mount umount; do
		ln -s "$(command -v busybox)" "$T/bin/$a"
	done
	stub "RAMBOOT_IMAGE=$T/real.img"
	report squashfs "$T/real.img"
	PATH=$T/bin:$PATH REAL=1 ltsp "images/x86_64.img"
	assert_success
	assert_line "IMAGE=$T/real.img"
	no_grep -qs " $T/run/check " /proc/mounts
	[ ! -e "$T/run/check" ]
	run losetup -j "$T/real.img"
	assert_output ""
	# ext4, read-only with noload
	if command -v mkfs.ext4 >/dev/null; then
		rm "$T/real.img"
		mkfs.ext4 -q -F -d "$T/tree" "$T/real.img" 8M
		report ext4 "$T/real.img"
		PATH=$T/bin:$PATH REAL=1 ltsp "images/x86_64.img"
		assert_success
		assert_line "IMAGE=$T/real.img"
		no_grep -qs " $T/run/check " /proc/mounts
		run losetup -j "$T/real.img"
		assert_output ""
	fi
	# not a file system: the check mount fails, the copy is dropped
	report squashfs "$T/real.img"
	head -c 65536 /dev/zero >"$T/real.img"
	PATH=$T/bin:$PATH REAL=1 ltsp "images/x86_64.img"
	assert_success
	assert_line "IMAGE=images/x86_64.img"
	dropped "$T/real.img" "cannot mount the RAM copy"
	run losetup -j "$T/real.img"
	assert_output ""
}

@test "hooks: the output parser: one RAMBOOT_IMAGE= line, plain or single-quoted" {
	cat >"$T/cases" <<'EOF'
RAMBOOT_IMAGE=/run/ramboot/ram/x86_64.img
RAMBOOT_IMAGE=/dev/zram0
RAMBOOT_IMAGE='/run/ramboot/ram/a b.img'
RAMBOOT_IMAGE='/run/it'\''s.img'
RAMBOOT_IMAGE=''\'''
RAMBOOT_IMAGE='/a'\'';touch T/pwned'
RAMBOOT_IMAGE='$(touch T/pwned)'
RAMBOOT_IMAGE=$(touch T/pwned)
RAMBOOT_IMAGE=/a;touch T/pwned
RAMBOOT_IMAGE=`touch T/pwned`
RAMBOOT_IMAGE='/a'b'
RAMBOOT_IMAGE='/a'\''
RAMBOOT_IMAGE='/a
RAMBOOT_IMAGE=/a b
RAMBOOT_IMAGE=''
RAMBOOT_IMAGE=
RAMBOOT_IMAGE='/a'\'b'
X=1 RAMBOOT_IMAGE=/a
 RAMBOOT_IMAGE=/a
EOF
	sed -i "s|T/pwned|$T/pwned|" "$T/cases"
	run busybox sh -c ". '$LIB'
		while IFS= read -r l; do
			if p=\$(ramboot_parse_out \"\$l\"); then echo \"ok <\$p>\"; else echo no; fi
		done <'$T/cases'
		ramboot_parse_out 'RAMBOOT_IMAGE=/a
RAMBOOT_IMAGE=/b' || echo no
		set | grep '^RAMBOOT_IMAGE=' || :"
	assert_success
	assert_output "ok </run/ramboot/ram/x86_64.img>
ok </dev/zram0>
ok </run/ramboot/ram/a b.img>
ok </run/it's.img>
ok <'>
ok </a';touch $T/pwned>
ok <\$(touch $T/pwned)>
no
no
no
no
no
no
no
no
no
no
no
no
no"
	[ ! -e "$T/pwned" ]
}

# The initramfs-tools boot script, sourced with ramboot_lib_only so
# that mount/umount/modprobe are shell functions logging their calls.
# $1: the status of the stubbed mount.
initramfs() {
	[ -e "$T/cmdline" ] || echo "ramboot=ram" >"$T/cmdline"
	cat >"$T/it.sh" <<EOF
mount() { echo "mount \$*" >>"$T/log"; return ${1:-0}; }
umount() { echo "umount \$*" >>"$T/log"; }
modprobe() { :; }
if [ -f '$T/it-extra.sh' ]; then . '$T/it-extra.sh'; fi
rootmnt='$T/root'
ROOT=
ramboot_bin='$T/ramboot'
ramboot_dir='$T/run'
ramboot_ltsp='$T/no-ltsp'
ramboot_lib='${IT_LIB:-$LIB}'
ramboot_cmdline='$T/cmdline'
ramboot_conf='$T/no-ramboot.conf'
ramboot_lib_only=1
. '$SCRIPT'
ramboot_main
echo "status=\$?"
EOF
	run busybox sh "$T/it.sh"
}

# What the stubbed mounts show at the future root.
it_root() {
	mkdir -p "$T/run/root/etc" "$T/run/root/sbin"
	: >"$T/run/root/sbin/init"
}

@test "hooks: initramfs-tools: prereqs, and nothing to do without a RAM copy" {
	run busybox sh "$SCRIPT" prereqs
	assert_success
	assert_output ""
	stub ""
	initramfs
	assert_success
	assert_line "status=0"
	no_grep -q "^mount" "$T/log"
	no_grep -q -- --drop "$T/log"
}

@test "hooks: initramfs-tools: squashfs copy goes under an overlay, then replaces the root" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	it_root
	report squashfs
	initramfs
	assert_success
	assert_line "status=0"
	run grep -E '^u?mount' "$T/log"
	assert_output "mount -t squashfs -o ro,loop $T/ram/x86_64.img $T/run/ro
mount -t tmpfs -o mode=0755 tmpfs $T/run/rw
mount -t overlay -o lowerdir=$T/run/ro,upperdir=$T/run/rw/up,workdir=$T/run/rw/work overlay $T/run/root
mount -o move $T/root $T/run/net
mount -o move $T/run/root $T/root
umount $T/run/net"
	no_grep -q -- --drop "$T/log"
}

@test "hooks: initramfs-tools: ext4 on zram is mounted read-write, directly" {
	dev=$(find /dev -maxdepth 1 -type b -print 2>/dev/null | head -n 1)
	[ -n "$dev" ] || skip "no block device node in /dev"
	stub "RAMBOOT_IMAGE=$dev"
	it_root
	report ext4 "$dev"
	initramfs
	assert_success
	run grep -E '^mount -t' "$T/log"
	assert_output "mount -t ext4 -o rw $dev $T/run/root"
}

@test "hooks: initramfs-tools: a failed mount drops the copy" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	initramfs 1
	assert_success
	assert_line "status=0"
	dropped "$T/ram/x86_64.img" "cannot mount the RAM copy"
	no_grep -q "move" "$T/log"
}

@test "hooks: initramfs-tools: an image without init does not replace the root" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mkdir -p "$T/run/root/etc"
	report ext4
	initramfs
	assert_success
	assert_line "status=0"
	grep -q "^mount -t ext4 -o rw,loop" "$T/log"
	no_grep -q "move" "$T/log"
	dropped "$T/ram/x86_64.img" "no root file system in the RAM copy"
}

@test "hooks: initramfs-tools: an init that is an absolute symlink is an init" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mkdir -p "$T/run/root/etc" "$T/run/root/sbin"
	ln -s /nonexistent/lib/systemd/systemd "$T/run/root/sbin/init"
	report ext4
	initramfs
	assert_success
	grep -qx "mount -o move $T/run/root $T/root" "$T/log"
	no_grep -q -- --drop "$T/log"
}

@test "hooks: initramfs-tools: no fstype in the report: no guess, the copy is dropped" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	it_root
	report ""
	initramfs
	assert_success
	assert_line "status=0"
	no_grep -q "^mount" "$T/log"
	dropped "$T/ram/x86_64.img" "unknown file system"
}

@test "hooks: initramfs-tools: the root cannot be replaced: the copy is dropped" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	it_root
	report squashfs
	cat >"$T/it-move.sh" <<EOF
mount() {
	echo "mount \$*" >>"$T/log"
	case "\$*" in "-o move $T/run/root "*) return 1 ;; esac
}
EOF
	initramfs
	sed -i "s|^mount() .*|. '$T/it-move.sh'|" "$T/it.sh"
	: >"$T/log"
	run busybox sh "$T/it.sh"
	assert_success
	assert_line "status=0"
	grep -qx "mount -o move $T/run/net $T/root" "$T/log"    # moved back
	dropped "$T/ram/x86_64.img" "cannot replace the root mount"
}

@test "hooks: initramfs-tools: multi-line output is never evaluated; the copy is dropped" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img
touch $T/evaluated"
	it_root
	report squashfs
	initramfs
	assert_success
	assert_line "status=0"
	[ ! -e "$T/evaluated" ]
	no_grep -q "^mount" "$T/log"
	dropped "$T/ram/x86_64.img" "bad ramboot boot output"
	# a quoted name spanning two lines
	: >"$T/ram/a
b.img"
	stub "RAMBOOT_IMAGE='$T/ram/a
b.img'"
	report squashfs "$T/ram/a b.img"
	: >"$T/log"
	initramfs
	assert_success
	no_grep -q "^mount" "$T/log"
	dropped "$T/ram/a b.img" "bad ramboot boot output"
}

@test "hooks: initramfs-tools: a missing library: nothing is run" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	IT_LIB=$T/missing-lib.sh initramfs
	assert_success
	assert_line "status=0"
	assert_line --partial "missing-lib.sh missing"
	run cat "$T/log"
	assert_output ""
}

# The two hooks take the same copies and refuse the same ones: the LTSP
# hook switches IMAGE exactly when the boot script moves the copy in,
# and both drop the same path for the same reason otherwise.
@test "hooks: ltsp and initramfs-tools accept and refuse the same outputs and reports" {
	mkdir -p "$T/ram/it's"
	: >"$T/ram/it's/x.img"
	while IFS='|' read -r out fstype want; do
		out=$(printf '%b' "$out")
		stub "$out"
		report "$fstype"
		check_root
		it_root
		: >"$T/log"
		ltsp "images/x86_64.img"
		assert_success
		if grep -qx "IMAGE=images/x86_64.img" <<<"$output"; then l=refused; else l=used; fi
		l="$l $(grep -- --drop "$T/log" || :)"
		: >"$T/log"
		initramfs
		assert_success
		if grep -q "^mount -o move $T/run/root" "$T/log"; then i=used; else i=refused; fi
		i="$i $(grep -- --drop "$T/log" || :)"
		echo "$out | $fstype: ltsp: $l; initramfs-tools: $i"
		[ "$l" = "$i" ]
		[ "${l%% *}" = "$want" ]
	done <<EOF
RAMBOOT_IMAGE=$T/ram/x86_64.img|squashfs|used
RAMBOOT_IMAGE='$T/ram/it'\\''s/x.img'|squashfs|used
RAMBOOT_IMAGE=$T/ram/x86_64.img||refused
RAMBOOT_IMAGE=$T/ram/x86_64.img\\nmore|squashfs|refused
RAMBOOT_IMAGE='$T/ram/x86_64.img|squashfs|refused
RAMBOOT_IMAGE=$T/ram/missing.img|squashfs|refused
RAMBOOT_IMAGE=\$(echo $T/ram/x86_64.img)|squashfs|refused
|squashfs|refused
EOF
}

@test "hooks: order.conf puts the boot script first in init-bottom/ORDER, once" {
	mkdir -p "$T/scripts/init-bottom"
	: >"$T/scripts/init-bottom/ramboot"
	echo '/scripts/init-bottom/udev "$@"' >"$T/scripts/init-bottom/ORDER"
	sed "s|/scripts/|$T/scripts/|g" "$TOP/initrd-hooks/initramfs-tools/order.conf" >"$T/order.conf"
	# ORDER lines name /scripts/... : match on that
	sed -i "s|'\\^$T/scripts/init-bottom/ramboot '|'^/scripts/init-bottom/ramboot '|" "$T/order.conf"
	sed -i "s|'$T/scripts/init-bottom/ramboot \"\$@\"'|'/scripts/init-bottom/ramboot \"\$@\"'|" "$T/order.conf"
	busybox sh -c ". '$T/order.conf'; . '$T/order.conf'"
	run cat "$T/scripts/init-bottom/ORDER"
	assert_output '/scripts/init-bottom/ramboot "$@"
[ -e /conf/param.conf ] && . /conf/param.conf
/scripts/init-bottom/udev "$@"'
}

# ---- ramboot=lazy in initramfs-tools: the read-only loop device ----

# A stub `ramboot` for the lazy phases: `boot --query` answers mode $1
# and image $2; every call is logged, others print nothing.
qstub() {
	cat >"$T/ramboot" <<EOF
#!/bin/sh
echo "args: \$*" >>"$T/log"
case "\$*" in *--query*) printf 'mode=%s\nimage=%s\n' '$1' '$2' ;; esac
exit 0
EOF
	chmod +x "$T/ramboot"
}

# A block device node to stand for the root device (never opened).
blockdev() {
	find /dev -maxdepth 1 -type b -print 2>/dev/null | head -n 1
}

# A stub losetup (a shell function: busybox sh runs its own applets
# before anything in PATH): -f names /dev/loop7, the rest is logged and
# returns $2; the fixture /sys says loop7 is read-only ($1, default 1).
# Sourced by the init-bottom and local-premount runs (it-extra.sh).
losetup_stub() {
	mkdir -p "$T/sys/block/loop7"
	echo "${1:-1}" >"$T/sys/block/loop7/ro"
	cat >"$T/it-extra.sh" <<EOF
losetup() {
	case "\$1" in -f) echo /dev/loop7; return 0 ;; esac
	echo "losetup \$*" >>"$T/log"
	return ${2:-0}
}
blkid() { echo squashfs; }
ramboot_sys='$T/sys'
EOF
}

# The local-premount phase with ROOT set, sourced like the init-bottom
# runs above (stubs as shell functions).
premount() { # root
	: >>"$T/param.conf"
	[ -e "$T/cmdline" ] || echo "ramboot=lazy" >"$T/cmdline"
	cat >"$T/pm.sh" <<EOF
modprobe() { :; }
if [ -f '$T/it-extra.sh' ]; then . '$T/it-extra.sh'; fi
ROOT='$1'
ramboot_bin='$T/ramboot'
ramboot_dir='$T/run'
ramboot_lib='$LIB'
ramboot_param='$T/param.conf'
ramboot_cmdline='$T/cmdline'
ramboot_conf='$T/no-ramboot.conf'
ramboot_lib_only=1
. '$SCRIPT'
ramboot_premount_main
EOF
	run busybox sh "$T/pm.sh"
}

@test "hooks: the script's phase is the name it runs by: scripts/local-premount/ramboot" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	qstub off "$dev"
	mkdir -p "$T/scripts/local-premount" "$T/scripts/init-bottom"
	ln -s "$SCRIPT" "$T/scripts/local-premount/ramboot"
	ln -s "$SCRIPT" "$T/scripts/init-bottom/ramboot"
	echo "ramboot=off" >"$T/cmdline"
	export ramboot_cmdline=$T/cmdline ramboot_conf=$T/no-ramboot.conf
	run env ROOT="$dev" ramboot_bin="$T/ramboot" ramboot_dir="$T/run" ramboot_lib="$LIB" \
		busybox sh "$T/scripts/local-premount/ramboot"
	assert_success
	run cat "$T/log"
	assert_output "args: boot --query --default-image=$dev"
	: >"$T/log"
	run env ROOT="$dev" ramboot_bin="$T/ramboot" ramboot_dir="$T/run" ramboot_lib="$LIB" \
		ramboot_ltsp="$T/no-ltsp" busybox sh "$T/scripts/init-bottom/ramboot"
	assert_success
	run cat "$T/log"
	assert_output "args: boot --query --default-image=$dev
args: boot --default-image=$dev"
}

@test "hooks: local-premount: ramboot=lazy puts a block device root on a read-only loop device" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	qstub lazy "$dev"
	losetup_stub
	premount "$dev"
	assert_success
	assert_output "ramboot: local-premount: root $dev through the read-only loop device /dev/loop7"
	grep -qFx "args: boot --query --default-image=$dev" "$T/log"
	grep -qFx "losetup -r /dev/loop7 $dev" "$T/log"
	run cat "$T/param.conf"
	assert_output "ROOT=/dev/loop7"
	run cat "$T/run/root-loop"
	assert_output "source=$dev
loop=/dev/loop7"
	# what initramfs-tools' ORDER does next: ROOT is the loop device
	run busybox sh -c "ROOT=$dev; . '$T/param.conf'; echo \$ROOT"
	assert_output /dev/loop7
}

@test "hooks: local-premount: another mode, or an image file named by a setting: nothing is set up" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	losetup_stub
	for q in "ram $dev" "off $dev" "prefetch $dev" "lazy $T/root/images/x86_64.img" "lazy"; do
		# shellcheck disable=SC2086 # mode and image
		qstub $q
		: >"$T/log"
		premount "$dev"
		assert_success
		assert_output ""
		no_grep -q "^losetup" "$T/log"
		[ ! -s "$T/param.conf" ]
		[ ! -e "$T/run/root-loop" ]
	done
	# a root that is no block device is not even asked about
	qstub lazy "$T/ram/x86_64.img"
	: >"$T/log"
	premount "$T/ram/x86_64.img"
	assert_success
	run cat "$T/log"
	assert_output ""
}

@test "hooks: local-premount: a loop device that is not read-only is undone; the root is mounted as before" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	qstub lazy "$dev"
	losetup_stub 0
	premount "$dev"
	assert_success
	assert_output "ramboot: local-premount: no read-only loop device over $dev; mounting $dev itself (no lazy copy)"
	grep -qFx "losetup -d /dev/loop7" "$T/log"
	[ ! -s "$T/param.conf" ]
	[ ! -e "$T/run/root-loop" ]
}

@test "hooks: local-premount: losetup fails: one line, the root is mounted as before" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	qstub lazy "$dev"
	losetup_stub 1 1
	premount "$dev"
	assert_success
	assert_output "ramboot: local-premount: no read-only loop device over $dev; mounting $dev itself (no lazy copy)"
	[ ! -s "$T/param.conf" ]
	[ ! -e "$T/run/root-loop" ]
}

@test "hooks: init-bottom: after local-premount's loop device, the copier gets the device under it" {
	qstub lazy /dev/nbd0
	printf 'source=/dev/nbd0\nloop=/dev/loop7\n' >"$T/run/root-loop"
	initramfs
	assert_success
	assert_line "status=0"
	run cat "$T/log"
	assert_output "args: boot --mounted --default-image=/dev/nbd0"
	# under LTSP too (over NBD the LTSP hook has no image to act on)
	mkdir -p "$T/no-ltsp/client"
	: >"$T/log"
	initramfs
	assert_success
	run cat "$T/log"
	assert_output "args: boot --mounted --default-image=/dev/nbd0"
}

@test "hooks: init-bottom: ramboot=lazy with an image file mounts it through a read-only loop device" {
	qstub lazy "$T/root/images/x86_64.img"
	: >"$T/root/images/x86_64.img"
	losetup_stub
	it_root
	initramfs
	assert_success
	assert_line "status=0"
	assert_line "ramboot: init-bottom: root file system from $T/run/net/images/x86_64.img through a read-only loop device"
	run grep -E '^(u?mount|losetup|args)' "$T/log"
	assert_output "args: boot --query
mount -o move $T/root $T/run/net
losetup -r /dev/loop7 $T/run/net/images/x86_64.img
mount -t squashfs -o ro /dev/loop7 $T/run/ro
mount -t tmpfs -o mode=0755 tmpfs $T/run/rw
mount -t overlay -o lowerdir=$T/run/ro,upperdir=$T/run/rw/up,workdir=$T/run/rw/work overlay $T/run/root
mount -o move $T/run/root $T/root
args: boot --mounted --image=$T/run/net/images/x86_64.img"
}

@test "hooks: init-bottom: an image file that does not mount: everything undone, the network root kept" {
	qstub lazy "$T/root/images/x86_64.img"
	: >"$T/root/images/x86_64.img"
	losetup_stub
	cat >>"$T/it-extra.sh" <<EOF
mount() {
	echo "mount \$*" >>"$T/log"
	case "\$*" in "-t squashfs "*) return 1 ;; esac
}
EOF
	initramfs
	assert_success
	assert_line "status=0"
	assert_line "ramboot: init-bottom: cannot mount $T/root/images/x86_64.img through a read-only loop device; booting from the network root (no lazy copy)"
	grep -qFx "losetup -d /dev/loop7" "$T/log"
	grep -qFx "mount -o move $T/run/net $T/root" "$T/log"      # moved back
	no_grep -q -- "--image=" "$T/log"
	no_grep -q "^mount -o move $T/run/root" "$T/log"
}

@test "hooks: order.conf adds the local-premount phase once, as a link to the boot script" {
	mkdir -p "$T/scripts/init-bottom" "$T/scripts/local-premount"
	: >"$T/scripts/init-bottom/ramboot"
	echo '/scripts/local-premount/resume "$@"' >"$T/scripts/local-premount/ORDER"
	sed "s|/scripts/|$T/scripts/|g" "$TOP/initrd-hooks/initramfs-tools/order.conf" >"$T/order.conf"
	# ORDER lines name /scripts/... : match on that; the link is relative
	sed -i -e "s|'\\^$T/scripts/local-premount/ramboot '|'^/scripts/local-premount/ramboot '|" \
		-e "s|'$T/scripts/local-premount/ramboot \"\$@\"'|'/scripts/local-premount/ramboot \"\$@\"'|" \
		-e "s|ln -s ../init-bottom|ln -s ../init-bottom|" "$T/order.conf"
	busybox sh -c ". '$T/order.conf'; . '$T/order.conf'"
	run cat "$T/scripts/local-premount/ORDER"
	assert_output '/scripts/local-premount/resume "$@"
/scripts/local-premount/ramboot "$@"
[ -e /conf/param.conf ] && . /conf/param.conf'
	[ "$(readlink "$T/scripts/local-premount/ramboot")" = ../init-bottom/ramboot ]
}

# ramboot.url= and no network root: a stub ramboot that names a URL
# (--query, its timeout in $T/timeout) and makes a copy; the network is
# down until the stubbed configure_networking ($T/functions) brings it up.
url_stub() { # configure_networking's body
	cat >"$T/ramboot" <<EOF
#!/bin/sh
echo "args: \$*" >>"$T/log"
case "\$*" in
*--query*) printf 'mode=ram\nimage=\nurl=http://10.0.2.2/x.img\ntimeout=%s\n' "\$(cat "$T/timeout")" ;;
*--drop=*) ;;
*) echo "RAMBOOT_IMAGE=$T/ram/x86_64.img" ;;
esac
EOF
	chmod +x "$T/ramboot"
	printf 'configure_networking() {\n%s\n}\n' "$1" >"$T/functions"
	mkdir -p "$T/runnet"
	LTSP_PRE="ip() { [ ! -e '$T/up' ] || echo '2: eth0    inet 10.0.2.15/24 brd 10.0.2.255 scope global eth0'; }
ramboot_functions='$T/functions' ramboot_run='$T/runnet' ramboot_cmdline='$T/cmdline'
IP=dhcp; RAMBOOT_URL=http://10.0.2.2/x.img"
	export LTSP_PRE
}

@test "hooks: ltsp: ramboot.url= without ltsp.image (boot=ramboot): the network brought up, IMAGE is the RAM copy" {
	# its first ipconfig round fails, as DHCP's first often does: under
	# LTSP's set -e that must not end it
	url_stub "false; echo \"configure_networking IP=\$IP\" >>'$T/log'; : >'$T/up'"
	echo 5 >"$T/timeout"
	report squashfs
	check_root
	ltsp ""
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/ram/x86_64.img"
	assert_line "IMAGE_TO_RAM=0"
	refute_line --regexp "^leak: ramboot_(q|url|n|k|pp|w|src|out)$"
	assert_line --partial "bringing the network up for ramboot.url= (at most 5 s)"
	grep -qx "configure_networking IP=dhcp" "$T/log"
	# no network image: no --image, and nothing unmounted
	grep -qx "args: boot" "$T/log"
	no_grep -q "umount $T/root" "$T/log"
	# the network up already: not touched again
	: >"$T/log"
	ltsp ""
	assert_line "IMAGE=$T/ram/x86_64.img"
	no_grep -q "configure_networking" "$T/log"
}

@test "hooks: ltsp: ramboot.url=: a network that does not come up costs the bound, then the boot decides" {
	url_stub "echo started >>'$T/log'; sleep 100"
	echo 1 >"$T/timeout"
	report squashfs
	check_root
	SECONDS=0
	ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	[ "$SECONDS" -lt 20 ]
	assert_line --partial "the network did not come up in time"
	grep -qx "started" "$T/log"
	# the copy is still asked for (the boot falls back when the server
	# cannot be reached), and the sleep of configure_networking is gone
	grep -qx "args: boot --image=$T/root/images/x86_64.img" "$T/log"
	run pgrep -f "sleep 100"
	assert_failure
}

@test "hooks: ramboot boot --query names the mode and the image the hooks act on" {
	bin=${RAMBOOT_BIN:-$TOP/ramboot}
	[ -x "$bin" ] || skip "$bin not built"
	mkdir -p "$T/fx/proc" "$T/fx/run"
	run env RAMBOOT_ROOT="$T/fx" "$bin" boot --query --cmdline="ramboot=lazy" --default-image=/dev/nbd0
	assert_success
	assert_output "mode=lazy
image=/dev/nbd0"
	run env RAMBOOT_ROOT="$T/fx" rootmnt=/root "$bin" boot --query \
		--cmdline="ramboot=lazy ltsp.image=images/x.img" --default-image=/dev/nbd0
	assert_success
	assert_output "mode=lazy
image=$T/fx/root/images/x.img"
	run env RAMBOOT_ROOT="$T/fx" "$bin" boot --query --cmdline="quiet"
	assert_success
	assert_output "mode=off
image="
	# nothing made: no report
	[ ! -e "$T/fx/run/ramboot" ]
	run "$bin" boot --query --drop=/x
	assert_failure 2
}

@test "hooks: initramfs-tools: not asked for (no ramboot switch, nothing in ramboot.conf): ramboot is not run" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	report squashfs
	echo "root=/dev/vda quiet rambootx=1" >"$T/cmdline"
	initramfs
	assert_success
	assert_output "status=0"
	# neither ramboot nor a mount ran
	[ ! -s "$T/log" ]
	# a RAMBOOT setting in ramboot.conf asks for it
	echo "RAMBOOT=ram" >"$T/no-ramboot.conf"
	initramfs
	grep -q '^args: boot' "$T/log"
}

@test "hooks: initramfs-tools local-premount: not asked for: no loop device, no query" {
	dev=$(blockdev)
	[ -n "$dev" ] || skip "no block device node in /dev"
	qstub lazy "$dev"
	echo "root=$dev quiet" >"$T/cmdline"
	premount "$dev"
	assert_success
	[ ! -s "$T/log" ]
	[ ! -s "$T/param.conf" ]
}
