// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The network memory tier (netmem.h): its set-up before zram's disksize,
 * the policy, and the detached process that runs it and keeps the NBD
 * device connected. Its settings are netmem_opts.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/keys.h"
#include "lib/msg.h"
#include "lib/outfile.h"
#include "lib/path.h"
#include "lib/proc.h"
#include "lib/report.h"
#include "lib/sysutil.h"
#include "lib/units.h"
#include "dev/dm.h"
#include "dev/nbd.h"
#include "dev/zram.h"
#include "swap/netmem.h"
#include "swap/swap.h"

/* zram's writeback_limit and bd_stat count these (zram_drv.c: FOUR_K). */
#define ZRAM_UNIT 4096

/* ---- the policy ---- */

const char *netmem_act_name(enum netmem_act a)
{
	static const char *const n[] = { "wait", "writeback", "pause: server not reachable",
					 "pause: image copy running", "pause: I/O stalls" };

	return (unsigned)a < ARRAY_SIZE(n) ? n[a] : "?";
}

void netmem_plan_step(const struct netmem_opts *o, const struct netmem_seen *s,
		      struct netmem_plan *p)
{
	memset(p, 0, sizeof(*p));
	if (!s->link_up) {
		p->act = NM_PAUSE_LINK;
		return;
	}
	if (s->copy_running) {
		p->act = NM_PAUSE_COPY;
		return;
	}
	if (s->psi_io_full10 >= NETMEM_PSI_MAX) {
		p->act = NM_PAUSE_PRESSURE;
		return;
	}
	p->limit = o->rate * o->period / ZRAM_UNIT;
	if (p->limit == 0) {
		p->act = NM_WAIT;
		return;
	}
	p->act = NM_WRITEBACK;
	if (s->idle_by_age) {
		/* The kernel picks the pages untouched for idle_age. */
		snprintf(p->mark_before, sizeof(p->mark_before), "%u", o->idle_age);
		p->writeback = true;
	} else if (s->last_mark < 0) {
		p->mark_after = true;   /* the first mark: nothing is idle yet */
	} else if (s->now - s->last_mark >= o->idle_age) {
		/* Still marked: untouched since the mark, idle_age ago. */
		p->writeback = true;
		p->mark_after = true;
	} else {
		p->act = NM_WAIT;
		p->limit = 0;
	}
}

static bool value_is(const char *text, const char *key, const char *val)
{
	char v[192];   /* swap_net_pid1's why, swap_net_state's error */

	return text && report_text_get(text, key, v, sizeof(v)) == 1 && !strcmp(v, val);
}

bool netmem_copy_running(const char *lazy, const char *report)
{
	char v[64];

	if (lazy && report_text_get(lazy, "state", v, sizeof(v)) == 1 &&
	    strcmp(v, "switched") && strncmp(v, "gave-up", 7))
		return true;
	if (value_is(report, "mode_done", "prefetch") &&
	    (value_is(report, "bytes", "0") || value_is(report, "bytes", "")))
		return true;
	return value_is(report, "cache", "miss") &&
	       !(report_text_get(report, "cache_error", v, sizeof(v)) == 1 && v[0]);
}

/* ---- set-up ---- */

static void state_set(struct netmem_tier *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void state_set(struct netmem_tier *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->state, sizeof(t->state), fmt, ap);
	va_end(ap);
}

static void say_why(const struct netmem_tier *t)
{
	rb_warn("network memory %s: %s; zram alone", t->server, t->state);
}

#define why_not(t, ...) (state_set((t), __VA_ARGS__), say_why(t))

/* Does it pay: little RAM and no local swap disk to page to instead. */
static bool pays(const struct netmem_opts *o, struct netmem_tier *t)
{
	char a[32], b[32];
	uint64_t ram = 0;

	if (o->max_ram && rb_meminfo("MemTotal", &ram) == 0 && ram > o->max_ram) {
		why_not(t, "RAM %s above %s", fmt_size(ram, a, sizeof(a)),
			fmt_size(o->max_ram, b, sizeof(b)));
		return false;
	}
	if (swap_local_present()) {
		why_not(t, "local swap disk");
		return false;
	}
	return true;
}

int netmem_fit(uint64_t export_size, uint64_t asked, uint64_t ram, uint64_t disksize,
	       uint64_t *bytes)
{
	uint64_t cap = ram > UINT64_MAX / NETMEM_RAM_FACTOR ? UINT64_MAX : ram * NETMEM_RAM_FACTOR;
	uint64_t b = asked && asked < export_size ? asked : export_size;
	int rc = 0;

	if (b > cap) {
		b = cap;
		rc = 1;
	}
	b -= b % ZRAM_UNIT;
	*bytes = b;
	if (b < NETMEM_MIN_BYTES)
		return -ERANGE;
	return b > UINT64_MAX - disksize ? -EOVERFLOW : rc;
}

