/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state file of one image in the local-disk cache (docs/cache.md):
 * which of its two slots is active, the generation, what each slot holds
 * and what the last refresh read. A small text, committed atomically
 * (written aside, fsync, rename, fsync of the directory):
 *
 *   ramboot-cache-state 1
 *   generation 7
 *   active b
 *   slot a 68194304 SHA256 MANIFEST-SHA256|- CINDEX-SHA256
 *   slot b 68206592 SHA256 MANIFEST-SHA256|- CINDEX-SHA256
 *   bad a 1718000500
 *   refresh 1718000000 2355322 65838982
 *   check SHA256
 *
 * "active" is a, b or - (no slot yet); a slot line is there for each
 * slot that holds a verified image (the active one at least): the
 * image's size and SHA-256, the SHA-256 of the manifest file kept beside
 * the slot (- when it was refreshed without one) and of its chunk index
 * file. A "bad" line (one per slot, in slot order, only for a slot
 * line above) marks that slot's copy as one that failed a check after it
 * was written (a rotted or altered disk; docs/cache.md "A bad slot"),
 * with the time it was marked: it is not booted, and a refresh does not
 * take it as up to date. "refresh" is the last refresh's time (seconds since the epoch)
 * and the bytes it read from the image and from the local slot. "check"
 * is the SHA-256 of every byte before its line: a state that rotted on
 * the disk is refused, never trusted.
 *
 * The text is canonical: these lines in this order, each ending in one
 * LF, one space between fields, decimal numbers without leading zeros,
 * hashes in lower case; anything else is refused.
 */
#ifndef RAMBOOT_CSTATE_H
#define RAMBOOT_CSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CSTATE_MAGIC "ramboot-cache-state 1"
#define CSTATE_MAX   1024                 /* the longest text, with room */

struct cstate_slot {
	bool used;                        /* holds a verified image */
	bool has_manifest;                /* refreshed against a manifest */
	uint64_t size;
	uint8_t sha256[32];               /* of the image in the slot */
	uint8_t manifest_sha256[32];      /* of the slot's manifest file */
	uint8_t cindex_sha256[32];        /* of the slot's chunk index file */
	bool bad;                         /* failed a check since it was written */
	int64_t bad_time;                 /* when it was marked, epoch seconds */
};

struct cstate {
	uint64_t generation;
	int active;                       /* 0 (a), 1 (b), -1: none */
	struct cstate_slot slot[2];
	int64_t refreshed;                /* the last refresh, epoch seconds */
	uint64_t bytes_network;           /* read from the image */
	uint64_t bytes_local;             /* copied from the active slot */
};

/* 'a' or 'b' for slot 0 or 1. */
static inline char cstate_slot_name(int i)
{
	return i ? 'b' : 'a';
}

/* Parse buf[0..len): 0, or -EINVAL with the reason in err. */
int cstate_parse(const char *buf, size_t len, struct cstate *s, char *err, size_t errlen);
/* Format s into buf (CSTATE_MAX bytes suffice): the length, or -ENOSPC,
 * -EINVAL for a state that is not one (an active slot not used). */
ssize_t cstate_format(const struct cstate *s, char *buf, size_t len);

#endif
