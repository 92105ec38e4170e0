# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot hook for LTSP's initrd-bottom. ltsp.conf sources it:
#
#   [clients]
#   PRE_INITRD_BOTTOM_RAMBOOT=". /etc/ltsp/ramboot/ltsp-hook.sh"
#
# LTSP evals PRE_INITRD_BOTTOM_* in its own shell (busybox ash) before
# initrd_bottom_main, under `re`: a non-zero status aborts the boot. So
# this file only defines ramboot_* names, never exits, and its last
# command is `:`. A failure leaves IMAGE untouched: LTSP then mounts
# the network image as usual.
#
# On success IMAGE's first field (ltsp.image=img,options,,img2,...) is
# replaced by the RAM copy, options and later images kept, IMAGE_TO_RAM
# is turned off (the copy is already in RAM), and the network root at
# $rootmnt is unmounted: initrd_bottom_main mounts the first image over
# $rootmnt, so every later list entry (relative: $rootmnt/img2, or
# absolute) resolves inside the mounted image, never in the network
# root; LTSP's own IMAGE_TO_RAM unmounts it just the same.

ramboot_say() {
	echo "ramboot: ltsp-hook: $*" >&2
}

# The first field of an LTSP image list as a path: relative paths are
# under the root mount, as in initrd_bottom_main.
# ramboot_image_path "images/x.img,fstype=squashfs" /root -> /root/images/x.img
ramboot_image_path() {
	ramboot_p=${1%%,*}
	case $ramboot_p in
	/*) printf '%s\n' "$ramboot_p" ;;
	*) printf '%s/%s\n' "${2%/}" "$ramboot_p" ;;
	esac
}

# Replace the first image of a list, keeping its options and the rest.
# ramboot_image_list "images/x.img,fstype=squashfs,,b.img" /run/x.img
#   -> /run/x.img,fstype=squashfs,,b.img
ramboot_image_list() {
	ramboot_p=${1%%,*}
	printf '%s%s\n' "$2" "${1#"$ramboot_p"}"
}

# The RAM copy from `ramboot boot` output (one RAMBOOT_IMAGE= line, maybe
# shell-quoted); empty for anything else.
ramboot_parse_out() {
	case $1 in
	*"
"*) return 0 ;;
	RAMBOOT_IMAGE=*) (eval "$1" && printf '%s\n' "$RAMBOOT_IMAGE") ;;
	esac
}

ramboot_find_bin() {
	for ramboot_p in ${RAMBOOT_BIN:+"$RAMBOOT_BIN"} /etc/ltsp/ramboot/ramboot \
		/usr/sbin/ramboot /usr/local/sbin/ramboot /sbin/ramboot; do
		if [ -x "$ramboot_p" ] && [ -f "$ramboot_p" ]; then
			printf '%s\n' "$ramboot_p"
			return 0
		fi
	done
	return 1
}

# ltsp.conf assignments are plain shell variables: export RAMBOOT_* so
# that `ramboot boot` sees the per-client settings.
ramboot_export_settings() {
	for ramboot_p in $(set | sed -n 's/^\(RAMBOOT[A-Z0-9_]*\)=.*/\1/p'); do
		case $ramboot_p in
		RAMBOOT_BIN) ;;
		*) export "${ramboot_p?}" ;;
		esac
	done
}

ramboot_is_mountpoint() {
	grep -qs "^[^ ]* $1 " /proc/mounts
}

ramboot_ltsp_main() {
	# kernel_vars parses ltsp.* from /proc/cmdline once (it sets a flag);
	# initrd_bottom_main calls it again and finds it done, so the IMAGE
	# set here is the one LTSP mounts.
	if command -v kernel_vars >/dev/null 2>&1; then
		kernel_vars
	fi
	if [ -z "$IMAGE" ]; then
		return 0          # NFS chroot boot: no image to copy
	fi
	if ! ramboot_bin=$(ramboot_find_bin); then
		ramboot_say "ramboot binary not found; booting from the network image"
		return 0
	fi
	ramboot_root=${rootmnt:-/root}
	ramboot_src=$(ramboot_image_path "$IMAGE" "$ramboot_root")
	ramboot_export_settings
	ramboot_out=$("$ramboot_bin" boot --image="$ramboot_src") || ramboot_out=
	ramboot_ram=$(ramboot_parse_out "$ramboot_out")
	if [ -z "$ramboot_ram" ]; then
		return 0          # off, prefetch or a fallback: IMAGE unchanged
	fi
	if [ ! -e "$ramboot_ram" ]; then
		ramboot_say "$ramboot_ram: missing; booting from the network image"
		return 0
	fi
	IMAGE=$(ramboot_image_list "$IMAGE" "$ramboot_ram")
	# shellcheck disable=SC2034 # read by LTSP's initrd_bottom_main
	IMAGE_TO_RAM=0
	ramboot_say "image in RAM: $ramboot_ram"
	case $ramboot_src in
	"$ramboot_root"/*)
		if ramboot_is_mountpoint "$ramboot_root"; then
			umount "$ramboot_root" ||
				ramboot_say "$ramboot_root: umount failed; the network root stays mounted"
		fi
		;;
	esac
	return 0
}

ramboot_ltsp_main || :
unset ramboot_p ramboot_bin ramboot_root ramboot_src ramboot_out ramboot_ram
:
