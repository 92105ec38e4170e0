#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/run.sh - boot a client in QEMU and check what ramboot did.
#
# Modelled on dracut's TEST-30-DMSQUASH: build a client root, its squashfs
# and an initramfs once (cached in build/boot/ while their inputs do not
# change), then boot each case with -nodefaults, a timeout and the serial
# console in a log. The client's init prints the ramboot report between
# markers; the assertions read that report, never timing.
#
# The network image is served two ways, as an LTSP client gets it: a virtio
# disk throttled to a gigabit link (stands in for NBD) and a 9p share
# (stands in for NFS). The itools cases boot Debian's own initrd (plain
# initramfs-tools) with the extra initrd `ramboot initrd -o` writes; the
# LTSP cases boot it with the real LTSP code (ltsp.img) and the shipped
# ramboot hook. The lazy cases may talk to QEMU's monitor to cut the
# network disk away from a running client (see boot()).
#
# The cache cases give the client a second virtio disk, a local-disk cache
# (`ramboot cache init` on a file through a loop device): ltsp-cache-cold
# and ltsp-cache-hot boot the real LTSP initrd with it, the others the test
# initramfs (see cache_setup).
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
cache=${RBTEST_CACHE:-$top/build/boot}
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
# The server side (keygen, manifest, serve, initrd): the host build, which
# has libarchive for `ramboot initrd`; else the static one.
rbtool=${RAMBOOT_BIN:-$top/ramboot}
[ -x "$rbtool" ] || rbtool=$rb
timeout_s=${RBTEST_TIMEOUT:-180}
mem=512

CASES="off ram-blk-zstd ram-9p-zstd ram-9p-xz-sha256 ram-9p-lzo
ram-zram-target prefetch lazy-9p profile-record lazy-profile lazy-blk-cut lazy-corrupt lazy-minfree
lazy-stall ltsp-lazy swap-zram fallback-corrupt fallback-sha256
fallback-minfree itools-ram itools-fallback itools-lazy nbd-lazy ltsp-ram udpcast-ram netmem"
# ramboot.verity=1 and signed manifests
CASES="$CASES verity-off verity-ram verity-lazy verity-flip verity-noroot
ltsp-signed ltsp-signed-other"
# ramboot publish --content-addressed: the image the manifest names
CASES="$CASES ltsp-ca"
# ramboot.cache=: the local-disk cache
CASES="$CASES ltsp-cache-cold ltsp-cache-hot cache-powercut cache-delta cache-flip
cache-nodisk"

n=0
failed=0
# shellcheck disable=SC2086 # one word per case
set -- $CASES
echo "1..$#"

ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # skip $2"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

skip_all() {
	for c in $CASES; do skip "$c" "$1"; done
	exit 0
}
fail_all() {
	for c in $CASES; do not_ok "$c"; echo "$1" | diag; done
	exit 1
}

# qemu_bin, qemu_accel, qemu_accel_why: set by images/qemu-accel.sh
qemu_bin='' qemu_accel='' qemu_accel_why=''
# shellcheck disable=SC1091 source=images/qemu-accel.sh
. "$top/images/qemu-accel.sh"
# A bad RAMBOOT_QEMU_ACCEL is an error even where the boots would be skipped.
accel_err=$(qemu_accel_check 2>&1) || fail_all "$accel_err"

kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
kernel=/boot/vmlinuz-$kver
command -v "$qemu_bin" >/dev/null || skip_all "$qemu_bin not installed"
{ [ -n "$kver" ] && [ -r "$kernel" ]; } || skip_all "no Debian kernel in /boot (apt-get install linux-image-amd64)"
[ "$(id -u)" = 0 ] || skip_all "needs root (a 9p share with security_model=none; make install for the LTSP case)"
for t in busybox mksquashfs cpio zstd xz lzop mkfs.ext4 modprobe; do
	command -v "$t" >/dev/null || skip_all "$t not installed (tests/deps.sh install)"
done
[ -x "$rb" ] || skip_all "static/ramboot missing (make static)"

# KVM only where a probe guest really runs with it, else TCG; decided
# once for every boot of the run.
qemu_accel_choose "$kernel" || fail_all "no accelerator"
qemu_note_prefix="# "
echo "# accelerator: $qemu_accel ($qemu_accel_why)"

logs=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-boot.XXXXXX")
# What the cache cases attach or mount on the host, undone on any exit.
cache_lo=
cache_mnt=
cleanup() {
	[ -z "$cache_mnt" ] || { umount "$cache_mnt" 2>/dev/null; rmdir "$cache_mnt" 2>/dev/null; }
	[ -z "$cache_lo" ] || losetup -d "$cache_lo" 2>/dev/null
	if [ "$failed" -eq 0 ] && [ "${RBTEST_KEEP:-0}" != 1 ]; then
		rm -rf "$logs"
	else
		echo "# serial logs kept in $logs"
	fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- artefacts

# key FILE... : the content hash of the inputs of an artefact
key() { cat "$@" | sha256sum | cut -d' ' -f1; }

# fresh NAME KEY: true when the artefact NAME was built from KEY
fresh() { [ -f "$cache/$1.key" ] && [ "$(cat "$cache/$1.key")" = "$2" ]; }
stamp() { echo "$2" > "$cache/$1.key"; }

build_err=
mkdir -p "$cache"
bb=$(command -v busybox)
rootkey=$(key images/build-test-root.sh images/client-init "$rb" "$bb")
net=$cache/net
if ! fresh root "$rootkey" || [ ! -f "$net/x86_64.img" ]; then
	rm -f "$cache/root.key"
	rm -rf "$net" "$cache/blk"
	mkdir -p "$net" "$cache/blk"
	{
		images/build-test-root.sh "$cache/root" "$rb" &&
		mksquashfs "$cache/root" "$net/x86_64.img" -noappend -quiet -all-root -no-progress &&
		zstd -q -19 -T0 -c "$net/x86_64.img" > "$net/x86_64.img.zst" &&
		xz -T0 --block-size=1MiB -c "$net/x86_64.img" > "$net/x86_64.img.xz" &&
		lzop -c "$net/x86_64.img" > "$net/x86_64.img.lzo" &&
		cp "$net/x86_64.img.zst" "$net/bad.img.zst" &&
		size=$(stat -c %s "$net/bad.img.zst") &&
		# Flip bytes in the middle of the compressed stream.
		printf '\377\000\377\000\377\000\377\000' |
			dd of="$net/bad.img.zst" bs=1 seek=$((size / 2)) conv=notrunc status=none &&
		cp "$net/x86_64.img" "$cache/blk/x86_64.img" &&
		# A disk is whole sectors: pad the zstd stream with a skippable
		# frame (magic 0x184D2A50, 32-bit little-endian length), which
		# every zstd decoder passes over.
		cp "$net/x86_64.img.zst" "$cache/blk/x86_64.img.zst" &&
		size=$(stat -c %s "$cache/blk/x86_64.img.zst") &&
		pad=$(( (512 - (size + 8) % 512) % 512 )) &&
		{
			printf '\120\052\115\030'
			printf '%b' "\\0$(printf %o $((pad % 256)))\\0$(printf %o $((pad / 256)))\\0\\0"
			head -c "$pad" /dev/zero
		} >> "$cache/blk/x86_64.img.zst" &&
		[ $(($(stat -c %s "$cache/blk/x86_64.img.zst") % 512)) = 0 ] &&
		zstd -qdc "$cache/blk/x86_64.img.zst" | cmp -s - "$net/x86_64.img" &&
		stamp root "$rootkey"
	} >"$cache/build-root.log" 2>&1 || build_err="client image build failed: $(tail -n 3 "$cache/build-root.log")"
fi
img_size=$(stat -c %s "$net/x86_64.img" 2>/dev/null)
img_sha=$(sha256sum "$net/x86_64.img" 2>/dev/null | cut -d' ' -f1)

initrd=$cache/initramfs.cpio
irdkey=$(key images/build-initramfs.sh images/initramfs-init "$rb" "$bb"; echo "$kver")
if [ -z "$build_err" ] && { ! fresh initramfs "$irdkey" || [ ! -f "$initrd" ]; }; then
	images/build-initramfs.sh "$initrd" "$kver" "$rb" >"$cache/build-initramfs.log" 2>&1 &&
		stamp initramfs "$irdkey" ||
		build_err="initramfs build failed: $(tail -n 3 "$cache/build-initramfs.log")"
fi
[ -z "$build_err" ] || { echo "$build_err" | diag; }

# ---------------------------------------------------------------- booting

# boot NAME NET CMDLINE [MARKER COMMAND]: boot the test initramfs. The
# network images are on a 9p share; NET=blk:FILE adds a virtio disk holding
# FILE (drive id net0), throttled to $blk_bps bytes/s (a gigabit link
# unless the case says otherwise). With MARKER, QEMU's human monitor is
# on a pipe, and COMMAND goes to it once a line of the console starts
# with MARKER.
blk_bps=125000000
boot_extra=
boot() {
	name=$1; where=$2; cmdline=$3
	log=$logs/$name.log
	: > "$log"
	dev="-virtfs local,path=$net,mount_tag=netroot,security_model=none,readonly=on"
	case $where in
	blk:*) dev="$dev -drive id=net0,file=${where#blk:},if=virtio,format=raw,readonly=on,throttling.bps-total=$blk_bps" ;;
	esac
	dev="$dev${boot_extra:+ $boot_extra}"
	watcher=
	if [ $# -ge 5 ]; then
		mon=$logs/$name.mon
		rm -f "$mon.in" "$mon.out"
		: > "$mon.log"
		mkfifo "$mon.in" "$mon.out"
		dev="$dev -monitor pipe:$mon"
		monitor_when "$4" "$5" &
		watcher=$!
	fi
	# shellcheck disable=SC2086 # $dev is a list of options
	qemu_run "$timeout_s" "$log" "$logs/$name.qemu" -smp "${RBTEST_SMP:-2}" -m "$mem" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 rbtest.size=$img_size $cmdline" \
		$dev
	echo "qemu exit $?" >> "$logs/$name.qemu"
	if [ -n "$watcher" ]; then
		kill "$watcher" 2>/dev/null
		wait "$watcher" 2>/dev/null
		rm -f "$mon.in" "$mon.out"
	fi
	tr -d '\r' < "$log" > "$log.txt" 2>/dev/null
	why=
}

# monitor_when MARKER COMMAND: in the background of a boot, send COMMAND
# to QEMU's monitor (the pipe $mon.in, its answers drained from $mon.out
# into $mon.log) when the console shows MARKER; give up with the boot.
monitor_when() {
	cat "$mon.out" >> "$mon.log" &
	drain=$!
	trap 'kill "$drain" 2>/dev/null; exit 0' TERM
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if tr -d '\r' < "$log" | grep -q "^$1"; then
			echo "# $(cut -d' ' -f1 /proc/uptime): $1 seen, sending: $2" >> "$mon.log"
			# QEMU holds the pipe open; a timeout all the same.
			# shellcheck disable=SC2016 # expanded by that sh
			timeout 5 sh -c 'printf "%s\n" "$1" > "$2"' sh "$2" "$mon.in"
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$drain"
}

fail() { why="${why}$*
"; }

# report KEY: the value in the report the guest printed
report() {
	sed -n '/^RBTEST-REPORT-BEGIN/,/^RBTEST-REPORT-END/p' "$log.txt" |
		sed -n "s/^$1=//p" | head -n 1
}
has_key() {
	sed -n '/^RBTEST-REPORT-BEGIN/,/^RBTEST-REPORT-END/p' "$log.txt" | grep -q "^$1="
}

expect_done() {
	grep -q '^RBTEST-DONE' "$log.txt" && return 0
	fail "the client root was never reached"
	return 1
}
expect() { # KEY VALUE
	v=$(report "$1")
	[ "$v" = "$2" ] || fail "report: $1='$v', expected '$2'"
}
expect_like() { # KEY GLOB
	v=$(report "$1")
	# shellcheck disable=SC2254 # the pattern is the point
	case $v in $2) ;; *) fail "report: $1='$v', expected $2" ;; esac
}
expect_not() { # KEY VALUE...
	k=$1; shift
	v=$(report "$k")
	for bad; do
		[ "$v" != "$bad" ] || fail "report: $k='$v', expected anything else"
	done
}
expect_set() { # KEY
	has_key "$1" || { fail "report: no $1= line"; return; }
	[ -n "$(report "$1")" ] || fail "report: $1 is empty"
}
expect_root() { # ram|network
	v=$(sed -n 's/^RBTEST root-source=//p' "$log.txt" | head -n 1)
	case $v in "$1 "*) ;; *) fail "root came from '$v', expected $1" ;; esac
}
expect_ram_copy() { # the bytes in RAM are the image
	v=$(sed -n 's/^RBTEST ram-sha256=//p' "$log.txt" | head -n 1)
	[ "$v" = "$img_sha" ] || fail "RAM copy sha256 '$v' differs from the image's $img_sha"
}
# expect_kmsg LEVEL PREFIX [SUFFIX]: the kernel log holds a record of
# ramboot's at LEVEL (4 warning, 6 info) that starts with PREFIX and ends
# with SUFFIX (literal text; the client prints them as RBTEST ramboot-kmsg)
expect_kmsg() {
	found=
	while read -r _ _ pri msg; do
		case $pri in '' | *[!0-9]*) continue ;; esac
		case $msg in "$2"*"${3:-}") [ $((pri & 7)) = "$1" ] && found=1 ;; esac
	done <<EOF
