#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot cache init|refresh|status: a cache in a directory (no root
# needed), in an image file and on a loop device (root). A refresh from
# nothing reads the whole image; a refresh to a rebuilt squashfs reads a
# small part of it and copies the rest from the active slot; the same
# image reads nothing. A kill at every step, ENOSPC, EIO, a verification
# failure leave the old active slot and the old state; a flipped byte in
# the active slot is read from the image instead; a corrupt state is
# reported, never trusted; symbolic links are refused.

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
	"$RAMBOOT_BIN" manifest "$d/a.img" >"$d/a.manifest"
	"$RAMBOOT_BIN" manifest "$d/b.img" >"$d/b.manifest"
	# the same size as b.img, another byte: a manifest b.img does not match
	"$RAMBOOT_BIN" manifest "$d/b2.img" >"$d/b2.manifest"
}

setup() {
	require_loader
	cache_test_vars
	LOOPS=()
	MNTS=()
}

# Real-kernel leftovers go even when a test failed.
teardown() {
	local m l
	for m in "${MNTS[@]}"; do umount "$m" 2>/dev/null || true; done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
}

# refresh_a: the cache $C holds a.img (slot a active, generation 1).
refresh_a() {
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	"$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/a.manifest" "$D/a.img" >/dev/null
}

# assert_state_a: the state is still a.img's, in slot a, which verifies.
assert_state_a() {
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key state)" = ok ]
	[ "$(key active)" = a ]
	[ "$(key generation)" = 1 ]
	[ "$(key sha256)" = "$(sha256sum <"$D/a.img" | cut -d' ' -f1)" ]
	cmp "$X/a" "$D/a.img"
}

@test "cache refresh: from nothing the whole image is read; the slot is the image; status shows it" {
	run "$RAMBOOT_BIN" cache init "$C"
	[ "$status" -eq 0 ]
	[ -f "$C/ramboot-cache" ]
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key result)" = refreshed ]
	[ "$(key slot)" = a ]
	[ "$(key bytes_network)" = "$(stat -c %s "$D/a.img")" ]
	[ "$(key bytes_local)" = 0 ]
	cmp "$X/a" "$D/a.img"
	cmp "$X/a.manifest" "$D/a.manifest"
	run "$RAMBOOT_BIN" cache index "$D/a.img"
	[ "$output" = "$(cat "$X/a.cindex")" ]
	assert_state_a
	[ "$(key bytes_network)" = "$(stat -c %s "$D/a.img")" ]
	[ "$(key interrupted)" = no ]
	run "$RAMBOOT_BIN" cache status --cache="$C" --json
	[ "$status" -eq 0 ]
	python3 -c 'import json,sys; d=json.load(sys.stdin); i=d["images"][0]; assert i["name"]=="x" and i["state"]=="ok" and i["active"]=="a" and i["generation"]==1, d' <<<"$output"
}

@test "cache refresh: a rebuilt squashfs reads a small part of the image, copies the rest, verifies" {
	local size net loc
	refresh_a
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	size=$(stat -c %s "$D/b.img")
	net=$(key bytes_network)
	loc=$(key bytes_local)
	echo "# b.img: $size bytes, $net from the image, $loc local" >&3
	[ "$(key slot)" = b ]
	[ "$(key generation)" = 2 ]
	[ $((net + loc)) -eq "$size" ]
	# 260 KB of the tree changed (random bytes): a fraction of the image is read
	[ "$net" -lt $((size / 3)) ]
	[ "$(key chunks_bad)" = 0 ]
	cmp "$X/b" "$D/b.img"
	cmp "$X/a" "$D/a.img"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$(key active)" = b ]
	[ "$(key bytes_network)" = "$net" ]
	[ "$(key bytes_local)" = "$loc" ]
}

# fixed_index IMAGE: an index of IMAGE by another chunker than this
# ramboot's, fixed 64 KiB chunks (an older ramboot's index shares as few
# chunks with this one's)
fixed_index() {
	python3 - "$1" <<'PY'
import hashlib, sys
d = open(sys.argv[1], "rb").read()
n = (len(d) + 65535) // 65536
print("ramboot-cindex 1\nchunker fixed-64k 16384 65536 262144\nsize %d\nchunks %d" % (len(d), n))
for o in range(0, len(d), 65536):
    print("chunk %d %d %s" % (o, len(d[o:o + 65536]), hashlib.sha256(d[o:o + 65536]).hexdigest()))
PY
}

