/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small system helpers shared by the swap, zram, status, report and loader
 * code: modprobe, /proc/swaps, JSON strings and the first-error
 * buffer. Each returns 0 or -errno unless said otherwise.
 */
#ifndef RAMBOOT_SYSUTIL_H
#define RAMBOOT_SYSUTIL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Run `modprobe ARGS...` (args NULL-terminated, at most 15, no shell;
 * searched in $PATH) and wait for it. 0 when it exits 0; the spawn's
 * -errno when it cannot be run (-ENOENT: no modprobe); -ENOENT when it
 * ran and failed (module unknown or not loadable: with -q modprobe is
 * silent about an unknown module, other failures it says on stderr). */
int run_modprobe(const char *const args[]);
/* Run argv (argv[0] searched in $PATH, no shell) and wait for it: 0 with
 * its wait status in *status, or the spawn's -errno (-ENOENT: no such
 * program). The one way ramboot runs a program to its end. */
int spawn_wait(char *const argv[], int *status);

/* ---- work in a child that the boot can give up on ----
 * A process with a read the kernel will not let go of (a hard NFS mount
 * whose server is gone, D state) cannot exit: `ramboot boot` runs such
 * work in a child and stops waiting for it. The child's results go into
 * memory shared with it (MAP_SHARED), together with this beat. */
struct child_beat {
	_Atomic long long beat_ms;   /* the child's last progress, CLOCK_MONOTONIC ms */
	_Atomic int done;            /* the child's results are final */
	/* Set by the caller before child_run(), 0: none. Until the child's
	 * first beat (its first progress), it is given up on at this time
	 * (now_sec()'s clock) too, whatever limit says: a child that beats
	 * proved the source delivers; one that never did waits no longer
	 * than the deadline of the whole run. */
	double first_by;
};
enum { CHILD_DONE = 1, CHILD_ENDED, CHILD_KILLED };
/* Run fn(arg) in a child whose stdout is /dev/null (the boot's stdout is
 * read to EOF by its hook); cb lies in shared memory, its beat starts now
 * (the child may move it on). Waits until the child says done or exits,
 * or until the beat is more than limit seconds old (limit > 0), or, while
 * the child has not beaten, until cb->first_by: then the child is killed
 * and left to the kernel. CHILD_DONE, CHILD_ENDED
 * (exited without a result; *status), CHILD_KILLED, or -errno when no
 * child could be started. */
int child_run(void (*fn)(void *), void *arg, struct child_beat *cb, double limit, int *status);
/* child_run() on a copy of *arg (size bytes, beginning with its struct
 * child_beat, whose first_by the caller may set) in memory shared with
 * the child: fn works on the copy, which comes back into *arg whatever
 * the outcome (what a child given up on wrote before, too). child_run()'s
 * result, or -errno when no shared memory could be had. */
int child_call(void (*fn)(void *), void *arg, size_t size, double limit, int *status);

/* ---- /proc/swaps ----
 * "Filename Type Size Used Priority": the kernel escapes space, tab,
 * newline and backslash in the file name as \ooo. */

/* One line (up to its newline or NUL): 0 with the unescaped path and
 * the priority; -EINVAL for the header or a malformed line;
 * -ENAMETOOLONG when the path does not fit plen. */
int swaps_parse_line(const char *line, char *path, size_t plen, int *prio);
/* 1 when text (the whole file) lists dev, with *prio set when prio is
 * not NULL; 0 when not. */
int swaps_text_find(const char *text, const char *dev, int *prio);
/* How many active areas have a negative (kernel-assigned) priority. */
int swaps_text_count_negative(const char *text);
/* swaps_text_find over /proc/swaps below the root prefix: 1, 0, or
 * -errno when it cannot be read. */
int swaps_find(const char *dev, int *prio);

/* ---- JSON ---- */

/* src as the body of a JSON string (no quotes added): " and \ escaped,
 * control characters and DEL as \n, \t, ... or \u00XX, valid UTF-8
 * copied, each byte of an invalid UTF-8 sequence as \ufffd. snprintf
 * semantics: returns the full length, writes at most len - 1 bytes and
 * a NUL (when len > 0); the output is cut when the return is >= len. */
size_t json_escape(char *dst, size_t len, const char *src);

/* ---- errors ---- */

/* Format into buf unless it already holds a message: the first error
 * of a run is the one reported. */
void errbuf_set(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void errbuf_vset(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* ---- a process named by its pid and start time ----
 * State (field 3) and start time (field 22: clock ticks after boot; with
 * the pid, a name no later process gets) of pid, from /proc/PID/stat:
 * the real /proc, or with prefixed below the root prefix (fixture trees
 * of tests). 0, or -errno (-ENOENT: no such process; -EINVAL: not the
 * kernel's format). */
int proc_start(pid_t pid, bool prefixed, char *state, unsigned long long *start);
/* Is pid the process that started at start, and not ended (a zombie nobody
 * reaped yet has ended)? */
bool proc_alive(pid_t pid, bool prefixed, unsigned long long start);

#endif
