// SPDX-License-Identifier: GPL-2.0-or-later
/* Ranged reads of one file from a set of mirrors: see mirror.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg.h"
#include "lib/sha256.h"
#include "source/mirror.h"

static void drop_conn(struct http_conn *c)
{
	if (c) {
		(void)http_close(c);
		free(c);
	}
}

int mirror_set_open(struct mirror_set *set, const char *const *urls, unsigned n,
		    int timeout_ms, char *err, size_t errlen)
{
	char e[512];
	unsigned i, live = 0;
	int first_rc = 0;

	memset(set, 0, sizeof(*set));
	if (n == 0 || n > MIRROR_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "%u URLs: 1 to %d", n, MIRROR_MAX);
	if (pthread_mutex_init(&set->lock, NULL) != 0)
		return rb_errfmt(err, errlen, -ENOMEM, "%s", strerror(ENOMEM));
	set->n = n;
	for (i = 0; i < n; i++) {
		struct mirror *m = &set->m[i];
		int rc = http_init(&m->proto, urls[i], timeout_ms, e, sizeof(e));

		if (rc == 0)
			rc = http_get(&m->proto, true, false, e, sizeof(e));
		if (rc == 0 && live && m->proto.size != set->size)
			rc = rb_errfmt(e, sizeof(e), -ESTALE, "%s: %" PRIu64 " bytes, not %" PRIu64
				       " as %s", urls[i], m->proto.size, set->size, urls[0]);
		if (rc < 0) {
			(void)http_close(&m->proto);
			m->st.dropped = true;
			if (!first_rc) {
				first_rc = rc;
				rb_errfmt(err, errlen, rc, "%s", e);
			}
			if (n > 1)
				rb_warn("%s: mirror not used", e);
			continue;
		}
		if (!live++)
			set->size = m->proto.size;
		/* Its connection is the first one kept. */
		if (m->proto.fd >= 0 && m->proto.keep && (m->idle[0] = malloc(sizeof(m->proto)))) {
			*m->idle[0] = m->proto;
			m->n_idle = 1;
		} else {
			(void)http_close(&m->proto);
		}
		m->proto.fd = -1;
	}
	if (!live) {
		mirror_set_close(set);
		return first_rc;
	}
	return 0;
}

/* The least busy mirror not dropped nor tried, round robin among equals;
 * -1: none. Under the lock. */
static int pick(struct mirror_set *set, uint32_t tried)
{
	int best = -1;
	unsigned k;

	for (k = 0; k < set->n; k++) {
		unsigned i = (set->next + k) % set->n;
		const struct mirror *m = &set->m[i];

		if (m->st.dropped || (tried & (1u << i)))
			continue;
		if (best < 0 || m->busy < set->m[best].busy)
			best = (int)i;
	}
	return best;
}

/* Each piece of the n bytes at buf has its hash: the first that does
 * not, or -1. */
static int mismatch(const uint8_t *buf, size_t n, const struct mirror_piece *p, unsigned np)
{
	uint8_t md[32];
	size_t pos = 0;
	unsigned k;

	for (k = 0; k < np; k++) {
		size_t len = k + 1 == np ? n - pos : p[k].len;

		if (len > n - pos)
			return (int)k;
		sha256(buf + pos, len, md);
		if (memcmp(md, p[k].sha256, 32))
			return (int)k;
		pos += len;
	}
	return -1;
}

ssize_t mirror_fetch(struct mirror_set *set, void *buf, size_t len, uint64_t off,
		     const uint8_t want[32], int *served_by, char *err, size_t errlen)
{
	const struct mirror_piece p = { len, want };

	return mirror_fetch_run(set, buf, len, off, &p, want ? 1 : 0, served_by, err, errlen);
}

