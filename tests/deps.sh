#!/bin/sh
# tests/deps.sh check|install - the Debian packages ramboot builds and tests with.
set -eu
PKGS="gcc make libc6-dev libzstd-dev liblzma-dev liblzo2-dev zlib1g-dev libblkid-dev
libssl-dev libsodium-dev libarchive-dev bats bats-assert bats-support shellcheck squashfs-tools
zstd xz-utils lzop gzip pigz cpio busybox-static e2fsprogs util-linux kmod
erofs-utils python3 file strace clang libclang-rt-14-dev qemu-system-x86 qemu-utils nbd-client linux-image-amd64 ltsp mmdebstrap
debhelper lintian pandoc"
# tests/verity.bats: veritysetup checks the hash files, dmsetup the mappings
PKGS="$PKGS cryptsetup-bin dmsetup"
PKGS="$PKGS udpcast iproute2"
# tests/netmem-server.bats, make bench-netmem: the network memory tier's server
PKGS="$PKGS nbd-server"
# bench/lab-bench.sh: the unicast clients fetch the image over HTTP
PKGS="$PKGS curl"
# tests/http.bats: a real web server (nginx-light is, since Debian 12, a
# transitional package that installs nginx)
PKGS="$PKGS nginx"
# tests/http-server.bats: the shipped lighttpd example; tests/dns.bats: a
# DNS server (dnsmasq, the program only) in a network namespace
PKGS="$PKGS lighttpd dnsmasq-base"

missing() {
	for p in $PKGS; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || echo "$p"
	done
}

case "${1:-check}" in
check)
	m=$(missing)
	[ -z "$m" ] && exit 0
	echo "missing packages:" $m >&2
	exit 1 ;;
install)
	m=$(missing)
	[ -z "$m" ] && exit 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: need root to apt-get install:" $m >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	# The tests start the servers they need (nginx, lighttpd, nbd-server,
	# dnsmasq) on ports of their own: the packages' services are not
	# started by the install (nginx and lighttpd would both want port 80,
	# and the second one's failure would fail the install). A policy
	# already in place is left as it is.
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		trap 'rm -f "$policy"' EXIT
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
	fi
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $m ;;
*)
	echo "usage: $0 check|install" >&2
	exit 2 ;;
esac
