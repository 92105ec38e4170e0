# SPDX-License-Identifier: GPL-2.0-or-later
# tests/boot/cases/20-lazy.sh - ramboot=lazy on the test initramfs: the
# root comes from the network image at once and the copier switches its
# loop device to a verified RAM copy behind it; the copier giving up
# (hash mismatch, memory, a stalled disk); a boot profile recorded and
# used. The lazy cases may talk to QEMU's monitor to cut the network disk
# away from a running client (boot's MARKER COMMAND). Sourced by
# tests/boot/run.sh.
# shellcheck shell=sh disable=SC2154 # the runner's and lib.sh's variables

# lazy_case NAME: one of the cases above
lazy_case() {
	c=$1
	case $c in
	profile-record)
		# A boot with ramboot=off records which ranges of the image it
		# read (the disk through a read-only loop, as over NBD: its
		# page cache is what the recorder samples); the client's
		# workload reads a part of the root, stops the recorder and
		# prints the profile, which the next case uses.
		profile_file=$logs/pshare/vda.profile
		mkdir -p "$logs/pshare"
		rm -f "$profile_file"
		boot "$c" "blk:$cache/blk/x86_64.img" "rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot.profile=record rbtest.workload=1"
		expect_done && {
			expect_root network
			expect mode_done off
			sed -n '/^RBTEST-PROFILE-BEGIN/,/^RBTEST-PROFILE-END/p' "$log.txt" |
				grep -v '^RBTEST' | base64 -d > "$profile_file" 2>/dev/null
			if ! head -n 1 "$profile_file" 2>/dev/null | grep -q '^ramboot-profile 1$'; then
				fail "no profile came back from the client"
			elif ! "${RAMBOOT_BIN:-$top/ramboot}" profile show "$profile_file" > "$logs/$c.show" 2>&1; then
				fail "the recorded profile does not parse: $(tail -n 1 "$logs/$c.show")"
			elif ! grep -q '^range ' "$profile_file"; then
				fail "the recorded profile holds no range"
			fi
		} ;;
	lazy-profile)
		# The next boot copies with that profile: its ranges first.
		if [ ! -s "$logs/pshare/vda.profile" ]; then
			fail "no profile from profile-record"
		else
			net_saved=$net
			net=$logs/pshare
			boot "$c" "blk:$cache/blk/x86_64.img" "rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot=lazy ramboot.profile=/mnt/net/vda.profile"
			net=$net_saved
			expect_done && {
				expect_root network
				expect mode_done lazy
				expect_lazy profile used
				expect_lazy state switched
				expect_lazy sha256 "$img_sha"
				expect_lazy_read
			}
		fi ;;
	lazy-9p)
		# The root comes from the network image at once; the copier
		# switches its loop device to a verified RAM copy behind it.
		boot "$c" 9p "ramboot=lazy"
		expect_done && {
			expect_root network
			expect mode_asked lazy
			expect mode_done lazy
			expect fallback ""
			expect_like ram_path "/run/ramboot/ram/*"
			expect_like lazy_switched "[0-9]*"
			expect_set lazy_bytes_network
			grep -q '^RBTEST lazy state=switched$' "$log.txt" ||
				fail "the lazy copy did not switch: $(sed -n 's/^RBTEST lazy state=//p' "$log.txt")"
			grep -q "^RBTEST lazy sha256=$img_sha\$" "$log.txt" ||
				fail "the lazy copy's sha256 is not the image's $img_sha"
			grep -q '^RBTEST loop loop[0-9]*=/run/ramboot/ram/' "$log.txt" ||
				fail "the loop device is not backed by the RAM copy"
			grep -q '^RBTEST lazy-read=ok$' "$log.txt" || fail "reading the root after the switch failed"
			v=$(sed -n 's/^RBTEST leftover //p' "$log.txt")
			[ -z "$v" ] || fail "left behind: $v"
		} ;;
	lazy-blk-cut)
		# The image on a throttled disk (NBD), mounted through a
		# read-only loop device over it. Once the copy switched, the
		# host deletes the disk's drive through QEMU's monitor (every
		# I/O on it fails from then on) and the client reads every file
		# of its root, from the RAM copy.
		boot "$c" "blk:$cache/blk/x86_64.img" \
			"rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 rbtest.cut=/dev/vda ramboot=lazy" \
			"RBTEST lazy-ready-to-cut" "drive_del net0"
		expect_done && {
			expect_root network
			expect_lazy_switched
			expect source /dev/vda
			expect_lazy image /dev/vda
			grep -q '^RBTEST source-cut$' "$log.txt" ||
				fail "the disk was not cut: $(grep '^RBTEST source-cut' "$log.txt")"
		} ;;
	lazy-corrupt)
		# The copy does not hash to ramboot.sha256: the client stays
		# on the network image, the copy is freed.
		boot "$c" 9p "ramboot=lazy ramboot.sha256=$(printf '%064d' 0)"
		expect_done && {
			expect_lazy_gave_up hash-mismatch /mnt/net/x86_64.img
			expect_lazy hash mismatch
			expect_lazy sha256 "$img_sha"
		} ;;
	lazy-minfree)
		# The guest has 512M: the copier refuses to start (exit 3),
		# before it makes anything; the boot reports the fallback.
		boot "$c" 9p "ramboot=lazy ramboot.minfree=4G"
		expect_done && {
			expect_root network
			expect mode_asked lazy
			expect mode_done off
			expect fallback "not enough memory"
			expect_set error
			expect_lazy state gave-up
			expect_lazy gave_up memory
			expect_lazy copy ""
			grep -q '^RBTEST loop loop[0-9]*=/mnt/net/x86_64.img$' "$log.txt" ||
				fail "the loop device is not backed by the network image"
			expect_no_leftover
		} ;;
	lazy-stall)
		# A disk so slow that every piece of the copy takes longer than
		# ramboot.timeout=0.2: the copier gives up on the stall, the
		# client goes on from the disk. While the boot reads, the
		# copier's reads shrink to 64 KiB (bgread's yield), a quarter
		# of a second here; between the boot's reads they are 1 MiB.
		blk_bps=262144
		boot "$c" "blk:$cache/blk/x86_64.img" \
			"rbtest.net=blk rbtest.root=/dev/vda rbtest.loop=1 ramboot=lazy ramboot.timeout=0.2"
		blk_bps=125000000
		expect_done && expect_lazy_gave_up stall /dev/vda ;;
	esac
	result "$c"
}
