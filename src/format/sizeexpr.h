/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Size expressions for zram: "min(ram, 8G)", "50%", "ram / 2 + 256M".
 *
 * The unit of the arithmetic is the MiB: `ram` is MemTotal in MiB, sizes
 * take the units of every size (lib/units.h: 4096B, 512K, 256M, 1.5G, 2T),
 * `N%` is N percent of ram. Operators + - * / with the usual precedence,
 * unary minus, parentheses, min(a, b, ...) and max(a, b, ...).
 *
 * A number without a unit is a factor ("ram / 2"). Where it stands for a
 * size ("4096", "min(ram, 4096)", "ram - 512") it is MiB, as it always
 * was, and a deprecated spelling, like the old units (4g, 512MB).
 */
#ifndef RAMBOOT_SIZEEXPR_H
#define RAMBOOT_SIZEEXPR_H

#include <stdint.h>

struct sizeexpr_error {
	int column;              /* 1-based position of the fault */
	const char *what;        /* "expected expression", ... (static) */
	char name[32];           /* the offending word for "unknown name" */
	/* On success: the first number in a deprecated spelling (column
	 * 0: none), as written and in its documented spelling ("4096",
	 * "4096MiB"). */
	int old_column;
	char old[32];
	char canon[40];
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
