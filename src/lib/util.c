// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Messages, the root prefix, small-file helpers, sizes and retrying I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/ioprio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/ramboot.h"

int rb_verbose;
static const char *rb_cmd;
static char rb_rootbuf[PATH_MAX];
/* The kernel log, once rb_kmsg_open() found it: warnings and errors go
 * there too, so that `dmesg` and `journalctl -b` keep what a console
 * booted with `quiet splash` never shows. */
static int rb_kmsg_fd = -1;

void rb_set_cmd(const char *cmd)
{
	rb_cmd = cmd;
}

/* kmsg: the kernel log level of the record ('3', '4', '6'), 0: none. */
static void vmsg(const char *kind, char kmsg, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	/* One write per message: lines from threads never interleave. */
	n = snprintf(line, sizeof(line), "ramboot: %s%s%s", rb_cmd ? rb_cmd : "",
		     rb_cmd ? ": " : "", kind);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	/* One message, one line: a newline in a path or in a server's
	 * string would forge a second line (a console line, a report key
	 * read back from the log). */
	n = (int)text_escape(line, sizeof(line) - 1);
	line[n++] = '\n';
	(void)write_all(STDERR_FILENO, line, (size_t)n);
	if (rb_kmsg_fd >= 0 && kmsg) {
		char rec[sizeof(line) + 4];
		int m = snprintf(rec, sizeof(rec), "<%c>%.*s", kmsg, n, line);

		/* One record per write(2); a full ring or a slow console is
		 * never a reason to block the boot (O_NONBLOCK). */
		if (m > 0)
			(void)!write(rb_kmsg_fd, rec, (size_t)m < sizeof(rec) ? (size_t)m : sizeof(rec) - 1);
	}
}

void rb_kmsg_open(void)
{
	char p[PATH_MAX];
	struct stat st;
	int fd;

	if (rb_kmsg_fd >= 0 || rb_path(p, sizeof(p), "/dev/kmsg") < 0)
		return;
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return;
	/* The kernel's character device; a regular file only below a
	 * fixture root (RAMBOOT_ROOT), where the tests read it back. */
	if (fstat(fd, &st) < 0 || !(S_ISCHR(st.st_mode) || (rb_rootbuf[0] && S_ISREG(st.st_mode)))) {
		(void)close(fd);
		return;
	}
	rb_kmsg_fd = fd;
}

/* rb_err(), rb_warn(), rb_info(), rb_note(): vmsg() with the kind and
 * the kernel log level of each. "ramboot: load: error: ...": an error is
 * told from a report line (rb_info) on a console that shows both. */
#define MSG_FN(fn, kind, kmsg)                                                        \
	void fn(const char *fmt, ...)                                                 \
	{                                                                             \
		va_list ap;                                                           \
                                                                                      \
		va_start(ap, fmt);                                                    \
		vmsg(kind, kmsg, fmt, ap);                                            \
		va_end(ap);                                                           \
	}
MSG_FN(rb_err, "error: ", '3')
MSG_FN(rb_warn, "warning: ", '4')
MSG_FN(rb_info, "", 0)
MSG_FN(rb_note, "", '6')

int rb_usage(const char *cmd, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rb_err("%s (see 'ramboot %s --help')", msg, cmd);
	return RB_EXIT_USAGE;
}

int rb_usage_option(const char *cmd, char *const argv[])
{
	const char *arg = optind > 0 ? argv[optind - 1] : NULL;

	/* An unknown short option inside a group (-xv) leaves optind on
	 * the argument before: name the option itself then. */
	if (optopt > 0 && optopt < 256 &&
	    (!arg || arg[0] != '-' || (arg[1] != '-' && !strchr(arg + 1, optopt))))
		return rb_usage(cmd, "unknown or incomplete option '-%c'", optopt);
	return rb_usage(cmd, "unknown or incomplete option '%s'", arg ? arg : "?");
}

static bool is_help(const char *arg)
{
	return arg && (!strcmp(arg, "-h") || !strcmp(arg, "--help"));
}

