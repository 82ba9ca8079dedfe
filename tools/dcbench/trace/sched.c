/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sched.c - the replay's scheduler (sched.h): per-worker ready queues with
 * stealing, parking an rproc on the one it waits for, publishing progress,
 * and idle workers' sleep.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "trace/sched.h"

void rp_q_push(struct rqueue *q, struct rproc *r)
{
	pthread_mutex_lock(&q->lock);
	r->qprev = NULL;
	r->qnext = q->head;
	if (q->head)
		q->head->qprev = r;
	else
		q->tail = r;
	__atomic_store_n(&q->head, r, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
}

/* From the head (own queue: newest first) or the tail (stealing: oldest). */
static struct rproc *q_pop(struct rqueue *q, bool tail)
{
	struct rproc *r;

	if (!__atomic_load_n(&q->head, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&q->lock);
	r = tail ? q->tail : q->head;
	if (r) {
		if (r->qprev)
			r->qprev->qnext = r->qnext;
		else
			__atomic_store_n(&q->head, r->qnext, __ATOMIC_RELAXED);
		if (r->qnext)
			r->qnext->qprev = r->qprev;
		else
			q->tail = r->qprev;
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

void rp_make_ready(struct worker *w, struct rproc *r)
{
	struct rctx *x = w->x;

	rp_q_push(&w->q, r);
	__atomic_add_fetch(&x->pending, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&x->sleepers, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&x->idle_lock);
		pthread_cond_signal(&x->idle_cv);
		pthread_mutex_unlock(&x->idle_lock);
	}
}

static struct rproc *take(struct worker *w)
{
	struct rctx *x = w->x;
	struct rproc *r = q_pop(&w->q, false);

	for (unsigned i = 1; !r && i < x->nw; i++)
		r = q_pop(&x->w[(w->id + i) % x->nw].q, true);
	if (r)
		__atomic_sub_fetch(&x->pending, 1, __ATOMIC_SEQ_CST);
	return r;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The next ready rproc, or NULL when the replay is over. */
struct rproc *rp_next_proc(struct worker *w)
{
	struct rctx *x = w->x;
	struct rproc *r;

	for (unsigned spin = 0; spin < 2000; spin++) {
		if (__atomic_load_n(&x->finished, __ATOMIC_ACQUIRE))
			return NULL;
		if (__atomic_load_n(&x->pending, __ATOMIC_RELAXED) && (r = take(w)))
			return r;
		if (spin >= 1000)
			sched_yield();
		else
			cpu_relax();
	}
	pthread_mutex_lock(&x->idle_lock);
	__atomic_add_fetch(&x->sleepers, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		if (__atomic_load_n(&x->finished, __ATOMIC_ACQUIRE)) {
			r = NULL;
			break;
		}
		if (__atomic_load_n(&x->pending, __ATOMIC_SEQ_CST)) {
			pthread_mutex_unlock(&x->idle_lock);
			r = take(w);
			pthread_mutex_lock(&x->idle_lock);
			if (r)
				break;
			continue;
		}
		if (__atomic_load_n(&x->sleepers, __ATOMIC_SEQ_CST) == x->nw) {
			/* nobody runs, nothing is ready, and work remains */
			x->deadlock = 1;
			__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
			pthread_cond_broadcast(&x->idle_cv);
			r = NULL;
			break;
		}
		pthread_cond_wait(&x->idle_cv, &x->idle_lock);
	}
	__atomic_sub_fetch(&x->sleepers, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&x->idle_lock);
	return r;
}

/* Park r until q has done need ops; false if that happened meanwhile. */
bool rp_park(struct rproc *r, struct rproc *q, uint64_t need)
{
	pthread_mutex_lock(&q->wl);
	r->wneed = need;
	r->wnext = q->waiters;
	__atomic_store_n(&q->waiters, r, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->done, __ATOMIC_SEQ_CST) >= need) {
		__atomic_store_n(&q->waiters, r->wnext, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&q->wl);
		return false;
	}
	pthread_mutex_unlock(&q->wl);
	return true;
}

void rp_publish(struct worker *w, struct rproc *r, uint64_t n)
{
	__atomic_store_n(&r->done, n, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&r->waiters, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&r->wl);
	for (struct rproc **pp = &r->waiters; *pp;) {
		struct rproc *x = *pp;

		if (x->wneed <= n) {
			*pp = x->wnext;
			rp_make_ready(w, x);
		} else {
			pp = &x->wnext;
		}
	}
	pthread_mutex_unlock(&r->wl);
}
