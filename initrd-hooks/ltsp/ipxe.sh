# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot's part of `ltsp ipxe`, installed as
# /usr/share/ltsp/server/ipxe/56-ramboot-ipxe.sh: after LTSP has written
# ltsp.ipxe anew (POST_IPXE_RAMBOOT), ltsp-server.sh loads the extra
# initrds RAMBOOT_IPXE_INITRDS names ([server] of ltsp.conf). Without
# it, nothing.

ramboot_ipxe_post() {
	[ -n "${RAMBOOT_IPXE_INITRDS-}" ] || return 0
	[ -r /usr/share/ramboot/ltsp-server.sh ] || return 0
	# shellcheck disable=SC2086 # file names, separated by spaces
	sh /usr/share/ramboot/ltsp-server.sh ipxe "$TFTP_DIR/ltsp/ltsp.ipxe" $RAMBOOT_IPXE_INITRDS
}

POST_IPXE_RAMBOOT=${POST_IPXE_RAMBOOT:-ramboot_ipxe_post}