/* Against a fixture root the kernel's steps on the NBD device and the
 * mapping are logged as sysfs writes (rb_sysfs_log), the fixture's NBD
 * device is number 0, and a regular file is its node. A node stands for
 * the step: the device's (device-mapper's control node for a mapping
 * being made) is opened, so that a fault injected there is the kernel's
 * refusal (EBUSY: someone holds the device) or its hang; a fixture
 * without the node takes every step. */
static int fixture_step(const char *what, const char *node, const char *arg, char *err,
			size_t errlen)
{
	char p[PATH_MAX];
	int fd, rc = rb_path(p, sizeof(p), "%s", node);

	if (rc == 0) {
		fd = open(p, O_RDONLY | O_CLOEXEC);
		rc = fd < 0 && errno != ENOENT ? -errno : 0;
		if (fd >= 0)
			(void)close(fd);
	}
	rb_sysfs_log(what, arg, rc);
	return rc < 0 ? rb_errfmt(err, errlen, rc, "%s: %s", arg, strerror(-rc)) : 0;
}

static int mapping_remove(char *err, size_t errlen)
{
	if (rb_root_is_real())
		return dm_remove(NETMEM_DM_NAME, err, errlen);
	return fixture_step("dm_remove", "/dev/mapper/" NETMEM_DM_NAME, NETMEM_DM_NAME, err,
			    errlen);
}

static int nbd_disconnect_dev(int nbd)
{
	char node[32];

	if (rb_root_is_real())
		return nbd_kernel_disconnect(nbd);
	snprintf(node, sizeof(node), "/dev/nbd%d", nbd);
	return fixture_step("nbd_disconnect", node, node, NULL, 0);
}

/* The mapping NETMEM_DM_NAME in sysfs (/sys/block/dm-N/dm/name) and the
 * NBD device under it (its slave nbdM): M; -ENXIO when it has none,
 * -ENOENT when there is no such mapping. */
static int mapping_slave(void)
{
	char p[PATH_MAX], name[128];
	struct dirent *de, *se;
	int nbd = -ENOENT;
	DIR *d, *sd;

	if (rb_path(p, sizeof(p), "/sys/block") < 0 || !(d = opendir(p)))
		return -ENOENT;
	while (nbd == -ENOENT && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "dm-", 3))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%.32s/dm/name", de->d_name);
		if (rb_read_str(p, name, sizeof(name)) < 0 || strcmp(name, NETMEM_DM_NAME))
			continue;
		nbd = -ENXIO;
		snprintf(name, sizeof(name), "/sys/block/%.32s/slaves", de->d_name);
		if (rb_path(p, sizeof(p), "%s", name) < 0 || !(sd = opendir(p)))
			continue;
		while ((se = readdir(sd)) != NULL)
			if (sscanf(se->d_name, "nbd%d", &nbd) == 1)
				break;
		closedir(sd);
	}
	closedir(d);
	return nbd;
}

static int node_dev(const char *node, dev_t *dev)
{
	struct stat st;
	int i;

	/* devtmpfs makes the node as the driver adds the disk */
	for (i = 0; i < 100; i++) {
		if (stat(node, &st) == 0 &&
		    (S_ISBLK(st.st_mode) || (!rb_root_is_real() && S_ISREG(st.st_mode)))) {
			*dev = st.st_rdev;
			return 0;
		}
		nap_ms(20);
	}
	return -ENOENT;
}

static struct nbd_timeouts timeouts(unsigned total)
{
	struct nbd_timeouts t;

	/* A third to find the request lost, the rest to wait for a new
	 * connection: a page on the network waits at most total. */
	t.request = total / 3 < 5 ? 5 : total / 3;
	t.dead_conn = total > t.request ? total - t.request : 1;
	return t;
}

/* The set-up's steps that wait for the server or the kernel run in a
 * child (child_run), in memory shared with the caller: its result in t,
 * and how far it got, so that the caller undoes what a child it gave up
 * on left. */
enum { PREP_SERVER, PREP_NBD, PREP_MAPPING };

struct prep {
	struct child_beat cb;
	const struct netmem_opts *o;
	struct nbd_server s;
	uint64_t disksize;
	double handshake_end;
	pid_t pid;                 /* the child */
	int stage;                 /* PREP_*: the step it began last */
	char note[160];            /* the export cut to the cap */
	struct netmem_tier t;
};

