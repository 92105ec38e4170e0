/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory rule of a copy into RAM, checked before anything is made
 * (the loader's, the lazy copier's): MemAvailable still holds the
 * reserve after the image and the decoder's own memory are taken.
 */
#ifndef RAMBOOT_MEMROOM_H
#define RAMBOOT_MEMROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether avail (MemAvailable) holds need bytes of image (0: its size is
 * not known), dec bytes of decoder memory and the reserve. true, or
 * false with the one-line reason in msg ("not enough memory: image
 * 1.0 GiB, MemAvailable 900.0 MiB, reserve 256.0 MiB"). */
bool mem_room(uint64_t avail, uint64_t need, uint64_t dec, uint64_t reserve, char *msg,
	      size_t msglen);

#endif
