#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/netmem-bench.sh - the network memory tier (make bench-netmem): load
# capacity of a small client with no swap, with zram alone, and with zram
# whose idle pages go to a memory server; and the server's cost. In QEMU,
# Debian's kernel, on this host's two cores: the server (nbd-server run by
# sbin/ramboot-netmem's configuration) on core 0, the client on core 1.
#
# The client (bench/netmem-bench-init) runs `ramboot boot` for its swap
# (ramboot=off ramboot.swap=zram ..., ramboot.swap.net=10.0.2.2:PORT for
# the network tier: QEMU's user network takes 10.0.2.2 to this host's
# loopback), then the workload of `make bench-swap`, in the client:
#
#   a document  DOC MiB of real file content (tests/fixtures/swap/dochog.c:
#               slices of a corpus of /usr/share and /usr/lib, each page
#               tagged with its document and page), loaded into anonymous
#               memory by one process that holds all of them, one every
#               PAUSE ms (a user opening documents);
#   the budget  that process runs in a memory cgroup, and dochog keeps the
#               cgroup's limit at BUDGET MiB minus the RAM zram itself uses
#               (mm_stat's mem_used_total), as on a client whose compressed
#               pages live in the same RAM (dochog -b -c -z, as in make
#               bench-swap). BUDGET sits below the client's free RAM once
#               booted (the corpus's page cache read outside the cgroup
#               and the tier's process counted): the whole client's OOM
#               killer, which under TCG reclaims for many minutes without
#               acting, is never reached;
#   a run ends  when the budget is exhausted (zram's own RAM would leave
#               the documents less than 4 MiB of it) or at the cgroup's
#               OOM kill (the kernel cannot reclaim the cgroup down to its
#               limit), whichever comes first; NETBENCH_SLOW can end it
#               sooner;
#   capacity    the documents a first run completed before its end;
#   second run  FILL % of that many documents, then every page of every
#               document read again and verified (a run that does not
#               complete is run again with FILL % of the documents it
#               completed, one fewer at least).
# With the network tier, pages idle long enough go to the server and
# leave zram: mem_used_total shrinks, the limit grows again, more
# documents fit. That is the capacity gain.
#
# Rows (each one boot):
#   none      no swap
#   zram      zram alone (disksize ZRAM)
#   net       zram and the network tier, the server idle
#   net-busy  the same second run (net's documents) with a CPU-bound loop
#             on the server's core: the founding experiment, remote
#             memory on a busy workstation
#   ram       a client with enough RAM (BIGMEM, no swap, no budget) and
#             the largest second run of the other rows, pauses left out:
#             the time the others are compared with
# Columns: load capacity; documents of the second run, its seconds to load
# them (pauses left out) and to page through all of them; bytes read from
# and written to the server (the client's nbd device, second run); the
# server's CPU share (utime + stime of nbd-server and of its child that
# serves the client, /proc/PID/stat, over the client's workload time,
# both runs); slowdown against the client with enough RAM. Below the
# table, what a 4 KiB page costs read directly from the tier's mapping
# (dm-crypt over NBD: a round trip and a decryption) and from a zram
# device of the same compressor (a decompression). The last line:
#   netmem: capacity C x zram-only, busy-server time B x idle-server, server CPU S %
# (B: second-run seconds per document, loading and paging through, busy
# against idle.)
#
# Sizes: under TCG on two cores the default rows take about 12 minutes.
#
#   NETBENCH_MEM=MiB        the small client's RAM (default 256)
#   NETBENCH_BUDGET=MiB     the workload's RAM budget, zram's memory
#                           included (default 64: the 256 MiB client has
#                           about 80 MiB free once booted with the tier)
#   NETBENCH_BIGMEM=MiB     the client with enough RAM (default 2048)
#   NETBENCH_DOC=MiB        per document (default 8)
#   NETBENCH_PAUSE=ms       between documents (default 1000)
#   NETBENCH_FILL=PCT       the second run's share of the capacity
#                           (default 90)
#   NETBENCH_SLOW=s         a document that takes longer than this to load
#                           ends a run, as a user gives up on a client that
#                           thrashes (default 0: only the budget)
#   NETBENCH_ZRAM=SIZE      zram disksize of the zram row (default 768M:
#                           more than the budget holds compressed); the
#                           net rows take the tier's own (zram's default
#                           and the server file's size)
#   NETBENCH_NETSIZE=SIZE   the client's file on the server (default 128M:
#                           half the client's RAM, the low end of
#                           docs/netmem.md's sizing; it bounds the net
#                           rows' capacity: here the writeback kept up
#                           with the workload until the file was full;
#                           with 1G a first run held 145 documents, and
#                           paging a gigabyte back under TCG would have
#                           taken the second run most of an hour)
#   NETBENCH_NET_OPTS=...   the tier's settings after the server in
#                           ramboot.swap.net= (default
#                           idle=10,period=2,rate=32MiB/s: pages idle for
#                           10 s go, the workload opening a document a
#                           second)
#   NETBENCH_NET_ARGS="..." more kernel arguments for the net rows
#   NETBENCH_PORT=N         the server's port (default 10819)
#   NETBENCH_MODES="..."    rows (default: none zram net net-busy ram)
#   NETBENCH_TIMEOUT=s      per boot (default 1200)
#   NETBENCH_DOC_MD=file    the markdown to update (default docs/benchmarks.md)
#   NETBENCH_NICE=1         run the client's QEMU at nice -15, for a
#                           machine that other work shares: the client's
#                           core goes to it first; the server and the busy
#                           loop keep normal priority
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   (images/qemu-accel.sh)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
rb=${RAMBOOT_STATIC:-$top/static/ramboot}
mem=${NETBENCH_MEM:-256}
bigmem=${NETBENCH_BIGMEM:-2048}
doc=${NETBENCH_DOC:-8}
pause=${NETBENCH_PAUSE:-1000}
slow=${NETBENCH_SLOW:-0}
budget=${NETBENCH_BUDGET:-64}
fill=${NETBENCH_FILL:-90}
zram=${NETBENCH_ZRAM:-768M}
netsize=${NETBENCH_NETSIZE:-128M}
net_opts=${NETBENCH_NET_OPTS-idle=10,period=2,rate=32MiB/s}
net_args=${NETBENCH_NET_ARGS:-}
port=${NETBENCH_PORT:-10819}
modes=${NETBENCH_MODES:-none zram net net-busy ram}
timeout_s=${NETBENCH_TIMEOUT:-1200}
doc_md=${NETBENCH_DOC_MD:-$top/docs/benchmarks.md}
cache=$top/build/bench-netmem

