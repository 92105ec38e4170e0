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
#include <sys/file.h>
#include <sys/stat.h>

#include "lib/fdio.h"
#include "lib/keys.h"
#include "lib/outfile.h"
#include "lib/report.h"
#include "lib/sysutil.h"
#include "lib/text.h"

void report_init(struct boot_report *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->mode_asked, sizeof(r->mode_asked), "off");
	snprintf(r->mode_done, sizeof(r->mode_done), "off");
	snprintf(r->hash, sizeof(r->hash), "none");
	r->cache_age = -1;
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
static void kv_line(struct out *o, const char *key, const char *val)
{
	const unsigned char *p;

	put(o, "%s=", key);
	for (p = (const unsigned char *)val; *p; p++)
		put(o, "%c", text_is_ctl(*p) ? ' ' : *p);
	put(o, "\n");
}

/* A key of the report, by its entry in the key table. */
static void kv(struct out *o, enum key_id k, const char *val)
{
	kv_line(o, key_name(k), val);
}

int report_kv(char *buf, size_t cap, size_t *pos, const char *key, const char *val)
{
	struct out o = { buf, cap, *pos, *pos >= cap };

	kv_line(&o, key, val ? val : "");
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
	kv(&o, RK_MODE_ASKED, r->mode_asked);
	kv(&o, RK_MODE_DONE, r->mode_done);
	kv(&o, RK_SOURCE, r->source);
	kv(&o, RK_RAM_PATH, r->ram_path);
	kv(&o, RK_TARGET, r->target);
	snprintf(num, sizeof(num), "%" PRIu64, r->bytes);
	kv(&o, RK_BYTES, num);
	snprintf(num, sizeof(num), "%.3f", r->seconds);
	kv(&o, RK_SECONDS, num);
	snprintf(num, sizeof(num), "%" PRIu64, r->bytes_per_second);
	kv(&o, RK_BYTES_PER_SECOND, num);
	kv(&o, RK_CODEC, r->codec);
	kv(&o, RK_HASH, r->hash);
	/* Only once a copy was about to be made (older readers know the
	 * keys above). */
	if (r->verify[0]) {
		kv(&o, RK_VERIFY, r->verify);
		kv(&o, RK_SIGNED_BY, r->signed_by);
	}
	/* Only once a RAM copy was read from somewhere. */
	if (r->source_used[0]) {
		kv(&o, RK_SOURCE_USED, r->source_used);
		kv(&o, RK_SOURCE_FALLBACK, r->source_fallback);
	}
	/* Only for a copy checked chunk by chunk (a version 2 manifest), as
	 * the lazy_* keys only for a lazy copy. */
	if (r->chunks || r->chunks_retried) {
		snprintf(num, sizeof(num), "%" PRIu32, r->chunks);
		kv(&o, RK_CHUNKS, num);
		snprintf(num, sizeof(num), "%" PRIu32, r->chunks_retried);
		kv(&o, RK_CHUNKS_RETRIED, num);
	}
	if (r->verity[0]) {
		kv(&o, RK_VERITY, r->verity);
		kv(&o, RK_VERITY_DEVICE, r->verity_device);
		kv(&o, RK_VERITY_ROOT, r->verity_root);
	}
	if (r->cache[0]) {
		kv(&o, RK_CACHE, r->cache);
		kv(&o, RK_CACHE_DEVICE, r->cache_device);
		kv(&o, RK_CACHE_SLOT, r->cache_slot);
		snprintf(num, sizeof(num), "%" PRIu64, r->cache_generation);
		kv(&o, RK_CACHE_GENERATION, r->cache_slot[0] ? num : "");
		kv(&o, RK_CACHE_IMAGE, r->cache_image);
		kv(&o, RK_CACHE_VERIFIED, r->cache_verified);
		kv(&o, RK_CACHE_MARKED_BAD, r->cache_marked_bad);
		snprintf(num, sizeof(num), "%" PRId64, r->cache_age);
		kv(&o, RK_CACHE_AGE, r->cache_age >= 0 ? num : "");
	}
	kv(&o, RK_FSTYPE, r->fstype);
	kv(&o, RK_SWAP_DEVICE, r->swap_device);
	snprintf(num, sizeof(num), "%" PRIu64, r->swap_size);
	kv(&o, RK_SWAP_SIZE, r->swap_device[0] ? num : "");
	snprintf(num, sizeof(num), "%d", r->swap_priority);
	kv(&o, RK_SWAP_ALGORITHM, r->swap_algorithm);
	kv(&o, RK_SWAP_PRIORITY, r->swap_device[0] ? num : "");
	kv(&o, RK_FALLBACK, r->fallback);
	kv(&o, RK_ERROR, r->error);
	return o.full ? -ENOSPC : (int)o.pos;
}

