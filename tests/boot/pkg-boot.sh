#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/pkg-boot.sh - boot initrds built the way the package's users
# build them, from what `make install PREFIX=/usr` (the package's layout)
# installs into a scratch directory, never touching this machine's own
# initramfs:
#
#   itools-mkinitramfs-ram  `mkinitramfs -d CONFDIR` with ramboot's
#                           initramfs-tools hook and boot script in
#                           CONFDIR; root=/dev/vda (a squashfs) with
#                           ramboot=ram: the root is the RAM copy
#   itools-mkinitramfs-off  the same initrd without any ramboot switch:
#                           ramboot does nothing at all (no report in
#                           /run/ramboot), the root is /dev/vda as
#                           without the package
#   dracut-live-ram         Debian's dracut (dracut, dracut-core and
#                           dracut-live, unpacked into build/, not
#                           installed) with the 90ramboot module; a
#                           dmsquash-live boot, root=live:/dev/vda, with
#                           ramboot=ram and the image's SHA-256: dracut's
#                           live root is the verified RAM copy
#   dracut-live-corrupt     the same with a corrupt image: the copy fails
#                           verification, is freed, and dracut boots
#                           from the live device as without ramboot
#   dracut-live-lazy        ramboot=lazy: dracut's live root is mounted
#                           through a loop device over /dev/vda, which the
#                           copier switches to the verified RAM copy
#
# The guest is the client root of tests/boot/run.sh (images/client-init
# prints the ramboot report, the mounts and the loop devices). TAP output.
#
#   RBTEST_CASES=regex   run only the cases whose name matches
#   RBTEST_TIMEOUT=s     per boot (default 240)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   as in tests/boot/run.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
cache=${RBTEST_PKG_CACHE:-$top/build/pkgboot}
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
# shellcheck disable=SC2034 # read by lib.sh's boot_debian
timeout_s=${RBTEST_TIMEOUT:-240}
CASES="itools-mkinitramfs-ram itools-mkinitramfs-off dracut-live-ram dracut-live-corrupt dracut-live-lazy"

# shellcheck disable=SC1091 source=tests/boot/lib.sh
. "$top/tests/boot/lib.sh"

# shellcheck disable=SC2034 # counted by lib.sh's ok, skip and not_ok
n=0
failed=0
# shellcheck disable=SC2086 # one word per case
set -- $CASES
echo "1..$#"

host_why='' kernel='' kver='' qemu_accel='' qemu_accel_why=''
boot_host
case $? in
1) skip_all "$host_why" ;;
2) fail_all "$host_why" ;;
esac
[ "$(id -u)" = 0 ] || skip_all "needs root (mkinitramfs and dracut read /lib/modules and make device nodes)"
for t in busybox mksquashfs cpio mkinitramfs dpkg-deb apt-get; do
	command -v "$t" >/dev/null || skip_all "$t not installed (tests/deps.sh install)"
done
[ -x "$rb" ] || skip_all "static/ramboot missing (make static)"
[ -f build/man/ramboot.8 ] || skip_all "build/man missing (make man): make install needs the man pages"

# shellcheck disable=SC2034 # read by images/qemu-accel.sh's qemu_run
qemu_note_prefix="# "
qemu_accel_choose "$kernel" || fail_all "no accelerator"
echo "# accelerator: $qemu_accel ($qemu_accel_why)"

logs=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-pkgboot.XXXXXX")
trap 'if [ "$failed" -eq 0 ]; then rm -rf "$logs"; else echo "# serial logs kept in $logs"; fi' EXIT
mkdir -p "$cache"

# ---------------------------------------------------------------- artefacts

build_err=
# What the package installs, in a scratch root (PREFIX=/usr as in debian/rules).
dest=$cache/dest
rm -rf "$dest"
make -s install DESTDIR="$dest" PREFIX=/usr > "$cache/install.log" 2>&1 ||
	build_err="make install failed: $(tail -n 3 "$cache/install.log")"
data=$dest/usr/share/ramboot
echo "# ramboot.conf of the package boot tests: defaults" > "$cache/ramboot.conf"