$(grep '^RBTEST ramboot-kmsg ' "$log.txt")
EOF
	[ -n "$found" ] || fail "kernel log: no record of level $1 '$2...${3:-}'; ramboot's records: $(sed -n 's/^RBTEST ramboot-kmsg //p' "$log.txt" | head -n 5)"
}
# expect_start_line IMAGE CODEC: the console shows that the copy of IMAGE
# began, and so does the kernel log, at info level
expect_start_line() {
	grep -q "^ramboot: boot: copying $1 ([0-9.]* [KMG]iB, $2\\(, [0-9.]* [KMG]iB in RAM\\)\\{0,1\\}) into RAM (tmpfs)\$" "$log.txt" ||
		fail "the console does not show the start of the copy of $1 ($2)"
	expect_kmsg 6 "ramboot: boot: copying $1 (" ") into RAM (tmpfs)"
}

expect_fallback() { # the boot went on from the network, saying why
	expect_root network
	expect mode_asked ram
	expect_not mode_done ram
	expect_set error
	expect_set fallback
	expect_not fallback 0 no none
	expect ram_path ""
	# The reason, in the kernel log at warning level: what `dmesg` and
	# `journalctl -b` keep of a boot with `quiet splash`.
	expect_kmsg 4 "ramboot: boot: warning: $(report fallback)" "; booting from the network image"
	# Nothing half-done left behind: no tmpfs of ours, no loaded zram.
	v=$(sed -n 's/^RBTEST leftover //p' "$log.txt")
	[ -z "$v" ] || fail "left behind after the fallback: $v"
}

# lazy_line KEY: the value of KEY in the lazy status the client printed
lazy_line() { sed -n "s/^RBTEST lazy $1=//p" "$log.txt" | head -n 1; }
expect_lazy() { # KEY VALUE
	v=$(lazy_line "$1")
	[ "$v" = "$2" ] || fail "lazy status: $1='$v', expected '$2'"
}
expect_no_leftover() {
	v=$(sed -n 's/^RBTEST leftover //p' "$log.txt")
	[ -z "$v" ] || fail "left behind: $v"
}
expect_lazy_read() { # every file of the root read back
	grep -q '^RBTEST lazy-read=ok$' "$log.txt" || fail "reading every file of the root failed"
}
# expect_lazy_switched: the copier switched the loop device to the copy
# (the root is the network image's mount: expect_root network where the
# test initramfs mounted it)
expect_lazy_switched() {
	expect mode_asked lazy
	expect mode_done lazy
	expect fallback ""
	expect_lazy state switched
	expect_lazy sha256 "$img_sha"
	grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/ram/' "$log.txt" ||
		fail "the loop device is not backed by the RAM copy"
	expect_lazy_read
	expect_no_leftover
}
# expect_lazy_gave_up REASON IMAGE: the copier gave up, freed its copy and
# left the loop device on IMAGE, the network image
expect_lazy_gave_up() {
	expect_root network
	expect mode_asked lazy
	# the copier records its outcome in the boot report too
	expect mode_done off
	expect fallback "lazy copy gave up: $1"
	expect lazy_gave_up "$1"
	expect_set error
	expect_lazy state gave-up
	expect_lazy gave_up "$1"
	expect_set_lazy error
	grep -q "^RBTEST loop loop[0-9]*=$2\$" "$log.txt" ||
		fail "the loop device is not backed by the network image $2"
	! grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/' "$log.txt" ||
		fail "a loop device is backed by a file in /run/ramboot"
	expect_lazy_read
	expect_no_leftover
}
expect_set_lazy() { # KEY
	[ -n "$(lazy_line "$1")" ] || fail "lazy status: $1 is empty"
}

# result NAME: one TAP line from $why; with $todo set (a known bug that
# the case shows), a failure is a TAP TODO, not counted as one
todo=
result() {
	if [ -z "$why" ]; then
		todo=
		ok "$1"
		return
	fi
	if [ -n "$todo" ]; then
		n=$((n + 1))
		echo "not ok $n - $1 # TODO $todo"
		todo=
	else
		not_ok "$1"
	fi
	printf '%s' "$why" | diag
	echo "serial console ($log), last lines:" | diag
	tail -n 30 "$log.txt" 2>/dev/null | diag
	grep -v '^qemu exit 0$' "$logs/$1.qemu" 2>/dev/null | diag
}

wanted() {
	[ -z "${RBTEST_CASES:-}" ] || echo "$1" | grep -Eq -- "$RBTEST_CASES"
}

run_case() {
	c=$1
	case $c in
	off)
		boot "$c" 9p "ramboot=off"
		expect_done && {
			expect_root network
			expect mode_asked off
			expect_not mode_done ram prefetch
			expect ram_path ""
		} ;;
	ram-blk-zstd)
		boot "$c" "blk:$cache/blk/x86_64.img.zst" "rbtest.net=blk rbtest.src=/dev/vda ramboot=ram"
		expect_done && {
			expect_root ram
			expect mode_asked ram
			expect mode_done ram
			expect source /dev/vda
			expect target tmpfs
			expect_like ram_path "/run/ramboot/ram/*"
			expect bytes "$img_size"
			expect codec zstd
			expect fstype squashfs
			expect_ram_copy
		} ;;
	ram-9p-zstd)
		boot "$c" 9p "rbtest.src=/mnt/net/x86_64.img.zst ramboot=ram"
		expect_done && {
			expect_root ram
			expect mode_done ram
			expect target tmpfs
			expect codec zstd
			expect fstype squashfs
			expect_ram_copy
			# the copy's start and end, on the console and in the
			# kernel log
			expect_start_line /mnt/net/x86_64.img.zst zstd
			ram=$(report ram_path)
			grep -q "^ramboot: boot: copied into RAM (tmpfs): $ram, [0-9.]* [KMG]iB in [0-9.]* s, not verified\$" "$log.txt" ||
				fail "the console does not show the end of the copy"
			expect_kmsg 6 "ramboot: boot: copied into RAM (tmpfs): $ram, " ", not verified"
		} ;;
	ram-9p-xz-sha256)
		boot "$c" 9p "rbtest.src=/mnt/net/x86_64.img.xz ramboot=ram ramboot.sha256=$img_sha"
		expect_done && {
			expect_root ram
			expect mode_done ram
			expect codec xz
			expect hash ok
			expect_ram_copy
		} ;;
	ram-9p-lzo)
		boot "$c" 9p "rbtest.src=/mnt/net/x86_64.img.lzo ramboot=ram"
		expect_done && {
			expect_root ram
			expect mode_done ram
			expect codec lzo
			expect_ram_copy
		} ;;
	ram-zram-target)
		boot "$c" "blk:$cache/blk/x86_64.img" "rbtest.net=blk rbtest.root=/dev/vda ramboot=ram ramboot.target=zram"
		expect_done && {
			expect_root ram
			expect mode_done ram
			expect target zram
			expect_like ram_path "/dev/zram*"
			expect source /dev/vda
			expect codec none
			expect fstype squashfs
			expect_ram_copy
		} ;;
	prefetch)
		boot "$c" 9p "ramboot=prefetch"
		expect_done && {
			expect_root network
			expect mode_asked prefetch
			expect mode_done prefetch
			expect ram_path ""
			expect fallback ""
		} ;;
	profile-record)
		# A boot with ramboot=off records which ranges of the image it
		# read (the disk through a read-only loop, as over NBD: its
		# page cache is what the recorder samples); the client's
		# workload reads a part of the root, stops the recorder and
		# prints the profile, which the next case uses.
		profile_file=$logs/pshare/vda.profile
		mkdir -p "$logs/pshare"
		rm -f "$profile_file"
		boot "$c" "blk:$cache/blk/x86_64.img" "rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot.profile=record rbtest.workload=1"
		expect_done && {
			expect_root network
			expect mode_done off
			sed -n '/^RBTEST-PROFILE-BEGIN/,/^RBTEST-PROFILE-END/p' "$log.txt" |
				grep -v '^RBTEST' | base64 -d > "$profile_file" 2>/dev/null
			if ! head -n 1 "$profile_file" 2>/dev/null | grep -q '^ramboot-profile 1$'; then
				fail "no profile came back from the client"
			elif ! "${RAMBOOT_BIN:-$top/ramboot}" profile show "$profile_file" > "$logs/$c.show" 2>&1; then
				fail "the recorded profile does not parse: $(tail -n 1 "$logs/$c.show")"
			elif ! grep -q '^range ' "$profile_file"; then
				fail "the recorded profile holds no range"
			fi
		} ;;
	lazy-profile)
		# The next boot copies with that profile: its ranges first.
		if [ ! -s "$logs/pshare/vda.profile" ]; then
			fail "no profile from profile-record"
		else
			net_saved=$net
			net=$logs/pshare
			boot "$c" "blk:$cache/blk/x86_64.img" "rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot=lazy ramboot.profile=/mnt/net/vda.profile"
			net=$net_saved
			expect_done && {
				expect_root network
				expect mode_done lazy
				expect_lazy profile used
				expect_lazy state switched
				expect_lazy sha256 "$img_sha"
				expect_lazy_read
			}
		fi ;;
	lazy-9p)
		# The root comes from the network image at once; the copier
		# switches its loop device to a verified RAM copy behind it.
		boot "$c" 9p "ramboot=lazy"
		expect_done && {
			expect_root network
			expect mode_asked lazy
			expect mode_done lazy
			expect fallback ""
			expect_like ram_path "/run/ramboot/ram/*"
			expect_like lazy_switched "[0-9]*"
			expect_set lazy_bytes_network
			grep -q '^RBTEST lazy state=switched$' "$log.txt" ||
				fail "the lazy copy did not switch: $(sed -n 's/^RBTEST lazy state=//p' "$log.txt")"
			grep -q "^RBTEST lazy sha256=$img_sha\$" "$log.txt" ||
				fail "the lazy copy's sha256 is not the image's $img_sha"
			grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/ram/' "$log.txt" ||
				fail "the loop device is not backed by the RAM copy"
			grep -q '^RBTEST lazy-read=ok$' "$log.txt" || fail "reading the root after the switch failed"
			v=$(sed -n 's/^RBTEST leftover //p' "$log.txt")
			[ -z "$v" ] || fail "left behind: $v"
		} ;;
	lazy-blk-cut)
		# The image on a throttled disk (NBD), mounted through a
		# read-only loop device over it. Once the copy switched, the
		# host deletes the disk's drive through QEMU's monitor (every
		# I/O on it fails from then on) and the client reads every file
		# of its root, from the RAM copy.
		boot "$c" "blk:$cache/blk/x86_64.img" \
			"rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 rbtest.cut=/dev/vda ramboot=lazy" \
			"RBTEST lazy-ready-to-cut" "drive_del net0"
		expect_done && {
			expect_root network
			expect_lazy_switched
			expect source /dev/vda
			expect_lazy image /dev/vda
			grep -q '^RBTEST source-cut$' "$log.txt" ||
				fail "the disk was not cut: $(grep '^RBTEST source-cut' "$log.txt")"
		} ;;
	lazy-corrupt)
		# The copy does not hash to ramboot.sha256: the client stays
		# on the network image, the copy is freed.
		boot "$c" 9p "ramboot=lazy ramboot.sha256=$(printf '%064d' 0)"
		expect_done && {
			expect_lazy_gave_up hash-mismatch /mnt/net/x86_64.img
			expect_lazy hash mismatch
			expect_lazy sha256 "$img_sha"
		} ;;
	lazy-minfree)
		# The guest has 512M: the copier refuses to start (exit 3),
		# before it makes anything; the boot reports the fallback.
		boot "$c" 9p "ramboot=lazy ramboot.minfree=4G"
		expect_done && {
			expect_root network
			expect mode_asked lazy
			expect mode_done off
			expect fallback "not enough memory"
			expect_set error
			expect_lazy state gave-up
			expect_lazy gave_up memory
			expect_lazy copy ""
			grep -q '^RBTEST loop loop[0-9]*=/mnt/net/x86_64.img$' "$log.txt" ||
				fail "the loop device is not backed by the network image"
			expect_no_leftover
		} ;;
	lazy-stall)
		# A disk so slow that every piece of the copy takes longer than
		# ramboot.timeout=0.2: the copier gives up on the stall, the
		# client goes on from the disk. While the boot reads, the
		# copier's reads shrink to 64 KiB (bgread's yield), a quarter
		# of a second here; between the boot's reads they are 1 MiB.
		blk_bps=262144
		boot "$c" "blk:$cache/blk/x86_64.img" \
			"rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot=lazy ramboot.timeout=0.2"
		blk_bps=125000000
		expect_done && expect_lazy_gave_up stall /dev/vda ;;
	ltsp-lazy)
		ltsp_case "$c"
		return ;;
	swap-zram)
		boot "$c" 9p "rbtest.src=/mnt/net/x86_64.img.zst ramboot=ram ramboot.swap=zram ramboot.swap.size=64M ramboot.swap.algorithm=zstd ramboot.swap.priority=77"
		expect_done && {
			expect_root ram
			expect mode_done ram
			expect_like swap_device "/dev/zram*"
			expect swap_size 67108864
			expect swap_algorithm zstd
			expect swap_priority 77
			dev=$(report swap_device)
			sed -n '/^RBTEST-SWAPS-BEGIN/,/^RBTEST-SWAPS-END/p' "$log.txt" |
				grep -Eq "^${dev:-/dev/zram}[[:space:]].*[[:space:]]77\$" ||
				fail "/proc/swaps has no $dev with priority 77"
		} ;;
	fallback-corrupt)
		boot "$c" 9p "rbtest.src=/mnt/net/bad.img.zst ramboot=ram"
		expect_done && expect_fallback ;;
	fallback-sha256)
		boot "$c" 9p "rbtest.src=/mnt/net/x86_64.img.zst ramboot=ram ramboot.sha256=$(printf '%064d' 0)"
		expect_done && {
			expect_fallback
			expect hash mismatch
			# the copy began, and ended in the warning alone
			expect_start_line /mnt/net/x86_64.img.zst zstd
			! grep -q '^RBTEST ramboot-kmsg [0-9]* ramboot: boot: copied into RAM' "$log.txt" ||
				fail "the kernel log says a copy was made"
		} ;;
	fallback-minfree)
		boot "$c" 9p "ramboot=ram ramboot.minfree=4G"
		expect_done && expect_fallback ;;
	itools-*)
		itools_case "$c"
		return ;;
	nbd-lazy)
		nbd_case "$c"
		return ;;
	ltsp-ram)
		ltsp_case "$c"
		return ;;
	udpcast-ram) udpcast_case "$c"; return ;;
	netmem) netmem_case "$c"; return ;;
	verity-*) verity_case "$c"; return ;;
	ltsp-cache-* | cache-*) cache_case "$c"; return ;;
	ltsp-signed*) ltsp_signed_case "$c"; return ;;
	ltsp-ca) ltsp_ca_case "$c"; return ;;
	esac
	result "$c"
}

