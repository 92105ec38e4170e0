#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The README's install section and the admin guide, followed end to end
# as an admin would, with the Debian package of the tree and Debian's
# real `ltsp`: the package installed (`dpkg --root` into a throwaway
# root), `ltsp initrd`, the example appended to ltsp.conf with
# INCLUDE=ramboot, the signing key made and its public half put where
# `ltsp initrd` packs it, `ltsp image` twice, `ltsp image --revert`,
# `ltsp ipxe`. What is checked is what the admin sees: each image's
# manifest beside it, signed, readable by all; the hook and the public
# key in ltsp.img, the private key nowhere; the revert bringing back the
# previous image with its manifest; ltsp.ipxe's lines.
#
# Each `ltsp` runs in a mount namespace of its own: the package's
# /usr/share, /usr/sbin and /usr/lib over the host's (read-only
# overlays), the test's /etc/ltsp bound over the host's, a tmpfs on /run,
# BASE_DIR and TFTP_DIR in the test's directory. Nothing of the host is
# written. No network is used: the chroot is a small tree made here
# (so `ltsp image --cleanup=0`: LTSP's cleanup runs the chroot's own
# tools), and no client boots (tests/boot/ does that).

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load helpers/ltsp
load helpers/deb

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
DEB_DIR=$TOP/build/pkg-e2e

setup_file() {
	if ! deb_build >"$BATS_FILE_TMPDIR/no-deb"; then
		return 0
	fi
	rm -f "$BATS_FILE_TMPDIR/no-deb"
}

setup() {
	T=$BATS_TEST_TMPDIR
	R=$T/pkgroot
	IMAGES=$T/srv/images
	IMG=$IMAGES/x86_64.img
	TFTP=$T/tftp/ltsp
	need_ltsp_run
	if [ -f "$BATS_FILE_TMPDIR/no-deb" ]; then
		case $(cat "$BATS_FILE_TMPDIR/no-deb") in
		*"not installed"*) skip "$(cat "$BATS_FILE_TMPDIR/no-deb")" ;;
		*) fail "$(cat "$BATS_FILE_TMPDIR/no-deb")" ;;
		esac
	fi
	command -v cpio >/dev/null || skip "no cpio"
	run deb_install "$R"
	assert_success
	# /etc/ltsp as the package leaves it, ltsp.conf the admin's own
	mkdir -p "$T/etc-ltsp"
	cp -a "$R/etc/ltsp/." "$T/etc-ltsp/"
	printf '%s\n' '[server]' '' '[clients]' '# the lab' 'KEYMAP=us' >"$T/etc-ltsp/ltsp.conf"
}

# ltsp ARGS: Debian's `ltsp ARGS` on the server the package is installed
# on, as root runs it (the package's ramboot in PATH, no RAMBOOT_BIN).
ltsp() {
	mkdir -p "$T/srv" "$TFTP"
	cat >"$T/ns.sh" <<EOF
set -e
mount -t tmpfs tmpfs /run
for d in /usr/share /usr/sbin /usr/lib; do
	mount -t overlay overlay -o "lowerdir=$R\$d:\$d" "\$d"
done
mount --bind '$T/etc-ltsp' /etc/ltsp
export BASE_DIR='$T/srv' TFTP_DIR='$T/tftp'
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec '$LTSP' "\$@"
EOF
	run --separate-stderr env -u RAMBOOT_BIN unshare -m sh "$T/ns.sh" "$@"
}

# cpio_list FILE: the paths of an initrd (uncompressed, or gzip, xz or
# zstd), one a line
cpio_list() {
	local dec
	for dec in cat "gzip -dc" "xz -dc" "zstd -dc"; do
		if $dec <"$1" 2>/dev/null | cpio -it 2>/dev/null; then
			return 0
		fi
	done
	return 1
}

# The admin's own ltsp.conf with line $1 added below [server].
server_line() {
	sed -i "/^\[server\]\$/a $1" "$T/etc-ltsp/ltsp.conf"
}

# The signed manifest $1 checks against the public key in ltsp.img's tree.
assert_signed() {
	run "$R/usr/sbin/ramboot" sign --check --keys="$T/etc-ltsp/ramboot/keys" "$1"
	assert_success
}

# The manifest beside image $1 is the image's, and readable by all.
assert_published() {
	[ -f "$1.manifest" ] || fail "no $1.manifest"
	[ "$(man_sha "$1.manifest")" = "$(img_sha "$1")" ] || fail "$1.manifest is not ${1##*/}'s"
	[ "$(stat -c %a "$1.manifest")" = 644 ] || fail "$1.manifest: mode $(stat -c %a "$1.manifest")"
}

