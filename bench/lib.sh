# bench/lib.sh - sourced by bench/boot-bench.sh, bench/cache-bench.sh,
# bench/cache-delta.sh, bench/http-bench.sh, bench/lab-bench.sh and
# bench/layout-bench.sh. It sources tests/boot/lib.sh, what the QEMU boot
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
# real_root ROOT MB makes the test client root in ROOT with about MB MB
# of real files in place of its test data; bbench_root ROOT MB, that root
# as make bench-boot (and bench-http) boots it; squash_zstd ROOT IMG makes
# IMG the squashfs (zstd) of ROOT. The caller gives rb and cache.
#
# netns_bridge NS, netns_port BR NAME ADDR/LEN and netns_teardown PREFIX:
# a link of network namespaces on one bridge, and its removal;
# netns_cleanup, the trap of an exit: netns_teardown "$NS" and the
# temporary directory $tmp removed. The namespaces made are in the
# caller's array nets.
#
# rotated ROUND MODES gives the order of the modes of a round.
#
# doc_table NAME TITLE TABLE DOC puts the file TABLE into the markdown DOC
# between <!-- NAME:begin --> and <!-- NAME:end -->, or at its end under
# the heading TITLE.
# bench_start PREFIX WHY TOOL..., what a bench checks first: RAMBOOT_BIN
# made absolute, rb (the static binary) and doc (PREFIX_DOC: 0 or unset
# none, 1 docs/benchmarks.md, else that file) set; root (WHY: what for),
# both binaries, each TOOL, $runs a count and $mb a size, or die.
#
# shellcheck shell=bash disable=SC2154 # the caller's variables

# shellcheck source=tests/boot/lib.sh
. "$top/tests/boot/lib.sh"

# shellcheck disable=SC2034 # rb and doc are the caller's
bench_start() {
	local p=$1 why=$2 d t
	shift 2
	RAMBOOT_BIN=${RAMBOOT_BIN:-$top/ramboot}
	case $RAMBOOT_BIN in /*) ;; *) RAMBOOT_BIN=$top/$RAMBOOT_BIN ;; esac
	rb=${RAMBOOT_STATIC:-$top/static/ramboot}
	d=${p}_DOC
	case ${!d:-0} in
	0 | "") doc= ;;
	1) doc=$top/docs/benchmarks.md ;;
	*) doc=${!d} ;;
	esac
	[ "$(id -u)" = 0 ] || die "needs root ($why); run it as root"
	[ -x "$RAMBOOT_BIN" ] || die "no $RAMBOOT_BIN (run make)"
	[ -x "$rb" ] || die "no $rb (run make static)"
	PATH=$PATH:/usr/sbin:/sbin
	for t in "$@"; do
		command -v "$t" >/dev/null || die "$t not installed (tests/deps.sh install)"
	done
	case $runs in '' | *[!0-9]* | 0) die "${p}_RUNS=$runs: expected a count" ;; esac
	case $mb in '' | *[!0-9]* | 0) die "${p}_MB=$mb: expected MB" ;; esac
}

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
	total=$(awk -F '\t' '{ s += $1 } END { printf "%.0f\n", s }' "$cache/candidates")
	want=$(($2 * 3300000))
	stride=$((total / want))
	[ "$stride" -ge 1 ] || stride=1
	awk -F '\t' -v st="$stride" -v want="$want" '
		(NR - 1) % st == 0 { print $2; s += $1; if (s >= want) exit }' \
		"$cache/candidates" > "$cache/files"
	tar -cf - --no-recursion -T "$cache/files" 2>/dev/null | tar -xf - -C "$1"
}

real_root() { # ROOT MB
	images/build-test-root.sh "$1" "$rb" > "$cache/build-root.log" 2>&1 ||
		die "images/build-test-root.sh failed: $(tail -n 3 "$cache/build-root.log")"
	rm -rf "$1/usr/share/rbtest"
	real_files "$1" "$2" || die "copying the files into the root failed"
}

# bbench_root ROOT MB: real_root with bench/boot-bench-init as its init
# and the login's list, /etc/bbench/login.list: a fixed 25 % of the
# image's files, the first of every four groups of 32 consecutive files
# (in the image's order, like the files of a few packages), so that its
# reads have the locality of a real login rather than touching every
# block of the image
bbench_root() {
	real_root "$1" "$2"
	install -m 0755 bench/boot-bench-init "$1/sbin/bbench-init"
	ln -sf bbench-init "$1/sbin/init"
	mkdir -p "$1/etc/bbench"
	awk 'int((NR - 1) / 32) % 4 == 0' "$cache/files" > "$1/etc/bbench/login.list"
}

squash_zstd() { # ROOT IMG: written aside, then renamed
	mksquashfs "$1" "$2.tmp" -comp zstd -noappend -quiet -all-root -no-progress \
		> "$cache/mksquashfs.log" 2>&1 || die "mksquashfs failed"
	mv "$2.tmp" "$2"
}

# netns_bridge NS [OPTION...]: the namespace NS (added to nets) holding
# the bridge br0, up, made with OPTIONs (ip link add ... type bridge)
netns_bridge() {
	local ns=$1
	shift
	ip netns add "$ns" || return 1
	nets+=("$ns")
	ip -n "$ns" link add br0 type bridge "$@" && ip -n "$ns" link set br0 up
}

# netns_port BR NAME ADDR/LEN [ARG...]: the namespace NAME (added to
# nets), its eth0 one end of a veth pair whose other end, NAME, is a port
# of BR's bridge; eth0 has ADDR/LEN (ARGs: more of `ip addr add`), eth0
# and lo are up
netns_port() {
	local br=$1 ns=$2 addr=$3
	shift 3
	ip netns add "$ns" || return 1
	nets+=("$ns")
	ip link add "$ns" type veth peer name eth0 netns "$ns" &&
		ip link set "$ns" netns "$br" &&
		ip -n "$br" link set "$ns" master br0 up &&
		ip -n "$ns" addr add "$addr" "$@" dev eth0 &&
		ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up
}

# netns_teardown PREFIX: every namespace of nets, its processes killed
# first, and a veth still in this namespace whose name starts with
# PREFIX- (a setup cut short)
netns_teardown() {
	local n p
	for n in "${nets[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
	done
	for n in "${nets[@]}"; do
		ip netns del "$n" 2>/dev/null || true
	done
	for p in $(ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1 | grep "^$1-"); do
		ip link del "$p" 2>/dev/null || true
	done
}

netns_cleanup() {
	netns_teardown "$NS"
	[ -z "$tmp" ] || rm -rf "$tmp"
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