# ---------------------------------------------------------------- Debian's initrd

# deb_initrd_ready MODULE...: Debian's /boot/initrd.img-$kver holds these
# modules (update-initramfs once if not: installing ltsp makes it add them).
deb_initrd=/boot/initrd.img-$kver
deb_initrd_ready() {
	command -v lsinitramfs >/dev/null || return 1
	[ -r "$deb_initrd" ] || return 1
	deb_mods=$(lsinitramfs "$deb_initrd" 2>/dev/null)
	for m; do
		echo "$deb_mods" | grep -q "/$m\.ko" && continue
		update-initramfs -u -k "$kver" > "$cache/update-initramfs.log" 2>&1 || return 1
		deb_mods=$(lsinitramfs "$deb_initrd" 2>/dev/null)
		break
	done
	for m; do
		echo "$deb_mods" | grep -q "/$m\.ko" || return 1
	done
	return 0
}

# boot_debian NAME INITRD MEM CMDLINE DRIVE [OPTIONS]: boot Debian's
# kernel with a combined initrd and one virtio disk (DRIVE empty: none),
# no 9p share; OPTIONS, a list of QEMU options, add devices.
boot_debian() {
	name=$1
	log=$logs/$name.log
	# shellcheck disable=SC2086 # $6 is a list of options
	qemu_run "$timeout_s" "$log" "$logs/$name.qemu" -smp "${RBTEST_SMP:-2}" -m "$3" \
		-kernel "$kernel" -initrd "$2" \
		-append "console=ttyS0 panic=-1 loglevel=4 rbtest.size=$img_size $4" \
		${5:+-drive "$5"} ${6:-}
	echo "qemu exit $?" >> "$logs/$name.qemu"
	tr -d '\r' < "$log" > "$log.txt" 2>/dev/null
}

# The initramfs-tools cases: Debian's initrd.img as it is, after the extra
# initrd `ramboot initrd -o` writes (uncompressed, so it must come first:
# the kernel does not look past a compressed archive for another one). Its
# conf/conf.d/zz-ramboot.conf puts the boot script into init-bottom's
# ORDER. The root is the raw squashfs on a virtio disk, root=/dev/vda: the
# boot script hands it to `ramboot boot` as --default-image.
itools_setup() {
	it=$cache/itools
	mkdir -p "$it"
	deb_initrd_ready squashfs overlay loop zram virtio_blk || {
		skip "$1" "$deb_initrd lacks squashfs/overlay/loop/zram/virtio_blk (or no initramfs-tools)"
		return 1
	}
	[ -x "$rbtool" ] || { skip "$1" "$rbtool missing (make)"; return 1; }
	# A fixed, empty configuration: not this machine's /etc/ramboot.conf.
	echo "# ramboot.conf of the itools boot cases: defaults" > "$it/ramboot.conf"
	if ! "$rbtool" initrd -o "$it/ramboot.cpio" --binary="$rb" --hooks=initrd-hooks \
		--conf="$it/ramboot.conf" > "$it/initrd.log" 2>&1; then
		if grep -q 'without initrd support' "$it/initrd.log"; then
			skip "$1" "$rbtool was built without libarchive (no \`ramboot initrd\`)"
			return 1
		fi
		fail "ramboot initrd -o failed: $(tail -n 3 "$it/initrd.log")"
		return 0
	fi
	cat "$it/ramboot.cpio" "$deb_initrd" > "$it/initrd.combined"
	return 0
}

itools_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	itools_setup "$name" || return
	if [ -n "$why" ]; then
		result "$name"
		return
	fi
	args="root=/dev/vda rootfstype=squashfs ro init=/sbin/rbtest-init"
	case $name in
	itools-ram) args="$args ramboot=ram ramboot.swap=zram" ;;
	itools-fallback) args="$args ramboot=ram ramboot.minfree=4G" ;;
	itools-lazy) args="$args ramboot=lazy" ;;
	esac
	boot_debian "$name" "$it/initrd.combined" "$mem" "$args" \
		"file=$cache/blk/x86_64.img,if=virtio,format=raw,readonly=on,throttling.bps-total=125000000"
	grep -q 'Running /scripts/init-bottom' "$log.txt" ||
		fail "initramfs-tools' init-bottom never ran"
	expect_done || { result "$name"; return; }
	expect source /dev/vda
	case $name in
	itools-lazy)
		# local-premount put the root disk on a read-only loop device
		# and the boot mounted that; the copier started in init-bottom
		# switched it to the RAM copy.
		expect_lazy_switched
		expect_lazy image /dev/vda
		grep -q 'ramboot: local-premount: root /dev/vda through the read-only loop device /dev/loop[0-9]*$' "$log.txt" ||
			fail "local-premount did not put the root on a loop device"
		grep -q '^RBTEST mount /dev/loop[0-9]* / squashfs ' "$log.txt" ||
			fail "/ is not the squashfs on the loop device"
		! grep -q '^RBTEST mount /dev/vda ' "$log.txt" ||
			fail "/dev/vda is mounted directly" ;;
	itools-ram)
		expect mode_asked ram
		expect mode_done ram
		expect target tmpfs
		expect_like ram_path "/run/ramboot/ram/*"
		expect bytes "$img_size"
		expect fstype squashfs
		expect fallback ""
		expect error ""
		expect_ram_copy
		ram=$(report ram_path)
		grep -q "ramboot: init-bottom: root file system in RAM: $ram\$" "$log.txt" ||
			fail "the boot script did not say it put the root in RAM"
		# The root is a tmpfs overlay on the squashfs in RAM, through a
		# loop device backed by the copy; /dev/vda is no longer mounted.
		grep -q '^RBTEST mount overlay / overlay .*lowerdir=/run/ramboot/ro[,:]' "$log.txt" ||
			fail "/ is not the overlay on /run/ramboot/ro"
		loopdev=$(sed -n "s|^RBTEST loop \\(loop[0-9]*\\)=$ram\$|\\1|p" "$log.txt" | head -n 1)
		if [ -z "$loopdev" ]; then
			fail "no loop device is backed by the RAM copy $ram"
		else
			grep -q "^RBTEST mount /dev/$loopdev /run/ramboot/ro squashfs " "$log.txt" ||
				fail "/run/ramboot/ro is not the squashfs on /dev/$loopdev"
		fi
		! grep -q '^RBTEST mount /dev/vda ' "$log.txt" ||
			fail "/dev/vda is still mounted"
		# zram from Debian's initrd; the extra initrd brings no modules,
		# so the algorithm is whatever that kernel and initrd offer.
		expect_like swap_device "/dev/zram*"
		dev=$(report swap_device)
		sed -n '/^RBTEST-SWAPS-BEGIN/,/^RBTEST-SWAPS-END/p' "$log.txt" |
			grep -q "^${dev:-/dev/zram}[[:space:]]" || fail "/proc/swaps has no $dev" ;;
	itools-fallback)
		expect mode_asked ram
		expect_not mode_done ram
		expect ram_path ""
		expect_set fallback
		expect_set error
		grep -q '^RBTEST mount /dev/vda / squashfs ' "$log.txt" ||
			fail "/ is not /dev/vda"
		! grep -q '^RBTEST mount overlay / ' "$log.txt" ||
			fail "/ is an overlay after the fallback"
		v=$(sed -n 's/^RBTEST leftover //p' "$log.txt")
		[ -z "$v" ] || fail "left behind after the fallback: $v" ;;
	esac
	result "$name"
}

# ---------------------------------------------------------------- NBD

# nbd-lazy: the root over a real NBD device. qemu-nbd on the host serves
# the squashfs read-only on a TCP port of 127.0.0.1, which the guest's
# user networking reaches as 10.0.2.2; Debian's initrd (with nbd-client's
# initramfs-tools script, local-top/nbd) connects /dev/nbd0 from
# root=/dev/nbd0 nbdroot=10.0.2.2:PORT/x86_64. ramboot's local-premount
# phase puts /dev/nbd0 on a read-only loop device, the boot mounts that,
# and the copier switches it to the RAM copy. Then the host kills the
# server (when the client prints `RBTEST lazy-ready-to-cut`), the client
# sees a direct read of /dev/nbd0 fail and reads every file of its root.
nbd_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	command -v qemu-nbd >/dev/null || { skip "$name" "qemu-nbd not installed (qemu-utils)"; return; }
	itools_setup "$name" || return
	[ -z "$why" ] || { result "$name"; return; }
	if ! deb_initrd_ready nbd virtio_net ||
		! echo "$deb_mods" | grep -q 'scripts/local-top/nbd$'; then
		skip "$name" "$deb_initrd lacks nbd-client's script, nbd or virtio_net (apt-get install nbd-client)"
		return
	fi
	# A port of its own for this run; qemu-nbd serves one client,
	# read-only, and stays after the client disconnects (-t).
	port=$((20000 + $$ % 20000))
	qemu-nbd --read-only --persistent --format=raw --bind=127.0.0.1 --port="$port" \
		--export-name=x86_64 "$cache/blk/x86_64.img" > "$logs/$name.nbd" 2>&1 &
	nbd_pid=$!
	: > "$log"
	nbd_cut_when "RBTEST lazy-ready-to-cut" &
	cutter=$!
	boot_debian "$name" "$it/initrd.combined" "$mem" \
		"root=/dev/nbd0 nbdroot=10.0.2.2:$port/x86_64 ip=dhcp rootfstype=squashfs ro init=/sbin/rbtest-init ramboot=lazy rbtest.cut=/dev/nbd0" \
		"" "-netdev user,id=n0 -device virtio-net-pci,netdev=n0"
	kill "$cutter" 2>/dev/null
	wait "$cutter" 2>/dev/null
	kill "$nbd_pid" 2>/dev/null
	wait "$nbd_pid" 2>/dev/null
	grep -q 'Setting up nbd-client' "$log.txt" ||
		fail "nbd-client's initramfs script never ran"
	expect_done || { result "$name"; return; }
	expect_lazy_switched
	expect source /dev/nbd0
	expect_lazy image /dev/nbd0
	grep -q 'ramboot: local-premount: root /dev/nbd0 through the read-only loop device /dev/loop[0-9]*$' "$log.txt" ||
		fail "local-premount did not put /dev/nbd0 on a loop device"
	grep -q '^RBTEST mount /dev/loop[0-9]* / squashfs ' "$log.txt" ||
		fail "/ is not the squashfs on the loop device"
	grep -q "^# .*server killed" "$logs/$name.nbd" ||
		fail "the NBD server was never killed"
	grep -q '^RBTEST source-cut$' "$log.txt" ||
		fail "the client still read /dev/nbd0: $(grep '^RBTEST source-cut' "$log.txt")"
	result "$name"
}

