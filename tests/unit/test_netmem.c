// SPDX-License-Identifier: GPL-2.0-or-later
/* The network memory tier's policy (netmem_plan_step), what counts as an
 * image copy running, the spec of ramboot.swap.net=, the NBD server
 * address, the handshake against a fake server (fakenbd.h), the export's
 * size (netmem_fit), and how swap --off finds a running tier
 * (netmem_find, below a fixture root). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "fakenbd.h"
#include "lib/path.h"
#include "dev/nbd.h"
#include "swap/netmem.h"

static struct netmem_opts O;

static struct netmem_seen seen(double now)
{
	struct netmem_seen s = { .now = now, .link_up = true, .psi_io_full10 = 0.5,
				 .idle_by_age = true, .last_mark = -1 };

	return s;
}

static void test_age_writeback(void)
{
	struct netmem_seen s = seen(100);
	struct netmem_plan p;

	netmem_opts_init(&O);
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WRITEBACK);
	CHECK_EQ_STR(p.mark_before, "120");
	CHECK(p.writeback);
	CHECK(!p.mark_after);
	/* 4 MiB/s for 10 s, in 4 KiB units */
	CHECK_EQ_INT(p.limit, 10240);
}

static void test_budget_follows_rate_and_period(void)
{
	struct netmem_seen s = seen(100);
	struct netmem_plan p;

	netmem_opts_init(&O);
	O.rate = 1 << 20;
	O.period = 3;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.limit, 768);
	O.rate = 0;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WAIT);
	CHECK(!p.writeback);
}

static void test_pauses(void)
{
	struct netmem_seen s = seen(100);
	struct netmem_plan p;

	netmem_opts_init(&O);
	s.link_up = false;
	s.copy_running = true;
	s.psi_io_full10 = 50;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_PAUSE_LINK);       /* the link first */
	s.link_up = true;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_PAUSE_COPY);
	s.copy_running = false;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_PAUSE_PRESSURE);
	CHECK(!p.writeback);
	CHECK_EQ_STR(p.mark_before, "");
	s.psi_io_full10 = NETMEM_PSI_MAX - 0.01;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WRITEBACK);
	s.psi_io_full10 = -1;                        /* no PSI in the kernel */
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WRITEBACK);
}

/* A kernel without seconds in idle: mark all, write back what is still
 * marked one idle age later, mark again. */
static void test_mark_all_cycle(void)
{
	struct netmem_seen s = seen(100);
	struct netmem_plan p;

	netmem_opts_init(&O);
	O.idle_age = 30;
	s.idle_by_age = false;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WRITEBACK);
	CHECK(!p.writeback);
	CHECK(p.mark_after);
	CHECK_EQ_STR(p.mark_before, "");
	s.last_mark = 100;
	s.now = 129.9;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WAIT);
	CHECK(!p.writeback);
	CHECK(!p.mark_after);
	s.now = 130;
	netmem_plan_step(&O, &s, &p);
	CHECK_EQ_INT(p.act, NM_WRITEBACK);
	CHECK(p.writeback);
	CHECK(p.mark_after);
	CHECK_EQ_STR(p.mark_before, "");
}

static void test_copy_running(void)
{
	CHECK(!netmem_copy_running(NULL, NULL));
	CHECK(netmem_copy_running("state=copying\npid=12\n", NULL));
	CHECK(netmem_copy_running("state=waiting-loop\n", "mode_done=lazy\n"));
	CHECK(!netmem_copy_running("pid=1\nstate=switched\n", NULL));
	CHECK(!netmem_copy_running("state=gave-up\n", NULL));
	CHECK(netmem_copy_running(NULL, "mode_done=prefetch\nbytes=0\n"));
	CHECK(!netmem_copy_running(NULL, "mode_done=prefetch\nbytes=1048576\n"));
	CHECK(netmem_copy_running(NULL, "mode_done=off\ncache=miss\ncache_error=\n"));
	CHECK(!netmem_copy_running(NULL, "cache=miss\ncache_error=disk full\n"));
	CHECK(!netmem_copy_running(NULL, "cache=refreshed\n"));
	CHECK(!netmem_copy_running(NULL, "mode_done=ram\nbytes=0\n"));
}

