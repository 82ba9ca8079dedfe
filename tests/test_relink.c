/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_relink.c - a lock-free reader standing on an entry that a rename
 * re-links must see initialised whatever the new links lead it to.
 *
 * A rename moves entry d to a new parent and the head of a new chain while
 * readers may stand on it, and they follow both of its links on: hnext
 * into the new chain (dc__find_rcu, to entries it never reached through a
 * bucket head), parent out of it ("..", an entry's path).  The renaming
 * thread saw what those links point to initialised through the write lock;
 * its stores of the links have to pass that on (release stores, paired with
 * the readers' acquire loads), or the reader reads those entries with no
 * happens-before edge to the thread that wrote them.  Harmless on x86, a
 * data race in C11, and what ThreadSanitizer once reported from the
 * general torture in CI (dc__find_rcu reading the name of an entry that
 * dc_rmdir had just allocated), too rarely to catch on demand.
 *
 * This stages each interleaving exactly, reaching into the table for it:
 *  1. a reader thread holds d inside its read-side section;
 *  2. the writer creates an entry n that d's rename will link d to:
 *     hnext: B/q, q chosen so that (B, q) and (B, m) share a bucket;
 *     parent: a new directory C;
 *  3. the writer renames d (A/m to B/m; A/dir to C/dir);
 *  4. the reader follows the link and reads n.
 * The two threads signal each other with relaxed atomics, which give
 * ThreadSanitizer no ordering: the only edge from n's initialisation to
 * the reader is the link.  In the TSan build (make check) a link stored
 * without release is reported as a race and fails the test; every build
 * checks that the reader reached n and read it right.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dcache-debug.h"
#include "harness.h"
#include "../src/internal.h"

enum { HNEXT, PARENT };

static struct dc_cache *cache;
static struct dc_dentry *d;		/* the entry that moves */
static char nname[16];			/* the name of what d will link to */
static int which, ready, moved;		/* relaxed hand-shakes, see above */

static void *reader(void *arg)
{
	struct dc_dentry *n;
	struct dc_inode st;

	(void)arg;
	dc_resolve(cache, NULL, "/a", 0, &st);	/* registers with liburcu */
	dc__rcu_lock();
	__atomic_store_n(&ready, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&moved, __ATOMIC_RELAXED))
		;
	/* acquire, as dc__find_rcu walks a chain and ".." climbs */
	n = which == HNEXT ? dc__load_acq(d->hnext) : dc__load_acq(d->parent);
	CHECK(n != NULL);
	if (n) {
		CHECK_EQ(dc__load(n->hash), dc__hash_name(cache, dc__load(n->parent), nname,
							  strlen(nname)));
		CHECK(dc__name_eq(dc__load_acq(n->name), nname, strlen(nname)));
		CHECK_EQ(dc__load(n->mode) & S_IFMT, which == HNEXT ? S_IFREG : S_IFDIR);
	}
	dc__rcu_unlock();
	return NULL;
}

/* memfs and cache: a name added to directory (ino, entry) */
static void add(struct dc_memfs *fs, uint64_t dino, struct dc_dentry *dir,
		const char *name, uint32_t mode, struct dc_inode *in)
{
	CHECK_EQ(dc_memfs_add(fs, dino, name, mode, NULL, in), 0);
	CHECK_EQ((dc__is_dir(mode) ? dc_mkdir : dc_create)(cache, dir, name, in), 0);
}

static struct dc_dentry *lookup(struct dc_dentry *dir, const char *name)
{
	struct dc_dentry *e = NULL;

	CHECK_EQ(dc_lookup(cache, dir, name, strlen(name), &e), 0);
	return e;
}

/* A name that shares a bucket with name in dir. */
static void bucket_mate(struct dc_dentry *dir, const char *name, char *out,
			size_t size)
{
	struct dc_dentry **b = dc__bucket(cache, dc__hash_name(cache, dir, name, strlen(name)));
	int i;

	for (i = 0; i < 100000; i++) {
		snprintf(out, size, "q%d", i);
		if (dc__bucket(cache, dc__hash_name(cache, dir, out, strlen(out))) == b)
			return;
	}
	CHECK(!"no bucket mate");
}

/* Hold d in a reader, run move (which sets nname) and let the reader look. */
static void stage(int kind, void (*move)(void))
{
	pthread_t t;

	which = kind;
	ready = moved = 0;
	pthread_create(&t, NULL, reader, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_RELAXED))
		;
	move();
	__atomic_store_n(&moved, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
}

static struct dc_memfs *fs;
static struct dc_dentry *root, *da, *db;
static struct dc_inode ia, ib;

/* B/q, then A/m -> B/m: d = A/m joins q's chain at its head */
static void move_hnext(void)
{
	struct dc_inode in;

	add(fs, ib.ino, db, nname, S_IFREG | 0644, &in);
	CHECK_EQ(dc_memfs_rename(fs, ia.ino, "m", ib.ino, "m", 0), 0);
	CHECK_EQ(dc_rename(cache, da, "m", db, "m", 0), 0);
}

/* mkdir C, then A/dir -> C/dir: d = A/dir gets C as its parent */
static void move_parent(void)
{
	struct dc_dentry *dc;
	struct dc_inode ic;

	add(fs, DC_MEMFS_ROOT, root, nname, S_IFDIR | 0755, &ic);
	dc = lookup(root, nname);
	CHECK_EQ(dc_memfs_rename(fs, ia.ino, "dir", ic.ino, "dir", 0), 0);
	CHECK_EQ(dc_rename(cache, da, "dir", dc, "dir", 0), 0);
	dc_put(cache, dc);
}

int main(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = 64 };
	struct dc_inode in;

	if (dc_memfs_new(&fs) || (o.backend = dc_memfs_backend(fs),
				  dc_cache_create(&o, &cache))) {
		fprintf(stderr, "test_relink: cannot create the cache\n");
		return 1;
	}
	root = dc_root(cache);
	add(fs, DC_MEMFS_ROOT, root, "a", S_IFDIR | 0755, &ia);
	add(fs, DC_MEMFS_ROOT, root, "b", S_IFDIR | 0755, &ib);
	da = lookup(root, "a");
	db = lookup(root, "b");
	add(fs, ia.ino, da, "m", S_IFREG | 0644, &in);
	add(fs, ia.ino, da, "dir", S_IFDIR | 0755, &in);

	/* d stays hashed; the readers read it under RCU, no reference */
	d = lookup(da, "m");
	dc_put(cache, d);
	bucket_mate(db, "m", nname, sizeof(nname));
	stage(HNEXT, move_hnext);

	d = lookup(da, "dir");
	dc_put(cache, d);
	snprintf(nname, sizeof(nname), "c");
	stage(PARENT, move_parent);

	CHECK_EQ(dc_debug_check(cache), 0);
	dc_put(cache, da);
	dc_put(cache, db);
	dc_put(cache, root);
	dc_cache_destroy(cache);
	dc_memfs_free(fs);
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_relink");
}
