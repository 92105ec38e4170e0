# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by the hooks of the dracut module; sourcing it defines
# functions only, all named ramboot_*.

ramboot_say() {
	echo "ramboot: dracut: $*" >&2
	echo "ramboot: dracut: $*" >/dev/kmsg 2>/dev/null
	return 0
}

# Status 0 when ramboot is asked for: ramboot, ramboot=... or
# ramboot.KEY=... on the kernel command line, or a RAMBOOT* setting in
# /etc/ramboot.conf. Otherwise the hooks do nothing at all.
ramboot_asked() {
	# shellcheck disable=SC2013 # the kernel's parameters are words
	for ramboot_a in $(cat "${ramboot_cmdline:-/proc/cmdline}" 2>/dev/null); do
		case $ramboot_a in
		ramboot | ramboot=* | ramboot.*) return 0 ;;
		esac
	done
	grep -qs '^[[:space:]]*\(export[[:space:]][[:space:]]*\)\{0,1\}RAMBOOT[A-Z0-9_]*=.' \
		"${ramboot_conf:-/etc/ramboot.conf}"
}
