#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `ramboot initrd`: write an extra initrd (newc cpio) and list initrds,
# plain, compressed and concatenated as the kernel takes them.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
load helpers/base
load helpers/fault

setup() {
	cd "$TOP" || return 1
	T=$BATS_TEST_TMPDIR
	# a private root: never the host's /etc/ramboot.conf or keys
	export RAMBOOT_ROOT=$T/root
	# Any ELF program stands in for the static binary.
	STATIC=$TOP/static/ramboot
	[ -x "$STATIC" ] || STATIC=$BIN
}

@test "initrd: -o writes a newc cpio that cpio -t lists" {
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC"
	assert_success
	[ ! -e "$T/rb.img.tmp" ]
	run cpio -t -H newc -F "$T/rb.img"
	assert_success
	assert_line usr/sbin/ramboot
	assert_line etc/ltsp/ramboot/ltsp-hook.sh
	assert_line etc/ltsp/ramboot/ramboot-lib.sh
	assert_line scripts/ramboot-lib.sh
	assert_line scripts/init-bottom/ramboot
	assert_line conf/conf.d/zz-ramboot.conf
	# parent directories come first: the kernel does not create them
	[ "$(cpio -t -F "$T/rb.img" 2>/dev/null | head -1)" = usr ]
	mkdir "$T/x" && cd "$T/x" && cpio -id -F "$T/rb.img" 2>/dev/null
	cmp "$STATIC" "$T/x/usr/sbin/ramboot"
	[ -x "$T/x/scripts/init-bottom/ramboot" ]
	cmp "$TOP/initrd-hooks/ltsp-hook.sh" "$T/x/etc/ltsp/ramboot/ltsp-hook.sh"
	cmp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/x/etc/ltsp/ramboot/ramboot-lib.sh"
	cmp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/x/scripts/ramboot-lib.sh"
}

@test "initrd: --keys packs the trusted public keys as etc/ramboot/keys/*.pub, nothing else" {
	mkdir "$T/keys"
	"$BIN" keygen "$T/keys/lab" >/dev/null
	echo "not a key" >"$T/keys/README"
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --keys="$T/keys"
	assert_success
	run cpio -t -H newc -F "$T/rb.img"
	assert_line etc/ramboot/keys
	assert_line etc/ramboot/keys/lab.pub
	refute_line etc/ramboot/keys/lab
	refute_line etc/ramboot/keys/README
	mkdir "$T/x" && cd "$T/x" && cpio -id -F "$T/rb.img" 2>/dev/null
	cmp "$T/keys/lab.pub" "$T/x/etc/ramboot/keys/lab.pub"
	# A directory that is not there is an error, and no initrd.
	run "$BIN" initrd -o "$T/rb2.img" --binary="$STATIC" --keys="$T/none"
	assert_failure 1
	[ ! -e "$T/rb2.img" ]
}

@test "initrd: --keys: a private key named .pub is an error that names it, and no initrd" {
	mkdir "$T/keys"
	"$BIN" keygen "$T/lab" >/dev/null
	cp "$T/lab.pub" "$T/keys/"
	cp "$T/lab" "$T/keys/oops.pub"
	run --separate-stderr "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --keys="$T/keys"
	assert_failure 1
	[[ "$stderr" == *"$T/keys/oops.pub: a PRIVATE key"* ]]
	[ ! -e "$T/rb.img" ]
}

@test "initrd: --keys: a link is never followed; a world-writable key is packed with a warning" {
	mkdir "$T/keys"
	"$BIN" keygen "$T/lab" >/dev/null
	ln -s /etc/passwd "$T/keys/evil.pub"
	run --separate-stderr "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --keys="$T/keys"
	assert_failure 1
	[[ "$stderr" == *"evil.pub: a symbolic link"* ]]
	[ ! -e "$T/rb.img" ]
	# Not even a link to a good public key.
	rm "$T/keys/evil.pub"
	ln -s "$T/lab.pub" "$T/keys/lab.pub"
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --keys="$T/keys"
	assert_failure 1
	[ ! -e "$T/rb.img" ]
	rm "$T/keys/lab.pub"
	cp "$T/lab.pub" "$T/keys/lab.pub"
	chmod 666 "$T/keys/lab.pub"
	run --separate-stderr "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --keys="$T/keys"
	assert_success
	[[ "$stderr" == *"lab.pub: world-writable"* ]]
	mkdir "$T/x" && cd "$T/x" && cpio -id -F "$T/rb.img" 2>/dev/null
	cmp "$T/lab.pub" "$T/x/etc/ramboot/keys/lab.pub"
	[ "$(stat -c %a "$T/x/etc/ramboot/keys/lab.pub")" = 644 ]
}

