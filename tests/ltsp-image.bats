#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The image lifecycle under LTSP's own code: the package's parts of
# LTSP's applets (initrd-hooks/ltsp/*.sh, which LTSP sources from
# /usr/share/ltsp/...; here from /run/ltsp/..., the same lookup) and
# initrd-hooks/ltsp-server.sh, driven by the real `ltsp image`, `ltsp
# image --revert`, `ltsp initrd` and `ltsp ipxe` of the installed ltsp
# package, with ltsp.conf as the README has it (the example appended,
# INCLUDE=ramboot). Each run is in a mount namespace of its own, with a
# temporary ltsp.conf bound over /etc/ltsp, a tmpfs on /run, and BASE_DIR
# and TFTP_DIR in the test's directory: the server's /srv/ltsp, /srv/tftp
# and /etc/ltsp are never touched. LTSP makes the squashfs (mksquashfs)
# of a small chroot and runs `ltsp kernel` on it, as on a server.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load helpers/ltsp

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
CONF=$TOP/conf/ltsp.conf
SERVER_SH=$TOP/initrd-hooks/ltsp-server.sh
DROPINS=$TOP/initrd-hooks/ltsp
LTSP_CONFIG=/usr/share/ltsp/common/ltsp/55-config.sh

setup() {
	T=$BATS_TEST_TMPDIR
	IMAGES=$T/srv/images
	IMG=$IMAGES/x86_64.img
}

# Each of NAME.img and NAME.img.old has its own manifest.
assert_own_manifests() {
	[ -f "$IMG.manifest" ] || fail "no $IMG.manifest"
	[ -f "$IMG.old.manifest" ] || fail "no $IMG.old.manifest"
	[ "$(man_sha "$IMG.manifest")" = "$(img_sha "$IMG")" ] || fail "$IMG.manifest is not x86_64.img's"
	[ "$(man_sha "$IMG.old.manifest")" = "$(img_sha "$IMG.old")" ] ||
		fail "$IMG.old.manifest is not x86_64.img.old's"
}

@test "LTSP: its code runs the POST_ hooks after the applet's function, under run-or-die" {
	[ -r /usr/share/ltsp/common/ltsp/55-ltsp.sh ] || skip "no ltsp package"
	run grep -A1 -x '    re "$_APPLET_FUNCTION" "$@"' /usr/share/ltsp/common/ltsp/55-ltsp.sh
	assert_success
	assert_line --index 1 '    re run_parameters "POST"'
	# image_cmdline handles --revert too: the same POST_IMAGE_* after it
	run grep -c 're revert "$img_src"' /usr/share/ltsp/server/image/35-image.sh
	assert_output 1
}

@test "ltsp image: POST_IMAGE_* runs once the image is in place, never after a failed ltsp image" {
	need_ltsp_run
	make_chroot one
	write_conf "$SERVER_SH" \
		"POST_IMAGE_PROBE=\"ls \\\"\\\$BASE_DIR/images\\\" >'$T/probe'\""
	ltsp image --cleanup=0 x86_64
	assert_success
	run cat "$T/probe"
	assert_line x86_64.img
	rm "$T/probe"
	ltsp image --cleanup=0 nosuchimage
	assert_failure
	[ ! -e "$T/probe" ]
}

@test "ltsp image: a failing ltsp kernel still leaves the new image its manifest" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$SERVER_SH"
	ltsp image --cleanup=0 x86_64
	assert_success
	make_chroot bbbb
	# where ltsp kernel copies the kernel to is no directory: it fails
	rm -rf "$T/tftp/ltsp"
	echo not-a-directory >"$T/tftp/ltsp"
	ltsp image --cleanup=0 x86_64
	assert_failure
	[[ $output == *"Running: ltsp kernel"* ]] || fail "ltsp kernel did not run: $output $stderr"
	# the image the clients read now is the new one, with its own manifest
	[ "$(man_sha "$IMG.manifest")" = "$(img_sha "$IMG")" ] ||
		fail "$IMG.manifest is not the new image's"
	assert_own_manifests
}

