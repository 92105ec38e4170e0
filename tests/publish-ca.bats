#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot publish --content-addressed`: the image also under
# IMAGE.sha256-SHA16, which the manifest names (key image), so that a
# rebuild never changes the bytes under a client that read the manifest:
# two publishes, a reader of the old file meanwhile, --keep, kills at each
# step (tests/fault/faultinj.c), links and directories at the name, an
# image rewritten in place, and `ramboot boot` reading the named file.

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
	new_image 1
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}

# new_image N: a new 256 KiB image at IMG, made aside and renamed into
# place as `ltsp image` does, its mtime N minutes past a fixed time (the
# age --keep goes by); a copy of it kept as $T/img.N.
new_image() {
	head -c 262144 /dev/urandom >"$OUT/.new"
	touch -d "@$((1700000000 + $1 * 60))" "$OUT/.new"
	cp -p "$OUT/.new" "$T/img.$1"
	mv -f "$OUT/.new" "$IMG"
}

# field NAME FILE: the value of a manifest key.
field() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

sha() {
	sha256sum <"$1" | cut -d' ' -f1
}

# The files in $OUT, one name a line, hidden ones too.
files() {
	(cd "$OUT" && find . -mindepth 1 -printf '%f\n' | LC_ALL=C sort)
}

# ca_files: the content-addressed images of x.img.
ca_files() {
	files | grep -E '^x\.img\.sha256-[0-9a-f]{16}$' || true
}

# ca_name N: the content-addressed name of the image $T/img.N.
ca_name() {
	echo "x.img.sha256-$(sha "$T/img.$1" | cut -c1-16)"
}

# assert_named MANIFEST: the file it names holds the bytes it describes.
assert_named() {
	local name
	name=$(field image "$1")
	[ -n "$name" ] || fail "no image key in $1"
	[ -f "$OUT/$name" ] || fail "$name: not there"
	[ ! -L "$OUT/$name" ] || fail "$name: a symbolic link"
	[ "$(stat -c %s "$OUT/$name")" = "$(field size "$1")" ]
	[ "$(sha "$OUT/$name")" = "$(field sha256 "$1")" ]
	[ "$name" = "x.img.sha256-$(field sha256 "$1" | cut -c1-16)" ]
}

@test "publish --content-addressed: IMAGE.sha256-SHA16, a hard link of IMAGE, named in the signed manifest" {
	rb publish --sign="$KEY" --content-addressed "$IMG"
	expect_status 0
	[ "$(field image "$IMG.manifest")" = "$(ca_name 1)" ]
	assert_named "$IMG.manifest"
	# no space taken: the image's own inode
	[ "$(stat -c %i "$IMG")" = "$(stat -c %i "$OUT/$(ca_name 1)")" ]
	[ "$(stat -c %h "$IMG")" -eq 2 ]
	[[ $output == *"$OUT/$(ca_name 1): the image, hard link"* ]]
	run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
	expect_status 0
	# again over the same image: the same name, nothing new
	rb publish --sign="$KEY" --content-addressed "$IMG"
	expect_status 0
	[[ $output == *"$(ca_name 1): the image, already there"* ]]
	[ "$(ca_files)" = "$(ca_name 1)" ]
}

@test "publish --content-addressed: two publishes keep the first image readable and unchanged by its name while the second lands" {
	rb publish --content-addressed "$IMG"
	expect_status 0
	cp "$IMG.manifest" "$T/m1"
	# `ltsp image`: the backup, then the new image
	mv "$IMG" "$IMG.old"
	new_image 2
	# the window before the hook publishes: the manifest still names
	# the first image's bytes, there under their own name
	assert_named "$IMG.manifest"
	rb publish --content-addressed "$IMG"
	expect_status 0
	assert_named "$IMG.manifest"
	[ "$(field image "$IMG.manifest")" = "$(ca_name 2)" ]
	cmp "$OUT/$(ca_name 1)" "$T/img.1"
	cmp "$OUT/$(ca_name 2)" "$T/img.2"
	# the next rebuild drops LTSP's backup of the first image: its bytes
	# stay under their name
	rm "$IMG.old"
	mv "$IMG" "$IMG.old"
	new_image 3
	rb publish --content-addressed "$IMG"
	expect_status 0
	[ ! -e "$OUT/$(ca_name 1)" ]
	cmp "$OUT/$(ca_name 2)" "$T/img.2"
	cmp "$OUT/$(ca_name 3)" "$T/img.3"
	assert_named "$IMG.manifest"
}

