#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The loader under hostile conditions: a DEST that is a symbolic link, a
# device or the source itself; descriptors 0-2 closed; kills and a file
# size limit in the middle of a load; a full disk under `manifest -o`;
# block devices too small or mounted; sources that stall; manifests that
# are not files or lie about the size; truncated squashfs images; an
# unreadable /proc/meminfo; DEST outside --tmpfs; malformed numbers.
#
# Faults come from tests/fault/faultinj.c (LD_PRELOAD into the host
# build). Root-only cases (mknod, loop devices, tmpfs) skip without root.
# Every background process, mount and loop device a test makes is
# removed in teardown, also when the test fails.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common
load helpers/fault
load helpers/harden

# Seconds without data before the loader gives up, in the stall tests.
STALL=1
# The source stops delivering after 256 KiB (the first pipeline chunk
# is 2 MiB: nothing reached DEST yet).
STALL_ZST='read,pread:path=sqfs.zst:after=256K:stall'

# assert_dir_holds DIR [NAME...]: DIR holds exactly these names (hidden
# temporary files included).
assert_dir_holds() {
	local dir=$1 have want
	shift
	have=$(find "$dir" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
	if [ "$have" != "$want" ]; then
		show_run
		fail "$dir holds '${have//$'\n'/ }', expected '${want//$'\n'/ }'"
	fi
}

# assert_stderr_matches ERE
assert_stderr_matches() {
	if ! grep -qE -- "$1" <<<"$stderr"; then
		show_run
		fail "stderr does not match '$1'"
	fi
}

# is_mounted DIR: DIR is a mount point in /proc/mounts.
is_mounted() {
	awk -v d="$1" '$2 == d { f = 1 } END { exit !f }' /proc/mounts
}

# new_loop FILE [losetup options]: attach, print the device.
new_loop() {
	local f=$1 dev
	shift
	dev=$(losetup -f --show "$@" "$f") || fail "losetup failed"
	track loop "$dev"
	echo "$dev"
}

# kill_load SIG RULES ARGS...: run `ramboot load ARGS` in the background
# under the shim with RULES (which stall the source), wait for the stall,
# send SIG to the loader and wait (10 s at most) for it to end. Sets
# status and stderr like `run`. SIGINT gets its default action back (a
# background job inherits it ignored).
kill_load() {
	local sig=$1 rules=$2 bg pid i
	shift 2
	rm -f "$(faultinj_log)"
	faultinj_run "$rules" env --default-signal=INT "$RAMBOOT_BIN" load --progress=none "$@" \
		</dev/null >"$BATS_TEST_TMPDIR/kill.out" 2>"$BATS_TEST_TMPDIR/kill.err" &
	bg=$!
	if ! pid=$(faultinj_wait 'action=stall' 10); then
		pkill -KILL -P "$bg" 2>/dev/null
		wait "$bg" 2>/dev/null || true
		cat "$BATS_TEST_TMPDIR/kill.err" >&2
		fail "the load never reached the stall"
	fi
	kill -"$sig" "$pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.1
	done
	# a loader that shrugged the signal off is stopped here (its
	# parent still waits for it: the pid is still the loader's)
	if kill -0 "$bg" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	status=0
	wait "$bg" || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/kill.out")
	stderr=$(cat "$BATS_TEST_TMPDIR/kill.err")
}

# start_sleeper FIFO: a process that holds FIFO open for writing and
# never writes; returns once it holds it.
start_sleeper() {
	local f=$1 pid i
	# read-write: the open never waits for a reader
	sleep 60 3<>"$f" &
	pid=$!
	PIDS+=("$pid")
	for ((i = 0; i < 100; i++)); do
		[ -e "/proc/$pid/fd/3" ] && return 0
		sleep 0.05
	done
	fail "the writer never opened $f"
}

# ---- DEST ---------------------------------------------------------------------

@test "harden: --force never follows a symlink at DEST" {
	local bad=$BATS_TEST_TMPDIR/trunc.zst
	head -c 100000 "$FIX/sqfs.zst" >"$bad"
	echo precious >"$OUT/victim"
	ln -s victim "$OUT/l"
	# a failing load
	rb load --force "$bad" "$OUT/l"
	expect_status 1
	assert_equal "$(cat "$OUT/victim")" precious
	assert_equal "$(readlink "$OUT/l")" victim
	# a good image: refused all the same, not written through
	rb load --force "$FIX/sqfs.zst" "$OUT/l"
	expect_status 1
	assert_stderr_matches '^ramboot: load: .*/l: is a symbolic link'
	assert_equal "$(cat "$OUT/victim")" precious
	assert_equal "$(readlink "$OUT/l")" victim
	# a dangling one is not created through either
	ln -s gone "$OUT/d"
	rb load --force "$FIX/one.raw" "$OUT/d"
	expect_status 1
	[ ! -e "$OUT/gone" ] || fail "wrote through a dangling symlink"
	assert_dir_holds "$OUT" victim l d
	# and without --force a regular DEST stays as it is
	rb load "$FIX/sqfs.zst" "$OUT/victim"
	expect_status 1
	assert_stderr_matches 'exists already'
	assert_equal "$(cat "$OUT/victim")" precious
}

@test "harden: --force never deletes or writes a character device at DEST" {
	need_root "mknod"
	local bad=$BATS_TEST_TMPDIR/trunc.zst node=$OUT/null rdev
	head -c 100000 "$FIX/sqfs.zst" >"$bad"
	rdev=$(stat -c '%t:%T' /dev/null)
	mknod "$node" c "$((16#${rdev%:*}))" "$((16#${rdev#*:}))"
	rb load --force "$bad" "$node"
	expect_status 1
	[ -c "$node" ] || fail "the device node was deleted or replaced"
	rb load --force "$FIX/sqfs.zst" "$node"
	expect_status 1
	assert_stderr_matches 'not a regular file'
	[ -c "$node" ] || fail "the device node was deleted or replaced"
	assert_equal "$(stat -c '%t:%T' "$node")" "$rdev"
	assert_dir_holds "$OUT" null
}

@test "harden: --force with DEST the source itself (same name, hard link) leaves it alone" {
	local a=$OUT/a.img z=$OUT/z.zst
	cp "$FIX/sqfs.raw" "$a"
	cp "$FIX/sqfs.zst" "$z"
	rb load --force "$a" "$a"
	cmp "$FIX/sqfs.raw" "$a"
	expect_status 1
	assert_stderr_matches 'the source itself'
	ln "$a" "$OUT/b.img"
	rb load --force "$a" "$OUT/b.img"
	cmp "$FIX/sqfs.raw" "$a"
	expect_status 1
	rb load --force "$z" "$z"
	cmp "$FIX/sqfs.zst" "$z"
	expect_status 1
	assert_dir_holds "$OUT" a.img b.img z.zst
}

@test "harden: --force killed mid-load (SIGTERM) keeps the old DEST whole, no temporary file" {
	need_shim
	echo old >"$OUT/img"
	kill_load TERM "$STALL_ZST" --force "$FIX/sqfs.zst" "$OUT/img"
	expect_status $((128 + $(kill -l TERM)))
	assert_equal "$(cat "$OUT/img")" old
	assert_dir_holds "$OUT" img
	# where O_TMPFILE is refused, the named temporary file goes too
	kill_load TERM "open:path=.:errno=EOPNOTSUPP;$STALL_ZST" \
		--force "$FIX/sqfs.zst" "$OUT/img"
	expect_status $((128 + $(kill -l TERM)))
	assert_equal "$(cat "$OUT/img")" old
	assert_dir_holds "$OUT" img
	assert_fault_fired 'call=open .*path=\. action=errno:EOPNOTSUPP'
}

@test "harden: --force killed mid-load (SIGKILL) keeps the old DEST whole, no temporary file" {
	need_shim
	echo old >"$OUT/img"
	run --separate-stderr faultinj_run 'read,pread:path=sqfs.zst:after=256K:signal=KILL' \
		"$RAMBOOT_BIN" load --progress=none --force "$FIX/sqfs.zst" "$OUT/img"
	assert_fault_fired 'action=signal:KILL'
	expect_status $((128 + $(kill -l KILL)))
	assert_equal "$(cat "$OUT/img")" old
	# the new file had no name yet (O_TMPFILE)
	assert_dir_holds "$OUT" img
}

@test "harden: --force and a full disk (ENOSPC) keep the old DEST whole, no temporary file" {
	need_shim
	echo old >"$OUT/img"
	# the new file: O_TMPFILE (opened as ".") or a hidden name; the
	# last rule is where a loader would write DEST in place
	run --separate-stderr faultinj_run \
		'write,pwrite:path=.:after=1M:errno=ENOSPC;write,pwrite:path=.img.*:after=1M:errno=ENOSPC;write,pwrite:path=img:after=1M:errno=ENOSPC' \
		"$RAMBOOT_BIN" load --progress=none --force "$FIX/sqfs.zst" "$OUT/img"
	assert_fault_fired 'action=errno:ENOSPC'
	expect_status 1
	assert_equal "$(cat "$OUT/img")" old
	assert_dir_holds "$OUT" img
}

# ---- descriptors 0-2 ------------------------------------------------------------

@test "harden: fds 0-2 closed: no log line lands in the image" {
	local sum
	sum=$(cat "$FIX/sqfs.sha256")
	run bash -c '"$@" 0<&- 2>&-' _ "$RAMBOOT_BIN" load -v --sha256="$sum" \
		"$FIX/sqfs.zst" "$OUT/a"
	expect_status 0
	cmp "$FIX/sqfs.raw" "$OUT/a"
	run bash -c '"$@" >&- 2>&-' _ "$RAMBOOT_BIN" load -v --sha256="$sum" \
		"$FIX/sqfs.raw" "$OUT/b"
	expect_status 0
	cmp "$FIX/sqfs.raw" "$OUT/b"
	run bash -c '"$@" <&- >&- 2>&-' _ "$RAMBOOT_BIN" load -v "$FIX/sqfs.gz" "$OUT/c"
	expect_status 0
	cmp "$FIX/sqfs.raw" "$OUT/c"
}

# ---- kills and limits -------------------------------------------------------------

@test "harden: SIGTERM, SIGINT, SIGHUP mid-load: cleanup, then death by the signal (128+N)" {
	need_shim
	local sig
	for sig in TERM INT HUP; do
		kill_load "$sig" "$STALL_ZST" "$FIX/sqfs.zst" "$OUT/img"
		assert_no_output_left
		expect_status $((128 + $(kill -l "$sig")))
		assert_stderr_matches '^ramboot: load: error: interrupted'
	done
}

@test "harden: a file size limit (SIGXFSZ) mid-load: exit 1, no partial DEST" {
	# ulimit -f 1024: 1 MiB; the image is several
	local lim='ulimit -f 1024; exec "$@"'
	[ "$(stat -c %s "$FIX/sqfs.raw")" -gt 1048576 ] || fail "fixture too small"
	run --separate-stderr bash -c "$lim" _ "$RAMBOOT_BIN" load "$FIX/sqfs.zst" "$OUT/img"
	expect_status 1
	assert_stderr_matches 'File too large'
	assert_no_output_left
	# a raw copy (copy_file_range)
	run --separate-stderr bash -c "$lim" _ "$RAMBOOT_BIN" load "$FIX/sqfs.raw" "$OUT/img"
	expect_status 1
	assert_no_output_left
	# --force: the old DEST stays
	echo old >"$OUT/img"
	run --separate-stderr bash -c "$lim" _ "$RAMBOOT_BIN" load --force "$FIX/sqfs.raw" "$OUT/img"
	expect_status 1
	assert_equal "$(cat "$OUT/img")" old
	assert_dir_holds "$OUT" img
}

@test "harden: --tmpfs killed mid-load (SIGTERM): unmounted, its directory removed" {
	need_root "mount"
	need_shim
	local mnt=$BATS_TEST_TMPDIR/ram
	track mount "$mnt"
	kill_load TERM "$STALL_ZST" --tmpfs="$mnt" "$FIX/sqfs.zst" img
	expect_status $((128 + $(kill -l TERM)))
	! is_mounted "$mnt" || fail "the tmpfs is still mounted at $mnt"
	[ ! -e "$mnt" ] || fail "$mnt, made by the loader, is still there"
	# a directory that was there before stays, empty
	mkdir "$mnt"
	kill_load TERM "$STALL_ZST" --tmpfs="$mnt" "$FIX/sqfs.zst" img
	expect_status $((128 + $(kill -l TERM)))
	! is_mounted "$mnt" || fail "the tmpfs is still mounted at $mnt"
	[ -d "$mnt" ] || fail "$mnt was there before the load and is gone"
	assert_dir_holds "$mnt"
}

@test "harden: --tmpfs and a file size limit (SIGXFSZ): exit 1, unmounted, directory removed" {
	need_root "mount"
	local mnt=$BATS_TEST_TMPDIR/ram
	track mount "$mnt"
	run --separate-stderr bash -c 'ulimit -f 1024; exec "$@"' _ \
		"$RAMBOOT_BIN" load --tmpfs="$mnt" "$FIX/sqfs.zst" img
	expect_status 1
	! is_mounted "$mnt" || fail "the tmpfs is still mounted at $mnt"
	[ ! -e "$mnt" ] || fail "$mnt, made by the loader, is still there"
}

# ---- manifest -o --------------------------------------------------------------------

@test "harden: manifest -o: a failed write (ENOSPC) keeps the old manifest byte for byte" {
	need_shim
	local m=$OUT/M good=$BATS_TEST_TMPDIR/M.good
	# the new file: O_TMPFILE (opened as "."), a hidden name, or M itself
	local full='write,pwrite:path=.:errno=ENOSPC;write,pwrite:path=.M.*:errno=ENOSPC;write,pwrite:path=M:errno=ENOSPC'
	rb manifest -o "$m" "$FIX/sqfs.zst"
	expect_status 0
	cp "$m" "$good"
	run --separate-stderr faultinj_run "$full" "$RAMBOOT_BIN" manifest -o "$m" "$FIX/sqfs.xz"
	assert_fault_fired 'action=errno:ENOSPC'
	expect_status 1
	cmp "$good" "$m"
	assert_dir_holds "$OUT" M
	# without O_TMPFILE: the hidden temporary file is removed
	rm -f "$(faultinj_log)"
	run --separate-stderr faultinj_run "open:path=.:errno=EOPNOTSUPP;$full" \
		"$RAMBOOT_BIN" manifest -o "$m" "$FIX/sqfs.xz"
	assert_fault_fired 'action=errno:ENOSPC'
	expect_status 1
	cmp "$good" "$m"
	assert_dir_holds "$OUT" M
}

# ---- block devices --------------------------------------------------------------------

@test "harden: block-device DEST too small: refused, its first 64 KiB untouched" {
	need_root "losetup"
	local back=$BATS_TEST_TMPDIR/backing pat=$BATS_TEST_TMPDIR/pattern dev
	yes 'ramboot pattern' | head -c 1048576 >"$pat"
	cp "$pat" "$back"
	dev=$(new_loop "$back")
	rb load "$FIX/sqfs.zst" "$dev"
	expect_status 1
	assert_stderr_matches 'too small'
	cmp -n 65536 "$pat" "$dev"
	cmp "$pat" "$dev"
}

@test "harden: block-device DEST that is mounted: refused (O_EXCL), content untouched" {
	need_root "losetup, mount"
	local back=$BATS_TEST_TMPDIR/backing orig=$BATS_TEST_TMPDIR/orig mnt=$BATS_TEST_TMPDIR/mnt dev
	cp "$FIX/sqfs.raw" "$orig"
	truncate -s 8M "$orig"
	cp "$orig" "$back"
	dev=$(new_loop "$back")
	mkdir -p "$mnt"
	track mount "$mnt"
	mount -t squashfs -o ro "$dev" "$mnt"
	rb load "$FIX/one.raw" "$dev"
	expect_status 1
	assert_stderr_matches 'in use'
	cmp "$orig" "$dev"
	rb load --force "$FIX/sqfs.zst" "$dev"
	expect_status 1
	cmp "$orig" "$dev"
}

# ---- stalls -----------------------------------------------------------------------------

@test "harden: stall: a FIFO whose writer never writes: exit 1 after --stall-timeout, nothing left" {
	local f=$BATS_TEST_TMPDIR/fifo
	mkfifo "$f"
	start_sleeper "$f"
	run --separate-stderr timeout 20 "$RAMBOOT_BIN" load --progress=none \
		--stall-timeout="$STALL" "$f" "$OUT/img"
	expect_status 1
	assert_stderr_matches 'no data for [0-9]+ s.*stall'
	assert_no_output_left
}

@test "harden: stall: a regular file whose read stalls: exit 1, nothing left" {
	need_shim
	run --separate-stderr faultinj_run "$STALL_ZST" timeout 20 "$RAMBOOT_BIN" load \
		--progress=none --stall-timeout="$STALL" "$FIX/sqfs.zst" "$OUT/img"
	expect_status 1
	assert_fault_fired 'action=stall'
	assert_stderr_matches 'no data for [0-9]+ s.*stall'
	assert_no_output_left
}

@test "harden: stall: --prefetch of a source whose read stalls: exit 1" {
	need_shim
	run --separate-stderr faultinj_run 'read,pread:path=sqfs.raw:after=256K:stall' \
		timeout 20 "$RAMBOOT_BIN" load --progress=none --stall-timeout="$STALL" \
		--prefetch "$FIX/sqfs.raw"
	expect_status 1
	assert_fault_fired 'action=stall'
	assert_stderr_matches 'no data for [0-9]+ s'
}

@test "harden: stall: --help gives --stall-timeout and its default of 30 s" {
	rb load --help
	expect_status 0
	assert_output --partial '--stall-timeout'
	assert_output --regexp 'default 30[^0-9]'
}

# ---- manifests that cannot be trusted ------------------------------------------------------

@test "harden: --manifest that is a FIFO, a directory or a dangling symlink: exit 1 at once, nothing written" {
	local m
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	mkdir "$BATS_TEST_TMPDIR/dir"
	ln -s "$BATS_TEST_TMPDIR/no/such/file" "$BATS_TEST_TMPDIR/dangling"
	for m in fifo dir dangling; do
		# a FIFO nobody writes to must not hang the load
		run --separate-stderr timeout 20 "$RAMBOOT_BIN" load \
			--manifest="$BATS_TEST_TMPDIR/$m" "$FIX/sqfs.zst" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
	done
}

@test "harden: --manifest with size 0 and a non-empty image: exit 1, not a byte written" {
	need_shim
	local man=$BATS_TEST_TMPDIR/m0 src
	printf 'ramboot-manifest 1\nsize 0\nsha256 %s\n' "$(cat "$FIX/sqfs.sha256")" >"$man"
	# log-only rules on every write to the new file (O_TMPFILE opened
	# as ".", a hidden name, or DEST itself)
	for src in "$FIX/sqfs.zst" "$FIX/sqfs.raw"; do
		rm -f "$(faultinj_log)"
		run --separate-stderr faultinj_run \
			'write,pwrite,copy_file_range:path=.;write,pwrite,copy_file_range:path=.img.*;write,pwrite,copy_file_range:path=img' \
			"$RAMBOOT_BIN" load --progress=none --manifest="$man" "$src" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
		if [ "$(faultinj_count)" -ne 0 ]; then
			cat "$(faultinj_log)" >&2
			fail "$src: bytes were written although the manifest allows none"
		fi
	done
}

# ---- truncated squashfs --------------------------------------------------------------------

@test "harden: truncated squashfs from a pipe (head -c 1M): exit 1" {
	local t=$BATS_TEST_TMPDIR/t.raw
	head -c 1048576 "$FIX/sqfs.raw" >"$t"
	rb_pipe "$t" load --expect-fs=squashfs - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_stderr_matches 'truncated squashfs'
	rb_pipe "$t" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "harden: truncated squashfs from a regular file (half of it): exit 1" {
	local t=$BATS_TEST_TMPDIR/t.raw
	head -c $(($(stat -c %s "$FIX/sqfs.raw") / 2)) "$FIX/sqfs.raw" >"$t"
	rb load --expect-fs=squashfs "$t" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_stderr_matches 'truncated squashfs'
	rb load "$t" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "harden: truncated squashfs inside a valid zstd stream: exit 1" {
	local t=$BATS_TEST_TMPDIR/t.raw
	head -c $(($(stat -c %s "$FIX/sqfs.raw") / 2)) "$FIX/sqfs.raw" >"$t"
	zstd -q -c "$t" >"$t.zst"
	rb load --expect-fs=squashfs "$t.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_stderr_matches 'truncated squashfs'
	rb load "$t.zst" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb_pipe "$t.zst" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

# ---- memory check ---------------------------------------------------------------------------

@test "harden: --min-free fails closed when /proc/meminfo cannot be read: exit 3" {
	local root=$BATS_TEST_TMPDIR/root
	mkdir -p "$root"
	RAMBOOT_ROOT=$root rb load "$FIX/sqfs.zst" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
	assert_stderr_matches 'MemAvailable'
	# a meminfo without MemAvailable (kernels before 3.14)
	mkdir -p "$root/proc"
	printf 'MemTotal:       8388608 kB\nMemFree:        4194304 kB\n' >"$root/proc/meminfo"
	RAMBOOT_ROOT=$root rb load "$FIX/sqfs.zst" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
	RAMBOOT_ROOT=$root rb load --min-free=0 "$FIX/one.raw" "$OUT/img"
	assert_load_fail 3 "$OUT/img"
}

# ---- command line --------------------------------------------------------------------------

@test "harden: --tmpfs with DEST outside it (sibling prefix, .., sub/../..): usage error, nothing mounted" {
	local ram=$BATS_TEST_TMPDIR/ram dest
	track mount "$ram"
	# were DEST let through, --min-free=1T would stop the run at the
	# memory check, still before any mount
	for dest in "$BATS_TEST_TMPDIR/ram2/x" ../x sub/../../x "$ram/../x" "$ram/sub/../../x"; do
		rb load --tmpfs="$ram" --min-free=1T "$FIX/sqfs.zst" "$dest"
		expect_status 2
		assert_stderr_matches 'inside the --tmpfs directory'
		! is_mounted "$ram" || fail "a tmpfs was mounted at $ram"
		[ ! -e "$ram" ] || fail "$ram was created"
	done
}

@test "harden: --min-free ' -1' and '+1': usage error (exit 2)" {
	rb load --min-free=' -1' "$FIX/one.raw" "$OUT/img"
	assert_load_fail 2 "$OUT/img"
	rb load --min-free='+1' "$FIX/one.raw" "$OUT/img"
	assert_load_fail 2 "$OUT/img"
}

@test "harden: manifest -j abc and -j 0: usage error (exit 2)" {
	rb manifest -j abc "$FIX/one.raw"
	expect_status 2
	assert_equal "$output" ''
	rb manifest -j 0 "$FIX/one.raw"
	expect_status 2
	assert_equal "$output" ''
	rb manifest -j 65 "$FIX/one.raw"
	expect_status 2
}

@test "harden: stall: the source stalls before the pipeline (probe): exit 1 after --stall-timeout" {
	need_shim
	run --separate-stderr faultinj_run 'pread:path=sqfs.zst:nth=1:stall' \
		timeout -k 2 8 "$RAMBOOT_BIN" load --progress=none --stall-timeout="$STALL" \
		"$FIX/sqfs.zst" "$OUT/img"
	expect_status 1
	assert_stderr_matches 'no data for [0-9]+ s'
	assert_no_output_left
}

@test "harden: SIGTERM while the source stalls before the pipeline: death by the signal" {
	need_shim
	kill_load TERM 'pread:path=sqfs.zst:nth=1:stall' --stall-timeout=0 "$FIX/sqfs.zst" "$OUT/img"
	assert_no_output_left
	expect_status $((128 + $(kill -l TERM)))
}
