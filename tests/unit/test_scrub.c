// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scrub of a cache's slot (cache/scrub.h) and its report
 * (boot/scrub.c), as root: a cache made by cache_init() on a loop device
 * over a file, an image refreshed into it, and the image file itself
 * standing in for the slot's dm-verity mapping (this host may have no
 * device-mapper). pread() is replaced below: a read of that file over
 * the "bad" offset fails as dm-verity fails a block that does not match
 * its hash. A read error marks the slot bad in the state (the cache's
 * file system read-write for that commit only, read-only again after),
 * and the report says cache_scrub=bad with the block's offset; a
 * clean read marks nothing; another error marks nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tap.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "boot/scrub.h"
#include "cache/cache.h"
#include "cache/scrub.h"
#include "dev/loopdev.h"

#define IMG_SIZE (3u * 1024 * 1024 + 4096)

static char dir[64], img[PATH_MAX], dev[64], err[512];
static int lfd = -1;
static int slot = -1;
static char sha[65];

/* The fault: reads of the file bad_ino over bad_at fail with bad_errno. */
static dev_t bad_dev;
static ino_t bad_ino;
static uint64_t bad_at = UINT64_MAX;
static int bad_errno = EIO;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct stat st;

	if (bad_at != UINT64_MAX && n > 0 && fstat(fd, &st) == 0 && st.st_ino == bad_ino &&
	    st.st_dev == bad_dev && (uint64_t)off <= bad_at && bad_at < (uint64_t)off + n) {
		errno = bad_errno;
		return -1;
	}
	return syscall(SYS_pread64, fd, buf, n, off);
}

static int skip(const char *name, const char *why)
{
	tap_n++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
	return 0;
}

/* A detached mount of the cache just closed may linger a moment (the
 * kernel lets it go after its last descriptor): as cboot.c's open_after. */
static int open_ro(struct cache *c)
{
	int i, rc = -EBUSY;

	for (i = 0; i < 50 && rc == -EBUSY; i++) {
		if (i)
			nap_ms(100);
		rc = cache_open_ro(c, dev, err, sizeof(err));
	}
	return rc;
}

static int setup(void)
{
	struct cache_init_opts io = { 0 };
	struct cache_refresh_opts o = { 0 };
	struct cache_refresh_result res;
	char path[PATH_MAX], name[32];
	struct cache c;
	uint64_t x = 0x72616d626f6f7463ULL;
	unsigned char *buf;
	struct stat st;
	size_t i;
	int fd, rc;

	snprintf(dir, sizeof(dir), "/tmp/rbscrub.XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(path, sizeof(path), "%s/cache.img", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 64 << 20) < 0)
		return -errno;
	rc = loopdev_attach(fd, false, name, sizeof(name), &lfd);
	(void)close(fd);
	if (rc < 0)
		return rc;
	snprintf(dev, sizeof(dev), "/dev/%s", name);
	rc = cache_init(dev, &io, err, sizeof(err));
	if (rc < 0)
		return rc;
	/* The image: bytes that do not compress, and its file. */
	buf = malloc(IMG_SIZE);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < IMG_SIZE; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		buf[i] = (unsigned char)(x >> 56);
	}
	snprintf(img, sizeof(img), "%s/x.img", dir);
	fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	rc = fd < 0 ? -errno : write_all(fd, buf, IMG_SIZE);
	free(buf);
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		return rc;
	if (stat(img, &st) < 0)
		return -errno;
	bad_dev = st.st_dev;
	bad_ino = st.st_ino;
	rc = cache_open(&c, dev, true, err, sizeof(err));
	if (rc < 0)
		return rc;
	o.image = img;
	rc = cache_refresh(&c, &o, &res, err, sizeof(err));
	cache_close(&c);
	if (rc < 0)
		return rc;
	slot = res.slot;
	snprintf(sha, sizeof(sha), "%s", res.sha256);
	return 0;
}

static void teardown(void)
{
	char cmd[128];

	close_fd(&lfd);                   /* autoclear: the loop device goes */
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", dir);
	}
}

/* The state's mark on the slot: 1 bad, 0 not, -1 unreadable. */
static int slot_bad(void)
{
	struct cache_image_status s;
	struct cache c;
	int rc;

	if (open_ro(&c) < 0)
		return -1;
	rc = cache_image_status(&c, "x.img", &s);
	cache_close(&c);
	if (rc < 0 || s.health != CACHE_OK)
		return -1;
	return s.st.slot[slot].bad ? 1 : 0;
}

