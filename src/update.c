/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * update.c - telling the cache what the file system did.
 *
 * The contract: the caller changes the file system first and calls these
 * only after that succeeded.  The cache never re-checks the backend; it
 * trusts the caller, and where its own state contradicts what it is told
 * (say, it holds a positive entry for a name just created) it believes the
 * caller.  Every update:
 *  - runs under the write lock, so updates are serialized against each
 *    other, against misses installing answers, and against the shrinker;
 *  - bumps the generation of each directory whose names it changes, so a
 *    backend lookup that was in flight across it is not cached
 *    (lookup_slow compares generations before installing);
 *  - marks a PENDING entry for the same name STALE (dc__unhash does);
 *  - changes what lock-free readers may see only inside the entries' seq
 *    writes, and moves entries between chains only inside c->rename_seq.
 * When memory is short an update falls back to forgetting (unhashing) the
 * names it touches, which never allocates: a forgotten name is looked up
 * again, so the cache may forget but never lies.
 */
#include <string.h>

#include "internal.h"

struct dname {
	const char *s;
	size_t len;
	uint64_t key;		/* dc__hash_salt(key, dir) is its hash in dir */
};

static uint32_t hash_in(const struct dc_dentry *dir, const struct dname *n)
{
	return dc__hash_salt(n->key, dir);
}

/* Two entries for one inode: ino and gen together name it (gen tells
 * apart inodes that share a number: a generation, a device). */
static bool same_inode(const struct dc_dentry *a, const struct dc_dentry *b)
{
	return a->ino == b->ino && a->gen == b->gen;
}

static int prepare(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		   struct dname *n)
{
	int err;

	if (!c || !dir)
		return -EINVAL;
	err = dc__check_name(name, &n->len);
	if (err)
		return err;
	if (!dc__is_dir(dc__load(dir->mode)))
		return dc__load(dir->mode) ? -ENOTDIR : -ENOENT;
	n->s = name;
	n->key = dc__hash_key(c, name, n->len);
	dc__thread_enter();
	return 0;
}

/* The settled entry for n in dir; a pending one is made STALE instead. */
static struct dc_dentry *find_settled(struct dc_cache *c, struct dc_dentry *dir,
				      const struct dname *n)
{
	struct dc_dentry *d = dc__find_locked(c, dir, n->s, n->len, hash_in(dir, n));

	if (d && (dc__flags(d) & DC_F_PENDING)) {
		dc__unhash(c, d);
		d = NULL;
	}
	return d;
}

/*
 * Forget d: unhash it, so no path reaches it or anything cached below it.
 * What is cached below stays hashed, an orphan: unreachable by path (its
 * way up passes d), and a caller holding a directory in it is told apart
 * by dc__orphaned(), which updates (live_dir) and walks (walk.c) consult, so
 * that nothing is learnt from or told to an orphan.  The LRU frees
 * orphans like any unused entry, leaves first.  So forgetting costs
 * O(1) however much is cached below, as Linux's d_invalidate does not.
 */
static void forget(struct dc_cache *c, struct dc_dentry *d)
{
	if (d)
		dc__unhash(c, d);
}

/* A live directory entry for dir's inode: the root (which is in no index
 * chain: it is not hashed), or a hashed one from the index. */
static struct dc_dentry *find_dir_by_ino(struct dc_cache *c,
					 const struct dc_dentry *dir)
{
	struct dc_dentry *d;

	if (same_inode(c->root, dir))
		return c->root;
	for (d = dc__inodes_first(c, dir->ino, dir->gen); d;
	     d = (struct dc_dentry *)d->aux)
		if (dc__is_dir(d->mode) && same_inode(d, dir) && !dc__orphaned(d))
			return d;
	return NULL;
}

