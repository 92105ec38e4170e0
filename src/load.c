// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot load: stream an image into RAM, and ramboot manifest.
 *
 * Before anything is written, everything that can be checked is: the
 * source opens, its format is known, the output size is estimated and
 * MemAvailable leaves the reserve. Only then is the tmpfs mounted or the
 * zram device sized. On failure, what was made is undone in reverse.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ramboot.h"
#include "codec.h"
#include "load.h"
#include "manifest.h"
#include "pipe.h"
#include "zram.h"

#define DEFAULT_MIN_FREE (256 * MiB)
#define SQUASHFS_MAGIC 0x73717368u

void load_opts_init(struct load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->decompress = "auto";
	o->min_free = DEFAULT_MIN_FREE;
	o->progress = PROGRESS_AUTO;
}

/* State of one run: what was opened or made, to undo on failure. */
struct run {
	const struct load_opts *o;
	struct load_result *r;
	int src_fd, dst_fd;
	struct stat src_st;
	bool src_seekable;
	uint64_t src_size;       /* bytes to read, 0 if unknown */
	const struct codec *codec;
	uint64_t estimate;       /* output bytes, 0 if unknown */
	bool estimate_exact;
	struct manifest man;
	bool have_man;
	char want_sha[65];
	bool dst_created, dst_blk, tmpfs_mounted, tmpfs_mkdir;
	int zram_id;             /* >= 0: we sized this zram device */
	uint64_t dst_limit;      /* block device size */
};

static int fail(struct run *u, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct run *u, int code, const char *fmt, ...)
{
	va_list ap;

	if (!u->r->error[0]) {
		va_start(ap, fmt);
		vsnprintf(u->r->error, sizeof(u->r->error), fmt, ap);
		va_end(ap);
	}
	return code;
}

static int blk_size(int fd, uint64_t *size)
{
	return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
}

