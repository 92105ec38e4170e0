// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The recorder: sample an image's page cache until a stop point, then
 * write the profile; its pid file, and the stop that waits for it
 * (profile/profile.h has the API, docs/profiles.md the commands).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "lib/outfile.h"
#include "lib/units.h"
#include "format/manifest.h"
#include "bgread/resident.h"
#include "profile/profile.h"
#include "source/source.h"

#define STOP_WAIT_S 30

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* "PID STARTTIME\n", from name in dirfd (or AT_FDCWD and a path). */
static int pidfile_read(int dirfd, const char *name, pid_t *pid, unsigned long long *start)
{
	char buf[64], *f[3];
	uint64_t a, b;
	ssize_t n;
	int fd, rc;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, sizeof(buf) - 1);
	rc = close_checked(fd);
	if (n < 0)
		return (int)n;
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (profile_fields(buf, f, 2) != 2 || profile_parse_u64(f[0], &a) < 0 || profile_parse_u64(f[1], &b) < 0 ||
	    a == 0 || a > INT32_MAX)
		return -EINVAL;
	*pid = (pid_t)a;
	*start = b;
	return 0;
}

static int mkdir_one(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Sleep s seconds; a signal ends it early. */
static void nap_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	(void)nanosleep(&ts, NULL);
}

/* Remove the pid file if it still names this process. By the directory
 * opened at the start: after a switch of root, the path names nothing. */
static void pidfile_remove(int dirfd, unsigned long long start)
{
	unsigned long long s;
	pid_t pid;

	if (pidfile_read(dirfd, "profile.pid", &pid, &s) == 0 && pid == getpid() && s == start)
		(void)unlinkat(dirfd, "profile.pid", 0);
}

void profile_record_opts_init(struct profile_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval = 0.2;
	o->until = -1;
}

/* A recorder at work: what it opened, resolved and gathered. */
struct recorder {
	const struct profile_record_opts *o;
	struct source img;        /* the image: a file or a block device */
	int dirfd;                /* PROFILE_DIR, for the pid file */
	char sha[65];
	const char *out;
	char outbuf[PATH_MAX], dir[PATH_MAX], pidpath[PATH_MAX], err[PATH_MAX + 128];
	unsigned long long start; /* this process's, in its pid file */
	struct outfile of;
	bool of_open;
	struct profile_sampler s;
	struct profile p;
	double t0;
};

/* The image: open, its size, a page cache mincore shows, its hash from
 * the manifest. */
static int open_image(struct recorder *r)
{
	const struct profile_record_opts *o = r->o;
	const struct source_spec sp = { .name = o->image, .fd = -1, .seekable = true };
	int rc;

	rc = source_open(&r->img, &sp, r->err, sizeof(r->err));
	if (rc < 0) {
		rb_err("%s", r->err);
		return rc;
	}
	if (!bgread_mincore_shows(&r->img.st, o->image)) {
		rb_err("%s: the kernel shows the page cache of a file only to its owner, a "
		       "process that may write it, or root", o->image);
		return -EPERM;
	}
	memcpy(r->sha, o->sha256, sizeof(r->sha));
	if (o->manifest) {
		struct manifest m;

		rc = manifest_load(o->manifest, &m, r->err, sizeof(r->err));
		if (rc < 0) {
			rb_err("%s: %s", o->manifest, r->err);
			return rc;
		}
		if (m.size != r->img.size) {
			rb_err("%s: describes an image of %" PRIu64 " bytes, %s has %" PRIu64,
			       o->manifest, m.size, o->image, r->img.size);
			return -EINVAL;
		}
		memcpy(r->sha, m.sha256, sizeof(r->sha));
	}
	return 0;
}

/* Every name is resolved now: started in the initramfs, the recorder
 * lives on after the switch of root, where "/run" in its own (old) root
 * names nothing any more. The directory stays open. No other recorder
 * may be running. */