/*
 * The live entry that stands for directory dir now.  A caller may hold a
 * directory entry the cache has since forgotten, or one below it (then
 * looked up again: a new entry for the same directory, perhaps under
 * another name); its updates must reach the new one.  First by name,
 * which is almost always right; failing that by inode, from the index of
 * directories, after an exchange or an invalidation.  NULL when the cache
 * holds no live entry for that directory.  Write lock held, so parents
 * and chains are stable.
 */
static struct dc_dentry *live_dir(struct dc_cache *c, struct dc_dentry *dir)
{
	struct dc_dentry *p, *e = NULL;

	if (!dir->parent)	/* a root, now or before dc_invalidate of it */
		return c->root;
	if (!dc__orphaned(dir))
		return dir;
	p = live_dir(c, dir->parent);
	/* p may be another entry than dir->parent: hash the name for it */
	if (p)
		e = dc__find_locked(c, p, dir->name->s, dir->name->len,
				    dc__hash_name(c, p, dir->name->s, dir->name->len));
	if (e && !(dc__flags(e) & DC_F_PENDING) && dc__is_dir(e->mode) &&
	    same_inode(e, dir))
		return e;
	return find_dir_by_ino(c, dir);
}

/*
 * The name keyed key in dir changed, and the cache was told through dir:
 * dir's listing learns it, and so do dir's other entries, if the cache
 * holds the directory under more than one name (dc__aliases_name_changed
 * forgets the name there).  The invalidations by inode need no more than
 * dc__dir_name_changed: they visit every entry of the inode themselves.
 * Write lock held.
 */
static void told_name_changed(struct dc_cache *c, struct dc_dentry *dir, uint64_t key)
{
	dc__dir_name_changed(c, dir, key);
	dc__aliases_name_changed(c, dir, key);
}

/* Write-lock the cache for a change of n in dir: dir's live entry, told
 * of the change (NULL: gone).  The caller unlocks. */
static struct dc_dentry *lock_live_dir(struct dc_cache *c, struct dc_dentry *dir,
				       const struct dname *n)
{
	dc__write_lock(c);
	dir = live_dir(c, dir);
	if (dir)
		told_name_changed(c, dir, n->key);
	return dir;
}

/* d's name changed in its directory (d is forgotten, say).  Write lock. */
static void name_changed(struct dc_cache *c, struct dc_dentry *d)
{
	dc__dir_name_changed(c, d->parent, dc__hash_key(c, d->name->s, d->name->len));
}

/* Hash a new entry (NULL: out of memory, the name simply stays uncached). */
static bool install(struct dc_cache *c, struct dc_dentry *d)
{
	if (!d)
		return false;
	/* listed before it is reachable: a reader's dc_put must find it so */
	dc__lru_add(c, d);
	dc__hash_insert(c, d);
	return true;
}

static void release_inode(struct dc_cache *c, const struct dc_inode *in,
			  struct dc_xname *target)
{
	if (c->be.ops->release)
		c->be.ops->release(c->be.ctx, in);
	if (target)
		dc__free(c, target, dc__xname_size(target->n.len));
}

/*
 * A backend that adopts (hostfs: the cookie is a descriptor only it can
 * open) fills in its own cookie for the caller's inode, so no caller
 * needs to know the backend's handles.  0: *own is the inode to cache;
 * 1: the name changed again since the caller's operation, so it is
 * forgotten instead; or a negative errno (the name is forgotten too).
 */
static int adopt(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		 const struct dc_inode *in, struct dc_inode *own)
{
	struct dc_inode din = dc__inode_of(dir);
	int err;

	for (int frees = 0; ; frees++) {
		uint64_t freed = dc__load(c->nr_freed_now);

		*own = *in;
		own->cookie = 0;
		err = dc__be_err(c->be.ops->adopt(c->be.ctx, &din, name,
						  strlen(name), own));
		if (err == 0 && dc__mode_ok(own->mode))
			return 0;
		if (err == 0) {		/* not a mode an entry can hold */
			if (c->be.ops->release)
				c->be.ops->release(c->be.ctx, own);
			err = -EIO;
			break;
		}
		/* out of descriptors: as for a lookup (miss.c), free some */
		if ((err != -EMFILE && err != -ENFILE) || frees == 3 ||
		    !dc__free_some(c, freed))
			break;
	}
	dc_invalidate_name(c, dir, name);
	return err == -ENOENT || err == -ESTALE ? 1 : err;
}

