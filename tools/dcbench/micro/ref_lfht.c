/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ref_lfht.c - the lfht reference: liburcu's cds_lfht keyed by (parent,
 * name), walked one component at a time under one rcu_read_lock, as a
 * lock-free hash table would be used for a dcache without libdcache.
 *
 * Lookups run under urcu_memb_read_lock on registered threads; a removed
 * node is freed by call_rcu after its grace period, so a reader that
 * found it may still read it.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "micro/ref.h"
#include <urcu/rculfhash.h>

#include "micro/util.h"

struct lnode {			/* cds_lfht's node */
	struct cds_lfht_node hn;
	struct lnode *parent;
	uint32_t id, mode, len;
	char name[];
};

struct lkey {
	const struct lnode *parent;
	const char *s;
	uint32_t len;
};

static int lmatch(struct cds_lfht_node *node, const void *key)
{
	const struct lnode *n = caa_container_of(node, struct lnode, hn);
	const struct lkey *k = key;

	return n->parent == k->parent && n->len == k->len &&
	       memcmp(n->name, k->s, k->len) == 0;
}

/* Walk path one component at a time under one read lock. */
int lfht_resolve(struct impl *im, const char *p, struct res *r)
{
	const struct lnode *cur = im->lroot;
	const char *end = p + strlen(p);
	struct cds_lfht_iter it;
	int err = 0;

	urcu_memb_read_lock();
	for (;;) {
		struct lkey k;
		struct cds_lfht_node *nd;
		uint32_t h;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		if (!S_ISDIR(cur->mode)) {
			err = -ENOTDIR;
			break;
		}
		k.s = p;
		h = comp_hash(p, end, cur, &k.len);
		p += k.len;
		k.parent = cur;
		cds_lfht_lookup(im->ht, h, lmatch, &k, &it);
		nd = cds_lfht_iter_get_node(&it);
		if (!nd) {
			err = -ENOENT;
			break;
		}
		cur = caa_container_of(nd, struct lnode, hn);
	}
	if (!err) {
		r->id = cur->id;
		r->mode = cur->mode;
	}
	urcu_memb_read_unlock();
	return err;
}

/* Read lock held. */
static struct lnode *lfht_find(struct impl *im, struct lnode *dir,
			       const char *name, size_t len)
{
	struct lkey k = { dir, name, (uint32_t)len };
	struct cds_lfht_iter it;
	struct cds_lfht_node *nd;

	cds_lfht_lookup(im->ht, name_hash(name, len, dir), lmatch, &k, &it);
	nd = cds_lfht_iter_get_node(&it);
	return nd ? caa_container_of(nd, struct lnode, hn) : NULL;
}

static void *lfht_find_cb(struct impl *im, void *dir, const char *name, size_t len)
{
	return lfht_find(im, dir, name, len);
}

/* The node for path (a directory the caller will hold on to). */
struct lnode *lfht_node(struct impl *im, const char *p)
{
	struct lnode *n;

	urcu_memb_read_lock();
	n = ref_walk(im, im->lroot, p, lfht_find_cb);
	urcu_memb_read_unlock();
	return n;
}

static void lnode_init(struct lnode *n, struct lnode *parent, uint32_t id,
		       uint32_t mode, const char *name, size_t len)
{
	cds_lfht_node_init(&n->hn);
	n->parent = parent;
	n->id = id;
	n->mode = mode;
	n->len = (uint32_t)len;
	memcpy(n->name, name, len + 1);
}

static void *lfht_add_node(struct impl *im, const struct tree *t, uint32_t i,
			   void *parent, size_t node_bytes)
{
	const struct tnode *x = &t->n[i];
	struct lnode *n = ref_alloc(&im->ar, ref_node_size(sizeof(*n), x->len,
							     node_bytes));

	lnode_init(n, parent, i, tnode_mode(x), tname(t, i), x->len);
	if (i) {
		urcu_memb_read_lock();
		cds_lfht_add(im->ht, name_hash(n->name, n->len, n->parent), &n->hn);
		urcu_memb_read_unlock();
	}
	return n;
}

