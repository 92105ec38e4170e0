#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian package: `dpkg-buildpackage -us -uc -b` on a copy of the tree
# (cached in build/pkg/ while the tree does not change), lintian, the file
# list, the conffiles, and install, upgrade, remove and purge with
# `dpkg --root` into a throwaway root (the maintainer scripts run with
# DPKG_ROOT, --force-script-chrootless). Then `ltsp initrd` packs what the
# package put into /etc/ltsp/ramboot. The boots of initrds built with the
# package's initramfs-tools hook and dracut module are in
# tests/boot/pkg-boot.sh.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
PKG=$TOP/build/pkg
VERSION=$(cat "$TOP/VERSION")

# The files of the package, directories left out.
EXPECTED_FILES="/etc/default/ramboot-netmem
/etc/default/ramboot-serve
/etc/ltsp/ramboot/boot-ramboot.sh
/etc/ltsp/ramboot/ltsp-hook.sh
/etc/ltsp/ramboot/ramboot-lib.sh
/etc/ramboot.conf
/lib/systemd/system/ramboot-netmem-prune.service
/lib/systemd/system/ramboot-netmem-prune.timer
/lib/systemd/system/ramboot-netmem.service
/lib/systemd/system/ramboot-serve.service
/usr/lib/dracut/modules.d/90ramboot/module-setup.sh
/usr/lib/dracut/modules.d/90ramboot/ramboot-dracut-lib.sh
/usr/lib/dracut/modules.d/90ramboot/ramboot-live-genrules.sh
/usr/lib/dracut/modules.d/90ramboot/ramboot-live-root.sh
/usr/lib/dracut/modules.d/90ramboot/ramboot-pre-pivot.sh
/usr/lib/ramboot/ramboot.static
/usr/sbin/ramboot
/usr/sbin/ramboot-netmem
/usr/share/doc/ramboot/README.md
/usr/share/doc/ramboot/admin-guide.md
/usr/share/doc/ramboot/benchmarks.md
/usr/share/doc/ramboot/boot-bench.svg
/usr/share/doc/ramboot/cache.md
/usr/share/doc/ramboot/changelog.gz
/usr/share/doc/ramboot/cmdline.md
/usr/share/doc/ramboot/copyright
/usr/share/doc/ramboot/dracut.md
/usr/share/doc/ramboot/http.md
/usr/share/doc/ramboot/examples/ltsp.conf
/usr/share/doc/ramboot/lazy.md
/usr/share/doc/ramboot/netmem.md
/usr/share/doc/ramboot/profiles.md
/usr/share/doc/ramboot/ramboot.md
/usr/share/doc/ramboot/swap.md
/usr/share/doc/ramboot/trust.md
/usr/share/initramfs-tools/hooks/ramboot
/usr/share/initramfs-tools/scripts/init-bottom/ramboot
/usr/share/initramfs-tools/scripts/local-premount/ramboot
/usr/share/lintian/overrides/ramboot
/usr/share/ltsp/common/initrd/50-ramboot-initrd.sh
/usr/share/ltsp/server/image/56-ramboot-image.sh
/usr/share/ltsp/server/ipxe/56-ramboot-ipxe.sh
/usr/share/man/man5/ramboot.conf.5.gz
/usr/share/man/man7/ramboot-cmdline.7.gz
/usr/share/man/man8/ramboot-netmem.8.gz
/usr/share/man/man8/ramboot.8.gz
/usr/share/ramboot/hooks/initramfs-tools/order.conf
/usr/share/ramboot/hooks/initramfs-tools/script
/usr/share/ramboot/hooks/ltsp-hook.sh
/usr/share/ramboot/hooks/ramboot-lib.sh
/usr/share/ramboot/http/lighttpd-ramboot.conf
/usr/share/ramboot/http/nginx-ramboot-proxy.conf
/usr/share/ramboot/http/nginx-ramboot.conf
/usr/share/ramboot/ltsp-server.sh
/usr/share/ramboot/ramboot.static"

