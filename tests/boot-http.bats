#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot` with ramboot.url=: the RAM copy comes from a real nginx
# (started here on 127.0.0.1), checked chunk by chunk. The client runs in
# a fixture root ($RAMBOOT_ROOT, as tests/boot-cmd.bats), as root: its
# tmpfs is a real mount. A copy that fails part-way is a fallback with
# nothing left behind: the loader keeps DEST.part for a run again, the
# boot does not (it never runs again), so its tmpfs goes.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/common
load helpers/http

setup() {
	is_root || skip "needs root (tmpfs mounts)"
	R=$BATS_TEST_TMPDIR/root
	W=$BATS_TEST_TMPDIR/www
	mkdir -p "$R/proc" "$R/etc" "$W"
	: >"$R/proc/cmdline"
	printf 'MemTotal: 8100000 kB\nMemFree: 8000000 kB\nMemAvailable: 8000000 kB\n' \
		>"$R/proc/meminfo"
	# a squashfs of 8 chunks of 1 MiB, whose bytes do not compress
	local d=$BATS_TEST_TMPDIR/tree
	mkdir -p "$d/sbin"
	head -c 8000000 /dev/urandom >"$d/sbin/init"
	mksquashfs "$d" "$W/x.img" -quiet -noappend -no-progress >/dev/null
	"$RAMBOOT_BIN" manifest --chunk-size=1M -o "$W/x.img.manifest" "$W/x.img"
}

teardown() {
	nginx_stop_all
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram" || umount -l "$R/run/ramboot/ram"
	fi
}

report() { # key -> value
	sed -n "s/^$1=//p" "$R/run/ramboot/report"
}

# boot CMDLINE: ramboot boot in the fixture root
boot() {
	run --separate-stderr timeout 120 env -u RAMBOOT RAMBOOT_ROOT="$R" \
		"$RAMBOOT_BIN" boot --json --cmdline="ramboot=ram $1"
	echo "$stderr"
}

@test "boot-http: ramboot.url=: the RAM copy from nginx, verified by chunk" {
	nginx_start
	boot "ramboot.url=$URL/x.img"
	[ "$status" -eq 0 ]
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	cmp "$W/x.img" "$R/run/ramboot/ram/x.img"
	[ "$(report mode_done)" = ram ]
	[ "$(report source)" = "$URL/x.img" ]
	[ "$(report source_used)" = http ]
	[ "$(report hash)" = ok ]
	[ "$(report fallback)" = "" ]
	# the size said from the manifest
	[[ "$stderr" == *"copying $URL/x.img ("*"uncompressed) into RAM"* ]]
	[[ "$stderr" != *"size unknown"* ]]
}

@test "boot-http: the server gone part-way: a fallback, the tmpfs and its DEST.part gone" {
	# 1 MiB/s: the copy takes 8 s; nginx is killed once a chunk came
	nginx_start 1m
	boot "ramboot.url=$URL/x.img ramboot.timeout=3" &
	local b=$!
	for _ in $(seq 200); do
		grep -qs '^206 ' "$BATS_TEST_TMPDIR/nginx/access.log" && break
		sleep 0.05
	done
	grep -qs '^206 ' "$BATS_TEST_TMPDIR/nginx/access.log" || fail "no chunk was served"
	nginx_kill ""
	wait "$b" || true
	[ -s "$R/run/ramboot/report" ] || fail "no report"
	[ "$(report mode_done)" != ram ]
	[ -n "$(report fallback)" ] || fail "no fallback said"
	run grep -s " $R/run/ramboot/ram " /proc/mounts
	[ "$status" -ne 0 ] || fail "the tmpfs is still mounted: $output"
	run find "$R/run/ramboot" -name 'x.img*'
	[ -z "$output" ] || fail "left behind: $output"
}
