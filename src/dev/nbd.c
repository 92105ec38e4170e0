// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ramboot's NBD client (nbd.h): the handshake over a TCP socket, and the
 * kernel's NBD driver told about the socket through generic netlink.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/genetlink.h>
#include <linux/nbd.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "lib/text.h"
#include "dev/nbd.h"

/* The protocol's constants (NBD's doc/proto.md), all big-endian. */
#define NBD_INIT_MAGIC 0x4e42444d41474943ULL     /* "NBDMAGIC" */
#define NBD_OPTS_MAGIC 0x49484156454f5054ULL     /* "IHAVEOPT" */
#define NBD_REP_MAGIC 0x0003e889045565a9ULL
#define NBD_HFLAG_FIXED_NEWSTYLE 1u
#define NBD_HFLAG_NO_ZEROES 2u
#define NBD_OPT_EXPORT_NAME 1u
#define NBD_OPT_GO 7u
#define NBD_REP_ACK 1u
#define NBD_REP_INFO 3u
#define NBD_REP_ERR_UNSUP 0x80000001u
#define NBD_REP_ERR_UNKNOWN 0x80000006u
#define NBD_INFO_EXPORT 0u

int nbd_server_parse(const char *spec, const char *export, struct nbd_server *s)
{
	char host[64];
	const char *port = NULL, *end;
	unsigned long p = NBD_DEFAULT_PORT;
	size_t n;

	memset(s, 0, sizeof(*s));
	if (spec[0] == '[') {
		end = strchr(spec, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		n = (size_t)(end - spec - 1);
		spec++;
		port = end[1] ? end + 2 : NULL;
	} else {
		end = strchr(spec, ':');
		n = end ? (size_t)(end - spec) : strlen(spec);
		port = end ? end + 1 : NULL;
	}
	if (n == 0 || n >= sizeof(host) || !export || !*export ||
	    strlen(export) >= sizeof(s->export))
		return -EINVAL;
	for (end = export; *end; end++)
		if (text_is_ctl((unsigned char)*end))
			return -EINVAL;   /* it goes into our messages */
	memcpy(host, spec, n);
	host[n] = '\0';
	if (port) {
		char *e;

		errno = 0;
		p = strtoul(port, &e, 10);
		if (!*port || *e || errno || p == 0 || p > 65535)
			return -EINVAL;
	}
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)&s->addr;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&s->addr;

		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)p);
			s->addrlen = sizeof(*a4);
		} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)p);
			s->addrlen = sizeof(*a6);
		} else {
			return -EINVAL;
		}
	}
	snprintf(s->name, sizeof(s->name), strchr(host, ':') ? "[%s]:%lu" : "%s:%lu", host, p);
	snprintf(s->export, sizeof(s->export), "%s", export);
	return 0;
}

/* ---- the handshake ---- */

static uint64_t be64(const unsigned char *b)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put64(unsigned char *b, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
}

static void put32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24);
	b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8);
	b[3] = (unsigned char)v;
}

/* Wait until fd is ready for events, at the latest until end (now_sec()
 * seconds). 0, -ETIMEDOUT or -errno. */
static int ready(int fd, short events, double end)
{
	struct pollfd p = { .fd = fd, .events = events };
	double left;
	int rc;

	do {
		left = end - now_sec();
		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&p, 1, (int)(left * 1000) + 1);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc == 0 ? -ETIMEDOUT : 0;
}

/* One handshake: the socket (non-blocking) and its deadline. Each read
 * and write waits only for what is left of it, so bytes that trickle
 * in do not extend it, as a receive timeout per read would. */
struct hs {
	int fd;
	double end;
};

static int xfer(const struct hs *h, void *buf, size_t len, bool out)
{
	unsigned char *b = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n;
		int rc = ready(h->fd, out ? POLLOUT : POLLIN, h->end);

		if (rc < 0)
			return rc;
		n = out ? send(h->fd, b + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL) :
		    recv(h->fd, b + done, len - done, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		done += (size_t)n;
	}
	return 0;
}

static int rd(const struct hs *h, void *buf, size_t len)
{
	return xfer(h, buf, len, false);
}

