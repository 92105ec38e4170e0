#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Signed manifests: ramboot keygen, ramboot sign (--key, --check), keys
# made by openssl, and what a signature line may and may not be.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/base

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

@test "sign: a key made as NAME.key is named NAME, as the guide's verdict says" {
	"$BIN" keygen "$T/lab.key" >/dev/null
	cp "$T/lab.key.pub" "$T/keys/"
	"$BIN" sign --key="$T/lab.key" "$T/img.manifest"
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_success
	assert_output --regexp "^$T/img.manifest: signed by lab \(key [0-9a-f]{16}\)$"
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

@test "keygen: a private key is never written to a name ending in .pub" {
	run --separate-stderr "$BIN" keygen "$T/keys/lab.pub"
	assert_failure 2
	[[ "$stderr" == *"$T/keys/lab.pub"*"public key"* ]]
	run ls -A "$T/keys"
	assert_output ""
}

@test "keygen: a refused KEY leaves no KEY.pub; a refused --force keeps the old KEY.pub" {
	# KEY there, KEY.pub not: nothing new, no .pub of a discarded key.
	echo "an old key" >"$T/a"
	run "$BIN" keygen "$T/a"
	assert_failure 1
	[ ! -e "$T/a.pub" ]
	[ ! -L "$T/a.pub" ]
	[ "$(cat "$T/a")" = "an old key" ]
	# --force with KEY a link (never written through): KEY.pub as it was.
	"$BIN" keygen "$T/b" >/dev/null
	cp "$T/b.pub" "$T/b.pub.before"
	rm "$T/b"
	ln -s "$T/elsewhere" "$T/b"
	run "$BIN" keygen --force "$T/b"
	assert_failure 1
	cmp "$T/b.pub" "$T/b.pub.before"
	[ ! -e "$T/elsewhere" ]
	run ls -A "$T"
	refute_output --partial ".tmp"
}

@test "keygen, sign --check, sign --check-key: a full stdout is an error" {
	# (bash -c: run's own output is what a redirection after run takes)
	run bash -c '"$1" keygen "$2" >/dev/full' _ "$BIN" "$T/lab"
	assert_failure 1
	assert_output --partial "write error"
	"$BIN" keygen "$T/k" >/dev/null
	cp "$T/k.pub" "$T/keys/"
	"$BIN" sign --key="$T/k" "$T/img.manifest"
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_success
	run bash -c '"$1" sign --check --keys="$2" "$3" >/dev/full' _ "$BIN" "$T/keys" "$T/img.manifest"
	assert_failure 1
	assert_output --partial "write error"
	run bash -c '"$1" sign --check-key "$2" >/dev/full' _ "$BIN" "$T/k.pub"
	assert_failure 1
}

@test "sign --check: a private key or a link among the trusted keys is not trusted" {
	"$BIN" keygen "$T/k" >/dev/null
	"$BIN" sign --key="$T/k" "$T/img.manifest"
	# The private key under a public key's name: refused, by name.
	cp "$T/k" "$T/keys/k.pub"
	run --separate-stderr "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_failure 1
	[[ "$stderr" == *"$T/keys/k.pub: a private key"* ]]
	# A link to the right public key: not followed.
	rm "$T/keys/k.pub"
	ln -s "$T/k.pub" "$T/keys/k.pub"
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_failure 1
	rm "$T/keys/k.pub"
	cp "$T/k.pub" "$T/keys/k.pub"
	run "$BIN" sign --check --keys="$T/keys" "$T/img.manifest"
	assert_success
}

@test "sign --check-key: public keys pass; a private key, a link, junk and a FIFO do not" {
	"$BIN" keygen "$T/k" >/dev/null
	openssl genpkey -algorithm ed25519 -out "$T/o.pem" 2>/dev/null
	openssl pkey -in "$T/o.pem" -pubout -out "$T/o.pub"
	run "$BIN" sign --check-key "$T/k.pub" "$T/o.pub"
	assert_success
	assert_line --regexp "^$T/k.pub: Ed25519 public key, key id [0-9a-f]{16}$"
	run --separate-stderr "$BIN" sign --check-key "$T/k"
	assert_failure 1
	[[ "$stderr" == *"$T/k: a PRIVATE key"* ]]
	run "$BIN" sign --check-key "$T/o.pem"
	assert_failure 1
	# A public key with the private key after it, or with anything else
	# around it: the file goes to every client as it is.
	cat "$T/k.pub" "$T/k" >"$T/both.pub"
	run --separate-stderr "$BIN" sign --check-key "$T/both.pub"
	assert_failure 1
	[[ "$stderr" == *"a PRIVATE key"* ]]
	{ cat "$T/k.pub"; echo "c2VjcmV0"; } >"$T/tail.pub"
	run "$BIN" sign --check-key "$T/tail.pub"
	assert_failure 1
	ln -s "$T/k.pub" "$T/link.pub"
	run --separate-stderr "$BIN" sign --check-key "$T/link.pub"
	assert_failure 1
	[[ "$stderr" == *"symbolic link"* ]]
	echo junk >"$T/j.pub"
	run "$BIN" sign --check-key "$T/j.pub"
	assert_failure 1
	mkfifo "$T/f.pub"
	run timeout 10 "$BIN" sign --check-key "$T/f.pub"
	assert_failure 1
	# One bad file fails the lot, the good ones still said.
	run "$BIN" sign --check-key "$T/k.pub" "$T/k"
	assert_failure 1
	assert_line --partial "$T/k.pub: Ed25519 public key"
	chmod 666 "$T/o.pub"
	run --separate-stderr "$BIN" sign --check-key "$T/o.pub"
	assert_success
	[[ "$stderr" == *"world-writable"* ]]
}

@test "keygen: refuses to write a private key where LTSP clients read it, warns under /etc and /srv" {
	local R=$T/root d
	for d in etc/ltsp/ramboot/keys srv/ltsp srv/tftp etc/ramboot srv/keys root/ramboot; do
		mkdir -p "$R/$d"
	done
	for d in etc/ltsp/ramboot/keys srv/ltsp srv/tftp; do
		RAMBOOT_ROOT=$R run --separate-stderr "$BIN" keygen "$R/$d/lab"
		assert_failure 2
		[[ $stderr == *"goes to every LTSP client"* ]] || fail "$d: $stderr"
		[ ! -e "$R/$d/lab" ] && [ ! -e "$R/$d/lab.pub" ] || fail "$d: a key was written"
	done
	RAMBOOT_ROOT=$R run --separate-stderr "$BIN" keygen "$R/etc/ramboot/lab"
	assert_success
	[[ $stderr == *"warning: $R/etc/ramboot/lab: a private key under /etc ends up in a chrootless LTSP image"* ]] || fail "$stderr"
	RAMBOOT_ROOT=$R run --separate-stderr "$BIN" keygen "$R/srv/keys/lab"
	assert_success
	[[ $stderr == *"/srv is what an LTSP server serves"* ]] || fail "$stderr"
	RAMBOOT_ROOT=$R run --separate-stderr "$BIN" keygen "$R/root/ramboot/lab"
	assert_success
	[ -z "$stderr" ]
	# through a relative name and a link to the directory as well
	ln -s "$R/etc/ltsp/ramboot/keys" "$T/innocent"
	cd "$T"
	RAMBOOT_ROOT=$R run --separate-stderr "$BIN" keygen innocent/lab2
	assert_failure 2
	[ ! -e "$R/etc/ltsp/ramboot/keys/lab2" ]
}
