// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commands of the loader: `ramboot load` and `ramboot manifest`.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "codec/codec.h"
#include "load/loadint.h"
#include "format/manifest.h"
#include "trust/sign.h"
#include "lib/outfile.h"
#include "lib/units.h"
#include "udpcast/udpcast.h"

/* An image fetched by ranges: what each URL served. */
static void mirror_report(const struct load_result *r)
{
	char a[32];
	unsigned i;

	if (r->chunks_resumed)
		rb_info("resumed: %" PRIu32 " chunks were verified already", r->chunks_resumed);
	for (i = 0; i < r->n_mirrors; i++)
		rb_info("%s: %s in %" PRIu32 " chunks, %" PRIu32 " failed", r->mirror[i].url,
			fmt_size(r->mirror[i].bytes, a, sizeof(a)), r->mirror[i].chunks,
			r->mirror[i].failures);
}

static void summary(const struct load_opts *o, const struct load_result *r)
{
	char a[32], b[32], c[64];

	/* the rate read from the source: what the network or disk gave */
	fmt_rate(r->seconds > 0 ? (uint64_t)((double)r->bytes_in / r->seconds) : 0, c, sizeof(c));
	if (o->prefetch) {
		rb_info("prefetched %s in %.2f s (%s)", fmt_size(r->bytes_out, a, sizeof(a)),
			r->seconds, c);
		return;
	}
	char ck[64] = "";

	if (r->verified && r->chunks)
		snprintf(ck, sizeof(ck), ", chunks=%" PRIu32 " chunks_retried=%" PRIu32, r->chunks,
			 r->chunks_retried);
	rb_info("%s -> %s: %s in, %s out (%s) in %.2f s, reading %s%s%s%s%s%s%s",
		o->source, r->dest_path, fmt_size(r->bytes_in, a, sizeof(a)),
		fmt_size(r->bytes_out, b, sizeof(b)), r->codec, r->seconds, c,
		!r->verified ? "" : r->sha256[0] ? ", sha256 ok" : ", chunks ok", ck,
		r->signed_by[0] ? ", signed by " : "", r->signed_by,
		r->fstype[0] ? ", " : "", r->fstype);
	mirror_report(r);
}

enum { OPT_SHA = 256, OPT_MANIFEST, OPT_MINFREE, OPT_TMPFS, OPT_PREFETCH, OPT_PROGRESS,
       OPT_EXPECT, OPT_STALL, OPT_PROFILE, OPT_PROFILE_ONLY, OPT_LOOP, OPT_RATE,
       OPT_WAIT_LOOP, OPT_RETRIES, OPT_SIGNED, OPT_KEYS, OPT_UDPCAST, OPT_NO_VERIFY,
       OPT_MIRROR, OPT_CONNECTIONS };

