#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/lab-bench.sh - a lab of N clients fed by one multicast stream
# (ramboot serve, ramboot load --udpcast) against N unicast copies of the
# same image over the same link (make bench-lab). Needs root: network
# namespaces and tc.
#
# For N = 1, 2, 4, 8 (LABBENCH_NS) clients, each in a network namespace on
# one bridge; the server in a namespace of its own whose link to the
# bridge is capped (tc tbf on its veth, LABBENCH_RATE):
#   multicast  `ramboot serve --once --min-receivers=N` (udp-sender) in the
#              server's namespace; every client runs `ramboot load
#              --udpcast --manifest=M DEST`, started before the server
#              (clients that wait for the stream, as in a lab that boots);
#   unicast    python3 -m http.server in the server's namespace; every
#              client runs `curl URL | ramboot load --manifest=M - DEST`,
#              all at once.
# Measured per N: the time from starting the server (multicast) or the
# copies (unicast) until every client holds a verified copy (each load
# exits 0, its manifest checked, and DEST is compared with the image),
# and the bytes the server sent (tx_bytes of its veth: payload, headers,
# retransmissions).
#
#   LABBENCH_MB=64        image size (MiB, about): a squashfs (zstd inside)
#                         of files from /usr, cached in build/lab-bench/
#   LABBENCH_RATE=100mbit the server's link (tc rate)
#   LABBENCH_SEND_RATE=   ramboot serve --rate (default: 95 % of the link,
#                         in Mbit; "none" for no cap)
#   LABBENCH_NS="1 2 4 8" the lab sizes
#   LABBENCH_DOC=1        also write the table into the lab-bench section of
#                         docs/benchmarks.md (LABBENCH_DOC=FILE: into FILE)
#   RAMBOOT_BIN=./ramboot the binary under test
#
# Every namespace, veth, process and temporary file goes in a trap, also
# after a failure or ^C; the cached image stays in build/lab-bench/.
set -eu
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
MB=${LABBENCH_MB:-64}
RATE=${LABBENCH_RATE:-100mbit}
SIZES=${LABBENCH_NS:-1 2 4 8}
RAMBOOT_BIN=${RAMBOOT_BIN:-$top/ramboot}
case $RAMBOOT_BIN in /*) ;; *) RAMBOOT_BIN=$top/$RAMBOOT_BIN ;; esac
dir=$top/build/lab-bench
case ${LABBENCH_DOC:-0} in
0 | "") doc= ;;
1) doc=$top/docs/benchmarks.md ;;
*) doc=$LABBENCH_DOC ;;
esac

die() { echo "lab-bench: $*" >&2; exit 1; }
log() { echo "lab-bench: $*" >&2; }
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (network namespaces, veth pairs, tc); run it as root"
[ -x "$RAMBOOT_BIN" ] || die "no $RAMBOOT_BIN (run make)"
for t in ip tc udp-sender udp-receiver curl python3 mksquashfs; do
	command -v "$t" >/dev/null || die "$t not installed (tests/deps.sh install)"
done
# the link's rate in bit/s, for the send rate and the ideal times
rate_bits=$(echo "$RATE" | awk '
	match(tolower($0), /^[0-9.]+(kbit|mbit|gbit|bit)$/) {
		v = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u)
		m = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1
		printf "%.0f", v * m; exit }')
[ -n "$rate_bits" ] || die "LABBENCH_RATE=$RATE: not a tc rate (100mbit, 500kbit, 1gbit)"
SEND_RATE=${LABBENCH_SEND_RATE:-$((rate_bits * 95 / 100 / 1000000))Mbit}
[ "$SEND_RATE" = none ] && SEND_RATE=
[ "$SEND_RATE" = 0m ] && die "LABBENCH_RATE=$RATE is below 2 Mbit; set LABBENCH_SEND_RATE"

# ---- the image --------------------------------------------------------------

mkdir -p "$dir"
if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$MB" ] || [ ! -s "$dir/image.man" ]; then
	log "building a ~${MB} MiB squashfs (zstd) from /usr (cached in $dir)"
	rm -rf "$dir/tree" "$dir/image.sqfs" "$dir/image.man" "$dir/stamp"
	# squashfs with zstd packs /usr files to about 36 %: collect 2.75x
	find /usr/lib /usr/share /usr/bin -xdev -type f -readable -size -64M \
		-printf '%s\t%p\n' 2>/dev/null | sort -t "$(printf '\t')" -k2 |
		awk -F '\t' -v want=$((MB * 1048576 * 11 / 4)) \
			'{ s += $1; print $2; if (s >= want) exit }' >"$dir/files.list"
	mkdir -p "$dir/tree"
	sed 's|^/||' "$dir/files.list" | (cd / && cpio -pdm --quiet "$dir/tree") 2>/dev/null || true
	mksquashfs "$dir/tree" "$dir/image.sqfs" -comp zstd -quiet -no-progress \
		-noappend -all-root -no-xattrs >/dev/null
	rm -rf "$dir/tree" "$dir/files.list"
	"$RAMBOOT_BIN" manifest -o "$dir/image.man" "$dir/image.sqfs" || die "ramboot manifest failed"
	echo "$MB" >"$dir/stamp"
fi
IMG=$dir/image.sqfs
MAN=$dir/image.man
SIZE=$(stat -c %s "$IMG")

# ---- the lab ----------------------------------------------------------------

NS=rblab$$
nets=()
tmp=
trap netns_cleanup EXIT
trap 'exit 130' INT TERM

tmp=$(mktemp -d /dev/shm/lab-bench.XXXXXX)
maxn=0
for n in $SIZES; do
	case $n in '' | *[!0-9]*) die "LABBENCH_NS: '$n' is not a number" ;; esac
	if [ "$n" -lt 1 ] || [ "$n" -gt 50 ]; then die "LABBENCH_NS: $n is not from 1 to 50"; fi
	[ "$n" -gt "$maxn" ] && maxn=$n
done

# A bridge in $NS-br (no multicast snooping: every port gets the stream),
# the server $NS-s at 10.78.0.1 and clients $NS-1..maxn at 10.78.0.(10+i),
# each on a veth pair named eth0 on its side, with a multicast route.
# The server's eth0 is the capped link.
netns_bridge "$NS-br" mcast_snooping 0 || die "ip netns add failed"
for i in s $(seq 1 "$maxn"); do
	case $i in s) a=10.78.0.1 ;; *) a=10.78.0.$((10 + i)) ;; esac
	netns_port "$NS-br" "$NS-$i" "$a/24" brd + || die "the link of $NS-$i cannot be made"
	ip -n "$NS-$i" route add 224.0.0.0/4 dev eth0
done
# tbf: the rate, a burst above a 64 KiB GSO packet, 50 ms of queue
tc -n "$NS-s" qdisc add dev eth0 root tbf rate "$RATE" burst 128kb latency 50ms ||
	die "tc: cannot cap the server's link at $RATE"

tx_bytes() { ip netns exec "$NS-s" cat /sys/class/net/eth0/statistics/tx_bytes; }
now() { date +%s.%N; }

# check_copies N KIND T0: wait for the N clients' loads (pids in rx[]),
# then compare their copies; sets T (seconds) and OK (copies verified).
check_copies() {
	local n=$1 kind=$2 t0=$3 i rc t1
	OK=0
	for i in $(seq 1 "$n"); do
		rc=0
		wait "${rx[i]}" || rc=$?
		if [ "$rc" != 0 ]; then
			log "$kind N=$n: client $i failed (exit $rc):"
			tail -n 3 "$tmp/$kind.$n.$i.log" | sed 's/^/  /' >&2
		fi
	done
	t1=$(now)
	for i in $(seq 1 "$n"); do
		if grep -q . "$tmp/$kind.$n.$i.rc" 2>/dev/null && [ "$(cat "$tmp/$kind.$n.$i.rc")" = 0 ] &&
			cmp -s "$IMG" "$tmp/dest.$i"; then
			OK=$((OK + 1))
		fi
		rm -f "$tmp/dest.$i"
	done
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

# Each client's load runs in its namespace, bounded; its exit status is
# written next to its log (a load killed by the bound counts as failed).
bound=$((SIZE * 8 * (maxn + 2) / rate_bits + 60))

multicast() {
	local n=$1 i b0 b1 t0 serve
	for i in $(seq 1 "$n"); do
		(
			rc=0
			ip netns exec "$NS-$i" timeout "$bound" "$RAMBOOT_BIN" load --progress=none \
				--udpcast=portbase=9100,interface=eth0,start-timeout=60 \
				--manifest="$MAN" "$tmp/dest.$i" >"$tmp/mc.$n.$i.log" 2>&1 || rc=$?
			echo "$rc" >"$tmp/mc.$n.$i.rc"
			exit "$rc"
		) &
		rx[i]=$!
	done
	# the clients are waiting for a sender
	sleep 1
	b0=$(tx_bytes)
	t0=$(now)
	ip netns exec "$NS-s" timeout "$bound" "$RAMBOOT_BIN" serve --once --interface=eth0 \
		--portbase=9100 --min-receivers="$n" ${SEND_RATE:+--rate="$SEND_RATE"} "$IMG" \
		>"$tmp/serve.$n.log" 2>&1 &
	serve=$!
	check_copies "$n" mc "$t0"
	wait "$serve" || log "multicast N=$n: ramboot serve failed: $(tail -n 1 "$tmp/serve.$n.log")"
	b1=$(tx_bytes)
	BYTES=$((b1 - b0))
}

unicast() {
	local n=$1 i b0 b1 t0
	b0=$(tx_bytes)
	t0=$(now)
	for i in $(seq 1 "$n"); do
		(
			rc=0
			# shellcheck disable=SC2016 # the inner shell's arguments
			ip netns exec "$NS-$i" timeout "$bound" bash -c '
				set -o pipefail
				curl -sSf "$1" | "$2" load --progress=none --manifest="$3" - "$4"' bash \
				"http://10.78.0.1:8000/image.sqfs" "$RAMBOOT_BIN" "$MAN" "$tmp/dest.$i" \
				>"$tmp/uc.$n.$i.log" 2>&1 || rc=$?
			echo "$rc" >"$tmp/uc.$n.$i.rc"
			exit "$rc"
		) &
		rx[i]=$!
	done
	check_copies "$n" uc "$t0"
	b1=$(tx_bytes)
	BYTES=$((b1 - b0))
}

# the HTTP server of the unicast runs (threads: one per client)
ip netns exec "$NS-s" python3 -m http.server --bind 10.78.0.1 --directory "$dir" 8000 \
	>"$tmp/http.log" 2>&1 &
# killed in the trap with the namespace's other processes
disown $!
up=0
for _ in $(seq 1 50); do
	if ip netns exec "$NS-1" curl -sf -o /dev/null -r 0-0 http://10.78.0.1:8000/image.sqfs; then
		up=1
		break
	fi
	sleep 0.1
done
[ "$up" = 1 ] || die "the HTTP server did not start: $(tail -n 2 "$tmp/http.log")"
cat "$IMG" >/dev/null

declare -a rx
declare -A secs bytes oks
log "image $(awk -v s="$SIZE" 'BEGIN { printf "%.1f MiB", s / 1048576 }'), link $RATE," \
	"multicast at ${SEND_RATE:-no cap}, N = $SIZES"
for n in $SIZES; do
	multicast "$n"
	secs[mc$n]=$T bytes[mc$n]=$BYTES oks[mc$n]=$OK
	log "multicast N=$n: $T s, $BYTES bytes sent, $OK of $n copies verified"
	unicast "$n"
	secs[uc$n]=$T bytes[uc$n]=$BYTES oks[uc$n]=$OK
	log "unicast   N=$n: $T s, $BYTES bytes sent, $OK of $n copies verified"
done

# ---- the report -------------------------------------------------------------

first=${SIZES%% *}
rows=()
for kind in mc uc; do
	for n in $SIZES; do
		k=$kind$n
		rows+=("| $([ "$kind" = mc ] && echo multicast || echo unicast) | $n | ${oks[$k]} of $n |$(
			awk -v t="${secs[$k]}" -v t1="${secs[$kind$first]}" -v b="${bytes[$k]}" -v s="$SIZE" \
				'BEGIN { printf " %.1f | %.2f | %.1f | %.2f |", t, t / t1, b / 1048576, b / s }')")
	done
done

ideal=$(awk -v s="$SIZE" -v r="$rate_bits" 'BEGIN { printf "%.1f", s * 8 / r }')
verdict() { if [ "$1" = 1 ]; then echo met; else echo "not met"; fi; }
last=${SIZES##* }
mc_bytes_max=0 mc_bytes_ok=1 all_ok=1 copies=0 copies_ok=0
for n in $SIZES; do
	r=$(awk -v b="${bytes[mc$n]}" -v s="$SIZE" 'BEGIN { printf "%.2f", b / s }')
	mc_bytes_max=$(awk -v a="$mc_bytes_max" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
	awk -v r="$r" 'BEGIN { exit !(r <= 1.1) }' || mc_bytes_ok=0
	[ "${oks[mc$n]}" = "$n" ] && [ "${oks[uc$n]}" = "$n" ] || all_ok=0
	copies=$((copies + 2 * n))
	copies_ok=$((copies_ok + ${oks[mc$n]} + ${oks[uc$n]}))
done
mc_time=$(awk -v a="${secs[mc$last]}" -v b="${secs[mc$first]}" 'BEGIN { printf "%.2f", a / b }')
mc_time_ok=$(awk -v r="$mc_time" 'BEGIN { print (r <= 1.3) ? 1 : 0 }')
uc_grows=$(for n in $SIZES; do echo "${bytes[uc$n]}"; done | awk '
	NR > 1 && $1 <= p { bad = 1 } { p = $1 } END { print bad ? 0 : 1 }')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)

section=$(mktemp "$tmp/section.XXXXXX")
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench-lab\` (bench/lab-bench.sh)."
	echo
	echo "- Machine: ${cpu:-unknown CPU}, $(nproc) CPUs, Linux $(uname -r);" \
		"udpcast $(dpkg-query -W -f '${Version}' udpcast 2>/dev/null || echo '(version unknown)')"
	echo "- Lab: network namespaces on one bridge, the server's veth capped at $RATE" \
		"(tc tbf); an image of $(awk -v s="$SIZE" 'BEGIN { printf "%.1f MiB", s / 1048576 }')" \
		"(squashfs, zstd, of files from /usr) with a version 2 manifest; $ideal s on the link at full rate"
	echo "- Multicast: \`ramboot serve --once --min-receivers=N${SEND_RATE:+ --rate=$SEND_RATE}\`;" \
		"the clients' \`ramboot load --udpcast --manifest=M\` wait for it; time from starting the server"
	echo "- Unicast: python3 -m http.server; each client \`curl URL | ramboot load --manifest=M -\`," \
		"all started at once; time from the start"
	echo "- Time: until the last client holds a verified copy; server bytes: tx_bytes of its" \
		"veth (headers and retransmissions included); ratios against N = $first"
	echo
	echo "| mode | N | verified copies | time (s) | time / time(N=$first) | server MiB | server bytes / image |"
	echo "|---|---:|---|---:|---:|---:|---:|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "| target | measured | met? |"
	echo "|---|---|---|"
	echo "| multicast server bytes <= 1.1 x image, every N | at most ${mc_bytes_max} x | $(verdict "$mc_bytes_ok") |"
	echo "| multicast time(N=$last) <= 1.3 x time(N=$first) | ${mc_time} x | $(verdict "$mc_time_ok") |"
	echo "| unicast server bytes grow with N | $(for n in $SIZES; do awk -v b="${bytes[uc$n]}" -v s="$SIZE" 'BEGIN { printf "%.2f ", b / s }'; done | sed 's/ $//; s/ /, /g') x | $(verdict "$uc_grows") |"
	echo "| every copy verified | $copies_ok of $copies | $(verdict "$all_ok") |"
} >"$section"

cat "$section"
if [ -n "$doc" ]; then
	grep -q '<!-- lab-bench:begin -->' "$doc" 2>/dev/null || die "$doc: no lab-bench section"
	awk -v f="$section" '
		/<!-- lab-bench:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
		/<!-- lab-bench:end -->/ { skip = 0 }
		!skip' "$doc" >"$tmp/doc" && cat "$tmp/doc" >"$doc"
	log "updated $doc"
fi
[ "$all_ok" = 1 ] || die "some copies were not verified (see above)"
