# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The scaffolding of the hardening tests (tests/harden.bats,
# tests/harden2.bats): fixtures and the fault shim once per file, and a
# teardown that kills the background processes in PIDS, then undoes what
# track recorded (mounts, loop devices) in reverse order, also when the
# test failed. Load after helpers/common and helpers/fault.

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

# Background processes first (a writer that holds a FIFO open), then
# mounts and loop devices in reverse order of creation.
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
		loop)
			losetup -d "$arg" 2>/dev/null ;;
		esac
	done
	return 0
}

# track KIND ARG: undo in teardown (mount DIR, loop DEV).
track() {
	echo "$1 $2" >>"$CLEAN"
}

need_root() {
	is_root || skip "needs root ($1)"
}

need_shim() {
	faultinj_require_dynamic "$RAMBOOT_BIN"
}

