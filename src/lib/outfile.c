// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing a file the careful way (see outfile.h). The sequence is the
 * one of install(1) and of editors that keep the old file until the new
 * one is complete: write aside, then link or rename into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/outfile.h"


/* ".NAME.XXXXXXXX" with 8 random hex digits, in the target's directory. */
static int temp_name(struct outfile *of, char *out, size_t len)
{
	unsigned char rnd[4];
	char suffix[9];

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		/* No entropy yet (early boot): the address of the stack and
		 * the pid still make the name hard to guess, and O_EXCL with
		 * O_NOFOLLOW makes a guessed name harmless anyway. */
		unsigned long v = (unsigned long)(uintptr_t)&rnd ^ ((unsigned long)getpid() << 16) ^
				  (unsigned long)now_sec();

		memcpy(rnd, &v, sizeof(rnd));
	}
	hex_encode(rnd, sizeof(rnd), suffix);
	if (snprintf(out, len, ".%.200s.%s", of->name, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* The common part: of->dirfd is open, of->name set. path is for messages. */
static int open_in_dir(struct outfile *of, const char *path, mode_t mode,
		       const struct stat *protect, size_t nprotect, char *err, size_t errlen)
{
	const char *name = of->name;
	struct stat st;
	int rc, tries, flags = of->flags;
	size_t i;

	if (fstatat(of->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			rc = rb_errfmt(err, errlen, -ELOOP, "%s: is a symbolic link; not written "
				  "through it", path);
		else if (!S_ISREG(st.st_mode))
			rc = rb_errfmt(err, errlen, -EEXIST, "%s: exists and is not a regular file; "
				  "not replaced", path);
		else
			rc = 0;
		for (i = 0; rc == 0 && i < nprotect; i++)
			if (st.st_dev == protect[i].st_dev && st.st_ino == protect[i].st_ino)
				rc = rb_errfmt(err, errlen, -EINVAL, "%s: is the source itself",
					       path);
		if (rc == 0 && !(flags & OUTFILE_REPLACE))
			rc = rb_errfmt(err, errlen, -EEXIST, "%s: exists already (use --force to "
				  "overwrite)", path);
		if (rc < 0) {
			outfile_abort(of);
			return rc;
		}
	} else if (errno != ENOENT) {
		rc = -errno;
		outfile_abort(of);
		return rb_errfmt(err, errlen, rc, "%s: cannot look at it", path);
	}

	of->fd = openat(of->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	if (of->fd >= 0) {
		of->anonymous = true;
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
		rc = -errno;
		outfile_abort(of);
		return rb_errfmt(err, errlen, rc, "%s: cannot create a file there", path);
	}
	/* No O_TMPFILE on this file system: a temporary with a random
	 * name; O_EXCL|O_NOFOLLOW never opens what someone planted. */
	for (tries = 0; tries < 16; tries++) {
		rc = temp_name(of, of->tmpname, sizeof(of->tmpname));
		if (rc < 0)
			break;
		of->fd = openat(of->dirfd, of->tmpname,
				O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (of->fd >= 0)
			return 0;
		rc = -errno;
		if (rc != -EEXIST)
			break;
	}
	of->tmpname[0] = '\0';
	outfile_abort(of);
	return rb_errfmt(err, errlen, rc, "%s: cannot create a file there", path);
}

static int check_name(struct outfile *of, const char *name, int flags, const char *path,
		      char *err, size_t errlen)
{
	memset(of, 0, sizeof(*of));
	of->fd = of->dirfd = -1;
	of->flags = flags;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
		return rb_errfmt(err, errlen, -EISDIR, "%s: not a file name", path);
	if (strlen(name) > NAME_MAX)
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: name too long", path);
	snprintf(of->name, sizeof(of->name), "%s", name);
	return 0;
}

int outfile_open(struct outfile *of, const char *path, mode_t mode, int flags,
		 const struct stat *protect, char *err, size_t errlen)
{
	return outfile_open_protect(of, path, mode, flags, protect, protect ? 1 : 0, err, errlen);
}

int outfile_open_protect(struct outfile *of, const char *path, mode_t mode, int flags,
			 const struct stat *protect, size_t nprotect, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int rc;

	rc = check_name(of, name, flags, path, err, errlen);
	if (rc < 0)
		return rc;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return rb_errfmt(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	of->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (of->dirfd < 0) {
		rc = -errno;
		return rb_errfmt(err, errlen, rc, "%s: cannot open its directory", path);
	}
	return open_in_dir(of, path, mode, protect, nprotect, err, errlen);
}

int outfile_openat(struct outfile *of, int dirfd, const char *name, mode_t mode, int flags,
		   const struct stat *protect, char *err, size_t errlen)
{
	return outfile_openat_protect(of, dirfd, name, mode, flags, protect, protect ? 1 : 0,
				      err, errlen);
}

int outfile_openat_protect(struct outfile *of, int dirfd, const char *name, mode_t mode,
			   int flags, const struct stat *protect, size_t nprotect, char *err,
			   size_t errlen)
{
	int rc = check_name(of, name, flags, name, err, errlen);

	if (rc < 0)
		return rc;
	of->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (of->dirfd < 0) {
		rc = -errno;
		return rb_errfmt(err, errlen, rc, "%s: cannot use its directory", name);
	}
	return open_in_dir(of, name, mode, protect, nprotect, err, errlen);
}

int outfile_dir_stat(const struct outfile *of, struct stat *st)
{
	return fstat(of->dirfd, st) < 0 ? -errno : 0;
}

/* Link the anonymous file under name. */
static int link_anonymous(struct outfile *of, const char *name)
{
	char proc[64];

	if (linkat(of->fd, "", of->dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EPERM && errno != ENOENT && errno != EINVAL)
		return -errno;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc does not. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", of->fd);
	return linkat(AT_FDCWD, proc, of->dirfd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

int outfile_commit(struct outfile *of)
{
	int rc = 0;

	if (of->fd < 0)
		return -EBADF;
	if ((of->flags & OUTFILE_SYNC) && fsync(of->fd) < 0)
		rc = -errno;
	if (rc == 0 && of->anonymous) {
		if (!(of->flags & OUTFILE_REPLACE)) {
			/* A new name only: EEXIST if one appeared meanwhile. */
			rc = link_anonymous(of, of->name);
		} else {
			int tries;

			for (tries = 0; tries < 16; tries++) {
				rc = temp_name(of, of->tmpname, sizeof(of->tmpname));
				if (rc < 0)
					break;
				rc = link_anonymous(of, of->tmpname);
				if (rc != -EEXIST)
					break;
			}
			if (rc < 0)
				of->tmpname[0] = '\0';
		}
	}
	if (rc == 0 && of->tmpname[0]) {
		/* rename() replaces a name, never follows it: a symbolic link
		 * planted at the target meanwhile is replaced, not written
		 * through. Without --force the name must still be free. */
		if (of->flags & OUTFILE_REPLACE)
			rc = renameat(of->dirfd, of->tmpname, of->dirfd, of->name) < 0 ? -errno : 0;
		else
			rc = renameat2(of->dirfd, of->tmpname, of->dirfd, of->name,
				       RENAME_NOREPLACE) < 0 ? -errno : 0;
		if (rc == 0)
			of->tmpname[0] = '\0';
	}
	if (rc == 0 && (of->flags & OUTFILE_SYNC) && fsync(of->dirfd) < 0)
		rc = -errno;
	if (rc < 0) {
		outfile_abort(of);
		return rc;
	}
	rc = close_checked(of->fd);
	of->fd = -1;
	(void)close(of->dirfd);
	of->dirfd = -1;
	return rc;
}

void outfile_abort(struct outfile *of)
{
	if (of->fd >= 0) {
		(void)close(of->fd);
		of->fd = -1;
	}
	if (of->dirfd >= 0) {
		if (of->tmpname[0])
			(void)unlinkat(of->dirfd, of->tmpname, 0);
		(void)close(of->dirfd);
		of->dirfd = -1;
	}
	of->tmpname[0] = '\0';
}

int outfile_write(struct outfile *of, const void *buf, size_t len)
{
	int rc = write_all(of->fd, buf, len);

	if (rc < 0) {
		outfile_abort(of);
		return rc;
	}
	return outfile_commit(of);
}
