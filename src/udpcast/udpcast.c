// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * udpcast: a whole lab fed by one multicast stream. udp-receiver on each
 * client writes the image to its stdout, which the loader reads like any
 * pipe (decompression, manifest and hashes as for every source);
 * `ramboot serve` runs udp-sender one session after the other.
 *
 * udp-receiver exits non-zero when no sender shows up within its start
 * timeout or the stream goes silent: the loader sees EOF, and the
 * receiver's exit status decides before DEST gets its name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/path.h"
#include "lib/units.h"
#include "udpcast/udpcast.h"

extern char **environ;

/* A whole number from lo to hi, nothing else (no sign, no spaces). */
static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned long v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -EINVAL;
	v = strtoul(s, NULL, 10);
	if (v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

bool udpcast_ifname_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > 15 || s[0] == '-' || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-") == n;
}

/* portbase: udpcast uses it and the next port; it must be even. */
static int parse_portbase(const char *s, unsigned *out)
{
	if (parse_uint(s, 1024, 65534, out) < 0 || (*out & 1))
		return -EINVAL;
	return 0;
}

int udpcast_parse(const char *spec, struct udpcast_opts *o, char *err, size_t errlen)
{
	char buf[256], *p, *next;
	unsigned seen = 0;

	memset(o, 0, sizeof(*o));
	o->start_timeout = UDPCAST_START_TIMEOUT;
	o->receive_timeout = UDPCAST_RECEIVE_TIMEOUT;
	if (!spec || !*spec)
		return 0;
	if (strlen(spec) >= sizeof(buf))
		return rb_errfmt(err, errlen, -EINVAL, "udpcast options too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	for (p = buf; p; p = next) {
		char *val;
		unsigned bit;
		int rc = 0;

		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		val = strchr(p, '=');
		if (!val || val == p || !val[1])
			return rb_errfmt(err, errlen, -EINVAL, "udpcast: '%s' is not KEY=VALUE", p);
		*val++ = '\0';
		if (!strcmp(p, "portbase")) {
			bit = 1;
			if (parse_portbase(val, &o->portbase) < 0)
				return rb_errfmt(err, errlen, -EINVAL, "udpcast: portbase '%s' is not an "
						 "even number from 1024 to 65534", val);
		} else if (!strcmp(p, "interface")) {
			bit = 2;
			if (!udpcast_ifname_ok(val))
				return rb_errfmt(err, errlen, -EINVAL, "udpcast: interface '%s' is not "
						 "a network interface name", val);
			snprintf(o->interface, sizeof(o->interface), "%s", val);
		} else if (!strcmp(p, "start-timeout")) {
			bit = 4;
			rc = duration_secs(val, 1, 3600, &o->start_timeout);
		} else if (!strcmp(p, "receive-timeout")) {
			bit = 8;
			rc = duration_secs(val, 1, 3600, &o->receive_timeout);
		} else {
			return rb_errfmt(err, errlen, -EINVAL, "udpcast: unknown option '%s' (portbase, "
					 "interface, start-timeout, receive-timeout)", p);
		}
		if (rc < 0)
			return rb_errfmt(err, errlen, -EINVAL, "udpcast: %s '%s' is not a number of "
					 "seconds from 1 to 3600", p, val);
		if (seen & bit)
			return rb_errfmt(err, errlen, -EINVAL, "udpcast: %s given twice", p);
		seen |= bit;
	}
	return 0;
}

