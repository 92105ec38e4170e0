# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
#
# images/qemu-accel.sh - which QEMU accelerator to boot with, and the one
# way every boot starts QEMU (qemu_run). Sourced by images/demo.sh,
# tests/boot/run.sh, tests/boot/pkg-boot.sh and bench/boot-bench.sh
# (POSIX sh).
#
# A writable /dev/kvm is not enough. Under nested virtualisation without
# support the device opens and QEMU starts with -accel kvm, but the guest
# never runs; on other hosts a boot sector runs and a Linux kernel does
# not (QEMU aborts with "failed to set MSR 0x10a", or the kernel stops
# after its real-mode setup's "Probing EDD"). So KVM is chosen only after
# a probe boots the kernel the boots use, with the same -cpu, and the
# kernel prints its banner within a few seconds.
#
#   RAMBOOT_QEMU_ACCEL=kvm|tcg   use this accelerator, no probe, no retry
#   RAMBOOT_QEMU=PATH            the QEMU binary (default qemu-system-x86_64)
#   RAMBOOT_KVM_DEV=PATH         the KVM device (default /dev/kvm)
#   RAMBOOT_KVM_PROBE_TIMEOUT=S  seconds the probe kernel gets (default 10)
#   RAMBOOT_KVM_BOOT_TIMEOUT=S   seconds a KVM boot gets for its first
#                                kernel line before it is run under TCG
#                                (default 60)
#
# qemu_accel_choose KERNEL sets qemu_accel (kvm or tcg) and qemu_accel_why
# (the reason, for "accelerator: $qemu_accel ($qemu_accel_why)"); it
# returns 1, with the error on stderr, on a bad setting. The probe runs
# once: its result is exported in RAMBOOT_QEMU_ACCEL_PROBED ("kvm REASON"
# or "tcg REASON"), which later calls and child processes reuse.

qemu_bin=${RAMBOOT_QEMU:-qemu-system-x86_64}
qemu_accel=
qemu_accel_why=
# The CPU model of every boot and of the probe: what the probe proves is
# what the boots need.
qemu_cpu=max
# What qemu_run prints its one line after (tests/boot: "# ", TAP).
qemu_note_prefix=

# qemu_accel_secs NAME VALUE: 0 when VALUE is whole seconds, else 1
qemu_accel_secs() {
	case $2 in
	'' | *[!0-9]* | 0*)
		echo "$1=$2: expected whole seconds (1 or more)" >&2
		return 1 ;;
	esac
}

# qemu_accel_check: 0 when the settings are valid, else 1 and why on stderr
qemu_accel_check() {
	case ${RAMBOOT_QEMU_ACCEL:-} in
	'' | kvm | tcg) ;;
	*)
		echo "RAMBOOT_QEMU_ACCEL=$RAMBOOT_QEMU_ACCEL: expected kvm or tcg" >&2
		return 1 ;;
	esac
	qemu_accel_secs RAMBOOT_KVM_PROBE_TIMEOUT "${RAMBOOT_KVM_PROBE_TIMEOUT:-10}" &&
		qemu_accel_secs RAMBOOT_KVM_BOOT_TIMEOUT "${RAMBOOT_KVM_BOOT_TIMEOUT:-60}"
}

# qemu_kernel_line FILE: 0 when the serial log FILE holds a line from the
# running kernel or its init, more than the real-mode setup and the
# decompressor print before the kernel proper runs
qemu_kernel_line() {
	[ -s "$1" ] || return 1
	tr -d '\r' <"$1" | grep -v -e '^[[:space:]]*$' -e '^Probing EDD' -e '^early console in' \
		-e '^Decompressing Linux' -e '^Parsing ELF' -e '^Booting the kernel' \
		-e '^KASLR' -e '^Physical KASLR' -e '^Virtual KASLR' | grep -q .
}

