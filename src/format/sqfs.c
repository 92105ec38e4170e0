// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The squashfs 4.0 table reader (format/sqfs.h has the layout and the
 * bounds): superblock, the inode and directory tables decoded whole,
 * the tree walked from the root inode, each file inode parsed once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/msg.h"
#include "format/sqfs.h"

#define SQFS_MAGIC 0x73717368u
#define NO_FRAG 0xffffffffu
#define BLOCK_RAW (1u << 24)      /* a data or fragment block stored as is */
#define FRAGS_PER_BLOCK (SQFS_META / 16)
#define IDS_PER_BLOCK (SQFS_META / 4)
#define EXPORTS_PER_BLOCK (SQFS_META / 8)

/* Inode types. */
enum { T_DIR = 1, T_FILE = 2, T_LDIR = 8, T_LFILE = 9, T_MAX = 14 };

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

const char *sqfs_comp_name(unsigned comp)
{
	static const char *const n[] = { "unknown", "gzip", "lzma", "lzo", "xz", "lz4", "zstd" };

	return comp < sizeof(n) / sizeof(n[0]) ? n[comp] : n[0];
}

int sqfs_super_parse(const uint8_t *b, size_t len, struct sqfs_super *sb, char *err,
		     size_t errlen)
{
	uint16_t log;

	if (len < 96 || le32(b) != SQFS_MAGIC)
		return rb_errfmt(err, errlen, -EINVAL, "not a squashfs image");
	if (le16(b + 28) != 4 || le16(b + 30) != 0)
		return rb_errfmt(err, errlen, -EINVAL, "squashfs %u.%u, not 4.0", le16(b + 28),
				 le16(b + 30));
	sb->inodes = le32(b + 4);
	sb->block_size = le32(b + 12);
	sb->frags = le32(b + 16);
	sb->comp = le16(b + 20);
	log = le16(b + 22);
	sb->flags = le16(b + 24);
	sb->ids = le16(b + 26);
	sb->root = le64(b + 32);
	sb->bytes_used = le64(b + 40);
	sb->id_table = le64(b + 48);
	sb->xattr_table = le64(b + 56);
	sb->inode_table = le64(b + 64);
	sb->dir_table = le64(b + 72);
	sb->frag_table = le64(b + 80);
	sb->export_table = le64(b + 88);
	if (log < 12 || log > 20 || sb->block_size != 1u << log)
		return rb_errfmt(err, errlen, -EINVAL, "block size %u is not 2^%u", sb->block_size, log);
	if (sb->inodes == 0 || sb->ids == 0)
		return rb_errfmt(err, errlen, -EINVAL, "no inodes or no ids");
	if (sb->bytes_used < 96 || sb->inode_table < 96 || sb->inode_table >= sb->dir_table ||
	    sb->dir_table >= sb->bytes_used || sb->id_table >= sb->bytes_used)
		return rb_errfmt(err, errlen, -EINVAL, "the tables are not within the image");
	if ((sb->frags && sb->frag_table >= sb->bytes_used) ||
	    (sb->export_table != SQFS_NONE && sb->export_table >= sb->bytes_used) ||
	    (sb->xattr_table != SQFS_NONE && sb->xattr_table >= sb->bytes_used))
		return rb_errfmt(err, errlen, -EINVAL, "the tables are not within the image");
	return 0;
}

/* A decoded table: its bytes, and for each metadata block its offset on
 * disk (from the table's start) and in buf. */
struct mtab {
	uint8_t *buf;
	size_t len;
	uint64_t *disk;
	uint32_t *at;
	size_t nblk;
};

struct rd {
	const struct sqfs_io *io;
	struct sqfs *s;
	uint64_t end;             /* bytes_used */
	uint8_t raw[SQFS_META];
	char *err;
	size_t errlen;
};

/* The metadata block at off (wholly before end) decoded into out:
 * *outlen, and *next the offset after it. */
