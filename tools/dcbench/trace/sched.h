/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sched.h - a replay run's processes, workers and scheduler.
 *
 * One rproc per (copy, trace process).  A worker runs one rproc at a time,
 * op after op (run.c), until the process exits or an op must wait for
 * another process; then it parks the rproc on that process's waiter list
 * and takes another ready one (own queue first, then stealing, then a
 * brief spin and a condition variable: sched.c).  No lock is taken per
 * op: an op's dependencies are read with one acquire load each, and a
 * process publishes its progress only at the ops someone depends on.
 *
 * Locking: a queue's list is under its lock, its head also read racily
 * (relaxed) to skip empty queues; a waiter list is under the rproc's wl,
 * its head read racily (seq_cst, against done) by the publisher; sleepers,
 * pending and remaining are atomics, finished is set with release under
 * idle_lock.  Op execution (exec.c) touches only the worker's own counters.
 */
#ifndef DCBENCH_TRACE_SCHED_H
#define DCBENCH_TRACE_SCHED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dcache.h"
#include "trace/replay_internal.h"

struct rproc {
	uint64_t first, nops, next;	/* next: owned by the running worker */
	uint32_t copy, proc;
	struct rproc *qprev, *qnext;	/* ready queue */
	uint64_t done;			/* published progress; atomic */
	struct rproc *waiters;		/* parked on this one; wl (head read racily) */
	struct rproc *wnext;
	uint64_t wneed;
	pthread_mutex_t wl;
};

struct rqueue {
	pthread_mutex_t lock;
	struct rproc *head, *tail;
};

struct rctx;

struct worker {
	struct rctx *x;
	unsigned id;
	pthread_t th;
	struct rqueue q;
	uint64_t ops;		/* read by the progress printer: relaxed */
	uint64_t checked, mismatches, unchecked, update_errors;
	uint64_t op_ns;		/* wall time inside path ops: own thread only */
	uint64_t update_ns;	/* ... of it in memfs updates: own thread only */
} __attribute__((aligned(64)));

struct rctx {
	struct rp_prep *p;
	const struct rp_config *cfg;
	struct dc_cache *c;
	struct dc_memfs *fs;
	struct rproc *procs;
	uint64_t nprocs;		/* all copies */
	struct worker *w;
	unsigned nw;

	pthread_mutex_t idle_lock;
	pthread_cond_t idle_cv;
	unsigned sleepers;		/* atomic, changed under idle_lock */
	uint64_t pending;		/* rprocs in queues; atomic */
	uint64_t remaining;		/* rprocs not finished; atomic */
	int finished;			/* atomic */
	int deadlock;

	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cv;
	int go;
	unsigned exited;		/* gate_lock */
	pthread_cond_t done_cv;

	pthread_mutex_t log_lock;
	unsigned printed;
};

/* ---- the scheduler (sched.c) ---- */

/* Put r on queue q (a worker's own, or any before the workers start). */
void rp_q_push(struct rqueue *q, struct rproc *r);
/* r may run: onto w's queue, and wake a sleeping worker if there is one. */
void rp_make_ready(struct worker *w, struct rproc *r);
/* The next ready rproc, or NULL when the replay is over (or deadlocked). */
struct rproc *rp_next_proc(struct worker *w);
/* Park r until q has done need ops; false if that happened meanwhile. */
bool rp_park(struct rproc *r, struct rproc *q, uint64_t need);
/* r has done n ops: make ready the rprocs parked on it that need no more. */
void rp_publish(struct worker *w, struct rproc *r, uint64_t n);

/* ---- op execution (exec.c) ---- */

/*
 * Run path op o of r through the cache (null mode: take the recorded
 * answer), timed, and check the answer against the recorded one.
 */
void rp_exec_op(struct worker *w, const struct rproc *r, const struct dct_op *o,
		bool null);

#endif /* DCBENCH_TRACE_SCHED_H */
