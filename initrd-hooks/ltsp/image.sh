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
	# Also at 65-mksquashfs's at_exit, once the new image is in place
	# and before `ltsp kernel`, which may fail and end `ltsp image`
	# before POST_IMAGE_RAMBOOT: the image the clients read has its own
	# manifest all the same. LTSP's exit commands run on any way out
	# (after a failed mksquashfs this publishes the image still there,
	# which changes nothing), errors ignored: POST_IMAGE_RAMBOOT, run-or-
	# die, then finds nothing new or says loudly what failed.
	exit_command "$POST_IMAGE_RAMBOOT"
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