/*
 * name now exists in dir as inode in.  A negative entry turns positive in
 * place; an unused positive non-directory takes the new inode in place,
 * claimed for the change so that nobody can take it meanwhile; anything
 * else (a directory, or an entry somebody holds, who was promised that
 * its inode never changes under them) is dropped and a new entry hashed.
 */
static int add_name(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		    const struct dc_inode *in, const char *link)
{
	struct dc_inode old = { 0 }, own;
	struct dc_xname *target = NULL;
	struct dc_dentry *d, *made = NULL;
	struct dname n;
	bool used = false, list;
	uint64_t forgot = dc__load(c->forgot_all);
	int err;

	err = prepare(c, dir, name, &n);
	if (err)
		return err;
	if (!in || !dc__mode_ok(in->mode))	/* an inode has a type */
		return -EINVAL;
	if (link && strnlen(link, DC_PATH_MAX) == DC_PATH_MAX)
		return -ENAMETOOLONG;
	if (c->be.ops->adopt) {
		err = adopt(c, dir, name, in, &own);
		if (err)
			return err < 0 ? err : 0;
		in = &own;
	}
	if (link)
		target = dc__xname_new(c, link, strlen(link));
	dc__write_lock(c);
	dir = live_dir(c, dir);
	d = dir ? find_settled(c, dir, &n) : NULL;
	if (dir)
		told_name_changed(c, dir, n.key);
	if (!dir) {
		;	/* the directory is not cached: nothing to update */
	} else if (c->be.ops->adopt && c->forgot_all != forgot) {
		/* everything was forgotten since adopt, perhaps for what
		 * adopt could not do then (a watcher that had not yet
		 * attached to the backend): the name is learnt anew */
		forget(c, d);
	} else if (link && !target) {
		forget(c, d);
		err = -ENOMEM;
	} else if (d && d->mode == 0) {
		dc__set_inode(c, d, in, target);
		used = true;
		made = d;
	} else if (d && !dc__is_dir(d->mode) &&
		   dc__replace_inode(c, d, in, target, &old)) {
		used = true;
	} else {
		forget(c, d);	/* a directory: the name is another inode now */
		made = dc__alloc(c, dir, n.s, n.len, hash_in(dir, &n), 0, in, target);
		if (install(c, made))
			used = true;
		else
			err = -ENOMEM;
	}
	/* a directory made through the cache: list it now (it is small) */
	list = used && made && dc__is_dir(made->mode) && dc__list_new(c, made);
	dc__write_unlock(c);
	if (list) {
		dc__list_dir(c, made);
		dc_put(c, made);
	}
	if (!used)	/* the inode (and its cookie) was handed to us */
		release_inode(c, in, target);
	if (old.mode)	/* what d held: no reader can reach it any more */
		release_inode(c, &old, NULL);
	dc__maybe_shrink(c);
	return err;
}

DC_API int dc_create(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		     const struct dc_inode *inode)
{
	return add_name(c, dir, name, inode, NULL);
}

DC_API int dc_mkdir(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		    const struct dc_inode *inode)
{
	if (inode && !dc__is_dir(inode->mode))
		return -EINVAL;
	return add_name(c, dir, name, inode, NULL);
}

DC_API int dc_symlink(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		      const struct dc_inode *inode, const char *target)
{
	if (!target || (inode && !dc__is_lnk(inode->mode)))
		return -EINVAL;
	return add_name(c, dir, name, inode, target);
}

DC_API int dc_link(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		   const struct dc_inode *inode)
{
	if (inode && dc__is_dir(inode->mode))
		return -EPERM;
	return add_name(c, dir, name, inode, NULL);
}