static void prep_child(void *arg)
{
	static const char *const dmcrypt[] = { "-q", "dm-crypt", NULL };
	struct prep *p = arg;
	struct netmem_tier *t = &p->t;
	struct nbd_timeouts to = timeouts(p->o->timeout);
	struct nbd_export ex;
	char err[256], node[PATH_MAX], a[32], b[32];
	uint8_t key[DM_CRYPT_KEY_MAX];
	uint64_t ram = 0;
	dev_t under, dev;
	int rc;

	p->pid = getpid();
	rc = nbd_open(&p->s, to.request, p->handshake_end, &t->sock, &ex, err, sizeof(err));
	if (rc < 0) {
		state_set(t, "%s", err);
		return;
	}
	(void)rb_meminfo("MemTotal", &ram);
	rc = netmem_fit(ex.size, p->o->size, ram, p->disksize, &t->bytes);
	fmt_size(ex.size, a, sizeof(a));
	if (rc < 0) {
		if (rc == -ERANGE)
			state_set(t, "export '%s' of %s: %" PRIu64 " bytes usable, less than 1 MiB",
				  p->s.export, a, t->bytes);
		else
			state_set(t, "export '%s' of %s: zram's disksize would overflow",
				  p->s.export, a);
		goto fail;
	}
	if (rc == 1)
		snprintf(p->note, sizeof(p->note), "export '%s' of %s: using %s of it (%d x RAM)",
			 p->s.export, a, fmt_size(t->bytes, b, sizeof(b)), NETMEM_RAM_FACTOR);
	ex.size = t->bytes;
	p->stage = PREP_NBD;
	if (rb_root_is_real())
		rc = nbd_kernel_connect(t->sock, &ex, &to, &t->nbd, err, sizeof(err));
	else if ((rc = fixture_step("nbd_connect", "/dev/nbd0", "/dev/nbd0", err,
				    sizeof(err))) == 0)
		t->nbd = 0;
	if (rc < 0) {
		state_set(t, "%s", err);
		goto fail;
	}
	if (rb_path(node, sizeof(node), "/dev/nbd%d", t->nbd) < 0 || node_dev(node, &under) < 0) {
		state_set(t, "/dev/nbd%d: no device node", t->nbd);
		goto fail;
	}
	p->stage = PREP_MAPPING;
	if (rb_root_is_real() && dm_has_target("crypt") != 1)
		(void)run_modprobe(dmcrypt);
	/* A key of this boot only: in the kernel's mapping and nowhere else. */
	rc = getrandom(key, sizeof(key), 0) == (ssize_t)sizeof(key) ? 0 : -EIO;
	if (rc < 0)
		snprintf(err, sizeof(err), "getrandom: no key");
	else if (rb_root_is_real())
		rc = dm_crypt_create(NETMEM_DM_NAME, under, t->bytes / 512, key, sizeof(key), &dev,
				     err, sizeof(err));
	else
		rc = fixture_step("dm_create", "/dev/mapper/control", NETMEM_DM_NAME, err,
				  sizeof(err));
	explicit_bzero(key, sizeof(key));
	if (rc < 0) {
		state_set(t, "dm-crypt: %s", err);
		goto fail;
	}
	t->mapped = true;
	snprintf(t->backing, sizeof(t->backing), "/dev/mapper/%s", NETMEM_DM_NAME);
	snprintf(t->state, sizeof(t->state), "connected");
	return;
fail:
	netmem_undo(t);
}

int netmem_prepare(const struct netmem_opts *o, int zram_id, uint64_t disksize,
		   struct netmem_tier *t)
{
	struct nbd_server s;
	struct prep *p;
	char buf[32];
	double now, end;
	int crc, status, ready;
	bool had;