@test "ltsp image: the new image gets a fresh manifest, the previous one keeps its own as .old (same size)" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$SERVER_SH"
	ltsp image --cleanup=0 x86_64
	assert_success
	[[ $output == *"ramboot: publishing $IMG"* ]] || fail "output: $output"
	[ "$(man_sha "$IMG.manifest")" = "$(img_sha "$IMG")" ]
	[ ! -e "$IMG.old.manifest" ]
	first=$(img_sha "$IMG")

	make_chroot bbbb
	ltsp image --cleanup=0 x86_64
	assert_success
	# LTSP's backup, of the same size: the chunks tell them apart
	[ "$(stat -c %s "$IMG")" -eq "$(stat -c %s "$IMG.old")" ]
	[ "$(img_sha "$IMG.old")" = "$first" ]
	[ "$(img_sha "$IMG")" != "$first" ]
	assert_own_manifests

	# nothing new: another run leaves both alone
	cp "$IMG.manifest" "$T/m"
	cp "$IMG.old.manifest" "$T/om"
	RAMBOOT_BIN=$TOP/ramboot run sh "$SERVER_SH" image "$IMAGES"
	assert_success
	assert_output ''
	cmp "$IMG.manifest" "$T/m"
	cmp "$IMG.old.manifest" "$T/om"
}

@test "ltsp image --revert: each image has its own signed manifest, hash file and chunk index again, both ways" {
	need_ltsp_run
	command -v veritysetup >/dev/null || skip "no veritysetup"
	install -d -m 0700 "$T/root"
	"$TOP/ramboot" keygen "$T/root/lab.key" >/dev/null
	mkdir -p "$T/keys"
	cp "$T/root/lab.key.pub" "$T/keys/"
	make_chroot aaaa
	write_conf "$SERVER_SH" "RAMBOOT_PUBLISH_KEY=$T/root/lab.key" \
		'RAMBOOT_PUBLISH_OPTIONS="--verity --cindex"'
	ltsp image --cleanup=0 x86_64
	assert_success
	make_chroot bbbb
	ltsp image --cleanup=0 x86_64
	assert_success
	assert_own_manifests
	new=$(img_sha "$IMG")
	old=$(img_sha "$IMG.old")

	for round in 1 2; do
		ltsp image --revert x86_64
		assert_success
		assert_line "Swapped $IMG with $IMG.old"
		assert_line "ramboot: x86_64.img: reverted image, its manifest restored (the other one kept as x86_64.img.old.manifest)"
		assert_own_manifests
		if [ "$round" = 1 ]; then
			[ "$(img_sha "$IMG")" = "$old" ]
		else
			[ "$(img_sha "$IMG")" = "$new" ]
		fi
		for m in "$IMG.manifest" "$IMG.old.manifest"; do
			run "$TOP/ramboot" sign --check --keys="$T/keys" "$m"
			assert_success
		done
		# the hash file the manifest names is there and verifies
		run veritysetup verify "$IMG" "$IMAGES/$(sed -n 's/^verity-hash //p' "$IMG.manifest")" \
			"$(sed -n 's/^verity-root //p' "$IMG.manifest")"
		assert_success
		# so is the chunk index each manifest names, with its hash
		for m in "$IMG.manifest" "$IMG.old.manifest"; do
			idx=$IMAGES/$(sed -n 's/^cindex //p' "$m")
			[ -f "$idx" ] || fail "$m: no index $idx"
			[ "$(sha256sum <"$idx" | cut -d' ' -f1)" = "$(sed -n 's/^cindex-sha256 //p' "$m")" ]
		done
		run "$TOP/ramboot" cache index "$IMG"
		assert_success
		[ "$output" = "$(cat "$IMAGES/$(sed -n 's/^cindex //p' "$IMG.manifest")")" ]
	done
}

