#!/usr/bin/env bats
# ramboot status: the lazy copier's status file (run/ramboot/lazy) in the
# text section and in --json, against a fixture root that also holds a
# boot report (run/ramboot/report) and no zram device.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
RAMBOOT_BIN=${RAMBOOT_BIN:-$TOP/ramboot}

setup() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc" "$R/sys/block" "$R/dev" "$R/run/ramboot"
	: >"$R/proc/swaps"
	# the copier of the status files below (pid=412) runs
	mkdir -p "$R/proc/412"
	printf 'mode_asked=lazy\nmode_done=lazy\nsource=/srv/ltsp/images/x86_64.img\n' \
		>"$R/run/ramboot/report"
	export RAMBOOT_ROOT=$R
}

# lazy STATE [KEY=VALUE...]: a status file as the copier writes it, the
# given keys replacing the defaults of a copy 42% done.
lazy() {
	local state=$1 kv k
	shift
	set -- "state=$state" pid=412 image=/srv/ltsp/images/x86_64.img loop=/dev/loop0 \
		target=tmpfs copy= size=1073741824 started=3.21 updated=10.50 \
		source=network source_fallback= source_error= bytes_stream=0 bytes_compared=0 \
		bytes_cached=314572800 bytes_network=141557760 max_bytes_per_second=0 yields=2 profile=none \
		profile_file= hash=pending sha256= signed_by= verified= switched= gave_up= error= "$@"
	: >"$R/run/ramboot/lazy"
	for kv in "$@"; do
		k=${kv%%=*}
		sed -i "/^$k=/d" "$R/run/ramboot/lazy"
		printf '%s\n' "$kv" >>"$R/run/ramboot/lazy"
	done
}

# json_ok TEXT: TEXT parses as JSON (fails the test otherwise)
json_ok() {
	python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$1"
}

# py EXPR: EXPR over the JSON in $J as d, printed
py() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print(repr(($1)))" <<<"$J"
}

@test "status: copying shows state, percent, page cache and network, timeline" {
	lazy copying
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ -z "$stderr" ]
	assert_output 'ramboot: running from the network image; the copier is copying: 42.4% of 1.0 GiB

boot report (/run/ramboot/report):
mode_asked=lazy
mode_done=lazy
source=/srv/ltsp/images/x86_64.img

lazy copy (/run/ramboot/lazy):
  image     /srv/ltsp/images/x86_64.img to tmpfs
  state     copying
  copied    42.4% of 1.0 GiB: 300.0 MiB from the page cache, 135.0 MiB from the network
  timeline  started 3.21 s, updated 10.50 s (since boot)

no initialised zram devices'
}

@test "status --json: copying, numbers as numbers and empty values as null" {
	lazy copying
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	assert_output --partial '"lazy": {
    "state": "copying",
    "pid": 412,
    "image": "/srv/ltsp/images/x86_64.img",
    "loop": "/dev/loop0",
    "target": "tmpfs",
    "copy": null,
    "size": 1073741824,
    "started": 3.21,
    "updated": 10.50,
    "source": "network",
    "source_fallback": null,
    "source_error": null,
    "bytes_stream": 0,
    "bytes_compared": 0,
    "bytes_cached": 314572800,
    "bytes_network": 141557760,
    "max_bytes_per_second": 0,
    "yields": 2,
    "profile": "none",
    "profile_file": null,
    "hash": "pending",
    "sha256": null,
    "signed_by": null,
    "verified": null,
    "switched": null,
    "gave_up": null,
    "error": null,
    "chunks": null,
    "fetching": null,
    "fetch_failed": null,
    "fetch_error": null,
    "copied": 456130560,
    "percent": 42.4,
    "copier_gone": false
  },
  "zram": []'
	J=$output
	run py 'd["report"]["mode_done"], d["lazy"]["size"] + 0, d["lazy"]["started"] + 0'
	assert_output "('lazy', 1073741824, 3.21)"
}

