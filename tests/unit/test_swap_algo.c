// SPDX-License-Identifier: GPL-2.0-or-later
/* Choosing the compressor: swap_choose_algorithm(), the function
 * swap_setup() calls, against a model of the kernel's comp_algorithm
 * (what it lists, which stores it refuses, what modprobe adds); the
 * comp_algorithm text helpers; zram device names and swapon flags. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/swap.h>

#include "tap.h"
#include "swap/swap.h"
#include "dev/zram.h"

struct model {
	char avail[128];         /* what comp_algorithm lists */
	const char *modules;     /* names modprobe makes appear ("zstd,842") */
	const char *refuse;      /* listed names whose store the kernel refuses */
	int refuse_err;          /* the error of a refused store (default EINVAL) */
	int write_err;           /* an error every store fails with (0: none) */
	int read_err;
	char log[256];           /* "load zstd;write zstd;" */
};

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static void logf_(struct model *m, const char *what, const char *name)
{
	size_t l = strlen(m->log);

	snprintf(m->log + l, sizeof(m->log) - l, "%s %s;", what, name);
}

static int m_read(void *ctx, char *buf, size_t len)
{
	struct model *m = ctx;

	if (m->read_err)
		return -m->read_err;
	snprintf(buf, len, "%s", m->avail);
	return 0;
}

static int m_write(void *ctx, const char *name)
{
	struct model *m = ctx;

	logf_(m, "write", name);
	if (m->write_err)
		return -m->write_err;
	if (m->refuse && in_list(m->refuse, name))
		return -(m->refuse_err ? m->refuse_err : EINVAL);
	return 0;
}

static int m_load(void *ctx, const char *name)
{
	struct model *m = ctx;
	size_t l = strlen(m->avail);

	logf_(m, "load", name);
	if (!m->modules || !in_list(m->modules, name))
		return -ENOENT;
	snprintf(m->avail + l, sizeof(m->avail) - l, " %s", name);
	return 0;
}

/* choose(model, list, with_modprobe, out): swap_choose_algorithm on the model. */
static int choose(struct model *m, const char *list, bool modprobe, char *out, size_t len)
{
	struct swap_algo_dev d = {
		.read = m_read,
		.write = m_write,
		.load = modprobe ? m_load : NULL,
		.ctx = m,
		.name = "zram9",
	};

	return swap_choose_algorithm(&d, list, out, len);
}

/* This kernel: zstd missing (built as a module not loaded, or absent). */
#define AVAIL "[lzo-rle] lzo lz4 "

