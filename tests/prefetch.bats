#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot load --prefetch: the file ends up in the page cache; a matching
# boot profile's ranges are read first and in its order, another image's
# profile is only a warning; the options; and the back-off while the loop
# device over the image has reads in flight (a fixture /sys/block/loopN
# under RAMBOOT_ROOT whose inflight and stat counters the test sets).
#
# The image is dropped from the page cache before each run that looks at
# what was read, so every range is really read from the file; the order is
# the one the prefetch logs with -v ("read OFF LEN (profile|sequential)"),
# and the fault shim's log shows that the image was read with pread.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/fault
load helpers/profile

setup_file() {
	faultinj_build
}

setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	IMG=$T/image.img
	# 6 MiB and a partial page: six 1 MiB reads and a short last one.
	head -c $((6 * 1048576 + 1000)) /dev/urandom >"$IMG"
	SIZE=$(stat -c %s "$IMG")
	PAGE=$(getconf PAGESIZE)
	NPAGES=$(((SIZE + PAGE - 1) / PAGE))
}

teardown() {
	touch "$BATS_TEST_TMPDIR/stop"
	if [ -n "${PID:-}" ] && kill -0 "$PID" 2>/dev/null; then
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
}

# resident_pages FILE: how many pages of FILE the page cache holds
# (fincore of util-linux; else mincore through python3).
resident_pages() {
	if command -v fincore >/dev/null; then
		fincore --noheadings --raw --output PAGES "$1"
		return
	fi
	python3 - "$1" <<'EOF'
import ctypes, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
n = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
vec = (ctypes.c_ubyte * n)()
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
    sys.exit("mincore: " + os.strerror(ctypes.get_errno()))
print(sum(v & 1 for v in vec))
EOF
}

# evict FILE: drop FILE from the page cache (its pages are clean once
# synced); skip the test when the kernel keeps them.
evict() {
	sync "$1"
	dd if="$1" iflag=nocache count=0 status=none
	[ "$(resident_pages "$1")" -eq 0 ] || skip "cannot drop $1 from the page cache"
}

# reads: the "read OFF LEN (KIND)" lines of the last run's stderr, as
# "OFF LEN KIND".
reads() {
	sed -n 's/^ramboot: load: debug: read \([0-9]*\) \([0-9]*\) (\([a-z]*\))$/\1 \2 \3/p' \
		<<<"$stderr"
}

# assert_reads_cover: the reads of the last run cover the image exactly
# once, as a set of pages.
assert_reads_cover() {
	local total
	total=$(reads | awk '{ s += $2 } END { print s + 0 }')
	[ "$total" -eq "$SIZE" ] || fail "reads cover $total bytes of $SIZE: $(reads)"
	[ "$(reads | sort -n | awk -v p=0 '$1 != p { bad = 1 } { p = $1 + $2 } END { print bad + 0 }')" \
		-eq 0 ] || fail "reads overlap or leave gaps: $(reads | sort -n)"
}

# The page cache holds the image: every page was read (the read log says
# so), but memory reclaim elsewhere on the machine may evict a few of them
# again before we look, so a few per cent may be missing.
assert_all_resident() {
	local n
	n=$(resident_pages "$IMG")
	[ "$n" -ge $((NPAGES * 9 / 10)) ] ||
		fail "$n of $NPAGES pages resident: $(tail -n 30 "$T/err" 2>/dev/null)"
}

@test "prefetch: the whole file ends up in the page cache, read in offset order" {
	evict "$IMG"
	rb load -v --progress=none --prefetch "$IMG"
	expect_status 0
	assert_all_resident
	assert_reads_cover
	# No profile: one pass from the start, 1 MiB at a time.
	[ "$(reads | head -n 1)" = "0 1048576 sequential" ]
	[ "$(reads | grep -vc ' sequential$')" -eq 0 ]
	[ "$(reads | awk '$2 > 1048576' | wc -l)" -eq 0 ]
	[ "$(reads | cut -d' ' -f1)" = "$(reads | cut -d' ' -f1 | sort -n)" ]
	[[ $stderr == *"prefetched 6.0 MiB"* ]]
}

@test "prefetch: what the page cache holds is read without waiting for the boot" {
	local R
	# Resident already, and a loop device over it that is always busy: the
	# reads take the page cache and never wait.
	cat "$IMG" >/dev/null
	R=$(fake_root 4000000)
	fake_loop "$R" 9 "$IMG" 1
	RAMBOOT_ROOT=$R rb load -v --progress=none --prefetch "$IMG"
	expect_status 0
	assert_reads_cover
	[[ $stderr == *"of it from the page cache, 0 yields"* ]]
	[[ $stderr != *"yield: "* ]]
}

