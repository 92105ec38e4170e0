// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot initrd`: write a small extra initrd holding ramboot, or list
 * any initrd and tell whether ramboot is inside.
 *
 * The kernel unpacks every initrd given to it into one rootfs, in order
 * (init/initramfs.c): a sequence of newc cpio archives, each possibly
 * compressed, separated by zero padding. Debian's initrd.img is an
 * uncompressed "early" cpio (microcode) followed by a compressed one.
 * libarchive reads one archive at a time, so --list finds where each
 * uncompressed member ends and opens the next one there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "sign.h"
#include "ramboot.h"

#ifndef HAVE_LIBARCHIVE
#define HAVE_LIBARCHIVE 0
#endif

#if HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>

/* What goes into the extra initrd, relative to the hooks directory. */
struct item {
	const char *src;         /* "" : the binary, "@conf": the config */
	const char *dst;
	unsigned mode;
};

static const char *const initrd_dirs[] = {
	"usr", "usr/sbin", "etc", "etc/ltsp", "etc/ltsp/ramboot",
	"scripts", "scripts/init-bottom", "conf", "conf/conf.d",
};

static const struct item initrd_items[] = {
	{ "", "usr/sbin/ramboot", 0755 },
	{ "@conf", "etc/ramboot.conf", 0644 },
	{ "ltsp-hook.sh", "etc/ltsp/ramboot/ltsp-hook.sh", 0644 },
	{ "ramboot-lib.sh", "etc/ltsp/ramboot/ramboot-lib.sh", 0644 },
	{ "ramboot-lib.sh", "scripts/ramboot-lib.sh", 0644 },
	{ "initramfs-tools/script", "scripts/init-bottom/ramboot", 0755 },
	{ "initramfs-tools/order.conf", "conf/conf.d/zz-ramboot.conf", 0644 },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ramboot initrd -o FILE [--binary=PATH] [--hooks=DIR] [--conf=PATH]\n"
		"       ramboot initrd --list FILE\n"
		"\n"
		"  -o, --output=FILE  write an uncompressed newc cpio holding the static\n"
		"                     binary (usr/sbin/ramboot), /etc/ramboot.conf, the\n"
		"                     LTSP hook, the initramfs-tools boot script and the\n"
		"                     library both source (ramboot-lib.sh)\n"
		"  --binary=PATH      the static binary (default: DATADIR/ramboot.static\n"
		"                     next to this program, else ./static/ramboot)\n"
		"  --hooks=DIR        the hook scripts (default: DATADIR/hooks, else\n"
		"                     ./initrd-hooks)\n"
		"  --conf=PATH        the configuration (default: /etc/ramboot.conf if any)\n"
		"  --keys=DIR         the trusted public keys (*.pub) for signed manifests\n"
		"                     (default: /etc/ramboot/keys if any), packed as\n"
		"                     etc/ramboot/keys/\n"
		"  -l, --list=FILE    list an initrd (concatenated, compressed or not)\n"
		"                     and say whether ramboot is inside\n"
		"  -h, --help         show this help\n");
}

static bool is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* DATADIR of an installed ramboot: PREFIX/sbin/ramboot ->
 * PREFIX/share/ramboot. */
