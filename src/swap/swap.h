/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compressed swap on zram: `ramboot swap` and `ramboot boot` call
 * swap_setup().
 */
#ifndef RAMBOOT_SWAP_H
#define RAMBOOT_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "swap/netmem.h"

/* --priority / ramboot.swap.priority: -1 lets the kernel assign one
 * (swapon(2) without SWAP_FLAG_PREFER; it counts down from -2). */
#define SWAP_PRIO_KERNEL (-1)

struct swap_opts {
	const char *size;        /* expression over ram, default "min(ram, 8G)" */
	const char *size_name;   /* its name in messages, default "--size" */
	const char *algorithm;   /* preference list, default "zstd,lzo-rle,lzo,lz4" */
	int priority;            /* 0..32767, default 100; SWAP_PRIO_KERNEL */
	const char *writeback;   /* backing device or NULL */
	const char *mem_limit;   /* expression or NULL */
	bool local_swap;         /* also enable local swap partitions */
	bool tune;               /* apply vm.* / zswap tuning (default true) */
	int swappiness;          /* -1 (default): 180, or 100 where the kernel caps it */
	int page_cluster;        /* default 0; -1 leaves the kernel's value */
	bool keep_zswap;         /* leave zswap as it is (default: disable it) */
	/* the network memory tier as zram's backing device (netmem.h);
	 * NULL or no server: none. Excludes writeback. */
	const struct netmem_opts *net;
};

void swap_opts_init(struct swap_opts *o);

struct swap_result {
	char device[64];         /* "/dev/zram2" */
	uint64_t size;           /* disksize in bytes */
	char algorithm[32];
	int priority;            /* as /proc/swaps shows it */
	char error[256];         /* one-line error, "" on success */
	int zram_id;             /* -1 before the device */
	struct netmem_tier net;  /* with o->net: its state, ready or why not */
};

/* Returns RB_EXIT_OK, RB_EXIT_FAIL or RB_EXIT_USAGE; on failure the
 * half-configured device is reset and removed and r->error holds the
 * one-line message ("zram2: disksize: Cannot allocate memory") for the
 * caller to print. Tuning and local-swap lines go to stderr as they
 * happen; their failures are warnings. */
int swap_setup(const struct swap_opts *o, struct swap_result *r);

/* Swapoff, reset and hot-remove a zram device set up by swap_setup();
 * refuses one whose swap label is not "ramboot-zram" unless force.
 * With the network tier as its backing device, the tier goes too, in
 * the order netmem.h gives. RB_EXIT_FAIL with error "" when the failures
 * were said already (one error line each: the device released, part of
 * the tier left). */
int swap_release(const char *device, bool force, char *error, size_t len);

/* Is there a swap partition on a local disk (TYPE=swap by blkid)? */
bool swap_local_present(void);

/* swapon(2) flags for a priority: SWAP_FLAG_PREFER with it for 0..32767,
 * none for a negative one (the kernel assigns it). */
int swap_flags(int prio);

/* Choosing the compressor. What that needs from a device: swap_setup()
 * passes the zram attribute and modprobe, tests a model of the kernel. */
struct swap_algo_dev {
	/* Read comp_algorithm: "lzo [lzo-rle] lz4". 0 or -errno. */
	int (*read)(void *ctx, char *buf, size_t len);
	/* Store one name in comp_algorithm. 0 or -errno; -EINVAL and
	 * -ENOENT mean the kernel refuses that compressor. */
	int (*write)(void *ctx, const char *name);
	/* Load the module of a name that is not offered; NULL: never. */
	int (*load)(void *ctx, const char *name);
	void *ctx;
	const char *name;        /* the device in messages: "zram2" */
};

/* Store the first name of list (comma-separated, empty items skipped)
 * that the device offers, or offers once load() succeeded, and accepts;
 * a refused one is a warning and the next is tried. Returns 1 with out =
 * the name stored; 0 when none was (out = the kernel's current one, or
 * "unknown"; a warning says so); -errno when a store fails otherwise
 * (out = the name refused). */
int swap_choose_algorithm(const struct swap_algo_dev *d, const char *list, char *out,
			  size_t len);

#endif
