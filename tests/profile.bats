#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot profile`: record the ranges of an image a workload reads (its
# page cache, sampled), stop the recorder (stop file, signal, --stop),
# merge and show profiles, and refuse bad input with one error line.
#
# The image lives in the test's temporary directory, which must not be a
# tmpfs (a tmpfs file is all page cache: nothing to drop). The workload
# reads with POSIX_FADV_RANDOM, so the kernel reads exactly the pages
# asked for, no readahead around them, and the profile is exact.
# /run/ramboot is below a root prefix ($RAMBOOT_ROOT) whose proc is the
# real /proc. Every recorder a test starts is stopped in teardown.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common

PG=4096
HEX=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
HEX2=2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	ROOT=$T/root
	mkdir -p "$ROOT"
	ln -s /proc "$ROOT/proc"
	export RAMBOOT_ROOT=$ROOT
	RUN=$ROOT/run/ramboot
	REC=
}

teardown() {
	if [ -n "$REC" ] && kill -0 "$REC" 2>/dev/null; then
		kill -KILL "$REC" 2>/dev/null || true
		wait "$REC" 2>/dev/null || true
	fi
}

need_page_cache() {
	[ "$(stat -f -c %T "$T")" != tmpfs ] || skip "$T is a tmpfs: no page cache to drop"
	command -v python3 >/dev/null || skip "no python3"
	command -v fincore >/dev/null || skip "no fincore (util-linux)"
}

# drop_cache FILE: write it back and drop its page cache
drop_cache() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
	[ "$(fincore --bytes --noheadings --output RES "$1" | tr -d " ")" = 0 ] ||
		skip "the page cache of $1 could not be dropped"
}

# make_image FILE PAGES [EXTRA]: PAGES pages and EXTRA bytes, not cached
make_image() {
	head -c $(($2 * PG + ${3:-0})) /dev/urandom >"$1"
	drop_cache "$1"
}

# read_pages FILE FIRST COUNT [FIRST COUNT...]: read COUNT pages from page
# FIRST on, in the order given, with no readahead
read_pages() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
a = [int(x) for x in sys.argv[2:]]
for first, count in zip(a[0::2], a[1::2]):
    os.pread(fd, count * 4096, first * 4096)' "$@"
}

# The recorder sleeps between samples: a voluntary context switch each
# time. Three more than now: a whole sample ran after this moment.
ctxt() {
	sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$1/status"
}

wait_sample() {
	local c0 _
	c0=$(ctxt "$REC")
	for _ in $(seq 400); do
		[ "$(ctxt "$REC")" -ge $((c0 + 3)) ] && return 0
		kill -0 "$REC" 2>/dev/null || fail "the recorder ended"
		sleep 0.05
	done
	fail "the recorder took no sample in 20 s"
}

# start_recorder ARGS: a recorder in the background, once its pid file is out
start_recorder() {
	local _
	"$RAMBOOT_BIN" profile record --interval=0.05 "$@" 2>"$T/rec.err" &
	REC=$!
	for _ in $(seq 200); do
		[ -s "$RUN/profile.pid" ] && break
		kill -0 "$REC" 2>/dev/null || { cat "$T/rec.err"; fail "the recorder ended early"; }
		sleep 0.05
	done
	[ -s "$RUN/profile.pid" ] || fail "no pid file"
	wait_sample
}

# wait_recorder: its exit status in $status
wait_recorder() {
	status=0
	wait "$REC" || status=$?
	REC=
}

ranges() {
	grep '^range ' "$1"
}

# one_error: exactly one line on stderr, an error line of the profile command
one_error() {
	if [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ] ||
		! grep -qE '^ramboot: profile: error: .+' <<<"$stderr"; then
		show_run
		fail "expected one 'ramboot: profile: error:' line"
	fi
}

