#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The server side of trusted images: `ramboot manifest --verity` (the
# dm-verity hash tree beside the image, accepted by veritysetup) and
# `ramboot publish` (manifest and hash tree, signed, written so that the
# manifest is the commit point): what it writes, republishing, kills and
# faults at each step (tests/fault/faultinj.c), a reader running
# meanwhile, an image that changes while it is read, a link at the
# manifest's name, exit codes.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031

load helpers/common
load helpers/fault
load helpers/publish

setup_file() {
	publish_setup_file
}

setup() {
	publish_setup
	# 64 blocks of 4 KiB: a tree of one level under the superblock
	head -c 262144 /dev/urandom >"$IMG"
}

teardown() {
	local p
	# a ramboot left stalled or stopped by a failed test, then its shell
	while IFS= read -r p; do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = ramboot ]; then
			kill -KILL "$p" 2>/dev/null || true
		fi
	done < <(grep -oE 'pid=[0-9]+' "$(faultinj_log)" 2>/dev/null | cut -d= -f2 | sort -u)
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}

# field NAME FILE: the value of a manifest key.
field() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

# The files in $OUT, one name a line, hidden ones too.
files() {
	(cd "$OUT" && find . -mindepth 1 -printf '%f\n' | LC_ALL=C sort)
}

# hash_files: publish's hash files of x.img.
hash_files() {
	files | grep -E '^x\.img\.verity-[0-9a-f]{16}$' || true
}

# cindex_files: publish's chunk indexes of x.img.
cindex_files() {
	files | grep -E '^x\.img\.cindex-[0-9a-f]{16}$' || true
}

# assert_cindex_ok MANIFEST: the index it names is beside the image, has
# the SHA-256 it gives and is the image's (ramboot cache index).
assert_cindex_ok() {
	local m=$1 name sum
	name=$(field cindex "$m")
	sum=$(field cindex-sha256 "$m")
	if [ -z "$name" ] || [ -z "$sum" ]; then
		fail "no cindex keys in $m"
	fi
	[ "$(sha256sum <"$OUT/$name" | cut -d' ' -f1)" = "$sum" ]
	"$RAMBOOT_BIN" cache index "$IMG" | cmp - "$OUT/$name"
}

# veritysetup (cryptsetup) checks the hash trees: without it, the test
# stops there, said as a skip.
require_veritysetup() {
	command -v veritysetup >/dev/null ||
		skip "veritysetup (cryptsetup-bin) is not installed: the hash tree is not checked"
}

# veritysetup accepts the hash file the manifest names for the image.
assert_verity_ok() {
	local m=$1 root hash
	require_veritysetup
	root=$(field verity-root "$m")
	hash=$(field verity-hash "$m")
	if [ -z "$root" ] || [ -z "$hash" ]; then
		fail "no verity keys in $m"
	fi
	run veritysetup verify "$IMG" "$OUT/$hash" "$root"
	expect_status 0
}

@test "manifest --verity: the hash file beside the image, named in the manifest; veritysetup verifies it" {
	rb manifest --verity -o "$IMG.manifest" "$IMG"
	expect_status 0
	[ "$(field verity-hash "$IMG.manifest")" = x.img.verity ]
	[[ $(field verity-salt "$IMG.manifest") =~ ^[0-9a-f]{64}$ ]]
	assert_verity_ok "$IMG.manifest"
	# the keys are covered by the signature
	rb manifest --verity --sign="$KEY" -o "$IMG.manifest" "$IMG"
	expect_status 0
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
	expect_status 0
	assert_verity_ok "$IMG.manifest"
	sed -i 's/^verity-hash .*/verity-hash other.verity/' "$IMG.manifest"
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
	expect_status 1

	# HASHFILE: a name, or a path in the image's directory; the manifest
	# records the name only
	rb manifest --verity=tree.bin "$IMG"
	expect_status 0
	grep -qx 'verity-hash tree.bin' <<<"$output"
	[ -s "$OUT/tree.bin" ]
	rb manifest --verity="$OUT/../out/t2.bin" "$IMG"
	expect_status 0
	grep -qx 'verity-hash t2.bin' <<<"$output"
	# a link at OUT: refused before the tree is written
	ln -s "$T/target" "$OUT/l.manifest"
	rb manifest --verity=l.verity -o "$OUT/l.manifest" "$IMG"
	expect_status 1
	[ ! -e "$OUT/l.verity" ] && [ ! -e "$T/target" ] || false
	rm "$OUT/l.manifest"
	mkdir "$T/elsewhere"
	rb manifest --verity="$T/elsewhere/t3.bin" "$IMG"
	expect_status 1
	grep -q "not in the directory of" <<<"$stderr"
	[ ! -e "$T/elsewhere/t3.bin" ]
}

