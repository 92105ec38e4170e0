# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/70-verity.sh - ramboot.verity=1: the root through a dm-verity mapping.
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

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
	flip_off=$(flip_offset "$vnet/x86_64.img" "$cache/root")
	[ "${flip_off:--1}" -gt 0 ] 2>/dev/null ||
		{ fail "/rbtest/flip.bin is not stored as it is in the image (offset '$flip_off')"; return 1; }
	cp "$vnet/x86_64.img" "$vnet/flip.img"
	flip_byte "$vnet/flip.img" "$flip_off"
	[ "$(cmp -l "$vnet/x86_64.img" "$vnet/flip.img" | wc -l)" = 1 ] ||
		{ fail "flip.img does not differ from the image in one byte"; return 1; }
	cp "$vnet/x86_64.img.manifest" "$vnet/flip.img.manifest"
	return 0
}

# verity_case NAME: verity-off, verity-ram, verity-lazy, verity-flip,
# verity-noroot
verity_case() {
	case_begin "$1"
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
	expect_verity_root
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
