# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/96-http-cache.sh - ramboot.cache= refreshed over HTTP
# (ramboot.url=), with the real LTSP code (ltsp.img, the shipped hook) on
# Debian's initrd: the web server is the host's nginx serving a directory
# `ramboot publish --cindex --content-addressed` wrote, as an LTSP server
# serves /srv/ltsp/images (docs/http.md).
# Sourced by tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables
#
#   http-cache-cold     an empty cache, the server's image v1: a miss;
#                       LTSP mounts the network image (the server disk)
#                       and the refresh behind the boot fetches the
#                       image over HTTP into slot a, every byte of it
#                       once, by ranges of its content-addressed name
#   http-cache-update   v2 published (the same root with /etc/rbtest-id
#                       changed), the server disk holding v2: the client
#                       runs v2; the refresh reads only the manifest, the
#                       index and the chunks slot a does not hold, far
#                       less than the image, into slot b, which becomes
#                       the active one and holds v2
#
# Over HTTP there is no loop device over a file of the image for the
# refresh to switch the running root onto: the new slot is used from the
# next boot (docs/cache.md, "Over HTTP"); a hit is ltsp-cache-hot's.
# The guest's network is QEMU's user network (90-http.sh); each boot has
# an nginx of its own, whose access log gives each request's method,
# path, status and body bytes.

hc_args="ramboot=cache ramboot.cache=LABEL=ramboot-cache"

# hc_cmd SUBCOMMAND ARG...: `ramboot cache SUBCOMMAND` on the cache disk
hc_cmd() { cache_do "$hdisk" "$@"; }

# hc_status: `ramboot cache status` of x86_64.img into $hc/status;
# hc_stat KEY: a value from it
hc_status() { hc_cmd status x86_64.img > "$hc/status" 2>&1; }
hc_stat() { sed -n "s/^$1: //p" "$hc/status" 2>/dev/null | head -n 1 | sed "s/ (.*)$//"; }

# hc_init: a new, empty cache on the disk
hc_init() {
	rm -f "$hdisk"
	truncate -s 64M "$hdisk" || return 1
	hc_cmd init >> "$hc/setup.log" 2>&1
}

# hc_publish IMAGE: IMAGE becomes the server's x86_64.img (a new file, as
# `ltsp image` writes it), published; its content-addressed name in $hcname
hc_publish() {
	if ! cp "$1" "$hc/www/.new" || ! mv "$hc/www/.new" "$hc/www/x86_64.img" ||
		! "$rbtool" publish --cindex --content-addressed "$hc/www/x86_64.img" >> "$hc/setup.log" 2>&1; then
		fail "ramboot publish --cindex --content-addressed failed: $(tail -n 3 "$hc/setup.log")"
		return 1
	fi
	hcname=$(sed -n 's/^image //p' "$hc/www/x86_64.img.manifest")
	case $hcname in
	x86_64.img.sha256-????????????????) ;;
	*) fail "the manifest names the image '$hcname', not its content-addressed name"; return 1 ;;
	esac
}

# hc_disk IMAGE DISK: DISK is an LTSP server disk holding IMAGE as
# images/x86_64.img
hc_disk() {
	rm -rf "$hc/srv"
	mkdir -p "$hc/srv/images"
	cp "$1" "$hc/srv/images/x86_64.img"
	mkfs.ext4 -q -F -L ltsp-srv -d "$hc/srv" "$2" 64M >> "$hc/setup.log" 2>&1 ||
		{ fail "mkfs.ext4 -d failed"; return 1; }
	rm -rf "$hc/srv"
}

httpcache_setup() {
	once http || return 1
	hc=$lt/httpcache
	hdisk=$hc/cache.img
	for t in debugfs unsquashfs; do
		command -v $t >/dev/null || { fail "$t not installed (tests/deps.sh install)"; return 1; }
	done
	rm -rf "$hc"
	mkdir -p "$hc/www"
	: > "$hc/setup.log"
	cp "$net/x86_64.img" "$hc/v1.img"
	cp -a "$cache/root" "$hc/root2"
	echo "rbtest-http-cache v2" >> "$hc/root2/etc/rbtest-id"
	mksquashfs "$hc/root2" "$hc/v2.img" -noappend -quiet -all-root -no-progress \
		>> "$hc/setup.log" 2>&1 || { fail "mksquashfs of the rebuilt root failed"; return 1; }
	rm -rf "$hc/root2"
	hv1_size=$(stat -c %s "$hc/v1.img")
	hv2_size=$(stat -c %s "$hc/v2.img")
	hv1_sha=$(sha256sum < "$hc/v1.img" | cut -d' ' -f1)
	hv2_sha=$(sha256sum < "$hc/v2.img" | cut -d' ' -f1)
	hc_disk "$hc/v1.img" "$hc/srv1.ext4" && hc_disk "$hc/v2.img" "$hc/srv2.ext4" || return 1
	hc_publish "$hc/v1.img" || return 1
	hc_init || { fail "ramboot cache init through a loop device failed: $(tail -n 3 "$hc/setup.log")"; return 1; }
	return 0
}

