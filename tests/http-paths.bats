#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The files of a ranged `ramboot load http://... DEST` (docs/http.md
# "Resuming"): DEST.part and DEST.part-state found as something else than
# what an earlier run left (a symbolic or hard link to another file, a
# FIFO, a directory) are refused, the other file untouched and nothing
# blocking; a state that lies, or that is garbage or cut short, costs a
# fetch again, never a wrong byte; a full file system is an error with
# nothing named DEST.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common
load helpers/http

setup() {
	http_setup
	VICTIM=$BATS_TEST_TMPDIR/victim
	printf 'precious\n' >"$VICTIM"
	SMALL=
}

teardown() {
	http_teardown
	if [ -n "$SMALL" ]; then
		umount "$SMALL" 2>/dev/null || true
	fi
}

# image NAME MIB: random bytes, and NAME.manifest beside them (chunks of 1 MiB)
image() {
	head -c "$(($2 * 1048576 + 12345))" /dev/urandom >"$W/$1"
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/$1.manifest" "$W/$1"
}

# state_head NAME: the first 160 bytes of a DEST.part-state of image NAME
state_head() {
	local size sum n
	size=$(stat -c %s "$W/$1")
	sum=$(sha256sum <"$W/$1" | cut -c1-64)
	n=$(((size + 1048575) / 1048576))
	{
		printf 'ramboot-part 1 %s 1048576 %s %s\n' "$size" "$n" "$sum"
		head -c 160 /dev/zero | tr '\0' '\n'
	} | head -c 160
}

# load_timed: rb load of $URL/img into $OUT/img, given up after 60 s
load_timed() {
	run --separate-stderr timeout 60 "$RAMBOOT_BIN" load --progress=none "$URL/img" "$OUT/img"
	[ "$status" != 124 ] || fail "the load blocked"
}

# assert_no_output_left_but FILE: nothing in $OUT but FILE (no DEST.part)
assert_no_output_left_but() {
	local left
	left=$(find "$OUT" -mindepth 1 ! -path "$1")
	[ -z "$left" ] || fail "left behind: $left"
}

# assert_refused PLANTED WHY: exit 1, the one error line, nothing made but
# PLANTED left
assert_refused() {
	expect_status 1
	assert_equal "$stderr" "ramboot: load: error: $1: $2"
	assert_no_output_left_but "$1"
}

assert_victim() {
	assert_equal "$(cat "$VICTIM")" "precious"
}

@test "http-paths: a symbolic link at DEST.part or DEST.part-state is refused, its target untouched" {
	local s
	image img 2
	nginx_start
	for s in part part-state; do
		ln -s "$VICTIM" "$OUT/img.$s"
		load_timed
		assert_refused "$OUT/img.$s" "is a symbolic link; not written through it"
		assert_victim
		[ -L "$OUT/img.$s" ] || fail "the link is gone"
		rm -f "$OUT/img.part" "$OUT/img.part-state"
	done
	load_timed
	assert_loaded "$W/img" "$OUT/img"
}

@test "http-paths: a hard link at DEST.part or DEST.part-state is refused, the other file untouched" {
	local s
	image img 2
	nginx_start
	for s in part part-state; do
		ln "$VICTIM" "$OUT/img.$s"
		load_timed
		assert_refused "$OUT/img.$s" "has other links; not written through it"
		assert_victim
		rm -f "$OUT/img.part" "$OUT/img.part-state"
	done
}

@test "http-paths: a FIFO or a directory at DEST.part or DEST.part-state is refused, nothing blocks" {
	local s
	image img 2
	nginx_start
	for s in part part-state; do
		mkfifo "$OUT/img.$s"
		load_timed
		assert_refused "$OUT/img.$s" "exists and is not a regular file; not replaced"
		[ -p "$OUT/img.$s" ] || fail "the FIFO is gone"
		rm -f "$OUT/img.part" "$OUT/img.part-state"
		mkdir "$OUT/img.$s"
		load_timed
		assert_refused "$OUT/img.$s" "exists and is not a regular file; not replaced"
		rmdir "$OUT/img.$s"
		rm -f "$OUT/img.part" "$OUT/img.part-state"
	done
}

@test "http-paths: a state that claims every chunk: each hashed again, the wrong ones fetched" {
	image img 4
	nginx_start
	# chunk 1 right, the others garbage (and the file one chunk short)
	head -c 4194304 /dev/urandom >"$OUT/img.part"
	dd if="$W/img" of="$OUT/img.part" bs=1M skip=1 seek=1 count=1 conv=notrunc status=none
	{ state_head img; printf '\001\001\001\001\001'; } >"$OUT/img.part-state"
	load_timed
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c '^ramboot: load: resumed: 1 chunks were verified already$' <<<"$stderr")" 1
	assert_equal "$(grep -c '^206 ' "$BATS_TEST_TMPDIR/nginx/access.log")" 5
	assert_no_output_left_but "$OUT/img"
}

@test "http-paths: a state of garbage, or cut short, is a fresh start" {
	image img 2
	nginx_start
	cp "$W/img" "$OUT/img.part"
	head -c 4096 /dev/urandom >"$OUT/img.part-state"
	load_timed
	assert_loaded "$W/img" "$OUT/img"
	grep -q 'resumed' <<<"$stderr" && fail "resumed from garbage: $stderr"
	rm "$OUT/img"
	# the right head, then fewer bytes than chunks
	cp "$W/img" "$OUT/img.part"
	{ state_head img; printf '\001'; } >"$OUT/img.part-state"
	load_timed
	assert_loaded "$W/img" "$OUT/img"
	grep -q 'resumed' <<<"$stderr" && fail "resumed from a short state: $stderr"
	assert_no_output_left_but "$OUT/img"
}

@test "http-paths: a full file system (root: a small tmpfs): an error, nothing named DEST, no DEST.part" {
	[ "$(id -u)" = 0 ] || skip "needs root (mounts a tmpfs)"
	image img 6
	nginx_start
	SMALL=$OUT/small
	mkdir "$SMALL"
	mount -t tmpfs -o size=3m tmpfs "$SMALL"
	run --separate-stderr timeout 60 "$RAMBOOT_BIN" load --progress=none "$URL/img" "$SMALL/img"
	expect_status 1
	assert_equal "$(grep -c "^ramboot: load: error: $SMALL/img: write error: No space left on device\$" <<<"$stderr")" 1
	assert_equal "$(ls -A "$SMALL")" ""
}
