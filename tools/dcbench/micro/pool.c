/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pool.c - the worker threads and their timed loop.  A pool holds one
 * thread per worker for a whole scenario; each run, the main thread
 * releases them all at the go barrier, sleeps for the run's length, sets
 * stop, and waits for them at the done barrier, so no run pays for
 * creating threads.  A worker looks at stop (relaxed: it is only a
 * request to end soon) once every BATCH lookups; the barriers order its
 * figures before the main thread reads them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#include "common/clock.h"
#include "dcache.h"
#include "micro/micro.h"
#include "micro/util.h"

/*
 * This thread's time on a CPU and time runnable but waiting for one (ns),
 * from /proc/thread-self/schedstat; zeros if unreadable.
 */
static uint64_t cpu_wait_ns2(int fd, uint64_t *run)
{
	char buf[128];
	unsigned long long r, wait;
	ssize_t n;

	*run = 0;
	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &wait) != 2)
		return 0;
	*run = r;
	return wait;
}

uint64_t cpu_wait_ns(int fd)
{
	uint64_t run;

	return cpu_wait_ns2(fd, &run);
}

static int upd_step(struct impl *im, struct worker *w)
{
	const struct slot *s = &w->slots[w->j];
	struct dirh *h = &w->dh[im->kind];
	int err;

	switch (w->step) {
	case 0:
		err = im_create(im, h, s->da, s->a);
		break;
	case 1:
		err = im_rename(im, h, s->da, s->a, s->db, s->b);
		break;
	default:
		err = im_unlink(im, h, s->db, s->b);
		break;
	}
	if (++w->step == 3) {
		w->step = 0;
		if (++w->j == NSLOT)
			w->j = 0;
	}
	return err;
}

/*
 * BODY for each index I_ of the worker's array in turn, wrapping at its
 * end (wr_ counts the wraps), BATCH at a time until the main thread sets
 * stop.
 */
#define EACH_UNTIL_STOP(BODY)						\
	do {								\
		for (int k_ = 0; k_ < BATCH; k_++) {			\
			BODY;						\
			if (++I_ == N_) {				\
				I_ = 0;					\
				wr_++;					\
			}						\
		}							\
	} while (!__atomic_load_n(stop_, __ATOMIC_RELAXED))

/* One lookup, counted in f_ when its outcome is not the tree's. */
#define LOOKUP(CALL)							\
	do {								\
		const char *path = P_[I_];				\
		f_ += ((CALL) != 0) != M_[I_];				\
	} while (0)

/*
 * The timed loop, one copy per implementation so the call is direct.
 * Stops at the first batch boundary after the main thread sets stop.
 * Counts the lookups whose outcome (found, or not) is not the tree's:
 * a failing lookup is cheaper, so they must not pass unnoticed.  The
 * lookup-only scenarios get a loop without the update test.
 */
#define TIMED_LOOP(w, im, CALL)						\
	do {								\
		const char *const *P_ = (const char *const *)(w)->paths;	\
		const uint8_t *K_ = (w)->kind, *M_ = (w)->miss;		\
		uint32_t N_ = (w)->n, I_ = 0;				\
		uint64_t wr_ = 0, f_ = 0, u_ = 0;			\
		int *stop_ = &(w)->p->stop;				\
									\
		if (!K_)						\
			EACH_UNTIL_STOP(LOOKUP(CALL));			\
		else							\
			EACH_UNTIL_STOP(if (K_[I_])			\
						u_ += upd_step((im), (w)) != 0; \
					else				\
						LOOKUP(CALL));		\
		(w)->t1 = clock_ns();					\
		(w)->wait1 = cpu_wait_ns2((w)->schedfd, &(w)->run1);	\
		(w)->pos = I_;						\
		(w)->wraps = wr_;					\
		(w)->wrong = f_;					\
		(w)->uerr = u_;						\
	} while (0)

