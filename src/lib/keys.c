// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The key table of the boot report and the lazy status file (keys.h).
 * docs/cmdline.md (the report) and docs/lazy.md (the status file) say
 * what each value means.
 */
#include <string.h>

#include "lib/keys.h"

#define R(id, n, k, s) [id] = { n, KEY_REPORT, k, s }
#define L(id, n, k, s) [id] = { n, KEY_LAZY, k, s }

const struct key_info key_table[KEY_COUNT] = {
	R(RK_MODE_ASKED, "mode_asked", KIND_TEXT, SHOW_PLAIN),
	R(RK_MODE_DONE, "mode_done", KIND_TEXT, SHOW_PLAIN),
	R(RK_SOURCE, "source", KIND_TEXT, SHOW_PLAIN),          /* the network image */
	R(RK_RAM_PATH, "ram_path", KIND_TEXT, SHOW_PLAIN),
	R(RK_TARGET, "target", KIND_TEXT, SHOW_PLAIN),
	R(RK_BYTES, "bytes", KIND_BYTES, SHOW_SIZE),
	R(RK_SECONDS, "seconds", KIND_DEC, SHOW_PLAIN),
	R(RK_BYTES_PER_SECOND, "bytes_per_second", KIND_INT, SHOW_PLAIN),
	R(RK_CODEC, "codec", KIND_TEXT, SHOW_PLAIN),
	R(RK_HASH, "hash", KIND_TEXT, SHOW_PLAIN),
	R(RK_VERIFY, "verify", KIND_TEXT, SHOW_PLAIN),
	R(RK_SIGNED_BY, "signed_by", KIND_TEXT, SHOW_PLAIN),
	R(RK_SOURCE_USED, "source_used", KIND_TEXT, SHOW_PLAIN),
	R(RK_SOURCE_FALLBACK, "source_fallback", KIND_TEXT, SHOW_PLAIN),
	R(RK_CHUNKS, "chunks", KIND_INT, SHOW_PLAIN),
	R(RK_CHUNKS_RETRIED, "chunks_retried", KIND_INT, SHOW_PLAIN),
	R(RK_VERITY, "verity", KIND_TEXT, SHOW_PLAIN),
	R(RK_VERITY_DEVICE, "verity_device", KIND_TEXT, SHOW_PLAIN),
	R(RK_VERITY_ROOT, "verity_root", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE, "cache", KIND_TEXT, SHOW_PLAIN),            /* hit | miss | ... */
	R(RK_CACHE_DEVICE, "cache_device", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_SLOT, "cache_slot", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_GENERATION, "cache_generation", KIND_INT, SHOW_PLAIN),
	R(RK_CACHE_IMAGE, "cache_image", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_VERIFIED, "cache_verified", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_MARKED_BAD, "cache_marked_bad", KIND_TEXT, SHOW_PLAIN), /* a | b */
	R(RK_CACHE_AGE, "cache_age", KIND_INT, SHOW_PLAIN),     /* offline: seconds */
	R(RK_FSTYPE, "fstype", KIND_TEXT, SHOW_PLAIN),
	R(RK_SWAP_DEVICE, "swap_device", KIND_TEXT, SHOW_PLAIN),
	R(RK_SWAP_SIZE, "swap_size", KIND_BYTES, SHOW_PLAIN),
	R(RK_SWAP_ALGORITHM, "swap_algorithm", KIND_TEXT, SHOW_PLAIN),
	R(RK_SWAP_PRIORITY, "swap_priority", KIND_INT, SHOW_PLAIN),
	R(RK_FALLBACK, "fallback", KIND_TEXT, SHOW_PLAIN),
	R(RK_ERROR, "error", KIND_TEXT, SHOW_PLAIN),
	R(RK_LAZY_STARTED, "lazy_started", KIND_TIME, SHOW_PLAIN),
	R(RK_LAZY_BYTES_CACHED, "lazy_bytes_cached", KIND_BYTES, SHOW_SIZE),
	R(RK_LAZY_BYTES_NETWORK, "lazy_bytes_network", KIND_BYTES, SHOW_SIZE),
	R(RK_LAZY_SOURCE, "lazy_source", KIND_TEXT, SHOW_PLAIN),
	R(RK_LAZY_SOURCE_FALLBACK, "lazy_source_fallback", KIND_TEXT, SHOW_PLAIN),
	R(RK_LAZY_VERIFIED, "lazy_verified", KIND_TIME, SHOW_PLAIN),
	R(RK_LAZY_SWITCHED, "lazy_switched", KIND_TIME, SHOW_PLAIN),
	R(RK_LAZY_GAVE_UP, "lazy_gave_up", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_BYTES_NETWORK, "cache_bytes_network", KIND_BYTES, SHOW_SIZE),
	R(RK_CACHE_BYTES_LOCAL, "cache_bytes_local", KIND_BYTES, SHOW_SIZE),
	R(RK_CACHE_ERROR, "cache_error", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_REFRESH_SECONDS, "cache_refresh_seconds", KIND_DEC, SHOW_PLAIN),
	R(RK_CACHE_SWITCHED, "cache_switched", KIND_TIME, SHOW_PLAIN),
	R(RK_CACHE_SWITCH_ERROR, "cache_switch_error", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_SCRUB, "cache_scrub", KIND_TEXT, SHOW_PLAIN),  /* ok | bad | error */
	R(RK_CACHE_SCRUB_OFFSET, "cache_scrub_offset", KIND_BYTES, SHOW_PLAIN),
	R(RK_CACHE_SCRUB_ERROR, "cache_scrub_error", KIND_TEXT, SHOW_PLAIN),
	R(RK_CACHE_SCRUB_SECONDS, "cache_scrub_seconds", KIND_DEC, SHOW_PLAIN),
	R(RK_SWAP_NET, "swap_net", KIND_TEXT, SHOW_PLAIN),      /* ADDRESS:PORT */
	/* connected | lost | off | why not */
	R(RK_SWAP_NET_STATE, "swap_net_state", KIND_TEXT, SHOW_PLAIN),
	R(RK_SWAP_NET_BYTES_WRITTEN, "swap_net_bytes_written", KIND_BYTES, SHOW_SIZE),
	R(RK_SWAP_NET_BYTES_READ, "swap_net_bytes_read", KIND_BYTES, SHOW_SIZE),
	R(RK_SWAP_NET_PAGES, "swap_net_pages", KIND_INT, SHOW_PLAIN),
	/* protected | unprotected (why): init's memory.swap.max */
	R(RK_SWAP_NET_PID1, "swap_net_pid1", KIND_TEXT, SHOW_PLAIN),

	L(LK_STATE, "state", KIND_TEXT, SHOW_PLAIN),
	L(LK_PID, "pid", KIND_INT, SHOW_PLAIN),
	L(LK_IMAGE, "image", KIND_TEXT, SHOW_PLAIN),
	L(LK_LOOP, "loop", KIND_TEXT, SHOW_PLAIN),
	L(LK_TARGET, "target", KIND_TEXT, SHOW_PLAIN),
	L(LK_COPY, "copy", KIND_TEXT, SHOW_PLAIN),
	L(LK_SIZE, "size", KIND_BYTES, SHOW_SIZE),
	L(LK_STARTED, "started", KIND_TIME, SHOW_PLAIN),
	L(LK_UPDATED, "updated", KIND_TIME, SHOW_PLAIN),
	L(LK_SOURCE, "source", KIND_TEXT, SHOW_PLAIN),          /* udpcast | network */
	L(LK_SOURCE_FALLBACK, "source_fallback", KIND_TEXT, SHOW_PLAIN),
	L(LK_SOURCE_ERROR, "source_error", KIND_TEXT, SHOW_PLAIN),
	L(LK_BYTES_STREAM, "bytes_stream", KIND_BYTES, SHOW_SIZE),
	L(LK_BYTES_COMPARED, "bytes_compared", KIND_BYTES, SHOW_SIZE),
	L(LK_BYTES_CACHED, "bytes_cached", KIND_BYTES, SHOW_SIZE),
	L(LK_BYTES_NETWORK, "bytes_network", KIND_BYTES, SHOW_SIZE),
	L(LK_MAX_BYTES_PER_SECOND, "max_bytes_per_second", KIND_INT, SHOW_PLAIN),
	L(LK_YIELDS, "yields", KIND_INT, SHOW_PLAIN),
	L(LK_PROFILE, "profile", KIND_TEXT, SHOW_PLAIN),
	L(LK_PROFILE_FILE, "profile_file", KIND_TEXT, SHOW_PLAIN),
	L(LK_HASH, "hash", KIND_TEXT, SHOW_PLAIN),
	L(LK_SHA256, "sha256", KIND_TEXT, SHOW_PLAIN),
	L(LK_SIGNED_BY, "signed_by", KIND_TEXT, SHOW_PLAIN),
	L(LK_VERIFIED, "verified", KIND_TIME, SHOW_PLAIN),
	L(LK_SWITCHED, "switched", KIND_TIME, SHOW_PLAIN),
	L(LK_GAVE_UP, "gave_up", KIND_TEXT, SHOW_PLAIN),
	L(LK_ERROR, "error", KIND_TEXT, SHOW_PLAIN),
	L(LK_CHUNKS, "chunks", KIND_TEXT, SHOW_PLAIN),          /* PRESENT/TOTAL */
	L(LK_FETCHING, "fetching", KIND_INT, SHOW_PLAIN),
	L(LK_FETCH_FAILED, "fetch_failed", KIND_INT, SHOW_PLAIN),
	L(LK_FETCH_ERROR, "fetch_error", KIND_TEXT, SHOW_PLAIN),
};

const char *key_name(enum key_id k)
{
	return (unsigned)k < KEY_COUNT ? key_table[k].name : "";
}

int key_find(enum key_file file, const char *name)
{
	int k;

	for (k = 0; k < KEY_COUNT; k++)
		if (key_table[k].file == file && !strcmp(key_table[k].name, name))
			return k;
	return -1;
}
