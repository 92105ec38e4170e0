#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the boot integration; `make install` runs it with DESTDIR,
# PREFIX, DATADIR and SYSCONFDIR set, after installing the binaries.
#
#   $DATADIR/hooks/...                 the scripts `ramboot initrd -o` packs
#   $DATADIR/ltsp.conf                 the ltsp.conf snippet, for reference
#   $DATADIR/ltsp-server.sh            what `ltsp image` and `ltsp ipxe` run
#                                      after their work (the drop-ins below)
#   $LTSPDIR/server/image/56-ramboot-image.sh  ramboot's parts of LTSP's
#   $LTSPDIR/server/ipxe/56-ramboot-ipxe.sh    image, ipxe and initrd
#   $LTSPDIR/common/initrd/50-ramboot-initrd.sh applets (LTSP sources
#                                      them; no ltsp.conf line needed)
#   $SYSCONFDIR/ltsp/ramboot/ramboot   the static binary and the LTSP hook:
#   $SYSCONFDIR/ltsp/ramboot/ltsp-hook.sh  `ltsp initrd` copies /etc/ltsp
#   $SYSCONFDIR/ltsp/ramboot/ramboot-lib.sh into ltsp.img (and the client
#                                      root); the library both hooks source
#   $SYSCONFDIR/ltsp/ramboot/boot-ramboot.sh  boot=ramboot (an image over
#                                      HTTP, no network root): ltsp.img's
#                                      /scripts/ramboot
#   /usr/share/initramfs-tools/hooks/ramboot               build hook
#   /usr/share/initramfs-tools/scripts/init-bottom/ramboot boot script
#   /usr/share/initramfs-tools/scripts/local-premount/ramboot  the same,
#                                      its ramboot=lazy phase before the
#                                      root is mounted
#
# NO_LTSP=1 or NO_INITRAMFS_TOOLS=1 leave out either part.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
DATADIR=${DATADIR:-$PREFIX/share/ramboot}
SYSCONFDIR=${SYSCONFDIR:-/etc}
ITDIR=${INITRAMFS_TOOLS_DIR:-/usr/share/initramfs-tools}
# LTSP's own directory: Debian's ltsp package, whatever PREFIX is.
LTSPDIR=${LTSPDIR:-/usr/share/ltsp}

say() {
	echo "install: $*"
}

inst() { # mode src dst
	install -D -m "$1" "$2" "$DESTDIR$3"
	say "$3"
}

inst 0644 "$here/ltsp-hook.sh" "$DATADIR/hooks/ltsp-hook.sh"
inst 0644 "$here/ramboot-lib.sh" "$DATADIR/hooks/ramboot-lib.sh"
inst 0755 "$here/initramfs-tools/script" "$DATADIR/hooks/initramfs-tools/script"
inst 0644 "$here/initramfs-tools/order.conf" "$DATADIR/hooks/initramfs-tools/order.conf"
inst 0644 "$here/ltsp-server.sh" "$DATADIR/ltsp-server.sh"
# The snippet names the package's path; `make install` has its own.
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
sed "s|/usr/share/ramboot/ltsp-server\.sh|$DATADIR/ltsp-server.sh|g" "$here/../conf/ltsp.conf" >"$conf"
inst 0644 "$conf" "$DATADIR/ltsp.conf"

if [ "${NO_LTSP:-0}" != 1 ]; then
	static="$DESTDIR$DATADIR/ramboot.static"
	if [ -f "$static" ]; then
		inst 0755 "$static" "$SYSCONFDIR/ltsp/ramboot/ramboot"
	else
		say "warning: $static missing; LTSP clients need it in $SYSCONFDIR/ltsp/ramboot/ramboot"
	fi
	inst 0644 "$here/ltsp-hook.sh" "$SYSCONFDIR/ltsp/ramboot/ltsp-hook.sh"
	inst 0644 "$here/ramboot-lib.sh" "$SYSCONFDIR/ltsp/ramboot/ramboot-lib.sh"
	inst 0644 "$here/boot-ramboot.sh" "$SYSCONFDIR/ltsp/ramboot/boot-ramboot.sh"
	for d in server/image/56-ramboot-image.sh:image.sh server/ipxe/56-ramboot-ipxe.sh:ipxe.sh \
		common/initrd/50-ramboot-initrd.sh:initrd.sh; do
		sed "s|/usr/share/ramboot/ltsp-server\.sh|$DATADIR/ltsp-server.sh|g" \
			"$here/ltsp/${d#*:}" >"$conf"
		inst 0644 "$conf" "$LTSPDIR/${d%%:*}"
	done
fi

if [ "${NO_INITRAMFS_TOOLS:-0}" != 1 ]; then
	tmp=$(mktemp)
	trap 'rm -f "$tmp" "$conf"' EXIT
	sed -e "s|@DATADIR@|$DATADIR|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" \
		"$here/initramfs-tools/hook" >"$tmp"
	inst 0755 "$tmp" "$ITDIR/hooks/ramboot"
	inst 0755 "$here/initramfs-tools/script" "$ITDIR/scripts/init-bottom/ramboot"
	inst 0755 "$here/initramfs-tools/script" "$ITDIR/scripts/local-premount/ramboot"
fi

if [ -z "$DESTDIR" ]; then
	say "done. LTSP: add the lines of $DATADIR/ltsp.conf to /etc/ltsp/ltsp.conf, then run 'ltsp initrd'."
	say "initramfs-tools: run 'update-initramfs -u' to include ramboot."
fi
