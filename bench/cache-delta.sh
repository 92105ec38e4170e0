#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/cache-delta.sh - the network bytes of a cache refresh after a
# one-package rebuild of a client image (make bench-cache runs it for its
# package; run it alone for others):
#
#   bench/cache-delta.sh ROOT IMAGE PACKAGE WORKDIR
#
# ROOT is the tree IMAGE was made of with mksquashfs (as
# bench/cache-bench.sh makes it; the rebuild takes IMAGE's compressor and
# block size from its superblock); PACKAGE an installed Debian package some
# of whose files ROOT holds. The files of PACKAGE in ROOT are changed in
# every 4 KiB (as a rebuild of the package changes every block of them),
# the image is made again, and a cache holding IMAGE is refreshed to the
# new image with `ramboot cache refresh`. WORKDIR (made, and emptied at
# the end but for the results) holds the copies. Needs root (loop
# devices) and an empty cache file made by `ramboot cache init`, as
# WORKDIR/cache-empty.img or CACHEDELTA_EMPTY.
#
# Prints key=value lines:
#   pkg pkg_files pkg_bytes   the package, its files in ROOT, their bytes
#   pkg_xz        the changed files, tar | xz -6 (the package's compressed
#                 size, as in a .deb)
#   delta_file    the binary delta the new manifest names (ramboot manifest
#                 --delta-from=OLD: zstd, level 3, long-distance matching)
#   delta         what the refresh reads from the server: the delta and
#                 the manifest (the index is built from the slot), bytes
#   delta_how     "applied" when the refresh used the delta
#   chunks        bytes of the chunks a refresh without the delta
#                 (--no-delta) reads from the new image
#   chunks_data chunks_inode chunks_dir chunks_tables
#                 the same, by where they lie in the new squashfs: data
#                 blocks, inode table, directory table, the other tables
#   local         bytes that refresh copied from the old slot
#   manifest index  the new image's manifest and chunk index, bytes
#   delta_chunks  chunks + manifest + index: what a refresh without the
#                 delta reads from the server
#   ideal         zstd --patch-from=OLD -19 --long of the new image: a
#                 byte-exact binary delta that a server computing one per
#                 client would send; no chunk-based refresh reads less
#                 than the new bytes it holds
#   floor floor_super floor_data floor_frag floor_inode floor_dir floor_table
#   floor_unmapped
#                 the bytes of the new image's squashfs blocks (each one
#                 compressed stream) that the old image does not hold
#                 (bench/sqfs-blocks.py floor): what a refresh by whole
#                 blocks must read, by kind;
#                 floor_unmapped: bytes no block covers (0: a check)
#   limit         issue's target: 2 x pkg_xz + index
#
#   RAMBOOT_BIN       the ramboot to run (default ./ramboot, else static/)
#   CACHEDELTA_CHANGE=bump|insert  how the package's files change: bump
#                     (default) adds 1 to one byte in every 4 KiB, sizes
#                     stay; insert adds a byte after every 4 KiB, as a new
#                     version that changes the files' sizes
#   CACHEDELTA_KEEP=1 keep the two images and their indexes (WORKDIR/d1,
#                     WORKDIR/d2)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
rbtool=${RAMBOOT_BIN:-$top/ramboot}
[ -x "$rbtool" ] || rbtool=$top/static/ramboot

say() { echo "cache-delta: $*" >&2; }
die() { say "$*"; exit 1; }

