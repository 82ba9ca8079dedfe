/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lru.c - bounded memory: two CLOCK lists (second chance) and the shrinker.
 *
 * Every unused entry except the root sits on exactly one list, the
 * negative list if it was negative when it last moved, else the positive
 * list, and carries DC_F_LISTED.  A held entry (a reference, or a
 * directory's cached children) the shrinker passes is taken off
 * (isolate(), counted in nr_isolated) and goes back when its count drops
 * to 0 (dc_put -> dc__lru_relist), so the shrinker never passes an entry
 * it cannot take.  Entries change state in place, so a list may hold a
 * few of the other kind; the shrinker moves them over as it passes.
 * Negatives on the positive list (a name unlinked in place) are counted,
 * c->nr_neg_astray, and the negative cap's pass looks for them there when
 * the negative list alone cannot bring the count under the cap, and only
 * then; it stops as soon as none is left, so its cost is that of the
 * positive entries it passes on the way, about N / max_negative a
 * negative evicted when every negative is made by an unlink.  Nothing
 * else removes an entry from a list, which is why a singly linked FIFO is
 * enough: an update that drops an entry only marks it DEAD, and the
 * shrinker frees it the next time it passes (dead entries go first,
 * whatever their mark).
 *
 * A lookup sets DC_F_REFERENCED only when it is clear, so a hot entry
 * costs one shared write per pass of the clock, not one per lookup.  A
 * hit on a one-probe path node (path.c) reads nothing of its entry, so
 * sets no mark: an entry marked as a path's answer (DC_F_HASPATH) is
 * passed over once, losing its nodes.
 *
 * Locking: the shrinker holds the write lock (it unhashes victims, and
 * claims them by moving count 0 -> DC_COUNT_DEAD so no reader can pin
 * them any more) and lru_lock inside it, and takes ptab_lock inside both
 * to take an entry's path nodes.  dc_put takes lru_lock alone, to
 * put an isolated entry back; an in-place change may claim the entry
 * while such a put runs, so dc__replace_inode takes lru_lock once after
 * its claim of an entry off the lists, to let the put finish before it
 * counts the entry astray or not.  Victims are freed after a grace
 * period, outside both locks.  Parents of victims lose the count their
 * child held; a directory with cached children is never a victim, so the
 * cache always evicts leaves first.
 */
#include <signal.h>

#include "internal.h"

static void list_push(struct dc_lru *l, struct dc_dentry *d)
{
	d->lru_next = NULL;
	if (l->tail)
		l->tail->lru_next = d;
	else
		l->head = d;
	l->tail = d;
}

static struct dc_dentry *list_pop(struct dc_lru *l)
{
	struct dc_dentry *d = l->head;

	if (d) {
		l->head = d->lru_next;
		if (!l->head)
			l->tail = NULL;
	}
	return d;
}

/* Put d at the tail of the list its state says.  lru_lock held. */
static void lru_put(struct dc_cache *c, struct dc_dentry *d)
{
	uint16_t mode = dc__load(d->mode);

	dc__race_window();
	if (mode == 0) {
		dc__flags_set(d, DC_F_ONNEG | DC_F_LISTED);
		list_push(&c->lru_neg, d);
	} else {
		dc__flags_clear(d, DC_F_ONNEG);
		dc__flags_set(d, DC_F_LISTED);
		list_push(&c->lru_pos, d);
	}
}

/*
 * d, just popped, is held: leave it off the lists, as Linux's
 * dentry_lru_isolate does, so that the shrinker never passes it again
 * while it is held; the dc_put that drops its count to 0 puts it back.
 * seq_cst on both sides (here: clear LISTED, then load the count; in
 * dc_put: drop the count, then load LISTED) so that at least one of us
 * sees the other's store: an unused entry is never left off the lists.
 * lru_lock held.
 */
static void isolate(struct dc_cache *c, struct dc_dentry *d)
{
	__atomic_and_fetch(&d->flags, ~DC_F_LISTED, __ATOMIC_SEQ_CST);
	dc__race_window();
	if (__atomic_load_n(&d->count, __ATOMIC_SEQ_CST) == 0)
		lru_put(c, d);
	else
		c->nr_isolated++;
}

/* Back onto a list, if d is unused and off them.  lru_lock held. */
static void relist_locked(struct dc_cache *c, struct dc_dentry *d)
{
	/* the root is never listed (a caller's extra dc_put could bring its
	 * count to 0: it still must never be evicted).  acquire: pairs with
	 * dc__replace_inode's unclaim, so a 0 that ends an in-place change
	 * comes with the mode it stored, which lru_put reads */
	if (!(dc__flags(d) & (DC_F_LISTED | DC_F_ROOT)) && dc__load_acq(d->count) == 0) {
		c->nr_isolated--;
		lru_put(c, d);
	}
}

/*
 * d, a former root (never listed), joins the lists' accounting, and the
 * cache's own count on it goes: listed if that leaves it unused, else off
 * the lists, as if the shrinker had passed it, until the dc_put (or the
 * eviction of its last child) that does.  Write lock held; d no longer
 * carries DC_F_ROOT.
 */
void dc__lru_adopt(struct dc_cache *c, struct dc_dentry *d)
{
	pthread_mutex_lock(&c->lru_lock);
	c->nr_isolated++;
	/* seq_cst: see isolate() */
	if (__atomic_sub_fetch(&d->count, 1, __ATOMIC_SEQ_CST) == 0)
		relist_locked(c, d);
	pthread_mutex_unlock(&c->lru_lock);
}

/* The last reference to an isolated entry is gone (dc_put), or a claim
 * that may have hidden a dc_put's 0 is over (dc__replace_inode).  Under
 * lru_lock the test is repeated: another thread may have taken d again
 * (its dc_put will come here), or put it back already. */
void dc__lru_relist(struct dc_cache *c, struct dc_dentry *d)
{
	pthread_mutex_lock(&c->lru_lock);
	relist_locked(c, d);
	pthread_mutex_unlock(&c->lru_lock);
}

/* A new entry joins the lists.  Write lock or miss side held. */
void dc__lru_add(struct dc_cache *c, struct dc_dentry *d)
{
	pthread_mutex_lock(&c->lru_lock);
	lru_put(c, d);
	pthread_mutex_unlock(&c->lru_lock);
}

/* Claim d for freeing if nobody holds it: count 0 -> DEAD. */
static bool claim(struct dc_dentry *d)
{
	int32_t zero = 0;

	/* acquire: pairs with dc_put's release, the last holder is done */
	return __atomic_compare_exchange_n(&d->count, &zero, DC_COUNT_DEAD, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

struct targets {
	uint64_t entries, negative;
};

static bool over_negative(struct dc_cache *c, void *arg)
{
	return dc__load(c->nr_negative) > ((struct targets *)arg)->negative;
}

/* Over the negative cap with negatives still on the positive list. */
static bool over_negative_astray(struct dc_cache *c, void *arg)
{
	return c->nr_neg_astray && over_negative(c, arg);
}

static bool over_entries(struct dc_cache *c, void *arg)
{
	return dc__load(c->nr_entries) > ((struct targets *)arg)->entries;
}

/* d, popped from l, back at the tail of the list its state says: 1 if
 * that is the other list.  lru_lock held. */
static unsigned put_back(struct dc_cache *c, struct dc_lru *l, struct dc_dentry *d)
{
	lru_put(c, d);
	return (dc__flags(d) & DC_F_ONNEG) ? l != &c->lru_neg : l != &c->lru_pos;
}

/*
 * Look at up to budget entries of list l while *over says the cache is
 * over its limit; evict what can go onto *victims.  Returns how many it
 * put back on the other list.  Write lock and lru_lock held.
 */
static unsigned scan_list(struct dc_cache *c, struct dc_lru *l, uint64_t budget,
			  bool (*over)(struct dc_cache *, void *), void *arg,
			  struct dc_dentry **victims, long *n)
{
	struct dc_dentry *d;
	unsigned moved = 0;
	uint32_t fl;

	while (budget-- && over(c, arg) && (d = list_pop(l))) {
		fl = dc__flags(d);
		/* from here it is evicted, isolated or put where its state says */
		if (dc__astray(d))
			c->nr_neg_astray--;
		/* not negative (positive now, or a lookup in flight): the
		 * negative cap is no reason to evict it */
		if ((over == over_negative || over == over_negative_astray) &&
		    !dc__is_negative(d) && !(fl & DC_F_DEAD)) {
			moved += put_back(c, l, d);
			continue;
		}
		/* used since the last pass: a second chance.  An entry
		 * marked as a one-probe path's answer counts as used (the
		 * hits leave no mark), and loses its nodes, so that it keeps
		 * its place next time only if a walk of the path comes by
		 * again (marking it, and making the node anew).  One chance
		 * for either: each scan may pass an entry twice. */
		if (!(fl & DC_F_DEAD) && (fl & (DC_F_REFERENCED | DC_F_HASPATH))) {
			if (fl & DC_F_REFERENCED)
				dc__flags_clear(d, DC_F_REFERENCED);
			if (fl & DC_F_HASPATH)
				dc__path_forget_leaf(c, d);
			moved += put_back(c, l, d);
			continue;
		}
		if (!claim(d)) {
			isolate(c, d);
			continue;
		}
		dc__flags_clear(d, DC_F_LISTED);
		if (dc__is_negative(d))
			__atomic_sub_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&c->nr_entries, 1, __ATOMIC_RELAXED);
		dc__unhash(c, d);
		/* the child's count on its parent goes with it; the parent
		 * may become a victim itself on a later pass (seq_cst: see
		 * isolate) */
		if (d->parent &&
		    __atomic_sub_fetch(&d->parent->count, 1, __ATOMIC_SEQ_CST) == 0)
			relist_locked(c, d->parent);
		d->lru_next = *victims;
		*victims = d;
		(*n)++;
	}
	return moved;
}

/*
 * Evict until at most target entries and neg_target negative ones remain,
 * or until the scans below find nothing more to take.  Returns the number
 * evicted.  Not inside a read-side section.
 */
static long collect(struct dc_cache *c, uint64_t target, uint64_t neg_target,
		    struct dc_dentry **victimsp)
{
	struct targets t = { target, neg_target };
	struct dc_dentry *victims = NULL;
	uint64_t len, moved;
	long n = 0, before;

	dc__write_lock(c);
	pthread_mutex_lock(&c->lru_lock);
	/* each scan may pass an entry twice: the first look may only clear
	 * its mark (and take its path nodes) */
	len = dc__load(c->nr_entries) * 2 + 2;
	scan_list(c, &c->lru_neg, len, over_negative, &t, &victims, &n);
	scan_list(c, &c->lru_pos, len, over_negative_astray, &t, &victims, &n);
	/*
	 * Rounds of both lists while one takes something or moves an entry
	 * to the other list: the scan of the negative list can put entries
	 * on the positive one behind its scan (a lookup's entry, listed
	 * negative while PENDING, that settled positive; a directory whose
	 * last child it took), and the scan of the positive list negatives
	 * unlinked in place, which the next round takes.  Nothing changes an
	 * entry's sign under the write lock, so an entry moves once and the
	 * rounds end; at most four, so that readers marking entries as the
	 * scans pass cannot hold the locks here for a round per entry taken.
	 */
	for (int round = 0; round < 4 && over_entries(c, &t); round++) {
		before = n;
		moved = scan_list(c, &c->lru_pos, len, over_entries, &t, &victims, &n);
		moved += scan_list(c, &c->lru_neg, len, over_entries, &t, &victims, &n);
		if (n == before && !moved)
			break;
	}
	pthread_mutex_unlock(&c->lru_lock);
	dc__write_unlock(c);
	dc__stat_add(c, DC_ST_EVICTIONS, (uint64_t)n);
	*victimsp = victims;
	return n;
}

long dc__shrink(struct dc_cache *c, uint64_t target, uint64_t neg_target)
{
	struct dc_dentry *victims;
	long n = collect(c, target, neg_target, &victims);

	dc__free_batch(c, victims, (uint64_t)n);
	return n;
}

/*
 * The same, down to target entries, and the victims freed (their
 * backend resources released) before it returns: for a backend that ran
 * out of descriptors.  Not inside a read-side section.
 */
long dc__shrink_now(struct dc_cache *c, uint64_t target)
{
	struct dc_dentry *victims;
	long n = collect(c, target, target < c->max_negative ? target : c->max_negative,
			 &victims);

	if (victims)
		dc__free_list_now(c, victims);
	return n;
}

/*
 * The backend is out of descriptors (hostfs keeps one per cached
 * directory and symlink): evict a quarter of the cache (at most
 * DC_FREE_SOME_MAX entries), unused entries only, leaves first, and wait
 * until what they held is released.  True when the caller should ask the
 * backend again: something was freed, here or by another thread since
 * the caller read nr_freed_now as seen (whose shrink may have left this
 * one nothing to take).  Called with no lock held and outside any
 * read-side section.  The caller may own a PENDING or REVAL entry, which
 * is why a backend's release() must not look names up (dcache.h): it
 * could wait on that entry.
 */
bool dc__free_some(struct dc_cache *c, uint64_t seen)
{
	uint64_t n = dc__load(c->nr_entries), take = n / 4 + 1;

	if (take > DC_FREE_SOME_MAX)
		take = DC_FREE_SOME_MAX;
	if (n > take && dc__shrink_now(c, n - take) > 0) {
		/* relaxed: a count compared for change, ordering nothing */
		__atomic_add_fetch(&c->nr_freed_now, 1, __ATOMIC_RELAXED);
		return true;
	}
	return dc__load(c->nr_freed_now) != seen;
}

/* Evict down to 15/16 of the caps, so the work is done in batches
 * rather than one entry per insert. */
static void shrink_to_target(struct dc_cache *c)
{
	dc__shrink(c, c->max_entries - c->max_entries / 16,
		   c->max_negative - c->max_negative / 16);
}

/*
 * Ask the shrinker thread for a pass.  Read first without the lock: a
 * request still set has not been taken yet, and the thread takes it
 * (shrinker_main) before its pass reads the counts under the write lock,
 * so that pass counts the entry this adder added.  (Had the pass already
 * come and gone, its clearing of the request came before our insert in
 * the write lock's order -- a miss's insert in its miss side, which the
 * pass's write lock orders the same way -- so we would read it clear, or
 * a newer request.)
 */
static void kick_shrinker(struct dc_cache *c)
{
	if (__atomic_load_n(&c->shrink_wanted, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&c->shrink_lock);
	__atomic_store_n(&c->shrink_wanted, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&c->shrink_cv);
	pthread_mutex_unlock(&c->shrink_lock);
}

/*
 * Called after adding entries.  A little over a cap: the shrinker thread
 * evicts, so the thread that missed neither evicts nor waits for a grace
 * period (the throttle in dc__free_batch).  The thread may be slow or
 * starved, so past an eighth over a cap the adder shrinks too, and waits
 * as the shrinker does: then the caps hold within an eighth (plus one
 * entry per thread) however the threads are scheduled.
 */
void dc__maybe_shrink(struct dc_cache *c)
{
	uint64_t n = dc__load(c->nr_entries), neg = dc__load(c->nr_negative);

	if (n <= c->max_entries && neg <= c->max_negative)
		return;
	if (n > c->max_entries + c->max_entries / 8 ||
	    neg > c->max_negative + c->max_negative / 8)
		shrink_to_target(c);
	else
		kick_shrinker(c);
}

/*
 * The shrinker thread: a pass each time an adder asks.  Registered with
 * liburcu, as it frees through call_rcu and may wait for a grace period;
 * it holds shrink_lock only to wait for a request, never while it
 * shrinks, so it never holds a cache lock across a wait.
 */
static void *shrinker_main(void *arg)
{
	struct dc_cache *c = arg;

	rcu_register_thread();
	pthread_mutex_lock(&c->shrink_lock);
	while (!c->shrink_stop) {
		if (!c->shrink_wanted) {
			pthread_cond_wait(&c->shrink_cv, &c->shrink_lock);
			continue;
		}
		/* taken before the pass reads the counts: see kick_shrinker */
		__atomic_store_n(&c->shrink_wanted, false, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&c->shrink_lock);
		shrink_to_target(c);
		pthread_mutex_lock(&c->shrink_lock);
	}
	pthread_mutex_unlock(&c->shrink_lock);
	rcu_unregister_thread();
	return NULL;
}

/* Start c's shrinker thread, with every signal blocked: the program's
 * signals go to its own threads.  0 or -EAGAIN. */
int dc__shrinker_start(struct dc_cache *c)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&c->shrinker, NULL, shrinker_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* with default attributes, EAGAIN is the only failure */
	return err ? -EAGAIN : 0;
}

/* Stop it and wait for it: its last pass's frees are queued (call_rcu)
 * or done when this returns.  Nothing else calls the cache meanwhile. */
void dc__shrinker_stop(struct dc_cache *c)
{
	pthread_mutex_lock(&c->shrink_lock);
	c->shrink_stop = true;
	pthread_cond_signal(&c->shrink_cv);
	pthread_mutex_unlock(&c->shrink_lock);
	pthread_join(c->shrinker, NULL);
}

DC_API long dc_shrink(struct dc_cache *c, uint64_t target)
{
	long n;

	if (!c)
		return -EINVAL;
	dc__thread_enter();
	n = dc__shrink(c, target, target < c->max_negative ? target : c->max_negative);
	dc__paths_release(c);	/* the one-probe nodes waiting for a batch */
	return n;
}

/* At destroy: free every entry now (no reader, no grace period, and no
 * reference: every isolated entry is a directory its children hold). */
void dc__lru_free_all(struct dc_cache *c)
{
	struct dc_dentry *d, *p;

	while ((d = list_pop(&c->lru_neg)) || (d = list_pop(&c->lru_pos))) {
		/* a directory with children goes after them: its last
		 * child's going puts it back, to be freed in turn */
		if (d->count > 0) {
			dc__flags_clear(d, DC_F_LISTED);
			c->nr_isolated++;
			continue;
		}
		p = d->parent;
		dc__free_now(c, d);
		if (p && --p->count == 0)
			relist_locked(c, p);
	}
}
