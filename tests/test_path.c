/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_path.c - one-probe paths (path.c): a path resolved once from the
 * root is answered again by one probe of the whole string, and never says
 * what a walk would not:
 *
 *  - a second dc_resolve of a plain path (positive, negative at the last
 *    component, deep, with a trailing slash) is a path hit, with the
 *    walk's answer; -ENOENT from a missing directory above is not kept;
 *  - paths with ".", "..", a symlink, from another base, or in the global
 *    and rwlock modes are never answered so, and are right;
 *  - with TTLs on, a path is answered so until the earliest deadline of
 *    the entries it rests on (a directory's, learnt before its answer's),
 *    then walked (and revalidated) again;
 *  - dc_resolve_as by one probe only through directories anyone may
 *    search: one made 0700 (and told) gives EACCES again;
 *  - after each change the cache is told of, the path answers the new
 *    truth: the leaf created, replaced, unlinked, renamed; a directory
 *    above it renamed away and back, removed, forgotten
 *    (dc_invalidate_dir, dc_invalidate_child, dc_invalidate), its
 *    attributes changed; everything forgotten (dc_invalidate_all);
 *  - a stale node is replaced, and the path is a hit again; one whose
 *    path still leads to the same answer is brought forward in place;
 *  - a directory on the way renamed between a walk and its add (a test
 *    hook, dc_debug_on_path_add): no node answers the old path after;
 *  - a change two or more below the root sends back to the walk the paths
 *    through that second-level directory, not its siblings'; one just
 *    below the root, every path through it;
 *  - a hit leaves no LRU mark on its entry, yet the entry is evicted as
 *    any unused one is (dc_shrink), its node with it: the path is then
 *    asked of the backend again, and answered right;
 *  - unpublished nodes are freed a batch at a time, the rest by dc_shrink
 *    or at destroy;
 *  - a full table whose probes mostly find nothing is left alone for a
 *    while, then asked again (over 2^20 entries; not under TSan);
 *  - stress: readers resolve a deep path under a directory a writer moves
 *    between two parents; an answer read while no move was under way is
 *    the truth of that moment; nothing leaks;
 *  - stress: a directory forgotten again and again while readers probe a
 *    name in it; the writer then makes the name and must see it at once;
 *  - stress: a directory renamed, removed, or everything forgotten while a
 *    reader walks through it: afterwards the old path is -ENOENT.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dcache-debug.h"
#include "harness.h"
#include "memfs_tree.h"
#include "../src/internal.h"

/* The caches' cap; 0: the library's default. */
static uint64_t cap;

