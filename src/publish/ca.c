// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * publish --content-addressed: the image's bytes under a name of their
 * own, IMAGE.sha256-HEX16, which the manifest names (publish.c, step
 * 3b), and the sweep of the older ones (step 5).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/fdio.h"
#include "lib/msg.h"
#include "format/manifest.h"
#include "publish/publish.h"
#include "publish/publishint.h"

/* ---- --content-addressed ----
 * The image's bytes under IMAGE.sha256-HEX16 (publish.h), which the
 * manifest names: a client reads that file, so a rebuild that puts a new
 * image at IMAGE never changes the bytes under a client that read the
 * manifest before it. `ltsp image` renames IMAGE to IMAGE.old and the new
 * image to IMAGE, and drops the previous IMAGE.old: a file a client
 * holds open over NFS lives as long as it has a name, so the names
 * publish keeps keep the images alive. */

#define CA_COPY_BUF (1u << 20)

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Still the file publish_make() read (the same inode, size, mtime). */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return same_inode(a, b) && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Copy size bytes of in to out from offset 0: in the kernel when it
 * can, else through a buffer. 0 or -errno. */
static int copy_bytes(int in, int out, off_t size)
{
	char *buf = NULL;
	off_t off = 0;
	bool kernel = true;
	int rc = 0;

	while (off < size) {
		size_t want = (size_t)(size - off > (off_t)CA_COPY_BUF ? CA_COPY_BUF : size - off);
		ssize_t n;

		if (kernel) {
			off_t ioff = off, ooff = off;

			n = copy_file_range(in, &ioff, out, &ooff, want, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP)) {
				kernel = false;
				continue;
			}
		} else {
			if (!buf && !(buf = malloc(CA_COPY_BUF)))
				return -ENOMEM;
			n = pread_full(in, buf, want, off);
			if (n > 0) {
				rc = pwrite_full(out, buf, (size_t)n, off);
				if (rc < 0)
					break;
			}
		}
		if (n < 0) {
			rc = kernel ? -errno : (int)n;
			break;
		}
		if (n == 0) {
			rc = -ESTALE;       /* shorter than when it was read */
			break;
		}
		off += n;
	}
	free(buf);
	return rc;
}

/* Do the files a and b hold the same size bytes? 1, 0, or -errno. */
static int same_bytes(int a, int b, off_t size)
{
	char *x = malloc(CA_COPY_BUF), *y = malloc(CA_COPY_BUF);
	off_t off = 0;
	int rc = 1;

	if (!x || !y)
		rc = -ENOMEM;
	while (rc == 1 && off < size) {
		size_t want = (size_t)(size - off > (off_t)CA_COPY_BUF ? CA_COPY_BUF : size - off);
		ssize_t n = pread_full(a, x, want, off), m = pread_full(b, y, want, off);

		if (n < 0 || m < 0)
			rc = (int)(n < 0 ? n : m);
		else if ((size_t)n != want || (size_t)m != want || memcmp(x, y, want))
			rc = 0;
		off += (off_t)want;
	}
	free(x);
	free(y);
	return rc;
}

/* A file at the content-addressed name already (a republish, a revert):
 * 1 when it holds the image and stays (the image's own inode, unless
 * HOW is copy, or the same bytes), 0 when it is to be replaced, -errno
 * (a message in err) when it is anything but a regular file or cannot be
 * read. */
static int ca_present(int dirfd, int fd, const char *name, enum publish_ca ca,
		      const struct stat *img, const struct stat *at, char *err, size_t errlen)
{
	struct stat st;
	int cfd, rc;

	if (!S_ISREG(at->st_mode))
		return rb_errfmt(err, errlen, -EEXIST, "%s: %s there: refused", name,
				 S_ISLNK(at->st_mode) ? "a symbolic link" : "not a regular file");
	if (same_inode(at, img))
		return ca == PUBLISH_CA_LINK;
	if (at->st_size != img->st_size)
		return 0;
	cfd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", name, strerror(errno));
	rc = fstat(cfd, &st) < 0 ? -errno : !same_inode(&st, at) ? -ESTALE :
	     same_bytes(fd, cfd, img->st_size);
	(void)close(cfd);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", name, strerror(-rc));
	return rc;
}

/* The image's bytes into a new file that takes name (replacing the
 * regular file there when at, its stat, is given): a reflink, else a
 * copy, synced, with the image's mtime (the age publish_sweep_images() goes by).
 * 0 or -errno. */
struct ca_fill {
	int fd;                       /* the image */
	const struct stat *img;
	const char **how;
};

static int ca_fill(int ofd, void *arg)
{
	const struct ca_fill *f = arg;
	struct timespec times[2] = { f->img->st_atim, f->img->st_mtim };
	int rc = 0;

	*f->how = "reflink";
	if (ioctl(ofd, FICLONE, f->fd) < 0) {
		*f->how = "copy";
		rc = copy_bytes(f->fd, ofd, f->img->st_size);
	}
	if (rc == 0 && futimens(ofd, times) < 0)
		rc = -errno;
	return rc;
}

static int ca_copy(int dirfd, int fd, const char *name, const struct stat *img,
		   const struct stat *at, const char **how, char *err, size_t errlen)
{
	struct ca_fill f = { fd, img, how };

	/* Never over the image, except over a second name of it (a hard
	 * link that --content-addressed=copy replaces by a copy). */
	return publish_fill_at(dirfd, name, at != NULL, at && same_inode(at, img) ? NULL : img,
			       ca_fill, &f, "", err, errlen);
}

