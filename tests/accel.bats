#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# images/qemu-accel.sh: the QEMU accelerator for the demo, the boot tests
# and the bench, and qemu_run, which starts every boot. KVM only when the
# kernel the boots use prints its banner under it. The probe runs a fake
# QEMU (a script that hangs on -accel kvm, as under nested virtualisation
# without support; aborts with the MSR assertion; runs the real-mode setup
# and then nothing; or "runs" the kernel by writing its lines on the
# serial file) against a fake KVM device: /dev/null is a writable
# character device.

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
	unset RAMBOOT_KVM_BOOT_TIMEOUT
	export RAMBOOT_KVM_PROBE_TIMEOUT=1
	export TMPDIR=$T
	: >"$T/vmlinuz"
}

# fake_qemu KIND: a QEMU stand-in at $T/qemu that logs its arguments (one
# call a line in $CALLS). KIND, for -accel kvm (under -accel tcg every
# kind but "fails" boots: kernel lines on the serial file, exit 0):
#   hang   never returns, prints nothing
#   runs   boots
#   fails  exits 1 with a message, like a QEMU that cannot initialise KVM
#   msr    aborts as on the host of issue 16 with -cpu max
#   edd    prints the real-mode setup's line, then hangs (-cpu host,-...)
#   slow   prints kernel lines, then hangs (a boot that times out)
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
boots() {
	printf 'Linux version 6.1.0-57-amd64 (fake)\r\nrbtest-init: up\r\n' > "$serial"
	exit 0
}
[ "$kind" = fails ] && {
	echo "qemu: -accel $accel: failed to initialize $accel: Operation not supported" >&2
	exit 1
}
[ "$accel" = kvm ] || boots
case $kind in
hang) exec sleep 600 ;;
runs) boots ;;
msr)
	echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
	echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3185: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
	kill -ABRT $$ ;;
edd)
	printf 'Probing EDD (edd=off to disable)... ok\r\n' > "$serial"
	exec sleep 600 ;;
slow)
	printf 'Linux version 6.1.0-57-amd64 (fake)\r\n' > "$serial"
	exec sleep 600 ;;
esac
exit 1
EOF
	chmod +x "$T/qemu"
	export RAMBOOT_QEMU=$T/qemu
}

# choose: source the helper in sh, as the scripts do, and print the
# accelerator and the reason on two lines
choose() {
	run --separate-stderr sh -c 'set -eu; . "$1"; qemu_accel_choose "$2" || exit; echo "$qemu_accel"; echo "$qemu_accel_why"' _ "$HELPER" "$T/vmlinuz"
}

# boot ACCEL [SECONDS]: qemu_run as the boot scripts call it, with
# qemu_accel=ACCEL as a probe would leave it, twice in one run; prints
# each boot's status and the accelerator after it
boot() {
	run --separate-stderr sh -c '
		. "$1"
		qemu_accel=$2
		for i in 1 2; do
			qemu_run "$3" "$4/serial$i" "$4/qemu$i.log" -m 512 -kernel "$4/vmlinuz"
			echo "boot $i: $? $qemu_accel"
		done' _ "$HELPER" "$1" "${2:-30}" "$T"
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
	assert_line -n 1 "/dev/null present but the kernel printed no banner in 1 s"
	# The probe asked for KVM alone, no fallback to TCG inside QEMU.
	run cat "$CALLS"
	assert_output --partial "-accel kvm"
	refute_output --partial "-accel tcg"
	[ "$(calls)" = 1 ]
}

@test "accel: the probe boots the boots' kernel with their -cpu; its banner -> kvm" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 kvm
	assert_line -n 1 "the kernel ran with /dev/null"
	run cat "$CALLS"
	assert_output --partial "-accel kvm -cpu max "
	assert_output --partial "-kernel $T/vmlinuz"
	refute_output --partial "-accel tcg"
	assert_output --partial "-no-reboot"
}

@test "accel: QEMU fails to start with -accel kvm -> tcg, with its message" {
	fake_qemu fails
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 --partial "/dev/null present but the probe kernel printed nothing"
	assert_line -n 1 --partial "failed to initialize kvm: Operation not supported"
}

@test "accel: a boot sector runs but the kernel aborts on an MSR (issue 16) -> tcg" {
	fake_qemu msr
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 --partial "/dev/null present but the probe kernel printed nothing; $T/qemu exited with 134"
	assert_line -n 1 --partial "kvm_buf_set_msrs: Assertion"
	[ "$(calls)" = 1 ]
}

