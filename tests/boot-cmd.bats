#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot` against fixture trees: $RAMBOOT_ROOT holds proc/cmdline,
# proc/meminfo, the network root (root/) and receives run/ramboot/.
# Exit status is 0 in every runtime outcome; stdout is empty unless a
# RAM copy was made. Root-only cases load a real squashfs into a tmpfs
# and into a zram device, and remove what they made.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/bootroot

setup() {
	bootroot_init 8000000
	ZRAM_ID=
}

teardown() {
	kill_writer
	lazy_cleanup
	if [ -n "${ZRAM_ID:-}" ] && [ -e "/sys/block/zram$ZRAM_ID" ]; then
		echo 1 >"/sys/block/zram$ZRAM_ID/reset" 2>/dev/null || true
		echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
	fi
	ram_umount
	zram_cleanup
}

# A zram device that was not there before the test (ZRAM_BEFORE: the
# names, space-separated) and holds the test's image or nothing (reset
# after a failed load): ours, removed.
zram_cleanup() {
	local d
	[ -n "${ZRAM_BEFORE:-}" ] && [ -f "$R/root/images/x.img" ] || return 0
	for d in /sys/block/zram*; do
		d=${d#/sys/block/}
		[ -e "/sys/block/$d" ] && [[ " $ZRAM_BEFORE " != *" $d "* ]] || continue
		[ "$(cat "/sys/block/$d/disksize")" = 0 ] ||
			cmp -s -n 4096 "$R/root/images/x.img" "/dev/$d" || continue
		echo 1 >"/sys/block/$d/reset" 2>/dev/null || true
		echo "${d#zram}" >/sys/class/zram-control/hot_remove 2>/dev/null || true
	done
	return 0
}

rbenv() { # VAR=value... -- args
	local vars=()
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "${vars[@]}" "$BIN" boot "$@"
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (mount, zram)"
}

@test "boot: off by default: nothing on stdout, report says off" {
	rb
	assert_success
	assert_output ""
	[ "$(report mode_asked)" = off ]
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "" ]
	[ ! -e "$R/run/ramboot/ram" ]
}

@test "boot: the report has every key, in order" {
	rb
	assert_success
	run cut -d= -f1 "$R/run/ramboot/report"
	assert_output "$(printf '%s\n' mode_asked mode_done source ram_path target bytes \
		seconds bytes_per_second codec hash fstype swap_device swap_size swap_algorithm swap_priority \
		fallback error)"
}

@test "boot: ramboot=off with an image does nothing" {
	echo "ramboot=off ltsp.image=images/x.img" >"$R/proc/cmdline"
	head -c 4096 /dev/zero >"$R/root/images/x.img"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report source)" = "" ]
}

@test "boot: bad values and unknown keys warn, the boot goes on" {
	echo 'quiet ramboot=turbo ramboot.colour=blue ramboot.target=nvme ramboot.minfree=lots' \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[[ $stderr == *"ramboot: boot: warning: ramboot=: invalid value 'turbo', ignored"* ]]
	[[ $stderr == *"ramboot.colour=: unknown setting"* ]]
	[[ $stderr == *"ramboot.target=: invalid value 'nvme'"* ]]
	[[ $stderr == *"ramboot.minfree=: 'lots' is not a size (a number and a unit: "* ]]
	[ "$(report mode_asked)" = off ]
}

@test "boot: usage errors exit 2, --help exits 0" {
	rb --bogus
	assert_failure 2
	rb extra-argument
	assert_failure 2
	rb --image=
	assert_failure 2
	rb --help
	assert_success
	assert_output --partial "Usage: ramboot boot"
}

@test "boot: missing image: exit 0, fallback recorded, no RAMBOOT_IMAGE" {
	echo "ramboot=ram ltsp.image=images/x86_64.img,fstype=squashfs,,b.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_asked)" = ram ]
	[ "$(report mode_done)" = off ]
	[ "$(report source)" = "$R/root/images/x86_64.img" ]
	[ "$(report fallback)" = "image not found" ]
	[[ $(report error) == *"No such file or directory"* ]]
	[[ $stderr == *"booting from the network image"* ]]
}

@test "boot: ram without any image setting falls back" {
	echo "ramboot=ram" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report fallback)" = "no image" ]
}

