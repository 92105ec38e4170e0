// SPDX-License-Identifier: GPL-2.0-or-later
/* Clocks, a sleep, a time for a person (clock.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"

#ifndef RAMBOOT_LOCALTIME
#define RAMBOOT_LOCALTIME 0
#endif

/* Days since 1970-01-01 to a civil date (the proleptic Gregorian
 * calendar; H. Hinnant's days_from_civil, reversed). */
static void civil(int64_t days, int *y, int *m, int *d)
{
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

const char *fmt_when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	int64_t ago = (int64_t)time(NULL) - t, days = t / 86400, sec = t % 86400;
	struct tm tm;
	size_t n = 0;
	int y, m, d;

	/* The host build in local time; the static one (the initramfs has
	 * no time zone, and the zone code of a static libc is 32 KiB) in
	 * UTC, by hand. */
	if (RAMBOOT_LOCALTIME && localtime_r(&tt, &tm))
		n = strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	if (!n) {
		if (sec < 0) {
			sec += 86400;
			days--;
		}
		civil(days, &y, &m, &d);
		snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d UTC", y, m, d, (int)(sec / 3600),
			 (int)(sec / 60 % 60), (int)(sec % 60));
		n = strlen(buf);
	}
	if (ago < 0)
		snprintf(buf + n, len - n, " (in this clock's future)");
	else if (ago < 120)
		snprintf(buf + n, len - n, " (%" PRId64 " s ago)", ago);
	else if (ago < 2 * 3600)
		snprintf(buf + n, len - n, " (%" PRId64 " min ago)", ago / 60);
	else if (ago < 2 * 86400)
		snprintf(buf + n, len - n, " (%" PRId64 " h ago)", ago / 3600);
	else
		snprintf(buf + n, len - n, " (%" PRId64 " d ago)", ago / 86400);
	return buf;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double boot_sec(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
