// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: sqfs_read() on arbitrary bytes taken for a squashfs
 * image (`ramboot profile sort` reads the image a server was handed).
 * Metadata blocks stored as is, or gzip (zlib) compressed; other
 * compressors are refused as the real decoder refuses an unknown one.
 * Besides the sanitizers, it checks that a refusal says why, and that an
 * accepted image is what sqfs.h promises: every extent and table inside
 * the image, every path at most SQFS_PATH_MAX bytes and made of names
 * without '/'. See docs/fuzzing.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/sqfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int mem_decode(void *ctx, unsigned comp, const uint8_t *in, size_t inlen, uint8_t *out,
		      size_t cap, size_t *outlen)
{
	uLongf n = (uLongf)cap;

	(void)ctx;
	if (comp != SQFS_GZIP)
		return -EPROTONOSUPPORT;
	if (uncompress(out, &n, in, (uLong)inlen) != Z_OK)
		return -EBADMSG;
	*outlen = n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sqfs_mem m = { data, size };
	struct sqfs_io io = { &m, sqfs_mem_read, mem_decode };
	char err[256], path[SQFS_PATH_MAX + 1];
	struct sqfs s;
	size_t i;
	int rc, l;

	memset(err, 0x5a, sizeof(err));
	rc = sqfs_read(&s, size, &io, err, sizeof(err));
	if (rc) {
		if (rc > 0 || !memchr(err, '\0', sizeof(err)) || !err[0] || s.f || s.nf)
			abort();
		return 0;
	}
	for (i = 0; i < s.narea; i++)
		if (s.area[i].off > size || s.area[i].len > size - s.area[i].off)
			abort();
	for (i = 0; i < s.nf; i++) {
		const struct sqfs_file *f = &s.f[i];

		if (f->data_off > size || f->data_len > size - f->data_off ||
		    f->frag_off > size || f->frag_len > size - f->frag_off || !f->links)
			abort();
		l = sqfs_path(&s, i, path, sizeof(path));
		if (l <= 0 || (size_t)l != strlen(path) || path[0] == '/' || path[l - 1] == '/' ||
		    strstr(path, "//"))
			abort();
	}
	sqfs_free(&s);
	return 0;
}