/*
 * name is gone from dir.  An unused non-directory turns negative in place
 * (claimed for the change, as in add_name); otherwise (a directory: its
 * cached children must become unreachable; or an entry someone holds) the
 * entry is dropped and a negative one hashed.
 */
static int remove_name(struct dc_cache *c, struct dc_dentry *dir, const char *name)
{
	struct dc_inode old = { 0 };
	struct dc_dentry *d;
	struct dname n;
	int err;

	err = prepare(c, dir, name, &n);
	if (err)
		return err;
	dir = lock_live_dir(c, dir, &n);
	if (dir) {
		d = find_settled(c, dir, &n);
		/* unless it is negative already or turns negative in place */
		if (!d || (d->mode && (dc__is_dir(d->mode) ||
				       !dc__replace_inode(c, d, NULL, NULL, &old)))) {
			forget(c, d);
			install(c, dc__alloc(c, dir, n.s, n.len, hash_in(dir, &n), 0,
					     NULL, NULL));
		}
	}
	dc__write_unlock(c);
	if (old.mode)	/* what d held: no reader can reach it any more */
		release_inode(c, &old, NULL);
	dc__maybe_shrink(c);
	return 0;
}

DC_API int dc_unlink(struct dc_cache *c, struct dc_dentry *dir, const char *name)
{
	return remove_name(c, dir, name);
}

DC_API int dc_rmdir(struct dc_cache *c, struct dc_dentry *dir, const char *name)
{
	return remove_name(c, dir, name);
}

/* Is d the directory s or below it?  Write lock held (parents stable). */
static bool is_under(struct dc_dentry *d, struct dc_dentry *s)
{
	for (; d; d = d->parent)
		if (d == s)
			return true;
	return false;
}

/* Give d a new parent and name; the caller brackets with rename_seq. */
static void move_entry(struct dc_cache *c, struct dc_dentry *d,
		       struct dc_dentry *ndir, struct dc_xname *x, uint32_t hash)
{
	struct dc_name *old = d->name;
	struct dc_dentry *odir = d->parent;
	bool dir = dc__is_dir(d->mode);
	/* paths through a directory, old and new, may lead elsewhere
	 * (path.c): the new place's shards are its new parent's (a whole
	 * group when that parent is just below the root, all when it is the
	 * root: there they depend on the new name, which is not d's yet) */
	uint32_t s1 = dir ? dc__path_shards(c, d) : 0;
	uint32_t s2 = dir ? dc__path_shards(c, ndir) : 0;

	dc__path_sets_join(&s1, &s2);
	if (dir) {	/* each shard once: odd for the whole move */
		dc__path_change_begin(c, s1);
		if (s2 != s1)
			dc__path_change_begin(c, s2);
	}
	dc__entry_write_begin(c, d);
	dc__hash_remove(c, d);
	dc__race_window();
	if (odir != ndir) {
		dc_get(ndir);
		/* release: readers standing on d follow d->parent ("..", paths
		 * of entries) to ndir, which they may never have reached any
		 * other way; what we saw of it through the write lock, its
		 * initialisation included, goes with the pointer */
		dc__store_rel(d->parent, ndir);
	}
	/* release: the new name's bytes before the pointer to them */
	dc__store_rel(d->name, &x->n);
	dc__store(d->hash, hash);
	dc__hash_insert(c, d);
	dc__entry_write_end(d);
	if (dir) {
		if (s2 != s1)
			dc__path_change_end(c, s2);
		dc__path_change_end(c, s1);
	}
	if (odir != ndir)
		dc_put(c, odir);
	if ((unsigned char *)old != d->iname)
		dc__xname_free_rcu(c, dc__xname_of(old));
}

/*
 * RENAME_EXCHANGE: forget both names.  Swapping the two entries would be
 * wrong whenever a miss between the backend's exchange and this call
 * already cached one side's new state (the two then hold one inode), and
 * nothing tells the two cases apart, so the cache drops both; the next
 * lookups ask the backend.  Exchange is rare enough for that to be cheap.
 */
