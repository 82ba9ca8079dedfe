// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * loop.c - dcfs's request loop: few readers of /dev/fuse, more only while
 * the readers are stuck.
 *
 * Why not libfuse's fuse_session_loop_mt: it keeps every idle worker
 * blocked in read(/dev/fuse), and the kernel wakes them in turn (an
 * exclusive FIFO wait), so with its ten workers nearly every request wakes
 * a thread that slept, most often on another CPU: an inter-processor
 * interrupt (under virtualization, an exit to the hypervisor), so a
 * metadata load runs much faster on as many workers as CPUs than on ten
 * (docs/dcfs.md, "Worker threads").  Fewer workers alone is no answer: one
 * request that waits on the disk (an fsync) then holds up every other.
 *
 * So: `readers` threads (default one per CPU dcfs may run on) read and
 * serve requests.  A reader that finishes a request reads the next, which
 * under load is already queued: no sleep, no wake-up.  A monitor thread
 * looks every TICK: when every running worker has been on one request for
 * longer than a tick, requests are piling up behind them, so it wakes the
 * latest parked worker or starts a new one, up to `threads` (blocked
 * workers aside, below).  An extra worker parks again after a request
 * once some other worker is free to read, and exits after PARK_EXIT_S
 * parked.  While no request arrives for IDLE_TICKS the monitor sleeps,
 * and the first request after wakes it.  The tick is long (10 ms)
 * because each one preempts someone: a short tick alone would cost a
 * long build a noticeable share of the daemon's CPU.
 *
 * Blocked workers: a few host calls may block for tens of seconds (an open
 * that breaks a lease waits up to /proc/sys/fs/lease-break-time).  Counted
 * as busy, a dozen of them would hold all `threads` workers and every
 * other user's requests would wait behind them.  So a request about to
 * make such a call says so (loop_block_begin) and its worker is "blocked"
 * until loop_block_end: the monitor, the parking rule and the `threads`
 * cap all ignore it, and if nobody else is free to read, a worker is woken
 * or started at once.  The pool may thus grow to `threads` plus the
 * blocked workers, and those are bounded instead: BLOCK_MAX in all and
 * BLOCK_PER_UID per user.  Past either, begin says no and the request
 * must not block (the caller answers EAGAIN), so one user's stuck opens
 * cannot take the threads of others.  A worker whose block ended parks
 * after its request while the pool has more than `threads` unblocked
 * workers, even if the others are busy.  A ring thread (uring.c) is its
 * queue's only reader and the ring's threads are fixed: begin says no to
 * it, and the request is answered EWOULDBLOCK rather than made to wait.
 *
 * Stuck workers: any other host call may never return either (a lookup
 * that crosses into a FUSE mount inside the source whose daemon stopped
 * answering).  So the monitor counts a worker on one request for longer
 * than AGE_NS as blocked too ("stuck"), until that request ends: the
 * pool grows past it.  A uid with `threads` stuck requests has its next
 * requests refused as they are read (refuse_stuck), until one ends:
 * otherwise its stuck requests would take the pool's slots one by one.
 * Fewer than 2 x `threads` of a uid's requests get stuck so (its
 * requests are served until `threads` of them are counted, and at most
 * `threads` run uncounted), besides its lease waits, and the pool has
 * room for them beside the blocked ones; a user whose requests are
 * merely slow is refused only with `threads` of them over a second at
 * once.  Requests that take no
 * reply or that the session needs (FORGET, INTERRUPT, INIT, RELEASE...)
 * are never refused, nor those the kernel sends on its own (pid, uid and
 * gid 0: the last RELEASE of a file, a writeback), which no user's count
 * holds.  A caller the kernel cannot name in dcfs's pid namespace has
 * pid 0 too, and is counted under its uid.
 *
 * Locking: pool.lock guards the worker slots, parking, the monitor's sleep,
 * the blocked counts (a worker's `blocked`, the per-uid table) and the
 * stuck marks and counts.  The request path takes no lock unless it
 * blocks (begin and end are rare) or its worker was stuck: a worker
 * publishes the start of a request in its own busy_since (read by the
 * monitor and by workers deciding to park) and checks monitor_asleep,
 * and while any worker is stuck, it reads the stuck counts by uid
 * (refuse_stuck) without the lock.
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
#include <unistd.h>

#include <linux/fuse.h>

#include "common/clock.h"
#include "dcfs.h"

#define TICK_NS		10000000ull	/* 10 ms: see "Stalls" in docs/dcfs.md */
#define IDLE_TICKS	100		/* 1 s without a request: the monitor sleeps */
#define PARK_EXIT_S	2		/* an extra worker parked this long exits */
/*
 * Requests blocked in a long host call (loop_block_begin), in all and per
 * uid.  Each may cost a thread beyond `threads`, so BLOCK_MAX bounds those
 * threads (and their stacks).  BLOCK_PER_UID is what one user may hold:
 * enough for a few programs each waiting on a leased file, and an eighth
 * of BLOCK_MAX, so that it takes eight users at it before another user's
 * open is refused rather than waited for.
 */
#define BLOCK_MAX	64
#define BLOCK_PER_UID	8
/* A request this old holds a stuck worker: a second, long for a host
 * call that works (a big fsync, a slow network source may take longer,
 * and cost a thread beyond `threads` while they do), short for the other
 * users, who wait that long for the pool to grow. */
#define AGE_NS		1000000000ull
/* uids with stuck requests that are counted: one past them is neither
 * counted nor refused (it takes 64 users with stuck requests) */
#define STUCK_UIDS	64
#define NO_UID		UINT32_MAX	/* a request with no caller (request_uid) */

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
	bool blocked;			/* pool.lock: between loop_block_begin and _end,
					 * or stuck */
	/* pool.lock to change: on its request for over AGE_NS and counted
	 * as blocked; loaded unlocked by the worker after a request (serve) */
	_Atomic bool stuck;
	unsigned stuck_slot;		/* pool.lock: its uid's in stuck_uid, or STUCK_UIDS */
	uint64_t parked_seq;		/* pool.lock: when it parked; the latest is woken first */
	pthread_cond_t wake;
	struct fuse_buf buf;		/* the worker's own; libfuse sizes it */
	/* CLOCK_MONOTONIC ns when the current request started; 0 between
	 * requests.  Written only by the worker. */
	_Atomic uint64_t busy_since;
	/* the current request's caller, stored before busy_since */
	_Atomic uint32_t req_uid;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t monitor_wake;
	struct fuse_session *se;
	struct worker *w;
	unsigned nslots;		/* 3 x threads + BLOCK_MAX: the most workers */
	unsigned threads;		/* the most unblocked workers */
	unsigned readers;		/* workers kept running */
	_Atomic unsigned running;	/* written under pool.lock; blocked included */
	unsigned blocked_workers;	/* running workers that are blocked */
	unsigned blocked;		/* all blocked requests, ring threads' too */
	/* per uid: a slot for each uid with blocked requests (n > 0); at
	 * most BLOCK_MAX are, so BLOCK_MAX slots always do */
	struct { uid_t uid; unsigned n; } blocked_uid[BLOCK_MAX];
	bool block_refused;		/* reported once */
	_Atomic unsigned stuck;		/* stuck workers; written under pool.lock */
	/* stuck workers by uid (n > 0: in use), written under pool.lock and
	 * read without it by refuse_stuck */
	struct { _Atomic uint32_t uid, n; } stuck_uid[STUCK_UIDS];
	_Atomic bool stuck_refused;	/* reported once */
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

/* This thread's worker; NULL on any other thread (ring threads). */
static __thread struct worker *self;
/* Between loop_block_begin and _end: the uid counted. */
static __thread bool self_blocked;
static __thread uid_t self_blocked_uid;

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

/* Running workers that are not blocked.  Caller holds pool.lock. */
static unsigned active_locked(void)
{
	return pool.running - pool.blocked_workers;
}

/*
 * Is every running, unblocked worker but `me` on a request that started
 * before `limit`?  Then nobody is reading /dev/fuse, and has not been for
 * a while.  Caller holds pool.lock (the set of running workers is stable).
 */
static bool stuck_locked(const struct worker *me, uint64_t limit)
{
	unsigned i, others = 0;

	for (i = 0; i < pool.nslots; i++) {
		const struct worker *w = &pool.w[i];
		uint64_t t;

		if (w == me || w->state != W_RUN || w->blocked)
			continue;
		others++;
		t = atomic_load(&w->busy_since);
		if (t == 0 || t > limit)
			return false;
	}
	return others > 0 || me == NULL;
}

/*
 * After a request: a worker beyond the readers parks while another worker
 * is free to read, and, whether or not one is, while there are more than
 * `threads` (a block ended).  Returns false if the loop is ending.  Caller
 * holds pool.lock.
 */
static bool maybe_park_locked(struct worker *w)
{
	unsigned active = active_locked();
	struct timespec until;
	int rc = 0;

	if (active <= pool.readers ||
	    (active <= pool.threads && stuck_locked(w, clock_ns() - TICK_NS)))
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

/* ---- stuck workers (see the top) ------------------------------------------ */

/* w's request has ended, or had as it was counted stuck: w counts again.
 * Caller holds pool.lock. */
static void unstick_locked(struct worker *w)
{
	if (!atomic_load(&w->stuck))
		return;
	atomic_store(&w->stuck, false);
	atomic_fetch_sub(&pool.stuck, 1);
	CTR_ADD(workers_stuck, -1);
	if (w->stuck_slot < STUCK_UIDS)
		atomic_fetch_sub(&pool.stuck_uid[w->stuck_slot].n, 1);
	w->blocked = false;
	pool.blocked_workers--;
}

/* uid's slot in stuck_uid, or a free one, or STUCK_UIDS.  Caller holds
 * pool.lock. */
static unsigned stuck_slot_locked(uint32_t uid)
{
	unsigned i, spare = STUCK_UIDS;

	for (i = 0; i < STUCK_UIDS; i++) {
		if (atomic_load(&pool.stuck_uid[i].n) == 0) {
			if (spare == STUCK_UIDS)
				spare = i;
		} else if (atomic_load(&pool.stuck_uid[i].uid) == uid) {
			return i;
		}
	}
	return spare;
}

/* Count as blocked each unblocked worker on one request since before
 * limit, for the request's uid.  Caller holds pool.lock. */
static void age_locked(uint64_t limit)
{
	unsigned i;

	for (i = 0; i < pool.nslots; i++) {
		struct worker *w = &pool.w[i];
		uint32_t uid;
		uint64_t t;

		if (w->state != W_RUN || w->blocked)
			continue;
		t = atomic_load(&w->busy_since);
		if (t == 0 || t > limit)
			continue;
		/* stored before busy_since (serve): this request's */
		uid = atomic_load(&w->req_uid);
		w->stuck_slot = uid == NO_UID ? STUCK_UIDS : stuck_slot_locked(uid);
		if (w->stuck_slot < STUCK_UIDS) {
			/* the uid before the count: refuse_stuck loads them
			 * the other way round */
			atomic_store(&pool.stuck_uid[w->stuck_slot].uid, uid);
			atomic_fetch_add(&pool.stuck_uid[w->stuck_slot].n, 1);
		}
		w->blocked = true;
		pool.blocked_workers++;
		atomic_fetch_add(&pool.stuck, 1);
		CTR_ADD(workers_stuck, 1);
		/*
		 * seq_cst store of the mark, then seq_cst load of busy_since;
		 * serve stores busy_since and then loads the mark: either we
		 * see its request ended (or another begun) and take the mark
		 * back, or it sees the mark and does.  unstick_locked, under
		 * the lock, does it once.
		 */
		atomic_store(&w->stuck, true);
		if (atomic_load(&w->busy_since) != t)
			unstick_locked(w);
	}
}

/* A request the kernel sends on its own, with no caller's credentials
 * (nocreds: a file's last RELEASE, a writeback, FORGET...). */
static bool kernels_own(const struct fuse_in_header *in)
{
	return in->pid == 0 && in->uid == 0 && in->gid == 0;
}

/*
 * The request just read (len bytes at mem) is refused when its uid has
 * `threads` requests stuck (see the top): answered as libfuse answers an
 * error, one write of a bare reply header, and true.  A LOOKUP gets
 * ENOMEM, which the kernel passes back without dropping the name it was
 * revalidating (any other error but EINTR would, detaching whatever is
 * mounted on it; EINTR is kept only by recent kernels, and programs
 * retry EINTR at once, in a loop); others EAGAIN.  Reads the counts
 * without the lock: a count seen late lets a request or two more
 * through, or refuses one just after a stuck request ended.
 */
static bool refuse_stuck(const void *mem, size_t len)
{
	const struct fuse_in_header *in = mem;
	struct fuse_out_header out;
	unsigned i, threads = pool.threads;
	bool over = false, say;

	if (len < sizeof(*in) || kernels_own(in))
		return false;
	switch (in->opcode) {
	case FUSE_INIT:
	case FUSE_DESTROY:
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
	case FUSE_NOTIFY_REPLY:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		return false;
	}
	for (i = 0; i < STUCK_UIDS && !over; i++)
		over = atomic_load(&pool.stuck_uid[i].n) >= threads &&
		       atomic_load(&pool.stuck_uid[i].uid) == in->uid;
	if (!over)
		return false;
	out = (struct fuse_out_header){
		.len = sizeof(out),
		.error = in->opcode == FUSE_LOOKUP ? -ENOMEM : -EAGAIN,
		.unique = in->unique,
	};
	CTR_ADD(stuck_refused, 1);
	/* ENOENT: the request is gone (the connection was aborted) */
	if (write(fuse_session_fd(pool.se), &out, sizeof(out)) < 0 && errno != ENOENT)
		dcfs_log(LOG_WARNING, "refusing a request: %s", strerror(errno));
	say = !atomic_exchange(&pool.stuck_refused, true);
	if (say)
		dcfs_log(LOG_WARNING, "uid %u: %u requests stuck in host calls for over a "
			 "second, its next ones are refused until one ends (said once)",
			 (unsigned)in->uid, threads);
	return true;
}

/* The caller of the request whose header is at mem (len bytes), or
 * NO_UID: the kernel's own request, which no user's count holds. */
static uint32_t request_uid(const void *mem, size_t len)
{
	const struct fuse_in_header *in = mem;

	return len >= sizeof(*in) && !kernels_own(in) ? in->uid : NO_UID;
}

/* ---- serving ------------------------------------------------------------- */

static void serve(struct worker *w)
{
	bool more = true;
	size_t hdr;
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
		/* the header, unless a splice read left it in a pipe (dcfs
		 * turns those off: ops.c); then the request counts for no one */
		hdr = w->buf.flags & FUSE_BUF_IS_FD ? 0 : (size_t)res;
		if (atomic_load_explicit(&pool.stuck, memory_order_relaxed) &&
		    refuse_stuck(w->buf.mem, hdr))
			continue;
		/* relaxed: the seq_cst store of busy_since below publishes
		 * it, and its readers load busy_since first */
		atomic_store_explicit(&w->req_uid, request_uid(w->buf.mem, hdr),
				      memory_order_relaxed);
		/*
		 * seq_cst store, then seq_cst load: pairs with the monitor's
		 * store to monitor_asleep and load of busy_since before it
		 * sleeps, so either it sees this request or we see it asleep.
		 */
		atomic_store(&w->busy_since, clock_ns());
		if (atomic_load(&pool.monitor_asleep))
			wake_monitor();
		fuse_session_process_buf(pool.se, &w->buf);
		stash_clear();	/* nothing a request stashed outlives it */
		/* seq_cst store, then seq_cst load: see age_locked */
		atomic_store(&w->busy_since, 0);
		if (atomic_load(&w->stuck)) {
			pthread_mutex_lock(&pool.lock);
			unstick_locked(w);
			pthread_mutex_unlock(&pool.lock);
		}
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
	caller_reset();
	self = arg;
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

/*
 * Any unblocked worker in a request?  A blocked one keeps no monitor
 * awake: it may wait for a minute, and needs nobody.  But with no
 * unblocked worker running (its replacement could not start) nobody
 * reads, so no request would wake the monitor: it stays awake to retry.
 * Caller holds pool.lock.
 */
static bool any_busy_locked(void)
{
	unsigned i;

	if (active_locked() == 0)
		return true;
	for (i = 0; i < pool.nslots; i++)
		if (!pool.w[i].blocked && atomic_load(&pool.w[i].busy_since))
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
		age_locked(clock_ns() - AGE_NS);
		if (active_locked() < pool.threads && !fuse_session_exited(pool.se) &&
		    stuck_locked(NULL, clock_ns() - TICK_NS))
			add_reader_locked();
		idle = any_busy_locked() ? 0 : idle + 1;
		if (idle < IDLE_TICKS)
			continue;
		/* seq_cst store, then seq_cst loads: see work() */
		atomic_store(&pool.monitor_asleep, true);
		if (any_busy_locked()) {
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

/* uid's slot in the table of blocked uids, or a free one (n == 0) if it
 * has none.  Caller holds pool.lock and pool.blocked < BLOCK_MAX (so a
 * slot is free). */
static unsigned blocked_uid_slot_locked(uid_t uid)
{
	unsigned i, spare = BLOCK_MAX;

	for (i = 0; i < BLOCK_MAX; i++) {
		if (pool.blocked_uid[i].n == 0) {
			if (spare == BLOCK_MAX)
				spare = i;
		} else if (pool.blocked_uid[i].uid == uid) {
			return i;
		}
	}
	return spare;
}

/*
 * See "Blocked workers" at the top.  Not nested: one begin, then its end,
 * in the same request on the same thread.
 */
bool loop_block_begin(uid_t uid)
{
	struct worker *w = self;
	unsigned i;

	/* a ring thread (uring.c) is its queue's only reader: it must not
	 * wait, or every request of that queue waits with it */
	if (!w)
		return false;
	pthread_mutex_lock(&pool.lock);
	if (atomic_load(&w->stuck)) {
		/* counted as blocked already, until its request ends */
		pthread_mutex_unlock(&pool.lock);
		return true;
	}
	i = pool.blocked < BLOCK_MAX ? blocked_uid_slot_locked(uid) : BLOCK_MAX;
	if (i == BLOCK_MAX || pool.blocked_uid[i].n >= BLOCK_PER_UID) {
		bool say = !pool.block_refused;

		pool.block_refused = true;
		pthread_mutex_unlock(&pool.lock);
		if (say)
			dcfs_log(LOG_WARNING, "uid %u: too many requests waiting on the host "
				 "(a lease break?), more are answered EAGAIN "
				 "(said once; limits %d per user, %d in all)",
				 (unsigned)uid, BLOCK_PER_UID, BLOCK_MAX);
		return false;
	}
	pool.blocked_uid[i].uid = uid;
	pool.blocked_uid[i].n++;
	pool.blocked++;
	w->blocked = true;
	pool.blocked_workers++;
	/*
	 * It no longer reads for the others.  If nobody else is free to,
	 * replace it now rather than a tick or two later: it is gone for
	 * long, and this is not the common path.
	 */
	if (!pool.exiting && !fuse_session_exited(pool.se) &&
	    active_locked() < pool.threads && stuck_locked(NULL, UINT64_MAX))
		add_reader_locked();
	pthread_mutex_unlock(&pool.lock);
	self_blocked = true;
	self_blocked_uid = uid;
	return true;
}

/* The worker counts again; after its request it parks if the pool is over
 * `threads` (maybe_park_locked). */
void loop_block_end(void)
{
	struct worker *w = self;
	unsigned i;

	if (!self_blocked)
		return;
	self_blocked = false;
	pthread_mutex_lock(&pool.lock);
	for (i = 0; i < BLOCK_MAX; i++) {
		if (pool.blocked_uid[i].n && pool.blocked_uid[i].uid == self_blocked_uid) {
			pool.blocked_uid[i].n--;
			break;
		}
	}
	pool.blocked--;
	w->blocked = false;
	pool.blocked_workers--;
	pthread_mutex_unlock(&pool.lock);
}

/* See dcfs.h.  Set before the first worker starts, which serves INIT. */
unsigned dcfs_loop_slots(void)
{
	return pool.nslots;
}

/* Serve `se` until it ends; returns 0 or the negative errno that ended
 * it, and in *left the workers that did not end (see dcfs.h). */
int dcfs_loop(struct fuse_session *se, unsigned threads, unsigned readers,
	      unsigned *left)
{
	struct timespec until;
	pthread_t mon;
	unsigned i, nslots;
	int err = 0;

	*left = 0;
	if (readers == 0) {
		cpu_set_t cpus;

		readers = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ?
			  (unsigned)CPU_COUNT(&cpus) : 1;
	}
	if (readers > threads)
		readers = threads;
	/* a slot for each of `threads`, for each worker that may block,
	 * and for what one user's stuck requests may take (fewer than
	 * 2 x `threads`: see the top), so that one user cannot fill them */
	nslots = 3 * threads + BLOCK_MAX;
	pool.w = calloc(nslots, sizeof(*pool.w));
	if (!pool.w)
		return -ENOMEM;
	for (i = 0; i < nslots; i++)
		pthread_cond_init(&pool.w[i].wake, NULL);
	pool.nslots = nslots;
	pool.threads = threads;
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
	for (i = 0; i < nslots; i++) {
		struct worker *w = &pool.w[i];

		if (w->state == W_PARKED)
			pthread_cond_signal(&w->wake);
		else if (w->state == W_RUN)
			pthread_cancel(w->tid);
		/* from here on a slot stays FREE or not: nobody starts or joins */
		w->join = w->state != W_FREE;
	}
	pthread_mutex_unlock(&pool.lock);
	until = join_deadline();
	for (i = 0; i < nslots; i++)
		if (pool.w[i].join && pthread_timedjoin_np(pool.w[i].tid, NULL, &until) != 0)
			++*left;
	/* a worker stuck in a host call still uses its slot */
	if (*left)
		return pool.error;

	for (i = 0; i < nslots; i++)
		pthread_cond_destroy(&pool.w[i].wake);
	free(pool.w);
	pool.w = NULL;
	return pool.error;
}