@test "prefetch: a matching profile's ranges come first, in its order, then the rest" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	write_profile "$T/p" "$IMG" 4194304 65536 1048576 8192 0 4096 5242880 $((SIZE - 5242880))
	evict "$IMG"
	run --separate-stderr faultinj_run "pread:path=$IMG" \
		"$RAMBOOT_BIN" load -v --progress=none --prefetch --profile="$T/p" "$IMG"
	expect_status 0
	# The last profile range (5 MiB to the end) is cut into reads of at
	# most 1 MiB.
	[ "$(reads | head -n 6)" = "4194304 65536 profile
1048576 8192 profile
0 4096 profile
5242880 1048576 profile
6291456 1000 profile
4096 1044480 sequential" ] || fail "order: $(reads)"
	[ "$(reads | sed -n '7,$p' | grep -vc ' sequential$')" -eq 0 ]
	assert_reads_cover
	assert_all_resident
	# They were reads of the image: at least one pread each.
	[ "$(faultinj_count 'call=pread')" -ge "$(reads | wc -l)" ]
}

@test "prefetch: IMAGE.profile beside the image is taken by default, 'none' turns it off" {
	write_profile "$IMG.profile" "$IMG" 2097152 4096
	evict "$IMG"
	rb load -v --progress=none --prefetch "$IMG"
	expect_status 0
	[ "$(reads | head -n 1)" = "2097152 4096 profile" ]
	assert_reads_cover
	evict "$IMG"
	rb load -v --progress=none --prefetch --profile=none "$IMG"
	expect_status 0
	[ "$(reads | head -n 1)" = "0 1048576 sequential" ]
	[ "$(reads | grep -c ' profile$')" -eq 0 ]
	assert_reads_cover
}

@test "prefetch: another image's profile is a warning, and all is prefetched in offset order" {
	cp "$IMG" "$T/other"
	printf 'X' | dd of="$T/other" bs=1 seek=100 conv=notrunc status=none
	write_profile "$T/other.profile" "$T/other" 2097152 4096
	evict "$IMG"
	rb load -v --progress=none --prefetch --profile="$T/other.profile" "$IMG"
	expect_status 0
	[[ $stderr == *"ramboot: load: warning: profile $T/other.profile was not recorded on $IMG; prefetching in offset order"* ]]
	[ "$(reads | grep -c ' profile$')" -eq 0 ]
	assert_reads_cover
	assert_all_resident
	# A profile that does not parse, or none at the path: the same.
	printf 'ramboot-profile 2\n' >"$T/bad.profile"
	rb load --progress=none --prefetch --profile="$T/bad.profile" "$IMG"
	expect_status 0
	[[ $stderr == *"ramboot: load: warning: profile $T/bad.profile: line 1"*"prefetching in offset order"* ]]
	rb load --progress=none --prefetch --profile="$T/missing" "$IMG"
	expect_status 0
	[[ $stderr == *"ramboot: load: warning: profile $T/missing: "*"prefetching in offset order"* ]]
}

