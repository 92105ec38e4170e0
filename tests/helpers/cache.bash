# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The images the cache refresh tests share (tests/cache-refresh.bats,
# tests/cache-delta.bats):
#
#   load helpers/cache
#   setup_file() { cache_images "$BATS_FILE_TMPDIR"; }
#
# DIR/tree, DIR/tree2   a tree of text and random files, and the same
#                       rebuilt: one file of 200000 bytes replaced, one of
#                       60000 added
# DIR/a.img, DIR/b.img  their squashfs images (mksquashfs defaults)
# DIR/b2.img            b.img with one byte changed: the same size, an
#                       image b.img's manifest does not describe
#
# In setup(), cache_test_vars sets T (the test's directory), D (the
# file's), C (a cache directory, made) and X (image x's directory in it);
# key NAME reads "NAME: VALUE" of `ramboot cache refresh|status` in
# $output.

cache_images() {
	local d=$1 i
	mkdir -p "$d/tree"
	for i in 1 2 3 4; do
		seq -f "file $i: line %g, text that compresses and does not repeat" 1 30000 \
			>"$d/tree/text$i.txt"
		head -c 700000 /dev/urandom >"$d/tree/data$i.bin"
	done
	cp -a "$d/tree" "$d/tree2"
	head -c 200000 /dev/urandom >"$d/tree2/data2.bin"
	head -c 60000 /dev/urandom >"$d/tree2/added.bin"
	mksquashfs "$d/tree" "$d/a.img" -quiet -no-progress -noappend >/dev/null
	mksquashfs "$d/tree2" "$d/b.img" -quiet -no-progress -noappend >/dev/null
	cp "$d/b.img" "$d/b2.img"
	printf '\x5a' | dd of="$d/b2.img" bs=1 seek=1000 conv=notrunc status=none
}

# shellcheck disable=SC2034 # the tests read them
cache_test_vars() {
	T=$BATS_TEST_TMPDIR
	D=$BATS_FILE_TMPDIR
	C=$T/cache
	X=$C/images/x
	mkdir "$C"
}

# key NAME: the value of "NAME: VALUE" in $output
key() {
	# shellcheck disable=SC2154 # bats sets output
	sed -n "s/^$1: //p" <<<"$output" | head -1
}
