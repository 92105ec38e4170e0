#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# /sbin/ramboot-live-root DEV: started by udev (through dracut's
# initqueue) in place of /sbin/dmsquash-live-root DEV when ramboot is
# asked for (ramboot-live-genrules.sh). It ends by running dracut's
# dmsquash-live-root, which sets up the live root as always:
#
# - ramboot=ram: on the RAM copy. The image is the live device itself
#   when it holds a squashfs (root=live:/dev/vda), else
#   LIVE_DIR/SQUASHFS_IMG on the file system of the live device
#   (rd.live.dir, rd.live.squashimg; LiveOS/squashfs.img), mounted
#   read-only for the copy. The copy is made, decompressed and verified
#   by `ramboot boot` (it takes IMAGE.manifest beside the image, or
#   ramboot.sha256=) into a tmpfs file or a zram device; it must be a
#   squashfs that mounts and holds a root (/proc) or LiveOS/rootfs.img.
# - ramboot=lazy (a squashfs live device only): dracut's live root is
#   mounted from a read-only loop device over DEV that this script sets
#   up, and the copier `ramboot boot` starts switches that loop device
#   to the RAM copy once it is made and verified.
# - anything else (off, prefetch, swap only): `ramboot boot` does that;
#   dmsquash-live-root runs on DEV.
#
# Any refusal or failure: dmsquash-live-root runs on DEV, as without
# ramboot, and the report (/run/ramboot/report) says why.
# With rd.live.ram also given, dracut makes its own copy: ramboot copies
# nothing (a second copy of the same image would take the RAM twice).

# shellcheck source=/dev/null
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=dracut/90ramboot/ramboot-dracut-lib.sh
. /usr/lib/ramboot/ramboot-dracut-lib.sh

livedev=$1
ramboot_bin=${ramboot_bin:-/usr/sbin/ramboot}
ramboot_dir=${ramboot_dir:-/run/ramboot}
ramboot_live=${ramboot_live:-/sbin/dmsquash-live-root}
live_mnt=$ramboot_dir/live

ramboot_live_root() { # DEV or the RAM copy
	exec "$ramboot_live" "$@"
}

[ -n "$livedev" ] || exit 1
[ -x "$ramboot_bin" ] || ramboot_live_root "$livedev"
if [ ! -f /usr/lib/ramboot/ramboot-lib.sh ]; then
	ramboot_say "ramboot-lib.sh missing; booting without ramboot"
	ramboot_live_root "$livedev"
fi
# shellcheck source=initrd-hooks/ramboot-lib.sh
. /usr/lib/ramboot/ramboot-lib.sh

# `ramboot boot` with the mode turned off and every other switch kept
# (ramboot.swap=): when this script copies nothing.
ramboot_boot_off() {
	"$ramboot_bin" boot --cmdline="$(for a in $(getcmdline); do
		case $a in
		ramboot | ramboot=*) ;;
		*) printf '%s ' "$a" ;;
		esac
	done) ramboot=off" >/dev/null
}

# ramboot boot reads ramboot= itself; the live layout is decided here.
mode=$(getarg ramboot=)
if [ -z "$mode" ] && getarg ramboot >/dev/null; then
	mode=ram
fi
if getargbool 0 rd.live.ram -d -y live_ram; then
	case $mode in
	ram | lazy)
		ramboot_say "rd.live.ram is set: dracut copies the image, ramboot=$mode is ignored"
		ramboot_boot_off
		ramboot_live_root "$livedev"
		;;
	esac
fi

udevadm settle >/dev/null 2>&1
fstype=$(blkid -s TYPE -o value "$livedev" 2>/dev/null)
image=$livedev
case $fstype in
squashfs) ;;
"")
	image=
	;;
*)
	# A file system holding LIVE_DIR/SQUASHFS_IMG (an ISO, a USB stick).
	live_dir=$(getarg rd.live.dir -d live_dir)
	squash_image=$(getarg rd.live.squashimg)
	image=
	if mkdir -p "$live_mnt" && mount -n -t "$fstype" -o ro "$livedev" "$live_mnt"; then
		f=$live_mnt/${live_dir:-LiveOS}/${squash_image:-squashfs.img}
		[ -f "$f" ] && image=$f
	fi
	;;
esac

# Forget the live device's mount (the copy does not need it; dracut
# mounts it again when it boots from it).
ramboot_unmount_live() {
	if grep -qs "^[^ ]* $live_mnt " /proc/mounts; then
		umount "$live_mnt" || umount -l "$live_mnt"
	fi
	rmdir "$live_mnt" 2>/dev/null
	return 0
}

if [ -z "$image" ]; then
	ramboot_unmount_live
	ramboot_say "$livedev: no squashfs image found; booting without ramboot"
	ramboot_boot_off
	ramboot_live_root "$livedev"
fi

case $mode in
lazy)
	if [ "$image" != "$livedev" ]; then
		ramboot_unmount_live
		ramboot_say "ramboot=lazy needs the squashfs on the live device itself; booting from $livedev"
		ramboot_boot_off
		ramboot_live_root "$livedev"
	fi
	# The copier switches the loop device backed by $livedev: the live
	# root must be mounted through it.
	if ! loop=$(losetup -r -f --show "$livedev"); then
		ramboot_say "losetup $livedev failed; booting without ramboot"
		ramboot_boot_off
		ramboot_live_root "$livedev"
	fi
	"$ramboot_bin" boot --mounted --image="$livedev" >/dev/null
	ramboot_live_root "$loop"
	;;
esac

out=$("$ramboot_bin" boot --image="$image") || out=
if ! ramboot_take_copy "$out"; then
	ramboot_unmount_live
	ramboot_live_root "$livedev"
fi

# shellcheck disable=SC2154 # ramboot_ram, ramboot_fstype: set by ramboot_take_copy
# The copy must be what dmsquash-live-root can boot: a squashfs holding a
# root or LiveOS/rootfs.img.
why=
if [ "$ramboot_fstype" != squashfs ]; then
	why="not a squashfs: $ramboot_fstype"
elif ramboot_mount_copy "$ramboot_ram" squashfs "$ramboot_dir/check" ro; then
	[ -d "$ramboot_dir/check/proc" ] || [ -f "$ramboot_dir/check/LiveOS/rootfs.img" ] ||
		[ -f "$ramboot_dir/check/LiveOS/ext3fs.img" ] ||
		why="no root file system in the RAM copy"
	umount "$ramboot_dir/check" || umount -l "$ramboot_dir/check"
else
	why="cannot mount the RAM copy"
fi
rmdir "$ramboot_dir/check" 2>/dev/null
ramboot_unmount_live
if [ -n "$why" ]; then
	ramboot_drop "$ramboot_ram" "$why"
	ramboot_live_root "$livedev"
fi
ramboot_say "live image in RAM: $ramboot_ram"
ramboot_live_root "$ramboot_ram"