say() { echo "netmem-bench: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (nbd-server's files, taskset of QEMU)"
[ -x "$rb" ] || die "$rb missing (make static)"
for t in mksquashfs cpio busybox nbd-server taskset cc; do
	command -v "$t" >/dev/null || die "$t not installed (tests/deps.sh install)"
done
[ "$(nproc)" -ge 2 ] || die "needs two cores: one for the server, one for the client"
for v in "$mem" "$bigmem" "$doc" "$pause" "$slow" "$budget" "$fill" "$port" "$timeout_s"; do
	case $v in '' | *[!0-9]*) die "'$v': expected a number" ;; esac
done

# QEMU, its accelerator, Debian's kernel and the build-cache helpers key,
# fresh and stamp: what the QEMU boot tests share
host_why='' kernel='' kver='' qemu_bin='' qemu_accel='' qemu_accel_why=''
# shellcheck disable=SC1091 source=tests/boot/lib.sh
. "$top/tests/boot/lib.sh"
boot_host || die "$host_why"
qemu_accel_choose "$kernel" || die "no accelerator"
say "accelerator: $qemu_accel ($qemu_accel_why)"

tmp=$(mktemp -d /tmp/ramboot-netmem-bench.XXXXXX) || exit 1
SRV_PID=
BUSY_PID=
cleanup() {
	# qemu_run's timeout(1), which ends its QEMU
	[ -z "${_qr_pid:-}" ] || kill "$_qr_pid" 2>/dev/null
	[ -z "$BUSY_PID" ] || kill "$BUSY_PID" 2>/dev/null
	if [ -n "$SRV_PID" ]; then
		for p in $(pgrep -P "$SRV_PID"); do kill "$p" 2>/dev/null; done
		kill "$SRV_PID" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- artefacts

mkdir -p "$cache"

# The corpus: 64 MiB of real file content (tests/fixtures/swap/lib.sh) in
# an uncompressed squashfs on the client's disk: its page cache can be
# dropped and read again, as a client's files from its server.
# shellcheck disable=SC1091
. "$top/tests/fixtures/swap/lib.sh"
if [ ! -f "$cache/corpus.sqfs" ]; then
	say "making the corpus"
	mkdir -p "$tmp/corpus"
	make_corpus "$tmp/corpus/corpus" 64 || die "cannot make the corpus"
	mksquashfs "$tmp/corpus" "$cache/corpus.sqfs.tmp" -noI -noD -noF -noX -noappend \
		-quiet -no-progress -all-root >/dev/null || die "mksquashfs failed"
	mv "$cache/corpus.sqfs.tmp" "$cache/corpus.sqfs"
	rm -rf "$tmp/corpus"
fi

# The initramfs: the test initramfs (images/build-initramfs.sh: busybox,
# ramboot, zram and virtio modules), then a second archive the kernel
# unpacks over it: this benchmark's /init, dochog, and the modules of the
# network tier (nbd, dm-crypt and its ciphers) in netmem.list.
initkey=$(key images/build-initramfs.sh bench/netmem-bench-init tests/fixtures/swap/dochog.c "$rb"; echo "$kver")
initrd=$cache/initrd.cpio
if ! fresh initrd "$initkey" || [ ! -f "$initrd" ]; then
	say "building the initramfs"
	images/build-initramfs.sh "$tmp/base.cpio" "$kver" "$rb" >"$tmp/build.log" 2>&1 ||
		die "images/build-initramfs.sh failed: $(tail -n 3 "$tmp/build.log")"
	x=$tmp/extra
	mkdir -p "$x/bin" "$x/lib/modules"
	install -m 0755 bench/netmem-bench-init "$x/init"
	cc -std=c11 -D_GNU_SOURCE -O2 -static -o "$x/bin/dochog" tests/fixtures/swap/dochog.c ||
		die "cannot build dochog"
	: >"$x/lib/modules/netmem.list"
	for m in nbd dm-mod dm-crypt xts cbc essiv aesni_intel aes_generic sha256_generic; do
		modprobe -S "$kver" --show-depends "$m" 2>/dev/null
	done | while read -r what path args; do
		[ "$what" = insmod ] || continue
		rel=${path#/lib/modules/"$kver"/}
		case $rel in
		*.ko.xz) ko=${rel%.xz}; dec="xz -dc" ;;
		*.ko.zst) ko=${rel%.zst}; dec="zstd -qdc" ;;
		*.ko.gz) ko=${rel%.gz}; dec="gzip -dc" ;;
		*) ko=$rel; dec="cat" ;;
		esac
		grep -q "^$ko\( \|\$\)" "$x/lib/modules/netmem.list" && continue
		mkdir -p "$x/lib/modules/${ko%/*}"
		$dec "$path" >"$x/lib/modules/$ko"
		echo "$ko${args:+ $args}" >>"$x/lib/modules/netmem.list"
	done
	(cd "$x" && find . -print0 | LC_ALL=C sort -z | cpio -o -0 -H newc -R 0:0 --quiet) >"$tmp/extra.cpio" ||
		die "cpio failed"
	cat "$tmp/base.cpio" "$tmp/extra.cpio" >"$initrd.tmp" && mv "$initrd.tmp" "$initrd"
	stamp initrd "$initkey"
