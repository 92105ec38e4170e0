// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so - make chosen libc calls of a dynamically linked program fail,
 * stall, slow down or kill the process, so the tests can check full disks,
 * I/O errors, dead sources and kills at every stage of a load.
 *
 *   cc -shared -fPIC -O2 -o faultinj.so tests/fault/faultinj.c -ldl
 *   FAULTINJ='write:path=*.img:nth=2:errno=ENOSPC' LD_PRELOAD=./faultinj.so \
 *       ./ramboot load src.zst /tmp/x.img
 *
 * FAULTINJ is a list of rules separated by ';'. A rule is CALLS, then
 * ':'-separated selectors, triggers and actions:
 *
 *   CALLS         one call, several separated by ',', or '*' for all of:
 *                 read, pread (pread64), write, pwrite (pwrite64),
 *                 copy_file_range, open (open64, openat, openat64),
 *                 close, fsync, fdatasync, sync_file_range, ioctl, mount,
 *                 umount (umount2), mmap (mmap64; of a file: fd >= 0),
 *                 stat (stat64, lstat, lstat64).
 *                 The _FORTIFY_SOURCE entry points (__read_chk,
 *                 __pread64_chk, __open64_2, __openat_2, ...) are the call
 *                 they check.
 * Selectors (every one given must match; none: every call):
 *   path=GLOB     open, mount, umount, stat: the path argument (mount: the
 *                 target). Calls on a fd: the fd was opened from such a path
 *                 (followed through open*, dup, dup2, dup3 and close). GLOB
 *                 has the wildcards '*' (any string, '/' too) and '?', and is
 *                 matched against the path as the program gave it; a GLOB
 *                 that does not start with '/' also matches the tail after
 *                 any '/' ("src.img" matches "/x/src.img"). No ':' or ';'.
 *                 A file opened with openat() relative to a directory fd
 *                 matches what the directory matched: a rule on a
 *                 directory selects the O_TMPFILE files made in it.
 *   fd=N          calls on fd N (copy_file_range: either of its fds).
 *   prog=GLOB     only in a process whose name (argv[0] without its
 *                 directory) matches; the rule is off in other processes,
 *                 such as children that inherit the environment.
 * Triggers (none: the rule fires on every matching call):
 *   nth=N         from the Nth matching call on (the first is 1).
 *   after=SIZE    once SIZE bytes went through the matching calls (read,
 *                 pread, write, pwrite, copy_file_range; K, M, G: binary
 *                 units). The call that would cross SIZE is cut short at
 *                 it, the next one fires: for write, a short write and then
 *                 ENOSPC, as from a full disk.
 *   times=N       fire N times at most (default: whenever the trigger holds).
 * Actions, done in this order (none: the call is only logged):
 *   delay_ms=N    sleep N ms, then go on (a slow device).
 *   signal=SIG    raise SIG (TERM, INT, HUP, KILL, XFSZ, ALRM, ... or a
 *                 number) in the calling thread: with the default action the
 *                 process dies there, before the call; a handler runs and
 *                 then the call goes on.
 *   stall         block like a read from a pipe nobody writes to: a signal
 *                 with a handler runs it, and then the call blocks again
 *                 (SA_RESTART) or fails with EINTR; a fatal signal kills the
 *                 process; pthread_cancel ends the thread.
 *   hang          block as a thread the kernel holds in an uninterruptible
 *                 read (a hard NFS mount in D state): no handler runs in
 *                 this thread, pthread_cancel has no effect; only SIGKILL
 *                 (or the exit of the process) ends it.
 *   errno=E       fail the call: -1 with errno E (ENOSPC, EIO, ... or a
 *                 number). close closes the fd all the same, as Linux does.
 *   rename=OLD>NEW  rename(OLD, NEW) before the call: a file swapped into
 *                 place at the very moment a program reaches that call (a
 *                 link put where a path was checked, a manifest replaced
 *                 between two reads of it).
 *   cut           mmap only, after the real call: the file is cut to half
 *                 its size (opened again for writing through /proc/self/fd),
 *                 as a disk file cut short under a mapping: a touch of the
 *                 mapping past the cut raises SIGBUS.
 *
 * Examples:
 *   write:path=*.img:after=1M:errno=ENOSPC   the disk is full after 1 MiB
 *   read:path=src.img:after=4M:stall         the source dies after 4 MiB
 *   read,pread:path=src.img:errno=EIO        every read of the source fails
 *   read:path=src.img:nth=3:times=1:errno=EIO  only its 3rd read fails
 *   write:fd=1:nth=5:signal=TERM             killed at the 5th write to stdout
 *   read:delay_ms=50                         every read takes 50 ms longer
 *   mount:errno=EPERM                        no mount works
 *   mmap:path=a:cut                          the file "a" shrinks once mapped
 *   copy_file_range:errno=EXDEV              no in-kernel copies
 *
 * FAULTINJ_LOG=FILE appends one line to FILE for each firing, written
 * before the action (a test can wait for a stall to be reached):
 *   faultinj pid=4242 rule=1 call=write n=2 fd=4 action=errno:ENOSPC
 * (rule: its place in FAULTINJ, from 1; n: the call's number among the
 * rule's matching calls), and "action=short:LEN" for a call cut short by
 * after=. Each process that loads the shim with FAULTINJ set first logs
 *   faultinj pid=4242 loaded prog=ramboot rules=2
 * so that a test that expects no firing can tell "nothing matched" from
 * "the shim was not there". Open, mount and umount show path= instead of fd=; copy_file_range
 * shows its output fd.
 *
 * A FAULTINJ that does not parse stops the process before main with a
 * message on stderr and exit status 125. Without FAULTINJ nothing changes.
 *
 * Limits: calls glibc makes inside itself (stdio, fopen, opendir, ...) are
 * not seen, nor readv/writev and friends; fds above 1023, and fds made by
 * fcntl(F_DUPFD), are not followed by path= (fd= still works); after= is
 * exact while one thread at a time does I/O through the rule. Threads may
 * call in at once: the counters are atomic, and no call path allocates.
 * Static binaries ignore LD_PRELOAD.
 */
/* Both open and open64 etc. are defined here: no header redirection of
 * one to the other, and no fortify wrappers around them. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
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

static const char *const op_label[OP_COUNT] = {
	"read", "pread", "write", "pwrite", "copy_file_range", "open", "close",
	"fsync", "fdatasync", "sync_file_range", "ioctl", "mount", "umount",
	"mmap", "stat",
};

static const struct {
	const char *name;
	enum op op;
} op_alias[] = {
	{ "pread64", OP_PREAD }, { "pwrite64", OP_PWRITE }, { "open64", OP_OPEN },
	{ "openat", OP_OPEN }, { "openat64", OP_OPEN }, { "umount2", OP_UMOUNT },
	{ "mmap64", OP_MMAP }, { "stat64", OP_STAT }, { "lstat", OP_STAT },
	{ "lstat64", OP_STAT },
};

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

static struct rule rules[MAX_RULES];
static unsigned nrules;
static uint32_t path_rules;            /* rules with a path= selector */
static char conf[4096];                /* FAULTINJ, cut up by the parser */
static char log_path[PATH_MAX];
/* Per fd: the path= rules whose glob matched the path it was opened from. */
static _Atomic uint32_t fdmask[FD_TRACK];

/* ---- the real functions ---- */

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real___read_chk)(int, void *, size_t, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off64_t);
static ssize_t (*real___pread_chk)(int, void *, size_t, off_t, size_t);
static ssize_t (*real___pread64_chk)(int, void *, size_t, off64_t, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_copy_file_range)(int, off64_t *, int, off64_t *, size_t, unsigned int);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real___open_2)(const char *, int);
static int (*real___open64_2)(const char *, int);
static int (*real___openat_2)(int, const char *, int);
static int (*real___openat64_2)(int, const char *, int);
static int (*real_close)(int);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_sync_file_range)(int, off64_t, off64_t, unsigned int);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_mount)(const char *, const char *, const char *, unsigned long, const void *);
static int (*real_umount)(const char *);
static int (*real_umount2)(const char *, int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_stat)(const char *, struct stat *);
static int (*real_stat64)(const char *, struct stat64 *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_lstat64)(const char *, struct stat64 *);

