// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What `ramboot boot` leaves behind: the one stdout line of a RAM copy
 * or a mapping, the fallback, and the report, written by the boot as it
 * ends or handed over to a child that outlives it (run.h, report_owner).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/msg.h"
#include "lib/proc.h"
#include "lib/report.h"
#include "lib/sysutil.h"
#include "boot/outcome.h"

/* Print the one stdout line, quoted for the shell when needed. */
void print_image(const char *path)
{
	const char *p;
	bool plain = *path != '\0';

	for (p = path; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789/._,:+@%-", *p))
			plain = false;
	if (plain) {
		printf("RAMBOOT_IMAGE=%s\n", path);
	} else {
		printf("RAMBOOT_IMAGE='");
		for (p = path; *p; p++) {
			if (*p == '\'')
				printf("'\\''");
			else
				putchar(*p);
		}
		printf("'\n");
	}
	fflush(stdout);
}

void fallback(struct boot_report *rep, const char *reason, const char *error)
{
	snprintf(rep->fallback, sizeof(rep->fallback), "%s", reason);
	report_add_error(rep, error);
	snprintf(rep->mode_done, sizeof(rep->mode_done), "off");
	if (error && *error && !strncmp(error, reason, strlen(reason)))
		rb_warn("%s; booting from the network image", error);
	else if (error && *error)
		rb_warn("%s: %s; booting from the network image", reason, error);
	else
		rb_warn("%s; booting from the network image", reason);
}

pid_t boot_fork(const char *what, const char *image)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid > 0)
		rb_debug("%s of %s in process %d", what, image, (int)pid);
	return pid;
}

pid_t boot_hand_over(struct boot_run *run, enum report_owner owner, const char *what,
		     const char *image)
{
	int rc = report_write(&run->rep, run->rundir, run->a->json);
	pid_t pid;

	if (rc < 0)
		rb_warn("%s/report: %s", run->rundir, strerror(-rc));
	pid = boot_fork(what, image);
	if (pid > 0)
		run->owner = owner;
	else if (pid < 0)
		run->owner = REPORT_WRITTEN;
	return pid;
}

int boot_child_detach(const char *rundir, const char *logpath)
{
	/* The report's directory, held open: the child may end after the
	 * switch of root, when /run has moved. */
	int dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (rb_detach(true) < 0)
		_exit(1);
	if (logpath) {
		int lfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (lfd >= 0)
			dup2(lfd, STDERR_FILENO);
	}
	return dfd;
}