fi

# ---------------------------------------------------------------- the server

# One client's file, on this host's loopback (QEMU's user network
# connects from 127.0.0.1): ramboot-netmem's configuration, nbd-server
# pinned to core 0. Its child serving the client inherits the pinning.
cat >"$tmp/settings" <<EOF
NETMEM_DIR=$tmp/files
NETMEM_SIZE=$netsize
NETMEM_CLIENTS=1
NETMEM_PORT=$port
NETMEM_LISTEN=127.0.0.1
NETMEM_USER=
EOF
sbin/ramboot-netmem -c "$tmp/settings" config "$tmp/nbd.conf" || die "ramboot-netmem config failed"
taskset -c 0 nbd-server -C "$tmp/nbd.conf" -p "$tmp/nbd.pid" 2>"$tmp/nbd.log" ||
	die "nbd-server failed: $(cat "$tmp/nbd.log")"
for _ in $(seq 50); do
	[ -s "$tmp/nbd.pid" ] && ss -Hltn "sport = :$port" | grep -q LISTEN && break
	sleep 0.1
done
SRV_PID=$(cat "$tmp/nbd.pid")
kill -0 "$SRV_PID" 2>/dev/null || die "nbd-server is not running: $(cat "$tmp/nbd.log")"
hz=$(getconf CLK_TCK)