/* Straight to the kernel: for messages when the real write may be the one
 * missing, or the process is being set up. */
static void say(const char *s)
{
	(void)syscall(SYS_write, 2, s, strlen(s));
}

static void *resolve(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		say("faultinj: no real ");
		say(name);
		say("\n");
		abort();
	}
	return f;
}

#define GET(fn) (real_##fn = (__typeof__(real_##fn))resolve(#fn))

/* By the constructor, or by the first call that comes before it (then the
 * process has one thread; every caller stores the same values anyway). */
static void resolve_all(void)
{
	GET(read);
	GET(__read_chk);
	GET(pread);
	GET(pread64);
	GET(__pread_chk);
	GET(__pread64_chk);
	GET(write);
	GET(pwrite);
	GET(pwrite64);
	GET(copy_file_range);
	GET(open);
	GET(open64);
	GET(openat);
	GET(openat64);
	GET(__open_2);
	GET(__open64_2);
	GET(__openat_2);
	GET(__openat64_2);
	GET(close);
	GET(dup);
	GET(dup2);
	GET(dup3);
	GET(fsync);
	GET(fdatasync);
	GET(sync_file_range);
	GET(ioctl);
	GET(mount);
	GET(umount);
	GET(umount2);
	GET(mmap);
	GET(mmap64);
	GET(stat);
	GET(stat64);
	GET(lstat);
	GET(lstat64);
}

