#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load http://...`: against a real nginx (Debian's nginx-light,
# started here on 127.0.0.1 with a configuration of the test's own),
# Python's http.server for whole files, and a one-shot server of
# tests/helpers/http-bad.py for what no real server does (a body cut
# short, a stall after the head, endless headers, a redirect loop). An
# uncompressed image is fetched by ranges, chunk by chunk, from the URL and
# its --mirror URLs (second nginx servers here); a compressed one is read
# as a stream.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common
load helpers/http

# image NAME MIB: random bytes, and NAME.manifest beside them (chunks of 1 MiB)
image() {
	head -c "$(($2 * 1048576 + 12345))" /dev/urandom >"$W/$1"
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/$1.manifest" "$W/$1"
}

# chunks_in STATE: the chunks DEST.part-state says are in
chunks_in() {
	tail -c +161 "$1" 2>/dev/null | tr -cd '\001' | wc -c
}

# wait_chunks STATE N: until N chunks are in (at most 20 s)
wait_chunks() {
	for _ in $(seq 400); do
		[ "$(chunks_in "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "fewer than $2 chunks came"
}

# assert_no_output_left_but FILE: nothing in $OUT but FILE (no DEST.part)
assert_no_output_left_but() {
	local left
	left=$(find "$OUT" -mindepth 1 ! -path "$1")
	[ -z "$left" ] || fail "left behind: $left"
}

# pyhttp_start [ADDRESS]: Python's http.server serving $W at $URL (whole
# files), on 127.0.0.1 or ADDRESS
pyhttp_start() {
	local a=${1:-127.0.0.1}
	PORT=$(free_port)
	python3 -m http.server "$PORT" --bind "$a" --directory "$W" >/dev/null 2>&1 &
	PIDS+=("$!")
	wait_port "$PORT" "$a"
	case $a in
	*:*) URL=http://[$a]:$PORT ;;
	*) URL=http://$a:$PORT ;;
	esac
}

@test "http: nginx: a verified copy, its manifest fetched beside the image" {
	image img 6
	nginx_start
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c 'sha256 ok, chunks=7 ' <<<"$stderr")" 1
	# by ranges, a chunk each
	assert_equal "$(grep -c '^206 ' "$BATS_TEST_TMPDIR/nginx/access.log")" 8
}

@test "http: nginx: a 404 is a clear error, nothing written" {
	image img 1
	nginx_start
	rb load --progress=none --manifest="$W/img.manifest" "$URL/nope" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/nope: HTTP status 404"
}

@test "http: nginx: the image replaced on the server during a stream is detected" {
	local pid rc=0 rchar=0
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 16
	zstd -q -1 "$W/img" -o "$W/img.zst"
	cp "$W/img.manifest" "$W/img.zst.manifest"
	nginx_start 4m
	head -c 1000 /dev/urandom >"$W/img.new"
	cat "$W/img.zst" >>"$W/img.new"
	touch -d '2001-01-01' "$W/img.new"
	# The old manifest is read first; the image is replaced once 2 MiB of
	# it came (a quarter of a second's worth at the rate, of four).
	"$RAMBOOT_BIN" load --progress=none "$URL/img.zst" "$OUT/img" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for _ in $(seq 200); do
		rchar=$(sed -n 's/^rchar: //p' "/proc/$pid/io" 2>/dev/null || echo 0)
		[ "${rchar:-0}" -gt 2097152 ] && break
		sleep 0.05
	done
	mv "$W/img.new" "$W/img.zst"
	wait "$pid" || rc=$?
	assert_equal "$rc" 1
	[ "${rchar:-0}" -gt 2097152 ] || fail "the copy did not start"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" \
		"ramboot: load: error: $URL/img.zst: changed on the server while being read"
	assert_no_output_left
}

@test "http: nginx: the image replaced on the server during a ranged copy is detected" {
	local pid rc=0
	image img 16
	nginx_start 4m
	head -c 1000 /dev/urandom >"$W/img.new"
	cat "$W/img" >>"$W/img.new"
	touch -d '2001-01-01' "$W/img.new"
	"$RAMBOOT_BIN" load --progress=none "$URL/img" "$OUT/img" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	wait_chunks "$OUT/img.part-state" 2
	mv "$W/img.new" "$W/img"
	wait "$pid" || rc=$?
	assert_equal "$rc" 1
	assert_equal "$(cat "$BATS_TEST_TMPDIR/err")" \
		"ramboot: load: error: $URL/img: changed on the server while being read"
	assert_no_output_left
}

