/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network memory tier (docs/netmem.md): zram's backing device is a
 * dm-crypt mapping (aes-xts-plain64, a random key made at each set-up,
 * never written anywhere) over an NBD device of ramboot's own client
 * (dev/nbd.h). zram stays the only swap device: pages leave RAM only
 * when the policy below asks zram to write its idle pages back, never in
 * the kernel's reclaim path.
 *
 * What the kernel offers (Documentation/admin-guide/blockdev/zram.rst and
 * drivers/block/zram/zram_drv.c of 6.1), and so what the policy does:
 *  - backing_dev is taken only before disksize (backing_dev_store:
 *    -EBUSY once initialised), and any block device will do;
 *  - idle takes "all", or with CONFIG_ZRAM_MEMORY_TRACKING (5.16 on) a
 *    number of seconds: the pages not accessed for that long. Where the
 *    number is refused (EINVAL), the policy marks "all" and writes back
 *    what is still marked one idle age later: those pages were not
 *    touched since;
 *  - writeback takes "huge_idle" (5.19 on: idle pages that did not
 *    compress, the most RAM back per page written), then "idle"; it
 *    writes synchronously and returns -EIO once writeback_limit is used
 *    up (with writeback_limit_enable), which is the budget's end, not a
 *    failure;
 *  - writeback_limit and the three numbers of bd_stat (bd_count,
 *    bd_reads, bd_writes) count 4 KiB units, whatever the page size.
 */
#ifndef RAMBOOT_NETMEM_H
#define RAMBOOT_NETMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NETMEM_EXPORT "swap"
#define NETMEM_MAX_RAM (2ULL << 30)
#define NETMEM_TIMEOUT 60          /* s: a page on the network waits at most this */
#define NETMEM_PERIOD 10           /* s between two steps of the policy */
#define NETMEM_IDLE_AGE 120        /* s untouched before a page may go */
#define NETMEM_RATE (4ULL << 20)   /* bytes/s written back, at most: the budget */
/* % of time over 10 s that every task stalled on I/O ("full avg10" of
 * /proc/pressure/io): at or above it, pause. Not memory stalls: a
 * writeback frees zram's RAM, which is what a client stalling on memory
 * lacks; a client stalling on I/O waits for the link (its network root,
 * or pages read back from the server) that the writeback would take. */
#define NETMEM_PSI_MAX 10.0
#define NETMEM_DM_NAME "ramboot-netmem"
/* The set-up (handshake, NBD device, crypt mapping) ends within the
 * driver's request timeout and NETMEM_KERNEL_S, at most NETMEM_SETUP_S,
 * or by the caller's deadline when that is nearer; the handshake leaves
 * the kernel's steps NETMEM_KERNEL_S of it. */
#define NETMEM_SETUP_S 30
#define NETMEM_KERNEL_S 5
/* The export is used up to this many times MemTotal. zram allocates a
 * table entry for every 4 KiB of its disksize when disksize is written
 * (zram_meta_alloc: 16 bytes each, 24 with CONFIG_ZRAM_MEMORY_TRACKING),
 * pages on the network included, and a bit for each 4 KiB of the
 * backing device: 4 x RAM costs at most 2.4 % of RAM in tables, where a
 * 1 TiB export would ask a 2 GiB client for 6 GiB. */
#define NETMEM_RAM_FACTOR 4
#define NETMEM_MIN_BYTES (1ULL << 20)

struct netmem_opts {
	const char *server;        /* "HOST[:PORT]"; NULL: no network tier */
	const char *export;        /* NETMEM_EXPORT */
	uint64_t size;             /* bytes of the export used; 0: all of it */
	uint64_t max_ram;          /* used only with MemTotal at most this; 0: any */
	unsigned timeout;          /* NETMEM_TIMEOUT */
	unsigned period;           /* NETMEM_PERIOD */
	unsigned idle_age;         /* NETMEM_IDLE_AGE */
	uint64_t rate;             /* NETMEM_RATE; x period: each period's budget */
	/* The set-up ends by then (CLOCK_MONOTONIC seconds, as now_sec()
	 * gives them; 0: none but NETMEM_SETUP_S): the boot's deadline. */
	double deadline;
	char buf[256];             /* netmem_spec_parse()'s copy of the spec */
};

