#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot load http://...`: against a real nginx (Debian's nginx-light,
# started here on 127.0.0.1 with a configuration of the test's own),
# Python's http.server for whole files, and a one-shot server of
# tests/helpers/http-bad.py for what no real server does (a body cut
# short, a stall after the head, endless headers, a redirect loop). The
# ranged reads (a 200 to a range, If-Range) are the unit tests'
# (tests/unit/test_http_client.c): the loader reads a URL as a stream.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common

setup() {
	require_loader
	setup_out
	W=$BATS_TEST_TMPDIR/www
	mkdir -p "$W"
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ -f "$BATS_TEST_TMPDIR/nginx/nginx.pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/nginx/nginx.pid")" 2>/dev/null || true
	fi
}

# image NAME MIB: random bytes, and NAME.manifest beside them (chunks of 1 MiB)
image() {
	head -c "$(($2 * 1048576 + 12345))" /dev/urandom >"$W/$1"
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/$1.manifest" "$W/$1"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT [HOST]: up to 10 s for a listener
wait_port() {
	for _ in $(seq 100); do
		python3 -c 'import socket, sys; socket.create_connection((sys.argv[2], int(sys.argv[1])), 1)' \
			"$1" "${2:-127.0.0.1}" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "nothing listens on ${2:-127.0.0.1}:$1"
}

# nginx_start [RATE]: nginx serving $W at $URL, each answer at RATE
# (limit_rate) when given
nginx_start() {
	local n=$BATS_TEST_TMPDIR/nginx v t
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
		skip "nginx not installed (tests/deps.sh install: nginx-light)"
	PATH=$PATH:/usr/sbin
	mkdir -p "$n"
	PORT=$(free_port)
	v=$(nginx -V 2>&1)
	# the temporary directories of the modules built in, all in $n: the
	# defaults are root's
	t="client_body_temp_path $n/body;"
	for m in proxy fastcgi uwsgi scgi; do
		case $v in
		*"--without-http_${m}_module"*) ;;
		*) t="$t ${m}_temp_path $n/$m;" ;;
		esac
	done
	cat >"$n/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo 'user root;' )
worker_processes 1;
pid $n/nginx.pid;
error_log $n/error.log;
events { worker_connections 64; }
http {
	access_log off;
	$t
	server {
		listen 127.0.0.1:$PORT;
		root $W;
		${1:+limit_rate $1;}
	}
}
CONF
	nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start: $(cat "$n/error.log")"
	wait_port "$PORT"
	URL=http://127.0.0.1:$PORT
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

# bad_start MODE FILE: the one-shot server of what no real server sends
bad_start() {
	PORT=$(free_port)
	timeout 60 python3 "$TOP/tests/helpers/http-bad.py" "$PORT" "$1" "$2" &
	PIDS+=("$!")
	wait_port "$PORT"
	URL=http://127.0.0.1:$PORT
}

@test "http: nginx: a verified copy, its manifest fetched beside the image" {
	image img 6
	nginx_start
	rb load --progress=none "$URL/img" "$OUT/img"
	assert_loaded "$W/img" "$OUT/img"
	assert_equal "$(grep -c 'chunks ok' <<<"$stderr")" 1
}

@test "http: nginx: a 404 is a clear error, nothing written" {
	image img 1
	nginx_start
	rb load --progress=none --manifest="$W/img.manifest" "$URL/nope" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	assert_equal "$stderr" "ramboot: load: error: $URL/nope: HTTP status 404"
}

@test "http: nginx: the image replaced on the server during the copy is detected" {
	local pid rc=0 rchar=0
	image img 16
	nginx_start 4m
	head -c 1000 /dev/urandom >"$W/img.new"
	cat "$W/img" >>"$W/img.new"
	touch -d '2001-01-01' "$W/img.new"
	# The old manifest is read first; the image is replaced once 2 MiB of
	# it came (a quarter of a second's worth at the rate, of four).
	"$RAMBOOT_BIN" load --progress=none "$URL/img" "$OUT/img" 2>"$BATS_TEST_TMPDIR/err" &
	pid=$!
	for _ in $(seq 200); do
		rchar=$(sed -n 's/^rchar: //p' "/proc/$pid/io" 2>/dev/null || echo 0)
		[ "${rchar:-0}" -gt 2097152 ] && break
		sleep 0.05
	done
	mv "$W/img.new" "$W/img"
	wait "$pid" || rc=$?
	assert_equal "$rc" 1
	[ "${rchar:-0}" -gt 2097152 ] || fail "the copy did not start"
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
