// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot status: the boot report left in /run/ramboot/report by
 * `ramboot boot`, then the live statistics of every initialised zram
 * device. mm_stat (zram.rst) reads:
 *   orig_data_size compr_data_size mem_used_total mem_limit mem_used_max
 *   same_pages pages_compacted huge_pages [huge_pages_since]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ramboot.h"
#include "sysutil.h"
#include "zram.h"

#define REPORT "/run/ramboot/report"
#define MAX_DEVS 64

struct zdev {
	int id;
	uint64_t disksize;
	char algorithm[32];
	uint64_t orig, compr, used, limit, used_max, same, huge;
	bool swap;
	int priority;
};

static void usage(FILE *out)
{
	fprintf(out,
"Usage: ramboot status [--json]\n"
"\n"
"Prints the boot report (" REPORT ") and, for every initialised zram\n"
"device, its size, compressor, stored and compressed bytes, ratio, RAM\n"
"used and swap priority.\n"
"\n"
"  --json      one JSON object: {\"report\": {...}, \"zram\": [...]}\n"
"  -h, --help  this help\n"
"\n"
"Exit codes: 0 ok (also when there is nothing to show), 2 usage.\n");
}

/* A JSON string through json_escape(), in pieces of up to 64 bytes cut
 * before a byte that starts a character, so that a UTF-8 sequence is
 * never split (a run of stray continuation bytes is cut anywhere: each of
 * them is escaped alone). */
static void json_str(FILE *f, const char *s)
{
	char piece[65], out[6 * 64 + 1];

	fputc('"', f);
	while (*s) {
		size_t n = strnlen(s, 64), cut = n;

		if (s[n]) {
			while (cut > 1 && ((unsigned char)s[cut] & 0xc0) == 0x80)
				cut--;
			if (cut <= 1)
				cut = n;
		}
		memcpy(piece, s, cut);
		piece[cut] = '\0';
		json_escape(out, sizeof(out), piece);
		fputs(out, f);
		s += cut;
	}
	fputc('"', f);
}

static bool is_json_int(const char *s)
{
	const char *p = s;

	if (*p == '-')
		p++;
	if (!*p || (p[0] == '0' && p[1]) || strlen(p) > 15)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* The report is key=value lines; anything else (blank, '#') is skipped
 * in JSON and printed as is in text. */
static void report_json(FILE *f, char *text)
{
	char *line, *save = NULL;
	bool first = true;

	fputs("{", f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (line[0] == '#' || !eq || eq == line)
			continue;
		*eq = '\0';
		fprintf(f, "%s\n    ", first ? "" : ",");
		first = false;
		json_str(f, line);
		fputs(": ", f);
		if (is_json_int(eq + 1))
			fputs(eq + 1, f);
		else
			json_str(f, eq + 1);
	}
	fputs(first ? "}" : "\n  }", f);
}

static int cmp_id(const void *a, const void *b)
{
	return ((const struct zdev *)a)->id - ((const struct zdev *)b)->id;
}

/* Initialised zram devices, sorted by number. Reading only: devices of
 * other owners are shown, never changed. */
static int collect(struct zdev *devs, int max)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (rb_path(p, sizeof(p), "/sys/block") < 0 || !(d = opendir(p)))
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		struct zdev *z = &devs[n];
		char buf[512], cur[32], dev[32];
		int id = zram_id_from_path(de->d_name);

		if (id < 0)
			continue;
		memset(z, 0, sizeof(*z));
		z->id = id;
		if (zram_disksize(id, &z->disksize) < 0 || z->disksize == 0)
			continue;
		if (zram_get(id, "comp_algorithm", buf, sizeof(buf)) == 0 &&
		    zram_algo_current(buf, cur, sizeof(cur)))
			snprintf(z->algorithm, sizeof(z->algorithm), "%s", cur);
		else
			snprintf(z->algorithm, sizeof(z->algorithm), "-");
		if (zram_get(id, "mm_stat", buf, sizeof(buf)) == 0)
			sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			       " %" SCNu64 " %*u %" SCNu64, &z->orig, &z->compr, &z->used,
			       &z->limit, &z->used_max, &z->same, &z->huge);
		snprintf(dev, sizeof(dev), "/dev/zram%d", id);
		z->swap = swaps_find(dev, &z->priority) == 1;
		n++;
	}
	closedir(d);
	qsort(devs, (size_t)n, sizeof(devs[0]), cmp_id);
	return n;
}

