#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/boot-bench.sh - how long a client takes to boot and log in with each
# ramboot mode, over a 100 Mbit and a 20 Mbit link, in QEMU.
#
# The client image is a squashfs (zstd) of real files from /usr/share and
# /usr/lib; its init (bench/boot-bench-init) prints the time the root was
# reached, reads a fixed quarter of the image's files (the "login"), prints
# the time again, waits for a lazy copy to reach RAM, and prints the bytes
# read from the server disk and MemAvailable.
#
# With Debian's ltsp installed, the client boots the real LTSP initrd
# (ltsp.img + Debian's initrd.img, as tests/boot/run.sh's ltsp case): the
# "server" is an ext4 virtio disk holding images/x86_64.img, throttled with
# QEMU's throttling.bps-total to the link rate. Otherwise it boots the
# project's initramfs (images/build-initramfs.sh) with the image file on a
# throttled 9p share, loop-mounted read-only (so lazy can switch it).
#
# Modes are interleaved in each round; each cell is the median of the rounds.
#
#   BOOTBENCH_RUNS=n       rounds (default 3)
#   BOOTBENCH_LINKS="100 20"   link rates in Mbit/s
#   BOOTBENCH_MODES="..."  off ram lazy prefetch prefetch+profile
#                          lazy+profile ltsp-to-ram (the last: LTSP's
#                          IMAGE_TO_RAM=1, only on the LTSP path)
#   BOOTBENCH_MB=n         size of the client image, MB (default 80)
#   BOOTBENCH_TIMEOUT=s    per boot (default 600)
#   BOOTBENCH_MEM=MiB      guest memory (default 1024)
#   BOOTBENCH_LTSP=0       use the project's initramfs even where ltsp is installed
#   BOOTBENCH_DOC=file     the markdown to update (default docs/benchmarks.md)
#   BOOTBENCH_SVG=file     the plot (default docs/boot-bench.svg)
#   BOOTBENCH_APPEND=1     BOOTBENCH_RUNS more rounds added to those of
#                          the last run; the table covers them all
#   BOOTBENCH_REPORT_ONLY=1  no boots: the table and the plot again from
#                          the results of the last run (build/bench-boot)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   (images/qemu-accel.sh)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cache=${BOOTBENCH_CACHE:-$top/build/bench-boot}
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
runs=${BOOTBENCH_RUNS:-3}
links=${BOOTBENCH_LINKS:-100 20}
modes=${BOOTBENCH_MODES:-off ram lazy prefetch prefetch+profile lazy+profile ltsp-to-ram}
mb=${BOOTBENCH_MB:-80}
timeout_s=${BOOTBENCH_TIMEOUT:-600}
mem=${BOOTBENCH_MEM:-1024}
doc=${BOOTBENCH_DOC:-$top/docs/benchmarks.md}
svg=${BOOTBENCH_SVG:-$top/docs/boot-bench.svg}

say() { echo "boot-bench: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (LTSP setup, 9p share)"
[ -x "$rb" ] || die "$rb missing (make static)"
for t in mksquashfs mkfs.ext4 cpio base64 busybox; do
	command -v "$t" >/dev/null || die "$t not installed"
done
case $runs in '' | *[!0-9]* | 0) die "BOOTBENCH_RUNS=$runs: expected a count" ;; esac
case $mb in '' | *[!0-9]* | 0) die "BOOTBENCH_MB=$mb: expected MB" ;; esac

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_qemu_setup

# ---------------------------------------------------------------- the image

# Real files, every Nth of a sorted list of /usr/share and /usr/lib (no
# kernel modules, no names with blanks or quotes), until the files add up
# to about 3.3 times BOOTBENCH_MB (a zstd squashfs of such files takes
# roughly 30 % of their size). Chosen once per size and cached: the image does not change
# between runs.
bb=$(command -v busybox)
# Bump image_version when the way the image is made changes.
image_version=2
rootkey=$(key images/build-test-root.sh bench/boot-bench-init "$rb" "$bb"; echo "mb=$mb v=$image_version")
img=$cache/x86_64.img
if ! fresh image "$rootkey" || [ ! -f "$img" ]; then
	say "building a ~$mb MB client image of real files"
	rm -f "$cache/image.key"
	root=$cache/root
	bbench_root "$root" "$mb"
	squash_zstd "$root" "$img"
	cp "$root/etc/bbench/login.list" "$cache/login.list"
	rm -rf "$root"
	rm -f "$cache/profile" "$cache/profile.key"
	stamp image "$rootkey"
