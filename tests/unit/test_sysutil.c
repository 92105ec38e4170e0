// SPDX-License-Identifier: GPL-2.0-or-later
/* The shared system helpers: /proc/swaps parsing on kernel text, JSON
 * escaping, modprobe, the first-error buffer; the blkid probe and
 * BLKGETSIZE64 (dev/blkdev.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/fdio.h"
#include "lib/path.h"
#include "lib/report.h"
#include "format/swaphdr.h"
#include "lib/sysutil.h"
#include "dev/blkdev.h"

static char dir[] = "/tmp/ramboot-sysutil-XXXXXX";

/* As a 6.1 kernel prints it: the name padded to 40 columns, tabs
 * between the numbers; a swap file whose name has a space (\040) and a
 * deleted one. */
static const char *swaps =
	"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	"/dev/zram0                              partition\t4194300\t\t0\t\t100\n"
	"/dev/zram12                             partition\t65532\t\t1024\t\t-2\n"
	"/dev/sda2                               partition\t1048572\t\t0\t\t-3\n"
	"/var/swap\\040file                       file\t\t102396\t\t0\t\t5\n"
	"/tmp/sw\\134ap\\040(deleted)             file\t\t1020\t\t0\t\t-4\n";

static void swaps_lines(void)
{
	char path[64];
	int prio = 12345;

	CHECK_EQ_INT(swaps_parse_line("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority",
				      path, sizeof(path), &prio), -EINVAL);
	CHECK_EQ_INT(prio, 12345);
	CHECK_EQ_INT(swaps_parse_line("/dev/zram0 partition\t4194300\t0\t100\n", path,
				      sizeof(path), &prio), 0);
	CHECK_EQ_STR(path, "/dev/zram0");
	CHECK_EQ_INT(prio, 100);
	CHECK_EQ_INT(swaps_parse_line("  /dev/vda1\tpartition\t1020\t0\t-2", path,
				      sizeof(path), &prio), 0);
	CHECK_EQ_STR(path, "/dev/vda1");
	CHECK_EQ_INT(prio, -2);
	/* Octal escapes of the kernel's seq_file_path(). */
	CHECK_EQ_INT(swaps_parse_line("/a\\040b\\011c\\134d file 8 0 1", path, sizeof(path),
				      &prio), 0);
	CHECK_EQ_STR(path, "/a b\tc\\d");
	/* Not an escape: kept as it is. */
	CHECK_EQ_INT(swaps_parse_line("/a\\9b file 8 0 1", path, sizeof(path), &prio), 0);
	CHECK_EQ_STR(path, "/a\\9b");
	/* Malformed lines. */
	CHECK_EQ_INT(swaps_parse_line("", path, sizeof(path), &prio), -EINVAL);
	CHECK_EQ_INT(swaps_parse_line("\n", path, sizeof(path), &prio), -EINVAL);
	CHECK_EQ_INT(swaps_parse_line("/dev/x partition 8 0", path, sizeof(path), &prio),
		     -EINVAL);
	CHECK_EQ_INT(swaps_parse_line("/dev/x partition 8 0 1x", path, sizeof(path), &prio),
		     -EINVAL);
	CHECK_EQ_INT(swaps_parse_line("/dev/x partition big 0 1", path, sizeof(path), &prio),
		     -EINVAL);
	CHECK_EQ_INT(swaps_parse_line("/dev/x partition 8 0 99999999999", path,
				      sizeof(path), &prio), -EINVAL);
	/* A name longer than the buffer is refused, not cut. */
	CHECK_EQ_INT(swaps_parse_line("/dev/zram0 partition 8 0 1", path, 10, &prio),
		     -ENAMETOOLONG);
	CHECK_EQ_INT(swaps_parse_line("/dev/zram0 partition 8 0 1", path, 11, &prio), 0);
	CHECK_EQ_STR(path, "/dev/zram0");
}

static void swaps_lookup(void)
{
	int prio = 0;

	CHECK_EQ_INT(swaps_text_find(swaps, "/dev/zram0", &prio), 1);
	CHECK_EQ_INT(prio, 100);
	CHECK_EQ_INT(swaps_text_find(swaps, "/dev/zram12", &prio), 1);
	CHECK_EQ_INT(prio, -2);
	CHECK_EQ_INT(swaps_text_find(swaps, "/dev/sda2", NULL), 1);
	CHECK_EQ_INT(swaps_text_find(swaps, "/var/swap file", &prio), 1);
	CHECK_EQ_INT(prio, 5);
	CHECK_EQ_INT(swaps_text_find(swaps, "/tmp/sw\\ap (deleted)", &prio), 1);
	CHECK_EQ_INT(prio, -4);
	/* Whole names only. */
	CHECK_EQ_INT(swaps_text_find(swaps, "/dev/zram1", NULL), 0);
	CHECK_EQ_INT(swaps_text_find(swaps, "/dev/zram", NULL), 0);
	CHECK_EQ_INT(swaps_text_find(swaps, "Filename", NULL), 0);
	CHECK_EQ_INT(swaps_text_find("", "/dev/zram0", NULL), 0);
	/* No newline at the end. */
	CHECK_EQ_INT(swaps_text_find("Filename Type Size Used Priority\n/dev/zram3 partition 8 0 7",
				     "/dev/zram3", &prio), 1);
	CHECK_EQ_INT(prio, 7);
	CHECK_EQ_INT(swaps_text_count_negative(swaps), 3);
	CHECK_EQ_INT(swaps_text_count_negative("Filename Type Size Used Priority\n"), 0);
}

/* swaps_find reads /proc/swaps below the root prefix. */
static void swaps_in_a_root(void)
{
	char p[256];
	int fd, prio = 0;

	snprintf(p, sizeof(p), "%s/proc", dir);
	CHECK(mkdir(p, 0755) == 0);
	setenv("RAMBOOT_ROOT", dir, 1);
	rb_root_init();
	CHECK_EQ_INT(swaps_find("/dev/zram0", &prio), -ENOENT);
	snprintf(p, sizeof(p), "%s/proc/swaps", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, swaps, strlen(swaps)), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
	CHECK_EQ_INT(swaps_find("/dev/zram12", &prio), 1);
	CHECK_EQ_INT(prio, -2);
	CHECK_EQ_INT(swaps_find("/dev/zram2", &prio), 0);
	unsetenv("RAMBOOT_ROOT");
	rb_root_init();
}

static const char *esc(const char *s)
{
	static char out[256];

	CHECK(json_escape(out, sizeof(out), s) < sizeof(out));
	return out;
}

static void json_strings(void)
{
	char small[8];

	CHECK_EQ_STR(esc(""), "");
	CHECK_EQ_STR(esc("plain /dev/zram0"), "plain /dev/zram0");
	CHECK_EQ_STR(esc("say \"hi\" C:\\x"), "say \\\"hi\\\" C:\\\\x");
	CHECK_EQ_STR(esc("a\nb\tc\rd\be\ff"), "a\\nb\\tc\\rd\\be\\ff");
	CHECK_EQ_STR(esc("\x01\x1f\x7f"), "\\u0001\\u001f\\u007f");
	/* Valid UTF-8 passes: 2, 3 and 4 bytes. */
	CHECK_EQ_STR(esc("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"),
		     "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80");
	/* Not UTF-8: Latin-1, a stray continuation byte, a cut sequence,
	 * overlong forms, a surrogate, beyond U+10FFFF. */
	CHECK_EQ_STR(esc("gr\xfc\xdf"), "gr\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\x80x"), "\\ufffdx");
	CHECK_EQ_STR(esc("\xe2\x82"), "\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\xe2\x82x"), "\\ufffd\\ufffdx");
	CHECK_EQ_STR(esc("\xc0\xaf"), "\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\xe0\x80\xaf"), "\\ufffd\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");
	CHECK_EQ_STR(esc("\xff"), "\\ufffd");
	/* snprintf semantics: full length returned, output cut and ended. */
	CHECK_EQ_INT(json_escape(small, sizeof(small), "a\"b\"c"), 7);
	CHECK_EQ_STR(small, "a\\\"b\\\"c");
	CHECK_EQ_INT(json_escape(small, sizeof(small), "\x01\x02"), 12);
	CHECK_EQ_STR(small, "\\u0001\\");
	CHECK_EQ_INT(json_escape(NULL, 0, "ab\n"), 4);
}

/* report.json goes through the same escaper. */
static void report_json_strings(void)
{
	static struct boot_report r;
	char buf[4096];

	report_init(&r);
	snprintf(r.source, sizeof(r.source), "/srv/caf\xc3\xa9 \xe9\"\n");
	snprintf(r.error, sizeof(r.error), "a\\b\x01");
	CHECK(report_format_json(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "  \"source\": \"/srv/caf\xc3\xa9 \\ufffd\\\"\\n\",\n") != NULL);
	CHECK(strstr(buf, "  \"error\": \"a\\\\b\\u0001\"\n}\n") != NULL);
	/* Too small: refused, not cut inside an escape. */
	CHECK_EQ_INT(report_format_json(&r, buf, 64), -ENOSPC);
}

/* report_write goes through outfile: a link planted at the name the
 * temporary once had is neither followed nor left in the way. */
static void report_written_aside(void)
{
	static struct boot_report r;
	char run[128], victim[128], link[256], p[256], buf[256];
	int fd;

	report_init(&r);
	snprintf(r.source, sizeof(r.source), "/srv/img");
	snprintf(run, sizeof(run), "%s/run/ramboot", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	CHECK_EQ_INT(report_mkdir(run), 0);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, "precious", 8), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
	snprintf(link, sizeof(link), "%s/.report.tmp", run);
	CHECK(symlink(victim, link) == 0);
	snprintf(link, sizeof(link), "%s/.report.json.tmp", run);
	CHECK(symlink(victim, link) == 0);
	CHECK_EQ_INT(report_write(&r, run, true), 0);
	CHECK(read_str_abs(victim, buf, sizeof(buf)) > 0);
	CHECK_EQ_STR(buf, "precious");
	snprintf(p, sizeof(p), "%s/report", run);
	CHECK(read_str_abs(p, buf, sizeof(buf)) > 0);
	CHECK(!strncmp(buf, "mode_asked=off\n", 15));
	snprintf(p, sizeof(p), "%s/report.json", run);
	CHECK(read_str_abs(p, buf, sizeof(buf)) > 0);
	CHECK(!strncmp(buf, "{\n", 2));
	/* Written again: replaced. */
	snprintf(r.source, sizeof(r.source), "/srv/other");
	CHECK_EQ_INT(report_write(&r, run, false), 0);
	snprintf(p, sizeof(p), "%s/report", run);
	CHECK(read_str_abs(p, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "source=/srv/other\n") != NULL);
}

static void make_file(const char *name, uint64_t size, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	if (!strcmp(name, "swap")) {
		static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

		CHECK_EQ_INT(swaphdr_write(fd, 4096, size, uuid, "t"), 0);
	}
	CHECK_EQ_INT(close_checked(fd), 0);
}

/* The blkid probe and BLKGETSIZE64 (dev/blkdev.c) as swap.c uses them. */
static void blkid_types(void)
{
	char path[256], type[32] = "x";
	uint64_t size = 1;
	int fd;

	make_file("swap", 1 << 20, path, sizeof(path));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ_INT(blkid_fstype_fd(fd, type, sizeof(type)), 0);
	CHECK_EQ_STR(type, "swap");
	close(fd);

	make_file("zeros", 1 << 20, path, sizeof(path));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	strcpy(type, "x");
	CHECK_EQ_INT(blkid_fstype_fd(fd, type, sizeof(type)), 0);
	CHECK_EQ_STR(type, "");
	/* For block devices only; a regular file says ENOTTY. */
	CHECK_EQ_INT(blk_size(fd, &size), -ENOTTY);
	CHECK_EQ_INT(size, 1);
	close(fd);
}

/* A modprobe on $PATH (only builtins: $PATH holds nothing else) that
 * records its arguments and fails for the module "fail". */
