// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The content-defined chunker: see cdc.h for the rule.
 */
#include <string.h>

#include "format/cdc.h"

/* Top 18 bits before the average length, top 14 after it; a weak
 * marker's test (cdc.h): the top 3. */
#define CDC_MASK_S (~0ULL << (64 - 18))
#define CDC_MASK_L (~0ULL << (64 - 14))
#define CDC_MASK_W (~0ULL << (64 - 3))
/* The window: h after a byte depends on that byte and the 63 before. */
#define CDC_WINDOW 64u

/* splitmix64 from CDC_SEED, outputs 1 to 256 (cdc.h). */
const uint64_t cdc_gear[256] = {
	0xf795fd432b251b7aULL, 0xe013cb60a6b266b5ULL, 0xaf7f3723f8e94f5eULL,
	0xed19a8d5adaf149dULL, 0x1d722f2cfc1170abULL, 0x7e8b86bc941e6203ULL,
	0x0ad611a30351c313ULL, 0x546872d254228278ULL, 0x4c0a2dd99998ea6aULL,
	0x734e91277e164ef3ULL, 0x160296aa88fee565ULL, 0x1259fa8b0b234c56ULL,
	0xebf8d127d085be01ULL, 0x1c7d03e5357bc038ULL, 0x0df5ca2bcd47058aULL,
	0xa51bea7882a8ec61ULL, 0x7212a32bd959fefbULL, 0xafd6f236f92dd04bULL,
	0x76165c4262ace23aULL, 0xd0b17921935f7fceULL, 0x867f14e872bde31cULL,
	0x6e250af23475af88ULL, 0x710ac813c9fa8e47ULL, 0xa064c6b6c8fe55f6ULL,
	0xa5b565021b4943a6ULL, 0x8aecffe79524ed92ULL, 0xa5577d042c74ae34ULL,
	0x340b26f5817bf429ULL, 0x4f9358ff9ac281faULL, 0x8259356b55e2e8d3ULL,
	0x808397912fb97b69ULL, 0x24b362a750778d35ULL, 0xd05bcf0ff64640f1ULL,
	0x12c6168c7555c69cULL, 0xaba56378d8d97057ULL, 0x76db1c9becd8e856ULL,
	0x3fd4a0511e1109b2ULL, 0x5e1a239c596b533bULL, 0x9ff5982b41af8df5ULL,
	0xef3d20ba3182a13bULL, 0xf7258f2ef363e836ULL, 0x2482cf448cd516d1ULL,
	0x30a78a7a17f03908ULL, 0x8884535cf713a87fULL, 0x0aadfb9c3cb59da3ULL,
	0x0695be8cc60934deULL, 0x77101a049b4513c1ULL, 0xcb990431739a7977ULL,
	0x1a80b307a43235ddULL, 0x35b6d4a0987cc4e9ULL, 0x0c1bbdae60b94f67ULL,
	0xaca1f6961054f501ULL, 0x5cd18160bf814f85ULL, 0x837c47282fe15a28ULL,
	0x83f94ba4d929808fULL, 0xba26bfcdb2288f45ULL, 0x27dbfbd1e3aed35eULL,
	0x5a748df42319e528ULL, 0x0af1b378fefe6092ULL, 0x4b395b60af94497fULL,
	0x54380556c279bc73ULL, 0xe79c521639550aebULL, 0xc46034b554ae1fb1ULL,
	0xa5a85abbd3152635ULL, 0x678aa7128abd8037ULL, 0xc17793d023b3af26ULL,
	0xd201fe1dd2ae9a7fULL, 0x45f8aec242a45eb5ULL, 0x729a9fe31edddb13ULL,
	0xb2b40faea22f6364ULL, 0xdec1f2ad57e7acb2ULL, 0xb95a29b9752b4b6bULL,
	0x1a793e205711750fULL, 0xf13a37c814359795ULL, 0xc1f398d4778ae995ULL,
	0xb343c8ebc6ad2ee5ULL, 0x450c4b1a9855781aULL, 0x1c36f95df38a94b9ULL,
	0x79f301575ce88ff7ULL, 0x8af5746687a25b6eULL, 0x51a9250cc8654950ULL,
	0x3ac05ccf85f2758cULL, 0xdca2408e1d561c77ULL, 0x28ccdbe05f373328ULL,
	0xf6e7d340af6e1424ULL, 0x3bf26c3ff072d748ULL, 0x54c2cd1126d67aa1ULL,
	0x2792c4f4a551c0baULL, 0x2b12b0dcd8747514ULL, 0x2ea99070dd9adc1cULL,
	0xdc975911b669828cULL, 0xdac28d305229535bULL, 0x95976f4ee6821ba3ULL,
	0x0415b81b8eb230a6ULL, 0x8a33acc50c5d0b9bULL, 0x00df43bf8371b110ULL,
	0xe24e16b38dc1d480ULL, 0xceacafc6da7eb27eULL, 0x0aeecf180ce871acULL,
	0x6e64c9b574c8e302ULL, 0x158cd2378e2dbc69ULL, 0xb4e2734620db753dULL,
	0x7847b3b16daa5b60ULL, 0x0e93b31b10f5d06eULL, 0x0da7636fdc3de6e6ULL,
	0x1ba32e84eae33f49ULL, 0xcfc18f5347a08332ULL, 0xbe84b0fffc1762eeULL,
	0x749b247f1ea37164ULL, 0x259e0bf9ba03a9d1ULL, 0x318ecea343623b16ULL,
	0x3fe41e634a8c14afULL, 0x06668dcad942122bULL, 0x7ee2bddaa8db38c1ULL,
	0xc44d5f4f00e1ff62ULL, 0x695d46c9144f1997ULL, 0xe5209f64feedc813ULL,
	0xde8b0ab25801f184ULL, 0x999ceaa4af6c460cULL, 0xeec4c48049f3546eULL,
	0x8cc6e89e0f30673eULL, 0x850d8d3f7c98f4edULL, 0xbce96d952b0edf73ULL,
	0xc866f500e615dc7aULL, 0x9e4efd95027eac48ULL, 0x1296e17c6583804bULL,
	0xb1148c1cbb51c3eaULL, 0x30f1dae28aeffeb4ULL, 0xe67f1571faef9b36ULL,
	0x5e776a0d9d5ddcafULL, 0x1c290ba4e949ec61ULL, 0x794fe684af25718bULL,
	0x931a61be1a77527bULL, 0xebef2b97d6c533eeULL, 0x756b1db3808d39e8ULL,
	0x7e40dd1095e73e32ULL, 0xb38eb2d1e346519dULL, 0x78161b8595568d07ULL,
	0x89d23d88761c64b2ULL, 0x77077e366ccb58b0ULL, 0x2aad664a684f739cULL,
	0xcb20c6666748f613ULL, 0x60fe370f75d99c5fULL, 0x9764bac8007b86bdULL,
	0xd18359ced28413adULL, 0x93f2b5461ca01325ULL, 0x84c56f3681536cb5ULL,
	0xd3bd92da450cdbe7ULL, 0xaf67bb160905c1d9ULL, 0xa44f5f09b4b47f01ULL,
	0x169db1b91a7e02dcULL, 0xe02d98364534fb72ULL, 0x3830314d4773db43ULL,
	0xa20478323a05b5a6ULL, 0xbc603432a8c7aecbULL, 0xfb81cdfc33208d33ULL,
	0x11b4813b2a153762ULL, 0x6125c4a9845c5568ULL, 0xae9fdf6137c5120dULL,
	0x9bf8ded539a7f941ULL, 0x3b58aff3a6741df4ULL, 0x028788d0ca23199dULL,
	0x30257dcd648a7ebeULL, 0x8d9918b01b3a8f6fULL, 0xc0c1d5046cfa6567ULL,
	0x490c6a7b57758300ULL, 0xad5ee701640a9436ULL, 0x0562a1a808cb4f5bULL,
	0xe1b4336bfa06d10aULL, 0xca5c1d7c780d49ebULL, 0xbec3cd0a68c3ffa4ULL,
	0x470ecfb2388dee0aULL, 0x5087f3bd240aad85ULL, 0x1c0de305cc7c05abULL,
	0x03afc034b54906f8ULL, 0x0ad31513c39fbec2ULL, 0xb3baf00e77457e5eULL,
	0x0de54bb6cd8ee7d2ULL, 0xdddf6edda09c9fc4ULL, 0xe42cbb1b88ea3188ULL,
	0x10cf66e37db49389ULL, 0x6f1bb01b2df78076ULL, 0xb6c344a9bb6bd33dULL,
	0xb5aa9c2886812c0cULL, 0xa2bf73d3a120efe9ULL, 0xc4ab7bc7e93df3fdULL,
	0x3a7889f574524696ULL, 0x91ac114f8af11acbULL, 0x86c983e0a5dfacfaULL,
	0x355c684f5c496576ULL, 0x3c79a5f1a26ea8b3ULL, 0xb6e70571cc726816ULL,
	0x995e4d8f36f330c5ULL, 0xc286dd9267da89d5ULL, 0x417c87c7baceb6b1ULL,
	0x2497b1f1595e93ebULL, 0xbc4e4d3fa48123e3ULL, 0x8093682e5bf46d00ULL,
	0x05b9f164f0975637ULL, 0xf7138a850814655eULL, 0xbea2ca2c8f4fcd89ULL,
	0x704bf599333796c9ULL, 0xa4a0751d2591d9cdULL, 0x870d26ea3eb3a7c4ULL,
	0x643afce36bace19cULL, 0x13db1f086d9ecb07ULL, 0xd531fe98f23a20a5ULL,
	0xc97622120e43a431ULL, 0x19706e4f86476a52ULL, 0x3be41656bb2f7441ULL,
	0x6830bfc7a558a554ULL, 0xc4a82a251ee7741bULL, 0x712c3ac750e69930ULL,
	0x258d106108573c05ULL, 0xd356c2872a7ac511ULL, 0xcbcbd60b5b6a0af2ULL,
	0x27c7b35a0515e863ULL, 0x6306b52ecfa1c4eaULL, 0xe256d8f66f40d98aULL,
	0x08ec2174194a0edcULL, 0x28d244ef35d129c2ULL, 0xc11a455163205069ULL,
	0x5d3422f77de7ec1bULL, 0x32c263ffd43bb126ULL, 0x2222d51255c96ee8ULL,
	0xb7d098839b5fa345ULL, 0x408dee4c617343d1ULL, 0x1f38c513b947bdf8ULL,
	0x76ad1a180c34e896ULL, 0x5d09e71fa89da64aULL, 0x4eedf6268d612e32ULL,
	0x94c700d209293ad0ULL, 0xb71efc876db65779ULL, 0x6abe4b73a610c3d9ULL,
	0x080ed19cb13fca50ULL, 0xe8da43d2932f0116ULL, 0x8cd1c70dc4c5dfecULL,
	0x4e7cf46d60ec9607ULL, 0x00e334d69f45e4fbULL, 0xb4f86eb7bc4ba44fULL,
	0xcf57b2bcbd3b96d2ULL, 0x06bdb996b994eb4fULL, 0x5a96c2f96b58f804ULL,
	0x040fa376fe9d413cULL, 0x919bddff84598b14ULL, 0x71b0fa2f381a4664ULL,
	0x42335c006fcc7026ULL, 0xf755415fb052eb08ULL, 0x8f9c02193c20e212ULL,
	0xab4bb36f224c420dULL, 0xb3d10f37258569c0ULL, 0xf5289a3da5c62114ULL,
	0x7ff8f97b065d6be1ULL, 0x729db6b55ed0fdb5ULL, 0x3296992131db50f4ULL,
	0x1485329a3424ca43ULL,
};

