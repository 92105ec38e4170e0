#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/http-bench.sh - images over HTTP on a real, shaped link (make
# bench-http). Needs root: network namespaces, veth pairs, tc.
#
# The link: a bridge in a namespace of its own; two web servers (Debian's
# nginx, sendfile on), each in its namespace (10.79.0.1, 10.79.0.2, the
# second one the mirror), and the client in a third (10.79.0.10). The
# client's port of the bridge is shaped (tc tbf at RATE, toward the
# client: the client's link is the bottleneck, as for a lab machine) and
# the client's own side adds HTTPBENCH_DELAY of latency (tc netem, where
# the kernel has it), so a request and its answer cross a round trip.
#
# The image: a squashfs (zstd inside) of real files from /usr/share and
# /usr/lib with a version 2 manifest (`ramboot manifest`), served by both
# servers as /image.sqfs and /image.sqfs.manifest.
#
# Host level, per rate, HTTPBENCH_RUNS rounds, the modes interleaved (each
# round starts with the next one):
#   curl        `curl -o /dev/null URL`: the link's reference
#   ramboot c=1 `ramboot load URL DEST` (DEST in a tmpfs, every chunk
#               verified against the manifest, the copy compared with
#               the image afterwards); --connections=1 when the build has
#               the option
#   ramboot c=2, c=4   the same with --connections=N (n/a without it)
#   2 mirrors   the same with --mirror=URL2 (and --connections=2 when the
#               build has it; n/a without --mirror)
# Per mode: the median time and the spread (min-max) of the rounds, MB/s,
# the throughput against curl's in the same rounds, the bytes the servers
# sent (tx_bytes of their veths: payload, headers, retransmissions) and
# the servers' CPU time (utime + stime of every nginx process, from
# /proc/PID/stat before and after).
#
# The bench ends with one line:
#   http: ram R x image-to-ram, lazy L x default, copy C x curl
# C: the throughput of the plain `ramboot load URL DEST` against curl's,
# the lowest over the rates; R and L come from the QEMU level (n/a when it
# did not run or the build lacks the mode).
#
#   HTTPBENCH_MB=64          image size (MB, about), cached in build/bench-http
#   HTTPBENCH_RATES="100mbit 1gbit"   the client link's rates (tc)
#   HTTPBENCH_DELAY=1ms      latency added on the client's side (tc netem)
#   HTTPBENCH_RUNS=3         rounds per rate
#   HTTPBENCH_DOC=1          also write the tables into the http-bench
#                            section of docs/benchmarks.md (=FILE: into FILE)
#   RAMBOOT_BIN=./ramboot    the binary under test (host level)
#
# Every namespace, veth, process and temporary file goes in a trap, also
# after a failure or ^C; the cached image stays in build/bench-http.
set -u
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
cache=$top/build/bench-http
mb=${HTTPBENCH_MB:-64}
rates=${HTTPBENCH_RATES:-100mbit 1gbit}
delay=${HTTPBENCH_DELAY:-1ms}
runs=${HTTPBENCH_RUNS:-3}

say() { echo "http-bench: $*" >&2; }
die() { say "$*"; exit 1; }

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_start HTTPBENCH "network namespaces, veth pairs, tc" ip tc nginx curl mksquashfs busybox

# rate_bits RATE: a tc rate in bit/s (empty when it is none)
rate_bits() {
	echo "$1" | awk '
		match(tolower($0), /^[0-9.]+(kbit|mbit|gbit|bit)$/) {
			v = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u)
			m = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1
			printf "%.0f", v * m; exit }'
}
for r in $rates; do
	[ -n "$(rate_bits "$r")" ] || die "HTTPBENCH_RATES: $r is not a tc rate (100mbit, 1gbit)"
done
mkdir -p "$cache"

# ---------------------------------------------------------------- the image

