// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot publish: the manifest of an image, signed, its dm-verity hash
 * tree and its chunk index, written so that a client reading the manifest
 * at any moment finds a complete one whose side files are there
 * (publish.h).
 *
 * The order of a publish:
 *   1. lock the image's directory (one publish at a time), refuse a
 *      manifest name that is a link or not a regular file;
 *   2. read the image: size, SHA-256, chunks, tree, chunk index; it must
 *      not change meanwhile;
 *   3. write the tree under a new name, IMAGE.verity-ROOT16, then the
 *      index, IMAGE.cindex-SHA16 (each aside, fsync, link, directory
 *      fsync);
 *   3b. with --content-addressed, the image under its own name,
 *      IMAGE.sha256-SHA16 (fsync of the image, then a hard link, or a
 *      reflink or copy made aside, synced and named; directory fsync);
 *   4. write the manifest naming them (aside, fsync, rename, directory
 *      fsync): the commit point;
 *   5. remove the hash files and indexes neither the new manifest nor
 *      the previous one names, nor IMAGE.old.manifest: the manifest of
 *      LTSP's backup IMAGE.old, which `ltsp image --revert` brings back
 *      as IMAGE. A client that read the previous manifest a moment ago
 *      may still be opening its side files: they stay until the next
 *      publish. Content-addressed images stay longer: those three
 *      manifests' and the --keep newest.
 * A kill before 4 leaves the old manifest and its side files; after it,
 * the new ones. A kill in 3b leaves at most a complete file at the new
 * name, which no manifest names yet (the next publish of that image
 * names it; else it goes once it is not among the --keep newest), or a
 * temporary, which the next publish removes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "codec/codec.h"
#include "codec/delta.h"
#include "lib/guard.h"
#include "load/load.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "lib/hex.h"
#include "lib/outfile.h"
#include "lib/path.h"
#include "lib/sha256.h"
#include "lib/units.h"
#include "publish/publish.h"
#include "publish/publishint.h"
#include "trust/sign.h"
#include "format/verity.h"

/* IMAGE + suffix + PUBLISH_HASH_HEX lower-case hex digits. */
static bool is_side_name(const char *image_name, const char *suffix, const char *name)
{
	size_t b = strlen(image_name), s = strlen(suffix);

	return strlen(name) == b + s + PUBLISH_HASH_HEX && !strncmp(name, image_name, b) &&
	       !strncmp(name + b, suffix, s) && hex_lower(name + b + s, PUBLISH_HASH_HEX);
}

bool publish_is_hash_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_HASH_SUFFIX, name);
}

bool publish_is_cindex_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_CINDEX_SUFFIX, name);
}

bool publish_is_delta_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_DELTA_SUFFIX, name);
}

bool publish_is_image_name(const char *image_name, const char *name)
{
	return is_side_name(image_name, PUBLISH_IMAGE_SUFFIX, name);
}

int publish_dir_open(const char *image, const char **base)
{
	const char *slash = strrchr(image, '/');
	char dir[PATH_MAX];
	int fd;

	*base = slash ? slash + 1 : image;
	if (!**base)
		return -EISDIR;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == image)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - image) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - image), image);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int publish_hash_name(const char *image, const char *arg, char *out, size_t outlen,
		      char *err, size_t errlen)
{
	return publish_side_name(image, "--verity", arg, out, outlen, err, errlen);
}

int publish_side_name(const char *image, const char *opt, const char *arg, char *out,
		      size_t outlen, char *err, size_t errlen)
{
	const char *slash = strrchr(arg, '/'), *name = slash ? slash + 1 : arg, *base;
	struct stat a, b;
	int ifd, afd;

	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > MANIFEST_NAME_MAX || strlen(name) >= outlen)
		return rb_errfmt(err, errlen, -EINVAL, "%s: '%s' is not a file name", opt, arg);
	if (slash) {
		/* A path: its directory must be the image's, the hash file is
		 * found beside the image by its name alone. */
		char dir[PATH_MAX];

		if (slash == arg)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - arg), arg);
		ifd = publish_dir_open(image, &base);
		if (ifd < 0)
			return rb_errfmt(err, errlen, ifd, "%s: cannot open its directory", image);
		afd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (afd < 0 || fstat(ifd, &a) < 0 || fstat(afd, &b) < 0 ||
		    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			if (afd >= 0)
				(void)close(afd);
			(void)close(ifd);
			return rb_errfmt(err, errlen, -EINVAL, "%s: '%s' is not in the "
					 "directory of %s (the manifest names the file beside "
					 "the image)", opt, arg, image);
		}
		(void)close(afd);
		(void)close(ifd);
	}
	snprintf(out, outlen, "%s", name);
	return 0;
}