# The content-addressed image a manifest names: there, its bytes.
assert_ca_named() {
	local name
	name=$(sed -n 's/^image //p' "$1")
	[ -n "$name" ] || fail "$1: no image key"
	[ -f "$IMAGES/$name" ] || fail "$1: $name is not there"
	[ "$(img_sha "$IMAGES/$name")" = "$(man_sha "$1")" ] || fail "$1: $name has other bytes"
}

@test "ltsp image --content-addressed: each manifest names its image's own name, kept across rebuilds and --revert" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$SERVER_SH" 'RAMBOOT_PUBLISH_OPTIONS=--content-addressed'
	ltsp image --cleanup=0 x86_64
	assert_success
	assert_ca_named "$IMG.manifest"
	a=$(sed -n 's/^image //p' "$IMG.manifest")
	# a hard link: no space of its own
	[ "$(stat -c %i "$IMG")" = "$(stat -c %i "$IMAGES/$a")" ]
	make_chroot bbbb
	ltsp image --cleanup=0 x86_64
	assert_success
	assert_own_manifests
	assert_ca_named "$IMG.manifest"
	assert_ca_named "$IMG.old.manifest"
	b=$(sed -n 's/^image //p' "$IMG.manifest")
	# the third image: LTSP drops its backup of the first, whose name
	# goes too (older than the two newest, named by no manifest)
	make_chroot cccc
	ltsp image --cleanup=0 x86_64
	assert_success
	c=$(sed -n 's/^image //p' "$IMG.manifest")
	[ ! -e "$IMAGES/$a" ]
	run ls "$IMAGES"
	assert_line "$b"
	assert_line "$c"
	# LTSP sees one image (ltsp ipxe, ltsp kernel list images/*.img)
	run sh -c "cd '$IMAGES' && ls -- *.img"
	assert_output x86_64.img
	ltsp image --revert x86_64
	assert_success
	assert_own_manifests
	[ "$(sed -n 's/^image //p' "$IMG.manifest")" = "$b" ]
	assert_ca_named "$IMG.manifest"
	assert_ca_named "$IMG.old.manifest"
}

@test "ltsp image: with the hook script or the ramboot program gone, ltsp image still succeeds" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$T/gone/ltsp-server.sh"
	ltsp image --cleanup=0 x86_64
	assert_success
	[ -f "$IMG" ]
	[ ! -e "$IMG.manifest" ]

	write_conf "$SERVER_SH"
	RAMBOOT_BIN=$T/gone/ramboot ltsp image --cleanup=0 x86_64
	assert_success
	[[ $stderr == *"no $T/gone/ramboot program: images not published"* ]] || fail "stderr: $stderr"
	[ ! -e "$IMG.manifest" ]
}

@test "ltsp image: a publish that fails warns loudly and ltsp image exits 1, the image in place" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$SERVER_SH" "RAMBOOT_PUBLISH_KEY=$T/no-such.key"
	ltsp image --cleanup=0 x86_64
	assert_failure
	[ -f "$IMG" ]
	[ ! -e "$IMG.manifest" ]
	[[ $stderr == *"WARNING: $IMG is NOT published"* ]] || fail "stderr: $stderr"
	[[ $stderr == *"ramboot publish --sign=$T/no-such.key $IMG' succeeds"* ]] || fail "stderr: $stderr"
}

# LTSP's run_parameters POST for `ltsp image`, over ltsp.conf as the
# README has it and the image drop-in (its script at $1), with ramboot
# from the tree: the check that needs no mounts, for machines where the
# tests above skip. The drop-in reads /etc/ltsp/ltsp.conf: here the
# settings decide (RAMBOOT_PUBLISH_OPTIONS).
ltsp_post_image() {
	write_conf "$1" 'RAMBOOT_PUBLISH_OPTIONS=--chunk-size=4M'
	install_dropins "$T/dropins"
	mkdir -p "$IMAGES"
	{
		echo 're() { "$@" || { echo "LTSP command failed: $*"; exit 1; }; }'
		echo 'die() { echo "die: $*"; exit 1; }'
		echo ". $LTSP_CONFIG"
		echo "eval \"\$(ini2sh '$T/etc-ltsp/ltsp.conf')\" || die ini2sh"
		echo 're section_call unnamed common server'
		echo ". '$T/dropins/server/image/56-ramboot-image.sh'"
		echo "BASE_DIR='$T/srv'"
		echo '_APPLET=image'
		echo 're run_parameters POST'
		echo 'echo done'
	} >"$T/post.sh"
	PATH=$TOP:$PATH run --separate-stderr busybox sh "$T/post.sh"
}