@test "manifest --verity: a compressed image or one not of whole 4096-byte blocks is refused, nothing written (exit 1)" {
	zstd -q -c "$IMG" >"$OUT/y.img.zst"
	rb manifest --verity -o "$OUT/y.img.zst.manifest" "$OUT/y.img.zst"
	expect_status 1
	grep -q "zstd-compressed: --verity needs a raw image" <<<"$stderr"
	rb manifest --verity -d zstd "$OUT/y.img.zst"
	expect_status 1
	[ -z "$output" ]
	head -c 266240 /dev/urandom >"$OUT/z.img"   # 65 blocks
	truncate -s -100 "$OUT/z.img"
	rb manifest --verity -o "$OUT/z.img.manifest" "$OUT/z.img"
	expect_status 1
	grep -q "not a whole number of 4096-byte blocks" <<<"$stderr"
	: >"$OUT/e.img"
	rb manifest --verity "$OUT/e.img"
	expect_status 1
	rm "$IMG"
	[ "$(files)" = "$(printf '%s\n' e.img y.img.zst z.img)" ] || fail "written: $(files)"
	# the same through publish
	rb publish --verity "$OUT/y.img.zst"
	expect_status 1
	rb publish --verity "$OUT/z.img"
	expect_status 1
	[ "$(files)" = "$(printf '%s\n' e.img y.img.zst z.img)" ] || fail "written: $(files)"
}

@test "publish: the hash file and the signed manifest naming it; sign --check and veritysetup accept them" {
	rb publish --sign="$KEY" --verity "$IMG"
	expect_status 0
	local hash keyid
	hash=$(field verity-hash "$IMG.manifest")
	[[ $hash =~ ^x\.img\.verity-[0-9a-f]{16}$ ]] || fail "hash file name '$hash'"
	[ "${hash#x.img.verity-}" = "$(field verity-root "$IMG.manifest" | cut -c1-16)" ]
	keyid=$("$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest" | grep -oE '[0-9a-f]{16}')
	# one line for each file written, the key id on the manifest's
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "$OUT/$hash: hash tree, 64 blocks, root "* ]]
	[[ ${lines[1]} == "$IMG.manifest: 262144 bytes, sha256 "*", signed by key $keyid" ]]
	assert_verity_ok "$IMG.manifest"
	[ "$(field sha256 "$IMG.manifest")" = "$(sha256sum <"$IMG" | cut -d' ' -f1)" ]
	[ "$(files)" = "$(printf '%s\n' x.img x.img.manifest "$hash")" ]
	# the client side loads it
	run "$RAMBOOT_BIN" load --manifest="$IMG.manifest" --signed --keys="$KEYS" "$IMG" "$T/copy"
	expect_status 0
	cmp "$IMG" "$T/copy"
	# without --verity: a manifest only
	rm "$OUT/$hash" "$IMG.manifest"
	rb publish --chunk-size=64K --mem-limit=512M "$IMG"
	expect_status 0
	[ "$(field chunk-size "$IMG.manifest")" = 65536 ]
	[ "$(field memlimit "$IMG.manifest")" = 536870912 ]
	run ! grep -q '^verity' "$IMG.manifest"
	[ "$(files)" = "$(printf '%s\n' x.img x.img.manifest)" ]
}