int rb_subcmd_run(const char *cmd, const struct rb_subcmd *subs, size_t n,
		  void (*usage)(FILE *out), int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	char names[256];
	size_t i, len = 0;

	if (is_help(sub)) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	for (i = 0; sub && i < n; i++) {
		if (strcmp(sub, subs[i].name))
			continue;
		if (subs[i].noopts && argc == 3 && is_help(argv[2])) {
			usage(stdout);
			return RB_EXIT_OK;
		}
		return subs[i].fn(argc - 1, argv + 1);
	}
	if (sub)
		return rb_usage(cmd, "unknown command '%s'", sub);
	/* "need a, b or c" */
	names[0] = '\0';
	for (i = 0; i < n && len < sizeof(names); i++) {
		int w = snprintf(names + len, sizeof(names) - len, "%s%s",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ", subs[i].name);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	return rb_usage(cmd, "need %s", names);
}

int rb_errfmt(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void rb_debug(const char *fmt, ...)
{
	va_list ap;

	if (!rb_verbose)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", 0, fmt, ap);
	va_end(ap);
}

void rb_root_init(void)
{
	const char *r = getenv("RAMBOOT_ROOT");
	size_t n;

	rb_rootbuf[0] = '\0';
	if (!r || !*r)
		return;
	n = strlen(r);
	while (n > 1 && r[n - 1] == '/')
		n--;
	if (n == 1 && r[0] == '/')
		return;
	if (n >= sizeof(rb_rootbuf))
		n = sizeof(rb_rootbuf) - 1;
	memcpy(rb_rootbuf, r, n);
	rb_rootbuf[n] = '\0';
}

bool rb_root_is_real(void)
{
	return rb_rootbuf[0] == '\0';
}

int rb_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(rb_rootbuf);
	int m;

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, rb_rootbuf, n);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - n)
		return -ENAMETOOLONG;
	return 0;
}

static ssize_t read_str(const char *path, char *buf, size_t len, bool regular_only)
{
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (len == 0)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO planted at the name is not waited on, and
	 * then refused: a regular file is read (sysfs and procfs attributes
	 * are), and a character device unless regular_only (the tests'
	 * fixtures put /dev/full where an attribute fails its writes). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 :
	     S_ISCHR(st.st_mode) && !regular_only ? 0 : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (rc < 0) {
		(void)close(fd);
		return rc;
	}
	n = read_full(fd, buf, len - 1);
	rc = close_checked(fd);
	if (n < 0)
		return n;
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n;
}

ssize_t read_str_abs(const char *path, char *buf, size_t len)
{
	return read_str(path, buf, len, false);
}

ssize_t read_regular_abs(const char *path, char *buf, size_t len)
{
	return read_str(path, buf, len, true);
}

ssize_t rb_read_regular(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : read_regular_abs(p, buf, len);
}

