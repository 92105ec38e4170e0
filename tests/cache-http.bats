#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot cache refresh http://...` against a real nginx (Debian's
# nginx-light, started here on 127.0.0.1 with a configuration of the
# test's own), the images written by `ramboot publish --cindex
# --content-addressed [--delta]`. What the refresh asked the server for
# is read from nginx's access log (one line per request: method, path,
# status, body bytes sent, Range): on a hit the manifest alone; into an
# empty cache every byte of the content-addressed image once; after a
# rebuild only the chunks the active slot does not hold (or the delta).
# A corrupted chunk, a refused manifest and a server that is down leave
# the old slot active and intact. With --mirror, a URL that is down or
# serves other bytes is left for the others.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/cache
load helpers/http

setup_file() {
	cache_images "$BATS_FILE_TMPDIR"
}

setup() {
	require_loader
	cache_test_vars
	W=$T/www
	mkdir -p "$W"
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
}

teardown() {
	nginx_stop_all
}

# nginx_start: nginx serving $W at $URL, every request logged in $LOG
# (its method, path, status, body bytes and Range)
nginx_start() {
	# shellcheck disable=SC2016 # nginx's variables
	NGINX_LOG_FORMAT='$request_method $uri $status $body_bytes_sent "$http_range"' nginx_at "" "$W"
	LOG=$BATS_TEST_TMPDIR/nginx/access.log
}

nginx_stop() {
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/nginx/nginx.pid")
	kill "$pid"
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "nginx did not stop"
}

# publish IMG [OPTIONS...]: IMG becomes the server's x86_64.img (a new
# file, as `ltsp image` writes it), published with OPTIONS
publish() {
	local img=$1
	shift
	cp "$img" "$W/.new"
	mv "$W/.new" "$W/x86_64.img"
	"$RAMBOOT_BIN" publish --cindex --content-addressed "$@" "$W/x86_64.img" >/dev/null
}

# b_published [OPTION...]: nginx serving a.img, the cache refreshed to it,
# then b.img published (with the publish OPTIONs)
b_published() {
	nginx_start
	publish "$D/a.img"
	refresh
	[ "$status" -eq 0 ] || fail "the first refresh failed: $stderr"
	publish "$D/b.img" "$@"
}

# mkey NAME: the value of the manifest key NAME in the server's manifest
mkey() {
	sed -n "s/^$1 //p" "$W/x86_64.img.manifest"
}

# refresh [ARGS...]: the refresh of image x from $URL/x86_64.img, the
# access log emptied first (nginx appends to it)
refresh() {
	: >"$LOG"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x "$@" \
		"$URL/x86_64.img"
}

# requests: the access log's lines; bytes PATH: the body bytes sent of PATH
requests() {
	cat "$LOG"
}
bytes() {
	awk -v p="$1" '$2 == p { s += $4 } END { print s + 0 }' "$LOG"
}

# assert_active SLOT GEN IMG: the state says SLOT is active at generation
# GEN and holds IMG, which the slot's file is
assert_active() {
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key state)" = ok ]
	[ "$(key active)" = "$1" ]
	[ "$(key generation)" = "$2" ]
	[ "$(key sha256)" = "$(sha256sum <"$3" | cut -d' ' -f1)" ]
	cmp "$X/$1" "$3"
}

@test "cache over HTTP: an empty cache reads the content-addressed image once; the same image, the manifest alone" {
	local size ca
	nginx_start
	publish "$D/a.img"
	ca=/$(mkey image)
	size=$(stat -c %s "$D/a.img")
	refresh
	[ "$status" -eq 0 ]
	[ "$(key result)" = refreshed ]
	[ "$(key index)" = manifest ]
	[ "$(key bytes_network)" = "$size" ]
	[ "$(key bytes_local)" = 0 ]
	assert_active a 1 "$D/a.img"
	# the manifest, the index it names, then the content-addressed file
	# by ranges (a HEAD first); never the name a rebuild changes
	requests
	[ "$(awk '$2 == "/x86_64.img.manifest"' "$LOG" | wc -l)" = 1 ]
	[ "$(awk -v p="/$(mkey cindex)" '$2 == p && $3 == 200' "$LOG" | wc -l)" = 1 ]
	[ "$(awk '$2 == "/x86_64.img"' "$LOG" | wc -l)" = 0 ]
	[ "$(bytes "$ca")" = "$size" ]
	[ "$(awk -v p="$ca" '$2 == p && $1 == "GET" && $3 != 206' "$LOG" | wc -l)" = 0 ]
	# runs of chunks, not a request each
	[ "$(awk -v p="$ca" '$2 == p && $1 == "GET"' "$LOG" | wc -l)" -le $((size / 1048576 + 2)) ]

	refresh
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
	[ "$(key bytes_network)" = 0 ]
	requests
	[ "$(wc -l <"$LOG")" = 1 ]
	[ "$(awk '{ print $1, $2, $3 }' "$LOG")" = "GET /x86_64.img.manifest 200" ]
	assert_active a 1 "$D/a.img"
}

