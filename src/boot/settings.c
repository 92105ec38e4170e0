// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the settings of `ramboot boot` mean for this boot: read from
 * ramboot.conf, the environment and the kernel command line
 * (cmdline.c parses them), the image and manifest they name, whether a
 * copy may be made and what it is verified against.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/msg.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "boot/outcome.h"
#include "boot/settings.h"
#include "format/manifest.h"
#include "load/load.h"
#include "trust/sign.h"

extern char **environ;

#define CONF_MAX (64 * 1024)
#define CMDLINE_MAX 8192

static void add_cache_warn(struct boot_settings *s)
{
	if (s->nwarn < SET_WARN_MAX)
		snprintf(s->warn[s->nwarn], SET_WARN_LEN, "ramboot.cache= is not used with "
			 "ramboot=%s (only with cache and lazy)", boot_mode_name(s->mode));
	s->nwarn++;
}

void load_settings(struct boot_settings *s, const struct boot_args *a)
{
	char path[PATH_MAX], *buf;
	ssize_t n;
	int i;

	settings_init(s);

	/* A file that is there but cannot be read whole is not "no
	 * settings": what it says about verification is unknown, so a RAM
	 * copy is refused (conf_bad). Never cut at a size either. */
	if (rb_path(path, sizeof(path), CONF_PATH) == 0) {
		struct stat st;

		if (stat(path, &st) < 0) {
			if (errno != ENOENT) {
				rb_warn("%s: %s", path, strerror(errno));
				s->conf_bad = true;
			}
		} else if (!S_ISREG(st.st_mode) || st.st_size > CONF_MAX) {
			rb_warn("%s: %s; its settings are ignored", path, S_ISREG(st.st_mode) ?
				"larger than 64 KiB" : "not a regular file");
			s->conf_bad = true;
		} else if ((buf = malloc(CONF_MAX + 2)) == NULL) {
			s->conf_bad = true;
		} else {
			n = read_str_abs(path, buf, CONF_MAX + 2);
			if (n >= 0 && n <= CONF_MAX) {
				settings_parse_conf(s, buf, (size_t)n);
			} else {
				rb_warn("%s: %s", path, n < 0 ? strerror((int)-n) : "grew while read");
				s->conf_bad = true;
			}
			free(buf);
		}
	}

	settings_parse_env(s, environ);

	if (a->cmdline) {
		settings_parse_cmdline(s, a->cmdline);
	} else {
		buf = malloc(CMDLINE_MAX);
		if (buf) {
			n = rb_read_str("/proc/cmdline", buf, CMDLINE_MAX);
			if (n >= 0)
				settings_parse_cmdline(s, buf);
			else
				rb_warn("/proc/cmdline: %s", strerror((int)-n));
			free(buf);
		}
	}

	/* A cache named and no mode asked for: the admin who names the
	 * cache's device means it to be used. ramboot=off said outright
	 * turns it off with the rest; ram and prefetch read the network
	 * image whole, which the cache would not spare. */
	if (s->cache[0] && s->mode == BOOT_OFF && s->mode_source == SRC_DEFAULT)
		s->mode = BOOT_CACHE;
	else if (s->cache[0] && (s->mode == BOOT_RAM || s->mode == BOOT_PREFETCH))
		add_cache_warn(s);
	for (i = 0; i < s->nwarn && i < SET_WARN_MAX; i++)
		rb_warn("%s", s->warn[i]);
	if (s->nwarn > SET_WARN_MAX)
		rb_warn("%d more warnings about settings", s->nwarn - SET_WARN_MAX);
}

/* The root file system mount of the initramfs: initramfs-tools exports
 * rootmnt=/root, dracut uses /sysroot. */
const char *root_mount(void)
{
	const char *r = getenv("rootmnt");

	return r && *r == '/' ? r : "/root";
}

/* The image to copy: --image, ramboot.image=, the first field of
 * ltsp.image= (LTSP's list "img,options,,img2,..."), --default-image.
 * Setting paths are looked up below the root prefix, relative ones
 * under the root mount, as LTSP's initrd-bottom does. */
