#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot load --udpcast and ramboot serve: one multicast stream for a
# whole lab, on udpcast's udp-sender and udp-receiver.
#
# Without root: the option checks, and a stand-in udp-receiver in $PATH
# (its arguments, its exit status deciding over a complete-looking
# stream). As root, with udpcast installed: network namespaces on one
# host, a sender and four receivers on a bridge (in a namespace of its
# own), the image sent at a capped rate. Every namespace and the
# processes in them go in teardown, also after a failure.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/udpcast-lab

setup_file() {
	local d=$BATS_FILE_TMPDIR
	head -c 4M /dev/urandom >"$d/img"
	"${RAMBOOT_BIN:-$BATS_TEST_DIRNAME/../ramboot}" manifest -o "$d/img.man" "$d/img"
}

setup() {
	require_loader
	setup_out
	IMG=$BATS_FILE_TMPDIR/img
	MAN=$BATS_FILE_TMPDIR/img.man
	NS=rbmc$$
}

teardown() {
	lab_teardown
}

rb_fake() {
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$RAMBOOT_BIN" "$@"
}

tx_bytes() {
	ip netns exec "$NS-$1" cat /sys/class/net/eth0/statistics/tx_bytes
}

rx_bytes() {
	ip netns exec "$NS-$1" cat /sys/class/net/eth0/statistics/rx_bytes
}

# serve ARGS: ramboot serve --once in the sender's namespace, in the
# background; its pid in SERVE, its messages in $OUT/../serve.log.
serve() {
	ip netns exec "$NS-s" timeout 60 "$RAMBOOT_BIN" serve --once --interface=eth0 "$@" "$IMG" \
		>"$BATS_TEST_TMPDIR/serve.log" 2>&1 &
	SERVE=$!
}

# receive I DEST ARGS: ramboot load --udpcast in receiver I's namespace,
# in the background, bounded; rc_of I waits for it, its exit status in RC.
receive() {
	local i=$1 dest=$2
	shift 2
	ip netns exec "$NS-$i" timeout 40 "$RAMBOOT_BIN" load --progress=none \
		--manifest="$MAN" "$@" "$dest" >"$BATS_TEST_TMPDIR/rx.$i.log" 2>&1 &
	RX[i]=$!
}

rc_of() {
	RC=0
	wait "${RX[$1]}" || RC=$?
}

# ---- without a network ----

@test "udpcast: bad --udpcast values are usage errors, nothing run" {
	fake_receiver "exit 0"
	for o in portbase=9001 portbase=80 portbase=x interface=-x "interface=a b" \
		interface=abcdefghijklmnop interface=.. start-timeout=0 start-timeout=1.5 \
		receive-timeout=99999 foo=1 portbase portbase=9000,portbase=9002 "=" ","; do
		rb_fake load --udpcast="$o" "$OUT/img"
		expect_status 2
		assert_equal "$(echo "$stderr" | wc -l)" 1
	done
	rb_fake load --udpcast "$IMG" "$OUT/img"
	expect_status 2
	rb_fake load --udpcast=start-timeout=40 --stall-timeout=10 "$OUT/img"
	expect_status 2
	rb_fake load --udpcast --prefetch "$OUT/img"
	expect_status 2
	[ ! -e "$BATS_TEST_TMPDIR/args" ]
	[ -z "$(ls -A "$OUT")" ]
}

@test "udpcast: udp-receiver gets the options; its stdout is the image" {
	fake_receiver "exec cat '$IMG'"
	rb_fake load --progress=none --manifest="$MAN" \
		--udpcast=portbase=9010,interface=lab0,start-timeout=7,receive-timeout=3 "$OUT/img"
	expect_status 0
	cmp "$IMG" "$OUT/img"
	run cat "$BATS_TEST_TMPDIR/args"
	assert_output "--nokbd --stat-period 5000 --start-timeout 7 --receive-timeout 3 --portbase 9010 --interface lab0"
	[[ $stderr == *"udpcast -> $OUT/img"* ]]
}