/*
 * The kernel's floor: fstatat of "." in the tree's root, the working
 * directory.  The system call, its path walk set up and finished, the
 * inode copied out, but no component looked up ("." is not hashed).
 */
static void floor_loop(struct worker *w)
{
	int *stop = &w->p->stop;
	struct stat st;
	uint64_t n = 0, bad = 0;

	do {
		for (int k = 0; k < BATCH; k++)
			bad += fstatat(AT_FDCWD, ".", &st, 0) != 0;
		n += BATCH;
	} while (!__atomic_load_n(stop, __ATOMIC_RELAXED));
	w->t1 = clock_ns();
	w->wait1 = cpu_wait_ns2(w->schedfd, &w->run1);
	w->ops = w->lookups = n;
	w->comps = 0;
	w->wrong = bad;
	w->uerr = 0;
}

static void run_job(struct worker *w)
{
	struct impl *im = w->p->im;

	w->wait0 = cpu_wait_ns2(w->schedfd, &w->run0);
	w->t0 = clock_ns();
	if (w->p->floor) {
		floor_loop(w);
		return;
	}
	switch (im->kind) {
	case IM_KERNEL: {
		struct stat st;

		TIMED_LOOP(w, im, fstatat(AT_FDCWD, path, &st, 0));
		break;
	}
	case IM_LFHT: {
		struct res r;

		TIMED_LOOP(w, im, lfht_resolve(im, path, &r));
		break;
	}
	case IM_MUTEX: {
		struct res r;

		TIMED_LOOP(w, im, mtab_resolve(im, path, &r));
		break;
	}
	default: {
		struct dc_cache *c = im->c;
		struct dc_inode st;

		const struct dc_cred *cr = im->cred;

		if (cr)
			TIMED_LOOP(w, im, dc_resolve_as(c, NULL, path, 0, cr, &st));
		else
			TIMED_LOOP(w, im, dc_resolve(c, NULL, path, 0, &st));
		break;
	}
	}
	w->ops = w->wraps * w->n + w->pos;
	w->comps = w->wraps * w->cpre[w->n] + w->cpre[w->pos];
	w->lookups = w->lpre ? w->wraps * w->lpre[w->n] + w->lpre[w->pos] : w->ops;
	/* untimed: finish the triple in progress, so the next run starts
	 * from the same namespace */
	while (w->step)
		w->uerr += upd_step(im, w) != 0;
}

/*
 * A timed run's work.  Its own function, never inlined, so that a
 * profiler can collect the timed runs alone and leave out the untimed
 * warm ones, whose length in lookups varies under valgrind
 * (bench/profile.sh: callgrind --toggle-collect=run_timed).
 */
static __attribute__((noinline)) void run_timed(struct worker *w)
{
	run_job(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;

	urcu_memb_register_thread();	/* for lfht; libdcache leaves it be */
	w->schedfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (p->pin) {
		cpu_set_t all, one;
		unsigned k = 0, want;

		if (sched_getaffinity(0, sizeof(all), &all) == 0) {
			want = w->idx % (unsigned)CPU_COUNT(&all);
			for (unsigned c = 0; c < CPU_SETSIZE; c++) {
				if (!CPU_ISSET(c, &all))
					continue;
				if (k++ == want) {
					CPU_ZERO(&one);
					CPU_SET(c, &one);
					pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
					break;
				}
			}
		}
	}
	for (;;) {
		pthread_barrier_wait(&p->go);
		if (p->quit)
			break;
		if (p->warm)
			run_job(w);
		else
			run_timed(w);
		pthread_barrier_wait(&p->done);
	}
	if (w->schedfd >= 0)
		close(w->schedfd);
	urcu_memb_unregister_thread();
	return NULL;
}

void pool_start(struct pool *p, unsigned n, bool pin)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->pin = pin;
	p->w = aligned_alloc(64, ((n * sizeof(*p->w)) + 63) & ~(size_t)63);
	if (!p->w)
		oom(n * sizeof(*p->w));
	memset(p->w, 0, n * sizeof(*p->w));
	pthread_barrier_init(&p->go, NULL, n + 1);
	pthread_barrier_init(&p->done, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		p->w[i].p = p;
		p->w[i].idx = i;
	}
}

