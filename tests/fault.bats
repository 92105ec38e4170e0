#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fault-injection shim (tests/fault/faultinj.c): each action and
# selector on plain programs (dd, cat, a small signal probe), then faults
# in `ramboot load` whose handling is settled: a full disk, a failing
# source, a refused mount.

load helpers/common
load helpers/fault

# A program that blocks in read(0) with SIGALRM and SIGTERM handlers:
#   sigprobe intr      handlers without SA_RESTART: read fails with EINTR
#   sigprobe restart   SA_RESTART: read goes on after the handler
# The SIGTERM handler exits 42.
make_sigprobe() {
	cat >"$BATS_FILE_TMPDIR/sigprobe.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
	const char *m = sig == SIGALRM ? "handler: ALRM\n" : "handler: TERM\n";

	(void)!write(2, m, strlen(m));
	if (sig == SIGTERM)
		_exit(42);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	char b[64];
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = argc > 1 && !strcmp(argv[1], "restart") ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	n = read(0, b, sizeof(b));
	if (n < 0)
		printf("read: %s\n", strerrorname_np(errno));
	else
		printf("read: %zd bytes\n", n);
	return 0;
}
EOF
	"${CC:-cc}" -O2 -Wall -Werror -o "$BATS_FILE_TMPDIR/sigprobe" "$BATS_FILE_TMPDIR/sigprobe.c"
}

setup_file() {
	faultinj_build
	make_sigprobe
	# 100 KiB of text, and 5 MiB of random bytes for ramboot (3 pipeline
	# chunks of 2 MiB)
	seq -f 'line %g' 1 12000 | head -c 102400 >"$BATS_FILE_TMPDIR/in.txt"
	head -c 5242880 /dev/urandom >"$BATS_FILE_TMPDIR/src.raw"
	zstd -q -1 -c "$BATS_FILE_TMPDIR/src.raw" >"$BATS_FILE_TMPDIR/src.zst"
	sha256sum "$BATS_FILE_TMPDIR/src.raw" | cut -d' ' -f1 >"$BATS_FILE_TMPDIR/src.sha256"
}

setup() {
	IN=$BATS_FILE_TMPDIR/in.txt
	SRC=$BATS_FILE_TMPDIR/src
	SUM=$(cat "$BATS_FILE_TMPDIR/src.sha256")
	PROBE=$BATS_FILE_TMPDIR/sigprobe
	setup_out
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	if mountpoint -q "$BATS_TEST_TMPDIR/mnt" 2>/dev/null; then
		umount "$BATS_TEST_TMPDIR/mnt"
	fi
}

# size FILE
size() {
	stat -c %s "$1"
}

# ---- the shim itself -------------------------------------------------------

@test "faultinj: every I/O call that ramboot imports is intercepted" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local want have missing=
	want=$(nm -D --undefined-only "$RAMBOOT_BIN" | awk '{print $2}' | sed 's/@.*//' |
		grep -E '^(__)?(p?read|p?write|readv|writev|copy_file_range|open|openat|creat|close|f?(data)?sync|sync_file_range|ioctl|u?mount|umount2|dup[23]?)(64)?(_chk|_2)?$')
	have=$(nm -D --defined-only "$FAULTINJ_SO" | awk '{print $3}')
	[ -n "$want" ] || fail "found no I/O imports in $RAMBOOT_BIN"
	for s in $want; do
		grep -qx -- "$s" <<<"$have" || missing="$missing $s"
	done
	[ -z "$missing" ] || fail "not intercepted:$missing"
}

@test "faultinj: without FAULTINJ nothing changes" {
	run faultinj_run '' dd if="$IN" of="$OUT/copy" bs=4096 status=none
	expect_status 0
	cmp "$IN" "$OUT/copy"
	[ "$(faultinj_count)" -eq 0 ]
}

@test "faultinj: a rule that does not parse stops the program with 125" {
	local r
	for r in 'reed:errno=EIO' 'read:errno=ENOPE' 'read:nth=0' 'read:after=1X' \
		'open:after=1' 'read:signal=NOPE' 'read:colour=red' 'read:path'; do
		run --separate-stderr faultinj_run "$r" cat "$IN"
		expect_status 125
		assert_equal "$output" ''
		[[ $stderr == *"faultinj: FAULTINJ rule '$r'"* ]] || fail "no message for '$r': $stderr"
	done
}

@test "faultinj: errno fails the call (open EACCES, read EIO)" {
	run --separate-stderr faultinj_run 'open:path=in.txt:errno=EACCES' cat "$IN"
	expect_status 1
	assert_equal "$stderr" "cat: $IN: Permission denied"
	assert_fault_fired "rule=1 call=open n=1 path=$IN action=errno:EACCES"

	run --separate-stderr faultinj_run 'read:path=in.txt:errno=EIO' cat "$IN"
	expect_status 1
	assert_equal "$stderr" "cat: $IN: Input/output error"
}