static int meta_block(struct rd *r, uint64_t off, uint64_t end, uint8_t *out, size_t *outlen,
		      uint64_t *next)
{
	uint8_t h[2];
	size_t n;
	int rc;

	if (off >= end || end - off < 3)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "metadata block at %llu: outside its table",
				 (unsigned long long)off);
	rc = r->io->read(r->io->ctx, off, h, 2);
	if (rc < 0)
		return rb_errfmt(r->err, r->errlen, rc, "read at %llu: %s", (unsigned long long)off,
				 strerror(-rc));
	n = le16(h) & 0x7fff;
	if (n == 0 || n > SQFS_META || n > end - off - 2)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "metadata block at %llu: bad size %zu",
				 (unsigned long long)off, n);
	rc = r->io->read(r->io->ctx, off + 2, (le16(h) & 0x8000) ? out : r->raw, n);
	if (rc < 0)
		return rb_errfmt(r->err, r->errlen, rc, "read at %llu: %s", (unsigned long long)off,
				 strerror(-rc));
	if (le16(h) & 0x8000) {
		*outlen = n;
	} else {
		rc = r->io->decode(r->io->ctx, r->s->sb.comp, r->raw, n, out, SQFS_META, outlen);
		if (rc == -EPROTONOSUPPORT)
			return rb_errfmt(r->err, r->errlen, rc, "compressor %s is not supported",
					 sqfs_comp_name(r->s->sb.comp));
		if (rc < 0 || *outlen == 0 || *outlen > SQFS_META)
			return rb_errfmt(r->err, r->errlen, rc < 0 ? rc : -EBADMSG,
					 "metadata block at %llu: does not decode (%s)",
					 (unsigned long long)off, sqfs_comp_name(r->s->sb.comp));
	}
	*next = off + 2 + n;
	return 0;
}

static void mtab_free(struct mtab *t)
{
	free(t->buf);
	free(t->disk);
	free(t->at);
	memset(t, 0, sizeof(*t));
}

/* The table of metadata blocks in [start, end), decoded whole. */
static int mtab_load(struct rd *r, uint64_t start, uint64_t end, const char *what, struct mtab *t)
{
	uint64_t off = start;
	size_t cap = 0, got;
	int rc;

	memset(t, 0, sizeof(*t));
	while (off < end) {
		if (t->len % SQFS_META)
			return rb_errfmt(r->err, r->errlen, -EINVAL,
					 "%s: a block before the last is short", what);
		if (t->len + SQFS_META > SQFS_TABLE_MAX)
			return rb_errfmt(r->err, r->errlen, -EFBIG, "%s: larger than %u MiB decoded",
					 what, SQFS_TABLE_MAX >> 20);
		if (t->nblk == cap) {
			size_t c = cap ? cap * 2 : 16;
			uint8_t *b = realloc(t->buf, c * SQFS_META);
			uint64_t *d;
			uint32_t *a;

			if (b)
				t->buf = b;
			d = b ? realloc(t->disk, c * sizeof(*d)) : NULL;
			if (d)
				t->disk = d;
			a = d ? realloc(t->at, c * sizeof(*a)) : NULL;
			if (!a)
				return -ENOMEM;
			t->at = a;
			cap = c;
		}
		t->disk[t->nblk] = off - start;
		t->at[t->nblk] = (uint32_t)t->len;
		rc = meta_block(r, off, end, t->buf + t->len, &got, &off);
		if (rc < 0)
			return rc;
		t->len += got;
		t->nblk++;
	}
	return 0;
}

/* Where a reference (block offset from the table's start, offset in the
 * decoded block) lands in t->buf: 0 and *pos, or -EINVAL. */
static int mtab_pos(const struct mtab *t, uint64_t blk, uint32_t off, size_t *pos)
{
	size_t lo = 0, hi = t->nblk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->disk[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nblk || t->disk[lo] != blk || off >= SQFS_META || t->at[lo] + off >= t->len)
		return -EINVAL;
	*pos = t->at[lo] + off;
	return 0;
}

/* An index of n 64-bit pointers at off; each pointer, and the index
 * itself, within the image. *first: the lowest pointer. */