# The client root as a squashfs without data compression, so that the
# corrupt variant can flip bytes in the middle of a file's data (the
# numbers file): the root still boots from it, only its hash is wrong.
bb=$(command -v busybox)
rootkey=$(key images/build-test-root.sh images/client-init "$rb" "$bb")
img=$cache/live.img
bad=$cache/live-bad.img
if [ -z "$build_err" ] && { ! fresh root "$rootkey" || [ ! -f "$bad" ]; }; then
	{
		images/build-test-root.sh "$cache/root" "$rb" &&
		mksquashfs "$cache/root" "$img" -noappend -quiet -all-root -no-progress -noD &&
		off=$(grep -obUa '^150000$' "$img" | head -n 1 | cut -d: -f1) &&
		[ -n "$off" ] &&
		cp "$img" "$bad" &&
		printf '999999' | dd of="$bad" bs=1 seek="$off" conv=notrunc status=none &&
		! cmp -s "$img" "$bad" &&
		rm -rf "$cache/root" &&
		stamp root "$rootkey"
	} > "$cache/build-root.log" 2>&1 || build_err="client image build failed: $(tail -n 3 "$cache/build-root.log")"
fi
# shellcheck disable=SC2034 # read by lib.sh's boot_debian (rbtest.size=)
img_size=$(stat -c %s "$img" 2>/dev/null)
img_sha=$(sha256sum "$img" 2>/dev/null | cut -d' ' -f1)

# ---------------------------------------------------------------- initramfs-tools

itools_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	conf=$cache/itools-conf
	out=$cache/itools.img
	# The hook and the script as the package installs them, the hook
	# pointed at the scratch root instead of /usr/share/ramboot and /etc.
	ikey=$(key "$data/ramboot.static" "$dest/usr/share/initramfs-tools/hooks/ramboot" \
		"$dest/usr/share/initramfs-tools/scripts/init-bottom/ramboot" "$data/hooks/ramboot-lib.sh"; echo "$kver")
	if ! fresh itools "$ikey" || [ ! -f "$out" ]; then
		rm -rf "$conf"
		mkdir -p "$conf/hooks" "$conf/scripts/init-bottom" "$conf/conf.d"
		printf '%s\n' MODULES=list BUSYBOX=y COMPRESS=zstd KEYMAP=n UMASK=0077 > "$conf/initramfs.conf"
		printf '%s\n' virtio_pci virtio_blk squashfs loop overlay zram > "$conf/modules"
		sed -e "s|/usr/share/ramboot/|$data/|g" -e "s|\"/etc/ramboot.conf\"|\"$cache/ramboot.conf\"|g" \
			"$dest/usr/share/initramfs-tools/hooks/ramboot" > "$conf/hooks/ramboot"
		cp "$dest/usr/share/initramfs-tools/scripts/init-bottom/ramboot" "$conf/scripts/init-bottom/ramboot"
		chmod 0755 "$conf/hooks/ramboot" "$conf/scripts/init-bottom/ramboot"
		host_before=$(ls -l --time-style=full-iso /boot/initrd.img-* 2>/dev/null; sha256sum /boot/initrd.img-* 2>/dev/null)
		if ! mkinitramfs -d "$conf" -o "$out.tmp" "$kver" > "$cache/mkinitramfs.log" 2>&1; then
			fail "mkinitramfs -d failed: $(tail -n 3 "$cache/mkinitramfs.log")"
			result "$name"
			return
		fi
		host_after=$(ls -l --time-style=full-iso /boot/initrd.img-* 2>/dev/null; sha256sum /boot/initrd.img-* 2>/dev/null)
		[ "$host_before" = "$host_after" ] || fail "mkinitramfs -d -o changed this machine's /boot/initrd.img-*"
		mv "$out.tmp" "$out"
		stamp itools "$ikey"
	fi
	list=$(lsinitramfs "$out" 2>/dev/null)
	for f in usr/sbin/ramboot scripts/ramboot-lib.sh scripts/init-bottom/ramboot; do
		echo "$list" | grep -qx "$f" || fail "the initrd has no $f"
	done
	if [ -n "$why" ]; then
		result "$name"
		return
	fi
	drive="file=$img,if=virtio,format=raw,readonly=on"
	if [ "$name" = itools-mkinitramfs-off ]; then
		boot_debian "$name" "$out" 512 "root=/dev/vda rootfstype=squashfs ro init=/sbin/rbtest-init" "$drive"
		expect_done || { result "$name"; return; }
		v=$(sed -n '/^RBTEST-REPORT-BEGIN/,/^RBTEST-REPORT-END/p' "$log.txt" | grep -v '^RBTEST-REPORT-')
		[ -z "$v" ] || fail "ramboot wrote a report although nothing asked for it: $v"
		grep -q '^RBTEST mount /dev/vda ' "$log.txt" || fail "the root is not /dev/vda"
		v=$(sed '/^RBTEST-ROOT-REACHED/q' "$log.txt" | grep 'ramboot' | head -n 3)
		[ -z "$v" ] || fail "ramboot said something before the root: $v"
		result "$name"
		return
	fi
	boot_debian "$name" "$out" 512 \
		"root=/dev/vda rootfstype=squashfs ro init=/sbin/rbtest-init ramboot=ram ramboot.sha256=$img_sha" "$drive"
	expect_done || { result "$name"; return; }
	expect mode_done ram
	expect source /dev/vda
	expect hash ok
	expect fstype squashfs
	expect fallback ""
	ram=$(report ram_path)
	grep -q "ramboot: init-bottom: root file system in RAM: $ram\$" "$log.txt" ||
		fail "the boot script did not put the root in RAM"
	grep -q "^RBTEST loop loop[0-9]*=$ram\$" "$log.txt" ||
		fail "no loop device is backed by the RAM copy '$ram'"
	! grep -q '^RBTEST mount /dev/vda ' "$log.txt" || fail "/dev/vda is still mounted"
	v=$(sed -n 's/^RBTEST ram-sha256=//p' "$log.txt" | head -n 1)
	[ "$v" = "$img_sha" ] || fail "RAM copy sha256 '$v', expected $img_sha"
	result "$name"
}

