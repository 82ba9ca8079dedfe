// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memfs.c - an in-memory namespace, the test and benchmark backend.
 *
 * Two tables hold the whole file system:
 *
 *  - the node array, indexed by inode number.  A node is what an inode is:
 *    its mode, how many names refer to it, and either the parent of a
 *    directory or the target of a symlink.  Inode numbers start at 1 (the
 *    root) and are never reused, so a stale number can never name another
 *    file: a removed node keeps mode 0 for the life of the memfs.  That is
 *    why the backend cookie can simply be the inode number (cookie == ino)
 *    and why release has nothing to do.
 *
 *  - the name table, a chained hash table keyed by (parent ino, name) with
 *    a power-of-two bucket count that doubles when the load reaches 1.
 *    Each entry there is one directory entry (a name); hard links are
 *    several entries with the same ino.
 *
 * Locking: one mutex, fs->lock, guards both tables and every field below
 * them; readers (the lookup, getattr and readlink ops, dc_memfs_lookup)
 * and writers alone take it.  Nothing here nests or calls out with it
 * held.  It is not a reader-writer lock: what it guards is a hash probe
 * or a few stores, and the two kinds of those fail under load.  One that
 * prefers readers lets a benchmark hammering lookups starve a rename for
 * good; one that prefers writers makes every new reader wait while a
 * writer does, so that with more threads than cores all of them queue up
 * behind a writer that was preempted, and sleep.  A mutex favours
 * neither kind and makes no one wait for a waiter, only for the holder.
 * glibc's is not fair, so a writer may lose the lock to readers a few
 * times over, but it never waits for a stream of readers to end.
 *
 * Invariants, true whenever fs->lock is free:
 *  - every name entry's dir is a live directory and its ino a live node;
 *  - a live node's nlink is the number of names that refer to it (the
 *    root, which has no name, keeps 1);
 *  - a directory has exactly one name, its u.parent is the directory
 *    holding that name (the root is its own parent), and nchild counts the
 *    names in it, so the parent chain of any directory ends at the root;
 *  - fs->count is the number of names, i.e. entries in the hash table.
 *
 * Failure: every change allocates whatever it needs before it touches
 * either table, so -ENOMEM (like any other error) leaves the namespace as it
 * was.  Growing the bucket array is an optimisation only; if that
 * allocation fails the table simply runs denser and tries again later.
 *
 * This is a test backend, not the cache: it allocates with plain malloc so
 * that the cache's allocation-failure injection never reaches it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define MEMFS_MIN_NODES		64
#define MEMFS_MIN_BUCKETS	64

struct mnode {
	uint32_t mode;		/* 0: free, never used again */
	uint32_t nlink;		/* names referring to this node */
	uint32_t gen;		/* always 0: inode numbers are never reused */
	uint32_t nchild;	/* directories: names in it */
	struct mdent *children;	/* directories: the names in it */
	uint32_t uid, gid;	/* owner: 0:0 until dc_memfs_chown */
	union {
		uint64_t parent;	/* directories */
		char *target;		/* symlinks, malloc'd */
	} u;
};

struct mdent {
	struct mdent *next;	/* hash chain */
	struct mdent *sib_next, *sib_prev;	/* the directory's names */
	uint64_t dir;		/* the directory holding the name */
	uint64_t ino;		/* what the name refers to */
	uint32_t hash;
	uint8_t len;
	char name[];		/* len bytes and a NUL */
};

struct dc_memfs {
	pthread_mutex_t lock;
	struct mnode *nodes;	/* indexed by ino; nodes[0] unused */
	uint64_t nr_nodes;	/* allocated slots */
	uint64_t next_ino;	/* the next inode number to hand out */
	struct mdent **buckets;
	uint64_t mask;		/* bucket count - 1 */
	uint64_t count;		/* names */
};

/* ---- Names ----------------------------------------------------------- */

/* A NUL-terminated name; its length goes to *lenp. */
static int name_check_str(const char *name, size_t *lenp)
{
	if (!name)
		return -EINVAL;
	*lenp = strnlen(name, DC_NAME_MAX + 1);
	return dc__check_name_long_first(name, *lenp);
}

