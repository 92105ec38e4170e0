// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * publish.c: the names publish gives and sweeps (hash files, stale
 * temporaries), --verity=HASHFILE, and publish_make on small files: the
 * refusals before anything is read, the manifest and tree it makes, and
 * publish_write_at refusing a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/base.h"
#include "format/manifest.h"
#include "publish/publish.h"
#include "format/verity.h"

static char dir[] = "/tmp/ramboot-publish-XXXXXX";
static char err[512];

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void write_file(const char *name, const void *buf, size_t len)
{
	char p[256];
	int fd;

	path_of(p, sizeof(p), name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, len) == (ssize_t)len);
	close(fd);
}

static void hash_names(void)
{
	CHECK(publish_is_hash_name("x.img", "x.img.verity-0123456789abcdef"));
	CHECK(!publish_is_hash_name("x.img", "x.img.verity-0123456789ABCDEF"));
	CHECK(!publish_is_hash_name("x.img", "x.img.verity-0123456789abcde"));
	CHECK(!publish_is_hash_name("x.img", "x.img.verity-0123456789abcdef0"));
	CHECK(!publish_is_hash_name("x.img", "x.img.verity"));
	CHECK(!publish_is_hash_name("x.img", "y.img.verity-0123456789abcdef"));
	CHECK(!publish_is_hash_name("x.img", "xx.img.verity-0123456789abcdef"));
	CHECK(!publish_is_hash_name("x.img", "x.img.verity-0123456789abcdeg"));
	CHECK(!publish_is_hash_name("x.img", "x.img.manifest"));
	/* chunk indexes: the same rule, their own suffix */
	CHECK(publish_is_cindex_name("x.img", "x.img.cindex-0123456789abcdef"));
	CHECK(!publish_is_cindex_name("x.img", "x.img.cindex-0123456789ABCDEF"));
	CHECK(!publish_is_cindex_name("x.img", "x.img.cindex-0123456789abcde"));
	CHECK(!publish_is_cindex_name("x.img", "x.img.cindex"));
	CHECK(!publish_is_cindex_name("x.img", "y.img.cindex-0123456789abcdef"));
	CHECK(!publish_is_cindex_name("x.img", "x.img.verity-0123456789abcdef"));
	/* --content-addressed: the image's own name */
	CHECK(publish_is_image_name("x.img", "x.img.sha256-0123456789abcdef"));
	CHECK(!publish_is_image_name("x.img", "x.img.sha256-0123456789ABCDEF"));
	CHECK(!publish_is_image_name("x.img", "x.img.sha256-0123456789abcdef0"));
	CHECK(!publish_is_image_name("x.img", "x.img.sha256-"));
	CHECK(!publish_is_image_name("x.img", "y.img.sha256-0123456789abcdef"));
	CHECK(!publish_is_image_name("x.img", "x.img.old.sha256-0123456789abcdef"));
	CHECK(!publish_is_image_name("x.img", "x.img.cindex-0123456789abcdef"));
	CHECK(!publish_is_hash_name("x.img", "x.img.cindex-0123456789abcdef"));
}

static void stale_temps(void)
{
	const char *m = "x.img.manifest";

	CHECK(publish_is_stale_temp("x.img", m, ".x.img.manifest.0a1b2c3d"));
	CHECK(publish_is_stale_temp("x.img", m, ".x.img.verity-0123456789abcdef.0a1b2c3d"));
	CHECK(publish_is_stale_temp("x.img", m, ".x.img.cindex-0123456789abcdef.0a1b2c3d"));
	CHECK(publish_is_stale_temp("x.img", m, ".x.img.sha256-0123456789abcdef.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.sha256-0123456789abcdef"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.cindex.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".y.img.cindex-0123456789abcdef.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, "x.img.manifest.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.manifest.0a1b2c3"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.manifest.0a1b2c3x"));
	CHECK(!publish_is_stale_temp("x.img", m, ".y.img.manifest.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.verity.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.0a1b2c3d"));
	CHECK(!publish_is_stale_temp("x.img", m, ".x.img.manifest"));
	CHECK(!publish_is_stale_temp("x.img", m, "."));
	CHECK(!publish_is_stale_temp("x.img", m, ""));
}

