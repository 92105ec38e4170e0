# shellcheck shell=bash disable=SC2034 # PORT and URL are the tests'
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Web servers for the HTTP tests: Debian's nginx, started on 127.0.0.1
# with a configuration of the test's own in $BATS_TEST_TMPDIR/nginxNAME.
# nginx_start serves $W (each file of the test's).

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT [HOST]: up to 10 s for a listener
wait_port() {
	for _ in $(seq 100); do
		python3 -c 'import socket, sys; socket.create_connection((sys.argv[2], int(sys.argv[1])), 1)' \
			"$1" "${2:-127.0.0.1}" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "nothing listens on ${2:-127.0.0.1}:$1"
}

# bad_start MODE FILE: the one-shot server of what no real server sends
# (tests/helpers/http-bad.py), at $URL, in PIDS
bad_start() {
	PORT=$(free_port)
	timeout 60 python3 "$TOP/tests/helpers/http-bad.py" "$PORT" "$1" "$2" &
	PIDS+=("$!")
	wait_port "$PORT"
	URL=http://127.0.0.1:$PORT
}

# nginx_start [RATE]: nginx serving $W at $URL, each answer at RATE
# (limit_rate) when given
nginx_start() {
	nginx_at "" "$W" "${1:+limit_rate $1;}"
}

# nginx_at NAME ROOT [DIRECTIVES]: another nginx, in $BATS_TEST_TMPDIR/nginxNAME
# (its access log: the status and body bytes of each answer, or what
# NGINX_LOG_FORMAT says), serving ROOT
# at $URL, with DIRECTIVES in its server block; $PORT kept when NGINX_PORT
# is set (a restart)
nginx_at() {
	local n=$BATS_TEST_TMPDIR/nginx$1
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
		skip "nginx not installed (tests/deps.sh install: nginx-light)"
	PATH=$PATH:/usr/sbin
	PORT=${NGINX_PORT:-$(free_port)}
	# shellcheck disable=SC2016 # nginx's variables
	NGINX_LOG_FORMAT=${NGINX_LOG_FORMAT:-'$status $body_bytes_sent'} \
		"$TOP/tests/helpers/nginx-conf.sh" "$n" "127.0.0.1:$PORT" "" "root $2; ${3:-}"
	nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start: $(cat "$n/error.log")"
	wait_port "$PORT"
	URL=http://127.0.0.1:$PORT
}

# nginx_kill NAME: nginx NAME and its workers killed outright (no answer
# finished), its pid file waited for (the daemon writes it after its parent
# returned). The daemon leads a process group of its own (setsid): the
# group is killed, so that a worker the master forks again in the
# meantime dies too, and waited for, its listening socket with it (a
# restart binds its port).
nginx_kill() {
	local f=$BATS_TEST_TMPDIR/nginx$1/nginx.pid m
	for _ in $(seq 100); do
		[ -s "$f" ] && break
		sleep 0.05
	done
	m=$(cat "$f")
	kill -KILL -- "-$m"
	rm -f "$f"
	for _ in $(seq 200); do
		pgrep -g "$m" >/dev/null || return 0
		sleep 0.05
	done
	fail "nginx $m did not end"
}

# log_bytes NAME: body bytes nginx NAME sent
log_bytes() {
	awk '{ s += $2 } END { print s + 0 }' "$BATS_TEST_TMPDIR/nginx$1/access.log"
}

# http_setup / http_teardown: a test file's web root $W and the servers
# it started (PIDS: its own processes; nginx: by their pid files).
http_setup() {
	require_loader
	setup_out
	W=$BATS_TEST_TMPDIR/www
	mkdir -p "$W"
	PIDS=()
}

http_teardown() {
	kill_pids
	nginx_stop_all
}

# nginx_stop_all: every nginx the test started (by their pid files) asked
# to stop
nginx_stop_all() {
	local p
	for p in "$BATS_TEST_TMPDIR"/nginx*/nginx.pid; do
		if [ -f "$p" ]; then
			kill "$(cat "$p")" 2>/dev/null || true
		fi
	done
}

# A file that loads this and defines no setup or teardown of its own
# gets these (its own, defined after the load, take their place).
setup() {
	http_setup
}

teardown() {
	http_teardown
}
