// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The verdict of `ramboot status`: one line a person reads at a glance,
 * from the boot report (/run/ramboot/report) and the lazy copier's status
 * file, and whether the client runs from RAM (`ramboot status --check`).
 *
 * Both files are key=value lines written by ramboot. A key that appears
 * twice cannot be told apart from a forged line (an unescaped value that
 * held a newline), so a repeated key is never taken: the verdict then
 * says that the report cannot be read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/report.h"
#include "lib/units.h"
#include "status/verdict.h"

/* Append ", WHAT" (or " (WHAT" for the first) to the detail list. */
static void detail(char *buf, size_t len, bool *first, const char *what)
{
	size_t n = strlen(buf);

	if (n + 1 >= len)
		return;
	snprintf(buf + n, len - n, "%s%s", *first ? " (" : ", ", what);
	*first = false;
}

/* The details of a RAM copy: target, size and codec, verified, signed. */
static void ram_details(const char *report, char *buf, size_t len)
{
	char v[256], s[32], t[300];
	bool first = true;

	if (report_text_get(report, key_name(RK_TARGET), v, sizeof(v)) > 0 && v[0])
		detail(buf, len, &first, v);
	if (report_text_get(report, key_name(RK_BYTES), v, sizeof(v)) > 0 && v[0]) {
		char c[64];

		fmt_size(strtoull(v, NULL, 10), s, sizeof(s));
		if (report_text_get(report, key_name(RK_CODEC), c, sizeof(c)) > 0 && c[0] && strcmp(c, "none"))
			snprintf(t, sizeof(t), "%s from %s", s, c);
		else
			snprintf(t, sizeof(t), "%s", s);
		detail(buf, len, &first, t);
	}
	if (report_text_get(report, key_name(RK_HASH), v, sizeof(v)) > 0 && !strcmp(v, "ok"))
		detail(buf, len, &first, "verified");
	else
		detail(buf, len, &first, "not verified");
	if (report_text_get(report, key_name(RK_SIGNED_BY), v, sizeof(v)) > 0 && v[0]) {
		v[strcspn(v, " ")] = '\0';
		snprintf(t, sizeof(t), "signed by %s", v);
		detail(buf, len, &first, t);
	}
	if (report_text_get(report, key_name(RK_VERITY), v, sizeof(v)) > 0 && !strcmp(v, "on"))
		detail(buf, len, &first, "dm-verity");
	if (!first) {
		size_t n = strlen(buf);

		if (n + 1 < len)
			snprintf(buf + n, len - n, ")");
	}
}

/* ": 42.4% of 1.0 GiB" from the copier's byte counts (page cache,
 * network and a multicast stream), when it has them. */
static void lazy_progress(const char *lazy, char *buf, size_t len)
{
	static const enum key_id keys[] = { LK_BYTES_CACHED, LK_BYTES_NETWORK, LK_BYTES_STREAM };
	unsigned long long done = 0, size;
	char v[64], s[32];
	size_t i, n;
	bool any = false;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (report_text_get(lazy, key_name(keys[i]), v, sizeof(v)) > 0 && v[0]) {
			done += strtoull(v, NULL, 10);
			any = true;
		}
	}
	if (!any || report_text_get(lazy, key_name(LK_SIZE), v, sizeof(v)) <= 0 || !(size = strtoull(v, NULL, 10)))
		return;
	if (done > size)
		done = size;
	n = strlen(buf);
	/* rounded down, as the lazy section's percentage; done <= size < 2^64 / 1000 */
	if (size > UINT64_MAX / 1000)
		return;
	done = done * 1000 / size;
	snprintf(buf + n, len - n, ": %llu.%llu%% of %s", done / 10, done % 10,
		 fmt_size(size, s, sizeof(s)));
}

/* The report's value of k, "" when it has none. */
static const char *rget(const char *report, enum key_id k, char *buf, size_t len)
{
	if (report_text_get(report, key_name(k), buf, len) <= 0)
		buf[0] = '\0';
	return buf;
}

/* mode_done=cache (docs/cache.md, "At boot"): a hit, an offline boot, a
 * miss whose refresh runs or ended, and the switch after it. */
static enum verdict cache_verdict(const char *report, char *buf, size_t len)
{
	char c[32], slot[8], gen[32], ver[32], dev[256], at[32], err[512], age[32], scrub[16];