static void test_spec(void)
{
	char err[200] = "";

	netmem_opts_init(&O);
	CHECK_EQ_INT(netmem_spec_parse("10.0.2.2", &O, err, sizeof(err)), 0);
	CHECK_EQ_STR(O.server, "10.0.2.2");
	CHECK_EQ_STR(O.export, "swap");
	CHECK_EQ_INT(O.timeout, NETMEM_TIMEOUT);
	netmem_opts_init(&O);
	CHECK_EQ_INT(netmem_spec_parse("10.0.2.2:10900,export=pool,size=1G,rate=8MiB/s,"
				       "idle=5,period=2,timeout=30,max-ram=0", &O, err,
				       sizeof(err)), 0);
	CHECK_EQ_STR(O.server, "10.0.2.2:10900");
	CHECK_EQ_STR(O.export, "pool");
	CHECK_EQ_INT(O.size, 1ULL << 30);
	CHECK_EQ_INT(O.rate, 8ULL << 20);
	CHECK_EQ_INT(O.idle_age, 5);
	CHECK_EQ_INT(O.period, 2);
	CHECK_EQ_INT(O.timeout, 30);
	CHECK_EQ_INT(O.max_ram, 0);
	/* durations in the one grammar of every timeout */
	netmem_opts_init(&O);
	CHECK_EQ_INT(netmem_spec_parse("10.0.2.2,idle=2m,period=10s,timeout=1.5m", &O, err,
				       sizeof(err)), 0);
	CHECK_EQ_INT(O.idle_age, 120);
	CHECK_EQ_INT(O.period, 10);
	CHECK_EQ_INT(O.timeout, 90);
	CHECK(netmem_spec_parse("10.0.2.2,idle=1.5", &O, err, sizeof(err)) < 0);
	CHECK(netmem_spec_parse("10.0.2.2,idle=2d", &O, err, sizeof(err)) < 0);
	netmem_opts_init(&O);
	CHECK(netmem_spec_parse("10.0.2.2,idle=0", &O, err, sizeof(err)) < 0);
	CHECK_EQ_STR(err, "'idle=0': not understood");
	CHECK(netmem_spec_parse("10.0.2.2,colour=blue", &O, err, sizeof(err)) < 0);
	CHECK(netmem_spec_parse("10.0.2.2,size", &O, err, sizeof(err)) < 0);
	CHECK_EQ_STR(err, "'size': not NAME=VALUE");
	CHECK(netmem_spec_parse(",idle=3", &O, err, sizeof(err)) < 0);
}

static void test_server_parse(void)
{
	struct nbd_server s;
	const struct sockaddr_in *a4 = (const void *)&s.addr;
	const struct sockaddr_in6 *a6 = (const void *)&s.addr;

	CHECK_EQ_INT(nbd_server_parse("10.0.2.2", "swap", &s), 0);
	CHECK_EQ_STR(s.name, "10.0.2.2:10809");
	CHECK_EQ_INT(ntohs(a4->sin_port), 10809);
	CHECK_EQ_STR(s.export, "swap");
	CHECK_EQ_INT(nbd_server_parse("192.168.67.1:20000", "x", &s), 0);
	CHECK_EQ_STR(s.name, "192.168.67.1:20000");
	CHECK_EQ_INT(nbd_server_parse("[fd00::1]:999", "swap", &s), 0);
	CHECK_EQ_INT(a6->sin6_family, AF_INET6);
	CHECK_EQ_INT(ntohs(a6->sin6_port), 999);
	CHECK_EQ_STR(s.name, "[fd00::1]:999");
	CHECK_EQ_INT(nbd_server_parse("[fd00::1]", "swap", &s), 0);
	CHECK_EQ_STR(s.name, "[fd00::1]:10809");
	CHECK(nbd_server_parse("server.lan", "swap", &s) < 0);    /* no resolver */
	CHECK(nbd_server_parse("10.0.2.2:0", "swap", &s) < 0);
	CHECK(nbd_server_parse("10.0.2.2:65536", "swap", &s) < 0);
	CHECK(nbd_server_parse("10.0.2.2:", "swap", &s) < 0);
	CHECK(nbd_server_parse("[fd00::1", "swap", &s) < 0);
	CHECK(nbd_server_parse("10.0.2.2", "", &s) < 0);
	CHECK(nbd_server_parse("10.0.2.2", "sw\nap", &s) < 0);    /* it goes into messages */
}

