// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small system helpers shared by several commands: see sysutil.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/path.h"
#include "lib/sysutil.h"

extern char **environ;

/* ---- modprobe ---- */

int spawn_wait(char *const argv[], int *status)
{
	pid_t pid;
	int rc;

	/* posix_spawn reports a failed exec as its result (glibc >= 2.24,
	 * musl), where fork + exec would only see exit status 127. */
	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0)
		return -rc;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int run_modprobe(const char *const args[])
{
	char *argv[17];
	size_t i;
	int status, rc;

	argv[0] = (char *)"modprobe";
	for (i = 0; args[i]; i++) {
		if (i + 2 >= ARRAY_SIZE(argv))
			return -E2BIG;
		argv[i + 1] = (char *)args[i];
	}
	argv[i + 1] = NULL;
	rc = spawn_wait(argv, &status);
	if (rc < 0)
		return rc;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ENOENT;
}

/* ---- /proc/swaps ---- */

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static const char *field_end(const char *p)
{
	while (*p && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	return p;
}

static bool all_digits(const char *p, const char *e)
{
	if (p == e)
		return false;
	for (; p < e; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static bool is_octal_escape(const char *p, const char *e)
{
	return e - p >= 4 && p[0] == '\\' && p[1] >= '0' && p[1] <= '3' &&
	       p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7';
}

int swaps_parse_line(const char *line, char *path, size_t plen, int *prio)
{
	const char *p = skip_blank(line), *e = field_end(p);
	size_t o = 0;
	char *end;
	long v;
	int i;

	if (plen == 0)
		return -ENAMETOOLONG;
	if (e == p)
		return -EINVAL;
	for (; p < e; p++) {
		char c = *p;

		if (is_octal_escape(p, e)) {
			c = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 3;
		}
		if (o + 1 >= plen)
			return -ENAMETOOLONG;
		path[o++] = c;
	}
	path[o] = '\0';
	/* Type, then Size and Used in KiB. */
	for (i = 0; i < 3; i++) {
		p = skip_blank(e);
		e = field_end(p);
		if (e == p || (i > 0 && !all_digits(p, e)))
			return -EINVAL;
	}
	p = skip_blank(e);
	e = field_end(p);
	if (e == p || (*p != '-' && (*p < '0' || *p > '9')))
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end != e || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*prio = (int)v;
	return 0;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

int swaps_text_find(const char *text, const char *dev, int *prio)
{
	char path[PATH_MAX];
	const char *p;
	int pr;

	for (p = text; *p; p = next_line(p)) {
		if (swaps_parse_line(p, path, sizeof(path), &pr) == 0 && !strcmp(path, dev)) {
			if (prio)
				*prio = pr;
			return 1;
		}
	}
	return 0;
}

int swaps_text_count_negative(const char *text)
{
	char path[PATH_MAX];
	const char *p;
	int pr, n = 0;

	for (p = text; *p; p = next_line(p))
		if (swaps_parse_line(p, path, sizeof(path), &pr) == 0 && pr < 0)
			n++;
	return n;
}

int swaps_find(const char *dev, int *prio)
{
	char buf[16384];
	ssize_t n = rb_read_str("/proc/swaps", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return swaps_text_find(buf, dev, prio);
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence of two or more bytes at s (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), 0 when the
 * bytes at s are not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void emit(char *dst, size_t len, size_t *pos, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++, (*pos)++)
		if (*pos + 1 < len)
			dst[*pos] = s[i];
}

size_t json_escape(char *dst, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t pos = 0;

	while (*s) {
		char esc[8];
		size_t n;

		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*s;
			emit(dst, len, &pos, esc, 2);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			switch (*s) {
			case '\b': emit(dst, len, &pos, "\\b", 2); break;
			case '\f': emit(dst, len, &pos, "\\f", 2); break;
			case '\n': emit(dst, len, &pos, "\\n", 2); break;
			case '\r': emit(dst, len, &pos, "\\r", 2); break;
			case '\t': emit(dst, len, &pos, "\\t", 2); break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", *s);
				emit(dst, len, &pos, esc, 6);
			}
			s++;
		} else if (*s < 0x80) {
			emit(dst, len, &pos, (const char *)s, 1);
			s++;
		} else if ((n = utf8_len(s)) > 0) {
			emit(dst, len, &pos, (const char *)s, n);
			s += n;
		} else {
			/* Not text (a Latin-1 file name, a cut sequence): the
			 * replacement character keeps the document valid. */
			emit(dst, len, &pos, "\\ufffd", 6);
			s++;
		}
	}
	if (len > 0)
		dst[pos < len ? pos : len - 1] = '\0';
	return pos;
}

/* ---- errors ---- */

void errbuf_vset(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (len == 0 || buf[0])
		return;
	vsnprintf(buf, len, fmt, ap);
}

void errbuf_set(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(buf, len, fmt, ap);
	va_end(ap);
}

int child_run(void (*fn)(void *), void *arg, struct child_beat *cb, double limit, int *status)
{
	long long start_ms = (long long)(now_sec() * 1000);
	pid_t pid;

	*status = 0;
	atomic_store(&cb->done, 0);
	atomic_store(&cb->beat_ms, start_ms);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (nul >= 0)
			dup2(nul, STDOUT_FILENO);
		fn(arg);
		atomic_store(&cb->done, 1);
		_exit(0);
	}
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		long long beat = atomic_load(&cb->beat_ms);
		double now = now_sec(), idle = now - (double)beat / 1000;

		if (atomic_load(&cb->done) || w == pid || (w < 0 && errno != EINTR))
			break;
		if ((limit > 0 && idle > limit) ||
		    (cb->first_by > 0 && beat == start_ms && now > cb->first_by)) {
			kill(pid, SIGKILL);
			/* Reaped if it can die; one held in the kernel is
			 * left to init. */
			(void)waitpid(pid, status, WNOHANG);
			return CHILD_KILLED;
		}
		nap_ms(20);
	}
	if (!atomic_load(&cb->done))
		return CHILD_ENDED;
	(void)waitpid(pid, status, WNOHANG);
	return CHILD_DONE;
}

int child_call(void (*fn)(void *), void *arg, size_t size, double limit, int *status)
{
	void *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int rc;

	*status = 0;
	if (sh == MAP_FAILED)
		return -errno;
	memcpy(sh, arg, size);
	rc = child_run(fn, sh, sh, limit, status);
	memcpy(arg, sh, size);
	(void)munmap(sh, size);
	return rc;
}

int proc_start(pid_t pid, bool prefixed, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *c;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = prefixed ? rb_read_str(path, buf, sizeof(buf)) : read_str_abs(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "pid (comm) state ppid ...": comm may hold spaces and ')' */
	c = strrchr(buf, ')');
	if (!c || sscanf(c + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", state, start) != 2)
		return -EINVAL;
	return 0;
}

bool proc_alive(pid_t pid, bool prefixed, unsigned long long start)
{
	unsigned long long s;
	char state;

	return proc_start(pid, prefixed, &state, &s) == 0 && s == start && state != 'Z' &&
	       state != 'X';
}
