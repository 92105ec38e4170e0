// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Options declared once (opts.h): getopt_long()'s table and --help's
 * option lines, both from the command's struct rb_optset.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/msg.h"
#include "lib/opts.h"

static bool has_short(int val)
{
	return val > 0 && val < 256;
}

void rb_opts_help(FILE *out, const struct rb_optset *set)
{
	const struct rb_opt *o;

	for (o = set->opts; o->name || o->help; o++) {
		const char *p, *nl, *arg = o->arg ? o->arg : "";
		int len;

		if (!o->help)
			continue;
		if (!o->name) {
			fputs(o->help, out);
			continue;
		}
		if (has_short(o->val))
			len = fprintf(out, "  -%c, --%s%s", o->val, o->name, arg);
		else
			len = fprintf(out, "%*s--%s%s", set->indent, "", o->name, arg);
		fprintf(out, "%*s", len >= 0 && len < set->col ? set->col - len : 2, "");
		for (p = o->help; (nl = strchr(p, '\n')); p = nl + 1)
			fprintf(out, "%.*s\n%*s", (int)(nl - p), p, set->col, "");
		fprintf(out, "%s\n", p);
	}
}

void rb_opts_usage(FILE *out, const struct rb_optset *set)
{
	if (set->head)
		fputs(set->head, out);
	rb_opts_help(out, set);
	if (set->tail)
		fputs(set->tail, out);
}

int rb_opts_fail(const struct rb_optset *set, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rb_err("%s", msg);
	rb_opts_usage(stderr, set);
	return RB_EXIT_USAGE;
}

static void getopt_start(struct rb_getopt *g)
{
	const struct rb_optset *set = g->set;
	size_t i, n = 0, k = 0;

	for (i = 0; set->opts[i].name || set->opts[i].help; i++) {
		const struct rb_opt *o = &set->opts[i];
		int has = !o->arg ? no_argument :
			  o->arg[0] == '[' ? optional_argument : required_argument;

		if (!o->name)
			continue;
		if (n == RB_OPTS_MAX)
			abort();   /* a table longer than its room: caught by any test */
		g->lo[n] = (struct option){ o->name, has, NULL, o->val };
		g->at[n++] = (unsigned char)i;
		if (has_short(o->val)) {
			g->shorts[k++] = (char)o->val;
			if (has != no_argument)
				g->shorts[k++] = ':';
			if (has == optional_argument)
				g->shorts[k++] = ':';
		}
	}
	g->shorts[k] = '\0';
	g->lo[n] = (struct option){ NULL, 0, NULL, 0 };
	g->started = true;
	/* 0, not 1: getopt_long() starts over from scratch (glibc and musl
	 * both), whatever a parse before left behind. */
	optind = 0;
	opterr = 0;
}

int rb_getopt(struct rb_getopt *g, int argc, char **argv)
{
	int li = -1, c;

	if (!g->started)
		getopt_start(g);
	c = getopt_long(argc, argv, g->shorts, g->lo, &li);
	g->opt = li >= 0 ? &g->set->opts[g->at[li]] : NULL;
	return c;
}

int rb_word(const char *arg, const struct rb_word *words)
{
	for (; words->word; words++)
		if (!strcmp(arg, words->word))
			return words->val;
	return -1;
}
