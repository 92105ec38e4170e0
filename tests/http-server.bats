#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The web server examples shipped in conf/http/, run as they are (each
# included from a configuration of the test's own that sets the port and
# the root) by Debian's nginx and lighttpd on 127.0.0.1, serving what
# `ramboot publish --content-addressed --cindex` wrote: the Cache-Control
# of a content-addressed name (immutable) and of a manifest (no-cache),
# ranges, a verified `ramboot load` through each, and through nginx as a
# caching proxy (conf/http/nginx-ramboot-proxy.conf) in front of another.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common

setup() {
	require_loader
	setup_out
	W=$BATS_TEST_TMPDIR/images
	mkdir -p "$W"
	PIDS=()
	PIDFILES=()
	# an image as `ltsp image` leaves it, published
	head -c $((3 * 1048576)) /dev/urandom >"$W/x86_64.img"
	run --separate-stderr "$RAMBOOT_BIN" publish --content-addressed --cindex --chunk-size=1M \
		"$W/x86_64.img"
	expect_status 0
	CA=$(cd "$W" && echo x86_64.img.sha256-*)
	CINDEX=$(cd "$W" && echo x86_64.img.cindex-*)
	[ -f "$W/$CA" ] && [ -f "$W/$CINDEX" ] && [ -f "$W/x86_64.img.manifest" ] ||
		fail "publish wrote: $(ls "$W")"
}

teardown() {
	local p f
	for f in "${PIDFILES[@]}"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	true
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: up to 10 s for a listener on 127.0.0.1
wait_port() {
	for _ in $(seq 100); do
		python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
			"$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# nginx_start NAME BODY: an nginx whose one server listens on $PORT with
# BODY (the include of a shipped file); $URL its address
nginx_start() {
	local n=$BATS_TEST_TMPDIR/$1
	PATH=$PATH:/usr/sbin
	command -v nginx >/dev/null || skip "nginx not installed (tests/deps.sh install)"
	PORT=$(free_port)
	"$TOP/tests/helpers/nginx-conf.sh" "$n" "127.0.0.1:$PORT" "${3:-}" "$2"
	PIDFILES+=("$n/nginx.pid")
	nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start: $(cat "$n/error.log")"
	wait_port "$PORT" || fail "nginx does not listen on $PORT: $(cat "$n/error.log")"
	URL=http://127.0.0.1:$PORT
}

# lighttpd_start: Debian's lighttpd with the shipped example, root $W
lighttpd_start() {
	local n=$BATS_TEST_TMPDIR/lighttpd
	PATH=$PATH:/usr/sbin
	command -v lighttpd >/dev/null ||
		skip "lighttpd not installed (tests/deps.sh install: lighttpd)"
	mkdir -p "$n"
	PORT=$(free_port)
	cat >"$n/lighttpd.conf" <<CONF
server.document-root = "$W"
server.bind = "127.0.0.1"
server.port = $PORT
server.errorlog = "$n/error.log"
include "$TOP/conf/http/lighttpd-ramboot.conf"
CONF
	lighttpd -tt -f "$n/lighttpd.conf" || fail "lighttpd refuses the configuration"
	lighttpd -D -f "$n/lighttpd.conf" &
	PIDS+=("$!")
	wait_port "$PORT" || fail "lighttpd does not listen on $PORT: $(cat "$n/error.log")"
	URL=http://127.0.0.1:$PORT
}

# header NAME PATH [CURL ARGS]: the value of header NAME of a HEAD of $URL/PATH
header() {
	curl -sS -I "${@:3}" "$URL/$2" | tr -d '\r' |
		sed -n "s/^$1: //Ip" | head -1
}

# the Cache-Control of each kind of name, a range, a verified load
check_server() {
	assert_equal "$(header Cache-Control "$CA")" "public, max-age=31536000, immutable"
	assert_equal "$(header Cache-Control "$CINDEX")" "public, max-age=31536000, immutable"
	assert_equal "$(header Cache-Control x86_64.img.manifest)" "no-cache"
	assert_equal "$(header Cache-Control x86_64.img)" "no-cache"
	# a GET: lighttpd answers a HEAD without the range
	assert_equal "$(curl -sS -D - -o /dev/null -H 'Range: bytes=1048576-2097151' "$URL/$CA" |
		tr -d '\r' | sed -n 's/^Content-Range: //Ip')" "bytes 1048576-2097151/3145728"
	assert_equal "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Range: bytes=0-9' "$URL/$CA")" 206
	rb load --progress=none "$URL/x86_64.img" "$OUT/img"
	assert_loaded "$W/x86_64.img" "$OUT/img"
	grep -q 'sha256 ok, chunks=[1-9]' <<<"$stderr" || fail "not verified by chunks: $stderr"
	rm -f "$OUT/img"
	rb load --progress=none --manifest="$URL/x86_64.img.manifest" "$URL/$CA" "$OUT/img"
	assert_loaded "$W/x86_64.img" "$OUT/img"
}

@test "http-server: nginx with conf/http/nginx-ramboot.conf: immutable content-addressed names, no-cache manifests, a verified load" {
	command -v curl >/dev/null || skip "curl not installed (tests/deps.sh install)"
	nginx_start nginx "root $W; include $TOP/conf/http/nginx-ramboot.conf;"
	check_server
}

@test "http-server: lighttpd with conf/http/lighttpd-ramboot.conf: immutable content-addressed names, no-cache manifests, a verified load" {
	command -v curl >/dev/null || skip "curl not installed (tests/deps.sh install)"
	lighttpd_start
	check_server
}

@test "http-server: nginx as a caching proxy (conf/http/nginx-ramboot-proxy.conf) keeps the content-addressed names only" {
	local origin
	command -v curl >/dev/null || skip "curl not installed (tests/deps.sh install)"
	nginx_start origin "root $W; include $TOP/conf/http/nginx-ramboot.conf;"
	origin=$PORT
	nginx_start proxy "include $TOP/conf/http/nginx-ramboot-proxy.conf;" \
		"upstream ramboot_origin { server 127.0.0.1:$origin; }
	proxy_cache_path $BATS_TEST_TMPDIR/cache keys_zone=ramboot:1m;"
	assert_equal "$(header X-Cache-Status "$CA")" MISS
	assert_equal "$(header X-Cache-Status "$CA")" HIT
	assert_equal "$(header Cache-Control "$CA")" "public, max-age=31536000, immutable"
	assert_equal "$(header Cache-Control x86_64.img.manifest)" "no-cache"
	assert_equal "$(header X-Cache-Status x86_64.img.manifest)" ""
	rb load --progress=none --manifest="$URL/x86_64.img.manifest" "$URL/$CA" "$OUT/img"
	assert_loaded "$W/x86_64.img" "$OUT/img"
	# the proxy answers from its cache with the origin gone
	kill "$(cat "$BATS_TEST_TMPDIR/origin/nginx.pid")"
	rm -f "$OUT/img"
	assert_equal "$(header X-Cache-Status "$CA" -H 'Range: bytes=0-9')" HIT
	assert_equal "$(curl -sS -H 'Range: bytes=2097152-2097161' "$URL/$CA" | od -An -tx1)" \
		"$(tail -c +2097153 "$W/x86_64.img" | head -c 10 | od -An -tx1)"
}
