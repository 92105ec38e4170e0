#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The shipped ltsp.conf sections (conf/ltsp.conf, examples/ltsp.conf in
# the package) under LTSP's own code: its ini2sh turns each section into
# a shell function, a second [clients] replaces the first, and LTSP runs
# PRE_INITRD_BOTTOM_* under run-or-die. The sections must never clobber
# the admin's [clients], and the hook line must be harmless once the
# package is gone. Also the package's warning on removal.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
CONF=$TOP/conf/ltsp.conf
LTSP_CONFIG=/usr/share/ltsp/common/ltsp/55-config.sh
HOOK_PATH=/etc/ltsp/ramboot/ltsp-hook.sh

setup() {
	T=$BATS_TEST_TMPDIR
	# busybox sh as one program, for `run`
	if command -v busybox >/dev/null; then
		printf '#!/bin/sh\nexec busybox sh "$@"\n' >"$T/bbsh"
		chmod +x "$T/bbsh"
	fi
}

need_busybox() {
	command -v busybox >/dev/null || skip "no busybox (busybox-static)"
}

need_ltsp() {
	[ -r "$LTSP_CONFIG" ] || skip "no $LTSP_CONFIG (the ltsp package; tests/deps.sh installs it)"
	need_busybox
}

# The shipped hook line's value, with the hook's path replaced by $1.
hook_line() {
	sed -n 's/^PRE_INITRD_BOTTOM_RAMBOOT="\(.*\)"$/\1/p' "$CONF" |
		sed "s|$HOOK_PATH|$1|g"
}

# Run the value $2 of PRE_INITRD_BOTTOM_RAMBOOT as LTSP does, under set -e
# and run-or-die, in shell $1; then print "alive".
run_hook_line() {
	{
		echo 'set -e'
		echo 're() { "$@" || { echo "LTSP boot error!"; exit 1; }; }'
		printf "PRE_INITRD_BOTTOM_RAMBOOT='%s'\n" "$2"
		echo 're eval "$PRE_INITRD_BOTTOM_RAMBOOT"'
		echo 'echo alive'
	} >"$T/ltsp.sh"
	run "$1" "$T/ltsp.sh"
}

# LTSP's ini2sh over file $1, then the sections LTSP evaluates on a client
# (or, with $2=server, on the server), then print the variables named $3...
ltsp_eval() {
	local file=$1 side=$2 v
	shift 2
	{
		echo 're() { "$@" || { echo "LTSP boot error!"; exit 1; }; }'
		echo 'die() { echo "die: $*"; exit 1; }'
		echo ". $LTSP_CONFIG"
		echo "eval \"\$(ini2sh '$file')\" || die ini2sh"
		if [ "$side" = server ]; then
			echo 're section_call unnamed common server'
		else
			echo 're section_call unnamed clients common'
		fi
		for v in "$@"; do
			echo "echo \"$v=\${$v-<unset>}\""
		done
	} >"$T/eval.sh"
	run "$T/bbsh" "$T/eval.sh"
}

@test "ltsp.conf: the hook line returns 0 in LTSP's shell when the hook is gone (busybox sh, dash)" {
	need_busybox
	line=$(hook_line "$T/gone/ltsp-hook.sh")
	[ -n "$line" ]
	run_hook_line "$T/bbsh" "$line"
	assert_success
	assert_output alive
	run_hook_line dash "$line"
	assert_success
	assert_output alive
}

@test "ltsp.conf: the old unguarded form is what ends the shell (the case the guard is for)" {
	run_hook_line dash ". $T/gone/ltsp-hook.sh"
	assert_failure
	refute_output --partial alive
}

@test "ltsp.conf: the hook line sources the hook when it is there" {
	mkdir -p "$T/here"
	echo 'echo sourced; hook_var=1' >"$T/here/ltsp-hook.sh"
	line=$(hook_line "$T/here/ltsp-hook.sh")
	run_hook_line dash "$line; echo hook_var=\$hook_var"
	assert_success
	assert_line sourced
	assert_line hook_var=1
	assert_line alive
}