static struct dc_cache *open_cache(enum dc_mode m, uint32_t ttl)
{
	struct dc_options o = { .mode = m, .backend = dc_memfs_backend(fs),
				.ttl_ms = ttl, .max_entries = cap };
	struct dc_cache *c = NULL;

	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

static int64_t res(struct dc_cache *c, struct dc_dentry *base, const char *p)
{
	struct dc_inode st;
	int err = dc_resolve(c, base, p, 0, &st);

	return err ? err : (int64_t)st.ino;
}

static uint64_t path_hits(struct dc_cache *c)
{
	struct dc_stats st;

	dc_get_stats(c, &st);
	return st.path_hits;
}

/* Resolve p until it is answered lock-free (a miss walks twice: by
 * reference, then without), then once more: every answer must be want,
 * and the last a path hit when hit (else not). */
static void twice(struct dc_cache *c, const char *p, int64_t want, bool hit)
{
	uint64_t h;

	CHECK_EQ(res(c, NULL, p), want);
	CHECK_EQ(res(c, NULL, p), want);
	h = path_hits(c);
	CHECK_EQ(res(c, NULL, p), want);
	CHECK_EQ(path_hits(c) - h, hit ? 1 : 0);
	if (res(c, NULL, p) != want || (path_hits(c) - h == 2) != hit)
		fprintf(stderr, "  (path %s)\n", p);
}

/* A path answered by one probe counts as one lookup, one path hit, and
 * one hit of its sign, as a walk's answer does. */
static void counted_once(struct dc_cache *c, const char *p, int64_t want)
{
	struct dc_stats a, b;

	CHECK_EQ(res(c, NULL, p), want);
	CHECK_EQ(res(c, NULL, p), want);
	dc_get_stats(c, &a);
	CHECK_EQ(res(c, NULL, p), want);
	dc_get_stats(c, &b);
	CHECK_EQ(b.path_hits - a.path_hits, 1);
	CHECK_EQ(b.lookups - a.lookups, 1);
	CHECK_EQ(b.hits - a.hits, want < 0 ? 0 : 1);
	CHECK_EQ(b.negative_hits - a.negative_hits, want < 0 ? 1 : 0);
	CHECK_EQ(b.misses - a.misses, 0);
}

/* /a/b/c/d/e/f (a file), /a/b/l -> c (a symlink), /top (a file) */
static uint64_t ia, ib, ic, id, ie, iff, itop;

static void make_tree(void)
{
	fresh_fs();
	ia = add(DC_MEMFS_ROOT, "a", DIR_M, NULL);
	ib = add(ia, "b", DIR_M, NULL);
	ic = add(ib, "c", DIR_M, NULL);
	id = add(ic, "d", DIR_M, NULL);
	ie = add(id, "e", DIR_M, NULL);
	iff = add(ie, "f", REG_M, NULL);
	add(ib, "l", S_IFLNK | 0777, "c");
	itop = add(DC_MEMFS_ROOT, "top", REG_M, NULL);
}

/*
 * With TTLs of 1 s, a node dies with the first of the entries it rests
 * on: /a/b is learnt first, /a/b/c/d 600 ms later (its c and d stamped
 * then), so at 1.2 s a and b are past their TTL, c and d are not, and the
 * path must be walked (and a, b asked again), not answered by its node.
 * A node that kept only its answer's deadline would still answer.  The
 * margins are hundreds of milliseconds, for a loaded machine.
 */
static void test_deadline(void)
{
	struct dc_cache *c = open_cache(DC_MODE_RCU, 1000);
	uint64_t h;

	CHECK_EQ(res(c, NULL, "/a/b"), (int64_t)ib);
	CHECK_EQ(res(c, NULL, "/a/b"), (int64_t)ib);
	h_sleep_ms(600);
	twice(c, "/a/b/c/d", (int64_t)id, true);
	h_sleep_ms(600);
	h = path_hits(c);
	CHECK_EQ(res(c, NULL, "/a/b/c/d"), (int64_t)id);
	CHECK_EQ(path_hits(c), h);
	/* walked, a and b renewed: the node made anew answers again */
	twice(c, "/a/b/c/d", (int64_t)id, true);
	close_last_cache(c);
}

static void test_hits(enum dc_mode m)
{
	bool rcu = m == DC_MODE_RCU;
	struct dc_dentry *b;
	struct dc_cache *c;

	make_tree();
	c = open_cache(m, 0);
	twice(c, "/a/b/c/d/e/f", (int64_t)iff, rcu);
	twice(c, "a/b/c/d/e/f", (int64_t)iff, rcu);
	twice(c, "/a/b/c/d/e/", (int64_t)ie, rcu);
	twice(c, "/a/b/c/d/e/nope", -ENOENT, rcu);
	twice(c, "/top", (int64_t)itop, rcu);
	/* never by one probe, always right */
	twice(c, "/a/b/./c", (int64_t)ic, false);
	twice(c, "/a/b/c/../c", (int64_t)ic, false);
	twice(c, "/a/b/l/d", (int64_t)id, false);
	twice(c, "/a/b/l", (int64_t)ic, false);
	twice(c, "/a/b/nope/x", -ENOENT, false);	/* not the last component */
	twice(c, "/top/", -ENOTDIR, false);
	twice(c, "/", DC_MEMFS_ROOT, false);
	if (rcu) {
		counted_once(c, "/a/b/c/d/e/f", (int64_t)iff);
		counted_once(c, "/a/b/c/d/e/nope", -ENOENT);
	}
	CHECK_EQ(dc_walk(c, NULL, "/a/b", 0, &b), 0);
	CHECK_EQ(res(c, b, "c/d"), (int64_t)id);
	{
		uint64_t h = path_hits(c);

		CHECK_EQ(res(c, b, "c/d"), (int64_t)id);
		CHECK_EQ(path_hits(c), h);
	}
	dc_put(c, b);
	close_last_cache(c);

	if (!rcu)
		return;
	c = open_cache(m, 60000);	/* TTLs on: a node lives within them */
	twice(c, "/a/b/c/d/e/f", (int64_t)iff, true);
	close_last_cache(c);
	test_deadline();
}

/* Entries answered by one probe are evicted as unused ones are, nodes
 * and all: the next resolve of each path misses, then answers right. */
static void test_shrink(void)
{
	struct dc_cache *c;
	struct dc_stats a, b;
	long n;

	make_tree();
	c = open_cache(DC_MODE_RCU, 0);
	twice(c, "/top", (int64_t)itop, true);
	twice(c, "/a/b/c/d/e/f", (int64_t)iff, true);
	/* one call takes them all, those it gives their second chance too */
	n = dc_shrink(c, 0);
	CHECK_EQ(n, 7);		/* top, f, and e ... a above it */
	dc_get_stats(c, &a);
	CHECK_EQ(a.entries, 1);		/* the root */
	CHECK_EQ(res(c, NULL, "/top"), (int64_t)itop);
	CHECK_EQ(res(c, NULL, "/a/b/c/d/e/f"), (int64_t)iff);
	dc_get_stats(c, &b);
	CHECK_EQ(b.path_hits - a.path_hits, 0);
	CHECK_EQ(b.misses - a.misses, 7);
	close_last_cache(c);
}

/* Create /nK where a node said ENOENT, which unpublishes the node; with
 * fail, every allocation of the create fails (the memfs's comes first). */
static void unpublish_leaf(struct dc_cache *c, struct dc_dentry *r, uint64_t k,
			   bool fail)
{
	struct dc_inode in;
	char name[24];

	snprintf(name, sizeof(name), "n%llu", (unsigned long long)k);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, REG_M, NULL, &in), 0);
	if (fail)
		dc_debug_fail_alloc(1, 0);
	CHECK_EQ(dc_create(c, r, name, &in), 0);
	if (fail) {
		CHECK(dc_debug_failed_allocs() > 0);	/* the batch's header */
		dc_debug_fail_alloc(0, 0);
	}
}

/* The cache's bytes once every deferred free has run. */
static uint64_t settled_bytes(struct dc_cache *c)
{
	struct dc_stats st;

	rcu_barrier();
	dc_get_stats(c, &st);
	return st.bytes;
}

/*
 * Unpublished nodes are freed in batches: they wait until a batch's worth
 * has died (a 256th of the table's cap: 16 nodes for a cap of 4,096
 * entries), then go to call_rcu as one; without memory for the batch's
 * header, each on its own; dc_shrink lets go of a batch not yet full;
 * destroy frees what still waits (live bytes as before).
 */
