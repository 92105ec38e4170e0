#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot profile sort` and `ramboot profile extents`: a profile's ranges
# mapped to the files of its squashfs image, written as a mksquashfs -sort
# file; an image rebuilt with it holds the files read first, contiguous,
# grouped by directory: the directories in the order the boot first read
# one of their files, the files within one by name. The profile is
# written by hand (helpers/profile): one page inside the data blocks of
# each of 20 files spread through an image of 200, in an order that is
# not the image's and goes from directory to directory.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common
load helpers/profile

setup() {
	require_loader
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	T=$BATS_TEST_TMPDIR
}

one_error() {
	if [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ] ||
		! grep -qE '^ramboot: profile: error: .+' <<<"$stderr"; then
		show_run
		fail "expected one 'ramboot: profile: error:' line"
	fi
}

# make_src DIR: 200 files of 5 to 45 KB in 4 directories, some names with
# a space or a backslash (the sort file quotes them).
make_src() {
	local d i
	for d in a b 'c d' e; do
		mkdir -p "$1/$d"
		for i in $(seq 1 50); do
			head -c $(((i * 7919 % 40000) + 5000)) /dev/urandom >"$1/$d/file $i"
		done
	done
	mv "$1/e/file 7" "$1/e/back\\slash"
}

# mksq SRC IMG [OPTIONS]: 4 KiB blocks, so that each file has data blocks.
mksq() {
	local src=$1 img=$2
	shift 2
	mksquashfs "$src" "$img" -b 4096 -noappend -quiet -no-progress "$@" >/dev/null
}

# data_layout IMG: "OFFSET LENGTH PATH" of each file's data blocks, by offset.
data_layout() {
	"$RAMBOOT_BIN" profile extents "$1" | grep -v -e '<' -e ' (fragment)$' | sort -n -k1,1
}

# pick IMG: every 10th file of the image (5 of each directory), in
# reverse order (not the image's); sets PICK (paths) and RANGES (one page
# inside each).
pick() {
	local o n p s
	PICK=()
	RANGES=()
	while read -r o n p; do
		s=$(((o + 4095) / 4096 * 4096))
		[ $((s + 4096)) -le $((o + n)) ] || continue
		PICK+=("$p")
		RANGES+=("$s" 4096)
	done < <(data_layout "$1" | awk 'NR % 10 == 0' | tac)
}

# interleave: PICK and RANGES reordered from directory to directory (the
# first of each of the 4 directories, then the second of each, ...), as a
# boot reads; sets WANT, the order the sorted image is to have
interleave() {
	local j k pick=() ranges=()
	for j in 0 1 2 3 4; do
		for k in 0 5 10 15; do
			pick+=("${PICK[$((k + j))]}")
			ranges+=("${RANGES[$((2 * (k + j)))]}" "${RANGES[$((2 * (k + j) + 1))]}")
		done
	done
	PICK=("${pick[@]}")
	RANGES=("${ranges[@]}")
	# the directories as first read; the files of each by name (bytes)
	mapfile -t WANT < <(printf '%s\n' "${PICK[@]}" |
		awk '{ d = $0; if (!sub(/\/[^\/]*$/, "", d)) d = ""; if (!(d in r)) r[d] = n++; print r[d] "\t" $0 }' |
		LC_ALL=C sort -t "$(printf '\t')" -k1,1n -k2 | cut -f2-)
}

@test "profile sort: the files a profile read lie first in the rebuilt image, contiguous, by directory as first read" {
	make_src "$T/src"
	mksq "$T/src" "$T/img"
	pick "$T/img"
	[ "${#PICK[@]}" -eq 20 ] || fail "picked ${#PICK[@]} files, not 20"
	interleave
	# the boot went e, c d, b, a, e, ...: so the image is e, c d, b, a
	[ "${WANT[0]%%/*}" = e ] && [ "${WANT[5]%%/*}" = "c d" ] &&
		[ "${WANT[10]%%/*}" = b ] && [ "${WANT[15]%%/*}" = a ] || fail "${WANT[*]}"
	write_profile "$T/p" "$T/img" "${RANGES[@]}"

	rb profile sort "$T/img" "$T/p" -o "$T/sort"
	expect_status 0
	[ -z "$stderr" ] || fail "stderr: $stderr"
	[ "$(wc -l <"$T/sort")" -eq 20 ] || fail "$(cat "$T/sort")"
	head -1 "$T/sort" | grep -qE ' 32767$'
	tail -1 "$T/sort" | grep -qE ' 32748$'

	mksq "$T/src" "$T/img2" -sort "$T/sort"
	local i=0 o n p end=96
	while read -r o n p; do
		[ "$i" -lt 20 ] || break
		[ "$p" = "${WANT[$i]}" ] || fail "file $i of the rebuilt image is '$p', not '${WANT[$i]}'"
		[ "$o" -eq "$end" ] || fail "'$p' starts at $o, not at $end"
		end=$((o + n))
		i=$((i + 1))
	done < <(data_layout "$T/img2")
	[ "$i" -eq 20 ]
}

