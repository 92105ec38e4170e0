// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot verity format|open|close: hash trees (verity.h) and dm-verity
 * mappings (dm.h) from the command line.
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
#include "dev/blkdev.h"
#include "dev/dm.h"
#include "format/verity.h"
#include "trust/verity_format.h"
#include "trust/vboot.h"

enum { OPT_SALT = 256, OPT_EXPORT };

/* open takes --salt only: format's other options are unknown to it. */
static const struct rb_optset format_optset = {
	.opts = RB_OPTS(
		{ "salt", OPT_SALT, "=HEX",
		  "the salt ('-': none; default: 32 random bytes)" },
		{ "export", OPT_EXPORT, NULL,
		  "print VERITY_ROOT_HASH=..., VERITY_SALT=... lines" },
		{ "force", 'f', NULL,
		  "replace an existing HASHFILE (a regular file)" },
		RB_OPT_HELP_UNLISTED),
	.indent = 2, .col = 18,
};
static const struct rb_optset open_optset = {
	.opts = RB_OPTS(
		{ "salt", OPT_SALT, "=HEX",
		  "the salt HASH_DEV's superblock must have" },
		RB_OPT_HELP_UNLISTED),
	.indent = 2, .col = 18,
};

static void usage(FILE *out)
{
	fputs("Usage: ramboot verity format [-f] [--salt=HEX] [--export] IMAGE HASHFILE\n"
	      "       ramboot verity open [--salt=HEX] DATA_DEV HASH_DEV ROOTHASH NAME\n"
	      "       ramboot verity close NAME\n"
	      "\n"
	      "format: write the dm-verity hash tree of IMAGE (SHA-256, 4096-byte blocks,\n"
	      "  with a superblock; what 'veritysetup format' writes) into HASHFILE, and\n"
	      "  print the root hash and the salt. IMAGE must be a whole number of\n"
	      "  4096-byte blocks.\n", out);
	rb_opts_help(out, &format_optset);
	fputs("open: map DATA_DEV read-only as /dev/mapper/NAME, every block checked\n"
	      "  against the tree on HASH_DEV (a block device holding HASHFILE, a loop\n"
	      "  device) whose root hash is ROOTHASH; prints the device's path.\n", out);
	rb_opts_help(out, &open_optset);
	fputs("close: remove the mapping NAME.\n"
	      "Exit codes: 0 ok, 1 runtime error (I/O, a hash that does not match,\n"
	      "no dm-verity in the kernel, a mapping in use), 2 usage.\n", out);
}

/* The options of format and open (open takes --salt only). */
struct verity_opts {
	uint8_t salt[VERITY_SALT_MAX];
	size_t salt_len;
	bool have_salt, export, force;
};

/* -1 when the command goes on with o and argv[optind...], else the exit
 * code it returns (--help, a usage error, said here). */
static int verity_opts(int argc, char **argv, bool format, struct verity_opts *o)
{
	struct rb_getopt g = { .set = format ? &format_optset : &open_optset };
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_SALT:
			if (verity_hex_parse(optarg, o->salt, sizeof(o->salt), &o->salt_len) < 0)
				return rb_usage("verity", "--salt: '%s' is not hex of at most 256 "
						"bytes, or '-'", optarg);
			o->have_salt = true;
			break;
		case OPT_EXPORT: o->export = true; break;
		case 'f': o->force = true; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default: return rb_usage_option("verity", argv);
		}
	}
	return -1;
}

static int cmd_format(int argc, char **argv)
{
	uint8_t root[VERITY_DIGEST];
	char roothex[2 * VERITY_DIGEST + 1], salthex[2 * VERITY_SALT_MAX + 1];
	char err[PATH_MAX + 256];
	struct verity_params p;
	struct verity_opts o;
	int rc = verity_opts(argc, argv, true, &o);

	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return rb_usage("verity", "format needs IMAGE and HASHFILE");
	rc = verity_format(argv[optind], argv[optind + 1], o.force, o.have_salt ? o.salt : NULL,
			   o.salt_len, &p, root, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	verity_hex(root, sizeof(root), roothex);
	verity_hex(p.salt, p.salt_len, salthex);
	if (o.export)
		printf("VERITY_ROOT_HASH=%s\nVERITY_SALT=%s\nVERITY_DATA_BLOCKS=%" PRIu64
		       "\nVERITY_HASH_SIZE=%" PRIu64 "\n", roothex, salthex, p.data_blocks,
		       verity_hash_file_size(p.data_blocks));
	else
		printf("root hash:   %s\nsalt:        %s\ndata blocks: %" PRIu64 " of 4096 bytes\n"
		       "hash file:   %" PRIu64 " bytes\n", roothex, salthex, p.data_blocks,
		       verity_hash_file_size(p.data_blocks));
	return RB_EXIT_OK;   /* main.c checks that it reached stdout */
}

/* Open a block device read-only, with its size. */
static int open_blk(const char *path, uint64_t *size, dev_t *rdev, char *err, size_t errlen)
{
	struct stat st;
	int fd = open_stat(path, &st, err, errlen), rc;

	if (fd < 0)
		return fd;
	if (!S_ISBLK(st.st_mode)) {
		/* The kernel's table takes block devices only: a hash file
		 * goes on a loop device (losetup -r). */
		rc = rb_errfmt(err, errlen, -ENOTBLK, "%s: not a block device", path);
		goto fail;
	}
	rc = blk_size(fd, size);
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "%s: size: %s", path, strerror(-rc));
		goto fail;
	}
	*rdev = st.st_rdev;
	return fd;
