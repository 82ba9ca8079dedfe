/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rounds.c - measuring a scenario: build and check every implementation
 * asked for, then in each of --runs rounds run each in turn at every
 * thread count (a warm-up first), timing each run, into the scenario's
 * cells.  The rounds interleave so that every comparison, and every
 * scaling, is of runs made side by side.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/clock.h"
#include "dcache.h"
#include "micro/micro.h"
#include "micro/util.h"

/* Every thread count's pool stays up for a whole scenario, each kernel
 * worker with its directory descriptors: the soft descriptor limit goes up
 * to the hard one.  Best effort: a cell that still runs out is reported
 * as not measured. */
void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct cell *cell_at(struct bench *b, int sc, unsigned ti, int im)
{
	return &b->cells[((size_t)sc * b->ntl + ti) * IM_NR + im];
}

static int tl_index(const struct bench *b, unsigned threads)
{
	for (unsigned i = 0; i < b->ntl; i++)
		if (b->tl[i] == threads)
			return (int)i;
	return -1;
}

/* A measured cell with every run and without failed operations, or NULL:
 * a cell whose lookups or updates failed did less work than its peers,
 * and one with a run missing is not the median of the runs the report
 * states, so no figure derived from either (a ratio, a scaling) is a
 * measurement. */
struct cell *cell_get(struct bench *b, int sc, unsigned threads, int im)
{
	int ti = tl_index(b, threads);
	struct cell *c;

	if (ti < 0 || !b->ran[sc])
		return NULL;
	c = cell_at(b, sc, (unsigned)ti, im);
	return c->measured && c->nr == b->runs && !c->wrong && !c->uerr ? c : NULL;
}

/* What a run is: a timed one, the kernel's syscall floor, or a warm-up. */
enum run_kind { RUN_TIMED, RUN_FLOOR, RUN_WARM };

/*
 * One timed run of im on every worker (floor: the kernel's syscall floor).
 * Two figures: each thread's rate over its own time on a CPU (ns/lookup,
 * Mops/s), and the operations of all threads over the wall time from the
 * start barrier to the last thread's end (mops_wall, which scaling uses).
 */
static void timed_run(struct bench *b, struct pool *p, struct impl *im,
		      struct cell *cl, enum run_kind kind, unsigned ms)
{
	bool floor = kind == RUN_FLOOR;
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	uint64_t t0, t1 = 0, ops = 0, comps = 0, lookups = 0, wrong = 0;
	double wall, rate = 0, crate = 0, busy = 0, wallsum = 0;
	bool correct = p->n <= b->cores;	/* oversubscribed: we wait for ourselves */
	struct dc_stats st0;

	if (im->kind == IM_KERNEL && kernel_enter(im)) {
		snprintf(cl->why, sizeof(cl->why), "chdir %.300s: %s", im->kdir,
			 strerror(errno));
		return;
	}
	if (im->c)
		dc_get_stats(im->c, &st0);
	p->im = im;
	p->floor = floor;
	p->warm = kind == RUN_WARM;
	__atomic_store_n(&p->stop, 0, __ATOMIC_RELAXED);
	pthread_barrier_wait(&p->go);
	t0 = clock_ns();
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&p->done);
	if (im->kind == IM_KERNEL)
		kfs_leave();
	if (im->c) {
		struct dc_stats st;

		dc_get_stats(im->c, &st);
		cl->dc_lookups += st.lookups - st0.lookups;
		cl->dc_misses += st.misses - st0.misses;
		cl->dc_restarts += st.restarts - st0.restarts;
	}
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];

		if (w->t0 < t0)
			t0 = w->t0;
		if (w->t1 > t1)
			t1 = w->t1;
	}
	wall = (double)(t1 - t0);
	/*
	 * Each thread's rate over the time it was not waiting for a CPU (the
	 * machine is shared: other processes' time is not ours), summed.  When
	 * oversubscribed our own threads make the waits, so there it is plain
	 * operations over wall time.
	 */
	for (unsigned i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		double wi = (double)(w->t1 - w->t0);
		double wait = w->wait1 > w->wait0 ? (double)(w->wait1 - w->wait0) : 0;
		double eff;

		if (wait > wi)
			wait = wi;
		eff = correct ? wi - wait : wall;
		if (eff < wi / 100)
			eff = wi / 100;
		rate += (double)w->ops / eff;
		crate += (double)w->comps / eff;
		if (debug_runs)
			fprintf(stderr, "%s%s T%u w%u: wall %.1f ms wait %.1f cpu %.1f: ns/op wall-wait %.1f cpu %.1f [%s]\n",
				im_names[im->kind], floor ? "-floor" : kind == RUN_WARM ? "-warm" : "",
				p->n, i, wi / 1e6,
				wait / 1e6, (w->run1 - w->run0) / 1e6, eff / w->ops,
				(double)(w->run1 - w->run0) / w->ops, sc_names[p->scen]);
		busy += wi - wait;
		wallsum += wi;
		ops += w->ops;
		comps += w->comps;
		lookups += w->lookups;
		wrong += w->wrong;
		cl->uerr += w->uerr;
	}
	cl->wrong += wrong;
	if (floor) {
		if (cl->nfloor < MAX_RUNS && ops)
			cl->floor[cl->nfloor++] = p->n / rate;
		return;
	}
	if (cl->nr < MAX_RUNS && ops) {
		cl->ns[cl->nr] = p->n / rate;
		cl->nsc[cl->nr] = comps ? p->n / crate : NAN;
		cl->mops[cl->nr] = rate * 1e3;
		cl->mopsw[cl->nr] = (double)ops * 1e3 / wall;
		cl->share[cl->nr] = wallsum > 0 ? busy / wallsum : NAN;
		cl->nr++;
	}
	cl->ops += ops;
	cl->lookups += lookups;
	cl->comps += comps;
	cl->upd += ops - lookups;
	cl->measured = true;
}

