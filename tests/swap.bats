#!/usr/bin/env bats
# ramboot swap / ramboot status: against fixture roots (exact sysfs results,
# order of writes, exit codes, messages), then as root on the real kernel.
#
# A fixture root has proc/meminfo, proc/swaps, sys/class/zram-control/
# {hot_add,hot_remove}, sys/block/zramN/* and dev/zramN as regular files.
# Reading hot_add returns the fixture's next id. Against a fixture, swapon
# appends to proc/swaps and swapoff removes the line, and every write is
# logged to $RAMBOOT_WRITE_LOG (see src/dev/zram.h).

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load helpers/fault

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
RAMBOOT_BIN=${RAMBOOT_BIN:-$TOP/ramboot}
HDR='Filename				Type		Size		Used		Priority'

setup_file() {
	cc -std=c11 -O2 -Wall -Werror -o "$BATS_FILE_TMPDIR/fakenbd" "$TOP/tests/fixtures/swap/fakenbd.c"
	if [ "$(id -u)" = 0 ] && [ -d /sys/class/zram-control ]; then
		cc -std=c11 -D_GNU_SOURCE -O2 -o "$BATS_FILE_TMPDIR/dochog" \
			"$TOP/tests/fixtures/swap/dochog.c"
	fi
}

# zdev ID [DISKSIZE] [COMP_ALGORITHM]
zdev() {
	d=$R/sys/block/zram$1
	mkdir -p "$d"
	echo "${2:-0}" >"$d/disksize"
	echo "${3:-[lzo-rle] lzo lz4}" >"$d/comp_algorithm"
	: >"$d/mem_limit"
	: >"$d/reset"
	echo "0 0 0 0 0 0 0 0 0" >"$d/mm_stat"
	: >"$R/dev/zram$1"
}

setup() {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/proc/sys/vm" "$R/sys/class/zram-control" "$R/sys/block" "$R/dev" \
		"$R/sys/module/zswap/parameters" "$R/run"
	printf 'MemTotal:        4194304 kB\nMemFree:         3000000 kB\n' >"$R/proc/meminfo"
	printf '%s\n' "$HDR" >"$R/proc/swaps"
	echo 60 >"$R/proc/sys/vm/swappiness"
	echo 3 >"$R/proc/sys/vm/page-cluster"
	echo Y >"$R/sys/module/zswap/parameters/enabled"
	echo 2 >"$R/sys/class/zram-control/hot_add"
	: >"$R/sys/class/zram-control/hot_remove"
	zdev 0
	zdev 2
	export RAMBOOT_ROOT=$R
	export RAMBOOT_WRITE_LOG=$BATS_TEST_TMPDIR/writes
	: >"$RAMBOOT_WRITE_LOG"
	EXP=$BATS_TEST_TMPDIR/expected
}

# The fixture as it is now, for a later diff -r.
snapshot() {
	rm -rf "$EXP"
	cp -a "$R" "$EXP"
}

assert_tree() { # compare the root with $EXP, ignoring the device contents
	run diff -r -x 'zram[0-9]*' -x sda -x 'vd[a-z]*' "$EXP" "$R"
	assert_success
	run diff -r "$EXP/sys" "$R/sys"
	assert_success
}

# --- fixture: set-up ---------------------------------------------------

@test "swap --help and status --help" {
	run "$RAMBOOT_BIN" swap --help
	assert_success
	assert_output --partial 'Usage: ramboot swap [OPTIONS]'
	assert_output --partial '--size=EXPR'
	assert_output --partial 'min(ram, 8G)'
	run "$RAMBOOT_BIN" status --help
	assert_success
	assert_output --partial 'Usage: ramboot status [--json | --check]'
}

