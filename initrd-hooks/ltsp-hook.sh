# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot hook for LTSP's initrd-bottom. ltsp.conf sources it (the
# [ramboot] section of conf/ltsp.conf, included from [clients]):
#
#   PRE_INITRD_BOTTOM_RAMBOOT="[ ! -r /etc/ltsp/ramboot/ltsp-hook.sh ] || . /etc/ltsp/ramboot/ltsp-hook.sh"
#
# (the test first: once the package is gone, the line returns 0 instead
# of ending LTSP's shell on a missing file).
#
# LTSP evals PRE_INITRD_BOTTOM_* in its own shell (busybox ash) before
# initrd_bottom_main, under `re`: a non-zero status aborts the boot. So
# this file (and ramboot-lib.sh, which it sources from the same
# directory) only defines ramboot_* names, never exits, and its last
# command is `:`. A failure leaves IMAGE untouched: LTSP then mounts
# the network image as usual.
#
# With ramboot.url= (the image over HTTP) it first brings the network up
# when nothing did (ramboot_net_up in ramboot-lib.sh: a boot without a
# network root), and needs no ltsp.image=: IMAGE is then the RAM copy
# alone (docs/http.md, "Booting from HTTP").
#
# On success IMAGE's first field (ltsp.image=img,options,,img2,...) is
# replaced by the RAM copy, options and later images kept, IMAGE_TO_RAM
# is turned off (the copy is already in RAM), and the network root at
# $rootmnt is unmounted: initrd_bottom_main mounts the first image over
# $rootmnt, so every later list entry (relative: $rootmnt/img2, or
# absolute) resolves inside the mounted image, never in the network
# root; LTSP's own IMAGE_TO_RAM unmounts it just the same.
#
# Unmounting the network root cannot be undone here, and LTSP aborts
# the boot if it then cannot mount IMAGE. So before anything is
# switched the copy has to prove that it mounts: it is mounted
# read-only on /run/ramboot/check with the file system type ramboot
# found on it, must hold what LTSP will look for, and is unmounted
# again. Any refusal (no copy announced in the expected form, no file,
# no known file system type, the check mount fails or shows no root)
# hands the copy back to `ramboot boot --drop`, which frees the RAM and
# records the fallback in the report, and leaves IMAGE and the network
# root alone.

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

# The second image of a list, if any.
# ramboot_image_next "a.iso,fstype=iso9660,,casper/fs.squashfs,ro" -> casper/fs.squashfs
ramboot_image_next() {
	case $1 in
	*,,*)
		ramboot_p=${1#*,,}
		printf '%s\n' "${ramboot_p%%,*}"
		;;
	esac
}

# A mount point without trailing slashes ("/root/" -> "/root"; "/"
# stays "/"), so that it compares equal to the paths built from it.
ramboot_strip_slash() {
	ramboot_p=$1
	while :; do
		case $ramboot_p in
		*/) ramboot_p=${ramboot_p%/} ;;
		*) break ;;
		esac
	done
	printf '%s\n' "${ramboot_p:-/}"
}

# ramboot_bin_search: where to look after $RAMBOOT_BIN (the tests give
# their own list, so that the host's installed copies are never found).
# ltsp.img's copy first, as `ltsp initrd` packed it: the program itself,
# or (the package's 50-ramboot-initrd.sh) gzip-compressed, unpacked
# here beside it; then the one the client's own initrd holds (the
# package in the image, or `ramboot initrd` as an extra initrd).
ramboot_find_bin() {
	# shellcheck disable=SC2086 # a list of paths
	for ramboot_p in ${RAMBOOT_BIN:+"$RAMBOOT_BIN"} ${ramboot_bin_search:-/etc/ltsp/ramboot/ramboot \
		/etc/ltsp/ramboot/ramboot.gz /usr/sbin/ramboot /usr/local/sbin/ramboot /sbin/ramboot}; do
		case $ramboot_p in
		*.gz)
			[ -f "$ramboot_p" ] || continue
			if zcat "$ramboot_p" >"${ramboot_p%.gz}.tmp" 2>/dev/null &&
				chmod 0755 "${ramboot_p%.gz}.tmp" && mv -f "${ramboot_p%.gz}.tmp" "${ramboot_p%.gz}"; then
				rm -f "$ramboot_p"
				ramboot_p=${ramboot_p%.gz}
			else
				rm -f "${ramboot_p%.gz}.tmp"
				ramboot_say "$ramboot_p: cannot unpack it (zcat)"
				continue
			fi
			;;
		esac
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

