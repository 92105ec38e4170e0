// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Settings of `ramboot boot` from the kernel command line, the
 * environment and /etc/ramboot.conf. Pure functions over strings; see
 * cmdline.h for the precedence rules.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/units.h"
#include "boot/cmdline.h"
#include "codec/codec.h"
#include "format/http.h"
#include "format/manifest.h"
#include "udpcast/udpcast.h"

static const char *const mode_names[] = { "off", "prefetch", "ram", "lazy", "cache" };
static const char *const target_names[] = { "tmpfs", "zram" };

const char *boot_mode_name(enum boot_mode m)
{
	return (unsigned)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

const char *boot_target_name(enum boot_target t)
{
	return (unsigned)t < ARRAY_SIZE(target_names) ? target_names[t] : "?";
}

static const char *const verify_names[] = {
	[VERIFY_AUTO] = "auto", [VERIFY_SIGNED] = "signed",
	[VERIFY_HASH] = "hash", [VERIFY_OFF] = "off",
};

const char *boot_verify_name(enum boot_verify v)
{
	return (unsigned)v < ARRAY_SIZE(verify_names) ? verify_names[v] : "?";
}

static const char *const source_names[] = {
	[SOURCE_NETWORK] = "network", [SOURCE_UDPCAST] = "udpcast",
};

const char *boot_source_name(enum boot_source src)
{
	return (unsigned)src < ARRAY_SIZE(source_names) ? source_names[src] : "?";
}

void settings_init(struct boot_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->mode = BOOT_OFF;
	s->target = TARGET_TMPFS;
	s->swap = SWAP_OFF;
	snprintf(s->decompress, sizeof(s->decompress), "auto");
	s->mode_source = SRC_DEFAULT;
}

const char *const settings_keys[SET_NKEYS] = {
	"", "image", "decompress", "target", "minfree", "sha256", "manifest",
	"profile", "verify", "verity", "source", "udpcast", "cache", "cache.offline", "timeout", "swap",
	"swap.size", "swap.algorithm", "swap.priority", "debug", "swap.net", "url",
};

const char *set_source_name(enum set_source src)
{
	static const char *const names[] = {
		[SRC_DEFAULT] = "default", [SRC_CONF] = "ramboot.conf",
		[SRC_ENV] = "environment (ltsp.conf)", [SRC_CMDLINE] = "command line",
	};

	return (size_t)src < ARRAY_SIZE(names) ? names[src] : "?";
}

static void add_warn(struct boot_settings *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warn(struct boot_settings *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nwarn < SET_WARN_MAX) {
		va_start(ap, fmt);
		vsnprintf(s->warn[s->nwarn], SET_WARN_LEN, fmt, ap);
		va_end(ap);
	}
	s->nwarn++;
}

/* Copy val into a fixed field; a value that does not fit is refused
 * rather than cut (a cut path names another file). */
static int set_str(char *dst, size_t len, const char *val)
{
	size_t n = strlen(val);

	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dst, val, n + 1);
	return 0;
}

/* A setting's text into its field (an array), or -EINVAL when the value
 * did not pass its check (ok false). */
#define SET_STR(field, val) set_str((field), sizeof(field), (val))
#define SET_IF(ok, field, val) ((ok) ? SET_STR(field, val) : -EINVAL)

static int pick(const char *val, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(val, names[i]))
			return (int)i;
	return -1;
}

static int parse_bool(const char *val)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };

	if (!val || !*val)
		return 1;            /* a bare switch turns it on */
	if (pick(val, yes, ARRAY_SIZE(yes)) >= 0)
		return 1;
	if (pick(val, no, ARRAY_SIZE(no)) >= 0)
		return 0;
	return -1;
}

/* An age (ramboot.cache.offline=): a duration of ten years at most, in
 * whole seconds ("7d", "36h", "3600"); "0", "off", "no": none. */
static int parse_age(const char *v, int64_t *out)
{
	double d;

	if (duration_parse(v, 10.0 * 366 * 86400, &d) < 0)
		return -EINVAL;
	*out = (int64_t)d;
	return 0;
}

