// SPDX-License-Identifier: GPL-2.0-or-later
/* Size expressions: values, precedence, units, and errors with columns. */
#include <errno.h>
#include <stdint.h>

#include "tap.h"
#include "format/sizeexpr.h"

#define M (1024ULL * 1024)
#define G (1024ULL * M)
#define RAM (4 * G)            /* 4096 MiB */

static int ok_case(const char *expr, uint64_t ram, uint64_t want)
{
	struct sizeexpr_error e;
	uint64_t v = 0;
	int rc = sizeexpr_eval(expr, ram, &v, &e);

	if (rc != 0 || v != want) {
		printf("#   '%s': rc %d (%s at %d), value %llu, expected %llu\n", expr, rc,
		       rc ? e.what : "", rc ? e.column : 0, (unsigned long long)v,
		       (unsigned long long)want);
		return 0;
	}
	return 1;
}

static int err_case(const char *expr, int want_rc, int want_col, const char *want_what)
{
	struct sizeexpr_error e;
	uint64_t v = 12345;
	int rc = sizeexpr_eval(expr, RAM, &v, &e);

	if (rc != want_rc || e.column != want_col || strcmp(e.what, want_what) || v != 12345) {
		printf("#   '%s': rc %d '%s' at column %d, expected %d '%s' at column %d\n",
		       expr, rc, e.what ? e.what : "(null)", e.column, want_rc, want_what,
		       want_col);
		return 0;
	}
	return 1;
}

static void numbers_and_units(void)
{
	CHECK(ok_case("64", RAM, 64 * M));           /* bare number: MiB */
	CHECK(ok_case("64M", RAM, 64 * M));
	CHECK(ok_case("64MiB", RAM, 64 * M));
	CHECK(ok_case("64MB", RAM, 64 * M));
	CHECK(ok_case("512K", RAM, 512 * 1024));
	CHECK(ok_case("512k", RAM, 512 * 1024));
	CHECK(ok_case("2G", RAM, 2 * G));
	CHECK(ok_case("2g", RAM, 2 * G));
	CHECK(ok_case("1T", RAM, 1024 * G));
	CHECK(ok_case("1.5G", RAM, 1536 * M));
	CHECK(ok_case("0.5", RAM, 512 * 1024));
	CHECK(ok_case(".25G", RAM, 256 * M));
	CHECK(ok_case("0", RAM, 0));
	CHECK(ok_case("  64M  ", RAM, 64 * M));
	CHECK(ok_case("4096B", RAM, 4096));
	CHECK(ok_case("64Mi", RAM, 64 * M));
}

/* A number in an old spelling: where, and how to write it. */
static int old_case(const char *expr, int want_col, const char *want_old, const char *want_canon)
{
	struct sizeexpr_error e;
	uint64_t v;
	int rc = sizeexpr_eval(expr, RAM, &v, &e);

	if (rc != 0 || e.old_column != want_col ||
	    (want_col && (strcmp(e.old, want_old) || strcmp(e.canon, want_canon)))) {
		printf("#   '%s': rc %d, old '%s' at %d -> '%s'; expected '%s' at %d -> '%s'\n",
		       expr, rc, e.old, e.old_column, e.canon, want_old ? want_old : "", want_col,
		       want_canon ? want_canon : "");
		return 0;
	}
	return 1;
}

