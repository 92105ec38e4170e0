/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Messages: one line each, "ramboot: CMD: error: ..." on stderr and, once
 * rb_kmsg_open() found it, in the kernel log; the usage errors of a
 * command line and the dispatch of `ramboot CMD SUB`; a reason formatted
 * into a caller's buffer.
 */
#ifndef RAMBOOT_MSG_H
#define RAMBOOT_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

extern int rb_verbose;
/* "ramboot: <cmd>: " prefix for every message of the running command. */
void rb_set_cmd(const char *cmd);
void rb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rb_info, and the kernel log at info level once rb_kmsg_open() found it:
 * for what the journal keeps of a boot (a copy started, a copy made). */
void rb_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Also send warnings and errors (and rb_note) to the kernel log (/dev/kmsg
 * below the root prefix), from now on; nothing when it cannot be opened. */
void rb_kmsg_open(void);
/* A usage error of `ramboot CMD`: one line naming its --help; returns
 * RB_EXIT_USAGE. */
int rb_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The `default:` of a command's getopt_long() loop (run with opterr = 0):
 * "unknown or incomplete option '--bogus'" (or '-x') as a usage error of
 * CMD; returns RB_EXIT_USAGE. */
int rb_usage_option(const char *cmd, char *const argv[]);
/* `ramboot CMD SUB [ARGS]`: the function of SUB in subs (n of them)
 * with argv from SUB on; "-h" or "--help" as SUB is usage(stdout), and
 * so is `SUB -h` (or --help) alone for a SUB that takes no options. No
 * SUB or an unknown one is a usage error naming those there are. */
struct rb_subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool noopts;      /* its arguments are operands, never options */
};
int rb_subcmd_run(const char *cmd, const struct rb_subcmd *subs, size_t n,
		  void (*usage)(FILE *out), int argc, char **argv);
/* Format a message into err (if any) and return rc: for helpers that
 * return -errno and say why in a caller's buffer. */
int rb_errfmt(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
