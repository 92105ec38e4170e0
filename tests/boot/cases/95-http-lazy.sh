# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/95-http-lazy.sh - a lazy boot over HTTP on the test
# initramfs: nginx on the host (127.0.0.1, the guest's 10.0.2.2 through
# QEMU's user network) serves the image and its manifest; in the
# initramfs `ramboot lazy --background --image=http://...` connects the
# kernel's NBD client to its own server (a socket pair), puts a read-only
# loop device over /dev/nbdN, and the root is mounted from that. The
# copy switches the loop device to RAM; then the host stops nginx and
# the client reads every file of its root again, from RAM. Sourced by
# tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154,SC2034 # the runner's and lib.sh's variables

# hl_nginx DIR PORT [TAG]: nginx serving DIR on 127.0.0.1:PORT, its
# pid in $logs/$name.nginxTAG/nginx.pid
hl_nginx() {
	ng=$logs/$name.nginx${3:-}
	"$top/tests/helpers/nginx-conf.sh" "$ng" "127.0.0.1:$2" "" "root $1;" || return 1
	PATH=$PATH:/usr/sbin nginx -p "$ng" -c "$ng/nginx.conf"
}

# hl_stop_when MARKER: stop nginx once the console shows MARKER
# (hl_stop_when @TAG: nginxTAG once it answered a ranged GET)
hl_stop_when() {
	i=0
	while [ $i -lt $((timeout_s * 10)) ]; do
		if [ "${1#@}" != "$1" ]; then
			if grep -q '" 206 ' "$logs/$name.nginx${1#@}/access.log" 2>/dev/null; then
				kill "$(cat "$logs/$name.nginx${1#@}/nginx.pid")" &&
					echo "# a range served, nginx${1#@} stopped" >> "$logs/$name.qemu"
				return 0
			fi
		elif tr -d '\r' < "$log" 2>/dev/null | grep -q "^$1"; then
			kill "$(cat "$logs/$name.nginx/nginx.pid")" &&
				echo "# $1 seen, nginx stopped" >> "$logs/$name.qemu"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# http-lazy: one server; http-lazy-mirror: two, the first stopped once it
# served its first range (the reads and the copy go on from the second)
http_lazy_case() {
	case_begin "$1"
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
		{ skip "$name" "nginx not installed (tests/deps.sh install)"; return; }
	www=$logs/$name.www
	share=$logs/$name.share
	mkdir -p "$www" "$share"
	cp "$net/x86_64.img" "$www/x86_64.img"
	"${RAMBOOT_BIN:-$top/ramboot}" manifest --chunk-size=256KiB "$www/x86_64.img" \
		> "$www/x86_64.img.manifest" 2> "$logs/$name.manifest"
	port=$((20000 + ($$ + 7) % 20000))
	if ! hl_nginx "$www" "$port"; then
		skip "$name" "nginx did not start: $(tail -n 1 "$logs/$name.nginx/error.log")"
		return
	fi
	url=http://10.0.2.2:$port/x86_64.img
	mirror=
	if [ "$name" = http-lazy-mirror ]; then
		mirror=$((port + 1))
		hl_nginx "$www" "$mirror" 2 || { skip "$name" "the second nginx did not start"; return; }
		url=http://10.0.2.2:$mirror/x86_64.img,$url
		hl_stop_when @2 &
		stopper2=$!
	fi
	# Before `ramboot boot`: the lazy server, and the root from its loop
	# device (the init mounts $root).
	cat > "$share/pre.sh" <<'PRE'
url=$(cmdarg rbtest.url "")
if ramboot lazy --background -v --image="$url"; then
	root=$(sed -n 's/^loop=//p' /run/ramboot/lazy)
	say "root from $root, served over HTTP"
else
	say "ramboot lazy over HTTP failed"
fi
PRE
	# After the switch (client-init, rbtest.share=1): the host stops
	# nginx; once it is gone, every file is read again from RAM.
	cat > "$share/case.sh" <<'CASE'
loop=$(sed -n 's/^loop=//p' /run/ramboot/lazy)
echo "RBTEST http-backing=$(cat "/sys/block/${loop#/dev/}/loop/backing_file" 2>/dev/null)"
url=$(sed -n 's/^image=//p' /run/ramboot/lazy)
url=${url##*,}
wget -q -O /dev/null "$url" 2>/dev/null && echo "RBTEST http-wget-before=ok"
echo "RBTEST http-stop-nginx"
n=0
while [ $n -lt 600 ] && wget -q -O /dev/null "$url" 2>/dev/null; do
	sleep 0.1
	n=$((n + 1))
done
echo "RBTEST http-nginx-gone=$n"
sync
echo 3 > /proc/sys/vm/drop_caches
if find / -xdev -type f -exec cat {} + >/dev/null 2>&1; then
	echo "RBTEST http-read-after-stop=ok"
else
	echo "RBTEST http-read-after-stop=failed"
fi
n=0
while [ $n -lt 100 ] && [ -n "$(cat /sys/block/nbd0/pid 2>/dev/null)" ]; do
	sleep 0.1
	n=$((n + 1))
done
echo "RBTEST http-nbd0-pid=$(cat /sys/block/nbd0/pid 2>/dev/null)"
sed 's/^/RBTEST http-lazy-log /' /run/ramboot/lazy.log 2>/dev/null
CASE
	: > "$logs/$name.log"
	hl_stop_when "RBTEST http-stop-nginx" &
	stopper=$!
	boot_extra="-virtfs local,path=$share,mount_tag=rbshare,security_model=none,readonly=on -netdev user,id=n0 -device virtio-net-pci,netdev=n0"
	boot "$name" 9p "rbtest.ip=10.0.2.15/24 rbtest.pre=1 rbtest.share=1 rbtest.url=$url"
	boot_extra=
	kill "$stopper" ${mirror:+"$stopper2"} 2>/dev/null
	wait "$stopper" ${mirror:+"$stopper2"} 2>/dev/null
	for f in "$logs/$name".nginx*/nginx.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	expect_done && {
		grep -q '^RBTEST root-source=network /dev/loop[0-9]*$' "$log.txt" ||
			fail "the root is not the lazy server's loop device: $(grep '^RBTEST root-source' "$log.txt")"
		expect_lazy state switched
		expect_lazy sha256 "$img_sha"
		expect_lazy hash ok
		grep -q '^RBTEST http-backing=/run/ramboot/ram/x86_64.img$' "$log.txt" ||
			fail "the loop device is not backed by the RAM copy: $(grep '^RBTEST http-backing' "$log.txt")"
		# the guest reached nginx, then saw it gone
		grep -q '^RBTEST http-wget-before=ok$' "$log.txt" ||
			fail "the guest could not reach nginx with wget"
		case $(sed -n 's/^RBTEST http-nginx-gone=//p' "$log.txt") in
		'' | 600) fail "nginx was not stopped" ;;
		esac
		grep -q '^RBTEST http-read-after-stop=ok$' "$log.txt" ||
			fail "reading the root with nginx stopped failed"
		grep -q '^RBTEST http-nbd0-pid=$' "$log.txt" ||
			fail "the NBD device is still connected: $(grep '^RBTEST http-nbd0-pid' "$log.txt")"
		if [ -n "$mirror" ]; then
			grep -q "stopped" "$logs/$name.qemu" || fail "the first server was not stopped"
			grep -q '" 206 ' "$logs/$name.nginx/access.log" ||
				fail "no range came from the second server"
		else
			grep -q 'GET /x86_64.img.manifest' "$logs/$name.nginx/access.log" ||
				fail "the manifest was not fetched from nginx"
		fi
	}
	result "$name"
}
