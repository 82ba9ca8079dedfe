/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.c - rp_run(): one replay.  The namespace is built into a fresh memfs
 * and cache (not timed), the processes that start on their own are queued,
 * and the workers run rprocs until every one has exited.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "dcache.h"
#include "trace/sched.h"
#include "trace/util.h"

/*
 * Add initial name ni of copy k in directory dir.  Returns the inode that
 * names below it go into, 0 when it could not be added (a contradiction
 * the inference already counted: a name below a file, say; the name and
 * what is below it are left out), or a negative errno when out of memory.
 */
static int64_t add_initial(struct rp_prep *p, struct dc_memfs *fs, uint32_t ni,
			   unsigned k, uint64_t dir)
{
	const struct node *n = &p->nodes[ni];
	char name[DC_NAME_MAX + 16];
	struct dc_inode in;
	int r;

	rp_copy_name(p, ni, k, name, sizeof(name));
	if (n->itype == T_LNK) {
		/* the link's target: a sibling of the type it is used as */
		const char *tn = p->names + n->target;
		bool self = !strcmp(tn, ".");

		if (!self) {
			r = dc_memfs_add(fs, dir, tn, (n->flags & N_LINKDIR) ?
					 S_IFDIR | 0755 : S_IFREG | 0644, NULL, &in);
			if (r == -ENOMEM)
				return r;
		}
		r = dc_memfs_add(fs, dir, name, S_IFLNK | 0777, tn, &in);
		if (r)
			return r == -ENOMEM ? r : 0;
		if (self)
			return (int64_t)dir;
		/* names below the link live in its target */
		r = dc_memfs_lookup(fs, dir, tn, &in);
		return r ? 0 : (int64_t)in.ino;
	}
	r = dc_memfs_add(fs, dir, name, n->itype == T_DIR ? S_IFDIR | 0755 :
			 S_IFREG | 0644, NULL, &in);
	if (r)
		return r == -ENOMEM ? r : 0;
	return (int64_t)in.ino;
}