@test "cache refresh: an active slot indexed by another chunker is indexed again, its chunks copied" {
	local size net loc
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	fixed_index "$D/a.img" >"$T/a-fixed.cindex"
	fixed_index "$D/b.img" >"$T/b-fixed.cindex"
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --index="$T/a-fixed.cindex" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_reindexed)" = 0 ]
	# b.img with this ramboot's chunker: slot a is indexed again from
	# the cache, and most of b.img copied from it
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"slot a: its index was fixed-64k's, indexed again with gear-fastcdc-sqfs-zlib"* ]]
	size=$(stat -c %s "$D/b.img")
	net=$(key bytes_network)
	loc=$(key bytes_local)
	[ "$(key bytes_reindexed)" = "$(stat -c %s "$D/a.img")" ]
	[ $((net + loc)) -eq "$size" ]
	[ "$net" -lt $((size / 3)) ]
	cmp "$X/b" "$D/b.img"
	# the same chunker on both sides: nothing indexed again
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_reindexed)" = 0 ]
	[ "$(key bytes_local)" -gt $((size * 2 / 3)) ]
	# a new index of a chunker this ramboot does not have: the slot is
	# not read for nothing, and the refresh still completes
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --index="$T/b-fixed.cindex" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_reindexed)" = 0 ]
	[ "$(key slot)" = b ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: EIO while the active slot is indexed again: a warning, the chunks from the image" {
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	fixed_index "$D/a.img" >"$T/a-fixed.cindex"
	"$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --index="$T/a-fixed.cindex" "$D/a.img" >/dev/null
	run --separate-stderr faultinj_run 'read:path=a:errno=EIO' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"slot a: not indexed again: "* ]]
	[ "$(key bytes_reindexed)" = 0 ]
	[ "$(key slot)" = b ]
	cmp "$X/b" "$D/b.img"
	cmp "$X/a" "$D/a.img"
}

@test "cache refresh: the same image again reads nothing and changes nothing" {
	refresh_a
	cp "$X/state" "$T/state.before"
	run faultinj_run 'read,pread:path=a.img;read,pread:path=a.manifest' "$RAMBOOT_BIN" cache \
		refresh --cache="$C" --name=x --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
	[ "$(key bytes_network)" = 0 ]
	# the shim was there and saw the manifest read: its zero is a zero
	assert_faultinj_loaded ramboot
	assert_fault_fired 'rule=2 call=p?read'
	[ "$(faultinj_count 'rule=1 ')" -eq 0 ]
	cmp "$X/state" "$T/state.before"
	# without a manifest: the same index is the same image
	"$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$D/a.img"
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --index="$T/a.cindex" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
	cmp "$X/state" "$T/state.before"
}

@test "cache refresh: a flipped byte in the active slot: that chunk is read from the image; the result verifies" {
	refresh_a
	printf '\xff' | dd of="$X/a" bs=1 seek=3000000 conv=notrunc status=none
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key chunks_bad)" = 1 ]
	[[ "$stderr" == *"does not match its hash; read from the image"* ]]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: killed at every write step, the old slot and state stay; the next refresh completes" {
	local rule n
	refresh_a
	# fsyncs: 1 images/, 2 slot b, 3 and 4 b.cindex and the directory,
	# 5 and 6 b.manifest and the directory, 7 the state, 8 the directory
	# after the state's rename
	for rule in 'pwrite:path=b:nth=1:signal=KILL' 'pwrite:path=b:nth=20:signal=KILL' \
		'fsync:nth=1:signal=KILL' 'fsync:nth=2:signal=KILL' 'fsync:nth=3:signal=KILL' \
		'fsync:nth=4:signal=KILL' 'fsync:nth=5:signal=KILL' 'fsync:nth=6:signal=KILL' \
		'fsync:nth=7:signal=KILL'; do
		run faultinj_run "$rule" "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
			--manifest="$D/b.manifest" "$D/b.img"
		[ "$status" -eq 137 ] || fail "$rule: status $status"
		assert_state_a
		n=$(faultinj_count 'action=signal')
		[ "$n" -ge 1 ] || fail "$rule: did not fire"
		[ "$rule" = 'fsync:nth=1:signal=KILL' ] || [ "$(key interrupted)" != no ] ||
			fail "$rule: no interrupted refresh seen"
		rm -f "$(faultinj_log)"
	done
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	cmp "$X/b" "$D/b.img"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$(key active)" = b ]
	[ "$(key interrupted)" = no ]
}

