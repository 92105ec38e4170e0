// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dry runs of `ramboot boot`: --query for the hooks, --explain for
 * an admin. Nothing is copied, mounted or written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/base.h"
#include "lib/path.h"
#include "lib/units.h"
#include "boot/explain.h"
#include "boot/settings.h"
#include "load/load.h"
#include "swap/netmem.h"
#include "swap/swap.h"
#include "trust/sign.h"

/*
 * --query: what a boot with these settings would do, for a hook that must
 * prepare before the root is mounted (the premount phase sets up a
 * read-only loop device over a block device root for ramboot=lazy). Two
 * lines, mode=MODE and image=PATH (empty when no setting and no
 * --default-image names one); with ramboot.url=, url=URL (its first,
 * the image over HTTP: the hook brings the network up for it) and
 * timeout=SECONDS (ramboot.timeout=, 0 for none: the bound of that);
 * nothing is made, no report is written.
 */
int boot_query(const struct boot_settings *s, const struct boot_args *a)
{
	char image[PATH_MAX];

	if (resolve_image(s, a, image, sizeof(image)) < 0)
		image[0] = '\0';
	if (printf("mode=%s\nimage=%s\n", boot_mode_name(s->mode), image) < 0 ||
	    (s->nurl && printf("url=%s\ntimeout=%.0f\n", settings_url(s, 0),
				s->timeout_set ? s->timeout : LOAD_STALL_TIMEOUT) < 0) ||
	    fflush(stdout) != 0)
		return -EIO;
	return 0;
}

/* The value a setting left at its default has (docs/cmdline.md), in
 * the order of settings_keys[]; NULL: the swap layer's own, or what the
 * other settings make of it. */
static const char *const defaults[SET_NKEYS] = {
	NULL, "ltsp.image= (first)", "auto", "tmpfs", "256M", "none", "IMAGE.manifest if there",
	"IMAGE.profile if there", "auto", "0", "network", "none", "none", "off", "30s", NULL,
	NULL, NULL, "100", "off", "none", "none",
};

static const char *default_value(const struct boot_settings *s, size_t i,
				 const struct swap_opts *so)
{
	if (defaults[i])
		return defaults[i];
	if (i == 0)
		return boot_mode_name(s->mode);   /* cache when ramboot.cache= is set */
	if (!strcmp(settings_keys[i], "swap"))  /* ramboot.swap.net= asks for zram */
		return s->swap == SWAP_ZRAM ? "zram (swap.net)" : "off";
	return !strcmp(settings_keys[i], "swap.size") ? so->size : so->algorithm;
}

/* ramboot.swap.net=: checked as the boot checks it, whose failure is
 * zram alone. */
static void explain_swap_net(const struct boot_settings *s)
{
	struct netmem_opts no;
	char msg[256], sz[32];

	if (!s->swap_net[0])
		return;
	netmem_opts_init(&no);
	if (netmem_spec_parse(s->swap_net, &no, msg, sizeof(msg)) < 0) {
		printf("network memory tier: would be zram alone: ramboot.swap.net=%s: %s\n",
		       s->swap_net, msg);
		return;
	}
	printf("network memory tier: %s, export %s, size %s\n", no.server, no.export,
	       no.size ? fmt_size(no.size, sz, sizeof(sz)) : "the export's");
}

/* --explain of ramboot.url=: the URLs, the manifest and the policy; the
 * size and the memory verdict come with the manifest, which a dry run
 * does not fetch. */
static void explain_url(const struct boot_settings *s, struct boot_report *rep)
{
	char mbuf[PATH_MAX];
	const char *manifest = url_manifest(s, mbuf, sizeof(mbuf));
	struct vplan vp;
	int i;

	printf("image: %s (over HTTP)\n", settings_url(s, 0));
	for (i = 1; i < s->nurl; i++)
		printf("mirror: %s\n", settings_url(s, i));
	printf("manifest: %s\n", manifest ? manifest : "none");
	if (s->mode != BOOT_RAM && s->mode != BOOT_LAZY && !cache_used(s))
		printf("(ramboot=%s does not read ramboot.url=)\n", boot_mode_name(s->mode));
	if (!settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep)) {
		printf("verification: would fall back: %s (%s)\n", rep->fallback, rep->error);
		return;
	}
	printf("verification: %s%s\n", boot_verify_name(vp.policy),
	       vp.signed_only ? " (a manifest signed by a trusted key)" :
	       vp.sha256 ? " (ramboot.sha256=)" : vp.manifest ?
	       " (the manifest's chunk hashes)" : " (none: ramboot.verify=off)");
	printf("memory: checked against the manifest's size when the boot reads it\n");
}

