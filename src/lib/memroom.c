// SPDX-License-Identifier: GPL-2.0-or-later
/* The memory rule of a copy into RAM: see memroom.h. */
#include <stdio.h>

#include "lib/memroom.h"
#include "lib/units.h"

bool mem_room(uint64_t avail, uint64_t need, uint64_t dec, uint64_t reserve, char *msg,
	      size_t msglen)
{
	char a[32], b[32], c[32];

	if (avail >= reserve && avail - reserve >= need && avail - reserve - need >= dec)
		return true;
	snprintf(msg, msglen, "not enough memory: image %s, MemAvailable %s, reserve %s",
		 need ? fmt_size(need, a, sizeof(a)) : "of unknown size",
		 fmt_size(avail, b, sizeof(b)), fmt_size(reserve, c, sizeof(c)));
	return false;
}