@test "status: verifying" {
	lazy verifying bytes_network=759169024
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  state     verifying'
	assert_line '  copied    100.0% of 1.0 GiB: 300.0 MiB from the page cache, 724.0 MiB from the network'
}

@test "status: switched shows when, and the whole timeline" {
	lazy switched bytes_network=759169024 copy=/run/ramboot/lazy-copy/x86_64.img \
		hash=ok sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 \
		verified=19.80 switched=20.05 updated=20.05
	run "$RAMBOOT_BIN" status
	assert_success
	assert_output --partial 'lazy copy (/run/ramboot/lazy):
  image     /srv/ltsp/images/x86_64.img to tmpfs (/run/ramboot/lazy-copy/x86_64.img)
  state     switched at 20.05 s
  copied    100.0% of 1.0 GiB: 300.0 MiB from the page cache, 724.0 MiB from the network
  timeline  started 3.21 s, verified 19.80 s, switched 20.05 s, updated 20.05 s (since boot)
'
	run "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	J=$output
	run py 'd["lazy"]["state"], d["lazy"]["switched"], d["lazy"]["verified"], d["lazy"]["percent"], d["lazy"]["hash"]'
	assert_output "('switched', 20.05, 19.8, 100.0, 'ok')"
}

@test "status: gave up shows the reason and the message" {
	lazy gave-up gave_up=stall 'error=/srv/ltsp/images/x86_64.img: no read completed for 30 s' \
		updated=41.00
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  state     gave up: stall (/srv/ltsp/images/x86_64.img: no read completed for 30 s)'
	assert_line '  copied    42.4% of 1.0 GiB: 300.0 MiB from the page cache, 135.0 MiB from the network'
	assert_line '  timeline  started 3.21 s, updated 41.00 s (since boot)'
	run "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	J=$output
	run py 'd["lazy"]["state"], d["lazy"]["gave_up"], d["lazy"]["error"]'
	assert_output "('gave-up', 'stall', '/srv/ltsp/images/x86_64.img: no read completed for 30 s')"
}

@test "status: gave up while preparing (no counters, no size)" {
	printf 'state=gave-up\npid=9\nimage=/srv/x.img\nstarted=1.50\ngave_up=memory\nerror=needs 2.0 GiB\n' \
		>"$R/run/ramboot/lazy"
	run "$RAMBOOT_BIN" status
	assert_success
	assert_output --partial 'lazy copy (/run/ramboot/lazy):
  image     /srv/x.img
  state     gave up: memory (needs 2.0 GiB)
  timeline  started 1.50 s (since boot)
'
	refute_output --partial 'copied'
	run "$RAMBOOT_BIN" status --json
	json_ok "$output"
	J=$output
	run py 'd["lazy"]["copied"], d["lazy"]["percent"], d["lazy"]["size"], d["lazy"]["loop"]'
	assert_output '(None, None, None, None)'
}

@test "status: no status file, no lazy section and no \"lazy\" key" {
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ -z "$stderr" ]
	refute_output --partial 'lazy copy'
	assert_output --partial 'no initialised zram devices'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	refute_output --partial '"lazy":'
}

@test "status: malformed lines and values are ignored, the rest is shown" {
	# no '=', an empty key, unknown keys, numbers with signs, spaces,
	# leading zeros, 16 digits or hex, times that are no JSON numbers,
	# a line of '=' and a line over a kilobyte
	{
		printf 'state=copying\n'
		printf 'garbage without an equals sign\n'
		printf '=orphan value\n'
		printf 'future_key=1\n'
		printf 'pid=-1\n'
		printf 'size= 1048576\n'
		printf 'bytes_cached=0x10\n'
		printf 'bytes_network=1234567890123456\n'
		printf 'max_bytes_per_second=007\n'
		printf 'yields=1e3\n'
		printf 'started=1.\n'
		printf 'updated=.5\n'
		printf 'verified=NaN\n'
		printf 'switched=-2.00\n'
		printf '===\n'
		printf 'image=%s\n' "$(head -c 2000 /dev/zero | tr '\0' 'x')"
		printf '\n\n'
	} >"$R/run/ramboot/lazy"
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ -z "$stderr" ]
	assert_line '  state     copying'
	assert_line '  timeline  -'
	refute_output --partial 'copied'
	refute_output --partial 'future_key'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	J=$output
	run py '[k for k, v in d["lazy"].items() if v is not None]'
	assert_output "['state', 'image', 'copier_gone']"
	run py 'len(d["lazy"]["image"])'
	assert_output 2000
}

