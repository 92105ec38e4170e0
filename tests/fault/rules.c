// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinj.so: FAULTINJ parsed into rules (the syntax is at the top of
 * faultinj.c), and which calls a rule selects.
 */
#include "faultinj.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rule rules[MAX_RULES];
unsigned nrules;
uint32_t path_rules;
static char conf[4096];                /* FAULTINJ, cut up by the parser */

const char *const op_label[OP_COUNT] = {
	"read", "pread", "write", "pwrite", "copy_file_range", "open", "close",
	"fsync", "fdatasync", "sync_file_range", "ioctl", "mount", "umount",
	"mmap", "stat",
};

static const struct {
	const char *name;
	enum op op;
} op_alias[] = {
	{ "pread64", OP_PREAD }, { "pwrite64", OP_PWRITE }, { "open64", OP_OPEN },
	{ "openat", OP_OPEN }, { "openat64", OP_OPEN }, { "umount2", OP_UMOUNT },
	{ "mmap64", OP_MMAP }, { "stat64", OP_STAT }, { "lstat", OP_STAT },
	{ "lstat64", OP_STAT },
};

/* ---- matching ---- */

/* '*' matches any string ('/' too), '?' any one character. */
static bool glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			back = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++back;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

bool path_match(const char *pat, const char *path)
{
	const char *t;

	if (glob(pat, path))
		return true;
	if (pat[0] == '/')
		return false;
	for (t = strchr(path, '/'); t; t = strchr(t + 1, '/'))
		if (glob(pat, t + 1))
			return true;
	return false;
}

static bool fd_match(const struct rule *r, unsigned i, int fd)
{
	if (fd < 0 || (r->fd >= 0 && fd != r->fd))
		return false;
	if (!r->path)
		return true;
	return fd_rules(fd) & (1u << i);
}

bool rule_match(const struct rule *r, unsigned i, const struct call *c)
{
	if (!(r->ops & OP_BIT(c->op)))
		return false;
	if (c->op == OP_OPEN || c->op == OP_MOUNT || c->op == OP_UMOUNT || c->op == OP_STAT)
		return r->fd < 0 && (!r->path || (c->path && path_match(r->path, c->path)));
	return fd_match(r, i, c->fd) || fd_match(r, i, c->fd2);
}

/* ---- FAULTINJ ---- */

static void bad(const char *rule, const char *what, const char *why)
{
	say("faultinj: FAULTINJ rule '");
	say(rule);
	say("': ");
	say(what);
	say(": ");
	say(why);
	say("\n");
	_exit(EXIT_CONF);
}

/* A number; SIZE takes K, M and G (powers of 1024). */
static bool parse_num(const char *v, bool size, uint64_t *out)
{
	unsigned long long x;
	char *end;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno)
		return false;
	if (size && *end) {
		const char *u = strchr("KMG", *end & ~0x20);
		int sh = u ? 10 * (int)(u - "KMG" + 1) : 0;

		if (!u || end[1] || x > (~0ULL >> sh))
			return false;
		x <<= sh;
		end++;
	}
	*out = x;
	return !*end;
}

static int parse_errno(const char *v)
{
	uint64_t n;
	int e;

	if (parse_num(v, false, &n))
		return n > 0 && n < 4096 ? (int)n : 0;
	for (e = 1; e < 4096; e++) {
		const char *name = strerrorname_np(e);

		if (name && !strcmp(name, v))
			return e;
	}
	return 0;
}

static int parse_signal(const char *v)
{
	uint64_t n;
	int s;

	if (parse_num(v, false, &n))
		return n > 0 && n < (uint64_t)NSIG ? (int)n : 0;
	if (!strncmp(v, "SIG", 3))
		v += 3;
	for (s = 1; s < NSIG; s++) {
		const char *name = sigabbrev_np(s);

		if (name && !strcmp(name, v))
			return s;
	}
	return 0;
}

static unsigned parse_ops(char *list, const char *rule)
{
	unsigned ops = 0;
	char *save = NULL, *t;

	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned o, before = ops;

		if (!strcmp(t, "*"))
			ops |= OPS_ALL;
		for (o = 0; o < OP_COUNT; o++)
			if (!strcmp(t, op_label[o]))
				ops |= OP_BIT(o);
		for (o = 0; o < sizeof(op_alias) / sizeof(op_alias[0]); o++)
			if (!strcmp(t, op_alias[o].name))
				ops |= OP_BIT(op_alias[o].op);
		if (ops == before && strcmp(t, "*"))
			bad(rule, t, "no such call");
	}
	if (!ops)
		bad(rule, "calls", "none given");
	return ops;
}