#undef GET
#define REAL(fn) (real_##fn ? real_##fn : (resolve_all(), real_##fn))

/* ---- matching ---- */

/* '*' matches any string ('/' too), '?' any one character. */
static bool glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			back = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++back;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

static bool path_match(const char *pat, const char *path)
{
	const char *t;

	if (glob(pat, path))
		return true;
	if (pat[0] == '/')
		return false;
	for (t = strchr(path, '/'); t; t = strchr(t + 1, '/'))
		if (glob(pat, t + 1))
			return true;
	return false;
}

/* One intercepted call, as the rules see it. */
struct call {
	enum op op;
	int fd, fd2;            /* -1: none */
	const char *path;       /* open, mount, umount */
	size_t len;             /* bytes asked for; after= may cut it */
	uint32_t counted;       /* after= rules that count what it moves */
	bool cut;               /* set by enter(): a cut rule fired */
};

static bool fd_match(const struct rule *r, unsigned i, int fd)
{
	if (fd < 0 || (r->fd >= 0 && fd != r->fd))
		return false;
	if (!r->path)
		return true;
	return fd < FD_TRACK &&
	       (atomic_load_explicit(&fdmask[fd], memory_order_relaxed) & (1u << i));
}

static bool rule_match(const struct rule *r, unsigned i, const struct call *c)
{
	if (!(r->ops & OP_BIT(c->op)))
		return false;
	if (c->op == OP_OPEN || c->op == OP_MOUNT || c->op == OP_UMOUNT || c->op == OP_STAT)
		return r->fd < 0 && (!r->path || (c->path && path_match(r->path, c->path)));
	return fd_match(r, i, c->fd) || fd_match(r, i, c->fd2);
}

/* ---- fd tracking ---- */

static void fd_set_mask(int fd, uint32_t m)
{
	if (fd >= 0 && fd < FD_TRACK)
		atomic_store_explicit(&fdmask[fd], m, memory_order_relaxed);
}

static uint32_t fd_rules(int fd)
{
	if (fd < 0 || fd >= FD_TRACK)
		return 0;
	return atomic_load_explicit(&fdmask[fd], memory_order_relaxed);
}

/* A new fd from PATH (or an error, passed on): remember which path= rules
 * it falls under. Keeps errno. */
static int opened(int fd, const char *path)
{
	uint32_t m = 0;
	unsigned i;

	if (fd < 0 || fd >= FD_TRACK)
		return fd;
	for (i = 0; i < nrules; i++)
		if ((path_rules & (1u << i)) && path && path_match(rules[i].path, path))
			m |= 1u << i;
	fd_set_mask(fd, m);
	return fd;
}

/* openat: a relative path inside a directory fd also falls under the
 * rules that directory did (O_TMPFILE opens "." in it: its writes are
 * those of a file in that directory). */
static int opened_at(int fd, int dir, const char *path)
{
	int e = errno;

	opened(fd, path);
	if (fd >= 0 && path && path[0] != '/' && dir != AT_FDCWD)
		fd_set_mask(fd, fd_rules(fd) | fd_rules(dir));
	errno = e;
	return fd;
}

