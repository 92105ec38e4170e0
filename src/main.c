// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot - boot-time initrd tooling for LTSP clients.
 * Dispatches to the sub-commands; each one returns an exit code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/msg.h"
#include "lib/path.h"

#ifndef RAMBOOT_VERSION
#error "RAMBOOT_VERSION comes from the file VERSION, through the Makefile"
#endif

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "load",     cmd_load,     "stream an image into RAM (tmpfs file or zram), or prefetch it" },
	{ "manifest", cmd_manifest, "write the manifest (size, SHA-256) of an image" },
	{ "publish",  cmd_publish,  "write an image's manifest and hash tree, signed, atomically" },
	{ "swap",     cmd_swap,     "set up compressed swap on a zram device" },
	{ "status",   cmd_status,   "show the boot report and live zram statistics" },
	{ "boot",     cmd_boot,     "initramfs entry point: act on the kernel command line" },
	{ "initrd",   cmd_initrd,   "write or list an initrd holding ramboot" },
	{ "profile",  cmd_profile,  "record, merge or show a boot profile of an image" },
	{ "lazy",     cmd_lazy,     "copy the mounted network image to RAM and switch to it" },
	{ "keygen",   cmd_keygen,   "make an Ed25519 key pair for signing manifests" },
	{ "sign",     cmd_sign,     "sign a manifest, or check its signature" },
	{ "serve",    cmd_serve,    "send an image to a whole lab at once: udp-sender sessions" },
	{ "verity",   cmd_verity,   "write a dm-verity hash tree; open or close a verity mapping" },
	{ "cache",    cmd_cache,    "the local-disk image cache: init, refresh, status; chunk indexes" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: ramboot COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "  %-9s %s\n", "help", "show this help, or with COMMAND that command's");
	fprintf(out, "\nRun 'ramboot COMMAND --help' for the options of a command.\n"
		"Exit codes: 0 ok, 1 runtime error, 2 usage, 3 not enough memory.\n");
}

/* Descriptors 0, 1 and 2 are open before anything else is: a program
 * started with one of them closed would otherwise get its next file
 * there, and write messages into it (a log line inside an image). */
static int std_fds_open(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			/* A lower one was closed too and got it: still a hole. */
			(void)close(n);
			return -EBADF;
		}
	}
	return 0;
}

/* What a command printed must have reached stdout: a full disk or a
 * closed pipe is a failure of a command that said it succeeded (keygen,
 * sign --check, initrd --list, --help). `ramboot boot` is exit 0 in
 * every runtime outcome (the hook reads its report); a command that
 * handles a late write error itself clears it (publish). */
static int stdout_done(const char *cmd, int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	if (cmd && !strcmp(cmd, "boot"))
		return rc;
	if (rc == RB_EXIT_OK) {
		fprintf(stderr, "ramboot: %s%sstdout: write error\n", cmd ? cmd : "",
			cmd ? ": error: " : "");
		return RB_EXIT_FAIL;
	}
	return rc;
}

/* Run the command called name with argv (argv[0] is its name); its exit
 * code. */
static int run_command(const char *name, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		rb_set_cmd(commands[i].name);
		return stdout_done(commands[i].name, commands[i].fn(argc, argv));
	}
	rb_err("unknown command '%.200s'", name);
	usage(stderr);
	return RB_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (std_fds_open() < 0)
		return RB_EXIT_FAIL;     /* nowhere to say it, nothing done */
	rb_root_init();
	if (argc < 2) {
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
		printf("ramboot %s\n", RAMBOOT_VERSION);
		return stdout_done(NULL, RB_EXIT_OK);
	}
	if (!strcmp(cmd, "help") && argc > 2) {
		/* ramboot help COMMAND: that command's --help */
		static char help_opt[] = "--help";
		char *hargv[] = { argv[2], help_opt, NULL };

		return run_command(argv[2], 2, hargv);
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return stdout_done(NULL, RB_EXIT_OK);
	}
	return run_command(cmd, argc - 1, argv + 1);
}
