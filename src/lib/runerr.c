// SPDX-License-Identifier: GPL-2.0-or-later
/* The error record of a run: see runerr.h. */
#include <stdio.h>
#include <string.h>

#include "lib/base.h"
#include "lib/runerr.h"

static const char *const names[] = {
	[RUN_OK] = "",
	[RUN_USAGE] = "usage",
	[RUN_SOURCE] = "source",
	[RUN_MANIFEST] = "manifest",
	[RUN_FORMAT] = "format",
	[RUN_DEST] = "dest",
	[RUN_NOMEM] = "memory",
	[RUN_SIZE] = "size-mismatch",
	[RUN_HASH] = "hash-mismatch",
	[RUN_FSTYPE] = "fstype",
	[RUN_CHANGED] = "source-changed",
	[RUN_STALL] = "stall",
	[RUN_SIGNAL] = "signal",
	[RUN_SIGNATURE] = "signature",
	[RUN_LOOP] = "loop",
	[RUN_NOLOOP] = "no-loop-device",
	[RUN_SWITCH] = "switch",
	[RUN_UNVERIFIED] = "unverified",
	[RUN_RECEIVER] = "receiver",
	[RUN_NO_SESSION] = "no-session",
	[RUN_LOST] = "stream-lost",
	[RUN_COMPRESSED] = "compressed",
	[RUN_DIFFERS] = "image-differs",
};

const char *run_err_name(enum run_err e)
{
	return (size_t)e < ARRAY_SIZE(names) && names[e] ? names[e] : "unknown";
}

int run_err_exit(enum run_err e)
{
	switch (e) {
	case RUN_OK: return RB_EXIT_OK;
	case RUN_USAGE: return RB_EXIT_USAGE;
	case RUN_NOMEM: return RB_EXIT_NOMEM;
	default: return RB_EXIT_FAIL;
	}
}

int run_vfail(struct run_error re, enum run_err e, const char *fmt, va_list ap)
{
	if (*re.err == RUN_OK) {
		*re.err = e;
		vsnprintf(re.msg, re.msglen, fmt, ap);
	}
	return run_err_exit(*re.err);
}

int run_fail(struct run_error re, enum run_err e, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = run_vfail(re, e, fmt, ap);
	va_end(ap);
	return rc;
}

int run_guard_outcome(struct run_error re, struct guard *g, const char *source,
		      double stall_timeout)
{
	int signo = 0;

	switch (guard_fired(g, &signo)) {
	case GUARD_SIGNAL:
		*re.err = RUN_OK;
		*re.signo = signo;
		return run_fail(re, RUN_SIGNAL, "interrupted by signal %d (%s)", signo,
				strsignal(signo));
	case GUARD_STALL:
		*re.err = RUN_OK;
		return run_fail(re, RUN_STALL, "%s: no data for %.0f s (--stall-timeout); the "
				"source stalled", source, stall_timeout);
	default:
		return 0;
	}
}