static int build_namespace(struct rp_prep *p, struct dc_memfs *fs, unsigned copies,
			   char *err, size_t errlen)
{
	size_t nn = p->nnodes;
	uint64_t *ino = calloc(nn * copies, sizeof(*ino));

	if (!ino) {
		dct_fail(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < copies; k++)
		ino[(size_t)k * nn] = DC_MEMFS_ROOT;
	for (size_t ni = 1; ni < nn; ni++) {
		const struct node *n = &p->nodes[ni];
		bool priv = (n->flags & N_PRIVATE) != 0;
		bool ppriv = (p->nodes[n->parent].flags & N_PRIVATE) != 0;

		if (n->init != S_EXISTS || (n->flags & N_BAD))
			continue;
		for (unsigned k = 0; k < (priv ? copies : 1); k++) {
			uint64_t dir = ino[(ppriv ? (size_t)k * nn : 0) + n->parent];
			int64_t r;

			if (!dir)
				continue;	/* its directory was left out */
			r = add_initial(p, fs, (uint32_t)ni, k, dir);
			if (r < 0) {
				dct_fail(err, errlen, "building the namespace: out of memory");
				free(ino);
				return -1;
			}
			ino[(priv ? (size_t)k * nn : 0) + ni] = (uint64_t)r;
		}
	}
	free(ino);
	return 0;
}

static void run_proc(struct worker *w, struct rproc *r)
{
	struct rctx *x = w->x;
	const struct rp_prep *p = x->p;
	const struct dct_op *ops = p->t->ops;
	struct rproc *base = x->procs + (size_t)r->copy * p->t->nprocs;
	bool null = x->cfg->mode == RP_NULL;
	uint64_t li = r->next;

	for (;;) {
		uint64_t i = r->first + li;
		const struct dct_op *o = &ops[i];
		uint8_t f = p->opf[i];

		if (f & OF_DEPS) {
			for (uint64_t d = p->dep_off[i]; d < p->dep_off[i + 1]; d++) {
				struct rproc *q = &base[p->deps[d].proc];
				uint32_t need = p->deps[d].need;

				if (__atomic_load_n(&q->done, __ATOMIC_ACQUIRE) >= need)
					continue;
				/* before parking: once parked, another worker may run r */
				r->next = li;
				if (rp_park(r, q, need))
					return;
			}
		}
		if (o->kind == DCT_FORK) {
			rp_make_ready(w, &base[o->child]);
		} else if (o->kind == DCT_EXIT || o->kind == DCT_WAIT) {
			;
		} else {
			rp_exec_op(w, r, o, null);
		}
		li++;
		__atomic_store_n(&w->ops, w->ops + 1, __ATOMIC_RELAXED);
		if (f & OF_NOTIFY)
			rp_publish(w, r, li);
		if (li == r->nops) {
			r->next = li;
			if (__atomic_sub_fetch(&x->remaining, 1, __ATOMIC_SEQ_CST) == 0) {
				pthread_mutex_lock(&x->idle_lock);
				__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
				pthread_cond_broadcast(&x->idle_cv);
				pthread_mutex_unlock(&x->idle_lock);
			}
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rctx *x = w->x;
	struct rproc *r;

	pthread_mutex_lock(&x->gate_lock);
	while (!x->go)
		pthread_cond_wait(&x->gate_cv, &x->gate_lock);
	pthread_mutex_unlock(&x->gate_lock);

	while ((r = rp_next_proc(w)))
		run_proc(w, r);

	pthread_mutex_lock(&x->gate_lock);
	if (++x->exited == x->nw)
		pthread_cond_signal(&x->done_cv);
	pthread_mutex_unlock(&x->gate_lock);
	return NULL;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void ctx_destroy(struct rctx *x)
{
	for (uint64_t i = 0; x->procs && i < x->nprocs; i++)
		pthread_mutex_destroy(&x->procs[i].wl);
	for (unsigned i = 0; x->w && i < x->nw; i++)
		pthread_mutex_destroy(&x->w[i].q.lock);
	free(x->procs);
	free(x->w);
	if (x->c)
		dc_cache_destroy(x->c);
	if (x->fs)
		dc_memfs_free(x->fs);
	pthread_mutex_destroy(&x->idle_lock);
	pthread_cond_destroy(&x->idle_cv);
	pthread_mutex_destroy(&x->gate_lock);
	pthread_cond_destroy(&x->gate_cv);
	pthread_cond_destroy(&x->done_cv);
	pthread_mutex_destroy(&x->log_lock);
}

int rp_run(struct rp_prep *p, const struct rp_config *cfg, struct rp_result *res,
	   char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	struct rctx x;
	struct rusage ru0, ru1;
	struct dc_stats ds;
	double t0, t1, last = 0;
	unsigned started = 0;
	bool progress_shown = false;
	uint64_t total_ops;
	int rc = -1, r;

	memset(res, 0, sizeof(*res));
	if (cfg->mode < 0 || cfg->mode >= RP_NMODES || cfg->threads < 1 ||
	    cfg->threads > RP_MAX_THREADS || cfg->copies < 1 ||
	    cfg->copies > RP_MAX_COPIES) {
		dct_fail(err, errlen, "bad replay configuration");
		return -1;
	}
	if (rp_build_copies(p, cfg->copies, err, errlen))
		return -1;

	memset(&x, 0, sizeof(x));
	x.p = p;
	x.cfg = cfg;
	x.nw = cfg->threads;
	x.nprocs = (uint64_t)t->nprocs * cfg->copies;
	pthread_mutex_init(&x.idle_lock, NULL);
	pthread_cond_init(&x.idle_cv, NULL);
	pthread_mutex_init(&x.gate_lock, NULL);
	pthread_cond_init(&x.gate_cv, NULL);
	pthread_cond_init(&x.done_cv, NULL);
	pthread_mutex_init(&x.log_lock, NULL);
	x.procs = calloc(x.nprocs, sizeof(*x.procs));
	x.w = aligned_alloc(64, ((x.nw * sizeof(*x.w)) + 63) / 64 * 64);
	if (!x.procs || !x.w) {
		dct_fail(err, errlen, "out of memory");
		goto out;
	}
	memset(x.w, 0, x.nw * sizeof(*x.w));
	for (uint64_t i = 0; i < x.nprocs; i++) {
		struct rproc *rp = &x.procs[i];
		const struct dct_proc *tp = &t->procs[i % t->nprocs];

		rp->copy = (uint32_t)(i / t->nprocs);
		rp->proc = (uint32_t)(i % t->nprocs);
		rp->first = tp->first_op;
		rp->nops = tp->nops;
		pthread_mutex_init(&rp->wl, NULL);
	}
	for (unsigned i = 0; i < x.nw; i++) {
		x.w[i].x = &x;
		x.w[i].id = i;
		pthread_mutex_init(&x.w[i].q.lock, NULL);
	}
	x.remaining = x.nprocs;

	/* the namespace and the cache: not timed */
	if (cfg->mode != RP_NULL) {
		struct dc_options o;

		r = dc_memfs_new(&x.fs);
		if (r) {
			dct_fail(err, errlen, "memfs: %s", strerror(-r));
			goto out;
		}
		if (build_namespace(p, x.fs, cfg->copies, err, errlen))
			goto out;
		memset(&o, 0, sizeof(o));
		o.mode = (enum dc_mode)cfg->mode;
		o.backend = dc_memfs_backend(x.fs);
		o.complete_after = cfg->complete_after;
		r = dc_cache_create(&o, &x.c);
		if (r) {
			dct_fail(err, errlen, "cache: %s", strerror(-r));
			goto out;
		}
	}
	/* the processes that start on their own, spread over the workers */
	for (uint64_t i = 0, k = 0; i < x.nprocs; i++)
		if (t->procs[x.procs[i].proc].parent < 0) {
			rp_q_push(&x.w[k++ % x.nw].q, &x.procs[i]);
			x.pending++;
		}
	for (; started < x.nw; started++)
		if (pthread_create(&x.w[started].th, NULL, worker_main, &x.w[started])) {
			dct_fail(err, errlen, "cannot start thread %u", started);
			__atomic_store_n(&x.finished, 1, __ATOMIC_RELEASE);
			break;
		}

	getrusage(RUSAGE_SELF, &ru0);
	t0 = clock_s();
	pthread_mutex_lock(&x.gate_lock);
	x.go = 1;
	pthread_cond_broadcast(&x.gate_cv);
	total_ops = t->nops * cfg->copies;
	while (x.exited < started) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&x.done_cv, &x.gate_lock, &ts);
		if (cfg->progress && x.exited < started && clock_s() - t0 > 2 &&
		    clock_s() - last >= 1) {
			uint64_t sum = 0;

			for (unsigned i = 0; i < started; i++)
				sum += __atomic_load_n(&x.w[i].ops, __ATOMIC_RELAXED);
			fprintf(cfg->progress, "\r  %s, %u threads: %3.0f%% of %llu ops ",
				rp_mode_name(cfg->mode), cfg->threads,
				100.0 * (double)sum / (double)total_ops,
				(unsigned long long)total_ops);
			fflush(cfg->progress);
			progress_shown = true;
			last = clock_s();
		}
	}
	pthread_mutex_unlock(&x.gate_lock);
	t1 = clock_s();
	getrusage(RUSAGE_SELF, &ru1);
	if (progress_shown) {
		fprintf(cfg->progress, "\r%60s\r", "");
		fflush(cfg->progress);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(x.w[i].th, NULL);
	if (started < x.nw)
		goto out;
	if (x.deadlock || x.remaining) {
		dct_fail(err, errlen, "the replay could not finish: %llu processes "
		     "blocked (a dependency cycle)", (unsigned long long)x.remaining);
		goto out;
	}

	res->elapsed_s = t1 - t0;
	res->user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	res->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	/* every worker has been joined: pthread_join orders its last writes of
	 * these counters before the reads here */
	for (unsigned i = 0; i < x.nw; i++) {
		res->cache_s += (double)(x.w[i].op_ns - x.w[i].update_ns) * 1e-9;
		res->ops += x.w[i].ops;
		res->checked += x.w[i].checked;
		res->mismatches += x.w[i].mismatches;
		res->unchecked += x.w[i].unchecked;
		res->update_errors += x.w[i].update_errors;
	}
	res->components = p->info.components * cfg->copies;
	if (x.c) {
		dc_get_stats(x.c, &ds);
		res->lookups = ds.lookups;
		res->hits = ds.hits;
		res->negative_hits = ds.negative_hits;
		res->misses = ds.misses;
		res->restarts = ds.restarts;
		res->path_hits = ds.path_hits;
		res->lock_waits = ds.lock_waits;
		res->entries = ds.entries;
		res->negative_misses = ds.negative_misses;
		res->complete_answers = ds.complete_answers;
		res->readdirs = ds.readdirs;
	} else {
		res->lookups = p->info.planned_lookups * cfg->copies;
	}
	rc = 0;
out:
	ctx_destroy(&x);
	return rc;
}
