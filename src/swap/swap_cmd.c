// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot swap: its options, --status, --off, and the set-up of
 * swap.c with the network tier's process started after it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/path.h"
#include "lib/report.h"
#include "lib/units.h"
#include "dev/nbd.h"
#include "format/swaphdr.h"
#include "status/status.h"
#include "swap/netmem.h"
#include "swap/swap.h"
#include "swap/swapint.h"

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		rb_err("%s: '%s': expected an integer in %d..%d", opt, s, lo, hi);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

enum {
	OPT_SIZE = 256, OPT_ALGO, OPT_PRIO, OPT_WB, OPT_MEMLIMIT, OPT_LOCAL,
	OPT_SWAPPINESS, OPT_PAGECLUSTER, OPT_KEEPZSWAP, OPT_NOTUNE, OPT_OFF,
	OPT_FORCE, OPT_STATUS, OPT_JSON, OPT_NET, OPT_NET_EXPORT, OPT_NET_SIZE, OPT_NET_RATE,
	OPT_NET_IDLE, OPT_NET_PERIOD, OPT_NET_TIMEOUT, OPT_NET_MAXRAM,
};

static const struct rb_optset optset = {
	.head = "Usage: ramboot swap [OPTIONS]           set up one zram swap device\n"
		"       ramboot swap --off DEVICE        swapoff and release a device ramboot set up\n"
		"       ramboot swap --status [--json]   the same as ramboot status\n"
		"\n"
		"Options:\n",
	.opts = RB_OPTS(
		{ "size", OPT_SIZE, "=EXPR",
		  "swap size (default " DEFAULT_SIZE "); EXPR uses ram (MemTotal),\n"
		  "sizes (512M, 2G, binary), N% of ram, + - * /,\n"
		  "parentheses, min(), max()" },
		{ "algorithm", OPT_ALGO, "=LIST",
		  "compressors in order of preference (default " DEFAULT_ALGORITHMS ")" },
		{ "priority", OPT_PRIO, "=N",
		  "swap priority 0..32767 (default " RB_STR(DEFAULT_PRIORITY) "); -1: the kernel\n"
		  "assigns one (negative, below every other swap)" },
		{ "writeback", OPT_WB, "=DEV",
		  "backing device for idle/incompressible pages" },
		{ "mem-limit", OPT_MEMLIMIT, "=EXPR",
		  "cap on the RAM the device may use" },
		{ "local-swap", OPT_LOCAL, NULL,
		  "also enable swap partitions on local disks,\n"
		  RB_STR(LOCAL_PRIO_GAP) " below --priority" },
		{ "swappiness", OPT_SWAPPINESS, "=N",
		  "vm.swappiness (default 180, or 100 on kernels < 5.8)" },
		{ "page-cluster", OPT_PAGECLUSTER, "=N",
		  "vm.page-cluster (default 0)" },
		{ "keep-zswap", OPT_KEEPZSWAP, NULL,
		  "do not disable zswap" },
		{ "no-tune", OPT_NOTUNE, NULL,
		  "change no vm.* or zswap setting" },
		{ "net", OPT_NET, "=ADDR[:PORT]",
		  "network memory tier: idle pages written back, encrypted,\n"
		  "to this NBD server (port " RB_STR(NBD_DEFAULT_PORT) "; docs/netmem.md)" },
		{ "net-export", OPT_NET_EXPORT, "=NAME",
		  "its export (default " NETMEM_EXPORT ")" },
		{ "net-size", OPT_NET_SIZE, "=SIZE",
		  "bytes of the export used (default all)" },
		{ "net-rate", OPT_NET_RATE, "=RATE",
		  "written back at most (default 4MiB/s)" },
		{ "net-idle", OPT_NET_IDLE, "=DURATION",
		  "untouched this long, a page may go (default " RB_STR(NETMEM_IDLE_AGE) ")" },
		{ "net-period", OPT_NET_PERIOD, "=DURATION",
		  "the time between writebacks (default " RB_STR(NETMEM_PERIOD) ")" },
		{ "net-timeout", OPT_NET_TIMEOUT, "=DURATION",
		  "a page on a lost server: an error after this long\n(default " RB_STR(NETMEM_TIMEOUT) ")" },
		{ "net-max-ram", OPT_NET_MAXRAM, "=SIZE",
		  "only with at most this RAM (default 2G; 0: any)" },
		{ "off", OPT_OFF, " DEVICE",
		  "release DEVICE: swapoff, reset, hot_remove; its network\n"
		  "memory tier too" },
		{ "force", OPT_FORCE, NULL,
		  "with --off: release a device not labelled " SWAPHDR_LABEL ",\n"
		  "or one whose network tier lost its link (its pages there are lost)" },
		{ "status", OPT_STATUS, NULL, NULL },
		{ "json", OPT_JSON, NULL, NULL },
		RB_OPT_VERBOSE,
		RB_OPT_HELP),
	.tail = "\n"
		"Prints the device on stdout. Exit codes: 0 ok, 1 runtime error, 2 usage.\n",
	.indent = 2, .col = 23,
};

