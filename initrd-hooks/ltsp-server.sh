# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot on the LTSP server: what the package's parts of LTSP's image
# and ipxe applets (ltsp/image.sh, ltsp/ipxe.sh) run (`sh ltsp-server.sh
# ...`) after LTSP's own work (POST_IMAGE_RAMBOOT, POST_IPXE_RAMBOOT).
# It never runs on a client.
#
#   ltsp-server.sh image DIR [--sign=KEY] [PUBLISH-OPTION...]
#       After `ltsp image` and `ltsp image --revert`: give every DIR/NAME.img
#       its own manifest again. LTSP renames NAME.img to NAME.img.old
#       before it puts a new image in place, and `--revert` swaps the two
#       files; the manifests follow them here:
#         - NAME.img.manifest is NAME.img's: nothing to do (an image this
#           run did not touch);
#         - NAME.img.old.manifest is NAME.img's: the image was reverted;
#           the two manifests are swapped;
#         - otherwise NAME.img is new: NAME.img.manifest, when it is
#           NAME.img.old's, is copied to NAME.img.old.manifest, then
#           `ramboot publish` writes NAME.img's (KEY empty: unsigned).
#       Exit 0, or 1 when an image could not be published (each one is
#       tried; a loud warning names it).
#
#   ltsp-server.sh ipxe FILE INITRD...
#       After `ltsp ipxe`: load each INITRD (a file in FILE's directory,
#       TFTP_DIR/ltsp) between ltsp.img and the image's initrd.img in
#       FILE (ltsp.ipxe), each only when it can be fetched at boot. Run
#       again over a file that has them, it changes nothing.
#
# Which manifest is whose: a manifest belongs to an image when its size
# and the SHA-256 of its first and last chunks match the image's. A
# squashfs starts with its superblock, which holds the time it was made,
# and ends with its inode, directory and id tables: a rebuilt image
# differs in both, also at the same size. At most two chunks (8 MiB by
# default) are read per check. A version 1 manifest (no chunks) or one
# of a compressed image is nobody's: the image is published again. A
# wrong guess costs a fallback, never a wrong boot: every client checks
# the whole copy against the manifest.
#
# RAMBOOT_BIN (environment): the ramboot program, default `ramboot` in PATH.

set -u

ramboot_prog=${RAMBOOT_BIN:-ramboot}

say() {
	printf 'ramboot: %s\n' "$*"
}

warn() {
	printf 'ramboot: %s\n' "$*" >&2
}

# The value of key $2 of manifest $1 (the first word after it).
man_key() {
	sed -n "s/^$2 \\([^ ]*\\).*/\\1/p" "$1" | head -n 1
}

# The SHA-256 of chunk $3 (size $2) of file $1.
chunk_sha() {
	dd if="$1" bs="$2" skip="$3" count=1 2>/dev/null | sha256sum | cut -d ' ' -f 1
}

# Does manifest $2 describe image $1? (See the header.)
belongs() {
	[ -f "$1" ] && [ -f "$2" ] && [ ! -L "$2" ] || return 1
	b_size=$(man_key "$2" size)
	b_cs=$(man_key "$2" chunk-size)
	b_comp=$(man_key "$2" compression)
	case $b_comp in
	'' | none) ;;
	*) return 1 ;;
	esac
	case $b_size$b_cs in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ "$b_size" -gt 0 ] && [ "$b_cs" -gt 0 ] || return 1
	[ "$(stat -c %s "$1")" = "$b_size" ] || return 1
	b_last=$(((b_size + b_cs - 1) / b_cs - 1))
	for b_i in 0 "$b_last"; do
		b_want=$(sed -n "s/^chunk $b_i \\([0-9a-f]*\\)\$/\\1/p" "$2" | head -n 1)
		[ -n "$b_want" ] || return 1
		[ "$(chunk_sha "$1" "$b_cs" "$b_i")" = "$b_want" ] || return 1
	done
	return 0
}

# Copy $1 to $2 through a temporary file beside it: $2 is either the old
# file or the whole new one.
copy_into_place() {
	[ ! -d "$2" ] || return 1
	c_tmp=$(mktemp "${2%/*}/.${2##*/}.XXXXXX") || return 1
	if cp "$1" "$c_tmp" && chmod 0644 "$c_tmp" && mv -f "$c_tmp" "$2"; then
		return 0
	fi
	rm -f "$c_tmp"
	return 1
}

# `ltsp image --revert` brought NAME.img.old back as NAME.img: its
# manifest, NAME.img.old.manifest, goes back to NAME.img.manifest in one
# rename (a client reads one or the other, never none), and the
# manifest of the image that became NAME.img.old follows it there.
swap_manifests() { # img
	s_m=$1.manifest
	s_om=$1.old.manifest
	s_keep=
	[ ! -d "$s_m" ] || return 1
	if belongs "$1.old" "$s_m"; then
		s_keep=$(mktemp "${1%/*}/.${1##*/}.old.manifest.XXXXXX") || return 1
		# mktemp makes it 0600; clients read manifests as anyone
		# (root_squash over NFS, an HTTP server)
		if ! cp "$s_m" "$s_keep" || ! chmod 0644 "$s_keep"; then
			rm -f "$s_keep"
			return 1
		fi
	fi
	if ! mv -f "$s_om" "$s_m"; then
		[ -z "$s_keep" ] || rm -f "$s_keep"
		return 1
	fi
	[ -z "$s_keep" ] || mv -f "$s_keep" "$s_om" || return 1
	say "${1##*/}: reverted image, its manifest restored${s_keep:+ (the other one kept as ${s_om##*/})}"
}