@test "boot: image paths: ramboot.image > ltsp.image, rootmnt, absolute under the prefix" {
	rb --cmdline="ramboot=ram ramboot.image=a.img ltsp.image=b.img"
	[ "$(report source)" = "$R/root/a.img" ]
	rbenv rootmnt=/sysroot -- --cmdline="ramboot=ram ltsp.image=b.img,ro"
	[ "$(report source)" = "$R/sysroot/b.img" ]
	rb --cmdline='ramboot=ram "ramboot.image=/srv/my images/c.img"'
	[ "$(report source)" = "$R/srv/my images/c.img" ]
	rb --image=/elsewhere/d.img --cmdline="ramboot=ram ramboot.image=a.img"
	[ "$(report source)" = /elsewhere/d.img ]
	rb --default-image=/dev/nbd0 --cmdline="ramboot=ram"
	[ "$(report source)" = /dev/nbd0 ]
	rb --default-image=/dev/nbd0 --cmdline="ramboot=ram ltsp.image=e.img"
	[ "$(report source)" = "$R/root/e.img" ]
}

@test "boot: precedence: cmdline > environment > ramboot.conf > default" {
	echo "RAMBOOT=prefetch" >"$R/etc/ramboot.conf"
	rb
	[ "$(report mode_asked)" = prefetch ]
	rbenv RAMBOOT=ram --
	[ "$(report mode_asked)" = ram ]
	echo "ramboot=off" >"$R/proc/cmdline"
	rbenv RAMBOOT=ram --
	[ "$(report mode_asked)" = off ]
	# --cmdline replaces /proc/cmdline
	rbenv RAMBOOT=off -- --cmdline="ramboot=ram"
	[ "$(report mode_asked)" = ram ]
}

@test "boot: not enough memory: exit 0, fallback, nothing left behind" {
	head -c 2M /dev/urandom >"$R/root/images/x.img"
	meminfo 300000
	echo "ramboot=ram ltsp.image=images/x.img ramboot.minfree=1G" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "not enough memory" ]
	run ls -A "$R/run/ramboot"
	assert_output "report"
}

@test "boot: ramboot.minfree= without a unit is still bytes: a warning, the same fallback" {
	head -c 2M /dev/urandom >"$R/root/images/x.img"
	meminfo 300000
	echo "ramboot=ram ltsp.image=images/x.img ramboot.minfree=1073741824" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[[ $stderr == *"ramboot: boot: warning: ramboot.minfree=1073741824: deprecated spelling, write 1073741824B"* ]]
	[ "$(report fallback)" = "not enough memory" ]
	[[ $(report error) == *"reserve 1.0 GiB"* ]]
}

@test "boot: ramboot.minfree=1GiB in ramboot.conf: no deprecation warning" {
	head -c 2M /dev/urandom >"$R/root/images/x.img"
	meminfo 300000
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	echo "RAMBOOT_MINFREE=1GiB" >"$R/etc/ramboot.conf"
	rb
	assert_success
	[[ $stderr != *deprecated* ]]
	[ "$(report fallback)" = "not enough memory" ]
}

@test "boot: --json writes report.json too" {
	command -v python3 >/dev/null || skip "no python3"
	echo "ramboot=ram" >"$R/proc/cmdline"
	rb --json
	assert_success
	run python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["mode_asked"], d["fallback"], d["bytes"], d["bytes_per_second"])' \
		"$R/run/ramboot/report.json"
	assert_output "ram no image 0 0"
}

@test "boot: swap that cannot be set up is an error in the report, exit 0" {
	echo "ramboot.swap=zram ramboot.swap.priority=5" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report swap_device)" = "" ]
	[[ $(report error) == swap:* ]]
}

@test "boot: ramboot.debug keeps a log in /run/ramboot" {
	echo "ramboot=ram ramboot.debug ltsp.image=none.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	grep -q "debug: mode ram" "$R/run/ramboot/boot.log"
	grep -q "image not found" "$R/run/ramboot/boot.log"
	[[ $stderr == *"debug: mode ram"* ]]
}

@test "boot: prefetch returns at once with an empty stdout" {
	head -c 1M /dev/urandom >"$R/root/images/x.img"
	echo "ramboot=prefetch ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = prefetch ]
	[ ! -e "$R/run/ramboot/ram" ]
}