# hc_requests: nginx's access log of the boot, one line per request:
# METHOD PATH STATUS BODY-BYTES "RANGE"; hc_bytes [PATH]: the body bytes
# nginx sent (of PATH)
hc_requests() { cat "$hn/access.log" 2>/dev/null; }
hc_bytes() { hc_requests | awk -v p="${1:-}" 'p == "" || $2 == p { s += $4 } END { print s + 0 }'; }

# expect_hc_refreshed GENERATION SLOT SHA SIZE: the refresh behind the boot
# committed SLOT over HTTP, in the report and in the cache on the disk;
# the running root was not switched onto it (no file of the image)
expect_hc_refreshed() {
	expect cache refreshed
	expect cache_error ""
	expect cache_generation "$1"
	expect cache_slot "$2"
	expect_set cache_bytes_network
	expect cache_switched ""
	expect_like cache_switch_error "*the image is read over HTTP*"
	hc_status
	[ "$(hc_stat state)" = ok ] || fail "cache status: state '$(hc_stat state)': $(tail -n 2 "$hc/status")"
	[ "$(hc_stat generation)" = "$1" ] || fail "cache status: generation '$(hc_stat generation)', expected $1"
	[ "$(hc_stat active)" = "$2" ] || fail "cache status: active '$(hc_stat active)', expected $2"
	[ "$(hc_stat sha256)" = "$3" ] || fail "cache status: sha256 '$(hc_stat sha256)', expected $3"
	[ "$(hc_stat size)" = "$4" ] || fail "cache status: size '$(hc_stat size)', expected $4"
	[ "$(hc_stat interrupted)" = no ] || fail "cache status: interrupted '$(hc_stat interrupted)'"
	# Every byte of the image came by range from its content-addressed
	# name (answered 206), never from the name a rebuild replaces.
	[ "$(hc_bytes "/$hcname")" = "$(report cache_bytes_network)" ] ||
		fail "nginx sent $(hc_bytes "/$hcname") bytes of /$hcname, the report says cache_bytes_network=$(report cache_bytes_network)"
	hc_requests | awk -v p="/$hcname" '$2 == p && $1 == "GET" && $3 != 206 { bad = 1 } END { exit bad }' ||
		fail "a GET of /$hcname was not answered by a range: $(hc_requests | grep " /$hcname ")"
	! hc_requests | grep -q '^[A-Z]* /x86_64\.img ' || fail "the image was read by its plain name"
	hc_requests | grep -q '^GET /x86_64\.img\.manifest 200 ' || fail "the manifest was not fetched"
	hc_requests | grep -q '^GET /x86_64\.img\.cindex-[0-9a-f]\{16\} 200 ' || fail "the chunk index was not fetched"
}

# hc_prepare: the cache and the server as the case starts from; $srv,
# the LTSP server disk of the boot, and $gen0, the cache's generation
hc_prepare() {
	case $name in
	http-cache-cold)
		hc_init || { fail "ramboot cache init failed: $(tail -n 3 "$hc/setup.log")"; return 1; }
		srv=$hc/srv1.ext4 ;;
	http-cache-update)
		# The cache holds v1 (http-cache-cold left it so; alone, a
		# refresh on the host from the server's v1 files), then v2 is
		# published.
		hc_status
		if [ "$(hc_stat state)" != ok ] || [ "$(hc_stat sha256)" != "$hv1_sha" ]; then
			if ! hc_init || ! hc_cmd refresh --manifest="$hc/www/x86_64.img.manifest" \
				--name=x86_64.img "$hc/www/$hcname" >> "$hc/setup.log" 2>&1; then
				fail "ramboot cache refresh on the host failed: $(tail -n 2 "$hc/setup.log")"
				return 1
			fi
		fi
		hc_publish "$hc/v2.img" || return 1
		srv=$hc/srv2.ext4 ;;
	esac
	hc_status
	gen0=$(hc_stat generation)
	# shellcheck disable=SC2016,SC2089,SC2090 # nginx's variables, for nginx-conf.sh
	NGINX_LOG_FORMAT='$request_method $uri $status $body_bytes_sent "$http_range"'
	# shellcheck disable=SC2090 # read as it is by nginx-conf.sh
	export NGINX_LOG_FORMAT
	http_nginx "$hc/www"
	hrc=$?
	unset NGINX_LOG_FORMAT
	return $hrc
}

