# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot's part of `ltsp initrd`, installed as
# /usr/share/ltsp/common/initrd/50-ramboot-initrd.sh. LTSP runs its
# NAME_main after 35-initrd has copied /etc/ltsp into the new ltsp.img's
# tree and before 65-cpio packs it: ltsp.img is served by TFTP to any
# host of the LAN, so every file of /etc/ltsp/ramboot/keys must be an
# Ed25519 public key. A private key there, or a link, stops `ltsp
# initrd` with its name, and the previous ltsp.img stays. No ltsp.conf
# line is needed; without the ramboot program it does nothing.

ramboot_initrd_main() {
	ramboot_keys=/etc/ltsp/ramboot/keys

	[ -d "$ramboot_keys" ] && [ -n "$(ls -A "$ramboot_keys" 2>/dev/null)" ] || return 0
	command -v ramboot >/dev/null 2>&1 || return 0
	ramboot sign --check-key "$ramboot_keys"/* ||
		die "ramboot: $ramboot_keys may hold Ed25519 public keys only (everything in /etc/ltsp goes into ltsp.img): ltsp.img not written"
}