static void print_table(const struct zdev *devs, int n)
{
	int i;

	if (n == 0) {
		printf("no initialised zram devices\n");
		return;
	}
	printf("%-11s %10s %-9s %10s %10s %6s %10s %5s\n", "DEVICE", "DISKSIZE",
	       "ALGORITHM", "DATA", "COMPR", "RATIO", "TOTAL", "PRIO");
	for (i = 0; i < n; i++) {
		const struct zdev *z = &devs[i];
		char a[32], b[32], c[32], d[32], dev[32], ratio[16], prio[16];

		snprintf(dev, sizeof(dev), "/dev/zram%d", z->id);
		if (z->compr)
			snprintf(ratio, sizeof(ratio), "%.2f", (double)z->orig / (double)z->compr);
		else
			snprintf(ratio, sizeof(ratio), "-");
		if (z->swap)
			snprintf(prio, sizeof(prio), "%d", z->priority);
		else
			snprintf(prio, sizeof(prio), "-");
		printf("%-11s %10s %-9s %10s %10s %6s %10s %5s\n", dev,
		       fmt_size(z->disksize, a, sizeof(a)), z->algorithm,
		       fmt_size(z->orig, b, sizeof(b)), fmt_size(z->compr, c, sizeof(c)),
		       ratio, fmt_size(z->used, d, sizeof(d)), prio);
	}
}

static void print_json(char *report, const struct zdev *devs, int n)
{
	int i;

	printf("{\n  \"report\": ");
	if (report)
		report_json(stdout, report);
	else
		printf("null");
	printf(",\n  \"zram\": [");
	for (i = 0; i < n; i++) {
		const struct zdev *z = &devs[i];

		printf("%s\n    {\"device\": \"/dev/zram%d\", \"disksize\": %" PRIu64
		       ", \"algorithm\": ", i ? "," : "", z->id, z->disksize);
		json_str(stdout, z->algorithm);
		printf(", \"orig_data_size\": %" PRIu64 ", \"compr_data_size\": %" PRIu64
		       ", \"mem_used_total\": %" PRIu64 ", \"mem_limit\": %" PRIu64
		       ", \"mem_used_max\": %" PRIu64 ", \"same_pages\": %" PRIu64
		       ", \"huge_pages\": %" PRIu64 ", \"ratio\": ",
		       z->orig, z->compr, z->used, z->limit, z->used_max, z->same, z->huge);
		if (z->compr)
			printf("%.2f", (double)z->orig / (double)z->compr);
		else
			printf("null");
		printf(", \"swap\": %s, \"priority\": ", z->swap ? "true" : "false");
		if (z->swap)
			printf("%d}", z->priority);
		else
			printf("null}");
	}
	printf("%s]\n}\n", n ? "\n  " : "");
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct zdev devs[MAX_DEVS];
	char report[16384];
	bool json = false, have_report;
	ssize_t n;
	int c, ndev;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			rb_err("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		rb_err("unexpected argument '%s'", argv[optind]);
		return RB_EXIT_USAGE;
	}
	n = rb_read_str(REPORT, report, sizeof(report));
	have_report = n >= 0;
	if (n < 0 && n != -ENOENT)
		rb_warn("%s: %s", REPORT, strerror((int)-n));
	ndev = collect(devs, MAX_DEVS);
	if (json) {
		print_json(have_report ? report : NULL, devs, ndev);
	} else {
		if (have_report) {
			printf("boot report (%s):\n%s\n\n", REPORT, report);
		}
		print_table(devs, ndev);
	}
	return fflush(stdout) == 0 ? RB_EXIT_OK : RB_EXIT_FAIL;
}