static void test_batches(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = 4096 };
	struct dc_cache *c = NULL;
	struct dc_dentry *r;
	uint64_t live, batch, bytes, freed, k;
	char p[24];

	make_tree();
	o.backend = dc_memfs_backend(fs);
	live = dc_debug_live_bytes();
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	batch = c->pdead_max;
	CHECK_EQ(batch, 16);
	CHECK_EQ(dc_walk(c, NULL, "/", 0, &r), 0);
	for (k = 0; k < 2 * batch + 3; k++) {
		snprintf(p, sizeof(p), "/n%llu", (unsigned long long)k);
		twice(c, p, -ENOENT, true);
	}
	for (k = 0; k < batch - 1; k++)
		unpublish_leaf(c, r, k, false);
	CHECK_EQ(c->nr_pdead, batch - 1);	/* waiting */
	bytes = settled_bytes(c);
	unpublish_leaf(c, r, k++, false);
	CHECK_EQ(c->nr_pdead, 0);		/* gone as one batch */
	freed = bytes - settled_bytes(c);	/* and freed: its nodes' bytes */
	CHECK(freed > 0);
	unpublish_leaf(c, r, k++, false);
	unpublish_leaf(c, r, k++, false);
	CHECK_EQ(c->nr_pdead, 2);
	bytes = settled_bytes(c);
	CHECK_EQ(dc_shrink(c, UINT64_MAX), 0);	/* evicts nothing */
	CHECK_EQ(c->nr_pdead, 0);
	CHECK(settled_bytes(c) < bytes);	/* the two nodes freed */
	for (uint64_t i = 0; i < batch - 1; i++)
		unpublish_leaf(c, r, k++, false);
	bytes = settled_bytes(c);
	unpublish_leaf(c, r, k++, true);	/* no header: one by one */
	CHECK_EQ(c->nr_pdead, 0);
	CHECK(bytes - settled_bytes(c) >= freed);	/* as many, longer */
	unpublish_leaf(c, r, k++, false);
	CHECK_EQ(c->nr_pdead, 1);		/* left for destroy */
	dc_put(c, r);
	close_last_cache(c);
	CHECK_EQ(dc_debug_live_bytes(), live);
}

/*
 * A node whose shard's generation moved, but whose path still leads to
 * the same answer, is brought forward in place: the next walk of the
 * path stores the new generation in it (no node made, none unpublished),
 * and the path is a hit again.  A sibling directory renamed moves the
 * generation of the paths through /a/b.
 */
static void test_refresh(void)
{
	const char *deep = "/a/b/c/d/e/f";
	struct dc_dentry *b;
	struct dc_cache *c;
	uint64_t is, nodes, dead, h;

	make_tree();
	is = add(ib, "s", DIR_M, NULL);
	c = open_cache(DC_MODE_RCU, 0);
	CHECK_EQ(dc_walk(c, NULL, "/a/b", 0, &b), 0);
	CHECK_EQ(res(c, NULL, "/a/b/s"), (int64_t)is);
	twice(c, deep, (int64_t)iff, true);
	CHECK_EQ(dc_memfs_rename(fs, ib, "s", ib, "s2", 0), 0);
	CHECK_EQ(dc_rename(c, b, "s", b, "s2", 0), 0);
	nodes = c->nr_pnodes;
	dead = c->nr_pdead;
	h = path_hits(c);
	CHECK_EQ(res(c, NULL, deep), (int64_t)iff);	/* walked: stale */
	CHECK_EQ(path_hits(c) - h, 0);
	CHECK_EQ(res(c, NULL, deep), (int64_t)iff);	/* its node again */
	CHECK_EQ(path_hits(c) - h, 1);
	CHECK_EQ(c->nr_pnodes, nodes);
	CHECK_EQ(c->nr_pdead, dead);
	dc_put(c, b);
	close_last_cache(c);
}

/*
 * A directory on the way renamed between a walk and its add (the hook
 * runs where a writer on another CPU may come): the walk saw the old
 * namespace, so no node may answer for it after the rename, neither a
 * new one nor an old one for the string brought forward (stale: a node
 * made before, then left behind in its generation by a change beside
 * it).  The old path answers -ENOENT after, the new one leads to the
 * same file, and the add, finding the generation moved, made no node.
 */
struct add_race {
	struct dc_cache *c;
	struct dc_dentry *b;
	int left;
};

static void rename_in_add(void *arg)
{
	struct add_race *r = arg;

	if (!r->left)
		return;
	r->left--;
	CHECK_EQ(dc_memfs_rename(fs, ib, "c", ib, "c2", 0), 0);
	CHECK_EQ(dc_rename(r->c, r->b, "c", r->b, "c2", 0), 0);
}

static void test_add_race(void)
{
	const char *deep = "/a/b/c/d/e/f";

	for (int stale = 0; stale < 2; stale++) {
		struct add_race r = { .left = 1 };
		uint64_t is, nodes;

		make_tree();
		is = add(ib, "s", DIR_M, NULL);
		r.c = open_cache(DC_MODE_RCU, 0);
		CHECK_EQ(dc_walk(r.c, NULL, "/a/b", 0, &r.b), 0);
		CHECK_EQ(res(r.c, NULL, "/a/b/s"), (int64_t)is);
		if (stale) {
			twice(r.c, deep, (int64_t)iff, true);
			CHECK_EQ(dc_memfs_rename(fs, ib, "s", ib, "s2", 0), 0);
			CHECK_EQ(dc_rename(r.c, r.b, "s", r.b, "s2", 0), 0);
		} else {
			/* its entries learnt (a ref-walk, which makes no node),
			 * so that the next resolve is an rcu-walk */
			CHECK_EQ(res(r.c, NULL, deep), (int64_t)iff);
			CHECK_EQ(r.c->nr_pnodes, 0);
		}
		nodes = r.c->nr_pnodes;
		dc_debug_on_path_add(r.c, rename_in_add, &r);
		/* the walk's answer, held when it walked */
		CHECK_EQ(res(r.c, NULL, deep), (int64_t)iff);
		dc_debug_on_path_add(r.c, NULL, NULL);
		CHECK_EQ(r.left, 0);
		CHECK_EQ(r.c->nr_pnodes, nodes);
		CHECK_EQ(res(r.c, NULL, deep), -ENOENT);
		CHECK_EQ(res(r.c, NULL, deep), -ENOENT);
		CHECK_EQ(res(r.c, NULL, "/a/b/c2/d/e/f"), (int64_t)iff);
		dc_put(r.c, r.b);
		close_last_cache(r.c);
	}
}

