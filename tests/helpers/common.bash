# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Shared helpers for the loader tests (tests/load*.bats, tests/manifest.bats).
#
# Fixtures are generated once per bats run into $BATS_RUN_TMPDIR/fixtures
# (shared by every .bats file of the run) by fixtures_init, normally from
# setup_file:
#
#   $FIX/tree/             a small directory tree (text, binary, symlinks)
#   $FIX/<img>.raw         the images: empty (0 bytes), one (1 byte),
#                          sqfs (an uncompressed squashfs of tree/, a few MiB)
#   $FIX/<img>.zst|.xz|.lzo|.gz   each image with each transport codec
#   $FIX/sqfs.*            variants: multi-frame zstd, multi-block xz, xz
#                          integrity checks, lzop levels, multi-member gzip
#
# Every test writes below $BATS_TEST_TMPDIR/out, a directory that must be
# empty again after a failed load ("no partial output").

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154,SC2016
# TOP, RAMBOOT_BIN, bats-support and bats-assert
load helpers/base

FIX=$BATS_RUN_TMPDIR/fixtures

# codec name (as given to -d) -> file extension of the fixture
codec_ext() {
	case $1 in
	none) echo raw ;;
	zstd) echo zst ;;
	xz) echo xz ;;
	lzo) echo lzo ;;
	gzip) echo gz ;;
	*) return 1 ;;
	esac
}

# fixture IMG CODEC: path of image IMG compressed with CODEC
fixture() {
	echo "$FIX/$1.$(codec_ext "$2")"
}

# Build a deterministic tree of a few MiB: compressible text, incompressible
# bytes, empty files, symlinks, nested directories, odd names.
make_tree() {
	local d=$1 i
	mkdir -p "$d/text" "$d/bin" "$d/deep/a/b/c" "$d/empty-dir"
	for i in 1 2 3 4; do
		seq -f "line %g of a compressible text file number $i" 1 25000 >"$d/text/file$i.txt"
	done
	# incompressible, but reproducible within the run
	head -c 1048576 /dev/urandom >"$d/bin/random.bin"
	head -c 300000 /dev/urandom >"$d/deep/a/b/c/random2.bin"
	: >"$d/empty-file"
	printf 'x' >"$d/one-byte"
	printf 'name with spaces\n' >"$d/deep/with space.txt"
	ln -s text/file1.txt "$d/link-to-file1"
	ln -s /nonexistent "$d/dangling"
	if [ -d /usr/share/common-licenses ]; then
		cp -r /usr/share/common-licenses "$d/licenses"
	fi
	chmod -R u+rwX,go+rX "$d"
}

