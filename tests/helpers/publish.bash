# shellcheck shell=bash disable=SC2034 # the variables are the tests'
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/helpers/publish.bash - what tests/publish.bats and
# tests/publish-ca.bats share: a signing key for the file, and for each
# test its directories (T, OUT), the key (KEY, KEYS), IMG's name and PIDS.

# setup_file: the fault shim and a site key whose public half is in KEYS
publish_setup_file() {
	faultinj_build
	"$RAMBOOT_BIN" keygen "$BATS_FILE_TMPDIR/site" >/dev/null
	mkdir -p "$BATS_FILE_TMPDIR/keys"
	cp "$BATS_FILE_TMPDIR/site.pub" "$BATS_FILE_TMPDIR/keys/"
}

# setup: the loader checked, the variables set; IMG is not made here
publish_setup() {
	require_loader
	T=$BATS_TEST_TMPDIR
	KEY=$BATS_FILE_TMPDIR/site
	KEYS=$BATS_FILE_TMPDIR/keys
	setup_out
	IMG=$OUT/x.img
	PIDS=()
}
