// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * status_verdict() (status/verdict.c): the first line of `ramboot status`
 * and the answer of `ramboot status --check`, from the texts of the boot
 * report and of the lazy copier's status file. Every outcome of a boot,
 * a report that repeats a key (a forged line), and a buffer too small for
 * the line.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "status/verdict.h"

/* One boot's files and what the verdict must say of them. */
struct vcase {
	const char *report;     /* NULL: no report */
	const char *lazy;       /* NULL: no lazy status file */
	enum verdict v;
	const char *line;
};

static char line[512];

static enum verdict v(const char *report, const char *lazy)
{
	memset(line, 'x', sizeof(line));
	return status_verdict(report, lazy, line, sizeof(line));
}

static void check_cases(const struct vcase *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		enum verdict got = v(c[i].report, c[i].lazy);

		if (got == c[i].v && !strcmp(line, c[i].line))
			continue;
		printf("#   case %zu: verdict %d \"%s\"\n#   expected %d \"%s\"\n", i, (int)got, line,
		       (int)c[i].v, c[i].line);
		tap_case_failed = 1;
	}
}

#define CHECK_CASES(t) check_cases(t, sizeof(t) / sizeof(t[0]))

#define LAZY  "mode_asked=lazy\nmode_done=lazy\n"
#define HIT   "mode_asked=cache\nmode_done=cache\ncache=hit\ncache_slot=a\n" \
	      "cache_device=/dev/sda3\ncache_generation=7\n"
#define NET   "running from the network image"
#define FB    "FALLBACK to the network image: "

static void test_no_report(void)
{
	static const struct vcase t[] = {
		{ NULL, NULL, V_NONE, "no boot report: ramboot did not run" },
		/* a lazy status file without a report changes nothing */
		{ NULL, "state=copying\n", V_NONE, "no boot report: ramboot did not run" },
	};

	CHECK_CASES(t);
}

static void test_off_prefetch(void)
{
	static const struct vcase t[] = {
		{ "mode_asked=off\nmode_done=off\n", NULL, V_NETWORK, NET " (ramboot=off)" },
		/* an empty report is the same: nothing was asked */
		{ "", NULL, V_NETWORK, NET " (ramboot=off)" },
		{ "mode_asked=prefetch\nmode_done=prefetch\n", NULL, V_NETWORK,
		  NET ", read ahead into the page cache (prefetch)" },
	};

	CHECK_CASES(t);
}

static void test_ram(void)
{
	static const struct vcase t[] = {
		{ "mode_asked=ram\nmode_done=ram\n", NULL, V_RAM, "running from RAM (not verified)" },
		{ "mode_asked=ram\nmode_done=ram\ntarget=tmpfs\nbytes=1073741824\ncodec=zstd\n"
		  "hash=ok\nsigned_by=lab 0123456789abcdef\nverity=on\n", NULL, V_RAM,
		  "running from RAM (tmpfs, 1.0 GiB from zstd, verified, signed by lab, dm-verity)" },
		/* codec=none is not said; a hash that is not "ok" is not verified */
		{ "mode_done=ram\ntarget=zram0\nbytes=1048576\ncodec=none\nhash=mismatch\n", NULL,
		  V_RAM, "running from RAM (zram0, 1.0 MiB, not verified)" },
	};

	CHECK_CASES(t);
}

static void test_fallback(void)
{
	static const struct vcase t[] = {
		{ "mode_asked=ram\nmode_done=off\nfallback=not enough memory\n", NULL, V_FALLBACK,
		  FB "not enough memory" },
		{ "mode_asked=ram\nmode_done=off\nfallback=load failed\nerror=read: EIO\n", NULL,
		  V_FALLBACK, FB "load failed (read: EIO)" },
		/* asked, not done, and no reason written (a boot that died) */
		{ "mode_asked=ram\n", NULL, V_FALLBACK, FB "ramboot=ram asked, nothing done" },
		{ "mode_asked=lazy\nmode_done=off\n", NULL, V_FALLBACK, FB "ramboot=lazy asked, off done" },
	};

	CHECK_CASES(t);
}

static void test_lazy(void)
{
	static const struct vcase t[] = {
		{ LAZY, NULL, V_COPYING, NET "; the copier has written no status yet" },
		{ LAZY, "pid=42\n", V_COPYING, NET "; the copier has written no status yet" },
		{ LAZY, "state=copying\n", V_COPYING, NET "; the copier is copying" },
		/* the progress adds the page cache, the network and the
		 * stream, rounded down to a tenth of a percent */
		{ LAZY, "state=copying\nsize=1073741824\nbytes_cached=268435456\n"
		  "bytes_network=186646528\nbytes_stream=0\n", V_COPYING,
		  NET "; the copier is copying: 42.3% of 1.0 GiB" },
		/* more bytes than the size (a stream that overlapped): 100% */
		{ LAZY, "state=verifying\nsize=1000\nbytes_network=900\nbytes_stream=900\n",
		  V_COPYING, NET "; the copier is verifying: 100.0% of 1000 B" },
		/* no counts, or no size: no progress rather than a wrong one */
		{ LAZY, "state=copying\nsize=1000\n", V_COPYING, NET "; the copier is copying" },
		{ LAZY, "state=copying\nbytes_network=10\n", V_COPYING, NET "; the copier is copying" },
		{ LAZY, "state=copying\nsize=0\nbytes_network=10\n", V_COPYING,
		  NET "; the copier is copying" },

		{ LAZY, "state=switched\nswitched=12.5\n", V_RAM,
		  "running from RAM (lazy copy, switched at 12.5 s)" },
		{ LAZY, "state=switched\n", V_RAM, "running from RAM (lazy copy, switched)" },
		/* the report's lazy_switched (amended by the copier) is
		 * enough: the status file may be gone with the initramfs */
		{ LAZY "lazy_switched=30.1\n", NULL, V_RAM,
		  "running from RAM (lazy copy, switched at 30.1 s)" },

		{ LAZY, "state=gave-up\ngave_up=hash mismatch\n", V_FALLBACK,
		  FB "the lazy copy gave up: hash mismatch" },
		{ LAZY, "state=gave-up\ngave_up=read failed\nerror=pread: EIO\n", V_FALLBACK,
		  FB "the lazy copy gave up: read failed (pread: EIO)" },
		{ LAZY, "state=gave-up\n", V_FALLBACK, FB "the lazy copy gave up: unknown" },
	};

	CHECK_CASES(t);
}

