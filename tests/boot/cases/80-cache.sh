# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/80-cache.sh - ramboot.cache=: the local-disk cache.
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

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

# cache_cmd SUBCOMMAND ARG...: `ramboot cache SUBCOMMAND` on the cache disk
cache_cmd() { cache_do "$cdisk" "$@"; }

# cache_init: a new cache on the disk
cache_init() {
	rm -f "$cdisk"
	truncate -s 64M "$cdisk" || return 1
	cache_do "$cdisk" init >> "$cc/setup.log" 2>&1
}

# cache_boot NAME NET DRIVE-OPTIONS CMDLINE [MARKER COMMAND]: boot (the
# test initramfs) with the 9p share NET and the cache disk, its -drive
# options followed by DRIVE-OPTIONS
cache_boot() {
	cb_net=$net
	net=$2
	boot_extra="-drive id=cache0,file=$cdisk,if=virtio,format=raw$3"
	cb_name=$1 cb_cmdline=$4
	shift 4
	boot "$cb_name" 9p "$cb_cmdline" "$@"
	boot_extra=
	net=$cb_net
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
	case_begin "$1"
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
		cache_boot "$name" "$cc/net2" ",throttling.bps-total=524288" \
			"$cache_args rbtest.cachecut=vda:2048 rbtest.cachewait=600" "RBTEST cache-writing" "quit"
		grep -q '^RBTEST cache-writing$' "$log.txt" ||
			fail "the refresh was not seen writing to the cache disk"
		! grep -q '^RBTEST-DONE' "$log.txt" || fail "the boot ended before the power cut"
		# The old slot and state, as they were.
		cstatus
		expect_state ok "$gen0" "$active0" "$cimg1_sha"
		echo "# cache-powercut: after the cut, interrupted: $(cstat interrupted)" ;;
	cache-delta)
		cache_boot "$name" "$cc/net2" "" "$cache_args"
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
		flip_byte "$cache_mnt/images/x86_64.img/$active0" "$flip2_off"
		umount "$cache_mnt"
		rmdir "$cache_mnt"
		cache_mnt=
		cache_boot "$name" "$cc/net2" "" "$cache_args ramboot.verity=1 rbtest.flip=/rbtest/flip.bin"
		expect_done || { result "$name"; return; }
		expect cache hit
		expect cache_verified verity
		expect verity on
		expect_verity_root
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
		cache_boot "$name-again" "$cc/net2" "" "$cache_args ramboot.verity=1"
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
