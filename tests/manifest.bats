#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot manifest` describes the decompressed image (size, SHA-256);
# `ramboot load --manifest` checks a load against it.

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

# The optional "compression" key, when written, names the file's codec
# (the -d name); nothing else follows the three fixed lines.
# check_compression CODEC
check_compression() {
	local extra
	extra=$(tail -n +4 <<<"$output")
	[ -z "$extra" ] || assert_equal "$extra" "compression $1"
}

# check_manifest IMG CODEC: the manifest of the compressed fixture
# describes the raw image
check_manifest() {
	local raw=$FIX/$1.raw
	rb manifest "$(fixture "$1" "$2")"
	expect_status 0
	assert_line --index 0 'ramboot-manifest 1'
	assert_equal "$(manifest_value size)" "$(stat -c %s "$raw")"
	assert_equal "$(manifest_value sha256)" "$(sha256sum "$raw" | cut -d' ' -f1)"
	check_compression "$2"
}

@test "manifest of a raw image: exact text on stdout" {
	rb manifest "$FIX/sqfs.raw"
	expect_status 0
	assert_equal "$(head -n 3 <<<"$output")" "$(expected_manifest "$FIX/sqfs.raw")"
	check_compression none
}

@test "manifest of the empty image" {
	rb manifest "$FIX/empty.raw"
	expect_status 0
	assert_equal "$(head -n 3 <<<"$output")" "$(expected_manifest "$FIX/empty.raw")"
	check_compression none
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
	assert_line --index 0 'ramboot-manifest 1'
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