static bool valid_codec(const char *val)
{
	return !strcmp(val, "auto") || codec_canonical(val);
}

/* Algorithm lists and size expressions ("min(ram / 2, 4G)") are
 * checked by swap_setup(); here only that they are printable. */
static bool plain_token(const char *val)
{
	const unsigned char *p;

	if (!*val)
		return false;
	for (p = (const unsigned char *)val; *p; p++)
		if (!isprint(*p))
			return false;
	return true;
}

/*
 * ramboot.url=URL[,URL...]: at most SET_URL_MAX http:// URLs, each one
 * parsed (an empty item, another scheme, a URL the client cannot take:
 * the whole value is refused, and the earlier one kept). "none", "off":
 * no URL. The list is split once, here, into url_buf.
 */
static int set_url(struct boot_settings *s, const char *v)
{
	char buf[SET_PATH_MAX], err[128];
	uint16_t off[SET_URL_MAX];
	struct http_url u;
	size_t at = 0, len = strlen(v);
	int n = 0, rc = 0;

	if (!strcmp(v, "none") || !strcmp(v, "off")) {
		s->url[0] = s->url_buf[0] = '\0';
		s->nurl = 0;
		return 0;
	}
	if (!*v)
		return -EINVAL;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, v, len + 1);
	while (rc == 0) {
		size_t n1 = strcspn(buf + at, ",");

		buf[at + n1] = '\0';
		if (n == SET_URL_MAX || n1 == 0 ||
		    http_url_parse(buf + at, &u, err, sizeof(err)) < 0)
			rc = -EINVAL;
		else
			off[n++] = (uint16_t)at;
		if (at + n1 >= len)
			break;
		at += n1 + 1;
		if (at >= len)
			rc = -EINVAL;   /* a comma at the end: an empty item */
	}
	if (rc < 0)
		return rc;
	memcpy(s->url, v, len + 1);
	memcpy(s->url_buf, buf, len + 1);
	memcpy(s->url_off, off, sizeof(off[0]) * (size_t)n);
	s->nurl = n;
	return 0;
}

const char *settings_url(const struct boot_settings *s, int i)
{
	return i >= 0 && i < s->nurl ? s->url_buf + s->url_off[i] : NULL;
}

static int set_one(struct boot_settings *s, const char *key, const char *val,
		   const char *origin, enum set_source src);

int settings_set(struct boot_settings *s, const char *key, const char *val,
		 const char *origin, enum set_source src)
{
	int rc = set_one(s, key, val, origin, src);
	size_t i;

	if (rc < 0)
		return rc;
	for (i = 0; i < SET_NKEYS; i++) {
		if (strcmp(key, settings_keys[i]))
			continue;
		s->key_src[i] = src;
		snprintf(s->key_val[i], sizeof(s->key_val[i]), "%s",
			 val ? val : (i == 0 ? "ram" : ""));
		break;
	}
	return 0;
}

/* ramboot.sha256=, .manifest=, .verify=, .verity=: each fails closed (a
 * value that does not parse marks the settings so that no copy boots).
 * 0, -EINVAL (a bad value), -ENAMETOOLONG, -ENOENT (not one of these). */
static int set_verify(struct boot_settings *s, const char *key, const char *val)
{
	const char *v = val ? val : "";
	int i, rc = 0;

	if (!strcmp(key, "sha256")) {
		/* Verification fails closed: a hash that does not parse is
		 * not "no hash"; it marks the settings so that a RAM copy is
		 * refused. A later good value (higher precedence) clears it. */
		if (!strcmp(v, "none")) {
			s->sha256[0] = '\0';
			s->verify_bad = false;
			return 0;
		}
		if (sha256_hex_parse(v, s->sha256) < 0) {
			s->verify_bad = true;
			return -EINVAL;
		}
		s->verify_bad = false;
	} else if (!strcmp(key, "manifest")) {
		if (!*v) {
			s->verify_bad = true;
			return -EINVAL;
		}
		rc = SET_STR(s->manifest, v);
		s->verify_bad = rc < 0;
	} else if (!strcmp(key, "verify")) {
		size_t k;

		/* Fails closed like the hash: a policy that does not parse
		 * is not "no policy". */
		s->verify_policy_bad = true;
		for (k = 0; k < ARRAY_SIZE(verify_names); k++)
			if (!strcmp(v, verify_names[k])) {
				s->verify = (enum boot_verify)k;
				s->verify_policy_bad = false;
			}
		if (s->verify_policy_bad)
			return -EINVAL;
	} else if (!strcmp(key, "verity")) {
		/* Fails closed: a value that does not parse asks for it. */
		i = parse_bool(val);
		s->verity_bad = i < 0;
		s->verity = i != 0;
		if (i < 0)
			return -EINVAL;
	} else {
		return -ENOENT;
	}
	return rc;
}

