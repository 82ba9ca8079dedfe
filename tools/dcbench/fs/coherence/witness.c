// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * witness.c - a witness of the machine's stalls: a thread that does
 * nothing but sleep a millisecond at a time, at the highest priority it
 * is allowed, and notes every wake-up more than STALL_NS past its due
 * time.  Such a wake-up means the machine ran nothing of ours for that
 * long (on a virtual machine the host can stop every virtual CPU at
 * once), so a change seen late across the same moments waited for the
 * machine, not only for the file system.  The report says how many late
 * changes did; they still count as late.
 *
 * Threads: the witness appends to w->stall under w->lock; the main
 * thread reads them under it.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "fs/coherence/run.h"

#define PERIOD_NS	1000000		/* between two looks at the clock */

static void *witness_main(void *arg)
{
	struct witness *w = arg;
	const struct timespec period = { 0, PERIOD_NS };

	/* a stall of ours must not be mere waiting for a busy CPU */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20);
	while (!atomic_load(&w->stop)) {
		int64_t due = (int64_t)clock_ns() + PERIOD_NS, late;

		nanosleep(&period, NULL);
		late = (int64_t)clock_ns() - due;
		if (late <= STALL_NS)
			continue;
		pthread_mutex_lock(&w->lock);
		if (late > w->longest)
			w->longest = late;
		/* the oldest make way: changes are judged as they end */
		w->stall[w->stalls % MAX_STALLS] = (struct stall){ due, due + late };
		w->stalls++;
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

int coh_witness_start(struct witness *w)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	if (pthread_create(&w->thread, NULL, witness_main, w)) {
		pthread_mutex_destroy(&w->lock);
		return -1;
	}
	w->running = true;
	return 0;
}

void coh_witness_stop(struct witness *w)
{
	if (!w->running)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	w->running = false;
}

bool coh_witness_saw(struct witness *w, int64_t t0, int64_t t1)
{
	bool saw = false;

	if (!w->running)
		return false;
	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < MAX_STALLS && i < w->stalls; i++)
		saw |= w->stall[i].from < t1 && w->stall[i].to > t0;
	pthread_mutex_unlock(&w->lock);
	return saw;
}
