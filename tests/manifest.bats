#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot manifest` describes the decompressed image (size, SHA-256, and
# in version 2 the SHA-256 of each chunk); `ramboot load --manifest` checks
# a load against it.

load helpers/common

setup_file() {
	fixtures_init
}

setup() {
	require_loader
	setup_out
}

# expected_manifest RAWFILE: the manifest text for an image
expected_manifest() {
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' \
		"$(stat -c %s "$1")" "$(sha256sum "$1" | cut -d' ' -f1)"
}

# manifest_value KEY: the value of KEY in $output
manifest_value() {
	sed -n "s/^$1 //p" <<<"$output"
}

# chunk_lines RAWFILE [SIZE]: the chunk lines of version 2 for an image
# (SIZE bytes per chunk, default 4 MiB), from split and sha256sum
chunk_lines() {
	local d=$BATS_TEST_TMPDIR/split.$$ f i=0
	rm -rf "$d"
	mkdir -p "$d"
	[ -s "$1" ] && split -b "${2:-4194304}" -a 6 -d "$1" "$d/c"
	for f in "$d"/c*; do
		[ -e "$f" ] || continue
		echo "chunk $i $(sha256sum "$f" | cut -d' ' -f1)"
		i=$((i + 1))
	done
	rm -rf "$d"
}

# What follows the three fixed lines: "compression CODEC" (the -d name),
# "chunk-size 4194304" and the chunk lines of RAWFILE, nothing else.
# check_compression CODEC RAWFILE
check_compression() {
	assert_equal "$(tail -n +4 <<<"$output")" "$(printf 'compression %s\nchunk-size 4194304\n' "$1"; chunk_lines "$2")"
}

# check_manifest IMG CODEC: the manifest of the compressed fixture
# describes the raw image
check_manifest() {
	local raw=$FIX/$1.raw
	rb manifest "$(fixture "$1" "$2")"
	expect_status 0
	assert_line --index 0 'ramboot-manifest 2'
	assert_equal "$(manifest_value size)" "$(stat -c %s "$raw")"
	assert_equal "$(manifest_value sha256)" "$(sha256sum "$raw" | cut -d' ' -f1)"
	check_compression "$2" "$raw"
}

@test "manifest of a raw image: exact text on stdout (version 2)" {
	rb manifest "$FIX/sqfs.raw"
	expect_status 0
	assert_equal "$(head -n 3 <<<"$output")" "$(expected_manifest "$FIX/sqfs.raw" | sed 's/^ramboot-manifest 1/ramboot-manifest 2/')"
	check_compression none "$FIX/sqfs.raw"
	# the fixture is more than one chunk
	[ "$(grep -c '^chunk ' <<<"$output")" -ge 2 ]
}

@test "manifest of the empty image: version 2, no chunks" {
	rb manifest "$FIX/empty.raw"
	expect_status 0
	assert_equal "$output" "$(printf 'ramboot-manifest 2\nsize 0\nsha256 %s\ncompression none\nchunk-size 4194304' "$(sha256sum "$FIX/empty.raw" | cut -d' ' -f1)")"
}

@test "manifest --chunk-size=0: version 1, exact text" {
	rb manifest --chunk-size=0 "$FIX/sqfs.zst"
	expect_status 0
	assert_equal "$output" "$(expected_manifest "$FIX/sqfs.raw"; echo compression zstd)"
}

@test "manifest --chunk-size=64K: the chunks of the decompressed image, every codec" {
	local c
	for c in none zstd xz lzo gzip; do
		rb manifest --chunk-size=64K "$(fixture sqfs "$c")"
		expect_status 0
		assert_line --index 0 'ramboot-manifest 2'
		assert_line 'chunk-size 65536'
		assert_equal "$(grep '^chunk ' <<<"$output")" "$(chunk_lines "$FIX/sqfs.raw" 65536)"
	done
	# a 1-byte image: one chunk of one byte
	rb manifest --chunk-size=64K "$FIX/one.gz"
	expect_status 0
	assert_equal "$(grep '^chunk ' <<<"$output")" "$(chunk_lines "$FIX/one.raw" 65536)"
}

@test "manifest --chunk-size that is not a power of two from 64K to 1G: exit 2" {
	local v
	for v in 3M 32K 65535 2G abc -1 ''; do
		rb manifest --chunk-size="$v" "$FIX/one.raw"
		expect_status 2
		assert_equal "$output" ""
	done
}

@test "manifest of a pipe: version 2" {
	run --separate-stderr bash -c 'xz -dc "$1" | "$RAMBOOT_BIN" manifest --chunk-size=1M -' _ "$FIX/sqfs.xz"
	expect_status 0
	assert_equal "$(grep '^chunk ' <<<"$output")" "$(chunk_lines "$FIX/sqfs.raw" 1048576)"
}