# nbd_cut_when MARKER: in the background of the NBD boot, kill the NBD
# server ($nbd_pid) once a console line starts with MARKER.
nbd_cut_when() {
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if tr -d '\r' < "$log" 2>/dev/null | grep -q "^$1"; then
			kill "$nbd_pid" && echo "# $(cut -d' ' -f1 /proc/uptime): $1 seen, server killed" >> "$logs/$name.nbd"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# netmem_monitor_when MARKER COMMAND: in the background of a boot with a
# monitor, one more COMMAND to it when the console shows MARKER (boot()'s
# monitor_when sends the first and drains the answers).
netmem_monitor_when() {
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if tr -d '\r' < "$log" 2>/dev/null | grep -q "^$1"; then
			echo "# $(cut -d' ' -f1 /proc/uptime): $1 seen, sending: $2" >> "$logs/$name.mon.log"
			# shellcheck disable=SC2016 # expanded by that sh
			timeout 5 sh -c 'printf "%s\n" "$1" > "$2"' sh "$2" "$logs/$name.mon.in"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# The second half of the netmem boot: the cut link, the half-way set-up,
# the teardown (see netmem_case). The numbers go to the TAP output.
netmem_cut_checks() {
	line() { grep "^RBTEST $1" "$log.txt" | head -n 1; }
	grep -q 'set_link n0 off' "$logs/$name.mon.log" || fail "the link was never cut"
	grep -q 'set_link n0 on' "$logs/$name.mon.log" || fail "the link was never restored"
	line netmem-cut-lost=seen > /dev/null || fail "the report never said lost after the cut"
	grep -q '^RBTEST netmem-record pid=[0-9]* start=[1-9][0-9]* zram=[0-9]* nbd=[0-9]* $' "$log.txt" ||
		fail "no record of the tier: $(line netmem-record)"
	if grep -q 'swap --off cannot find the process' "$log.txt"; then
		fail "the tier's record was not written"
	fi
	grep -q '^RBTEST netmem-cut-status swap_net_state=lost$' "$log.txt" ||
		fail "ramboot status did not say lost during the cut: $(line netmem-cut-status)"
	# SIGBUS: the read of a page on the unreachable server failed
	grep -q '^RBTEST netmem-cut-victim exit=135 ' "$log.txt" ||
		fail "the process touching pages on the server did not get SIGBUS: $(line netmem-cut-victim)"
	grep -q '^RBTEST netmem-cut-heartbeat=[1-9]' "$log.txt" ||
		fail "nothing else ran during the cut: $(line netmem-cut-heartbeat)"
	grep -q '^RBTEST netmem-daemon-after-cut=alive$' "$log.txt" ||
		fail "the policy process died in the cut"
	line netmem-cut-reconnected=seen > /dev/null || fail "the tier did not reconnect after the cut"
	grep -q '^RBTEST netmem-half rc=0 dev=/dev/zram' "$log.txt" ||
		fail "the half-way tier did not leave zram alone: $(line netmem-half)"
	if [ "$(grep -c '^RBTEST netmem-half-err .*\(warning\|error\): ' "$log.txt")" != 1 ] ||
		! grep -q '^RBTEST netmem-half-err ramboot: swap: warning: network memory .*dm-crypt: .*; zram alone$' "$log.txt"; then
		fail "the half-way tier did not say one warning line: $(grep '^RBTEST netmem-half-err' "$log.txt")"
	fi
	grep -q '^RBTEST netmem-half-backing=none$' "$log.txt" ||
		fail "the half-way tier left a backing device: $(line netmem-half-backing)"
	[ "$(sed -n 's/^RBTEST netmem-half-nbd-after=//p' "$log.txt")" = \
		"$(sed -n 's/^RBTEST netmem-half-nbd-before=//p' "$log.txt")" ] ||
		fail "the half-way tier left an NBD connection: $(line netmem-half-nbd)"
	grep -q '^RBTEST netmem-off rc=0$' "$log.txt" ||
		fail "swap --off failed: $(line netmem-off); $(grep '^RBTEST netmem-off-out' "$log.txt")"
	grep -q '^RBTEST netmem-off-mapper=gone dm=0$' "$log.txt" ||
		fail "swap --off left the mapping: $(line netmem-off-mapper)"
	grep -q '^RBTEST netmem-off-nbd=$' "$log.txt" ||
		fail "swap --off left an NBD connection: $(line netmem-off-nbd)"
	grep -q '^RBTEST netmem-off-swaps=0$' "$log.txt" || fail "swap --off left swap: $(line netmem-off-swaps)"
	grep -q '^RBTEST netmem-off-zram=gone$' "$log.txt" || fail "swap --off left the zram device"
	grep -q '^RBTEST netmem-off-daemon=gone$' "$log.txt" ||
		fail "swap --off left the policy process: $(line netmem-off-daemon)"
	grep -q '^RBTEST netmem-off-record=gone$' "$log.txt" || fail "swap --off left its record"
	grep -q '^RBTEST netmem-off-state=off$' "$log.txt" || fail "the report does not say off: $(line netmem-off-state)"
	# SigIgn: SIGPIPE is bit 12 (a write to a closed pipe fails, no signal)
	sigign=$(sed -n 's/^RBTEST netmem-daemon-sigign=\([0-9a-f]*\) .*/\1/p' "$log.txt")
	[ $((0x${sigign:-0} >> 12 & 1)) = 1 ] || fail "the policy process does not ignore SIGPIPE: $(line netmem-daemon-sigign)"
	grep -q '^RBTEST netmem-again rc=0 dev=/dev/zram' "$log.txt" ||
		fail "the tier started with stderr closed failed: $(line 'netmem-again ')"
	grep -q '^RBTEST netmem-again-daemon=alive state=connected ' "$log.txt" ||
		fail "the tier's process started with stderr closed did not live on: $(line netmem-again-daemon)"
	grep -q '^RBTEST netmem-again-off rc=0 nbd= mapper=gone state=off$' "$log.txt" ||
		fail "the second tier did not go with --off: $(line netmem-again-off); $(grep '^RBTEST netmem-again-off-out' "$log.txt")"
	grep '^RBTEST netmem-cut-\|^RBTEST netmem-daemon-sigign' "$log.txt" | grep -v victim-out | diag
}

# netmem: the network memory tier. A 256 MiB client with
# ramboot.swap.net= pointing at qemu-nbd on the host (127.0.0.1, which
# QEMU's user network shows the guest as 10.0.2.2), serving a sparse
# file. The guest (tests/boot/netmem-guest.sh, from a share of its own)
# fills most of its memory with pages of a marker text and waits
# until the tier wrote some back to the server. The host then kills the
# server and starts it again; the tier connects again, and the guest
# reads every page back and verifies it. The file on the host must hold
# data, and no marker: the pages went through dm-crypt.
#
# The same boot then cuts the link (QEMU's monitor: set_link n0 off, when
# the guest prints `RBTEST netmem-cut-link`): a process whose pages are on
# the server touches them and must get an error after the timeout, a
# heartbeat must go on, the report and `ramboot status` must say lost.
# The link comes back (`RBTEST netmem-link-restore`), the tier must
# reconnect; a second tier set up while the first holds the mapping's
# name must fail half-way and undo its NBD connection (zram alone, one
# warning); `ramboot swap --off` must take the first tier down: no
# mapping, no NBD connection, no swap, no policy process. A tier started
# again with stderr closed must run on and go with --off too.
netmem_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	command -v qemu-nbd >/dev/null || { skip "$name" "qemu-nbd not installed (qemu-utils)"; return; }
	command -v cc >/dev/null || { skip "$name" "no C compiler for the workload"; return; }
	share=$logs/$name.share
	mkdir -p "$share"
	if ! cc -O2 -static -o "$share/dochog" tests/fixtures/swap/dochog.c 2> "$logs/$name.cc"; then
		skip "$name" "cannot build a static dochog: $(tail -n 1 "$logs/$name.cc")"
		return
	fi
	cp tests/boot/netmem-guest.sh "$share/case.sh"
	store=$logs/$name.img
	rm -f "$store"
	truncate -s 512M "$store"
	# Under TCG the workload alone takes minutes.
	timeout_saved=$timeout_s
	timeout_s=$((timeout_s * 9))
	port=$((20000 + ($$ + 1) % 20000))
	# --shared: the tier's reconnection may come before the server saw
	# the old connection close (a cut link), and the half-way tier is a
	# second client.
	netmem_serve() {
		qemu-nbd --persistent --shared=4 --format=raw --cache=writeback --bind=127.0.0.1 --port="$port" \
			--export-name=swap "$store" >> "$logs/$name.nbd" 2>&1 &
		echo $! > "$logs/$name.nbd.pid"
	}
	: > "$logs/$name.nbd"
	netmem_serve
	nbd_pid=$(cat "$logs/$name.nbd.pid")
	: > "$logs/$name.log"
	# Once pages are on the server: kill it, and start it again 3 s later.
	(
		nbd_cut_when "RBTEST netmem-ready-to-cut" && sleep 3 && netmem_serve &&
			echo "# $(cut -d' ' -f1 /proc/uptime): server started again" >> "$logs/$name.nbd"
	) &
	cutter=$!
	netmem_monitor_when "RBTEST netmem-link-restore" "set_link n0 on" &
	restorer=$!
	mem_saved=$mem
	mem=256
	boot_extra="-virtfs local,path=$share,mount_tag=rbshare,security_model=none,readonly=on -netdev user,id=n0 -device virtio-net-pci,netdev=n0"
	boot "$name" 9p "rbtest.ip=10.0.2.15/24 rbtest.share=1 ramboot=off ramboot.swap.net=10.0.2.2:$port,idle=15,period=2,rate=64MiB/s" \
		"RBTEST netmem-cut-link" "set_link n0 off"
	boot_extra=
	mem=$mem_saved
	timeout_s=$timeout_saved
	kill "$cutter" "$restorer" 2>/dev/null
	wait "$cutter" 2>/dev/null
	wait "$restorer" 2>/dev/null
	kill "$nbd_pid" "$(cat "$logs/$name.nbd.pid")" 2>/dev/null
	wait "$nbd_pid" 2>/dev/null
	expect_done && {
		expect swap_net "10.0.2.2:$port"
		# the report after the guest's swap --off
		expect swap_net_state off
		expect_like swap_device "/dev/zram*"
		grep -q '^RBTEST netmem-backing=/dev/mapper/ramboot-netmem$' "$log.txt" ||
			fail "zram's backing device is not the crypt mapping: $(grep '^RBTEST netmem-backing' "$log.txt")"
		# init moved into init.scope after the tier started: the tier's
		# process keeps its memory out of swap
		grep -q '^RBTEST netmem-pid1-cgroup=/init.scope swap.max-new=max$' "$log.txt" ||
			fail "init not in a new init.scope: $(grep '^RBTEST netmem-pid1-cgroup' "$log.txt")"
		grep -q '^RBTEST netmem-pid1 swap.max=0 report=protected$' "$log.txt" ||
			fail "init's cgroup is not kept out of swap: $(grep '^RBTEST netmem-pid1' "$log.txt")"
		grep -q '^RBTEST netmem-cut-status swap_net_pid1=protected$' "$log.txt" ||
			fail "ramboot status does not say init is protected: $(grep '^RBTEST netmem-cut-status swap_net_pid1' "$log.txt")"
		grep '^RBTEST netmem-pid1' "$log.txt" | diag
		grep -q "^RBTEST netmem-loaded=18\$" "$log.txt" ||
			fail "the workload did not load all its documents: $(grep '^RBTEST netmem-load' "$log.txt")"
		before=$(sed -n 's/^RBTEST netmem-bd-before=//p' "$log.txt")
		after=$(sed -n 's/^RBTEST netmem-bd-after=//p' "$log.txt")
		# shellcheck disable=SC2086 # bd_count bd_reads bd_writes
		set -- $before 0 0 0
		[ "$1" -ge 1024 ] || fail "fewer than 1024 pages on the network before the re-read: bd_stat '$before'"
		# shellcheck disable=SC2086
		set -- $after 0 0 0
		[ "$2" -gt 0 ] || fail "no page was read back from the network: bd_stat '$after'"
		grep -q "^# .*server killed" "$logs/$name.nbd" ||
			fail "the NBD server was never killed"
		# The tier's own word for each outage (the server killed, the
		# link cut), from the kernel log: the guest's shell may itself
		# wait on a page on the server and miss a short `lost` in the
		# report (RBTEST netmem-lost=seen, when it saw one).
		[ "$(grep -c '^RBTEST ramboot-kmsg .*: network memory .*: connection lost; reconnecting$' "$log.txt")" -ge 2 ] ||
			fail "the tier did not see both outages: $(grep '^RBTEST ramboot-kmsg .*network memory' "$log.txt")"
		[ "$(grep -c '^RBTEST ramboot-kmsg .*: network memory .*: reconnected$' "$log.txt")" -ge 2 ] ||
			fail "the tier did not connect again after both outages: $(grep '^RBTEST ramboot-kmsg .*network memory' "$log.txt")"
		grep -q '^RBTEST netmem-reconnected=seen$' "$log.txt" ||
			fail "the tier did not connect again to the restarted server"
		grep -q '^RBTEST netmem-dochog-exit=0$' "$log.txt" ||
			fail "the workload failed: $(grep '^RBTEST netmem-dochog' "$log.txt" | tail -n 3)"
		grep -q '^RBTEST netmem-dochog verified 18$' "$log.txt" ||
			fail "the workload did not verify its pages"
		# The counts as `ramboot status` showed them in the cut: the
		# report at the end is of the tier started again after --off.
		for k in pages bytes_written bytes_read; do
			grep -q "^RBTEST netmem-cut-status swap_net_$k=[1-9]" "$log.txt" ||
				fail "ramboot status did not count swap_net_$k: $(grep "^RBTEST netmem-cut-status swap_net_$k=" "$log.txt")"
		done
		grep -q '^RBTEST netmem-daemon pid=[0-9]* VmLck: [1-9][0-9]\{0,3\} kB$' "$log.txt" ||
			fail "no ramboot process out of the OOM killer's reach with at most 9999 kB locked: $(grep '^RBTEST netmem-daemon' "$log.txt")"
		grep -q '^RBTEST netmem-cut-status swap_net_bytes_written=[1-9][0-9]* (' "$log.txt" ||
			fail "ramboot status does not show the bytes written to the network"
		used=$(du -k "$store" | cut -f1)
		[ "${used:-0}" -ge 4096 ] || fail "the server's file holds $used KiB, expected the pages"
		if grep -aq 'RBTEST-NETMEM-MARKER' "$store"; then
			fail "the server's file holds the marker in plain text"
		fi
		netmem_cut_checks
	}
	rm -f "$store"
	result "$name"
}

# ---------------------------------------------------------------- LTSP

# The case that boots the real LTSP code. Debian's `ltsp` package is
# installed if missing. `ltsp initrd` packs /usr/share/ltsp and /etc/ltsp:
# ramboot is installed with `make install DESTDIR=build/boot/ltsp/destdir`
# and, only while `ltsp initrd` runs, its /etc/ltsp/ramboot and an
# /etc/ltsp/ltsp.conf holding the shipped snippet (conf/ltsp.conf) are put
# in /etc/ltsp; whatever was there before is put back afterwards. ltsp.img
# goes to build/boot/ltsp/tftp (not /srv/tftp).
#
# The boot: ltsp.img, a cpio with conf/conf.d/zz-net.conf (LTSP wants a
# network identity and the guest has no NIC), then Debian's initrd.img; an
# ext4 virtio disk holding images/x86_64.img stands in for the server.

ltsp_log() { echo "$*" >> "$lt/setup.log"; }

# ltsp_initrd RAMBOOT TFTP: `ltsp initrd` into the directory TFTP, with
# RAMBOOT as /etc/ltsp/ramboot and $lt/ltsp.conf as /etc/ltsp/ltsp.conf
# only while it runs (what was there before is put back)
ltsp_initrd() {
	rm -rf "$lt/saved" "$2"
	mkdir -p "$lt/saved" /etc/ltsp
	for f in ltsp.conf ramboot; do
		[ -e "/etc/ltsp/$f" ] && mv "/etc/ltsp/$f" "$lt/saved/$f"
	done
	cp "$lt/ltsp.conf" /etc/ltsp/ltsp.conf
	cp -a "$1" /etc/ltsp/ramboot
	ltsp --tftp-dir="$2" initrd >> "$lt/setup.log" 2>&1
	rc=$?
	for f in ltsp.conf ramboot; do
		rm -rf "/etc/ltsp/${f:?}"
		[ -e "$lt/saved/$f" ] && mv "$lt/saved/$f" "/etc/ltsp/$f"
	done
	rmdir "$lt/saved"
	[ "$rc" = 0 ] && [ -f "$2/ltsp/ltsp.img" ]
}

# ltsp_setup: prepare everything; on failure, $why says what is missing
ltsp_setup() {
	lt=$cache/ltsp
	mkdir -p "$lt"
	: > "$lt/setup.log"
	if ! dpkg-query -W -f='${db:Status-Status}\n' ltsp 2>/dev/null | grep -qx installed; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ltsp \
			>> "$lt/setup.log" 2>&1 || { fail "apt-get install ltsp failed"; return 1; }
	fi
	command -v ltsp >/dev/null || { fail "no ltsp command after installing ltsp"; return 1; }
	[ -f conf/ltsp.conf ] ||
		{ fail "conf/ltsp.conf (the ramboot snippet for ltsp.conf) is missing"; return 1; }
	# LTSP clients get ramboot from /etc/ltsp/ramboot (packed by `ltsp
	# initrd`); the initramfs-tools integration is not needed here.
	rm -rf "$lt/destdir"
	NO_INITRAMFS_TOOLS=1 make -s install DESTDIR="$lt/destdir" >> "$lt/setup.log" 2>&1 ||
		{ fail "make install failed: $(tail -n 3 "$lt/setup.log")"; return 1; }
	[ -d "$lt/destdir/etc/ltsp/ramboot" ] ||
		{ fail "make install put nothing in /etc/ltsp/ramboot (what \`ltsp initrd\` packs)"; return 1; }

	# Debian's initrd must hold the modules LTSP and ramboot need
	# (installing ltsp regenerates it with them).
	deb_initrd_ready squashfs overlay loop zram virtio_blk ext4 ||
		{ fail "$deb_initrd lacks squashfs/overlay/loop/zram/virtio_blk/ext4 ($cache/update-initramfs.log)"; return 1; }

	# /etc/ltsp for one `ltsp initrd` run: ltsp.conf is the shipped snippet,
	# included as the admin guide says.
	{
		echo "# generated by tests/boot/run.sh for one \`ltsp initrd\` run"
		printf '[clients]\nINCLUDE=ramboot\n\n'
		cat conf/ltsp.conf
	} > "$lt/ltsp.conf"
	ltsp_initrd "$lt/destdir/etc/ltsp/ramboot" "$lt/tftp" ||
		{ fail "ltsp initrd failed: $(tail -n 3 "$lt/setup.log")"; return 1; }

	# `ltsp initrd` packs /etc/ltsp: the binary and the hook must be there.
	for f in etc/ltsp/ramboot/ramboot etc/ltsp/ramboot/ltsp-hook.sh etc/ltsp/ramboot/ramboot-lib.sh; do
		cpio -it < "$lt/tftp/ltsp/ltsp.img" 2>/dev/null | grep -Eqx "(\./)?$f" ||
			{ fail "ltsp.img has no $f (make install puts it in /etc/ltsp for \`ltsp initrd\`)"; return 1; }
	done

	# No NIC: give LTSP's network_vars an identity.
	rm -rf "$lt/net"
	mkdir -p "$lt/net/conf/conf.d"
	echo 'export DEVICE=lo IP_ADDRESS=127.0.0.1 MAC_ADDRESS=52:54:00:12:34:56' \
		> "$lt/net/conf/conf.d/zz-net.conf"
	(cd "$lt/net" && find . | cpio -o -H newc -R 0:0 --quiet) > "$lt/zz-net.cpio"
	cat "$lt/tftp/ltsp/ltsp.img" "$lt/zz-net.cpio" "$deb_initrd" > "$lt/initrd.combined"

	# The "server": an ext4 disk with images/x86_64.img.
	if ! fresh ltsp/disk "$rootkey" || [ ! -f "$lt/disk.ext4" ]; then
		rm -rf "$lt/srv"
		mkdir -p "$lt/srv/images"
		cp "$net/x86_64.img" "$lt/srv/images/x86_64.img"
		mkfs.ext4 -q -F -L ltsp-srv -d "$lt/srv" "$lt/disk.ext4" 64M >> "$lt/setup.log" 2>&1 ||
			{ fail "mkfs.ext4 -d failed"; return 1; }
		rm -rf "$lt/srv"
		stamp ltsp/disk "$rootkey"
	fi
	return 0
}

# ltsp_setup_once: ltsp_setup for the first LTSP case of a run; the
# others reuse what it made (or its failure, $ltsp_why)
ltsp_setup_once() {
	lt=$cache/ltsp
	once ltsp
}

# once NAME: NAME_setup the first time; later calls give its outcome
# again (status 0, or 1 with $why as it was then), from NAME_state and
# NAME_why.
once() {
	eval "once_st=\${${1}_state:-}"
	if [ -z "$once_st" ]; then
		if "${1}_setup"; then once_st=ok; else once_st=failed; eval "${1}_why=\$why"; fi
		eval "${1}_state=\$once_st"
	fi
	[ "$once_st" = ok ] && return 0
	eval "why=\$${1}_why"
	return 1
}

# ltsp_begin NAME: the start of an LTSP case: its log, and LTSP's setup
# (made once per run). Status 1 when the case is over already: skipped
# (RBTEST_LTSP=0), or the setup failed (its log is the case's, the
# result given).
ltsp_begin() {
	name=$1
	log=$logs/$name.log
	why=
	: > "$log.txt"
	if [ "${RBTEST_LTSP:-1}" = 0 ]; then
		skip "$name" "RBTEST_LTSP=0"
		return 1
	fi
	ltsp_setup_once && return 0
	cp "$lt/setup.log" "$log.txt" 2>/dev/null
	result "$name"
	return 1
}

# ltsp_booted: LTSP's own part of the boot ran, and did not abort it
ltsp_booted() {
	grep -q 'LTSP boot error' "$log.txt" && fail "LTSP aborted the boot"
	grep -q 'initrd-bottom' "$log.txt" || fail "LTSP's initrd-bottom never ran"
}

# ltsp_case NAME: ltsp-ram (ramboot=ram) or ltsp-lazy (ramboot=lazy)
ltsp_case() {
	ltsp_begin "$1" || return
	case $name in
	ltsp-lazy) args="ramboot=lazy" ;;
	*) args="ramboot=ram ramboot.swap=zram" ;;
	esac
	boot_debian "$name" "$lt/initrd.combined" 768 \
		"root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/rbtest-init $args" \
		"file=$lt/disk.ext4,if=virtio,format=raw,throttling.bps-total=125000000"
	ltsp_booted
	if [ "$name" = ltsp-lazy ]; then
		# LTSP loop-mounts the image from the "server" as it does
		# without ramboot; the copier switches that loop device.
		expect_done && {
			expect_lazy_switched
			expect source /root/images/x86_64.img
			expect_lazy image /root/images/x86_64.img
			expect_lazy copy /run/ramboot/ram/x86_64.img
			grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
				fail "LTSP did not mount the network image"
			grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/ram/x86_64.img$' "$log.txt" ||
				fail "no loop device is backed by /run/ramboot/ram/x86_64.img"
		}
	elif expect_done; then
		expect mode_asked ram
		expect mode_done ram
		expect source /root/images/x86_64.img
		expect_like ram_path "/run/ramboot/ram/*"
		expect fstype squashfs
		expect_ram_copy
		expect_like swap_device "/dev/zram*"
		dev=$(report swap_device)
		sed -n '/^RBTEST-SWAPS-BEGIN/,/^RBTEST-SWAPS-END/p' "$log.txt" |
			grep -q "^${dev:-/dev/zram}[[:space:]]" || fail "/proc/swaps has no $dev"
		ram=$(report ram_path)
		# LTSP itself mounted the RAM copy (its "Running: mount" line).
		grep -q "^Running: mount -t squashfs -o ro $ram " "$log.txt" ||
			fail "LTSP did not mount $ram"
		case $ram in
		/dev/zram*)
			grep -q "^RBTEST mount $ram " "$log.txt" ||
				fail "$ram is not the mounted image" ;;
		*)
			grep -q "^RBTEST loop loop[0-9]*=$ram\$" "$log.txt" ||
				fail "no loop device is backed by the RAM copy $ram" ;;
		esac
	fi
	result "$name"
}

