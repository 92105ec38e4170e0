#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot cache index|diff: the chunk index of a squashfs image made with
# mksquashfs's defaults, and of the same tree rebuilt after a few files
# changed; most of the new image's bytes are found in the old one by
# hash, and what remains to be read is a small multiple of the changed
# files. A flipped byte is a different chunk, one only. The index is the
# same text every time; the command line and its exit codes.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common

setup_file() {
	local d=$BATS_FILE_TMPDIR i
	make_tree "$d/tree"
	for i in 1 2 3 4 5 6; do
		mkdir -p "$d/tree/more$i"
		seq -f "more$i: line %g, text that compresses and does not repeat" 1 40000 \
			>"$d/tree/more$i/text.txt"
		head -c 600000 /dev/urandom >"$d/tree/more$i/data.bin"
	done
	cp -a "$d/tree" "$d/tree2"
	# the rebuild: one file of 300000 bytes replaced, one of 60000 added
	head -c 300000 /dev/urandom >"$d/tree2/deep/a/b/c/random2.bin"
	head -c 60000 /dev/urandom >"$d/tree2/more3/added.bin"
	mksquashfs "$d/tree" "$d/a.sqfs" -quiet -no-progress -noappend >/dev/null
	mksquashfs "$d/tree2" "$d/b.sqfs" -quiet -no-progress -noappend >/dev/null
}

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	A=$BATS_FILE_TMPDIR/a.sqfs
	B=$BATS_FILE_TMPDIR/b.sqfs
}

# field NAME BYTES|CHUNKS: a number of `cache diff`'s output in $output
field() {
	local unit=$2
	if [ "$unit" = chunks ]; then
		sed -n "s/^$1: \\([0-9]*\\) chunks, .*/\\1/p" <<<"$output"
	else
		sed -n "s/^$1: [0-9]* chunks, \\([0-9]*\\) bytes.*/\\1/p" <<<"$output"
	fi
}

@test "cache index: a squashfs image's chunks tile it, the superblock, then 16 to 256 KiB, hashes of the bytes" {
	run "$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$A"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run head -4 "$T/a.cindex"
	[ "${lines[0]}" = "ramboot-cindex 1" ]
	# mksquashfs's default compressor, gzip: the zlib marker (cdc.h)
	[ "${lines[1]}" = "chunker gear-fastcdc-sqfs-zlib 16384 65536 262144" ]
	[ "${lines[2]}" = "size $(stat -c %s "$A")" ]
	# every chunk: where the previous one ended, within bounds, its hash
	run awk -v size="$(stat -c %s "$A")" '
		$1 == "chunks" { n = $2 }
		$1 == "chunk" { k++; if ($2 != next_off) bad++
			if (k == 1 && $3 != 96) bad++
			if (k > 1 && ($3 > 262144 || ($3 < 16384 && $2 + $3 != size))) bad++
			next_off = $2 + $3 }
		END { if (k != n || next_off != size) bad++; print bad + 0, k }' "$T/a.cindex"
	[ "$status" -eq 0 ]
	[ "${output%% *}" = 0 ]
	[ "${output##* }" -gt 20 ]
	line=$(sed -n 10p "$T/a.cindex")
	read -r _ off len sha <<<"$line"
	run sh -c "tail -c +$((off + 1)) '$A' | head -c $len | sha256sum"
	[ "${output%% *}" = "$sha" ]
}

@test "cache index: the same image gives the same text, on stdout as with -o" {
	run "$RAMBOOT_BIN" cache index -o "$T/one" "$A"
	[ "$status" -eq 0 ]
	"$RAMBOOT_BIN" cache index "$A" >"$T/two"
	run cmp "$T/one" "$T/two"
	[ "$status" -eq 0 ]
	# -o replaces an index, never the image it reads
	run "$RAMBOOT_BIN" cache index --output="$T/one" "$A"
	[ "$status" -eq 0 ]
	cp "$A" "$T/img"
	run "$RAMBOOT_BIN" cache index -o "$T/img" "$T/img"
	[ "$status" -eq 1 ]
	run cmp "$A" "$T/img"
	[ "$status" -eq 0 ]
	ln -s "$T/elsewhere" "$T/link"
	run "$RAMBOOT_BIN" cache index -o "$T/link" "$A"
	[ "$status" -eq 1 ]
	[ ! -e "$T/elsewhere" ]
}