@test "udpcast: a failed udp-receiver fails the load, even after the whole image" {
	# The whole image, then a failure (a lost final ack): not trusted.
	fake_receiver "cat '$IMG'; exit 3"
	rb_fake load --progress=none --udpcast "$OUT/img"
	expect_status 1
	assert_equal "$(echo "$stderr" | grep -c error)" 1
	[[ $stderr == *"udp-receiver failed (exit 3)"* ]]
	[ -z "$(ls -A "$OUT")" ]
	# Nothing at all: no sender.
	fake_receiver "exit 255"
	rb_fake load --progress=none --udpcast "$OUT/img"
	expect_status 1
	[ -z "$(ls -A "$OUT")" ]
}

@test "udpcast: a receiver that stalls is killed by the stall timeout" {
	fake_receiver "echo \$\$ >'$BATS_TEST_TMPDIR/pid'; exec sleep 60"
	rb_fake load --progress=none --udpcast=start-timeout=1 --stall-timeout=2 "$OUT/img"
	expect_status 1
	[[ $stderr == *"stalled"* ]]
	[ -z "$(ls -A "$OUT")" ]
	run ! kill -0 "$(cat "$BATS_TEST_TMPDIR/pid")"
}

@test "udpcast: no udp-receiver is a one-line error" {
	run --separate-stderr env PATH=/nonexistent "$RAMBOOT_BIN" load --progress=none --udpcast "$OUT/img"
	expect_status 1
	[[ $stderr == *"cannot run udp-receiver"* ]]
	[ -z "$(ls -A "$OUT")" ]
}

@test "serve: the options are checked" {
	for o in --rate=0 --rate=5x --rate=-1 --min-receivers=0 --max-wait=-1 --portbase=9001 \
		--interface=-i --interface=nosuch0 --fec=8x --fec=8x8/ --fec=0x8 --bogus \
		--retries-until-drop=0 --retries-until-drop=x; do
		rb serve "$o" "$IMG"
		expect_status 2
	done
	rb serve
	expect_status 2
	rb serve --once "$OUT/missing"
	expect_status 1
	rb serve --help
	expect_status 0
	[[ $output == *"--min-receivers"* ]]
}

# serve_rate RATE: ramboot serve --once --rate=RATE with a udp-sender
# that records its arguments; RATE as udp-sender got it in BITRATE.
serve_rate() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "$@" >"%s"\n' "$BATS_TEST_TMPDIR/args" >"$BATS_TEST_TMPDIR/bin/udp-sender"
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	rm -f "$BATS_TEST_TMPDIR/args"
	rb_fake serve --once --rate="$1" "$IMG"
	BITRATE=
	if [ -e "$BATS_TEST_TMPDIR/args" ]; then
		BITRATE=$(sed 's/.*--max-bitrate \([0-9]*\).*/\1/' "$BATS_TEST_TMPDIR/args")
	fi
}

@test "serve --rate: bit rates and byte rates, udp-sender gets bits per second" {
	serve_rate 100Mbit
	assert_success
	assert_equal "$BITRATE" 100000000
	[[ $stderr != *warning* ]]
	serve_rate 1Gbit/s
	assert_success
	assert_equal "$BITRATE" 1000000000
	serve_rate 500kbit
	assert_success
	assert_equal "$BITRATE" 500000
	serve_rate 12MiB/s
	assert_success
	assert_equal "$BITRATE" 100663296
	[[ $stderr != *warning* ]]
}

@test "serve --rate: the old spellings are bits per second still, with a warning" {
	serve_rate 500m
	assert_success
	assert_equal "$BITRATE" 500000000
	[[ $stderr == *"warning: --rate=500m: deprecated spelling, write --rate=500Mbit"* ]]
	serve_rate 64k
	assert_success
	assert_equal "$BITRATE" 64000
	[[ $stderr == *"write --rate=64kbit"* ]]
	serve_rate 1000000
	assert_success
	assert_equal "$BITRATE" 1000000
	[[ $stderr == *"write --rate=1000000bit"* ]]
}

@test "serve --rate: ambiguous or unknown units are usage errors; udp-sender never runs" {
	local r
	for r in 12MB/s 100Mbps 100mbps 12m/s 12/s 5T 0 0Mbit 1.5; do
		serve_rate "$r"
		expect_status 2
		[ -z "$BITRATE" ]
	done
	serve_rate 12MB/s
	[[ $stderr == *"'12MB/s' is ambiguous"* ]]
	serve_rate 100Mbps
	[[ $stderr == *"write bits per second as 100Mbit, bytes as 12MiB/s"* ]]
}

# ---- a lab in network namespaces ----

