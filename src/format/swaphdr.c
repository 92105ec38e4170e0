// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Swap header. The kernel reads it in mm/swapfile.c (union swap_header):
 * it checks the magic at the end of the first page, then uses last_page
 * and the bad-page list; blkid reads label and UUID for TYPE=swap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/hex.h"
#include "format/swaphdr.h"

#define BOOTBITS 1024
#define MAGIC "SWAPSPACE2"
#define MAGIC_LEN 10

/* The fields after the boot bits, in CPU byte order like mkswap writes. */
struct swap_header_v1 {
	uint32_t version;
	uint32_t last_page;
	uint32_t nr_badpages;
	uint8_t uuid[16];
	char volume_name[16];
	uint32_t padding[117];
	uint32_t badpages[1];
};

static int pagesize_ok(size_t ps)
{
	return ps >= 4096 && (ps & (ps - 1)) == 0;
}

int swaphdr_build(void *page, size_t pagesize, uint64_t size,
		  const uint8_t uuid[16], const char *label)
{
	struct swap_header_v1 h;
	uint64_t pages;

	if (!pagesize_ok(pagesize) || strlen(label) >= SWAPHDR_LABEL_MAX)
		return -EINVAL;
	pages = size / pagesize;
	if (pages < SWAPHDR_MIN_PAGES)
		return -EINVAL;
	/* last_page is 32 bits: the kernel uses no more pages than that. */
	if (pages - 1 > UINT32_MAX)
		pages = (uint64_t)UINT32_MAX + 1;
	memset(page, 0, pagesize);
	memset(&h, 0, sizeof(h));
	h.version = 1;
	h.last_page = (uint32_t)(pages - 1);
	h.nr_badpages = 0;
	memcpy(h.uuid, uuid, 16);
	/* mkswap keeps the label NUL-terminated; blkid reads up to 16. */
	memcpy(h.volume_name, label, strlen(label));
	memcpy((char *)page + BOOTBITS, &h, sizeof(h));
	memcpy((char *)page + pagesize - MAGIC_LEN, MAGIC, MAGIC_LEN);
	return 0;
}

int swaphdr_parse(const void *page, size_t pagesize, char label[SWAPHDR_LABEL_MAX + 1],
		  uint8_t uuid[16])
{
	struct swap_header_v1 h;

	if (!pagesize_ok(pagesize))
		return -EINVAL;
	if (memcmp((const char *)page + pagesize - MAGIC_LEN, MAGIC, MAGIC_LEN))
		return -EINVAL;
	memcpy(&h, (const char *)page + BOOTBITS, sizeof(h));
	if (h.version != 1)
		return -EINVAL;
	memcpy(uuid, h.uuid, 16);
	memcpy(label, h.volume_name, SWAPHDR_LABEL_MAX);
	label[SWAPHDR_LABEL_MAX] = '\0';
	return 0;
}

int swaphdr_uuid_random(uint8_t uuid[16])
{
	size_t done = 0;

	while (done < 16) {
		ssize_t n = getrandom(uuid + done, 16 - done, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);  /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);  /* RFC 4122 variant */
	return 0;
}

int swaphdr_uuid_parse(const char *s, uint8_t uuid[16])
{
	int i, n = 0;

	if (strlen(s) != 36)
		return -EINVAL;
	for (i = 0; i < 36;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = hex_digit(s[i]);
		lo = hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		uuid[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return 0;
}

void swaphdr_uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int swaphdr_write(int fd, size_t pagesize, uint64_t size,
		  const uint8_t uuid[16], const char *label)
{
	void *page = calloc(1, pagesize);
	ssize_t n;
	int rc;

	if (!page)
		return -ENOMEM;
	rc = swaphdr_build(page, pagesize, size, uuid, label);
	if (rc == 0) {
		n = pwrite(fd, page, pagesize, 0);
		while (n < 0 && errno == EINTR)
			n = pwrite(fd, page, pagesize, 0);
		if (n < 0)
			rc = -errno;
		else if ((size_t)n != pagesize)
			rc = -EIO;
	}
	/* swapon(2) reads the header through the page cache of the same
	 * block device, but a later reader may open it with O_DIRECT. */
	if (rc == 0 && fsync(fd) < 0 && errno != EINVAL)
		rc = -errno;
	free(page);
	return rc;
}

int swaphdr_read(int fd, size_t pagesize, char label[SWAPHDR_LABEL_MAX + 1], uint8_t uuid[16])
{
	void *page = malloc(pagesize);
	ssize_t n;
	int rc;

	if (!page)
		return -ENOMEM;
	n = pread_full(fd, page, pagesize, 0);
	if (n < 0)
		rc = (int)n;
	else if ((size_t)n < pagesize)
		rc = -EINVAL;
	else
		rc = swaphdr_parse(page, pagesize, label, uuid);
	free(page);
	return rc;
}
