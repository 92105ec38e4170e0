#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# images/qemu-accel.sh: the QEMU accelerator for the demo and the boot
# tests. KVM only when a probe guest really runs with it. The probe runs
# a fake QEMU (a script that hangs on -accel kvm, as under nested
# virtualisation without support, or one that "runs" the guest by writing
# the marker on its serial file) against a fake KVM device: /dev/null is a
# writable character device.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
HELPER=$TOP/images/qemu-accel.sh

setup() {
	T=$BATS_TEST_TMPDIR
	CALLS=$T/qemu-calls
	unset RAMBOOT_QEMU_ACCEL RAMBOOT_QEMU_ACCEL_PROBED RAMBOOT_QEMU RAMBOOT_KVM_DEV
	export RAMBOOT_KVM_PROBE_TIMEOUT=1
	export TMPDIR=$T
}

# fake_qemu KIND: a QEMU stand-in at $T/qemu that logs its arguments (one
# call a line in $CALLS). KIND: hang (never returns with -accel kvm), runs
# (prints the guest's marker on the -serial file), fails (exits 1 with a
# message, like a QEMU that cannot initialise KVM).
fake_qemu() {
	cat >"$T/qemu" <<EOF
#!/bin/sh
echo "\$*" >> "$CALLS"
kind=$1
EOF
	cat >>"$T/qemu" <<'EOF'
prev= serial= accel=
for a; do
	case $prev in
	-accel) accel=$a ;;
	-serial) serial=${a#file:} ;;
	esac
	prev=$a
done
case $kind in
hang) [ "$accel" = kvm ] && exec sleep 600 ;;
runs) printf 'RAMBOOT-ACCEL-OK\n' > "$serial"; exit 0 ;;
fails) echo "qemu: -accel $accel: failed to initialize $accel: Operation not supported" >&2; exit 1 ;;
esac
exit 1
EOF
	chmod +x "$T/qemu"
	export RAMBOOT_QEMU=$T/qemu
}

# choose: source the helper in sh, as the scripts do, and print the
# accelerator and the reason on two lines
choose() {
	run --separate-stderr sh -c 'set -eu; . "$1"; qemu_accel_choose || exit; echo "$qemu_accel"; echo "$qemu_accel_why"' _ "$HELPER"
}

calls() {
	if [ -f "$CALLS" ]; then wc -l <"$CALLS"; else echo 0; fi
}

@test "accel: KVM device present but no guest runs with it (QEMU hangs) -> tcg" {
	fake_qemu hang
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "/dev/null present but no guest ran in 1 s"
	# The probe asked for KVM alone, no fallback to TCG inside QEMU.
	run cat "$CALLS"
	assert_output --partial "-accel kvm"
	refute_output --partial "-accel tcg"
	[ "$(calls)" = 1 ]
}

@test "accel: KVM device present and the probe guest prints its marker -> kvm" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 kvm
	assert_line -n 1 "a test guest ran with /dev/null"
	run cat "$CALLS"
	assert_output --partial "-accel kvm"
	refute_output --partial "-accel tcg"
	assert_output --partial "-no-reboot"
}

@test "accel: QEMU fails to start with -accel kvm -> tcg, with its message" {
	fake_qemu fails
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 --partial "/dev/null present but the probe guest printed nothing"
	assert_line -n 1 --partial "failed to initialize kvm: Operation not supported"
}

@test "accel: no KVM device, or not a writable character device -> tcg without a probe" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=$T/no-such-kvm
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "no $T/no-such-kvm"
	: >"$T/kvm-file"
	export RAMBOOT_KVM_DEV=$T/kvm-file
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "$T/kvm-file is not a character device"
	[ "$(calls)" = 0 ]
}

@test "accel: RAMBOOT_QEMU_ACCEL=tcg forces TCG without a probe" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null RAMBOOT_QEMU_ACCEL=tcg
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "RAMBOOT_QEMU_ACCEL=tcg"
	[ "$(calls)" = 0 ]
}

@test "accel: RAMBOOT_QEMU_ACCEL=kvm forces KVM without a probe" {
	fake_qemu hang
	export RAMBOOT_KVM_DEV=$T/no-such-kvm RAMBOOT_QEMU_ACCEL=kvm
	choose
	assert_success
	assert_line -n 0 kvm
	[ "$(calls)" = 0 ]
}

@test "accel: a bad RAMBOOT_QEMU_ACCEL or probe timeout is an error" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null RAMBOOT_QEMU_ACCEL=fast
	choose
	assert_failure
	assert_output ""
	[ "$stderr" = "RAMBOOT_QEMU_ACCEL=fast: expected kvm or tcg" ]
	export RAMBOOT_QEMU_ACCEL=KVM
	choose
	assert_failure
	unset RAMBOOT_QEMU_ACCEL
	export RAMBOOT_KVM_PROBE_TIMEOUT=5s
	choose
	assert_failure
	[[ $stderr == "RAMBOOT_KVM_PROBE_TIMEOUT=5s: "* ]]
	[ "$(calls)" = 0 ]
}

@test "accel: the probe runs once per run (later calls and child processes reuse it)" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null
	run --separate-stderr sh -c '
		set -eu
		. "$1"
		qemu_accel_choose
		qemu_accel_choose
		sh -c ". \"\$1\"; qemu_accel_choose; echo \"\$qemu_accel (\$qemu_accel_why)\"" _ "$1"' _ "$HELPER"
	assert_success
	assert_output "kvm (a test guest ran with /dev/null)"
	[ "$(calls)" = 1 ]
}

@test "accel: the probe boot sector prints the marker under real QEMU (TCG)" {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
	run sh -c '. "$1"; qemu_accel_bootsector "$2"' _ "$HELPER" "$T/boot.img"
	assert_success
	[ "$(stat -c %s "$T/boot.img")" = 512 ]
	[ "$(od -An -tx1 -j 510 -N 2 "$T/boot.img" | tr -d ' ')" = 55aa ]
	# The guest resets the machine after the marker: QEMU exits by itself.
	run timeout 60 qemu-system-x86_64 -nodefaults -display none -no-reboot -accel tcg \
		-serial "file:$T/serial" -drive "format=raw,file=$T/boot.img" </dev/null
	assert_success
	run cat "$T/serial"
	assert_output "RAMBOOT-ACCEL-OK"
	# And through the helper's own probe function.
	run sh -c '. "$1"; qemu_accel_try tcg 60 || { echo "$qemu_accel_err"; exit 1; }' _ "$HELPER"
	assert_success
}

@test "accel: tests/boot/run.sh rejects a bad RAMBOOT_QEMU_ACCEL" {
	export RAMBOOT_QEMU_ACCEL=fast RAMBOOT_STATIC=$T/no-ramboot RBTEST_CACHE=$T/cache
	run "$TOP/tests/boot/run.sh"
	assert_failure
	assert_line --partial "not ok 1 - off"
	assert_line "# RAMBOOT_QEMU_ACCEL=fast: expected kvm or tcg"
	refute_line --partial "# skip"
}

@test "accel: shellcheck -s sh on the helper and the scripts that source it" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	cd "$TOP"
	run shellcheck -s sh -x images/qemu-accel.sh images/demo.sh tests/boot/run.sh
	assert_success
	run shellcheck -s sh images/qemu-accel.sh images/demo.sh tests/boot/run.sh
	assert_success
}
