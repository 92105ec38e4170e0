#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# No check in tests/*.bats that can never fail its test (tests/lint-bats.py):
# a bare `!` line that is not the last of a test or function, and a
# `[ a ] && [ b ]` list whose left side is ignored by `set -e`.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
LINT=$TOP/tests/lint-bats.py

@test "bats-lint: no check in tests/*.bats that can never fail" {
	run python3 "$LINT" "$TOP"/tests/*.bats
	assert_success
	assert_output ""
}

@test "bats-lint: finds both shapes, and only them" {
	f=$BATS_TEST_TMPDIR/x.bats
	# written with a | before each line: bats itself reads @test lines
	sed -e 's/^|//' -e 's/^%/@/' >"$f" <<'BATS'
|%test "dead" {
|	! grep -q x /dev/null
|	[ -f a ] && [ ! -L a ]
|	true && grep -q x y
|	[ -e b ] &&
|		assert_output c
|	echo done
|}
|
|helper() {
|	! grep -q x "$1"
|	[ -d "$1" ]
|}
|
|%test "live" {
|	run ! grep -q x /dev/null
|	! grep -q x /dev/null || false
|	if grep -q x /dev/null; then false; fi
|	[ -f a ] && [ ! -L a ] || false
|	[ -e /etc/x ] && mv /etc/x /tmp/x
|	for _ in 1 2; do [ -e a ] && break; done
|	if [ -f a ] && [ -f b ]; then :; fi
|	x=$(cd / && pwd)
|	(cd / && ls) >/dev/null
|	[[ -f a && -f b ]]
|	run sh -c '
|		! grep -q x y
|		[ a ] && [ b ]
|	'
|	cat <<EOT
|! not a command
|[ a ] && [ b ]
|EOT
|	! grep -q x /dev/null
|}
|
|last() {
|	[ -d "$1" ]
|	! grep -q x "$1"
|}
BATS
	run python3 "$LINT" "$f"
	assert_failure 1
	assert_equal "$(cut -d: -f2 <<<"$output" | tr '\n' ' ')" "2 3 4 5 11 "
}
