// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run of a load (see load.h for the stages).
 *
 * Before anything is written, everything that can be checked is: the
 * manifest parses, the source opens, its format is known, the output
 * size is estimated and MemAvailable leaves the reserve (decoder memory
 * counted). Only then is the tmpfs mounted or the zram device sized. The
 * new file gets its name only after it is verified; on failure, what was
 * made is undone in reverse, by sink_undo() on the one return path that
 * signals and stalls also take.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/hex.h"
#include "lib/memroom.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "lib/units.h"
#include "dev/blkdev.h"
#include "load/loadint.h"
#include "codec/pipe.h"
#include "load/progress.h"
#include "format/squashfs.h"
#include "trust/policy.h"

#define DEFAULT_MIN_FREE (256 * MiB)

void load_opts_init(struct load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->decompress = "auto";
	o->min_free = DEFAULT_MIN_FREE;
	o->progress = PROGRESS_AUTO;
	o->stall_timeout = LOAD_STALL_TIMEOUT;
	o->retries = LOAD_RETRIES;
	o->connections = LOAD_CONNECTIONS;
}

/* --sha256 and --manifest, under the verification policy (--signed). An
 * http:// manifest is fetched (by default SOURCE.manifest beside an
 * http:// SOURCE); an http:// SOURCE needs chunk hashes or --sha256: its
 * bytes come through whatever is on the way. */
static int load_manifest(struct run *u)
{
	const struct load_opts *o = u->o;
	bool http = !o->source_is_fd && !o->udpcast && source_is_url(o->source);
	char murl[2304], *text = NULL;
	size_t text_len = 0;
	const char *manifest = o->manifest;

	if (http && !manifest && !o->sha256 && !o->no_verify) {
		snprintf(murl, sizeof(murl), "%s.manifest", o->source);
		manifest = murl;
	}
	if (source_is_url(manifest)) {
		char err[512];
		int rc = http_fetch(manifest, http_timeout_ms(o->stall_timeout), 64 * MiB, &text,
				    &text_len, err, sizeof(err));
		unsigned i;

		/* Beside a mirror of the image when not beside the image. */
		for (i = 0; rc < 0 && manifest == murl && i < o->n_mirrors; i++) {
			rb_warn("%s", err);
			snprintf(murl, sizeof(murl), "%s.manifest", o->mirrors[i]);
			rc = http_fetch(manifest, http_timeout_ms(o->stall_timeout), 64 * MiB,
					&text, &text_len, err, sizeof(err));
		}
		if (rc < 0)
			return load_fail(u, LOAD_MANIFEST, "%s", err);
	}
	const struct trust_policy p = {
		.sha256 = o->sha256, .manifest = manifest, .signed_only = o->signed_only,
		.keydir = o->keydir, .chunks = true, .text = text, .text_len = text_len,
	};
	const struct trust_want w = {
		.sha256 = u->want_sha, .man = &u->man, .have_man = &u->have_man,
		.signed_by = u->r->signed_by, .signed_by_len = sizeof(u->r->signed_by),
	};
	char err[512];
	enum run_err e = trust_policy_read(&p, &w, err, sizeof(err));

	free(text);
	if (e != RUN_OK)
		return load_fail(u, e, "%s", err);
	u->chunked = u->have_man && u->man.version >= 2;
	if (http && !o->sha256 && !o->no_verify && !(u->chunked && (u->man.chunk || !u->man.size)))
		return load_fail(u, LOAD_MANIFEST, "%s: an HTTP source needs a manifest with chunk "
				 "hashes or --sha256 (--no-verify copies it unchecked)", o->source);
	return 0;
}

static void codec_config(struct run *u, struct codec_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->threads = u->o->threads > 0 ? u->o->threads : online_cpus();
	cfg->memlimit = u->have_man && u->man.memlimit ? u->man.memlimit : CODEC_MEMLIMIT_DEFAULT;
}