/*
 * A full table that rarely answers is left alone for a while: the table
 * filled (more paths resolved than it may hold nodes), 64 probes of paths
 * it holds no node for make the next resolve of a path it does hold skip
 * the probe (walked, still right); the probe comes back after at most
 * 2,048 resolves.  Needs over 2^20 entries: a table's cap is four nodes
 * a head, and it has at most 2^18 heads.
 */
#define PACE_DIRS	1024
#define PACE_FILES	1040		/* a directory: 1,064,960 files in all */
static void test_pace(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = 4u << 20 };
	static uint64_t ino[PACE_DIRS][PACE_FILES];
	struct dc_cache *c = NULL;
	char p[32];
	uint64_t h, bad = 0;
	unsigned k;

	fresh_fs();
	for (unsigned i = 0; i < PACE_DIRS; i++) {
		uint64_t d;

		snprintf(p, sizeof(p), "d%04u", i);
		d = add(DC_MEMFS_ROOT, p, DIR_M, NULL);
		for (unsigned j = 0; j < PACE_FILES; j++) {
			snprintf(p, sizeof(p), "f%04u", j);
			ino[i][j] = add(d, p, REG_M, NULL);
		}
	}
	o.backend = dc_memfs_backend(fs);
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	/* each path twice: learnt, then walked lock-free, which makes its
	 * node while the table has room */
	for (unsigned i = 0; i < PACE_DIRS; i++)
		for (unsigned j = 0; j < PACE_FILES; j++) {
			snprintf(p, sizeof(p), "/d%04u/f%04u", i, j);
			bad += res(c, NULL, p) != (int64_t)ino[i][j];
			bad += res(c, NULL, p) != (int64_t)ino[i][j];
		}
	CHECK_EQ(bad, 0);
	/* full: the last path got no node */
	snprintf(p, sizeof(p), "/d%04u/f%04u", PACE_DIRS - 1, PACE_FILES - 1);
	h = path_hits(c);
	CHECK_EQ(res(c, NULL, p), (int64_t)ino[PACE_DIRS - 1][PACE_FILES - 1]);
	CHECK_EQ(path_hits(c), h);
	/* and the first one has, while the table is asked */
	CHECK_EQ(res(c, NULL, "/d0000/f0000"), (int64_t)ino[0][0]);
	CHECK_EQ(path_hits(c) - h, 1);
	/* probes that find nothing: the table is left alone */
	for (unsigned j = 0; j < 64; j++) {
		snprintf(p, sizeof(p), "/d%04u/f%04u", PACE_DIRS - 1, j);
		bad += res(c, NULL, p) != (int64_t)ino[PACE_DIRS - 1][j];
	}
	CHECK_EQ(bad, 0);
	h = path_hits(c);
	CHECK_EQ(res(c, NULL, "/d0000/f0000"), (int64_t)ino[0][0]);
	CHECK_EQ(path_hits(c), h);
	/* for a while only */
	for (k = 0; k < 2048 && path_hits(c) == h; k++)
		bad += res(c, NULL, "/d0000/f0000") != (int64_t)ino[0][0];
	CHECK_EQ(bad, 0);
	CHECK(k < 2048);
	close_last_cache(c);
}

/*
 * dc_resolve_as by one probe only where every directory on the way lets
 * anyone search it; a directory made 0700 (told) gives EACCES again.
 */
