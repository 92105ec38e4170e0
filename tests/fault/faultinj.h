/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultinj.so, shared by its files: the rules (rules.c parses FAULTINJ
 * into them and matches calls against them), the real libc functions and
 * what a rule does to a call (faultinj.c), fd tracking (open.c). The
 * wrappers themselves: io.c (read, write, sync), open.c (open, close,
 * dup), fs.c (stat, mount, ioctl, mmap). The rules are described at the
 * top of faultinj.c.
 */
#ifndef FAULTINJ_H
#define FAULTINJ_H

/* Both open and open64 etc. are defined here: no header redirection of
 * one to the other, and no fortify wrappers around them. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_RULES 32
#define FD_TRACK  1024
#define EXIT_CONF 125

enum op {
	OP_READ, OP_PREAD, OP_WRITE, OP_PWRITE, OP_COPY, OP_OPEN, OP_CLOSE,
	OP_FSYNC, OP_FDATASYNC, OP_SYNC_RANGE, OP_IOCTL, OP_MOUNT, OP_UMOUNT,
	OP_MMAP, OP_STAT, OP_COUNT
};

#define OP_BIT(op) (1u << (op))
#define OPS_ALL    (OP_BIT(OP_COUNT) - 1)
#define OPS_IO     (OP_BIT(OP_READ) | OP_BIT(OP_PREAD) | OP_BIT(OP_WRITE) | \
		    OP_BIT(OP_PWRITE) | OP_BIT(OP_COPY))

struct rule {
	unsigned ops;           /* OP_BIT()s; 0: off in this process */
	const char *path;       /* path= glob, NULL: any */
	int fd;                 /* fd=, -1: any */
	uint64_t nth, after, times;
	unsigned delay_ms;
	int sig;
	int err;
	bool stall;
	bool hang;
	bool cut;               /* mmap: the file cut to half, after the call */
	const char *ren_from;   /* rename=: this file to ren_to, before the call */
	const char *ren_to;
	char action[80];        /* for the log */
	_Atomic uint64_t calls, bytes, fired;
};

/* One intercepted call, as the rules see it. */
struct call {
	enum op op;
	int fd, fd2;            /* -1: none */
	const char *path;       /* open, mount, umount, stat */
	size_t len;             /* bytes asked for; after= may cut it */
	uint32_t counted;       /* after= rules that count what it moves */
	bool cut;               /* set by enter(): a cut rule fired */
};

#define FD_CALL(o, f, len_) { .op = (o), .fd = (f), .fd2 = -1, .len = (len_) }
#define PATH_CALL(o, p)     { .op = (o), .fd = -1, .fd2 = -1, .path = (p) }

/*
 * A wrapper, one line each: FN with PARAMS runs the rules for the call
 * CALL_ (FD_CALL, PATH_CALL) and then, unless one failed it, the real FN
 * with ARGS, which may use c.len (the length after= left); the bytes it
 * moved are counted (done). RET is what FN returns: -1 fails it.
 */
#define WRAP(ret, fn, call_, params, args)				\
	ret fn params							\
	{								\
		struct call c = call_;					\
									\
		if (enter(&c) < 0)					\
			return -1;					\
		return (ret)done(&c, REAL(fn) args);			\
	}

/* Nothing but the wrappers leaves the shared object. */
#pragma GCC visibility push(hidden)

/* rules.c */
extern const char *const op_label[OP_COUNT];
extern struct rule rules[MAX_RULES];
extern unsigned nrules;
extern uint32_t path_rules;             /* rules with a path= selector */
void rules_parse(const char *env);
bool path_match(const char *pat, const char *path);
bool rule_match(const struct rule *r, unsigned i, const struct call *c);

/* open.c: per fd, the path= rules whose glob matched the path it was
 * opened from */
void fd_set_mask(int fd, uint32_t m);
uint32_t fd_rules(int fd);

/* faultinj.c */
void say(const char *s);
void resolve_all(void);
int enter(struct call *c);
ssize_t done(const struct call *c, ssize_t n);

extern ssize_t (*real_read)(int, void *, size_t);
extern ssize_t (*real___read_chk)(int, void *, size_t, size_t);
extern ssize_t (*real_pread)(int, void *, size_t, off_t);
extern ssize_t (*real_pread64)(int, void *, size_t, off64_t);
extern ssize_t (*real___pread_chk)(int, void *, size_t, off_t, size_t);
extern ssize_t (*real___pread64_chk)(int, void *, size_t, off64_t, size_t);
extern ssize_t (*real_write)(int, const void *, size_t);
extern ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
extern ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
extern ssize_t (*real_copy_file_range)(int, off64_t *, int, off64_t *, size_t, unsigned int);
extern int (*real_open)(const char *, int, ...);
extern int (*real_open64)(const char *, int, ...);
extern int (*real_openat)(int, const char *, int, ...);
extern int (*real_openat64)(int, const char *, int, ...);
extern int (*real___open_2)(const char *, int);
extern int (*real___open64_2)(const char *, int);
extern int (*real___openat_2)(int, const char *, int);
extern int (*real___openat64_2)(int, const char *, int);
extern int (*real_close)(int);
extern int (*real_dup)(int);
extern int (*real_dup2)(int, int);
extern int (*real_dup3)(int, int, int);
extern int (*real_fsync)(int);
extern int (*real_fdatasync)(int);
extern int (*real_sync_file_range)(int, off64_t, off64_t, unsigned int);
extern int (*real_ioctl)(int, unsigned long, ...);
extern int (*real_mount)(const char *, const char *, const char *, unsigned long, const void *);
extern int (*real_umount)(const char *);
extern int (*real_umount2)(const char *, int);
extern void *(*real_mmap)(void *, size_t, int, int, int, off_t);
extern void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
extern int (*real_stat)(const char *, struct stat *);
extern int (*real_stat64)(const char *, struct stat64 *);
extern int (*real_lstat)(const char *, struct stat *);
extern int (*real_lstat64)(const char *, struct stat64 *);

#pragma GCC visibility pop

/* The real function: resolved by the constructor, or by the first call
 * that comes before it (then the process has one thread; every caller
 * stores the same values anyway). */
#define REAL(fn) (real_##fn ? real_##fn : (resolve_all(), real_##fn))

#endif