int lfht_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
	       size_t node_bytes)
{
	struct mallinfo2 m0 = mallinfo2(), m1;

	im->ht = cds_lfht_new_flavor(nbuckets, nbuckets, nbuckets, 0,
				     &urcu_memb_flavor, NULL);
	if (!im->ht) {
		snprintf(im->why, sizeof(im->why), "cds_lfht_new_flavor failed");
		return -ENOMEM;
	}
	im->lroot = ref_build(im, t, node_bytes, lfht_add_node);
	m1 = mallinfo2();
	/* the table's own allocations, plus what the nodes use of the arena */
	im->bytes = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd) -
		    im->ar.held + im->ar.used;
	return 0;
}

static void lfree_cb(struct rcu_head *h)
{
	free(h);	/* the block starts with its rcu_head */
}

static struct lnode *lnode_scratch(struct lnode *dir, const char *name, size_t len)
{
	char *blk = xmalloc(sizeof(struct rcu_head) + sizeof(struct lnode) + len + 1);
	struct lnode *n = (struct lnode *)(blk + sizeof(struct rcu_head));

	lnode_init(n, dir, UINT32_MAX, S_IFREG | 0644, name, len);
	return n;
}

static struct rcu_head *lnode_rcu(struct lnode *n)
{
	return (struct rcu_head *)((char *)n - sizeof(struct rcu_head));
}

int lfht_create(struct impl *im, struct lnode *dir, const char *name)
{
	size_t len = strlen(name);
	struct lnode *n = lnode_scratch(dir, name, len);
	struct cds_lfht_node *got;

	urcu_memb_read_lock();
	got = cds_lfht_add_unique(im->ht, name_hash(name, len, dir), lmatch,
				  &(struct lkey){ dir, name, (uint32_t)len }, &n->hn);
	urcu_memb_read_unlock();
	if (got != &n->hn) {
		free(lnode_rcu(n));
		return -EEXIST;
	}
	return 0;
}

int lfht_unlink(struct impl *im, struct lnode *dir, const char *name)
{
	struct lnode *o;
	int err = -ENOENT;

	urcu_memb_read_lock();
	o = lfht_find(im, dir, name, strlen(name));
	if (o && cds_lfht_del(im->ht, &o->hn) == 0)
		err = 0;
	urcu_memb_read_unlock();
	if (!err)
		urcu_memb_call_rcu(lnode_rcu(o), lfree_cb);
	return err;
}

/* The obvious rename: add the new name, then delete the old one. */
int lfht_rename(struct impl *im, struct lnode *odir, const char *oname,
		struct lnode *ndir, const char *nname)
{
	size_t nlen = strlen(nname);
	struct lnode *o, *n;
	int err = -ENOENT;

	urcu_memb_read_lock();
	o = lfht_find(im, odir, oname, strlen(oname));
	if (o) {
		n = lnode_scratch(ndir, nname, nlen);
		n->id = o->id;
		n->mode = o->mode;
		cds_lfht_add(im->ht, name_hash(nname, nlen, ndir), &n->hn);
		if (cds_lfht_del(im->ht, &o->hn) == 0)
			err = 0;
	}
	urcu_memb_read_unlock();
	if (!err)
		urcu_memb_call_rcu(lnode_rcu(o), lfree_cb);
	return err;
}

void lfht_destroy(struct impl *im)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *nd;

	if (!im->ht)
		return;
	urcu_memb_read_lock();
	cds_lfht_for_each(im->ht, &it, nd)
		cds_lfht_del(im->ht, nd);
	urcu_memb_read_unlock();
	urcu_memb_synchronize_rcu();
	urcu_memb_barrier();	/* scratch nodes' callbacks */
	cds_lfht_destroy(im->ht, NULL);
	im->ht = NULL;
}