	memset(t, 0, sizeof(*t));
	t->nbd = -1;
	t->sock = -1;
	snprintf(t->state, sizeof(t->state), "off");
	if (!o->server)
		return 0;
	snprintf(t->server, sizeof(t->server), "%s", o->server);
	if (nbd_server_parse(o->server, o->export, &s) < 0) {
		why_not(t, "'%s' is not ADDRESS[:PORT]", o->server);
		return 0;
	}
	snprintf(t->server, sizeof(t->server), "%s", s.name);
	if (zram_get(zram_id, "backing_dev", buf, sizeof(buf)) == -ENOENT) {
		why_not(t, "no zram writeback in this kernel");
		return 0;
	}
	if (!pays(o, t))
		return 0;
	now = now_sec();
	end = now + timeouts(o->timeout).request + NETMEM_KERNEL_S;
	if (end > now + NETMEM_SETUP_S)
		end = now + NETMEM_SETUP_S;
	if (o->deadline > 0 && o->deadline < end)
		end = o->deadline;
	if (end <= now) {
		why_not(t, "no time left before the boot's deadline");
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		why_not(t, "%s", strerror(ENOMEM));
		return 0;
	}
	p->o = o;
	p->s = s;
	p->disksize = disksize;
	p->handshake_end = end - NETMEM_KERNEL_S;
	p->t = *t;
	had = mapping_slave() != -ENOENT;
	crc = child_call(prep_child, p, sizeof(*p), end - now, &status);
	*t = p->t;
	t->sock = -1;           /* the child's: the driver holds its own */
	if (crc != CHILD_DONE) {
		/* What a child given up on got as far as: the mapping (unless
		 * one of that name was there before), the NBD device (the
		 * driver names the process that connected it). */
		t->mapped = t->mapped || (p->stage == PREP_MAPPING && !had);
		if (t->nbd < 0 && p->stage >= PREP_NBD && p->pid > 0 && rb_root_is_real())
			t->nbd = nbd_find_by_pid(p->pid);
		netmem_undo(t);
		if (crc == CHILD_KILLED)
			state_set(t, "set-up given up after %.0f s", end - now);
		else
			state_set(t, "set-up ended without a result");
	}
	ready = t->backing[0] != '\0';
	if (!ready)
		say_why(t);
	else if (p->note[0])
		rb_warn("network memory %s: %s", t->server, p->note);
	free(p);
	return ready;
}

void netmem_undo(struct netmem_tier *t)
{
	char err[256] = "";
	int rc = t->mapped ? mapping_remove(err, sizeof(err)) : 0;

	t->mapped = false;
	t->backing[0] = '\0';
	/* A mapping still there (open) reads and writes what is under it:
	 * that stays connected. */
	if (rc < 0 && rc != -ENXIO)
		rb_warn("network memory: crypt mapping %s; /dev/nbd%d left connected under it", err,
			t->nbd);
	else if (t->nbd >= 0)
		(void)nbd_disconnect_dev(t->nbd);
	t->nbd = -1;
	close_fd(&t->sock);
}

/* ---- the process that runs the policy ---- */

struct runner {
	const struct netmem_opts *o;
	struct nbd_server srv;
	struct netmem_tier *t;
	int zdir;                  /* /sys/block/zramN */
	int rundir;
	int psi;                   /* /proc/pressure/io; -1 */
	int proc;                  /* /proc (O_PATH); -1 */
	int nl;                    /* the driver's notices (nbd_link_watch_open) */
	pthread_mutex_t lock;      /* publish() from both threads */
	atomic_int up;
	atomic_uint reconnects;
	bool by_age;
	double last_mark;
	char pid1[160];            /* swap_net_pid1 (guard_pid1) */
};

/* O_TRUNC: nothing to sysfs and cgroupfs (as for `echo 0 >`); a
 * fixture's plain file then holds the value alone. */
static int at_write(int dir, const char *name, const char *val)
{
	int fd = openat(dir, name, O_WRONLY | O_TRUNC | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, val, strlen(val));
	if (close_checked(fd) < 0 && rc == 0)
		rc = -EIO;
	return rc;
}

static ssize_t at_read(int dir, const char *name, char *buf, size_t len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pread_text(fd, buf, len);
	(void)close(fd);
	return n;
}

/* The cgroup of PID 1 in the v2 hierarchy: the path of the "0::" line of
 * /proc/1/cgroup (a v1 hierarchy has lines of its own before it). */
static int pid1_cgroup(int proc, char *path, size_t len)
{
	char buf[2048], *line, *save = NULL;

	if (at_read(proc, "1/cgroup", buf, sizeof(buf)) < 0)
		return -ENOENT;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::/", 4))
			continue;
		if (strlen(line + 3) >= len)
			return -ENAMETOOLONG;
		snprintf(path, len, "%s", line + 3);
		return 0;
	}
	return -ENOENT;
}