static void test_cache(void)
{
	static const struct vcase t[] = {
		{ HIT, NULL, V_DISK, "running from the local cache (slot a of /dev/sda3, "
		  "generation 7, verified when it was written)" },
		{ HIT "cache_verified=verity\n", NULL, V_DISK, "running from the local cache (slot a "
		  "of /dev/sda3, generation 7, every block checked by dm-verity)" },
		{ HIT "cache_scrub=bad\ncache_scrub_offset=4096\n", NULL, V_DISK,
		  "running from the local cache (slot a of /dev/sda3, generation 7), which failed "
		  "dm-verity at byte 4096: marked bad, the next boot boots from the network" },
		{ "mode_done=cache\ncache=offline\ncache_slot=b\ncache_device=/dev/sda3\n"
		  "cache_generation=3\ncache_age=86400\n", NULL, V_DISK,
		  "running from the local cache (slot b of /dev/sda3, generation 3, verified when it "
		  "was written) OFFLINE: the server's manifest could not be read; the slot is "
		  "86400 s old" },
		{ "mode_done=cache\ncache=refreshed\ncache_slot=b\ncache_device=/dev/sda3\n"
		  "cache_generation=4\ncache_switched=40.2\n", NULL, V_DISK,
		  "running from the local cache (slot b of /dev/sda3, generation 4, refreshed behind "
		  "the boot, switched at 40.2 s)" },
		{ "mode_done=cache\ncache=refreshed\ncache_slot=b\ncache_generation=4\n"
		  "cache_switch_error=busy\n", NULL, V_NETWORK,
		  NET "; the cache was refreshed (slot b, generation 4), used from the next boot: busy" },
		{ "mode_done=cache\ncache=refreshed\ncache_slot=b\ncache_generation=4\n", NULL,
		  V_COPYING, NET "; the cache was refreshed (slot b, generation 4), the switch to it "
		  "is under way" },
		{ "mode_done=cache\ncache=miss\ncache_error=no space\n", NULL, V_NETWORK,
		  NET "; the cache's refresh failed: no space" },
		{ "mode_done=cache\ncache=miss\n", NULL, V_COPYING,
		  NET "; the cache is refreshed behind the boot" },
	};

	CHECK_CASES(t);
}

/* A key written twice cannot be told from a forged line: never "from RAM". */
static void test_repeated_key(void)
{
	static const char *const forged[] = {
		"mode_done=off\nmode_done=ram\n",
		"mode_asked=ram\nmode_asked=off\nmode_done=ram\n",
		"mode_done=ram\nfallback=\nfallback=x\n",
		"mode_done=ram\nerror=a\nerror=b\n",
		"mode_done=ram\ntarget=tmpfs\ntarget=zram0\n",
		"mode_done=ram\nsigned_by=lab 01\nsigned_by=evil 02\n",
	};
	size_t i;

	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		CHECK_EQ_INT(v(forged[i], NULL), V_FALLBACK);
		CHECK_EQ_STR(line, "UNKNOWN: the boot report repeats a key (not written by "
			     "ramboot alone)");
	}
	/* a key that merely ends like another is not a repeat */
	CHECK_EQ_INT(v("mode_done=ram\nxmode_done=off\nlazy_target=x\n", NULL), V_RAM);
	/* a repeated state in the lazy file: no status rather than either */
	CHECK_EQ_INT(v("mode_done=lazy\n", "state=copying\nstate=switched\n"), V_COPYING);
	CHECK_EQ_STR(line, "running from the network image; the copier has written no status yet");
}

/* The line is cut to the buffer, always terminated. */
static void test_small_buffer(void)
{
	const char *rep = "mode_done=ram\ntarget=tmpfs\nbytes=1073741824\ncodec=zstd\nhash=ok\n";
	char b[20];
	size_t len;

	for (len = 1; len <= sizeof(b); len++) {
		memset(b, 'x', sizeof(b));
		CHECK_EQ_INT(status_verdict(rep, NULL, b, len), V_RAM);
		CHECK(memchr(b, '\0', len) != NULL);
		CHECK(!strncmp(b, "running from RAM (tmpfs", len - 1));
	}
	memset(b, 'x', sizeof(b));
	CHECK_EQ_INT(status_verdict("mode_done=lazy\n", "state=copying\nsize=100\nbytes_cached=1\n",
				    b, sizeof(b)), V_COPYING);
	CHECK(memchr(b, '\0', sizeof(b)) != NULL);
}

int main(void)
{
	RUN(test_no_report);
	RUN(test_off_prefetch);
	RUN(test_ram);
	RUN(test_fallback);
	RUN(test_lazy);
	RUN(test_cache);
	RUN(test_repeated_key);
	RUN(test_small_buffer);
	return TAP_DONE();
}