@test "boot: ram into tmpfs (root): RAMBOOT_IMAGE is the verified copy" {
	need_root
	make_sqfs "$R/root/images/x86_64.img"
	"$BIN" manifest "$R/root/images/x86_64.img" >"$R/root/images/x86_64.img.manifest"
	echo "ramboot=ram ltsp.image=images/x86_64.img,fstype=squashfs" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x86_64.img"
	cmp "$R/root/images/x86_64.img" "$R/run/ramboot/ram/x86_64.img"
	grep -qs " $R/run/ramboot/ram tmpfs " /proc/mounts
	[ "$(report mode_done)" = ram ]
	[ "$(report target)" = tmpfs ]
	[ "$(report ram_path)" = "$R/run/ramboot/ram/x86_64.img" ]
	[ "$(report fstype)" = squashfs ]
	[ "$(report hash)" = ok ]
	[ "$(report bytes)" = "$(stat -c %s "$R/root/images/x86_64.img")" ]
	[[ $(report bytes_per_second) =~ ^[1-9][0-9]*$ ]]
	[ "$(report fallback)" = "" ]
}

# A RAM copy of a 12 MiB zstd image whose reads of the image the fault
# shim slows (700 ms each, 2 MiB a read): more than the 3 s before a
# progress line may be printed. $1: the kernel command line's extra words.
slow_ram_boot() {
	load helpers/fault
	faultinj_build
	mkdir -p "$BATS_TEST_TMPDIR/big/sbin" "$R/dev"
	head -c 12M /dev/urandom >"$BATS_TEST_TMPDIR/big/sbin/init"
	mksquashfs "$BATS_TEST_TMPDIR/big" "$BATS_TEST_TMPDIR/x.img" -quiet -noappend -no-progress >/dev/null
	zstd -q -1 "$BATS_TEST_TMPDIR/x.img" -o "$R/root/images/x.img.zst"
	: >"$R/dev/kmsg"
	echo "$1 ramboot=ram ltsp.image=images/x.img.zst" >"$R/proc/cmdline"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ='read:path=*/x.img.zst:delay_ms=700' FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" \
		LD_PRELOAD="$FAULTINJ_SO" "$BIN" boot
}

@test "boot: a RAM copy (root) says on stderr that it began, each tenth copied and that it ended; stdout is the one line" {
	need_root
	slow_ram_boot "console=ttyS0"
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	[ "$(report mode_done)" = ram ]
	grep -q 'action=delay_ms' "$BATS_TEST_TMPDIR/fi.log"
	[[ $stderr == *"ramboot: boot: copying $R/root/images/x.img.zst (12.0 MiB, zstd, 12.0 MiB in RAM) into RAM (tmpfs)"* ]]
	[[ $stderr =~ ramboot:\ boot:\ [1-9]0\ %\ copied\ \([0-9.]+\ MiB\ of\ 12.0\ MiB\) ]]
	[[ $stderr == *"ramboot: boot: copied into RAM (tmpfs): $R/run/ramboot/ram/x.img, 12.0 MiB in "*" s, not verified"* ]]
	# plain lines: no carriage return, nothing of them on stdout
	[[ $stderr != *$'\r'* ]]
	[[ $output != *copying* ]]
	# the start and the end in the kernel log at info level; the steps not
	run cat "$R/dev/kmsg"
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 0 "<6>ramboot: boot: copying $R/root/images/x.img.zst (12.0 MiB, zstd, 12.0 MiB in RAM) into RAM (tmpfs)"
	assert_line --index 1 --regexp "^<6>ramboot: boot: copied into RAM \(tmpfs\): $R/run/ramboot/ram/x.img, 12.0 MiB in [0-9.]+ s, not verified\$"
}

@test "boot: a RAM copy with the kernel's quiet (root): the start and end lines only" {
	need_root
	slow_ram_boot "quiet splash"
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	grep -q 'action=delay_ms' "$BATS_TEST_TMPDIR/fi.log"
	[[ $stderr == *"ramboot: boot: copying $R/root/images/x.img.zst (12.0 MiB, zstd, 12.0 MiB in RAM) into RAM (tmpfs)"* ]]
	[[ $stderr == *"ramboot: boot: copied into RAM (tmpfs): "* ]]
	[[ $stderr != *"% copied"* ]]
	run cat "$R/dev/kmsg"
	[ "${#lines[@]}" -eq 2 ]
}