int write_str_abs(const char *path, const char *val)
{
	int fd, rc, rc2;

	/* O_TRUNC is a no-op on sysfs and procfs and makes fixture files
	 * hold the last value written, as an attribute does. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, val, strlen(val));
	rc2 = close_checked(fd);
	return rc < 0 ? rc : rc2;
}

ssize_t rb_read_str(const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : read_str_abs(p, buf, len);
}

int rb_write_str(const char *path, const char *val)
{
	char p[PATH_MAX];
	int rc = rb_path(p, sizeof(p), "%s", path);

	return rc < 0 ? rc : write_str_abs(p, val);
}

int meminfo_parse(const char *text, const char *field, uint64_t *bytes)
{
	size_t flen = strlen(field);
	const char *line = text;

	while (line && *line) {
		unsigned long long kb;

		if (!strncmp(line, field, flen) && line[flen] == ':') {
			if (sscanf(line + flen + 1, " %llu", &kb) != 1 || kb > UINT64_MAX / 1024)
				return -EINVAL;
			*bytes = (uint64_t)kb * 1024;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int rb_meminfo(const char *field, uint64_t *bytes)
{
	char buf[8192];
	ssize_t n = rb_read_str("/proc/meminfo", buf, sizeof(buf));

	return n < 0 ? (int)n : meminfo_parse(buf, field, bytes);
}

/* ---- sizes and rates: the one grammar of docs/ramboot.md, "Units" ---- */

size_t size_unit(const char *s, uint64_t *mul, bool *old)
{
	static const char letters[] = "KMGT";
	const char *u;

	*old = false;
	*mul = 1;
	if (s[0] == 'B')
		return 1;
	if (!isalpha((unsigned char)s[0]) || !(u = strchr(letters, toupper((unsigned char)s[0]))))
		return 0;
	*mul = KiB << (10 * (u - letters));
	*old = s[0] != *u;
	if (s[1] == 'i' && s[2] == 'B')
		return 3;
	if (s[1] == 'i' || s[1] == 'B') {
		*old = true;
		return 2;
	}
	return 1;
}

const char *size_unit_name(uint64_t mul)
{
	switch (mul) {
	case KiB: return "KiB";
	case MiB: return "MiB";
	case GiB: return "GiB";
	case GiB * 1024: return "TiB";
	default: return "B";
	}
}

/* Digits, optionally a point and more digits: the whole part, the
 * fraction (0 <= frac < 1) and the length; 0 when there is no digit. */
static size_t unit_number(const char *s, uint64_t *whole, double *frac, bool *point)
{
	size_t i = 0, f;
	double scale = 0.1;

	*whole = 0;
	*frac = 0;
	*point = false;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (*whole > (UINT64_MAX - 9) / 10)
			*whole = UINT64_MAX;      /* too large: refused by the caller */
		else
			*whole = *whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (s[i] != '.')
		return i;
	for (f = i + 1; s[f] >= '0' && s[f] <= '9'; f++, scale /= 10)
		*frac += (s[f] - '0') * scale;
	if (f == i + 1 || (i == 0 && f == 1))
		return i;                        /* "5." or ".": not a number */
	*point = true;
	return f;
}

/* whole.frac * mul, rounded down; -ERANGE past 2^60 (a typo, whatever the
 * unit: no memory or link comes near it). */
static int unit_scale(uint64_t whole, double frac, uint64_t mul, uint64_t *out)
{
	const uint64_t max = 1ULL << 60;

	if (whole > max / mul)
		return -ERANGE;
	*out = whole * mul + (uint64_t)(frac * (double)mul);
	return *out > max ? -ERANGE : 0;
}

int size_parse(const char *s, enum unit_bare bare, uint64_t *out, char *note, size_t len)
{
	uint64_t whole, mul, v;
	double frac;
	bool point, old;
	size_t i = unit_number(s, &whole, &frac, &point), n;

	if (i == 0)
		goto bad;
	n = size_unit(s + i, &mul, &old);
	if (n == 0 && s[i] == 'b' && !s[i + 1] && !point) {
		n = 1;                           /* "4096b": bytes, an old spelling */
		old = true;
	}
	if (s[i + n])
		goto bad;
	if (n == 0) {
		if (whole == 0 && !point) {      /* 0 needs no unit */
			*out = 0;
			return 0;
		}
		mul = bare == UNIT_MIB ? MiB : 1;
		old = true;
	}
	if (point && mul == 1)
		return rb_errfmt(note, len, -EINVAL, "'%s': no fractions of a byte", s);
	if (unit_scale(whole, frac, mul, &v) < 0)
		return rb_errfmt(note, len, -ERANGE, "'%s' is too large", s);
	*out = v;
	if (!old)
		return 0;
	/* The same number with its unit; a number too long for note (a
	 * hundred digits) as the exact count of bytes instead. */
	if ((size_t)snprintf(note, len, "%.*s%s", (int)i, s, size_unit_name(mul)) >= len)
		snprintf(note, len, "%" PRIu64 "B", v);
	return 1;
bad:
	return rb_errfmt(note, len, -EINVAL, "'%s' is not a size (a number and a unit: 4096B, "
			 "512K, 256M, 1.5G, 2T)", s);
}

/* "Mbit", "kbit/s", "bit": a bit rate's decimal multiplier, 0 if s is not one. */
static uint64_t bit_unit(const char *s)
{
	uint64_t mul = 1;

	switch (*s) {
	case 'k': case 'K': mul = 1000; s++; break;
	case 'm': case 'M': mul = 1000 * 1000; s++; break;
	case 'g': case 'G': mul = 1000 * 1000 * 1000; s++; break;
	default: break;
	}
	if (strncmp(s, "bit", 3))
		return 0;
	s += 3;
	return !*s || !strcmp(s, "/s") ? mul : 0;
}

static const char *bit_unit_name(uint64_t mul)
{
	return mul == 1000 ? "kbit" : mul == 1000000 ? "Mbit" : mul == 1000000000 ? "Gbit" : "bit";
}

int rate_parse(const char *s, enum unit_bare bare, uint64_t *out, char *note, size_t len)
{
	uint64_t whole, mul, v;
	double frac;
	bool point, old = false, bits = false;
	size_t i = unit_number(s, &whole, &frac, &point), n, rest;

	if (i == 0)
		goto bad;
	rest = strlen(s + i);
	if ((mul = bit_unit(s + i))) {
		bits = true;
	} else if (rest >= 2 && !strcmp(s + i + rest - 2, "/s")) {
		n = size_unit(s + i, &mul, &old);
		if (n == 0 || n != rest - 2)
			goto bad;
		if (old)
			goto ambiguous;
	} else if (rest >= 2 && !strcasecmp(s + i + rest - 2, "ps")) {
		goto ambiguous;                  /* Mbps, MBps, kbps */
	} else if (point) {
		goto bad;                        /* no old spelling had a fraction */
	} else if (!s[i] && whole == 0) {
		*out = 0;                        /* 0 needs no unit */
		return 0;
	} else if (bare == UNIT_BITS) {
		/* serve's old --rate: udp-sender's own, bits with k, m or g (10^3n) */
		static const char prefix[] = "kKmMgG";
		const char *p = s[i] ? strchr(prefix, s[i]) : NULL;

		if (s[i] && (!p || s[i + 1]))
			goto bad;
		for (mul = 1, n = p ? (size_t)(p - prefix) / 2 + 1 : 0; n; n--)
			mul *= 1000;
		bits = old = true;
	} else {
		/* load's and lazy's old --rate: a size, read as bytes per second */
		n = size_unit(s + i, &mul, &old);
		if (n == 0 && s[i] == 'b' && !s[i + 1])
			n = 1;
		if (s[i + n])
			goto bad;
		old = true;
	}
	if (unit_scale(whole, frac, mul, &v) < 0)
		return rb_errfmt(note, len, -ERANGE, "'%s' is too large", s);
	/* in the option's own unit: bits for serve, bytes for load and lazy */
	if (bits && bare != UNIT_BITS)
		v /= 8;
	else if (!bits && bare == UNIT_BITS)
		v *= 8;                          /* v <= 2^60 */
	if (v == 0)
		return rb_errfmt(note, len, -EINVAL, "'%s' is less than a %s per second", s,
				 bare == UNIT_BITS ? "bit" : "byte");
	*out = v;
	if (!old)
		return 0;
	if (bits)
		n = (size_t)snprintf(note, len, "%.*s%s", (int)i, s, bit_unit_name(mul));
	else
		n = (size_t)snprintf(note, len, "%.*s%s/s", (int)i, s, size_unit_name(mul));
	/* a number too long for note: the exact value in the option's unit */
	if (n >= len)
		snprintf(note, len, bare == UNIT_BITS ? "%" PRIu64 "bit" : "%" PRIu64 "B/s", v);
	return 1;
bad:
	return rb_errfmt(note, len, -EINVAL, "'%s' is not a rate (100Mbit, 1Gbit, 500kbit; "
			 "12MiB/s, 512K/s)", s);
ambiguous:
	return rb_errfmt(note, len, -EINVAL, "'%s' is ambiguous (bits or bytes? 10^6 or 2^20?): "
			 "write bits per second as 100Mbit, bytes as 12MiB/s", s);
}

int rb_detach(bool quiet)
{
	int fd;

	setsid();
	signal(SIGHUP, SIG_IGN);
	if (chdir("/") < 0)
		return -errno;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (quiet)
			dup2(fd, STDERR_FILENO);
		/* dup2 leaves the copies without O_CLOEXEC */
		if (fd > STDERR_FILENO)
			(void)close(fd);
	}
	return 0;
}

