// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Image manifests: parse, format, load. See manifest.h for the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ramboot.h"
#include "manifest.h"

int sha256_hex_parse(const char *s, char out[65])
{
	char hex[65];
	size_t i;

	/* out is left alone unless the whole string is good. */
	for (i = 0; i < 64; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
		hex[i] = c;
	}
	if (s[64] != '\0')
		return -EINVAL;
	hex[64] = '\0';
	memcpy(out, hex, sizeof(hex));
	return 0;
}

static int perr(char *err, size_t errlen, unsigned int line, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "line %u: %s", line, what);
	return -EINVAL;
}

int manifest_parse(const char *buf, size_t len, struct manifest *m,
		   char *err, size_t errlen)
{
	bool have_magic = false, have_size = false, have_sha = false, have_comp = false;
	bool have_mem = false;
	unsigned int lineno = 0;
	size_t pos = 0;

	memset(m, 0, sizeof(*m));
	if (len > MANIFEST_MAX)
		return perr(err, errlen, 0, "manifest too large");
	while (pos < len) {
		char line[256], *key, *val, *end;
		size_t n = 0;

		lineno++;
		while (pos < len && buf[pos] != '\n') {
			if (buf[pos] == '\0')
				return perr(err, errlen, lineno, "NUL byte");
			if (n + 1 >= sizeof(line))
				return perr(err, errlen, lineno, "line too long");
			line[n++] = buf[pos++];
		}
		pos++;   /* the newline */
		if (n && line[n - 1] == '\r')
			n--;
		line[n] = '\0';
		key = line + strspn(line, " \t");
		if (*key == '\0' || *key == '#')
			continue;
		val = key + strcspn(key, " \t");
		if (*val)
			*val++ = '\0';
		val += strspn(val, " \t");
		end = val + strlen(val);
		while (end > val && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!have_magic) {
			if (strcmp(key, "ramboot-manifest"))
				return perr(err, errlen, lineno, "not a ramboot manifest");
			if (strcmp(val, "1"))
				return perr(err, errlen, lineno, "unsupported manifest version");
			have_magic = true;
		} else if (!strcmp(key, "size")) {
			if (have_size)
				return perr(err, errlen, lineno, "size given twice");
			if (*val < '0' || *val > '9')
				return perr(err, errlen, lineno, "bad size");
			errno = 0;
			{
				char *e;
				unsigned long long v = strtoull(val, &e, 10);

				if (errno || *e)
					return perr(err, errlen, lineno, "bad size");
				m->size = v;
			}
			have_size = true;
		} else if (!strcmp(key, "sha256")) {
			if (have_sha)
				return perr(err, errlen, lineno, "sha256 given twice");
			if (strlen(val) != 64 || sha256_hex_parse(val, m->sha256) < 0)
				return perr(err, errlen, lineno, "bad sha256");
			have_sha = true;
		} else if (!strcmp(key, "memlimit")) {
			char *e;
			unsigned long long v;

			if (have_mem)
				return perr(err, errlen, lineno, "memlimit given twice");
			if (*val < '0' || *val > '9')
				return perr(err, errlen, lineno, "bad memlimit");
			errno = 0;
			v = strtoull(val, &e, 10);
			if (errno || *e)
				return perr(err, errlen, lineno, "bad memlimit");
			m->memlimit = v;
			have_mem = true;
		} else if (!strcmp(key, "compression")) {
			if (have_comp)
				return perr(err, errlen, lineno, "compression given twice");
			if (strlen(val) >= sizeof(m->compression))
				return perr(err, errlen, lineno, "bad compression");
			strcpy(m->compression, val);
			have_comp = true;
		}
		/* Other keys belong to later versions and are ignored. */
	}
	if (!have_magic)
		return perr(err, errlen, lineno, "empty manifest");
	if (!have_size)
		return perr(err, errlen, lineno, "no size");
	if (!have_sha)
		return perr(err, errlen, lineno, "no sha256");
	return 0;
}

int manifest_load(const char *path, struct manifest *m, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, rc;

	if (err && errlen)
		err[0] = '\0';
	/* O_NONBLOCK: a FIFO planted as the manifest must not hang a boot. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errlen, "not a regular file");
		(void)close(fd);
		return rc;
	}
	buf = malloc(MANIFEST_MAX + 1);
	if (!buf) {
		(void)close(fd);
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	n = read_full(fd, buf, MANIFEST_MAX + 1);
	rc = close_checked(fd);
	if (n < 0 || rc < 0) {
		rc = n < 0 ? (int)n : rc;
		snprintf(err, errlen, "%s", strerror(-rc));
		free(buf);
		return rc;
	}
	rc = manifest_parse(buf, (size_t)n, m, err, errlen);
	free(buf);
	return rc;
}

int manifest_format(const struct manifest *m, char *buf, size_t len)
{
	int n = snprintf(buf, len, "ramboot-manifest 1\nsize %" PRIu64 "\nsha256 %s\n%s%s%s",
			 m->size, m->sha256, m->compression[0] ? "compression " : "",
			 m->compression, m->compression[0] ? "\n" : "");

	if (n >= 0 && (size_t)n < len && m->memlimit)
		n += snprintf(buf + n, len - (size_t)n, "memlimit %" PRIu64 "\n", m->memlimit);

	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}
