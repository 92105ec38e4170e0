/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The local-disk image cache (docs/cache.md): a file system on a device
 * the admin names, prepared by cache_init(), holding for each image two
 * slots (A/B) and a state file (format/cstate.h) that says which slot is
 * active. cache_refresh() fills the inactive slot from a new version of
 * the image, reading locally every chunk the active slot already has,
 * verifies it, and only then commits the state: the active slot and the
 * state are never written by a refresh, so a refresh stopped anywhere
 * (a kill, a power cut, ENOSPC, EIO) leaves the old image and the old
 * state, and the next refresh starts over.
 *
 * The layout, in the cache's root:
 *
 *   ramboot-cache             the marker: "ramboot-cache 1\n"
 *   images/NAME/state         the state of image NAME (cstate.h)
 *   images/NAME/a, b          the slots: the raw image, as loop-mounted
 *   images/NAME/a.cindex ...  each slot's chunk index (format/cindex.h)
 *   images/NAME/a.manifest .. each slot's manifest, as read (signed or not)
 *
 * The state names the image (size, SHA-256) and the SHA-256 of the side
 * files of each slot, so that a side file that does not match is seen.
 */
#ifndef RAMBOOT_CACHE_H
#define RAMBOOT_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/cstate.h"

#define CACHE_MARKER        "ramboot-cache"
#define CACHE_MARKER_TEXT   "ramboot-cache 1\n"
#define CACHE_IMAGES        "images"
#define CACHE_STATE         "state"
#define CACHE_LABEL_DEFAULT "ramboot-cache"   /* the file system's label */
#define CACHE_FSTYPE        "ext4"

/* An open cache: its root directory, and what holds it mounted. */
struct cache {
	int root;                 /* the root directory, O_RDONLY */
	int mnt;                  /* the detached mount (fsmount), or -1 */
	int loop;                 /* the loop device over an image file, or -1 */
	char what[PATH_MAX];      /* the path given, for messages */
	char how[32];             /* "directory", "file", "block device" */
};

/*
 * Open the cache at path: a block device or a regular file holding the
 * file system cache_init() made (mounted privately: a detached mount, no
 * mount point, gone with the process even after a kill), or a directory
 * (a cache mounted by someone else, or made by cache_init() in a
 * directory). Mounting needs CAP_SYS_ADMIN. The marker must be there.
 * Without rw the superblock is read-only too when it can be (not while
 * a read-write mount of it is there). 0 or -errno with err; -EBUSY for
 * rw while a read-only mount is there (a slot is the running root).
 */
int cache_open(struct cache *c, const char *path, bool rw, char *err, size_t errlen);
void cache_close(struct cache *c);
/* The file system of a cache ramboot mounted made read-only (its
 * superblock: every mount of it) through the descriptor mnt of the
 * mount's root (cache_refresh_opts.mnt_fd), no path: after a refresh
 * behind the boot, before a slot becomes the running root. No file may
 * be open for writing. what names it in err. 0 or -errno with err. */
int cache_fs_ro(int mnt, const char *what, char *err, size_t errlen);
/* The same, read-only down to the file system (its superblock), for a
 * look that writes nothing on a device that may not be a cache: not
 * even the mount count. Fails (-EBUSY) while the file system is
 * mounted read-write elsewhere. */
int cache_open_ro(struct cache *c, const char *path, char *err, size_t errlen);
/* The same on fd, path's descriptor, already checked (no path is opened
 * again). */
int cache_open_ro_fd(struct cache *c, const char *path, int fd, char *err, size_t errlen);
/* cache_fs_ro() reversed, for a commit on a cache read-only for the
 * session (the scrub's mark): the superblock and the mount mnt
 * read-write. */
int cache_fs_rw(int mnt, const char *what, char *err, size_t errlen);

struct cache_init_opts {
	const char *label;        /* NULL: CACHE_LABEL_DEFAULT */
	bool force;               /* over a file system ramboot did not make */
};
/* Prepare a cache at path (see docs/cache.md, "ramboot cache init"). */
int cache_init(const char *path, const struct cache_init_opts *o, char *err, size_t errlen);

#define CACHE_MIRRORS_MAX 8

