// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot manifest`: the manifest of an image (and its hash tree and
 * chunk index), on stdout or into a file, through the same code as
 * `ramboot publish`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/guard.h"
#include "lib/outfile.h"
#include "lib/units.h"
#include "codec/codec.h"
#include "format/manifest.h"
#include "publish/publish.h"

enum { OPT_VERITY = PUBLISH_OPT_OWN, OPT_CINDEX, OPT_DELTA_FROM };

static const struct rb_optset optset = {
	.head = "Usage: ramboot manifest [-o OUT] [-d FMT] [-j N] [--mem-limit=SIZE]\n"
		"                        [--chunk-size=SIZE] [--sign=KEY] [--verity[=HASHFILE]]\n"
		"                        [--cindex[=INDEXFILE]] [--delta-from=OLD] IMAGE\n"
		"\n"
		"Write the manifest of IMAGE: the size and SHA-256 of the decompressed\n"
		"image and of each of its chunks, which 'ramboot load --manifest' checks\n"
		"on the client.\n",
	.opts = RB_OPTS(
		{ "output", 'o', "=FILE",
		  "write to FILE (replaced only once the new one is\n"
		  "complete) instead of stdout" },
		{ "decompress", 'd', "=FMT", NULL },
		{ "threads", 'j', "=N", NULL },
		{ NULL, 0, NULL,
		  "  -d, --decompress=FMT, -j, --threads=N   as for ramboot load\n" },
		{ "mem-limit", PUBLISH_OPT_MEM_LIMIT, "=SIZE",
		  "decoder memory clients may use for this image\n"
		  "(default 256M; for large zstd windows/xz dictionaries)" },
		{ "memlimit", PUBLISH_OPT_MEMLIMIT, "=SIZE", NULL },
		{ "sign", PUBLISH_OPT_SIGN, "=KEY",
		  "sign it with the Ed25519 private key KEY\n"
		  "(ramboot keygen; see ramboot sign)" },
		{ "chunk-size", PUBLISH_OPT_CHUNK_SIZE, "=SIZE",
		  "bytes per chunk, a power of two from 64K to 1G\n"
		  "(default 4M; at most 65536 chunks); 0: a version 1\n"
		  "manifest, without chunks, for older clients" },
		{ "verity", OPT_VERITY, "[=HASHFILE]",
		  "also write the dm-verity hash tree of IMAGE beside\n"
		  "it (default IMAGE.verity; written first) and record\n"
		  "verity-root, verity-salt, verity-hash; IMAGE must be\n"
		  "raw (not compressed), whole 4096-byte blocks" },
		{ "cindex", OPT_CINDEX, "[=INDEXFILE]",
		  "also write the chunk index of IMAGE beside it\n"
		  "(default IMAGE.cindex; written first) and record its\n"
		  "name and SHA-256 (cindex, cindex-sha256); IMAGE must\n"
		  "be raw" },
		{ "delta-from", OPT_DELTA_FROM, "=OLD",
		  "also write IMAGE.delta, a zstd delta that rebuilds\n"
		  "IMAGE from the older image OLD, and record it (delta,\n"
		  "delta-from, delta-sha256); both raw. None when it\n"
		  "would be larger than half of IMAGE" },
		RB_OPT_HELP_UNLISTED),
	.tail = "Exit codes: 0 ok, 1 runtime error (nothing written), 2 usage.\n",
	.indent = 6, .col = 22,
};

/* The command line into req, *outpath and *hasharg: -1 to go on, else
 * the exit code (--help, a usage error). */
static int manifest_args(int argc, char **argv, struct publish_req *req, const char **outpath,
			 const char **hasharg, const char **cindexarg)
{
	struct rb_getopt g = { .set = &optset };
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o': *outpath = optarg; break;
		case 'd': req->decompress = optarg; break;
		case 'j':
			if (parse_threads("manifest", optarg, &req->threads))
				return RB_EXIT_USAGE;
			break;
		case PUBLISH_OPT_SIGN:
		case PUBLISH_OPT_CHUNK_SIZE:
		case PUBLISH_OPT_MEM_LIMIT:
		case PUBLISH_OPT_MEMLIMIT:
			if (publish_opt("manifest", c, optarg, true, req))
				return RB_EXIT_USAGE;
			break;
		case OPT_VERITY:
			req->verity = true;
			*hasharg = optarg;
			break;
		case OPT_CINDEX:
			req->cindex = true;
			*cindexarg = optarg;
			break;
		case OPT_DELTA_FROM:
			req->delta_from = optarg;
			break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default:
			return rb_usage_option("manifest", argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("manifest", "need one IMAGE");
	if (strcmp(req->decompress, "auto") && !codec_by_name(req->decompress))
		return rb_usage("manifest", "--decompress: unknown format '%s'", req->decompress);
	if (req->verity && !req->chunk_size)
		return rb_usage("manifest", "--verity needs a version 2 manifest (--chunk-size "
				   "other than 0)");
	if (req->cindex && !req->chunk_size)
		return rb_usage("manifest", "--cindex needs a version 2 manifest (--chunk-size "
				   "other than 0)");
	if (req->delta_from && !req->chunk_size)
		return rb_usage("manifest", "--delta-from needs a version 2 manifest "
				   "(--chunk-size other than 0)");
	req->image = argv[optind];
	return -1;
}

/* A side file's name beside the image: ARG (of the option opt), else
 * IMAGE + suffix (".verity", ".cindex"). 0, or -errno with the reason in
 * err. */
static int side_name(const char *image, const char *opt, const char *arg, const char *suffix,
		     char *name, size_t len, char *err, size_t errlen)
{
	const char *slash = strrchr(image, '/');
	int rc;

	if (arg)
		return publish_side_name(image, opt, arg, name, len, err, errlen);
	rc = snprintf(name, len, "%s%s", slash ? slash + 1 : image, suffix);
	if (rc < 0 || (size_t)rc >= len)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: name too long for a file "
				 "beside it", image);
	return 0;
}