# The client root of make bench-boot (bench/boot-bench-init as its init,
# real files, the login's list), so that the QEMU level boots the image
# the host level copies.
bb=$(command -v busybox)
image_version=1
rootkey=$(key images/build-test-root.sh bench/boot-bench-init "$rb" "$bb"; echo "mb=$mb v=$image_version")
img=$cache/x86_64.img
if ! fresh image "$rootkey" || [ ! -f "$img" ] || [ ! -s "$img.manifest" ]; then
	say "building a ~$mb MB client image of real files (cached in $cache)"
	rm -f "$cache/image.key"
	root=$cache/root
	bbench_root "$root" "$mb"
	squash_zstd "$root" "$img"
	rm -rf "$root"
	"$RAMBOOT_BIN" manifest -o "$img.manifest" "$img" || die "ramboot manifest failed"
	stamp image "$rootkey"
fi
head -n 1 "$img.manifest" | grep -qx 'ramboot-manifest 2' ||
	die "$img.manifest: not a version 2 manifest"
img_size=$(stat -c %s "$img")
say "image: $img_size bytes ($(wc -l <"$cache/files") files)"

# ---------------------------------------------------------------- the link

NS=rbhttp$$
S1=$NS-s1 S2=$NS-s2 C=$NS-c BR=$NS-br
A1=10.79.0.1 A2=10.79.0.2 AC=10.79.0.10
nets=()
tmp=
trap netns_cleanup EXIT
trap 'exit 130' INT TERM

tmp=$(mktemp -d /dev/shm/http-bench.XXXXXX)
chmod 0755 "$tmp"

netns_bridge "$BR" || die "ip netns add failed"
for n in s1 s2 c; do
	case $n in s1) a=$A1 ;; s2) a=$A2 ;; c) a=$AC ;; esac
	netns_port "$BR" "$NS-$n" "$a/24" || die "the link of $NS-$n cannot be made"
done
# A kernel without sch_netem (CONFIG_NET_SCH_NETEM) gets no added latency:
# the veths' own round trip, tens of microseconds
latency="$delay (tc netem on the client's side)"
if ! tc -n "$C" qdisc add dev eth0 root netem delay "$delay" limit 10000 2>/dev/null; then
	say "tc netem is not available in this kernel: no latency added"
	latency="none added (this kernel has no tc netem)"
fi

# shape RATE: the client's link (its port of the bridge, toward the
# client) at RATE; tbf's burst 10 ms of the rate, at least 128 KiB (two
# GSO packets), and 50 ms of queue
shape() {
	local bits burst
	bits=$(rate_bits "$1")
	burst=$((bits / 8 / 100))
	[ "$burst" -ge 131072 ] || burst=131072
	tc -n "$BR" qdisc replace dev "$C" root tbf rate "$1" burst "$burst" latency 50ms ||
		die "tc: cannot shape the client's link at $1"
}

# ---------------------------------------------------------------- the servers

mkdir -p "$tmp/www"
cp "$img" "$tmp/www/image.sqfs"
cp "$img.manifest" "$tmp/www/image.sqfs.manifest"
chmod 0644 "$tmp/www/"*
# nginx_start NS ADDRESS: nginx serving $tmp/www on ADDRESS:80 in NS
nginx_start() {
	local d=$tmp/nginx-$1
	# shellcheck disable=SC2016 # nginx's variables
	NGINX_LOG_FORMAT='$bytes_sent' "$top/tests/helpers/nginx-conf.sh" "$d" "$2:80" \
		"sendfile on; tcp_nopush on; default_type application/octet-stream;" "root $tmp/www;"
	ip netns exec "$1" nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" ||
		die "nginx did not start in $1: $(tail -n 2 "$d/error.log")"
	local i
	for i in $(seq 1 50); do
		ip netns exec "$C" curl -sf -o /dev/null -r 0-0 "http://$2/image.sqfs" && return 0
		[ "$i" = 50 ] || sleep 0.1
	done
	die "nginx in $1 does not answer on $2"
}
nginx_start "$S1" "$A1"
nginx_start "$S2" "$A2"
URL=http://$A1/image.sqfs
URL2=http://$A2/image.sqfs

