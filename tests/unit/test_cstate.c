// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache's state file (format/cstate.h): formatted and parsed back
 * byte for byte; every change to a valid text (a byte flipped anywhere,
 * a line cut, a byte added) refused; states that are not one refused by
 * the formatter. Texts are parsed from heap blocks of exactly their
 * length, so ASan reports a read past it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "exact.h"
#include "format/cstate.h"

static char err[256];

EXACT_PARSE(cstate_parse, struct cstate, 0)

static void sample(struct cstate *s)
{
	memset(s, 0, sizeof(*s));
	s->generation = 7;
	s->active = 1;
	s->slot[0].used = true;
	s->slot[0].size = 68194304;
	memset(s->slot[0].sha256, 0xab, 32);
	memset(s->slot[0].cindex_sha256, 0x01, 32);
	s->slot[1].used = true;
	s->slot[1].has_manifest = true;
	s->slot[1].size = 4096;
	memset(s->slot[1].sha256, 0xcd, 32);
	memset(s->slot[1].manifest_sha256, 0x02, 32);
	memset(s->slot[1].cindex_sha256, 0x03, 32);
	s->refreshed = 1718000000;
	s->bytes_network = 2355322;
	s->bytes_local = 65838982;
}

static void test_roundtrip(void)
{
	char text[CSTATE_MAX], again[CSTATE_MAX];
	struct cstate s, p;
	ssize_t n, m;

	sample(&s);
	n = cstate_format(&s, text, sizeof(text));
	CHECK(n > 0);
	CHECK(!strncmp(text, CSTATE_MAGIC "\ngeneration 7\nactive b\nslot a 68194304 abab", 52));
	CHECK_EQ_INT(parse_n(text, (size_t)n, &p), 0);
	CHECK_EQ_INT(p.generation, 7);
	CHECK_EQ_INT(p.active, 1);
	CHECK(!p.slot[0].has_manifest);
	CHECK(p.slot[1].has_manifest);
	CHECK_EQ_INT(p.bytes_local, 65838982);
	m = cstate_format(&p, again, sizeof(again));
	CHECK(m == n && !memcmp(text, again, (size_t)n));
	/* no slot, no active one: a state started over */
	memset(&s, 0, sizeof(s));
	s.active = -1;
	n = cstate_format(&s, text, sizeof(text));
	CHECK(n > 0);
	CHECK_EQ_INT(parse_n(text, (size_t)n, &p), 0);
	CHECK_EQ_INT(p.active, -1);
}

static void test_refused(void)
{
	char text[CSTATE_MAX], bad[CSTATE_MAX + 2];
	struct cstate s, p;
	ssize_t n;
	size_t i;
	int refused = 0;

	sample(&s);
	n = cstate_format(&s, text, sizeof(text));
	CHECK(n > 0);
	/* every byte flipped, in turn: refused */
	for (i = 0; i < (size_t)n; i++) {
		memcpy(bad, text, (size_t)n);
		bad[i] ^= 0x01;
		refused += parse_n(bad, (size_t)n, &p) == -EINVAL;
	}
	CHECK_EQ_INT(refused, n);
	/* every prefix: refused */
	refused = 0;
	for (i = 0; i < (size_t)n; i++)
		refused += parse_n(text, i, &p) == -EINVAL;
	CHECK_EQ_INT(refused, n);
	/* a byte added at the end */
	memcpy(bad, text, (size_t)n);
	bad[n] = '\n';
	CHECK_EQ_INT(parse_n(bad, (size_t)n + 1, &p), -EINVAL);
	/* the active slot holds no image: not a state */
	s.slot[1].used = false;
	CHECK_EQ_INT(cstate_format(&s, text, sizeof(text)), -EINVAL);
	/* a buffer too small */
	sample(&s);
	CHECK_EQ_INT(cstate_format(&s, text, 16), -ENOSPC);
}

/* A slot marked bad: its line after the slots, read back; never for a
 * slot that holds nothing, never twice. */
static void test_bad_mark(void)
{
	char text[CSTATE_MAX], again[CSTATE_MAX];
	struct cstate s, p;
	ssize_t n, m;

	sample(&s);
	s.slot[1].bad = true;
	s.slot[1].bad_time = 1718000500;
	n = cstate_format(&s, text, sizeof(text));
	CHECK(n > 0);
	CHECK(strstr(text, "\nbad b 1718000500\nrefresh 1718000000 ") != NULL);
	CHECK_EQ_INT(parse_n(text, (size_t)n, &p), 0);
	CHECK(p.slot[1].bad);
	CHECK(!p.slot[0].bad);
	CHECK_EQ_INT(p.slot[1].bad_time, 1718000500);
	m = cstate_format(&p, again, sizeof(again));
	CHECK(m == n && !memcmp(text, again, (size_t)n));
	/* both slots */
	s.slot[0].bad = true;
	n = cstate_format(&s, text, sizeof(text));
	CHECK(n > 0);
	CHECK_EQ_INT(parse_n(text, (size_t)n, &p), 0);
	CHECK(p.slot[0].bad && p.slot[1].bad);
	/* a mark on a slot that holds nothing */
	sample(&s);
	s.active = 1;
	s.slot[0].used = false;
	s.slot[0].bad = true;
	CHECK_EQ_INT(cstate_format(&s, text, sizeof(text)), -EINVAL);
}

int main(void)
{
	RUN(test_roundtrip);
	RUN(test_refused);
	RUN(test_bad_mark);
	return TAP_DONE();
}