/* Where a phase that ends when the chunk is `upto` bytes long ends in
 * buf: an index from i to n. */
static inline size_t phase_end(uint32_t len0, uint32_t upto, size_t i, size_t n)
{
	size_t e = upto > len0 ? upto - len0 : 0;

	return e < i ? i : e > n ? n : e;
}

/* Each marker: its bytes (the last one lowest), the mask of the bytes of
 * w it takes, and the chunker's name with it. No marker: a mask that
 * keeps no bit and bytes that are not 0, which w never ends in. */
static const struct {
	uint64_t magic, mask;
	const char *name;
} markers[] = {
	[CDC_MARK_NONE] = { 1, 0, CDC_NAME },
	[CDC_MARK_ZLIB] = { CDC_MAGIC_ZLIB, 0xffffULL, CDC_NAME "-sqfs-zlib" },
	[CDC_MARK_XZ] = { CDC_MAGIC_XZ, 0xffffffffffffULL, CDC_NAME "-sqfs-xz" },
	[CDC_MARK_ZSTD] = { CDC_MAGIC_ZSTD, 0xffffffffULL, CDC_NAME "-sqfs-zstd" },
};

void cdc_set_marker(struct cdc *c, unsigned kind)
{
	if (kind >= sizeof(markers) / sizeof(markers[0]))
		kind = CDC_MARK_NONE;
	c->mmagic = markers[kind].magic;
	c->mmask = markers[kind].mask;
	c->marked = kind != CDC_MARK_NONE;
}