@test "cache refresh: killed after the state's rename, the new state is whole" {
	refresh_a
	run faultinj_run 'fsync:nth=8:signal=KILL' "$RAMBOOT_BIN" cache refresh \
		--cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 137 ]
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key active)" = b ]
	[ "$(key generation)" = 2 ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: ENOSPC, EIO from the image, a failed read-back: the state is untouched, one error line" {
	refresh_a
	run --separate-stderr faultinj_run 'pwrite:path=b:after=1M:errno=ENOSPC' "$RAMBOOT_BIN" \
		cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"No space left on device"* ]]
	assert_state_a
	[ "$(stat -c %s "$X/b")" -eq 0 ]
	run --separate-stderr faultinj_run 'pread:path=b.img:nth=2:errno=EIO' "$RAMBOOT_BIN" \
		cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"Input/output error"* ]]
	assert_state_a
	run --separate-stderr faultinj_run 'fsync:path=b:errno=EIO' "$RAMBOOT_BIN" \
		cache refresh --cache="$C" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	assert_state_a
}

@test "cache refresh: EIO on the active slot: its chunks are read from the image" {
	refresh_a
	run faultinj_run 'pread:path=a:errno=EIO' "$RAMBOOT_BIN" cache refresh --cache="$C" \
		--name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_local)" = 0 ]
	cmp "$X/b" "$D/b.img"
}

@test "cache refresh: an image its manifest does not describe fails verification; the state is untouched" {
	refresh_a
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b2.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not the one its manifest describes"*"the state is untouched"* ]]
	assert_state_a
}

@test "cache refresh: --signed takes only a manifest signed by a trusted key" {
	refresh_a
	mkdir "$T/keys"
	"$RAMBOOT_BIN" keygen "$T/k" >/dev/null
	cp "$T/k.pub" "$T/keys/"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --signed \
		--keys="$T/keys" --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	assert_state_a
	cp "$D/b.manifest" "$T/b.manifest"
	"$RAMBOOT_BIN" sign --key="$T/k" "$T/b.manifest" >/dev/null
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --signed --keys="$T/keys" \
		--manifest="$T/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[[ "$(key signed_by)" == "k "* ]]
	cmp "$X/b.manifest" "$T/b.manifest"
}

@test "cache refresh: the signed index the manifest names is used, not computed; its hash checked" {
	local idx
	refresh_a
	mkdir "$T/srv" "$T/keys"
	cp "$D/b.img" "$T/srv/b.img"
	"$RAMBOOT_BIN" keygen "$T/k" >/dev/null
	cp "$T/k.pub" "$T/keys/"
	run "$RAMBOOT_BIN" publish --cindex --sign="$T/k" "$T/srv/b.img"
	[ "$status" -eq 0 ]
	idx=$(sed -n 's/^cindex //p' "$T/srv/b.img.manifest")
	[ -f "$T/srv/$idx" ]
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --signed --keys="$T/keys" \
		--manifest="$T/srv/b.img.manifest" "$T/srv/b.img"
	[ "$status" -eq 0 ]
	[ "$(key index)" = manifest ]
	[ "$(key bytes_indexed)" = 0 ]
	[ "$(key slot)" = b ]
	cmp "$X/b" "$D/b.img"
	# the slot's index is the server's, byte for byte
	cmp "$X/b.cindex" "$T/srv/$idx"
}

