// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so - make chosen libc calls of a dynamically linked program fail,
 * stall, slow down or kill the process, so the tests can check full disks,
 * I/O errors, dead sources and kills at every stage of a load.
 *
 *   (cd tests/fault && cc -shared -fPIC -O2 -o ../../faultinj.so *.c -ldl)
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
#include "faultinj.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static char log_path[PATH_MAX];

/* ---- the real functions ---- */

ssize_t (*real_read)(int, void *, size_t);
ssize_t (*real___read_chk)(int, void *, size_t, size_t);
ssize_t (*real_pread)(int, void *, size_t, off_t);
ssize_t (*real_pread64)(int, void *, size_t, off64_t);
ssize_t (*real___pread_chk)(int, void *, size_t, off_t, size_t);
ssize_t (*real___pread64_chk)(int, void *, size_t, off64_t, size_t);
ssize_t (*real_write)(int, const void *, size_t);
ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
ssize_t (*real_copy_file_range)(int, off64_t *, int, off64_t *, size_t, unsigned int);
int (*real_open)(const char *, int, ...);
int (*real_open64)(const char *, int, ...);
int (*real_openat)(int, const char *, int, ...);
int (*real_openat64)(int, const char *, int, ...);
int (*real___open_2)(const char *, int);
int (*real___open64_2)(const char *, int);
int (*real___openat_2)(int, const char *, int);
int (*real___openat64_2)(int, const char *, int);
int (*real_close)(int);
int (*real_dup)(int);
int (*real_dup2)(int, int);
int (*real_dup3)(int, int, int);
int (*real_fsync)(int);
int (*real_fdatasync)(int);
int (*real_sync_file_range)(int, off64_t, off64_t, unsigned int);
int (*real_ioctl)(int, unsigned long, ...);
int (*real_mount)(const char *, const char *, const char *, unsigned long, const void *);
int (*real_umount)(const char *);
int (*real_umount2)(const char *, int);
void *(*real_mmap)(void *, size_t, int, int, int, off_t);
void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
int (*real_stat)(const char *, struct stat *);
int (*real_stat64)(const char *, struct stat64 *);
int (*real_lstat)(const char *, struct stat *);
int (*real_lstat64)(const char *, struct stat64 *);

/* Straight to the kernel: for messages when the real write may be the one
 * missing, or the process is being set up. */
void say(const char *s)
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

/* By the constructor, or by REAL() (faultinj.h). */
void resolve_all(void)
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
int enter(struct call *c)
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

/* The real call moved N bytes (or failed): count them. Returns N, keeps
 * errno. */
ssize_t done(const struct call *c, ssize_t n)
{
	unsigned i;

	if (n <= 0 || !c->counted)
		return n;
	for (i = 0; i < nrules; i++)
		if (c->counted & (1u << i))
			atomic_fetch_add(&rules[i].bytes, (uint64_t)n);
	return n;
}

__attribute__((constructor))
static void faultinj_init(void)
{
	const char *env = getenv("FAULTINJ"), *lp = getenv("FAULTINJ_LOG");

	resolve_all();
	if (lp && strlen(lp) < sizeof(log_path))
		strcpy(log_path, lp);
	if (!env)
		return;
	rules_parse(env);
	log_loaded();
}
