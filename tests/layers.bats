#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The layer rule of src/ (docs/ARCHITECTURE.md, checked by tests/layers.sh):
# the tree keeps it, and the check catches each kind of breach.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# A copy of src/ and the table to break. The tests of one breach each
# leave the link-time check out (LINK=0): it compiles the whole tree.
copy() {
	T=$BATS_TEST_TMPDIR/t
	mkdir -p "$T/docs" "$T/tests"
	cp -r "$TOP/src" "$T/"
	cp "$TOP/docs/ARCHITECTURE.md" "$T/docs/"
}

@test "layers: src/ keeps the rule of docs/ARCHITECTURE.md" {
	run sh "$TOP/tests/layers.sh" "$TOP"
	assert_success
	assert_output ""
}

@test "layers: an include of a higher folder is caught" {
	copy
	sed -i '1i #include "boot/cmdline.h"' "$T/src/lib/hex.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/lib/hex.c: includes "boot/cmdline.h": boot/ (rank 7) is not below lib/ (rank 0)'
}

@test "layers: an include of the same rank is caught" {
	copy
	sed -i '1i #include "codec/codec.h"' "$T/src/dev/zram.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/dev/zram.c: includes "codec/codec.h"'
}

@test "layers: a header named without its folder is caught" {
	copy
	sed -i '1i #include "fdio.h"' "$T/src/lib/hex.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'name the folder'
}

@test "layers: a sub-command called outside main.c is caught" {
	copy
	printf 'int f(void);\nint f(void) { return cmd_status(0, 0); }\n' >>"$T/src/lib/hex.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/lib/hex.c:'
	assert_output --partial 'calls cmd_status(): only main.c runs sub-commands'
}

@test "layers: cmd.h in a file that defines no sub-command is caught" {
	copy
	sed -i '1i #include "cmd.h"' "$T/src/lib/hex.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/lib/hex.c: includes cmd.h but defines no sub-command'
}

@test "layers: a folder missing from the table, or a table row without a folder, is caught" {
	copy
	mkdir "$T/src/extra"
	sed -i '/^| `udpcast\/` |/d' "$T/docs/ARCHITECTURE.md"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/extra/: not in the table of docs/ARCHITECTURE.md'
	assert_output --partial 'src/udpcast/: not in the table of docs/ARCHITECTURE.md'
	rmdir "$T/src/extra"
	mv "$T/src/swap" "$T/swap.away"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'docs/ARCHITECTURE.md: swap/ is in the table but not in src/'
}

@test "layers: a header that does not compile on its own is caught" {
	copy
	sed -i '/^#include "boot\/run.h"$/d' "$T/src/boot/outcome.h"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output --partial 'src/boot/outcome.h: does not compile on its own:'
}

@test "layers: a call of a higher folder, declared by hand, is caught at link time" {
	copy
	printf '%s\n' 'int blk_size(int fd, uint64_t *size);' 'int hex_probe(int fd);' \
		'int hex_probe(int fd) { uint64_t s; return blk_size(fd, &s); }' >>"$T/src/lib/hex.c"
	LINK=0 run sh "$TOP/tests/layers.sh" "$T"
	assert_success
	run sh "$TOP/tests/layers.sh" "$T"
	assert_failure
	assert_output 'src/lib/hex.c: uses blk_size() of src/dev/blkdev.c: dev/ (rank 2) is not below lib/ (rank 0)'
}
