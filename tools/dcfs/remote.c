// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remote.c - dcfs over an NFS export: "dcfs nfs://HOST/EXPORT MOUNTPOINT".
 *
 * The same split as over a host directory (dcfs.h): names live in
 * libdcache, whose backend is tools/nfs's (one LOOKUP per miss, entries
 * revalidated against their directory's attributes when their TTL ran
 * out); everything else is one NFSv3 RPC through nfsio.c, by file handle.
 *
 * Nodes: what FUSE calls an inode is a struct rnode, found by (fsid,
 * fileid) in one table under nodes_lock, its address the nodeid (the
 * export's root is FUSE_ROOT_ID).  A node holds its file handle and the
 * kernel's lookup count; a directory's also holds a cache entry of it, to
 * look its names up in.  That entry is replaced whenever a lookup finds
 * the directory again, so a directory renamed or replaced behind us
 * heals at the kernel's next revalidation: a lookup in a directory whose
 * entry the cache forgot answers ESTALE, and Linux then walks the path
 * again from the top, looking each name up afresh.
 *
 * Coherence, as Linux's NFS client (docs/dcfs.md, "Over NFS"): the kernel
 * keeps names for --entry-timeout and attributes for --attr-timeout; the
 * cache keeps answers for --ttl (negative ones for --neg-ttl), then asks
 * the server whether the directory changed (one GETATTR, none if its
 * attributes were seen within --acdir) and looks the name up again only
 * if it did.  Close-to-open: open asks for the file's attributes, and the
 * kernel's pages of it are kept only if the file did not change since;
 * data written is committed on close (flush) and fsync, and a server that
 * restarted in between (another write verifier) makes them fail with EIO.
 *
 * Credentials: the kernel checks permissions against the attributes
 * (default_permissions); calls that make, remove, rename or link names or
 * change attributes go to the server as the caller (AUTH_UNIX: uid, gid,
 * groups), so it owns what it makes and the server checks as well; the
 * cache's own lookups, reads and writes of opened files go as root, as
 * the kernel checked them at open.  The export must not squash root.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/fs.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"
#include "nfs/nfsfs.h"
#include "remote.h"

#define NODE_BUCKETS	4096
#define GROUPS_MAX	16	/* AUTH_UNIX carries no more */

struct rnode {
	struct rnode *hnext;		/* nodes_lock */
	uint64_t dev, ino;		/* the key; written once */
	uint32_t type;			/* S_IFMT bits; never changes */
	struct dcnfs_fh fh;		/* written once */
	uint64_t nlookup;		/* nodes_lock */
	struct dc_dentry *dentry;	/* a directory's entry; nodes_lock */
	/* the file as the last open saw it: close-to-open's check */
	struct timespec mtime, ctime;	/* nodes_lock */
	off_t size;
	/* the attributes last seen, from an RPC sent at st_ms (0: none)
	 * while rs.attr_gen was st_gen: answers for --ac ms */
	struct stat st;			/* nodes_lock */
	int64_t st_ms;
	uint64_t st_gen;
	int64_t changed_ms;		/* when a write here last changed it */
	/* open files of it, and the name an unlink gave it while open
	 * (removed at the last release): nodes_lock */
	unsigned opens;
	bool silly;
	struct dcnfs_fh silly_dir;
	char silly_name[40];
};

/* An open file: the write verifier of data not yet committed. */
struct rfile {
	pthread_mutex_t lock;
	bool dirty;
	uint64_t verf;
};

/* An open directory: its listing, read whole at opendir. */
struct rdir {
	char *buf;		/* names, NUL-terminated, one after another */
	size_t len, cap;
	uint64_t *ino;		/* per name */
	size_t n, ncap;
};

static struct {
	struct dc_backend be;
	struct dc_cache *cache;
	struct rnode root;
	struct rnode *buckets[NODE_BUCKETS];
	pthread_mutex_t nodes_lock;
	double entry_timeout, attr_timeout, neg_timeout;
	bool no_names;		/* --name-cache off: every lookup a LOOKUP */
	int64_t ac_ms;		/* --ac: attributes seen this recently serve */
	/* bumped by each change made through the mount that may change
	 * attributes of inodes other than the one it names (nlink, a
	 * directory's times): attributes seen before it serve no more */
	uint64_t attr_gen;	/* atomic */
	int64_t changed_ms;	/* atomic: when attr_gen last moved */
	struct fuse_session *se;
} rs = { .nodes_lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- nodes ---------------------------------------------------------------- */

static struct rnode *node_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &rs.root : (struct rnode *)(uintptr_t)ino;
}

static fuse_ino_t node_id(struct rnode *n)
{
	return n == &rs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static size_t bucket_of(uint64_t dev, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ dev) % NODE_BUCKETS;
}

static bool same_fh(const struct dcnfs_fh *a, const struct dcnfs_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* Remember st's times and size as what n's last open saw.  nodes_lock
 * held. */
static void seen_locked(struct rnode *n, const struct stat *st)
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
static struct rnode *node_get(uint64_t dev, uint64_t ino, uint32_t type,
			      const struct dcnfs_fh *fh, struct dc_dentry *dentry)
{
	size_t b = bucket_of(dev, ino);
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
			if (n->ino == ino && n->dev == dev && same_fh(&n->fh, fh))
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

/* The node of the inode st describes (node_get). */
static struct rnode *node_get_st(const struct stat *st, const struct dcnfs_fh *fh,
				 struct dc_dentry *dentry)
{
	return node_get((uint64_t)st->st_dev, st->st_ino, st->st_mode, fh, dentry);
}

/* ---- attributes seen ------------------------------------------------------- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t attr_gen(void)
{
	/* acquire: pairs with attr_changed's release; a reader that sees
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
static void attr_changed(void)
{
	/* the time first: a reader that sees the new generation sees it */
	ms_raise(&rs.changed_ms, mono_ms());
	__atomic_add_fetch(&rs.attr_gen, 1, __ATOMIC_RELEASE);
}

/* st, from an RPC sent at ms while the generation was gen, as n's. */
static void attr_store(struct rnode *n, const struct stat *st, int64_t ms,
		       uint64_t gen)
{
	pthread_mutex_lock(&rs.nodes_lock);
	/* an answer to an RPC sent before this mount's last write to the
	 * file may show it before the write */
	if (ms >= n->st_ms && ms > n->changed_ms) {
		n->st = *st;
		n->st_ms = ms;
		n->st_gen = gen;
	}
	pthread_mutex_unlock(&rs.nodes_lock);
}

/* n's own data changed (a write): its attributes are to be asked for. */
static void attr_stale(struct rnode *n)
{
	pthread_mutex_lock(&rs.nodes_lock);
	n->st_ms = 0;
	n->changed_ms = mono_ms();
	pthread_mutex_unlock(&rs.nodes_lock);
}

/* n's attributes into *st if seen within --ac ms and since the last
 * change through the mount. */
static bool attr_fresh(struct rnode *n, struct stat *st, int64_t now,
		       uint64_t gen)
{
	bool fresh;

	pthread_mutex_lock(&rs.nodes_lock);
	fresh = n->st_ms && n->st_gen == gen && now - n->st_ms <= rs.ac_ms;
	if (fresh)
		*st = n->st;
	pthread_mutex_unlock(&rs.nodes_lock);
	return fresh;
}

/* n's attributes: fresh ones (attr_fresh), else a GETATTR's.  0 or a
 * negative errno. */
static int attr_get(struct rnode *n, struct stat *st)
{
	int64_t ms = mono_ms();
	uint64_t gen = attr_gen();
	int err;

	if (attr_fresh(n, st, ms, gen))
		return 0;
	err = dcnfs_getattr(&rs.be, NULL, &n->fh, st);
	if (!err)
		attr_store(n, st, ms, gen);
	return err;
}

/*
 * The same for a node just looked up through the cache: the attributes
 * the backend saw of its entry's inode (seen: when; 0: none), from its
 * LOOKUP's reply or a revalidation, serve too if as fresh: seen within
 * --ac ms, by an RPC sent after the last change through the mount
 * (strictly: one sent in the same ms might have been before it) and
 * after this mount's last write to the file.
 */
static int attr_of_entry(struct rnode *n, const struct stat *seed, int64_t seen,
			 struct stat *st)
{
	int64_t ms = mono_ms();
	uint64_t gen = attr_gen();	/* before changed_ms: attr_changed */
	bool ok;

	if (attr_fresh(n, st, ms, gen))
		return 0;
	if (seen && ms - seen <= rs.ac_ms &&
	    seen > __atomic_load_n(&rs.changed_ms, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&rs.nodes_lock);
		ok = seen > n->changed_ms;
		pthread_mutex_unlock(&rs.nodes_lock);
		if (ok) {
			*st = *seed;
			attr_store(n, st, seen, gen);
			return 0;
		}
	}
	return attr_get(n, st);
}

/* The kernel forgot nlookup lookups of n: at none left, n goes. */
static void node_forget(struct rnode *n, uint64_t nlookup)
{
	struct dc_dentry *d = NULL;
	struct rnode **pp;

	pthread_mutex_lock(&rs.nodes_lock);
	n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
	if (n->nlookup || n == &rs.root) {
		pthread_mutex_unlock(&rs.nodes_lock);
		return;
	}
	for (pp = &rs.buckets[bucket_of(n->dev, n->ino)]; *pp; pp = &(*pp)->hnext)
		if (*pp == n) {
			*pp = n->hnext;
			break;
		}
	/* the backend may still hold attributes of the inode from before a
	 * write through n: a node made for it later must not take them
	 * (attr_of_entry); under the lock that node_get takes too */
	if (n->changed_ms)
		ms_raise(&rs.changed_ms, n->changed_ms);
	d = n->dentry;
	pthread_mutex_unlock(&rs.nodes_lock);
	if (d)
		dc_put(rs.cache, d);
	free(n);
}

/* At the end: every node the kernel did not forget, and its entry. */
static void nodes_free_all(void)
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

/* A reference to directory node n's entry: 0, ENOTDIR, or ESTALE (a
 * directory made here whose entry was never found). */
static int node_dentry(struct rnode *n, struct dc_dentry **out)
{
	if (!S_ISDIR(n->type))
		return ENOTDIR;
	pthread_mutex_lock(&rs.nodes_lock);
	*out = n->dentry ? dc_get(n->dentry) : NULL;
	pthread_mutex_unlock(&rs.nodes_lock);
	return *out ? 0 : ESTALE;
}

/* ---- replies ---------------------------------------------------------------- */

/* The caller of req, as AUTH_UNIX carries it. */
struct rcred {
	struct dcnfs_cred c;
	uint32_t groups[GROUPS_MAX];
};

static const struct dcnfs_cred *caller(fuse_req_t req, struct rcred *rc)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t g[GROUPS_MAX];
	int i, n = fuse_req_getgroups(req, GROUPS_MAX, g);

	rc->c.uid = ctx->uid;
	rc->c.gid = ctx->gid;
	rc->c.ngroups = 0;
	for (i = 0; i < n && i < GROUPS_MAX; i++)
		rc->groups[rc->c.ngroups++] = g[i];
	rc->c.groups = rc->groups;
	return &rc->c;
}

static void reply_entry(fuse_req_t req, struct rnode *n, const struct stat *st)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = node_id(n);
	e.attr = *st;
	e.attr_timeout = rs.attr_timeout;
	e.entry_timeout = rs.entry_timeout;
	if (fuse_reply_entry(req, &e) == -ENOENT)	/* the request was interrupted */
		node_forget(n, 1);
}

/* ---- names ------------------------------------------------------------------ */

/* Has the cache forgotten the directory entry d (removed, replaced)? */
static bool forgotten(struct dc_dentry *d)
{
	char path[2];

	return dc_dentry_path(rs.cache, d, path, sizeof(path)) == -ENOENT;
}

/* An absent name, for the kernel to keep so for the negative timeout. */
static void reply_absent(fuse_req_t req)
{
	struct fuse_entry_param e = { .entry_timeout = rs.neg_timeout };

	fuse_reply_entry(req, &e);
}

/* --name-cache off: the kernel's lookup is one LOOKUP RPC, as a client
 * without a name cache sends (the baseline the cache is measured by). */
static void lookup_uncached(fuse_req_t req, struct rnode *p, const char *name)
{
	int64_t ms = mono_ms();
	uint64_t gen = attr_gen();
	struct dcnfs_fh fh;
	struct stat st;
	struct rnode *n;
	int err = S_ISDIR(p->type) ? -dcnfs_lookup(&rs.be, NULL, &p->fh, name,
						   &fh, &st) : ENOTDIR;

	if (err == ENOENT && rs.neg_timeout > 0) {
		reply_absent(req);
		return;
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	n = node_get_st(&st, &fh, NULL);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	attr_store(n, &st, ms, gen);
	reply_entry(req, n, &st);
}

static void r_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dc_dentry *dir, *d;
	struct stat st, seed;
	struct dcnfs_fh fh;
	struct dc_inode in;
	int64_t seen;
	struct rnode *n;
	int err;

	if (rs.no_names) {
		lookup_uncached(req, node_of(parent), name);
		return;
	}
	err = node_dentry(node_of(parent), &dir);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	err = -dc_lookup(rs.cache, dir, name, strlen(name), &d);
	if (err == ENOENT && forgotten(dir))
		err = ESTALE;	/* the kernel looks its path up again */
	dc_put(rs.cache, dir);
	if (err == ENOENT && rs.neg_timeout > 0) {
		reply_absent(req);
		return;
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	err = -dc_dentry_stat(d, &in);
	if (!err)
		err = -dcnfs_inode_fh(&in, &fh);
	if (err) {
		dc_put(rs.cache, d);
		fuse_reply_err(req, err);
		return;
	}
	/* while d is held: its cookie is the backend's until released */
	if (dcnfs_inode_stat(&rs.be, &in, &seed, &seen))
		seen = 0;
	n = node_get(in.gen, in.ino, in.mode, &fh, d);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* a hit costs no RPC while its attributes are fresh (--ac), nor a
	 * miss: its LOOKUP's reply carried them */
	err = -attr_of_entry(n, &seed, seen, &st);
	if (err) {
		node_forget(n, 1);
		fuse_reply_err(req, err);
		return;
	}
	reply_entry(req, n, &st);
}

static void r_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_forget(node_of(ino), nlookup);
	fuse_reply_none(req);
}

static void r_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		node_forget(node_of(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/*
 * name appeared in parent (handle fh, attributes st): the cache forgets
 * what it held for the name, and a directory's node gets its entry (one
 * lookup, through the cache).  Replies with the new node's entry.
 */
static struct rfile *rfile_new(void)
{
	struct rfile *f = calloc(1, sizeof(*f));

	if (f)
		pthread_mutex_init(&f->lock, NULL);
	return f;
}

static void rfile_free(struct rfile *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* One more open file of n. */
static void node_opened(struct rnode *n)
{
	pthread_mutex_lock(&rs.nodes_lock);
	n->opens++;
	pthread_mutex_unlock(&rs.nodes_lock);
}

/* One open file of n fewer: at none left, the hidden name an unlink gave
 * it goes (as root: the unlink was the caller's, and checked). */
static void node_closed(struct rnode *n)
{
	struct dcnfs_fh dir;
	char name[sizeof(n->silly_name)];
	bool remove;

	pthread_mutex_lock(&rs.nodes_lock);
	remove = --n->opens == 0 && n->silly;
	if (remove) {
		n->silly = false;
		dir = n->silly_dir;
		memcpy(name, n->silly_name, sizeof(name));
	}
	pthread_mutex_unlock(&rs.nodes_lock);
	if (!remove)
		return;
	if (dcnfs_remove(&rs.be, NULL, &dir, name, 0))
		syslog(LOG_WARNING, "dcfs: could not remove %s, the name of a "
		       "file unlinked while open", name);
	attr_changed();		/* its directory's times */
}

/* The directory entry d, of a directory just made: is it the inode with
 * handle fh (and not one another client put under the name since)? */
static bool entry_is(struct dc_dentry *d, const struct dcnfs_fh *fh)
{
	struct dcnfs_fh found;
	struct dc_inode in;

	return !dc_dentry_stat(d, &in) && !dcnfs_inode_fh(&in, &found) &&
	       same_fh(&found, fh);
}

/*
 * name appeared in parent (handle fh, attributes st, from an RPC sent at
 * ms): the cache forgets what it held for the name, and a directory's
 * node gets its entry (one lookup, through the cache).  Replies with the
 * new node's entry, and for a create (fi) its open file.
 */
static void made(fuse_req_t req, struct rnode *parent, const char *name,
		 const struct dcnfs_fh *fh, const struct stat *st, int64_t ms,
		 struct fuse_file_info *fi)
{
	struct dc_dentry *dir, *d = NULL;
	struct fuse_entry_param e;
	struct rnode *n;

	if (!node_dentry(parent, &dir)) {
		dc_invalidate_name(rs.cache, dir, name);
		if (S_ISDIR(st->st_mode) &&
		    !dc_lookup(rs.cache, dir, name, strlen(name), &d) &&
		    !entry_is(d, fh)) {
			dc_put(rs.cache, d);
			d = NULL;	/* found at its first lookup instead */
		}
		dc_put(rs.cache, dir);
	}
	n = node_get_st(st, fh, d);
	if (!n) {
		if (fi)
			rfile_free((struct rfile *)(uintptr_t)fi->fh);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	attr_store(n, st, ms, attr_gen());
	if (!fi) {
		reply_entry(req, n, st);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = node_id(n);
	e.attr = *st;
	e.attr_timeout = rs.attr_timeout;
	e.entry_timeout = rs.entry_timeout;
	node_opened(n);
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		/* interrupted: no release will come */
		node_closed(n);
		node_forget(n, 1);
		rfile_free((struct rfile *)(uintptr_t)fi->fh);
	}
}

/*
 * Does cr have access mask (4 read, 2 write) to an inode of attributes
 * st, by its mode bits, as the kernel's generic_permission checks them
 * (no ACLs: NFSv3 carries none)?  Root reads and writes anything.
 */
static bool may_access(const struct stat *st, const struct dcnfs_cred *cr,
		       unsigned mask)
{
	mode_t m = st->st_mode;
	uint32_t i;

	if (cr->uid == 0)
		return true;
	if (cr->uid == st->st_uid) {
		m >>= 6;
	} else {
		bool group = cr->gid == st->st_gid;

		for (i = 0; !group && i < cr->ngroups; i++)
			group = cr->groups[i] == st->st_gid;
		if (group)
			m >>= 3;
	}
	return (m & mask) == mask;
}

/*
 * O_CREAT without O_EXCL of a name the server has though the kernel did
 * not know it (another client made it): open that file, as open(2)
 * would, checking the caller's access and truncating for O_TRUNC.  Its
 * handle and attributes into *fh and *st; 0 or an errno.
 */
static int open_existing(struct rnode *p, const char *name, int flags,
			 const struct dcnfs_cred *cr, struct dcnfs_fh *fh,
			 struct stat *st)
{
	unsigned mask = (flags & O_ACCMODE) == O_RDONLY ? 4 :
			(flags & O_ACCMODE) == O_WRONLY ? 2 : 6;
	struct stat want = { .st_size = 0 };
	int err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, fh, st);

	if (err)
		return err;
	if (S_ISDIR(st->st_mode))
		return EISDIR;
	if (!S_ISREG(st->st_mode))
		return EEXIST;	/* a create of a name another type holds */
	if (flags & O_TRUNC)
		mask |= 2;
	if (!may_access(st, cr, mask))
		return EACCES;
	if (flags & O_TRUNC)
		err = -dcnfs_setattr(&rs.be, cr, fh, &want, DCNFS_SET_SIZE, st);
	return err;
}

static void make(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode, dev_t rdev, const char *target,
		 struct fuse_file_info *fi)
{
	struct rnode *p = node_of(parent);
	const struct dcnfs_cred *cr;
	struct rfile *f = NULL;
	struct dcnfs_fh fh;
	int64_t ms = mono_ms();
	struct rcred rc;
	struct stat st;
	int err, tries;

	if (fi) {
		f = rfile_new();
		if (!f) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		fi->fh = (uint64_t)(uintptr_t)f;
	}
	cr = caller(req, &rc);
	/* GUARDED: an UNCHECKED CREATE would open a file another client
	 * made, unchecked, as this caller's own */
	for (tries = 0; tries < 2; tries++) {
		err = -dcnfs_make(&rs.be, cr, &p->fh, name, mode, 1, rdev,
				  target, &fh, &st);
		if (err != EEXIST || !fi || (fi->flags & O_EXCL))
			break;
		err = open_existing(p, name, fi->flags, cr, &fh, &st);
		if (err != ENOENT)
			break;	/* ENOENT: removed between: create it again */
	}
	attr_changed();		/* the parent's times and link count */
	if (err) {
		rfile_free(f);
		fuse_reply_err(req, err);
		return;
	}
	made(req, p, name, &fh, &st, ms, fi);
}

static void r_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, dev_t rdev)
{
	make(req, parent, name, mode, rdev, NULL, NULL);
}

static void r_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode)
{
	make(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL, NULL);
}

static void r_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
		      const char *name)
{
	make(req, parent, name, S_IFLNK | 0777, 0, target, NULL);
}

