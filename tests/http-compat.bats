#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load http://...` against other web servers than tests/http.bats'
# nginx, and what they do that nginx does not by default: busybox httpd
# (a connection per request), Python's http.server (HTTP/1.0, no ranges),
# nginx sending chunked bodies (its SSI filter: what a proxy or a dynamic
# server sends) and bodies up to its close (chunked encoding off), a
# redirect to another server, an IPv6 listener, a host name from
# /etc/hosts; and from tests/helpers/http-bad.py what no Debian server
# sends: a multipart answer to a range, a range of a file of another size,
# a 416, a 503 with a Retry-After of an hour, a chunked body cut short or
# malformed. Each image is loaded three ways: uncompressed (by ranges where
# the server serves them, else one stream), compressed (a stream), and its
# manifest fetched beside it.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common
load helpers/http

# image NAME MIB: random bytes, NAME.manifest beside them (chunks of 1 MiB),
# and NAME.zst with the same manifest. Neither file ends in '<': nginx's
# SSI filter keeps a last '<' back as the start of a "<!--" and drops it
# at the end of the file (nginx 1.22), one time in 256.
image() {
	while :; do
		head -c "$(($2 * 1048576 + 12345))" /dev/urandom >"$W/$1"
		zstd -q -f -1 "$W/$1" -o "$W/$1.zst"
		[ "$(tail -c 1 "$W/$1")" != '<' ] && [ "$(tail -c 1 "$W/$1.zst")" != '<' ] && break
	done
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/$1.manifest" "$W/$1"
	cp "$W/$1.manifest" "$W/$1.zst.manifest"
}

# load_both BASE: $BASE/img and $BASE/img.zst loaded, each verified
load_both() {
	local f
	for f in img img.zst; do
		run --separate-stderr timeout 60 "$RAMBOOT_BIN" load --progress=none "$1/$f" "$OUT/$f"
		assert_loaded "$W/img" "$OUT/$f"
		grep -q "sha256 ok\|chunks ok" <<<"$stderr" || fail "not verified: $stderr"
	done
}

@test "http-compat: busybox httpd (a connection per request): by ranges, a stream, the manifest" {
	command -v busybox >/dev/null || skip "busybox not installed"
	# not `busybox httpd`: without -f it forks a daemon onto port 80
	busybox --list | grep -qx httpd || skip "busybox without httpd"
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	PORT=$(free_port)
	busybox httpd -f -p "127.0.0.1:$PORT" -h "$W" &
	PIDS+=("$!")
	wait_port "$PORT"
	load_both "http://127.0.0.1:$PORT"
	# the uncompressed one by ranges, a chunk each
	run --separate-stderr "$RAMBOOT_BIN" load --progress=none "http://127.0.0.1:$PORT/img" "$OUT/again"
	assert_equal "$(grep -c "^ramboot: load: http://127.0.0.1:$PORT/img: 3.0 MiB in 4 chunks, 0 failed\$" <<<"$stderr")" 1
}

@test "http-compat: Python's http.server (HTTP/1.0, no ranges): one stream each, verified" {
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	PORT=$(free_port)
	python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$W" >/dev/null 2>&1 &
	PIDS+=("$!")
	wait_port "$PORT"
	load_both "http://127.0.0.1:$PORT"
}

@test "http-compat: nginx sending chunked bodies (SSI): the manifest, a stream, the uncompressed image as a stream" {
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	nginx_at "" "$W" "ssi on; ssi_types *;"
	curl -sfI "$URL/img.manifest" >/dev/null 2>&1 && { curl -s -D - -o /dev/null "$URL/img.manifest" |
		grep -qi '^Transfer-Encoding: chunked' || fail "nginx sent no chunked body"; }
	load_both "$URL"
}

@test "http-compat: nginx sending bodies up to its close (no length, chunked encoding off)" {
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	nginx_at "" "$W" "ssi on; ssi_types *; chunked_transfer_encoding off;"
	load_both "$URL"
}

