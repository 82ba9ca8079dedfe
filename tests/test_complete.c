/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_complete.c - complete directories (dc_options.complete_after, the
 * backend's readdir).  In each mode:
 *
 *  - after complete_after names the backend answered -ENOENT in one
 *    directory, the cache lists it once, and then answers names that are
 *    not there without a backend lookup, while names that are there still
 *    resolve (and "." and ".." keep their meaning);
 *  - a change of one name the cache is told of keeps the listing with the
 *    name taken in (an update through the cache: create, unlink, rename
 *    in; dc_invalidate_child, dc_invalidate_name, a file's
 *    dc_invalidate_inode): the name is found, other names are still
 *    answered from the listing;
 *  - a change the cache cannot name drops it (an attribute change of the
 *    directory, dc_invalidate_dir, dc_invalidate_all): the new name is
 *    found, and names that are not there go to the backend again;
 *  - a directory made through the cache (dc_mkdir) is listed at once, a
 *    name made in it before the update included;
 *  - a told name that cannot join the listing (no memory) drops it; a
 *    name told through a handle cached nowhere any more reaches the live
 *    listing; dc_invalidate_all that cannot make a new root drops the
 *    root's; a directory under two names (a bind mount): an update
 *    through one reaches the other's listing, and one through a
 *    forgotten second name of the root reaches the root's; with no
 *    listings, an update through one leaves no answer for the name
 *    under the other, not even one a miss in flight there brings back,
 *    a rename between the two leaves the cache consistent, and
 *    dc_invalidate of one forgets what the other holds;
 *  - a change told while readdir is in flight: that listing is not kept;
 *    a name made untold and found by a miss while it is read, or by one
 *    that asked before the listing and answered after its install: the
 *    listing takes it in, so it is not denied once evicted;
 *  - no readdir, DC_COMPLETE_OFF, or a directory larger than complete_max:
 *    never listed (or never used); a readdir that fails: not used;
 *  - negative TTLs bound a listing's age like a negative entry's; a name
 *    a revalidation learned exists reaches the listing;
 *  - more directories than the records the cache keeps: still right;
 *  - hostfs lists a real directory, and refuses to list procfs, whose
 *    listing leaves threads out;
 *  - allocation failures: answers stay right, the cache consistent;
 *  - stress: readers against a writer that adds names behind the cache
 *    and tells it: once told, no reader gets -ENOENT for the name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcache-debug.h"
#include "harness.h"
#include "memfs_tree.h"

/* memfs's ops with a readdir that can be held, failed or taken away. */
static struct dc_backend_ops ops;
static const struct dc_backend_ops *memfs_ops;
static int readdir_fail;			/* its error, 0: none */
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold, held;				/* hold readdir; one is held */
static int hold_late_only;		/* hold a lookup of "late", not readdir */

struct names {
	char name[64][16];
	int n;
};

static int keep_name(void *arg, const char *name, size_t len)
{
	struct names *k = arg;

	if (k->n == 64 || len >= sizeof(k->name[0]))
		return -E2BIG;
	memcpy(k->name[k->n], name, len);
	k->name[k->n++][len] = '\0';
	return 0;
}

/* Hold the next held call (hold_start), wait until one is held there
 * (hold_wait), and let it go on (hold_release). */
static void hold_start(void)
{
	pthread_mutex_lock(&hold_lock);
	hold = 1;
	pthread_mutex_unlock(&hold_lock);
}

static void hold_wait(void)
{
	pthread_mutex_lock(&hold_lock);
	while (!held)
		pthread_cond_wait(&hold_cv, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
}

static void hold_release(void)
{
	pthread_mutex_lock(&hold_lock);
	hold = 0;
	pthread_cond_broadcast(&hold_cv);
	pthread_mutex_unlock(&hold_lock);
}

/* Waits there while held (held_readdir and a held lookup). */
static void wait_while_held(void)
{
	pthread_mutex_lock(&hold_lock);
	if (hold) {
		held = 1;
		pthread_cond_broadcast(&hold_cv);
		while (hold)
			pthread_cond_wait(&hold_cv, &hold_lock);
		held = 0;
	}
	pthread_mutex_unlock(&hold_lock);
}

/*
 * Reads the directory first, then waits while held, then hands the names
 * on: a change made meanwhile is missing from the listing, so only the
 * cache's check for changes during readdir keeps its answer out.
 */
static int held_readdir(void *ctx, const struct dc_inode *dir,
			int (*emit)(void *arg, const char *name, size_t len),
			void *arg)
{
	struct names k = { .n = 0 };
	int err;

	pthread_mutex_lock(&hold_lock);
	err = readdir_fail;
	if (!hold || hold_late_only) {
		pthread_mutex_unlock(&hold_lock);
		return err ? err : memfs_ops->readdir(ctx, dir, emit, arg);
	}
	pthread_mutex_unlock(&hold_lock);
	err = memfs_ops->readdir(ctx, dir, keep_name, &k);
	if (err)
		return err;
	wait_while_held();
	pthread_mutex_lock(&hold_lock);
	err = readdir_fail;
	pthread_mutex_unlock(&hold_lock);
	for (int i = 0; i < k.n && !err; i++)
		err = emit(arg, k.name[i], strlen(k.name[i]));
	return err;
}

/* A lookup of "late" waits while held with hold_late_only, then asks. */
static int held_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		       size_t len, struct dc_inode *out)
{
	int only;

	pthread_mutex_lock(&hold_lock);
	only = hold_late_only;
	pthread_mutex_unlock(&hold_lock);
	if (only && len == 4 && !memcmp(name, "late", 4))
		wait_while_held();
	return memfs_ops->lookup(ctx, dir, name, len, out);
}

static struct dc_backend backend(bool with_readdir)
{
	struct dc_backend b = dc_memfs_backend(fs);

	memfs_ops = b.ops;
	ops = *b.ops;
	ops.lookup = held_lookup;
	ops.readdir = with_readdir ? held_readdir : NULL;
	b.ops = &ops;
	return b;
}

static struct dc_cache *open_cache(enum dc_mode mode, bool with_readdir,
				   uint32_t after, uint32_t max, uint32_t neg_ttl)
{
	struct dc_options o = {
		.mode = mode, .backend = backend(with_readdir),
		.complete_after = after, .complete_max = max,
		.neg_ttl_ms = neg_ttl,
	};
	struct dc_cache *c = NULL;

	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

/* The answer for path: its inode number, or -errno. */
static int64_t res(struct dc_cache *c, const char *path)
{
	struct dc_inode st;
	int err = dc_resolve(c, NULL, path, 0, &st);

	return err ? err : (int64_t)st.ino;
}

static struct dc_stats stats(struct dc_cache *c)
{
	struct dc_stats st;

	dc_get_stats(c, &st);
	return st;
}

/* Resolve n names /dir/<prefix>N that are not there; each gives -ENOENT. */
static void miss_names(struct dc_cache *c, const char *dir, const char *prefix,
		       int from, int n)
{
	char path[64];

	for (int i = from; i < from + n; i++) {
		snprintf(path, sizeof(path), "/%s/%s%d", dir, prefix, i);
		CHECK_EQ(res(c, path), -ENOENT);
	}
}

/* /d with files f0..f9: ino of /d */
static uint64_t make_tree(void)
{
	char name[16];
	uint64_t d;

	fresh_fs();
	d = add(DC_MEMFS_ROOT, "d", DIR_M, NULL);
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		add(d, name, REG_M, NULL);
	}
	add(d, "sub", DIR_M, NULL);
	return d;
}

/* Make /d complete in c: complete_after (2 here) misses, then one list. */
static void make_complete(struct dc_cache *c, const char *prefix)
{
	uint64_t r = stats(c).readdirs;

	miss_names(c, "d", prefix, 0, 2);
	CHECK_EQ(stats(c).readdirs, r + 1);
}

/* Names not there cost no backend lookup; names there resolve. */
static void check_answers_from_listing(struct dc_cache *c, const char *prefix)
{
	struct dc_stats a = stats(c), b;

	miss_names(c, "d", prefix, 100, 50);
	b = stats(c);
	CHECK_EQ(b.negative_misses, a.negative_misses);
	CHECK_EQ(b.complete_answers, a.complete_answers + 50);
	CHECK(res(c, "/d/f3") > 0);
	CHECK(res(c, "/d/sub") > 0);
	CHECK_EQ(res(c, "/d/."), res(c, "/d"));
	CHECK_EQ(res(c, "/d/sub/.."), res(c, "/d"));
}

/* The listing is gone: a name not there goes to the backend. */
static void check_listing_dropped(struct dc_cache *c, const char *prefix)
{
	struct dc_stats a = stats(c);

	miss_names(c, "d", prefix, 200, 1);
	CHECK_EQ(stats(c).negative_misses, a.negative_misses + 1);
	CHECK_EQ(stats(c).complete_answers, a.complete_answers);
}

static void test_basic(enum dc_mode m)
{
	struct dc_cache *c;
	struct dc_stats st;

	make_tree();
	c = open_cache(m, true, 2, 0, 0);
	miss_names(c, "d", "a", 0, 1);
	CHECK_EQ(stats(c).readdirs, 0);		/* one miss: not yet */
	miss_names(c, "d", "a", 1, 1);
	CHECK_EQ(stats(c).readdirs, 1);
	check_answers_from_listing(c, "a");
	/* the same missing names again: cached negatives, no backend */
	st = stats(c);
	miss_names(c, "d", "a", 100, 50);
	CHECK_EQ(stats(c).negative_misses, st.negative_misses);
	CHECK_EQ(stats(c).readdirs, 1);
	close_last_cache(c);
}

/* An empty directory: listed (nothing in it), then every name answered. */
static void test_empty(enum dc_mode m)
{
	struct dc_cache *c;

	fresh_fs();
	add(DC_MEMFS_ROOT, "e", DIR_M, NULL);
	c = open_cache(m, true, 1, 0, 0);
	miss_names(c, "e", "a", 0, 1);
	CHECK_EQ(stats(c).readdirs, 1);
	miss_names(c, "e", "a", 1, 10);
	CHECK_EQ(stats(c).complete_answers, 10);
	CHECK_EQ(stats(c).negative_misses, 1);
	close_last_cache(c);
}

/*
 * A change of a name the cache is told of keeps the listing, with the name
 * taken in: the name is found, others are still answered from it.
 */
static void test_told(enum dc_mode m)
{
	struct dc_dentry *d, *r;
	struct dc_inode in;
	struct dc_cache *c;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/d", 0, &d), 0);
	CHECK_EQ(dc_walk(c, NULL, "/", 0, &r), 0);
	make_complete(c, "b");

	/* behind the cache, then told by name in the directory */
	x = add(dino, "new1", REG_M, NULL);
	CHECK_EQ(dc_invalidate_child(c, dino, 0, "new1", 4), 0);
	CHECK_EQ(res(c, "/d/new1"), (int64_t)x);
	check_answers_from_listing(c, "b1-");

	/* through the cache: create, then unlink */
	x = add(dino, "new2", REG_M, NULL);
	CHECK_EQ(dc_memfs_lookup(fs, dino, "new2", &in), 0);
	CHECK_EQ(dc_create(c, d, "new2", &in), 0);
	CHECK_EQ(res(c, "/d/new2"), (int64_t)x);
	check_answers_from_listing(c, "b2-");
	CHECK_EQ(dc_memfs_remove(fs, dino, "new2", 0), 0);
	CHECK_EQ(dc_unlink(c, d, "new2"), 0);
	CHECK_EQ(res(c, "/d/new2"), -ENOENT);
	check_answers_from_listing(c, "b3-");

	/* told by name with the entry in hand */
	x = add(dino, "new3", REG_M, NULL);
	CHECK_EQ(dc_invalidate_name(c, d, "new3"), 0);
	CHECK_EQ(res(c, "/d/new3"), (int64_t)x);
	check_answers_from_listing(c, "b4-");

	/* a rename into /d */
	x = add(DC_MEMFS_ROOT, "outside", REG_M, NULL);
	CHECK_EQ(dc_memfs_rename(fs, DC_MEMFS_ROOT, "outside", dino, "moved", 0), 0);
	CHECK_EQ(dc_rename(c, r, "outside", d, "moved", 0), 0);
	CHECK_EQ(res(c, "/d/moved"), (int64_t)x);
	check_answers_from_listing(c, "b5-");

	/* a file's own attributes changed: its name is forgotten, still there */
	CHECK_EQ(dc_invalidate_inode(c, x, 0), 0);
	CHECK_EQ(res(c, "/d/moved"), (int64_t)x);
	check_answers_from_listing(c, "b6-");

	CHECK_EQ(stats(c).readdirs, 1);
	dc_put(c, r);
	dc_put(c, d);
	close_last_cache(c);
}

/*
 * A directory made through the cache is listed at once: names probed in
 * it cost no lookup.  One made behind first (between the backend's mkdir
 * and the update, by another thread) is in that listing.
 */
static void test_mkdir(enum dc_mode m)
{
	struct dc_dentry *r;
	struct dc_inode in;
	struct dc_cache *c;
	uint64_t x;

	make_tree();
	c = open_cache(m, true, 2, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/", 0, &r), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "out", DIR_M, NULL, &in), 0);
	x = add(in.ino, "early", REG_M, NULL);
	CHECK_EQ(dc_mkdir(c, r, "out", &in), 0);
	CHECK_EQ(stats(c).readdirs, 1);
	CHECK_EQ(res(c, "/out/early"), (int64_t)x);
	miss_names(c, "out", "p", 0, 20);
	CHECK_EQ(stats(c).negative_misses, 0);
	CHECK_EQ(stats(c).complete_answers, 20);
	dc_put(c, r);
	close_last_cache(c);

	/* off: nothing listed */
	make_tree();
	c = open_cache(m, true, DC_COMPLETE_OFF, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/", 0, &r), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "out", DIR_M, NULL, &in), 0);
	CHECK_EQ(dc_mkdir(c, r, "out", &in), 0);
	CHECK_EQ(stats(c).readdirs, 0);
	dc_put(c, r);
	close_last_cache(c);
}

/* A told name that cannot join the listing (no memory): the listing goes. */
static void test_told_nomem(enum dc_mode m)
{
	struct dc_dentry *d;
	struct dc_cache *c;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/d", 0, &d), 0);
	make_complete(c, "n");
	x = add(dino, "late", REG_M, NULL);
	dc_debug_fail_alloc(1, 0);		/* every allocation fails */
	CHECK_EQ(dc_invalidate_child(c, dino, 0, "late", 4), 0);
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(res(c, "/d/late"), (int64_t)x);
	dc_put(c, d);
	close_last_cache(c);
}

/* dc_invalidate of a name cached nowhere any more (its directory's entry
 * was forgotten and looked up again): the live listing still hears it. */
static void test_uncached_handle(enum dc_mode m)
{
	struct dc_dentry *f;
	struct dc_cache *c;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/d/f1", 0, &f), 0);
	CHECK_EQ(dc_memfs_remove(fs, dino, "f1", 0), 0);
	CHECK_EQ(dc_invalidate_dir(c, dino, 0), 0);	/* f1's parent forgotten */
	make_complete(c, "u");				/* a new /d, listed: no f1 */
	x = add(dino, "f1", REG_M, NULL);			/* f1 made again behind */
	CHECK_EQ(dc_invalidate(c, f), 0);		/* told through the old handle */
	CHECK_EQ(res(c, "/d/f1"), (int64_t)x);
	dc_put(c, f);
	close_last_cache(c);
}

/* When no new root can be made, dc_invalidate_all still drops the root's
 * listing. */
static void test_all_nomem(enum dc_mode m)
{
	struct dc_cache *c;
	uint64_t x;

	make_tree();
	c = open_cache(m, true, 2, 0, 0);
	miss_names(c, "", "r", 0, 2);
	CHECK_EQ(stats(c).readdirs, 1);
	x = add(DC_MEMFS_ROOT, "newroot", REG_M, NULL);
	dc_debug_fail_alloc(1, 0);
	CHECK_EQ(dc_invalidate_all(c), -ENOMEM);	/* and says so */
	CHECK(dc_debug_failed_allocs() > 0);
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(res(c, "/newroot"), (int64_t)x);
	close_last_cache(c);
}

/* ---- one directory under two names (a bind mount) -------------------------
 * The backend answers /b with /a's inode: an update through one name must
 * reach the other's listing. */
static int alias_lookup(void *ctx, const struct dc_inode *dir, const char *name,
			size_t len, struct dc_inode *out)
{
	if (dir->ino == DC_MEMFS_ROOT && len == 1 && name[0] == 'b')
		name = "a";
	return memfs_ops->lookup(ctx, dir, name, len, out);
}

/* A cache over a fresh tree holding directory /a, which lookup (one of
 * the above) also answers as /b. */
static struct dc_cache *open_alias_cache(enum dc_mode m, uint32_t complete_after,
					 int (*lookup)(void *, const struct dc_inode *,
						       const char *, size_t,
						       struct dc_inode *),
					 uint64_t *aino)
{
	struct dc_options o = { .mode = m, .complete_after = complete_after };
	struct dc_cache *c = NULL;

	fresh_fs();
	*aino = add(DC_MEMFS_ROOT, "a", DIR_M, NULL);
	o.backend = backend(true);
	ops.lookup = lookup;
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

static void test_alias(enum dc_mode m)
{
	struct dc_dentry *a;
	struct dc_inode in;
	struct dc_cache *c;
	uint64_t aino;

	c = open_alias_cache(m, 1, alias_lookup, &aino);
	CHECK_EQ(res(c, "/a"), (int64_t)aino);
	CHECK_EQ(res(c, "/b"), (int64_t)aino);
	CHECK_EQ(res(c, "/b/x"), -ENOENT);		/* lists /b */
	CHECK_EQ(res(c, "/a/x"), -ENOENT);		/* lists /a */
	CHECK_EQ(stats(c).readdirs, 2);
	CHECK_EQ(dc_walk(c, NULL, "/a", 0, &a), 0);
	CHECK_EQ(dc_memfs_add(fs, aino, "y", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(c, a, "y", &in), 0);
	CHECK_EQ(res(c, "/a/y"), (int64_t)in.ino);
	CHECK_EQ(res(c, "/b/y"), (int64_t)in.ino);
	dc_put(c, a);
	close_last_cache(c);
}

/* The same directory's names under its other entry: an update through
 * /a must not leave /b answering as before, and a rename between the two
 * entries of one directory must leave the cache consistent. */
static void test_alias_names(enum dc_mode m)
{
	struct dc_dentry *a, *b, *s;
	struct dc_inode in, z;
	struct dc_cache *c;
	uint64_t aino;

	c = open_alias_cache(m, DC_COMPLETE_OFF, alias_lookup, &aino);
	CHECK_EQ(dc_walk(c, NULL, "/a", 0, &a), 0);
	CHECK_EQ(dc_walk(c, NULL, "/b", 0, &b), 0);
	CHECK(a != b);

	/* a create through one: the other's negative entry goes */
	CHECK_EQ(res(c, "/b/y"), -ENOENT);
	CHECK_EQ(res(c, "/a/y"), -ENOENT);
	CHECK_EQ(dc_memfs_add(fs, aino, "y", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(c, a, "y", &in), 0);
	CHECK_EQ(res(c, "/a/y"), (int64_t)in.ino);
	CHECK_EQ(res(c, "/b/y"), (int64_t)in.ino);

	/* an unlink through the other: the first's positive entry goes */
	CHECK_EQ(dc_memfs_remove(fs, aino, "y", 0), 0);
	CHECK_EQ(dc_unlink(c, b, "y"), 0);
	CHECK_EQ(res(c, "/b/y"), -ENOENT);
	CHECK_EQ(res(c, "/a/y"), -ENOENT);

	/* a rename from one entry to the other under the same name, which
	 * rename(2) leaves as it is, then under a new name */
	CHECK_EQ(dc_memfs_add(fs, aino, "z", REG_M, NULL, &z), 0);
	CHECK_EQ(res(c, "/a/z"), (int64_t)z.ino);
	CHECK_EQ(dc_rename(c, a, "z", b, "z", 0), 0);
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(res(c, "/a/z"), (int64_t)z.ino);
	CHECK_EQ(res(c, "/b/z"), (int64_t)z.ino);
	CHECK_EQ(dc_memfs_rename(fs, aino, "z", aino, "w", 0), 0);
	CHECK_EQ(dc_rename(c, a, "z", b, "w", 0), 0);
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(res(c, "/a/z"), -ENOENT);
	CHECK_EQ(res(c, "/b/z"), -ENOENT);
	CHECK_EQ(res(c, "/a/w"), (int64_t)z.ino);
	CHECK_EQ(res(c, "/b/w"), (int64_t)z.ino);

	/* a directory made behind the cache where the other entry holds
	 * its name as absent; forgetting it through the one forgets that */
	CHECK_EQ(res(c, "/b/s"), -ENOENT);
	CHECK_EQ(dc_memfs_add(fs, aino, "s", S_IFDIR | 0755, NULL, &in), 0);
	CHECK_EQ(dc_walk(c, NULL, "/a/s", 0, &s), 0);
	CHECK_EQ(dc_invalidate(c, s), 0);
	dc_put(c, s);
	CHECK_EQ(res(c, "/b/s"), (int64_t)in.ino);

	/* a change behind the cache, then the directory forgotten through
	 * one entry: forgotten under the other too */
	CHECK_EQ(dc_memfs_remove(fs, aino, "w", 0), 0);
	CHECK_EQ(dc_invalidate(c, a), 0);
	CHECK_EQ(res(c, "/b/w"), -ENOENT);
	CHECK_EQ(res(c, "/a/w"), -ENOENT);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_put(c, a);
	dc_put(c, b);
	close_last_cache(c);
}

/* An invalidation by inode visits every entry of it: /a/f and /b/f (one
 * name under two entries of a directory) and /c/g, a hard link, all
 * answer the new mode after it. */
static void test_alias_inode(enum dc_mode m)
{
	struct dc_inode f, st;
	struct dc_cache *c;
	uint64_t aino, cino;
	const char *paths[] = { "/c/g", "/b/f", "/a/f" };

	c = open_alias_cache(m, DC_COMPLETE_OFF, alias_lookup, &aino);
	cino = add(DC_MEMFS_ROOT, "c", DIR_M, NULL);
	CHECK_EQ(dc_memfs_add(fs, aino, "f", REG_M, NULL, &f), 0);
	CHECK_EQ(dc_memfs_link(fs, f.ino, cino, "g", NULL), 0);
	/* cached in this order, so the inode's index chain runs /a/f, /b/f,
	 * /c/g: forgetting one name must not lose the walk's place */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(res(c, paths[i]), (int64_t)f.ino);
	CHECK_EQ(dc_memfs_chmod(fs, f.ino, 0600), 0);
	CHECK_EQ(dc_invalidate_inode(c, f.ino, f.gen), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(dc_resolve(c, NULL, paths[i], 0, &st), 0);
		CHECK_EQ(st.mode & 07777, 0600u);
	}
	CHECK_EQ(dc_debug_check(c), 0);
	close_last_cache(c);
}

/* A lookup of "q" under /b that the backend answered before a create of
 * q told through /a, and that returns after it: not cached. */
static int alias_hold_lookup(void *ctx, const struct dc_inode *dir,
			     const char *name, size_t len, struct dc_inode *out)
{
	int err = alias_lookup(ctx, dir, name, len, out);

	if (len == 1 && name[0] == 'q')
		wait_while_held();
	return err;
}

/* A thread's resolve of path. */
struct resolver {
	struct dc_cache *c;
	const char *path;
	int64_t answer;
};

static void *resolve_in_thread(void *arg)
{
	struct resolver *r = arg;

	r->answer = res(r->c, r->path);
	return NULL;
}

static void test_alias_in_flight(enum dc_mode m)
{
	struct resolver q = { .path = "/b/q" };
	struct dc_dentry *a;
	struct dc_inode in;
	pthread_t t;
	uint64_t aino;

	q.c = open_alias_cache(m, DC_COMPLETE_OFF, alias_hold_lookup, &aino);
	CHECK_EQ(dc_walk(q.c, NULL, "/a", 0, &a), 0);
	CHECK_EQ(res(q.c, "/b"), (int64_t)aino);
	hold_start();
	CHECK_EQ(pthread_create(&t, NULL, resolve_in_thread, &q), 0);
	hold_wait();
	CHECK_EQ(dc_memfs_add(fs, aino, "q", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(q.c, a, "q", &in), 0);
	hold_release();
	pthread_join(t, NULL);
	CHECK_EQ(q.answer, -ENOENT);	/* asked before the create */
	CHECK_EQ(res(q.c, "/b/q"), (int64_t)in.ino);
	dc_put(q.c, a);
	close_last_cache(q.c);
}

/* The backend answers /r with the root: an update through a handle on /r
 * that the cache has forgotten must reach the root's listing, the root
 * being the only live entry for that directory. */
static int root_alias_lookup(void *ctx, const struct dc_inode *dir,
			     const char *name, size_t len, struct dc_inode *out)
{
	if (dir->ino == DC_MEMFS_ROOT && len == 1 && name[0] == 'r')
		return memfs_ops->root(ctx, out);
	return memfs_ops->lookup(ctx, dir, name, len, out);
}

static void test_root_alias(enum dc_mode m)
{
	struct dc_options o = { .mode = m, .complete_after = 1 };
	struct dc_dentry *r, *root;
	struct dc_inode in;
	struct dc_cache *c = NULL;

	fresh_fs();
	o.backend = backend(true);
	ops.lookup = root_alias_lookup;
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	CHECK_EQ(res(c, "/r"), (int64_t)DC_MEMFS_ROOT);
	CHECK_EQ(dc_walk(c, NULL, "/r", 0, &r), 0);
	CHECK_EQ(res(c, "/x"), -ENOENT);		/* lists the root */
	CHECK_EQ(stats(c).readdirs, 1);
	root = dc_root(c);
	CHECK_EQ(dc_invalidate_name(c, root, "r"), 0);
	dc_put(c, root);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "y", REG_M, NULL, &in), 0);
	CHECK_EQ(dc_create(c, r, "y", &in), 0);
	CHECK_EQ(res(c, "/y"), (int64_t)in.ino);
	CHECK_EQ(dc_memfs_remove(fs, DC_MEMFS_ROOT, "y", 0), 0);
	CHECK_EQ(dc_unlink(c, r, "y"), 0);
	CHECK_EQ(res(c, "/y"), -ENOENT);
	dc_put(c, r);
	close_last_cache(c);
}

/* A change the cache cannot name drops the listing. */
static void test_untold(enum dc_mode m)
{
	struct dc_cache *c;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);

	/* the directory's attributes changed (its mtime, say) */
	make_complete(c, "h");
	x = add(dino, "new4", REG_M, NULL);
	CHECK_EQ(dc_invalidate_inode(c, dino, 0), 0);
	CHECK_EQ(res(c, "/d/new4"), (int64_t)x);
	check_listing_dropped(c, "h");

	/* its names changed, which unknown */
	make_complete(c, "i");
	x = add(dino, "new5", REG_M, NULL);
	CHECK_EQ(dc_invalidate_dir(c, dino, 0), 0);
	CHECK_EQ(res(c, "/d/new5"), (int64_t)x);
	check_listing_dropped(c, "i");

	/* anything changed */
	make_complete(c, "j");
	x = add(dino, "new6", REG_M, NULL);
	CHECK_EQ(dc_invalidate_all(c), 0);
	CHECK_EQ(res(c, "/d/new6"), (int64_t)x);
	check_listing_dropped(c, "j");
	close_last_cache(c);
}

/* A name made while readdir is in flight: the listing is not kept. */
static void test_race(enum dc_mode m)
{
	/* the second miss makes the count: this thread lists /d */
	struct resolver l = { .path = "/d/k1" };
	struct dc_cache *c;
	pthread_t t;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);
	l.c = c;
	miss_names(c, "d", "k", 0, 1);
	hold_start();
	CHECK_EQ(pthread_create(&t, NULL, resolve_in_thread, &l), 0);
	hold_wait();

	x = add(dino, "late", REG_M, NULL);
	CHECK_EQ(dc_invalidate_child(c, dino, 0, "late", 4), 0);

	hold_release();
	pthread_join(t, NULL);
	CHECK_EQ(l.answer, -ENOENT);
	CHECK_EQ(stats(c).readdirs, 1);
	CHECK_EQ(res(c, "/d/late"), (int64_t)x);
	check_listing_dropped(c, "k");
	close_last_cache(c);
}

/* /d's tree and a cache that lists a directory after 2 misses, with /d
 * held in *d (its record stays). */
static struct dc_cache *open_held_d(enum dc_mode m, struct dc_dentry **d,
				    uint64_t *dino)
{
	struct dc_cache *c;

	*dino = make_tree();
	c = open_cache(m, true, 2, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/d", 0, d), 0);
	return c;
}

/* /d/late (inode x) must be in /d's listing: evicted, it still resolves,
 * and the listing was kept.  Drops d and closes c. */
static void check_late_kept(struct dc_cache *c, struct dc_dentry *d,
			    uint64_t x, const char *prefix)
{
	CHECK(dc_shrink(c, 0) >= 0);			/* /d/late evicted */
	CHECK_EQ(res(c, "/d/late"), (int64_t)x);
	check_answers_from_listing(c, prefix);		/* and it was kept */
	dc_put(c, d);
	close_last_cache(c);
}

static void set_hold_late_only(int on)
{
	pthread_mutex_lock(&hold_lock);
	hold_late_only = on;
	pthread_mutex_unlock(&hold_lock);
}

/*
 * A name made behind the cache (nothing told) while readdir is in flight,
 * and found by a miss before the listing is installed: the listing, read
 * before the name was made, must not deny it once its entry is evicted.
 */
static void test_found_in_flight(enum dc_mode m)
{
	struct resolver l = { .path = "/d/k1" };
	struct dc_dentry *d;
	pthread_t t;
	uint64_t dino, x;

	l.c = open_held_d(m, &d, &dino);
	miss_names(l.c, "d", "k", 0, 1);
	hold_start();
	CHECK_EQ(pthread_create(&t, NULL, resolve_in_thread, &l), 0);
	hold_wait();
	x = add(dino, "late", REG_M, NULL);
	CHECK_EQ(res(l.c, "/d/late"), (int64_t)x);
	hold_release();
	pthread_join(t, NULL);
	CHECK_EQ(l.answer, -ENOENT);
	CHECK_EQ(stats(l.c).readdirs, 1);
	check_late_kept(l.c, d, x, "m");
}

/*
 * The same for a miss that asked the backend before the listing began and
 * answers after it was installed (a listing read before the name was
 * made).
 */
static void test_found_across_install(enum dc_mode m)
{
	struct resolver l = { .path = "/d/late" };
	struct dc_dentry *d;
	pthread_t t;
	uint64_t dino, x;

	l.c = open_held_d(m, &d, &dino);
	set_hold_late_only(1);
	hold_start();
	CHECK_EQ(pthread_create(&t, NULL, resolve_in_thread, &l), 0);
	hold_wait();
	make_complete(l.c, "n");	/* listed and installed meanwhile */
	x = add(dino, "late", REG_M, NULL);
	hold_release();
	pthread_join(t, NULL);
	set_hold_late_only(0);
	CHECK_EQ(l.answer, (int64_t)x);
	check_late_kept(l.c, d, x, "o");
}

/* Never listed, or never used. */
static void test_off(enum dc_mode m)
{
	struct dc_cache *c;

	make_tree();
	c = open_cache(m, false, 2, 0, 0);		/* no readdir */
	miss_names(c, "d", "a", 0, 20);
	CHECK_EQ(stats(c).readdirs, 0);
	CHECK_EQ(stats(c).negative_misses, 20);
	close_last_cache(c);

	c = open_cache(m, true, DC_COMPLETE_OFF, 0, 0);
	miss_names(c, "d", "a", 0, 20);
	CHECK_EQ(stats(c).readdirs, 0);
	CHECK_EQ(stats(c).negative_misses, 20);
	close_last_cache(c);

	/* 11 names, at most 8 listed: too big, asked once per change */
	c = open_cache(m, true, 2, 8, 0);
	miss_names(c, "d", "a", 0, 20);
	CHECK_EQ(stats(c).readdirs, 1);
	CHECK_EQ(stats(c).negative_misses, 20);
	CHECK_EQ(stats(c).complete_answers, 0);
	close_last_cache(c);

	/* a listing that fails is not used, and is tried again later */
	c = open_cache(m, true, 2, 0, 0);
	readdir_fail = -EIO;
	miss_names(c, "d", "a", 0, 4);
	readdir_fail = 0;
	CHECK_EQ(stats(c).readdirs, 2);
	CHECK_EQ(stats(c).negative_misses, 4);
	CHECK_EQ(stats(c).complete_answers, 0);
	make_complete(c, "z");
	check_answers_from_listing(c, "z");
	close_last_cache(c);

	/* the default: DC_DEFAULT_COMPLETE_AFTER misses */
	make_tree();
	c = open_cache(m, true, 0, 0, 0);
	miss_names(c, "d", "a", 0, DC_DEFAULT_COMPLETE_AFTER - 1);
	CHECK_EQ(stats(c).readdirs, 0);
	miss_names(c, "d", "a", 100, 1);
	CHECK_EQ(stats(c).readdirs, 1);
	CHECK(res(c, "d/f1") > 0);
	close_last_cache(c);
}

/* A negative TTL bounds the listing's answers like a negative entry's. */
static void test_ttl(enum dc_mode m)
{
	struct dc_cache *c;
	uint64_t dino, x;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 40);
	make_complete(c, "a");
	x = add(dino, "quiet", REG_M, NULL);		/* nobody tells the cache */
	CHECK_EQ(res(c, "/d/quiet"), -ENOENT);	/* as a negative entry would */
	h_sleep_ms(60);
	CHECK_EQ(res(c, "/d/quiet"), (int64_t)x);
	close_last_cache(c);
}

/*
 * A negative entry older than the listing expires first; asked again,
 * the backend says the name exists now (made behind the cache after the
 * listing).  What the revalidation learned must reach the listing: the
 * lookup answers the name, not -ENOENT from a listing that lacks it.
 */
static void test_ttl_learned(enum dc_mode m)
{
	struct dc_cache *c;
	uint64_t dino, x, answers;
	double listed;

	dino = make_tree();
	c = open_cache(m, true, 2, 0, 600);
	CHECK_EQ(res(c, "/d/early"), -ENOENT);		/* a negative entry at t0 */
	h_sleep_ms(300);
	listed = h_mono_s();
	CHECK_EQ(res(c, "/d/other"), -ENOENT);		/* listed at t0 + 300 */
	CHECK_EQ(stats(c).readdirs, 1);
	x = add(dino, "early", REG_M, NULL);		/* nobody tells the cache */
	h_sleep_ms(360);	/* the entry is past its TTL, the listing not */
	CHECK_EQ(res(c, "/d/early"), (int64_t)x);
	answers = stats(c).complete_answers;
	CHECK_EQ(res(c, "/d/never"), -ENOENT);
	/* the case needs the listing in use at that lookup: on a machine
	 * too slow to get here within its TTL, nothing was shown */
	if (h_mono_s() - listed < 0.6)
		CHECK_EQ(stats(c).complete_answers, answers + 1);
	else
		SKIP("a name learned by a revalidation: the listing expired first");
	close_last_cache(c);
}

/* More directories than records: each still right. */
static void test_many(enum dc_mode m)
{
	enum { NDIRS = 1500 };
	struct dc_cache *c;
	char name[32], path[64];
	int wrong = 0;

	fresh_fs();
	for (int i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		add(add(DC_MEMFS_ROOT, name, DIR_M, NULL), "here", REG_M, NULL);
	}
	c = open_cache(m, true, 1, 0, 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < NDIRS; i++) {
			snprintf(path, sizeof(path), "/d%d/no%d", i, round);
			wrong += res(c, path) != -ENOENT;
			snprintf(path, sizeof(path), "/d%d/here", i);
			wrong += res(c, path) <= 0;
		}
	CHECK_EQ(wrong, 0);
	CHECK(stats(c).readdirs >= NDIRS);
	close_last_cache(c);
}

/* Allocation failures: -ENOMEM or the truth, and a consistent cache. */
static void test_faults(enum dc_mode m)
{
	struct dc_cache *c;
	char path[64];
	int wrong = 0;

	make_tree();
	c = open_cache(m, true, 1, 0, 0);
	dc_debug_fail_alloc(-3, 777);
	for (int i = 0; i < 2000; i++) {
		int64_t r;

		snprintf(path, sizeof(path), "/d/%s%d", i % 7 ? "x" : "f", i % 13);
		r = res(c, path);
		if (r == -ENOMEM)
			continue;
		if (i % 7 == 0 && i % 13 < 10)
			wrong += r <= 0;
		else
			wrong += r != -ENOENT;
		if (i % 100 == 0)
			dc_invalidate_all(c);
	}
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(wrong, 0);
	close_last_cache(c);
}

static int skip_name(void *arg, const char *name, size_t len)
{
	(void)arg;
	(void)name;
	(void)len;
	return 0;
}

/*
 * hostfs does not list where a listing may leave names out: procfs lists
 * processes but finds threads too.  Every name there goes to the kernel.
 */
static void test_hostfs_proc(enum dc_mode m)
{
	struct dc_options o = { .mode = m, .complete_after = 1 };
	struct dc_cache *c = NULL;
	struct dc_inode st;
	int fd = open("/proc", O_RDONLY | O_DIRECTORY);

	CHECK(fd >= 0);
	CHECK_EQ(dc_readdir_fd(fd, skip_name, NULL), -EOPNOTSUPP);
	close(fd);
	CHECK_EQ(dc_readdir_fd(-1, skip_name, NULL), -EINVAL);
	CHECK_EQ(dc_hostfs_backend("/proc", &o.backend), 0);
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	CHECK_EQ(dc_resolve(c, NULL, "/no-such-name", 0, &st), -ENOENT);
	CHECK_EQ(dc_resolve(c, NULL, "/no-such-name2", 0, &st), -ENOENT);
	CHECK_EQ(stats(c).complete_answers, 0);
	CHECK_EQ(dc_resolve(c, NULL, "/self", DC_NOFOLLOW, &st), 0);
	close_last_cache(c);
}

/* hostfs lists a real directory. */
static void test_hostfs(enum dc_mode m)
{
	char dir[] = "/tmp/dc-complete-XXXXXX", path[128];
	struct dc_options o = { .mode = m, .complete_after = 2 };
	struct dc_cache *c = NULL;
	struct dc_inode st;
	int fd;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/a", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dc_readdir_fd(fd, skip_name, NULL) == -EOPNOTSUPP) {
		SKIP("hostfs does not list directories on this file system");
		close(fd);
		snprintf(path, sizeof(path), "%s/a", dir);
		unlink(path);
		rmdir(dir);
		return;
	}
	close(fd);
	CHECK_EQ(dc_hostfs_backend(dir, &o.backend), 0);
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	CHECK_EQ(dc_resolve(c, NULL, "/x1", 0, &st), -ENOENT);
	CHECK_EQ(dc_resolve(c, NULL, "/x2", 0, &st), -ENOENT);
	CHECK_EQ(stats(c).readdirs, 1);
	CHECK_EQ(dc_resolve(c, NULL, "/x3", 0, &st), -ENOENT);
	CHECK_EQ(stats(c).complete_answers, 1);
	CHECK_EQ(dc_resolve(c, NULL, "/a", 0, &st), 0);
	/* made behind the cache and told: found */
	snprintf(path, sizeof(path), "%s/x4", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(dc_resolve(c, NULL, "/", 0, &st), 0);
	CHECK_EQ(dc_invalidate_child(c, st.ino, st.gen, "x4", 2), 0);
	CHECK_EQ(dc_resolve(c, NULL, "/x4", 0, &st), 0);
	close_last_cache(c);
	unlink(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	unlink(path);
	rmdir(dir);
}

/* ---- stress ---------------------------------------------------------------
 *
 * The writer adds w0, w1, ... to /d behind the cache, tells the cache with
 * dc_invalidate_child, then publishes the count told.  A reader that reads
 * the count first and then resolves a told name must find it; names not
 * yet added must be -ENOENT (or found, if added since).
 */
static int told, stop;
static uint64_t stress_dir;

static void *stress_reader(void *arg)
{
	struct dc_cache *c = arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;
	char path[64];

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int n = __atomic_load_n(&told, __ATOMIC_ACQUIRE);
		int k = (int)(rand_r(&seed) % (unsigned)(n + 20));
		int64_t r;

		snprintf(path, sizeof(path), "/d/w%d", k);
		r = res(c, path);
		if (k < n)
			CHECK(r > 0);
		else
			CHECK(r > 0 || r == -ENOENT);
		CHECK(res(c, "/d/f3") > 0);
	}
	return NULL;
}

static void test_stress(enum dc_mode m)
{
	struct dc_cache *c;
	pthread_t r[2];
	char name[32];
	double end;

	stress_dir = make_tree();
	c = open_cache(m, true, 1, 0, 0);
	told = 0;
	stop = 0;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&r[i], NULL, stress_reader, c), 0);
	end = h_mono_s() + h_seconds() / 4;
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		add(stress_dir, name, REG_M, NULL);
		CHECK_EQ(dc_invalidate_child(c, stress_dir, 0, name, strlen(name)), 0);
		__atomic_store_n(&told, i + 1, __ATOMIC_RELEASE);
		h_sleep_ms(i % 4 ? 0 : 1);	/* room for listings between adds */
		if (h_mono_s() > end)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	/* and the listing still works once the names stop changing */
	miss_names(c, "d", "s", 0, 1);
	check_answers_from_listing(c, "s");
	close_last_cache(c);
}

int main(void)
{
	for (enum dc_mode m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		test_basic(m);
		test_empty(m);
		test_told(m);
		test_told_nomem(m);
		test_mkdir(m);
		test_uncached_handle(m);
		test_all_nomem(m);
		test_alias(m);
		test_root_alias(m);
		test_alias_names(m);
		test_alias_inode(m);
		test_alias_in_flight(m);
		test_untold(m);
		test_race(m);
		test_found_in_flight(m);
		test_found_across_install(m);
		test_off(m);
		test_ttl(m);
		test_ttl_learned(m);
		test_many(m);
		test_faults(m);
		test_hostfs(m);
		test_hostfs_proc(m);
		test_stress(m);
	}
	dc_memfs_free(fs);
	return h_done("test_complete");
}
