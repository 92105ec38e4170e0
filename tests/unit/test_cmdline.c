// SPDX-License-Identifier: GPL-2.0-or-later
/* Settings of `ramboot boot`: kernel command line, environment,
 * ramboot.conf, precedence; and the boot report format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "boot/cmdline.h"
#include "lib/report.h"

static struct boot_settings S;

static void fresh(void)
{
	settings_init(&S);
}

static bool has_warn(const char *needle)
{
	int i;

	for (i = 0; i < S.nwarn && i < SET_WARN_MAX; i++)
		if (strstr(S.warn[i], needle))
			return true;
	return false;
}

static void defaults(void)
{
	fresh();
	CHECK_EQ_INT(S.mode, BOOT_OFF);
	CHECK_EQ_INT(S.target, TARGET_TMPFS);
	CHECK_EQ_INT(S.swap, SWAP_OFF);
	CHECK_EQ_STR(S.decompress, "auto");
	CHECK_EQ_STR(S.image, "");
	CHECK(!S.minfree_set);
	CHECK(!S.debug);
	CHECK_EQ_INT(S.nwarn, 0);
}

static void next_arg_kernel_way(void)
{
	const char *p = "  a=1 \"b=x y\" c=\"d e\" bare   e= \"q\" ";
	char n[64], v[64];
	bool hv;

	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "a"); CHECK_EQ_STR(v, "1"); CHECK(hv);
	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "b"); CHECK_EQ_STR(v, "x y");
	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "c"); CHECK_EQ_STR(v, "d e");
	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "bare"); CHECK(!hv);
	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "e"); CHECK(hv); CHECK_EQ_STR(v, "");
	CHECK(cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
	CHECK_EQ_STR(n, "q"); CHECK(!hv);
	CHECK(!cmdline_next(&p, n, sizeof(n), v, sizeof(v), &hv));
}

static void cmdline_switches(void)
{
	fresh();
	settings_parse_cmdline(&S, "BOOT_IMAGE=/vmlinuz root=/dev/nfs ramboot=ram "
			       "ramboot.target=zram ramboot.minfree=512M "
			       "ramboot.decompress=zstd ramboot.swap=zram ramboot.swap.size=ram/2 "
			       "ramboot.swap.algorithm=lz4,zstd ramboot.swap.priority=50 "
			       "ramboot.debug quiet");
	CHECK_EQ_INT(S.mode, BOOT_RAM);
	CHECK_EQ_INT(S.mode_source, SRC_CMDLINE);
	CHECK_EQ_INT(S.target, TARGET_ZRAM);
	CHECK(S.minfree_set);
	CHECK_EQ_INT(S.minfree, 512ULL << 20);
	CHECK_EQ_STR(S.decompress, "zstd");
	CHECK_EQ_INT(S.swap, SWAP_ZRAM);
	CHECK_EQ_STR(S.swap_size, "ram/2");
	CHECK_EQ_STR(S.swap_algorithm, "lz4,zstd");
	CHECK(S.swap_priority_set);
	CHECK_EQ_INT(S.swap_priority, 50);
	CHECK(S.debug);
	CHECK_EQ_INT(S.nwarn, 0);
}

/* ramboot.timeout= and ramboot.cache.offline= read one duration
 * grammar: a unit on either, decimals on either. */
static void durations_one_grammar(void)
{
	fresh();
	settings_parse_cmdline(&S, "ramboot.timeout=30s ramboot.cache.offline=1.5h");
	CHECK(S.timeout_set);
	CHECK(S.timeout == 30);
	CHECK_EQ_INT(S.cache_offline, 5400);
	CHECK_EQ_INT(S.nwarn, 0);
	fresh();
	settings_parse_cmdline(&S, "ramboot.timeout=2m ramboot.cache.offline=36h");
	CHECK(S.timeout == 120);
	CHECK_EQ_INT(S.cache_offline, 129600);
	CHECK_EQ_INT(S.nwarn, 0);
	fresh();
	settings_parse_cmdline(&S, "ramboot.timeout=off");
	CHECK(S.timeout_set);
	CHECK(S.timeout == 0);
	fresh();
	settings_parse_cmdline(&S, "ramboot.timeout=30sec ramboot.cache.offline=2y");
	CHECK(!S.timeout_set);
	CHECK_EQ_INT(S.cache_offline, 0);
	CHECK_EQ_INT(S.nwarn, 2);
}