/* ramboot.swap=, .swap.size=, .swap.algorithm=, .swap.priority=, .swap.net=: as
 * set_verify(). */
static int set_swap(struct boot_settings *s, const char *key, const char *val)
{
	const char *v = val ? val : "";
	int rc = 0;

	if (!strcmp(key, "swap")) {
		if (!val || !strcmp(v, "zram"))
			s->swap = SWAP_ZRAM;
		else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "none"))
			s->swap = SWAP_OFF;
		else
			return -EINVAL;
	} else if (!strcmp(key, "swap.size")) {
		rc = SET_IF(plain_token(v), s->swap_size, v);
	} else if (!strcmp(key, "swap.algorithm")) {
		rc = SET_IF(plain_token(v), s->swap_algorithm, v);
	} else if (!strcmp(key, "swap.net")) {
		/* The network tier needs zram swap: naming a server asks for
		 * both; "off" or "none" names none. */
		if (!strcmp(v, "off") || !strcmp(v, "none")) {
			s->swap_net[0] = '\0';
			return 0;
		}
		rc = SET_IF(*v && plain_token(v), s->swap_net, v);
		if (rc == 0)
			s->swap = SWAP_ZRAM;
	} else if (!strcmp(key, "swap.priority")) {
		char *end;
		long n;

		errno = 0;
		n = strtol(v, &end, 10);
		/* swapon(2): SWAP_FLAG_PRIO_MASK is 0x7fff; -1 means "kernel". */
		if (!*v || *end || errno || n < -1 || n > 32767)
			return -EINVAL;
		s->swap_priority = (int)n;
		s->swap_priority_set = true;
	} else {
		return -ENOENT;
	}
	return rc;
}

/* The mode and what it reads and writes: ramboot=, .image=, .decompress=,
 * .target=, .profile=, .source=, .url=, .timeout=, .debug=. As
 * set_verify(). */
static int set_mode(struct boot_settings *s, const char *key, const char *val,
		    enum set_source src)
{
	const char *v = val ? val : "";
	int i, rc = 0;

