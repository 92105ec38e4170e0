/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Compressed swap on zram: `ramboot swap` and `ramboot boot` call
 * swap_setup().
 */
#ifndef RAMBOOT_SWAP_H
#define RAMBOOT_SWAP_H

#include <stdbool.h>
#include <stdint.h>

struct swap_opts {
	const char *size;        /* expression over ram, default "min(ram, 8G)" */
	const char *algorithm;   /* preference list, default "zstd,lzo-rle,lzo,lz4" */
	int priority;            /* default 100 */
	const char *writeback;   /* backing device or NULL */
	const char *mem_limit;   /* expression or NULL */
	bool local_swap;         /* also enable local swap partitions */
	bool tune;               /* apply vm.* / zswap tuning (default true) */
};

void swap_opts_init(struct swap_opts *o);

struct swap_result {
	char device[64];         /* "/dev/zram2" */
	uint64_t size;           /* disksize in bytes */
	char algorithm[32];
	int priority;
	char error[256];         /* one-line error, "" on success */
};

/* Returns RB_EXIT_OK, RB_EXIT_FAIL or RB_EXIT_USAGE; on failure the
 * half-configured device is reset and removed. */
int swap_setup(const struct swap_opts *o, struct swap_result *r);

#endif
