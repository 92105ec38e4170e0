/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramboot - common declarations: error reporting, the root prefix through
 * which every /proc, /sys and /dev access goes, sizes and retrying I/O.
 */
#ifndef RAMBOOT_H
#define RAMBOOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes, documented in docs/ramboot.md and pinned by tests. */
enum {
	RB_EXIT_OK = 0,
	RB_EXIT_FAIL = 1,   /* runtime error: I/O, corrupt input, verify failed */
	RB_EXIT_USAGE = 2,  /* bad command line */
	RB_EXIT_NOMEM = 3,  /* not enough memory: the caller should fall back */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal: RB_STR(100) is "100". */
#define RB_STR_(x) #x
#define RB_STR(x) RB_STR_(x)
#define KiB (1024ULL)
#define MiB (1024ULL * 1024)
#define GiB (1024ULL * 1024 * 1024)

/* ---- messages (util.c) ---- */
extern int rb_verbose;
/* "ramboot: <cmd>: " prefix for every message of the running command. */
void rb_set_cmd(const char *cmd);
void rb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rb_info, and the kernel log at info level once rb_kmsg_open() found it:
 * for what the journal keeps of a boot (a copy started, a copy made). */
void rb_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rb_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of `ramboot CMD`: one line naming its --help; returns
 * RB_EXIT_USAGE. */
int rb_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The `default:` of a command's getopt_long() loop (run with opterr = 0):
 * "unknown or incomplete option '--bogus'" (or '-x') as a usage error of
 * CMD; returns RB_EXIT_USAGE. */
int rb_usage_option(const char *cmd, char *const argv[]);
/* `ramboot CMD SUB [ARGS]`: the function of SUB in subs (n of them)
 * with argv from SUB on; "-h" or "--help" as SUB is usage(stdout), and
 * so is `SUB -h` (or --help) alone for a SUB that takes no options. No
 * SUB or an unknown one is a usage error naming those there are. */
struct rb_subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool noopts;      /* its arguments are operands, never options */
};
int rb_subcmd_run(const char *cmd, const struct rb_subcmd *subs, size_t n,
		  void (*usage)(FILE *out), int argc, char **argv);
/* Format a message into err (if any) and return rc: for helpers that
 * return -errno and say why in a caller's buffer. */
int rb_errfmt(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- the root prefix (util.c) ----
 * Every path below /proc, /sys and /dev is resolved through the prefix set
 * from $RAMBOOT_ROOT (empty: the real system), so tests run against fixture
 * trees. rb_path() returns 0 or -ENAMETOOLONG. */
void rb_root_init(void);
/* Also send warnings and errors (and rb_note) to the kernel log (/dev/kmsg
 * below the root prefix), from now on; nothing when it cannot be opened. */
void rb_kmsg_open(void);
bool rb_root_is_real(void);
int rb_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read a small file below the root prefix into buf (NUL-terminated,
 * trailing newline stripped). Returns length or -errno. */
ssize_t rb_read_str(const char *path, char *buf, size_t len);
/* Write a string to a file below the root prefix (sysfs attribute). */
int rb_write_str(const char *path, const char *val);
/* Same, taking a path that is already resolved (no prefix added). A
 * regular file or a character device is read, never waited on: -EISDIR
 * for a directory, -EINVAL for anything else (a FIFO). */
ssize_t read_str_abs(const char *path, char *buf, size_t len);
/* The same for a file that ramboot itself writes (the report, the
 * status file): only a regular file is read. The second with the root
 * prefix. */
ssize_t read_regular_abs(const char *path, char *buf, size_t len);
ssize_t rb_read_regular(const char *path, char *buf, size_t len);
int write_str_abs(const char *path, const char *val);

/* /proc/meminfo field in bytes ("MemAvailable", "MemTotal"). */
int rb_meminfo(const char *field, uint64_t *bytes);
/* The same from a meminfo text (read through a descriptor kept open).
 * 0, -ENOENT or -EINVAL. */
int meminfo_parse(const char *text, const char *field, uint64_t *bytes);

/* ---- text shown on one line (util.c) ----
 * A control character (below 0x20, or DEL) in a value that goes on a
 * console line, into a key=value file or onto a terminal: a newline
 * would start a second key, an escape sequence would drive the
 * terminal. */
static inline bool text_is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}
/* The first n bytes of src (fewer where it ends) into dst, which holds
 * cap > 0 bytes, each control character replaced by `with`, and a NUL.
 * dst may be src. Returns the length written. */
