#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/vda-split.py FSIMAGE LOG: what a boot read from the server disk,
# by file. LOG holds the guest's block trace of the disk ("CBENCH blkread
# SECTOR SECTORS COMM RWBS" lines, bench/cache-bench-init); FSIMAGE is the
# ext4 file system the disk held (the host's file). Every traced byte is
# put on the block it read, and the block on its owner (debugfs,
# dumpe2fs): a regular file's data ("file PATH"), or the file system's
# own: the superblock and its backups, the group descriptors and their
# reserved room, the bitmaps, the inode tables, the journal, a
# directory's blocks, a file's extent tree blocks, the bytes before the
# superblock, and blocks no one owns (free).
#
# On stdout, tab-separated: "total BYTES READS", "trace ENTRIES WRITTEN"
# (the trace buffer lost requests when they differ), then one line per
# owner, "file PATH BYTES READS READAHEAD_BYTES" or "meta WHAT BYTES
# READS READAHEAD_BYTES", most bytes first, then a line per (owner,
# process), "by PATH-OR-WHAT COMM BYTES". READS counts the requests that
# touched the owner (a request over two owners counts for both).
import re
import subprocess
import sys


def debugfs(fs, cmd):
    return subprocess.run(["debugfs", "-R", cmd, fs], capture_output=True, text=True,
                          check=False).stdout


def ranges(text):
    """Block numbers of "A-B" and "A" in TEXT."""
    out = []
    for a, b in re.findall(r"(\d+)(?:-(\d+))?", text):
        out.extend(range(int(a), int(b or a) + 1))
    return out


def owners(fs):
    """block -> ("file", path) or ("meta", what); and the block size"""
    own = {}
    head = subprocess.run(["dumpe2fs", fs], capture_output=True, text=True,
                          check=False).stdout
    bs = int(re.search(r"^Block size:\s*(\d+)", head, re.M).group(1))
    first = int(re.search(r"^First block:\s*(\d+)", head, re.M).group(1))
    for b in range(first):
        own[b] = ("meta", "before the superblock")
    rules = [(r"(?:Primary|Backup) superblock at (\d+)", "superblock"),
             (r"Group descriptors at ([\d-]+)", "group descriptors"),
             (r"Reserved GDT blocks at ([\d-]+)", "reserved GDT blocks"),
             (r"Block bitmap at (\d+)", "block bitmaps"),
             (r"Inode bitmap at (\d+)", "inode bitmaps"),
             (r"Inode table at ([\d-]+)", "inode tables")]
    for rx, what in rules:
        for m in re.finditer(rx, head):
            for b in ranges(m.group(1)):
                own[b] = ("meta", what)
    # The journal (its inode, 8 unless the superblock names another).
    m = re.search(r"^Journal inode:\s*(\d+)", head, re.M)
    if m:
        for b in ranges(debugfs(fs, "blocks <%s>" % m.group(1))):
            own[b] = ("meta", "journal")
    # Every file and directory, from the root down.
    todo = ["/"]
    while todo:
        d = todo.pop()
        for b in ranges(debugfs(fs, "blocks \"%s\"" % d)):
            own[b] = ("meta", "directory " + d)
        for line in debugfs(fs, "ls -p \"%s\"" % d).splitlines():
            f = line.split("/")
            if len(f) < 7 or f[5] in (".", ".."):
                continue
            path = d.rstrip("/") + "/" + f[5]
            if f[2].startswith("04"):
                todo.append(path)
            elif f[2].startswith("10"):
                for b in ranges(debugfs(fs, "blocks \"%s\"" % path)):
                    own[b] = ("file", path)
    return own, bs


def main():
    fs, log = sys.argv[1], sys.argv[2]
    own, bs = owners(fs)
    per = bs // 512
    reads = []
    entries = written = "-"
    for line in open(log, errors="replace"):
        f = line.split()
        if len(f) >= 6 and f[0] == "CBENCH" and f[1] == "blkread":
            reads.append((int(f[2]), int(f[3]), f[4], f[5] if len(f) > 5 else ""))
        m = re.match(r"CBENCH blktrace entries=(\d+) written=(\d+)", line)
        if m:
            entries, written = m.group(1), m.group(2)
    # Blocks no one owns, and a file's extent tree blocks: icheck.
    unknown = set()
    for sector, n, _, _ in reads:
        for b in range(sector // per, (sector + n - 1) // per + 1):
            if b not in own:
                unknown.add(b)
    if unknown:
        names = {}
        out = debugfs(fs, "icheck " + " ".join(str(b) for b in sorted(unknown)))
        inos = {}
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0].isdigit() and f[1].isdigit():
                inos[int(f[0])] = int(f[1])
        if inos:
            out = debugfs(fs, "ncheck " + " ".join(str(i) for i in sorted(set(inos.values()))))
            for line in out.splitlines():
                f = line.split(None, 1)
                if len(f) == 2 and f[0].isdigit():
                    names.setdefault(int(f[0]), f[1].strip())
        for b in unknown:
            if b in inos:
                own[b] = ("meta", "extent blocks of " + names.get(inos[b], "<%d>" % inos[b]))
            else:
                own[b] = ("meta", "free blocks")
    total = 0
    tot = {}
    cnt = {}
    ra = {}
    by = {}
    for sector, n, comm, rwbs in reads:
        total += n * 512
        seen = set()
        s = sector
        while s < sector + n:
            b = s // per
            e = min(sector + n, (b + 1) * per)
            o = own[b]
            nb = (e - s) * 512
            tot[o] = tot.get(o, 0) + nb
            if "A" in rwbs:
                ra[o] = ra.get(o, 0) + nb
            by[(o, comm)] = by.get((o, comm), 0) + nb
            seen.add(o)
            s = e
        for o in seen:
            cnt[o] = cnt.get(o, 0) + 1
    print("total\t%d\t%d" % (total, len(reads)))
    print("trace\t%s\t%s" % (entries, written))
    for o in sorted(tot, key=lambda k: -tot[k]):
        print("%s\t%s\t%d\t%d\t%d" % (o[0], o[1], tot[o], cnt[o], ra.get(o, 0)))
    for (o, comm) in sorted(by, key=lambda k: -by[k]):
        print("by\t%s\t%s\t%d" % (o[1], comm, by[(o, comm)]))


main()
