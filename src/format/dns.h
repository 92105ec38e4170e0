/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DNS messages as bytes, no I/O (RFC 1035, RFC 3596 for AAAA): a query
 * for one name's A or AAAA records, and the answer to it checked and
 * read within fixed bounds: the ID and the echoed question must be the
 * query's, a compressed name follows at most DNS_JUMPS_MAX pointers, a
 * CNAME chain at most DNS_CNAMES_MAX links inside the answer (the server
 * does any recursion; no further query is made). The client
 * (source/dns.c) does the talking; fuzz/fuzz_dns.c feeds these any bytes.
 */
#ifndef RAMBOOT_FORMAT_DNS_H
#define RAMBOOT_FORMAT_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DNS_UDP_MAX    512  /* a UDP message without EDNS (RFC 1035 4.2.1) */
#define DNS_WIRE_MAX   255  /* octets of a name in its wire form */
#define DNS_JUMPS_MAX  16   /* compression pointers followed in one name */
#define DNS_CNAMES_MAX 8    /* CNAME links followed in one answer */
#define DNS_ADDRS_MAX  4    /* addresses kept from one answer */

#define DNS_TYPE_A     1
#define DNS_TYPE_CNAME 5
#define DNS_TYPE_AAAA  28

struct dns_result {
	int naddr;               /* A: 4 bytes each, AAAA: 16 */
	uint8_t addr[DNS_ADDRS_MAX][16];
};

/* The query for name's records of type (A or AAAA), recursion desired,
 * into buf. Its length, or -EINVAL for a name that is not a host name in
 * DNS (an empty label, a label over 63 octets, over 255 in all). */
ssize_t dns_query(uint8_t *buf, size_t len, uint16_t id, const char *name, uint16_t type);

/* Read msg[0..len) as the answer to dns_query(id, name, type). 0 with
 * the addresses of name (after its CNAMEs) in res, none when the name
 * has no record of that type. Else none, and:
 * -EBADMSG  not an answer to this query (another ID, not a response,
 *           another question): a stray datagram, to be ignored;
 * -EMSGSIZE the server truncated it (TC): no TCP query is made;
 * -ENXIO    the name does not exist (NXDOMAIN);
 * -EIO      the server failed (SERVFAIL, REFUSED, another RCODE);
 * -ELOOP    a CNAME chain longer than DNS_CNAMES_MAX;
 * -EINVAL   name is not a host name in DNS;
 * -EPROTO   malformed (a name or record past the end, a pointer loop,
 *           an address of the wrong length). */
int dns_parse(const uint8_t *msg, size_t len, uint16_t id, const char *name, uint16_t type,
	      struct dns_result *res);

#endif