/* ---- the log ---- */

struct line {
	char b[512];
	size_t n;
};

static void add(struct line *l, const char *s)
{
	while (*s && l->n < sizeof(l->b) - 1)
		l->b[l->n++] = *s++;
}

static void add_num(struct line *l, const char *key, long long v)
{
	char d[24];
	int i = (int)sizeof(d) - 1;
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	d[i] = '\0';
	do {
		d[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[--i] = '-';
	add(l, key);
	add(l, d + i);
}

/* One line per firing, appended with one write: lines of several threads
 * and processes do not mix. open/write/close are async-signal-safe. */
static void log_fire(unsigned i, const struct call *c, uint64_t n, const char *action,
		     long long len)
{
	struct line l = { .n = 0 };
	int e = errno, st, fd;

	if (!log_path[0])
		return;
	add(&l, "faultinj");
	add_num(&l, " pid=", getpid());
	add_num(&l, " rule=", i + 1);
	add(&l, " call=");
	add(&l, op_label[c->op]);
	add_num(&l, " n=", (long long)n);
	if (c->op == OP_OPEN || c->op == OP_MOUNT || c->op == OP_UMOUNT || c->op == OP_STAT) {
		add(&l, " path=");
		add(&l, c->path ? c->path : "(null)");
	} else {
		add_num(&l, " fd=", c->fd);
	}
	add(&l, " action=");
	add(&l, action);
	if (len >= 0)
		add_num(&l, ":", len);
	l.b[l.n++] = '\n';
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &st);
	fd = REAL(open)(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)REAL(write)(fd, l.b, l.n);
		(void)REAL(close)(fd);
	}
	pthread_setcancelstate(st, NULL);
	errno = e;
}

/* The line that says this process runs under the shim. */
static void log_loaded(void)
{
	struct line l = { .n = 0 };
	int fd;

	if (!log_path[0])
		return;
	add(&l, "faultinj");
	add_num(&l, " pid=", getpid());
	add(&l, " loaded prog=");
	add(&l, program_invocation_short_name);
	add_num(&l, " rules=", nrules);
	l.b[l.n++] = '\n';
	fd = REAL(open)(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)REAL(write)(fd, l.b, l.n);
		(void)REAL(close)(fd);
	}
}

/* ---- actions ---- */

static void sleep_ms(unsigned ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void close_pair(void *arg)
{
	int *p = arg;

	(void)REAL(close)(p[0]);
	(void)REAL(close)(p[1]);
}

/* Block in a real read of a pipe whose write end stays open here: the
 * kernel then treats signals as for any slow device (handlers run,
 * SA_RESTART restarts, otherwise EINTR), and read is a cancellation point. */
static void stall(void)
{
	int p[2];
	char b;

	if (pipe2(p, O_CLOEXEC) < 0) {
		for (;;)
			pause();
	}
	pthread_cleanup_push(close_pair, p);
	while (REAL(read)(p[0], &b, 1) > 0)
		;
	pthread_cleanup_pop(1);
}

/* What a D-state read looks like from user space: this thread takes no
 * signal and cannot be cancelled. */
static void hang(void)
{
	sigset_t all;
	struct timespec t = { 3600, 0 };

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;)
		nanosleep(&t, NULL);
}

/*
 * Run the rules for call C before it is made. Returns 0 to make the real
 * call with C->len bytes (after= may have cut it), or -1 with errno set to
 * fail it. errno is kept on the way to the real call.
 */