@test "boot: a verified RAM copy (root) says so at its end; a failed one ends in its warning" {
	need_root
	make_sqfs "$R/root/images/x.img"
	"$BIN" manifest "$R/root/images/x.img" >"$R/root/images/x.img.manifest"
	echo "quiet ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	[[ $stderr == *"ramboot: boot: copying $R/root/images/x.img ("*", uncompressed) into RAM (tmpfs)"* ]]
	# the last line of stderr
	[[ $stderr == *"ramboot: boot: copied into RAM (tmpfs): $R/run/ramboot/ram/x.img, "*" KiB in "*" s, verified" ]]
	umount "$R/run/ramboot/ram"
	rm -rf "$R/run"
	echo "quiet ramboot=ram ltsp.image=images/x.img ramboot.sha256=$(printf '0%.0s' $(seq 64))" \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[[ $stderr == *"ramboot: boot: copying $R/root/images/x.img ("* ]]
	[[ $stderr == *"warning: hash mismatch: "*"; booting from the network image"* ]]
	[[ $stderr != *"copied into RAM"* ]]
}

@test "boot: hash mismatch (root): fallback, tmpfs gone" {
	need_root
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img ramboot.sha256=$(printf '0%.0s' $(seq 64))" \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report hash)" = mismatch ]
	[ "$(report fallback)" = "hash mismatch" ]
	run ! grep -qs " $R/run/ramboot/ram " /proc/mounts
	[ ! -e "$R/run/ramboot/ram/x.img" ]
}

@test "boot: ram into zram (root): RAMBOOT_IMAGE is a new zram device" {
	need_root
	[ -e /sys/class/zram-control/hot_add ] || skip "no zram module"
	# /sys and /dev through the prefix, /proc faked
	ln -s /sys "$R/sys"
	ln -s /dev "$R/dev"
	make_sqfs "$R/root/images/x.img"
	before=$(ls /sys/block | grep '^zram' | tr '\n' ' ')
	echo "ramboot=ram ramboot.target=zram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	[[ $output =~ ^RAMBOOT_IMAGE=$R/dev/zram([0-9]+)$ ]]
	ZRAM_ID=${BASH_REMATCH[1]}
	[[ " $before " != *" zram$ZRAM_ID "* ]]
	size=$(stat -c %s "$R/root/images/x.img")
	cmp -n "$size" "$R/root/images/x.img" "/dev/zram$ZRAM_ID"
	[ "$(report target)" = zram ]
	[ "$(report fstype)" = squashfs ]
}

@test "boot: zram load failure (root): the device is removed again" {
	need_root
	[ -e /sys/class/zram-control/hot_add ] || skip "no zram module"
	ln -s /sys "$R/sys"
	ln -s /dev "$R/dev"
	make_sqfs "$R/root/images/x.img"
	before=$(ls /sys/block | grep '^zram' | sort | tr '\n' ' ')
	ZRAM_BEFORE="$before"
	echo "ramboot=ram ramboot.target=zram ltsp.image=images/x.img ramboot.sha256=$(printf 'a%.0s' $(seq 64))" \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report fallback)" = "hash mismatch" ]
	after=$(ls /sys/block | grep '^zram' | sort | tr '\n' ' ')
	[ "$before" = "$after" ]
}

# ---- failing closed, never hanging: regression tests -----------------------

# A background writer that holds a FIFO open and sends nothing.
silent_writer() { # fifo
	mkfifo "$1"
	(exec 3>"$1"; sleep 120) &
	WRITER=$!
}

kill_writer() {
	if [ -n "${WRITER:-}" ]; then
		pkill -P "$WRITER" sleep 2>/dev/null || true
		kill "$WRITER" 2>/dev/null || true
		wait "$WRITER" 2>/dev/null || true
	fi
	WRITER=
}

