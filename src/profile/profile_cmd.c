// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot profile: record (profile_record_run() after the options),
 * --stop, merge, show, sort and extents. docs/profiles.md has the
 * commands.
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
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/outfile.h"
#include "lib/units.h"
#include "format/manifest.h"
#include "profile/profile.h"

/* sort and extents read squashfs tables: a server's work, left out of
 * the static binary (make static sets 0) that clients boot with. */
#ifndef RAMBOOT_PROFILE_SORT
#define RAMBOOT_PROFILE_SORT 1
#endif

enum { OPT_IMAGE = 256, OPT_OUT, OPT_INTERVAL, OPT_UNTIL, OPT_STOPFILE, OPT_MANIFEST, OPT_SHA };

static const struct rb_optset record_optset = {
	.head = "Usage: ramboot profile record --image=FILE [OPTIONS]\n"
		"       ramboot profile --stop\n"
		"       ramboot profile merge -o OUT PROFILE...\n"
		"       ramboot profile show PROFILE\n"
		"       ramboot profile sort IMAGE PROFILE... [-o FILE]\n"
		"       ramboot profile extents IMAGE [PROFILE...]\n"
		"\n"
		"record: note which ranges of the image FILE get read (its page cache, sampled\n"
		"with mincore) in first-touch order until a stop point, then write the profile.\n",
	.opts = RB_OPTS(
		{ "image", OPT_IMAGE, "=FILE",
		  "the image file (or block device) the boot reads" },
		{ "out", OPT_OUT, "=FILE",
		  "where to write it (default " PROFILE_OUT ")" },
		{ "interval", OPT_INTERVAL, "=S",
		  "seconds between samples (default 0.2)" },
		{ "until", OPT_UNTIL, "=S",
		  "stop S seconds after the start (default: no limit)" },
		{ "stop-file", OPT_STOPFILE, "=PATH",
		  "stop once PATH exists" },
		{ "manifest", OPT_MANIFEST, "=FILE",
		  "tag the profile with the image's SHA-256 from its manifest" },
		{ "sha256", OPT_SHA, "=HEX",
		  "the same, given directly" },
		RB_OPT_HELP_UNLISTED),
	.tail = "    It also stops on SIGTERM, SIGINT and 'ramboot profile --stop' (the\n"
		"    recorder's pid is in " PROFILE_PID ").\n"
		"--stop: stop the running recorder and wait until it has written the profile.\n"
		"merge:  merge profiles of one image recorded on several clients into OUT.\n"
		"show:   print a profile: identity, ranges in order, bytes, coverage.\n"
		"sort:   the mksquashfs -sort file that lays out the next build of the squashfs\n"
		"        IMAGE in the order the profiles (merged) first read its files.\n"
		"extents: how scattered the profiles' reads of IMAGE are; without PROFILE, where\n"
		"        each file and table of IMAGE lies.\n"
		"\n"
		"Exit codes: 0 ok, 1 runtime error (I/O, bad profile, no recorder), 2 usage.\n",
	.indent = 6, .col = 24,
};

static const struct rb_optset merge_optset = {
	.opts = RB_OPTS(
		{ "output", 'o', "=FILE", NULL },
		RB_OPT_HELP_UNLISTED),
	.indent = 6, .col = 24,
};

static void usage(FILE *out)
{
	rb_opts_usage(out, &record_optset);
}

/* The options of record into *o: -1 when they are good, else the exit
 * code (usage error, or 0 after --help). */
static int record_parse(int argc, char **argv, struct profile_record_opts *o)
{
	struct rb_getopt g = { .set = &record_optset };
	int c;

	profile_record_opts_init(o);
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_IMAGE: o->image = optarg; break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_STOPFILE: o->stop_file = optarg; break;
		case OPT_MANIFEST: o->manifest = optarg; break;
		case OPT_INTERVAL:
			if (parse_seconds(optarg, &o->interval) < 0 || o->interval <= 0)
				return rb_usage("profile", "--interval: '%s' is not a number of seconds above 0",
						   optarg);
			break;
		case OPT_UNTIL:
			if (parse_seconds(optarg, &o->until) < 0)
				return rb_usage("profile", "--until: '%s' is not a number of seconds", optarg);
			break;
		case OPT_SHA:
			if (strlen(optarg) != 64 || sha256_hex_parse(optarg, o->sha256) < 0)
				return rb_usage("profile", "--sha256: '%s' is not 64 hex digits", optarg);
			break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("profile", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return rb_usage("profile", "record takes no arguments, only options ('%s')", argv[optind]);
	if (!o->image)
		return rb_usage("profile", "record needs --image=FILE");
	if (o->manifest && o->sha256[0])
		return rb_usage("profile", "--manifest and --sha256 both give the image's hash: one only");
	return -1;
}

static int cmd_record(int argc, char **argv)
{
	struct profile_record_opts o;
	int rc = record_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	return profile_record_run(&o) < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}

/* The profiles paths[0..n) merged into *out: 0 or -errno, said. */
static int load_merged(char **paths, int n, struct profile *out)
{
	char err[PATH_MAX + 128];
	const struct profile **pp = NULL;
	struct profile *in = NULL;
	int i, rc = -ENOMEM;

	profile_init(out);
	in = calloc((size_t)n, sizeof(*in));
	pp = calloc((size_t)n, sizeof(*pp));
	if (!in || !pp) {
		rb_err("%s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < n; i++) {
		rc = profile_load(paths[i], &in[i], err, sizeof(err));
		if (rc < 0) {
			rb_err("%s: %s", paths[i], err);
			goto out;
		}
		pp[i] = &in[i];
	}
	rc = profile_merge(pp, (size_t)n, out, err, sizeof(err));
	if (rc < 0)
		rb_err("%s", err);
out:
	for (i = 0; in && i < n; i++)
		profile_free(&in[i]);
	free(in);
	free(pp);
	return rc;
}

/* The options of merge and sort: -o FILE into *out; -1 with the exit
 * code in *rc when the command is to end here (--help, a usage error). */
static int out_opt(int argc, char **argv, const char **out, int *rc)
{
	struct rb_getopt g = { .set = &merge_optset };
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o': *out = optarg; break;
		case 'h': usage(stdout); *rc = RB_EXIT_OK; return -1;
		default:
			*rc = rb_usage("profile", "unknown or incomplete option '%s'",
				       argv[optind - 1]);
			return -1;
		}
	}
	return 0;
}

