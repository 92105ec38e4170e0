#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hardening, second round: empty sources, outputs over their own inputs,
# FIFOs where a report is expected, exit codes after a command has done
# its work, forged status lines, and boot reads that must stay bounded.
#
# Faults come from tests/fault/faultinj.c (LD_PRELOAD into the host
# build). Every background process and mount a test makes is removed in
# teardown, also when the test fails.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154

load helpers/common
load helpers/fault
load helpers/harden


# ---- an empty source is an error -------------------------------------------

@test "load: an empty pipe on stdin is an error (exit 1), nothing at DEST" {
	run --separate-stderr bash -c ': | "$RAMBOOT_BIN" load - "$1"' _ "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	[[ $stderr == *"empty"* ]]
}

@test "load: an empty file is an error (exit 1), nothing at DEST" {
	rb load "$FIX/empty.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb load -d none "$FIX/empty.raw" "$OUT/img"
	assert_load_fail 1 "$OUT/img"
	rb_redirect "$FIX/empty.raw" load - "$OUT/img"
	assert_load_fail 1 "$OUT/img"
}

@test "load: the stream of an empty image is still loaded" {
	rb load "$FIX/empty.zst" "$OUT/img"
	assert_loaded "$FIX/empty.raw" "$OUT/img"
}

# ---- no output over one of its own inputs ----------------------------------

@test "manifest -o IMAGE IMAGE is refused, the image untouched" {
	cp "$FIX/sqfs.raw" "$OUT/x.img"
	rb manifest -o "$OUT/x.img" "$OUT/x.img"
	expect_status 1
	[[ $stderr == *"is the source itself"* ]]
	cmp "$FIX/sqfs.raw" "$OUT/x.img"
	# through another name of the same file too
	ln "$OUT/x.img" "$OUT/y.img"
	rb manifest -o "$OUT/y.img" "$OUT/x.img"
	expect_status 1
	cmp "$FIX/sqfs.raw" "$OUT/x.img"
}

@test "manifest --sign=KEY -o KEY is refused, the key untouched" {
	"$RAMBOOT_BIN" keygen "$OUT/k.key" >/dev/null 2>&1 || skip "keygen failed"
	cp "$OUT/k.key" "$OUT/k.orig"
	rb manifest --sign="$OUT/k.key" -o "$OUT/k.key" "$FIX/sqfs.raw"
	expect_status 1
	[[ $stderr == *"is the source itself"* ]]
	cmp "$OUT/k.orig" "$OUT/k.key"
}

@test "profile record --out=IMAGE --image=IMAGE is refused, the image untouched" {
	mkdir -p "$BATS_TEST_TMPDIR/root"
	ln -s /proc "$BATS_TEST_TMPDIR/root/proc"
	cp "$FIX/sqfs.raw" "$OUT/y.img"
	RAMBOOT_ROOT=$BATS_TEST_TMPDIR/root rb profile record --image="$OUT/y.img" --until=0 \
		--out="$OUT/y.img"
	expect_status 1
	[[ $stderr == *"is the source itself"* ]]
	cmp "$FIX/sqfs.raw" "$OUT/y.img"
}

@test "profile record --out=MANIFEST --manifest=MANIFEST is refused, the manifest untouched" {
	mkdir -p "$BATS_TEST_TMPDIR/root"
	ln -s /proc "$BATS_TEST_TMPDIR/root/proc"
	cp "$FIX/sqfs.raw" "$OUT/y.img"
	"$RAMBOOT_BIN" manifest -o "$OUT/y.manifest" "$OUT/y.img"
	cp "$OUT/y.manifest" "$OUT/m.orig"
	RAMBOOT_ROOT=$BATS_TEST_TMPDIR/root rb profile record --image="$OUT/y.img" --until=0 \
		--manifest="$OUT/y.manifest" --out="$OUT/y.manifest"
	expect_status 1
	[[ $stderr == *"is the source itself"* ]]
	cmp "$OUT/m.orig" "$OUT/y.manifest"
}

@test "publish --sign=KEY where KEY is IMAGE.manifest is refused, the key untouched" {
	cp "$FIX/sqfs.raw" "$OUT/x.img"
	"$RAMBOOT_BIN" keygen "$OUT/x.img.manifest" >/dev/null 2>&1 || skip "keygen failed"
	cp "$OUT/x.img.manifest" "$BATS_TEST_TMPDIR/k.orig"
	rb publish --sign="$OUT/x.img.manifest" "$OUT/x.img"
	expect_status 1
	[[ $stderr == *"is the source itself"* ]]
	cmp "$BATS_TEST_TMPDIR/k.orig" "$OUT/x.img.manifest"
}