/* ---- the handshake against a fake server (fakenbd.h) ---- */

/* nbd_open against a server that answers as f says, within timeout_s. */
static int handshake_with(const struct fake_nbd *f, unsigned timeout_s, struct nbd_export *ex,
			  char *err, size_t errlen)
{
	struct nbd_server s;
	char spec[32];
	uint16_t port = 0;
	int lfd = fake_listen(&port), fd = -1, rc, st;
	pid_t pid;

	if (lfd < 0)
		return -errno;
	pid = fork();
	if (pid == 0)
		fake_serve(lfd, f);
	close(lfd);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	err[0] = '\0';
	rc = nbd_server_parse(spec, "swap", &s);
	if (rc == 0)
		rc = nbd_open(&s, timeout_s, 0, &fd, ex, err, errlen);
	if (fd >= 0)
		close(fd);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ_INT(WEXITSTATUS(st), 0);
	return rc;
}

static void test_handshake(void)
{
	struct fake_nbd f = { .kind = FAKE_GO, .size = 1ULL << 30, .flags = 1 | 4 };
	struct nbd_export ex;
	char err[256] = "";

	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), 0);
	CHECK_EQ_INT(ex.size, 1ULL << 30);
	CHECK_EQ_INT(ex.flags, 5);
	/* NBD_OPT_GO unknown to the server: NBD_OPT_EXPORT_NAME */
	f = (struct fake_nbd){ .kind = FAKE_OLD, .size = 64ULL << 20, .flags = 1 };
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), 0);
	CHECK_EQ_INT(ex.size, 64ULL << 20);
	CHECK_EQ_INT(ex.flags, 1);
	/* the server's message, on one line */
	f = (struct fake_nbd){ .kind = FAKE_ERR, .err = 0x80000006u, .text = "no\nsuch\texport" };
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -ENOENT);
	CHECK_EQ_STR(err, "export 'swap': unknown to the server: no such export (reply 0x80000006)");
	f.err = 0x80000005u;
	f.text = "";
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -ENOENT);
	CHECK_EQ_STR(err, "export 'swap': refused (reply 0x80000005)");
}

/* What a server must not get away with. */
static void test_handshake_refused(void)
{
	struct fake_nbd f = { .kind = FAKE_GO, .size = 1ULL << 30, .flags = 1 | 2 };
	struct nbd_export ex;
	char err[256];

	/* a read-only export: zram would write to it */
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -EROFS);
	CHECK_EQ_STR(err, "export 'swap' is read-only");
	f.kind = FAKE_OLD;
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -EROFS);
	/* replies that name another option than the one asked */
	f = (struct fake_nbd){ .kind = FAKE_GO, .size = 1ULL << 30, .flags = 1, .reply_opt = 6 };
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -EPROTO);
	CHECK_EQ_STR(err, "NBD_OPT_GO: a reply to option 6");
	f.kind = FAKE_OLD;
	CHECK_EQ_INT(handshake_with(&f, 5, &ex, err, sizeof(err)), -EPROTO);
	CHECK_EQ_STR(err, "NBD_OPT_GO: a reply to option 6");
}

/* A server that never ends its answer: refused at a count, a length, or
 * the handshake's one deadline (2 s here), whichever comes first. */
