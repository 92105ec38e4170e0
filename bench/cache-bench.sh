#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/cache-bench.sh - the local-disk image cache (docs/cache.md) against
# the network boot and the RAM copy, in QEMU with the real LTSP initrd, over
# a 100 Mbit and a 20 Mbit link; and the founding measurement's four
# figures for a 200 MB read, and the network bytes of a one-package
# rebuild.
#
# The client: ltsp.img + Debian's initrd.img (as tests/boot/run.sh's LTSP
# cases make it); the "server" is an ext4 virtio disk (vda) holding
# images/x86_64.img with its manifest and chunk index (`ramboot manifest
# --cindex`), throttled with QEMU's throttling.bps-total to the link rate;
# the cache is a second virtio disk (vdb, not throttled: a local disk),
# made with `ramboot cache init` through a loop device. The image is a
# zstd squashfs of real files from /usr/share and /usr/lib; its init
# (bench/cache-bench-init) prints the time the root was reached, reads a
# fixed three quarters of the image's files (the "login": about 100 MB of
# the image, as a desktop login reads; see below), prints the time again,
# waits for a lazy switch or a refresh behind the boot to end, and prints
# the bytes read from the server disk and read from and written to the
# cache disk (/sys/block/vdX/stat), and the kernel's trace of every read
# request of the server disk, which bench/vda-split.py puts on the files
# of the server disk and on its ext4 metadata: the files are the image's
# network bytes (what an NFS, NBD or HTTP server would send), the
# metadata is the emulated server's own (below, split_cols).
#
# Modes, interleaved in each round (the order rotated by one each round):
#   off        ramboot=off (the cache disk attached, not named)
#   cold       ramboot=cache on an empty cache: the network boot, the
#              refresh behind it
#   hot        ramboot=cache on a cache that holds the image (filled on the
#              host with `ramboot cache refresh`)
#   hot+lazy   ramboot=lazy with the same cache
#   ram        ramboot=ram
# Each boot gets its own copy of the cache disk (sparse): modes do not see
# each other's writes.
#
# Then, at 100 Mbit, one boot with a third disk (vdc, throttled) holding a
# raw file of CACHEBENCH_SEED_MB of random bytes: the seed's four figures
# (none / cold / hot / page cache, see bench/cache-bench-init). And on the
# host, the delta of a one-package rebuild: the files the image holds of
# one installed Debian package, each changed in every 4 KiB (as a rebuild
# of the package changes every block), the image rebuilt, `ramboot cache
# refresh` from the old image's cache: its network bytes, against the
# package's compressed size (its files, tar | xz -6, as in a .deb).
#
#   CACHEBENCH_RUNS=n        rounds (default 3)
#   CACHEBENCH_LINKS="100 20"  link rates in Mbit/s
#   CACHEBENCH_MODES="off cold hot hot+lazy ram"
#   CACHEBENCH_MB=n          size of the client image, MB (default 150:
#                            a zstd image of about 128 MB, of which the
#                            login reads about 100 MB)
#   CACHEBENCH_SEED_MB=n     the seed's read, MB (default 200; 0: skipped)
#   CACHEBENCH_PKG=name      the package of the delta (default: the
#                            installed package the image holds most bytes
#                            of, between 100 KB and 2 MB)
#   CACHEBENCH_TIMEOUT=s     per boot (default 600)
#   CACHEBENCH_MEM=MiB       guest memory (default 1024)
#   CACHEBENCH_DOC=file      the markdown to update (default docs/benchmarks.md)
#   CACHEBENCH_REPORT_ONLY=1 no boots: the table again from the last run's
#                            results (build/bench-cache), however many
#                            rounds it finished
#   CACHEBENCH_DELTA=1       with CACHEBENCH_REPORT_ONLY=1: measure the
#                            delta again (with this ramboot's chunker)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   (images/qemu-accel.sh)
# Time: with TCG on 2 shared cores, the defaults take about 40 minutes
# (30 boots of 30 s to 2 minutes, the seed's boot about 3 minutes, the
# images about 4 minutes).
#
# The login. A desktop login on an LTSP client reads on the order of
# 100 MB or more of the image (the founding measurement reads 200 MB).
# Until 2026-12 the login read a quarter of a 26 MB image, about 6 MB of
# it over the link: the network was then a few seconds of a 30 to 45 s
# TCG boot, and no cache could take more than that off it (a hit read
# 0.76 MB from the server and still came out at 1.03 x off). Now the
# image is about 128 MB and the login reads three quarters of its files,
# about 100 MB of the image: what a login costs over the link. The cost of
# this model: `ram` and a cold refresh read the whole image, about 1.3
# times the login here, where a real 2 GB image is 10 to 20 times it, so
# those two rows are kinder than on a real image.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cache=${CACHEBENCH_CACHE:-$top/build/bench-cache}
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
rbtool=${RAMBOOT_BIN:-$top/ramboot}
runs=${CACHEBENCH_RUNS:-3}
links=${CACHEBENCH_LINKS:-100 20}
modes=${CACHEBENCH_MODES:-off cold hot hot+lazy ram}
mb=${CACHEBENCH_MB:-150}
seed_mb=${CACHEBENCH_SEED_MB:-200}
timeout_s=${CACHEBENCH_TIMEOUT:-600}
mem=${CACHEBENCH_MEM:-1024}
doc=${CACHEBENCH_DOC:-$top/docs/benchmarks.md}