CONFFILES="/etc/default/ramboot-netmem
/etc/default/ramboot-serve
/etc/ltsp/ramboot/boot-ramboot.sh
/etc/ltsp/ramboot/ltsp-hook.sh
/etc/ltsp/ramboot/ramboot-lib.sh
/etc/ramboot.conf"

deb() {
	ls "$PKG"/ramboot_"$VERSION"_*.deb 2>/dev/null | head -n 1
}

# The tree's files: what git tracks (and new files not ignored), or
# everything but the build products.
tree_files() {
	if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$TOP" ls-files -co --exclude-standard | grep -v -e '^build/' -e '^static/'
	else
		(cd "$TOP" && find . -type f ! -path './build/*' ! -path './static/*' \
			! -path './.git/*' ! -name ramboot ! -name '*.o' | sed 's|^\./||')
	fi
}

setup_file() {
	local t key
	for t in dpkg-buildpackage dh lintian pandoc fakeroot; do
		command -v "$t" >/dev/null || { echo "$t" > "$BATS_FILE_TMPDIR/missing"; return 0; }
	done
	mkdir -p "$PKG"
	key=$(cd "$TOP" && tree_files | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -d' ' -f1)
	if [ -f "$PKG/key" ] && [ "$(cat "$PKG/key")" = "$key" ] && [ -n "$(deb)" ]; then
		return 0
	fi
	rm -rf "$PKG"
	mkdir -p "$PKG/src"
	(cd "$TOP" && tree_files | tar -cf - -T -) | tar -xf - -C "$PKG/src"
	# parallel: make -j2 inside; the build is the slow part of this file
	if ! (cd "$PKG/src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
		> "$PKG/build.log" 2>&1; then
		echo "dpkg-buildpackage failed: $(tail -n 5 "$PKG/build.log")" > "$BATS_FILE_TMPDIR/build-failed"
		return 0
	fi
	rm -rf "$PKG/src"
	lintian --pedantic -I "$PKG"/ramboot_"$VERSION"_*.changes > "$PKG/lintian.txt" 2>&1
	echo "$key" > "$PKG/key"
}

setup() {
	if [ -f "$BATS_FILE_TMPDIR/missing" ]; then
		skip "$(cat "$BATS_FILE_TMPDIR/missing") not installed (tests/deps.sh install)"
	fi
	if [ -f "$BATS_FILE_TMPDIR/build-failed" ]; then
		fail "$(cat "$BATS_FILE_TMPDIR/build-failed")"
	fi
	DEB=$(deb)
	R=$BATS_TEST_TMPDIR/root
}

# dpkg on the throwaway root $R; maintainer scripts run on the host with
# DPKG_ROOT=$R (the package's scripts write below it).
rdpkg() {
	dpkg --root="$R" --force-script-chrootless --force-depends --force-not-root "$@"
}

# An empty dpkg database in $R.
make_root() {
	mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
	: > "$R/var/lib/dpkg/status"
	: > "$R/var/lib/dpkg/available"
}

@test "package: version is VERSION and debian/changelog's, and the package is named for it" {
	run dpkg-parsechangelog -l "$TOP/debian/changelog" -SVersion
	assert_output "$VERSION"
	[ -n "$DEB" ]
	run dpkg-deb -f "$DEB" Package Version
	assert_output "Package: ramboot
Version: $VERSION"
}

@test "package: lintian reports no error and no warning (overrides give their reasons)" {
	[ -f "$PKG/lintian.txt" ]
	run grep -E '^[EW]: ' "$PKG/lintian.txt"
	assert_failure
	# every override has a comment above it
	run awk '/^#/ { c = 1; next } /^$/ { c = 0; next } { if (!c) print "no reason: " $0 }' \
		"$TOP/debian/ramboot.lintian-overrides"
	assert_output ""
}

@test "package: the file list" {
	run sh -c "dpkg-deb -c '$DEB' | awk '\$1 !~ /^d/ { print substr(\$6, 2) }' | sort"
	assert_success
	assert_output "$(echo "$EXPECTED_FILES" | sort)"
	# DATADIR/ramboot.static, where `ramboot initrd` and the hooks look,
	# is a link to the ELF file in /usr/lib
	run sh -c "dpkg-deb -c '$DEB' | grep ' ./usr/share/ramboot/ramboot.static -> '"
	assert_output --partial -- '-> ../../lib/ramboot/ramboot.static'
}

@test "package: the conffiles" {
	run sh -c "dpkg-deb --ctrl-tarfile '$DEB' | tar -xOf - ./conffiles | sort"
	assert_output "$CONFFILES"
}

@test "package: install into a throwaway root: files, binaries, version, man page" {
	make_root
	run rdpkg -i "$DEB"
	assert_success
	run dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status} ${Version}' ramboot
	assert_output "install ok installed $VERSION"
	run "$R/usr/sbin/ramboot" --version
	assert_output "ramboot $VERSION"
	run "$R/usr/lib/ramboot/ramboot.static" --version
	assert_output "ramboot $VERSION"
	# the postinst's copy for `ltsp initrd`: a file, not a link
	[ -f "$R/etc/ltsp/ramboot/ramboot" ] && [ ! -L "$R/etc/ltsp/ramboot/ramboot" ] || false
	[ -x "$R/etc/ltsp/ramboot/ramboot" ]
	cmp "$R/etc/ltsp/ramboot/ramboot" "$R/usr/lib/ramboot/ramboot.static"
	# the shipped configuration sets nothing
	run grep -Ev '^[[:space:]]*(#|$)' "$R/etc/ramboot.conf"
	assert_output ""
	# `ramboot initrd` finds the static binary and the hooks in the
	# package's DATADIR, through the link
	run "$R/usr/sbin/ramboot" initrd -o "$BATS_TEST_TMPDIR/extra.cpio" --conf="$R/etc/ramboot.conf"
	assert_success
	run "$R/usr/sbin/ramboot" initrd --list "$BATS_TEST_TMPDIR/extra.cpio"
	assert_output --partial "ramboot: present"
	# the dracut module points at the package's DATADIR
	grep -q '/usr/share/ramboot' "$R/usr/lib/dracut/modules.d/90ramboot/module-setup.sh"
	run ! grep -q '@DATADIR@\|@SYSCONFDIR@' "$R/usr/lib/dracut/modules.d/90ramboot/module-setup.sh" \
		"$R/usr/share/initramfs-tools/hooks/ramboot"
	# man ramboot
	run env MANPATH="$R/usr/share/man" MANWIDTH=80 man ramboot
	assert_success
	assert_output --partial "ramboot load"
	run env MANPATH="$R/usr/share/man" man 7 ramboot-cmdline
	assert_output --partial "ramboot.swap.size"
	run env MANPATH="$R/usr/share/man" man 5 ramboot.conf
	assert_output --partial "RAMBOOT_TARGET"
}

