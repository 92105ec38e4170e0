/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A DNS stub resolver over UDP for the HTTP client, in place of glibc's
 * NSS (which a static binary cannot load). The servers are the first
 * DNS_SERVERS_MAX "nameserver" lines of /etc/resolv.conf (its "options
 * timeout:N attempts:N" honoured), else those klibc's ipconfig found by
 * DHCP in the initramfs (IPV4DNS0, IPV4DNS1 of /run/net-*.conf). Each is
 * asked for A, then AAAA records, from a connected socket (the kernel
 * takes only the server's datagrams, on a random port) with a random ID;
 * the messages are format/dns.h's.
 */
#ifndef RAMBOOT_SOURCE_DNS_H
#define RAMBOOT_SOURCE_DNS_H

#include <stdint.h>
#include <sys/socket.h>

#define DNS_SERVERS_MAX 3
#define DNS_TIMEOUT_S   5        /* per server and attempt, as glibc's */
#define DNS_ATTEMPTS    2

/* The first address of host (IPv4 first) into sa with port, every wait
 * ending by the monotonic deadline (clock.h's now_sec()). 0, or:
 * -ENXIO host not found (no such name, or no address), -ENOMSG no
 * server answered, -EDESTADDRREQ no server known, -EMSGSIZE, -EIO,
 * -EPROTO, -ELOOP: see dns_parse(); dns_strerror() says which. */
int dns_resolve(const char *host, uint16_t port, struct sockaddr_storage *sa, socklen_t *len,
		double deadline);
const char *dns_strerror(int rc);

#endif