@test "status: a repeated key is refused; no final newline, size 0 or exceeded" {
	lazy copying size=2000 bytes_cached=500 bytes_network=0
	printf 'bytes_network=1000' >>"$R/run/ramboot/lazy"
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ "$stderr" = "ramboot: status: warning: /run/ramboot/lazy: the key bytes_network is repeated; ignored" ]
	refute_output --partial 'copied'
	printf 'state=copying\nsize=2000\nbytes_cached=500\nbytes_network=1000' >"$R/run/ramboot/lazy"
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  copied    75.0% of 2.0 KiB: 500 B from the page cache, 1000 B from the network'
	printf 'state=copying\nsize=100\nbytes_cached=300\nbytes_network=0\n' >"$R/run/ramboot/lazy"
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  copied    100.0% of 100 B: 300 B from the page cache, 0 B from the network'
	printf 'state=copying\nsize=0\nbytes_cached=0\nbytes_network=0\n' >"$R/run/ramboot/lazy"
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  copied    0 B from the page cache, 0 B from the network'
}

@test "status: control characters and bad UTF-8 in values: '?' on a terminal, valid JSON" {
	lazy gave-up gave_up=source $'error=caf\xc3\xa9 \xe9 \x1b[31mred\x7f "q" \\' \
		$'image=/srv/a\tb.img'
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line $'  state     gave up: source (caf\xc3\xa9 \xe9 ?[31mred? "q" \\)'
	assert_line '  image     /srv/a?b.img to tmpfs'
	run "$RAMBOOT_BIN" status --json
	assert_success
	assert_output --partial '"error": "café \ufffd \u001b[31mred\u007f \"q\" \\"'
	assert_output --partial '"image": "/srv/a\tb.img"'
	run python3 -c 'import json, sys; d = json.loads(sys.stdin.buffer.read().decode("utf-8")); print(ascii(d["lazy"]["error"]))' <<<"$output"
	assert_success
	assert_output "'caf\\xe9 \\ufffd \\x1b[31mred\\x7f \"q\" \\\\'"
}

@test "status: an unreadable status file is a warning, not a failure" {
	rm "$R/run/ramboot/lazy" 2>/dev/null || true
	mkdir "$R/run/ramboot/lazy"
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ "$stderr" = "ramboot: status: warning: /run/ramboot/lazy: Is a directory" ]
	refute_output --partial 'lazy copy'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
}

@test "status --help names the lazy copy" {
	run "$RAMBOOT_BIN" status --help
	assert_success
	assert_output --partial '/run/ramboot/lazy'
	assert_output --partial '"lazy": {...}'
}

# report KEY=VALUE...: the boot report holds these lines
report() {
	printf '%s\n' "$@" >"$R/run/ramboot/report"
}

@test "status: the verdict of a RAM copy names target, size, codec, verification and key; --check exits 0" {
	report mode_asked=ram mode_done=ram source=/srv/ltsp/images/x86_64.img \
		ram_path=/run/ramboot/ram/x86_64.img target=tmpfs bytes=42577920 codec=zstd \
		hash=ok verify=signed 'signed_by=lab fdbbdf62a1b2c3d4' fallback= error=
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line --index 0 'ramboot: running from RAM (tmpfs, 40.6 MiB from zstd, verified, signed by lab)'
	# no empty keys, byte counts also in binary units
	refute_line fallback=
	refute_line error=
	assert_line 'bytes=42577920 (40.6 MiB)'
	run --separate-stderr "$RAMBOOT_BIN" status --check
	assert_success
	assert_output 'ramboot: running from RAM (tmpfs, 40.6 MiB from zstd, verified, signed by lab)'
}

