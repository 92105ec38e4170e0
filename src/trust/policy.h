/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a copy of an image is checked against, under the verification
 * policy: the SHA-256 given (--sha256) and the manifest (--manifest),
 * which --signed requires to be signed by a trusted key (sign.h). One
 * reading for the loader, the lazy copier and the cache's refresh: the
 * same checks, the same messages, the same categories (lib/runerr.h).
 */
#ifndef RAMBOOT_POLICY_H
#define RAMBOOT_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "format/manifest.h"
#include "lib/runerr.h"

struct trust_policy {
	const char *sha256;      /* 64 hex digits, or NULL */
	const char *manifest;    /* manifest file, or NULL */
	bool signed_only;        /* the manifest must be signed by a trusted key */
	const char *keydir;      /* with signed_only: NULL, the initrd's keys */
	bool chunks;             /* keep a version 2 manifest's chunk hashes */
	/* The manifest's bytes, read already (the cache keeps them beside a
	 * slot, read through a descriptor that outlives a switch of root):
	 * these very bytes are checked and parsed, manifest names them in
	 * messages. NULL: the file manifest is read. */
	const char *text;
	size_t text_len;
};

/* What the policy gives: the hash to check the copy against, and the
 * manifest when there is one. */
struct trust_want {
	char *sha256;            /* [65]: lower-case hex, "" when none is asked */
	struct manifest *man;    /* read into with a manifest (manifest_free()) */
	bool *have_man;          /* set once *man holds a manifest */
	char *signed_by;         /* "NAME KEYID" of the key, with signed_only */
	size_t signed_by_len;
	int *read_rc;            /* NULL, or set to the manifest's read or
				  * check, 0 or -errno (the cache tells a
				  * server that cannot be reached from a
				  * manifest refused by it) */
};

/*
 * Read p under the policy into w. RUN_OK, or why not with a message in
 * err: RUN_USAGE (a malformed --sha256, or one the manifest disagrees
 * with), RUN_MANIFEST (the manifest cannot be read or is malformed),
 * RUN_SIGNATURE (signed_only: not signed by a trusted key).
 */
enum run_err trust_policy_read(const struct trust_policy *p, const struct trust_want *w,
			       char *err, size_t errlen);

#endif
