/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A command's options, declared once: the same table gives getopt_long()
 * its long options and --help its option lines, so that an option cannot
 * be parsed without being listed, or listed under another name.
 */
#ifndef RAMBOOT_OPTS_H
#define RAMBOOT_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* One option, or (name NULL) a line of text among them. */
struct rb_opt {
	const char *name;  /* the long name, without "--" */
	int has_arg;       /* no_argument, required_argument, optional_argument */
	int val;           /* what rb_getopt() returns: a letter of the short
			    * options (then --help shows "-x, "), or the
			    * command's own value */
	const char *arg;   /* the value as --help spells it after the name
			    * ("=FILE", " DEVICE", "[=OPTS]"); NULL: none */
	const char *help;  /* the text --help shows from the column on, a
			    * '\n' between its lines; NULL: not listed. A
			    * text line (name NULL) is printed as it is. */
};

/* The options of a command, in the order --help lists them. */
struct rb_optset {
	const char *shorts;     /* getopt_long()'s short options: "d:j:fvh" */
	int indent;             /* where an option without a short form starts */
	int col;                /* where the text starts (two blanks after a
				 * longer option) */
	const struct rb_opt *opts;
	size_t n;
};

#define RB_OPTS_MAX 32
/* An optset of the table t (at most RB_OPTS_MAX options). */
#define RB_OPTSET(shorts, indent, col, t)                                             \
	{ (shorts), (indent), (col), (t),                                             \
	  sizeof(char[ARRAY_SIZE(t) <= RB_OPTS_MAX ? 1 : -1]) * ARRAY_SIZE(t) }

/* The option lines of set, as --help shows them. */
void rb_opts_help(FILE *out, const struct rb_optset *set);

/* getopt_long() over set: rb_getopt_init() builds its table and starts
 * over at argv[1] (opterr = 0: the command says what was wrong); then
 * rb_getopt() returns what getopt_long() does, with opt the entry of the
 * long option just read (NULL after a short one). */
struct rb_getopt {
	const struct rb_optset *set;
	const struct rb_opt *opt;
	struct option lo[RB_OPTS_MAX + 1];
	unsigned char at[RB_OPTS_MAX];   /* lo[i] is set->opts[at[i]] */
};
void rb_getopt_init(struct rb_getopt *g, const struct rb_optset *set);
int rb_getopt(struct rb_getopt *g, int argc, char **argv);

#endif