@test "publish: republishing writes a new hash file, keeps the previous one and removes older ones" {
	local h1 h2 h3
	rb publish --verity "$IMG"
	expect_status 0
	h1=$(field verity-hash "$IMG.manifest")
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --verity "$IMG"
	expect_status 0
	h2=$(field verity-hash "$IMG.manifest")
	[ "$h1" != "$h2" ]
	[ "$(hash_files)" = "$(printf '%s\n' "$h1" "$h2" | LC_ALL=C sort)" ]
	# other files that look alike are not publish's: they stay
	: >"$OUT/x.img.verity"
	: >"$OUT/x.img.verity-notmine"
	: >"$OUT/y.img.verity-0123456789abcdef"
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --verity "$IMG"
	expect_status 0
	h3=$(field verity-hash "$IMG.manifest")
	grep -qx "removed $OUT/$h1" <<<"$output"
	[ "$(hash_files)" = "$(printf '%s\n' "$h2" "$h3" | LC_ALL=C sort)" ]
	[ -e "$OUT/x.img.verity" ] && [ -e "$OUT/x.img.verity-notmine" ] &&
		[ -e "$OUT/y.img.verity-0123456789abcdef" ] || false
	assert_verity_ok "$IMG.manifest"
	# temporaries a killed publish left (a kill inside a commit's rename)
	# go; others' stay
	: >"$OUT/.x.img.manifest.0a1b2c3d"
	: >"$OUT/.x.img.verity-0123456789abcdef.0a1b2c3d"
	: >"$OUT/.x.img.manifest.keep"
	: >"$OUT/.y.img.manifest.0a1b2c3d"
	rb publish --verity "$IMG"
	expect_status 0
	[ ! -e "$OUT/.x.img.manifest.0a1b2c3d" ] && [ ! -e "$OUT/.x.img.verity-0123456789abcdef.0a1b2c3d" ] || false
	[ -e "$OUT/.x.img.manifest.keep" ] && [ -e "$OUT/.y.img.manifest.0a1b2c3d" ] || false
	rm "$OUT"/.x.img.manifest.keep "$OUT"/.y.img.manifest.0a1b2c3d
	h3=$(field verity-hash "$IMG.manifest")
	# a manifest without a tree: the previous hash file stays once more
	rb publish "$IMG"
	expect_status 0
	[ "$(hash_files)" = "$h3" ]
	rb publish "$IMG"
	expect_status 0
	[ -z "$(hash_files)" ]
}

@test "publish: the hash file IMAGE.old.manifest names stays (LTSP's backup, for ltsp image --revert)" {
	local h1 h2 h3 h4
	rb publish --verity "$IMG"
	expect_status 0
	h1=$(field verity-hash "$IMG.manifest")
	# what ltsp.conf's POST_IMAGE_RAMBOOT does: the previous image's
	# manifest beside LTSP's backup, then the new image published
	cp "$IMG" "$IMG.old"
	cp "$IMG.manifest" "$IMG.old.manifest"
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --verity "$IMG"
	expect_status 0
	h2=$(field verity-hash "$IMG.manifest")
	rb publish --verity "$IMG"
	expect_status 0
	h3=$(field verity-hash "$IMG.manifest")
	rb publish --verity "$IMG"
	expect_status 0
	h4=$(field verity-hash "$IMG.manifest")
	grep -qx "removed $OUT/$h2" <<<"$output"
	[ "$(hash_files)" = "$(printf '%s\n' "$h1" "$h3" "$h4" | LC_ALL=C sort)" ]
	# the backup brought back: its manifest and hash file still agree
	mv "$IMG.old" "$IMG"
	mv "$IMG.old.manifest" "$IMG.manifest"
	assert_verity_ok "$IMG.manifest"
	# a backup manifest that cannot be read: no hash file is removed
	echo garbage >"$IMG.old.manifest"
	rb publish --verity "$IMG"
	expect_status 0
	[[ $stderr == *"$IMG.old.manifest"*"no hash file is removed"* ]] || fail "stderr: $stderr"
	[ "$(hash_files | wc -l)" -eq 4 ]
	# no backup manifest: the older hash files go
	rm "$IMG.old.manifest"
	rb publish --verity "$IMG"
	expect_status 0
	[ "$(hash_files | wc -l)" -eq 2 ]
}

