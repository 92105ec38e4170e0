#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/sqfs-blocks.py - the blocks of a squashfs 4.0 image, and the floor
of a refresh from one image to the next.

  sqfs-blocks.py list IMAGE        offset, length and kind of every block
  sqfs-blocks.py options IMAGE     the mksquashfs options that make an
                                   image like it: compressor, block size,
                                   the flags its superblock records (not
                                   a compressor's own options)
  sqfs-blocks.py floor OLD NEW     bytes of NEW's blocks that OLD does not
                                   hold, in all and by kind

A block is what squashfs compresses on its own: a file's data block, a
fragment block, an 8 KiB metadata block of a table, a table's index
array, the superblock. A block's bytes change as a whole when anything
in it changes (each is one compressed stream), and a refresh by whole
blocks (one that takes from the old image only the blocks it holds whole
and reads the others from the server, as a refresh by chunks cut at the
blocks' starts nearly does) cannot read fewer bytes than the new image's
blocks that the old one does not hold anywhere: the floor. A byte-level
delta can go below it where a changed block keeps some of its old bytes
(a block stored uncompressed, a stream's start before its first change).

Kinds: super, data (a file's blocks), frag (fragment blocks), inode, dir
(the inode and directory tables' metadata blocks), table (the fragment,
id, export and xattr tables: their metadata blocks and index arrays).
Needs the image's compressor in Python (gzip, xz, lzma) or, for zstd, the
zstd command; lzo and lz4 images are refused.
"""
import hashlib
import lzma
import struct
import subprocess
import sys
import zlib

NONE = 0xFFFFFFFFFFFFFFFF


class Image:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.b = f.read()
        b = self.b
        if len(b) < 96 or b[:4] != b"hsqs":
            raise SystemExit("%s: not a squashfs image" % path)
        (self.inodes, _, self.bs, self.nfrag, self.comp, _, self.flags,
         self.nids, major, _) = struct.unpack_from("<IIIIHHHHHH", b, 4)
        if major != 4:
            raise SystemExit("%s: squashfs %d, not 4" % (path, major))
        (self.root, self.used, self.id_tab, self.xattr_tab, self.ino_tab,
         self.dir_tab, self.frag_tab, self.exp_tab) = struct.unpack_from("<QQQQQQQQ", b, 32)
        if self.comp not in (1, 2, 4, 6):
            raise SystemExit("%s: compressor %d: only gzip, lzma, xz, zstd" % (path, self.comp))
        self.blocks = []  # (offset, length, kind)
        self.meta_cache = {}

    def unpack(self, data):
        if self.comp == 1:
            return zlib.decompress(data)
        if self.comp in (2, 4):
            return lzma.decompress(data)
        return subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout

    def meta(self, off):
        """The metadata block at off: (its bytes uncompressed, its length on disk)."""
        if off not in self.meta_cache:
            hdr, = struct.unpack_from("<H", self.b, off)
            n = hdr & 0x7FFF
            raw = self.b[off + 2:off + 2 + n]
            self.meta_cache[off] = (raw if hdr & 0x8000 else self.unpack(raw), n + 2)
        return self.meta_cache[off]

    def meta_run(self, start, end, kind):
        """The metadata blocks from start up to end, as blocks; returns their
        uncompressed bytes and a map of block offset to position in them."""
        data, pos, off = bytearray(), {}, start
        while off < end:
            d, n = self.meta(off)
            pos[off - start] = len(data)
            data += d
            self.blocks.append((off, n, kind))
            off += n
        return bytes(data), pos

    def table(self, start, count, entry, kind):
        """A table of count entries of entry bytes: an index array of u64
        block offsets at start, each naming a metadata block."""
        if start == NONE or count == 0:
            return b""
        nblk = (count * entry + 8191) // 8192
        self.blocks.append((start, nblk * 8, kind))
        data = bytearray()
        for i in range(nblk):
            off, = struct.unpack_from("<Q", self.b, start + 8 * i)
            d, n = self.meta(off)
            self.blocks.append((off, n, kind))
            data += d
        return bytes(data)

    def walk(self):
        b = self.b
        self.blocks.append((0, 96, "super"))
        frag_end = [t for t in (self.frag_tab, self.exp_tab, self.id_tab, self.xattr_tab)
                    if t != NONE and t > self.dir_tab]
        tables_at = min(frag_end) if frag_end else self.used
        inodes, _ = self.meta_run(self.ino_tab, self.dir_tab, "inode")
        # The directory table ends where the first table after it starts; the
        # fragment table's metadata blocks lie before its index array.
        dir_end = tables_at
        frag = self.table(self.frag_tab, self.nfrag, 16, "table")
        if self.nfrag and self.frag_tab != NONE:
            first, = struct.unpack_from("<Q", b, self.frag_tab)
            dir_end = min(dir_end, first)
        for t, cnt, ent in ((self.exp_tab, self.inodes, 8), (self.id_tab, self.nids, 4)):
            if t != NONE and cnt:
                first, = struct.unpack_from("<Q", b, t)
                dir_end = min(dir_end, first)
        self.meta_run(self.dir_tab, dir_end, "dir")
        self.table(self.exp_tab, self.inodes, 8, "table")
        self.table(self.id_tab, self.nids, 4, "table")
        if self.xattr_tab != NONE:
            # xattr id table: u64 kv start, u32 count, u32 pad, then u64 block offsets
            kv, cnt = struct.unpack_from("<QI", b, self.xattr_tab)
            nblk = (cnt * 16 + 8191) // 8192
            self.blocks.append((self.xattr_tab, 16 + 8 * nblk, "table"))
            for i in range(nblk):
                off, = struct.unpack_from("<Q", b, self.xattr_tab + 16 + 8 * i)
                self.blocks.append((off, self.meta(off)[1], "table"))
            first = min([off for off, _, k in self.blocks if k == "table" and off >= kv] + [self.xattr_tab])
            off = kv
            while off < first:
                n = self.meta(off)[1]
                self.blocks.append((off, n, "table"))
                off += n
        for i in range(self.nfrag):
            start, size, _ = struct.unpack_from("<QII", frag, 16 * i)
            if size & 0xFFFFFF:
                self.blocks.append((start, size & 0xFFFFFF, "frag"))
        # The files' data blocks, from the inodes.
        p, seen = 0, 0
        while p < len(inodes) and seen < self.inodes:
            t, = struct.unpack_from("<H", inodes, p)
            seen += 1
            if t == 1:
                p += 32
            elif t == 8:
                icount, = struct.unpack_from("<H", inodes, p + 32)
                p += 40
                for _ in range(icount):
                    nsize, = struct.unpack_from("<I", inodes, p + 8)
                    p += 12 + nsize + 1
            elif t in (2, 9):
                if t == 2:
                    start, frag_i, _, size = struct.unpack_from("<IIII", inodes, p + 16)
                    p += 32
                else:
                    start, size, _, _, frag_i, _, _ = struct.unpack_from("<QQQIIII", inodes, p + 16)
                    p += 56
                n = size // self.bs if frag_i != 0xFFFFFFFF else (size + self.bs - 1) // self.bs
                off = start
                for k in range(n):
                    bsz, = struct.unpack_from("<I", inodes, p + 4 * k)
                    bsz &= 0xFFFFFF
                    if bsz:
                        self.blocks.append((off, bsz, "data"))
                    off += bsz
                p += 4 * n
            elif t in (3, 10):
                tlen, = struct.unpack_from("<I", inodes, p + 20)
                p += 24 + tlen + (4 if t == 10 else 0)
            elif t in (4, 5):
                p += 24
            elif t in (11, 12):
                p += 28
            elif t in (6, 7):
                p += 20
            elif t in (13, 14):
                p += 24
            else:
                raise SystemExit("inode type %d at %d: not understood" % (t, p))
        # A block shared by two files (squashfs's duplicates) counts once.
        self.blocks = sorted(set(self.blocks))
        return self.blocks


FLAG_OPTS = ((0x1, "-noI"), (0x2, "-noD"), (0x8, "-noF"), (0x10, "-no-fragments"),
             (0x20, "-always-use-fragments"), (0x100, "-noX"), (0x200, "-no-xattrs"))
COMP_NAMES = {1: "gzip", 2: "lzma", 3: "lzo", 4: "xz", 5: "lz4", 6: "zstd"}


def options(path):
    with open(path, "rb") as f:
        sb = f.read(28)
    if len(sb) < 28 or sb[:4] != b"hsqs":
        raise SystemExit("%s: not a squashfs image" % path)
    bs, = struct.unpack_from("<I", sb, 12)
    comp, flags = struct.unpack_from("<HxxH", sb, 20)
    if comp not in COMP_NAMES:
        raise SystemExit("%s: compressor %d unknown" % (path, comp))
    opts = ["-comp", COMP_NAMES[comp], "-b", str(bs)]
    opts += [opt for bit, opt in FLAG_OPTS if flags & bit]
    if not flags & 0x40:
        opts.append("-no-duplicates")
    if not flags & 0x80:
        opts.append("-no-exports")
    return " ".join(opts)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "options":
        print(options(sys.argv[2]))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        for off, n, k in Image(sys.argv[2]).walk():
            print(off, n, k)
        return
    if len(sys.argv) != 4 or sys.argv[1] != "floor":
        raise SystemExit(__doc__)
    old, new = Image(sys.argv[2]), Image(sys.argv[3])
    have = set(hashlib.sha256(old.b[o:o + n]).digest() for o, n, _ in old.walk())
    tot = {"all": 0, "super": 0, "data": 0, "frag": 0, "inode": 0, "dir": 0, "table": 0}
    covered = 0
    for o, n, k in new.walk():
        covered += n
        if hashlib.sha256(new.b[o:o + n]).digest() not in have:
            tot["all"] += n
            tot[k] += n
    print(" ".join(("floor=%d" if k == "all" else "floor_" + k + "=%d") % v for k, v in tot.items()))
    # Bytes of NEW no block covers (padding to 4 KiB, gaps): a check on the walk.
    print("floor_unmapped=%d" % max(0, new.used - covered))


if __name__ == "__main__":
    main()