publish_one() { # img publish-options...
	p_img=$1
	shift
	if [ -n "$sign" ]; then
		set -- --sign="$sign" "$@"
	fi
	"$ramboot_prog" publish "$@" "$p_img"
}

cmd_image() {
	[ $# -ge 1 ] || {
		warn "usage: ltsp-server.sh image DIR [--sign=KEY] [PUBLISH-OPTION...]"
		return 2
	}
	dir=$1
	shift
	sign=
	if [ $# -gt 0 ]; then
		case $1 in
		--sign=*)
			sign=${1#--sign=}
			shift
			;;
		esac
	fi
	if ! command -v "$ramboot_prog" >/dev/null 2>&1; then
		warn "no $ramboot_prog program: images not published"
		return 0
	fi
	[ -d "$dir" ] || return 0
	failed=
	for img in "$dir"/*.img; do
		[ -f "$img" ] || continue
		name=${img##*/}
		if belongs "$img" "$img.manifest"; then
			continue
		fi
		if belongs "$img" "$img.old.manifest"; then
			swap_manifests "$img" && continue
			warn "$name: cannot swap $name.manifest and $name.old.manifest; publishing it again"
		elif belongs "$img.old" "$img.manifest"; then
			# The previous image's manifest stays with it, for a
			# later --revert; until publish ends, clients read it
			# beside the new image, find a mismatch and fall back.
			copy_into_place "$img.manifest" "$img.old.manifest" ||
				warn "$name: cannot keep the manifest of $name.old: a later 'ltsp image --revert' needs 'ramboot publish' again"
		fi
		say "publishing $img"
		if ! publish_one "$img" "$@"; then
			warn "WARNING: $img is NOT published: its clients do not get a verified"
			warn "WARNING: RAM copy until 'ramboot publish${sign:+ --sign=$sign}${*:+ $*} $img' succeeds"
			failed=1
		fi
	done
	[ -z "$failed" ]
}

cmd_ipxe() {
	[ $# -ge 2 ] || {
		warn "usage: ltsp-server.sh ipxe FILE INITRD..."
		return 2
	}
	file=$1
	shift
	if [ ! -f "$file" ]; then
		warn "$file: no such file: no initrd added"
		return 1
	fi
	# LTSP 23's template: one kernel line naming ltsp.img and
	# initrd.img (for EFI), then one initrd line for each.
	# shellcheck disable=SC2016 # iPXE's ${img}, not the shell's
	kline='^kernel /ltsp/\${img}/vmlinuz initrd=ltsp\.img .*initrd=initrd\.img'
	if [ "$(grep -c "$kline" "$file")" != 1 ]; then
		warn "$file: not one 'kernel /ltsp/\${img}/vmlinuz initrd=ltsp.img ... initrd=initrd.img' line: no initrd added"
		return 1
	fi
	add=
	for i in "$@"; do
		case $i in
		'' | */* | *[!A-Za-z0-9._-]*)
			warn "$i: not a file name in ${file%/*}: no initrd added"
			return 1
			;;
		esac
		grep -qF "initrd /ltsp/$i && set ramboot_initrds " "$file" && continue
		add="$add $i"
	done
	[ -n "$add" ] || return 0
	# Each one is fetched before the kernel line and named on it only
	# when the fetch worked: a file that is gone later costs its
	# feature, never the boot. iPXE hands the initrds over in the
	# order they were fetched (EFI: in the order of initrd=), both
	# before the distribution's compressed initrd.img.
	i_tmp=$(mktemp "${file%/*}/.${file##*/}.XXXXXX") || return 1
	if awk -v add="$add" '
		index($0, "kernel /ltsp/${img}/vmlinuz initrd=ltsp.img ") == 1 && !done {
			if (!seen) {
				print "# ramboot: extra initrds (ltsp.conf RAMBOOT_IPXE_INITRDS), each named"
				print "# on the kernel line only when it could be fetched"
				print "clear ramboot_initrds ||"
			}
			n = split(add, a, " ")
			for (j = 1; j <= n; j++)
				printf "initrd /ltsp/%s && set ramboot_initrds ${ramboot_initrds} initrd=%s ||\n", a[j], a[j]
			if (!seen)
				sub(/initrd=ltsp\.img /, "initrd=ltsp.img ${ramboot_initrds} ")
			done = 1
		}
		$0 == "clear ramboot_initrds ||" { seen = 1 }
		{ print }
' "$file" >"$i_tmp" && chmod 0644 "$i_tmp" && mv -f "$i_tmp" "$file"; then
		say "$file: loads$add"
		return 0
	fi
	rm -f "$i_tmp"
	warn "$file: cannot add$add"
	return 1
}

case ${1-} in
image)
	shift
	cmd_image "$@"
	;;
ipxe)
	shift
	cmd_ipxe "$@"
	;;
*)
	warn "usage: ltsp-server.sh image DIR [--sign=KEY] [OPTION...] | ipxe FILE INITRD..."
	exit 2
	;;
esac
