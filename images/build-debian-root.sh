#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# build-debian-root.sh DIR [SUITE] [RAMBOOT] - a realistic small client
# root: Debian minbase (plus busybox, kmod, procps) from the mirror apt is
# configured with on this machine, with mmdebstrap (or debootstrap), the
# static ramboot in /usr/sbin and images/client-init as /sbin/rbtest-init.
# Boot it with init=/sbin/rbtest-init: it prints the ramboot report and
# powers off.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: build-debian-root.sh DIR [SUITE] [RAMBOOT]}
suite=${2:-}
rb=${3:-$here/../static/ramboot}
if [ -z "$suite" ]; then
	# shellcheck disable=SC1091
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
fi

# The mirror apt uses for SUITE, whatever the format of sources.list(.d).
# shellcheck disable=SC2016 # apt expands $(REPO_URI), not the shell
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
	awk -v s="$suite" '$2 == s { print $1; exit }')
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) '"$suite"' .*/\2/p' \
	/etc/apt/sources.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || { echo "build-debian-root: apt has no mirror for $suite" >&2; exit 1; }
echo "build-debian-root: $suite from $mirror"

pkgs=busybox,kmod,procps
rm -rf "$dir"
if command -v mmdebstrap >/dev/null; then
	mmdebstrap --quiet --mode=root --variant=minbase --include="$pkgs" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$suite" "$dir" "deb $mirror $suite main"
elif command -v debootstrap >/dev/null; then
	debootstrap --variant=minbase --include="$pkgs" "$suite" "$dir" "$mirror"
else
	echo "build-debian-root: needs mmdebstrap or debootstrap (apt-get install mmdebstrap)" >&2
	exit 1
fi
rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*_Packages
mkdir -p "$dir/usr/share" "$dir/lib/systemd/system/multi-user.target.wants"
install -m 0755 "$here/client-init" "$dir/sbin/rbtest-init"
[ -x "$rb" ] && install -m 0755 "$rb" "$dir/usr/sbin/ramboot"
echo "rbtest-debian-$suite" > "$dir/etc/rbtest-id"
echo "ramboot-demo" > "$dir/etc/hostname"
echo "build-debian-root: $(du -sh "$dir" | cut -f1) in $dir"
