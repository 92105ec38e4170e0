// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * outfile (lib/outfile.c): a file gets its name only when it is complete.
 * What it refuses to write over (a link, a directory, an existing file
 * without OUTFILE_REPLACE, the source itself), that a refusal or an abort
 * leaves the directory as it was, and that a replaced file keeps its old
 * content until the commit. In a temporary directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/outfile.h"

static char dir[] = "/tmp/test_outfile.XXXXXX";
static char err[512];

static const char *at(const char *name)
{
	static char p[4][300];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* The content of NAME, "" when it cannot be read. */
static const char *content(const char *name)
{
	static char b[256];
	FILE *f = fopen(at(name), "r");
	size_t n = 0;

	if (f) {
		n = fread(b, 1, sizeof(b) - 1, f);
		fclose(f);
	}
	b[n] = '\0';
	return b;
}

/* How many entries the directory has ("." and ".." not counted): a
 * temporary left behind shows here. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		abort();
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void rm(const char *name)
{
	if (unlink(at(name)) < 0 && errno != ENOENT)
		rmdir(at(name));
}

static void test_new_file(void)
{
	struct outfile of;
	struct stat st;

	CHECK_EQ_INT(outfile_open(&of, at("new"), 0640, 0, NULL, err, sizeof(err)), 0);
	CHECK(of.fd >= 0);
	CHECK(write(of.fd, "hello", 5) == 5);
	/* no name before the commit */
	CHECK(access(at("new"), F_OK) < 0);
	CHECK_EQ_INT(outfile_commit(&of), 0);
	CHECK_EQ_INT(of.fd, -1);
	CHECK_EQ_STR(content("new"), "hello");
	CHECK(stat(at("new"), &st) == 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ_INT(entries(), 1);
	/* an abort after the commit does nothing */
	outfile_abort(&of);
	CHECK_EQ_STR(content("new"), "hello");
	rm("new");
}

static void test_abort(void)
{
	struct outfile of;

	CHECK_EQ_INT(outfile_open(&of, at("gone"), 0644, 0, NULL, err, sizeof(err)), 0);
	CHECK(write(of.fd, "x", 1) == 1);
	outfile_abort(&of);
	outfile_abort(&of);             /* twice is harmless */
	CHECK(access(at("gone"), F_OK) < 0);
	CHECK_EQ_INT(entries(), 0);
}

static void test_exists(void)
{
	struct outfile of;

	put("old", "old");
	CHECK_EQ_INT(outfile_open(&of, at("old"), 0644, 0, NULL, err, sizeof(err)), -EEXIST);
	CHECK(strstr(err, "exists already") != NULL);
	CHECK(strstr(err, at("old")) != NULL);
	CHECK_EQ_STR(content("old"), "old");
	CHECK_EQ_INT(entries(), 1);

	/* with OUTFILE_REPLACE the old content stays until the commit */
	CHECK_EQ_INT(outfile_open(&of, at("old"), 0644, OUTFILE_REPLACE | OUTFILE_SYNC, NULL, err,
				  sizeof(err)), 0);
	CHECK(write(of.fd, "new", 3) == 3);
	CHECK_EQ_STR(content("old"), "old");
	CHECK_EQ_INT(outfile_commit(&of), 0);
	CHECK_EQ_STR(content("old"), "new");
	CHECK_EQ_INT(entries(), 1);

	/* an aborted replacement keeps the old file whole */
	CHECK_EQ_INT(outfile_open(&of, at("old"), 0644, OUTFILE_REPLACE, NULL, err, sizeof(err)), 0);
	CHECK(write(of.fd, "partial", 7) == 7);
	outfile_abort(&of);
	CHECK_EQ_STR(content("old"), "new");
	CHECK_EQ_INT(entries(), 1);
	rm("old");
}

static void test_not_a_regular_file(void)
{
	struct outfile of;

	/* a symbolic link is never written through, even with REPLACE, and
	 * neither is a dangling one */
	put("target", "target");
	CHECK(symlink("target", at("link")) == 0);
	CHECK_EQ_INT(outfile_open(&of, at("link"), 0644, OUTFILE_REPLACE, NULL, err, sizeof(err)),
		     -ELOOP);
	CHECK(strstr(err, "symbolic link") != NULL);
	CHECK_EQ_STR(content("target"), "target");
	CHECK(symlink("nowhere", at("dangling")) == 0);
	CHECK_EQ_INT(outfile_open(&of, at("dangling"), 0644, 0, NULL, err, sizeof(err)), -ELOOP);
	CHECK(access(at("nowhere"), F_OK) < 0);

	CHECK(mkdir(at("sub"), 0755) == 0);
	CHECK_EQ_INT(outfile_open(&of, at("sub"), 0644, OUTFILE_REPLACE, NULL, err, sizeof(err)),
		     -EEXIST);
	CHECK(strstr(err, "not a regular file") != NULL);
	CHECK_EQ_INT(entries(), 4);

	/* a link in the directory part is followed */
	CHECK(symlink("sub", at("sublink")) == 0);
	CHECK_EQ_INT(outfile_open(&of, at("sublink/f"), 0644, 0, NULL, err, sizeof(err)), 0);
	CHECK_EQ_INT(outfile_commit(&of), 0);
	CHECK(access(at("sub/f"), F_OK) == 0);
	rm("sub/f");
	rm("sublink");
	rm("sub");
	rm("dangling");
	rm("link");
	rm("target");
}

static void test_protect(void)
{
	struct outfile of;
	struct stat src[2];

	put("src", "source");
	put("man", "manifest");
	CHECK(stat(at("src"), &src[0]) == 0);
	CHECK(stat(at("man"), &src[1]) == 0);
	CHECK_EQ_INT(outfile_open(&of, at("src"), 0644, OUTFILE_REPLACE, &src[0], err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "is the source itself") != NULL);
	/* any of several inputs, and through another name (a hard link) */
	CHECK(link(at("man"), at("man2")) == 0);
	CHECK_EQ_INT(outfile_open_protect(&of, at("man2"), 0644, OUTFILE_REPLACE, src, 2, err,
					  sizeof(err)), -EINVAL);
	CHECK_EQ_STR(content("src"), "source");
	CHECK_EQ_STR(content("man"), "manifest");
	/* another file is replaced */
	put("dest", "dest");
	CHECK_EQ_INT(outfile_open_protect(&of, at("dest"), 0644, OUTFILE_REPLACE, src, 2, err,
					  sizeof(err)), 0);
	CHECK_EQ_INT(outfile_write(&of, "copy", 4), 0);
	CHECK_EQ_STR(content("dest"), "copy");
	CHECK_EQ_INT(entries(), 4);
	rm("src");
	rm("man");
	rm("man2");
	rm("dest");
}

static void test_names(void)
{
	struct outfile of;
	char longname[300];

	CHECK_EQ_INT(outfile_open(&of, at(""), 0644, 0, NULL, err, sizeof(err)), -EISDIR);
	CHECK_EQ_INT(outfile_open(&of, at("."), 0644, 0, NULL, err, sizeof(err)), -EISDIR);
	CHECK_EQ_INT(outfile_open(&of, at(".."), 0644, 0, NULL, err, sizeof(err)), -EISDIR);
	CHECK(strstr(err, "not a file name") != NULL);
	memset(longname, 'n', 256);
	longname[256] = '\0';
	CHECK_EQ_INT(outfile_open(&of, at(longname), 0644, 0, NULL, err, sizeof(err)), -ENAMETOOLONG);
	longname[255] = '\0';           /* NAME_MAX itself is a name */
	CHECK_EQ_INT(outfile_open(&of, at(longname), 0644, 0, NULL, err, sizeof(err)), 0);
	CHECK_EQ_INT(outfile_commit(&of), 0);
	CHECK(access(at(longname), F_OK) == 0);
	rm(longname);
	/* a directory that is not there */
	CHECK(outfile_open(&of, at("no/such"), 0644, 0, NULL, err, sizeof(err)) < 0);
	CHECK_EQ_INT(entries(), 0);
}

static void test_openat(void)
{
	struct outfile of;
	struct stat st, dst;
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(d >= 0);
	CHECK_EQ_INT(outfile_openat(&of, d, "x", 0600, 0, NULL, err, sizeof(err)), 0);
	CHECK_EQ_INT(outfile_dir_stat(&of, &st), 0);
	CHECK(stat(dir, &dst) == 0);
	CHECK(st.st_ino == dst.st_ino && st.st_dev == dst.st_dev);
	CHECK_EQ_INT(outfile_write(&of, "at", 2), 0);
	CHECK_EQ_STR(content("x"), "at");
	/* the directory fd stays the caller's */
	CHECK(fcntl(d, F_GETFD) >= 0);
	/* one path component only */
	CHECK_EQ_INT(outfile_openat(&of, d, "a/b", 0600, 0, NULL, err, sizeof(err)), -EISDIR);
	CHECK_EQ_INT(outfile_openat(&of, d, "x", 0600, 0, NULL, err, sizeof(err)), -EEXIST);
	close(d);
	rm("x");
}

/* No test left a file behind, not even a hidden temporary. */
static void test_nothing_left(void)
{
	CHECK_EQ_INT(entries(), 0);
	CHECK(rmdir(dir) == 0);
}

int main(void)
{
	if (!mkdtemp(dir))
		abort();
	RUN(test_new_file);
	RUN(test_abort);
	RUN(test_exists);
	RUN(test_not_a_regular_file);
	RUN(test_protect);
	RUN(test_names);
	RUN(test_openat);
	RUN(test_nothing_left);
	return TAP_DONE();
}