@test "initrd: --list to a full stdout is an error" {
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC"
	assert_success
	run "$BIN" initrd --list "$T/rb.img"
	assert_success
	# (bash -c: run's own output is what a redirection after run takes)
	run bash -c '"$1" initrd --list "$2" >/dev/full' _ "$BIN" "$T/rb.img"
	assert_failure 1
	assert_output --partial "write error"
}

# The directory holds exactly the names given (no temporary left).
assert_dir_holds() { # DIR NAME...
	local d=$1
	shift
	run bash -c 'ls -A "$1"' _ "$d"
	assert_output "$(printf '%s\n' "$@" | sort)"
}

@test "initrd: -o never writes through a link planted at a temporary name" {
	mkdir "$T/d"
	echo "precious" >"$T/victim"
	cp "$T/victim" "$T/victim.orig"
	ln -s "$T/victim" "$T/d/rb.img.tmp"
	ln -s "$T/victim" "$T/d/.rb.img.tmp"
	run "$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC"
	assert_success
	cmp "$T/victim.orig" "$T/victim"
	[ "$(readlink "$T/d/rb.img.tmp")" = "$T/victim" ]
	[ -f "$T/d/rb.img" ] && [ ! -L "$T/d/rb.img" ] || false
	run cpio -t -F "$T/d/rb.img"
	assert_line usr/sbin/ramboot
	assert_dir_holds "$T/d" .rb.img.tmp rb.img rb.img.tmp
	# Again over the file just written: replaced, the link still not followed.
	run "$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC"
	assert_success
	cmp "$T/victim.orig" "$T/victim"
	assert_dir_holds "$T/d" .rb.img.tmp rb.img rb.img.tmp
}

@test "initrd: -o at a symbolic link is refused; its target is untouched" {
	mkdir "$T/d"
	echo "precious" >"$T/victim"
	ln -s "$T/victim" "$T/d/rb.img"
	run --separate-stderr "$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC"
	assert_failure 1
	[ "$stderr" = "ramboot: initrd: error: $T/d/rb.img: is a symbolic link; not written through it" ]
	[ "$(cat "$T/victim")" = precious ]
	[ "$(readlink "$T/d/rb.img")" = "$T/victim" ]
	assert_dir_holds "$T/d" rb.img
}

@test "initrd: -o at the binary itself is refused" {
	cp "$STATIC" "$T/bin"
	run --separate-stderr "$BIN" initrd -o "$T/bin" --binary="$T/bin"
	assert_failure 1
	[ "$stderr" = "ramboot: initrd: error: $T/bin: is the source itself" ]
	cmp "$STATIC" "$T/bin"
}

# $T/d/rb.img holds an old initrd; the fault shim is ready.
old_initrd_under_faultinj() {
	faultinj_require_dynamic "$BIN"
	faultinj_build
	mkdir "$T/d"
	echo "old initrd" >"$T/d/rb.img"
}

