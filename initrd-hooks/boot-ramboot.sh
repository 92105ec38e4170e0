# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `boot=ramboot` on the kernel command line of an LTSP client whose
# image comes over HTTP (ramboot=ram ramboot.url=URL): no root file
# system from the network, neither NFS nor NBD. `ltsp initrd` puts this
# file into ltsp.img as /scripts/ramboot (50-ramboot-initrd.sh).
#
# initramfs-tools' init sources /scripts/local, /scripts/nfs, then
# /scripts/$BOOT, and calls mount_top, mount_premount (local's: the
# local-top and local-premount scripts) and mountroot(). Here mountroot
# mounts nothing: $rootmnt stays the initramfs's empty directory, over
# which LTSP's initrd-bottom mounts its IMAGE (mount_img_src wants a
# directory there). Before that, ramboot's PRE_INITRD_BOTTOM hook brings
# the network up (configure_networking, with ip=), copies the image from
# the URL into RAM, verified, and sets IMAGE to the copy.
#
# There is no network image to fall back on: a copy that fails stops
# the boot in LTSP ("LTSP boot error!", the reason in
# /run/ramboot/report and on the console). With root=/dev/nfs nfsroot=
# or root=/dev/nbd0 nbdroot= instead of boot=ramboot, the same
# ramboot.url= falls back to that image.
#
# Sourced by init: only defines mountroot.

mountroot() {
	mkdir -p "${rootmnt:-/root}"
}