[ $# -eq 4 ] || die "usage: $0 ROOT IMAGE PACKAGE WORKDIR"
root=$1 img=$2 pkg=$3 w=$4
{ [ -d "$root" ] && [ -f "$img" ]; } || die "$root or $img missing"
for t in mksquashfs losetup python3 xz zstd dpkg-query; do
	command -v "$t" >/dev/null || die "$t not installed"
done
mkdir -p "$w" || exit 1
empty=${CACHEDELTA_EMPTY:-$w/cache-empty.img}
[ -f "$empty" ] || die "$empty missing (an empty cache: ramboot cache init)"

cleanup() {
	[ -z "${cache_lo:-}" ] || losetup -d "$cache_lo" 2>/dev/null
	rm -rf "$w/root2" "$w/cache-delta.img" "$w/cache-chunks.img"
	[ "${CACHEDELTA_KEEP:-0}" = 1 ] || rm -rf "$w/d1" "$w/d2"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"

# The package's files that ROOT holds (regular files only).
dpkg-query -L "$pkg" 2>/dev/null | while read -r f; do
	[ -f "$root$f" ] && [ ! -L "$root$f" ] && echo "$f"
done > "$w/pkg.files"
[ -s "$w/pkg.files" ] || die "$root holds no file of $pkg"

rm -rf "$w/root2"
cp -a "$root" "$w/root2"
python3 - "$w/root2" "$w/pkg.files" "${CACHEDELTA_CHANGE:-bump}" <<'PY'
import sys
root = sys.argv[1]
for name in open(sys.argv[2]).read().split("\n"):
    if not name:
        continue
    with open(root + name, "r+b") as f:
        d = bytearray(f.read())
        if sys.argv[3] == "insert":
            d = b"".join(d[i:i + 4096] + b"\x01" for i in range(0, len(d), 4096))
        else:
            for i in range(0, len(d), 4096):
                d[i] = (d[i] + 1) & 0xff
        f.seek(0)
        f.write(d)
PY
pkg_bytes=$(sed "s|^|$w/root2|" "$w/pkg.files" | xargs cat | wc -c)
pkg_xz=$(tar -C "$w/root2" -cf - -T <(sed 's|^/||' "$w/pkg.files") | xz -6 | wc -c)
mkdir -p "$w/d1" "$w/d2"
# IMAGE's compressor, block size and the build options its superblock
# records (a compressor's own options, such as a level, are not taken)
sqopts=$(python3 "$top/bench/sqfs-blocks.py" options "$img")
[ -n "$sqopts" ] || die "$img is not a squashfs image"
# shellcheck disable=SC2086 # options without blanks
mksquashfs "$w/root2" "$w/d2/x86_64.img" $sqopts -noappend -quiet -all-root -no-progress \
	> "$w/mksquashfs2.log" 2>&1 || die "mksquashfs of the rebuilt root failed"
rm -rf "$w/root2"
cp "$img" "$w/d1/x86_64.img"
"$rbtool" manifest --cindex --delta-from="$w/d1/x86_64.img" -o "$w/d2/x86_64.img.manifest" \
	"$w/d2/x86_64.img" > "$w/manifest2.log" 2>&1 ||
	die "ramboot manifest of the rebuilt image failed: $(tail -n 3 "$w/manifest2.log")"
idx=$(stat -c %s "$w/d2/x86_64.img.cindex")
man=$(stat -c %s "$w/d2/x86_64.img.manifest")
delta_file=$(stat -c %s "$w/d2/x86_64.img.delta" 2>/dev/null || echo 0)

# A cache that holds the old image, filled by this ramboot (its chunker
# made the old slot's index), then the refresh to the new one: with the
# delta, and again from the same old cache without it.
"$rbtool" manifest --cindex -o "$w/d1/x86_64.img.manifest" "$w/d1/x86_64.img" \
	> "$w/manifest1.log" 2>&1 || die "ramboot manifest of the old image failed"
cp --sparse=always "$empty" "$w/cache-delta.img"
cache_do "$w/cache-delta.img" refresh --manifest="$w/d1/x86_64.img.manifest" \
	"$w/d1/x86_64.img" > "$w/delta-fill.out" 2>&1 ||
	die "the old image's cache fill failed: $(tail -n 3 "$w/delta-fill.out")"
cp --sparse=always "$w/cache-delta.img" "$w/cache-chunks.img"
cache_do "$w/cache-delta.img" refresh --manifest="$w/d2/x86_64.img.manifest" \
	"$w/d2/x86_64.img" > "$w/delta.out" 2>&1 ||
	die "the refresh failed: $(tail -n 3 "$w/delta.out")"
cache_do "$w/cache-chunks.img" refresh --no-delta --manifest="$w/d2/x86_64.img.manifest" \
	"$w/d2/x86_64.img" > "$w/chunks.out" 2>&1 ||
	die "the refresh without the delta failed: $(tail -n 3 "$w/chunks.out")"
rm -f "$w/cache-chunks.img"
net=$(sed -n 's/^bytes_network: //p' "$w/delta.out")
delta_how=$(sed -n 's/^delta: //p' "$w/delta.out")
# the index counts when the refresh read it
grep -qx 'index: slot' "$w/delta.out" || net=$((net + idx))
chunks=$(sed -n 's/^bytes_network: //p' "$w/chunks.out")
local_b=$(sed -n 's/^bytes_local: //p' "$w/chunks.out")
# zstd's window must cover the old image
wlog=28
while [ $((1 << wlog)) -lt "$(stat -c %s "$w/d1/x86_64.img")" ] && [ $wlog -lt 31 ]; do
	wlog=$((wlog + 1))
done
floor=$(python3 "$top/bench/sqfs-blocks.py" floor "$w/d1/x86_64.img" "$w/d2/x86_64.img") ||
	die "bench/sqfs-blocks.py floor failed"
ideal=$(zstd -q -c -19 --long=$wlog --patch-from="$w/d1/x86_64.img" "$w/d2/x86_64.img" 2>/dev/null | wc -c)

# Where the chunks read lie in the new image: squashfs's data blocks
# (files and fragments), its inode table, its directory table, and the
# tables after it (fragment, export, id); the superblock's chunk counts as
# data.
split=$(python3 - "$w/d2/x86_64.img" "$w/d1/x86_64.img.cindex" "$w/d2/x86_64.img.cindex" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    sb = f.read(96)
if sb[:4] != b"hsqs":
    print("chunks_data=- chunks_inode=- chunks_dir=- chunks_tables=-")
    sys.exit(0)
used, = struct.unpack_from("<Q", sb, 40)
ino, dirs = struct.unpack_from("<QQ", sb, 64)
after = [x for x in struct.unpack_from("<QQQQ", sb, 48) + struct.unpack_from("<Q", sb, 80)
         if dirs < x < (1 << 64) - 1]
tables = min(after) if after else used
def chunks(p):
    for line in open(p):
        f = line.split()
        if f[0] == "chunk":
            yield int(f[1]), int(f[2]), f[3]
have = set(h for _, _, h in chunks(sys.argv[2]))
regions = [("data", 0, ino), ("inode", ino, dirs), ("dir", dirs, tables), ("tables", tables, 1 << 64)]
tot = dict((r, 0) for r, _, _ in regions)
for off, n, h in chunks(sys.argv[3]):
    if h in have:
        continue
    for r, lo, hi in regions:
        tot[r] += max(0, min(off + n, hi) - max(off, lo))
print(" ".join("chunks_%s=%d" % (r, tot[r]) for r, _, _ in regions))
PY
)

echo "pkg=$pkg"
echo "pkg_files=$(wc -l < "$w/pkg.files")"
echo "pkg_bytes=$pkg_bytes"
echo "pkg_xz=$pkg_xz"
echo "chunks=$chunks"
echo "local=$local_b"
echo "manifest=$man"
echo "index=$idx"
echo "delta_file=$delta_file"
echo "delta_how=${delta_how:-none}"
echo "delta=$((net + man))"
echo "delta_chunks=$((chunks + man + idx))"
echo "ideal=$ideal"
echo "limit=$((2 * pkg_xz + idx))"
for kv in $split $floor; do
	echo "$kv"
done
