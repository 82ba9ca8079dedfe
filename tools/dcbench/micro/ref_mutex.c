/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ref_mutex.c - the mutex reference: one pthread mutex around a chained
 * hash table of (parent, name), taken once per component, as a FUSE
 * server's lookup takes its lock.  Every chain is read and written with
 * the mutex held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "micro/ref.h"
#include "micro/util.h"

struct mnode {			/* the mutex table's node */
	struct mnode *next, *parent;
	uint32_t id, mode, hash, len;
	char name[];
};

/* h is salted with the directory: libdcache's bucket of it */
static inline struct mnode **mt_bucket(struct mtab *m, uint32_t h)
{
	return &m->b[dc__bucket_index(h, m->shift)];
}

/* Is n the node of (dir, s, len), whose salted hash is h? */
static inline bool mt_is(const struct mnode *n, const struct mnode *dir,
			 const char *s, uint32_t len, uint32_t h)
{
	return n->hash == h && n->parent == dir && n->len == len &&
	       !memcmp(n->name, s, len);
}

static struct mnode *mt_find(struct mtab *m, const struct mnode *dir,
			     const char *s, uint32_t len, uint32_t h)
{
	struct mnode *n;

	for (n = *mt_bucket(m, h); n; n = n->next)
		if (mt_is(n, dir, s, len, h))
			return n;
	return NULL;
}

/* The mutex is taken once per component, as a FUSE server's lookup does. */
int mtab_resolve(struct impl *im, const char *p, struct res *r)
{
	struct mtab *m = &im->mt;
	const struct mnode *cur = im->mroot;
	const char *end = p + strlen(p);
	uint32_t mode = cur->mode, id = cur->id;

	for (;;) {
		const char *s;
		struct mnode *n;
		uint32_t h, len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!S_ISDIR(mode))
			return -ENOTDIR;
		s = p;
		h = comp_hash(p, end, cur, &len);
		p += len;
		pthread_mutex_lock(&m->lock);
		n = mt_find(m, cur, s, len, h);
		if (n) {
			mode = n->mode;
			id = n->id;
		}
		pthread_mutex_unlock(&m->lock);
		if (!n)
			return -ENOENT;
		cur = n;
	}
	r->id = id;
	r->mode = mode;
	return 0;
}

static void *mt_find_cb(struct impl *im, void *dir, const char *name, size_t len)
{
	return mt_find(&im->mt, dir, name, (uint32_t)len, name_hash(name, len, dir));
}

struct mnode *mtab_node(struct impl *im, const char *p)
{
	struct mnode *n;

	pthread_mutex_lock(&im->mt.lock);
	n = ref_walk(im, im->mroot, p, mt_find_cb);
	pthread_mutex_unlock(&im->mt.lock);
	return n;
}

/* A node for (dir, name), its hash computed; not in the table yet. */
static void mnode_init(struct mnode *n, struct mnode *dir, uint32_t id,
		       uint32_t mode, const char *name, size_t len)
{
	n->parent = dir;
	n->id = id;
	n->mode = mode;
	n->len = (uint32_t)len;
	n->hash = name_hash(name, len, dir);
	memcpy(n->name, name, len + 1);
}

/* Put n at the head of its chain.  Lock held (or the table not shared yet). */
static void mt_insert(struct mtab *m, struct mnode *n)
{
	struct mnode **b = mt_bucket(m, n->hash);

	n->next = *b;
	*b = n;
}

static void *mtab_add_node(struct impl *im, const struct tree *t, uint32_t i,
			   void *parent, size_t node_bytes)
{
	const struct tnode *x = &t->n[i];
	struct mnode *n = ref_alloc(&im->ar, ref_node_size(sizeof(*n), x->len,
							     node_bytes));

	mnode_init(n, parent, i, tnode_mode(x), tname(t, i), x->len);
	if (i)
		mt_insert(&im->mt, n);
	return n;
}

int mtab_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
	       size_t node_bytes)
{
	struct mtab *m = &im->mt;
	unsigned bits = 0;

	while ((1ull << bits) < nbuckets)
		bits++;
	pthread_mutex_init(&m->lock, NULL);
	m->b = xcalloc(nbuckets, sizeof(*m->b));
	m->shift = 64 - bits;
	im->mroot = ref_build(im, t, node_bytes, mtab_add_node);
	im->bytes = im->ar.used + nbuckets * sizeof(*m->b);
	return 0;
}

int mtab_create(struct impl *im, struct mnode *dir, const char *name)
{
	size_t len = strlen(name);
	struct mnode *n = xmalloc(sizeof(*n) + len + 1);
	int err = 0;

	mnode_init(n, dir, UINT32_MAX, S_IFREG | 0644, name, len);
	pthread_mutex_lock(&im->mt.lock);
	if (mt_find(&im->mt, dir, name, n->len, n->hash))
		err = -EEXIST;
	else
		mt_insert(&im->mt, n);
	pthread_mutex_unlock(&im->mt.lock);
	if (err)
		free(n);
	return err;
}

/* Unlink (dir, name) from its chain; the node, or NULL.  Lock held. */
static struct mnode *mt_remove(struct mtab *m, struct mnode *dir, const char *name)
{
	size_t len = strlen(name);
	uint32_t h = name_hash(name, len, dir);
	struct mnode **pp;

	for (pp = mt_bucket(m, h); *pp; pp = &(*pp)->next) {
		struct mnode *n = *pp;

		if (mt_is(n, dir, name, (uint32_t)len, h)) {
			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

int mtab_unlink(struct impl *im, struct mnode *dir, const char *name)
{
	struct mnode *n;

	pthread_mutex_lock(&im->mt.lock);
	n = mt_remove(&im->mt, dir, name);
	pthread_mutex_unlock(&im->mt.lock);
	free(n);	/* only scratch nodes are ever removed */
	return n ? 0 : -ENOENT;
}

int mtab_rename(struct impl *im, struct mnode *odir, const char *oname,
		struct mnode *ndir, const char *nname)
{
	size_t len = strlen(nname);
	struct mnode *n = xmalloc(sizeof(*n) + len + 1), *o;

	mnode_init(n, ndir, 0, 0, nname, len);
	pthread_mutex_lock(&im->mt.lock);
	o = mt_remove(&im->mt, odir, oname);
	if (o) {
		n->id = o->id;
		n->mode = o->mode;
		mt_insert(&im->mt, n);
	}
	pthread_mutex_unlock(&im->mt.lock);
	free(o);
	if (!o) {
		free(n);
		return -ENOENT;
	}
	return 0;
}

void mtab_destroy(struct impl *im)
{
	if (!im->mt.b)
		return;
	pthread_mutex_destroy(&im->mt.lock);
	free(im->mt.b);
	im->mt.b = NULL;
}