fi
img_size=$(stat -c %s "$img")
nfiles=$(wc -l < "$cache/files")
nlogin=$(wc -l < "$cache/login.list")
say "image: $img_size bytes, $nfiles files, login reads $nlogin"

# ---------------------------------------------------------------- boot paths

use_ltsp=0
if [ "${BOOTBENCH_LTSP:-1}" != 0 ] && command -v ltsp >/dev/null &&
	dpkg-query -W -f='${db:Status-Status}\n' ltsp 2>/dev/null | grep -qx installed; then
	use_ltsp=1
fi

deb_initrd=/boot/initrd.img-$kver
lt=$cache/ltsp

# ltsp_setup: ltsp.img with ramboot and the shipped ltsp.conf snippet, as
# tests/boot/run.sh's ltsp case makes it: `make install` into a DESTDIR,
# /etc/ltsp/ltsp.conf and /etc/ltsp/ramboot put in place only while `ltsp
# initrd` runs, whatever was there put back afterwards.
bench_name="boot-bench"

initrd=$cache/initramfs.cpio
itools_setup() {
	local k
	k=$(key images/build-initramfs.sh images/initramfs-init "$rb" "$bb"; echo "$kver")
	fresh initramfs "$k" && [ -f "$initrd" ] && return 0
	images/build-initramfs.sh "$initrd" "$kver" "$rb" > "$cache/build-initramfs.log" 2>&1 ||
		{ say "initramfs build failed: $(tail -n 3 "$cache/build-initramfs.log")"; return 1; }
	stamp initramfs "$k"
}

if [ "$use_ltsp" = 1 ]; then
	if ltsp_setup; then
		path="real LTSP 23.02 initrd (ltsp.img + Debian's initrd.img), image on an ext4 virtio disk"
	else
		say "LTSP setup failed: using the project's initramfs"
		use_ltsp=0
	fi
fi
if [ "$use_ltsp" = 0 ]; then
	itools_setup || exit 1
	path="the project's initramfs (images/initramfs-init), image file on a throttled 9p share, loop-mounted"
	modes=$(echo "$modes" | tr ' ' '\n' | grep -vx 'ltsp-to-ram' | tr '\n' ' ')
fi

# The "server": a directory with images/x86_64.img, and a second one that
# also holds images/x86_64.img.profile (for the +profile modes). On the
# LTSP path each becomes an ext4 disk image.
srv_make() { # NAME WITH-PROFILE
	local d=$cache/srv-$1
	rm -rf "$d"
	mkdir -p "$d/images"
	cp "$img" "$d/images/x86_64.img"
	[ "$2" = 1 ] && cp "$cache/profile" "$d/images/x86_64.img.profile"
	if [ "$use_ltsp" = 1 ]; then
		local sz=$(( (img_size * 11 / 10) / 1048576 + 32 ))
		mkfs.ext4 -q -F -L ltsp-srv -d "$d" "$cache/disk-$1.ext4" "${sz}M" > "$cache/mkfs-$1.log" 2>&1 ||
			die "mkfs.ext4 -d failed ($cache/mkfs-$1.log)"
		rm -rf "$d"
	fi
}

logs=$cache/logs
mkdir -p "$logs"

# boot NAME SERVER BPS CMDLINE: one boot; the serial log in $logs/NAME.log.txt
boot() {
	local name=$1 srv=$2 bps=$3 args=$4 log=$logs/$1.log
	rm -f "$log" "$log.txt"
	if [ "$use_ltsp" = 1 ]; then
		qemu_run "$timeout_s" "$log" "$logs/$name.qemu" -smp 2 -m "$mem" \
			-kernel "$kernel" -initrd "$lt/initrd.combined" \
			-append "console=ttyS0 panic=-1 loglevel=4 root=/dev/vda ltsp.image=images/x86_64.img init=/sbin/bbench-init $args" \
			-drive "file=$cache/disk-$srv.ext4,if=virtio,format=raw,throttling.bps-total=$bps"
	else
		# The 9p share is no block device: the guest cannot count
		# the bytes it read (network bytes stay empty on this path).
		qemu_run "$timeout_s" "$log" "$logs/$name.qemu" -smp 2 -m "$mem" \
			-kernel "$kernel" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 loglevel=4 rbtest.init=/sbin/bbench-init $args" \
			-fsdev "local,id=net,path=$cache/srv-$srv/images,security_model=none,readonly=on,throttling.bps-total=$bps" \
			-device virtio-9p-pci,fsdev=net,mount_tag=netroot
	fi
	echo "qemu exit $?" >> "$logs/$name.qemu"
	tr -d '\r' < "$log" > "$log.txt" 2>/dev/null
}

