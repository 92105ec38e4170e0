#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# build-initramfs.sh OUT.cpio [KVER] [RAMBOOT] - the test initramfs:
# busybox-static, the static ramboot, images/initramfs-init as /init,
# udpcast's udp-receiver with the libraries ldd names (when installed:
# ramboot.source=udpcast) and the kernel modules a ramboot client needs,
# with their dependencies, listed in
# /lib/modules/load.list in load order. The archive is an uncompressed newc
# cpio: under emulation the kernel unpacks it faster than it inflates one.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-initramfs.sh OUT.cpio [KVER] [RAMBOOT]}
kver=${2:-}
rb=${3:-$here/../static/ramboot}
if [ -z "$kver" ]; then
	kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' | sort -V | tail -n 1)
fi
[ -d "/lib/modules/$kver" ] || { echo "build-initramfs: no /lib/modules/$kver" >&2; exit 1; }
[ -x "$rb" ] || { echo "build-initramfs: $rb missing (run 'make static')" >&2; exit 1; }
bb=/bin/busybox
[ -x "$bb" ] || bb=$(command -v busybox)

MODULES="zram squashfs loop overlay virtio_pci virtio_blk 9p 9pnet_virtio
zstd lzo lzo_rle lz4 xz_dec zsmalloc crc32c_generic virtio_net"
# ramboot.verity=1: device-mapper (/dev/mapper/control appears once dm-mod
# is loaded) and its verity target, with dm-bufio and reed_solomon.
MODULES="$MODULES dm-mod dm-verity"
# ramboot.cache=: the local disk cache is an ext4 file system.
MODULES="$MODULES ext4"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p bin sbin usr/bin usr/sbin dev proc sys run tmp mnt newroot lib/modules
cp "$bb" bin/busybox
for a in $(bin/busybox --list-full); do
	[ -e "$a" ] || ln -s /bin/busybox "$a"
done
[ -e bin/sh ] || ln -s busybox bin/sh
cp "$rb" sbin/ramboot
install -m 0755 "$here/initramfs-init" init

# udp-receiver is dynamically linked: the program and each library at the
# path ldd gives (the loader included), as files.
if [ -x /usr/bin/udp-receiver ]; then
	cp /usr/bin/udp-receiver usr/bin/udp-receiver
	for lib in $(ldd /usr/bin/udp-receiver | grep -o '/[^ ]*'); do
		mkdir -p ".${lib%/*}"
		cp -L "$lib" ".$lib"
	done
else
	echo "build-initramfs: no /usr/bin/udp-receiver (apt-get install udpcast): not added" >&2
fi

# `modprobe --show-depends` prints "insmod PATH [ARGS]" per module,
# dependencies first, or "builtin NAME" for modules built into the kernel.
: > lib/modules/load.list
for m in $MODULES; do
	modprobe -S "$kver" --show-depends "$m" 2>/dev/null || echo "# $m: not available" >&2
done | while read -r what path args; do
	[ "$what" = insmod ] || continue
	rel=${path#/lib/modules/"$kver"/}
	case $rel in
	*.ko.xz) ko=${rel%.xz}; dec="xz -dc" ;;
	*.ko.zst) ko=${rel%.zst}; dec="zstd -qdc" ;;
	*.ko.gz) ko=${rel%.gz}; dec="gzip -dc" ;;
	*) ko=$rel; dec="cat" ;;
	esac
	grep -q "^$ko\( \|\$\)" lib/modules/load.list && continue
	mkdir -p "lib/modules/${ko%/*}"
	$dec "$path" > "lib/modules/$ko"
	echo "$ko${args:+ $args}" >> lib/modules/load.list
done
find . -print0 | LC_ALL=C sort -z | cpio -o -0 -H newc -R 0:0 --quiet > "$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: $out ($(wc -l < lib/modules/load.list) modules, kernel $kver)"