@test "swap: default size min(ram, 8G), exact sysfs writes in the kernel's order" {
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap
	assert_success
	assert_output '/dev/zram2'
	[ "${stderr_lines[0]}" = 'ramboot: swap: vm.swappiness = 180' ]
	[ "${stderr_lines[1]}" = 'ramboot: swap: vm.page-cluster = 0' ]
	[ "${stderr_lines[2]}" = 'ramboot: swap: zswap.enabled = N' ]
	[ "${stderr_lines[3]}" = 'ramboot: swap: /dev/zram2: 4.0 GiB swap, lzo-rle, priority 100' ]
	# The expected tree: what the kernel would hold afterwards.
	echo lzo-rle >"$EXP/sys/block/zram2/comp_algorithm"
	echo 4294967296 >"$EXP/sys/block/zram2/disksize"
	echo N >"$EXP/sys/module/zswap/parameters/enabled"
	echo 180 >"$EXP/proc/sys/vm/swappiness"
	echo 0 >"$EXP/proc/sys/vm/page-cluster"
	printf '/dev/zram2\tpartition\t4194300\t0\t100\n' >>"$EXP/proc/swaps"
	for f in "$EXP"/sys/block/zram2/comp_algorithm "$EXP"/sys/block/zram2/disksize \
		"$EXP"/sys/module/zswap/parameters/enabled "$EXP"/proc/sys/vm/*; do
		printf '%s' "$(cat "$f")" >"$f"     # sysfs writes carry no newline
	done
	assert_tree
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lzo-rle
/sys/block/zram2/disksize=4294967296
swapon=/dev/zram2
/proc/sys/vm/swappiness=180
/proc/sys/vm/page-cluster=0
/sys/module/zswap/parameters/enabled=N"
	# The header mkswap would have written, as blkid sees it (on a copy as
	# long as a real device: blkid wants more than the first page).
	[ "$(stat -c %s "$R/dev/zram2")" = "$(getconf PAGESIZE)" ]
	cp "$R/dev/zram2" "$BATS_TEST_TMPDIR/dev.img"
	truncate -s 1M "$BATS_TEST_TMPDIR/dev.img"
	run blkid -p -o export "$BATS_TEST_TMPDIR/dev.img"
	assert_output --partial 'TYPE=swap'
	assert_output --partial 'LABEL=ramboot-zram'
}

@test "swap: size expression, priority, mem_limit and writeback in order" {
	echo none >"$R/sys/block/zram2/backing_dev"
	run --separate-stderr "$RAMBOOT_BIN" swap --size='ram / 8 + 64M' --priority=7 \
		--mem-limit='25%' --writeback=/dev/vdb --algorithm=zstd,lz4 --no-tune
	assert_success
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lz4
/sys/block/zram2/backing_dev=/dev/vdb
/sys/block/zram2/mem_limit=1073741824
/sys/block/zram2/disksize=603979776
swapon=/dev/zram2"
	run grep zram2 "$R/proc/swaps"
	assert_output "$(printf '/dev/zram2\tpartition\t589820\t0\t7')"
	[ "$(cat "$R/proc/sys/vm/swappiness")" = 60 ]
	[ "$(cat "$R/sys/module/zswap/parameters/enabled")" = Y ]
}

@test "swap: --priority=-1 leaves the priority to the kernel" {
	# The fixture's swapon does what the kernel does without
	# SWAP_FLAG_PREFER: -2, then one less for each such area.
	printf '/dev/vda1\tpartition\t1020\t0\t-2\n' >>"$R/proc/swaps"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --priority=-1 --no-tune
	assert_success
	assert_output /dev/zram2
	[ "$stderr" = 'ramboot: swap: /dev/zram2: 64.0 MiB swap, lzo-rle, kernel-assigned priority -3' ]
	run grep zram2 "$R/proc/swaps"
	assert_output "$(printf '/dev/zram2\tpartition\t65532\t0\t-3')"
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lzo-rle
/sys/block/zram2/disksize=67108864
swapon=/dev/zram2"
}

@test "boot: ramboot.swap.priority=-1 sets up swap with the kernel's priority" {
	echo 'ramboot.swap=zram ramboot.swap.size=64M ramboot.swap.priority=-1' >"$R/proc/cmdline"
	run --separate-stderr env -u RAMBOOT "$RAMBOOT_BIN" boot
	assert_success
	[ "$(sed -n 's/^swap_device=//p' "$R/run/ramboot/report")" = /dev/zram2 ]
	[ "$(sed -n 's/^swap_priority=//p' "$R/run/ramboot/report")" = -2 ]
	[ "$(sed -n 's/^error=//p' "$R/run/ramboot/report")" = "" ]
	run grep zram2 "$R/proc/swaps"
	assert_output "$(printf '/dev/zram2\tpartition\t65532\t0\t-2')"
}

@test "swap --size: a plain number is still MiB, with a warning naming the unit" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64 --no-tune
	assert_success
	[ "$(cat "$R/sys/block/zram2/disksize")" = $((64 << 20)) ]
	[ "${stderr%%$'\n'*}" = 'ramboot: swap: warning: --size=64: deprecated spelling, write --size=64MiB' ]
}

@test "swap --size: in an expression a plain size is noted with its column, a factor is not" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size='min(ram / 2, 96)' --no-tune
	assert_success
	[ "$(cat "$R/sys/block/zram2/disksize")" = $((96 << 20)) ]
	[ "${stderr%%$'\n'*}" = "ramboot: swap: warning: --size='min(ram / 2, 96)': 96 at column 14 is a deprecated spelling, write 96MiB" ]
}

@test "swap --size: documented units and factors are quiet" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size='min(ram / 2, 96M)' --mem-limit='ram / 4' --no-tune
	assert_success
	[[ $stderr != *warning* ]]
}

@test "swap --size: lower-case units are still binary, with a warning" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64m --no-tune
	assert_success
	[[ $stderr == *"warning: --size=64m: deprecated spelling, write --size=64MiB"* ]]
	[ "$(cat "$R/sys/block/zram2/disksize")" = $((64 << 20)) ]
}

@test "boot: ramboot.swap.size=64 is MiB, warned about under its own name" {
	echo 'ramboot.swap=zram ramboot.swap.size=64' >"$R/proc/cmdline"
	run --separate-stderr env -u RAMBOOT "$RAMBOOT_BIN" boot
	assert_success
	[ "$(sed -n 's/^swap_size=//p' "$R/run/ramboot/report")" = $((64 << 20)) ]
	[[ $stderr == *"warning: ramboot.swap.size=64: deprecated spelling, write ramboot.swap.size=64MiB"* ]]
}

@test "swap: percentages of a MemTotal that is not whole MiB" {
	printf 'MemTotal:         126976 kB\n' >"$R/proc/meminfo"   # 124 MiB
	run "$RAMBOOT_BIN" swap --size=50% --no-tune
	assert_success
	[ "$(cat "$R/sys/block/zram2/disksize")" = $((62 << 20)) ]
}

@test "swap: explicit tuning values, zswap kept" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --swappiness=150 --page-cluster=2 --keep-zswap
	assert_success
	[ "$(cat "$R/proc/sys/vm/swappiness")" = 150 ]
	[ "$(cat "$R/proc/sys/vm/page-cluster")" = 2 ]
	[ "$(cat "$R/sys/module/zswap/parameters/enabled")" = Y ]
	[ "${stderr_lines[0]}" = 'ramboot: swap: vm.swappiness = 150' ]
	[ "${stderr_lines[1]}" = 'ramboot: swap: vm.page-cluster = 2' ]
}

@test "swap: no listed algorithm offered -> warning, kernel default kept" {
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --algorithm=zstd,deflate --no-tune
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: zram2: none of zstd,deflate offered ([lzo-rle] lzo lz4); keeping the kernel default lzo-rle' ]
	[ "${stderr_lines[1]}" = 'ramboot: swap: /dev/zram2: 64.0 MiB swap, lzo-rle, priority 100' ]
	# comp_algorithm was not written.
	run diff "$EXP/sys/block/zram2/comp_algorithm" "$R/sys/block/zram2/comp_algorithm"
	assert_success
}

@test "swap: writeback without backing_dev in the kernel is a warning" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --writeback=/dev/vdb --no-tune
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: zram2: no backing_dev (kernel without zram writeback): --writeback ignored' ]
}

@test "swap --net: where it does not pay (4 GiB of RAM), a warning; zram alone, the report says why" {
	echo none >"$R/sys/block/zram2/backing_dev"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --no-tune --net=10.0.2.2
	assert_success
	assert_output /dev/zram2
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: network memory 10.0.2.2:10809: RAM 4.0 GiB above 2.0 GiB; zram alone' ]
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lzo-rle
/sys/block/zram2/disksize=67108864
swapon=/dev/zram2"
	run cat "$R/run/ramboot/report"
	assert_output "swap_net=10.0.2.2:10809
swap_net_state=RAM 4.0 GiB above 2.0 GiB"
}

@test "swap --net: a server that refuses the connection is a warning; zram alone" {
	echo none >"$R/sys/block/zram2/backing_dev"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --no-tune --net=127.0.0.1:1 --net-max-ram=0
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: network memory 127.0.0.1:1: connect: Connection refused; zram alone' ]
	run grep -c backing_dev "$RAMBOOT_WRITE_LOG"
	assert_output 0
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = 'connect: Connection refused' ]
}

@test "swap --net: a kernel without zram writeback; a name that is no address" {
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --no-tune --net=10.0.2.2:10900
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: network memory 10.0.2.2:10900: no zram writeback in this kernel; zram alone' ]
	zdev 3
	echo 3 >"$R/sys/class/zram-control/hot_add"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --no-tune --net=server.lan
	assert_success
	[ "${stderr_lines[0]}" = "ramboot: swap: warning: network memory server.lan: 'server.lan' is not ADDRESS[:PORT]; zram alone" ]
}

# fakenbd KIND [SIZE [FLAGS [REPLY_OPT]]]: the fake NBD server
# (tests/fixtures/swap/fakenbd.c) in the background on 127.0.0.1, as
# SERVER; teardown ends it. The fixture's zram has writeback, its
# MemTotal is 1 GiB, and /dev/nbd0 is a regular file (the fixture's NBD
# device, netmem.c).
fakenbd() {
	"$BATS_FILE_TMPDIR/fakenbd" "$BATS_TEST_TMPDIR/nbd.port" "$@" 3>&- &
	FAKE_PID=$!
	for _ in $(seq 200); do [ -s "$BATS_TEST_TMPDIR/nbd.port" ] && break; sleep 0.05; done
	SERVER=127.0.0.1:$(cat "$BATS_TEST_TMPDIR/nbd.port")
	echo none >"$R/sys/block/zram2/backing_dev"
	printf 'MemTotal:        1048576 kB\nMemFree:          800000 kB\n' >"$R/proc/meminfo"
	: >"$R/dev/nbd0"
}

# The fake again, answering otherwise.
fake_again() {
	kill "$FAKE_PID"
	rm "$BATS_TEST_TMPDIR/nbd.port"
	fakenbd "$@"
}

# swap --net against the fake with a size, on a fresh zram2: the tier
# refused, one warning line (WHY), zram alone; nothing reached the NBD
# driver or zram's backing_dev.
net_refused() { # WHY [OPTIONS...]
	local why=$1
	shift
	zdev 2
	echo none >"$R/sys/block/zram2/backing_dev"
	printf '%s\n' "$HDR" >"$R/proc/swaps"
	: >"$RAMBOOT_WRITE_LOG"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --no-tune --net="$SERVER" "$@" 3>&-
	assert_success
	assert_output /dev/zram2
	[ "$stderr" = "ramboot: swap: warning: network memory $SERVER: $why; zram alone
ramboot: swap: /dev/zram2: 64.0 MiB swap, lzo-rle, priority 100" ]
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = "$why" ]
	run grep -c 'nbd_\|dm_\|backing_dev' "$RAMBOOT_WRITE_LOG"
	assert_output 0
}

@test "swap --net: a server that answers NBD_OPT_GO without end is refused after 32 replies; zram alone" {
	fakenbd endless
	net_refused 'NBD_OPT_GO: more than 32 replies'
}

@test "swap --net: a reply of 4 GiB sent a byte a second is refused at once; zram alone" {
	fakenbd huge
	net_refused 'NBD_OPT_GO: a reply of 4294967295 bytes (at most 4098)'
}

@test "swap --net: a server that trickles every byte in time for a receive timeout still meets the one deadline" {
	fakenbd trickle
	# --net-timeout=15: the driver's request timeout is 5 s, and so is
	# the handshake's whole; the greeting takes 5.4 s
	net_refused 'greeting: Connection timed out' --net-timeout=15
}

@test "swap --net: a read-only export, replies to another option, an export under 1 MiB are refused" {
	fakenbd go 1073741824 3
	net_refused "export 'swap' is read-only"
	fake_again go 1073741824 1 6
	net_refused 'NBD_OPT_GO: a reply to option 6'
	fake_again old 1048575
	net_refused "export 'swap' of 1024.0 KiB: 1044480 bytes usable, less than 1 MiB"
	# the size asked for counts, not the export's
	net_refused "export 'swap' of 1024.0 KiB: 1044480 bytes usable, less than 1 MiB" --net-size=8M
}

@test "swap --net: a set-up that hangs in the kernel is given up on; what it made is undone; zram alone" {
	faultinj_build
	fakenbd go
	# the crypt mapping's creation never returns (a dm ioctl held in
	# the kernel); --net-timeout=15: the set-up's bound is 5 + 5 s
	run --separate-stderr faultinj_run 'open:path=*/dev/mapper/control:hang' \
		"$RAMBOOT_BIN" swap --size=64M --no-tune --net="$SERVER" --net-timeout=15 3>&-
	assert_success
	assert_output /dev/zram2
	[ "${stderr_lines[0]}" = "ramboot: swap: warning: network memory $SERVER: set-up given up after 10 s; zram alone" ]
	run grep 'nbd_\|dm_\|backing_dev' "$RAMBOOT_WRITE_LOG"
	assert_output "nbd_connect=/dev/nbd0
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd0"
	assert_fault_fired 'call=open .*action=hang'
}

