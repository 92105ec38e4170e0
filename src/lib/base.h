/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What any file may need and that is no function: the exit codes of
 * every command, the sizes of arrays and of memory, a macro's value as a
 * string.
 */
#ifndef RAMBOOT_BASE_H
#define RAMBOOT_BASE_H

/* Exit codes, documented in docs/ramboot.md and pinned by tests. */
enum {
	RB_EXIT_OK = 0,
	RB_EXIT_FAIL = 1,   /* runtime error: I/O, corrupt input, verify failed */
	RB_EXIT_USAGE = 2,  /* bad command line */
	RB_EXIT_NOMEM = 3,  /* not enough memory: the caller should fall back */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal: RB_STR(100) is "100". */
#define RB_STR_(x) #x
#define RB_STR(x) RB_STR_(x)
#define KiB (1024ULL)
#define MiB (1024ULL * 1024)
#define GiB (1024ULL * 1024 * 1024)

#endif
