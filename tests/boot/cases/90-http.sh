# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/90-http.sh - ramboot.url=: the image over HTTP, with the
# real LTSP code (ltsp.img, the shipped hook) on Debian's initrd: http-ram
# (boot=ramboot: no NFS, no NBD, no disk; the root is the RAM copy),
# http-lazy-ltsp (ramboot=lazy: LTSP mounts the copier's loop device on
# its NBD server, switched to RAM),
# http-mirror (the first of two mirrors stopped while the guest copies)
# and http-nohash (a manifest without chunk hashes: the fallback to the
# network image, one line).
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

# The web server is the host's nginx on 127.0.0.1, started by the case;
# QEMU's user network (-nic user) shows the host's 127.0.0.1 to the guest
# as 10.0.2.2, and gives the guest its address by DHCP (ip=dhcp: the
# hook's configure_networking). ltsp.img is LTSP's setup's one again, with
# ramboot's part of `ltsp initrd` (50-ramboot-initrd.sh, which puts the
# boot=ramboot script into it) in /usr/share/ltsp only while it runs.
# 1 GiB of RAM: a stream whose format is not known before it comes is
# planned with the largest decoder's memory (load's memory rule).

# http_nginx DIR [RATE]: nginx serving DIR on 127.0.0.1 (its port in
# $hport, its directory $hn), each answer at RATE (limit_rate) when given
http_nginx() {
	hn=$(mktemp -d "$lt/nginx.XXXXXX")
	hport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$top/tests/helpers/nginx-conf.sh" "$hn" "127.0.0.1:$hport" "" "root $1; ${2:+limit_rate $2;}" ||
		{ fail "nginx-conf.sh failed"; return 1; }
	nginx -p "$hn" -c "$hn/nginx.conf" || { fail "nginx did not start: $(cat "$hn/error.log")"; return 1; }
	for _ in $(seq 100); do
		[ -s "$hn/nginx.pid" ] && python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
			"$hport" 2>/dev/null && { http_pids="$http_pids $hn/nginx.pid"; return 0; }
		sleep 0.1
	done
	fail "nginx does not listen on 127.0.0.1:$hport"
	return 1
}