/* The checks of a call that names an entry: a memfs and a valid name. */
static int fs_name_check(const struct dc_memfs *fs, const char *name,
			 size_t *lenp)
{
	if (!fs)
		return -EINVAL;
	return name_check_str(name, lenp);
}

/* The library's keyed name hash, under a fixed key (memfs trusts its
 * names' makers), salted with the directory: the low bits (the bucket
 * index) depend on all of it. */
static const struct dc_hkey memfs_hkey = {
	0x243f6a8885a308d3ull, 0x13198a2e03707344ull,
};

static uint32_t name_hash(uint64_t dir, const char *name, size_t len)
{
	return (uint32_t)dc__mix(&memfs_hkey,
				 dc__hash_bytes(&memfs_hkey, name, len), dir);
}

/* ---- Nodes ----------------------------------------------------------- */

/* The live node numbered ino, or NULL. */
static struct mnode *node_get(struct dc_memfs *fs, uint64_t ino)
{
	if (ino == 0 || ino >= fs->next_ino || !fs->nodes[ino].mode)
		return NULL;
	return &fs->nodes[ino];
}

/* Resolve a directory argument: -ENOENT if gone, -ENOTDIR if not one. */
static int dir_get(struct dc_memfs *fs, uint64_t ino, struct mnode **out)
{
	struct mnode *n = node_get(fs, ino);

	if (!n)
		return -ENOENT;
	if (!S_ISDIR(n->mode))
		return -ENOTDIR;
	*out = n;
	return 0;
}

static void node_fill(struct dc_memfs *fs, uint64_t ino, struct dc_inode *out)
{
	if (!out)
		return;
	out->ino = ino;
	out->cookie = ino;
	out->mode = fs->nodes[ino].mode;
	out->gen = fs->nodes[ino].gen;
	out->uid = fs->nodes[ino].uid;
	out->gid = fs->nodes[ino].gid;
}

