// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Progress of a load on stderr: a bar on a terminal, a line every few
 * seconds on a console or a log, a line each tenth of the copy on the
 * console of a boot.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/base.h"
#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/msg.h"
#include "lib/units.h"
#include "codec/pipe.h"
#include "load/progress.h"

static void progress_line(struct progress *pg, bool bar)
{
	struct pipe_stats st;
	double t = now_sec() - pg->start, mibs;
	char line[160], a[32];

	pipe_stats(pg->p, &st);
	mibs = t > 0 ? (double)st.bytes_out / MiB / t : 0;
	if (bar && pg->total) {
		double f = (double)st.bytes_out / (double)pg->total;
		int w = 30, i, fill = (int)(f * w);
		char b[32];
		double eta = mibs > 0 ? ((double)pg->total - (double)st.bytes_out) / MiB / mibs : 0;

		if (fill > w)
			fill = w;
		for (i = 0; i < w; i++)
			b[i] = i < fill ? '#' : '-';
		b[w] = '\0';
		snprintf(line, sizeof(line), "\rramboot: [%s] %3.0f%% %s %.0f MiB/s ETA %.0fs ",
			 b, f > 1 ? 100.0 : f * 100, fmt_size(st.bytes_out, a, sizeof(a)), mibs,
			 eta < 0 ? 0 : eta);
	} else {
		snprintf(line, sizeof(line), "%sramboot: load: %s written, %.0f MiB/s%s",
			 bar ? "\r" : "", fmt_size(st.bytes_out, a, sizeof(a)), mibs, bar ? " " : "\n");
	}
	(void)write_all(STDERR_FILENO, line, strlen(line));
}

/*
 * PROGRESS_CONSOLE: a serial console keeps every line, and a bar's
 * carriage returns turn into lines there. One plain line each time the
 * copy passes another tenth of the source, at most one every
 * CONSOLE_MIN_S: nine lines at most, fewer on a fast copy. The source's
 * bytes are exact whatever the codec; without its size, the output
 * against its estimate; without either, what was copied, every
 * CONSOLE_NOSIZE_S.
 */
#define CONSOLE_MIN_S 3.0
#define CONSOLE_NOSIZE_S 10.0

static void progress_console(struct progress *pg)
{
	struct pipe_stats st;
	double t = now_sec();
	uint64_t done, total;
	unsigned tenths;
	char a[32], b[32];

	pipe_stats(pg->p, &st);
	done = pg->total_in ? st.bytes_in : st.bytes_out;
	total = pg->total_in ? pg->total_in : pg->total;
	if (t - pg->last < (total ? CONSOLE_MIN_S : CONSOLE_NOSIZE_S))
		return;
	if (!total) {
		pg->last = t;
		rb_info("%s copied", fmt_size(done, a, sizeof(a)));
		return;
	}
	tenths = done >= total ? 10 : (unsigned)((double)done / (double)total * 10);
	/* The end is the caller's to tell (verified, or not). */
	if (tenths <= pg->tenths || tenths >= 10)
		return;
	pg->tenths = tenths;
	pg->last = t;
	rb_info("%u %% copied (%s of %s)", tenths * 10, fmt_size(done, a, sizeof(a)),
		fmt_size(total, b, sizeof(b)));
}

static void *progress_main(void *arg)
{
	struct progress *pg = arg;
	bool bar = pg->mode == PROGRESS_BAR, console = pg->mode == PROGRESS_CONSOLE;
	double every = bar ? 0.25 : console ? 1.0 : 5.0;

	pthread_mutex_lock(&pg->lock);
	while (!pg->stop) {
		struct timespec ts;
		double when;

		clock_gettime(CLOCK_REALTIME, &ts);
		when = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + every;
		ts.tv_sec = (time_t)when;
		ts.tv_nsec = (long)((when - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&pg->cond, &pg->lock, &ts);
		if (pg->stop)
			break;
		pthread_mutex_unlock(&pg->lock);
		if (console)
			progress_console(pg);
		else
			progress_line(pg, bar);
		pthread_mutex_lock(&pg->lock);
	}
	pthread_mutex_unlock(&pg->lock);
	if (bar)
		(void)write_all(STDERR_FILENO, "\n", 1);
	return NULL;
}

void progress_start(struct progress *pg, struct pipe *p, enum progress_mode mode,
			   uint64_t total, uint64_t total_in)
{
	memset(pg, 0, sizeof(*pg));
	pg->p = p;
	pg->start = pg->last = now_sec();
	pg->total = total;
	pg->total_in = total_in;
	if (mode == PROGRESS_AUTO)
		mode = isatty(STDERR_FILENO) ? PROGRESS_BAR : PROGRESS_PLAIN;
	pg->mode = mode;
	if (mode == PROGRESS_NONE)
		return;
	pthread_mutex_init(&pg->lock, NULL);
	pthread_cond_init(&pg->cond, NULL);
	pg->started = pthread_create(&pg->tid, NULL, progress_main, pg) == 0;
}

void progress_stop(struct progress *pg)
{
	if (!pg->started)
		return;
	pthread_mutex_lock(&pg->lock);
	pg->stop = true;
	pthread_cond_signal(&pg->cond);
	pthread_mutex_unlock(&pg->lock);
	pthread_join(pg->tid, NULL);
	pthread_cond_destroy(&pg->cond);
	pthread_mutex_destroy(&pg->lock);
}