# ---------------------------------------------------------------- udpcast

# udpcast_case NAME: ramboot=ram ramboot.source=udpcast. QEMU's user
# network passes no multicast: the client's virtio-net NIC is a tap device
# in a network namespace of its own, where `ramboot serve` runs udp-sender
# on the tap; the client sets a static address (rbtest.ip=) and receives
# the image with udp-receiver from its initramfs. The namespace (and the
# tap and sender in it) goes at the end, and on an exit or a signal.
udpcast_case() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
	if ! command -v udp-sender >/dev/null || [ ! -x /usr/bin/udp-receiver ]; then
		skip "$name" "udpcast not installed (apt-get install udpcast)"
		return
	fi
	uc_ns=rbuc$$
	uc_qemu=$qemu_bin
	uc_serve=
	uc_stop() {
		[ -z "$uc_serve" ] || { kill "$uc_serve" 2>/dev/null; wait "$uc_serve" 2>/dev/null; }
		uc_serve=
		for p in $(ip netns pids "$uc_ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$uc_ns" 2>/dev/null
		qemu_bin=$uc_qemu
	}
	trap 'uc_stop; cleanup' EXIT
	trap 'uc_stop; exit 130' INT TERM
	if ! ip netns add "$uc_ns" || ! ip -n "$uc_ns" tuntap add dev rbtap0 mode tap ||
		! ip -n "$uc_ns" addr add 10.80.0.1/24 brd + dev rbtap0 ||
		! ip -n "$uc_ns" link set rbtap0 up || ! ip -n "$uc_ns" link set lo up ||
		! ip -n "$uc_ns" route add 224.0.0.0/4 dev rbtap0; then
		fail "cannot make the network namespace with a tap device"
	else
		# Sessions one after the other: one that starts before the
		# guest's NIC is there fails and the next one waits for it.
		ip netns exec "$uc_ns" "$rbtool" serve --interface=rbtap0 "$net/x86_64.img" \
			> "$logs/$name.serve" 2>&1 &
		uc_serve=$!
		# QEMU in the namespace, its NIC on the tap device.
		printf '#!/bin/sh\nexec ip netns exec %s %s "$@" -netdev tap,id=n0,ifname=rbtap0,script=no,downscript=no -device virtio-net-pci,netdev=n0\n' \
			"$uc_ns" "$uc_qemu" > "$logs/$name.qemu.sh"
		chmod 0755 "$logs/$name.qemu.sh"
		qemu_bin=$logs/$name.qemu.sh
		boot "$name" 9p "ramboot=ram ramboot.source=udpcast ramboot.udpcast=interface=eth0,start-timeout=120 ramboot.sha256=$img_sha rbtest.ip=10.80.0.2/24"
		expect_done && {
			expect_root ram
			expect mode_asked ram
			expect mode_done ram
			expect source_used udpcast
			has_key source_fallback || fail "report: no source_fallback= line"
			expect source_fallback ""
			expect fallback ""
			expect hash ok
			expect fstype squashfs
			expect_ram_copy
		}
		grep -q "session [0-9]* done" "$logs/$name.serve" ||
			fail "no udpcast session was completed: $(tail -n 3 "$logs/$name.serve")"
	fi
	uc_stop
	trap cleanup EXIT
	trap - INT TERM
	result "$name"
}