@test "http-compat: a chunked body cut short, or malformed: an error; with a mirror, from the start there" {
	command -v zstd >/dev/null || skip "zstd not installed"
	image img 3
	nginx_at b "$W"
	local b=$URL mode
	for mode in chunkcut chunkbad; do
		bad_start "$mode" "$W/img.zst"
		rb load --progress=none --manifest="$W/img.manifest" "$URL/img.zst" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
		rb load --progress=none --manifest="$W/img.manifest" --mirror="$b/img.zst" "$URL/img.zst" "$OUT/img"
		assert_loaded "$W/img" "$OUT/img"
		assert_equal "$(grep -c "^ramboot: load: warning: $URL/img.zst: .*; again from the start from $b/img.zst\$" <<<"$stderr")" 1
		rm "$OUT/img"
	done
}

@test "http-compat: a multipart answer to a range, a 416, a 503 with Retry-After: that URL not used, the mirror serves; alone, an error" {
	local mode
	image img 3
	nginx_at b "$W"
	local b=$URL
	for mode in multipart 416 503; do
		bad_start "$mode" "$W/img"
		rb load --progress=none --manifest="$W/img.manifest" --mirror="$b/img" "$URL/img" "$OUT/img"
		assert_loaded "$W/img" "$OUT/img"
		rm "$OUT/img"
		run --separate-stderr timeout 60 "$RAMBOOT_BIN" load --progress=none --manifest="$W/img.manifest" \
			"$URL/img" "$OUT/img"
		assert_load_fail 1 "$OUT/img"
		assert_equal "$(wc -l <<<"$stderr")" 1
		case $mode in
		multipart) assert_equal "$stderr" "ramboot: load: error: $URL/img: Content-Range is not the range asked for (bytes 0-4095)" ;;
		416) assert_equal "$stderr" "ramboot: load: error: $URL/img: HTTP status 416" ;;
		503) assert_equal "$stderr" "ramboot: load: error: $URL/img: HTTP status 503" ;;
		esac
	done
}

@test "http-compat: a range of a file of another size is the file changed, never spliced" {
	image img 3
	bad_start total "$W/img"
	rb load --progress=none --manifest="$W/img.manifest" "$URL/img" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/img: changed on the server while being read"
}

@test "http-compat: nginx redirecting to another server (another port): followed, by ranges there" {
	image img 3
	nginx_at b "$W"
	local b=$URL
	nginx_at a "$W" "return 302 $b\$request_uri;"
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c '^206 ' "$BATS_TEST_TMPDIR/nginxb/access.log")" 5
}

@test "http-compat: nginx listening on [::1]: an IPv6 literal URL, by ranges" {
	python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null ||
		skip "no IPv6 loopback"
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || skip "nginx not installed"
	PATH=$PATH:/usr/sbin
	image img 3
	PORT=$(free_port)
	NGINX_LOG_FORMAT='$status $body_bytes_sent' \
		"$TOP/tests/helpers/nginx-conf.sh" "$BATS_TEST_TMPDIR/nginx6" "[::1]:$PORT" "" "root $W;"
	nginx -p "$BATS_TEST_TMPDIR/nginx6" -c "$BATS_TEST_TMPDIR/nginx6/nginx.conf"
	wait_port "$PORT" ::1
	rb load --progress=none "http://[::1]:$PORT/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c '^206 ' "$BATS_TEST_TMPDIR/nginx6/access.log")" 5
}

@test "http-compat: a host name from /etc/hosts (read by ramboot itself, no NSS): its first address" {
	local a
	a=$(awk '$1 !~ /^#/ { for (i = 2; i <= NF; i++) if ($i == "localhost") { print $1; exit } }' /etc/hosts)
	[ "$a" = 127.0.0.1 ] || skip "localhost is not first 127.0.0.1 in /etc/hosts"
	image img 1
	nginx_start
	rb load --progress=none "http://localhost:$PORT/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
}
