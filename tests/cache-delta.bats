#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The binary delta of a cache refresh: `ramboot manifest|publish
# --delta-from` (and publish --delta) write a zstd delta from an older
# image and name it in the manifest; `ramboot cache refresh` applies it to
# the active slot when that slot holds the older image, verifies the
# result against the manifest and builds the index from it. Every way the
# delta can fail (missing, altered, from another image, rebuilding
# something else, a mapping that faults, a kill) ends in the chunks, or
# in the old slot and state: never in an unverified slot.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/fault
load helpers/cache

setup_file() {
	local d=$BATS_FILE_TMPDIR
	faultinj_build
	cache_images "$d"
	"$RAMBOOT_BIN" manifest --cindex -o "$d/a.manifest" "$d/a.img"
	"$RAMBOOT_BIN" manifest --cindex --delta-from="$d/a.img" -o "$d/b.manifest" "$d/b.img"
}

setup() {
	require_loader
	cache_test_vars
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	"$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/a.manifest" "$D/a.img" \
		>/dev/null
}

# mkey NAME FILE: the value of the manifest key NAME in FILE
mkey() {
	sed -n "s/^$1 //p" "$2"
}

sha() {
	sha256sum <"$1" | cut -d' ' -f1
}

# refresh_b [ARGS...]: the refresh to b.img, its manifest from $M (default
# the one with the delta), with ARGS before IMAGE
refresh_b() {
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="${M:-$D/b.manifest}" "$@" "$D/b.img"
}

# assert_b: slot b active, generation 2, holding b.img, its index b.img's
assert_b() {
	cmp "$X/b" "$D/b.img"
	cmp "$X/b.cindex" "$D/b.img.cindex"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key state)" = ok ]
	[ "$(key active)" = b ]
	[ "$(key generation)" = 2 ]
	[ "$(key sha256)" = "$(sha "$D/b.img")" ]
}

# assert_a: the old state, untouched
assert_a() {
	cmp "$X/a" "$D/a.img"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key active)" = a ]
	[ "$(key generation)" = 1 ]
}

# hand_manifest OUT DELTA: b.img's manifest naming DELTA (a file in $D) as
# a delta from a.img, with DELTA's own SHA-256
hand_manifest() {
	grep -v '^delta' "$D/b.manifest" >"$1"
	printf 'delta %s\ndelta-from %s\ndelta-sha256 %s\n' "$2" "$(sha "$D/a.img")" \
		"$(sha "$D/$2")" >>"$1"
}

@test "manifest --delta-from: IMAGE.delta written and named, a zstd frame of the image's size" {
	[ -s "$D/b.img.delta" ]
	[ "$(mkey delta "$D/b.manifest")" = b.img.delta ]
	[ "$(mkey delta-from "$D/b.manifest")" = "$(sha "$D/a.img")" ]
	[ "$(mkey delta-sha256 "$D/b.manifest")" = "$(sha "$D/b.img.delta")" ]
	# zstd itself rebuilds b.img from a.img and the delta
	zstd -q -d -c --long=31 --patch-from="$D/a.img" "$D/b.img.delta" | cmp - "$D/b.img"
	# far smaller than the image
	[ "$(stat -c %s "$D/b.img.delta")" -lt $(($(stat -c %s "$D/b.img") / 4)) ]
}

@test "cache refresh: the delta is applied to the active slot; only it is read; the index is built" {
	run faultinj_run 'pread,read:path=b.img;pread,read:path=*.delta' "$RAMBOOT_BIN" cache \
		refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key delta)" = applied ]
	[ "$(key index)" = slot ]
	[ "$(key bytes_delta)" = "$(stat -c %s "$D/b.img.delta")" ]
	[ "$(key bytes_network)" = "$(key bytes_delta)" ]
	[ "$(key chunks_network)" = 0 ]
	# neither the image nor its index was read; the shim saw the delta read
	assert_faultinj_loaded ramboot
	assert_fault_fired 'rule=2 call=p?read'
	[ "$(faultinj_count 'rule=1 call=p?read')" -eq 0 ]
	assert_b
	# and the next refresh finds it up to date
	refresh_b
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
}