# One compressor invocation per fixture; all from files (content size known
# to zstd) except the *.stream.* ones. Fast levels (xz -0/-1): the decoder
# paths are the same, and the suite stays quick.
_make_fixtures() {
	local img half p
	mkdir -p "$FIX"
	make_tree "$FIX/tree"
	: >"$FIX/empty.raw"
	printf 'R' >"$FIX/one.raw"
	mksquashfs "$FIX/tree" "$FIX/sqfs.raw" -quiet -no-progress -noappend \
		-all-root -no-xattrs -noI -noD -noF -noX >/dev/null
	for img in empty one sqfs; do
		zstd -q -3 -c "$FIX/$img.raw" >"$FIX/$img.zst"
		xz -1 -c "$FIX/$img.raw" >"$FIX/$img.xz"
		lzop -3 -c "$FIX/$img.raw" >"$FIX/$img.lzo"
		gzip -6 -n -c "$FIX/$img.raw" >"$FIX/$img.gz"
	done
	# zstd: frames from a pipe (no content size), two frames back to back,
	# pzstd output (skippable frames between the frames)
	zstd -q -c <"$FIX/sqfs.raw" >"$FIX/sqfs.stream.zst"
	half=$(($(stat -c %s "$FIX/sqfs.raw") / 2))
	head -c "$half" "$FIX/sqfs.raw" >"$FIX/sqfs.part1"
	tail -c +"$((half + 1))" "$FIX/sqfs.raw" >"$FIX/sqfs.part2"
	zstd -q -c "$FIX/sqfs.part1" >"$FIX/sqfs.part1.zst"
	zstd -q -c "$FIX/sqfs.part2" >"$FIX/sqfs.part2.zst"
	cat "$FIX/sqfs.part1.zst" "$FIX/sqfs.part2.zst" >"$FIX/sqfs.multi.zst"
	gzip -n -c "$FIX/sqfs.part1" >"$FIX/sqfs.part1.gz"
	gzip -n -c "$FIX/sqfs.part2" >"$FIX/sqfs.part2.gz"
	if command -v pzstd >/dev/null; then
		pzstd -q -p 2 -3 -c "$FIX/sqfs.raw" >"$FIX/sqfs.pzstd.zst"
	fi
	# many small frames/blocks/members: output order under threads
	mkdir -p "$FIX/pieces"
	split -b 65536 -a 4 "$FIX/sqfs.raw" "$FIX/pieces/p"
	for p in "$FIX"/pieces/p*; do zstd -q -1 -c "$p"; done >"$FIX/sqfs.many.zst"
	for p in "$FIX"/pieces/p*; do gzip -1 -n -c "$p"; done >"$FIX/sqfs.many.gz"
	rm -rf "$FIX/pieces"
	xz -0 -T2 --block-size=64KiB -c "$FIX/sqfs.raw" >"$FIX/sqfs.many.xz"
	# empty frames/streams/members between two halves
	cat "$FIX/sqfs.part1.zst" "$FIX/empty.zst" "$FIX/sqfs.part2.zst" >"$FIX/sqfs.empty-mid.zst"
	cat "$FIX/sqfs.part1.gz" "$FIX/empty.gz" "$FIX/sqfs.part2.gz" >"$FIX/sqfs.empty-mid.gz"
	# xz: multi-block (threaded), every integrity check
	xz -1 -T2 --block-size=1MiB -c "$FIX/sqfs.raw" >"$FIX/sqfs.mb.xz"
	xz -0 --check=crc32 -c "$FIX/sqfs.raw" >"$FIX/sqfs.crc32.xz"
	xz -0 --check=crc64 -c "$FIX/sqfs.raw" >"$FIX/sqfs.crc64.xz"
	xz -0 --check=sha256 -c "$FIX/sqfs.raw" >"$FIX/sqfs.sha256.xz"
	xz -0 --check=none -c "$FIX/sqfs.raw" >"$FIX/sqfs.none.xz"
	xz -0 -c "$FIX/sqfs.part1" "$FIX/sqfs.part2" >"$FIX/sqfs.multi.xz"
	# lzop levels (different methods: LZO1X-1(15) and LZO1X-999), CRC32
	lzop -1 -c "$FIX/sqfs.raw" >"$FIX/sqfs.1.lzo"
	lzop -9 -c "$FIX/sqfs.raw" >"$FIX/sqfs.9.lzo"
	lzop --crc32 -c "$FIX/sqfs.raw" >"$FIX/sqfs.crc.lzo"
	lzop -c <"$FIX/sqfs.raw" >"$FIX/sqfs.stream.lzo"
	# gzip: two members, pigz
	cat "$FIX/sqfs.part1.gz" "$FIX/sqfs.part2.gz" >"$FIX/sqfs.multi.gz"
	if command -v pigz >/dev/null; then
		pigz -p 2 -c "$FIX/sqfs.raw" >"$FIX/sqfs.pigz.gz"
	fi
	sha256sum "$FIX/sqfs.raw" | cut -d' ' -f1 >"$FIX/sqfs.sha256"
}

# Build the fixtures once per run (the .bats files of one run share them).
fixtures_init() {
	local lock=$BATS_RUN_TMPDIR/fixtures.lock
	[ -e "$FIX/.done" ] && return 0
	until mkdir "$lock" 2>/dev/null; do sleep 0.2; done
	if [ ! -e "$FIX/.done" ]; then
		rm -rf "$FIX"
		if ! _make_fixtures; then
			rmdir "$lock"
			echo "# fixture generation failed" >&3
			return 1
		fi
		: >"$FIX/.done"
	fi
	rmdir "$lock"
}

# Per-test output directory.
setup_out() {
	OUT=$BATS_TEST_TMPDIR/out
	mkdir -p "$OUT"
}

# The loader must exist before anything else makes sense.
require_loader() {
	[ -x "$RAMBOOT_BIN" ] || fail "no binary at $RAMBOOT_BIN (run make)"
}

# Print what a command did (on failure the test shows it).
show_run() {
	echo "# status: $status"
	echo "# stdout: ${output:-}"
	echo "# stderr: ${stderr:-}"
}

# expect_status N: the last `run` exited N.
expect_status() {
	if [ "$status" -ne "$1" ]; then
		show_run
		fail "exit status $status, expected $1"
	fi
}

# rb ARGS: run ramboot with stdout and stderr kept apart.
rb() {
	run --separate-stderr "$RAMBOOT_BIN" "$@"
}

