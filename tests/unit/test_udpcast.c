// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * udpcast.c: the receiver's option string (it may come from the kernel
 * command line: every value is checked before it reaches an argument
 * vector), interface names, udp-receiver's argument vector, the source
 * of a load on a stand-in udp-receiver, and `ramboot serve` on a
 * stand-in udp-sender: its option checks and the arguments udp-sender
 * gets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "udpcast/udpcast.h"

static char dir[] = "/tmp/ramboot-udpcast-XXXXXX";
static char bin[128], img[128], args[160];
static char err[256];

static int parse(const char *spec, struct udpcast_opts *o)
{
	err[0] = '\0';
	return udpcast_parse(spec, o, err, sizeof(err));
}

/* spec is refused and the reason says so. */
static void refused(const char *spec, const char *why)
{
	struct udpcast_opts o;

	if (parse(spec, &o) != -EINVAL || !strstr(err, why)) {
		printf("#   '%s': got \"%s\", expected -EINVAL and \"%s\"\n", spec, err, why);
		tap_case_failed = 1;
	}
}

static void parse_defaults(void)
{
	struct udpcast_opts o;

	memset(&o, 0xa5, sizeof(o));
	CHECK_EQ_INT(parse(NULL, &o), 0);
	CHECK_EQ_INT(o.portbase, 0);
	CHECK_EQ_STR(o.interface, "");
	CHECK_EQ_INT(o.start_timeout, UDPCAST_START_TIMEOUT);
	CHECK_EQ_INT(o.receive_timeout, UDPCAST_RECEIVE_TIMEOUT);
	memset(&o, 0xa5, sizeof(o));
	CHECK_EQ_INT(parse("", &o), 0);
	CHECK_EQ_INT(o.portbase, 0);
	CHECK_EQ_STR(o.interface, "");
	CHECK_EQ_INT(o.start_timeout, 20);
	CHECK_EQ_INT(o.receive_timeout, 10);
}

static void parse_every_key(void)
{
	struct udpcast_opts o;

	CHECK_EQ_INT(parse("portbase=9010,interface=lab0,start-timeout=7,receive-timeout=3", &o), 0);
	CHECK_EQ_INT(o.portbase, 9010);
	CHECK_EQ_STR(o.interface, "lab0");
	CHECK_EQ_INT(o.start_timeout, 7);
	CHECK_EQ_INT(o.receive_timeout, 3);
	/* Any order; a key not given keeps its default. */
	CHECK_EQ_INT(parse("receive-timeout=3600,portbase=1024", &o), 0);
	CHECK_EQ_INT(o.portbase, 1024);
	CHECK_EQ_STR(o.interface, "");
	CHECK_EQ_INT(o.start_timeout, 20);
	CHECK_EQ_INT(o.receive_timeout, 3600);
	CHECK_EQ_INT(parse("interface=abcdefghijklmno", &o), 0);
	CHECK_EQ_STR(o.interface, "abcdefghijklmno");
	CHECK_EQ_INT(parse("start-timeout=1,receive-timeout=1,portbase=65534", &o), 0);
	CHECK_EQ_INT(o.start_timeout, 1);
	CHECK_EQ_INT(o.receive_timeout, 1);
	CHECK_EQ_INT(o.portbase, 65534);
	/* Leading zeros are digits like any other. */
	CHECK_EQ_INT(parse("start-timeout=0030", &o), 0);
	CHECK_EQ_INT(o.start_timeout, 30);
}