# server_bytes, server_ticks, http_bytes: what both servers sent, their
# CPU time (clock ticks: utime + stime of every process in their
# namespaces, with cutime + cstime: nbd-server's child that served a
# client and ended counts in its parent's once reaped) and what the first
# nginx sent (its access log)
server_bytes() {
	local n s=0 b
	for n in "$S1" "$S2"; do
		b=$(ip netns exec "$n" cat /sys/class/net/eth0/statistics/tx_bytes)
		s=$((s + b))
	done
	echo "$s"
}
server_ticks() {
	local n p s=0 t
	for n in "$S1" "$S2"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$p/stat" 2>/dev/null) || continue
			s=$((s + ${t:-0}))
		done
	done
	echo "$s"
}
http_bytes() {
	awk '{ s += $1 } END { printf "%.0f\n", s }' "$tmp/nginx-$S1/access.log" 2>/dev/null || echo 0
}
hz=$(getconf CLK_TCK)
now() { date +%s.%N; }

# ---------------------------------------------------------------- host level

help=$("$RAMBOOT_BIN" load --help 2>&1)
has_conn=0 has_mirror=0
case $help in *--connections*) has_conn=1 ;; esac
case $help in *--mirror*) has_mirror=1 ;; esac
say "this build: --connections $([ "$has_conn" = 1 ] && echo yes || echo no)," \
	"--mirror $([ "$has_mirror" = 1 ] && echo yes || echo no)"

host_modes="curl rb1 rb2 rb4 mirrors"
mode_name() {
	case $1 in
	curl) echo "curl -o /dev/null" ;;
	rb1) echo "ramboot load" ;;
	rb2) echo "ramboot load --connections=2" ;;
	rb4) echo "ramboot load --connections=4" ;;
	mirrors) echo "ramboot load, 2 mirrors" ;;
	esac
}
# mode_args MODE: the load's options, or status 1 when the build has not
# the mode
mode_args() {
	case $1 in
	rb1) [ "$has_conn" = 0 ] || echo "--connections=1" ;;
	rb2 | rb4)
		[ "$has_conn" = 1 ] || return 1
		echo "--connections=${1#rb}" ;;
	mirrors)
		[ "$has_mirror" = 1 ] || return 1
		echo "--mirror=$URL2"
		[ "$has_conn" = 0 ] || echo "--connections=2" ;;
	esac
	return 0
}

dest=$tmp/dest.img
bound=$((img_size * 8 / 1000000 + 120))
# transfer MODE: one copy in the client's namespace; sets T (s), BYTES,
# TICKS and OK (1: a verified copy, or curl's whole file)
transfer() {
	local m=$1 b0 b1 c0 c1 t0 t1 rc=0 args
	rm -f "$dest"
	b0=$(server_bytes) c0=$(server_ticks) t0=$(now)
	if [ "$m" = curl ]; then
		ip netns exec "$C" timeout "$bound" curl -sSf -o /dev/null "$URL" \
			>"$tmp/$m.log" 2>&1 || rc=$?
	else
		mapfile -t args < <(mode_args "$m")
		ip netns exec "$C" timeout "$bound" "$RAMBOOT_BIN" load --progress=none \
			"${args[@]}" "$URL" "$dest" >"$tmp/$m.log" 2>&1 || rc=$?
	fi
	t1=$(now) b1=$(server_bytes) c1=$(server_ticks)
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	BYTES=$((b1 - b0)) TICKS=$((c1 - c0)) OK=0
	if [ "$rc" = 0 ] && { [ "$m" = curl ] || cmp -s "$img" "$dest"; }; then
		OK=1
	else
		say "  $m failed (exit $rc): $(tail -n 2 "$tmp/$m.log" | tr '\n' ' ')"
	fi
	rm -f "$dest"
}

results=$cache/host.tsv
printf 'rate\tround\tmode\tsecs\tbytes\tticks\tok\n' >"$results"
cat "$img" >/dev/null
for rate in $rates; do
	shape "$rate"
	# one copy before the rounds: the server's page cache holds the image
	transfer curl
	for r in $(seq 1 "$runs"); do
		for m in $(rotated "$r" "$host_modes"); do
			mode_args "$m" >/dev/null || continue
			transfer "$m"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$r" "$m" "$T" "$BYTES" "$TICKS" "$OK" >>"$results"
			say "$rate round $r/$runs: $(mode_name "$m"): $T s, $BYTES bytes, $TICKS ticks$([ "$OK" = 1 ] || echo ', FAILED')"
		done
	done
done

# ---------------------------------------------------------------- the report