int udpcast_receiver_argv(const struct udpcast_opts *o, const char **argv, size_t room,
			  char *num, size_t numlen)
{
	size_t n = 0;
	int len;

	/* 10 entries at most and three numbers of up to 6 digits. */
	if (room < 14 || numlen < 24)
		return -ENOSPC;
	argv[n++] = "udp-receiver";
	argv[n++] = "--nokbd";          /* stdin is no keyboard */
	argv[n++] = "--stat-period";    /* progress on stderr every 5 s (ms) */
	argv[n++] = "5000";
	len = snprintf(num, numlen, "%u", o->start_timeout);
	argv[n++] = "--start-timeout";
	argv[n++] = num;
	num += len + 1;
	numlen -= (size_t)len + 1;
	len = snprintf(num, numlen, "%u", o->receive_timeout);
	argv[n++] = "--receive-timeout";
	argv[n++] = num;
	num += len + 1;
	numlen -= (size_t)len + 1;
	if (o->portbase) {
		snprintf(num, numlen, "%u", o->portbase);
		argv[n++] = "--portbase";
		argv[n++] = num;
	}
	if (o->interface[0]) {
		argv[n++] = "--interface";
		argv[n++] = o->interface;
	}
	argv[n] = NULL;
	return (int)n;
}

/* Start argv[0] (searched in $PATH) with stdin from /dev/null and stdout
 * to out_fd (-1: ours), every signal at its default and unblocked (the
 * loader blocks them in its threads). */
static int spawn(const char *const *argv, int out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rc;

	sigemptyset(&none);
	sigfillset(&all);
	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return -rc;
	rc = posix_spawnattr_init(&at);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return -rc;
	}
	rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!rc && out_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&at, &all);
	if (!rc)
		rc = posix_spawnattr_setpgroup(&at, 0);
	/* A process group of its own: udp-receiver signals its whole
	 * group when it gives up, which must not reach us or our caller. */
	if (!rc)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					      POSIX_SPAWN_SETPGROUP);
	/* posix_spawnp reports a failed exec as its result (glibc >= 2.24). */
	if (!rc)
		rc = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -rc;
}

/* "exit 3", "killed by signal 9" */
static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %#x", status);
}

/* Wait up to ms for pid; 1 with *status when it exited, 0 if it still
 * runs, -errno. */
static int wait_ms(pid_t pid, long ms, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (ms <= 0)
			return 0;
		nap_ms(ms < 50 ? ms : 50);
		ms -= 50;
	}
}

/* ---- the receiver: the stream a source reads (source/source.h) ---- */

int udpcast_rx_start(struct udpcast_rx *rx, const struct udpcast_opts *o, int *fd, char *err,
		     size_t errlen)
{
	const char *argv[16];
	char num[32];
	int p[2], rc;

	rx->o = *o;
	rx->pid = 0;
	if (udpcast_receiver_argv(&rx->o, argv, ARRAY_SIZE(argv), num, sizeof(num)) < 0)
		return rb_errfmt(err, errlen, -EINVAL, "udpcast: too many options");
	if (pipe2(p, O_CLOEXEC) < 0)
		return rb_errfmt(err, errlen, -errno, "udpcast: pipe: %s", strerror(errno));
	rc = spawn(argv, p[1], &rx->pid);
	(void)close(p[1]);
	if (rc < 0) {
		(void)close(p[0]);
		rx->pid = 0;
		return rb_errfmt(err, errlen, rc, "udpcast: cannot run udp-receiver: %s",
				 strerror(-rc));
	}
	rb_debug("udp-receiver started, pid %d", (int)rx->pid);
	*fd = p[0];
	return 0;
}

int udpcast_rx_end(struct udpcast_rx *rx, char *err, size_t errlen)
{
	char what[48];
	int status, rc;

	if (!rx->pid)
		return 0;
	/* Its stdout is closed: it exits at once, after its final ack. */
	rc = wait_ms(rx->pid, 10000, &status);
	if (rc <= 0)
		return rb_errfmt(err, errlen, -EIO, "udpcast: udp-receiver did not exit at the "
				 "end of the stream");
	rx->pid = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	describe_status(status, what, sizeof(what));
	return rb_errfmt(err, errlen, -EIO, "udpcast: udp-receiver failed (%s): no sender "
			 "within %u s, or the stream stopped for %u s", what, rx->o.start_timeout,
			 rx->o.receive_timeout);
}