static int exchange(struct dc_cache *c, struct dc_dentry *s, struct dc_dentry *t)
{
	forget(c, s);
	forget(c, t);
	return 0;
}

/*
 * A plain (or NOREPLACE) rename moves the source's entry, with its cached
 * subtree, to the new name.  A miss between the backend's rename and this
 * call may already have cached the new name (it is dropped: the moved
 * entry is the same inode) or a negative old name (then the source is not
 * positive here, and both names are forgotten instead).
 */
static int plain_rename(struct dc_cache *c, struct dc_dentry *odir,
			struct dc_dentry *s, const struct dname *on,
			struct dc_dentry *ndir, struct dc_dentry *t,
			const struct dname *nn, struct dc_xname *xs)
{
	if (!s || !s->mode || !xs) {
		forget(c, s);
		forget(c, t);
		return !s || !s->mode || xs ? 0 : -ENOMEM;
	}
	/* into its own subtree, as the cache has the tree: the backend did
	 * something else, or the tree is stale; neither name can be trusted */
	if (dc__is_dir(s->mode) && is_under(ndir, s)) {
		forget(c, t);
		forget(c, s);
		return -EINVAL;
	}
	/*
	 * The target already holds the source's inode: either two names of
	 * one inode, which rename(2) leaves both in place, or a miss since the
	 * backend's rename cached the new name.  The target's inode is right
	 * either way; the old name may or may not exist, so forget it.  A
	 * directory cached under both names had two sets of children, and
	 * updates made through a handle on one since the backend's rename
	 * (an unlink through the old name's handle, say) reached that one
	 * only: neither can be trusted, so both are forgotten.
	 */
	if (t && t->mode && same_inode(t, s)) {
		forget(c, s);
		if (dc__is_dir(t->mode))
			forget(c, t);
		return 0;
	}
	forget(c, t);	/* replaced: an empty directory, if one */
	dc__seq_write_begin(&c->rename_seq);
	move_entry(c, s, ndir, xs, hash_in(ndir, nn));
	dc__seq_write_end(&c->rename_seq);
	/*
	 * The old name is gone -- unless the target, which the cache did not
	 * know, was another name of the same inode, and rename(2) did nothing.
	 * So only a known target lets us cache the old name as negative.
	 */
	if (t)
		install(c, dc__alloc(c, odir, on->s, on->len, hash_in(odir, on), 0,
				     NULL, NULL));
	return 1;
}

DC_API int dc_rename(struct dc_cache *c, struct dc_dentry *odir, const char *oname,
		     struct dc_dentry *ndir, const char *nname, unsigned flags)
{
	struct dc_xname *xs = NULL;
	struct dc_dentry *s, *t;
	struct dname on, nn;
	int err;

	if (flags & ~(DC_RENAME_NOREPLACE | DC_RENAME_EXCHANGE) ||
	    (flags & DC_RENAME_NOREPLACE && flags & DC_RENAME_EXCHANGE))
		return -EINVAL;
	err = prepare(c, odir, oname, &on);
	if (!err)
		err = prepare(c, ndir, nname, &nn);
	if (err)
		return err;
	if (odir == ndir && on.len == nn.len && !memcmp(oname, nname, on.len))
		return 0;
	/* published names are never rewritten: the moved entry gets a new one */
	if (!(flags & DC_RENAME_EXCHANGE))
		xs = dc__xname_new(c, nname, nn.len);

