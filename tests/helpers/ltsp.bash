# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What the bats files that run Debian's real `ltsp` share
# (tests/ltsp-image.bats, tests/ltsp-e2e.bats): the checks that it can
# run here, a chroot to make an image of, the SHA-256 of an image and of
# its manifest, the iPXE binaries `ltsp ipxe` wants; and (for
# tests/ltsp-image.bats, tests/ltsp-sort.bats) an ltsp.conf, the drop-ins
# and `ltsp` in a mount namespace. The caller sets TOP and T (the test's
# directory), and for the latter CONF, SERVER_SH and DROPINS (the
# example ltsp.conf, initrd-hooks/ltsp-server.sh, initrd-hooks/ltsp).

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

# ltsp.conf as the README has it: a [server] section with the lines
# $2..., [clients] with INCLUDE=ramboot, then the example. $1: the
# server script the drop-ins run (the tree's, or one that is gone).
write_conf() {
	SCRIPT=$1
	shift
	mkdir -p "$T/etc-ltsp"
	{
		echo '[server]'
		printf '%s\n' "$@"
		echo
		echo '[clients]'
		echo 'INCLUDE=ramboot'
		echo
		cat "$CONF"
	} >"$T/etc-ltsp/ltsp.conf"
}

# The drop-ins as the package installs them, into directory $1 (LTSP's
# /usr/share/ltsp, or /run/ltsp: LTSP looks in both), naming $SCRIPT.
install_dropins() {
	local d
	for d in server/image/56-ramboot-image.sh:image.sh server/ipxe/56-ramboot-ipxe.sh:ipxe.sh \
		common/initrd/50-ramboot-initrd.sh:initrd.sh; do
		mkdir -p "$1/$(dirname "${d%%:*}")"
		sed "s|/usr/share/ramboot/ltsp-server.sh|$SCRIPT|g" "$DROPINS/${d#*:}" >"$1/${d%%:*}"
	done
}

# ltsp ARGS: LTSP's own `ltsp ARGS` in a mount namespace, ramboot from
# the tree in PATH (RAMBOOT_BIN, when set, is passed on).
ltsp() {
	mkdir -p "$T/srv" "$T/tftp"
	rm -rf "$T/dropins"
	install_dropins "$T/dropins"
	cat >"$T/ns.sh" <<EOF
set -e
mount -t tmpfs tmpfs /run
mount --bind '$T/etc-ltsp' /etc/ltsp
mkdir -p /run/ltsp
cp -a '$T/dropins/.' /run/ltsp/
export BASE_DIR='$T/srv' TFTP_DIR='$T/tftp' PATH='$TOP':\$PATH
${RAMBOOT_BIN:+export RAMBOOT_BIN='$RAMBOOT_BIN'}
exec '$LTSP' "\$@"
EOF
	run --separate-stderr unshare -m sh "$T/ns.sh" "$@"
}
