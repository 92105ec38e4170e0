// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compressed swap on a zram device of its own (swap.h); the command,
 * `ramboot swap`, is swap_cmd.c.
 *
 * The kernel's order (Documentation/admin-guide/blockdev/zram.rst):
 * comp_algorithm, backing_dev and mem_limit are taken only while the
 * device has no disksize; writing disksize allocates the device, after
 * which it is a block device we give a swap header and swapon(2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "format/sizeexpr.h"
#include "swap/swap.h"
#include "swap/swapint.h"
#include "format/swaphdr.h"
#include "lib/path.h"
#include "lib/sysutil.h"
#include "dev/blkdev.h"
#include "dev/zram.h"

/* swappiness above 100 means "swap is cheaper than dropping page cache"
 * (kernel >= 5.8 accepts up to 200); zram swap is. */
#define ZRAM_SWAPPINESS "180"

/* The default size, by its address: the network tier adds its bytes to
 * this one only, never to a size that was asked for. */
static const char swap_default_size[] = DEFAULT_SIZE;

void swap_opts_init(struct swap_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = swap_default_size;
	o->size_name = "--size";
	o->algorithm = DEFAULT_ALGORITHMS;
	o->priority = DEFAULT_PRIORITY;
	o->tune = true;
	o->swappiness = -1;
	o->page_cluster = 0;
}

/* The first error of a set-up is the one reported. */
#define FAIL(r, ...) errbuf_set((r)->error, sizeof((r)->error), __VA_ARGS__)

int swap_flags(int prio)
{
	if (prio < 0)
		return 0;
	return SWAP_FLAG_PREFER | ((prio << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
}

/* ---- the seam: syscalls a fixture root cannot take ----
 * Against a fixture root, swapon appends the line the kernel would show
 * in /proc/swaps, swapoff removes it, and a device's size is its file
 * size (zram: its disksize attribute). Everything else runs as is. */

static int sys_swapon(const char *dev, int prio, uint64_t size, size_t pagesize)
{
	char p[PATH_MAX], line[PATH_MAX + 96], cur[16384];
	ssize_t n;
	int fd, rc;

	if (rb_root_is_real())
		return swapon(dev, swap_flags(prio)) < 0 ? -errno : 0;
	rc = rb_path(p, sizeof(p), "/proc/swaps");
	if (rc < 0)
		return rc;
	/* Without SWAP_FLAG_PREFER the kernel counts down from -2: one
	 * below the areas that already have a priority of its choosing. */
	if (prio < 0) {
		n = rb_read_str("/proc/swaps", cur, sizeof(cur));
		prio = -2 - (n < 0 ? 0 : swaps_text_count_negative(cur));
	}
	/* The kernel shows the usable size: the header page is not swap. */
	snprintf(line, sizeof(line), "%s\tpartition\t%" PRIu64 "\t0\t%d\n", dev,
		 (size / pagesize - 1) * (pagesize / 1024), prio);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
	} else {
		rc = write_all(fd, line, strlen(line));
		if (close_checked(fd) < 0 && rc == 0)
			rc = -EIO;
	}
	rb_sysfs_log("swapon", dev, rc);
	return rc;
}

static int sys_swapoff(const char *dev)
{
	char buf[16384], out[16384], p[PATH_MAX], path[PATH_MAX], *line, *save = NULL;
	size_t o = 0;
	ssize_t n;
	int rc, prio;

	if (rb_root_is_real())
		return swapoff(dev) < 0 ? -errno : 0;
	n = rb_read_str("/proc/swaps", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	out[0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (swaps_parse_line(line, path, sizeof(path), &prio) == 0 && !strcmp(path, dev))
			continue;
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s\n", line);
		if (o >= sizeof(out))
			return -E2BIG;
	}
	rc = rb_path(p, sizeof(p), "/proc/swaps");
	if (rc == 0) {
		int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		rc = write_all(fd, out, o);
		if (close_checked(fd) < 0 && rc == 0)
			rc = -EIO;
	}
	rb_sysfs_log("swapoff", dev, rc);
	return rc;
}

static int dev_size(int fd, int zram_id, uint64_t *size)
{
	struct stat st;

	if (rb_root_is_real())
		return blk_size(fd, size);
	if (zram_id >= 0)
		return zram_disksize(zram_id, size);
	if (fstat(fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* ---- algorithm ---- */

int swap_choose_algorithm(const struct swap_algo_dev *d, const char *list, char *out,
			  size_t len)
{
	char avail[512] = "", name[64];
	const char *t = list;
	int rc = d->read(d->ctx, avail, sizeof(avail));

	if (rc < 0) {
		rb_warn("%s: comp_algorithm: %s; keeping the kernel default", d->name,
			strerror(-rc));
		snprintf(out, len, "unknown");
		return 0;
	}
	while (*t) {
		const char *item = t;
		size_t n = strcspn(t, ",");

		t += n;
		if (*t == ',')
			t++;
		if (n == 0 || n >= sizeof(name) || n >= len)
			continue;
		memcpy(name, item, n);
		name[n] = '\0';
		/* A compressor built as a module (zstd on some kernels) is
		 * listed only once its crypto module is loaded. */
		if (!zram_algo_offered(avail, name)) {
			if (!d->load || d->load(d->ctx, name) < 0)
				continue;
			rc = d->read(d->ctx, avail, sizeof(avail));
			if (rc < 0)
				avail[0] = '\0';
			if (rc < 0 || !zram_algo_offered(avail, name))
				continue;
		}
		snprintf(out, len, "%s", name);
		rc = d->write(d->ctx, name);
		if (rc == 0)
			return 1;
		/* Listed but refused: the kernel could not load the crypto
		 * module (an initrd without zstd.ko). Try the next one. */
		if (rc != -EINVAL && rc != -ENOENT)
			return rc;
		rb_warn("%s: comp_algorithm %s refused (%s), trying the next", d->name, name,
			strerror(-rc));
	}
	if (!zram_algo_current(avail, out, len))
		snprintf(out, len, "unknown");
	rb_warn("%s: none of %s offered (%s); keeping the kernel default %s", d->name, list,
		avail, out);
	return 0;
}

/* The device side of swap_choose_algorithm(): ctx points to the zram id. */
static int zram_algo_read(void *ctx, char *buf, size_t len)
{
	return zram_get(*(const int *)ctx, "comp_algorithm", buf, len);
}

static int zram_algo_write(void *ctx, const char *name)
{
	return zram_set(*(const int *)ctx, "comp_algorithm", name);
}

static int zram_algo_load(void *ctx, const char *name)
{
	const char *const args[] = { "-q", name, NULL };

	(void)ctx;
	return run_modprobe(args);
}

/* ---- sizes ---- */

static int eval_size(const char *opt, const char *expr, uint64_t *out, struct swap_result *r)
{
	struct sizeexpr_error e;
	uint64_t ram;
	int rc = rb_meminfo("MemTotal", &ram);

	if (rc < 0) {
		FAIL(r, "MemTotal from /proc/meminfo: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	rc = sizeexpr_eval(expr, ram, out, &e);
	if (rc == 0 && e.old_column && !strcmp(e.old, expr))
		rb_warn("%s=%s: deprecated spelling, write %s=%s", opt, expr, opt, e.canon);
	else if (rc == 0 && e.old_column)
		rb_warn("%s='%s': %s at column %d is a deprecated spelling, write %s", opt, expr,
			e.old, e.old_column, e.canon);
	if (rc == 0)
		return RB_EXIT_OK;
	if (e.name[0])
		FAIL(r, "%s: '%s': %s '%s' at column %d", opt, expr, e.what, e.name, e.column);
	else
		FAIL(r, "%s: '%s': %s at column %d", opt, expr, e.what, e.column);
	return RB_EXIT_USAGE;
}

/* ---- tuning ---- */

static void tune_write(const char *path, const char *name, const char *val)
{
	int rc = rb_sysfs_write(path, val);

	if (rc < 0)
		rb_warn("%s = %s: %s", name, val, strerror(-rc));
	else
		rb_info("%s = %s", name, val);
}

static void swap_tune(const struct swap_opts *o)
{
	char buf[16];
	int rc;

	if (o->swappiness >= 0) {
		snprintf(buf, sizeof(buf), "%d", o->swappiness);
		tune_write("/proc/sys/vm/swappiness", "vm.swappiness", buf);
	} else {
		/* Kernels before 5.8 cap swappiness at 100 and say EINVAL. */
		rc = rb_sysfs_write("/proc/sys/vm/swappiness", ZRAM_SWAPPINESS);
		if (rc == -EINVAL)
			tune_write("/proc/sys/vm/swappiness", "vm.swappiness", "100");
		else if (rc < 0)
			rb_warn("vm.swappiness = %s: %s", ZRAM_SWAPPINESS, strerror(-rc));
		else
			rb_info("vm.swappiness = %s", ZRAM_SWAPPINESS);
	}
	if (o->page_cluster >= 0) {
		/* Read-ahead of 2^page-cluster pages pays on disks, not on
		 * zram, where every page is decompressed on its own. */
		snprintf(buf, sizeof(buf), "%d", o->page_cluster);
		tune_write("/proc/sys/vm/page-cluster", "vm.page-cluster", buf);
	}
	if (!o->keep_zswap) {
		char p[PATH_MAX];
		struct stat st;

		/* zswap in front of zram compresses every page twice. */
		if (rb_path(p, sizeof(p), "/sys/module/zswap/parameters/enabled") == 0 &&
		    stat(p, &st) == 0)
			tune_write("/sys/module/zswap/parameters/enabled", "zswap.enabled", "N");
	}
}

/* ---- local swap partitions ---- */

static bool local_candidate(const char *name)
{
	static const char *const skip[] = { "zram", "loop", "ram", "sr", "fd", "nbd" };
	size_t i;

	if (name[0] == '.')
		return false;
	for (i = 0; i < ARRAY_SIZE(skip); i++)
		if (!strncmp(name, skip[i], strlen(skip[i])))
			return false;
	return true;
}

/* The local swap partitions: counted, and with enable swapped on. The
 * number found, or -errno. */
static int scan_local_swap(bool enable, int prio, size_t pagesize)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = rb_path(p, sizeof(p), "/sys/class/block"), found = 0;

	if (rc < 0)
		return rc;
	d = opendir(p);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		char dev[PATH_MAX], node[PATH_MAX], type[32];
		uint64_t size = 0;
		bool swap;
		int fd;

		if (!local_candidate(de->d_name))
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		if (rb_path(node, sizeof(node), "%s", dev) < 0)
			continue;
		fd = open(node, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* TYPE=swap only: a hibernation image is TYPE=swsuspend, and
		 * activating it as swap would destroy it. */
		swap = blkid_fstype_fd(fd, type, sizeof(type)) == 0 && !strcmp(type, "swap");
		if (swap && dev_size(fd, -1, &size) < 0)
			size = 0;
		(void)close_checked(fd);
		if (!swap)
			continue;
		found++;
		if (!enable)
			continue;
		if (swaps_find(dev, NULL) == 1) {
			rb_info("%s: local swap already active", dev);
			continue;
		}
		rc = sys_swapon(dev, prio, size, pagesize);
		if (rc < 0)
			rb_warn("%s: swapon: %s", dev, strerror(-rc));
		else if (prio >= 0)
			rb_info("%s: local swap, priority %d", dev, prio);
		else
			rb_info("%s: local swap, kernel-assigned priority", dev);
	}
	closedir(d);
	if (!found && enable)
		rb_info("no local swap partitions");
	return found;
}

static int enable_local_swap(int prio, size_t pagesize)
{
	int rc = scan_local_swap(true, prio, pagesize);

	return rc < 0 ? rc : 0;
}

bool swap_local_present(void)
{
	return scan_local_swap(false, 0, 0) > 0;
}

/* ---- setup ---- */

static int open_node(const char *dev, int flags)
{
	char p[PATH_MAX];
	int fd = -1, tries, rc = rb_path(p, sizeof(p), "%s", dev);

	if (rc < 0)
		return rc;
	/* devtmpfs creates the node as the device is added; a /dev kept by
	 * udev alone may lag behind hot_add a little. */
	for (tries = 0; tries < 50; tries++) {
		fd = open(p, flags | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		nap_ms(20);
	}
	return fd < 0 ? -errno : fd;
}

/* The options that need no device: priority, sizes. RB_EXIT_OK, or
 * RB_EXIT_USAGE / RB_EXIT_FAIL with r->error set. */
static int swap_check(const struct swap_opts *o, size_t pagesize, uint64_t *size,
		      uint64_t *mem_limit, struct swap_result *r)
{
	int ex;

	if (o->priority < SWAP_PRIO_KERNEL || o->priority > SWAP_FLAG_PRIO_MASK) {
		FAIL(r, "--priority: %d: not in %d..%d", o->priority, SWAP_PRIO_KERNEL,
		     SWAP_FLAG_PRIO_MASK);
		return RB_EXIT_USAGE;
	}
	ex = eval_size(o->size_name, o->size, size, r);
	if (ex != RB_EXIT_OK)
		return ex;
	*size -= *size % pagesize;
	if (*size / pagesize < SWAPHDR_MIN_PAGES) {
		FAIL(r, "--size: '%s' is %" PRIu64 " bytes, below the %zu KiB a swap area needs",
		     o->size, *size, SWAPHDR_MIN_PAGES * pagesize / 1024);
		return RB_EXIT_USAGE;
	}
	if (o->mem_limit)
		return eval_size("--mem-limit", o->mem_limit, mem_limit, r);
	return RB_EXIT_OK;
}

/* The attributes in the kernel's order: comp_algorithm, backing_dev and
 * mem_limit while the device has no disksize, then disksize. 0, or -1
 * with r->error set. */
static int swap_configure(int id, const char *zdir, const struct swap_opts *o, uint64_t *size,
			  uint64_t mem_limit, struct swap_result *r)
{
	struct swap_algo_dev algo_dev = {
		.read = zram_algo_read,
		.write = zram_algo_write,
		/* modprobe only where the modules are the running kernel's */
		.load = rb_root_is_real() ? zram_algo_load : NULL,
		.ctx = &id,
		.name = zdir,
	};
	char buf[32];
	int rc;

	rc = swap_choose_algorithm(&algo_dev, o->algorithm, r->algorithm, sizeof(r->algorithm));
	if (rc < 0) {
		FAIL(r, "%s: comp_algorithm %s: %s", zdir, r->algorithm, strerror(-rc));
		return -1;
	}
	/* The pages on the network still count in disksize, which grows by
	 * the tier's bytes unless a size was asked for (netmem_prepare
	 * checks that the sum fits). */
	if (o->net && netmem_prepare(o->net, id, o->size == swap_default_size ? *size : 0,
				     &r->net) == 1) {
		rc = zram_set(id, "backing_dev", r->net.backing);
		if (rc < 0) {
			netmem_undo(&r->net);
			snprintf(r->net.state, sizeof(r->net.state), "backing_dev: %s",
				 strerror(-rc));
			rb_warn("%s: backing_dev %s: %s; zram alone", zdir, NETMEM_DM_NAME,
				strerror(-rc));
		} else if (o->size == swap_default_size) {
			*size += r->net.bytes;
		}
	}
	if (o->writeback) {
		/* backing_dev exists only with CONFIG_ZRAM_WRITEBACK. */
		if (zram_get(id, "backing_dev", buf, sizeof(buf)) == -ENOENT) {
			rb_warn("%s: no backing_dev (kernel without zram writeback): "
				"--writeback ignored", zdir);
		} else {
			rc = zram_set(id, "backing_dev", o->writeback);
			if (rc < 0) {
				FAIL(r, "%s: backing_dev %s: %s", zdir, o->writeback, strerror(-rc));
				return -1;
			}
		}
	}
	if (o->mem_limit) {
		snprintf(buf, sizeof(buf), "%" PRIu64, mem_limit);
		rc = zram_set(id, "mem_limit", buf);
		if (rc < 0) {
			FAIL(r, "%s: mem_limit %s: %s", zdir, buf, strerror(-rc));
			return -1;
		}
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, *size);
	rc = zram_set(id, "disksize", buf);
	if (rc < 0) {
		FAIL(r, "%s: disksize %s: %s", zdir, buf, strerror(-rc));
		return -1;
	}
	return 0;
}

/* A swap header on the device, swapon(2), and the priority /proc/swaps
 * shows checked. 0, or -1 with r->error set (*swapped_on: swapoff it). */
static int swap_activate(int id, const struct swap_opts *o, uint64_t size, size_t pagesize,
			 bool *swapped_on, struct swap_result *r)
{
	uint64_t devsize = 0;
	uint8_t uuid[16];
	int fd, rc, prio = -1;

	/* O_EXCL on a block device claims it: fails with EBUSY if it is
	 * mounted or already swap. */
	fd = open_node(r->device, O_RDWR | (rb_root_is_real() ? O_EXCL : 0));
	if (fd < 0) {
		FAIL(r, "%s: open: %s", r->device, strerror(-fd));
		return -1;
	}
	rc = dev_size(fd, id, &devsize);
	if (rc == 0 && devsize < size)
		rc = -ENOSPC;
	if (rc == 0)
		rc = swaphdr_uuid_random(uuid);
	if (rc == 0)
		rc = swaphdr_write(fd, pagesize, size, uuid, SWAPHDR_LABEL);
	if (close_checked(fd) < 0 && rc == 0)
		rc = -EIO;
	if (rc < 0) {
		FAIL(r, "%s: swap header: %s", r->device, strerror(-rc));
		return -1;
	}
	rc = sys_swapon(r->device, o->priority, size, pagesize);
	if (rc < 0) {
		FAIL(r, "%s: swapon: %s", r->device, strerror(-rc));
		return -1;
	}
	*swapped_on = true;
	/* Without a priority of ours the kernel picks a negative one. */
	rc = swaps_find(r->device, &prio);
	if (rc != 1 || (o->priority >= 0 ? prio != o->priority : prio >= 0)) {
		if (rc < 0)
			FAIL(r, "%s: /proc/swaps: %s", r->device, strerror(-rc));
		else if (rc == 0)
			FAIL(r, "%s: swapon succeeded but /proc/swaps does not list it", r->device);
		else if (o->priority >= 0)
			FAIL(r, "%s: /proc/swaps shows priority %d, not %d", r->device, prio,
			     o->priority);
		else
			FAIL(r, "%s: /proc/swaps shows priority %d, not one the kernel assigns",
			     r->device, prio);
		return -1;
	}
	r->priority = prio;
	return 0;
}

int swap_setup(const struct swap_opts *o, struct swap_result *r)
{
	char zdir[64];
	uint64_t size, mem_limit = 0;
	size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
	bool swapped_on = false;
	int id = -1, rc, ex;

	memset(r, 0, sizeof(*r));
	r->priority = o->priority;
	r->zram_id = -1;
	r->net.nbd = -1;
	r->net.sock = -1;
	ex = swap_check(o, pagesize, &size, &mem_limit, r);
	if (ex != RB_EXIT_OK)
		return ex;

	rc = zram_ensure_module();
	if (rc < 0) {
		FAIL(r, "zram: module not available: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	rc = zram_hot_add(&id);
	if (rc < 0) {
		FAIL(r, "zram: hot_add: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	snprintf(r->device, sizeof(r->device), "/dev/zram%d", id);
	snprintf(zdir, sizeof(zdir), "zram%d", id);
	r->zram_id = id;

	/* hot_add hands out a fresh device; still, one that has a disksize
	 * or is an active swap area belongs to someone else: leave it. */
	rc = zram_is_initialised(id);
	if (rc != 0 || swaps_find(r->device, NULL) == 1) {
		if (rc < 0)
			FAIL(r, "%s: disksize: %s", zdir, strerror(-rc));
		else
			FAIL(r, "%s: already initialised or in use: not touching it", zdir);
		return RB_EXIT_FAIL;
	}
	if (swap_configure(id, zdir, o, &size, mem_limit, r) < 0 ||
	    swap_activate(id, o, size, pagesize, &swapped_on, r) < 0)
		goto fail;
	r->size = size;

	if (o->tune)
		swap_tune(o);
	if (o->local_swap) {
		int lp = o->priority >= LOCAL_PRIO_GAP ? o->priority - LOCAL_PRIO_GAP :
			 SWAP_PRIO_KERNEL;

		rc = enable_local_swap(lp, pagesize);
		if (rc < 0)
			rb_warn("local swap: /sys/class/block: %s", strerror(-rc));
	}
	return RB_EXIT_OK;

fail:
	if (swapped_on)
		(void)sys_swapoff(r->device);
	rc = zram_hot_remove(id);
	if (rc < 0)
		rb_warn("%s: hot_remove: %s", zdir, strerror(-rc));
	r->zram_id = -1;
	netmem_undo(&r->net);   /* after zram let go of it */
	return RB_EXIT_FAIL;
}

int swap_release(const char *device, bool force, char *error, size_t len)
{
	char label[SWAPHDR_LABEL_MAX + 1] = "", dev[64];
	size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t uuid[16];
	struct netmem_running net;
	int id = zram_id_from_path(device), fd, rc, active, tier, ex = RB_EXIT_OK;

	error[0] = '\0';
	if (id < 0) {
		errbuf_set(error, len, "--off: '%s': not a zram device", device);
		return RB_EXIT_USAGE;
	}
	snprintf(dev, sizeof(dev), "/dev/zram%d", id);
	fd = open_node(dev, O_RDONLY);
	if (fd < 0) {
		errbuf_set(error, len, "%s: %s", dev, strerror(-fd));
		return RB_EXIT_FAIL;
	}
	rc = swaphdr_read(fd, pagesize, label, uuid);
	(void)close_checked(fd);
	if (!force && (rc < 0 || strcmp(label, SWAPHDR_LABEL))) {
		if (rc < 0)
			errbuf_set(error, len, "%s: no swap signature: not set up by ramboot "
				   "swap (--force to release it anyway)", dev);
		else
			errbuf_set(error, len, "%s: swap label is '%s', not '%s': not set up "
				   "by ramboot swap (--force to release it anyway)", dev, label,
				   SWAPHDR_LABEL);
		return RB_EXIT_FAIL;
	}
	/* The network tier: its policy paused (no writeback while swapoff
	 * reads the pages back through its link, which it still
	 * reconnects), then ended once zram holds no page on the server. */
	tier = netmem_find(id, &net);
	if (tier < 0)
		rb_warn("%s: backing_dev: %s", dev, strerror(-tier));
	/* Since Linux 5.19 swapoff does not fail on a page it cannot read
	 * back (unuse_pte): it leaves an error entry, and the process that
	 * owned the page gets SIGBUS when it touches it. */
	if (tier == 1 && !force && netmem_lost()) {
		errbuf_set(error, len, "%s: the network tier's link is lost (swap_net_state=lost): "
			   "swapoff would drop the pages on the server, and their processes die "
			   "when they touch them; wait for connected, or --force", dev);
		return RB_EXIT_FAIL;
	}
	if (tier == 1) {
		rc = netmem_pause(&net, true);
		if (rc < 0)
			rb_warn("%s: network memory: no policy process to pause (%s); going on", dev,
				rc == -ESRCH ? "none recorded alive" : strerror(-rc));
	}
	active = swaps_find(dev, NULL);
	if (active == 1) {
		rc = sys_swapoff(dev);
		if (rc < 0) {
			if (tier == 1) {
				(void)netmem_pause(&net, false);   /* writebacks again */
				errbuf_set(error, len, "%s: swapoff: %s; the network tier stays as it was",
					   dev, strerror(-rc));
			} else {
				errbuf_set(error, len, "%s: swapoff: %s", dev, strerror(-rc));
			}
			return RB_EXIT_FAIL;
		}
	}
	if (tier == 1) {
		rc = netmem_end(&net);
		if (rc < 0) {
			rb_err("%s: network memory: policy process %d: %s", dev, (int)net.pid,
			       strerror(-rc));
			ex = RB_EXIT_FAIL;
		}
	}
	rc = zram_reset(id);
	if (rc < 0) {
		if (tier == 1)
			errbuf_set(error, len, "zram%d: reset: %s; its network tier stays under it "
				   "(mapping " NETMEM_DM_NAME ")", id, strerror(-rc));
		else
			errbuf_set(error, len, "zram%d: reset: %s", id, strerror(-rc));
		return RB_EXIT_FAIL;
	}
	rc = zram_hot_remove(id);
	if (rc < 0) {
		/* reset let go of the backing device: the tier can go all the same */
		rb_err("zram%d: hot_remove: %s", id, strerror(-rc));
		ex = RB_EXIT_FAIL;
	}
	if (tier == 1 && netmem_release(&net) < 0)
		ex = RB_EXIT_FAIL;
	return ex;
}