@test "boot: a malformed ramboot.sha256= (63 digits) is a fallback, not an unverified copy" {
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img ramboot.sha256=$(printf 'a%.0s' $(seq 63))" \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "verification unusable" ]
	[ ! -e "$R/run/ramboot/ram" ] || [ -z "$(ls -A "$R/run/ramboot/ram")" ]
}

@test "boot: a malformed sha256 in ramboot.conf is a fallback too; a good one on the command line wins" {
	make_sqfs "$R/root/images/x.img"
	echo "RAMBOOT_SHA256=xyz" >"$R/etc/ramboot.conf"
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	[ "$(report fallback)" = "verification unusable" ]
	echo "ramboot=ram ltsp.image=images/x.img ramboot.sha256=none" >"$R/proc/cmdline"
	rb
	[ "$(report fallback)" != "verification unusable" ]
}

@test "boot: IMAGE.manifest that is a directory, a FIFO or a dangling link: fallback, never hash=none" {
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	for kind in dir fifo dangling; do
		rm -rf "$R/root/images/x.img.manifest" "$R/run"
		case $kind in
		dir) mkdir "$R/root/images/x.img.manifest" ;;
		fifo) mkfifo "$R/root/images/x.img.manifest" ;;
		dangling) ln -s /nonexistent "$R/root/images/x.img.manifest" ;;
		esac
		run --separate-stderr timeout 20 env -u RAMBOOT RAMBOOT_ROOT="$R" "$BIN" boot
		[ "$status" -eq 0 ] || { echo "$kind: status $status"; false; }
		[ -z "$output" ]
		[ "$(report mode_done)" = off ] || { echo "$kind: $(cat "$R/run/ramboot/report")"; false; }
		[ "$(report fallback)" = "bad manifest" ] || { echo "$kind: $(report fallback)"; false; }
	done
}

@test "boot: ramboot.conf larger than 64 KiB is not cut: a warning and a fallback" {
	make_sqfs "$R/root/images/x.img"
	{ seq -f '# comment line %g' 1 5000; echo 'RAMBOOT_SHA256=none'; } >"$R/etc/ramboot.conf"
	[ "$(stat -c %s "$R/etc/ramboot.conf")" -gt 65536 ]
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[[ $stderr == *"larger than 64 KiB"* ]]
	[ "$(report fallback)" = "settings unreadable" ]
}

@test "boot: RAMBOOT_ROOT and RAMBOOT_BIN in ramboot.conf are not 'unknown settings'" {
	printf 'RAMBOOT_ROOT=/x\nRAMBOOT_BIN=/y\nRAMBOOT_BOGUS=1\n' >"$R/etc/ramboot.conf"
	rb
	assert_success
	[[ $stderr != *RAMBOOT_ROOT* ]]
	[[ $stderr != *RAMBOOT_BIN* ]]
	[[ $stderr == *"RAMBOOT_BOGUS="*"unknown setting"* ]]
}

@test "boot: ramboot.timeout= is a setting; a bad value warns" {
	echo "ramboot.timeout=soon" >"$R/proc/cmdline"
	rb
	assert_success
	[[ $stderr == *"ramboot.timeout=: invalid value 'soon'"* ]]
	echo "ramboot.timeout=2.5" >"$R/proc/cmdline"
	rb
	[[ $stderr != *timeout* ]]
}

@test "boot: a stalled source (root): returns after ramboot.timeout, fallback, nothing mounted" {
	need_root
	silent_writer "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img ramboot.timeout=2 ramboot.manifest=none" \
		>"$R/proc/cmdline"
	local t0=$SECONDS
	run --separate-stderr timeout 60 env -u RAMBOOT RAMBOOT_ROOT="$R" "$BIN" boot
	kill_writer
	# the stall timer's doing (2 s), not the kill of the child at 2 + 15 s
	[ $((SECONDS - t0)) -lt 12 ] || fail "took $((SECONDS - t0)) s"
	[ "$status" -eq 0 ]
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "source stalled" ]
	[[ "$(report error)" != *"left to the kernel"* ]]
	! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

