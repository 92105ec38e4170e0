# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# images/qemu-accel.sh - which QEMU accelerator to boot with: KVM when it
# really runs a guest, else TCG. Sourced by images/demo.sh and
# tests/boot/run.sh (POSIX sh).
#
# A writable /dev/kvm is not enough: under nested virtualisation without
# support the device opens, QEMU starts with -accel kvm, and the guest
# never runs a single instruction. So KVM is chosen only after a probe: a
# 512-byte boot sector booted with -accel kvm alone must print a marker on
# its serial port within a few seconds.
#
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   use this accelerator, no probe
#   RAMBOOT_QEMU=PATH            the QEMU binary (default qemu-system-x86_64)
#   RAMBOOT_KVM_DEV=PATH         the KVM device (default /dev/kvm)
#   RAMBOOT_KVM_PROBE_TIMEOUT=S  seconds the probe guest gets (default 5)
#
# qemu_accel_choose sets qemu_accel (kvm or tcg) and qemu_accel_why (the
# reason, for "accelerator: $qemu_accel ($qemu_accel_why)"); it returns 1,
# with the error on stderr, on a bad RAMBOOT_QEMU_ACCEL or probe timeout.
# The probe runs once: its result is exported in RAMBOOT_QEMU_ACCEL_PROBED
# ("kvm REASON" or "tcg REASON"), which later calls and child processes
# reuse.

qemu_bin=${RAMBOOT_QEMU:-qemu-system-x86_64}
qemu_accel=
qemu_accel_why=

# What the probe guest prints on COM1.
qemu_accel_marker=RAMBOOT-ACCEL-OK

# qemu_accel_check: 0 when the settings are valid, else 1 and why on stderr
qemu_accel_check() {
	case ${RAMBOOT_QEMU_ACCEL:-} in
	'' | kvm | tcg) ;;
	*)
		echo "RAMBOOT_QEMU_ACCEL=$RAMBOOT_QEMU_ACCEL: expected kvm or tcg" >&2
		return 1 ;;
	esac
	case ${RAMBOOT_KVM_PROBE_TIMEOUT:-5} in
	'' | *[!0-9]* | 0*)
		echo "RAMBOOT_KVM_PROBE_TIMEOUT=$RAMBOOT_KVM_PROBE_TIMEOUT: expected whole seconds (1 or more)" >&2
		return 1 ;;
	esac
	return 0
}

# qemu_accel_bootsector FILE: write the probe guest, a real-mode boot
# sector (BIOS loads it at 0:7c00). It prints the marker and a newline on
# COM1, then loads an empty IDT and raises int3: the CPU cannot deliver
# it (#GP, #DF, triple fault), the machine resets and QEMU, run with
# -no-reboot, exits. No need to wait for the timeout when the guest runs.
qemu_accel_bootsector() {
	_qa_s=$qemu_accel_marker
	{
		# cli; xor ax,ax; mov ds,ax; mov dx,0x3f8
		printf '\372\061\300\216\330\272\370\003'
		# mov al,C; out dx,al for each character
		while [ -n "$_qa_s" ]; do
			printf '\260%s\356' "${_qa_s%"${_qa_s#?}"}"
			_qa_s=${_qa_s#?}
		done
		printf '\260\n\356'
		# lidt [0x7df0] (six zero bytes: limit 0); int3; 1: hlt; jmp 1b
		printf '\017\001\036\360\175\314\364\353\375'
	} > "$1" || return 1
	# The boot signature, at 510; the bytes between are zeros.
	printf '\125\252' | dd of="$1" bs=1 seek=510 conv=notrunc 2>/dev/null
}

# qemu_accel_try ACCEL SECONDS: boot the probe guest with -accel ACCEL
# alone. 0 when it printed the marker; else 1, with what went wrong in
# qemu_accel_err.
qemu_accel_try() {
	qemu_accel_err=
	_qa_dir=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-accel.XXXXXX") || {
		qemu_accel_err="mktemp failed"
		return 1
	}
	if ! qemu_accel_bootsector "$_qa_dir/boot.img"; then
		rm -rf "$_qa_dir"
		qemu_accel_err="could not write the probe boot sector"
		return 1
	fi
	: > "$_qa_dir/serial"
	# timeout signals QEMU's whole process group; -k for a QEMU that
	# ignores SIGTERM.
	timeout -k 2 "$2" "$qemu_bin" -nodefaults -display none -no-reboot \
		-accel "$1" -serial "file:$_qa_dir/serial" \
		-drive "format=raw,file=$_qa_dir/boot.img" \
		</dev/null >"$_qa_dir/qemu.log" 2>&1
	_qa_rc=$?
	if grep -q "$qemu_accel_marker" "$_qa_dir/serial"; then
		rm -rf "$_qa_dir"
		return 0
	fi
	case $_qa_rc in
	124 | 137) qemu_accel_err="no guest ran in $2 s" ;;
	*)
		_qa_msg=$(grep -v '^[[:space:]]*$' "$_qa_dir/qemu.log" | tail -n 1)
		qemu_accel_err="the probe guest printed nothing; $qemu_bin exited with $_qa_rc${_qa_msg:+: $_qa_msg}" ;;
	esac
	rm -rf "$_qa_dir"
	return 1
}

qemu_accel_choose() {
	qemu_accel_check || return 1
	if [ -n "${RAMBOOT_QEMU_ACCEL:-}" ]; then
		qemu_accel=$RAMBOOT_QEMU_ACCEL
		qemu_accel_why="RAMBOOT_QEMU_ACCEL=$RAMBOOT_QEMU_ACCEL"
		return 0
	fi
	_qa_dev=${RAMBOOT_KVM_DEV:-/dev/kvm}
	qemu_accel=tcg
	if [ ! -e "$_qa_dev" ]; then
		qemu_accel_why="no $_qa_dev"
		return 0
	fi
	if [ ! -c "$_qa_dev" ]; then
		qemu_accel_why="$_qa_dev is not a character device"
		return 0
	fi
	if [ ! -w "$_qa_dev" ]; then
		qemu_accel_why="$_qa_dev is not writable"
		return 0
	fi
	case ${RAMBOOT_QEMU_ACCEL_PROBED:-} in
	'kvm '* | 'tcg '*)
		qemu_accel=${RAMBOOT_QEMU_ACCEL_PROBED%% *}
		qemu_accel_why=${RAMBOOT_QEMU_ACCEL_PROBED#* }
		return 0 ;;
	esac
	_qa_t=${RAMBOOT_KVM_PROBE_TIMEOUT:-5}
	if qemu_accel_try kvm "$_qa_t"; then
		qemu_accel=kvm
		qemu_accel_why="a test guest ran with $_qa_dev"
	else
		qemu_accel_why="$_qa_dev present but $qemu_accel_err"
	fi
	RAMBOOT_QEMU_ACCEL_PROBED="$qemu_accel $qemu_accel_why"
	export RAMBOOT_QEMU_ACCEL_PROBED
	return 0
}