static int send_opt(const struct hs *h, uint32_t opt, const char *name, int go)
{
	unsigned char b[16 + 4 + 64 + 2];
	size_t n = strlen(name), len = go ? 4 + n + 2 : n, o = 16;

	/* magic, option, length of the data; GO's data: the name's
	 * length, the name, the number of information requests */
	put64(b, NBD_OPTS_MAGIC);
	put32(b + 8, opt);
	put32(b + 12, (uint32_t)len);
	if (go) {
		put32(b + 16, (uint32_t)n);
		o = 20;
	}
	memcpy(b + o, name, n);
	o += n;
	if (go) {
		b[o++] = 0;   /* no information requests: the export's comes */
		b[o++] = 0;
	}
	return xfer(h, b, o, true);
}

/* NBD_OPT_GO: 1 when the server does not know the option (the caller
 * falls back), 0 with ex filled, -errno. */
static int opt_go(const struct hs *h, const char *name, struct nbd_export *ex, char *err,
		  size_t errlen)
{
	unsigned char hd[20], data[NBD_REPLY_MAX];
	char text[128];
	bool have = false;
	int rc = send_opt(h, NBD_OPT_GO, name, 1), n;

	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "sending NBD_OPT_GO: %s", strerror(-rc));
	for (n = 0;; n++) {
		uint32_t opt, type, len;

		if (n == NBD_REPLIES_MAX)
			return rb_errfmt(err, errlen, -EPROTO, "NBD_OPT_GO: more than %d replies",
					 NBD_REPLIES_MAX);
		rc = rd(h, hd, sizeof(hd));
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "reply to NBD_OPT_GO: %s", strerror(-rc));
		opt = be32(hd + 8);
		type = be32(hd + 12);
		len = be32(hd + 16);
		if (be64(hd) != NBD_REP_MAGIC)
			return rb_errfmt(err, errlen, -EPROTO, "reply to NBD_OPT_GO: bad magic");
		if (opt != NBD_OPT_GO)
			return rb_errfmt(err, errlen, -EPROTO, "NBD_OPT_GO: a reply to option %" PRIu32,
					 opt);
		if (len > NBD_REPLY_MAX)
			return rb_errfmt(err, errlen, -EPROTO, "NBD_OPT_GO: a reply of %" PRIu32
					 " bytes (at most %d)", len, NBD_REPLY_MAX);
		rc = rd(h, data, len);
		if (rc < 0)
			return rb_errfmt(err, errlen, rc, "reply to NBD_OPT_GO: %s", strerror(-rc));
		if (type == NBD_REP_ACK)
			break;
		if (type == NBD_REP_INFO && len >= 12 && data[0] == 0 && data[1] == NBD_INFO_EXPORT) {
			ex->size = be64(data + 2);
			ex->flags = (uint16_t)(data[10] << 8 | data[11]);
			have = true;
		}
		if (type == NBD_REP_ERR_UNSUP)
			return 1;
		if (type & 0x80000000u) {
			/* The server's message, on our one line. */
			text_scrub(text, sizeof(text), (const char *)data, len, ' ');
			return rb_errfmt(err, errlen, -ENOENT, "export '%s': %s%s%s (reply %#x)", name,
					 type == NBD_REP_ERR_UNKNOWN ? "unknown to the server" :
					 "refused", text[0] ? ": " : "", text, type);
		}
	}
	if (!have)
		return rb_errfmt(err, errlen, -EPROTO, "export '%s': no size in the reply", name);
	return 0;
}

static int opt_export_name(const struct hs *h, const char *name, bool no_zeroes,
			   struct nbd_export *ex, char *err, size_t errlen)
{
	unsigned char b[10 + 124];
	int rc = send_opt(h, NBD_OPT_EXPORT_NAME, name, 0);

	if (rc == 0)
		rc = rd(h, b, no_zeroes ? 10 : sizeof(b));
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "export '%s': %s", name, rc == -ECONNRESET ?
				 "closed by the server (no such export?)" : strerror(-rc));
	ex->size = be64(b);
	ex->flags = (uint16_t)(b[8] << 8 | b[9]);
	return 0;
}