int netmem_pid1_protect(int proc, char *why, size_t whylen)
{
	char cg[1024], rel[1200], v[32];
	int rc;

	rc = pid1_cgroup(proc, cg, sizeof(cg));
	if (rc < 0)
		return rb_errfmt(why, whylen, 0, "%s", rc == -ENOENT ? "no cgroup2 line in "
				 "/proc/1/cgroup" : "init's cgroup: path too long");
	if (!strcmp(cg, "/"))
		return rb_errfmt(why, whylen, 0, "init in the root cgroup");
	/* init's view: /sys/fs/cgroup is mounted in init's root */
	snprintf(rel, sizeof(rel), "1/root/sys/fs/cgroup%s/memory.swap.max", cg);
	rc = (int)at_read(proc, rel, v, sizeof(v));
	if (rc == -ENOENT) {
		snprintf(rel, sizeof(rel), "1/root/sys/fs/cgroup%s/memory.max", cg);
		if (faccessat(proc, rel, F_OK, 0) == 0)
			return rb_errfmt(why, whylen, 0, "no swap accounting in this kernel");
		snprintf(rel, sizeof(rel), "1/root/sys/fs/cgroup%s/cgroup.controllers", cg);
		if (faccessat(proc, rel, F_OK, 0) == 0)
			return rb_errfmt(why, whylen, 0, "no memory controller for %.64s", cg);
		return rb_errfmt(why, whylen, 0, "no cgroup2 at /sys/fs/cgroup%.64s", cg);
	}
	if (rc < 0)
		return rb_errfmt(why, whylen, 0, "%.64s/memory.swap.max: %s", cg, strerror(-rc));
	if (!strcmp(v, "0") || !strcmp(v, "0\n"))
		return 1;
	rc = at_write(proc, rel, "0");
	if (rc < 0)
		return rb_errfmt(why, whylen, 0, "%.64s/memory.swap.max: %s", cg, strerror(-rc));
	return 1;
}

static void publish(struct runner *r, bool stats);

/* Each period (cheap: two small reads when it holds already), since
 * systemd makes init.scope and moves itself there after the switch of
 * root. One line when the answer changes. */
static void guard_pid1(struct runner *r)
{
	char why[128], v[sizeof(r->pid1)];
	bool ok = netmem_pid1_protect(r->proc, why, sizeof(why)) == 1;

	if (ok)
		snprintf(v, sizeof(v), "protected");
	else
		snprintf(v, sizeof(v), "unprotected (%s)", why);
	if (!strcmp(v, r->pid1))
		return;
	if (ok)
		rb_note("network memory: init's memory kept out of swap (memory.swap.max 0)");
	else
		rb_debug("network memory: init's memory may go to the server: %s", why);
	pthread_mutex_lock(&r->lock);
	snprintf(r->pid1, sizeof(r->pid1), "%s", v);
	pthread_mutex_unlock(&r->lock);
}

/* SIGUSR1 from `ramboot swap --off`: no more writebacks, while swapoff
 * reads the pages back; SIGUSR2: writebacks again (swapoff failed). */
static volatile sig_atomic_t paused;

static void on_pause(int sig)
{
	paused = sig == SIGUSR1;
}

/* The link: wait for the driver's notice that it gave the socket up (a
 * request timed out or could not be sent: drivers/block/nbd.c marks the
 * socket dead only then, and takes a new one only for a dead one), then
 * connect again until the driver took a new socket. */
static void *watch(void *arg)
{
	struct runner *r = arg;
	char err[256];

	for (;;) {
		struct nbd_export ex;
		unsigned wait = 1;
		int fd, rc = nbd_link_dead_wait(r->nl, r->t->nbd);

		if (rc < 0 && rc != -ENOBUFS) {
			nap_ms(1000);
			continue;
		}
		atomic_store(&r->up, 0);
		publish(r, true);
		rb_warn("network memory %s: connection lost; reconnecting", r->srv.name);
		for (;;) {
			nap_ms((long)wait * 1000);
			wait = wait < 16 ? wait * 2 : 30;
			rc = nbd_open(&r->srv, timeouts(r->o->timeout).request, 0, &fd, &ex,
				      err, sizeof(err));
			if (rc < 0)
				continue;
			rc = nbd_kernel_reconnect(r->t->nbd, fd, err, sizeof(err));
			(void)close(fd);     /* the driver holds its own reference */
			if (rc == 0)
				break;
		}
		atomic_fetch_add(&r->reconnects, 1);
		atomic_store(&r->up, 1);
		publish(r, true);
		rb_warn("network memory %s: reconnected", r->srv.name);
	}
	return NULL;
}

/* The report's swap_net* keys, amended when one differs from the file:
 * after a change, and after a writer that rewrote the report whole. */