	if (!strcmp(key, "")) {
		/* A bare "ramboot" means "ramboot=ram": asking for it by name. */
		i = val ? pick(v, mode_names, ARRAY_SIZE(mode_names)) : BOOT_RAM;
		if (i < 0)
			return -EINVAL;
		s->mode = (enum boot_mode)i;
		s->mode_source = src;
	} else if (!strcmp(key, "image")) {
		rc = SET_IF(*v, s->image, v);
	} else if (!strcmp(key, "decompress")) {
		rc = SET_IF(valid_codec(v), s->decompress, v);
	} else if (!strcmp(key, "target")) {
		if ((i = pick(v, target_names, ARRAY_SIZE(target_names))) < 0)
			return -EINVAL;
		s->target = (enum boot_target)i;
	} else if (!strcmp(key, "profile")) {
		/* record | none | off | PATH of the profile to use */
		if (!strcmp(v, "record")) {
			s->profile_record = true;
		} else if (!strcmp(v, "off") || !strcmp(v, "none")) {
			s->profile_record = false;
			rc = SET_STR(s->profile, "none");
		} else if (*v) {
			rc = SET_STR(s->profile, v);
		} else {
			return -EINVAL;
		}
	} else if (!strcmp(key, "source")) {
		if ((i = pick(v, source_names, ARRAY_SIZE(source_names))) < 0)
			return -EINVAL;
		s->source = (enum boot_source)i;
	} else if (!strcmp(key, "cache")) {
		/* A device by LABEL=, UUID=, PARTLABEL= or its path; "none"
		 * or "off": no cache. Nothing else is ever opened. */
		if (!strcmp(v, "none") || !strcmp(v, "off"))
			s->cache[0] = '\0';
		else if (v[0] == '/' || ((!strncmp(v, "LABEL=", 6) && v[6]) ||
					 (!strncmp(v, "UUID=", 5) && v[5]) ||
					 (!strncmp(v, "PARTLABEL=", 10) && v[10])))
			rc = SET_STR(s->cache, v);
		else
			return -EINVAL;
	} else if (!strcmp(key, "url")) {
		rc = set_url(s, v);
	} else if (!strcmp(key, "cache.offline")) {
		if (parse_age(v, &s->cache_offline) < 0)
			return -EINVAL;
	} else if (!strcmp(key, "timeout")) {
		double t;

		if (parse_seconds(v, &t) < 0)
			return -EINVAL;
		s->timeout = t;
		s->timeout_set = true;
	} else if (!strcmp(key, "debug")) {
		i = parse_bool(val);
		if (i < 0)
			return -EINVAL;
		s->debug = i;
	} else {
		return -ENOENT;
	}
	return rc;
}

static int set_one(struct boot_settings *s, const char *key, const char *val,
		   const char *origin, enum set_source src)
{
	const char *v = val ? val : "";
	int rc = set_verify(s, key, val);

	if (rc == -ENOENT)
		rc = set_swap(s, key, val);
	if (rc == -ENOENT)
		rc = set_mode(s, key, val, src);
	if (rc == -ENOENT && !strcmp(key, "minfree")) {
		char note[160];
		uint64_t n;

		rc = size_parse(v, UNIT_BYTES, &n, note, sizeof(note));
		if (rc < 0) {
			add_warn(s, "%s: %s, ignored", origin, note);
			return -EINVAL;
		}
		if (rc > 0)
			add_warn(s, "%s%s: deprecated spelling, write %s", origin, v, note);
		rc = 0;
		s->minfree = n;
		s->minfree_set = true;
	}
	if (rc == -ENOENT && !strcmp(key, "udpcast")) {
		struct udpcast_opts uo;
		char err[128];

		if (udpcast_parse(v, &uo, err, sizeof(err)) < 0) {
			add_warn(s, "%s: %s, ignored", origin, err);
			return -EINVAL;
		}
		rc = SET_STR(s->udpcast, v);
	}
	if (rc == -ENOENT) {
		add_warn(s, "%s: unknown setting, ignored", origin);
		return -ENOENT;
	}
	if (rc == -EINVAL) {
		add_warn(s, "%s: invalid value '%.64s', ignored", origin, v);
		return -EINVAL;
	}
	if (rc < 0) {
		add_warn(s, "%s: value too long, ignored", origin);
		return -EINVAL;
	}
	return 0;
}

bool cmdline_next(const char **pp, char *name, size_t nlen, char *val,
		  size_t vlen, bool *has_val)
{
	const char *p = *pp, *tok, *eq = NULL, *vs, *ve;
	size_t i, n;
	bool in_quote = false, quoted = false;

	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p) {
		*pp = p;
		return false;
	}
	/* lib/cmdline.c next_arg(): a leading quote opens a quoted
	 * parameter; spaces inside quotes do not split; the value loses a
	 * leading quote and its matching trailing one. */
	if (*p == '"') {
		p++;
		in_quote = quoted = true;
	}
	tok = p;
	for (i = 0; p[i]; i++) {
		if (isspace((unsigned char)p[i]) && !in_quote)
			break;
		if (!eq && p[i] == '=')
			eq = p + i;
		if (p[i] == '"')
			in_quote = !in_quote;
	}
	ve = p + i;                          /* end of the token */
	*pp = *ve ? ve + 1 : ve;

	n = (size_t)((eq ? eq : ve) - tok);
	if (!eq && quoted && n > 0 && tok[n - 1] == '"')
		n--;
	if (n >= nlen)
		n = nlen - 1;
	memcpy(name, tok, n);
	name[n] = '\0';

	*has_val = eq != NULL;
	val[0] = '\0';
	if (!eq)
		return true;
	vs = eq + 1;
	if (vs < ve && *vs == '"') {
		vs++;
		if (ve > vs && ve[-1] == '"')
			ve--;
	} else if (quoted && ve > vs && ve[-1] == '"') {
		ve--;
	}
	n = (size_t)(ve - vs);
	if (n >= vlen)
		n = vlen - 1;
	memcpy(val, vs, n);
	val[n] = '\0';
	return true;
}

