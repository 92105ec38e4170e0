/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `ramboot verity format`'s work, for the command and its tests.
 */
#ifndef RAMBOOT_VERITY_FORMAT_H
#define RAMBOOT_VERITY_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/verity.h"

/*
 * `ramboot verity format`: hash IMAGE (a regular file or a block device)
 * into HASHFILE, written aside and renamed into place (outfile.h;
 * replace: an existing regular file may be replaced). salt NULL: 32
 * random bytes; salt_len 0 with salt set: no salt. On success p and root
 * describe the result. 0 or -errno with the reason in err.
 */
int verity_format(const char *image, const char *hashfile, bool replace,
		  const uint8_t *salt, size_t salt_len, struct verity_params *p,
		  uint8_t root[VERITY_DIGEST], char *err, size_t errlen);

#endif
