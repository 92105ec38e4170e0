// SPDX-License-Identifier: GPL-2.0-or-later
/* Sizes and rates: the documented units, the old spellings that still
 * read as before (with the spelling to use), and the refusals. */
#include <errno.h>
#include <stdint.h>

#include "tap.h"
#include "lib/units.h"

#define K 1024ULL
#define M (1024ULL * K)
#define G (1024ULL * M)

static int size_case(const char *s, enum unit_bare bare, int want_rc, uint64_t want,
		     const char *want_note)
{
	char note[160] = "", back[160];
	uint64_t v = 12345, again;
	int rc = size_parse(s, bare, &v, note, sizeof(note));

	if (rc != want_rc || (rc >= 0 && v != want) || (rc < 0 && v != 12345) ||
	    (want_note && !strstr(note, want_note)) || (rc == 0 && note[0])) {
		printf("#   size '%s': rc %d, %llu, '%s'; expected %d, %llu, '%s'\n", s, rc,
		       (unsigned long long)v, note, want_rc, (unsigned long long)want,
		       want_note ? want_note : "");
		return 0;
	}
	/* the spelling to use instead reads as the same value */
	if (rc == 1 && (size_parse(note, bare, &again, back, sizeof(back)) != 0 || again != v)) {
		printf("#   '%s' -> '%s' does not read back\n", s, note);
		return 0;
	}
	return 1;
}

static int rate_case(const char *s, enum unit_bare bare, int want_rc, uint64_t want,
		     const char *want_note)
{
	char note[160] = "", back[160];
	uint64_t v = 12345, again;
	int rc = rate_parse(s, bare, &v, note, sizeof(note));

	if (rc != want_rc || (rc >= 0 && v != want) || (rc < 0 && v != 12345) ||
	    (want_note && !strstr(note, want_note)) || (rc == 0 && note[0])) {
		printf("#   rate '%s': rc %d, %llu, '%s'; expected %d, %llu, '%s'\n", s, rc,
		       (unsigned long long)v, note, want_rc, (unsigned long long)want,
		       want_note ? want_note : "");
		return 0;
	}
	/* the spelling to use instead reads as the same value */
	if (rc == 1 && (rate_parse(note, bare, &again, back, sizeof(back)) != 0 || again != v)) {
		printf("#   '%s' -> '%s' does not read back\n", s, note);
		return 0;
	}
	return 1;
}

static void sizes_documented(void)
{
	CHECK(size_case("4096B", UNIT_BYTES, 0, 4096, NULL));
	CHECK(size_case("512K", UNIT_BYTES, 0, 512 * K, NULL));
	CHECK(size_case("512KiB", UNIT_BYTES, 0, 512 * K, NULL));
	CHECK(size_case("256M", UNIT_BYTES, 0, 256 * M, NULL));
	CHECK(size_case("256MiB", UNIT_MIB, 0, 256 * M, NULL));
	CHECK(size_case("2G", UNIT_BYTES, 0, 2 * G, NULL));
	CHECK(size_case("2GiB", UNIT_BYTES, 0, 2 * G, NULL));
	CHECK(size_case("1T", UNIT_BYTES, 0, 1024 * G, NULL));
	CHECK(size_case("1TiB", UNIT_BYTES, 0, 1024 * G, NULL));
	CHECK(size_case("1.5G", UNIT_BYTES, 0, 1536 * M, NULL));
	CHECK(size_case("0.5K", UNIT_BYTES, 0, 512, NULL));
	/* 0 needs no unit, whatever the option's old bare unit */
	CHECK(size_case("0", UNIT_BYTES, 0, 0, NULL));
	CHECK(size_case("0", UNIT_MIB, 0, 0, NULL));
	CHECK(size_case("0M", UNIT_BYTES, 0, 0, NULL));
}

static void sizes_old_spellings(void)
{
	/* a bare number keeps the option's old unit */
	CHECK(size_case("30000", UNIT_BYTES, 1, 30000, "30000B"));
	CHECK(size_case("30000", UNIT_MIB, 1, 30000 * M, "30000MiB"));
	/* lower case and KB/MB/GB were always binary here: still */
	CHECK(size_case("256m", UNIT_BYTES, 1, 256 * M, "256MiB"));
	CHECK(size_case("256MB", UNIT_BYTES, 1, 256 * M, "256MiB"));
	CHECK(size_case("4kB", UNIT_BYTES, 1, 4 * K, "4KiB"));
	CHECK(size_case("2Gi", UNIT_BYTES, 1, 2 * G, "2GiB"));
	CHECK(size_case("1.5g", UNIT_BYTES, 1, 1536 * M, "1.5GiB"));
	CHECK(size_case("4096b", UNIT_BYTES, 1, 4096, "4096B"));
}

