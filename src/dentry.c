/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dentry.c - entries: allocation, names, references, the in-place state
 * changes, and freeing after an RCU grace period.
 *
 * Locking rules:
 *  - dc__alloc, dc__alloc_prepared, dc__unhash, dc__set_inode,
 *    dc__replace_inode and dc__bump_dirgen are called with the write lock
 *    held, except that a miss (miss.c) makes, unhashes and settles its
 *    own PENDING entry in the write lock's miss side, under the entry's
 *    chain stripe (lock.c): no other thread writes that entry meanwhile;
 *    dc__prepare and dc__unprepare with no cache lock.
 *  - d->count is changed with atomics anywhere.  A count of 0 means
 *    "unused", not "free": the entry stays cached until the LRU evicts it.
 *    The shrinker claims an entry by moving its count from 0 to
 *    DC_COUNT_DEAD; dc__get_not_dead never takes a reference after that.
 *    An update that changes an unused entry's inode in place claims it the
 *    same way for the length of the change (dc__replace_inode), so "unused"
 *    stays true until the change is done: a lock-free reference taker
 *    fails meanwhile and falls back to the locked path, which waits for the
 *    write lock (Linux's lockref_get_not_dead against d_lock).
 *  - Every field a lock-free reader may look at is changed inside
 *    dc__entry_write_begin/dc__entry_write_end: a seq write on the
 *    entry's seq that first takes the entry's one-probe path nodes out
 *    (path.c), since a hit on a node reads nothing of the entry.
 *  - What an in-place change replaces (the backend's inode, a symlink's
 *    text) is given up only after the seq write that unpublishes it: from
 *    then on no reader can reach it, so release() runs on an inode nobody
 *    can still take, and the text's call_rcu waits for every reader that
 *    could have loaded it.  Unpublish, then free.
 *  - Memory a reader may still hold (the entry, its names, its symlink
 *    target) is freed only through call_rcu.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- names -------------------------------------------------------------- */

int dc__check_name_len(const char *name, size_t len)
{
	if (!name || len == 0 || memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	if (len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return -EINVAL;
	return 0;
}

int dc__check_name(const char *name, size_t *lenp)
{
	size_t len;
	int err;

	if (!name)
		return -EINVAL;
	len = strnlen(name, DC_NAME_MAX + 1);
	err = dc__check_name_len(name, len);
	if (!err)
		*lenp = len;
	return err;
}

struct dc_xname *dc__xname_new(struct dc_cache *c, const char *s, size_t len)
{
	struct dc_xname *x = dc__malloc(c, dc__xname_size(len));

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

	dc__rcu_after_grace(head);
	c = x->c;
	dc__free(c, x, dc__xname_size(x->n.len));
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

/*
 * The memory of an entry and its name, got with no cache lock held, so
 * that a writer does not hold the write lock across the slab's lock, the
 * page faults of a new chunk, or a long name's allocation.  Nothing else
 * is set and nothing counts it yet: dc__alloc_prepared makes it an entry
 * under the write lock (or a miss's), or dc__unprepare gives it back.
 * NULL when memory is short.
 */
struct dc_dentry *dc__prepare(struct dc_cache *c, const char *name, size_t len)
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
	return d;
}

/* Give back a prepared entry that was not used (no reader ever saw it). */
void dc__unprepare(struct dc_cache *c, struct dc_dentry *d)
{
	if (!name_is_inline(d, d->name)) {
		struct dc_xname *x = dc__xname_of(d->name);

		dc__free(c, x, dc__xname_size(x->n.len));
	}
	dc__slab_free(c, d);
}

/*
 * Prepared entry d as a new entry in parent, not yet hashed nor on the
 * LRU; it holds a count on parent.  With in it is positive (and owns
 * target), without it negative (or PENDING, if flags say so).
 */
struct dc_dentry *dc__alloc_prepared(struct dc_cache *c, struct dc_dentry *d,
				     struct dc_dentry *parent, uint32_t hash,
				     uint32_t flags, const struct dc_inode *in,
				     struct dc_xname *target)
{
	d->hash = hash;
	d->flags = flags;
	d->parent = parent;
	if (in) {
		d->ino = in->ino;
		d->cookie = in->cookie;
		d->mode = (uint16_t)in->mode;
		d->gen = in->gen;
		d->uid = in->uid;
		d->gid = in->gid;
		if (dc__is_lnk(in->mode))
			d->aux = (uintptr_t)target;
		else if (target)
			dc__free(c, target, dc__xname_size(target->n.len));
	} else if (dc__is_negative(d)) {
		__atomic_add_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
	}
	/* a pending entry's TTL starts when it is settled (walk.c) */
	if (flags & DC_F_PENDING)
		d->expires = 0;
	else
		dc__stamp(c, d);
	if (parent)
		__atomic_add_fetch(&parent->count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->nr_entries, 1, __ATOMIC_RELAXED);
	return d;
}

/*
 * dc__prepare and dc__alloc_prepared in one, for callers that hold the
 * write lock (or a miss's) already.  NULL when memory is short; then
 * target is still the caller's.
 */
struct dc_dentry *dc__alloc(struct dc_cache *c, struct dc_dentry *parent,
			    const char *name, size_t len, uint32_t hash,
			    uint32_t flags, const struct dc_inode *in,
			    struct dc_xname *target)
{
	struct dc_dentry *d = dc__prepare(c, name, len);

	return d ? dc__alloc_prepared(c, d, parent, hash, flags, in, target) : NULL;
}

/* Free an entry no reader can reach any more. */
void dc__free_now(struct dc_cache *c, struct dc_dentry *d)
{
	/* its record names it: gone before the memory is */
	if (dc__flags(d) & DC_F_HASLIST)
		dc__list_forget(c, d);
	if (d->mode && c->be.ops->release) {
		struct dc_inode in = dc__inode_of(d);

		c->be.ops->release(c->be.ctx, &in);
	}
	if (dc__is_lnk(d->mode) && d->aux) {
		struct dc_xname *x = (struct dc_xname *)d->aux;

		dc__free(c, x, dc__xname_size(x->n.len));
	}
	if (!name_is_inline(d, d->name)) {
		struct dc_xname *x = dc__xname_of(d->name);

		dc__free(c, x, dc__xname_size(x->n.len));
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

/*
 * Free a list of evicted entries after waiting for the grace period here,
 * so that their backend resources are released before this returns.  Not
 * inside a read-side section.
 */
void dc__free_list_now(struct dc_cache *c, struct dc_dentry *list)
{
	synchronize_rcu();
	dc__rcu_after_grace(NULL);
	free_list(c, list);
}

static void free_batch_cb(struct rcu_head *head)
{
	struct free_batch *b = caa_container_of(head, struct free_batch, rcu);
	struct dc_cache *c;

	dc__rcu_after_grace(head);
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
	if (dc__load(c->nr_freeing) <= c->max_entries / 8)
		b = dc__malloc(c, sizeof(*b));
	if (!b) {
		dc__free_list_now(c, list);
		return;
	}
	b->c = c;
	b->list = list;
	b->n = n;
	__atomic_add_fetch(&c->nr_freeing, n, __ATOMIC_RELAXED);
	dc__call_rcu(&b->rcu, free_batch_cb);
}

/* ---- references ---------------------------------------------------------- */

/*
 * Claim an unused entry for a change in place: count 0 -> DC_COUNT_DEAD,
 * the shrinker's claim.  Write lock held (the shrinker, the only other
 * claimer, holds it too).  false: somebody holds a reference.
 */
static bool claim_unused(struct dc_dentry *d)
{
	int32_t zero = 0;

	/* acquire: pairs with dc_put's release, the last holder is done */
	return __atomic_compare_exchange_n(&d->count, &zero, DC_COUNT_DEAD, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* End a claim: the entry is unused again, and may be referenced. */
static void unclaim(struct dc_dentry *d)
{
	/* release: a reference taken from now on comes after the change (its
	 * taker still validates against the seq, which moved first) */
	__atomic_store_n(&d->count, 0, __ATOMIC_RELEASE);
}

bool dc__get_not_dead(struct dc_dentry *d)
{
	int32_t v = dc__load(d->count);

	do {
		if (v < 0)
			return false;
		dc__race_window();
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
	int32_t left;

	if (!d)
		return;
	dc__thread_enter();
	/* once our count is gone the shrinker may take d: the read section
	 * keeps it allocated while we look at its flags */
	dc__rcu_lock();
	/*
	 * seq_cst: a release (our reads of d happen before a shrinker's
	 * claim), and ordered before the load of the flags.  Pairs with the
	 * shrinker's isolate(), which clears LISTED and then loads the count:
	 * either it sees our 0 and keeps d listed, or we see LISTED clear and
	 * put d back on a list ourselves.
	 */
	left = __atomic_sub_fetch(&d->count, 1, __ATOMIC_SEQ_CST);
	dc__race_window();
	if (left == 0 && !(__atomic_load_n(&d->flags, __ATOMIC_SEQ_CST) & DC_F_LISTED))
		dc__lru_relist(c, d);
	dc__rcu_unlock();
}

/* ---- state changes (write lock held; a miss, its own entry's, in the miss
 * side under the entry's chain stripe) ---------------------------------- */

/* Take d out of its chain for good.  Readers on it see DEAD or a new seq. */
void dc__unhash(struct dc_cache *c, struct dc_dentry *d)
{
	uint32_t fl = dc__flags(d), shards = 0;
	bool dir = dc__is_dir(d->mode);

	if (fl & DC_F_DEAD)
		return;
	/* paths through a directory may lead elsewhere (path.c) */
	if (dir) {
		shards = dc__path_shards(c, d);
		dc__path_change_begin(c, shards);
	}
	/* d's nodes go first, and an adder sees the odd seq (path.c) */
	dc__entry_write_begin(c, d);
	dc__flags_set(d, fl & DC_F_PENDING ? DC_F_DEAD | DC_F_STALE : DC_F_DEAD);
	dc__hash_remove(c, d);
	dc__entry_write_end(d);
	if (dir)
		dc__path_change_end(c, shards);
}

/* What an in-place change replaces, kept until no reader can reach it. */
struct old_inode {
	struct dc_inode in;
	uintptr_t aux;
};

static void save_inode(const struct dc_dentry *d, struct old_inode *o)
{
	o->in = dc__inode_of(d);
	o->aux = d->aux;
}

/* Called after the seq write that unpublished o: see the locking rules. */
static void drop_text(struct dc_cache *c, const struct old_inode *o)
{
	if (dc__is_lnk(o->in.mode) && o->aux)
		dc__xname_free_rcu(c, (struct dc_xname *)o->aux);
}

/*
 * Store inode in (NULL: none, the entry turns negative) into d, inside a
 * seq write, keeping what d held in *old and the counts true.  target: a
 * symlink's text, owned by d from now.
 */
static void change_inode(struct dc_cache *c, struct dc_dentry *d,
			 const struct dc_inode *in, struct dc_xname *target,
			 struct old_inode *old)
{
	bool was_neg = dc__is_negative(d), was_astray = dc__astray(d);
	bool hashed = !(dc__flags(d) & DC_F_DEAD);
	uint32_t mode = in ? in->mode : 0;

	if (hashed && dc__indexed(d->mode))
		dc__inodes_del(c, d);
	save_inode(d, old);
	dc__entry_write_begin(c, d);
	dc__store(d->ino, in ? in->ino : 0);
	dc__store(d->cookie, in ? in->cookie : 0);
	dc__store(d->gen, in ? in->gen : 0);
	dc__store(d->uid, in ? in->uid : 0);
	dc__store(d->gid, in ? in->gid : 0);
	dc__store(d->aux, dc__is_lnk(mode) ? (uintptr_t)target : 0);
	dc__store(d->mode, (uint16_t)mode);
	dc__race_window();
	dc__stamp(c, d);	/* a new answer: its TTL starts */
	dc__entry_write_end(d);
	/* aux links all but symlinks into the index; readers look at aux
	 * only when they see a symlink, and their seq check fails if they
	 * saw the mode from before this change */
	if (hashed && dc__indexed(mode))
		dc__inodes_add(c, d);
	if (was_neg && !dc__is_negative(d))
		__atomic_sub_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
	else if (!was_neg && dc__is_negative(d))
		__atomic_add_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
	if (was_astray && !dc__astray(d))
		c->nr_neg_astray--;
	else if (!was_astray && dc__astray(d))
		c->nr_neg_astray++;
	if (target && !dc__is_lnk(mode))
		dc__free(c, target, dc__xname_size(target->n.len));
}

/*
 * Give d, negative or a lookup in flight, the inode in: nothing to give
 * up, and nobody is promised a negative entry stays so.
 */
void dc__set_inode(struct dc_cache *c, struct dc_dentry *d,
		   const struct dc_inode *in, struct dc_xname *target)
{
	struct old_inode old;

	change_inode(c, d, in, target, &old);
}

/*
 * An unused positive non-directory takes the inode in (NULL: turns
 * negative) in place.  false, changing nothing, when somebody holds it:
 * a holder is promised its entry's inode never changes.  The claim keeps
 * "unused" true for the length of the change.  The old symlink text is
 * queued for freeing once the seq write hid it; the old inode goes back
 * to the caller in *old_in, to release once it has dropped the write
 * lock, so that a backend's release() may call the cache.
 */
bool dc__replace_inode(struct dc_cache *c, struct dc_dentry *d,
		       const struct dc_inode *in, struct dc_xname *target,
		       struct dc_inode *old_in)
{
	struct old_inode old;

	if (!claim_unused(d))
		return false;
	/*
	 * Off the lists, d may be being put back on one now by a dc_put that
	 * dropped the count to 0 before our claim (relist_locked, under
	 * lru_lock alone): it chose the list by the mode it read, and sets
	 * LISTED after.  Wait it out, so that the LISTED and ONNEG that
	 * change_inode reads to count a negative on the positive list
	 * (nr_neg_astray) are final.  A relist that starts after this sees
	 * our claim and leaves d to us, or the 0 of our unclaim, and with it
	 * (acquire) the new mode.  LISTED seen set is final: only the
	 * shrinker clears it, under the write lock we hold.
	 */
	if (!(dc__flags(d) & DC_F_LISTED)) {
		pthread_mutex_lock(&c->lru_lock);
		pthread_mutex_unlock(&c->lru_lock);
	}
	change_inode(c, d, in, target, &old);
	unclaim(d);
	/* an unused entry belongs on a list: a dc_put that dropped the count
	 * to 0 just before our claim may have found the claim when it came
	 * to put it back (dc__lru_relist), and left that to us */
	if (!(dc__flags(d) & DC_F_LISTED))
		dc__lru_relist(c, d);
	drop_text(c, &old);	/* unpublished: see the locking rules */
	*old_in = old.in;
	return true;
}

/*
 * Names in dir changed: a backend answer fetched before now is stale
 * (lookup_slow asks dc__dir_changed_since before it caches one).  Write
 * lock held.
 */
void dc__bump_dirgen(struct dc_cache *c, struct dc_dentry *dir)
{
	c->dir_stamp[dc__dir_slot(dir)] = ++c->inval_seq;
}

/* Forget what alias a, a directory, holds under the name keyed key: every
 * child of that stored hash (another name sharing it goes too, which
 * costs a lookup), with a's stamp bumped, so that a miss in flight there
 * across this caches nothing (lookup_slow).  Write lock held. */
static void forget_key_in(struct dc_cache *c, struct dc_dentry *a, uint64_t key)
{
	uint32_t hash = dc__hash_salt(key, a);
	struct dc_dentry *d;

	dc__bump_dirgen(c, a);
	/* an unhashed entry keeps its hnext: the walk goes on past it */
	for (d = dc__load(*dc__bucket(c, hash)); d; d = dc__load(d->hnext))
		if (d->hash == hash && d->parent == a)
			dc__unhash(c, d);
}

/*
 * The name keyed key changed in directory dir, which the cache may also
 * hold under other entries: a bind mount inside the tree gives one
 * directory two names, each with children of its own, and an update
 * told through one reaches that one only.  The name is forgotten under
 * every other entry of dir's inode (the root included, which is in no
 * index chain), so that none answers as before.  Nothing to do in a cache
 * that never held such an alias.  Write lock held.
 */
void dc__aliases_name_changed(struct dc_cache *c, struct dc_dentry *dir,
			      uint64_t key)
{
	struct dc_dentry *a;

	if (!dc__load(c->dir_aliases))
		return;
	if (c->root != dir && c->root->ino == dir->ino && c->root->gen == dir->gen)
		forget_key_in(c, c->root, key);
	for (a = dc__inodes_first(c, dir->ino, dir->gen); a;
	     a = (struct dc_dentry *)a->aux)
		if (a != dir && dc__is_dir(a->mode) && a->ino == dir->ino &&
		    a->gen == dir->gen)
			forget_key_in(c, a, key);
}

/*
 * Is d forgotten, or below a forgotten directory (an orphan: see forget
 * in update.c)?  Write lock or its miss side held (or a lock mode's read
 * lock): parents are stable.
 */
bool dc__orphaned(const struct dc_dentry *d)
{
	for (; d; d = d->parent)
		if (dc__flags(d) & DC_F_DEAD)
			return true;
	return false;
}

/* ---- copying out ----------------------------------------------------------- */

DC_API int dc_dentry_stat(struct dc_dentry *d, struct dc_inode *st)
{
	uint32_t seq;

	if (!d || !st)
		return -EINVAL;
	do {
		seq = dc__seq_begin(&d->seq);
		*st = dc__inode_of(d);
	} while (dc__seq_retry(&d->seq, seq));
	return st->mode ? 0 : -ENOENT;
}