@test "cache refresh: a tampered or missing index the manifest names is refused, never recomputed" {
	local idx good last
	refresh_a
	mkdir "$T/srv"
	cp "$D/b.img" "$T/srv/b.img"
	run "$RAMBOOT_BIN" publish --cindex "$T/srv/b.img"
	[ "$status" -eq 0 ]
	idx=$T/srv/$(sed -n 's/^cindex //p' "$T/srv/b.img.manifest")
	good=$T/good.cindex
	cp "$idx" "$good"
	# one hex digit of the first chunk's hash changed: still a valid index
	last=$(sed -n '5s/.*\(.\)$/\1/p' "$idx")
	if [ "$last" = 0 ]; then sed -i '5s/.$/1/' "$idx"; else sed -i '5s/.$/0/' "$idx"; fi
	run "$RAMBOOT_BIN" cache diff "$idx" "$good"
	[ "$status" -eq 0 ]
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" "$T/srv/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"the index the manifest names"*"cindex-sha256"* ]] || fail "stderr: $stderr"
	assert_state_a
	# another image's valid index in its place: refused too
	"$RAMBOOT_BIN" cache index -o "$idx" "$D/a.img"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" "$T/srv/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cindex-sha256"* ]] || fail "stderr: $stderr"
	assert_state_a
	# missing
	rm "$idx"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" "$T/srv/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"the index the manifest names"*"No such file"* ]] || fail "stderr: $stderr"
	assert_state_a
	# --index: a file elsewhere, checked the same
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" --index="$T/nonexistent" "$T/srv/b.img"
	[ "$status" -eq 1 ]
	"$RAMBOOT_BIN" cache index -o "$T/a.cindex" "$D/a.img"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" --index="$T/a.cindex" "$T/srv/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"cindex-sha256"* ]] || fail "stderr: $stderr"
	assert_state_a
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/srv/b.img.manifest" --index="$good" "$T/srv/b.img"
	[ "$status" -eq 0 ]
	[ "$(key index)" = manifest ]
	cmp "$X/b" "$D/b.img"
	# a manifest without an index: --index is taken as it is
	run "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/a.manifest" --index="$T/a.cindex" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key index)" = file ]
}

@test "cache status and refresh: a corrupt state is reported, never trusted; --force starts it over" {
	refresh_a
	sed -i 's/^generation 1$/generation 9/' "$X/state"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 1 ]
	[ "$(key state)" = corrupt ]
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not trusted"*"--force"* ]]
	[ ! -e "$X/b" ]
	run "$RAMBOOT_BIN" cache refresh --force --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_network)" = "$(stat -c %s "$D/b.img")" ]
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[ "$(key state)" = ok ]
	# an index that is not the one the state names: not trusted either
	refresh_a_index=$X/$(key active).cindex
	echo >>"$refresh_a_index"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 1 ]
	[[ "$(key why)" == *"not the index the state names"* ]]
}

@test "cache refresh: symbolic links at the state or a slot are refused, never written through" {
	refresh_a
	echo keep >"$T/victim"
	rm "$X/state"
	ln -s "$T/victim" "$X/state"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 1 ]
	[[ "$(key why)" == *"symbolic link"* ]]
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --force --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"symbolic link"* ]]
	[ "$(cat "$T/victim")" = keep ]
	rm "$X/state" "$X/a"
	ln -s "$T/victim" "$X/a"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"slot a: is a symbolic link"* ]]
	[ "$(cat "$T/victim")" = keep ]
}

@test "cache init: what is not a cache is not touched" {
	run --separate-stderr "$RAMBOOT_BIN" cache init /dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not a block device, a regular file or a directory"* ]]
	echo data >"$C/file"
	run --separate-stderr "$RAMBOOT_BIN" cache init "$C"
	[ "$status" -eq 1 ]
	[ ! -e "$C/ramboot-cache" ]
	# a file system ramboot did not make
	cp "$D/a.img" "$T/sq.img"
	run --separate-stderr "$RAMBOOT_BIN" cache init "$T/sq.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"holds a file system squashfs"* ]]
	cmp "$T/sq.img" "$D/a.img"
	run --separate-stderr "$RAMBOOT_BIN" cache init --label='bad label' "$T/sq.img"
	[ "$status" -eq 1 ]
	run "$RAMBOOT_BIN" cache refresh "$D/a.img"
	[ "$status" -eq 2 ]
	run "$RAMBOOT_BIN" cache status
	[ "$status" -eq 2 ]
	run --separate-stderr "$RAMBOOT_BIN" cache status --cache="$T"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"not a ramboot cache"* ]]
}

# ---- the real kernel: an ext4 file system in a file, on a loop device ----