@test "cache refresh --no-delta: the chunks, the delta never opened" {
	run faultinj_run 'open:path=*.delta;open:path=*/b.manifest' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --no-delta --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_delta)" = 0 ]
	[ -z "$(key delta)" ]
	[ "$(key chunks_network)" -gt 0 ]
	assert_faultinj_loaded ramboot
	assert_fault_fired 'rule=2 call=open'
	[ "$(faultinj_count 'path=.*delta')" -eq 0 ]
	assert_b
}

@test "cache refresh: a delta from another image is not opened; the chunks serve" {
	# the cache holds b2.img, not a.img
	rm -rf "$C"
	mkdir "$C"
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	"$RAMBOOT_BIN" manifest -o "$T/b2.manifest" "$D/b2.img"
	"$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$T/b2.manifest" "$D/b2.img" \
		>/dev/null
	run faultinj_run 'open:path=*.delta;open:path=*/b.manifest' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[[ "$(key delta)" == "not used: made from another image than slot a's" ]]
	assert_faultinj_loaded ramboot
	assert_fault_fired 'rule=2 call=open'
	[ "$(faultinj_count 'path=.*delta')" -eq 0 ]
	[ "$(key bytes_delta)" = 0 ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: a delta is never applied to a slot marked bad; the chunks serve" {
	local body
	body=$(sed '/^check /d' "$X/state" | sed 's/^refresh /bad a 1718000500\nrefresh /')
	printf '%s\ncheck %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$X/state"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$(key bad)" != no ]
	run faultinj_run 'open:path=*.delta;open:path=*/b.manifest' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key delta)" = "not used: slot a is marked bad" ]
	[ "$(key bytes_delta)" = 0 ]
	[ "$(key chunks_network)" -gt 0 ]
	assert_faultinj_loaded ramboot
	assert_fault_fired 'rule=2 call=open'
	[ "$(faultinj_count 'path=.*delta')" -eq 0 ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: a delta missing, altered or larger than the image: one warning, the chunks" {
	local bad
	# missing
	refresh_b --delta="$T/none.delta"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning: delta: $T/none.delta: No such file or directory; the image's chunks instead"* ]]
	[ "$(grep -c warning <<<"$stderr")" -eq 1 ]
	[ "$(key chunks_network)" -gt 0 ]
	assert_b
	# altered: one byte in the middle
	bad=$T/bad.delta
	for at in 10 $(($(stat -c %s "$D/b.img.delta") / 2)); do
		rm -rf "$C" && setup
		cp "$D/b.img.delta" "$bad"
		printf '\x01' | dd of="$bad" bs=1 seek="$at" conv=notrunc status=none
		refresh_b --delta="$bad"
		[ "$status" -eq 0 ]
		[[ "$(key delta)" == "not used: "* ]]
		[[ "$stderr" == *"warning: delta: $bad: "*"; the image's chunks instead"* ]]
		assert_b
	done
	# cut short, and one byte too many
	for n in half more; do
		rm -rf "$C" && setup
		if [ $n = half ]; then
			head -c $(($(stat -c %s "$D/b.img.delta") / 2)) "$D/b.img.delta" >"$bad"
		else
			{ cat "$D/b.img.delta"; printf x; } >"$bad"
		fi
		refresh_b --delta="$bad"
		[ "$status" -eq 0 ]
		[[ "$(key delta)" == "not used: "* ]]
		assert_b
	done
	# given, under a manifest that names none
	rm -rf "$C" && setup
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" --delta="$D/b.img.delta" --no-delta "$D/b.img"
	[ "$status" -eq 2 ]
	"$RAMBOOT_BIN" manifest --cindex -o "$T/plain.manifest" "$D/b.img"
	M=$T/plain.manifest refresh_b --delta="$D/b.img.delta"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"warning: delta: $D/b.img.delta: the manifest names no delta; the image's chunks instead"* ]]
	assert_b
	# larger than the image: not read at all
	rm -rf "$C" && setup
	head -c $(($(stat -c %s "$D/b.img") + 1)) /dev/zero >"$D/huge.delta"
	hand_manifest "$T/huge.manifest" huge.delta
	M=$T/huge.manifest refresh_b
	[ "$status" -eq 0 ]
	[[ "$(key delta)" == *"larger than the image" ]]
	[ "$(key bytes_delta)" = 0 ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: a delta that rebuilds another image fails verification; the chunks serve" {
	# a.img -> b2.img, named by b.img's manifest with its true SHA-256:
	# it decodes, and the slot is not b.img
	"$RAMBOOT_BIN" manifest --cindex --delta-from="$D/a.img" -o "$T/b2.manifest" "$D/b2.img"
	cp "$D/b2.img.delta" "$D/wrong.delta"
	hand_manifest "$T/wrong.manifest" wrong.delta
	M=$T/wrong.manifest refresh_b
	[ "$status" -eq 0 ]
	[[ "$(key delta)" == "not used: slot b: verification failed"* ]]
	[ "$(key chunks_network)" -gt 0 ]
	assert_b
}

