// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot status: the boot report left in /run/ramboot/report by
 * `ramboot boot`, the lazy copier's status file (/run/ramboot/lazy, see
 * docs/lazy.md) when there is one, then the live statistics of every
 * initialised zram device. mm_stat (zram.rst) reads:
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
#include <sys/stat.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/keys.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/report.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "lib/text.h"
#include "lib/units.h"
#include "dev/zram.h"
#include "status/status.h"
#include "status/verdict.h"

#define REPORT "/run/ramboot/report"
#define LAZY "/run/ramboot/lazy"
#define MAX_DEVS 64

/* The status file parsed in place: each value points into the file's
 * text, NULL when the key is missing, empty or (numbers and times) not
 * well formed. */
struct lazy_status {
	const char *val[KEY_COUNT]; /* by key_id: the LK_* keys */
	uint64_t copied;           /* bytes_cached + bytes_network */
	bool have_copied;
	int permille;              /* copied / size, rounded down; -1 unknown */
	bool gone;                 /* the file says the copy runs, its pid has ended */
};

struct zdev {
	int id;
	uint64_t disksize;
	char algorithm[32];
	uint64_t orig, compr, used, limit, used_max, same, huge;
	bool swap;
	int priority;
};

enum { OPT_JSON = 256, OPT_CHECK };

