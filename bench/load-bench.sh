#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/load-bench.sh - `ramboot load` against the tools an initramfs would
# otherwise use (cp, dd, zstd, xz, lzop, gzip, pigz), same image, same
# machine, same run. Writes the table into the load-bench section of
# docs/benchmarks.md and prints it.
#
#   BENCH_MB=400        size of the squashfs image to build (MiB, about)
#   BENCH_RUNS=5        runs per job; the median wall time counts
#   BENCH_FRAME_MB=8    uncompressed size of each zstd frame (multi-frame;
#                       8 MiB is what pzstd writes)
#   BENCH_SQFS_COMP=none  the squashfs's own compression (mksquashfs -comp);
#                       "none" for an uncompressed squashfs, which gives the
#                       transport codecs real work (otherwise their output is
#                       about as large as the image)
#   BENCH_NO_DOC=1      print the table, leave docs/benchmarks.md alone
#   BENCH_DOC=FILE      write the section into FILE instead
#   RAMBOOT_BIN=static/ramboot  the binary under test (the static build:
#                       what runs in the initramfs)
#   BENCH_AB=PATH       A/B: also run every ramboot job with the binary PATH
#                       (an older build), interleaved with RAMBOOT_BIN's in
#                       each round, and print a table of the two (B/A speed)
#
# On a machine that other work shares, run it as `chrt -f 50
# bench/load-bench.sh`: its jobs then take the cores first (the kernel
# keeps 5 % for the rest), and the ratios of an A/B run stay within a few
# per cent, where the same run under load scatters by tens of per cent.
#
# The image is real files from /usr as a squashfs (uncompressed by default,
# see above), cached in build/bench/ and reused while the settings are
# unchanged.
# Sources are read once before timing (page-cached); DEST is a tmpfs
# mounted here (root) or a directory in /dev/shm, emptied between runs.
set -eu
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