ssize_t mirror_fetch_run(struct mirror_set *set, void *buf, size_t len, uint64_t off,
			 const struct mirror_piece *p, unsigned np, int *served_by, char *err,
			 size_t errlen)
{
	uint32_t tried = 0;
	int rc = -ENOENT;

	if (err && errlen)
		snprintf(err, errlen, "bytes %" PRIu64 "+%zu: no mirror left", off, len);
	for (;;) {
		struct http_conn *c = NULL;
		struct mirror *m;
		char e[512];
		ssize_t n;
		int i, k;

		pthread_mutex_lock(&set->lock);
		i = pick(set, tried);
		if (i < 0) {
			/* Dropped by other reads: their reason is this one's. */
			if (!tried && set->last_rc) {
				rc = set->last_rc;
				if (err && errlen)
					snprintf(err, errlen, "%s", set->last_err);
			}
			pthread_mutex_unlock(&set->lock);
			return rc;
		}
		m = &set->m[i];
		m->busy++;
		set->next = (unsigned)i + 1;
		if (m->n_idle)
			c = m->idle[--m->n_idle];
		pthread_mutex_unlock(&set->lock);

		if (!c && (c = malloc(sizeof(*c)))) {
			*c = m->proto;
			c->fd = -1;
		}
		if (!c) {
			n = rb_errfmt(e, sizeof(e), -ENOMEM, "%s", strerror(ENOMEM));
		} else {
			n = http_pread(c, buf, len, off, e, sizeof(e));
			if (n >= 0 && (size_t)n != len && off + (uint64_t)n != set->size)
				n = rb_errfmt(e, sizeof(e), -EIO, "%s: %zd of %zu bytes at %" PRIu64,
					      c->url, n, len, off);
		}
		if (n >= 0 && (k = mismatch(buf, (size_t)n, p, np)) >= 0)
			n = rb_errfmt(e, sizeof(e), -EBADMSG, "%s: bytes %" PRIu64 "-%" PRIu64
				      " do not match their hash", c->url, off,
				      off + (uint64_t)n - 1);

		pthread_mutex_lock(&set->lock);
		m->busy--;
		if (n >= 0) {
			m->st.bytes += (uint64_t)n;
			m->st.chunks++;
			m->fails = 0;
			if (m->n_idle < MIRROR_IDLE && c->fd >= 0 && c->keep) {
				m->idle[m->n_idle++] = c;
				c = NULL;
			}
		} else {
			m->st.failures++;
			/* Another file, or ranges ignored: no read will do. */
			if (n == -ESTALE || n == -ERANGE || ++m->fails >= MIRROR_FAILS)
				m->st.dropped = true;
			set->last_rc = (int)n;
			snprintf(set->last_err, sizeof(set->last_err), "%s", e);
		}
		pthread_mutex_unlock(&set->lock);
		drop_conn(c);
		if (n >= 0) {
			if (served_by)
				*served_by = i;
			return n;
		}
		rc = (int)n;
		tried |= 1u << i;
		if (set->n > 1)
			rb_warn("%s", e);
		if (err && errlen)
			snprintf(err, errlen, "%s", e);
	}
}

const char *mirror_url(const struct mirror_set *set, unsigned i)
{
	return set->m[i].proto.url;
}

void mirror_stats(struct mirror_set *set, unsigned i, struct mirror_stat *st)
{
	pthread_mutex_lock(&set->lock);
	*st = set->m[i].st;
	pthread_mutex_unlock(&set->lock);
}

unsigned mirror_live(struct mirror_set *set)
{
	unsigned i, n = 0;

	pthread_mutex_lock(&set->lock);
	for (i = 0; i < set->n; i++)
		n += !set->m[i].st.dropped;
	pthread_mutex_unlock(&set->lock);
	return n;
}

unsigned mirror_revive(struct mirror_set *set)
{
	unsigned i, n = 0;

	pthread_mutex_lock(&set->lock);
	for (i = 0; i < set->n; i++)
		n += !set->m[i].st.dropped;
	for (i = 0; i < set->n && !n; i++) {
		struct mirror *m = &set->m[i];

		/* Only one that answered once, dropped for its failures. */
		if (m->proto.known && m->fails >= MIRROR_FAILS) {
			m->st.dropped = false;
			m->fails = 0;
		}
	}
	if (!n)
		for (i = 0; i < set->n; i++)
			n += !set->m[i].st.dropped;
	pthread_mutex_unlock(&set->lock);
	return n;
}

void mirror_stats_clear(struct mirror_set *set)
{
	unsigned i;

	pthread_mutex_lock(&set->lock);
	for (i = 0; i < set->n; i++) {
		set->m[i].st.bytes = 0;
		set->m[i].st.chunks = 0;
	}
	pthread_mutex_unlock(&set->lock);
}

void mirror_set_close(struct mirror_set *set)
{
	unsigned i;

	for (i = 0; i < set->n; i++) {
		struct mirror *m = &set->m[i];

		while (m->n_idle)
			drop_conn(m->idle[--m->n_idle]);
	}
	(void)pthread_mutex_destroy(&set->lock);
	set->n = 0;
}