@test "status: the read rate says its units; an older report's mbps (MB/s) reads the same" {
	report mode_asked=ram mode_done=ram target=tmpfs bytes=42577920 seconds=0.393 \
		bytes_per_second=108200000 hash=ok
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line 'bytes_per_second=108200000 (103.2 MiB/s = 865.6 Mbit/s)'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py 'd["report"]["bytes_per_second"]'
	assert_output '108200000'
	# written by a ramboot from before the key said its unit
	report mode_asked=ram mode_done=ram target=tmpfs bytes=42577920 seconds=0.393 \
		mbps=108.2 hash=ok
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line --index 0 'ramboot: running from RAM (tmpfs, 40.6 MiB, verified)'
	assert_line 'mbps=108.2 (103.2 MiB/s = 865.6 Mbit/s)'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	J=$output
	run py 'd["report"]["bytes_per_second"], "mbps" in d["report"]'
	assert_output '(108200000, False)'
}

@test "status: an older copier's rate= is its max_bytes_per_second" {
	lazy copying max_bytes_per_second= rate=1048576
	sed -i '/^max_bytes_per_second=/d' "$R/run/ramboot/lazy"
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py 'd["lazy"]["max_bytes_per_second"], "rate" in d["lazy"]'
	assert_output '(1048576, False)'
}

@test "status: a fallback is the first line, with the reason and the error; --check exits 1" {
	report mode_asked=ram mode_done=off source=/srv/ltsp/images/x86_64.img \
		'fallback=not signed' 'error=manifest: signed by an untrusted key fdbbdf62'
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line --index 0 'ramboot: FALLBACK to the network image: not signed (manifest: signed by an untrusted key fdbbdf62)'
	run --separate-stderr "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: FALLBACK to the network image: not signed (manifest: signed by an untrusted key fdbbdf62)'
}

@test "status: no report says ramboot did not run; --check exits 1" {
	rm "$R/run/ramboot/report"
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line --index 0 'ramboot: no boot report: ramboot did not run'
	run --separate-stderr "$RAMBOOT_BIN" status --check
	assert_failure 1
	run "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py 'd["verdict"], d["in_ram"], d["report"]'
	assert_output "('no boot report: ramboot did not run', False, None)"
}

@test "status: the lazy copy: switched is in RAM, gave up is a fallback, copying is not yet" {
	lazy switched switched=20.05 verified=19.80 hash=ok
	run "$RAMBOOT_BIN" status --check
	assert_success
	assert_output 'ramboot: running from RAM (lazy copy, switched at 20.05 s)'
	lazy gave-up gave_up=stall 'error=no read completed for 30 s'
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: FALLBACK to the network image: the lazy copy gave up: stall (no read completed for 30 s)'
	lazy copying bytes_stream=100000000
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: running from the network image; the copier is copying: 51.7% of 1.0 GiB'
	run "$RAMBOOT_BIN" status --json
	J=$output
	run py 'd["in_ram"]'
	assert_output False
}

@test "status: off and prefetch are the network image as asked; --check exits 1" {
	report mode_asked=off mode_done=off fallback= error=
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: running from the network image (ramboot=off)'
	report mode_asked=prefetch mode_done=prefetch
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: running from the network image, read ahead into the page cache (prefetch)'
}

@test "status: a report that repeats a key (a forged line) gives no RAM verdict" {
	report mode_asked=ram mode_done=off 'fallback=hash mismatch' mode_done=ram target=tmpfs
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output --partial 'repeats a key'
}