# stat_of FILE RATE MODE COLUMN: "median min max n" of the column over the
# rounds that succeeded ("- - - 0" when none)
stat_of() {
	awk -F '\t' -v l="$2" -v m="$3" -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == l && $3 == m && $(col["ok"]) == 1 && $(col[c]) != "-" { v[n++] = $(col[c]) + 0 }
		END {
			if (!n) { print "- - - 0"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			med = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
			print med, v[0], v[n - 1], n
		}' "$1"
}
na="n/a (not supported by this build)"
copy_c=
host_table=$tmp/host.md
{
	echo "| link | mode | time s, median (min-max) | MB/s | throughput / curl | server bytes / image | server CPU ms | rounds |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	for rate in $rates; do
		read -r cmed _ _ cn <<<"$(stat_of "$results" "$rate" curl secs)"
		for m in $host_modes; do
			if ! mode_args "$m" >/dev/null; then
				echo "| $rate | $(mode_name "$m") | $na | | | | | |"
				continue
			fi
			read -r med lo hi n <<<"$(stat_of "$results" "$rate" "$m" secs)"
			read -r bmed _ _ _ <<<"$(stat_of "$results" "$rate" "$m" bytes)"
			read -r tmed _ _ _ <<<"$(stat_of "$results" "$rate" "$m" ticks)"
			if [ "$n" = 0 ]; then
				echo "| $rate | $(mode_name "$m") | failed | | | | | 0 of $runs |"
				continue
			fi
			x=$(awk -v a="$cmed" -v b="$med" 'BEGIN { if (a == "-") print "-"; else printf "%.2f", a / b }')
			[ "$m" = rb1 ] && [ "$x" != - ] &&
				copy_c=$(awk -v c="${copy_c:-}" -v x="$x" 'BEGIN { print (c == "" || x + 0 < c + 0) ? x : c }')
			awk -v r="$rate" -v nm="$(mode_name "$m")" -v med="$med" -v lo="$lo" -v hi="$hi" \
				-v s="$img_size" -v x="$x" -v b="$bmed" -v t="$tmed" -v hz="$hz" -v n="$n" -v runs="$runs" '
				BEGIN { printf "| %s | %s | %.2f (%.2f-%.2f) | %.1f | %s | %.3f | %.0f | %d of %d |\n",
					r, nm, med, lo, hi, s / med / 1e6, x, b / s, t * 1000 / hz, n, runs }'
		done
		[ "$cn" != 0 ] || say "$rate: curl failed in every round"
	done
} >"$host_table"

# ---------------------------------------------------------------- QEMU level

# The real LTSP initrd (ltsp.img, then Debian's initrd.img with its nbd
# and network scripts) boots the image through the same shaped link: QEMU
# runs in the client's namespace with its user network, whose connections
# leave from that namespace, so the guest's traffic crosses the shaped
# veth. The network file server is nbd-server in the first server's
# namespace, exporting an ext4 disk that holds images/x86_64.img (LTSP's
# NBD root: root=/dev/nbd0 nbdroot=SERVER,srv,nbd0); the web server is the
# host level's nginx. Modes, interleaved:
#   default       ramboot=off: LTSP mounts the image over NBD
#   image-to-ram  ramboot=off ltsp.image_to_ram=1: LTSP copies it into RAM
#   ram-http      ramboot=ram ramboot.url=URL
#   lazy-http     ramboot=lazy ramboot.url=URL
#   lazy-nbd      ramboot=lazy, the image file over NBD
# A build without ramboot.url= gets n/a for the two HTTP modes; a
# lazy-http boot that took nothing from the web server is n/a as well, a
# ram-http one failed (it fell back to the network image).
# Columns: root-ready and login-ready (bench/boot-bench-init's markers),
# the bytes the server namespace sent (NBD and HTTP, its veth) and the
# CPU time of nbd-server (with its per-client children) and nginx.
#
#   HTTPBENCH_QEMU=0         the host level only
#   HTTPBENCH_QEMU_RATES="100mbit 1gbit"   the link's rates for the boots
#   HTTPBENCH_QEMU_RUNS=n    rounds of boots (default HTTPBENCH_RUNS)
#   HTTPBENCH_QEMU_MODES="default image-to-ram ram-http lazy-http lazy-nbd"
#   HTTPBENCH_TIMEOUT=s      per boot (default 600)
#   HTTPBENCH_MEM=MiB        guest memory (default 1024)
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   (images/qemu-accel.sh)
qrates=${HTTPBENCH_QEMU_RATES:-$rates}
qruns=${HTTPBENCH_QEMU_RUNS:-$runs}
qmodes=${HTTPBENCH_QEMU_MODES:-default image-to-ram ram-http lazy-http lazy-nbd}
timeout_s=${HTTPBENCH_TIMEOUT:-600}
mem=${HTTPBENCH_MEM:-1024}
qemu_table=
qemu_why=

has_url=0
grep -aqF 'ramboot.url' "$rb" && has_url=1

qemu_level() {
	local k r m rate name lg b0 c0 rc
	command -v nbd-server >/dev/null || { qemu_why="nbd-server not installed (tests/deps.sh install)"; return 1; }
	command -v ltsp >/dev/null || { qemu_why="ltsp not installed (tests/deps.sh install)"; return 1; }
	for t in mkfs.ext4 cpio lsinitramfs; do
		command -v "$t" >/dev/null || { qemu_why="$t not installed"; return 1; }
	done
	# bench_qemu_setup, but without QEMU the host level's tables stay
	boot_host || { qemu_why=$host_why; return 1; }
	qemu_accel_choose "$kernel" || { qemu_why="no accelerator"; return 1; }
	say "accelerator: $qemu_accel ($qemu_accel_why)"
	lt=$cache/ltsp
	bench_name=http-bench
	ltsp_setup || { qemu_why="the LTSP initrd could not be built"; return 1; }
	for m in nbd virtio_net; do
		lsinitramfs "$deb_initrd" 2>/dev/null | grep -q "/$m\.ko" ||
			{ qemu_why="$deb_initrd has no $m module"; return 1; }
	done
	# a real NIC: no zz-net.cpio, LTSP reads the identity from eth0
	cat "$lt/tftp/ltsp/ltsp.img" "$deb_initrd" >"$tmp/initrd.net"

	# the server disk, as make bench-boot's: ext4 holding images/x86_64.img
	k=$(key "$img"; echo v1)
	if ! fresh disk "$k" || [ ! -f "$cache/srv.ext4" ]; then
		rm -rf "$cache/srv"
		mkdir -p "$cache/srv/images"
		cp "$img" "$cache/srv/images/x86_64.img"
		mkfs.ext4 -q -F -L ltsp-srv -d "$cache/srv" "$cache/srv.ext4" \
			"$(( (img_size * 11 / 10) / 1048576 + 32 ))M" >"$cache/mkfs.log" 2>&1 ||
			{ qemu_why="mkfs.ext4 -d failed ($cache/mkfs.log)"; return 1; }
		rm -rf "$cache/srv"
		stamp disk "$k"
	fi
	cat >"$tmp/nbd.conf" <<CONF
[generic]
user = root
group = root
listenaddr = $A1
[srv]
exportname = $cache/srv.ext4
readonly = true
CONF
	ip netns exec "$S1" nbd-server -C "$tmp/nbd.conf" -p "$tmp/nbd.pid" 2>"$tmp/nbd.log" ||
		{ qemu_why="nbd-server failed: $(tail -n 2 "$tmp/nbd.log")"; return 1; }
	# nbd-server makes its TLS parameters once it runs: wait for it to
	# idle, so that no boot is charged with them
	c0=-1
	for _ in $(seq 1 60); do
		sleep 1
		[ "$(server_ticks)" = "$c0" ] && break
		c0=$(server_ticks)
	done

	# QEMU in the client's namespace: `ip netns exec` execs QEMU in its
	# own process, which qemu_run's timeout can end
	qemu_real=$(command -v "$qemu_bin")
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$C" "$qemu_real" >"$tmp/qemu-in-ns"
	chmod 0755 "$tmp/qemu-in-ns"
	qemu_bin=$tmp/qemu-in-ns
	logs=$cache/logs
	mkdir -p "$logs"

	qresults=$cache/qemu.tsv
	printf 'rate\tround\tmode\troot\tlogin\tbytes\tticks\tok\n' >"$qresults"
	for rate in $qrates; do
		shape "$rate"
		for r in $(seq 1 "$qruns"); do
			for m in $(rotated "$r" "$qmodes"); do
				qmode_args "$m" >/dev/null || continue
				name=r$r-$rate-$m
				say "boot $r/$qruns, $rate: $m"
				b0=$(server_bytes) c0=$(server_ticks) h0=$(http_bytes)
				qemu_run "$timeout_s" "$logs/$name.log" "$logs/$name.qemu" -smp 2 -m "$mem" \
					-kernel "$kernel" -initrd "$tmp/initrd.net" \
					-append "console=ttyS0 panic=-1 loglevel=4 ip=dhcp root=/dev/nbd0 nbdroot=$A1,srv,nbd0 ro ltsp.image=images/x86_64.img init=/sbin/bbench-init $(qmode_args "$m")" \
					-netdev user,id=n0 -device virtio-net-pci,netdev=n0
				rc=$?
				# nbd-server reaps the child that served this boot
				sleep 1
				tr -d '\r' <"$logs/$name.log" >"$logs/$name.log.txt" 2>/dev/null
				lg=$logs/$name.log.txt
				B=$(( $(server_bytes) - b0 )) TK=$(( $(server_ticks) - c0 )) HB=$(( $(http_bytes) - h0 ))
				ok=1
				if ! grep -q '^BBENCH-DONE' "$lg"; then
					say "  $name did not finish (qemu exit $rc; log: $lg)"
					ok=0
				elif [ "$m" = ram-http ] && [ "$HB" -lt $((img_size / 2)) ]; then
					say "  $name: the web server sent $HB bytes: $(sed -n 's/^BBENCH report fallback/fallback/p' "$lg" | head -n 1)"
					ok=0
				elif [ "$m" = lazy-http ] && [ "$HB" -lt $((img_size / 2)) ]; then
					say "  $name: the web server sent $HB bytes: no lazy copy over HTTP in this build"
					ok=na
				fi
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$r" "$m" \
					"$(val "$lg" ROOT-READY)" "$(val "$lg" LOGIN-READY)" "$B" "$TK" "$ok" >>"$qresults"
				tail -n 1 "$qresults" | sed 's/^/  /' >&2
			done
		done
	done
	return 0
}

# qmode_args MODE: the boot's ramboot arguments, or status 1 when the build
# has not the mode
qmode_args() {
	case $1 in
	default) echo "ramboot=off" ;;
	image-to-ram) echo "ramboot=off ltsp.image_to_ram=1" ;;
	lazy-nbd) echo "ramboot=lazy" ;;
	ram-http | lazy-http)
		[ "$has_url" = 1 ] || return 1
		echo "ramboot=${1%-http} ramboot.url=$URL" ;;
	*) return 1 ;;
	esac
}
val() { sed -n "s/^BBENCH $2 //p" "$1" | head -n 1; }

