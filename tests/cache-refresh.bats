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
	run faultinj_run 'read,pread:path=a.img' "$RAMBOOT_BIN" cache refresh --cache="$C" --name=x \
		--manifest="$D/a.manifest" "$D/a.img"
	[ "$status" -eq 0 ]
	[ "$(key result)" = "up to date" ]
	[ "$(key bytes_network)" = 0 ]
	[ "$(faultinj_count)" -eq 0 ]
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
	is_root || skip "needs root"
	local dev
	dev=$(findmnt -n -o SOURCE / 2>/dev/null) || true
	[ -b "$dev" ] || skip "the root is not on a block device here ($dev)"
	run --separate-stderr "$RAMBOOT_BIN" cache init --force "$dev"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"running root"* || "$stderr" == *"in use"* ]]
}
