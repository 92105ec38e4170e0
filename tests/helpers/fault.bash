# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Fault injection for the tests: tests/fault/faultinj.c (read its header
# for the FAULTINJ rules) preloaded into a dynamically linked program.
#
#   load helpers/fault
#   setup_file() { faultinj_build; }
#   run --separate-stderr faultinj_run 'write:path=x.img:nth=2:errno=ENOSPC' \
#       "$RAMBOOT_BIN" load --sha256="$sum" "$src" "$OUT/x.img"
#   assert_fault_fired 'call=write n=2 .*errno:ENOSPC'
#
# FAULTINJ_SO   the shared object (default: built once per bats run into
#               $BATS_RUN_TMPDIR/faultinj.so; a Makefile may prebuild it)
# FAULTINJ_LOG  where the shim logs each firing (default: per test,
#               $BATS_TEST_TMPDIR/faultinj.log)
#
# Every process started under faultinj_run loads the shim, children too:
# keep rules off helper programs (timeout, env, sh) with path=, fd= or prog=.

# The shim's sources: faultinj.c and the files of its wrappers.
FAULTINJ_SRC=("$(cd "$(dirname "${BASH_SOURCE[0]}")/../fault" && pwd)"/*.c)
FAULTINJ_SO=${FAULTINJ_SO:-$BATS_RUN_TMPDIR/faultinj.so}

# The project's warning flags: the shim is held to the same standard.
FAULTINJ_CFLAGS=(-std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
	-Wpointer-arith -Wvla -Wformat=2 -Wcast-align -Wundef -Werror=format-security
	-shared -fPIC -pthread)

# Build $FAULTINJ_SO unless it is there. Several .bats files of one run
# may race: each compiles to its own name and renames into place.
faultinj_build() {
	local tmp out
	[ -s "$FAULTINJ_SO" ] && return 0
	tmp=$FAULTINJ_SO.$$.tmp
	if ! out=$("${CC:-cc}" "${FAULTINJ_CFLAGS[@]}" -o "$tmp" "${FAULTINJ_SRC[@]}" -ldl 2>&1); then
		rm -f "$tmp"
		echo "# faultinj build failed:" >&2
		printf '%s\n' "$out" >&2
		return 1
	fi
	mv -f "$tmp" "$FAULTINJ_SO"
}

faultinj_log() {
	echo "${FAULTINJ_LOG:-$BATS_TEST_TMPDIR/faultinj.log}"
}

# faultinj_run RULES CMD [ARGS...]: run CMD with the shim and FAULTINJ=RULES.
faultinj_run() {
	local rules=$1
	shift
	FAULTINJ=$rules FAULTINJ_LOG=$(faultinj_log) \
		LD_PRELOAD=$FAULTINJ_SO${LD_PRELOAD:+:$LD_PRELOAD} "$@"
}

# faultinj_count [ERE]: how many firings (matching ERE) the log holds
# (the lines that say a process loaded the shim are not firings).
faultinj_count() {
	local log
	log=$(faultinj_log)
	[ -e "$log" ] || {
		echo 0
		return 0
	}
	grep -v '^faultinj pid=[0-9]* loaded ' "$log" | grep -cE -- "${1:-.}" || true
}

# assert_faultinj_loaded [PROG]: a process (named PROG) ran under the shim
# with its rules: a zero count means "nothing matched", not "no shim".
assert_faultinj_loaded() {
	local log
	log=$(faultinj_log)
	if ! grep -qE "^faultinj pid=[0-9]+ loaded prog=${1:-[^ ]+} rules=[1-9]" "$log" 2>/dev/null; then
		echo "# faultinj log:" >&2
		cat "$log" >&2 2>/dev/null || echo "# (none)" >&2
		fail "the fault shim was not loaded${1:+ by $1}"
	fi
}

# assert_fault_fired [ERE]: at least one firing matching ERE was logged.
assert_fault_fired() {
	if [ "$(faultinj_count "${1:-.}")" -eq 0 ]; then
		echo "# faultinj log:" >&2
		cat "$(faultinj_log)" >&2 2>/dev/null || echo "# (none)" >&2
		fail "no fault matching '${1:-.}' fired"
	fi
}

# faultinj_wait ERE [SECONDS]: wait until a firing matching ERE is logged
# (a process reached its stall); print the pid of the process that logged
# it. SECONDS (default 30) only bounds a broken test.
faultinj_wait() {
	local ere=$1 i line
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		line=$(grep -E -m1 -- "$ere" "$(faultinj_log)" 2>/dev/null) || line=
		if [ -n "$line" ]; then
			line=${line#* pid=}
			echo "${line%% *}"
			return 0
		fi
		sleep 0.1
	done
	echo "# faultinj: no firing matching '$ere'" >&2
	return 1
}

# faultinj_require_dynamic BIN: skip unless BIN is dynamically linked (a
# static binary never loads the shim).
faultinj_require_dynamic() {
	if ! readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'; then
		skip "$1 is not dynamically linked: LD_PRELOAD has no effect"
	fi
}
