# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Profiles written by hand (tests/lazy.bats, tests/prefetch.bats):
#
#   load helpers/profile
#   write_profile "$IMG.profile" "$IMG" 0 4096 1048576 65536

# ends_sha FILE: image-ends-sha256 (profile.h): the first and the last MiB,
# or the whole file when it is at most 2 MiB.
ends_sha() {
	local n
	n=$(stat -c %s "$1")
	if [ "$n" -le 2097152 ]; then
		sha256sum <"$1"
	else
		{ head -c 1048576 "$1"; tail -c 1048576 "$1"; } | sha256sum
	fi | cut -d' ' -f1
}

# write_profile OUT IMAGE [OFF LEN]...: a profile of IMAGE, written by hand
# in the format of docs/profiles.md, with these ranges in this order.
write_profile() {
	local out=$1 img=$2
	shift 2
	{
		printf 'ramboot-profile 1\nimage-size %s\n' "$(stat -c %s "$img")"
		printf 'image-ends-sha256 %s\npage-size 4096\n' "$(ends_sha "$img")"
		while [ $# -ge 2 ]; do
			printf 'range %s %s\n' "$1" "$2"
			shift 2
		done
	} >"$out"
}
