// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remote_node.c - dcfs over NFS: the node table and the attributes seen
 * of each node.
 *
 * Nodes: what FUSE calls an inode is a struct rnode, found by (fsid,
 * fileid, handle) in one table, its address the nodeid (the export's
 * root is FUSE_ROOT_ID).  A node holds its file handle and the kernel's
 * lookup count; a directory's also holds a cache entry of it, to look
 * its names up in, replaced whenever a lookup finds the directory again.
 *
 * Locking: one mutex, rs.nodes_lock, over the table, every node's
 * lookup count, entry, open count, hidden name, and attributes seen.
 * Nothing is called under it (no RPC, no cache call but dc_get).
 * rs.attr_gen and rs.changed_ms are atomics: rattr_changed stores the
 * time, then bumps the generation with release; readers load the
 * generation with acquire, then the time (see rattr_of_entry).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "remote_fs.h"

struct remote_state rs = { .nodes_lock = PTHREAD_MUTEX_INITIALIZER,
			   .commit_done = PTHREAD_COND_INITIALIZER };

/* ---- nodes ---------------------------------------------------------------- */

struct rnode *rnode_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &rs.root : (struct rnode *)(uintptr_t)ino;
}

fuse_ino_t rnode_id(struct rnode *n)
{
	return n == &rs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

size_t rnode_bucket(uint64_t dev, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ dev) % NODE_BUCKETS;
}

bool rnode_same_fh(const struct dcnfs_fh *a, const struct dcnfs_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* Remember st's times and size as what n's last open saw.  nodes_lock
 * held. */
void rnode_seen_locked(struct rnode *n, const struct stat *st)
{
	n->mtime = st->st_mtim;
	n->ctime = st->st_ctim;
	n->size = st->st_size;
}

/*
 * The node of inode (dev, ino) of type type (S_IFMT bits) and handle fh,
 * one more lookup counted on it: found, or made.  dentry (a directory's
 * entry, or NULL) replaces the node's own; the reference passes to the
 * node, or is dropped.
 */
struct rnode *rnode_get(uint64_t dev, uint64_t ino, uint32_t type,
			      const struct dcnfs_fh *fh, struct dc_dentry *dentry)
{
	size_t b = rnode_bucket(dev, ino);
	struct dc_dentry *old = NULL;
	struct rnode *n;

	pthread_mutex_lock(&rs.nodes_lock);
	if (ino == rs.root.ino && dev == rs.root.dev) {
		n = &rs.root;
	} else {
		/* an inode's number may be given to a new inode once it is
		 * gone: a node with the old handle (ESTALE) stays, apart, for
		 * the kernel's references */
		for (n = rs.buckets[b]; n; n = n->hnext)
			if (n->ino == ino && n->dev == dev && rnode_same_fh(&n->fh, fh))
				break;
	}
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&rs.nodes_lock);
			if (dentry)
				dc_put(rs.cache, dentry);
			return NULL;
		}
		n->dev = dev;
		n->ino = ino;
		n->type = type & S_IFMT;
		n->fh = *fh;
		n->hnext = rs.buckets[b];
		rs.buckets[b] = n;
	}
	n->nlookup++;
	if (dentry && S_ISDIR(n->type)) {
		old = n->dentry;
		n->dentry = dentry;
		dentry = NULL;
	}
	pthread_mutex_unlock(&rs.nodes_lock);
	if (old)
		dc_put(rs.cache, old);
	if (dentry)
		dc_put(rs.cache, dentry);
	return n;
}

/* The node of the inode st describes (rnode_get). */
struct rnode *rnode_get_st(const struct stat *st, const struct dcnfs_fh *fh,
				 struct dc_dentry *dentry)
{
	return rnode_get((uint64_t)st->st_dev, st->st_ino, st->st_mode, fh, dentry);
}

/* ---- attributes seen ------------------------------------------------------- */

static int64_t ts_ms(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

int64_t rs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ms(&ts);
}

uint64_t rattr_gen(void)
{
	/* acquire: pairs with rattr_changed's release; a reader that sees
	 * the old generation stored attributes seen before the change,
	 * which the new generation then refuses */
	return __atomic_load_n(&rs.attr_gen, __ATOMIC_ACQUIRE);
}

