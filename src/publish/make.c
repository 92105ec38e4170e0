// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * publish_make() (publish.h): the image read (step 2 of publish.c's
 * order), its manifest, hash tree, chunk index and delta built in memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "codec/codec.h"
#include "codec/delta.h"
#include "load/load.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "lib/hex.h"
#include "lib/path.h"
#include "lib/sha256.h"
#include "lib/units.h"
#include "publish/publish.h"
#include "trust/sign.h"
#include "format/verity.h"

static int raw_precheck(const struct publish_req *req, const char *opt, int fd,
			const struct stat *st, char *err, size_t errlen)
{
	const struct codec *c = NULL;
	uint8_t magic[64];
	ssize_t n;

	if (!S_ISREG(st->st_mode))
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a regular file", req->image);
	if (!strcmp(req->decompress, "auto")) {
		n = pread_full(fd, magic, sizeof(magic), 0);
		if (n < 0)
			return rb_errfmt(err, errlen, (int)n, "%s: %s", req->image,
					 strerror((int)-n));
		c = codec_detect(magic, (size_t)n);
	} else if (strcmp(req->decompress, "none")) {
		c = codec_by_name(req->decompress);
	}
	if (c && c != &codec_none)
		return rb_errfmt(err, errlen, -EINVAL, "%s: %s-compressed: %s needs a raw "
				 "image, such as the squashfs itself (it covers the "
				 "decompressed image a client mounts)", req->image, c->name, opt);
	return 0;
}

static int verity_precheck(const struct publish_req *req, int fd, const struct stat *st,
			   char *err, size_t errlen)
{
	int rc = raw_precheck(req, "--verity", fd, st, err, errlen);

	if (rc < 0)
		return rc;
	if (st->st_size == 0 || st->st_size % VERITY_BLOCK)
		return rb_errfmt(err, errlen, -EINVAL, "%s: %jd bytes, not a whole number of "
				 "4096-byte blocks: --verity refused (a tail would be left "
				 "unverified)", req->image, (intmax_t)st->st_size);
	return 0;
}

/* The name of a side file beside the image into out (a manifest name
 * field, MANIFEST_NAME_MAX + 1): given, else the image's base name, the
 * suffix and the first PUBLISH_HASH_HEX digits of hex. 0 or -errno. */
static int side_name(const struct publish_req *req, const char *given, const char *suffix,
		     const char *hex, char out[MANIFEST_NAME_MAX + 1], const char *what,
		     char *err, size_t errlen)
{
	const char *base = strrchr(req->image, '/');
	int rc;

	base = base ? base + 1 : req->image;
	if (given)
		rc = snprintf(out, MANIFEST_NAME_MAX + 1, "%s", given);
	else
		rc = snprintf(out, MANIFEST_NAME_MAX + 1, "%s%s%.*s", base, suffix,
			      PUBLISH_HASH_HEX, hex);
	if (rc < 0 || rc > MANIFEST_NAME_MAX)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: name too long for %s beside it",
				 req->image, what);
	return 0;
}

/* Still the file that was read, as it was: the same inode at the name,
 * size and mtime as before. */
static int unchanged(const char *image, int fd, const struct stat *st0, char *err,
		     size_t errlen)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0 || stat(image, &b) < 0 ||
	    a.st_size != st0->st_size || a.st_mtim.tv_sec != st0->st_mtim.tv_sec ||
	    a.st_mtim.tv_nsec != st0->st_mtim.tv_nsec || b.st_dev != st0->st_dev ||
	    b.st_ino != st0->st_ino)
		return rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read (size, "
				 "mtime or file); nothing written", image);
	return 0;
}

static int build_tree(const struct publish_req *req, int fd, struct publish_made *mk,
		      char *err, size_t errlen)
{
	struct verity_params p;
	uint8_t root[VERITY_DIGEST];
	size_t done = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	p.data_blocks = (uint64_t)mk->st.st_size / VERITY_BLOCK;
	p.salt_len = VERITY_SALT_DEFAULT;
	while (done < p.salt_len) {
		ssize_t n = getrandom(p.salt + done, p.salt_len - done, 0);

		if (n < 0 && errno != EINTR)
			return rb_errfmt(err, errlen, -errno, "getrandom: %s", strerror(errno));
		done += n > 0 ? (size_t)n : 0;
	}
	rc = verity_build(fd, &p, &mk->tree, &mk->tree_len, root, err, errlen);
	if (rc < 0)
		return rc;
	verity_hex(root, VERITY_DIGEST, mk->m.verity_root);
	verity_hex(p.salt, p.salt_len, mk->m.verity_salt);
	return side_name(req, req->hash_name, PUBLISH_HASH_SUFFIX, mk->m.verity_root,
			 mk->m.verity_hash, "a hash file", err, errlen);
}

