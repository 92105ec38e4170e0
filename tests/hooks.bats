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

setup() {
	command -v busybox >/dev/null || skip "no busybox (busybox-static)"
	T=$BATS_TEST_TMPDIR
	mkdir -p "$T/root/images" "$T/ram"
	: >"$T/ram/x86_64.img"
	: >"$T/log"
}

# A stub `ramboot`: logs its arguments and RAMBOOT* environment, prints
# $1 on stdout and exits with $2.
stub() {
	cat >"$T/ramboot" <<EOF
#!/bin/sh
echo "args: \$*" >>"$T/log"
env | grep '^RAMBOOT' | sort >>"$T/log"
cat "$T/out"
exit ${2:-0}
EOF
	chmod +x "$T/ramboot"
	printf '%s' "$1" >"$T/out"
}

# grep that must not match. (`! grep` would not fail a test: errexit
# ignores a negated command.)
no_grep() {
	! grep "$@"
}

# Source the LTSP hook in busybox sh the way LTSP's run_parameters does
# (eval of PRE_INITRD_BOTTOM_RAMBOOT), after LTSP-like state.
# $1: the ltsp.image value kernel_vars sets; $2: rootmnt.
ltsp() {
	cat >"$T/ltsp.sh" <<EOF
kernel_vars() {
	test "\$kernel_vars" = "1" && return 0 || kernel_vars=1
	IMAGE='$1'
}
umount() { echo "umount \$*" >>"$T/log"; }
rootmnt='${2:-$T/root}'
RAMBOOT_BIN='$T/ramboot'
RAMBOOT=ram
RAMBOOT_SWAP_SIZE='min(ram / 2, 4G)'
IMAGE_TO_RAM=1
PRE_INITRD_BOTTOM_RAMBOOT=". $HOOK"
eval "\$PRE_INITRD_BOTTOM_RAMBOOT" || { echo "LTSP boot error!"; exit 1; }
echo "status=\$?"
kernel_vars
echo "IMAGE=\$IMAGE"
echo "IMAGE_TO_RAM=\$IMAGE_TO_RAM"
EOF
	run busybox sh "$T/ltsp.sh"
}

@test "hooks: shellcheck -s sh on every hook" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck -s sh "$HOOK" "$SCRIPT" "$TOP/initrd-hooks/initramfs-tools/hook" \
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
	ltsp "images/x86_64.img,fstype=squashfs,,boot.img,subdir=boot"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=$T/ram/x86_64.img,fstype=squashfs,,boot.img,subdir=boot"
	assert_line "IMAGE_TO_RAM=0"
	run cat "$T/log"
	assert_line "args: boot --image=$T/root/images/x86_64.img"
	assert_line "RAMBOOT=ram"
	assert_line "RAMBOOT_SWAP_SIZE=min(ram / 2, 4G)"
	refute_line --partial "RAMBOOT_BIN"
	refute_line --partial "umount"      # $T/root is no mount point
}

@test "hooks: ltsp: a quoted RAM path with spaces" {
	mkdir -p "$T/ram dir"
	: >"$T/ram dir/x.img"
	stub "RAMBOOT_IMAGE='$T/ram dir/x.img'"
	ltsp "x.img,ro"
	assert_success
	assert_line "IMAGE=$T/ram dir/x.img,ro"
}

@test "hooks: ltsp: the network root is unmounted after a RAM copy" {
	# /proc is a mount point on any Linux: stands in for the root mount
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	ltsp "images/x86_64.img" /proc
	assert_success
	assert_line "IMAGE=$T/ram/x86_64.img"
	grep -qx "umount /proc" "$T/log"
}

@test "hooks: ltsp: failure leaves IMAGE alone and returns 0" {
	stub "" 1
	ltsp "images/x86_64.img,fstype=squashfs" /proc
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img,fstype=squashfs"
	assert_line "IMAGE_TO_RAM=1"
	no_grep -q umount "$T/log"
}

@test "hooks: ltsp: off / prefetch (empty stdout) leaves IMAGE alone" {
	stub ""
	ltsp "images/x86_64.img"
	assert_success
	assert_line "IMAGE=images/x86_64.img"
	assert_line "IMAGE_TO_RAM=1"
}

@test "hooks: ltsp: odd output or a missing copy changes nothing" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img
extra line"
	ltsp "images/x86_64.img"
	assert_line "IMAGE=images/x86_64.img"
	stub "something else"
	ltsp "images/x86_64.img"
	assert_line "IMAGE=images/x86_64.img"
	stub "RAMBOOT_IMAGE=$T/ram/missing.img"
	ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
}

@test "hooks: ltsp: no binary, or an NFS chroot boot (no image): nothing happens" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	ltsp ""
	assert_success
	assert_line "status=0"
	assert_line "IMAGE="
	run cat "$T/log"
	assert_output ""
	rm "$T/ramboot"
	ltsp "images/x86_64.img"
	assert_success
	assert_line "status=0"
	assert_line "IMAGE=images/x86_64.img"
}

# The initramfs-tools boot script, sourced with ramboot_lib_only so
# that mount/umount/modprobe are shell functions logging their calls.
initramfs() { # mount-status
	cat >"$T/it.sh" <<EOF
mount() { echo "mount \$*" >>"$T/log"; return ${1:-0}; }
umount() { echo "umount \$*" >>"$T/log"; }
modprobe() { :; }
rootmnt='$T/root'
ROOT=
ramboot_bin='$T/ramboot'
ramboot_dir='$T/run'
ramboot_ltsp='$T/no-ltsp'
ramboot_lib_only=1
. '$SCRIPT'
ramboot_main
echo "status=\$?"
EOF
	run busybox sh "$T/it.sh"
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
}

@test "hooks: initramfs-tools: squashfs copy goes under an overlay, then replaces the root" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mkdir -p "$T/run/root/etc" "$T/run/root/sbin"
	: >"$T/run/root/sbin/init"
	printf 'mode_done=ram\nfstype=squashfs\nfallback=\n' >"$T/run/report"
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
}

@test "hooks: initramfs-tools: a failed mount falls back and records it" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mkdir -p "$T/run"
	printf 'mode_done=ram\nfstype=squashfs\nfallback=\n' >"$T/run/report"
	initramfs 1
	assert_success
	assert_line "status=0"
	grep -qx "mode_done=off" "$T/run/report"
	grep -qx "fallback=cannot mount the RAM copy" "$T/run/report"
	no_grep -q "move" "$T/log"
	grep -qx "umount $T/run/ram" "$T/log"   # the tmpfs copy is dropped
}

@test "hooks: initramfs-tools: an image without init does not replace the root" {
	stub "RAMBOOT_IMAGE=$T/ram/x86_64.img"
	mkdir -p "$T/run"
	printf 'mode_done=ram\nfstype=ext4\nfallback=\n' >"$T/run/report"
	initramfs
	assert_success
	assert_line "status=0"
	grep -q "^mount -t ext4 -o rw,loop" "$T/log"
	no_grep -q "move" "$T/log"
	grep -qx "fallback=cannot mount the RAM copy" "$T/run/report"
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
