/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Settings of `ramboot boot`: the kernel command line (ramboot=,
 * ramboot.*=, ltsp.image=), RAMBOOT_* environment variables (set from
 * ltsp.conf), /etc/ramboot.conf and built-in defaults.
 *
 * Every parser reads a string and fills a struct: no I/O, no global
 * state, so the unit tests and the fuzz target can feed it anything.
 * Sources are applied from the lowest precedence to the highest
 * (defaults, file, environment, command line): a later valid value
 * replaces an earlier one; an invalid value is a warning and keeps the
 * earlier one.
 */
#ifndef RAMBOOT_CMDLINE_H
#define RAMBOOT_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum boot_mode { BOOT_OFF, BOOT_PREFETCH, BOOT_RAM, BOOT_LAZY, BOOT_CACHE };
enum boot_target { TARGET_TMPFS, TARGET_ZRAM };
enum boot_swap { SWAP_OFF, SWAP_ZRAM };
/* ramboot.verify=: AUTO is "signed" when the initrd holds trusted keys,
 * else the hash of a manifest or ramboot.sha256= when there is one. */
enum boot_verify { VERIFY_AUTO, VERIFY_SIGNED, VERIFY_HASH, VERIFY_OFF };
/* ramboot.source=: where a RAM copy or the lazy copier reads the image. NETWORK is the
 * image itself (NFS/NBD); UDPCAST a multicast session (ramboot serve),
 * with the image as the fallback. */
enum boot_source { SOURCE_NETWORK, SOURCE_UDPCAST };

#define SET_PATH_MAX 1024
#define SET_WARN_MAX 16
#define SET_WARN_LEN 200
/* ramboot.url=: the image and its mirrors, at most this many URLs */
#define SET_URL_MAX 8

/* Where a setting came from (lowest precedence first). */
enum set_source { SRC_DEFAULT, SRC_CONF, SRC_ENV, SRC_CMDLINE };

/* The settings by name, as settings_set() takes them ("" is ramboot=
 * itself); key_src[] and key_val[] of struct boot_settings are indexed
 * the same way. */
#define SET_NKEYS 22
extern const char *const settings_keys[SET_NKEYS];
/* "default", "ramboot.conf", "environment", "command line" */
const char *set_source_name(enum set_source src);

struct boot_settings {
	enum boot_mode mode;
	char image[SET_PATH_MAX];      /* ramboot.image=, "" when unset */
	char ltsp_image[SET_PATH_MAX]; /* ltsp.image= as given (whole list) */
	char decompress[32];           /* "auto", "none", "zstd", ... */
	enum boot_target target;
	uint64_t minfree;              /* bytes; 0 with minfree_set false */
	bool minfree_set;              /* false: the loader's default */
	char sha256[65];               /* "" when unset */
	char manifest[SET_PATH_MAX];   /* "" auto (IMAGE.manifest), "none" */
	enum boot_swap swap;
	char swap_size[128];           /* "" : swap's default */
	char swap_algorithm[128];      /* "" : swap's default */
	int swap_priority;             /* with swap_priority_set */
	bool swap_priority_set;
	/* ramboot.swap.net=SERVER[:PORT][,NAME=VALUE...]: the network memory
	 * tier (docs/netmem.md; checked by swap/netmem.c); "" none */
	char swap_net[256];
	bool debug;
	bool quiet;                    /* the kernel's `quiet` (command line only) */
	double timeout;                /* ramboot.timeout=: stall timeout, s */
	bool profile_record;           /* ramboot.profile=record */
	char profile[SET_PATH_MAX];    /* ramboot.profile=PATH or "none"; "":
					* IMAGE.profile beside the image */
	bool timeout_set;
	enum boot_verify verify;       /* ramboot.verify= */
	/* ramboot.verify= has a value that does not parse: which policy was
	 * meant is unknown, so no copy boots. */
	bool verify_policy_bad;
	/* ramboot.verity=1: the root is mounted through a dm-verity mapping
	 * of the image (manifest verity-root=). verity_bad: the value does
	 * not parse; whether it was asked for is unknown, so it is. */
	bool verity;
	bool verity_bad;
	enum boot_source source;       /* ramboot.source= */
	/* ramboot.cache=: the local-disk cache, LABEL=, UUID=, PARTLABEL=
	 * or a path; "" none */
	char cache[SET_PATH_MAX];
	/* ramboot.cache.offline=AGE: when the server's manifest cannot be
	 * read, the active slot boots if refreshed no longer than this many
	 * seconds ago; 0: never (the default) */
	int64_t cache_offline;
	char udpcast[256];             /* ramboot.udpcast= options, checked */
	/* ramboot.url=URL[,URL...]: the image over HTTP, then its mirrors;
	 * each URL parses (http://, format/http.h). url[] is the list as
	 * given; url_buf the same with NULs for the commas, url_off[i] where
	 * the i-th URL starts in it; nurl 0: none. */
	char url[SET_PATH_MAX];
	char url_buf[SET_PATH_MAX];
	uint16_t url_off[SET_URL_MAX];
	int nurl;
	/* Verification was asked for (ramboot.sha256=, ramboot.manifest=)
	 * with a value that does not parse: a RAM copy must not boot. */
	bool verify_bad;
	/* ramboot.conf exists but could not be read whole: its settings
	 * (verification among them) are unknown. */
	bool conf_bad;

