#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pre-udev 31. For root=live:/dev/..., dmsquash-live-genrules.sh (pre-udev
# 30) wrote udev rules that start /sbin/dmsquash-live-root DEV once the
# live device appears; when ramboot is asked for, they start
# /sbin/ramboot-live-root DEV instead, which makes the RAM copy and then
# runs dmsquash-live-root on it (or on DEV, when it does not).
# Sourced by dracut's init: no exit.

# shellcheck source=dracut/90ramboot/ramboot-dracut-lib.sh
. /usr/lib/ramboot/ramboot-dracut-lib.sh
if [ -f /etc/udev/rules.d/99-live-squash.rules ] && ramboot_asked; then
	sed -i 's|/sbin/dmsquash-live-root |/sbin/ramboot-live-root |' \
		/etc/udev/rules.d/99-live-squash.rules
fi