@test "cache refresh: a mapping that faults (SIGBUS) or fails: the chunks; the result verifies" {
	# the active slot cut to half its size under its mapping
	run --separate-stderr faultinj_run 'mmap:path=a:cut' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(faultinj_count 'call=mmap .*action=cut')" -eq 1 ]
	[[ "$(key delta)" == *"SIGBUS"* ]]
	assert_b
	# mmap fails
	rm -rf "$C" && setup
	run --separate-stderr faultinj_run 'mmap:path=b:errno=ENOMEM' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[[ "$(key delta)" == *"mmap: Cannot allocate memory" ]]
	assert_b
}

@test "cache refresh: killed while the delta is applied or checked, the old slot and state stay" {
	local rule
	for rule in 'mmap:path=b:signal=KILL' 'read:path=*.delta:signal=KILL' \
		'fsync:path=b:signal=KILL'; do
		run faultinj_run "$rule" "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
			--manifest="$D/b.manifest" "$D/b.img"
		[ "$status" -eq 137 ] || fail "$rule: status $status"
		assert_a
		rm -f "$(faultinj_log)"
	done
	refresh_b
	[ "$status" -eq 0 ]
	[ "$(key delta)" = applied ]
	assert_b
}

@test "cache refresh: a signed manifest covers the delta's hash; an altered hash is refused" {
	mkdir "$T/keys"
	"$RAMBOOT_BIN" keygen "$T/k" >/dev/null
	cp "$T/k.pub" "$T/keys/"
	"$RAMBOOT_BIN" manifest --cindex --delta-from="$D/a.img" --sign="$T/k" -o "$T/s.manifest" \
		"$D/b.img"
	sed "s/^delta-sha256 .*/delta-sha256 $(sha "$D/a.img")/" "$T/s.manifest" >"$T/t.manifest"
	M=$T/t.manifest refresh_b --signed --keys="$T/keys"
	[ "$status" -eq 1 ]
	assert_a
	M=$T/s.manifest refresh_b --signed --keys="$T/keys"
	[ "$status" -eq 0 ]
	[ "$(key delta)" = applied ]
	assert_b
}

@test "publish --delta: from the previous manifest's image; kept while a manifest names it" {
	local S=$T/srv
	mkdir "$S"
	cp "$D/a.img" "$S/x.img"
	run --separate-stderr "$RAMBOOT_BIN" publish --cindex --content-addressed --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"none to make a delta from: no delta"* ]]
	run ! grep -q '^delta' "$S/x.img.manifest"
	# a rebuild: IMAGE replaced, the old bytes under their content address
	cp "$D/b.img" "$S/x.img.new" && mv "$S/x.img.new" "$S/x.img"
	run "$RAMBOOT_BIN" publish --cindex --content-addressed --delta "$S/x.img"
	[ "$status" -eq 0 ]
	d1=$(mkey delta "$S/x.img.manifest")
	[[ "$d1" == x.img.delta-* ]]
	[ "$(mkey delta-from "$S/x.img.manifest")" = "$(sha "$D/a.img")" ]
	[[ "$output" == *"$d1: delta from sha256 $(sha "$D/a.img")"* ]]
	# a client cache holding a.img refreshes from it
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$S/x.img.manifest" \
		"$S/x.img"
	[ "$status" -eq 0 ]
	[ "$(key delta)" = applied ]
	cmp "$X/b" "$D/b.img"
	# one more rebuild: the first delta stays (the previous manifest
	# names it), the one after removes it
	cp "$D/b2.img" "$S/x.img.new" && mv "$S/x.img.new" "$S/x.img"
	run "$RAMBOOT_BIN" publish --cindex --content-addressed --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[ -e "$S/$d1" ]
	[ "$(mkey delta-from "$S/x.img.manifest")" = "$(sha "$D/b.img")" ]
	cp "$D/a.img" "$S/x.img.new" && mv "$S/x.img.new" "$S/x.img"
	run "$RAMBOOT_BIN" publish --cindex --content-addressed --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[ ! -e "$S/$d1" ]
	[[ "$output" == *"removed $S/$d1"* ]]
}