@test "publish --cindex: the chunk index beside the image, named and hashed in the signed manifest" {
	local idx
	rb publish --cindex --verity --sign="$KEY" "$IMG"
	expect_status 0
	idx=$(field cindex "$IMG.manifest")
	# one line for each file written: the tree, the index, the manifest
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[1]} == "$OUT/$idx: chunk index, "*" chunks, sha256 "* ]]
	[[ ${lines[2]} == "$IMG.manifest: 262144 bytes, sha256 "*", verity, cindex, signed by key "* ]]
	[[ $idx =~ ^x\.img\.cindex-[0-9a-f]{16}$ ]] || fail "index name '$idx'"
	[ "${idx#x.img.cindex-}" = "$(field cindex-sha256 "$IMG.manifest" | cut -c1-16)" ]
	assert_cindex_ok "$IMG.manifest"
	assert_verity_ok "$IMG.manifest"
	[ "$(files)" = "$(printf '%s\n' x.img x.img.manifest "$idx" "$(field verity-hash "$IMG.manifest")" |
		LC_ALL=C sort)" ]
	# the signature covers the index's name and hash
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
	expect_status 0
	cp "$IMG.manifest" "$T/m"
	sed -i "s/^cindex-sha256 .*/cindex-sha256 $(printf x | sha256sum | cut -c1-64)/" "$T/m"
	run grep -c '^cindex-sha256 2d711642' "$T/m"
	[ "$output" = 1 ]
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$T/m"
	expect_status 1
	cp "$IMG.manifest" "$T/m"
	sed -i 's/^cindex .*/cindex other.cindex/' "$T/m"
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$T/m"
	expect_status 1
	# the client loads the image under that manifest: the keys are known
	run "$RAMBOOT_BIN" load --manifest="$IMG.manifest" --signed --keys="$KEYS" "$IMG" "$T/copy"
	expect_status 0
	cmp "$IMG" "$T/copy"
	# a compressed image: refused, nothing written; version 1: usage
	zstd -q -c "$IMG" >"$OUT/y.img.zst"
	rb publish --cindex "$OUT/y.img.zst"
	expect_status 1
	grep -q "zstd-compressed: --cindex needs a raw image" <<<"$stderr"
	[ ! -e "$OUT/y.img.zst.manifest" ]
	run ls "$OUT"
	[[ $output != *y.img.zst.cindex* ]]
}

@test "manifest --cindex: IMAGE.cindex or INDEXFILE beside the image, named in the manifest" {
	rb manifest --cindex -o "$IMG.manifest" "$IMG"
	expect_status 0
	[ "$(field cindex "$IMG.manifest")" = x.img.cindex ]
	assert_cindex_ok "$IMG.manifest"
	run ! grep -q '^verity' "$IMG.manifest"
	rb manifest --cindex=idx.txt --verity=tree.bin "$IMG"
	expect_status 0
	grep -qx 'cindex idx.txt' <<<"$output"
	grep -qx 'verity-hash tree.bin' <<<"$output"
	cmp "$OUT/idx.txt" "$OUT/x.img.cindex"
	rb manifest --cindex="$OUT/../out/i2.txt" "$IMG"
	expect_status 0
	grep -qx 'cindex i2.txt' <<<"$output"
	# elsewhere, the same name as the tree, version 1, compressed: refused
	mkdir "$T/elsewhere"
	rb manifest --cindex="$T/elsewhere/i3" "$IMG"
	expect_status 1
	grep -q "not in the directory of" <<<"$stderr"
	[ ! -e "$T/elsewhere/i3" ]
	rb manifest --cindex=same --verity=same "$IMG"
	expect_status 2
	rb manifest --cindex --chunk-size=0 "$IMG"
	expect_status 2
	zstd -q -c "$IMG" >"$OUT/y.img.zst"
	rb manifest --cindex "$OUT/y.img.zst"
	expect_status 1
	[ ! -e "$OUT/y.img.zst.cindex" ]
}