@test "cache on an image file and a loop device (root): init, refresh, delta, status, mounted refused" {
	is_root || skip "needs root (mount, losetup)"
	local dev size net
	truncate -s 64M "$T/cache.img"
	run "$RAMBOOT_BIN" cache init "$T/cache.img"
	[ "$status" -eq 0 ]
	run blkid -o value -s LABEL "$T/cache.img"
	[ "$output" = ramboot-cache ]
	run "$RAMBOOT_BIN" cache refresh --cache="$T/cache.img" --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	# made by ramboot: init again without --force
	run "$RAMBOOT_BIN" cache init "$T/cache.img"
	[ "$status" -eq 0 ]
	dev=$(losetup -f --show "$T/cache.img")
	LOOPS+=("$dev")
	run "$RAMBOOT_BIN" cache refresh --cache="$dev" --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key bytes_network)" = "$(stat -c %s "$D/a.img")" ]
	run "$RAMBOOT_BIN" cache refresh --cache="$dev" --manifest="$D/b.manifest" --name=a.img "$D/b.img"
	[ "$status" -eq 0 ]
	size=$(stat -c %s "$D/b.img")
	net=$(key bytes_network)
	[ "$net" -lt $((size / 3)) ]
	run "$RAMBOOT_BIN" cache status --cache="$dev"
	[ "$status" -eq 0 ]
	[ "$(key active)" = b ]
	[ "$(key bytes_network)" = "$net" ]
	# the image file is in use (a loop device is over it): refused
	run --separate-stderr "$RAMBOOT_BIN" cache init --force "$T/cache.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"in use"* ]]
	# a mounted device: refused, even with --force
	mkdir "$T/mnt"
	mount "$dev" "$T/mnt"
	MNTS+=("$T/mnt")
	run --separate-stderr "$RAMBOOT_BIN" cache init --force "$dev"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"in use (mounted"* ]]
	cmp "$T/mnt/images/a.img/b" "$D/b.img"
	# no mount is left behind by the commands
	run grep -c "$dev" /proc/self/mounts
	[ "$output" = 1 ]
}

@test "cache on a small loop device (root): ENOSPC leaves the old slot and state" {
	is_root || skip "needs root (mount, losetup)"
	local dev
	truncate -s 6M "$T/small.img"
	dev=$(losetup -f --show "$T/small.img")
	LOOPS+=("$dev")
	run "$RAMBOOT_BIN" cache init "$dev"
	[ "$status" -eq 0 ]
	# 4.6 MB free: a.img fits, a.img and b.img do not
	run "$RAMBOOT_BIN" cache refresh --cache="$dev" --name=x --manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$dev" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"No space left on device"* ]]
	run "$RAMBOOT_BIN" cache status --cache="$dev" x
	[ "$status" -eq 0 ]
	[ "$(key active)" = a ]
	[ "$(key generation)" = 1 ]
	mkdir "$T/mnt"
	mount -o ro "$dev" "$T/mnt"
	MNTS+=("$T/mnt")
	cmp "$T/mnt/images/x/a" "$D/a.img"
}

@test "cache init: the device that carries the running root is refused (root)" {
	is_root || skip "needs root (losetup)"
	local dev name rootnum devnum sum
	# A loop device that looks like the root: in a fixture /sys, the
	# root's device number and the loop device's name the same disk. No
	# writing command is ever aimed at a real device of the machine.
	truncate -s 16M "$T/root.img"
	dev=$(losetup -f --show "$T/root.img")
	LOOPS+=("$dev")
	name=${dev##*/}
	rootnum=$(mountpoint -d /)
	devnum=$(cat "/sys/class/block/$name/dev")
	mkdir -p "$T/fx/sys/devices/virtual/block/$name" "$T/fx/sys/dev/block"
	ln -s "../../devices/virtual/block/$name" "$T/fx/sys/dev/block/$rootnum"
	ln -sfn "../../devices/virtual/block/$name" "$T/fx/sys/dev/block/$devnum"
	sum=$(sha256sum <"$T/root.img")
	run --separate-stderr env RAMBOOT_ROOT="$T/fx" "$RAMBOOT_BIN" cache init --force "$dev"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"carries the running root file system ($name); not a cache"* ]]
	[ "$(sha256sum <"$T/root.img")" = "$sum" ]
}