static void quoted_image(void)
{
	fresh();
	settings_parse_cmdline(&S, "ramboot=prefetch ramboot.image=\"/srv/my images/x.img\" ro");
	CHECK_EQ_INT(S.mode, BOOT_PREFETCH);
	CHECK_EQ_STR(S.image, "/srv/my images/x.img");
	fresh();
	settings_parse_cmdline(&S, "\"ramboot.image=/a b\" ramboot");
	CHECK_EQ_STR(S.image, "/a b");
	CHECK_EQ_INT(S.mode, BOOT_RAM);   /* a bare "ramboot" asks for it */
}

static void unknown_and_bad(void)
{
	fresh();
	settings_parse_cmdline(&S, "ramboot=fast ramboot.colour=blue ramboot.target=nvme "
			       "ramboot.minfree=lots ramboot.sha256=abc ramboot.swap.priority=99999 "
			       "ramboothing=1 ramboot.debug=maybe");
	CHECK_EQ_INT(S.mode, BOOT_OFF);
	CHECK_EQ_INT(S.target, TARGET_TMPFS);
	CHECK(!S.minfree_set);
	CHECK_EQ_STR(S.sha256, "");
	CHECK(!S.swap_priority_set);
	CHECK(!S.debug);
	CHECK_EQ_INT(S.nwarn, 7);
	CHECK(has_warn("ramboot=: invalid value 'fast'"));
	CHECK(has_warn("ramboot.colour=: unknown setting"));
	CHECK(has_warn("ramboot.target=: invalid value 'nvme'"));
	CHECK(!has_warn("ramboothing"));
}