static int enter(struct call *c)
{
	struct rule *hit = NULL;
	unsigned i, hit_i = 0, cut_i = 0;
	uint64_t hit_n = 0, cut_n = 0;
	size_t len = c->len;
	int e = errno;

	c->counted = 0;
	for (i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		uint64_t n;

		if (!rule_match(r, i, c))
			continue;
		n = atomic_fetch_add(&r->calls, 1) + 1;
		if (r->after) {
			uint64_t b = atomic_load(&r->bytes);

			c->counted |= 1u << i;
			if (b < r->after) {
				if (len > r->after - b) {
					len = (size_t)(r->after - b);
					cut_i = i;
					cut_n = n;
				}
				continue;
			}
		}
		if (hit || n < r->nth)
			continue;
		if (r->times && atomic_fetch_add(&r->fired, 1) >= r->times)
			continue;
		hit = r;
		hit_i = i;
		hit_n = n;
	}
	if (hit) {
		log_fire(hit_i, c, hit_n, hit->action, -1);
		if (hit->delay_ms)
			sleep_ms(hit->delay_ms);
		if (hit->sig)
			raise(hit->sig);
		if (hit->ren_from && syscall(SYS_renameat, AT_FDCWD, hit->ren_from, AT_FDCWD,
					     hit->ren_to) < 0)
			say("faultinj: rename: failed\n");
		if (hit->hang)
			hang();
		if (hit->stall) {
			stall();
			errno = EINTR;
			return -1;
		}
		if (hit->err) {
			errno = hit->err;
			return -1;
		}
		c->cut = hit->cut;
	}
	if (len < c->len) {
		log_fire(cut_i, c, cut_n, "short", (long long)len);
		c->len = len;
	}
	errno = e;
	return 0;
}

/* The real call moved N bytes (or failed): count them. Keeps errno. */
static void done(const struct call *c, ssize_t n)
{
	unsigned i;

	if (n <= 0 || !c->counted)
		return;
	for (i = 0; i < nrules; i++)
		if (c->counted & (1u << i))
			atomic_fetch_add(&rules[i].bytes, (uint64_t)n);
}

#define FD_CALL(o, f, len_) { .op = (o), .fd = (f), .fd2 = -1, .len = (len_) }
#define PATH_CALL(o, p)     { .op = (o), .fd = -1, .fd2 = -1, .path = (p) }

/* ---- read and write ---- */

ssize_t read(int fd, void *buf, size_t len)
{
	struct call c = FD_CALL(OP_READ, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(read)(fd, buf, c.len);
	done(&c, n);
	return n;
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	struct call c = FD_CALL(OP_READ, fd, len);
	ssize_t n;

	if (len > buflen)       /* the real one reports the overflow */
		return REAL(__read_chk)(fd, buf, len, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__read_chk)(fd, buf, c.len, buflen);
	done(&c, n);
	return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pread)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pread64)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (len > buflen)
		return REAL(__pread_chk)(fd, buf, len, off, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__pread_chk)(fd, buf, c.len, off, buflen);
	done(&c, n);
	return n;
}

ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t len, off64_t off, size_t buflen)
{
	struct call c = FD_CALL(OP_PREAD, fd, len);
	ssize_t n;

	if (len > buflen)
		return REAL(__pread64_chk)(fd, buf, len, off, buflen);
	if (enter(&c) < 0)
		return -1;
	n = REAL(__pread64_chk)(fd, buf, c.len, off, buflen);
	done(&c, n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct call c = FD_CALL(OP_WRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(write)(fd, buf, c.len);
	done(&c, n);
	return n;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	struct call c = FD_CALL(OP_PWRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pwrite)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	struct call c = FD_CALL(OP_PWRITE, fd, len);
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(pwrite64)(fd, buf, c.len, off);
	done(&c, n);
	return n;
}

ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t len,
			unsigned int flags)
{
	struct call c = { .op = OP_COPY, .fd = out, .fd2 = in, .len = len };
	ssize_t n;

	if (enter(&c) < 0)
		return -1;
	n = REAL(copy_file_range)(in, in_off, out, out_off, c.len, flags);
	done(&c, n);
	return n;
}

/* ---- open and close ---- */

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define MODE_ARG(flags, mode)                          \
	do {                                           \
		if (needs_mode(flags)) {               \
			va_list ap;                    \
			va_start(ap, flags);           \
			(mode) = va_arg(ap, mode_t);   \
			va_end(ap);                    \
		}                                      \
	} while (0)

int open(const char *path, int flags, ...)
{
	struct call c = PATH_CALL(OP_OPEN, path);
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	if (enter(&c) < 0)
		return -1;
	return opened(REAL(open)(path, flags, mode), path);
}

int open64(const char *path, int flags, ...)
{
	struct call c = PATH_CALL(OP_OPEN, path);
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	if (enter(&c) < 0)
		return -1;
	return opened(REAL(open64)(path, flags, mode), path);
}

int openat(int dir, const char *path, int flags, ...)
{
	struct call c = PATH_CALL(OP_OPEN, path);
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	if (enter(&c) < 0)
		return -1;
	return opened_at(REAL(openat)(dir, path, flags, mode), dir, path);
}

int openat64(int dir, const char *path, int flags, ...)
{
	struct call c = PATH_CALL(OP_OPEN, path);
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	if (enter(&c) < 0)
		return -1;
	return opened_at(REAL(openat64)(dir, path, flags, mode), dir, path);
}

/* The _2 variants take no mode: the real one aborts when one is needed. */
int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	struct call c = PATH_CALL(OP_OPEN, path);

	if (!needs_mode(flags) && enter(&c) < 0)
		return -1;
	return opened(REAL(__open_2)(path, flags), path);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
	struct call c = PATH_CALL(OP_OPEN, path);

	if (!needs_mode(flags) && enter(&c) < 0)
		return -1;
	return opened(REAL(__open64_2)(path, flags), path);
}