@test "manifest of a zstd image describes the decompressed bytes" { check_manifest sqfs zstd; }
@test "manifest of an xz image describes the decompressed bytes"   { check_manifest sqfs xz; }
@test "manifest of an lzop image describes the decompressed bytes" { check_manifest sqfs lzo; }
@test "manifest of a gzip image describes the decompressed bytes"  { check_manifest sqfs gzip; }
@test "manifest of a compressed empty image"                       { check_manifest empty zstd; check_manifest empty xz; }
@test "manifest of a compressed 1-byte image"                      { check_manifest one lzo; check_manifest one gzip; }

@test "manifest of multi-frame zstd and multi-block xz" {
	local f
	for f in sqfs.multi.zst sqfs.mb.xz sqfs.multi.gz; do
		rb manifest "$FIX/$f"
		expect_status 0
		assert_equal "$(manifest_value sha256)" "$(cat "$FIX/sqfs.sha256")"
	done
}

@test "manifest -o OUT writes the file, nothing on stdout" {
	rb manifest -o "$OUT/m" "$FIX/sqfs.zst"
	expect_status 0
	assert_equal "$output" ""
	run cat "$OUT/m"
	assert_line --index 0 'ramboot-manifest 2'
	assert_line "size $(stat -c %s "$FIX/sqfs.raw")"
	assert_line "sha256 $(cat "$FIX/sqfs.sha256")"
}

@test "manifest of a corrupt image: exit 1, message, no -o file" {
	local f=$BATS_TEST_TMPDIR/bad.xz
	head -c 5000 "$FIX/sqfs.xz" >"$f"
	rb manifest -o "$OUT/m" "$f"
	expect_status 1
	assert_equal "$(grep -cE '^ramboot: manifest: ' <<<"$stderr")" 1
	assert_no_output_left
}

@test "manifest of a missing file: exit 1" {
	rb manifest "$BATS_TEST_TMPDIR/nonexistent"
	expect_status 1
	grep -qE '^ramboot: manifest: ' <<<"$stderr"
}

@test "manifest without an IMAGE: exit 2" {
	rb manifest
	expect_status 2
}

@test "manifest --help: exit 0, usage on stdout" {
	rb manifest --help
	expect_status 0
	[ -n "$output" ]
}

@test "load --manifest made by ramboot manifest: exit 0 for every codec" {
	local c
	for c in none zstd xz lzo gzip; do
		rm -f "$OUT/img" "$BATS_TEST_TMPDIR/m"
		"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$(fixture sqfs "$c")"
		rb load --manifest="$BATS_TEST_TMPDIR/m" "$(fixture sqfs "$c")" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	done
}

# ---- version 2: chunk hashes -------------------------------------------------

# make_v2 IMAGE MANIFEST: a version 2 manifest of 64 KiB chunks
make_v2() {
	"$RAMBOOT_BIN" manifest --chunk-size=64K -o "$2" "$1" || fail "ramboot manifest $1"
}

# the chunks in the summary line of a load
assert_chunks_ok() {
	grep -qE "chunks ok, chunks=$1 chunks_retried=$2" <<<"$stderr" ||
		{ show_run; fail "no 'chunks ok, chunks=$1 chunks_retried=$2' in the summary"; }
}

@test "load --manifest version 2: chunks verified, every codec, file and pipe" {
	local c n
	make_v2 "$FIX/sqfs.raw" "$BATS_TEST_TMPDIR/m"
	n=$(grep -c '^chunk ' "$BATS_TEST_TMPDIR/m")
	[ "$n" -gt 10 ]
	for c in none zstd xz lzo gzip; do
		rm -f "$OUT/img"
		rb load --manifest="$BATS_TEST_TMPDIR/m" "$(fixture sqfs "$c")" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
		assert_chunks_ok "$n" 0
		rm -f "$OUT/img"
		rb_pipe "$(fixture sqfs "$c")" load --manifest="$BATS_TEST_TMPDIR/m" - "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
		assert_chunks_ok "$n" 0
	done
}

@test "load --manifest version 2 of the default chunk size, many-frame sources" {
	local f
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw"
	for f in sqfs.many.zst sqfs.many.xz sqfs.many.gz sqfs.multi.zst; do
		rm -f "$OUT/img"
		rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/$f" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
		assert_chunks_ok "$(grep -c '^chunk ' "$BATS_TEST_TMPDIR/m")" 0
	done
}

