#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# man/mkman.sh SOURCE OUT VERSION DATE - build a man page with pandoc.
#
# The pages are not a second copy of the documentation: SOURCE
# (man/NAME.N.md) holds what only a man page has (NAME, SYNOPSIS,
# EXAMPLES, FILES, SEE ALSO) and pulls everything else out of docs/ with
# two directives, each alone on a line:
#
#   @include FILE [except HEADING]
#                            FILE without its title (its first line, a
#                            level-1 heading), its sections nested under
#                            the heading of SOURCE the directive follows
#                            (under "# DESCRIPTION" FILE's "## X" stays
#                            "## X", under "## ramboot lazy" it becomes
#                            "### X"; with no heading before it, "# X");
#                            "except HEADING" leaves out the section
#                            HEADING (as written in FILE) to the next
#                            heading of the same or a higher level
#   @section FILE HEADING    from the line HEADING (a markdown heading,
#                            exactly as written in FILE) to the next
#                            heading of the same or a higher level
#
# so an option documented in docs/ appears in the man page as it is
# written there. Links become their text (man/links.lua).
set -eu
src=${1:?usage: mkman.sh SOURCE OUT VERSION DATE}
out=${2:?}
version=${3:?}
date=${4:?}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

# expand SOURCE: the markdown of the page, on stdout
expand() {
	lv=0    # the level of SOURCE's last heading
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		"@include "*)
			f=${line#@include }
			ex=
			case $f in *" except "*) ex=${f#* except }; f=${f%% except *} ;; esac
			[ -f "$top/$f" ] || { echo "mkman: $src: no $f" >&2; return 1; }
			if [ -n "$ex" ] && ! grep -qxF -- "$ex" "$top/$f"; then
				echo "mkman: $src: $f has no heading '$ex'" >&2
				return 1
			fi
			awk -v lv="$lv" -v ex="$ex" '
				function level(s) { match(s, /^#+/); return RLENGTH }
				NR == 1 && /^# / { next }
				/^```/ { fence = !fence }
				!fence && ex != "" && $0 == ex { skip = level($0); next }
				!fence && skip && /^#+ / && level($0) <= skip { skip = 0 }
				skip { next }
				!fence && /^##+ / {
					# "## X" becomes a heading one level below lv
					if (lv == 0) sub(/^#/, "")
					else for (i = 2; i < lv + 1; i++) $0 = "#" $0
				}
				{ print }' "$top/$f"
			echo
			;;
		"@section "*)
			rest=${line#@section }
			f=${rest%% *}
			h=${rest#* }
			[ -f "$top/$f" ] || { echo "mkman: $src: no $f" >&2; return 1; }
			grep -qxF -- "$h" "$top/$f" ||
				{ echo "mkman: $src: $f has no heading '$h'" >&2; return 1; }
			awk -v h="$h" '
				function level(s) { match(s, /^#+/); return RLENGTH }
				/^```/ { if (on) print; fence = !fence; next }
				!fence && $0 == h { on = 1; lv = level(h); print; next }
				!fence && on && /^#+ / && level($0) <= lv { on = 0 }
				on { print }' "$top/$f"
			echo
			;;
		"#"*)
			case $line in
			"# "*) lv=1 ;; "## "*) lv=2 ;; "### "*) lv=3 ;;
			esac
			printf '%s\n' "$line"
			;;
		*) printf '%s\n' "$line" ;;
		esac
	done < "$src"
}

name=$(basename "$src" .md)     # ramboot.8
title=${name%.*}
section=${name##*.}
tmp="$out.md.tmp"
expand > "$tmp"
pandoc --from=markdown-smart --to=man --standalone \
	--lua-filter="$here/links.lua" \
	-M title="$title" -M section="$section" \
	-M header="ramboot manual" -M footer="ramboot $version" -M date="$date" \
	-o "$out.tmp" "$tmp"
rm -f "$tmp"
mv "$out.tmp" "$out"