MB=${BENCH_MB:-400}
RUNS=${BENCH_RUNS:-5}
FRAME_MB=${BENCH_FRAME_MB:-8}
SQCOMP=${BENCH_SQFS_COMP:-none}
RAMBOOT_BIN=${RAMBOOT_BIN:-$top/static/ramboot}
AB=${BENCH_AB:-}
case $RAMBOOT_BIN in /*) ;; *) RAMBOOT_BIN=$top/$RAMBOOT_BIN ;; esac
dir=$top/build/bench
doc=${BENCH_DOC:-$top/docs/benchmarks.md}

die() { echo "load-bench: $*" >&2; exit 1; }
log() { echo "load-bench: $*" >&2; }

[ -x "$RAMBOOT_BIN" ] || die "no $RAMBOOT_BIN (run make)"
[ -z "$AB" ] || [ -x "$AB" ] || die "BENCH_AB: no $AB"
"$RAMBOOT_BIN" load --help >/dev/null 2>&1 || die "$RAMBOOT_BIN has no working 'load'"
for t in mksquashfs zstd xz lzop gzip; do
	command -v "$t" >/dev/null || die "$t not installed (tests/deps.sh install)"
done
have_pigz=0
command -v pigz >/dev/null && have_pigz=1
# pv stands in for the network: a source at a 1 or 10 Gbit/s link's speed.
if ! command -v pv >/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pv >/dev/null 2>&1 || true
fi
have_pv=0
command -v pv >/dev/null && have_pv=1

mkdir -p "$dir"

# ---- the image --------------------------------------------------------------

build_images() {
	local list=$dir/files.list want tree=$dir/tree chunk n
	local sqopt
	case $SQCOMP in
	none) sqopt="-noI -noD -noF -noX" ;;
	*) sqopt="-comp $SQCOMP" ;;
	esac
	log "building a ~${MB} MiB squashfs ($SQCOMP) from /usr (cached in $dir)"
	rm -rf "$tree" "$dir"/image.* "$dir"/frames "$dir/stamp"
	# squashfs with zstd packs /usr files to about 40 %: collect 2.5x
	want=$((MB * 1024 * 1024 * 5 / 2))
	[ "$SQCOMP" = none ] && want=$((MB * 1024 * 1024))
	find /usr/lib /usr/share /usr/bin -xdev -type f -readable -size -64M \
		-printf '%s\t%p\n' 2>/dev/null | sort -t "$(printf '\t')" -k2 |
		awk -F '\t' -v want="$want" '{ s += $1; print $2; if (s >= want) exit }' >"$list"
	mkdir -p "$tree"
	sed 's|^/||' "$list" | (cd / && cpio -pdm --quiet "$tree") 2>/dev/null || true
	# shellcheck disable=SC2086
	mksquashfs "$tree" "$dir/image.sqfs" $sqopt -quiet -no-progress \
		-noappend -all-root -no-xattrs >/dev/null
	rm -rf "$tree"

	log "compressing: zstd, zstd multi-frame, xz multi-block, lzop, gzip"
	zstd -q -3 -T1 -c "$dir/image.sqfs" >"$dir/image.zst"
	# multi-frame: one frame per FRAME_MB of image, concatenated
	mkdir -p "$dir/frames"
	split -b "${FRAME_MB}M" -d -a 4 "$dir/image.sqfs" "$dir/frames/f"
	for chunk in "$dir"/frames/f*; do
		zstd -q -3 -c "$chunk"
	done >"$dir/image.mf.zst"
	rm -rf "$dir/frames"
	xz -T2 -6 -c "$dir/image.sqfs" >"$dir/image.xz"
	lzop -3 -c "$dir/image.sqfs" >"$dir/image.lzo"
	gzip -6 -n -c "$dir/image.sqfs" >"$dir/image.gz"
	n=$(xz --robot -lv "$dir/image.xz" | awk '$1 == "totals" { print $3 }')
	echo "xz_blocks=$n" >"$dir/info"
	sha256sum "$dir/image.sqfs" | cut -d' ' -f1 >"$dir/image.sha256"
	echo "$MB $FRAME_MB $SQCOMP" >"$dir/stamp"
}

if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$MB $FRAME_MB $SQCOMP" ] || [ ! -s "$dir/image.gz" ]; then
	build_images
fi
IMG=$dir/image.sqfs
SIZE=$(stat -c %s "$IMG")
SHA=$(cat "$dir/image.sha256")

# The manifests of the image: version 1 (the whole-image SHA-256, hashed in
# one stream) and version 2 (4 MiB chunks, hashed on every core).
"$RAMBOOT_BIN" manifest --chunk-size=0 -o "$dir/image.m1" "$IMG" || die "ramboot manifest failed"
"$RAMBOOT_BIN" manifest -o "$dir/image.m2" "$IMG" || die "ramboot manifest failed"

# ---- the destination --------------------------------------------------------

mnt=
cleanup() {
	if [ -n "$mnt" ]; then
		rm -f "$mnt/dest"
		if mountpoint -q "$mnt"; then
			umount "$mnt" || umount -l "$mnt"
		fi
		rmdir "$mnt" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" = 0 ]; then
	mnt=$(mktemp -d /tmp/load-bench.XXXXXX)
	mount -t tmpfs -o "size=$((SIZE / 1048576 + 128))M,mode=0700" ramboot-bench "$mnt"
	destkind="a tmpfs mounted for the run"
else
	mnt=$(mktemp -d /dev/shm/load-bench.XXXXXX)
	destkind="/dev/shm (not root)"
fi
DEST=$mnt/dest

# page-cache every source
cat "$dir"/image.* >/dev/null

# ---- timing -----------------------------------------------------------------

# Each job is a shell command writing $DEST (removed before each run, not
# timed); its first output is compared with the image: a wrong result is
# not a benchmark. The median wall time counts. Every job runs once per round, RUNS rounds, so that peer and ramboot see
# the same machine (a busy neighbour, memory state) as far as possible.
declare -A cmds times
jobs=()
abjobs=()
# With BENCH_AB, a ramboot job KEY has a twin KEY@B run right after it.
job() {
	jobs+=("$1"); cmds[$1]=$2; times[$1]=""
	# shellcheck disable=SC2016 # the command's text, expanded by its own sh
	if [ -n "$AB" ] && [[ $2 == *'$RAMBOOT_BIN'* ]]; then
		jobs+=("$1@B"); cmds[$1@B]=${2//\$RAMBOOT_BIN/\$RAMBOOT_BIN_B}; times[$1@B]=""
		abjobs+=("$1")
	fi
}

run_once() { # KEY: one timed run, the output checked on the first one
	local k=$1 t0 t1
	[ "${times[$k]}" = fail ] && return 0
	rm -f "$DEST"
	sync
	t0=$(date +%s.%N)
	if ! RAMBOOT_BIN=$RAMBOOT_BIN RAMBOOT_BIN_B=$AB DEST=$DEST sh -c "${cmds[$k]}" </dev/null >/dev/null 2>"$dir/last.err"; then
		log "FAILED: ${cmds[$k]}"
		sed 's/^/  /' "$dir/last.err" >&2
		times[$k]=fail
		return 0
	fi
	t1=$(date +%s.%N)
	if [ -z "${times[$k]}" ] && ! cmp -s "$IMG" "$DEST"; then
		log "WRONG OUTPUT: ${cmds[$k]}"
		times[$k]=fail
		return 0
	fi
	times[$k]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
}

median() { # KEY
	[ "${times[$1]}" = fail ] && { echo fail; return; }
	# shellcheck disable=SC2086 # one word per run
	printf '%s\n' ${times[$1]} | sort -g | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'
}

mbps() { # seconds -> MB/s of decompressed output
	[ "$1" = fail ] && { echo "fail"; return; }
	awk -v s="$SIZE" -v t="$1" 'BEGIN { printf "%.0f", s / 1e6 / t }'
}

rows=()
verdicts=()
# row JOB PEERNAME PEER_T RAMBOOT_T KIND TARGET
#   KIND ratio: met when peer_t / ramboot_t >= TARGET
#   KIND cost:  met when ramboot_t / peer_t - 1 <= TARGET (a fraction)
row() {
	local job=$1 peer=$2 tp=$3 tr=$4 kind=$5 target=$6 ratio met tgt
	if [ "$tp" = fail ] || [ "$tr" = fail ]; then
		ratio="fail"
		met="no"
	else
		ratio=$(awk -v p="$tp" -v r="$tr" 'BEGIN { printf "%.2f", p / r }')
		case $kind in
		ratio)
			met=$(awk -v x="$ratio" -v t="$target" 'BEGIN { print (x >= t) ? "yes" : "no" }') ;;
		cost)
			met=$(awk -v p="$tp" -v r="$tr" -v t="$target" 'BEGIN { print (r / p - 1 <= t) ? "yes" : "no" }')
			ratio="$ratio (cost $(awk -v p="$tp" -v r="$tr" 'BEGIN { printf "%+.1f %%", (r / p - 1) * 100 }'))" ;;
		costinfo)
			met="-"
			ratio="$ratio (cost $(awk -v p="$tp" -v r="$tr" 'BEGIN { printf "%+.1f %%", (r / p - 1) * 100 }'))" ;;
		*) met="-" ;;
		esac
	fi
	case $kind in
	ratio) tgt=">= ${target}x" ;;
	cost) tgt="cost <= $(awk -v t="$target" 'BEGIN { printf "%d", t * 100 }') %" ;;
	*) tgt="-" ;;
	esac
	rows+=("| $job | $peer | $(mbps "$tp") | $(mbps "$tr") | $ratio | $tgt | $met |")
	case $kind in info | costinfo) ;; *) verdicts+=("$met") ;; esac
	log "$job: $peer $(mbps "$tp") MB/s, ramboot $(mbps "$tr") MB/s, $ratio"
}

rl="\"\$RAMBOOT_BIN\" load --progress=none"
log "image $((SIZE / 1048576)) MiB, $RUNS runs per job, DEST in $destkind"

job cp "cp '$IMG' \"\$DEST\""
job dd "dd if='$IMG' of=\"\$DEST\" bs=1M status=none"
job raw "$rl -d none '$IMG' \"\$DEST\""
job raw_sha "$rl -d none --sha256=$SHA '$IMG' \"\$DEST\""
job raw_m1 "$rl -d none --manifest='$dir/image.m1' '$IMG' \"\$DEST\""
job raw_m2 "$rl -d none --manifest='$dir/image.m2' '$IMG' \"\$DEST\""
job zstd "zstd -q -dc '$dir/image.zst' >\"\$DEST\""
job rzstd "$rl '$dir/image.zst' \"\$DEST\""
job rzstd_sha "$rl --sha256=$SHA '$dir/image.zst' \"\$DEST\""
job rzstd_m2 "$rl --manifest='$dir/image.m2' '$dir/image.zst' \"\$DEST\""
job zstd_mf "zstd -q -dc '$dir/image.mf.zst' >\"\$DEST\""
job rzstd_mf "$rl '$dir/image.mf.zst' \"\$DEST\""
job rzstd_mf_m2 "$rl --manifest='$dir/image.m2' '$dir/image.mf.zst' \"\$DEST\""
job xz "xz -dc '$dir/image.xz' >\"\$DEST\""
job xz_mt "xz -dc -T0 '$dir/image.xz' >\"\$DEST\""
job rxz "$rl '$dir/image.xz' \"\$DEST\""
job rxz_m2 "$rl --manifest='$dir/image.m2' '$dir/image.xz' \"\$DEST\""
job lzo "lzop -dc '$dir/image.lzo' >\"\$DEST\""
job rlzo "$rl '$dir/image.lzo' \"\$DEST\""
job rlzo_m2 "$rl --manifest='$dir/image.m2' '$dir/image.lzo' \"\$DEST\""
job gz "gzip -dc '$dir/image.gz' >\"\$DEST\""
job rgz "$rl '$dir/image.gz' \"\$DEST\""
job rgz_m2 "$rl --manifest='$dir/image.m2' '$dir/image.gz' \"\$DEST\""
[ "$have_pigz" = 1 ] && job pigz "pigz -dc '$dir/image.gz' >\"\$DEST\""
if [ "$have_pv" = 1 ]; then
	job link "pv -q -L 125m '$dir/image.zst' | $rl - \"\$DEST\""
	job link_sha "pv -q -L 125m '$dir/image.zst' | $rl --sha256=$SHA - \"\$DEST\""
	# the raw image over a link: unverified, and verified by its chunks
	job l1 "pv -q -L 125m '$IMG' | $rl -d none - \"\$DEST\""
	job l1_m2 "pv -q -L 125m '$IMG' | $rl -d none --manifest='$dir/image.m2' - \"\$DEST\""
	job l10 "pv -q -L 1250m '$IMG' | $rl -d none - \"\$DEST\""
	job l10_m2 "pv -q -L 1250m '$IMG' | $rl -d none --manifest='$dir/image.m2' - \"\$DEST\""
fi

for ((round = 1; round <= RUNS; round++)); do
	log "round $round of $RUNS"
	for k in "${jobs[@]}"; do
		run_once "$k"
	done
done

row "raw copy" "cp" "$(median cp)" "$(median raw)" ratio 1.0
row "raw copy" "dd bs=1M" "$(median dd)" "$(median raw)" info -
row "SHA-256 cost, raw" "ramboot -d none" "$(median raw)" "$(median raw_sha)" cost 0.10
row "zstd, one frame" "zstd -dc" "$(median zstd)" "$(median rzstd)" info -
row "SHA-256 cost, zstd" "ramboot (zstd)" "$(median rzstd)" "$(median rzstd_sha)" cost 0.10
row "zstd, ${FRAME_MB} MiB frames" "zstd -dc" "$(median zstd_mf)" "$(median rzstd_mf)" ratio 1.7
row "xz, multi-block" "xz -dc" "$(median xz)" "$(median rxz)" ratio 1.7
row "xz, multi-block" "xz -dc -T0" "$(median xz_mt)" "$(median rxz)" info -
row "lzop" "lzop -dc" "$(median lzo)" "$(median rlzo)" ratio 1.0
row "gzip" "gzip -dc" "$(median gz)" "$(median rgz)" ratio 1.0
[ "$have_pigz" = 1 ] && row "gzip" "pigz -dc" "$(median pigz)" "$(median rgz)" info -
[ "$have_pv" = 1 ] && row "SHA-256 cost, zstd at 1 Gb/s (pv -L 125m)" "ramboot (zstd)" \
	"$(median link)" "$(median link_sha)" costinfo -
# Version 2 manifests: the chunks hashed on every core.
row "verified raw copy: chunks (v2) vs one SHA-256 stream (v1)" "ramboot --manifest v1" \
	"$(median raw_m1)" "$(median raw_m2)" ratio 1.8
row "verified raw copy (v2) vs unverified" "ramboot -d none" "$(median raw)" "$(median raw_m2)" costinfo -
if [ "$have_pv" = 1 ]; then
	row "verification cost (v2), raw at 1 Gb/s (pv -L 125m)" "ramboot -d none" \
		"$(median l1)" "$(median l1_m2)" cost 0.02
	row "verification cost (v2), raw at 10 Gb/s (pv -L 1250m)" "ramboot -d none" \
		"$(median l10)" "$(median l10_m2)" cost 0.02
fi
row "verification cost (v2), zstd" "ramboot (zstd)" "$(median rzstd)" "$(median rzstd_m2)" cost 0.05
row "verification cost (v2), zstd ${FRAME_MB} MiB frames" "ramboot (zstd)" "$(median rzstd_mf)" \
	"$(median rzstd_mf_m2)" cost 0.05
row "verification cost (v2), xz multi-block" "ramboot (xz)" "$(median rxz)" "$(median rxz_m2)" cost 0.05
row "verification cost (v2), lzop" "ramboot (lzop)" "$(median rlzo)" "$(median rlzo_m2)" cost 0.05
row "verification cost (v2), gzip" "ramboot (gzip)" "$(median rgz)" "$(median rgz_m2)" cost 0.05

# ---- the report -------------------------------------------------------------

met=0
for v in "${verdicts[@]}"; do [ "$v" = yes ] && met=$((met + 1)); done
sz() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
xzb=$(sed -n 's/^xz_blocks=//p' "$dir/info")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
mem=$(awk '$1 == "MemTotal:" { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)

section=$(mktemp)
{
	echo "Measured $(date -u +%Y-%m-%d) by \`make bench\` (bench/load-bench.sh)."
	echo
	echo "- Machine: ${cpu:-unknown CPU}, $(nproc) CPUs, $mem RAM, Linux $(uname -r)"
	echo "- Tools: $(zstd -V | sed 's/^\*\*\* //; s/ \*\*\*$//; s/, by.*//'), $(xz --version | head -1), lzop $(lzop --version 2>&1 | sed -n 's/^lzop \([0-9.]*\).*/\1/p' | head -1), gzip $(gzip --version | head -1 | awk '{ print $2 }')$([ "$have_pigz" = 1 ] && echo ", $(pigz --version 2>&1)")"
	echo "- Image: $(sz "$IMG") squashfs ($SQCOMP inside) of files from /usr;" \
		"transport files: zstd -3 $(sz "$dir/image.zst"), zstd -3 in ${FRAME_MB} MiB frames $(sz "$dir/image.mf.zst")," \
		"xz -T2 -6 $(sz "$dir/image.xz") (${xzb:-?} blocks), lzop -3 $(sz "$dir/image.lzo"), gzip -6 $(sz "$dir/image.gz")"
	echo "- Sources page-cached; jobs interleaved, one run of each per round; DEST in $destkind; median of $RUNS runs;" \
		"MB/s = 10^6 bytes of image written per second; ratio = peer time / ramboot time;" \
		"ramboot uses $(nproc) threads (default)"
	echo
	echo "| job | peer | peer MB/s | ramboot MB/s | ratio | target | met? |"
	echo "|---|---|---:|---:|---:|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Targets met: $met of ${#verdicts[@]}."
} >"$section"

cat "$section"
if [ -n "$AB" ]; then
	echo
	echo "A/B, same run, interleaved: A = $RAMBOOT_BIN, B = $AB (median of $RUNS)"
	echo
	echo "| job | A MB/s | B MB/s | A / B speed |"
	echo "|---|---:|---:|---:|"
	for k in "${abjobs[@]}"; do
		ta=$(median "$k"); tb=$(median "$k@B")
		if [ "$ta" = fail ] || [ "$tb" = fail ]; then r=fail
		else r=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.3f", b / a }'); fi
		echo "| $k | $(mbps "$ta") | $(mbps "$tb") | $r |"
	done
fi
if [ "${BENCH_NO_DOC:-0}" != 1 ] && [ -f "$doc" ] && grep -q '<!-- load-bench:begin -->' "$doc"; then
	awk -v f="$section" '
		/<!-- load-bench:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
		/<!-- load-bench:end -->/ { skip = 0 }
		!skip' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
	log "updated $doc"
fi
rm -f "$section"