/*
 * --explain: the dry run an admin asks for. Every setting with the value
 * in force and where it came from, the image, manifest and keys this boot
 * would use, the verification policy and the memory verdict. Nothing is
 * read from the image, copied, mounted or written (stat(2) only); a
 * fallback the boot would take is printed as "would fall back".
 */
int boot_explain(const struct boot_settings *s, const struct boot_args *a)
{
	struct boot_report *rep = malloc(sizeof(*rep));
	char image[PATH_MAX], mbuf[PATH_MAX], sz[32], av[32], rs[32];
	struct swap_opts so;
	const char *manifest = NULL;
	uint64_t avail = 0, reserve = s->minfree_set ? s->minfree : 256 * MiB;
	struct vplan vp;
	struct stat st;
	size_t i;
	int rc, keys;

	if (!rep)
		return -ENOMEM;
	report_init(rep);
	swap_opts_init(&so);
	printf("settings (value, from):\n");
	for (i = 0; i < SET_NKEYS; i++) {
		const char *name = settings_keys[i];

		printf("  ramboot%s%-16s %-24s %s\n", name[0] ? "." : "", name,
		       s->key_src[i] == SRC_DEFAULT ?
		       default_value(s, i, &so) : s->key_val[i],
		       set_source_name(s->key_src[i]));
	}
	printf("mode: %s\n", boot_mode_name(s->mode));
	explain_swap_net(s);
	if (s->nurl) {
		explain_url(s, rep);
		goto done;
	}
	rc = resolve_image(s, a, image, sizeof(image));
	if (rc < 0) {
		printf("image: none (%s)\n", rc == -ENOENT ? "neither ramboot.image= nor "
		       "ltsp.image= is set" : strerror(-rc));
		goto done;
	}
	if (stat(image, &st) < 0) {
		printf("image: %s: %s (would fall back: image not found)\n", image, strerror(errno));
		goto done;
	}
	printf("image: %s (%s)\n", image, fmt_size((uint64_t)st.st_size, sz, sizeof(sz)));
	manifest = pick_manifest(s, image, mbuf, sizeof(mbuf));
	printf("manifest: %s\n", manifest ? manifest : "none");
	keys = sign_keys_count(NULL);
	printf("trusted keys in the initrd: %d\n", keys > 0 ? keys : 0);
	if (!settings_usable(s, rep) || !verify_plan(s, manifest, &vp, rep)) {
		printf("verification: would fall back: %s (%s)\n", rep->fallback, rep->error);
		goto done;
	}
	printf("verification: %s%s\n", boot_verify_name(vp.policy),
	       vp.signed_only ? " (a manifest signed by a trusted key)" :
	       vp.sha256 ? " (ramboot.sha256=)" : vp.manifest ? " (the manifest's SHA-256)" : "");
	if (s->mode == BOOT_RAM || s->mode == BOOT_LAZY) {
		(void)rb_meminfo("MemAvailable", &avail);
		fmt_size(avail, av, sizeof(av));
		fmt_size(reserve, rs, sizeof(rs));
		/* A compressed image's size in RAM is known only once read
		 * (or from its manifest); the file's size is the floor. */
		if ((uint64_t)st.st_size + reserve > avail)
			printf("memory: would fall back: not enough memory (image %s, MemAvailable %s, "
			       "reserve %s)\n", sz, av, rs);
		else
			printf("memory: fits (image %s, MemAvailable %s, reserve %s)\n", sz, av, rs);
	}
done:
	free(rep);
	return fflush(stdout) == 0 ? 0 : -EIO;
}