const char *cdc_name(unsigned kind)
{
	return markers[kind < sizeof(markers) / sizeof(markers[0]) ? kind : CDC_MARK_NONE].name;
}

/* Hash buf[i..end) and stop just past the first byte after which the
 * bits of mask in h are all 0, or that ends a marker: that index, or
 * 0. */
static inline size_t gear_find(uint64_t *hp, uint64_t *wp, const uint8_t *buf, size_t i,
			       size_t end, uint64_t mask, const struct cdc *c)
{
	uint64_t h = *hp, w = *wp;

	while (i < end) {
		uint8_t b = buf[i++];

		h = (h << 1) + cdc_gear[b];
		w = (w << 8) | b;
		if (!(h & mask) || (w & c->mmask) == c->mmagic) {
			*hp = h;
			*wp = w;
			return i;
		}
	}
	*hp = h;
	*wp = w;
	return 0;
}

static size_t plain_next(struct cdc *c, const uint8_t *buf, size_t n, bool *cut)
{
	uint32_t len0 = c->len;        /* buf[i] is byte len0 + i of the chunk */
	uint64_t h = c->h, w = c->w;
	size_t i, end, at;

	*cut = false;
	/* Not hashed: bytes that leave the window before the first test. */
	i = phase_end(len0, CDC_MIN - CDC_WINDOW, 0, n);
	/* Hashed, not tested: up to the chunk's byte CDC_MIN - 2. */
	end = phase_end(len0, CDC_MIN - 1, i, n);
	for (; i < end; i++) {
		h = (h << 1) + cdc_gear[buf[i]];
		w = (w << 8) | buf[i];
	}
	/* Tested with the hard mask while the chunk is shorter than CDC_AVG,
	 * then with the easy one while it is shorter than CDC_MAX; for a
	 * marker all along. */
	end = phase_end(len0, CDC_AVG - 1, i, n);
	at = gear_find(&h, &w, buf, i, end, CDC_MASK_S, c);
	if (!at) {
		i = end;
		end = phase_end(len0, CDC_MAX - 1, i, n);
		at = gear_find(&h, &w, buf, i, end, CDC_MASK_L, c);
		if (!at) {
			i = end;
			/* The chunk's byte CDC_MAX - 1 ends it whatever h is. */
			if (i < n && len0 + i == CDC_MAX - 1)
				at = i + 1;
		}
	}
	if (at) {
		*cut = true;
		c->h = 0;
		c->w = 0;
		c->len = 0;
		return at;
	}
	c->h = h;
	c->w = w;
	c->len = len0 + (uint32_t)n;
	return n;
}

