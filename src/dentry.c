/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dentry.c - entries: allocation, names, references, the in-place state
 * changes, and freeing after an RCU grace period.
 *
 * Locking rules:
 *  - dc__alloc, dc__unhash, dc__set_inode, dc__set_negative and
 *    dc__bump_dirgen are called with the write lock held.
 *  - d->count is changed with atomics anywhere.  A count of 0 means
 *    "unused", not "free": the entry stays cached until the LRU evicts it.
 *    The shrinker claims an entry by moving its count from 0 to
 *    DC_COUNT_DEAD; dc__get_not_dead never takes a reference after that.
 *  - Every field a lock-free reader may look at is changed inside
 *    seq_write_begin/seq_write_end on the entry's seq.
 *  - Memory a reader may still hold (the entry, its names, its symlink
 *    target) is freed only through call_rcu.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- names -------------------------------------------------------------- */

int dc__check_name(const char *name, size_t *lenp)
{
	size_t len;

	if (!name)
		return -EINVAL;
	len = strnlen(name, DC_NAME_MAX + 1);
	if (len == 0 || memchr(name, '/', len))
		return -EINVAL;
	if (len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return -EINVAL;
	*lenp = len;
	return 0;
}

struct dc_xname *dc__xname_new(struct dc_cache *c, const char *s, size_t len)
{
	struct dc_xname *x = dc__malloc(c, xname_size(len));

	if (!x)
		return NULL;
	x->c = c;
	x->n.len = (uint32_t)len;
	memcpy(x->n.s, s, len);
	x->n.s[len] = '\0';
	return x;
}

static void xname_free_cb(struct rcu_head *head)
{
	struct dc_xname *x = caa_container_of(head, struct dc_xname, rcu);
	struct dc_cache *c;

	rcu_after_grace(head);
	c = x->c;
	dc__free(c, x, xname_size(x->n.len));
	dc__tsan_release(c);	/* dc_cache_destroy's rcu_barrier acquires */
}

void dc__xname_free_rcu(struct dc_cache *c, struct dc_xname *x)
{
	(void)c;
	if (x)
		dc__call_rcu(&x->rcu, xname_free_cb);
}

static bool name_is_inline(const struct dc_dentry *d, const struct dc_name *n)
{
	return (const unsigned char *)n == d->iname;
}

/* ---- allocation ---------------------------------------------------------- */

/* Negative entries are counted against max_negative once settled. */
static bool counted_negative(const struct dc_dentry *d)
{
	return d->mode == 0 && !(dflags(d) & (DC_F_PENDING | DC_F_FAILED));
}


/*
 * A new entry for name in parent, not yet hashed nor on the LRU; it holds
 * a count on parent.  With in it is positive (and owns target), without it
 * negative (or PENDING, if flags say so).  NULL when memory is short; then
 * target is still the caller's.
 */
struct dc_dentry *dc__alloc(struct dc_cache *c, struct dc_dentry *parent,
			    const char *name, size_t len, uint32_t hash,
			    uint32_t flags, const struct dc_inode *in,
			    struct dc_xname *target)
{
	struct dc_dentry *d = dc__slab_alloc(c);
	struct dc_name *n;

	if (!d)
		return NULL;
	if (len <= DC_INLINE_NAME) {
		n = (struct dc_name *)d->iname;
		n->len = (uint32_t)len;
		memcpy(n->s, name, len);
	} else {
		struct dc_xname *x = dc__xname_new(c, name, len);

		if (!x) {
			dc__slab_free(c, d);
			return NULL;
		}
		n = &x->n;
	}
	d->name = n;
	d->hash = hash;
	d->flags = flags;
	d->parent = parent;
	if (in) {
		d->ino = in->ino;
		d->cookie = in->cookie;
		d->mode = in->mode;
		d->gen = in->gen;
		if (dc__is_lnk(in->mode))
			d->aux = (uintptr_t)target;
		else if (target)
			dc__free(c, target, xname_size(target->n.len));
	} else if (counted_negative(d)) {
		__atomic_add_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
	}
	if (parent)
		__atomic_add_fetch(&parent->count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->nr_entries, 1, __ATOMIC_RELAXED);
	return d;
}

/* Free an entry no reader can reach any more. */
void dc__free_now(struct dc_cache *c, struct dc_dentry *d)
{
	if (d->mode && c->be.ops->release) {
		struct dc_inode in = { d->ino, d->cookie, d->mode, d->gen };

		c->be.ops->release(c->be.ctx, &in);
	}
	if (dc__is_lnk(d->mode) && d->aux) {
		struct dc_xname *x = (struct dc_xname *)d->aux;

		dc__free(c, x, xname_size(x->n.len));
	}
	if (!name_is_inline(d, d->name)) {
		struct dc_xname *x = xname_of(d->name);

		dc__free(c, x, xname_size(x->n.len));
	}
	dc__slab_free(c, d);
}

struct free_batch {
	struct rcu_head rcu;
	struct dc_cache *c;
	struct dc_dentry *list;		/* through lru_next */
	uint64_t n;
};

static void free_list(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry *next;

	for (; d; d = next) {
		next = d->lru_next;
		dc__free_now(c, d);
	}
}

static void free_batch_cb(struct rcu_head *head)
{
	struct free_batch *b = caa_container_of(head, struct free_batch, rcu);
	struct dc_cache *c;

	rcu_after_grace(head);
	c = b->c;
	free_list(c, b->list);
	__atomic_sub_fetch(&c->nr_freeing, b->n, __ATOMIC_RELAXED);
	dc__free(c, b, sizeof(*b));
	dc__tsan_release(c);	/* dc_cache_destroy's rcu_barrier acquires */
}

/*
 * Free a list of n evicted entries (linked through lru_next) once every
 * reader that might see them is done.  One call_rcu per batch, not per
 * entry, so the callback thread has little to do.  Freeing must keep up
 * with evicting, or the memory the cap saves piles up in the callback
 * queue: when more than an eighth of the cap is already waiting for a
 * grace period, or the batch header cannot be allocated, the evicting
 * thread waits for the grace period itself and frees directly.  Must not
 * be called inside a read-side section.
 */
void dc__free_batch(struct dc_cache *c, struct dc_dentry *list, uint64_t n)
{
	struct free_batch *b = NULL;

	if (!list)
		return;
	if (LOAD(c->nr_freeing) <= c->max_entries / 8)
		b = dc__malloc(c, sizeof(*b));
	if (!b) {
		synchronize_rcu();
		rcu_after_grace(NULL);
		free_list(c, list);
		return;
	}
	b->c = c;
	b->list = list;
	b->n = n;
	__atomic_add_fetch(&c->nr_freeing, n, __ATOMIC_RELAXED);
	dc__call_rcu(&b->rcu, free_batch_cb);
}

/* ---- references ---------------------------------------------------------- */

bool dc__get_not_dead(struct dc_dentry *d)
{
	int32_t v = LOAD(d->count);

	do {
		if (v < 0)
			return false;
	} while (!__atomic_compare_exchange_n(&d->count, &v, v + 1, true,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	return true;
}

DC_API struct dc_dentry *dc_get(struct dc_dentry *d)
{
	if (d)
		__atomic_add_fetch(&d->count, 1, __ATOMIC_RELAXED);
	return d;
}

DC_API void dc_put(struct dc_cache *c, struct dc_dentry *d)
{
	(void)c;
	if (d)
		/* release: our reads of d happen before a shrinker's claim */
		__atomic_sub_fetch(&d->count, 1, __ATOMIC_RELEASE);
}

/* ---- state changes (write lock held) ------------------------------------ */

/* Take d out of its chain for good.  Readers on it see DEAD or a new seq. */
void dc__unhash(struct dc_cache *c, struct dc_dentry *d)
{
	uint32_t fl = dflags(d);

	if (fl & DC_F_DEAD)
		return;
	seq_write_begin(&d->seq);
	dflags_set(d, fl & DC_F_PENDING ? DC_F_DEAD | DC_F_STALE : DC_F_DEAD);
	dc__hash_remove(c, d);
	seq_write_end(&d->seq);
}

static void drop_inode(struct dc_cache *c, struct dc_dentry *d)
{
	if (d->mode && c->be.ops->release) {
		struct dc_inode in = { d->ino, d->cookie, d->mode, d->gen };

		c->be.ops->release(c->be.ctx, &in);
	}
	if (dc__is_lnk(d->mode) && d->aux)
		dc__xname_free_rcu(c, (struct dc_xname *)d->aux);
}

/*
 * Give d an inode (a negative entry turns positive, or a positive one gets
 * another inode).  target: a symlink's text, owned by d from now.
 */
void dc__set_inode(struct dc_cache *c, struct dc_dentry *d,
		   const struct dc_inode *in, struct dc_xname *target)
{
	bool was_neg = counted_negative(d);

	drop_inode(c, d);
	seq_write_begin(&d->seq);
	STORE(d->ino, in->ino);
	STORE(d->cookie, in->cookie);
	STORE(d->gen, in->gen);
	/* a directory's aux is its generation, starting from 0 */
	STORE(d->aux, dc__is_lnk(in->mode) ? (uintptr_t)target : 0);
	STORE(d->mode, in->mode);
	seq_write_end(&d->seq);
	if (was_neg)
		__atomic_sub_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
	if (target && !dc__is_lnk(in->mode))
		dc__free(c, target, xname_size(target->n.len));
}

void dc__set_negative(struct dc_cache *c, struct dc_dentry *d)
{
	if (counted_negative(d))
		return;
	drop_inode(c, d);
	seq_write_begin(&d->seq);
	STORE(d->mode, 0);
	STORE(d->ino, 0);
	STORE(d->cookie, 0);
	STORE(d->gen, 0);
	STORE(d->aux, 0);
	seq_write_end(&d->seq);
	if (counted_negative(d))
		__atomic_add_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
}

/* Names in dir changed: a backend answer fetched before now is stale. */
void dc__bump_dirgen(struct dc_dentry *dir)
{
	if (dc__is_dir(dir->mode))
		STORE(dir->aux, dir->aux + 1);
}

/* ---- copying out ----------------------------------------------------------- */

DC_API int dc_dentry_stat(struct dc_dentry *d, struct dc_stat *st)
{
	uint32_t seq;

	if (!d || !st)
		return -EINVAL;
	do {
		seq = seq_begin(&d->seq);
		st->ino = LOAD(d->ino);
		st->cookie = LOAD(d->cookie);
		st->mode = LOAD(d->mode);
		st->gen = LOAD(d->gen);
	} while (seq_retry(&d->seq, seq));
	return st->mode ? 0 : -ENOENT;
}