static void sizes_refused(void)
{
	CHECK(size_case("", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("lots", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("-1", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("+1", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case(" 1M", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1M ", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1 M", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1X", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1MiBx", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1P", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("12MB/s", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case(".", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("5.", UNIT_BYTES, -EINVAL, 0, "not a size"));
	CHECK(size_case("1.5", UNIT_BYTES, -EINVAL, 0, "fractions of a byte"));
	CHECK(size_case("1.5B", UNIT_BYTES, -EINVAL, 0, "fractions of a byte"));
	CHECK(size_case("2000000T", UNIT_BYTES, -ERANGE, 0, "too large"));
	CHECK(size_case("99999999999999999999999", UNIT_BYTES, -ERANGE, 0, "too large"));
}

static void rates_documented(void)
{
	/* bits: decimal, as links are sold; "/s" optional */
	CHECK(rate_case("100Mbit", UNIT_BITS, 0, 100000000, NULL));   /* serve: bits */
	CHECK(rate_case("100Mbit", UNIT_BYTES, 0, 12500000, NULL));
	CHECK(rate_case("100Mbit/s", UNIT_BYTES, 0, 12500000, NULL));
	CHECK(rate_case("100mbit", UNIT_BYTES, 0, 12500000, NULL));
	CHECK(rate_case("1Gbit", UNIT_BYTES, 0, 125000000, NULL));
	CHECK(rate_case("1.5Gbit", UNIT_BYTES, 0, 187500000, NULL));
	CHECK(rate_case("500kbit", UNIT_BYTES, 0, 62500, NULL));
	CHECK(rate_case("500Kbit", UNIT_BYTES, 0, 62500, NULL));
	CHECK(rate_case("8000bit", UNIT_BYTES, 0, 1000, NULL));
	/* bytes: a size per second */
	CHECK(rate_case("12MiB/s", UNIT_BITS, 0, 12 * M * 8, NULL));
	CHECK(rate_case("12MiB/s", UNIT_BYTES, 0, 12 * M, NULL));
	CHECK(rate_case("999999999bit", UNIT_BITS, 0, 999999999, NULL));
	CHECK(rate_case("999999999bit", UNIT_BYTES, 0, 124999999, NULL));
	CHECK(rate_case("12M/s", UNIT_BYTES, 0, 12 * M, NULL));
	CHECK(rate_case("512K/s", UNIT_BYTES, 0, 512 * K, NULL));
	CHECK(rate_case("1GiB/s", UNIT_BYTES, 0, G, NULL));
	CHECK(rate_case("100B/s", UNIT_BYTES, 0, 100, NULL));
	CHECK(rate_case("0", UNIT_BYTES, 0, 0, NULL));
	CHECK(rate_case("0", UNIT_BITS, 0, 0, NULL));
}

static void rates_old_spellings(void)
{
	/* serve: udp-sender's bits, k/m/g decimal */
	CHECK(rate_case("500m", UNIT_BITS, 1, 500000000, "500Mbit"));
	CHECK(rate_case("5M", UNIT_BITS, 1, 5000000, "5Mbit"));
	CHECK(rate_case("500k", UNIT_BITS, 1, 500000, "500kbit"));
	CHECK(rate_case("1g", UNIT_BITS, 1, 1000000000, "1Gbit"));
	CHECK(rate_case("1000000", UNIT_BITS, 1, 1000000, "1000000bit"));
	CHECK(rate_case("1", UNIT_BITS, 1, 1, "1bit"));
	/* load and lazy: a size, per second (binary) */
	CHECK(rate_case("500m", UNIT_BYTES, 1, 500 * M, "500MiB/s"));
	CHECK(rate_case("64M", UNIT_BYTES, 1, 64 * M, "64MiB/s"));
	CHECK(rate_case("512K", UNIT_BYTES, 1, 512 * K, "512KiB/s"));
	CHECK(rate_case("1MB", UNIT_BYTES, 1, M, "1MiB/s"));
	CHECK(rate_case("1048576", UNIT_BYTES, 1, M, "1048576B/s"));
}

static void rates_refused(void)
{
	/* ambiguous: bits or bytes, 10^6 or 2^20 */
	CHECK(rate_case("12MB/s", UNIT_BYTES, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("12kB/s", UNIT_BYTES, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("12m/s", UNIT_BITS, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("100Mbps", UNIT_BITS, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("100mbps", UNIT_BYTES, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("12MBps", UNIT_BYTES, -EINVAL, 0, "ambiguous"));
	CHECK(rate_case("100bps", UNIT_BYTES, -EINVAL, 0, "ambiguous"));
	/* not rates */
	CHECK(rate_case("", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("fast", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("-1", UNIT_BITS, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("5x", UNIT_BITS, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("5T", UNIT_BITS, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("5mm", UNIT_BITS, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("12/s", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("12Mbit/h", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("12MiBit", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("1.5M", UNIT_BYTES, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("1.5", UNIT_BITS, -EINVAL, 0, "not a rate"));
	CHECK(rate_case("7bit", UNIT_BYTES, -EINVAL, 0, "less than a byte"));
	CHECK(rate_case("0Mbit", UNIT_BITS, -EINVAL, 0, "less than a bit"));
	CHECK(rate_case("0m", UNIT_BITS, -EINVAL, 0, "less than a bit"));
	CHECK(rate_case("99999999999Gbit", UNIT_BITS, -ERANGE, 0, "too large"));
}

static void note_may_be_small(void)
{
	char note[4];
	uint64_t v;

	/* a short buffer cuts the note, never overflows */
	CHECK_EQ_INT(size_parse("30000", UNIT_BYTES, &v, note, sizeof(note)), 1);
	CHECK_EQ_STR(note, "300");
	CHECK_EQ_INT(rate_parse("x", UNIT_BYTES, &v, note, sizeof(note)), -EINVAL);
	CHECK_EQ_INT((int)strlen(note), 3);
}

static void formats(void)
{
	char b[64];

	CHECK_EQ_STR(fmt_rate(12500000, b, sizeof(b)), "11.9 MiB/s = 100.0 Mbit/s");
	CHECK_EQ_STR(fmt_rate(0, b, sizeof(b)), "0 B/s = 0.0 Mbit/s");
	CHECK_EQ_STR(size_unit_name(M), "MiB");
	CHECK_EQ_STR(size_unit_name(1), "B");
}

/* Durations: one grammar for every timeout, interval and age. */
static void durations(void)
{
	static const struct { const char *s; double max; int rc; double want; } c[] = {
		{ "30", 86400, 0, 30 }, { "30s", 86400, 0, 30 }, { "2.5", 86400, 0, 2.5 },
		{ "0.2s", 86400, 0, 0.2 }, { "5m", 86400, 0, 300 }, { "1.5h", 86400, 0, 5400 },
		{ "1d", 86400, 0, 86400 }, { "36h", 1e9, 0, 129600 }, { "7d", 1e9, 0, 604800 },
		{ "2w", 1e9, 0, 1209600 }, { "0", 86400, 0, 0 }, { "off", 86400, 0, 0 },
		{ "no", 86400, 0, 0 }, { ".5", 86400, 0, 0.5 },
		{ "", 86400, -EINVAL, 0 }, { "-1", 86400, -EINVAL, 0 }, { "2d", 86400, -EINVAL, 0 },
		{ "30 s", 86400, -EINVAL, 0 }, { "30sec", 86400, -EINVAL, 0 },
		{ "5M", 86400, -EINVAL, 0 }, { "s", 86400, -EINVAL, 0 }, { "nan", 86400, -EINVAL, 0 },
		{ "inf", 86400, -EINVAL, 0 }, { "1e3", 86400, 0, 1000 }, { "1hh", 86400, -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double v = -1;
		int rc = duration_parse(c[i].s, c[i].max, &v);

		if (rc != c[i].rc || (rc == 0 && v != c[i].want)) {
			printf("#   duration '%s': rc %d, %g; expected %d, %g\n", c[i].s, rc, v,
			       c[i].rc, c[i].want);
			CHECK(0);
		}
	}
}

int main(void)
{
	RUN(durations);
	RUN(sizes_documented);
	RUN(sizes_old_spellings);
	RUN(sizes_refused);
	RUN(rates_documented);
	RUN(rates_old_spellings);
	RUN(rates_refused);
	RUN(note_may_be_small);
	RUN(formats);
	return TAP_DONE();
}
