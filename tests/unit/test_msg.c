// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/msg.c: the usage helpers the commands share (rb_usage_option,
 * rb_subcmd_run). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"


/* What fn wrote to stderr, in buf; its return in *rc. */
static void capture(int (*fn)(void *), void *arg, int *rc, char *buf, size_t len)
{
	int fd = memfd_create("stderr", MFD_CLOEXEC), saved;
	ssize_t n;

	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	*rc = fn(arg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread_full(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

struct opt_case {
	const char *shortopts;
	char *argv[4];
};

static int run_getopt(void *arg)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 'j' },
		{ "salt", required_argument, NULL, 256 },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct opt_case *c = arg;
	int argc = 0, o;

	while (c->argv[argc])
		argc++;
	optind = 0;   /* glibc: start afresh, also inside an option group */
	opterr = 0;
	while ((o = getopt_long(argc, c->argv, c->shortopts, lo, NULL)) != -1)
		if (o != 'v' && o != 'j' && o != 256)
			return rb_usage_option("serve", c->argv);
	return -1;
}

static void option_says(const char *a1, const char *a2, const char *want)
{
	struct opt_case c = { "vj:", { (char *)"serve", (char *)a1, (char *)a2, NULL } };
	char out[256];
	int rc;

	capture(run_getopt, &c, &rc, out, sizeof(out));
	CHECK_EQ_INT(rc, RB_EXIT_USAGE);
	if (!strstr(out, want))
		printf("# %s %s: got: %s", a1, a2 ? a2 : "", out);
	CHECK(strstr(out, want) != NULL);
}

static void test_usage_option(void)
{
	const char *const see = " (see 'ramboot serve --help')";

	option_says("--bogus", NULL, "unknown or incomplete option '--bogus'");
	option_says("--salt", NULL, "unknown or incomplete option '--salt'");
	/* a long option whose short form is a letter */
	option_says("--threads", NULL, "unknown or incomplete option '--threads'");
	option_says("-x", NULL, "unknown or incomplete option '-x'");
	option_says("-vx", NULL, "unknown or incomplete option '-vx'");
	/* the unknown letter first in its group: optind stays behind */
	option_says("-xv", NULL, "unknown or incomplete option '-x'");
	option_says("-v", "-xv", "unknown or incomplete option '-x'");
	option_says("-j", NULL, "unknown or incomplete option '-j'");
	option_says("--bogus", NULL, see);
}

static int sub_argc;
static const char *sub_arg0;

static int sub_fn(int argc, char **argv)
{
	sub_argc = argc;
	sub_arg0 = argv[0];
	return 7;
}

static void sub_usage(FILE *out)
{
	fputs("usage text\n", out);
}

struct sub_case {
	int argc;
	char **argv;
};

static int run_sub(void *arg)
{
	static const struct rb_subcmd subs[] = {
		{ "format", sub_fn, false },
		{ "open", sub_fn, false },
		{ "close", sub_fn, false },
	};
	struct sub_case *c = arg;

	return rb_subcmd_run("verity", subs, ARRAY_SIZE(subs), sub_usage, c->argc, c->argv);
}

static void test_subcmd(void)
{
	char *ok[] = { (char *)"verity", (char *)"open", (char *)"a", NULL };
	char *none[] = { (char *)"verity", NULL };
	char *bad[] = { (char *)"verity", (char *)"opem", NULL };
	struct sub_case c = { 3, ok };
	char out[256];
	int rc;

	capture(run_sub, &c, &rc, out, sizeof(out));
	CHECK_EQ_INT(rc, 7);
	CHECK_EQ_INT(sub_argc, 2);
	CHECK_EQ_STR(sub_arg0, "open");
	CHECK_EQ_STR(out, "");
	c = (struct sub_case){ 1, none };
	capture(run_sub, &c, &rc, out, sizeof(out));
	CHECK_EQ_INT(rc, RB_EXIT_USAGE);
	CHECK(strstr(out, "need format, open or close (see 'ramboot verity --help')") != NULL);
	c = (struct sub_case){ 2, bad };
	capture(run_sub, &c, &rc, out, sizeof(out));
	CHECK_EQ_INT(rc, RB_EXIT_USAGE);
	CHECK(strstr(out, "unknown command 'opem'") != NULL);
}

int main(void)
{
	RUN(test_usage_option);
	RUN(test_subcmd);
	return TAP_DONE();
}
