// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * loop.c - dcfs's request loop: few readers of /dev/fuse, more only while
 * the readers are stuck.
 *
 * Why not libfuse's fuse_session_loop_mt: it keeps every idle worker
 * blocked in read(/dev/fuse), and the kernel wakes them in turn (an
 * exclusive FIFO wait), so with its ten workers nearly every request wakes
 * a thread that slept, most often on the other CPU: an inter-processor
 * interrupt, which on this VM is an exit to the hypervisor.  fsmeta over
 * the Linux tree on 2 CPUs ran twice as fast with 2 workers as with 10
 * (docs/dcfs.md, "Worker threads").  Fewer workers alone is no answer: one
 * request that waits on the disk (an fsync) then holds up every other.
 *
 * So: `readers` threads (default one per CPU dcfs may run on) read and
 * serve requests.  A reader that finishes a request reads the next, which
 * under load is already queued: no sleep, no wake-up.  A monitor thread
 * looks every TICK: when every running worker has been on one request for
 * longer than a tick, requests are piling up behind them, so it wakes the
 * latest parked worker or starts a new one, up to `threads` in all.  An
 * extra worker parks again after a request once some other worker is free
 * to read, and exits after PARK_EXIT_S parked.  While no request arrives
 * for IDLE_TICKS the monitor sleeps, and the first request after wakes it.
 * The tick is long (10 ms) because each one preempts someone: at 1 ms the
 * ticks alone cost a kernel build about 10 s of daemon CPU.
 *
 * Locking: pool.lock guards the worker slots, parking and the monitor's
 * sleep.  The request path takes no lock: a worker publishes the start of
 * a request in its own busy_since (read by the monitor and by workers
 * deciding to park) and checks monitor_asleep.
 *
 * Ending: a signal (dcfs_loop_stop), an unmount (the readers get ENODEV),
 * a read error or libfuse (fuse_session_exit inside a request) wakes the
 * main thread, which ends the session, wakes the parked workers and
 * cancels the others.  Cancellation is enabled only around the read, so a
 * request is never cut short: a worker in one finishes it, then leaves.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcfs.h"

#define TICK_NS		10000000ull	/* 10 ms: see "Stalls" in docs/dcfs.md */
#define IDLE_TICKS	100		/* 1 s without a request: the monitor sleeps */
#define PARK_EXIT_S	2		/* an extra worker parked this long exits */

/*
 * A slot's life: FREE -> RUN <-> PARKED; RUN or a PARKED that timed out
 * (LEAVING) -> DONE when the thread has left the pool (worker_exit);
 * DONE -> FREE once joined, by whoever reuses the slot or at the end.
 */
enum wstate { W_FREE, W_RUN, W_PARKED, W_LEAVING, W_DONE };

