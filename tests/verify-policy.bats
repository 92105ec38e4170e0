#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot.verify= in `ramboot boot`, against fixture trees as in
# boot-cmd.bats: with trusted keys in the initrd (etc/ramboot/keys under
# RAMBOOT_ROOT) a copy boots only from a manifest they signed; hash wants
# a manifest or ramboot.sha256=; off reads none; a policy that does not
# parse is a fallback. Copies need root (a tmpfs is mounted).

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/bootroot

setup() {
	bootroot_init 8000000
	K=$BATS_TEST_TMPDIR/keys
	mkdir -p "$K"
	IMG=$R/root/images/x.img
	make_sqfs "$IMG" 200000
	"$BIN" keygen "$K/lab" >/dev/null
	"$BIN" keygen "$K/other" >/dev/null
}

teardown() {
	ram_umount
}

trust() { # key name: its public key into the initrd
	mkdir -p "$R/etc/ramboot/keys"
	cp "$K/$1.pub" "$R/etc/ramboot/keys/"
}

# rb SETTINGS: `ramboot boot` with SETTINGS as its kernel command line.
rb() {
	echo "$*" >"$R/proc/cmdline"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$BIN" boot
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (mount)"
}

no_copy() {
	assert_output ""
	[ "$(report mode_done)" = off ]
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then false; fi
	[ ! -e "$R/run/ramboot/ram" ] || [ -z "$(ls -A "$R/run/ramboot/ram")" ]
}

@test "verify: keys in the initrd and a manifest they signed (root): the copy boots, the report names the key" {
	need_root
	trust lab
	"$BIN" manifest --sign="$K/lab" -o "$IMG.manifest" "$IMG"
	rb ramboot=ram ltsp.image=images/x.img
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	[ "$(report verify)" = signed ]
	[[ "$(report signed_by)" =~ ^lab\ [0-9a-f]{16}$ ]]
	[ "$(report hash)" = ok ]
	# A version 2 manifest: checked chunk by chunk.
	[ "$(report chunks)" -ge 1 ]
	[ "$(report chunks_retried)" = 0 ]
}

@test "verify: keys in the initrd, an unsigned manifest: fallback, nothing copied" {
	trust lab
	"$BIN" manifest -o "$IMG.manifest" "$IMG"
	rb ramboot=ram ltsp.image=images/x.img
	assert_success
	no_copy
	[ "$(report fallback)" = "not signed" ]
	[[ "$(report error)" == *"not signed"* ]]
}

@test "verify: signed by a key the initrd does not trust, or changed after signing: fallback" {
	trust lab
	"$BIN" manifest --sign="$K/other" -o "$IMG.manifest" "$IMG"
	rb ramboot=ram ltsp.image=images/x.img
	no_copy
	[ "$(report fallback)" = "not signed" ]
	[[ "$(report error)" == *"not trusted"* ]]
	"$BIN" manifest --sign="$K/lab" -o "$IMG.manifest" "$IMG"
	sed -i 's/^compression .*/compression zstd/' "$IMG.manifest"
	rb ramboot=ram ltsp.image=images/x.img
	no_copy
	[[ "$(report error)" == *"bad signature"* ]]
}

@test "verify: keys and no manifest: fallback; ramboot.sha256= does not stand in for a signature" {
	trust lab
	rb ramboot=ram ltsp.image=images/x.img "ramboot.sha256=$(sha256sum "$IMG" | cut -d' ' -f1)"
	no_copy
	[ "$(report fallback)" = "not signed" ]
	rb ramboot=lazy ltsp.image=images/x.img
	no_copy
	[ "$(report fallback)" = "not signed" ]
}

@test "verify: ramboot.verify=signed without keys: fallback, the copy is never unsigned" {
	"$BIN" manifest --sign="$K/lab" -o "$IMG.manifest" "$IMG"
	rb ramboot=ram ltsp.image=images/x.img ramboot.verify=signed
	no_copy
	[ "$(report fallback)" = "not signed" ]
	[[ "$(report error)" == *"no trusted keys"* ]]
}

@test "verify: ramboot.verify=hash with neither manifest nor sha256: fallback" {
	rb ramboot=ram ltsp.image=images/x.img ramboot.verify=hash
	no_copy
	[ "$(report fallback)" = "no verification" ]
}

@test "verify: a policy that does not parse is a fallback, not 'off'" {
	rb ramboot=ram ltsp.image=images/x.img ramboot.verify=sigend
	no_copy
	[ "$(report fallback)" = "verification unusable" ]
	echo "RAMBOOT_VERIFY=maybe" >"$R/etc/ramboot.conf"
	rb ramboot=ram ltsp.image=images/x.img
	no_copy
	[ "$(report fallback)" = "verification unusable" ]
}

@test "verify: ramboot.verify=off (root): a manifest that does not match is not read; no keys asked" {
	need_root
	trust lab
	"$BIN" manifest -o "$IMG.manifest" "$IMG"
	sed -i 's/^size .*/size 1/' "$IMG.manifest"
	rb ramboot=ram ltsp.image=images/x.img ramboot.verify=off
	assert_success
	assert_output "RAMBOOT_IMAGE=$R/run/ramboot/ram/x.img"
	[ "$(report verify)" = off ]
	[ "$(report hash)" = none ]
}

@test "verify: auto without keys (root): the hash of a manifest, as before; report verify=hash" {
	need_root
	"$BIN" manifest -o "$IMG.manifest" "$IMG"
	rb ramboot=ram ltsp.image=images/x.img
	assert_success
	[ "$(report verify)" = hash ]
	[ "$(report signed_by)" = "" ]
	[ "$(report hash)" = ok ]
}