static void publish(struct runner *r, bool stats)
{
	static char rep[REPORT_AMEND_MAX];
	char bd[96], w[24] = "", rd[24] = "", pg[24] = "";
	uint64_t count, reads, writes;
	const char *state = r->t->state;
	struct report_set set[6];
	size_t i, n = 2;
	bool same;

	if (stats)
		pthread_mutex_lock(&r->lock);
	same = at_read(r->rundir, "report", rep, sizeof(rep)) >= 0;

	if (stats && at_read(r->zdir, "bd_stat", bd, sizeof(bd)) >= 0 &&
	    sscanf(bd, "%" SCNu64 " %" SCNu64 " %" SCNu64, &count, &reads, &writes) == 3) {
		snprintf(pg, sizeof(pg), "%" PRIu64, count * ZRAM_UNIT / (uint64_t)getpagesize());
		snprintf(w, sizeof(w), "%" PRIu64, writes * ZRAM_UNIT);
		snprintf(rd, sizeof(rd), "%" PRIu64, reads * ZRAM_UNIT);
		n = 5;
	}
	if (stats)
		state = atomic_load(&r->up) ? "connected" : "lost";
	set[0] = (struct report_set){ RK_SWAP_NET, r->t->server };
	set[1] = (struct report_set){ RK_SWAP_NET_STATE, state };
	set[2] = (struct report_set){ RK_SWAP_NET_BYTES_WRITTEN, w };
	set[3] = (struct report_set){ RK_SWAP_NET_BYTES_READ, rd };
	set[4] = (struct report_set){ RK_SWAP_NET_PAGES, pg };
	if (stats && r->pid1[0])
		set[n++] = (struct report_set){ RK_SWAP_NET_PID1, r->pid1 };
	for (i = 0; same && i < n; i++)
		same = value_is(rep, key_name(set[i].key), set[i].val);
	if (!same)
		(void)report_amend_at(r->rundir, set, n, REPORT_AMEND_CREATE);
	if (stats)
		pthread_mutex_unlock(&r->lock);
}

static void step(struct runner *r)
{
	static char lazy[16384], rep[16384];
	struct netmem_seen s = { .now = now_sec(), .psi_io_full10 = -1 };
	struct netmem_plan p;
	char psi[256], lim[24];
	const char *ps;
	int rc;

	s.link_up = atomic_load(&r->up);
	s.copy_running = netmem_copy_running(
		at_read(r->rundir, "lazy", lazy, sizeof(lazy)) >= 0 ? lazy : NULL,
		at_read(r->rundir, "report", rep, sizeof(rep)) >= 0 ? rep : NULL);
	if (pread_text(r->psi, psi, sizeof(psi)) > 0 && (ps = strstr(psi, "full avg10=")))
		s.psi_io_full10 = strtod(ps + 11, NULL);
	s.idle_by_age = r->by_age;
	s.last_mark = r->last_mark;
	netmem_plan_step(r->o, &s, &p);
	rb_debug("netmem: %s", netmem_act_name(p.act));
	if (p.act != NM_WRITEBACK)
		return;
	if (p.mark_before[0]) {
		rc = at_write(r->zdir, "idle", p.mark_before);
		if (rc == -EINVAL) {
			/* no seconds in idle: "all", and the age by our clock */
			r->by_age = false;
			rb_debug("netmem: idle takes no age; marking all");
			return;
		}
	}
	if (p.writeback) {
		snprintf(lim, sizeof(lim), "%" PRIu64, p.limit);
		(void)at_write(r->zdir, "writeback_limit", lim);
		/* -EIO: the budget is used up (or the link failed) */
		rc = at_write(r->zdir, "writeback", "huge_idle");
		if (rc != -EIO)
			rc = at_write(r->zdir, "writeback", "idle");
		rb_debug("netmem: writeback: %s", rc < 0 ? strerror(-rc) : "done");
	}
	if (p.mark_after && at_write(r->zdir, "idle", "all") == 0)
		r->last_mark = s.now;
}