@test "initrd: a failed write leaves the old file and nothing else" {
	old_initrd_under_faultinj
	# A full disk after 64 KiB of the archive.
	run --separate-stderr faultinj_run 'write:prog=ramboot:after=64K:times=1:errno=ENOSPC' \
		"$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC"
	assert_failure 1
	assert_fault_fired 'call=write .*errno:ENOSPC'
	[ "$(cat "$T/d/rb.img")" = "old initrd" ]
	assert_dir_holds "$T/d" rb.img
	# A missing hook script, after the binary went in.
	mkdir "$T/hooks"
	cp "$TOP/initrd-hooks/ltsp-hook.sh" "$TOP/initrd-hooks/ramboot-lib.sh" "$T/hooks/"
	run --separate-stderr "$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC" --hooks="$T/hooks"
	assert_failure 1
	[[ "$stderr" == *"$T/hooks/initramfs-tools/script: No such file or directory"* ]]
	[ "$(cat "$T/d/rb.img")" = "old initrd" ]
	assert_dir_holds "$T/d" rb.img
}

@test "initrd: the new file is on disk before it takes the name: a failed fsync keeps the old one" {
	old_initrd_under_faultinj
	run --separate-stderr faultinj_run 'fsync:prog=ramboot:nth=1:times=1:errno=EIO' \
		"$BIN" initrd -o "$T/d/rb.img" --binary="$STATIC"
	assert_failure 1
	assert_fault_fired 'call=fsync n=1 .*errno:EIO'
	[ "$stderr" = "ramboot: initrd: error: $T/d/rb.img: Input/output error" ]
	[ "$(cat "$T/d/rb.img")" = "old initrd" ]
	assert_dir_holds "$T/d" rb.img
}

@test "initrd: --conf adds etc/ramboot.conf" {
	echo "RAMBOOT=ram" >"$T/conf"
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --conf="$T/conf"
	assert_success
	run cpio -t -F "$T/rb.img"
	assert_line etc/ramboot.conf
}

@test "initrd: --udpcast adds the program as usr/bin/udp-receiver with its libraries; it runs in a chroot" {
	# Any dynamically linked program stands in for udp-receiver.
	prog=$(type -P true)
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --udpcast="$prog"
	assert_success
	run cpio -t -H newc -F "$T/rb.img"
	assert_line usr/bin/udp-receiver
	# every library ldd names, under the name the loader asks for
	n=0
	for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
		assert_line "$(realpath "$(dirname "$lib")" | cut -c2-)/$(basename "$lib")"
		n=$((n + 1))
	done
	[ "$n" -ge 2 ]   # libc and the loader at least
	mkdir "$T/x" && cd "$T/x" && cpio -id -F "$T/rb.img" 2>/dev/null
	cmp "$prog" "$T/x/usr/bin/udp-receiver"
	[ "$(id -u)" = 0 ] || skip "chroot needs root"
	chroot "$T/x" /usr/bin/udp-receiver
}

@test "initrd: --udpcast with udpcast's udp-receiver: self-contained" {
	[ -x /usr/bin/udp-receiver ] || skip "udpcast not installed"
	[ "$(id -u)" = 0 ] || skip "chroot needs root"
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --udpcast
	assert_success
	mkdir "$T/x" && cd "$T/x" && cpio -id -F "$T/rb.img" 2>/dev/null
	run chroot "$T/x" /usr/bin/udp-receiver --license
	assert_success
}

@test "initrd: --udpcast: a static program goes alone; a missing one is an error, no initrd" {
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --udpcast="$T/nope"
	assert_failure 1
	assert_output --partial "$T/nope"
	[ ! -e "$T/rb.img" ]
	[ -x "$TOP/static/ramboot" ] || skip "no static build (make static)"
	run "$BIN" initrd -o "$T/rb.img" --binary="$STATIC" --udpcast="$TOP/static/ramboot"
	assert_success
	run "$BIN" initrd --list "$T/rb.img"
	assert_line "# member 1: offset 0, compression none, 17 entries"
	refute_line --regexp '^(usr/)?lib'
}

@test "initrd: --list finds ramboot in our initrd" {
	"$BIN" initrd -o "$T/rb.img" --binary="$STATIC"
	run "$BIN" initrd --list "$T/rb.img"
	assert_success
	assert_line "# member 1: offset 0, compression none, 15 entries"
	assert_line --regexp '^ramboot: present \(usr/sbin/ramboot, [0-9.]+ (KiB|MiB)\)$'
}

