// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: what a DNS server (or anyone on the link) sends is
 * the input of dns_parse(), as the answer to the A and the AAAA query
 * for a name taken from the input's first bytes. Whatever the bytes, the
 * answer is one of the documented codes and keeps the bounds of dns.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "image.lab", "a.b.c.example.org", "x", "IMAGE.LAB." };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_AAAA };
	struct dns_result res;
	uint8_t q[DNS_UDP_MAX];
	uint16_t id;
	size_t t;
	int rc;

	if (size < 2 || size > 4 * DNS_UDP_MAX)
		return 0;
	id = (uint16_t)(data[0] << 8 | data[1]);
	for (t = 0; t < 2; t++) {
		const char *name = names[data[size - 1] % 4];
		ssize_t ql = dns_query(q, sizeof(q), id, name, types[t]);

		if (ql < 17 || ql > DNS_UDP_MAX || q[0] != data[0] || q[1] != data[1])
			abort();
		rc = dns_parse(data, size, id, name, types[t], &res);
		if (rc != 0 && rc != -EBADMSG && rc != -EMSGSIZE && rc != -ENXIO && rc != -EIO &&
		    rc != -ELOOP && rc != -EPROTO)
			abort();
		if (res.naddr < 0 || res.naddr > DNS_ADDRS_MAX || (rc && res.naddr))
			abort();
		/* The question echoed: our own query is never an answer. */
		if (dns_parse(q, (size_t)ql, id, name, types[t], &res) != -EBADMSG)
			abort();
	}
	return 0;
}