static void modprobe_runs(void)
{
	static const char script[] =
		"#!/bin/sh\n"
		"printf '%s|' \"$@\" >>\"${0%/*}/args\"\n"
		"echo >>\"${0%/*}/args\"\n"
		"case \"$2\" in fail) exit 1 ;; esac\n"
		"exit 0\n";
	const char *const ok[] = { "-q", "zram", "num_devices=0", NULL };
	const char *const bad[] = { "-q", "fail", NULL };
	const char *const many[] = { "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
				     "11", "12", "13", "14", "15", "16", NULL };
	char bin[128], p[256], buf[256];
	const char *old = getenv("PATH");
	char *save = old ? strdup(old) : NULL;
	int fd;

	snprintf(bin, sizeof(bin), "%s/bin", dir);
	CHECK(mkdir(bin, 0755) == 0);
	setenv("PATH", bin, 1);
	/* No modprobe at all. */
	CHECK_EQ_INT(run_modprobe(ok), -ENOENT);

	snprintf(p, sizeof(p), "%s/modprobe", bin);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(fd >= 0);
	CHECK_EQ_INT(write_all(fd, script, strlen(script)), 0);
	CHECK_EQ_INT(close_checked(fd), 0);
	CHECK_EQ_INT(run_modprobe(ok), 0);
	CHECK_EQ_INT(run_modprobe(bad), -ENOENT);
	CHECK_EQ_INT(run_modprobe(many), -E2BIG);
	snprintf(p, sizeof(p), "%s/args", bin);
	CHECK(read_str_abs(p, buf, sizeof(buf)) > 0);
	/* Each argument as given, no shell between. */
	CHECK_EQ_STR(buf, "-q|zram|num_devices=0|\n-q|fail|");
	if (save) {
		setenv("PATH", save, 1);
		free(save);
	}
}

static void first_error_wins(void)
{
	char e[16] = "";

	errbuf_set(e, sizeof(e), "%s: %d", "first", 1);
	errbuf_set(e, sizeof(e), "second");
	CHECK_EQ_STR(e, "first: 1");
	e[0] = '\0';
	errbuf_set(e, sizeof(e), "%s", "a message longer than the buffer");
	CHECK_EQ_STR(e, "a message longe");
	errbuf_set(e, 0, "nothing");
}

/* A value with newlines stays on its line: report_text_set() (the
 * amends of the lazy copier and of --drop) and report_kv() (the status
 * file) never let a path forge a second key. */
static void report_values_one_line(void)
{
	char text[256] = "mode_done=lazy\nfstype=squashfs\nram_path=\n", buf[64];
	size_t pos = 0;

	CHECK_EQ_INT(report_text_set(text, sizeof(text), "ram_path",
				     "/run/ramboot/ram/x\nfstype=ext4\n"), 0);
	CHECK_EQ_STR(text, "mode_done=lazy\nfstype=squashfs\n"
		     "ram_path=/run/ramboot/ram/x fstype=ext4 \n");
	CHECK_EQ_INT(report_text_set(text, sizeof(text), "error", "a\rb\x7f"), 0);
	CHECK(strstr(text, "\nerror=a b \n") != NULL);
	CHECK_EQ_INT(report_kv(buf, sizeof(buf), &pos, "image", "e\nstate=switched"), 0);
	CHECK_EQ_INT(report_kv(buf, sizeof(buf), &pos, "state", "gave-up"), 0);
	CHECK_EQ_STR(buf, "image=e state=switched\nstate=gave-up\n");
	/* full: -ENOSPC, nothing appended */
	CHECK_EQ_INT(report_kv(buf, sizeof(buf), &pos, "error",
			       "0123456789012345678901234567890123456789"), -ENOSPC);
	CHECK_EQ_INT((int)pos, (int)strlen("image=e state=switched\nstate=gave-up\n"));
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(swaps_lines);
	RUN(swaps_lookup);
	RUN(swaps_in_a_root);
	RUN(json_strings);
	RUN(report_json_strings);
	RUN(report_written_aside);
	RUN(blkid_types);
	RUN(modprobe_runs);
	RUN(first_error_wins);
	RUN(report_values_one_line);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return TAP_DONE();
}