int resolve_image(const struct boot_settings *s, const struct boot_args *a,
			 char *out, size_t len)
{
	char first[SET_PATH_MAX];
	const char *img;
	int rc;

	if (a->image) {
		if (strlen(a->image) >= len)
			return -ENAMETOOLONG;
		snprintf(out, len, "%s", a->image);
		return 0;
	}
	if (s->image[0]) {
		img = s->image;
	} else if (s->ltsp_image[0]) {
		rc = ltsp_image_first(s->ltsp_image, first, sizeof(first));
		if (rc < 0)
			return rc;
		img = first;
	} else if (a->default_image) {
		if (strlen(a->default_image) >= len)
			return -ENAMETOOLONG;
		snprintf(out, len, "%s", a->default_image);
		return 0;
	} else {
		return -ENOENT;
	}
	if (img[0] == '/')
		return rb_path(out, len, "%s", img);
	return rb_path(out, len, "%s/%s", root_mount(), img);
}


/* IMAGE.manifest next to the image is used when present: a server that
 * publishes manifests gets verified copies without per-client settings.
 * "ramboot.manifest=none" turns that off. */
const char *pick_manifest(const struct boot_settings *s, const char *image,
				 char *buf, size_t len)
{
	struct stat st;
	int rc;

	if (!strcmp(s->manifest, "none"))
		return NULL;
	if (s->manifest[0]) {
		/* Like the image: relative to the root mount. */
		if (s->manifest[0] == '/')
			rc = rb_path(buf, len, "%s", s->manifest);
		else
			rc = rb_path(buf, len, "%s/%s", root_mount(), s->manifest);
		return rc < 0 ? NULL : buf;
	}
	if (snprintf(buf, len, "%s.manifest", image) >= (int)len)
		return NULL;
	/* Anything there (a directory, a FIFO, a dangling link) is a
	 * manifest that the loader then fails to read: a fallback, never
	 * an unverified copy. Only no name at all means "no manifest". */
	return lstat(buf, &st) == 0 || errno != ENOENT ? buf : NULL;
}

const char *url_manifest(const struct boot_settings *s, char *buf, size_t len)
{
	const char *url = settings_url(s, 0);

	if (!url || !strcmp(s->manifest, "none"))
		return NULL;
	if (!strncmp(s->manifest, "http://", 7))
		return snprintf(buf, len, "%s", s->manifest) < (int)len ? buf : NULL;
	if (s->manifest[0])
		return pick_manifest(s, url, buf, len);
	return snprintf(buf, len, "%s.manifest", url) < (int)len ? buf : NULL;
}

/* The file the manifest names for the image's bytes, read in a child
 * the boot can give up on (the manifest and the file are on the
 * network). */
struct child_follow {
	struct child_beat cb;
	const char *manifest;
	const char *image;
	int rc;                  /* 0: path is the file, 1: none named */
	char path[PATH_MAX];
};