static int check_memory(struct run *u)
{
	uint64_t avail, need, dec;
	struct codec_cfg cfg;
	char msg[200];
	int rc;

	if (u->have_man) {
		u->estimate = u->man.size;
		u->estimate_exact = true;
	}
	need = u->estimate > u->part_have ? u->estimate - u->part_have : 0;
	/* The decoder's own memory is RAM as much as the image is. */
	codec_config(u, &cfg);
	dec = codec_mem_need(u->codec, u->src.seekable ? u->src.fd : -1, u->src.size, &cfg);
	rc = rb_meminfo("MemAvailable", &avail);
	if (rc < 0)
		return load_fail(u, LOAD_NOMEM, "cannot read MemAvailable: %s", strerror(-rc));
	rb_debug("MemAvailable %" PRIu64 ", image %" PRIu64 " (%s), decoder %" PRIu64
		 ", reserve %" PRIu64, avail, need, u->estimate_exact ? "exact" :
		 need ? "estimate" : "unknown", dec, u->o->min_free);
	if (!mem_room(avail, need, dec, u->o->min_free, msg, sizeof(msg)))
		return load_fail(u, LOAD_NOMEM, "%s", msg);
	return 0;
}

/* A raw copy between regular files, hashing nothing: the kernel copies
 * page cache to page cache (what cp does). Only when both are on one
 * file system (Linux 5.19+ refuses others with EXDEV, and the pipeline
 * runs instead), so the source is local: steps of 8 MiB, the guard's
 * cancellation checked between them. Returns 1 when copy_file_range
 * does not apply, 0 when done, or -errno. */
static int copy_range(struct run *u, struct pipe *p)
{
	const uint64_t step = 8 * MiB;
	uint64_t done = 0, next_check = 0, avail;
	int rc;

	for (;;) {
		ssize_t n;

		if (pipe_error(p))
			return pipe_error(p);
		if (p->min_free && done >= next_check) {
			rc = rb_meminfo("MemAvailable", &avail);
			if (rc < 0 || avail < p->min_free) {
				pipe_fail(p, -ENOMEM, PS_MEMORY, rc < 0 ? "cannot read MemAvailable" :
					  "MemAvailable fell below the reserve");
				return -ENOMEM;
			}
			next_check = done + 64 * MiB;
		}
		n = copy_file_range(u->src.fd, NULL, u->snk.fd, NULL, step, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
					   errno == EOPNOTSUPP || errno == EBADF))
			return 1;
		if (n < 0) {
			int e = errno;

			pipe_fail(p, -e, PS_WRITE, NULL);
			return -e;
		}
		if (n == 0)
			return 0;
		done += (uint64_t)n;
		pthread_mutex_lock(&p->lock);
		p->st.bytes_in = p->st.bytes_out = done;
		pthread_mutex_unlock(&p->lock);
	}
}

static void guard_cancel_pipe(void *arg, enum guard_why why)
{
	pipe_cancel(arg, why == GUARD_STALL);
}

/* The pipeline's failure as the run's. */
static int pipe_outcome(struct run *u, struct pipe *p, int rc)
{
	const char *src = u->o->source, *dst = u->r->dest_path[0] ? u->r->dest_path : "output";
	const char *msg = p->error_msg[0] ? p->error_msg : strerror(-rc);

	if (load_guard_outcome(u))
		return load_exit_code(u->r->err);
	switch (p->error_where) {
	case PS_READ:
		return load_fail(u, LOAD_SOURCE, "%s: read error: %s", src, msg);
	case PS_WRITE:
		return load_fail(u, rc == -EFBIG && p->error_msg[0] ? LOAD_SIZE : LOAD_DEST,
				 "%s: write error: %s", dst, msg);
	case PS_MEMORY:
		return load_fail(u, LOAD_NOMEM, "memory ran short while loading: %s", msg);
	case PS_STALL:
		return load_fail(u, LOAD_STALL, "%s: the source stalled", src);
	case PS_CANCEL:
		return load_fail(u, LOAD_SIGNAL, "interrupted");
	case PS_START:
		return load_fail(u, LOAD_NOMEM, "cannot start the pipeline: %s", msg);
	case PS_VERIFY:
		return load_fail(u, LOAD_HASH, "%s: %s", src, msg);
	case PS_DECODE:
	case PS_NONE:
	default:
		/* A stream that needs more decoder memory than allowed is
		 * the image's fault (or the manifest's), not the client's:
		 * like corrupt input, exit 1. */
		return load_fail(u, LOAD_FORMAT, "%s: %s", src, msg);
	}
}