struct cache_refresh_opts {
	const char *image;        /* the new image (a file or block device, or
				   * an http:// URL: docs/cache.md, "Over HTTP") */
	const char *manifest;     /* its manifest (a file or a URL), or NULL;
				   * over HTTP, NULL is IMAGE.manifest (else
				   * a mirror's) */
	const char *const *mirrors; /* over HTTP: more URLs of the same image,
				   * at most CACHE_MIRRORS_MAX (--mirror) */
	unsigned n_mirrors;
	int timeout_ms;           /* over HTTP: each wait for the server, 0:
				   * HTTP_TIMEOUT_MS (source/http.h) */
	bool manifest_open;       /* manifest_fd is the manifest, opened early
				   * (behind the boot, before its path may go);
				   * manifest names it in messages */
	int manifest_fd;
	const char *index;        /* its chunk index, or NULL: computed */
	const char *delta;        /* the delta the manifest names, or NULL: the
				   * manifest's name, beside the image */
	bool no_delta;            /* never the delta: the chunks */
	const char *name;         /* the image's name in the cache, NULL: IMAGE's */
	bool signed_only;         /* the manifest must be signed (trust/sign.h) */
	const char *keydir;       /* the trusted keys, NULL: the system's */
	bool force;               /* a corrupt state is started over */
	const char *expect_sha256; /* the image the boot chose (hex), or NULL:
				   * the refresh ends in exactly that image
				   * or fails (a manifest changed or rolled
				   * back since the boot read it) */
	uint64_t expect_size;     /* and its size; 0: not known */
	int *slot_fd;             /* non-NULL: on success, the active slot opened
				   * read-only (through the refresh's own mount,
				   * which it keeps; no path is opened again: a
				   * child behind the boot has no /dev after the
				   * switch of root); else -1 */
	int *mnt_fd;              /* with slot_fd, cache_boot_refresh() only:
				   * the cache's mount (for cache_fs_ro), or -1 */
};

struct cache_refresh_result {
	bool up_to_date;          /* the active slot holds the image already */
	int slot;                 /* the active slot now: 0 (a) or 1 (b) */
	uint64_t generation;
	uint64_t size;
	uint64_t bytes_network;   /* chunks read from the image */
	uint64_t bytes_local;     /* chunks copied from the active slot */
	uint64_t bytes_indexed;   /* read from the image to index it */
	uint64_t bytes_reindexed; /* read from the active slot to index it
				   * again (its index was another chunker's) */
	uint64_t bytes_delta;     /* the delta's bytes (in bytes_network) */
	const char *index_from;   /* "manifest" (named by it, its hash checked),
				   * "file" (--index), "computed", "slot" (built
				   * from the slot a delta wrote); NULL: up to
				   * date before an index was needed */
	/* The manifest's delta: NULL (none, or up to date), "applied", or
	 * "not used" with the reason in delta_why (made from another image,
	 * unreadable, does not decode or verify: the chunks served). */
	const char *delta;
	char delta_why[256];
	uint32_t chunks_network, chunks_local;
	uint32_t chunks_bad;      /* local copies that failed their hash */
	char sha256[65];
	char signed_by[96];       /* "NAME KEYID" with signed_only */
};

/* Refresh the image o->image into the cache c (opened rw). 0 or -errno
 * with err; on failure the state and the active slot are as they were. */
int cache_refresh(struct cache *c, const struct cache_refresh_opts *o,
		  struct cache_refresh_result *r, char *err, size_t errlen);

enum cache_health { CACHE_EMPTY, CACHE_OK, CACHE_CORRUPT };

struct cache_image_status {
	char name[NAME_MAX + 1];
	enum cache_health health;
	char why[256];            /* CACHE_CORRUPT: the reason */
	struct cstate st;         /* CACHE_OK */
	int interrupted;          /* a slot written after the state, or -1 */
};

/* The state of image name in the cache c, checked as a refresh checks
 * it (the state's own check, the active slot's side files). 0, or -errno
 * when the cache cannot be read. */
int cache_image_status(struct cache *c, const char *name, struct cache_image_status *s);

/* The image's name in the cache, the one rule of its key: the image
 * file's name (x86_64.img for /srv/ltsp/images/x86_64.img), whoever
 * refreshes or looks (refresh.c). */