static int index_read(struct rd *r, uint64_t off, uint64_t n, uint64_t **ptr, uint64_t *first,
		      const char *what)
{
	uint8_t b[8];
	uint64_t i;
	int rc;

	*ptr = NULL;
	*first = off;
	if (n > (r->end - off) / 8)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "%s: its index is not within the image",
				 what);
	*ptr = malloc(n ? n * sizeof(**ptr) : 1);
	if (!*ptr)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rc = r->io->read(r->io->ctx, off + 8 * i, b, 8);
		if (rc < 0)
			return rb_errfmt(r->err, r->errlen, rc, "%s: read: %s", what, strerror(-rc));
		(*ptr)[i] = le64(b);
		if ((*ptr)[i] >= off)
			return rb_errfmt(r->err, r->errlen, -EINVAL,
					 "%s: a block is not before its index", what);
		if ((*ptr)[i] < *first)
			*first = (*ptr)[i];
	}
	return 0;
}

static void area(struct sqfs *s, const char *name, uint64_t off, uint64_t end)
{
	if (s->narea < SQFS_AREAS && end > off) {
		s->area[s->narea].name = name;
		s->area[s->narea].off = off;
		s->area[s->narea].len = end - off;
		s->narea++;
	}
}

/* The fragment table's entries (16 bytes: start, size, unused), decoded;
 * *fragtab NULL when there are none. */
static int frags_load(struct rd *r, uint8_t **fragtab, uint64_t *dir_end)
{
	struct sqfs *s = r->s;
	uint64_t nidx = ((uint64_t)s->sb.frags + FRAGS_PER_BLOCK - 1) / FRAGS_PER_BLOCK, i, first, nx;
	uint64_t *ptr = NULL;
	size_t got;
	int rc;

	*fragtab = NULL;
	if (!s->sb.frags)
		return 0;
	if (s->sb.frags > s->sb.inodes)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "more fragments than inodes");
	rc = index_read(r, s->sb.frag_table, nidx, &ptr, &first, "fragment table");
	if (rc == 0) {
		*fragtab = malloc(nidx * SQFS_META);
		if (!*fragtab)
			rc = -ENOMEM;
	}
	for (i = 0; rc == 0 && i < nidx; i++) {
		size_t want = i + 1 < nidx ? SQFS_META :
			(size_t)(s->sb.frags - i * FRAGS_PER_BLOCK) * 16;

		rc = meta_block(r, ptr[i], s->sb.frag_table, *fragtab + i * SQFS_META, &got, &nx);
		if (rc == 0 && got < want)
			rc = rb_errfmt(r->err, r->errlen, -EINVAL, "fragment table: a block is short");
	}
	if (rc == 0) {
		area(s, "fragment table", first, s->sb.frag_table + 8 * nidx);
		if (first > s->sb.dir_table && first < *dir_end)
			*dir_end = first;
	}
	free(ptr);
	return rc;
}

/* The id, export and xattr tables: only where they lie (their first
 * block ends the directory table). */
static int lookup_area(struct rd *r, uint64_t at, uint64_t n, const char *name, uint64_t *dir_end)
{
	uint64_t *ptr, first;
	int rc = index_read(r, at, n, &ptr, &first, name);

	free(ptr);
	if (rc < 0)
		return rc;
	area(r->s, name, first, at + 8 * n);
	if (first > r->s->sb.dir_table && first < *dir_end)
		*dir_end = first;
	return 0;
}

static int xattr_area(struct rd *r, uint64_t *dir_end)
{
	uint64_t at = r->s->sb.xattr_table, *ptr, first, kv, n;
	uint8_t h[16];
	int rc;

	if (at == SQFS_NONE)
		return 0;
	if (r->end - at < 16)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "xattr table: not within the image");
	rc = r->io->read(r->io->ctx, at, h, 16);
	if (rc < 0)
		return rb_errfmt(r->err, r->errlen, rc, "xattr table: read: %s", strerror(-rc));
	kv = le64(h);
	n = ((uint64_t)le32(h + 8) * 16 + SQFS_META - 1) / SQFS_META;
	rc = index_read(r, at + 16, n, &ptr, &first, "xattr table");
	free(ptr);
	if (rc < 0)
		return rc;
	if (kv > first)
		return rb_errfmt(r->err, r->errlen, -EINVAL, "xattr table: values after their ids");
	area(r->s, "xattr table", kv, at + 16 + 8 * n);
	if (kv > r->s->sb.dir_table && kv < *dir_end)
		*dir_end = kv;
	return 0;
}