static int run_pipe(struct run *u, bool hash, bool cap_out, uint64_t max_out,
		    const struct pipe_chunks *ck)
{
	const struct load_opts *o = u->o;
	struct codec_cfg cfg;
	struct progress pg;
	struct pipe *p;
	struct chunk *first;
	int rc;

	codec_config(u, &cfg);
	p = malloc(sizeof(*p));
	if (!p)
		return load_fail(u, LOAD_NOMEM, "cannot allocate buffers");
	rc = pipe_init(p);
	if (rc < 0) {
		pipe_destroy(p);
		free(p);
		return load_fail(u, LOAD_NOMEM, "cannot allocate buffers: %s", strerror(-rc));
	}
	p->src_fd = u->src.fd;
	p->dst_fd = u->snk.fd;
	p->hash = hash;
	p->dst_is_blk = u->snk.blk;
	p->max_in = u->src.size && S_ISBLK(u->src.st.st_mode) ? u->src.size : 0;
	p->cap_out = cap_out;
	p->max_out = max_out;
	p->min_free = o->dest ? o->min_free : 0;
	p->threads = cfg.threads;
	if (ck) {
		p->ck = *ck;
		p->ck.workers = cfg.threads;
		/* Read again from the source: a file or device, raw. */
		if (p->ck.retries > 0 && u->src.seekable && u->codec == &codec_none &&
		    u->src.size)
			p->max_in = u->src.size;
		else
			p->ck.retries = 0;
	}
	guard_target(u->guard, pipe_progress, guard_cancel_pipe, p);
	progress_start(&pg, p, o->progress, u->estimate, u->src.size);
	if (u->codec == &codec_none && !hash && !ck && S_ISREG(u->src.st.st_mode) &&
	    !u->snk.blk && !cap_out) {
		rc = copy_range(u, p);
		if (rc <= 0) {
			rb_debug("codec none, copy_file_range");
			goto out;
		}
	}
	rc = pipe_start(p);
	if (rc < 0) {
		pipe_fail(p, rc, PS_START, NULL);
		goto out;
	}
	first = pipe_get_input(p);
	if (first) {
		if (!u->codec)
			u->codec = codec_detect(first->data, first->len);
		rb_debug("codec %s, %d threads%s, %d hashing", u->codec->name, cfg.threads,
			 p->ck.size ? p->ck.retries ? ", chunks read again when they fail" : "" : "",
			 p->ck.size ? p->ck.workers : p->hash);
		codec_drive(u->codec, p, first, &cfg);
	}
out:
	rc = pipe_finish(p);
	guard_target(u->guard, NULL, NULL, NULL);
	progress_stop(&pg);
	u->r->bytes_in = p->st.bytes_in;
	u->r->bytes_out = p->st.bytes_out;
	u->r->codec = u->codec ? u->codec->name : "none";
	u->r->reader_stuck = p->reader_abandoned;
	u->r->chunks = p->st.chunks;
	u->r->chunks_retried = p->st.chunks_retried;
	if (rc < 0)
		rc = pipe_outcome(u, p, rc);
	else if (hash) {
		uint8_t d[32];

		pipe_digest(p, d);
		hex_encode(d, 32, u->r->sha256);
	}
	/* An abandoned reader may still touch the pipe: leaked, not freed. */
	if (!p->reader_abandoned) {
		pipe_destroy(p);
		free(p);
	}
	return rc;
}

