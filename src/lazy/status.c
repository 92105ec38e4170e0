// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status file and the boot report: what the run says of itself
 * (docs/lazy.md, "The status file"), its errors and fallbacks named
 * by lib/runerr's one table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lazy/lazyint.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/report.h"
#include "lib/hex.h"
#include "lib/text.h"

/* Where the copy's bytes came from: the status file's source=, the
 * report's lazy_source=. */
static const char *lazy_source_name(const struct lazy *L)
{
	if (L->o->source_name)
		return L->o->source_name;
	return L->r->stream && L->r->fallback == LAZY_FB_NONE ? "udpcast" : "network";
}

void lazy_status_write(struct lazy *L)
{
	const struct lazy_result *r = L->r;
	const struct lazy_opts *o = L->o;
	char buf[16384], t[4][32], num[8][32], err[PATH_MAX + 64], hs[3][32];
	struct nbds_stats st = { 0 };
	bool http = lazy_http_stats(L, &st);
	const double times[4] = { r->started, r->verified, r->switched, boot_sec() };
	const char *hash;
	struct outfile of;
	int n, i, rc;

	if (L->status_dirfd < 0)
		return;
	for (i = 0; i < 4; i++) {
		if (times[i] > 0)
			snprintf(t[i], sizeof(t[i]), "%.2f", times[i]);
		else
			t[i][0] = '\0';
	}
	if (!L->want_sha[0])
		hash = "none";
	else if (!L->hash_done)
		hash = "pending";
	else
		hash = L->hash_ok ? "ok" : "mismatch";
	snprintf(num[0], sizeof(num[0]), "%d", (int)getpid());
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, r->size);
	snprintf(num[2], sizeof(num[2]), "%" PRIu64, r->bytes_stream);
	snprintf(num[3], sizeof(num[3]), "%" PRIu64, r->bytes_compared);
	snprintf(num[4], sizeof(num[4]), "%" PRIu64, r->bytes_cached);
	snprintf(num[5], sizeof(num[5]), "%" PRIu64, r->bytes_network);
	snprintf(num[6], sizeof(num[6]), "%" PRIu64, o->rate);
	snprintf(num[7], sizeof(num[7]), "%" PRIu64,
		 lazy_copy_yields(L));
	hs[0][0] = hs[1][0] = hs[2][0] = '\0';
	if (http) {
		snprintf(hs[0], sizeof(hs[0]), "%" PRIu32 "/%" PRIu32, st.present, st.nchunks);
		snprintf(hs[1], sizeof(hs[1]), "%" PRIu32, st.fetching);
		snprintf(hs[2], sizeof(hs[2]), "%" PRIu64, st.failed);
	}
	{
		/* Every value through report_kv(): one line each, whatever
		 * an image path or an error message holds. */
		const struct { enum key_id key; const char *val; } kv[] = {
			{ LK_STATE, L->state }, { LK_PID, num[0] }, { LK_IMAGE, o->image },
			{ LK_LOOP, r->loop },
			{ LK_TARGET, o->target == LAZY_TARGET_ZRAM ? "zram" : "tmpfs" },
			{ LK_COPY, r->copy }, { LK_SIZE, num[1] }, { LK_STARTED, t[0] },
			{ LK_UPDATED, t[3] },
			{ LK_SOURCE, lazy_source_name(L) },
			{ LK_SOURCE_FALLBACK, lazy_fallback_name(r->fallback) },
			{ LK_SOURCE_ERROR, r->fallback_msg }, { LK_BYTES_STREAM, num[2] },
			{ LK_BYTES_COMPARED, num[3] }, { LK_BYTES_CACHED, num[4] },
			{ LK_BYTES_NETWORK, num[5] }, { LK_MAX_BYTES_PER_SECOND, num[6] }, { LK_YIELDS, num[7] },
			{ LK_PROFILE, L->profile_state ? L->profile_state : "none" },
			{ LK_PROFILE_FILE, L->profile_path }, { LK_HASH, hash },
			{ LK_SHA256, r->sha256 }, { LK_SIGNED_BY, r->signed_by },
			{ LK_VERIFIED, t[1] }, { LK_SWITCHED, t[2] },
			{ LK_GAVE_UP, r->err != LAZY_OK ? lazy_err_name(r->err) : "" },
			{ LK_ERROR, r->error },
			{ LK_CHUNKS, hs[0] }, { LK_FETCHING, hs[1] }, { LK_FETCH_FAILED, hs[2] },
			{ LK_FETCH_ERROR, st.last_error },
		};
		size_t pos = 0, k;

		for (k = 0; k < sizeof(kv) / sizeof(kv[0]); k++)
			if (report_kv(buf, sizeof(buf), &pos, key_name(kv[k].key), kv[k].val) < 0)
				return;
		n = (int)pos;
	}
	/* Through the status directory's descriptor: no path is looked up. */
	rc = outfile_openat(&of, L->status_dirfd, L->status_name, 0644, OUTFILE_REPLACE, NULL,
			    err, sizeof(err));
	if (rc == 0) {
		rc = outfile_write(&of, buf, (size_t)n);
		if (rc < 0)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
	}
	if (rc < 0 && !L->status_warned) {
		rb_warn("status file %s: %s", L->status_name, err);
		L->status_warned = true;
	}
	L->last_status = now_sec();
}