@test "boot: ramboot.swap.net= whose set-up hangs ends by the boot's one deadline, not the tier's own bound" {
	faultinj_build
	fakenbd go
	# The tier's own bound: its timeout=90 gives 30 s (the cap). The
	# boot's deadline, ramboot.timeout=0.5 + 15 s, comes first; 25 s
	# catches the tier's own bound.
	echo "ramboot.swap=zram ramboot.swap.net=$SERVER,timeout=90 ramboot.timeout=0.5" \
		>"$R/proc/cmdline"
	run --separate-stderr timeout -k 5 25 env RAMBOOT_ROOT="$R" \
		FAULTINJ='open:path=*/dev/mapper/control:hang' FAULTINJ_LOG="$(faultinj_log)" \
		LD_PRELOAD="$FAULTINJ_SO" "$RAMBOOT_BIN" boot 3>&-
	case $status in 124 | 137) fail "ramboot boot did not return by its deadline" ;; esac
	assert_success
	assert_output ""
	assert_fault_fired 'call=open .*action=hang'
	grep -qx "ramboot: boot: warning: network memory $SERVER: set-up given up after [0-9]* s; zram alone" \
		<<<"$stderr" || fail "not given up: $stderr"
	run grep 'nbd_\|dm_' "$RAMBOOT_WRITE_LOG"
	assert_output "nbd_connect=/dev/nbd0
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd0"
}

