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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/outfile.h"
#include "lib/hex.h"
#include "lib/sysutil.h"
#include "lib/units.h"
#include "format/cindex.h"
#include "source/source.h"
#include "cache/cache.h"

enum { OPT_LABEL = 256, OPT_NAME, OPT_SIGNED, OPT_KEYS, OPT_JSON, OPT_DELTA, OPT_NO_DELTA,
       OPT_MIRROR };

static const struct rb_optset init_optset = {
	.opts = RB_OPTS(
		{ "label", OPT_LABEL, "=LABEL",
		  "the file system's label (default " CACHE_LABEL_DEFAULT ")" },
		{ "force", 'f', NULL,
		  "format DEV even though it holds a file system" },
		RB_OPT_HELP_UNLISTED),
	.indent = 6, .col = 21,
};
static const struct rb_optset refresh_optset = {
	.opts = RB_OPTS(
		{ "cache", 'c', "=DEV",
		  "the cache: a block device, an image file, or the\n"
		  "directory of a mounted cache" },
		{ "manifest", 'm', "=M",
		  "verify against the manifest M" },
		{ "signed", OPT_SIGNED, NULL,
		  "M must be signed by a trusted key" },
		{ "keys", OPT_KEYS, "=DIR",
		  "the trusted public keys (default: the system's)" },
		{ "index", 'i', "=I",
		  "IMAGE's chunk index (default: the one M names, beside\n"
		  "IMAGE, else computed from IMAGE)" },
		{ "delta", OPT_DELTA, "=D",
		  "the delta M names (default: beside IMAGE), read\n"
		  "instead of IMAGE when the cache holds the image the\n"
		  "delta is from" },
		{ "no-delta", OPT_NO_DELTA, NULL,
		  "never the delta: the chunks of IMAGE" },
		{ "name", OPT_NAME, "=NAME",
		  "the image's name in the cache (default: IMAGE's)" },
		{ "mirror", OPT_MIRROR, "=URL",
		  "another http:// URL of IMAGE (repeatable): the chunks\n"
		  "are read from any of them" },
		{ "force", 'f', NULL,
		  "start over a state that is not trusted" },
		RB_OPT_HELP_UNLISTED),
	.indent = 6, .col = 22,
};
static const struct rb_optset status_optset = {
	.opts = RB_OPTS(
		{ "cache", 'c', "=DEV", NULL },
		{ "json", OPT_JSON, NULL,
		  "as one JSON object" },
		RB_OPT_HELP_UNLISTED),
	.indent = 6, .col = 21,
};
static const struct rb_optset index_optset = {
	.opts = RB_OPTS(
		{ "output", 'o', "=FILE",
		  "write FILE, atomically (replaces a regular file)" },
		RB_OPT_HELP_UNLISTED),
	.indent = 6, .col = 21,
};

static void usage(FILE *out)
{
	fputs("Usage: ramboot cache init [--label=LABEL] [--force] DEV\n"
	      "       ramboot cache refresh --cache=DEV [--manifest=M [--signed [--keys=DIR]]]\n"
	      "                             [--index=I] [--name=NAME] [--mirror=URL...]\n"
	      "                             [--force] IMAGE\n"
	      "       ramboot cache status --cache=DEV [--json] [NAME]\n"
	      "       ramboot cache index [-o FILE] IMAGE\n"
	      "       ramboot cache diff OLD.cindex NEW.cindex\n"
	      "\n"
	      "init: make DEV (a block device, or a regular file) a cache: an ext4 file\n"
	      "  system (mkfs.ext4) labelled LABEL, and the cache's marker. A device that\n"
	      "  is in use, carries the running root, or holds data (a file system or a\n"
	      "  partition table that is not a cache made with this label) is refused. A\n"
	      "  directory is made a cache without formatting anything.\n", out);
	rb_opts_help(out, &init_optset);
	fputs("refresh: fill the inactive slot of IMAGE in the cache from IMAGE, reading\n"
	      "  from IMAGE only the chunks the active slot does not have; verify it; make\n"
	      "  it active. Nothing is read but the manifest when the active slot holds\n"
	      "  the image already. IMAGE may be an http:// URL (its manifest: URL.manifest\n"
	      "  unless --manifest; the chunks by ranged requests).\n", out);
	rb_opts_help(out, &refresh_optset);
	fputs("status: each image in the cache (or NAME): the state, the active slot,\n"
	      "  the generation, the image's sha256, the last refresh's bytes.\n", out);
	rb_opts_help(out, &status_optset);
	fputs("index: write the chunk index of IMAGE (content-defined chunks of 16 to\n"
	      "  256 KiB, 64 KiB on average, the offset, length and SHA-256 of each)\n"
	      "  to stdout, or to FILE.\n", out);
	rb_opts_help(out, &index_optset);
	fputs("diff: how much of the image of NEW.cindex the image of OLD.cindex holds\n"
	      "  (chunks found by hash), and what remains to be read:\n"
	      "    new: CHUNKS chunks, BYTES bytes\n"
	      "    reused: CHUNKS chunks, BYTES bytes (PERCENT%)\n"
	      "    fetch: CHUNKS chunks, BYTES bytes\n"
	      "Exit codes: 0 ok (refresh: refreshed or up to date), 1 runtime error (I/O,\n"
	      "  no room, a verification failure, a state not trusted, a malformed index;\n"
	      "  status: a state not trusted), 2 usage.\n", out);
}

