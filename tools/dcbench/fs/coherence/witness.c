// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * witness.c - a witness of the CPUs' stalls: on each CPU dcbench may run
 * on, a thread pinned there that does nothing but sleep PERIOD_NS at a
 * time, at nice -20 where allowed, and notes every wake-up more than
 * STALL_NS past its due time.  At that priority a wake-up so late means
 * that CPU ran none of our threads for that long.  On a virtual machine
 * the host stops a virtual CPU at times, one alone or all at once, and a
 * thread that happens to run on it (a daemon's worker, a reader) stops
 * with it; a witness on one CPU would not see the others' stops.  So a
 * change seen late across such a moment may have waited for the machine,
 * not only for the file system.  The report says how many late changes
 * did; they still count as late.  Without the priority a late wake-up may
 * be a busy CPU, and without the pinning a thread moved elsewhere, and
 * the report says that too.
 *
 * Threads: the witnesses append to the record under w->lock until
 * coh_witness_stop joins them; it is read after that only.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "fs/coherence/run.h"

#define PERIOD_NS	5000000		/* between two looks at the clock */

struct wthread {
	pthread_t thread;
	struct witness *w;
	int cpu;			/* pinned to it; -1: not pinned */
	bool raised;			/* at nice -20 */
};

static void note(struct witness *w, int cpu, int64_t from, int64_t to)
{
	pthread_mutex_lock(&w->lock);
	if (w->stalls == w->cap) {
		unsigned cap = w->cap ? 2 * w->cap : 64;
		struct stall *p = realloc(w->stall, cap * sizeof(*p));

		if (!p) {
			w->lost = true;
			pthread_mutex_unlock(&w->lock);
			return;
		}
		w->stall = p;
		w->cap = cap;
	}
	w->stall[w->stalls++] = (struct stall){ from, to, cpu };
	if (to - from > w->longest)
		w->longest = to - from;
	pthread_mutex_unlock(&w->lock);
}

static void *witness_main(void *arg)
{
	struct wthread *t = arg;
	struct witness *w = t->w;
	const struct timespec period = { 0, PERIOD_NS };
	cpu_set_t one;

	pthread_setname_np(pthread_self(), "coh-witness");
	CPU_ZERO(&one);
	CPU_SET(t->cpu, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one))
		t->cpu = -1;
	t->raised = setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20) == 0;
	while (!atomic_load(&w->stop)) {
		int64_t slept = (int64_t)clock_ns(), late;

		nanosleep(&period, NULL);
		late = (int64_t)clock_ns() - slept - PERIOD_NS;
		/* the stall began after our last look, at slept at the
		 * earliest, and ended when we woke */
		if (late > STALL_NS)
			note(w, t->cpu, slept, slept + PERIOD_NS + late);
	}
	return NULL;
}

/* One witness per CPU of this process's affinity; none started: -1. */
int coh_witness_start(struct witness *w)
{
	cpu_set_t cpus;

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
		return -1;
	w->th = calloc((size_t)CPU_COUNT(&cpus), sizeof(*w->th));
	if (!w->th)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE && w->nthreads < (unsigned)CPU_COUNT(&cpus); cpu++) {
		struct wthread *t = &w->th[w->nthreads];

		if (!CPU_ISSET(cpu, &cpus))
			continue;
		t->w = w;
		t->cpu = cpu;
		if (pthread_create(&t->thread, NULL, witness_main, t))
			break;
		w->nthreads++;
	}
	if (w->nthreads < (unsigned)CPU_COUNT(&cpus)) {
		coh_witness_stop(w);	/* a CPU unwatched: none known */
		w->watched = false;
		return -1;
	}
	return 0;
}

void coh_witness_stop(struct witness *w)
{
	if (!w->th)
		return;
	atomic_store(&w->stop, true);
	w->raised = w->pinned = true;
	for (unsigned i = 0; i < w->nthreads; i++) {
		pthread_join(w->th[i].thread, NULL);
		w->raised &= w->th[i].raised;
		w->pinned &= w->th[i].cpu >= 0;
	}
	free(w->th);
	w->th = NULL;
	w->watched = w->nthreads > 0;
}

bool coh_witness_saw(const struct witness *w, int64_t t0, int64_t t1)
{
	for (unsigned i = 0; i < w->stalls; i++)
		if (w->stall[i].from < t1 && w->stall[i].to > t0)
			return true;
	return false;
}

unsigned coh_witness_on(const struct witness *w, int cpu)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->stalls; i++)
		n += w->stall[i].cpu == cpu;
	return n;
}

void coh_witness_free(struct witness *w)
{
	free(w->stall);
	w->stall = NULL;
	w->stalls = w->cap = 0;
	pthread_mutex_destroy(&w->lock);
}
