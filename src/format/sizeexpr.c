// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Size expressions: a recursive-descent evaluator over doubles in MiB.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER [K|M|G|T [i][B] | '%'] | 'ram'
 *            | ('min' | 'max') '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * A double holds every byte count below 2^53 exactly, far beyond any RAM.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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
	bool digits = false;

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
	switch (s[i]) {
	case 'k': case 'K': v /= 1024; i++; goto unit;
	case 'm': case 'M': i++; goto unit;
	case 'g': case 'G': v *= 1024; i++; goto unit;
	case 't': case 'T': v *= 1024.0 * 1024; i++; goto unit;
	case '%': v = v / 100 * p->ram; i++; break;
	default: break;
	unit:
		if (s[i] == 'i' && s[i + 1] == 'B')
			i += 2;
		else if (s[i] == 'B')
			i++;
		break;
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

	if (!expect(p, '(', is_min ? "expected '(' after min" : "expected '(' after max"))
		return 0;
	v = parse_expr(p);
	for (;;) {
		if (p->rc)
			return 0;
		skip_space(p);
		if (p->s[p->pos] == ')') {
			p->pos++;
			return v;
		}
		if (!expect(p, ',', "expected ',' or ')'"))
			return 0;
		w = parse_expr(p);
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
		if (n == 3 && !strncmp(s + start, "ram", 3))
			return p->ram;
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

static double parse_term(struct parser *p)
{
	double v = parse_unary(p);

	while (!p->rc) {
		size_t op;
		double w;

		skip_space(p);
		op = p->pos;
		if (p->s[op] != '*' && p->s[op] != '/')
			break;
		p->pos++;
		w = parse_unary(p);
		if (p->rc)
			break;
		if (p->s[op] == '*') {
			v *= w;
		} else {
			if (w == 0) {
				fail(p, op, -EDOM, "division by zero");
				break;
			}
			v /= w;
		}
		if ((v > MAX_MIB || v < -MAX_MIB))
			fail(p, op, -ERANGE, "result too large");
	}
	return v;
}

static double parse_expr(struct parser *p)
{
	double v;

	if (++p->depth > MAX_DEPTH) {
		fail(p, p->pos, -EINVAL, "expression nested too deeply");
		return 0;
	}
	v = parse_term(p);
	while (!p->rc) {
		size_t op;
		double w;

		skip_space(p);
		op = p->pos;
		if (p->s[op] != '+' && p->s[op] != '-')
			break;
		p->pos++;
		w = parse_term(p);
		v = p->s[op] == '+' ? v + w : v - w;
		if ((v > MAX_MIB || v < -MAX_MIB))
			fail(p, op, -ERANGE, "result too large");
	}
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
	*out = (uint64_t)(v * 1024.0 * 1024.0);
	return 0;
}
