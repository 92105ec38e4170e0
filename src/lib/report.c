// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The boot report writer. One key=value per line, the value being the
 * rest of the line (control characters replaced by spaces), so that
 * `sed -n 's/^fstype=//p'` in an initramfs script and `ramboot status`
 * read it without a parser.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/outfile.h"
#include "lib/ramboot.h"
#include "lib/report.h"
#include "lib/sysutil.h"

void report_init(struct boot_report *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->mode_asked, sizeof(r->mode_asked), "off");
	snprintf(r->mode_done, sizeof(r->mode_done), "off");
	snprintf(r->hash, sizeof(r->hash), "none");
}

void report_add_error(struct boot_report *r, const char *msg)
{
	size_t n = strlen(r->error);

	if (!msg || !*msg)
		return;
	snprintf(r->error + n, sizeof(r->error) - n, "%s%s", n ? "; " : "", msg);
	text_scrub(r->error + n, sizeof(r->error) - n, r->error + n, SIZE_MAX, ' ');
}

struct out {
	char *buf;
	size_t len, pos;
	bool full;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos) {
		o->full = true;
		return;
	}
	o->pos += (size_t)n;
}

/* key=value with the value on one line. */
static void kv(struct out *o, const char *key, const char *val)
{
	const unsigned char *p;

	put(o, "%s=", key);
	for (p = (const unsigned char *)val; *p; p++)
		put(o, "%c", text_is_ctl(*p) ? ' ' : *p);
	put(o, "\n");
}

int report_kv(char *buf, size_t cap, size_t *pos, const char *key, const char *val)
{
	struct out o = { buf, cap, *pos, *pos >= cap };

	kv(&o, key, val ? val : "");
	if (o.full) {
		if (*pos < cap)
			buf[*pos] = '\0';
		return -ENOSPC;
	}
	*pos = o.pos;
	return 0;
}

int report_format(const struct boot_report *r, char *buf, size_t len)
{
	struct out o = { buf, len, 0, false };
	char num[64];

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	kv(&o, "mode_asked", r->mode_asked);
	kv(&o, "mode_done", r->mode_done);
	kv(&o, "source", r->source);
	kv(&o, "ram_path", r->ram_path);
	kv(&o, "target", r->target);
	snprintf(num, sizeof(num), "%" PRIu64, r->bytes);
	kv(&o, "bytes", num);
	snprintf(num, sizeof(num), "%.3f", r->seconds);
	kv(&o, "seconds", num);
	snprintf(num, sizeof(num), "%" PRIu64, r->bytes_per_second);
	kv(&o, "bytes_per_second", num);
	kv(&o, "codec", r->codec);
	kv(&o, "hash", r->hash);
	/* Only once a copy was about to be made (older readers know the
	 * keys above). */
	if (r->verify[0]) {
		kv(&o, "verify", r->verify);
		kv(&o, "signed_by", r->signed_by);
	}
	/* Only once a RAM copy was read from somewhere. */
	if (r->source_used[0]) {
		kv(&o, "source_used", r->source_used);
		kv(&o, "source_fallback", r->source_fallback);
	}
	/* Only for a copy checked chunk by chunk (a version 2 manifest), as
	 * the lazy_* keys only for a lazy copy. */
	if (r->chunks || r->chunks_retried) {
		snprintf(num, sizeof(num), "%" PRIu32, r->chunks);
		kv(&o, "chunks", num);
		snprintf(num, sizeof(num), "%" PRIu32, r->chunks_retried);
		kv(&o, "chunks_retried", num);
	}
	if (r->verity[0]) {
		kv(&o, "verity", r->verity);
		kv(&o, "verity_device", r->verity_device);
		kv(&o, "verity_root", r->verity_root);
	}
	kv(&o, "fstype", r->fstype);
	kv(&o, "swap_device", r->swap_device);
	snprintf(num, sizeof(num), "%" PRIu64, r->swap_size);
	kv(&o, "swap_size", r->swap_device[0] ? num : "");
	snprintf(num, sizeof(num), "%d", r->swap_priority);
	kv(&o, "swap_algorithm", r->swap_algorithm);
	kv(&o, "swap_priority", r->swap_device[0] ? num : "");
	kv(&o, "fallback", r->fallback);
	kv(&o, "error", r->error);
	return o.full ? -ENOSPC : (int)o.pos;
}

static void js(struct out *o, const char *key, const char *val, bool last)
{
	size_t n;

	put(o, "  \"%s\": \"", key);
	if (!o->full) {
		n = json_escape(o->buf + o->pos, o->len - o->pos, val);
		if (n >= o->len - o->pos)
			o->full = true;
		else
			o->pos += n;
	}
	put(o, "\"%s\n", last ? "" : ",");
}