@test "swap --net: the export is used up to 4 x RAM, added to the default size; --off takes the tier down" {
	fakenbd go 1099511627776
	# the tier's process outlives the command: without bats' descriptor
	run --separate-stderr "$RAMBOOT_BIN" swap --no-tune --net="$SERVER" 3>&-
	POLICY=$(sed -n 's/^pid=//p' "$R/run/ramboot/netmem")
	assert_success
	assert_output /dev/zram2
	[ "$stderr" = "ramboot: swap: warning: network memory $SERVER: export 'swap' of 1.0 TiB: using 4.0 GiB of it (4 x RAM)
ramboot: swap: /dev/zram2: 5.0 GiB swap, lzo-rle, priority 100
ramboot: swap: /dev/zram2: network memory on $SERVER (4.0 GiB of export swap), encrypted" ]
	run grep -v '^/sys/block/zram2/writeback_limit_enable=' "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lzo-rle
nbd_connect=/dev/nbd0
dm_create=ramboot-netmem
/sys/block/zram2/backing_dev=/dev/mapper/ramboot-netmem
/sys/block/zram2/disksize=5368709120
swapon=/dev/zram2"
	# the tier's process, as swap --off finds it below the fixture root
	mkdir -p "$R/proc/$POLICY"
	cp "/proc/$POLICY/stat" "$R/proc/$POLICY/stat"
	start=$(sed 's/.*) //' "/proc/$POLICY/stat" | cut -d' ' -f20)
	sed -i "s/^start=.*/start=$start/" "$R/run/ramboot/netmem"
	: >"$RAMBOOT_WRITE_LOG"
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	assert_success
	[ "$stderr" = 'ramboot: swap: /dev/zram2 released' ]
	run kill -0 "$POLICY"
	assert_failure
	run grep -v '^/sys' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd0"
}

@test "swap --net: an export whose size with zram's would pass 2^64 is refused; zram alone" {
	fakenbd go 18446744073709547520
	# 4 EiB of RAM: no cap below 2^64
	printf 'MemTotal:        4503599627370496 kB\n' >"$R/proc/meminfo"
	run --separate-stderr "$RAMBOOT_BIN" swap --no-tune --net="$SERVER" --net-max-ram=0 3>&-
	assert_success
	[ "$stderr" = "ramboot: swap: warning: network memory $SERVER: export 'swap' of 16777216.0 TiB: zram's disksize would overflow; zram alone
ramboot: swap: /dev/zram2: 8.0 GiB swap, lzo-rle, priority 100" ]
	run grep -c 'nbd_\|dm_\|backing_dev' "$RAMBOOT_WRITE_LOG"
	assert_output 0
}

@test "swap --net: bad options are usage errors; nothing written" {
	run "$RAMBOOT_BIN" swap --net=10.0.2.2 --writeback=/dev/vdb
	assert_failure 2
	assert_output --partial '--net and --writeback exclude each other'
	run "$RAMBOOT_BIN" swap --net=10.0.2.2 --net-idle=0
	assert_failure 2
	assert_output --partial "--net-idle: '0': expected a duration of whole seconds from 1 s to 1 d"
	run "$RAMBOOT_BIN" swap --net=10.0.2.2 --net-rate=fast
	assert_failure 2
	run "$RAMBOOT_BIN" swap --net=10.0.2.2 --net-size=lots
	assert_failure 2
	[ ! -s "$RAMBOOT_WRITE_LOG" ]
}

@test "boot: ramboot.swap.net= turns zram swap on; a spec that does not parse leaves zram alone" {
	echo 'ramboot.swap.net=10.0.2.2,colour=blue ramboot.swap.size=64M' >"$R/proc/cmdline"
	run --separate-stderr env -u RAMBOOT -u RAMBOOT_WRITE_LOG "$RAMBOOT_BIN" boot
	assert_success
	[ "${stderr_lines[0]}" = "ramboot: boot: warning: ramboot.swap.net=10.0.2.2,colour=blue: 'colour=blue': not understood; zram alone" ]
	[ "$(sed -n 's/^swap_device=//p' "$R/run/ramboot/report")" = /dev/zram2 ]
	[ "$(sed -n 's/^swap_net=//p' "$R/run/ramboot/report")" = 10.0.2.2,colour=blue ]
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = "'colour=blue': not understood" ]
}

@test "swap: bad size expressions are usage errors with the column; nothing written" {
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --size='min(ram,'
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --size: 'min(ram,': expected expression at column 9" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --size='ram * foo'
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --size: 'ram * foo': unknown name 'foo' at column 7" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --size='ram / 0'
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --size: 'ram / 0': division by zero at column 5" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --size=16K
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --size: '16K' is 16384 bytes, below the 40 KiB a swap area needs" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --mem-limit='1G -'
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --mem-limit: '1G -': expected expression at column 5" ]
	[ ! -s "$RAMBOOT_WRITE_LOG" ]
	assert_tree
}

@test "swap: bad options are usage errors" {
	run "$RAMBOOT_BIN" swap --priority=high
	assert_failure 2
	assert_output --partial "--priority: 'high': expected an integer in -1..32767"
	run "$RAMBOOT_BIN" swap --priority=40000
	assert_failure 2
	run "$RAMBOOT_BIN" swap --priority=-2
	assert_failure 2
	run "$RAMBOOT_BIN" swap --swappiness=201
	assert_failure 2
	run "$RAMBOOT_BIN" swap --bogus
	assert_failure 2
	run "$RAMBOOT_BIN" swap extra
	assert_failure 2
	run "$RAMBOOT_BIN" swap --force
	assert_failure 2
	[ ! -s "$RAMBOOT_WRITE_LOG" ]
}

@test "swap: never touches a device that is already initialised" {
	zdev 3 1048576 'lzo [lz4]'
	echo 3 >"$R/sys/class/zram-control/hot_add"
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: zram3: already initialised or in use: not touching it' ]
	# Not reset, not removed, nothing written.
	assert_tree
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output '/sys/class/zram-control/hot_add=3'
}

@test "swap: never touches a device that is active swap" {
	printf '/dev/zram2\tpartition\t1020\t0\t5\n' >>"$R/proc/swaps"
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: zram2: already initialised or in use: not touching it' ]
	assert_tree
}

@test "swap: a failing disksize write resets and removes the device" {
	# The shim fails the store (ENOSPC), standing in for the kernel's
	# EBUSY/ENOMEM from disksize; the same path is taken. (A link to
	# /dev/full no longer serves: only regular files are read.)
	faultinj_require_dynamic "$RAMBOOT_BIN"
	faultinj_build
	snapshot
	run --separate-stderr faultinj_run 'write:path=*/zram2/disksize:errno=ENOSPC' \
		"$RAMBOOT_BIN" swap --size=64M
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: zram2: disksize 67108864: No space left on device' ]
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/class/zram-control/hot_add=2
/sys/block/zram2/comp_algorithm=lzo-rle
/sys/block/zram2/disksize=67108864: No space left on device
/sys/block/zram2/reset=1
/sys/class/zram-control/hot_remove=2"
	[ "$(cat "$R/sys/class/zram-control/hot_remove")" = 2 ]
	[ "$(cat "$R/sys/block/zram2/reset")" = 1 ]
	run diff "$EXP/proc/swaps" "$R/proc/swaps"
	assert_success
}

@test "swap: a refused swapon resets and removes the device" {
	# proc/swaps as a directory: swapon's append fails with EISDIR.
	rm "$R/proc/swaps"
	mkdir "$R/proc/swaps"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: /dev/zram2: swapon: Is a directory' ]
	[ "$(cat "$R/sys/class/zram-control/hot_remove")" = 2 ]
	[ "$(cat "$R/sys/block/zram2/reset")" = 1 ]
	[ "$(cat "$R/proc/sys/vm/swappiness")" = 60 ]
}

@test "swap: missing zram-control is a one-line error" {
	rm -r "$R/sys/class/zram-control"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: zram: module not available: No such device' ]
}

@test "swap: --local-swap enables local swap partitions below zram, once" {
	mkdir -p "$R/sys/class/block/vda" "$R/sys/class/block/vda1" "$R/sys/class/block/vda2" \
		"$R/sys/class/block/nvme0n1p3" "$R/sys/class/block/loop0" "$R/sys/class/block/zram2"
	truncate -s 1M "$R/dev/vda" "$R/dev/vda2" "$R/dev/nvme0n1p3" "$R/dev/loop0" "$R/dev/vda1"
	mkswap -L disk "$R/dev/vda1" >/dev/null 2>&1
	mkswap -L other "$R/dev/nvme0n1p3" >/dev/null 2>&1
	mkswap "$R/dev/loop0" >/dev/null 2>&1          # a loop device is not a local disk
	printf '/dev/nvme0n1p3\tpartition\t1020\t0\t-2\n' >>"$R/proc/swaps"
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M --local-swap --no-tune
	assert_success
	run grep -c nvme0n1p3 "$R/proc/swaps"
	assert_output 1
	run grep -E 'vda1|loop0|vda2' "$R/proc/swaps"
	assert_output "$(printf '/dev/vda1\tpartition\t1020\t0\t50')"
	echo "$stderr" | grep -qx 'ramboot: swap: /dev/vda1: local swap, priority 50'
	echo "$stderr" | grep -qx 'ramboot: swap: /dev/nvme0n1p3: local swap already active'
}

# --- fixture: release --------------------------------------------------

@test "swap --off releases a ramboot device: swapoff, reset, hot_remove" {
	run "$RAMBOOT_BIN" swap --size=64M --no-tune
	assert_success
	: >"$RAMBOOT_WRITE_LOG"
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	assert_success
	[ "$stderr" = 'ramboot: swap: /dev/zram2 released' ]
	run cat "$R/proc/swaps"
	assert_output "$HDR"
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
/sys/block/zram2/reset=1
/sys/block/zram2/reset=1
/sys/class/zram-control/hot_remove=2"
}

# A zram device with the network tier as its backing device, as swap
# --net leaves it: the record of the tier (run/ramboot/netmem), and a
# stand-in for its policy process that logs the signals it takes into
# the write log, so that their order shows among the sysfs writes. It is
# an orphan (init reaps it), as the real one is.
netmem_fixture() {
	run "$RAMBOOT_BIN" swap --size=64M --no-tune
	assert_success
	echo /dev/mapper/ramboot-netmem >"$R/sys/block/zram2/backing_dev"
	mkdir -p "$R/run/ramboot"
	printf 'swap_device=/dev/zram2\nswap_net=10.0.2.2:10809\nswap_net_state=connected\n' \
		>"$R/run/ramboot/report"
	(bash -c 'trap "echo policy=USR1 >>\"$0\"" USR1; trap "echo policy=USR2 >>\"$0\"" USR2
		trap "echo policy=TERM >>\"$0\"; exit 0" TERM; echo $$ >"$1"
		while :; do sleep 0.05; done' "$RAMBOOT_WRITE_LOG" "$BATS_TEST_TMPDIR/policy.pid" \
		</dev/null >/dev/null 2>&1 &)
	for _ in $(seq 100); do [ -s "$BATS_TEST_TMPDIR/policy.pid" ] && break; sleep 0.05; done
	POLICY=$(cat "$BATS_TEST_TMPDIR/policy.pid")
	mkdir -p "$R/proc/$POLICY"
	cp "/proc/$POLICY/stat" "$R/proc/$POLICY/stat"
	start=$(sed 's/.*) //' "/proc/$POLICY/stat" | cut -d' ' -f20)
	printf 'pid=%s\nstart=%s\nzram=2\nnbd=0\n' "$POLICY" "$start" >"$R/run/ramboot/netmem"
	: >"$RAMBOOT_WRITE_LOG"
}

policy_alive() { kill -0 "$POLICY" 2>/dev/null; }
policy_stop() { [ -z "${POLICY:-}" ] || kill -KILL "$POLICY" 2>/dev/null || true; }

@test "swap --off with the network tier: policy paused, swapoff, policy ended, zram, mapping, NBD" {
	netmem_fixture
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	policy_stop
	assert_success
	[ "$stderr" = 'ramboot: swap: /dev/zram2 released' ]
	# The pause is a signal its handler takes in its own time; the end
	# is waited for, before zram lets go of the mapping.
	run grep -c '^policy=USR1$' "$RAMBOOT_WRITE_LOG"
	assert_output 1
	run grep -v '^policy=USR1$' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
policy=TERM
/sys/block/zram2/reset=1
/sys/block/zram2/reset=1
/sys/class/zram-control/hot_remove=2
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd0"
	[ ! -e "$R/run/ramboot/netmem" ]
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = off ]
}

@test "swap --off with the network tier: a failed swapoff resumes the policy, the tier stays" {
	faultinj_build
	netmem_fixture
	run --separate-stderr faultinj_run 'write:path=*/proc/swaps:errno=EIO' \
		"$RAMBOOT_BIN" swap --off /dev/zram2
	for _ in $(seq 100); do grep -q '^policy=USR2$' "$RAMBOOT_WRITE_LOG" && break; sleep 0.05; done
	alive=no
	policy_alive && alive=yes
	policy_stop
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: /dev/zram2: swapoff: Input/output error; the network tier stays as it was' ]
	run grep '^policy=' "$RAMBOOT_WRITE_LOG"
	assert_output "policy=USR1
policy=USR2"
	run grep -v '^policy=' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2: Input/output error"
	[ "$alive" = yes ]
	[ -e "$R/run/ramboot/netmem" ]
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = connected ]
}