say() { echo "cache-bench: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (loop devices, LTSP setup)"
[ -x "$rb" ] || die "$rb missing (make static)"
[ -x "$rbtool" ] || rbtool=$rb
for t in mksquashfs mkfs.ext4 cpio busybox losetup python3 xz ltsp lsinitramfs; do
	command -v "$t" >/dev/null || die "$t not installed (the real LTSP initrd needs Debian's ltsp)"
done
for v in "$runs" "$mb" "$seed_mb"; do
	case $v in '' | *[!0-9]*) die "'$v': expected a number" ;; esac
done
{ [ "$runs" -gt 0 ] && [ "$mb" -gt 0 ]; } || die "CACHEBENCH_RUNS and CACHEBENCH_MB must be positive"

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_qemu_setup

# Loop devices and mounts of the run, undone on any exit.
cleanup() {
	[ -z "${cache_lo:-}" ] || losetup -d "$cache_lo" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the image

# Real files, every Nth of a sorted list of /usr/share and /usr/lib (no
# kernel modules, no names with blanks or quotes), until they add up to
# about 3.3 times CACHEBENCH_MB (as bench/boot-bench.sh picks them). The
# root is kept: the delta rebuilds it.
bb=$(command -v busybox)
image_version=2
rootkey=$(key images/build-test-root.sh bench/cache-bench-init "$rb" "$bb"; echo "mb=$mb v=$image_version")
root=$cache/root
img=$cache/x86_64.img
if ! fresh image "$rootkey" || [ ! -f "$img" ] || [ ! -d "$root" ]; then
	say "building a ~$mb MB client image of real files"
	rm -f "$cache/image.key"
	real_root "$root" "$mb"
	install -m 0755 bench/cache-bench-init "$root/sbin/cbench-init"
	mkdir -p "$root/etc/cbench"
	# The login: three of every four groups of 32 consecutive files.
	awk 'int((NR - 1) / 32) % 4 != 3' "$cache/files" > "$root/etc/cbench/login.list"
	squash_zstd "$root" "$img"
	stamp image "$rootkey"
fi
img_size=$(stat -c %s "$img")
nfiles=$(wc -l < "$cache/files")
nlogin=$(wc -l < "$root/etc/cbench/login.list")
login_bytes=$(sed "s|^|$root|" "$root/etc/cbench/login.list" | xargs stat -c %s | awk '{ s += $1 } END { printf "%.0f\n", s }')
files_bytes=$(sed "s|^|$root|" "$cache/files" | xargs stat -c %s | awk '{ s += $1 } END { printf "%.0f\n", s }')
say "image: $img_size bytes, $nfiles files ($files_bytes bytes), login reads $nlogin ($login_bytes bytes)"

# ---------------------------------------------------------------- LTSP

deb_initrd=/boot/initrd.img-$kver
lt=$cache/ltsp
# ltsp_setup: ltsp.img with ramboot and the shipped ltsp.conf snippet, as
# bench/boot-bench.sh makes it: `make install` into a DESTDIR,
# /etc/ltsp/ltsp.conf and /etc/ltsp/ramboot put in place only while `ltsp
# initrd` runs, whatever was there put back afterwards.
bench_name="cache-bench"
ltsp_setup || die "LTSP setup failed"

# ---------------------------------------------------------------- the delta

# measure_delta: the network bytes of a refresh after a one-package
# rebuild, on the host (sets pkg, delta, pkg_bytes, pkg_xz, delta_line,
# idx2_size). Run again alone with CACHEBENCH_REPORT_ONLY=1
# CACHEBENCH_DELTA=1 (after a change to the chunker: the boots do not
# depend on it).
measure_delta() {
	# The package: CACHEBENCH_PKG, or the installed package with the most bytes
	# among the image's files, up to 3 MB of them.
	local out
	pkg=${CACHEBENCH_PKG:-}
	if [ -z "$pkg" ]; then
		pkg=$(awk -F '\t' 'FILENAME == ARGV[1] { in_img[$0] = 1; next }
			FILENAME == ARGV[2] { if ($2 in in_img) sz[$2] = $1; next }
			FNR == 1 { p = FILENAME; sub(".*/", "", p); sub("\\.list$", "", p); sub(":.*", "", p) }
			($0 in sz) { b[p] += sz[$0] }
			END { for (p in b) if (b[p] <= 3000000 && b[p] > best) { best = b[p]; bp = p }; print bp }' \
			"$cache/files" "$cache/candidates" /var/lib/dpkg/info/*.list 2>/dev/null)
	fi
	delta=- pkg_bytes=- pkg_xz=- delta_line='' idx2_size=- delta_ideal=- delta_floor=- delta_chunks=-
	[ -n "$pkg" ] || return 0
	CACHEDELTA_EMPTY=$cache/cache-empty.img RAMBOOT_BIN=$rbtool \
		bench/cache-delta.sh "$root" "$img" "$pkg" "$cache/delta" > "$cache/delta.vars" 2> "$cache/delta.log" ||
		die "the delta failed: $(tail -n 3 "$cache/delta.log")"
	out=$cache/delta.vars
	dv() { sed -n "s/^$1=//p" "$out"; }
	pkg_bytes=$(dv pkg_bytes)
	pkg_xz=$(dv pkg_xz)
	idx2_size=$(dv index)
	delta=$(dv delta)
	delta_ideal=$(dv ideal)
	delta_floor=$(dv floor)
	delta_chunks=$(dv delta_chunks)
	[ "$(dv delta_how)" = applied ] || die "the refresh did not apply the delta: $(dv delta_how)"
	delta_line="the delta the manifest names (\`ramboot manifest --delta-from\`, zstd level 3 with long-distance matching: $(dv delta_file) bytes), applied to the old slot and verified, + $(dv manifest) of manifest; the index is built from the slot. Without the delta (\`--no-delta\`): $(dv chunks) bytes of chunks + $(dv manifest) of manifest + $idx2_size of index = $delta_chunks, $(dv local) bytes copied from the old slot"
}

# The server disk's reads by owner (bench/vda-split.py on the guest's block
# trace of vda): the bytes of the files a real server would send for
# ramboot (the image, its manifest, its chunk index, any other file beside
# them: a signature, a hash tree) against the ext4 file system's own
# blocks, which an NFS, NBD or HTTP server reads on its side and never
# sends. The columns of results.tsv after net_login:
#   net_trace   bytes of the traced reads of vda (trace_lost: requests the
#               trace buffer lost, 0 when it lost none)
#   net_image, net_manifest, net_index, net_ofiles: each file's bytes
#   net_files   their sum: the image's network bytes
#   net_meta    the ext4 metadata's bytes, by kind: m_sb (the superblocks,
#               group descriptors and their reserved room, the bytes
#               before the superblock), m_bitmaps, m_itable (inode tables),
#               m_journal, m_dirs (directories), m_extents (extent tree
#               blocks), m_free (blocks no file owns: probes of the disk)
#   m_ramboot   of the metadata, the bytes ramboot's processes read (its
#               probes of the disk, the kernel's path lookups for it)
#   m_probes    of the metadata, the bytes udev, blkid and fstype read
#               (their probes of the disk); the rest: the kernel's (the
#               mount, the client's lookups)
split_cols="net_trace trace_lost net_image net_manifest net_index net_ofiles net_files net_meta m_sb m_bitmaps m_itable m_journal m_dirs m_extents m_free m_ramboot m_probes"
# split_of LOG SPLIT: the columns above of one boot's log, the whole split
# in the file SPLIT
split_of() {
	python3 "$top/bench/vda-split.py" "$srv" "$1" > "$2" 2>/dev/null || { : > "$2"; }
	awk -F '\t' -v img=/images/x86_64.img '
		$1 == "total" { v["net_trace"] = $2 }
		$1 == "trace" { lost = ($2 == "-") ? "-" : $3 - $2 }
		$1 == "file" { k = ($2 == img) ? "net_image" : ($2 == img ".manifest") ? "net_manifest" : ($2 == img ".cindex") ? "net_index" : "net_ofiles"
			v[k] += $3; v["net_files"] += $3 }
		$1 == "meta" { v["net_meta"] += $3
			k = "m_sb"
			if ($2 ~ /bitmaps$/) k = "m_bitmaps"
			else if ($2 == "inode tables") k = "m_itable"
			else if ($2 == "journal") k = "m_journal"
			else if ($2 ~ /^directory /) k = "m_dirs"
			else if ($2 ~ /^extent blocks/) k = "m_extents"
			else if ($2 == "free blocks") k = "m_free"
			v[k] += $3; meta[$2] = 1 }
		$1 == "by" && ($2 in meta) { if ($3 == "ramboot") v["m_ramboot"] += $4
			else if ($3 ~ /udev|blkid|fstype/) v["m_probes"] += $4 }
		END {
			# No trace from the guest: nothing measured.
			ok = ("net_trace" in v) && lost != "-"
			n = split(cols, c, " ")
			for (i = 1; i <= n; i++) {
				x = ok ? v[c[i]] + 0 : "-"
				if (ok && c[i] == "trace_lost") x = lost
				printf "%s%s", x, (i < n) ? "\t" : "\n"
			}
		}' cols="$split_cols" "$2"
}

report_only=${CACHEBENCH_REPORT_ONLY:-0}
results=$cache/results.tsv
if [ "$report_only" = 1 ]; then
	# The table again from what the last run left (its rounds, however
	# many it finished, its seed's figures and delta).
	[ -s "$results" ] || die "no results of a last run in $results"
	# shellcheck disable=SC1091 # written by the last run
	. "$cache/run.vars"
	runs=$(awk -F '\t' 'NR > 1 && $1 > n { n = $1 } END { print n + 0 }' "$results")
	if [ "${CACHEBENCH_DELTA:-0}" = 1 ]; then
		[ -f "$cache/cache-empty.img" ] || die "no $cache/cache-empty.img of a last run"
		say "the delta again"
		measure_delta
		elapsed=${elapsed:-}
		declare -p man_size idx_size seed_none seed_cold seed_hot seed_page seed_bytes pkg delta \
			pkg_bytes pkg_xz delta_line idx2_size delta_ideal delta_floor delta_chunks elapsed > "$cache/run.vars"
	fi
else
# ---------------------------------------------------------------- disks

# The server disk: images/x86_64.img, its manifest and chunk index.
srv=$cache/srv.ext4
rm -rf "$cache/srv"
mkdir -p "$cache/srv/images"
cp "$img" "$cache/srv/images/x86_64.img"
"$rbtool" manifest --cindex -o "$cache/srv/images/x86_64.img.manifest" "$cache/srv/images/x86_64.img" \
	> "$cache/manifest.log" 2>&1 || die "ramboot manifest --cindex failed: $(tail -n 3 "$cache/manifest.log")"
man_size=$(stat -c %s "$cache/srv/images/x86_64.img.manifest")
idx_size=$(stat -c %s "$cache/srv/images/x86_64.img.cindex")
mkfs.ext4 -q -F -L ltsp-srv -d "$cache/srv" "$srv" $(( (img_size * 11 / 10) / 1048576 + 32 ))M \
	> "$cache/mkfs.log" 2>&1 || die "mkfs.ext4 -d failed ($cache/mkfs.log)"
# The caches: empty, and holding the image (filled on the host).
csize=$(( 2 * img_size / 1048576 + 48 ))M
rm -f "$cache/cache-empty.img" "$cache/cache-full.img"
truncate -s "$csize" "$cache/cache-empty.img"
cache_do "$cache/cache-empty.img" init > "$cache/cache-init.log" 2>&1 ||
	die "ramboot cache init failed: $(tail -n 3 "$cache/cache-init.log")"
cp --sparse=always "$cache/cache-empty.img" "$cache/cache-full.img"
cache_do "$cache/cache-full.img" refresh --manifest="$cache/srv/images/x86_64.img.manifest" \
	"$cache/srv/images/x86_64.img" > "$cache/cache-fill.log" 2>&1 ||
	die "ramboot cache refresh on the host failed: $(tail -n 3 "$cache/cache-fill.log")"
rm -rf "$cache/srv"

logs=$cache/logs
rm -rf "$logs"
mkdir -p "$logs"

# boot NAME BPS CACHEDISK CMDLINE [OPTIONS]: one boot; the serial log in
# $logs/NAME.log.txt; the cache disk a copy of CACHEDISK
boot() {
	local name=$1 bps=$2 cdisk=$3 args=$4 log=$logs/$1.log
	rm -f "$log" "$log.txt"
	cp --sparse=always "$cdisk" "$cache/cache-run.img"
	# shellcheck disable=SC2086 # $5 is a list of options
	qemu_run "$timeout_s" "$log" "$logs/$name.qemu" -smp 2 -m "$mem" \
		-kernel "$kernel" -initrd "$lt/initrd.combined" \
		-append "console=ttyS0 panic=-1 loglevel=4 root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/cbench-init trace_event=block:block_rq_issue trace_buf_size=8M $args" \
		-drive "file=$srv,if=virtio,format=raw,throttling.bps-total=$bps" \
		-drive "file=$cache/cache-run.img,if=virtio,format=raw" ${5:-}
	echo "qemu exit $?" >> "$logs/$name.qemu"
	tr -d '\r' < "$log" > "$log.txt" 2>/dev/null
	rm -f "$cache/cache-run.img"
}
val() { sed -n "s/^CBENCH $2 //p" "$1" | head -n 1; }
rep() { sed -n "s/^CBENCH report $2=//p" "$1" | head -n 1; }
bps_of() { echo $(($1 * 125000)); }

cargs="ramboot.cache=LABEL=ramboot-cache"
mode_args() {
	case $1 in
	off) echo "ramboot=off" ;;
	cold | hot) echo "ramboot=cache $cargs" ;;
	hot+lazy) echo "ramboot=lazy $cargs" ;;
	ram) echo "ramboot=ram" ;;
	esac
}
mode_disk() { case $1 in hot | hot+lazy) echo "$cache/cache-full.img" ;; *) echo "$cache/cache-empty.img" ;; esac; }