/* A hard link to the image at name (no file there). 0, 1 when no link
 * can be made on this file system (a copy then), -errno. */
static int ca_link(int dirfd, const char *base, const char *name, const struct stat *img,
		   char *err, size_t errlen)
{
	struct stat st;

	if (linkat(dirfd, base, dirfd, name, 0) < 0) {
		if (errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK || errno == EXDEV)
			return 1;
		return rb_errfmt(err, errlen, -errno, "%s: %s", name, strerror(errno));
	}
	/* The link is of the name: it must be the file that was read. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !same_file(&st, img)) {
		(void)unlinkat(dirfd, name, 0);
		return rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read; "
				 "nothing new named", base);
	}
	if (fsync(dirfd) < 0)
		return rb_errfmt(err, errlen, -errno, "%s: directory fsync failed: %s", name,
				 strerror(errno));
	return 0;
}

/* The image under its content-addressed name mk->m.image, complete and
 * on disk before the manifest names it. *how: what was done. 0 or
 * -errno with a message in err; a failure leaves no new name. */
int publish_place_image(int dirfd, const char *base, const struct publish_req *req,
		       const struct publish_made *mk, const char **how, char *err, size_t errlen)
{
	const char *name = mk->m.image;
	struct stat st, at;
	bool exists = false;
	int fd, rc;

	fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "%s: %s", req->image, strerror(errno));
	if (fstat(fd, &st) < 0 || !same_file(&st, &mk->st)) {
		rc = rb_errfmt(err, errlen, -ESTALE, "%s: changed while it was read; nothing "
			       "new named", req->image);
		goto out;
	}
	/* Its bytes on disk before a name the manifest commits to (a rename
	 * into place, as `ltsp image` does, syncs nothing). */
	if (fsync(fd) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: fsync: %s", req->image, strerror(errno));
		goto out;
	}
	if (fstatat(dirfd, name, &at, AT_SYMLINK_NOFOLLOW) == 0) {
		rc = ca_present(dirfd, fd, name, req->ca, &mk->st, &at, err, errlen);
		if (rc != 0) {
			*how = "already there";
			rc = rc < 0 ? rc : 0;
			goto out;
		}
		exists = true;
	} else if (errno != ENOENT) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", name, strerror(errno));
		goto out;
	}
	rc = 1;
	if (req->ca == PUBLISH_CA_LINK && !exists) {
		*how = "hard link";
		rc = ca_link(dirfd, base, name, &mk->st, err, errlen);
	}
	if (rc == 1)
		rc = ca_copy(dirfd, fd, name, &mk->st, exists ? &at : NULL, how, err, errlen);
out:
	(void)close(fd);
	return rc;
}

/* A content-addressed image found by publish_sweep_images(). */
struct ca_file {
	char name[NAME_MAX + 1];
	struct timespec mtime;
};

/* Is a newer than b (by mtime, then by name for a stable order)? */
static bool ca_newer(const struct ca_file *a, const struct ca_file *b)
{
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec > b->mtime.tv_nsec;
	return strcmp(a->name, b->name) > 0;
}

/*
 * Remove the content-addressed images of base that none of keep names
 * (the new manifest's, the previous one's, the backup's) and that are
 * not among the keep_n newest (by mtime: the image's own, a copy takes
 * it over). One that shares the image's inode but is not the new
 * manifest's holds bytes other than its name says (the image was
 * rewritten in place): it goes too, with a warning.
 */
void publish_sweep_images(int dirfd, const char *prefix, const char *base,
			 const char *const keep[SWEEP_KEEP], unsigned keep_n,
			 const struct stat *img, const char *new_name)
{
	struct ca_file *f = NULL, *nf;
	size_t n = 0, cap = 0, i, j;
	struct dirent *d;
	struct stat st;
	DIR *dir = publish_sweep_open(dirfd, prefix, base, "older images");
	bool removed = false;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (!publish_is_image_name(base, d->d_name) ||
		    fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (same_inode(&st, img) && strcmp(d->d_name, new_name)) {
			rb_warn("%s%s: the same file as %s%s, which holds another image now "
				"(rewritten in place?): removed; its readers saw it change (use "
				"--content-addressed=copy, or rename a new image into place)", prefix,
				d->d_name, prefix, base);
			if (unlinkat(dirfd, d->d_name, 0) == 0)
				removed = true;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nf = realloc(f, cap * sizeof(*f));
			if (!nf) {
				rb_warn("out of memory: older images stay");
				goto out;
			}
			f = nf;
		}
		snprintf(f[n].name, sizeof(f[n].name), "%s", d->d_name);
		f[n].mtime = st.st_mtim;
		n++;
	}
	for (i = 0; i < n; i++) {
		size_t newer = 0;

		if (publish_kept(keep, f[i].name))
			continue;
		for (j = 0; j < n; j++)
			newer += j != i && ca_newer(&f[j], &f[i]);
		if (newer < keep_n)
			continue;
		if (unlinkat(dirfd, f[i].name, 0) < 0) {
			rb_warn("%s%s: cannot remove: %s", prefix, f[i].name, strerror(errno));
			continue;
		}
		removed = true;
		printf("removed %s%s\n", prefix, f[i].name);
	}
out:
	free(f);
	publish_sweep_close(dir, dirfd, prefix, removed);
}