# worse CURRENT A B: the larger of CURRENT and A / B (two decimals; n/a
# for none): the final line's ratios, the worst over the rates
worse() {
	awk -v c="$1" -v a="$2" -v b="$3" 'BEGIN {
		if (a == "-" || b == "-" || b + 0 == 0) { print c; exit }
		x = sprintf("%.2f", a / b)
		print (c == "n/a" || x + 0 > c + 0) ? x : c }'
}

if [ "${HTTPBENCH_QEMU:-1}" != 0 ]; then
	if qemu_level; then
		qemu_table=$tmp/qemu.md
		{
			echo "| link | mode | root-ready s | login-ready s | server MB | server CPU ms | boots |"
			echo "|---|---|---:|---:|---:|---:|---:|"
			for rate in $qrates; do
				for m in $qmodes; do
					if ! qmode_args "$m" >/dev/null ||
						[ "$(awk -F '\t' -v l="$rate" -v m="$m" '$1 == l && $3 == m && $8 == "na"' "$qresults")" ]; then
						echo "| $rate | $m | $na | | | | |"
						continue
					fi
					read -r rmed rlo rhi n <<<"$(stat_of "$qresults" "$rate" "$m" root)"
					read -r lmed llo lhi _ <<<"$(stat_of "$qresults" "$rate" "$m" login)"
					read -r bmed _ _ _ <<<"$(stat_of "$qresults" "$rate" "$m" bytes)"
					read -r tmed _ _ _ <<<"$(stat_of "$qresults" "$rate" "$m" ticks)"
					if [ "$n" = 0 ]; then
						echo "| $rate | $m | failed | | | | 0 of $qruns |"
						continue
					fi
					awk -v r="$rate" -v m="$m" -v a="$rmed" -v al="$rlo" -v ah="$rhi" \
						-v b="$lmed" -v bl="$llo" -v bh="$lhi" -v by="$bmed" -v t="$tmed" \
						-v hz="$hz" -v n="$n" -v runs="$qruns" '
						BEGIN { printf "| %s | %s | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.1f | %.0f | %d of %d |\n",
							r, m, a, al, ah, b, bl, bh, by / 1e6, t * 1000 / hz, n, runs }'
				done
				read -r a _ _ _ <<<"$(stat_of "$qresults" "$rate" ram-http login)"
				read -r b _ _ _ <<<"$(stat_of "$qresults" "$rate" image-to-ram login)"
				ram_q=$(worse "${ram_q:-n/a}" "$a" "$b")
				read -r a _ _ _ <<<"$(stat_of "$qresults" "$rate" lazy-http login)"
				read -r b _ _ _ <<<"$(stat_of "$qresults" "$rate" default login)"
				lazy_q=$(worse "${lazy_q:-n/a}" "$a" "$b")
			done
		} >"$qemu_table"
	else
		say "QEMU level skipped: $qemu_why"
	fi