static const struct rb_optset optset = {
	.head = "Usage: ramboot status [--json | --check]\n"
		"\n"
		"Prints what the client runs from, in one line (\"running from RAM (...)\",\n"
		"\"FALLBACK to the network image: REASON\", ...), then the boot report\n"
		"(" REPORT ", keys with a value only), the lazy copy (" LAZY ":\n"
		"state, bytes copied from the page cache and from the network, timeline)\n"
		"when there is one and, for every initialised zram device, its size,\n"
		"compressor, stored and compressed bytes, ratio, RAM used and swap\n"
		"priority.\n"
		"\n",
	.opts = RB_OPTS(
		{ "json", OPT_JSON, NULL,
		  "one JSON object: {\"verdict\": \"...\", \"in_ram\": BOOL,\n"
		  "\"report\": {...}, \"lazy\": {...}, \"zram\": [...]}\n"
		  "(\"lazy\" only when its file exists)" },
		{ "check", OPT_CHECK, NULL,
		  "print the verdict line only; exit 0 when the client runs\n"
		  "from RAM, 1 when it does not (a fallback, the network image\n"
		  "as asked, a lazy copy not yet switched, no report)" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit codes: 0 ok (also when there is nothing to show; with --check: runs\n"
		"from RAM), 1 with --check: not from RAM, or stdout failed, 2 usage.\n",
	.indent = 2, .col = 14,
};

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
/* A report's rate, in bytes per second: bytes_per_second=, or the mbps=
 * (10^6 bytes per second, one decimal) of a report that an older ramboot
 * wrote. false for any other key or a value that does not parse. */
static bool report_rate(const char *key, const char *val, uint64_t *bps)
{
	char *end;
	double v;

	if (!strcmp(key, "bytes_per_second") && val[0] != '-' && is_json_int(val)) {
		*bps = strtoull(val, NULL, 10);
		return true;
	}
	if (strcmp(key, "mbps") || !*val || strspn(val, "0123456789.") != strlen(val))
		return false;
	v = strtod(val, &end);
	if (*end || !(v >= 0 && v < 1e9))
		return false;
	*bps = (uint64_t)(v * 1e6);
	return true;
}

static void report_json(FILE *f, char *text)
{
	struct report_line l;
	size_t pos = 0;
	bool first = true;
	uint64_t bps;

	fputs("{", f);
	while (report_text_next(text, &pos, &l)) {
		char *line = text + (l.key - text), *eq = line + l.klen;

		if (line[0] == '#' || !l.val || l.klen == 0)
			continue;
		*eq = '\0';
		eq[1 + l.vlen] = '\0';
		fprintf(f, "%s\n    ", first ? "" : ",");
		first = false;
		if (report_rate(line, eq + 1, &bps)) {
			/* one key, whichever ramboot wrote the report */
			fprintf(f, "\"bytes_per_second\": %" PRIu64, bps);
			continue;
		}
		json_str(f, line);
		fputs(": ", f);
		if (is_json_int(eq + 1))
			fputs(eq + 1, f);
		else
			json_str(f, eq + 1);
	}
	fputs(first ? "}" : "\n  }", f);
}

/* ---- the lazy copy ---- */

/* A byte count or pid: digits only, no leading zero, at most 15 digits
 * (exact in any JSON reader; two of them add up without overflow). */
static bool lazy_num_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && !s[n] && n <= 15 && (s[0] != '0' || n == 1);
}

/* A time as the copier writes it ("%.2f"): digits, then optionally a
 * point and digits; also a valid JSON number. */
static bool lazy_time_ok(const char *s)
{
	size_t n = strspn(s, "0123456789"), f;

	if (n == 0 || n > 12 || (s[0] == '0' && n > 1))
		return false;
	if (!s[n])
		return true;
	if (s[n] != '.')
		return false;
	f = strspn(s + n + 1, "0123456789");
	return f > 0 && f <= 9 && !s[n + 1 + f];
}

/* key=value lines; a line without '=', an unknown key or a malformed
 * number is skipped. The caller refuses a text with a repeated key. */
static void lazy_parse(char *text, struct lazy_status *ls)
{
	struct report_line l;
	size_t pos = 0;
	uint64_t cached, network, size;
	int k;

	memset(ls, 0, sizeof(*ls));
	ls->permille = -1;
	while (report_text_next(text, &pos, &l)) {
		char *line = text + (l.key - text), *v = line + l.klen + 1;

		if (!l.val)
			continue;
		v[-1] = '\0';
		v[l.vlen] = '\0';
		k = key_find(KEY_LAZY, line);
		/* the name of the --rate cap before the key said its unit */
		if (k < 0 && !strcmp(line, "rate"))
			k = LK_MAX_BYTES_PER_SECOND;
		if (k < 0)
			continue;
		if (!*v || (key_table[k].kind == KIND_TIME ? !lazy_time_ok(v) :
			    key_table[k].kind != KIND_TEXT && !lazy_num_ok(v)))
			v = NULL;
		ls->val[k] = v;
	}
	if (!ls->val[LK_BYTES_CACHED] || !ls->val[LK_BYTES_NETWORK])
		return;
	cached = strtoull(ls->val[LK_BYTES_CACHED], NULL, 10);
	network = strtoull(ls->val[LK_BYTES_NETWORK], NULL, 10);
	ls->copied = cached + network;
	ls->have_copied = true;
	if (!ls->val[LK_SIZE] || (size = strtoull(ls->val[LK_SIZE], NULL, 10)) == 0)
		return;
	/* copied < 2e15: no overflow. More than the size (a file that does
	 * not add up) shows as 100%. */
	ls->permille = ls->copied >= size ? 1000 : (int)(ls->copied * 1000 / size);
}

/* The file's text for a terminal: control characters (an escape
 * sequence in an image name) as '?'. */
static void put_text(const char *s)
{
	for (; *s; s++)
		putchar(text_is_ctl((unsigned char)*s) ? '?' : *s);
}

/* " (TEXT)" after a value, when there is a TEXT. */
static void put_paren(const char *s)
{
	if (!s)
		return;
	printf(" (");
	put_text(s);
	putchar(')');
}

/* The report for a person: keys with a value only, byte counts also in
 * binary units, control characters as '?'. */
static void print_report(const char *text)
{
	struct report_line l;
	size_t pos = 0;

	while (report_text_next(text, &pos, &l)) {
		size_t llen = l.val ? l.klen + 1 + l.vlen : l.klen;
		char line[1024], sz[64], *eq;
		uint64_t bps;
		int k;

		if (llen >= sizeof(line))
			llen = sizeof(line) - 1;
		memcpy(line, l.key, llen);
		line[llen] = '\0';
		eq = strchr(line, '=');
		if (!line[0] || (eq && !eq[1]))
			continue;
		if (eq)
			*eq = '\0';
		put_text(line);
		if (eq) {
			putchar('=');
			put_text(eq + 1);
		}
		if (eq && lazy_num_ok(eq + 1) && (k = key_find(KEY_REPORT, line)) >= 0 &&
		    key_table[k].show == SHOW_SIZE)
			printf(" (%s)", fmt_size(strtoull(eq + 1, NULL, 10), sz, sizeof(sz)));
		if (eq) {
			*eq = '\0';
			if (report_rate(line, eq + 1, &bps))
				printf(" (%s)", fmt_rate(bps, sz, sizeof(sz)));
			*eq = '=';
		}
		putchar('\n');
	}
}

/* A copy that the file says is under way (not switched, not given up)
 * whose copier has ended: a kill -9 leaves its last state behind. The
 * pid is looked up in /proc below the root prefix. */
static bool copier_gone(const struct lazy_status *ls)
{
	const char *state = ls->val[LK_STATE], *pid = ls->val[LK_PID];
	char path[PATH_MAX];
	struct stat st;

	if (!state || !pid || !strcmp(state, "switched") || !strcmp(state, "gave-up") ||
	    ls->val[LK_GAVE_UP])
		return false;
	if (rb_path(path, sizeof(path), "/proc/%s", pid) < 0)
		return false;
	return stat(path, &st) < 0 && errno == ENOENT;
}

/* Where the copy comes from, when that is more than the image itself:
 * a udpcast stream (--udpcast), or the image after the stream gave way. */
static void print_lazy_source(const struct lazy_status *ls)
{
	const char *const *v = ls->val;
	char a[32];

	if (!v[LK_SOURCE] || (!strcmp(v[LK_SOURCE], "network") && !v[LK_SOURCE_FALLBACK]))
		return;
	printf("  source    ");
	put_text(v[LK_SOURCE]);
	if (v[LK_BYTES_STREAM] && strcmp(v[LK_BYTES_STREAM], "0"))
		printf(": %s from the stream",
		       fmt_size(strtoull(v[LK_BYTES_STREAM], NULL, 10), a, sizeof(a)));
	if (v[LK_BYTES_COMPARED] && strcmp(v[LK_BYTES_COMPARED], "0"))
		printf(", %s compared with the image",
		       fmt_size(strtoull(v[LK_BYTES_COMPARED], NULL, 10), a, sizeof(a)));
	if (v[LK_SOURCE_FALLBACK]) {
		printf(" (the stream gave way: ");
		put_text(v[LK_SOURCE_FALLBACK]);
		if (v[LK_SOURCE_ERROR]) {
			printf(": ");
			put_text(v[LK_SOURCE_ERROR]);
		}
		putchar(')');
	}
	putchar('\n');
}

static void print_lazy(const struct lazy_status *ls)
{
	static const struct { enum key_id key; const char *what; } steps[] = {
		{ LK_STARTED, "started" }, { LK_VERIFIED, "verified" },
		{ LK_SWITCHED, "switched" }, { LK_UPDATED, "updated" },
	};
	const char *const *v = ls->val;
	const char *state = v[LK_STATE] ? v[LK_STATE] : "unknown";
	char a[32], b[32], c[32];
	size_t i;
	bool first = true;

	printf("lazy copy (%s):\n", LAZY);
	if (v[LK_IMAGE] || v[LK_TARGET]) {
		printf("  image     ");
		put_text(v[LK_IMAGE] ? v[LK_IMAGE] : "-");
		if (v[LK_TARGET]) {
			printf(" to ");
			put_text(v[LK_TARGET]);
		}
		put_paren(v[LK_COPY]);
		putchar('\n');
	}
	printf("  state     ");
	if (v[LK_GAVE_UP] || !strcmp(state, "gave-up")) {
		printf("gave up: ");
		put_text(v[LK_GAVE_UP] ? v[LK_GAVE_UP] : "unknown");
		put_paren(v[LK_ERROR]);
	} else if (!strcmp(state, "switched") && v[LK_SWITCHED]) {
		printf("switched at %s s", v[LK_SWITCHED]);
	} else {
		put_text(state);
		if (ls->gone)
			printf(" -- but the copier (pid %s) is gone (killed?): the copy "
			       "stopped", v[LK_PID]);
	}
	putchar('\n');
	if (ls->have_copied) {
		printf("  copied    ");
		if (ls->permille >= 0)
			printf("%d.%d%% of %s: ", ls->permille / 10, ls->permille % 10,
			       fmt_size(strtoull(v[LK_SIZE], NULL, 10), a, sizeof(a)));
		printf("%s from the page cache, %s from the network\n",
		       fmt_size(strtoull(v[LK_BYTES_CACHED], NULL, 10), b, sizeof(b)),
		       fmt_size(strtoull(v[LK_BYTES_NETWORK], NULL, 10), c, sizeof(c)));
	}
	print_lazy_source(ls);
	if (v[LK_CHUNKS]) {
		/* over HTTP: the copier's NBD server */
		printf("  chunks    ");
		put_text(v[LK_CHUNKS]);
		printf(" present, %s fetching, %s fetches failed", v[LK_FETCHING] ? v[LK_FETCHING] : "0",
		       v[LK_FETCH_FAILED] ? v[LK_FETCH_FAILED] : "0");
		put_paren(v[LK_FETCH_ERROR]);
		putchar('\n');
	}
	if (v[LK_PROFILE] && strcmp(v[LK_PROFILE], "none")) {
		printf("  profile   ");
		put_text(v[LK_PROFILE]);
		put_paren(v[LK_PROFILE_FILE]);
		putchar('\n');
	}
	printf("  timeline  ");
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		if (!v[steps[i].key])
			continue;
		printf("%s%s %s s", first ? "" : ", ", steps[i].what, v[steps[i].key]);
		first = false;
	}
	printf("%s\n", first ? "-" : " (since boot)");
}

static void lazy_json(FILE *f, const struct lazy_status *ls)
{
	int k;

	fputs("{", f);
	for (k = KEY_LAZY_FIRST; k < KEY_COUNT; k++) {
		fprintf(f, "%s\n    \"%s\": ", k > KEY_LAZY_FIRST ? "," : "", key_name(k));
		if (!ls->val[k])
			fputs("null", f);
		else if (key_table[k].kind == KIND_TEXT)
			json_str(f, ls->val[k]);
		else
			fputs(ls->val[k], f);
	}
	fputs(",\n    \"copied\": ", f);
	if (ls->have_copied)
		fprintf(f, "%" PRIu64, ls->copied);
	else
		fputs("null", f);
	fputs(",\n    \"percent\": ", f);
	if (ls->permille >= 0)
		fprintf(f, "%d.%d", ls->permille / 10, ls->permille % 10);
	else
		fputs("null", f);
	fprintf(f, ",\n    \"copier_gone\": %s", ls->gone ? "true" : "false");
	fputs("\n  }", f);
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

static void print_json(const char *verdict, bool in_ram, char *report,
		       const struct lazy_status *lazy, const struct zdev *devs, int n)
{
	int i;

	printf("{\n  \"verdict\": ");
	json_str(stdout, verdict);
	printf(",\n  \"in_ram\": %s,\n  \"report\": ", in_ram ? "true" : "false");
	if (report)
		report_json(stdout, report);
	else
		printf("null");
	if (lazy) {
		printf(",\n  \"lazy\": ");
		lazy_json(stdout, lazy);
	}
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

int status_show(const struct status_opts *o)
{
	static struct zdev devs[MAX_DEVS];
	static char report[16384], lazy[16384];
	char key[64];
	struct lazy_status ls;
	bool have_report, have_lazy, report_bad = false;
	char verdict[1024];
	enum verdict vd;
	ssize_t n;
	int ndev;

	n = rb_read_regular(REPORT, report, sizeof(report));
	have_report = n >= 0;
	if (n < 0 && n != -ENOENT)
		rb_warn("%s: %s", REPORT, n == -EINVAL ? "not a regular file; ignored" :
			strerror((int)-n));
	n = rb_read_regular(LAZY, lazy, sizeof(lazy));
	have_lazy = n >= 0;
	if (n < 0 && n != -ENOENT)
		rb_warn("%s: %s", LAZY, n == -EINVAL ? "not a regular file; ignored" :
			strerror((int)-n));
	if (have_report && report_text_repeated(report, key, sizeof(key))) {
		rb_warn("%s: the key %s is repeated; ignored", REPORT, key);
		have_report = false;
		report_bad = true;
	}
	if (have_lazy && report_text_repeated(lazy, key, sizeof(key))) {
		rb_warn("%s: the key %s is repeated; ignored", LAZY, key);
		have_lazy = false;
	}
	if (o->json && o->check) {
		rb_err("--json and --check exclude each other");
		return RB_EXIT_USAGE;
	}
	/* before lazy_parse, which cuts the text into pieces */
	if (report_bad) {
		vd = V_FALLBACK;
		snprintf(verdict, sizeof(verdict), "UNKNOWN: the boot report repeats a key "
			 "(not written by ramboot alone)");
	} else {
		vd = status_verdict(have_report ? report : NULL, have_lazy ? lazy : NULL,
				    verdict, sizeof(verdict));
	}
	if (have_lazy) {
		lazy_parse(lazy, &ls);
		ls.gone = copier_gone(&ls);
		if (ls.gone && vd == V_COPYING) {
			vd = V_FALLBACK;
			snprintf(verdict, sizeof(verdict), "FALLBACK to the network image: the lazy "
				 "copier (pid %s) is gone before it switched", ls.val[LK_PID]);
		}
	}
	if (o->check) {
		printf("ramboot: %s\n", verdict);
		if (fflush(stdout) != 0)
			return RB_EXIT_FAIL;
		return vd == V_RAM ? RB_EXIT_OK : RB_EXIT_FAIL;
	}
	ndev = collect(devs, MAX_DEVS);
	if (o->json) {
		print_json(verdict, vd == V_RAM, have_report ? report : NULL,
			   have_lazy ? &ls : NULL, devs, ndev);
	} else {
		printf("ramboot: %s\n\n", verdict);
		if (have_report) {
			printf("boot report (%s):\n", REPORT);
			print_report(report);
			putchar('\n');
		}
		if (have_lazy) {
			print_lazy(&ls);
			putchar('\n');
		}
		print_table(devs, ndev);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	struct status_opts o = { false, false };
	struct rb_getopt g = { .set = &optset };
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_JSON: o.json = true; break;
		case OPT_CHECK: o.check = true; break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default: return rb_opts_fail(&optset, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		rb_err("unexpected argument '%s'", argv[optind]);
		return RB_EXIT_USAGE;
	}
	return status_show(&o);
}