struct worker {
	pthread_t tid;
	enum wstate state;		/* pool.lock */
	bool go;			/* pool.lock: a parked worker is wanted */
	bool join;			/* at the end: a thread to join */
	uint64_t parked_seq;		/* pool.lock: when it parked; the latest is woken first */
	pthread_cond_t wake;
	struct fuse_buf buf;		/* the worker's own; libfuse sizes it */
	/* CLOCK_MONOTONIC ns when the current request started; 0 between
	 * requests.  Written only by the worker. */
	_Atomic uint64_t busy_since;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t monitor_wake;
	struct fuse_session *se;
	struct worker *w;
	unsigned nslots;		/* = the most workers */
	unsigned readers;		/* workers kept running */
	_Atomic unsigned running;	/* written under pool.lock */
	uint64_t park_count;
	bool exiting;
	bool start_failed;		/* reported once */
	int error;
	_Atomic bool monitor_asleep;
	sem_t done;			/* posted when the session ends; never destroyed */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.monitor_wake = PTHREAD_COND_INITIALIZER,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Before main: the signal handler may post `done` at any time after. */
__attribute__((constructor)) static void init_done(void)
{
	sem_init(&pool.done, 0, 0);
}

/*
 * The handler of SIGINT/SIGTERM/SIGHUP calls this, perhaps before the loop
 * starts or after it ended: sem_post alone is async-signal-safe and the
 * semaphore lives as long as the process.  The main thread, woken, ends
 * the session.
 */
void dcfs_loop_stop(void)
{
	sem_post(&pool.done);
}

/*
 * Is every running worker but `self` on a request that started before
 * `limit`?  Then nobody is reading /dev/fuse, and has not been for a while.
 * Caller holds pool.lock (the set of running workers is stable).
 */
static bool stuck_locked(const struct worker *self, uint64_t limit)
{
	unsigned i, others = 0;

	for (i = 0; i < pool.nslots; i++) {
		const struct worker *w = &pool.w[i];
		uint64_t t;

		if (w == self || w->state != W_RUN)
			continue;
		others++;
		t = atomic_load(&w->busy_since);
		if (t == 0 || t > limit)
			return false;
	}
	return others > 0 || self == NULL;
}

/*
 * After a request: a worker beyond the readers parks while another worker
 * is free to read.  Returns false if the loop is ending.  Caller holds
 * pool.lock.
 */
static bool maybe_park_locked(struct worker *w)
{
	struct timespec until;
	int rc = 0;

	if (pool.running <= pool.readers || stuck_locked(w, now_ns() - TICK_NS))
		return !pool.exiting;
	w->state = W_PARKED;
	w->go = false;
	w->parked_seq = ++pool.park_count;
	pool.running--;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PARK_EXIT_S;
	while (!w->go && !pool.exiting && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w->wake, &pool.lock, &until);
	if (w->go)			/* add_reader_locked made us W_RUN */
		return !pool.exiting;
	w->state = W_LEAVING;		/* nobody wakes it now; the thread exits */
	return false;
}

/*
 * The thread's last touch of the pool (also run when it is cancelled in
 * read).  After it the thread needs no lock, so a holder of pool.lock may
 * join it.
 */
static void worker_exit(void *arg)
{
	struct worker *w = arg;

	free(w->buf.mem);
	w->buf.mem = NULL;
	w->buf.size = 0;
	pthread_mutex_lock(&pool.lock);
	if (w->state == W_RUN)
		pool.running--;
	w->state = W_DONE;
	pthread_mutex_unlock(&pool.lock);
	CTR_ADD(workers, -1);
}

/* The session ended under a worker: unmounted, a read error, or libfuse
 * ended it inside a request (fuse_session_exit).  Wake the main thread. */
static void end_session(int res)
{
	pthread_mutex_lock(&pool.lock);
	if (res < 0 && !pool.error)
		pool.error = res;
	pthread_mutex_unlock(&pool.lock);
	fuse_session_exit(pool.se);
	sem_post(&pool.done);
}

static void wake_monitor(void)
{
	pthread_mutex_lock(&pool.lock);
	atomic_store(&pool.monitor_asleep, false);
	pthread_cond_signal(&pool.monitor_wake);
	pthread_mutex_unlock(&pool.lock);
}

static void serve(struct worker *w)
{
	bool more = true;
	int res;

	while (more && !fuse_session_exited(pool.se)) {
		/* the only cancellation point: a worker blocked in read at the end */
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(pool.se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0) {		/* 0: unmounted (ENODEV) */
			end_session(res);
			break;
		}
		/*
		 * seq_cst store, then seq_cst load: pairs with the monitor's
		 * store to monitor_asleep and load of busy_since before it
		 * sleeps, so either it sees this request or we see it asleep.
		 */
		atomic_store(&w->busy_since, now_ns());
		if (atomic_load(&pool.monitor_asleep))
			wake_monitor();
		fuse_session_process_buf(pool.se, &w->buf);
		stash_clear();	/* nothing a request stashed outlives it */
		atomic_store_explicit(&w->busy_since, 0, memory_order_release);
		/* a relaxed peek, rechecked under the lock */
		if (atomic_load_explicit(&pool.running, memory_order_relaxed) > pool.readers) {
			pthread_mutex_lock(&pool.lock);
			more = maybe_park_locked(w);
			pthread_mutex_unlock(&pool.lock);
		}
	}
	if (fuse_session_exited(pool.se))
		end_session(0);
}

static void *work(void *arg)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cleanup_push(worker_exit, arg);
	serve(arg);
	pthread_cleanup_pop(1);
	return NULL;
}

/* Start a worker in a free slot.  Caller holds pool.lock. */
static int start_worker_locked(void)
{
	struct worker *w = NULL;
	unsigned i;
	int err;

	for (i = 0; i < pool.nslots && !w; i++) {
		if (pool.w[i].state == W_DONE) {
			/* past worker_exit: it takes no lock any more */
			pthread_join(pool.w[i].tid, NULL);
			pool.w[i].state = W_FREE;
		}
		if (pool.w[i].state == W_FREE)
			w = &pool.w[i];
	}
	if (!w)
		return -EAGAIN;
	w->state = W_RUN;
	atomic_store(&w->busy_since, 0);
	err = pthread_create(&w->tid, NULL, work, w);
	if (err) {
		w->state = W_FREE;
		return -err;
	}
	pool.running++;
	CTR_ADD(workers, 1);
	CTR_ADD(workers_started, 1);
	return 0;
}

