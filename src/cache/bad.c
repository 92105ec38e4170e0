// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A slot marked bad in its image's state (docs/cache.md, "A bad slot"):
 * for the boot that found it failing a check (cache_mark_bad) and for
 * the scrub behind a boot from it (scrub.c), both through this.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/hex.h"
#include "lib/msg.h"
#include "cache/cache.h"
#include "cache/cacheint.h"

int cache_mark_bad_in(struct cache *c, const char *name, int slot, const char *sha256,
		      char *err, size_t errlen)
{
	char hex[65];
	struct cstate st;
	int dir, rc;

	rc = cache_image_state(c, name, true, &dir, &st, err, errlen);
	if (rc == 0 && (slot < 0 || slot > 1 || !st.slot[slot].used))
		rc = rb_errfmt(err, errlen, -ENOENT, "%s: slot %c holds no image", name,
			       cstate_slot_name(slot > 0));
	if (rc == 0 && sha256) {
		hex_encode(st.slot[slot].sha256, 32, hex);
		if (strcmp(hex, sha256))
			rc = rb_errfmt(err, errlen, -ESTALE, "%s: slot %c holds another image now",
				       name, cstate_slot_name(slot));
	}
	if (rc == 0 && !st.slot[slot].bad) {
		st.slot[slot].bad = true;
		st.slot[slot].bad_time = (int64_t)time(NULL);
		rc = cache_state_commit(dir, &st, err, errlen);
	}
	if (dir >= 0)
		(void)close(dir);             /* the lock goes with it */
	return rc;
}
