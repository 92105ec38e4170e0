// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source of a load, opened through source/ (a file, a block device,
 * a pipe or a udpcast stream). Before anything is written, its format
 * and the size of the image are learnt from its first and last bytes
 * where it can be read twice.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/msg.h"
#include "load/loadint.h"
#include "format/squashfs.h"
#include "dev/blkdev.h"

/* Open name (o->source, or an http:// mirror of it). */
static int open_one(struct run *u, const char *name, char *err, size_t errlen)
{
	const struct load_opts *o = u->o;
	struct source_spec sp = {
		.name = name, .udpcast = o->udpcast,
		.fd = o->source_is_fd ? o->source_fd : !strcmp(o->source, "-") ? STDIN_FILENO : -1,
		.http = !o->source_is_fd && !o->udpcast && source_is_url(o->source),
		.timeout_ms = http_timeout_ms(o->stall_timeout),
	};

	return source_open(&u->src, &sp, err, errlen);
}

int load_source_open(struct run *u)
{
	const struct load_opts *o = u->o;
	char err[512];
	int rc = open_one(u, o->source, err, sizeof(err));

	/* An http:// image is read from the first of its URLs that answers
	 * (--mirror). */
	while (rc < 0 && u->next_mirror < o->n_mirrors) {
		rb_warn("%s", err);
		rc = open_one(u, o->mirrors[u->next_mirror++], err, sizeof(err));
	}
	if (rc < 0)
		return load_fail(u, LOAD_SOURCE, "%s", err);
	if (u->src.seekable)
		(void)posix_fadvise(u->src.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* Format and output size, from a seekable source's first and last bytes. */
int load_source_probe(struct run *u)
{
	struct source *s = &u->src;
	uint8_t head[SQUASHFS_SB_MIN];
	ssize_t n = 0;
	int exact = 0;

	if (s->seekable) {
		n = source_pread(s, head, sizeof(head), 0);
		if (n < 0)
			return load_fail(u, LOAD_SOURCE, "%s: %s", u->o->source, strerror((int)-n));
	}
	if (strcmp(u->o->decompress, "auto"))
		u->codec = codec_by_name(u->o->decompress);
	else if (s->seekable)
		u->codec = codec_detect(head, (size_t)n);
	if (!s->seekable)
		return 0;      /* a pipe: detected from the first chunk later */

	if (u->codec == &codec_none) {
		uint64_t used;

		u->estimate = s->size;
		u->estimate_exact = true;
		/* A raw squashfs says how long it is: a shorter file is a
		 * truncated image; on a block device only what it uses is
		 * copied (rounded up to the 4 KiB it is padded to). */
		if (squashfs_bytes_used(head, (size_t)n, &used) == 0) {
			uint64_t padded = (used + 4095) & ~4095ULL;

			if (used > s->size)
				return load_fail(u, LOAD_FSTYPE, "%s: truncated squashfs: %llu of "
						 "%llu bytes", u->o->source,
						 (unsigned long long)s->size,
						 (unsigned long long)used);
			if (s->kind == SRC_BLOCK && padded < s->size)
				s->size = u->estimate = padded;
		}
	} else if (u->codec && u->codec->content_size &&
		   u->codec->content_size(s->fd, s->size, &u->estimate, &exact) == 0) {
		u->estimate_exact = exact;
	}
	return 0;
}

/* A stream from an http:// URL failed (a read, its length, a chunk's
 * hash, the file changed): the next mirror, from the start, the output
 * made empty again. A stream cannot resume mid-codec. 1: run again. */
int load_source_again(struct run *u)
{
	const struct load_opts *o = u->o;
	enum run_err e = u->r->err;
	char err[512];
	int rc = -1;

	if (u->src.kind != SRC_HTTP || (e != LOAD_SOURCE && e != LOAD_CHANGED && e != LOAD_HASH &&
					e != LOAD_SIZE && e != LOAD_FORMAT) ||
	    (u->guard && guard_fired(u->guard, NULL) != GUARD_NONE))
		return 0;
	while (rc < 0 && u->next_mirror < o->n_mirrors) {
		const char *url = o->mirrors[u->next_mirror++];

		rb_warn("%s; again from the start from %s", u->r->error, url);
		(void)source_close(&u->src);
		if ((rc = open_one(u, url, err, sizeof(err))) < 0)
			snprintf(u->r->error, sizeof(u->r->error), "%.250s", err);
	}
	if (rc < 0 || lseek(u->snk.fd, 0, SEEK_SET) < 0 ||
	    (!u->snk.blk && ftruncate(u->snk.fd, 0) < 0))
		return 0;
	u->r->err = LOAD_OK;
	u->r->error[0] = '\0';
	return 1;
}

/* The source read to its end is the whole image: a file not replaced
 * on the server while it was read, a stream whose receiver ended well. */
int load_source_end(struct run *u)
{
	char err[512];
	int rc = source_end(&u->src, err, sizeof(err));

	return rc < 0 ? load_fail(u, source_verdict(rc), "%s", err) : 0;
}
