#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot lazy --image=http://...` on the host, against a real nginx on
# 127.0.0.1: what is refused before anything reaches the kernel (no
# manifest, no chunk hashes, a compressed file, zram), each with nothing
# left behind. The NBD server itself: tests/unit/test_nbdserve.c; the
# whole boot with the kernel's NBD client: the QEMU case http-lazy
# (tests/boot/cases/95-http-lazy.sh).

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common
load helpers/http

setup() {
	require_loader
	[ "$(id -u)" = 0 ] || skip "needs root (a tmpfs is mounted)"
	W=$BATS_TEST_TMPDIR/www
	S=$BATS_TEST_TMPDIR/st
	mkdir -p "$W" "$S"
	T=$BATS_TEST_TMPDIR/ram
	# the request line in nginx's access log (helpers/http.bash)
	# shellcheck disable=SC2016 # nginx's variables
	NGINX_LOG_FORMAT='"$request" $status $body_bytes_sent'
}

teardown() {
	nginx_stop_all
	if mountpoint -q "$BATS_TEST_TMPDIR/ram" 2>/dev/null; then
		umount "$BATS_TEST_TMPDIR/ram" || true
	fi
}

# need_no_nbd CASE: skip where the kernel has NBD (the lazy copy would
# go on to the kernel's client): the QEMU case CASE covers it there
need_no_nbd() {
	[ ! -d /sys/module/nbd ] && ! modprobe -n -q nbd 2>/dev/null ||
		skip "this kernel has nbd: the QEMU case $1 covers it"
}

# image NAME: a squashfs, and NAME.manifest (chunks of 64 KiB) beside it
image() {
	mkdir -p "$BATS_TEST_TMPDIR/tree"
	head -c 300000 /dev/urandom >"$BATS_TEST_TMPDIR/tree/f"
	mksquashfs "$BATS_TEST_TMPDIR/tree" "$W/$1" -noappend -quiet -no-progress >/dev/null
	"$RAMBOOT_BIN" manifest --chunk-size=64KiB -o "$W/$1.manifest" "$W/$1"
}

# err_has TEXT: the last run's stderr holds TEXT
err_has() {
	[[ $stderr == *"$1"* ]] || fail "stderr lacks '$1': $stderr"
}

lazy_http() {
	rb lazy --status="$S/lazy" --tmpfs="$T" "$@"
}

# The run gave up with WHY, and left nothing: no tmpfs, no directory.
assert_gave_up() {
	show_run
	assert_failure "$1"
	grep -qx "gave_up=$2" "$S/lazy" || fail "gave_up: $(grep gave_up= "$S/lazy")"
	grep -qx "state=gave-up" "$S/lazy"
	[ ! -e "$T" ] || fail "$T left behind"
	! grep -q " $T " /proc/mounts
}

@test "lazy-http: no manifest on the server: refused before anything is made" {
	image img
	rm "$W/img.manifest"
	nginx_start
	lazy_http --image="$URL/img"
	assert_gave_up 1 manifest
	err_has "img.manifest"
}

@test "lazy-http: a manifest without chunk hashes is refused" {
	image img
	sed -i -e '/^chunk/d' -e 's/^ramboot-manifest 2$/ramboot-manifest 1/' "$W/img.manifest"
	nginx_start
	lazy_http --image="$URL/img"
	assert_gave_up 1 manifest
	err_has "no chunk hashes"
}

@test "lazy-http: a compressed file under the image's name is refused (its size)" {
	image img
	zstd -q -c "$W/img" >"$W/img.zst"
	mv "$W/img.zst" "$W/img"
	nginx_start
	lazy_http --image="$URL/img"
	assert_gave_up 1 size-mismatch
	err_has "a compressed file?"
}