@test "faultinj: nth fires on exactly that call (times=1), and follows dup2" {
	# dd reads each block from fd 0 and writes it to fd 1, both dup2()ed
	# from the files it opened
	run faultinj_run 'read:path=*/in.txt:nth=3:times=1:delay_ms=1' \
		dd if="$IN" of="$OUT/copy" bs=1024 status=none
	expect_status 0
	cmp "$IN" "$OUT/copy"
	[ "$(faultinj_count)" -eq 1 ]
	assert_fault_fired '^faultinj pid=[0-9]+ rule=1 call=read n=3 fd=0 action=delay_ms:1$'

	rm -f "$(faultinj_log)"
	run --separate-stderr faultinj_run "write:path=$OUT/copy:nth=3:errno=EIO" \
		dd if="$IN" of="$OUT/copy" bs=1024 status=none
	expect_status 1
	assert_equal "$stderr" "dd: error writing '$OUT/copy': Input/output error"
	assert_equal "$(size "$OUT/copy")" 2048
	assert_fault_fired 'call=write n=3 fd=1 action=errno:EIO'
}

@test "faultinj: after= cuts the write short, then ENOSPC (a full disk)" {
	run --separate-stderr faultinj_run 'write:path=copy:after=5000:errno=ENOSPC' \
		dd if="$IN" of="$OUT/copy" bs=4096 status=none
	expect_status 1
	assert_equal "$stderr" "dd: error writing '$OUT/copy': No space left on device"
	assert_equal "$(size "$OUT/copy")" 5000
	cmp -n 5000 "$IN" "$OUT/copy"
	assert_fault_fired 'call=write n=2 fd=1 action=short:904$'
	assert_fault_fired 'call=write n=3 fd=1 action=errno:ENOSPC$'

	# cat copies with copy_file_range where it can, else read/write
	run --separate-stderr faultinj_run 'copy_file_range,write:prog=cat:fd=1:after=3000:errno=ENOSPC' \
		bash -c 'exec cat "$1" >"$2"' _ "$IN" "$OUT/copy2"
	expect_status 1
	[[ $stderr == 'cat: '*': No space left on device' ]] || fail "stderr: $stderr"
	assert_equal "$(size "$OUT/copy2")" 3000
}

@test "faultinj: delay_ms slows every matching call, the output stays right" {
	run faultinj_run 'read:path=in.txt:delay_ms=20' \
		dd if="$IN" of="$OUT/copy" bs=16384 status=none
	expect_status 0
	cmp "$IN" "$OUT/copy"
	# 8 reads: 6 full blocks, the 4 KiB tail, the one that sees the end
	[ "$(faultinj_count 'action=delay_ms:20$')" -eq 8 ]
}

@test "faultinj: stall blocks until the process is killed (timeout: 124)" {
	run faultinj_run 'read:path=in.txt:after=4096:stall' \
		timeout 2 dd if="$IN" of="$OUT/copy" bs=1024 status=none
	expect_status 124
	assert_equal "$(size "$OUT/copy")" 4096
	assert_fault_fired 'call=read n=5 fd=0 action=stall$'

	run faultinj_run 'read:path=in.txt:stall' timeout 2 cat "$IN"
	expect_status 124
	assert_output ''
}

@test "faultinj: in a stall, handlers run; without SA_RESTART the call fails with EINTR" {
	local pid
	faultinj_run 'read:fd=0:stall' "$PROBE" intr </dev/null >"$OUT/stdout" 2>"$OUT/stderr" &
	PIDS+=($!)
	pid=$(faultinj_wait 'action=stall')
	PIDS+=("$pid")
	kill -ALRM "$pid"
	wait "${PIDS[0]}"
	assert_equal "$(cat "$OUT/stderr")" 'handler: ALRM'
	assert_equal "$(cat "$OUT/stdout")" 'read: EINTR'
}

@test "faultinj: in a stall, with SA_RESTART the call blocks again; SIGTERM's handler runs" {
	local pid rc=0
	faultinj_run 'read:fd=0:stall' "$PROBE" restart </dev/null >"$OUT/stdout" 2>"$OUT/stderr" &
	PIDS+=($!)
	pid=$(faultinj_wait 'action=stall')
	PIDS+=("$pid")
	kill -ALRM "$pid"
	# the handler's line shows the signal was taken; the read still blocks
	for _ in $(seq 300); do
		[ -s "$OUT/stderr" ] && break
		sleep 0.1
	done
	assert_equal "$(cat "$OUT/stderr")" 'handler: ALRM'
	kill -0 "$pid"
	kill -TERM "$pid"
	wait "${PIDS[0]}" || rc=$?
	assert_equal "$rc" 42
	assert_equal "$(cat "$OUT/stderr")" $'handler: ALRM\nhandler: TERM'
	assert_equal "$(cat "$OUT/stdout")" ''
}

