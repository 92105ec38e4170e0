// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot lazy: the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "lazy/lazy.h"
#include "lib/base.h"
#include "lib/guard.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/units.h"

enum { OPT_IMAGE = 256, OPT_LOOP, OPT_TARGET, OPT_TMPFS, OPT_SHA, OPT_MANIFEST, OPT_MINFREE,
       OPT_STALL, OPT_RATE, OPT_STATUS, OPT_BACKGROUND, OPT_WAIT_LOOP, OPT_PROFILE,
       OPT_SIGNED, OPT_KEYS, OPT_UDPCAST, OPT_MIRROR };

#define MIRRORS_MAX 7           /* with the image, lazy/http.c's URLS_MAX */

static const struct rb_optset optset = {
	.head = "Usage: ramboot lazy --image=FILE [OPTIONS]\n"
		"\n"
		"Copy FILE, the image a read-only loop device is backed by, into RAM while\n"
		"the system runs from it, verify the copy, and switch the loop device to it\n"
		"(LOOP_CHANGE_FD). What the page cache holds of FILE is copied first; then\n"
		"the rest, yielding to other reads of the loop device. On any failure the\n"
		"copy is freed and the loop device stays on FILE.\n"
		"\n"
		"Options:\n",
	.opts = RB_OPTS(
		{ "image", OPT_IMAGE, "=FILE",
		  "the image (a file or a block device)" },
		{ "loop", OPT_LOOP, "=DEV",
		  "its loop device (default: the one backed by FILE)" },
		{ "target", OPT_TARGET, "=T",
		  "tmpfs (default) or zram" },
		{ "tmpfs", OPT_TMPFS, "=DIR",
		  "mount the tmpfs here (default " LAZY_TMPFS_DIR ")" },
		{ "sha256", OPT_SHA, "=HEX",
		  "SHA-256 the copy must have" },
		{ "manifest", OPT_MANIFEST, "=FILE",
		  "size and SHA-256 the copy must have" },
		{ "signed", OPT_SIGNED, NULL,
		  "the manifest must be signed by a trusted key" },
		{ "keys", OPT_KEYS, "=DIR",
		  "with --signed: the trusted public keys (*.pub)" },
		{ "min-free", OPT_MINFREE, "=SIZE",
		  "memory that must stay available (default 256M)" },
		{ "stall-timeout", OPT_STALL, "=S",
		  "give up when a read of FILE takes S seconds\n"
		  "(default 30, 0: never)" },
		{ "rate", OPT_RATE, "=RATE",
		  "read at most RATE from FILE (12MiB/s, 100Mbit)\n"
		  "(page cache hits not counted; default: no cap)" },
		{ "status", OPT_STATUS, "=FILE",
		  "the status file (default " LAZY_STATUS ")" },
		{ "background", OPT_BACKGROUND, NULL,
		  "return once all is open and checked; the copy\n"
		  "goes on in a child (log: the status file + .log)" },
		{ "wait-loop", OPT_WAIT_LOOP, "=S",
		  "the loop device may come later: open the image and\n"
		  "all else now, then wait up to S seconds for the\n"
		  "loop device backed by it (not with --loop)" },
		{ "profile", OPT_PROFILE, "=FILE",
		  "boot profile: its ranges are copied first when it\n"
		  "was recorded on FILE's image (default: FILE.profile\n"
		  "beside the image when there; 'none': no profile)" },
		{ "mirror", OPT_MIRROR, "=URL",
		  "with an http:// image: another server of the same\n"
		  "image (repeatable, up to 7); chunks come from any,\n"
		  "each verified, and a server that fails is dropped" },
		{ "udpcast", OPT_UDPCAST, "[=OPTS]",
		  "take the copy from a udpcast session of the raw\n"
		  "image (ramboot serve); OPTS: portbase=P,\n"
		  "interface=IF,start-timeout=S,receive-timeout=S.\n"
		  "Used only with --sha256 or --manifest; when the\n"
		  "stream fails, FILE is copied as without it" },
		RB_OPT_VERBOSE,
		RB_OPT_HELP),
	.tail = "\n"
		"Exit codes: 0 switched (with --background: started), 1 gave up (the loop\n"
		"device stays on FILE), 2 usage, 3 not enough memory.\n",
	.indent = 6, .col = 26,
};

/* The outcome of lazy_start() in one line; the exit code. A run ended
 * by a signal dies of it (guard_reraise), as the caller expects. */