@test "lazy-http: --target=zram, --loop and --wait-loop are usage errors" {
	for o in --target=zram --loop=/dev/loop7 --wait-loop=5; do
		rb lazy --status="$S/lazy" --image=http://127.0.0.1:9/img "$o"
		assert_failure 2
		err_has "an http:// image is served by the copier"
	done
}

@test "lazy-http: a verified manifest goes on to the NBD device (a kernel without nbd: given up, nothing left)" {
	need_no_nbd http-lazy
	image img
	nginx_start
	lazy_http --image="$URL/img"
	assert_gave_up 1 source
	err_has "nbd: netlink family: not in this kernel"
	grep -q 'GET /img.manifest' "$BATS_TEST_TMPDIR/nginx/access.log"
	grep -qx "size=$(stat -c %s "$W/img")" "$S/lazy"
}

@test "lazy-http: a profile recorded on the image is used; one of another image is not" {
	need_no_nbd http-lazy
	image img
	nginx_start
	size=$(stat -c %s "$W/img")
	sha=$(sha256sum "$W/img" | cut -d' ' -f1)
	printf 'ramboot-profile 1\nimage-size %s\nimage-sha256 %s\npage-size 4096\nrange 65536 4096\n' \
		"$size" "$sha" >"$BATS_TEST_TMPDIR/p"
	lazy_http --image="$URL/img" --profile="$BATS_TEST_TMPDIR/p"
	assert_gave_up 1 source
	grep -qx "profile=used" "$S/lazy"
	printf 'ramboot-profile 1\nimage-size %s\nimage-sha256 %064d\npage-size 4096\n' \
		"$size" 0 >"$BATS_TEST_TMPDIR/p"
	lazy_http --image="$URL/img" --profile="$BATS_TEST_TMPDIR/p"
	assert_gave_up 1 source
	grep -qx "profile=mismatch" "$S/lazy"
}

@test "lazy-http: a first URL that does not answer is not used: the manifest and the size from the next" {
	need_no_nbd http-lazy-mirror
	image img
	nginx_start
	dead=$(free_port)
	lazy_http --image="http://127.0.0.1:$dead/img,$URL/img"
	assert_gave_up 1 source
	err_has "nbd: netlink family: not in this kernel"
	err_has "http://127.0.0.1:$dead/img: Connection refused: mirror not used"
	grep -q 'GET /img.manifest' "$BATS_TEST_TMPDIR/nginx/access.log"
	grep -q 'HEAD /img' "$BATS_TEST_TMPDIR/nginx/access.log"
	grep -qx "size=$(stat -c %s "$W/img")" "$S/lazy"
}

@test "lazy-http: --mirror adds servers of the image; a first that does not answer is not used" {
	need_no_nbd http-lazy-mirror
	image img
	nginx_start
	dead=$(free_port)
	lazy_http --image="http://127.0.0.1:$dead/img" --mirror="$URL/img"
	assert_gave_up 1 source
	err_has "http://127.0.0.1:$dead/img: Connection refused: mirror not used"
	grep -q 'GET /img.manifest' "$BATS_TEST_TMPDIR/nginx/access.log"
	grep -qx "size=$(stat -c %s "$W/img")" "$S/lazy"
}

@test "lazy-http: --mirror is a usage error with a file image, a URL that is not http://, or a ninth URL" {
	run "$BIN" lazy --image="$W/img" --mirror=http://127.0.0.1:1/img
	assert_failure 2
	assert_output --partial "--mirror: only with an http:// --image"
	run "$BIN" lazy --image=http://127.0.0.1:1/img --mirror=ftp://127.0.0.1/img
	assert_failure 2
	assert_output --partial "--mirror: 'ftp://127.0.0.1/img' is not an http:// URL"
	local m=() i
	for i in 1 2 3 4 5 6 7 8; do m+=("--mirror=http://127.0.0.1:1/m$i"); done
	run "$BIN" lazy --image=http://127.0.0.1:1/img "${m[@]}"
	assert_failure 2
	assert_output --partial "--mirror: at most 7"
}