void netmem_opts_init(struct netmem_opts *o);

/* ramboot.swap.net=SERVER[:PORT][,export=NAME][,size=SIZE][,rate=RATE]
 * [,timeout=S][,period=S][,idle=S][,max-ram=SIZE] into o (server and
 * export point into o->buf). 0 or -EINVAL with the reason in err. */
int netmem_spec_parse(const char *spec, struct netmem_opts *o, char *err, size_t errlen);

/* The tier of one zram device, from netmem_prepare() on. */
struct netmem_tier {
	char server[80];           /* "10.0.2.2:10809"; "" when not asked */
	/* connected | lost | off | why not ("local swap disk", ...) */
	char state[160];
	char backing[64];          /* the crypt mapping's node; "" when none */
	uint64_t bytes;            /* its size */
	int nbd;                   /* /dev/nbdN; -1 */
	int sock;                  /* our descriptor of the driver's socket; -1 */
	bool mapped;               /* the crypt mapping exists */
};

/*
 * Before zram's disksize of /dev/zram<zram_id>: when it pays (MemTotal at most max_ram, no
 * swap partition on a local disk), connect to the server, hand the
 * socket to the NBD driver and map the crypt device over it; t->backing
 * is then zram's backing_dev, of t->bytes (netmem_fit), which the caller
 * may add to disksize (the size it would add them to: no overflow).
 * Otherwise t->state says why not and nothing is left. The steps that
 * wait for the server or the kernel run in a child that is given up on
 * at the bound above, and what it left is undone.
 * Never fails the caller: 1 when the tier is ready, 0 when not (with one
 * warning line, except when not asked at all).
 */
int netmem_prepare(const struct netmem_opts *o, int zram_id, uint64_t disksize,
		   struct netmem_tier *t);

/* The bytes of an export of export_size the tier uses, into *bytes: all
 * of it or asked (0: all) when less, at most NETMEM_RAM_FACTOR x ram, in
 * whole 4 KiB units. 0; 1 when cut to that cap; -ERANGE when that leaves
 * less than NETMEM_MIN_BYTES; -EOVERFLOW when disksize + *bytes does not
 * fit in 64 bits. */
int netmem_fit(uint64_t export_size, uint64_t asked, uint64_t ram, uint64_t disksize,
	       uint64_t *bytes);

/* Undo netmem_prepare() (zram's set-up failed after it). */
void netmem_undo(struct netmem_tier *t);

/* Start the policy for /dev/zram<id> in a detached child that outlives
 * the caller and the switch of root: locked in RAM, out of the OOM
 * killer's reach; it amends the boot report in rundir (created when
 * missing) with the swap_net* keys. With t not ready, only the report's
 * swap_net and swap_net_state are written. 0 or -errno. */
int netmem_start(const struct netmem_opts *o, struct netmem_tier *t, int zram_id,
		 const char *rundir);

/*
 * Init's anonymous memory out of swap, and so never on the server, where
 * a read that fails (a cut longer than the timeout) is SIGBUS, and for
 * PID 1 a kernel panic. cgroup v2 (Documentation/admin-guide/cgroup-v2.rst):
 * memory.swap.max of init's cgroup (the "0::PATH" line of /proc/1/cgroup;
 * systemd's is /init.scope) set to 0, the file read first and written only
 * when it says otherwise. The root cgroup has no memory.swap.max, and
 * neither has a cgroup without the memory controller or a kernel without
 * swap accounting. What it does not cover: pages charged before (the
 * kernel charges a page to the cgroup of the task that made it, and moves
 * no charge with the task), and pages already in swap.
 *
 * proc is a descriptor of /proc (any kind, O_PATH will do), opened before
 * the switch of root; the cgroup file system is reached as init sees it,
 * through 1/root/sys/fs/cgroup, whatever the caller's own root and mounts
 * are by then. 1 protected (memory.swap.max is 0), 0 not, with why in
 * why ("init in the root cgroup", "no cgroup2", ...).
 */