/* What a sub-command's options have no case of their own for: --help
 * (the whole usage), or an option that is not known or lacks its value. */
static int other_option(int c, char **argv)
{
	if (c == 'h') {
		usage(stdout);
		return RB_EXIT_OK;
	}
	return rb_usage("cache", "unknown or incomplete option '%s'", argv[optind - 1]);
}

static int cmd_index(int argc, char **argv)
{
	struct rb_getopt g = { .set = &index_optset };
	char err[PATH_MAX + 256], *text = NULL;
	const char *outpath = NULL, *image;
	struct outfile of;
	struct cindex ci;
	struct stat st;
	ssize_t len;
	int c, fd, rc;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		default: return other_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("cache", "index needs one IMAGE");
	image = argv[optind];
	/* Never waiting on a FIFO: only a file or a block device is read. */
	fd = open(image, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rb_err("%s: %s", image, strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		return RB_EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		rb_err("%s: not a regular file or a block device", image);
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
		rc = outfile_write(&of, text, (size_t)len);
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

static int sub_init(int argc, char **argv)
{
	struct rb_getopt g = { .set = &init_optset };
	struct cache_init_opts o = { NULL, false };
	char err[PATH_MAX + 256];
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_LABEL: o.label = optarg; break;
		case 'f': o.force = true; break;
		default: return other_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("cache", "init needs one DEV");
	if (cache_init(argv[optind], &o, err, sizeof(err)) < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	printf("cache: %s ready (label %s)\n", argv[optind], o.label ? o.label : CACHE_LABEL_DEFAULT);
	return RB_EXIT_OK;
}

static int sub_refresh(int argc, char **argv)
{
	struct rb_getopt g = { .set = &refresh_optset };
	struct cache_refresh_opts o;
	struct cache_refresh_result r;
	const char *dev = NULL, *mirrors[CACHE_MIRRORS_MAX];
	char err[PATH_MAX + 512];
	struct cache ca;
	int c, rc;

	memset(&o, 0, sizeof(o));
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'c': dev = optarg; break;
		case 'm': o.manifest = optarg; break;
		case 'i': o.index = optarg; break;
		case OPT_DELTA: o.delta = optarg; break;
		case OPT_NO_DELTA: o.no_delta = true; break;
		case OPT_NAME: o.name = optarg; break;
		case OPT_SIGNED: o.signed_only = true; break;
		case OPT_KEYS: o.keydir = optarg; break;
		case 'f': o.force = true; break;
		case OPT_MIRROR:
			if (!source_is_url(optarg))
				return rb_usage("cache", "--mirror: '%s' is not an http:// URL", optarg);
			if (o.n_mirrors == CACHE_MIRRORS_MAX)
				return rb_usage("cache", "--mirror: at most %d", CACHE_MIRRORS_MAX);
			mirrors[o.n_mirrors++] = optarg;
			break;
		default: return other_option(c, argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("cache", "refresh needs one IMAGE");
	if (!dev)
		return rb_usage("cache", "refresh needs --cache=DEV");
	o.image = argv[optind];
	o.mirrors = mirrors;
	if (o.n_mirrors && !source_is_url(o.image))
		return rb_usage("cache", "--mirror goes with an http:// IMAGE");
	/* Over HTTP the manifest is IMAGE.manifest unless given. */
	if ((o.signed_only || o.keydir) && !o.manifest && !source_is_url(o.image))
		return rb_usage("cache", "--signed and --keys need --manifest");
	if (o.keydir && !o.signed_only)
		return rb_usage("cache", "--keys needs --signed");
	if (o.delta && ((!o.manifest && !source_is_url(o.image)) || o.no_delta))
		return rb_usage("cache", "--delta needs --manifest, and not --no-delta");
	if (cache_open(&ca, dev, true, err, sizeof(err)) < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	rc = cache_refresh(&ca, &o, &r, err, sizeof(err));
	cache_close(&ca);
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	printf("result: %s\nslot: %c\ngeneration: %" PRIu64 "\nsize: %" PRIu64 "\nsha256: %s\n"
	       "bytes_network: %" PRIu64 "\nbytes_local: %" PRIu64 "\nbytes_indexed: %" PRIu64 "\n"
	       "bytes_reindexed: %" PRIu64 "\nchunks_network: %u\nchunks_local: %u\n"
	       "chunks_bad: %u\nbytes_delta: %" PRIu64 "\n",
	       r.up_to_date ? "up to date" : "refreshed", cstate_slot_name(r.slot), r.generation,
	       r.size, r.sha256, r.bytes_network, r.bytes_local, r.bytes_indexed,
	       r.bytes_reindexed, r.chunks_network, r.chunks_local, r.chunks_bad, r.bytes_delta);
	if (r.delta)
		printf("delta: %s%s%s\n", r.delta, r.delta_why[0] ? ": " : "", r.delta_why);
	if (r.index_from)
		printf("index: %s\n", r.index_from);
	if (r.signed_by[0])
		printf("signed_by: %s\n", r.signed_by);
	return RB_EXIT_OK;
}

static const char *health_name(enum cache_health h)
{
	return h == CACHE_OK ? "ok" : h == CACHE_EMPTY ? "empty" : "corrupt";
}

/* A field of print_status: ,"key":value in JSON, else a line "key: value".
 * str: a string, quoted and escaped in JSON. */
static void put(bool json, const char *key, bool str, const char *val)
{
	char esc[1024];

	if (!json)
		printf("%s: %s\n", key, val);
	else if (!str)
		printf(",\"%s\":%s", key, val);
	else {
		json_escape(esc, sizeof(esc), val);
		printf(",\"%s\":\"%s\"", key, esc);
	}
}

/* put() of a number. */
__attribute__((format(printf, 3, 4)))
static void put_num(bool json, const char *key, const char *fmt, ...)
{
	char val[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	put(json, key, false, val);
}

/* An image's status, as text or as a JSON object (after the first, a
 * blank line or a comma before it). */
static void print_status(const struct cache_image_status *s, bool json, bool first)
{
	const struct cstate *st = &s->st;
	char sha[65] = "", esc[1024], slot[2] = "";
	bool act = s->health == CACHE_OK && st->active >= 0;
	int i, n;

	if (act)
		hex_encode(st->slot[st->active].sha256, 32, sha);
	if (json) {
		json_escape(esc, sizeof(esc), s->name);
		printf("%s{\"name\":\"%s\"", first ? "" : ",", esc);
	} else {
		printf("%simage: %s\n", first ? "" : "\n", s->name);
	}
	put(json, "state", true, health_name(s->health));
	if (s->health == CACHE_CORRUPT)
		put(json, "why", true, s->why);
	if (s->health == CACHE_OK) {
		put_num(json, "generation", "%" PRIu64, st->generation);
		if (act) {
			slot[0] = cstate_slot_name(st->active);
			put(json, "active", true, slot);
			if (json)
				put_num(json, "size", "%" PRIu64, st->slot[st->active].size);
			else
				put_num(json, "size", "%" PRIu64 " (%s)", st->slot[st->active].size,
					fmt_size(st->slot[st->active].size, esc, sizeof(esc)));
			put(json, "sha256", true, sha);
			put(json, "manifest", false, st->slot[st->active].has_manifest ?
			    (json ? "true" : "yes") : (json ? "false" : "no"));
		} else {
			put(json, "active", false, json ? "null" : "none");
		}
		/* For a person, local times; --json: the numbers. */
		if (json) {
			put_num(json, "refreshed", "%" PRId64, st->refreshed);
			put_num(json, "bytes_network", "%" PRIu64, st->bytes_network);
			put_num(json, "bytes_local", "%" PRIu64, st->bytes_local);
		} else {
			char when[96];

			put(json, "refreshed", false, fmt_when(st->refreshed, when, sizeof(when)));
			put_num(json, "bytes_network", "%" PRIu64, st->bytes_network);
			put_num(json, "bytes_local", "%" PRIu64, st->bytes_local);
		}
		if (json)
			printf(",\"bad\":[");
		for (i = 0, n = 0; i < 2; i++) {
			if (!st->slot[i].bad)
				continue;
			if (json)
				printf("%s\"%c\"", n ? "," : "", cstate_slot_name(i));
			else
				printf("bad: slot %c (marked at %s: failed a check; not booted, "
				       "rewritten by a refresh)\n", cstate_slot_name(i),
				       fmt_when(st->slot[i].bad_time, esc, sizeof(esc)));
			n++;
		}
		if (json)
			printf("]");
		else if (!n)
			printf("bad: no\n");
	}
	if (s->interrupted < 0) {
		put(json, "interrupted", false, json ? "null" : "no");
	} else if (json) {
		slot[0] = cstate_slot_name(s->interrupted);
		put(json, "interrupted", true, slot);
	} else {
		printf("interrupted: slot %c (written after the state: a refresh that did not "
		       "finish)\n", cstate_slot_name(s->interrupted));
	}
	if (json)
		printf("}");
}

static int sub_status(int argc, char **argv)
{
	struct rb_getopt g = { .set = &status_optset };
	const char *dev = NULL, *only = NULL;
	char err[PATH_MAX + 256], esc[PATH_MAX * 2];
	struct cache_image_status s;
	struct dirent *e;
	struct cache ca;
	bool json = false, first = true;
	int c, fd, rc = RB_EXIT_OK;
	DIR *d;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'c': dev = optarg; break;
		case OPT_JSON: json = true; break;
		default: return other_option(c, argv);
		}
	}
	if (argc - optind > 1)
		return rb_usage("cache", "status takes one NAME at most");
	if (!dev)
		return rb_usage("cache", "status needs --cache=DEV");
	only = argc > optind ? argv[optind] : NULL;
	if (cache_open(&ca, dev, false, err, sizeof(err)) < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	fd = openat(ca.root, CACHE_IMAGES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		rb_err("%s: %s/: %s", dev, CACHE_IMAGES, strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		cache_close(&ca);
		return RB_EXIT_FAIL;
	}
	if (json) {
		json_escape(esc, sizeof(esc), dev);
		printf("{\"cache\":\"%s\",\"images\":[", esc);
	} else {
		printf("cache: %s (%s)\n\n", dev, ca.how);
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || (only && strcmp(e->d_name, only)))
			continue;
		if (cache_image_status(&ca, e->d_name, &s) < 0) {
			rb_err("%s: %s", e->d_name, s.why);
			rc = RB_EXIT_FAIL;
			continue;
		}
		if (s.health == CACHE_CORRUPT)
			rc = RB_EXIT_FAIL;
		print_status(&s, json, first);
		first = false;
	}
	(void)closedir(d);
	cache_close(&ca);
	if (json)
		printf("]}\n");
	else if (first)
		printf("no image%s%s\n", only ? " named " : "", only ? only : "");
	if (only && first)
		rc = RB_EXIT_FAIL;
	return rc;
}

int cmd_cache(int argc, char **argv)
{
	static const struct rb_subcmd subs[] = {
		{ "init", sub_init, false }, { "refresh", sub_refresh, false },
		{ "status", sub_status, false }, { "index", cmd_index, false },
		{ "diff", cmd_diff, true },
	};

	return rb_subcmd_run("cache", subs, ARRAY_SIZE(subs), usage, argc, argv);
}