int __openat_2(int dir, const char *path, int flags);
int __openat_2(int dir, const char *path, int flags)
{
	struct call c = PATH_CALL(OP_OPEN, path);

	if (!needs_mode(flags) && enter(&c) < 0)
		return -1;
	return opened_at(REAL(__openat_2)(dir, path, flags), dir, path);
}

int __openat64_2(int dir, const char *path, int flags);
int __openat64_2(int dir, const char *path, int flags)
{
	struct call c = PATH_CALL(OP_OPEN, path);

	if (!needs_mode(flags) && enter(&c) < 0)
		return -1;
	return opened_at(REAL(__openat64_2)(dir, path, flags), dir, path);
}

/* Linux releases the fd even when close fails: so does an injected error. */
int close(int fd)
{
	struct call c = FD_CALL(OP_CLOSE, fd, 0);
	int rc = enter(&c), e = errno;

	fd_set_mask(fd, 0);
	if (rc < 0) {
		(void)REAL(close)(fd);
		errno = e;
		return -1;
	}
	return REAL(close)(fd);
}

int dup(int fd)
{
	int nfd = REAL(dup)(fd);

	if (nfd >= 0)
		fd_set_mask(nfd, fd_rules(fd));
	return nfd;
}

int dup2(int fd, int nfd)
{
	int rc = REAL(dup2)(fd, nfd);

	if (rc >= 0 && fd != nfd)
		fd_set_mask(nfd, fd_rules(fd));
	return rc;
}

int dup3(int fd, int nfd, int flags)
{
	int rc = REAL(dup3)(fd, nfd, flags);

	if (rc >= 0)
		fd_set_mask(nfd, fd_rules(fd));
	return rc;
}

/* ---- sync, ioctl, mount ---- */

