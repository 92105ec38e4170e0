# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by both boot hooks: the LTSP hook (ltsp-hook.sh, sourced in
# LTSP's own shell) and the initramfs-tools boot script. One copy of the
# code that reads what `ramboot boot` did and decides whether a RAM copy
# may replace the network root, so that both hooks accept and refuse the
# same things. Installed where each hook looks for it:
#
#   /etc/ltsp/ramboot/ramboot-lib.sh   next to the LTSP hook (ltsp.img)
#   /scripts/ramboot-lib.sh            in an initramfs-tools initramfs
#
# Sourcing it only defines functions, all named ramboot_*; nothing here
# exits. The caller defines ramboot_say and sets ramboot_bin (the
# ramboot binary) and ramboot_dir (/run/ramboot, where the report is).
#
# The protocol with `ramboot boot`: on a RAM copy it prints one line,
# RAMBOOT_IMAGE=<path>, and writes $ramboot_dir/report with, among
# others, mode_done=ram, ram_path= and fstype= (blkid's type of the
# copy). A hook that does not use the copy for any reason hands it back
# with `ramboot boot --drop=PATH --reason=TEXT`: that frees the copy
# (the tmpfs or the zram device) and rewrites the report to
# mode_done=off, fallback=TEXT, so that the report tells what the client
# really booted from.

# The RAM copy named by `ramboot boot`'s stdout, or status 1. Strict:
# exactly one line RAMBOOT_IMAGE=<value>, the value either plain (the
# characters ramboot prints unquoted) or one single-quoted string in
# which a quote is written '\''. Only such a value is evaluated, in a
# subshell.
ramboot_parse_out() {
	case $1 in
	*"
"*) return 1 ;;
	RAMBOOT_IMAGE=?*) ;;
	*) return 1 ;;
	esac
	ramboot_v=${1#RAMBOOT_IMAGE=}
	case $ramboot_v in
	\'*\')
		# Inside the quotes: text without quotes, each quote being
		# the start of '\'' (close, escaped quote, reopen).
		ramboot_r=${ramboot_v#\'}
		ramboot_r=${ramboot_r%\'}
		while :; do
			case $ramboot_r in
			*\'*) ;;
			*) break ;;
			esac
			ramboot_r=${ramboot_r#*\'}
			case $ramboot_r in
			"\\''"*) ramboot_r=${ramboot_r#"\\''"} ;;
			*) return 1 ;;
			esac
		done
		;;
	*[!A-Za-z0-9/._,:+@%-]*) return 1 ;;
	esac
	(eval "RAMBOOT_IMAGE=$ramboot_v" && [ -n "$RAMBOOT_IMAGE" ] &&
		printf '%s\n' "$RAMBOOT_IMAGE")
}

# A value of the report (key=value lines, the value on one line).
ramboot_report_get() { # key
	sed -n "s/^$1=//p" "${ramboot_dir:-/run/ramboot}/report" 2>/dev/null
}

# Hand a RAM copy back: ramboot frees it and records the fallback in the
# report. It warns on stderr itself.
ramboot_drop() { # path reason
	[ -n "$1" ] || return 0
	# shellcheck disable=SC2154 # set by the hook
	"$ramboot_bin" boot --drop="$1" --reason="$2" ||
		ramboot_say "ramboot boot --drop=$1 failed"
	return 0
}

# The RAM copy `ramboot boot` made, ready to be checked by mounting:
# sets ramboot_ram (its path) and ramboot_fstype (from the report).
# Status 1 when there is no copy to use; a copy that was made but cannot
# be used is dropped first:
# - output that is not one RAMBOOT_IMAGE= line while the report says
#   mode_done=ram: the copy the report names;
# - a copy that does not exist;
# - an empty fstype= (blkid knew no file system on it): the file system
#   type is never guessed.
ramboot_take_copy() { # output of `ramboot boot`
	ramboot_fstype=
	if ! ramboot_ram=$(ramboot_parse_out "$1"); then
		ramboot_ram=
		if [ "$(ramboot_report_get mode_done)" = ram ]; then
			ramboot_drop "$(ramboot_report_get ram_path)" "bad ramboot boot output"
		elif [ -n "$1" ]; then
			ramboot_say "ignoring unexpected output of ramboot boot"
		fi
		return 1           # empty: off, prefetch or a fallback
	fi
	if [ ! -e "$ramboot_ram" ]; then
		ramboot_drop "$ramboot_ram" "RAM copy missing"
		return 1
	fi
	ramboot_fstype=$(ramboot_report_get fstype)
	if [ -z "$ramboot_fstype" ]; then
		ramboot_drop "$ramboot_ram" "unknown file system"
		return 1
	fi
	return 0
}