@test "accel: the kernel stops after its real-mode setup (Probing EDD) -> tcg" {
	fake_qemu edd
	export RAMBOOT_KVM_DEV=/dev/null
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "/dev/null present but the kernel printed no banner in 1 s (last line: Probing EDD (edd=off to disable)... ok)"
}

@test "accel: no kernel to probe with -> tcg without a probe" {
	fake_qemu runs
	export RAMBOOT_KVM_DEV=/dev/null
	rm "$T/vmlinuz"
	choose
	assert_success
	assert_line -n 0 tcg
	assert_line -n 1 "no kernel to probe /dev/null with ($T/vmlinuz)"
	[ "$(calls)" = 0 ]
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
		qemu_accel_choose "$2"
		qemu_accel_choose "$2"
		sh -c ". \"\$1\"; qemu_accel_choose \"\$2\"; echo \"\$qemu_accel (\$qemu_accel_why)\"" _ "$1" "$2"' _ "$HELPER" "$T/vmlinuz"
	assert_success
	assert_output "kvm (the kernel ran with /dev/null)"
	[ "$(calls)" = 1 ]
}

@test "accel: qemu_run: a KVM boot that aborts (MSR) runs once more under TCG, the run stays on TCG" {
	fake_qemu msr
	boot kvm
	assert_success
	assert_line -n 0 "boot 1: 0 tcg"
	assert_line -n 1 "boot 2: 0 tcg"
	[ "$(calls)" = 3 ]
	run sed -n 's/.*-accel \([a-z]*\) .*/\1/p' "$CALLS"
	assert_output "$(printf 'kvm\ntcg\ntcg')"
	# One line says so; QEMU's message stays in its log.
	[ "$(printf '%s\n' "$stderr" | grep -c .)" = 1 ]
	[[ $stderr == "qemu: the KVM boot died with status 134 ("*"kvm_buf_set_msrs: Assertion"*"); booting again under TCG" ]]
	grep -q 'failed to set MSR 0x10a' "$T/qemu1.log"
	grep -q '^rbtest-init: up' "$T/serial1"
}

@test "accel: qemu_run: a KVM boot that prints no kernel line in time runs once more under TCG" {
	fake_qemu edd
	export RAMBOOT_KVM_BOOT_TIMEOUT=1
	boot kvm
	assert_success
	assert_line -n 0 "boot 1: 0 tcg"
	assert_line -n 1 "boot 2: 0 tcg"
	[ "$(calls)" = 3 ]
	[ "$stderr" = "qemu: the KVM boot printed no kernel line in 1 s; booting again under TCG" ]
	grep -q '^rbtest-init: up' "$T/serial1"
}

@test "accel: qemu_run: a KVM boot that runs, or times out after the kernel ran, is not run again" {
	fake_qemu runs
	boot kvm
	assert_success
	assert_line -n 0 "boot 1: 0 kvm"
	assert_line -n 1 "boot 2: 0 kvm"
	[ "$stderr" = "" ]
	[ "$(calls)" = 2 ]
	rm "$CALLS"
	fake_qemu slow
	boot kvm 1
	assert_line -n 0 "boot 1: 124 kvm"
	[ "$stderr" = "" ]
	[ "$(calls)" = 2 ]
}

@test "accel: qemu_run: RAMBOOT_QEMU_ACCEL=kvm is not run again under TCG; a TCG boot is run as it is" {
	fake_qemu msr
	export RAMBOOT_QEMU_ACCEL=kvm RAMBOOT_KVM_BOOT_TIMEOUT=1
	boot kvm
	assert_line -n 0 "boot 1: 134 kvm"
	[ "$(calls)" = 2 ]
	rm "$CALLS"
	unset RAMBOOT_QEMU_ACCEL
	fake_qemu hang
	boot tcg
	assert_line -n 0 "boot 1: 0 tcg"
	[ "$(calls)" = 2 ]
	[ "$stderr" = "" ]
}

@test "accel: the probe sees the banner of the real kernel under real QEMU (TCG)" {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
	k=$(find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' | sort -V | tail -n 1)
	[ -n "$k" ] || skip "no Debian kernel in /boot"
	run sh -c '. "$1"; qemu_accel_try tcg 120 "$2" || { echo "$qemu_accel_err"; exit 1; }' _ "$HELPER" "$k"
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
	run shellcheck -s sh -x images/qemu-accel.sh images/demo.sh tests/boot/run.sh tests/boot/pkg-boot.sh
	assert_success
	run shellcheck -s sh images/qemu-accel.sh images/demo.sh tests/boot/run.sh tests/boot/pkg-boot.sh
	assert_success
}