static int say_outcome(const struct lazy_opts *o, const struct lazy_result *r, int rc)
{
	char a[32], b[32], c[32];

	if (rc != RB_EXIT_OK) {
		if (r->loop[0] && r->err != LAZY_USAGE)
			rb_err("%s; %s stays on %s", r->error, r->loop, o->image);
		else
			rb_err("%s", r->error);
		if (r->err == LAZY_SIGNAL)
			guard_reraise(r->signo);
		return rc;
	}
	if (o->background && lazy_serves_http(o)) {
		rb_info("%s (%s) reads %s through process %d, which copies it to RAM", r->loop,
			r->fstype[0] ? r->fstype : "no file system found", o->image, (int)r->child);
		return RB_EXIT_OK;
	}
	if (o->background) {
		rb_info("copying %s to RAM in the background (pid %d)", o->image, (int)r->child);
		return RB_EXIT_OK;
	}
	if (r->stream && r->fallback == LAZY_FB_NONE)
		rb_info("%s now reads %s: %s from the udpcast stream%s in %.2f s", r->loop, r->copy,
			fmt_size(r->bytes_stream, a, sizeof(a)), r->verified > 0 ? ", sha256 ok," : "",
			r->ended - r->started);
	else
		rb_info("%s now reads %s: %s, %s from the page cache, %s from the source%s in "
			"%.2f s", r->loop, r->copy, fmt_size(r->size, a, sizeof(a)),
			fmt_size(r->bytes_cached, b, sizeof(b)), fmt_size(r->bytes_network, c, sizeof(c)),
			r->verified > 0 ? ", sha256 ok," : "", r->ended - r->started);
	return RB_EXIT_OK;
}

int cmd_lazy(int argc, char **argv)
{
	struct lazy_opts o;
	struct lazy_result r;
	struct rb_getopt g = { .set = &optset };
	const char *mirror[MIRRORS_MAX];
	char why[256], *urls = NULL;
	int opt, w, n_mirrors = 0, rc;

	lazy_opts_init(&o);
	while ((opt = rb_getopt(&g, argc, argv)) != -1) {
		switch (opt) {
		case OPT_IMAGE: o.image = optarg; break;
		case OPT_MIRROR:
			if (!lazy_is_http(optarg) || strchr(optarg, ','))
				return rb_usage("lazy", "--mirror: '%s' is not an http:// URL", optarg);
			if (n_mirrors == MIRRORS_MAX)
				return rb_usage("lazy", "--mirror: at most %d", MIRRORS_MAX);
			mirror[n_mirrors++] = optarg;
			break;
		case OPT_LOOP: o.loop = optarg; break;
		case OPT_TARGET:
			w = rb_word(optarg, RB_WORDS({ "tmpfs", LAZY_TARGET_TMPFS },
						     { "zram", LAZY_TARGET_ZRAM }));
			if (w < 0)
				return rb_usage("lazy", "--target: '%s' is not tmpfs or zram", optarg);
			o.target = (enum lazy_target)w;
			break;
		case OPT_TMPFS: o.tmpfs = optarg; break;
		case OPT_SHA: o.sha256 = optarg; break;
		case OPT_MANIFEST: o.manifest = optarg; break;
		case OPT_SIGNED: o.signed_only = true; break;
		case OPT_KEYS: o.keydir = optarg; break;
		case OPT_MINFREE:
			if (size_arg("lazy", "min-free", optarg, UNIT_BYTES, &o.min_free) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_STALL:
			if (parse_seconds(optarg, &o.stall_timeout) < 0)
				return rb_usage("lazy", "--stall-timeout: '%s' is not a number of seconds "
						   "(0: never)", optarg);
			break;
		case OPT_RATE:
			if (rate_arg("lazy", "rate", optarg, UNIT_BYTES, &o.rate) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_STATUS: o.status = optarg; break;
		case OPT_BACKGROUND: o.background = true; break;
		case OPT_WAIT_LOOP:
			if (parse_seconds(optarg, &o.wait_loop) < 0)
				return rb_usage("lazy", "--wait-loop: '%s' is not a number of seconds",
						   optarg);
			break;
		case OPT_PROFILE:
			if (!*optarg)
				return rb_usage("lazy", "--profile: a file or 'none'");
			o.profile = optarg;
			break;
		case OPT_UDPCAST: o.udpcast = optarg ? optarg : ""; break;
		case 'v': rb_verbose = 1; break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default:
			return rb_usage("lazy", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rb_usage("lazy", "unexpected argument '%s'", argv[optind]);
	if (n_mirrors) {
		/* The copier's own list: URL,MIRROR,... (ramboot.url=). */
		size_t len = o.image ? strlen(o.image) + 1 : 0;

		if (!o.image || !lazy_is_http(o.image))
			return rb_usage("lazy", "--mirror: only with an http:// --image");
		for (w = 0; w < n_mirrors; w++)
			len += strlen(mirror[w]) + 1;
		if (!(urls = malloc(len))) {
			rb_err("out of memory");
			return RB_EXIT_NOMEM;
		}
		strcpy(urls, o.image);
		for (w = 0; w < n_mirrors; w++)
			strcat(strcat(urls, ","), mirror[w]);
		o.image = urls;
	}
	if (lazy_check(&o, why, sizeof(why)) < 0) {
		free(urls);
		return rb_usage("lazy", "%s", why);
	}
	rc = say_outcome(&o, &r, lazy_start(&o, &r));
	free(urls);
	return rc;
}