@test "publish --cindex: republishing keeps the previous index and IMAGE.old.manifest's, removes others" {
	local i1 i2 i3 i4
	rb publish --cindex "$IMG"
	expect_status 0
	i1=$(field cindex "$IMG.manifest")
	# the same image again: the same name, the same bytes
	rb publish --cindex "$IMG"
	expect_status 0
	[ "$(field cindex "$IMG.manifest")" = "$i1" ]
	[ "$(cindex_files)" = "$i1" ]
	# LTSP's backup and its manifest, then new images
	cp "$IMG" "$IMG.old"
	cp "$IMG.manifest" "$IMG.old.manifest"
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --cindex "$IMG"
	expect_status 0
	i2=$(field cindex "$IMG.manifest")
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --cindex "$IMG"
	expect_status 0
	i3=$(field cindex "$IMG.manifest")
	head -c 4096 /dev/urandom >>"$IMG"
	rb publish --cindex "$IMG"
	expect_status 0
	i4=$(field cindex "$IMG.manifest")
	grep -qx "removed $OUT/$i2" <<<"$output"
	[ "$(cindex_files)" = "$(printf '%s\n' "$i1" "$i3" "$i4" | LC_ALL=C sort)" ]
	assert_cindex_ok "$IMG.manifest"
	# look-alikes are not publish's: they stay
	: >"$OUT/x.img.cindex"
	: >"$OUT/x.img.cindex-notmine"
	: >"$OUT/y.img.cindex-0123456789abcdef"
	# a killed publish's temporary index goes
	: >"$OUT/.x.img.cindex-0123456789abcdef.0a1b2c3d"
	# without --cindex: the previous manifest's index stays once more
	rb publish "$IMG"
	expect_status 0
	[ "$(cindex_files)" = "$(printf '%s\n' "$i1" "$i4" | LC_ALL=C sort)" ]
	[ ! -e "$OUT/.x.img.cindex-0123456789abcdef.0a1b2c3d" ]
	[ -e "$OUT/x.img.cindex" ]
	[ -e "$OUT/x.img.cindex-notmine" ]
	[ -e "$OUT/y.img.cindex-0123456789abcdef" ]
	rb publish "$IMG"
	expect_status 0
	[ "$(cindex_files)" = "$i1" ]
	# the backup brought back: its manifest and index still agree
	mv "$IMG.old" "$IMG"
	mv "$IMG.old.manifest" "$IMG.manifest"
	assert_cindex_ok "$IMG.manifest"
}

# A publish stalled at its Nth fsync and killed there.
# kill_at_fsync N
kill_at_fsync() {
	local pid bg
	: >"$(faultinj_log)"
	faultinj_run "fsync:prog=ramboot:nth=$1:times=1:stall" \
		"$RAMBOOT_BIN" publish --sign="$KEY" --verity "$IMG" >"$T/stdout" 2>"$T/stderr" &
	bg=$!
	PIDS+=("$bg")
	pid=$(faultinj_wait "call=fsync n=$1 .*action=stall")
	kill -KILL "$pid"
	wait "$bg" || true
}

@test "publish: killed at each fsync, the old manifest and its hash file stay, no temporary file" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local old oldhash before
	rb publish --sign="$KEY" --verity "$IMG"
	expect_status 0
	old=$(cat "$IMG.manifest")
	oldhash=$(field verity-hash "$IMG.manifest")
	head -c 4096 /dev/urandom >>"$IMG"
	before=$(files)
	# fsync 1: the new hash file's data (not linked yet); 3: the new
	# manifest's data, its hash file already in place
	kill_at_fsync 1
	[ "$(cat "$IMG.manifest")" = "$old" ]
	[ "$(files)" = "$before" ] || fail "left: $(files)"
	kill_at_fsync 3
	[ "$(cat "$IMG.manifest")" = "$old" ]
	[ -s "$OUT/$oldhash" ]
	# the old tree still verifies the old image's 64 blocks
	require_veritysetup
	run veritysetup verify "$IMG" "$OUT/$oldhash" "$(field verity-root "$IMG.manifest")"
	expect_status 0
	if files | grep -q '^\.'; then fail "temporary files left: $(files)"; fi
	[ "$(hash_files | wc -l)" -eq 2 ]   # the old one and an orphan
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
	expect_status 0
	# the next publish names a new one and removes the orphan, not the old
	rb publish --sign="$KEY" --verity "$IMG"
	expect_status 0
	[ "$(hash_files)" = "$(printf '%s\n' "$oldhash" "$(field verity-hash "$IMG.manifest")" |
		LC_ALL=C sort)" ]
	assert_verity_ok "$IMG.manifest"
}

