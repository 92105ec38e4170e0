// SPDX-License-Identifier: GPL-2.0-or-later
/* The tmpfs of a RAM copy (tmpfs.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "lib/tmpfs.h"

/* tmpfs takes "noswap" from Linux 6.4 on; older kernels refuse the mount
 * and log "Unknown parameter" on the console, so do not ask them. */
static bool tmpfs_has_noswap(void)
{
	struct utsname un;
	int major = 0, minor = 0;

	if (uname(&un) < 0 || sscanf(un.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 4);
}

int tmpfs_mount(const char *dir, uint64_t size, char *opts, size_t optslen)
{
	char o[128];
	int rc;

	size = (size + 4095) & ~4095ULL;
	snprintf(o, sizeof(o), "size=%" PRIu64 ",mode=0755%s", size,
		 tmpfs_has_noswap() ? ",noswap" : "");
	rc = mount("ramboot", dir, "tmpfs", TMPFS_FLAGS, o);
	if (rc < 0 && errno == EINVAL && strstr(o, "noswap")) {
		snprintf(o, sizeof(o), "size=%" PRIu64 ",mode=0755", size);
		rc = mount("ramboot", dir, "tmpfs", TMPFS_FLAGS, o);
	}
	if (rc < 0)
		return -errno;
	if (opts)
		snprintf(opts, optslen, "%s", o);
	return 0;
}
