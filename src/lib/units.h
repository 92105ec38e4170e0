/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizes, rates and durations: the grammar of docs/ramboot.md, "Units",
 * parsed from options and formatted for a person.
 *
 * A size is a number and a binary unit: 4096B, 512K, 256M, 1.5G, 2T (KiB,
 * MiB, GiB, TiB are the same). A rate is a bit rate, decimal as links
 * are sold (500kbit, 100Mbit, 1Gbit; "/s" may follow), or a size per
 * second (12MiB/s, 512K/s). 0 needs no unit.
 * Older spellings keep their old meaning, deprecated: a number without a
 * unit (its meaning is the option's own, `bare`), lower-case k/m/g/t,
 * KB/MB/GB/TB (binary, as ramboot always read them), and for a rate the
 * old suffixes without "/s" (serve: bits with k/m/g, 10^3n; load and
 * lazy: a size, per second). A rate is given in the option's own unit:
 * bits per second with UNIT_BITS (serve: udp-sender takes bits), bytes
 * per second otherwise. Such a value returns 1 with the documented
 * spelling of the same value in note ("30000B", "500Mbit"). A value that
 * is no size or rate, or an ambiguous one ("12MB/s", "100Mbps"),
 * returns -EINVAL (-ERANGE past 2^60) with the reason in note.
 */
#ifndef RAMBOOT_UNITS_H
#define RAMBOOT_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum unit_bare { UNIT_BYTES, UNIT_MIB, UNIT_BITS };
int size_parse(const char *s, enum unit_bare bare, uint64_t *out, char *note, size_t len);
int rate_parse(const char *s, enum unit_bare bare, uint64_t *out, char *note, size_t len);
/* The binary unit at the start of s (B, K, KiB, ... T, TiB and the old
 * k, KB, Ki, ...): its length (0: none) and multiplier, *old for an old
 * spelling. For size expressions (sizeexpr.c). */
size_t size_unit(const char *s, uint64_t *mul, bool *old);
/* "B", "KiB", "MiB", "GiB", "TiB" for a multiplier of size_unit(). */
const char *size_unit_name(uint64_t mul);
/* Option --OPT of `ramboot CMD`: parsed, a warning for an old spelling,
 * the usage message for a bad one (then -EINVAL or -ERANGE; the caller
 * returns RB_EXIT_USAGE). */
int size_arg(const char *cmd, const char *opt, const char *val, enum unit_bare bare,
	     uint64_t *out);
int rate_arg(const char *cmd, const char *opt, const char *val, enum unit_bare bare,
	     uint64_t *out);
/* -j, --threads of CMD: a whole number from 1 to 64; else a usage
 * error (RB_EXIT_USAGE). */
int parse_threads(const char *cmd, const char *s, int *out);
/* A duration, the one grammar of docs/ramboot.md "Units": a number
 * (decimals allowed) with an optional unit, s (the default), m, h, d or
 * w ("30", "2.5s", "36h", "7d"); "0", "off" and "no" are 0. Non-negative,
 * at most max seconds. 0 with *out in seconds, or -EINVAL. */
int duration_parse(const char *s, double max, double *out);
/* duration_parse() in whole seconds from lo to hi ("90", "2m", "1h"):
 * 0 or -EINVAL. */
int duration_secs(const char *s, unsigned lo, unsigned hi, unsigned *out);
/* duration_parse() of at most a day: every timeout, interval and wait. */
int parse_seconds(const char *s, double *out);
/* Human-readable size into buf: "1.5 GiB". */
const char *fmt_size(uint64_t n, char *buf, size_t len);
/* A rate for a person: "103.2 MiB/s = 865.6 Mbit/s". */
const char *fmt_rate(uint64_t bytes_per_s, char *buf, size_t len);

#endif
