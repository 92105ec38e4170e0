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
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "trust/sign.h"
#include "cmd.h"
#include "lib/opts.h"
#include "lib/path.h"
#include "lib/units.h"

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

enum { OPT_BINARY = 256, OPT_HOOKS, OPT_CONF, OPT_KEYS, OPT_UDPCAST };

static const struct rb_optset optset = {
	.head = "Usage: ramboot initrd -o FILE [--binary=PATH] [--hooks=DIR] [--conf=PATH]\n"
		"       ramboot initrd --list FILE\n"
		"\n",
	.opts = RB_OPTS(
		{ "output", 'o', "=FILE",
		  "write an uncompressed newc cpio holding the static\n"
		  "binary (usr/sbin/ramboot), /etc/ramboot.conf, the\n"
		  "LTSP hook, the initramfs-tools boot script and the\n"
		  "library both source (ramboot-lib.sh)" },
		{ "binary", OPT_BINARY, "=PATH",
		  "the static binary (default: DATADIR/ramboot.static\n"
		  "next to this program, else ./static/ramboot)" },
		{ "hooks", OPT_HOOKS, "=DIR",
		  "the hook scripts (default: DATADIR/hooks, else\n"
		  "./initrd-hooks)" },
		{ "conf", OPT_CONF, "=PATH",
		  "the configuration (default: /etc/ramboot.conf if any)" },
		{ "keys", OPT_KEYS, "=DIR",
		  "the trusted public keys (*.pub) for signed manifests\n"
		  "(default: /etc/ramboot/keys if any), packed as\n"
		  "etc/ramboot/keys/" },
		{ "udpcast", OPT_UDPCAST, "[=PATH]",
		  "add udp-receiver (default /usr/bin/udp-receiver) as\n"
		  "usr/bin/udp-receiver with the shared libraries ldd\n"
		  "names, for ramboot.source=udpcast" },
		{ "list", 'l', "=FILE",
		  "list an initrd (concatenated, compressed or not)\n"
		  "and say whether ramboot is inside" },
		{ "verbose", 'v', NULL, NULL },
		{ "help", 'h', NULL,
		  "show this help" }),
	.indent = 2, .col = 21,
};

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

/* e made anew for one member of the archive. */
static void entry_set(struct archive_entry *e, const char *name, unsigned type, unsigned perm,
		      unsigned nlink, int64_t size, time_t mtime, unsigned ino)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_nlink(e, nlink);
	archive_entry_set_ino(e, ino);
	archive_entry_set_size(e, size);
	archive_entry_set_mtime(e, mtime, 0);
}

static int add_dir(struct archive *a, struct archive_entry *e, const char *name,
		   unsigned ino)
{
	entry_set(e, name, AE_IFDIR, 0755, 2, 0, 0, ino);
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
	entry_set(e, name, AE_IFREG, mode, 1, st.st_size, st.st_mtime, ino);
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
static int add_bytes(struct archive *a, struct archive_entry *e, const char *name,
		     const void *buf, size_t len, unsigned mode, time_t mtime, unsigned ino)
{
	entry_set(e, name, AE_IFREG, mode, 1, (int64_t)len, mtime, ino);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    archive_write_data(a, buf, len) != (la_ssize_t)len)
		return -EIO;
	return 0;
}

/*
 * Every client that fetches the initrd gets these files: each *.pub must
 * be a regular file in keys (never what a link names) holding an Ed25519
 * public key. A private key there is an error, not a skip: the admin
 * meant to give the clients a key and gave them the signing key. The
 * bytes checked are the bytes packed.
 */
