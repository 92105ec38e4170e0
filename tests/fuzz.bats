#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A short libFuzzer run of every parser target (2 s each).
# `make fuzz` runs them for 5 minutes; docs/fuzzing.md has longer runs.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

@test "fuzz: the manifest, lzop, size expression, settings, profile, signature, chunk index, cache state, delta, HTTP response, DNS answer and squashfs table parsers survive a short run" {
	command -v clang >/dev/null || skip "clang not installed (tests/deps.sh install)"
	cd "$BATS_TEST_DIRNAME/.."
	run fuzz/run.sh 10
	echo "$output"
	assert_success
	assert_line --regexp '^ok 1 - fuzz manifest \([0-9]+ runs\)$'
	assert_line --regexp '^ok 2 - fuzz lzop \([0-9]+ runs\)$'
	assert_line --regexp '^ok 3 - fuzz sizeexpr \([0-9]+ runs\)$'
	assert_line --regexp '^ok 4 - fuzz cmdline \([0-9]+ runs\)$'
	assert_line --regexp '^ok 5 - fuzz profile \([0-9]+ runs\)$'
	assert_line --regexp '^ok 6 - fuzz sign \([0-9]+ runs\)$'
	assert_line --regexp '^ok 7 - fuzz cindex \([0-9]+ runs\)$'
	assert_line --regexp '^ok 8 - fuzz cstate \([0-9]+ runs\)$'
	assert_line --regexp '^ok 9 - fuzz delta \([0-9]+ runs\)$'
	assert_line --regexp '^ok 10 - fuzz http \([0-9]+ runs\)$'
	assert_line --regexp '^ok 11 - fuzz dns \([0-9]+ runs\)$'
	assert_line --regexp '^ok 12 - fuzz sqfs \([0-9]+ runs\)$'
}