# qemu_accel_try ACCEL SECONDS KERNEL: boot KERNEL with -accel ACCEL
# alone (no root: it would panic) until it prints "Linux version". 0 when
# it did; else 1, with what went wrong in qemu_accel_err.
qemu_accel_try() {
	qemu_accel_err=
	_qa_dir=$(mktemp -d "${TMPDIR:-/tmp}/ramboot-accel.XXXXXX") || {
		qemu_accel_err="mktemp failed"
		return 1
	}
	: > "$_qa_dir/serial"
	# timeout signals QEMU's whole process group; -k for a QEMU that
	# ignores SIGTERM.
	timeout -k 2 "$2" "$qemu_bin" -nodefaults -display none -no-reboot \
		-accel "$1" -cpu "$qemu_cpu" -smp 2 -m 256 -kernel "$3" \
		-append "console=ttyS0 panic=-1" -serial "file:$_qa_dir/serial" \
		</dev/null >"$_qa_dir/qemu.log" 2>&1 &
	_qa_pid=$!
	_qa_ok=
	while :; do
		if grep -q 'Linux version' "$_qa_dir/serial"; then
			_qa_ok=1
			kill "$_qa_pid" 2>/dev/null
			break
		fi
		kill -0 "$_qa_pid" 2>/dev/null || break
		sleep 0.2
	done
	{ wait "$_qa_pid"; } 2>/dev/null
	_qa_rc=$?
	[ -n "$_qa_ok" ] || ! grep -q 'Linux version' "$_qa_dir/serial" || _qa_ok=1
	if [ -n "$_qa_ok" ]; then
		rm -rf "$_qa_dir"
		return 0
	fi
	_qa_last=$(tr -d '\r' <"$_qa_dir/serial" | grep -v '^[[:space:]]*$' | tail -n 1)
	case $_qa_rc in
	124 | 137) qemu_accel_err="the kernel printed no banner in $2 s${_qa_last:+ (last line: $_qa_last)}" ;;
	*)
		_qa_msg=$(grep -v '^[[:space:]]*$' "$_qa_dir/qemu.log" | tail -n 1)
		qemu_accel_err="the probe kernel printed nothing; $qemu_bin exited with $_qa_rc${_qa_msg:+: $_qa_msg}" ;;
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
	if [ -z "${1:-}" ] || [ ! -r "$1" ]; then
		qemu_accel_why="no kernel to probe $_qa_dev with${1:+ ($1)}"
		return 0
	fi
	_qa_t=${RAMBOOT_KVM_PROBE_TIMEOUT:-10}
	if qemu_accel_try kvm "$_qa_t" "$1"; then
		qemu_accel=kvm
		qemu_accel_why="the kernel ran with $_qa_dev"
	else
		qemu_accel_why="$_qa_dev present but $qemu_accel_err"
	fi
	RAMBOOT_QEMU_ACCEL_PROBED="$qemu_accel $qemu_accel_why"
	export RAMBOOT_QEMU_ACCEL_PROBED
	return 0
}

# qemu_run SECONDS SERIAL OUT OPTION...: boot QEMU with -nodefaults
# -no-reboot -display none, the chosen accelerator and CPU, the serial
# console in the file SERIAL and QEMU's own output in OUT, for at most
# SECONDS; returns what timeout(1) returns (124: the boot timed out).
# Under a probed KVM, a QEMU that dies by a signal (an assertion) or
# prints no kernel line within RAMBOOT_KVM_BOOT_TIMEOUT s is run once
# more under TCG, with one line on stderr saying so; the later boots of
# the run use TCG from the start. RAMBOOT_QEMU_ACCEL=kvm means no retry.
qemu_run() {
	_qr_t=$1 _qr_serial=$2 _qr_out=$3
	shift 3
	: > "$_qr_out"
	qemu_run_once "$qemu_accel" "$@"
	[ -n "$_qr_why" ] || return "$_qr_rc"
	qemu_accel=tcg
	qemu_accel_why="a KVM boot $_qr_why"
	RAMBOOT_QEMU_ACCEL_PROBED="tcg $qemu_accel_why"
	export RAMBOOT_QEMU_ACCEL_PROBED
	echo "${qemu_note_prefix}qemu: the KVM boot $_qr_why; booting again under TCG" >&2
	echo "qemu: the KVM boot $_qr_why; booting again under TCG" >> "$_qr_out"
	qemu_run_once tcg "$@"
	return "$_qr_rc"
}

# qemu_run_once ACCEL OPTION...: one boot for qemu_run; sets _qr_rc, and
# _qr_why to why a KVM boot should be run again under TCG (else empty)
qemu_run_once() {
	_qr_accel=$1
	shift
	_qr_why=
	: > "$_qr_serial"
	timeout -k 5 "$_qr_t" "$qemu_bin" -nodefaults -no-reboot -display none \
		-accel "$_qr_accel" -cpu "$qemu_cpu" "$@" -serial "file:$_qr_serial" \
		</dev/null >>"$_qr_out" 2>&1 &
	_qr_pid=$!
	if [ "$_qr_accel" != kvm ] || [ "${RAMBOOT_QEMU_ACCEL:-}" = kvm ]; then
		wait "$_qr_pid"
		_qr_rc=$?
		return 0
	fi
	_qr_n=$((${RAMBOOT_KVM_BOOT_TIMEOUT:-60} * 5))
	_qr_seen=
	while kill -0 "$_qr_pid" 2>/dev/null; do
		if qemu_kernel_line "$_qr_serial"; then
			_qr_seen=1
			break
		fi
		if [ "$_qr_n" -le 0 ]; then
			_qr_why="printed no kernel line in ${RAMBOOT_KVM_BOOT_TIMEOUT:-60} s"
			kill "$_qr_pid" 2>/dev/null
			break
		fi
		sleep 0.2
		_qr_n=$((_qr_n - 1))
	done
	{ wait "$_qr_pid"; } 2>/dev/null
	_qr_rc=$?
	[ -z "$_qr_why" ] || return 0
	[ -n "$_qr_seen" ] || ! qemu_kernel_line "$_qr_serial" || _qr_seen=1
	_qr_msg=$(grep -v -e '^[[:space:]]*$' -e '^qemu: the KVM boot' "$_qr_out" | tail -n 1)
	case $_qr_rc in
	124 | 137) ;; # the boot's own timeout
	*)
		if [ "$_qr_rc" -gt 128 ]; then
			_qr_why="died with status $_qr_rc${_qr_msg:+ ($_qr_msg)}"
		elif [ -z "$_qr_seen" ]; then
			_qr_why="exited with $_qr_rc before a kernel line${_qr_msg:+ ($_qr_msg)}"
		fi ;;
	esac
	return 0
}