# ---------------------------------------------------------------- the seed's read

seed_none=- seed_cold=- seed_hot=- seed_page=- seed_bytes=-
if [ "$seed_mb" -gt 0 ]; then
	say "the seed's read: $seed_mb MB at 100 Mbit"
	rm -rf "$cache/seed"
	mkdir -p "$cache/seed"
	head -c $((seed_mb * 1000000)) /dev/urandom > "$cache/seed/big.img"
	"$rbtool" manifest --cindex -o "$cache/seed/big.img.manifest" "$cache/seed/big.img" \
		> "$cache/seed-manifest.log" 2>&1 || die "ramboot manifest of the seed's file failed"
	mkfs.ext4 -q -F -L seed -d "$cache/seed" "$cache/seed.ext4" $((seed_mb * 11 / 10 + 32))M \
		> "$cache/seed-mkfs.log" 2>&1 || die "mkfs.ext4 -d of the seed's disk failed"
	rm -rf "$cache/seed"
	rm -f "$cache/seed-cache.img"
	truncate -s $((2 * seed_mb + 64))M "$cache/seed-cache.img"
	cache_do "$cache/seed-cache.img" init > "$cache/seed-cache.log" 2>&1 || die "ramboot cache init (seed) failed"
	boot seed "$(bps_of 100)" "$cache/seed-cache.img" "ramboot=off cbench.seed=1" \
		"-drive file=$cache/seed.ext4,if=virtio,format=raw,readonly=on,throttling.bps-total=$(bps_of 100)"
	lg=$logs/seed.log.txt
	seed_bytes=$(val "$lg" SEED-BYTES)
	seed_none=$(val "$lg" SEED-NONE)
	seed_cold=$(val "$lg" SEED-COLD)
	seed_hot=$(val "$lg" SEED-HOT)
	seed_page=$(val "$lg" SEED-PAGE)
	rm -f "$cache/seed.ext4" "$cache/seed-cache.img"
	[ -n "$seed_hot" ] || say "the seed's boot did not give every figure (log: $lg)"