# srv_ticks: CPU ticks of nbd-server and of every child it ever had
# (utime stime cutime cstime: a child that served a client and ended is
# counted in cutime, cstime once nbd-server has reaped it)
srv_ticks() {
	awk '{ print $14 + $15 + $16 + $17 }' "/proc/$SRV_PID/stat"
}
# nbd-server makes its TLS parameters once it runs (GnuTLS), seconds of
# CPU that are no client's: the rows start once it is idle.
prev=-1
for _ in $(seq 60); do
	now=$(srv_ticks)
	[ "$now" = "$prev" ] && break
	prev=$now
	sleep 1
done

# QEMU on core 1: a wrapper in qemu_bin's place (qemu_run runs it)
rt=
[ "${NETBENCH_NICE:-0}" = 1 ] && rt="nice -n -15 "
printf '#!/bin/sh\nexec %staskset -c 1 %s "$@"\n' "$rt" "$(command -v "$qemu_bin")" >"$tmp/qemu"
chmod 0755 "$tmp/qemu"
qemu_bin=$tmp/qemu

# ---------------------------------------------------------------- the runs

# boot NAME MEM APPEND: one client; its serial log in $tmp/NAME.log
boot() {
	log=$tmp/$1.log
	qemu_run "$timeout_s" "$log" "$tmp/$1.qemu" -smp 1 -m "$2" -kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet panic=-1 ramboot=off nmbench.doc=$doc nmbench.slow=$slow $3" \
		-drive "file=$cache/corpus.sqfs,if=virtio,format=raw,readonly=on" \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0
	rc=$?
	tr -d '\r' <"$log" >"$log.txt"
	grep -q '^NMBENCH DONE' "$log.txt" || {
		say "$1: the client did not finish (qemu exit $rc); its console:"
		tail -n 30 "$log.txt" >&2
		return 1
	}
	if grep -q '^NMBENCH run corrupt' "$log.txt"; then
		say "$1: CORRUPT PAGES: $(grep '^NMBENCH run corrupt' "$log.txt")"
		return 1
	fi
	return 0
}

field() { # NAME KEY N: the Nth word after "NMBENCH KEY" in NAME's log
	awk -v k="$2" -v n="$3" '$1 == "NMBENCH" && $2 == k { print $(n + 2); exit }' "$tmp/$1.log.txt"
}

pagecost() { # NAME zram|net: microseconds per page of NAME's PAGE-US line
	awk -v k="$2" '$1 == "NMBENCH" && $2 == "PAGE-US" && $3 == k { print $4; exit }' "$tmp/$1.log.txt"
}

# Per row: cap, n (documents of the second run), load, retouch, wall
# (the client's workload seconds), rd, wr (bytes), cpu (server %), state.
run_row() { # NAME MEM APPEND [busy]
	name=$1
	t0=$(srv_ticks)
	if [ "${4:-}" = busy ]; then
		taskset -c 0 sh -c 'while :; do :; done' &
		BUSY_PID=$!
	fi
	boot "$name" "$2" "$3"
	ok=$?
	if [ -n "$BUSY_PID" ]; then
		kill "$BUSY_PID" 2>/dev/null
		wait "$BUSY_PID" 2>/dev/null
		BUSY_PID=
	fi
	# the child that served this client ends with the connection
	for _ in $(seq 100); do
		[ -z "$(pgrep -P "$SRV_PID")" ] && break
		sleep 0.1
	done
	t1=$(srv_ticks)
	[ "$ok" = 0 ] || return 1
	eval "cap_$name=\$(field $name CAPACITY 1)"
	# what ended the first run: dochog's exit status
	case $(field "$name" capacity-rc 1) in
	3) end=budget ;;
	4) end="too slow" ;;
	137) end="OOM kill" ;;
	'') end= ;;
	*) end="exit $(field "$name" capacity-rc 1)" ;;
	esac
	eval "end_$name='$end'"
	eval "n_$name=\$(field $name RUN 1)"
	eval "load_$name=\$(field $name RUN 2)"
	eval "retouch_$name=\$(field $name RUN 3)"
	start=$(field "$name" CAPACITY 2)
	[ -n "$start" ] || start=$(field "$name" RUN 4)
	wall=$(awk -v a="$start" -v b="$(field "$name" RUN 5)" 'BEGIN { printf "%.1f", b - a }')
	eval "wall_$name=\$wall"
	eval "rd_$name=\$(field $name NET-BYTES 1)"
	eval "wr_$name=\$(field $name NET-BYTES 2)"
	# the server's share only where it served the client
	case $name in
	net | busy) eval "cpu_$name=\$(awk -v t=$((t1 - t0)) -v hz=$hz -v w=$wall 'BEGIN { if (w > 0) printf \"%.1f\", 100 * t / hz / w }')" ;;
	esac
	# microseconds per 4 KiB page read directly: zram, the network
	eval "pz_$name=\$(pagecost $name zram)"
	eval "pn_$name=\$(pagecost $name net)"
	eval "alg_$name=\$(awk '\$1 == \"NMBENCH\" && \$2 == \"PAGE-US\" && \$3 == \"zram\" { print \$5; exit }' \"\$tmp/\$name.log.txt\")"
	st=$(sed -n 's/^NMBENCH key swap_net_state //p' "$tmp/$name.log.txt" | tail -n 1)
	eval "state_$name=\$st"
	say "$name: capacity $(field "$name" CAPACITY 1), run of $(field "$name" RUN 1): load $(field "$name" RUN 2) s, page-through $(field "$name" RUN 3) s; server read $(field "$name" NET-BYTES 1) B, written $(field "$name" NET-BYTES 2) B; swap_net_state=${st:-none}"
	cp "$tmp/$name.log.txt" "$cache/$name.log"
}

