# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot's part of `ltsp initrd`, installed as
# /usr/share/ltsp/common/initrd/50-ramboot-initrd.sh. LTSP runs its
# NAME_main after 35-initrd has copied /etc/ltsp into the new ltsp.img's
# tree ($_DST_DIR) and before 65-cpio packs it. No ltsp.conf line is
# needed; without the ramboot program the key check does nothing.
#
# - ltsp.img is served by TFTP to any host of the LAN, so every file of
#   /etc/ltsp/ramboot/keys must be an Ed25519 public key. A private key
#   there, or a link, stops `ltsp initrd` with its name, and the
#   previous ltsp.img stays.
# - Every client downloads ltsp.img at every boot, and 65-cpio packs it
#   uncompressed (it is loaded before the image's initrd.img, whose
#   uncompressed early-microcode cpio the kernel finds only through
#   uncompressed cpio before it: lib/earlycpio.c stops at anything
#   else). The static program (~2 MiB) is most of it. It goes in only
#   when a client runs ramboot's hook, gzip-compressed inside the cpio
#   (the hook unpacks it with zcat); with no client using it, ltsp.img
#   leaves it out, and when an extra initrd of RAMBOOT_IPXE_INITRDS
#   (`ramboot initrd --udpcast`) holds it already. RAMBOOT_LTSP_BINARY
#   ([server] of ltsp.conf): auto (the default, as above), yes (always,
#   compressed), no (never: the clients take the one their own initrd
#   holds).
# - boot=ramboot (ramboot.url=, no NFS or NBD root) needs
#   /scripts/ramboot in the initramfs: moved there from
#   /etc/ltsp/ramboot/boot-ramboot.sh.

ramboot_initrd_main() {
	ramboot_keys=/etc/ltsp/ramboot/keys

	if [ -d "$ramboot_keys" ] && [ -n "$(ls -A "$ramboot_keys" 2>/dev/null)" ] &&
		command -v ramboot >/dev/null 2>&1; then
		ramboot sign --check-key "$ramboot_keys"/* ||
			die "ramboot: $ramboot_keys may hold Ed25519 public keys only (everything in /etc/ltsp goes into ltsp.img): ltsp.img not written"
	fi
	[ -z "${_DST_DIR-}" ] || {
		ramboot_initrd_binary "$_DST_DIR/etc/ltsp/ramboot/ramboot" /etc/ltsp/ltsp.conf
		ramboot_initrd_boot_script "$_DST_DIR"
	}
}

# boot=ramboot (an image over HTTP, no NFS or NBD root): initramfs-tools
# sources /scripts/$BOOT, so the script that 35-initrd copied with
# /etc/ltsp/ramboot goes to ltsp.img's /scripts/ramboot.
ramboot_initrd_boot_script() { # dst
	[ -f "$1/etc/ltsp/ramboot/boot-ramboot.sh" ] || return 0
	if ! mkdir -p "$1/scripts" ||
		! mv "$1/etc/ltsp/ramboot/boot-ramboot.sh" "$1/scripts/ramboot"; then
		die "ramboot: cannot put $1/scripts/ramboot (boot=ramboot): ltsp.img not written"
	fi
}

# Does ltsp.conf $1 run ramboot's hook for any client? Yes when a line
# naming ltsp-hook.sh (not a comment) is in a section that an INCLUDE=
# names, or in any section but [ramboot] (the example's, which does
# nothing until included) and [server]. Section and INCLUDE names are
# compared as LTSP's ini2sh does: lower case.
ramboot_conf_uses_hook() { # ltsp.conf
	[ -r "$1" ] || return 1
	awk '
	function name(s) {
		s = tolower(s)
		gsub("[^-*./:?@_|0-9a-z]", "", s)
		return s
	}
	/^[ \t]*\[/ {
		sec = $0
		sub("^[ \t]*\\[", "", sec)
		sub("\\].*", "", sec)
		sec = name(sec)
		next
	}
	/^[ \t]*#/ { next }
	tolower($0) ~ /^[ \t]*include *=/ {
		v = $0
		sub("#.*", "", v)
		sub("^[^=]*=", "", v)
		inc[name(v)] = 1
		next
	}
	/ramboot\/ltsp-hook\.sh/ { hook[sec] = 1 }
	END {
		for (s in hook)
			if (s in inc || (s != "ramboot" && s != "server"))
				exit 0
		exit 1
	}' "$1"
}

# The first extra initrd of RAMBOOT_IPXE_INITRDS (files in
# $TFTP_DIR/ltsp, which ltsp.ipxe loads after ltsp.img for every
# client) that holds the program, as `ramboot initrd -o` writes it: the
# hook finds it there (usr/sbin/ramboot), so a copy in ltsp.img would be
# a second one.
ramboot_extra_has_bin() {
	command -v ramboot >/dev/null 2>&1 || return 1
	for ramboot_x in ${RAMBOOT_IPXE_INITRDS-}; do
		case $ramboot_x in
		*/*) continue ;;
		esac
		[ -f "${TFTP_DIR-}/ltsp/$ramboot_x" ] || continue
		if ramboot initrd --list "$TFTP_DIR/ltsp/$ramboot_x" 2>/dev/null | grep -q '^ramboot: present'; then
			echo "$ramboot_x"
			return 0
		fi
	done
	return 1
}

# ltsp.img's copy of the program at $1 (what 35-initrd copied from
# /etc/ltsp/ramboot), as RAMBOOT_LTSP_BINARY and ltsp.conf $2 ask.
ramboot_initrd_binary() { # path ltsp.conf
	[ -f "$1" ] || return 0
	case ${RAMBOOT_LTSP_BINARY:-auto} in
	auto)
		if ! ramboot_conf_uses_hook "$2"; then
			rm -f "$1"
			echo "ramboot: no client of $2 runs ramboot's hook: ltsp.img leaves out /etc/ltsp/ramboot/ramboot"
			return 0
		fi
		if ramboot_x=$(ramboot_extra_has_bin); then
			rm -f "$1"
			echo "ramboot: $ramboot_x (RAMBOOT_IPXE_INITRDS) holds ramboot's program: ltsp.img leaves out /etc/ltsp/ramboot/ramboot"
			return 0
		fi
		;;
	yes) ;;
	no)
		rm -f "$1"
		echo "ramboot: RAMBOOT_LTSP_BINARY=no: ltsp.img leaves out /etc/ltsp/ramboot/ramboot (the clients take the one of their own initrd)"
		return 0
		;;
	*)
		die "ramboot: RAMBOOT_LTSP_BINARY=$RAMBOOT_LTSP_BINARY: not auto, yes or no: ltsp.img not written"
		;;
	esac
	if command -v gzip >/dev/null 2>&1; then
		rm -f "$1.gz"
		gzip -n -9 "$1" || die "ramboot: cannot compress $1: ltsp.img not written"
	fi
}
