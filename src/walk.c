/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * walk.c - resolving paths: the lock-free rcu-walk and the
 * reference-taking ref-walk it falls back to.
 *
 * rcu-walk (rcu mode only) runs the whole path inside one rcu_read_lock,
 * takes no reference and no lock, and writes nothing shared (its counters
 * are per thread; the LRU mark is written only when unset).  It carries a
 * (dentry, seq) pair: the seq snapshot says "this dentry was what I think
 * it is".  Each step takes the child's seq BEFORE re-checking the parent's
 * (the interlock of path-lookup.rst), so the chain of checks covers the
 * whole path.  Any doubt (a seq moved, a miss, an entry being looked up,
 * suspect or past its TTL, a symlink whose text is not cached) returns
 * -ECHILD, and the caller
 * redoes the whole path in ref-walk.  Errors it returns (ENOENT from a
 * negative entry, ENOTDIR, ELOOP, ...) are validated like answers.
 *
 * ref-walk (every mode) holds a reference on the directory it stands in,
 * looks each component up with the mode's read lock held for that one step
 * (global mode: the global mutex, one acquisition per component, as Linux
 * 2.5.40's d_lookup), and on a miss, or an answer past its TTL or
 * suspect, goes to the slow path (miss.c: dc__lookup_slow, dc__revalidate),
 * which lets one thread per (dir, name) ask the backend.
 *
 * Path rules (the kernel's): "." and ".." need a directory to stand in;
 * ".." at the root stays there; a negative entry used as a directory
 * gives ENOENT, a non-directory ENOTDIR; a trailing slash makes the last
 * component follow symlinks and be a directory; at most DC_MAXSYMLINKS
 * links per resolution; an empty target gives ENOENT; an absolute target
 * restarts at the root.  Component length is checked when the walk
 * reaches the component.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct piece {
	const char *p, *end;
};

struct nameidata {
	struct dc_cache *c;
	unsigned flags;
	struct piece cur;		/* what is left of the current string */
	struct piece stack[DC_MAXSYMLINKS]; /* what is left of the outer ones */
	int depth;
	int nlinks;
	bool trailing;			/* an outer string ended in '/' */
	bool must_dir;			/* the last component needs a directory */
	bool missed;			/* the backend was asked */
	bool neg_hit;			/* the answer was a cached negative */
	bool orphan;			/* ref-walk stands below a forgotten entry */
	bool plain;			/* met no ".", ".." or symlink (path.c) */
	bool allx;			/* every directory looked in: 0111 set */
	struct dc_dentry *neg;		/* rcu-walk: the negative last component */
	uint32_t negseq;		/* ... and its seq */
	const struct dc_cred *cred;	/* dc_resolve_as's; NULL: no checks */
	uint64_t now;			/* the walk's clock, 0 with TTLs off */
	uint64_t until;			/* rcu-walk: the earliest deadline passed
					 * (0: none), a path node's (path.c) */
	const char *ahead;		/* a component hashed ahead (hash_ahead) */
	size_t ahead_len;
	uint64_t ahead_key;
	char *bufs[DC_MAXSYMLINKS];	/* ref-walk's copies of link targets */
	int nbufs;
};

struct component {
	const char *name;
	size_t len;
	uint64_t key;			/* dc__hash_salt makes it a directory's hash */
	bool final;			/* nothing follows it */
	const char *next;		/* past its slashes: the next one or the end */
};

static void nd_init(struct nameidata *nd, struct dc_cache *c, const char *path,
		    size_t len, unsigned flags, const struct dc_cred *cred,
		    uint64_t now)
{
	/* field by field: the stack and buffers are written before they are
	 * read, and zeroing a kilobyte would cost more than a cached lookup */
	nd->depth = nd->nlinks = nd->nbufs = 0;
	nd->trailing = nd->must_dir = nd->missed = nd->neg_hit = false;
	nd->orphan = false;
	nd->plain = nd->allx = true;
	nd->neg = NULL;
	nd->cred = cred;
	nd->ahead = NULL;
	nd->now = now;
	nd->until = 0;
	nd->c = c;
	nd->flags = flags;
	nd->cur.p = path;
	nd->cur.end = path + len;
}

static void nd_release(struct nameidata *nd)
{
	while (nd->nbufs > 0) {
		char *b = nd->bufs[--nd->nbufs];

		dc__free(nd->c, b, strlen(b) + 1);
	}
}

/* The next component, or false at the end of the path. */
static bool next_component(struct nameidata *nd, struct component *cp)
{
	const char *q;
	bool slash = false;

	for (;;) {
		while (nd->cur.p < nd->cur.end && *nd->cur.p == '/')
			nd->cur.p++;
		if (nd->cur.p < nd->cur.end)
			break;
		if (nd->depth == 0)
			return false;
		nd->cur = nd->stack[--nd->depth];
	}
	cp->name = nd->cur.p;
	if (nd->cur.p == nd->ahead) {
		cp->len = nd->ahead_len;
		cp->key = nd->ahead_key;
	} else {
		cp->len = dc__hash_component(nd->cur.p, nd->cur.end, &nd->c->hkey,
					     &cp->key);
	}
	nd->ahead = NULL;
	nd->cur.p += cp->len;
	for (q = nd->cur.p; q < nd->cur.end && *q == '/'; q++)
		slash = true;
	cp->next = q;
	cp->final = q == nd->cur.end && nd->depth == 0;
	nd->must_dir = cp->final && (slash || nd->trailing);
	return true;
}

/*
 * Hash the component after cp, when cp's string has one, for walk_rcu's
 * prefetch of its bucket; next_component then takes the key from here
 * instead of computing it again.  NULL at the end of the string (the rest
 * of an outer string after a symlink is not worth looking for).
 * next_component takes the hash only for a component at the same address,
 * and forgets it either way: after a symlink is pushed, the next component
 * is in the link's text and is hashed afresh.
 */
static const uint64_t *hash_ahead(struct nameidata *nd, const struct component *cp)
{
	if (cp->next == nd->cur.end)
		return NULL;
	nd->ahead = cp->next;
	nd->ahead_len = dc__hash_component(cp->next, nd->cur.end, &nd->c->hkey,
					   &nd->ahead_key);
	return &nd->ahead_key;
}

/* Should the walk follow a symlink met as component cp? */
static bool follow(const struct nameidata *nd, const struct component *cp)
{
	return !cp->final || nd->must_dir || !(nd->flags & DC_NOFOLLOW);
}

/*
 * May the walk follow a symlink, met as component cp and owned by luid,
 * in a directory of mode dmode owned by duid?  Only a checked walk asked
 * for fs.protected_symlinks (DC_PROTECTED_SYMLINKS) refuses any, as
 * Linux's may_follow_link: a trailing link (the path's last component,
 * also after an earlier link's text) in a sticky world-writable
 * directory, that neither the follower nor the directory's owner owns,
 * whoever follows, root too.
 */
static bool may_follow(const struct nameidata *nd, const struct component *cp,
		       uint32_t dmode, uint32_t duid, uint32_t luid)
{
	if (!nd->cred || !(nd->flags & DC_PROTECTED_SYMLINKS) || !cp->final ||
	    (dmode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return true;
	return luid == nd->cred->uid || luid == duid;
}

/*
 * Continue in a symlink's text t: save what is left of the current string
 * (unless only slashes are left: then it just makes the end a directory).
 * Returns 1 when t is absolute, 0 when relative, or a negative errno.
 */
static int push_link(struct nameidata *nd, const char *t, size_t tlen)
{
	const char *q = nd->cur.p;

	if (++nd->nlinks > DC_MAXSYMLINKS)
		return -ELOOP;
	if (tlen == 0)
		return -ENOENT;
	while (q < nd->cur.end && *q == '/')
		q++;
	if (q < nd->cur.end)
		nd->stack[nd->depth++] = nd->cur;
	else if (q != nd->cur.p)
		nd->trailing = true;
	nd->cur.p = t;
	nd->cur.end = t + tlen;
	return t[0] == '/';
}

static bool is_dot(const struct component *cp)
{
	return cp->len == 1 && cp->name[0] == '.';
}

static bool is_dotdot(const struct component *cp)
{
	return cp->len == 2 && cp->name[0] == '.' && cp->name[1] == '.';
}

/* A root, the cache's now or a former one (dc_invalidate of the root):
 * a walk from either starts at the cache's root now. */
static bool is_root(const struct dc_dentry *d)
{
	return !dc__load_acq(d->parent);
}

/* The error for standing in a non-directory, or 0. */
static int need_dir(uint32_t mode)
{
	if (dc__is_dir(mode))
		return 0;
	return mode ? -ENOTDIR : -ENOENT;
}

/*
 * Is d forgotten, or below a forgotten directory?  What is cached below a
 * forgotten directory is an orphan (update.c, forget): nothing updates it
 * any more, so a walk that starts from a handle in it must learn nothing
 * from its cached entries.  Only the base is checked: a walk from a live
 * directory finds live entries, and if one is forgotten while the walk
 * stands in it, what the walk reads there was true when its call began
 * (and its misses are not cached: dc__lookup_slow checks under the lock).
 * Caller holds the read lock; parents are loaded with acquire (see
 * move_entry).  Orphans are never moved (updates reach the live entries
 * instead), so an orphan's chain up is stable; a rename elsewhere racing
 * the climb can at worst show a chain that never existed at once, which
 * the bound on the climb ends (-1: do not know).  A forget racing the
 * climb is ordered after it.
 */
static int orphaned(const struct dc_cache *c, const struct dc_dentry *d)
{

	const struct dc_dentry *root = dc__load_acq(c->root);
	unsigned steps;

	for (steps = 0; steps < 4096; steps++) {
		if (dc__flags(d) & DC_F_DEAD)
			return 1;
		if (d == root)
			return 0;
		d = dc__load_acq(d->parent);
		if (!d)
			return 1;	/* a root, but no longer the root */
	}
	return -1;
}

/* ---- search permission (dc_resolve_as) -------------------------------------- */

static bool in_group(const struct dc_cred *cr, uint32_t gid)
{
	if (cr->gid == gid)
		return true;
	for (uint32_t i = 0; i < cr->ngroups; i++)
		if (cr->groups[i] == gid)
			return true;
	return false;
}

/*
 * generic_permission's MAY_EXEC on directory d of mode mode, mode bits
 * alone: uid 0 overrides (CAP_DAC_READ_SEARCH); the owner gets the user
 * bits, a member of the group the group bits, anyone else the other bits.
 * A directory every class may search (0755, most of a tree) passes
 * whoever asks, without reading its owner.  uid and gid are read only
 * when needed (a lock-free reader's loads, validated by d's seq as the
 * others are).
 */
static bool may_search(const struct dc_cred *cr, uint32_t mode,
		       const struct dc_dentry *d)
{
	if ((mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == (S_IXUSR | S_IXGRP | S_IXOTH) ||
	    cr->uid == 0)
		return true;
	if (cr->uid == dc__load(d->uid))
		return mode & S_IXUSR;
	if (in_group(cr, dc__load(d->gid)))
		return mode & S_IXGRP;
	return mode & S_IXOTH;
}

/*
 * Are d's attributes to be checked with the backend before they are
 * used: suspect (dc_invalidate_inode) or past their TTL?  The root's are
 * refreshed only by replacing the root (dc_invalidate_inode of it).
 */
static bool attrs_stale(const struct dc_dentry *d, const struct dc_dentry *root,
			uint64_t now)
{
	return d != root && ((dc__flags(d) & DC_F_SUSPECT) || dc__expired(d, now));
}

/* ---- rcu-walk ------------------------------------------------------------ */

/*
 * Is d's answer past its deadline at the walk's clock (dc__expired)?  If
 * not, its deadline bounds what the walk may remember of the path (path.c):
 * the earliest one passed is kept.  A revalidation moves a deadline only
 * later, so one read before it only makes the node die sooner.
 */
static inline bool past_ttl(struct nameidata *nd, const struct dc_dentry *d)
{
	uint64_t e;

	/* TTLs off: no load of expires, which lies past the walk's lines */
	if (!nd->now)
		return false;
	e = dc__load(d->expires);
	if (!e)
		return false;
	if (e <= nd->now)
		return true;
	if (!nd->until || e < nd->until)
		nd->until = e;
	return false;
}

/*
 * Walk the path with no lock and no reference.  Caller holds
 * rcu_read_lock.  On 0, *res and *resseq name the answer, still to be
 * validated by the caller after copying what it needs.  checked: search
 * permission for nd->cred on each directory a name is looked up in, read
 * from the entry's mode, uid and gid as every other field, so cur's seq
 * check that follows (the interlock with the child, or fail_validate)
 * proves them; an -EACCES is validated like any answer.  A constant in
 * each caller, so the unchecked walk carries none of it.
 */
static inline __attribute__((always_inline))
int walk_rcu_as(struct nameidata *nd, struct dc_dentry *base,
		struct dc_dentry **res, uint32_t *resseq, const bool checked)
{
	struct dc_cache *c = nd->c;
	/* acquire: pairs with swap_root's release (update.c) */
	struct dc_dentry *cur, *child, *root = dc__load_acq(c->root);
	struct component cp;
	uint32_t seq, cseq, mode;
	int err;

	cur = (nd->cur.p[0] == '/' || !base || is_root(base)) ? root : base;
	if (cur != root && orphaned(c, cur) != 0)
		return -ECHILD;		/* ref-walk knows what to do with it */
	seq = dc__seq_begin(&cur->seq);
	while (next_component(nd, &cp)) {
		mode = dc__load(cur->mode);
		err = need_dir(mode);
		if (err)
			goto fail_validate;
		/* may everyone search it?  (a path's node then serves any
		 * credential: path.c) */
		nd->allx &= (mode & (S_IXUSR | S_IXGRP | S_IXOTH)) ==
			    (S_IXUSR | S_IXGRP | S_IXOTH);
		/* before ".", ".." and the lookup, as may_lookup */
		if (checked) {
			if (attrs_stale(cur, root, nd->now))
				return -ECHILD;	/* ref-walk checks them first */
			if (!may_search(nd->cred, mode, cur)) {
				err = -EACCES;
				goto fail_validate;
			}
		}
		if (is_dot(&cp)) {
			nd->plain = false;
			continue;
		}
		if (is_dotdot(&cp)) {
			nd->plain = false;
			if (cur == root)
				continue;
			/* acquire: pairs with move_entry's release of parent */
			child = dc__load_acq(cur->parent);
			if (!child)	/* a former root: forgotten, ref-walk's */
				return -ECHILD;
			cseq = dc__seq_begin(&child->seq);
			/* interlock: the parent's seq first, then cur's check */
			if (dc__seq_retry(&cur->seq, seq))
				return -ECHILD;
			cur = child;
			seq = cseq;
			continue;
		}
		if (cp.len > DC_NAME_MAX) {
			err = -ENAMETOOLONG;
			goto fail_validate;
		}
		if (dc__flags(cur) & DC_F_DEAD)
			return -ECHILD;
		child = dc__find_rcu(c, cur, cp.name, cp.len,
				     dc__hash_salt(cp.key, cur), &cseq,
				     hash_ahead(nd, &cp));
		if (!child)
			return -ECHILD;
		/* interlock: child's seq was taken; now prove cur held it */
		if (dc__seq_retry(&cur->seq, seq))
			return -ECHILD;
		/* past its TTL: ref-walk asks the backend (dc__revalidate) */
		if (past_ttl(nd, child))
			return -ECHILD;
		mode = dc__load(child->mode);
		/* a negative answer is as much a use as a positive one: a
		 * name probed often (PATH, include paths) stays cached */
		dc__lru_touch(child);
		if (mode == 0) {
			if (dc__seq_retry(&child->seq, cseq))
				return -ECHILD;
			nd->neg_hit = true;
			/* the last component's: the entry a path's -ENOENT rests
			 * on (path.c); above it, any number of strings would
			 * rest on one entry */
			if (cp.final) {
				nd->neg = child;
				nd->negseq = cseq;
			}
			return -ENOENT;
		}
		if (dc__is_lnk(mode) && follow(nd, &cp)) {
			struct dc_xname *x = (struct dc_xname *)dc__load_acq(child->aux);
			/* a checked walk's: its three reads are trusted
			 * under both seqs; a refusal is left to the
			 * ref-walk, which says it */
			bool protect = checked && (nd->flags & DC_PROTECTED_SYMLINKS);
			bool may = !protect ||
				   may_follow(nd, &cp, dc__load(cur->mode),
					      dc__load(cur->uid),
					      dc__load(child->uid));

			nd->plain = false;
			/* the text under the link's seq */
			if (!x || !may || (protect && dc__seq_retry(&cur->seq, seq)) ||
			    dc__seq_retry(&child->seq, cseq))
				return -ECHILD;
			/* x stays allocated until we leave the read section */
			err = push_link(nd, x->n.s, x->n.len);
			if (err < 0)
				return err;
			if (err == 1) {
				cur = root;
				seq = dc__seq_begin(&cur->seq);
			}
			continue;
		}
		cur = child;
		seq = cseq;
	}
	if (nd->must_dir) {
		err = need_dir(dc__load(cur->mode));
		if (err)
			goto fail_validate;
	}
	*res = cur;
	*resseq = seq;
	return 0;

fail_validate:
	return dc__seq_retry(&cur->seq, seq) ? -ECHILD : err;
}

static int walk_rcu(struct nameidata *nd, struct dc_dentry *base,
		    struct dc_dentry **res, uint32_t *resseq)
{
	if (nd->cred)
		return walk_rcu_as(nd, base, res, resseq, true);
	return walk_rcu_as(nd, base, res, resseq, false);
}

/* ---- ref-walk ------------------------------------------------------------ */

/* A reference to the cached entry for cp (hash: salted with dir) in dir, or NULL. */
static struct dc_dentry *lookup_cached(struct dc_cache *c, struct dc_dentry *dir,
				       const struct component *cp, uint32_t hash,
				       uint64_t now)
{
	struct dc_dentry *d;
	uint32_t rseq, dseq;

	dc__read_lock(c);
	if (c->mode != DC_MODE_RCU) {
		d = dc__find_locked(c, dir, cp->name, cp->len, hash);
		if (d && ((dc__flags(d) & (DC_F_PENDING | DC_F_SUSPECT)) ||
			  dc__expired(d, now)))
			d = NULL;
		if (d)	/* the shrinker needs the write lock: d is not dying */
			__atomic_add_fetch(&d->count, 1, __ATOMIC_RELAXED);
		dc__read_unlock(c);
		return d;
	}
	for (;;) {
		rseq = dc__seq_begin(&c->rename_seq);
		d = dc__find_rcu(c, dir, cp->name, cp->len, hash, &dseq, NULL);
		if (d && dc__expired(d, now))
			d = NULL;	/* dc__lookup_slow revalidates it */
		if (d && dc__get_not_dead(d)) {
			/* still the entry we matched, now that it is pinned? */
			if (!dc__seq_retry(&d->seq, dseq))
				break;
			dc_put(c, d);
			continue;
		}
		/* a miss during a rename may be the rename's doing: retry */
		if (!dc__seq_retry(&c->rename_seq, rseq)) {
			d = NULL;
			break;
		}
	}
	dc__read_unlock(c);
	return d;
}

/* A reference to d's parent; to d itself when it has none (a former
 * root: ".." there stays, as at the root). */
static struct dc_dentry *get_parent(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry *p;

	dc__read_lock(c);
	do
		p = dc__load_acq(d->parent);	/* see move_entry */
	while (p && !dc__get_not_dead(p));	/* only if d moved and p went away */
	dc__read_unlock(c);
	return p ? p : dc_get(d);
}

/*
 * A reference to the root.  dc_invalidate of the root swaps in another
 * (swap_root in update.c) and lets the old one go once unused, so a
 * pointer loaded here may be dying: take it only if it is not dead, inside
 * a read section that keeps it allocated meanwhile.
 */
static struct dc_dentry *get_root(struct dc_cache *c)
{
	struct dc_dentry *r;

	dc__rcu_lock();
	do
		r = dc__load_acq(c->root);	/* acquire: see swap_root */
	while (!dc__get_not_dead(r));
	dc__rcu_unlock();
	return r;
}

/* Copy a held symlink's text into a buffer the walk owns. */
static int copy_link(struct nameidata *nd, struct dc_dentry *link,
		     const char **t, size_t *tlen)
{
	struct dc_cache *c = nd->c;
	struct dc_xname *x;
	uint32_t seq, mode;
	char *buf;
	int err = 0;

	buf = dc__malloc(c, DC_PATH_MAX);
	if (!buf)
		return -ENOMEM;
	dc__read_lock(c);
	do {
		seq = dc__seq_begin(&link->seq);
		mode = dc__load(link->mode);
		x = (struct dc_xname *)dc__load_acq(link->aux);
	} while (dc__seq_retry(&link->seq, seq));
	/* a consistent snapshot: x is the text, freed no sooner than the
	 * end of this read section (or kept by the lock, in lock modes) */
	if (dc__is_lnk(mode) && x)
		memcpy(buf, x->n.s, x->n.len + 1);
	dc__read_unlock(c);
	if (!dc__is_lnk(mode)) {	/* unlinked or replaced meanwhile */
		dc__free(c, buf, DC_PATH_MAX);
		return -ENOENT;
	}
	if (!x) {	/* created without its text: ask the backend */
		struct dc_inode st;

		err = dc_dentry_stat(link, &st);
		if (!err)
			err = dc__read_target(c, &st, buf);
		if (err > 0)
			err = 0;
	}
	if (err) {
		dc__free(c, buf, DC_PATH_MAX);
		return err;
	}
	/* keep only what the text needs, so the free knows its size */
	*tlen = strlen(buf);
	nd->bufs[nd->nbufs] = dc__malloc(c, *tlen + 1);
	if (!nd->bufs[nd->nbufs]) {
		dc__free(c, buf, DC_PATH_MAX);
		return -ENOMEM;
	}
	memcpy(nd->bufs[nd->nbufs], buf, *tlen + 1);
	*t = nd->bufs[nd->nbufs++];
	dc__free(c, buf, DC_PATH_MAX);
	return 0;
}

/* One component in ref-walk: a reference to its entry, or an error. */
static int step_ref(struct nameidata *nd, struct dc_dentry *dir,
		    const struct component *cp, struct dc_dentry **out)
{
	uint32_t hash = dc__hash_salt(cp->key, dir);
	struct dc_dentry *d = NULL;

	/* an unhashed directory's cached children may be stale, and so may
	 * an orphan's: the slow path asks the backend (miss.c) */
	if (!nd->orphan && !(dc__flags(dir) & DC_F_DEAD))
		d = lookup_cached(nd->c, dir, cp, hash, nd->now);
	if (d) {
		dc__lru_touch(d);
		*out = d;
		return 0;
	}
	nd->missed = true;
	return dc__lookup_slow(nd->c, dir, cp->name, cp->len, hash, nd->orphan, out);
}

/*
 * Bring directory d's attributes up to date if they are suspect or past
 * their TTL: dc__revalidate (as dc__lookup_slow does for a name) stores
 * what the backend says now in place, or forgets d.  A forgotten d
 * (changed, failed, or below a forgotten directory) keeps the attributes
 * it last had: the walk stands in that inode, whose name the cache no
 * longer knows.
 */
static void fresh_dir(struct nameidata *nd, struct dc_dentry *d,
		      const struct dc_dentry *root)
{
	struct dc_cache *c = nd->c;
	struct dc_dentry *p;

	while (attrs_stale(d, root, nd->now) && !(dc__flags(d) & DC_F_DEAD)) {
		p = get_parent(c, d);
		if (p == d) {		/* a former root: nothing to ask */
			dc_put(c, p);
			return;
		}
		dc__write_lock(c);
		if (d->parent == p && !(dc__flags(d) & DC_F_DEAD) &&
		    attrs_stale(d, root, nd->now)) {
			if (dc__revalidate(c, p, d))	/* drops the lock */
				dc_put(c, d);
		} else {
			dc__write_unlock(c);
		}
		dc_put(c, p);
	}
}

/* may_follow for a link child the ref-walk holds, in cur, which it holds
 * too: the owner and mode of each from one snapshot (one seq write
 * stores them). */
static bool may_follow_ref(struct nameidata *nd, const struct component *cp,
			   struct dc_dentry *cur, struct dc_dentry *child)
{
	uint32_t seq, cseq;
	bool ok;

	if (!nd->cred || !(nd->flags & DC_PROTECTED_SYMLINKS))
		return true;
	do {
		seq = dc__seq_begin(&cur->seq);
		cseq = dc__seq_begin(&child->seq);
		ok = may_follow(nd, cp, dc__load(cur->mode), dc__load(cur->uid),
				dc__load(child->uid));
	} while (dc__seq_retry(&cur->seq, seq) || dc__seq_retry(&child->seq, cseq));
	return ok;
}

/* May the ref-walk look names up in d, which it holds?  0 or -EACCES. */
static int may_search_ref(struct nameidata *nd, struct dc_dentry *d,
			  const struct dc_dentry *root)
{
	uint32_t seq, mode;
	bool ok;

	fresh_dir(nd, d, root);
	/* one snapshot of the three (set_attrs writes them in one seq write) */
	do {
		seq = dc__seq_begin(&d->seq);
		mode = dc__load(d->mode);
		ok = may_search(nd->cred, mode, d);
	} while (dc__seq_retry(&d->seq, seq));
	return ok ? 0 : -EACCES;
}

static int walk_ref(struct nameidata *nd, struct dc_dentry *base,
		    struct dc_dentry **res)
{
	struct dc_cache *c = nd->c;
	/* compared with, never followed: references come from get_root */
	struct dc_dentry *cur, *child = NULL, *root = dc__load_acq(c->root);
	struct component cp;
	uint32_t mode;
	bool missed;
	int err = 0;

	cur = (nd->cur.p[0] == '/' || !base || is_root(base)) ? get_root(c) : dc_get(base);
	if (cur != root) {
		/* sticky until the walk restarts at the root: ".." from an
		 * orphan climbs into orphans */
		int o;

		dc__read_lock(c);
		o = orphaned(c, cur);
		dc__read_unlock(c);
		if (o < 0) {	/* a climb cut short: decide for certain */
			dc__write_lock(c);
			o = dc__orphaned(cur);
			dc__write_unlock(c);
		}
		nd->orphan = o;
	}
	while (next_component(nd, &cp)) {
		err = need_dir(dc__load(cur->mode));
		if (err)
			break;
		/* before ".", ".." and the lookup, as may_lookup */
		if (nd->cred) {
			err = may_search_ref(nd, cur, root);
			if (err)
				break;
		}
		if (is_dot(&cp))
			continue;
		if (is_dotdot(&cp)) {
			if (cur != root) {
				child = get_parent(c, cur);
				dc_put(c, cur);
				cur = child;
			}
			continue;
		}
		if (cp.len > DC_NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		missed = nd->missed;
		err = step_ref(nd, cur, &cp, &child);
		if (err)
			break;
		mode = dc__load(child->mode);
		if (mode == 0) {
			nd->neg_hit = nd->missed == missed;
			dc_put(c, child);
			err = -ENOENT;
			break;
		}
		if (dc__is_lnk(mode) && follow(nd, &cp)) {
			const char *t;
			size_t tlen;

			err = nd->nlinks >= DC_MAXSYMLINKS ? -ELOOP :
			      !may_follow_ref(nd, &cp, cur, child) ? -EACCES :
			      copy_link(nd, child, &t, &tlen);
			dc_put(c, child);
			if (!err)
				err = push_link(nd, t, tlen);
			if (err < 0)
				break;
			if (err == 1) {
				dc_put(c, cur);
				cur = get_root(c);
				nd->orphan = false;
			}
			err = 0;
			continue;
		}
		dc_put(c, cur);
		cur = child;
	}
	if (!err && nd->must_dir)
		err = need_dir(dc__load(cur->mode));
	if (err) {
		dc_put(c, cur);
		return err;
	}
	*res = cur;
	return 0;
}

/* ---- the public calls ---------------------------------------------------- */

static int check_path(const char *path, size_t *lenp)
{
	size_t len = strnlen(path, DC_PATH_MAX);

	if (len == DC_PATH_MAX)
		return -ENAMETOOLONG;
	if (len == 0)
		return -ENOENT;
	*lenp = len;
	return 0;
}

static void count_answer(struct dc_cache *c, const struct nameidata *nd, int err)
{
	if (err == 0 && !nd->missed)
		dc__stat_inc(c, DC_ST_HITS);
	else if (err == -ENOENT && nd->neg_hit)
		dc__stat_inc(c, DC_ST_NEG_HITS);
}

/*
 * May path's answer come from, and go to, the one-probe table (path.c)?
 * A copy-out (dc_resolve, dc_resolve_as) from the root.
 */
static inline __attribute__((always_inline))
bool path_cacheable(const struct dc_cache *c, const struct dc_dentry *base,
		    const char *path, const struct dc_inode *st)
{
	return c->ptab && st && (path[0] == '/' || !base || is_root(base));
}

/* rcu-walk's answer d (seq seq, its inode data copied into st at seq),
 * or -ENOENT from the negative last component nd->neg, into the table,
 * when the walk met no ".", ".." or symlink and d is not a symlink.
 * Inside the read section. */
static void keep_path(struct nameidata *nd, const char *path, size_t len, int err,
		      struct dc_dentry *d, uint32_t seq, const struct dc_inode *st,
		      int32_t shard, uint64_t gen)
{
	static const struct dc_inode none;

	if (!nd->plain || nd->nlinks)
		return;
	if (err == -ENOENT && nd->neg) {
		d = nd->neg;
		seq = nd->negseq;
		st = &none;
	} else if (err || dc__is_lnk(st->mode)) {
		return;
	}
	if (nd->c->dbg_padd)
		nd->c->dbg_padd(nd->c->dbg_padd_arg);
	dc__path_add(nd->c, path, len, d, seq, st, shard, gen, nd->allx, nd->until);
}

/* rcu-walk at clock now (dc__walk_clock), then (if it could not finish)
 * ref-walk.  *res is referenced.  table: the one-probe table was asked
 * first (walk_checked), and is to learn the rcu-walk's answer. */
static __attribute__((noinline))
int walk_path(struct dc_cache *c, struct dc_dentry *base, const char *path,
	      size_t len, unsigned flags, const struct dc_cred *cred,
	      uint64_t now, bool table, struct dc_inode *st, struct dc_dentry **res)
{
	struct nameidata nd;
	struct dc_dentry *d = NULL;
	uint32_t seq = 0;	/* walk_rcu sets it when it answers 0 */
	uint64_t pgen = 0;
	int32_t pshard = -1;
	int err;

	if (c->mode == DC_MODE_RCU) {
		dc__rcu_lock();
		/* before the walk: a directory changed since fails the add */
		if (table)
			pgen = dc__path_gen(c, path, len, &pshard);
		/* a clock not read (TTLs were off) while TTLs are on now: this
		 * walk notes no deadline, so it may make no node.  TTLs are
		 * turned on before everything is forgotten (dc_set_ttl), whose
		 * shard bump the generation's acquire load pairs with: a walk
		 * under the new generation sees ttl_on set; one under the old
		 * makes no node that outlives the bump. */
		if (table && !now && dc__load(c->ttl_on))
			table = false;
		dc__stat_inc(c, DC_ST_LOOKUPS);
		nd_init(&nd, c, path, len, flags, cred, now);
		err = walk_rcu(&nd, base, &d, &seq);
		if (err == 0) {
			if (st) {
				*st = dc__inode_of(d);
			} else if (!dc__get_not_dead(d)) {
				err = -ECHILD;
			}
			/* the copy (or the pin) is of the state we walked to? */
			if (!err && dc__seq_retry(&d->seq, seq)) {
				if (!st)
					dc_put(c, d);
				err = -ECHILD;
			}
		}
		if (table && (err == 0 || err == -ENOENT))
			keep_path(&nd, path, len, err, d, seq, st, pshard, pgen);
		dc__rcu_unlock();
		if (err != -ECHILD) {
			count_answer(c, &nd, err);
			if (!err && res)
				*res = d;
			return err;
		}
		dc__stat_inc(c, DC_ST_RESTARTS);
	} else {
		dc__stat_inc(c, DC_ST_LOOKUPS);
	}
	nd_init(&nd, c, path, len, flags, cred, dc__walk_clock(c));
	err = walk_ref(&nd, base, &d);
	nd_release(&nd);
	count_answer(c, &nd, err);
	if (err)
		return err;
	if (st) {
		err = dc_dentry_stat(d, st);
		dc_put(c, d);
		return err;
	}
	*res = d;
	return 0;
}

/* dc_resolve, dc_resolve_as and dc_walk: their checks, then the walk,
 * whose answer goes to st or to out (the one that is not NULL).  Inlined
 * into each, so that a hit in the one-probe table costs no more calls. */
static inline __attribute__((always_inline))
int walk_checked(struct dc_cache *c, struct dc_dentry *base,
		 const char *path, unsigned flags,
		 const struct dc_cred *cred, struct dc_inode *st,
		 struct dc_dentry **out)
{
	uint64_t now;
	size_t len;
	bool table;
	int err;

	if (!c || !path || (!st && !out) ||
	    (flags & ~(unsigned)(DC_NOFOLLOW | DC_PROTECTED_SYMLINKS)))
		return -EINVAL;
	err = check_path(path, &len);
	if (err)
		return err;
	dc__thread_enter();
	/* the resolve's one clock read (TTLs on), for the probe and the walk */
	now = dc__walk_clock(c);
	/* a cached path's answer in one probe, before any walk is set up;
	 * an answer here is counted there, as a lookup too */
	table = c->mode == DC_MODE_RCU && path_cacheable(c, base, path, st) &&
		!dc__path_skip(c);
	if (table) {
		dc__rcu_lock();
		err = dc__path_lookup(c, path, len, cred != NULL, now, st);
		dc__rcu_unlock();
		if (err != -ECHILD)
			return err;
	}
	return walk_path(c, base, path, len, flags, cred, now, table, st, out);
}

DC_API int dc_resolve(struct dc_cache *c, struct dc_dentry *base,
		      const char *path, unsigned flags, struct dc_inode *st)
{
	return walk_checked(c, base, path, flags, NULL, st, NULL);
}

DC_API int dc_resolve_as(struct dc_cache *c, struct dc_dentry *base,
			 const char *path, unsigned flags,
			 const struct dc_cred *cred, struct dc_inode *st)
{
	if (!cred || (cred->ngroups && !cred->groups))
		return -EINVAL;
	return walk_checked(c, base, path, flags, cred, st, NULL);
}

DC_API int dc_walk(struct dc_cache *c, struct dc_dentry *base, const char *path,
		   unsigned flags, struct dc_dentry **out)
{
	return walk_checked(c, base, path, flags, NULL, NULL, out);
}

DC_API int dc_lookup(struct dc_cache *c, struct dc_dentry *dir, const char *name,
		     size_t len, struct dc_dentry **out)
{
	if (!c || !dir || !name || !out)
		return -EINVAL;
	if (len == 0 || memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	if (len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	dc__thread_enter();
	return walk_path(c, dir, name, len, DC_NOFOLLOW, NULL, dc__walk_clock(c),
			 false, NULL, out);
}

DC_API struct dc_dentry *dc_root(struct dc_cache *c)
{
	if (!c)
		return NULL;
	dc__thread_enter();
	return get_root(c);
}