@test "ltsp image drop-in: POST_IMAGE_RAMBOOT under LTSP's run_parameters: publishes; returns 0 with the script gone" {
	[ -r "$LTSP_CONFIG" ] || skip "no $LTSP_CONFIG (the ltsp package)"
	command -v busybox >/dev/null || skip "no busybox"
	[ -x "$TOP/ramboot" ] || skip "no ./ramboot (make)"
	ltsp_post_image "$T/gone/ltsp-server.sh"
	assert_success
	assert_output done
	head -c 1048576 /dev/urandom >"$IMG"
	ltsp_post_image "$T/gone/ltsp-server.sh"
	assert_success
	[ ! -e "$IMG.manifest" ]
	ltsp_post_image "$SERVER_SH"
	assert_success
	assert_line done
	[ "$(man_sha "$IMG.manifest")" = "$(img_sha "$IMG")" ]
}

@test "ltsp-server.sh image: a manifest of another image, a version 1 one, a link: never taken as the image's" {
	[ -x "$TOP/ramboot" ] || skip "no ./ramboot (make)"
	mkdir -p "$IMAGES"
	head -c 8392704 /dev/urandom >"$IMG"
	cp "$IMG" "$IMG.old"
	# the same size, the same first chunk: only the last one differs
	printf 'x' | dd of="$IMG" bs=1 seek=8392000 conv=notrunc 2>/dev/null
	"$TOP/ramboot" manifest "$IMG.old" >"$IMG.manifest"
	RAMBOOT_BIN=$TOP/ramboot run sh "$SERVER_SH" image "$IMAGES"
	assert_success
	assert_own_manifests
	# a version 1 manifest (no chunks) cannot be told apart cheaply
	"$TOP/ramboot" manifest --chunk-size=0 "$IMG" >"$IMG.manifest"
	RAMBOOT_BIN=$TOP/ramboot run sh "$SERVER_SH" image "$IMAGES"
	assert_success
	assert_line "ramboot: publishing $IMG"
	grep -q '^chunk 0 ' "$IMG.manifest"
	# a link at the backup's manifest's name is nobody's, even one to
	# the right manifest: it is never moved to the manifest's name
	mv "$IMG" "$T/img"
	mv "$IMG.old" "$IMG"
	mv "$T/img" "$IMG.old"
	"$TOP/ramboot" manifest "$IMG" >"$T/elsewhere.manifest"
	rm "$IMG.old.manifest"
	ln -s "$T/elsewhere.manifest" "$IMG.old.manifest"
	RAMBOOT_BIN=$TOP/ramboot run sh "$SERVER_SH" image "$IMAGES"
	assert_success
	assert_line "ramboot: publishing $IMG"
	[ ! -L "$IMG.manifest" ]
	assert_own_manifests
	[ ! -L "$IMG.old.manifest" ]
}

