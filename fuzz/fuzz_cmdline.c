// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the boot settings parsers on arbitrary text, as the
 * kernel command line (split the kernel's way) and as /etc/ramboot.conf.
 * Whatever the input, the settings stay NUL-terminated and bounded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/cmdline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct boot_settings s;
	char *line;

	if (size > 8192)
		return 0;
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	settings_init(&s);
	settings_parse_cmdline(&s, line);
	if (!memchr(s.image, '\0', sizeof(s.image)) || s.nwarn < 0)
		abort();
	settings_init(&s);
	settings_parse_conf(&s, (const char *)data, size);
	if (!memchr(s.image, '\0', sizeof(s.image)) || s.nwarn < 0)
		abort();
	free(line);
	return 0;
}