# Does the root at $1 hold the running kernel's modules, if it holds any?
# A root without /lib/modules (a kernel built with what it needs) is
# not asked.
ramboot_has_modules() { # dir
	[ -d "$1/lib/modules" ] || [ -d "$1/usr/lib/modules" ] || return 0
	ramboot_r=$(uname -r 2>/dev/null) || return 0
	[ -n "$ramboot_r" ] || return 0
	[ -d "$1/lib/modules/$ramboot_r" ] || [ -d "$1/usr/lib/modules/$ramboot_r" ]
}

# Mount the copy read-only on $ramboot_dir/check and look for what LTSP
# will use once IMAGE names it: a second image given by a relative path
# is opened inside the first one, so it must be there (an ISO holding a
# squashfs); otherwise the copy is the root and needs /etc and
# /sbin/init (LTSP's install step copies /sbin/init). With older-ok
# empty (the copy is of the file the manifest names, `ramboot publish
# --content-addressed`), a root that has modules must have the running
# kernel's: during a rebuild the manifest still names the previous
# image while LTSP already serves the new image's kernel; refused, LTSP
# mounts IMAGE, the new image. Status 1 with ramboot_why set when the
# copy cannot be used; nothing stays mounted.
ramboot_check_copy() { # ram fstype next-image [older-ok]
	ramboot_c=$ramboot_dir/check
	ramboot_why=
	if ! ramboot_mount_copy "$1" "$2" "$ramboot_c" ro; then
		rmdir "$ramboot_c" 2>/dev/null
		ramboot_why="cannot mount the RAM copy"
		return 1
	fi
	case $3 in
	"" | /*)
		if ! ramboot_is_root "$ramboot_c"; then
			ramboot_why="no root file system in the RAM copy"
		elif [ -z "${4-1}" ] && ! ramboot_has_modules "$ramboot_c"; then
			ramboot_why="no modules of the running kernel in the RAM copy"
		fi
		;;
	*)
		if [ ! -e "$ramboot_c/$3" ]; then
			ramboot_say "$3 is not in the RAM copy"
			ramboot_why="no root file system in the RAM copy"
		fi
		;;
	esac
	# A lazy unmount as a last resort: the check mount holds nothing
	# open, and the loop device is freed when the file system goes.
	if ! umount "$ramboot_c" && ! umount -l "$ramboot_c"; then
		ramboot_say "$ramboot_c: umount failed"
		ramboot_why=${ramboot_why:-"cannot unmount the RAM copy"}
	fi
	rmdir "$ramboot_c" 2>/dev/null
	[ -z "$ramboot_why" ]
}

ramboot_ltsp_main() {
	# kernel_vars parses ltsp.* from /proc/cmdline once (it sets a flag);
	# initrd_bottom_main calls it again and finds it done, so the IMAGE
	# set here is the one LTSP mounts.
	if command -v kernel_vars >/dev/null 2>&1; then
		kernel_vars
	fi
	# NFS chroot boot: no image to copy, unless one comes over HTTP
	if [ -z "$IMAGE" ] && [ -z "${RAMBOOT_URL-}" ] &&
		! grep -qs 'ramboot\.url=' "${ramboot_cmdline:-/proc/cmdline}"; then
		return 0
	fi
	if ! ramboot_bin=$(ramboot_find_bin); then
		ramboot_say "ramboot binary not found (neither in ltsp.img nor in the client's initrd: run 'ltsp initrd' on the server); booting from the network image"
		return 0
	fi
	# Sourcing a file that is missing or broken would end LTSP's shell:
	# try it in a subshell first.
	ramboot_lib=${ramboot_lib:-/etc/ltsp/ramboot/ramboot-lib.sh}
	# shellcheck source=/dev/null
	if ! [ -f "$ramboot_lib" ] || ! (. "$ramboot_lib") 2>/dev/null; then
		ramboot_say "$ramboot_lib: missing or broken; booting from the network image"
		return 0
	fi
	# shellcheck source=/dev/null
	. "$ramboot_lib"
	ramboot_dir=${ramboot_dir:-/run/ramboot}
	ramboot_root=$(ramboot_strip_slash "${rootmnt:-/root}")
	ramboot_export_settings
	# ramboot.url=: the image over HTTP, which needs the network up; no
	# ltsp.image= needed then (boot=ramboot: no network root at all).
	ramboot_q=$("$ramboot_bin" boot --query 2>/dev/null) || ramboot_q=
	ramboot_url=$(ramboot_query_get url "$ramboot_q")
	[ -n "$IMAGE" ] || [ -n "$ramboot_url" ] || return 0
	ramboot_src=
	[ -z "$IMAGE" ] || ramboot_src=$(ramboot_image_path "$IMAGE" "$ramboot_root")
	if [ -n "$ramboot_url" ] && [ "$(ramboot_query_get mode "$ramboot_q")" != off ]; then
		ramboot_net_up "$(ramboot_query_get timeout "$ramboot_q")" || :
	fi
	# A hit of the local disk cache is a loop device over its slot, made
	# before LTSP loop-mounts anything: Debian's initramfs has no
	# /dev/loop-control until the loop module is loaded.
	modprobe -q loop 2>/dev/null
	ramboot_out=$("$ramboot_bin" boot ${ramboot_src:+--image="$ramboot_src"}) || ramboot_out=
	# off, prefetch or a fallback: IMAGE unchanged (a copy made but not
	# announced properly is dropped)
	ramboot_take_copy "$ramboot_out" || return 0
	# The file the manifest names (ramboot publish --content-addressed)
	# may be an older image than the kernel LTSP served.
	case $(ramboot_report_get source) in
	*.sha256-????????????????) ramboot_o= ;;
	*) ramboot_o=1 ;;
	esac
	# shellcheck disable=SC2154 # ramboot_ram, ramboot_fstype: set by ramboot_take_copy
	if ! ramboot_check_copy "$ramboot_ram" "$ramboot_fstype" "$(ramboot_image_next "$IMAGE")" "$ramboot_o"; then
		ramboot_drop "$ramboot_ram" "$ramboot_why"
		return 0
	fi
	# The copy mounts: switch to it.
	IMAGE=$(ramboot_image_list "$IMAGE" "$ramboot_ram")
	case $(ramboot_report_get mode_done) in
	ram)
		# shellcheck disable=SC2034 # read by LTSP's initrd_bottom_main
		IMAGE_TO_RAM=0
		ramboot_say "image in RAM: $ramboot_ram"
		;;
	cache)
		# the slot of the local disk cache: the network image is not read
		ramboot_say "image from the local cache: $ramboot_ram"
		;;
	*)
		# The image stays where it is, under the device: the mapping of
		# ramboot.verity=1 (ramboot=off, prefetch, lazy), or the loop
		# device of a lazy boot over HTTP, switched to RAM once copied.
		if [ -n "$(ramboot_report_get verity_device)" ]; then
			ramboot_say "image through dm-verity: $ramboot_ram"
		else
			ramboot_say "image through $ramboot_ram, copied to RAM behind the boot"
		fi
		return 0
		;;
	esac
	# The network root, if any, is no longer read (boot=ramboot has none).
	case $ramboot_src in
	"$ramboot_root"/*)
		if [ "$ramboot_root" != / ] && ramboot_is_mountpoint "$ramboot_root"; then
			umount "$ramboot_root" ||
				ramboot_say "$ramboot_root: umount failed; the network root stays mounted"
		fi
		;;
	esac
	return 0
}

ramboot_ltsp_main || :
unset ramboot_p ramboot_bin ramboot_lib ramboot_dir ramboot_root ramboot_src \
	ramboot_out ramboot_ram ramboot_fstype ramboot_why ramboot_c \
	ramboot_v ramboot_r ramboot_o ramboot_i ramboot_bin_search ramboot_q ramboot_url \
	ramboot_n ramboot_k ramboot_pp ramboot_w
:
