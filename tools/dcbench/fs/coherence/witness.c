// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * witness.c - a witness of the machine's stalls: a thread that does
 * nothing but sleep PERIOD_NS at a time, at nice -20 where allowed, and
 * notes every wake-up more than STALL_NS past its due time.  At that
 * priority a wake-up so late means the machine ran none of our threads
 * for that long (on a virtual machine the host can stop every virtual CPU
 * at once), so a change seen late across the same moments waited for the
 * machine, not only for the file system.  The report says how many late
 * changes did; they still count as late.  Without the priority a late
 * wake-up may be a busy CPU, and the report says that too.
 *
 * Threads: the witness alone writes its record until coh_witness_stop
 * joins it; the record is read after that only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "fs/coherence/run.h"

#define PERIOD_NS	5000000		/* between two looks at the clock */

static void note(struct witness *w, int64_t from, int64_t to)
{
	if (w->stalls == w->cap) {
		unsigned cap = w->cap ? 2 * w->cap : 64;
		struct stall *p = realloc(w->stall, cap * sizeof(*p));

		if (!p) {
			w->lost = true;
			return;
		}
		w->stall = p;
		w->cap = cap;
	}
	w->stall[w->stalls++] = (struct stall){ from, to };
	if (to - from > w->longest)
		w->longest = to - from;
}

static void *witness_main(void *arg)
{
	struct witness *w = arg;
	const struct timespec period = { 0, PERIOD_NS };

	pthread_setname_np(pthread_self(), "coh-witness");
	w->raised = setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20) == 0;
	while (!atomic_load(&w->stop)) {
		int64_t slept = (int64_t)clock_ns(), late;

		nanosleep(&period, NULL);
		late = (int64_t)clock_ns() - slept - PERIOD_NS;
		/* the stall began after our last look, at slept at the
		 * earliest, and ended when we woke */
		if (late > STALL_NS)
			note(w, slept, slept + PERIOD_NS + late);
	}
	return NULL;
}

int coh_witness_start(struct witness *w)
{
	memset(w, 0, sizeof(*w));
	if (pthread_create(&w->thread, NULL, witness_main, w))
		return -1;
	w->running = true;
	return 0;
}

void coh_witness_stop(struct witness *w)
{
	if (!w->running)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	w->running = false;
	w->watched = true;
}

bool coh_witness_saw(const struct witness *w, int64_t t0, int64_t t1)
{
	for (unsigned i = 0; i < w->stalls; i++)
		if (w->stall[i].from < t1 && w->stall[i].to > t0)
			return true;
	return false;
}

void coh_witness_free(struct witness *w)
{
	free(w->stall);
	w->stall = NULL;
	w->stalls = w->cap = 0;
}