@test "initrd: --list reads a gzip-compressed initrd" {
	"$BIN" initrd -o "$T/rb.img" --binary="$STATIC"
	gzip -c "$T/rb.img" >"$T/rb.gz"
	run "$BIN" initrd --list "$T/rb.gz"
	assert_success
	assert_line --partial "compression gzip, 15 entries"
	assert_line --partial "ramboot: present"
}

@test "initrd: --list walks concatenated members and zero padding" {
	"$BIN" initrd -o "$T/rb.img" --binary="$STATIC"
	mkdir -p "$T/other/etc" && echo x >"$T/other/etc/x"
	(cd "$T/other" && find . | cpio -o -H newc 2>/dev/null) >"$T/other.cpio"
	(cd "$T/other" && find . | cpio -o -H newc 2>/dev/null | zstd -q -c) >"$T/other.zst"
	{ cat "$T/other.cpio"; head -c 1000 /dev/zero; cat "$T/rb.img" "$T/other.zst"; } >"$T/cat.img"
	run "$BIN" initrd --list "$T/cat.img"
	assert_success
	assert_line --regexp '^# member 1: offset 0, compression none, [0-9]+ entries$'
	assert_line --regexp '^# member 2: offset [0-9]+, compression none, 15 entries$'
	assert_line --regexp '^# member 3: offset [0-9]+, compression zstd, [0-9]+ entries$'
	assert_line --partial "ramboot: present"
}

@test "initrd: --list says absent, and a script named ramboot is not the binary" {
	mkdir -p "$T/t/scripts/init-bottom"
	echo '#!/bin/sh' >"$T/t/scripts/init-bottom/ramboot"
	(cd "$T/t" && find . | cpio -o -H newc 2>/dev/null) >"$T/t.cpio"
	run "$BIN" initrd --list "$T/t.cpio"
	assert_success
	assert_line "ramboot: absent"
}

@test "initrd: --list finds ramboot behind a symbolic link (relative or absolute) and a hard link" {
	local how
	for how in relative absolute hard; do
		rm -rf "$T/l" "$T/l.cpio"
		mkdir -p "$T/l/usr/sbin" "$T/l/usr/lib/ramboot" "$T/l/bin"
		cp "$STATIC" "$T/l/usr/lib/ramboot/ramboot.static"
		case $how in
		relative) ln -s ../lib/ramboot/ramboot.static "$T/l/usr/sbin/ramboot" ;;
		absolute) ln -s /usr/lib/ramboot/ramboot.static "$T/l/usr/sbin/ramboot" ;;
		hard) ln "$T/l/usr/lib/ramboot/ramboot.static" "$T/l/usr/sbin/ramboot" ;;
		esac
		# a link that names nothing in the archive is not the binary
		ln -s /nowhere/ramboot "$T/l/bin/ramboot"
		(cd "$T/l" && find . | cpio -o -H newc 2>/dev/null) >"$T/l.cpio"
		run "$BIN" initrd --list "$T/l.cpio"
		assert_success
		assert_line --regexp '^ramboot: present \((usr/sbin/ramboot -> usr/lib/ramboot/ramboot.static|usr/lib/ramboot/ramboot.static -> usr/sbin/ramboot|usr/sbin/ramboot|usr/lib/ramboot/ramboot.static), [0-9.]+ (KiB|MiB)\)$'
	done
	# a symbolic link whose target is not in the archive
	rm "$T/l/usr/lib/ramboot/ramboot.static" "$T/l/usr/sbin/ramboot"
	ln -s ../lib/ramboot/ramboot.static "$T/l/usr/sbin/ramboot"
	(cd "$T/l" && find . | cpio -o -H newc 2>/dev/null) >"$T/l.cpio"
	run "$BIN" initrd --list "$T/l.cpio"
	assert_line "ramboot: absent"
}

@test "initrd: --list of this machine's initrd" {
	set -- /boot/initrd.img-*
	[ -f "$1" ] || skip "no /boot/initrd.img-*"
	[ -r "$1" ] || skip "$1 not readable"
	run "$BIN" initrd --list "$1"
	assert_success
	assert_line --regexp '^# member 1: offset 0, compression [a-z0-9]+, [0-9]+ entries$'
	assert_line --regexp '^ramboot: (present|absent)'
}