int cmd_swap(int argc, char **argv)
{
	struct swap_opts o;
	struct swap_result r;
	struct netmem_opts no;
	const char *off = NULL;
	bool force = false, status = false, json = false;
	struct rb_getopt g = { .set = &optset };
	int c, ex;

	swap_opts_init(&o);
	netmem_opts_init(&no);
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_SIZE: o.size = optarg; break;
		case OPT_ALGO: o.algorithm = optarg; break;
		case OPT_PRIO:
			if (parse_int("--priority", optarg, SWAP_PRIO_KERNEL, SWAP_FLAG_PRIO_MASK,
				      &o.priority) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_WB: o.writeback = optarg; break;
		case OPT_MEMLIMIT: o.mem_limit = optarg; break;
		case OPT_LOCAL: o.local_swap = true; break;
		case OPT_SWAPPINESS:
			if (parse_int("--swappiness", optarg, 0, 200, &o.swappiness) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_PAGECLUSTER:
			if (parse_int("--page-cluster", optarg, 0, 31, &o.page_cluster) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_KEEPZSWAP: o.keep_zswap = true; break;
		case OPT_NOTUNE: o.tune = false; break;
		case OPT_OFF: off = optarg; break;
		case OPT_FORCE: force = true; break;
		case OPT_STATUS: status = true; break;
		case OPT_JSON: json = true; break;
		case OPT_NET: no.server = optarg; o.net = &no; break;
		case OPT_NET_EXPORT: no.export = optarg; break;
		case OPT_NET_SIZE:
			if (size_arg("swap", "net-size", optarg, UNIT_BYTES, &no.size) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_NET_MAXRAM:
			if (size_arg("swap", "net-max-ram", optarg, UNIT_BYTES, &no.max_ram) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_NET_RATE:
			if (rate_arg("swap", "net-rate", optarg, UNIT_BYTES, &no.rate) < 0)
				return RB_EXIT_USAGE;
			break;
		case OPT_NET_IDLE: case OPT_NET_PERIOD: case OPT_NET_TIMEOUT:
			if (duration_secs(optarg, 1, 86400, c == OPT_NET_IDLE ? &no.idle_age :
					  c == OPT_NET_PERIOD ? &no.period : &no.timeout) < 0)
				return rb_opts_fail(&optset, "--net-%s: '%s': expected a duration of "
						    "whole seconds from 1 s to 1 d (90, 2m, 1h)",
						    c == OPT_NET_IDLE ? "idle" : c == OPT_NET_PERIOD ?
						    "period" : "timeout", optarg);
			break;
		case 'v': rb_verbose++; break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default:
			if (optopt && optopt < 256)
				return rb_opts_fail(&optset, "unknown option '-%c'", optopt);
			return rb_opts_fail(&optset, "unknown or incomplete option '%s'",
					    argv[optind - 1]);
		}
	}
	if (optind < argc) {
		rb_err("unexpected argument '%s'", argv[optind]);
		return RB_EXIT_USAGE;
	}
	if (status) {
		struct status_opts so = { .json = json, .check = false };

		rb_set_cmd("status");
		return status_show(&so);
	}
	if (o.net && o.writeback) {
		rb_err("--net and --writeback exclude each other (one backing device)");
		return RB_EXIT_USAGE;
	}
	if (json || (force && !off)) {
		rb_err("%s only goes with %s", json ? "--json" : "--force",
		       json ? "--status" : "--off");
		return RB_EXIT_USAGE;
	}
	if (off) {
		char error[256];

		ex = swap_release(off, force, error, sizeof(error));
		if (ex == RB_EXIT_OK)
			rb_info("%s released", off);
		else if (error[0])
			rb_err("%s", error);
		return ex;
	}
	ex = swap_setup(&o, &r);
	if (ex != RB_EXIT_OK) {
		rb_err("%s", r.error);
		return ex;
	}
	{
		char h[32];

		rb_info("%s: %s swap, %s, %spriority %d", r.device,
			fmt_size(r.size, h, sizeof(h)), r.algorithm,
			o.priority == SWAP_PRIO_KERNEL ? "kernel-assigned " : "", r.priority);
	}
	if (o.net) {
		char rundir[PATH_MAX];

		if (r.net.backing[0])
			rb_info("%s: network memory on %s (%s of export %s), encrypted", r.device,
				r.net.server, fmt_size(r.net.bytes, rundir, sizeof(rundir)), no.export);
		if (rb_path(rundir, sizeof(rundir), REPORT_DIR) == 0)
			(void)netmem_start(&no, &r.net, r.zram_id, rundir);
	}
	printf("%s\n", r.device);
	return fflush(stdout) == 0 ? RB_EXIT_OK : RB_EXIT_FAIL;
}
