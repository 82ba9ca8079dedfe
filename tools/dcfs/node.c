// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * node.c - dcfs's nodes: the table keyed by (st_dev, st_ino) and a node's
 * life (get, activate, forget, refresh, free).  How a request reaches a
 * node's inode (its descriptor, one opened by handle, one for I/O) is
 * nodefd.c; the libdcache backend whose cookies nodes are is backend.c.
 *
 * Life of a node
 * --------------
 * A node is born in node_get(), called by the backend's lookup (a cache
 * miss) or after dcfs itself created a name, with refs = 1: the reference
 * of the cache entry about to hold it as its cookie.  It then lives while
 * anything refers to it:
 *
 *   refs = (cache entries whose cookie it is)
 *        + (1 while nlookup > 0: the kernel's share)
 *        + (short-lived references: the per-thread descriptor stash)
 *
 * and is freed by the node_put() that takes refs to zero.  Zero is final.
 *
 * The lookup/forget race
 * ----------------------
 * A FUSE lookup must never hand out a node that is being freed.  Here a
 * lookup reaches a node in one of two ways, and both hold a reference
 * before they touch nlookup:
 *   - through a cache entry it holds (dc_lookup returns a referenced
 *     entry; the entry's reference on the node cannot go while it is
 *     held: libdcache neither evicts a held entry nor changes a held
 *     entry's inode in place);
 *   - through the node table (node_get), which takes a reference only
 *     "unless zero", under the lock of the node's stripe, so a node whose
 *     last reference is gone is invisible even though it is still in the
 *     chain (the freeing thread unlinks it under the same lock).
 * FORGET only lowers nlookup; when nlookup reaches zero it gives back the
 * kernel's share of refs, after the node's state was torn down under its
 * lock.  A lookup that raced with it either incremented a non-zero count
 * (then the forget did not reach zero) or finds zero under the node's lock
 * and builds the state again.  So a node is never freed while a lookup
 * holds it, and never counted by the kernel while it has no descriptor.
 *
 * Locks (none is held while another of dcfs's is taken, except where said):
 *   stripe lock  (tab.locks[bucket % NSTRIPES]) - the chains of its buckets;
 *                taken in node_get and when a node is unlinked for freeing.
 *                Nothing else is called under it.
 *   node lock    (n->lock) - nlookup crossing zero, fd, fh and io_fd of a
 *                non-directory, dentry of a directory.  Under it dcfs
 *                calls openat/fstat/name_to_handle_at and dc_get (no lock
 *                of libdcache).
 *   libdcache    calls release() (node_put) with its write lock held; a
 *                node_put may take a stripe lock: the order is always
 *                cache lock -> stripe lock, never the reverse.
 * nodefd.c takes the node lock only to keep an I/O descriptor
 * (node_io_keep), under the same rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcfs.h"

#define NSTRIPES	256

/* A pause where a race matters: tests/test_node.c builds this file with
 * NODE_RACE_WINDOW and stages the race there; nothing in dcfs. */
#ifdef NODE_RACE_WINDOW
void race_window(struct dnode *n);
#define node_race_window(n) race_window(n)
#else
#define node_race_window(n) ((void)0)
#endif

static struct {
	struct dnode **buckets;
	uint64_t mask;
	pthread_mutex_t locks[NSTRIPES];
} tab;

struct dcfs_counters dcfs_ctr;

static uint64_t key_hash(uint64_t dev, uint64_t ino)
{
	uint64_t x = ino * 0x9E3779B97F4A7C15ull ^ (dev + 0x632BE59BD9B4E019ull);

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	return x;
}

int nodes_init(uint64_t nbuckets)
{
	uint64_t n = 1024;
	int i;

	while (n < nbuckets && n < (1ull << 24))
		n <<= 1;
	tab.buckets = calloc(n, sizeof(*tab.buckets));
	if (!tab.buckets)
		return -ENOMEM;
	tab.mask = n - 1;
	for (i = 0; i < NSTRIPES; i++)
		pthread_mutex_init(&tab.locks[i], NULL);
	return 0;
}

void nodes_fini(void)
{
	int i;

	for (i = 0; i < NSTRIPES; i++)
		pthread_mutex_destroy(&tab.locks[i]);
	free(tab.buckets);
	tab.buckets = NULL;
}

int64_t nodes_count(void)
{
	return CTR_GET(nodes_total);
}

static pthread_mutex_t *stripe_of(uint64_t bucket)
{
	return &tab.locks[bucket % NSTRIPES];
}

/* refs + 1 unless refs is zero (the node is being freed). */
static bool get_unless_zero(struct dnode *n)
{
	int64_t v = __atomic_load_n(&n->refs, __ATOMIC_RELAXED);

	do {
		if (v <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&n->refs, &v, v + 1, true,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	return true;
}

static void node_free(struct dnode *n)
{
	uint64_t b = key_hash(n->dev, n->ino) & tab.mask;
	pthread_mutex_t *l = stripe_of(b);
	struct dnode **pp;

	pthread_mutex_lock(l);
	for (pp = &tab.buckets[b]; *pp; pp = &(*pp)->hnext)
		if (*pp == n) {
			*pp = n->hnext;
			break;
		}
	pthread_mutex_unlock(l);
	if (n->fd >= 0) {
		close(n->fd);
		CTR_ADD(node_fds, -1);
	}
	/* none left unless a request kept one after the kernel's last FORGET:
	 * node_forget closes them when nlookup reaches zero */
	for (int i = 0; i < 2; i++)
		if (n->io_fd[i] >= 0) {
			close(n->io_fd[i]);
			CTR_ADD(node_fds, -1);
		}
	pthread_mutex_destroy(&n->lock);
	free(n->fh);
	free(n);
	CTR_ADD(nodes_total, -1);
}

void node_ref(struct dnode *n)
{
	/* only by a holder: refs > 0 */
	__atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED);
}

void node_put(struct dnode *n)
{
	/* acq_rel: our uses of n happen before the freeing thread's */
	if (n && __atomic_sub_fetch(&n->refs, 1, __ATOMIC_ACQ_REL) == 0)
		node_free(n);
}

/* ---- finding nodes by inode (coherence.c) -------------------------------- */

/* The first node from n on of inode (dev, ino) that the kernel knows,
 * referenced, or NULL.  Its bucket's stripe lock held. */
static struct dnode *next_known(struct dnode *n, uint64_t dev, uint64_t ino)
{
	for (; n; n = n->hnext)
		if (n->ino == ino && n->dev == dev &&
		    __atomic_load_n(&n->nlookup, __ATOMIC_ACQUIRE) > 0 &&
		    get_unless_zero(n))
			return n;
	return NULL;
}

struct dnode *node_find_known(uint64_t dev, uint64_t ino)
{
	uint64_t b = key_hash(dev, ino) & tab.mask;
	pthread_mutex_t *l = stripe_of(b);
	struct dnode *n;

	pthread_mutex_lock(l);
	n = next_known(tab.buckets[b], dev, ino);
	pthread_mutex_unlock(l);
	return n;
}

void node_each_known(uint64_t dev, uint64_t ino, void (*fn)(struct dnode *, void *),
		     void *arg)
{
	uint64_t b = key_hash(dev, ino) & tab.mask;
	pthread_mutex_t *l = stripe_of(b);
	struct dnode *n, *done = NULL;

	pthread_mutex_lock(l);
	n = next_known(tab.buckets[b], dev, ino);
	for (;;) {
		pthread_mutex_unlock(l);
		/* outside the lock: the last put frees, which takes it */
		node_put(done);
		if (!n)
			return;
		/* outside the lock too: fn tells the kernel, which may wait
		 * for a request that needs the lock */
		fn(n, arg);
		done = n;
		pthread_mutex_lock(l);
		/* done is still in the chain: only node_free unlinks, and
		 * our reference keeps it from running */
		n = next_known(done->hnext, dev, ino);
	}
}

size_t nodes_collect_known(struct dnode ***out)
{
	struct dnode **list = NULL, **bigger, *n;
	size_t cnt = 0, cap = 0;
	uint64_t b;

	for (b = 0; b <= tab.mask; b++) {
		pthread_mutex_lock(stripe_of(b));
		for (n = tab.buckets[b]; n; n = n->hnext) {
			if (__atomic_load_n(&n->nlookup, __ATOMIC_ACQUIRE) == 0)
				continue;
			if (cnt == cap) {
				cap = cap ? cap * 2 : 256;
				bigger = realloc(list, cap * sizeof(*list));
				if (!bigger) {
					pthread_mutex_unlock(stripe_of(b));
					goto out;
				}
				list = bigger;
			}
			if (get_unless_zero(n))
				list[cnt++] = n;
		}
		pthread_mutex_unlock(stripe_of(b));
	}
out:
	*out = list;
	return cnt;
}

/* ---- making and finding nodes ------------------------------------------ */

/*
 * May a node met in the table under the key (dev, ino) stand for what fd
 * opened?  The inode number alone never proves it: a node that holds no
 * descriptor does not pin its inode, which may have died and its number
 * gone to a new file (in another user's private directory, say).  So:
 *   - a node that holds a descriptor: yes.  Its descriptor pinned its
 *     inode when we read it, and fd pins the one the name holds now: two
 *     live inodes cannot share (dev, ino).
 *   - one that holds none: only if both file handles, which carry the
 *     inode's generation, agree.  Without a handle (a file system
 *     without them), never: a new node is made.  A removed directory,
 *     never.
 * *mine: fd's handle, made on first need.  Stripe lock held: n is in the
 * chain, so not freed, and n->fh, once set, changes only when n is freed.
 */
static bool same_inode(struct dnode *n, int fd, struct file_handle **mine,
		       bool *tried)
{
	struct file_handle *fh;

	/* a removed directory's number now belongs to another inode */
	if (__atomic_load_n(&n->gone, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&n->fd, __ATOMIC_ACQUIRE) >= 0)
		return true;
	fh = __atomic_load_n(&n->fh, __ATOMIC_ACQUIRE);
	if (!fh)
		return false;
	if (!*tried) {
		*tried = true;
		*mine = fd >= 0 ? node_handle_of(fd) : NULL;
	}
	return *mine && node_handle_same(fh, *mine);
}

/*
 * Past this many node descriptors a new directory holds a handle instead
 * of a descriptor (half of nofile; files and symlinks go fd-less past a
 * quarter): so that directories the kernel holds, however many one user
 * makes it hold, cannot take every descriptor from the others.
 */
static bool dirs_over(void)
{
	return CTR_GET(node_fds) >= 2 * dcfs.fd_budget;
}

static struct dnode *node_alloc(const struct stat *st)
{
	struct dnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->type = st->st_mode & S_IFMT;
	n->fd = -1;
	n->io_fd[0] = n->io_fd[1] = -1;
	n->refs = 1;
	pthread_mutex_init(&n->lock, NULL);
	return n;
}

/* The node for what fd opened (attributes st), referenced; stripe lock of
 * bucket b held.  *mine, *tried: as for same_inode. */
static struct dnode *find_locked(uint64_t b, const struct stat *st, int fd,
				 struct file_handle **mine, bool *tried)
{
	uint32_t type = st->st_mode & S_IFMT;
	struct dnode *n;

	for (n = tab.buckets[b]; n; n = n->hnext)
		if (n->ino == (uint64_t)st->st_ino && n->dev == (uint64_t)st->st_dev &&
		    n->type == type && same_inode(n, fd, mine, tried) &&
		    get_unless_zero(n))
			return n;
	return NULL;
}

int node_get(const struct stat *st, int *fdp, struct dnode **out)
{
	uint64_t b = key_hash(st->st_dev, st->st_ino) & tab.mask;
	pthread_mutex_t *l = stripe_of(b);
	struct dnode *n, *fresh;
	uint32_t type = st->st_mode & S_IFMT;
	struct file_handle *mine = NULL;
	bool tried = false, made = false;

	/* allocate outside the lock; rarely wasted.  A file's node will hold
	 * no descriptor while only the cache knows it: its handle is its
	 * identity from birth (same_inode). */
	fresh = node_alloc(st);
	if ((!keeps_fd(type) || dirs_over()) && dcfs.handle_fd >= 0 && *fdp >= 0) {
		mine = node_handle_of(*fdp);
		tried = true;
	}
	pthread_mutex_lock(l);
	n = find_locked(b, st, *fdp, &mine, &tried);
	if (!n && fresh) {
		n = fresh;
		fresh = NULL;
		n->fh = mine;		/* not yet seen by anyone */
		mine = NULL;
		/* a directory keeps fd unless it was made past the budget
		 * with a handle to stand for it */
		if (keeps_fd(type) && !(n->fh && dirs_over())) {
			n->fd = *fdp;
			*fdp = -1;
			CTR_ADD(node_fds, 1);
		}
		n->hnext = tab.buckets[b];
		tab.buckets[b] = n;
		CTR_ADD(nodes_total, 1);
		made = true;
	}
	pthread_mutex_unlock(l);
	/* before anything is looked up in it (inotify watches directories
	 * one by one), through the descriptor the node took (ours hold theirs
	 * for life) or, made past the budget with a handle instead, the
	 * caller's: reopening the handle could fail, leaving it unwatched */
	if (made && S_ISDIR(type))
		coherence_watch_dir(n, *fdp >= 0 ? *fdp : __atomic_load_n(&n->fd,
									 __ATOMIC_ACQUIRE));
	free(mine);
	if (fresh) {
		pthread_mutex_destroy(&fresh->lock);
		free(fresh);
	}
	if (!n)
		return -ENOMEM;
	*out = n;
	return 0;
}

int node_make_root(int root_fd, struct dnode **out)
{
	struct stat st;
	struct dnode *n;

	if (fstat(root_fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	n = node_alloc(&st);
	if (!n)
		return -ENOMEM;
	n->fd = root_fd;	/* the node owns it from now */
	n->nlookup = 1;		/* the kernel knows the root from the start */
	n->refs = 1;		/* ... and that is this share */
	pthread_mutex_lock(stripe_of(key_hash(n->dev, n->ino) & tab.mask));
	n->hnext = tab.buckets[key_hash(n->dev, n->ino) & tab.mask];
	tab.buckets[key_hash(n->dev, n->ino) & tab.mask] = n;
	pthread_mutex_unlock(stripe_of(key_hash(n->dev, n->ino) & tab.mask));
	CTR_ADD(nodes_total, 1);
	CTR_ADD(nodes_active, 1);
	CTR_ADD(node_fds, 1);
	*out = n;
	return 0;
}

void node_set_root_dentry(struct dnode *root, struct dc_dentry *d)
{
	__atomic_store_n(&root->dentry, d, __ATOMIC_RELEASE);
}

/* ---- a directory's cache entry ---------------------------------------- */

/* Is d (or a directory above it) dropped from the cache? */
static bool dentry_dead(struct dc_dentry *d)
{
	char buf[DC_PATH_MAX];

	return dc_dentry_path(dcfs.cache, d, buf, sizeof(buf)) == -ENOENT;
}

/*
 * A directory node met through entry d while it holds another: if its own
 * was dropped from the cache (an exchange forgot it, say) and d is live,
 * move to d.  Returns the entry given up, for the caller to put once the
 * node's lock is dropped: requests hold their own reference on the entry
 * they use (node_dentry_get), so nothing needs it beyond that.  Node lock
 * held.
 */
static struct dc_dentry *maybe_refresh(struct dnode *n, struct dc_dentry *d)
{
	struct dc_dentry *old = n->dentry;

	if (old && (old == d || !dentry_dead(old) || dentry_dead(d)))
		return NULL;
	__atomic_store_n(&n->dentry, dc_get(d), __ATOMIC_RELEASE);
	return old;
}

/* A directory node met through entry d: move to it if need be (above). */
static void refresh_locked(struct dnode *n, struct dc_dentry *d)
{
	struct dc_dentry *old;

	pthread_mutex_lock(&n->lock);
	old = maybe_refresh(n, d);
	pthread_mutex_unlock(&n->lock);
	if (old)
		dc_put(dcfs.cache, old);
}

struct dc_dentry *node_dentry_get(struct dnode *n)
{
	struct dc_dentry *d;

	/* the lock orders this get before a refresh or a forget puts the
	 * node's own reference: d cannot be freed between load and get */
	pthread_mutex_lock(&n->lock);
	d = n->dentry ? dc_get(n->dentry) : NULL;
	pthread_mutex_unlock(&n->lock);
	return d;
}

/* ---- the kernel's lookup count ----------------------------------------- */

/*
 * First activation of file n, whose descriptor is fd: 1 to go fd-less
 * (hold only a handle), 0 to keep fd, -ESTALE if fd is not n's inode.
 * Fd-less when node descriptors are over budget and n has, or now gets,
 * a handle.  A node that has a handle is that inode for good (node_get
 * matches on it): fd must agree with it.  Node lock held; nlookup is
 * zero, so no request reads n->fh.
 */
static int go_fdless(struct dnode *n, int fd)
{
	struct file_handle *fh = n->fh, *now = NULL;
	bool over = dcfs.handle_fd >= 0 && CTR_GET(node_fds) >= dcfs.fd_budget;

	if (fh || over)
		now = node_handle_of(fd);
	if (fh) {
		bool same = now && node_handle_same(fh, now);

		free(now);
		if (!same)
			return -ESTALE;
		return over;
	}
	if (!now)
		return 0;
	if (!over) {
		free(now);
		return 0;
	}
	/* release: pairs with the acquire loads in node_fd_use and
	 * same_inode, which read fh without the node's lock */
	__atomic_store_n(&n->fh, now, __ATOMIC_RELEASE);
	return 1;
}

/*
 * Past this many node descriptors and open directory streams together
 * (three quarters of nofile) no file about to lose its last name gets
 * one: a user who holds many such files (held open, then removed) must
 * not take the descriptors the others need; her files past it read as
 * ESTALE once their name is gone.  Checked before the descriptor is
 * taken, so removals at once may each pass it by one.
 */
static bool pins_over(void)
{
	return CTR_GET(node_fds) + CTR_GET(open_files) >= 3 * dcfs.fd_budget;
}

/*
 * name in dir is about to be unlinked, or replaced by a rename, through the
 * mount.  If it is a file held by handle that the kernel knows, and this is
 * its last name, the node takes a descriptor first: a process may have the
 * file open (handle-less I/O: no OPEN tells dcfs), and natively an open
 * file keeps its data after its last name goes.  A handle does not keep
 * them (open_by_handle_at of an unlinked inode is ESTALE); a descriptor
 * does, until the kernel forgets the node.  A file with another name
 * keeps its inode, and its handle works: no descriptor.  Past the budget,
 * but only for such files, and not past pins_over.
 */
void node_pin_victim(struct dnode *dir, const char *name)
{
	struct file_handle *mine = NULL;
	bool tried = false;
	struct dnode *n;
	struct stat st;
	uint64_t b;
	int fd, dfd, tmp;

	if (CTR_GET(fdless) == 0 || pins_over())
		return;
	dfd = node_dir_fd(dir, &tmp);
	fd = dfd < 0 ? -1 : openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	node_dir_fd_put(tmp);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || keeps_fd(st.st_mode & S_IFMT) || st.st_nlink > 1) {
		close(fd);
		return;
	}
	b = key_hash(st.st_dev, st.st_ino) & tab.mask;
	pthread_mutex_lock(stripe_of(b));
	n = find_locked(b, &st, fd, &mine, &tried);
	pthread_mutex_unlock(stripe_of(b));
	free(mine);
	if (n) {
		pthread_mutex_lock(&n->lock);
		if (n->fd < 0 && __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED) > 0) {
			/* release: requests on n read fd lock-free */
			__atomic_store_n(&n->fd, fd, __ATOMIC_RELEASE);
			fd = -1;
			CTR_ADD(node_fds, 1);
			CTR_ADD(fdless, -1);
		}
		pthread_mutex_unlock(&n->lock);
		node_put(n);
	}
	if (fd >= 0)
		close(fd);
}

int node_activate(struct dnode *n, struct dnode *dir, const char *name,
		  struct dc_dentry *d, int *fdp)
{
	uint64_t v = __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED);
	struct dc_dentry *old = NULL;
	struct stat st;
	int fd, tmp, err = 0;

	/* the common case: the kernel already knows n; stay above zero */
	while (v > 0)
		if (__atomic_compare_exchange_n(&n->nlookup, &v, v + 1, true,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			/* the load only compares: the entry is not used */
			if (S_ISDIR(n->type) && d &&
			    d != __atomic_load_n(&n->dentry, __ATOMIC_ACQUIRE))
				refresh_locked(n, d);
			return 0;
		}

	pthread_mutex_lock(&n->lock);
	if (__atomic_load_n(&n->nlookup, __ATOMIC_ACQUIRE) == 0) {
		if (S_ISDIR(n->type) && n->gone) {
			err = -ESTALE;	/* a removed directory (removed_dir) */
			goto out;
		}
		if (!keeps_fd(n->type)) {
			if (fdp && *fdp >= 0) {
				fd = *fdp;	/* opened on this very inode */
				*fdp = -1;
			} else {
				int dfd = node_dir_fd(dir, &tmp);

				fd = dfd < 0 ? -1 :
				     openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
				node_dir_fd_put(tmp);
				if (fd < 0) {
					err = errno == ENOENT ? -ESTALE : -errno;
					goto out;
				}
				/* the name may have been replaced behind our back */
				if (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != n->ino ||
				    (uint64_t)st.st_dev != n->dev ||
				    (st.st_mode & S_IFMT) != n->type) {
					close(fd);
					err = -ESTALE;
					goto out;
				}
			}
			err = go_fdless(n, fd);
			if (err < 0) {
				close(fd);
				goto out;
			} else if (err) {
				err = 0;
				close(fd);
				CTR_ADD(fdless, 1);
			} else {
				/* release: requests read it lock-free */
				__atomic_store_n(&n->fd, fd, __ATOMIC_RELEASE);
				CTR_ADD(node_fds, 1);
			}
		}
		if (S_ISDIR(n->type) && d)
			old = maybe_refresh(n, d);
		node_ref(n);		/* the kernel's share */
		CTR_ADD(nodes_active, 1);
	} else if (S_ISDIR(n->type) && d && d != n->dentry) {
		old = maybe_refresh(n, d);
	}
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&n->lock);
	if (old)
		dc_put(dcfs.cache, old);
	return err;
}

void node_refresh(struct dnode *n, struct dc_dentry *d)
{
	struct dc_dentry *old = NULL;

	if (!S_ISDIR(n->type) || !d)
		return;
	pthread_mutex_lock(&n->lock);
	if (__atomic_load_n(&n->nlookup, __ATOMIC_RELAXED) > 0 && n->dentry != d)
		old = maybe_refresh(n, d);
	pthread_mutex_unlock(&n->lock);
	if (old)
		dc_put(dcfs.cache, old);
}

/*
 * A directory node the kernel forgot: was its directory removed?  Then its
 * descriptor goes now.  The cache entry that names it is dead and lingers
 * until the cache next shrinks, holding the node, and a tree removed
 * through the mount would otherwise keep a descriptor per directory.  No
 * request can use it any more: requests come only on nodes the kernel
 * knows, and a lookup that finds the node again gets ESTALE from
 * node_activate.  Node lock held, nlookup zero.
 */
static bool removed_dir(struct dnode *n)
{
	struct stat st;
	int tmp, fd = n == dcfs.root ? -1 : node_dir_fd(n, &tmp);
	bool gone;

	if (fd < 0)
		return n != dcfs.root && errno == ENOENT;
	gone = fstat(fd, &st) == 0 && st.st_nlink == 0;
	node_dir_fd_put(tmp);
	return gone;
}

void node_forget(struct dnode *n, uint64_t count)
{
	uint64_t v = __atomic_load_n(&n->nlookup, __ATOMIC_ACQUIRE);
	struct dc_dentry *dentry = NULL;
	int fd = -1, io[2] = { -1, -1 };

	if (count == 0)
		return;
	while (v > count)
		if (__atomic_compare_exchange_n(&n->nlookup, &v, v - count, true,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return;

	pthread_mutex_lock(&n->lock);
	/*
	 * A compare-and-swap even under the lock: node_activate moves a count
	 * that is above zero without the lock (1 -> 2 while we look), and a
	 * store of what we read would undo that lookup; the kernel would
	 * hold a nodeid for a freed node.  Acquire: whoever moved the count
	 * before us is done with n when we take it to zero (and maybe free
	 * n); release: our uses of n come before another's zero.
	 */
	v = __atomic_load_n(&n->nlookup, __ATOMIC_ACQUIRE);
	do {
		node_race_window(n);
		if (v < count) {
			/* the kernel never forgets more than it was told; a bug */
			dcfs_log(LOG_ERR, "forget %llu of node %p with nlookup %llu",
				 (unsigned long long)count, (void *)n,
				 (unsigned long long)v);
			count = v;
		}
		if (count == 0) {
			pthread_mutex_unlock(&n->lock);
			return;
		}
	} while (!__atomic_compare_exchange_n(&n->nlookup, &v, v - count, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (v - count == 0) {
		if (S_ISDIR(n->type) && removed_dir(n)) {
			/* release: be_lookup and same_inode read it lock-free */
			__atomic_store_n(&n->gone, true, __ATOMIC_RELEASE);
			fd = n->fd;
			__atomic_store_n(&n->fd, -1, __ATOMIC_RELEASE);
		}
		if (!keeps_fd(n->type)) {
			fd = n->fd;
			__atomic_store_n(&n->fd, -1, __ATOMIC_RELEASE);
			/* no I/O is in flight: an open file pins the inode, and
			 * the kernel forgets only inodes it has evicted */
			for (int i = 0; i < 2; i++) {
				io[i] = n->io_fd[i];
				__atomic_store_n(&n->io_fd[i], -1, __ATOMIC_RELAXED);
			}
		}
		dentry = n->dentry;
		__atomic_store_n(&n->dentry, NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&n->lock);
	if (v - count)
		return;
	if (fd >= 0) {
		close(fd);
		CTR_ADD(node_fds, -1);
	} else if (!keeps_fd(n->type)) {
		CTR_ADD(fdless, -1);	/* an active file without one was fd-less */
	}
	for (int i = 0; i < 2; i++)
		if (io[i] >= 0) {
			close(io[i]);
			CTR_ADD(node_fds, -1);
		}
	if (dentry)
		dc_put(dcfs.cache, dentry);
	CTR_ADD(nodes_active, -1);
	node_put(n);			/* the kernel's share */
}

/* How many nodes nodes_drop_kernel_refs takes a pass (a test makes it
 * small, to stop passes inside a chain). */
#ifndef NODE_DROP_BATCH
#define NODE_DROP_BATCH 256
#endif

/*
 * At unmount the kernel may not have sent every FORGET: drop what it still
 * holds, so the cache can be destroyed (no entry may be held then) and
 * every node freed.  Single-threaded by now (the session loop is over).
 * A batch at a time, in an array on the stack: unmount must not fail for
 * want of memory.  A pass resumes at the chain where the last one
 * stopped, full; the nodes it dropped there have no lookups left, so it
 * takes the next ones.
 */
void nodes_drop_kernel_refs(void)
{
	struct dnode *batch[NODE_DROP_BATCH], *n;
	size_t cnt, i;
	uint64_t b = 0;

	while (b <= tab.mask) {
		cnt = 0;
		/* the stripe locks still matter: libdcache's callback thread
		 * may be releasing entries (and freeing nodes) */
		while (b <= tab.mask && cnt < NODE_DROP_BATCH) {
			bool whole = true;

			pthread_mutex_lock(stripe_of(b));
			for (n = tab.buckets[b]; n; n = n->hnext) {
				if (!__atomic_load_n(&n->nlookup, __ATOMIC_RELAXED))
					continue;
				if (cnt == NODE_DROP_BATCH) {
					whole = false;
					break;
				}
				if (get_unless_zero(n))
					batch[cnt++] = n;
			}
			pthread_mutex_unlock(stripe_of(b));
			if (whole)
				b++;
		}
		for (i = 0; i < cnt; i++) {
			n = batch[i];
			node_forget(n, __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED));
			node_put(n);
		}
	}
}