/*
 * An untimed run of implementation k at the first thread count it runs
 * at, half as long as a timed one, before its block of a round: the
 * previous implementation's runs left the CPU caches full of its data,
 * and without this the first timed run after them (always the 1-thread
 * one) pays for it alone, which slows it and inflates every scaling
 * paired with it.
 */
static void warm_run(struct bench *b, int id, struct pool *pools, struct impl *ims,
		     int k, bool live[][IM_NR])
{
	static struct cell scratch;	/* its timings are dropped */

	if (b->no_warm)
		return;
	for (unsigned ti = 0; ti < b->ntl; ti++)
		if (live[ti][k]) {
			struct cell *cl = cell_at(b, id, ti, k);

			memset(&scratch, 0, sizeof(scratch));
			timed_run(b, &pools[ti], &ims[k], &scratch, RUN_WARM,
				  b->ms / 2 ? b->ms / 2 : 1);
			/* its wrong lookups and failed updates are not dropped */
			cl->wrong += scratch.wrong;
			cl->uerr += scratch.uerr;
			return;
		}
}

/*
 * A pool of threads for each thread count, all kept until the scenario
 * ends so that the thread counts can take turns; live[ti][k]: im k can
 * run with pool ti (the mixed scenarios need its update directories).
 */
static void pools_start(struct bench *b, int id, struct scen *s, struct impl *ims,
			struct pool *pools, bool live[][IM_NR])
{
	for (unsigned ti = 0; ti < b->ntl; ti++) {
		unsigned T = b->tl[ti];
		struct pool *p = &pools[ti];

		for (int k = 0; k < IM_NR; k++) {
			struct cell *cl = cell_at(b, id, ti, k);

			memset(cl, 0, sizeof(*cl));
			cl->skipped = ims[k].skipped;
			live[ti][k] = ims[k].ok;
			if (!ims[k].ok)
				snprintf(cl->why, sizeof(cl->why), "%s", ims[k].why);
		}
		progress("scenario %s: %u thread%s", sc_names[id], T, plural(T));
		pool_start(p, T, b->pin);
		p->scen = id;
		make_arrays(p, s, b->seed);
		for (int k = 0; k < IM_NR && s->mixed_pct; k++)
			for (unsigned w = 0; w < T && live[ti][k]; w++) {
				struct cell *cl = cell_at(b, id, ti, k);
				int err = dirh_open(&ims[k], &p->w[w].dh[k], s->t,
						    p->w[w].sdir, NSDIR);

				if (err) {
					fprintf(stderr, "dcbench micro: %s %s: update "
						"directories: %s\n", sc_names[id],
						im_names[k], strerror(-err));
					live[ti][k] = false;
					snprintf(cl->why, sizeof(cl->why),
						 "update directories: %s", strerror(-err));
				}
			}
		pool_spawn(p);
	}
}

static void pools_stop(struct bench *b, int id, struct impl *ims, struct pool *pools)
{
	for (unsigned ti = 0; ti < b->ntl; ti++) {
		struct pool *p = &pools[ti];

		pool_join(p);
		for (int k = 0; k < IM_NR; k++) {
			b->update_errors += cell_at(b, id, ti, k)->uerr;
			for (unsigned w = 0; w < p->n; w++)
				dirh_close(&ims[k], &p->w[w].dh[k]);
		}
		pool_free(p);
	}
}

/* A scenario being measured: its implementations, built and checked, and
 * a pool of threads for each thread count.  Never moved once open (the
 * pools' threads hold pointers into it). */
struct srun {
	int id;
	struct scen s;
	struct impl ims[IM_NR];
	struct fsinst *shared;
	int order[IM_NR], nim;
	struct pool pools[MAX_TLIST];
	bool live[MAX_TLIST][IM_NR];
};

/* Build scenario id and every implementation asked for, check their
 * answers and start the pools: 0, or -1 with nothing left open. */