int report_format_json(const struct boot_report *r, char *buf, size_t len)
{
	struct out o = { buf, len, 0, false };

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	put(&o, "{\n");
	js(&o, "mode_asked", r->mode_asked, false);
	js(&o, "mode_done", r->mode_done, false);
	js(&o, "source", r->source, false);
	js(&o, "ram_path", r->ram_path, false);
	js(&o, "target", r->target, false);
	put(&o, "  \"bytes\": %" PRIu64 ",\n", r->bytes);
	put(&o, "  \"seconds\": %.3f,\n", r->seconds);
	put(&o, "  \"bytes_per_second\": %" PRIu64 ",\n", r->bytes_per_second);
	js(&o, "codec", r->codec, false);
	js(&o, "hash", r->hash, false);
	if (r->verify[0]) {
		js(&o, "verify", r->verify, false);
		js(&o, "signed_by", r->signed_by, false);
	}
	if (r->source_used[0]) {
		js(&o, "source_used", r->source_used, false);
		js(&o, "source_fallback", r->source_fallback, false);
	}
	if (r->chunks || r->chunks_retried) {
		put(&o, "  \"chunks\": %" PRIu32 ",\n", r->chunks);
		put(&o, "  \"chunks_retried\": %" PRIu32 ",\n", r->chunks_retried);
	}
	if (r->verity[0]) {
		js(&o, "verity", r->verity, false);
		js(&o, "verity_device", r->verity_device, false);
		js(&o, "verity_root", r->verity_root, false);
	}
	js(&o, "fstype", r->fstype, false);
	js(&o, "swap_device", r->swap_device, false);
	if (r->swap_device[0]) {
		put(&o, "  \"swap_size\": %" PRIu64 ",\n", r->swap_size);
		js(&o, "swap_algorithm", r->swap_algorithm, false);
		put(&o, "  \"swap_priority\": %d,\n", r->swap_priority);
	} else {
		put(&o, "  \"swap_size\": null,\n");
		js(&o, "swap_algorithm", r->swap_algorithm, false);
		put(&o, "  \"swap_priority\": null,\n");
	}
	js(&o, "fallback", r->fallback, false);
	js(&o, "error", r->error, true);
	put(&o, "}\n");
	return o.full ? -ENOSPC : (int)o.pos;
}

int report_mkdir(const char *dir)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		p[i] = i < n ? '/' : '\0';
	}
	return 0;
}

/* Written aside and renamed over the old report only when complete
 * (outfile.h): a reader never sees half a report, and the boot and its
 * prefetch child, which both write it, never share a temporary. */
static int write_atomic_at(int dirfd, const char *name, const char *data, size_t len)
{
	struct outfile of;
	int rc = outfile_openat(&of, dirfd, name, 0644, OUTFILE_REPLACE, NULL, NULL, 0);

	if (rc < 0)
		return rc;
	rc = write_all(of.fd, data, len);
	if (rc == 0)
		return outfile_commit(&of);
	outfile_abort(&of);
	return rc;
}

int report_write_at(const struct boot_report *r, int dirfd, bool json)
{
	size_t cap = 8192;
	char *buf = malloc(cap);
	int n, rc;

	if (!buf)
		return -ENOMEM;
	n = report_format(r, buf, cap);
	rc = n < 0 ? n : write_atomic_at(dirfd, "report", buf, (size_t)n);
	if (rc == 0 && json) {
		n = report_format_json(r, buf, cap);
		rc = n < 0 ? n : write_atomic_at(dirfd, "report.json", buf, (size_t)n);
	}
	free(buf);
	return rc;
}

int report_write(const struct boot_report *r, const char *dir, bool json)
{
	int fd, rc;

	rc = report_mkdir(dir);
	if (rc < 0)
		return rc;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = report_write_at(r, fd, json);
	if (close_checked(fd) < 0 && rc == 0)
		rc = -EIO;
	return rc;
}

static int text_set(char *text, size_t cap, const char *key, size_t klen, const char *val,
		    size_t vlen, size_t tlen, char *line);

int report_text_set(char *text, size_t cap, const char *key, const char *raw)
{
	size_t klen = strlen(key), vlen = strlen(raw), tlen = strlen(text);
	char *line = text, *val = malloc(vlen + 1);
	int rc;

	if (!val)
		return -ENOMEM;
	/* The value on one line, as kv() writes it: a path with a newline
	 * must not become a second key. */
	text_scrub(val, vlen + 1, raw, vlen, ' ');
	rc = text_set(text, cap, key, klen, val, vlen, tlen, line);
	free(val);
	return rc;
}

static int text_set(char *text, size_t cap, const char *key, size_t klen, const char *val,
		    size_t vlen, size_t tlen, char *line)
{

	while (line && *line) {
		char *eol = strchr(line, '\n');
		size_t llen = eol ? (size_t)(eol - line) : strlen(line);

		if (llen > klen && !strncmp(line, key, klen) && line[klen] == '=') {
			size_t old = llen - klen - 1, rest = tlen - (size_t)(line - text) - llen;

			if (tlen - old + vlen >= cap)
				return -ENOSPC;
			memmove(line + klen + 1 + vlen, line + llen, rest + 1);
			memcpy(line + klen + 1, val, vlen);
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	if (tlen + klen + vlen + 3 >= cap)
		return -ENOSPC;
	snprintf(text + tlen, cap - tlen, "%s%s=%s\n", tlen && text[tlen - 1] != '\n' ? "\n" : "",
		 key, val);
	return 0;
}