static int resolve(struct recorder *r)
{
	unsigned long long ostart;
	pid_t other;
	char state;
	int rc;

	rc = rb_path(r->dir, sizeof(r->dir), "/run");
	if (rc == 0)
		rc = mkdir_one(r->dir);
	if (rc == 0)
		rc = rb_path(r->dir, sizeof(r->dir), PROFILE_DIR);
	if (rc == 0)
		rc = mkdir_one(r->dir);
	if (rc == 0)
		rc = rb_path(r->pidpath, sizeof(r->pidpath), PROFILE_PID);
	if (rc == 0 && !r->o->out)
		rc = rb_path(r->outbuf, sizeof(r->outbuf), PROFILE_OUT);
	if (rc < 0) {
		rb_err("%s: %s", r->dir, strerror(-rc));
		return rc;
	}
	r->out = r->o->out ? r->o->out : r->outbuf;
	if (proc_start(getpid(), false, &state, &r->start) < 0) {
		rb_err("cannot read this process's start time from /proc");
		return -EIO;
	}
	if (pidfile_read(AT_FDCWD, r->pidpath, &other, &ostart) == 0 && other != getpid() &&
	    proc_alive(other, false, ostart)) {
		rb_err("a recorder is running already (pid %d)", (int)other);
		return -EBUSY;
	}
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0) {
		rc = -errno;
		rb_err("%s: %s", r->dir, strerror(-rc));
		return rc;
	}
	return 0;
}

/* "PID STARTTIME\n" into the pid file, through outfile. */
static int pidfile_write(struct recorder *r)
{
	struct outfile pf;
	char line[64];
	int n, rc;

	rc = outfile_open(&pf, r->pidpath, 0644, OUTFILE_REPLACE, NULL, r->err, sizeof(r->err));
	if (rc < 0)
		return rc;
	n = snprintf(line, sizeof(line), "%d %llu\n", (int)getpid(), r->start);
	rc = outfile_write(&pf, line, (size_t)n);
	if (rc < 0)
		snprintf(r->err, sizeof(r->err), "%s: %s", r->pidpath, strerror(-rc));
	return rc;
}

/* The stop signals, the output file (never over what was read: the
 * image, its manifest) and the pid file: a stop request is handled from
 * the moment the pid is out. */
static int arm(struct recorder *r)
{
	struct stat inputs[2];
	struct sigaction sa;
	size_t ninputs = 0;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);

	inputs[ninputs++] = r->img.st;
	if (r->o->manifest && stat(r->o->manifest, &inputs[ninputs]) == 0)
		ninputs++;
	rc = outfile_open_protect(&r->of, r->out, 0644, OUTFILE_REPLACE, inputs, ninputs, r->err,
				  sizeof(r->err));
	if (rc == 0) {
		r->of_open = true;
		rc = pidfile_write(r);
	}
	if (rc < 0)
		rb_err("%s", r->err);
	return rc;
}

/* Sample until a stop point. */
static int sample(struct recorder *r)
{
	const struct profile_record_opts *o = r->o;
	int rc;

	rc = profile_sampler_init(&r->s, r->img.fd, r->img.size);
	if (rc < 0) {
		rb_err("%s: %s", o->image, strerror(-rc));
		return rc;
	}
	r->p.page_size = r->s.page;
	r->t0 = now_sec();
	for (;;) {
		double left;

		rc = profile_sample(&r->s, &r->p, NULL);
		if (rc < 0) {
			rb_err("%s: sampling its page cache: %s", o->image, strerror(-rc));
			return rc;
		}
		if (stop_signal || (o->stop_file && access(o->stop_file, F_OK) == 0))
			return 0;
		left = o->until >= 0 ? o->until - (now_sec() - r->t0) : o->interval;
		if (left <= 0)
			return 0;
		nap_s(left < o->interval ? left : o->interval);
	}
}

/* The identity, read after the last sample (these reads are not the
 * boot's), and the profile written. */
