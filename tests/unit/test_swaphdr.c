// SPDX-License-Identifier: GPL-2.0-or-later
/* The swap header, byte for byte against util-linux mkswap and as blkid
 * reads it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "format/swaphdr.h"

static char dir[] = "/tmp/ramboot-swaphdr-XXXXXX";
static const char *uuid_s = "5f1c0d2e-7a43-4b6e-9d21-c0ffee123456";

static int have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static int skip(const char *name, const char *why)
{
	tap_n++;
	printf("ok %d - %s # SKIP %s\n", tap_n, name, why);
	return 0;
}

/* 0 when the files have the same size and the same first MiB (both
 * tools write only the first page; the rest is a hole). */
static int files_differ(const char *a, const char *b)
{
	static char ba[65536], bb[65536];
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY), rc = 1;
	struct stat sa, sb;
	off_t off = 0;

	if (fa < 0 || fb < 0 || fstat(fa, &sa) < 0 || fstat(fb, &sb) < 0)
		goto out;
	if (sa.st_size != sb.st_size) {
		printf("#   sizes differ: %lld vs %lld\n", (long long)sa.st_size,
		       (long long)sb.st_size);
		goto out;
	}
	while (off < (1 << 20)) {
		ssize_t na = read_full(fa, ba, sizeof(ba)), nb = read_full(fb, bb, sizeof(bb));

		if (na != nb || na < 0) {
			printf("#   %s and %s differ in length near %lld\n", a, b, (long long)off);
			goto out;
		}
		if (na == 0)
			break;
		if (memcmp(ba, bb, (size_t)na)) {
			ssize_t i = 0;

			while (ba[i] == bb[i])
				i++;
			printf("#   first difference at byte %lld: %02x vs %02x\n",
			       (long long)(off + i), (unsigned char)ba[i], (unsigned char)bb[i]);
			goto out;
		}
		off += na;
	}
	rc = 0;
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return rc;
}

static int ours(const char *path, uint64_t size, const char *label)
{
	uint8_t uuid[16];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), rc;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return -errno;
	}
	swaphdr_uuid_parse(uuid_s, uuid);
	rc = swaphdr_write(fd, (size_t)sysconf(_SC_PAGESIZE), size, uuid, label);
	close(fd);
	return rc;
}

static int theirs(const char *path, uint64_t size, const char *label)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -f %s && truncate -s %llu %s && "
		 "mkswap -U %s -L %s %s >/dev/null 2>&1", path,
		 (unsigned long long)size, path, uuid_s, label, path);
	return system(cmd) == 0 ? 0 : -1;
}

static void identical_to_mkswap(void)
{
	static const uint64_t sizes[] = {
		40960, 1 << 20, (1 << 20) + 1234, 64ULL << 20, (3ULL << 30) + 4096 * 7,
	};
	static const char *const labels[] = { "ramboot-zram", "fifteen-chars-x", "x" };
	char a[256], b[256];
	size_t i, j;

	snprintf(a, sizeof(a), "%s/mkswap.img", dir);
	snprintf(b, sizeof(b), "%s/ramboot.img", dir);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (j = 0; j < ARRAY_SIZE(labels); j++) {
			CHECK_EQ_INT(ours(b, sizes[i], labels[j]), 0);
			CHECK_EQ_INT(theirs(a, sizes[i], labels[j]), 0);
			if (files_differ(a, b)) {
				printf("#   size %llu label '%s'\n", (unsigned long long)sizes[i],
				       labels[j]);
				CHECK(0);
			}
		}
	}
	unlink(a);
	unlink(b);
}

static void blkid_reads_it(void)
{
	char b[256], cmd[512], line[256], type[256] = "", label[256] = "", uuid[256] = "";
	FILE *f;

	snprintf(b, sizeof(b), "%s/blkid.img", dir);
	CHECK_EQ_INT(ours(b, 32ULL << 20, SWAPHDR_LABEL), 0);
	snprintf(cmd, sizeof(cmd), "blkid -p -o export %s", b);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "TYPE=", 5))
			snprintf(type, sizeof(type), "%s", line + 5);
		else if (!strncmp(line, "LABEL=", 6))
			snprintf(label, sizeof(label), "%s", line + 6);
		else if (!strncmp(line, "UUID=", 5))
			snprintf(uuid, sizeof(uuid), "%s", line + 5);
	}
	pclose(f);
	CHECK_EQ_STR(type, "swap");
	CHECK_EQ_STR(label, "ramboot-zram");
	CHECK_EQ_STR(uuid, uuid_s);
	unlink(b);
}