# hang: the fault shim's stand-in for a thread the kernel holds (D state).
boot_with_hang() { # rule
	load helpers/fault
	faultinj_build
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img ramboot.timeout=1 ramboot.manifest=none" \
		>"$R/proc/cmdline"
	run --separate-stderr timeout 90 env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ="$1" FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" \
		LD_PRELOAD="$FAULTINJ_SO" "$BIN" boot
	[ "$status" -eq 0 ]
	assert_output ""
	grep -q 'action=hang' "$BATS_TEST_TMPDIR/fi.log"
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "source stalled" ]
	[[ "$(report error)" == *"left to the kernel"* ]]
	! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

@test "boot: the open of the image never returns (root): the copy stops waiting, fallback" {
	need_root
	# as on a hard NFS mount whose server is gone
	boot_with_hang 'open:path=*/images/x.img:hang'
}

@test "boot: the copy itself never returns (root): the boot step returns anyway" {
	need_root
	# the child's own thread hangs where nothing watches it: the boot's
	# backstop gives up on the child
	boot_with_hang 'mount:path=*/run/ramboot/ram:hang'
}

@test "boot: a corrupt image whose path says 'mismatch' (root): load failed, not a hash mismatch" {
	need_root
	make_sqfs "$BATS_TEST_TMPDIR/x.img"
	mkdir -p "$R/root/images/mismatch"
	lzop -c "$BATS_TEST_TMPDIR/x.img" >"$R/root/images/mismatch/x.img.lzo"
	# a flipped byte inside the first compressed block: a checksum error
	printf '\xff' | dd of="$R/root/images/mismatch/x.img.lzo" bs=1 seek=200 conv=notrunc 2>/dev/null
	echo "ramboot=ram ltsp.image=images/mismatch/x.img.lzo ramboot.sha256=$(sha256sum <"$BATS_TEST_TMPDIR/x.img" | cut -c1-64)" \
		>"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report fallback)" != "hash mismatch" ]
	[ "$(report hash)" = none ]
}

@test "boot: an image name with a newline (root): the copy gets a plain one-line name" {
	need_root
	make_sqfs "$R/root/images/a
b.img"
	rbenv RAMBOOT=ram -- --image="$R/root/images/a
b.img"
	assert_success
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/a_b.img"
	[ "$(report ram_path)" = "$R/run/ramboot/ram/a_b.img" ]
	[ "$(report mode_done)" = ram ]
}

@test "boot: a copy with no known file system (root): dropped, fallback" {
	need_root
	head -c 1048576 /dev/urandom >"$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report fallback)" = "not a usable image" ]
	! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

@test "boot: --drop frees the announced copy and records the fallback (root)" {
	need_root
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=ram ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	rb --drop="$R/run/ramboot/ram/x.img" --reason="cannot mount the RAM copy"
	assert_success
	assert_output ""
	[[ $stderr == *"cannot mount the RAM copy; booting from the network image"* ]]
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "cannot mount the RAM copy" ]
	[ "$(report ram_path)" = "" ]
	[ "$(report fstype)" = squashfs ]
	! grep -qs " $R/run/ramboot/ram " /proc/mounts
}

@test "boot: --drop of a path that is not this boot's copy leaves it alone" {
	echo data >"$BATS_TEST_TMPDIR/other"
	rb --drop="$BATS_TEST_TMPDIR/other" --reason=x
	assert_success
	[ -e "$BATS_TEST_TMPDIR/other" ]
	[[ $stderr == *"not the RAM copy of this boot"* ]]
	[ "$(report fallback)" = x ]
	rb --reason=x
	[ "$status" -eq 2 ]
}

@test "boot: ramboot.profile=record starts a recorder; profile --stop writes the profile" {
	make_sqfs "$R/root/images/x.img"
	echo "ramboot.profile=record ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	# the boot reads part of the image
	dd if="$R/root/images/x.img" of=/dev/null bs=64k count=2 2>/dev/null
	for _ in $(seq 50); do [ -s "$R/run/ramboot/profile.pid" ] && break; sleep 0.1; done
	run --separate-stderr env RAMBOOT_ROOT="$R" "$BIN" profile --stop
	assert_success
	[ -s "$R/run/ramboot/profile" ]
	run --separate-stderr "$BIN" profile show "$R/run/ramboot/profile"
	assert_success
	[[ $output == *"image-size $(stat -c %s "$R/root/images/x.img")"* ]] || [[ $output == *"$(stat -c %s "$R/root/images/x.img")"* ]]
}

