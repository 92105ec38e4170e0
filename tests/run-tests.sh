#!/bin/sh
# tests/run-tests.sh - run every test and count. All suites speak TAP; the
# last line is "N passed, N failed, N skipped".
#   RBTEST_SUITES="unit bats boot pkgboot"   choose suites (default: all;
#                                    RAMBOOT_TESTS, its old name, still works)
#   BATS_FILTER=regex                only bats tests whose name matches
#   BATS_FILES="tests/a.bats ..."    only these bats files (default: all)
#
# `ramboot boot` reads every RAMBOOT_* variable as a boot setting, so the
# unit and bats suites run without the caller's: each test sets the ones
# it means. Only RAMBOOT_BIN, the binary under test, is passed on. The
# QEMU suites (boot, pkgboot) keep theirs (RAMBOOT_QEMU_ACCEL, ...): the
# program under test runs in the guest there.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
suites=${RBTEST_SUITES:-${RAMBOOT_TESTS:-unit bats boot pkgboot}}
clean=
for v in $(env | sed -n 's/^\(RAMBOOT_[A-Za-z0-9_]*\)=.*/\1/p'); do
	[ "$v" = RAMBOOT_BIN ] || clean="$clean -u $v"
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_tap() { # name, command...
	name=$1; shift
	echo "# --- $name"
	"$@" 2>&1 | tee -a "$log"
}

for s in $suites; do
	case $s in
	unit)
		for t in build/unit/test_*; do
			[ -x "$t" ] || continue
			# shellcheck disable=SC2086 # a list of options
			run_tap "$t" env $clean "$t"
		done ;;
	bats)
		# shellcheck disable=SC2086 # a list of files
		set -- ${BATS_FILES:-tests/*.bats}
		[ -e "$1" ] || continue
		# shellcheck disable=SC2086 # a list of options
		if [ -n "${BATS_FILTER:-}" ]; then
			run_tap bats env $clean bats --tap -f "$BATS_FILTER" "$@"
		else
			run_tap bats env $clean bats --tap "$@"
		fi ;;
	boot)
		if [ -x tests/boot/run.sh ]; then
			run_tap boot tests/boot/run.sh
		fi ;;
	pkgboot)
		# initrds built by the package's initramfs-tools hook and
		# dracut module, booted in QEMU
		if [ -x tests/boot/pkg-boot.sh ]; then
			run_tap pkgboot tests/boot/pkg-boot.sh
		fi ;;
	esac
done

passed=$(grep -Ec '^ok [0-9]+' "$log" | tr -d ' ')
skipped=$(grep -Ec '^ok [0-9]+.*# (skip|SKIP)' "$log" | tr -d ' ')
failed=$(grep -Ec '^not ok [0-9]+' "$log" | tr -d ' ')
passed=$((passed - skipped))
echo
grep -E '^not ok [0-9]+' "$log" | sed 's/^/FAILED: /'
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
