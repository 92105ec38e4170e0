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

# suite NAME: stdin (each line after a '|', '%' for '@') as NAME.bats in
# a directory of its own beside tests/setup_suite.bash; its path in $F
suite() {
	local d=$BATS_TEST_TMPDIR/suite
	mkdir -p "$d"
	cp "$TOP/tests/setup_suite.bash" "$d/"
	F=$d/$1.bats
	sed -e 's/^|//' -e 's/^%/@/' >"$F"
}

@test "setup_suite: a process a test leaves behind is named and killed; bats ends" {
	command -v busybox >/dev/null || skip "busybox not installed"
	# one child that keeps the suite's mark, one that drops its
	# environment but holds bats's output, one daemon that forks away
	# (busybox httpd without -f); a test after them runs as before
	suite left <<'BATS'
|%test "leaves three" {
|	sleep 1000 &
|	env -i sleep 1001 &
|	cd "$BATS_TEST_TMPDIR" && busybox httpd -p 127.0.0.1:0
|}
|%test "after" {
|	true
|}
BATS
	run timeout 60 bats --tap "$F"
	assert_failure 1
	assert_line "ok 1 leaves three"
	assert_line "ok 2 after"
	assert_line "not ok 3 teardown_suite"
	assert_line --regexp "^# a test left process [0-9]+ running: sleep 1000 +\(killed\)$"
	assert_line --regexp "^# a test left process [0-9]+ running: sleep 1001 +\(killed\)$"
	assert_line --regexp "^# a test left process [0-9]+ running: busybox httpd -p 127.0.0.1:0 +\(killed\)$"
	refute_output --partial "No such process"
	# nothing of it runs on
	run pgrep -f "^(sleep 100[01]|busybox httpd -p 127.0.0.1:0)"
	assert_failure 1
}

@test "setup_suite: a suite whose tests clean up passes, nothing named" {
	suite clean <<'BATS'
|%test "waits for its child" {
|	sleep 0.1 &
|	wait
|}
BATS
	run timeout 60 bats --tap "$F"
	assert_success
	assert_output $'1..1\nok 1 waits for its child'
}
