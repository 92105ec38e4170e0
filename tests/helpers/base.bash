# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The start every .bats file shares (tests/README.md):
#
#   load helpers/base
#
# bats-support and bats-assert (fail, assert_success, assert_output, ...);
# TOP, the checkout; RAMBOOT_BIN, the binary under test (the caller's, else
# ./ramboot; exported) and BIN, its short name in the command tests.
# `ramboot boot` reads every RAMBOOT_* variable as a boot setting: none
# from the caller (RAMBOOT_QEMU_ACCEL, a setting to test, ...) reaches the
# program under test; each test sets what it means. tests/run-tests.sh
# does the same for the files that do not load this one.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
RAMBOOT_BIN=${RAMBOOT_BIN:-$TOP/ramboot}
export RAMBOOT_BIN
# shellcheck disable=SC2034 # read by the .bats files
BIN=$RAMBOOT_BIN
while read -r v; do
	[ "$v" = RAMBOOT_BIN ] || unset "$v"
done < <(compgen -e -X '!RAMBOOT_*')
