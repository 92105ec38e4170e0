// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Size expressions: a recursive-descent evaluator over doubles in MiB.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER [UNIT | '%'] | 'ram'
 *            | ('min' | 'max') '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * UNIT is size_unit()'s (lib/units.c). Beside its value each parse step
 * leaves in the parser whether it is a plain number (a factor) and where
 * that number stands: a plain number added to a size or set beside one
 * in min()/max(), or the whole result, is a size in MiB of the old
 * spelling, noted for a warning.
 *
 * A double holds every byte count below 2^53 exactly, far beyond any RAM.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/units.h"
#include "format/sizeexpr.h"

#define MAX_DEPTH 64
/* Results above 2^60 bytes are certainly typos. */
#define MAX_MIB (1024.0 * 1024.0 * 1024.0 * 1024.0)

struct parser {
	const char *s;
	size_t pos;
	double ram;              /* MiB */
	int depth;
	struct sizeexpr_error *err;
	int rc;
	bool bare;               /* the last value is a plain number ... */
	size_t bare_pos, bare_len; /* ... whose first one is here */
};

static void fail(struct parser *p, size_t pos, int rc, const char *what)
{
	if (p->rc)
		return;
	p->rc = rc;
	if (p->err) {
		p->err->column = (int)pos + 1;
		p->err->what = what;
	}
}

/* A number in an old spelling: the earliest is kept for the warning,
 * with its documented spelling (its digits and `unit`). */
static void note_old(struct parser *p, size_t pos, size_t len, size_t digits, const char *unit)
{
	struct sizeexpr_error *e = p->err;

	if (!e || (e->old_column && (size_t)e->old_column <= pos + 1))
		return;
	e->old_column = (int)pos + 1;
	snprintf(e->old, sizeof(e->old), "%.*s", (int)(len < 31 ? len : 31), p->s + pos);
	snprintf(e->canon, sizeof(e->canon), "%.*s%s", (int)(digits < 31 ? digits : 31),
		 p->s + pos, unit);
}

static void note_bare(struct parser *p, size_t pos, size_t len)
{
	if (strspn(p->s + pos, "0.") >= len)
		return;                  /* 0 needs no unit */
	note_old(p, pos, len, len, "MiB");
}

static void skip_space(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

static double parse_expr(struct parser *p);

static double parse_number(struct parser *p)
{
	const char *s = p->s;
	size_t start = p->pos, i = p->pos;
	double v = 0, frac = 0.1;
	bool digits = false, old;
	uint64_t mul;
	size_t n;

	while (isdigit((unsigned char)s[i])) {
		v = v * 10 + (s[i++] - '0');
		digits = true;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			v += (s[i++] - '0') * frac;
			frac /= 10;
			digits = true;
		}
	}
	if (!digits) {
		fail(p, start, -EINVAL, "expected a number");
		return 0;
	}
	p->bare = false;
	if (s[i] == '%') {
		v = v / 100 * p->ram;
		i++;
	} else if ((n = size_unit(s + i, &mul, &old)) > 0) {
		v = v * (double)mul / (1024.0 * 1024.0);
		if (old)
			note_old(p, start, i + n - start, i - start, size_unit_name(mul));
		i += n;
	} else {
		p->bare = true;
		p->bare_pos = start;
		p->bare_len = i - start;
	}
	if (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.') {
		fail(p, i, -EINVAL, "bad number suffix");
		return 0;
	}
	if (v > MAX_MIB) {
		fail(p, start, -ERANGE, "number too large");
		return 0;
	}
	p->pos = i;
	return v;
}

static bool expect(struct parser *p, char c, const char *what)
{
	skip_space(p);
	if (p->s[p->pos] != c) {
		fail(p, p->pos, -EINVAL, what);
		return false;
	}
	p->pos++;
	return true;
}

static double parse_call(struct parser *p, bool is_min)
{
	double v, w;
	bool sized, bare;
	size_t bpos, blen;

	if (!expect(p, '(', is_min ? "expected '(' after min" : "expected '(' after max"))
		return 0;
	v = parse_expr(p);
	sized = !p->bare;
	bare = p->bare;
	bpos = p->bare_pos;
	blen = p->bare_len;
	for (;;) {
		if (p->rc)
			return 0;
		skip_space(p);
		if (p->s[p->pos] == ')') {
			p->pos++;
			/* min(ram, 4096): the plain number is a size in MiB */
			if (bare && sized)
				note_bare(p, bpos, blen);
			p->bare = bare && !sized;
			p->bare_pos = bpos;
			p->bare_len = blen;
			return v;
		}
		if (!expect(p, ',', "expected ',' or ')'"))
			return 0;
		w = parse_expr(p);
		if (p->bare && !bare) {
			bare = true;
			bpos = p->bare_pos;
			blen = p->bare_len;
		}
		sized = sized || !p->bare;
		if (is_min ? w < v : w > v)
			v = w;
	}
}