fi

# ---------------------------------------------------------------- the summary

ram_r=${ram_q:-n/a} lazy_l=${lazy_q:-n/a}
fmt_ratio() { if [ -n "$1" ] && [ "$1" != - ]; then echo "$1"; else echo n/a; fi; }
section=$tmp/section.md
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench-http\` (bench/http-bench.sh)."
	echo
	echo "- Machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(nproc) CPUs, Linux $(uname -r); nginx $(nginx -v 2>&1 | sed 's|.*nginx/||'), sendfile on"
	echo "- Link: network namespaces on a bridge; the client's port shaped by tc tbf at" \
		"${rates// /, then }; latency: $latency"
	echo "- Image: $(awk -v v="$img_size" 'BEGIN { printf "%.1f MB", v / 1e6 }') squashfs (zstd)" \
		"of real files from /usr/share and /usr/lib, a version 2 manifest beside it"
	echo "- Host level: $runs round(s) per rate, the modes interleaved; \`ramboot load\` writes" \
		"into a tmpfs and verifies every chunk; server bytes: tx_bytes of both servers' veths;" \
		"server CPU: utime + stime of the nginx processes (10 ms ticks)"
	echo
	cat "$host_table"
	echo
	if [ -n "$qemu_table" ]; then
		echo "- QEMU level: QEMU $("$qemu_real" --version | head -n 1 | sed 's/.*version //'), accelerator" \
			"$qemu_accel, guest $mem MiB, 2 vCPUs, Debian kernel $kver; the real LTSP initrd" \
			"(ltsp.img + Debian's initrd.img), root=/dev/nbd0 from nbd-server" \
			"$(dpkg-query -W -f '${Version}' nbd-server 2>/dev/null) in the server's namespace," \
			"QEMU's user network in the client's; $qruns round(s) per rate, the modes interleaved"
		echo "- Times: seconds since the guest kernel started; root-ready: the image's init runs;" \
			"login-ready: it has read a fixed 25 % of the image's files; server MB: what the server's" \
			"veth sent during the boot (NBD and HTTP); server CPU: nbd-server and nginx"
		echo
		cat "$qemu_table"
	else
		echo "- QEMU level: not run${qemu_why:+ ($qemu_why)}"
	fi
} >"$section"
cat "$section"
if [ -n "$doc" ]; then
	doc_table http-bench "HTTP (\`make bench-http\`)" "$section" "$doc"
	say "updated $doc"
fi
echo "http: ram $ram_r x image-to-ram, lazy $lazy_l x default, copy $(fmt_ratio "$copy_c") x curl"