@test "cache over HTTP: a rebuilt image reads only the chunks the active slot lacks, by range" {
	local size ca net
	b_published
	ca=/$(mkey image)
	size=$(stat -c %s "$D/b.img")
	refresh
	[ "$status" -eq 0 ]
	[ "$(key result)" = refreshed ]
	[ "$(key delta)" = "" ]
	net=$(key bytes_network)
	echo "bytes_network $net bytes_local $(key bytes_local) of $size"
	requests
	[ "$net" -gt 0 ]
	[ "$(key chunks_local)" -gt 0 ]
	# what nginx sent of the image is what the refresh counted, a small
	# part of the image
	[ "$(bytes "$ca")" = "$net" ]
	[ "$((net * 4))" -lt "$size" ]
	[ "$(awk -v p="$ca" '$2 == p && $1 == "GET" && $3 != 206' "$LOG" | wc -l)" = 0 ]
	assert_active b 2 "$D/b.img"
	cmp "$X/a" "$D/a.img"
}

@test "cache over HTTP: the delta publish wrote is read in place of the chunks" {
	local size delta
	b_published --delta
	delta=/$(mkey delta)
	[ "$delta" != / ]
	size=$(stat -c %s "$D/b.img")
	refresh
	[ "$status" -eq 0 ]
	[ "$(key delta)" = applied ]
	requests
	[ "$(key bytes_delta)" = "$(stat -c %s "$W/$delta")" ]
	[ "$(key bytes_network)" = "$(key bytes_delta)" ]
	[ "$(bytes "$delta")" = "$(key bytes_delta)" ]
	# nothing of the image itself, nor its index
	[ "$(awk -v p="/$(mkey image)" '$2 == p' "$LOG" | wc -l)" = 0 ]
	[ "$(awk -v p="/$(mkey cindex)" '$2 == p' "$LOG" | wc -l)" = 0 ]
	assert_active b 2 "$D/b.img"

	# --no-delta: the chunks
	publish "$D/a.img" --delta
	refresh --no-delta
	[ "$status" -eq 0 ]
	[ "$(key delta)" = "" ]
	[ "$(bytes "/$(mkey delta)")" = 0 ]
	[ "$(bytes "/$(mkey image)")" = "$(key bytes_network)" ]
	assert_active a 3 "$D/a.img"
}

@test "cache over HTTP: a corrupted chunk on the server is refused, the old slot active and intact" {
	local ca off
	b_published
	ca=$(mkey image)
	# a byte in the middle of the first chunk of b.img that a.img lacks
	off=$(awk 'NR == FNR { if ($1 == "chunk") have[$4] = 1; next }
		   $1 == "chunk" && !($4 in have) { print $2 + int($3 / 2); exit }' \
		"$X/a.cindex" "$W/$(mkey cindex)")
	[ -n "$off" ]
	printf '\x5a' | dd of="$W/$ca" bs=1 seek="$off" conv=notrunc status=none
	refresh
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$ca: the chunk at "*" does not match the index"* ]]
	assert_active a 1 "$D/a.img"
	[ ! -s "$X/b" ]

	# a manifest that does not parse: refused, nothing else requested
	publish "$D/b.img"
	sed -i 's/^size .*/size 12x/' "$W/x86_64.img.manifest"
	refresh
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"x86_64.img.manifest"* ]]
	[ "$(wc -l <"$LOG")" = 1 ]
	assert_active a 1 "$D/a.img"
}

