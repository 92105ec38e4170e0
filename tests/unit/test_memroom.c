// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/memroom.c: the memory rule the loader and the lazy copier check
 * before a copy, and its one message. */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/memroom.h"

static void rule(void)
{
	char msg[200] = "";

	/* Exactly the reserve left: room. */
	CHECK(mem_room(1000 * MiB, 700 * MiB, 44 * MiB, 256 * MiB, msg, sizeof(msg)));
	CHECK_EQ_STR(msg, "");
	/* One byte of decoder memory more: none. */
	CHECK(!mem_room(1000 * MiB, 700 * MiB, 44 * MiB + 1, 256 * MiB, msg, sizeof(msg)));
	CHECK_EQ_STR(msg, "not enough memory: image 700.0 MiB, MemAvailable 1000.0 MiB, "
		     "reserve 256.0 MiB");
	/* Less than the reserve, nothing else asked: none (no wrap around). */
	CHECK(!mem_room(100 * MiB, 0, 0, 256 * MiB, msg, sizeof(msg)));
	CHECK_EQ_STR(msg, "not enough memory: image of unknown size, MemAvailable 100.0 MiB, "
		     "reserve 256.0 MiB");
	CHECK(!mem_room(300 * MiB, UINT64_MAX, 0, 256 * MiB, msg, sizeof(msg)));
	CHECK(!mem_room(300 * MiB, 10 * MiB, UINT64_MAX, 256 * MiB, msg, sizeof(msg)));
}

int main(void)
{
	RUN(rule);
	return TAP_DONE();
}