void udpcast_rx_stop(struct udpcast_rx *rx)
{
	int status;

	if (!rx->pid)
		return;
	if (wait_ms(rx->pid, 0, &status) == 0) {
		(void)kill(rx->pid, SIGTERM);
		if (wait_ms(rx->pid, 2000, &status) == 0) {
			(void)kill(rx->pid, SIGKILL);
			(void)wait_ms(rx->pid, 5000, &status);
		}
	}
	rx->pid = 0;
}

/* ---- ramboot serve ---- */

/* --fec: INTERLEAVExREDUNDANCY[/STRIPESIZE], small whole numbers. */
static bool fec_ok(const char *s)
{
	unsigned a, b, c = 1;
	int end = -1;

	if (strspn(s, "0123456789x/") != strlen(s) || strlen(s) > 20)
		return false;
	/* AxB or AxB/C and nothing after it: %n marks where each form ends. */
	if (sscanf(s, "%ux%u%n/%u%n", &a, &b, &end, &c, &end) < 2 || end < 0 || s[end])
		return false;
	return a >= 1 && a <= 128 && b >= 1 && b <= 128 && c >= 1 && c <= 1024;
}

/* A receiver that stops answering is dropped after this many REQACKs
 * unanswered (udp-sender's own default, 200, holds the whole session
 * for minutes while the others wait, and their receive-timeout ends
 * them first). */
#define SERVE_RETRIES_UNTIL_DROP 30
/* Consecutive sessions that fail at once before serve gives up (exit 1)
 * instead of failing every 2 s for ever. */
#define SERVE_QUICK_FAILS 5

struct serve_opts {
	const char *image, *fec, *interface;
	uint64_t rate;                  /* bits per second, 0: no cap */
	unsigned min_receivers, max_wait, portbase, retries;
	bool once, have_max_wait;
};

static int sender_argv(const struct serve_opts *s, const char **argv, char num[5][24])
{
	int n = 0;

	argv[n++] = "udp-sender";
	argv[n++] = "--file";
	argv[n++] = s->image;
	argv[n++] = "--nokbd";
	snprintf(num[0], 24, "%u", s->min_receivers);
	argv[n++] = "--min-receivers";
	argv[n++] = num[0];
	if (s->have_max_wait) {
		snprintf(num[1], 24, "%u", s->max_wait);
		argv[n++] = "--max-wait";
		argv[n++] = num[1];
	}
	if (s->portbase) {
		snprintf(num[2], 24, "%u", s->portbase);
		argv[n++] = "--portbase";
		argv[n++] = num[2];
	}
	if (s->interface) {
		argv[n++] = "--interface";
		argv[n++] = s->interface;
	}
	if (s->rate) {
		snprintf(num[3], 24, "%" PRIu64, s->rate);
		argv[n++] = "--max-bitrate";
		argv[n++] = num[3];
	}
	if (s->fec) {
		argv[n++] = "--fec";
		argv[n++] = s->fec;
	}
	snprintf(num[4], 24, "%u", s->retries);
	argv[n++] = "--retries-until-drop";
	argv[n++] = num[4];
	argv[n] = NULL;
	return n;
}

/* One session: 0 when udp-sender exited 0, -EIO when it failed, -EINTR
 * (with *signo) when a signal ended it. */