static void parse_portbase_bounds(void)
{
	static const char *const bad[] = {
		"portbase=9001", "portbase=1023", "portbase=1022", "portbase=0", "portbase=65535",
		"portbase=65536", "portbase=4294967296", "portbase=99999999998", "portbase=-9000",
		"portbase=+9000", "portbase= 9000", "portbase=9000 ", "portbase=9000x",
		"portbase=0x2328", "portbase=9e3",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		refused(bad[i], "is not an even number from 1024 to 65534");
}

static void parse_timeout_bounds(void)
{
	static const char *const bad[] = {
		"start-timeout=0", "start-timeout=3601", "start-timeout=1.5", "start-timeout=-1",
		"start-timeout=999999999", "start-timeout=4294967297", "receive-timeout=0",
		"receive-timeout=3601", "receive-timeout=99999", "receive-timeout=10x",
		"receive-timeout=2h",
	};
	struct udpcast_opts o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		refused(bad[i], "is not a number of seconds from 1 to 3600");
	/* the one duration grammar: a unit may follow */
	CHECK_EQ_INT(parse("start-timeout=1m,receive-timeout=10s", &o), 0);
	CHECK_EQ_INT(o.start_timeout, 60);
	CHECK_EQ_INT(o.receive_timeout, 10);
	refused("start-timeout=0", "start-timeout '0'");
	refused("receive-timeout=3601", "receive-timeout '3601'");
}

static void parse_refusals(void)
{
	char big[300];

	/* A key given twice, whether the values agree or not. */
	refused("portbase=9000,portbase=9002", "portbase given twice");
	refused("interface=eth0,interface=eth0", "interface given twice");
	refused("start-timeout=5,receive-timeout=5,start-timeout=5", "start-timeout given twice");
	refused("receive-timeout=5,receive-timeout=6", "receive-timeout given twice");
	/* Unknown keys, names are exact. */
	refused("foo=1", "unknown option 'foo'");
	refused("Portbase=9000", "unknown option 'Portbase'");
	refused("port=9000", "unknown option 'port'");
	refused("portbase =9000", "unknown option 'portbase '");
	/* Not KEY=VALUE: no '=', no key, no value, empty items. */
	refused("portbase", "'portbase' is not KEY=VALUE");
	refused("=9000", "'=9000' is not KEY=VALUE");
	refused("=", "is not KEY=VALUE");
	refused("portbase=", "'portbase=' is not KEY=VALUE");
	refused("interface=", "is not KEY=VALUE");
	refused("portbase=9000,", "'' is not KEY=VALUE");
	refused(",", "is not KEY=VALUE");
	refused(",portbase=9000", "'' is not KEY=VALUE");
	refused("start-timeout,receive-timeout=5", "'start-timeout' is not KEY=VALUE");
	refused(",portbase=9000", "udpcast: ");
	refused("portbase=9000,,start-timeout=5", "udpcast: ");
	/* An item without '=' followed by one with it: refused, the value
	 * never given to the first key. */
	refused("start-timeout,receive-timeout=5", "udpcast: ");
	refused("interface,portbase=9000", "udpcast: ");
	/* A value with '=' in it is not a number or a name. */
	refused("start-timeout=5=5", "is not a number of seconds");
	refused("interface=a=b", "is not a network interface name");
	refused("interface=-x", "interface '-x' is not a network interface name");
	refused("interface=abcdefghijklmnop", "is not a network interface name");
	refused("interface=..", "is not a network interface name");
	/* Too long: 256 characters and more, before anything is parsed. */
	memset(big, 'a', sizeof(big));
	big[256] = '\0';
	refused(big, "udpcast options too long");
	big[299] = '\0';
	big[256] = 'a';
	refused(big, "udpcast options too long");
	/* 255 characters are parsed (and this one is unknown). */
	memcpy(big, "foo=", 4);
	big[255] = '\0';
	refused(big, "unknown option 'foo'");
}

static void parse_small_err(void)
{
	struct udpcast_opts o;
	char e[8];

	/* The reason is cut to the buffer, never past it. */
	memset(e, 'x', sizeof(e));
	CHECK_EQ_INT(udpcast_parse("portbase=1", &o, e, sizeof(e)), -EINVAL);
	CHECK_EQ_STR(e, "udpcast");
	CHECK_EQ_INT(udpcast_parse("portbase=1", &o, NULL, 0), -EINVAL);
	CHECK_EQ_INT(udpcast_parse("portbase=9000", &o, NULL, 0), 0);
}

static void ifnames(void)
{
	CHECK(!udpcast_ifname_ok(""));
	CHECK(udpcast_ifname_ok("a"));
	CHECK(udpcast_ifname_ok("0"));
	CHECK(udpcast_ifname_ok("abcdefghijklmno"));    /* 15: IFNAMSIZ - 1 */
	CHECK(!udpcast_ifname_ok("abcdefghijklmnop"));  /* 16 */
	CHECK(!udpcast_ifname_ok("abcdefghijklmnopqrstuvwxyz"));
	CHECK(udpcast_ifname_ok("eth0"));
	CHECK(udpcast_ifname_ok("enp0s31f6"));
	CHECK(udpcast_ifname_ok("eth0.100"));
	CHECK(udpcast_ifname_ok("eth0:1"));
	CHECK(udpcast_ifname_ok("br_lab"));
	CHECK(udpcast_ifname_ok("lab-0"));
	CHECK(udpcast_ifname_ok("ETH0"));
	CHECK(udpcast_ifname_ok("..."));
	CHECK(udpcast_ifname_ok(".a"));
	CHECK(!udpcast_ifname_ok("-"));
	CHECK(!udpcast_ifname_ok("-eth0"));
	CHECK(!udpcast_ifname_ok("--help"));
	CHECK(!udpcast_ifname_ok("."));
	CHECK(!udpcast_ifname_ok(".."));
	CHECK(!udpcast_ifname_ok("a b"));
	CHECK(!udpcast_ifname_ok("a/b"));
	CHECK(!udpcast_ifname_ok("a\tb"));
	CHECK(!udpcast_ifname_ok("a\nb"));
	CHECK(!udpcast_ifname_ok("a,b"));
	CHECK(!udpcast_ifname_ok("a=b"));
	CHECK(!udpcast_ifname_ok("a;b"));
	CHECK(!udpcast_ifname_ok("$(x)"));
	CHECK(!udpcast_ifname_ok("eth\xc3\xa9"));
	CHECK(!udpcast_ifname_ok("a*"));
}

/* argv joined with '|' */
static void join(const char *const *argv, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (; *argv && n < len; argv++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "|" : "", *argv);
}

static void receiver_argv(void)
{
	struct udpcast_opts o;
	const char *argv[16];
	char num[32], line[256];

	CHECK_EQ_INT(parse(NULL, &o), 0);
	memset(argv, 0xa5, sizeof(argv));
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, ARRAY_SIZE(argv), num, sizeof(num)), 8);
	CHECK(argv[8] == NULL);
	join(argv, line, sizeof(line));
	CHECK_EQ_STR(line, "udp-receiver|--nokbd|--stat-period|5000|--start-timeout|20|"
		     "--receive-timeout|10");

	CHECK_EQ_INT(parse("portbase=9010,interface=lab0,start-timeout=7,receive-timeout=3", &o), 0);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, ARRAY_SIZE(argv), num, sizeof(num)), 12);
	CHECK(argv[12] == NULL);
	join(argv, line, sizeof(line));
	CHECK_EQ_STR(line, "udp-receiver|--nokbd|--stat-period|5000|--start-timeout|7|"
		     "--receive-timeout|3|--portbase|9010|--interface|lab0");
	/* The interface is the option's own string, not a copy. */
	CHECK(argv[11] == o.interface);

	/* The largest numbers fit in the smallest room allowed. */
	CHECK_EQ_INT(parse("portbase=65534,interface=abcdefghijklmno,start-timeout=3600,"
			   "receive-timeout=3600", &o), 0);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, 14, num, 24), 12);
	join(argv, line, sizeof(line));
	CHECK_EQ_STR(line, "udp-receiver|--nokbd|--stat-period|5000|--start-timeout|3600|"
		     "--receive-timeout|3600|--portbase|65534|--interface|abcdefghijklmno");
}