const char *cache_image_name(const char *image);

/* The image's directory: its name checked (one component, not hidden),
 * created when create is set. 0 or -errno with err. */
int cache_image_dir(struct cache *c, const char *name, bool create, int *dirfd, char *err,
		    size_t errlen);

/* ---- at boot (cboot.c; docs/cache.md, "At boot") ---- */

enum cache_look { CACHE_UNUSABLE, CACHE_HIT, CACHE_MISS };

struct cache_look_req {
	const char *spec;         /* ramboot.cache=: LABEL=, UUID=, PARTLABEL=, /dev/... */
	const char *name;         /* the image's name in the cache */
	const char *sha256;       /* the server's image: its SHA-256 (hex);
				   * NULL: the server cannot be reached, an
				   * offline look (offline_age) */
	uint64_t size;            /* and its size; 0: not known */
	int64_t offline_age;      /* offline: the oldest refresh of the active
				   * slot that may boot, in seconds */
};

struct cache_look_res {
	enum cache_look look;
	char device[PATH_MAX];    /* the device spec names */
	int slot;                 /* the active slot, -1: none */
	uint64_t generation;
	char sha256[65];          /* the active slot's image */
	char loop[32];            /* CACHE_HIT: "loop4", a read-only loop
				   * device over the slot, kept after this
				   * process (loopdev_attach_keep) */
	char fstype[32];          /* CACHE_HIT: blkid's type on it */
	char error[512];          /* CACHE_UNUSABLE: why; CACHE_MISS: why the
				   * active slot is not booted, "" when it
				   * holds another image */
	bool slot_bad;            /* the active slot is marked bad (a miss) */
	bool slot_failed;         /* CACHE_UNUSABLE: the active slot failed a
				   * check of its content (its size, no file
				   * system): to be marked bad */
	int64_t age;              /* the active slot's refresh, seconds ago */
	char want_sha256[65];     /* the image looked for (q->sha256), or "" */
	uint64_t want_size;       /* and its size (q->size) */
};

/*
 * Does the cache hold the server's image? Finds the device (nothing but
 * reads on devices that do not match), mounts it read-only down to the
 * superblock (a device that is not a cache is not written to), reads the
 * state of q->name; when its active slot holds the image (the same
 * SHA-256, and size), puts a read-only loop device over the slot, which
 * holds the slot and the cache's detached mount after this process. The
 * outcome in r->look; nothing stays mounted or attached but the loop
 * device of a hit. A slot marked bad is a miss. Offline (q->sha256 NULL),
 * the active slot is a hit when it was refreshed no longer than
 * q->offline_age seconds ago (by this clock; a refresh in its future is
 * refused), else the cache is unusable.
 */
void cache_look(const struct cache_look_req *q, struct cache_look_res *r);

/* Mark slot (0 or 1) of image name bad in its state, committed as a
 * refresh commits it, when it still holds the image sha256 (hex; NULL:
 * whatever it holds). The cache mounted read-write (retried a few
 * seconds while a read-only mount goes); -EBUSY while a refresh of the
 * image runs. 0 or -errno with err. */
int cache_mark_bad(const char *device, const char *name, int slot, const char *sha256,
		   char *err, size_t errlen);

/* The refresh behind a boot: cache_open() of the device (read-write;
 * retried a few seconds while a read-only mount of the look goes),
 * cache_refresh(), cache_close(). 0 or -errno with err. */
int cache_boot_refresh(const char *device, const struct cache_refresh_opts *o,
		       struct cache_refresh_result *r, char *err, size_t errlen);

/* The active slot of image name, open read-only, for a loop device to
 * take over (the switch after a refresh) or a copy to read (ramboot=lazy
 * on a hit): the cache mounted read-only down to its superblock (retried
 * a few seconds while a read-write mount goes), the state read, the slot
 * opened and its size checked against the state; sha256 (hex), when not
 * NULL, must be the active slot's image. The open slot alone holds the
 * detached mount from then on. 0 with *fd and *size, or -errno with err
 * (-ESTALE: the active slot holds another image). */
int cache_slot_open(const char *device, const char *name, const char *sha256, int *fd,
		    uint64_t *size, char *err, size_t errlen);

#endif