/* With a marker: note where the markers in buf[i..end) end; w and h
 * (when hash) go on over those bytes. */
static inline void marks_in(struct cdc *c, uint64_t *hp, uint64_t *wp, const uint8_t *buf,
			    size_t i, size_t end, bool hash)
{
	uint64_t h = *hp, w = *wp;

	for (; i < end; i++) {
		if (hash)
			h = (h << 1) + cdc_gear[buf[i]];
		w = (w << 8) | buf[i];
		if ((w & c->mmask) == c->mmagic)
			c->mark_end = c->pos + i + 1;
	}
	*hp = h;
	*wp = w;
}

/* The 8 bytes that end at p[7], as w holds them (the last one lowest). */
static inline uint64_t w_at(const uint8_t *p)
{
	uint64_t v = 0;
	int k;

	for (k = 0; k < 8; k++)
		v = (v << 8) | p[k];
	return v;
}

/* marks_in without the hash, for long stretches: the first 8 bytes
 * through w (a marker may have started before buf[i]), then memchr() for
 * the marker's last byte and a look at the bytes before it. */
static inline void marks_skip(struct cdc *c, uint64_t *wp, const uint8_t *buf, size_t i,
			      size_t end)
{
	uint64_t h = 0;
	const uint8_t *p;
	size_t head = end - i > 8 ? i + 8 : end;

	marks_in(c, &h, wp, buf, i, head, false);
	if (head == end)
		return;
	p = buf + head;
	while ((p = memchr(p, (int)(c->mmagic & 0xff), (size_t)(buf + end - p))) != NULL) {
		if ((w_at(p - 7) & c->mmask) == c->mmagic)
			c->mark_end = c->pos + (size_t)(p - buf) + 1;
		p++;
	}
	*wp = w_at(buf + end - 8);
}

