# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/40-ltsp.sh - the real LTSP code (ltsp.img, the shipped
# hook) on Debian's initrd: ltsp-ram, ltsp-lazy, ltsp-signed, ltsp-signed-other
# (signed manifests) and ltsp-ca (a content-addressed image).
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

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

	ltsp_conf tests/boot/run.sh
	ltsp_initrd "$lt/destdir/etc/ltsp/ramboot" "$lt/tftp" ||
		{ fail "ltsp initrd failed: $(tail -n 3 "$lt/setup.log")"; return 1; }

	# `ltsp initrd` packs /etc/ltsp: the binary and the hook must be there.
	for f in etc/ltsp/ramboot/ramboot etc/ltsp/ramboot/ltsp-hook.sh etc/ltsp/ramboot/ramboot-lib.sh; do
		cpio -it < "$lt/tftp/ltsp/ltsp.img" 2>/dev/null | grep -Eqx "(\./)?$f" ||
			{ fail "ltsp.img has no $f (make install puts it in /etc/ltsp for \`ltsp initrd\`)"; return 1; }
	done

	ltsp_net_identity
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

# ltsp_begin NAME: the start of an LTSP case: its log, and LTSP's setup
# (made once per run). Status 1 when the case is over already: skipped
# (RBTEST_LTSP=0), or the setup failed (its log is the case's, the
# result given).
ltsp_begin() {
	case_begin "$1"
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

# expect_ltsp_copy: a verified RAM copy ($ram), which LTSP itself mounted
# (its "Running: mount" line)
expect_ltsp_copy() {
	expect hash ok
	expect mode_done ram
	expect fallback ""
	expect_like ram_path "/run/ramboot/ram/*"
	expect_ram_copy
	ram=$(report ram_path)
	grep -q "^Running: mount -t squashfs -o ro $ram " "$log.txt" ||
		fail "LTSP did not mount $ram"
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
		expect_ltsp_copy
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
	expect source "/root/images/$ca_name"
	expect_ltsp_copy
	result "$name"
}