static void layout(void)
{
	static uint8_t page[65536];
	uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	uint32_t v;
	size_t i;

	CHECK_EQ_INT(swaphdr_build(page, 4096, 64ULL << 20, uuid, "ramboot-zram"), 0);
	for (i = 0; i < 1024; i++)
		if (page[i])
			break;
	CHECK_EQ_INT(i, 1024);                     /* boot bits zeroed */
	memcpy(&v, page + 1024, 4);
	CHECK_EQ_INT(v, 1);                        /* version */
	memcpy(&v, page + 1028, 4);
	CHECK_EQ_INT(v, (64 << 20) / 4096 - 1);    /* last_page */
	memcpy(&v, page + 1032, 4);
	CHECK_EQ_INT(v, 0);                        /* nr_badpages */
	CHECK(!memcmp(page + 1036, uuid, 16));
	CHECK(!memcmp(page + 1052, "ramboot-zram\0\0\0\0", 16));
	CHECK(!memcmp(page + 4096 - 10, "SWAPSPACE2", 10));
	/* A 64 KiB page (arm64, ppc64le) moves the magic, not the fields. */
	CHECK_EQ_INT(swaphdr_build(page, 65536, 64ULL << 20, uuid, "x"), 0);
	CHECK(!memcmp(page + 65536 - 10, "SWAPSPACE2", 10));
	memcpy(&v, page + 1028, 4);
	CHECK_EQ_INT(v, (64 << 20) / 65536 - 1);
}

static void refuses_bad_input(void)
{
	static uint8_t page[4096];
	uint8_t uuid[16] = { 0 };

	CHECK_EQ_INT(swaphdr_build(page, 4096, 9 * 4096, uuid, "x"), -EINVAL);
	CHECK_EQ_INT(swaphdr_build(page, 4096, 10 * 4096, uuid, "x"), 0);
	/* mkswap keeps a terminating NUL: 15 bytes at most. */
	CHECK_EQ_INT(swaphdr_build(page, 4096, 1 << 20, uuid, "sixteen-chars-xx"), -EINVAL);
	CHECK_EQ_INT(swaphdr_build(page, 4096, 1 << 20, uuid, "fifteen-chars-x"), 0);
	CHECK_EQ_INT(swaphdr_build(page, 4095, 1 << 20, uuid, "x"), -EINVAL);
	CHECK_EQ_INT(swaphdr_build(page, 2048, 1 << 20, uuid, "x"), -EINVAL);
}

static void parse_round_trip(void)
{
	static uint8_t page[4096];
	uint8_t uuid[16], back[16];
	char label[SWAPHDR_LABEL_MAX + 1];

	CHECK_EQ_INT(swaphdr_uuid_random(uuid), 0);
	CHECK_EQ_INT(swaphdr_build(page, 4096, 1 << 20, uuid, SWAPHDR_LABEL), 0);
	CHECK_EQ_INT(swaphdr_parse(page, 4096, label, back), 0);
	CHECK_EQ_STR(label, SWAPHDR_LABEL);
	CHECK(!memcmp(uuid, back, 16));
	CHECK_EQ_INT(swaphdr_build(page, 4096, 1 << 20, uuid, "fifteen-chars-x"), 0);
	CHECK_EQ_INT(swaphdr_parse(page, 4096, label, back), 0);
	CHECK_EQ_STR(label, "fifteen-chars-x");
	page[4095] = 'X';
	CHECK_EQ_INT(swaphdr_parse(page, 4096, label, back), -EINVAL);
	memset(page, 0, sizeof(page));
	CHECK_EQ_INT(swaphdr_parse(page, 4096, label, back), -EINVAL);
}

static void uuids(void)
{
	uint8_t a[16], b[16];
	char s[37];

	CHECK_EQ_INT(swaphdr_uuid_parse(uuid_s, a), 0);
	swaphdr_uuid_format(a, s);
	CHECK_EQ_STR(s, uuid_s);
	CHECK_EQ_INT(swaphdr_uuid_parse("5F1C0D2E-7A43-4B6E-9D21-C0FFEE123456", b), 0);
	CHECK(!memcmp(a, b, 16));
	CHECK_EQ_INT(swaphdr_uuid_parse("5f1c0d2e7a434b6e9d21c0ffee123456", a), -EINVAL);
	CHECK_EQ_INT(swaphdr_uuid_parse("5f1c0d2e-7a43-4b6e-9d21-c0ffee12345g", a), -EINVAL);
	CHECK_EQ_INT(swaphdr_uuid_random(a), 0);
	CHECK_EQ_INT(swaphdr_uuid_random(b), 0);
	CHECK(memcmp(a, b, 16) != 0);
	CHECK_EQ_INT(a[6] >> 4, 4);               /* version 4 */
	CHECK_EQ_INT(a[8] >> 6, 2);               /* RFC 4122 variant */
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (have("mkswap"))
		RUN(identical_to_mkswap);
	else
		skip("identical_to_mkswap", "mkswap (util-linux) not installed");
	if (have("blkid"))
		RUN(blkid_reads_it);
	else
		skip("blkid_reads_it", "blkid (util-linux) not installed");
	RUN(layout);
	RUN(refuses_bad_input);
	RUN(parse_round_trip);
	RUN(uuids);
	rmdir(dir);
	return TAP_DONE();
}
