/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of the two key=value files ramboot leaves in /run/ramboot:
 * the boot report (`report`, written by `ramboot boot`, amended by the
 * hooks' --drop and by the lazy copier when it ends) and the lazy
 * copier's status file (`lazy`, docs/lazy.md). One table: the writers
 * name a key by its enum, `ramboot status` reads both files through it,
 * and tests/unit/test_report.c checks that every key a writer in src/
 * writes is in it.
 */
#ifndef RAMBOOT_KEYS_H
#define RAMBOOT_KEYS_H

#include <stdbool.h>

/* Which file a key is written to. */
enum key_file { KEY_REPORT, KEY_LAZY };

/* What its value is. Numbers are never negative; an empty value is
 * "not known (yet)". */
enum key_kind {
	KIND_TEXT,   /* anything, on one line */
	KIND_INT,    /* a count, a pid, bytes per second: digits */
	KIND_BYTES,  /* a byte count: digits */
	KIND_TIME,   /* seconds since boot, "12.34" */
	KIND_DEC,    /* a decimal number: a duration "%.3f", MB/s "%.1f" */
};

/* How `ramboot status` shows it beside the raw line. */
enum key_show {
	SHOW_PLAIN,  /* key=value as written */
	SHOW_SIZE,   /* also in binary units: "bytes=1073741824 (1.0 GiB)" */
};

/* Every key, by file; each file's keys in the order its writer writes
 * them (`ramboot status --json` lists the status file's keys so). */
enum key_id {
	/* the boot report (lib/report.c) */
	RK_MODE_ASKED, RK_MODE_DONE, RK_SOURCE, RK_RAM_PATH, RK_TARGET, RK_BYTES,
	RK_SECONDS, RK_BYTES_PER_SECOND, RK_CODEC, RK_HASH, RK_VERIFY, RK_SIGNED_BY,
	RK_SOURCE_USED, RK_SOURCE_FALLBACK, RK_CHUNKS, RK_CHUNKS_RETRIED,
	RK_VERITY, RK_VERITY_DEVICE, RK_VERITY_ROOT, RK_CACHE, RK_CACHE_DEVICE, RK_CACHE_SLOT,
	RK_CACHE_GENERATION, RK_CACHE_IMAGE, RK_CACHE_VERIFIED, RK_CACHE_MARKED_BAD,
	RK_CACHE_AGE, RK_FSTYPE, RK_SWAP_DEVICE,
	RK_SWAP_SIZE, RK_SWAP_ALGORITHM, RK_SWAP_PRIORITY, RK_FALLBACK, RK_ERROR,
	/* added to the report by the lazy copier when it ends */
	RK_LAZY_STARTED, RK_LAZY_BYTES_CACHED, RK_LAZY_BYTES_NETWORK, RK_LAZY_SOURCE,
	RK_LAZY_SOURCE_FALLBACK, RK_LAZY_VERIFIED, RK_LAZY_SWITCHED, RK_LAZY_GAVE_UP,
	/* added by the cache's refresh behind the boot when it ends */
	RK_CACHE_BYTES_NETWORK, RK_CACHE_BYTES_LOCAL, RK_CACHE_ERROR, RK_CACHE_REFRESH_SECONDS,
	RK_CACHE_SWITCHED, RK_CACHE_SWITCH_ERROR,
	/* added by the scrub behind a boot from the cache through dm-verity */
	RK_CACHE_SCRUB, RK_CACHE_SCRUB_OFFSET, RK_CACHE_SCRUB_ERROR, RK_CACHE_SCRUB_SECONDS,
	/* added by the network memory tier's process (docs/netmem.md) */
	RK_SWAP_NET, RK_SWAP_NET_STATE, RK_SWAP_NET_BYTES_WRITTEN, RK_SWAP_NET_BYTES_READ,
	RK_SWAP_NET_PAGES, RK_SWAP_NET_PID1,
	/* the lazy copier's status file */
	LK_STATE, LK_PID, LK_IMAGE, LK_LOOP, LK_TARGET, LK_COPY, LK_SIZE, LK_STARTED,
	LK_UPDATED, LK_SOURCE, LK_SOURCE_FALLBACK, LK_SOURCE_ERROR, LK_BYTES_STREAM,
	LK_BYTES_COMPARED, LK_BYTES_CACHED, LK_BYTES_NETWORK, LK_MAX_BYTES_PER_SECOND, LK_YIELDS,
	LK_PROFILE, LK_PROFILE_FILE, LK_HASH, LK_SHA256, LK_SIGNED_BY, LK_VERIFIED,
	LK_SWITCHED, LK_GAVE_UP, LK_ERROR,
	/* over HTTP: the copier's NBD server */
	LK_CHUNKS, LK_FETCHING, LK_FETCH_FAILED, LK_FETCH_ERROR,
	KEY_COUNT
};

#define KEY_LAZY_FIRST LK_STATE

struct key_info {
	const char *name;
	enum key_file file;
	enum key_kind kind;
	enum key_show show;
};

extern const struct key_info key_table[KEY_COUNT];

/* The key's name as written ("mode_done"). */
const char *key_name(enum key_id k);

/* The key called name (NUL-terminated) in file, or -1: for a reader,
 * and for a writer that has only a name. */
int key_find(enum key_file file, const char *name);

#endif
