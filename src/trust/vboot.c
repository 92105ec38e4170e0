// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot.verity=1 at boot: a dm-verity mapping of the image or its RAM
 * copy (vboot.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/blkdev.h"
#include "dev/dm.h"
#include "dev/loopdev.h"
#include "format/manifest.h"
#include "trust/sign.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "trust/vboot.h"
#include "format/verity.h"

#define VBOOT_GRACE_S 15.0
#define COPY_BUF (256 * 1024)

/* Copy the hash tree src to dst (a new file in our own directory), exactly
 * want bytes: a tree of another size belongs to another image. */
static int copy_tree(const char *src, const char *dst, uint64_t want, char *err, size_t errlen)
{
	struct stat st;
	uint64_t done = 0;
	char *buf = NULL;
	int in, out = -1, rc;

	in = open_stat(src, &st, err, errlen);
	if (in < 0)
		return in;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != want) {
		rc = rb_errfmt(err, errlen, -EBADMSG, "%s: %s%llu bytes, the image's hash tree has "
			       "%llu", src, S_ISREG(st.st_mode) ? "" : "not a regular file; ",
			       (unsigned long long)st.st_size, (unsigned long long)want);
		goto out;
	}
	buf = malloc(COPY_BUF);
	if (!buf) {
		rc = rb_errfmt(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	if (unlink(dst) < 0 && errno != ENOENT) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", dst, strerror(errno));
		goto out;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", dst, strerror(errno));
		goto out;
	}
	while (done < want) {
		size_t n = want - done < COPY_BUF ? (size_t)(want - done) : COPY_BUF;
		ssize_t got = read_full(in, buf, n);

		if (got < 0) {
			rc = rb_errfmt(err, errlen, (int)got, "%s: %s", src, strerror((int)-got));
			goto out;
		}
		if ((size_t)got < n) {
			rc = rb_errfmt(err, errlen, -EIO, "%s: ends early", src);
			goto out;
		}
		rc = write_all(out, buf, n);
		if (rc < 0) {
			rb_errfmt(err, errlen, rc, "%s: %s", dst, strerror(-rc));
			goto out;
		}
		done += n;
	}
	rc = close_checked(out);
	out = -1;
	if (rc < 0)
		rb_errfmt(err, errlen, rc, "%s: %s", dst, strerror(-rc));
out:
	if (out >= 0)
		(void)close(out);
	if (rc < 0)
		(void)unlink(dst);
	free(buf);
	(void)close(in);
	return rc;
}

/* A read-only loop device over fd (loopdev_attach_ro): its name, its
 * node's path in dev, its descriptor in *lfd. */
static int loop_over(int fd, const char *what, char *name, size_t nlen, char *dev, size_t dlen,
		     int *lfd, struct vboot_res *r)
{
	int rc = loopdev_attach_ro(fd, name, nlen, lfd);

	if (rc == 0)
		rc = rb_path(dev, dlen, "/dev/%s", name);
	if (rc < 0)
		rb_errfmt(r->error, sizeof(r->error), rc, "a loop device for %s: %s", what,
			  strerror(-rc));
	return rc;
}

/* The manifest under the policy, with its verity keys. */
static int load_manifest(const struct vboot_req *q, struct manifest *m, struct vboot_res *r)
{
	char err[384];
	int rc;

	if (q->signed_only) {
		struct sign_who who;

		rc = sign_manifest_load(q->manifest, q->keydir, m, &who, err, sizeof(err));
		if (rc == 0)
			snprintf(r->signed_by, sizeof(r->signed_by), "%s %s", who.name, who.keyid);
	} else {
		rc = manifest_load(q->manifest, m, err, sizeof(err));
	}
	if (rc < 0)
		return rb_errfmt(r->error, sizeof(r->error), rc, "%s: %s", q->manifest, err);
	if (!m->verity_root[0]) {
		manifest_free(m);
		return rb_errfmt(r->error, sizeof(r->error), -ENODATA, "%s: no verity-root (made "
				 "without ramboot manifest --verity)", q->manifest);
	}
	if ((q->want_sha256 && strcmp(q->want_sha256, m->sha256)) ||
	    (q->want_root && strcmp(q->want_root, m->verity_root))) {
		manifest_free(m);
		return rb_errfmt(r->error, sizeof(r->error), -EBADMSG, "%s: changed while the "
				 "image was read", q->manifest);
	}
	return 0;
}

/* The setup itself (in the child). */
/* The manifest's hash tree, beside the image, copied into our directory
 * under the run directory (hcopy: its path there): the mapping must not
 * read it from the network. 0 or -errno (r->error says why). */
static int tree_in(const struct vboot_req *q, const struct manifest *m, char *hcopy,
		   size_t len, struct vboot_res *r)
{
	char dir[PATH_MAX], src[PATH_MAX + 128];
	const char *slash = strrchr(q->image, '/');
	struct stat st;

	if (snprintf(src, sizeof(src), "%.*s%s", slash ? (int)(slash - q->image + 1) : 0,
		     q->image, m->verity_hash) >= (int)sizeof(src) ||
	    snprintf(dir, sizeof(dir), "%s/" VBOOT_DIR, q->rundir) >= (int)sizeof(dir) ||
	    snprintf(hcopy, len, "%s/%s", dir, m->verity_hash) >= (int)len)
		return rb_errfmt(r->error, sizeof(r->error), -ENAMETOOLONG, "path too long");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return rb_errfmt(r->error, sizeof(r->error), -errno, "%s: %s", dir, strerror(errno));
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return rb_errfmt(r->error, sizeof(r->error), -ENOTDIR, "%s: not a directory", dir);
	return copy_tree(src, hcopy, verity_hash_file_size(m->size / VERITY_BLOCK), r->error,
			 sizeof(r->error));
}

static int map(const struct vboot_req *q, struct vboot_res *r)
{
	uint8_t root[VERITY_DIGEST], salt[VERITY_SALT_MAX];
	char hcopy[PATH_MAX + 128], ddev[PATH_MAX], hdev[PATH_MAX], lname[32];
	struct dm_verity_target t;
	struct manifest m;
	struct stat st;
	size_t root_len, salt_len;
	int rc, hfd = -1, hloop = -1, dfd = -1, dloop = -1, nfd;
	dev_t dev;
	bool created = false, copied = false;

	/* device-mapper and its verity target: modules in a distribution
	 * kernel, and /dev/mapper/control exists once dm-mod is loaded.
	 * Whatever modprobe says, the ioctls tell. */
	{
		static const char *const args[] = { "-q", "dm-verity", NULL };

		(void)run_modprobe(args);
	}
	rc = load_manifest(q, &m, r);
	if (rc < 0)
		return rc;
	if (verity_hex_parse(m.verity_root, root, sizeof(root), &root_len) < 0 ||
	    root_len != VERITY_DIGEST ||
	    verity_hex_parse(m.verity_salt, salt, sizeof(salt), &salt_len) < 0) {
		rc = rb_errfmt(r->error, sizeof(r->error), -EINVAL, "%s: bad verity-root or "
			       "verity-salt", q->manifest);
		goto out;
	}
	snprintf(r->root, sizeof(r->root), "%s", m.verity_root);

	rc = tree_in(q, &m, hcopy, sizeof(hcopy), r);
	if (rc < 0)
		goto out;
	copied = true;

	/* Both on block devices. */
	hfd = open(hcopy, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (hfd < 0) {
		rc = rb_errfmt(r->error, sizeof(r->error), -errno, "%s: %s", hcopy, strerror(errno));
		goto out;
	}
	rc = loop_over(hfd, "the hash tree", lname, sizeof(lname), hdev, sizeof(hdev), &hloop, r);
	if (rc < 0)
		goto out;
	dfd = open(q->data, O_RDONLY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		rc = rb_errfmt(r->error, sizeof(r->error), -errno, "%s: %s", q->data, strerror(errno));
		goto out;
	}
	if (S_ISREG(st.st_mode) || (S_ISBLK(st.st_mode) && q->loop)) {
		rc = loop_over(dfd, q->data, r->data_dev, sizeof(r->data_dev), ddev, sizeof(ddev),
			       &dloop, r);
		if (rc < 0)
			goto out;
	} else if (S_ISBLK(st.st_mode)) {
		snprintf(ddev, sizeof(ddev), "%s", q->data);
		(void)blkdev_name_of_fd(dfd, r->data_dev, sizeof(r->data_dev));
	} else {
		rc = rb_errfmt(r->error, sizeof(r->error), -EINVAL, "%s: neither a file nor a "
			       "block device", q->data);
		goto out;
	}

	memset(&t, 0, sizeof(t));
	rc = verity_target_prepare(ddev, hdev, root, salt, salt_len, true, &t, r->error,
				   sizeof(r->error));
	if (rc == 0 && t.data_blocks * VERITY_BLOCK != m.size)
		rc = rb_errfmt(r->error, sizeof(r->error), -EBADMSG, "%s: a hash tree of %llu "
			       "blocks, the image has %llu", hcopy,
			       (unsigned long long)t.data_blocks,
			       (unsigned long long)(m.size / VERITY_BLOCK));
	if (rc == 0)
		rc = dm_verity_create(VBOOT_NAME, &t, &dev, r->error, sizeof(r->error));
	if (rc < 0)
		goto out;
	created = true;
	rc = dm_node_path(VBOOT_NAME, r->node, sizeof(r->node));
	if (rc < 0) {
		rb_errfmt(r->error, sizeof(r->error), rc, "path too long");
		goto out;
	}
	/* The file system, read through the mapping: verified. */
	nfd = open(r->node, O_RDONLY | O_CLOEXEC);
	if (nfd < 0) {
		rc = rb_errfmt(r->error, sizeof(r->error), -errno, "%s: %s", r->node,
			       strerror(errno));
		goto out;
	}
	(void)blkid_fstype_fd(nfd, r->fstype, sizeof(r->fstype));
	(void)close(nfd);
	if (!r->fstype[0]) {
		rc = rb_errfmt(r->error, sizeof(r->error), -EIO, "%s: no file system that blkid "
			       "knows (a block that fails verification?)", r->node);
		goto out;
	}
out:
	if (rc < 0 && created) {
		char e2[128];

		(void)dm_remove(VBOOT_NAME, e2, sizeof(e2));
	}
	/* The mapping holds the loop devices now; without it they go. */
	if (dloop >= 0)
		(void)close(dloop);
	if (hloop >= 0)
		(void)close(hloop);
	if (dfd >= 0)
		(void)close(dfd);
	if (hfd >= 0)
		(void)close(hfd);
	/* Only what we made: the name may be someone else's (a link). */
	if (rc < 0 && copied)
		(void)unlink(hcopy);
	manifest_free(&m);
	return rc;
}

struct shared {
	struct child_beat cb;      /* cb.done: r and rc are final */
	const struct vboot_req *q;
	struct vboot_res r;
	int rc;
};

static void map_child(void *arg)
{
	struct shared *sh = arg;

	sh->rc = map(sh->q, &sh->r);
}

int vboot_map(const struct vboot_req *q, struct vboot_res *r)
{
	struct shared *sh = calloc(1, sizeof(*sh));
	double t0 = now_sec();
	int rc, status;

	memset(r, 0, sizeof(*r));
	if (!sh)
		return rb_errfmt(r->error, sizeof(r->error), -ENOMEM, "out of memory");
	sh->q = q;
	/* No beat from the setup: its limit counts from the start, and the
	 * caller's deadline holds too. */
	sh->cb.first_by = q->deadline;
	rc = child_call(map_child, sh, sizeof(*sh), q->timeout > 0 ? q->timeout + VBOOT_GRACE_S : 0,
			&status);
	if (rc == CHILD_DONE) {
		*r = sh->r;
		rc = sh->rc;
	} else if (rc < 0) {
		rb_errfmt(r->error, sizeof(r->error), rc, "fork: %s", strerror(-rc));
	} else {
		char e2[128];

		/* Whatever it made goes; a read it is stuck in is the kernel's. */
		(void)vboot_unmap(q->rundir, e2, sizeof(e2));
		rc = rc == CHILD_KILLED ?
		     rb_errfmt(r->error, sizeof(r->error), -ETIMEDOUT, "the verity setup did not "
			       "end within %.0f s (the server?)", now_sec() - t0) :
		     rb_errfmt(r->error, sizeof(r->error), -EIO, "the verity setup ended without "
			       "a result (status 0x%x)", (unsigned)status);
	}
	free(sh);
	return rc;
}

int vboot_unmap(const char *rundir, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc, fd;

	err[0] = '\0';
	rc = dm_remove(VBOOT_NAME, err, errlen);
	if (rc == -ENXIO || rc == -ENODEV || rc == -ENOENT)
		rc = 0;
	if (rc < 0)
		return rc;
	if (snprintf(dir, sizeof(dir), "%s/" VBOOT_DIR, rundir) >= (int)sizeof(dir))
		return 0;
	/* Our directory, not one a link leads to. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			(void)unlinkat(fd, e->d_name, 0);
	closedir(d);
	(void)rmdir(dir);
	return 0;
}