@test "status: --json and --check together are a usage error" {
	run "$RAMBOOT_BIN" status --json --check
	assert_failure 2
}

@test "status: a copier killed while copying is told from a live one" {
	lazy copying pid=999999
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line '  state     copying -- but the copier (pid 999999) is gone (killed?): the copy stopped'
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	json_ok "$output"
	assert_output --partial '"copier_gone": true'
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: FALLBACK to the network image: the lazy copier (pid 999999) is gone before it switched'
	# a live one (the fixture's pid 412), and a finished one whose pid is gone
	lazy copying
	run "$RAMBOOT_BIN" status
	assert_line '  state     copying'
	lazy switched pid=999999 switched=20.00
	run "$RAMBOOT_BIN" status
	refute_output --partial 'is gone'
}

@test "status: the copier's stream and profile keys: source, fallback, stream bytes, profile" {
	lazy copying source=udpcast bytes_stream=1073741824 bytes_compared=4096 profile=used \
		profile_file=/srv/ltsp/images/x86_64.img.profile
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ -z "$stderr" ]
	assert_line '  source    udpcast: 1.0 GiB from the stream, 4.0 KiB compared with the image'
	assert_line '  profile   used (/srv/ltsp/images/x86_64.img.profile)'
	run "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py 'd["lazy"]["source"], d["lazy"]["bytes_stream"], d["lazy"]["bytes_compared"], d["lazy"]["profile"], d["lazy"]["profile_file"]'
	assert_output "('udpcast', 1073741824, 4096, 'used', '/srv/ltsp/images/x86_64.img.profile')"
	lazy copying source=network source_fallback=no-session 'source_error=udp-receiver: no sender within 20 s'
	run "$RAMBOOT_BIN" status
	assert_success
	assert_line '  source    network (the stream gave way: no-session: udp-receiver: no sender within 20 s)'
	refute_output --partial '  profile'
	run "$RAMBOOT_BIN" status --json
	J=$output
	run py 'd["lazy"]["source_fallback"], d["lazy"]["source_error"]'
	assert_output "('no-session', 'udp-receiver: no sender within 20 s')"
}

@test "status: a lazy copy over HTTP: its server's chunks, fetches and last error" {
	lazy copying image=http://10.0.2.2/x86_64.img chunks=12/40 fetching=1 fetch_failed=3 \
		'fetch_error=chunk 7 from source 0: SHA-256 mismatch'
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	[ -z "$stderr" ]
	assert_line '  chunks    12/40 present, 1 fetching, 3 fetches failed (chunk 7 from source 0: SHA-256 mismatch)'
	run "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py 'd["lazy"]["chunks"], d["lazy"]["fetching"], d["lazy"]["fetch_failed"]'
	assert_output "('12/40', 1, 3)"
	# not over HTTP: no chunks line
	lazy copying
	run "$RAMBOOT_BIN" status
	refute_output --partial '  chunks'
}