static void test_handshake_bounded(void)
{
	struct fake_nbd f = { .kind = FAKE_ENDLESS, .size = 1ULL << 30, .flags = 1 };
	struct nbd_export ex;
	char err[256];

	CHECK_EQ_INT(handshake_with(&f, 2, &ex, err, sizeof(err)), -EPROTO);
	CHECK_EQ_STR(err, "NBD_OPT_GO: more than 32 replies");
	f.kind = FAKE_HUGE;
	CHECK_EQ_INT(handshake_with(&f, 2, &ex, err, sizeof(err)), -EPROTO);
	CHECK_EQ_STR(err, "NBD_OPT_GO: a reply of 4294967295 bytes (at most 4098)");
	/* every byte in time for a receive timeout, the whole too late */
	f.kind = FAKE_TRICKLE;
	CHECK_EQ_INT(handshake_with(&f, 2, &ex, err, sizeof(err)), -ETIMEDOUT);
	CHECK_EQ_STR(err, "greeting: Connection timed out");
}

/* The export's part: what was asked, at most 4 x RAM, whole 4 KiB, at
 * least 1 MiB, and never past 2^64 with zram's own size. */
static void test_fit(void)
{
	uint64_t b = 0;

	CHECK_EQ_INT(netmem_fit(1ULL << 30, 0, 2ULL << 30, 2ULL << 30, &b), 0);
	CHECK_EQ_INT(b, 1ULL << 30);
	CHECK_EQ_INT(netmem_fit(1ULL << 30, (256ULL << 20) + 100, 2ULL << 30, 0, &b), 0);
	CHECK_EQ_INT(b, 256ULL << 20);
	/* a 1 TiB export on a 2 GiB client: 8 GiB of it */
	CHECK_EQ_INT(netmem_fit(1ULL << 40, 0, 2ULL << 30, 2ULL << 30, &b), 1);
	CHECK_EQ_INT(b, 8ULL << 30);
	CHECK_EQ_INT(netmem_fit(1ULL << 40, 16ULL << 30, 2ULL << 30, 0, &b), 1);
	CHECK_EQ_INT(b, 8ULL << 30);
	CHECK_EQ_INT(netmem_fit(8ULL << 30, 0, 2ULL << 30, 0, &b), 0);
	/* under 1 MiB: the export, what was asked, what is left in 4 KiB */
	CHECK_EQ_INT(netmem_fit((1ULL << 20) - 1, 0, 2ULL << 30, 0, &b), -ERANGE);
	CHECK_EQ_INT(netmem_fit(1ULL << 20, 0, 2ULL << 30, 0, &b), 0);
	CHECK_EQ_INT(netmem_fit(1ULL << 30, 512 << 10, 2ULL << 30, 0, &b), -ERANGE);
	CHECK_EQ_INT(netmem_fit(1ULL << 30, 0, 0, 0, &b), -ERANGE);
	/* a RAM that 4 x overflows: no cap but 2^64; the sum with disksize */
	CHECK_EQ_INT(netmem_fit(UINT64_MAX, 0, 1ULL << 62, 0, &b), 0);
	CHECK_EQ_INT(b, UINT64_MAX - 4095);
	CHECK_EQ_INT(netmem_fit(UINT64_MAX, 0, 1ULL << 62, 8ULL << 30, &b), -EOVERFLOW);
	CHECK_EQ_INT(netmem_fit(UINT64_MAX - (8ULL << 30) - 4095, 0, 1ULL << 62, 8ULL << 30, &b),
		     0);
}

