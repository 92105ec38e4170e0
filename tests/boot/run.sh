#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/run.sh - boot a client in QEMU and check what ramboot did.
#
# Modelled on dracut's test/TEST-*: build a client root, its squashfs
# and an initramfs once (cached in build/boot/ while their inputs do not
# change), then boot each case with -nodefaults, a timeout and the serial
# console in a log. The client's init prints the ramboot report between
# markers; the assertions read that report, never timing.
#
# This file is the runner: the case table below (the order of the TAP
# lines), the checks of the host, the loop. What the cases share (TAP,
# the images, booting, reading the report) is tests/boot/lib.sh; the
# cases themselves are tests/boot/cases/NN-*.sh, one file per scenario,
# each with a function NAME_case CASE that boots and gives one TAP line.
#
# The network image is served two ways, as an LTSP client gets it: a virtio
# disk throttled to a gigabit link (stands in for NBD) and a 9p share
# (stands in for NFS). The itools cases boot Debian's own initrd (plain
# initramfs-tools) with the extra initrd `ramboot initrd -o` writes; the
# LTSP cases boot it with the real LTSP code (ltsp.img) and the shipped
# ramboot hook. The cache cases give the client a second virtio disk, a
# local-disk cache.
#
#   RBTEST_CASES=regex   run only the cases whose name matches
#   RBTEST_LTSP=0        skip the LTSP cases (they install ltsp, run
#                        `make install` and `ltsp initrd` on this machine)
#   RAMBOOT_BIN=path     the server-side ramboot for `ramboot initrd -o`
#                        (default ./ramboot)
#   RBTEST_KEEP=1        keep the serial logs even when every case passes
#   RBTEST_TIMEOUT=s     per boot (default 180)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   the QEMU accelerator; by default KVM when
#                        a probe guest runs with it, else TCG
#                        (images/qemu-accel.sh)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
# The server side (keygen, manifest, serve, initrd): the host build, which
# has libarchive for `ramboot initrd`; else the static one.
rbtool=${RAMBOOT_BIN:-$top/ramboot}
[ -x "$rbtool" ] || rbtool=$rb
# shellcheck disable=SC2034 # read by lib.sh and the cases
cache=${RBTEST_CACHE:-$top/build/boot} timeout_s=${RBTEST_TIMEOUT:-180} mem=512

# The case table: each case, in the order of its TAP line, and the
# function of tests/boot/cases/ that runs it.
CASE_TABLE="
off			basic_case
ram-blk-zstd		basic_case
ram-9p-zstd		basic_case
ram-9p-xz-sha256	basic_case
ram-9p-lzo		basic_case
ram-zram-target		basic_case
prefetch		basic_case
lazy-9p			lazy_case
profile-record		lazy_case
lazy-profile		lazy_case
lazy-blk-cut		lazy_case
lazy-corrupt		lazy_case
lazy-minfree		lazy_case
lazy-stall		lazy_case
ltsp-lazy		ltsp_case
swap-zram		basic_case
fallback-corrupt	basic_case
fallback-sha256		basic_case
fallback-minfree	basic_case
itools-ram		itools_case
itools-fallback		itools_case
itools-lazy		itools_case
nbd-lazy		nbd_case
ltsp-ram		ltsp_case
udpcast-ram		udpcast_case
netmem			netmem_case
verity-off		verity_case
verity-ram		verity_case
verity-lazy		verity_case
verity-flip		verity_case
verity-noroot		verity_case
ltsp-signed		ltsp_signed_case
ltsp-signed-other	ltsp_signed_case
ltsp-ca			ltsp_ca_case
ltsp-cache-cold		cache_case
ltsp-cache-hot		cache_case
cache-powercut		cache_case
cache-delta		cache_case
cache-flip		cache_case
cache-nodisk		cache_case
http-ram		http_case
http-mirror		http_case
http-nohash		http_case
http-lazy-ltsp		http_case
http-lazy		http_lazy_case
http-lazy-mirror	http_lazy_case
http-cache-cold		httpcache_case
http-cache-update	httpcache_case
ltsp-layout		layout_case
"
CASES=$(echo "$CASE_TABLE" | awk 'NF { print $1 }')

# shellcheck disable=SC1091 source=tests/boot/lib.sh
. "$top/tests/boot/lib.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/10-basic.sh
. "$top/tests/boot/cases/10-basic.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/20-lazy.sh
. "$top/tests/boot/cases/20-lazy.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/30-itools.sh
. "$top/tests/boot/cases/30-itools.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/40-ltsp.sh
. "$top/tests/boot/cases/40-ltsp.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/50-udpcast.sh
. "$top/tests/boot/cases/50-udpcast.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/60-netmem.sh
. "$top/tests/boot/cases/60-netmem.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/70-verity.sh
. "$top/tests/boot/cases/70-verity.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/80-cache.sh
. "$top/tests/boot/cases/80-cache.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/90-http.sh
. "$top/tests/boot/cases/90-http.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/95-http-lazy.sh
. "$top/tests/boot/cases/95-http-lazy.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/96-http-cache.sh
. "$top/tests/boot/cases/96-http-cache.sh"
# shellcheck disable=SC1091 source=tests/boot/cases/97-layout.sh
. "$top/tests/boot/cases/97-layout.sh"

# shellcheck disable=SC2034 # counted by lib.sh's ok, skip and not_ok
n=0
failed=0
# shellcheck disable=SC2086 # one word per case
set -- $CASES
echo "1..$#"

host_why='' kernel='' qemu_accel='' qemu_accel_why=''
boot_host
case $? in
1) skip_all "$host_why" ;;
2) fail_all "$host_why" ;;
esac
[ "$(id -u)" = 0 ] || skip_all "needs root (a 9p share with security_model=none; make install for the LTSP case)"
for t in busybox mksquashfs cpio zstd xz lzop mkfs.ext4 modprobe; do
	command -v "$t" >/dev/null || skip_all "$t not installed (tests/deps.sh install)"
done
[ -x "$rb" ] || skip_all "static/ramboot missing (make static)"

# KVM only where a probe guest really runs with it, else TCG; decided
# once for every boot of the run.
qemu_accel_choose "$kernel" || fail_all "no accelerator"
# shellcheck disable=SC2034 # read by images/qemu-accel.sh's qemu_run
qemu_note_prefix="# "
echo "# accelerator: $qemu_accel ($qemu_accel_why)"

# shellcheck disable=SC2034 # the serial logs, read by lib.sh and the cases
logs=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-boot.XXXXXX")
trap boot_cleanup EXIT

build_err=
boot_images
[ -z "$build_err" ] || { echo "$build_err" | diag; }

# run_case CASE: the function of the case table for CASE
run_case() {
	"$(echo "$CASE_TABLE" | awk -v c="$1" '$1 == c { print $2 }')" "$1"
}
run_cases run_case
[ "$failed" -eq 0 ]