@test "swap --off with the network tier: a refused reset leaves the tier under zram, exit 1" {
	faultinj_build
	netmem_fixture
	run --separate-stderr faultinj_run 'write:path=*/zram2/reset:errno=EIO' \
		"$RAMBOOT_BIN" swap --off /dev/zram2
	policy_stop
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: zram2: reset: Input/output error; its network tier stays under it (mapping ramboot-netmem)' ]
	run grep -v '^policy=USR1$' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
policy=TERM
/sys/block/zram2/reset=1: Input/output error"
	run grep -c 'dm_remove\|nbd_disconnect' "$RAMBOOT_WRITE_LOG"
	assert_output 0
}

@test "swap --off with the network tier: a mapping that cannot be removed keeps its NBD device connected" {
	faultinj_build
	netmem_fixture
	# the kernel refuses DM_DEV_REMOVE: someone holds the mapping open
	run --separate-stderr faultinj_run 'open:path=*/dev/mapper/ramboot-netmem:errno=EBUSY' \
		"$RAMBOOT_BIN" swap --off /dev/zram2
	policy_stop
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: network memory: crypt mapping ramboot-netmem: Device or resource busy; /dev/nbd0 left connected under it' ]
	assert_fault_fired 'call=open .*action=errno:EBUSY'
	run grep -v '^policy=' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
/sys/block/zram2/reset=1
/sys/block/zram2/reset=1
/sys/class/zram-control/hot_remove=2
dm_remove=ramboot-netmem: Device or resource busy"
	[ "$(sed -n 's/^swap_net_state=//p' "$R/run/ramboot/report")" = connected ]
}

