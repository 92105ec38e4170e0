// SPDX-License-Identifier: GPL-2.0-or-later
/* This process in the machine (proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioprio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/msg.h"
#include "lib/proc.h"

int rb_detach(bool quiet)
{
	int fd;

	setsid();
	signal(SIGHUP, SIG_IGN);
	if (chdir("/") < 0)
		return -errno;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (quiet)
			dup2(fd, STDERR_FILENO);
		/* dup2 leaves the copies without O_CLOEXEC */
		if (fd > STDERR_FILENO)
			(void)close(fd);
	}
	return 0;
}

void *alloc_big(size_t len)
{
	const size_t huge = 2u << 20;
	void *p;

	if (len < huge)
		return malloc(len ? len : 1);
	len = (len + huge - 1) & ~(huge - 1);
	if (posix_memalign(&p, huge, len))
		return NULL;
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* Idle I/O class: where the block layer honours it, our reads are served
 * only when no one else's wait. Threads made afterwards inherit it.
 * Returns the class before (-1 when unknown), for io_prio_restore. */
int io_prio_idle(void)
{
	int old = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);

	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) < 0)
		rb_debug("ioprio_set: %s", strerror(errno));
	return old;
}

void io_prio_restore(int old)
{
	if (old >= 0)
		(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, old);
}

/* The calling thread (and the threads it makes afterwards) at nice 19:
 * background work (prefetch, the lazy copy and its hashing) gets the
 * CPU the boot leaves. Returns the nice value before, for
 * cpu_nice_restore. */
int cpu_nice_bg(void)
{
	int old;

	errno = 0;
	old = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (errno)
		old = 0;
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 19) < 0)
		rb_debug("setpriority: %s", strerror(errno));
	return old;
}

void cpu_nice_restore(int old)
{
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), old);
}

int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}