static int handshake(const struct hs *h, const char *name, struct nbd_export *ex, char *err,
		     size_t errlen)
{
	unsigned char g[18], c[4];
	unsigned hflags;
	int rc = rd(h, g, sizeof(g));

	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "greeting: %s", strerror(-rc));
	if (be64(g) != NBD_INIT_MAGIC || be64(g + 8) != NBD_OPTS_MAGIC)
		return rb_errfmt(err, errlen, -EPROTO, "not a newstyle NBD server");
	hflags = (unsigned)(g[16] << 8 | g[17]);
	put32(c, hflags & (NBD_HFLAG_FIXED_NEWSTYLE | NBD_HFLAG_NO_ZEROES));
	rc = xfer(h, c, sizeof(c), true);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "client flags: %s", strerror(-rc));
	if (hflags & NBD_HFLAG_FIXED_NEWSTYLE) {
		rc = opt_go(h, name, ex, err, errlen);
		if (rc <= 0)
			return rc;
	}
	return opt_export_name(h, name, hflags & NBD_HFLAG_NO_ZEROES, ex, err, errlen);
}

int nbd_open(const struct nbd_server *s, unsigned timeout_s, double deadline, int *fdp,
	     struct nbd_export *ex, char *err, size_t errlen)
{
	struct hs h = { .end = now_sec() + timeout_s };
	int fd, rc, one = 1, v;
	unsigned ms = timeout_s * 1000;
	socklen_t l = sizeof(v);

	if (deadline > 0 && deadline < h.end)
		h.end = deadline;
	fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return rb_errfmt(err, errlen, -errno, "socket: %s", strerror(errno));
	h.fd = fd;
	rc = connect(fd, (const struct sockaddr *)&s->addr, s->addrlen) < 0 ? -errno : 0;
	if (rc == -EINPROGRESS) {
		rc = ready(fd, POLLOUT, h.end);
		if (rc == 0)
			rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l) < 0 ? -errno : -v;
	}
	if (rc < 0) {
		rb_errfmt(err, errlen, rc, "connect: %s", strerror(-rc));
		goto fail;
	}
	/* A cut link while idle: keepalive probes after 10 s, every 5 s,
	 * three of them. Unacknowledged data: given up after the timeout.
	 * Either error ends the driver's receive, which marks it dead. */
	v = 10;
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &v, sizeof(v));
	v = 5;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &v, sizeof(v));
	v = 3;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &v, sizeof(v));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(ex, 0, sizeof(*ex));
	rc = handshake(&h, s->export, ex, err, errlen);
	if (rc < 0)
		goto fail;
	if (ex->flags & NBD_FLAG_READ_ONLY) {
		rc = rb_errfmt(err, errlen, -EROFS, "export '%s' is read-only", s->export);
		goto fail;
	}
	/* The driver blocks on the socket by its own flags and timeouts. */
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*fdp = fd;
	return 0;
fail:
	(void)close(fd);
	return rc;
}

/* ---- generic netlink, by hand ---- */

struct nlmsg {
	union {
		struct nlmsghdr h;
		unsigned char b[512];
	} u;
};

static void nl_init(struct nlmsg *m, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->u.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->u.h.nlmsg_type = family;
	m->u.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->u.h.nlmsg_seq = 1;
	g = NLMSG_DATA(&m->u.h);
	g->cmd = cmd;
	g->version = version;
}

/* An attribute at the end; its offset (for nesting). */
static size_t nl_put(struct nlmsg *m, uint16_t type, const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(m->u.h.nlmsg_len);
	struct nlattr *a = (struct nlattr *)(m->u.b + off);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy(a + 1, data, len);
	m->u.h.nlmsg_len = (uint32_t)(off + NLA_ALIGN(a->nla_len));
	return off;
}

