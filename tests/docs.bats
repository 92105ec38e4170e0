#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The documents against the code, each class both ways where it can go
# wrong both ways: the fallback reasons the code writes (cmdline.md's
# report table, the admin guide's Fallbacks table); the keys of the boot
# report and of the lazy status file, taken from their writers in src/;
# the modes; the settings of src/boot/cmdline.c (conf/ramboot.conf, cmdline.md);
# every option of each --help in its document's tables and in the
# synopses; the status verdicts; the messages the documents quote; the
# man pages (no bare document names, sections that nest); links only to
# documents the package ships; the README's install lines.

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
		sed -n '/^static const char \*fallback_reason/,/^}/p' "$TOP"/src/*/*.c |
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

# The fallback values of the admin guide's "Fallbacks" table: each
# `fallback=REASON`, and the `REASON`s after it in the same cell
# (`fallback=image not found` / `no image`).
guide_fallbacks() {
	awk '$0 == "## Fallbacks" { on = 1; next } on && /^#/ { exit } on && /^\| / { print }' \
		"$TOP/docs/admin-guide.md" | grep 'fallback=' | sed 's/.*`fallback=/`/' |
		grep -o '`[^`]*`' | tr -d '`' | grep -v '[=_]' | grep -v '^\$' | LC_ALL=C sort -u
}

@test "docs: the admin guide's Fallbacks table has a row for every fallback reason the code writes, and no other" {
	code=$(code_fallbacks)
	doc=$(guide_fallbacks)
	[ "$(printf '%s\n' "$doc" | wc -l)" -gt 10 ]
	run comm -23 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_output ''
	run comm -13 <(printf '%s\n' "$code") <(printf '%s\n' "$doc" | grep -v '^lazy copy gave up')
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
	[profile]="profiles.md" [lazy]="lazy.md" [cache]="cache.md"
)

# The options of a --help text: the lines of its option list
# ("  -k, --key=KEY  ...", "      --keys=DIR ..."), --help left out.
help_option_list() {
	grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' |
		LC_ALL=C sort -u | grep -vx -- --help
}

# The option entries of documents: the first cell of a table row, or a
# list item that starts with the option ("- `--image=PATH`: ...").
doc_option_entries() {
	cat "$@" | grep -E '^(\| |- `)' | sed -E 's/^- //; s/^\| ([^|]*)\|.*/\1/; s/^(`[^`]*`(, `[^`]*`)*).*/\1/'
}