size_t text_scrub(char *dst, size_t cap, const char *src, size_t n, char with);
/* s (NUL-terminated, at most 1023 bytes are looked at) with each control
 * character written as an escape (\n, \t, \r, \xNN), in place, cut to
 * hold cap > 0 bytes with its NUL: one line of text whatever s held.
 * Returns the length. */
size_t text_escape(char *s, size_t cap);

/* ---- sizes and rates (util.c): the grammar of docs/ramboot.md, "Units" ----
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
 * returns -EINVAL (-ERANGE past 2^60) with the reason in note. */
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
/* A time (seconds since the epoch) for a person, in local time with its
 * age: "2026-12-07 03:10:11 UTC (2 h ago)". */
const char *fmt_when(int64_t t, char *buf, size_t len);
/* Human-readable size into buf: "1.5 GiB". */
const char *fmt_size(uint64_t n, char *buf, size_t len);
/* A rate for a person: "103.2 MiB/s = 865.6 Mbit/s". */
const char *fmt_rate(uint64_t bytes_per_s, char *buf, size_t len);

/* ---- I/O (util.c): loops over EINTR and short transfers ---- */
ssize_t read_full(int fd, void *buf, size_t len);      /* < len only at EOF */
int write_all(int fd, const void *buf, size_t len);    /* 0 or -errno */
int pwrite_full(int fd, const void *buf, size_t len, off_t off); /* 0 or -errno */
ssize_t pread_full(int fd, void *buf, size_t len, off_t off);
int close_checked(int fd);                             /* 0 or -errno */
/* path opened read-only (O_CLOEXEC), its fstat in *st: the descriptor,
 * or -errno and "PATH: reason" in err. */
struct stat;
int open_stat(const char *path, struct stat *st, char *err, size_t errlen);

/* A large buffer, 2 MiB aligned and backed by transparent huge pages
 * where the kernel allows (one fault per 2 MiB instead of 512: faults
 * are costly, in a VM most of all). Freed with free(). */
void *alloc_big(size_t len);

/* Size of a block device (BLKGETSIZE64). 0 or -errno. */
int blk_size(int fd, uint64_t *size);
/* The file system blkid finds on fd ("squashfs", ...; "" when none).
 * 0 or -errno. */
int blkid_fstype_fd(int fd, char *type, size_t len);

/* In a child that outlives the boot's hook: a session of its own,
 * SIGHUP ignored, "/" as its directory (nothing mounted stays busy),
 * /dev/null as stdin and stdout (the hook reads the boot's stdout to
 * its end) and, with quiet, as stderr too. 0, or -errno of chdir. */
int rb_detach(bool quiet);

double now_sec(void);                                  /* CLOCK_MONOTONIC */
double boot_sec(void);          /* CLOCK_BOOTTIME: seconds since boot, 0 on error */
void nap_ms(long ms);
/* Idle I/O priority for this process (and the threads it starts next);
 * returns the old one for io_prio_restore (-1: unknown). */
int io_prio_idle(void);
void io_prio_restore(int old);
int cpu_nice_bg(void);
void cpu_nice_restore(int old);
/* Does tmpfs take "noswap" (Linux 6.4+)? */
bool tmpfs_has_noswap(void);                                  /* sleep, EINTR resumed */
int online_cpus(void);

#endif
