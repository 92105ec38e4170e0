/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between swap.c and swap_cmd.c: the defaults of swap_opts_init(), which
 * `ramboot swap --help` names, and swapon(2)'s priority flags.
 */
#ifndef RAMBOOT_SWAPINT_H
#define RAMBOOT_SWAPINT_H

#include <sys/swap.h>

#ifndef SWAP_FLAG_PREFER
#define SWAP_FLAG_PREFER 0x8000
#define SWAP_FLAG_PRIO_MASK 0x7fff
#define SWAP_FLAG_PRIO_SHIFT 0
#endif

#define DEFAULT_SIZE "min(ram, 8G)"
#define DEFAULT_ALGORITHMS "zstd,lzo-rle,lzo,lz4"
#define DEFAULT_PRIORITY 100
/* Local disk swap goes this far below zram: it is used only when the
 * compressed pool is full. */
#define LOCAL_PRIO_GAP 50

#endif