static void old_spellings_are_noted(void)
{
	/* the documented units: nothing to note */
	CHECK(old_case("min(ram, 8G)", 0, NULL, NULL));
	CHECK(old_case("ram / 2 + 256MiB", 0, NULL, NULL));
	CHECK(old_case("4096B", 0, NULL, NULL));
	CHECK(old_case("50%", 0, NULL, NULL));
	/* a plain number as a factor is no size */
	CHECK(old_case("ram / 2", 0, NULL, NULL));
	CHECK(old_case("ram * 0.5", 0, NULL, NULL));
	CHECK(old_case("2 * 1G", 0, NULL, NULL));
	CHECK(old_case("min(ram / 2, 4G) * 3 / 4", 0, NULL, NULL));
	CHECK(old_case("0", 0, NULL, NULL));
	/* a plain number as a size is MiB: still, noted */
	CHECK(old_case("4096", 1, "4096", "4096MiB"));
	CHECK(old_case("min(ram / 2, 4096)", 14, "4096", "4096MiB"));
	CHECK(old_case("max(512, ram / 4)", 5, "512", "512MiB"));
	CHECK(old_case("ram - 512", 7, "512", "512MiB"));
	CHECK(old_case("1024 + ram", 1, "1024", "1024MiB"));
	CHECK(old_case("2 * 1024", 1, "2", "2MiB"));
	CHECK(old_case("(64)", 2, "64", "64MiB"));
	/* the old units (lower case, MB): binary as before, noted */
	CHECK(old_case("min(ram, 8g)", 10, "8g", "8GiB"));
	CHECK(old_case("512MB", 1, "512MB", "512MiB"));
	CHECK(old_case("1.5g + 4096", 1, "1.5g", "1.5GiB"));
	CHECK(old_case("ram - 512 - 1m", 7, "512", "512MiB"));
}

static void ram_and_percent(void)
{
	CHECK(ok_case("ram", RAM, RAM));
	CHECK(ok_case("50%", RAM, 2 * G));
	CHECK(ok_case("100%", RAM, RAM));
	CHECK(ok_case("150%", RAM, 6 * G));
	CHECK(ok_case("12.5%", RAM, 512 * M));
	CHECK(ok_case("ram / 2", RAM, 2 * G));
	CHECK(ok_case("ram/2", RAM, 2 * G));
	CHECK(ok_case("ram * 2", RAM, 8 * G));
	/* MemTotal is rarely a whole number of MiB. */
	CHECK(ok_case("ram", 124 * M + 300 * 1024, 124 * M + 300 * 1024));
	CHECK(ok_case("ram", 0, 0));
}

static void precedence(void)
{
	CHECK(ok_case("1 + 2 * 3", RAM, 7 * M));
	CHECK(ok_case("(1 + 2) * 3", RAM, 9 * M));
	CHECK(ok_case("10 - 4 - 3", RAM, 3 * M));      /* left-associative */
	CHECK(ok_case("64 / 4 / 2", RAM, 8 * M));
	CHECK(ok_case("ram - 1G", RAM, 3 * G));
	CHECK(ok_case("-1G + ram", RAM, 3 * G));
	CHECK(ok_case("--64", RAM, 64 * M));
	CHECK(ok_case("+64", RAM, 64 * M));
	CHECK(ok_case("ram / 2 + 256M", RAM, 2 * G + 256 * M));
	CHECK(ok_case("((((64))))", RAM, 64 * M));
	CHECK(ok_case("3 / 2", RAM, 3 * M / 2));
}

static void min_max(void)
{
	CHECK(ok_case("min(ram, 8G)", RAM, RAM));
	CHECK(ok_case("min(ram, 8G)", 16 * G, 8 * G));
	CHECK(ok_case("min(ram,8G)", 16 * G, 8 * G));
	CHECK(ok_case("max(ram / 4, 512M)", 1 * G, 512 * M));
	CHECK(ok_case("max(ram / 4, 512M)", RAM, 1 * G));
	CHECK(ok_case("min(1G, 2G, 512M, 3G)", RAM, 512 * M));
	CHECK(ok_case("max(64)", RAM, 64 * M));
	CHECK(ok_case("min(max(ram/2, 1G), 4G)", 16 * G, 4 * G));
	CHECK(ok_case("2 * min(ram, 1G)", RAM, 2 * G));
}