static void js(struct out *o, enum key_id k, const char *val, bool last)
{
	size_t n;

	put(o, "  \"%s\": \"", key_name(k));
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
	js(&o, RK_MODE_ASKED, r->mode_asked, false);
	js(&o, RK_MODE_DONE, r->mode_done, false);
	js(&o, RK_SOURCE, r->source, false);
	js(&o, RK_RAM_PATH, r->ram_path, false);
	js(&o, RK_TARGET, r->target, false);
	put(&o, "  \"%s\": %" PRIu64 ",\n", key_name(RK_BYTES), r->bytes);
	put(&o, "  \"%s\": %.3f,\n", key_name(RK_SECONDS), r->seconds);
	put(&o, "  \"%s\": %" PRIu64 ",\n", key_name(RK_BYTES_PER_SECOND), r->bytes_per_second);
	js(&o, RK_CODEC, r->codec, false);
	js(&o, RK_HASH, r->hash, false);
	if (r->verify[0]) {
		js(&o, RK_VERIFY, r->verify, false);
		js(&o, RK_SIGNED_BY, r->signed_by, false);
	}
	if (r->source_used[0]) {
		js(&o, RK_SOURCE_USED, r->source_used, false);
		js(&o, RK_SOURCE_FALLBACK, r->source_fallback, false);
	}
	if (r->chunks || r->chunks_retried) {
		put(&o, "  \"%s\": %" PRIu32 ",\n", key_name(RK_CHUNKS), r->chunks);
		put(&o, "  \"%s\": %" PRIu32 ",\n", key_name(RK_CHUNKS_RETRIED), r->chunks_retried);
	}
	if (r->verity[0]) {
		js(&o, RK_VERITY, r->verity, false);
		js(&o, RK_VERITY_DEVICE, r->verity_device, false);
		js(&o, RK_VERITY_ROOT, r->verity_root, false);
	}
	if (r->cache[0]) {
		js(&o, RK_CACHE, r->cache, false);
		js(&o, RK_CACHE_DEVICE, r->cache_device, false);
		js(&o, RK_CACHE_SLOT, r->cache_slot, false);
		if (r->cache_slot[0])
			put(&o, "  \"%s\": %" PRIu64 ",\n", key_name(RK_CACHE_GENERATION),
			    r->cache_generation);
		else
			put(&o, "  \"%s\": null,\n", key_name(RK_CACHE_GENERATION));
		js(&o, RK_CACHE_IMAGE, r->cache_image, false);
		js(&o, RK_CACHE_VERIFIED, r->cache_verified, false);
		js(&o, RK_CACHE_MARKED_BAD, r->cache_marked_bad, false);
		if (r->cache_age >= 0)
			put(&o, "  \"%s\": %" PRId64 ",\n", key_name(RK_CACHE_AGE), r->cache_age);
		else
			put(&o, "  \"%s\": null,\n", key_name(RK_CACHE_AGE));
	}
	js(&o, RK_FSTYPE, r->fstype, false);
	js(&o, RK_SWAP_DEVICE, r->swap_device, false);
	if (r->swap_device[0]) {
		put(&o, "  \"%s\": %" PRIu64 ",\n", key_name(RK_SWAP_SIZE), r->swap_size);
		js(&o, RK_SWAP_ALGORITHM, r->swap_algorithm, false);
		put(&o, "  \"%s\": %d,\n", key_name(RK_SWAP_PRIORITY), r->swap_priority);
	} else {
		put(&o, "  \"%s\": null,\n", key_name(RK_SWAP_SIZE));
		js(&o, RK_SWAP_ALGORITHM, r->swap_algorithm, false);
		put(&o, "  \"%s\": null,\n", key_name(RK_SWAP_PRIORITY));
	}
	js(&o, RK_FALLBACK, r->fallback, false);
	js(&o, RK_ERROR, r->error, true);
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

bool report_text_next(const char *text, size_t *pos, struct report_line *l)
{
	const char *p = text + *pos, *eq;
	size_t len;

	if (!*p)
		return false;
	len = strcspn(p, "\n");
	eq = memchr(p, '=', len);
	l->key = p;
	l->klen = eq ? (size_t)(eq - p) : len;
	l->val = eq ? eq + 1 : NULL;
	l->vlen = eq ? len - l->klen - 1 : 0;
	*pos += len + (p[len] == '\n');
	return true;
}

/* Is l the line of the key KEY (klen bytes)? */
static bool line_is(const struct report_line *l, const char *key, size_t klen)
{
	return l->val && l->klen == klen && !memcmp(l->key, key, klen);
}

int report_text_set(char *text, size_t cap, const char *key, const char *raw)
{
	size_t klen = strlen(key), vlen = strlen(raw), tlen = strlen(text), pos = 0, at = 0;
	struct report_line l;
	char *val = malloc(vlen + 1);
	int rc;

	if (!val)
		return -ENOMEM;
	/* The value on one line, as kv() writes it: a path with a newline
	 * must not become a second key. */
	text_scrub(val, vlen + 1, raw, vlen, ' ');
	while (report_text_next(text, &pos, &l) && !line_is(&l, key, klen))
		at = pos;
	if (at < tlen) {
		/* the key's line: its value replaced, what follows moved */
		char *v = text + at + klen + 1;

		rc = tlen - l.vlen + vlen >= cap ? -ENOSPC : 0;
		if (rc == 0) {
			memmove(v + vlen, v + l.vlen, tlen - (at + klen + 1 + l.vlen) + 1);
			memcpy(v, val, vlen);
		}
	} else {
		rc = tlen + klen + vlen + 3 >= cap ? -ENOSPC : 0;
		if (rc == 0)
			snprintf(text + tlen, cap - tlen, "%s%s=%s\n",
				 tlen && text[tlen - 1] != '\n' ? "\n" : "", key, val);
	}
	free(val);
	return rc;
}

int report_text_get(const char *text, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), pos = 0;
	struct report_line l;
	int found = 0;

	if (len)
		buf[0] = '\0';
	while (report_text_next(text, &pos, &l)) {
		if (!line_is(&l, key, klen))
			continue;
		if (found)
			return -EBADMSG;
		found = 1;
		if (len)
			text_scrub(buf, len, l.val, l.vlen, '?');
	}
	return found;
}

