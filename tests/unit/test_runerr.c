// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/runerr.c: the one error record of the loader and the lazy copier:
 * their categories are one list (one name, one exit code each), the
 * first failure is kept, and the guard's signal or stall replaces it. */
#include <signal.h>
#include <string.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/clock.h"
#include "lib/runerr.h"
#include "load/load.h"
#include "lazy/lazy.h"

struct res {
	enum run_err err;
	int signo;
	char error[64];
};

static void one_list(void)
{
	/* A bad signature is one category in both, with one exit code. */
	CHECK_EQ_INT(LOAD_SIGNATURE, LAZY_SIGNATURE);
	CHECK_EQ_INT(load_exit_code(LOAD_SIGNATURE), lazy_exit_code(LAZY_SIGNATURE));
	CHECK_EQ_INT(LOAD_NOMEM, LAZY_NOMEM);
	CHECK_EQ_INT(load_exit_code(LOAD_NOMEM), RB_EXIT_NOMEM);
	CHECK_EQ_INT(load_exit_code(LOAD_USAGE), RB_EXIT_USAGE);
	CHECK_EQ_INT(load_exit_code(LOAD_OK), RB_EXIT_OK);
	CHECK_EQ_INT(load_exit_code(LOAD_FSTYPE), RB_EXIT_FAIL);
	CHECK_EQ_STR(run_err_name(RUN_SIGNATURE), "signature");
	CHECK_EQ_STR(run_err_name(RUN_OK), "");
	CHECK_EQ_STR(run_err_name((enum run_err)-1), "unknown");
}

static void first_wins(void)
{
	struct res r = { 0 };

	CHECK_EQ_INT(run_fail(RUN_ERROR(&r), RUN_NOMEM, "short by %d", 3), RB_EXIT_NOMEM);
	CHECK_EQ_INT(r.err, RUN_NOMEM);
	CHECK_EQ_STR(r.error, "short by 3");
	/* What follows is a consequence: not recorded, the first one's code. */
	CHECK_EQ_INT(run_fail(RUN_ERROR(&r), RUN_USAGE, "later"), RB_EXIT_NOMEM);
	CHECK_EQ_INT(r.err, RUN_NOMEM);
	CHECK_EQ_STR(r.error, "short by 3");
}

static void truncated(void)
{
	struct res r = { 0 };
	char big[200];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ_INT(run_fail(RUN_ERROR(&r), RUN_SOURCE, "%s", big), RB_EXIT_FAIL);
	CHECK_EQ_INT((int)strlen(r.error), (int)sizeof(r.error) - 1);
}

static void guard_signal(void)
{
	struct res r = { 0 };
	struct guard g;

	/* No guard, or one that has not fired: nothing happened. */
	CHECK_EQ_INT(run_guard_outcome(RUN_ERROR(&r), NULL, "img", 30), 0);
	CHECK_EQ_INT(r.err, RUN_OK);
	memset(&g, 0, sizeof(g));
	CHECK_EQ_INT(guard_start(&g, 0, NULL), 0);
	CHECK_EQ_INT(run_guard_outcome(RUN_ERROR(&r), &g, "img", 30), 0);
	/* The read error the signal caused gives way to the signal. */
	(void)run_fail(RUN_ERROR(&r), RUN_SOURCE, "img: read error");
	CHECK_EQ_INT(kill(getpid(), SIGHUP), 0);
	while (guard_fired(&g, NULL) == GUARD_NONE)
		nap_ms(10);
	CHECK_EQ_INT(run_guard_outcome(RUN_ERROR(&r), &g, "img", 30), RB_EXIT_FAIL);
	CHECK_EQ_INT(r.err, RUN_SIGNAL);
	CHECK_EQ_INT(r.signo, SIGHUP);
	CHECK(!strncmp(r.error, "interrupted by signal", 21));
	guard_stop(&g);
}

int main(void)
{
	RUN(one_list);
	RUN(first_wins);
	RUN(truncated);
	RUN(guard_signal);
	return TAP_DONE();
}