/* With a marker, in a chunk at least CDC_MIN long: hash buf[i..end)
 * and stop just past the first byte after which the bits of mask in h
 * are all 0, or that ends a marker that ends a chunk (cdc.h): that index,
 * or 0. */
static inline size_t marked_find(struct cdc *c, uint64_t *hp, uint64_t *wp, const uint8_t *buf,
				 size_t i, size_t end, uint64_t mask)
{
	uint64_t h = *hp, w = *wp;
	size_t at = 0;

	while (i < end) {
		uint8_t b = buf[i++];

		h = (h << 1) + cdc_gear[b];
		w = (w << 8) | b;
		if (!(h & mask)) {
			at = i;
			if ((w & c->mmask) == c->mmagic)
				c->mark_end = c->pos + i;
			break;
		}
		if ((w & c->mmask) == c->mmagic) {
			uint64_t e = c->pos + i;
			bool ends = e - c->mark_end >= CDC_BLOCK_LONG || !(h & CDC_MASK_W);

			c->mark_end = e;
			if (ends) {
				at = i;
				break;
			}
		}
	}
	*hp = h;
	*wp = w;
	return at;
}

/* With a marker (cdc.h): the markers before CDC_MIN are looked for too,
 * since each sets the length of the block the next one ends. */
static size_t marked_next(struct cdc *c, const uint8_t *buf, size_t n, bool *cut)
{
	uint32_t len0 = c->len;        /* buf[i] is byte len0 + i of the chunk */
	uint64_t h = c->h, w = c->w;
	size_t i = 0, end, at = 0;

	*cut = false;
	if (c->pos < CDC_SQFS_SUPER) {
		/* The superblock, a chunk alone. */
		end = CDC_SQFS_SUPER - c->pos < n ? CDC_SQFS_SUPER - c->pos : n;
		marks_in(c, &h, &w, buf, 0, end, false);
		if (c->pos + end == CDC_SQFS_SUPER)
			at = end;
		i = end;
	}
	if (!at) {
		/* Markers only, then hashed too, not tested. */
		end = phase_end(len0, CDC_MIN - CDC_WINDOW, i, n);
		marks_skip(c, &w, buf, i, end);
		i = end;
		end = phase_end(len0, CDC_MIN - 1, i, n);
		marks_in(c, &h, &w, buf, i, end, true);
		i = end;
		/* Tested with the hard mask, the easy one, and at CDC_MAX. */
		end = phase_end(len0, CDC_AVG - 1, i, n);
		at = marked_find(c, &h, &w, buf, i, end, CDC_MASK_S);
	}
	if (!at) {
		i = end;
		end = phase_end(len0, CDC_MAX - 1, i, n);
		at = marked_find(c, &h, &w, buf, i, end, CDC_MASK_L);
		if (!at) {
			i = end;
			if (i < n && len0 + i == CDC_MAX - 1) {
				w = (w << 8) | buf[i];
				if ((w & c->mmask) == c->mmagic)
					c->mark_end = c->pos + i + 1;
				at = i + 1;
			}
		}
	}
	if (at) {
		*cut = true;
		c->pos += at;
		c->h = 0;
		c->w = w;
		c->len = 0;
		return at;
	}
	c->pos += n;
	c->h = h;
	c->w = w;
	c->len = len0 + (uint32_t)n;
	return n;
}

size_t cdc_next(struct cdc *c, const uint8_t *buf, size_t n, bool *cut)
{
	return c->marked ? marked_next(c, buf, n, cut) : plain_next(c, buf, n, cut);
}
