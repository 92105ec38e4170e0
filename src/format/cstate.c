// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache's state file: parse and format (cstate.h). The parser reads
 * the fields leniently, then formats them again and compares: the text
 * is accepted only when it is exactly the canonical text of what it says.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/sha256.h"
#include "format/cstate.h"

#define CHECK_LINE (6 + 64 + 1)          /* "check " SHA256 LF */

static size_t put_hex(char *p, const uint8_t h[32])
{
	hex_encode(h, 32, p);
	return 64;
}

ssize_t cstate_format(const struct cstate *s, char *buf, size_t len)
{
	char tmp[CSTATE_MAX], *p = tmp;
	uint8_t sum[32];
	int i;

	if (s->active > 1 || s->active < -1 || (s->active >= 0 && !s->slot[s->active].used))
		return -EINVAL;
	p += sprintf(p, "%s\ngeneration %" PRIu64 "\nactive %c\n", CSTATE_MAGIC, s->generation,
		     s->active < 0 ? '-' : cstate_slot_name(s->active));
	for (i = 0; i < 2; i++) {
		const struct cstate_slot *sl = &s->slot[i];

		if (!sl->used)
			continue;
		p += sprintf(p, "slot %c %" PRIu64 " ", cstate_slot_name(i), sl->size);
		p += put_hex(p, sl->sha256);
		*p++ = ' ';
		if (sl->has_manifest)
			p += put_hex(p, sl->manifest_sha256);
		else
			*p++ = '-';
		*p++ = ' ';
		p += put_hex(p, sl->cindex_sha256);
		*p++ = '\n';
	}
	for (i = 0; i < 2; i++) {
		if (!s->slot[i].bad)
			continue;
		if (!s->slot[i].used || s->slot[i].bad_time < 0)
			return -EINVAL;
		p += sprintf(p, "bad %c %" PRId64 "\n", cstate_slot_name(i), s->slot[i].bad_time);
	}
	if (s->refreshed < 0)
		return -EINVAL;
	p += sprintf(p, "refresh %" PRId64 " %" PRIu64 " %" PRIu64 "\n", s->refreshed,
		     s->bytes_network, s->bytes_local);
	sha256(tmp, (size_t)(p - tmp), sum);
	p += sprintf(p, "check ");
	p += put_hex(p, sum);
	*p++ = '\n';
	if ((size_t)(p - tmp) >= len)
		return -ENOSPC;
	memcpy(buf, tmp, (size_t)(p - tmp));
	buf[p - tmp] = '\0';
	return p - tmp;
}

/* One line of buf from *pos into line (NUL-terminated, LF dropped). */
static int next_line(const char *buf, size_t len, size_t *pos, char *line, size_t cap)
{
	const char *nl;
	size_t n;

	if (*pos >= len)
		return -ENODATA;
	nl = memchr(buf + *pos, '\n', len - *pos);
	if (!nl)
		return -EINVAL;
	n = (size_t)(nl - (buf + *pos));
	if (n >= cap || memchr(buf + *pos, '\0', n))
		return -EINVAL;
	memcpy(line, buf + *pos, n);
	line[n] = '\0';
	*pos += n + 1;
	return 0;
}

static int take_hex(const char *s, uint8_t out[32])
{
	return strlen(s) == 64 ? hex_decode(s, 32, out) : -EINVAL;
}

int cstate_parse(const char *buf, size_t len, struct cstate *s, char *err, size_t errlen)
{
	char line[256], a[80], b[80], c[80], canon[CSTATE_MAX], act;
	uint64_t size;
	size_t pos = 0;
	ssize_t n;
	int lineno = 1;

	memset(s, 0, sizeof(*s));
	s->active = -1;
	if (len >= CSTATE_MAX)
		return rb_errfmt(err, errlen, -EINVAL, "longer than %d bytes", CSTATE_MAX);
	if (next_line(buf, len, &pos, line, sizeof(line)) < 0 || strcmp(line, CSTATE_MAGIC))
		return rb_errfmt(err, errlen, -EINVAL, "line 1: not a ramboot cache state");
	lineno++;
	if (next_line(buf, len, &pos, line, sizeof(line)) < 0 ||
	    sscanf(line, "generation %" SCNu64, &s->generation) != 1)
		return rb_errfmt(err, errlen, -EINVAL, "line %d: need generation", lineno);
	lineno++;
	if (next_line(buf, len, &pos, line, sizeof(line)) < 0 ||
	    sscanf(line, "active %c", &act) != 1 || (act != 'a' && act != 'b' && act != '-'))
		return rb_errfmt(err, errlen, -EINVAL, "line %d: need active a, b or -", lineno);
	s->active = act == '-' ? -1 : act - 'a';
	for (;;) {
		char name;
		int i;

		lineno++;
		if (next_line(buf, len, &pos, line, sizeof(line)) < 0)
			return rb_errfmt(err, errlen, -EINVAL, "line %d: truncated", lineno);
		if (!strncmp(line, "bad ", 4)) {
			int64_t t;

			if (sscanf(line, "bad %c %" SCNd64, &name, &t) != 2 ||
			    (name != 'a' && name != 'b') || !s->slot[name - 'a'].used ||
			    s->slot[name - 'a'].bad)
				return rb_errfmt(err, errlen, -EINVAL, "line %d: bad mark of no slot",
						 lineno);
			s->slot[name - 'a'].bad = true;
			s->slot[name - 'a'].bad_time = t;
			continue;
		}
		if (strncmp(line, "slot ", 5))
			break;
		if (sscanf(line, "slot %c %" SCNu64 " %79s %79s %79s", &name, &size, a, b, c) != 5 ||
		    (name != 'a' && name != 'b'))
			return rb_errfmt(err, errlen, -EINVAL, "line %d: bad slot", lineno);
		i = name - 'a';
		if (s->slot[i].used)
			return rb_errfmt(err, errlen, -EINVAL, "line %d: slot %c twice", lineno, name);
		s->slot[i].used = true;
		s->slot[i].size = size;
		s->slot[i].has_manifest = strcmp(b, "-") != 0;
		if (take_hex(a, s->slot[i].sha256) < 0 || take_hex(c, s->slot[i].cindex_sha256) < 0 ||
		    (s->slot[i].has_manifest && take_hex(b, s->slot[i].manifest_sha256) < 0))
			return rb_errfmt(err, errlen, -EINVAL, "line %d: bad hash", lineno);
	}
	if (sscanf(line, "refresh %" SCNd64 " %" SCNu64 " %" SCNu64, &s->refreshed,
		   &s->bytes_network, &s->bytes_local) != 3)
		return rb_errfmt(err, errlen, -EINVAL, "line %d: need refresh", lineno);
	if (s->active >= 0 && !s->slot[s->active].used)
		return rb_errfmt(err, errlen, -EINVAL, "active slot %c holds no image", act);
	/* The canonical text of these fields, its check line included, must
	 * be the text read, byte for byte: a stray space, a leading zero, an
	 * upper-case hash, a changed byte anywhere (the check) all differ. */
	n = cstate_format(s, canon, sizeof(canon));
	if (n < 0 || (size_t)n != len || memcmp(canon, buf, len)) {
		if (n >= CHECK_LINE && len >= CHECK_LINE && len - CHECK_LINE == (size_t)n - CHECK_LINE &&
		    !memcmp(canon, buf, (size_t)n - CHECK_LINE))
			return rb_errfmt(err, errlen, -EINVAL, "check line does not match its text");
		return rb_errfmt(err, errlen, -EINVAL, "not in canonical form (or damaged)");
	}
	return 0;
}