@test "prefetch: --profile-only reads the profile's ranges and no more" {
	write_profile "$T/p" "$IMG" 3145728 8192 0 4096
	evict "$IMG"
	rb load -v --progress=none --prefetch --profile-only --profile="$T/p" "$IMG"
	expect_status 0
	[ "$(reads)" = "3145728 8192 profile
0 4096 profile" ] || fail "reads: $(reads)"
	# Without a profile that fits: nothing to read, no failure.
	rb load -v --progress=none --prefetch --profile-only --profile="$T/missing" "$IMG"
	expect_status 0
	[ -z "$(reads)" ]
}

@test "prefetch: --rate caps the reads and the result is complete" {
	evict "$IMG"
	rb load -v --progress=none --prefetch --rate=256MiB/s "$IMG"
	expect_status 0
	[[ $stderr != *warning* ]]
	[[ $stderr =~ prefetched\ .*\ \([0-9.]+\ (B|KiB|MiB|GiB)/s\ =\ [0-9.]+\ Mbit/s\) ]]
	assert_reads_cover
	assert_all_resident
}

@test "prefetch --rate: bit rates too; the old spelling is bytes per second, with a warning" {
	local a
	evict "$IMG"
	rb load --progress=none --prefetch --rate=2Gbit "$IMG"
	expect_status 0
	[[ $stderr != *warning* ]]
	rb load --progress=none --prefetch --rate=256M "$IMG"
	expect_status 0
	[ "${stderr%%$'\n'*}" = 'ramboot: load: warning: --rate=256M: deprecated spelling, write --rate=256MiB/s' ]
	rb load --progress=none --prefetch --rate=268435456 "$IMG"
	expect_status 0
	[[ $stderr == *"write --rate=268435456B/s"* ]]
	for a in 12MB/s 100Mbps 12/s; do
		rb load --prefetch --rate="$a" "$IMG"
		expect_status 2
		[[ $stderr == *"--rate: '$a' is "* ]] || fail "$a: $stderr"
	done
}

@test "prefetch: bad --rate, --loop, --profile, and the options without --prefetch: exit 2" {
	local a
	for a in --rate=0 --rate=fast --loop=sda --loop=/dev/loop --loop=loop1x --profile= \
		"--profile-only --profile=none"; do
		# shellcheck disable=SC2086
		rb load --prefetch $a "$IMG"
		expect_status 2
		[[ $stderr == "ramboot: load: error: "* ]] || fail "$a: $stderr"
	done
	for a in --rate=1MiB/s --loop=loop0 --profile=x --profile-only; do
		rb load "$a" "$IMG" "$T/out"
		expect_status 2
		[[ $stderr == *"go with --prefetch"* ]] || fail "$a: $stderr"
	done
	rb load --help
	expect_status 0
	for a in --rate=RATE --loop=DEV --profile=FILE --profile-only; do
		assert_output --partial "$a"
	done
}

# fake_loop ROOT N BACKING INFLIGHT_READS: /sys/block/loopN under ROOT, bound
# to BACKING, with that many reads in flight.
fake_loop() {
	local d=$1/sys/block/loop$2
	mkdir -p "$d/loop"
	echo "$3" >"$d/loop/backing_file"
	echo 1 >"$d/ro"
	echo $((SIZE / 512)) >"$d/size"
	echo 0 >"$d/loop/offset"
	echo 0 >"$d/loop/sizelimit"
	printf '%8s %8s\n' "$4" 0 >"$d/inflight"
}

# wait_for ERE FILE: until a line of FILE matches (bounds a broken test only).
wait_for() {
	local _
	for _ in $(seq 1 200); do
		grep -qE -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

@test "prefetch: reads wait while the image's loop device has reads in flight" {
	local R
	R=$(fake_root 4000000)
	fake_loop "$R" 9 "$IMG" 1
	evict "$IMG"
	RAMBOOT_ROOT=$R "$RAMBOOT_BIN" load -v --progress=none --prefetch "$IMG" 2>"$T/err" &
	PID=$!
	wait_for 'yield: loop9 has reads in flight, waiting 200 ms' "$T/err" ||
		fail "no back-off: $(cat "$T/err")"
	grep -q 'yielding to the reads of loop9' "$T/err"
	# Each reader backs off from 5 ms, doubling up to 200 ms; nothing is
	# read meanwhile.
	[ "$(grep -o 'waiting [0-9]* ms' "$T/err" | tr -d -c '0-9\n' | sort -un | tr '\n' ' ')" = \
		"5 10 20 40 80 160 200 " ]
	kill -0 "$PID"
	[ "$(resident_pages "$IMG")" -eq 0 ]
	# The boot's reads are done: the prefetch goes on and completes.
	printf '%8s %8s\n' 0 0 >"$R/sys/block/loop9/inflight"
	wait "$PID" || fail "exit $?: $(cat "$T/err")"
	PID=
	assert_all_resident
	grep -qE 'prefetch: 6.0 MiB read, .* [1-9][0-9]* yields' "$T/err"
}

@test "prefetch: guesses wait for the boot's idle time, profile ranges do not" {
	local R stat
	R=$(fake_root 4000000)
	fake_loop "$R" 9 "$IMG" 0
	stat=$R/sys/block/loop9/stat
	echo "1 0 8 0 0 0 0 0 0 0 0" >"$stat"
	# The boot reads on and on (its completed reads count up), never with
	# a read in flight when we look.
	(
		i=1
		while [ ! -e "$T/stop" ]; do
			i=$((i + 1))
			echo "$i 0 8 0 0 0 0 0 0 0 0" >"$stat"
			sleep 0.01
		done
	) &
	BUMP=$!
	write_profile "$T/p" "$IMG" 0 1048576
	evict "$IMG"
	RAMBOOT_ROOT=$R "$RAMBOOT_BIN" load -v --progress=none --prefetch --profile="$T/p" \
		"$IMG" 2>"$T/err" &
	PID=$!
	wait_for 'yield: loop9 read just now, waiting [0-9]+ ms' "$T/err" ||
		fail "no wait for the idle time: $(cat "$T/err")"
	sleep 0.5
	# The predicted megabyte went at once; the guesses (the other 5 MiB)
	# are still waiting for the boot to pause.
	grep -q "read 983040 65536 (profile)\|read 917504 131072 (profile)" "$T/err" ||
		fail "profile ranges waited: $(cat "$T/err")"
	kill -0 "$PID"
	# Readers that have read run at nice 19: the boot gets the CPU first.
	[ "$(ps -L -o ni= -p "$PID" | grep -c '^ *19$')" -ge 1 ] ||
		fail "no reader thread at nice 19: $(ps -L -o tid=,ni= -p "$PID")"
	[ "$(resident_pages "$IMG")" -lt $((NPAGES * 3 / 4)) ] ||
		fail "guesses read while the boot was reading: $(grep -c sequential "$T/err")"
	# The boot pauses: the prefetch completes.
	touch "$T/stop"
	wait "$BUMP"
	wait "$PID" || fail "exit $?: $(cat "$T/err")"
	PID=
	assert_all_resident
}

@test "prefetch: an idle loop device is no reason to wait; --loop names it" {
	local R
	R=$(fake_root 4000000)
	fake_loop "$R" 9 "$IMG" 0
	# Another loop device over another file is busy: not ours to wait for.
	fake_loop "$R" 3 /srv/other.img 5
	evict "$IMG"
	RAMBOOT_ROOT=$R rb load -v --progress=none --prefetch "$IMG"
	expect_status 0
	[[ $stderr == *"yielding to the reads of loop9"* ]]
	[[ $stderr == *", 0 yields"* ]]
	assert_all_resident
	# --loop: that device's counters, whatever backs it.
	evict "$IMG"
	RAMBOOT_ROOT=$R "$RAMBOOT_BIN" load -v --progress=none --prefetch --loop=/dev/loop3 \
		"$IMG" 2>"$T/err" &
	PID=$!
	wait_for 'yield: loop3 has reads in flight' "$T/err" || fail "no back-off: $(cat "$T/err")"
	printf '%8s %8s\n' 0 0 >"$R/sys/block/loop3/inflight"
	wait "$PID" || fail "exit $?: $(cat "$T/err")"
	PID=
	assert_all_resident
	# --loop of a device without counters: said so, and no waiting.
	RAMBOOT_ROOT=$R rb load --progress=none --prefetch --loop=loop7 "$IMG"
	expect_status 0
	[[ $stderr == *"ramboot: load: warning: /sys/block/loop7/inflight: "* ]]
}

@test "prefetch: a loop device over the image set up after the start is found and yielded to" {
	local R
	R=$(fake_root 4000000)
	mkdir -p "$R/sys/block"
	evict "$IMG"
	# Slow enough (1 MiB/s) that the loop device comes while reads remain.
	RAMBOOT_ROOT=$R "$RAMBOOT_BIN" load -v --progress=none --prefetch --rate=1MiB/s "$IMG" \
		2>"$T/err" &
	PID=$!
	wait_for "no loop device is backed by $IMG; looking again" "$T/err" ||
		fail "no look: $(cat "$T/err")"
	wait_for '^ramboot: load: debug: read ' "$T/err" || fail "no read: $(cat "$T/err")"
	fake_loop "$R" 4 "$IMG" 1
	wait_for 'yield: loop4 has reads in flight' "$T/err" || fail "no back-off: $(cat "$T/err")"
	grep -q 'yielding to the reads of loop4' "$T/err"
	printf '%8s %8s\n' 0 0 >"$R/sys/block/loop4/inflight"
	wait "$PID" || fail "exit $?: $(cat "$T/err")"
	PID=
	assert_all_resident
}

@test "prefetch: --wait-loop reads nothing until the image's loop device appears (as in a boot)" {
	local R
	R=$(fake_root 4000000)
	mkdir -p "$R/sys/block"
	evict "$IMG"
	RAMBOOT_ROOT=$R "$RAMBOOT_BIN" load -v --progress=none --prefetch --wait-loop=60 "$IMG" \
		2>"$T/err" &
	PID=$!
	wait_for "no loop device is backed by $IMG; looking again" "$T/err" ||
		fail "no look: $(cat "$T/err")"
	sleep 1
	# the boot has not mounted the image yet: only what the page cache
	# holds already (the ends, read to tell the image's identity, and
	# their read-ahead) is read; the rest waits
	kill -0 "$PID" || fail "the prefetch ended before the loop device: $(cat "$T/err")"
	[ "$(grep -c '^ramboot: load: debug: read ' "$T/err")" -le 3 ] ||
		fail "read before the loop device: $(cat "$T/err")"
	# LTSP mounts it, idle: the prefetch goes on and completes
	fake_loop "$R" 5 "$IMG" 0
	wait "$PID" || fail "exit $?: $(cat "$T/err")"
	PID=
	grep -q 'yielding to the reads of loop5' "$T/err"
	assert_all_resident
}

@test "prefetch: --wait-loop gives up waiting after its time and prefetches all the same" {
	local R
	R=$(fake_root 4000000)
	mkdir -p "$R/sys/block"
	evict "$IMG"
	RAMBOOT_ROOT=$R rb load --progress=none --prefetch --wait-loop=1 "$IMG"
	expect_status 0
	assert_all_resident
	rb load --wait-loop=1 "$IMG" "$T/x"
	expect_status 2
}
