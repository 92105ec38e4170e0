// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot cache index|diff: the chunk index of an image (format/cindex.h)
 * from the command line, and what a client holding one version of an
 * image would read of the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/ramboot.h"
#include "lib/outfile.h"
#include "format/cindex.h"

static void usage(FILE *out)
{
	fputs("Usage: ramboot cache index [-o FILE] IMAGE\n"
	      "       ramboot cache diff OLD.cindex NEW.cindex\n"
	      "\n"
	      "index: write the chunk index of IMAGE (content-defined chunks of 16 to\n"
	      "  256 KiB, 64 KiB on average, the offset, length and SHA-256 of each)\n"
	      "  to stdout, or to FILE.\n"
	      "  -o, --output=FILE  write FILE, atomically (replaces a regular file)\n"
	      "diff: how much of the image of NEW.cindex the image of OLD.cindex holds\n"
	      "  (chunks found by hash), and what remains to be read:\n"
	      "    new: CHUNKS chunks, BYTES bytes\n"
	      "    reused: CHUNKS chunks, BYTES bytes (PERCENT%)\n"
	      "    fetch: CHUNKS chunks, BYTES bytes\n"
	      "Exit codes: 0 ok, 1 runtime error (I/O, a malformed index), 2 usage.\n", out);
}

static int cmd_index(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[PATH_MAX + 256], *text = NULL;
	const char *outpath = NULL, *image;
	struct outfile of;
	struct cindex ci;
	struct stat st;
	ssize_t len;
	int c, fd, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("cache", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return rb_usage("cache", "index needs one IMAGE");
	image = argv[optind];
	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rb_err("%s: %s", image, strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		return RB_EXIT_FAIL;
	}
	rc = cindex_build(fd, &ci, err, sizeof(err));
	(void)close(fd);              /* read only: all it had to give is read */
	if (rc < 0) {
		rb_err("%s: %s", image, err);
		return RB_EXIT_FAIL;
	}
	text = malloc(cindex_text_max(ci.n) + 1);
	len = text ? cindex_format(&ci, text, cindex_text_max(ci.n) + 1) : -ENOMEM;
	cindex_free(&ci);
	if (len < 0) {
		free(text);
		rb_err("%s: %s", image, strerror((int)-len));
		return RB_EXIT_FAIL;
	}
	if (outpath) {
		/* Never over the image it indexes. */
		if (outfile_open(&of, outpath, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, &st, err,
				 sizeof(err)) < 0) {
			free(text);
			rb_err("%s", err);
			return RB_EXIT_FAIL;
		}
		rc = write_all(of.fd, text, (size_t)len);
		if (rc == 0)
			rc = outfile_commit(&of);
		else
			outfile_abort(&of);
		if (rc < 0) {
			free(text);
			rb_err("%s: write error: %s", outpath, strerror(-rc));
			return RB_EXIT_FAIL;
		}
	} else if (write_all(STDOUT_FILENO, text, (size_t)len) < 0) {
		free(text);
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	free(text);
	return RB_EXIT_OK;
}

static int cmp_sha(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static int cmd_diff(int argc, char **argv)
{
	char err[PATH_MAX + 256];
	struct cindex old, new;
	uint8_t (*have)[32] = NULL;
	uint64_t rbytes = 0, fbytes = 0;
	uint32_t i, rchunks = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	if (argc != 3)
		return rb_usage("cache", "diff needs OLD.cindex and NEW.cindex");
	if (cindex_load(argv[1], &old, err, sizeof(err)) < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	if (cindex_load(argv[2], &new, err, sizeof(err)) < 0) {
		cindex_free(&old);
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	if (strcmp(old.chunker, new.chunker) || old.min != new.min || old.avg != new.avg ||
	    old.max != new.max)
		rb_warn("the indexes have different chunkers: few chunks can match");
	/* The old image's hashes, sorted, looked up by each new chunk. */
	if (old.n) {
		have = malloc((size_t)old.n * sizeof(*have));
		if (!have) {
			cindex_free(&old);
			cindex_free(&new);
			rb_err("out of memory");
			return RB_EXIT_FAIL;
		}
		for (i = 0; i < old.n; i++)
			memcpy(have[i], old.chunk[i].sha256, 32);
		qsort(have, old.n, sizeof(*have), cmp_sha);
	}
	for (i = 0; i < new.n; i++) {
		if (have && bsearch(new.chunk[i].sha256, have, old.n, sizeof(*have), cmp_sha)) {
			rchunks++;
			rbytes += new.chunk[i].len;
		} else {
			fbytes += new.chunk[i].len;
		}
	}
	printf("new: %u chunks, %" PRIu64 " bytes\n"
	       "reused: %u chunks, %" PRIu64 " bytes (%.1f%%)\n"
	       "fetch: %u chunks, %" PRIu64 " bytes\n",
	       new.n, new.size, rchunks, rbytes,
	       new.size ? 100.0 * (double)rbytes / (double)new.size : 100.0,
	       new.n - rchunks, fbytes);
	free(have);
	cindex_free(&old);
	cindex_free(&new);
	return RB_EXIT_OK;
}

int cmd_cache(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return rb_usage("cache", "need index or diff");
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	if (!strcmp(sub, "index"))
		return cmd_index(argc - 1, argv + 1);
	if (!strcmp(sub, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	return rb_usage("cache", "unknown command '%s'", sub);
}