/* An option's value through size_parse() or rate_parse(). */
static int unit_arg(int (*parse)(const char *, enum unit_bare, uint64_t *, char *, size_t),
		    const char *cmd, const char *opt, const char *val, enum unit_bare bare,
		    uint64_t *out)
{
	char note[160];
	int rc = parse(val, bare, out, note, sizeof(note));

	if (rc < 0) {
		rb_usage(cmd, "--%s: %s", opt, note);
		return rc;
	}
	if (rc > 0)
		rb_warn("--%s=%s: deprecated spelling, write --%s=%s", opt, val, opt, note);
	return 0;
}

int size_arg(const char *cmd, const char *opt, const char *val, enum unit_bare bare,
	     uint64_t *out)
{
	return unit_arg(size_parse, cmd, opt, val, bare, out);
}

int rate_arg(const char *cmd, const char *opt, const char *val, enum unit_bare bare,
	     uint64_t *out)
{
	return unit_arg(rate_parse, cmd, opt, val, bare, out);
}

const char *fmt_rate(uint64_t bytes_per_s, char *buf, size_t len)
{
	char s[32];

	/* fmt_size() gives "1.0 KiB"; a rate is the same with "/s", and the
	 * line rate beside it in decimal bits, as links are sold. */
	snprintf(buf, len, "%s/s = %.1f Mbit/s", fmt_size(bytes_per_s, s, sizeof(s)),
		 (double)bytes_per_s * 8 / 1e6);
	return buf;
}