@test "package: ramboot-serve.service is installed, neither enabled nor started; it runs the package's binary with its settings" {
	local unit=$R/lib/systemd/system/ramboot-serve.service
	make_root
	run rdpkg -i "$DEB"
	assert_success
	[ -f "$unit" ]
	run ! grep -q '@BINDIR@\|@SYSCONFDIR@' "$unit" "$R/etc/default/ramboot-serve"
	run sed -n 's/^ExecStart=//p' "$unit"
	# shellcheck disable=SC2016 # systemd expands them, not a shell
	assert_output '/usr/sbin/ramboot serve $OPTIONS ${IMAGE}'
	[ -x "$R/usr/sbin/ramboot" ]
	run sed -n 's/^EnvironmentFile=//p' "$unit"
	assert_output "/etc/default/ramboot-serve"
	# not enabled: no link to it anywhere in /etc/systemd
	run find "$R/etc" -name 'ramboot-serve.service'
	assert_output ""
	# the maintainer scripts never start it: an upgrade restarts it only
	# if it runs, removal stops it
	run grep -e 'invoke start' -e '_dh_action=start' -e 'systemctl.* start' \
		"$R/var/lib/dpkg/info/ramboot.postinst"
	assert_failure
	grep -q "deb-systemd-invoke try-restart .*'ramboot-serve.service'" "$R/var/lib/dpkg/info/ramboot.postinst"
	grep -q 'deb-systemd-invoke stop ramboot-serve.service' "$R/var/lib/dpkg/info/ramboot.prerm"
	# the shipped settings are a valid command line: options checked
	# before --help answers
	run env -i sh -c ". '$R/etc/default/ramboot-serve' && [ -n \"\$IMAGE\" ] &&
		'$R/usr/sbin/ramboot' serve \$OPTIONS --help"
	assert_success
	assert_output --partial "Usage: ramboot serve"
	# systemd reads it without a complaint (a copy pointing into $R)
	if command -v systemd-analyze >/dev/null; then
		sed -e "s|=/usr/sbin/|=$R/usr/sbin/|" -e "s|=/etc/default/|=$R/etc/default/|" "$unit" \
			>"$BATS_TEST_TMPDIR/ramboot-serve.service"
		run env MANPATH="$R/usr/share/man" systemd-analyze verify \
			"$BATS_TEST_TMPDIR/ramboot-serve.service"
		assert_success
		assert_output ""
	fi
}