static int finish(struct recorder *r)
{
	char *text, a[32];
	uint64_t bytes;
	size_t len;
	int rc;

	rc = profile_image_id(r->img.fd, r->img.size, &r->p.id);
	if (rc < 0) {
		rb_err("%s: reading its first and last MiB: %s", r->o->image, strerror(-rc));
		return rc;
	}
	memcpy(r->p.id.sha256, r->sha, sizeof(r->sha));
	rc = profile_format(&r->p, &text, &len, r->err, sizeof(r->err));
	if (rc < 0) {
		rb_err("%s", r->err);
		return rc;
	}
	rc = write_all(r->of.fd, text, len);
	free(text);
	if (rc == 0)
		rc = outfile_commit(&r->of);
	if (rc < 0) {
		rb_err("%s: write error: %s", r->out, strerror(-rc));
		return rc;
	}
	bytes = profile_bytes(&r->p);
	rb_info("%s: ranges: %zu, %s (%.1f %% of the image) in %.1f s", r->out, r->p.n,
		fmt_size(bytes, a, sizeof(a)),
		r->img.size ? 100.0 * (double)bytes / (double)r->img.size : 0, now_sec() - r->t0);
	return 0;
}

int profile_record_run(const struct profile_record_opts *o)
{
	struct recorder r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.img.fd = r.dirfd = -1;
	profile_init(&r.p);
	rc = open_image(&r);
	if (rc == 0)
		rc = resolve(&r);
	if (rc == 0)
		rc = arm(&r);
	if (rc == 0)
		rc = sample(&r);
	if (rc == 0)
		rc = finish(&r);

	/* On failure the pid file stays: --stop, which waits for it to go,
	 * then finds a recorder that ended without removing it, and reports
	 * that no profile was written. The next recorder replaces it (its
	 * process has ended). */
	profile_sampler_free(&r.s);
	profile_free(&r.p);
	if (rc < 0 && r.of_open)
		outfile_abort(&r.of);
	if (rc == 0)
		pidfile_remove(r.dirfd, r.start);
	if (r.dirfd >= 0)
		(void)close(r.dirfd);
	{
		int crc = source_close(&r.img);

		if (rc == 0)
			rc = crc;
	}
	return rc;
}

int profile_record_stop(void)
{
	unsigned long long start, s2;
	char path[PATH_MAX];
	double deadline;
	pid_t pid, p2;
	int rc;

	if (rb_path(path, sizeof(path), PROFILE_PID) < 0) {
		rb_err("root prefix too long");
		return -ENAMETOOLONG;
	}
	rc = pidfile_read(AT_FDCWD, path, &pid, &start);
	if (rc == -ENOENT) {
		rb_err("no recorder is running (no %s)", path);
		return rc;
	}
	if (rc < 0) {
		rb_err("%s: %s", path, rc == -EINVAL ? "not a recorder's pid file" : strerror(-rc));
		return rc;
	}
	if (!proc_alive(pid, false, start)) {
		rb_err("no recorder is running (%s names pid %d, which has ended)", path, (int)pid);
		return -ESRCH;
	}
	if (kill(pid, SIGTERM) < 0) {
		rc = -errno;
		rb_err("cannot signal the recorder (pid %d): %s", (int)pid, strerror(-rc));
		return rc;
	}
	/* Done when the recorder has removed its pid file, which it does
	 * only once the profile is written: one that fails leaves it. */
	deadline = now_sec() + STOP_WAIT_S;
	for (;;) {
		rc = pidfile_read(AT_FDCWD, path, &p2, &s2);
		if (rc == -ENOENT || (rc == 0 && (p2 != pid || s2 != start)))
			return 0;
		if (!proc_alive(pid, false, start)) {
			rc = pidfile_read(AT_FDCWD, path, &p2, &s2);
			if (rc == -ENOENT || (rc == 0 && (p2 != pid || s2 != start)))
				return 0;
			rb_err("the recorder (pid %d) ended without writing its profile", (int)pid);
			return -EIO;
		}
		if (now_sec() > deadline) {
			rb_err("the recorder (pid %d) did not finish within %d s", (int)pid,
			       STOP_WAIT_S);
			return -ETIMEDOUT;
		}
		nap_ms(20);
	}
}