@test "swap --off with the network tier's link lost: refused, nothing changed, unless --force" {
	netmem_fixture
	sed -i 's/^swap_net_state=.*/swap_net_state=lost/' "$R/run/ramboot/report"
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	assert_failure 1
	[ "$stderr" = "ramboot: swap: error: /dev/zram2: the network tier's link is lost (swap_net_state=lost): swapoff would drop the pages on the server, and their processes die when they touch them; wait for connected, or --force" ]
	assert_tree
	[ ! -s "$RAMBOOT_WRITE_LOG" ]
	policy_alive
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2 --force
	policy_stop
	assert_success
	[ "$stderr" = 'ramboot: swap: /dev/zram2 released' ]
	run grep -v '^policy=USR1$' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
policy=TERM
/sys/block/zram2/reset=1
/sys/block/zram2/reset=1
/sys/class/zram-control/hot_remove=2
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd0"
}

@test "swap --off with the network tier: no live process recorded, the NBD device found in sysfs" {
	netmem_fixture
	policy_stop
	# the recorded pid is another process now: its start time differs
	sed -i 's/^start=.*/start=1/' "$R/run/ramboot/netmem"
	sed -i 's/^nbd=.*/nbd=-1/' "$R/run/ramboot/netmem"
	mkdir -p "$R/sys/block/dm-0/dm" "$R/sys/block/dm-0/slaves/nbd3"
	echo ramboot-netmem >"$R/sys/block/dm-0/dm/name"
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: /dev/zram2: network memory: no policy process to pause (none recorded alive); going on' ]
	[ "${stderr_lines[1]}" = 'ramboot: swap: /dev/zram2 released' ]
	run grep -v '^/sys' "$RAMBOOT_WRITE_LOG"
	assert_output "swapoff=/dev/zram2
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd3"
}

@test "swap --off with the network tier and no way to find its NBD device: exit 1, one line" {
	netmem_fixture
	policy_stop
	rm "$R/run/ramboot/netmem"
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram2
	assert_failure 1
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: /dev/zram2: network memory: no policy process to pause (none recorded alive); going on' ]
	[ "${stderr_lines[1]}" = 'ramboot: swap: error: network memory: no record of its NBD device (/run/ramboot/netmem): not disconnected' ]
	[ "${#stderr_lines[@]}" = 2 ]
	run tail -n 1 "$RAMBOOT_WRITE_LOG"
	assert_output dm_remove=ramboot-netmem
}

@test "swap --off --force: what a set-up killed half-way left (backing_dev, mapping, NBD; no swap, no record) goes" {
	# killed after backing_dev, before mkswap: no signature, no swapon,
	# no process, no record; the mapping's slave names the NBD device
	zdev 4 67108864
	echo /dev/mapper/ramboot-netmem >"$R/sys/block/zram4/backing_dev"
	truncate -s 1M "$R/dev/zram4"
	mkdir -p "$R/sys/block/dm-1/dm" "$R/sys/block/dm-1/slaves/nbd2"
	echo ramboot-netmem >"$R/sys/block/dm-1/dm/name"
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram4
	assert_failure 1
	[ ! -s "$RAMBOOT_WRITE_LOG" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram4 --force
	assert_success
	[ "${stderr_lines[0]}" = 'ramboot: swap: warning: /dev/zram4: network memory: no policy process to pause (none recorded alive); going on' ]
	run cat "$RAMBOOT_WRITE_LOG"
	assert_output "/sys/block/zram4/reset=1
/sys/block/zram4/reset=1
/sys/class/zram-control/hot_remove=4
dm_remove=ramboot-netmem
nbd_disconnect=/dev/nbd2"
}

@test "swap --off refuses a device ramboot did not label, unless --force" {
	zdev 5 1048576
	truncate -s 1M "$R/dev/zram5"
	mkswap -L other "$R/dev/zram5" >/dev/null 2>&1
	printf '/dev/zram5\tpartition\t1020\t0\t5\n' >>"$R/proc/swaps"
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram5
	assert_failure 1
	[ "$stderr" = "ramboot: swap: error: /dev/zram5: swap label is 'other', not 'ramboot-zram': not set up by ramboot swap (--force to release it anyway)" ]
	assert_tree
	run "$RAMBOOT_BIN" swap --off /dev/zram5 --force
	assert_success
	[ "$(cat "$R/sys/class/zram-control/hot_remove")" = 5 ]
	run grep zram5 "$R/proc/swaps"
	assert_failure
}

@test "swap --off refuses a device without a swap signature" {
	snapshot
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/zram0
	assert_failure 1
	[ "$stderr" = 'ramboot: swap: error: /dev/zram0: no swap signature: not set up by ramboot swap (--force to release it anyway)' ]
	assert_tree
}

@test "swap --off: not a zram device is a usage error" {
	run --separate-stderr "$RAMBOOT_BIN" swap --off /dev/sda
	assert_failure 2
	[ "$stderr" = "ramboot: swap: error: --off: '/dev/sda': not a zram device" ]
}

# --- fixture: status ---------------------------------------------------

@test "status: nothing to show is not an error" {
	run "$RAMBOOT_BIN" status
	assert_success
	assert_output 'ramboot: no boot report: ramboot did not run

no initialised zram devices'
	run "$RAMBOOT_BIN" status --json
	assert_success
	assert_output '{
  "verdict": "no boot report: ramboot did not run",
  "in_ram": false,
  "report": null,
  "zram": []
}'
}