int duration_parse(const char *s, double max, double *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 }, { "w", 604800 },
	};
	char *end;
	double v;
	size_t i;

	if (s && (!strcmp(s, "off") || !strcmp(s, "no"))) {
		*out = 0;
		return 0;
	}
	if (!s || ((*s < '0' || *s > '9') && *s != '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(units) && strcmp(end, units[i].u); i++)
		;
	if (i == ARRAY_SIZE(units) || v * units[i].mul > max)
		return -EINVAL;
	*out = v * units[i].mul;
	return 0;
}

int duration_secs(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	double d;

	if (duration_parse(s, hi, &d) < 0 || d < lo || d != (double)(unsigned)d)
		return -EINVAL;
	*out = (unsigned)d;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	return duration_parse(s, 86400, out);
}

const char *fmt_size(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

#ifndef RAMBOOT_LOCALTIME
#define RAMBOOT_LOCALTIME 0
#endif

/* Days since 1970-01-01 to a civil date (the proleptic Gregorian
 * calendar; H. Hinnant's days_from_civil, reversed). */
static void civil(int64_t days, int *y, int *m, int *d)
{
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

const char *fmt_when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	int64_t ago = (int64_t)time(NULL) - t, days = t / 86400, sec = t % 86400;
	struct tm tm;
	size_t n = 0;
	int y, m, d;

	/* The host build in local time; the static one (the initramfs has
	 * no time zone, and the zone code of a static libc is 32 KiB) in
	 * UTC, by hand. */
	if (RAMBOOT_LOCALTIME && localtime_r(&tt, &tm))
		n = strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	if (!n) {
		if (sec < 0) {
			sec += 86400;
			days--;
		}
		civil(days, &y, &m, &d);
		snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d UTC", y, m, d, (int)(sec / 3600),
			 (int)(sec / 60 % 60), (int)(sec % 60));
		n = strlen(buf);
	}
	if (ago < 0)
		snprintf(buf + n, len - n, " (in this clock's future)");
	else if (ago < 120)
		snprintf(buf + n, len - n, " (%" PRId64 " s ago)", ago);
	else if (ago < 2 * 3600)
		snprintf(buf + n, len - n, " (%" PRId64 " min ago)", ago / 60);
	else if (ago < 2 * 86400)
		snprintf(buf + n, len - n, " (%" PRId64 " h ago)", ago / 3600);
	else
		snprintf(buf + n, len - n, " (%" PRId64 " d ago)", ago / 86400);
	return buf;
}

/* The loop of read_full (off < 0) and pread_full. */
static ssize_t read_loop(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = off < 0 ? read(fd, (char *)buf + done, len - done) :
			    pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	return read_loop(fd, buf, len, -1);
}

ssize_t pread_full(int fd, void *buf, size_t len, off_t off)
{
	return off < 0 ? -EINVAL : read_loop(fd, buf, len, off);
}

/* The loop of write_all (off < 0) and pwrite_full. */
static int write_loop(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	return write_loop(fd, buf, len, -1);
}

int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	return off < 0 ? -EINVAL : write_loop(fd, buf, len, off);
}

