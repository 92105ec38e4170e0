// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Messages (msg.h): one line each, on stderr and in the kernel log; usage
 * errors and the dispatch of sub-commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/text.h"

int rb_verbose;
static const char *rb_cmd;

/* The kernel log, once rb_kmsg_open() found it: warnings and errors go
 * there too, so that `dmesg` and `journalctl -b` keep what a console
 * booted with `quiet splash` never shows. */
static int rb_kmsg_fd = -1;

void rb_set_cmd(const char *cmd)
{
	rb_cmd = cmd;
}

/* kmsg: the kernel log level of the record ('3', '4', '6'), 0: none. */
static void vmsg(const char *kind, char kmsg, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	/* One write per message: lines from threads never interleave. */
	n = snprintf(line, sizeof(line), "ramboot: %s%s%s", rb_cmd ? rb_cmd : "",
		     rb_cmd ? ": " : "", kind);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	/* One message, one line: a newline in a path or in a server's
	 * string would forge a second line (a console line, a report key
	 * read back from the log). */
	n = (int)text_escape(line, sizeof(line) - 1);
	line[n++] = '\n';
	(void)write_all(STDERR_FILENO, line, (size_t)n);
	if (rb_kmsg_fd >= 0 && kmsg) {
		char rec[sizeof(line) + 4];
		int m = snprintf(rec, sizeof(rec), "<%c>%.*s", kmsg, n, line);

		/* One record per write(2); a full ring or a slow console is
		 * never a reason to block the boot (O_NONBLOCK). */
		if (m > 0)
			(void)!write(rb_kmsg_fd, rec, (size_t)m < sizeof(rec) ? (size_t)m : sizeof(rec) - 1);
	}
}

void rb_kmsg_open(void)
{
	char p[PATH_MAX];
	struct stat st;
	int fd;

	if (rb_kmsg_fd >= 0 || rb_path(p, sizeof(p), "/dev/kmsg") < 0)
		return;
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return;
	/* The kernel's character device; a regular file only below a
	 * fixture root (RAMBOOT_ROOT), where the tests read it back. */
	if (fstat(fd, &st) < 0 || !(S_ISCHR(st.st_mode) || (!rb_root_is_real() && S_ISREG(st.st_mode)))) {
		(void)close(fd);
		return;
	}
	rb_kmsg_fd = fd;
}

/* rb_err(), rb_warn(), rb_info(), rb_note(): vmsg() with the kind and
 * the kernel log level of each. "ramboot: load: error: ...": an error is
 * told from a report line (rb_info) on a console that shows both. */
#define MSG_FN(fn, kind, kmsg)                                                        \
	void fn(const char *fmt, ...)                                                 \
	{                                                                             \
		va_list ap;                                                           \
                                                                                      \
		va_start(ap, fmt);                                                    \
		vmsg(kind, kmsg, fmt, ap);                                            \
		va_end(ap);                                                           \
	}
MSG_FN(rb_err, "error: ", '3')
MSG_FN(rb_warn, "warning: ", '4')
MSG_FN(rb_info, "", 0)
MSG_FN(rb_note, "", '6')

int rb_usage(const char *cmd, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rb_err("%s (see 'ramboot %s --help')", msg, cmd);
	return RB_EXIT_USAGE;
}

int rb_usage_option(const char *cmd, char *const argv[])
{
	const char *arg = optind > 0 ? argv[optind - 1] : NULL;

	/* An unknown short option inside a group (-xv) leaves optind on
	 * the argument before: name the option itself then. */
	if (optopt > 0 && optopt < 256 &&
	    (!arg || arg[0] != '-' || (arg[1] != '-' && !strchr(arg + 1, optopt))))
		return rb_usage(cmd, "unknown or incomplete option '-%c'", optopt);
	return rb_usage(cmd, "unknown or incomplete option '%s'", arg ? arg : "?");
}

static bool is_help(const char *arg)
{
	return arg && (!strcmp(arg, "-h") || !strcmp(arg, "--help"));
}

int rb_subcmd_run(const char *cmd, const struct rb_subcmd *subs, size_t n,
		  void (*usage)(FILE *out), int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	char names[256];
	size_t i, len = 0;

	if (is_help(sub)) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	for (i = 0; sub && i < n; i++) {
		if (strcmp(sub, subs[i].name))
			continue;
		if (subs[i].noopts && argc == 3 && is_help(argv[2])) {
			usage(stdout);
			return RB_EXIT_OK;
		}
		return subs[i].fn(argc - 1, argv + 1);
	}
	if (sub)
		return rb_usage(cmd, "unknown command '%s'", sub);
	/* "need a, b or c" */
	names[0] = '\0';
	for (i = 0; i < n && len < sizeof(names); i++) {
		int w = snprintf(names + len, sizeof(names) - len, "%s%s",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ", subs[i].name);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	return rb_usage(cmd, "need %s", names);
}

int rb_errfmt(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void rb_debug(const char *fmt, ...)
{
	va_list ap;

	if (!rb_verbose)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", 0, fmt, ap);
	va_end(ap);
}