@test "udpcast lab: four receivers get byte-identical, verified copies" {
	need_lab
	lab 77 1 2 3 4
	local i
	for i in 1 2 3 4; do
		receive "$i" "$OUT/r$i" --udpcast=start-timeout=20
	done
	serve --min-receivers=4 --max-wait=10 --rate=20Mbit
	for i in 1 2 3 4; do
		rc_of "$i"
		assert_equal "$RC" 0
	done
	wait "$SERVE"
	cat "$BATS_TEST_TMPDIR"/serve.log
	for i in 1 2 3 4; do
		cat "$BATS_TEST_TMPDIR/rx.$i.log"
		grep -q "chunks ok" "$BATS_TEST_TMPDIR/rx.$i.log"
		cmp "$IMG" "$OUT/r$i"
	done
}

@test "udpcast lab: the sender sends about one image for four receivers" {
	need_lab
	lab 77 1 2 3 4
	local i before after size
	size=$(stat -c %s "$IMG")
	for i in 1 2 3 4; do
		receive "$i" "$OUT/r$i" --udpcast=start-timeout=20
	done
	before=$(tx_bytes s)
	serve --min-receivers=4 --max-wait=10 --rate=20Mbit
	for i in 1 2 3 4; do
		rc_of "$i"
		assert_equal "$RC" 0
	done
	wait "$SERVE"
	after=$(tx_bytes s)
	echo "# sent $((after - before)) bytes for an image of $size"
	[ $((after - before)) -lt $((size * 3 / 2 + 262144)) ]
}

@test "udpcast lab: a receiver after the session fails within its timeout" {
	need_lab
	lab 77 1
	receive 1 "$OUT/first" --udpcast=start-timeout=20
	serve --rate=20Mbit
	rc_of "1"
	assert_equal "$RC" 0
	wait "$SERVE"
	# The session is over and no other comes: udp-receiver's start
	# timeout ends it.
	receive 1 "$OUT/late" --udpcast=start-timeout=2
	cat "$BATS_TEST_TMPDIR/rx.1.log"
	rc_of "1"
	assert_equal "$RC" 1
	grep -q "udp-receiver failed" "$BATS_TEST_TMPDIR/rx.1.log"
	[ ! -e "$OUT/late" ]
}

@test "udpcast lab: a receiver whose link is cut mid-stream fails, nothing at DEST" {
	need_lab
	lab 77 1
	local n=0
	receive 1 "$OUT/cut" --udpcast=start-timeout=20,receive-timeout=3
	# 4 MiB at 4 Mbit/s: about 8 s on the wire.
	serve --rate=4Mbit
	while [ "$(rx_bytes 1)" -lt 1048576 ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "the stream never started"
		sleep 0.1
	done
	ip -n "$NS-1" link set eth0 down
	cat "$BATS_TEST_TMPDIR/rx.1.log"
	rc_of "1"
	assert_equal "$RC" 1
	[ ! -e "$OUT/cut" ]
	[ -z "$(ls -A "$OUT")" ]
}

@test "serve: udp-sender gets the options; sessions repeat; SIGTERM stops both" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	# Each session: its arguments and pid recorded; the first two end
	# at once, the third runs until stopped.
	cat >"$BATS_TEST_TMPDIR/bin/udp-sender" <<EOF
#!/bin/sh
echo "\$@" >>"$BATS_TEST_TMPDIR/args"
echo \$\$ >"$BATS_TEST_TMPDIR/pid"
[ "\$(wc -l <"$BATS_TEST_TMPDIR/args")" -ge 3 ] || exit 0
exec sleep 60
EOF
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$RAMBOOT_BIN" serve --rate=5Mbit --min-receivers=4 \
		--max-wait=15 --portbase=9010 --interface=lo --fec=8x8/128 "$IMG" \
		2>"$BATS_TEST_TMPDIR/serve.log" &
	local pid=$! n=0 rc=0
	until [ -s "$BATS_TEST_TMPDIR/args" ] && [ "$(wc -l <"$BATS_TEST_TMPDIR/args")" -ge 3 ]; do
		n=$((n + 1))
		[ "$n" -lt 200 ] || fail "no third session"
		sleep 0.1
	done
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/serve.log"
	assert_equal "$rc" 0
	run head -n 1 "$BATS_TEST_TMPDIR/args"
	assert_output "--file $IMG --nokbd --min-receivers 4 --max-wait 15 --portbase 9010 --interface lo --max-bitrate 5000000 --fec 8x8/128 --retries-until-drop 30"
	grep -q "session 3" "$BATS_TEST_TMPDIR/serve.log"
	grep -q "stopped by signal 15" "$BATS_TEST_TMPDIR/serve.log"
	run ! kill -0 "$(cat "$BATS_TEST_TMPDIR/pid")"
}