# Mount the copy on dir: a file through a loop device, a block device
# (/dev/zramN) directly; ro or rw. ext3/ext4 read-only with noload, as
# LTSP mounts them: the journal is not replayed, which a read-only loop
# device would refuse.
ramboot_mount_copy() { # path fstype dir ro|rw
	ramboot_o=$4
	case $4:$2 in
	ro:ext3 | ro:ext4) ramboot_o=ro,noload ;;
	esac
	[ -b "$1" ] || ramboot_o=$ramboot_o,loop
	modprobe -q "$2" 2>/dev/null
	mkdir -p "$3" && mount -t "$2" -o "$ramboot_o" "$1" "$3"
}

# A tree that can be booted: /etc and an init (/sbin/init, or the one
# given). An init is often an absolute symlink (/lib/systemd/systemd)
# that resolves only inside the image: a link is enough.
ramboot_is_root() { # dir [init]
	[ -d "$1/etc" ] || return 1
	for ramboot_i in /sbin/init ${2:+"$2"}; do
		if [ -e "$1$ramboot_i" ] || [ -L "$1$ramboot_i" ]; then
			return 0
		fi
	done
	return 1
}

# ---- ramboot=lazy: a read-only loop device the copier can switch ----
#
# The lazy copier (`ramboot lazy`, started by `ramboot boot`) moves the
# image's loop device onto the RAM copy with LOOP_CHANGE_FD, which needs
# a read-only loop device. LTSP loop-mounts its image file itself; a root
# on a block device (NBD, a disk) and an image file the boot script
# mounts get one from here.

# A value of `ramboot boot --query`'s answer (mode=, image= lines).
ramboot_query_get() { # key answer
	printf '%s\n' "$2" | sed -n "s/^$1=//p" | head -n 1
}