@test "cache init: the file checked is the file formatted; a link swapped in before mkfs formats nothing else (root)" {
	is_root || skip "needs root (mount, losetup)"
	faultinj_require_dynamic "$(command -v mkfs.ext4)"
	local sum
	truncate -s 64M "$T/cache.img"
	ln "$T/cache.img" "$T/cache.keep"       # the checked file, still reachable
	cp "$D/a.img" "$T/victim.img"
	sum=$(sha256sum <"$T/victim.img")
	ln -s "$T/victim.img" "$T/link"
	# the link renamed over the path as mkfs.ext4 starts: after every check
	run --separate-stderr faultinj_run "open:prog=mkfs.ext4:nth=1:times=1:rename=$T/link>$T/cache.img" \
		"$RAMBOOT_BIN" cache init "$T/cache.img"
	assert_faultinj_loaded mkfs.ext4
	assert_fault_fired 'action=rename'
	[ -L "$T/cache.img" ]
	[ "$(sha256sum <"$T/victim.img")" = "$sum" ]
	[ "$status" -eq 0 ]
	run blkid -o value -s LABEL "$T/cache.keep"
	[ "$output" = ramboot-cache ]
	run "$RAMBOOT_BIN" cache status --cache="$T/cache.keep"
	[ "$status" -eq 0 ]
}

# mkext4 FILE [needs_recovery|orphans]: someone's ext4 (not a cache), in
# FILE; with needs_recovery, its journal marked as to be replayed (a
# crash); with orphans, an inode on its orphan list (a crash with a file
# open but deleted), which ext4 cleans up even on a read-only mount.
mkext4() {
	local ino
	truncate -s 32M "$1"
	mkfs.ext4 -q -F -L data "$1"
	case ${2:-} in
	needs_recovery)
		debugfs -w -R "feature needs_recovery" "$1" >/dev/null 2>&1
		dumpe2fs -h "$1" 2>/dev/null | grep -q 'features:.*needs_recovery' ;;
	orphans)
		debugfs -w -R "write $BATS_TEST_FILENAME f" "$1" >/dev/null 2>&1
		ino=$(debugfs -R "stat f" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
		debugfs -w -R "ssv last_orphan $ino" "$1" >/dev/null 2>&1
		dumpe2fs -h "$1" 2>/dev/null | grep -q "^First orphan inode: *$ino$" ;;
	esac
}

@test "cache status and refresh on an ext4 that is not a cache, its journal to replay or orphans to clean up: exit 1, not a byte written (root)" {
	is_root || skip "needs root (mount, losetup)"
	local dev sum kind
	for kind in clean needs_recovery orphans; do
		rm -f "$T/other.img"
		mkext4 "$T/other.img" "${kind#clean}"
		dev=$(losetup -f --show "$T/other.img")
		LOOPS+=("$dev")
		sum=$(sha256sum <"$T/other.img")
		run --separate-stderr "$RAMBOOT_BIN" cache status --cache="$dev"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"not a ramboot cache"* ]]
		[ "$(sha256sum <"$T/other.img")" = "$sum" ]
		run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$dev" --name=x \
			--manifest="$D/a.manifest" "$D/a.img"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"not a ramboot cache"* ]]
		[ "$(sha256sum <"$T/other.img")" = "$sum" ]
		dumpe2fs -h "$T/other.img" 2>/dev/null | grep -q '^Mount count: *0$'
		losetup -d "$dev"
	done
}

@test "cache refresh and status on a cache whose journal is to be replayed: replayed once proven a cache, then used (root)" {
	is_root || skip "needs root (mount, losetup)"
	local dev
	truncate -s 64M "$T/cache.img"
	"$RAMBOOT_BIN" cache init "$T/cache.img" >/dev/null
	"$RAMBOOT_BIN" cache refresh --cache="$T/cache.img" --name=x --manifest="$D/a.manifest" \
		"$D/a.img" >/dev/null
	debugfs -w -R "feature needs_recovery" "$T/cache.img" >/dev/null 2>&1
	dev=$(losetup -f --show "$T/cache.img")
	LOOPS+=("$dev")
	run "$RAMBOOT_BIN" cache status --cache="$dev" x
	[ "$status" -eq 0 ]
	[ "$(key active)" = a ]
	run "$RAMBOOT_BIN" cache refresh --cache="$dev" --name=x --manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 0 ]
	[ "$(key slot)" = b ]
}