void pool_spawn(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		int err = pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]);

		if (err) {
			fprintf(stderr, "dcbench micro: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
}

void pool_join(struct pool *p)
{
	p->quit = 1;
	pthread_barrier_wait(&p->go);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_barrier_destroy(&p->go);
	pthread_barrier_destroy(&p->done);
}

void pool_free(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];

		free(w->paths);
		free(w->tix);
		free(w->miss);
		free(w->cpre);
		free(w->lpre);
		free(w->kind);
		free(w->slots);
	}
	free(p->w);
}

/* Each worker's own shuffled array of paths (and updates, for mixed). */
void make_arrays(struct pool *p, const struct scen *s, uint64_t seed)
{
	const struct targets *g = &s->tg;

	for (unsigned k = 0; k < p->n; k++) {
		struct worker *w = &p->w[k];
		uint64_t rs = seed ^ ((uint64_t)(k + 1) * RNG_GOLDEN) ^ ((uint64_t)s->id << 40);
		uint32_t n = s->samefile ? SAMEFILE_LEN : g->n < LMAX ? g->n : LMAX;

		w->n = n;
		w->tix = xmalloc(n * sizeof(*w->tix));
		w->paths = xmalloc(n * sizeof(*w->paths));
		w->cpre = xmalloc((n + 1) * sizeof(*w->cpre));
		if (s->samefile) {
			memset(w->tix, 0, n * sizeof(*w->tix));
		} else if (g->n <= LMAX) {
			for (uint32_t i = 0; i < n; i++)
				w->tix[i] = i;
			for (uint32_t i = n; i > 1; i--) {
				uint32_t j = rng_below(&rs, i), x = w->tix[i - 1];

				w->tix[i - 1] = w->tix[j];
				w->tix[j] = x;
			}
		} else {
			for (uint32_t i = 0; i < n; i++)
				w->tix[i] = rng_below(&rs, g->n);
		}
		w->miss = xmalloc(n);
		for (uint32_t i = 0; i < n; i++) {
			w->paths[i] = g->path[w->tix[i]];
			w->miss[i] = g->expect[w->tix[i]] < 0;
		}
		if (s->mixed_pct) {
			w->kind = xmalloc(n);
			w->lpre = xmalloc((n + 1) * sizeof(*w->lpre));
			for (uint32_t i = 0; i < n; i++)
				w->kind[i] = rng_below(&rs, 100) < s->mixed_pct;
			w->slots = xmalloc(NSLOT * sizeof(*w->slots));
			for (unsigned j = 0; j < NSLOT; j++) {
				snprintf(w->slots[j].a, sizeof(w->slots[j].a), "zz-w%u-%u.a", k, j);
				snprintf(w->slots[j].b, sizeof(w->slots[j].b), "zz-w%u-%u.b", k, j);
				w->slots[j].da = (uint8_t)rng_below(&rs, NSDIR);
				w->slots[j].db = (uint8_t)rng_below(&rs, NSDIR);
			}
			for (unsigned d = 0; d < NSDIR; d++)
				w->sdir[d] = s->t->dirs[rng_below(&rs, s->t->ndirs)];
			w->lpre[0] = 0;
		}
		w->cpre[0] = 0;
		for (uint32_t i = 0; i < n; i++) {
			bool upd = w->kind && w->kind[i];

			w->cpre[i + 1] = w->cpre[i] + (upd ? 0 : g->ncomp[w->tix[i]]);
			if (w->lpre)
				w->lpre[i + 1] = w->lpre[i] + !upd;
		}
	}
}