# A read-only loop device over a file or a block device: its node on
# stdout, or status 1 with nothing left set up. The kernel's read-only
# flag is checked, not assumed: LOOP_CHANGE_FD refuses without it.
ramboot_loop_ro() { # file
	modprobe -q loop 2>/dev/null
	ramboot_l=$(losetup -f 2>/dev/null) && [ -n "$ramboot_l" ] || return 1
	losetup -r "$ramboot_l" "$1" 2>/dev/null || return 1
	if [ "$(cat "${ramboot_sys:-/sys}/block/${ramboot_l#/dev/}/ro" 2>/dev/null)" != 1 ]; then
		losetup -d "$ramboot_l" 2>/dev/null
		return 1
	fi
	printf '%s\n' "$ramboot_l"
}

# ramboot=lazy with the root on a block device (/dev/nbdN, a disk): the
# root is mounted from that device directly, so there is no loop device
# to switch. Before it is mounted (initramfs-tools' local-premount, after
# local-top has connected NBD), put a read-only loop device over it and
# make the boot mount that: ROOT=/dev/loopN is appended to the param
# file, which initramfs-tools' init sources after every script. Source
# and loop device go to $ramboot_dir/root-loop, where the init-bottom
# phase finds them and starts the copier. Status 1 with nothing changed
# when ramboot=lazy is not asked for this device (another mode, or a
# setting names an image file) or the loop device cannot be made: the
# root is then mounted from the device as before.
ramboot_lazy_root_loop() { # root-device param-file
	[ -n "$1" ] && [ -b "$1" ] || return 1
	ramboot_q=$("$ramboot_bin" boot --query --default-image="$1" 2>/dev/null) || return 1
	[ "$(ramboot_query_get mode "$ramboot_q")" = lazy ] || return 1
	[ "$(ramboot_query_get image "$ramboot_q")" = "$1" ] || return 1
	if ! ramboot_l=$(ramboot_loop_ro "$1"); then
		ramboot_say "no read-only loop device over $1; mounting $1 itself (no lazy copy)"
		return 1
	fi
	if ! mkdir -p "$ramboot_dir" ||
		! printf 'source=%s\nloop=%s\n' "$1" "$ramboot_l" >"$ramboot_dir/root-loop" ||
		! printf 'ROOT=%s\n' "$ramboot_l" >>"$2"; then
		rm -f "$ramboot_dir/root-loop"
		losetup -d "$ramboot_l" 2>/dev/null
		ramboot_say "cannot hand $ramboot_l to the boot; mounting $1 itself (no lazy copy)"
		return 1
	fi
	ramboot_say "root $1 through the read-only loop device $ramboot_l"
	return 0
}

# The device under the root's loop device, when ramboot_lazy_root_loop
# made one in this boot (status 1 otherwise).
ramboot_root_loop_source() {
	ramboot_s=$(sed -n 's/^source=//p' "$ramboot_dir/root-loop" 2>/dev/null)
	[ -n "$ramboot_s" ] && printf '%s\n' "$ramboot_s"
}

# ---- ramboot.url=: the network for an image over HTTP ----
#
# A boot whose root came over NFS or NBD has its network configured
# already: initramfs-tools' nfs script and local-top/nbd call
# configure_networking (scripts/functions) before the root is mounted,
# which leaves /run/net-DEVICE.conf. A boot without a network root
# (boot=ramboot, or a local root= with the image over HTTP) reaches the
# hooks with the NIC down: LTSP's network_vars only reads what is there
# (`ip -o route get`) and takes the MAC address of the first device.
# ramboot_net_up does what the nfs script would have done, with the
# kernel's ip= (and BOOTIF=), within a bound of its own.

# Status 0 when an interface other than the loopback has an address
# (or initramfs-tools configured one: /run/net-*.conf).
ramboot_net_is_up() {
	for ramboot_n in "${ramboot_run:-/run}"/net-*.conf; do
		[ -e "$ramboot_n" ] && return 0
	done
	ip -o addr show 2>/dev/null | grep -v '^[0-9]*: lo ' | grep -q ' scope global'
}

# End the process $1 and its children (configure_networking runs ipconfig
# and sleep): the children first, so that none outlives the wait.
ramboot_kill_tree() { # pid
	for ramboot_n in /proc/[0-9]*/stat; do
		read -r ramboot_k _ _ ramboot_pp _ <"$ramboot_n" 2>/dev/null || continue
		[ "$ramboot_pp" = "$1" ] && kill "$ramboot_k" 2>/dev/null
	done
	kill "$1" 2>/dev/null
	return 0
}

# Bring the network up for an image over HTTP, when it is not up
# already: initramfs-tools' configure_networking (ip= and BOOTIF= of the
# kernel command line, as init exported them as IP and BOOTIF), in the
# background, waited for at most $1 seconds (0 or empty: 30; its own
# waits add up to minutes: 180 s for a device, ipconfig's rounds). A
# DEVICE of lo (a client that named no NIC) is not the NIC. Status 1
# when no address came in time: the boot then falls back as for any
# server that cannot be reached.
ramboot_net_up() { # seconds
	ramboot_net_is_up && return 0
	if [ ! -f "${ramboot_functions:-/scripts/functions}" ]; then
		ramboot_say "the network is down and ${ramboot_functions:-/scripts/functions} is missing: no configure_networking"
		return 1
	fi
	ramboot_w=${1%%.*}
	case $ramboot_w in
	'' | 0 | *[!0-9]*) ramboot_w=30 ;;
	esac
	ramboot_say "bringing the network up for ramboot.url= (at most $ramboot_w s)"
	(
		# LTSP's shell runs with set -e: configure_networking's first
		# ipconfig round that gets no answer must not end it.
		set +e
		[ "${DEVICE-}" != lo ] || DEVICE=
		# shellcheck source=/dev/null
		. "${ramboot_functions:-/scripts/functions}" && configure_networking
	) </dev/null >&2 &
	ramboot_n=$!
	while [ "$ramboot_w" -gt 0 ] && kill -0 "$ramboot_n" 2>/dev/null; do
		sleep 1
		ramboot_w=$((ramboot_w - 1))
	done
	if kill -0 "$ramboot_n" 2>/dev/null; then
		ramboot_kill_tree "$ramboot_n"
	fi
	wait "$ramboot_n" 2>/dev/null
	if ! ramboot_net_is_up; then
		ramboot_say "the network did not come up in time"
		return 1
	fi
	return 0
}
