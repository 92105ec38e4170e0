// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot lazy: the command line.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "lazy/lazy.h"
#include "lib/guard.h"
#include "lib/ramboot.h"

static void usage(FILE *out)
{
	fputs("Usage: ramboot lazy --image=FILE [OPTIONS]\n"
	      "\n"
	      "Copy FILE, the image a read-only loop device is backed by, into RAM while\n"
	      "the system runs from it, verify the copy, and switch the loop device to it\n"
	      "(LOOP_CHANGE_FD). What the page cache holds of FILE is copied first; then\n"
	      "the rest, yielding to other reads of the loop device. On any failure the\n"
	      "copy is freed and the loop device stays on FILE.\n"
	      "\n"
	      "Options:\n"
	      "      --image=FILE        the image (a file or a block device)\n"
	      "      --loop=DEV          its loop device (default: the one backed by FILE)\n"
	      "      --target=T          tmpfs (default) or zram\n"
	      "      --tmpfs=DIR         mount the tmpfs here (default " LAZY_TMPFS_DIR ")\n"
	      "      --sha256=HEX        SHA-256 the copy must have\n"
	      "      --manifest=FILE     size and SHA-256 the copy must have\n"
	      "      --signed            the manifest must be signed by a trusted key\n"
	      "      --keys=DIR          with --signed: the trusted public keys (*.pub)\n"
	      "      --min-free=SIZE     memory that must stay available (default 256M)\n"
	      "      --stall-timeout=S   give up when a read of FILE takes S seconds\n"
	      "                          (default 30, 0: never)\n"
	      "      --rate=RATE         read at most RATE from FILE (12MiB/s, 100Mbit)\n"
	      "                          (page cache hits not counted; default: no cap)\n"
	      "      --status=FILE       the status file (default " LAZY_STATUS ")\n"
	      "      --background        return once all is open and checked; the copy\n"
	      "                          goes on in a child (log: the status file + .log)\n"
	      "      --wait-loop=S       the loop device may come later: open the image and\n"
	      "                          all else now, then wait up to S seconds for the\n"
	      "                          loop device backed by it (not with --loop)\n"
	      "      --profile=FILE      boot profile: its ranges are copied first when it\n"
	      "                          was recorded on FILE's image (default: FILE.profile\n"
	      "                          beside the image when there; 'none': no profile)\n"
	      "      --udpcast[=OPTS]    take the copy from a udpcast session of the raw\n"
	      "                          image (ramboot serve); OPTS: portbase=P,\n"
	      "                          interface=IF,start-timeout=S,receive-timeout=S.\n"
	      "                          Used only with --sha256 or --manifest; when the\n"
	      "                          stream fails, FILE is copied as without it\n"
	      "  -v, --verbose           more messages\n"
	      "  -h, --help              this help\n"
	      "\n"
	      "Exit codes: 0 switched (with --background: started), 1 gave up (the loop\n"
	      "device stays on FILE), 2 usage, 3 not enough memory.\n", out);
}

enum { OPT_IMAGE = 256, OPT_LOOP, OPT_TARGET, OPT_TMPFS, OPT_SHA, OPT_MANIFEST, OPT_MINFREE,
       OPT_STALL, OPT_RATE, OPT_STATUS, OPT_BACKGROUND, OPT_WAIT_LOOP, OPT_PROFILE,
       OPT_SIGNED, OPT_KEYS, OPT_UDPCAST };

static const struct option longopts[] = {
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "sha256", required_argument, NULL, OPT_SHA },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "signed", no_argument, NULL, OPT_SIGNED },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "min-free", required_argument, NULL, OPT_MINFREE },
	{ "stall-timeout", required_argument, NULL, OPT_STALL },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "background", no_argument, NULL, OPT_BACKGROUND },
	{ "wait-loop", required_argument, NULL, OPT_WAIT_LOOP },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "udpcast", optional_argument, NULL, OPT_UDPCAST },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_lazy(int argc, char **argv)
{
	struct lazy_opts o;
	int opt;

	lazy_opts_init(&o);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_IMAGE: o.image = optarg; break;
		case OPT_LOOP: o.loop = optarg; break;
		case OPT_TARGET:
			if (!strcmp(optarg, "tmpfs"))
				o.target = LAZY_TARGET_TMPFS;
			else if (!strcmp(optarg, "zram"))
				o.target = LAZY_TARGET_ZRAM;
			else
				return rb_usage("lazy", "--target: '%s' is not tmpfs or zram", optarg);
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
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			return rb_usage("lazy", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rb_usage("lazy", "unexpected argument '%s'", argv[optind]);
	return lazy_start(&o);
}
