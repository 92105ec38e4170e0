# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/lib.sh - what the QEMU boot cases share, sourced by
# tests/boot/run.sh (the runner), tests/boot/pkg-boot.sh and the bench
# scripts (bench/lib.sh, bench/netmem-bench.sh). POSIX sh; it only
# defines, nothing runs when it is sourced.
#
#   TAP          ok, skip, not_ok, diag, skip_all, fail_all, wanted,
#                run_cases, case_begin, result (n, failed, CASES,
#                RBTEST_CASES)
#   build cache  key FILE..., fresh NAME KEY, stamp NAME KEY ($cache)
#   the host     boot_host: QEMU, its accelerator, Debian's kernel
#   artefacts    boot_images: the client root, its squashfs in every
#                codec, the test initramfs (cached in $cache)
#   booting      boot (the test initramfs, 9p and a throttled disk),
#                boot_debian (Debian's kernel and a combined initrd),
#                monitor_when, nbd_cut_when: act when the console shows
#                a marker
#   the report   report, expect*, lazy_line: what the guest printed
#   set-ups      once, deb_initrd_ready, ltsp_conf, ltsp_initrd,
#                ltsp_net_identity,
#                cache_do, flip_offset, flip_byte
#   cleanup      boot_cleanup: the trap of an exit
#
# The caller gives top (the source tree) and, for the boots, cache, rb,
# rbtool, timeout_s, mem and logs.
# shellcheck shell=sh disable=SC2154 # the caller's variables

# ---------------------------------------------------------------- TAP

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

wanted() {
	[ -z "${RBTEST_CASES:-}" ] || echo "$1" | grep -Eq -- "$RBTEST_CASES"
}