fi

measure_delta

declare -p man_size idx_size seed_none seed_cold seed_hot seed_page seed_bytes pkg delta pkg_bytes \
	pkg_xz delta_line idx2_size delta_ideal delta_floor delta_chunks > "$cache/run.vars"
start=$(date +%s)
# ---------------------------------------------------------------- the rounds

results=$cache/results.tsv
printf 'round\tlink\tmode\troot\tlogin\tnet\tlocal_read\tlocal_written\tcache\tnet_login\t%s\n' \
	"$(echo "$split_cols" | tr ' ' '\t')" > "$results"
for r in $(seq 1 "$runs"); do
	for l in $links; do
		for m in $(rotated "$r" "$modes"); do
			name="r$r-$l-$m"
			say "round $r/$runs, $l Mbit: $m"
			boot "$name" "$(bps_of "$l")" "$(mode_disk "$m")" "$(mode_args "$m")"
			lg=$logs/$name.log.txt
			if ! grep -q '^CBENCH-DONE' "$lg"; then
				say "  $name did not finish (log: $lg)"
				printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$r" "$l" "$m" \
					"$(echo "$split_cols" | sed 's/[^ ]*/-/g' | tr ' ' '\t')" >> "$results"
				continue
			fi
			c=$(rep "$lg" cache)
			[ -n "$(rep "$lg" cache_error)" ] && c="$c,error"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$l" "$m" \
				"$(val "$lg" ROOT-READY)" "$(val "$lg" LOGIN-READY)" "$(val "$lg" NET-BYTES)" \
				"$(val "$lg" LOCAL-READ)" "$(val "$lg" LOCAL-WRITTEN)" "${c:--}" \
				"$(val "$lg" NET-AT-LOGIN)" "$(split_of "$lg" "$logs/$name.split")" >> "$results"
			tail -n 1 "$results" | sed 's/^/  /' >&2
		done
	done
