// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot cache refresh: fill the inactive slot of an image from a new
 * version of it, chunk by chunk (format/cindex.h), verify it, commit.
 *
 * The order is what makes it safe (cache.h): the active slot and the
 * state are only read until the very last step, the state's commit (a
 * rename, lib/outfile), and that step comes after the new slot is on the
 * disk (fsync) and was read back from it and found to be the image.
 *
 *   1. the state, and the active slot's index (checked against it);
 *   2. the manifest, under the signature policy: the same image as the
 *      active slot's is "up to date", and nothing else is read;
 *   3. the new image's index: the one the manifest names (beside the
 *      image, or given), checked against the manifest's hash of it;
 *      else given, or computed from the image;
 *   4. each chunk of the new image: from the active slot when its index
 *      has that hash and the bytes read have it too (a rotted or altered
 *      local copy is read from the image instead), else from the image;
 *      every chunk hashed before it is written to the inactive slot;
 *   5. fsync, the page cache of the slot dropped, the slot hashed again
 *      from the disk by the loader (load_hash_only): its size, SHA-256
 *      and chunk hashes against the manifest, and the SHA-256 against the
 *      one of the chunks written;
 *   6. the slot's side files (index, manifest), then the state:
 *      generation + 1, the new slot active.
 *
 * A manifest that names a delta from the very image the active slot
 * holds (manifest.h, codec/delta.h) takes a shorter way from 3 on: the
 * delta alone is read from the server, applied to the active slot into
 * the inactive one, and the slot is verified as in 5 (its SHA-256 and
 * chunk hashes from the disk against the manifest's); its index is built
 * from it, on the local disk. Any failure of that way (a delta missing,
 * altered, not decoding, a slot that does not verify) is one warning
 * line, and the chunks take over from 3 as if there had been no delta.
 *
 * Over HTTP (an http:// IMAGE, source/http.h) the same steps read from the
 * server: the manifest (IMAGE.manifest by default) and the index it names
 * by whole GETs, the delta as one stream, and the chunks the active slot
 * does not hold by ranged GETs (If-Range: a file replaced on the server
 * is an error, never a splice), runs of adjacent ones in one request.
 * The image's bytes are read from the file the manifest's "image" key
 * names beside the manifest (publish --content-addressed), which no
 * rebuild changes under the refresh. Nothing of the image is requested
 * when the active slot holds it already, and it is never indexed by
 * reading it whole: the index comes from the manifest or --index. With
 * --mirror, the ranges go to the mirrors too (refresh_http.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/sha256.h"
#include "dev/blkdev.h"
#include "format/cdc.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "codec/delta.h"
#include "trust/policy.h"
#include "load/load.h"
#include "source/http.h"
#include "source/source.h"
#include "cache/cache.h"
#include "cache/cacheint.h"
#include "cache/refresh.h"

/* Read the manifest once; the verification policy (trust/policy.h, as
 * `ramboot load` has it) checks and parses those very bytes, which are
 * the bytes kept beside the slot. No path but the manifest's own: behind
 * the boot, the switch of root may have taken /proc from this process. */
static int read_manifest(struct refresh *f)
{
	const char *path = f->manifest;
	struct trust_policy p = {
		.manifest = path, .signed_only = f->o->signed_only, .keydir = f->o->keydir,
		.chunks = true,
	};
	char sha[65];
	const struct trust_want w = {
		.sha256 = sha, .man = &f->m, .have_man = &f->have_m,
		.signed_by = f->r->signed_by, .signed_by_len = sizeof(f->r->signed_by),
	};
	enum run_err e;
	struct stat st;
	ssize_t n;
	int fd, rc;

	if (source_is_url(path) && !f->o->manifest_open) {
		if ((rc = refresh_http_manifest(f)) < 0)
			return rc;
		p.manifest = f->manifest;
		goto check;
	}
	fd = f->o->manifest_open ? fcntl(f->o->manifest_fd, F_DUPFD_CLOEXEC, 3) :
	     open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = fd < 0 ? -errno : -EINVAL;
		if (fd >= 0)
			(void)close(fd);
		return rb_errfmt(f->err, f->errlen, rc, "%s: %s", path,
				 rc == -EINVAL ? "not a regular file" : strerror(-rc));
	}
	f->mtext = malloc(MANIFEST_HARD_MAX + 1);
	if (!f->mtext) {
		(void)close(fd);
		return rb_errfmt(f->err, f->errlen, -ENOMEM, "out of memory");
	}
	n = pread_full(fd, f->mtext, MANIFEST_HARD_MAX + 1, 0);
	(void)close(fd);              /* read only */
	if (n < 0)
		return rb_errfmt(f->err, f->errlen, (int)n, "%s: %s", path, strerror((int)-n));
	f->mlen = (size_t)n;
check:
	p.text = f->mtext;
	p.text_len = f->mlen;
	e = trust_policy_read(&p, &w, f->err, f->errlen);
	if (e != RUN_OK)
		return e == RUN_SIGNATURE ? -EKEYREJECTED : -EINVAL;
	return 0;
}

/* The file the manifest names beside the image, in path: 0, or -ENAMETOOLONG. */
static int beside_image(const struct refresh *f, const char *name, char *path, size_t len)
{
	const char *slash = strrchr(f->image, '/');
	int dlen = slash ? (int)(slash - f->image + 1) : 0;
	int rc = snprintf(path, len, "%.*s%s", dlen, f->image, name);

	return rc < 0 || (size_t)rc >= len ? -ENAMETOOLONG : 0;
}

static int cmp_have(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* An index from a URL, as cindex_load_checked() reads one from a file:
 * its SHA-256 against want (hex, NULL: none) before it is parsed. */
static int index_fetch(const struct refresh *f, const char *url, const char *want,
		       struct cindex *ci, char *why, size_t len)
{
	char *text, hex[65];
	uint8_t md[32];
	size_t n;
	int rc;

	memset(ci, 0, sizeof(*ci));
	rc = http_fetch(url, f->o->timeout_ms, cindex_text_max(CINDEX_CHUNKS_MAX), &text, &n, why,
			len);
	if (rc < 0)
		return rc;
	sha256(text, n, md);
	hex_encode(md, 32, hex);
	if (want && strcmp(hex, want))
		rc = rb_errfmt(why, len, -EBADMSG, "%s: sha256 %s, not %s", url, hex, want);
	else if ((rc = cindex_parse(text, n, ci, why, len)) < 0) {
		char w[256];

		snprintf(w, sizeof(w), "%s", why);
		rb_errfmt(why, len, rc, "%s: %s", url, w);
	}
	free(text);
	return rc;
}

/* The new image's index. The manifest's, when it names one: read from
 * beside the image (or from --index), its SHA-256 checked against the
 * manifest's before it is parsed; a mismatch fails (never a silent
 * recompute: the signature covers that hash). Else given, or computed
 * from the image. */
static int new_index(struct refresh *f)
{
	char why[2 * PATH_MAX + 256], path[PATH_MAX];
	const char *src = f->o->index;
	int rc;

	if (f->have_m && f->m.cindex[0]) {
		if (!src) {
			if (beside_image(f, f->m.cindex, path, sizeof(path)) < 0)
				return rb_errfmt(f->err, f->errlen, -ENAMETOOLONG, "%s: path too long "
						 "for its index", f->image);
			src = path;
		}
		rc = source_is_url(src) ?
		     index_fetch(f, src, f->m.cindex_sha256, &f->new, why, sizeof(why)) :
		     cindex_load_checked(src, f->m.cindex_sha256, &f->new, why, sizeof(why));
		if (rc < 0)
			return rb_errfmt(f->err, f->errlen, rc, "the index the manifest names: %s%s",
					 why, rc == -EBADMSG ? " (the manifest's cindex-sha256): "
					 "refused" : "");
		f->r->index_from = "manifest";
	} else if (src) {
		rc = source_is_url(src) ? index_fetch(f, src, NULL, &f->new, why, sizeof(why)) :
		     cindex_load(src, &f->new, why, sizeof(why));
		f->r->index_from = "file";
	} else if (source_is_url(f->image)) {
		/* Indexing it would read it whole: what the index is for. */
		return rb_errfmt(f->err, f->errlen, -EINVAL, "%s: an image over HTTP needs the "
				 "index its manifest names (ramboot publish --cindex) or --index",
				 f->image);
	} else {
		rc = cindex_build(f->img.fd, &f->new, why, sizeof(why));
		if (rc == 0)
			f->r->bytes_indexed = f->new.size;
		f->r->index_from = "computed";
	}
	if (rc < 0)
		return rb_errfmt(f->err, f->errlen, rc, "%s: %s", f->o->index ? f->o->index :
				 f->image, why);
	if (f->have_m && f->new.size != f->m.size)
		return rb_errfmt(f->err, f->errlen, -EINVAL, "the index is of %" PRIu64 " bytes, the "
				 "manifest of %" PRIu64, f->new.size, f->m.size);
	return 0;
}

/* The canonical text of an index and its SHA-256. */
static int index_text(const struct cindex *ci, char **text, size_t *len, uint8_t sum[32])
{
	ssize_t n;

	*text = malloc(cindex_text_max(ci->n) + 1);
	if (!*text)
		return -ENOMEM;
	n = cindex_format(ci, *text, cindex_text_max(ci->n) + 1);
	if (n < 0)
		return (int)n;
	*len = (size_t)n;
	sha256(*text, *len, sum);
	return 0;
}

static int open_slots(struct refresh *f)
{
	char name[16];
	struct stat s, a;
	int rc;

	f->target = f->st.active < 0 ? 0 : 1 - f->st.active;
	if (f->st.active >= 0) {
		cache_slot_name(f->st.active, NULL, name, sizeof(name));
		f->afd = openat(f->dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (f->afd < 0 || fstat(f->afd, &a) < 0 || !S_ISREG(a.st_mode)) {
			/* No local copy after all: everything from the image. */
			rb_warn("slot %s: %s; every chunk is read from the image", name,
				f->afd < 0 ? strerror(errno) : "not a regular file");
			close_fd(&f->afd);
		}
	}
	cache_slot_name(f->target, NULL, name, sizeof(name));
	f->sfd = openat(f->dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (f->sfd < 0) {
		rc = -errno;
		return rb_errfmt(f->err, f->errlen, rc, "slot %s: %s", name, rc == -ELOOP ?
				 "is a symbolic link; not written through it" : strerror(-rc));
	}
	/* Refused: closed at once, so that nothing (not even the cleanup's
	 * truncation) touches what the name leads to. */
	if (fstat(f->sfd, &s) < 0 || !S_ISREG(s.st_mode))
		rc = rb_errfmt(f->err, f->errlen, -EINVAL, "slot %s: not a regular file; not "
			       "written", name);
	else if (f->afd >= 0 && a.st_dev == s.st_dev && a.st_ino == s.st_ino)
		rc = rb_errfmt(f->err, f->errlen, -EINVAL, "slot %s is the active slot (a hard "
			       "link); not written", name);
	else if (f->img.fd >= 0 && f->img.st.st_dev == s.st_dev && f->img.st.st_ino == s.st_ino)
		rc = rb_errfmt(f->err, f->errlen, -EINVAL, "%s is slot %s itself", f->image,
			       name);
	else
		rc = 0;
	if (rc < 0) {
		close_fd(&f->sfd);
		return rc;
	}
	/* From here on the slot is not what the state says it holds (status
	 * sees it newer than the state). The space is taken at once: a cache
	 * too small fails now, not after most of the copy. */
	if (ftruncate(f->sfd, 0) < 0)
		return rb_errfmt(f->err, f->errlen, -errno, "slot %s: %s", name, strerror(errno));
	if (f->new.size && fallocate(f->sfd, 0, 0, (off_t)f->new.size) < 0) {
		rc = -errno;
		if (rc != -EOPNOTSUPP)
			return rb_errfmt(f->err, f->errlen, rc, "slot %s: no room for %" PRIu64
					 " bytes: %s", name, f->new.size, strerror(-rc));
		if (ftruncate(f->sfd, (off_t)f->new.size) < 0)
			return rb_errfmt(f->err, f->errlen, -errno, "slot %s: %s", name,
					 strerror(errno));
	}
	return 0;
}

/* An active slot whose index another chunker made (an older ramboot's,
 * or one given with --index) shares few chunks with the new index, though
 * it holds most of its bytes: it is indexed again with the chunker of the
 * new index, from the local disk, once. Its chunks are still re-hashed
 * when they are read (fill). When that fails, the old index serves. */
static void reindex_active(struct refresh *f)
{
	struct cindex again;
	uint8_t head[CDC_SQFS_SUPER];
	char why[256];
	ssize_t n;

	if (f->afd < 0 || !f->new.n || !strcmp(f->old.chunker, f->new.chunker))
		return;
	/* Only when this ramboot's chunker is the new index's. */
	n = pread_full(f->afd, head, sizeof(head), 0);
	if (n < 0 || strcmp(cindex_chunker_for(head, (size_t)n), f->new.chunker))
		return;
	if (cindex_build(f->afd, &again, why, sizeof(why)) < 0) {
		rb_warn("slot %c: not indexed again: %s", cstate_slot_name(f->st.active), why);
		return;
	}
	rb_info("slot %c: its index was %s's, indexed again with %s",
		cstate_slot_name(f->st.active), f->old.chunker, again.chunker);
	f->r->bytes_reindexed = again.size;
	cindex_free(&f->old);
	f->old = again;
}

const struct have *refresh_find_have(const struct have *have, uint32_t nh,
				     const struct cindex_chunk *c)
{
	struct have key;
	const struct have *h;

	if (!have)
		return NULL;
	memcpy(key.sha256, c->sha256, 32);
	h = bsearch(&key, have, nh, sizeof(*have), cmp_have);
	return h && h->len == c->len ? h : NULL;
}

/* Chunk i of the new index from the image into buf. Over HTTP, chunk i
 * and the chunks after it that the active slot does not hold, up to
 * RUN_MAX bytes, come in one ranged request into run (RUN_MAX bytes),
 * *run_off and *run_len saying what it holds. len bytes, or -errno with
 * the error in f->err. */
static ssize_t image_read(struct refresh *f, const struct have *have, uint32_t nh, uint32_t i,
			  uint8_t *buf, uint8_t *run, uint64_t *run_off, uint64_t *run_len)
{
	const struct cindex_chunk *c = &f->new.chunk[i];
	ssize_t n;

	if (f->ms)
		return refresh_http_read(f, have, nh, i, buf, run, run_off, run_len);
	n = source_pread(&f->img, buf, c->len, c->off);
	if (n == (ssize_t)c->len)
		return n;
	return rb_errfmt(f->err, f->errlen, n < 0 ? (int)n : -EIO, "%s: at %" PRIu64 ": %s",
			 f->image, c->off, n < 0 ? strerror((int)-n) : "shorter than its index");
}

/* Step 4: every chunk, hashed, into the slot. */
static int fill(struct refresh *f)
{
	struct have *have = NULL;
	const struct have *h;
	struct cache_refresh_result *r = f->r;
	struct sha256 all;
	uint8_t md[32], *run = NULL;
	uint64_t run_off = 0, run_len = 0;
	uint32_t i, nh = 0, maxlen = 0;
	uint8_t *buf;
	ssize_t n;
	int rc = 0;

	for (i = 0; i < f->new.n; i++)
		if (f->new.chunk[i].len > maxlen)
			maxlen = f->new.chunk[i].len;
	buf = malloc(maxlen ? maxlen : 1);
	if (f->afd >= 0 && f->old.n)
		have = malloc((size_t)f->old.n * sizeof(*have));
	/* A run holds the longest chunk at least. */
	if (f->ms)
		run = malloc(RUN_MAX > maxlen ? RUN_MAX : maxlen);
	if (!buf || (f->afd >= 0 && f->old.n && !have) || (f->ms && !run)) {
		free(buf);
		free(have);
		free(run);
		return rb_errfmt(f->err, f->errlen, -ENOMEM, "out of memory");
	}
	if (have) {
		for (i = 0; i < f->old.n; i++) {
			memcpy(have[i].sha256, f->old.chunk[i].sha256, 32);
			have[i].off = f->old.chunk[i].off;
			have[i].len = f->old.chunk[i].len;
		}
		nh = f->old.n;
		qsort(have, nh, sizeof(*have), cmp_have);
	}
	sha256_init(&all);
	for (i = 0; i < f->new.n && rc == 0; i++) {
		const struct cindex_chunk *c = &f->new.chunk[i];
		bool got = false;

		h = refresh_find_have(have, nh, c);
		if (h) {
			/* Re-hashed after the read: the disk may have rotted or
			 * been altered since the slot was verified. */
			n = pread_full(f->afd, buf, c->len, (off_t)h->off);
			if (n == (ssize_t)c->len) {
				sha256(buf, c->len, md);
				got = !memcmp(md, c->sha256, 32);
			}
			if (!got && r->chunks_bad++ < 3)
				rb_warn("slot %c: the chunk at %" PRIu64 " %s; read from the image",
					cstate_slot_name(f->st.active), h->off,
					n == (ssize_t)c->len ? "does not match its hash" :
					"cannot be read");
			if (got) {
				r->bytes_local += c->len;
				r->chunks_local++;
			}
		}
		if (!got) {
			n = image_read(f, have, nh, i, buf, run, &run_off, &run_len);
			if (n < 0) {
				rc = (int)n;
				break;
			}
			sha256(buf, c->len, md);
			if (memcmp(md, c->sha256, 32)) {
				rc = rb_errfmt(f->err, f->errlen, -EINVAL, "%s: the chunk at %" PRIu64
					       " does not match the index (not the indexed image, "
					       "or it changed)", f->image, c->off);
				break;
			}
			r->bytes_network += c->len;
			r->chunks_network++;
		}
		sha256_update(&all, buf, c->len);
		rc = pwrite_full(f->sfd, buf, c->len, (off_t)c->off);
		if (rc < 0)
			rc = rb_errfmt(f->err, f->errlen, rc, "slot %c: write error at %" PRIu64 ": %s",
				       cstate_slot_name(f->target), c->off, strerror(-rc));
	}
	sha256_final(&all, f->sum);
	free(buf);
	free(have);
	free(run);
	return rc;
}

/* The image sha256 (hex) of size is not the one the boot chose
 * (o->expect_sha256): true, with the error. */
static bool not_chosen(struct refresh *f, const char *sha256, uint64_t size)
{
	const char *want = f->o->expect_sha256;

	if (!want || (!strcmp(sha256, want) && (!f->o->expect_size || size == f->o->expect_size)))
		return false;
	rb_errfmt(f->err, f->errlen, -ESTALE, "%s: sha256 %.16s..., %" PRIu64 " bytes, not the "
		  "image the boot chose (sha256 %.16s...): nothing refreshed", f->image, sha256,
		  size, want);
	return true;
}

/* Step 5: the slot from the disk, by the loader's hasher. */
static int verify(struct refresh *f)
{
	char proc[64], want[65];
	struct load_opts lo;
	struct load_result lr;
	uint8_t (*chunk)[32] = NULL;
	uint64_t csize = 0;
	int rc;

	if (fsync(f->sfd) < 0)
		return rb_errfmt(f->err, f->errlen, -errno, "slot %c: fsync: %s",
				 cstate_slot_name(f->target), strerror(errno));
	/* Clean pages dropped: what is read next comes from the disk. */
	(void)posix_fadvise(f->sfd, 0, 0, POSIX_FADV_DONTNEED);
	hex_encode(f->sum, 32, want);
	if (not_chosen(f, want, f->new.size))
		return -ESTALE;
	if (f->have_m && strcmp(want, f->m.sha256))
		return rb_errfmt(f->err, f->errlen, -EINVAL, "%s: the image is not the one its "
				 "manifest describes (sha256 %s, the manifest says %s); the state "
				 "is untouched", f->image, want, f->m.sha256);
	if (f->have_m && f->m.chunk && f->m.nchunks) {
		chunk = malloc((size_t)f->m.nchunks * sizeof(*chunk));
		if (!chunk)
			return rb_errfmt(f->err, f->errlen, -ENOMEM, "out of memory");
		csize = f->m.chunk_size;
	}
	load_opts_init(&lo);
	/* The slot's descriptor, no path: behind the boot, the switch of
	 * root takes /proc and /dev away from this process. */
	snprintf(proc, sizeof(proc), "slot %c", cstate_slot_name(f->target));
	lo.source = proc;
	lo.source_fd = f->sfd;
	lo.source_is_fd = true;
	lo.decompress = "none";
	lo.progress = PROGRESS_NONE;
	rc = load_hash_only(&lo, &lr, csize, chunk, chunk ? f->m.nchunks : 0);
	if (rc != RB_EXIT_OK)
		rc = rb_errfmt(f->err, f->errlen, -EIO, "slot %c: cannot be read back: %s",
			       cstate_slot_name(f->target), lr.error);
	else if (lr.bytes_out != f->new.size || strcmp(lr.sha256, want) ||
		 (chunk && (lr.chunks != f->m.nchunks ||
			    memcmp(chunk, f->m.chunk, (size_t)f->m.nchunks * sizeof(*chunk)))))
		rc = rb_errfmt(f->err, f->errlen, -EINVAL, "slot %c: verification failed: the "
			       "bytes read back are not the image written%s; the state is "
			       "untouched", cstate_slot_name(f->target),
			       f->have_m ? " and its manifest" : "");
	free(chunk);
	if (rc == 0)
		memcpy(f->r->sha256, want, sizeof(want));
	return rc;
}

static int write_side(struct refresh *f, const char *suffix, const char *text, size_t len)
{
	char name[16];
	struct outfile of;
	int rc;

	cache_slot_name(f->target, suffix, name, sizeof(name));
	if (!text) {
		if (unlinkat(f->dir, name, 0) < 0 && errno != ENOENT)
			return rb_errfmt(f->err, f->errlen, -errno, "%s: %s", name, strerror(errno));
		return 0;
	}
	rc = outfile_openat(&of, f->dir, name, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL, f->err,
			    f->errlen);
	if (rc < 0)
		return rc;
	rc = write_all(of.fd, text, len);
	if (rc == 0)
		rc = outfile_commit(&of);
	else
		outfile_abort(&of);
	if (rc < 0)
		return rb_errfmt(f->err, f->errlen, rc, "%s: %s", name, strerror(-rc));
	return 0;
}

/* Steps 6: the side files, then the state. */
static int commit(struct refresh *f, const char *itext, size_t ilen, const uint8_t isum[32])
{
	struct cstate ns = f->st;
	struct cstate_slot *sl = &ns.slot[f->target];
	int rc;

	rc = write_side(f, ".cindex", itext, ilen);
	if (rc == 0)
		rc = write_side(f, ".manifest", f->have_m ? f->mtext : NULL, f->mlen);
	if (rc < 0)
		return rc;
	memset(sl, 0, sizeof(*sl));
	sl->used = true;
	sl->size = f->new.size;
	memcpy(sl->sha256, f->sum, 32);
	memcpy(sl->cindex_sha256, isum, 32);
	if (f->have_m) {
		sl->has_manifest = true;
		sha256(f->mtext, f->mlen, sl->manifest_sha256);
	}
	ns.generation = f->st.generation + 1;
	ns.active = f->target;
	ns.refreshed = (int64_t)time(NULL);
	ns.bytes_network = f->r->bytes_network;
	ns.bytes_local = f->r->bytes_local;
	rc = cache_state_commit(f->dir, &ns, f->err, f->errlen);
	if (rc == 0) {
		f->r->generation = ns.generation;
		f->r->slot = ns.active;
	}
	return rc;
}

/* Steps 1 and 2: the state and the manifest. 1 when up to date. */
static int start(struct refresh *f, struct cache *c, const char *name)
{
	const struct cache_refresh_opts *o = f->o;
	char why[512];
	int rc;

	rc = cache_image_dir(c, name, true, &f->dir, f->err, f->errlen);
	if (rc < 0)
		return rc;
	if (flock(f->dir, LOCK_EX | LOCK_NB) < 0)
		return rb_errfmt(f->err, f->errlen, errno == EWOULDBLOCK ? -EBUSY : -errno,
				 "%s: another refresh of this image is running", name);
	rc = cache_state_read(f->dir, &f->st, &f->old, why, sizeof(why));
	if (rc == -ENOENT) {
		rc = 0;
	} else if (rc < 0) {
		if (!o->force || rc == -ENOMEM)
			return rb_errfmt(f->err, f->errlen, rc, "%s: the state is not trusted: %s "
					 "(--force starts the state over)", name, why);
		rb_warn("%s: the state is not trusted (%s): started over", name, why);
		memset(&f->st, 0, sizeof(f->st));
		f->st.active = -1;
		rc = 0;
	}
	if (f->manifest && (rc = read_manifest(f)) < 0)
		return rc;
	if (f->have_m && o->expect_sha256 &&
	    (strcmp(f->m.sha256, o->expect_sha256) || (o->expect_size && f->m.size != o->expect_size)))
		return rb_errfmt(f->err, f->errlen, -ESTALE, "%s: the manifest now names another "
				 "image (sha256 %.16s..., %" PRIu64 " bytes) than the one the boot "
				 "chose (sha256 %.16s...): changed or rolled back since; nothing "
				 "refreshed", f->manifest, f->m.sha256, f->m.size, o->expect_sha256);
	if (f->have_m && f->st.active >= 0) {
		const struct cstate_slot *a = &f->st.slot[f->st.active];
		char hex[65];

		hex_encode(a->sha256, 32, hex);
		/* A slot marked bad is written again (into the other slot,
		 * as any refresh: the active one is never written). */
		if (a->size == f->m.size && !strcmp(hex, f->m.sha256) && !a->bad) {
			f->r->up_to_date = true;
			return 1;
		}
	}
	return 0;
}

/* Why the delta is not used, said once: it is no error (the chunks
 * serve). Returns 0, what try_delta returns for "the chunks instead". */
static int no_delta(struct refresh *f, bool warn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int no_delta(struct refresh *f, bool warn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->r->delta_why, sizeof(f->r->delta_why), fmt, ap);
	va_end(ap);
	f->r->delta = "not used";
	if (warn)
		rb_warn("delta: %s; the image's chunks instead", f->r->delta_why);
	return 0;
}

/* The delta's descriptor, read only, and its connection when it came
 * over HTTP (a chunked body's decoder goes with it). */
static void close_delta(int fd, struct http_conn *c)
{
	(void)close(fd);
	if (c)
		(void)http_close(c);
}

/* The delta's way (the head of this file): 1 when the slot holds the
 * image, verified, with its index in *itext; 0 to go on with the chunks
 * (the slots closed again, f->new empty); -errno when the slot cannot be
 * written at all (the chunks could not either). */
static int try_delta(struct refresh *f, char **itext, size_t *ilen, uint8_t isum[32])
{
	const struct cstate_slot *a;
	char path[PATH_MAX], hex[65], why[512];
	uint8_t dsha[32];
	struct stat st, as;
	uint64_t dsize;
	struct http_conn dc;
	bool dc_open = false;
	int dfd, rc;

	if (f->o->no_delta || !f->have_m)
		return 0;
	if (!f->m.delta[0])
		return f->o->delta ? no_delta(f, true, "%s: the manifest names no delta",
					      f->o->delta) : 0;
	if (f->st.active < 0)
		return no_delta(f, false, "no image in the cache to apply it to");
	a = &f->st.slot[f->st.active];
	hex_encode(a->sha256, 32, hex);
	if (a->bad)
		return no_delta(f, false, "slot %c is marked bad", cstate_slot_name(f->st.active));
	if (strcmp(hex, f->m.delta_from))
		return no_delta(f, false, "made from another image than slot %c's",
				cstate_slot_name(f->st.active));
	if (f->o->delta)
		rc = snprintf(path, sizeof(path), "%s", f->o->delta) >= (int)sizeof(path) ?
		     -ENAMETOOLONG : 0;
	else
		rc = beside_image(f, f->m.delta, path, sizeof(path));
	if (rc < 0)
		return no_delta(f, true, "%s: path too long", f->m.delta);
	if (source_is_url(path)) {
		/* One GET, read as a stream: delta_apply() holds it to its
		 * length and SHA-256. */
		rc = http_init(&dc, path, f->o->timeout_ms, why, sizeof(why));
		if (rc == 0)
			rc = http_stream_open(&dc, &dfd, why, sizeof(why));
		if (rc < 0)
			return no_delta(f, true, "%s", why);
		dc_open = true;
		dsize = dc.size;
	} else {
		dfd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (dfd < 0 || fstat(dfd, &st) < 0 || !S_ISREG(st.st_mode)) {
			rc = dfd < 0 ? errno : EINVAL;
			if (dfd >= 0)
				close_delta(dfd, dc_open ? &dc : NULL);
			return no_delta(f, true, "%s: %s", path, rc == EINVAL ?
					"not a regular file" : strerror(rc));
		}
		dsize = (uint64_t)st.st_size;
	}
	/* A delta larger than the image saves nothing: not read. */
	if (dsize > f->m.size) {
		close_delta(dfd, dc_open ? &dc : NULL);
		return no_delta(f, true, "%s: %" PRIu64 " bytes, larger than the image", path,
				dsize);
	}
	f->new.size = f->m.size;
	rc = open_slots(f);
	if (rc < 0) {
		close_delta(dfd, dc_open ? &dc : NULL);
		f->new.size = 0;
		return rc;
	}
	if (f->afd < 0 || fstat(f->afd, &as) < 0 || (uint64_t)as.st_size != a->size) {
		close_delta(dfd, dc_open ? &dc : NULL);
		rc = no_delta(f, true, "slot %c is not the %" PRIu64 " bytes its state says",
			      cstate_slot_name(f->st.active), a->size);
		goto back;
	}
	hex_decode(f->m.delta_sha256, 32, dsha);
	rc = delta_apply(f->afd, a->size, dfd, dsize, dsha, f->sfd, f->m.size, why, sizeof(why));
	close_delta(dfd, dc_open ? &dc : NULL);
	/* Read from the server, whatever came of it. */
	f->r->bytes_network += dsize;
	f->r->bytes_delta = dsize;
	if (rc < 0) {
		rc = no_delta(f, true, "%s: %s", path, why);
		goto back;
	}
	/* verify() holds it to the manifest: the sum the copy must have is
	 * the manifest's, and the slot read back from the disk must have it. */
	hex_decode(f->m.sha256, 32, f->sum);
	rc = verify(f);
	if (rc < 0) {
		rc = no_delta(f, true, "%s", f->err);
		goto back;
	}
	/* From the slot's start (the check above read it to its end). */
	rc = lseek(f->sfd, 0, SEEK_SET) < 0 ? -errno : 0;
	if (rc < 0)
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	else
		rc = cindex_build(f->sfd, &f->new, why, sizeof(why));
	if (rc == 0 && f->new.size != f->m.size) {
		rc = -EIO;
		snprintf(why, sizeof(why), "%" PRIu64 " bytes read, not %" PRIu64, f->new.size,
			 f->m.size);
	}
	if (rc == 0)
		rc = index_text(&f->new, itext, ilen, isum);
	if (rc < 0) {
		rc = no_delta(f, true, "slot %c: its index: %s", cstate_slot_name(f->target),
			      rc == -ENOMEM ? "out of memory" : why);
		goto back;
	}
	f->r->index_from = "slot";
	f->r->delta = "applied";
	return 1;
back:
	/* The chunks start again from the slots' opening. */
	free(*itext);
	*itext = NULL;
	cindex_free(&f->new);
	memset(&f->new, 0, sizeof(f->new));
	f->r->sha256[0] = '\0';
	close_fd(&f->sfd);
	close_fd(&f->afd);
	return rc;
}

const char *cache_image_name(const char *image)
{
	const char *slash = strrchr(image, '/');

	return slash ? slash + 1 : image;
}

int cache_refresh(struct cache *c, const struct cache_refresh_opts *o,
		  struct cache_refresh_result *r, char *err, size_t errlen)
{
	struct refresh f;
	const char *name = o->name;
	char *itext = NULL;
	size_t ilen = 0;
	uint8_t isum[32];
	struct source_spec sp = { .fd = -1, .seekable = true };
	bool http = source_is_url(o->image);
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&f, 0, sizeof(f));
	f.o = o;
	f.r = r;
	f.err = err;
	f.errlen = errlen;
	f.dir = f.img.fd = f.afd = f.sfd = -1;
	f.st.active = -1;
	f.image = sp.name = o->image;
	f.manifest = o->manifest;
	/* Over HTTP, the manifest is what the image's bytes are checked by:
	 * fetched beside it unless given, as `ramboot load` does. */
	if (http && !o->manifest) {
		if ((size_t)snprintf(f.murl, sizeof(f.murl), "%s.manifest", o->image) >=
		    sizeof(f.murl)) {
			rc = rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: URL too long", o->image);
			goto out;
		}
		f.manifest = f.murl;
	}
	if (!name)
		name = cache_image_name(o->image);
	rc = start(&f, c, name);
	if (rc == 1) {
		r->slot = f.st.active;
		r->generation = f.st.generation;
		r->size = f.m.size;
		snprintf(r->sha256, sizeof(r->sha256), "%s", f.m.sha256);
		rc = 0;
		goto out;
	}
	if (rc < 0 || (http && (rc = refresh_http_follow(&f)) < 0))
		goto out;
	rc = try_delta(&f, &itext, &ilen, isum);
	if (rc == 1) {
		r->size = f.m.size;
		rc = commit(&f, itext, ilen, isum);
		goto out;
	}
	if (rc < 0)
		goto out;
	/* Read at the offsets of its chunks: a file or a block device, or
	 * by ranged requests (the index first: nothing of the image is
	 * requested when it cannot be had). */
	if (http)
		rc = (rc = new_index(&f)) < 0 ? rc : refresh_http_open(&f);
	else if ((rc = source_open(&f.img, &sp, err, errlen)) == 0)
		rc = new_index(&f);
	if (rc < 0)
		goto out;
	if (f.img.size != f.new.size) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes, its index says %" PRIu64,
			       f.image, f.img.size, f.new.size);
		goto out;
	}
	r->size = f.new.size;
	rc = index_text(&f.new, &itext, &ilen, isum);
	if (rc < 0) {
		rc = rb_errfmt(err, errlen, rc, "the index: %s", strerror(-rc));
		goto out;
	}
	/* Without a manifest, the same index is the same image. */
	if (!f.have_m && f.st.active >= 0 && !f.st.slot[f.st.active].bad &&
	    !memcmp(isum, f.st.slot[f.st.active].cindex_sha256, 32)) {
		hex_encode(f.st.slot[f.st.active].sha256, 32, r->sha256);
		if (not_chosen(&f, r->sha256, f.st.slot[f.st.active].size)) {
			r->sha256[0] = '\0';
			rc = -ESTALE;
			goto out;
		}
		r->up_to_date = true;
		r->slot = f.st.active;
		r->generation = f.st.generation;
		goto out;
	}
	if ((rc = open_slots(&f)) < 0)
		goto out;
	reindex_active(&f);
	if ((rc = fill(&f)) < 0 || (rc = verify(&f)) < 0)
		goto out;
	rc = commit(&f, itext, ilen, isum);
out:
	if (o->slot_fd) {
		char sname[16];

		*o->slot_fd = -1;
		if (rc == 0 && f.dir >= 0) {
			cache_slot_name(r->slot, NULL, sname, sizeof(sname));
			*o->slot_fd = openat(f.dir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (*o->slot_fd < 0)
				rb_debug("slot %s: %s", sname, strerror(errno));
		}
	}
	/* The room back: the slot was not valid anyway. */
	if (rc < 0 && f.sfd >= 0 && ftruncate(f.sfd, 0) < 0)
		rb_debug("slot %c: not truncated: %s", cstate_slot_name(f.target), strerror(errno));
	close_fd(&f.sfd);
	close_fd(&f.afd);
	(void)source_close(&f.img);   /* read only */
	refresh_http_close(&f);
	close_fd(&f.dir);             /* the lock goes with it */
	free(itext);
	free(f.mtext);
	if (f.have_m)
		manifest_free(&f.m);
	cindex_free(&f.old);
	cindex_free(&f.new);
	return rc;
}
