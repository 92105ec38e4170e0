#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The server of the network memory tier: sbin/ramboot-netmem (settings,
# the nbd-server configuration, files made under the quota) and nbd-server
# serving them. The clients are network namespaces on a bridge (the lab of
# helpers/udpcast-lab.bash: the server at 10.77.0.1, clients at .11 and
# .12) that speak NBD from user space with qemu-io: this host needs no
# nbd kernel module. Servers, namespaces and mounts go in teardown, also
# after a failure.

# bats sets status, output, stderr after each `run`
# shellcheck disable=SC2154
# each @test runs in a subshell: its assignments are meant to stay there
# shellcheck disable=SC2030,SC2031,SC2034
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load helpers/udpcast-lab

TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
NETMEM=$TOP/sbin/ramboot-netmem

setup() {
	T=$BATS_TEST_TMPDIR
	D=$T/files
	NS=rbnm$$
	NETS=()
	SRV_PID=
	# as the package's settings, but the files in the test's directory
	# and nbd-server as root (the test's directories are root's)
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=4"
}

teardown() {
	stop_server
	lab_teardown
	if mountpoint -q "$T/small" 2>/dev/null; then
		umount "$T/small" || umount -l "$T/small"
	fi
}

# settings NAME=VALUE...: $T/settings, over the test's defaults
settings() {
	{
		echo "NETMEM_DIR=$D"
		echo "NETMEM_USER="
		echo "NETMEM_PORT=10809"
		echo "NETMEM_ALLOW=any"
		printf '%s\n' "$@"
	} >"$T/settings"
}

# need_ns: root, nbd-server, qemu-io and network namespaces, or skip
need_ns() {
	[ "$(id -u)" = 0 ] || skip "needs root: network namespaces"
	command -v nbd-server >/dev/null || skip "nbd-server not installed"
	command -v qemu-io >/dev/null || skip "qemu-io (qemu-utils) not installed"
	ip netns add "$NS-probe" 2>/dev/null || skip "cannot make network namespaces"
	ip netns del "$NS-probe"
}

# start_server: the configuration from the settings, nbd-server in the
# server's namespace; returns once it listens
start_server() {
	"$NETMEM" -c "$T/settings" config "$T/nbd.conf"
	run_server
}

# run_server: nbd-server with $T/nbd.conf in the server's namespace;
# returns once it listens. The daemon writes its pid file after its
# parent has returned: wait for both.
run_server() {
	local i
	ip netns exec "$NS-s" nbd-server -C "$T/nbd.conf" -p "$T/nbd.pid" 2>"$T/nbd.log"
	for i in $(seq 100); do
		[ -s "$T/nbd.pid" ] && SRV_PID=$(cat "$T/nbd.pid") &&
			ip netns exec "$NS-s" ss -Hltn "sport = :10809" | grep -q LISTEN && return 0
		sleep 0.1
	done
	echo "nbd-server does not listen (try $i)"
	return 1
}

# stop_server: the daemon and its children (one per connection)
stop_server() {
	[ -n "$SRV_PID" ] || return 0
	pkill -KILL -P "$SRV_PID" 2>/dev/null || true
	kill -KILL "$SRV_PID" 2>/dev/null || true
	local i
	for i in $(seq 100); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	SRV_PID=
}

# io CLIENT COMMAND...: qemu-io commands on the export "swap", from the
# client's namespace (c1 or c2)
io() {
	local c=$1 a=()
	shift
	for x in "$@"; do a+=(-c "$x"); done
	run ip netns exec "$NS-$c" timeout 60 qemu-io -f raw "nbd://10.77.0.1:10809/swap" "${a[@]}"
	echo "$output"
}

@test "netmem-server: config: one export, the client's address in the file name, the prerun" {
	run "$NETMEM" -c "$T/settings" config
	assert_success
	assert_line "[swap]"
	assert_line "port = 10809"
	assert_line "exportname = $D/%s"
	assert_line "virtstyle = ipliteral"
	assert_line "prerun = $NETMEM -c $T/settings prepare %s"
	assert_line "trim = true"
	refute_line --partial "filesize"
	refute_line --partial "user ="
	[ -d "$D" ]
}

@test "netmem-server: config: NETMEM_ALLOW is nbd-server's authfile" {
	settings "NETMEM_ALLOW='10.77.0.0/24 192.168.1.5'"
	run "$NETMEM" -c "$T/settings" config "$T/nbd.conf"
	assert_success
	run cat "$T/nbd.conf"
	assert_line "authfile = $T/nbd.conf.allow"
	run cat "$T/nbd.conf.allow"
	assert_output "10.77.0.0/24
192.168.1.5"
}