@test "package: ramboot-netmem.service is installed, neither enabled nor started; nbd-server with the package's settings" {
	local unit=$R/lib/systemd/system/ramboot-netmem.service
	make_root
	run rdpkg -i "$DEB"
	assert_success
	[ -f "$unit" ]
	run ! grep -q '@BINDIR@\|@SYSCONFDIR@' "$unit" "$R/etc/default/ramboot-netmem"
	run sed -n 's/^ExecStartPre=//p' "$unit"
	assert_output "/usr/sbin/ramboot-netmem -c /etc/default/ramboot-netmem config /run/ramboot-netmem/nbd-server.conf"
	run grep -x 'SETTINGS=/etc/default/ramboot-netmem' "$R/usr/sbin/ramboot-netmem"
	assert_success
	run find "$R/etc" -name 'ramboot-netmem.service'
	assert_output ""
	grep -q "deb-systemd-invoke try-restart .*'ramboot-netmem.service'" "$R/var/lib/dpkg/info/ramboot.postinst"
	grep -q 'deb-systemd-invoke stop ramboot-netmem.service' "$R/var/lib/dpkg/info/ramboot.prerm"
	# the shipped settings make a configuration (the files' directory
	# moved into the test's, nbd-server's user left as it is)
	sed -e "s|^NETMEM_DIR=|NETMEM_DIR=$BATS_TEST_TMPDIR|" -e 's|^NETMEM_USER=.*|NETMEM_USER=|' \
		"$R/etc/default/ramboot-netmem" >"$BATS_TEST_TMPDIR/settings"
	run "$R/usr/sbin/ramboot-netmem" -c "$BATS_TEST_TMPDIR/settings" config "$BATS_TEST_TMPDIR/nbd.conf"
	assert_success
	run cat "$BATS_TEST_TMPDIR/nbd.conf"
	assert_line "authfile = $BATS_TEST_TMPDIR/nbd.conf.allow"
	assert_line "exportname = $BATS_TEST_TMPDIR/var/lib/ramboot/netmem/%s"
	assert_line "port = 10809"
	if command -v systemd-analyze >/dev/null; then
		sed -e "s|=/usr/sbin/|=$R/usr/sbin/|" -e "s| /etc/default/| $R/etc/default/|" "$unit" \
			>"$BATS_TEST_TMPDIR/ramboot-netmem.service"
		run env MANPATH="$R/usr/share/man" systemd-analyze verify \
			"$BATS_TEST_TMPDIR/ramboot-netmem.service"
		assert_success
		assert_output ""
	fi
}

