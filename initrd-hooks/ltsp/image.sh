# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ramboot's part of `ltsp image`, installed as
# /usr/share/ltsp/server/image/56-ramboot-image.sh. LTSP sources every
# NN-*.sh of an applet's directories (/usr/share/ltsp, /run/ltsp,
# /etc/ltsp) once ltsp.conf is read, and runs each one's NAME_main per
# image in the order of NN: this one after 55-cleanup (the image's
# root is mounted, with an overlay, on $_COW_DIR) and before
# 65-mksquashfs, which reads ADD_IMAGE_EXCLUDES (a file, or patterns
# one per line) in image_excludes. No ltsp.conf line is needed.
#
# - The image leaves out etc/ramboot/*.key, where a chrootless image
#   (`ltsp image /`) would find ramboot's private keys: the pattern is
#   added to the admin's own ADD_IMAGE_EXCLUDES for this run, never
#   in place of it (the admin's file is read, not written).
# - The image is laid out in boot order when boot profiles of it are
#   on the server (ramboot_image_sort); any failure there leaves the
#   image unsorted, with one warning, and never fails `ltsp image`.
# - Once the new image is in place, before `ltsp kernel` (at_exit), and
#   after `ltsp image --revert` (POST_IMAGE_RAMBOOT): ltsp-server.sh
#   gives every image its own manifest, when ltsp.conf
#   names ramboot's hook or sets RAMBOOT_PUBLISH_KEY or
#   RAMBOOT_PUBLISH_OPTIONS; otherwise it changes nothing.
# With ramboot removed, this file goes with it.

ramboot_image_main() {
	# LTSP's shell: names of ramboot's own (no `local` in POSIX sh)
	ramboot_pat='etc/ramboot/*.key'

	# The admin's value, kept once: each image of the run adds to it.
	if [ -z "${_RAMBOOT_EXCLUDES_SAVED-}" ]; then
		_RAMBOOT_EXCLUDES_SAVED=1
		_RAMBOOT_EXCLUDES=${ADD_IMAGE_EXCLUDES-}
		if [ "$_RAMBOOT_EXCLUDES" = "$ramboot_pat" ]; then
			warn "ramboot: ltsp.conf sets ADD_IMAGE_EXCLUDES=\"$ramboot_pat\" (ramboot 0.2's [ramboot_server]): it replaces your own image excludes; remove that line, ramboot adds the pattern itself"
		fi
	fi
	if [ -n "$_RAMBOOT_EXCLUDES" ] && [ -f "$_RAMBOOT_EXCLUDES" ]; then
		# Beside LTSP's own image.excludes.tmp, removed with it.
		ramboot_f=$(re readlink -f "$_COW_DIR/../ramboot-excludes.tmp")
		{
			re cat "$_RAMBOOT_EXCLUDES"
			printf '\n%s\n' "$ramboot_pat"
		} >"$ramboot_f"
		exit_command "rw rm -f '$ramboot_f'"
		ADD_IMAGE_EXCLUDES=$ramboot_f
	else
		ADD_IMAGE_EXCLUDES="${_RAMBOOT_EXCLUDES:+$_RAMBOOT_EXCLUDES$_NL}$ramboot_pat"
	fi
	# LTSP runs under set -e: the sort never ends `ltsp image`.
	ramboot_image_sort || :
	# Also at 65-mksquashfs's at_exit, once the new image is in place
	# and before `ltsp kernel`, which may fail and end `ltsp image`
	# before POST_IMAGE_RAMBOOT: the image the clients read has its own
	# manifest all the same. LTSP's exit commands run on any way out
	# (after a failed mksquashfs this publishes the image still there,
	# which changes nothing), errors ignored: POST_IMAGE_RAMBOOT, run-or-
	# die, then finds nothing new or says loudly what failed.
	exit_command "$POST_IMAGE_RAMBOOT"
}

