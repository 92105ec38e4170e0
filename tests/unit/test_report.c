// SPDX-License-Identifier: GPL-2.0-or-later
/* The boot report's text: one key=value a line, whatever the values hold
 * (a path with a newline must not add a line of its own). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "lib/keys.h"
#include "lib/path.h"
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

/* Every key of a report with every part filled is in the table, as a
 * key of the report, and the other way round. */
static void test_written_keys_in_table(void)
{
	struct boot_report r;
	char *line, *save = NULL;
	int k, seen[KEY_COUNT] = { 0 };

	report_init(&r);
	snprintf(r.verify, sizeof(r.verify), "hash");
	snprintf(r.source_used, sizeof(r.source_used), "network");
	r.chunks = 3;
	snprintf(r.verity, sizeof(r.verity), "on");
	snprintf(r.cache, sizeof(r.cache), "hit");
	snprintf(r.swap_device, sizeof(r.swap_device), "/dev/zram0");
	CHECK(report_format(&r, buf, sizeof(buf)) > 0);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		*strchr(line, '=') = '\0';
		k = key_find(KEY_REPORT, line);
		if (k < 0)
			printf("#   the report writes %s, which is not in the key table\n", line);
		CHECK(k >= 0);
		if (k >= 0)
			seen[k]++;
	}
	for (k = 0; k < RK_LAZY_STARTED; k++)
		CHECK_EQ_INT(seen[k], 1);
	for (k = 0; k < KEY_COUNT; k++)
		CHECK_EQ_INT(key_table[k].file, k < KEY_LAZY_FIRST ? KEY_REPORT : KEY_LAZY);
}

/* The text of a source file, or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *t = f ? calloc(1, 1 << 20) : NULL;

	if (t)
		t[fread(t, 1, (1 << 20) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return t;
}

/* Each "KEY" that follows pat in text, up to end (NULL: the text's end),
 * must be a key of file. Returns how many were checked. */
static int check_after(const char *path, const char *text, const char *end, const char *pat,
		       enum key_file file)
{
	const char *p = text;
	char key[64];
	int n = 0;

	while ((p = strstr(p, pat)) && (!end || p < end)) {
		const char *q;
		size_t len;

		p += strlen(pat);
		q = strchr(p, '"');
		/* the call's first argument that is a string literal */
		if (!q || (end && q >= end) || strcspn(p, ";)") < (size_t)(q - p))
			continue;
		len = strcspn(q + 1, "\"");
		/* a key is an argument of its own: "key", */
		if (len == 0 || q[len + 2] != ',')
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)len, q + 1);
		if (key_find(file, key) < 0)
			printf("#   %s writes %s=, which `ramboot status` does not know\n", path, key);
		CHECK(key_find(file, key) >= 0);
		n++;
	}
	return n;
}

/* The lazy status file's writer (text from start to end) writes each
 * key of the table's KEY_LAZY file, by its id (LK_ and the name in
 * upper case). Returns how many were found. */
static int check_lazy_writer(const char *path, const char *start, const char *end)
{
	size_t k;
	int n = 0;

	for (k = 0; k < KEY_COUNT; k++) {
		char id[80];
		const char *p;
		size_t i;

		if (key_table[k].file != KEY_LAZY)
			continue;
		snprintf(id, sizeof(id), "{ LK_%s,", key_table[k].name);
		for (i = 5; id[i]; i++)
			if (id[i] >= 'a' && id[i] <= 'z')
				id[i] = (char)(id[i] - 'a' + 'A');
		p = strstr(start, id);
		if (!p || (end && p >= end))
			printf("#   %s: the lazy status writer does not write %s\n", path,
			       key_table[k].name);
		CHECK(p && (!end || p < end));
		n++;
	}
	return n;
}

/*
 * Every key a writer in src/ writes is one the table (and so `ramboot
 * status`) knows, and the lazy copier's status file (the { LK_ID, value }
 * pairs of lazy_status_write()) holds every key of its part of the table; the report's keys set by name
 * (report_text_set()), and any written by name in the report writer.
 * Run from the top of the tree, as tests/run-tests.sh does.
 */
static void test_every_written_key_known(void)
{
	static const char *const dirs[] = { "src/lib", "src/lazy", "src/boot", "src/load",
					    "src/profile", "src/status", "src/swap" };
	char path[512];
	size_t i;
	int lazy = 0, named = 0;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char *t, *sw;
			size_t n = strlen(de->d_name);

			if (n < 3 || strcmp(de->d_name + n - 2, ".c"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			t = slurp(path);
			if (!t)
				continue;
			named += check_after(path, t, NULL, "report_text_set(", KEY_REPORT);
			named += check_after(path, t, NULL, "kv(&o, ", KEY_REPORT);
			named += check_after(path, t, NULL, "js(&o, ", KEY_REPORT);
			/* the writer of the lazy status file: its table of
			 * { LK_ID, value } pairs names every key of the file */
			sw = strstr(t, "\nvoid lazy_status_write(");
			if (sw)
				lazy += check_lazy_writer(path, sw, strstr(sw, "\n}\n"));
			free(t);
		}
		if (d)
			closedir(d);
	}
	/* the scan found the writers (run from the top of the tree); every
	 * report key is written by its id today (named is 0), a key
	 * written by name would be checked above */
	CHECK(lazy >= 20);
	(void)named;
}

/* report_amend_at(): keys replaced in place or appended, the rest kept,
 * no report left alone unless asked to write one. */
static void test_amend(void)
{
	char dir[] = "/tmp/rb-report-XXXXXX", path[64];
	const struct report_set set[] = {
		{ RK_MODE_DONE, "off" }, { RK_FALLBACK, "a\nb" }, { RK_RAM_PATH, NULL },
	};
	int dfd, fd;
	ssize_t n;

	CHECK(mkdtemp(dir) != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK_EQ_INT(report_amend_at(dfd, set, 3, 0), -ENOENT);
	snprintf(path, sizeof(path), "%s/report", dir);
	CHECK(access(path, F_OK) < 0);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(write(fd, "mode_done=ram\nram_path=/x", 26) == 26);
	close(fd);
	CHECK_EQ_INT(report_amend_at(dfd, set, 3, 0), 0);
	n = read_regular_abs(path, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK_EQ_STR(buf, "mode_done=off\nram_path=/x\nfallback=a b");
	unlink(path);
	CHECK_EQ_INT(report_amend_at(dfd, set, 2, REPORT_AMEND_CREATE), 0);
	CHECK(read_regular_abs(path, buf, sizeof(buf)) > 0);
	CHECK_EQ_STR(buf, "mode_done=off\nfallback=a b");
	unlink(path);
	close(dfd);
	rmdir(dir);
}

int main(void)
{
	RUN(test_written_keys_in_table);
	RUN(test_every_written_key_known);
	RUN(test_amend);
	RUN(test_control_characters_replaced);
	RUN(test_bytes_above_0x7f_kept);
	RUN(test_too_small);
	return TAP_DONE();
}
