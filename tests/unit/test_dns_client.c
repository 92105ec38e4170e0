// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The DNS stub resolver against a server of the test's own on
 * 127.0.0.1:53, in a network namespace of its own (root only: skipped
 * otherwise), its servers read from a fixture root (RAMBOOT_ROOT):
 * resolv.conf, else klibc ipconfig's /run/net-*.conf. Answers from
 * another address or with another ID are ignored, a silent server ends
 * in "no answer", a missing name in "not found".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "lib/clock.h"
#include "lib/path.h"
#include "source/dns.h"

static char root[] = "/tmp/test_dns_client.XXXXXX";

static void put_file(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void rm_file(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	unlink(p);
}

static int udp_on(const char *addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	inet_pton(AF_INET, addr, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The answer to query q: rcode, and one address when alen. */
static size_t answer(uint8_t *r, const uint8_t *q, size_t ql, int rcode, const void *a,
		     size_t alen)
{
	static const uint8_t rr[] = { 0xc0, 0x0c, 0, 0, 0, 1, 0, 0, 0, 60, 0, 0 };

	memcpy(r, q, ql);
	r[2] |= 0x80;
	r[3] = (uint8_t)(0x80 | rcode);
	r[7] = alen ? 1 : 0;
	if (!alen)
		return ql;
	memcpy(r + ql, rr, sizeof(rr));
	r[ql + 3] = alen == 4 ? 1 : 28;
	r[ql + 11] = (uint8_t)alen;
	memcpy(r + ql + 12, a, alen);
	return ql + 12 + alen;
}

/* A server for one resolution, each character of script a query:
 * a  10.0.0.1 to an A query, no record to AAAA
 * 6  no record to A, fd00::1 to AAAA
 * n  NXDOMAIN
 * s  silence
 * i  first an answer with another ID, then the answer
 * o  first an answer from 127.0.0.2, then the answer */
static pid_t serve(const char *script)
{
	int fd = udp_on("127.0.0.1");
	pid_t pid;

	if (fd < 0)
		return -1;
	pid = fork();
	if (pid != 0) {
		close(fd);
		return pid;
	}
	alarm(10);
	for (; *script; script++) {
		static const uint8_t v4[4] = { 10, 0, 0, 1 };
		static const uint8_t v6[16] = { 0xfd, [15] = 1 };
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		uint8_t q[512], r[600];
		ssize_t ql = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&peer, &pl);
		bool aaaa;
		size_t rl;
		int other;

		if (ql < 17)
			_exit(1);
		aaaa = q[ql - 3] == 28;
		switch (*script) {
		case 's':
			continue;
		case 'n':
			rl = answer(r, q, (size_t)ql, 3, NULL, 0);
			break;
		case '6':
			rl = answer(r, q, (size_t)ql, 0, v6, aaaa ? 16 : 0);
			break;
		default:
			rl = answer(r, q, (size_t)ql, 0, v4, aaaa ? 0 : 4);
			break;
		}
		/* the decoys name another address: 10.0.0.99 */
		if (*script == 'i') {
			r[1] ^= 1;
			r[rl - 1] = 99;
			sendto(fd, r, rl, 0, (struct sockaddr *)&peer, pl);
			r[1] ^= 1;
			r[rl - 1] = 1;
		} else if (*script == 'o' && (other = udp_on("127.0.0.2")) >= 0) {
			r[rl - 1] = 99;
			sendto(other, r, rl, 0, (struct sockaddr *)&peer, pl);
			close(other);
			r[rl - 1] = 1;
			usleep(100000);
		}
		sendto(fd, r, rl, 0, (struct sockaddr *)&peer, pl);
	}
	_exit(0);
}

static int resolve(const char *script, struct sockaddr_storage *sa)
{
	socklen_t len;
	pid_t pid = serve(script);
	int rc = dns_resolve("image.lab", 8080, sa, &len, now_sec() + 5), st;

	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
	}
	return rc;
}

static void check_v4(const struct sockaddr_storage *sa)
{
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;

	CHECK_EQ_INT(v4->sin_family, AF_INET);
	CHECK_EQ_INT(ntohs(v4->sin_port), 8080);
	CHECK_EQ_INT(ntohl(v4->sin_addr.s_addr), 0x0a000001);
}

static void test_resolv_conf(void)
{
	struct sockaddr_storage sa;
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&sa;

	put_file("etc/resolv.conf", "# a comment\nsearch lab\nnameserver 127.0.0.1\n"
		 "options timeout:1 attempts:1\n");
	CHECK_EQ_INT(resolve("a", &sa), 0);
	check_v4(&sa);
	CHECK_EQ_INT(resolve("66", &sa), 0);
	CHECK_EQ_INT(v6->sin6_family, AF_INET6);
	CHECK_EQ_INT(v6->sin6_addr.s6_addr[0], 0xfd);
	CHECK_EQ_INT(v6->sin6_addr.s6_addr[15], 1);
	CHECK_EQ_INT(resolve("n", &sa), -ENXIO);
	CHECK_EQ_STR(dns_strerror(-ENXIO), "host not found");
	/* only an A answer with no address and an AAAA one with none */
	CHECK_EQ_INT(resolve("aa", &sa), 0);
	CHECK_EQ_INT(resolve("66", &sa), 0);
	CHECK_EQ_INT(resolve("i", &sa), 0);
	check_v4(&sa);
	CHECK_EQ_INT(resolve("o", &sa), 0);
	check_v4(&sa);
	/* silent: one attempt of one second, then no answer */
	CHECK_EQ_INT(resolve("s", &sa), -ENOMSG);
	CHECK_EQ_STR(dns_strerror(-ENOMSG), "no answer from the DNS servers");
	/* the first server silent, the second answers */
	put_file("etc/resolv.conf", "nameserver 127.0.0.1\nnameserver 127.0.0.1\n"
		 "options attempts:1 timeout:1\n");
	CHECK_EQ_INT(resolve("sa", &sa), 0);
	check_v4(&sa);
	rm_file("etc/resolv.conf");
}

static void test_ipconfig(void)
{
	struct sockaddr_storage sa;
	socklen_t len;

	/* what klibc's ipconfig writes: 0.0.0.0 when DHCP gave one server */
	CHECK_EQ_INT(dns_resolve("image.lab", 80, &sa, &len, now_sec() + 5), -EDESTADDRREQ);
	put_file("run/net-eth0.conf", "DEVICE='eth0'\nPROTO='dhcp'\nIPV4ADDR='127.0.0.1'\n"
		 "IPV4DNS0='127.0.0.1'\nIPV4DNS1='0.0.0.0'\nHOSTNAME=''\n");
	CHECK_EQ_INT(resolve("a", &sa), 0);
	check_v4(&sa);
	/* resolv.conf first: no nameserver there, so /run's */
	put_file("etc/resolv.conf", "search lab\n");
	CHECK_EQ_INT(resolve("a", &sa), 0);
	rm_file("run/net-eth0.conf");
	rm_file("etc/resolv.conf");
	CHECK_EQ_INT(dns_resolve("image.lab", 80, &sa, &len, now_sec() + 5), -EDESTADDRREQ);
}

/* A network namespace of the test's own, its loopback up. */
static int own_net(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -errno;
	return close(fd);
}

int main(void)
{
	char p[300];

	signal(SIGPIPE, SIG_IGN);
	if (own_net() < 0) {
		printf("ok 1 - test_dns_client # SKIP no network namespace of its own (not root)\n1..1\n");
		return 0;
	}
	if (!mkdtemp(root))
		return 1;
	snprintf(p, sizeof(p), "%s/etc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/run", root);
	mkdir(p, 0755);
	setenv("RAMBOOT_ROOT", root, 1);
	rb_root_init();
	RUN(test_resolv_conf);
	RUN(test_ipconfig);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	if (system(p) != 0)
		return 1;
	return TAP_DONE();
}