# mksquashfs writes the files of a `-sort FILE` with a higher priority
# first; its entries are paths relative to its one source directory,
# $_COW_DIR. `ramboot profile sort IMAGE PROFILE...` writes that file
# from profiles recorded on IMAGE, the previous image: its paths are
# those of the new tree as well, but its byte ranges no longer fit once
# the image is rebuilt, so the file is kept as NAME.img.sort and used
# again while no profile fits. The file goes beside LTSP's
# image.excludes.tmp, in the run's own directory, and into
# MKSQUASHFS_PARAMS for this image only: LTSP splits that into words
# (and expands patterns), so its path must be a plain one.
ramboot_image_sort() {
	# The admin's value, kept once: each image starts from it.
	if [ -z "${_RAMBOOT_PARAMS_SAVED-}" ]; then
		_RAMBOOT_PARAMS_SAVED=1
		_RAMBOOT_PARAMS=${MKSQUASHFS_PARAMS-}
	fi
	MKSQUASHFS_PARAMS=$_RAMBOOT_PARAMS
	[ "${RAMBOOT_LTSP_SORT-}" != 0 ] || return 0
	ramboot_img=$BASE_DIR/images/$_IMG_NAME.img
	if [ -n "${RAMBOOT_LTSP_SORT_PROFILES-}" ]; then
		# shellcheck disable=SC2086 # file names or patterns
		set -- $RAMBOOT_LTSP_SORT_PROFILES
	elif [ -f "$ramboot_img.profile" ]; then
		set -- "$ramboot_img.profile"
	else
		set --
	fi
	[ "$#" -gt 0 ] || [ -f "$ramboot_img.sort" ] || return 0
	case " $(printf '%s' "$MKSQUASHFS_PARAMS" | tr '\t\n' '  ') " in
	*" -sort "*)
		warn "ramboot: MKSQUASHFS_PARAMS has its own -sort, kept: image $_IMG_NAME not sorted by boot profiles"
		return 0
		;;
	esac
	ramboot_sf=$(readlink -f "$_COW_DIR/..") || ramboot_sf=
	ramboot_sf=${ramboot_sf:+$ramboot_sf/ramboot.sort}
	case $ramboot_sf in
	/?*/ramboot.sort) ;;
	*) ramboot_sf=" $ramboot_sf" ;;
	esac
	case $ramboot_sf in
	*[!A-Za-z0-9._/+-]*)
		warn "ramboot: image $_IMG_NAME not sorted: no plain path for its sort file ($ramboot_sf)"
		return 0
		;;
	esac
	# The directory is LTSP's own (mktemp -d); a file left there is
	# replaced, never written through.
	rm -f "$ramboot_sf" 2>/dev/null || :
	ramboot_sort_why=
	if [ "$#" -eq 0 ]; then
		:
	elif [ ! -f "$ramboot_img" ]; then
		ramboot_sort_why="no $ramboot_img to map the profiles on"
	elif ramboot_sort_why=$("${RAMBOOT_BIN:-ramboot}" profile sort "$ramboot_img" "$@" \
		-o "$ramboot_sf" 2>&1 >/dev/null) && [ -f "$ramboot_sf" ]; then
		exit_command "rw rm -f '$ramboot_sf'"
		MKSQUASHFS_PARAMS="${MKSQUASHFS_PARAMS:+$MKSQUASHFS_PARAMS }-sort $ramboot_sf"
		rm -f "$ramboot_img.sort.tmp" 2>/dev/null || :
		if ! { cp "$ramboot_sf" "$ramboot_img.sort.tmp" &&
			mv -f "$ramboot_img.sort.tmp" "$ramboot_img.sort"; } 2>/dev/null; then
			rm -f "$ramboot_img.sort.tmp" 2>/dev/null || :
			warn "ramboot: image $_IMG_NAME sorted, but its sort file could not be kept as $ramboot_img.sort"
		fi
		return 0
	else
		ramboot_sort_why=$(printf '%s' "${ramboot_sort_why:-no sort file written}" | tail -n 1)
		rm -f "$ramboot_sf" 2>/dev/null || :
	fi
	# The last run's sort file: its paths still name the tree's files.
	if [ -f "$ramboot_img.sort" ] && cp "$ramboot_img.sort" "$ramboot_sf" 2>/dev/null; then
		exit_command "rw rm -f '$ramboot_sf'"
		MKSQUASHFS_PARAMS="${MKSQUASHFS_PARAMS:+$MKSQUASHFS_PARAMS }-sort $ramboot_sf"
		[ -z "$ramboot_sort_why" ] ||
			warn "ramboot: boot profiles not used ($ramboot_sort_why): image $_IMG_NAME sorted by $ramboot_img.sort"
	else
		rm -f "$ramboot_sf" 2>/dev/null || :
		warn "ramboot: image $_IMG_NAME not sorted: ${ramboot_sort_why:-$ramboot_img.sort cannot be read}"
	fi
	return 0
}

ramboot_image_post() {
	[ -r /usr/share/ramboot/ltsp-server.sh ] || return 0
	if [ -z "${RAMBOOT_PUBLISH_KEY-}${RAMBOOT_PUBLISH_OPTIONS-}" ] &&
		! grep -qs 'ramboot/ltsp-hook\.sh' /etc/ltsp/ltsp.conf; then
		return 0
	fi
	# shellcheck disable=SC2086 # the options are words
	sh /usr/share/ramboot/ltsp-server.sh image "$BASE_DIR/images" \
		--sign="${RAMBOOT_PUBLISH_KEY-}" ${RAMBOOT_PUBLISH_OPTIONS-}
}

# ltsp.conf's own POST_IMAGE_RAMBOOT (ramboot 0.2's [ramboot_server])
# runs instead, once.
POST_IMAGE_RAMBOOT=${POST_IMAGE_RAMBOOT:-ramboot_image_post}