@test "cache refresh and cache index: a FIFO as the image is refused at once, never waited on" {
	refresh_a
	mkfifo "$T/fifo"
	run --separate-stderr timeout 20 "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x "$T/fifo"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$T/fifo: not a regular file or a block device"* ]]
	run --separate-stderr timeout 20 "$RAMBOOT_BIN" cache index "$T/fifo"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$T/fifo: not a regular file or a block device"* ]]
	# the index, the manifest and the delta given as FIFOs: refused too
	run --separate-stderr timeout 20 "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--index="$T/fifo" "$D/b.img"
	[ "$status" -eq 1 ]
	run --separate-stderr timeout 20 "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$T/fifo" "$D/b.img"
	[ "$status" -eq 1 ]
	assert_state_a
}

@test "cache refresh: an inactive slot that is a hard link of the active one is refused, never written" {
	refresh_a
	rm -f "$X/b"
	ln "$X/a" "$X/b"
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"slot b is the active slot (a hard link); not written"* ]]
	assert_state_a
}

@test "cache refresh without a manifest: a chunk of the image that is not its index's fails; nothing committed" {
	"$RAMBOOT_BIN" cache init "$C" >/dev/null
	"$RAMBOOT_BIN" cache index -o "$T/b.cindex" "$D/b.img"
	# b2.img: b.img's size, one byte changed; b.img's index given, and
	# no slot to copy a chunk from: every chunk is read from b2.img
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x --index="$T/b.cindex" \
		"$D/b2.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"$D/b2.img: the chunk at "*" does not match the index"* ]]
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$(key state)" = empty ]
}

# edit_state SED: the state of x rewritten with SED, its check line made
# again (a state a refresh could have written).
edit_state() {
	local body
	body=$(sed '/^check /d' "$X/state" | sed "$1")
	printf '%s\ncheck %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$X/state"
}

@test "cache status and refresh: a state whose slot size is not its index's is corrupt" {
	refresh_a
	local size
	size=$(stat -c %s "$D/a.img")
	edit_state "s/^slot a $size /slot a $((size + 4096)) /"
	run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 1 ]
	[ "$(key state)" = corrupt ]
	[[ "$(key why)" == *"a.cindex: size differs from the state's"* ]]
	run --separate-stderr "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/b.manifest" "$D/b.img"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"the state is not trusted"* ]]
}

@test "cache marker: empty, cut short or longer is not a cache" {
	refresh_a
	local m
	for m in "" "ramboot-cache" "ramboot-cache 1" "ramboot-cache 1
x"; do
		printf '%s' "$m" >"$C/ramboot-cache"
		run --separate-stderr "$RAMBOOT_BIN" cache status --cache="$C"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"its ramboot-cache marker is not \"ramboot-cache 1\""* ]]
	done
	printf 'ramboot-cache 1\n' >"$C/ramboot-cache"
	run "$RAMBOOT_BIN" cache status --cache="$C"
	[ "$status" -eq 0 ]
}

@test "cache status: times for a person (the host build's local time, the static build's UTC), sizes beside byte counts; --json the numbers" {
	local epoch want static=$TOP/static/ramboot
	refresh_a
	run "$RAMBOOT_BIN" cache status --json --cache="$C" x
	[ "$status" -eq 0 ]
	epoch=$(sed -n 's/.*"refreshed":\([0-9]*\).*/\1/p' <<<"$output")
	[ -n "$epoch" ]
	want=$(TZ=UTC date -d "@$epoch" '+%Y-%m-%d %H:%M:%S UTC')
	TZ=UTC run "$RAMBOOT_BIN" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[[ $(key refreshed) == "$want ("*" s ago)" ]] || fail "host: $(key refreshed), not $want"
	[[ $(key size) == "$(stat -c %s "$D/a.img") ("*" MiB)" ]] || fail "size: $(key size)"
	[ -x "$static" ] || fail "static/ramboot missing: make check builds it"
	run "$static" cache status --cache="$C" x
	[ "$status" -eq 0 ]
	[[ $(key refreshed) == "$want ("*" s ago)" ]] || fail "static: $(key refreshed), not $want"
}
