#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/layout-bench.sh - an image laid out in boot order against the same
# image in mksquashfs's directory order (make bench-layout). Needs root:
# network namespaces, veth pairs, tc, nbd-server, QEMU.
#
# The image: the client root of make bench-boot (bench/boot-bench-init as
# its init, real files, the login's list) as a squashfs (zstd), the
# "unsorted" image. A first boot of it records a profile (ramboot=off
# ramboot.profile=record bbench.record=1: stopped at login-ready);
# `ramboot profile sort` turns it into a mksquashfs sort file, and the
# same root built with `-sort FILE` is the "sorted" image. A second
# recording boot, of the sorted image, gives its profile: `ramboot profile
# extents IMAGE PROFILE` of each image and its own profile counts the
# distinct extents the boot read.
#
# The link: a bridge in a namespace of its own, nbd-server in a server
# namespace (10.80.0.1) exporting two ext4 disks, each holding one of the
# images as images/x86_64.img, and QEMU in the client's namespace
# (10.80.0.10) with its user network; the client's port of the bridge is
# shaped by tc tbf at each rate. The real LTSP initrd (ltsp.img, then
# Debian's initrd.img) boots root=/dev/nbd0 with ltsp.image=.
#
# Modes, LAYOUTBENCH_RUNS rounds per rate, interleaved (each round starts
# with the next mode):
#   default unsorted / sorted   ramboot=off: LTSP mounts the image over NBD
#   lazy unsorted / sorted      ramboot=lazy (no profile beside the image)
# Columns: login-ready (bench/boot-bench-init's marker; median, min-max),
# the bytes the server's veth sent during the boot (with ramboot=lazy the
# whole image comes too), the distinct extents read (the image's
# recording boot).
#
# The delta: one package-like directory of the root changed (a byte in
# every 4 KiB of each of its files), both images rebuilt, the unsorted one
# without a sort file, the sorted one with the same sort file as before;
# `ramboot manifest --delta-from=OLD` (what `ramboot publish --delta`
# writes) gives the delta of each, and the manifests' 4 MiB chunks that
# changed.
#
# The bench ends with one line:
#   layout: default S x unsorted (RATE), lazy L x unsorted, delta D x unsorted
# S: the sorted image's default boot's login-ready against the unsorted
# one's at 20mbit (at the last rate when 20mbit is not among them); L the
# same for ramboot=lazy, the worst over the rates; D the delta's size.
#
#   LAYOUTBENCH_MB=64        image size (MB, about), cached in build/bench-layout
#   LAYOUTBENCH_RATES="100mbit 20mbit"   the client link's rates (tc)
#   LAYOUTBENCH_RUNS=3       rounds per rate
#   LAYOUTBENCH_TIMEOUT=s    per boot (default 900)
#   LAYOUTBENCH_MEM=MiB      guest memory (default 1024)
#   LAYOUTBENCH_DOC=1        also write the section into docs/benchmarks.md
#                            (=FILE: into FILE)
#   RAMBOOT_BIN=./ramboot    the host binary (profile sort, extents, manifest)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   (images/qemu-accel.sh)
#
# Every namespace, process and temporary file goes in a trap; the images
# stay in build/bench-layout.
set -u
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cache=$top/build/bench-layout
mb=${LAYOUTBENCH_MB:-64}
rates=${LAYOUTBENCH_RATES:-100mbit 20mbit}
runs=${LAYOUTBENCH_RUNS:-3}
timeout_s=${LAYOUTBENCH_TIMEOUT:-900}
mem=${LAYOUTBENCH_MEM:-1024}

say() { echo "layout-bench: $*" >&2; }
die() { say "$*"; exit 1; }

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_start LAYOUTBENCH "network namespaces, veth pairs, tc, nbd-server" \
	ip tc nbd-server ltsp mksquashfs busybox mkfs.ext4 cpio lsinitramfs python3
for r in $rates; do
	case $r in [0-9]*bit) ;; *) die "LAYOUTBENCH_RATES: $r is not a tc rate (100mbit, 20mbit)" ;; esac
