// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A lazy boot over HTTP: there is no network file for a loop device to
 * read, so the copier serves one itself. The kernel's NBD client holds
 * one end of a socket pair (AF_UNIX: the driver sends and receives on
 * whatever socket it is given, sockfd_lookup and sock_sendmsg), the
 * server of nbdserve.c the other, and a read-only loop device over
 * /dev/nbdN is what the boot mounts. The server answers from the RAM
 * copy, fetching the chunks a read needs first (ranged GETs, verified
 * against the manifest's chunk hashes); the filler fetches the rest.
 * With every chunk present the copy is verified whole and the loop
 * device switched to it (switch.c); then the NBD device is disconnected
 * and the process ends.
 *
 * Until then this process is the root's only way to its data: it is
 * locked in memory (mlockall), the OOM killer never picks it
 * (oom_score_adj -1000), it keeps running after the switch of root
 * (nothing is looked up by path after the loop device is handed over),
 * and a failure after the handover does not end it: it goes on serving.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <linux/nbd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "lazy/nbdserve.h"
#include "dev/blkdev.h"
#include "dev/loopdev.h"
#include "dev/nbd.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "source/http.h"
#include "source/mirror.h"
#include "trust/policy.h"

#define URLS_MAX 8                 /* at most MIRROR_MAX */
#define HANDOVER_S 60.0        /* the parent waits this long for the loop device */

struct lazy_http {
	struct nbds s;
	char *list;                      /* the URLs, split in place */
	const char *url[URLS_MAX];
	unsigned nurls;
	struct mirror_set ms;            /* the URLs: the server's and the filler's reads */
	bool ms_open;
	const uint8_t (*hash)[32];       /* the manifest's chunk hashes, or NULL */
	int timeout_ms;
	int sv[2];                       /* [0] the kernel's end, [1] the server's */
	int nbd_index;
	pthread_t server;
	bool serving;
	int serve_rc;
	int notify[2];                   /* background: the child tells the parent */
	uint32_t *order;                 /* the profile's chunks, fetched first */
	uint32_t norder;
};

bool lazy_is_http(const char *image)
{
	return image && !strncmp(image, "http://", 7);
}

bool lazy_serves_http(const struct lazy_opts *o)
{
	return o->image_fd < 0 && lazy_is_http(o->image);
}

/*
 * Fetch chunk i: the one place that knows where chunks come from
 * (nbdserve.h's fetch). One attempt asks the mirror set (mirror.h),
 * which tries each mirror left once, verifies the bytes against the
 * chunk's hash (bytes of another mirror's that do not match are
 * fetched from the next) and drops a mirror that keeps failing, so a
 * server gone costs its retries a few times, not on every chunk. The
 * store's rounds until its timeout are the retries; with every mirror
 * dropped, each round tries them all again (a server restarted).
 * The server and the filler call it at once: the set is thread-safe.
 */
static int fetch_chunk(void *arg, int slot, unsigned attempt, uint32_t i, uint64_t off,
		       void *buf, size_t len, char *err, size_t errlen)
{
	struct lazy_http *h = arg;
	ssize_t n;

	(void)slot;
	if (attempt > 0)
		return -ENODEV;
	(void)mirror_revive(&h->ms);
	n = mirror_fetch(&h->ms, buf, len, off, h->hash ? h->hash[i] : NULL, NULL, err, errlen);
	if (n >= 0 && (size_t)n != len)
		return rb_errfmt(err, errlen, -EIO, "chunk %" PRIu32 ": %zd of %zu bytes", i, n,
				 len);
	return n < 0 ? (int)n : 0;
}

/* What each URL served, when there are several. */
static void mirror_report(struct lazy_http *h)
{
	struct mirror_stat st;

	for (unsigned k = 0; h->ms_open && h->ms.n > 1 && k < h->ms.n; k++) {
		mirror_stats(&h->ms, k, &st);
		rb_info("%s: %" PRIu64 " bytes in %" PRIu32 " chunks, %" PRIu32 " failed%s",
			mirror_url(&h->ms, k), st.bytes, st.chunks, st.failures,
			st.dropped ? ", dropped" : "");
	}
}

static void http_free(struct lazy_http *h)
{
	if (h->ms_open)
		mirror_set_close(&h->ms);
	nbds_free(&h->s);
	close_fd(&h->sv[0]);
	close_fd(&h->sv[1]);
	close_fd(&h->notify[0]);
	close_fd(&h->notify[1]);
	free(h->order);
	free(h->list);
	free(h);
}

void lazy_http_close(struct lazy *L)
{
	if (L->http && !L->http->serving)
		http_free(L->http);
	L->http = NULL;
}

bool lazy_http_stats(struct lazy *L, struct nbds_stats *st)
{
	if (!L->http || !L->http->s.state)
		return false;
	nbds_stats(&L->http->s, st);
	return true;
}

/* The manifest: --manifest (a file or a URL), else the first URL's
 * .manifest; under the verification policy, its chunk hashes kept. */
static int read_manifest(struct lazy *L, struct lazy_http *h)
{
	const struct lazy_opts *o = L->o;
	char name[2100], err[512], *text = NULL;
	size_t len = 0;
	enum run_err e;
	int rc;

	if (o->sha256 && !o->manifest)
		return lazy_fail(L, LAZY_MANIFEST, "%s: a lazy boot over HTTP verifies each chunk: "
				 "it needs a manifest with chunk hashes, not --sha256", h->url[0]);
	if (o->manifest && !lazy_is_http(o->manifest)) {
		snprintf(name, sizeof(name), "%s", o->manifest);
	} else {
		/* IMAGE.manifest from each URL in turn, the first one's error. */
		char e2[512];
		unsigned k = 0;

		do {
			snprintf(name, sizeof(name), "%s%s", o->manifest ? o->manifest : h->url[k],
				 o->manifest ? "" : ".manifest");
			rc = http_fetch(name, h->timeout_ms, MANIFEST_HARD_MAX, &text, &len,
					k ? e2 : err, k ? sizeof(e2) : sizeof(err));
		} while (rc < 0 && !o->manifest && ++k < h->nurls);
		if (rc < 0 && o->unverified)
			return 0;
		if (rc < 0)
			return lazy_fail(L, LAZY_MANIFEST, "%s", err);
	}
	{
		const struct trust_policy p = {
			.manifest = name, .signed_only = o->signed_only, .keydir = o->keydir,
			.chunks = true, .text = text, .text_len = len,
		};
		const struct trust_want w = {
			.sha256 = L->want_sha, .man = &L->man, .have_man = &L->have_man,
			.signed_by = L->r->signed_by, .signed_by_len = sizeof(L->r->signed_by),
		};

		e = trust_policy_read(&p, &w, err, sizeof(err));
	}
	free(text);
	if (e != RUN_OK)
		return lazy_fail(L, e, "%s", err);
	return 0;
}

/* The mirror set of the URLs, opened here (before the fork of
 * --background: the child inherits it), and the image's size as the
 * servers give it: a URL that does not answer is not used. */
static int remote_size(struct lazy *L, struct lazy_http *h, uint64_t *size)
{
	char err[512];
	int rc = mirror_set_open(&h->ms, h->url, h->nurls, h->timeout_ms, err, sizeof(err));

	if (rc < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s", err);
	h->ms_open = true;
	*size = h->ms.size;
	return 0;
}

/*
 * --profile=FILE (ramboot.profile=): its ranges' chunks are fetched
 * first, in its order. Only a profile recorded on this image: its size
 * and the manifest's SHA-256 (the ends of the image are not here to
 * hash, so a profile that does not carry the image's SHA-256 is not
 * used). Never a reason to give up.
 */
static void load_profile(struct lazy *L, struct lazy_http *h)
{
	const struct lazy_opts *o = L->o;
	struct profile_id id = { .size = L->size };
	char err[256];
	size_t k;

	if (!o->profile || !strcmp(o->profile, LAZY_PROFILE_NONE) || !L->want_sha[0])
		return;
	snprintf(L->profile_path, sizeof(L->profile_path), "%s", o->profile);
	memcpy(id.sha256, L->want_sha, sizeof(id.sha256));
	if (profile_load(L->profile_path, &L->prof, err, sizeof(err)) < 0) {
		L->profile_state = "error";
		rb_warn("profile %s: %s; fetching in offset order", L->profile_path, err);
		return;
	}
	L->profile_state = "mismatch";
	if (profile_matches(&L->prof, &id)) {
		for (k = 0; k < L->prof.n; k++) {
			uint64_t c = L->prof.r[k].off / h->s.chunk_size;
			uint64_t last = (L->prof.r[k].off + L->prof.r[k].len - 1) / h->s.chunk_size;

			for (; c <= last && c < h->s.nchunks; c++) {
				uint32_t *n = realloc(h->order, (h->norder + 1) * sizeof(*n));

				if (!n)
					break;
				h->order = n;
				h->order[h->norder++] = (uint32_t)c;
			}
		}
		L->profile_state = "used";
	}
	profile_free(&L->prof);
}

int lazy_http_prepare(struct lazy *L)
{
	const struct lazy_opts *o = L->o;
	struct lazy_http *h = calloc(1, sizeof(*h));
	uint64_t chunk, size = 0;
	char *p;
	int rc;

	if (!h || !(h->list = strdup(o->image))) {
		free(h);
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	}
	L->http = h;
	h->sv[0] = h->sv[1] = h->notify[0] = h->notify[1] = -1;
	h->nbd_index = -1;
	h->timeout_ms = http_timeout_ms(o->stall_timeout);
	/* URL[,URL...]: the image, then mirrors of it, tried in order. */
	for (p = strtok(h->list, ","); p; p = strtok(NULL, ",")) {
		if (h->nurls == URLS_MAX)
			return lazy_fail(L, LAZY_USAGE, "%s: more than %d URLs", o->image, URLS_MAX);
		if (!lazy_is_http(p))
			return lazy_fail(L, LAZY_USAGE, "'%s' is not an http:// URL", p);
		h->url[h->nurls++] = p;
	}
	if (h->nurls == 0)
		return lazy_fail(L, LAZY_USAGE, "--image: no URL");
	if ((rc = read_manifest(L, h)) != 0)
		return rc;
	if (!L->have_man && !o->unverified)
		return lazy_fail(L, LAZY_MANIFEST, "%s: no manifest: a lazy boot over HTTP needs one "
				 "with chunk hashes (or ramboot.verify=off)", h->url[0]);
	if (L->have_man && !L->man.chunk && !o->unverified)
		return lazy_fail(L, LAZY_MANIFEST, "%s: the manifest has no chunk hashes (version 2: "
				 "ramboot manifest); a lazy boot over HTTP verifies each chunk", h->url[0]);
	if ((rc = remote_size(L, h, &size)) != 0)
		return rc;
	if (L->have_man && size != L->man.size)
		return lazy_fail(L, LAZY_SIZE, "%s: %" PRIu64 " bytes, the manifest says %" PRIu64
				 " (a compressed file? a lazy boot serves the image itself)",
				 h->url[0], size, L->man.size);
	if (size == 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: empty", h->url[0]);
	L->size = size;
	L->r->size = size;
	chunk = L->have_man && L->man.chunk ? L->man.chunk_size : MANIFEST_CHUNK_DEFAULT;
	/* The mirror set verifies each chunk (fetch_chunk), not the store. */
	h->hash = L->have_man ? (const uint8_t (*)[32])L->man.chunk : NULL;
	rc = nbds_init(&h->s, -1, size, chunk, NULL, fetch_chunk, h,
		       o->stall_timeout > 0 ? o->stall_timeout : 30);
	if (rc == -EINVAL)
		return lazy_fail(L, LAZY_MANIFEST, "%s: chunks of %" PRIu64 " bytes: at most %u "
				 "served lazily", h->url[0], chunk, NBDS_CHUNK_MAX);
	if (rc < 0)
		return lazy_fail(L, LAZY_NOMEM, "out of memory");
	load_profile(L, h);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, h->sv) < 0)
		return lazy_fail(L, LAZY_DEST, "socketpair: %s", strerror(errno));
	if (o->background && pipe2(h->notify, O_CLOEXEC) < 0)
		return lazy_fail(L, LAZY_DEST, "pipe: %s", strerror(errno));
	return 0;
}

static void *serve_thread(void *arg)
{
	struct lazy_http *h = arg;

	h->serve_rc = nbds_serve(&h->s, h->sv[1]);
	/* The kernel's requests, sent or to come, end in an error now
	 * rather than wait for ever for a server that is gone. */
	(void)shutdown(h->sv[1], SHUT_RDWR);
	if (h->serve_rc < 0)
		rb_err("the NBD server ended: %s; reads of the image fail from now on",
		       strerror(-h->serve_rc));
	return NULL;
}

/* The status file every 2 s while the filler runs (nbdserve.h's tick). */
static void fill_tick(void *arg)
{
	struct lazy *L = arg;
	struct nbds_stats st;

	if (now_sec() - L->last_status < STATUS_EVERY_S)
		return;
	nbds_stats(&L->http->s, &st);
	L->r->bytes_network = (uint64_t)st.present * L->http->s.chunk_size;
	if (L->r->bytes_network > L->size)
		L->r->bytes_network = L->size;
	lazy_status_write(L);
}

/* The NBD device on the kernel's end of the pair, the loop device on
 * it: what the boot mounts. */
static int hand_over(struct lazy *L, struct lazy_http *h)
{
	const struct nbd_export ex = {
		.size = L->size, .flags = NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY,
	};
	/* No request timeout in the driver (0: it waits and warns): the
	 * server ends each read itself, with EIO after o->stall_timeout. */
	const struct nbd_timeouts t = { 0, 0 };
	char err[512], node[64], name[32];
	int rc;

	/* Its own descriptor: the copy's, closed when the copy is given
	 * its name, would be gone while the kernel still reads. */
	if ((rc = nbds_set_copy(&h->s, L->copy_fd)) < 0)
		return lazy_fail(L, LAZY_DEST, "%s: %s", L->r->copy, strerror(-rc));
	if (pthread_create(&h->server, NULL, serve_thread, h) != 0)
		return lazy_fail(L, LAZY_NOMEM, "cannot start the NBD server thread");
	h->serving = true;
	rc = nbd_kernel_connect(h->sv[0], &ex, &t, &h->nbd_index, err, sizeof(err));
	close_fd(&h->sv[0]);             /* the driver holds its own reference */
	if (rc < 0) {
		/* The kernel never took its end: the server sees EOF. */
		return lazy_fail(L, LAZY_SOURCE, "%s", err);
	}
	if (rb_path(node, sizeof(node), "/dev/nbd%d", h->nbd_index) < 0 ||
	    (L->img_fd = open(node, O_RDONLY | O_CLOEXEC)) < 0 || fstat(L->img_fd, &L->img_st) < 0)
		return lazy_fail(L, LAZY_SOURCE, "%s: %s", node, strerror(errno));
	if ((rc = loopdev_attach_keep(L->img_fd, name, sizeof(name))) < 0)
		return lazy_fail(L, LAZY_LOOP, "a loop device over %s: %s", node, strerror(-rc));
	if (rb_path(L->r->loop, sizeof(L->r->loop), "/dev/%s", name) < 0 ||
	    (L->loop_fd = open(L->r->loop, O_RDONLY | O_CLOEXEC)) < 0)
		return lazy_fail(L, LAZY_LOOP, "%s: %s", L->r->loop, strerror(errno));
	/* What the boot mounts it as; blkid reads through the server. */
	(void)blkid_fstype_fd(L->loop_fd, L->r->fstype, sizeof(L->r->fstype));
	snprintf(L->loop_name, sizeof(L->loop_name), "%s", name);
	return 0;
}

/* The parent hears of the handover: "LOOP FSTYPE\n", or nothing. */
static void notify_parent(struct lazy *L, struct lazy_http *h, bool ok)
{
	char line[128];
	int n;

	if (h->notify[1] < 0)
		return;
	if (ok) {
		n = snprintf(line, sizeof(line), "%s %s\n", L->r->loop, L->r->fstype[0] ?
			     L->r->fstype : "-");
		(void)write_all(h->notify[1], line, (size_t)n);
	}
	close_fd(&h->notify[1]);
}

/* In the child of --background: the parent's end of the pipe is not
 * ours. */
void lazy_http_child(struct lazy *L)
{
	close_fd(&L->http->notify[0]);
}

int lazy_http_wait_child(struct lazy *L)
{
	struct lazy_http *h = L->http;
	char line[128], fstype[32];
	struct pollfd pfd;
	size_t got = 0;
	double end = now_sec() + HANDOVER_S;

	close_fd(&h->notify[1]);
	pfd.fd = h->notify[0];
	pfd.events = POLLIN;
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		double left = end - now_sec();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			break;
		n = read(h->notify[0], line + got, sizeof(line) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	line[got] = '\0';
	if (sscanf(line, "%4095s %31s", L->r->loop, fstype) != 2)
		return lazy_fail(L, LAZY_LOOP, "the NBD device and its loop device were not set "
				 "up (%s)", L->o->status ? L->o->status : LAZY_STATUS ".log");
	snprintf(L->r->fstype, sizeof(L->r->fstype), "%s", strcmp(fstype, "-") ? fstype : "");
	return 0;
}

/* A failure after the handover: the root reads through the server, so
 * it goes on serving (from the copy and the network) until the kernel
 * disconnects; the status file says why there was no switch. */
static int keep_serving(struct lazy *L, int rc)
{
	struct lazy_http *h = L->http;

	L->state = "serving";
	lazy_status_write(L);
	rb_err("no switch to RAM (%s); %s goes on reading %s through this process", L->r->error,
	       L->r->loop, L->o->image);
	pthread_join(h->server, NULL);
	return rc;
}

int lazy_http_copy(struct lazy *L)
{
	struct lazy_http *h = L->http;
	int rc;

	/* Locked in memory before the first request: a page fault of
	 * this process while the root waits for it may need the root.
	 * One malloc arena: a thread's own would reserve 64 MiB, locked. */
	(void)mallopt(M_ARENA_MAX, 1);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		rb_warn("mlockall: %s", strerror(errno));
	if ((rc = rb_write_str("/proc/self/oom_score_adj", "-1000")) < 0)
		rb_warn("oom_score_adj -1000: %s", strerror(-rc));
	rc = hand_over(L, h);
	if (rc == 0) {
		sigset_t sigs;

		/* The root reads through this process from now on: TERM, INT,
		 * HUP and QUIT no longer end it (nor the copy and switch). */
		if (L->guard) {
			guard_stop(L->guard);
			L->guard = NULL;
		}
		guard_signals(&sigs);
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&sigs, sig) == 1)
				(void)signal(sig, SIG_IGN);
		lazy_set_state(L, "copying");   /* loop= there before the parent returns */
	}
	notify_parent(L, h, rc == 0);
	if (rc != 0) {
		if (h->serving) {
			if (h->nbd_index >= 0)
				(void)nbd_kernel_disconnect(h->nbd_index);
			shutdown(h->sv[1], SHUT_RDWR);
			pthread_join(h->server, NULL);
			h->serving = false;
		}
		return rc;
	}
	h->s.tick = fill_tick;
	h->s.tick_arg = L;
	if (nbds_fill(&h->s, h->order, h->norder) < 0)
		return keep_serving(L, lazy_fail(L, LAZY_NOMEM, "out of memory"));
	L->r->bytes_network = L->size;
	mirror_report(h);
	if ((rc = lazy_verify(L)) != 0 || (rc = lazy_switch(L)) != 0)
		return keep_serving(L, rc);
	/* The loop device reads the copy: the NBD device is no one's. The
	 * driver sends NBD_CMD_DISC (or closes): the server ends. */
	if (nbd_kernel_disconnect(h->nbd_index) < 0)
		shutdown(h->sv[1], SHUT_RDWR);
	pthread_join(h->server, NULL);
	h->serving = false;
	return 0;
}