static const struct rb_optset load_optset = {
	.head = "Usage: ramboot load [OPTIONS] SOURCE DEST\n"
		"       ramboot load [OPTIONS] --prefetch SOURCE\n"
		"       ramboot load [OPTIONS] --udpcast[=OPTS] DEST\n"
		"\n"
		"Stream SOURCE (a file, a block device, - for stdin, or an http:// URL) into\n"
		"DEST (a file to create, normally in a tmpfs, or a block device such as a zram\n"
		"device), decompressing on the way.\n"
		"\n"
		"Options:\n",
	.opts = RB_OPTS(
		{ "decompress", 'd', "=FMT",
		  "auto (default: from magic bytes), none, zstd, xz, lzo, gzip" },
		{ "threads", 'j', "=N",
		  "threads (default: online CPUs)" },
		{ "sha256", OPT_SHA, "=HEX",
		  "SHA-256 the written image must have" },
		{ "manifest", OPT_MANIFEST, "=FILE",
		  "size and SHA-256 the written image must have; with a\n"
		  "version 2 manifest each chunk is verified as soon as\n"
		  "it is written, on every core" },
		{ "signed", OPT_SIGNED, NULL,
		  "the manifest must be signed by a trusted key\n"
		  "(/etc/ramboot/keys, /etc/ltsp/ramboot/keys)" },
		{ "keys", OPT_KEYS, "=DIR",
		  "with --signed: the trusted public keys (*.pub)" },
		{ "no-verify", OPT_NO_VERIFY, NULL,
		  "copy an http:// SOURCE with neither --sha256 nor a\n"
		  "manifest with chunk hashes (default: refused)" },
		{ "mirror", OPT_MIRROR, "=URL",
		  "another http:// URL of the same image (repeatable, up\n"
		  "to 8): chunks come from any URL that answers" },
		{ "connections", OPT_CONNECTIONS, "=N",
		  "ranged fetches at once of an uncompressed http://\n"
		  "image with chunk hashes (default 4)" },
		{ "retries", OPT_RETRIES, "=N",
		  "read a chunk that fails its hash or its read again,\n"
		  "up to N times (default 3; a file or block device\n"
		  "SOURCE, uncompressed, with a version 2 manifest)" },
		{ "min-free", OPT_MINFREE, "=SIZE",
		  "memory that must stay available (default 256M)" },
		{ "tmpfs", OPT_TMPFS, "=DIR",
		  "mount a tmpfs sized to the image at DIR; DEST is inside it" },
		{ "prefetch", OPT_PREFETCH, NULL,
		  "read SOURCE once into the page cache, keep nothing;\n"
		  "politely: 2 reads of 1 MiB in flight, idle I/O class,\n"
		  "waiting while the loop device over SOURCE has reads\n"
		  "in flight, pages already cached skipped" },
		{ "profile", OPT_PROFILE, "=FILE",
		  "with --prefetch: read the ranges of this boot profile\n"
		  "first (default SOURCE.profile if there is one; none:\n"
		  "offset order); used only if recorded on SOURCE" },
		{ "profile-only", OPT_PROFILE_ONLY, NULL,
		  "with --prefetch: read the profile's ranges, no more" },
		{ "loop", OPT_LOOP, "=DEV",
		  "with --prefetch: the loop device to yield to (default:\n"
		  "the one backed by SOURCE)" },
		{ "wait-loop", OPT_WAIT_LOOP, "=S",
		  "with --prefetch: read nothing until the loop device\n"
		  "backed by SOURCE appears (the boot mounted it), for\n"
		  "at most S seconds" },
		{ "rate", OPT_RATE, "=RATE",
		  "with --prefetch: read at most RATE (12MiB/s, 100Mbit)" },
		{ "progress", OPT_PROGRESS, "=MODE",
		  "auto, bar, plain, none (default auto)" },
		{ "expect-fs", OPT_EXPECT, "=TYPE",
		  "fail unless the image is a TYPE filesystem (squashfs, ...)" },
		{ "udpcast", OPT_UDPCAST, "[=OPTS]",
		  "the image comes from a udpcast session (ramboot serve):\n"
		  "udp-receiver's stdout is the SOURCE; OPTS is\n"
		  "portbase=P,interface=IF,start-timeout=S,\n"
		  "receive-timeout=S (default: 9000, udpcast's\n"
		  "choice of interface, 20, 10)" },
		{ "stall-timeout", OPT_STALL, "=S",
		  "give up when the source delivers nothing for S\n"
		  "seconds (default 30, 0: never)" },
		{ "force", 'f', NULL,
		  "replace an existing DEST file (only a regular file,\n"
		  "never the source; the old one stays until the new\n"
		  "one is verified)" },
		RB_OPT_VERBOSE,
		RB_OPT_HELP),
	.tail = "\n"
		"Exit codes: 0 ok, 1 runtime error (I/O, corrupt input, verification failed),\n"
		"2 usage, 3 not enough memory (the caller should fall back).\n",
	.indent = 6, .col = 24,
};

/* Does DEST stay inside DIR, by its components? ".." anywhere is
 * refused; an absolute DEST must have DIR's components first. The
 * loader checks again, on the mounted file system. */