@test "netmem-server: bad settings are usage errors (exit 2)" {
	settings "NETMEM_SIZE=12X"
	run "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 2 ]
	assert_output --partial "NETMEM_SIZE=12X: not a size (a number and a unit: 4096B, 512K, 256M, 1.5G, 2T)"
	settings "NETMEM_SIZE=1.5"
	run "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 2 ]
	settings "NETMEM_SIZE=1000000"
	run "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 2 ]
	assert_output --partial "a multiple of 4 KiB"
	settings "NETMEM_CLIENTS=many"
	run "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 2 ]
	settings "NETMEM_USER=no-such-user-rb"
	run "$NETMEM" -c "$T/settings" config
	[ "$status" -eq 2 ]
	run "$NETMEM" -c "$T/settings"
	[ "$status" -eq 2 ]
	assert_output --partial "usage:"
}

@test "netmem-server: add: sparse files of the size; the quota refuses the one too many" {
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=2"
	"$NETMEM" -c "$T/settings" config >/dev/null
	run "$NETMEM" -c "$T/settings" add 10.0.0.1 10.0.0.2
	assert_success
	[ "$(stat -c %s "$D/10.0.0.1")" -eq 16777216 ]
	[ "$(stat -c %b "$D/10.0.0.1")" -eq 0 ]
	[ "$(stat -c %a "$D/10.0.0.2")" = 600 ]
	run "$NETMEM" -c "$T/settings" add 10.0.0.3
	[ "$status" -eq 1 ]
	assert_output --partial "10.0.0.3: refused: a new file of 16.0MiB would pass the quota of 32.0MiB"
	[ ! -e "$D/10.0.0.3" ]
	# a file that exists is kept as it is, quota or not
	echo data >"$T/x"
	dd if="$T/x" of="$D/10.0.0.1" conv=notrunc status=none
	run "$NETMEM" -c "$T/settings" add 10.0.0.1
	assert_success
	[ "$(head -c 4 "$D/10.0.0.1")" = data ]
	run "$NETMEM" -c "$T/settings" list
	assert_success
	assert_line --partial "2 of 2 clients; 32.0MiB of a quota of 32.0MiB"
	assert_line --regexp '^10\.0\.0\.1 +16\.0MiB +4\.0KiB .* no$'
}

@test "netmem-server: add: refused when the files could not all be filled (free space)" {
	[ "$(id -u)" = 0 ] || skip "needs root: a small tmpfs"
	mkdir -p "$T/small"
	mount -t tmpfs -o size=40M tmpfs "$T/small"
	D=$T/small/files
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=10"
	"$NETMEM" -c "$T/settings" config >/dev/null
	run "$NETMEM" -c "$T/settings" add 10.0.0.1 10.0.0.2
	assert_success
	run "$NETMEM" -c "$T/settings" add 10.0.0.3
	[ "$status" -eq 1 ]
	assert_output --partial "10.0.0.3: refused: the files could not all be filled"
	[ ! -e "$D/10.0.0.3" ]
	# the other files of the file system count too
	run "$NETMEM" -c "$T/settings" remove 10.0.0.2
	assert_success
	head -c 20M /dev/zero >"$T/small/other"
	run "$NETMEM" -c "$T/settings" add 10.0.0.3
	[ "$status" -eq 1 ]
	rm "$T/small/other"
	run "$NETMEM" -c "$T/settings" add 10.0.0.3
	assert_success
}

@test "netmem-server: prepare: only a client's address in the directory" {
	"$NETMEM" -c "$T/settings" config >/dev/null
	run "$NETMEM" -c "$T/settings" prepare "$D/../evil"
	[ "$status" -eq 1 ]
	assert_output --partial "not a client's address"
	run "$NETMEM" -c "$T/settings" prepare "/etc/10.0.0.1"
	[ "$status" -eq 1 ]
	assert_output --partial "not in $D"
	run "$NETMEM" -c "$T/settings" prepare "$D/.lock"
	[ "$status" -eq 1 ]
	ln -s /etc/passwd "$D/10.0.0.9"
	run "$NETMEM" -c "$T/settings" prepare "$D/10.0.0.9"
	[ "$status" -eq 1 ]
	assert_output --partial "not a regular file"
	run "$NETMEM" -c "$T/settings" prepare "$D/fe80::1"
	assert_success
	[ -f "$D/fe80::1" ]
}

@test "netmem-server: a client's first connection makes its file; it reads what it wrote" {
	need_ns
	lab 77 c1 c2
	start_server
	[ ! -e "$D/10.77.0.11" ]
	io c1 "write -P 0x5a 0 1M" "read -P 0x5a 0 1M"
	assert_success
	[ "$(stat -c %s "$D/10.77.0.11")" -eq 16777216 ]
	head -c 1048576 /dev/zero | tr '\0' Z >"$T/marker"
	cmp -n 1048576 "$T/marker" "$D/10.77.0.11"
	run ip netns exec "$NS-c1" qemu-img info "nbd://10.77.0.1:10809/swap"
	assert_output --partial "virtual size: 16 MiB (16777216 bytes)"
}