static void run(const struct netmem_opts *o, struct netmem_tier *t, int zdir, int psi,
		int proc, int rundir)
{
	struct runner r = { .o = o, .t = t, .zdir = zdir, .psi = psi, .proc = proc,
			    .rundir = rundir, .by_age = true, .last_mark = -1 };
	pthread_attr_t at;
	pthread_t th;

	struct sigaction sa;
	sigset_t none;

	atomic_init(&r.up, 1);
	atomic_init(&r.reconnects, 0);
	pthread_mutex_init(&r.lock, NULL);
	/* The signals a parent's guard blocked (TERM ends this process),
	 * and a message to a stderr that is a closed pipe fails with EPIPE
	 * rather than kill it. The threads inherit both. */
	sigemptyset(&none);
	(void)pthread_sigmask(SIG_SETMASK, &none, NULL);
	(void)signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_pause;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGUSR1, &sa, NULL);
	(void)sigaction(SIGUSR2, &sa, NULL);
	close_fd(&t->sock);     /* the driver holds its own reference */
	if (nbd_server_parse(o->server, o->export, &r.srv) < 0 || zdir < 0)
		_exit(1);
	/* The budget of each period is writeback_limit, which counts down
	 * only while enabled. */
	if (at_write(r.zdir, "writeback_limit_enable", "1") < 0)
		rb_warn("network memory: writeback_limit_enable: no budget");
	r.nl = nbd_link_watch_open();
	if (r.nl < 0)
		rb_warn("network memory: no notices of lost links (%s): no reconnection",
			strerror(-r.nl));
	/* A small stack: every page of this process is locked in RAM. */
	else if (pthread_attr_init(&at) != 0 || pthread_attr_setstacksize(&at, 256 * 1024) != 0 ||
	    pthread_create(&th, &at, watch, &r) != 0)
		rb_warn("network memory: no reconnecting thread");
	for (;;) {
		guard_pid1(&r);
		publish(&r, true);
		nap_ms((long)o->period * 1000);
		if (!paused)
			step(&r);
	}
}

/* The record `ramboot swap --off` finds the tier by (NETMEM_RECORD). */
static void record(int dfd, pid_t pid, int zram_id, int nbd)
{
	char buf[256], n[4][24], err[256];
	unsigned long long start = 0;
	struct outfile of;
	size_t len = 0;
	char state;
	int rc;

	(void)proc_start(pid, true, &state, &start);
	snprintf(n[0], sizeof(n[0]), "%d", (int)pid);
	snprintf(n[1], sizeof(n[1]), "%llu", start);
	snprintf(n[2], sizeof(n[2]), "%d", zram_id);
	snprintf(n[3], sizeof(n[3]), "%d", nbd);
	rc = report_kv(buf, sizeof(buf), &len, "pid", n[0]);
	if (rc == 0)
		rc = report_kv(buf, sizeof(buf), &len, "start", n[1]);
	if (rc == 0)
		rc = report_kv(buf, sizeof(buf), &len, "zram", n[2]);
	if (rc == 0)
		rc = report_kv(buf, sizeof(buf), &len, "nbd", n[3]);
	if (rc == 0)
		rc = outfile_openat(&of, dfd, NETMEM_RECORD, 0644, OUTFILE_REPLACE, NULL, err,
				    sizeof(err));
	if (rc == 0)
		rc = outfile_write(&of, buf, len);   /* and committed */
	if (rc < 0)
		rb_warn("network memory: %s/%s: %s; swap --off cannot find the process",
			REPORT_DIR, NETMEM_RECORD, strerror(-rc));
}

int netmem_start(const struct netmem_opts *o, struct netmem_tier *t, int zram_id,
		 const char *rundir)
{
	struct runner r = { .o = o, .t = t };
	char p[PATH_MAX];
	pid_t pid;
	int dfd, zdir = -1, psi = -1, proc = -1;

	if (!o->server)
		return 0;
	(void)report_mkdir(rundir);
	dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (!t->backing[0]) {
		r.rundir = dfd;
		r.zdir = -1;
		publish(&r, false);
		(void)close(dfd);
		return 0;
	}
	/* Opened here: the child may start after the switch of root, when
	 * this /sys and /proc are gone; descriptors stay valid. */
	if (rb_path(p, sizeof(p), "/sys/block/zram%d", zram_id) == 0)
		zdir = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rb_path(p, sizeof(p), "/proc/pressure/io") == 0)
		psi = open(p, O_RDONLY | O_CLOEXEC);
	if (rb_path(p, sizeof(p), "/proc") == 0)
		proc = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		rb_warn("network memory: %s; pages stay in zram", strerror(errno));
	if (pid != 0) {
		/* Pages on the network come back through the child's
		 * reconnects: the OOM killer must never pick it. */
		snprintf(p, sizeof(p), "/proc/%d/oom_score_adj", (int)pid);
		if (pid > 0) {
			(void)rb_write_str(p, "-1000");
			record(dfd, pid, zram_id, t->nbd);
		}
		(void)close(dfd);
		close_fd(&zdir);
		close_fd(&psi);
		close_fd(&proc);
		close_fd(&t->sock);   /* the child's now */
		return pid < 0 ? -EAGAIN : 0;
	}
	if (rb_detach(true) < 0)
		_exit(1);
	rb_set_cmd("netmem");
	/* ... nor wait for its own memory. One malloc arena: a thread's own
	 * would reserve 64 MiB, and be locked whole. */
	(void)mallopt(M_ARENA_MAX, 1);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		rb_warn("network memory: mlockall: %s", strerror(errno));
	run(o, t, zdir, psi, proc, dfd);
	_exit(0);
}