/* Before the new file gets its name: the size, the hash and the file
 * system are what was asked for. */
static int verify(struct run *u)
{
	const struct load_opts *o = u->o;
	struct load_result *r = u->r;
	uint8_t sb[SQUASHFS_SB_MIN];
	uint64_t used;
	ssize_t n;
	int rc;

	/* Fetched by ranges (fetch.c): each chunk checked as it came. */
	if (!u->ms && (rc = load_source_end(u)) != 0)
		return rc;
	/* Not one byte came: a download that failed before it began
	 * (wget -qO- URL | ramboot load - img) looks just like this. An
	 * empty image still has a stream (a zstd frame of nothing). After
	 * the source's own verdict (a receiver's exit status) above. */
	if (!u->ms && r->bytes_in == 0)
		return load_fail(u, LOAD_SOURCE, "%s: the source is empty", o->source);
	if (u->have_man && r->bytes_out != u->man.size)
		return load_fail(u, LOAD_SIZE, "%s: image is %" PRIu64 " bytes, the manifest says %"
				 PRIu64, o->source, r->bytes_out, u->man.size);
	if (r->sha256[0]) {
		if (strcmp(r->sha256, u->want_sha))
			return load_fail(u, LOAD_HASH, "%s: SHA-256 mismatch: got %s, expected %s",
					 o->source, r->sha256, u->want_sha);
		r->verified = true;
	}
	/* The chunks cover every byte: each matched, the size is exact. */
	if (u->chunked) {
		if (r->chunks != u->man.nchunks)
			return load_fail(u, LOAD_HASH, "%s: %" PRIu32 " of %" PRIu32 " chunks verified",
					 o->source, r->chunks, u->man.nchunks);
		r->verified = true;
	}
	if (u->have_man && r->verified) {
		snprintf(r->manifest_sha256, sizeof(r->manifest_sha256), "%s", u->man.sha256);
		snprintf(r->manifest_verity_root, sizeof(r->manifest_verity_root), "%s",
			 u->man.verity_root);
	}
	/* Whatever the source and the codec: a squashfs shorter than its
	 * superblock says is a truncated image. */
	n = pread_full(u->snk.fd, sb, sizeof(sb), 0);
	if (n < 0)
		return load_fail(u, LOAD_DEST, "%s: cannot read back: %s", r->dest_path,
				 strerror((int)-n));
	if (squashfs_bytes_used(sb, (size_t)n, &used) == 0 && used > r->bytes_out)
		return load_fail(u, LOAD_FSTYPE, "%s: truncated squashfs: %" PRIu64 " of %" PRIu64
				 " bytes", o->source, r->bytes_out, used);
	(void)blkid_fstype_fd(u->snk.fd, r->fstype, sizeof(r->fstype));
	if (o->expect_fs && strcmp(o->expect_fs, r->fstype))
		return load_fail(u, LOAD_FSTYPE, "%s: expected a %s image, found %s", o->source,
				 o->expect_fs, r->fstype[0] ? r->fstype : "no known filesystem");
	return 0;
}

/* The first reads (the manifest, opening and probing the source) run in
 * a thread of their own: a server that is gone can hold them in the
 * kernel, and nothing is made yet, so the run can simply stop waiting
 * when the guard fires. The thread works on a copy of the run; one that
 * never returns keeps its copy (leaked, never freed under it). */
struct setup {
	struct run u;
	struct load_result r;
	int rc;
	_Atomic int done;
};

static void *setup_main(void *arg)
{
	struct setup *st = arg;
	struct run *u = &st->u;
	int rc;

	if ((rc = load_manifest(u)) == 0 && (rc = fetch_setup(u)) == 0 && !u->ms &&
	    (rc = load_source_open(u)) == 0 && !u->o->prefetch)
		rc = load_source_probe(u);
	st->rc = rc;
	atomic_store(&st->done, 1);
	return NULL;
}

static uint64_t setup_progress(void *arg)
{
	(void)arg;
	return 0;        /* no data yet: the stall clock runs */
}