static double parse_primary(struct parser *p)
{
	const char *s = p->s;
	size_t start;
	double v;

	skip_space(p);
	start = p->pos;
	if (isdigit((unsigned char)s[start]) || s[start] == '.')
		return parse_number(p);
	if (s[start] == '(') {
		p->pos++;
		v = parse_expr(p);
		if (!p->rc)
			expect(p, ')', "expected ')'");
		return v;
	}
	if (isalpha((unsigned char)s[start]) || s[start] == '_') {
		size_t n = 0;

		while (isalnum((unsigned char)s[start + n]) || s[start + n] == '_')
			n++;
		p->pos = start + n;
		if (n == 3 && !strncmp(s + start, "ram", 3)) {
			p->bare = false;
			return p->ram;
		}
		if (n == 3 && !strncmp(s + start, "min", 3))
			return parse_call(p, true);
		if (n == 3 && !strncmp(s + start, "max", 3))
			return parse_call(p, false);
		fail(p, start, -EINVAL, "unknown name");
		if (p->err)
			snprintf(p->err->name, sizeof(p->err->name), "%.*s",
				 (int)(n < 31 ? n : 31), s + start);
		return 0;
	}
	fail(p, start, -EINVAL, "expected expression");
	return 0;
}

static double parse_unary(struct parser *p)
{
	char c;
	double v;

	skip_space(p);
	c = p->s[p->pos];
	if (c != '-' && c != '+')
		return parse_primary(p);
	if (++p->depth > MAX_DEPTH) {
		fail(p, p->pos, -EINVAL, "expression nested too deeply");
		return 0;
	}
	p->pos++;
	v = parse_unary(p);
	p->depth--;
	return c == '-' ? -v : v;
}

/* The next token when it is one of the operators ops: true with *op
 * its offset, the parser past it. */
static bool take_op(struct parser *p, const char *ops, size_t *op)
{
	skip_space(p);
	*op = p->pos;
	if (!p->s[*op] || !strchr(ops, p->s[*op]))
		return false;
	p->pos++;
	return true;
}

/* v, the result of the operator at op, checked against the bound. */
static double bounded(struct parser *p, double v, size_t op)
{
	if (v > MAX_MIB || v < -MAX_MIB)
		fail(p, op, -ERANGE, "result too large");
	return v;
}

static double parse_term(struct parser *p)
{
	double v = parse_unary(p);
	bool bare = p->bare;
	size_t op, bpos = p->bare_pos, blen = p->bare_len;

	while (!p->rc && take_op(p, "*/", &op)) {
		double w = parse_unary(p);

		if (p->rc)
			break;
		/* size * factor, size / factor: a size; factors alone: a factor */
		bare = bare && p->bare;
		if (p->s[op] == '*') {
			v *= w;
		} else {
			if (w == 0) {
				fail(p, op, -EDOM, "division by zero");
				break;
			}
			v /= w;
		}
		v = bounded(p, v, op);
	}
	p->bare = bare;
	p->bare_pos = bpos;
	p->bare_len = blen;
	return v;
}

static double parse_expr(struct parser *p)
{
	double v;
	bool bare;
	size_t op, bpos, blen;

	if (++p->depth > MAX_DEPTH) {
		fail(p, p->pos, -EINVAL, "expression nested too deeply");
		return 0;
	}
	v = parse_term(p);
	bare = p->bare;
	bpos = p->bare_pos;
	blen = p->bare_len;
	while (!p->rc && take_op(p, "+-", &op)) {
		double w = parse_term(p);

		/* ram - 512: the plain number is a size in MiB */
		if (bare && !p->bare)
			note_bare(p, bpos, blen);
		else if (!bare && p->bare)
			note_bare(p, p->bare_pos, p->bare_len);
		bare = bare && p->bare;
		v = bounded(p, p->s[op] == '+' ? v + w : v - w, op);
	}
	p->bare = bare;
	p->bare_pos = bpos;
	p->bare_len = blen;
	p->depth--;
	return v;
}

int sizeexpr_eval(const char *expr, uint64_t ram_bytes, uint64_t *out,
		  struct sizeexpr_error *err)
{
	struct parser p = {
		.s = expr,
		.ram = (double)ram_bytes / (1024.0 * 1024.0),
		.err = err,
	};
	double v;

	if (err)
		memset(err, 0, sizeof(*err));
	v = parse_expr(&p);
	if (!p.rc) {
		skip_space(&p);
		if (p.s[p.pos] == ')')
			fail(&p, p.pos, -EINVAL, "unbalanced ')'");
		else if (p.s[p.pos])
			fail(&p, p.pos, -EINVAL, "expected an operator");
	}
	if (!p.rc && !(v >= -MAX_MIB && v <= MAX_MIB))
		fail(&p, 0, -ERANGE, "result too large");
	if (!p.rc && v < 0)
		fail(&p, 0, -EDOM, "result is negative");
	if (p.rc)
		return p.rc;
	if (p.bare)
		note_bare(&p, p.bare_pos, p.bare_len);
	*out = (uint64_t)(v * 1024.0 * 1024.0);
	return 0;
}
