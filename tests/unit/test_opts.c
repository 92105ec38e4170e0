// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/opts.c: one table gives getopt_long() its options (long and short,
 * with or without a value) and --help its lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "lib/opts.h"

enum { OPT_LONG = 256, OPT_MAYBE, OPT_HIDDEN };

static const struct rb_optset set = {
	.head = "Usage: x\n",
	.opts = RB_OPTS(
		{ "output", 'o', "=FILE",
		  "write FILE\n"
		  "(atomically)" },
		{ "long-only", OPT_LONG, " N", "a value after a blank" },
		{ "a-very-long-option", OPT_MAYBE, "[=OPTS]", "past the column" },
		{ NULL, 0, NULL, "  text as it is\n" },
		{ "hidden", OPT_HIDDEN, NULL, NULL },
		RB_OPT_VERBOSE,
		RB_OPT_HELP),
	.tail = "End.\n",
	.indent = 6, .col = 22,
};

static void test_help(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	rb_opts_usage(f, &set);
	fclose(f);
	CHECK_EQ_STR(buf, "Usage: x\n"
			  "  -o, --output=FILE   write FILE\n"
			  "                      (atomically)\n"
			  "      --long-only N   a value after a blank\n"
			  "      --a-very-long-option[=OPTS]  past the column\n"
			  "  text as it is\n"
			  "  -v, --verbose       more messages\n"
			  "  -h, --help          this help\n"
			  "End.\n");
	free(buf);
}

/* The options of argv, one letter or '#' (a value of the command's own)
 * each, and the values seen, into out. */
static void parse(char **argv, int argc, char *out, size_t len)
{
	struct rb_getopt g = { .set = &set };
	size_t n = 0;
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1 && n + 32 < len) {
		n += (size_t)snprintf(out + n, len - n, "%c%s%s%s ", c < 256 ? c : '#',
				      g.opt ? g.opt->name : "", optarg ? "=" : "",
				      optarg ? optarg : "");
	}
	snprintf(out + n, len - n, "| %s", optind < argc ? argv[optind] : "");
}

static void test_getopt(void)
{
	char *a[] = { (char *)"x", (char *)"-o", (char *)"f", (char *)"--long-only", (char *)"3",
		      (char *)"--a-very", (char *)"--hidden", (char *)"-v", (char *)"op", NULL };
	char *b[] = { (char *)"x", (char *)"--a-very-long-option=k", (char *)"-ofile", NULL };
	char *c[] = { (char *)"x", (char *)"-x", NULL };
	char *d[] = { (char *)"x", (char *)"--bogus", NULL };
	char out[256];

	parse(a, 9, out, sizeof(out));
	CHECK_EQ_STR(out, "o=f #long-only=3 #a-very-long-option #hidden v | op");
	parse(b, 3, out, sizeof(out));
	CHECK_EQ_STR(out, "#a-very-long-option=k o=file | ");
	parse(c, 2, out, sizeof(out));
	CHECK_EQ_STR(out, "? | ");
	parse(d, 2, out, sizeof(out));
	CHECK_EQ_STR(out, "? | ");
}

/* An option's word: the value it stands for, -1 for any other. */
static void test_word(void)
{
	const struct rb_word *w = RB_WORDS({ "auto", 0 }, { "bar", 3 }, { "none", 1 });

	CHECK(rb_word("auto", w) == 0);
	CHECK(rb_word("bar", w) == 3);
	CHECK(rb_word("none", w) == 1);
	CHECK(rb_word("ba", w) == -1);
	CHECK(rb_word("", w) == -1);
	CHECK(rb_word("Auto", w) == -1);
}

int main(void)
{
	RUN(test_help);
	RUN(test_getopt);
	RUN(test_word);
	return TAP_DONE();
}