# ---- a FIFO where a report is expected is never waited on -------------------

# fifo_root: a fixture root whose /run/ramboot/report and lazy are FIFOs
# that nothing writes (an open for reading would wait for ever).
fifo_root() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/sys/block" "$R/dev" "$R/run/ramboot"
	: >"$R/proc/swaps"
	mkfifo "$R/run/ramboot/report" "$R/run/ramboot/lazy"
}

@test "status: a FIFO at /run/ramboot/report or lazy is refused, not waited on" {
	fifo_root
	RAMBOOT_ROOT=$R run --separate-stderr timeout -k 5 20 "$RAMBOOT_BIN" status
	[ "$status" -ne 124 ] || fail "ramboot status hung on a FIFO"
	[[ $stderr == *"report: not a regular file"* ]]
	[[ $stderr == *"lazy: not a regular file"* ]]
	RAMBOOT_ROOT=$R run --separate-stderr timeout -k 5 20 "$RAMBOOT_BIN" status --json
	[ "$status" -ne 124 ] || fail "ramboot status --json hung on a FIFO"
}

@test "boot --drop: a FIFO at /run/ramboot/report is not waited on" {
	fifo_root
	echo data >"$BATS_TEST_TMPDIR/other"
	RAMBOOT_ROOT=$R run --separate-stderr timeout -k 5 20 "$RAMBOOT_BIN" boot \
		--drop="$BATS_TEST_TMPDIR/other" --reason=x
	[ "$status" -ne 124 ] || fail "ramboot boot --drop hung on a FIFO"
	[ -e "$BATS_TEST_TMPDIR/other" ]
}

# ---- exit codes once the work is done ----------------------------------------

@test "publish: stdout to /dev/full after the manifest is named is exit 0 and a warning" {
	cp "$FIX/sqfs.raw" "$OUT/x.img"
	run --separate-stderr bash -c '"$RAMBOOT_BIN" publish "$1" >/dev/full' _ "$OUT/x.img"
	expect_status 0
	[[ $stderr == *"warning: stdout: write error"* ]]
	grep -q '^ramboot-manifest ' "$OUT/x.img.manifest"
	rb manifest "$OUT/x.img"
	assert_equal "$(cat "$OUT/x.img.manifest")" "$output"
}

@test "publish: a failure before the manifest is named is still exit 1 with /dev/full" {
	ln -s /nowhere "$OUT/x.img.manifest"
	cp "$FIX/sqfs.raw" "$OUT/x.img"
	run --separate-stderr bash -c '"$RAMBOOT_BIN" publish "$1" >/dev/full' _ "$OUT/x.img"
	expect_status 1
	[ -L "$OUT/x.img.manifest" ]
}

@test "profile --stop: exit 1 when the recorder could not write its profile (ENOSPC)" {
	need_shim
	local root=$BATS_TEST_TMPDIR/root rec _
	mkdir -p "$root" "$OUT/pdir"
	ln -s /proc "$root/proc"
	head -c 65536 /dev/urandom >"$OUT/p.img"
	RAMBOOT_ROOT=$root faultinj_run "write:path=*/pdir:errno=ENOSPC" \
		"$RAMBOOT_BIN" profile record --interval=0.05 --image="$OUT/p.img" \
		--out="$OUT/pdir/p" 2>"$BATS_TEST_TMPDIR/rec.err" &
	rec=$!
	PIDS+=("$rec")
	for _ in $(seq 200); do
		[ -s "$root/run/ramboot/profile.pid" ] && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$root/run/ramboot/profile.pid" ] || { cat "$BATS_TEST_TMPDIR/rec.err"; fail "no pid file"; }
	RAMBOOT_ROOT=$root run --separate-stderr timeout -k 5 60 "$RAMBOOT_BIN" profile --stop
	expect_status 1
	[[ $stderr == *"ended without writing its profile"* ]]
	status=0
	wait "$rec" || status=$?
	[ "$status" -eq 1 ]
	grep -q "write error" "$BATS_TEST_TMPDIR/rec.err"
	[ ! -e "$OUT/pdir/p" ]
	assert_fault_fired 'errno:ENOSPC'
}

# ---- status and report lines are never forged by a value --------------------

status_root() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/sys/block" "$R/dev" "$R/run/ramboot"
	: >"$R/proc/swaps"
}