status_fixture() {
	zdev 2 67108864 'lzo [lzo-rle] lz4'
	echo '50331648 12582912 13631488 0 14680064 256 0 12 0' >"$R/sys/block/zram2/mm_stat"
	zdev 4 1073741824 'lzo-rle [lz4]'
	echo '0 0 0 0 0 0 0 0 0' >"$R/sys/block/zram4/mm_stat"
	printf '/dev/zram2\tpartition\t65532\t49152\t100\n' >>"$R/proc/swaps"
	mkdir -p "$R/run/ramboot"
	printf 'mode_done=ram\nimage=/srv/ltsp/images/x86_64.img\nbytes=1048576\nseconds=1.5\nnote=say "hi"\nerror=\n' \
		>"$R/run/ramboot/report"
}

@test "status: report and table of initialised zram devices" {
	status_fixture
	run "$RAMBOOT_BIN" status
	assert_success
	assert_output 'ramboot: running from RAM (1.0 MiB, not verified)

boot report (/run/ramboot/report):
mode_done=ram
image=/srv/ltsp/images/x86_64.img
bytes=1048576 (1.0 MiB)
seconds=1.5
note=say "hi"

DEVICE        DISKSIZE ALGORITHM       DATA      COMPR  RATIO      TOTAL  PRIO
/dev/zram2    64.0 MiB lzo-rle     48.0 MiB   12.0 MiB   4.00   13.0 MiB   100
/dev/zram4     1.0 GiB lz4              0 B        0 B      -        0 B     -'
	run "$RAMBOOT_BIN" swap --status
	assert_success
	assert_output --partial '/dev/zram2    64.0 MiB lzo-rle'
}

@test "status: the network tier's keys, init's protection among them" {
	status_fixture
	printf 'swap_net=10.0.2.2:10809\nswap_net_state=connected\nswap_net_bytes_written=83886080\nswap_net_pid1=unprotected (init in the root cgroup)\n' \
		>>"$R/run/ramboot/report"
	run "$RAMBOOT_BIN" status
	assert_success
	assert_output --partial 'swap_net=10.0.2.2:10809
swap_net_state=connected
swap_net_bytes_written=83886080 (80.0 MiB)
swap_net_pid1=unprotected (init in the root cgroup)
'
}

@test "status --json: report object and zram array" {
	status_fixture
	run "$RAMBOOT_BIN" status --json
	assert_success
	assert_output '{
  "verdict": "running from RAM (1.0 MiB, not verified)",
  "in_ram": true,
  "report": {
    "mode_done": "ram",
    "image": "/srv/ltsp/images/x86_64.img",
    "bytes": 1048576,
    "seconds": "1.5",
    "note": "say \"hi\"",
    "error": ""
  },
  "zram": [
    {"device": "/dev/zram2", "disksize": 67108864, "algorithm": "lzo-rle", "orig_data_size": 50331648, "compr_data_size": 12582912, "mem_used_total": 13631488, "mem_limit": 0, "mem_used_max": 14680064, "same_pages": 256, "huge_pages": 12, "ratio": 4.00, "swap": true, "priority": 100},
    {"device": "/dev/zram4", "disksize": 1073741824, "algorithm": "lz4", "orig_data_size": 0, "compr_data_size": 0, "mem_used_total": 0, "mem_limit": 0, "mem_used_max": 0, "same_pages": 0, "huge_pages": 0, "ratio": null, "swap": false, "priority": null}
  ]
}'
	if command -v jq >/dev/null; then
		run jq -e '.report.bytes == 1048576 and .zram[0].priority == 100' <<<"$output"
		assert_success
	fi
	run "$RAMBOOT_BIN" swap --status --json
	assert_success
	assert_output --partial '"report": {'
}

@test "status --json: control characters and bytes that are not UTF-8 stay valid JSON" {
	zdev 2 67108864 'lzo [lzo-rle] lz4'
	mkdir -p "$R/run/ramboot"
	printf 'source=/srv/caf\xc3\xa9 \xe9t\xe9\\x\x01\x7f\nerror=cut \xe2\x82\n' >"$R/run/ramboot/report"
	run "$RAMBOOT_BIN" status --json
	assert_success
	assert_output --partial '"source": "/srv/café \ufffdt\ufffd\\x\u0001\u007f"'
	assert_output --partial '"error": "cut \ufffd\ufffd"'
	run python3 -c 'import json, sys; d = json.loads(sys.stdin.buffer.read().decode("utf-8")); print(d["report"]["source"])' <<<"$output"
	assert_success
	assert_output $'/srv/caf\u00e9 \ufffdt\ufffd\\x\x01\x7f'
}

@test "status: bad option is a usage error" {
	run "$RAMBOOT_BIN" status --bogus
	assert_failure 2
}

# --- the real kernel ----------------------------------------------------