/* The chunk index, by a plain read of the image from its start: its
 * text, and its name and SHA-256 in the manifest. */
static int build_cindex(const struct publish_req *req, int fd, struct publish_made *mk,
			char *err, size_t errlen)
{
	struct cindex ci;
	uint8_t sum[32];
	char why[256];
	ssize_t n;
	int rc;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", req->image, strerror(errno));
	rc = cindex_build(fd, &ci, why, sizeof(why));
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: the chunk index: %s", req->image, why);
	if (ci.size != mk->m.size) {
		cindex_free(&ci);
		return rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read; "
				 "nothing written", req->image);
	}
	mk->cindex = malloc(cindex_text_max(ci.n) + 1);
	n = mk->cindex ? cindex_format(&ci, mk->cindex, cindex_text_max(ci.n) + 1) : -ENOMEM;
	mk->cindex_chunks = ci.n;
	cindex_free(&ci);
	if (n < 0)
		return rb_errfmt(err, errlen, (int)n, "the chunk index: %s", strerror((int)-n));
	mk->cindex_len = (size_t)n;
	sha256(mk->cindex, mk->cindex_len, sum);
	hex_encode(sum, 32, mk->m.cindex_sha256);
	return side_name(req, req->cindex_name, PUBLISH_CINDEX_SUFFIX, mk->m.cindex_sha256,
			 mk->m.cindex, "a chunk index", err, errlen);
}

struct hash_args {
	const void *p;
	size_t n;
	uint8_t *md;
};

static int hash_fn(void *arg)
{
	struct hash_args *h = arg;

	sha256(h->p, h->n, h->md);
	return 0;
}

struct make_args {
	const void *old;
	size_t olen;
	const void *new_;
	size_t nlen, cap;
	void **out;
	size_t *outlen;
	char *err;
	size_t errlen;
};

static int make_fn(void *arg)
{
	struct make_args *a = arg;

	return delta_make(a->old, a->olen, a->new_, a->nlen, a->cap, a->out, a->outlen, a->err,
			  a->errlen);
}

/* The delta holds both images in memory (their mappings, read through)
 * and zstd's match state for a window of the older one: 3.2 times the
 * image's size in RSS, measured for a delta of one image to a copy of
 * itself, 64 and 128 MiB. Asked for is twice both images, with a margin:
 * past MemAvailable the kernel would reclaim the mappings under the
 * match finder, or the OOM killer end the publish. Short: a warning and
 * no delta (clients take the chunks). MemAvailable unknown: made. */
static bool delta_memory_ok(const char *from, uint64_t olen, uint64_t nlen)
{
	uint64_t avail, need = 2 * (olen + nlen);
	char a[32], b[32];

	if (rb_meminfo("MemAvailable", &avail) < 0 || avail >= need)
		return true;
	rb_warn("%s: the delta needs about %s of memory, MemAvailable is %s: no delta", from,
		fmt_size(need, a, sizeof(a)), fmt_size(avail, b, sizeof(b)));
	return false;
}

/* The delta from req->delta_from to the image (fd, read already): into
 * mk->delta and the manifest's delta keys. What makes a delta pointless
 * (the same image, an older image other than the one asked for, a delta
 * of more than half the image) is a warning and no delta; what keeps it
 * from being made (the older image unreadable) fails. */
