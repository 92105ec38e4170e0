#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The build is reproducible: the same sources built in two directories
# give the same bytes: the static binary that every client downloads in
# its initrd. The checkout's path must not leak into it (the debug
# information names the sources, and the build ID that strip keeps is a
# hash over it). The host build compiles the same sources with the same
# flags; it is left out to keep the test to two builds.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# The checkout's files (tracked, and new ones not ignored), as they are in
# the work tree, into the directory $1.
checkout() {
	mkdir -p "$1"
	git -C "$TOP" ls-files -z -co --exclude-standard | (cd "$TOP" && tar --null -T - -cf -) | tar -xf - -C "$1"
}

# make in $1, apart from any make that runs this test (its job server).
build() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$1" -j2 -s static
}

@test "reproducible: static/ramboot is the same bytes from two directories" {
	git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
	# paths of different lengths: a path in the output moves what follows it
	a=$BATS_TEST_TMPDIR/a
	b=$BATS_TEST_TMPDIR/another/checkout
	checkout "$a"
	checkout "$b"
	build "$a"
	build "$b"
	run cmp "$a/static/ramboot" "$b/static/ramboot"
	assert_success
}
