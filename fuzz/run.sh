#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz/run.sh [SECONDS] - build the libFuzzer targets into build/fuzz/ and
# run each for SECONDS/10 (default 300 in total) on a seed corpus made here.
# Prints TAP: "ok N - fuzz NAME (RUNS runs)". A crash leaves the input in
# build/fuzz/artifacts/ and makes the run fail. See docs/fuzzing.md.
# The Makefile builds each target (build/fuzz/fuzz_NAME): fuzz/fuzz_NAME.c
# linked against src/lib/ and src/format/ (build/fuzz/libramboot-fuzz.a)
# and the folders of src/ the target names there (FUZZ_DIRS_NAME).
#   FUZZ_CC=clang    compiler (needs the libFuzzer runtime: libclang-rt-*-dev)
#   FUZZ_ARGS=...    extra libFuzzer options, e.g. "-jobs=2 -workers=2"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

secs=${1:-300}
case $secs in
'' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac
each=$((secs / 10))
[ "$each" -ge 1 ] || each=1

cc=${FUZZ_CC:-clang}
out=build/fuzz
targets="manifest lzop sizeexpr cmdline profile sign cindex cstate delta http dns sqfs"
n=0
failed=0

echo "1..12"

# seed NAME DIR: a few valid inputs to start from
seed() {
	d=$2
	rm -rf "$d"
	mkdir -p "$d"
	case $1 in
	manifest)
		h=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
		printf 'ramboot-manifest 1\nsize 1073741824\nsha256 %s\n' "$h" >"$d/good"
		printf 'ramboot-manifest 1\n# comment\n\nsha256 %s\ncompression zstd\nsize 0' "$h" >"$d/comments"
		printf 'ramboot-manifest 1\r\nsize 42\r\nsha256 %s\r\n' "$h" >"$d/crlf"
		printf 'ramboot-manifest 1\nsize 18446744073709551615\nsha256 %s\nsignature x\n' "$h" >"$d/max"
		# version 2: three chunks of 64 KiB (the last one short), an
		# empty image, unknown keys between chunks, a chunk missing
		printf 'ramboot-manifest 2\nsize 131073\nsha256 %s\ncompression zstd\nchunk-size 65536\nchunk 0 %s\nchunk 1 %s\nchunk 2 %s\n' "$h" "$h" "$h" "$h" >"$d/v2"
		printf 'ramboot-manifest 2\nsize 0\nsha256 %s\nchunk-size 4194304\n' "$h" >"$d/v2-empty"
		printf 'ramboot-manifest 2\r\nchunk-size 1073741824\r\nsize 1073741825\r\nsha256 %s\r\nmemlimit 1\r\nchunk 0 %s\r\nverity x\r\nchunk 1 %s\r\n' "$h" "$h" "$h" >"$d/v2-crlf"
		printf 'ramboot-manifest 2\nsize 65537\nsha256 %s\nchunk-size 65536\nchunk 0 %s\n' "$h" "$h" >"$d/v2-short"
		# the chunk index's keys, and one without its hash
		printf 'ramboot-manifest 2\nsize 65536\nsha256 %s\nchunk-size 65536\nchunk 0 %s\ncindex x.img.cindex-9f86d081884c7d65\ncindex-sha256 %s\n' "$h" "$h" "$h" >"$d/v2-cindex"
		printf 'ramboot-manifest 2\nsize 0\nsha256 %s\nchunk-size 65536\ncindex ../x\n' "$h" >"$d/v2-cindex-bad"
		printf '%s' "$h" >"$d/hex" ;;
	lzop)
		if ! command -v lzop >/dev/null; then
			printf '\211LZO\000\r\n\032\n' >"$d/magic"
			return 0
		fi
		printf 'hello\n' >"$d/.in"
		lzop -1 -c "$d/.in" >"$d/l1"
		lzop -9 -c "$d/.in" >"$d/l9"
		lzop --crc32 -c "$d/.in" >"$d/crc"
		lzop -c <"$d/.in" >"$d/stdin"
		rm -f "$d/.in" ;;
	sizeexpr)
		printf 'min(ram, 8G)' >"$d/default"
		printf '50%%' >"$d/pct"
		printf 'max(ram / 2 + 256M, (1G - 512K) * 2)' >"$d/nested"
		printf 'min(ram / 2, 4096)' >"$d/old"
		printf '30000' >"$d/bare"
		printf '1.5GiB' >"$d/size"
		printf '12MiB/s' >"$d/bytes"
		printf '100Mbit/s' >"$d/bits"
		printf '500m' >"$d/oldrate" ;;
	cmdline)
		printf 'console=ttyS0 ramboot=ram ramboot.image="/a b/x.img" ramboot.swap=zram ramboot.swap.size=min(ram,4G) ltsp.image=images/x.img,squashfs,,b.img -- init=/x' >"$d/line"
		printf 'RAMBOOT=ram\nexport RAMBOOT_SWAP_SIZE="50%%"\n# c\nRAMBOOT_MINFREE='"'"'1G'"'"'\n' >"$d/conf" ;;
	profile)
		h=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
		e=2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
		printf 'ramboot-profile 1\nimage-size 409700\nimage-sha256 %s\nimage-ends-sha256 %s\npage-size 4096\nrange 8192 4096\nrange 0 8192\nrange 405504 4196\n' "$h" "$e" >"$d/good"
		printf '# c\r\nramboot-profile 1\r\npage-size 512\r\nimage-ends-sha256 %s\r\nimage-size 100000\r\n\trange 99840 160\r\nrange 512 1024' "$e" >"$d/crlf"
		printf 'ramboot-profile 1\nimage-size 131072\nimage-sha256 %s\npage-size 65536\n' "$h" >"$d/empty"
		printf 'ramboot-profile 1\nimage-size 18446744073709551615\nimage-sha256 %s\npage-size 1048576\nrange 18446744073708503040 1048575\n' "$h" >"$d/max" ;;
	sign)
		h=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
		s=A2mQlhiNJHQuKUQZQBA/7gi+Fi7FkUsTjl5ibsIODoVI+bd12cDAEfTqKTSQXspS9O4cQM9WLzzahxrSU78vBQ==
		printf 'ramboot-manifest 1\nsize 1\nsha256 %s\nsignature ed25519 1c64ea2d433efc67 %s\n' "$h" "$s" >"$d/signed"
		printf 'signature ed25519 1c64ea2d433efc67 %s' "$s" >"$d/only"
		printf 'ramboot-manifest 1\nsize 1\nsha256 %s\n' "$h" >"$d/unsigned"
		printf 'a\nsignature ed25519 1c64ea2d433efc67 %s\nb\n' "$s" >"$d/middle" ;;
	cindex)
		h=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
		printf 'ramboot-cindex 1\nchunker gear-fastcdc 16384 65536 262144\nsize 0\nchunks 0\n' >"$d/empty"
		printf 'ramboot-cindex 1\nchunker gear-fastcdc 16384 65536 262144\nsize 20000\nchunks 2\nchunk 0 16384 %s\nchunk 16384 3616 %s\n' "$h" "$h" >"$d/two"
		printf 'ramboot-cindex 1\nchunker gear-fastcdc 4096 4096 4096\nsize 1\nchunks 1\nchunk 0 1 %s\n' "$h" >"$d/tiny" ;;
	cstate)
		# each with its check line: the SHA-256 of the lines before it
		h=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
		printf 'ramboot-cache-state 1\ngeneration 0\nactive -\nrefresh 0 0 0\n' >"$d/empty"
		printf 'ramboot-cache-state 1\ngeneration 7\nactive b\nslot a 4096 %s - %s\nslot b 8192 %s %s %s\nrefresh 1718000000 2355322 65838982\n' \
			"$h" "$h" "$h" "$h" "$h" >"$d/two"
		for f in "$d/empty" "$d/two"; do
			printf 'check %s\n' "$(sha256sum <"$f" | cut -c1-64)" >>"$f"
		done ;;
	delta)
		# deltas against fuzz_delta.c's older image: a few bytes
		# changed, a part moved, bytes added
		command -v zstd >/dev/null || { printf '\050\265\057\375' >"$d/magic"; return 0; }
		python3 - "$d" <<'PY'
