// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `ramboot keygen` and `ramboot sign`: an Ed25519 key pair made, a
 * manifest signed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cmd.h"
#include "lib/base.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/opts.h"
#include "lib/outfile.h"
#include "lib/path.h"
#include "format/manifest.h"
#include "trust/sign.h"
#include "trust/signint.h"

/* Open path's new file and write data to it, unnamed until
 * outfile_commit(); on failure nothing is left (outfile_abort done). */
static int write_aside(struct outfile *of, const char *path, const void *data, size_t len,
		       mode_t mode, int flags, char *err, size_t errlen)
{
	int rc = outfile_open(of, path, mode, flags | OUTFILE_SYNC, NULL, err, errlen);

	if (rc < 0)
		return rc;
	/* The mode, whatever the umask: a private key is the owner's only. */
	if (fchmod(of->fd, mode) < 0 || (rc = write_all(of->fd, data, len)) < 0) {
		rc = rc < 0 ? rc : -errno;
		outfile_abort(of);
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	return 0;
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode, int flags,
		      char *err, size_t errlen)
{
	struct outfile of;
	int rc = write_aside(&of, path, data, len, mode, flags, err, errlen);

	if (rc < 0)
		return rc;
	rc = outfile_commit(&of);
	if (rc < 0)
		return rb_errfmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* getrandom(2) until len bytes: it may return fewer, or be interrupted. */
static int getrandom_full(unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

static const struct rb_optset keygen_optset = {
	.head = "Usage: ramboot keygen [--force] KEY\n"
		"\n"
		"Make an Ed25519 key pair for signing manifests: the private key in\n"
		"KEY (mode 0600) and the public key in KEY.pub. Put KEY.pub into\n"
		"/etc/ramboot/keys/ where the initrd is built; keep KEY on the server.\n"
		"\n",
	.opts = RB_OPTS(
		{ "force", 'f', NULL,
		  "replace existing files" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit status: 0 made, 1 error, 2 usage.\n",
	.indent = 6, .col = 16,
};

/* Is DIR (a resolved, absolute path) PREFIX or below it? */
static bool path_under(const char *dir, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(dir, prefix, n) && (dir[n] == '\0' || dir[n] == '/');
}

/*
 * Where a private key must not go: what LTSP hands every client. /etc/ltsp
 * is packed whole into ltsp.img (TFTP, HTTP: no access control), /srv/ltsp
 * holds the images the clients mount and /srv/tftp what they download:
 * refused. The rest of /etc goes into a chrootless image (`ltsp image /`)
 * and /srv is often exported: a loud warning (LTSP's image excludes leave
 * out /root, where the admin guide keeps keys). true: refused.
 */
static bool keygen_place_refused(const char *key)
{
	static const char *const refused[] = { "/etc/ltsp", "/srv/ltsp", "/srv/tftp" };
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	size_t i;

	snprintf(tmp, sizeof(tmp), "%s", key);
	slash = strrchr(tmp, '/');
	if (!slash)
		snprintf(tmp, sizeof(tmp), ".");
	else if (slash == tmp)
		tmp[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(tmp, dir))
		return false;     /* the write itself says what is wrong */
	/* Below a fixture root (RAMBOOT_ROOT), the paths it stands for. */
	if (rb_path(tmp, sizeof(tmp), "%s", "") == 0 && tmp[0]) {
		char root[PATH_MAX];
		size_t n;

		if (realpath(tmp, root) && (n = strlen(root)) > 1 && path_under(dir, root))
			memmove(dir, dir + n, strlen(dir + n) + 1);
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
	}
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		if (path_under(dir, refused[i])) {
			rb_err("%s: %s goes to every LTSP client; keep the private key where "
			       "no client reads it (e.g. /root/ramboot/, see trust.md)", key, refused[i]);
			return true;
		}
	}
	if (path_under(dir, "/etc"))
		rb_warn("%s: a private key under /etc ends up in a chrootless LTSP image "
			"(ltsp image /) unless excluded (ADD_IMAGE_EXCLUDES); /root/ramboot/ is "
			"safer (see trust.md)", key);
	else if (path_under(dir, "/srv"))
		rb_warn("%s: /srv is what an LTSP server serves (NFS, TFTP, HTTP); "
			"/root/ramboot/ is safer (see trust.md)", key);
	return false;
}

int cmd_keygen(int argc, char **argv)
{
	struct rb_getopt g = { .set = &keygen_optset };
	char priv[256], pub[256], pubpath[PATH_MAX], keyid[SIGN_KEYID_LEN + 1], err[512];
	unsigned char der[sizeof(der_priv) + 32];
	struct edkey k;
	struct outfile opub, opriv;
	int flags = 0, c, rc;
	size_t np, nu;

	rb_set_cmd("keygen");
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'f': flags |= OUTFILE_REPLACE; break;
		case 'h': rb_opts_usage(stdout, &keygen_optset); return RB_EXIT_OK;
		default: return rb_usage_option("keygen", argv);
		}
	}
	if (argc - optind != 1)
		return rb_usage("keygen", "expected one KEY file name");
	if ((size_t)snprintf(pubpath, sizeof(pubpath), "%s.pub", argv[optind]) >= sizeof(pubpath))
		return rb_usage("keygen", "KEY: name too long");
	/* KEY is the private key: a name ending in .pub is where the keys
	 * the initrd packs for every client are taken from. */
	if (ends_with(argv[optind], ".pub")) {
		rb_err("%s: the private key would be named like a public key (.pub); "
		       "give KEY without .pub (KEY.pub is the public key)", argv[optind]);
		return RB_EXIT_USAGE;
	}
	if (keygen_place_refused(argv[optind]))
		return RB_EXIT_USAGE;
	/* The seed from the kernel's random pool, as PKCS#8 holds it. */
	memcpy(der, der_priv, sizeof(der_priv));
	rc = getrandom_full(der + sizeof(der_priv), 32);
	if (rc == 0 && (sodium_init() < 0 ||
			crypto_sign_seed_keypair(k.pub, k.sk, der + sizeof(der_priv)) != 0))
		rc = -EIO;
	if (rc < 0) {
		sodium_memzero(der, sizeof(der));
		rb_err("cannot make a key: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	np = pem_write(priv, sizeof(priv), PEM_PRIV, der, sizeof(der));
	sodium_memzero(der, sizeof(der));
	{
		unsigned char dpub[sizeof(der_pub) + 32];

		memcpy(dpub, der_pub, sizeof(der_pub));
		memcpy(dpub + sizeof(der_pub), k.pub, 32);
		nu = pem_write(pub, sizeof(pub), PEM_PUB, dpub, sizeof(dpub));
	}
	keyid_of(&k, keyid);
	edkey_wipe(&k);
	/* Both written aside before either is named: a refused or failed KEY
	 * leaves no KEY.pub of a key that is thrown away, and an existing
	 * pair stays a pair. The private key is named first: a KEY.pub the
	 * admin copies to the clients then always has its private key. */
	rc = write_aside(&opriv, argv[optind], priv, np, 0600, flags, err, sizeof(err));
	sodium_memzero(priv, sizeof(priv));
	if (rc == 0) {
		rc = write_aside(&opub, pubpath, pub, nu, 0644, flags, err, sizeof(err));
		if (rc < 0)
			outfile_abort(&opriv);
	}
	if (rc == 0) {
		rc = outfile_commit(&opriv);
		if (rc < 0) {
			outfile_abort(&opub);
			rb_errfmt(err, sizeof(err), rc, "%s: %s", argv[optind], strerror(-rc));
		}
	}
	if (rc == 0) {
		rc = outfile_commit(&opub);
		if (rc < 0)
			rb_errfmt(err, sizeof(err), rc, "%s: %s (%s is a new key now; run again "
				  "with --force)", pubpath, strerror(-rc), argv[optind]);
	}
	if (rc < 0) {
		rb_err("%s", err);
		return RB_EXIT_FAIL;
	}
	printf("%s: key id %s\n", pubpath, keyid);
	return RB_EXIT_OK;   /* main.c checks that it reached stdout */
}

/* `sign --check-key FILE...`: what the initramfs-tools hook and the dracut
 * module ask before they pack a key. */
static int check_keys(int n, char **files)
{
	char *buf = malloc(KEYFILE_MAX), keyid[SIGN_KEYID_LEN + 1], err[PATH_MAX + 256];
	int i, ret = RB_EXIT_OK;

	if (!buf) {
		rb_err("out of memory");
		return RB_EXIT_FAIL;
	}
	for (i = 0; i < n; i++) {
		struct stat st;
		size_t len;

		if (sign_pubkey_read(AT_FDCWD, files[i], buf, KEYFILE_MAX, &len, &st, keyid, err,
				     sizeof(err)) < 0) {
			rb_err("%s", err);
			ret = RB_EXIT_FAIL;
			continue;
		}
		if (st.st_mode & S_IWOTH)
			rb_warn("%s: world-writable: anyone here can replace a key the clients "
				"trust", files[i]);
		printf("%s: Ed25519 public key, key id %s\n", files[i], keyid);
	}
	free(buf);
	return ret;
}

enum { OPT_KEYS = 256, OPT_CHECK_KEY };

static const struct rb_optset sign_optset = {
	.head = "Usage: ramboot sign --key=KEY MANIFEST\n"
		"       ramboot sign --check [--keys=DIR] MANIFEST\n"
		"       ramboot sign --check-key FILE...\n"
		"\n"
		"Sign a manifest in place with the Ed25519 private key KEY (a signature\n"
		"it has already is replaced), or check its signature against the\n"
		"public keys (*.pub) in DIR (default /etc/ramboot/keys and\n"
		"/etc/ltsp/ramboot/keys).\n"
		"\n",
	.opts = RB_OPTS(
		{ "key", 'k', "=KEY",
		  "the private key (PEM, from ramboot keygen or openssl genpkey)" },
		{ "check", 'c', NULL,
		  "check instead of signing; prints who signed" },
		{ "check-key", OPT_CHECK_KEY, NULL,
		  "FILE... are public key files: check that each is an\n"
		  "Ed25519 public key (not a private one, not a link)" },
		{ "keys", OPT_KEYS, "=DIR",
		  "the trusted public keys for --check" },
		RB_OPT_HELP),
	.tail = "\n"
		"Exit status: 0 signed (or the signature is good), 1 error or a\n"
		"signature that is missing, bad, or by a key not trusted, 2 usage.\n",
	.indent = 6, .col = 19,
};

int cmd_sign(int argc, char **argv)
{
	struct rb_getopt g = { .set = &sign_optset };
	const char *key = NULL, *keys = NULL, *path;
	char err[512], *buf = NULL, *out = NULL;
	bool check = false, check_key = false;
	size_t len = 0;
	int c, rc, ret = RB_EXIT_FAIL;
	long n;

	rb_set_cmd("sign");
	while ((c = rb_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'k': key = optarg; break;
		case 'c': check = true; break;
		case OPT_KEYS: keys = optarg; break;
		case OPT_CHECK_KEY: check_key = true; break;
		case 'h': rb_opts_usage(stdout, &sign_optset); return RB_EXIT_OK;
		default: return rb_usage_option("sign", argv);
		}
	}
	if (check_key) {
		if (key || check || keys)
			return rb_usage("sign", "--check-key goes alone");
		if (argc - optind < 1)
			return rb_usage("sign", "expected key FILEs");
		return check_keys(argc - optind, argv + optind);
	}
	if (argc - optind != 1)
		return rb_usage("sign", "expected one MANIFEST");
	if (check == !!key)
		return rb_usage("sign", "give either --key or --check");
	if (keys && !check)
		return rb_usage("sign", "--keys goes with --check");
	path = argv[optind];
	buf = malloc(SIGN_TEXT_MAX);
	out = malloc(SIGN_TEXT_MAX);
	if (!buf || !out) {
		rb_err("out of memory");
		goto out;
	}
	rc = read_small(AT_FDCWD, path, 0, buf, SIGN_TEXT_MAX, &len, NULL);
	if (rc < 0) {
		rb_err("%s: %s", path, rc == -EINVAL ? "not a regular file" : strerror(-rc));
		goto out;
	}
	if (check) {
		struct sign_who who;

		rc = sign_check(buf, len, keys, &who, err, sizeof(err));
		if (rc < 0) {
			rb_err("%s: %s", path, err);
			goto out;
		}
		printf("%s: signed by %s (key %s)\n", path, who.name, who.keyid);
		ret = RB_EXIT_OK;
		goto out;
	}
	{
		struct manifest m;

		/* Only what a client would accept gets signed. */
		if (manifest_parse(buf, len, &m, err, sizeof(err)) < 0) {
			rb_err("%s: not a manifest: %s", path, err);
			goto out;
		}
		manifest_free(&m);
	}
	n = sign_text(buf, len, key, out, SIGN_TEXT_MAX, err, sizeof(err));
	if (n < 0) {
		rb_err("%s", err);
		goto out;
	}
	rc = write_file(path, out, (size_t)n, 0644, OUTFILE_REPLACE, err, sizeof(err));
	if (rc < 0) {
		rb_err("%s", err);
		goto out;
	}
	ret = RB_EXIT_OK;
out:
	free(buf);
	free(out);
	return ret;
}
