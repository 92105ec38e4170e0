#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Decoder memory: streams whose headers ask for more than the decoder
# memory limit are refused before anything that big is allocated, and the
# frame-parallel zstd decoder keeps the frames in flight within the limit.
# Each case measures the loader's peak RSS (a memory bound, not a time).
#
# The fixture meminfo says 1 GiB is available: the loader's memory
# settings are those of a small client, whatever this machine has.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common

setup() {
	require_loader
	setup_out
	ROOT=$(fake_root $((1024 * 1024)))
	RSS=$BATS_TEST_TMPDIR/rss
}

# measure CMD...: run CMD, its peak RSS in KiB into $RSS (GNU time, else
# python3's getrusage of the child).
measure() {
	local rc=0
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$RSS.time" "$@" || rc=$?
		tail -n 1 "$RSS.time" >"$RSS"
	else
		python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$RSS" "$@" || rc=$?
	fi
	return "$rc"
}

# assert_rss_below MB: the measured peak RSS is below MB MiB.
assert_rss_below() {
	local kb
	kb=$(cat "$RSS")
	[[ $kb =~ ^[0-9]+$ ]] || fail "no RSS measured: '$kb'"
	echo "# peak RSS $((kb / 1024)) MiB (bound $1 MiB)" >&3
	if [ "$kb" -ge $(($1 * 1024)) ]; then
		show_run
		fail "peak RSS $((kb / 1024)) MiB, expected below $1 MiB"
	fi
}

# A zstd frame with a windowLog 31 (2 GiB) window descriptor, no content
# size, and 8192 RLE blocks of 128 KiB: 32 KiB that decode to 1 GiB, all
# of it kept in the window by a streaming decoder that accepts it.
make_w31() {
	printf '\x28\xb5\x2f\xfd\x00\xa8'
	printf '\x02\x00\x10\x00%.0s' $(seq 8191)
	printf '\x03\x00\x10\x00'
}

# xz_dict_4g IN OUT: IN (one block, no sizes in its header: xz -T1 from a
# pipe) with the LZMA2 dictionary property set to 40 (4 GiB) and the block
# header's CRC32 fixed (the gzip trailer holds the CRC32 of its input).
xz_dict_4g() {
	local in=$1 out=$2 hdr crc
	hdr=$(od -An -tx1 -j 12 -N 4 "$in" | tr -d ' ')
	[ "$hdr" = 02002101 ] || fail "unexpected xz block header $hdr"
	cp "$in" "$out"
	printf '\x28' | dd of="$out" bs=1 seek=16 conv=notrunc status=none
	crc=$(dd if="$out" bs=1 skip=12 count=8 status=none | gzip -c | tail -c 8 | head -c 4 |
		od -An -tx1 | tr -d ' \n')
	# shellcheck disable=SC2059
	printf "\\x${crc:0:2}\\x${crc:2:2}\\x${crc:4:2}\\x${crc:6:2}" |
		dd of="$out" bs=1 seek=20 conv=notrunc status=none
}

@test "zstd: a 2 GiB window (windowLog 31) is refused from the frame header, -j1 and -j2" {
	local f=$BATS_TEST_TMPDIR/w31.zst j
	make_w31 >"$f"
	[ "$(stat -c %s "$f")" -eq 32774 ]
	for j in 1 2; do
		RAMBOOT_ROOT=$ROOT run --separate-stderr measure "$RAMBOOT_BIN" load -j$j "$f" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
		[[ $stderr =~ zstd:\ the\ frame\ needs\ a\ 2\.0\ GiB\ window,\ above\ the\ 128\.0\ MiB\ limit ]] ||
			{ show_run; fail "no window message"; }
		[[ $stderr =~ memlimit ]] || { show_run; fail "the message does not say what to raise"; }
		assert_rss_below 300
	done
}

@test "xz: a block asking for a 4 GiB dictionary is refused before it is allocated, -j1 and -j2" {
	local f=$BATS_TEST_TMPDIR/d4g.xz j
	head -c 8M /dev/zero | xz -0 -T1 -c >"$f.orig"
	xz_dict_4g "$f.orig" "$f"
	# xz itself reads the changed header: the CRC32 is right
	run xz -lvv "$f"
	assert_output --regexp 'Memory needed: +4097 MiB'
	for j in 1 2; do
		RAMBOOT_ROOT=$ROOT run --separate-stderr measure "$RAMBOOT_BIN" load -j$j "$f" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
		[[ $stderr =~ xz:\ the\ stream\ needs\ .*256\.0\ MiB ]] || { show_run; fail "no memory message"; }
		[[ $stderr =~ memlimit ]] || { show_run; fail "the message does not say what to raise"; }
		assert_rss_below 300
	done
}

