/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_hnext.c - a lock-free reader standing on an entry that a rename
 * moves into another chain must see that chain's entries initialised.
 *
 * dc_rename re-links the moved entry d at the head of its new chain, so
 * d->hnext now points at entries the reader never reached through a bucket
 * head.  The renaming thread saw their initialisation through the write
 * lock; its store of d->hnext has to pass that on (a release store, paired
 * with the reader's acquire load), or the reader reads their fields with no
 * happens-before edge to the thread that wrote them.  Harmless on x86, a
 * data race in C11, and what ThreadSanitizer once reported from the
 * general torture in CI (dc__find_rcu reading the name of an entry that
 * dc_rmdir had just allocated), too rarely to catch on demand.
 *
 * This stages that interleaving exactly, reaching into the table for it:
 *  1. the reader holds d (A/m) inside its read-side section;
 *  2. the writer creates B/q, with q chosen so that (B, q) and (B, m) share
 *     a bucket: the new entry h heads the chain d is about to join;
 *  3. the writer renames A/m to B/m: d->hnext = h;
 *  4. the reader follows d->hnext and reads h.
 * The two threads signal each other with relaxed atomics, which give
 * ThreadSanitizer no ordering: the only edge from h's initialisation to
 * the reader is d->hnext.  In the TSan build (make check) a missing release
 * is reported as a race and fails the test; every build checks that the
 * reader reached h and read its name right.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dcache.h"
#include "harness.h"
#include "../src/internal.h"

static struct dc_cache *cache;
static struct dc_dentry *d;		/* A/m, the entry that moves */
static char qname[16];			/* B/q shares a bucket with B/m */
static int ready, moved;		/* relaxed hand-shakes, see above */

static void *reader(void *arg)
{
	struct dc_dentry *h;
	struct dc_stat st;

	(void)arg;
	dc_resolve(cache, NULL, "/a", 0, &st);	/* registers with liburcu */
	rcu_lock();
	__atomic_store_n(&ready, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&moved, __ATOMIC_RELAXED))
		;
	/* acquire, as dc__find_rcu walks a chain */
	h = LOAD_ACQ(d->hnext);
	CHECK(h != NULL);
	if (h) {
		CHECK_EQ(LOAD(h->hash), dc__hash_name(qname, strlen(qname)));
		CHECK(dc__name_eq(LOAD_ACQ(h->name), qname, strlen(qname)));
	}
	rcu_unlock();
	return NULL;
}

/* memfs and cache: a name added to directory (ino, entry) */
static void add(struct dc_memfs *fs, uint64_t dino, struct dc_dentry *dir,
		const char *name, uint32_t mode, struct dc_inode *in)
{
	CHECK_EQ(dc_memfs_add(fs, dino, name, mode, NULL, in), 0);
	CHECK_EQ((dc__is_dir(mode) ? dc_mkdir : dc_create)(cache, dir, name, in), 0);
}

int main(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = 64 };
	struct dc_dentry *root, *a = NULL, *b = NULL;
	struct dc_inode ia, ib, in;
	struct dc_memfs *fs;
	uint32_t hm;
	pthread_t t;
	int i;

	if (dc_memfs_new(&fs) || (o.backend = dc_memfs_backend(fs),
				  dc_cache_create(&o, &cache))) {
		fprintf(stderr, "test_hnext: cannot create the cache\n");
		return 1;
	}
	root = dc_root(cache);
	add(fs, DC_MEMFS_ROOT, root, "a", S_IFDIR | 0755, &ia);
	add(fs, DC_MEMFS_ROOT, root, "b", S_IFDIR | 0755, &ib);
	CHECK_EQ(dc_lookup(cache, root, "a", 1, &a), 0);
	CHECK_EQ(dc_lookup(cache, root, "b", 1, &b), 0);
	add(fs, ia.ino, a, "m", S_IFREG | 0644, &in);
	CHECK_EQ(dc_lookup(cache, a, "m", 1, &d), 0);
	dc_put(cache, d);	/* still hashed; the reader reads it under RCU */

	hm = dc__hash_name("m", 1);
	for (i = 0; i < 100000; i++) {
		snprintf(qname, sizeof(qname), "q%d", i);
		if (dc__bucket(cache, b, dc__hash_name(qname, strlen(qname))) ==
		    dc__bucket(cache, b, hm))
			break;
	}
	CHECK(i < 100000);

	pthread_create(&t, NULL, reader, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_RELAXED))
		;
	add(fs, ib.ino, b, qname, S_IFREG | 0644, &in);
	CHECK_EQ(dc_memfs_rename(fs, ia.ino, "m", ib.ino, "m", 0), 0);
	CHECK_EQ(dc_rename(cache, a, "m", b, "m", 0), 0);
	__atomic_store_n(&moved, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);

	CHECK_EQ(dc_debug_check(cache), 0);
	dc_put(cache, a);
	dc_put(cache, b);
	dc_put(cache, root);
	dc_cache_destroy(cache);
	dc_memfs_free(fs);
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_hnext");
}