static void errors_with_columns(void)
{
	CHECK(err_case("min(ram,", -EINVAL, 9, "expected expression"));
	CHECK(err_case("", -EINVAL, 1, "expected expression"));
	CHECK(err_case("   ", -EINVAL, 4, "expected expression"));
	CHECK(err_case("ram +", -EINVAL, 6, "expected expression"));
	CHECK(err_case("(ram", -EINVAL, 5, "expected ')'"));
	CHECK(err_case("ram)", -EINVAL, 4, "unbalanced ')'"));
	CHECK(err_case("ram 2", -EINVAL, 5, "expected an operator"));
	CHECK(err_case("2 * foo", -EINVAL, 5, "unknown name"));
	CHECK(err_case("RAM", -EINVAL, 1, "unknown name"));
	CHECK(err_case("min ram", -EINVAL, 5, "expected '(' after min"));
	CHECK(err_case("max", -EINVAL, 4, "expected '(' after max"));
	CHECK(err_case("min(1 2)", -EINVAL, 7, "expected ',' or ')'"));
	CHECK(err_case("min()", -EINVAL, 5, "expected expression"));
	CHECK(err_case("64X", -EINVAL, 3, "bad number suffix"));
	CHECK(err_case("64MX", -EINVAL, 4, "bad number suffix"));
	CHECK(err_case("64%%", -EINVAL, 4, "expected an operator"));
	CHECK(err_case("1.2.3", -EINVAL, 4, "bad number suffix"));
	CHECK(err_case(".", -EINVAL, 1, "expected a number"));
	CHECK(err_case("ram / 0", -EDOM, 5, "division by zero"));
	CHECK(err_case("ram / (1 - 1)", -EDOM, 5, "division by zero"));
	CHECK(err_case("1G - ram", -EDOM, 1, "result is negative"));
	CHECK(err_case("99999999999999999999T", -ERANGE, 1, "number too large"));
	CHECK(err_case("1T * 1T * 1T", -ERANGE, 9, "result too large"));
	CHECK(err_case("ram, 1", -EINVAL, 4, "expected an operator"));
	CHECK(err_case("64 # comment", -EINVAL, 4, "expected an operator"));
}

static void unknown_name_is_reported(void)
{
	struct sizeexpr_error e;
	uint64_t v;

	CHECK_EQ_INT(sizeexpr_eval("min(ram, memtotal)", RAM, &v, &e), -EINVAL);
	CHECK_EQ_STR(e.name, "memtotal");
	CHECK_EQ_INT(e.column, 10);
	/* err may be NULL. */
	CHECK_EQ_INT(sizeexpr_eval("(", RAM, &v, NULL), -EINVAL);
}

static void deep_nesting_is_bounded(void)
{
	char buf[4096];
	uint64_t v;
	size_t i;

	for (i = 0; i < 2000; i++)
		buf[i] = '(';
	buf[i] = '\0';
	CHECK_EQ_INT(sizeexpr_eval(buf, RAM, &v, NULL), -EINVAL);
	for (i = 0; i < 2000; i++)
		buf[i] = '-';
	buf[i++] = '1';
	buf[i] = '\0';
	CHECK_EQ_INT(sizeexpr_eval(buf, RAM, &v, NULL), -EINVAL);
}

static void garbage_never_crashes(void)
{
	static const char alphabet[] = "0123456789.KMGTiB%ramixn()+-*/, \t";
	unsigned s = 12345;
	char buf[40];
	int i, j;

	/* Pseudo-random strings over the grammar's alphabet: every one must
	 * return 0 or an error with a column inside the string (or just
	 * past its end). */
	for (i = 0; i < 20000; i++) {
		struct sizeexpr_error e;
		uint64_t v;
		int len, rc;

		s = s * 1103515245 + 12345;
		len = (int)(s >> 16) % 24;
		for (j = 0; j < len; j++) {
			s = s * 1103515245 + 12345;
			buf[j] = alphabet[(s >> 16) % (sizeof(alphabet) - 1)];
		}
		buf[len] = '\0';
		rc = sizeexpr_eval(buf, RAM, &v, &e);
		if (rc != 0 && (e.column < 1 || e.column > len + 1 || !e.what)) {
			printf("#   '%s': column %d\n", buf, e.column);
			CHECK(0);
			break;
		}
	}
}

int main(void)
{
	RUN(numbers_and_units);
	RUN(old_spellings_are_noted);
	RUN(ram_and_percent);
	RUN(precedence);
	RUN(min_max);
	RUN(errors_with_columns);
	RUN(unknown_name_is_reported);
	RUN(deep_nesting_is_bounded);
	RUN(garbage_never_crashes);
	return TAP_DONE();
}