@test "http: a file whose ETag changed by the end of the copy is detected" {
	image img 1
	bad_start changed "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img: changed on the server while being read"
}

@test "http: Python's http.server: a verified copy, and --sha256" {
	image img 3
	pyhttp_start
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	rm "$OUT/img"
	rb load --progress=none --sha256="$(sha256sum <"$W/img" | cut -c1-64)" "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c 'sha256 ok' <<<"$stderr")" 1
}

@test "http: an IPv6 address in brackets" {
	python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null ||
		skip "no IPv6 loopback"
	image img 1
	pyhttp_start ::1
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
}

@test "http: a host name not in /etc/hosts, with no DNS server known, is refused" {
	image img 1
	mkdir -p "$BATS_TEST_TMPDIR/root"
	RAMBOOT_ROOT=$BATS_TEST_TMPDIR/root rb load --progress=none --manifest="$W/img.manifest" \
		http://no-such-host.invalid/img "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: http://no-such-host.invalid/img: host not in /etc/hosts, and no DNS server known"
}

@test "http: a URL without a manifest with chunk hashes is refused, unless --no-verify" {
	image img 1
	rm "$W/img.manifest"
	pyhttp_start
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img.manifest: HTTP status 404"
	# a manifest of version 1: the whole image's hash only
	printf 'ramboot-manifest 1\nsize %s\nsha256 %s\n' "$(stat -c %s "$W/img")" \
		"$(sha256sum <"$W/img" | cut -c1-64)" >"$W/img.manifest"
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img: an HTTP source needs a manifest with chunk hashes or --sha256 (--no-verify copies it unchecked)"
	rb load --progress=none --no-verify "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
}

@test "http: a body cut short is an error, nothing written" {
	image img 2
	bad_start short "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_output ""
	assert_equal "$(grep -c "^ramboot: load: error: $URL/img: the server sent 1048576 of $(stat -c %s "$W/img") bytes\$" <<<"$stderr")" 1
}

@test "http: a server that stalls after its head is given up on" {
	image img 1
	bad_start stall "$W/img"
	rb load --progress=none --stall-timeout=2 --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$(grep -c 'no data for 2 s\|timed out' <<<"$stderr")" 1
}

@test "http: 10,000 header lines are refused" {
	image img 1
	bad_start headers "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img: response head longer than 8192 bytes"
}

@test "http: a redirect loop is refused" {
	image img 1
	bad_start loop "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_output ""
	assert_equal "$(grep -c "error: .*: more than 5 redirects, or a loop\$" <<<"$stderr")" 1
}

@test "http: a redirect is followed" {
	image img 1
	bad_start redirect "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
}

@test "http: nginx: a ranged copy by chunks: --connections=1 and 4 give the same bytes" {
	image img 9
	nginx_start
	rb load --progress=none --connections=1 "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	rm "$OUT/img"
	rb load --progress=none --connections=4 "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c "^ramboot: load: $URL/img: 9.0 MiB in 10 chunks, 0 failed\$" <<<"$stderr")" 1
	assert_no_output_left_but "$OUT/img"
	rb load --progress=none --connections=0 "$URL/img" "$OUT/img2"
	expect_status 2
}

@test "http: nginx: two mirrors, one killed mid-copy: the copy completes from the other" {
	local pid rc=0
	image img 24
	nginx_at a "$W" "limit_rate 2m;"
	local a=$URL
	nginx_at b "$W" "limit_rate 2m;"
	local b=$URL
	"$RAMBOOT_BIN" load --progress=none --mirror="$b/img" "$a/img" "$OUT/img" \
		2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	wait_chunks "$OUT/img.part-state" 4
	# requests of b's in flight: cut
	nginx_kill b
	wait "$pid" || rc=$?
	assert_equal "$rc" 0
	cmp "$W/img" "$OUT/img"
	grep -q "^ramboot: load: $b/img: .* in [0-9]* chunks, [1-9][0-9]* failed\$" \
		"$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
	grep -q "^ramboot: load: $a/img: .* in [0-9]* chunks, 0 failed\$" \
		"$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
	assert_no_output_left_but "$OUT/img"
}