@test "publish --delta: LTSP's backup IMAGE.old serves; a wrong or missing old image: no delta, published" {
	local S=$T/srv
	mkdir "$S"
	cp "$D/a.img" "$S/x.img"
	"$RAMBOOT_BIN" publish --cindex "$S/x.img" >/dev/null
	# ltsp image: IMAGE to IMAGE.old, the new one at IMAGE
	mv "$S/x.img" "$S/x.img.old"
	cp "$D/b.img" "$S/x.img"
	run "$RAMBOOT_BIN" publish --cindex --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[ "$(mkey delta-from "$S/x.img.manifest")" = "$(sha "$D/a.img")" ]
	# IMAGE.old that is not what the previous manifest describes
	cp "$D/b2.img" "$S/x.img.old"
	cp "$D/b2.img" "$S/x.img"
	run --separate-stderr "$RAMBOOT_BIN" publish --cindex --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"not the image the previous manifest describes: no delta"* ]]
	run ! grep -q '^delta' "$S/x.img.manifest"
	# none at all
	rm "$S/x.img.old"
	cp "$D/a.img" "$S/x.img"
	run --separate-stderr "$RAMBOOT_BIN" publish --cindex --delta "$S/x.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"is gone"*"no delta"* ]]
	run ! grep -q '^delta' "$S/x.img.manifest"
}

@test "manifest --delta-from: usage and errors; a delta of more than half the image is not made" {
	run "$RAMBOOT_BIN" manifest --chunk-size=0 --delta-from="$D/a.img" "$D/b.img"
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" publish --delta --delta-from="$D/a.img" "$D/b.img"
	[ "$status" -eq 2 ]
	cp "$D/b.img" "$T/b.img"
	run --separate-stderr "$RAMBOOT_BIN" manifest --delta-from="$T/none.img" -o "$T/m" "$T/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--delta-from $T/none.img: No such file or directory"* ]]
	[ ! -e "$T/m" ]
	[ ! -e "$T/b.img.delta" ]
	# the older image cut short under its mapping (SIGBUS): an error,
	# nothing written
	cp "$D/a.img" "$T/a.img"
	run --separate-stderr faultinj_run 'mmap:path=a.img:cut' "$RAMBOOT_BIN" manifest \
		--delta-from="$T/a.img" -o "$T/m" "$T/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--delta-from $T/a.img: a read or write of the mapped images failed (SIGBUS"* ]]
	[ ! -e "$T/m" ]
	[ ! -e "$T/b.img.delta" ]
	# compressed: refused, as --cindex
	zstd -q -c "$D/b.img" >"$T/b.zst"
	run --separate-stderr "$RAMBOOT_BIN" manifest --delta-from="$D/a.img" -o "$T/m" "$T/b.zst"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"needs a raw image"* ]]
	# from random bytes: the delta would be the image itself
	head -c "$(stat -c %s "$D/b.img")" /dev/urandom >"$T/r.img"
	head -c 100000 /dev/urandom >"$T/old.img"
	run --separate-stderr "$RAMBOOT_BIN" manifest --delta-from="$T/old.img" -o "$T/m" "$T/r.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"larger than"*"no delta"* ]]
	run ! grep -q '^delta' "$T/m"
	[ ! -e "$T/r.img.delta" ]
	# the static build makes none (the server's ramboot does)
	# make check builds it before the tests: missing, it is a failure
	[ -x "$TOP/static/ramboot" ] || fail "no static build: $TOP/static/ramboot (make static)"
	run --separate-stderr "$TOP/static/ramboot" manifest --delta-from="$D/a.img" -o "$T/m" "$T/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"deltas are made by the host build"* ]]
}