	dc__write_lock(c);
	odir = live_dir(c, odir);
	ndir = live_dir(c, ndir);
	if (odir)
		told_name_changed(c, odir, on.key);
	if (ndir)
		told_name_changed(c, ndir, nn.key);
	/* found after: odir and ndir may be two entries of one directory,
	 * and telling one forgets the name under the other */
	s = odir ? find_settled(c, odir, &on) : NULL;
	t = ndir ? find_settled(c, ndir, &nn) : NULL;
	if (!odir || !ndir) {
		/* one side is not cached: forget the other side's name */
		forget(c, s);
		forget(c, t);
		err = 0;
	} else if (flags & DC_RENAME_EXCHANGE) {
		err = exchange(c, s, t);
	} else {
		err = plain_rename(c, odir, s, &on, ndir, t, &nn, xs);
	}
	dc__write_unlock(c);
	if (err == 1) {		/* the name was used */
		xs = NULL;
		err = 0;
	}
	if (xs)
		dc__free(c, xs, dc__xname_size(xs->n.len));
	dc__maybe_shrink(c);
	return err;
}

/*
 * Forget everything in O(1): nr, a new root entry for the same inode,
 * becomes the root, and the old one is marked DEAD, so all that is cached
 * is below a forgotten directory, an orphan (see forget).  The old root
 * goes the way of any entry: once its children are evicted and nobody
 * holds it, the LRU frees it.  Walks and updates from a handle on it are
 * taken to the new root (is_root in walk.c, live_dir here).
 */
static void swap_root(struct dc_cache *c, struct dc_dentry *nr)
{
	struct dc_dentry *old = c->root;

	dc__store(c->forgot_all, c->forgot_all + 1);
	nr->count = 1;		/* the cache's own, as root_init's */
	/* every path starts somewhere else now (path.c) */
	dc__path_change_begin(c, DC_PATH_ALL);
	dc__entry_write_begin(c, old);
	dc__flags_set(old, DC_F_DEAD);
	dc__entry_write_end(old);
	/* release: the new root's fields before the pointer to it */
	dc__store_rel(c->root, nr);
	dc__path_change_end(c, DC_PATH_ALL);
	dc__flags_clear(old, DC_F_ROOT);	/* an entry like any other now */
	dc__lru_adopt(c, old);		/* and the cache's count goes */
}

/* Unhash every entry: the root's whole subtree becomes unreachable.  The
 * fallback when no new root can be had. */
static void forget_all(struct dc_cache *c)
{
	uint64_t i;

	dc__store(c->forgot_all, c->forgot_all + 1);
	dc__path_change_begin(c, DC_PATH_ALL);
	for (i = 0; i < c->nbuckets; i++)
		while (c->buckets[i])
			dc__unhash(c, c->buckets[i]);
	dc__path_change_end(c, DC_PATH_ALL);
}

/*
 * The live entry that stands for d's name now: a directory's by
 * live_dir; anything else's by its name in its parent's live entry,
 * whatever inode the cache holds there (a handle on a forgotten file
 * still names that file).  Write lock held.
 */
static struct dc_dentry *live_entry(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry *p;

	if (dc__is_dir(d->mode) || !dc__orphaned(d))
		return live_dir(c, d);
	p = live_dir(c, d->parent);
	return p ? dc__find_locked(c, p, d->name->s, d->name->len,
				   dc__hash_name(c, p, d->name->s, d->name->len)) : NULL;
}

/* A new root entry, from the backend's root(), in *out: 0, or (*out
 * NULL) root()'s error, -ENOTDIR or -EIO (it named no directory, or one
 * with a bad mode, as at dc_cache_create) or -ENOMEM. */
static int new_root(struct dc_cache *c, struct dc_dentry **out)
{
	struct dc_inode in = { 0 };
	int err = dc__be_err(c->be.ops->root(c->be.ctx, &in));

	*out = NULL;
	if (err)
		return err;
	if (!dc__is_dir(in.mode))
		err = -ENOTDIR;
	else if (!dc__mode_ok(in.mode))
		err = -EIO;
	else if (!(*out = dc__alloc(c, NULL, "", 0, 0, DC_F_ROOT, &in, NULL)))
		err = -ENOMEM;
	if (err)
		release_inode(c, &in, NULL);
	return err;
}

/* h's name is cached nowhere live any more, but a listing of its live
 * directory must still hear that it changed.  Write lock held. */