@test "initrd: errors: missing file, garbage, usage" {
	run "$BIN" initrd --list "$T/nope"
	assert_failure 1
	assert_output --partial "ramboot: initrd: error: $T/nope: No such file or directory"
	head -c 4096 /dev/urandom >"$T/garbage"
	run "$BIN" initrd --list "$T/garbage"
	assert_failure 1
	run "$BIN" initrd
	assert_failure 2
	run "$BIN" initrd -o "$T/a" --list "$T/b"
	assert_failure 2
	run "$BIN" initrd -o "$T/a" --binary="$T/nope"
	assert_failure 1
	[ ! -e "$T/a" ]
}

@test "initrd: the static build says it has no initrd support" {
	[ -x "$TOP/static/ramboot" ] || skip "no static build (make static)"
	run "$TOP/static/ramboot" initrd --list /dev/null
	assert_failure 1
	assert_output "ramboot: initrd: error: built without initrd support"
}

@test "initramfs-tools hook: udp-receiver goes in with its libraries when udpcast is installed" {
	[ -x /usr/bin/udp-receiver ] || skip "udpcast not installed"
	[ -f /usr/share/initramfs-tools/hook-functions ] || skip "initramfs-tools not installed"
	[ "$(id -u)" = 0 ] || skip "chroot needs root"
	kver=$(uname -r)
	[ -d "/lib/modules/$kver" ] || kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
	[ -n "$kver" ] || skip "no kernel modules on this host"
	mkdir -p "$T/data/hooks" "$T/etc" "$T/d/usr/lib" "$T/d/usr/lib64"
	cp "$STATIC" "$T/data/ramboot.static"
	cp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/data/hooks/"
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		"$TOP/initrd-hooks/initramfs-tools/hook" >"$T/hook"
	# The links mkinitramfs makes for a merged /usr.
	ln -s usr/lib "$T/d/lib"
	ln -s usr/lib64 "$T/d/lib64"
	run env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" verbose=n sh "$T/hook"
	assert_success
	cmp /usr/bin/udp-receiver "$T/d/usr/bin/udp-receiver"
	run chroot "$T/d" /usr/bin/udp-receiver --license
	assert_success
}

@test "initramfs-tools hook: public keys go in; a private key named .pub or a link fails the build" {
	[ -f /usr/share/initramfs-tools/hook-functions ] || skip "initramfs-tools not installed"
	kver=$(uname -r)
	[ -d "/lib/modules/$kver" ] || kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
	[ -n "$kver" ] || skip "no kernel modules on this host"
	mkdir -p "$T/data/hooks" "$T/etc/ramboot/keys" "$T/d/usr/lib" "$T/d/usr/lib64"
	cp "$STATIC" "$T/data/ramboot.static"
	cp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/data/hooks/"
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		"$TOP/initrd-hooks/initramfs-tools/hook" >"$T/hook"
	ln -s usr/lib "$T/d/lib"
	ln -s usr/lib64 "$T/d/lib64"
	"$BIN" keygen "$T/lab" >/dev/null
	cp "$T/lab.pub" "$T/etc/ramboot/keys/"
	run env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" verbose=n sh "$T/hook"
	assert_success
	cmp "$T/lab.pub" "$T/d/etc/ramboot/keys/lab.pub"
	rm -rf "$T/d/etc/ramboot"
	cp "$T/lab" "$T/etc/ramboot/keys/oops.pub"
	run env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" verbose=n sh "$T/hook"
	assert_failure
	assert_output --partial "oops.pub"
	[ ! -e "$T/d/etc/ramboot/keys/oops.pub" ]
	rm "$T/etc/ramboot/keys/oops.pub"
	ln -s /etc/passwd "$T/etc/ramboot/keys/evil.pub"
	run env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" verbose=n sh "$T/hook"
	assert_failure
	assert_output --partial "evil.pub"
	[ ! -e "$T/d/etc/ramboot/keys/evil.pub" ]
}

