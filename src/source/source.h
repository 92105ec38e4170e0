/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source of an image: where its bytes come from, whatever carries
 * them. Every reader of an image opens it here: the loader, the lazy
 * copier (the image and its --udpcast stream), the cache's refresh and
 * the profile recorder. A kind is a file, a block device, a pipe (a path,
 * or a descriptor given: standard input for the loader's "-", or what a
 * child that outlives the initramfs's /dev reads), a multicast stream
 * (udpcast/'s receiver), or a file on a web server (http.h: an http://
 * URL, read as a stream and by ranged requests).
 * Each says whether it reads at any offset (source_pread) or only in
 * order (source_read), its size when known, and at its end whether what
 * came is whole (source_end). Another transport is one more kind here,
 * and every reader gets it.
 */
#ifndef RAMBOOT_SOURCE_H
#define RAMBOOT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/runerr.h"
#include "source/http.h"
#include "udpcast/udpcast.h"

enum source_kind { SRC_FILE, SRC_BLOCK, SRC_PIPE, SRC_UDPCAST, SRC_HTTP };

/* What to open: one of a path, a descriptor, a stream. */
struct source_spec {
	const char *name;        /* a path; with fd or udpcast, only what
				  * messages call it */
	int fd;                  /* >= 0: read a duplicate of it, open no path
				  * (standard input: STDIN_FILENO) */
	const struct udpcast_opts *udpcast; /* the stdout of a udp-receiver */
	bool seekable;           /* a file or a block device, nothing else */
	bool http;               /* name is an http:// URL */
	int timeout_ms;          /* http: each wait for the server; 0: HTTP_TIMEOUT_MS */
};

struct source {
	enum source_kind kind;
	const char *name;        /* the spec's, for messages */
	int fd;                  /* -1: closed */
	struct stat st;          /* as opened: source_end compares */
	bool seekable;           /* source_pread at any offset */
	uint64_t size;           /* bytes; 0: not known (a stream) */
	struct udpcast_rx rx;    /* SRC_UDPCAST */
	struct http_conn *http;  /* SRC_HTTP: ranged reads, the file's validators */
};

/* name is an http:// URL (the scheme in any case): a source_spec's http. */
bool source_is_url(const char *name);

/* Open sp into s. A path is opened without waiting for a FIFO's writer
 * and without becoming a controlling terminal; reads block as usual. A
 * directory is refused, and with sp->seekable anything that is not a
 * file or a block device. 0, or -errno with "NAME: why" in err. */
int source_open(struct source *s, const struct source_spec *sp, char *err, size_t errlen);

/* len bytes at off of a seekable source: what pread_full() gives (fewer
 * at its end), or -errno. An HTTP source (a stream, not seekable) reads
 * here too, by a ranged request on a connection of its own; its failure
 * is said on stderr. */
ssize_t source_pread(const struct source *s, void *buf, size_t len, uint64_t off);

/* The next bytes in order, at most len: one read (0 at the end), or
 * -errno; interrupted reads are made again. */
ssize_t source_read(struct source *s, void *buf, size_t len);

/* The source was read to its end: 0 when what came is the whole of it. A
 * file must be as it was opened (size, modification time: -ESTALE when
 * replaced while read), a stream's receiver must say it ended well
 * (-EIO), an HTTP body must be as long as its Content-Length (-EIO) and
 * its file still the one it was (ETag, Last-Modified: -ESTALE). The
 * reason in err. */
int source_end(struct source *s, char *err, size_t errlen);

/* Close s (a receiver still running is stopped): 0, or what close() said. */
int source_close(struct source *s);

/* The failure category of what a source function returned (lib/runerr.h):
 * RUN_CHANGED for a file replaced while read, RUN_SOURCE for the rest. */
enum run_err source_verdict(int rc);

#endif
