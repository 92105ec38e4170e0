/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing a file the careful way: the new content goes into a file that
 * has no name yet (O_TMPFILE in the target's directory, else a temporary
 * with an unpredictable name made with O_EXCL|O_NOFOLLOW), and gets its
 * name only on commit, by a link (a new file) or a rename over the old
 * one (--force). The final name is never followed if it is a symbolic
 * link, and nothing but a regular file is ever replaced. A kill before
 * the commit leaves the old file, or nothing: an O_TMPFILE file goes
 * away with the process.
 */
#ifndef RAMBOOT_OUTFILE_H
#define RAMBOOT_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

enum {
	OUTFILE_REPLACE = 1 << 0, /* an existing regular file may be replaced */
	OUTFILE_SYNC = 1 << 1,    /* fsync the data before it gets its name */
};

struct outfile {
	int fd;                   /* write here; -1 when closed */
	int dirfd;                /* the target's directory */
	int flags;
	bool anonymous;           /* O_TMPFILE: no name until the commit */
	char name[NAME_MAX + 1];  /* the target's name in dirfd */
	char tmpname[NAME_MAX + 1]; /* the named temporary, "" if none */
};

/*
 * Open a new file to become path. Refuses (-errno and a message in err)
 * a symbolic link at path (-ELOOP), anything but a regular file there
 * (-EEXIST), a regular file without OUTFILE_REPLACE (-EEXIST), and the
 * file `protect` (the source: same st_dev and st_ino) (-EINVAL). The
 * directory part of path may contain symbolic links; the last component
 * never is followed. On success of->fd is open for writing.
 */
int outfile_open(struct outfile *of, const char *path, mode_t mode, int flags,
		 const struct stat *protect, char *err, size_t errlen);

/* The same, protecting each of the nprotect files in the array protect:
 * a command that read several inputs (an image, a manifest, a key)
 * replaces none of them. */
int outfile_open_protect(struct outfile *of, const char *path, mode_t mode, int flags,
			 const struct stat *protect, size_t nprotect, char *err, size_t errlen);

/* The same for NAME (one path component) in the directory dirfd, which
 * stays the caller's: for a process that must not look up paths any
 * more (a copier that outlives the initramfs). */
int outfile_openat(struct outfile *of, int dirfd, const char *name, mode_t mode, int flags,
		   const struct stat *protect, char *err, size_t errlen);

int outfile_openat_protect(struct outfile *of, int dirfd, const char *name, mode_t mode,
			   int flags, const struct stat *protect, size_t nprotect, char *err,
			   size_t errlen);

/* fstat of the directory the file will appear in (for containment
 * checks: is it on the file system we mounted?). */
int outfile_dir_stat(const struct outfile *of, struct stat *st);

/* Give the file its name (replacing a regular file when allowed) and
 * close it. 0 or -errno; on failure nothing is left behind and an old
 * file is untouched. */
int outfile_commit(struct outfile *of);
/* The whole file at once: len bytes of buf written and committed, or
 * the file dropped (outfile_abort) when a write fails. 0 or -errno. */
int outfile_write(struct outfile *of, const void *buf, size_t len);

/* Drop the new file: close it and remove any temporary name. Safe to
 * call twice and after a commit (then it does nothing). */
void outfile_abort(struct outfile *of);

#endif
