#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# build-test-root.sh DIR [RAMBOOT] - a tiny client root: busybox-static,
# the static ramboot (for `ramboot status`), and images/client-init as
# /sbin/init. It has the directories LTSP's initrd-bottom installs into
# (/proc, /usr/sbin, /usr/share, /etc, multi-user.target.wants), a few
# MiB of filler so that loading it takes measurable work, and
# /rbtest/flip.bin, 256 KiB of random data.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: build-test-root.sh DIR [RAMBOOT]}
rb=${2:-$here/../static/ramboot}
bb=$(command -v busybox) || { echo "build-test-root: busybox not found (apt-get install busybox-static)" >&2; exit 1; }
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ [ -x /bin/busybox ] && bb=/bin/busybox; }

rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
mkdir -p bin sbin usr/bin usr/sbin usr/share/rbtest etc dev proc sys run tmp \
	root mnt var/tmp lib/systemd/system/multi-user.target.wants etc/modprobe.d
chmod 1777 tmp var/tmp
cp "$bb" bin/busybox
for a in $(bin/busybox --list-full); do
	[ -e "$a" ] || ln -s /bin/busybox "$a"
done
[ -e bin/sh ] || ln -s busybox bin/sh
if [ -x "$rb" ]; then
	cp "$rb" usr/sbin/ramboot
else
	echo "build-test-root: $rb missing (run 'make static'); no ramboot in the root" >&2
fi
install -m 0755 "$here/client-init" sbin/rbtest-init
ln -sf rbtest-init sbin/init
echo "rbtest-client-root" > etc/rbtest-id
echo "root:x:0:0:root:/root:/bin/sh" > etc/passwd
echo "root:x:0:" > etc/group
echo "rbtest" > etc/hostname
: > etc/fstab
# Deterministic filler, partly compressible like real binaries and text.
seq 1 300000 > usr/share/rbtest/numbers
i=0
while [ $i -lt 6 ]; do
	cat bin/busybox
	i=$((i + 1))
done | cut -c1-200 > usr/share/rbtest/blob
# Incompressible data (mksquashfs stores its blocks as they are): the
# verity cases flip a byte inside it, in the image or in its RAM copy.
mkdir -p rbtest
head -c 262144 /dev/urandom > rbtest/flip.bin