done
"$RAMBOOT_BIN" profile sort 2>&1 | grep -q 'not in this build' &&
	die "$RAMBOOT_BIN has no profile sort (the static build): use the host one"

mkdir -p "$cache"

# ---------------------------------------------------------------- the image

bb=$(command -v busybox)
rootkey=$(key images/build-test-root.sh bench/boot-bench-init "$rb" "$bb"; echo "mb=$mb v=1")
root=$cache/root
unsorted=$cache/unsorted.img
if ! fresh image "$rootkey" || [ ! -f "$unsorted" ] || [ ! -d "$root" ]; then
	say "building a ~$mb MB client image of real files (cached in $cache)"
	rm -f "$cache/image.key" "$cache/sorted.key"
	bbench_root "$root" "$mb"
	squash_zstd "$root" "$unsorted"
	stamp image "$rootkey"
fi
img_size=$(stat -c %s "$unsorted")
say "image: $img_size bytes ($(wc -l <"$cache/files") files)"

# sorted SORT IMG: the root built as squash_zstd does, with -sort SORT
sorted_build() {
	mksquashfs "$1" "$3.tmp" -comp zstd -noappend -quiet -all-root -no-progress -sort "$2" \
		>"$cache/mksquashfs-sort.log" 2>&1 || die "mksquashfs -sort failed ($cache/mksquashfs-sort.log)"
	mv "$3.tmp" "$3"
}

# ---------------------------------------------------------------- the link

NS=rblay$$
S=$NS-s C=$NS-c BR=$NS-br
AS=10.80.0.1 AC=10.80.0.10
nets=()
tmp=
trap netns_cleanup EXIT
trap 'exit 130' INT TERM
tmp=$(mktemp -d /dev/shm/layout-bench.XXXXXX)

netns_bridge "$BR" || die "ip netns add failed"
netns_port "$BR" "$S" "$AS/24" || die "the server's link cannot be made"
netns_port "$BR" "$C" "$AC/24" || die "the client's link cannot be made"

# shape RATE: the client's port of the bridge (toward the client) at
# RATE, tbf's burst 10 ms of it (at least 128 KiB), 50 ms of queue
shape() {
	local burst
	burst=$(awk -v r="$1" 'BEGIN { n = r + 0; u = substr(r, length(n "") + 1)
		m = (u == "gbit") ? 1e9 : (u == "mbit") ? 1e6 : (u == "kbit") ? 1e3 : 1
		b = int(n * m / 800); print (b < 131072) ? 131072 : b }')
	tc -n "$BR" qdisc replace dev "$C" root tbf rate "$1" burst "$burst" latency 50ms ||
		die "tc: cannot shape the client's link at $1"
}
server_bytes() { ip netns exec "$S" cat /sys/class/net/eth0/statistics/tx_bytes; }

# ---------------------------------------------------------------- QEMU

bench_qemu_setup
lt=$cache/ltsp
bench_name=layout-bench
ltsp_setup || die "the LTSP initrd could not be built"
for m in nbd virtio_net; do
	lsinitramfs "$deb_initrd" 2>/dev/null | grep -q "/$m\.ko" || die "$deb_initrd has no $m module"
done
# a real NIC: no zz-net.cpio, LTSP reads the identity from eth0
cat "$lt/tftp/ltsp/ltsp.img" "$deb_initrd" >"$tmp/initrd.net"
qemu_real=$(command -v "$qemu_bin")
printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$C" "$qemu_real" >"$tmp/qemu-in-ns"
chmod 0755 "$tmp/qemu-in-ns"
qemu_bin=$tmp/qemu-in-ns
logs=$cache/logs
rm -rf "$logs"
mkdir -p "$logs"

# disk NAME IMG: $cache/NAME.ext4, an ext4 disk holding IMG as
# images/x86_64.img
disk() {
	rm -rf "$tmp/srv"
	mkdir -p "$tmp/srv/images"
	cp "$2" "$tmp/srv/images/x86_64.img"
	mkfs.ext4 -q -F -L ltsp-srv -d "$tmp/srv" "$cache/$1.ext4" \
		"$(( ($(stat -c %s "$2") * 11 / 10) / 1048576 + 32 ))M" >"$cache/mkfs.log" 2>&1 ||
		die "mkfs.ext4 -d failed ($cache/mkfs.log)"
	rm -rf "$tmp/srv"
}