int publish_fill_at(int dirfd, const char *name, bool replace, const struct stat *protect,
		    int (*fill)(int fd, void *arg), void *arg, const char *what, char *err,
		    size_t errlen)
{
	struct outfile of;
	int rc;

	rc = outfile_openat(&of, dirfd, name, 0644, OUTFILE_SYNC | (replace ? OUTFILE_REPLACE : 0),
			    protect, err, errlen);
	if (rc < 0)
		return rc;
	rc = fill(of.fd, arg);
	if (rc < 0) {
		outfile_abort(&of);
		return rb_errfmt(err, errlen, rc, "%s: %s%s", name, what, strerror(-rc));
	}
	rc = outfile_commit(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	return 0;
}

struct buf_fill {
	const void *buf;
	size_t len;
};

static int buf_fill(int fd, void *arg)
{
	const struct buf_fill *b = arg;

	return write_all(fd, b->buf, b->len);
}

int publish_write_at(int dirfd, const char *name, const void *buf, size_t len, bool replace,
		     const struct stat *protect, char *err, size_t errlen)
{
	struct buf_fill b = { buf, len };

	return publish_fill_at(dirfd, name, replace, protect, buf_fill, &b, "write error: ", err,
			       errlen);
}

void publish_made_free(struct publish_made *mk)
{
	free(mk->text);
	free(mk->tree);
	free(mk->cindex);
	free(mk->delta);
	mk->text = NULL;
	mk->tree = NULL;
	mk->cindex = NULL;
	mk->delta = NULL;
	manifest_free(&mk->m);
}

/* --verity and --cindex, before a byte is hashed: the tree and the index
 * cover what a client maps, so the file must be that image itself. */
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

bool publish_is_stale_temp(const char *base, const char *manifest, const char *name)
{
	size_t n = strlen(name), b = strlen(base), m = strlen(manifest);

	if (n < 10 || name[0] != '.' || name[n - 9] != '.' || !hex_lower(name + n - 8, 8))
		return false;
	if (n - 10 == m && !strncmp(name + 1, manifest, m))
		return true;
	if (n - 10 != b + strlen(PUBLISH_HASH_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_CINDEX_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_IMAGE_SUFFIX) + PUBLISH_HASH_HEX &&
	    n - 10 != b + strlen(PUBLISH_DELTA_SUFFIX) + PUBLISH_HASH_HEX)
		return false;
	{
		char inner[NAME_MAX + 1];

		snprintf(inner, sizeof(inner), "%.*s", (int)(n - 10), name + 1);
		return publish_is_hash_name(base, inner) || publish_is_cindex_name(base, inner) ||
		       publish_is_image_name(base, inner) || publish_is_delta_name(base, inner);
	}
}

bool publish_kept(const char *const keep[SWEEP_KEEP], const char *name)
{
	size_t i;

	for (i = 0; i < SWEEP_KEEP; i++)
		if (keep[i] && !strcmp(keep[i], name))
			return true;
	return false;
}

/* The files a manifest names, into keep[0..SWEEP_NAMED) (NULL: none). */
static void keep_named(const struct manifest *m, bool have, const char **keep)
{
	keep[0] = have && m->verity_root[0] ? m->verity_hash : NULL;
	keep[1] = have && m->cindex[0] ? m->cindex : NULL;
	keep[2] = have && m->image[0] ? m->image : NULL;
	keep[3] = have && m->delta[0] ? m->delta : NULL;
}

DIR *publish_sweep_open(int dirfd, const char *prefix, const char *base, const char *what)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		if (fd >= 0)
			(void)close(fd);
		rb_warn("cannot list the directory of %s%s: %s stay", prefix, base, what);
	}
	return dir;
}

void publish_sweep_close(DIR *dir, int dirfd, const char *prefix, bool removed)
{
	(void)closedir(dir);
	if (removed && fsync(dirfd) < 0)
		rb_warn("%s: directory fsync failed: %s", prefix[0] ? prefix : ".", strerror(errno));
}

/* Remove what publish_run no longer needs: the hash files and chunk
 * indexes none of keep names (the new manifest's, the previous one's and
 * the backup image's, IMAGE.old.manifest), and temporaries of an earlier
 * publish that was killed. keep_all: the previous or the backup's
 * manifest could not be read, no side file is removed. */