@test "dracut module: public keys go in; a private key named .pub or a link fails the build" {
	mkdir -p "$T/data/hooks/initramfs-tools" "$T/keys"
	cp "$STATIC" "$T/data/ramboot.static"
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		"$TOP/dracut/90ramboot/module-setup.sh" >"$T/module-setup.sh"
	# dracut's functions, as stand-ins that log what would go in.
	cat >"$T/run.sh" <<-'EOS'
		inst_simple() { echo "inst $2"; }
		inst_multiple() { :; }
		inst_script() { :; }
		inst_hook() { :; }
		dfatal() { echo "fatal: $*" >&2; }
		moddir=$(dirname "$1")
		. "$1"
		install
	EOS
	"$BIN" keygen "$T/lab" >/dev/null
	cp "$T/lab.pub" "$T/keys/"
	run env RAMBOOT_KEYS="$T/keys" bash "$T/run.sh" "$T/module-setup.sh"
	assert_success
	assert_line "inst /etc/ramboot/keys/lab.pub"
	cp "$T/lab" "$T/keys/oops.pub"
	run env RAMBOOT_KEYS="$T/keys" bash "$T/run.sh" "$T/module-setup.sh"
	assert_failure
	assert_output --partial "oops.pub"
	refute_line "inst /etc/ramboot/keys/oops.pub"
	rm "$T/keys/oops.pub"
	ln -s /etc/passwd "$T/keys/evil.pub"
	run env RAMBOOT_KEYS="$T/keys" bash "$T/run.sh" "$T/module-setup.sh"
	assert_failure
	refute_line "inst /etc/ramboot/keys/evil.pub"
}

@test "initramfs-tools hook: ext4 goes in with jbd2, mbcache, crc16 and crc32c (ramboot.cache=)" {
	[ -f /usr/share/initramfs-tools/hook-functions ] || skip "initramfs-tools not installed"
	kver=$(uname -r)
	[ -d "/lib/modules/$kver" ] || kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
	[ -n "$kver" ] || skip "no kernel modules on this host"
	modinfo -k "$kver" ext4 >/dev/null 2>&1 || skip "ext4 is built into $kver"
	mkdir -p "$T/data/hooks" "$T/etc" "$T/d/usr/lib" "$T/d/usr/lib64"
	cp "$STATIC" "$T/data/ramboot.static"
	cp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/data/hooks/"
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		"$TOP/initrd-hooks/initramfs-tools/hook" >"$T/hook"
	ln -s usr/lib "$T/d/lib"
	ln -s usr/lib64 "$T/d/lib64"
	run env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" verbose=n sh "$T/hook"
	assert_success
	run find "$T/d" -name '*.ko*' -printf '%f\n'
	assert_line --regexp '^ext4\.ko'
	assert_line --regexp '^jbd2\.ko'
	assert_line --regexp '^mbcache\.ko'
	assert_line --regexp '^crc16\.ko'
	assert_line --regexp '^crc32c'
}

@test "dracut module: ext4 and crc32c among the kernel modules (ramboot.cache=)" {
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		"$TOP/dracut/90ramboot/module-setup.sh" >"$T/module-setup.sh"
	cat >"$T/run.sh" <<-'EOS'
		instmods() { printf 'mod %s\n' "$@"; }
		. "$1"
		installkernel
	EOS
	run bash "$T/run.sh" "$T/module-setup.sh"
	assert_success
	assert_line "mod ext4"
	assert_line "mod crc32c"
	assert_line "mod dm-verity"
}