# The keys of the lazy status file as its writer (lazy_status_write() in
# src/lazy/status.c) writes them: { LK_ID, value } pairs, named by the
# key table (src/lib/keys.c).
writer_lazy_keys() {
	local id
	for id in $(sed -n '/^void lazy_status_write(/,/^}/p' "$TOP"/src/lazy/*.c |
		grep -o '{ LK_[A-Z0-9_]*,' | sed 's/{ \(.*\),/\1/'); do
		sed -n "s/^[[:space:]]*L($id, \"\([a-z0-9_]*\)\".*/\1/p" "$TOP/src/lib/keys.c"
	done | LC_ALL=C sort -u
}

@test "status: every key the lazy copier writes is one status knows (shown in --json)" {
	TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
	keys=$(writer_lazy_keys)
	[ "$(printf '%s\n' "$keys" | wc -l)" -ge 20 ]
	: >"$R/run/ramboot/lazy"
	for k in $keys; do
		printf '%s=1\n' "$k" >>"$R/run/ramboot/lazy"
	done
	run --separate-stderr "$RAMBOOT_BIN" status --json
	assert_success
	J=$output
	run py '" ".join(sorted(k for k, v in d["lazy"].items() if v is not None and k not in ("copied", "percent", "copier_gone")))'
	assert_success
	assert_output "'$(printf '%s\n' "$keys" | tr '\n' ' ' | sed 's/ $//')'"
}

@test "status: a cache boot: a hit, offline, a refresh running, switched, not switched, failed" {
	report mode_asked=cache mode_done=cache cache=hit cache_device=/dev/sdb2 cache_slot=a \
		cache_generation=3 cache_verified=refresh fallback= error=
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: running from the local cache (slot a of /dev/sdb2, generation 3, verified when it was written)'
	report mode_asked=cache mode_done=cache cache=hit cache_device=/dev/sdb2 cache_slot=b \
		cache_generation=4 cache_verified=verity
	run "$RAMBOOT_BIN" status --check
	assert_output 'ramboot: running from the local cache (slot b of /dev/sdb2, generation 4, every block checked by dm-verity)'
	report mode_asked=cache mode_done=cache cache=hit cache_device=/dev/sdb2 cache_slot=b \
		cache_generation=4 cache_verified=verity cache_scrub=ok cache_scrub_seconds=3.210
	run "$RAMBOOT_BIN" status --check
	assert_output 'ramboot: running from the local cache (slot b of /dev/sdb2, generation 4, every block checked by dm-verity)'
	report mode_asked=cache mode_done=cache cache=hit cache_device=/dev/sdb2 cache_slot=b \
		cache_generation=4 cache_verified=verity cache_scrub=bad cache_scrub_offset=1060864 \
		'cache_scrub_error=read error at 1060864: Input/output error' cache_scrub_seconds=0.800
	run "$RAMBOOT_BIN" status --check
	assert_failure 1
	assert_output 'ramboot: running from the local cache (slot b of /dev/sdb2, generation 4), which failed dm-verity at byte 1060864: marked bad, the next boot boots from the network'
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_line 'cache_scrub_offset=1060864'
	report mode_asked=cache mode_done=cache cache=offline cache_device=/dev/sdb2 cache_slot=a \
		cache_generation=3 cache_verified=refresh cache_age=5400
	run "$RAMBOOT_BIN" status --check
	assert_output "ramboot: running from the local cache (slot a of /dev/sdb2, generation 3, verified when it was written) OFFLINE: the server's manifest could not be read; the slot is 5400 s old"
	report mode_asked=cache mode_done=cache cache=miss cache_device=/dev/sdb2 cache_slot=a cache_generation=3
	run "$RAMBOOT_BIN" status --check
	assert_output 'ramboot: running from the network image; the cache is refreshed behind the boot'
	report mode_asked=cache mode_done=cache cache=refreshed cache_device=/dev/sdb2 cache_slot=b \
		cache_generation=4 cache_switched=12.50
	run "$RAMBOOT_BIN" status --check
	assert_output 'ramboot: running from the local cache (slot b of /dev/sdb2, generation 4, refreshed behind the boot, switched at 12.50 s)'
	report mode_asked=cache mode_done=cache cache=refreshed cache_device=/dev/sdb2 cache_slot=b \
		cache_generation=4 'cache_switch_error=/dev/loop0: not read-only'
	run "$RAMBOOT_BIN" status --check
	assert_output 'ramboot: running from the network image; the cache was refreshed (slot b, generation 4), used from the next boot: /dev/loop0: not read-only'
	report mode_asked=cache mode_done=cache cache=miss cache_device=/dev/sdb2 cache_slot=a \
		'cache_error=No space left on device'
	run "$RAMBOOT_BIN" status --check
	assert_output "ramboot: running from the network image; the cache's refresh failed: No space left on device"
	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_line 'cache_error=No space left on device'
}
