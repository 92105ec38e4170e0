// SPDX-License-Identifier: GPL-2.0-or-later
/* The verification policy: see policy.h. */
#include <stdio.h>
#include <string.h>

#include "trust/policy.h"
#include "trust/sign.h"

static enum run_err read_manifest(const struct trust_policy *p, const struct trust_want *w,
				  char *err, size_t errlen)
{
	struct sign_who who;
	char why[256];
	int rc;

	if (p->text) {
		/* The signature, then the parse, of these very bytes. */
		memset(w->man, 0, sizeof(*w->man));
		rc = p->signed_only ? sign_check(p->text, p->text_len, p->keydir, &who, why,
						 sizeof(why)) : 0;
		if (rc == 0)
			rc = manifest_parse(p->text, p->text_len, w->man, why, sizeof(why));
		if (rc == 0 && !p->chunks)
			manifest_free(w->man);
		if (rc == 0 && p->signed_only)
			snprintf(w->signed_by, w->signed_by_len, "%s %s", who.name, who.keyid);
	} else if (!p->signed_only) {
		rc = (p->chunks ? manifest_load_chunks : manifest_load)(p->manifest, w->man, why,
									sizeof(why));
	} else if ((rc = sign_manifest_load(p->manifest, p->keydir, w->man, &who, why,
					    sizeof(why))) == 0) {
		/* The whole-image hash is what a copy is checked against;
		 * the chunk hashes only when asked for. */
		if (!p->chunks)
			manifest_free(w->man);
		snprintf(w->signed_by, w->signed_by_len, "%s %s", who.name, who.keyid);
	}
	if (w->read_rc)
		*w->read_rc = rc;
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", p->manifest, why);
		return p->signed_only ? RUN_SIGNATURE : RUN_MANIFEST;
	}
	return RUN_OK;
}

enum run_err trust_policy_read(const struct trust_policy *p, const struct trust_want *w,
			       char *err, size_t errlen)
{
	enum run_err e;

	w->sha256[0] = '\0';
	if (p->sha256 && sha256_hex_parse(p->sha256, w->sha256) < 0) {
		snprintf(err, errlen, "--sha256: need 64 hex digits");
		return RUN_USAGE;
	}
	if (!p->manifest)
		return RUN_OK;
	if ((e = read_manifest(p, w, err, errlen)) != RUN_OK)
		return e;
	*w->have_man = true;
	if (w->sha256[0] && strcmp(w->sha256, w->man->sha256)) {
		snprintf(err, errlen, "--sha256 and --manifest disagree");
		return RUN_USAGE;
	}
	memcpy(w->sha256, w->man->sha256, 65);
	return RUN_OK;
}
