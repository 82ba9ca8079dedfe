/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock.c - the three modes' locks, RCU thread registration, and the
 * per-thread statistics.
 *
 * Modes differ only in what a reader takes around one hash-chain lookup and
 * what a writer takes around one update:
 *
 *	mode	reader			writer
 *	rcu	rcu_read_lock		wlock (readers never wait for it;
 *					misses take its miss side, below)
 *	global	wlock			wlock (Linux 2.5.40's dcache_lock)
 *	rwlock	rwlock, shared		rwlock, exclusive
 *
 * Every mode frees entries through call_rcu, so reclamation is the same code.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#ifdef DC_TSAN
char dc__rcu_token;	/* see dc__rcu_unlock() and dc__rcu_after_grace() */
#endif

/* ---- RCU registration -------------------------------------------------- */

static pthread_key_t reg_key;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void unregister_at_exit(void *arg)
{
	(void)arg;
	rcu_unregister_thread();
}

static void reg_key_create(void)
{
	pthread_key_create(&reg_key, unregister_at_exit);
}

/*
 * Register the calling thread with urcu-memb (dc__thread_enter found it
 * unregistered).  The key's destructor unregisters it when it exits, so
 * threads the caller never sees (libfuse workers) need no set-up.
 */
void dc__thread_register(void)
{
	pthread_once(&reg_once, reg_key_create);
	rcu_register_thread();
	pthread_setspecific(reg_key, (void *)1);
}

/* ---- mode locks -------------------------------------------------------- */

static void mutex_lock_counted(struct dc_cache *c, pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m) == 0)
		return;
	dc__stat_inc(c, DC_ST_LOCK_WAITS);
	pthread_mutex_lock(m);
}

void dc__read_lock(struct dc_cache *c)
{
	switch (c->mode) {
	case DC_MODE_RCU:
		dc__rcu_lock();
		break;
	case DC_MODE_GLOBAL:
		mutex_lock_counted(c, &c->wlock);
		break;
	case DC_MODE_RWLOCK:
		if (pthread_rwlock_tryrdlock(&c->rwlock) != 0) {
			dc__stat_inc(c, DC_ST_LOCK_WAITS);
			pthread_rwlock_rdlock(&c->rwlock);
		}
		break;
	}
}

void dc__read_unlock(struct dc_cache *c)
{
	switch (c->mode) {
	case DC_MODE_RCU:
		dc__rcu_unlock();
		break;
	case DC_MODE_GLOBAL:
		pthread_mutex_unlock(&c->wlock);
		break;
	case DC_MODE_RWLOCK:
		pthread_rwlock_unlock(&c->rwlock);
		break;
	}
}

/* ---- the write lock and its miss side ------------------------------------
 *
 * In rcu mode the write lock has two sides.  A writer (an update, the
 * shrinker, a revalidation) takes wlock and then shuts the misses out:
 * it raises c->wside and waits until every miss slot's count is 0.  A
 * miss's short sections (miss.c: hashing its PENDING entry, settling it;
 * complete.c: reading a directory to list, installing the listing) take
 * the miss side alone: a count in its thread's slot, which no writer
 * passes.  So a writer has the cache to itself, as with
 * one lock; misses in different chain stripes do not wait for each
 * other, nor for a miss preempted in its section, unless a writer comes
 * meanwhile; a writer waits only for the misses already inside
 * (sleeping, woken by the last one out), and misses that come while a
 * writer holds the lock sleep on wside until it is done.  Misses order
 * among themselves with the chain and index stripes (dc__chain_lock,
 * dc__inodes_add).
 * The other modes keep one lock: a miss takes the write lock.
 */

/* The calling thread's miss slot: threads take them in turn, so that
 * each of up to DC_MISS_SLOTS threads counts on a line of its own. */
static unsigned miss_slot(void)
{
	static unsigned next;
	static __thread unsigned mine;

	if (!mine)
		mine = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED) % DC_MISS_SLOTS + 1;
	return mine - 1;
}