@test "publish: a failed write or fsync leaves the old manifest and hash file (exit 1)" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local old n
	rb publish --verity "$IMG"
	expect_status 0
	old=$(cat "$IMG.manifest")
	for n in 1 2 3; do
		run --separate-stderr faultinj_run "fsync:prog=ramboot:nth=$n:times=1:errno=EIO" \
			"$RAMBOOT_BIN" publish --verity "$IMG"
		expect_status 1
		[ "$(cat "$IMG.manifest")" = "$old" ]
		[ -s "$OUT/$(field verity-hash "$IMG.manifest")" ]
	done
	# writes: 1 the hash file, 2 the manifest (the image is hashed, not
	# written; outfile.c's descriptors are dups that path= does not follow)
	for n in 1 2; do
		run --separate-stderr faultinj_run "write:prog=ramboot:nth=$n:times=1:errno=ENOSPC" \
			"$RAMBOOT_BIN" publish --verity "$IMG"
		expect_status 1
		assert_fault_fired "call=write n=$n .*errno:ENOSPC"
		[ "$(cat "$IMG.manifest")" = "$old" ]
		[ -s "$OUT/$(field verity-hash "$IMG.manifest")" ]
	done
	if files | grep -q '^\.'; then fail "temporary files left: $(files)"; fi
}

@test "publish: a reader meanwhile only ever sees a complete manifest whose hash file is there" {
	rb publish --sign="$KEY" --verity "$IMG"
	expect_status 0
	# The reader counts its rounds in $T/rounds; the publisher waits for
	# two rounds after each publish, so no round overlaps two publishes
	# (a round that read the previous manifest finds its hash file kept).
	(
		n=0
		while [ ! -e "$T/stop" ]; do
			m=
			IFS= read -r -d '' m <"$IMG.manifest" || true
			if [[ $m != "ramboot-manifest 2"$'\n'* ]] ||
				[[ $m != *$'\n'"signature ed25519 "*$'\n' ]]; then
				printf 'incomplete: %s\n' "$m" >>"$T/bad"
			elif [[ $m =~ verity-hash\ ([^$'\n']+) ]]; then
				[ -e "$OUT/${BASH_REMATCH[1]}" ] ||
					echo "missing ${BASH_REMATCH[1]}" >>"$T/bad"
			else
				echo "no verity-hash" >>"$T/bad"
			fi
			n=$((n + 1))
			echo "$n" >"$T/rounds"
		done
	) &
	PIDS+=($!)
	local i r0 r
	for ((i = 0; i < 12; i++)); do
		"$RAMBOOT_BIN" publish --sign="$KEY" --verity "$IMG" >/dev/null
		IFS= read -r r0 <"$T/rounds" || r0=0
		r=$r0
		while [ "$r" -lt $((r0 + 2)) ]; do
			sleep 0.01
			IFS= read -r r <"$T/rounds" || r=$r0
		done
	done
	touch "$T/stop"
	wait "${PIDS[0]}"
	[ ! -e "$T/bad" ] || fail "$(head -5 "$T/bad")"
	[ "$(hash_files | wc -l)" -eq 2 ]
}