@test "ltsp.conf: the example holds no [clients], [server], [common] or MAC section of its own" {
	run grep -Ein '^[[:space:]]*\[(clients|server|common)\]' "$CONF"
	assert_failure
	run grep -En '^[[:space:]]*\[[0-9a-fA-F]{2}:' "$CONF"
	assert_failure
}

@test "ltsp.conf: appended to a populated ltsp.conf (LTSP's ini2sh), the admin's [clients] keys survive" {
	need_ltsp
	{
		echo '[server]'
		echo 'NAT=1'
		echo
		echo '[clients]'
		echo 'HOSTNAME=pc%{IP_ADDRESS##*.}'
		echo 'LOCAL_SWAP=1'
		echo 'INCLUDE=ramboot'
		echo
		cat "$CONF"
	} >"$T/ltsp.conf"
	ltsp_eval "$T/ltsp.conf" client HOSTNAME LOCAL_SWAP PRE_INITRD_BOTTOM_RAMBOOT ADD_IMAGE_EXCLUDES
	assert_success
	assert_line 'HOSTNAME=pc%{IP_ADDRESS##*.}'
	assert_line LOCAL_SWAP=1
	assert_line "PRE_INITRD_BOTTOM_RAMBOOT=[ ! -r $HOOK_PATH ] || . $HOOK_PATH"
	# the server's section is not a client's
	assert_line 'ADD_IMAGE_EXCLUDES=<unset>'

	ltsp_eval "$T/ltsp.conf" server NAT PRE_INITRD_BOTTOM_RAMBOOT
	assert_success
	assert_line NAT=1
	assert_line 'PRE_INITRD_BOTTOM_RAMBOOT=<unset>'
}

@test "ltsp.conf: appended without an INCLUDE, it changes nothing" {
	need_ltsp
	{
		echo '[clients]'
		echo 'LOCAL_SWAP=1'
		echo
		cat "$CONF"
	} >"$T/ltsp.conf"
	ltsp_eval "$T/ltsp.conf" client LOCAL_SWAP PRE_INITRD_BOTTOM_RAMBOOT
	assert_success
	assert_line LOCAL_SWAP=1
	assert_line 'PRE_INITRD_BOTTOM_RAMBOOT=<unset>'
}

@test "ltsp.conf: the example assigns no LTSP variable the admin may own; the admin's ADD_IMAGE_EXCLUDES survives (LTSP's ini2sh)" {
	need_ltsp
	# every assignment of the example: RAMBOOT* or ramboot's own hook
	run sh -c "grep -E '^[A-Za-z_][A-Za-z0-9_]*=' '$CONF' | cut -d= -f1 | grep -Ev '^(RAMBOOT[A-Z0-9_]*|[A-Z_]+_RAMBOOT)\$'"
	assert_failure
	assert_output ''
	{
		echo '[server]'
		echo 'ADD_IMAGE_EXCLUDES=/etc/ltsp/add-image.excludes'
		echo 'INCLUDE=ramboot_server'
		echo
		echo '[clients]'
		echo 'INCLUDE=ramboot'
		echo
		cat "$CONF"
	} >"$T/ltsp.conf"
	ltsp_eval "$T/ltsp.conf" server ADD_IMAGE_EXCLUDES OMIT_IMAGE_EXCLUDES
	assert_success
	assert_line 'ADD_IMAGE_EXCLUDES=/etc/ltsp/add-image.excludes'
	assert_line 'OMIT_IMAGE_EXCLUDES=<unset>'
}