@test "publish --content-addressed: a reader of the old file meanwhile reads the old bytes to its end" {
	local fifo=$T/go
	rb publish --content-addressed "$IMG"
	expect_status 0
	mkfifo "$fifo"
	# opens the named file, reads its first half, waits, reads the rest
	bash -c 'exec 3<"$1"; head -c 131072 <&3 >"$3"; read -r _ <"$2"; cat <&3 >>"$3"' _ \
		"$OUT/$(ca_name 1)" "$fifo" "$T/read" &
	PIDS+=($!)
	while [ "$(stat -c %s "$T/read" 2>/dev/null || echo 0)" -lt 131072 ]; do sleep 0.1; done
	# two rebuilds, the second with --keep=1: the first image's name goes
	new_image 2
	rb publish --content-addressed --keep=1 "$IMG"
	expect_status 0
	new_image 3
	rb publish --content-addressed --keep=1 "$IMG"
	expect_status 0
	[ ! -e "$OUT/$(ca_name 1)" ]
	echo go >"$fifo"
	wait "${PIDS[0]}"
	cmp "$T/read" "$T/img.1"
}

@test "publish --content-addressed --keep=N: the N newest stay, and those the new, previous and backup manifests name" {
	local i
	for i in 1 2 3 4; do
		new_image "$i"
		rb publish --content-addressed --keep=3 "$IMG"
		expect_status 0
	done
	[ "$(ca_files)" = "$(printf '%s\n' "$(ca_name 2)" "$(ca_name 3)" "$(ca_name 4)" |
		LC_ALL=C sort)" ]
	new_image 5
	rb publish --content-addressed "$IMG"
	expect_status 0
	[ "$(ca_files)" = "$(printf '%s\n' "$(ca_name 4)" "$(ca_name 5)" | LC_ALL=C sort)" ]
	[[ $output == *"removed $OUT/$(ca_name 2)"* ]]
	# --keep=1 keeps the previous manifest's image too: a client may have
	# read that manifest a moment ago
	new_image 6
	rb publish --content-addressed --keep=1 "$IMG"
	expect_status 0
	[ "$(ca_files)" = "$(printf '%s\n' "$(ca_name 5)" "$(ca_name 6)" | LC_ALL=C sort)" ]
	# IMAGE.old.manifest (LTSP's backup, for ltsp image --revert) keeps
	# its image whatever its age
	cp "$IMG.manifest" "$IMG.old.manifest"
	new_image 7
	rb publish --content-addressed --keep=1 "$IMG"
	expect_status 0
	new_image 8
	rb publish --content-addressed --keep=1 "$IMG"
	expect_status 0
	[ "$(ca_files)" = "$(printf '%s\n' "$(ca_name 6)" "$(ca_name 7)" "$(ca_name 8)" |
		LC_ALL=C sort)" ]
	assert_named "$IMG.old.manifest"
	# a publish without --content-addressed removes none of them
	new_image 9
	rb publish "$IMG"
	expect_status 0
	[ "$(ca_files | wc -l)" -eq 3 ]
	[ -z "$(field image "$IMG.manifest")" ]
}

@test "publish --content-addressed=copy: never the image's own file; the copy has its bytes and mtime" {
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	assert_named "$IMG.manifest"
	[ "$(stat -c %i "$IMG")" != "$(stat -c %i "$OUT/$(ca_name 1)")" ]
	[ "$(stat -c %Y "$OUT/$(ca_name 1)")" = "$(stat -c %Y "$IMG")" ]
	[[ $output =~ ": the image, "(reflink|copy) ]]
	# a hard link made before is replaced by a copy
	rm "$OUT/$(ca_name 1)"
	ln "$IMG" "$OUT/$(ca_name 1)"
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	[ "$(stat -c %h "$IMG")" -eq 1 ]
	cmp "$OUT/$(ca_name 1)" "$T/img.1"
}