static int serve_session(const struct serve_opts *s, const sigset_t *set, int *signo)
{
	const char *argv[24];
	char num[5][24], what[48];
	struct timespec tick = { 0, 200 * 1000 * 1000 };
	pid_t pid;
	int status, rc;

	sender_argv(s, argv, num);
	rc = spawn(argv, -1, &pid);
	if (rc < 0) {
		rb_err("cannot run udp-sender: %s", strerror(-rc));
		return rc;
	}
	for (;;) {
		int sig = sigtimedwait(set, NULL, &tick);

		if (sig > 0 && sig != SIGCHLD) {
			*signo = sig;
			(void)kill(pid, SIGTERM);
			if (wait_ms(pid, 3000, &status) == 0) {
				(void)kill(pid, SIGKILL);
				(void)wait_ms(pid, 5000, &status);
			}
			return -EINTR;
		}
		rc = wait_ms(pid, 0, &status);
		if (rc < 0)
			return rc;
		if (rc == 1)
			break;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	describe_status(status, what, sizeof(what));
	rb_warn("udp-sender failed (%s)", what);
	return -EIO;
}

enum { O_RATE = 256, O_MINRX, O_MAXWAIT, O_PORT, O_IF, O_FEC, O_ONCE, O_DROP };

static const struct rb_optset serve_optset = {
	.head = "Usage: ramboot serve [OPTIONS] IMAGE\n"
		"\n"
		"Send IMAGE to every client that runs 'ramboot load --udpcast' in one\n"
		"multicast stream: udp-sender sessions, one after the other.\n"
		"\n"
		"Options:\n",
	.opts = RB_OPTS(
		{ "rate", O_RATE, "=RATE",
		  "at most RATE on the wire (500Mbit, 1Gbit, 50MiB/s;\n"
		  "udp-sender --max-bitrate); default: no cap" },
		{ "min-receivers", O_MINRX, "=N",
		  "start a session once N clients have joined\n"
		  "(default 1)" },
		{ "max-wait", O_MAXWAIT, "=S",
		  "start anyway S seconds after the first client\n"
		  "joined, with fewer than N (default with N > 1: 10;\n"
		  "keep it below the clients' start-timeout, 20)" },
		{ "portbase", O_PORT, "=P",
		  "the even UDP port base, P and P+1 (default 9000)" },
		{ "interface", O_IF, "=IF",
		  "the network interface, which must exist (default:\n"
		  "udpcast's choice, an interface with an IPv4 address,\n"
		  "one with a link first)" },
		{ "retries-until-drop", O_DROP, "=N",
		  "drop a client that left the session after N\n"
		  "unanswered requests, the others go on (default 30)" },
		{ "fec", O_FEC, "=SPEC",
		  "forward error correction, INTERLEAVExREDUNDANCY[/STRIPE]\n"
		  "(8x8/128)" },
		{ "once", O_ONCE, NULL,
		  "one session, then exit with its outcome" },
		RB_OPT_VERBOSE,
		RB_OPT_HELP),
	.tail = "\n"
		"SIGTERM, SIGINT or SIGHUP ends the running session and the command (exit 0).\n"
		"Exit codes: 0 ok, 1 runtime error (with --once: the session failed), 2 usage.\n",
	.indent = 6, .col = 24,
};

/* An option of serve that takes a value, into s: NULL, or what the
 * value should have been. */
static const char *serve_opt(struct serve_opts *s, int opt, const char *arg)
{
	switch (opt) {
	case O_MINRX:
		return parse_uint(arg, 1, 10000, &s->min_receivers) == 0 ? NULL :
		       "a number from 1 to 10000";
	case O_MAXWAIT:
		s->have_max_wait = true;
		return duration_secs(arg, 1, 86400, &s->max_wait) == 0 ? NULL :
		       "a duration of whole seconds from 1 s to 1 d (20, 1m)";
	case O_PORT:
		return parse_portbase(arg, &s->portbase) == 0 ? NULL :
		       "an even number from 1024 to 65534";
	case O_IF:
		s->interface = arg;
		return udpcast_ifname_ok(arg) ? NULL : "a network interface name";
	case O_DROP:
		return parse_uint(arg, 1, 10000, &s->retries) == 0 ? NULL :
		       "a number from 1 to 10000";
	case O_FEC:
		s->fec = arg;
		return fec_ok(arg) ? NULL : "INTERLEAVExREDUNDANCY[/STRIPESIZE] (8x8/128)";
	default:
		return NULL;   /* not one of them */
	}
}

static bool net_interface_exists(const char *name)
{
	char p[PATH_MAX];

	return rb_path(p, sizeof(p), "/sys/class/net/%s", name) == 0 && access(p, F_OK) == 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts s = { .min_receivers = 1, .retries = SERVE_RETRIES_UNTIL_DROP };
	sigset_t set, old;
	struct stat st;
	unsigned long session = 0;
	unsigned quick = 0;
	struct rb_getopt g = { .set = &serve_optset };
	int c, rc = 0, signo = 0;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		const char *want;

		switch (c) {
		case O_RATE:
			if (rate_arg("serve", "rate", optarg, UNIT_BITS, &s.rate) < 0)
				return RB_EXIT_USAGE;
			if (s.rate == 0)
				return rb_usage("serve", "--rate: '%s' is no rate (no cap: leave --rate "
						   "out)", optarg);
			break;
		case O_ONCE: s.once = true; break;
		case 'v': rb_verbose = 1; break;
		case 'h': rb_opts_usage(stdout, &serve_optset); return RB_EXIT_OK;
		case O_MINRX: case O_MAXWAIT: case O_PORT: case O_IF: case O_FEC: case O_DROP:
			want = serve_opt(&s, c, optarg);
			if (want)
				return rb_usage("serve", "--%s: '%s' is not %s", g.opt->name, optarg,
						want);
			break;
		default:
			return rb_usage_option("serve", argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("serve", "need one IMAGE");
	s.image = argv[optind];
	/* udp-sender fails such a session at once, and again, for ever.
	 * The kernel lists its interfaces in /sys/class/net (under the root
	 * prefix: a fixture's). */
	if (s.interface && !net_interface_exists(s.interface))
		return rb_usage("serve", "--interface: no network interface '%s' here "
				   "('ip -br link' lists them)", s.interface);
	/* A client waits start-timeout for a session; the sender waits
	 * max-wait after the first one joined: a room with fewer than
	 * min-receivers clients gets a session only if max-wait ends first. */
	if (s.min_receivers > 1 && !s.have_max_wait) {
		s.max_wait = UDPCAST_START_TIMEOUT / 2;
		s.have_max_wait = true;
	}
	if (s.have_max_wait && s.max_wait >= UDPCAST_START_TIMEOUT)
		rb_warn("--max-wait=%u: clients give up after their start-timeout, %u s by "
			"default: raise it above %u on the clients (ramboot.udpcast=start-timeout=S)",
			s.max_wait, UDPCAST_START_TIMEOUT, s.max_wait);
	if (stat(s.image, &st) < 0 || access(s.image, R_OK) < 0) {
		rb_err("%s: %s", s.image, strerror(errno));
		return RB_EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		rb_err("%s: not a file or block device", s.image);
		return RB_EXIT_FAIL;
	}
	/* The signals are taken in the loop, never in a handler. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (;;) {
		double t0 = now_sec();

		session++;
		rb_info("session %lu: sending %s (min-receivers %u)", session, s.image,
			s.min_receivers);
		rc = serve_session(&s, &set, &signo);
		if (rc == -EINTR)
			break;
		if (rc == 0)
			rb_info("session %lu done in %.1f s", session, now_sec() - t0);
		if (s.once)
			break;
		/* A session that fails at once (an interface without an
		 * address) is not retried in a busy loop, nor for ever. */
		quick = rc < 0 && now_sec() - t0 < 2.0 ? quick + 1 : 0;
		if (quick >= SERVE_QUICK_FAILS) {
			rb_err("udp-sender failed %u times at once: giving up", quick);
			break;
		}
		if (quick) {
			struct timespec pause = { 2, 0 };
			int sig;

			while ((sig = sigtimedwait(&set, NULL, &pause)) == SIGCHLD)
				;
			if (sig > 0) {
				signo = sig;
				rc = -EINTR;
				break;
			}
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (rc == -EINTR) {
		rb_info("stopped by signal %d (%s)", signo, strsignal(signo));
		return RB_EXIT_OK;
	}
	return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}
