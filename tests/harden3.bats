#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hardening, third round, at the boot's level: one deadline for every
# step of a boot that waits on the network, and messages that stay one
# line whatever a path or a server's string holds.
#
# Faults come from tests/fault/faultinj.c (LD_PRELOAD into the host
# build). Every background process and mount a test makes is removed in
# teardown, also when the test fails.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common
load helpers/fault
load helpers/harden

# ---- one deadline: the bounds of several steps never add up ------------------

# ramboot.timeout=3: the boot returns at the latest 3 + 15 s after the
# network stopped answering (docs/cmdline.md). A ram copy with
# ramboot.verity=1 reads the manifest in three steps (the image it names,
# the mapping's tree, the copy's check): each bounded alone, their bounds
# added up to 54 s. The bound of 30 s leaves 12 s to a busy host.
@test "boot: ramboot.timeout=3 ramboot.verity=1, the manifest's read hangs (root): the boot returns within the one deadline" {
	need_root ramboot.verity=1
	need_shim
	boot_root
	"$RAMBOOT_BIN" manifest --verity -o "$R/root/images/x.img.manifest" "$R/root/images/x.img" \
		>/dev/null 2>&1 || skip "manifest --verity failed (image not whole blocks?)"
	boot_hang 'read:path=*/images/x.img.manifest:hang' \
		"ramboot=ram ramboot.verity=1 ltsp.image=images/x.img ramboot.timeout=3" 30
	[ -n "$(boot_report fallback)" ]
}

@test "boot: ramboot.timeout=3 ramboot=lazy, the manifest's read hangs (root): the boot returns within the one deadline" {
	need_root ramboot=lazy
	need_shim
	boot_root
	"$RAMBOOT_BIN" manifest -o "$R/root/images/x.img.manifest" "$R/root/images/x.img" \
		>/dev/null 2>&1
	boot_hang 'read:path=*/images/x.img.manifest:hang' \
		"ramboot=lazy ltsp.image=images/x.img ramboot.timeout=3" 30
}

# ---- one message, one line ---------------------------------------------------

@test "a path with newlines does not forge console lines: lazy, load, boot" {
	local bad
	bad=$(printf 'e\nstate=switched\nx')
	run --separate-stderr "$RAMBOOT_BIN" lazy --image="$bad"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ] || { show_run; fail "not one line"; }
	[[ $stderr == *'e\nstate=switched\nx'* ]] || { show_run; fail "the path is not shown escaped"; }
	run --separate-stderr "$RAMBOOT_BIN" load "$bad" "$OUT/x.img"
	[ "$status" -ne 0 ]
	[ "${#stderr_lines[@]}" -eq 1 ] || { show_run; fail "load: not one line"; }
	run --separate-stderr "$RAMBOOT_BIN" "$(printf 'x\ny')"
	[ "$status" -eq 2 ]
	[[ ${stderr_lines[0]} == *"unknown command 'x\\ny'"* ]] || { show_run; fail "command name"; }
}

@test "control characters in a message are escaped, never written raw" {
	local bad
	bad=$(printf 'a\tb\033[2Jc\rd')
	run --separate-stderr "$RAMBOOT_BIN" load "$bad" "$OUT/x.img"
	[ "$status" -ne 0 ]
	! grep -q $'\033' <<<"$stderr" || fail "an escape sequence reached the terminal"
	! grep -q $'\r' <<<"$stderr" || fail "a carriage return reached the terminal"
	[[ $stderr == *'a\tb\x1b[2Jc\rd'* ]] || { show_run; fail "not escaped as expected"; }
}

# ---- the boot process itself never waits on the network ---------------------

# A hard NFS mount whose server is gone holds even a stat of the image:
# the look at the image and its manifest runs in a child the boot gives
# up on at its deadline (ramboot.timeout=1: 16 s).
@test "boot: the image's stat never returns (root): the boot returns by its deadline, image not found" {
	need_root ramboot=ram
	need_shim
	boot_root
	boot_hang 'stat:path=*/images/x.img:hang' \
		"ramboot=ram ltsp.image=images/x.img ramboot.timeout=1" 30
	[ "$(boot_report fallback)" = "image not found" ]
	[[ "$(boot_report error)" == *"no answer by the boot's deadline"* ]] ||
		fail "error: $(boot_report error)"
}

@test "boot: a lookup of the manifest beside the image never returns (root): the boot returns by its deadline" {
	need_root ramboot=ram
	need_shim
	boot_root
	boot_hang 'stat:path=*/images/x.img.manifest:hang' \
		"ramboot=ram ltsp.image=images/x.img ramboot.timeout=1" 30
}