int fsync(int fd)
{
	struct call c = FD_CALL(OP_FSYNC, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(fsync)(fd);
}

int fdatasync(int fd)
{
	struct call c = FD_CALL(OP_FDATASYNC, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(fdatasync)(fd);
}

int sync_file_range(int fd, off64_t off, off64_t len, unsigned int flags)
{
	struct call c = FD_CALL(OP_SYNC_RANGE, fd, 0);

	if (enter(&c) < 0)
		return -1;
	return REAL(sync_file_range)(fd, off, len, flags);
}

int ioctl(int fd, unsigned long req, ...)
{
	struct call c = FD_CALL(OP_IOCTL, fd, 0);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (enter(&c) < 0)
		return -1;
	return REAL(ioctl)(fd, req, arg);
}

int mount(const char *src, const char *target, const char *type, unsigned long flags,
	  const void *data)
{
	struct call c = PATH_CALL(OP_MOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(mount)(src, target, type, flags, data);
}

int umount(const char *target)
{
	struct call c = PATH_CALL(OP_UMOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(umount)(target);
}

int umount2(const char *target, int flags)
{
	struct call c = PATH_CALL(OP_UMOUNT, target);

	if (enter(&c) < 0)
		return -1;
	return REAL(umount2)(target, flags);
}

/* ---- mmap ---- */

/* cut: the file under fd to half its size, through a descriptor of its
 * own opened for writing (fd itself may be read-only). */
static void cut_file(int fd)
{
	char proc[64];
	off_t size;
	int w;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	w = REAL(open)(proc, O_WRONLY | O_CLOEXEC);
	if (w < 0) {
		say("faultinj: cut: cannot open the file for writing\n");
		return;
	}
	size = lseek(w, 0, SEEK_END);
	if (size < 0 || ftruncate(w, size / 2) < 0)
		say("faultinj: cut: cannot truncate the file\n");
	(void)REAL(close)(w);
}

/* After the real mmap: the cut, when a rule asked for it. */
static void *mapped(const struct call *c, void *p, int fd)
{
	if (p != MAP_FAILED && c->cut)
		cut_file(fd);
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct call c = FD_CALL(OP_MMAP, fd, 0);

	if (fd >= 0 && enter(&c) < 0)
		return MAP_FAILED;
	return mapped(&c, REAL(mmap)(addr, len, prot, flags, fd, off), fd);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	struct call c = FD_CALL(OP_MMAP, fd, 0);

	if (fd >= 0 && enter(&c) < 0)
		return MAP_FAILED;
	return mapped(&c, REAL(mmap64)(addr, len, prot, flags, fd, off), fd);
}

/* ---- FAULTINJ ---- */

static void bad(const char *rule, const char *what, const char *why)
{
	say("faultinj: FAULTINJ rule '");
	say(rule);
	say("': ");
	say(what);
	say(": ");
	say(why);
	say("\n");
	_exit(EXIT_CONF);
}

/* A number; SIZE takes K, M and G (powers of 1024). */
static bool parse_num(const char *v, bool size, uint64_t *out)
{
	unsigned long long x;
	char *end;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno)
		return false;
	if (size && *end) {
		const char *u = strchr("KMG", *end & ~0x20);
		int sh = u ? 10 * (int)(u - "KMG" + 1) : 0;

		if (!u || end[1] || x > (~0ULL >> sh))
			return false;
		x <<= sh;
		end++;
	}
	*out = x;
	return !*end;
}

static int parse_errno(const char *v)
{
	uint64_t n;
	int e;

	if (parse_num(v, false, &n))
		return n > 0 && n < 4096 ? (int)n : 0;
	for (e = 1; e < 4096; e++) {
		const char *name = strerrorname_np(e);

		if (name && !strcmp(name, v))
			return e;
	}
	return 0;
}

static int parse_signal(const char *v)
{
	uint64_t n;
	int s;

	if (parse_num(v, false, &n))
		return n > 0 && n < (uint64_t)NSIG ? (int)n : 0;
	if (!strncmp(v, "SIG", 3))
		v += 3;
	for (s = 1; s < NSIG; s++) {
		const char *name = sigabbrev_np(s);

		if (name && !strcmp(name, v))
			return s;
	}
	return 0;
}

static unsigned parse_ops(char *list, const char *rule)
{
	unsigned ops = 0;
	char *save = NULL, *t;

	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned o, before = ops;

		if (!strcmp(t, "*"))
			ops |= OPS_ALL;
		for (o = 0; o < OP_COUNT; o++)
			if (!strcmp(t, op_label[o]))
				ops |= OP_BIT(o);
		for (o = 0; o < sizeof(op_alias) / sizeof(op_alias[0]); o++)
			if (!strcmp(t, op_alias[o].name))
				ops |= OP_BIT(op_alias[o].op);
		if (ops == before && strcmp(t, "*"))
			bad(rule, t, "no such call");
	}
	if (!ops)
		bad(rule, "calls", "none given");
	return ops;
}

/* The action as the log shows it: "delay_ms:50,signal:TERM". */
static void add_action(struct rule *r, const char *key, const char *val)
{
	size_t n = strlen(r->action), room = sizeof(r->action) - n;

	snprintf(r->action + n, room, "%s%s%s%s", n ? "," : "", key, val ? ":" : "",
		 val ? val : "");
}

/* RULE: "calls:key=value:flag..." (cut up in place). */
static void parse_rule(char *s, struct rule *r)
{
	char text[256], *save = NULL, *f;
	const char *prog = NULL;
	uint64_t v;

	snprintf(text, sizeof(text), "%s", s);
	r->fd = -1;
	f = strtok_r(s, ":", &save);
	r->ops = parse_ops(f, text);
	while ((f = strtok_r(NULL, ":", &save))) {
		char *val = strchr(f, '=');

		if (val)
			*val++ = '\0';
		if (!strcmp(f, "stall") && !val) {
			r->stall = true;
			continue;
		}
		if (!strcmp(f, "hang") && !val) {
			r->hang = true;
			continue;
		}
		if (!strcmp(f, "cut") && !val) {
			r->cut = true;
			continue;
		}
		if (!val || !*val)
			bad(text, f, "expected key=value (or stall, hang, cut)");
		if (!strcmp(f, "path")) {
			r->path = val;
		} else if (!strcmp(f, "prog")) {
			prog = val;
		} else if (!strcmp(f, "fd")) {
			if (!parse_num(val, false, &v) || v > INT_MAX)
				bad(text, val, "not a fd number");
			r->fd = (int)v;
		} else if (!strcmp(f, "nth") || !strcmp(f, "times")) {
			if (!parse_num(val, false, &v) || !v)
				bad(text, val, "not a count (1 or more)");
			if (f[0] == 'n')
				r->nth = v;
			else
				r->times = v;
		} else if (!strcmp(f, "after")) {
			if (!parse_num(val, true, &v) || !v)
				bad(text, val, "not a size (1 or more, K, M, G)");
			r->after = v;
		} else if (!strcmp(f, "delay_ms")) {
			if (!parse_num(val, false, &v) || v > 86400000)
				bad(text, val, "not a delay in ms");
			r->delay_ms = (unsigned)v;
		} else if (!strcmp(f, "signal")) {
			if (!(r->sig = parse_signal(val)))
				bad(text, val, "no such signal");
		} else if (!strcmp(f, "rename")) {
			char *gt = strchr(val, '>');

			if (!gt || gt == val || !gt[1])
				bad(text, val, "expected OLD>NEW");
			*gt = '\0';
			r->ren_from = val;
			r->ren_to = gt + 1;
		} else if (!strcmp(f, "errno")) {
			if (!(r->err = parse_errno(val)))
				bad(text, val, "no such errno");
		} else {
			bad(text, f, "unknown key");
		}
	}
	if (r->after && (r->ops & ~OPS_IO))
		bad(text, "after", "only for read, pread, write, pwrite, copy_file_range");
	if (r->cut && r->ops != OP_BIT(OP_MMAP))
		bad(text, "cut", "only for mmap");
	if (r->delay_ms) {
		char ms[16];

		snprintf(ms, sizeof(ms), "%u", r->delay_ms);
		add_action(r, "delay_ms", ms);
	}
	if (r->sig)
		add_action(r, "signal", sigabbrev_np(r->sig));
	if (r->stall)
		add_action(r, "stall", NULL);
	if (r->hang)
		add_action(r, "hang", NULL);
	if (r->cut)
		add_action(r, "cut", NULL);
	if (r->ren_from)
		add_action(r, "rename", NULL);
	if (r->err)
		add_action(r, "errno", strerrorname_np(r->err));
	if (!r->action[0])
		add_action(r, "log", NULL);
	if (prog && !glob(prog, program_invocation_short_name))
		r->ops = 0;
}

__attribute__((constructor))
static void faultinj_init(void)
{
	const char *env = getenv("FAULTINJ"), *lp = getenv("FAULTINJ_LOG");
	char *save = NULL, *s;

	resolve_all();
	if (lp && strlen(lp) < sizeof(log_path))
		strcpy(log_path, lp);
	if (!env)
		return;
	if (strlen(env) >= sizeof(conf))
		bad("", "FAULTINJ", "too long");
	strcpy(conf, env);
	for (s = strtok_r(conf, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
		s += strspn(s, " \t\n");
		if (!*s)
			continue;
		if (nrules == MAX_RULES)
			bad(s, "FAULTINJ", "too many rules");
		parse_rule(s, &rules[nrules]);
		if (rules[nrules].path)
			path_rules |= 1u << nrules;
		nrules++;
	}
	log_loaded();
}

/* ---- stat ---- */

int stat(const char *path, struct stat *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(stat)(path, st);
}

int stat64(const char *path, struct stat64 *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(stat64)(path, st);
}

int lstat(const char *path, struct stat *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(lstat)(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	struct call c = PATH_CALL(OP_STAT, path);

	if (enter(&c) < 0)
		return -1;
	return REAL(lstat64)(path, st);
}
