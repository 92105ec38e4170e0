/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal TAP producer for the C unit tests: each test binary prints
 * "ok N - name" / "not ok N - name" and a plan; tests/run-tests.sh counts.
 */
#ifndef RAMBOOT_TAP_H
#define RAMBOOT_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed, tap_case_failed;

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		tap_case_failed = 1; \
	} } while (0)

#define CHECK_EQ_INT(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		printf("#   %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
		tap_case_failed = 1; \
	} } while (0)

#define CHECK_EQ_STR(a, b) do { \
	const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b)) { \
		printf("#   %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
		       _a ? _a : "(null)", _b ? _b : "(null)"); \
		tap_case_failed = 1; \
	} } while (0)

#define RUN(fn) do { \
	tap_case_failed = 0; \
	fn(); \
	tap_n++; \
	if (tap_case_failed) tap_failed++; \
	printf("%sok %d - %s\n", tap_case_failed ? "not " : "", tap_n, #fn); \
	fflush(stdout); \
} while (0)

#define TAP_DONE() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)

#endif