static void name_changed_uncached(struct dc_cache *c, struct dc_dentry *h)
{
	struct dc_dentry *p = h->parent ? live_dir(c, h->parent) : NULL;

	if (p)
		told_name_changed(c, p, dc__hash_key(c, h->name->s, h->name->len));
}

/* Forget every cached entry of directory (ino, gen); true when the root
 * is that directory, whose subtree the caller then forgets whole.  Write
 * lock held. */
static bool forget_dir_entries(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	struct dc_dentry *d, *next;

	for (d = dc__inodes_first(c, ino, gen); d; d = next) {
		/* forget unlinks d alone: its successor stays on the chain */
		next = (struct dc_dentry *)d->aux;
		if (!dc__is_dir(d->mode) || d->ino != ino || d->gen != gen)
			continue;
		/* a miss in flight below d sees it orphaned (lookup_slow) */
		name_changed(c, d);
		forget(c, d);
	}
	return c->root->ino == ino && c->root->gen == gen;
}

DC_API int dc_invalidate(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry *nr = NULL, *h = d;
	bool all = false;
	int err = 0;

	if (!c || !d)
		return -EINVAL;
	dc__thread_enter();
	/* no parent: a root, now or before (an entry never gains or loses a
	 * parent), which live_entry maps to the root; asked of the backend
	 * unlocked */
	if (!dc__load(d->parent))
		err = new_root(c, &nr);
	dc__write_lock(c);
	d = live_entry(c, d);	/* NULL: nothing of it is cached any more */
	if (nr) {
		swap_root(c, nr);
	} else if (!d) {
		name_changed_uncached(c, h);
	} else if (d == c->root) {
		/* no new root to swap in: forget all below this one */
		dc__dir_changed(c, d);
		forget_all(c);
	} else if (dc__is_dir(d->mode) && dc__load(c->dir_aliases)) {
		/* the directory may be cached under other names too (a bind
		 * mount in the tree): what they hold below it goes as well,
		 * and so does its name under its parent's other entries */
		told_name_changed(c, d->parent,
				  dc__hash_key(c, d->name->s, d->name->len));
		all = forget_dir_entries(c, d->ino, d->gen);
	} else {
		told_name_changed(c, d->parent,
				  dc__hash_key(c, d->name->s, d->name->len));
		forget(c, d);
	}
	dc__write_unlock(c);
	dc__maybe_shrink(c);	/* a swapped root is an entry more */
	return all ? dc_invalidate_all(c) : err;
}

DC_API int dc_invalidate_name(struct dc_cache *c, struct dc_dentry *dir,
			      const char *name)
{
	struct dname n;
	int err = prepare(c, dir, name, &n);

	if (err)
		return err;
	dir = lock_live_dir(c, dir, &n);
	if (dir) {
		forget(c, dc__find_locked(c, dir, n.s, n.len, hash_in(dir, &n)));
	}
	dc__write_unlock(c);
	return 0;
}

/* ---- invalidation by inode (watchers) -------------------------------------
 *
 * A watcher knows inodes, not entries: the index of inodes (hash.c) finds
 * every cached name of one.  Each call takes the write lock once and
 * forgets in O(1) per entry found (forget), so a directory's whole cached
 * subtree goes with it however large.  Bumping the directory's dgen makes
 * a backend lookup in flight there across the call go uncached
 * (lookup_slow), which is what makes "never older than the last
 * invalidation" hold against misses.
 */

/* Forget n in directory entry d, noting in *old what it held (the first
 * positive answer found).  Write lock held. */
static void forget_child(struct dc_cache *c, struct dc_dentry *d,
			 const struct dname *n, struct dc_inode *old)
{
	struct dc_dentry *e = dc__find_locked(c, d, n->s, n->len, hash_in(d, n));

	dc__dir_name_changed(c, d, n->key);
	if (e && old && e->mode && !old->mode)
		*old = (struct dc_inode){ e->ino, 0, e->mode, e->gen };
	forget(c, e);
}