static void sweep(int dirfd, const char *prefix, const char *base, const char *manifest,
		  const char *const keep[SWEEP_KEEP], bool keep_all)
{
	struct dirent *d;
	DIR *dir = publish_sweep_open(dirfd, prefix, base, "older hash files");
	bool removed = false;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		bool tmp = publish_is_stale_temp(base, manifest, d->d_name);

		if (!tmp && (keep_all || (!publish_is_hash_name(base, d->d_name) &&
					      !publish_is_cindex_name(base, d->d_name) &&
					      !publish_is_delta_name(base, d->d_name)) ||
			     publish_kept(keep, d->d_name)))
			continue;
		if (unlinkat(dirfd, d->d_name, 0) < 0) {
			rb_warn("%s%s: cannot remove: %s", prefix, d->d_name, strerror(errno));
			continue;
		}
		removed = true;
		if (!tmp)
			printf("removed %s%s\n", prefix, d->d_name);
	}
	publish_sweep_close(dir, dirfd, prefix, removed);
}

enum { OPT_VERITY = PUBLISH_OPT_OWN, OPT_CINDEX, OPT_CA, OPT_KEEP, OPT_DELTA, OPT_DELTA_FROM };

static const struct rb_optset optset = {
	.head = "Usage: ramboot publish [--sign=KEY] [--verity] [--cindex] [--chunk-size=SIZE]\n"
		"                       [--mem-limit=SIZE] [--content-addressed[=HOW] [--keep=N]]\n"
		"                       [--delta | --delta-from=OLD] IMAGE\n"
		"\n"
		"Write IMAGE.manifest (version 2, chunk hashes), with --verity the\n"
		"dm-verity hash tree IMAGE.verity-ROOT (ROOT: 16 hex digits of its root\n"
		"hash) and with --cindex the chunk index IMAGE.cindex-SHA (16 hex digits\n"
		"of its SHA-256) that it names; each aside, synced and renamed, the\n"
		"manifest last. A client reading IMAGE.manifest at any moment gets the old\n"
		"one or the new one, complete, with its side files. Side files older than\n"
		"the previous manifest's are removed, except those IMAGE.old.manifest\n"
		"names (the backup 'ltsp image --revert' brings back). Run it after each\n"
		"'ltsp image' (ltsp.conf's [ramboot_server] does).\n"
		"\n"
		"Options:\n",
	.opts = RB_OPTS(
		{ "sign", PUBLISH_OPT_SIGN, "=KEY",
		  "sign the manifest with the Ed25519 private key KEY" },
		{ "verity", OPT_VERITY, NULL,
		  "also write the hash tree (IMAGE must be raw, a\n"
		  "whole number of 4096-byte blocks)" },
		{ "cindex", OPT_CINDEX, NULL,
		  "also write the chunk index for local-disk caches\n"
		  "(IMAGE must be raw; reads it once more)" },
		{ "chunk-size", PUBLISH_OPT_CHUNK_SIZE, "=SIZE",
		  "bytes per chunk, a power of two from 64K to 1G\n"
		  "(default 4M)" },
		{ "mem-limit", PUBLISH_OPT_MEM_LIMIT, "=SIZE",
		  "decoder memory clients may use for this image" },
		{ "memlimit", PUBLISH_OPT_MEMLIMIT, "=SIZE", NULL },
		{ "content-addressed", OPT_CA, "[=HOW]",
		  "also name the image by its content,\n"
		  "IMAGE.sha256-HASH (16 hex digits of its SHA-256),\n"
		  "in the manifest: clients read that file, which a\n"
		  "rebuild of IMAGE never changes. HOW: link (default:\n"
		  "a hard link, else a reflink, else a copy) or copy\n"
		  "(a reflink, else a copy: never IMAGE's own file)" },
		{ "delta", OPT_DELTA, NULL,
		  "also write IMAGE.delta-SHA, a zstd delta that\n"
		  "rebuilds IMAGE from the image the previous manifest\n"
		  "describes (its content-addressed file, else\n"
		  "IMAGE.old), for local-disk caches that hold it; none\n"
		  "when that image is gone, the delta would be larger\n"
		  "than half of IMAGE or MemAvailable is short of twice\n"
		  "both images (IMAGE must be raw)" },
		{ "delta-from", OPT_DELTA_FROM, "=OLD",
		  "the same, from the older image file OLD" },
		{ "keep", OPT_KEEP, "=N",
		  "keep the N newest images so named (default 2), and\n"
		  "those the new, the previous and IMAGE.old.manifest\n"
		  "name; older ones are removed" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit codes: 0 published, 1 runtime error (nothing new is named: IMAGE\n"
		"unreadable, compressed or not whole blocks with --verity, changed while\n"
		"read, a link at IMAGE.manifest, a write error), 2 usage. A failed\n"
		"write of the summary to stdout after the manifest is named is a warning.\n",
	.indent = 6, .col = 24,
};

/* A manifest that publish replaces or keeps (PATH): true when it was
 * read into m. One that cannot be read (but is there) keeps every hash
 * file: the one it names is not known. */
static bool old_manifest(const char *path, struct manifest *m, bool *keep_all)
{
	char err[PATH_MAX + 128];
	int rc;

	memset(m, 0, sizeof(*m));
	rc = manifest_load(path, m, err, sizeof(err));
	if (rc == 0)
		return true;
	if (rc != -ENOENT) {
		*keep_all = true;
		rb_warn("%s: %s: no hash file is removed", path, err);
	}
	return false;
}

int publish_opt(const char *cmd, int c, const char *arg, bool v1_ok, struct publish_req *req)
{
	switch (c) {
	case PUBLISH_OPT_SIGN:
		req->key = arg;
		return 0;
	case PUBLISH_OPT_MEMLIMIT:
		rb_warn("--memlimit=%s: deprecated spelling, write --mem-limit=%s", arg, arg);
		/* fall through */
	case PUBLISH_OPT_MEM_LIMIT:
		return size_arg(cmd, "mem-limit", arg, UNIT_BYTES, &req->memlimit) < 0 ?
		       RB_EXIT_USAGE : 0;
	default:
		if (size_arg(cmd, "chunk-size", arg, UNIT_BYTES, &req->chunk_size) < 0)
			return RB_EXIT_USAGE;
		if ((req->chunk_size || !v1_ok) && !manifest_chunk_size_ok(req->chunk_size))
			return rb_usage(cmd, "--chunk-size: '%s' is not a power of two from 64K to "
					"1G%s", arg, v1_ok ? " (or 0)" : "");
		return 0;
	}
}

/* A side file (the hash tree, the chunk index), named by what it holds:
 * should it be there already (the same image and salt again, the same
 * index), it holds the same bytes, and is replaced by them. */
static int side_file_write(int dirfd, const char *name, const void *buf, size_t len,
			   const struct stat *protect, char *err, size_t errlen)
{
	int rc = publish_write_at(dirfd, name, buf, len, false, protect, err, errlen);

	if (rc == -EEXIST)
		rc = publish_write_at(dirfd, name, buf, len, true, protect, err, errlen);
	return rc;
}

/* The command line into req, and IMAGE checked: -1 to go on, else the
 * exit code (--help, a usage error, no image file). */
static int publish_args(int argc, char **argv, struct publish_req *req, unsigned *keep_n,
			bool *delta)
{
	struct rb_getopt g = { .set = &optset };
	struct stat st;
	bool keep_set = false;
	char *end;
	int c, w;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case PUBLISH_OPT_SIGN:
		case PUBLISH_OPT_CHUNK_SIZE:
		case PUBLISH_OPT_MEM_LIMIT:
		case PUBLISH_OPT_MEMLIMIT:
			if (publish_opt("publish", c, optarg, false, req))
				return RB_EXIT_USAGE;
			break;
		case OPT_VERITY: req->verity = true; break;
		case OPT_CINDEX: req->cindex = true; break;
		case OPT_DELTA: *delta = true; break;
		case OPT_DELTA_FROM: req->delta_from = optarg; break;
		case OPT_CA:
			w = !optarg ? PUBLISH_CA_LINK :
			    rb_word(optarg, RB_WORDS({ "link", PUBLISH_CA_LINK },
						     { "copy", PUBLISH_CA_COPY }));
			if (w < 0)
				return rb_usage("publish", "--content-addressed: '%s' is neither "
						   "link nor copy", optarg);
			req->ca = (enum publish_ca)w;
			break;
		case OPT_KEEP:
			errno = 0;
			*keep_n = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || *keep_n < 1 ||
			    *keep_n > PUBLISH_KEEP_MAX)
				return rb_usage("publish", "--keep: '%s' is not a number from 1 to %d",
						   optarg, PUBLISH_KEEP_MAX);
			keep_set = true;
			break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default:
			return rb_usage_option("publish", argv);
		}
	}
	if (keep_set && !req->ca)
		return rb_usage("publish", "--keep goes with --content-addressed");
	if (*delta && req->delta_from)
		return rb_usage("publish", "--delta or --delta-from, not both");
	if (argc - optind != 1)
		return rb_usage("publish", "need one IMAGE");
	req->image = argv[optind];
	if (stat(req->image, &st) < 0) {
		rb_err("%s: %s", req->image, strerror(errno));
		return RB_EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode)) {
		rb_err("%s: not a regular file (publish writes beside an image file)", req->image);
		return RB_EXIT_FAIL;
	}
	return -1;
}