@test "cache diff: a rebuilt squashfs reuses most of its bytes and fetches a few times the change" {
	"$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$A"
	"$RAMBOOT_BIN" cache index -o "$T/b.cindex" "$B"
	run "$RAMBOOT_BIN" cache diff "$T/a.cindex" "$T/b.cindex"
	[ "$status" -eq 0 ]
	echo "$output"
	size=$(stat -c %s "$B")
	[ "$(field new bytes)" -eq "$size" ]
	reused=$(field reused bytes)
	fetch=$(field fetch bytes)
	[ $((reused + fetch)) -eq "$size" ]
	# at least 80 % reused; under 4 times the 360000 bytes changed
	[ $((reused * 100)) -ge $((size * 80)) ]
	[ "$fetch" -lt $((4 * 360000)) ]
	# the old image holds all of itself
	run "$RAMBOOT_BIN" cache diff "$T/a.cindex" "$T/a.cindex"
	[ "$status" -eq 0 ]
	[ "$(field fetch bytes)" -eq 0 ]
	[ "$(field reused chunks)" -eq "$(field new chunks)" ]
}

@test "cache diff: a flipped byte is one chunk to fetch, the same boundaries" {
	"$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$A"
	# 1000 bytes into the tenth chunk: a byte the chunker does not hash
	# (cdc.h), so no boundary can move
	read -r _ off len _ <<<"$(sed -n 14p "$T/a.cindex")"
	cp "$A" "$T/flip.sqfs"
	at=$((off + 1000))
	byte=$(od -An -tu1 -j "$at" -N1 "$T/flip.sqfs" | tr -d ' ')
	printf '%b' "\\0$(printf %03o $((byte ^ 1)))" |
		dd of="$T/flip.sqfs" bs=1 seek="$at" conv=notrunc status=none
	run cmp "$A" "$T/flip.sqfs"
	[ "$status" -eq 1 ]
	"$RAMBOOT_BIN" cache index -o "$T/flip.cindex" "$T/flip.sqfs"
	run "$RAMBOOT_BIN" cache diff "$T/a.cindex" "$T/flip.cindex"
	[ "$status" -eq 0 ]
	[ "$(field fetch chunks)" -eq 1 ]
	[ "$(field fetch bytes)" -eq "$len" ]
	run diff "$T/a.cindex" "$T/flip.cindex"
	[ "$status" -eq 1 ]
	[ "$(grep -c '^>' <<<"$output")" -eq 1 ]
}

@test "cache: the command line, its errors and exit codes" {
	run "$RAMBOOT_BIN" cache --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"ramboot cache index [-o FILE] IMAGE"* ]]
	[[ "$output" == *"ramboot cache diff OLD.cindex NEW.cindex"* ]]
	[[ "$output" == *"ramboot cache init [--label=LABEL] [--force] DEV"* ]]
	run "$RAMBOOT_BIN" cache
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" cache bogus
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" cache index
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" cache index -x "$A"
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" cache diff "$T/one"
	[ "$status" -eq 2 ]
	run --separate-stderr "$RAMBOOT_BIN" cache index "$T/missing"
	[ "$status" -eq 1 ]
	[ "$stderr" = "ramboot: cache: error: $T/missing: No such file or directory" ]
	# a malformed index: one line that says where
	"$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$A"
	sed '7s/^chunk [0-9]*/chunk 1/' "$T/a.cindex" >"$T/bad.cindex"
	run --separate-stderr "$RAMBOOT_BIN" cache diff "$T/a.cindex" "$T/bad.cindex"
	[ "$status" -eq 1 ]
	[[ "$stderr" == "ramboot: cache: error: $T/bad.cindex: line 7: "* ]]
	[ -z "$output" ]
	printf 'junk' >"$T/junk.cindex"
	run --separate-stderr "$RAMBOOT_BIN" cache diff "$T/junk.cindex" "$T/a.cindex"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"line 1: not a chunk index"* ]]
}
