/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * settings.c: the settings of `ramboot boot` (kernel command line,
 * environment, ramboot.conf), what they name (the image, its manifest),
 * the verification they ask for, and the boot's one deadline.
 */
#ifndef RAMBOOT_BOOT_SETTINGS_H
#define RAMBOOT_BOOT_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "boot/cmdline.h"
#include "boot/run.h"
#include "lib/report.h"

void load_settings(struct boot_settings *s, const struct boot_args *a);
/* The root file system mount of the initramfs ($rootmnt). */
const char *root_mount(void);
/* The image to copy into out: 0, -ENOENT (none named) or -errno. */
int resolve_image(const struct boot_settings *s, const struct boot_args *a, char *out,
		  size_t len);
/* The manifest to use (in buf), or NULL for none. */
const char *pick_manifest(const struct boot_settings *s, const char *image, char *buf,
			  size_t len);
/* ramboot.url=: the manifest of the image over HTTP (in buf), or NULL
 * for none (ramboot.manifest=none): the one ramboot.manifest= names (a
 * URL as it is, a path as pick_manifest() takes it), else URL.manifest
 * beside the image. */
const char *url_manifest(const struct boot_settings *s, char *buf, size_t len);
/* The file the manifest's "image" key names beside the image (publish
 * --content-addressed), into image: true when it is there and image now
 * names it; false: image unchanged (none named, or not there: a warning). */
bool follow_image(const struct boot_settings *s, const char *manifest, char *image,
		  size_t len);
/* false after a fallback: the settings cannot tell how to verify a copy. */
bool settings_usable(const struct boot_settings *s, struct boot_report *rep);
/* The verification of this boot into *p; false after a fallback. */
bool verify_plan(const struct boot_settings *s, const char *manifest, struct vplan *p,
		 struct boot_report *rep);
/* The boot's one deadline: started when the boot starts, pushed on by a
 * copy's progress (at: when its data last came, on now_sec()'s clock);
 * boot_deadline() is it on that clock, 0 for none. read_limit(): what is
 * left of it for a step that waits on the network, in seconds (0: no
 * bound). */
void boot_deadline_start(const struct boot_settings *s);
void boot_deadline_progress(const struct boot_settings *s, double at);
double boot_deadline(void);
double read_limit(const struct boot_settings *s);

#endif