# rb_pipe FILE ARGS: ramboot reading FILE through a pipe on stdin.
rb_pipe() {
	local f=$1
	shift
	run --separate-stderr bash -c 'f=$1; shift; cat "$f" | "$RAMBOOT_BIN" "$@"' _ "$f" "$@"
}

# rb_redirect FILE ARGS: ramboot with FILE redirected to stdin (a regular
# file on fd 0, not a pipe).
rb_redirect() {
	local f=$1
	shift
	run --separate-stderr bash -c 'f=$1; shift; exec "$RAMBOOT_BIN" "$@" <"$f"' _ "$f" "$@"
}

# The failure contract: exit CODE, a "ramboot: load: error: what: why" line on
# stderr, and nothing left in the output directory (or at DEST).
# assert_load_fail CODE [DEST]
assert_load_fail() {
	local code=$1 dest=${2:-}
	expect_status "$code"
	if ! grep -qE '^ramboot: load: error: .+' <<<"$stderr"; then
		show_run
		fail "no 'ramboot: load: error: ' line on stderr"
	fi
	if [ -n "$dest" ] && [ -e "$dest" ]; then
		show_run
		fail "partial output left at $dest"
	fi
	assert_no_output_left
}

# Nothing (not even a hidden temporary file) is left in $OUT.
assert_no_output_left() {
	local left
	left=$(find "$OUT" -mindepth 1 2>/dev/null)
	if [ -n "$left" ]; then
		show_run
		fail "partial output left behind: $left"
	fi
}

# The load worked and DEST holds exactly IMAGE.
# assert_loaded IMAGE DEST
assert_loaded() {
	expect_status 0
	if [ ! -f "$2" ] && [ ! -b "$2" ]; then
		show_run
		fail "no output at $2"
	fi
	if ! cmp "$1" "$2"; then
		show_run
		fail "output differs from $1"
	fi
}

# roundtrip IMG CODEC KIND [load options...]: load fixture IMG compressed
# with CODEC through SOURCE kind file|pipe|redirect, compare with the image.
roundtrip() {
	local img=$1 codec=$2 kind=$3 src dest
	shift 3
	src=$(fixture "$img" "$codec")
	dest=$OUT/$img.img
	case $kind in
	file) rb load "$@" "$src" "$dest" ;;
	pipe) rb_pipe "$src" load "$@" - "$dest" ;;
	redirect) rb_redirect "$src" load "$@" - "$dest" ;;
	*) fail "bad source kind $kind" ;;
	esac
	assert_loaded "$FIX/$img.raw" "$dest"
}

# corrupt_byte FILE OFFSET: change the byte at OFFSET (xor 0x55).
corrupt_byte() {
	local f=$1 off=$2 b
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	[ -n "$b" ] || fail "offset $off past the end of $f"
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o' $((b ^ 0x55)))" |
		dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# A fixture root whose /proc/meminfo says MemAvailable is KB kilobytes.
# fake_root KB -> prints the root directory
fake_root() {
	local root=$BATS_TEST_TMPDIR/root kb=$1
	mkdir -p "$root/proc"
	cat >"$root/proc/meminfo" <<EOF
MemTotal:       $((kb * 2)) kB
MemFree:        $kb kB
MemAvailable:   $kb kB
Buffers:               0 kB
Cached:                0 kB
SwapTotal:             0 kB
SwapFree:              0 kB
EOF
	echo "$root"
}

is_root() {
	[ "$(id -u)" = 0 ]
}

# kill_env VAR=VALUE: every process with VAR=VALUE in its environment
# (what a test started with it and left running: a refresh behind a
# boot) killed and waited for, up to 5 s; the pids killed on stdout
kill_env() {
	local d e pids=() p
	local -a env
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$BASHPID" ] && continue
		env=()
		mapfile -d "" env 2>/dev/null <"$d/environ" || continue
		for e in "${env[@]}"; do
			if [ "$e" = "$1" ]; then
				pids+=("${d#/proc/}")
				break
			fi
		done
	done
	[ "${#pids[@]}" -gt 0 ] || return 0
	kill -KILL "${pids[@]}" 2>/dev/null || true
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do
			if [ ! -e "/proc/$p" ] || [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ]; then
				break
			fi
			sleep 0.1
		done
	done
	printf '%s\n' "${pids[@]}"
}

# kill_pids: the test's own background processes (the array PIDS) ended
# and waited for
kill_pids() {
	local p
	# shellcheck disable=SC2153 # the test's array
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}