int open_stat(const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, st) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", path, strerror(errno));
		(void)close(fd);   /* read-only: nothing to flush */
		return rc;
	}
	return fd;
}

int close_checked(int fd)
{
	/* Linux closes the descriptor even when close() fails with EINTR:
	 * never retry, but report the error (NFS reports write-back
	 * failures here). */
	if (close(fd) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

void *alloc_big(size_t len)
{
	const size_t huge = 2u << 20;
	void *p;

	if (len < huge)
		return malloc(len ? len : 1);
	len = (len + huge - 1) & ~(huge - 1);
	if (posix_memalign(&p, huge, len))
		return NULL;
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double boot_sec(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* tmpfs takes "noswap" from Linux 6.4 on; older kernels refuse the mount
 * and log "Unknown parameter" on the console, so do not ask them. */
bool tmpfs_has_noswap(void)
{
	struct utsname un;
	int major = 0, minor = 0;

	if (uname(&un) < 0 || sscanf(un.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 4);
}

/* Idle I/O class: where the block layer honours it, our reads are served
 * only when no one else's wait. Threads made afterwards inherit it.
 * Returns the class before (-1 when unknown), for io_prio_restore. */
int io_prio_idle(void)
{
	int old = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);

	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0)
		rb_debug("ioprio_set: %s", strerror(errno));
	return old;
}

void io_prio_restore(int old)
{
	if (old >= 0)
		(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, old);
}

/* The calling thread (and the threads it makes afterwards) at nice 19:
 * background work (prefetch, the lazy copy and its hashing) gets the
 * CPU the boot leaves. Returns the nice value before, for
 * cpu_nice_restore. */
int cpu_nice_bg(void)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (errno)
		old = 0;
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) < 0)
		rb_debug("setpriority: %s", strerror(errno));
	return old;
}

void cpu_nice_restore(int old)
{
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), old);
}

void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int parse_threads(const char *cmd, const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 64)
		return rb_usage(cmd, "--threads: '%s' is not a number from 1 to 64", s);
	*out = (int)v;
	return 0;
}

size_t text_escape(char *s, size_t cap)
{
	char tmp[1024];
	size_t i, o = 0;

	for (i = 0; s[i] && o + 1 < sizeof(tmp); i++) {
		unsigned char c = (unsigned char)s[i];
		int w = 0;

		if (!text_is_ctl(c))
			tmp[o++] = (char)c;
		else if (c == '\n' || c == '\t' || c == '\r')
			w = snprintf(tmp + o, sizeof(tmp) - o, "\\%c", c == '\n' ? 'n' :
				     c == '\t' ? 't' : 'r');
		else
			w = snprintf(tmp + o, sizeof(tmp) - o, "\\x%02x", c);
		if (w < 0 || (size_t)w >= sizeof(tmp) - o)
			break;
		o += (size_t)w;
	}
	if (o >= cap)
		o = cap - 1;
	memcpy(s, tmp, o);
	s[o] = '\0';
	return o;
}

size_t text_scrub(char *dst, size_t cap, const char *src, size_t n, char with)
{
	size_t i;

	for (i = 0; i < n && src[i] && i + 1 < cap; i++)
		dst[i] = text_is_ctl((unsigned char)src[i]) ? with : src[i];
	dst[i] = '\0';
	return i;
}

int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