@test "docs: every option in each command's --help has an entry in that command's document (a table row or a list item)" {
	local bin=$TOP/ramboot c o f d missing=
	[ -x "$bin" ] || skip "no ./ramboot (make)"
	for c in "${!CMD_DOCS[@]}"; do
		run "$bin" "$c" --help
		assert_success
		[ -n "$(help_option_list <<<"$output")" ] || fail "ramboot $c --help lists no option"
		f=
		for d in ${CMD_DOCS[$c]}; do f="$f $TOP/docs/$d"; done
		# shellcheck disable=SC2086
		doc_option_entries $f > "$BATS_TEST_TMPDIR/entries"
		for o in $(help_option_list <<<"$output"); do
			grep -qE -- "$o([^a-z0-9-]|\$)" "$BATS_TEST_TMPDIR/entries" || missing="$missing $c:$o"
		done
	done
	[ -z "$missing" ] || fail "options without an entry in their documents:$missing"
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

# --- the report, the lazy status file, the settings -------------------

# A markdown table of FILE under the heading HEAD (up to the next
# heading): the backticked names of each row's first cell, one a line.
table_keys() { # FILE HEAD
	awk -v h="$2" '$0 == h { on = 1; next } on && /^#/ { exit } on && /^\| `/ { print }' "$1" |
		cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' | LC_ALL=C sort -u
}

# The keys `ramboot boot` writes into /run/ramboot/report, and those the
# lazy copier (src/lazy/) and the hooks' --drop (src/boot/) set in it
# afterwards: the report's part of the key table (src/lib/keys.c), by
# which every writer names them (tests/unit/test_report.c checks that).
code_report_keys() {
	sed -n 's/^[[:space:]]*R(RK_[A-Z0-9_]*, "\([a-z0-9_]*\)".*/\1/p' "$TOP/src/lib/keys.c" |
		LC_ALL=C sort -u
}

@test "docs: every key the boot report can hold is in docs/cmdline.md's report table, and the reverse" {
	code=$(code_report_keys)
	[ "$(printf '%s\n' "$code" | wc -l)" -gt 20 ]
	doc=$(table_keys "$TOP/docs/cmdline.md" '## The report')
	run comm -23 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_output ''
	run comm -13 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_output ''
}

# The keys of the lazy copier's status file: the key table's (src/lib/
# keys.c), which its writer (src/lazy/status.c) writes by id.
code_lazy_keys() {
	sed -n 's/^[[:space:]]*L(LK_[A-Z0-9_]*, "\([a-z0-9_]*\)".*/\1/p' "$TOP/src/lib/keys.c" |
		LC_ALL=C sort -u
}

@test "docs: every key of the lazy status file is in docs/lazy.md's table, and the reverse" {
	code=$(code_lazy_keys)
	[ "$(printf '%s\n' "$code" | wc -l)" -gt 20 ]
	doc=$(table_keys "$TOP/docs/lazy.md" '## The status file')
	run comm -23 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_output ''
	run comm -13 <(printf '%s\n' "$code") <(printf '%s\n' "$doc")
	assert_output ''
}

@test "docs: the report table's mode_asked and mode_done name every mode" {
	local m row
	for m in $(sed -n 's/^static const char \*const mode_names\[\] = { \(.*\) };/\1/p' "$TOP"/src/*/*.c | tr -d '",'); do
		for row in mode_asked mode_done; do
			grep "^| \`$row\` |" "$TOP/docs/cmdline.md" | grep -q "\`$m\`" ||
				fail "docs/cmdline.md: $row does not name the mode $m"
		done
	done
}

# The settings of `ramboot boot` (src/boot/cmdline.c settings_keys[]), as
# their environment names: "" is RAMBOOT, "swap.size" RAMBOOT_SWAP_SIZE.
code_settings() {
	sed -n '/^const char \*const settings_keys\[SET_NKEYS\] = {/,/};/p' "$TOP"/src/*/*.c |
		grep -o '"[a-z0-9.]*"' | tr -d '"' | while read -r k; do
			if [ -z "$k" ]; then echo RAMBOOT; else echo "RAMBOOT_$k" | tr 'a-z.' 'A-Z_'; fi
		done | LC_ALL=C sort -u
}

@test "docs: every setting is in conf/ramboot.conf (commented, with its default), and the reverse" {
	code=$(code_settings)
	[ "$(printf '%s\n' "$code" | wc -l)" -ge 18 ]
	conf=$(sed -n 's/^#\(RAMBOOT[A-Z0-9_]*\)=.*/\1/p' "$TOP/conf/ramboot.conf" | LC_ALL=C sort -u)
	run comm -3 <(printf '%s\n' "$code") <(printf '%s\n' "$conf")
	assert_output ''
	# shipped as comments only: installing changes nothing
	run grep -E '^[[:space:]]*(export[[:space:]]+)?RAMBOOT' "$TOP/conf/ramboot.conf"
	assert_failure
}

@test "docs: every setting is in docs/cmdline.md's switch table under both its names" {
	local e k missing=
	for e in $(code_settings); do
		k=$(echo "${e#RAMBOOT}" | tr 'A-Z_' 'a-z.')
		k=ramboot$k
		grep -E "^\| \`$k([=\` ]|\\\\)" "$TOP/docs/cmdline.md" | grep -q "\`$e[=\`]" ||
			missing="$missing $k/$e"
	done
	[ -z "$missing" ] || fail "settings not in docs/cmdline.md's table:$missing"
}

# --- the man pages -------------------------------------------------------

# The roff of a page as plain text.
man_text() {
	sed -e 's/\\-/-/g' -e 's/\\f\[[A-Z]*\]//g' -e 's/\\f[BIRPV]//g' -e 's/\\(aq/'"'"'/g' "$1"
}

need_man() {
	[ -f "$TOP/build/man/ramboot.8" ] || skip "build/man missing (make man; needs pandoc)"
}

@test "man: the pages name a document by its installed path or its man page, never by a bare file name" {
	need_man
	local p bad=
	for p in "$TOP"/build/man/*.[0-9]; do
		# a NAME.md not preceded by /usr/share/doc/ramboot/
		run bash -c "sed -e 's/\\\\-/-/g' -e 's/\\\\f\\[[A-Z]*\\]//g' -e 's/\\\\f[BIRPV]//g' '$p' |
			grep -noE '(^|[^/[:alnum:]_.-])([[:alnum:]_/-]*[[:alnum:]_-]+\\.md)\\b' | grep -v '/usr/share/doc/ramboot/'"
		[ -z "$output" ] || bad="$bad
$(basename "$p"): $output"
	done
	[ -z "$bad" ] || fail "bare document names in the man pages:$bad"
	# and the documents they name are the ones the package ships
	for p in $(cat "$TOP"/build/man/*.[0-9] | sed 's/\\-/-/g' |
		grep -oE '/usr/share/doc/ramboot/[[:alnum:]_./-]*[[:alnum:]_-]' | sort -u); do
		case $p in */ramboot/examples) continue ;; esac
		shipped_docs | grep -qxF -- "${p##*/}" || bad="$bad $p"
	done
	[ -z "$bad" ] || fail "the man pages name documents the package does not ship:$bad"
}

@test "man: every top-level section of a page is a man page section (upper case): included headings nest under them" {
	need_man
	local p bad=
	for p in "$TOP"/build/man/*.[0-9]; do
		run bash -c "grep '^\\.SH' '$p' | grep -v '^\\.SH \"\\{0,1\\}[A-Z][A-Z ]*\"\\{0,1\\}\$'"
		[ -z "$output" ] || bad="$bad
$(basename "$p"): $output"
	done
	[ -z "$bad" ] || fail "sections that are not NAME, SYNOPSIS, ...:$bad"
	run grep -c '^\.SH' "$TOP/build/man/ramboot.8"
	[ "$output" -le 10 ]
}

# --- links ---------------------------------------------------------------

# The files the package ships in /usr/share/doc/ramboot, by base name.
shipped_docs() {
	{
		sed 's|.*/||' "$TOP/debian/ramboot.docs"
		sed 's|.*/||' "$TOP/debian/ramboot.examples"
	} | LC_ALL=C sort -u
}

