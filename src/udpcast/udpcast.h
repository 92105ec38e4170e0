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

/* ---- the source of a load (source.c) ----
 * ramboot load --udpcast arms it; the loader's source is then the
 * stdout of a udp-receiver started by source_open. */
void udpcast_source_arm(const struct udpcast_opts *o);
bool udpcast_source_armed(void);
/* The next load reads its own source again (ramboot boot's fallback). */
void udpcast_source_disarm(void);
/* Start udp-receiver: *fd is the read end of its stdout. 0 or -errno
 * with the reason in err. */
int udpcast_source_open(int *fd, char *err, size_t errlen);
/* The stream ended (EOF): udp-receiver must have exited 0. Waits for
 * it a little; 0, or -EIO with the reason in err. */
int udpcast_source_end(char *err, size_t errlen);
/* Stop udp-receiver if it still runs (TERM, then KILL) and reap it. */
void udpcast_source_close(void);

#endif