/* ---- the teardown ---- */

int netmem_find(int zram_id, struct netmem_running *n)
{
	char buf[PATH_MAX], v[32];
	int rc;

	memset(n, 0, sizeof(*n));
	n->nbd = -1;
	n->zram = zram_id;
	rc = zram_get(zram_id, "backing_dev", buf, sizeof(buf));
	if (rc == -ENOENT)
		return 0;   /* a kernel without writeback */
	if (rc < 0)
		return rc;
	if (strcmp(buf, "/dev/mapper/" NETMEM_DM_NAME))
		return 0;
	if (rb_read_str(REPORT_DIR "/" NETMEM_RECORD, buf, sizeof(buf)) >= 0 &&
	    report_text_get(buf, "zram", v, sizeof(v)) == 1 && atoi(v) == zram_id) {
		if (report_text_get(buf, "nbd", v, sizeof(v)) == 1 && v[0] >= '0' && v[0] <= '9')
			n->nbd = atoi(v);
		if (report_text_get(buf, "pid", v, sizeof(v)) == 1 && atoi(v) > 1)
			n->pid = (pid_t)atoi(v);
		if (report_text_get(buf, "start", v, sizeof(v)) == 1)
			n->start = strtoull(v, NULL, 10);
		/* a process of that pid now, but not the one recorded */
		if (n->pid && !proc_alive(n->pid, true, n->start))
			n->pid = 0;
	}
	if (n->nbd < 0)
		n->nbd = mapping_slave();
	return 1;
}

bool netmem_lost(void)
{
	static char buf[REPORT_AMEND_MAX];

	return rb_read_str(REPORT_DIR "/report", buf, sizeof(buf)) >= 0 &&
	       value_is(buf, key_name(RK_SWAP_NET_STATE), "lost");
}

int netmem_pause(const struct netmem_running *n, bool pause)
{
	if (!n->pid)
		return -ESRCH;
	return kill(n->pid, pause ? SIGUSR1 : SIGUSR2) < 0 ? -errno : 0;
}

/* Is the recorded process gone (or a zombie nobody reaped yet)? */
static bool gone(const struct netmem_running *n)
{
	if (kill(n->pid, 0) < 0 && errno == ESRCH)
		return true;
	return !proc_alive(n->pid, true, n->start);
}

int netmem_end(const struct netmem_running *n)
{
	static const int sig[] = { SIGTERM, SIGKILL };
	size_t i;
	int t;

	if (!n->pid)
		return 0;
	for (i = 0; i < ARRAY_SIZE(sig); i++) {
		if (kill(n->pid, sig[i]) < 0)
			return errno == ESRCH ? 0 : -errno;
		for (t = 0; t < 100; t++) {
			if (gone(n))
				return 0;
			nap_ms(50);
		}
	}
	return -ETIMEDOUT;
}

int netmem_release(const struct netmem_running *n)
{
	struct report_set set = { RK_SWAP_NET_STATE, "off" };
	char err[256], node[32];
	int rc, first = 0, dfd;
	char p[PATH_MAX];

	rc = mapping_remove(err, sizeof(err));
	snprintf(node, sizeof(node), "/dev/nbd%d", n->nbd);
	if (rc < 0 && rc != -ENXIO) {
		/* A mapping still there is open (or would be): what is under
		 * it stays connected. */
		rb_err("network memory: crypt mapping %s; %s left connected under it", err,
		       n->nbd >= 0 ? node : "its NBD device");
		first = rc;
	} else if (n->nbd < 0) {
		rb_err("network memory: no record of its NBD device (%s/%s): not disconnected",
		       REPORT_DIR, NETMEM_RECORD);
		first = -ENOENT;
	} else {
		rc = nbd_disconnect_dev(n->nbd);
		if (rc < 0) {
			rb_err("network memory: %s: disconnect: %s", node, strerror(-rc));
			first = rc;
		}
	}
	if (rb_path(p, sizeof(p), "%s", REPORT_DIR) == 0 &&
	    (dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if (unlinkat(dfd, NETMEM_RECORD, 0) < 0 && errno != ENOENT)
			rb_warn("network memory: %s/%s: %s", REPORT_DIR, NETMEM_RECORD,
				strerror(errno));
		if (first == 0)
			(void)report_amend_at(dfd, &set, 1, 0);
		(void)close(dfd);
	}
	return first;
}
