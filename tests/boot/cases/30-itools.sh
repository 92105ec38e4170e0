# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/30-itools.sh - Debian's own initrd (plain
# initramfs-tools) with the extra initrd `ramboot initrd -o` writes:
# itools-ram, itools-fallback, itools-lazy, and nbd-lazy (the root over a
# real NBD device). Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

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
	case_begin "$1"
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
		expect_loop_mount "$ram" /run/ramboot/ro
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
	case_begin "$1"
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
