#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# images/demo.sh (`make demo`) - from a fresh Debian machine to a client
# booted from RAM, in QEMU:
#   1. install the build and test packages (tests/deps.sh) and mmdebstrap
#   2. build ramboot (make all static)
#   3. make a client image: Debian minbase from the mirror apt uses here
#      (cached in build/demo/), or the busybox test root when the mirror
#      cannot be reached; squashfs, plus a zstd copy for the transfer
#   4. boot it in QEMU: the image on a 9p share (an NFS stand-in), kernel
#      command line ramboot=ram ramboot.swap=zram, serial console on stdout
#   5. print the boot report the client printed
#
#   DEMO_ROOT=busybox   use the small busybox root, skip mmdebstrap
#   DEMO_MEM=MiB        guest RAM (default 1024)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   the QEMU accelerator; by default KVM when
#                       a probe guest runs with it, else TCG
#                       (images/qemu-accel.sh)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
demo=$top/build/demo
mem=${DEMO_MEM:-1024}
t0=$(date +%s)

say() { printf '\n==> %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# qemu_bin, qemu_accel, qemu_accel_why: set by images/qemu-accel.sh
qemu_bin='' qemu_accel='' qemu_accel_why=''
# shellcheck disable=SC1091 source=images/qemu-accel.sh
. "$top/images/qemu-accel.sh"
accel_err=$(qemu_accel_check 2>&1) || die "$accel_err"

[ "$(id -u)" = 0 ] || die "run as root: it installs Debian packages and boots QEMU with a 9p share"

say "packages"
tests/deps.sh install
if [ "${DEMO_ROOT:-debian}" = debian ] && ! command -v mmdebstrap >/dev/null &&
	! command -v debootstrap >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap ||
		echo "demo: could not install mmdebstrap; the busybox root will do" >&2
fi

say "build"
make -s WERROR=-Werror all static

kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' | sort -V | tail -n 1)
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || die "no kernel $kernel (apt-get install linux-image-amd64)"
rb=$top/static/ramboot
mkdir -p "$demo/net"

# One hash over an artefact's inputs: rebuild only when they change.
key() { cat "$@" | sha256sum | cut -d' ' -f1; }
fresh() { [ -f "$demo/$1.key" ] && [ "$(cat "$demo/$1.key")" = "$2" ]; }

say "client root"
root=
if [ "${DEMO_ROOT:-debian}" = debian ]; then
	bkey=$(key images/build-debian-root.sh /etc/os-release)
	if fresh debian "$bkey" && [ -x "$demo/debian/sbin/rbtest-init" ]; then
		echo "cached: $demo/debian (rm -rf it to rebuild)"
		install -m 0755 images/client-init "$demo/debian/sbin/rbtest-init"
		install -m 0755 "$rb" "$demo/debian/usr/sbin/ramboot"
		root=$demo/debian
	elif images/build-debian-root.sh "$demo/debian" "" "$rb"; then
		echo "$bkey" > "$demo/debian.key"
		root=$demo/debian
	else
		rm -f "$demo/debian.key"
		echo "demo: could not build a Debian root (is the mirror apt uses reachable?);" \
			"using the busybox test root instead" >&2
	fi
fi
if [ -z "$root" ]; then
	images/build-test-root.sh "$demo/busybox" "$rb"
	root=$demo/busybox
fi

say "client image"
# The root changes only through the files installed above.
ikey=$({ echo "$root"; cat "$root/sbin/rbtest-init" "$root/usr/sbin/ramboot" \
	"$demo/debian.key"; } 2>/dev/null | sha256sum | cut -d' ' -f1)
if ! fresh image "$ikey" || [ ! -f "$demo/net/x86_64.img.zst" ]; then
	rm -f "$demo/net/x86_64.img" "$demo/net/x86_64.img.zst"
	mksquashfs "$root" "$demo/net/x86_64.img" -noappend -quiet -no-progress -comp zstd
	zstd -q -T0 -3 "$demo/net/x86_64.img" -o "$demo/net/x86_64.img.zst"
	# What the server publishes next to the image: the client checks
	# the SHA-256 of its RAM copy against it.
	"$top/ramboot" manifest -o "$demo/net/x86_64.img.zst.manifest" "$demo/net/x86_64.img.zst"
	echo "$ikey" > "$demo/image.key"
fi
ls -l "$demo/net/x86_64.img" "$demo/net/x86_64.img.zst"

say "initramfs"
irkey=$(key images/build-initramfs.sh images/initramfs-init "$rb"; echo "$kver")
if ! fresh initramfs "$irkey" || [ ! -f "$demo/initramfs.cpio" ]; then
	images/build-initramfs.sh "$demo/initramfs.cpio" "$kver" "$rb"
	echo "$irkey" > "$demo/initramfs.key"
fi

cmdline="console=ttyS0 panic=-1 loglevel=4 rbtest.src=/mnt/net/x86_64.img.zst"
cmdline="$cmdline rbtest.init=/sbin/rbtest-init rbtest.size=$(stat -c %s "$demo/net/x86_64.img")"
cmdline="$cmdline ramboot=ram ramboot.swap=zram"
say "boot (QEMU, ${mem} MiB): $cmdline"
qemu_accel_choose "$kernel" || die "no accelerator"
echo "accelerator: $qemu_accel ($qemu_accel_why)"
serial=$demo/console.serial
log=$demo/console.log
tb=$(date +%s)
# The console as it comes (tail follows the file again when a KVM boot
# is run once more under TCG).
: > "$serial"
tail -n +1 -F "$serial" 2>/dev/null &
follow=$!
qemu_run 300 "$serial" "$demo/qemu.log" -smp 2 -m "$mem" \
	-kernel "$kernel" -initrd "$demo/initramfs.cpio" -append "$cmdline" \
	-virtfs "local,path=$demo/net,mount_tag=netroot,security_model=none,readonly=on" ||
	echo "demo: QEMU exited with $? ($demo/qemu.log)" >&2
sleep 1
kill "$follow" 2>/dev/null
wait "$follow" 2>/dev/null || :
tr -d '\r' < "$serial" > "$log"
boot_s=$(($(date +%s) - tb))

say "boot report"
if ! grep -q '^RBTEST-DONE' "$log"; then
	die "the client did not finish booting; console log: $log"
fi
sed -n '/^RBTEST-REPORT-BEGIN/,/^RBTEST-REPORT-END/p' "$log" | sed '1d;$d'
echo
echo "root: $(sed -n 's/^RBTEST root-source=//p' "$log")"
echo "swaps: $(sed -n '/^RBTEST-SWAPS-BEGIN/,/^RBTEST-SWAPS-END/p' "$log" | grep '^/dev' | tr -s ' \t' ' ')"
echo "boot in QEMU: ${boot_s} s; whole demo: $(elapsed); console log: $log"