static void r_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	make(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, fi);
}

/* The handle and identity of what name in p names: the cache's answer,
 * else the server's (a directory without a cache entry, or a cache that
 * does not know the name yet).  0 or an errno. */
static int name_fh(struct rnode *p, const char *name, struct dcnfs_fh *fh,
		   uint64_t *dev, uint64_t *ino, uint32_t *mode)
{
	struct dc_dentry *dir, *d;
	struct dc_inode in;
	struct stat st;
	int err = node_dentry(p, &dir);

	if (!err) {
		err = -dc_lookup(rs.cache, dir, name, strlen(name), &d);
		dc_put(rs.cache, dir);
		if (!err) {
			err = -dc_dentry_stat(d, &in);
			if (!err)
				err = -dcnfs_inode_fh(&in, fh);
			dc_put(rs.cache, d);
		}
		if (!err) {
			*dev = in.gen;
			*ino = in.ino;
			*mode = in.mode;
			return 0;
		}
	}
	err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, fh, &st);
	if (err)
		return err;
	*dev = (uint64_t)st.st_dev;
	*ino = st.st_ino;
	*mode = st.st_mode;
	return 0;
}

/*
 * The node of an open file whose last name is name in p, pinned as one
 * more open file (node_closed unpins), so that it cannot close unseen
 * between here and its hidden name; NULL if none, if it has a hidden
 * name already or another name (either keeps the inode: the server's
 * link count, asked now, says), or if it is unless's.
 */
static struct rnode *open_node(struct rnode *p, const char *name,
			       const struct dcnfs_fh *unless)
{
	struct dcnfs_fh fh;
	struct rnode *n;
	struct stat st;
	uint64_t dev, ino;
	uint32_t mode;

	if (name_fh(p, name, &fh, &dev, &ino, &mode) || S_ISDIR(mode) ||
	    (unless && same_fh(unless, &fh)))
		return NULL;
	pthread_mutex_lock(&rs.nodes_lock);
	for (n = rs.buckets[bucket_of(dev, ino)]; n; n = n->hnext)
		if (n->ino == ino && n->dev == dev && same_fh(&n->fh, &fh))
			break;
	if (n && (!n->opens || n->silly))
		n = NULL;
	if (n)
		n->opens++;
	pthread_mutex_unlock(&rs.nodes_lock);
	if (n && (dcnfs_getattr(&rs.be, NULL, &fh, &st) || st.st_nlink > 1)) {
		node_closed(n);
		n = NULL;
	}
	return n;
}

/*
 * Unlink name, a name of n, a file open here: as NFS clients do, it is
 * renamed to a hidden name instead (were it the last, the server would
 * forget the inode, and reads of the open file would answer ESTALE),
 * removed at the last release.  0 or an errno.
 */
static int unlink_open(struct rnode *p, const char *name, struct rnode *n,
		       const struct dcnfs_cred *cr)
{
	static uint64_t seq;
	char silly[sizeof(n->silly_name)];
	int err;

	snprintf(silly, sizeof(silly), ".dcfs-silly.%" PRIx64 ".%" PRIx64, n->ino,
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	err = -dcnfs_rename(&rs.be, cr, &p->fh, name, &p->fh, silly);
	if (err)
		return err;
	pthread_mutex_lock(&rs.nodes_lock);
	n->silly = true;
	n->silly_dir = p->fh;
	memcpy(n->silly_name, silly, sizeof(silly));
	pthread_mutex_unlock(&rs.nodes_lock);
	return 0;
}

static void r_remove(fuse_req_t req, fuse_ino_t parent, const char *name,
		     int is_dir)
{
	struct rnode *p = node_of(parent), *n = NULL;
	const struct dcnfs_cred *cr;
	struct dc_dentry *dir;
	struct rcred rc;
	int err;

	cr = caller(req, &rc);
	if (!is_dir)
		n = open_node(p, name, NULL);
	if (n) {
		err = unlink_open(p, name, n, cr);
		node_closed(n);	/* closed meanwhile: the hidden name goes now */
	} else {
		err = -dcnfs_remove(&rs.be, cr, &p->fh, name, is_dir);
	}
	attr_changed();		/* the inode's link count, the parent's times */

	/* the cache hears of it whatever the answer: -EIO may hide a done
	 * REMOVE, and forgetting the name is never wrong */
	if (!node_dentry(p, &dir)) {
		if (err || (is_dir ? dc_rmdir(rs.cache, dir, name) :
				     dc_unlink(rs.cache, dir, name)))
			dc_invalidate_name(rs.cache, dir, name);
		dc_put(rs.cache, dir);
	}
	fuse_reply_err(req, err);
}

static void r_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	r_remove(req, parent, name, 0);
}

