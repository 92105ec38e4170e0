# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The fixture root of the tests that run `ramboot boot` without a kernel
# to boot (tests/boot-cmd.bats, explain, kmsg, verify-policy, verity-boot):
#
#   load helpers/bootroot
#   setup() { bootroot_init; ...; }
#
# bootroot_init [AVAIL [TOTAL [FREE]]]: R, the root prefix (RAMBOOT_ROOT) of
#   the program, below the test's directory: proc/cmdline (empty: ramboot
#   is off), proc/meminfo (meminfo AVAIL TOTAL FREE; AVAIL 8000000 unless
#   given), root/images/ (the network root the images are in) and etc/.
# meminfo AVAIL [TOTAL [FREE]]: proc/meminfo says MemAvailable AVAIL kB,
#   MemTotal TOTAL (default AVAIL + 100000), MemFree FREE (default AVAIL).
# rb ARGS: `ramboot boot ARGS` in R, stdout and stderr apart (run
#   --separate-stderr). RAMBOOT= (the mode setting) never reaches it.
# report KEY: the value of KEY in R's run/ramboot/report.
# ram_umount: the tmpfs of the RAM copy (run/ramboot/ram) unmounted, in
#   teardown.
# make_sqfs PATH [BYTES]: a squashfs image at PATH of a small tree (an
#   etc/hostname, and an sbin/init of BYTES random bytes, 300000 unless
#   given).

load helpers/base

bootroot_init() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/root/images" "$R/etc"
	: >"$R/proc/cmdline"
	meminfo "${1:-8000000}" "${@:2}"
}

meminfo() {
	printf 'MemTotal:       %s kB\nMemFree:        %s kB\nMemAvailable:   %s kB\n' \
		"${2:-$(($1 + 100000))}" "${3:-$1}" "$1" >"$R/proc/meminfo"
}

rb() {
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$BIN" boot "$@"
}

report() {
	sed -n "s/^$1=//p" "$R/run/ramboot/report"
}

ram_umount() {
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram" || umount -l "$R/run/ramboot/ram"
	fi
}

make_sqfs() {
	local d=$BATS_TEST_TMPDIR/tree
	mkdir -p "$d/etc" "$d/sbin"
	echo hello >"$d/etc/hostname"
	head -c "${2:-300000}" /dev/urandom >"$d/sbin/init"
	mksquashfs "$d" "$1" -quiet -noappend -no-progress >/dev/null
}
