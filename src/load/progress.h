/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Progress display of a load (progress.c). */
#ifndef RAMBOOT_PROGRESS_H
#define RAMBOOT_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "load/load.h"

struct pipe;

struct progress {
	struct pipe *p;
	enum progress_mode mode;
	double start;
	uint64_t total;          /* expected output, 0: unknown */
	uint64_t total_in;       /* the source's size, 0: unknown */
	double last;             /* PROGRESS_CONSOLE: when the last line went */
	unsigned tenths;         /* and the tenths of the source it told */
	pthread_t tid;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

void progress_start(struct progress *pg, struct pipe *p, enum progress_mode mode,
		    uint64_t total, uint64_t total_in);
void progress_stop(struct progress *pg);

#endif
