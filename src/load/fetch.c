// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An uncompressed http:// image with chunk hashes, copied by ranges: the
 * manifest's chunks are fetched by --connections workers from the source
 * and its mirrors (source/mirror.h), each verified before it is written
 * at its offset. Into a file, the copy goes to DEST.part, and a byte per
 * chunk in DEST.part-state says which chunks are there and verified: a
 * run that fails part-way keeps both, and the next run with the same
 * DEST hashes those chunks again and fetches only the others. The file
 * gets its name DEST once every chunk and the whole image's SHA-256
 * matched. A block device is written in place (no resume).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/msg.h"
#include "lib/sha256.h"
#include "load/loadint.h"

#define FETCH_CHUNK_MAX (64u * 1024 * 1024)  /* larger chunks: one stream */
#define FETCH_WORKERS_MAX 64
#define STATE_HEAD 160                          /* bytes before the chunk bytes */

struct fetch {
	struct run *u;
	int fd;
	int state_fd;            /* -1: none (a block device) */
	uint8_t *have;           /* per chunk: 1 when DEST.part-state says so */
	_Atomic uint32_t next;
	_Atomic uint64_t progress;
	_Atomic int stop;
	pthread_mutex_t lock;
	uint32_t verified, resumed, retried;
	uint64_t fetched;
	bool failed;
};