static int add_keys(struct archive *a, struct archive_entry *e, const char *keys,
		    unsigned *ino)
{
	char dst[PATH_MAX], keyid[SIGN_KEYID_LEN + 1], err[PATH_MAX + 256], buf[SIGN_KEYFILE_MAX];
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
		size_t len = strlen(d->d_name), klen = 0;
		struct stat st;

		if (len <= 4 || strcmp(d->d_name + len - 4, ".pub") || d->d_name[0] == '.')
			continue;
		if (snprintf(dst, sizeof(dst), "etc/ramboot/keys/%s", d->d_name) >= (int)sizeof(dst)) {
			rc = -ENAMETOOLONG;
			rb_err("%s: path too long", keys);
			break;
		}
		rc = sign_pubkey_read(dirfd(dir), d->d_name, buf, sizeof(buf), &klen, &st, keyid,
				      err, sizeof(err));
		if (rc < 0) {
			rb_err("%s/%s", keys, err);
			break;
		}
		if (st.st_mode & S_IWOTH)
			rb_warn("%s/%s: world-writable: anyone on this host can replace a key the "
				"clients trust", keys, d->d_name);
		rc = add_bytes(a, e, dst, buf, klen, 0644, st.st_mtime, (*ino)++);
		if (rc < 0)
			rb_err("%s/%s: %s", keys, d->d_name, archive_error_string(a));
		else
			n++;
	}
	closedir(dir);
	explicit_bzero(buf, sizeof(buf));
	if (rc == 0 && n == 0)
		rb_warn("%s: no public keys (*.pub)", keys);
	return rc;
}

/* ---- a dynamically linked program and its libraries (--udpcast) ---- */

extern char **environ;

/* The directories written so far ("\n"-separated), so that each parent
 * goes in once and before what it holds: the kernel creates none. */
struct dirlist {
	char buf[4096];
	size_t len;
};

static bool dir_known(const struct dirlist *d, const char *name, size_t n)
{
	const char *p = d->buf;

	while (p < d->buf + d->len) {
		const char *nl = strchr(p, '\n');

		if ((size_t)(nl - p) == n && !memcmp(p, name, n))
			return true;
		p = nl + 1;
	}
	return false;
}

static int dir_note(struct dirlist *d, const char *name, size_t n)
{
	if (d->len + n + 2 > sizeof(d->buf))
		return -ENAMETOOLONG;
	memcpy(d->buf + d->len, name, n);
	d->len += n;
	d->buf[d->len++] = '\n';
	d->buf[d->len] = '\0';
	return 0;
}

/* The parents of name (relative, "usr/lib/x/libc.so.6"), once each. */
static int add_parents(struct archive *a, struct archive_entry *e, struct dirlist *d,
		       const char *name, unsigned *ino)
{
	const char *s;
	int rc = 0;

	for (s = strchr(name, '/'); s && rc == 0; s = strchr(s + 1, '/')) {
		char dir[PATH_MAX];
		size_t n = (size_t)(s - name);

		if (dir_known(d, name, n))
			continue;
		if (n >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, name, n);
		dir[n] = '\0';
		rc = add_dir(a, e, dir, (*ino)++);
		if (rc == 0)
			rc = dir_note(d, name, n);
	}
	return rc;
}

/*
 * The shared objects prog needs, as `ldd` resolves them on this host
 * (the loader included), into libs: absolute paths, "\n"-separated. A
 * static program needs none. The initrd gets them at the same paths,
 * as initramfs-tools' copy_exec does.
 */
