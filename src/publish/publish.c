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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/guard.h"
#include "format/cindex.h"
#include "format/manifest.h"
#include "lib/outfile.h"
#include "lib/sha256.h"
#include "lib/units.h"
#include "publish/publish.h"
#include "publish/publishint.h"
#include "format/verity.h"

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
	publish_keep_named(&mk.m, true, keep);
	publish_keep_named(&prev, have_prev, keep + SWEEP_NAMED);
	publish_keep_named(&backup, have_backup, keep + 2 * SWEEP_NAMED);
	publish_sweep(dirfd, prefix, base, mname, keep, keep_all);
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