@test "profile record: the ranges read, in first-touch order, each page once" {
	need_page_cache
	make_image "$T/img" 256 100
	start_recorder --image="$T/img" --stop-file="$T/stop"
	read_pages "$T/img" 200 4
	wait_sample
	# pages read in one interval are in offset order: these are read in
	# that order too, so one interval or two give the same profile
	read_pages "$T/img" 10 2 100 1
	wait_sample
	# before the last range: first touched later, after it in the profile
	read_pages "$T/img" 99 1
	wait_sample
	# the last, partial page; a page read before is not again
	read_pages "$T/img" 201 1 256 1
	wait_sample
	: >"$T/stop"
	wait_recorder
	[ "$status" -eq 0 ] || { cat "$T/rec.err"; fail "recorder exit $status"; }
	run ranges "$RUN/profile"
	assert_output "range $((200 * PG)) $((4 * PG))
range $((10 * PG)) $((2 * PG))
range $((100 * PG)) $PG
range $((99 * PG)) $PG
range $((256 * PG)) 100"
	run grep -c . "$RUN/profile"
	assert_output 9
	assert_equal "$(sed -n 1p "$RUN/profile")" "ramboot-profile 1"
	grep -qx "image-size $((256 * PG + 100))" "$RUN/profile"
	grep -qx "page-size $PG" "$RUN/profile"
	# the recorder's pid file is gone, a summary on stderr
	[ ! -e "$RUN/profile.pid" ]
	grep -q "ranges: 5" "$T/rec.err"
}

@test "profile record: buffered reads with readahead (dd) are covered, from their first page on" {
	need_page_cache
	make_image "$T/img" 1024
	start_recorder --image="$T/img" --stop-file="$T/stop"
	dd if="$T/img" of=/dev/null bs=4k skip=300 count=10 status=none
	wait_sample
	: >"$T/stop"
	wait_recorder
	[ "$status" -eq 0 ]
	# the kernel read ahead of dd: at least the 10 pages, starting with
	# dd's first (readahead never reads behind)
	run ranges "$RUN/profile"
	[ "${#lines[@]}" -eq 1 ] || fail "ranges: $output"
	read -r _ off len <<<"${lines[0]}"
	assert_equal "$off" $((300 * PG))
	[ "$len" -ge $((10 * PG)) ]
}

@test "profile record: image-ends-sha256 is over the first and the last MiB" {
	need_page_cache
	make_image "$T/img" 768 10
	rb profile record --image="$T/img" --until=0 --out="$T/p"
	expect_status 0
	want=$({ head -c 1048576 "$T/img"; tail -c 1048576 "$T/img"; } | sha256sum | cut -d' ' -f1)
	grep -qx "image-ends-sha256 $want" "$T/p"
	run ! grep -q '^image-sha256 ' "$T/p"
	# small: the whole file, once
	head -c 5000 /dev/urandom >"$T/small"
	rb profile record --image="$T/small" --until=0 --out="$T/q"
	expect_status 0
	grep -qx "image-ends-sha256 $(sha256sum <"$T/small" | cut -d' ' -f1)" "$T/q"
}

@test "profile record --until=0: one sample, what is resident now; --manifest tags the image's SHA-256" {
	need_page_cache
	make_image "$T/img" 64
	# (the manifest reads the whole image)
	"$RAMBOOT_BIN" manifest -o "$T/img.manifest" "$T/img"
	drop_cache "$T/img"
	read_pages "$T/img" 3 2 60 1
	rb profile record --image="$T/img" --until=0 --out="$T/p" --manifest="$T/img.manifest"
	expect_status 0
	run ranges "$T/p"
	assert_output "range $((3 * PG)) $((2 * PG))
range $((60 * PG)) $PG"
	grep -qx "image-sha256 $(sha256sum <"$T/img" | cut -d' ' -f1)" "$T/p"
	grep -q '^image-ends-sha256 ' "$T/p"
	rb profile record --image="$T/img" --until=0 --out="$T/p2" --sha256="${HEX^^}"
	expect_status 0
	grep -qx "image-sha256 $HEX" "$T/p2"
	# --out replaces an old profile
	rb profile record --image="$T/img" --until=0 --out="$T/p2"
	expect_status 0
	run ! grep -q '^image-sha256 ' "$T/p2"
}

@test "profile --stop: the recorder writes the profile and --stop returns after it" {
	need_page_cache
	make_image "$T/img" 32
	start_recorder --image="$T/img"
	read_pages "$T/img" 7 1
	wait_sample
	rb profile --stop
	expect_status 0
	# written before --stop returned
	[ -f "$RUN/profile" ]
	[ ! -e "$RUN/profile.pid" ]
	run ranges "$RUN/profile"
	assert_output "range $((7 * PG)) $PG"
	wait_recorder
	[ "$status" -eq 0 ]
	# nothing to stop any more
	rb profile --stop
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: no recorder is running (no $RUN/profile.pid)"
}