@test "boot: ramboot.profile=record with ramboot=ram: not recorded, said in the report" {
	echo "ramboot=ram ramboot.profile=record ltsp.image=images/none.img" >"$R/proc/cmdline"
	rb
	assert_success
	[[ "$(report error)" == *"profile: not recorded with ramboot=ram"* ]]
	[ ! -e "$R/run/ramboot/profile.pid" ]
}

# ---- ramboot=lazy: boot from the network image, end up in RAM --------------

lazy_cleanup() {
	if [ -n "${LAZY_MNT:-}" ] && mountpoint -q "$LAZY_MNT"; then
		umount "$LAZY_MNT" || umount -l "$LAZY_MNT"
	fi
	if [ -n "${LAZY_LOOP:-}" ]; then
		losetup -d "$LAZY_LOOP" 2>/dev/null || true
	fi
	ram_umount
	LAZY_MNT= LAZY_LOOP=
}

lazy_state() {
	sed -n 's/^state=//p' "$R/run/ramboot/lazy" 2>/dev/null
}

@test "boot: ramboot=lazy (root): stdout empty, the copier waits for the loop device, then switches it to RAM" {
	need_root
	ln -s /sys "$R/sys"
	ln -s /dev "$R/dev"
	cp /proc/meminfo "$R/proc/meminfo"
	make_sqfs "$R/root/images/x.img"
	"$BIN" manifest -o "$R/root/images/x.img.manifest" "$R/root/images/x.img"
	echo "ramboot=lazy ltsp.image=images/x.img" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = lazy ]
	[ "$(report fallback)" = "" ]
	# what LTSP does after its PRE_INITRD_BOTTOM hooks: a read-only loop
	# device on the image, mounted
	LAZY_LOOP=$(losetup -r -f --show "$R/root/images/x.img")
	LAZY_MNT=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$LAZY_MNT"
	mount -t squashfs -o ro "$LAZY_LOOP" "$LAZY_MNT"
	for _ in $(seq 300); do
		case $(lazy_state) in switched | gave-up*) break ;; esac
		sleep 0.1
	done
	[ "$(lazy_state)" = switched ] || { cat "$R/run/ramboot/lazy"; lazy_cleanup; false; }
	# the outcome is in the boot report too
	[ "$(report mode_done)" = lazy ]
	[[ "$(report ram_path)" == "$R/run/ramboot/ram/"* ]]
	[ -n "$(report lazy_switched)" ]
	backing=$(cat "/sys/block/${LAZY_LOOP#/dev/}/loop/backing_file")
	[[ $backing == "$R/run/ramboot/ram/"* ]] || { echo "backing $backing"; lazy_cleanup; false; }
	# the network image can go away: the system reads the RAM copy
	rm -f "$R/root/images/x.img"
	echo 3 >/proc/sys/vm/drop_caches
	cmp "$LAZY_MNT/etc/hostname" <(echo hello) || { lazy_cleanup; false; }
	cat "$LAZY_MNT/sbin/init" >/dev/null || { lazy_cleanup; false; }
	lazy_cleanup
}

@test "boot: ramboot=lazy with a malformed sha256: fallback, no copier" {
	make_sqfs "$R/root/images/x.img"
	echo "ramboot=lazy ltsp.image=images/x.img ramboot.sha256=abc" >"$R/proc/cmdline"
	rb
	assert_success
	assert_output ""
	[ "$(report mode_done)" = off ]
	[ "$(report fallback)" = "verification unusable" ]
	[ ! -e "$R/run/ramboot/lazy" ]
}

@test "boot: an image name holding report lines (root): one line a key in the report" {
	need_root
	name=$'a\nmode_done=ram\nb.img'
	make_sqfs "$R/root/images/$name"
	rbenv RAMBOOT=ram -- --image="$R/root/images/$name"
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/a_mode_done_ram_b.img"
	run grep -cvE '^[a-z_]+=' "$R/run/ramboot/report"
	assert_output 0
	run sh -c "cut -d= -f1 '$R/run/ramboot/report' | sort | uniq -d"
	assert_output ""
	[ "$(grep -c '^mode_done=' "$R/run/ramboot/report")" -eq 1 ]
	[ "$(report source)" = "$R/root/images/a mode_done=ram b.img" ]
}
