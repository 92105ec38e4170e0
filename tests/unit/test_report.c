// SPDX-License-Identifier: GPL-2.0-or-later
/* The boot report's text: one key=value a line, whatever the values hold
 * (a path with a newline must not add a line of its own). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "lib/ramboot.h"
#include "lib/report.h"

static char buf[65536];

/* The number of lines of s, and 1 when each of them is KEY=... with
 * KEY of [a-z_]. */
static int lines_ok(const char *s, int *lines)
{
	const char *p = s;
	int ok = 1;

	*lines = 0;
	while (*p) {
		const char *k = p;

		while (*p && *p != '\n' && ((*p >= 'a' && *p <= 'z') || *p == '_'))
			p++;
		if (p == k || *p != '=')
			ok = 0;
		while (*p && *p != '\n')
			p++;
		if (*p == '\n')
			p++;
		(*lines)++;
	}
	return ok;
}

static int count_prefix(const char *s, const char *pre)
{
	size_t n = strlen(pre);
	int c = 0;

	for (const char *p = s; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, pre, n))
			c++;
	}
	return c;
}

static void test_control_characters_replaced(void)
{
	struct boot_report r;
	int clean_lines, lines, n;

	report_init(&r);
	n = report_format(&r, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(lines_ok(buf, &clean_lines));

	report_init(&r);
	snprintf(r.source, sizeof(r.source), "/srv/a\nmode_done=ram\nb.img");
	snprintf(r.ram_path, sizeof(r.ram_path), "/run/x\rfstype=ext4\r.img");
	snprintf(r.fallback, sizeof(r.fallback), "del\x7f" "and tab\there");
	snprintf(r.fstype, sizeof(r.fstype), "squash\x1b[0mfs");
	n = report_format(&r, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK_EQ_INT(strlen(buf), n);
	CHECK(lines_ok(buf, &lines));
	CHECK_EQ_INT(lines, clean_lines);
	CHECK_EQ_INT(count_prefix(buf, "mode_done="), 1);
	CHECK(strstr(buf, "\nmode_done=off\n") != NULL);
	CHECK(strstr(buf, "\nsource=/srv/a mode_done=ram b.img\n") != NULL);
	CHECK(strstr(buf, "\nram_path=/run/x fstype=ext4 .img\n") != NULL);
	CHECK(strstr(buf, "\nfallback=del and tab here\n") != NULL);
	CHECK(strstr(buf, "\nfstype=squash [0mfs\n") != NULL);
	CHECK(strchr(buf, '\r') == NULL);
	CHECK(strchr(buf, '\x7f') == NULL);
}

static void test_bytes_above_0x7f_kept(void)
{
	struct boot_report r;

	report_init(&r);
	snprintf(r.source, sizeof(r.source), "/srv/\xc3\xa9t\xc3\xa9.img");
	CHECK(report_format(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\nsource=/srv/\xc3\xa9t\xc3\xa9.img\n") != NULL);
}

static void test_too_small(void)
{
	struct boot_report r;

	report_init(&r);
	CHECK_EQ_INT(report_format(&r, buf, 16), -ENOSPC);
	CHECK_EQ_INT(report_format(&r, buf, 0), -ENOSPC);
}

int main(void)
{
	RUN(test_control_characters_replaced);
	RUN(test_bytes_above_0x7f_kept);
	RUN(test_too_small);
	return TAP_DONE();
}