val() { # LOG KEY: the value of the line "BBENCH KEY value"
	sed -n "s/^BBENCH $2 //p" "$1" | head -n 1
}

# ---------------------------------------------------------------- the profile

bps_of() { echo $(($1 * 125000)); }
if echo " $modes " | grep -q '+profile '; then
	pkey=$(echo "$rootkey $use_ltsp"; key "$rb")
	if ! fresh profile "$pkey" || [ ! -s "$cache/profile" ]; then
		say "recording a boot profile (ramboot=off ramboot.profile=record)"
		srv_make plain 0
		boot record plain "$(bps_of 100)" "ramboot=off ramboot.profile=record bbench.record=1"
		sed -n '/^BBENCH-PROFILE-BEGIN$/,/^BBENCH-PROFILE-END$/p' "$logs/record.log.txt" |
			sed '1d;$d' | base64 -d > "$cache/profile" 2>/dev/null
		if [ -s "$cache/profile" ]; then
			stamp profile "$pkey"
		else
			say "no profile came back (log: $logs/record.log.txt); dropping the +profile modes"
			modes=$(echo "$modes" | tr ' ' '\n' | grep -v '+profile$' | tr '\n' ' ')
		fi
	fi
fi
srv_make plain 0
[ -s "$cache/profile" ] && srv_make prof 1

# ---------------------------------------------------------------- the rounds

mode_args() {
	case $1 in
	off) echo "ramboot=off" ;;
	ram) echo "ramboot=ram" ;;
	lazy | lazy+profile) echo "ramboot=lazy" ;;
	prefetch | prefetch+profile) echo "ramboot=prefetch" ;;
	ltsp-to-ram) echo "ramboot=off ltsp.image_to_ram=1" ;;
	esac
}
mode_srv() { case $1 in *+profile) echo prof ;; *) echo plain ;; esac; }

results=$cache/results.tsv
if [ "${BOOTBENCH_REPORT_ONLY:-0}" = 1 ] && [ -s "$results" ]; then
	# Only the table and the plot, from the results of the last run.
	runs=$(awk -F '\t' 'NR > 1 && $1 > n { n = $1 } END { print n + 0 }' "$results")
	elapsed=$(cat "$cache/elapsed" 2>/dev/null || echo "?")
else
first=1
if [ "${BOOTBENCH_APPEND:-0}" = 1 ] && [ -s "$results" ]; then
	# More rounds on top of the last run's (the same image and profile).
	first=$(awk -F '\t' 'NR > 1 && $1 > n { n = $1 } END { print n + 1 }' "$results")
	runs=$((first + runs - 1))
else
	printf 'round\tlink\tmode\troot\tlogin\tinram\tnet\tmemkb\n' > "$results"
fi
start=$(date +%s)
for r in $(seq "$first" "$runs"); do
	for l in $links; do
		for m in $(rotated "$r" "$modes"); do
			name="r$r-$l-$m"
			say "round $r/$runs, $l Mbit: $m"
			boot "$name" "$(mode_srv "$m")" "$(bps_of "$l")" "$(mode_args "$m")"
			lg=$logs/$name.log.txt
			if ! grep -q '^BBENCH-DONE' "$lg"; then
				say "  $name did not finish (log: $lg)"
				printf '%s\t%s\t%s\t-\t-\t-\t-\t-\n' "$r" "$l" "$m" >> "$results"
				continue
			fi
			inram=$(val "$lg" IN-RAM-AT)
			case $m in ram | ltsp-to-ram) inram=$(val "$lg" ROOT-READY) ;; esac
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$l" "$m" \
				"$(val "$lg" ROOT-READY)" "$(val "$lg" LOGIN-READY)" "${inram:--}" \
				"$(val "$lg" NET-BYTES)" "$(val "$lg" MEMAVAIL-KB)" >> "$results"
			tail -n 1 "$results" | sed 's/^/  /' >&2
		done
	done