swap="ramboot.swap=zram ramboot.swap.size=$zram"
b="nmbench.budget=$budget nmbench.fill=$fill"
net="ramboot.swap=zram ramboot.swap.net=10.0.2.2:$port${net_opts:+,$net_opts} $net_args"
failed=
for m in $modes; do
	case $m in
	none) run_row none "$mem" "nmbench.pause=$pause $b" || failed="$failed none" ;;
	zram) run_row zram "$mem" "nmbench.pause=$pause $b nmbench.pagecost=1 $swap" || failed="$failed zram" ;;
	net) run_row net "$mem" "nmbench.pause=$pause $b nmbench.pagecost=1 $net" || failed="$failed net" ;;
	net-busy)
		n=${n_net:-0}
		[ "$n" -gt 0 ] || { say "net-busy: needs the net row first"; failed="$failed net-busy"; continue; }
		run_row busy "$mem" "nmbench.pause=$pause $b nmbench.n=$n $net" busy || failed="$failed net-busy" ;;
	ram)
		n=0
		for v in "${n_net:-0}" "${n_zram:-0}" "${n_none:-0}"; do
			[ "$v" -gt "$n" ] && n=$v
		done
		[ "$n" -gt 0 ] || n=30
		run_row ram "$bigmem" "nmbench.pause=0 nmbench.budget=0 nmbench.n=$n" || failed="$failed ram" ;;
	*) die "NETBENCH_MODES: unknown row $m" ;;
	esac
done

# ---------------------------------------------------------------- the table

# get VAR: the value of a row variable, or -
get() { eval "printf '%s' \"\${$1:--}\""; }
mib() { case $1 in '' | -) echo - ;; *) awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }' ;; esac; }
ratio() { # A B: A / B, or -
	case $1$2 in *-* | '') echo - ; return ;; esac
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}
# slowdown NAME: (load + page-through) against the client with enough
# RAM, its time scaled to NAME's documents
slowdown() {
	n=$(get "n_$1") rn=$(get n_ram)
	case $n$rn in *-*) echo -; return ;; esac
	awk -v l="$(get "load_$1")" -v r="$(get "retouch_$1")" -v n="$n" \
		-v L="$(get load_ram)" -v R="$(get retouch_ram)" -v N="$rn" '
		BEGIN { b = (L + R) * n / N; if (b > 0) printf "%.2f", (l + r) / b; else print "-" }'
}

rows=
for r in none zram net busy ram; do
	case $(get "n_$r") in '' | -) continue ;; esac
	case $r in
	none) label="no swap" ;;
	zram) label="zram $zram" ;;
	net) label="zram + network tier ($netsize), server idle" ;;
	busy) label="zram + network tier ($netsize), server busy" ;;
	ram) label="enough RAM (${bigmem} MiB), no swap" ;;
	esac
	st=$(get "state_$r")
	case $r in net | busy) label="$label ($st)" ;; esac
	cap=$(get "cap_$r")
	[ "$(get "end_$r")" = - ] || cap="$cap ($(get "end_$r"))"
	rows="$rows| $label | $cap | $(get "n_$r") | $(get "load_$r") | $(get "retouch_$r") | $(mib "$(get "rd_$r")") | $(mib "$(get "wr_$r")") | $(get "cpu_$r") | $(slowdown "$r") |