# ltsp-signed, ltsp-signed-other: the LTSP boot of ltsp-ram with
# ramboot.verify=signed. A key pair made for the run (`ramboot keygen`);
# its public key goes into an ltsp.img of its own as
# /etc/ltsp/ramboot/keys/lab.pub (in /etc/ltsp only while `ltsp initrd`
# runs, as in ltsp_setup). Two "server" disks hold the image with its
# manifest signed by that key (ltsp-signed) or by another one
# (ltsp-signed-other: a key the initrd does not trust, a fallback).
ltsp_signed_setup() {
	ltsp_signed_make
	rc=$?
	# The private keys are not kept, whatever happened.
	rm -f "$sg/lab.key" "$sg/other.key"
	return "$rc"
}

ltsp_signed_make() {
	sg=$lt/signed
	rm -rf "$sg"
	mkdir -p "$sg"
	for k in lab other; do
		"$rbtool" keygen "$sg/$k.key" > "$sg/$k.keygen" 2>&1 ||
			{ fail "ramboot keygen failed: $(cat "$sg/$k.keygen")"; return 1; }
	done
	lab_id=$(sed -n 's/.*: key id \([0-9a-f]*\)$/\1/p' "$sg/lab.keygen")
	other_id=$(sed -n 's/.*: key id \([0-9a-f]*\)$/\1/p' "$sg/other.keygen")
	cp -a "$lt/destdir/etc/ltsp/ramboot" "$sg/ramboot"
	mkdir -p "$sg/ramboot/keys"
	cp "$sg/lab.key.pub" "$sg/ramboot/keys/lab.pub"
	ltsp_initrd "$sg/ramboot" "$sg/tftp" ||
		{ fail "ltsp initrd (with a key) failed: $(tail -n 3 "$lt/setup.log")"; return 1; }
	cpio -it < "$sg/tftp/ltsp/ltsp.img" 2>/dev/null | grep -Eqx '(\./)?etc/ltsp/ramboot/keys/lab.pub' ||
		{ fail "ltsp.img has no etc/ltsp/ramboot/keys/lab.pub"; return 1; }
	cat "$sg/tftp/ltsp/ltsp.img" "$lt/zz-net.cpio" "$deb_initrd" > "$sg/initrd.combined"
	for k in lab other; do
		mkdir -p "$sg/srv/images"
		cp "$net/x86_64.img" "$sg/srv/images/x86_64.img"
		"$rbtool" manifest --sign="$sg/$k.key" -o "$sg/srv/images/x86_64.img.manifest" \
			"$sg/srv/images/x86_64.img" >> "$lt/setup.log" 2>&1 ||
			{ fail "ramboot manifest --sign failed"; return 1; }
		mkfs.ext4 -q -F -L ltsp-srv -d "$sg/srv" "$sg/disk-$k.ext4" 64M >> "$lt/setup.log" 2>&1 ||
			{ fail "mkfs.ext4 -d failed"; return 1; }
		rm -rf "$sg/srv"
	done
	return 0
}

ltsp_signed_case() {
	ltsp_begin "$1" || return
	if ! once ltsp_signed; then
		result "$name"
		return
	fi
	disk=$sg/disk-lab.ext4
	[ "$name" = ltsp-signed-other ] && disk=$sg/disk-other.ext4
	boot_debian "$name" "$sg/initrd.combined" 768 \
		"root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/rbtest-init ramboot=ram ramboot.verify=signed" \
		"file=$disk,if=virtio,format=raw,throttling.bps-total=125000000"
	ltsp_booted
	expect_done || { result "$name"; return; }
	expect mode_asked ram
	expect source /root/images/x86_64.img
	if [ "$name" = ltsp-signed ]; then
		expect verify signed
		expect signed_by "lab $lab_id"
		expect hash ok
		expect mode_done ram
		expect fallback ""
		expect_like ram_path "/run/ramboot/ram/*"
		expect_ram_copy
		ram=$(report ram_path)
		grep -q "^Running: mount -t squashfs -o ro $ram " "$log.txt" ||
			fail "LTSP did not mount $ram"
		grep -q "^RBTEST loop loop[0-9]*=$ram\$" "$log.txt" ||
			fail "no loop device is backed by the RAM copy $ram"
	else
		# Signed, but not by a key of the initrd: no copy, LTSP mounts
		# the network image.
		expect_not mode_done ram
		expect verify signed
		expect fallback "not signed"
		expect_like error "*$other_id*"
		expect ram_path ""
		expect signed_by ""
		grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
			fail "LTSP did not mount the network image"
		grep -q '^RBTEST loop loop[0-9]*=/root/images/x86_64.img$' "$log.txt" ||
			fail "no loop device is backed by the network image"
		expect_no_leftover
	fi
	result "$name"
}

# ltsp-ca: the LTSP boot of ltsp-ram from a "server" caught inside a
# rebuild: `ramboot publish --content-addressed` named the image
# x86_64.img.sha256-HASH in the manifest, then another image (the same
# one with a byte flipped) was renamed to x86_64.img, not yet
# published. The client copies the file the manifest names, verified,
# and LTSP mounts that copy.
ltsp_ca_setup() {
	ca=$lt/ca
	rm -rf "$ca"
	mkdir -p "$ca/srv/images"
	cp "$net/x86_64.img" "$ca/srv/images/x86_64.img"
	"$rbtool" publish --content-addressed "$ca/srv/images/x86_64.img" >> "$lt/setup.log" 2>&1 ||
		{ fail "ramboot publish --content-addressed failed"; return 1; }
	ca_name=$(sed -n 's/^image //p' "$ca/srv/images/x86_64.img.manifest")
	[ -f "$ca/srv/images/$ca_name" ] || { fail "the manifest names no image that is there"; return 1; }
	cp "$net/x86_64.img" "$ca/new.img"
	printf 'X' | dd of="$ca/new.img" bs=1 seek=$(($(stat -c %s "$ca/new.img") / 2)) \
		conv=notrunc status=none
	mv "$ca/new.img" "$ca/srv/images/x86_64.img"
	mkfs.ext4 -q -F -L ltsp-srv -d "$ca/srv" "$ca/disk.ext4" 64M >> "$lt/setup.log" 2>&1 ||
		{ fail "mkfs.ext4 -d failed"; return 1; }
	rm -rf "$ca/srv"
	return 0
}

ltsp_ca_case() {
	ltsp_begin "$1" || return
	if ! once ltsp_ca; then
		result "$name"
		return
	fi
	boot_debian "$name" "$lt/initrd.combined" 768 \
		"root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/rbtest-init ramboot=ram" \
		"file=$ca/disk.ext4,if=virtio,format=raw,throttling.bps-total=125000000"
	ltsp_booted
	expect_done || { result "$name"; return; }
	expect mode_done ram
	expect source "/root/images/$ca_name"
	expect hash ok
	expect fallback ""
	expect_like ram_path "/run/ramboot/ram/*"
	expect_ram_copy
	ram=$(report ram_path)
	grep -q "^Running: mount -t squashfs -o ro $ram " "$log.txt" ||
		fail "LTSP did not mount $ram"
	result "$name"
}

# ---------------------------------------------------------------- dm-verity

# The verity cases boot the test initramfs with ramboot.verity=1 from a
# 9p share of their own ($cache/vnet), built per run:
#   x86_64.img           the image, with x86_64.img.manifest (`ramboot
#                        manifest --verity`: verity-root, verity-hash) and
#                        the hash tree x86_64.img.verity beside it
#   noroot.manifest      a manifest of the image without verity-root
#   flip.img             the image with one byte inverted inside the data
#                        of /rbtest/flip.bin (random, stored uncompressed),
#                        and flip.img.manifest, the image's manifest: its
#                        tree is that of the image, not of flip.img
# flip_off is that byte's offset in the image: the verity-ram client
# inverts the same byte of its RAM copy.
verity_setup() {
	vnet=$cache/vnet
	command -v python3 >/dev/null || { fail "python3 not installed (tests/deps.sh install)"; return 1; }
	[ -f "$cache/root/rbtest/flip.bin" ] ||
		{ fail "$cache/root/rbtest/flip.bin missing (images/build-test-root.sh)"; return 1; }
	rm -rf "$vnet"
	mkdir -p "$vnet"
	cp "$net/x86_64.img" "$vnet/x86_64.img"
	"$rbtool" manifest --verity -o "$vnet/x86_64.img.manifest" "$vnet/x86_64.img" \
		> "$vnet/setup.log" 2>&1 ||
		{ fail "ramboot manifest --verity failed: $(tail -n 3 "$vnet/setup.log")"; return 1; }
	"$rbtool" manifest -o "$vnet/noroot.manifest" "$vnet/x86_64.img" >> "$vnet/setup.log" 2>&1 ||
		{ fail "ramboot manifest failed: $(tail -n 3 "$vnet/setup.log")"; return 1; }
	verity_root=$(sed -n 's/^verity-root //p' "$vnet/x86_64.img.manifest")
	{ [ -n "$verity_root" ] && [ -f "$vnet/x86_64.img.verity" ]; } ||
		{ fail "no verity-root in the manifest or no x86_64.img.verity beside the image"; return 1; }
	# Where flip.bin's data is in the image: all of it, as it is, in one
	# place; the byte is 32 KiB + 1 into the data, so the 4 KiB block
	# around it holds flip.bin's data alone.
	flip_off=$(python3 - "$vnet/x86_64.img" "$cache/root/rbtest/flip.bin" <<'PY'
import sys
img = open(sys.argv[1], "rb").read()
data = open(sys.argv[2], "rb").read()
at = img.find(data)
print(at + 32768 + 1 if at >= 0 and img.find(data, at + 1) < 0 else -1)
PY
)
	[ "${flip_off:--1}" -gt 0 ] 2>/dev/null ||
		{ fail "/rbtest/flip.bin is not stored as it is in the image (offset '$flip_off')"; return 1; }
	cp "$vnet/x86_64.img" "$vnet/flip.img"
	python3 - "$vnet/flip.img" "$flip_off" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xff]))
PY
	[ "$(cmp -l "$vnet/x86_64.img" "$vnet/flip.img" | wc -l)" = 1 ] ||
		{ fail "flip.img does not differ from the image in one byte"; return 1; }
	cp "$vnet/x86_64.img.manifest" "$vnet/flip.img.manifest"
	return 0
}

