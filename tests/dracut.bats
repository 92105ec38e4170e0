#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The dracut module (dracut/90ramboot) without booting: when its hooks
# consider ramboot asked for, and that its scripts (and the package's
# maintainer scripts) are clean POSIX sh. The boots are in
# tests/boot/pkg-boot.sh.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
LIB=$TOP/dracut/90ramboot/ramboot-dracut-lib.sh

# asked CMDLINE [CONF-LINE]: ramboot_asked under busybox sh
asked() {
	printf '%s\n' "$1" > "$BATS_TEST_TMPDIR/cmdline"
	printf '%s\n' "${2:-# nothing}" > "$BATS_TEST_TMPDIR/ramboot.conf"
	# shellcheck disable=SC2016 # expanded by that sh
	busybox sh -c '. "$1"; ramboot_cmdline=$2 ramboot_conf=$3; ramboot_asked' sh \
		"$LIB" "$BATS_TEST_TMPDIR/cmdline" "$BATS_TEST_TMPDIR/ramboot.conf"
}

setup() {
	command -v busybox >/dev/null || skip "no busybox (busybox-static)"
}

@test "dracut: not asked for: no ramboot switch and nothing set in ramboot.conf" {
	run asked "root=live:/dev/vda rd.live.image quiet"
	assert_failure
	run asked "root=live:/dev/vda rambootx=1 noramboot" "#RAMBOOT=ram"
	assert_failure
	run asked "quiet" "RAMBOOT="
	assert_failure
}

@test "dracut: asked for by a switch on the kernel command line" {
	local c
	for c in "ramboot" "ramboot=ram" "ramboot=off" "ramboot.swap=zram" "quiet ramboot=lazy rd.live.image"; do
		run asked "root=live:/dev/vda $c"
		assert_success
	done
}

@test "dracut: asked for by a setting in /etc/ramboot.conf" {
	run asked "quiet" "RAMBOOT=ram"
	assert_success
	run asked "quiet" "  export RAMBOOT_SWAP=zram"
	assert_success
}

@test "dracut: the module's scripts and the maintainer scripts are shellcheck-clean" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	cd "$TOP"
	run shellcheck -x -s sh dracut/90ramboot/ramboot-*.sh debian/ramboot.postinst \
		debian/ramboot.postrm man/mkman.sh tests/boot/pkg-boot.sh
	assert_success
	run shellcheck dracut/90ramboot/module-setup.sh
	assert_success
}