int netmem_pid1_protect(int proc, char *why, size_t whylen);

/* ---- the teardown (ramboot swap --off) ----
 *
 * netmem_start() records the running tier in the run directory (file
 * NETMEM_RECORD: pid=, start= (the process's start time, field 22 of
 * /proc/PID/stat, against a reused pid), zram=, nbd=). The process takes
 * two signals besides the fatal ones: SIGUSR1 stops its writebacks (it
 * still reconnects a lost link: swapoff reads the written-back pages
 * through it), SIGUSR2 starts them again. The order, each step only once
 * the one before let go: pause the policy, swapoff, end the process,
 * reset and hot_remove zram (the caller), remove the crypt mapping,
 * disconnect the NBD device. */
#define NETMEM_RECORD "netmem"

struct netmem_running {
	pid_t pid;                 /* the policy's process; 0 none found */
	unsigned long long start;  /* its start time (against a reused pid) */
	int nbd;                   /* /dev/nbdN under the mapping; -1 unknown */
	int zram;
};

/* Is zram_id's backing device the tier's mapping? 1 (n filled from the
 * record, else from sysfs: the mapping's slave), 0 no, -errno. */
int netmem_find(int zram_id, struct netmem_running *n);

/* Does the report say the tier's link is lost (swap_net_state=lost)? */
bool netmem_lost(void);

/* SIGUSR1 (pause) or SIGUSR2 (resume) to the policy's process. 0,
 * -ESRCH when there is none, or -errno. */
int netmem_pause(const struct netmem_running *n, bool pause);

/* End the policy's process: SIGTERM, then SIGKILL after 5 s; waits
 * until it is gone. 0 (also when there was none) or -errno. */
int netmem_end(const struct netmem_running *n);

/* After zram let go of its backing device: remove the crypt mapping,
 * then disconnect the NBD device (only once the mapping is gone: one
 * still open is someone's), the record, and swap_net_state=off in the
 * report. Each failure is one error line. 0 or the first -errno. */
int netmem_release(const struct netmem_running *n);

/* ---- the policy: a pure function of what one step saw ---- */

enum netmem_act {
	NM_WAIT,             /* nothing this period */
	NM_WRITEBACK,        /* mark, write back, as the plan says */
	NM_PAUSE_LINK,       /* the server is not reachable */
	NM_PAUSE_COPY,       /* an image copy is reading the network */
	NM_PAUSE_PRESSURE,   /* I/O stalls (PSI) */
};

struct netmem_seen {
	double now;                /* monotonic seconds */
	bool link_up;
	bool copy_running;
	double psi_io_full10;      /* "full avg10" of /proc/pressure/io; < 0 unknown */
	bool idle_by_age;          /* the kernel takes seconds in idle */
	double last_mark;          /* when "all" was last marked; < 0 never */
};

struct netmem_plan {
	enum netmem_act act;
	char mark_before[24];      /* written to idle before the writeback; "" none */
	bool writeback;            /* huge_idle, then idle */
	bool mark_after;           /* "all" after the writeback */
	uint64_t limit;            /* writeback_limit, 4 KiB units */
};

void netmem_plan_step(const struct netmem_opts *o, const struct netmem_seen *s,
		      struct netmem_plan *p);

/* Is a copy of the image running, by the files in the run directory
 * (their text, NULL when missing): the lazy copier's status file in a
 * state other than switched or gave-up; the report of a prefetch that
 * has not counted its bytes; a cache refresh not ended (cache=miss
 * without cache_error). */
bool netmem_copy_running(const char *lazy, const char *report);

/* The name of an action, for the debug log. */
const char *netmem_act_name(enum netmem_act a);

#endif