/* Make room for one more inode number; the new slot is zeroed. */
static int node_reserve(struct dc_memfs *fs)
{
	struct mnode *nodes;
	uint64_t nr;

	if (fs->next_ino < fs->nr_nodes)
		return 0;
	nr = fs->nr_nodes * 2;
	if (nr > SIZE_MAX / sizeof(*nodes))
		return -ENOMEM;
	nodes = realloc(fs->nodes, nr * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	memset(nodes + fs->nr_nodes, 0,
	       (nr - fs->nr_nodes) * sizeof(*nodes));
	fs->nodes = nodes;
	fs->nr_nodes = nr;
	return 0;
}

/* The last name of a node went away: it dies, and its number with it. */
static void node_kill(struct mnode *n)
{
	if (S_ISLNK(n->mode))
		free(n->u.target);
	memset(n, 0, sizeof(*n));
}

/* One name fewer refers to n. */
static void node_unref(struct mnode *n)
{
	if (--n->nlink == 0)
		node_kill(n);
}

/* Is ino the directory anc or below it?  Walks up the parent chain. */
static bool in_subtree(struct dc_memfs *fs, uint64_t ino, uint64_t anc)
{
	for (;;) {
		if (ino == anc)
			return true;
		if (ino == DC_MEMFS_ROOT)
			return false;
		ino = fs->nodes[ino].u.parent;
	}
}

/* ---- The name table -------------------------------------------------- */

static struct mdent *dent_alloc(uint64_t dir, const char *name, size_t len,
				uint32_t hash, uint64_t ino)
{
	struct mdent *d = malloc(sizeof(*d) + len + 1);

	if (!d)
		return NULL;
	d->next = NULL;
	d->dir = dir;
	d->ino = ino;
	d->hash = hash;
	d->len = (uint8_t)len;
	memcpy(d->name, name, len);
	d->name[len] = '\0';
	return d;
}

/*
 * The link that points at the entry for (dir, name), or at the NULL that
 * ends its chain when there is none: a place to unlink from or test.
 */
static struct mdent **dent_slot(struct dc_memfs *fs, uint64_t dir,
				const char *name, size_t len, uint32_t hash)
{
	struct mdent **pp = &fs->buckets[hash & fs->mask];

	for (; *pp; pp = &(*pp)->next) {
		struct mdent *d = *pp;

		if (d->hash == hash && d->dir == dir && d->len == len &&
		    memcmp(d->name, name, len) == 0)
			break;
	}
	return pp;
}

static struct mdent *dent_find(struct dc_memfs *fs, uint64_t dir,
			       const char *name, size_t len)
{
	return *dent_slot(fs, dir, name, len, name_hash(dir, name, len));
}

/* Double the bucket array; on failure keep the old one, it still works. */
static void table_grow(struct dc_memfs *fs)
{
	uint64_t nr = (fs->mask + 1) * 2, i;
	struct mdent **b;

	if (nr > SIZE_MAX / sizeof(*b))
		return;
	b = calloc(nr, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i <= fs->mask; i++) {
		struct mdent *d = fs->buckets[i], *next;

		for (; d; d = next) {
			next = d->next;
			d->next = b[d->hash & (nr - 1)];
			b[d->hash & (nr - 1)] = d;
		}
	}
	free(fs->buckets);
	fs->buckets = b;
	fs->mask = nr - 1;
}

/* Its directory's list of names.  The head lives in the node array,
 * which moves as it grows: the list is doubly linked by entries only. */
static void sib_link(struct dc_memfs *fs, struct mdent *d)
{
	struct mnode *dir = &fs->nodes[d->dir];

	d->sib_prev = NULL;
	d->sib_next = dir->children;
	if (d->sib_next)
		d->sib_next->sib_prev = d;
	dir->children = d;
}

static void sib_unlink(struct dc_memfs *fs, struct mdent *d)
{
	if (d->sib_prev)
		d->sib_prev->sib_next = d->sib_next;
	else
		fs->nodes[d->dir].children = d->sib_next;
	if (d->sib_next)
		d->sib_next->sib_prev = d->sib_prev;
}

static void dent_insert(struct dc_memfs *fs, struct mdent *d)
{
	struct mdent **head = &fs->buckets[d->hash & fs->mask];

	sib_link(fs, d);
	d->next = *head;
	*head = d;
	if (++fs->count > fs->mask)
		table_grow(fs);
}

/* Unlink the entry *pp points at (from dent_slot) and free it. */
static void dent_remove(struct dc_memfs *fs, struct mdent **pp)
{
	struct mdent *d = *pp;

	*pp = d->next;
	sib_unlink(fs, d);
	fs->count--;
	free(d);
}

/* ---- Creation and teardown ------------------------------------------- */

DC_API int dc_memfs_new(struct dc_memfs **out)
{
	struct dc_memfs *fs;
	int err;

	if (!out)
		return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->nodes = calloc(MEMFS_MIN_NODES, sizeof(*fs->nodes));
	fs->buckets = calloc(MEMFS_MIN_BUCKETS, sizeof(*fs->buckets));
	err = -ENOMEM;
	if (!fs->nodes || !fs->buckets)
		goto fail;
	err = -pthread_mutex_init(&fs->lock, NULL);
	if (err)
		goto fail;
	fs->nr_nodes = MEMFS_MIN_NODES;
	fs->mask = MEMFS_MIN_BUCKETS - 1;
	fs->nodes[DC_MEMFS_ROOT].mode = S_IFDIR | 0755;
	fs->nodes[DC_MEMFS_ROOT].nlink = 1;
	fs->nodes[DC_MEMFS_ROOT].u.parent = DC_MEMFS_ROOT;
	fs->next_ino = DC_MEMFS_ROOT + 1;
	*out = fs;
	return 0;
fail:
	free(fs->buckets);
	free(fs->nodes);
	free(fs);
	return err;
}

DC_API void dc_memfs_free(struct dc_memfs *fs)
{
	uint64_t i;

	if (!fs)
		return;
	for (i = 0; i <= fs->mask; i++) {
		struct mdent *d = fs->buckets[i], *next;

		for (; d; d = next) {
			next = d->next;
			free(d);
		}
	}
	for (i = 1; i < fs->next_ino; i++)
		if (S_ISLNK(fs->nodes[i].mode))
			free(fs->nodes[i].u.target);
	free(fs->buckets);
	free(fs->nodes);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

/* ---- Namespace changes (locked) -------------------------------------- */

/* The type bits of a new node's mode: one of the seven, none means file. */
static int mode_check(uint32_t mode, uint32_t *out)
{
	uint32_t type = mode & S_IFMT;

	switch (type) {
	case 0:
		type = S_IFREG;
		break;
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return -EINVAL;
	}
	*out = type | (mode & 07777);
	return 0;
}

static int add_locked(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		      size_t len, uint32_t mode, const char *target,
		      struct dc_inode *out)
{
	uint32_t hash = name_hash(dir_ino, name, len);
	struct mnode *dir, *n;
	struct mdent *d;
	char *copy = NULL;
	uint64_t ino;
	int err;

	err = dir_get(fs, dir_ino, &dir);
	if (err)
		return err;
	if (*dent_slot(fs, dir_ino, name, len, hash))
		return -EEXIST;
	if (dir->nchild == UINT32_MAX)
		return -EMLINK;
	if (S_ISLNK(mode)) {
		size_t tlen = strnlen(target, DC_PATH_MAX);

		if (tlen >= DC_PATH_MAX)
			return -ENAMETOOLONG;
		copy = malloc(tlen + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, target, tlen + 1);
	}
	err = node_reserve(fs);
	if (err)
		goto fail;
	dir = &fs->nodes[dir_ino];	/* the array may have moved */
	ino = fs->next_ino;
	d = dent_alloc(dir_ino, name, len, hash, ino);
	err = -ENOMEM;
	if (!d)
		goto fail;

	/* Nothing can fail from here on. */
	fs->next_ino++;
	n = &fs->nodes[ino];
	n->mode = mode;
	n->nlink = 1;
	n->gen = 0;
	n->nchild = 0;
	n->uid = n->gid = 0;
	if (S_ISDIR(mode))
		n->u.parent = dir_ino;
	else
		n->u.target = copy;
	dir->nchild++;
	dent_insert(fs, d);
	node_fill(fs, ino, out);
	return 0;
fail:
	free(copy);
	return err;
}

DC_API int dc_memfs_add(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		 uint32_t mode, const char *target, struct dc_inode *out)
{
	size_t len;
	int err;

	err = fs_name_check(fs, name, &len);
	if (err)
		return err;
	err = mode_check(mode, &mode);
	if (err)
		return err;
	/* An empty target is as invalid as none (symlink(2) says ENOENT). */
	if (S_ISLNK(mode) && (!target || !*target))
		return target ? -ENOENT : -EINVAL;

	pthread_mutex_lock(&fs->lock);
	err = add_locked(fs, dir_ino, name, len, mode, target, out);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

DC_API int dc_memfs_chmod(struct dc_memfs *fs, uint64_t ino, uint32_t mode)
{
	struct mnode *n;
	int err = -ENOENT;

	if (!fs || (mode & ~07777u))
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	n = node_get(fs, ino);
	if (n) {
		n->mode = (n->mode & S_IFMT) | mode;
		err = 0;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

DC_API int dc_memfs_chown(struct dc_memfs *fs, uint64_t ino, uint32_t uid,
			  uint32_t gid)
{
	struct mnode *n;
	int err = -ENOENT;

	if (!fs)
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	n = node_get(fs, ino);
	if (n) {
		n->uid = uid;
		n->gid = gid;
		err = 0;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int link_locked(struct dc_memfs *fs, uint64_t ino, uint64_t dir_ino,
		       const char *name, size_t len, struct dc_inode *out)
{
	uint32_t hash = name_hash(dir_ino, name, len);
	struct mnode *dir, *n = node_get(fs, ino);
	struct mdent *d;
	int err;

	if (!n)
		return -ENOENT;
	err = dir_get(fs, dir_ino, &dir);
	if (err)
		return err;
	if (S_ISDIR(n->mode))
		return -EPERM;
	if (*dent_slot(fs, dir_ino, name, len, hash))
		return -EEXIST;
	if (n->nlink == UINT32_MAX || dir->nchild == UINT32_MAX)
		return -EMLINK;
	d = dent_alloc(dir_ino, name, len, hash, ino);
	if (!d)
		return -ENOMEM;
	n->nlink++;
	dir->nchild++;
	dent_insert(fs, d);
	node_fill(fs, ino, out);
	return 0;
}

DC_API int dc_memfs_link(struct dc_memfs *fs, uint64_t ino, uint64_t dir_ino,
		  const char *name, struct dc_inode *out)
{
	size_t len;
	int err;

	err = fs_name_check(fs, name, &len);
	if (err)
		return err;

	pthread_mutex_lock(&fs->lock);
	err = link_locked(fs, ino, dir_ino, name, len, out);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int remove_locked(struct dc_memfs *fs, uint64_t dir_ino,
			 const char *name, size_t len, int is_dir)
{
	struct mdent **pp;
	struct mnode *dir, *n;
	int err;

	err = dir_get(fs, dir_ino, &dir);
	if (err)
		return err;
	pp = dent_slot(fs, dir_ino, name, len, name_hash(dir_ino, name, len));
	if (!*pp)
		return -ENOENT;
	n = &fs->nodes[(*pp)->ino];
	if (is_dir && !S_ISDIR(n->mode))
		return -ENOTDIR;
	if (!is_dir && S_ISDIR(n->mode))
		return -EISDIR;
	if (is_dir && n->nchild)
		return -ENOTEMPTY;
	dent_remove(fs, pp);
	dir->nchild--;
	node_unref(n);
	return 0;
}

DC_API int dc_memfs_remove(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		    int is_dir)
{
	size_t len;
	int err;

	err = fs_name_check(fs, name, &len);
	if (err)
		return err;

	pthread_mutex_lock(&fs->lock);
	err = remove_locked(fs, dir_ino, name, len, is_dir);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* The two names of a rename, looked up once. */
struct rename_args {
	uint64_t odir, ndir;
	const char *oname, *nname;
	size_t olen, nlen;
	uint32_t nhash;
	unsigned flags;
	struct mnode *od, *nd;		/* the directories */
	struct mdent **oslot;		/* always names an entry */
	struct mdent *new;		/* NULL when nname is free */
};

/*
 * Everything rename(2) refuses, in the order Linux checks it: the ancestry
 * tests come before the type tests, so moving a/b/f onto a is -ENOTEMPTY
 * (a contains f), not -EISDIR.
 */
static int rename_check(struct dc_memfs *fs, struct rename_args *r)
{
	struct mnode *on, *nn;
	bool exchange = r->flags & DC_RENAME_EXCHANGE;

	on = &fs->nodes[(*r->oslot)->ino];
	if (exchange && !r->new)
		return -ENOENT;
	if ((r->flags & DC_RENAME_NOREPLACE) && r->new)
		return -EEXIST;
	/* A directory cannot move into itself or below. */
	if (S_ISDIR(on->mode) && in_subtree(fs, r->ndir, (*r->oslot)->ino))
		return -EINVAL;
	if (!r->new)
		return r->nd->nchild == UINT32_MAX && r->od != r->nd ?
			-EMLINK : 0;
	nn = &fs->nodes[r->new->ino];
	/* Nor can the target be an ancestor of the source. */
	if (S_ISDIR(nn->mode) && in_subtree(fs, r->odir, r->new->ino))
		return exchange ? -EINVAL : -ENOTEMPTY;
	/* Two names of one inode (or one name twice): nothing to do. */
	if (on == nn || exchange)
		return 0;
	if (S_ISDIR(on->mode) && !S_ISDIR(nn->mode))
		return -ENOTDIR;
	if (!S_ISDIR(on->mode) && S_ISDIR(nn->mode))
		return -EISDIR;
	if (S_ISDIR(nn->mode) && nn->nchild)
		return -ENOTEMPTY;
	return 0;
}

/* Swap what the two names refer to; counts stay, parents follow. */
static void rename_exchange(struct dc_memfs *fs, struct rename_args *r)
{
	struct mdent *o = *r->oslot;
	uint64_t ino = o->ino;

	o->ino = r->new->ino;
	r->new->ino = ino;
	if (S_ISDIR(fs->nodes[o->ino].mode))
		fs->nodes[o->ino].u.parent = r->odir;
	if (S_ISDIR(fs->nodes[ino].mode))
		fs->nodes[ino].u.parent = r->ndir;
}

static int rename_move(struct dc_memfs *fs, struct rename_args *r)
{
	uint64_t ino = (*r->oslot)->ino;
	struct mnode *n = &fs->nodes[ino];

	if (r->new) {
		/* Replace: the target's entry takes the source's inode. */
		struct mnode *victim = &fs->nodes[r->new->ino];

		r->new->ino = ino;
		node_unref(victim);
	} else {
		struct mdent *d = dent_alloc(r->ndir, r->nname, r->nlen,
					     r->nhash, ino);

		if (!d)
			return -ENOMEM;
		/* Unlink first: inserting may move the old entry's slot. */
		dent_remove(fs, r->oslot);
		r->oslot = NULL;
		r->nd->nchild++;
		dent_insert(fs, d);
	}
	if (r->oslot)
		dent_remove(fs, r->oslot);
	r->od->nchild--;
	if (S_ISDIR(n->mode))
		n->u.parent = r->ndir;
	return 0;
}

static int rename_locked(struct dc_memfs *fs, struct rename_args *r)
{
	int err;

	err = dir_get(fs, r->odir, &r->od);
	if (!err)
		err = dir_get(fs, r->ndir, &r->nd);
	if (err)
		return err;
	r->oslot = dent_slot(fs, r->odir, r->oname, r->olen,
			     name_hash(r->odir, r->oname, r->olen));
	if (!*r->oslot)
		return -ENOENT;
	r->nhash = name_hash(r->ndir, r->nname, r->nlen);
	r->new = *dent_slot(fs, r->ndir, r->nname, r->nlen, r->nhash);
	err = rename_check(fs, r);
	if (err)
		return err;
	if (r->new && r->new->ino == (*r->oslot)->ino)
		return 0;
	if (r->flags & DC_RENAME_EXCHANGE) {
		rename_exchange(fs, r);
		return 0;
	}
	return rename_move(fs, r);
}

DC_API int dc_memfs_rename(struct dc_memfs *fs, uint64_t odir, const char *oname,
		    uint64_t ndir, const char *nname, unsigned flags)
{
	struct rename_args r = {
		.odir = odir, .ndir = ndir, .oname = oname, .nname = nname,
		.flags = flags,
	};
	int err;

	if (!fs)
		return -EINVAL;
	if (flags & ~(unsigned)(DC_RENAME_NOREPLACE | DC_RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & DC_RENAME_NOREPLACE) && (flags & DC_RENAME_EXCHANGE))
		return -EINVAL;
	err = name_check_str(oname, &r.olen);
	if (!err)
		err = name_check_str(nname, &r.nlen);
	if (err)
		return err;

	pthread_mutex_lock(&fs->lock);
	err = rename_locked(fs, &r);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* ---- Queries (locked) ------------------------------------------------ */

static int lookup_locked(struct dc_memfs *fs, uint64_t dir_ino,
			 const char *name, size_t len, struct dc_inode *out)
{
	struct mnode *dir;
	struct mdent *d;
	int err;

	err = dir_get(fs, dir_ino, &dir);
	if (err)
		return err;
	d = dent_find(fs, dir_ino, name, len);
	if (!d)
		return -ENOENT;
	node_fill(fs, d->ino, out);
	return 0;
}

/* Look name (len bytes, not NUL-terminated) up in dir_ino. */
static int memfs_lookup_len(struct dc_memfs *fs, uint64_t dir_ino,
			    const char *name, size_t len,
			    struct dc_inode *out)
{
	int err = dc__check_name_long_first(name, len);

	if (err)
		return err;
	pthread_mutex_lock(&fs->lock);
	err = lookup_locked(fs, dir_ino, name, len, out);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

DC_API int dc_memfs_lookup(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		    struct dc_inode *out)
{
	size_t len;
	int err;

	err = fs_name_check(fs, name, &len);
	if (err)
		return err;
	return memfs_lookup_len(fs, dir_ino, name, len, out);
}

DC_API uint64_t dc_memfs_count(struct dc_memfs *fs)
{
	uint64_t n;

	if (!fs)
		return 0;
	pthread_mutex_lock(&fs->lock);
	n = fs->count;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

/* ---- Backend operations ---------------------------------------------- */

static int memfs_root(void *ctx, struct dc_inode *out)
{
	struct dc_memfs *fs = ctx;

	if (!out)
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	node_fill(fs, DC_MEMFS_ROOT, out);
	pthread_mutex_unlock(&fs->lock);
	return 0;
}

/*
 * A lookup in a directory that has since been removed finds nothing, as
 * in Linux (a dead directory is empty): -ENOENT, not -ESTALE.
 */
static int memfs_op_lookup(void *ctx, const struct dc_inode *dir,
			   const char *name, size_t len, struct dc_inode *out)
{
	if (!dir || !out)
		return -EINVAL;
	return memfs_lookup_len(ctx, dir->cookie, name, len, out);
}

/* The cookie names a removed inode: the handle is stale. */
static int memfs_getattr(void *ctx, struct dc_inode *inode)
{
	struct dc_memfs *fs = ctx;
	int err = 0;

	if (!inode)
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	if (node_get(fs, inode->cookie))
		node_fill(fs, inode->cookie, inode);
	else
		err = -ESTALE;
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/*
 * Like readlink(2), but never truncates: a target that does not fit with
 * its NUL is -ENAMETOOLONG.  On success buf is NUL-terminated.
 */
static int memfs_readlink(void *ctx, const struct dc_inode *link, char *buf,
			  size_t size)
{
	struct dc_memfs *fs = ctx;
	struct mnode *n;
	int err;

	if (!link || !buf || !size)
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	n = node_get(fs, link->cookie);
	if (!n) {
		err = -ESTALE;
	} else if (!S_ISLNK(n->mode)) {
		err = -EINVAL;
	} else {
		size_t len = strlen(n->u.target);

		if (len >= size) {
			err = -ENAMETOOLONG;
		} else {
			memcpy(buf, n->u.target, len + 1);
			err = (int)len;
		}
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* Cookies are inode numbers: nothing to let go of. */
static void memfs_release(void *ctx, const struct dc_inode *inode)
{
	(void)ctx;
	(void)inode;
}

/* Cookies are inode numbers, so the caller's inode says it already. */
static int memfs_adopt(void *ctx, const struct dc_inode *dir, const char *name,
		       size_t len, struct dc_inode *inode)
{
	(void)ctx;
	(void)dir;
	(void)name;
	(void)len;
	inode->cookie = inode->ino;
	return 0;
}

/* The names in dir, under the lock (emit only collects). */
static int memfs_readdir(void *ctx, const struct dc_inode *dir,
			 int (*emit)(void *arg, const char *name, size_t len),
			 void *arg)
{
	struct dc_memfs *fs = ctx;
	struct mnode *n;
	struct mdent *d;
	int err;

	if (!dir || !emit)
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	err = dir_get(fs, dir->cookie, &n);
	for (d = err ? NULL : n->children; d && !err; d = d->sib_next)
		err = emit(arg, d->name, d->len);
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* The caller owns the memfs and frees it with dc_memfs_free. */
static void memfs_destroy(void *ctx)
{
	(void)ctx;
}

static const struct dc_backend_ops memfs_ops = {
	.root		= memfs_root,
	.lookup		= memfs_op_lookup,
	.getattr	= memfs_getattr,
	.readlink	= memfs_readlink,
	.release	= memfs_release,
	.destroy	= memfs_destroy,
	.adopt		= memfs_adopt,
	.readdir	= memfs_readdir,
};

DC_API struct dc_backend dc_memfs_backend(struct dc_memfs *fs)
{
	struct dc_backend b = { .ops = &memfs_ops, .ctx = fs };

	return b;
}