"
done

cap_x=$(ratio "$(get cap_net)" "$(get cap_zram)")
# per document: net-busy's second run may hold fewer than net's
busy_x=$(awk -v a="$(get load_busy)" -v b="$(get retouch_busy)" -v n="$(get n_busy)" \
	-v c="$(get load_net)" -v d="$(get retouch_net)" -v m="$(get n_net)" '
	BEGIN { if (a != "-" && c != "-" && n > 0 && c + d > 0) printf "%.3f", (a + b) / n / ((c + d) / m); else print "-" }')
cpu_s=$(get cpu_net)
case $(get n_net) in
'' | -) ;;
*)
	[ "$(get state_net)" = connected ] ||
		say "the network tier was not connected at the end of the net row (swap_net_state=$(get state_net))" ;;
esac

# what a page costs, read directly: from the net row (zram's from the
# zram row when the net row has none)
pn=$(get pn_net) pz=$(get pz_net) alg=$(get alg_net)
[ "$pz" != - ] || { pz=$(get pz_zram); alg=$(get alg_zram); }
pagetxt=
if [ "$pn" != - ] || [ "$pz" != - ]; then
	pagetxt="
A 4 KiB page read directly (dd iflag=direct, 2048 reads, in the client):
from the network tier's mapping (dm-crypt over NBD: a round trip to the
server and a decryption) ${pn} us; from a zram device with the swap's
compressor ($alg, holding corpus pages: a decompression) ${pz} us: the
network page costs $(ratio "$pn" "$pz") x zram's. Both through the same
block layer; a swap-in adds its fault to either.
"
fi

slowtxt=
[ "$slow" = 0 ] || slowtxt=", or a document took over $slow s to load"
table="A ${mem} MiB client (QEMU, $qemu_accel, kernel ${kver}) holding documents of ${doc} MiB
of real file content, one every ${pause} ms, in a memory cgroup whose limit is
kept at a budget of ${budget} MiB minus the RAM zram uses, until the budget is
exhausted or the cgroup's OOM killer ends the run${slowtxt}; then a
second run with ${fill} % of that many documents that reads them all
again. The server, nbd-server as \`ramboot-netmem\` configures it, on
core 0; the client on core 1${rt:+ at nice -15 (NETBENCH_NICE=1: other work shared the machine)};
\`server busy\`: a CPU-bound loop on the server's core for the same
workload as \`server idle\`. The network tier's settings:
\`${net_opts:-its defaults}\`.

| client | load capacity (documents) | second run (documents) | load (s) | page through all (s) | read from server (MiB) | written to server (MiB) | server CPU (%) | slowdown vs enough RAM |
|---|---|---|---|---|---|---|---|---|
${rows}
Load capacity: documents completed before the budget or the cgroup's
OOM killer ended the first run (in brackets, which). Load (s): the
second run's time loading its documents, the pauses left out. Page
through all: the second run then reads every page of every document
again, verified. Read from / written to the server: the client's nbd
device, second run. Server CPU: nbd-server's and its child's CPU time
(/proc/PID/stat) over the client's workload time (both runs, pauses
included). Slowdown: load and page-through time against the client with
enough RAM and no budget (its time scaled to the row's documents). The
state in brackets is the report's \`swap_net_state\`.
${pagetxt}
netmem: capacity ${cap_x} x zram-only, busy-server time ${busy_x} x idle-server, server CPU ${cpu_s} %"

if [ -z "$failed" ] && [ -f "$doc_md" ] && grep -q '<!-- netmem-bench:begin -->' "$doc_md"; then
	printf '%s\n' "$table" >"$tmp/table"
	awk -v t="$tmp/table" '
		/<!-- netmem-bench:begin -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
		/<!-- netmem-bench:end -->/ { skip = 0 }
		!skip' "$doc_md" >"$tmp/md" && cat "$tmp/md" >"$doc_md"
	say "wrote the netmem-bench section of $doc_md"
fi
[ -z "$failed" ] || say "rows that failed:$failed (logs in $cache)"
printf '%s\n' "$table"
[ -z "$failed" ]
