#!/bin/sh
# bench/swap-bench.sh - load capacity of a small client with and without
# zram swap (make bench-swap). Needs root and zram.
#
# A client with BUDGET MiB of RAM (default 128, like a 124 MB thin client)
# is a memory cgroup. Its "documents" are DOC MiB (default 12) of real file
# content each, held by one process (tests/fixtures/swap/dochog.c). The
# compressed pages live in the same RAM: the cgroup limit is kept at
# BUDGET minus zram's mem_used_total. For each zram disksize (SIZES, MiB;
# 0 = no swap) it measures:
#   load capacity  documents loaded before the OOM killer (or the budget)
#                  stops the process;
#   re-touch       seconds to read all of those documents again (every
#                  page, verified), i.e. to page them back in;
#   pswpout/in     pages swapped out/in during that second run.
# The tables go to stdout and into the swap-bench section of
# docs/benchmarks.md.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
RAMBOOT_BIN=${RAMBOOT_BIN:-$top/ramboot}
BUDGET=${BUDGET:-128}
DOC=${DOC:-12}
SIZES=${SIZES:-0 32 64 96 128 160 192}
ALGORITHM=${ALGORITHM:-}
DOCS_MD=${DOCS_MD:-$top/docs/benchmarks.md}

# shellcheck disable=SC1091
. "$top/tests/fixtures/swap/lib.sh"

die() { echo "swap-bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (zram, swapon, cgroups)"
[ -d /sys/class/zram-control ] || modprobe -q zram num_devices=0 2>/dev/null
[ -d /sys/class/zram-control ] || die "no zram in this kernel"
[ -x "$RAMBOOT_BIN" ] || die "$RAMBOOT_BIN: build it first (make)"
grep -q . /proc/swaps && [ "$(wc -l </proc/swaps)" -gt 1 ] &&
	die "other swap is active; the numbers would not mean anything"

# One swap test or benchmark at a time: they save and restore the same
# vm settings (tests/swap.bats takes the same lock).
exec 8>/run/lock/ramboot-swap-test.lock
flock -w 600 8 || die "another swap test or benchmark is running"

tmp=$(mktemp -d /tmp/ramboot-swap-bench.XXXXXX) || exit 1
save_swappiness=$(cat /proc/sys/vm/swappiness)
save_pagecluster=$(cat /proc/sys/vm/page-cluster)
save_zswap=$(cat /sys/module/zswap/parameters/enabled 2>/dev/null || true)
DEV=

cleanup() {
	cg_remove
	if [ -n "$DEV" ]; then
		"$RAMBOOT_BIN" swap --off "$DEV" 2>/dev/null || {
			swapoff "$DEV" 2>/dev/null
			echo 1 >"/sys/block/${DEV#/dev/}/reset" 2>/dev/null
			echo "${DEV#/dev/zram}" >/sys/class/zram-control/hot_remove 2>/dev/null
		}
		DEV=
	fi
	echo "$save_swappiness" >/proc/sys/vm/swappiness
	echo "$save_pagecluster" >/proc/sys/vm/page-cluster
	[ -z "$save_zswap" ] || echo "$save_zswap" >/sys/module/zswap/parameters/enabled
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -std=c11 -D_GNU_SOURCE -O2 -o "$tmp/dochog" "$top/tests/fixtures/swap/dochog.c" ||
	die "cannot build dochog"
make_corpus "$tmp/corpus" 64 || die "cannot build the corpus"

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# hog NAME ARGS... : run dochog in a fresh cgroup of BUDGET MiB; output in
# $tmp/NAME, exit status returned.
hog() {
	name=$1
	shift
	cg_create "ramboot-bench-$$" $((BUDGET << 20)) || die "cannot create a memory cgroup"
	if [ -n "$DEV" ]; then
		set -- -z "/sys/block/${DEV#/dev/}/mm_stat" "$@"
	fi
	cg_run "$tmp/dochog" -s "$DOC" -b $((BUDGET << 20)) -c "$CG_LIMIT" "$@" \
		"$tmp/corpus" >"$tmp/$name" 2>&1
	rc=$?
	cg_remove
	return $rc
}

rows=
kernel=$(uname -r)
for size in $SIZES; do
	DEV=
	algo=-
	if [ "$size" -gt 0 ]; then
		DEV=$("$RAMBOOT_BIN" swap --size="${size}M" ${ALGORITHM:+--algorithm="$ALGORITHM"} 2>"$tmp/swap.err") ||
			die "ramboot swap --size=${size}M: $(cat "$tmp/swap.err")"
		algo=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/${DEV#/dev/}/comp_algorithm")
	fi
	# 1: load documents until the client runs out of memory.
	hog capacity
	cap=$(grep -c '^doc ' "$tmp/capacity")
	# 2: load that many again, then touch them all.
	out0=$(vmstat pswpout)
	in0=$(vmstat pswpin)
	n=$cap
	secs=-
	while [ "$n" -gt 0 ]; do
		if hog retouch -n "$n" -r; then
			secs=$(sed -n 's/^retouch //p' "$tmp/retouch")
			break
		fi
		n=$((n - 1))        # the second run came out a little tighter
	done
	out1=$(vmstat pswpout)
	in1=$(vmstat pswpin)
	peak=- ratio=-
	if [ -n "$DEV" ]; then
		z=/sys/block/${DEV#/dev/}
		peak=$(awk '{ printf "%.1f", $5 / 1048576 }' "$z/mm_stat")
		ratio=$(awk '$1 == "zram" && $3 > 0 { printf "%.2f", $2 / $3 }' "$tmp/retouch")
		"$RAMBOOT_BIN" swap --off "$DEV" 2>/dev/null || die "swap --off $DEV failed"
		DEV=
	fi
	label=none
	[ "$size" -gt 0 ] && label="${size} MiB ($algo)"
	rows="$rows| $label | $cap | $n | $secs | $((out1 - out0)) | $((in1 - in0)) | $peak | ${ratio:--} |
"
	printf 'swap-bench: zram %s: capacity %s documents, re-touch %s in %s s\n' \
		"$label" "$cap" "$n" "$secs" >&2
done

table="Load capacity of a ${BUDGET} MiB client: documents of ${DOC} MiB of real
file content (/usr/share, /usr/lib) held open by one process in a memory
cgroup whose limit is ${BUDGET} MiB minus what zram itself uses. Kernel
${kernel}, $(nproc) CPUs; \`ramboot swap --size=N\` with its default
tuning (swappiness 180, page-cluster 0).

| zram disksize | load capacity (documents) | re-touched | re-touch all (s) | pswpout | pswpin | zram peak RAM (MiB) | ratio |
|---|---|---|---|---|---|---|---|
${rows}
Load capacity: documents completed before the OOM killer (or the RAM
budget) stopped the process. Re-touch: a second run loads that many
documents (one fewer if the first number was a near miss) and reads every
page of every document again, verifying it; pswpout/pswpin are that run's
/proc/vmstat deltas. Ratio: stored / compressed bytes in zram once all
documents are loaded."

printf '%s\n' "$table"

if [ -f "$DOCS_MD" ] && grep -q '<!-- swap-bench:begin -->' "$DOCS_MD"; then
	printf '%s\n' "$table" >"$tmp/table"
	awk -v t="$tmp/table" '
		/<!-- swap-bench:begin -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
		/<!-- swap-bench:end -->/ { skip = 0 }
		!skip' "$DOCS_MD" >"$tmp/md" && cat "$tmp/md" >"$DOCS_MD"
	echo "swap-bench: wrote the swap-bench section of $DOCS_MD" >&2
fi