@test "ltsp ipxe: RAMBOOT_IPXE_INITRDS survives every ltsp ipxe, and only adds ramboot's lines" {
	need_ltsp_run
	ipxe_binaries
	IPXE=$T/tftp/ltsp/ltsp.ipxe
	write_conf "$SERVER_SH"
	ltsp ipxe
	assert_success
	cp "$IPXE" "$T/plain.ipxe"
	# without the setting, the hook leaves LTSP's file as it is
	grep -q '^kernel /ltsp/${img}/vmlinuz initrd=ltsp.img initrd=initrd.img ${cmdline}$' "$IPXE"

	write_conf "$SERVER_SH" "RAMBOOT_IPXE_INITRDS=\"ramboot-udpcast.img extra.img\""
	for run_no in 1 2; do
		ltsp ipxe
		assert_success
		assert_line "ramboot: $IPXE: loads ramboot-udpcast.img extra.img"
		run diff --unchanged-line-format= --old-line-format='< %L' --new-line-format='> %L' \
			"$T/plain.ipxe" "$IPXE"
		assert_output - <<'EOF'
< kernel /ltsp/${img}/vmlinuz initrd=ltsp.img initrd=initrd.img ${cmdline}
> # ramboot: extra initrds (ltsp.conf RAMBOOT_IPXE_INITRDS), each named
> # on the kernel line only when it could be fetched
> clear ramboot_initrds ||
> initrd /ltsp/ramboot-udpcast.img && set ramboot_initrds ${ramboot_initrds} initrd=ramboot-udpcast.img ||
> initrd /ltsp/extra.img && set ramboot_initrds ${ramboot_initrds} initrd=extra.img ||
> kernel /ltsp/${img}/vmlinuz initrd=ltsp.img ${ramboot_initrds} initrd=initrd.img ${cmdline}
EOF
	done
	cp "$IPXE" "$T/ours.ipxe"
	# kept by `ltsp --overwrite=0 ipxe`: the hook adds nothing twice
	ltsp --overwrite=0 ipxe
	assert_success
	cmp "$IPXE" "$T/ours.ipxe"
	# one more: added to the block that is there
	write_conf "$SERVER_SH" "RAMBOOT_IPXE_INITRDS=\"ramboot-udpcast.img extra.img third.img\""
	ltsp --overwrite=0 ipxe
	assert_success
	run grep -c '^clear ramboot_initrds ||$' "$IPXE"
	assert_output 1
	run grep -c '^initrd /ltsp/third.img && set ramboot_initrds ${ramboot_initrds} initrd=third.img ||$' "$IPXE"
	assert_output 1
	run grep -c '^kernel .*${ramboot_initrds}' "$IPXE"
	assert_output 1
}

@test "ltsp-server.sh ipxe: a name that is not a plain file name, or a file without LTSP's kernel line: exit 1, unchanged" {
	mkdir -p "$T/tftp/ltsp"
	IPXE=$T/tftp/ltsp/ltsp.ipxe
	printf '#!ipxe\nkernel /boot/vmlinuz\nboot\n' >"$IPXE"
	cp "$IPXE" "$T/before"
	run sh "$SERVER_SH" ipxe "$IPXE" ramboot.img
	assert_failure 1
	assert_output --partial "not one 'kernel /ltsp/\${img}/vmlinuz initrd=ltsp.img ... initrd=initrd.img' line"
	cmp "$IPXE" "$T/before"
	sed 's|^kernel .*|kernel /ltsp/${img}/vmlinuz initrd=ltsp.img initrd=initrd.img ${cmdline}|' "$T/before" >"$IPXE"
	cp "$IPXE" "$T/before"
	for bad in ../x.img 'a b' 'x;reboot' ''; do
		run sh "$SERVER_SH" ipxe "$IPXE" "$bad"
		assert_failure 1
		cmp "$IPXE" "$T/before"
	done
	run sh "$SERVER_SH" ipxe "$T/none.ipxe" ramboot.img
	assert_failure 1
	run sh "$SERVER_SH" ipxe "$IPXE"
	assert_failure 2
	[ -z "$(find "$T/tftp/ltsp" -name '.*')" ]
}

@test "ltsp-server.sh: shellcheck-clean POSIX sh" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck "$SERVER_SH"
	assert_success
}

