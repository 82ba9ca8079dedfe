/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock.c - the three modes' locks, RCU thread registration, and the
 * per-thread statistics.
 *
 * Modes differ only in what a reader takes around one hash-chain lookup and
 * what a writer takes around one update:
 *
 *	mode	reader			writer
 *	rcu	rcu_read_lock		wlock (readers never wait for it)
 *	global	wlock			wlock (Linux 2.5.40's dcache_lock)
 *	rwlock	rwlock, shared		rwlock, exclusive
 *
 * Every mode frees entries through call_rcu, so reclamation is the same code.
 */
#include <stdlib.h>

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
}

void dc__write_unlock(struct dc_cache *c)
{
	if (c->mode == DC_MODE_RWLOCK)
		pthread_rwlock_unlock(&c->rwlock);
	else
		pthread_mutex_unlock(&c->wlock);
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