# httpcache_case NAME: http-cache-cold or http-cache-update
httpcache_case() {
	ltsp_begin "$1" || return
	if ! once httpcache; then
		result "$name"
		return
	fi
	trap 'http_stop; boot_cleanup' EXIT
	trap 'http_stop; exit 130' INT TERM
	if ! hc_prepare; then
		http_stop
		trap boot_cleanup EXIT
		trap - INT TERM
		result "$name"
		return
	fi
	url=http://10.0.2.2:$hport/x86_64.img
	boot_debian "$name" "$ht/initrd.combined" 1024 \
		"root=/dev/vda ltsp.image=images/x86_64.img ip=dhcp init=/sbin/rbtest-init $hc_args ramboot.url=$url" \
		"file=$srv,if=virtio,format=raw,throttling.bps-total=125000000" \
		"-drive file=$hdisk,if=virtio,format=raw -nic user,model=virtio-net-pci"
	http_stop
	cp "$hn/access.log" "$logs/$name.access.log" 2>/dev/null
	ltsp_booted
	if expect_done; then
		expect mode_asked cache
		expect mode_done cache
		expect source "$url"
		expect cache_device /dev/vdb
		expect fallback ""
		# A miss: LTSP mounts the network image, the server disk's.
		grep -q '^Running: mount -t squashfs -o ro /root/images/x86_64.img ' "$log.txt" ||
			fail "LTSP did not mount the network image"
		hall=$(hc_bytes)
		case $name in
		http-cache-cold)
			grep -q 'the local cache does not hold this image (empty); booting from the network' "$log.txt" ||
				fail "the boot did not say that the cache is empty"
			! grep -q '^rbtest-http-cache v2$' "$log.txt" || fail "the client runs v2, expected v1"
			expect_hc_refreshed 1 a "$hv1_sha" "$hv1_size"
			expect cache_bytes_network "$hv1_size"
			expect cache_bytes_local 0
			echo "# $name: $(report cache_bytes_network) bytes of the image over HTTP (image $hv1_size), $hall bytes in all, $(hc_requests | wc -l) requests" ;;
		http-cache-update)
			grep -q 'the local cache does not hold this image (another one); booting from the network' "$log.txt" ||
				fail "the boot did not say that the cache holds another image"
			# The client runs v2: its changed file.
			grep -q '^rbtest-http-cache v2$' "$log.txt" || fail "the client does not run the new image (no marker of v2)"
			expect_hc_refreshed $((gen0 + 1)) b "$hv2_sha" "$hv2_size"
			nb=$(report cache_bytes_network)
			[ "$(report cache_bytes_local)" -gt 0 ] 2>/dev/null ||
				fail "cache_bytes_local '$(report cache_bytes_local)': nothing copied from slot a"
			[ $((${nb:-0} + $(report cache_bytes_local))) = "$hv2_size" ] 2>/dev/null ||
				fail "cache_bytes_network $nb + cache_bytes_local $(report cache_bytes_local) is not the image's $hv2_size"
			# Everything nginx sent (the manifest, the index, the
			# chunks), far below the image.
			[ "$hall" -le $((hv2_size / 4)) ] ||
				fail "nginx sent $hall bytes, expected at most a quarter of the image ($hv2_size)"
			# The new slot holds v2, its changed file with it.
			if debugfs -R "dump /images/x86_64.img/b $hc/slot-b" "$hdisk" >> "$hc/setup.log" 2>&1; then
				unsquashfs -cat "$hc/slot-b" etc/rbtest-id 2>/dev/null | grep -qx 'rbtest-http-cache v2' ||
					fail "slot b does not hold the new /etc/rbtest-id"
			else
				fail "debugfs cannot read slot b from the cache disk"
			fi
			rm -f "$hc/slot-b"
			echo "# $name: $hall bytes over HTTP in all ($nb of the image's chunks, $(hc_requests | wc -l) requests), $(report cache_bytes_local) copied from slot a; image $hv2_size bytes" ;;
		esac
	fi
	trap boot_cleanup EXIT
	trap - INT TERM
	result "$name"
}
