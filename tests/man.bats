#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The man pages (make man: build/man/, from man/*.md and docs/): each
# renders without a warning, and they document exactly the options and
# switches the program has: every option a `--help` prints is in
# ramboot(8) and every option ramboot(8) lists is in a `--help`; every
# ramboot.* key the command-line parser knows is in ramboot-cmdline(7)
# and the reverse.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
RAMBOOT_BIN=${RAMBOOT_BIN:-$TOP/ramboot}
MAN=$TOP/build/man
# Every command `ramboot --help` lists (but help itself).
COMMANDS=$("$RAMBOOT_BIN" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { if ($1 != "help") print $1 } on && /^$/ { on = 0 }')

# The pages built (or brought up to date) first, when the tools are there:
# a missing build/man is no reason to skip.
setup_file() {
	if command -v pandoc >/dev/null; then
		make -C "$TOP" -s man >/dev/null
	fi
}

setup() {
	[ -f "$MAN/ramboot.8" ] || skip "build/man missing (make man; needs pandoc)"
	[ -x "$RAMBOOT_BIN" ] || skip "$RAMBOOT_BIN missing (make)"
}

# The roff source as plain text: escapes for '-' and fonts removed.
plain() {
	sed -e 's/\\-/-/g' -e 's/\\f\[[A-Z]*\]//g' -e 's/\\f[BIRPV]//g' "$1"
}

# Long and short options in a text, one per line: --name (without =ARG)
# and -x.
options_in() {
	grep -oE '(^|[^A-Za-z0-9-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b' |
		sed -E 's/^[^-]*//' | sort -u
}

help_options() {
	local c
	for c in $COMMANDS; do
		"$RAMBOOT_BIN" "$c" --help 2>&1
	done | options_in
}

# The options ramboot(8) documents: the tags of its option lists (.TP).
man_listed_options() {
	plain "$MAN/ramboot.8" | awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }' |
		grep -E '^-' | options_in
}

@test "man: every page renders with groff -ww without a warning" {
	local p n=0
	for p in "$MAN"/*.[0-9]; do
		run groff -ww -z -t -man "$p"
		assert_success
		assert_output ""
		n=$((n + 1))
	done
	[ "$n" -ge 3 ]
}

@test "man: the pages are ramboot(8), ramboot.conf(5), ramboot-cmdline(7), ramboot-netmem(8), with NAME and the version" {
	local v
	v=$(cat "$TOP/VERSION")
	for p in ramboot.8 ramboot.conf.5 ramboot-cmdline.7 ramboot-netmem.8; do
		[ -f "$MAN/$p" ]
		grep -q '^\.SH NAME' "$MAN/$p"
		grep -q "^\\.TH .*\"ramboot $v\"" "$MAN/$p"
	done
	run man -l "$MAN/ramboot.8"
	assert_success
	assert_output --partial "ramboot load"
}

@test "man: every option a --help prints is in ramboot(8)" {
	local o missing=
	plain "$MAN/ramboot.8" > "$BATS_TEST_TMPDIR/text"
	for o in $(help_options); do
		grep -qE -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|\$)" "$BATS_TEST_TMPDIR/text" ||
			missing="$missing $o"
	done
	[ -z "$missing" ] || fail "options in --help but not in ramboot(8):$missing"
}

@test "man: every option ramboot(8) lists is in a --help" {
	local o missing=
	help_options > "$BATS_TEST_TMPDIR/help"
	[ "$(man_listed_options | wc -l)" -gt 30 ]
	for o in $(man_listed_options); do
		grep -qx -- "$o" "$BATS_TEST_TMPDIR/help" || missing="$missing $o"
	done
	[ -z "$missing" ] || fail "options in ramboot(8) but in no --help:$missing"
}

@test "man: every ramboot.* key of the parser is in ramboot-cmdline(7), and the reverse" {
	local k missing= extra=
	sed -n 's/.*strcmp(key, "\([a-z0-9.]*\)").*/\1/p' "$TOP/src/boot/cmdline.c" | sort -u > "$BATS_TEST_TMPDIR/keys"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/keys")" -gt 10 ]
	plain "$MAN/ramboot-cmdline.7" > "$BATS_TEST_TMPDIR/text"
	while read -r k; do
		if [ -z "$k" ]; then
			grep -q '^ramboot=' "$BATS_TEST_TMPDIR/text" || missing="$missing ramboot="
		else
			grep -qE "(^|[^a-z.])ramboot\\.$k([=[:space:]]|\$)" "$BATS_TEST_TMPDIR/text" ||
				missing="$missing ramboot.$k"
		fi
	done < "$BATS_TEST_TMPDIR/keys"
	[ -z "$missing" ] || fail "keys of src/boot/cmdline.c not in ramboot-cmdline(7):$missing"
	# the switches the page lists (the tags of its switch list)
	for k in $(awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }' "$BATS_TEST_TMPDIR/text" |
		grep -oE '^ramboot\.[a-z0-9.]+' | sed 's/^ramboot\.//' | sort -u); do
		grep -qx -- "$k" "$BATS_TEST_TMPDIR/keys" || extra="$extra ramboot.$k"
	done
	[ -z "$extra" ] || fail "switches in ramboot-cmdline(7) the parser does not know:$extra"
	# and their ltsp.conf names
	grep -q 'RAMBOOT_SWAP_SIZE' "$BATS_TEST_TMPDIR/text"
}

@test "man: ramboot.conf(5) lists every setting of the shipped /etc/ramboot.conf" {
	local k missing=
	plain "$MAN/ramboot.conf.5" > "$BATS_TEST_TMPDIR/text"
	for k in $(sed -n 's/^#\{0,1\}\(RAMBOOT[A-Z0-9_]*\)=.*/\1/p' "$TOP/conf/ramboot.conf" | sort -u); do
		grep -qw -- "$k" "$BATS_TEST_TMPDIR/text" || missing="$missing $k"
	done
	[ -z "$missing" ] || fail "settings of conf/ramboot.conf not in ramboot.conf(5):$missing"
}
