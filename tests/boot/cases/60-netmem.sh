# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/60-netmem.sh - the network memory tier (ramboot.swap.net=).
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

# netmem_monitor_when MARKER COMMAND: in the background of a boot with a
# monitor, one more COMMAND to it when the console shows MARKER (boot()'s
# monitor_when sends the first and drains the answers).
netmem_monitor_when() {
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if tr -d '\r' < "$log" 2>/dev/null | grep -q "^$1"; then
			echo "# $(cut -d' ' -f1 /proc/uptime): $1 seen, sending: $2" >> "$logs/$name.mon.log"
			# shellcheck disable=SC2016 # expanded by that sh
			timeout 5 sh -c 'printf "%s\n" "$1" > "$2"' sh "$2" "$logs/$name.mon.in"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# The second half of the netmem boot: the cut link, the half-way set-up,
# the teardown (see netmem_case). The numbers go to the TAP output.
netmem_cut_checks() {
	line() { grep "^RBTEST $1" "$log.txt" | head -n 1; }
	grep -q 'set_link n0 off' "$logs/$name.mon.log" || fail "the link was never cut"
	grep -q 'set_link n0 on' "$logs/$name.mon.log" || fail "the link was never restored"
	line netmem-cut-lost=seen > /dev/null || fail "the report never said lost after the cut"
	grep -q '^RBTEST netmem-record pid=[0-9]* start=[1-9][0-9]* zram=[0-9]* nbd=[0-9]* $' "$log.txt" ||
		fail "no record of the tier: $(line netmem-record)"
	if grep -q 'swap --off cannot find the process' "$log.txt"; then
		fail "the tier's record was not written"
	fi
	grep -q '^RBTEST netmem-cut-status swap_net_state=lost$' "$log.txt" ||
		fail "ramboot status did not say lost during the cut: $(line netmem-cut-status)"
	# SIGBUS: the read of a page on the unreachable server failed
	grep -q '^RBTEST netmem-cut-victim exit=135 ' "$log.txt" ||
		fail "the process touching pages on the server did not get SIGBUS: $(line netmem-cut-victim)"
	grep -q '^RBTEST netmem-cut-heartbeat=[1-9]' "$log.txt" ||
		fail "nothing else ran during the cut: $(line netmem-cut-heartbeat)"
	grep -q '^RBTEST netmem-daemon-after-cut=alive$' "$log.txt" ||
		fail "the policy process died in the cut"
	line netmem-cut-reconnected=seen > /dev/null || fail "the tier did not reconnect after the cut"
	grep -q '^RBTEST netmem-half rc=0 dev=/dev/zram' "$log.txt" ||
		fail "the half-way tier did not leave zram alone: $(line netmem-half)"
	if [ "$(grep -c '^RBTEST netmem-half-err .*\(warning\|error\): ' "$log.txt")" != 1 ] ||
		! grep -q '^RBTEST netmem-half-err ramboot: swap: warning: network memory .*dm-crypt: .*; zram alone$' "$log.txt"; then
		fail "the half-way tier did not say one warning line: $(grep '^RBTEST netmem-half-err' "$log.txt")"
	fi
	grep -q '^RBTEST netmem-half-backing=none$' "$log.txt" ||
		fail "the half-way tier left a backing device: $(line netmem-half-backing)"
	[ "$(sed -n 's/^RBTEST netmem-half-nbd-after=//p' "$log.txt")" = \
		"$(sed -n 's/^RBTEST netmem-half-nbd-before=//p' "$log.txt")" ] ||
		fail "the half-way tier left an NBD connection: $(line netmem-half-nbd)"
	grep -q '^RBTEST netmem-off rc=0$' "$log.txt" ||
		fail "swap --off failed: $(line netmem-off); $(grep '^RBTEST netmem-off-out' "$log.txt")"
	grep -q '^RBTEST netmem-off-mapper=gone dm=0$' "$log.txt" ||
		fail "swap --off left the mapping: $(line netmem-off-mapper)"
	grep -q '^RBTEST netmem-off-nbd=$' "$log.txt" ||
		fail "swap --off left an NBD connection: $(line netmem-off-nbd)"
	grep -q '^RBTEST netmem-off-swaps=0$' "$log.txt" || fail "swap --off left swap: $(line netmem-off-swaps)"
	grep -q '^RBTEST netmem-off-zram=gone$' "$log.txt" || fail "swap --off left the zram device"
	grep -q '^RBTEST netmem-off-daemon=gone$' "$log.txt" ||
		fail "swap --off left the policy process: $(line netmem-off-daemon)"
	grep -q '^RBTEST netmem-off-record=gone$' "$log.txt" || fail "swap --off left its record"
	grep -q '^RBTEST netmem-off-state=off$' "$log.txt" || fail "the report does not say off: $(line netmem-off-state)"
	# SigIgn: SIGPIPE is bit 12 (a write to a closed pipe fails, no signal)
	sigign=$(sed -n 's/^RBTEST netmem-daemon-sigign=\([0-9a-f]*\) .*/\1/p' "$log.txt")
	[ $((0x${sigign:-0} >> 12 & 1)) = 1 ] || fail "the policy process does not ignore SIGPIPE: $(line netmem-daemon-sigign)"
	grep -q '^RBTEST netmem-again rc=0 dev=/dev/zram' "$log.txt" ||
		fail "the tier started with stderr closed failed: $(line 'netmem-again ')"
	grep -q '^RBTEST netmem-again-daemon=alive state=connected ' "$log.txt" ||
		fail "the tier's process started with stderr closed did not live on: $(line netmem-again-daemon)"
	grep -q '^RBTEST netmem-again-off rc=0 nbd= mapper=gone state=off$' "$log.txt" ||
		fail "the second tier did not go with --off: $(line netmem-again-off); $(grep '^RBTEST netmem-again-off-out' "$log.txt")"
	grep '^RBTEST netmem-cut-\|^RBTEST netmem-daemon-sigign' "$log.txt" | grep -v victim-out | diag
}

# netmem: the network memory tier. A 256 MiB client with
# ramboot.swap.net= pointing at qemu-nbd on the host (127.0.0.1, which
# QEMU's user network shows the guest as 10.0.2.2), serving a sparse
# file. The guest (tests/boot/netmem-guest.sh, from a share of its own)
# fills most of its memory with pages of a marker text and waits
# until the tier wrote some back to the server. The host then kills the
# server and starts it again; the tier connects again, and the guest
# reads every page back and verifies it. The file on the host must hold
# data, and no marker: the pages went through dm-crypt.
#
# The same boot then cuts the link (QEMU's monitor: set_link n0 off, when
# the guest prints `RBTEST netmem-cut-link`): a process whose pages are on
# the server touches them and must get an error after the timeout, a
# heartbeat must go on, the report and `ramboot status` must say lost.
# The link comes back (`RBTEST netmem-link-restore`), the tier must
# reconnect; a second tier set up while the first holds the mapping's
# name must fail half-way and undo its NBD connection (zram alone, one
# warning); `ramboot swap --off` must take the first tier down: no
# mapping, no NBD connection, no swap, no policy process. A tier started
# again with stderr closed must run on and go with --off too.
netmem_case() {
	case_begin "$1"
	command -v qemu-nbd >/dev/null || { skip "$name" "qemu-nbd not installed (qemu-utils)"; return; }
	command -v cc >/dev/null || { skip "$name" "no C compiler for the workload"; return; }
	share=$logs/$name.share
	mkdir -p "$share"
	if ! cc -O2 -static -o "$share/dochog" tests/fixtures/swap/dochog.c 2> "$logs/$name.cc"; then
		skip "$name" "cannot build a static dochog: $(tail -n 1 "$logs/$name.cc")"
		return
	fi
	cp tests/boot/netmem-guest.sh "$share/case.sh"
	store=$logs/$name.img
	rm -f "$store"
	truncate -s 512M "$store"
	# Under TCG the workload alone takes minutes.
	timeout_saved=$timeout_s
	timeout_s=$((timeout_s * 9))
	port=$((20000 + ($$ + 1) % 20000))
	# --shared: the tier's reconnection may come before the server saw
	# the old connection close (a cut link), and the half-way tier is a
	# second client.
	netmem_serve() {
		qemu-nbd --persistent --shared=4 --format=raw --cache=writeback --bind=127.0.0.1 --port="$port" \
			--export-name=swap "$store" >> "$logs/$name.nbd" 2>&1 &
		echo $! > "$logs/$name.nbd.pid"
	}
	: > "$logs/$name.nbd"
	netmem_serve
	nbd_pid=$(cat "$logs/$name.nbd.pid")
	: > "$logs/$name.log"
	# Once pages are on the server: kill it, and start it again 3 s later.
	(
		nbd_cut_when "RBTEST netmem-ready-to-cut" && sleep 3 && netmem_serve &&
			echo "# $(cut -d' ' -f1 /proc/uptime): server started again" >> "$logs/$name.nbd"
	) &
	cutter=$!
	netmem_monitor_when "RBTEST netmem-link-restore" "set_link n0 on" &
	restorer=$!
	mem_saved=$mem
	mem=256
	boot_extra="-virtfs local,path=$share,mount_tag=rbshare,security_model=none,readonly=on -netdev user,id=n0 -device virtio-net-pci,netdev=n0"
	boot "$name" 9p "rbtest.ip=10.0.2.15/24 rbtest.share=1 ramboot=off ramboot.swap.net=10.0.2.2:$port,idle=15,period=2,rate=64MiB/s" \
		"RBTEST netmem-cut-link" "set_link n0 off"
	boot_extra=
	mem=$mem_saved
	timeout_s=$timeout_saved
	kill "$cutter" "$restorer" 2>/dev/null
	wait "$cutter" 2>/dev/null
	wait "$restorer" 2>/dev/null
	kill "$nbd_pid" "$(cat "$logs/$name.nbd.pid")" 2>/dev/null
	wait "$nbd_pid" 2>/dev/null
	expect_done && {
		expect swap_net "10.0.2.2:$port"
		# the report after the guest's swap --off
		expect swap_net_state off
		expect_like swap_device "/dev/zram*"
		grep -q '^RBTEST netmem-backing=/dev/mapper/ramboot-netmem$' "$log.txt" ||
			fail "zram's backing device is not the crypt mapping: $(grep '^RBTEST netmem-backing' "$log.txt")"
		# init moved into init.scope after the tier started: the tier's
		# process keeps its memory out of swap
		grep -q '^RBTEST netmem-pid1-cgroup=/init.scope swap.max-new=max$' "$log.txt" ||
			fail "init not in a new init.scope: $(grep '^RBTEST netmem-pid1-cgroup' "$log.txt")"
		grep -q '^RBTEST netmem-pid1 swap.max=0 report=protected$' "$log.txt" ||
			fail "init's cgroup is not kept out of swap: $(grep '^RBTEST netmem-pid1' "$log.txt")"
		grep -q '^RBTEST netmem-cut-status swap_net_pid1=protected$' "$log.txt" ||
			fail "ramboot status does not say init is protected: $(grep '^RBTEST netmem-cut-status swap_net_pid1' "$log.txt")"
		grep '^RBTEST netmem-pid1' "$log.txt" | diag
		grep -q "^RBTEST netmem-loaded=18\$" "$log.txt" ||
			fail "the workload did not load all its documents: $(grep '^RBTEST netmem-load' "$log.txt")"
		before=$(sed -n 's/^RBTEST netmem-bd-before=//p' "$log.txt")
		after=$(sed -n 's/^RBTEST netmem-bd-after=//p' "$log.txt")
		# shellcheck disable=SC2086 # bd_count bd_reads bd_writes
		set -- $before 0 0 0
		[ "$1" -ge 1024 ] || fail "fewer than 1024 pages on the network before the re-read: bd_stat '$before'"
		# shellcheck disable=SC2086
		set -- $after 0 0 0
		[ "$2" -gt 0 ] || fail "no page was read back from the network: bd_stat '$after'"
		grep -q "^# .*server killed" "$logs/$name.nbd" ||
			fail "the NBD server was never killed"
		# The tier's own word for each outage (the server killed, the
		# link cut), from the kernel log: the guest's shell may itself
		# wait on a page on the server and miss a short `lost` in the
		# report (RBTEST netmem-lost=seen, when it saw one).
		[ "$(grep -c '^RBTEST ramboot-kmsg .*: network memory .*: connection lost; reconnecting$' "$log.txt")" -ge 2 ] ||
			fail "the tier did not see both outages: $(grep '^RBTEST ramboot-kmsg .*network memory' "$log.txt")"
		[ "$(grep -c '^RBTEST ramboot-kmsg .*: network memory .*: reconnected$' "$log.txt")" -ge 2 ] ||
			fail "the tier did not connect again after both outages: $(grep '^RBTEST ramboot-kmsg .*network memory' "$log.txt")"
		grep -q '^RBTEST netmem-reconnected=seen$' "$log.txt" ||
			fail "the tier did not connect again to the restarted server"
		grep -q '^RBTEST netmem-dochog-exit=0$' "$log.txt" ||
			fail "the workload failed: $(grep '^RBTEST netmem-dochog' "$log.txt" | tail -n 3)"
		grep -q '^RBTEST netmem-dochog verified 18$' "$log.txt" ||
			fail "the workload did not verify its pages"
		# The counts as `ramboot status` showed them in the cut: the
		# report at the end is of the tier started again after --off.
		for k in pages bytes_written bytes_read; do
			grep -q "^RBTEST netmem-cut-status swap_net_$k=[1-9]" "$log.txt" ||
				fail "ramboot status did not count swap_net_$k: $(grep "^RBTEST netmem-cut-status swap_net_$k=" "$log.txt")"
		done
		grep -q '^RBTEST netmem-daemon pid=[0-9]* VmLck: [1-9][0-9]\{0,3\} kB$' "$log.txt" ||
			fail "no ramboot process out of the OOM killer's reach with at most 9999 kB locked: $(grep '^RBTEST netmem-daemon' "$log.txt")"
		grep -q '^RBTEST netmem-cut-status swap_net_bytes_written=[1-9][0-9]* (' "$log.txt" ||
			fail "ramboot status does not show the bytes written to the network"
		used=$(du -k "$store" | cut -f1)
		[ "${used:-0}" -ge 4096 ] || fail "the server's file holds $used KiB, expected the pages"
		if grep -aq 'RBTEST-NETMEM-MARKER' "$store"; then
			fail "the server's file holds the marker in plain text"
		fi
		netmem_cut_checks
	}
	rm -f "$store"
	result "$name"
}