static void test_checked(void)
{
	const struct dc_cred other = { .uid = 1000, .gid = 1000 };
	struct dc_inode st;
	struct dc_cache *c;
	uint64_t h;

	make_tree();
	c = open_cache(DC_MODE_RCU, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(dc_resolve_as(c, NULL, "/a/b/c/d/e/f", 0, &other, &st), 0);
	h = path_hits(c);
	CHECK_EQ(dc_resolve_as(c, NULL, "/a/b/c/d/e/f", 0, &other, &st), 0);
	CHECK_EQ(st.ino, iff);
	CHECK_EQ(path_hits(c) - h, 1);
	/* /a/b/c made 0700, owned by root: others may not pass */
	CHECK_EQ(dc_memfs_chmod(fs, ic, 0700), 0);
	CHECK_EQ(dc_invalidate_inode(c, ic, 0), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(dc_resolve_as(c, NULL, "/a/b/c/d/e/f", 0, &other, &st), -EACCES);
	/* the plain resolve may still use the path, and a checked one then
	 * does not */
	twice(c, "/a/b/c/d/e/f", (int64_t)iff, true);
	h = path_hits(c);
	CHECK_EQ(dc_resolve_as(c, NULL, "/a/b/c/d/e/f", 0, &other, &st), -EACCES);
	CHECK_EQ(path_hits(c), h);
	close_last_cache(c);
}

/* After each change told, the path answers the new truth. */
static void test_changes(void)
{
	const char *deep = "/a/b/c/d/e/f";
	struct dc_dentry *a, *b, *e, *r;
	struct dc_inode in;
	struct dc_cache *c;
	uint64_t x;

	make_tree();
	c = open_cache(DC_MODE_RCU, 0);
	CHECK_EQ(dc_walk(c, NULL, "/", 0, &r), 0);
	CHECK_EQ(dc_walk(c, NULL, "/a", 0, &a), 0);
	CHECK_EQ(dc_walk(c, NULL, "/a/b", 0, &b), 0);
	CHECK_EQ(dc_walk(c, NULL, "/a/b/c/d/e", 0, &e), 0);

	/* the leaf: created where it was negative, replaced, unlinked */
	twice(c, "/a/b/c/d/e/g", -ENOENT, true);
	CHECK_EQ(dc_memfs_add(fs, ie, "g", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(c, e, "g", &in), 0);
	twice(c, "/a/b/c/d/e/g", (int64_t)in.ino, true);
	CHECK_EQ(dc_memfs_remove(fs, ie, "g", 0), 0);
	CHECK_EQ(dc_memfs_add(fs, ie, "g", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(c, e, "g", &in), 0);
	twice(c, "/a/b/c/d/e/g", (int64_t)in.ino, true);
	CHECK_EQ(dc_memfs_remove(fs, ie, "g", 0), 0);
	CHECK_EQ(dc_unlink(c, e, "g"), 0);
	twice(c, "/a/b/c/d/e/g", -ENOENT, true);

	/* the leaf renamed away */
	twice(c, deep, (int64_t)iff, true);
	CHECK_EQ(dc_memfs_rename(fs, ie, "f", ie, "f2", 0), 0);
	CHECK_EQ(dc_rename(c, e, "f", e, "f2", 0), 0);
	twice(c, deep, -ENOENT, true);
	CHECK_EQ(dc_memfs_rename(fs, ie, "f2", ie, "f", 0), 0);
	CHECK_EQ(dc_rename(c, e, "f2", e, "f", 0), 0);
	twice(c, deep, (int64_t)iff, true);

	/* a directory above: renamed away and back (a stale node replaced) */
	CHECK_EQ(dc_memfs_rename(fs, ia, "b", DC_MEMFS_ROOT, "b2", 0), 0);
	CHECK_EQ(dc_rename(c, a, "b", r, "b2", 0), 0);
	twice(c, deep, -ENOENT, false);		/* "b" is negative now */
	twice(c, "/b2/c/d/e/f", (int64_t)iff, true);
	CHECK_EQ(dc_memfs_rename(fs, DC_MEMFS_ROOT, "b2", ia, "b", 0), 0);
	CHECK_EQ(dc_rename(c, r, "b2", a, "b", 0), 0);
	twice(c, "/b2/c/d/e/f", -ENOENT, false);
	twice(c, deep, (int64_t)iff, true);

	/* a directory above replaced behind the cache, then told by name */
	CHECK_EQ(dc_memfs_rename(fs, ib, "c", ia, "old-c", 0), 0);
	x = add(ib, "c", DIR_M, NULL);
	CHECK_EQ(dc_invalidate_child(c, ib, 0, "c", 1), 0);
	CHECK_EQ(dc_invalidate_child(c, ia, 0, "old-c", 5), 0);
	twice(c, deep, -ENOENT, false);		/* the new c is empty */
	twice(c, "/a/b/c", (int64_t)x, true);
	twice(c, "/a/old-c/d/e/f", (int64_t)iff, true);
	/* moved back behind the cache; told by the directory's inode */
	CHECK_EQ(dc_memfs_rename(fs, ib, "c", ia, "new-c", 0), 0);
	CHECK_EQ(dc_memfs_rename(fs, ia, "old-c", ib, "c", 0), 0);
	CHECK_EQ(dc_invalidate_dir(c, ib, 0), 0);
	CHECK_EQ(dc_invalidate_dir(c, ia, 0), 0);
	twice(c, deep, (int64_t)iff, true);
	twice(c, "/a/b/c", (int64_t)ic, true);

	/* a directory above forgotten through a handle, and everything */
	twice(c, "/a/b/c/d/e/nope", -ENOENT, true);
	x = add(ie, "nope", REG_M, NULL);	/* behind the cache */
	CHECK_EQ(dc_invalidate(c, a), 0);
	twice(c, "/a/b/c/d/e/nope", (int64_t)x, true);
	CHECK_EQ(dc_memfs_remove(fs, ie, "nope", 0), 0);
	CHECK_EQ(dc_invalidate_all(c), 0);
	twice(c, "/a/b/c/d/e/nope", -ENOENT, true);

	/* a directory's attributes changed: the walk checks it again */
	twice(c, deep, (int64_t)iff, true);
	CHECK_EQ(dc_invalidate_inode(c, ic, 0), 0);
	twice(c, deep, (int64_t)iff, true);

	/* ... and its own path answers its new mode and owner, stored in
	 * place, by the walk and then by one probe */
	twice(c, "/a/b/c", (int64_t)ic, true);
	CHECK_EQ(dc_memfs_chmod(fs, ic, 0750), 0);
	CHECK_EQ(dc_memfs_chown(fs, ic, 7, 8), 0);
	CHECK_EQ(dc_invalidate_inode(c, ic, 0), 0);
	for (int i = 0; i < 3; i++) {
		struct dc_inode st;

		CHECK_EQ(dc_resolve(c, NULL, "/a/b/c", 0, &st), 0);
		CHECK_EQ(st.ino, ic);
		CHECK_EQ(st.mode, S_IFDIR | 0750);
		CHECK_EQ(st.uid, 7);
		CHECK_EQ(st.gid, 8);
	}
	twice(c, "/a/b/c", (int64_t)ic, true);
	CHECK_EQ(dc_memfs_chmod(fs, ic, 0755), 0);
	CHECK_EQ(dc_memfs_chown(fs, ic, 0, 0), 0);
	CHECK_EQ(dc_invalidate_inode(c, ic, 0), 0);

	/* an empty directory removed, and a file made in its place */
	x = add(ie, "sub", DIR_M, NULL);
	CHECK_EQ(dc_invalidate_child(c, ie, 0, "sub", 3), 0);
	twice(c, "/a/b/c/d/e/sub", (int64_t)x, true);
	twice(c, "/a/b/c/d/e/sub/", (int64_t)x, true);
	CHECK_EQ(dc_memfs_remove(fs, ie, "sub", 1), 0);
	x = add(ie, "sub", REG_M, NULL);
	CHECK_EQ(dc_invalidate_child(c, ie, 0, "sub", 3), 0);
	twice(c, "/a/b/c/d/e/sub", (int64_t)x, true);
	twice(c, "/a/b/c/d/e/sub/", -ENOTDIR, false);

	dc_put(c, e);
	dc_put(c, b);
	dc_put(c, a);
	dc_put(c, r);
	close_last_cache(c);
}

/*
 * A change below the root's children sends back to the walk only the
 * paths through its ancestor two below the root (and those that share
 * its shard, one in eight of its siblings'): of 16 paths /s/dK/q/r/f, a
 * change at /s/d0, /s/d0/q or /s/d0/q/r sends the one through d0 back,
 * and most of the others are still answered by one probe.  A change of
 * /s itself sends every path through /s back.  Each first resolve after
 * a change is looked at alone: a path hit or not.  Shards depend on the
 * cache's random key, so each check is made in four caches: a change
 * that moved the wrong shard would still send d0's path back by chance
 * in one cache in eight.  Then directories below the second level are
 * renamed, within it and up into /s, and every path answers the truth.
 */
#define NSIB	16

static uint64_t is, idk[NSIB], iq[NSIB], ir[NSIB], ifile[NSIB];
static char sibp[NSIB][32];

static bool hit_once(struct dc_cache *c, const char *p, int64_t want)
{
	uint64_t h = path_hits(c);

	CHECK_EQ(res(c, NULL, p), want);
	return path_hits(c) - h == 1;
}

static void make_siblings(void)
{
	fresh_fs();
	is = add(DC_MEMFS_ROOT, "s", DIR_M, NULL);
	for (int k = 0; k < NSIB; k++) {
		char name[16];

		snprintf(name, sizeof(name), "d%d", k);
		idk[k] = add(is, name, DIR_M, NULL);
		iq[k] = add(idk[k], "q", DIR_M, NULL);
		ir[k] = add(iq[k], "r", DIR_M, NULL);
		ifile[k] = add(ir[k], "f", REG_M, NULL);
		snprintf(sibp[k], sizeof(sibp[k]), "/s/d%d/q/r/f", k);
	}
}

/* Made suspect: dir (d0 or below), then /s. */
static void shards_once(uint64_t dir)
{
	struct dc_cache *c = open_cache(DC_MODE_RCU, 0);
	int kept = 0;

	for (int k = 0; k < NSIB; k++)
		twice(c, sibp[k], (int64_t)ifile[k], true);
	CHECK_EQ(dc_invalidate_inode(c, dir, 0), 0);
	CHECK(!hit_once(c, sibp[0], (int64_t)ifile[0]));
	for (int k = 1; k < NSIB; k++)
		kept += hit_once(c, sibp[k], (int64_t)ifile[k]);
	/* only (1/8)^15 of the keys put all 15 in d0's shard */
	CHECK(kept > 0);
	if (!kept)
		fprintf(stderr, "  every sibling's path walked after a change below d0\n");
	for (int k = 0; k < NSIB; k++)
		twice(c, sibp[k], (int64_t)ifile[k], true);

	CHECK_EQ(dc_invalidate_inode(c, is, 0), 0);
	for (int k = 0; k < NSIB; k++)
		CHECK(!hit_once(c, sibp[k], (int64_t)ifile[k]));
	close_last_cache(c);
}

/* /s/d1/q -> /s/d2/q1 (two shards of one group, or one), then
 * /s/d3/q -> /s/q3 (a shard and its whole group, moved once). */
static void shards_renamed(void)
{
	struct dc_cache *c = open_cache(DC_MODE_RCU, 0);
	struct dc_dentry *s, *d1, *d2, *d3;

	for (int k = 0; k < NSIB; k++)
		twice(c, sibp[k], (int64_t)ifile[k], true);
	CHECK_EQ(dc_walk(c, NULL, "/s", 0, &s), 0);
	CHECK_EQ(dc_walk(c, NULL, "/s/d1", 0, &d1), 0);
	CHECK_EQ(dc_walk(c, NULL, "/s/d2", 0, &d2), 0);
	CHECK_EQ(dc_walk(c, NULL, "/s/d3", 0, &d3), 0);
	CHECK_EQ(dc_memfs_rename(fs, idk[1], "q", idk[2], "q1", 0), 0);
	CHECK_EQ(dc_rename(c, d1, "q", d2, "q1", 0), 0);
	twice(c, sibp[1], -ENOENT, false);	/* "q" is missing above f */
	twice(c, "/s/d2/q1/r/f", (int64_t)ifile[1], true);
	twice(c, sibp[2], (int64_t)ifile[2], true);
	CHECK_EQ(dc_memfs_rename(fs, idk[3], "q", is, "q3", 0), 0);
	CHECK_EQ(dc_rename(c, d3, "q", s, "q3", 0), 0);
	twice(c, sibp[3], -ENOENT, false);
	twice(c, "/s/q3/r/f", (int64_t)ifile[3], true);
	for (int k = 4; k < NSIB; k++)
		twice(c, sibp[k], (int64_t)ifile[k], true);
	dc_put(c, d3);
	dc_put(c, d2);
	dc_put(c, d1);
	dc_put(c, s);
	close_last_cache(c);
}

static void test_shards(void)
{
	make_siblings();
	for (int i = 0; i < 4; i++) {
		shards_once(idk[0]);		/* /s/d0, two below the root */
		shards_once(iq[0]);		/* /s/d0/q */
		shards_once(ir[0]);		/* /s/d0/q/r */
	}
	shards_renamed();
}

/* A change moves each shard once: two sets of a rename (the old place's
 * and the new one's) that overlap become the wider, others stay apart. */
static void test_sets_join(void)
{
	const uint32_t one = DC_PATH_SET(DC_PATH_SLOTS + 2, 1);
	const uint32_t other = DC_PATH_SET(DC_PATH_SLOTS + 3, 1);
	const uint32_t group = DC_PATH_SET(DC_PATH_SLOTS, DC_PATH_SLOTS);
	const uint32_t far = DC_PATH_SET(2 * DC_PATH_SLOTS, DC_PATH_SLOTS);
	const struct { uint32_t a, b, ja, jb; } t[] = {
		{ one, group, group, group },
		{ group, one, group, group },
		{ one, one, one, one },
		{ one, other, one, other },
		{ one, far, one, far },
		{ group, far, group, far },
		{ DC_PATH_ALL, one, DC_PATH_ALL, DC_PATH_ALL },
		{ far, DC_PATH_ALL, DC_PATH_ALL, DC_PATH_ALL },
		{ 0, 0, 0, 0 },		/* not a directory: no set */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t a = t[i].a, b = t[i].b;

		dc__path_sets_join(&a, &b);
		CHECK_EQ(a, t[i].ja);
		CHECK_EQ(b, t[i].jb);
	}
}

/* ---- stress ---------------------------------------------------------------
 *
 * /p1 and /p2; the writer moves /p?/x (holding y/z/w/f) between them, each
 * move bracketed by version bumps (odd while it is under way).  A reader
 * whose answer was read between two equal even versions must see f under
 * the parent of that version and nothing under the other.
 */
static uint64_t version, stop_flag;
static uint64_t ip1, ip2, ix, istress_f;

static void *stress_reader(void *arg)
{
	struct dc_cache *c = arg;
	int64_t r1, r2;
	uint64_t v1, v2;

	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
		v1 = __atomic_load_n(&version, __ATOMIC_ACQUIRE);
		r1 = res(c, NULL, "/p1/x/y/z/w/f");
		r2 = res(c, NULL, "/p2/x/y/z/w/f");
		v2 = __atomic_load_n(&version, __ATOMIC_ACQUIRE);
		if (v1 != v2 || (v1 & 1))
			continue;
		if ((v1 / 2) % 2 == 0) {
			CHECK_EQ(r1, (int64_t)istress_f);
			CHECK_EQ(r2, -ENOENT);
		} else {
			CHECK_EQ(r1, -ENOENT);
			CHECK_EQ(r2, (int64_t)istress_f);
		}
	}
	return NULL;
}

static void test_stress(void)
{
	struct dc_dentry *p1, *p2;
	struct dc_cache *c;
	pthread_t t[2];
	struct timespec ts0, ts;
	uint64_t y, z, w, moves = 0;

	fresh_fs();
	ip1 = add(DC_MEMFS_ROOT, "p1", DIR_M, NULL);
	ip2 = add(DC_MEMFS_ROOT, "p2", DIR_M, NULL);
	ix = add(ip1, "x", DIR_M, NULL);
	y = add(ix, "y", DIR_M, NULL);
	z = add(y, "z", DIR_M, NULL);
	w = add(z, "w", DIR_M, NULL);
	istress_f = add(w, "f", REG_M, NULL);
	c = open_cache(DC_MODE_RCU, 0);
	CHECK_EQ(dc_walk(c, NULL, "/p1", 0, &p1), 0);
	CHECK_EQ(dc_walk(c, NULL, "/p2", 0, &p2), 0);
	version = 0;
	stop_flag = 0;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, stress_reader, c), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	do {
		bool in1 = moves % 2 == 0;

		__atomic_add_fetch(&version, 1, __ATOMIC_ACQ_REL);	/* odd */
		CHECK_EQ(dc_memfs_rename(fs, in1 ? ip1 : ip2, "x", in1 ? ip2 : ip1,
					 "x", 0), 0);
		CHECK_EQ(dc_rename(c, in1 ? p1 : p2, "x", in1 ? p2 : p1, "x", 0), 0);
		__atomic_add_fetch(&version, 1, __ATOMIC_ACQ_REL);	/* even */
		moves++;
		/* let the readers hit between moves */
		for (int k = 0; k < 2000; k++)
			(void)res(c, NULL, "/p1/x/y/z/w/f");
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((double)(ts.tv_sec - ts0.tv_sec) +
		 (double)(ts.tv_nsec - ts0.tv_nsec) / 1e9 < h_seconds() / 4);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(moves > 0);
	CHECK(path_hits(c) > 0);
	dc_put(c, p1);
	dc_put(c, p2);
	close_last_cache(c);
}

/*
 * A directory forgotten while readers walk through it: a reader whose
 * walk saw it alive must not leave a node that outlives the forgetting.
 * The writer forgets /t, then makes /t/fN (told by name) and must see it
 * at once; the readers probe /t/fN+1, which does not exist yet.
 */
static int next_name;

static void *forget_reader(void *arg)
{
	struct dc_cache *c = arg;
	char path[32];

	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
		snprintf(path, sizeof(path), "/t/f%d",
			 __atomic_load_n(&next_name, __ATOMIC_ACQUIRE) + 1);
		(void)res(c, NULL, path);
	}
	return NULL;
}

static void test_forget_race(void)
{
	struct dc_cache *c;
	pthread_t t[2];
	struct timespec ts0, ts;
	char name[16], path[32];
	uint64_t it, x;
	int wrong = 0;

	fresh_fs();
	it = add(DC_MEMFS_ROOT, "t", DIR_M, NULL);
	c = open_cache(DC_MODE_RCU, 0);
	stop_flag = 0;
	next_name = 0;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, forget_reader, c), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	for (int i = 1; ; i++) {
		CHECK_EQ(dc_invalidate_child(c, DC_MEMFS_ROOT, 0, "t", 1), 0);
		snprintf(name, sizeof(name), "f%d", i);
		x = add(it, name, REG_M, NULL);
		CHECK_EQ(dc_invalidate_child(c, it, 0, name, strlen(name)), 0);
		snprintf(path, sizeof(path), "/t/%s", name);
		wrong += res(c, NULL, path) != (int64_t)x;
		__atomic_store_n(&next_name, i, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((double)(ts.tv_sec - ts0.tv_sec) +
		    (double)(ts.tv_nsec - ts0.tv_nsec) / 1e9 > h_seconds() / 4)
			break;
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(wrong, 0);
	close_last_cache(c);
}

/*
 * A directory renamed, removed, or everything forgotten while a reader
 * walks through it: once the change and the reader's call are over, the
 * old path must answer -ENOENT.  A walk that read the generation during
 * the change and saw the old state must not leave a node behind.
 */
static int race_go;

static void *race_reader(void *arg)
{
	struct dc_cache *c = arg;

	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE))
		if (__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
			(void)res(c, NULL, "/a/sub/x");
	return NULL;
}

static void spin(int n)
{
	for (volatile int s = 0; s < n; s++)
		;
}

static void test_change_race(int kind)
{
	static const char *const names[] = { "rename", "rmdir", "invalidate_all" };
	struct dc_dentry *a;
	struct dc_cache *c;
	struct timespec ts0, ts;
	uint64_t ia, isub;
	pthread_t t;
	int wrong = 0, it;

	fresh_fs();
	ia = add(DC_MEMFS_ROOT, "a", DIR_M, NULL);
	c = open_cache(DC_MODE_RCU, 0);
	stop_flag = 0;
	race_go = 0;
	CHECK_EQ(pthread_create(&t, NULL, race_reader, c), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	for (it = 0; !wrong; it++) {
		isub = add(ia, "sub", DIR_M, NULL);
		add(isub, "x", REG_M, NULL);
		CHECK_EQ(dc_walk(c, NULL, "/a", 0, &a), 0);
		CHECK_EQ(dc_invalidate_child(c, ia, 0, "sub", 3), 0);
		(void)res(c, NULL, "/a/sub/x");
		(void)res(c, NULL, "/a/sub/x");
		__atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
		spin(3000);
		if (kind == 0) {
			CHECK_EQ(dc_memfs_rename(fs, ia, "sub", ia, "sub2", 0), 0);
			CHECK_EQ(dc_rename(c, a, "sub", a, "sub2", 0), 0);
		} else {
			CHECK_EQ(dc_memfs_remove(fs, isub, "x", 0), 0);
			CHECK_EQ(dc_memfs_remove(fs, ia, "sub", 1), 0);
			if (kind == 1)
				CHECK_EQ(dc_rmdir(c, a, "sub"), 0);
			else
				CHECK_EQ(dc_invalidate_all(c), 0);
		}
		__atomic_store_n(&race_go, 0, __ATOMIC_RELEASE);
		spin(30000);	/* the reader's call in flight ends */
		for (int k = 0; k < 3; k++)
			wrong += res(c, NULL, "/a/sub/x") != -ENOENT;
		if (kind == 0) {
			CHECK_EQ(dc_memfs_remove(fs, isub, "x", 0), 0);
			CHECK_EQ(dc_memfs_remove(fs, ia, "sub2", 1), 0);
			CHECK_EQ(dc_invalidate_child(c, ia, 0, "sub2", 4), 0);
		}
		dc_put(c, a);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((double)(ts.tv_sec - ts0.tv_sec) +
		    (double)(ts.tv_nsec - ts0.tv_nsec) / 1e9 > h_seconds() / 4)
			break;
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (wrong)
		fprintf(stderr, "  %s: a stale answer after %d rounds\n", names[kind], it);
	CHECK_EQ(wrong, 0);
	close_last_cache(c);
}

int main(void)
{
	for (enum dc_mode m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++)
		test_hits(m);
	test_changes();
	test_shards();
	test_sets_join();
	test_shrink();
	test_batches();
	test_refresh();
	test_add_race();
	if (H_UNDER_TSAN)	/* one thread: nothing for TSan to see, 3 GB under it */
		SKIP("test_pace under TSan");
	else
		test_pace();
	test_checked();
	cap = 4096;	/* batches of 16 nodes: freed while the readers run */
	test_stress();
	test_forget_race();
	for (int k = 0; k < 3; k++)
		test_change_race(k);
	dc_memfs_free(fs);
	return h_done("test_path");
}