/* The files the manifest names beside the image, each under a name of
 * its own that no manifest names yet: the hash tree, the chunk index,
 * the content-addressed image (how: how it was made). 0 or -errno. */
static int place_side_files(int dirfd, const char *base, const struct publish_req *req,
			    struct publish_made *mk, const char **how, char *err, size_t errlen)
{
	int rc = 0;

	if (req->verity)
		rc = side_file_write(dirfd, mk->m.verity_hash, mk->tree, mk->tree_len, &mk->st,
				     err, errlen);
	if (rc == 0 && req->cindex)
		rc = side_file_write(dirfd, mk->m.cindex, mk->cindex, mk->cindex_len, &mk->st, err,
				     errlen);
	if (rc == 0 && mk->delta)
		rc = side_file_write(dirfd, mk->m.delta, mk->delta, mk->delta_len, &mk->st, err,
				     errlen);
	if (rc == 0 && req->ca)
		rc = publish_place_image(dirfd, base, req, mk, how, err, errlen);
	return rc;
}

/* What was published, one line a file, the manifest last. */
static void print_made(const struct publish_req *req, const struct publish_made *mk,
		       const char *prefix, const char *mpath, const char *how)
{
	if (req->verity)
		printf("%s%s: hash tree, %" PRIu64 " blocks, root %s\n", prefix, mk->m.verity_hash,
		       mk->m.size / VERITY_BLOCK, mk->m.verity_root);
	if (req->cindex)
		printf("%s%s: chunk index, %" PRIu32 " chunks, sha256 %s\n", prefix, mk->m.cindex,
		       mk->cindex_chunks, mk->m.cindex_sha256);
	if (mk->delta)
		printf("%s%s: delta from sha256 %s, %zu bytes\n", prefix, mk->m.delta,
		       mk->m.delta_from, mk->delta_len);
	if (req->ca)
		printf("%s%s: the image, %s\n", prefix, mk->m.image, how);
	printf("%s: %" PRIu64 " bytes, sha256 %s, %" PRIu32 " chunks%s%s%s%s\n", mpath,
	       mk->m.size, mk->m.sha256, mk->m.nchunks, req->verity ? ", verity" : "",
	       req->cindex ? ", cindex" : "", req->key ? ", signed by key " : "",
	       req->key ? mk->keyid : "");
}