static int build_delta(const struct publish_req *req, int fd, struct publish_made *mk,
		       char *err, size_t errlen)
{
	const char *from = req->delta_from;
	void *om = MAP_FAILED, *nm = MAP_FAILED;
	size_t olen = 0, nlen = (size_t)mk->m.size;
	uint8_t sum[32];
	struct stat st;
	int ofd, rc;

	if (mk->m.size != (uint64_t)mk->st.st_size)
		return rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read; nothing "
				 "written", req->image);
	ofd = open(from, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (ofd < 0 || fstat(ofd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = ofd < 0 ? -errno : -EINVAL;
		if (ofd >= 0)
			(void)close(ofd);
		return rb_errfmt(err, errlen, rc, "--delta-from %s: %s", from,
				 rc == -EINVAL ? "not a regular file" : strerror(-rc));
	}
	if (st.st_dev == mk->st.st_dev && st.st_ino == mk->st.st_ino) {
		(void)close(ofd);
		rb_warn("%s is the image itself: no delta", from);
		return 0;
	}
	olen = (size_t)st.st_size;
	if (!delta_memory_ok(from, olen, nlen)) {
		(void)close(ofd);
		return 0;
	}
	if (olen)
		om = mmap(NULL, olen, PROT_READ, MAP_PRIVATE, ofd, 0);
	if (nlen)
		nm = mmap(NULL, nlen, PROT_READ, MAP_PRIVATE, fd, 0);
	(void)close(ofd);             /* read only; the mapping stays */
	if ((olen && om == MAP_FAILED) || (nlen && nm == MAP_FAILED)) {
		rc = rb_errfmt(err, errlen, -errno, "the delta: mmap: %s", strerror(errno));
		goto out;
	}
	/* The two images are read through their mappings: a fault there
	 * (a file cut short under it, an I/O error) fails the publish with
	 * an error, it does not kill it. */
	{
		struct hash_args h = { olen ? om : "", olen, sum };
		char why[256];

		rc = delta_guard(hash_fn, &h, why, sizeof(why));
		if (rc < 0) {
			rb_errfmt(err, errlen, rc, "--delta-from %s: %s", from, why);
			goto out;
		}
	}
	hex_encode(sum, 32, mk->m.delta_from);
	if ((req->delta_from_sha256 && strcmp(mk->m.delta_from, req->delta_from_sha256)) ||
	    !strcmp(mk->m.delta_from, mk->m.sha256)) {
		rb_warn("%s: %s: no delta", from, req->delta_from_sha256 &&
			strcmp(mk->m.delta_from, req->delta_from_sha256) ?
			"not the image the previous manifest describes" : "the same image");
		rc = 0;
		goto none;
	}
	{
		struct make_args a = { olen ? om : NULL, olen, nlen ? nm : NULL, nlen,
				       nlen / 2 + 4096, &mk->delta, &mk->delta_len, err, errlen };

		rc = delta_guard(make_fn, &a, err, errlen);
	}
	if (rc == -EFBIG) {
		rb_warn("%s: %s: no delta (the chunks serve)", from, err);
		rc = 0;
		goto none;
	}
	if (rc < 0)
		goto out;
	/* publish_make() checks next that the image did not change. */
	sha256(mk->delta, mk->delta_len, sum);
	hex_encode(sum, 32, mk->m.delta_sha256);
	rc = side_name(req, req->delta_name, PUBLISH_DELTA_SUFFIX, mk->m.delta_sha256,
		       mk->m.delta, "a delta", err, errlen);
	goto out;
none:
	mk->m.delta_from[0] = '\0';
out:
	if (om != MAP_FAILED)
		(void)munmap(om, olen);
	if (nm != MAP_FAILED)
		(void)munmap(nm, nlen);
	return rc;
}

/* --content-addressed: the name of the image's bytes, from the SHA-256
 * of the image a client gets, into the manifest's "image". */
static int image_name(const struct publish_req *req, struct publish_made *mk, char *err,
		      size_t errlen)
{
	const char *base = strrchr(req->image, '/');
	int rc;

	base = base ? base + 1 : req->image;
	rc = snprintf(mk->m.image, sizeof(mk->m.image), "%s%s%.*s", base, PUBLISH_IMAGE_SUFFIX,
		      PUBLISH_HASH_HEX, mk->m.sha256);
	if (rc < 0 || (size_t)rc >= sizeof(mk->m.image))
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: name too long for a "
				 "content-addressed name beside it", req->image);
	return 0;
}

/* What --verity and --cindex need of the image, before it is read: a
 * raw image of whole blocks, a version 2 manifest. 0 or -errno. */