	enum set_source mode_source;   /* for the report and debug log */
	/* Where each setting's value came from, and the value as given
	 * (cut to fit), for `ramboot boot --explain`. */
	enum set_source key_src[SET_NKEYS];
	char key_val[SET_NKEYS][128];
	/* Warnings of the parse, in order; nwarn may exceed SET_WARN_MAX
	 * (the rest were dropped). */
	char warn[SET_WARN_MAX][SET_WARN_LEN];
	int nwarn;
};

/* Built-in defaults. */
void settings_init(struct boot_settings *s);

/* Set one setting by its command-line name without the "ramboot."
 * prefix: "" (the mode itself, ramboot=), "image", "decompress",
 * "target", "minfree", "sha256", "manifest", "swap", "swap.size",
 * "swap.algorithm", "swap.priority", "swap.net", "timeout", "profile", "verify",
 * "verity", "source", "udpcast", "cache", "cache.offline", "url", "debug". val is NULL for a bare
 * switch ("ramboot.debug"). Returns 0, -ENOENT for an unknown key,
 * -EINVAL for a bad value (a warning naming `origin` is added in both
 * cases). */
int settings_set(struct boot_settings *s, const char *key, const char *val,
		 const char *origin, enum set_source src);

/* The kernel command line, split as the kernel does it (lib/cmdline.c
 * next_arg: double quotes group spaces and are removed from the value;
 * "--" ends the kernel's parameters). Takes ramboot=, ramboot.* and
 * ltsp.image=; ignores everything else. */
void settings_parse_cmdline(struct boot_settings *s, const char *cmdline);

/* Environment: an envp-style array ("RAMBOOT_SWAP_SIZE=4G"); NULL ends
 * it. RAMBOOT=mode, RAMBOOT_IMAGE=..., RAMBOOT_SWAP_SIZE=... (the
 * command-line name upper-cased, '.' -> '_'). RAMBOOT_ROOT and
 * RAMBOOT_BIN are not settings and are skipped (in the file too). */
void settings_parse_env(struct boot_settings *s, char *const *envp);

/* /etc/ramboot.conf contents: the same KEY=value names as the
 * environment; shell-like: comments, blank lines, optional "export ",
 * single or double quotes. len bytes; buf need not be NUL-terminated. */
void settings_parse_conf(struct boot_settings *s, const char *buf, size_t len);

/* Split one kernel parameter off *p (NUL-free input string), the kernel
 * way. Copies the parameter name to name and its value to val (quotes
 * removed); *has_val tells "a" from "a=". Returns false at the end. */
bool cmdline_next(const char **p, char *name, size_t nlen, char *val,
		  size_t vlen, bool *has_val);

/* The first comma field of an LTSP image list ("img,opts,,img2,...")
 * into out. 0 or -ENAMETOOLONG / -EINVAL (empty). */
int ltsp_image_first(const char *list, char *out, size_t len);

const char *boot_mode_name(enum boot_mode m);
const char *boot_target_name(enum boot_target t);
const char *boot_verify_name(enum boot_verify v);
const char *boot_source_name(enum boot_source src);
/* The i-th URL of ramboot.url= (0: the image, then its mirrors), NULL
 * past the last. */
const char *settings_url(const struct boot_settings *s, int i);

#endif