@test "profile sort: the same inputs give the same bytes; profiles are merged; -o is written like merge -o" {
	make_src "$T/src"
	mksq "$T/src" "$T/img"
	pick "$T/img"
	write_profile "$T/p" "$T/img" "${RANGES[@]:0:20}"
	write_profile "$T/q" "$T/img" "${RANGES[@]:20}"
	rb profile sort "$T/img" "$T/p" "$T/q" -o "$T/s1"
	expect_status 0
	rb profile sort "$T/img" "$T/p" "$T/q"
	expect_status 0
	printf '%s\n' "$output" | cmp - "$T/s1"
	cp "$T/s1" "$T/s0"
	rb profile sort -o "$T/s1" "$T/img" "$T/p" "$T/q"
	expect_status 0
	cmp "$T/s0" "$T/s1"
	[ "$(wc -l <"$T/s1")" -eq 20 ]
	# "c d/file N": the space quoted
	grep -q '^c\\ d/file\\ ' "$T/s1"
	ln -s "$T/s1" "$T/link"
	rb profile sort "$T/img" "$T/p" -o "$T/link"
	expect_status 1
	one_error
	[ -L "$T/link" ]
}

@test "profile sort: a name with a space, a backslash or a leading '#' is quoted as mksquashfs reads it" {
	mkdir -p "$T/src/sp ace"
	head -c 20000 /dev/urandom >"$T/src/sp ace/x"
	head -c 20000 /dev/urandom >"$T/src/back\\slash"
	head -c 20000 /dev/urandom >"$T/src/#hash"
	head -c 20000 /dev/urandom >"$T/src/plain"
	mksq "$T/src" "$T/img"
	local o n p ranges=()
	while read -r o n p; do
		ranges+=($(((o + 4095) / 4096 * 4096)) 4096)
	done < <(data_layout "$T/img" | tac)
	write_profile "$T/p" "$T/img" "${ranges[@]}"
	rb profile sort "$T/img" "$T/p" -o "$T/sort"
	expect_status 0
	grep -qF 'sp\ ace/x ' "$T/sort"
	grep -qF 'back\\slash ' "$T/sort"
	grep -qF '\#hash ' "$T/sort"
	mksq "$T/src" "$T/img2" -sort "$T/sort"
	# the profile read the image's data in reverse: "sp ace" first, then
	# the top directory's files, by name
	diff <(printf '%s\n' 'sp ace/x' '#hash' 'back\slash' plain) <(data_layout "$T/img2" | cut -d' ' -f3-)
}

@test "profile sort: a hostile or unsupported image, a profile of another image: one error line, exit 1" {
	make_src "$T/src"
	mksq "$T/src" "$T/img"
	# the directory table's start moved past the end of the image
	cp "$T/img" "$T/bad"
	printf '\377\377\377\177' | dd of="$T/bad" bs=1 seek=72 conv=notrunc status=none
	write_profile "$T/pbad" "$T/bad" 0 4096
	rb profile sort "$T/bad" "$T/pbad"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: $T/bad: squashfs: the tables are not within the image"
	[ -z "$output" ]

	head -c 65536 /dev/urandom >"$T/junk"
	write_profile "$T/pj" "$T/junk" 0 4096
	rb profile sort "$T/junk" "$T/pj" -o "$T/out"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: $T/junk: squashfs: not a squashfs image"
	[ ! -e "$T/out" ]

	mksq "$T/src" "$T/lz4" -comp lz4
	write_profile "$T/pl" "$T/lz4" 0 4096
	rb profile sort "$T/lz4" "$T/pl"
	expect_status 1
	assert_equal "$stderr" "ramboot: profile: error: $T/lz4: squashfs: compressor lz4 is not supported"

	rb profile sort "$T/img" "$T/pl"
	expect_status 1
	assert_equal "$stderr" "ramboot: profile: error: $T/img: the profile is of another image (its size or its hashes differ)"

	rb profile sort "$T/img"
	expect_status 2
}

@test "profile extents: distinct extents, spread and seeks of a profile; the layout of an image" {
	make_src "$T/src"
	mksq "$T/src" "$T/img"
	write_profile "$T/p" "$T/img" 8192 4096 0 4096 4096 4096 65536 4096
	rb profile extents "$T/img" "$T/p"
	expect_status 0
	assert_line --index 0 "2 distinct extents read, spread 69632 (68.0 KiB), 2 seeks"
	assert_line --index 1 --regexp '^[0-9]+ of 200 files read, [0-9]+ bytes of their data blocks$'
	rb profile extents "$T/img"
	expect_status 0
	assert_line --index 0 "0 96 <superblock>"
	assert_line --regexp '^[0-9]+ [0-9]+ <inode table>$'
	assert_line --regexp '^[0-9]+ [0-9]+ <directory table>$'
	[ "$(data_layout "$T/img" | wc -l)" -eq 200 ]
}

@test "profile sort: left out of the static binary" {
	local static=$BATS_TEST_DIRNAME/../static/ramboot
	[ -x "$static" ] || skip "no static build (make static)"
	run --separate-stderr "$static" profile sort "$T/img" "$T/p"
	expect_status 1
	assert_equal "$stderr" "ramboot: profile: error: sort: not in this build (the static one); use the ramboot of the server"
}