done

elapsed=$(( $(date +%s) - start ))
echo "elapsed=$elapsed" >> "$cache/run.vars"
fi
# ---------------------------------------------------------------- the table

# cell LINK MODE COLUMN [min|max]: the median (or min, max) over the rounds
cell() {
	awk -F '\t' -v l="$1" -v m="$2" -v c="$3" -v w="${4:-median}" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		!(c in col) { next }
		$2 == l && $3 == m && $(col[c]) != "-" && $(col[c]) != "" { v[n++] = $(col[c]) }
		END {
			if (!n) { print "-"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			if (w == "min") print v[0]; else if (w == "max") print v[n - 1];
			else if (n % 2) print v[(n - 1) / 2]; else print (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$results"
}
# pratio LINK MODE COLUMN: the median over the rounds of MODE / off in the
# same round (boots minutes apart: the host's load drifts less between them)
pratio() {
	awk -F '\t' -v l="$1" -v m="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$2 == l && $(col[c]) != "-" && $(col[c]) != "" { if ($3 == m) a[$1] = $(col[c]); if ($3 == "off") o[$1] = $(col[c]) }
		END {
			for (r in a) if ((r in o) && o[r] + 0 > 0) v[n++] = a[r] / o[r]
			if (!n) { print "-"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			printf "%.2f\n", (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$results"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'; }
fmt_s() { if [ "$1" = - ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%.1f\n", v }'; fi; }
fmt_mb() { if [ "$1" = - ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%.2f MB\n", v / 1e6 }'; fi; }
# spread LINK MODE COLUMN: "median (min-max)"
spread() {
	local md lo hi
	md=$(cell "$1" "$2" "$3")
	lo=$(cell "$1" "$2" "$3" min)
	hi=$(cell "$1" "$2" "$3" max)
	[ "$md" = - ] && { echo -; return; }
	echo "$(fmt_s "$md") ($(fmt_s "$lo")-$(fmt_s "$hi"))"
}
yn() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "not measured"; else if (a + 0 <= b + 0) print "met"; else print "not met" }'; }

if [ -z "${elapsed:-}" ]; then
	# A run cut short: from the start of the rounds to its last boot.
	elapsed=$(( $(stat -c %Y "$results") - $(stat -c %Y "$cache/run.vars") ))
fi
table=$cache/table.md
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench-cache\` (bench/cache-bench.sh)."
	echo
	echo "- Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs; QEMU $("$qemu_bin" --version | head -n 1 | sed 's/.*version //'), accelerator $qemu_accel, guest $mem MiB, 2 vCPUs, Debian kernel $kver"
	echo "- Boot: the real LTSP initrd (ltsp.img + Debian's initrd.img); the server: an ext4 virtio disk with images/x86_64.img, its manifest ($man_size bytes) and chunk index ($idx_size bytes), throttled to the link (throttling.bps-total: 100 Mbit = 12.5 MB/s, 20 Mbit = 2.5 MB/s); the cache: a second virtio disk, not throttled, made by \`ramboot cache init\`, a fresh copy for each boot"
	echo "- Image: $(awk -v v="$img_size" 'BEGIN { printf "%.1f MB", v / 1e6 }') zstd squashfs of $nfiles real files ($(fmt_mb "$files_bytes")) from /usr/share and /usr/lib; the login reads a fixed three quarters of them ($nlogin files, $(fmt_mb "$login_bytes"); \`off\` reads $(fmt_mb "$(cell 20 off net_login)") from the server by login-ready) (CACHEBENCH_MB=$mb)"
	echo "- Modes interleaved in each round; $runs round(s); each time cell: the median (min-max); bytes: the median; $elapsed s of boots"
	if [ "$runs" -lt 3 ]; then
		echo "- Fewer rounds than 3 (the run was cut short): a cell is one boot, or the mean of two, not a median"
	fi
	echo "- The host's load average when the table was made: $(cut -d' ' -f1-3 /proc/loadavg) (a machine shared with other work: TCG boot times vary with it)"
	echo "- Modes: off \`ramboot=off\`; cold \`ramboot=cache\` on an empty cache (the network boot, the refresh behind it); hot \`ramboot=cache\` on a cache that holds the image; hot+lazy \`ramboot=lazy\` with that cache; ram \`ramboot=ram\`; the cache named by \`ramboot.cache=LABEL=ramboot-cache\`"
	echo "- Times: seconds since the guest kernel started; root-ready: the client's init runs; login-ready: the login is done. network: bytes read from the server disk (/sys/block/vda/stat, ext4 metadata and the manifest included) at the end of the boot, after a refresh behind it ended; network at login: the same at login-ready; local: bytes read from / written to the cache disk (vdb); cache: the report's \`cache=\` (error: \`cache_error=\` set)"
	echo
	echo "| link | mode | root-ready s | login-ready s | network at login | network | local read | local written | cache | root-ready / off | login-ready / off | login-ready / off, same round |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"
	for l in $links; do
		off_root=$(cell "$l" off root)
		off_login=$(cell "$l" off login)
		for m in $modes; do
			rr=$(cell "$l" "$m" root)
			lr=$(cell "$l" "$m" login)
			cs=$(awk -F '\t' -v l="$l" -v m="$m" '$2 == l && $3 == m { print $9 }' "$results" | sort -u | paste -sd/)
			echo "| $l Mbit | $m | $(spread "$l" "$m" root) | $(spread "$l" "$m" login) | $(fmt_mb "$(cell "$l" "$m" net_login)") | $(fmt_mb "$(cell "$l" "$m" net)") | $(fmt_mb "$(cell "$l" "$m" local_read)") | $(fmt_mb "$(cell "$l" "$m" local_written)") | ${cs:--} | $(ratio "$rr" "$off_root") | $(ratio "$lr" "$off_login") | $(pratio "$l" "$m" login) |"
		done
	done
	echo
	echo "The server disk's reads by owner: every request the guest's kernel issued to vda (its block trace, \`trace_event=block:block_rq_issue\`), put on the blocks it read of srv.ext4 and each block on its owner (bench/vda-split.py: debugfs, dumpe2fs). The files are what a real LTSP server would send over the network for ramboot (NFS, NBD, HTTP): the image's network bytes. The ext4 metadata is the emulated server's own: read by the client's kernel (the mount, the path lookups) and by the probes of the disk (udev's blkid, LTSP's fstype, ramboot's look for the cache's label); over NFS or HTTP none of it crosses the network, over NBD the probes of the NBD device would. In bytes, the median over the rounds:"
	echo
	echo "| link | mode | server disk (vda stat) | traced | image | manifest | index | other files | **network bytes of the image** (the files) | **ext4 metadata** | superblocks, descriptors | bitmaps | inode tables | journal | directories | extent blocks | blocks of no file | metadata read by ramboot | by udev, blkid, fstype |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	lost=0
	for l in $links; do
		for m in $modes; do
			row="| $l Mbit | $m | $(cell "$l" "$m" net)"
			for c in net_trace net_image net_manifest net_index net_ofiles net_files net_meta m_sb m_bitmaps m_itable m_journal m_dirs m_extents m_free m_ramboot m_probes; do
				v=$(cell "$l" "$m" "$c")
				case $c in net_files | net_meta) row="$row | **${v%.*}**" ;; *) row="$row | ${v%.*}" ;; esac
			done
			echo "$row |"
			[ "$(cell "$l" "$m" trace_lost max)" = 0 ] || [ "$(cell "$l" "$m" trace_lost max)" = - ] || lost=1
		done
	done
	if [ "$lost" = 1 ]; then
		echo
		echo "The trace buffer lost requests in some boot (trace_lost in results.tsv): its split is short of those."
	fi
	echo
	echo "The seed's four figures: a read of $(fmt_mb "$seed_bytes") (CACHEBENCH_SEED_MB=$seed_mb, random bytes, a raw file on a third disk throttled to 100 Mbit), in seconds:"
	echo
	echo "| none (the file over the link) | cold (\`ramboot cache refresh\` of it: read, write, read back) | hot (the slot from the cache disk) | page cache (the slot again) |"
	echo "|---:|---:|---:|---:|"
	echo "| $seed_none | ${seed_cold%% *} | $seed_hot | $seed_page |"
	echo
	if [ "$delta" != - ]; then
		echo "One-package rebuild: package \`$pkg\`, $(fmt_mb "$pkg_bytes") of its files in the image, each changed in every 4 KiB; its files compressed (tar | xz -6): $pkg_xz bytes. The refresh from the old image's cache (\`ramboot cache refresh\`, on the host): $delta_line. With the delta, $delta bytes from the server in all (for scale, \`zstd -19 --patch-from\` of the two images: $delta_ideal bytes)."
	else
		echo "One-package rebuild: not measured (no package found; CACHEBENCH_PKG=)."
	fi
	echo
	echo "Targets (ratios to \`off\` in the same run):"
	echo
	echo "| target | measured | met? |"
	echo "|---|---|---|"
	# The ratios of the targets: per round, then the median (see pratio).
	cold_x=$(pratio 20 cold login)
	hot_x=$(pratio 20 hot login)
	hot_net=$(cell 20 hot net)
	echo "| cold login-ready <= 1.05x off (20 Mbit, same round) | $cold_x | $(yn "$cold_x" 1.05) |"
	echo "| cold login-ready <= 1.05x off (100 Mbit, same round) | $(pratio 100 cold login) | $(yn "$(pratio 100 cold login)" 1.05) |"
	echo "| hot login-ready <= 0.7x off (20 Mbit, same round) | $hot_x | $(yn "$hot_x" 0.7) |"
	hot_lim=$((man_size + idx_size + 1048576))
	hot_files=$(cell 20 hot net_files)
	echo "| hot network bytes <= manifest + index + 1 MiB ($hot_lim): the bytes of the server's files (image, manifest, index, any other) read from the server disk, by its block trace (20 Mbit) | ${hot_files%.*} (the server disk: ${hot_net%.*}, of which ext4 metadata $(cell 20 hot net_meta | sed 's/\..*//')) | $(yn "$hot_files" "$hot_lim") |"
	if [ "$delta" != - ]; then
		dlim=$((2 * pkg_xz + idx2_size))
		echo "| delta network bytes <= 2 x package ($pkg_xz) + index ($idx2_size) = $dlim | $delta | $(yn "$delta" "$dlim") |"
		[ "${delta_chunks:--}" = - ] ||
			echo "| (without the delta, \`--no-delta\`: the changed chunks, the manifest and the index) | $delta_chunks | $(yn "$delta_chunks" "$dlim") |"
		[ "${delta_floor:--}" = - ] ||
			echo "| (the floor of a refresh by whole squashfs blocks: the new image's blocks that the old one does not hold, bench/sqfs-blocks.py, plus the index) | $delta_floor + $idx2_size = $((delta_floor + idx2_size)) | $(yn "$((delta_floor + idx2_size))" "$dlim") |"
		[ "${delta_ideal:--}" = - ] ||
			echo "| (for scale: zstd -19 --patch-from of the two images) | $delta_ideal | $(yn "$delta_ideal" "$dlim") |"
	fi
	echo
	echo "    cache: cold $cold_x x off, hot $hot_x x off (20 Mbit), hot network ${hot_files%.*} bytes of the image (${hot_net%.*} of the server disk), delta $delta bytes for a $pkg_xz-byte package"
} > "$table"
cat "$table"

# Into the doc, between the markers; the rest of the file is kept.
doc_table cache-bench "The local-disk cache (\`make bench-cache\`)" "$table" "$doc"
say "table written to $doc"
echo "cache: cold $cold_x x off, hot $hot_x x off (20 Mbit), hot network ${hot_files%.*} bytes of the image (${hot_net%.*} of the server disk), delta $delta bytes for a $pkg_xz-byte package"