# nbd_start: nbd-server in the server's namespace, exporting unsorted and
# sorted (the disks there are); restarted when a disk changes
nbd_start() {
	[ ! -s "$tmp/nbd.pid" ] || kill "$(cat "$tmp/nbd.pid")" 2>/dev/null
	sleep 1
	{
		printf '[generic]\nuser = root\ngroup = root\nlistenaddr = %s\n' "$AS"
		for e in unsorted sorted; do
			[ -f "$cache/$e.ext4" ] && printf '[%s]\nexportname = %s\nreadonly = true\n' "$e" "$cache/$e.ext4"
		done
	} >"$tmp/nbd.conf"
	rm -f "$tmp/nbd.pid"
	ip netns exec "$S" nbd-server -C "$tmp/nbd.conf" -p "$tmp/nbd.pid" 2>"$tmp/nbd.log" ||
		die "nbd-server failed: $(tail -n 2 "$tmp/nbd.log")"
	sleep 2
}

# qboot NAME EXPORT ARGS: one boot of EXPORT's image; $lg its console,
# $B the bytes the server sent
qboot() {
	local b0 rc
	b0=$(server_bytes)
	qemu_run "$timeout_s" "$logs/$1.log" "$logs/$1.qemu" -smp 2 -m "$mem" \
		-kernel "$kernel" -initrd "$tmp/initrd.net" \
		-append "console=ttyS0 panic=-1 loglevel=4 ip=dhcp root=/dev/nbd0 nbdroot=$AS,$2,nbd0 ro ltsp.image=images/x86_64.img init=/sbin/bbench-init $3" \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0
	rc=$?
	sleep 1
	tr -d '\r' <"$logs/$1.log" >"$logs/$1.log.txt" 2>/dev/null
	lg=$logs/$1.log.txt
	B=$(( $(server_bytes) - b0 ))
	grep -q '^BBENCH-DONE' "$lg" || { say "  $1 did not finish (qemu exit $rc; log: $lg)"; return 1; }
}
val() { sed -n "s/^BBENCH $2 //p" "$1" | head -n 1; }

# record EXPORT IMG: a recording boot of IMG at the first rate; its
# profile into IMG.profile
record() {
	say "recording a boot profile of the $1 image (ramboot=off ramboot.profile=record)"
	qboot "record-$1" "$1" "ramboot=off ramboot.profile=record bbench.record=1" ||
		die "the recording boot failed"
	sed -n '/^BBENCH-PROFILE-BEGIN$/,/^BBENCH-PROFILE-END$/p' "$lg" | sed '1d;$d' |
		base64 -d >"$2.profile" 2>/dev/null
	[ -s "$2.profile" ] || die "no profile came back (log: $lg)"
	"$RAMBOOT_BIN" profile extents "$2" "$2.profile" >"$2.extents" ||
		die "ramboot profile extents failed on the $1 image"
}

disk unsorted "$unsorted"
rm -f "$cache/sorted.ext4"
nbd_start
shape "${rates%% *}"
record unsorted "$unsorted"
"$RAMBOOT_BIN" profile sort "$unsorted" "$unsorted.profile" -o "$cache/layout.sort" ||
	die "ramboot profile sort failed"
say "sort file: $(wc -l <"$cache/layout.sort") files"
sorted=$cache/sorted.img
sorted_build "$root" "$cache/layout.sort" "$sorted"
disk sorted "$sorted"
nbd_start
record sorted "$sorted"
ext_u=$(sed -n 's/^\([0-9]*\) distinct extents read.*/\1/p' "$unsorted.extents")
ext_s=$(sed -n 's/^\([0-9]*\) distinct extents read.*/\1/p' "$sorted.extents")