/* DEST (inside --tmpfs when relative) with suffix. */
static int part_path(const struct run *u, const char *suffix, char *buf, size_t len)
{
	const struct load_opts *o = u->o;
	int n = o->tmpfs && o->dest[0] != '/' ? snprintf(buf, len, "%s/%s%s", o->tmpfs, o->dest,
							     suffix) :
		snprintf(buf, len, "%s%s", o->dest, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int fetch_setup(struct run *u)
{
	const struct load_opts *o = u->o;
	const char *urls[MIRROR_MAX];
	char err[512], path[4200];
	uint8_t head[4096];
	unsigned n = 0, i;
	struct stat st;
	ssize_t got;
	int rc;

	if (o->source_is_fd || o->udpcast || !source_is_url(o->source) || o->prefetch ||
	    !o->dest || !u->chunked || !u->man.nchunks || !u->man.chunk ||
	    u->man.chunk_size > FETCH_CHUNK_MAX ||
	    (strcmp(o->decompress, "auto") && strcmp(o->decompress, "none")))
		return 0;
	urls[n++] = o->source;
	for (i = 0; i < o->n_mirrors && n < MIRROR_MAX; i++)
		urls[n++] = o->mirrors[i];
	u->ms = malloc(sizeof(*u->ms));
	if (!u->ms)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	rc = mirror_set_open(u->ms, urls, n, http_timeout_ms(o->stall_timeout), err, sizeof(err));
	if (rc < 0) {
		free(u->ms);
		u->ms = NULL;
		return load_fail(u, source_verdict(rc), "%s", err);
	}
	/* Another size than the image's: compressed, read as a stream. */
	if (u->ms->size != u->man.size)
		goto stream;
	got = mirror_fetch(u->ms, head, u->man.size < sizeof(head) ? u->man.size : sizeof(head),
			   0, NULL, NULL, err, sizeof(err));
	/* No mirror serves ranges (each answered 200 with the whole file):
	 * one stream, as from a server of old. */
	if (got == -ERANGE)
		goto stream;
	if (got < 0) {
		fetch_close(u);
		return load_fail(u, source_verdict((int)got), "%s", err);
	}
	if (!strcmp(o->decompress, "auto") && codec_detect(head, (size_t)got) != &codec_none)
		goto stream;
	mirror_stats_clear(u->ms);
	u->codec = &codec_none;
	u->estimate = u->man.size;
	u->estimate_exact = true;
	/* What an earlier run left holds RAM already. */
	if (part_path(u, ".part", path, sizeof(path)) == 0 && lstat(path, &st) == 0 &&
	    S_ISREG(st.st_mode))
		u->part_have = (uint64_t)st.st_blocks * 512;
	return 0;
stream:
	fetch_close(u);
	return 0;
}

bool fetch_dest_is_file(struct run *u)
{
	char path[4200];
	struct stat st;

	return part_path(u, "", path, sizeof(path)) < 0 || stat(path, &st) < 0 ||
	       !S_ISBLK(st.st_mode);
}

bool fetch_resumes(struct run *u)
{
	char path[4200];
	struct stat st;

	return u->ms && part_path(u, ".part-state", path, sizeof(path)) == 0 &&
	       lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void fetch_close(struct run *u)
{
	if (u->ms) {
		mirror_set_close(u->ms);
		free(u->ms);
		u->ms = NULL;
	}
}

/* The state of an earlier run, when it is of this image. */
static bool state_matches(int fd, const char *want)
{
	char h[STATE_HEAD];

	return pread_full(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && !memcmp(h, want, sizeof(h));
}

/* DEST.part or DEST.part-state, opened as what an earlier run of ours
 * left or made new: never through a symbolic link, never a FIFO (whose
 * open or read could wait for a writer) or anything but a regular file,
 * never a file with another name (a hard link to a file of someone
 * else's would be truncated and written). Nothing is truncated before
 * these checks. The descriptor, or -1 with the run's error set. */
static int open_own(struct run *u, const char *path, mode_t mode)
{
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	const char *why = NULL;
	struct stat st;

	if (fd < 0)
		why = errno == ELOOP ? "is a symbolic link; not written through it" :
		      errno == EISDIR ? "exists and is not a regular file; not replaced" :
		      strerror(errno);
	else if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "exists and is not a regular file; not replaced";
	else if (st.st_nlink != 1)
		why = "has other links; not written through it";
	if (!why)
		return fd;
	if (fd >= 0)
		(void)close(fd);
	(void)load_fail(u, LOAD_DEST, "%s: %s", path, why);
	return -1;
}

/* DEST.part and DEST.part-state: those of an earlier run of this image,
 * or new ones. */
static int open_part(struct run *u, struct fetch *f)
{
	const struct load_opts *o = u->o;
	const struct manifest *m = &u->man;
	char part[4200], state[4200], h[STATE_HEAD];
	struct stat st;
	bool resume, had_state;
	int rc;

	if (part_path(u, "", u->r->dest_path, sizeof(u->r->dest_path)) < 0 ||
	    part_path(u, ".part", part, sizeof(part)) < 0 ||
	    part_path(u, ".part-state", state, sizeof(state)) < 0)
		return load_fail(u, LOAD_USAGE, "DEST: path too long");
	if (lstat(u->r->dest_path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return load_fail(u, LOAD_DEST, "%s: is a symbolic link; not written through "
					 "it", u->r->dest_path);
		if (!S_ISREG(st.st_mode))
			return load_fail(u, LOAD_DEST, "%s: exists and is not a regular file; not "
					 "replaced", u->r->dest_path);
		if (!o->force)
			return load_fail(u, LOAD_DEST, "%s: exists already (use --force to "
					 "overwrite)", u->r->dest_path);
	}
	memset(h, '\n', sizeof(h));
	snprintf(h, sizeof(h), "ramboot-part 1 %" PRIu64 " %" PRIu64 " %" PRIu32 " %s\n",
		 m->size, m->chunk_size, m->nchunks, m->sha256);
	h[strlen(h)] = '\n';
	f->have = calloc(m->nchunks, 1);
	if (!f->have)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	had_state = lstat(state, &st) == 0;
	if ((f->state_fd = open_own(u, state, 0600)) < 0)
		return load_exit_code(u->r->err);
	if ((f->fd = open_own(u, part, 0644)) < 0) {
		if (!had_state)
			(void)unlink(state);
		return load_exit_code(u->r->err);
	}
	/* From here on, a failure removes both or keeps both (fetch_undo). */
	u->snk.fd = f->fd;
	u->part_made = true;
	resume = state_matches(f->state_fd, h) &&
		 pread_full(f->state_fd, f->have, m->nchunks, STATE_HEAD) == (ssize_t)m->nchunks;
	if (!resume) {
		memset(f->have, 0, m->nchunks);
		if (ftruncate(f->fd, 0) < 0)
			return load_fail(u, LOAD_DEST, "%s: %s", part, strerror(errno));
		rc = ftruncate(f->state_fd, 0) < 0 ? -errno : 0;
		if (rc == 0 && (rc = pwrite_full(f->state_fd, h, sizeof(h), 0)) == 0)
			rc = pwrite_full(f->state_fd, f->have, m->nchunks, STATE_HEAD);
		if (rc < 0)
			return load_fail(u, LOAD_DEST, "%s: %s", state, strerror(-rc));
	}
	if (ftruncate(f->fd, (off_t)m->size) < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", part, strerror(errno));
	u->keep_part = true;
	return 0;
}

/* The first failure is the run's; every worker stops. */
static void fail(struct fetch *f, enum run_err e, const char *why)
{
	pthread_mutex_lock(&f->lock);
	if (!f->failed) {
		f->failed = true;
		run_fail(RUN_ERROR(f->u->r), e, "%s", why);
	}
	pthread_mutex_unlock(&f->lock);
	atomic_store(&f->stop, 1);
}

/* A chunk DEST.part-state says is there: hashed again before it counts. */
static bool have_chunk(struct fetch *f, uint8_t *buf, size_t len, uint64_t off, uint32_t i)
{
	uint8_t md[32];

	if (!f->have || !f->have[i] || pread_full(f->fd, buf, len, (off_t)off) != (ssize_t)len)
		return false;
	sha256(buf, len, md);
	return !memcmp(md, f->u->man.chunk[i], 32);
}

static void *worker(void *arg)
{
	struct fetch *f = arg;
	struct run *u = f->u;
	const struct manifest *m = &u->man;
	uint8_t *buf = malloc(m->chunk_size);
	static const uint8_t one = 1;
	char err[512];

	if (!buf) {
		fail(f, LOAD_NOMEM, "cannot allocate buffers");
		return NULL;
	}
	for (;;) {
		uint32_t i = atomic_fetch_add(&f->next, 1);
		uint64_t off = (uint64_t)i * m->chunk_size;
		size_t len;
		ssize_t n = -EIO;
		int attempt, rc;

		if (i >= m->nchunks || atomic_load(&f->stop))
			break;
		len = (size_t)(m->size - off < m->chunk_size ? m->size - off : m->chunk_size);
		if (have_chunk(f, buf, len, off, i)) {
			pthread_mutex_lock(&f->lock);
			f->verified++;
			f->resumed++;
			pthread_mutex_unlock(&f->lock);
			atomic_fetch_add(&f->progress, len);
			continue;
		}
		/* Every mirror in turn; then again, after a pause, while
		 * mirrors are left. */
		for (attempt = 0; !atomic_load(&f->stop); attempt++) {
			n = mirror_fetch(u->ms, buf, len, off, m->chunk[i], NULL, err, sizeof(err));
			if (n >= 0 || attempt >= u->o->retries || !mirror_live(u->ms))
				break;
			if (attempt == 0) {
				pthread_mutex_lock(&f->lock);
				f->retried++;
				pthread_mutex_unlock(&f->lock);
			}
			nap_ms(250L << (attempt < 3 ? attempt : 3));
		}
		if (atomic_load(&f->stop))
			break;
		if (n < 0) {
			/* The last mirror's failure names it. */
			fail(f, n == -EBADMSG ? LOAD_HASH : source_verdict((int)n), err);
			break;
		}
		if ((rc = pwrite_full(f->fd, buf, len, (off_t)off)) < 0) {
			snprintf(err, sizeof(err), "%.300s: write error: %s", u->r->dest_path,
				 strerror(-rc));
			fail(f, LOAD_DEST, err);
			break;
		}
		/* The byte that says so, after the chunk: a run again hashes
		 * it anyway. */
		if (f->state_fd >= 0 &&
		    (rc = pwrite_full(f->state_fd, &one, 1, (off_t)(STATE_HEAD + i))) < 0) {
			snprintf(err, sizeof(err), "%.300s: write error: %s", u->r->dest_path,
				 strerror(-rc));
			fail(f, LOAD_DEST, err);
			break;
		}
		pthread_mutex_lock(&f->lock);
		f->verified++;
		f->fetched += len;
		pthread_mutex_unlock(&f->lock);
		atomic_fetch_add(&f->progress, len);
	}
	free(buf);
	return NULL;
}

static uint64_t fetch_progress(void *arg)
{
	return atomic_load(&((struct fetch *)arg)->progress);
}

static void fetch_cancel(void *arg, enum guard_why why)
{
	(void)why;
	atomic_store(&((struct fetch *)arg)->stop, 1);
}

/* The whole image's SHA-256, read back in order. */
static int hash_back(struct run *u, int fd)
{
	uint8_t *buf = malloc(MiB), md[32];
	struct sha256 c;
	uint64_t off;

	if (!buf)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	sha256_init(&c);
	for (off = 0; off < u->man.size;) {
		size_t len = u->man.size - off < MiB ? (size_t)(u->man.size - off) : MiB;
		ssize_t n = pread_full(fd, buf, len, (off_t)off);

		if (n != (ssize_t)len) {
			free(buf);
			return load_fail(u, LOAD_DEST, "%s: cannot read back: %s", u->r->dest_path,
					 strerror(n < 0 ? (int)-n : EIO));
		}
		sha256_update(&c, buf, len);
		off += len;
	}
	free(buf);
	sha256_final(&c, md);
	hex_encode(md, 32, u->r->sha256);
	return 0;
}

int fetch_run(struct run *u)
{
	struct load_result *r = u->r;
	pthread_t t[FETCH_WORKERS_MAX];
	int workers = u->o->connections > 0 ? u->o->connections : LOAD_CONNECTIONS, k, started;
	struct fetch f;
	unsigned i;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	f.u = u;
	f.fd = f.state_fd = -1;
	if (workers > FETCH_WORKERS_MAX)
		workers = FETCH_WORKERS_MAX;
	if ((uint32_t)workers > u->man.nchunks)
		workers = (int)u->man.nchunks;
	if (pthread_mutex_init(&f.lock, NULL) != 0)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	if (u->snk.blk) {
		f.fd = u->snk.fd;
	} else if ((rc = open_part(u, &f)) != 0) {
		goto out;
	}
	rb_debug("%u chunks of %" PRIu64 " bytes by ranges, %d connections, %u URLs",
		 u->man.nchunks, u->man.chunk_size, workers, u->ms->n);
	guard_target(u->guard, fetch_progress, fetch_cancel, &f);
	for (started = 0; started < workers; started++)
		if (pthread_create(&t[started], NULL, worker, &f) != 0)
			break;
	if (!started)
		worker(&f);
	for (k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	guard_target(u->guard, NULL, NULL, NULL);

	r->codec = "none";
	r->bytes_in = f.fetched;
	r->bytes_out = f.fetched;
	r->chunks = f.verified;
	r->chunks_resumed = f.resumed;
	r->chunks_retried = f.retried;
	r->n_mirrors = u->ms->n;
	for (i = 0; i < u->ms->n && i < ARRAY_SIZE(r->mirror); i++) {
		struct mirror_stat st;

		mirror_stats(u->ms, i, &st);
		snprintf(r->mirror[i].url, sizeof(r->mirror[i].url), "%s", mirror_url(u->ms, i));
		r->mirror[i].bytes = st.bytes;
		r->mirror[i].chunks = st.chunks;
		r->mirror[i].failures = st.failures;
	}
	if ((rc = load_guard_outcome(u)) != 0)
		goto out;
	if (f.failed || f.verified != u->man.nchunks) {
		rc = f.failed ? load_exit_code(r->err) :
		     load_fail(u, LOAD_SOURCE, "%s: %" PRIu32 " of %" PRIu32 " chunks fetched",
			       u->o->source, f.verified, u->man.nchunks);
		goto out;
	}
	r->bytes_out = u->man.size;
	/* Every chunk matched; the whole image's hash as well. */
	if ((rc = hash_back(u, f.fd)) != 0)
		u->keep_part = false;
out:
	free(f.have);
	if (f.state_fd >= 0)
		(void)close(f.state_fd);
	pthread_mutex_destroy(&f.lock);
	return rc;
}

/* Every chunk is there and verified: DEST.part becomes DEST. */
int fetch_commit(struct run *u)
{
	char part[4200], state[4200];
	const char *dest = u->r->dest_path;
	int rc;

	if (u->snk.blk)
		return sink_commit(u);
	(void)part_path(u, ".part", part, sizeof(part));
	(void)part_path(u, ".part-state", state, sizeof(state));
	rc = close_checked(u->snk.fd);
	u->snk.fd = -1;
	if (rc < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", part, strerror(-rc));
	if (u->o->force ? rename(part, dest) < 0 : link(part, dest) < 0 || unlink(part) < 0)
		return load_fail(u, LOAD_DEST, "%s: %s", dest, strerror(errno));
	(void)unlink(state);
	u->keep_part = false;
	return 0;
}

/* After a failure: DEST.part kept for a run again when chunks are
 * missing (the source failed), removed otherwise. */
void fetch_undo(struct run *u)
{
	char part[4200], state[4200];
	enum run_err e = u->r->err;

	if (u->snk.blk || !u->ms || !u->part_made)
		return;
	if (u->snk.fd >= 0)
		(void)close(u->snk.fd);
	u->snk.fd = -1;
	/* A changed image on the server: the next run is of another one. */
	if (u->keep_part && (e == LOAD_SOURCE || e == LOAD_STALL || e == LOAD_SIGNAL)) {
		/* The tmpfs that holds it stays mounted. */
		u->snk.tmpfs_mounted = false;
		u->snk.tmpfs_mkdir = false;
		u->r->part_kept = true;
		return;
	}
	if (part_path(u, ".part", part, sizeof(part)) == 0)
		(void)unlink(part);
	if (part_path(u, ".part-state", state, sizeof(state)) == 0)
		(void)unlink(state);
}
