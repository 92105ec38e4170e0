// SPDX-License-Identifier: GPL-2.0-or-later
/* A DNS stub resolver over UDP: see dns.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "format/dns.h"
#include "lib/clock.h"
#include "lib/path.h"
#include "source/dns.h"

struct servers {
	struct sockaddr_storage sa[DNS_SERVERS_MAX];
	int n, timeout, attempts;
};

static void add_server(struct servers *s, const char *addr)
{
	struct sockaddr_in *v4;
	struct sockaddr_in6 *v6;

	if (s->n == DNS_SERVERS_MAX)
		return;
	v4 = (struct sockaddr_in *)&s->sa[s->n];
	v6 = (struct sockaddr_in6 *)&s->sa[s->n];
	memset(&s->sa[s->n], 0, sizeof(s->sa[0]));
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1 && v4->sin_addr.s_addr != INADDR_ANY) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(53);
		s->n++;
	} else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(53);
		s->n++;
	}
}

static void option(const char *word, const char *key, int max, int *value)
{
	size_t k = strlen(key);
	int v;

	if (!strncmp(word, key, k)) {
		v = atoi(word + k);
		*value = v < 1 ? 1 : v > max ? max : v;
	}
}

/* resolv.conf(5): "nameserver ADDR" lines and "options timeout:N
 * attempts:N" (capped at glibc's maxima, 30 and 5). */
static void read_resolv_conf(struct servers *s)
{
	char text[4096], *save = NULL, *line;

	if (rb_read_regular("/etc/resolv.conf", text, sizeof(text)) < 0)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *wsave = NULL, *w = strtok_r(line, " \t\r", &wsave);

		if (w && !strcmp(w, "nameserver") && (w = strtok_r(NULL, " \t\r", &wsave)))
			add_server(s, w);
		else if (w && !strcmp(w, "options"))
			while ((w = strtok_r(NULL, " \t\r", &wsave))) {
				option(w, "timeout:", 30, &s->timeout);
				option(w, "attempts:", 5, &s->attempts);
			}
	}
}

/* In an initramfs, klibc's ipconfig writes what DHCP gave to
 * /run/net-DEVICE.conf, as shell lines: IPV4DNS0='10.0.2.3', IPV4DNS1
 * ('0.0.0.0' when none). initramfs-tools' configure_networking sources
 * it; nothing writes /etc/resolv.conf before the real root runs. */
static void read_ipconfig(struct servers *s)
{
	char dir[256], path[512], text[2048], *save = NULL, *line;
	struct dirent *e;
	DIR *d;

	if (rb_path(dir, sizeof(dir), "/run") < 0 || !(d = opendir(dir)))
		return;
	while (s->n < DNS_SERVERS_MAX && (e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (strncmp(e->d_name, "net-", 4) || l < 9 || strcmp(e->d_name + l - 5, ".conf") ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    read_regular_abs(path, text, sizeof(text)) < 0)
			continue;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (!strncmp(line, "IPV4DNS", 7) && line[7] >= '0' && line[7] <= '1' &&
			    line[8] == '=') {
				line += 9;
				line += *line == '\'' || *line == '"';
				line[strcspn(line, "'\"\r")] = '\0';
				add_server(s, line);
			}
	}
	(void)closedir(d);
}

static uint16_t random_id(void)
{
	uint16_t id;
	struct timespec ts;

	/* Early in the boot the kernel's pool may not be ready yet: an ID
	 * from the clock is still unknown to anyone off the link. */
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) == (ssize_t)sizeof(id))
		return id;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint16_t)(ts.tv_nsec ^ ts.tv_nsec >> 16 ^ getpid());
}

/* One question to one server, answered by its deadline. */
static int ask(const struct sockaddr_storage *server, const char *host, uint16_t type,
	       struct dns_result *res, double deadline)
{
	uint8_t q[DNS_UDP_MAX], a[DNS_UDP_MAX];
	uint16_t id = random_id();
	ssize_t ql = dns_query(q, sizeof(q), id, host, type), n;
	int fd, rc;

	if (ql < 0)
		return -ENXIO;
	fd = socket(server->ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Connected: the kernel drops datagrams from anyone else, and binds
	 * the socket to a random ephemeral port. */
	if (connect(fd, (const struct sockaddr *)server, server->ss_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) < 0 ||
	    send(fd, q, (size_t)ql, 0) != ql) {
		rc = -errno;
		goto out;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = deadline - now_sec();

		if (left <= 0) {
			rc = -ENOMSG;
			break;
		}
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		n = recv(fd, a, sizeof(a), MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			rc = -errno;     /* ECONNREFUSED: nothing listens there */
			break;
		}
		if (n >= 0 && (rc = dns_parse(a, (size_t)n, id, host, type, res)) != -EBADMSG)
			break;
	}
out:
	(void)close(fd);
	return rc;
}

int dns_resolve(const char *host, uint16_t port, struct sockaddr_storage *sa, socklen_t *len,
		double deadline)
{
	struct servers s = { .timeout = DNS_TIMEOUT_S, .attempts = DNS_ATTEMPTS };
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	uint16_t type = DNS_TYPE_A;
	struct dns_result res;
	int a, i, rc = -EDESTADDRREQ;

	read_resolv_conf(&s);
	if (s.n == 0)
		read_ipconfig(&s);
	for (a = 0; a < s.attempts; a++) {
		for (i = 0; i < s.n && now_sec() < deadline; i++) {
			double end = now_sec() + s.timeout;
			int r;

			if (end > deadline)
				end = deadline;
			type = DNS_TYPE_A;
			r = ask(&s.sa[i], host, type, &res, end);
			if (r == 0 && res.naddr == 0)
				r = ask(&s.sa[i], host, type = DNS_TYPE_AAAA, &res, end);
			if (r == 0 && res.naddr == 0)
				r = -ENXIO;
			if (r == 0 || r == -ENXIO) {
				rc = r;
				goto done;
			}
			/* A server that answered says more than one that did not. */
			if (r == -ECONNREFUSED || r == -ENETUNREACH || r == -EHOSTUNREACH)
				r = -ENOMSG;
			if (rc == -EDESTADDRREQ || r != -ENOMSG)
				rc = r;
		}
	}
	if (rc == -EDESTADDRREQ && s.n)
		rc = -ENOMSG;    /* the deadline came before any */
done:
	if (rc < 0)
		return rc;
	memset(sa, 0, sizeof(*sa));
	if (type == DNS_TYPE_A) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		memcpy(&v4->sin_addr, res.addr[0], 4);
		*len = sizeof(*v4);
	} else {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		memcpy(&v6->sin6_addr, res.addr[0], 16);
		*len = sizeof(*v6);
	}
	return 0;
}

const char *dns_strerror(int rc)
{
	switch (rc) {
	case -ENXIO:
		return "host not found";
	case -ENOMSG:
		return "no answer from the DNS servers";
	case -EDESTADDRREQ:
		return "host not in /etc/hosts, and no DNS server known";
	case -EMSGSIZE:
		return "DNS answer truncated";
	case -EIO:
		return "the DNS server failed";
	case -EPROTO:
		return "malformed DNS answer";
	case -ELOOP:
		return "too many CNAMEs in the DNS answer";
	}
	return strerror(-rc);
}