@test "README and admin guide, end to end: install, ltsp initrd, INCLUDE=ramboot, keys, ltsp image, --revert" {
	# README, "Install": the package, then ltsp initrd
	ltsp initrd
	assert_success
	run cpio_list "$TFTP/ltsp.img"
	assert_success
	assert_line etc/ltsp/ramboot/ltsp-hook.sh
	assert_line etc/ltsp/ramboot/ramboot-lib.sh

	# the example appended, INCLUDE=ramboot in the admin's [clients]
	cat "$R/usr/share/doc/ramboot/examples/ltsp.conf" >>"$T/etc-ltsp/ltsp.conf"
	sed -i '/^\[clients\]$/a INCLUDE=ramboot\nRAMBOOT=ram' "$T/etc-ltsp/ltsp.conf"
	# admin guide, "Publishing an image": the keys, once
	install -d -m 0700 "$T/root/ramboot"
	run "$R/usr/sbin/ramboot" keygen "$T/root/ramboot/lab.key"
	assert_success
	mkdir -p "$T/etc-ltsp/ramboot/keys"
	cp "$T/root/ramboot/lab.key.pub" "$T/etc-ltsp/ramboot/keys/"
	server_line "RAMBOOT_PUBLISH_KEY=$T/root/ramboot/lab.key"
	server_line 'RAMBOOT_PUBLISH_OPTIONS=--verity'
	ltsp initrd
	assert_success
	run cpio_list "$TFTP/ltsp.img"
	assert_success
	assert_line etc/ltsp/ramboot/ltsp-hook.sh
	assert_line etc/ltsp/ramboot/keys/lab.key.pub
	refute_line --regexp 'lab\.key$'
	mkdir "$T/img"
	(cd "$T/img" && cpio -id etc/ltsp/ltsp.conf <"$TFTP/ltsp.img" 2>/dev/null)
	grep -qx 'INCLUDE=ramboot' "$T/img/etc/ltsp/ltsp.conf"
	grep -q '^PRE_INITRD_BOTTOM_RAMBOOT=.*/etc/ltsp/ramboot/ltsp-hook.sh' "$T/img/etc/ltsp/ltsp.conf"

	# ltsp image: the image, its manifest beside it, signed, its hash tree
	make_chroot aaaa
	ltsp image --cleanup=0 x86_64
	assert_success
	assert_line "ramboot: publishing $IMG"
	assert_line --regexp "^$IMG\\.manifest: [0-9]+ bytes, sha256 [0-9a-f]{64}, [0-9]+ chunks, verity, signed by key [0-9a-f]{16}\$"
	assert_published "$IMG"
	assert_signed "$IMG.manifest"
	verity=$(sed -n 's/^verity-hash //p' "$IMG.manifest")
	[ -f "$IMAGES/$verity" ]
	first=$(img_sha "$IMG")
	cp "$IMG.manifest" "$T/first.manifest"

	# a rebuild: the new image published, the previous one kept as .old
	# with its own manifest
	make_chroot bbbb
	ltsp image --cleanup=0 x86_64
	assert_success
	assert_published "$IMG"
	assert_published "$IMG.old"
	[ "$(img_sha "$IMG.old")" = "$first" ]
	second=$(img_sha "$IMG")
	[ "$second" != "$first" ]
	cmp "$IMG.old.manifest" "$T/first.manifest"

	# ltsp image --revert: the previous image and its manifest, the one
	# reverted from kept for the next --revert
	ltsp image --revert x86_64
	assert_success
	[ "$(img_sha "$IMG")" = "$first" ]
	cmp "$IMG.manifest" "$T/first.manifest"
	assert_published "$IMG"
	assert_published "$IMG.old"
	[ "$(img_sha "$IMG.old")" = "$second" ]
	assert_signed "$IMG.manifest"
	assert_signed "$IMG.old.manifest"
	[ -f "$IMAGES/$(sed -n 's/^verity-hash //p' "$IMG.manifest")" ]
	[ -f "$IMAGES/$(sed -n 's/^verity-hash //p' "$IMG.old.manifest")" ]
}

@test "admin guide, ltsp.ipxe: RAMBOOT_IPXE_INITRDS in [server], then ltsp ipxe: the menu loads the extra initrd" {
	cat "$R/usr/share/doc/ramboot/examples/ltsp.conf" >>"$T/etc-ltsp/ltsp.conf"
	sed -i '/^\[clients\]$/a INCLUDE=ramboot' "$T/etc-ltsp/ltsp.conf"
	ipxe_binaries
	make_chroot aaaa
	ltsp image --cleanup=0 x86_64
	assert_success
	ltsp ipxe
	assert_success
	# without the setting: LTSP's menu as LTSP writes it
	run grep -c '^kernel /ltsp/${img}/vmlinuz initrd=ltsp.img initrd=initrd.img ${cmdline}$' \
		"$TFTP/ltsp.ipxe"
	assert_output 1
	grep -q x86_64 "$TFTP/ltsp.ipxe"

	server_line 'RAMBOOT_IPXE_INITRDS=ramboot-udpcast.img'
	ltsp ipxe
	assert_success
	run grep -A2 -x 'clear ramboot_initrds ||' "$TFTP/ltsp.ipxe"
	assert_output - <<'EOF'
clear ramboot_initrds ||
initrd /ltsp/ramboot-udpcast.img && set ramboot_initrds ${ramboot_initrds} initrd=ramboot-udpcast.img ||
kernel /ltsp/${img}/vmlinuz initrd=ltsp.img ${ramboot_initrds} initrd=initrd.img ${cmdline}
EOF
	# the image still in the menu, its manifest beside it
	grep -q x86_64 "$TFTP/ltsp.ipxe"
	assert_published "$IMG"
}
