/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ramboot's NBD client: the fixed-newstyle handshake in user space
 * (NBD_OPT_GO, else NBD_OPT_EXPORT_NAME: doc/proto.md of the NBD
 * project), then the socket handed to the kernel's NBD driver through
 * its generic-netlink family "nbd" (include/uapi/linux/nbd-netlink.h,
 * drivers/block/nbd.c), without libnl:
 *
 *   NBD_CMD_CONNECT      a free /dev/nbdN on the socket, with the export's
 *                        size and flags, a request timeout
 *                        (NBD_ATTR_TIMEOUT) and the time the driver holds
 *                        requests for a new socket once this one died
 *                        (NBD_ATTR_DEAD_CONN_TIMEOUT);
 *   NBD_CMD_RECONFIGURE  a new socket for the device, once the driver
 *                        marked the old one dead (it takes none before:
 *                        nbd_reconnect_socket looks for a dead one).
 *
 * The driver keeps the device configured after its socket died (no
 * NBD_CFLAG_DISCONNECT_ON_CLOSE): no process has to stay in the kernel
 * for it, as with the NBD_DO_IT ioctl, and the sockets it holds take
 * from the memory reserves (sk_set_memalloc). A request that finds the
 * socket dead waits for a reconnection up to the dead-connection
 * timeout, then fails with EIO.
 */
#ifndef RAMBOOT_NBD_H
#define RAMBOOT_NBD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define NBD_DEFAULT_PORT 10809

struct nbd_server {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char name[80];            /* "10.0.2.2:10809", for messages */
	char export[64];          /* the export's name */
};

/* What the handshake says of the export. */
struct nbd_export {
	uint64_t size;
	uint16_t flags;           /* transmission flags (NBD_FLAG_*) */
};

/* "ADDR", "ADDR:PORT", "[V6ADDR]:PORT" (numeric addresses: no resolver
 * in the initramfs) into s, with the export name. 0 or -EINVAL. */
int nbd_server_parse(const char *spec, const char *export, struct nbd_server *s);

/* Connect to the server and negotiate the export: *fd is the socket,
 * ready for the transmission phase, with TCP keepalive and a user
 * timeout of timeout_s (a cut link ends it rather than hanging it), and
 * no send or receive timeout (the driver has its own). The connection
 * and the whole handshake have one deadline, the nearer of timeout_s
 * from now and deadline (CLOCK_MONOTONIC seconds as now_sec() gives
 * them; 0: none): a server that trickles its bytes does not move it
 * (-ETIMEDOUT). A server that sends more than NBD_REPLIES_MAX replies to
 * an option, a reply longer than NBD_REPLY_MAX, a reply to another
 * option, a read-only export: -EPROTO (-EROFS for the last). 0 or
 * -errno with the reason in err, one line (the server's text in it with
 * its control characters replaced). */
int nbd_open(const struct nbd_server *s, unsigned timeout_s, double deadline, int *fd,
	     struct nbd_export *ex, char *err, size_t errlen);

/* What a server may send to one option: we ask for nothing but the
 * export's information, a 2-byte type and at most a string, and
 * doc/proto.md caps strings at 4096 bytes (an error's message too). */
#define NBD_REPLIES_MAX 32
#define NBD_REPLY_MAX (2 + 4096)

/* The driver's timeouts, in seconds. */
struct nbd_timeouts {
	unsigned request;         /* NBD_ATTR_TIMEOUT */
	unsigned dead_conn;       /* NBD_ATTR_DEAD_CONN_TIMEOUT */
};

/* Hand the socket to a free NBD device (modprobe nbd where the family is
 * missing); its number in *index. The driver holds its own reference:
 * the caller may close fd. 0 or -errno with the reason in err. */
int nbd_kernel_connect(int fd, const struct nbd_export *ex, const struct nbd_timeouts *t,
		       int *index, char *err, size_t errlen);

/* A new socket for the device index after its old one died. 0 or -errno
 * (-ENOSPC: the driver has no dead socket to replace). */
int nbd_kernel_reconnect(int index, int fd, char *err, size_t errlen);

/* The driver's notices of dead links (NBD_CMD_LINK_DEAD, to the
 * multicast group "nbd_mc_group"): it sends one when it gives a socket
 * up (a request timed out, a send failed), and takes a new one
 * (nbd_kernel_reconnect) only after that. A netlink socket that
 * receives them, or -errno. */
int nbd_link_watch_open(void);

/* Block until the notice for device index comes. 0, or -errno
 * (-ENOBUFS: notices were lost). */
int nbd_link_dead_wait(int fd, int index);

/* Disconnect the device index (its requests fail from then on). 0 or
 * -errno. */
int nbd_kernel_disconnect(int index);

/* The device the process pid connected (the driver's "pid" attribute,
 * /sys/block/nbdN/pid, written by nbd_start_device): N, or -ENOENT. */
int nbd_find_by_pid(pid_t pid);

#endif
