/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Size expressions for zram: "min(ram, 8G)", "50%", "ram / 2 + 256M".
 *
 * The unit of the arithmetic is the MiB: `ram` is MemTotal in MiB, a bare
 * number is MiB, K/M/G/T suffixes convert (512K = 0.5), `N%` is N percent
 * of ram. Operators + - * / with the usual precedence, unary minus,
 * parentheses, min(a, b, ...) and max(a, b, ...).
 */
#ifndef RAMBOOT_SIZEEXPR_H
#define RAMBOOT_SIZEEXPR_H

#include <stdint.h>

struct sizeexpr_error {
	int column;              /* 1-based position of the fault */
	const char *what;        /* "expected expression", ... (static) */
	char name[32];           /* the offending word for "unknown name" */
};

/*
 * Evaluate expr with ram = ram_bytes. On success *out is the result in
 * bytes (rounded down) and 0 is returned. On error -EINVAL (syntax),
 * -EDOM (division by zero, negative result) or -ERANGE (too large), with
 * err filled when not NULL.
 */
int sizeexpr_eval(const char *expr, uint64_t ram_bytes, uint64_t *out,
		  struct sizeexpr_error *err);

#endif