static int cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	char err[PATH_MAX + 128];
	struct profile merged;
	int rc = RB_EXIT_FAIL;

	if (out_opt(argc, argv, &out, &rc) < 0)
		return rc;
	if (!out)
		return rb_usage("profile", "merge needs -o OUT");
	if (argc - optind < 1)
		return rb_usage("profile", "merge needs at least one PROFILE");
	if (load_merged(argv + optind, argc - optind, &merged) < 0)
		return RB_EXIT_FAIL;
	if (profile_write(&merged, out, err, sizeof(err)) < 0)
		rb_err("%s", err);
	else
		rc = RB_EXIT_OK;
	profile_free(&merged);
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	char err[PATH_MAX + 128], a[32], b[32];
	struct profile p;
	uint64_t bytes;
	size_t i;

	if (argc != 2)
		return rb_usage("profile", "show needs one PROFILE");
	if (profile_load(argv[1], &p, err, sizeof(err)) < 0) {
		rb_err("%s: %s", argv[1], err);
		return RB_EXIT_FAIL;
	}
	bytes = profile_bytes(&p);
	printf("image:             %" PRIu64 " bytes (%s)\n", p.id.size,
	       fmt_size(p.id.size, a, sizeof(a)));
	if (p.id.sha256[0])
		printf("image-sha256:      %s\n", p.id.sha256);
	if (p.id.ends_sha256[0])
		printf("image-ends-sha256: %s\n", p.id.ends_sha256);
	printf("page size:         %" PRIu32 "\n", p.page_size);
	printf("ranges:            %zu, %" PRIu64 " bytes (%s), %.2f %% of the image\n", p.n,
	       bytes, fmt_size(bytes, b, sizeof(b)),
	       p.id.size ? 100.0 * (double)bytes / (double)p.id.size : 0.0);
	if (p.n)
		printf("\n%8s %20s %14s\n", "order", "offset", "length");
	for (i = 0; i < p.n; i++)
		printf("%8zu %20" PRIu64 " %14" PRIu64 "\n", i + 1, p.r[i].off, p.r[i].len);
	profile_free(&p);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

/* ---- sort, extents: a profile against the files of its image ---- */

/* Open the squashfs image and read its tables; with a profile, check
 * that the profile is of this image. */
static int load_image(const char *path, const struct profile *p, struct sqfs *s)
{
	char err[256];
	struct profile_id id;
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		rb_err("%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		rb_err("%s: not a regular file", path);
		goto out;
	}
	if (p) {
		rc = profile_image_id(fd, (uint64_t)st.st_size, &id);
		if (rc < 0) {
			rb_err("%s: %s", path, strerror(-rc));
			goto out;
		}
		if (!profile_matches(p, &id)) {
			rc = -EINVAL;
			rb_err("%s: the profile is of another image (its size or its hashes differ)",
			       path);
			goto out;
		}
	}
	rc = profile_sqfs_load(fd, (uint64_t)st.st_size, s, err, sizeof(err));
	if (rc < 0)
		rb_err("%s: squashfs: %s", path, err);
out:
	if (close_checked(fd) < 0 && rc == 0) {
		sqfs_free(s);
		rb_err("%s: close: %s", path, strerror(EIO));
		rc = -EIO;
	}
	return rc;
}

