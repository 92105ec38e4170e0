// SPDX-License-Identifier: GPL-2.0-or-later
/* DNS messages: the query's bytes, answers as servers send them (dnsmasq's
 * with a pointer to the question, a resolver's CNAME chain), and hostile
 * ones: pointer loops, cut short, another ID, another name. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "format/dns.h"

struct msg {
	uint8_t b[1024];
	size_t n;
};

static void put(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put16(struct msg *m, unsigned v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(m, b, 2);
}

/* A dotted name, uncompressed. */
static void name(struct msg *m, const char *s)
{
	while (*s) {
		size_t l = strcspn(s, ".");
		uint8_t c = (uint8_t)l;

		put(m, &c, 1);
		put(m, s, l);
		s += l + (s[l] == '.');
	}
	put(m, "", 1);
}

static void head(struct msg *m, unsigned id, unsigned flags, unsigned an, const char *q,
		 unsigned type)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, 1);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
	name(m, q);
	put16(m, type);
	put16(m, 1);
}

/* A record of owner (NULL: a pointer to the question's name, offset 12). */
static void rr(struct msg *m, const char *owner, unsigned type, const void *data, size_t len)
{
	if (owner)
		name(m, owner);
	else
		put16(m, 0xc00c);
	put16(m, type);
	put16(m, 1);
	put16(m, 0);
	put16(m, 600);
	put16(m, (unsigned)len);
	put(m, data, len);
}

/* A CNAME's target, uncompressed. */
static void cname(struct msg *m, const char *owner, const char *target)
{
	struct msg t = { .n = 0 };

	name(&t, target);
	rr(m, owner, DNS_TYPE_CNAME, t.b, t.n);
}

#define OK_FLAGS 0x8580  /* QR AA RD RA, NOERROR: dnsmasq's own names */
static const uint8_t v4[4] = { 10, 0, 0, 1 };
static const uint8_t v6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

static void test_query(void)
{
	static const uint8_t want[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
					5, 'i', 'm', 'a', 'g', 'e', 3, 'l', 'a', 'b', 0,
					0, 28, 0, 1 };
	uint8_t q[DNS_UDP_MAX];
	char big[300];

	CHECK_EQ_INT(dns_query(q, sizeof(q), 0x1234, "Image.LAB.", DNS_TYPE_AAAA), sizeof(want));
	CHECK(!memcmp(q, want, sizeof(want)));
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, "", DNS_TYPE_A), -EINVAL);
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, ".", DNS_TYPE_A), -EINVAL);
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, "a..b", DNS_TYPE_A), -EINVAL);
	CHECK_EQ_INT(dns_query(q, 20, 1, "image.lab", DNS_TYPE_A), -EINVAL);
	memset(big, 'a', 64);
	big[64] = '\0';
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, big, DNS_TYPE_A), -EINVAL);
	big[63] = '\0';
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, big, DNS_TYPE_A), 12 + 65 + 4);
	/* 253 characters are the most a name may have (255 octets) */
	memset(big, 'a', 253);
	for (int i = 63; i < 253; i += 64)
		big[i] = '.';
	big[253] = '\0';
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, big, DNS_TYPE_A), 12 + 255 + 4);
	big[253] = 'a';
	big[254] = '\0';
	CHECK_EQ_INT(dns_query(q, sizeof(q), 1, big, DNS_TYPE_A), -EINVAL);
}

static void test_answers(void)
{
	struct dns_result r;
	struct msg m;

	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), 0);
	CHECK_EQ_INT(r.naddr, 1);
	CHECK(!memcmp(r.addr[0], v4, 4));
	/* the case of the question as the server sent it (RFC 4343) */
	head(&m, 7, OK_FLAGS, 1, "iMaGe.Lab", DNS_TYPE_AAAA);
	rr(&m, "IMAGE.lab", DNS_TYPE_AAAA, v6, 16);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_AAAA, &r), 0);
	CHECK_EQ_INT(r.naddr, 1);
	CHECK(!memcmp(r.addr[0], v6, 16));
	/* no record of that type (NODATA), and one of another type only */
	head(&m, 7, OK_FLAGS, 0, "image.lab", DNS_TYPE_AAAA);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_AAAA, &r), 0);
	CHECK_EQ_INT(r.naddr, 0);
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_AAAA);
	rr(&m, NULL, DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_AAAA, &r), 0);
	CHECK_EQ_INT(r.naddr, 0);
	/* six addresses: the first DNS_ADDRS_MAX kept */
	head(&m, 7, OK_FLAGS, 6, "image.lab", DNS_TYPE_A);
	for (int i = 0; i < 6; i++) {
		uint8_t a[4] = { 10, 0, 0, (uint8_t)i };

		rr(&m, NULL, DNS_TYPE_A, a, 4);
	}
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), 0);
	CHECK_EQ_INT(r.naddr, DNS_ADDRS_MAX);
	CHECK_EQ_INT(r.addr[3][3], 3);
}