static void follow_child(void *arg)
{
	struct child_follow *c = arg;
	const char *slash = strrchr(c->image, '/');
	struct manifest m;
	struct stat st;
	char err[64];
	int n;

	c->rc = manifest_load(c->manifest, &m, err, sizeof(err));
	if (c->rc < 0)
		return;
	c->rc = 1;
	if (m.image[0]) {
		n = snprintf(c->path, sizeof(c->path), "%.*s%s", slash ? (int)(slash - c->image + 1) :
			     0, c->image, m.image);
		c->rc = n < 0 || (size_t)n >= sizeof(c->path) ? -ENAMETOOLONG :
			stat(c->path, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	}
	manifest_free(&m);
}

bool follow_image(const struct boot_settings *s, const char *manifest, char *image,
		  size_t len)
{
	struct child_follow c = { .manifest = manifest, .image = image, .rc = -EIO };
	int rc, status;

	rc = child_call(follow_child, &c, sizeof(c), read_limit(s), &status);
	/* A manifest that cannot be read is the loader's to report. */
	if (rc == CHILD_DONE && c.rc < 0 && c.path[0])
		rb_warn("%s: %s; reading %s", c.path, strerror(-c.rc), image);
	if (rc != CHILD_DONE || c.rc != 0 || strlen(c.path) >= len)
		return false;
	rb_debug("the manifest names %s for the image's bytes", c.path);
	snprintf(image, len, "%s", c.path);
	return true;
}

/* A copy is made only when its verification is what was asked for:
 * unparsable hash settings or an unreadable ramboot.conf are a fallback. */
bool settings_usable(const struct boot_settings *s, struct boot_report *rep)
{
	if (s->verify_bad) {
		fallback(rep, "verification unusable", "ramboot.sha256= or ramboot.manifest= does "
			 "not parse; a copy that cannot be verified is not booted");
		return false;
	}
	if (s->conf_bad) {
		fallback(rep, "settings unreadable", "ramboot.conf could not be read whole");
		return false;
	}
	return true;
}

/*
 * The policy for this boot: AUTO is "signed" when the initrd holds trusted
 * keys. false after a fallback: the policy cannot be met (signed without
 * a manifest, hash without either) or does not parse; never a copy that
 * is less verified than asked.
 */
bool verify_plan(const struct boot_settings *s, const char *manifest, struct vplan *p,
			struct boot_report *rep)
{
	memset(p, 0, sizeof(*p));
	p->policy = s->verify;
	if (s->verify_policy_bad) {
		fallback(rep, "verification unusable", "ramboot.verify= does not parse; a copy "
			 "that cannot be verified as asked is not booted");
		return false;
	}
	if (p->policy == VERIFY_AUTO && sign_keys_count(NULL) > 0)
		p->policy = VERIFY_SIGNED;
	switch (p->policy) {
	case VERIFY_SIGNED:
		if (!manifest) {
			fallback(rep, "not signed", "ramboot.verify=signed and no manifest");
			return false;
		}
		/* ramboot.sha256= is no signature: the signed manifest decides. */
		p->manifest = manifest;
		p->signed_only = true;
		break;
	case VERIFY_OFF:
		break;
	case VERIFY_HASH:
	case VERIFY_AUTO:
		p->sha256 = s->sha256[0] ? s->sha256 : NULL;
		p->manifest = p->sha256 ? NULL : manifest;
		if (p->policy == VERIFY_HASH && !p->sha256 && !p->manifest) {
			fallback(rep, "no verification", "ramboot.verify=hash and neither a manifest "
				 "nor ramboot.sha256=");
			return false;
		}
		if (p->policy == VERIFY_AUTO)
			p->policy = p->sha256 || p->manifest ? VERIFY_HASH : VERIFY_OFF;
		break;
	}
	/* The bytes of an image over HTTP come through whatever is on the
	 * way: unchecked only when ramboot.verify=off says so outright. */
	if (s->nurl && p->policy == VERIFY_OFF && s->verify != VERIFY_OFF) {
		fallback(rep, "no verification", "ramboot.url=: an image over HTTP needs a manifest "
			 "with chunk hashes or ramboot.sha256= (ramboot.verify=off copies it "
			 "unchecked)");
		return false;
	}
	snprintf(rep->verify, sizeof(rep->verify), "%s", boot_verify_name(p->policy));
	return true;
}

/*
 * The boot's one deadline (docs/cmdline.md, ramboot.timeout=): ramboot
 * boot returns at the latest CHILD_GRACE_S after the network last
 * delivered for ramboot.timeout= seconds. Every step that waits on the
 * network without a progress of its own (the manifest, the image's
 * first bytes, the look at the cache, the start of a lazy copy, the
 * memory tier's handshake) takes what is left of it, so that the bounds
 * of several such steps never add up; a copy that moves data pushes it
 * on (boot_deadline_progress). Kept here, beside the settings it comes
 * from: the boot's steps reach it through read_limit().
 */
static double deadline = -1;     /* now_sec()'s clock; 0: none; -1: not started */

static double deadline_from(const struct boot_settings *s, double at)
{
	double t = s->timeout_set ? s->timeout : LOAD_STALL_TIMEOUT;

	return t > 0 ? at + t + CHILD_GRACE_S : 0;
}

void boot_deadline_start(const struct boot_settings *s)
{
	deadline = deadline_from(s, now_sec());
}

void boot_deadline_progress(const struct boot_settings *s, double at)
{
	double d = deadline_from(s, at);

	if (deadline > 0 && d > deadline)
		deadline = d;
}

double boot_deadline(void)
{
	return deadline > 0 ? deadline : 0;
}

/* The bound on a step that waits on the network, in seconds: what is
 * left of the boot's deadline (a hundredth at least: 0 would be no
 * bound); 0: none (ramboot.timeout=0). */
double read_limit(const struct boot_settings *s)
{
	double left;

	if (deadline < 0)
		boot_deadline_start(s);
	if (deadline == 0)
		return 0;
	left = deadline - now_sec();
	return left > 0.01 ? left : 0.01;
}
