# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What the bats files that run Debian's real `ltsp` share
# (tests/ltsp-image.bats, tests/ltsp-e2e.bats): the checks that it can
# run here, a chroot to make an image of, the SHA-256 of an image and of
# its manifest, the iPXE binaries `ltsp ipxe` wants. The caller sets TOP
# and T (the test's directory).

LTSP=/usr/share/ltsp/ltsp

# The real `ltsp` needs root, mount namespaces, overlayfs and squashfs
# (LTSP mounts its sources that way) and mksquashfs.
need_ltsp_run() {
	[ -x "$LTSP" ] || skip "no $LTSP (the ltsp package; tests/deps.sh installs it)"
	[ "$(id -u)" -eq 0 ] || skip "needs root (mounts)"
	[ -d /etc/ltsp ] || skip "no /etc/ltsp to bind a test ltsp.conf over"
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	[ -x "$TOP/ramboot" ] || skip "no ./ramboot (make)"
	unshare -m sh -c 'mount -t tmpfs none /mnt' 2>/dev/null ||
		skip "cannot mount in a mount namespace"
	grep -qw overlay /proc/filesystems || skip "no overlayfs"
}

# A chroot LTSP can make an image of; $1 goes into etc/motd (the same
# length each time: the images then have the same size).
make_chroot() {
	local r=$T/srv/x86_64
	mkdir -p "$r/proc" "$r/etc" "$r/boot" "$r/sbin"
	echo "root:x:0:0:root:/root:/bin/sh" >"$r/etc/passwd"
	printf '%s\n' "$1" >"$r/etc/motd"
	[ -f "$r/boot/vmlinuz-6.1.0-t" ] || head -c 200000 /dev/urandom >"$r/boot/vmlinuz-6.1.0-t"
	echo initrd >"$r/boot/initrd.img-6.1.0-t"
	echo init >"$r/sbin/init"
}

# The SHA-256 a manifest records, and the one of the file it goes with.
man_sha() {
	sed -n 's/^sha256 //p' "$1"
}
img_sha() {
	"$TOP/ramboot" manifest "$1" | sed -n 's/^sha256 //p'
}

# ltsp ipxe finds its binaries in TFTP_DIR/ltsp already (it only copies
# missing ones).
ipxe_binaries() {
	mkdir -p "$T/tftp/ltsp"
	for b in memtest.0 memtest.efi snponly.efi undionly.kpxe; do
		: >"$T/tftp/ltsp/$b"
	done
}