fail:
	(void)close(fd);   /* read-only: nothing to flush */
	return rc;
}

/* Everything a mapping needs, checked before the kernel is asked: the
 * superblock of HASH_DEV, the sizes, the salt, and the root hash against
 * the tree's top block. */
int verity_target_prepare(const char *data, const char *hash, const uint8_t root[VERITY_DIGEST],
			  const uint8_t *salt, size_t salt_len, bool have_salt,
			  struct dm_verity_target *t, char *err, size_t errlen)
{
	uint64_t dsize = 0, hsize = 0, need;
	uint8_t *sb = NULL;
	struct verity_params p;
	int dfd, hfd = -1, rc;
	ssize_t n;

	dfd = open_blk(data, &dsize, &t->data, err, errlen);
	if (dfd < 0)
		return dfd;
	hfd = open_blk(hash, &hsize, &t->hash, err, errlen);
	if (hfd < 0) {
		rc = hfd;
		goto out;
	}
	sb = malloc(VERITY_BLOCK);
	if (!sb) {
		rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	n = pread_full(hfd, sb, VERITY_BLOCK, 0);
	if (n < 0) {
		rc = rb_errfmt(err, errlen, (int)n, "%s: %s", hash, strerror((int)-n));
		goto out;
	}
	{
		char why[128];

		rc = verity_sb_decode(sb, (size_t)n, &p, why, sizeof(why));
		if (rc < 0) {
			rb_errfmt(err, errlen, rc, "%s: %s", hash, why);
			goto out;
		}
	}
	if (have_salt && (salt_len != p.salt_len || memcmp(salt, p.salt, salt_len))) {
		rc = rb_errfmt(err, errlen, -EBADMSG, "%s: its salt is not the one given", hash);
		goto out;
	}
	if (dsize / VERITY_BLOCK < p.data_blocks) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes, the hash tree is of %"
			       PRIu64, data, dsize, p.data_blocks * VERITY_BLOCK);
		goto out;
	}
	need = verity_hash_file_size(p.data_blocks);
	if (hsize < need) {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: %" PRIu64 " bytes, the hash tree needs %"
			       PRIu64, hash, hsize, need);
		goto out;
	}
	rc = verity_check_root(hfd, dfd, &p, root);
	if (rc == -EBADMSG)
		rb_errfmt(err, errlen, rc, "%s: the root hash is not the one of this hash tree", hash);
	else if (rc < 0)
		rb_errfmt(err, errlen, rc, "%s: %s", hash, strerror(-rc));
	if (rc < 0)
		goto out;
	t->data_blocks = p.data_blocks;
	t->hash_start = VERITY_HASH_START;
	memcpy(t->root, root, VERITY_DIGEST);
	memcpy(t->salt, p.salt, p.salt_len);
	t->salt_len = p.salt_len;
out:
	free(sb);
	if (hfd >= 0)
		(void)close(hfd);
	(void)close(dfd);
	return rc;
}

static int cmd_open(int argc, char **argv)
{
	uint8_t root[VERITY_DIGEST];
	char err[PATH_MAX + 256], node[PATH_MAX];
	struct dm_verity_target t;
	struct verity_opts o;
	const char *name;
	size_t root_len;
	dev_t dev;
	int rc = verity_opts(argc, argv, false, &o);

	if (rc >= 0)
		return rc;
	if (argc - optind != 4)
		return rb_usage("verity", "open needs DATA_DEV HASH_DEV ROOTHASH NAME");
	if (strlen(argv[optind + 2]) != 2 * VERITY_DIGEST ||
	    verity_hex_parse(argv[optind + 2], root, sizeof(root), &root_len) < 0)
		return rb_usage("verity", "ROOTHASH: '%s' is not 64 hex digits", argv[optind + 2]);
	name = argv[optind + 3];
	if (!dm_name_valid(name))
		return rb_usage("verity", "NAME: '%s' is not 1 to 127 characters of "
				"[A-Za-z0-9._+-] (not starting with a dot)", name);
	memset(&t, 0, sizeof(t));
	rc = verity_target_prepare(argv[optind], argv[optind + 1], root, o.salt, o.salt_len,
				   o.have_salt, &t, err, sizeof(err));
	if (rc == 0)
		rc = dm_verity_create(name, &t, &dev, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	if (dm_node_path(name, node, sizeof(node)) == 0)
		printf("%s\n", node);
	return RB_EXIT_OK;
}

static int cmd_close(int argc, char **argv)
{
	char err[256];

	if (argc != 2)
		return rb_usage("verity", "close needs one NAME");
	if (!dm_name_valid(argv[1]))
		return rb_usage("verity", "NAME: '%s' is not a mapping name", argv[1]);
	if (dm_remove(argv[1], err, sizeof(err)) < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}

int cmd_verity(int argc, char **argv)
{
	static const struct rb_subcmd subs[] = {
		{ "format", cmd_format, false },
		{ "open", cmd_open, false },
		{ "close", cmd_close, true },
	};

	return rb_subcmd_run("verity", subs, ARRAY_SIZE(subs), usage, argc, argv);
}
