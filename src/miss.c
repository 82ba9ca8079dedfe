/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * miss.c - the ref-walk's slow path: a name the cache cannot answer is
 * asked of the backend, one thread per (dir, name) at a time, and an
 * answer past its TTL or suspect is checked with it (revalidation).
 *
 * dc__lookup_slow, in the miss side of the write lock (lock.c), finds the
 * entry or hashes a PENDING one; the thread that hashed it asks the
 * backend with no lock held and settles it in the miss side again,
 * unless an update of the directory (dc__dir_changed_since) or a forget
 * above it overtook the question: then the answer is this caller's and is
 * not cached.  Others that find it PENDING sleep until it settles and
 * take its answer (Linux's d_alloc_parallel).  dc__revalidate is
 * single-flight the same way, with the REVAL flag.  Below a forgotten
 * directory nothing is cached (lookup_uncached).
 *
 * Locking: neither side of the write lock is held across a backend
 * call.  The miss side keeps every update out but lets other misses in:
 * a miss finds and hashes its name under the name's chain stripe
 * (dc__chain_lock), so one name has one PENDING entry, and settles it
 * under the same stripe; what else a miss writes has its own lock or is
 * atomic.  An answer found past its TTL is revalidated under the write
 * lock.  PENDING and REVAL are set and cleared under these, the clear a
 * release after the answer's fields.  A waiter sleeps on its entry's
 * wait slot (waitq_of), innermost, taken with no other lock held; the
 * thread that cleared the flag wakes that slot after the clear
 * (wait_clear says why no wake-up is lost).  See "Misses: single flight,
 * never stale" in docs/design.md.
 */
#include <string.h>

#include "internal.h"

/* ---- wait slots ---------------------------------------------------------- */

/* d's wait slot: by its address (entries are 128 bytes apart, so the
 * low bits say nothing), multiplied so that neighbours spread. */
static struct dc_waitq *waitq_of(struct dc_cache *c, const struct dc_dentry *d)
{
	uint64_t k = (uint64_t)(uintptr_t)d >> 7;

	return &c->waitq[(k * 0x9e3779b97f4a7c15ull) >> 58];
}
_Static_assert(DC_WAIT_SLOTS == 64, "waitq_of takes the top 6 bits");

/*
 * Sleep until flag (PENDING, REVAL) is clear on d; its owner wakes d's
 * slot (wake_waiters).  No wake-up is lost: the flag is re-checked under
 * the slot's lock, and the owner clears it before taking that lock to
 * wake, so either we see it clear here, or we are on the condvar (which
 * gave the lock up atomically) when the owner broadcasts.  Others' waiters
 * share the slot: woken by their owner's broadcast, we look at d's flag
 * again and sleep on.  The caller holds a reference on d.
 */
static void wait_clear(struct dc_cache *c, struct dc_dentry *d, uint32_t flag)
{
	struct dc_waitq *q = waitq_of(c, d);

	pthread_mutex_lock(&q->lock);
	/* acquire: pairs with the owner's release clear (dc__flags_clear), so
	 * the answer it stored before is seen even when we never slept */
	while (__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE) & flag)
		pthread_cond_wait(&q->cv, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

/*
 * Wake whoever waits for d: called by the thread that cleared its
 * PENDING or REVAL flag, after the clear (see wait_clear for why that
 * order loses no waiter).  d needs no reference here: only its address
 * is used.
 */
static void wake_waiters(struct dc_cache *c, const struct dc_dentry *d)
{
	struct dc_waitq *q = waitq_of(c, d);

	pthread_mutex_lock(&q->lock);
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->lock);
}

/* ---- asking the backend ------------------------------------------------- */

/*
 * A symlink's text into buf (DC_PATH_MAX bytes), NUL-terminated; its
 * length or a negative errno.  A backend that truncates as readlink(2)
 * does fills the whole buffer: that text is too long to be a path
 * (DC_PATH_MAX counts the NUL), and longer than the buffer can hold.
 */
int dc__read_target(struct dc_cache *c, const struct dc_inode *link, char *buf)
{
	int n;

	if (!c->be.ops->readlink)	/* a link that cannot be followed */
		return -EOPNOTSUPP;
	n = c->be.ops->readlink(c->be.ctx, link, buf, DC_PATH_MAX);
	if (n < 0)
		return n;
	if (n >= DC_PATH_MAX)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return n;
}

/* Ask the backend for name in dir; fetch a symlink's text too. */
static int backend_lookup(struct dc_cache *c, struct dc_dentry *dir,
			  const char *name, size_t len, struct dc_inode *out,
			  struct dc_xname **target)
{
	struct dc_inode din = dc__inode_of(dir);
	char *buf;
	int err, tries = 0, frees = 0;
	uint64_t freed;

again:
	dc__stat_inc(c, DC_ST_MISSES);
	*target = NULL;
	memset(out, 0, sizeof(*out));
	freed = dc__load(c->nr_freed_now);
	err = dc__be_err(c->be.ops->lookup(c->be.ctx, &din, name, len, out));
	if (err == -ENOENT)
		dc__stat_inc(c, DC_ST_NEG_MISSES);
	/* out of descriptors: free some (see dc__free_some) and ask again */
	if ((err == -EMFILE || err == -ENFILE) && frees++ < 3 &&
	    dc__free_some(c, freed))
		goto again;
	/* no type, or bits no st_mode has: not an inode */
	if (!err && !dc__mode_ok(out->mode)) {
		if (c->be.ops->release)
			c->be.ops->release(c->be.ctx, out);
		return -EIO;
	}
	if (err || !dc__is_lnk(out->mode) || !c->be.ops->readlink)
		return err;
	buf = dc__malloc(c, DC_PATH_MAX);
	if (!buf)
		err = -ENOMEM;
	else
		err = dc__read_target(c, out, buf);
	if (err >= 0) {
		*target = dc__xname_new(c, buf, (size_t)err);
		err = *target ? 0 : -ENOMEM;
	} else if (err == -ENAMETOOLONG) {
		/* the link exists; only following it fails (copy_link asks
		 * again, and says so), so cache it without its text */
		err = 0;
	}
	dc__free(c, buf, DC_PATH_MAX);
	if (err && c->be.ops->release)
		c->be.ops->release(c->be.ctx, out);
	/* the link went away between lookup and readlink: look again */
	if ((err == -ENOENT || err == -ESTALE) && ++tries < 3)
		goto again;
	return err;
}

/* ---- settling a miss ---------------------------------------------------- */

/* Give a settled answer to pending entry p, which the backend gave when
 * asked at asked (dc__now time; 0: TTLs were off).  The miss side and
 * p's chain stripe held (or the write lock). */
static void settle(struct dc_cache *c, struct dc_dentry *p, int err,
		   const struct dc_inode *in, struct dc_xname *target,
		   uint64_t asked)
{
	if (err && err != -ENOENT) {
		/*
		 * Unhash it as failed, not as overtaken: dc__unhash would mark
		 * a PENDING entry STALE too, and its waiters would each ask the
		 * backend again instead of taking this answer.  An entry an
		 * update overtook is DEAD and STALE already; it stays so.
		 */
		if (!(dc__flags(p) & DC_F_DEAD)) {
			dc__entry_write_begin(c, p);
			dc__flags_set(p, DC_F_DEAD);
			dc__hash_remove(c, p);
			dc__entry_write_end(p);
		}
		dc__store(p->ino, (uint64_t)-err);
		dc__flags_set(p, DC_F_FAILED);
		dc__flags_clear(p, DC_F_PENDING);	/* release: after the error */
		return;
	}
	if (err == 0)
		dc__set_inode(c, p, in, target);
	/* its TTL counts from the asking, not from now */
	dc__stamp_asked(c, p, asked);
	/* release: the answer's fields before the flag that says "settled" */
	dc__flags_clear(p, DC_F_PENDING);
	if (err)
		__atomic_add_fetch(&c->nr_negative, 1, __ATOMIC_RELAXED);
}

/*
 * An answer for a name in a directory that is no longer in the cache (it
 * was removed or invalidated while we held it): ask the backend and hand
 * back an unhashed entry, so the truth is returned but nothing is cached.
 */
static int lookup_uncached(struct dc_cache *c, struct dc_dentry *dir,
			   const char *name, size_t len, uint32_t hash,
			   struct dc_dentry **out)
{
	struct dc_xname *target;
	struct dc_inode in;
	struct dc_dentry *d;
	int err;

	err = backend_lookup(c, dir, name, len, &in, &target);
	if (err && err != -ENOENT)
		return err;
	/* an entry of our own, never hashed: the miss side keeps the
	 * shrinker out while it joins the lists */
	dc__miss_begin(c);
	d = dc__alloc(c, dir, name, len, hash, DC_F_DEAD, err ? NULL : &in, target);
	if (d) {
		d->count = 1;
		dc__lru_add(c, d);
	}
	dc__miss_end(c);
	if (!d) {
		if (err == 0) {
			if (c->be.ops->release)
				c->be.ops->release(c->be.ctx, &in);
			if (target)
				dc__free(c, target, dc__xname_size(target->n.len));
		}
		return -ENOMEM;
	}
	/* these entries count against the cap like any other: each such
	 * lookup adds one, freed once unused and passed by the shrinker */
	dc__maybe_shrink(c);
	*out = d;
	return 0;
}

/* ---- revalidation ------------------------------------------------------- */

/*
 * Does the backend still say what cached says of name in dir?  1: yes;
 * 2: yes, the same inode, whose permission bits or owner are now those
 * of *now; 0: no; or a negative errno.  A suspect directory (its
 * attributes changed) is looked up rather than asked of the hook, which
 * can only say yes or no: the new attributes keep the entry, and what is
 * cached below it.
 */
static int still_true(struct dc_cache *c, struct dc_dentry *dir,
		      const char *name, size_t len, const struct dc_inode *cached,
		      bool suspect, struct dc_inode *now)
{
	struct dc_inode din = dc__inode_of(dir);
	struct dc_xname *target;
	struct dc_inode in;
	int err;

	if (c->be.ops->revalidate && !suspect) {
		dc__stat_inc(c, DC_ST_MISSES);
		return c->be.ops->revalidate(c->be.ctx, &din, name, len, cached);
	}
	err = backend_lookup(c, dir, name, len, &in, &target);
	if (err == -ENOENT)
		return cached->mode == 0;
	if (err)
		return err;
	/* the backend handed this inode out again: give it back */
	if (c->be.ops->release)
		c->be.ops->release(c->be.ctx, &in);
	if (target)
		dc__free(c, target, dc__xname_size(target->n.len));
	if (!cached->mode || in.ino != cached->ino || in.gen != cached->gen ||
	    (in.mode & S_IFMT) != (cached->mode & S_IFMT))
		return 0;
	*now = in;
	return in.mode == cached->mode && in.uid == cached->uid &&
	       in.gid == cached->gid ? 1 : 2;
}

/* The same inode's new permission bits and owner, in place, in one seq
 * write: a checked walk (may_search) reads the three together.  A
 * directory's new bits may refuse a search that a path node below it was
 * made allowing (its allx), so paths through it go back to the walk
 * (path.c).
 * Write lock held. */
static void set_attrs(struct dc_cache *c, struct dc_dentry *d,
		      const struct dc_inode *in)
{
	bool dir = dc__is_dir(d->mode);
	uint32_t shards = dir ? dc__path_shards(c, d) : 0;

	if (dir)
		dc__path_change_begin(c, shards);
	dc__entry_write_begin(c, d);
	dc__store(d->mode, (uint16_t)in->mode);
	dc__store(d->uid, in->uid);
	dc__store(d->gid, in->gid);
	dc__entry_write_end(d);
	if (dir)
		dc__path_change_end(c, shards);
}

/*
 * d, settled in dir, is past its TTL or suspect.  One thread (the one
 * that sets REVAL) asks the backend whether it still holds, with no lock
 * held; the others wait for it, as for a pending lookup, and look again.
 * Still true: its deadline moves, SUSPECT goes, and it stays, with
 * whoever holds it (a new permission mode of the same inode is stored in
 * place).  Changed, failed, or forgotten meanwhile (an update or an
 * invalidation of the name marks it DEAD; an update cannot change it in
 * place, as we hold it): forgotten, and the caller looks the name up
 * again.  An inode invalidation meanwhile makes the answer too old: d
 * stays suspect and the caller looks again.  Called with the write lock,
 * which it drops.  1: d holds, referenced for the caller; 0: look again.
 */
int dc__revalidate(struct dc_cache *c, struct dc_dentry *dir, struct dc_dentry *d)
{
	struct dc_inode cached = dc__inode_of(d), now = cached;
	char name[DC_NAME_MAX + 1];
	size_t len = d->name->len;
	uint32_t seq = d->seq;	/* even: the write lock is held */
	uint64_t since = c->inval_seq, asked;
	bool suspect = dc__flags(d) & DC_F_SUSPECT;
	int ok;

	__atomic_add_fetch(&d->count, 1, __ATOMIC_RELAXED);
	if (dc__flags(d) & DC_F_REVAL) {
		dc__write_unlock(c);
		dc__stat_inc(c, DC_ST_MISS_WAITS);
		wait_clear(c, d, DC_F_REVAL);
		dc_put(c, d);
		return 0;
	}
	dc__flags_set(d, DC_F_REVAL);
	/* a rename may give d another name meanwhile, freeing this one */
	memcpy(name, d->name->s, len);
	dc__write_unlock(c);
	asked = dc__walk_clock(c);
	ok = still_true(c, dir, name, len, &cached, suspect, &now);
	dc__write_lock(c);
	if (ok >= 1 && cached.mode &&
	    dc__inode_changed_since(c, cached.ino, cached.gen, since)) {
		/* told of a change while we asked: ask again */
		ok = 0;
	} else if (ok >= 1 && d->seq == seq && !(dc__flags(d) & DC_F_DEAD) &&
		   !dc__orphaned(dir)) {
		/* d unchanged (any change of its name, place or inode is a
		 * seq write) and reachable: the answer is about d as it is */
		if (ok == 2)
			set_attrs(c, d, &now);
		if (suspect) {
			dc__entry_write_begin(c, d);
			dc__flags_clear(d, DC_F_SUSPECT);
			dc__entry_write_end(d);
		}
		dc__stamp_asked(c, d, asked);	/* from the asking, not now */
		ok = 1;
	} else {
		/* the backend said otherwise: the name changed behind the
		 * cache, which a listing of dir must learn as it learns a
		 * told change, or it would answer -ENOENT for it again */
		if (ok == 0 && !dc__orphaned(dir))
			dc__dir_name_changed(c, dir, dc__hash_key(c, name, len));
		ok = 0;
		dc__unhash(c, d);
	}
	/* release: the new deadline (or DEAD) before the flag's clearing,
	 * which the waiters' wait_clear reads (acquire) under d's slot lock;
	 * cleared before wake_waiters takes that lock, so none is missed */
	dc__flags_clear(d, DC_F_REVAL);
	dc__write_unlock(c);
	wake_waiters(c, d);
	if (!ok)
		dc_put(c, d);
	return ok;
}

/* ---- the slow path ------------------------------------------------------ */

/* Leave a miss's section on hash's name: its chain stripe, then the miss
 * side (lock.c). */
static void unlock_name(struct dc_cache *c, uint32_t hash)
{
	dc__chain_unlock(c, hash);
	dc__miss_end(c);
}

/*
 * A new entry for a miss, in the miss side: the one prepared before the
 * lock (*spare, then used up) if there is one, else one made here.
 * NULL when memory is short.
 */
static struct dc_dentry *new_entry(struct dc_cache *c, struct dc_dentry **spare,
				   struct dc_dentry *dir, const char *name,
				   size_t len, uint32_t hash, uint32_t flags)
{
	struct dc_dentry *d = *spare;

	if (!d)
		return dc__alloc(c, dir, name, len, hash, flags, NULL, NULL);
	*spare = NULL;
	return dc__alloc_prepared(c, d, dir, hash, flags, NULL, NULL);
}

/*
 * name is not in dir's complete listing: cache it as negative, as if the
 * backend had said so when the listing was asked.  Called in the miss
 * side with hash's chain stripe, which it leaves.
 */
static int add_listed_negative(struct dc_cache *c, struct dc_dentry *dir,
			       const char *name, size_t len, uint32_t hash,
			       uint64_t asked, struct dc_dentry **spare,
			       struct dc_dentry **out)
{
	struct dc_dentry *d = new_entry(c, spare, dir, name, len, hash, 0);

	if (!d) {
		unlock_name(c, hash);
		return -ENOMEM;
	}
	d->count = 1;
	dc__stamp_asked(c, d, asked);
	dc__lru_add(c, d);	/* before it is reachable, as in install() */
	dc__hash_insert(c, d);
	unlock_name(c, hash);
	dc__stat_inc(c, DC_ST_COMPLETE);
	dc__maybe_shrink(c);
	*out = d;
	return 0;
}

/*
 * The miss found name settled in dir but past its TTL or suspect: under
 * the write lock (revalidation changes what updates change), find it
 * again and revalidate it if it still needs it.  1: *d holds, referenced
 * for the caller; 0: look the name up again.
 */
static int revalidate_found(struct dc_cache *c, struct dc_dentry *dir,
			    const char *name, size_t len, uint32_t hash,
			    struct dc_dentry **d)
{
	struct dc_dentry *e;

	dc__write_lock(c);
	/* forgotten meanwhile: the caller's next try goes uncached */
	e = dc__orphaned(dir) ? NULL : dc__find_locked(c, dir, name, len, hash);
	if (e && !(dc__flags(e) & DC_F_PENDING) &&
	    ((dc__flags(e) & DC_F_SUSPECT) || dc__expired(e, dc__walk_clock(c)))) {
		*d = e;
		return dc__revalidate(c, dir, e);	/* drops the lock */
	}
	dc__write_unlock(c);
	return 0;
}

/*
 * The slow path of one component: in the miss side, find the entry or
 * hash a PENDING one; if we hashed it, ask the backend with no lock held
 * and settle it; if another thread had, wait for its answer.  Like Linux's
 * d_alloc_parallel, one backend lookup per (dir, name) at a time.
 *
 * A pending lookup can be overtaken by an update of the same directory
 * (the update marks the entry STALE and unhashes it, and stamps the
 * directory's slot, dc__bump_dirgen): then the answer is returned to this caller,
 * which asked before the update, but is not cached.
 */
static int lookup_slow(struct dc_cache *c, struct dc_dentry *dir,
		       const char *name, size_t len, uint32_t hash, bool orphan,
		       struct dc_dentry **spare, struct dc_dentry **out)
{
	struct dc_xname *target;
	struct dc_dentry *d;
	struct dc_inode in;
	uint32_t fl;
	uint64_t since, asked;
	bool list;
	int err;

again:
	dc__prefetch_chain(c, hash);
	dc__miss_begin(c);
	if (orphan || dc__orphaned(dir)) {
		dc__miss_end(c);
		return lookup_uncached(c, dir, name, len, hash, out);
	}
	/* the name's find and hash are one step against other misses */
	dc__chain_lock(c, hash);
	d = dc__find_locked(c, dir, name, len, hash);
	if (d) {
		/*
		 * Settled or pending is decided here, under the lock.  After
		 * the unlock the owner of a pending entry may already have
		 * settled it with an error (any backend error; a symlink's
		 * miss fails with -ENOMEM when its text cannot be allocated):
		 * the FAILED entry (mode 0) would be taken for a settled
		 * negative one, and the lookup would answer -ENOENT for a name
		 * that exists.
		 */
		bool pending = dc__flags(d) & DC_F_PENDING;

		if (!pending && ((dc__flags(d) & DC_F_SUSPECT) ||
				 dc__expired(d, dc__walk_clock(c)))) {
			unlock_name(c, hash);
			if (revalidate_found(c, dir, name, len, hash, &d) > 0) {
				*out = d;
				return 0;
			}
			goto again;
		}
		__atomic_add_fetch(&d->count, 1, __ATOMIC_RELAXED);
		unlock_name(c, hash);
		if (!pending) {
			*out = d;
			return 0;
		}
		/* counted before the wait: single flight can be watched */
		dc__stat_inc(c, DC_ST_MISS_WAITS);
		wait_clear(c, d, DC_F_PENDING);
		fl = dc__flags(d);
		if ((fl & (DC_F_FAILED | DC_F_STALE)) == DC_F_FAILED) {
			err = -(int)dc__load(d->ino);	/* the owner's error */
			dc_put(c, d);
			return err;
		}
		if (fl & DC_F_DEAD) {	/* overtaken by an update: ask again */
			dc_put(c, d);
			goto again;
		}
		*out = d;
		return 0;
	}
	if (dc__listed_absent(c, dir, name, len, &asked))
		return add_listed_negative(c, dir, name, len, hash, asked, spare, out);
	d = new_entry(c, spare, dir, name, len, hash, DC_F_PENDING);
	if (!d) {
		unlock_name(c, hash);
		return -ENOMEM;
	}
	d->count = 1;
	/* no update runs while we are in the miss side: none of this moves */
	since = c->inval_seq;
	dc__lru_add(c, d);	/* before it is reachable, as in install() */
	dc__hash_insert(c, d);
	if (c->dbg_miss)
		c->dbg_miss(c->dbg_miss_arg);
	unlock_name(c, hash);

	asked = dc__walk_clock(c);
	err = backend_lookup(c, dir, name, len, &in, &target);

	if (!err && dc__indexed(in.mode))
		dc__prefetch_inode(c, in.ino, in.gen);
	dc__miss_begin(c);
	dc__chain_lock(c, hash);
	/* the directory changed under us, or was forgotten with what was
	 * above it: the answer is this caller's, not the cache's */
	if (dc__dir_changed_since(c, dir, since) || dc__orphaned(dir) ||
	    (!err && dc__inode_changed_since(c, in.ino, in.gen, since)))
		dc__unhash(c, d);	/* the directory (or the inode) changed */
	settle(c, d, err, &in, target, asked);
	dc__chain_unlock(c, hash);
	list = err == -ENOENT && !(dc__flags(d) & DC_F_DEAD) &&
	       dc__note_negative(c, dir);
	/* cached or not (the directory changed meanwhile), it exists */
	if (!err)
		dc__note_found(c, dir, name, len);
	dc__miss_end(c);
	/* settle cleared PENDING (release) before this takes d's slot lock:
	 * see wait_clear */
	wake_waiters(c, d);
	if (list)
		dc__list_dir(c, dir);
	if (err && err != -ENOENT) {
		dc_put(c, d);
		return err;
	}
	dc__maybe_shrink(c);
	*out = d;
	return 0;
}

/*
 * The entry a miss may hash is prepared before its lock is taken
 * (dc__prepare says why), and given back if the miss found the name
 * cached after all.
 */
int dc__lookup_slow(struct dc_cache *c, struct dc_dentry *dir,
		    const char *name, size_t len, uint32_t hash, bool orphan,
		    struct dc_dentry **out)
{
	struct dc_dentry *spare = dc__prepare(c, name, len);
	int err = lookup_slow(c, dir, name, len, hash, orphan, &spare, out);

	if (spare)
		dc__unprepare(c, spare);
	return err;
}