@test "profile record: writes where /run went, after a switch of root" {
	need_page_cache
	make_image "$T/img" 16
	# started under one root; its /run then moves into another (as
	# /run moves into the real root at the end of the initramfs), and
	# the old path names nothing
	start_recorder --image="$T/img"
	read_pages "$T/img" 5 1
	wait_sample
	mkdir -p "$T/new"
	ln -s /proc "$T/new/proc"
	mv "$ROOT/run" "$T/new/run"
	RAMBOOT_ROOT=$T/new rb profile --stop
	expect_status 0
	wait_recorder
	[ "$status" -eq 0 ] || { cat "$T/rec.err"; fail "recorder exit $status"; }
	run ranges "$T/new/run/ramboot/profile"
	assert_output "range $((5 * PG)) $PG"
	[ ! -e "$T/new/run/ramboot/profile.pid" ]
	[ ! -e "$ROOT/run" ]
}

@test "profile record: SIGTERM and SIGINT are stop points too" {
	need_page_cache
	make_image "$T/img" 16
	for sig in TERM INT; do
		rm -f "$T/p"
		start_recorder --image="$T/img" --out="$T/p"
		kill -"$sig" "$REC"
		wait_recorder
		[ "$status" -eq 0 ] || fail "SIG$sig: exit $status"
		[ -f "$T/p" ]
		[ ! -e "$RUN/profile.pid" ]
	done
}

@test "profile record: --until stops it" {
	need_page_cache
	make_image "$T/img" 16
	rb profile record --image="$T/img" --interval=0.05 --until=0.3 --out="$T/p"
	expect_status 0
	[ -f "$T/p" ]
}

@test "profile: one recorder at a time; a stale pid file is no recorder" {
	need_page_cache
	make_image "$T/img" 16
	start_recorder --image="$T/img" --out="$T/p"
	rb profile record --image="$T/img" --until=0 --out="$T/q"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: a recorder is running already (pid $REC)"
	[ ! -e "$T/q" ]
	rb profile --stop
	expect_status 0
	wait_recorder
	# a pid file naming a process that is not the recorder (same pid,
	# another start time) or no process
	echo "$$ 1" >"$RUN/profile.pid"
	rb profile --stop
	expect_status 1
	one_error
	assert_output ""
	kill -0 $$
	echo "999999999 1" >"$RUN/profile.pid"
	rb profile --stop
	expect_status 1
	one_error
	echo "garbage" >"$RUN/profile.pid"
	rb profile --stop
	expect_status 1
	one_error
	# a new recorder replaces a stale pid file
	echo "$$ 1" >"$RUN/profile.pid"
	rb profile record --image="$T/img" --until=0 --out="$T/q"
	expect_status 0
	[ ! -e "$RUN/profile.pid" ]
}

@test "profile record: bad options exit 2, bad files exit 1, one error line each" {
	need_page_cache
	make_image "$T/img" 4
	rb profile record
	expect_status 2
	one_error
	rb profile record --image="$T/img" --interval=0
	expect_status 2
	one_error
	rb profile record --image="$T/img" --interval=x
	expect_status 2
	one_error
	rb profile record --image="$T/img" --until=-1
	expect_status 2
	one_error
	rb profile record --image="$T/img" --sha256=abc
	expect_status 2
	one_error
	rb profile record --image="$T/img" --sha256="$HEX" --manifest="$T/m"
	expect_status 2
	one_error
	rb profile record --image="$T/img" extra
	expect_status 2
	one_error
	rb profile record --image="$T/img" --bogus
	expect_status 2
	one_error

	rb profile record --image="$T/missing" --until=0
	expect_status 1
	one_error
	rb profile record --image="$T" --until=0
	expect_status 1
	one_error
	mkfifo "$T/fifo"
	rb profile record --image="$T/fifo" --until=0
	expect_status 1
	one_error
	printf 'ramboot-manifest 1\nsize 1\nsha256 %s\n' "$HEX" >"$T/m"
	rb profile record --image="$T/img" --until=0 --manifest="$T/m"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: $T/m: describes an image of 1 bytes, $T/img has $((4 * PG))"
	ln -s "$T/img" "$T/link"
	rb profile record --image="$T/img" --until=0 --out="$T/link"
	expect_status 1
	one_error
	[ ! -e "$RUN/profile.pid" ]
}