@test "docs: a shipped document links only to documents the package ships" {
	local d t bad=
	shipped=$(shipped_docs)
	[ "$(printf '%s\n' "$shipped" | wc -l)" -ge 9 ]
	while read -r d; do
		case $d in *.md) ;; *) continue ;; esac
		# the targets of [text](target) links and ![image](target)
		for t in $(grep -oE '\]\([^)[:space:]]+\)' "$TOP/$d" | sed -e 's/^](//' -e 's/)$//' -e 's/#.*//'); do
			case $t in "" | http://* | https://* | mailto:*) continue ;; esac
			printf '%s\n' "$shipped" | grep -qxF -- "${t##*/}" || bad="$bad $d->$t"
		done
	done < "$TOP/debian/ramboot.docs"
	[ -z "$bad" ] || fail "links to files the package does not ship:$bad"
}

# --- synopses ------------------------------------------------------------

# The synopsis lines of docs/ramboot.md, and of ramboot(8)'s source as
# plain text ("ramboot boot [--image=PATH] ...").
synopsis_md() {
	awk '/^## Synopsis/ { on = 1; next } on && /^#/ { exit } on && /^    ramboot / { sub(/^    /, ""); print }' \
		"$TOP/docs/ramboot.md"
}
synopsis_man() {
	awk '/^# SYNOPSIS/ { on = 1; next } on && /^#/ { exit } on && /^\*\*ramboot/ { print }' \
		"$TOP/man/ramboot.8.md" | sed -e 's/\\//g' -e 's/\*//g'
}

# "--output -o": each option of a --help's list with its short form.
help_option_pairs() {
	grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*' | sed -E 's/^ +//; s/^(-[a-zA-Z0-9]), (--.*)/\2 \1/' |
		grep -v -- '^--help' | grep -v -- '^--verbose'
}

@test "docs: the synopses of ramboot.md and ramboot(8) name every command and, where they spell options out, all of them" {
	local bin=$TOP/ramboot c o s src lines missing=
	[ -x "$bin" ] || skip "no ./ramboot (make)"
	for src in md man; do
		"synopsis_$src" > "$BATS_TEST_TMPDIR/syn"
		[ "$(wc -l < "$BATS_TEST_TMPDIR/syn")" -ge 10 ]
		for c in $("$bin" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | grep -vx help); do
			lines=$(grep -E "^ramboot $c( |\$)" "$BATS_TEST_TMPDIR/syn") || { missing="$missing $src:$c"; continue; }
			# [OPTIONS] or a pointer to the command's section: not spelt out
			grep -qE 'OPTIONS|\(see ' <<<"$lines" && continue
			while read -r o s; do
				grep -qE -- "$o([^a-z0-9-]|\$)" <<<"$lines" && continue
				[ -n "$s" ] && grep -qE -- "(^|[ [|])$s([] |]|\$)" <<<"$lines" && continue
				missing="$missing $src:$c:$o"
			done < <("$bin" "$c" --help | help_option_pairs)
		done
	done
	[ -z "$missing" ] || fail "commands or options missing from the synopses:$missing"
}

# --- quoted messages ------------------------------------------------------

@test "docs: every message the documents quote (ramboot: CMD: ...) is one the code prints, with its error: or warning: tag" {
	run python3 "$TOP/tests/helpers/doc-messages.py" "$TOP/src" "$TOP"/docs/*.md "$TOP/README.md"
	assert_success
	assert_output ''
}