/* Scrub the image file as if it were the slot's mapping. */
static int scrub(struct cache_scrub_result *r, bool *ro_after)
{
	struct cache_scrub sc;
	struct statvfs vfs;
	int rc, i;

	rc = -EBUSY;
	for (i = 0; i < 50 && rc == -EBUSY; i++) {
		if (i)
			nap_ms(100);
		rc = cache_scrub_open(&sc, dev, "x.img", slot, sha, img, err, sizeof(err));
	}
	if (rc < 0) {
		printf("# cache_scrub_open: %s\n", err);
		return rc;
	}
	cache_scrub_run(&sc, r);
	*ro_after = fstatvfs(sc.c.root, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
	cache_scrub_close(&sc);
	return 0;
}

static void scrub_clean(void)
{
	struct cache_scrub_result r;
	bool ro = false;

	bad_at = UINT64_MAX;
	CHECK_EQ_INT(scrub(&r, &ro), 0);
	CHECK_EQ_INT(r.verdict, CACHE_SCRUB_OK);
	CHECK_EQ_INT(r.bytes, IMG_SIZE);
	CHECK(!r.marked);
	CHECK(ro);
	CHECK_EQ_INT(slot_bad(), 0);
}

static void scrub_other_error(void)
{
	struct cache_scrub_result r;
	bool ro = false;

	bad_at = 1 << 20;
	bad_errno = ENXIO;
	CHECK_EQ_INT(scrub(&r, &ro), 0);
	bad_at = UINT64_MAX;
	bad_errno = EIO;
	CHECK_EQ_INT(r.verdict, CACHE_SCRUB_ERROR);
	CHECK(!r.marked);
	CHECK(strstr(r.why, "read error at") != NULL);
	CHECK_EQ_INT(slot_bad(), 0);
}

static void scrub_eio_marks_bad(void)
{
	struct cache_scrub_result r;
	char rdir[PATH_MAX], rpath[PATH_MAX + 16], want[64], *text = NULL;
	size_t len = 0;
	bool ro = false;
	int dfd, fd;

	/* A byte in the fourth block of the second MiB. */
	bad_at = (1 << 20) + 3 * 4096 + 17;
	CHECK_EQ_INT(scrub(&r, &ro), 0);
	bad_at = UINT64_MAX;
	CHECK_EQ_INT(r.verdict, CACHE_SCRUB_BAD);
	CHECK_EQ_INT(r.bad_off, (1 << 20) + 3 * 4096);
	CHECK(r.marked);
	if (!r.marked)
		printf("# %s\n", r.why);
	CHECK(ro);                        /* read-only again after the commit */
	CHECK_EQ_INT(slot_bad(), 1);

	/* The report: written by the boot, amended by the scrub. */
	snprintf(rdir, sizeof(rdir), "%s/run", dir);
	CHECK(mkdir(rdir, 0755) == 0);
	snprintf(rpath, sizeof(rpath), "%s/report", rdir);
	fd = open(rpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write_all(fd, "mode_done=cache\ncache=hit\n", 26) == 0);
	if (fd >= 0)
		CHECK(close(fd) == 0);
	dfd = open(rdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK_EQ_INT(scrub_report(dfd, "x.img", slot, &r), 0);
	if (dfd >= 0)
		(void)close(dfd);
	fd = open(rpath, O_RDONLY | O_CLOEXEC);
	text = malloc(4096);
	if (fd >= 0 && text) {
		ssize_t n = read_full(fd, text, 4095);

		len = n > 0 ? (size_t)n : 0;
		text[len] = '\0';
		CHECK(strstr(text, "cache=hit\n") != NULL);
		CHECK(strstr(text, "\ncache_scrub=bad\n") != NULL);
		snprintf(want, sizeof(want), "\ncache_scrub_offset=%u\n", (1u << 20) + 3 * 4096);
		CHECK(strstr(text, want) != NULL);
		CHECK(strstr(text, "\ncache_scrub_error=read error at 1060864: ") != NULL);
		if (tap_case_failed)
			printf("# report:\n%s", text);
	} else {
		CHECK(0);
	}
	if (fd >= 0)
		(void)close(fd);
	free(text);

	/* Marked already: a second scrub finds it again, the mark stays. */
	bad_at = (1 << 20) + 17;
	CHECK_EQ_INT(scrub(&r, &ro), 0);
	bad_at = UINT64_MAX;
	CHECK_EQ_INT(r.verdict, CACHE_SCRUB_BAD);
	CHECK(r.marked);
	CHECK_EQ_INT(slot_bad(), 1);
}

int main(void)
{
	int rc;

	if (geteuid() != 0) {
		skip("scrub", "needs root (loop devices, mounts)");
		return TAP_DONE();
	}
	rc = setup();
	if (rc < 0) {
		printf("# setup: %s (%s)\n", strerror(-rc), err);
		teardown();
		skip("scrub", "no cache could be made here");
		return TAP_DONE();
	}
	RUN(scrub_clean);
	RUN(scrub_other_error);
	RUN(scrub_eio_marks_bad);
	teardown();
	return TAP_DONE();
}