/* --delta: the image the previous manifest describes, where a rebuild
 * left it: its content-addressed file beside IMAGE, else LTSP's backup
 * IMAGE.old; publish_make() hashes it against the manifest. None: a
 * warning, and no delta. */
static void delta_source(struct publish_req *req, const char *prefix,
			 const struct manifest *prev, bool have_prev, char *path, size_t len)
{
	struct stat st;
	int n;

	if (!have_prev) {
		rb_warn("%s.manifest: none to make a delta from: no delta", req->image);
		return;
	}
	n = prev->image[0] ? snprintf(path, len, "%s%s", prefix, prev->image) : -1;
	if (n < 0 || (size_t)n >= len || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		n = snprintf(path, len, "%s.old", req->image);
	if (n < 0 || (size_t)n >= len || stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != prev->size) {
		rb_warn("the image of sha256 %.16s... is gone (neither %s%s nor %s.old): no "
			"delta", prev->sha256, prefix, prev->image[0] ? prev->image : "its own file",
			req->image);
		return;
	}
	req->delta_from = path;
	req->delta_from_sha256 = prev->sha256;
}

int cmd_publish(int argc, char **argv)
{
	struct publish_req req = { .decompress = "auto", .chunk_size = MANIFEST_CHUNK_DEFAULT };
	struct publish_made mk;
	struct manifest prev, backup;
	struct outfile mof;
	char mname[NAME_MAX + 1], mpath[PATH_MAX], bpath[PATH_MAX], prefix[PATH_MAX];
	char err[PATH_MAX + 128];
	struct stat inputs[2];
	size_t ninputs = 0;
	const char *base, *keep[SWEEP_KEEP], *how = "";
	unsigned keep_n = PUBLISH_KEEP_DEFAULT;
	bool have_prev = false, have_backup = false, keep_all = false, delta = false;
	char dpath[PATH_MAX];
	int c, rc, dirfd;

	rc = publish_args(argc, argv, &req, &keep_n, &delta);
	if (rc >= 0)
		return rc;
	if (snprintf(mpath, sizeof(mpath), "%s.manifest", req.image) >= (int)sizeof(mpath) ||
	    snprintf(bpath, sizeof(bpath), "%s.old.manifest", req.image) >= (int)sizeof(bpath))
		return rb_usage("publish", "IMAGE: path too long");
	dirfd = publish_dir_open(req.image, &base);
	if (dirfd < 0) {
		rb_err("%s: cannot open its directory: %s", req.image, strerror(-dirfd));
		return RB_EXIT_FAIL;
	}
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(base - req.image), req.image);
	if (snprintf(mname, sizeof(mname), "%s.manifest", base) >= (int)sizeof(mname)) {
		(void)close(dirfd);
		rb_err("%s: name too long", req.image);
		return RB_EXIT_FAIL;
	}
	/* One publish of a directory at a time: the sweep of one must not
	 * remove the hash file another is about to name. */
	while (flock(dirfd, LOCK_EX) < 0 && errno == EINTR)
		;
	/* The manifest's new file is made first: a link or a directory at
	 * its name is refused before anything is read or written. */
	/* Never over what is read: the image, the signing key. */
	if (stat(req.image, &inputs[ninputs]) == 0)
		ninputs++;
	if (req.key && stat(req.key, &inputs[ninputs]) == 0)
		ninputs++;
	rc = outfile_openat_protect(&mof, dirfd, mname, 0644, OUTFILE_REPLACE | OUTFILE_SYNC,
				    inputs, ninputs, err, sizeof(err));
	if (rc < 0) {
		(void)close(dirfd);
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	have_prev = old_manifest(mpath, &prev, &keep_all);
	/* LTSP's backup of the image (`ltsp image` renames IMAGE to
	 * IMAGE.old) keeps its manifest beside it, naming a hash file of
	 * IMAGE's name: it must be there when `ltsp image --revert` swaps
	 * them back. */
	have_backup = old_manifest(bpath, &backup, &keep_all);
	if (delta)
		delta_source(&req, prefix, &prev, have_prev, dpath, sizeof(dpath));

	rc = publish_make(&req, &mk, err, sizeof(err));
	if (rc < 0)
		goto fail;
	rc = place_side_files(dirfd, base, &req, &mk, &how, err, sizeof(err));
	if (rc < 0)
		goto fail;
	rc = write_all(mof.fd, mk.text, mk.len);
	if (rc == 0)
		rc = outfile_commit(&mof);
	if (rc < 0) {
		rb_errfmt(err, sizeof(err), rc, "%s: write error: %s", mpath, strerror(-rc));
		goto fail;
	}
	print_made(&req, &mk, prefix, mpath, how);
	keep_named(&mk.m, true, keep);
	keep_named(&prev, have_prev, keep + SWEEP_NAMED);
	keep_named(&backup, have_backup, keep + 2 * SWEEP_NAMED);
	sweep(dirfd, prefix, base, mname, keep, keep_all);
	/* Only a publish that names images by content removes them: another
	 * one may have been run by hand without --content-addressed. */
	if (req.ca && !keep_all)
		publish_sweep_images(dirfd, prefix, base, keep, keep_n, &mk.st, mk.m.image);
	publish_made_free(&mk);
	(void)close(dirfd);
	/* The manifest is named: published, whatever became of the line
	 * that says so (exit 1 promises that nothing new is named). */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rb_warn("stdout: write error (%s is published)", mpath);
		clearerr(stdout);
	}
	return RB_EXIT_OK;
fail:
	outfile_abort(&mof);
	(void)close(dirfd);
	rb_err("%s", err);
	c = mk.exit != RB_EXIT_OK ? mk.exit : RB_EXIT_FAIL;
	if (mk.signo)
		guard_reraise(mk.signo);
	publish_made_free(&mk);
	return c;
}