static void r_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	r_remove(req, parent, name, 1);
}

/*
 * RENAME_NOREPLACE, which NFSv3 cannot say: is name absent from directory
 * node p on the server (0, or EEXIST)?  The kernel holds both directories
 * locked, so nothing through this mount comes between the LOOKUP and the
 * RENAME; a second client's create of the name may (docs/dcfs.md).
 */
static int absent_on_server(struct rnode *p, const char *name)
{
	struct dcnfs_fh fh;
	struct stat st;
	int err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, &fh, &st);

	return err == ENOENT ? 0 : err ? err : EEXIST;
}

static void r_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		     fuse_ino_t newparent, const char *newname,
		     unsigned int flags)
{
	struct rnode *op = node_of(parent), *np = node_of(newparent), *t;
	struct dc_dentry *od = NULL, *nd = NULL;
	const struct dcnfs_cred *cr;
	struct dcnfs_fh sfh;
	struct rcred rc;
	uint64_t dev, ino;
	uint32_t mode;
	int err;

	if (flags & ~RENAME_NOREPLACE) {	/* NFSv3 cannot exchange */
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = flags ? absent_on_server(np, newname) : 0;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	cr = caller(req, &rc);
	/* a file open here that the rename would replace keeps a hidden name
	 * (r_remove), unless it is the source itself (then nothing changes)
	 * or the source is a directory (which cannot replace a file) */
	if (!flags && !name_fh(op, name, &sfh, &dev, &ino, &mode) &&
	    !S_ISDIR(mode) && (t = open_node(np, newname, &sfh))) {
		err = unlink_open(np, newname, t, cr);
		node_closed(t);
		if (err) {
			fuse_reply_err(req, err);
			return;
		}
	}
	err = -dcnfs_rename(&rs.be, cr, &op->fh, name, &np->fh, newname);
	attr_changed();		/* a replaced inode's link count, the parents' */
	if (node_dentry(op, &od))
		od = NULL;
	if (node_dentry(np, &nd))
		nd = NULL;
	/* the cache moves what it holds, or forgets both names (an error may
	 * hide a done RENAME; either side may be unknown to it) */
	if (err || !od || !nd || dc_rename(rs.cache, od, name, nd, newname, 0)) {
		if (od)
			dc_invalidate_name(rs.cache, od, name);
		if (nd)
			dc_invalidate_name(rs.cache, nd, newname);
	}
	if (od)
		dc_put(rs.cache, od);
	if (nd)
		dc_put(rs.cache, nd);
	fuse_reply_err(req, err);
}

static void r_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		   const char *newname)
{
	struct rnode *n = node_of(ino), *p = node_of(newparent);
	int64_t ms = mono_ms();
	struct dc_dentry *dir;
	struct rcred rc;
	struct stat st;
	int err = -dcnfs_link(&rs.be, caller(req, &rc), &n->fh, &p->fh, newname,
			      &st);

	attr_changed();		/* the parent's times */

	if (!node_dentry(p, &dir)) {
		dc_invalidate_name(rs.cache, dir, newname);
		dc_put(rs.cache, dir);
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	n = node_get_st(&st, &n->fh, NULL);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	attr_store(n, &st, ms, attr_gen());
	reply_entry(req, n, &st);
}

static void r_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX];
	int err = dcnfs_readlink(&rs.be, &node_of(ino)->fh, buf, sizeof(buf));

	if (err < 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, buf);
}

/* ---- attributes ---------------------------------------------------------------- */

static void r_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err = -attr_get(node_of(ino), &st);

	(void)fi;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fuse_reply_attr(req, &st, rs.attr_timeout);
}

static unsigned set_bits(int to_set)
{
	unsigned what = 0;

	if (to_set & FUSE_SET_ATTR_MODE)
		what |= DCNFS_SET_MODE;
	if (to_set & FUSE_SET_ATTR_UID)
		what |= DCNFS_SET_UID;
	if (to_set & FUSE_SET_ATTR_GID)
		what |= DCNFS_SET_GID;
	if (to_set & FUSE_SET_ATTR_SIZE)
		what |= DCNFS_SET_SIZE;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		what |= DCNFS_SET_ATIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		what |= DCNFS_SET_ATIME;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		what |= DCNFS_SET_MTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		what |= DCNFS_SET_MTIME;
	return what;
}

/*
 * Does mode only drop n's set-user-ID or set-group-ID bits?  The kernel
 * asks so after a write by someone without CAP_FSETID, which the server
 * would refuse from anyone but the owner; it is done as root (the kernel
 * itself does it so on local file systems).
 */
static bool kills_setid(struct rnode *n, mode_t mode)
{
	struct stat now;

	if (dcnfs_getattr(&rs.be, NULL, &n->fh, &now))
		return false;
	return (now.st_mode & (S_ISUID | S_ISGID)) &&
	       (now.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) == (mode & 07777);
}

static void r_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	struct rnode *n = node_of(ino);
	const struct dcnfs_cred *cr;
	struct rcred rc;
	struct stat st;
	int err;

	(void)fi;
	cr = caller(req, &rc);
	if (to_set == FUSE_SET_ATTR_MODE && cr->uid && kills_setid(n, attr->st_mode))
		cr = NULL;
	err = -dcnfs_setattr(&rs.be, cr, &n->fh, attr, set_bits(to_set), &st);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		/* the cache holds permission bits and owners */
		dc_invalidate_inode(rs.cache, st.st_ino, (uint32_t)st.st_dev);
	/* the backend's attributes of it are older now: the next ask is an
	 * RPC (attr_stale), and a node made after this one is forgotten
	 * takes none of them (node_forget) */
	attr_stale(n);
	fuse_reply_attr(req, &st, rs.attr_timeout);
}

static void r_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;
	int err = -dcnfs_statfs(&rs.be, &node_of(ino)->fh, &st);

	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &st);
}

/* ---- data ------------------------------------------------------------------------ */

/* open's O_TRUNC (libfuse asks the kernel to pass it on): the file's
 * size to 0 as the caller, its attributes after into *st. */
static int trunc_open(fuse_req_t req, struct rnode *n, struct stat *st)
{
	struct stat want = { .st_size = 0 };
	struct rcred rc;

	return -dcnfs_setattr(&rs.be, caller(req, &rc), &n->fh, &want,
			      DCNFS_SET_SIZE, st);
}