/* Write buf to name beside the image, replacing it once complete. */
static int side_write(const struct publish_req *req, const struct publish_made *mk,
		      const char *name, const void *buf, size_t len, char *err, size_t errlen)
{
	const char *base;
	int dirfd = publish_dir_open(req->image, &base), rc;

	rc = dirfd < 0 ? rb_errfmt(err, errlen, dirfd, "%s: cannot open its directory", req->image)
		       : publish_write_at(dirfd, name, buf, len, true, &mk->st, err, errlen);
	if (dirfd >= 0)
		(void)close(dirfd);
	return rc;
}

/* What publish_make() made, written: the tree beside the image first,
 * then the manifest (to OUT, replaced only once complete, or stdout),
 * which names it. 0, or -errno with the reason in err. */
static int manifest_write(const struct publish_req *req, const struct publish_made *mk,
			  const char *outpath, char *err, size_t errlen)
{
	struct outfile of;
	struct stat inputs[2];
	size_t ninputs = 0;
	int rc = 0;

	/* Never over what was read: the image, the signing key. Its new
	 * file is made first: a link at OUT is refused before the tree is
	 * written. */
	inputs[ninputs++] = mk->st;
	if (req->key && stat(req->key, &inputs[ninputs]) == 0)
		ninputs++;
	if (outpath) {
		rc = outfile_open_protect(&of, outpath, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, inputs,
					  ninputs, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (req->verity)
		rc = side_write(req, mk, req->hash_name, mk->tree, mk->tree_len, err, errlen);
	if (rc == 0 && req->cindex)
		rc = side_write(req, mk, req->cindex_name, mk->cindex, mk->cindex_len, err, errlen);
	if (rc == 0 && mk->delta)
		rc = side_write(req, mk, req->delta_name, mk->delta, mk->delta_len, err, errlen);
	if (rc < 0)
		goto out;
	if (!outpath) {
		rc = write_all(STDOUT_FILENO, mk->text, mk->len);
		return rc < 0 ? rb_errfmt(err, errlen, rc, "stdout: write error") : 0;
	}
	rc = write_all(of.fd, mk->text, mk->len);
	if (rc == 0) {
		rc = outfile_commit(&of);
		if (rc < 0)
			rb_errfmt(err, errlen, rc, "%s: write error: %s", outpath, strerror(-rc));
		return rc;
	}
	rb_errfmt(err, errlen, rc, "%s: write error: %s", outpath, strerror(-rc));
out:
	if (outpath)
		outfile_abort(&of);
	return rc;
}

int cmd_manifest(int argc, char **argv)
{
	struct publish_req req = { .decompress = "auto", .chunk_size = MANIFEST_CHUNK_DEFAULT };
	struct publish_made mk;
	const char *outpath = NULL, *hasharg = NULL, *cindexarg = NULL;
	char hname[MANIFEST_NAME_MAX + 1], cname[MANIFEST_NAME_MAX + 1], err[PATH_MAX + 128];
	char dname[MANIFEST_NAME_MAX + 1];
	int rc;

	rc = manifest_args(argc, argv, &req, &outpath, &hasharg, &cindexarg);
	if (rc >= 0)
		return rc;
	if ((req.verity && side_name(req.image, "--verity", hasharg, ".verity", hname,
				     sizeof(hname), err, sizeof(err)) < 0) ||
	    (req.cindex && side_name(req.image, "--cindex", cindexarg, ".cindex", cname,
				     sizeof(cname), err, sizeof(err)) < 0) ||
	    (req.delta_from && side_name(req.image, "--delta-from", NULL, ".delta", dname,
					 sizeof(dname), err, sizeof(err)) < 0)) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	if (req.verity && req.cindex && !strcmp(hname, cname))
		return rb_usage("manifest", "--verity and --cindex name the same file '%s'", cname);
	if (req.verity)
		req.hash_name = hname;
	if (req.cindex)
		req.cindex_name = cname;
	if (req.delta_from)
		req.delta_name = dname;
	rc = publish_make(&req, &mk, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		rc = mk.exit;
		if (mk.signo)
			guard_reraise(mk.signo);
		publish_made_free(&mk);
		return rc;
	}
	/* The old manifest stays until the new one is complete and on disk:
	 * a failed write never leaves clients without one. */
	rc = manifest_write(&req, &mk, outpath, err, sizeof(err));
	publish_made_free(&mk);
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}