# The initramfs-tools hook as mkinitramfs runs it, with this machine's
# /etc/initramfs-tools, LTSP's server code, kernel command lines and
# GRUB defaults moved under $T; CONFDIR $1, then more VAR=value; DESTDIR
# $T/d, which `added` asks about.
itools_hook() {
	local confdir=$1
	shift
	rm -rf "$T/d"
	mkdir -p "$T/data/hooks" "$T/etc" "$T/d/usr/lib" "$T/d/usr/lib64" "$T/itconf/conf.d"
	touch "$T/itconf/initramfs.conf"
	cp "$STATIC" "$T/data/ramboot.static"
	cp "$TOP/initrd-hooks/ramboot-lib.sh" "$T/data/hooks/"
	sed -e "s|@DATADIR@|$T/data|g" -e "s|@SYSCONFDIR@|$T/etc|g" \
		-e "s|/etc/initramfs-tools|$T/itconf|g" -e "s|/usr/share/ltsp/server|$T/ltsp/server|g" \
		-e "s|/proc/cmdline|$T/cmdline|g" -e "s|/etc/kernel/cmdline|$T/kcmdline|g" \
		-e "s|/etc/default/grub|$T/grub|g" \
		"$TOP/initrd-hooks/initramfs-tools/hook" >"$T/hook"
	ln -s usr/lib "$T/d/lib"
	ln -s usr/lib64 "$T/d/lib64"
	kver=$(uname -r)
	[ -d "/lib/modules/$kver" ] || kver=$(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
	run --separate-stderr env DESTDIR="$T/d" version="$kver" MODULESDIR="/lib/modules/$kver" \
		CONFDIR="$confdir" verbose=n "$@" sh "$T/hook"
	assert_success
}

added() {
	[ -f "$T/d/usr/sbin/ramboot" ] && [ -f "$T/d/scripts/ramboot-lib.sh" ]
}

@test "initramfs-tools hook: an LTSP server's own initramfs gets ramboot only when this machine asks for it" {
	[ -f /usr/share/initramfs-tools/hook-functions ] || skip "initramfs-tools not installed"
	[ -n "$(ls /lib/modules 2>/dev/null)" ] || skip "no kernel modules on this host"
	echo 'BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet' >"$T/cmdline"
	# no LTSP server code: as before
	itools_hook "$T/itconf"
	assert added
	# an LTSP server: nothing, and it says so
	mkdir -p "$T/ltsp/server"
	itools_hook "$T/itconf"
	refute added
	[[ $stderr == *"an LTSP server, nothing asks for ramboot at its own boot: not adding ramboot"* ]] ||
		fail "stderr: $stderr"
	[ ! -e "$T/d/usr/bin/udp-receiver" ]
	[ ! -e "$T/d/scripts/ramboot-lib.sh" ]
	# the package's ramboot.conf, all comments: still nothing
	cp "$TOP/conf/ramboot.conf" "$T/etc/ramboot.conf"
	itools_hook "$T/itconf"
	refute added
	# what asks: a setting, the kernel command line (now or GRUB's), RAMBOOT_INITRAMFS=yes
	echo 'RAMBOOT=lazy' >>"$T/etc/ramboot.conf"
	itools_hook "$T/itconf"
	assert added
	cp "$TOP/conf/ramboot.conf" "$T/etc/ramboot.conf"
	echo 'GRUB_CMDLINE_LINUX_DEFAULT="quiet ramboot=ram"' >"$T/grub"
	itools_hook "$T/itconf"
	assert added
	rm "$T/grub"
	echo 'BOOT_IMAGE=/vmlinuz ramboot.swap=zram' >"$T/cmdline"
	itools_hook "$T/itconf"
	assert added
	echo 'BOOT_IMAGE=/vmlinuz noramboot=1' >"$T/cmdline"
	itools_hook "$T/itconf"
	refute added
	echo 'RAMBOOT_INITRAMFS=yes' >"$T/itconf/conf.d/ramboot"
	itools_hook "$T/itconf"
	assert added
	rm "$T/itconf/conf.d/ramboot"
	# an explicit `mkinitramfs -d DIR`: built on purpose, ramboot goes in
	itools_hook "$T/other"
	assert added
	# RAMBOOT_INITRAMFS=no: never, LTSP server or not
	rm -r "$T/ltsp"
	itools_hook "$T/itconf" RAMBOOT_INITRAMFS=no
	refute added
	[[ $stderr == *"RAMBOOT_INITRAMFS=no: not adding ramboot"* ]] || fail "stderr: $stderr"
}
