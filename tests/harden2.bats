#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hardening, second round: empty sources, outputs over their own inputs,
# FIFOs where a report is expected, exit codes after a command has done
# its work, forged status lines, and boot reads that must stay bounded.
#
# Faults come from tests/fault/faultinj.c (LD_PRELOAD into the host
# build). Every background process and mount a test makes is removed in
# teardown, also when the test fails.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common
load helpers/fault

setup_file() {
	fixtures_init
	faultinj_build
}

setup() {
	require_loader
	setup_out
	PIDS=()
	CLEAN=$BATS_TEST_TMPDIR/cleanup
	: >"$CLEAN"
}

teardown() {
	local p kind arg
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -f "${CLEAN:-}" ] || return 0
	tac "$CLEAN" | while read -r kind arg; do
		case $kind in
		mount)
			if mountpoint -q "$arg" 2>/dev/null; then
				umount "$arg" 2>/dev/null || umount -l "$arg" 2>/dev/null
			fi ;;
		esac
	done
	return 0
}

# track KIND ARG: undo in teardown (mount DIR).
track() {
	echo "$1 $2" >>"$CLEAN"
}

need_root() {
	is_root || skip "needs root ($1)"
}

need_shim() {
	faultinj_require_dynamic "$RAMBOOT_BIN"
}

# ---- an empty source is an error -------------------------------------------

@test "load: an empty pipe on stdin is an error (exit 1), nothing at DEST" {
	run --separate-stderr bash -c ': | "$RAMBOOT_BIN" load - "$1"' _ "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	[[ $stderr == *"empty"* ]]
}

@test "load: an empty file is an error (exit 1), nothing at DEST" {
	rb load "$FIX/empty.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb load -d none "$FIX/empty.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb_redirect "$FIX/empty.raw" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load: the stream of an empty image is still loaded" {
	rb load "$FIX/empty.zst" "$OUT/img"
	assert_loaded "$FIX/empty.raw" "$OUT/img"
}