const char *report_text_repeated(const char *text, char *key, size_t len)
{
	size_t pos = 0, at = 0, opos;
	struct report_line l, o;

	for (; report_text_next(text, &pos, &l); at = pos) {
		if (!l.val || l.klen == 0)
			continue;
		for (opos = 0; opos < at && report_text_next(text, &opos, &o);) {
			if (line_is(&o, l.key, l.klen)) {
				snprintf(key, len, "%.*s", (int)l.klen, l.key);
				return key;
			}
		}
	}
	return NULL;
}

/* The report's text, at most REPORT_AMEND_MAX bytes, into a buffer with
 * room for extra more; *text NULL and 0 when there is no report. */
static int amend_read(int dirfd, size_t extra, char **text, size_t *cap)
{
	struct stat st;
	ssize_t n;
	int fd, rc;

	*text = NULL;
	/* Not through a link, not waiting on a FIFO planted at the name. */
	fd = openat(dirfd, "report", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL :
	     st.st_size > REPORT_AMEND_MAX ? -EFBIG : 0;
	if (rc == 0) {
		*cap = (size_t)st.st_size + extra + 2;
		*text = malloc(*cap);
		rc = *text ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		/* One byte more than the size: a report that grew since is
		 * refused rather than cut. */
		n = read_full(fd, *text, (size_t)st.st_size + 1);
		rc = n < 0 ? (int)n : n > st.st_size ? -EFBIG : 0;
		if (rc == 0)
			(*text)[n] = '\0';
	}
	if (close_checked(fd) < 0 && rc == 0)
		rc = -EIO;
	if (rc < 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

static int amend(int dirfd, const struct report_set *set, size_t n, unsigned flags)
{
	struct outfile of;
	size_t extra = 0, cap = 0, len, i;
	char *text;
	int rc;

	for (i = 0; i < n; i++)
		extra += strlen(key_name(set[i].key)) + strlen(set[i].val ? set[i].val : "") + 3;
	rc = amend_read(dirfd, extra, &text, &cap);
	if (rc < 0 && !(flags & REPORT_AMEND_CREATE))
		return rc;
	if (rc < 0) {
		/* Started afresh: the keys set here are what is known. */
		cap = extra + 2;
		text = calloc(1, cap);
		if (!text)
			return -ENOMEM;
	}
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		if (set[i].val)
			rc = report_text_set(text, cap, key_name(set[i].key), set[i].val);
	if (rc == 0)
		rc = outfile_openat(&of, dirfd, "report", 0644, OUTFILE_REPLACE, NULL, NULL, 0);
	if (rc == 0) {
		len = strlen(text);
		if (len && text[len - 1] != '\n')
			text[len++] = '\n';
		rc = outfile_write(&of, text, len);
	}
	free(text);
	return rc;
}

int report_amend_at(int dirfd, const struct report_set *set, size_t n, unsigned flags)
{
	/* Several processes amend the report (the lazy copier, the cache's
	 * refresh, the network memory tier): a lock on the directory makes
	 * each read-modify-rename whole. Without one, as before. */
	bool locked = flock(dirfd, LOCK_EX) == 0;
	int rc = amend(dirfd, set, n, flags);

	if (locked)
		(void)flock(dirfd, LOCK_UN);
	return rc;
}