@test "publish --content-addressed: a file of other bytes at the name is replaced; the same bytes stay" {
	local ino
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	ino=$(stat -c %i "$OUT/$(ca_name 1)")
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	[[ $output == *"already there"* ]]
	[ "$(stat -c %i "$OUT/$(ca_name 1)")" = "$ino" ]
	# damaged at the name: replaced by the image's bytes
	printf 'X' | dd of="$OUT/$(ca_name 1)" bs=1 seek=1000 conv=notrunc status=none
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	cmp "$OUT/$(ca_name 1)" "$T/img.1"
}

@test "publish --content-addressed: an image rewritten in place is warned about; its old name goes" {
	rb publish --content-addressed "$IMG"
	expect_status 0
	# written over in place (not renamed): the hard link changed too
	head -c 262144 /dev/urandom >"$IMG"
	rb publish --content-addressed "$IMG"
	expect_status 0
	[[ $stderr == *"$(ca_name 1): the same file as $IMG"*"rewritten in place"* ]]
	[ ! -e "$OUT/$(ca_name 1)" ]
	assert_named "$IMG.manifest"
}

@test "publish --content-addressed: a symbolic link or a directory at the name is refused, nothing new named (exit 1)" {
	local name kind
	rb publish --content-addressed "$IMG"
	expect_status 0
	cp "$IMG.manifest" "$T/m1"
	new_image 2
	name=$(ca_name 2)
	for kind in link dangling dir; do
		rm -rf "${OUT:?}/$name"
		case $kind in
		link) ln -s "$T/img.2" "$OUT/$name" ;;
		dangling) ln -s "$T/nowhere" "$OUT/$name" ;;
		dir) mkdir "$OUT/$name" ;;
		esac
		rb publish --content-addressed "$IMG"
		expect_status 1
		[[ $stderr == *"$name: "*"there: refused"* ]] || fail "$kind: $stderr"
		cmp "$IMG.manifest" "$T/m1"
		[ ! -e "$T/nowhere" ]
	done
	[ -d "$OUT/$name" ]
}

# assert_old_or_new: the manifest is the first or the second publish's,
# and the file it names holds its bytes; the first image's name is
# there with its bytes; IMAGE is untouched.
assert_old_or_new() {
	if ! cmp -s "$IMG.manifest" "$T/m1"; then
		[ "$(field image "$IMG.manifest")" = "$(ca_name 2)" ] || fail "a third manifest"
	fi
	assert_named "$IMG.manifest"
	cmp "$OUT/$(ca_name 1)" "$T/img.1"
	cmp "$IMG" "$T/img.2"
}

@test "publish --content-addressed: killed at each step, the old manifest or the new one, each with its image, never torn" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local how rule n=0 fired rc
	for how in link copy; do
		rm -rf "${OUT:?}" "$T/snap"
		mkdir "$OUT"
		new_image 1
		rb publish --sign="$KEY" --content-addressed="$how" "$IMG"
		expect_status 0
		cp "$IMG.manifest" "$T/m1"
		new_image 2
		cp -a "$OUT" "$T/snap"
		# each fsync (the image, a copy, the directory, the manifest),
		# a copy's reflink, its copying; each from the
		# state before the publish
		for rule in 'fsync:nth=1' 'fsync:nth=2' 'fsync:nth=3' 'fsync:nth=4' \
			'fsync:nth=5' 'ioctl:nth=1' \
			'copy_file_range:nth=1'; do
			rm -rf "${OUT:?}"
			cp -a "$T/snap" "$OUT"
			: >"$(faultinj_log)"
			run faultinj_run "$rule:prog=ramboot:times=1:signal=KILL" \
				"$RAMBOOT_BIN" publish --sign="$KEY" --content-addressed="$how" "$IMG"
			rc=$status
			fired=$(faultinj_count)
			echo "# $how $rule: fired $fired, exit $rc" >&3
			[ "$fired" -eq 0 ] || [ "$rc" -eq 137 ] || fail "$how $rule: exit $rc"
			assert_old_or_new
			run "$RAMBOOT_BIN" sign --check --keys="$KEYS" "$IMG.manifest"
			expect_status 0
			n=$((n + fired))
			# the next publish ends it: the new image named, no
			# temporary left
			rb publish --sign="$KEY" --content-addressed="$how" "$IMG"
			expect_status 0
			[ "$(field image "$IMG.manifest")" = "$(ca_name 2)" ]
			assert_old_or_new
			if files | grep -q '^\.'; then fail "$how $rule: temporary files left: $(files)"; fi
		done
	done
	# link: 4 fsyncs; copy: 5, and its reflink or its copying
	[ "$n" -ge 10 ]
}

