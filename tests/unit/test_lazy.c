// SPDX-License-Identifier: GPL-2.0-or-later
/* The pure parts of the lazy copier: its error and fallback names, how a
 * stream's end is judged, /proc/meminfo; and the loop device arithmetic
 * LOOP_CHANGE_FD depends on. The reading itself: test_bgread.c. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/path.h"
#include "lazy/lazy.h"
#include "dev/loopdev.h"

#define PG 4096ULL

static void meminfo(void)
{
	const char *text = "MemTotal:       24683620 kB\n"
			   "MemFree:         1000 kB\n"
			   "MemAvailableX:   5 kB\n"
			   "MemAvailable:   2048 kB\n";
	uint64_t v = 0;

	CHECK_EQ_INT(meminfo_parse(text, "MemAvailable", &v), 0);
	CHECK_EQ_INT(v, 2048 * 1024);
	CHECK_EQ_INT(meminfo_parse(text, "MemTotal", &v), 0);
	CHECK_EQ_INT(v, 24683620ULL * 1024);
	CHECK_EQ_INT(meminfo_parse(text, "SwapFree", &v), -ENOENT);
	CHECK_EQ_INT(meminfo_parse("MemAvailable: lots\n", "MemAvailable", &v), -EINVAL);
	CHECK_EQ_INT(meminfo_parse("", "MemAvailable", &v), -ENOENT);
	CHECK_EQ_INT(meminfo_parse("MemAvailable: 99999999999999999999 kB", "MemAvailable",
					&v), -EINVAL);
}

static void loop_sizes(void)
{
	/* As the kernel's get_size(): whole sectors after the offset,
	 * capped at the size limit. */
	CHECK_EQ_INT(loopdev_sectors(1024, 0, 0), 2);
	CHECK_EQ_INT(loopdev_sectors(1000, 0, 0), 1);
	CHECK_EQ_INT(loopdev_sectors(4096, 512, 0), 7);
	CHECK_EQ_INT(loopdev_sectors(4096, 0, 1024), 2);
	CHECK_EQ_INT(loopdev_sectors(4096, 0, 8192), 8);
	CHECK_EQ_INT(loopdev_sectors(4096, 4096, 0), 0);
	CHECK_EQ_INT(loopdev_sectors(4096, 9999, 0), 0);
}

static void loop_names(void)
{
	CHECK(loopdev_name_valid("loop0"));
	CHECK(loopdev_name_valid("loop123"));
	CHECK(!loopdev_name_valid("loop"));
	CHECK(!loopdev_name_valid("loop1p1"));
	CHECK(!loopdev_name_valid("zram0"));
	CHECK(!loopdev_name_valid("loop-control"));

	CHECK(loopdev_backing_matches("/root/images/x.img", "/root/images/x.img", NULL));
	CHECK(loopdev_backing_matches("/srv/x.img", "images/x.img", "/srv/x.img"));
	CHECK(!loopdev_backing_matches("/srv/x.img", "/srv/y.img", "/srv/y.img"));
	CHECK(!loopdev_backing_matches("/srv/x.img (deleted)", "/srv/x.img (deleted)", NULL));
	CHECK(!loopdev_backing_matches("", "", NULL));
}

static void err_names(void)
{
	CHECK_EQ_STR(lazy_err_name(LAZY_HASH), "hash-mismatch");
	CHECK_EQ_STR(lazy_err_name(LAZY_STALL), "stall");
	CHECK_EQ_STR(lazy_err_name(LAZY_NOMEM), "memory");
	CHECK_EQ_STR(lazy_err_name(LAZY_NOLOOP), "no-loop-device");
	/* A bad signature is its own category, as the loader's. */
	CHECK_EQ_STR(lazy_err_name(LAZY_SIGNATURE), "signature");
	CHECK_EQ_STR(lazy_err_name(LAZY_MANIFEST), "manifest");
	CHECK_EQ_INT(lazy_exit_code(LAZY_SIGNATURE), RB_EXIT_FAIL);
	CHECK_EQ_INT(lazy_exit_code(LAZY_NOLOOP), RB_EXIT_FAIL);
	CHECK_EQ_STR(lazy_err_name((enum run_err)999), "unknown");
	CHECK_EQ_INT(lazy_exit_code(LAZY_OK), RB_EXIT_OK);
	CHECK_EQ_INT(lazy_exit_code(LAZY_USAGE), RB_EXIT_USAGE);
	CHECK_EQ_INT(lazy_exit_code(LAZY_NOMEM), RB_EXIT_NOMEM);
	CHECK_EQ_INT(lazy_exit_code(LAZY_STALL), RB_EXIT_FAIL);
	CHECK_EQ_INT(lazy_exit_code(LAZY_SWITCH), RB_EXIT_FAIL);
}

/* --udpcast: how a stream that reached its end of file is judged. */
static void stream_end(void)
{
	const uint64_t sz = 100 * PG;

	CHECK_EQ_INT(lazy_stream_end(sz, sz, true), LAZY_FB_NONE);
	/* udp-receiver failed: nothing came (no sender), or it broke off;
	 * a whole image is not trusted either (a lost final ack). */
	CHECK_EQ_INT(lazy_stream_end(0, sz, false), LAZY_FB_NO_SESSION);
	CHECK_EQ_INT(lazy_stream_end(PG, sz, false), LAZY_FB_LOST);
	CHECK_EQ_INT(lazy_stream_end(sz, sz, false), LAZY_FB_LOST);
	/* Another image: shorter, or one byte past this one. */
	CHECK_EQ_INT(lazy_stream_end(sz - 1, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(0, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(sz + 1, sz, true), LAZY_FB_SIZE);
	CHECK_EQ_INT(lazy_stream_end(sz + 1, sz, false), LAZY_FB_SIZE);
}

static void fallback_names(void)
{
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_NONE), "");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_UNVERIFIED), "unverified");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_RECEIVER), "receiver");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_NO_SESSION), "no-session");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_LOST), "stream-lost");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_STALL), "stall");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_SIZE), "size-mismatch");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_COMPRESSED), "compressed");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_HASH), "hash-mismatch");
	CHECK_EQ_STR(lazy_fallback_name(LAZY_FB_DIFFERS), "image-differs");
	CHECK_EQ_STR(lazy_fallback_name((enum run_err)999), "unknown");
}


/* An http:// image is served by the copier (nbdserve.c) unless its
 * bytes are given already (the cache's slot: read as a file). */
static void http_images(void)
{
	struct lazy_opts o;
	char why[256];

	lazy_opts_init(&o);
	o.image = "http://10.0.2.2/x86_64.img";
	CHECK(lazy_is_http(o.image));
	CHECK(!lazy_is_http("/srv/http://x"));
	CHECK(!lazy_is_http(NULL));
	CHECK(lazy_serves_http(&o));
	CHECK_EQ_INT(lazy_check(&o, why, sizeof(why)), 0);
	o.target = LAZY_TARGET_ZRAM;
	CHECK_EQ_INT(lazy_check(&o, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "an http:// image is served by the copier") != NULL);
	/* The slot of the local cache, under the image's URL. */
	o.image_fd = 0;
	o.loop = "/dev/loop3";
	CHECK(!lazy_serves_http(&o));
	CHECK_EQ_INT(lazy_check(&o, why, sizeof(why)), 0);
}

int main(void)
{
	RUN(meminfo);
	RUN(loop_sizes);
	RUN(loop_names);
	RUN(err_names);
	RUN(stream_end);
	RUN(fallback_names);
	RUN(http_images);
	return TAP_DONE();
}