static void receiver_argv_room(void)
{
	struct udpcast_opts o;
	const char *argv[16];
	char num[32];

	CHECK_EQ_INT(parse(NULL, &o), 0);
	memset(argv, 0, sizeof(argv));
	/* Too little room is refused before anything is written, even for
	 * options that would fit. */
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, 13, num, sizeof(num)), -ENOSPC);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, 0, num, sizeof(num)), -ENOSPC);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, ARRAY_SIZE(argv), num, 23), -ENOSPC);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, ARRAY_SIZE(argv), num, 0), -ENOSPC);
	CHECK(argv[0] == NULL);
	CHECK_EQ_INT(udpcast_receiver_argv(&o, argv, 14, num, 24), 8);
}

/* ---- stand-in programs ---- */

/* bin/NAME: records its arguments ('|' after each) in args, then runs
 * body. */
static void stand_in(const char *name, const char *body)
{
	char p[256], script[512];
	int fd;

	snprintf(script, sizeof(script),
		 "#!/bin/sh\nprintf '%%s|' \"$@\" >>'%s'\necho >>'%s'\n%s\n", args, args, body);
	snprintf(p, sizeof(p), "%s/%s", bin, name);
	(void)unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, script, strlen(script)), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
	(void)unlink(args);
}

/* What the stand-ins were given, "" when they never ran. */
static const char *recorded(void)
{
	static char buf[1024];

	if (read_str_abs(args, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	return buf;
}

static void source_runs_receiver(void)
{
	struct udpcast_opts o;
	struct udpcast_rx rx;
	char buf[256];
	ssize_t n;
	int fd = -1;

	stand_in("udp-receiver", "echo image");
	CHECK_EQ_INT(parse("portbase=9010,interface=lab0,start-timeout=7,receive-timeout=3", &o), 0);
	CHECK_EQ_INT(udpcast_rx_start(&rx, &o, &fd, err, sizeof(err)), 0);
	CHECK(fd >= 0);
	n = read_full(fd, buf, sizeof(buf) - 1);
	CHECK_EQ_INT(n, 6);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_EQ_STR(buf, "image\n");
	CHECK_EQ_INT(udpcast_rx_end(&rx, err, sizeof(err)), 0);
	(void)close(fd);
	udpcast_rx_stop(&rx);
	CHECK_EQ_STR(recorded(), "--nokbd|--stat-period|5000|--start-timeout|7|--receive-timeout|3|"
		     "--portbase|9010|--interface|lab0|");

	/* The whole stream, then a failure: the load must fail. */
	stand_in("udp-receiver", "echo image; exit 3");
	CHECK_EQ_INT(udpcast_rx_start(&rx, &o, &fd, err, sizeof(err)), 0);
	n = read_full(fd, buf, sizeof(buf) - 1);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_INT(udpcast_rx_end(&rx, err, sizeof(err)), -EIO);
	CHECK(strstr(err, "udp-receiver failed (exit 3)") != NULL);
	CHECK(strstr(err, "within 7 s") != NULL);
	(void)close(fd);
	udpcast_rx_stop(&rx);

	/* One that never ends is stopped. */
	stand_in("udp-receiver", "exec /bin/sleep 60");
	CHECK_EQ_INT(udpcast_rx_start(&rx, &o, &fd, err, sizeof(err)), 0);
	(void)close(fd);
	udpcast_rx_stop(&rx);
	CHECK_EQ_INT(udpcast_rx_end(&rx, err, sizeof(err)), 0);   /* nothing runs */

	/* None at all. */
	snprintf(buf, sizeof(buf), "%s/udp-receiver", bin);
	CHECK_EQ_INT(unlink(buf), 0);
	CHECK_EQ_INT(udpcast_rx_start(&rx, &o, &fd, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "cannot run udp-receiver") != NULL);
}

/* ramboot serve ARGS... (NULL-terminated); its stdout and stderr out of
 * the way of the test's output. */
static int serve(const char *a, ...)
{
	char *argv[32];
	int argc = 0, rc, out, errfd, null;
	va_list ap;

	argv[argc++] = strdup("serve");
	va_start(ap, a);
	for (; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = strdup(a);
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	out = dup(STDOUT_FILENO);
	errfd = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY);
	(void)dup2(null, STDOUT_FILENO);
	(void)dup2(null, STDERR_FILENO);
	(void)close(null);
	rc = cmd_serve(argc, argv);
	fflush(stdout);
	fflush(stderr);
	(void)dup2(out, STDOUT_FILENO);
	(void)dup2(errfd, STDERR_FILENO);
	(void)close(out);
	(void)close(errfd);
	while (argc--)
		free(argv[argc]);
	return rc;
}

static void serve_sender_argv(void)
{
	char want[512];

	stand_in("udp-sender", "exit 0");
	CHECK_EQ_INT(serve("--once", img, NULL), RB_EXIT_OK);
	snprintf(want, sizeof(want), "--file|%s|--nokbd|--min-receivers|1|--retries-until-drop|30|",
		 img);
	CHECK_EQ_STR(recorded(), want);

	(void)unlink(args);
	CHECK_EQ_INT(serve("--once", "--rate=5Mbit", "--min-receivers=4", "--max-wait=30",
			   "--portbase=9010", "--interface=lab0", "--fec=8x8/128", img, NULL), RB_EXIT_OK);
	snprintf(want, sizeof(want), "--file|%s|--nokbd|--min-receivers|4|--max-wait|30|--portbase|"
		 "9010|--interface|lab0|--max-bitrate|5000000|--fec|8x8/128|--retries-until-drop|30|",
		 img);
	CHECK_EQ_STR(recorded(), want);

	/* The largest numbers, in the order udp-sender gets them whatever
	 * the order given. */
	(void)unlink(args);
	CHECK_EQ_INT(serve("--fec=128x128/1024", "--portbase=65534", "--max-wait=86400",
			   "--min-receivers=10000", "--rate=999999999", "--interface=abcdefghijklmno",
			   "--once", img, NULL), RB_EXIT_OK);
	snprintf(want, sizeof(want), "--file|%s|--nokbd|--min-receivers|10000|--max-wait|86400|"
		 "--portbase|65534|--interface|abcdefghijklmno|--max-bitrate|999999999|--fec|"
		 "128x128/1024|--retries-until-drop|30|", img);
	CHECK_EQ_STR(recorded(), want);

	/* --once: a failed session is the command's failure. */
	stand_in("udp-sender", "exit 3");
	CHECK_EQ_INT(serve("--once", img, NULL), RB_EXIT_FAIL);
	CHECK(recorded()[0] != '\0');
}

/* Each option value is refused (usage, exit 2) before udp-sender runs. */
static void serve_refused(const char *opt)
{
	int rc;

	(void)unlink(args);
	rc = serve("--once", opt, img, NULL);
	if (rc != RB_EXIT_USAGE || recorded()[0]) {
		printf("#   serve %s: exit %d%s, expected 2\n", opt, rc,
		       recorded()[0] ? ", udp-sender ran" : "");
		tap_case_failed = 1;
	}
}

static void serve_accepted(const char *opt)
{
	int rc;

	(void)unlink(args);
	rc = serve("--once", opt, img, NULL);
	if (rc != RB_EXIT_OK || !recorded()[0]) {
		printf("#   serve %s: exit %d, expected 0 and a session\n", opt, rc);
		tap_case_failed = 1;
	}
}

static void serve_rates(void)
{
	static const char *const ok[] = {
		"--rate=100Mbit", "--rate=1Gbit/s", "--rate=500kbit", "--rate=12MiB/s",
		"--rate=1.5Gbit",
		/* the old spellings, deprecated: bits, k/m/g decimal */
		"--rate=1", "--rate=5m", "--rate=5M", "--rate=500k", "--rate=500K", "--rate=1g",
		"--rate=2G", "--rate=999999999", "--rate=0100m", "--rate=1000000000",
	};
	static const char *const bad[] = {
		"--rate=0", "--rate=000", "--rate=0m", "--rate=", "--rate=m", "--rate=5x",
		"--rate=5mm", "--rate=5 m", "--rate=-1", "--rate=+5", "--rate=1.5m",
		"--rate=12MB/s", "--rate=100Mbps", "--rate=12/s", "--rate=5T", "--rate=0Mbit",
		"--rate",
	};
	size_t i;

	stand_in("udp-sender", "exit 0");
	for (i = 0; i < ARRAY_SIZE(ok); i++)
		serve_accepted(ok[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		serve_refused(bad[i]);
}

static void serve_fecs(void)
{
	static const char *const ok[] = {
		"--fec=8x8", "--fec=8x8/128", "--fec=1x1/1", "--fec=128x128/1024", "--fec=08x8",
	};
	static const char *const bad[] = {
		"--fec=", "--fec=8", "--fec=8x", "--fec=x8", "--fec=8x8/", "--fec=0x8", "--fec=8x0",
		"--fec=129x8", "--fec=8x129", "--fec=8x8/0", "--fec=8x8/1025", "--fec=8x8/128/1",
		"--fec=8y8", "--fec=8x8/128x", "--fec=8/8", "--fec=-8x8", "--fec=8x8x8", "--fec=8x8x",
		"--fec=00000000000000000008x8", "--fec=99999999999x8",
	};
	size_t i;

	stand_in("udp-sender", "exit 0");
	for (i = 0; i < ARRAY_SIZE(ok); i++)
		serve_accepted(ok[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		serve_refused(bad[i]);
}

static void serve_numbers(void)
{
	static const char *const ok[] = {
		"--min-receivers=1", "--min-receivers=10000", "--max-wait=1", "--max-wait=86400",
		"--portbase=1024", "--portbase=65534", "--interface=eth0.100", "--verbose",
		"--max-wait=1m",
	};
	static const char *const bad[] = {
		"--min-receivers=0", "--min-receivers=10001", "--min-receivers=-1",
		"--min-receivers=", "--max-wait=0", "--max-wait=86401", "--max-wait=1.5",
		"--portbase=9001", "--portbase=1022", "--portbase=65535", "--portbase=65536",
		"--interface=-i", "--interface=..", "--interface=abcdefghijklmnop",
		"--interface=a b", "--interface=", "--interface=nosuch0", "--bogus", "-x",
	};
	size_t i;

	stand_in("udp-sender", "exit 0");
	for (i = 0; i < ARRAY_SIZE(ok); i++)
		serve_accepted(ok[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		serve_refused(bad[i]);
	rb_verbose = 0;
}

static void serve_image(void)
{
	char missing[160];

	stand_in("udp-sender", "exit 0");
	/* One IMAGE, no more, no less. */
	CHECK_EQ_INT(serve("--once", NULL), RB_EXIT_USAGE);
	CHECK_EQ_INT(serve("--once", img, img, NULL), RB_EXIT_USAGE);
	/* Missing, or not a file: a runtime error. */
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	CHECK_EQ_INT(serve("--once", missing, NULL), RB_EXIT_FAIL);
	CHECK_EQ_INT(serve("--once", dir, NULL), RB_EXIT_FAIL);
	CHECK_EQ_STR(recorded(), "");
	/* --help is no session. */
	CHECK_EQ_INT(serve("--help", NULL), RB_EXIT_OK);
	CHECK_EQ_STR(recorded(), "");
}

static bool mkdir_p(const char *path)
{
	char p[256], *c;

	snprintf(p, sizeof(p), "%s", path);
	for (c = p + 1; (c = strchr(c, '/')) != NULL; c++) {
		*c = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return false;
		*c = '/';
	}
	return mkdir(p, 0755) == 0 || errno == EEXIST;
}

static bool mkdir_in(const char *parent, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", parent, name);
	return mkdir(p, 0755) == 0 || errno == EEXIST;
}

int main(void)
{
	const char *old = getenv("PATH");
	char *save = old ? strdup(old) : NULL;
	char cmd[64];
	int fd;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(img, sizeof(img), "%s/image", dir);
	snprintf(args, sizeof(args), "%s/args", dir);
	if (mkdir(bin, 0755) < 0 || (fd = open(img, O_WRONLY | O_CREAT, 0644)) < 0 ||
	    write_all(fd, "image\n", 6) < 0 || close_checked(fd) < 0) {
		perror(dir);
		return 1;
	}
	/* The stand-ins only: no real udpcast is run. */
	setenv("PATH", bin, 1);
	/* serve --interface= must name an interface of this machine: a
	 * fixture root's, under /sys/class/net. */
	snprintf(cmd, sizeof(cmd), "%s/sys/class/net", dir);
	if (!mkdir_p(cmd) || !mkdir_in(cmd, "lab0") || !mkdir_in(cmd, "eth0.100") ||
	    !mkdir_in(cmd, "abcdefghijklmno")) {
		perror(cmd);
		return 1;
	}
	setenv("RAMBOOT_ROOT", dir, 1);
	rb_root_init();

	RUN(parse_defaults);
	RUN(parse_every_key);
	RUN(parse_portbase_bounds);
	RUN(parse_timeout_bounds);
	RUN(parse_refusals);
	RUN(parse_small_err);
	RUN(ifnames);
	RUN(receiver_argv);
	RUN(receiver_argv_room);
	RUN(source_runs_receiver);
	RUN(serve_sender_argv);
	RUN(serve_rates);
	RUN(serve_fecs);
	RUN(serve_numbers);
	RUN(serve_image);

	if (save) {
		setenv("PATH", save, 1);
		free(save);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return TAP_DONE();
}