# run_cases RUN: RUN CASE for each case of $CASES, or its TAP line at once
# when RBTEST_CASES leaves it out or the images could not be built
# ($build_err)
run_cases() {
	for c in $CASES; do
		if ! wanted "$c"; then
			skip "$c" "not selected by RBTEST_CASES"
		elif [ -n "$build_err" ]; then
			not_ok "$c"
			echo "$build_err" | diag
		else
			"$1" "$c"
		fi
	done
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

# ---------------------------------------------------------------- build cache

# key FILE... : the content hash of the inputs of an artefact
key() { cat "$@" | sha256sum | cut -d' ' -f1; }

# fresh NAME KEY: true when the artefact NAME was built from KEY
fresh() { [ -f "$cache/$1.key" ] && [ "$(cat "$cache/$1.key")" = "$2" ]; }
stamp() { echo "$2" > "$cache/$1.key"; }

# ---------------------------------------------------------------- the host

# boot_host: images/qemu-accel.sh (qemu_bin, qemu_accel, qemu_accel_why
# and its functions) and Debian's newest kernel (kver, kernel, deb_initrd).
# Status 2 when RAMBOOT_QEMU_ACCEL is wrong, 1 when QEMU or the kernel is
# missing; $host_why says why. The accelerator is chosen later
# (qemu_accel_choose "$kernel": it boots a probe guest).
boot_host() {
	qemu_bin='' qemu_accel='' qemu_accel_why=''
	# shellcheck disable=SC1091 source=images/qemu-accel.sh
	. "$top/images/qemu-accel.sh"
	# A bad RAMBOOT_QEMU_ACCEL is an error even where the boots would be skipped.
	host_why=$(qemu_accel_check 2>&1) || return 2
	kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
	kernel=/boot/vmlinuz-$kver
	deb_initrd=/boot/initrd.img-$kver
	command -v "$qemu_bin" >/dev/null || { host_why="$qemu_bin not installed"; return 1; }
	{ [ -n "$kver" ] && [ -r "$kernel" ]; } ||
		{ host_why="no Debian kernel in /boot (apt-get install linux-image-amd64)"; return 1; }
	return 0
}

# ---------------------------------------------------------------- artefacts

# boot_images: the client root, its squashfs ($net/x86_64.img, and
# compressed by zstd, xz and lzo, and a corrupt zstd stream), the same on
# whole sectors for a disk ($cache/blk) and the test initramfs ($initrd),
# each rebuilt only when its inputs changed. Sets img_size, img_sha,
# rootkey; $build_err says what failed.
boot_images() {
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
}

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

# case_begin NAME: the start of a case that boots with boot_debian, or
# may end before it boots: name, its log (empty), no failure yet
case_begin() {
	name=$1
	why=
	log=$logs/$name.log
	: > "$log.txt"
}

# nbd_cut_when MARKER: in the background of a boot, kill the NBD server
# ($nbd_pid) once a console line starts with MARKER.
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
# expect_loop_mount FILE DIR: DIR is the squashfs on a loop device backed
# by FILE (a sed pattern), the RAM copy
expect_loop_mount() {
	loopdev=$(sed -n "s|^RBTEST loop \\(loop[0-9]*\\)=$1\$|\\1|p" "$log.txt" | head -n 1)
	if [ -z "$loopdev" ]; then
		fail "no loop device is backed by the RAM copy $1"
	else
		grep -q "^RBTEST mount /dev/$loopdev $2 squashfs " "$log.txt" ||
			fail "$2 is not the squashfs on /dev/$loopdev"
	fi
}
# expect_verity_root: the root came from the dm-verity mapping
expect_verity_root() {
	v=$(sed -n 's/^RBTEST root-source=//p' "$log.txt" | head -n 1)
	[ "$v" = "ram /dev/mapper/ramboot-verity" ] ||
		fail "root came from '$v', expected the mapping /dev/mapper/ramboot-verity"
}
expect_set_lazy() { # KEY
	[ -n "$(lazy_line "$1")" ] || fail "lazy status: $1 is empty"
}

# ---------------------------------------------------------------- set-ups

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

# deb_initrd_ready MODULE...: Debian's /boot/initrd.img-$kver holds these
# modules (update-initramfs once if not: installing ltsp makes it add them).
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

# ---------------------------------------------------------------- LTSP

# ltsp_conf SCRIPT: $lt/ltsp.conf for one `ltsp initrd` run by SCRIPT:
# the shipped snippet (conf/ltsp.conf), included as the admin guide says
ltsp_conf() {
	{
		echo "# generated by $1 for one \`ltsp initrd\` run"
		printf '[clients]\nINCLUDE=ramboot\n\n'
		cat conf/ltsp.conf
	} > "$lt/ltsp.conf"
}

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

# ltsp_net_identity: $lt/zz-net.cpio, the network identity LTSP's
# network_vars want from a client without a NIC
ltsp_net_identity() {
	rm -rf "$lt/net"
	mkdir -p "$lt/net/conf/conf.d"
	echo 'export DEVICE=lo IP_ADDRESS=127.0.0.1 MAC_ADDRESS=52:54:00:12:34:56' \
		> "$lt/net/conf/conf.d/zz-net.conf"
	(cd "$lt/net" && find . | cpio -o -H newc -R 0:0 --quiet) > "$lt/zz-net.cpio"
}

# ---------------------------------------------------------------- disks

# cache_do DISK SUBCOMMAND ARG...: `ramboot cache SUBCOMMAND` ($rbtool) on
# the disk file DISK through a loop device, $cache_lo while it is attached
# (boot_cleanup detaches it on an exit); init: DEV is the loop device, the
# others: --cache=DEV
cache_do() {
	cd_disk=$1 cd_sub=$2
	shift 2
	cache_lo=$(losetup --find --show "$cd_disk") || return 1
	if [ "$cd_sub" = init ]; then
		"$rbtool" cache init "$@" "$cache_lo"
	else
		"$rbtool" cache "$cd_sub" --cache="$cache_lo" "$@"
	fi
	cd_rc=$?
	losetup -d "$cache_lo"
	cache_lo=
	return "$cd_rc"
}

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

# flip_byte FILE OFFSET: invert the byte at OFFSET of FILE
flip_byte() {
	python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]))
    b = f.read(1)
    f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0xff]))
PY
}

# ---------------------------------------------------------------- cleanup

# boot_cleanup: what the cases attach or mount on the host ($cache_lo,
# $cache_mnt), undone; the serial logs removed when every case passed
# (RBTEST_KEEP=1 keeps them)
cache_lo=
cache_mnt=
boot_cleanup() {
	[ -z "$cache_mnt" ] || { umount "$cache_mnt" 2>/dev/null; rmdir "$cache_mnt" 2>/dev/null; }
	[ -z "$cache_lo" ] || losetup -d "$cache_lo" 2>/dev/null
	if [ "$failed" -eq 0 ] && [ "${RBTEST_KEEP:-0}" != 1 ]; then
		rm -rf "$logs"
	else
		echo "# serial logs kept in $logs"
	fi
}