@test "publish --content-addressed: a full disk or an I/O error at the image's name leaves the old manifest and its image (exit 1)" {
	faultinj_require_dynamic "$RAMBOOT_BIN"
	local rule last
	rb publish --content-addressed "$IMG"
	expect_status 0
	cp "$IMG.manifest" "$T/m1"
	new_image 2
	# the reflink refused (as on ext4), then: the kernel's copy finds the
	# disk full; the copy through a buffer does; the copy's fsync, the
	# image's fsync fail
	for rule in 'copy_file_range:prog=ramboot:errno=ENOSPC' \
		'copy_file_range:prog=ramboot:errno=EXDEV;pwrite:prog=ramboot:errno=ENOSPC' \
		'fsync:prog=ramboot:nth=2:errno=EIO' 'fsync:prog=ramboot:nth=1:errno=EIO'; do
		: >"$(faultinj_log)"
		run --separate-stderr faultinj_run "ioctl:prog=ramboot:errno=EOPNOTSUPP;$rule" \
			"$RAMBOOT_BIN" publish --content-addressed=copy "$IMG"
		last=${rule##*;}
		assert_fault_fired "call=${last%%:*} .*action=errno"
		expect_status 1
		cmp "$IMG.manifest" "$T/m1"
		[ ! -e "$OUT/$(ca_name 2)" ] || fail "$rule: $(ca_name 2) named"
		if files | grep -q '^\.'; then fail "$rule: temporary files left: $(files)"; fi
		assert_named "$IMG.manifest"
	done
	# then it works
	rb publish --content-addressed=copy "$IMG"
	expect_status 0
	assert_named "$IMG.manifest"
	cmp "$OUT/$(ca_name 2)" "$T/img.2"
}

@test "publish --content-addressed: usage errors exit 2, nothing written" {
	rb publish --keep=2 "$IMG"
	expect_status 2
	rb publish --content-addressed=hard "$IMG"
	expect_status 2
	rb publish --content-addressed --keep=0 "$IMG"
	expect_status 2
	rb publish --content-addressed --keep=x "$IMG"
	expect_status 2
	rb publish --content-addressed --keep=-1 "$IMG"
	expect_status 2
	[ "$(files)" = x.img ]
	rb publish --help
	expect_status 0
	[[ $output == *"--content-addressed"* ]]
}

# boot_root WORD: a fixture root for `ramboot boot` (tests/boot-cmd.bats)
# with a squashfs at root/images/x.img, made aside and renamed into place
# as `ltsp image` does (mksquashfs -noappend over it would write into the
# file its content-addressed name shares).
boot_root() {
	R=$T/root
	mkdir -p "$R/proc" "$R/root/images" "$R/etc" "$T/tree/etc" "$T/tree/sbin"
	printf 'MemTotal: 8100000 kB\nMemFree: 8000000 kB\nMemAvailable: 8000000 kB\n' \
		>"$R/proc/meminfo"
	echo "$1" >"$T/tree/etc/hostname"
	head -c 300000 /dev/urandom >"$T/tree/sbin/init"
	mksquashfs "$T/tree" "$T/new.img" -quiet -noappend -no-progress >/dev/null
	mv "$T/new.img" "$R/root/images/x.img"
	echo "ramboot=ram ramboot.target=tmpfs ltsp.image=images/x.img,fstype=squashfs" \
		>"$R/proc/cmdline"
}

boot_cleanup() {
	if grep -qs " $R/run/ramboot/ram " /proc/mounts; then
		umount "$R/run/ramboot/ram" || umount -l "$R/run/ramboot/ram"
	fi
}

report() { # key -> value
	sed -n "s/^$1=//p" "$R/run/ramboot/report"
}

@test "boot: a RAM copy of the file the manifest names, while a new image already sits at IMAGE" {
	is_root || skip "needs root (a tmpfs mount)"
	local name
	boot_root first
	"$RAMBOOT_BIN" publish --content-addressed "$R/root/images/x.img" >/dev/null
	name=$(field image "$R/root/images/x.img.manifest")
	cp "$R/root/images/x.img" "$T/first.img"
	# `ltsp image` has put the next image in place, not yet published
	rm -rf "$T/tree"
	boot_root second
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot
	boot_cleanup
	expect_status 0
	[ "$(report hash)" = ok ]
	[ "$(report fallback)" = "" ]
	[ "$(report source)" = "$R/root/images/$name" ]
	[[ $output == "RAMBOOT_IMAGE=$R/run/ramboot/ram/"* ]]
	[ "$(report bytes)" = "$(stat -c %s "$T/first.img")" ]
}

@test "boot: the file the manifest names is gone: a warning, the image itself is read" {
	is_root || skip "needs root (a tmpfs mount)"
	boot_root first
	"$RAMBOOT_BIN" publish --content-addressed "$R/root/images/x.img" >/dev/null
	rm "$R/root/images/$(field image "$R/root/images/x.img.manifest")"
	run --separate-stderr env -u RAMBOOT RAMBOOT_ROOT="$R" "$RAMBOOT_BIN" boot
	boot_cleanup
	expect_status 0
	[[ $stderr == *"x.img.sha256-"*"No such file or directory; reading $R/root/images/x.img"* ]]
	[ "$(report hash)" = ok ]
	[ "$(report source)" = "$R/root/images/x.img" ]
}

# ltsp_rebuild N: `ltsp image` (IMAGE to IMAGE.old, image N in place)
ltsp_rebuild() {
	[ ! -f "$IMG" ] || mv "$IMG" "$IMG.old"
	new_image "$1"
}

# ltsp_publish: what `ltsp image` runs after it, the manifests following
# the images
ltsp_publish() {
	RAMBOOT_BIN=$RAMBOOT_BIN run sh "$BATS_TEST_DIRNAME/../initrd-hooks/ltsp-server.sh" image \
		"$OUT" --content-addressed
	[ "$status" -eq 0 ] || fail "ltsp-server.sh: $output"
}

# images: how many image files the directory holds (a link is one)
images() {
	find "$OUT" -maxdepth 1 -type f -name 'x.img*' ! -name '*.manifest' -printf '%i\n' |
		sort -u | wc -l
}

@test "publish --content-addressed under ltsp image: the space of images, as the docs count it" {
	rm "$IMG"
	ltsp_rebuild 1 && ltsp_publish
	ltsp_rebuild 2 && ltsp_publish
	[ "$(images)" -eq 2 ]
	# ltsp image --revert: IMAGE and IMAGE.old swapped
	mv "$IMG" "$OUT/.t" && mv "$IMG.old" "$IMG" && mv "$OUT/.t" "$IMG.old"
	ltsp_publish
	[ "$(images)" -eq 2 ]
	ltsp_rebuild 3 && ltsp_publish
	[ "$(images)" -eq 3 ]
	ltsp_rebuild 4 && ltsp_publish
	[ "$(images)" -eq 2 ]
	# a rebuild whose publish did not run
	ltsp_rebuild 5
	[ "$(images)" -eq 3 ]
	ltsp_rebuild 6 && ltsp_publish
	[ "$(images)" -eq 4 ]
	ltsp_rebuild 7 && ltsp_publish
	[ "$(images)" -eq 2 ]
	# published right after the failure: two
	ltsp_rebuild 8
	ltsp_publish
	[ "$(images)" -eq 2 ]
	ltsp_rebuild 9 && ltsp_publish
	[ "$(images)" -eq 2 ]
}