static void r_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rnode *n = node_of(ino);
	int64_t ms = mono_ms();
	uint64_t gen = attr_gen();
	struct rfile *f;
	struct stat st;
	bool same;
	int err;

	/* close-to-open: the attributes now, from the server */
	if (fi->flags & O_TRUNC)
		err = trunc_open(req, n, &st);
	else
		err = -dcnfs_getattr(&rs.be, NULL, &n->fh, &st);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	if (fi->flags & O_TRUNC)
		attr_stale(n);	/* as a write */
	else
		attr_store(n, &st, ms, gen);
	f = rfile_new();
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* the kernel's pages only while the file is as when we last saw it */
	pthread_mutex_lock(&rs.nodes_lock);
	same = !(fi->flags & O_TRUNC) &&
	       n->mtime.tv_sec == st.st_mtim.tv_sec &&
	       n->mtime.tv_nsec == st.st_mtim.tv_nsec &&
	       n->ctime.tv_sec == st.st_ctim.tv_sec &&
	       n->ctime.tv_nsec == st.st_ctim.tv_nsec && n->size == st.st_size;
	seen_locked(n, &st);
	n->opens++;
	pthread_mutex_unlock(&rs.nodes_lock);
	/* the kernel's size of the file may be --attr-timeout old: it asks
	 * again before reading (auto_inval_data).  Only attributes (offset
	 * -1): no page lock, nothing a request may hold */
	if (!same)
		fuse_lowlevel_notify_inval_inode(rs.se, ino, -1, 0);
	fi->keep_cache = same;
	fi->fh = (uint64_t)(uintptr_t)f;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the kernel kept its pages: the next open must not */
		pthread_mutex_lock(&rs.nodes_lock);
		n->mtime.tv_nsec = -1;
		pthread_mutex_unlock(&rs.nodes_lock);
		rfile_free(f);
		node_closed(n);
	}
}

static struct rfile *rfile_of(struct fuse_file_info *fi)
{
	return (struct rfile *)(uintptr_t)fi->fh;
}

static void r_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	char *buf = malloc(size ? size : 1);
	ssize_t got;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	got = dcnfs_read(&rs.be, NULL, &node_of(ino)->fh, buf, size, (uint64_t)off);
	if (got < 0)
		fuse_reply_err(req, (int)-got);
	else
		fuse_reply_buf(req, buf, (size_t)got);
	free(buf);
}

/*
 * f holds data written under verifier verf, not committed.  A second
 * verifier before a commit means the server restarted between two writes
 * and may have lost the first: the verifier kept is then one no COMMIT
 * answers (the complement), so the commit fails.  f->lock held.
 */
static void dirty_locked(struct rfile *f, uint64_t verf)
{
	f->verf = f->dirty && f->verf != verf ? ~verf : verf;
	f->dirty = true;
}

static void r_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	struct rfile *f = rfile_of(fi);
	uint64_t verf;
	ssize_t done = dcnfs_write(&rs.be, NULL, &node_of(ino)->fh, buf, size,
				   (uint64_t)off, &verf);

	attr_stale(node_of(ino));	/* its size and times, even on failure */
	if (done < 0) {
		fuse_reply_err(req, (int)-done);
		return;
	}
	pthread_mutex_lock(&f->lock);
	dirty_locked(f, verf);
	pthread_mutex_unlock(&f->lock);
	fuse_reply_write(req, (size_t)done);
}

/* Commit what f wrote: 0, or an errno (EIO: the server lost some). */
static int commit(fuse_ino_t ino, struct rfile *f)
{
	uint64_t verf = 0, want;
	bool dirty;
	int err;

	pthread_mutex_lock(&f->lock);
	dirty = f->dirty;
	want = f->verf;
	f->dirty = false;
	pthread_mutex_unlock(&f->lock);
	if (!dirty)
		return 0;
	err = -dcnfs_commit(&rs.be, NULL, &node_of(ino)->fh, &verf);
	pthread_mutex_lock(&f->lock);
	if (err) {
		/* not committed: still to do, under the writes' verifier */
		dirty_locked(f, want);
	} else if (verf != want) {
		/* lost: every later fsync or close says so too */
		err = EIO;
		f->dirty = true;
		f->verf = ~verf;
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

static void r_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, commit(ino, rfile_of(fi)));
}

static void r_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	(void)datasync;
	fuse_reply_err(req, commit(ino, rfile_of(fi)));
}

static void r_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	commit(ino, rfile_of(fi));	/* flush said what went wrong */
	rfile_free(rfile_of(fi));
	node_closed(node_of(ino));
	fuse_reply_err(req, 0);
}

/* ---- listings --------------------------------------------------------------------- */

static int keep_name(void *arg, const char *name, uint64_t ino)
{
	struct rdir *d = arg;
	size_t len = strlen(name) + 1;

	if (d->len + len > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4096;
		char *buf;

		while (cap < d->len + len)
			cap *= 2;
		buf = realloc(d->buf, cap);
		if (!buf)
			return -ENOMEM;
		d->buf = buf;
		d->cap = cap;
	}
	if (d->n == d->ncap) {
		size_t cap = d->ncap ? d->ncap * 2 : 64;
		uint64_t *in = realloc(d->ino, cap * sizeof(*in));

		if (!in)
			return -ENOMEM;
		d->ino = in;
		d->ncap = cap;
	}
	memcpy(d->buf + d->len, name, len);
	d->len += len;
	d->ino[d->n++] = ino;
	return 0;
}

static void rdir_free(struct rdir *d)
{
	free(d->buf);
	free(d->ino);
	free(d);
}

static void r_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rdir *d = calloc(1, sizeof(*d));
	struct rcred rc;
	int err;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	err = -dcnfs_list(&rs.be, caller(req, &rc), &node_of(ino)->fh,
			  keep_name, d);
	if (err) {
		rdir_free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) == -ENOENT)
		rdir_free(d);
}

