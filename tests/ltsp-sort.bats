#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ltsp image` lays the image out in boot order: the image drop-in
# (initrd-hooks/ltsp/image.sh, LTSP's 56-ramboot-image.sh) turns the boot
# profiles on the server into a mksquashfs sort file and adds `-sort
# FILE` to MKSQUASHFS_PARAMS for that image. The drop-in runs here under
# LTSP's own functions (/usr/share/ltsp/ltsp, sourced: warn, re, rw,
# exit_command, at_exit), as `ltsp image` runs it between 55-cleanup and
# 65-mksquashfs, with a fake `ramboot` first in PATH that records its
# arguments and writes a sort file (or fails); the last tests run LTSP's
# real 65-mksquashfs (mksquashfs_main) with the result, and the last one
# the real `ltsp image` (tests/helpers/ltsp.bash, as tests/ltsp-image.bats)
# with the tree's real `ramboot profile sort`, from a profile written by
# hand (tests/helpers/profile.bash) of the image it built before.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load helpers/ltsp
load helpers/profile

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
CONF=$TOP/conf/ltsp.conf
SERVER_SH=$TOP/initrd-hooks/ltsp-server.sh
DROPINS=$TOP/initrd-hooks/ltsp
HOOK=$TOP/initrd-hooks/ltsp/image.sh
LTSP_MAIN=/usr/share/ltsp/ltsp
LTSP_MKSQ=/usr/share/ltsp/server/image/65-mksquashfs.sh

setup() {
	[ -r "$LTSP_MAIN" ] || skip "no $LTSP_MAIN (the ltsp package)"
	T=$BATS_TEST_TMPDIR
	SRV=$T/srv
	COW=$T/cow
	mkdir -p "$T/bin" "$COW/root/etc" "$COW/root/usr/bin"
	echo motd >"$COW/root/etc/motd"
	echo sh >"$COW/root/usr/bin/sh"
	# ramboot profile sort IMAGE PROFILE... -o FILE: its arguments, one
	# a line, into $T/args; FAKE_SORT=fail: an error; =none: no file.
	cat >"$T/bin/ramboot" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >>'$T/args'
case \${FAKE_SORT-} in
fail) echo "ramboot: profile: error: \$4: not recorded on \$3" >&2; exit 1 ;;
none) exit 0 ;;
esac
while [ "\$#" -gt 1 ]; do [ "\$1" = -o ] && out=\$2; shift; done
printf '%s\n' 'usr/bin/sh 32767' 'etc/motd 32766' >"\$out"
EOF
	chmod +x "$T/bin/ramboot"
}