/* Write text to root/rel, making its directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char p[512], *c;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (c = p + strlen(root) + 1; (c = strchr(c, '/')) != NULL; c++) {
		*c = '\0';
		(void)mkdir(p, 0755);
		*c = '/';
	}
	if (text[0] == '\0' && rel[strlen(rel) - 1] == '/')
		return;
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		CHECK(fclose(f) == 0);
	}
}

static void test_find(void)
{
	char root[] = "/tmp/test_netmem.XXXXXX", rec[256], cmd[600];
	struct netmem_running n;

	CHECK(mkdtemp(root) != NULL);
	setenv("RAMBOOT_ROOT", root, 1);
	rb_root_init();
	/* no backing_dev (no writeback in the kernel), another device */
	put(root, "sys/block/zram3/disksize", "0\n");
	CHECK_EQ_INT(netmem_find(3, &n), 0);
	put(root, "sys/block/zram3/backing_dev", "/dev/vdb\n");
	CHECK_EQ_INT(netmem_find(3, &n), 0);
	/* ours, no record, the NBD device under the mapping in sysfs */
	put(root, "sys/block/zram3/backing_dev", "/dev/mapper/ramboot-netmem\n");
	put(root, "sys/block/dm-0/dm/name", "other\n");
	put(root, "sys/block/dm-0/slaves/nbd1/", "");
	put(root, "sys/block/dm-2/dm/name", "ramboot-netmem\n");
	put(root, "sys/block/dm-2/slaves/nbd5/", "");
	CHECK_EQ_INT(netmem_find(3, &n), 1);
	CHECK_EQ_INT(n.pid, 0);
	CHECK_EQ_INT(n.nbd, 5);
	/* a record: its process alive (a name with ") " in it), start time
	 * the same */
	put(root, "proc/4242/stat", "4242 (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 "
	    "20 0 1 0 777 1000 10\n");
	put(root, "run/ramboot/netmem", "pid=4242\nstart=777\nzram=3\nnbd=2\n");
	CHECK_EQ_INT(netmem_find(3, &n), 1);
	CHECK_EQ_INT(n.pid, 4242);
	CHECK_EQ_INT(n.nbd, 2);
	/* the record of another zram device: not this one's */
	CHECK_EQ_INT(netmem_find(4, &n), 0);
	put(root, "sys/block/zram4/backing_dev", "/dev/mapper/ramboot-netmem\n");
	CHECK_EQ_INT(netmem_find(4, &n), 1);
	CHECK_EQ_INT(n.pid, 0);
	CHECK_EQ_INT(n.nbd, 5);
	/* the pid taken by another process since (another start time), a
	 * zombie, no such process */
	snprintf(rec, sizeof(rec), "pid=4242\nstart=778\nzram=3\nnbd=2\n");
	put(root, "run/ramboot/netmem", rec);
	CHECK_EQ_INT(netmem_find(3, &n), 1);
	CHECK_EQ_INT(n.pid, 0);
	CHECK_EQ_INT(n.nbd, 2);
	put(root, "run/ramboot/netmem", "pid=4242\nstart=777\nzram=3\nnbd=2\n");
	put(root, "proc/4242/stat", "4242 (x) Z 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 "
	    "20 0 1 0 777 0 0\n");
	CHECK_EQ_INT(netmem_find(3, &n), 1);
	CHECK_EQ_INT(n.pid, 0);
	put(root, "run/ramboot/netmem", "pid=4243\nstart=777\nzram=3\nnbd=2\n");
	CHECK_EQ_INT(netmem_find(3, &n), 1);
	CHECK_EQ_INT(n.pid, 0);
	CHECK_EQ_INT(netmem_pause(&n, true), -ESRCH);
	CHECK_EQ_INT(netmem_end(&n), 0);
	unsetenv("RAMBOOT_ROOT");
	rb_root_init();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static void cat(const char *root, const char *rel, char *buf, size_t len)
{
	char p[512];
	FILE *f;
	size_t n = 0;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	buf[0] = '\0';
	f = fopen(p, "r");
	CHECK(f != NULL);
	if (f) {
		n = fread(buf, 1, len - 1, f);
		buf[n] = '\0';
		CHECK(fclose(f) == 0);
	}
}

/* Init's memory.swap.max, against a fixture tree: proc/1/cgroup, and
 * proc/1/root (init's root: here the fixture's own) with sys/fs/cgroup
 * as plain files. */
