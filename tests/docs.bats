#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The documents against the code: every fallback reason the code can write
# is in the report table of docs/cmdline.md and every one documented there
# is written somewhere; every status verdict in docs/swap.md; the install
# lines of the README; links into documents the package ships.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)

# The fallback reasons the code writes: `ramboot boot`'s fallback() calls
# and load-error names (src/boot/modes.c), and the hooks' --drop reasons.
code_fallbacks() {
	{
		grep -ho 'fallback(rep, "[^"]*"' "$TOP"/src/*.c "$TOP"/src/*/*.c | sed 's/.*"\(.*\)"/\1/'
		sed -n '/^static const char \*fallback_reason/,/^}/p' "$TOP/src/boot/modes.c" |
			grep -o 'return "[^"]*"' | sed 's/return "\(.*\)"/\1/'
		grep -ho 'ramboot_drop "[^"]*" "[^"]*"' "$TOP"/initrd-hooks/*.sh "$TOP"/initrd-hooks/*/* \
			"$TOP"/dracut/*/* 2>/dev/null | sed 's/.*" "\(.*\)"/\1/'
		grep -ho 'ramboot_why=[^$]*"[^"$]*"' "$TOP"/initrd-hooks/*.sh | sed 's/.*"\(.*\)"/\1/'
		grep -ho 'ramboot_why:-"[^"]*"' "$TOP"/initrd-hooks/*.sh | sed 's/.*"\(.*\)"/\1/'
	} | grep -v '^\$' | LC_ALL=C sort -u
}

# The values in the `fallback` row of docs/cmdline.md's report table.
doc_fallbacks() {
	grep '^| `fallback` |' "$TOP/docs/cmdline.md" | grep -o '`[^`]*`' | tr -d '`' |
		grep -vx 'fallback\|--drop' | grep -v '[=_]' | LC_ALL=C sort -u
}

@test "docs: every fallback reason the code writes is in docs/cmdline.md's report table" {
	code=$(code_fallbacks)
	[ "$(printf '%s\n' "$code" | wc -l)" -gt 15 ]
	doc=$(doc_fallbacks)
	run comm -23 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_success
	assert_output ''
}

@test "docs: every fallback reason docs/cmdline.md documents is one the code writes" {
	code=$(code_fallbacks)
	doc=$(doc_fallbacks)
	# "lazy copy gave up: REASON" is written with its reason appended
	run comm -13 <(printf '%s\n' "$code") <(printf '%s\n' "$doc" | grep -v '^lazy copy gave up')
	assert_success
	assert_output ''
}

@test "docs: every verdict line of ramboot status is in docs/swap.md" {
	# the fixed head of each verdict (up to the first format directive)
	run bash -c "grep -ho 'snprintf(buf, len, \"[^\"%]*' '$TOP/src/status/verdict.c' | sed 's/.*\"//'"
	assert_success
	[ "${#lines[@]}" -ge 8 ]
	for v in "${lines[@]}"; do
		v=${v%% (*}
		v=${v%%:*}
		grep -qF -- "$v" "$TOP/docs/swap.md" || fail "docs/swap.md does not name the verdict '$v'"
	done
}

@test "docs: the README installs the package where dpkg-buildpackage writes it" {
	run grep -n 'writes \.\./ramboot_\*\.deb' "$TOP/README.md"
	assert_success
	run grep -n 'apt install \./ramboot_' "$TOP/README.md"
	assert_failure
}

@test "docs: the admin guide's key advice keeps private keys out of /etc" {
	run grep -nE 'keygen /etc/|--sign=/etc/' "$TOP/docs/admin-guide.md" "$TOP/docs/trust.md" "$TOP/docs/ramboot.md" "$TOP/README.md"
	assert_failure
}

# The documents that describe each command's options.
declare -gA CMD_DOCS=(
	[load]="ramboot.md" [manifest]="ramboot.md" [publish]="ramboot.md"
	[keygen]="ramboot.md" [sign]="ramboot.md" [verity]="ramboot.md"
	[serve]="ramboot.md admin-guide.md" [swap]="swap.md" [status]="swap.md"
	[boot]="ramboot.md cmdline.md admin-guide.md" [initrd]="admin-guide.md"
	[profile]="profiles.md" [lazy]="lazy.md"
)

@test "docs: every option in each command's --help is in that command's document" {
	local bin=$TOP/ramboot c o f missing=
	[ -x "$bin" ] || skip "no ./ramboot (make)"
	for c in "${!CMD_DOCS[@]}"; do
		run "$bin" "$c" --help
		assert_success
		for o in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$output" | sort -u | grep -vx -- --help); do
			f=
			for d in ${CMD_DOCS[$c]}; do f="$f $TOP/docs/$d"; done
			# shellcheck disable=SC2086
			cat $f | grep -qE -- "\`[^\`]*$o([^a-z0-9-][^\`]*)?\`" || missing="$missing $c:$o"
		done
	done
	[ -z "$missing" ] || fail "options not in their documents:$missing"
}

@test "docs: every command has a document for its options" {
	local bin=$TOP/ramboot c
	[ -x "$bin" ] || skip "no ./ramboot (make)"
	for c in $("$bin" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | grep -vx help); do
		[ -n "${CMD_DOCS[$c]:-}" ] || fail "command $c has no entry in CMD_DOCS"
	done
}

@test "help COMMAND prints that command's help; an unknown one is a usage error" {
	local bin=$TOP/ramboot
	[ -x "$bin" ] || skip "no ./ramboot (make)"
	run "$bin" help load
	assert_success
	assert_line --index 0 'Usage: ramboot load [OPTIONS] SOURCE DEST'
	run "$bin" help status
	assert_success
	assert_line --index 0 --partial 'Usage: ramboot status'
	run "$bin" help bogus
	assert_failure 2
	run "$bin" help
	assert_success
	assert_line --index 0 'Usage: ramboot COMMAND [OPTIONS] [ARGS]'
}