static void test_cname(void)
{
	struct dns_result r;
	struct msg m;
	char a[24], b[24];

	/* as a recursive server answers: the chain, then the addresses,
	 * here in the reverse order, with an address of another name */
	head(&m, 9, 0x8180, 4, "deb.debian.org", DNS_TYPE_A);
	rr(&m, "other.example", DNS_TYPE_A, "\x01\x02\x03\x04", 4);
	rr(&m, "dualstack.map.fastly.net", DNS_TYPE_A, v4, 4);
	cname(&m, "debian.map.fastly.net", "dualstack.map.fastly.net");
	cname(&m, NULL, "debian.map.fastly.net");
	CHECK_EQ_INT(dns_parse(m.b, m.n, 9, "deb.debian.org", DNS_TYPE_A, &r), 0);
	CHECK_EQ_INT(r.naddr, 1);
	CHECK(!memcmp(r.addr[0], v4, 4));
	/* a loop of two names */
	head(&m, 9, 0x8180, 2, "a.lab", DNS_TYPE_A);
	cname(&m, "a.lab", "b.lab");
	cname(&m, "b.lab", "a.lab");
	CHECK_EQ_INT(dns_parse(m.b, m.n, 9, "a.lab", DNS_TYPE_A, &r), -ELOOP);
	/* DNS_CNAMES_MAX links are followed, one more is not */
	for (int links = DNS_CNAMES_MAX; links <= DNS_CNAMES_MAX + 1; links++) {
		head(&m, 9, 0x8180, (unsigned)links + 1, "n0.lab", DNS_TYPE_A);
		for (int i = 0; i < links; i++) {
			snprintf(a, sizeof(a), "n%d.lab", i);
			snprintf(b, sizeof(b), "n%d.lab", i + 1);
			cname(&m, a, b);
		}
		rr(&m, b, DNS_TYPE_A, v4, 4);
		CHECK_EQ_INT(dns_parse(m.b, m.n, 9, "n0.lab", DNS_TYPE_A, &r),
			     links == DNS_CNAMES_MAX ? 0 : -ELOOP);
	}
}

static void test_refused(void)
{
	struct dns_result r;
	struct msg m;

	head(&m, 7, 0x8583, 0, "nothere.lab", DNS_TYPE_A);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "nothere.lab", DNS_TYPE_A, &r), -ENXIO);
	head(&m, 7, 0x8182, 0, "image.lab", DNS_TYPE_A);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EIO);
	head(&m, 7, 0x8185, 0, "image.lab", DNS_TYPE_A);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EIO);
	/* truncated by the server: TC, whatever follows */
	head(&m, 7, 0x8780, 1, "image.lab", DNS_TYPE_A);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EMSGSIZE);
	/* not an answer to this query: ignored by the client */
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 8, "image.lab", DNS_TYPE_A, &r), -EBADMSG);
	CHECK_EQ_INT(r.naddr, 0);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab.evil", DNS_TYPE_A, &r), -EBADMSG);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.la", DNS_TYPE_A, &r), -EBADMSG);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_AAAA, &r), -EBADMSG);
	m.b[2] &= 0x7f;         /* a query, not a response */
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EBADMSG);
	/* an answer for another name than the question's: no address */
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	rr(&m, "evil.lab", DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), 0);
	CHECK_EQ_INT(r.naddr, 0);
}

static void test_hostile(void)
{
	struct dns_result r;
	struct msg m, ok;
	size_t at;

	/* every prefix of a good answer: never an address */
	head(&ok, 7, OK_FLAGS, 2, "image.lab", DNS_TYPE_A);
	cname(&ok, NULL, "x.lab");
	rr(&ok, "x.lab", DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(ok.b, ok.n, 7, "image.lab", DNS_TYPE_A, &r), 0);
	for (size_t n = 0; n < ok.n; n++) {
		int rc = dns_parse(ok.b, n, 7, "image.lab", DNS_TYPE_A, &r);

		CHECK(rc == -EBADMSG || rc == -EPROTO);
		CHECK_EQ_INT(r.naddr, 0);
	}
	/* an owner name that points at itself, and two that point at each other */
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	at = m.n;
	put16(&m, 0xc000 | (unsigned)at);
	put(&m, "\0\1\0\1\0\0\0\0\0\4\12\0\0\1", 14);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EPROTO);
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	at = m.n;
	put16(&m, 0xc000 | (unsigned)(at + 2));
	put16(&m, 0xc000 | (unsigned)at);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EPROTO);
	/* a pointer past the end, an extended label type, in the question */
	head(&m, 7, OK_FLAGS, 0, "image.lab", DNS_TYPE_A);
	m.b[12] = 0xc0;
	m.b[13] = 0xff;
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EBADMSG);
	m.b[12] = 0x45;
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EBADMSG);
	/* an A record of 5 bytes; more records counted than sent */
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_A, "\12\0\0\1\1", 5);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EPROTO);
	head(&m, 7, OK_FLAGS, 60000, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EPROTO);
	CHECK_EQ_INT(r.naddr, 0);
	/* a CNAME whose name runs out of its record */
	head(&m, 7, OK_FLAGS, 2, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_CNAME, "\1x\3lab\0", 7);
	rr(&m, "x.lab", DNS_TYPE_A, v4, 4);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), 0);
	CHECK_EQ_INT(r.naddr, 1);
	head(&m, 7, OK_FLAGS, 1, "image.lab", DNS_TYPE_A);
	rr(&m, NULL, DNS_TYPE_CNAME, "\1x\3lab\0", 4);
	put(&m, "\0\0\0\0\0", 5);
	CHECK_EQ_INT(dns_parse(m.b, m.n, 7, "image.lab", DNS_TYPE_A, &r), -EPROTO);
}

int main(void)
{
	RUN(test_query);
	RUN(test_answers);
	RUN(test_cname);
	RUN(test_refused);
	RUN(test_hostile);
	return TAP_DONE();
}