static int setup_guarded(struct run *u)
{
	struct setup *st = calloc(1, sizeof(*st));
	pthread_t t;
	int rc;

	if (!st)
		return load_fail(u, LOAD_NOMEM, "out of memory");
	st->u = *u;
	st->u.r = &st->r;
	if (pthread_create(&t, NULL, setup_main, st) != 0) {
		setup_main(st);
	} else {
		guard_target(u->guard, setup_progress, NULL, NULL);
		for (;;) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_timedjoin_np(t, NULL, &ts) == 0)
				break;
			if (guard_fired(u->guard, NULL) != GUARD_NONE) {
				pthread_detach(t);
				guard_target(u->guard, NULL, NULL, NULL);
				u->r->reader_stuck = !atomic_load(&st->done);
				/* A thread that is done opened what run_end closes
				 * (a receiver's process too). */
				if (!u->r->reader_stuck)
					u->src = st->u.src;
				return load_guard_outcome(u);   /* st stays with the thread */
			}
		}
		guard_target(u->guard, NULL, NULL, NULL);
	}
	u->src = st->u.src;
	u->codec = st->u.codec;
	u->estimate = st->u.estimate;
	u->estimate_exact = st->u.estimate_exact;
	u->man = st->u.man;
	u->have_man = st->u.have_man;
	u->chunked = st->u.chunked;
	u->ms = st->u.ms;
	u->next_mirror = st->u.next_mirror;
	u->part_have = st->u.part_have;
	memcpy(u->want_sha, st->u.want_sha, sizeof(u->want_sha));
	memcpy(u->r->signed_by, st->r.signed_by, sizeof(u->r->signed_by));
	rc = st->rc;
	if (rc) {
		u->r->err = st->r.err;
		memcpy(u->r->error, st->r.error, sizeof(u->r->error));
	}
	free(st);
	return rc;
}

/* o->announce (`ramboot boot`): the line that says a copy begins, for the
 * console and the kernel log; the copy's end is the caller's to tell. */
static void announce(const struct run *u)
{
	const struct source *s = &u->src;
	const struct codec *c = u->codec;
	/* A ranged copy over HTTP opened no stream: the manifest's size. */
	uint64_t size = s->size ? s->size : u->ms ? u->man.size : 0;
	char a[32], b[32], ram[48] = "";

	if (!u->o->announce)
		return;
	if (c && c != &codec_none && u->estimate)
		snprintf(ram, sizeof(ram), ", %s%s in RAM", u->estimate_exact ? "" : "about ",
			 fmt_size(u->estimate, b, sizeof(b)));
	rb_note("copying %s (%s, %s%s) into RAM (%s)",
		s->kind == SRC_UDPCAST ? "the udpcast stream" : u->o->source,
		size ? fmt_size(size, a, sizeof(a)) : "size unknown",
		!c ? "format not yet known" : c == &codec_none ? "uncompressed" : c->name, ram,
		u->o->announce);
}

