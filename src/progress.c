// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Progress of a load on stderr: a bar on a terminal, a line every few
 * seconds on a console or a log.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ramboot.h"
#include "pipe.h"
#include "progress.h"

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

static void *progress_main(void *arg)
{
	struct progress *pg = arg;
	bool bar = pg->mode == PROGRESS_BAR;
	double every = bar ? 0.25 : 5.0;

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
		progress_line(pg, bar);
		pthread_mutex_lock(&pg->lock);
	}
	pthread_mutex_unlock(&pg->lock);
	if (bar)
		(void)write_all(STDERR_FILENO, "\n", 1);
	return NULL;
}

void progress_start(struct progress *pg, struct pipe *p, enum progress_mode mode,
			   uint64_t total)
{
	memset(pg, 0, sizeof(*pg));
	pg->p = p;
	pg->start = now_sec();
	pg->total = total;
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