# verity_case NAME: verity-off, verity-ram, verity-lazy, verity-flip,
# verity-noroot
verity_case() {
	name=$1
	log=$logs/$name.log
	why=
	: > "$log.txt"
	if ! once verity; then
		result "$name"
		return
	fi
	mapper=/dev/mapper/ramboot-verity
	net_saved=$net
	net=$vnet
	case $name in
	verity-off) args="ramboot=off rbtest.flip=/rbtest/flip.bin" ;;
	verity-ram) args="ramboot=ram rbtest.ramflip=$flip_off rbtest.flip=/rbtest/flip.bin" ;;
	verity-lazy) args="ramboot=lazy" ;;
	verity-flip) args="ramboot=off rbtest.root=/mnt/net/flip.img rbtest.flip=/rbtest/flip.bin" ;;
	verity-noroot) args="ramboot=ram ramboot.manifest=/mnt/net/noroot.manifest" ;;
	esac
	boot "$name" 9p "ramboot.verity=1 ramboot.debug=1 $args"
	net=$net_saved
	expect_done || { result "$name"; return; }
	if [ "$name" = verity-noroot ]; then
		# No verity-root: no copy, no mapping, the plain network image.
		expect_fallback
		expect fallback "verity unavailable"
		expect verity failed
		expect verity_device ""
		! grep -q '^RBTEST dm ' "$log.txt" || fail "a device-mapper device exists: $(grep '^RBTEST dm ' "$log.txt")"
		result "$name"
		return
	fi
	# The root is the squashfs on the mapping, over the image or its copy.
	expect verity on
	expect verity_device "$mapper"
	expect verity_root "$verity_root"
	expect fallback ""
	v=$(sed -n 's/^RBTEST root-source=//p' "$log.txt" | head -n 1)
	[ "$v" = "ram $mapper" ] || fail "root came from '$v', expected the mapping $mapper"
	grep -q "^RBTEST mount $mapper /run/rbtest/lower squashfs \\|^RBTEST mount /dev/dm-[0-9]* /run/rbtest/lower squashfs " "$log.txt" ||
		fail "the squashfs is not mounted from $mapper"
	grep -q '^RBTEST dm ramboot-verity dm-[0-9]* ro=1 slaves=loop[0-9]*,loop[0-9]*$' "$log.txt" ||
		fail "no read-only mapping ramboot-verity over two loop devices: $(grep '^RBTEST dm ' "$log.txt")"
	grep -q "^RBTEST loop loop[0-9]*=/run/ramboot/verity/x86_64.img.verity\$" "$log.txt" ||
		fail "no loop device holds the copy of the hash tree in /run/ramboot/verity"
	# The kernel names the block that failed verification (4 KiB blocks).
	bad="^RBTEST kmsg .*device-mapper: verity: [0-9:]*: data block $((flip_off / 4096)) is corrupted"
	case $name in
	verity-ram | verity-flip)
		grep -q "$bad" "$log.txt" || fail "the kernel did not report block $((flip_off / 4096)) corrupted" ;;
	*)
		! grep -q 'device-mapper: verity: .* is corrupted' "$log.txt" ||
			fail "a block failed verification: $(grep -m 1 'device-mapper: verity:' "$log.txt")" ;;
	esac
	case $name in
	verity-off)
		expect mode_asked off
		expect_not mode_done ram
		expect ram_path ""
		grep -q '^RBTEST loop loop[0-9]*=/mnt/net/x86_64.img$' "$log.txt" ||
			fail "no loop device over the network image"
		grep -q '^RBTEST flip-read=ok$' "$log.txt" || fail "/rbtest/flip.bin does not read"
		grep -q '^RBTEST other-read=ok$' "$log.txt" || fail "a file of the root does not read" ;;
	verity-ram)
		expect mode_asked ram
		expect mode_done ram
		expect hash ok
		expect_like ram_path "/run/ramboot/ram/*"
		expect_ram_copy
		ram=$(report ram_path)
		grep -q "^RBTEST loop loop[0-9]*=$ram\$" "$log.txt" ||
			fail "no loop device over the RAM copy $ram"
		! grep -q '^RBTEST loop loop[0-9]*=/mnt/net/' "$log.txt" ||
			fail "a loop device is still over the network image"
		# A bit flip in the RAM copy after verification is caught on read.
		grep -q '^RBTEST flip-before=ok$' "$log.txt" || fail "/rbtest/flip.bin did not read before the flip"
		grep -q "^RBTEST ramflip=done $ram@$flip_off " "$log.txt" ||
			fail "the byte of the RAM copy was not changed: $(grep '^RBTEST ramflip' "$log.txt")"
		grep -q '^RBTEST flip-read=eio$' "$log.txt" ||
			fail "reading /rbtest/flip.bin after the flip: $(grep '^RBTEST flip-read' "$log.txt"), expected an I/O error"
		grep -q '^RBTEST other-read=ok$' "$log.txt" || fail "another file of the root does not read" ;;
	verity-lazy)
		# The mapping sits on the loop device the copier switched.
		expect_lazy_switched
		expect_lazy hash ok
		expect_like ram_path "/run/ramboot/ram/*"
		lo=$(lazy_line loop)
		grep -q "^RBTEST dm ramboot-verity .* slaves=\(.*,\)\{0,1\}${lo#/dev/}\(,.*\)\{0,1\}\$" "$log.txt" ||
			fail "the mapping is not over the copier's loop device '$lo'" ;;
	verity-flip)
		# The image is not the one the tree describes: the changed block
		# is an I/O error to its reader, everything else reads.
		expect mode_asked off
		grep -q '^RBTEST loop loop[0-9]*=/mnt/net/flip.img$' "$log.txt" ||
			fail "no loop device over flip.img"
		grep -q '^RBTEST flip-read=eio$' "$log.txt" ||
			fail "reading /rbtest/flip.bin: $(grep '^RBTEST flip-read' "$log.txt"), expected an I/O error"
		grep -q '^RBTEST other-read=ok$' "$log.txt" || fail "another file of the root does not read" ;;
	esac
	result "$name"
}

# ---------------------------------------------------------------- the local-disk cache

# The cache cases share one cache disk, $cc/cache.img (64 MiB, sparse),
# made a cache by `ramboot cache init` through a loop device at the start
# of each run; each case first makes sure, on the host (`ramboot cache
# refresh`), that the cache holds what the case starts from, so that any
# one of them can run alone. Two images, each with its manifest
# (`ramboot manifest --verity --cindex`), hash tree and chunk index:
#   net1/x86_64.img   the test image
#   net2/x86_64.img   the same root rebuilt with one changed file (a new
#                     /rbtest/upgrade.bin of 64 KiB of random bytes and a
#                     line more in /etc/rbtest-id): a package upgrade;
#                     its manifest names a delta from net1
# srv.ext4 is the LTSP "server" disk holding net1 as images/.
#
#   ltsp-cache-cold   LTSP, an empty cache, the server at 4 Mbit: the
#                     network boot, and the refresh behind it, past the
#                     switch of root, commits slot a, generation 1
#   ltsp-cache-hot    LTSP, the same cache: a hit, the image not read
#                     from the server disk
#   cache-powercut    net2 over a cache holding net1, the cache disk slow:
#                     the power cut once the refresh writes; the old slot
#                     and state are intact
#   cache-delta       net2 again: the refresh is repeated, reading only
#                     the delta net2's manifest names (ramboot manifest
#                     --delta-from=net1), applied to the old slot
#   cache-flip        a byte of the active slot inverted on the disk,
#                     ramboot.verity=1: the changed block is an I/O error;
#                     the scrub behind the boot marks the slot bad, and a
#                     second boot of the same disks is a miss (`its slot
#                     is marked bad`), the network boot and a refresh
#   cache-nodisk      ramboot.cache= names a disk that is not there: one
#                     warning line, the network boot

cache_args="ramboot=cache ramboot.cache=LABEL=ramboot-cache"

# flip_offset IMAGE ROOT: the offset of a byte 32 KiB + 1 into the data of
# ROOT/rbtest/flip.bin (stored once, as it is) in IMAGE; -1 if not found
flip_offset() {
	python3 - "$1" "$2/rbtest/flip.bin" <<'PY'
import sys
img = open(sys.argv[1], "rb").read()
data = open(sys.argv[2], "rb").read()
at = img.find(data)
print(at + 32768 + 1 if at >= 0 and img.find(data, at + 1) < 0 else -1)
PY
}

# cache_cmd SUBCOMMAND ARG...: `ramboot cache SUBCOMMAND --cache=LOOP ARG...`
# on the cache disk, through a loop device attached for it
cache_cmd() {
	sub=$1
	shift
	cache_lo=$(losetup --find --show "$cdisk") || return 1
	"$rbtool" cache "$sub" --cache="$cache_lo" "$@"
	rc=$?
	losetup -d "$cache_lo"
	cache_lo=
	return "$rc"
}

# cache_init: a new cache on the disk
cache_init() {
	rm -f "$cdisk"
	truncate -s 64M "$cdisk" || return 1
	cache_lo=$(losetup --find --show "$cdisk") || return 1
	"$rbtool" cache init "$cache_lo" >> "$cc/setup.log" 2>&1
	rc=$?
	losetup -d "$cache_lo"
	cache_lo=
	return "$rc"
}

# cstatus: `ramboot cache status` of x86_64.img into $cc/status;
# cstat KEY: a value from it
cstatus() { cache_cmd status x86_64.img > "$cc/status" 2>&1; }
cstat() { sed -n "s/^$1: //p" "$cc/status" 2>/dev/null | head -n 1 | sed "s/ (.*)$//"; }

# cache_holds DIR: the cache's active slot holds DIR/x86_64.img, refreshed
# on the host if it does not (a new cache if that fails)
cache_holds() {
	cstatus
	[ "$(cstat state)" = ok ] && [ "$(cstat sha256)" = "$(sha256sum < "$1/x86_64.img" | cut -d' ' -f1)" ] &&
		return 0
	if ! cache_cmd refresh --manifest="$1/x86_64.img.manifest" "$1/x86_64.img" >> "$cc/setup.log" 2>&1; then
		if ! cache_init || ! cache_cmd refresh --manifest="$1/x86_64.img.manifest" "$1/x86_64.img" \
			>> "$cc/setup.log" 2>&1; then
			fail "ramboot cache refresh on the host failed: $(tail -n 2 "$cc/setup.log")"
			return 1
		fi
	fi
	cstatus
}

cachec_setup() {
	cc=$cache/cachec
	cdisk=$cc/cache.img
	command -v python3 >/dev/null || { fail "python3 not installed (tests/deps.sh install)"; return 1; }
	command -v losetup >/dev/null || { fail "losetup not installed"; return 1; }
	rm -rf "$cc"
	mkdir -p "$cc/net1" "$cc/net2"
	: > "$cc/setup.log"
	cp "$net/x86_64.img" "$cc/net1/x86_64.img"
	cp -a "$cache/root" "$cc/root2"
	head -c 65536 /dev/urandom > "$cc/root2/rbtest/upgrade.bin"
	echo "upgraded" >> "$cc/root2/etc/rbtest-id"
	mksquashfs "$cc/root2" "$cc/net2/x86_64.img" -noappend -quiet -all-root -no-progress \
		>> "$cc/setup.log" 2>&1 || { fail "mksquashfs of the rebuilt root failed"; return 1; }
	for d in net1 net2; do
		delta_from=
		[ $d = net1 ] || delta_from=--delta-from=$cc/net1/x86_64.img
		"$rbtool" manifest --verity --cindex ${delta_from:+"$delta_from"} -o "$cc/$d/x86_64.img.manifest" \
			"$cc/$d/x86_64.img" >> "$cc/setup.log" 2>&1 ||
			{ fail "ramboot manifest --verity --cindex failed: $(tail -n 3 "$cc/setup.log")"; return 1; }
	done
	cdelta_size=$(stat -c %s "$cc/net2/x86_64.img.delta") ||
		{ fail "no delta from net1 to net2"; return 1; }
	cimg1_size=$(stat -c %s "$cc/net1/x86_64.img")
	cimg2_size=$(stat -c %s "$cc/net2/x86_64.img")
	cimg1_sha=$(sha256sum < "$cc/net1/x86_64.img" | cut -d' ' -f1)
	cimg2_sha=$(sha256sum < "$cc/net2/x86_64.img" | cut -d' ' -f1)
	flip2_off=$(flip_offset "$cc/net2/x86_64.img" "$cc/root2")
	rm -rf "$cc/root2"
	[ "${flip2_off:--1}" -gt 0 ] 2>/dev/null ||
		{ fail "/rbtest/flip.bin is not stored as it is in the rebuilt image"; return 1; }
	# The LTSP server disk: net1 as images/.
	mkdir -p "$cc/srv/images"
	cp "$cc/net1/"* "$cc/srv/images/"
	mkfs.ext4 -q -F -L ltsp-srv -d "$cc/srv" "$cc/srv.ext4" 64M >> "$cc/setup.log" 2>&1 ||
		{ fail "mkfs.ext4 -d failed"; return 1; }
	rm -rf "$cc/srv"
	cache_init || { fail "ramboot cache init through a loop device failed: $(tail -n 3 "$cc/setup.log")"; return 1; }
	return 0
}

# expect_blk_read DISK MAX: the guest read at most MAX bytes of DISK
# (/sys/block/DISK/stat, sectors read); $blk_read is what it read
expect_blk_read() {
	blk_read=$(sed -n "s/^RBTEST blockstat $1=//p" "$log.txt" | head -n 1 | awk '{ print $3 * 512 }')
	if [ -z "$blk_read" ]; then
		fail "no I/O counters of $1"
	elif [ "$blk_read" -gt "$2" ]; then
		fail "$blk_read bytes read from $1, expected at most $2"
	fi
}