@test "http: nginx: a mirror serving other bytes: its chunks fail their hash, fetched from the other" {
	image img 6
	mkdir "$BATS_TEST_TMPDIR/w2"
	# the same size, other bytes
	head -c "$(stat -c %s "$W/img")" /dev/urandom >"$BATS_TEST_TMPDIR/w2/img"
	nginx_at a "$W"
	local a=$URL
	nginx_at b "$BATS_TEST_TMPDIR/w2"
	rb load --progress=none --manifest="$W/img.manifest" --mirror="$a/img" "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	grep -q "^ramboot: load: warning: $URL/img: bytes [0-9]*-[0-9]* do not match their hash\$" <<<"$stderr" ||
		fail "$stderr"
	# dropped after 3 in a row; each of the other 3 connections may have had
	# one more read of it under way
	assert_equal "$(grep -c "^ramboot: load: $URL/img: 0 B in 0 chunks, [3-6] failed\$" <<<"$stderr")" 1
	assert_equal "$(grep -c "^ramboot: load: $a/img: 6.0 MiB in 7 chunks, 0 failed\$" <<<"$stderr")" 1
}

@test "http: nginx: a 200 to a range: that mirror is not used; alone, the image is read as one stream" {
	image img 6
	nginx_at a "$W"
	local a=$URL
	nginx_at b "$W" "max_ranges 0;"
	rb load --progress=none --mirror="$a/img" "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c "^ramboot: load: warning: $URL/img: the server ignored the range and sent the whole file\$" <<<"$stderr")" 1
	assert_equal "$(grep -c "^ramboot: load: $URL/img: 0 B in 0 chunks, 1 failed\$" <<<"$stderr")" 1
	rm "$OUT/img"
	# b alone: one GET of the whole file, never taken for a range
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c "^200 $(stat -c %s "$W/img")\$" "$BATS_TEST_TMPDIR/nginxb/access.log")" 1
	assert_equal "$(grep -c '^206 ' "$BATS_TEST_TMPDIR/nginxb/access.log")" 0
}

@test "http: a ranged answer cut short: fetched from the mirror; alone, an error" {
	image img 3
	nginx_at a "$W"
	local a=$URL
	bad_start short206 "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" --mirror="$a/img" "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	grep -q "^ramboot: load: warning: $URL/img: body of bytes [0-9]*-[0-9]* cut short" <<<"$stderr" ||
		fail "$stderr"
	rm "$OUT/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img: body of bytes 0-4095 cut short: Input/output error"
}

@test "http: nginx: a copy that failed part-way resumes at the chunks not yet verified" {
	local pid rc=0 size i
	image img 24
	size=$(stat -c %s "$W/img")
	nginx_at a "$W" "limit_rate 2m;"
	"$RAMBOOT_BIN" load --progress=none "$URL/img" "$OUT/img" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	wait_chunks "$OUT/img.part-state" 6
	nginx_kill a
	wait "$pid" || rc=$?
	assert_equal "$rc" 1
	grep -q "^ramboot: load: $OUT/img.part kept: [0-9]* of the chunks are in; the same command again resumes\$" \
		"$BATS_TEST_TMPDIR/err" || fail "$(cat "$BATS_TEST_TMPDIR/err")"
	[ ! -e "$OUT/img" ] || fail "a partial image named"
	# a chunk kept is damaged: hashed again, fetched again
	i=$(tail -c +161 "$OUT/img.part-state" | od -An -tu1 -v | tr -s ' ' '\n' | grep -n '^1$' |
		head -1 | cut -d: -f1)
	printf 'x' | dd of="$OUT/img.part" bs=1 seek=$(((i - 1) * 1048576 + 10)) conv=notrunc status=none
	mv "$BATS_TEST_TMPDIR/nginxa/access.log" "$BATS_TEST_TMPDIR/first.log"
	NGINX_PORT=${URL##*:} nginx_at a "$W"
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	grep -q "^ramboot: load: resumed: [0-9]* chunks were verified already\$" <<<"$stderr" ||
		fail "$stderr"
	[ "$(log_bytes a)" -lt "$((size - 4 * 1048576))" ] || fail "fetched $(log_bytes a) bytes again"
	assert_no_output_left_but "$OUT/img"
}

@test "http: a stream cut short starts again from the start on the next mirror" {
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	zstd -q -1 "$W/img" -o "$W/img.zst"
	nginx_at b "$W"
	local b=$URL
	bad_start short "$W/img.zst"
	rb load --progress=none --manifest="$W/img.manifest" --mirror="$b/img.zst" "$URL/img.zst" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	# cut short: the decoder's or the length's verdict, then b from the start
	assert_equal "$(grep -c "^ramboot: load: warning: $URL/img.zst: .*; again from the start from $b/img.zst\$" <<<"$stderr")" 1
	assert_no_output_left_but "$OUT/img"
}