@test "profile merge: earliest normalised position first, union of the ranges" {
	hdr="ramboot-profile 1
image-size 4194304
image-ends-sha256 $HEX
page-size 4096"
	printf '%s\nrange 0 65536\nrange 1048576 65536\n' "$hdr" >"$T/a"
	printf '%s\nrange 2097152 65536\nrange 3145728 65536\nrange 1048576 65536\n' "$hdr" >"$T/b"
	rb profile merge -o "$T/m" "$T/a" "$T/b"
	expect_status 0
	assert_output ""
	run cat "$T/m"
	assert_output "$hdr
range 0 65536
range 2097152 65536
range 3145728 65536
range 1048576 65536"
	# merging in place, and with itself: the same
	cp "$T/m" "$T/m2"
	rb profile merge -o "$T/m2" "$T/m2" "$T/m"
	expect_status 0
	cmp "$T/m" "$T/m2"
}

@test "profile merge: other images, bad profiles and usage are refused" {
	printf 'ramboot-profile 1\nimage-size 8192\nimage-ends-sha256 %s\npage-size 4096\n' "$HEX" >"$T/a"
	printf 'ramboot-profile 1\nimage-size 8192\nimage-ends-sha256 %s\npage-size 4096\n' "$HEX2" >"$T/b"
	printf 'ramboot-profile 1\nimage-size 4096\nimage-ends-sha256 %s\npage-size 4096\n' "$HEX" >"$T/c"
	printf 'ramboot-profile 1\nimage-size 8192\nimage-ends-sha256 %s\npage-size 4096\nrange 0 4096\nrange 0 4096\n' "$HEX" >"$T/bad"
	rb profile merge -o "$T/m" "$T/a" "$T/b"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: profile 2 has another image-ends-sha256"
	rb profile merge -o "$T/m" "$T/a" "$T/c"
	expect_status 1
	one_error
	rb profile merge -o "$T/m" "$T/a" "$T/bad"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: $T/bad: line 6: range overlaps the range on line 5"
	rb profile merge -o "$T/m" "$T/a" "$T/missing"
	expect_status 1
	one_error
	[ ! -e "$T/m" ]
	rb profile merge "$T/a"
	expect_status 2
	one_error
	rb profile merge -o "$T/m"
	expect_status 2
	one_error
	rb profile merge -x -o "$T/m" "$T/a"
	expect_status 2
	one_error
}

@test "profile show: identity, ranges in order, bytes and coverage" {
	printf 'ramboot-profile 1\nimage-size 409700\nimage-sha256 %s\nimage-ends-sha256 %s\npage-size 4096\nrange 405504 4196\nrange 8192 4096\n' \
		"$HEX" "$HEX2" >"$T/p"
	rb profile show "$T/p"
	expect_status 0
	assert_output "image:             409700 bytes (400.1 KiB)
image-sha256:      $HEX
image-ends-sha256: $HEX2
page size:         4096
ranges:            2, 8292 bytes (8.1 KiB), 2.02 % of the image

   order               offset         length
       1               405504           4196
       2                 8192           4096"
	[ -z "$stderr" ]
	printf 'ramboot-profile 1\nimage-size 409700\nimage-ends-sha256 %s\npage-size 4096\nrange 100 4096\n' "$HEX" >"$T/bad"
	rb profile show "$T/bad"
	expect_status 1
	one_error
	assert_equal "$stderr" "ramboot: profile: error: $T/bad: line 5: range offset not a multiple of page-size"
	rb profile show "$T"
	expect_status 1
	one_error
	rb profile show
	expect_status 2
	one_error
	rb profile show "$T/p" "$T/p"
	expect_status 2
	one_error
}

@test "profile: help, unknown and missing commands" {
	rb profile --help
	expect_status 0
	assert_line --partial "ramboot profile record --image=FILE"
	rb profile
	expect_status 2
	one_error
	rb profile bogus
	expect_status 2
	one_error
	rb profile --stop now
	expect_status 2
	one_error
	rb help
	assert_line --regexp '^  profile +record, merge or show a boot profile'
}
