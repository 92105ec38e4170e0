// SPDX-License-Identifier: GPL-2.0-or-later
/* Sizes, rates and durations: parsed and formatted (units.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/base.h"
#include "lib/msg.h"
#include "lib/units.h"

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