@test "package: removal warns while ltsp.conf sources the hook unguarded, notes a guarded line, is silent otherwise" {
	mkdir -p "$T/etc/ltsp/ramboot"
	: >"$T/etc/ltsp/ramboot/ramboot"
	echo 'PRE_INITRD_BOTTOM_RAMBOOT=". /etc/ltsp/ramboot/ltsp-hook.sh"' >"$T/etc/ltsp/ltsp.conf"
	DPKG_ROOT=$T run --separate-stderr sh "$TOP/debian/ramboot.postrm" remove
	assert_success
	[[ $stderr == *"WARNING: /etc/ltsp/ltsp.conf sources /etc/ltsp/ramboot/ltsp-hook.sh unguarded"* ]]
	[ ! -e "$T/etc/ltsp/ramboot/ramboot" ]

	grep '^PRE_INITRD_BOTTOM_RAMBOOT=' "$CONF" >"$T/etc/ltsp/ltsp.conf"
	DPKG_ROOT=$T run --separate-stderr sh "$TOP/debian/ramboot.postrm" purge
	assert_success
	[[ $stderr == *"still names /etc/ltsp/ramboot/ltsp-hook.sh (harmless without it)"* ]]
	[[ $stderr != *WARNING* ]]

	echo 'LOCAL_SWAP=1' >"$T/etc/ltsp/ltsp.conf"
	DPKG_ROOT=$T run --separate-stderr sh "$TOP/debian/ramboot.postrm" remove
	assert_success
	[ -z "$stderr" ]
}

# The package's part of `ltsp initrd` (initrd-hooks/ltsp/initrd.sh, run
# by LTSP between copying /etc/ltsp and packing ltsp.img), with its keys
# directory moved to $T/keys; ramboot from the tree. The real `ltsp
# initrd` runs it in ltsp-image.bats (root).
ltsp_initrd_dropin() {
	sed "s|/etc/ltsp/ramboot/keys|$T/keys|g" "$TOP/initrd-hooks/ltsp/initrd.sh" >"$T/initrd.sh"
	{
		echo 'die() { echo "$*" >&2; exit 1; }'
		echo ". '$T/initrd.sh'"
		echo 'ramboot_initrd_main'
		echo 'echo packed'
	} >"$T/pre.sh"
	PATH=$TOP:$PATH run --separate-stderr "$T/bbsh" "$T/pre.sh"
}

@test "ltsp initrd drop-in: stops before ltsp.img packs a private key, with no ltsp.conf line" {
	need_ltsp
	[ -x "$TOP/ramboot" ] || skip "no ./ramboot (make)"
	ltsp_initrd_dropin
	assert_success
	assert_output packed
	mkdir -p "$T/keys"
	ltsp_initrd_dropin
	assert_success
	"$TOP/ramboot" keygen "$T/lab" >/dev/null
	cp "$T/lab.pub" "$T/keys/lab.pub"
	ltsp_initrd_dropin
	assert_success
	assert_line --partial "$T/keys/lab.pub: Ed25519 public key"
	assert_line packed
	cp "$T/lab" "$T/keys/lab.key"
	ltsp_initrd_dropin
	assert_failure
	refute_output --partial packed
	[[ $stderr == *"$T/keys/lab.key"* ]] || fail "stderr: $stderr"
}