static bool dest_inside(const char *dest, const char *dir)
{
	const char *p = dest;
	size_t n = strlen(dir);

	for (;;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.')
			return false;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (dest[0] != '/')
		return true;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(dest, dir, n) && dest[n] == '/' && dest[n + 1];
}

/* --loop: "loopN" or a path ending in it. */
static bool loop_name_ok(const char *s)
{
	const char *base = strrchr(s, '/');

	base = base ? base + 1 : s;
	if (strncmp(base, "loop", 4) || !base[4])
		return false;
	return strspn(base + 4, "0123456789") == strlen(base + 4);
}

/* What the command line says beyond struct load_opts. */
struct load_cli {
	struct udpcast_opts uc;
	bool udpcast;         /* --udpcast */
	bool stall_given;     /* --stall-timeout */
};

/* One option (getopt's c and optarg) into o and cli: -1 to go on, else
 * the exit code (--help, a usage error). */
static int load_opt(int c, char *arg, char **argv, struct load_opts *o, struct load_cli *cli)
{
	int w;

	switch (c) {
	case 'd': o->decompress = arg; break;
	case 'j':
		if (parse_threads("load", arg, &o->threads))
			return RB_EXIT_USAGE;
		break;
	case OPT_SHA: o->sha256 = arg; break;
	case OPT_MANIFEST: o->manifest = arg; break;
	case OPT_SIGNED: o->signed_only = true; break;
	case OPT_NO_VERIFY: o->no_verify = true; break;
	case OPT_KEYS: o->keydir = arg; break;
	case OPT_MINFREE:
		if (size_arg("load", "min-free", arg, UNIT_BYTES, &o->min_free) < 0)
			return RB_EXIT_USAGE;
		break;
	case OPT_TMPFS: o->tmpfs = arg; break;
	case OPT_PREFETCH: o->prefetch = true; break;
	case OPT_PROGRESS:
		w = rb_word(arg, RB_WORDS({ "auto", PROGRESS_AUTO }, { "bar", PROGRESS_BAR },
					  { "plain", PROGRESS_PLAIN }, { "none", PROGRESS_NONE }));
		if (w < 0)
			return rb_usage("load", "--progress: '%s' is not auto, bar, plain or "
					   "none", arg);
		o->progress = (enum progress_mode)w;
		break;
	case OPT_EXPECT: o->expect_fs = arg; break;
	case OPT_STALL:
		if (parse_seconds(arg, &o->stall_timeout) < 0)
			return rb_usage("load", "--stall-timeout: '%s' is not a number of "
					   "seconds (0: never)", arg);
		cli->stall_given = true;
		break;
	case OPT_UDPCAST: {
		char err[200];

		if (udpcast_parse(arg, &cli->uc, err, sizeof(err)) < 0)
			return rb_usage("load", "--%s", err);
		cli->udpcast = true;
		break;
	}
	case OPT_PROFILE:
		if (!*arg)
			return rb_usage("load", "%s", "--profile: need a FILE or none");
		o->profile = arg;
		break;
	case OPT_PROFILE_ONLY: o->profile_only = true; break;
	case OPT_LOOP:
		if (!loop_name_ok(arg))
			return rb_usage("load", "--loop: '%s' is not a loop device (loopN or "
					   "/dev/loopN)", arg);
		o->loop = arg;
		break;
	case OPT_WAIT_LOOP:
		if (parse_seconds(arg, &o->wait_loop) < 0)
			return rb_usage("load", "--wait-loop: '%s' is not a number of seconds",
					   arg);
		break;
	case OPT_RATE:
		if (rate_arg("load", "rate", arg, UNIT_BYTES, &o->rate) < 0)
			return RB_EXIT_USAGE;
		if (o->rate == 0)
			return rb_usage("load", "--rate: '%s' is no rate (no cap: leave --rate "
					   "out)", arg);
		break;
	case OPT_RETRIES: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > 100)
			return rb_usage("load", "--retries: '%s' is not a number from 0 to 100",
					   arg);
		o->retries = (int)v;
		break;
	}
	case OPT_MIRROR:
		if (!source_is_url(arg))
			return rb_usage("load", "--mirror: '%s' is not an http:// URL", arg);
		if (o->n_mirrors == LOAD_MIRRORS_MAX)
			return rb_usage("load", "--mirror: at most %d", LOAD_MIRRORS_MAX);
		o->mirrors[o->n_mirrors++] = arg;
		break;
	case OPT_CONNECTIONS: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 64)
			return rb_usage("load", "--connections: '%s' is not a number from 1 to 64",
					   arg);
		o->connections = (int)v;
		break;
	}
	case 'f': o->force = true; break;
	case 'v': rb_verbose = 1; break;
	case 'h':
		rb_opts_usage(stdout, &load_optset);
		return RB_EXIT_OK;
	default:
		return rb_usage("load", "unknown or incomplete option '%s'", argv[optind - 1]);
	}
	return -1;
}