int ltsp_image_first(const char *list, char *out, size_t len)
{
	size_t n = strcspn(list, ",");

	if (n == 0)
		return -EINVAL;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, list, n);
	out[n] = '\0';
	return 0;
}

void settings_parse_cmdline(struct boot_settings *s, const char *cmdline)
{
	char name[128], origin[160];
	char *val;
	const char *p = cmdline;
	bool has_val;

	val = malloc(SET_PATH_MAX + 64);
	if (!val) {
		add_warn(s, "kernel command line: out of memory, ignored");
		return;
	}
	while (cmdline_next(&p, name, sizeof(name), val, SET_PATH_MAX + 64, &has_val)) {
		if (!strcmp(name, "--"))
			break;  /* the rest belongs to init */
		if (!strcmp(name, "quiet") && !has_val) {
			s->quiet = true;
			continue;
		}
		if (!strcmp(name, "ltsp.image")) {
			if (has_val && SET_STR(s->ltsp_image, val) < 0)
				add_warn(s, "ltsp.image=: value too long, ignored");
			continue;
		}
		if (strcmp(name, "ramboot") && strncmp(name, "ramboot.", 8))
			continue;
		snprintf(origin, sizeof(origin), "%s%s", name, has_val ? "=" : "");
		if (has_val && strlen(val) >= SET_PATH_MAX) {
			add_warn(s, "%s: value too long, ignored", origin);
			continue;
		}
		settings_set(s, name[7] ? name + 8 : "", has_val ? val : NULL,
			     origin, SRC_CMDLINE);
	}
	free(val);
}

/* RAMBOOT_ROOT (the root prefix) and RAMBOOT_BIN (the hook's binary)
 * share the prefix but are not settings: skipped wherever they appear. */
static bool not_a_setting(const char *name, size_t n)
{
	/* Not the boot's: the tools' own (the root prefix, the binary the
	 * tests run, the fixtures' write log) and the server's, which ltsp.conf
	 * may set in [common] beside the clients' (`ltsp image`'s publish,
	 * `ltsp ipxe`'s initrds: initrd-hooks/ltsp/). */
	static const char *const prefix[] = { "RAMBOOT_PUBLISH_", "RAMBOOT_IPXE_", "RAMBOOT_LTSP_" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefix); i++)
		if (n > strlen(prefix[i]) && !strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return (n == 12 && !strncmp(name, "RAMBOOT_ROOT", 12)) ||
	       (n == 11 && !strncmp(name, "RAMBOOT_BIN", 11)) ||
	       (n == 17 && !strncmp(name, "RAMBOOT_WRITE_LOG", 17));
}

/* "RAMBOOT_SWAP_SIZE" -> "swap.size"; "RAMBOOT" -> "". */
static int env_key(const char *var, size_t n, char *key, size_t klen)
{
	size_t i;

	if (n == 7)
		return (key[0] = '\0'), 0;
	if (n < 9 || var[7] != '_' || n - 8 >= klen)
		return -EINVAL;
	for (i = 8; i < n; i++)
		key[i - 8] = var[i] == '_' ? '.' : (char)tolower((unsigned char)var[i]);
	key[n - 8] = '\0';
	return 0;
}