@test "ltsp.conf: POST_IMAGE and POST_IPXE are the server applets' only, set by the drop-ins, never by the example" {
	need_ltsp
	{
		echo '[server]'
		echo 'RAMBOOT_PUBLISH_KEY=/root/ramboot/lab.key'
		echo
		echo '[clients]'
		echo 'INCLUDE=ramboot'
		echo
		cat "$CONF"
	} >"$T/ltsp.conf"
	ltsp_eval "$T/ltsp.conf" server POST_IMAGE_RAMBOOT POST_IPXE_RAMBOOT RAMBOOT_PUBLISH_KEY
	assert_success
	assert_line 'POST_IMAGE_RAMBOOT=<unset>'
	assert_line 'POST_IPXE_RAMBOOT=<unset>'
	assert_line 'RAMBOOT_PUBLISH_KEY=/root/ramboot/lab.key'
	ltsp_eval "$T/ltsp.conf" client RAMBOOT_PUBLISH_KEY
	assert_line 'RAMBOOT_PUBLISH_KEY=<unset>'
	run grep -h '^POST_[A-Z]*_RAMBOOT=' "$TOP"/initrd-hooks/ltsp/*.sh
	assert_line 'POST_IMAGE_RAMBOOT=${POST_IMAGE_RAMBOOT:-ramboot_image_post}'
	assert_line 'POST_IPXE_RAMBOOT=${POST_IPXE_RAMBOOT:-ramboot_ipxe_post}'
}

# The drop-in's question, "does ltsp.conf $1 run ramboot's hook for a
# client?", answered as "uses" or "unused".
conf_uses_hook() {
	{
		echo ". '$TOP/initrd-hooks/ltsp/initrd.sh'"
		echo "if ramboot_conf_uses_hook '$1'; then echo uses; else echo unused; fi"
	} >"$T/uses.sh"
	run "$T/bbsh" "$T/uses.sh"
}

@test "ltsp initrd drop-in: a client runs the hook when a section holding it is included or applies by itself" {
	need_busybox
	cat "$CONF" >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output unused
	printf '[clients]\nINCLUDE = RAMBOOT # lab\n\n' | cat - "$CONF" >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output uses
	printf '[clients]\n#INCLUDE=ramboot\n\n' | cat - "$CONF" >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output unused
	printf '[00:11:22:33:44:55]\nINCLUDE=ramboot\n\n' | cat - "$CONF" >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output uses
	# the line itself in [clients], or commented out there
	grep '^PRE_INITRD_BOTTOM_RAMBOOT=' "$CONF" | sed '1i [clients]' >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output uses
	grep '^PRE_INITRD_BOTTOM_RAMBOOT=' "$CONF" | sed -e 's/^/#/' -e '1i [clients]' >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output unused
	# a section of another name, included
	sed 's/^\[ramboot\]$/[Lab_RAM]/' "$CONF" | sed '1i [clients]\nINCLUDE=lab_ram\n' >"$T/ltsp.conf"
	conf_uses_hook "$T/ltsp.conf"
	assert_output uses
	conf_uses_hook "$T/none.conf"
	assert_output unused
}

# The real `ltsp initrd` (root: mount namespace), /etc/ltsp bound to
# $T/etc-ltsp, the drop-ins in /run/ltsp, ltsp.img in $T/tftp.
need_ltsp_initrd() {
	need_ltsp
	[ "$(id -u)" -eq 0 ] || skip "needs root (mounts)"
	[ -d /etc/ltsp ] || skip "no /etc/ltsp to bind a test /etc/ltsp over"
	command -v cpio >/dev/null || skip "no cpio"
	[ -x "$TOP/ramboot" ] || skip "no ./ramboot (make)"
	unshare -m sh -c 'mount -t tmpfs none /mnt' 2>/dev/null ||
		skip "cannot mount in a mount namespace"
}

ltsp_initrd_real() {
	mkdir -p "$T/tftp" "$T/dropins/common/initrd"
	cp "$TOP/initrd-hooks/ltsp/initrd.sh" "$T/dropins/common/initrd/50-ramboot-initrd.sh"
	cat >"$T/ns.sh" <<EOS
set -e
mount -t tmpfs tmpfs /run
mount --bind '$T/etc-ltsp' /etc/ltsp
mkdir -p /run/ltsp
cp -a '$T/dropins/.' /run/ltsp/
export TFTP_DIR='$T/tftp' PATH='$TOP':\$PATH
exec /usr/sbin/ltsp initrd
EOS
	run --separate-stderr unshare -m sh "$T/ns.sh"
}

# /etc/ltsp as `make install` leaves it (the program and the hooks in
# ramboot/), ltsp.conf the lines $@ then the example.
etc_ltsp() {
	rm -rf "$T/etc-ltsp"
	mkdir -p "$T/etc-ltsp/ramboot"
	cp "$TOP/ramboot" "$T/etc-ltsp/ramboot/ramboot"
	cp "$TOP/initrd-hooks/ltsp-hook.sh" "$TOP/initrd-hooks/ramboot-lib.sh" "$T/etc-ltsp/ramboot/"
	{
		printf '%s\n' "$@"
		echo
		cat "$CONF"
	} >"$T/etc-ltsp/ltsp.conf"
}

img_files() {
	cpio -it <"$T/tftp/ltsp/ltsp.img" 2>/dev/null | sed 's|^\./||'
}

@test "ltsp initrd: ltsp.img carries ramboot's program only for clients that run the hook, and compressed" {
	need_ltsp_initrd
	# appended, included by no client: the hooks only
	etc_ltsp '# no client uses ramboot'
	ltsp_initrd_real
	assert_success
	assert_line --partial "ltsp.img leaves out /etc/ltsp/ramboot/ramboot"
	run img_files
	assert_line etc/ltsp/ramboot/ltsp-hook.sh
	refute_line etc/ltsp/ramboot/ramboot
	refute_line etc/ltsp/ramboot/ramboot.gz
	[ "$(stat -c %s "$T/tftp/ltsp/ltsp.img")" -lt 1000000 ]
	# [clients] includes it: the program, gzip-compressed
	etc_ltsp '[clients]' 'INCLUDE=ramboot'
	ltsp_initrd_real
	assert_success
	run img_files
	assert_line etc/ltsp/ramboot/ramboot.gz
	refute_line etc/ltsp/ramboot/ramboot
	(cd "$T" && cpio -id --quiet etc/ltsp/ramboot/ramboot.gz <"$T/tftp/ltsp/ltsp.img")
	zcat "$T/etc/ltsp/ramboot/ramboot.gz" | cmp - "$TOP/ramboot"
	# the admin's choice wins either way
	etc_ltsp '[server]' 'RAMBOOT_LTSP_BINARY=no' '[clients]' 'INCLUDE=ramboot'
	ltsp_initrd_real
	assert_success
	run img_files
	refute_line --regexp '^etc/ltsp/ramboot/ramboot(\.gz)?$'
	etc_ltsp '[server]' 'RAMBOOT_LTSP_BINARY=yes'
	ltsp_initrd_real
	assert_success
	run img_files
	assert_line etc/ltsp/ramboot/ramboot.gz
	cp "$T/tftp/ltsp/ltsp.img" "$T/before.img"
	etc_ltsp '[server]' 'RAMBOOT_LTSP_BINARY=maybe'
	ltsp_initrd_real
	assert_failure
	[[ $stderr == *"RAMBOOT_LTSP_BINARY=maybe: not auto, yes or no"* ]] || fail "stderr: $stderr"
	cmp "$T/tftp/ltsp/ltsp.img" "$T/before.img"
}

@test "ltsp initrd: an extra initrd of RAMBOOT_IPXE_INITRDS that holds ramboot's program: ltsp.img holds no second copy" {
	need_ltsp_initrd
	mkdir -p "$T/tftp/ltsp"
	"$TOP/ramboot" initrd -o "$T/tftp/ltsp/ramboot-udpcast.img" --binary="$TOP/ramboot" \
		--hooks="$TOP/initrd-hooks" --conf=/dev/null
	run "$TOP/ramboot" initrd --list "$T/tftp/ltsp/ramboot-udpcast.img"
	assert_line --partial 'ramboot: present'
	etc_ltsp '[server]' 'RAMBOOT_IPXE_INITRDS="missing.img ramboot-udpcast.img"' '[clients]' 'INCLUDE=ramboot'
	ltsp_initrd_real
	assert_success
	assert_line --partial "ramboot-udpcast.img (RAMBOOT_IPXE_INITRDS) holds ramboot's program"
	run img_files
	assert_line etc/ltsp/ramboot/ltsp-hook.sh
	refute_line --regexp '^etc/ltsp/ramboot/ramboot(\.gz)?$'
	# one without it (no initrd at all, here) leaves ltsp.img its copy
	etc_ltsp '[server]' 'RAMBOOT_IPXE_INITRDS=missing.img' '[clients]' 'INCLUDE=ramboot'
	ltsp_initrd_real
	assert_success
	run img_files
	assert_line etc/ltsp/ramboot/ramboot.gz
}