# expect_no_image_read DISK FSIMAGE FILE: the guest traced its reads of
# DISK (rbtest.trace=DISK): none touched a block of FILE in the ext4 file
# system FSIMAGE (the host's file of DISK); $img_reads says how many reads
# there were
expect_no_image_read() {
	bs=$(dumpe2fs -h "$2" 2>/dev/null | sed -n 's/^Block size: *//p')
	debugfs -R "blocks $3" "$2" > "$logs/$name.blocks" 2>/dev/null
	if [ ! -s "$logs/$name.blocks" ] || [ -z "$bs" ]; then
		fail "debugfs cannot list the blocks of $3 in $2"
		return
	fi
	v=$(sed -n 's/^RBTEST blktrace //p' "$log.txt" | head -n 1)
	case $v in
	"entries="*" written="*)
		e=${v#entries=}
		e=${e%% *}
		[ "$e" = "${v#* written=}" ] || fail "the trace buffer lost requests ($v)" ;;
	*) fail "no block trace from the guest" ;;
	esac
	grep "^RBTEST blkread $1 " "$log.txt" > "$logs/$name.reads"
	img_reads=$(wc -l < "$logs/$name.reads")
	[ "$img_reads" -gt 0 ] || fail "no read of $1 was traced"
	v=$(python3 - "$logs/$name.blocks" "$bs" "$logs/$name.reads" <<'PY'
import sys
blocks = set(int(b) for b in open(sys.argv[1]).read().split())
per = int(sys.argv[2]) // 512
hits = []
for line in open(sys.argv[3]):
    f = line.split()
    sector, n, comm = int(f[3]), int(f[4]), f[5]
    touched = [b for b in range(sector // per, (sector + n - 1) // per + 1) if b in blocks]
    if touched:
        hits.append("%s read %d sectors at %d (%d blocks of the image)" % (comm, n, sector, len(touched)))
print("; ".join(hits[:5]))
PY
)
	[ -z "$v" ] || fail "the image was read: $v"
}

# expect_cache_refreshed GENERATION SHA SIZE: the refresh behind the boot
# committed, in the report and in the cache on the disk (it outlives the
# switch of root, which takes /dev and /proc from it).
expect_cache_refreshed() {
	expect cache refreshed
	expect cache_error ""
	expect cache_generation "$1"
	expect_like cache_slot "[ab]"
	expect_set cache_bytes_network
	expect_set cache_bytes_local
	cstatus
	expect_state ok "$1" "$(report cache_slot)" "$2"
	[ "$(cstat size)" = "$3" ] || fail "cache status: size '$(cstat size)', expected $3"
	[ "$(cstat interrupted)" = no ] || fail "cache status: interrupted '$(cstat interrupted)'"
}
# expect_state STATE GENERATION ACTIVE SHA: what `ramboot cache status` says
expect_state() {
	[ "$(cstat state)" = "$1" ] || fail "cache status: state '$(cstat state)', expected $1: $(tail -n 2 "$cc/status")"
	[ "$(cstat generation)" = "$2" ] || fail "cache status: generation '$(cstat generation)', expected $2"
	[ "$(cstat active)" = "$3" ] || fail "cache status: active '$(cstat active)', expected $3"
	[ "$(cstat sha256)" = "$4" ] || fail "cache status: sha256 '$(cstat sha256)', expected $4"
}

# cache_case NAME: one of the cases above
cache_case() {
	name=$1
	log=$logs/$name.log
	why=
	: > "$log.txt"
	case $name in
	ltsp-*) ltsp_begin "$name" || return ;;
	esac
	if ! once cachec; then
		result "$name"
		return
	fi
	case $name in
	ltsp-cache-cold)
		cache_init || { fail "ramboot cache init failed: $(tail -n 3 "$cc/setup.log")"; result "$name"; return; } ;;
	ltsp-cache-hot | cache-powercut | cache-delta)
		cache_holds "$cc/net1" || { result "$name"; return; } ;;
	cache-flip)
		cache_holds "$cc/net2" || { result "$name"; return; } ;;
	esac
	gen0=$(cstat generation)
	active0=$(cstat active)
	interrupted0=$(cstat interrupted)
	case $name in
	ltsp-cache-*)
		# Every request to a block device traced from the start. The
		# cold boot's server at 4 Mbit: its refresh (5 MB) outlasts
		# the initramfs, as a real image's does.
		bps=125000000
		[ "$name" = ltsp-cache-cold ] && bps=524288
		boot_debian "$name" "$lt/initrd.combined" 768 \
			"root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/rbtest-init $cache_args trace_event=block:block_rq_issue trace_buf_size=1M rbtest.trace=vda" \
			"file=$cc/srv.ext4,if=virtio,format=raw,throttling.bps-total=$bps" \
			"-drive file=$cdisk,if=virtio,format=raw"
		ltsp_booted
		expect_done || { result "$name"; return; }
		expect mode_asked cache
		expect mode_done cache
		expect source /root/images/x86_64.img
		expect cache_device /dev/vdb
		expect fallback ""
		;;
	esac
	case $name in
	ltsp-cache-cold)
		# The network boot at once; the refresh fills slot a behind it.
		grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
			fail "LTSP did not mount the network image"
		expect_cache_refreshed 1 "$cimg1_sha" "$cimg1_size"
		expect cache_bytes_network "$cimg1_size"
		expect cache_bytes_local 0
		# The root's loop device moved onto the refreshed slot.
		expect_set cache_switched
		expect cache_switch_error ""
		grep -q '^RBTEST loop loop[0-9]*=.*/x86_64\.img/[ab]$' "$log.txt" ||
			fail "the loop device was not moved onto the refreshed slot"
		! grep -q '^RBTEST loop loop[0-9]*=/root/images/x86_64.img$' "$log.txt" ||
			fail "a loop device is still over the network image" ;;
	ltsp-cache-hot)
		# The slot, not the server's image: only the server disk's
		# file system and the manifest are read from it.
		expect cache hit
		expect cache_generation "$gen0"
		expect cache_slot "$active0"
		expect cache_verified refresh
		expect_like cache_image "/dev/loop*"
		lo=$(report cache_image)
		grep -q "^Running: mount -t squashfs -o ro $lo " "$log.txt" ||
			fail "LTSP did not mount the cache's loop device $lo"
		grep -q "^RBTEST loop ${lo#/dev/}=.*/x86_64\\.img/$active0\$" "$log.txt" ||
			fail "$lo is not backed by slot $active0: $(grep "^RBTEST loop ${lo#/dev/}=" "$log.txt")"
		! grep -q '^RBTEST loop loop[0-9]*=/root/images/' "$log.txt" ||
			fail "a loop device is over the network image"
		# Not one block of the image file read from the server disk;
		# what was read (its file system probed by udev and by the
		# look for the cache's label, the manifest) is less than the
		# image.
		expect_no_image_read vda "$cc/srv.ext4" /images/x86_64.img
		expect_blk_read vda "$cimg1_size"
		echo "# ltsp-cache-hot: $img_reads reads, $blk_read bytes from the server disk, none of the image's blocks (image: $cimg1_size bytes)" ;;
	cache-powercut)
		# The cache disk at 512 KB/s: the refresh's writes take
		# seconds; once 1 MiB is written, QEMU quits (a power cut).
		net_saved=$net
		net=$cc/net2
		boot_extra="-drive id=cache0,file=$cdisk,if=virtio,format=raw,throttling.bps-total=524288"
		boot "$name" 9p "$cache_args rbtest.cachecut=vda:2048 rbtest.cachewait=600" "RBTEST cache-writing" "quit"
		boot_extra=
		net=$net_saved
		grep -q '^RBTEST cache-writing$' "$log.txt" ||
			fail "the refresh was not seen writing to the cache disk"
		! grep -q '^RBTEST-DONE' "$log.txt" || fail "the boot ended before the power cut"
		# The old slot and state, as they were.
		cstatus
		expect_state ok "$gen0" "$active0" "$cimg1_sha"
		echo "# cache-powercut: after the cut, interrupted: $(cstat interrupted)" ;;
	cache-delta)
		net_saved=$net
		net=$cc/net2
		boot_extra="-drive id=cache0,file=$cdisk,if=virtio,format=raw"
		boot "$name" 9p "$cache_args"
		boot_extra=
		net=$net_saved
		expect_done || { result "$name"; return; }
		expect_root network
		expect mode_asked cache
		expect mode_done cache
		expect cache_device /dev/vda
		expect_cache_refreshed $((gen0 + 1)) "$cimg2_sha" "$cimg2_size"
		# Only the delta from the network, far below the image: the
		# rest of the image comes from the old slot it applies to.
		nb=$(report cache_bytes_network)
		[ "${nb:-0}" = "$cdelta_size" ] ||
			fail "cache_bytes_network '$nb', expected the delta's $cdelta_size bytes"
		[ "${nb:-0}" -le $((cimg2_size / 4)) ] 2>/dev/null ||
			fail "cache_bytes_network $nb, expected at most a quarter of the image ($cimg2_size)"
		echo "# cache-delta: $nb bytes from the network, the delta (image $cimg2_size; before the boot, interrupted: $interrupted0)" ;;
	cache-flip)
		# One byte inside /rbtest/flip.bin's data, inverted in the
		# active slot on the cache disk.
		cache_mnt=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-cmnt.XXXXXX")
		if ! mount -o loop "$cdisk" "$cache_mnt"; then
			rmdir "$cache_mnt"
			cache_mnt=
			fail "cannot mount the cache disk on the host"
			result "$name"
			return
		fi
		python3 - "$cache_mnt/images/x86_64.img/$active0" "$flip2_off" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xff]))
PY
		umount "$cache_mnt"
		rmdir "$cache_mnt"
		cache_mnt=
		net_saved=$net
		net=$cc/net2
		boot_extra="-drive id=cache0,file=$cdisk,if=virtio,format=raw"
		boot "$name" 9p "$cache_args ramboot.verity=1 rbtest.flip=/rbtest/flip.bin"
		boot_extra=
		net=$net_saved
		expect_done || { result "$name"; return; }
		expect cache hit
		expect cache_verified verity
		expect verity on
		v=$(sed -n 's/^RBTEST root-source=//p' "$log.txt" | head -n 1)
		[ "$v" = "ram /dev/mapper/ramboot-verity" ] || fail "root came from '$v', expected the mapping"
		grep -q "^RBTEST kmsg .*device-mapper: verity: [0-9:]*: data block $((flip2_off / 4096)) is corrupted" "$log.txt" ||
			fail "the kernel did not report block $((flip2_off / 4096)) corrupted"
		grep -q '^RBTEST flip-read=eio$' "$log.txt" ||
			fail "reading /rbtest/flip.bin: $(grep '^RBTEST flip-read' "$log.txt"), expected an I/O error"
		grep -q '^RBTEST other-read=ok$' "$log.txt" || fail "another file of the root does not read"
		# The scrub behind the boot read the slot through the mapping,
		# met the flipped block and marked the slot bad.
		expect cache_scrub bad
		expect cache_scrub_offset $((flip2_off / 4096 * 4096))
		expect_like cache_scrub_error "read error at $((flip2_off / 4096 * 4096)): *"
		expect_kmsg 4 "ramboot: cache: warning: slot $active0 of x86_64.img failed dm-verity (" \
			"marked bad; the next boot boots from the network and refreshes the cache"
		echo "# cache-flip: $(grep '^RBTEST scrub-wait=' "$log.txt"), cache_scrub_seconds=$(report cache_scrub_seconds)"
		cstatus
		grep -q "^bad: slot $active0 " "$cc/status" ||
			fail "the slot is not marked bad: $(cat "$cc/status")"
		# The same disks again: the slot marked bad is a miss, the
		# network boot, and the refresh writes the other slot.
		name0=$name
		why0=$why
		boot_extra="-drive id=cache0,file=$cdisk,if=virtio,format=raw"
		net_saved=$net
		net=$cc/net2
		boot "$name-again" 9p "$cache_args ramboot.verity=1"
		boot_extra=
		net=$net_saved
		why="$why0$why"
		if expect_done; then
			# The root is the dm-verity mapping of the network image
			# (ramboot.verity=1 on a miss), switched to the new slot.
			grep -q 'the local cache does not hold this image (its slot is marked bad); booting from the network' "$log.txt" ||
				fail "the second boot did not say that the slot is marked bad"
			expect cache refreshed
			expect_not cache_slot "$active0" ""
			# The refresh read the rotten chunk from the image.
			grep -q "^RBTEST ramboot-kmsg [0-9]* ramboot: cache: warning: slot $active0: the chunk at [0-9]* does not match its hash; read from the image" "$log.txt" ||
				fail "the refresh did not find the rotten chunk of slot $active0"
			cstatus
			[ "$(cstat active)" != "$active0" ] ||
				fail "the refresh did not make the other slot active: $(cat "$cc/status")"
		fi
		name=$name0 ;;
	cache-nodisk)
		net_saved=$net
		net=$cc/net1
		boot "$name" 9p "$cache_args"
		net=$net_saved
		expect_done || { result "$name"; return; }
		expect_root network
		expect mode_asked cache
		expect cache fallback
		expect fallback "cache unusable"
		expect_set error
		expect cache_image ""
		expect_kmsg 4 "ramboot: boot: warning: cache unusable: " "; booting from the network image"
		n_warn=$(grep -c '^ramboot: .*warning' "$log.txt")
		[ "$n_warn" = 1 ] || fail "$n_warn warning lines on the console, expected one: $(grep '^ramboot: .*warning' "$log.txt")"
		expect_no_leftover ;;
	esac
	result "$name"
}

for c in $CASES; do
	if ! wanted "$c"; then
		skip "$c" "not selected by RBTEST_CASES"
	elif [ -n "$build_err" ]; then
		not_ok "$c"
		echo "$build_err" | diag
	else
		run_case "$c"
	fi
done
[ "$failed" -eq 0 ]