static int needed_libs(const char *prog, char *libs, size_t len)
{
	const char *argv[] = { "ldd", prog, NULL };
	posix_spawn_file_actions_t fa;
	char out[8192], *line, *save = NULL;
	size_t n = 0, used = 0;
	ssize_t got;
	pid_t pid;
	int p[2], rc, status;

	libs[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		rc = posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
		if (rc == 0)
			rc = posix_spawn_file_actions_adddup2(&fa, p[1], STDERR_FILENO);
		if (rc == 0)
			rc = posix_spawnp(&pid, "ldd", &fa, NULL, (char *const *)argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	(void)close(p[1]);
	if (rc) {
		(void)close(p[0]);
		rb_err("cannot run ldd: %s", strerror(rc));
		return -rc;
	}
	while (n + 1 < sizeof(out) && (got = read_full(p[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	(void)close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (strstr(out, "not a dynamic executable") || strstr(out, "statically linked"))
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rb_err("ldd %s failed: %s", prog, strtok_r(out, "\n", &save));
		return -EINVAL;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *path = strstr(line, " => "), *end;

		if (strstr(line, "not found")) {
			rb_err("ldd %s: %s", prog, line + strspn(line, " \t"));
			return -ENOENT;
		}
		path = path ? path + 4 : line + strspn(line, " \t");
		if (*path != '/')
			continue;   /* linux-vdso.so.1: the kernel's own */
		end = strstr(path, " (");
		if (end)
			*end = '\0';
		if (used + strlen(path) + 2 > len)
			return -ENAMETOOLONG;
		used += (size_t)snprintf(libs + used, len - used, "%s\n", path);
	}
	return 0;
}

static int add_symlink(struct archive *a, struct archive_entry *e, const char *name,
		       const char *target, unsigned ino)
{
	entry_set(e, name, AE_IFLNK, 0777, 1, 0, 0, ino);
	archive_entry_set_symlink(e, target);
	return archive_write_header(a, e) == ARCHIVE_OK ? 0 : -EIO;
}

/*
 * The library at path as this host has it: the file under its real
 * directory (/lib/x86_64-linux-gnu/libc.so.6 is
 * usr/lib/x86_64-linux-gnu/libc.so.6 on a merged /usr), and each
 * directory of path that is a symbolic link here (lib -> usr/lib) as the
 * same link. An initrd that already has the link keeps it (the kernel
 * does not replace an entry of the same type); the file is where the
 * loader looks either way.
 */
static int add_library(struct archive *a, struct archive_entry *e, struct dirlist *d,
		       const char *path, unsigned *ino)
{
	char dir[PATH_MAX], real[PATH_MAX], name[PATH_MAX * 2], target[PATH_MAX];
	const char *base = strrchr(path, '/'), *s;
	int rc;

	if (!base || (size_t)(base - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	if (!realpath(dir[0] ? dir : "/", real))
		return -errno;
	snprintf(name, sizeof(name), "%s%s", real + 1, base);
	rc = add_parents(a, e, d, name, ino);
	if (rc == 0)
		rc = add_file(a, e, path, name, 0755, (*ino)++);
	for (s = strchr(path + 1, '/'); s && rc == 0; s = strchr(s + 1, '/')) {
		struct stat st;
		size_t n = (size_t)(s - path);
		ssize_t tl;

		memcpy(dir, path, n);
		dir[n] = '\0';
		if (lstat(dir, &st) < 0 || !S_ISLNK(st.st_mode) || dir_known(d, dir + 1, n - 1))
			continue;
		tl = readlink(dir, target, sizeof(target) - 1);
		if (tl <= 0)
			continue;
		target[tl] = '\0';
		rc = add_parents(a, e, d, dir + 1, ino);
		if (rc == 0)
			rc = add_symlink(a, e, dir + 1, target, (*ino)++);
		if (rc == 0)
			rc = dir_note(d, dir + 1, n - 1);
	}
	if (rc == 0)
		rb_debug("%s <- %s", name, path);
	return rc;
}

/* prog as dst, its libraries as add_library puts them. */
static int add_program(struct archive *a, struct archive_entry *e, struct dirlist *d,
		       const char *prog, const char *dst, unsigned *ino)
{
	char libs[4096], *lib, *save = NULL;
	int rc = needed_libs(prog, libs, sizeof(libs));

	if (rc == 0)
		rc = add_parents(a, e, d, dst, ino);
	if (rc == 0)
		rc = add_file(a, e, prog, dst, 0755, (*ino)++);
	if (rc < 0) {
		rb_err("%s: %s", prog, rc == -EIO ? archive_error_string(a) : strerror(-rc));
		return rc;
	}
	rb_debug("%s <- %s", dst, prog);
	for (lib = strtok_r(libs, "\n", &save); lib && rc == 0; lib = strtok_r(NULL, "\n", &save)) {
		rc = add_library(a, e, d, lib, ino);
		if (rc < 0)
			rb_err("%s: %s", lib, rc == -EIO ? archive_error_string(a) : strerror(-rc));
	}
	return rc;
}

static int write_initrd(const char *out, const char *binary, const char *hooks,
			const char *conf, const char *keys, const char *udpcast)
{
	struct dirlist *dl = NULL;
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
	dl = calloc(1, sizeof(*dl));
	if (!dl) {
		rb_err("out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(initrd_dirs) && rc == 0; i++) {
		rc = add_dir(a, e, initrd_dirs[i], ino++);
		if (rc == 0)
			rc = dir_note(dl, initrd_dirs[i], strlen(initrd_dirs[i]));
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
	if (rc == 0 && udpcast)
		rc = add_program(a, e, dl, udpcast, "usr/bin/udp-receiver", &ino);
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
	free(dl);
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
	/* A "ramboot" that is a link (symbolic, or a cpio hard link whose
	 * data is another entry's): the path it names, found among the
	 * programs listed (ELF regular files, in any order). */
	char link[PATH_MAX];
	int64_t link_ino;         /* a hard link's inode (newc: the data comes
				   * with the group's last name); 0: none */
	char via[PATH_MAX];
	struct prog { char *path; int64_t size, ino; } *progs;
	size_t nprogs;
};

/* path without "./" and with "..", "." and "//" resolved against dir (of
 * the entry that names it; "" for the top); false when it leaves the
 * archive. */
static bool norm_path(const char *dir, const char *path, char *out, size_t len)
{
	char tmp[PATH_MAX * 2], *tok, *save = NULL;
	size_t n = 0;

	if (snprintf(tmp, sizeof(tmp), "%s%s%s", path[0] == '/' ? "" : dir,
		     path[0] == '/' || !dir[0] ? "" : "/", path) >= (int)sizeof(tmp))
		return false;
	out[0] = '\0';
	for (tok = strtok_r(tmp, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			char *slash = strrchr(out, '/');

			if (!n)
				return false;
			n = slash ? (size_t)(slash - out) : 0;
			out[n] = '\0';
			continue;
		}
		if (n + strlen(tok) + 2 > len)
			return false;
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "/" : "", tok);
	}
	return n > 0;
}

static const char *entry_name(const char *name)
{
	return name[0] == '.' && name[1] == '/' ? name + 2 : name;
}

/* A regular file named "ramboot" that is an ELF program (the hook
 * scripts share the name), or a link named so; every ELF program's path
 * is kept, for a link's target. */
static void check_entry(struct archive *a, struct archive_entry *e, struct found *f)
{
	const char *name = archive_entry_pathname(e), *base, *hard, *sym;
	char magic[4], dir[PATH_MAX];
	struct prog *p;

	if (!name)
		return;
	name = entry_name(name);
	base = strrchr(name, '/');
	snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - name) : 0, name);
	base = base ? base + 1 : name;
	hard = archive_entry_hardlink(e);
	sym = archive_entry_filetype(e) == AE_IFLNK ? archive_entry_symlink(e) : NULL;
	if (!f->present && !f->via[0] && !strcmp(base, "ramboot")) {
		if ((hard || sym) &&
		    norm_path(hard ? "" : dir, hard ? entry_name(hard) : sym, f->link, sizeof(f->link)))
			snprintf(f->via, sizeof(f->via), "%s", name);
		else if (archive_entry_filetype(e) == AE_IFREG && archive_entry_nlink(e) > 1 &&
			 archive_entry_ino64(e) > 0) {
			f->link_ino = archive_entry_ino64(e);
			snprintf(f->via, sizeof(f->via), "%s", name);
		}
	}
	if (archive_entry_filetype(e) != AE_IFREG ||
	    archive_read_data(a, magic, sizeof(magic)) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4))
		return;
	if (!f->present && !strcmp(base, "ramboot")) {
		snprintf(f->path, sizeof(f->path), "%s", name);
		f->size = archive_entry_size(e);
		f->present = true;
	}
	p = realloc(f->progs, (f->nprogs + 1) * sizeof(*p));
	if (!p)
		return;
	f->progs = p;
	p[f->nprogs].path = strdup(name);
	p[f->nprogs].size = archive_entry_size(e);
	p[f->nprogs].ino = archive_entry_nlink(e) > 1 ? archive_entry_ino64(e) : 0;
	if (p[f->nprogs].path)
		f->nprogs++;
}

/* A link named ramboot whose target is one of the programs: present. */
static void resolve_link(struct found *f)
{
	size_t i;

	for (i = 0; !f->present && f->via[0] && i < f->nprogs; i++) {
		if (f->link[0] ? strcmp(f->progs[i].path, f->link) :
		    f->progs[i].ino != f->link_ino)
			continue;
		snprintf(f->path, sizeof(f->path), "%.2000s -> %.2000s", f->via, f->progs[i].path);
		f->size = f->progs[i].size;
		f->present = true;
	}
	for (i = 0; i < f->nprogs; i++)
		free(f->progs[i].path);
	free(f->progs);
	f->progs = NULL;
	f->nprogs = 0;
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
	struct found f = { .present = false, .progs = NULL };
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
	resolve_link(&f);
	if (member == 0) {
		rb_err("%s: empty file", file);
		rc = RB_EXIT_FAIL;
	}
	if (f.present)
		printf("ramboot: present (%s, %s)\n", f.path,
		       fmt_size((uint64_t)f.size, sz, sizeof(sz)));
	else
		printf("ramboot: absent\n");
	return rc;   /* main.c checks that it reached stdout */
}

int cmd_initrd(int argc, char **argv)
{
	const char *out = NULL, *list = NULL, *binary = NULL, *hooks = NULL, *conf = NULL;
	const char *keys = NULL, *udpcast = NULL;
	char bin[PATH_MAX], hk[PATH_MAX], cf[PATH_MAX], kd[PATH_MAX];
	struct rb_getopt g = { .set = &optset };
	int c;

	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'l': list = optarg; break;
		case OPT_BINARY: binary = optarg; break;
		case OPT_HOOKS: hooks = optarg; break;
		case OPT_CONF: conf = optarg; break;
		case OPT_KEYS: keys = optarg; break;
		case OPT_UDPCAST: udpcast = optarg ? optarg : "/usr/bin/udp-receiver"; break;
		case 'v': rb_verbose = 1; break;
		case 'h': rb_opts_usage(stdout, &optset); return RB_EXIT_OK;
		default: return rb_opts_fail(&optset, "bad option '%s'", argv[optind - 1]);
		}
	}
	/* `ramboot initrd --list FILE` and `ramboot initrd -l FILE`; also
	 * a bare FILE after --list's own argument is refused. */
	if (optind < argc)
		return rb_opts_fail(&optset, "unexpected argument '%s'", argv[optind]);
	if (!out == !list)
		return rb_opts_fail(&optset, "give either -o FILE or --list FILE");
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
	/* the defaults below the root prefix (RAMBOOT_ROOT), as everywhere */
	if (!conf && rb_path(cf, sizeof(cf), "%s", "/etc/ramboot.conf") == 0 && is_file(cf))
		conf = cf;
	if (!keys && rb_path(kd, sizeof(kd), "%s", SIGN_KEYDIR) == 0 && is_dir(kd))
		keys = kd;
	if (udpcast && (!is_file(udpcast) || access(udpcast, X_OK) < 0)) {
		rb_err("%s: no such program (the udpcast package has it)", udpcast);
		return RB_EXIT_FAIL;
	}
	return write_initrd(out, binary, hooks, conf, keys, udpcast);
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