static int srun_open(struct bench *b, int id, struct srun *r)
{
	struct scen *s = &r->s;
	int err;

	r->id = id;
	progress("scenario %s: building", sc_names[id]);
	err = scen_build(b, s, id);
	if (err) {
		fprintf(stderr, "dcbench micro: %s: %s\n", sc_names[id],
			err == -2 ? "the tree has no directory below its root "
				    "to make its updates in" : "nothing to look up");
		scen_free(b, s);
		return -1;
	}
	/* the dc modes share one memfs unless the scenario changes it */
	if (!s->mixed_pct && (b->impl[IM_RCU] || b->impl[IM_RWLOCK] || b->impl[IM_GLOBAL] ||
			      b->impl[IM_RCUTTL] || b->impl[IM_RCUAS])) {
		int err;

		r->shared = xcalloc(1, sizeof(*r->shared));
		err = fs_build(s->t, r->shared);
		if (err) {
			free(r->shared);
			r->shared = NULL;
		}
	}
	for (int k = 0; k < IM_NR; k++) {
		struct impl *im = &r->ims[k];
		uint64_t bad;

		memset(im, 0, sizeof(*im));
		im->kind = k;
		if (!b->impl[k]) {
			snprintf(im->why, sizeof(im->why), "not asked for (--impls)");
			continue;
		}
		progress("scenario %s: building %s", sc_names[id], im_names[k]);
		if (im_build(im, k, s, !s->mixed_pct ? r->shared : NULL)) {
			if (!im->why[0])
				snprintf(im->why, sizeof(im->why), "could not be built");
			im_destroy(im);
			continue;
		}
		progress("scenario %s: checking and warming %s (%u paths)", sc_names[id],
			 im_names[k], s->tg.n);
		bad = im_check(im, s);
		if (bad) {
			b->mismatches += bad;
			snprintf(im->why, sizeof(im->why), "%" PRIu64 " wrong answers", bad);
			im_destroy(im);
			continue;
		}
		im->ok = true;
		r->order[r->nim++] = k;
	}
	pools_start(b, id, s, r->ims, r->pools, r->live);
	return 0;
}

/*
 * One round: every implementation, and within it every thread count, in
 * turn, so that each run at N threads has a 1-thread run of the same
 * implementation beside it (scaling pairs them).
 */
static void srun_round(struct bench *b, struct srun *r)
{
	for (int q = 0; q < r->nim; q++) {
		int k = r->order[q];

		warm_run(b, r->id, r->pools, r->ims, k, r->live);
		for (unsigned ti = 0; ti < b->ntl; ti++) {
			struct cell *cl = cell_at(b, r->id, ti, k);

			if (!r->live[ti][k])
				continue;
			timed_run(b, &r->pools[ti], &r->ims[k], cl, RUN_TIMED, b->ms);
			if (k == IM_KERNEL && !r->s.mixed_pct)
				timed_run(b, &r->pools[ti], &r->ims[k], cl, RUN_FLOOR, b->ms);
		}
	}
}

static void srun_close(struct bench *b, struct srun *r)
{
	struct scen *s = &r->s;
	int id = r->id;

	pools_stop(b, id, r->ims, r->pools);
	for (int k = 0; k < IM_NR; k++)
		im_destroy(&r->ims[k]);
	fs_free(r->shared);
	if (s->negatives)
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]),
			 "%u paths, half of them misses in the last component", s->tg.n);
	else if (s->samefile)
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]), "every thread: %s",
			 s->tg.path[0]);
	else
		snprintf(b->scen_note[id], sizeof(b->scen_note[id]),
			 "%u entries, %u paths looked up, %.1f components each%s",
			 s->t->nn - 1, s->tg.n, (double)tg_comps(&s->tg) / s->tg.n,
			 s->mixed_pct ? (s->mixed_pct == 1 ? "; 1% of operations update" :
					 "; 10% of operations update") : "");
	b->ran[id] = true;
	scen_free(b, s);
}

/*
 * Scenarios ids[0, n), measured together: all are built first, then each
 * round runs every one of them in turn, so that a figure that compares
 * them (the depths' ratio) pairs runs made side by side, not minutes
 * apart on a machine whose speed drifts.  0, or -1 if one could not be
 * built (the others are still measured).
 */
int run_scenarios(struct bench *b, const int *ids, int n)
{
	struct srun *runs = xcalloc((size_t)n, sizeof(*runs));
	bool *open = xcalloc((size_t)n, sizeof(*open));
	int status = 0;

	for (int i = 0; i < n; i++) {
		open[i] = srun_open(b, ids[i], &runs[i]) == 0;
		if (!open[i])
			status = -1;
	}
	for (unsigned rd = 0; rd < b->runs; rd++)
		for (int i = 0; i < n; i++)
			if (open[i])
				srun_round(b, &runs[i]);
	for (int i = 0; i < n; i++)
		if (open[i])
			srun_close(b, &runs[i]);
	free(open);
	free(runs);
	return status;
}
