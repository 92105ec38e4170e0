#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot boot --explain`: the dry run. Every setting with its source,
# the image, manifest, keys, verification policy and memory verdict; and
# nothing copied, mounted or written (no run/ramboot, no kmsg record).

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/bootroot

# MemFree differs from MemAvailable: the verdict reads MemAvailable.
setup() {
	bootroot_init 8000000 8100000 16000000
	mkdir -p "$R/dev"
	: >"$R/dev/kmsg"
	head -c 3000000 /dev/zero >"$R/root/images/x86_64.img"
}

# rb ARGS: ramboot ARGS (the command too) in the fixture root.
rb() {
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$@"
}

nothing_written() {
	[ ! -e "$R/run" ] || fail "$R/run was made: $(find "$R/run")"
	[ ! -s "$R/dev/kmsg" ] || fail "kmsg written: $(cat "$R/dev/kmsg")"
	run grep -c " $R" /proc/mounts
	assert_output 0
}

@test "explain: every setting with its source (command line, ltsp.conf environment, ramboot.conf, default)" {
	echo "ramboot=ram ramboot.verify=off ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	echo 'RAMBOOT_TARGET=zram' >"$R/etc/ramboot.conf"
	rb RAMBOOT_SWAP=zram RAMBOOT_MINFREE=1M "$BIN" boot --explain
	assert_success
	assert_line --regexp '^  ramboot +ram +command line$'
	assert_line --regexp '^  ramboot\.verify +off +command line$'
	assert_line --regexp '^  ramboot\.swap +zram +environment \(ltsp\.conf\)$'
	assert_line --regexp '^  ramboot\.target +zram +ramboot\.conf$'
	assert_line --regexp '^  ramboot\.timeout +30s +default$'
	assert_line "image: $R/root/images/x86_64.img (2.9 MiB)"
	assert_line 'manifest: none'
	assert_line 'verification: off'
	assert_line 'memory: fits (image 2.9 MiB, MemAvailable 7.6 GiB, reserve 1.0 MiB)'
	nothing_written
}

@test "explain: the memory verdict reads MemAvailable, with the reserve" {
	meminfo 100000 200000 200000
	echo "ramboot=ram ramboot.verify=off ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line 'memory: would fall back: not enough memory (image 2.9 MiB, MemAvailable 97.7 MiB, reserve 256.0 MiB)'
	nothing_written
}

@test "explain: a fallback of the verification policy is said, nothing done" {
	echo "ramboot=ram ramboot.verify=hash ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line 'verification: would fall back: no verification (ramboot.verify=hash and neither a manifest nor ramboot.sha256=)'
	"$BIN" manifest -o "$R/root/images/x86_64.img.manifest" "$R/root/images/x86_64.img"
	rb "$BIN" boot --explain
	assert_success
	assert_line "manifest: $R/root/images/x86_64.img.manifest"
	assert_line "verification: hash (the manifest's SHA-256)"
	nothing_written
}

@test "explain: a missing image, and usage errors" {
	echo "ramboot=ram ltsp.image=images/nope.img" >"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line --partial "images/nope.img: No such file or directory (would fall back: image not found)"
	nothing_written
	rb "$BIN" boot --explain --query
	assert_failure 2
	rb "$BIN" boot --explain --json
	assert_failure 2
}

@test "explain: a setting left alone shows its default value" {
	echo "ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line --regexp '^  ramboot +off +default$'
	assert_line --regexp '^  ramboot\.decompress +auto +default$'
	assert_line --regexp '^  ramboot\.target +tmpfs +default$'
	assert_line --regexp '^  ramboot\.minfree +256M +default$'
	assert_line --regexp '^  ramboot\.verify +auto +default$'
	assert_line --regexp '^  ramboot\.timeout +30s +default$'
	assert_line --regexp '^  ramboot\.swap +off +default$'
	assert_line --regexp '^  ramboot\.swap\.size +min\(ram, 8G\) +default$'
	assert_line --regexp '^  ramboot\.swap\.algorithm +zstd,lzo-rle,lzo,lz4 +default$'
	assert_line --regexp '^  ramboot\.swap\.priority +100 +default$'
	assert_line --regexp '^  ramboot\.cache\.offline +off +default$'
	refute_line --regexp ' - +default$'
	refute_line --partial 'network memory tier'
	nothing_written
}

@test "explain: ramboot.swap.net= checked as the boot checks it, sub-options included" {
	echo "ramboot.swap.net=10.0.0.1:10810,export=lab,size=1.5G ltsp.image=images/x86_64.img" \
		>"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line --regexp '^  ramboot\.swap +zram \(swap\.net\) +default$'
	assert_line 'network memory tier: 10.0.0.1:10810, export lab, size 1.5 GiB'
	echo "ramboot.swap.net=10.0.0.1,sise=1G ltsp.image=images/x86_64.img" >"$R/proc/cmdline"
	rb "$BIN" boot --explain
	assert_success
	assert_line "network memory tier: would be zram alone: ramboot.swap.net=10.0.0.1,sise=1G: 'sise=1G': not understood"
	nothing_written
}