static int datadir(char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if (snprintf(out, len, "%s/share/ramboot", exe) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* DATADIR/sub of an installed ramboot if ok() says so, else local (the
 * source tree), else NULL. */
static const char *find_default(char *buf, size_t len, const char *sub, const char *local,
				bool (*ok)(const char *))
{
	char dd[PATH_MAX];

	if (datadir(dd, sizeof(dd)) == 0 && snprintf(buf, len, "%s/%s", dd, sub) < (int)len &&
	    ok(buf))
		return buf;
	return ok(local) ? local : NULL;
}

static int add_dir(struct archive *a, struct archive_entry *e, const char *name,
		   unsigned ino)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	archive_entry_set_nlink(e, 2);
	archive_entry_set_size(e, 0);
	archive_entry_set_ino(e, ino);
	archive_entry_set_mtime(e, 0, 0);
	return archive_write_header(a, e) == ARCHIVE_OK ? 0 : -EIO;
}

static int add_file(struct archive *a, struct archive_entry *e, const char *src,
		    const char *name, unsigned mode, unsigned ino)
{
	struct stat st;
	char buf[65536];
	ssize_t n;
	int fd, rc = 0;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, mode);
	archive_entry_set_nlink(e, 1);
	archive_entry_set_ino(e, ino);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_mtime(e, st.st_mtime, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK) {
		rc = -EIO;
		goto out;
	}
	while ((n = read_full(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n) {
			rc = -EIO;
			goto out;
		}
	if (n < 0)
		rc = (int)n;
out:
	(void)close_checked(fd);
	return rc;
}

/* The archive goes into a file that gets the name out only when it is
 * complete and on disk (outfile.h): no predictable temporary to plant a
 * link at, and a failed run leaves an existing out as it was. */
/* The *.pub files of keys, as etc/ramboot/keys/NAME.pub. */
static int add_keys(struct archive *a, struct archive_entry *e, const char *keys,
		    unsigned *ino)
{
	char src[PATH_MAX], dst[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(keys);
	int rc = 0, n = 0;

	if (!dir) {
		rc = -errno;
		rb_err("%s: %s", keys, strerror(-rc));
		return rc;
	}
	rc = add_dir(a, e, "etc/ramboot", (*ino)++);
	if (rc == 0)
		rc = add_dir(a, e, "etc/ramboot/keys", (*ino)++);
	while (rc == 0 && (d = readdir(dir)) != NULL) {
		size_t len = strlen(d->d_name);

		if (len <= 4 || strcmp(d->d_name + len - 4, ".pub") || d->d_name[0] == '.')
			continue;
		if (snprintf(src, sizeof(src), "%s/%s", keys, d->d_name) >= (int)sizeof(src) ||
		    snprintf(dst, sizeof(dst), "etc/ramboot/keys/%s", d->d_name) >= (int)sizeof(dst)) {
			rc = -ENAMETOOLONG;
			rb_err("%s: path too long", keys);
			break;
		}
		if (!is_file(src))
			continue;
		rc = add_file(a, e, src, dst, 0644, (*ino)++);
		if (rc < 0)
			rb_err("%s: %s", src, rc == -EIO ? archive_error_string(a) : strerror(-rc));
		else
			n++;
	}
	closedir(dir);
	if (rc == 0 && n == 0)
		rb_warn("%s: no public keys (*.pub)", keys);
	return rc;
}

static int write_initrd(const char *out, const char *binary, const char *hooks,
			const char *conf, const char *keys)
{
	char src[PATH_MAX], err[PATH_MAX + 64];
	struct archive *a = NULL;
	struct archive_entry *e = NULL;
	struct outfile of;
	struct stat bin_st;
	unsigned ino = 1;
	size_t i;
	int rc;

	/* -o at the binary itself would replace the program being packed. */
	if (stat(binary, &bin_st) < 0) {
		rb_err("%s: %s", binary, strerror(errno));
		return RB_EXIT_FAIL;
	}
	rc = outfile_open(&of, out, 0644, OUTFILE_REPLACE | OUTFILE_SYNC, &bin_st, err,
			  sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	a = archive_write_new();
	e = archive_entry_new();
	if (!a || !e) {
		rb_err("out of memory");
		rc = -ENOMEM;
		goto out;
	}
	if (archive_write_set_format_cpio_newc(a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK ||
	    /* The kernel does not care about blocking; no padding but the
	     * format's own 4-byte alignment and the trailer. */
	    archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
	    archive_write_open_fd(a, of.fd) != ARCHIVE_OK) {
		rb_err("%s: %s", out, archive_error_string(a));
		rc = -EIO;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(initrd_dirs) && rc == 0; i++) {
		rc = add_dir(a, e, initrd_dirs[i], ino++);
		if (rc < 0)
			rb_err("%s: %s", out, archive_error_string(a));
	}
	for (i = 0; i < ARRAY_SIZE(initrd_items) && rc == 0; i++) {
		const struct item *it = &initrd_items[i];
		const char *path = src;

		if (!*it->src)
			path = binary;
		else if (!strcmp(it->src, "@conf"))
			path = conf;
		else if (snprintf(src, sizeof(src), "%s/%s", hooks, it->src) >= (int)sizeof(src)) {
			rb_err("%s: path too long", hooks);
			rc = -ENAMETOOLONG;
			break;
		}
		if (!path)
			continue;
		rc = add_file(a, e, path, it->dst, it->mode, ino++);
		if (rc < 0)
			rb_err("%s: %s", path, rc == -EIO ? archive_error_string(a) : strerror(-rc));
		else
			rb_debug("%s <- %s", it->dst, path);
	}
	if (rc == 0 && keys)
		rc = add_keys(a, e, keys, &ino);
	/* The trailer; archive_write_open_fd leaves the descriptor open. */
	if (rc == 0 && archive_write_close(a) != ARCHIVE_OK) {
		rb_err("%s: %s", out, archive_error_string(a));
		rc = -EIO;
	}
	if (rc == 0) {
		rc = outfile_commit(&of);
		if (rc < 0)
			rb_err("%s: %s", out, strerror(-rc));
	}
out:
	if (a)
		archive_write_free(a);
	if (e)
		archive_entry_free(e);
	outfile_abort(&of);
	return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}

struct found {
	char path[PATH_MAX];
	int64_t size;
	bool present;
};

/* A regular file named "ramboot" that is an ELF program (the hook
 * scripts share the name). */
static void check_entry(struct archive *a, struct archive_entry *e, struct found *f)
{
	const char *name = archive_entry_pathname(e), *base;
	char magic[4];

	if (f->present || !name || archive_entry_filetype(e) != AE_IFREG)
		return;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strcmp(base, "ramboot"))
		return;
	if (archive_read_data(a, magic, sizeof(magic)) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4))
		return;
	snprintf(f->path, sizeof(f->path), "%s", name[0] == '.' && name[1] == '/' ? name + 2 : name);
	f->size = archive_entry_size(e);
	f->present = true;
}

/* Skip the zero padding between members; returns the offset of the
 * next member, or -1 at the end of the file. */
static off_t next_member(int fd, off_t off)
{
	char buf[4096];
	ssize_t n, i;

	for (;;) {
		n = pread_full(fd, buf, sizeof(buf), off);
		if (n <= 0)
			return -1;
		for (i = 0; i < n; i++)
			if (buf[i])
				return off + i;
		off += n;
	}
}

static int list_initrd(const char *file)
{
	struct found f = { .present = false };
	struct archive_entry *e;
	struct archive *a;
	off_t off = 0;
	int fd, rc = RB_EXIT_OK, member = 0;
	char sz[32];

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rb_err("%s: %s", file, strerror(errno));
		return RB_EXIT_FAIL;
	}
	while ((off = next_member(fd, off)) >= 0) {
		const char *filter;
		long entries = 0;
		int r;

		member++;
		if (lseek(fd, off, SEEK_SET) < 0) {
			rb_err("%s: %s", file, strerror(errno));
			rc = RB_EXIT_FAIL;
			break;
		}
		a = archive_read_new();
		if (!a) {
			rc = RB_EXIT_FAIL;
			break;
		}
		archive_read_support_filter_all(a);
		archive_read_support_format_cpio(a);
		if (archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK) {
			rb_err("%s: member %d at offset %lld: %s", file, member,
			       (long long)off, archive_error_string(a));
			archive_read_free(a);
			rc = RB_EXIT_FAIL;
			break;
		}
		while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK ||
		       r == ARCHIVE_WARN) {
			const char *name = archive_entry_pathname(e);

			entries++;
			printf("%s\n", name ? name : "?");
			check_entry(a, e, &f);
		}
		filter = archive_filter_count(a) > 1 ? archive_filter_name(a, 0) : "none";
		printf("# member %d: offset %lld, compression %s, %ld entries\n", member,
		       (long long)off, filter, entries);
		if (r != ARCHIVE_EOF) {
			rb_err("%s: member %d: %s", file, member, archive_error_string(a));
			archive_read_free(a);
			rc = RB_EXIT_FAIL;
			break;
		}
		if (archive_filter_count(a) > 1) {
			/* The decompressor read ahead: where the compressed
			 * stream ended is not known. The kernel's own layout
			 * puts the compressed archive last. */
			archive_read_free(a);
			break;
		}
		/* Bytes the cpio reader consumed: the end of the trailer. */
		off += archive_filter_bytes(a, 0);
		archive_read_free(a);
		if (entries == 0)
			break;
	}
	(void)close_checked(fd);
	if (member == 0) {
		rb_err("%s: empty file", file);
		rc = RB_EXIT_FAIL;
	}
	if (f.present)
		printf("ramboot: present (%s, %s)\n", f.path,
		       fmt_size((uint64_t)f.size, sz, sizeof(sz)));
	else
		printf("ramboot: absent\n");
	return rc;
}

int cmd_initrd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "list", required_argument, NULL, 'l' },
		{ "binary", required_argument, NULL, 'b' },
		{ "hooks", required_argument, NULL, 'H' },
		{ "conf", required_argument, NULL, 'C' },
		{ "keys", required_argument, NULL, 'K' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *list = NULL, *binary = NULL, *hooks = NULL, *conf = NULL;
	const char *keys = NULL;
	char bin[PATH_MAX], hk[PATH_MAX];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:l:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'l': list = optarg; break;
		case 'b': binary = optarg; break;
		case 'H': hooks = optarg; break;
		case 'C': conf = optarg; break;
		case 'K': keys = optarg; break;
		case 'v': rb_verbose = 1; break;
		case 'h': usage(stdout); return RB_EXIT_OK;
		default:
			rb_err("bad option '%s'", argv[optind - 1]);
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	/* `ramboot initrd --list FILE` and `ramboot initrd -l FILE`; also
	 * a bare FILE after --list's own argument is refused. */
	if (optind < argc || (!out && !list) || (out && list)) {
		if (optind < argc)
			rb_err("unexpected argument '%s'", argv[optind]);
		else
			rb_err("give either -o FILE or --list FILE");
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	if (list)
		return list_initrd(list);

	if (!binary &&
	    !(binary = find_default(bin, sizeof(bin), "ramboot.static", "static/ramboot", is_file))) {
		rb_err("no static binary: build it (make static) or give --binary=PATH");
		return RB_EXIT_FAIL;
	}
	if (!is_file(binary)) {
		rb_err("%s: not a file", binary);
		return RB_EXIT_FAIL;
	}
	if (!hooks && !(hooks = find_default(hk, sizeof(hk), "hooks", "initrd-hooks", is_dir))) {
		rb_err("no hook scripts: give --hooks=DIR");
		return RB_EXIT_FAIL;
	}
	if (!conf && is_file("/etc/ramboot.conf"))
		conf = "/etc/ramboot.conf";
	if (!keys && is_dir(SIGN_KEYDIR))
		keys = SIGN_KEYDIR;
	return write_initrd(out, binary, hooks, conf, keys);
}

#else /* !HAVE_LIBARCHIVE */

int cmd_initrd(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	rb_err("built without initrd support");
	return RB_EXIT_FAIL;
}

#endif
