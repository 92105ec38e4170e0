#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dracut module 90ramboot: ramboot in a dracut-built initramfs.
#
# - root=live: (dmsquash-live): with ramboot=ram|lazy, ramboot makes the
#   copy rd.live.ram would make, streamed, decompressed and verified, and
#   hands it to dracut's /sbin/dmsquash-live-root (ramboot-live-root.sh);
# - other root= boots: the initramfs-tools boot script's logic at
#   pre-pivot, with $NEWROOT as the root mount (ramboot-pre-pivot.sh);
# - LTSP: nothing here; ramboot's LTSP hook runs inside LTSP's
#   initrd-bottom, which ltsp.img brings along with the hook.
# Without ramboot on the kernel command line or in /etc/ramboot.conf the
# hooks return at once and the boot is the one dracut makes without them.
#
# RAMBOOT_DATADIR overrides where the static binary and the hook scripts
# are taken from (the tests build with an uninstalled tree).

ramboot_datadir() {
    echo "${RAMBOOT_DATADIR:-@DATADIR@}"
}

# called by dracut
check() {
    [[ -x "$(ramboot_datadir)/ramboot.static" ]] || return 1
    return 0
}

# called by dracut
depends() {
    return 0
}

# called by dracut
installkernel() {
    # zstd, lz4, lz4hc: the compressors zram asks for by name; dm-verity
    # (with dm-mod) for ramboot.verity=1; ext4 (with jbd2, mbcache,
    # crc16, and crc32c, its soft dependency) for ramboot.cache=
    instmods zram squashfs erofs loop overlay zstd lz4 lz4hc dm-verity ext4 crc32c
}

# called by dracut; moddir is set by dracut
# shellcheck disable=SC2154
install() {
    local d
    d=$(ramboot_datadir)
    inst_simple "$d/ramboot.static" /usr/sbin/ramboot
    inst_simple "$d/hooks/ramboot-lib.sh" /usr/lib/ramboot/ramboot-lib.sh
    inst_simple "$d/hooks/initramfs-tools/script" /usr/lib/ramboot/root-script.sh
    inst_simple "$moddir/ramboot-dracut-lib.sh" /usr/lib/ramboot/ramboot-dracut-lib.sh
    if [[ -f "${RAMBOOT_CONF:-@SYSCONFDIR@/ramboot.conf}" ]]; then
        inst_simple "${RAMBOOT_CONF:-@SYSCONFDIR@/ramboot.conf}" /etc/ramboot.conf
    fi
    # The public keys signed manifests are checked against (ramboot.verify=).
    # Every client gets them: each must be an Ed25519 public key in a
    # regular file, never a link; a private key here is an error.
    local k
    for k in "${RAMBOOT_KEYS:-@SYSCONFDIR@/ramboot/keys}"/*.pub; do
        [[ -e "$k" || -L "$k" ]] || continue
        if ! "$d/ramboot.static" sign --check-key "$k" >/dev/null; then
            dfatal "ramboot: $k: not added to the initramfs"
            exit 1
        fi
        inst_simple "$k" "/etc/ramboot/keys/${k##*/}"
    done
    inst_multiple blkid losetup mount umount mkdir rmdir grep sed modprobe
    inst_script "$moddir/ramboot-live-root.sh" /sbin/ramboot-live-root
    # after dmsquash-live-genrules.sh (pre-udev 30), which writes the
    # rules this one points at ramboot-live-root
    inst_hook pre-udev 31 "$moddir/ramboot-live-genrules.sh"
    inst_hook pre-pivot 50 "$moddir/ramboot-pre-pivot.sh"
}