real_setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -d /sys/class/zram-control ] || skip "no zram-control in this kernel"
	[ -x "$BATS_FILE_TMPDIR/dochog" ] || skip "dochog not built"
	unset RAMBOOT_ROOT RAMBOOT_WRITE_LOG
	# One swap test or benchmark at a time: they save and restore the
	# same vm settings.
	exec 8>/run/lock/ramboot-swap-test.lock
	flock -w 300 8 || skip "another swap test holds the lock"
	SAVE_SWAPPINESS=$(cat /proc/sys/vm/swappiness)
	SAVE_PAGECLUSTER=$(cat /proc/sys/vm/page-cluster)
	SAVE_ZSWAP=$(cat /sys/module/zswap/parameters/enabled 2>/dev/null || true)
	ZRAM_BEFORE=$(ls /sys/block | grep '^zram' | sort)
	ZRAM_STATE_BEFORE=$(for d in $ZRAM_BEFORE; do
		echo "$d $(cat /sys/block/$d/disksize) $(cat /sys/block/$d/comp_algorithm)"; done)
	DEV=
	. "$TOP/tests/fixtures/swap/lib.sh"
	CG=
}

teardown() {
	[ -z "${FAKE_PID:-}" ] || kill "$FAKE_PID" 2>/dev/null || true
	policy_stop
	[ -n "${SAVE_SWAPPINESS:-}" ] || return 0
	cg_remove || true
	if [ -n "${DEV:-}" ] && [ -e "/sys/block/${DEV#/dev/}" ]; then
		swapoff "$DEV" 2>/dev/null || true
		echo 1 >"/sys/block/${DEV#/dev/}/reset" 2>/dev/null || true
		echo "${DEV#/dev/zram}" >/sys/class/zram-control/hot_remove 2>/dev/null || true
	fi
	echo "$SAVE_SWAPPINESS" >/proc/sys/vm/swappiness
	echo "$SAVE_PAGECLUSTER" >/proc/sys/vm/page-cluster
	[ -z "$SAVE_ZSWAP" ] || echo "$SAVE_ZSWAP" >/sys/module/zswap/parameters/enabled
}

@test "real kernel: swap --size=64M carries 77 MiB through a 48M cgroup, then --off" {
	real_setup
	run --separate-stderr "$RAMBOOT_BIN" swap --size=64M
	assert_success
	DEV=$output
	[[ "$DEV" =~ ^/dev/zram[0-9]+$ ]]
	z=${DEV#/dev/}
	# A new device: not one of those that were there before.
	if echo "$ZRAM_BEFORE" | grep -qx "$z"; then false; fi
	run awk -v d="$DEV" '$1 == d { print $3, $5 }' /proc/swaps
	assert_output '65532 100'
	[ "$(cat /sys/block/$z/disksize)" = 67108864 ]
	grep -q '\[lzo-rle\]' /sys/block/$z/comp_algorithm
	run blkid -p -o export "$DEV"
	assert_output --partial 'LABEL=ramboot-zram'
	assert_output --partial 'TYPE=swap'
	[ "$(cat /proc/sys/vm/swappiness)" = 180 ]
	[ "$(cat /proc/sys/vm/page-cluster)" = 0 ]

	# Real file content: the corpus is written out here, so its page
	# cache is not charged to the test cgroup.
	corpus=$BATS_TEST_TMPDIR/corpus
	make_corpus "$corpus" 32
	out0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	# 48M, not less: reclaim on a busy machine must keep up with the
	# writer, or the cgroup OOM-kills it before zram can take the pages.
	cg_create "ramboot-test-$$" $((48 << 20))
	run cg_run "$BATS_FILE_TMPDIR/dochog" -n 7 -s 11 "$corpus"
	assert_success
	assert_line 'doc 7'
	assert_line 'verified 7'
	out1=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	# At least the 29 MiB that cannot fit went out to swap...
	[ $((out1 - out0)) -ge $((29 << 20 >> 12)) ]
	# ...and through our device.
	used_max=$(awk '{ print $5 }' /sys/block/$z/mm_stat)
	[ "$used_max" -gt $((4 << 20)) ]
	cg_remove

	run --separate-stderr "$RAMBOOT_BIN" status
	assert_success
	assert_output --partial "$DEV"

	run --separate-stderr "$RAMBOOT_BIN" swap --off "$DEV"
	assert_success
	run ! grep -q "^$DEV " /proc/swaps
	[ ! -e "/sys/block/$z" ]
	DEV=
	# Nothing of ours left, the devices that were there untouched.
	[ "$(ls /sys/block | grep '^zram' | sort)" = "$ZRAM_BEFORE" ]
	[ "$(for d in $ZRAM_BEFORE; do
		echo "$d $(cat /sys/block/$d/disksize) $(cat /sys/block/$d/comp_algorithm)"; done)" = "$ZRAM_STATE_BEFORE" ]
}

@test "real kernel: --priority=-1: swapon without a priority, the kernel's negative one" {
	real_setup
	run --separate-stderr "$RAMBOOT_BIN" swap --size=8M --no-tune --priority=-1
	assert_success
	DEV=$output
	[[ "$DEV" =~ ^/dev/zram[0-9]+$ ]]
	prio=$(awk -v d="$DEV" '$1 == d { print $5 }' /proc/swaps)
	[ -n "$prio" ]
	[ "$prio" -lt 0 ]
	[[ "$stderr" =~ ^"ramboot: swap: $DEV: 8.0 MiB swap, "[a-z0-9-]+", kernel-assigned priority $prio"$ ]]
	run --separate-stderr "$RAMBOOT_BIN" swap --off "$DEV"
	assert_success
	DEV=
	[ "$(ls /sys/block | grep '^zram' | sort)" = "$ZRAM_BEFORE" ]
}

@test "real kernel: --off of a busy device fails with EBUSY, then succeeds" {
	real_setup
	run --separate-stderr "$RAMBOOT_BIN" swap --size=8M --no-tune
	assert_success
	DEV=$output
	z=${DEV#/dev/}
	# Hold the node open: the kernel refuses reset (EBUSY) after swapoff.
	exec 9<"$DEV"
	run --separate-stderr "$RAMBOOT_BIN" swap --off "$DEV"
	exec 9<&-
	assert_failure 1
	[ "$stderr" = "ramboot: swap: error: $z: reset: Device or resource busy" ]
	run --separate-stderr "$RAMBOOT_BIN" swap --off "$DEV"
	assert_success
	[ ! -e "/sys/block/$z" ]
	DEV=
	[ "$(ls /sys/block | grep '^zram' | sort)" = "$ZRAM_BEFORE" ]
}