static int prechecks(const struct publish_req *req, int fd, const struct stat *st, char *err,
		     size_t errlen)
{
	int rc;

	if (req->verity) {
		rc = verity_precheck(req, fd, st, err, errlen);
		/* manifest.h: the verity keys are version 2 keys. */
		if (rc == 0 && !req->chunk_size)
			rc = rb_errfmt(err, errlen, -EINVAL, "--verity needs a version 2 manifest "
				       "(--chunk-size other than 0)");
		if (rc < 0)
			return rc;
	}
	if (req->cindex) {
		rc = raw_precheck(req, "--cindex", fd, st, err, errlen);
		/* manifest.h: the cindex keys are version 2 keys. */
		if (rc == 0 && !req->chunk_size)
			rc = rb_errfmt(err, errlen, -EINVAL, "--cindex needs a version 2 manifest "
				       "(--chunk-size other than 0)");
		if (rc < 0)
			return rc;
	}
	if (req->delta_from) {
		/* A delta rebuilds the raw image a cache holds. */
		rc = raw_precheck(req, "--delta-from", fd, st, err, errlen);
		if (rc == 0 && !req->chunk_size)
			rc = rb_errfmt(err, errlen, -EINVAL, "--delta-from needs a version 2 "
				       "manifest (--chunk-size other than 0)");
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* mk->m as text, signed with req->key when there is one, into mk->text
 * and mk->len. 0 or -errno. */
static int manifest_text(const struct publish_req *req, struct publish_made *mk, char *err,
			 size_t errlen)
{
	size_t cap = manifest_format_max(&mk->m);
	char *buf = malloc(cap);
	int n = buf ? manifest_format(&mk->m, buf, cap) : -ENOMEM;

	if (n < 0) {
		free(buf);
		return rb_errfmt(err, errlen, n, "cannot format the manifest: %s", strerror(-n));
	}
	if (req->key) {
		char *sbuf = malloc((size_t)n + SIGN_LINE_MAX);
		long sn = sbuf ? sign_text(buf, (size_t)n, req->key, sbuf,
					   (size_t)n + SIGN_LINE_MAX, err, errlen)
			       : rb_errfmt(err, errlen, -ENOMEM, "out of memory");

		free(buf);
		if (sn < 0) {
			free(sbuf);
			return (int)sn;
		}
		buf = sbuf;
		n = (int)sn;
	}
	mk->text = buf;
	mk->len = (size_t)n;
	return 0;
}

int publish_make(const struct publish_req *req, struct publish_made *mk, char *err,
		 size_t errlen)
{
	struct load_opts o;
	struct load_result r;
	uint8_t (*chunk)[32] = NULL;
	int fd, rc;

	memset(mk, 0, sizeof(*mk));
	mk->exit = RB_EXIT_FAIL;
	if (req->key) {
		/* A key that cannot sign fails before the image is read. */
		rc = sign_keyid_file(req->key, mk->keyid, err, errlen);
		if (rc < 0)
			return rc;
	}
	/* A regular file is opened here too, to see it did not change
	 * between the reads; stdin, a pipe or a device only by the loader. */
	if (strcmp(req->image, "-") && stat(req->image, &mk->st) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", req->image, strerror(errno));
	if ((req->verity || req->cindex || req->delta_from) && !S_ISREG(mk->st.st_mode))
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a regular file: %s needs "
				 "the image file", req->image, req->verity ? "--verity" :
				 req->cindex ? "--cindex" : "--delta-from");
	fd = S_ISREG(mk->st.st_mode) ? open(req->image, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 && S_ISREG(mk->st.st_mode))
		return rb_errfmt(err, errlen, -errno, "%s: %s", req->image, strerror(errno));
	if (fd >= 0 && fstat(fd, &mk->st) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", req->image, strerror(errno));
		goto out;
	}
	rc = prechecks(req, fd, &mk->st, err, errlen);
	if (rc < 0)
		goto out;
	load_opts_init(&o);
	o.progress = PROGRESS_NONE;
	o.stall_timeout = 0;
	o.source = req->image;
	o.decompress = req->decompress;
	if (req->threads > 0)
		o.threads = req->threads;
	if (req->chunk_size && !(chunk = calloc(MANIFEST_CHUNKS_MAX, sizeof(*chunk)))) {
		rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	rc = load_hash_only(&o, &r, req->chunk_size, chunk, MANIFEST_CHUNKS_MAX);
	if (rc) {
		mk->exit = rc;
		if (r.err == LOAD_SIGNAL)
			mk->signo = r.signo;
		rc = rb_errfmt(err, errlen, -EIO, "%s%s", r.error, r.err == LOAD_HASH &&
			       req->chunk_size ? " (a larger --chunk-size is needed)" : "");
		goto out;
	}
	mk->m.size = r.bytes_out;
	mk->m.memlimit = req->memlimit;
	memcpy(mk->m.sha256, r.sha256, sizeof(mk->m.sha256));
	snprintf(mk->m.compression, sizeof(mk->m.compression), "%s", r.codec);
	mk->m.chunk_size = req->chunk_size;
	mk->m.nchunks = r.chunks;
	if (req->verity) {
		if (r.bytes_out != (uint64_t)mk->st.st_size) {
			rc = rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read; "
				       "nothing written", req->image);
			goto out;
		}
		rc = build_tree(req, fd, mk, err, errlen);
		if (rc < 0)
			goto out;
	}
	if (req->cindex) {
		rc = build_cindex(req, fd, mk, err, errlen);
		if (rc < 0)
			goto out;
	}
	if (req->delta_from) {
		rc = build_delta(req, fd, mk, err, errlen);
		if (rc < 0)
			goto out;
	}
	if (fd >= 0) {
		rc = unchanged(req->image, fd, &mk->st, err, errlen);
		if (rc < 0)
			goto out;
	}
	if (req->ca) {
		rc = image_name(req, mk, err, errlen);
		if (rc < 0)
			goto out;
	}
	mk->m.chunk = chunk;
	rc = manifest_text(req, mk, err, errlen);
	mk->m.chunk = NULL;
out:
	free(chunk);
	if (fd >= 0 && close_checked(fd) < 0 && rc == 0)
		rc = rb_errfmt(err, errlen, -EIO, "%s: close failed", req->image);
	if (rc == 0)
		mk->exit = RB_EXIT_OK;
	return rc;
}