/* The stages in order; the first failure ends it. */
static int run_stages(struct run *u)
{
	const struct load_opts *o = u->o;
	bool cap_out = false;
	uint64_t max_out = 0;
	int rc;

	if (strcmp(o->decompress, "auto") && !codec_by_name(o->decompress))
		return load_fail(u, LOAD_USAGE, "unknown compression '%s'", o->decompress);
	if ((rc = setup_guarded(u)) != 0)
		return rc;
	if (o->prefetch)
		return prefetch_run(u);
	if ((rc = check_memory(u)) != 0 || (rc = load_guard_outcome(u)) != 0)
		return rc;
	announce(u);
	if (o->tmpfs && (rc = sink_mount_tmpfs(u)) != 0)
		return rc;
	/* A file is made by fetch.c (DEST.part), a block device here. */
	if ((!u->ms || !fetch_dest_is_file(u)) && (rc = sink_open(u)) != 0)
		return rc;
	if ((rc = load_guard_outcome(u)) != 0)
		return rc;
	if (u->ms) {
		if ((rc = fetch_run(u)) != 0 || (rc = load_guard_outcome(u)) != 0 ||
		    (rc = verify(u)) != 0)
			return rc;
		return fetch_commit(u);
	}
	/* A manifest bounds the output exactly (size 0 included); a block
	 * device by its size. */
	if (u->have_man) {
		cap_out = true;
		max_out = u->man.size;
	}
	if (u->snk.blk && (!cap_out || u->snk.limit < max_out)) {
		cap_out = true;
		max_out = u->snk.limit;
	}
again:
	if (u->chunked) {
		struct pipe_chunks ck;

		memset(&ck, 0, sizeof(ck));
		ck.size = u->man.chunk_size;
		ck.want = (const uint8_t (*)[32])u->man.chunk;
		ck.count = u->man.nchunks;
		ck.total = u->man.size;
		ck.retries = o->retries;
		/* The whole-image SHA-256 only when asked for with --sha256:
		 * the chunks say as much, on every core. */
		rc = run_pipe(u, o->sha256 != NULL, cap_out, max_out, &ck);
	} else {
		rc = run_pipe(u, u->want_sha[0] != '\0', cap_out, max_out, NULL);
	}
	if (rc == 0 && (rc = load_guard_outcome(u)) == 0)
		rc = verify(u);
	if (rc != 0 && load_source_again(u))
		goto again;
	if (rc != 0)
		return rc;
	return sink_commit(u);
}

/* A run begins with nothing opened, and the guard first: from then on a
 * signal is a cancellation. */
static void run_begin(struct run *u, const struct load_opts *o, struct load_result *r,
		      struct guard *guard)
{
	memset(r, 0, sizeof(*r));
	memset(u, 0, sizeof(*u));
	u->o = o;
	u->r = r;
	u->src.fd = u->snk.fd = -1;
	u->snk.zram_id = -1;
	if (guard_start(guard, o->stall_timeout, o->heartbeat_ms) == 0)
		u->guard = guard;
}

/* It ends with what it read closed and its time taken. */
static void run_end(struct run *u, double t0)
{
	u->r->seconds = now_sec() - t0;
	if (!u->r->codec)
		u->r->codec = u->codec ? u->codec->name : "none";
	/* Read only: a failed close() loses nothing. */
	(void)source_close(&u->src);
	manifest_free(&u->man);
	if (u->guard)
		guard_stop(u->guard);
}

int load_run(const struct load_opts *o, struct load_result *r)
{
	struct guard guard;
	struct run u;
	double t0 = now_sec();
	int rc;

	run_begin(&u, o, r, &guard);
	rc = run_stages(&u);
	if (rc == 0)
		rc = load_guard_outcome(&u);
	if (rc != 0) {
		fetch_undo(&u);
		sink_undo(&u);
	}
	fetch_close(&u);
	run_end(&u, t0);
	return rc;
}

int load_hash_only(const struct load_opts *o, struct load_result *r, uint64_t chunk_size,
		   uint8_t (*chunk)[32], uint32_t room)
{
	struct pipe_chunks ck;
	struct guard guard;
	struct run u;
	double t0 = now_sec();
	int rc = 0;

	run_begin(&u, o, r, &guard);
	u.snk.fd = -1;            /* the pipeline writes nothing: hashes only */
	memset(&ck, 0, sizeof(ck));
	ck.size = chunk_size;
	ck.got = chunk;
	ck.count = room;
	if (rc == 0 && (rc = setup_guarded(&u)) == 0 &&
	    (rc = run_pipe(&u, true, false, 0, chunk_size ? &ck : NULL)) == 0)
		rc = load_guard_outcome(&u) ? load_exit_code(r->err) : load_source_end(&u);
	if (u.snk.fd >= 0)
		(void)close(u.snk.fd);
	fetch_close(&u);
	run_end(&u, t0);
	return rc;
}