static void nl_u64(struct nlmsg *m, uint16_t type, uint64_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static void nl_u32(struct nlmsg *m, uint16_t type, uint32_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static void nl_nest_end(struct nlmsg *m, size_t off)
{
	((struct nlattr *)(m->u.b + off))->nla_len = (uint16_t)(m->u.h.nlmsg_len - off);
}

/* The value (a u16 or u32) of the attribute at path (types from the
 * top; 0 matches any: the entries of a list) among len bytes of
 * attributes at a. */
static bool nla_find(const struct nlattr *a, int len, const uint16_t *path, int depth,
		     uint32_t *val)
{
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		uint16_t t = a->nla_type & NLA_TYPE_MASK;

		if (!path[0] || t == path[0]) {
			if (depth > 1 && nla_find((const struct nlattr *)(const void *)(a + 1),
						  a->nla_len - NLA_HDRLEN, path + 1, depth - 1, val))
				return true;
			if (depth == 1 && a->nla_len >= NLA_HDRLEN + 4) {
				memcpy(val, a + 1, 4);
				return true;
			}
			if (depth == 1 && a->nla_len >= NLA_HDRLEN + 2) {
				*val = *(const uint16_t *)(const void *)(a + 1);
				return true;
			}
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)(const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return false;
}

/* One read of the socket; for each generic-netlink message of command
 * cmd (0: any), the attribute at path into *val. 1 when a message
 * matched, 0 when none, 2 at the acknowledgement, -errno. */
static int nl_read(int fd, uint8_t cmd, const uint16_t *path, int depth, uint32_t *val)
{
	union {
		struct nlmsghdr h;
		unsigned char b[8192];
	} r;
	struct nlmsghdr *h;
	ssize_t n;
	int len, found = 0;

	do
		n = recv(fd, r.b, sizeof(r.b), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	len = (int)n;
	for (h = &r.h; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		const struct genlmsghdr *g = NLMSG_DATA(h);

		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			return e->error ? e->error : 2;   /* 0: the acknowledgement */
		}
		if (h->nlmsg_type == NLMSG_DONE)
			return 2;
		if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN) || (cmd && g->cmd != cmd) || !val)
			continue;
		if (nla_find((const struct nlattr *)(const void *)((const char *)g + GENL_HDRLEN),
			     (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), path, depth, val))
			found = 1;
	}
	return found;
}

/* Send m and read the answers up to the acknowledgement; the attribute
 * at path of a reply into *val when val. 0 or -errno. */
static int nl_talk(int fd, struct nlmsg *m, const uint16_t *path, int depth, uint32_t *val)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	int rc;

	if (sendto(fd, m->u.b, m->u.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)) < 0)
		return -errno;
	do
		rc = nl_read(fd, 0, path, depth, val);
	while (rc == 0 || rc == 1);
	return rc < 0 ? rc : 0;
}

/* The family's number, or its multicast group's (group). */
static int nl_family(int fd, bool group, uint32_t *id)
{
	static const uint16_t fam[] = { CTRL_ATTR_FAMILY_ID };
	static const uint16_t grp[] = { CTRL_ATTR_MCAST_GROUPS, 0, CTRL_ATTR_MCAST_GRP_ID };
	struct nlmsg m;
	int rc;

	*id = 0;
	nl_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	nl_put(&m, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME, sizeof(NBD_GENL_FAMILY_NAME));
	rc = nl_talk(fd, &m, group ? grp : fam, group ? 3 : 1, id);
	return rc == 0 && *id == 0 ? -ENOENT : rc;
}

/* A netlink socket and the number of the family "nbd". The socket, or
 * -errno (-ENOENT: no such family). */
static int nl_open(uint16_t *family)
{
	struct timeval tv = { .tv_sec = 10 };
	uint32_t id = 0;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), rc;

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rc = nl_family(fd, false, &id);
	if (rc < 0) {
		(void)close(fd);
		return rc;
	}
	*family = (uint16_t)id;
	return fd;
}

int nbd_link_watch_open(void)
{
	uint16_t fam;
	uint32_t grp;
	int fd = nl_open(&fam), rc;

	if (fd < 0)
		return fd;
	rc = nl_family(fd, true, &grp);
	if (rc == 0 && setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0)
		rc = -errno;
	if (rc < 0) {
		(void)close(fd);
		return rc;
	}
	return fd;
}

int nbd_link_dead_wait(int fd, int index)
{
	static const uint16_t idx[] = { NBD_ATTR_INDEX };

	for (;;) {
		uint32_t i = UINT32_MAX;
		int rc = nl_read(fd, NBD_CMD_LINK_DEAD, idx, 1, &i);

		if (rc == -EAGAIN)
			continue;       /* the receive timeout: nothing yet */
		if (rc < 0)
			return rc;      /* -ENOBUFS: notices lost; the caller looks */
		if (rc == 1 && i == (uint32_t)index)
			return 0;
	}
}

