// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The network memory tier's settings (netmem.h): the defaults, and the
 * spec of ramboot.swap.net=.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/msg.h"
#include "lib/units.h"
#include "swap/netmem.h"

void netmem_opts_init(struct netmem_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->export = NETMEM_EXPORT;
	o->max_ram = NETMEM_MAX_RAM;
	o->timeout = NETMEM_TIMEOUT;
	o->period = NETMEM_PERIOD;
	o->idle_age = NETMEM_IDLE_AGE;
	o->rate = NETMEM_RATE;
}

/* The tier's timeouts and periods: whole seconds, a second to a day. */
static int seconds(const char *v, unsigned *out)
{
	return duration_secs(v, 1, 86400, out);
}

int netmem_spec_parse(const char *spec, struct netmem_opts *o, char *err, size_t errlen)
{
	char *item = NULL, *save = NULL, note[160];
	int rc = 0;

	if (strlen(spec) >= sizeof(o->buf))
		return rb_errfmt(err, errlen, -EINVAL, "'%.40s...': too long", spec);
	snprintf(o->buf, sizeof(o->buf), "%s", spec);
	o->server = strtok_r(o->buf, ",", &save);
	if (!o->server || spec[0] == ',' || strchr(o->server, '='))
		return rb_errfmt(err, errlen, -EINVAL, "no server");
	while (rc == 0 && (item = strtok_r(NULL, ",", &save)) != NULL) {
		char *v = strchr(item, '=');

		if (!v) {
			rc = -EINVAL;
			break;
		}
		*v++ = '\0';
		if (!strcmp(item, "export") && *v)
			o->export = v;
		else if (!strcmp(item, "size"))
			rc = size_parse(v, UNIT_BYTES, &o->size, note, sizeof(note));
		else if (!strcmp(item, "max-ram"))
			rc = size_parse(v, UNIT_BYTES, &o->max_ram, note, sizeof(note));
		else if (!strcmp(item, "rate"))
			rc = rate_parse(v, UNIT_BYTES, &o->rate, note, sizeof(note));
		else if (!strcmp(item, "timeout"))
			rc = seconds(v, &o->timeout);
		else if (!strcmp(item, "period"))
			rc = seconds(v, &o->period);
		else if (!strcmp(item, "idle"))
			rc = seconds(v, &o->idle_age);
		else
			rc = -EINVAL;
		if (rc > 0)
			rc = 0;    /* an old spelling: taken */
		if (rc < 0)
			return rb_errfmt(err, errlen, -EINVAL, "'%s=%s': not understood", item, v);
	}
	if (rc < 0)
		return rb_errfmt(err, errlen, -EINVAL, "'%s': not NAME=VALUE", item);
	return 0;
}