@test "load --manifest version 2 behind a many-frame zstd decoder: 25 loads in a row, none hangs" {
	# The chunks a many-frame decoder hands on are not a pool's: the
	# last hasher done with one must still wake a writer waiting for
	# room (it waited forever in about one load in five).
	local i
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw"
	for i in $(seq 25); do
		rm -f "$OUT/img"
		rb load --stall-timeout=20 --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.many.zst" "$OUT/img"
		assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	done
}

@test "load --manifest version 2 of an empty and a 1-byte image" {
	make_v2 "$FIX/empty.raw" "$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/empty.zst" "$OUT/e"
	assert_loaded "$FIX/empty.raw" "$OUT/e"
	make_v2 "$FIX/one.raw" "$BATS_TEST_TMPDIR/m1"
	rb load --manifest="$BATS_TEST_TMPDIR/m1" "$FIX/one.raw" "$OUT/o"
	assert_loaded "$FIX/one.raw" "$OUT/o"
	assert_chunks_ok 1 0
}

@test "load --manifest version 1 (manifest --chunk-size=0): still accepted, whole SHA-256" {
	"$RAMBOOT_BIN" manifest --chunk-size=0 -o "$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw"
	assert_equal "$(head -n 1 "$BATS_TEST_TMPDIR/m")" "ramboot-manifest 1"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.gz" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	grep -q 'sha256 ok' <<<"$stderr"
}

@test "load --manifest version 2 and a matching --sha256: both checked" {
	make_v2 "$FIX/sqfs.raw" "$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" --sha256="$(cat "$FIX/sqfs.sha256")" \
		"$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
	grep -q 'sha256 ok, chunks=' <<<"$stderr"
}

@test "load --manifest version 2: a corrupted chunk in a raw image is read again, then fails closed" {
	local img=$BATS_TEST_TMPDIR/img.raw
	cp "$FIX/sqfs.raw" "$img"
	make_v2 "$img" "$BATS_TEST_TMPDIR/m"
	corrupt_byte "$img" 70000
	rb load -v --manifest="$BATS_TEST_TMPDIR/m" "$img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$(grep 'error:' <<<"$stderr")" "ramboot: load: error: $img: chunk 1 (bytes 65536 to 131072): SHA-256 mismatch, also when read again (3 times)"
	[ "$(grep -c 'chunk 1: read again' <<<"$stderr")" -eq 3 ]
}

@test "load --manifest version 2: a corrupted chunk behind a decoder fails at once" {
	local img=$BATS_TEST_TMPDIR/img.raw
	cp "$FIX/sqfs.raw" "$img"
	make_v2 "$img" "$BATS_TEST_TMPDIR/m"
	corrupt_byte "$img" 300000
	zstd -q -c "$img" >"$img.zst"
	rb load -v --manifest="$BATS_TEST_TMPDIR/m" "$img.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$(grep 'error:' <<<"$stderr")" "ramboot: load: error: $img.zst: chunk 4 (bytes 262144 to 327680): SHA-256 mismatch"
	if grep -q 'read again' <<<"$stderr"; then false; fi
	# and through a pipe
	rb_pipe "$img" load --manifest="$BATS_TEST_TMPDIR/m" - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	grep -q 'chunk 4 (bytes 262144 to 327680): SHA-256 mismatch$' <<<"$stderr"
}

@test "load --manifest version 2 --retries=0: a corrupted chunk is not read again" {
	local img=$BATS_TEST_TMPDIR/img.raw
	cp "$FIX/sqfs.raw" "$img"
	make_v2 "$img" "$BATS_TEST_TMPDIR/m"
	corrupt_byte "$img" 0
	rb load -v --retries=0 --manifest="$BATS_TEST_TMPDIR/m" "$img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	grep -q 'error: .*: chunk 0 (bytes 0 to 65536): SHA-256 mismatch$' <<<"$stderr"
	! grep -q 'read again' <<<"$stderr"
}

@test "load --manifest version 2 with a wrong chunk hash: fails, nothing left" {
	make_v2 "$FIX/sqfs.raw" "$BATS_TEST_TMPDIR/m"
	# the last chunk's hash replaced by another valid one
	sed -i "\$s/ [0-9a-f]*\$/ $(sha256sum "$FIX/one.raw" | cut -d' ' -f1)/" "$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.xz" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	grep -q 'SHA-256 mismatch' <<<"$stderr"
}

@test "load --manifest version 2 that is malformed: refused before anything is written" {
	make_v2 "$FIX/sqfs.raw" "$BATS_TEST_TMPDIR/m"
	# a chunk line missing
	sed -i '/^chunk 3 /d' "$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	grep -q 'chunk out of order' <<<"$stderr"
}