@test "faultinj: signal kills the program at the chosen call (status 128+N)" {
	local sig num
	for sig in TERM INT HUP KILL XFSZ; do
		num=$(kill -l "$sig")
		rm -f "$(faultinj_log)"
		# a caller may leave signals ignored (a background job SIGINT,
		# nohup SIGHUP): give every signal its default back
		run faultinj_run "read:path=in.txt:nth=2:signal=$sig" \
			env --default-signal dd if="$IN" of="$OUT/copy" bs=1024 status=none
		expect_status $((128 + num))
		assert_equal "$(size "$OUT/copy")" 1024
		assert_fault_fired "call=read n=2 fd=0 action=signal:$sig\$"
	done
}

@test "faultinj: prog= keeps a rule to the named program" {
	run faultinj_run 'read:prog=nomatch:errno=EIO' cat "$IN"
	expect_status 0
	run faultinj_run 'read:prog=c?t:errno=EIO' cat "$IN"
	expect_status 1
}

# ---- ramboot load under faults ---------------------------------------------

@test "faultinj ramboot: ENOSPC at the 2nd write: exit 1, 'No space left on device', no output" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	# --sha256: the pipeline (2 MiB writes), not copy_file_range. The
	# new file has no name yet: the rule names its directory.
	run --separate-stderr faultinj_run 'write:path=out:nth=2:errno=ENOSPC' \
		"$RAMBOOT_BIN" load --progress=none --sha256="$SUM" "$SRC.raw" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $OUT/x.img: write error: No space left on device"
	assert_fault_fired 'rule=1 call=write n=2 fd=[0-9]+ action=errno:ENOSPC'
	[ "$(faultinj_count)" -eq 1 ]
}

@test "faultinj ramboot: a disk full after 1 MiB, raw (copy_file_range) and zstd (write)" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	run --separate-stderr faultinj_run 'copy_file_range,write:path=out:after=1M:errno=ENOSPC' \
		"$RAMBOOT_BIN" load --progress=none "$SRC.raw" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $OUT/x.img: write error: No space left on device"
	assert_fault_fired 'action=short:1048576$'
	assert_fault_fired 'action=errno:ENOSPC$'

	rm -f "$(faultinj_log)"
	run --separate-stderr faultinj_run 'write:path=out:after=1M:errno=ENOSPC' \
		"$RAMBOOT_BIN" load --progress=none "$SRC.zst" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $OUT/x.img: write error: No space left on device"
	assert_fault_fired 'call=write .*action=errno:ENOSPC$'
}

@test "faultinj ramboot: in-kernel copy refused (EXDEV): the pipeline takes over" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	run --separate-stderr faultinj_run 'copy_file_range:errno=EXDEV;write:path=out' \
		"$RAMBOOT_BIN" load --progress=none "$SRC.raw" "$OUT/x.img"
	assert_loaded "$SRC.raw" "$OUT/x.img"
	assert_fault_fired 'rule=1 call=copy_file_range n=1 .*action=errno:EXDEV$'
	[ "$(faultinj_count 'rule=2 call=write')" -eq 3 ]
}

@test "faultinj ramboot: the source fails to read (EIO): exit 1, read error" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	run --separate-stderr faultinj_run 'read:path=src.zst:nth=2:errno=EIO' \
		"$RAMBOOT_BIN" load --progress=none "$SRC.zst" "$OUT/x.img"
	assert_load_fail 1 "$OUT/x.img"
	assert_equal "$stderr" "ramboot: load: error: $SRC.zst: read error: Input/output error"
	assert_fault_fired 'call=read n=2 .*action=errno:EIO$'
}

@test "faultinj ramboot: the tmpfs mount is refused (EPERM): exit 1, no mount point left" {
	require_loader
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local mnt=$BATS_TEST_TMPDIR/mnt
	run --separate-stderr faultinj_run 'mount:errno=EPERM' \
		"$RAMBOOT_BIN" load --progress=none --tmpfs="$mnt" "$SRC.raw" x.img
	assert_fault_fired "call=mount n=1 path=$mnt action=errno:EPERM"
	assert_load_fail 1
	assert_equal "$stderr" "ramboot: load: error: $mnt: cannot mount tmpfs: Operation not permitted"
	[ ! -e "$mnt" ] || fail "$mnt left behind"
}