static void hash_file_arg(void)
{
	char img[256], arg[256], out[MANIFEST_NAME_MAX + 1], longname[300];

	path_of(img, sizeof(img), "x.img");
	CHECK_EQ_INT(publish_hash_name(img, "tree.bin", out, sizeof(out), err, sizeof(err)), 0);
	CHECK_EQ_STR(out, "tree.bin");
	snprintf(arg, sizeof(arg), "%s/../%s/t.bin", dir, strrchr(dir, '/') + 1);
	CHECK_EQ_INT(publish_hash_name(img, arg, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_EQ_STR(out, "t.bin");
	CHECK_EQ_INT(publish_hash_name(img, "/t.bin", out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not in the directory") != NULL);
	CHECK_EQ_INT(publish_hash_name(img, "..", out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(publish_hash_name(img, "", out, sizeof(out), err, sizeof(err)), -EINVAL);
	snprintf(arg, sizeof(arg), "%s/", dir);
	CHECK_EQ_INT(publish_hash_name(img, arg, out, sizeof(out), err, sizeof(err)), -EINVAL);
	memset(longname, 'a', MANIFEST_NAME_MAX + 1);
	longname[MANIFEST_NAME_MAX + 1] = '\0';
	CHECK_EQ_INT(publish_hash_name(img, longname, out, sizeof(out), err, sizeof(err)),
		     -EINVAL);
}

static void make_refusals(void)
{
	static const uint8_t zst[8] = { 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0 };
	struct publish_req req = { .decompress = "auto", .chunk_size = MANIFEST_CHUNK_MIN,
				   .verity = true };
	struct publish_made mk;
	char img[256];
	uint8_t *buf = calloc(1, 8192);

	CHECK(buf != NULL);
	memcpy(buf, zst, sizeof(zst));
	write_file("c.img", buf, 8192);
	path_of(img, sizeof(img), "c.img");
	req.image = img;
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "zstd-compressed: --verity needs a raw image") != NULL);
	CHECK_EQ_INT(mk.exit, RB_EXIT_FAIL);
	publish_made_free(&mk);
	/* -d none: the bytes as they are, whatever they look like */
	req.decompress = "none";
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), 0);
	publish_made_free(&mk);
	req.decompress = "xz";
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), -EINVAL);
	publish_made_free(&mk);

	req.decompress = "auto";
	write_file("t.img", buf + 4096, 4095);
	path_of(img, sizeof(img), "t.img");
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "4095 bytes, not a whole number of 4096-byte blocks") != NULL);
	publish_made_free(&mk);
	write_file("e.img", buf, 0);
	path_of(img, sizeof(img), "e.img");
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), -EINVAL);
	publish_made_free(&mk);
	/* version 1 has no verity keys */
	path_of(img, sizeof(img), "c.img");
	req.decompress = "none";
	req.chunk_size = 0;
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), -EINVAL);
	publish_made_free(&mk);
	free(buf);
}

static void make_tree(void)
{
	struct publish_req req = { .decompress = "auto", .chunk_size = MANIFEST_CHUNK_MIN,
				   .verity = true };
	struct publish_made mk;
	struct manifest m;
	char img[256], name[64];
	size_t i, len = 40 * 4096;
	uint8_t *buf = malloc(len);

	CHECK(buf != NULL);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + i / 4096);
	write_file("r.img", buf, len);
	path_of(img, sizeof(img), "r.img");
	req.image = img;
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), 0);
	CHECK_EQ_INT(mk.exit, RB_EXIT_OK);
	CHECK(mk.tree_len == verity_hash_file_size(40));
	CHECK_EQ_INT((int)strlen(mk.m.verity_root), 64);
	CHECK_EQ_INT((int)strlen(mk.m.verity_salt), 64);
	snprintf(name, sizeof(name), "r.img.verity-%.16s", mk.m.verity_root);
	CHECK_EQ_STR(mk.m.verity_hash, name);
	CHECK(publish_is_hash_name("r.img", mk.m.verity_hash));
	/* the text parses back to the same keys, 3 chunks of 64 KiB */
	memset(&m, 0, sizeof(m));
	CHECK_EQ_INT(manifest_parse(mk.text, mk.len, &m, err, sizeof(err)), 0);
	CHECK(m.size == len);
	CHECK_EQ_INT((int)m.nchunks, 3);
	CHECK_EQ_STR(m.verity_root, mk.m.verity_root);
	CHECK_EQ_STR(m.verity_salt, mk.m.verity_salt);
	CHECK_EQ_STR(m.verity_hash, mk.m.verity_hash);
	CHECK_EQ_STR(m.compression, "none");
	manifest_free(&m);
	/* a name given is the name recorded */
	publish_made_free(&mk);
	req.hash_name = "r.tree";
	CHECK_EQ_INT(publish_make(&req, &mk, err, sizeof(err)), 0);
	CHECK_EQ_STR(mk.m.verity_hash, "r.tree");
	publish_made_free(&mk);
	free(buf);
}

static void write_at_refuses_a_link(void)
{
	char p[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	CHECK(dfd >= 0);
	path_of(p, sizeof(p), "link.manifest");
	CHECK_EQ_INT(symlink("/nonexistent-target", p), 0);
	CHECK_EQ_INT(publish_write_at(dfd, "link.manifest", "x\n", 2, true, NULL, err,
				      sizeof(err)), -ELOOP);
	CHECK_EQ_INT(access("/nonexistent-target", F_OK), -1);
	CHECK_EQ_INT(publish_write_at(dfd, "new.bin", "x\n", 2, false, NULL, err, sizeof(err)),
		     0);
	CHECK_EQ_INT(publish_write_at(dfd, "new.bin", "y\n", 2, false, NULL, err, sizeof(err)),
		     -EEXIST);
	CHECK_EQ_INT(publish_write_at(dfd, "new.bin", "y\n", 2, true, NULL, err, sizeof(err)), 0);
	close(dfd);
}

int main(void)
{
	char cmd[300];
	int rc;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(hash_names);
	RUN(stale_temps);
	RUN(hash_file_arg);
	RUN(make_refusals);
	RUN(make_tree);
	RUN(write_at_refuses_a_link);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
	rc = TAP_DONE();
	return rc;
}