/* The action as the log shows it: "delay_ms:50,signal:TERM". */
static void add_action(struct rule *r, const char *key, const char *val)
{
	size_t n = strlen(r->action), room = sizeof(r->action) - n;

	snprintf(r->action + n, room, "%s%s%s%s", n ? "," : "", key, val ? ":" : "",
		 val ? val : "");
}

/* RULE: "calls:key=value:flag..." (cut up in place). */
static void parse_rule(char *s, struct rule *r)
{
	char text[256], *save = NULL, *f;
	const char *prog = NULL;
	uint64_t v;

	snprintf(text, sizeof(text), "%s", s);
	r->fd = -1;
	f = strtok_r(s, ":", &save);
	r->ops = parse_ops(f, text);
	while ((f = strtok_r(NULL, ":", &save))) {
		char *val = strchr(f, '=');

		if (val)
			*val++ = '\0';
		if (!strcmp(f, "stall") && !val) {
			r->stall = true;
			continue;
		}
		if (!strcmp(f, "hang") && !val) {
			r->hang = true;
			continue;
		}
		if (!strcmp(f, "cut") && !val) {
			r->cut = true;
			continue;
		}
		if (!val || !*val)
			bad(text, f, "expected key=value (or stall, hang, cut)");
		if (!strcmp(f, "path")) {
			r->path = val;
		} else if (!strcmp(f, "prog")) {
			prog = val;
		} else if (!strcmp(f, "fd")) {
			if (!parse_num(val, false, &v) || v > INT_MAX)
				bad(text, val, "not a fd number");
			r->fd = (int)v;
		} else if (!strcmp(f, "nth") || !strcmp(f, "times")) {
			if (!parse_num(val, false, &v) || !v)
				bad(text, val, "not a count (1 or more)");
			if (f[0] == 'n')
				r->nth = v;
			else
				r->times = v;
		} else if (!strcmp(f, "after")) {
			if (!parse_num(val, true, &v) || !v)
				bad(text, val, "not a size (1 or more, K, M, G)");
			r->after = v;
		} else if (!strcmp(f, "delay_ms")) {
			if (!parse_num(val, false, &v) || v > 86400000)
				bad(text, val, "not a delay in ms");
			r->delay_ms = (unsigned)v;
		} else if (!strcmp(f, "signal")) {
			if (!(r->sig = parse_signal(val)))
				bad(text, val, "no such signal");
		} else if (!strcmp(f, "rename")) {
			char *gt = strchr(val, '>');

			if (!gt || gt == val || !gt[1])
				bad(text, val, "expected OLD>NEW");
			*gt = '\0';
			r->ren_from = val;
			r->ren_to = gt + 1;
		} else if (!strcmp(f, "errno")) {
			if (!(r->err = parse_errno(val)))
				bad(text, val, "no such errno");
		} else {
			bad(text, f, "unknown key");
		}
	}
	if (r->after && (r->ops & ~OPS_IO))
		bad(text, "after", "only for read, pread, write, pwrite, copy_file_range");
	if (r->cut && r->ops != OP_BIT(OP_MMAP))
		bad(text, "cut", "only for mmap");
	if (r->delay_ms) {
		char ms[16];

		snprintf(ms, sizeof(ms), "%u", r->delay_ms);
		add_action(r, "delay_ms", ms);
	}
	if (r->sig)
		add_action(r, "signal", sigabbrev_np(r->sig));
	if (r->stall)
		add_action(r, "stall", NULL);
	if (r->hang)
		add_action(r, "hang", NULL);
	if (r->cut)
		add_action(r, "cut", NULL);
	if (r->ren_from)
		add_action(r, "rename", NULL);
	if (r->err)
		add_action(r, "errno", strerrorname_np(r->err));
	if (!r->action[0])
		add_action(r, "log", NULL);
	if (prog && !glob(prog, program_invocation_short_name))
		r->ops = 0;
}

/* FAULTINJ: rules separated by ';'. */
void rules_parse(const char *env)
{
	char *save = NULL, *s;

	if (strlen(env) >= sizeof(conf))
		bad("", "FAULTINJ", "too long");
	strcpy(conf, env);
	for (s = strtok_r(conf, ";", &save); s; s = strtok_r(NULL, ";", &save)) {
		s += strspn(s, " \t\n");
		if (!*s)
			continue;
		if (nrules == MAX_RULES)
			bad(s, "FAULTINJ", "too many rules");
		parse_rule(s, &rules[nrules]);
		if (rules[nrules].path)
			path_rules |= 1u << nrules;
		nrules++;
	}
}