@test "udpcast lab: a receiver that dies mid-stream is dropped; the other finishes by multicast" {
	need_lab
	lab 77 1 2
	local n=0 p
	receive 1 "$OUT/r1" --udpcast=start-timeout=20
	receive 2 "$OUT/r2" --udpcast=start-timeout=20
	# 4 MiB at 4 Mbit/s: about 8 s on the wire, the default
	# receive-timeout (10 s) for the one left
	serve --min-receivers=2 --rate=4Mbit
	while [ "$(rx_bytes 2)" -lt 1048576 ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || fail "the stream never started"
		sleep 0.1
	done
	for p in $(ip netns pids "$NS-2"); do
		kill -KILL "$p" 2>/dev/null || true
	done
	rc_of 1
	wait "$SERVE" || true
	cat "$BATS_TEST_TMPDIR/serve.log" "$BATS_TEST_TMPDIR/rx.1.log"
	assert_equal "$RC" 0
	cmp "$IMG" "$OUT/r1"
	grep -q "chunks ok" "$BATS_TEST_TMPDIR/rx.1.log"
}

@test "serve: a missing interface is a usage error (exit 2), udp-sender never runs" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho ran >"%s"\n' "$BATS_TEST_TMPDIR/ran" >"$BATS_TEST_TMPDIR/bin/udp-sender"
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	# Debian 12 names its interfaces enp*/eno*: eth0 may well be missing
	rb_fake serve --once --interface=rbnone0 "$IMG"
	expect_status 2
	[[ $stderr == *"--interface: no network interface 'rbnone0' here"* ]] || fail "stderr: $stderr"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "serve: sessions that fail at once end serve (exit 1) after a few, not every 2 s for ever" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho x >>"%s"\nexit 1\n' "$BATS_TEST_TMPDIR/runs" >"$BATS_TEST_TMPDIR/bin/udp-sender"
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	run --separate-stderr timeout 60 env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$RAMBOOT_BIN" serve "$IMG"
	expect_status 1
	[[ $stderr == *"udp-sender failed 5 times at once: giving up"* ]] || fail "stderr: $stderr"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/runs")" -eq 5 ]
}

@test "serve: --min-receivers without --max-wait waits 10 s; a --max-wait at the clients' start-timeout is warned about" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "$@" >"%s"\n' "$BATS_TEST_TMPDIR/args" >"$BATS_TEST_TMPDIR/bin/udp-sender"
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	rb_fake serve --once --min-receivers=30 "$IMG"
	expect_status 0
	grep -q -- '--min-receivers 30 --max-wait 10 ' "$BATS_TEST_TMPDIR/args"
	[[ $stderr != *warning* ]] || fail "stderr: $stderr"
	rb_fake serve --once --min-receivers=30 --max-wait=60 "$IMG"
	expect_status 0
	[[ $stderr == *"--max-wait=60: clients give up after their start-timeout, 20 s by default"* ]] ||
		fail "stderr: $stderr"
	grep -q -- '--max-wait 60 ' "$BATS_TEST_TMPDIR/args"
}

@test "serve: the shipped /etc/default/ramboot-serve is usable as it is (no interface named, max-wait below start-timeout)" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "$@" >"%s"\n' "$BATS_TEST_TMPDIR/args" >"$BATS_TEST_TMPDIR/bin/udp-sender"
	chmod +x "$BATS_TEST_TMPDIR/bin/udp-sender"
	# shellcheck disable=SC1091
	. "$BATS_TEST_DIRNAME/../conf/ramboot-serve.default"
	# shellcheck disable=SC2086 # the unit splits $OPTIONS into words
	rb_fake serve --once $OPTIONS "$IMG"
	expect_status 0
	[[ $stderr != *warning* ]] || fail "stderr: $stderr"
	[ -s "$BATS_TEST_TMPDIR/args" ]
}