	rget(report, RK_CACHE, c, sizeof(c));
	rget(report, RK_CACHE_SLOT, slot, sizeof(slot));
	rget(report, RK_CACHE_GENERATION, gen, sizeof(gen));
	rget(report, RK_CACHE_DEVICE, dev, sizeof(dev));
	rget(report, RK_CACHE_SCRUB, scrub, sizeof(scrub));
	if (!strcmp(c, "hit") && !strcmp(scrub, "bad")) {
		/* The scrub behind the boot met a block that fails dm-verity. */
		rget(report, RK_CACHE_SCRUB_OFFSET, at, sizeof(at));
		snprintf(buf, len, "running from the local cache (slot %s of %s, generation %s), "
			 "which failed dm-verity at byte %s: marked bad, the next boot boots from the "
			 "network", slot, dev, gen, at);
		return V_DISK;
	}
	if (!strcmp(c, "hit") || !strcmp(c, "offline")) {
		rget(report, RK_CACHE_VERIFIED, ver, sizeof(ver));
		rget(report, RK_CACHE_AGE, age, sizeof(age));
		snprintf(buf, len, "running from the local cache (slot %s of %s, generation %s, %s)%s%s%s",
			 slot, dev, gen, !strcmp(ver, "verity") ? "every block checked by dm-verity" :
			 "verified when it was written", !strcmp(c, "offline") ?
			 " OFFLINE: the server's manifest could not be read; the slot is " : "",
			 !strcmp(c, "offline") ? age : "", !strcmp(c, "offline") ? " s old" : "");
		return V_DISK;
	}
	rget(report, RK_CACHE_SWITCHED, at, sizeof(at));
	rget(report, RK_CACHE_SWITCH_ERROR, err, sizeof(err));
	if (!strcmp(c, "refreshed") && at[0]) {
		snprintf(buf, len, "running from the local cache (slot %s of %s, generation %s, "
			 "refreshed behind the boot, switched at %s s)", slot, dev, gen, at);
		return V_DISK;
	}
	if (!strcmp(c, "refreshed") && err[0]) {
		snprintf(buf, len, "running from the network image; the cache was refreshed (slot %s, "
			 "generation %s), used from the next boot: %s", slot, gen, err);
		return V_NETWORK;
	}
	if (!strcmp(c, "refreshed")) {
		snprintf(buf, len, "running from the network image; the cache was refreshed (slot %s, "
			 "generation %s), the switch to it is under way", slot, gen);
		return V_COPYING;
	}
	rget(report, RK_CACHE_ERROR, err, sizeof(err));
	if (err[0]) {
		snprintf(buf, len, "running from the network image; the cache's refresh failed: %s", err);
		return V_NETWORK;
	}
	snprintf(buf, len, "running from the network image; the cache is refreshed behind the boot");
	return V_COPYING;
}

enum verdict status_verdict(const char *report, const char *lazy, char *buf, size_t len)
{
	char asked[64], done[64], why[256], err[512], state[64], v[256];
	enum verdict res;

	if (!report) {
		snprintf(buf, len, "no boot report: ramboot did not run");
		return V_NONE;
	}
	if (report_text_get(report, key_name(RK_MODE_ASKED), asked, sizeof(asked)) < 0 ||
	    report_text_get(report, key_name(RK_MODE_DONE), done, sizeof(done)) < 0 ||
	    report_text_get(report, key_name(RK_FALLBACK), why, sizeof(why)) < 0 ||
	    report_text_get(report, key_name(RK_ERROR), err, sizeof(err)) < 0 ||
	    report_text_get(report, key_name(RK_TARGET), v, sizeof(v)) < 0 ||
	    report_text_get(report, key_name(RK_SIGNED_BY), v, sizeof(v)) < 0) {
		snprintf(buf, len, "UNKNOWN: the boot report repeats a key (not written by ramboot alone)");
		return V_FALLBACK;
	}
	if (!strcmp(done, "ram")) {
		snprintf(buf, len, "running from RAM");
		ram_details(report, buf, len);
		return V_RAM;
	}
	if (!strcmp(done, "lazy")) {
		if (lazy && report_text_get(lazy, key_name(LK_STATE), state, sizeof(state)) < 0)
			state[0] = '\0';
		else if (!lazy)
			state[0] = '\0';
		if (report_text_get(report, key_name(RK_LAZY_SWITCHED), v, sizeof(v)) > 0 && v[0])
			snprintf(state, sizeof(state), "switched");
		if (!strcmp(state, "switched")) {
			snprintf(buf, len, "running from RAM (lazy copy, switched");
			if ((lazy && report_text_get(lazy, key_name(LK_SWITCHED), v, sizeof(v)) > 0 && v[0]) ||
			    (report_text_get(report, key_name(RK_LAZY_SWITCHED), v, sizeof(v)) > 0 && v[0])) {
				size_t n = strlen(buf);

				snprintf(buf + n, len - n, " at %s s", v);
			}
			snprintf(buf + strlen(buf), len - strlen(buf), ")");
			return V_RAM;
		}
		if (!strcmp(state, "gave-up")) {
			char g[128], e[256];

			if (report_text_get(lazy, key_name(LK_GAVE_UP), g, sizeof(g)) <= 0 || !g[0])
				snprintf(g, sizeof(g), "unknown");
			if (report_text_get(lazy, key_name(LK_ERROR), e, sizeof(e)) > 0 && e[0])
				snprintf(buf, len, "FALLBACK to the network image: the lazy copy gave up: %s (%s)", g, e);
			else
				snprintf(buf, len, "FALLBACK to the network image: the lazy copy gave up: %s", g);
			return V_FALLBACK;
		}
		if (!state[0]) {
			snprintf(buf, len, "running from the network image; the copier has written no status yet");
			return V_COPYING;
		}
		snprintf(buf, len, "running from the network image; the copier is %s", state);
		lazy_progress(lazy, buf, len);
		return V_COPYING;
	}
	if (!strcmp(done, "cache"))
		return cache_verdict(report, buf, len);
	if (!strcmp(done, "prefetch")) {
		snprintf(buf, len, "running from the network image, read ahead into the page cache (prefetch)");
		return V_NETWORK;
	}
	if (why[0]) {
		if (err[0])
			snprintf(buf, len, "FALLBACK to the network image: %s (%s)", why, err);
		else
			snprintf(buf, len, "FALLBACK to the network image: %s", why);
		return V_FALLBACK;
	}
	if (asked[0] && strcmp(asked, "off")) {
		snprintf(buf, len, "FALLBACK to the network image: ramboot=%s asked, %s done",
			 asked, done[0] ? done : "nothing");
		return V_FALLBACK;
	}
	res = V_NETWORK;
	snprintf(buf, len, "running from the network image (ramboot=off)");
	return res;
}