@test "load --retries that is not a number from 0 to 100: exit 2" {
	local v
	for v in -1 101 x ''; do
		rb load --retries="$v" "$FIX/one.raw" "$OUT/x"
		assert_load_fail 2 "$OUT/x"
	done
}

@test "load --manifest from a pipe" {
	expected_manifest "$FIX/sqfs.raw" >"$BATS_TEST_TMPDIR/m"
	rb_pipe "$FIX/sqfs.xz" load --manifest="$BATS_TEST_TMPDIR/m" - "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "load --manifest with comments, blank lines and unknown keys" {
	{
		echo 'ramboot-manifest 1'
		echo '# made for the test'
		echo
		echo "sha256 $(cat "$FIX/sqfs.sha256")"
		echo 'compression zstd'
		echo 'signature some-later-version'
		echo "size $(stat -c %s "$FIX/sqfs.raw")"
	} >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.zst" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "load --manifest with a wrong sha256: exit 1, no output" {
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' "$(stat -c %s "$FIX/sqfs.raw")" \
		"$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load --manifest: source shorter than the manifest says: exit 1" {
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' $(($(stat -c %s "$FIX/sqfs.raw") + 4096)) \
		"$(cat "$FIX/sqfs.sha256")" >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load --manifest: source longer than the manifest says: exit 1" {
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' $(($(stat -c %s "$FIX/sqfs.raw") - 4096)) \
		"$(cat "$FIX/sqfs.sha256")" >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb_pipe "$FIX/sqfs.gz" load --manifest="$BATS_TEST_TMPDIR/m" - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load --manifest: source changed after the manifest was made: exit 1" {
	local img=$BATS_TEST_TMPDIR/img
	cp "$FIX/sqfs.raw" "$img"
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$img"
	# same size, one byte different
	corrupt_byte "$img" 123456
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	# and recompressed: the transport codec is fine, the image is not
	zstd -q -c "$img" >"$img.zst"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$img.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load --manifest that is malformed: refused, no output" {
	printf 'ramboot-manifest 1\nsize 12x\nsha256 %s\n' "$(cat "$FIX/sqfs.sha256")" >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw" "$OUT/img"
	[ "$status" -ne 0 ] || { show_run; fail "accepted a malformed manifest"; }
	grep -qE '^ramboot: load: ' <<<"$stderr"
	assert_no_output_left
}

@test "load --manifest missing a key: refused, no output" {
	printf 'ramboot-manifest 1\nsha256 %s\n' "$(cat "$FIX/sqfs.sha256")" >"$BATS_TEST_TMPDIR/m"
	rb load --manifest="$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw" "$OUT/img"
	[ "$status" -ne 0 ] || { show_run; fail "accepted a manifest without size"; }
	assert_no_output_left
}

@test "load --manifest that does not exist: refused, no output" {
	rb load --manifest="$BATS_TEST_TMPDIR/nonexistent" "$FIX/sqfs.raw" "$OUT/img"
	[ "$status" -ne 0 ] || { show_run; fail "loaded without its manifest"; }
	grep -qE '^ramboot: load: ' <<<"$stderr"
	assert_no_output_left
}

@test "load --manifest and a matching --sha256 together: exit 0" {
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw"
	rb load --manifest="$BATS_TEST_TMPDIR/m" --sha256="$(cat "$FIX/sqfs.sha256")" \
		"$FIX/sqfs.lzo" "$OUT/img"
	assert_loaded "$FIX/sqfs.raw" "$OUT/img"
}

@test "load --manifest and a different --sha256: exit 1, no output" {
	"$RAMBOOT_BIN" manifest -o "$BATS_TEST_TMPDIR/m" "$FIX/sqfs.raw"
	rb load --manifest="$BATS_TEST_TMPDIR/m" \
		--sha256="$(sha256sum "$FIX/one.raw" | cut -d' ' -f1)" "$FIX/sqfs.raw" "$OUT/img"
	[ "$status" -ne 0 ] || { show_run; fail "accepted conflicting hashes"; }
	assert_no_output_left
}

@test "load --manifest: the size in the manifest is the memory estimate (exit 3)" {
	# a stream without any size hint: only the manifest tells how big it is
	local root
	root=$(fake_root $((300 * 1024)))
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' $((64 * 1024 * 1024)) \
		"$(cat "$FIX/sqfs.sha256")" >"$BATS_TEST_TMPDIR/m"
	RAMBOOT_ROOT=$root rb_pipe "$FIX/sqfs.stream.zst" load --min-free=256M \
		--manifest="$BATS_TEST_TMPDIR/m" - "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}
