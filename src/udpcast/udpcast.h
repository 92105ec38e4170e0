/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udpcast: one multicast stream for a whole lab. The client side runs
 * udp-receiver and reads the image from its stdout (ramboot load
 * --udpcast); the server side runs udp-sender in a loop of sessions
 * (ramboot serve). The option values may come from the kernel command
 * line: each is checked strictly before it reaches an argument vector.
 */
#ifndef RAMBOOT_UDPCAST_H
#define RAMBOOT_UDPCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define UDPCAST_START_TIMEOUT 20     /* s: wait for a sender (default) */
#define UDPCAST_RECEIVE_TIMEOUT 10   /* s: silence once the stream runs */

/* The receiver's settings: "portbase=P,interface=IF,start-timeout=S,
 * receive-timeout=S", every key optional. */
struct udpcast_opts {
	unsigned portbase;           /* 0: udpcast's default (9000) */
	char interface[16];          /* "": udpcast's choice (an interface
					 * with an IPv4 address, one with a
					 * link first) */
	unsigned start_timeout;      /* seconds */
	unsigned receive_timeout;    /* seconds */
};

/* Parse spec (NULL or "" for the defaults). 0, or -EINVAL with the
 * reason in err. */
int udpcast_parse(const char *spec, struct udpcast_opts *o, char *err, size_t errlen);

/* A network interface name the kernel could have: 1 to 15 of
 * [A-Za-z0-9_.:-], not starting with '-', not "." or "..". */
bool udpcast_ifname_ok(const char *s);

/* The udp-receiver argument vector for o into argv (room entries,
 * NULL-terminated; the numbers are written into num, numlen bytes).
 * Returns the number of arguments or -ENOSPC. */
int udpcast_receiver_argv(const struct udpcast_opts *o, const char **argv, size_t room,
			  char *num, size_t numlen);

/* ---- the receiver, for source/source.h's SRC_UDPCAST ---- */
struct udpcast_rx {
	struct udpcast_opts o;
	pid_t pid;                   /* 0: none running */
};
/* Start udp-receiver with o: *fd is the read end of its stdout. 0 or
 * -errno with the reason in err. */
int udpcast_rx_start(struct udpcast_rx *rx, const struct udpcast_opts *o, int *fd, char *err,
		     size_t errlen);
/* The stream ended (EOF): udp-receiver must have exited 0. Waits for
 * it a little; 0, or -EIO with the reason in err. */
int udpcast_rx_end(struct udpcast_rx *rx, char *err, size_t errlen);
/* Stop udp-receiver if it still runs (TERM, then KILL) and reap it. */
void udpcast_rx_stop(struct udpcast_rx *rx);

#endif