import sys
d = sys.argv[1]
old = bytes((i * 7 + i // 251) & 0xff for i in range(65536))
open(d + "/.old", "wb").write(old)
a = bytearray(old); a[1000:1010] = b"0123456789"
open(d + "/.a", "wb").write(a)
open(d + "/.b", "wb").write(old[30000:] + old[:30000])
open(d + "/.c", "wb").write(old[:40000] + bytes(range(256)) * 8 + old[40000:])
PY
		for f in a b c; do
			zstd -q -c --patch-from="$d/.old" "$d/.$f" >"$d/$f" 2>/dev/null
		done
		rm -f "$d/.old" "$d/.a" "$d/.b" "$d/.c" ;;
	http)
		printf 'HTTP/1.1 206 Partial Content\r\nServer: nginx\r\nContent-Length: 100\r\nContent-Range: bytes 100-199/1000\r\nETag: "5f-3e8"\r\nLast-Modified: Mon, 07 Dec 2026 06:00:00 GMT\r\n\r\n' >"$d/range"
		printf 'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\nbody' >"$d/whole"
		printf 'HTTP/1.0 302 Found\nLocation: /b\nTransfer-Encoding: chunked\n\n' >"$d/redirect"
		printf 'http://[fd00::1]:8080/images/x.img?v=1#f' >"$d/url"
		printf '5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n' >"$d/chunked" ;;
	dns)
		# answers for image.lab (the last byte picks the name): an
		# address after a pointer to the question, a CNAME, NXDOMAIN
		q='\000\007\205\200\000\001\000\001\000\000\000\000\005image\003lab\000\000\001\000\001'
		printf "$q"'\300\014\000\001\000\001\000\000\002\130\000\004\012\000\000\004' >"$d/a"
		q='\000\007\201\200\000\001\000\002\000\000\000\000\005image\003lab\000\000\001\000\001'
		printf "$q"'\300\014\000\005\000\001\000\000\002\130\000\004\001x\300\022\300\047\000\001\000\001\000\000\002\130\000\004\012\000\000\004' >"$d/cname"
		printf '\000\007\205\203\000\001\000\000\000\000\000\000\005image\003lab\000\000\001\000\001\000' >"$d/nx" ;;
	sqfs)
		# small real images: metadata stored as is, and gzip
		command -v mksquashfs >/dev/null || { printf 'hsqs' >"$d/magic"; return 0; }
		mkdir -p "$d/.t/d"
		printf 'a\n' >"$d/.t/a"
		head -c 5000 /dev/zero >"$d/.t/d/b"
		ln "$d/.t/a" "$d/.t/d/h"
		mksquashfs "$d/.t" "$d/raw" -noI -noD -noF -noX -b 4096 -noappend -quiet -no-progress >/dev/null 2>&1
		mksquashfs "$d/.t" "$d/gzip" -b 4096 -noappend -quiet -no-progress >/dev/null 2>&1
		rm -rf "$d/.t" ;;
	esac
}

mkdir -p "$out/artifacts"
for t in $targets; do
	n=$((n + 1))
	bin=$out/fuzz_$t
	log=$out/fuzz_$t.log
	if ! command -v "$cc" >/dev/null; then
		echo "not ok $n - fuzz $t # $cc not found (tests/deps.sh install)"
		failed=1
		continue
	fi
	if ! make -j2 --no-print-directory FUZZ_CC="$cc" "$bin" >"$log" 2>&1; then
		sed 's/^/# /' "$log"
		echo "not ok $n - fuzz $t # build failed (is libclang-rt-*-dev installed?)"
		failed=1
		continue
	fi
	seed "$t" "$out/seed_$t"
	mkdir -p "$out/corpus_$t"
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$each" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/artifacts/$t-" ${FUZZ_ARGS:-} \
		"$out/corpus_$t" "$out/seed_$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" -eq 0 ]; then
		echo "ok $n - fuzz $t (${runs:-?} runs)"
	else
		grep -E 'ERROR|SUMMARY|Test unit written|abort|runtime error' "$log" | head -20 | sed 's/^/# /'
		echo "not ok $n - fuzz $t (exit $rc, log in $log)"
		failed=1
	fi
done
exit "$failed"