static void nl_socket(struct nlmsg *m, int sock)
{
	size_t socks = nl_put(m, NBD_ATTR_SOCKETS | NLA_F_NESTED, NULL, 0);
	size_t item = nl_put(m, NBD_SOCK_ITEM | NLA_F_NESTED, NULL, 0);

	nl_u32(m, NBD_SOCK_FD, (uint32_t)sock);
	nl_nest_end(m, item);
	nl_nest_end(m, socks);
}

int nbd_kernel_connect(int sock, const struct nbd_export *ex, const struct nbd_timeouts *t,
		       int *index, char *err, size_t errlen)
{
	static const char *const args[] = { "-q", "nbd", NULL };
	static const uint16_t idx_path[] = { NBD_ATTR_INDEX };
	struct nlmsg m;
	uint16_t fam;
	uint32_t idx = UINT32_MAX;
	int fd = nl_open(&fam), rc;

	if (fd == -ENOENT && run_modprobe(args) == 0)
		fd = nl_open(&fam);
	if (fd < 0)
		return rb_errfmt(err, errlen, fd, "nbd: netlink family: %s", fd == -ENOENT ?
				 "not in this kernel (no nbd module)" : strerror(-fd));
	nl_init(&m, fam, NBD_CMD_CONNECT, NBD_GENL_VERSION);
	nl_u64(&m, NBD_ATTR_SIZE_BYTES, ex->size);
	/* zram writes and reads whole pages */
	nl_u64(&m, NBD_ATTR_BLOCK_SIZE_BYTES, 4096);
	nl_u64(&m, NBD_ATTR_SERVER_FLAGS, ex->flags);
	nl_u64(&m, NBD_ATTR_TIMEOUT, t->request);
	nl_u64(&m, NBD_ATTR_DEAD_CONN_TIMEOUT, t->dead_conn);
	nl_socket(&m, sock);
	rc = nl_talk(fd, &m, idx_path, 1, &idx);
	(void)close(fd);
	if (rc == 0 && idx == UINT32_MAX)
		rc = -EPROTO;
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "nbd: connect: %s", strerror(-rc));
	*index = (int)idx;
	return 0;
}

int nbd_kernel_reconnect(int index, int sock, char *err, size_t errlen)
{
	struct nlmsg m;
	uint16_t fam;
	int fd = nl_open(&fam), rc;

	if (fd < 0)
		return rb_errfmt(err, errlen, fd, "nbd: netlink family: %s", strerror(-fd));
	nl_init(&m, fam, NBD_CMD_RECONFIGURE, NBD_GENL_VERSION);
	nl_u32(&m, NBD_ATTR_INDEX, (uint32_t)index);
	nl_socket(&m, sock);
	rc = nl_talk(fd, &m, NULL, 0, NULL);
	(void)close(fd);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "nbd%d: reconnect: %s", index, strerror(-rc));
	return 0;
}

int nbd_kernel_disconnect(int index)
{
	struct nlmsg m;
	uint16_t fam;
	int fd = nl_open(&fam), rc;

	if (fd < 0)
		return fd;
	nl_init(&m, fam, NBD_CMD_DISCONNECT, NBD_GENL_VERSION);
	nl_u32(&m, NBD_ATTR_INDEX, (uint32_t)index);
	rc = nl_talk(fd, &m, NULL, 0, NULL);
	(void)close(fd);
	return rc;
}

int nbd_find_by_pid(pid_t pid)
{
	char p[PATH_MAX], v[24];
	struct dirent *de;
	int nbd = -ENOENT, n;
	DIR *d;

	if (rb_path(p, sizeof(p), "/sys/block") < 0 || !(d = opendir(p)))
		return -ENOENT;
	while (nbd < 0 && (de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "nbd%d", &n) != 1)
			continue;
		snprintf(p, sizeof(p), "/sys/block/nbd%d/pid", n);
		if (rb_read_str(p, v, sizeof(v)) >= 0 && atoi(v) == (int)pid)
			nbd = n;
	}
	closedir(d);
	return nbd;
}
