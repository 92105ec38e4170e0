#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/helpers/nginx-conf.sh DIR LISTEN [HTTP [SERVER]] - write DIR/nginx.conf
# for a Debian nginx that the tests and benches start themselves (nginx -p
# DIR -c DIR/nginx.conf): one worker, its pid file, error and access logs
# in DIR, the temporary directories of the modules built in (their
# defaults are root's) in DIR too, and one server listening on LISTEN
# (ADDRESS:PORT) with the SERVER directives ("root /srv; limit_rate 1m;");
# HTTP directives go in the http block. NGINX_LOG_FORMAT, when set, is the
# access log's format (nginx's variables: '$status $body_bytes_sent');
# else nginx's combined one.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 DIR LISTEN [HTTP [SERVER]]" >&2; exit 2; }
d=$1
PATH=$PATH:/usr/sbin
v=$(nginx -V 2>&1)
t="client_body_temp_path $d/body;"
for m in proxy fastcgi uwsgi scgi; do
	case $v in
	*"--without-http_${m}_module"*) ;;
	*) t="$t ${m}_temp_path $d/$m;" ;;
	esac
done
log="access_log $d/access.log;"
[ -z "${NGINX_LOG_FORMAT:-}" ] ||
	log="log_format rb '$NGINX_LOG_FORMAT'; access_log $d/access.log rb;"
user=
[ "$(id -u)" != 0 ] || user="user root;"
mkdir -p "$d"
cat >"$d/nginx.conf" <<CONF
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 64; }
http {
	$log
	$t
	${3:-}
	server {
		listen $2;
		${4:-}
	}
}
CONF
