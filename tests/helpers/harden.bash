# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The scaffolding of the hardening tests (tests/harden.bats,
# tests/harden2.bats, tests/harden3.bats): fixtures and the fault shim once per file, and a
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

# ---- ramboot boot against a fixture root (needs root: the tmpfs of a copy)

# boot_root: a fixture root for `ramboot boot` (tests/boot-cmd.bats has
# the same layout) with a squashfs at root/images/x.img.
boot_root() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/root/images" "$R/etc" "$BATS_TEST_TMPDIR/tree/etc"
	printf 'MemTotal:       8100000 kB\nMemFree:        8000000 kB\nMemAvailable:   8000000 kB\n' \
		>"$R/proc/meminfo"
	echo hello >"$BATS_TEST_TMPDIR/tree/etc/hostname"
	head -c 300000 /dev/urandom >"$BATS_TEST_TMPDIR/tree/init"
	mksquashfs "$BATS_TEST_TMPDIR/tree" "$R/root/images/x.img" -quiet -noappend \
		-no-progress >/dev/null
	track mount "$R/run/ramboot/ram"
}

boot_report() { # key -> value
	sed -n "s/^$1=//p" "$R/run/ramboot/report"
}

# boot_hang RULE CMDLINE [BOUND]: ramboot boot under the shim; it must
# return within BOUND seconds (default 120: a bound that catches a hang;
# the boot's own is ramboot.timeout= + 15 s, docs/cmdline.md).
boot_hang() {
	echo "$2" >"$R/proc/cmdline"
	run --separate-stderr timeout -k 5 "${3:-120}" env -u RAMBOOT RAMBOOT_ROOT="$R" \
		FAULTINJ="$1" FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" \
		LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot
	case $status in 124 | 137) fail "ramboot boot did not return" ;; esac
	expect_status 0
	grep -q 'action=hang' "$BATS_TEST_TMPDIR/fi.log" || fail "the hang never fired"
	assert_output ""
	[ "$(boot_report mode_done)" = off ]
}