int dc__invalidate_child(struct dc_cache *c, uint64_t dir_ino, uint32_t dir_gen,
			 const char *name, size_t len, struct dc_inode *old)
{
	struct dc_dentry *d;
	struct dname n;
	int err;

	if (old)
		memset(old, 0, sizeof(*old));
	if (!c)
		return -EINVAL;
	err = dc__check_name_len(name, len);
	if (err)
		return err;
	dc__thread_enter();
	n.s = name;
	n.len = len;
	n.key = dc__hash_key(c, name, len);
	dc__write_lock(c);
	/* forgetting a child leaves the directory (and its chain) alone */
	for (d = dc__inodes_first(c, dir_ino, dir_gen); d;
	     d = (struct dc_dentry *)d->aux)
		if (dc__is_dir(d->mode) && d->ino == dir_ino && d->gen == dir_gen)
			forget_child(c, d, &n, old);
	/* the root is not hashed, so not in the index: look at it too
	 * (stable: swap_root holds the write lock) */
	if (c->root->ino == dir_ino && c->root->gen == dir_gen)
		forget_child(c, c->root, &n, old);
	dc__write_unlock(c);
	return 0;
}

DC_API int dc_invalidate_child(struct dc_cache *c, uint64_t dir_ino,
			       uint32_t dir_gen, const char *name, size_t len)
{
	return dc__invalidate_child(c, dir_ino, dir_gen, name, len, NULL);
}

/* Directory d's attributes may have changed: it is checked again before
 * its next use (miss.c, dc__revalidate), keeping what is cached below it --
 * its names did not change, or their own events say so.  Write lock. */
static void suspect(struct dc_cache *c, struct dc_dentry *d)
{
	/* its listing (complete.c) may no longer be all its names; and a
	 * path through it is checked again by the walk (path.c) */
	uint32_t shards = dc__path_shards(c, d);

	dc__dir_changed(c, d);
	dc__path_change_begin(c, shards);
	dc__entry_write_begin(c, d);
	dc__flags_set(d, DC_F_SUSPECT);
	dc__entry_write_end(d);
	dc__path_change_end(c, shards);
}

DC_API int dc_invalidate_inode(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	struct dc_dentry *d, *next;
	bool all;
	unsigned slot = dc__inval_slot(ino, gen);

	if (!c)
		return -EINVAL;
	dc__thread_enter();
	dc__write_lock(c);
	/* a miss in flight that will answer this inode must not cache it */
	c->inval_stamp[slot] = ++c->inval_seq;
	for (d = dc__inodes_first(c, ino, gen); d; d = next) {
		/* forget unlinks d alone: its successor stays on the chain */
		next = (struct dc_dentry *)d->aux;
		if (d->ino != ino || d->gen != gen)
			continue;
		if (dc__is_dir(d->mode)) {
			suspect(c, d);
		} else {
			name_changed(c, d);
			forget(c, d);
		}
	}
	/* the root is not hashed, so not indexed: its own attributes
	 * changed means a new root entry, as for everything; and names of
	 * this inode may have been left out of the index */
	all = (c->root->ino == ino && c->root->gen == gen) || c->unindexed[slot];
	dc__write_unlock(c);
	return all ? dc_invalidate_all(c) : 0;
}

DC_API int dc_invalidate_dir(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	bool root;

	if (!c)
		return -EINVAL;
	dc__thread_enter();
	dc__write_lock(c);
	root = forget_dir_entries(c, ino, gen);
	dc__write_unlock(c);
	return root ? dc_invalidate_all(c) : 0;
}

DC_API int dc_invalidate_all(struct dc_cache *c)
{
	struct dc_dentry *r;
	int err;

	if (!c)
		return -EINVAL;
	dc__thread_enter();
	r = dc_root(c);
	err = dc_invalidate(c, r);
	dc_put(c, r);
	return err;
}