@test "lazy: an image path with newlines stays on one status line; status is not fooled" {
	status_root
	local img
	img=$'/nowhere/e\nstate=switched\nswitched=3.00\ncopy=/x\n'
	RAMBOOT_ROOT=$R rb lazy --image="$img" --status="$R/run/ramboot/lazy"
	expect_status 1
	[ "$(grep -c '^state=' "$R/run/ramboot/lazy")" -eq 1 ]
	[ "$(grep -c '^switched=' "$R/run/ramboot/lazy")" -eq 1 ]
	[ "$(grep -c '^copy=' "$R/run/ramboot/lazy")" -eq 1 ]
	grep -qx 'state=gave-up' "$R/run/ramboot/lazy"
	grep -qx 'switched=' "$R/run/ramboot/lazy"
	# every line is a key=value line
	run ! grep -v '^[a-z0-9_]*=' "$R/run/ramboot/lazy"
	RAMBOOT_ROOT=$R rb status
	expect_status 0
	refute_output --partial 'switched 3.00'
	assert_output --partial 'gave up'
}

@test "status: a lazy file or report with a repeated key is refused" {
	status_root
	printf 'state=gave-up\npid=1\nimage=/x\nstate=switched\nswitched=3.00\n' \
		>"$R/run/ramboot/lazy"
	printf 'mode_done=ram\nfstype=squashfs\nfstype=ext4\n' >"$R/run/ramboot/report"
	RAMBOOT_ROOT=$R rb status
	expect_status 0
	[[ $stderr == *"lazy: the key state is repeated; ignored"* ]]
	[[ $stderr == *"report: the key fstype is repeated; ignored"* ]]
	refute_output --partial 'switched'
	refute_output --partial 'fstype'
	RAMBOOT_ROOT=$R rb status --json
	expect_status 0
	refute_output --partial 'switched'
}

# ---- --sha256 with a version 2 manifest: a chunk read again is hashed -------

@test "load --sha256 --manifest v2: one transient EIO is read again, the SHA-256 matches" {
	need_shim
	cp "$FIX/sqfs.raw" "$OUT/../src.img"
	"$RAMBOOT_BIN" manifest --chunk-size=64K -o "$BATS_TEST_TMPDIR/m" "$OUT/../src.img"
	run --separate-stderr faultinj_run 'read:path=*src.img:nth=2:times=1:errno=EIO' \
		"$RAMBOOT_BIN" load -v --sha256="$(cat "$FIX/sqfs.sha256")" \
		--manifest="$BATS_TEST_TMPDIR/m" "$OUT/../src.img" "$OUT/img"
	assert_fault_fired 'errno:EIO'
	expect_status 0
	cmp "$FIX/sqfs.raw" "$OUT/img"
	grep -qE "chunks_retried=[1-9]" <<<"$stderr" || { show_run; fail "no chunk read again"; }
}

# ---- boot: every read of a network path is bounded ---------------------------

# boot_root, boot_hang: helpers/harden.bash.
@test "boot: ramboot.source=udpcast, the image's first bytes never come (root): the boot returns" {
	need_root ramboot=ram
	need_shim
	boot_root
	boot_hang 'pread:path=*/images/x.img:hang' \
		"ramboot=ram ramboot.source=udpcast ramboot.udpcast=start-timeout=1 ltsp.image=images/x.img ramboot.timeout=1 ramboot.manifest=none"
}

@test "boot: ramboot=lazy, IMAGE.profile, the image's ends never come (root): the boot returns" {
	need_root ramboot=lazy
	need_shim
	boot_root
	RAMBOOT_ROOT=$BATS_TEST_TMPDIR/pr "$RAMBOOT_BIN" profile record \
		--image="$R/root/images/x.img" --until=0 --out="$R/root/images/x.img.profile" \
		2>/dev/null || { mkdir -p "$BATS_TEST_TMPDIR/pr"; ln -s /proc "$BATS_TEST_TMPDIR/pr/proc"
		RAMBOOT_ROOT=$BATS_TEST_TMPDIR/pr "$RAMBOOT_BIN" profile record \
			--image="$R/root/images/x.img" --until=0 --out="$R/root/images/x.img.profile"; }
	[ -f "$R/root/images/x.img.profile" ]
	boot_hang 'pread:path=*/images/x.img:hang' \
		"ramboot=lazy ltsp.image=images/x.img ramboot.timeout=1 ramboot.manifest=none"
	[ "$(boot_report fallback)" = "lazy copy not started" ]
}

