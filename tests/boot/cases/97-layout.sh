# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/97-layout.sh - ltsp-layout: the real LTSP code (ltsp.img,
# the shipped hook) on Debian's initrd boots an image laid out in boot
# order, with ramboot=lazy: mksquashfs -sort from the sort file `ramboot
# profile sort` wrote from a profile of the same root's unsorted image.
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables
#
# The root is the test root ($cache/root) with /etc/rbtest-layout.sha256,
# the SHA-256 of each of its files outside /etc (LTSP's initrd-bottom
# writes there, through its overlay), and /sbin/rbtest-layout, its init:
# it checks them (busybox sha256sum -c) while the copier still runs, so
# that they are read from the network image's sorted layout, then runs
# /sbin/rbtest-init. The profile is a fixture (tests/helpers/profile.bash):
# one page inside the data of each file that has one, in the reverse of
# the unsorted image's order. On the host, before the boot, `ramboot
# profile extents` of the sorted image shows those files first, right
# after the superblock, contiguous, in the sort file's order: by
# directory, as the profile first read each, and by name within one.

# layout_first IMG N: the first N files of IMG by the offset of their
# data, "PATH" a line, while each starts where the one before ended (the
# first at 96, right after the superblock)
layout_first() {
	"$rbtool" profile extents "$1" | grep -v -e '<' -e ' (fragment)$' | sort -n -k1,1 |
		head -n "$2" | awk -v end=96 '$1 != end { exit } { end = $1 + $2; print $3 }'
}

layout_setup() {
	ltsp_setup_once || return 1
	ly=$lt/layout
	rm -rf "$ly"
	mkdir -p "$ly/srv/images"
	cp -a "$cache/root" "$ly/root" || { fail "cannot copy the test root"; return 1; }
	(cd "$ly/root" && find . -path ./etc -prune -o -type f -print | LC_ALL=C sort |
		xargs sha256sum > etc/rbtest-layout.sha256) ||
		{ fail "sha256sum of the root failed"; return 1; }
	cat > "$ly/root/sbin/rbtest-layout" <<'EOF'
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
cd / && if sha256sum -c /etc/rbtest-layout.sha256 > /tmp/rbtest-layout.out 2>&1; then
	echo "RBTEST layout-sums=ok $(wc -l < /etc/rbtest-layout.sha256)"
else
	echo "RBTEST layout-sums=failed $(grep -v ': OK$' /tmp/rbtest-layout.out | head -n 3 | tr '\n' ' ')"
fi
exec /sbin/rbtest-init
EOF
	chmod 0755 "$ly/root/sbin/rbtest-layout"
	mksquashfs "$ly/root" "$ly/unsorted.img" -noappend -quiet -all-root -no-progress \
		>> "$lt/setup.log" 2>&1 || { fail "mksquashfs (unsorted) failed"; return 1; }
	# Every file with a whole page in its data, in the reverse of the
	# image's order
	"$rbtool" profile extents "$ly/unsorted.img" | grep -v -e '<' -e ' (fragment)$' |
		sort -n -k1,1 | awk '$2 >= 8192' | tac > "$ly/picked"
	[ "$(wc -l < "$ly/picked")" -ge 3 ] || { fail "too few files to sort: $(cat "$ly/picked")"; return 1; }
	# shellcheck disable=SC2046 # OFFSET LENGTH pairs
	bash -c '. "$1"; shift; write_profile "$@"' _ tests/helpers/profile.bash \
		"$ly/unsorted.profile" "$ly/unsorted.img" \
		$(awk '{ s = int(($1 + 4095) / 4096) * 4096; print s, 4096 }' "$ly/picked") ||
		{ fail "writing the fixture profile failed"; return 1; }
	"$rbtool" profile sort "$ly/unsorted.img" "$ly/unsorted.profile" -o "$ly/sort" \
		>> "$lt/setup.log" 2>&1 || { fail "ramboot profile sort failed: $(tail -n 1 "$lt/setup.log")"; return 1; }
	mksquashfs "$ly/root" "$ly/srv/images/x86_64.img" -noappend -quiet -all-root -no-progress \
		-sort "$ly/sort" >> "$lt/setup.log" 2>&1 || { fail "mksquashfs -sort failed"; return 1; }
	# the sort file's order: the directories as the profile first read
	# them, the files of each by name (bytes)
	cut -d' ' -f3- "$ly/picked" |
		awk '{ d = $0; if (!sub(/\/[^\/]*$/, "", d)) d = ""; if (!(d in r)) r[d] = n++; print r[d] "\t" $0 }' |
		LC_ALL=C sort -t "$(printf '\t')" -k1,1n -k2 | cut -f2- > "$ly/want"
	layout_first "$ly/srv/images/x86_64.img" "$(wc -l < "$ly/want")" > "$ly/first"
	cmp -s "$ly/want" "$ly/first" ||
		{ fail "the sorted image does not start with the profile's files: $(tr '\n' ' ' < "$ly/first")"; return 1; }
	cmp -s "$ly/unsorted.img" "$ly/srv/images/x86_64.img" &&
		{ fail "the sorted image is the unsorted one"; return 1; }
	mkfs.ext4 -q -F -L ltsp-srv -d "$ly/srv" "$ly/disk.ext4" 64M >> "$lt/setup.log" 2>&1 ||
		{ fail "mkfs.ext4 -d failed"; return 1; }
	ly_size=$(stat -c %s "$ly/srv/images/x86_64.img")
	ly_sha=$(sha256sum "$ly/srv/images/x86_64.img" | cut -d' ' -f1)
	rm -rf "$ly/srv" "$ly/root"
	return 0
}

layout_case() {
	ltsp_begin "$1" || return
	if ! once layout; then
		result "$name"
		return
	fi
	# The sorted image's, for rbtest.size and expect_lazy_switched
	saved_size=$img_size saved_sha=$img_sha
	img_size=$ly_size img_sha=$ly_sha
	boot_debian "$name" "$lt/initrd.combined" 768 \
		"root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/rbtest-layout ramboot=lazy" \
		"file=$ly/disk.ext4,if=virtio,format=raw,throttling.bps-total=125000000"
	ltsp_booted
	if expect_done; then
		grep -q '^RBTEST layout-sums=ok ' "$log.txt" ||
			fail "the root's files do not match their SHA-256: $(grep '^RBTEST layout-sums=' "$log.txt")"
		expect_lazy_switched
		expect source /root/images/x86_64.img
		grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
			fail "LTSP did not mount the network image"
	fi
	img_size=$saved_size img_sha=$saved_sha
	result "$name"
}
