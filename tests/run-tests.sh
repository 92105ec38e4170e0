#!/bin/sh
# tests/run-tests.sh - run every test and count. All suites speak TAP; the
# last line is "N passed, N failed, N skipped".
#   RAMBOOT_TESTS="unit bats boot pkgboot"   choose suites (default: all)
#   BATS_FILTER=regex                only bats tests whose name matches
#   BATS_FILES="tests/a.bats ..."    only these bats files (default: all)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
suites=${RAMBOOT_TESTS:-unit bats boot pkgboot}
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
			run_tap "$t" "$t"
		done ;;
	bats)
		# shellcheck disable=SC2086 # a list of files
		set -- ${BATS_FILES:-tests/*.bats}
		[ -e "$1" ] || continue
		if [ -n "${BATS_FILTER:-}" ]; then
			run_tap bats bats --tap -f "$BATS_FILTER" "$@"
		else
			run_tap bats bats --tap "$@"
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
