# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run by bats once around the whole suite (bats picks up setup_suite.bash
# beside the first test file). teardown_suite looks for processes a test
# left behind: a daemon that still holds bats's output would make bats
# wait for it for ever after the last test (busybox httpd, run without
# -f, forks into the background and keeps every descriptor it was given).
# Such processes are killed, named, and fail the suite.
#
# A leftover is a process other than bats that either has
# RBTEST_SUITE_MARK=<this run> in its environment (every process a test
# started inherits it) or holds the write end of bats's output (a daemon
# that rewrote its environment, as nginx does for its process titles).
# The scan forks nothing, so nothing of its own can look like a leftover.

setup_suite() {
	export RBTEST_SUITE_MARK="$$.$RANDOM$RANDOM"
}

# rbtest_leftovers: the pids of leftover processes, one per line
rbtest_leftovers() {
	local self=$$ out=/proc/$$/fd/3 d pid line fd flags e
	local -a env
	# bats-exec-suite's descriptor 3 is its output, a pipe
	[ -p "$out" ] || out=
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = "$self" ] && continue
		[ "$pid" = "$BASHPID" ] && continue
		env=()
		mapfile -d "" env 2>/dev/null <"$d/environ" || continue
		for e in "${env[@]}"; do
			if [ "$e" = "RBTEST_SUITE_MARK=$RBTEST_SUITE_MARK" ]; then
				echo "$pid"
				continue 2
			fi
		done
		[ -n "$out" ] || continue
		for fd in "$d"/fd/*; do
			[ "$fd" -ef "$out" ] || continue
			flags=
			while read -r line; do
				case $line in flags:*) flags=${line#flags:} ;; esac
			done 2>/dev/null <"$d/fdinfo/${fd##*/}"
			flags=${flags//[[:space:]]/}
			# O_WRONLY or O_RDWR: a writer
			if [ -n "$flags" ] && (((8#$flags & 3) != 0)); then
				echo "$pid"
				continue 2
			fi
		done
	done
}

teardown_suite() {
	local pids p cmd n=0
	[ -n "${RBTEST_SUITE_MARK:-}" ] || return 0
	pids=$(rbtest_leftovers)
	for p in $pids; do
		cmd=
		[ -r "/proc/$p/cmdline" ] && cmd=$(tr '\0' ' ' <"/proc/$p/cmdline")
		echo "# a test left process $p running: ${cmd:-?} (killed)" >&3
		kill -KILL "$p" 2>/dev/null || true
		n=$((n + 1))
	done
	[ "$n" -eq 0 ]
}
