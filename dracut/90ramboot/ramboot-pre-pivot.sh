#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pre-pivot 50: boots that are neither live (root=live:, handled by
# ramboot-live-root) nor LTSP (its initrd-bottom runs ramboot's LTSP
# hook): the initramfs-tools boot script's ramboot_main, with dracut's
# $NEWROOT as the root mount. It copies the image (ramboot.image=, or the
# root device itself) into RAM and puts the copy in place of the root;
# any failure leaves the root as it was. Sourced by dracut's init: no
# exit; a subshell keeps its variables out of init's.

# shellcheck source=dracut/90ramboot/ramboot-dracut-lib.sh
. /usr/lib/ramboot/ramboot-dracut-lib.sh
case ${root:-} in
live:* | liveiso:*) ;;
*)
	if ramboot_asked && [ ! -e /run/ramboot/report ] &&
		[ ! -e /usr/share/ltsp/client ]; then
		(
			# shellcheck disable=SC2034 # read by the sourced script
			ramboot_lib_only=1 rootmnt=${NEWROOT:-/sysroot} ROOT=${root#block:} \
				ramboot_lib=/usr/lib/ramboot/ramboot-lib.sh
			# shellcheck source=/dev/null
			. /usr/lib/ramboot/root-script.sh
			ramboot_main
		)
	fi
	;;
esac