# The drop-in's main for each image name $@ (default x86_64), as `ltsp
# image` runs it: BASE_DIR=$SRV, _COW_DIR=$COW/root, MKSQUASHFS_PARAMS
# from $PARAMS; then, per image, the MKSQUASHFS_PARAMS it leaves and the
# sort file's contents. MKSQ=1: LTSP's mksquashfs_main builds the image
# after (its `ltsp kernel` is this script, which returns 0). Then LTSP's
# exit commands, and what is left in $COW. The ltsp.conf settings come
# from the environment (RAMBOOT_LTSP_SORT, RAMBOOT_LTSP_SORT_PROFILES).
hook() {
	cat >"$T/drv.sh" <<'EOF'
#!/bin/sh
[ "${1-}" != kernel ] || exit 0
_APPLET=image
DEBUG_LOG=0
POST_IMAGE_RAMBOOT=:
. "$LTSP_MAIN"
_APPLET_DIR=${LTSP_MKSQ%/*}
. "$HOOK"
[ "${MKSQ-}" != 1 ] || . "$LTSP_MKSQ"
BASE_DIR=$SRV
_COW_DIR=$COW/root
MKSQUASHFS_PARAMS=$PARAMS
IONICE= BACKUP=1
for _IMG_NAME in ${NAMES:-x86_64}; do
	ramboot_image_main "$_IMG_NAME"
	echo "params=$MKSQUASHFS_PARAMS"
	[ ! -f "$COW/ramboot.sort" ] || sed 's/^/sort: /' "$COW/ramboot.sort"
	[ "${MKSQ-}" != 1 ] || mksquashfs_main >/dev/null
done
at_exit -EXIT
echo "left: $(ls -A "$COW" | tr '\n' ' ')"
EOF
	chmod +x "$T/drv.sh"
	export LTSP_MAIN LTSP_MKSQ HOOK SRV COW PARAMS
	# shellcheck disable=SC2086 # SH: a command and its arguments
	PATH=$T/bin:$PATH run --separate-stderr ${SH:-sh} "$T/drv.sh"
}

# Files $2... of tree $1, each 8 KiB holding a marker of its own name.
marked() {
	local r=$1 f
	shift
	for f in "$@"; do
		mkdir -p "$r/${f%/*}"
		python3 -c "import sys; sys.stdout.write(('MARK-%s-' % sys.argv[1]).ljust(8192, 'x'))" \
			"$f" >"$r/$f"
	done
}

# The previous image and a profile of it, in $SRV/images.
previous() {
	mkdir -p "$SRV/images"
	echo image >"$SRV/images/x86_64.img"
	echo profile >"$SRV/images/x86_64.img.profile"
}

@test "ltsp image: a profile of the previous image: -sort FILE for that run, the file kept as NAME.img.sort, the temporary removed" {
	previous
	PARAMS='-comp xz -b 1M' hook
	assert_success
	assert_equal "$stderr" ""
	assert_line "params=-comp xz -b 1M -sort $COW/ramboot.sort"
	assert_line 'sort: usr/bin/sh 32767'
	assert_line 'sort: etc/motd 32766'
	assert_line 'left: root '
	run cat "$T/args"
	assert_output "$(printf '%s\n' profile sort "$SRV/images/x86_64.img" \
		"$SRV/images/x86_64.img.profile" -o "$COW/ramboot.sort")"
	run cat "$SRV/images/x86_64.img.sort"
	assert_output "$(printf '%s\n' 'usr/bin/sh 32767' 'etc/motd 32766')"
}

@test "ltsp image drop-in, sort: busybox sh runs it the same" {
	command -v busybox >/dev/null || skip "no busybox"
	previous
	SH="busybox sh" PARAMS= hook
	assert_success
	assert_equal "$stderr" ""
	assert_line "params=-sort $COW/ramboot.sort"
	assert_line 'left: root '
}

@test "ltsp image: no profile, or RAMBOOT_LTSP_SORT=0: MKSQUASHFS_PARAMS unchanged, ramboot not run, no message" {
	mkdir -p "$SRV/images"
	echo image >"$SRV/images/x86_64.img"
	PARAMS='-comp xz' hook
	assert_success
	assert_equal "$stderr" ""
	assert_line 'params=-comp xz'
	refute_line --partial 'sort: '
	echo profile >"$SRV/images/x86_64.img.profile"
	echo 'etc/motd 1' >"$SRV/images/x86_64.img.sort"
	RAMBOOT_LTSP_SORT=0 PARAMS='-comp xz' hook
	assert_success
	assert_equal "$stderr" ""
	assert_line 'params=-comp xz'
	[ ! -e "$T/args" ]
}

@test "ltsp image: the admin's own -sort in MKSQUASHFS_PARAMS is kept, with one warning" {
	previous
	PARAMS='-comp xz -sort /etc/ltsp/my.sort' hook
	assert_success
	assert_line 'params=-comp xz -sort /etc/ltsp/my.sort'
	assert_equal "$stderr" "ramboot: MKSQUASHFS_PARAMS has its own -sort, kept: image x86_64 not sorted by boot profiles"
	[ ! -e "$T/args" ]
	PARAMS="$(printf -- '-comp xz\t-sort\t/etc/ltsp/my.sort')" hook
	assert_success
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "stderr: $stderr"
	[ ! -e "$T/args" ]
}

@test "ltsp image: a failing sort: one warning with its reason, the image unsorted, nothing left" {
	previous
	FAKE_SORT=fail PARAMS='-comp xz' hook
	assert_success
	assert_line 'params=-comp xz'
	assert_line 'left: root '
	assert_equal "$stderr" "ramboot: image x86_64 not sorted: ramboot: profile: error: $SRV/images/x86_64.img.profile: not recorded on $SRV/images/x86_64.img"
	[ ! -e "$SRV/images/x86_64.img.sort" ]
	# exit 0 without the file: the same
	FAKE_SORT=none PARAMS= hook
	assert_success
	assert_line 'params='
	assert_equal "$stderr" "ramboot: image x86_64 not sorted: no sort file written"
	# no previous image to map the profile on
	rm "$SRV/images/x86_64.img"
	rm "$T/args"
	PARAMS= hook
	assert_success
	assert_line 'params='
	assert_equal "$stderr" "ramboot: image x86_64 not sorted: no $SRV/images/x86_64.img to map the profiles on"
	[ ! -e "$T/args" ]
}

@test "ltsp image: profiles that no longer fit (a rebuilt image): sorted by the kept NAME.img.sort, one warning" {
	previous
	PARAMS= hook
	assert_success
	FAKE_SORT=fail PARAMS= hook
	assert_success
	assert_line "params=-sort $COW/ramboot.sort"
	assert_line 'sort: usr/bin/sh 32767'
	assert_line 'left: root '
	assert_equal "$stderr" "ramboot: boot profiles not used (ramboot: profile: error: $SRV/images/x86_64.img.profile: not recorded on $SRV/images/x86_64.img): image x86_64 sorted by $SRV/images/x86_64.img.sort"
	# the profile gone: the kept file, silently
	rm "$SRV/images/x86_64.img.profile" "$T/args"
	PARAMS= hook
	assert_success
	assert_equal "$stderr" ""
	assert_line "params=-sort $COW/ramboot.sort"
	[ ! -e "$T/args" ]
}

@test "ltsp image: RAMBOOT_LTSP_SORT_PROFILES names several profiles (patterns), merged by one sort" {
	previous
	mkdir -p "$T/profiles"
	echo a >"$T/profiles/a.profile"
	echo b >"$T/profiles/b.profile"
	RAMBOOT_LTSP_SORT_PROFILES="$T/profiles/*.profile $T/other.profile" PARAMS= hook
	assert_success
	assert_line "params=-sort $COW/ramboot.sort"
	run cat "$T/args"
	assert_output "$(printf '%s\n' profile sort "$SRV/images/x86_64.img" \
		"$T/profiles/a.profile" "$T/profiles/b.profile" "$T/other.profile" -o "$COW/ramboot.sort")"
}

@test "ltsp image: several images in one run: each starts from the admin's MKSQUASHFS_PARAMS" {
	previous
	NAMES='x86_64 i386' PARAMS='-comp xz' hook
	assert_success
	assert_line --index 0 "params=-comp xz -sort $COW/ramboot.sort"
	assert_line 'params=-comp xz'
	assert_equal "$stderr" ""
}

@test "ltsp image: a space in BASE_DIR is quoted; a run directory that is no plain path: one warning, unsorted" {
	SRV="$T/s r v"
	previous
	PARAMS= hook
	assert_success
	assert_equal "$stderr" ""
	assert_line "params=-sort $COW/ramboot.sort"
	run sed -n 3,4p "$T/args"
	assert_output "$(printf '%s\n' "$SRV/images/x86_64.img" "$SRV/images/x86_64.img.profile")"
	mv "$COW" "$T/c o w"
	COW="$T/c o w"
	rm "$T/args"
	PARAMS= hook
	assert_success
	assert_line 'params='
	assert_equal "$stderr" "ramboot: image x86_64 not sorted: no plain path for its sort file ($COW/ramboot.sort)"
	[ ! -e "$T/args" ]
}

@test "ltsp image: a link planted at the sort file's path is replaced, never written through" {
	previous
	echo victim >"$T/victim"
	ln -s "$T/victim" "$COW/ramboot.sort"
	ln -s "$T/victim" "$SRV/images/x86_64.img.sort.tmp"
	PARAMS= hook
	assert_success
	assert_line "params=-sort $COW/ramboot.sort"
	[ "$(cat "$T/victim")" = victim ]
	[ ! -L "$SRV/images/x86_64.img.sort" ]
	[ ! -e "$SRV/images/x86_64.img.sort.tmp" ]
	assert_line 'left: root '
}

# The marked files (marked()) of tree $2 (default $COW/root) in the
# order of their data in image $1, which is uncompressed.
data_order() {
	python3 - "$1" "${2:-$COW/root}" <<'EOF'
import os, sys
d = open(sys.argv[1], 'rb').read()
r = []
for root, _, fs in os.walk(sys.argv[2]):
    for f in fs:
        n = os.path.relpath(os.path.join(root, f), sys.argv[2])
        r.append((d.find(('MARK-%s-' % n).encode()), n))
print(' '.join(n for o, n in sorted(r) if o >= 0))
EOF
}

@test "ltsp image, LTSP's own mksquashfs_main: the sort file's paths, relative to _COW_DIR, lay those files first, in order" {
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	command -v python3 >/dev/null || skip "no python3"
	previous
	marked "$COW/root" etc/motd usr/bin/sh usr/bin/zz etc/aa
	MKSQ=1 PARAMS='-noI -noD -noF -no-fragments' hook
	assert_success
	assert_line 'left: root '
	run data_order "$SRV/images/x86_64.img"
	assert_output --regexp '^usr/bin/sh etc/motd '
	# unsorted, the directory order
	MKSQ=1 RAMBOOT_LTSP_SORT=0 PARAMS='-noI -noD -noF -no-fragments' hook
	assert_success
	run data_order "$SRV/images/x86_64.img"
	assert_output 'etc/aa etc/motd usr/bin/sh usr/bin/zz'
}

@test "ltsp image, LTSP's own mksquashfs_main: a kept sort file naming files gone still builds the image" {
	command -v mksquashfs >/dev/null || skip "no mksquashfs (squashfs-tools)"
	previous
	printf '%s\n' 'usr/bin/gone 32767' 'etc/motd 32766' >"$SRV/images/x86_64.img.sort"
	rm "$SRV/images/x86_64.img.profile"
	MKSQ=1 PARAMS= hook
	assert_success
	assert_line "params=-sort $COW/ramboot.sort"
	[[ $stderr == *'Cannot stat sortlist entry "usr/bin/gone"'* ]] || fail "stderr: $stderr"
	run unsquashfs -lc "$SRV/images/x86_64.img"
	assert_line squashfs-root/etc/motd
}

# The first $2 files of image $1 by the offset of their data, from
# `ramboot profile extents IMAGE` (the image's layout): "PATH..." while
# the first starts right after the superblock (96) and each one where
# the one before ended; "gap before PATH" otherwise.
first_contiguous() {
	"$TOP/ramboot" profile extents "$1" | grep -v -e '<' -e ' (fragment)$' | sort -n -k1,1 |
		head -n "$2" | awk -v end=96 '$1 != end { print "gap before " $3; exit }
			{ end = $1 + $2; l = l (NR > 1 ? " " : "") $3 } END { if (l) print l }' | tail -n 1
}

@test "ltsp image, the real one: a profile of the previous image in BASE_DIR/images sorts the image by the real ramboot profile sort; RAMBOOT_LTSP_SORT=0 in [server] does not; nothing left behind" {
	need_ltsp_run
	command -v python3 >/dev/null || skip "no python3"
	local r=$T/srv/x86_64 img=$T/srv/images/x86_64.img o n p ranges=()
	make_chroot aaaa
	rm "$r/etc/motd" "$r/sbin/init"
	marked "$r" etc/motd sbin/init usr/bin/sh usr/lib/a usr/lib/z
	write_conf "$SERVER_SH"
	ltsp image --cleanup=0 -m '-noI -noD -noF -no-fragments' x86_64
	assert_success
	[ ! -e "$img.sort" ]
	run data_order "$img" "$r"
	assert_output 'etc/motd sbin/init usr/bin/sh usr/lib/a usr/lib/z'
	# A boot of that image read one page of usr/lib/z, then sbin/init,
	# then usr/bin/sh (each file is 8 KiB: a whole page lies in it).
	for f in usr/lib/z sbin/init usr/bin/sh; do
		read -r o n p < <("$TOP/ramboot" profile extents "$img" | grep " $f\$")
		[ "$p" = "$f" ] && [ "$n" -eq 8192 ] || fail "extents of $f: $o $n $p"
		ranges+=($(((o + 4095) / 4096 * 4096)) 4096)
	done
	write_profile "$img.profile" "$img" "${ranges[@]}"
	ltsp image --cleanup=0 -m '-noI -noD -noF -no-fragments' x86_64
	assert_success
	[[ $stderr != *"LTSP command failed"* ]] || fail "stderr: $stderr"
	[[ $stderr != *ramboot:* ]] || fail "stderr: $stderr"
	run cat "$img.sort"
	assert_output "$(printf '%s\n' 'usr/lib/z 32767' 'sbin/init 32766' 'usr/bin/sh 32765')"
	run first_contiguous "$img" 3
	assert_output 'usr/lib/z sbin/init usr/bin/sh'
	run data_order "$img" "$r"
	assert_output --regexp '^usr/lib/z sbin/init usr/bin/sh '
	# the published manifest is the sorted image's
	[ "$(man_sha "$img.manifest")" = "$(img_sha "$img")" ]
	[ -z "$(find "$T/srv" -name 'ramboot*.sort*' -o -name '*.tmp')" ] ||
		fail "left: $(find "$T/srv" -name 'ramboot*.sort*' -o -name '*.tmp')"

	write_conf "$SERVER_SH" RAMBOOT_LTSP_SORT=0
	ltsp image --cleanup=0 -m '-noI -noD -noF -no-fragments' x86_64
	assert_success
	run data_order "$img" "$r"
	assert_output 'etc/motd sbin/init usr/bin/sh usr/lib/a usr/lib/z'
}