@test "netmem-server: reconnect and a restart of the server keep the data" {
	need_ns
	lab 77 c1 c2
	start_server
	io c1 "write -P 0x5a 0 1M" "write -P 0xa5 8M 64k"
	assert_success
	io c1 "read -P 0x5a 0 1M" "read -P 0xa5 8M 64k"
	assert_success
	stop_server
	io c1 "read -P 0x5a 0 1M"
	assert_failure
	start_server
	io c1 "read -P 0x5a 0 1M" "read -P 0xa5 8M 64k"
	assert_success
	[ "$(find "$D" -type f ! -name .lock | wc -l)" -eq 1 ]
}

@test "netmem-server: a second client has its own file and cannot read the first's" {
	need_ns
	lab 77 c1 c2
	start_server
	io c1 "write -P 0x5a 0 1M"
	assert_success
	io c2 "read -P 0 0 1M"
	assert_success
	io c2 "read -P 0x5a 0 1M"
	assert_failure
	assert_output --partial "Pattern verification failed"
	io c2 "write -P 0x33 0 1M"
	assert_success
	io c1 "read -P 0x5a 0 1M"
	assert_success
	[ -f "$D/10.77.0.11" ]
	[ -f "$D/10.77.0.12" ]
	run grep -c Z "$D/10.77.0.12"
	assert_output 0
}

@test "netmem-server: the quota refuses a new client's connection, not the others'" {
	need_ns
	lab 77 c1 c2
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=1"
	start_server
	io c1 "write -P 0x5a 0 64k"
	assert_success
	io c2 "read -P 0 0 64k"
	assert_failure
	[ ! -e "$D/10.77.0.12" ]
	io c1 "read -P 0x5a 0 64k"
	assert_success
	# its place freed, the second client is served
	run "$NETMEM" -c "$T/settings" remove 10.77.0.11
	assert_success
	io c2 "read -P 0 0 64k"
	assert_success
	[ -f "$D/10.77.0.12" ]
}

@test "netmem-server: remove keeps the file of a connected client" {
	need_ns
	lab 77 c1 c2
	start_server
	mkfifo "$T/in"
	# qemu-io holds the connection while its input is open
	ip netns exec "$NS-c1" timeout 60 qemu-io -f raw "nbd://10.77.0.1:10809/swap" <"$T/in" >/dev/null 2>&1 &
	exec 8>"$T/in"
	local i
	for i in $(seq 100); do
		[ -e "$D/10.77.0.11" ] && "$NETMEM" -c "$T/settings" list | grep -q '^10\.77\.0\.11 .* yes$' && break
		sleep 0.1
	done
	run "$NETMEM" -c "$T/settings" list
	assert_line --regexp '^10\.77\.0\.11 .* yes$'
	run "$NETMEM" -c "$T/settings" remove 10.77.0.11
	[ "$status" -eq 1 ]
	assert_output --partial "10.77.0.11: in use"
	[ -f "$D/10.77.0.11" ]
	exec 8>&-
	wait
	run "$NETMEM" -c "$T/settings" remove 10.77.0.11
	assert_success
	[ ! -e "$D/10.77.0.11" ]
}

@test "netmem-server: nbd-server as the user nbd makes the files through the prerun" {
	need_ns
	id -u nbd >/dev/null 2>&1 || skip "no user nbd (nbd-server's package makes it)"
	# the user must reach the program, the settings and the directory
	W=$(mktemp -d /tmp/rbnm.XXXXXX)
	chmod 0755 "$W"
	su nbd -s /bin/sh -c "test -x '$NETMEM'" || { rm -rf "$W"; skip "the user nbd cannot run $NETMEM"; }
	D=$W/files
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=4" "NETMEM_USER=nbd"
	cp "$T/settings" "$W/settings"
	chmod 0644 "$W/settings"
	"$NETMEM" -c "$W/settings" config "$T/nbd.conf"
	lab 77 c1 c2
	run_server
	io c1 "write -P 0x5a 0 64k" "read -P 0x5a 0 64k"
	local st=$status
	run stat -c '%U %a' "$D" "$D/10.77.0.11"
	rm -rf "$W"
	[ "$st" -eq 0 ]
	assert_output "nbd 700
nbd 600"
}

@test "netmem-server: ramboot-netmem is POSIX sh, shellcheck-clean" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck -s sh "$NETMEM" "$TOP/bench/netmem-bench.sh" "$TOP/bench/netmem-bench-init"
	assert_success
	assert_output ""
}