static void test_pid1(void)
{
	static const struct {
		const char *file, *text, *why;
	} unprotected[] = {
		/* no cgroup2 line (v1 only), init in the root cgroup */
		{ "proc/1/cgroup", "1:name=systemd:/init.scope\n",
		  "no cgroup2 line in /proc/1/cgroup" },
		{ "proc/1/cgroup", "0::/\n", "init in the root cgroup" },
		/* init.scope, but nothing mounted at /sys/fs/cgroup yet */
		{ "proc/1/cgroup", "1:name=systemd:/init.scope\n0::/init.scope\n",
		  "no cgroup2 at /sys/fs/cgroup/init.scope" },
		/* cgroup2, no memory controller; memory, no swap accounting */
		{ "sys/fs/cgroup/init.scope/cgroup.controllers", "\n",
		  "no memory controller for /init.scope" },
		{ "sys/fs/cgroup/init.scope/memory.max", "max\n", "no swap accounting in this kernel" },
	};
	char root[] = "/tmp/test_netmem.XXXXXX", p[512], why[128], v[64], cmd[600];
	size_t i;
	int proc;

	CHECK(mkdtemp(root) != NULL);
	put(root, "proc/1/cgroup", "");
	snprintf(p, sizeof(p), "%s/proc/1/root", root);
	CHECK(symlink("../..", p) == 0);
	snprintf(p, sizeof(p), "%s/proc", root);
	proc = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(proc >= 0);
	/* Each step adds a file to the tree and gets the next reason. */
	for (i = 0; i < sizeof(unprotected) / sizeof(unprotected[0]); i++) {
		put(root, unprotected[i].file, unprotected[i].text);
		CHECK_EQ_INT(netmem_pid1_protect(proc, why, sizeof(why)), 0);
		CHECK_EQ_STR(why, unprotected[i].why);
	}
	/* max: written 0; 0 already: left alone */
	put(root, "sys/fs/cgroup/init.scope/memory.swap.max", "max\n");
	CHECK_EQ_INT(netmem_pid1_protect(proc, why, sizeof(why)), 1);
	cat(root, "sys/fs/cgroup/init.scope/memory.swap.max", v, sizeof(v));
	CHECK_EQ_STR(v, "0");
	put(root, "sys/fs/cgroup/init.scope/memory.swap.max", "0\n");
	snprintf(p, sizeof(p), "%s/sys/fs/cgroup/init.scope/memory.swap.max", root);
	CHECK(chmod(p, 0444) == 0);
	CHECK_EQ_INT(netmem_pid1_protect(proc, why, sizeof(why)), 1);
	cat(root, "sys/fs/cgroup/init.scope/memory.swap.max", v, sizeof(v));
	CHECK_EQ_STR(v, "0\n");
	/* a value it cannot write: unprotected, and why (not as root, which
	 * writes a 0444 file anyway) */
	if (geteuid() != 0) {
		CHECK(unlink(p) == 0);
		put(root, "sys/fs/cgroup/init.scope/memory.swap.max", "max\n");
		CHECK(chmod(p, 0444) == 0);
		CHECK_EQ_INT(netmem_pid1_protect(proc, why, sizeof(why)), 0);
		CHECK_EQ_STR(why, "/init.scope/memory.swap.max: Permission denied");
	}
	/* no /proc at all */
	CHECK_EQ_INT(netmem_pid1_protect(-1, why, sizeof(why)), 0);
	CHECK_EQ_STR(why, "no cgroup2 line in /proc/1/cgroup");
	CHECK(close(proc) == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(test_age_writeback);
	RUN(test_budget_follows_rate_and_period);
	RUN(test_pauses);
	RUN(test_mark_all_cycle);
	RUN(test_copy_running);
	RUN(test_spec);
	RUN(test_server_parse);
	RUN(test_handshake);
	RUN(test_handshake_refused);
	RUN(test_handshake_bounded);
	RUN(test_fit);
	RUN(test_find);
	RUN(test_pid1);
	return TAP_DONE();
}
