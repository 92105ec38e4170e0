// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A cache refresh over HTTP (refresh.h): the manifest from the first URL
 * that has it, and the chunks the active slot lacks by ranges from the
 * image's URL and its mirrors (source/mirror.h), runs of adjacent chunks
 * in one request, each chunk checked by its hash: bytes that do not
 * match are read from another mirror, and a mirror that keeps failing
 * or serves another file is dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg.h"
#include "lib/sha256.h"
#include "source/http.h"
#include "cache/refresh.h"

int refresh_http_manifest(struct refresh *f)
{
	const struct cache_refresh_opts *o = f->o;
	char e[512];
	unsigned k;
	int rc = http_fetch(f->manifest, o->timeout_ms, MANIFEST_HARD_MAX, &f->mtext, &f->mlen,
			    f->err, f->errlen);

	for (k = 0; rc < 0 && !o->manifest && k < o->n_mirrors; k++) {
		if ((size_t)snprintf(f->murl, sizeof(f->murl), "%s.manifest", o->mirrors[k]) >=
		    sizeof(f->murl))
			continue;
		rc = http_fetch(f->murl, o->timeout_ms, MANIFEST_HARD_MAX, &f->mtext, &f->mlen, e,
				sizeof(e));
	}
	return rc;
}

/* url's directory and name in out: 0, or -ENAMETOOLONG. */
static int beside(const char *url, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(url, '/');
	int rc = snprintf(out, len, "%.*s%s", slash ? (int)(slash - url + 1) : 0, url, name);

	return rc < 0 || (size_t)rc >= len ? -ENAMETOOLONG : 0;
}

int refresh_http_follow(struct refresh *f)
{
	if (!f->have_m || !f->m.image[0] || !source_is_url(f->manifest) ||
	    !strchr(f->manifest, '/'))
		return 0;
	if (beside(f->manifest, f->m.image, f->url, sizeof(f->url)) < 0)
		return rb_errfmt(f->err, f->errlen, -ENAMETOOLONG, "%s: the image it names: URL "
				 "too long", f->manifest);
	f->image = f->url;
	return 0;
}

int refresh_http_open(struct refresh *f)
{
	const struct cache_refresh_opts *o = f->o;
	char (*url)[sizeof(f->url)] = malloc(MIRROR_MAX * sizeof(*url));
	const char *urls[MIRROR_MAX];
	unsigned n = 0;
	int rc = 0;

	f->ms = malloc(sizeof(*f->ms));
	if (!url || !f->ms)
		rc = rb_errfmt(f->err, f->errlen, -ENOMEM, "out of memory");
	/* Each URL's file the manifest names, as refresh_http_follow()
	 * found the first's. */
	for (; rc == 0 && n <= o->n_mirrors && n < MIRROR_MAX; n++) {
		const char *u = n ? o->mirrors[n - 1] : o->image;

		urls[n] = u;
		if (f->image != f->url)
			continue;
		if (beside(u, f->m.image, url[n], sizeof(url[n])) < 0)
			rc = rb_errfmt(f->err, f->errlen, -ENAMETOOLONG, "%s: URL too long", u);
		urls[n] = url[n];
	}
	if (rc == 0)
		rc = mirror_set_open(f->ms, urls, n, o->timeout_ms, f->err, f->errlen);
	free(url);
	if (rc < 0) {
		free(f->ms);
		f->ms = NULL;
		return rc;
	}
	f->img.size = f->ms->size;
	return 0;
}

ssize_t refresh_http_read(struct refresh *f, const struct have *have, uint32_t nh, uint32_t i,
			  uint8_t *buf, uint8_t *run, uint64_t *run_off, uint64_t *run_len)
{
	const struct cindex_chunk *c = &f->new.chunk[i];
	struct mirror_piece p[RUN_CHUNKS];
	uint64_t len = c->len, at = c->off;
	unsigned np = 1, k;
	uint8_t md[32];
	ssize_t n;
	uint32_t j;

	if (c->off >= *run_off && c->off + c->len <= *run_off + *run_len)
		goto have;
	p[0] = (struct mirror_piece){ c->len, c->sha256 };
	for (j = i + 1; j < f->new.n && np < RUN_CHUNKS && len + f->new.chunk[j].len <= RUN_MAX &&
	     !refresh_find_have(have, nh, &f->new.chunk[j]); j++) {
		p[np++] = (struct mirror_piece){ f->new.chunk[j].len, f->new.chunk[j].sha256 };
		len += f->new.chunk[j].len;
	}
	n = mirror_fetch_run(f->ms, run, (size_t)len, c->off, p, np, NULL, f->err, f->errlen);
	*run_len = 0;
	if (n == -EBADMSG) {
		/* The last mirror's bytes are in run: the chunk that differs. */
		for (k = 0; k < np; at += p[k++].len) {
			sha256(run + (at - c->off), p[k].len, md);
			if (memcmp(md, p[k].sha256, 32))
				break;
		}
		if (k == np)
			at = c->off;
		return rb_errfmt(f->err, f->errlen, -EINVAL, "%s: the chunk at %" PRIu64 " does "
				 "not match the index (not the indexed image, or it changed)",
				 f->image, at);
	}
	if (n < 0)
		return n;
	*run_off = c->off;
	*run_len = (uint64_t)n;
	if (c->len > *run_len)
		return rb_errfmt(f->err, f->errlen, -EIO, "%s: at %" PRIu64 ": shorter than its index",
				 f->image, c->off);
have:
	memcpy(buf, run + (c->off - *run_off), c->len);
	return c->len;
}

void refresh_http_close(struct refresh *f)
{
	struct mirror_stat st;
	unsigned k;

	if (!f->ms)
		return;
	for (k = 0; f->ms->n > 1 && k < f->ms->n; k++) {
		mirror_stats(f->ms, k, &st);
		rb_info("%s: %" PRIu64 " bytes in %" PRIu32 " runs, %" PRIu32 " failed%s",
			mirror_url(f->ms, k), st.bytes, st.chunks, st.failures,
			st.dropped ? ", dropped" : "");
	}
	mirror_set_close(f->ms);
	free(f->ms);
	f->ms = NULL;
}