@test "netmem-server: nbd-server as nbd reaches a directory several levels down that config made (parents 0755)" {
	need_ns
	id -u nbd >/dev/null 2>&1 || skip "no user nbd (nbd-server's package makes it)"
	W=$(mktemp -d /tmp/rbnm.XXXXXX)
	chmod 0755 "$W"
	su nbd -s /bin/sh -c "test -x '$NETMEM'" || { rm -rf "$W"; skip "the user nbd cannot run $NETMEM"; }
	# as /var/lib/ramboot/netmem on a fresh server: two levels to make
	D=$W/lib/ramboot/netmem
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=4" "NETMEM_USER=nbd" "NETMEM_ALLOW=10.77.0.0/24"
	cp "$T/settings" "$W/settings"
	chmod 0644 "$W/settings"
	"$NETMEM" -c "$W/settings" config "$T/nbd.conf"
	lab 77 c1 c2
	run_server
	io c1 "write -P 0x5a 0 64k" "read -P 0x5a 0 64k"
	local st=$status
	run stat -c '%U %a' "$W/lib" "$W/lib/ramboot" "$D" "$D/10.77.0.11"
	rm -rf "$W"
	[ "$st" -eq 0 ]
	assert_output "root 755
root 755
nbd 700
nbd 600"
}

@test "netmem-server: config refuses an empty NETMEM_ALLOW (exit 2); the shipped settings name the lab's network" {
	settings "NETMEM_ALLOW="
	run "$NETMEM" -c "$T/settings" config "$T/nbd.conf"
	[ "$status" -eq 2 ]
	assert_output --partial "NETMEM_ALLOW is empty"
	[ ! -e "$T/nbd.conf" ]
	run sh -c ". '$TOP/conf/ramboot-netmem.default'; echo \"\$NETMEM_ALLOW\""
	assert_output 192.168.67.0/24
	settings "NETMEM_ALLOW=any"
	run "$NETMEM" -c "$T/settings" config "$T/nbd.conf"
	assert_success
	run grep -c authfile "$T/nbd.conf"
	assert_output 0
}

@test "netmem-server: prune removes files unwritten for NETMEM_EXPIRE; a full quota takes an expired file's place" {
	settings "NETMEM_SIZE=16M" "NETMEM_CLIENTS=2" "NETMEM_EXPIRE=1h"
	"$NETMEM" -c "$T/settings" config "$T/nbd.conf"
	"$NETMEM" -c "$T/settings" add 10.77.0.11 10.77.0.12
	touch -d '2 hours ago' "$D/10.77.0.11"
	# DHCP gave a new client an address: the quota is full, the expired
	# file makes room
	run "$NETMEM" -c "$T/settings" add 10.77.0.13
	assert_success
	[ ! -e "$D/10.77.0.11" ]
	[ -f "$D/10.77.0.12" ]
	[ -f "$D/10.77.0.13" ]
	touch -d '3 hours ago' "$D/10.77.0.12"
	run "$NETMEM" -c "$T/settings" prune
	assert_success
	assert_output --partial "1 files removed"
	[ ! -e "$D/10.77.0.12" ]
	[ -f "$D/10.77.0.13" ]
	# one in use stays, however old
	touch -d '3 hours ago' "$D/10.77.0.13"
	exec 8<"$D/10.77.0.13"
	run "$NETMEM" -c "$T/settings" prune
	exec 8<&-
	assert_success
	[ -f "$D/10.77.0.13" ]
	settings "NETMEM_EXPIRE=soon"
	run "$NETMEM" -c "$T/settings" prune
	[ "$status" -eq 2 ]
}

@test "netmem-server: NETMEM_SIZE in ramboot's size grammar (1.5G); old spellings read, with one warning" {
	mkdir -p "$D"
	settings "NETMEM_SIZE=1.5G" "NETMEM_CLIENTS=2"
	run --separate-stderr "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	assert_output --partial "of a quota of 3.0GiB"
	settings "NETMEM_SIZE=0.5GiB" "NETMEM_CLIENTS=2"
	run --separate-stderr "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 0 ]
	assert_output --partial "of a quota of 1.0GiB"
	settings "NETMEM_SIZE=512m" "NETMEM_CLIENTS=2"
	run --separate-stderr "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 0 ]
	[ "$stderr" = "ramboot-netmem: NETMEM_SIZE=512m: deprecated spelling, write NETMEM_SIZE=512MiB" ]
	assert_output --partial "of a quota of 1.0GiB"
	settings "NETMEM_SIZE=08M" "NETMEM_CLIENTS=2"
	run "$NETMEM" -c "$T/settings" list
	[ "$status" -eq 0 ]
	assert_output --partial "of a quota of 16.0MiB"
	# a file of that size, made sparse
	settings "NETMEM_SIZE=1.5M" "NETMEM_CLIENTS=2"
	run "$NETMEM" -c "$T/settings" add 10.77.0.9
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$D/10.77.0.9")" = 1572864 ]
}
