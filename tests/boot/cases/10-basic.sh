# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/10-basic.sh - the test initramfs with ramboot=off,
# ram (every codec, over 9p and a disk, into tmpfs or zram), prefetch,
# zram swap, and the fallbacks of a copy that fails (corrupt stream,
# wrong SHA-256, too little memory). Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

# basic_case NAME: one of the cases above
basic_case() {
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
	esac
	result "$c"
}