done
elapsed=$(( $(date +%s) - start ))
[ "$first" -gt 1 ] && elapsed=$((elapsed + $(cat "$cache/elapsed" 2>/dev/null || echo 0)))
echo "$elapsed" > "$cache/elapsed"
fi

# ---------------------------------------------------------------- the table

# cell LINK MODE COLUMN: the median over the rounds ("-" when none)
cell() {
	awk -F '\t' -v l="$1" -v m="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$2 == l && $3 == m && $(col[c]) != "-" && $(col[c]) != "" { v[n++] = $(col[c]) }
		END {
			if (!n) { print "-"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
			if (n % 2) print v[(n - 1) / 2]; else print (v[n / 2 - 1] + v[n / 2]) / 2
		}' "$results"
}
ratio() { # A B: A / B, two decimals
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}
fmt_s() { if [ "$1" = - ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%.1f\n", v }'; fi; }
fmt_mb() { if [ "$1" = - ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%.1f MB\n", v / 1e6 }'; fi; }
fmt_mib() { if [ "$1" = - ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%d MiB\n", v / 1024 }'; fi; }

table=$cache/table.md
plotdat=$cache/plot.dat
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench-boot\` (bench/boot-bench.sh)."
	echo
	echo "- Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs; QEMU $("$qemu_bin" --version | head -n 1 | sed 's/.*version //'), accelerator $qemu_accel, guest $mem MiB, 2 vCPUs, Debian kernel $kver"
	echo "- Boot: $path; link = the disk's throttling.bps-total (100 Mbit = 12.5 MB/s, 20 Mbit = 2.5 MB/s)"
	echo "- Image: $(awk -v v="$img_size" 'BEGIN { printf "%.1f MB", v / 1e6 }') zstd squashfs of $nfiles real files from /usr/share and /usr/lib; the login reads a fixed 25 % of them ($nlogin files)"
	echo "- Modes interleaved in each round; $runs round(s) (BOOTBENCH_RUNS=$runs); each cell the median; $elapsed s of boots"
	if [ "$runs" -lt 3 ]; then
		echo "- Fewer rounds than the default 3 (BOOTBENCH_RUNS=$runs, to fit the time the run had): each cell is one boot, or the mean of two, not a median; a TCG boot varies by tens of percent between runs, so read small ratios as noise"
	fi
	echo "- Times are seconds since the guest kernel started (/proc/uptime); root-ready: the client's init runs; login-ready: the login workload is done; in-RAM-at: lazy: the switch to the RAM copy (\`switched=\` in /run/ramboot/lazy), ram and IMAGE_TO_RAM: root-ready; network: bytes read from the server disk (/sys/block/vda/stat) at the end of the boot (after the lazy switch); MemAvailable at the end"
	echo "- Modes: \`off\`, \`ram\`, \`lazy\`, \`prefetch\` are \`ramboot=MODE\` on the kernel command line; +profile: the same with images/x86_64.img.profile beside the image (recorded once on this image by a \`ramboot=off ramboot.profile=record\` boot, stopped with \`ramboot profile --stop\` at login-ready); ltsp-to-ram: \`ramboot=off ltsp.image_to_ram=1\` (LTSP's own IMAGE_TO_RAM=1)"
	echo "- The network bytes count every read of the server disk, ext4 metadata included: ltsp-to-ram, which reads the image file once, shows the floor"
	echo
	echo "| link | mode | root-ready s | login-ready s | in-RAM-at s | network | MemAvailable | root-ready / off | login-ready / off |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	for l in $links; do
		off_root=$(cell "$l" off root)
		off_login=$(cell "$l" off login)
		for m in $modes; do
			rr=$(cell "$l" "$m" root)
			lr=$(cell "$l" "$m" login)
			echo "| $l Mbit | $m | $(fmt_s "$rr") | $(fmt_s "$lr") | $(fmt_s "$(cell "$l" "$m" inram)") | $(fmt_mb "$(cell "$l" "$m" net)") | $(fmt_mib "$(cell "$l" "$m" memkb)") | $(ratio "$rr" "$off_root") | $(ratio "$lr" "$off_login") |"
		done
	done
	echo
	echo "Targets (ratios to \`off\` in the same run):"
	echo
	echo "| target | link | measured | met? |"
	echo "|---|---|---|---|"
	yn() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "not measured"; else if (a + 0 <= b + 0) print "met"; else print "not met" }'; }
	for l in $links; do
		off_login=$(cell "$l" off login)
		rate=$(( l * 125000 ))
		for lm in lazy lazy+profile; do
			echo " $modes " | grep -q " $lm " || continue
			lr=$(cell "$l" "$lm" login)
			x=$(ratio "$lr" "$off_login")
			echo "| $lm login-ready <= 1.05x off | $l Mbit | $x | $(yn "$x" 1.05) |"
			ir=$(cell "$l" "$lm" inram)
			lim=$(awk -v a="$lr" -v s="$img_size" -v r="$rate" 'BEGIN { if (a == "-") print "-"; else printf "%.1f\n", a + 1.3 * s / r }')
			echo "| $lm in RAM by login-ready + 1.3 x image/link | $l Mbit | $(fmt_s "$ir") s (limit $lim s) | $(yn "$ir" "$lim") |"
			nb=$(cell "$l" "$lm" net)
			x=$(ratio "$nb" "$img_size")
			echo "| $lm network bytes <= 1.05x image | $l Mbit | $x x image | $(yn "$x" 1.05) |"
		done
		if echo " $modes " | grep -q ' prefetch+profile ' && [ "$l" = 20 ]; then
			x=$(ratio "$(cell "$l" prefetch+profile login)" "$off_login")
			echo "| prefetch+profile login-ready <= 0.9x off | $l Mbit | $x | $(yn "$x" 0.9) |"
		fi
		if echo " $modes " | grep -q ' prefetch '; then
			x=$(ratio "$(cell "$l" prefetch login)" "$off_login")
			echo "| prefetch (no profile) login-ready <= 1.05x off | $l Mbit | $x | $(yn "$x" 1.05) |"
		fi
		if echo " $modes " | grep -q ' ram ' && echo " $modes " | grep -q ' ltsp-to-ram '; then
			a=$(cell "$l" ram root)
			b=$(cell "$l" ltsp-to-ram root)
			echo "| ram root-ready <= LTSP IMAGE_TO_RAM root-ready | $l Mbit | $(fmt_s "$a") s vs $(fmt_s "$b") s | $(yn "$a" "$b") |"
		fi
	done
	echo
	echo "![login-ready by mode and link](boot-bench.svg)"
} > "$table"

# The plot data: one line per mode, one column per link.
{
	printf 'mode'
	for l in $links; do printf '\t%sMbit' "$l"; done
	echo
	for m in $modes; do
		printf '%s' "$m"
		for l in $links; do
			v=$(cell "$l" "$m" login)
			[ "$v" = - ] && v=0
			printf '\t%s' "$v"
		done
		echo
	done
} > "$plotdat"

cat "$table"

# Into the doc, between the markers; the rest of the file is kept.
doc_table boot-bench "Boot times (\`make bench-boot\`)" "$table" "$doc"
say "table written to $doc"

if ! command -v gnuplot >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gnuplot-nox \
		> "$cache/apt-gnuplot.log" 2>&1 || true
fi
if command -v gnuplot >/dev/null; then
	ncol=$(echo "$links" | wc -w)
	gnuplot <<EOF && say "plot written to $svg"
set terminal svg size 800,450 dynamic enhanced font "sans,12" background rgb "white"
set output "$svg"
set title "Boot to login-ready by ramboot mode and link ($(awk -v v="$img_size" 'BEGIN { printf "%.0f MB", v / 1e6 }') image, median of $runs)"
set ylabel "login-ready, s since kernel start"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside top center horizontal
set grid ytics
set yrange [0:*]
set xtics rotate by -25
plot for [i=2:$((ncol + 1))] "$plotdat" using i:xtic(1) title columnheader(i)
EOF
else
	say "gnuplot not available (apt-get install gnuplot-nox): no plot"
fi