# ---------------------------------------------------------------- dracut

# Debian's dracut, unpacked (installing it would replace initramfs-tools
# as this machine's initramfs generator).
dracut_ready() {
	dx=$cache/dracut-x
	[ -x "$dx/usr/bin/dracut" ] && [ -d "$dx/usr/lib/dracut/modules.d/90dmsquash-live" ] && return 0
	mkdir -p "$cache/debs"
	(cd "$cache/debs" && apt-get download dracut dracut-core dracut-live) > "$cache/dracut-download.log" 2>&1 ||
		{ why="apt-get download dracut dracut-core dracut-live failed: $(tail -n 2 "$cache/dracut-download.log")"; return 1; }
	rm -rf "$dx"
	for d in "$cache"/debs/dracut*.deb; do
		dpkg-deb -x "$d" "$dx" || { why="dpkg-deb -x $d failed"; return 1; }
	done
	[ -x "$dx/usr/bin/dracut" ]
}

dracut_state=
dracut_build() {
	[ -n "$dracut_state" ] && { [ "$dracut_state" = ok ]; return; }
	dracut_state=failed
	why=
	dracut_ready || return 1
	mod=$dest/usr/lib/dracut/modules.d/90ramboot
	out=$cache/dracut.img
	dkey=$(key "$mod"/* "$data/ramboot.static" "$data/hooks/ramboot-lib.sh" \
		"$data/hooks/initramfs-tools/script" "$cache"/debs/*.deb; echo "$kver")
	if ! fresh dracut "$dkey" || [ ! -f "$out" ]; then
		base=$cache/dracut-base
		rm -rf "$base" "$cache/dracut-confd"
		mkdir -p "$cache/dracut-confd"
		cp -a "$dx/usr/lib/dracut" "$base"
		cp -a "$mod" "$base/modules.d/"
		# Only what a live boot needs (and none of this machine's
		# dracut.conf.d); no compression: under emulation the kernel
		# unpacks faster than it inflates.
		if ! dracutbasedir=$base RAMBOOT_DATADIR=$data RAMBOOT_CONF=$cache/ramboot.conf \
			bash "$dx/usr/bin/dracut" --conf /dev/null --confdir "$cache/dracut-confd" \
			--no-hostonly --no-compress -m "base dmsquash-live ramboot" \
			--add-drivers "virtio_blk virtio_pci" --force --kver "$kver" "$out.tmp" \
			> "$cache/dracut.log" 2>&1; then
			why="dracut failed: $(tail -n 3 "$cache/dracut.log")"
			return 1
		fi
		grep -q 'Including module: ramboot' "$cache/dracut.log" ||
			{ why="dracut did not include the ramboot module"; return 1; }
		mv "$out.tmp" "$out"
		stamp dracut "$dkey"
	fi
	dracut_state=ok
}

dracut_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	if ! dracut_build; then
		[ -n "$why" ] || why="dracut build failed earlier"
		result "$name"
		return
	fi
	disk=$img mode=ram
	[ "$name" = dracut-live-corrupt ] && disk=$bad
	[ "$name" = dracut-live-lazy ] && mode=lazy
	boot_debian "$name" "$cache/dracut.img" 512 \
		"root=live:/dev/vda rd.live.image rd.live.overlay.overlayfs=1 rd.shell=0 init=/sbin/rbtest-init ramboot=$mode ramboot.sha256=$img_sha" \
		"file=$disk,if=virtio,format=raw,readonly=on"
	expect_done || { result "$name"; return; }
	expect mode_asked "$mode"
	expect source /dev/vda
	case $name in
	dracut-live-lazy)
		expect mode_done lazy
		expect fallback ""
		expect_set lazy_switched
		v=$(sed -n 's/^RBTEST lazy state=//p' "$log.txt" | head -n 1)
		[ "$v" = switched ] || fail "lazy copy: state='$v', expected switched"
		v=$(sed -n 's/^RBTEST lazy sha256=//p' "$log.txt" | head -n 1)
		[ "$v" = "$img_sha" ] || fail "lazy copy: sha256 '$v', expected $img_sha"
		# the loop device the live root is mounted from reads the copy
		expect_loop_mount '/run/ramboot/ram/.*' /run/rootfsbase
		grep -q '^RBTEST lazy-read=ok$' "$log.txt" || fail "reading every file of the root failed"
		expect_no_leftover
		;;
	dracut-live-ram)
		expect mode_done ram
		expect hash ok
		expect fstype squashfs
		expect fallback ""
		ram=$(report ram_path)
		grep -q "^ramboot: dracut: live image in RAM: $ram\$" "$log.txt" ||
			fail "ramboot-live-root did not hand the copy to dmsquash-live-root"
		# dmsquash-live-root set the live root up on the copy: the
		# overlay's lower layer is the squashfs on a loop device over it
		expect_loop_mount "$ram" /run/rootfsbase
		grep -q '^RBTEST mount LiveOS_rootfs / overlay .*lowerdir=/run/rootfsbase' "$log.txt" ||
			fail "/ is not dracut's live overlay"
		v=$(sed -n 's/^RBTEST ram-sha256=//p' "$log.txt" | head -n 1)
		[ "$v" = "$img_sha" ] || fail "RAM copy sha256 '$v', expected $img_sha"
		;;
	dracut-live-corrupt)
		expect mode_done off
		expect hash mismatch
		expect fallback "hash mismatch"
		expect ram_path ""
		grep -q '^RBTEST mount /dev/vda /run/rootfsbase squashfs ' "$log.txt" ||
			fail "dracut did not boot from the live device /dev/vda"
		! grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/' "$log.txt" ||
			fail "a loop device is backed by a file in /run/ramboot"
		expect_no_leftover
		;;
	esac
	result "$name"
}

pkg_case() {
	case $1 in
	itools-*) itools_case "$1" ;;
	dracut-*) dracut_case "$1" ;;
	esac
}
run_cases pkg_case
[ "$failed" -eq 0 ]