@test "ltsp-server.sh, the drop-ins: shellcheck-clean POSIX sh" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck -s sh "$DROPINS"/*.sh
	assert_success
}

# The paths of image $1, one a line, without the leading squashfs-root/.
img_paths() {
	unsquashfs -lc "$1" | sed 's|^squashfs-root/||'
}

@test "ltsp image: the admin's ADD_IMAGE_EXCLUDES (a file or a list) still applies, and etc/ramboot/*.key is left out" {
	need_ltsp_run
	command -v unsquashfs >/dev/null || skip "no unsquashfs"
	make_chroot aaaa
	local r=$T/srv/x86_64
	mkdir -p "$r/opt/exams" "$r/etc/ramboot" "$r/opt/tools"
	echo secret >"$r/opt/exams/answers"
	echo key >"$r/etc/ramboot/lab.key"
	echo pub >"$r/etc/ramboot/lab.key.pub"
	echo tool >"$r/opt/tools/t"
	# As the guide of ramboot 0.2 had it: [ramboot_server] included after
	# the admin's own excludes; now the INCLUDE names no section.
	write_conf "$SERVER_SH" 'ADD_IMAGE_EXCLUDES=/etc/ltsp/add-image.excludes' 'INCLUDE=ramboot_server'
	printf '# the exams\nopt/exams/*\n' >"$T/etc-ltsp/add-image.excludes"
	ltsp image --cleanup=0 x86_64
	assert_success
	run img_paths "$IMG"
	refute_line opt/exams/answers
	refute_line etc/ramboot/lab.key
	assert_line etc/ramboot/lab.key.pub
	assert_line opt/tools/t
	# the admin's file is read, never written
	[ "$(cat "$T/etc-ltsp/add-image.excludes")" = "$(printf '# the exams\nopt/exams/*')" ]

	write_conf "$SERVER_SH" 'ADD_IMAGE_EXCLUDES="opt/exams/*"'
	ltsp image --cleanup=0 x86_64
	assert_success
	run img_paths "$IMG"
	refute_line opt/exams/answers
	refute_line etc/ramboot/lab.key
	assert_line opt/tools/t
	# nothing of the run left behind
	[ -z "$(ls -A "$T/dropins/server/image" | grep -v '^56-ramboot-image.sh$')" ]
}

@test "ltsp initrd: with INCLUDE=ramboot only, a private key in /etc/ltsp/ramboot/keys stops it; public keys go into ltsp.img" {
	need_ltsp_run
	command -v cpio >/dev/null || skip "no cpio"
	write_conf "$SERVER_SH"
	mkdir -p "$T/etc-ltsp/ramboot/keys"
	"$TOP/ramboot" keygen "$T/lab.key" >/dev/null
	cp "$T/lab.key.pub" "$T/etc-ltsp/ramboot/keys/"
	ltsp initrd
	assert_success
	[ -f "$T/tftp/ltsp/ltsp.img" ]
	cpio -it <"$T/tftp/ltsp/ltsp.img" 2>/dev/null | grep -qx 'etc/ltsp/ramboot/keys/lab.key.pub'
	cp "$T/tftp/ltsp/ltsp.img" "$T/before.img"
	cp "$T/lab.key" "$T/etc-ltsp/ramboot/keys/lab.key"
	ltsp initrd
	assert_failure
	[[ $stderr == *"/etc/ltsp/ramboot/keys/lab.key"* ]] || fail "stderr: $stderr"
	[[ $stderr == *"ltsp.img not written"* ]] || fail "stderr: $stderr"
	# the previous ltsp.img stays, without the key
	cmp "$T/tftp/ltsp/ltsp.img" "$T/before.img"
}

@test "ltsp image --revert: both manifests are readable by all (0644), as the clients read them" {
	need_ltsp_run
	make_chroot aaaa
	write_conf "$SERVER_SH"
	ltsp image --cleanup=0 x86_64
	assert_success
	make_chroot bbbb
	ltsp image --cleanup=0 x86_64
	assert_success
	ltsp image --revert x86_64
	assert_success
	assert_own_manifests
	[ "$(stat -c %a "$IMG.manifest")" = 644 ] || fail "$(stat -c %a "$IMG.manifest") $IMG.manifest"
	[ "$(stat -c %a "$IMG.old.manifest")" = 644 ] || fail "$(stat -c %a "$IMG.old.manifest") $IMG.old.manifest"
}