/* One more worker reading: the most recently parked (its stack and buffer
 * are the likeliest still cached), else a new one. */
static void add_reader_locked(void)
{
	struct worker *best = NULL;
	unsigned i;

	for (i = 0; i < pool.nslots; i++) {
		struct worker *w = &pool.w[i];

		if (w->state == W_PARKED && (!best || w->parked_seq > best->parked_seq))
			best = w;
	}
	if (best) {
		/* W_RUN now, not when it gets the CPU: counted as free to read,
		 * so the next tick does not wake another for the same stall */
		best->state = W_RUN;
		best->go = true;
		pool.running++;
		pthread_cond_signal(&best->wake);
		return;
	}
	if (start_worker_locked() < 0 && !pool.start_failed) {
		pool.start_failed = true;
		dcfs_log(LOG_WARNING, "could not start a worker thread (more stalls go unreported)");
	}
}

static bool any_busy(void)
{
	unsigned i;

	for (i = 0; i < pool.nslots; i++)
		if (atomic_load(&pool.w[i].busy_since))
			return true;
	return false;
}

static void *monitor(void *arg)
{
	const struct timespec tick = { 0, (long)TICK_NS };
	unsigned idle = 0;

	(void)arg;
	pthread_mutex_lock(&pool.lock);
	while (!pool.exiting) {
		pthread_mutex_unlock(&pool.lock);
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&pool.lock);
		if (pool.exiting)
			break;
		if (pool.running < pool.nslots && !fuse_session_exited(pool.se) &&
		    stuck_locked(NULL, now_ns() - TICK_NS))
			add_reader_locked();
		idle = any_busy() ? 0 : idle + 1;
		if (idle < IDLE_TICKS)
			continue;
		/* seq_cst store, then seq_cst loads: see work() */
		atomic_store(&pool.monitor_asleep, true);
		if (any_busy()) {
			atomic_store(&pool.monitor_asleep, false);
			continue;
		}
		while (atomic_load(&pool.monitor_asleep) && !pool.exiting)
			pthread_cond_wait(&pool.monitor_wake, &pool.lock);
		idle = 0;
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

/* Serve `se` until it ends; returns 0 or the negative errno that ended it. */
int dcfs_loop(struct fuse_session *se, unsigned threads, unsigned readers)
{
	pthread_t mon;
	unsigned i;
	int err = 0;

	if (readers == 0) {
		cpu_set_t cpus;

		readers = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ?
			  (unsigned)CPU_COUNT(&cpus) : 1;
	}
	if (readers > threads)
		readers = threads;
	pool.w = calloc(threads, sizeof(*pool.w));
	if (!pool.w)
		return -ENOMEM;
	for (i = 0; i < threads; i++)
		pthread_cond_init(&pool.w[i].wake, NULL);
	pool.nslots = threads;
	pool.readers = readers;
	pool.se = se;

	pthread_mutex_lock(&pool.lock);
	for (i = 0; i < readers && !err; i++)
		err = start_worker_locked();
	pthread_mutex_unlock(&pool.lock);
	if (!err)
		err = -pthread_create(&mon, NULL, monitor, NULL);
	if (!err) {
		while (sem_wait(&pool.done) < 0 && errno == EINTR)
			;
	}
	fuse_session_exit(se);		/* a signal only posted `done` */
	pthread_mutex_lock(&pool.lock);
	if (err && !pool.error)
		pool.error = err;
	pthread_mutex_unlock(&pool.lock);

	/* the end: the monitor first (it starts workers), then the workers:
	 * the parked are woken, the rest cancelled, which takes effect in
	 * read; one in a request finishes it first, then sees the end */
	pthread_mutex_lock(&pool.lock);
	pool.exiting = true;
	pthread_cond_signal(&pool.monitor_wake);
	pthread_mutex_unlock(&pool.lock);
	if (!err)
		pthread_join(mon, NULL);
	pthread_mutex_lock(&pool.lock);
	for (i = 0; i < threads; i++) {
		struct worker *w = &pool.w[i];

		if (w->state == W_PARKED)
			pthread_cond_signal(&w->wake);
		else if (w->state == W_RUN)
			pthread_cancel(w->tid);
		/* from here on a slot stays FREE or not: nobody starts or joins */
		w->join = w->state != W_FREE;
	}
	pthread_mutex_unlock(&pool.lock);
	for (i = 0; i < threads; i++)
		if (pool.w[i].join)
			pthread_join(pool.w[i].tid, NULL);

	for (i = 0; i < threads; i++)
		pthread_cond_destroy(&pool.w[i].wake);
	free(pool.w);
	pool.w = NULL;
	return pool.error;
}