@test "cache over HTTP: --signed takes only a signed manifest; an index altered on the server is refused" {
	local idx
	nginx_start
	mkdir "$T/keys"
	"$RAMBOOT_BIN" keygen "$T/k" >/dev/null
	cp "$T/k.pub" "$T/keys/"
	publish "$D/a.img"
	refresh --signed --keys="$T/keys"
	[ "$status" -eq 1 ]
	[ "$(wc -l <"$LOG")" = 1 ]
	[ ! -e "$X/state" ]
	publish "$D/a.img" --sign="$T/k"
	refresh --signed --keys="$T/keys"
	[ "$status" -eq 0 ]
	[[ "$(key signed_by)" == "k "* ]]
	cmp "$X/a.manifest" "$W/x86_64.img.manifest"
	assert_active a 1 "$D/a.img"

	# the index the signed manifest names, one byte changed: refused
	# before a byte of the image is asked for
	publish "$D/b.img" --sign="$T/k"
	idx=$(mkey cindex)
	sed -i '5s/^chunk 0 /chunk 00 /' "$W/$idx"
	refresh --signed --keys="$T/keys"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$idx: sha256 "*"refused"* ]]
	[ "$(awk -v p="/$(mkey image)" '$2 == p' "$LOG" | wc -l)" = 0 ]
	assert_active a 1 "$D/a.img"
}

@test "cache over HTTP: a server that is down is a clear error, the old slot active and intact" {
	b_published
	nginx_stop
	refresh
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"127.0.0.1:$PORT"*"onnection refused"* ]]
	assert_active a 1 "$D/a.img"
}

@test "cache over HTTP: an image whose manifest names no index is refused, nothing of it requested" {
	nginx_start
	cp "$D/a.img" "$W/x86_64.img"
	"$RAMBOOT_BIN" publish "$W/x86_64.img" >/dev/null
	refresh
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs the index its manifest names"* ]]
	[ "$(awk '$2 == "/x86_64.img"' "$LOG" | wc -l)" = 0 ]
	[ "$(key generation)" = "" ]
}

@test "cache over HTTP: a cache in an image file (root): full, hit, miss" {
	is_root || skip "needs root (mount)"
	local size
	nginx_start
	truncate -s 64M "$T/cache.img"
	"$RAMBOOT_BIN" cache init "$T/cache.img" >/dev/null
	C=$T/cache.img
	publish "$D/a.img"
	size=$(stat -c %s "$D/a.img")
	refresh
	[ "$status" -eq 0 ]
	[ "$(key bytes_network)" = "$size" ]
	refresh
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
	[ "$(wc -l <"$LOG")" = 1 ]
	publish "$D/b.img"
	refresh
	[ "$status" -eq 0 ]
	[ "$(key slot)" = b ]
	[ "$(key sha256)" = "$(sha256sum <"$D/b.img" | cut -d' ' -f1)" ]
	[ "$(bytes "/$(mkey image)")" = "$(key bytes_network)" ]
	[ "$(($(key bytes_network) * 4))" -lt "$size" ]
}

@test "cache over HTTP: --mirror: a first URL that is down is not used, the manifest and the chunks from the mirror" {
	local dead
	b_published
	dead=$(free_port)
	: >"$LOG"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--mirror="$URL/x86_64.img" "http://127.0.0.1:$dead/x86_64.img"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(key result)" = refreshed ]
	[[ "$stderr" == *"127.0.0.1:$dead/$(mkey image): Connection refused: mirror not used"* ]]
	grep -q '^GET /x86_64.img.manifest 200' "$LOG"
	[ "$(bytes "/$(mkey image)")" = "$(key bytes_network)" ]
	assert_active b 2 "$D/b.img"
}

@test "cache over HTTP: --mirror: chunks that do not match their hash on one URL are read from the other" {
	local ca size
	b_published
	ca=$(mkey image)
	size=$(stat -c %s "$W/$ca")
	# the first URL: the same manifest and index, the image's bytes other
	mkdir "$T/bad"
	cp "$W/x86_64.img.manifest" "$W/$(mkey cindex)" "$T/bad/"
	head -c "$size" /dev/urandom >"$T/bad/$ca"
	good=$URL
	nginx_at 2 "$T/bad"
	bad=$URL
	URL=$good
	: >"$LOG"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--mirror="$good/x86_64.img" "$bad/x86_64.img"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ "$(key result)" = refreshed ]
	[[ "$stderr" == *"$bad/$ca: bytes "*" do not match their hash"* ]]
	[[ "$stderr" == *"$bad/$ca: 0 bytes in 0 runs, "[1-9]*" failed"* ]]
	[ "$(bytes "/$ca")" = "$(key bytes_network)" ]
	assert_active b 2 "$D/b.img"
}