static void first_offered_wins(void)
{
	struct model m = { .avail = AVAIL };
	char out[32];

	CHECK_EQ_INT(choose(&m, "zstd,lzo-rle,lzo,lz4", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_STR(m.log, "write lzo-rle;");

	m = (struct model){ .avail = AVAIL };
	CHECK_EQ_INT(choose(&m, "lz4,lzo", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lz4");
	CHECK_EQ_STR(m.log, "write lz4;");

	m = (struct model){ .avail = "lzo lzo-rle lz4 lz4hc 842 [zstd]" };
	CHECK_EQ_INT(choose(&m, "zstd,lzo-rle", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "zstd");

	m = (struct model){ .avail = "lzo [lzo-rle] lz4 lz4hc zstd" };
	CHECK_EQ_INT(choose(&m, "lz4hc,zstd", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lz4hc");

	/* Empty items and a trailing comma are ignored. */
	m = (struct model){ .avail = AVAIL };
	CHECK_EQ_INT(choose(&m, ",,zstd,,lz4,", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lz4");
	CHECK_EQ_STR(m.log, "write lz4;");

	/* A name longer than the result buffer is skipped, not cut. */
	m = (struct model){ .avail = "[lzo-rle] lzo" };
	CHECK_EQ_INT(choose(&m, "lzo-rle,lzo", false, out, 6), 1);
	CHECK_EQ_STR(out, "lzo");
	CHECK_EQ_STR(m.log, "write lzo;");
}

static void names_match_whole_words(void)
{
	struct model m = { .avail = "[lzo-rle] lz4hc" };
	char out[32];

	/* "lzo" must not match inside "lzo-rle", nor "lz4" inside "lz4hc". */
	CHECK_EQ_INT(choose(&m, "lzo,lz4", false, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_STR(m.log, "");
	CHECK(zram_algo_offered("[lzo-rle] lzo", "lzo"));
	CHECK(zram_algo_offered("[lzo-rle] lzo", "lzo-rle"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", "rle"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", "lzo-"));
	CHECK(!zram_algo_offered("[lzo-rle] lzo", ""));
	CHECK(zram_algo_offered("lzo [zstd]\n", "zstd"));
}

/* None offered: the kernel's current compressor is kept, nothing stored. */
static void none_offered(void)
{
	struct model m = { .avail = AVAIL };
	char out[32];

	CHECK_EQ_INT(choose(&m, "zstd,deflate", false, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_INT(choose(&m, "", false, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_STR(m.log, "");

	m = (struct model){ .avail = "" };
	CHECK_EQ_INT(choose(&m, "lzo", false, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "unknown");

	/* comp_algorithm unreadable: kept as it is, too. */
	m = (struct model){ .avail = AVAIL, .read_err = EIO };
	CHECK_EQ_INT(choose(&m, "lzo", true, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "unknown");
	CHECK_EQ_STR(m.log, "");
}

/* Listed but refused (the kernel could not load the crypto module): the
 * next name is tried. */
static void refused_then_next(void)
{
	struct model m = { .avail = "lzo [lzo-rle] lz4 zstd", .refuse = "zstd" };
	char out[32];

	CHECK_EQ_INT(choose(&m, "zstd,lzo-rle,lz4", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_STR(m.log, "write zstd;write lzo-rle;");

	m = (struct model){ .avail = "lzo [lzo-rle] lz4 zstd", .refuse = "zstd,lz4",
			    .refuse_err = ENOENT };
	CHECK_EQ_INT(choose(&m, "zstd,lz4,lzo", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lzo");
	CHECK_EQ_STR(m.log, "write zstd;write lz4;write lzo;");

	/* Every one refused: the kernel default stays. */
	m = (struct model){ .avail = "lzo [lzo-rle] zstd", .refuse = "zstd,lzo" };
	CHECK_EQ_INT(choose(&m, "zstd,lzo", false, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "lzo-rle");
	CHECK_EQ_STR(m.log, "write zstd;write lzo;");
}

/* Any other error of the store ends the choice: the caller fails. */
static void other_error_stops(void)
{
	struct model m = { .avail = "lzo [lzo-rle] zstd", .write_err = EBUSY };
	char out[32];

	CHECK_EQ_INT(choose(&m, "zstd,lzo", false, out, sizeof(out)), -EBUSY);
	CHECK_EQ_STR(out, "zstd");
	CHECK_EQ_STR(m.log, "write zstd;");
}

/* A name not listed gets one modprobe (real root only), then counts if
 * the kernel lists it. */
static void modprobe_first(void)
{
	struct model m = { .avail = AVAIL, .modules = "zstd" };
	char out[32];

	CHECK_EQ_INT(choose(&m, "zstd,lzo-rle", true, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "zstd");
	CHECK_EQ_STR(m.log, "load zstd;write zstd;");

	m = (struct model){ .avail = AVAIL };
	CHECK_EQ_INT(choose(&m, "zstd,842,lz4", true, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lz4");
	CHECK_EQ_STR(m.log, "load zstd;load 842;write lz4;");

	/* Loaded, listed, and still refused. */
	m = (struct model){ .avail = AVAIL, .modules = "zstd", .refuse = "zstd" };
	CHECK_EQ_INT(choose(&m, "zstd,lzo", true, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lzo");
	CHECK_EQ_STR(m.log, "load zstd;write zstd;write lzo;");

	/* No modprobe (a fixture root): not listed is not offered. */
	m = (struct model){ .avail = AVAIL, .modules = "zstd" };
	CHECK_EQ_INT(choose(&m, "zstd,lzo", false, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "lzo");
	CHECK_EQ_STR(m.log, "write lzo;");
}

static void current_in_brackets(void)
{
	char out[32];

	CHECK_EQ_STR(zram_algo_current(AVAIL, out, sizeof(out)), "lzo-rle");
	CHECK_EQ_STR(zram_algo_current("lzo lz4 [zstd]", out, sizeof(out)), "zstd");
	CHECK(zram_algo_current("lzo lz4", out, sizeof(out)) == NULL);
}

static void device_names(void)
{
	CHECK_EQ_INT(zram_id_from_path("/dev/zram0"), 0);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram12"), 12);
	CHECK_EQ_INT(zram_id_from_path("zram3"), 3);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram1p1"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/sda2"), -EINVAL);
	CHECK_EQ_INT(zram_id_from_path("/dev/zram-1"), -EINVAL);
}

/* -1 (ramboot.swap.priority=-1): swapon without SWAP_FLAG_PREFER. */
static void swapon_flags(void)
{
	CHECK_EQ_INT(swap_flags(SWAP_PRIO_KERNEL), 0);
	CHECK_EQ_INT(swap_flags(0), SWAP_FLAG_PREFER);
	CHECK_EQ_INT(swap_flags(100), SWAP_FLAG_PREFER | 100);
	CHECK_EQ_INT(swap_flags(32767), SWAP_FLAG_PREFER | 32767);
}

int main(void)
{
	RUN(first_offered_wins);
	RUN(names_match_whole_words);
	RUN(none_offered);
	RUN(refused_then_next);
	RUN(other_error_stops);
	RUN(modprobe_first);
	RUN(current_in_brackets);
	RUN(device_names);
	RUN(swapon_flags);
	return TAP_DONE();
}