static int open_source(struct run *u)
{
	const char *src = u->o->source;

	if (!strcmp(src, "-")) {
		u->src_fd = STDIN_FILENO;
	} else {
		u->src_fd = open(src, O_RDONLY | O_CLOEXEC);
		if (u->src_fd < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", src, strerror(errno));
	}
	if (fstat(u->src_fd, &u->src_st) < 0)
		return fail(u, RB_EXIT_FAIL, "%s: %s", src, strerror(errno));
	if (S_ISREG(u->src_st.st_mode)) {
		u->src_seekable = true;
		u->src_size = (uint64_t)u->src_st.st_size;
	} else if (S_ISBLK(u->src_st.st_mode)) {
		int rc = blk_size(u->src_fd, &u->src_size);

		if (rc < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", src, strerror(-rc));
		u->src_seekable = true;
	} else if (S_ISDIR(u->src_st.st_mode)) {
		return fail(u, RB_EXIT_FAIL, "%s: is a directory", src);
	}
	if (u->src_seekable)
		(void)posix_fadvise(u->src_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* Format and output size, from a seekable source's first and last bytes. */
static int probe_source(struct run *u)
{
	uint8_t head[64];
	ssize_t n = 0;
	int exact = 0;

	if (u->src_seekable) {
		n = pread_full(u->src_fd, head, sizeof(head), 0);
		if (n < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", u->o->source, strerror((int)-n));
	}
	if (strcmp(u->o->decompress, "auto")) {
		u->codec = codec_by_name(u->o->decompress);
	} else if (u->src_seekable) {
		u->codec = codec_detect(head, (size_t)n);
	}
	if (!u->src_seekable)
		return 0;      /* a pipe: detected from the first chunk later */

	if (u->codec == &codec_none) {
		u->estimate = u->src_size;
		u->estimate_exact = true;
		/* A squashfs on a block device: copy only what it uses
		 * (bytes_used, rounded up to the 4 KiB it is padded to). */
		if (n >= 48 && head[0] == 'h' && head[1] == 's' && head[2] == 'q' && head[3] == 's' &&
		    S_ISBLK(u->src_st.st_mode)) {
			uint64_t used = 0;
			int i;

			for (i = 7; i >= 0; i--)
				used = used << 8 | head[40 + i];
			used = (used + 4095) & ~4095ULL;
			if (used > 0 && used < u->src_size)
				u->src_size = u->estimate = used;
		}
	} else if (u->codec && u->codec->content_size &&
		   u->codec->content_size(u->src_fd, u->src_size, &u->estimate, &exact) == 0) {
		u->estimate_exact = exact;
	}
	return 0;
}

static int check_memory(struct run *u)
{
	uint64_t avail, need = u->estimate;
	char a[32], b[32], c[32];
	int rc;

	if (u->have_man) {
		need = u->man.size;
		u->estimate = need;
		u->estimate_exact = true;
	}
	rc = rb_meminfo("MemAvailable", &avail);
	if (rc < 0)
		return fail(u, RB_EXIT_FAIL, "cannot read MemAvailable: %s", strerror(-rc));
	rb_debug("MemAvailable %" PRIu64 ", image %" PRIu64 " (%s), reserve %" PRIu64,
		 avail, need, u->estimate_exact ? "exact" : need ? "estimate" : "unknown",
		 u->o->min_free);
	if (avail < u->o->min_free || avail - u->o->min_free < need)
		return fail(u, RB_EXIT_NOMEM, "not enough memory: image %s, MemAvailable %s, reserve %s",
			    need ? fmt_size(need, a, sizeof(a)) : "of unknown size",
			    fmt_size(avail, b, sizeof(b)), fmt_size(u->o->min_free, c, sizeof(c)));
	return 0;
}

/* tmpfs takes "noswap" from Linux 6.4 on; older kernels refuse the mount
 * and log "Unknown parameter" on the console, so do not ask them. */
static bool kernel_has_noswap(void)
{
	struct utsname un;
	int major = 0, minor = 0;

	if (uname(&un) < 0 || sscanf(un.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 4);
}

static int mount_tmpfs(struct run *u)
{
	const char *dir = u->o->tmpfs;
	uint64_t avail = 0, size;
	char opts[128];
	struct stat st;
	int rc;

	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0755) < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", dir, strerror(errno));
		u->tmpfs_mkdir = true;
	} else if (!S_ISDIR(st.st_mode)) {
		return fail(u, RB_EXIT_FAIL, "%s: not a directory", dir);
	}
	/* Sized to the image plus a margin when the size is known; else
	 * capped at what may be used, and shrunk to fit after the load. */
	if (u->estimate_exact) {
		size = u->estimate + u->estimate / 100 + 4 * MiB;
	} else {
		(void)rb_meminfo("MemAvailable", &avail);
		size = avail > u->o->min_free ? avail - u->o->min_free : 16 * MiB;
	}
	size = (size + 4095) & ~4095ULL;
	/* noswap (Linux 6.4+): the image must stay in RAM, never be swapped
	 * out to the zram swap we set up next. Older kernels refuse it. */
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755%s", size,
		 kernel_has_noswap() ? ",noswap" : "");
	rc = mount("ramboot", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	if (rc < 0 && errno == EINVAL && strstr(opts, "noswap")) {
		snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755", size);
		rc = mount("ramboot", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	}
	if (rc < 0)
		return fail(u, RB_EXIT_FAIL, "%s: cannot mount tmpfs: %s", dir, strerror(errno));
	u->tmpfs_mounted = true;
	u->r->mounted_tmpfs = true;
	rb_debug("mounted tmpfs on %s (%s)", dir, opts);
	return 0;
}

static int open_dest(struct run *u, bool force)
{
	const char *dest = u->o->dest;
	char *path = u->r->dest_path;
	size_t plen = sizeof(u->r->dest_path);
	struct stat st;
	int flags;

	if (u->o->tmpfs && dest[0] != '/')
		snprintf(path, plen, "%s/%s", u->o->tmpfs, dest);
	else
		snprintf(path, plen, "%s", dest);

	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		int id = zram_id_from_path(path);
		int rc;

		u->dst_blk = true;
		if (id >= 0) {
			uint64_t disksize;

			rc = zram_is_initialised(id);
			if (rc < 0)
				return fail(u, RB_EXIT_FAIL, "%s: cannot read disksize: %s", path,
					    strerror(-rc));
			if (rc > 0)
				return fail(u, RB_EXIT_FAIL, "%s: zram device already in use", path);
			if (!u->estimate)
				return fail(u, RB_EXIT_FAIL, "%s: image size unknown: a zram target "
					    "needs --manifest or a seekable source", path);
			disksize = u->estimate_exact ? u->estimate :
				   u->estimate + u->estimate / 10;
			disksize = (disksize + 4095) & ~4095ULL;
			{
				char v[32];

				snprintf(v, sizeof(v), "%" PRIu64, disksize);
				/* The kernel sizes zram once; reset undoes it. */
				rc = zram_set(id, "disksize", v);
			}
			if (rc < 0)
				return fail(u, rc == -ENOMEM ? RB_EXIT_NOMEM : RB_EXIT_FAIL,
					    "%s: cannot set disksize: %s", path, strerror(-rc));
			u->zram_id = id;
		}
		u->dst_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (u->dst_fd < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", path, strerror(errno));
		rc = blk_size(u->dst_fd, &u->dst_limit);
		if (rc < 0)
			return fail(u, RB_EXIT_FAIL, "%s: %s", path, strerror(-rc));
		if (u->estimate_exact && u->estimate > u->dst_limit)
			return fail(u, RB_EXIT_FAIL, "%s: device too small for the image", path);
		return 0;
	}
	flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
	u->dst_fd = open(path, flags, 0644);
	if (u->dst_fd < 0)
		return fail(u, RB_EXIT_FAIL, "%s: %s", path, errno == EEXIST ?
			    "exists already (use --force to overwrite)" : strerror(errno));
	u->dst_created = true;
	return 0;
}

/* ---- progress ---- */

struct progress {
	struct pipe *p;
	enum progress_mode mode;
	double start;
	uint64_t total;          /* expected output, 0: unknown */
	pthread_t tid;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

static void progress_line(struct progress *pg, bool bar)
{
	struct pipe_stats st;
	double t = now_sec() - pg->start, mbs;
	char line[160], a[32];

	pipe_stats(pg->p, &st);
	mbs = t > 0 ? (double)st.bytes_out / 1e6 / t : 0;
	if (bar && pg->total) {
		double f = (double)st.bytes_out / (double)pg->total;
		int w = 30, i, fill = (int)(f * w);
		char b[32];
		double eta = mbs > 0 ? ((double)pg->total - (double)st.bytes_out) / 1e6 / mbs : 0;

		if (fill > w)
			fill = w;
		for (i = 0; i < w; i++)
			b[i] = i < fill ? '#' : '-';
		b[w] = '\0';
		snprintf(line, sizeof(line), "\rramboot: [%s] %3.0f%% %s %.0f MB/s ETA %.0fs ",
			 b, f > 1 ? 100.0 : f * 100, fmt_size(st.bytes_out, a, sizeof(a)), mbs,
			 eta < 0 ? 0 : eta);
	} else {
		snprintf(line, sizeof(line), "%sramboot: load: %s written, %.0f MB/s%s",
			 bar ? "\r" : "", fmt_size(st.bytes_out, a, sizeof(a)), mbs, bar ? " " : "\n");
	}
	(void)write_all(STDERR_FILENO, line, strlen(line));
}

static void *progress_main(void *arg)
{
	struct progress *pg = arg;
	bool bar = pg->mode == PROGRESS_BAR;
	double every = bar ? 0.25 : 5.0;

	pthread_mutex_lock(&pg->lock);
	while (!pg->stop) {
		struct timespec ts;
		double when;

		clock_gettime(CLOCK_REALTIME, &ts);
		when = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + every;
		ts.tv_sec = (time_t)when;
		ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&pg->cond, &pg->lock, &ts);
		if (pg->stop)
			break;
		pthread_mutex_unlock(&pg->lock);
		progress_line(pg, bar);
		pthread_mutex_lock(&pg->lock);
	}
	pthread_mutex_unlock(&pg->lock);
	if (bar)
		(void)write_all(STDERR_FILENO, "\n", 1);
	return NULL;
}

static void progress_start(struct progress *pg, struct pipe *p, enum progress_mode mode,
			   uint64_t total)
{
	memset(pg, 0, sizeof(*pg));
	pg->p = p;
	pg->start = now_sec();
	pg->total = total;
	if (mode == PROGRESS_AUTO)
		mode = isatty(STDERR_FILENO) ? PROGRESS_BAR : PROGRESS_PLAIN;
	pg->mode = mode;
	if (mode == PROGRESS_NONE)
		return;
	pthread_mutex_init(&pg->lock, NULL);
	pthread_cond_init(&pg->cond, NULL);
	pg->started = pthread_create(&pg->tid, NULL, progress_main, pg) == 0;
}

static void progress_stop(struct progress *pg)
{
	if (!pg->started)
		return;
	pthread_mutex_lock(&pg->lock);
	pg->stop = true;
	pthread_cond_signal(&pg->cond);
	pthread_mutex_unlock(&pg->lock);
	pthread_join(pg->tid, NULL);
	pthread_cond_destroy(&pg->cond);
	pthread_mutex_destroy(&pg->lock);
}

/* ---- the pipeline run ---- */

static void hex(const uint8_t *d, size_t n, char *out)
{
	static const char x[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A raw copy between regular files, hashing nothing: the kernel copies
 * page cache to page cache (what cp does) with no pass through user
 * space. Returns 1 when copy_file_range does not apply (the caller runs
 * the pipeline instead), 0 when done, or -errno. Stats go to the pipe
 * for the progress display. */
static int copy_range(struct run *u, struct pipe *p)
{
	const uint64_t step = 64 * MiB;
	uint64_t done = 0, avail;

	for (;;) {
		ssize_t n;

		if (p->min_free && rb_meminfo("MemAvailable", &avail) == 0 && avail < p->min_free) {
			pipe_fail(p, -ENOMEM, "memory", "MemAvailable fell below the reserve");
			return -ENOMEM;
		}
		n = copy_file_range(u->src_fd, NULL, u->dst_fd, NULL, step, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && done == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
					   errno == EOPNOTSUPP || errno == EBADF))
			return 1;
		if (n < 0) {
			int e = errno;

			pipe_fail(p, -e, "write", NULL);
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

static int run_pipe(struct run *u, bool hash, uint64_t max_out)
{
	const struct load_opts *o = u->o;
	struct codec_cfg cfg = { .threads = o->threads > 0 ? o->threads : online_cpus() };
	struct progress pg;
	struct pipe p;
	struct chunk *first;
	uint64_t avail;
	int rc;

	rc = pipe_init(&p);
	if (rc < 0) {
		pipe_destroy(&p);
		return fail(u, RB_EXIT_NOMEM, "cannot allocate buffers: %s", strerror(-rc));
	}
	if (rb_meminfo("MemAvailable", &avail) == 0)
		cfg.memlimit = avail / 4;
	p.src_fd = u->src_fd;
	p.dst_fd = u->dst_fd;
	p.hash = hash;
	p.dst_is_blk = u->dst_blk;
	p.max_in = u->src_size && S_ISBLK(u->src_st.st_mode) ? u->src_size : 0;
	p.max_out = max_out;
	p.min_free = u->dst_fd >= 0 && u->o->dest ? o->min_free : 0;
	p.threads = cfg.threads;
	progress_start(&pg, &p, o->progress, u->estimate);
	if (u->codec == &codec_none && !hash && S_ISREG(u->src_st.st_mode) && !u->dst_blk &&
	    !max_out) {
		rc = copy_range(u, &p);
		if (rc <= 0) {
			rb_debug("codec none, copy_file_range");
			goto out;
		}
	}
	rc = pipe_start(&p);
	if (rc < 0) {
		pipe_fail(&p, rc, "start", NULL);
		goto out;
	}
	first = pipe_get_input(&p);
	if (first) {
		if (!u->codec)
			u->codec = codec_detect(first->data, first->len);
		rb_debug("codec %s, %d threads", u->codec->name, cfg.threads);
		codec_drive(u->codec, &p, first, &cfg);
	}
out:
	rc = pipe_finish(&p);
	progress_stop(&pg);
	u->r->bytes_in = p.st.bytes_in;
	u->r->bytes_out = p.st.bytes_out;
	u->r->codec = u->codec ? u->codec->name : "none";
	if (rc < 0) {
		const char *what = p.error_where ? p.error_where : "load";
		int code = rc == -ENOMEM && !strcmp(what, "memory") ? RB_EXIT_NOMEM : RB_EXIT_FAIL;

		if (!strcmp(what, "read"))
			fail(u, code, "%s: read error: %s", o->source, p.error_msg[0] ? p.error_msg :
			     strerror(-rc));
		else if (!strcmp(what, "write"))
			fail(u, code, "%s: write error: %s", u->r->dest_path[0] ? u->r->dest_path :
			     "output", p.error_msg[0] ? p.error_msg : strerror(-rc));
		else if (!strcmp(what, "memory"))
			fail(u, code, "memory ran short while loading: %s", p.error_msg);
		else
			fail(u, code, "%s: %s", o->source, p.error_msg[0] ? p.error_msg :
			     strerror(-rc));
		pipe_destroy(&p);
		return code;
	}
	if (hash) {
		uint8_t d[32];

		pipe_digest(&p, d);
		hex(d, 32, u->r->sha256);
	}
	pipe_destroy(&p);
	return 0;
}

/* ---- prefetch: several reads in flight, nothing kept ---- */

struct pf {
	int fd;
	uint64_t size;
	atomic_uint_fast64_t next, done;
	atomic_int err;
};

#define PF_CHUNK (2u * 1024 * 1024)

static void *pf_main(void *arg)
{
	struct pf *f = arg;
	void *buf = malloc(PF_CHUNK);

	if (!buf) {
		atomic_store(&f->err, -ENOMEM);
		return NULL;
	}
	while (!atomic_load(&f->err)) {
		uint64_t off = atomic_fetch_add(&f->next, PF_CHUNK);
		ssize_t n;

		if (off >= f->size)
			break;
		n = pread_full(f->fd, buf, PF_CHUNK, (off_t)off);
		if (n < 0) {
			atomic_store(&f->err, (int)n);
			break;
		}
		atomic_fetch_add(&f->done, (uint64_t)n);
		if ((size_t)n < PF_CHUNK)
			break;
	}
	free(buf);
	return NULL;
}

static int prefetch(struct run *u)
{
	struct pf f = { .fd = u->src_fd, .size = u->src_size };
	int n = (u->o->threads > 0 ? u->o->threads : online_cpus()) * 2, i, started = 0;
	pthread_t tid[128];

	if (!u->src_seekable)
		return fail(u, RB_EXIT_USAGE, "--prefetch needs a file or block device");
	if (n < 4)
		n = 4;
	if (n > 128)
		n = 128;
	/* Ask for read-ahead of the whole file first; the threads' reads
	 * then keep several requests in flight on NFS or NBD. */
	(void)posix_fadvise(u->src_fd, 0, 0, POSIX_FADV_WILLNEED);
	for (i = 0; i < n; i++)
		if (pthread_create(&tid[started], NULL, pf_main, &f) == 0)
			started++;
	if (!started)
		pf_main(&f);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	u->r->bytes_in = u->r->bytes_out = atomic_load(&f.done);
	if (atomic_load(&f.err))
		return fail(u, RB_EXIT_FAIL, "%s: read error: %s", u->o->source,
			    strerror(-atomic_load(&f.err)));
	return 0;
}

/* ---- after the write ---- */

static void probe_fs(struct run *u)
{
	blkid_probe pr = blkid_new_probe_from_filename(u->r->dest_path);
	const char *type = NULL;

	if (!pr)
		return;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0)
		snprintf(u->r->fstype, sizeof(u->r->fstype), "%s", type);
	blkid_free_probe(pr);
}

/* The source must not have changed while it was read (an image replaced
 * on the server): same size and mtime as when opened. */
static int check_source_unchanged(struct run *u)
{
	struct stat st;

	if (!S_ISREG(u->src_st.st_mode) || fstat(u->src_fd, &st) < 0)
		return 0;
	if (st.st_size != u->src_st.st_size || st.st_mtim.tv_sec != u->src_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != u->src_st.st_mtim.tv_nsec)
		return fail(u, RB_EXIT_FAIL, "%s: source changed while being read", u->o->source);
	return 0;
}

static void undo(struct run *u)
{
	if (u->dst_fd >= 0) {
		if (u->dst_blk && u->zram_id < 0) {
			/* Not ours to reset: wipe the start so no half image
			 * is ever mounted from it. */
			static const uint8_t zero[65536];

			if (pwrite(u->dst_fd, zero, sizeof(zero), 0) < 0)
				rb_warn("%s: cannot wipe: %s", u->r->dest_path, strerror(errno));
			(void)fdatasync(u->dst_fd);
		}
		(void)close(u->dst_fd);
		u->dst_fd = -1;
	}
	if (u->dst_created)
		(void)unlink(u->r->dest_path);
	/* The kernel refuses reset while the node is open: closed above. */
	if (u->zram_id >= 0 && zram_reset(u->zram_id) < 0)
		rb_warn("zram%d: reset failed", u->zram_id);
	if (u->tmpfs_mounted) {
		if (umount2(u->o->tmpfs, 0) < 0)
			(void)umount2(u->o->tmpfs, MNT_DETACH);
		u->tmpfs_mounted = false;
		u->r->mounted_tmpfs = false;
	}
	if (u->tmpfs_mkdir)
		(void)rmdir(u->o->tmpfs);
}

static int load_run_force(const struct load_opts *o, struct load_result *r, bool force)
{
	struct run u;
	double t0 = now_sec();
	uint64_t max_out = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&u, 0, sizeof(u));
	u.o = o;
	u.r = r;
	u.src_fd = u.dst_fd = -1;
	u.zram_id = -1;

	if (strcmp(o->decompress, "auto") && !codec_by_name(o->decompress)) {
		rc = fail(&u, RB_EXIT_USAGE, "unknown compression '%s'", o->decompress);
		goto out;
	}
	if (o->sha256 && sha256_hex_parse(o->sha256, u.want_sha) < 0) {
		rc = fail(&u, RB_EXIT_USAGE, "--sha256: need 64 hex digits");
		goto out;
	}
	if (o->manifest) {
		char err[128];

		if (manifest_load(o->manifest, &u.man, err, sizeof(err)) < 0) {
			rc = fail(&u, RB_EXIT_FAIL, "%s: %s", o->manifest, err);
			goto out;
		}
		u.have_man = true;
		if (o->sha256 && strcmp(u.want_sha, u.man.sha256)) {
			rc = fail(&u, RB_EXIT_USAGE, "--sha256 and --manifest disagree");
			goto out;
		}
		memcpy(u.want_sha, u.man.sha256, sizeof(u.want_sha));
	}
	if ((rc = open_source(&u)) != 0)
		goto out;
	if (o->prefetch) {
		rc = prefetch(&u);
		goto out;
	}
	if ((rc = probe_source(&u)) != 0)
		goto out;
	if ((rc = check_memory(&u)) != 0)
		goto out;
	if (o->tmpfs && (rc = mount_tmpfs(&u)) != 0)
		goto out;
	if ((rc = open_dest(&u, force)) != 0)
		goto out;
	if (u.have_man)
		max_out = u.man.size;
	if (u.dst_blk && (!max_out || u.dst_limit < max_out))
		max_out = u.dst_limit;
	if ((rc = run_pipe(&u, u.want_sha[0] != '\0', max_out)) != 0)
		goto out;
	if ((rc = check_source_unchanged(&u)) != 0)
		goto out;
	if (u.have_man && r->bytes_out != u.man.size) {
		rc = fail(&u, RB_EXIT_FAIL, "%s: image is %" PRIu64 " bytes, the manifest says %"
			  PRIu64, o->source, r->bytes_out, u.man.size);
		goto out;
	}
	if (u.want_sha[0]) {
		if (strcmp(r->sha256, u.want_sha)) {
			rc = fail(&u, RB_EXIT_FAIL, "%s: SHA-256 mismatch: got %s, expected %s",
				  o->source, r->sha256, u.want_sha);
			goto out;
		}
		r->verified = true;
	}
	if (u.dst_blk && fsync(u.dst_fd) < 0) {
		rc = fail(&u, RB_EXIT_FAIL, "%s: %s", r->dest_path, strerror(errno));
		goto out;
	}
	rc = close_checked(u.dst_fd);
	u.dst_fd = -1;
	if (rc < 0) {
		rc = fail(&u, RB_EXIT_FAIL, "%s: %s", r->dest_path, strerror(-rc));
		goto out;
	}
	probe_fs(&u);
	if (o->expect_fs && strcmp(o->expect_fs, r->fstype)) {
		rc = fail(&u, RB_EXIT_FAIL, "%s: expected a %s image, found %s", o->source,
			  o->expect_fs, r->fstype[0] ? r->fstype : "no known filesystem");
		goto out;
	}
	/* Shrink a tmpfs sized from an estimate to what the image uses. */
	if (u.tmpfs_mounted && !u.estimate_exact) {
		char opts[64];
		uint64_t size = ((r->bytes_out + 4 * MiB) + 4095) & ~4095ULL;

		snprintf(opts, sizeof(opts), "size=%" PRIu64, size);
		(void)mount(NULL, o->tmpfs, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts);
	}
	rc = RB_EXIT_OK;
out:
	r->seconds = now_sec() - t0;
	if (!r->codec)
		r->codec = u.codec ? u.codec->name : "none";
	if (rc != RB_EXIT_OK)
		undo(&u);
	if (u.dst_fd >= 0)
		(void)close(u.dst_fd);
	if (u.src_fd > STDIN_FILENO)
		(void)close(u.src_fd);
	return rc;
}

int load_run(const struct load_opts *o, struct load_result *r)
{
	return load_run_force(o, r, false);
}

/* ---- the commands ---- */

static void load_usage(FILE *out)
{
	fputs("Usage: ramboot load [OPTIONS] SOURCE DEST\n"
	      "       ramboot load [OPTIONS] --prefetch SOURCE\n"
	      "\n"
	      "Stream SOURCE (a file, a block device, or - for stdin) into DEST (a file to\n"
	      "create, normally in a tmpfs, or a block device such as a zram device),\n"
	      "decompressing on the way.\n"
	      "\n"
	      "Options:\n"
	      "  -d, --decompress=FMT  auto (default: from magic bytes), none, zstd, xz, lzo, gzip\n"
	      "  -j, --threads=N       threads (default: online CPUs)\n"
	      "      --sha256=HEX      SHA-256 the written image must have\n"
	      "      --manifest=FILE   size and SHA-256 the written image must have\n"
	      "      --min-free=SIZE   memory that must stay available (default 256M)\n"
	      "      --tmpfs=DIR       mount a tmpfs sized to the image at DIR; DEST is inside it\n"
	      "      --prefetch        read SOURCE once into the page cache, keep nothing\n"
	      "      --progress=MODE   auto, bar, plain, none (default auto)\n"
	      "      --expect-fs=TYPE  fail unless the image is a TYPE filesystem (squashfs, ...)\n"
	      "  -f, --force           overwrite an existing DEST file\n"
	      "  -v, --verbose         more messages\n"
	      "  -h, --help            this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 runtime error (I/O, corrupt input, verification failed),\n"
	      "2 usage, 3 not enough memory (the caller should fall back).\n", out);
}

static void summary(const struct load_opts *o, const struct load_result *r)
{
	char a[32], b[32];
	double mbs = r->seconds > 0 ? (double)r->bytes_out / 1e6 / r->seconds : 0;

	if (o->prefetch) {
		rb_info("prefetched %s in %.2f s (%.1f MB/s)", fmt_size(r->bytes_out, a, sizeof(a)),
			r->seconds, mbs);
		return;
	}
	rb_info("%s -> %s: %s in, %s out (%s) in %.2f s, %.1f MB/s%s%s%s",
		o->source, r->dest_path, fmt_size(r->bytes_in, a, sizeof(a)),
		fmt_size(r->bytes_out, b, sizeof(b)), r->codec, r->seconds, mbs,
		r->verified ? ", sha256 ok" : "", r->fstype[0] ? ", " : "", r->fstype);
}

enum { OPT_SHA = 256, OPT_MANIFEST, OPT_MINFREE, OPT_TMPFS, OPT_PREFETCH, OPT_PROGRESS,
       OPT_EXPECT };

static const struct option load_longopts[] = {
	{ "decompress", required_argument, NULL, 'd' },
	{ "threads", required_argument, NULL, 'j' },
	{ "sha256", required_argument, NULL, OPT_SHA },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "min-free", required_argument, NULL, OPT_MINFREE },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "prefetch", no_argument, NULL, OPT_PREFETCH },
	{ "progress", required_argument, NULL, OPT_PROGRESS },
	{ "expect-fs", required_argument, NULL, OPT_EXPECT },
	{ "force", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rb_err("%s (see 'ramboot load --help')", msg);
	return RB_EXIT_USAGE;
}

int cmd_load(int argc, char **argv)
{
	struct load_opts o;
	struct load_result r;
	bool force = false;
	int c, rc;

	load_opts_init(&o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:j:fvh", load_longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.decompress = optarg;
			break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 64)
				return usage_error("--threads: '%s' is not a number from 1 to 64", optarg);
			o.threads = (int)v;
			break;
		}
		case OPT_SHA:
			o.sha256 = optarg;
			break;
		case OPT_MANIFEST:
			o.manifest = optarg;
			break;
		case OPT_MINFREE:
			if (parse_size(optarg, &o.min_free) < 0)
				return usage_error("--min-free: bad size '%s'", optarg);
			break;
		case OPT_TMPFS:
			o.tmpfs = optarg;
			break;
		case OPT_PREFETCH:
			o.prefetch = true;
			break;
		case OPT_PROGRESS:
			if (!strcmp(optarg, "auto"))
				o.progress = PROGRESS_AUTO;
			else if (!strcmp(optarg, "bar"))
				o.progress = PROGRESS_BAR;
			else if (!strcmp(optarg, "plain"))
				o.progress = PROGRESS_PLAIN;
			else if (!strcmp(optarg, "none"))
				o.progress = PROGRESS_NONE;
			else
				return usage_error("--progress: '%s' is not auto, bar, plain or none",
						   optarg);
			break;
		case OPT_EXPECT:
			o.expect_fs = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'v':
			rb_verbose = 1;
			break;
		case 'h':
			load_usage(stdout);
			return RB_EXIT_OK;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (o.prefetch) {
		if (argc - optind != 1)
			return usage_error("%s", "--prefetch takes one SOURCE and no DEST");
		if (o.sha256 || o.manifest || o.tmpfs || o.expect_fs)
			return usage_error("%s", "--prefetch keeps nothing to verify or mount");
	} else if (argc - optind != 2) {
		return usage_error("%s", "need SOURCE and DEST");
	}
	o.source = argv[optind];
	o.dest = o.prefetch ? NULL : argv[optind + 1];
	if (strcmp(o.decompress, "auto") && !codec_by_name(o.decompress))
		return usage_error("--decompress: unknown format '%s'", o.decompress);
	if (o.sha256 && strlen(o.sha256) != 64)
		return usage_error("--sha256: '%s' is not 64 hex digits", o.sha256);
	if (o.tmpfs && o.dest && o.dest[0] == '/' &&
	    strncmp(o.dest, o.tmpfs, strlen(o.tmpfs)))
		return usage_error("DEST '%s' must be inside the --tmpfs directory", o.dest);

	rc = load_run_force(&o, &r, force);
	if (rc != RB_EXIT_OK) {
		rb_err("%s", r.error);
		return rc;
	}
	summary(&o, &r);
	return RB_EXIT_OK;
}

static void manifest_usage(FILE *out)
{
	fputs("Usage: ramboot manifest [-o OUT] [-d FMT] [-j N] IMAGE\n"
	      "\n"
	      "Write the manifest of IMAGE: the size and SHA-256 of the decompressed\n"
	      "image, which 'ramboot load --manifest' checks on the client.\n"
	      "  -o, --output=FILE   write to FILE instead of stdout\n"
	      "  -d, --decompress=FMT, -j, --threads=N   as for ramboot load\n", out);
}

int cmd_manifest(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "decompress", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct load_opts o;
	struct load_result r;
	struct manifest m;
	struct run u;
	const char *outpath = NULL;
	char buf[512];
	int c, rc, n;

	load_opts_init(&o);
	o.progress = PROGRESS_NONE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:d:j:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': outpath = optarg; break;
		case 'd': o.decompress = optarg; break;
		case 'j': o.threads = atoi(optarg); break;
		case 'h': manifest_usage(stdout); return RB_EXIT_OK;
		default:
			rb_err("unknown or incomplete option '%s' (see 'ramboot manifest --help')",
			       argv[optind - 1]);
			return RB_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		rb_err("need one IMAGE (see 'ramboot manifest --help')");
		return RB_EXIT_USAGE;
	}
	if (strcmp(o.decompress, "auto") && !codec_by_name(o.decompress)) {
		rb_err("--decompress: unknown format '%s'", o.decompress);
		return RB_EXIT_USAGE;
	}
	o.source = argv[optind];
	memset(&r, 0, sizeof(r));
	memset(&u, 0, sizeof(u));
	u.o = &o;
	u.r = &r;
	u.zram_id = -1;
	u.dst_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	rc = u.dst_fd < 0 ? fail(&u, RB_EXIT_FAIL, "/dev/null: %s", strerror(errno)) : 0;
	if (!rc)
		rc = open_source(&u);
	if (!rc)
		rc = probe_source(&u);
	if (!rc)
		rc = run_pipe(&u, true, 0);
	if (!rc)
		rc = check_source_unchanged(&u);
	if (u.dst_fd >= 0)
		close(u.dst_fd);
	if (u.src_fd > STDIN_FILENO)
		close(u.src_fd);
	if (rc) {
		rb_err("%s", r.error);
		return rc;
	}
	memset(&m, 0, sizeof(m));
	m.size = r.bytes_out;
	memcpy(m.sha256, r.sha256, sizeof(m.sha256));
	snprintf(m.compression, sizeof(m.compression), "%s", r.codec);
	n = manifest_format(&m, buf, sizeof(buf));
	if (outpath) {
		int fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0) {
			rb_err("%s: %s", outpath, strerror(errno));
			return RB_EXIT_FAIL;
		}
		rc = write_all(fd, buf, (size_t)n);
		if (close_checked(fd) < 0 || rc < 0) {
			rb_err("%s: write error", outpath);
			(void)unlink(outpath);
			return RB_EXIT_FAIL;
		}
	} else if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0) {
		rb_err("stdout: write error");
		return RB_EXIT_FAIL;
	}
	return RB_EXIT_OK;
}