void lazy_set_state(struct lazy *L, const char *state)
{
	L->state = state;
	lazy_status_write(L);
}

/*
 * The outcome in the boot report too (/run/ramboot/report, beside the
 * status file), for whoever reads only that: the timeline as lazy_* keys;
 * a copy that gave up is a fallback there (mode_done=off), one that
 * switched is the RAM path. Only a report that exists is amended (a
 * `ramboot lazy` run by hand has none), through the status directory's
 * descriptor.
 */
/* The boot's report written (lazy_opts.boot_report): mode_done=lazy in
 * it. Bounded: a boot that died meanwhile leaves the amendment to be
 * made on whatever is there. */
static void wait_boot_report(const struct lazy *L)
{
	char buf[16384], v[16];

	for (int i = 0; i < LAZY_REPORT_WAIT_S * 20; i++) {
		int fd = openat(L->status_dirfd, "report", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

		if (fd >= 0) {
			ssize_t n = read_full(fd, buf, sizeof(buf) - 1);

			(void)close(fd);
			if (n > 0) {
				buf[n] = '\0';
				if (report_text_get(buf, "mode_done", v, sizeof(v)) > 0 &&
				    !strcmp(v, "lazy"))
					return;
			}
		}
		usleep(50000);
	}
}

void lazy_report_amend(struct lazy *L, bool switched)
{
	const struct lazy_result *r = L->r;
	char t[3][32], num[2][32], fb[600], e[sizeof(r->error)];
	struct report_set set[] = {
		{ RK_LAZY_STARTED, t[0] }, { RK_LAZY_BYTES_CACHED, num[0] },
		{ RK_LAZY_BYTES_NETWORK, num[1] },
		{ RK_LAZY_SOURCE, lazy_source_name(L) },
		{ RK_LAZY_SOURCE_FALLBACK, lazy_fallback_name(r->fallback) },
		{ RK_LAZY_VERIFIED, t[1] },
		/* switched: the copy is the root now; else the boot stays on
		 * the network image, and the report says why */
		{ RK_LAZY_SWITCHED, switched ? t[2] : NULL },
		{ RK_RAM_PATH, switched ? r->copy : NULL },
		{ RK_LAZY_GAVE_UP, switched ? NULL : lazy_err_name(r->err) },
		{ RK_MODE_DONE, switched ? NULL : "off" },
		{ RK_FALLBACK, switched ? NULL : fb },
		{ RK_ERROR, switched ? NULL : e },
	};

	if (L->status_dirfd < 0)
		return;
	/* A switch is the background copier's, after the boot's start of
	 * it: never the boot's own wait (a start that failed amends at once). */
	if (switched && L->o->boot_report)
		wait_boot_report(L);
	snprintf(t[0], sizeof(t[0]), "%.2f", r->started);
	if (r->verified > 0)
		snprintf(t[1], sizeof(t[1]), "%.2f", r->verified);
	else
		t[1][0] = '\0';
	snprintf(t[2], sizeof(t[2]), "%.2f", r->switched);
	snprintf(num[0], sizeof(num[0]), "%" PRIu64, r->bytes_cached);
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, r->bytes_network);
	snprintf(fb, sizeof(fb), "lazy copy gave up: %s", lazy_err_name(r->err));
	text_scrub(e, sizeof(e), r->error, SIZE_MAX, ' ');
	/* No report (a copier run by hand): nothing to amend. */
	(void)report_amend_at(L->status_dirfd, set, ARRAY_SIZE(set), 0);
}