static void r_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct rdir *d = (struct rdir *)(uintptr_t)fi->fh;
	char *buf = malloc(size ? size : 1);
	const char *name = d->buf;
	size_t used = 0, i;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = 0; i < d->n; name += strlen(name) + 1, i++) {
		struct stat st = { .st_ino = d->ino[i] };
		size_t len;

		if ((off_t)i < off)
			continue;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st,
					(off_t)i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void r_releasedir(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	(void)ino;
	rdir_free((struct rdir *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void r_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* the kernel clears set-id bits after a write itself, asking with a
	 * SETATTR (kills_setid): writes go to the server as root, which
	 * would keep them */
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
}

static const struct fuse_lowlevel_ops remote_ops = {
	.init		= r_init,
	.lookup		= r_lookup,
	.forget		= r_forget,
	.forget_multi	= r_forget_multi,
	.getattr	= r_getattr,
	.setattr	= r_setattr,
	.readlink	= r_readlink,
	.mknod		= r_mknod,
	.mkdir		= r_mkdir,
	.symlink	= r_symlink,
	.unlink		= r_unlink,
	.rmdir		= r_rmdir,
	.rename		= r_rename,
	.link		= r_link,
	.open		= r_open,
	.create		= r_create,
	.read		= r_read,
	.write		= r_write,
	.flush		= r_flush,
	.fsync		= r_fsync,
	.release	= r_release,
	.opendir	= r_opendir,
	.readdir	= r_readdir,
	.releasedir	= r_releasedir,
	.statfs		= r_statfs,
};

/* ---- start-up ------------------------------------------------------------------- */

struct ropts {
	const char *url, *mountpoint, *stats, *fuse_opts;
	bool foreground, debug;
	unsigned threads;
	uint32_t ttl_ms, neg_ttl_ms, acdir_ms;
	enum { LC_ALL, LC_POSITIVE, LC_NONE } lookupcache;
};

static const char remote_usage[] =
"usage: dcfs nfs://HOST/EXPORT MOUNTPOINT [-f] [-d] [-o OPT[,OPT...]]\n"
"            [--threads N] [--entry-timeout S] [--attr-timeout S]\n"
"            [--ttl MS] [--neg-ttl MS] [--acdir MS] [--ac MS]\n"
"            [--lookupcache all|positive|none] [--name-cache on|off]\n"
"            [--stats FILE]\n"
"\n"
"Serves an NFSv3 export through FUSE, its names in libdcache (one LOOKUP\n"
"per name missed), everything else by file handle.  See docs/dcfs.md,\n"
"\"Over NFS\", for what a second client sees and when.\n"
"\n"
"  -f, --foreground    stay in the foreground\n"
"  -d                  libfuse's debug output (implies -f)\n"
"  -o OPT              a mount option for libfuse (fsname=, allow_root, ...)\n"
"  --threads N         requests served at once (default 8)\n"
"  --entry-timeout S   how long the kernel keeps a name (default 1)\n"
"  --attr-timeout S    how long the kernel keeps attributes (default 1)\n"
"  --ttl MS            how long the cache trusts a name before it asks\n"
"                      whether its directory changed (default 1000)\n"
"  --neg-ttl MS        the same for an absent name (default 1000)\n"
"  --acdir MS          directory attributes seen this recently count as\n"
"                      checked (default 100; 0: always ask)\n"
"  --ac MS             attributes seen this recently answer the kernel's\n"
"                      lookups and getattrs without a GETATTR (default\n"
"                      1000; 0: always ask; open always asks)\n"
"  --lookupcache all|positive|none\n"
"                      which answers are kept, as NFS's option (default all)\n"
"  --name-cache off    no name cache: each name the kernel asks for is a\n"
"                      LOOKUP RPC (a baseline to measure the cache by)\n"
"  --stats FILE        at unmount, write RPC and cache counts to FILE\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
remote_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dcfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	fputs(remote_usage, stderr);
	exit(2);
}

/* A whole number in [0, max] from s, or a usage error naming opt. */
static uint64_t number(const char *opt, const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		remote_usage_error("%s takes a whole number from 0 to %llu, not '%s'",
				   opt, (unsigned long long)max, s);
	return v;
}

static double seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		remote_usage_error("%s takes seconds (0 or more), not '%s'", opt, s);
	return v;
}

static void parse(int argc, char **argv, struct ropts *o)
{
	static const struct option longs[] = {
		{ "threads", required_argument, NULL, 'T' },
		{ "entry-timeout", required_argument, NULL, 'E' },
		{ "attr-timeout", required_argument, NULL, 'A' },
		{ "ttl", required_argument, NULL, 't' },
		{ "neg-ttl", required_argument, NULL, 'n' },
		{ "acdir", required_argument, NULL, 'a' },
		{ "ac", required_argument, NULL, 'c' },
		{ "lookupcache", required_argument, NULL, 'l' },
		{ "stats", required_argument, NULL, 's' },
		{ "name-cache", required_argument, NULL, 'N' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "fdo:h", longs, NULL)) != -1) {
		switch (c) {
		case 'f': o->foreground = true; break;
		case 'd': o->debug = o->foreground = true; break;
		case 'o': o->fuse_opts = optarg; break;
		case 'T': o->threads = (unsigned)number("--threads", optarg, 1024);
			  if (!o->threads)
				  remote_usage_error("--threads is at least 1");
			  break;
		case 'E': rs.entry_timeout = seconds("--entry-timeout", optarg); break;
		case 'A': rs.attr_timeout = seconds("--attr-timeout", optarg); break;
		case 't': o->ttl_ms = (uint32_t)number("--ttl", optarg, UINT32_MAX - 1); break;
		case 'n': o->neg_ttl_ms = (uint32_t)number("--neg-ttl", optarg, UINT32_MAX - 1); break;
		case 'a': o->acdir_ms = (uint32_t)number("--acdir", optarg, UINT32_MAX - 1); break;
		case 'c': rs.ac_ms = (int64_t)number("--ac", optarg, UINT32_MAX - 1); break;
		case 'l':
			if (!strcmp(optarg, "all"))
				o->lookupcache = LC_ALL;
			else if (!strcmp(optarg, "positive"))
				o->lookupcache = LC_POSITIVE;
			else if (!strcmp(optarg, "none"))
				o->lookupcache = LC_NONE;
			else
				remote_usage_error("--lookupcache is all, positive or none, not '%s'",
						   optarg);
			break;
		case 's': o->stats = optarg; break;
		case 'N':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				remote_usage_error("--name-cache is on or off, not '%s'", optarg);
			rs.no_names = !strcmp(optarg, "off");
			break;
		case 'h': fputs(remote_usage, stdout); exit(0);
		default: remote_usage_error("unknown option (see above)");
		}
	}
	if (argc - optind != 2)
		remote_usage_error("give nfs://HOST/EXPORT and MOUNTPOINT");
	o->url = argv[optind];
	o->mountpoint = argv[optind + 1];
}

static struct dcnfs_options backend_options(const struct ropts *o)
{
	struct dcnfs_options no = { .acdir_ms = o->acdir_ms ? o->acdir_ms :
						   DCNFS_ACDIR_OFF };

	return no;
}

