# bench/lib.sh - sourced by bench/boot-bench.sh, bench/cache-bench.sh and
# bench/cache-delta.sh. It sources tests/boot/lib.sh, what the QEMU boot
# tests share: the build-cache helpers key FILE..., fresh NAME KEY and
# stamp NAME KEY, ltsp_conf, ltsp_initrd, ltsp_net_identity and cache_do
# DISK SUBCOMMAND ARG... (`ramboot cache` on a disk file through a loop
# device, $cache_lo while attached: the caller's cleanup detaches it).
#
# bench_qemu_setup finds QEMU, its accelerator (images/qemu-accel.sh) and
# Debian's kernel (kver, kernel) and makes $cache. The caller gives top,
# cache and the functions say and die.
#
# ltsp_setup builds the real LTSP initrd for their boots, once while its
# inputs do not change ($lt/initrd.combined: ltsp.img, a network
# identity, Debian's initrd). The caller gives bench_name, lt, cache, rb,
# deb_initrd, kver and the functions say, key, fresh and stamp.
#
# real_files ROOT MB copies about MB MB of real files of this host (from
# /usr/share and /usr/lib, spread over them) into ROOT, their list in
# $cache/files (in the image's order).
#
# rotated ROUND MODES gives the order of the modes of a round.
#
# doc_table NAME TITLE TABLE DOC puts the file TABLE into the markdown DOC
# between <!-- NAME:begin --> and <!-- NAME:end -->, or at its end under
# the heading TITLE.
# shellcheck shell=bash disable=SC2154 # the caller's variables

# shellcheck source=tests/boot/lib.sh
. "$top/tests/boot/lib.sh"

ltsp_setup() {
	mkdir -p "$lt"
	local k m
	# shellcheck disable=SC2046 # file names without blanks
	k=$(key "$rb" conf/ltsp.conf $(find initrd-hooks -type f | LC_ALL=C sort) "$deb_initrd"; echo "$kver")
	fresh ltsp-initrd "$k" && [ -f "$lt/initrd.combined" ] && return 0
	rm -f "$cache/ltsp-initrd.key"
	: > "$lt/setup.log"
	rm -rf "$lt/destdir"
	NO_INITRAMFS_TOOLS=1 make -s install DESTDIR="$lt/destdir" >> "$lt/setup.log" 2>&1 ||
		{ say "make install failed: $(tail -n 3 "$lt/setup.log")"; return 1; }
	for m in squashfs overlay loop virtio_blk ext4; do
		lsinitramfs "$deb_initrd" 2>/dev/null | grep -q "/$m\.ko" ||
			{ say "$deb_initrd has no $m module (update-initramfs -u)"; return 1; }
	done
	ltsp_conf "bench/$bench_name.sh"
	ltsp_initrd "$lt/destdir/etc/ltsp/ramboot" "$lt/tftp" ||
		{ say "ltsp initrd failed: $(tail -n 3 "$lt/setup.log")"; return 1; }
	# No NIC: give LTSP's network_vars an identity.
	ltsp_net_identity
	cat "$lt/tftp/ltsp/ltsp.img" "$lt/zz-net.cpio" "$deb_initrd" > "$lt/initrd.combined"
	stamp ltsp-initrd "$k"
}

real_files() { # ROOT MB
	local total want stride
	find /usr/share /usr/lib -xdev -type f -readable -size -2M -size +0 \
		-not -path '/usr/lib/modules/*' -not -path '/usr/lib/debug/*' \
		-printf '%s\t%p\n' 2>/dev/null |
		awk -F '\t' 'index($2, " ") == 0 && index($2, "\"") == 0 && index($2, "\047") == 0 && index($2, "\\") == 0' |
		LC_ALL=C sort -t "$(printf '\t')" -k2 > "$cache/candidates"
	total=$(awk -F '\t' '{ s += $1 } END { printf "%d\n", s }' "$cache/candidates")
	want=$(($2 * 3300000))
	stride=$((total / want))
	[ "$stride" -ge 1 ] || stride=1
	awk -F '\t' -v st="$stride" -v want="$want" '
		(NR - 1) % st == 0 { print $2; s += $1; if (s >= want) exit }' \
		"$cache/candidates" > "$cache/files"
	tar -cf - --no-recursion -T "$cache/files" 2>/dev/null | tar -xf - -C "$1"
}

bench_qemu_setup() {
	boot_host || die "$host_why"
	qemu_accel_choose "$kernel" || die "no accelerator"
	say "accelerator: $qemu_accel ($qemu_accel_why)"
	mkdir -p "$cache"
}

# rotated ROUND MODES: the modes of round ROUND (from 1), rotated by one
# mode per round: interleaved rounds boot every mode once, each first in
# turn
rotated() {
	local ml k
	read -r -a ml <<< "$2"
	k=$(( ($1 - 1) % ${#ml[@]} ))
	echo "${ml[*]:k} ${ml[*]:0:k}"
}

doc_table() { # NAME TITLE TABLE DOC
	if [ -f "$4" ] && grep -q "<!-- $1:begin -->" "$4"; then
		awk -v t="$3" -v b="<!-- $1:begin -->" -v e="<!-- $1:end -->" '
			index($0, b) { print; while ((getline l < t) > 0) print l; skip = 1; next }
			index($0, e) { skip = 0 }
			!skip' "$4" > "$4.tmp" && mv "$4.tmp" "$4"
	else
		{
			echo
			echo "## $2"
			echo
			echo "<!-- $1:begin -->"
			cat "$3"
			echo "<!-- $1:end -->"
		} >> "$4"
	fi
}
