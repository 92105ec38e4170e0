/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The boot report: what `ramboot boot` asked for and what it did, as
 * key=value lines in /run/ramboot/report (and report.json with --json).
 * `ramboot status` prints it; the initramfs-tools boot script reads
 * fstype= from it.
 */
#ifndef RAMBOOT_REPORT_H
#define RAMBOOT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/keys.h"

#define REPORT_DIR "/run/ramboot"

struct boot_report {
	char mode_asked[16];      /* off | prefetch | ram | lazy */
	char mode_done[16];       /* off | prefetch | ram | lazy (started) */
	char source[4096];        /* the network image */
	char ram_path[4096];      /* the RAM copy, "" when none */
	char target[16];          /* tmpfs | zram | "" */
	uint64_t bytes;           /* bytes written to RAM (read, for prefetch) */
	double seconds;
	uint64_t bytes_per_second; /* read from the source (was mbps, MB/s) */
	char codec[16];
	char hash[16];            /* ok | mismatch | none */
	char verify[16];          /* the ramboot.verify= policy applied, "" before */
	char signed_by[96];       /* "NAME KEYID" of the key that signed, "" */
	char source_used[16];     /* where the copy was read: udpcast | network |
				   * "" (no copy tried) */
	char source_fallback[256];/* "" or why a udpcast copy gave way to the
				   * network image */
	uint32_t chunks;          /* chunks verified (version 2 manifest) */
	uint32_t chunks_retried;  /* of them, read again from the source */
	char verity[8];           /* ramboot.verity=1: on | failed; "" not asked */
	char verity_device[4096]; /* /dev/mapper/ramboot-verity */
	char verity_root[65];     /* its root hash */
	/* ramboot.cache= (docs/cache.md, "At boot"): "" when not used */
	char cache[16];           /* hit | miss | fallback */
	char cache_device[4096];  /* the device found */
	char cache_slot[4];       /* a | b | - */
	uint64_t cache_generation;
	char cache_image[64];     /* hit: the loop device over the slot */
	char cache_verified[16];  /* hit: verity | refresh */
	char cache_marked_bad[4]; /* a | b: the slot this boot marked bad */
	int64_t cache_age;        /* offline: seconds since the slot's refresh,
				   * -1: not an offline boot */
	char fstype[32];
	char swap_device[64];
	uint64_t swap_size;
	char swap_algorithm[32];
	int swap_priority;        /* meaningful with swap_device set */
	char fallback[256];       /* "" or why the boot stays on the network */
	char error[1024];         /* "" or the one-line error(s) */
};

void report_init(struct boot_report *r);

/* Append a message to r->error ("; " between several). */
void report_add_error(struct boot_report *r, const char *msg);

/* Format as key=value lines / as one JSON object. Returns the length
 * or -ENOSPC. */
int report_format(const struct boot_report *r, char *buf, size_t len);
int report_format_json(const struct boot_report *r, char *buf, size_t len);

/* Write dir/report (and dir/report.json when json) atomically: a
 * temporary file renamed over the old one. dir is an absolute,
 * already prefixed path; it is created (mode 0755) if missing.
 * 0 or -errno. */
int report_write(const struct boot_report *r, const char *dir, bool json);
/* The same into the directory dirfd: for a process that outlives the
 * switch of root (its paths then name the initramfs's directories, the
 * descriptor the moved /run). */
int report_write_at(const struct boot_report *r, int dirfd, bool json);

/* Set key=value in a report's text of at most cap bytes (NUL
 * included): the line replaced, or appended; the value on one line as
 * report_kv() writes it. 0 or -ENOSPC. For a process
 * that amends the report after `ramboot boot` wrote it (the hooks'
 * --drop, the lazy copier). */
int report_text_set(char *text, size_t cap, const char *key, const char *val);

/* KEY's value in key=value TEXT into BUF (control characters as '?'):
 * 1 found (possibly empty), 0 missing, -EBADMSG when the key is there
 * more than once (a forged line: neither value can be trusted). */
int report_text_get(const char *text, const char *key, char *buf, size_t len);

/* One line of key=value text, as report_text_next() reads it. */
struct report_line {
	const char *key;  /* where the line begins (not NUL-terminated) */
	size_t klen;      /* the key: the bytes before the first '=' (the
			   * whole line when it has none) */
	const char *val;  /* after that '='; NULL: the line has none */
	size_t vlen;      /* up to the end of the line, its '\n' left out */
};

/* The line of key=value TEXT at offset *pos (0: the first) into *l, and
 * *pos moved to the next one: true, or false at the end of the text.
 * The one reader of the lines that report_kv() writes: the report's
 * and the lazy copier's status file's. */
bool report_text_next(const char *text, size_t *pos, struct report_line *l);

/* The first key of key=value TEXT that is on two lines, copied to KEY
 * (LEN bytes), or NULL. The writers put every value on one line: a
 * repeated key is a forged line (or not a file of theirs), and neither
 * value can be trusted. */
const char *report_text_repeated(const char *text, char *key, size_t len);

/* One key to set in report_amend_at(); val NULL: leave the key as it is. */
struct report_set {
	enum key_id key;
	const char *val;
};

#define REPORT_AMEND_MAX (64 * 1024)  /* a larger report is not amended */
#define REPORT_AMEND_CREATE 1u        /* no report, or one that cannot be
				       * read: write one of these keys alone */

/*
 * Amend the report in the directory dirfd after `ramboot boot` wrote
 * it, for a process that outlives it (the hooks' --drop, the lazy
 * copier): read "report" (a regular file, not through a link, at most
 * REPORT_AMEND_MAX bytes), set the n keys as report_text_set() does (a
 * line replaced in place, or appended), and write it back atomically
 * (outfile: a temporary renamed over it, so that a reader never sees
 * half of it). The buffer is sized to the file and the keys: no margin
 * can run out. Without REPORT_AMEND_CREATE a report that is missing or
 * cannot be read is left alone (its -errno: -ENOENT for none). 0 or
 * -errno; on failure the report is as it was.
 */
int report_amend_at(int dirfd, const struct report_set *set, size_t n, unsigned flags);

/* Append the line key=val to buf (cap bytes, *pos used), the value on
 * one line (control characters as spaces): the one writer of key=value
 * lines, for the report and the lazy copier's status file. 0, or
 * -ENOSPC with *pos unchanged. */
int report_kv(char *buf, size_t cap, size_t *pos, const char *key, const char *val);
/* mkdir -p with mode 0755. 0 or -errno. */
int report_mkdir(const char *dir);

#endif
