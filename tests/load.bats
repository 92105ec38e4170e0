#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load`: round trips for every codec and source kind, the exit
# codes, corrupt input, verification, memory checks. Everything here runs
# without root; tests/load-root.bats has the tmpfs, zram and loop cases.

load helpers/common
load helpers/fault

setup_file() {
	fixtures_init
}

# The fault shim, built once per run (or FAULTINJ_SO), in a dynamically
# linked ramboot.
require_fault_shim() {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	faultinj_build
}

setup() {
	require_loader
	setup_out
}

# ---- command line ---------------------------------------------------------

@test "ramboot --version prints the version" {
	rb --version
	expect_status 0
	assert_output --regexp '^ramboot [0-9]+\.[0-9]+'
}

@test "ramboot help prints the usage on stdout" {
	rb help
	expect_status 0
	assert_output --partial 'load'
	assert_output --partial 'manifest'
}

@test "ramboot load --help prints the options on stdout, exit 0" {
	rb load --help
	expect_status 0
	assert_output --partial '--decompress'
	assert_output --partial '--sha256'
	assert_output --partial '--manifest'
	assert_output --partial '--min-free'
	assert_output --partial '--prefetch'
}

@test "load: unknown option is a usage error (exit 2)" {
	rb load --no-such-option "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

@test "load: missing DEST is a usage error (exit 2)" {
	rb load "$FIX/one.raw"
	expect_status 2
	[ -n "$stderr" ]
}

@test "load: no arguments is a usage error (exit 2)" {
	rb load
	expect_status 2
}

@test "load: too many arguments is a usage error (exit 2)" {
	rb load "$FIX/one.raw" "$OUT/x" "$OUT/y"
	assert_load_fail 2
}

@test "load: unknown --decompress value is a usage error (exit 2)" {
	rb load --decompress=bzip2 "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

@test "load: non-numeric --threads is a usage error (exit 2)" {
	rb load --threads=many "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

@test "load: malformed --sha256 is a usage error (exit 2)" {
	rb load --sha256=abc "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
	rb load --sha256="$(printf 'g%.0s' $(seq 64))" "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

@test "load: malformed --min-free is a usage error (exit 2)" {
	rb load --min-free=lots "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

@test "load: unknown --progress value is a usage error (exit 2)" {
	rb load --progress=fancy "$FIX/one.raw" "$OUT/x"
	assert_load_fail 2 "$OUT/x"
}

# ---- exit codes, one test each ------------------------------------------

@test "exit code 0: successful load" {
	rb load "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "exit code 1: corrupt input" {
	cp "$FIX/sqfs.zst" "$BATS_TEST_TMPDIR/bad.zst"
	truncate -s -100 "$BATS_TEST_TMPDIR/bad.zst"
	rb load "$BATS_TEST_TMPDIR/bad.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "exit code 2: usage error" {
	rb load --bogus
	expect_status 2
}

@test "exit code 3: not enough memory (--min-free larger than RAM)" {
	rb load --min-free=1T "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}

@test "load --min-free: a plain number is still bytes, with a warning naming the unit" {
	# 100000000 bytes stay free; as MiB it would be 95 TiB (exit 3)
	rb load --min-free=100000000 "$FIX/one.raw" "$OUT/img"
	expect_status 0
	[ "${stderr%%$'\n'*}" = 'ramboot: load: warning: --min-free=100000000: deprecated spelling, write --min-free=100000000B' ]
	cmp "$FIX/one.raw" "$OUT/img"
	rb load --min-free=95MiB "$FIX/one.raw" "$OUT/img2"
	expect_status 0
	[[ $stderr != *warning* ]]
}

@test "load --min-free: a rate, a fraction of a byte or a unit of none are usage errors" {
	local v
	for v in 12MB/s 1.5 1.5B 256X 1P -1; do
		rb load --min-free="$v" "$FIX/one.raw" "$OUT/img"
		assert_load_fail 2 "$OUT/img"
		[[ $stderr == *"--min-free: '$v'"* ]] || fail "$v: $stderr"
	done
}

@test "load: the summary gives sizes in binary units and the read rate in MiB/s and Mbit/s" {
	rb load --progress=none "$FIX/sqfs.raw" "$OUT/img"
	expect_status 0
	[[ $stderr =~ \ (KiB|MiB)\ in,\ .*\ in\ [0-9.]+\ s,\ reading\ [0-9.]+\ (B|KiB|MiB|GiB)/s\ =\ [0-9.]+\ Mbit/s ]]
	[[ $stderr != *MB/s* ]]
}

# ---- round trips: codec x image x source kind -----------------------------

@test "none, empty image, file: an empty source is refused (exit 1)" {
	rb load "$FIX/empty.raw" "$OUT/empty.img"
	assert_load_fail 1 "$OUT/empty.img"
}
@test "round trip: none, 1-byte image, file"   { roundtrip one none file; }
@test "round trip: none, squashfs, file"       { roundtrip sqfs none file; }
@test "round trip: zstd, empty image, file"    { roundtrip empty zstd file; }
@test "round trip: zstd, 1-byte image, file"   { roundtrip one zstd file; }
@test "round trip: zstd, squashfs, file"       { roundtrip sqfs zstd file; }
@test "round trip: xz, empty image, file"      { roundtrip empty xz file; }
@test "round trip: xz, 1-byte image, file"     { roundtrip one xz file; }
@test "round trip: xz, squashfs, file"         { roundtrip sqfs xz file; }
@test "round trip: lzo, empty image, file"     { roundtrip empty lzo file; }
@test "round trip: lzo, 1-byte image, file"    { roundtrip one lzo file; }
@test "round trip: lzo, squashfs, file"        { roundtrip sqfs lzo file; }
@test "round trip: gzip, empty image, file"    { roundtrip empty gzip file; }
@test "round trip: gzip, 1-byte image, file"   { roundtrip one gzip file; }
@test "round trip: gzip, squashfs, file"       { roundtrip sqfs gzip file; }

@test "none, empty image, stdin pipe: an empty source is refused (exit 1)" {
	rb_pipe "$FIX/empty.raw" load - "$OUT/empty.img"
	assert_load_fail 1 "$OUT/empty.img"
}
@test "round trip: none, 1-byte image, stdin pipe"   { roundtrip one none pipe; }
@test "round trip: none, squashfs, stdin pipe"       { roundtrip sqfs none pipe; }
@test "round trip: zstd, empty image, stdin pipe"    { roundtrip empty zstd pipe; }
@test "round trip: zstd, 1-byte image, stdin pipe"   { roundtrip one zstd pipe; }
@test "round trip: zstd, squashfs, stdin pipe"       { roundtrip sqfs zstd pipe; }
@test "round trip: xz, empty image, stdin pipe"      { roundtrip empty xz pipe; }
@test "round trip: xz, 1-byte image, stdin pipe"     { roundtrip one xz pipe; }
@test "round trip: xz, squashfs, stdin pipe"         { roundtrip sqfs xz pipe; }
@test "round trip: lzo, empty image, stdin pipe"     { roundtrip empty lzo pipe; }
@test "round trip: lzo, 1-byte image, stdin pipe"    { roundtrip one lzo pipe; }
@test "round trip: lzo, squashfs, stdin pipe"        { roundtrip sqfs lzo pipe; }
@test "round trip: gzip, empty image, stdin pipe"    { roundtrip empty gzip pipe; }
@test "round trip: gzip, 1-byte image, stdin pipe"   { roundtrip one gzip pipe; }
@test "round trip: gzip, squashfs, stdin pipe"       { roundtrip sqfs gzip pipe; }

@test "round trip: none, squashfs, stdin redirected from a file" { roundtrip sqfs none redirect; }
@test "round trip: zstd, squashfs, stdin redirected from a file" { roundtrip sqfs zstd redirect; }
@test "round trip: xz, squashfs, stdin redirected from a file"   { roundtrip sqfs xz redirect; }
@test "round trip: lzo, squashfs, stdin redirected from a file"  { roundtrip sqfs lzo redirect; }
@test "round trip: gzip, squashfs, stdin redirected from a file" { roundtrip sqfs gzip redirect; }

# ---- explicit codec vs auto-detection ---------------------------------------

@test "-d zstd explicit gives the same image as auto"  { roundtrip sqfs zstd file -d zstd; }
@test "-d xz explicit gives the same image as auto"    { roundtrip sqfs xz file --decompress=xz; }
@test "-d lzo explicit gives the same image as auto"   { roundtrip sqfs lzo file -d lzo; }
@test "-d gzip explicit gives the same image as auto"  { roundtrip sqfs gzip file --decompress gzip; }
@test "-d none explicit on a raw image"                { roundtrip sqfs none file -d none; }
@test "-d auto explicit on a zstd image"               { roundtrip sqfs zstd file -d auto; }
@test "-d zstd explicit from a pipe"                   { roundtrip sqfs zstd pipe -d zstd; }

@test "-d none copies a compressed file byte for byte" {
	rb load -d none "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.zst" "$OUT/img"
}

@test "auto-detection uses magic bytes, not the file name" {
	cp "$FIX/sqfs.zst" "$BATS_TEST_TMPDIR/image.gz"
	cp "$FIX/sqfs.xz" "$BATS_TEST_TMPDIR/image.squashfs"
	cp "$FIX/sqfs.raw" "$BATS_TEST_TMPDIR/image.zst"
	rb load "$BATS_TEST_TMPDIR/image.gz" "$OUT/a"
	assert_loaded "$FIX/sqfs.raw" "$OUT/a"
	rb load "$BATS_TEST_TMPDIR/image.squashfs" "$OUT/b"
	assert_loaded "$FIX/sqfs.raw" "$OUT/b"
	rb load "$BATS_TEST_TMPDIR/image.zst" "$OUT/c"
	assert_loaded "$FIX/sqfs.raw" "$OUT/c"
}

@test "-d zstd on a gzip file fails (exit 1), no output" {
	rb load -d zstd "$FIX/sqfs.gz" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "-d xz on a raw image fails (exit 1), no output" {
	rb load -d xz "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "-d gzip on an empty source fails (exit 1): no gzip member" {
	rb load -d gzip "$FIX/empty.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

# ---- stream variants --------------------------------------------------------

@test "zstd: two frames back to back (cat a.zst b.zst)" {
	rb load "$FIX/sqfs.multi.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: two frames from a pipe" {
	rb_pipe "$FIX/sqfs.multi.zst" load - "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: pzstd output (skippable frames between frames)" {
	[ -e "$FIX/sqfs.pzstd.zst" ] || skip "pzstd not installed"
	rb load "$FIX/sqfs.pzstd.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: frame without content size (compressed from a pipe)" {
	rb load "$FIX/sqfs.stream.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: multi-frame with -j1 and -j 2 and --threads=7 give the same image" {
	local j
	for j in -j1 "-j 2" --threads=7; do
		rm -f "$OUT/img"
		# shellcheck disable=SC2086
		rb load $j "$FIX/sqfs.multi.zst" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	done
}

@test "xz: multi-block (xz -T2 --block-size=1MiB)" {
	rb load "$FIX/sqfs.mb.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "xz: multi-block with -j1 and -j2" {
	rb load -j1 "$FIX/sqfs.mb.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	rm -f "$OUT/img"
	rb load -j2 "$FIX/sqfs.mb.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "xz: multi-block from a pipe" {
	rb_pipe "$FIX/sqfs.mb.xz" load - "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "xz: --check=crc32"  { rb load "$FIX/sqfs.crc32.xz" "$OUT/img";  assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "xz: --check=crc64"  { rb load "$FIX/sqfs.crc64.xz" "$OUT/img";  assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "xz: --check=sha256" { rb load "$FIX/sqfs.sha256.xz" "$OUT/img"; assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "xz: --check=none"   { rb load "$FIX/sqfs.none.xz" "$OUT/img";   assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }

@test "xz: two concatenated streams (xz -c a b)" {
	rb load "$FIX/sqfs.multi.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "lzo: lzop -1 (LZO1X-1(15))" { rb load "$FIX/sqfs.1.lzo" "$OUT/img"; assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "lzo: lzop -9 (LZO1X-999)"   { rb load "$FIX/sqfs.9.lzo" "$OUT/img"; assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "lzo: lzop --crc32"          { rb load "$FIX/sqfs.crc.lzo" "$OUT/img"; assert_loaded "$FIX/sqfs.raw" "$OUT/img"; }
@test "lzo: lzop from a pipe (no name, no mode)" {
	rb load "$FIX/sqfs.stream.lzo" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "gzip: two members (cat a.gz b.gz)" {
	rb load "$FIX/sqfs.multi.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "gzip: pigz output" {
	[ -e "$FIX/sqfs.pigz.gz" ] || skip "pigz not installed"
	rb load "$FIX/sqfs.pigz.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: ~100 frames of 64 KiB, -j2: output in stream order" {
	rb load -j2 "$FIX/sqfs.many.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "xz: ~100 blocks of 64 KiB, -j2: output in stream order" {
	rb load -j2 "$FIX/sqfs.many.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "gzip: ~100 members, -j2: output in stream order" {
	rb load -j2 "$FIX/sqfs.many.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: many frames from a pipe" {
	rb_pipe "$FIX/sqfs.many.zst" load -j2 - "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: an empty frame between two frames" {
	rb load "$FIX/sqfs.empty-mid.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "gzip: an empty member between two members" {
	rb load "$FIX/sqfs.empty-mid.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "zstd: many frames, one damaged near the end: exit 1, no output" {
	local f=$BATS_TEST_TMPDIR/bad.zst
	cp "$FIX/sqfs.many.zst" "$f"
	corrupt_byte "$f" $(($(stat -c %s "$f") - 3000))
	rb load -j2 "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

# ---- corrupt input: each codec, exit 1 with a message, nothing left -------

# bad_input CODEC HOW: load a damaged copy of the squashfs fixture
bad_input() {
	local codec=$1 how=$2 f size
	f=$BATS_TEST_TMPDIR/bad.$(codec_ext "$codec")
	cp "$(fixture sqfs "$codec")" "$f"
	size=$(stat -c %s "$f")
	case $how in
	half) truncate -s $((size / 2)) "$f" ;;
	last) truncate -s $((size - 1)) "$f" ;;
	# the middle of the payload: the transport codecs store the mostly
	# incompressible squashfs in raw/stored blocks, so only the inner
	# checksum (zstd XXH64, xz CRC64, lzop Adler-32, gzip CRC-32) sees it
	flip) corrupt_byte "$f" $((size / 2)) ;;
	garbage) printf 'trailing garbage\n' >>"$f" ;;
	zeros) head -c 512 /dev/zero >>"$f" ;;
	esac
	rb load --progress=none "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "zstd truncated in the middle: exit 1, no output"  { bad_input zstd half; }
@test "zstd missing its last byte: exit 1, no output"    { bad_input zstd last; }
@test "zstd flipped payload byte: exit 1, no output"     { bad_input zstd flip; }
@test "zstd trailing garbage: exit 1, no output"         { bad_input zstd garbage; }
@test "zstd trailing zero padding: exit 1, no output"    { bad_input zstd zeros; }
@test "xz truncated in the middle: exit 1, no output"    { bad_input xz half; }
@test "xz missing its last byte: exit 1, no output"      { bad_input xz last; }
@test "xz flipped payload byte: exit 1, no output"       { bad_input xz flip; }
@test "xz trailing garbage: exit 1, no output"           { bad_input xz garbage; }
@test "lzo truncated in the middle: exit 1, no output"   { bad_input lzo half; }
@test "lzo missing its last byte: exit 1, no output"     { bad_input lzo last; }
@test "lzo flipped payload byte: exit 1, no output"      { bad_input lzo flip; }
@test "lzo trailing garbage: exit 1, no output"          { bad_input lzo garbage; }
@test "gzip truncated in the middle: exit 1, no output"  { bad_input gzip half; }
@test "gzip missing its last byte: exit 1, no output"    { bad_input gzip last; }
@test "gzip flipped payload byte: exit 1, no output"     { bad_input gzip flip; }
@test "gzip trailing garbage: exit 1, no output"         { bad_input gzip garbage; }
@test "gzip trailing zero padding: exit 1, no output"    { bad_input gzip zeros; }

@test "zstd multi-frame, second frame damaged: exit 1, no output" {
	local f=$BATS_TEST_TMPDIR/bad.zst size1 size2
	cp "$FIX/sqfs.multi.zst" "$f"
	size1=$(stat -c %s "$FIX/sqfs.part1.zst")
	size2=$(stat -c %s "$FIX/sqfs.part2.zst")
	corrupt_byte "$f" $((size1 + size2 / 2))
	rb load -j2 "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "zstd multi-frame cut at the frame boundary plus 10 bytes: exit 1" {
	local f=$BATS_TEST_TMPDIR/bad.zst size1
	size1=$(stat -c %s "$FIX/sqfs.part1.zst")
	head -c $((size1 + 10)) "$FIX/sqfs.multi.zst" >"$f"
	rb load "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "xz multi-block, a block damaged: exit 1, no output (-j2)" {
	local f=$BATS_TEST_TMPDIR/bad.xz
	cp "$FIX/sqfs.mb.xz" "$f"
	corrupt_byte "$f" $(($(stat -c %s "$f") / 3))
	rb load -j2 "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "xz multi-block truncated: exit 1, no output (-j2)" {
	local f=$BATS_TEST_TMPDIR/bad.xz
	head -c $(($(stat -c %s "$FIX/sqfs.mb.xz") * 2 / 3)) "$FIX/sqfs.mb.xz" >"$f"
	rb load -j2 "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "gzip multi-member, garbage between the members: exit 1" {
	local f=$BATS_TEST_TMPDIR/bad.gz
	{ cat "$FIX/sqfs.part1.gz"; printf 'XX'; cat "$FIX/sqfs.part2.gz"; } >"$f"
	rb load "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "truncated zstd from a pipe: exit 1, no output" {
	local f=$BATS_TEST_TMPDIR/bad.zst
	head -c $(($(stat -c %s "$FIX/sqfs.zst") / 2)) "$FIX/sqfs.zst" >"$f"
	rb_pipe "$f" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "corrupt xz from a pipe: exit 1, no output" {
	local f=$BATS_TEST_TMPDIR/bad.xz
	cp "$FIX/sqfs.xz" "$f"
	corrupt_byte "$f" $(($(stat -c %s "$f") / 2))
	rb_pipe "$f" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "a failure prints exactly one line with --progress=none" {
	local f=$BATS_TEST_TMPDIR/bad.gz
	head -c 1000 "$FIX/sqfs.gz" >"$f"
	rb load --progress=none "$f" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] ||
		{ show_run; fail "expected one line on stderr"; }
	[[ $stderr =~ ^ramboot:\ load:\ .+:\ .+ ]] ||
		{ show_run; fail "not 'ramboot: load: <what>: <why>'"; }
}

# ---- verification -------------------------------------------------------------

@test "--sha256 matching: exit 0" {
	rb load --sha256="$(cat "$FIX/sqfs.sha256")" "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "--sha256 in upper case is accepted" {
	rb load --sha256="$(tr a-f A-F <"$FIX/sqfs.sha256")" "$FIX/sqfs.raw" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "--sha256 of the empty image" {
	rb load --sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 \
		"$FIX/empty.xz" "$OUT/img"
	assert_loaded "$FIX/empty.raw" "$OUT/img"
}

@test "--sha256 wrong, raw source: exit 1, no output" {
	rb load --sha256="$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "--sha256 wrong, each codec: exit 1, no output" {
	local c wrong
	wrong=$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)
	for c in zstd xz lzo gzip; do
		rb load --sha256="$wrong" "$(fixture sqfs "$c")" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
	done
}

@test "--sha256 wrong, stdin pipe: exit 1, no output" {
	rb_pipe "$FIX/sqfs.zst" load --sha256="$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "--sha256 with every codec and threads: exit 0" {
	local c
	for c in none zstd xz lzo gzip; do
		rm -f "$OUT/img"
		rb load -j2 --sha256="$(cat "$FIX/sqfs.sha256")" "$(fixture sqfs "$c")" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	done
}

# ---- memory -----------------------------------------------------------------

@test "--min-free larger than RAM: exit 3, nothing written" {
	rb load --min-free=1T "$FIX/sqfs.zst" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}

@test "MemAvailable below the default --min-free (fixture meminfo): exit 3" {
	# 100 MiB available < 256 MiB default reserve, even for a 1-byte image
	RAMBOOT_ROOT=$(fake_root 102400) rb load "$FIX/one.raw" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}

@test "plenty of MemAvailable (fixture meminfo): exit 0" {
	RAMBOOT_ROOT=$(fake_root 8388608) rb load "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "--min-free=0 with a tiny MemAvailable still loads a small image" {
	RAMBOOT_ROOT=$(fake_root 65536) rb load --min-free=0 "$FIX/sqfs.raw" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "the image size counts: MemAvailable - image < --min-free is exit 3 (raw)" {
	local big=$BATS_TEST_TMPDIR/big.raw root
	truncate -s 64M "$big"
	root=$(fake_root $((300 * 1024)))
	# 300 MiB - 64 MiB = 236 MiB < 256 MiB
	RAMBOOT_ROOT=$root rb load --min-free=256M "$big" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
	# 300 MiB - 1 byte >= 256 MiB
	RAMBOOT_ROOT=$root rb load --min-free=256M "$FIX/one.raw" "$OUT/img"
	assert_loaded "$FIX/one.raw" "$OUT/img"
}

@test "the image size counts: zstd frame content size is the estimate (exit 3)" {
	local big=$BATS_TEST_TMPDIR/big.raw
	truncate -s 64M "$big"
	zstd -q -c "$big" >"$big.zst"
	RAMBOOT_ROOT=$(fake_root $((300 * 1024))) rb load --min-free=256M "$big.zst" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}

@test "exit 3 message says what is missing" {
	rb load --min-free=1T "$FIX/one.raw" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
	[[ $stderr =~ ^ramboot:\ load:\ .+:\ .+ ]] || { show_run; fail "bad message"; }
}

# ---- source and destination -------------------------------------------------

@test "SOURCE missing: exit 1 with a message" {
	rb load "$BATS_TEST_TMPDIR/nonexistent" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$(grep -c nonexistent <<<"$stderr")" 1
}

@test "SOURCE is a directory: exit 1" {
	rb load "$FIX/tree" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "DEST directory missing: exit 1" {
	rb load "$FIX/one.raw" "$OUT/no/such/dir/img"
	assert_load_fail 1
}

@test "DEST exists: refused without --force, left untouched" {
	echo precious >"$OUT/img"
	rb load "$FIX/sqfs.raw" "$OUT/img"
	[ "$status" -ne 0 ] || { show_run; fail "overwrote an existing DEST"; }
	grep -qE '^ramboot: load: ' <<<"$stderr"
	assert_equal "$(cat "$OUT/img")" precious
}

@test "DEST exists: replaced with --force" {
	echo precious >"$OUT/img"
	rb load --force "$FIX/sqfs.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "DEST exists and the load fails with --force: the old file stays, untouched" {
	local f=$BATS_TEST_TMPDIR/bad.zst
	head -c 1000 "$FIX/sqfs.zst" >"$f"
	echo old >"$OUT/img"
	rb load --force "$f" "$OUT/img"
	expect_status 1
	# the new file never got a name: the old one is whole, nothing else
	assert_equal "$(cat "$OUT/img")" old
	assert_equal "$(find "$OUT" -mindepth 1 | wc -l)" 1
}

@test "--expect-fs=squashfs on a squashfs: exit 0" {
	rb load --expect-fs=squashfs "$FIX/sqfs.xz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "--expect-fs=ext4 on a squashfs: exit 1, no output" {
	rb load --expect-fs=ext4 "$FIX/sqfs.xz" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "--expect-fs=squashfs on random bytes: exit 1, no output" {
	head -c 65536 /dev/urandom >"$BATS_TEST_TMPDIR/rand"
	rb load --expect-fs=squashfs "$BATS_TEST_TMPDIR/rand" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "--prefetch reads a file, writes nothing" {
	cd "$OUT"
	rb load --prefetch "$FIX/sqfs.raw"
	expect_status 0
	assert_no_output_left
}

@test "--prefetch of a compressed file" {
	cd "$OUT"
	rb load --prefetch "$FIX/sqfs.zst"
	expect_status 0
	assert_no_output_left
}

@test "--prefetch of a missing file: exit 1" {
	rb load --prefetch "$BATS_TEST_TMPDIR/nonexistent"
	expect_status 1
	grep -qE '^ramboot: load: ' <<<"$stderr"
}

@test "--progress=none|plain|bar all load, a summary line on stderr" {
	local p
	for p in none plain bar auto; do
		rm -f "$OUT/img"
		rb load --progress="$p" "$FIX/sqfs.zst" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
		[ -n "$stderr" ] || { show_run; fail "no summary line with --progress=$p"; }
	done
}

@test "stdout stays empty on success (it may be a pipe to something else)" {
	rb load --progress=plain "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	assert_equal "$output" ""
}

# ---- version 2 manifests: a chunk read again after a transient error ------
# (the LD_PRELOAD fault shim, tests/fault/README: FAULTINJ_SO)

# 5 MiB of random bytes: two chunks of 4 MiB, read in 2 MiB buffers (the
# second read is bytes 2 to 4 MiB, in chunk 0)
chunk_src() {
	SRC=$BATS_TEST_TMPDIR/src.raw
	head -c 5242880 /dev/urandom >"$SRC"
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$SRC" || fail "ramboot manifest"
}

@test "load v2: a transient read error (EIO) is read again, the load succeeds, chunks_retried=1" {
	require_fault_shim
	chunk_src
	run --separate-stderr faultinj_run 'read:path=src.raw:nth=2:times=1:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none --manifest="$BATS_TEST_TMPDIR/m" "$SRC" "$OUT/x.img"
	assert_loaded "$SRC" "$OUT/x.img"
	assert_fault_fired 'call=read n=2 .*action=errno:EIO$'
	grep -q 'chunks ok, chunks=2 chunks_retried=1' <<<"$stderr" ||
		{ show_run; fail "not chunks_retried=1"; }
}

@test "load v2: other transient errors (ETIMEDOUT, ENOLINK) too; the read of the retry fails once more" {
	require_fault_shim
	chunk_src
	# the stream read of bytes 4-5 MiB times out, then the first re-read
	# of chunk 1 does too: the second re-read gets it
	run --separate-stderr faultinj_run \
		'read:path=src.raw:nth=3:times=1:errno=ETIMEDOUT;pread:path=src.raw:nth=2:times=1:errno=ENOLINK' \
		"$RAMBOOT_BIN" load --progress=none --manifest="$BATS_TEST_TMPDIR/m" "$SRC" "$OUT/x.img"
	assert_loaded "$SRC" "$OUT/x.img"
	assert_fault_fired 'rule=1 call=read n=3 .*action=errno:ETIMEDOUT$'
	assert_fault_fired 'rule=2 call=pread n=2 .*action=errno:ENOLINK$'
	grep -q 'chunks ok, chunks=2 chunks_retried=1' <<<"$stderr" || { show_run; false; }
}

@test "load v2: read errors that do not go away: the retries run out, exit 1, nothing left" {
	require_fault_shim
	chunk_src
	# every read and re-read after the probe fails
	run --separate-stderr faultinj_run 'read,pread:path=src.raw:nth=2:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none --manifest="$BATS_TEST_TMPDIR/m" "$SRC" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	grep -qE "^ramboot: load: error: $SRC: chunk [01] \(bytes [0-9]+ to [0-9]+\): read error, also when read again \(3 times\)$" <<<"$stderr" ||
		{ show_run; fail "not the retries-exhausted error"; }
	# --retries=1: one re-read of the failed chunk, no more
	run --separate-stderr faultinj_run 'read:path=src.raw:nth=2:times=1:errno=EIO;pread:path=src.raw:nth=2:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none --retries=1 --manifest="$BATS_TEST_TMPDIR/m" "$SRC" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	grep -q 'chunk 0 (bytes 0 to 4194304): read error, also when read again (1 times)$' <<<"$stderr" ||
		{ show_run; false; }
	[ "$(faultinj_count 'rule=2 call=pread')" -eq 1 ]
}

@test "load v2: a transient read error behind a decoder or without a manifest is not retried" {
	require_fault_shim
	chunk_src
	zstd -q -c "$SRC" >"$BATS_TEST_TMPDIR/src.zst"
	run --separate-stderr faultinj_run 'read:path=src.zst:nth=2:times=1:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none --manifest="$BATS_TEST_TMPDIR/m" \
		"$BATS_TEST_TMPDIR/src.zst" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $BATS_TEST_TMPDIR/src.zst: read error: Input/output error"
	run --separate-stderr faultinj_run 'read:path=src.raw:nth=2:times=1:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none --sha256="$(sha256sum "$SRC" | cut -d' ' -f1)" \
		"$SRC" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $SRC: read error: Input/output error"
}

# A fixture root whose MemFree and MemAvailable differ (kB each): the
# memory check reads MemAvailable, never MemFree.
meminfo_root() { # memfree_kb memavailable_kb
	local root=$BATS_TEST_TMPDIR/memroot
	mkdir -p "$root/proc"
	printf 'MemTotal:       %s kB\nMemFree:        %s kB\nMemAvailable:   %s kB\n' \
		$((($1 > $2 ? $1 : $2) * 2)) "$1" "$2" >"$root/proc/meminfo"
	echo "$root"
}

@test "memory: MemFree plenty but MemAvailable below the reserve (fixture meminfo): exit 3" {
	RAMBOOT_ROOT=$(meminfo_root 8388608 102400) rb load "$FIX/one.raw" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
	[[ $stderr == *"not enough memory"*"MemAvailable 100.0 MiB"* ]] || fail "$stderr"
}

@test "memory: MemFree small but MemAvailable plenty (fixture meminfo): loads" {
	RAMBOOT_ROOT=$(meminfo_root 65536 8388608) rb load "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}