static void sha256_lowercased(void)
{
	fresh();
	settings_parse_cmdline(&S, "ramboot.sha256="
			       "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08");
	CHECK_EQ_STR(S.sha256, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
	CHECK_EQ_INT(S.nwarn, 0);
}

static void verify_policy(void)
{
	fresh();
	CHECK_EQ_INT(S.verify, VERIFY_AUTO);
	settings_parse_cmdline(&S, "ramboot.verify=signed");
	CHECK_EQ_INT(S.verify, VERIFY_SIGNED);
	CHECK(!S.verify_policy_bad);
	settings_parse_cmdline(&S, "ramboot.verify=hash");
	CHECK_EQ_INT(S.verify, VERIFY_HASH);
	settings_parse_cmdline(&S, "ramboot.verify=off");
	CHECK_EQ_INT(S.verify, VERIFY_OFF);
	CHECK_EQ_STR(boot_verify_name(S.verify), "off");
	CHECK_EQ_INT(S.nwarn, 0);
	/* A typo is not "off": no copy boots until a good value comes. */
	settings_parse_cmdline(&S, "ramboot.verify=sigend");
	CHECK(S.verify_policy_bad);
	CHECK(has_warn("ramboot.verify=: invalid value 'sigend'"));
	/* A good hash does not make a bad policy good. */
	settings_parse_cmdline(&S, "ramboot.sha256="
			       "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
	CHECK(S.verify_policy_bad);
	settings_parse_cmdline(&S, "ramboot.verify=signed");
	CHECK(!S.verify_policy_bad);
	CHECK_EQ_INT(S.verify, VERIFY_SIGNED);
	/* From ramboot.conf / ltsp.conf: RAMBOOT_VERIFY. */
	fresh();
	CHECK_EQ_INT(settings_set(&S, "verify", "hash", "test", SRC_CONF), 0);
	CHECK_EQ_INT(S.verify, VERIFY_HASH);
}

static void verity_source_udpcast(void)
{
	fresh();
	CHECK(!S.verity);
	CHECK_EQ_INT(S.source, SOURCE_NETWORK);
	settings_parse_cmdline(&S, "ramboot.verity=1 ramboot.source=udpcast "
			       "ramboot.udpcast=portbase=9100,interface=eth1,receive-timeout=5");
	CHECK(S.verity);
	CHECK(!S.verity_bad);
	CHECK_EQ_INT(S.source, SOURCE_UDPCAST);
	CHECK_EQ_STR(boot_source_name(S.source), "udpcast");
	CHECK_EQ_STR(S.udpcast, "portbase=9100,interface=eth1,receive-timeout=5");
	CHECK_EQ_INT(S.nwarn, 0);
	settings_parse_cmdline(&S, "ramboot.verity=off ramboot.source=network");
	CHECK(!S.verity);
	CHECK_EQ_INT(S.source, SOURCE_NETWORK);
	/* A bare switch turns it on; a typo asks for it (fails closed). */
	settings_parse_cmdline(&S, "ramboot.verity");
	CHECK(S.verity);
	settings_parse_cmdline(&S, "ramboot.verity=0 ramboot.verity=ture");
	CHECK(S.verity);
	CHECK(S.verity_bad);
	CHECK(has_warn("ramboot.verity=: invalid value 'ture'"));
	settings_parse_cmdline(&S, "ramboot.verity=no");
	CHECK(!S.verity);
	CHECK(!S.verity_bad);
	/* Bad udpcast options and sources keep the earlier value. */
	settings_parse_cmdline(&S, "ramboot.source=multicast ramboot.udpcast=portbase=9001 "
			       "ramboot.udpcast=interface=-x ramboot.udpcast=bogus");
	CHECK_EQ_INT(S.source, SOURCE_NETWORK);
	CHECK_EQ_STR(S.udpcast, "portbase=9100,interface=eth1,receive-timeout=5");
	CHECK(has_warn("ramboot.source=: invalid value 'multicast'"));
	CHECK(has_warn("ramboot.udpcast=: udpcast: portbase '9001'"));
	CHECK(has_warn("ramboot.udpcast=: udpcast: interface '-x'"));
	/* From ramboot.conf / ltsp.conf. */
	fresh();
	CHECK_EQ_INT(settings_set(&S, "source", "udpcast", "RAMBOOT_SOURCE", SRC_ENV), 0);
	CHECK_EQ_INT(settings_set(&S, "verity", "yes", "RAMBOOT_VERITY", SRC_ENV), 0);
	CHECK_EQ_INT(S.source, SOURCE_UDPCAST);
	CHECK(S.verity);
}

/* ramboot.url=URL[,URL...]: the image, then its mirrors; a value that is
 * not a list of 1 to 8 http:// URLs is refused whole, the earlier one
 * kept. */
static void url_list(void)
{
	char *big;
	size_t i;

	fresh();
	CHECK_EQ_INT(S.nurl, 0);
	CHECK(settings_url(&S, 0) == NULL);
	settings_parse_cmdline(&S, "ramboot=ram ramboot.url=http://10.0.2.2:8080/x86_64.img,"
			       "http://[fd00::1]/i/x86_64.img,http://server/x.img");
	CHECK_EQ_INT(S.nwarn, 0);
	CHECK_EQ_INT(S.nurl, 3);
	CHECK_EQ_STR(settings_url(&S, 0), "http://10.0.2.2:8080/x86_64.img");
	CHECK_EQ_STR(settings_url(&S, 1), "http://[fd00::1]/i/x86_64.img");
	CHECK_EQ_STR(settings_url(&S, 2), "http://server/x.img");
	CHECK(settings_url(&S, 3) == NULL);
	CHECK(settings_url(&S, -1) == NULL);
	CHECK_EQ_STR(S.url, "http://10.0.2.2:8080/x86_64.img,http://[fd00::1]/i/x86_64.img,"
		     "http://server/x.img");
	/* Hostile values: each a warning, the list before it kept. */
	settings_parse_cmdline(&S, "ramboot.url=https://s/x.img ramboot.url=ftp://s/x.img "
			       "ramboot.url= ramboot.url=, ramboot.url=http://a/x,,http://b/x "
			       "ramboot.url=http://a/x, ramboot.url=,http://a/x "
			       "ramboot.url=http://a/x,file:///etc/passwd ramboot.url=http:// "
			       "\"ramboot.url=http://a/x y\" ramboot.url=http://a:99999/x");
	CHECK_EQ_INT(S.nurl, 3);
	CHECK_EQ_STR(settings_url(&S, 0), "http://10.0.2.2:8080/x86_64.img");
	CHECK_EQ_INT(S.nwarn, 11);
	CHECK(has_warn("ramboot.url=: invalid value 'https://s/x.img', ignored"));
	CHECK(has_warn("ramboot.url=: invalid value 'http://a/x,,http://b/x', ignored"));
	CHECK(has_warn("ramboot.url=: invalid value 'http://a/x,', ignored"));
	/* Eight URLs are taken; nine are refused. */
	fresh();
	settings_parse_cmdline(&S, "ramboot.url=http://a/1,http://a/2,http://a/3,http://a/4,"
			       "http://a/5,http://a/6,http://a/7,http://a/8");
	CHECK_EQ_INT(S.nurl, 8);
	CHECK_EQ_STR(settings_url(&S, 7), "http://a/8");
	settings_parse_cmdline(&S, "ramboot.url=http://b/1,http://b/2,http://b/3,http://b/4,"
			       "http://b/5,http://b/6,http://b/7,http://b/8,http://b/9");
	CHECK_EQ_INT(S.nurl, 8);
	CHECK_EQ_STR(settings_url(&S, 0), "http://a/1");
	CHECK(has_warn("ramboot.url=: invalid value"));
	/* Too long for the field: refused, never cut. */
	big = malloc(SET_PATH_MAX + 64);
	CHECK(big != NULL);
	if (big) {
		memcpy(big, "http://a/", 9);
		for (i = 9; i < SET_PATH_MAX + 10; i++)
			big[i] = 'x';
		big[i] = '\0';
		fresh();
		CHECK_EQ_INT(settings_set(&S, "url", big, "RAMBOOT_URL=", SRC_ENV), -EINVAL);
		CHECK_EQ_INT(S.nurl, 0);
		CHECK(has_warn("RAMBOOT_URL=: value too long, ignored"));
		free(big);
	}
	/* From ramboot.conf and ltsp.conf (the environment); "none" clears. */
	fresh();
	settings_parse_conf(&S, "RAMBOOT_URL=\"http://s/x.img,http://m/x.img\"\n", 44);
	CHECK_EQ_INT(S.nurl, 2);
	CHECK_EQ_STR(settings_url(&S, 1), "http://m/x.img");
	{
		char *env[] = { "RAMBOOT_URL=http://e/x.img", NULL };

		settings_parse_env(&S, env);
	}
	CHECK_EQ_INT(S.nurl, 1);
	CHECK_EQ_STR(settings_url(&S, 0), "http://e/x.img");
	CHECK_EQ_INT(S.key_src[SET_NKEYS - 1], SRC_ENV);
	settings_parse_cmdline(&S, "ramboot.url=none");
	CHECK_EQ_INT(S.nurl, 0);
	CHECK_EQ_STR(S.url, "");
	CHECK_EQ_INT(S.nwarn, 0);
}

static void double_dash_ends(void)
{
	fresh();
	settings_parse_cmdline(&S, "ramboot=prefetch -- ramboot=ram");
	CHECK_EQ_INT(S.mode, BOOT_PREFETCH);
}

static void ltsp_image_field(void)
{
	char out[64];

	fresh();
	settings_parse_cmdline(&S, "ltsp.image=images/x86_64.img,fstype=squashfs,,boot.img,subdir=boot");
	CHECK_EQ_STR(S.ltsp_image, "images/x86_64.img,fstype=squashfs,,boot.img,subdir=boot");
	CHECK_EQ_INT(ltsp_image_first(S.ltsp_image, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "images/x86_64.img");
	CHECK_EQ_INT(ltsp_image_first("x.img", out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "x.img");
	CHECK(ltsp_image_first(",opts", out, sizeof(out)) < 0);
	CHECK(ltsp_image_first("averyveryverylongname.img", out, 8) < 0);
	/* ltsp.image does not set ramboot.image */
	CHECK_EQ_STR(S.image, "");
}

static void env_mapping(void)
{
	char *env[] = {
		"PATH=/bin", "RAMBOOT=ram", "RAMBOOT_IMAGE=/srv/a.img", "RAMBOOT_SWAP=zram",
		"RAMBOOT_SWAP_SIZE=4G", "RAMBOOT_SWAP_PRIORITY=7", "RAMBOOT_TARGET=zram",
		"RAMBOOT_ROOT=/tmp/x", "RAMBOOT_BIN=/x", "RAMBOOT_BOGUS=1", "RAMBOOTX=1",
		"RAMBOOT_DEBUG=", "RAMBOOT_PUBLISH_SIGN=/root/lab.key",
		"RAMBOOT_IPXE_INITRDS=x", "RAMBOOT_LTSP_BINARY=auto", "RAMBOOT_PUBLISH_=1", NULL,
	};

	fresh();
	settings_parse_env(&S, env);
	CHECK_EQ_INT(S.mode, BOOT_RAM);
	CHECK_EQ_INT(S.mode_source, SRC_ENV);
	CHECK_EQ_STR(S.image, "/srv/a.img");
	CHECK_EQ_INT(S.swap, SWAP_ZRAM);
	CHECK_EQ_STR(S.swap_size, "4G");
	CHECK_EQ_INT(S.swap_priority, 7);
	CHECK_EQ_INT(S.target, TARGET_ZRAM);
	CHECK(!S.debug);
	/* the server's variables (ltsp.conf's [common]) are not warned of */
	CHECK_EQ_INT(S.nwarn, 2);
	CHECK(has_warn("RAMBOOT_BOGUS=: unknown setting"));
	CHECK(has_warn("RAMBOOT_PUBLISH_=: unknown setting"));
}

static void conf_syntax(void)
{
	const char conf[] =
		"# ramboot settings\n"
		"\n"
		"RAMBOOT=prefetch\n"
		"  export RAMBOOT_IMAGE=\"/srv/with space.img\"  # comment\n"
		"RAMBOOT_SWAP_ALGORITHM='zstd,lz4'\n"
		"RAMBOOT_MINFREE=1G\n"
		"RAMBOOT_TARGET=\"zram\n"
		"RAMBOOT_DECOMPRESS=xz trailing\n"
		"NOT_OURS=1\n"
		"garbage line\n"
		"RAMBOOT_SWAP=";

	fresh();
	settings_parse_conf(&S, conf, sizeof(conf) - 1);
	CHECK_EQ_INT(S.mode, BOOT_PREFETCH);
	CHECK_EQ_INT(S.mode_source, SRC_CONF);
	CHECK_EQ_STR(S.image, "/srv/with space.img");
	CHECK_EQ_STR(S.swap_algorithm, "zstd,lz4");
	CHECK_EQ_INT(S.minfree, 1ULL << 30);
	CHECK_EQ_INT(S.target, TARGET_TMPFS);
	CHECK_EQ_STR(S.decompress, "auto");
	CHECK_EQ_INT(S.swap, SWAP_OFF);
	CHECK_EQ_INT(S.nwarn, 4);
	CHECK(has_warn("line 7: RAMBOOT_TARGET=: unterminated quote"));
	CHECK(has_warn("line 8: RAMBOOT_DECOMPRESS=: trailing text"));
	CHECK(has_warn("line 9: NOT_OURS=: unknown setting"));
	CHECK(has_warn("line 10: expected KEY=value"));
}

static void precedence(void)
{
	const char conf[] = "RAMBOOT=prefetch\nRAMBOOT_IMAGE=/conf.img\nRAMBOOT_MINFREE=1G\n"
			    "RAMBOOT_SWAP_SIZE=1G\n";
	char *env[] = { "RAMBOOT_IMAGE=/env.img", "RAMBOOT_SWAP_SIZE=2G", "RAMBOOT=off", NULL };

	/* The order cmd_boot applies them: defaults, file, environment,
	 * command line. */
	fresh();
	settings_parse_conf(&S, conf, sizeof(conf) - 1);
	settings_parse_env(&S, env);
	settings_parse_cmdline(&S, "ramboot=ram ramboot.swap.size=bogus size");
	CHECK_EQ_INT(S.mode, BOOT_RAM);                   /* cmdline > env > conf */
	CHECK_EQ_STR(S.image, "/env.img");                /* env > conf */
	CHECK_EQ_INT(S.minfree, 1ULL << 30);              /* conf > default */
	CHECK_EQ_STR(S.decompress, "auto");               /* default */
	CHECK_EQ_STR(S.swap_size, "bogus");               /* cmdline wins, checked later */
	/* An invalid higher-precedence value keeps the lower one. */
	fresh();
	settings_parse_env(&S, env);
	settings_parse_cmdline(&S, "ramboot=turbo");
	CHECK_EQ_INT(S.mode, BOOT_OFF);
	CHECK_EQ_INT(S.mode_source, SRC_ENV);
	CHECK_EQ_INT(S.nwarn, 1);
}

static void garbage_is_safe(void)
{
	char buf[3000];
	unsigned seed = 12345;
	size_t i;
	int round;

	/* Random bytes (no NUL) through every parser: no crash, no overflow
	 * (the unit build runs under ASan/UBSan). */
	for (round = 0; round < 200; round++) {
		for (i = 0; i < sizeof(buf) - 1; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = (char)(1 + (seed >> 16) % 255);
			/* Odd rounds: mostly our own keys, quotes and '=' */
			if (round % 2)
				buf[i] = "ramboot.=\" \n'#_RAMBOOT"[(seed >> 16) % 22];
		}
		buf[sizeof(buf) - 1] = '\0';
		fresh();
		settings_parse_cmdline(&S, buf);
		settings_parse_conf(&S, buf, sizeof(buf) - 1);
	}
	fresh();
	settings_parse_cmdline(&S, "\"");
	settings_parse_cmdline(&S, "=");
	settings_parse_cmdline(&S, "ramboot.image=\"");
	settings_parse_conf(&S, "=", 1);
	settings_parse_conf(&S, "RAMBOOT=\"", 9);
	CHECK(1);
}

static void long_values(void)
{
	char *line = malloc(SET_PATH_MAX + 64);

	fresh();
	strcpy(line, "ramboot.image=/");
	memset(line + 15, 'a', SET_PATH_MAX + 10);
	line[15 + SET_PATH_MAX + 10] = '\0';
	settings_parse_cmdline(&S, line);
	CHECK_EQ_STR(S.image, "");
	CHECK(has_warn("too long"));
	free(line);
}

static void report_lines(void)
{
	struct boot_report r;
	char buf[8192];
	int n;

	report_init(&r);
	strcpy(r.mode_asked, "ram");
	strcpy(r.mode_done, "off");
	strcpy(r.source, "/root/images/x86_64.img");
	strcpy(r.fallback, "not enough memory");
	report_add_error(&r, "needs 2 GiB,\nhas 1 GiB");
	report_add_error(&r, "swap: no zram");
	n = report_format(&r, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(strstr(buf, "mode_asked=ram\nmode_done=off\nsource=/root/images/x86_64.img\n") == buf);
	CHECK(strstr(buf, "\nhash=none\n"));
	CHECK(strstr(buf, "\nswap_size=\n"));
	CHECK(strstr(buf, "\nfallback=not enough memory\n"));
	CHECK(strstr(buf, "\nerror=needs 2 GiB, has 1 GiB; swap: no zram\n"));
	CHECK(report_format(&r, buf, 20) < 0);
	n = report_format_json(&r, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(strstr(buf, "\"mode_asked\": \"ram\","));
	CHECK(strstr(buf, "\"bytes\": 0,"));
	CHECK(strstr(buf, "\"swap_size\": null,"));
	CHECK(strstr(buf, "\"error\": \"needs 2 GiB, has 1 GiB; swap: no zram\"\n}"));
}

int main(void)
{
	RUN(defaults);
	RUN(next_arg_kernel_way);
	RUN(cmdline_switches);
	RUN(durations_one_grammar);
	RUN(quoted_image);
	RUN(unknown_and_bad);
	RUN(sha256_lowercased);
	RUN(double_dash_ends);
	RUN(ltsp_image_field);
	RUN(env_mapping);
	RUN(conf_syntax);
	RUN(precedence);
	RUN(garbage_is_safe);
	RUN(long_values);
	RUN(report_lines);
	RUN(verify_policy);
	RUN(verity_source_udpcast);
	RUN(url_list);
	return TAP_DONE();
}
