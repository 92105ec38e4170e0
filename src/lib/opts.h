/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A command's options, declared once: the same table gives getopt_long()
 * its long options and --help its option lines, so that an option cannot
 * be parsed without being listed, listed under another name, or listed
 * with a value it does not take.
 */
#ifndef RAMBOOT_OPTS_H
#define RAMBOOT_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* One option; with name NULL, a line of text among them, or (help NULL
 * too) the end of the table. */
struct rb_opt {
	const char *name;  /* the long name, without "--" */
	int val;           /* what rb_getopt() returns: below 256, a letter
			    * that is the short option too ("-x, " in the
			    * help); else a value of the command's own */
	const char *arg;   /* the value, as --help spells it after the name,
			    * and so what getopt_long() is told: NULL takes
			    * none, "[=OPTS]" an optional one, anything else
			    * ("=FILE", " DEVICE") a required one */
	const char *help;  /* the text --help shows from the column on, a
			    * '\n' between its lines; NULL: not listed. A
			    * text line (name NULL) is printed as it is. */
};

#define RB_OPT_VERBOSE { "verbose", 'v', NULL, "more messages" }
#define RB_OPT_HELP { "help", 'h', NULL, "this help" }
#define RB_OPT_HELP_UNLISTED { "help", 'h', NULL, NULL }

/* A command's --help and options: head, the options in the order --help
 * lists them (at most RB_OPTS_MAX, RB_OPTS() of them), tail. */
struct rb_optset {
	int indent;             /* where an option without a short form starts */
	int col;                /* where the text starts (two blanks after a
				 * longer option) */
	const char *head;
	const struct rb_opt *opts;
	const char *tail;
};

#define RB_OPTS_MAX 32
/* .opts = RB_OPTS(entry, ...): the entries and the end of the table. */
#define RB_OPTS(...) ((const struct rb_opt[]){ __VA_ARGS__, { NULL, 0, NULL, NULL } })

/* --help: head, the option lines, tail. */
void rb_opts_usage(FILE *out, const struct rb_optset *set);
/* A usage error told in full: the message (printf) as an error, then
 * the whole --help on stderr. Returns RB_EXIT_USAGE. */
int rb_opts_fail(const struct rb_optset *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The option lines alone, for a help of several sets. */
void rb_opts_help(FILE *out, const struct rb_optset *set);

/* getopt_long() over set, begun as struct rb_getopt g = { .set = &set }:
 * the first call builds getopt_long()'s tables and starts over at argv[1]
 * (opterr = 0: the command says what was wrong); each returns what
 * getopt_long() does, with opt the entry of the long option just read
 * (NULL after a short one). */
struct rb_getopt {
	const struct rb_optset *set;
	const struct rb_opt *opt;
	bool started;
	struct option lo[RB_OPTS_MAX + 1];
	char shorts[3 * RB_OPTS_MAX + 1];  /* "d:j:fvh": the letters of opts */
	unsigned char at[RB_OPTS_MAX];   /* lo[i] is set->opts[at[i]] */
};
int rb_getopt(struct rb_getopt *g, int argc, char **argv);

/* A word an option's value may be, and what it stands for (an enum's
 * value, never negative). */
struct rb_word {
	const char *word;
	int val;
};
/* rb_word(arg, RB_WORDS(entry, ...)): the entries and the end of the table. */
#define RB_WORDS(...) ((const struct rb_word[]){ __VA_ARGS__, { NULL, -1 } })
/* What the word arg stands for in words, or -1 when it is none of them. */
int rb_word(const char *arg, const struct rb_word *words);

#endif
