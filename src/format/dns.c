// SPDX-License-Identifier: GPL-2.0-or-later
/* DNS messages as bytes: see dns.h. RFC 1035 4.1 (the message), 4.1.4
 * (compression), RFC 3596 (AAAA). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "format/dns.h"

#define HEADER   12
#define FLAG_QR  0x8000          /* a response */
#define FLAG_TC  0x0200          /* truncated to fit the datagram */
#define FLAG_RD  0x0100          /* recursion desired */
#define CLASS_IN 1
#define RCODE_NXDOMAIN 3

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* A dotted name (a final dot allowed) in wire form, lower case, into out
 * (DNS_WIRE_MAX bytes): its length, or -EINVAL. */
static int name_wire(const char *name, uint8_t *out)
{
	size_t n = 0, l, i;

	while (*name) {
		l = strcspn(name, ".");
		if (l == 0 || l > 63 || n + l + 2 > DNS_WIRE_MAX)
			return -EINVAL;
		out[n++] = (uint8_t)l;
		for (i = 0; i < l; i++)
			out[n++] = lower((uint8_t)name[i]);
		name += l;
		if (*name)
			name++;
	}
	if (n == 0)
		return -EINVAL;
	out[n++] = 0;
	return (int)n;
}

/* The name at msg[*off] in wire form, lower case, into out (DNS_WIRE_MAX
 * bytes): its length, or -EPROTO. *off moves past the name where it
 * lies, not where its pointers lead. Every label adds to the name and
 * at most DNS_JUMPS_MAX pointers are followed: a loop ends. */
static int name_read(const uint8_t *msg, size_t len, size_t *off, uint8_t *out)
{
	size_t p = *off, n = 0, i;
	int jumps = 0;

	for (;;) {
		uint8_t l;

		if (p >= len)
			return -EPROTO;
		l = msg[p];
		if ((l & 0xc0) == 0xc0) {
			if (p + 1 >= len || ++jumps > DNS_JUMPS_MAX)
				return -EPROTO;
			if (jumps == 1)
				*off = p + 2;
			p = (size_t)(l & 0x3f) << 8 | msg[p + 1];
			continue;
		}
		/* 0x40 and 0x80: label types RFC 6891 retired */
		if ((l & 0xc0) || n + l + 1 > DNS_WIRE_MAX || p + 1 + l > len)
			return -EPROTO;
		out[n++] = l;
		if (l == 0) {
			if (jumps == 0)
				*off = p + 1;
			return (int)n;
		}
		for (i = 0; i < l; i++)
			out[n++] = lower(msg[p + 1 + i]);
		p += 1 + (size_t)l;
	}
}

ssize_t dns_query(uint8_t *buf, size_t len, uint16_t id, const char *name, uint16_t type)
{
	uint8_t hdr[HEADER] = { (uint8_t)(id >> 8), (uint8_t)id, FLAG_RD >> 8, 0, 0, 1 };
	uint8_t wire[DNS_WIRE_MAX];
	int n = name_wire(name, wire);

	if (n < 0 || len < HEADER + (size_t)n + 4)
		return -EINVAL;
	memcpy(buf, hdr, HEADER);
	memcpy(buf + HEADER, wire, (size_t)n);
	buf += HEADER + n;
	buf[0] = (uint8_t)(type >> 8);
	buf[1] = (uint8_t)type;
	buf[2] = 0;
	buf[3] = CLASS_IN;
	return HEADER + n + 4;
}

static int parse(const uint8_t *msg, size_t len, uint16_t id, const char *name, uint16_t type,
		 struct dns_result *res)
{
	uint8_t want[DNS_WIRE_MAX], cur[DNS_WIRE_MAX], got[DNS_WIRE_MAX], next[DNS_WIRE_MAX];
	size_t off = HEADER, answers, asize = type == DNS_TYPE_A ? 4 : 16;
	int wl = name_wire(name, want), cl, nl = 0, n, link;
	uint16_t flags, an, i;

	if (wl < 0)
		return -EINVAL;
	if (len < HEADER || get16(msg) != id || !(get16(msg + 2) & FLAG_QR))
		return -EBADMSG;
	flags = get16(msg + 2);
	if (flags & FLAG_TC)
		return -EMSGSIZE;
	n = get16(msg + 4) == 1 ? name_read(msg, len, &off, got) : -EPROTO;
	if (n != wl || memcmp(got, want, (size_t)wl) || off + 4 > len ||
	    get16(msg + off) != type || get16(msg + off + 2) != CLASS_IN)
		return -EBADMSG;
	off += 4;
	if ((flags & 0xf) == RCODE_NXDOMAIN)
		return -ENXIO;
	if (flags & 0xf)
		return -EIO;
	answers = off;
	an = get16(msg + 6);
	memcpy(cur, want, (size_t)wl);
	cl = wl;
	/* The records may come in any order: one pass over them per link. */
	for (link = 0;; link++) {
		bool moved = false;

		off = answers;
		for (i = 0; i < an; i++) {
			uint16_t t, rdlen;
			size_t o;

			n = name_read(msg, len, &off, got);
			if (n < 0 || off + 10 > len || off + 10 + get16(msg + off + 8) > len)
				return -EPROTO;
			t = get16(msg + off);
			rdlen = get16(msg + off + 8);
			off += 10;
			if (get16(msg + off - 8) != CLASS_IN || n != cl || memcmp(got, cur, (size_t)cl)) {
				off += rdlen;
				continue;
			}
			if (t == type) {
				if (rdlen != asize)
					return -EPROTO;
				if (res->naddr < DNS_ADDRS_MAX)
					memcpy(res->addr[res->naddr++], msg + off, asize);
			} else if (t == DNS_TYPE_CNAME && !moved) {
				o = off;
				nl = name_read(msg, len, &o, next);
				if (nl < 0 || o > off + rdlen)
					return -EPROTO;
				moved = true;
			}
			off += rdlen;
		}
		if (res->naddr || !moved)
			return 0;
		if (link == DNS_CNAMES_MAX)
			return -ELOOP;
		memcpy(cur, next, (size_t)nl);
		cl = nl;
	}
}

int dns_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name, uint16_t type,
	      struct dns_result *res)
{
	int rc;

	memset(res, 0, sizeof(*res));
	rc = parse(msg, len, id, name, type, res);
	if (rc < 0)
		res->naddr = 0;
	return rc;
}