static int cmd_sort(int argc, char **argv)
{
	const char *out = NULL;
	char err[PATH_MAX + 128], *text = NULL;
	struct profile_read *r = NULL;
	struct profile p;
	struct sqfs s;
	size_t n = 0, len = 0, skipped = 0;
	int rc;

	if (out_opt(argc, argv, &out, &rc) < 0)
		return rc;
	if (argc - optind < 2)
		return rb_usage("profile", "sort needs IMAGE and at least one PROFILE");
	if (!RAMBOOT_PROFILE_SORT) {
		rb_err("sort: not in this build (the static one); use the ramboot of the server");
		return RB_EXIT_FAIL;
	}
	if (load_merged(argv + optind + 1, argc - optind - 1, &p) < 0)
		return RB_EXIT_FAIL;
	rc = load_image(argv[optind], &p, &s);
	if (rc == 0) {
		rc = profile_files_read(&s, &p, &r, &n);
		if (rc == 0)
			rc = profile_group_dirs(r, n);
		if (rc == 0)
			rc = profile_sortfile(r, n, &text, &len, &skipped);
		if (rc < 0)
			rb_err("%s", strerror(-rc));
		sqfs_free(&s);
	}
	profile_files_free(r, n);
	profile_free(&p);
	if (rc < 0)
		return RB_EXIT_FAIL;
	if (skipped)
		rb_warn("%zu files left out: mksquashfs cannot read their names in a sort file",
			skipped);
	err[0] = '\0';
	if (out) {
		struct outfile of;

		rc = outfile_open(&of, out, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL, err,
				  sizeof(err));
		if (rc == 0)
			rc = outfile_write(&of, text, len);
		if (rc < 0 && !err[0])
			snprintf(err, sizeof(err), "%s: write error: %s", out, strerror(-rc));
	} else {
		rc = write_all(STDOUT_FILENO, text, len);
		if (rc < 0)
			snprintf(err, sizeof(err), "stdout: write error: %s", strerror(-rc));
	}
	free(text);
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

/* Without a profile: each file's data blocks and fragment, and each
 * table, by offset. */
static void list_layout(const struct sqfs *s)
{
	char path[SQFS_PATH_MAX + 1];
	size_t i;

	for (i = 0; i < s->narea; i++)
		printf("%" PRIu64 " %" PRIu64 " <%s>\n", s->area[i].off, s->area[i].len,
		       s->area[i].name);
	for (i = 0; i < s->nf; i++) {
		if (sqfs_path(s, i, path, sizeof(path)) < 0)
			continue;
		if (s->f[i].data_len)
			printf("%" PRIu64 " %" PRIu64 " %s\n", s->f[i].data_off, s->f[i].data_len, path);
		if (s->f[i].frag_len)
			printf("%" PRIu64 " %" PRIu32 " %s (fragment)\n", s->f[i].frag_off,
			       s->f[i].frag_len, path);
	}
}

static int cmd_extents(int argc, char **argv)
{
	char a[32];
	struct profile_read *r = NULL;
	struct profile_spread sp;
	struct profile p;
	struct sqfs s;
	size_t n = 0, i;
	uint64_t data = 0;
	int rc;

	if (argc < 2)
		return rb_usage("profile", "extents needs IMAGE");
	if (!RAMBOOT_PROFILE_SORT) {
		rb_err("extents: not in this build (the static one); use the ramboot of the server");
		return RB_EXIT_FAIL;
	}
	if (argc == 2) {
		if (load_image(argv[1], NULL, &s) < 0)
			return RB_EXIT_FAIL;
		list_layout(&s);
		sqfs_free(&s);
		goto flush;
	}
	if (load_merged(argv + 2, argc - 2, &p) < 0)
		return RB_EXIT_FAIL;
	rc = load_image(argv[1], &p, &s);
	if (rc == 0) {
		rc = profile_files_read(&s, &p, &r, &n);
		if (rc == 0)
			rc = profile_spread(&p, &sp);
		if (rc < 0)
			rb_err("%s", strerror(-rc));
		for (i = 0; rc == 0 && i < n; i++)
			data += s.f[r[i].file].data_len;
		if (rc == 0) {
			printf("%" PRIu64 " distinct extents read, spread %" PRIu64 " (%s), %" PRIu64
			       " seeks\n", sp.extents, sp.spread, fmt_size(sp.spread, a, sizeof(a)),
			       sp.seeks);
			printf("%zu of %zu files read, %" PRIu64 " bytes of their data blocks\n", n,
			       s.nf, data);
		}
		sqfs_free(&s);
	}
	profile_files_free(r, n);
	profile_free(&p);
	if (rc < 0)
		return RB_EXIT_FAIL;
flush:
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

static int cmd_stop(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return rb_usage("profile", "--stop takes nothing more");
	return profile_record_stop() < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}

int cmd_profile(int argc, char **argv)
{
	static const struct rb_subcmd subs[] = {
		{ "record", cmd_record, false }, { "merge", cmd_merge, false },
		{ "show", cmd_show, true }, { "--stop", cmd_stop, false },
		{ "sort", cmd_sort, false }, { "extents", cmd_extents, true },
	};

	return rb_subcmd_run("profile", subs, ARRAY_SIZE(subs), usage, argc, argv);
}