/* The options together and the operands: -1 with o complete (its
 * udpcast options cli's), else the exit code of a usage error. */
static int load_check(int argc, char **argv, struct load_opts *o, struct load_cli *cli)
{
	if (o->prefetch) {
		if (argc - optind != 1)
			return rb_usage("load", "%s", "--prefetch takes one SOURCE and no DEST");
		if (o->sha256 || o->manifest || o->tmpfs || o->expect_fs)
			return rb_usage("load", "%s", "--prefetch keeps nothing to verify or mount");
		if (o->profile_only && o->profile && !strcmp(o->profile, "none"))
			return rb_usage("load", "%s", "--profile-only needs a profile");
	} else if (o->profile || o->profile_only || o->loop || o->rate || o->wait_loop > 0) {
		return rb_usage("load", "%s", "--profile, --profile-only, --loop, --wait-loop "
				   "and --rate go with --prefetch");
	} else if (cli->udpcast) {
		if (argc - optind != 1)
			return rb_usage("load", "%s", "--udpcast takes DEST and no SOURCE");
		/* The wait for the session counts as a stall: it must not
		 * end before udp-receiver's own start timeout does. */
		if (!cli->stall_given && o->stall_timeout < cli->uc.start_timeout + 5)
			o->stall_timeout = cli->uc.start_timeout + 5;
		else if (o->stall_timeout > 0 && o->stall_timeout <= cli->uc.start_timeout)
			return rb_usage("load", "--stall-timeout must be longer than the udpcast "
					   "start-timeout (%u s)", cli->uc.start_timeout);
	} else if (argc - optind != 2) {
		return rb_usage("load", "%s", "need SOURCE and DEST");
	}
	if (o->prefetch && cli->udpcast)
		return rb_usage("load", "%s", "--prefetch reads a file, not a udpcast stream");
	o->source = cli->udpcast ? "udpcast" : argv[optind];
	o->dest = o->prefetch ? NULL : argv[optind + (cli->udpcast ? 0 : 1)];
	if (cli->udpcast)
		o->udpcast = &cli->uc;
	if (strcmp(o->decompress, "auto") && !codec_by_name(o->decompress))
		return rb_usage("load", "--decompress: unknown format '%s'", o->decompress);
	if (o->sha256 && strlen(o->sha256) != 64)
		return rb_usage("load", "--sha256: '%s' is not 64 hex digits", o->sha256);
	if (o->n_mirrors && (cli->udpcast || !source_is_url(o->source)))
		return rb_usage("load", "%s", "--mirror goes with an http:// SOURCE");
	if (o->signed_only && !o->manifest)
		return rb_usage("load", "--signed needs --manifest");
	if (o->keydir && !o->signed_only)
		return rb_usage("load", "--keys goes with --signed");
	if (o->tmpfs && o->dest && !dest_inside(o->dest, o->tmpfs))
		return rb_usage("load", "DEST '%s' must be inside the --tmpfs directory", o->dest);
	return -1;
}

int cmd_load(int argc, char **argv)
{
	struct load_opts o;
	struct load_result r;
	struct load_cli cli = { .udpcast = false, .stall_given = false };
	struct rb_getopt g = { .set = &load_optset };
	int c, rc;

	load_opts_init(&o);
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		rc = load_opt(c, optarg, argv, &o, &cli);
		if (rc >= 0)
			return rc;
	}
	rc = load_check(argc, argv, &o, &cli);
	if (rc >= 0)
		return rc;

	rc = load_run(&o, &r);
	if (rc != RB_EXIT_OK) {
		rb_err("%s", r.error);
		if (r.n_mirrors > 1)
			mirror_report(&r);
		if (r.part_kept)
			rb_info("%s.part kept: %" PRIu32 " of the chunks are in; the same command "
				"again resumes", r.dest_path, r.chunks);
		/* Cleaned up: now die of the signal, as the caller expects. */
		if (r.err == LOAD_SIGNAL)
			guard_reraise(r.signo);
		return rc;
	}
	summary(&o, &r);
	return RB_EXIT_OK;
}