@test "boot: ramboot=ram ramboot.verity=1, the manifest's read never returns (root): the boot returns" {
	need_root ramboot.verity=1
	need_shim
	boot_root
	"$RAMBOOT_BIN" manifest --verity -o "$R/root/images/x.img.manifest" "$R/root/images/x.img" \
		>/dev/null 2>&1 || skip "manifest --verity failed (image not whole blocks?)"
	boot_hang 'read:path=*/images/x.img.manifest:hang' \
		"ramboot=ram ramboot.verity=1 ltsp.image=images/x.img ramboot.timeout=1"
}

# ---- ram + verity: the mapping is bound to the manifest the copy was checked against

@test "boot: ramboot=ram ramboot.verity=1, the manifest replaced during the copy (root): refused, fallback" {
	need_root ramboot.verity=1
	need_shim
	boot_root
	local img=$R/root/images/x.img other=$BATS_TEST_TMPDIR/other bp _
	"$RAMBOOT_BIN" manifest --verity -o "$img.manifest" "$img" >/dev/null 2>&1 ||
		skip "manifest --verity failed"
	# another image's manifest and tree, published under the same name
	# while the copy is read (a publish during a boot)
	mkdir -p "$other/tree"
	head -c 200000 /dev/urandom >"$other/tree/other"
	mksquashfs "$other/tree" "$other/x.img" -quiet -noappend -no-progress >/dev/null
	"$RAMBOOT_BIN" manifest --verity=x.img.verity-other -o "$other/x.img.manifest" \
		"$other/x.img" >/dev/null
	cp "$other/x.img.verity-other" "$R/root/images/"
	echo "ramboot=ram ramboot.verity=1 ltsp.image=images/x.img ramboot.timeout=20" \
		>"$R/proc/cmdline"
	# each read of the image waits 1.5 s: time to swap the manifest
	env -u RAMBOOT RAMBOOT_ROOT="$R" FAULTINJ='read:path=*/images/x.img:delay_ms=1500' \
		FAULTINJ_LOG="$BATS_TEST_TMPDIR/fi.log" LD_PRELOAD="$FAULTINJ_SO" \
		timeout -k 5 120 "$RAMBOOT_BIN" boot >"$BATS_TEST_TMPDIR/boot.out" \
		2>"$BATS_TEST_TMPDIR/boot.err" &
	bp=$!
	PIDS+=("$bp")
	for _ in $(seq 300); do
		grep -qs 'delay' "$BATS_TEST_TMPDIR/fi.log" && break
		sleep 0.05
	done
	grep -qs 'delay' "$BATS_TEST_TMPDIR/fi.log" || fail "the copy never read the image"
	cp "$other/x.img.manifest" "$img.manifest.new"
	mv "$img.manifest.new" "$img.manifest"
	status=0
	wait "$bp" || status=$?
	[ "$status" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/boot.err"; fail "boot: exit $status"; }
	[ ! -s "$BATS_TEST_TMPDIR/boot.out" ]
	[ "$(boot_report mode_done)" = off ]
	[ "$(boot_report verity)" = failed ]
	[[ "$(boot_report error)" == *"changed while the image was read"* ]] ||
		{ cat "$R/run/ramboot/report"; fail "not refused for the manifest it was read against"; }
	[ -z "$(boot_report ram_path)" ]
}

@test "stdout to /dev/full: keygen, status, --help and --version exit 1 with one error line" {
	run --separate-stderr bash -c '"$RAMBOOT_BIN" keygen "$1" >/dev/full' _ "$OUT/k.key"
	expect_status 1
	[[ $stderr == *"keygen: error: stdout: write error"* ]]
	status_root
	RAMBOOT_ROOT=$R run --separate-stderr bash -c '"$RAMBOOT_BIN" status >/dev/full'
	expect_status 1
	[[ $stderr == *"status: error: stdout: write error"* ]]
	for a in --help --version "status --help" "manifest --help"; do
		# shellcheck disable=SC2086
		run --separate-stderr bash -c '"$RAMBOOT_BIN" '"$a"' >/dev/full'
		[ "$status" -eq 1 ] || { show_run; fail "$a: exit $status"; }
	done
}

@test "stdout to /dev/full: boot stays exit 0 (its outcome is the report)" {
	status_root
	: >"$R/proc/cmdline"
	RAMBOOT_ROOT=$R run --separate-stderr bash -c 'env -u RAMBOOT "$RAMBOOT_BIN" boot >/dev/full'
	expect_status 0
}