void settings_parse_env(struct boot_settings *s, char *const *envp)
{
	char key[64], origin[80];

	for (; envp && *envp; envp++) {
		const char *e = *envp, *eq = strchr(e, '=');
		size_t n;

		if (!eq || strncmp(e, "RAMBOOT", 7))
			continue;
		n = (size_t)(eq - e);
		if (n != 7 && e[7] != '_')
			continue;      /* RAMBOOTX=...: not ours */
		snprintf(origin, sizeof(origin), "%.*s=", (int)(n < 60 ? n : 60), e);
		if (not_a_setting(e, n))
			continue;
		if (env_key(e, n, key, sizeof(key)) < 0) {
			add_warn(s, "%s: unknown setting, ignored", origin);
			continue;
		}
		if (!eq[1])
			continue;      /* VAR= : unset, as in the shell */
		settings_set(s, key, eq + 1, origin, SRC_ENV);
	}
}

/* One shell-like word: unquoted text, '...' and "..." (with \" \\ \$
 * \` escapes) concatenated; stops at unquoted whitespace or '#'.
 * Returns 0, or -EINVAL for an unterminated quote. */
static int conf_word(const char *p, const char *end, char *out, size_t olen,
		     const char **rest)
{
	size_t o = 0;

	while (p < end && !isspace((unsigned char)*p) && *p != '#') {
		char c = *p++;

		if (c == '\'' || c == '"') {
			/* to the closing quote; escapes only between "" */
			while (p < end && *p != c) {
				if (c == '"' && *p == '\\' && p + 1 < end && strchr("\"\\$`", p[1]))
					p++;
				if (o + 1 < olen)
					out[o++] = *p;
				p++;
			}
			if (p >= end)
				return -EINVAL;
			p++;
		} else if (c == '\\' && p < end) {
			if (o + 1 < olen)
				out[o++] = *p;
			p++;
		} else if (o + 1 < olen) {
			out[o++] = c;
		}
	}
	out[o] = '\0';
	*rest = p;
	return 0;
}

void settings_parse_conf(struct boot_settings *s, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	char key[64], origin[96], *val;
	int line = 0;

	val = malloc(SET_PATH_MAX + 64);
	if (!val) {
		add_warn(s, "ramboot.conf: out of memory, ignored");
		return;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q, *name;
		size_t n;

		if (!eol)
			eol = end;
		line++;
		q = p;
		p = eol < end ? eol + 1 : end;
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (q == eol || *q == '#')
			continue;
		if ((size_t)(eol - q) > 7 && !strncmp(q, "export", 6) &&
		    (q[6] == ' ' || q[6] == '\t')) {
			q += 7;
			while (q < eol && isspace((unsigned char)*q))
				q++;
		}
		name = q;
		while (q < eol && (isalnum((unsigned char)*q) || *q == '_'))
			q++;
		n = (size_t)(q - name);
		if (n == 0 || q >= eol || *q != '=') {
			add_warn(s, "ramboot.conf: line %d: expected KEY=value, ignored", line);
			continue;
		}
		snprintf(origin, sizeof(origin), "ramboot.conf: line %d: %.*s=", line,
			 (int)(n < 48 ? n : 48), name);
		if (conf_word(q + 1, eol, val, SET_PATH_MAX + 64, &q) < 0) {
			add_warn(s, "%s: unterminated quote, ignored", origin);
			continue;
		}
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (q < eol && *q != '#') {
			add_warn(s, "%s: trailing text, ignored", origin);
			continue;
		}
		if (not_a_setting(name, n))
			continue;
		if (strncmp(name, "RAMBOOT", 7) || (n != 7 && name[7] != '_') ||
		    env_key(name, n, key, sizeof(key)) < 0) {
			add_warn(s, "%s: unknown setting, ignored", origin);
			continue;
		}
		if (!*val)
			continue;      /* KEY= : unset, as in the shell */
		if (strlen(val) >= SET_PATH_MAX) {
			add_warn(s, "%s: value too long, ignored", origin);
			continue;
		}
		settings_set(s, key, val, origin, SRC_CONF);
	}
	free(val);
}