# http_stop: every nginx of the case ended
http_pids=
http_stop() {
	for p in $http_pids; do
		[ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	http_pids=
}

http_setup() {
	ltsp_setup_once || return 1
	command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
	command -v nginx >/dev/null || { fail "nginx not installed (tests/deps.sh install)"; return 1; }
	ht=$lt/http
	rm -rf "$ht"
	mkdir -p "$ht/srv/v1"
	cp "$net/x86_64.img" "$ht/srv/x86_64.img"
	"$rbtool" manifest -o "$ht/srv/x86_64.img.manifest" "$ht/srv/x86_64.img" >> "$lt/setup.log" 2>&1 ||
		{ fail "ramboot manifest failed"; return 1; }
	grep -q '^chunk ' "$ht/srv/x86_64.img.manifest" || { fail "the manifest has no chunk hashes"; return 1; }
	cp "$net/x86_64.img" "$ht/srv/v1/x86_64.img"
	"$rbtool" manifest --chunk-size=0 -o "$ht/srv/v1/x86_64.img.manifest" "$ht/srv/v1/x86_64.img" \
		>> "$lt/setup.log" 2>&1 || { fail "ramboot manifest --chunk-size=0 failed"; return 1; }
	# ltsp.img with ramboot's part of `ltsp initrd`, as the package installs it.
	hd=/usr/share/ltsp/common/initrd/50-ramboot-initrd.sh
	[ -f "$lt/destdir$hd" ] || { fail "make install did not write $hd"; return 1; }
	hsaved=
	[ -e "$hd" ] && { mv "$hd" "$lt/50-ramboot-initrd.saved"; hsaved=1; }
	cp "$lt/destdir$hd" "$hd"
	ltsp_initrd "$lt/destdir/etc/ltsp/ramboot" "$ht/tftp"
	hrc=$?
	rm -f "$hd"
	[ -z "$hsaved" ] || mv "$lt/50-ramboot-initrd.saved" "$hd"
	[ "$hrc" = 0 ] || { fail "ltsp initrd failed: $(tail -n 3 "$lt/setup.log")"; return 1; }
	cpio -it < "$ht/tftp/ltsp/ltsp.img" 2>/dev/null | grep -Eqx '(\./)?scripts/ramboot' ||
		{ fail "ltsp.img has no scripts/ramboot (boot=ramboot)"; return 1; }
	# No zz-net.cpio: the guest has a NIC.
	cat "$ht/tftp/ltsp/ltsp.img" "$deb_initrd" > "$ht/initrd.combined"
	return 0
}

# expect_one_warning TEXT: the console has exactly one line of ramboot's
# warnings, and it holds TEXT
expect_one_warning() {
	hw=$(grep -c '^ramboot: boot: warning: ' "$log.txt")
	[ "$hw" = 1 ] || fail "$hw warning lines of ramboot boot on the console, expected 1"
	grep '^ramboot: boot: warning: ' "$log.txt" | grep -qF "$1" ||
		fail "the warning does not say '$1'"
}

# http_stop_at MARKER DIR: the nginx of DIR stopped once a console line
# begins with MARKER, said in $logs/$name.http
http_stop_at() {
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if tr -d '\r' < "$logs/$name.log" 2>/dev/null | grep -q "^$1"; then
			kill "$(cat "$2/nginx.pid")" &&
				echo "# $(cut -d' ' -f1 /proc/uptime): $1 seen, nginx stopped" >> "$logs/$name.http"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# http_case NAME: http-ram, http-mirror or http-nohash
http_case() {
	ltsp_begin "$1" || return
	if ! once http; then
		result "$name"
		return
	fi
	if [ "$name" = http-mirror ] && ! "$rbtool" load --help 2>&1 | grep -q -- '--mirror'; then
		skip "$name" "the loader takes no mirrors yet (ramboot load --mirror)"
		return
	fi
	trap 'http_stop; boot_cleanup' EXIT
	trap 'http_stop; exit 130' INT TERM
	nic="-nic user,model=virtio-net-pci"
	case $name in
	http-ram)
		http_nginx "$ht/srv" || { http_stop; result "$name"; return; }
		url=http://10.0.2.2:$hport/x86_64.img
		# No root= and no disk: no NFS, no NBD; LTSP mounts the RAM copy.
		boot_debian "$name" "$ht/initrd.combined" 1024 \
			"boot=ramboot ip=dhcp init=/sbin/rbtest-init ramboot=ram ramboot.url=$url" "" "$nic"
		http_stop
		ltsp_booted
		grep -q 'bringing the network up for ramboot.url=' "$log.txt" ||
			fail "the hook did not bring the network up"
		expect_done || { result "$name"; return; }
		expect mode_asked ram
		expect source "$url"
		expect source_used http
		expect verify hash
		expect fstype squashfs
		expect_set chunks
		expect_ltsp_copy
		grep -q "^RBTEST loop loop[0-9]*=$ram\$" "$log.txt" ||
			fail "no loop device is backed by the RAM copy $ram"
		grep -q "GET /x86_64.img.manifest " "$hn/access.log" || fail "the manifest was not fetched"
		;;
	http-mirror)
		# The first mirror at 2 MB/s, stopped once the copy began; the
		# second at full speed.
		http_nginx "$ht/srv" 2m || { http_stop; result "$name"; return; }
		slow=$hn
		url1=http://10.0.2.2:$hport/x86_64.img
		http_nginx "$ht/srv" || { http_stop; result "$name"; return; }
		fast=$hn
		url2=http://10.0.2.2:$hport/x86_64.img
		http_stop_at 'ramboot: boot: copying ' "$slow" &
		watch=$!
		boot_debian "$name" "$ht/initrd.combined" 1024 \
			"boot=ramboot ip=dhcp init=/sbin/rbtest-init ramboot=ram ramboot.url=$url1,$url2" "" "$nic"
		kill "$watch" 2>/dev/null
		wait "$watch" 2>/dev/null
		http_stop
		ltsp_booted
		grep -q 'nginx stopped' "$logs/$name.http" 2>/dev/null ||
			fail "the first mirror was not stopped during the copy"
		expect_done || { result "$name"; return; }
		expect source "$url1"
		expect_ltsp_copy
		grep -q 'GET /x86_64.img ' "$fast/access.log" || fail "the second mirror served no part of the image"
		;;
	http-lazy-ltsp)
		# ramboot=lazy: LTSP mounts the loop device the copier put on
		# its own NBD server, which the copy then switches to RAM. Over
		# HTTP the copy is a tmpfs file, though zram is asked for. Once
		# switched, the guest says so (rbtest.cut), nginx is stopped
		# here, and the guest reads every file of its root again (its
		# probe of /dev/nbd0, which reads nothing once disconnected,
		# ends at its bound first).
		http_nginx "$ht/srv" || { http_stop; result "$name"; return; }
		url=http://10.0.2.2:$hport/x86_64.img
		http_stop_at "RBTEST lazy-ready-to-cut" "$hn" &
		watch=$!
		boot_debian "$name" "$ht/initrd.combined" 1024 \
			"boot=ramboot ip=dhcp init=/sbin/rbtest-init ramboot=lazy ramboot.target=zram ramboot.url=$url rbtest.cut=/dev/nbd0" "" "$nic"
		kill "$watch" 2>/dev/null
		wait "$watch" 2>/dev/null
		http_stop
		ltsp_booted
		expect_done || { result "$name"; return; }
		expect_lazy_switched
		expect source "$url"
		expect target tmpfs
		expect_lazy copy /run/ramboot/ram/x86_64.img
		grep -q '" 206 ' "$hn/access.log" || fail "no range of the image was served"
		grep -q 'nginx stopped' "$logs/$name.http" 2>/dev/null ||
			fail "nginx was not stopped once the copy switched"
		;;
	http-nohash)
		# A version 1 manifest (no chunk hashes): refused, LTSP mounts the
		# network image (the disk) as without ramboot.
		http_nginx "$ht/srv" || { http_stop; result "$name"; return; }
		url=http://10.0.2.2:$hport/v1/x86_64.img
		boot_debian "$name" "$ht/initrd.combined" 1024 \
			"root=/dev/vda ltsp.image=images/x86_64.img ip=dhcp init=/sbin/rbtest-init ramboot=ram ramboot.url=$url" \
			"file=$lt/disk.ext4,if=virtio,format=raw,throttling.bps-total=125000000" "$nic"
		http_stop
		ltsp_booted
		expect_done || { result "$name"; return; }
		expect mode_asked ram
		expect_not mode_done ram
		expect source "$url"
		expect fallback "bad manifest"
		expect_like error "*needs a manifest with chunk hashes*"
		expect ram_path ""
		expect_one_warning "bad manifest: "
		grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
			fail "LTSP did not mount the network image"
		expect_no_leftover
		;;
	esac
	trap boot_cleanup EXIT
	trap - INT TERM
	result "$name"
}
