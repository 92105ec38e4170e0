/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Clocks: the monotonic one of a run's deadlines, the one since boot,
 * a sleep, and a time (since the epoch) for a person.
 */
#ifndef RAMBOOT_CLOCK_H
#define RAMBOOT_CLOCK_H

#include <stddef.h>
#include <stdint.h>

double now_sec(void);           /* CLOCK_MONOTONIC */
double boot_sec(void);          /* CLOCK_BOOTTIME: seconds since boot, 0 on error */
void nap_ms(long ms);           /* sleep, EINTR resumed */
/* A time (seconds since the epoch) for a person, in local time with its
 * age: "2026-12-07 03:10:11 UTC (2 h ago)". */
const char *fmt_when(int64_t t, char *buf, size_t len);

#endif
