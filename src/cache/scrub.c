// SPDX-License-Identifier: GPL-2.0-or-later
/* The scrub of a slot through its dm-verity mapping (scrub.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "dev/blkdev.h"
#include "bgread/pool.h"
#include "bgread/resident.h"
#include "cache/cache.h"
#include "cache/cacheint.h"
#include "cache/scrub.h"

#define SCRUB_PAGE 4096u      /* dm-verity's data blocks are 4 KiB here */
/* The pace of the reads that go to the disk: dm-verity hashes what they
 * bring in the kernel's own workers, not at this process's nice level;
 * at this rate that is a few percent of a core. */
#define SCRUB_RATE (64ULL * 1024 * 1024)

void cache_scrub_close(struct cache_scrub *s)
{
	cache_close(&s->c);
	close_fd(&s->fd);
	bgread_loop_close(&s->loop);
}

/* The counters of block device rdev (/sys/dev/block/MAJ:MIN is a link to
 * its directory, named as /sys/block names it: "dm-0"). */
static void open_counters(struct cache_scrub *s, dev_t rdev)
{
	char p[PATH_MAX], real[PATH_MAX];
	const char *b;

	if (rb_path(p, sizeof(p), "/sys/dev/block/%u:%u", major(rdev), minor(rdev)) < 0 ||
	    !realpath(p, real)) {
		rb_debug("scrub: no counters for %s: the boot's reads are not told", s->what);
		return;
	}
	b = strrchr(real, '/');
	if (bgread_loop_open(&s->loop, -1, b ? b + 1 : real) < 0) {
		rb_debug("scrub: %s: no inflight counter: %s", s->loop.name, strerror(errno));
		bgread_loop_close(&s->loop);
		s->loop.name[0] = '\0';
	}
}

int cache_scrub_open(struct cache_scrub *s, const char *device, const char *name, int slot,
		     const char *sha256, const char *mapping, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	memset(s, 0, sizeof(*s));
	s->c.root = s->c.mnt = s->c.loop = -1;
	s->fd = -1;
	bgread_loop_init(&s->loop);
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->sha256, sizeof(s->sha256), "%s", sha256);
	snprintf(s->what, sizeof(s->what), "%s", mapping);
	s->slot = slot;
	s->fd = open(mapping, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0 || fstat(s->fd, &st) < 0) {
		rc = rb_errfmt(err, errlen, -errno, "%s: %s", mapping, strerror(errno));
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		rc = blk_size(s->fd, &s->size);
		if (rc < 0) {
			rb_errfmt(err, errlen, rc, "%s: its size: %s", mapping, strerror(-rc));
			goto fail;
		}
		open_counters(s, st.st_rdev);
	} else if (S_ISREG(st.st_mode)) {
		s->size = (uint64_t)st.st_size;
	} else {
		rc = rb_errfmt(err, errlen, -EINVAL, "%s: not a block device", mapping);
		goto fail;
	}
	/* No readahead: a read of ours is over when pread returns, so that
	 * what the counters show after it is ours (bgread_cfg.reads_counted).
	 * The advice is this descriptor's: the boot's reads keep theirs. */
	(void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_RANDOM);
	rc = cache_open_ro(&s->c, device, err, errlen);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	cache_scrub_close(s);
	return rc;
}

/*
 * The slot marked bad while it may be the running root (0 when the state
 * is committed; a read-only remount that fails after it is said in err). The cache's file
 * system is read-only for the session (cache_fs_ro): it is made
 * read-write through the mount's descriptor for this one commit, then
 * read-only again. That is safe: the slot's loop device is read-only (a
 * read-only loop device over the slot opened O_RDONLY), so nothing writes
 * the file system meanwhile but this commit of the state, which is not
 * the slot's bytes; and a read-only remount waits for nothing, no file of
 * it being open for writing once the commit is done.
 */
static int mark(struct cache_scrub *s, char *err, size_t errlen)
{
	char why[384];
	int rc;

	if (s->c.mnt < 0)
		return rb_errfmt(err, errlen, -EINVAL, "%s: not a cache ramboot mounted",
				 s->c.what);
	rc = cache_fs_rw(s->c.mnt, s->c.what, err, errlen);
	if (rc == 0)
		rc = cache_mark_bad_in(&s->c, s->name, s->slot, s->sha256, err, errlen);
	/* Always: cache_fs_rw may have made the superblock read-write and failed
	 * after that. */
	if (cache_fs_ro(s->c.mnt, s->c.what, why, sizeof(why)) < 0 && rc == 0)
		snprintf(err, errlen, "%s", why);
	return rc;
}

/* The first block of [off, off + len) that does not read. */
static uint64_t first_bad(int fd, uint64_t off, uint64_t len, uint64_t size)
{
	char *buf = malloc(SCRUB_PAGE);
	uint64_t o, end = off + len > size ? size : off + len;

	if (!buf)
		return off;
	for (o = off; o < end; o += SCRUB_PAGE)
		if (pread_full(fd, buf, end - o < SCRUB_PAGE ? end - o : SCRUB_PAGE, (off_t)o) < 0)
			break;
	free(buf);
	return o < end ? o : off;
}

void cache_scrub_run(struct cache_scrub *s, struct cache_scrub_result *r)
{
	struct bgread_cfg cfg;
	struct bgread_stats st;
	struct bgread_pool *p;
	struct stat sb;
	char err[512];
	double t0 = now_sec();

	memset(r, 0, sizeof(*r));
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = s->fd;
	cfg.size = s->size;
	cfg.page = SCRUB_PAGE;
	/* What the page cache holds passed verity when it was read: taken
	 * from there at once. */
	cfg.mincore_ok = fstat(s->fd, &sb) == 0 && bgread_mincore_shows(&sb, s->what);
	cfg.meminfo_fd = -1;
	cfg.rate = SCRUB_RATE;
	cfg.loop = s->loop.name[0] ? &s->loop : NULL;
	cfg.reads_counted = true;
	cfg.verb = "scrub";
	cfg.list_name[BGREAD_LIST_SEQ] = "offset";
	p = bgread_pool_new(&cfg);
	if (!p || bgread_pool_run(p, NULL) < 0) {
		r->verdict = CACHE_SCRUB_ERROR;
		snprintf(r->why, sizeof(r->why), "%s", p ? "no reader could start" :
			 "out of memory");
		bgread_pool_free(p);
		r->seconds = now_sec() - t0;
		return;
	}
	bgread_pool_stats(p, &st);
	bgread_pool_free(p);
	r->bytes = st.done;
	if (st.why == BGREAD_DONE && st.all_taken) {
		r->verdict = CACHE_SCRUB_OK;
	} else if (st.why == BGREAD_EREAD && st.err == -EIO) {
		/* dm-verity answers a block that fails its hash with EIO (as
		 * does a disk that cannot read it): the slot is not what was
		 * verified when it was written. */
		r->verdict = CACHE_SCRUB_BAD;
		r->bad_off = first_bad(s->fd, st.err_off, st.err_len, s->size);
		err[0] = '\0';
		r->marked = mark(s, err, sizeof(err)) == 0;
		snprintf(r->why, sizeof(r->why), "read error at %" PRIu64 ": %s%s%s", r->bad_off,
			 strerror(EIO), r->marked ? (err[0] ? "; marked bad, but " : "") :
			 "; not marked bad: ", err);
	} else {
		r->verdict = CACHE_SCRUB_ERROR;
		snprintf(r->why, sizeof(r->why), "%s", st.msg[0] ? st.msg : "not read whole");
	}
	r->seconds = now_sec() - t0;
}
