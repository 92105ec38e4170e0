# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian package of the tree for a test that installs it: built with
# `dpkg-buildpackage -us -uc -b` on a copy of the tree into DEB_DIR,
# and kept there while the files that go into it do not change (the
# tests are left out of the key: editing one does not rebuild). The
# caller sets TOP and DEB_DIR.

# deb_file: the package DEB_DIR holds, empty if none
deb_file() {
	local f
	for f in "$DEB_DIR"/ramboot_"$(cat "$TOP/VERSION")"_*.deb; do
		[ ! -f "$f" ] || echo "$f"
		return 0
	done
}

# The tree's files (what git tracks, and new files not ignored), the
# build products and the tests left out.
deb_tree_files() {
	if git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$TOP" ls-files -co --exclude-standard
	else
		(cd "$TOP" && find . -type f ! -path './.git/*' | sed 's|^\./||')
	fi | grep -v -e '^build/' -e '^static/' -e '^tests/' -e '^ramboot$' -e '\.o$'
}

# deb_build: the package in DEB_DIR, built when the tree changed. 0, or
# 1 with the reason on stdout (a tool missing, the build's last lines).
deb_build() {
	local t key
	for t in dpkg-buildpackage dh pandoc fakeroot; do
		command -v "$t" >/dev/null || { echo "$t not installed (tests/deps.sh install)"; return 1; }
	done
	key=$(cd "$TOP" && deb_tree_files | LC_ALL=C sort | xargs -d '\n' sha256sum |
		sha256sum | cut -d' ' -f1)
	if [ -f "$DEB_DIR/key" ] && [ "$(cat "$DEB_DIR/key")" = "$key" ] && [ -n "$(deb_file)" ]; then
		return 0
	fi
	rm -rf "$DEB_DIR"
	mkdir -p "$DEB_DIR/src"
	(cd "$TOP" && deb_tree_files | tar -cf - -T -) | tar -xf - -C "$DEB_DIR/src"
	if ! (cd "$DEB_DIR/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
		dpkg-buildpackage -us -uc -b) >"$DEB_DIR/build.log" 2>&1; then
		echo "dpkg-buildpackage failed: $(tail -n 5 "$DEB_DIR/build.log")"
		return 1
	fi
	rm -rf "$DEB_DIR/src"
	echo "$key" >"$DEB_DIR/key"
}

# deb_install ROOT: the package installed into the throwaway root ROOT
# with `dpkg --root`, its maintainer scripts run on the host with
# DPKG_ROOT=ROOT (they write below it).
deb_install() {
	mkdir -p "$1/var/lib/dpkg/info" "$1/var/lib/dpkg/updates" "$1/var/lib/dpkg/triggers"
	: >"$1/var/lib/dpkg/status"
	: >"$1/var/lib/dpkg/available"
	dpkg --root="$1" --force-script-chrootless --force-depends --force-not-root -i "$(deb_file)"
}
