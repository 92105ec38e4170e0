#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Signed manifests: ramboot keygen, ramboot sign (--key, --check), keys
# made by openssl, and what a signature line may and may not be.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BIN=${RAMBOOT_BIN:-$TOP/ramboot}

setup() {
	T=$BATS_TEST_TMPDIR
	head -c 300000 /dev/urandom >"$T/img"
	"$BIN" manifest "$T/img" >"$T/img.manifest"
	mkdir "$T/keys"
}

@test "keygen: a private key only its owner reads, a public key, the key id" {
	run "$BIN" keygen "$T/lab"
	assert_success
	assert_output --regexp "^$T/lab.pub: key id [0-9a-f]{16}$"
	[ "$(stat -c %a "$T/lab")" = 600 ]
	[ "$(stat -c %a "$T/lab.pub")" = 644 ]
	grep -q 'BEGIN PRIVATE KEY' "$T/lab"
	grep -q 'BEGIN PUBLIC KEY' "$T/lab.pub"
	# openssl reads both.
	openssl pkey -in "$T/lab" -noout
	openssl pkey -pubin -in "$T/lab.pub" -noout
	# An existing key is never replaced without --force.
	cp "$T/lab" "$T/lab.before"
	run "$BIN" keygen "$T/lab"
	assert_failure 1
	cmp "$T/lab" "$T/lab.before"
	run "$BIN" keygen --force "$T/lab"
	assert_success
	run cmp -s "$T/lab" "$T/lab.before"
	assert_failure
	# Nor through a symbolic link.
	ln -s "$T/victim" "$T/link"
	run "$BIN" keygen "$T/link"
	assert_failure 1
	[ ! -e "$T/victim" ]
}

@test "sign: signs in place, --check names the key; the manifest still loads" {
	"$BIN" keygen "$T/lab" >/dev/null
	cp "$T/lab.pub" "$T/keys/"
	run "$BIN" sign --key="$T/lab" "$T/img.manifest"
	assert_success
	[ "$(tail -n 1 "$T/img.manifest" | cut -d' ' -f1,2)" = "signature ed25519" ]
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_success
	assert_output --regexp "^$T/img.manifest: signed by lab \(key [0-9a-f]{16}\)$"
	# Signing again replaces the line: still one.
	"$BIN" sign --key="$T/lab" "$T/img.manifest"
	[ "$(grep -c '^signature ' "$T/img.manifest")" -eq 1 ]
	# The loader reads a signed manifest as any other.
	run "$BIN" load --progress=none --manifest="$T/img.manifest" "$T/img" "$T/copy"
	assert_success
	cmp "$T/img" "$T/copy"
}

@test "sign --check: unsigned, changed, another key, appended lines: exit 1, one line each" {
	"$BIN" keygen "$T/lab" >/dev/null
	"$BIN" keygen "$T/other" >/dev/null
	cp "$T/lab.pub" "$T/keys/"
	cp "$T/img.manifest" "$T/plain"
	run "$BIN" sign --check --keys="$T/keys" "$T/plain"
	assert_failure 1
	assert_output --partial "not signed"
	"$BIN" sign --key="$T/lab" "$T/img.manifest"
	sed 's/^size \([0-9]*\)/size 1\1/' "$T/img.manifest" >"$T/changed"
	run "$BIN" sign --check --keys="$T/keys" "$T/changed"
	assert_failure 1
	assert_output --partial "bad signature"
	cp "$T/plain" "$T/by-other"
	"$BIN" sign --key="$T/other" "$T/by-other"
	run "$BIN" sign --check --keys="$T/keys" "$T/by-other"
	assert_failure 1
	assert_output --partial "not trusted here"
	{ cat "$T/img.manifest"; echo "size 1"; } >"$T/appended"
	run "$BIN" sign --check --keys="$T/keys" "$T/appended"
	assert_failure 1
	assert_output --partial "not the last line"
	run "$BIN" sign --check --keys="$T/none" "$T/img.manifest"
	assert_failure 1
	assert_output --partial "no trusted keys"
}

@test "sign: keys made by openssl genpkey work; a public key or junk does not sign" {
	openssl genpkey -algorithm ed25519 -out "$T/k.pem" 2>/dev/null
	openssl pkey -in "$T/k.pem" -pubout -out "$T/keys/k.pub"
	run "$BIN" sign --key="$T/k.pem" "$T/img.manifest"
	assert_success
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_success
	assert_output --partial "signed by k "
	cp "$T/img.manifest" "$T/before"
	run "$BIN" sign --key="$T/keys/k.pub" "$T/img.manifest"
	assert_failure 1
	assert_output --partial "not an Ed25519 private key"
	openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out "$T/rsa.pem" 2>/dev/null
	run "$BIN" sign --key="$T/rsa.pem" "$T/img.manifest"
	assert_failure 1
	cmp "$T/before" "$T/img.manifest"
}

@test "sign: only a manifest is signed; usage errors exit 2" {
	"$BIN" keygen "$T/lab" >/dev/null
	echo "hello" >"$T/notes"
	run "$BIN" sign --key="$T/lab" "$T/notes"
	assert_failure 1
	assert_output --partial "not a manifest"
	[ "$(cat "$T/notes")" = hello ]
	run "$BIN" sign "$T/img.manifest"
	assert_failure 2
	run "$BIN" sign --key="$T/lab" --check "$T/img.manifest"
	assert_failure 2
	run "$BIN" sign --key="$T/lab"
	assert_failure 2
	run "$BIN" keygen
	assert_failure 2
	mkfifo "$T/fifo"
	run timeout 10 "$BIN" sign --check --keys="$T/keys" "$T/fifo"
	assert_failure 1
}
