#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot` sends its warnings and fallbacks to the kernel log too
# (/dev/kmsg below the root prefix; a regular file there stands in for
# the kernel's device): `dmesg` and `journalctl -b` keep the line a
# console booted with `quiet splash` never shows.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/bootroot

setup() {
	bootroot_init 8000000 9000000
	mkdir -p "$R/dev"
	: >"$R/dev/kmsg"
}

@test "kmsg: a fallback reaches the kernel log as one warning record" {
	echo "ramboot=ram ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb
	assert_success
	[[ $stderr == *"booting from the network image"* ]]
	run cat "$R/dev/kmsg"
	assert_output --regexp '^<4>ramboot: boot: warning: image not found: .*; booting from the network image$'
	[ "${#lines[@]}" -eq 1 ]
}

@test "kmsg: an unknown setting is a warning there too; ramboot=off writes nothing" {
	echo "ramboot=off" >"$R/proc/cmdline"
	rb
	assert_success
	[ ! -s "$R/dev/kmsg" ]
	echo "ramboot=off ramboot.bogus=1" >"$R/proc/cmdline"
	rb
	assert_success
	run cat "$R/dev/kmsg"
	assert_output --partial '<4>ramboot: boot: warning: '
}

@test "kmsg: a link at dev/kmsg is never followed, and a missing one is no error" {
	rm "$R/dev/kmsg"
	: >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$R/dev/kmsg"
	echo "ramboot=ram ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb
	assert_success
	[ ! -s "$BATS_TEST_TMPDIR/target" ]
	rm "$R/dev/kmsg"
	rb
	assert_success
	[[ $stderr == *"booting from the network image"* ]]
}