/* Can the export be mounted?  Said on stderr if not. */
static int check_export(const struct ropts *o)
{
	struct dcnfs_options no = backend_options(o);
	struct dc_backend be;
	int err = dcnfs_open(o->url, &no, &be);

	if (err) {
		fprintf(stderr, "dcfs: %s: %s\n", o->url, strerror(-err));
		return -1;
	}
	be.ops->destroy(be.ctx);
	return 0;
}

/* The cache over the export, and the root node. */
static int open_cache(const struct ropts *o)
{
	struct dcnfs_options no = backend_options(o);
	struct dc_options co = { .mode = DC_MODE_RCU };
	struct dc_inode in;
	struct stat st;
	int err = dcnfs_open(o->url, &no, &rs.be);

	if (err) {
		fprintf(stderr, "dcfs: %s: %s\n", o->url, strerror(-err));
		return -1;
	}
	co.backend = rs.be;
	/* as NFS's lookupcache: answers of that kind expire at once */
	co.ttl_ms = o->lookupcache == LC_NONE ? 1 : o->ttl_ms;
	co.neg_ttl_ms = o->lookupcache != LC_ALL ? 1 : o->neg_ttl_ms;
	err = dc_cache_create(&co, &rs.cache);
	if (err) {	/* the cache destroyed the backend */
		fprintf(stderr, "dcfs: cache: %s\n", strerror(-err));
		return -1;
	}
	rs.root.dentry = dc_root(rs.cache);
	err = dc_dentry_stat(rs.root.dentry, &in);
	if (!err)
		err = dcnfs_inode_fh(&in, &rs.root.fh);
	if (!err)
		err = dcnfs_getattr(&rs.be, NULL, &rs.root.fh, &st);
	if (err) {
		fprintf(stderr, "dcfs: %s: its root: %s\n", o->url, strerror(-err));
		return -1;
	}
	rs.root.dev = (uint64_t)st.st_dev;
	rs.root.ino = st.st_ino;
	rs.root.type = S_IFDIR;
	return 0;
}

static void write_stats(const char *path)
{
	struct dcnfs_stats ns;
	struct dc_stats cs;
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "dcfs: --stats %s: %s\n", path, strerror(errno));
		return;
	}
	dcnfs_stats(&rs.be, &ns);
	dc_get_stats(rs.cache, &cs);
	fprintf(f, "rpc LOOKUP=%" PRIu64 " GETATTR=%" PRIu64 " READDIR=%" PRIu64
		" READLINK=%" PRIu64 " READ=%" PRIu64 " WRITE=%" PRIu64
		" COMMIT=%" PRIu64 " updates=%" PRIu64 " SETATTR=%" PRIu64
		" connects=%" PRIu64 " retries=%" PRIu64 " revalidations=%" PRIu64 "\n",
		ns.lookups, ns.getattrs, ns.readdirs, ns.readlinks, ns.reads,
		ns.writes, ns.commits, ns.updates, ns.setattrs, ns.connects,
		ns.retries, ns.revalidations);
	fprintf(f, "cache lookups=%" PRIu64 " hits=%" PRIu64 " misses=%" PRIu64 "\n",
		cs.lookups, cs.hits, cs.misses);
	if (fclose(f))
		fprintf(stderr, "dcfs: --stats %s: %s\n", path, strerror(errno));
}

/* libfuse's arguments: the options always given, then the user's. */
static int fuse_args_of(const struct ropts *o, char *argv0, struct fuse_args *a)
{
	char base[PATH_MAX + 96];

	snprintf(base, sizeof(base), "default_permissions%s,subtype=dcfs,fsname=%s",
		 geteuid() == 0 ? ",allow_other" : "", o->url);
	if (strchr(o->url, ',') || strchr(o->url, '\\'))
		return -EINVAL;
	if (fuse_opt_add_arg(a, argv0) || fuse_opt_add_arg(a, "-o") ||
	    fuse_opt_add_arg(a, base) ||
	    (o->fuse_opts && (fuse_opt_add_arg(a, "-o") ||
			      fuse_opt_add_arg(a, o->fuse_opts))) ||
	    (o->debug && fuse_opt_add_arg(a, "-d")))
		return -ENOMEM;
	return 0;
}

int remote_main(int argc, char **argv)
{
	struct ropts o = { .threads = 8, .ttl_ms = 1000, .neg_ttl_ms = 1000,
			   .acdir_ms = 100 };
	struct fuse_args fa = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *cfg;
	int ret = 1;

	rs.entry_timeout = rs.attr_timeout = 1.0;
	rs.ac_ms = 1000;
	parse(argc, argv, &o);
	if (o.lookupcache == LC_NONE)
		rs.entry_timeout = 0;
	rs.neg_timeout = o.lookupcache == LC_ALL ? rs.entry_timeout : 0;
	/* the cache's threads would not survive fuse_daemonize's fork: it is
	 * made after, and the export checked before, while errors still
	 * reach the terminal and the exit status */
	if (check_export(&o))
		goto out;
	if (fuse_args_of(&o, argv[0], &fa)) {
		fprintf(stderr, "dcfs: %s: a ',' or '\\' in the URL cannot be a "
			"mount option\n", o.url);
		goto out;
	}
	rs.se = fuse_session_new(&fa, &remote_ops, sizeof(remote_ops), NULL);
	if (!rs.se) {
		fprintf(stderr, "dcfs: libfuse refused the mount options (see above)\n");
		goto out;
	}
	if (fuse_set_signal_handlers(rs.se) ||
	    fuse_session_mount(rs.se, o.mountpoint)) {
		fprintf(stderr, "dcfs: could not mount on '%s'\n", o.mountpoint);
		goto destroy;
	}
	if (fuse_daemonize(o.foreground)) {
		fprintf(stderr, "dcfs: could not go into the background\n");
		goto unmount;
	}
	if (open_cache(&o)) {
		syslog(LOG_ERR, "dcfs: %s: the export failed at start (see above)",
		       o.url);
		goto unmount;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		fprintf(stderr, "dcfs: out of memory\n");
		goto unmount;
	}
	fuse_loop_cfg_set_max_threads(cfg, o.threads);
	ret = fuse_session_loop_mt(rs.se, cfg) ? 1 : 0;
	fuse_loop_cfg_destroy(cfg);
unmount:
	fuse_session_unmount(rs.se);
	fuse_remove_signal_handlers(rs.se);
destroy:
	fuse_session_destroy(rs.se);
out:
	fuse_opt_free_args(&fa);
	if (rs.cache && o.stats)
		write_stats(o.stats);
	if (rs.cache) {
		nodes_free_all();
		if (rs.root.dentry)
			dc_put(rs.cache, rs.root.dentry);
		dc_cache_destroy(rs.cache);
	}
	return ret;
}