/* *p = max(*p, v), atomically: two changes never move it back. */
static void ms_raise(int64_t *p, int64_t v)
{
	int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (old < v && !__atomic_compare_exchange_n(p, &old, v, false,
						       __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* A change through the mount: attributes seen before serve no more. */
void rattr_changed(void)
{
	/* the time first: a reader that sees the new generation sees it */
	ms_raise(&rs.changed_ms, rs_now_ms());
	__atomic_add_fetch(&rs.attr_gen, 1, __ATOMIC_RELEASE);
}

/* How long st's inode had been unchanged (its mtime or ctime, by the
 * server's clock) when an RPC sent at ms (rs_now_ms's clock) saw it. */
static int64_t unchanged_ms(const struct stat *st, int64_t ms)
{
	struct timespec wall;
	int64_t m = ts_ms(&st->st_mtim), c = ts_ms(&st->st_ctim);

	if (!m && !c)	/* no times (NFSv4 may leave them out): no age */
		return 0;
	clock_gettime(CLOCK_REALTIME, &wall);
	return ts_ms(&wall) - (rs_now_ms() - ms) - (m > c ? m : c);
}

/* How long after an RPC sent at ms saw st it serves: by how long the
 * inode had been unchanged then, a file's within --ac/--acregmax, a
 * directory's within --acdir/--acdirmax. */
static int64_t trust_ms(const struct stat *st, int64_t ms)
{
	int64_t age = unchanged_ms(st, ms);

	if (S_ISDIR(st->st_mode))
		return dcnfs_trust_ms(age, rs.acdir_min_ms, rs.acdir_max_ms);
	return dcnfs_trust_ms(age, rs.acreg_min_ms, rs.acreg_max_ms);
}

/* st, from an RPC sent at ms while the generation was gen, as n's, to
 * serve for trust ms. */
static void store_trusted(struct rnode *n, const struct stat *st, int64_t ms,
			  uint64_t gen, int64_t trust)
{
	pthread_mutex_lock(&rs.nodes_lock);
	/* an answer to an RPC sent before this mount's last write to the
	 * file may show it before the write */
	if (ms >= n->st_ms && ms > n->changed_ms) {
		n->st = *st;
		n->st_ms = ms;
		n->st_trust_ms = trust;
		n->st_gen = gen;
	}
	pthread_mutex_unlock(&rs.nodes_lock);
}

void rattr_store(struct rnode *n, const struct stat *st, int64_t ms,
		       uint64_t gen)
{
	store_trusted(n, st, ms, gen, trust_ms(st, ms));
}

/* n's own data changed (a write): its attributes are to be asked for. */
void rattr_stale(struct rnode *n)
{
	pthread_mutex_lock(&rs.nodes_lock);
	n->st_ms = 0;
	n->changed_ms = rs_now_ms();
	pthread_mutex_unlock(&rs.nodes_lock);
}

/* n's attributes into *st if seen recently enough (trust_ms) and since
 * the last change through the mount. */
static bool attr_fresh(struct rnode *n, struct stat *st, int64_t now,
		       uint64_t gen)
{
	bool fresh;

	pthread_mutex_lock(&rs.nodes_lock);
	fresh = n->st_ms && n->st_gen == gen && now - n->st_ms <= n->st_trust_ms;
	if (fresh)
		*st = n->st;
	pthread_mutex_unlock(&rs.nodes_lock);
	return fresh;
}

/* n's attributes: fresh ones (attr_fresh), else a GETATTR's.  0 or a
 * negative errno. */
int rattr_get(struct rnode *n, struct stat *st)
{
	int64_t ms = rs_now_ms();
	uint64_t gen = rattr_gen();
	int err;

	if (attr_fresh(n, st, ms, gen))
		return 0;
	err = dcnfs_getattr(&rs.be, NULL, &n->fh, st);
	if (!err)
		rattr_store(n, st, ms, gen);
	return err;
}

/*
 * The same for a node just looked up through the cache: the attributes
 * the backend saw of its entry's inode (seen: when; 0: none), from its
 * LOOKUP's reply or a revalidation, serve too if as fresh: seen recently
 * enough (trust_ms), by an RPC sent after the last change through the mount
 * (strictly: one sent in the same ms might have been before it) and
 * after this mount's last write to the file.
 */
int rattr_of_entry(struct rnode *n, const struct stat *seed, int64_t seen,
			 struct stat *st)
{
	int64_t ms = rs_now_ms();
	uint64_t gen = rattr_gen();	/* before changed_ms: rattr_changed */
	int64_t trust;
	bool ok;

	if (attr_fresh(n, st, ms, gen))
		return 0;
	trust = seen ? trust_ms(seed, seen) : 0;
	if (seen && ms - seen <= trust &&
	    seen > __atomic_load_n(&rs.changed_ms, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&rs.nodes_lock);
		ok = seen > n->changed_ms;
		pthread_mutex_unlock(&rs.nodes_lock);
		if (ok) {
			*st = *seed;
			store_trusted(n, st, seen, gen, trust);
			return 0;
		}
	}
	return rattr_get(n, st);
}

/*
 * n is known to the kernel no more (nlookup 0) and pinned by no open
 * file (opens 0): off its bucket, its entry returned for the caller to
 * put, and n to free, after nodes_lock.  NULL n: nothing to do.
 */
static struct rnode *unhash_unused(struct rnode *n, struct dc_dentry **d)
{
	struct rnode **pp;

	*d = NULL;
	if (n->nlookup || n->opens || n == &rs.root)
		return NULL;
	for (pp = &rs.buckets[rnode_bucket(n->dev, n->ino)]; *pp; pp = &(*pp)->hnext)
		if (*pp == n) {
			*pp = n->hnext;
			break;
		}
	/* the backend may still hold attributes of the inode from before a
	 * write through n: a node made for it later must not take them
	 * (rattr_of_entry); under the lock that rnode_get takes too */
	if (n->changed_ms)
		ms_raise(&rs.changed_ms, n->changed_ms);
	*d = n->dentry;
	return n;
}

static void free_unused(struct rnode *n, struct dc_dentry *d)
{
	if (d)
		dc_put(rs.cache, d);
	free(n);
}

/* The kernel forgot nlookup lookups of n: at none left, n goes, unless
 * an open file still pins it (open_node may have found it by its
 * inode): then its last rnode_closed frees it. */
void rnode_forget(struct rnode *n, uint64_t nlookup)
{
	struct dc_dentry *d;

	pthread_mutex_lock(&rs.nodes_lock);
	n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
	n = unhash_unused(n, &d);
	pthread_mutex_unlock(&rs.nodes_lock);
	if (n)
		free_unused(n, d);
}

/* At the end: every node the kernel did not forget, and its entry. */
void rnodes_free_all(void)
{
	struct rnode *n;
	size_t b;

	for (b = 0; b < NODE_BUCKETS; b++)
		while ((n = rs.buckets[b])) {
			rs.buckets[b] = n->hnext;
			/* the mount is gone, and the files open through it */
			if (n->silly)
				dcnfs_remove(&rs.be, NULL, &n->silly_dir,
					     n->silly_name, 0);
			if (n->dentry)
				dc_put(rs.cache, n->dentry);
			free(n);
		}
}

/* Names in directory p were made or removed through this mount: the
 * backend trusts what it saw of p as of a directory changed lately
 * (--acdir), so another client's change there after this one shows as
 * soon as one made in any directory changed lately would. */
void rdir_changed(struct rnode *p)
{
	struct dc_dentry *d;
	struct dc_inode in;

	if (rnode_dentry(p, &d))
		return;
	if (!dc_dentry_stat(d, &in))
		dcnfs_inode_changed(&rs.be, &in);
	dc_put(rs.cache, d);
}

/* A reference to directory node n's entry: 0, ENOTDIR, or ESTALE (a
 * directory made here whose entry was never found). */
int rnode_dentry(struct rnode *n, struct dc_dentry **out)
{
	if (!S_ISDIR(n->type))
		return ENOTDIR;
	pthread_mutex_lock(&rs.nodes_lock);
	*out = n->dentry ? dc_get(n->dentry) : NULL;
	pthread_mutex_unlock(&rs.nodes_lock);
	return *out ? 0 : ESTALE;
}

/* One more open file of n. */
void rnode_opened(struct rnode *n)
{
	pthread_mutex_lock(&rs.nodes_lock);
	n->opens++;
	pthread_mutex_unlock(&rs.nodes_lock);
}

/* One open file of n fewer: at none left, the hidden name an unlink gave
 * it goes (as root: the unlink was the caller's, and checked), a loss of
 * written data is no longer told (the files it was told to are closed),
 * and n goes too if the kernel forgot it meanwhile (rnode_forget). */
void rnode_closed(struct rnode *n)
{
	struct dcnfs_fh dir;
	char name[sizeof(n->silly_name)];
	struct rnode *at = NULL;
	struct dc_dentry *d;
	bool remove;

	pthread_mutex_lock(&rs.nodes_lock);
	remove = --n->opens == 0 && n->silly;
	if (!n->opens)		/* a loss is told to the files open at it */
		n->lost = false;
	if (remove) {
		n->silly = false;
		dir = n->silly_dir;
		memcpy(name, n->silly_name, sizeof(name));
		at = n->silly_at;
		n->silly_at = NULL;
	}
	n = unhash_unused(n, &d);
	pthread_mutex_unlock(&rs.nodes_lock);
	if (n)
		free_unused(n, d);
	if (!remove)
		return;
	if (dcnfs_remove(&rs.be, NULL, &dir, name, 0))
		syslog(LOG_WARNING, "dcfs: could not remove %s, the name of a "
		       "file unlinked while open", name);
	if (at)			/* a lookup may have cached the hidden name */
		rnode_unhid(at, name);
	rattr_changed();		/* its directory's times */
}

/* The hidden name name in directory node p is gone: the cache forgets
 * it under p's entry as it is now, and p's hold (unlink_open's) goes. */
void rnode_unhid(struct rnode *p, const char *name)
{
	struct dc_dentry *d;

	if (!rnode_dentry(p, &d)) {
		dc_invalidate_name(rs.cache, d, name);
		dc_put(rs.cache, d);
	}
	rnode_forget(p, 1);
}