@test "publish: the image modified while it is read: exit 1, nothing written" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local pid bg rc=0
	# stopped (SIGSTOP) at the third read of the image: the hash tree's,
	# after the SHA-256 of the whole image; then touched, continued
	faultinj_run 'pread:prog=ramboot:path=x.img:nth=3:times=1:signal=19' \
		"$RAMBOOT_BIN" publish --sign="$KEY" --verity "$IMG" >"$T/stdout" 2>"$T/stderr" &
	bg=$!
	PIDS+=("$bg")
	pid=$(faultinj_wait 'call=pread n=3 .*action=signal')
	touch -d '2001-01-01' "$IMG"
	kill -CONT "$pid"
	wait "$bg" || rc=$?
	[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$T/stderr")"
	grep -q "changed while it was read" "$T/stderr"
	[ "$(files)" = x.img ] || fail "written: $(files)"
	# grown by a block while the loader read it
	: >"$(faultinj_log)"
	faultinj_run 'pread:prog=ramboot:path=x.img:nth=2:times=1:signal=19' \
		"$RAMBOOT_BIN" publish --verity "$IMG" >"$T/stdout" 2>"$T/stderr" &
	bg=$!
	PIDS+=("$bg")
	pid=$(faultinj_wait 'call=pread n=2 .*action=signal')
	head -c 4096 /dev/zero >>"$IMG"
	kill -CONT "$pid"
	rc=0
	wait "$bg" || rc=$?
	[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$T/stderr")"
	[ "$(files)" = x.img ] || fail "written: $(files)"
}

@test "publish: a symbolic link or a directory at the manifest's name is refused, nothing written" {
	ln -s "$T/target" "$IMG.manifest"
	rb publish --verity "$IMG"
	expect_status 1
	grep -q "symbolic link" <<<"$stderr"
	[ ! -e "$T/target" ]
	[ "$(files)" = "$(printf '%s\n' x.img x.img.manifest)" ]
	rm "$IMG.manifest"
	mkdir "$IMG.manifest"
	rb publish --verity "$IMG"
	expect_status 1
	[ "$(files)" = "$(printf '%s\n' x.img x.img.manifest)" ]
}

@test "publish: exit codes 0, 1 and 2" {
	rb publish --help
	expect_status 0
	grep -q '^Usage: ramboot publish' <<<"$output"
	# 2: usage
	for a in "" "--chunk-size=3" "--chunk-size=0" "--mem-limit=x" "--memlimit=x" "--bogus" "--sign" "$IMG $IMG"; do
		# shellcheck disable=SC2086
		rb publish $a
		expect_status 2
	done
	# 1: run time
	rb publish "$OUT/missing.img"
	expect_status 1
	rb publish "$OUT"
	expect_status 1
	rb publish --sign="$T/nokey" "$IMG"
	expect_status 1
	[ "$(files)" = x.img ]
	rb publish "$IMG"
	expect_status 0
}

@test "publish --delta: MemAvailable short of twice both images: a warning, no delta, published" {
	local R=$T/root
	mkdir -p "$R/proc"
	cp "$IMG" "$T/old.img"
	printf 'changed' | dd of="$IMG" bs=1 seek=4096 conv=notrunc status=none
	# two images of 256 KiB: the delta asks for 1 MiB
	printf 'MemTotal: 4096 kB\nMemAvailable: 512 kB\n' >"$R/proc/meminfo"
	run --separate-stderr env RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" publish --delta-from="$T/old.img" \
		"$IMG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "ramboot: publish: warning: $T/old.img: the delta needs about 1.0 MiB of memory, MemAvailable is 512.0 KiB: no delta" ]
	[ -z "$(field delta "$IMG.manifest")" ]
	[ -z "$(field delta-from "$IMG.manifest")" ]
	[ -z "$(files | grep delta)" ]
	[[ "$output" == *"$IMG.manifest: 262144 bytes"* ]]
	# room enough: the delta
	printf 'MemTotal: 4096 kB\nMemAvailable: 1024 kB\n' >"$R/proc/meminfo"
	run --separate-stderr env RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" publish --delta-from="$T/old.img" \
		"$IMG"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$(field delta "$IMG.manifest")" == x.img.delta-* ]]
	[ -e "$OUT/$(field delta "$IMG.manifest")" ]
}

@test "publish, manifest: --mem-limit as swap spells it; --memlimit still read, with one warning" {
	local cmd out
	for cmd in publish manifest; do
		out=()
		[ "$cmd" = publish ] || out=(-o "$IMG.manifest")
		rm -f "$IMG.manifest"
		rb "$cmd" --mem-limit=512M "${out[@]}" "$IMG"
		expect_status 0
		[ -z "$stderr" ]
		[ "$(field memlimit "$IMG.manifest")" = 536870912 ]
		rb "$cmd" --memlimit=1G "${out[@]}" "$IMG"
		expect_status 0
		[ "$stderr" = "ramboot: $cmd: warning: --memlimit=1G: deprecated spelling, write --mem-limit=1G" ]
		[ "$(field memlimit "$IMG.manifest")" = 1073741824 ]
		run "$RAMBOOT_BIN" "$cmd" --help
		[[ "$output" == *"--mem-limit=SIZE"* ]]
		[[ "$output" != *"--memlimit"* ]]
	done
}