/* A name met in a directory: a file or directory to parse later. */
struct entry {
	size_t pos;               /* its inode in the inode table */
	uint32_t dir, name;
	size_t seq;
};

struct walk {
	struct rd *r;
	struct mtab it, dt;
	uint8_t *dir_seen;        /* one bit per byte of the inode table */
	struct entry *e;          /* regular files */
	size_t ne, ecap;
	size_t names_cap, dcap;
	uint32_t *stack;          /* directories to list: their inode positions */
	size_t *stack_dir;
	size_t nstack, scap;
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	if (c > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int add_name(struct walk *w, const uint8_t *name, size_t len, uint32_t *at)
{
	struct sqfs *s = w->r->s;

	while (s->names_len + len + 1 > w->names_cap) {
		size_t c = w->names_cap ? w->names_cap * 2 : 4096;
		char *p = c > UINT32_MAX ? NULL : realloc(s->names, c);

		if (!p)
			return -ENOMEM;
		s->names = p;
		w->names_cap = c;
	}
	*at = (uint32_t)s->names_len;
	memcpy(s->names + s->names_len, name, len);
	s->names[s->names_len + len] = '\0';
	s->names_len += len + 1;
	return 0;
}

/* A directory inode at pos: where its listing is in the directory table. */
static int dir_listing(struct walk *w, size_t pos, size_t *start, size_t *len)
{
	const uint8_t *p = w->it.buf + pos;
	size_t room = w->it.len - pos;
	uint64_t blk;
	uint32_t size, off;

	if (le16(p) == T_DIR) {
		if (room < 32)
			return -EINVAL;
		blk = le32(p + 16);
		size = le16(p + 24);
		off = le16(p + 26);
	} else {
		if (room < 40)
			return -EINVAL;
		size = le32(p + 20);
		blk = le32(p + 24);
		off = le16(p + 34);
	}
	if (size < 3)
		return -EINVAL;
	*len = size - 3;
	if (*len == 0) {
		*start = 0;
		return 0;
	}
	if (mtab_pos(&w->dt, blk, off, start) < 0 || *len > w->dt.len - *start)
		return -EINVAL;
	return 0;
}

static int inode_at(struct walk *w, uint64_t blk, uint32_t off, size_t *pos, unsigned *type)
{
	if (mtab_pos(&w->it, blk, off, pos) < 0 || w->it.len - *pos < 16)
		return -EINVAL;
	*type = le16(w->it.buf + *pos);
	return *type >= 1 && *type <= T_MAX ? 0 : -EINVAL;
}

static int push_dir(struct walk *w, size_t pos, size_t dir)
{
	if (w->dir_seen[pos / 8] & (1u << (pos % 8)))
		return rb_errfmt(w->r->err, w->r->errlen, -ELOOP,
				 "a directory is reached twice (a loop in the tree)");
	w->dir_seen[pos / 8] |= (uint8_t)(1u << (pos % 8));
	if (grow((void **)&w->stack, &w->scap, w->nstack, sizeof(*w->stack)) < 0)
		return -ENOMEM;
	/* stack_dir grows with stack: the same capacity. */
	{
		size_t *q = realloc(w->stack_dir, w->scap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		w->stack_dir = q;
	}
	w->stack[w->nstack] = (uint32_t)pos;
	w->stack_dir[w->nstack++] = dir;
	return 0;
}

static int bad_dir(struct walk *w, const char *why)
{
	return rb_errfmt(w->r->err, w->r->errlen, -EINVAL, "directory table: %s", why);
}

/* List directory d (its inode at pos): its subdirectories onto the
 * stack, its regular files into w->e. */
static int list_dir(struct walk *w, size_t pos, uint32_t d)
{
	struct sqfs *s = w->r->s;
	size_t q, end, len, cnt, k;
	int rc;

	if (dir_listing(w, pos, &q, &len) < 0)
		return bad_dir(w, "a directory's listing is not within it");
	end = q + len;
	while (q < end) {
		uint32_t blk;

		if (end - q < 12)
			return bad_dir(w, "a header runs past its listing");
		cnt = (size_t)le32(w->dt.buf + q) + 1;
		blk = le32(w->dt.buf + q + 4);
		if (cnt > 256)
			return bad_dir(w, "a header has more than 256 entries");
		q += 12;
		for (k = 0; k < cnt; k++) {
			const uint8_t *e = w->dt.buf + q;
			size_t nlen, ipos, i;
			unsigned type;
			uint32_t name;

			if (end - q < 8)
				return bad_dir(w, "an entry runs past its listing");
			nlen = (size_t)le16(e + 6) + 1;
			if (nlen > 256 || end - q - 8 < nlen)
				return bad_dir(w, "a name runs past its listing");
			for (i = 0; i < nlen; i++)
				if (e[8 + i] == '/' || e[8 + i] == '\0')
					return bad_dir(w, "a name holds '/' or NUL");
			if ((nlen == 1 && e[8] == '.') || (nlen == 2 && e[8] == '.' && e[9] == '.'))
				return bad_dir(w, "a name is '.' or '..'");
			if (s->d[d].path_len + (d ? 1 : 0) + nlen > SQFS_PATH_MAX)
				return rb_errfmt(w->r->err, w->r->errlen, -ENAMETOOLONG,
						 "a path is longer than %u bytes", SQFS_PATH_MAX);
			if (inode_at(w, blk, le16(e), &ipos, &type) < 0)
				return rb_errfmt(w->r->err, w->r->errlen, -EINVAL,
						 "inode table: an entry names no inode");
			rc = add_name(w, e + 8, nlen, &name);
			if (rc < 0)
				return rc;
			if (type == T_DIR || type == T_LDIR) {
				if (s->nd >= UINT32_MAX ||
				    grow((void **)&s->d, &w->dcap, s->nd, sizeof(*s->d)) < 0)
					return -ENOMEM;
				s->d[s->nd].parent = d;
				s->d[s->nd].name = name;
				s->d[s->nd].path_len = s->d[d].path_len + (d ? 1 : 0) + (uint32_t)nlen;
				rc = push_dir(w, ipos, s->nd++);
				if (rc < 0)
					return rc;
			} else if (type == T_FILE || type == T_LFILE) {
				if (grow((void **)&w->e, &w->ecap, w->ne, sizeof(*w->e)) < 0)
					return -ENOMEM;
				w->e[w->ne].pos = ipos;
				w->e[w->ne].dir = d;
				w->e[w->ne].name = name;
				w->e[w->ne].seq = w->ne;
				w->ne++;
			}
			q += 8 + nlen;
		}
	}
	return 0;
}

static int cmp_pos(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int bad_file(struct walk *w, const char *why)
{
	return rb_errfmt(w->r->err, w->r->errlen, -EINVAL, "inode table: a file's %s", why);
}

/* The regular file whose inode is at pos, into *f. */
static int file_parse(struct walk *w, const uint8_t *fragtab, size_t pos, struct sqfs_file *f)
{
	const struct sqfs_super *sb = &w->r->s->sb;
	const uint8_t *p = w->it.buf + pos, *bl;
	size_t room = w->it.len - pos, hdr;
	uint64_t start, nblk, sum = 0, i;
	uint32_t frag, bs = sb->block_size;

	if (le16(p) == T_FILE) {
		hdr = 32;
		if (room < hdr)
			return bad_file(w, "inode is short");
		start = le32(p + 16);
		frag = le32(p + 20);
		f->size = le32(p + 28);
	} else {
		hdr = 56;
		if (room < hdr)
			return bad_file(w, "inode is short");
		start = le64(p + 16);
		f->size = le64(p + 24);
		frag = le32(p + 44);
	}
	nblk = f->size / bs + (frag == NO_FRAG && f->size % bs != 0);
	if (nblk > (room - hdr) / 4)
		return bad_file(w, "block list runs past the inode table");
	bl = p + hdr;
	for (i = 0; i < nblk; i++) {
		uint32_t b = le32(bl + 4 * i) & ~BLOCK_RAW;

		if (le32(bl + 4 * i) & ~(BLOCK_RAW | (BLOCK_RAW - 1)) || b > bs)
			return bad_file(w, "block size is out of range");
		sum += b;
	}
	if (start > w->r->end || sum > w->r->end - start)
		return bad_file(w, "data is not within the image");
	f->blocks = (uint32_t)nblk;
	f->data_off = sum ? start : 0;
	f->data_len = sum;
	f->frag_off = 0;
	f->frag_len = 0;
	if (frag != NO_FRAG) {
		const uint8_t *fe;
		uint32_t sz;

		if (frag >= sb->frags)
			return bad_file(w, "fragment is not in the fragment table");
		fe = fragtab + (size_t)frag * 16;
		sz = le32(fe + 8) & ~BLOCK_RAW;
		if (le32(fe + 8) & ~(BLOCK_RAW | (BLOCK_RAW - 1)) || sz == 0 || sz > bs ||
		    le64(fe) > w->r->end || sz > w->r->end - le64(fe))
			return rb_errfmt(w->r->err, w->r->errlen, -EINVAL,
					 "fragment table: an entry is not within the image");
		f->frag_off = le64(fe);
		f->frag_len = sz;
	}
	return 0;
}

/* Each distinct file inode parsed once, in the order of the walk. */
static int files_make(struct walk *w, const uint8_t *fragtab)
{
	struct sqfs *s = w->r->s;
	size_t i, n = 0, last = 0;
	int rc;

	if (!w->ne)
		return 0;
	qsort(w->e, w->ne, sizeof(*w->e), cmp_pos);
	s->f = calloc(w->ne, sizeof(*s->f));
	if (!s->f)
		return -ENOMEM;
	for (i = 0; i < w->ne; i++) {
		if (n && last == w->e[i].pos) {
			s->f[n - 1].links++;
			continue;
		}
		rc = file_parse(w, fragtab, w->e[i].pos, &s->f[n]);
		if (rc < 0)
			return rc;
		s->f[n].dir = w->e[i].dir;
		s->f[n].name = w->e[i].name;
		s->f[n].links = 1;
		last = w->e[i].pos;
		w->e[n] = w->e[i];
		w->e[n].pos = n;          /* now: the file's index */
		n++;
	}
	/* Back to the order of the walk. */
	qsort(w->e, n, sizeof(*w->e), cmp_seq);
	{
		struct sqfs_file *o = malloc(n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			o[i] = s->f[w->e[i].pos];
		free(s->f);
		s->f = o;
	}
	s->nf = n;
	return 0;
}

static int walk_tree(struct walk *w, const uint8_t *fragtab)
{
	struct sqfs *s = w->r->s;
	size_t pos;
	unsigned type;
	uint32_t root_name;
	int rc;

	if (inode_at(w, s->sb.root >> 16, (uint32_t)(s->sb.root & 0xffff), &pos, &type) < 0 ||
	    (type != T_DIR && type != T_LDIR) || (s->sb.root >> 48))
		return rb_errfmt(w->r->err, w->r->errlen, -EINVAL, "the root inode is not a directory");
	w->dir_seen = calloc(w->it.len / 8 + 1, 1);
	s->d = malloc(64 * sizeof(*s->d));
	w->dcap = 64;
	rc = w->dir_seen && s->d ? add_name(w, (const uint8_t *)"", 0, &root_name) : -ENOMEM;
	if (rc < 0)
		return rc;
	s->d[0].parent = 0;
	s->d[0].name = root_name;
	s->d[0].path_len = 0;
	s->nd = 1;
	rc = push_dir(w, pos, 0);
	while (rc == 0 && w->nstack) {
		size_t base, i, j;

		w->nstack--;
		base = w->nstack;
		rc = list_dir(w, w->stack[base], (uint32_t)w->stack_dir[base]);
		/* its subdirectories in name order, the first on top */
		for (i = base, j = w->nstack; rc == 0 && i + 1 < j; i++, j--) {
			uint32_t p = w->stack[i];
			size_t d = w->stack_dir[i];

			w->stack[i] = w->stack[j - 1];
			w->stack_dir[i] = w->stack_dir[j - 1];
			w->stack[j - 1] = p;
			w->stack_dir[j - 1] = d;
		}
	}
	if (rc == 0)
		rc = files_make(w, fragtab);
	return rc;
}

int sqfs_read(struct sqfs *s, uint64_t image_size, const struct sqfs_io *io, char *err,
	      size_t errlen)
{
	struct rd *r;
	struct walk w;
	uint8_t sbuf[96], *fragtab = NULL;
	uint64_t dir_end;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(&w, 0, sizeof(w));
	if (image_size < 96)
		return rb_errfmt(err, errlen, -EINVAL, "not a squashfs image (%llu bytes)",
				 (unsigned long long)image_size);
	rc = io->read(io->ctx, 0, sbuf, sizeof(sbuf));
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "read: %s", strerror(-rc));
	rc = sqfs_super_parse(sbuf, sizeof(sbuf), &s->sb, err, errlen);
	if (rc < 0)
		return rc;
	if (s->sb.bytes_used > image_size)
		return rb_errfmt(err, errlen, -EINVAL, "truncated: %llu bytes of the %llu it uses",
				 (unsigned long long)image_size, (unsigned long long)s->sb.bytes_used);
	r = malloc(sizeof(*r));
	if (!r)
		return rb_errfmt(err, errlen, -ENOMEM, "out of memory");
	r->io = io;
	r->s = s;
	r->end = s->sb.bytes_used;
	r->err = err;
	r->errlen = errlen;
	w.r = r;
	err[0] = '\0';

	area(s, "superblock", 0, 96);
	area(s, "inode table", s->sb.inode_table, s->sb.dir_table);
	dir_end = s->sb.bytes_used;
	rc = mtab_load(r, s->sb.inode_table, s->sb.dir_table, "inode table", &w.it);
	if (rc == 0 && (uint64_t)s->sb.inodes > w.it.len / 20)
		rc = rb_errfmt(err, errlen, -EINVAL, "inode table: shorter than %u inodes",
			       s->sb.inodes);
	if (rc == 0)
		rc = frags_load(r, &fragtab, &dir_end);
	if (rc == 0 && s->sb.export_table != SQFS_NONE)
		rc = lookup_area(r, s->sb.export_table,
				 ((uint64_t)s->sb.inodes + EXPORTS_PER_BLOCK - 1) / EXPORTS_PER_BLOCK,
				 "export table", &dir_end);
	if (rc == 0)
		rc = lookup_area(r, s->sb.id_table, ((uint64_t)s->sb.ids + IDS_PER_BLOCK - 1) /
				 IDS_PER_BLOCK, "id table", &dir_end);
	if (rc == 0)
		rc = xattr_area(r, &dir_end);
	if (rc == 0) {
		area(s, "directory table", s->sb.dir_table, dir_end);
		rc = mtab_load(r, s->sb.dir_table, dir_end, "directory table", &w.dt);
	}
	if (rc == 0)
		rc = walk_tree(&w, fragtab);

	if (rc < 0 && !err[0])
		rb_errfmt(err, errlen, rc, "%s", strerror(-rc));
	mtab_free(&w.it);
	mtab_free(&w.dt);
	free(w.dir_seen);
	free(w.e);
	free(w.stack);
	free(w.stack_dir);
	free(fragtab);
	free(r);
	if (rc < 0)
		sqfs_free(s);
	return rc;
}

int sqfs_mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct sqfs_mem *m = ctx;

	if (off > m->len || len > m->len - off)
		return -EIO;
	memcpy(buf, m->b + off, len);
	return 0;
}

void sqfs_free(struct sqfs *s)
{
	free(s->f);
	free(s->d);
	free(s->names);
	memset(s, 0, sizeof(*s));
}

int sqfs_path(const struct sqfs *s, size_t i, char *buf, size_t len)
{
	const struct sqfs_file *f = &s->f[i];
	const char *name = s->names + f->name;
	size_t nl = strlen(name), dl = s->d[f->dir].path_len, total = dl + (dl ? 1 : 0) + nl;
	uint32_t d = f->dir;
	size_t at;

	if (total + 1 > len)
		return -ENAMETOOLONG;
	buf[total] = '\0';
	at = total - nl;
	memcpy(buf + at, name, nl);
	while (d) {
		const char *dn = s->names + s->d[d].name;
		size_t l = strlen(dn);

		buf[--at] = '/';
		at -= l;
		memcpy(buf + at, dn, l);
		d = s->d[d].parent;
	}
	return (int)total;
}