modes="default-unsorted default-sorted lazy-unsorted lazy-sorted"
results=$cache/results.tsv
printf 'rate\tround\tmode\tlogin\tbytes\n' >"$results"
for rate in $rates; do
	shape "$rate"
	for r in $(seq 1 "$runs"); do
		for m in $(rotated "$r" "$modes"); do
			a=ramboot=off
			[ "${m%-*}" = lazy ] && a=ramboot=lazy
			say "boot $r/$runs, $rate: $m"
			qboot "r$r-$rate-$m" "${m#*-}" "$a" || continue
			printf '%s\t%s\t%s\t%s\t%s\n' "$rate" "$r" "$m" "$(val "$lg" LOGIN-READY)" "$B" >>"$results"
			tail -n 1 "$results" | sed 's/^/  /' >&2
		done
	done
done

# med RATE MODE COLUMN: "median min max n" of the column over the rounds
med() {
	awk -F '\t' -v r="$1" -v m="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$1 == r && $3 == m && $k != "" { v[n++] = $k }
		END {
			if (n == 0) { print "- - - 0"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			md = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
			print md, v[0], v[n - 1], n }' "$results"
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

# ---------------------------------------------------------------- the delta

# The directory of the login list's files with the most of them, as a
# package is: a byte changed in every 4 KiB of each of its files
say "the delta of a one-package rebuild"
dl=$tmp/delta
mkdir -p "$dl/u1" "$dl/u2" "$dl/s1" "$dl/s2"
pkg=$(sed 's|/[^/]*$||' "$cache/files" | sort | uniq -c | sort -k1,1nr -k2 | awk 'NR == 1 { print $2 }')
cp -a "$root" "$dl/root"
python3 - "$dl/root" "$pkg" <<'PY' || die "changing $pkg failed"
import os, sys
d = sys.argv[1] + sys.argv[2]
for n in sorted(os.listdir(d)):
    p = os.path.join(d, n)
    if not os.path.isfile(p) or os.path.islink(p):
        continue
    with open(p, "r+b") as f:
        b = bytearray(f.read())
        for i in range(0, len(b), 4096):
            b[i] = (b[i] + 1) & 0xff
        f.seek(0)
        f.write(b)
PY
pkg_bytes=$(find "$dl/root$pkg" -maxdepth 1 -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
cp "$unsorted" "$dl/u1/x86_64.img"
cp "$sorted" "$dl/s1/x86_64.img"
squash_zstd "$dl/root" "$dl/u2/x86_64.img"
sorted_build "$dl/root" "$cache/layout.sort" "$dl/s2/x86_64.img"
rm -rf "$dl/root"
# delta OLD NEW: "DELTA-BYTES CHANGED-CHUNK-BYTES" of NEW against OLD
delta() {
	"$RAMBOOT_BIN" manifest --delta-from="$1" -o "$2.manifest" "$2" >"$dl/manifest.log" 2>&1 ||
		die "ramboot manifest --delta-from failed: $(tail -n 2 "$dl/manifest.log")"
	"$RAMBOOT_BIN" manifest -o "$1.manifest" "$1" >"$dl/manifest.log" 2>&1 ||
		die "ramboot manifest failed: $(tail -n 2 "$dl/manifest.log")"
	echo "$(stat -c %s "$2.delta" 2>/dev/null || echo 0)" "$(awk '
		FNR == 1 { f++ } /^chunk-size / { cs = $2 } /^size / && f == 2 { sz = $2 }
		/^chunk / { if (f == 1) old[$3] = 1; else if (!($3 in old)) { n++; last = ($2 + 1) * cs > sz } }
		END { b = n * cs; if (last) b -= (int((sz + cs - 1) / cs) * cs - sz); print b + 0 }' "$1.manifest" "$2.manifest")"
}
read -r du cu <<<"$(delta "$dl/u1/x86_64.img" "$dl/u2/x86_64.img")"
read -r ds cs <<<"$(delta "$dl/s1/x86_64.img" "$dl/s2/x86_64.img")"

# ---------------------------------------------------------------- the summary

s_rate=
for r in $rates; do s_rate=$r; done
case " $rates " in *" 20mbit "*) s_rate=20mbit ;; esac
read -r a _ _ _ <<<"$(med "$s_rate" default-sorted login)"
read -r b _ _ _ <<<"$(med "$s_rate" default-unsorted login)"
S=$(ratio "$a" "$b")
L=n/a
for r in $rates; do
	read -r a _ _ _ <<<"$(med "$r" lazy-sorted login)"
	read -r b _ _ _ <<<"$(med "$r" lazy-unsorted login)"
	x=$(ratio "$a" "$b")
	[ "$x" = n/a ] || L=$(awk -v c="$L" -v x="$x" 'BEGIN { print (c == "n/a" || x + 0 > c + 0) ? x : c }')
done
D=$(ratio "$ds" "$du")

section=$tmp/section.md
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench-layout\` (bench/layout-bench.sh)."
	echo
	echo "- Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(nproc) CPUs, Linux $(uname -r); QEMU $("$qemu_real" --version | head -n 1 | sed 's/.*version //')," \
		"accelerator $qemu_accel, guest $mem MiB, 2 vCPUs, Debian kernel $kver"
	echo "- Image: $(awk -v v="$img_size" 'BEGIN { printf "%.1f MB", v / 1e6 }') squashfs (zstd) of" \
		"$(wc -l <"$cache/files") real files; sorted by a profile recorded on it at login-ready" \
		"($(wc -l <"$cache/layout.sort") files in the sort file)"
	echo "- Boot: the real LTSP initrd (ltsp.img + Debian's initrd.img), root=/dev/nbd0 from" \
		"nbd-server $(dpkg-query -W -f '${Version}' nbd-server 2>/dev/null) in a namespace;" \
		"the client's link shaped by tc tbf at ${rates// /, then }; $runs round(s) per rate," \
		"the modes interleaved"
	echo "- login-ready: seconds since the guest kernel started until bench/boot-bench-init has" \
		"read a fixed 25 % of the image's files; server MB: what the server's veth sent during" \
		"the boot (with ramboot=lazy, the whole image); extents: distinct extents read by the" \
		"recording boot of that image (\`ramboot profile extents\`)"
	echo
	echo "| link | image | mode | login-ready s, median (min-max) | server MB | extents read | boots |"
	echo "|---|---|---|---:|---:|---:|---:|"
	for rate in $rates; do
		for m in $modes; do
			read -r lm ll lh n <<<"$(med "$rate" "$m" login)"
			read -r bm _ _ _ <<<"$(med "$rate" "$m" bytes)"
			e=$ext_u
			[ "${m#*-}" = sorted ] && e=$ext_s
			if [ "$n" = 0 ]; then
				echo "| $rate | ${m#*-} | ${m%-*} | failed | | $e | 0 of $runs |"
				continue
			fi
			awk -v r="$rate" -v i="${m#*-}" -v m="${m%-*}" -v a="$lm" -v al="$ll" -v ah="$lh" \
				-v b="$bm" -v e="$e" -v n="$n" -v runs="$runs" '
				BEGIN { printf "| %s | %s | %s | %.1f (%.1f-%.1f) | %.1f | %s | %d of %d |\n",
					r, i, m, a, al, ah, b / 1e6, e, n, runs }'
		done
	done
	echo
	echo "One-package rebuild: the directory \`$pkg\` ($pkg_bytes bytes of files, a byte changed" \
		"in every 4 KiB), both images rebuilt (the sorted one with the same sort file)."
	echo
	echo "| image | delta (\`ramboot manifest --delta-from\`) | changed 4 MiB chunks, bytes |"
	echo "|---|---:|---:|"
	echo "| unsorted | $du | $cu |"
	echo "| sorted | $ds | $cs |"
} >"$section"
cat "$section"
if [ -n "$doc" ]; then
	doc_table layout-bench "Boot-order layout (\`make bench-layout\`)" "$section" "$doc"
	say "updated $doc"
fi
echo "layout: default $S x unsorted ($(echo "$s_rate" | sed 's/mbit$/ Mbit/; s/gbit$/ Gbit/')), lazy $L x unsorted, delta $D x unsorted"