@test "zstd -j64: 16 frames of 32 MiB stay within the decoder memory limit" {
	local z=$BATS_TEST_TMPDIR/z32
	head -c 32M /dev/zero >"$z"
	zstd -q -1 -c "$z" >"$z.zst"
	rm -f "$z"
	# 512 MiB out; through a pipe, as from the network. Decoded with
	# every frame in flight it peaks above 512 MiB; the bound is the
	# 256 MiB limit, the pipeline's 48 MiB of buffers and the program.
	RAMBOOT_ROOT=$ROOT run --separate-stderr measure "$RAMBOOT_BIN" load -j64 - "$OUT/img" \
		< <(for _ in $(seq 16); do cat "$z.zst"; done)
	expect_status 0
	[ "$(stat -c %s "$OUT/img")" -eq $((512 * 1024 * 1024)) ]
	cmp -n $((512 * 1024 * 1024)) "$OUT/img" /dev/zero
	assert_rss_below 350
}

@test "zstd -j64 with --sha256: the hash queue is bounded too" {
	local z=$BATS_TEST_TMPDIR/z32 sum
	head -c 32M /dev/zero >"$z"
	zstd -q -1 -c "$z" >"$z.zst"
	rm -f "$z"
	sum=$(head -c 512M /dev/zero | sha256sum | cut -c1-64)
	# Written chunks wait for the hasher: at most PIPE_HASHQ_MAX of them.
	RAMBOOT_ROOT=$ROOT run --separate-stderr measure "$RAMBOOT_BIN" load -j64 --sha256="$sum" \
		- "$OUT/img" < <(for _ in $(seq 16); do cat "$z.zst"; done)
	expect_status 0
	[ "$(stat -c %s "$OUT/img")" -eq $((512 * 1024 * 1024)) ]
	assert_rss_below 350
}

@test "zstd: a 192 MiB skippable frame is skipped, not buffered" {
	local f=$BATS_TEST_TMPDIR/one.zst
	printf 'ramboot' | zstd -q -c >"$f"
	RAMBOOT_ROOT=$ROOT run --separate-stderr measure "$RAMBOOT_BIN" load - "$OUT/img" \
		< <(printf '\x50\x2a\x4d\x18\x00\x00\x00\x0c'; head -c 192M /dev/zero; cat "$f")
	expect_status 0
	[ "$(cat "$OUT/img")" = ramboot ]
	assert_rss_below 100
}

@test "zstd: a skippable frame cut short is truncated input" {
	RAMBOOT_ROOT=$ROOT run --separate-stderr "$RAMBOOT_BIN" load - "$OUT/img" \
		< <(printf '\x50\x2a\x4d\x18\x00\x00\x00\x01'; head -c 1000 /dev/zero)
	assert_load_fail 1 "$OUT/img"
	[[ $stderr =~ zstd:\ truncated\ input ]] || { show_run; fail "not 'truncated input'"; }
}

@test "xz: stream padding is read backwards in blocks; the size stays exact" {
	local f=$BATS_TEST_TMPDIR/pad.xz n
	head -c 1M /dev/zero | xz -0 -T1 -c >"$f"
	head -c 256K /dev/zero >>"$f"
	# the size probe reads the index past the padding: an exact size
	# (the memory check's debug line), not "unknown"
	RAMBOOT_ROOT=$ROOT rb load -v "$f" "$OUT/img"
	expect_status 0
	[[ $stderr =~ image\ [0-9]+\ \(exact\) ]] || { show_run; fail "size not probed exactly"; }
	rm -f "$OUT/img"
	command -v strace >/dev/null || skip "strace not installed"
	strace -f -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# one read per 64 KiB of padding, not one per 4 bytes (65536)
	RAMBOOT_ROOT=$ROOT run strace -f -e trace=pread64 -o "$BATS_TEST_TMPDIR/trace" \
		"$RAMBOOT_BIN" load "$f" "$OUT/img"
	expect_status 0
	n=$(grep -c pread64 "$BATS_TEST_TMPDIR/trace")
	[ "$n" -lt 64 ] || fail "$n preads"
}