/* wside: misses may enter; a writer shuts them out; and some sleep on it */
enum { WS_OPEN, WS_SHUT, WS_SLEEPERS };

/* Sleep while *addr holds val (returns at once if it does not, and may
 * return early: callers look again).  errno is the caller's: the library
 * sets none. */
static void futex_wait(uint32_t *addr, uint32_t val)
{
	int e = errno;

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
	errno = e;
}

static void futex_wake_all(uint32_t *addr)
{
	int e = errno;

	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	errno = e;
}

/*
 * Take our count back.  seq_cst, the decrement and then the load of
 * wside: a writer that saw the count and may sleep on it (shut_misses)
 * raised wside before it looked, so the last miss out sees it raised
 * and wakes the writer; one that sees it lowered had no writer waiting.
 * The decrement is also a release: what the section stored is seen by
 * the writer that acquires the count 0.
 */
static void miss_leave(struct dc_cache *c, uint32_t *n)
{
	uint32_t left = __atomic_sub_fetch(n, 1, __ATOMIC_SEQ_CST);

	dc__race_window();
	if (left == 0 && __atomic_load_n(&c->wside, __ATOMIC_SEQ_CST) != WS_OPEN)
		futex_wake_all(n);
}

void dc__miss_begin(struct dc_cache *c)
{
	uint32_t *n, shut;

	if (c->mode != DC_MODE_RCU) {
		dc__write_lock(c);
		return;
	}
	n = &c->mslots[miss_slot()].n;
	for (;;) {
		/*
		 * seq_cst, the count's increment and then the load of wside:
		 * Dekker's, against shut_misses, which stores wside and then
		 * loads the counts.  Either the writer sees our count and
		 * waits for it, or we see wside raised and back out.  Reading
		 * it open is an acquire of the release in dc__write_unlock:
		 * the last writer's changes are seen in our section.
		 */
		__atomic_add_fetch(n, 1, __ATOMIC_SEQ_CST);
		dc__race_window();
		if (__atomic_load_n(&c->wside, __ATOMIC_SEQ_CST) == WS_OPEN)
			return;
		miss_leave(c, n);
		/* a writer is in: say we sleep (SHUT -> SLEEPERS; left as it
		 * is if the writer has gone, or others said so), then sleep
		 * until dc__write_unlock opens it (at once if it has) */
		dc__stat_inc(c, DC_ST_LOCK_WAITS);
		shut = WS_SHUT;
		__atomic_compare_exchange_n(&c->wside, &shut, WS_SLEEPERS, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		dc__race_window();
		futex_wait(&c->wside, WS_SLEEPERS);
	}
}

void dc__miss_end(struct dc_cache *c)
{
	if (c->mode != DC_MODE_RCU) {
		dc__write_unlock(c);
		return;
	}
	miss_leave(c, &c->mslots[miss_slot()].n);
}

/*
 * Keep misses out (wlock held) and wait for those inside.  Their
 * sections are short and never wait for a writer, but the thread in one
 * may have been preempted: spin a little, then sleep until the last one
 * out of the slot wakes us (miss_leave).
 */
static void shut_misses(struct dc_cache *c)
{
	bool waited = false;
	uint32_t v;

	/* seq_cst: the store before the loads of the counts (dc__miss_begin) */
	__atomic_store_n(&c->wside, WS_SHUT, __ATOMIC_SEQ_CST);
	dc__race_window();
	for (unsigned i = 0; i < DC_MISS_SLOTS; i++) {
		unsigned spins = 0;

		/* seq_cst, and an acquire of miss_leave's release: what the
		 * miss did in its section is seen here */
		while ((v = __atomic_load_n(&c->mslots[i].n, __ATOMIC_SEQ_CST))) {
			waited = true;
			if (++spins < 64)
				caa_cpu_relax();
			else
				futex_wait(&c->mslots[i].n, v);
		}
	}
	if (waited)
		dc__stat_inc(c, DC_ST_LOCK_WAITS);
}

void dc__write_lock(struct dc_cache *c)
{
	if (c->mode == DC_MODE_RWLOCK) {
		if (pthread_rwlock_trywrlock(&c->rwlock) != 0) {
			dc__stat_inc(c, DC_ST_LOCK_WAITS);
			pthread_rwlock_wrlock(&c->rwlock);
		}
		return;
	}
	mutex_lock_counted(c, &c->wlock);
	if (c->mode == DC_MODE_RCU)
		shut_misses(c);
}

void dc__write_unlock(struct dc_cache *c)
{
	if (c->mode == DC_MODE_RWLOCK) {
		pthread_rwlock_unlock(&c->rwlock);
		return;
	}
	if (c->mode != DC_MODE_RCU) {
		pthread_mutex_unlock(&c->wlock);
		return;
	}
	/* release: the writer's changes before the misses that read wside
	 * open (dc__miss_begin); those that said they sleep are woken */
	if (__atomic_exchange_n(&c->wside, WS_OPEN, __ATOMIC_RELEASE) == WS_SLEEPERS) {
		pthread_mutex_unlock(&c->wlock);
		dc__race_window();
		futex_wake_all(&c->wside);
		return;
	}
	pthread_mutex_unlock(&c->wlock);
}

/* The stripe of hash's bucket a miss holds to find and hash a name, or
 * to take it off its chain (rcu mode; the others hold the write lock). */
static pthread_mutex_t *chain_stripe(struct dc_cache *c, uint32_t hash)
{
	return &c->chain_lock[dc__bucket_index(hash, c->shift) % DC_CHAIN_LOCKS];
}

void dc__chain_lock(struct dc_cache *c, uint32_t hash)
{
	if (c->mode == DC_MODE_RCU)
		mutex_lock_counted(c, chain_stripe(c, hash));
}

void dc__chain_unlock(struct dc_cache *c, uint32_t hash)
{
	if (c->mode == DC_MODE_RCU)
		pthread_mutex_unlock(chain_stripe(c, hash));
}

/* ---- per-thread statistics --------------------------------------------- */

/*
 * One slot per thread (dc__tslot): the cache it counts for (by id, since a
 * destroyed cache's address can come back) and its counters.  A thread using two
 * caches alternately re-finds its counters under stat_lock on each switch.
 * Counters outlive their thread (its counts still belong in the sums).
 */
__thread struct dc_tslot dc__tslot;

static struct dc_tstat *tstat_find(struct dc_cache *c)
{
	pthread_t self = pthread_self();
	struct dc_tstat *t;

	pthread_mutex_lock(&c->stat_lock);
	for (t = c->tstats; t; t = t->next)
		if (pthread_equal(t->owner, self))
			break;
	if (!t && (t = dc__calloc(c, sizeof(*t)))) {
		t->owner = self;
		t->next = c->tstats;
		c->tstats = t;
	}
	pthread_mutex_unlock(&c->stat_lock);
	return t;
}

/* The slow path of dc__stat_add: this thread's first count for c. */
void dc__stat_add_slow(struct dc_cache *c, int which, uint64_t n)
{
	struct dc_tstat *t = tstat_find(c);

	if (!t) {
		__atomic_add_fetch(&c->spill.v[which], n, __ATOMIC_RELAXED);
		return;
	}
	dc__tslot.id = c->id;
	dc__tslot.st = t;
	dc__store(t->v[which], dc__load(t->v[which]) + n);
}

void dc__stat_sum(struct dc_cache *c, uint64_t out[DC_ST_NR])
{
	struct dc_tstat *t;
	int i;

	for (i = 0; i < DC_ST_NR; i++)
		out[i] = dc__load(c->spill.v[i]);
	pthread_mutex_lock(&c->stat_lock);
	for (t = c->tstats; t; t = t->next)
		for (i = 0; i < DC_ST_NR; i++)
			out[i] += dc__load(t->v[i]);
	pthread_mutex_unlock(&c->stat_lock);
}

void dc__stat_free(struct dc_cache *c)
{
	struct dc_tstat *t, *next;

	for (t = c->tstats; t; t = next) {
		next = t->next;
		dc__free(c, t, sizeof(*t));
	}
	c->tstats = NULL;
}