@test "package: an upgrade keeps an edited /etc/ramboot.conf and renews /etc/ltsp/ramboot/ramboot" {
	make_root
	rdpkg -i "$DEB"
	echo "RAMBOOT=ram" >> "$R/etc/ramboot.conf"
	echo "stale" > "$R/etc/ltsp/ramboot/ramboot"
	run rdpkg --force-confold -i "$DEB"
	assert_success
	run tail -n 1 "$R/etc/ramboot.conf"
	assert_output "RAMBOOT=ram"
	cmp "$R/etc/ltsp/ramboot/ramboot" "$R/usr/lib/ramboot/ramboot.static"
	run dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status}' ramboot
	assert_output "install ok installed"
}

@test "package: remove keeps the conffiles only, purge leaves nothing" {
	make_root
	rdpkg -i "$DEB"
	run rdpkg -r ramboot
	assert_success
	[ ! -e "$R/usr/sbin/ramboot" ]
	[ ! -e "$R/etc/ltsp/ramboot/ramboot" ]
	[ ! -e "$R/usr/lib/dracut/modules.d/90ramboot" ]
	[ ! -e "$R/usr/share/initramfs-tools/hooks/ramboot" ]
	[ -f "$R/etc/ramboot.conf" ]
	[ -f "$R/etc/default/ramboot-serve" ]
	[ ! -e "$R/lib/systemd/system/ramboot-serve.service" ]
	[ -f "$R/etc/default/ramboot-netmem" ]
	[ ! -e "$R/usr/sbin/ramboot-netmem" ]
	# the network memory tier's files, as ramboot-netmem makes them
	mkdir -p "$R/var/lib/ramboot/netmem"
	: >"$R/var/lib/ramboot/netmem/.lock"
	truncate -s 1G "$R/var/lib/ramboot/netmem/192.168.67.21"
	run rdpkg -P ramboot
	assert_success
	[ ! -e "$R/var/lib/ramboot" ]
	run find "$R" -path "$R/var" -prune -o -print
	assert_output "$R"
	run dpkg-query --admindir="$R/var/lib/dpkg" -W ramboot
	assert_failure
}

@test "package: ltsp initrd packs the binary and the hook the package installs" {
	[ "$(id -u)" = 0 ] || skip "needs root (ltsp initrd reads /etc/ltsp)"
	command -v ltsp >/dev/null || skip "ltsp not installed"
	local saved=$BATS_TEST_TMPDIR/saved tftp=$BATS_TEST_TMPDIR/tftp rc
	make_root
	rdpkg -i "$DEB"
	# /etc/ltsp/ramboot as the package leaves it, for one `ltsp initrd`
	# run; what was there before is put back
	mkdir -p "$saved" /etc/ltsp
	[ -e /etc/ltsp/ramboot ] && mv /etc/ltsp/ramboot "$saved/ramboot"
	cp -a "$R/etc/ltsp/ramboot" /etc/ltsp/ramboot
	ltsp --tftp-dir="$tftp" initrd > "$BATS_TEST_TMPDIR/ltsp.log" 2>&1
	rc=$?
	rm -rf /etc/ltsp/ramboot
	[ -e "$saved/ramboot" ] && mv "$saved/ramboot" /etc/ltsp/ramboot
	[ "$rc" = 0 ] || fail "ltsp initrd failed: $(tail -n 3 "$BATS_TEST_TMPDIR/ltsp.log")"
	mkdir "$BATS_TEST_TMPDIR/img"
	(cd "$BATS_TEST_TMPDIR/img" && cpio -id --quiet < "$tftp/ltsp/ltsp.img")
	for f in ramboot ltsp-hook.sh ramboot-lib.sh; do
		cmp "$BATS_TEST_TMPDIR/img/etc/ltsp/ramboot/$f" "$R/etc/ltsp/ramboot/$f"
	done
	run "$BATS_TEST_TMPDIR/img/etc/ltsp/ramboot/ramboot" --version
	assert_output "ramboot $VERSION"
}
