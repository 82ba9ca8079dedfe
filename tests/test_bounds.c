/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_bounds.c - the writer paths stay bounded: entries, negatives and
 * bytes within the caps, and the shrinker that keeps them there; hash
 * chains no longer than chance makes, whatever names are chosen; the
 * cost of forgetting a directory.  One case per way they can fail, over
 * the hooked memfs backend of writers.h (the races of writers against
 * readers are test_writers.c's):
 *
 *  dropped_bounded  lookups in a dropped directory, which allocate an entry
 *                   each, within the cap and the byte bound.
 *  unlink_bounded   an unlink storm (entries turning negative in place, on
 *                   the positive list) within max_negative.
 *  flooding         names made to share a chain -- against an unkeyed
 *                   hash, through a 64-bit multiply under any key, and by
 *                   search in one directory of one cache -- share none
 *                   anywhere else.
 *  forget_cost      forgetting a directory, and the root, unhashes no more
 *                   than itself; handles below and on a former root still
 *                   answer the backend's truth.
 *  held_isolated    the shrinker takes held entries off its lists, and
 *                   dc_put puts them back.
 *  check_explains   the check of those lists' counts says which is off
 *                   (dc_debug_check_why).
 *  negative_kept    a negative answered by the rcu-walk counts as used.
 *  shrinker_thread  a cache left a little over its cap is brought back
 *                   under it by its own thread, with no call to make it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "dcache-debug.h"
#include "flood.h"
#include "harness.h"
#include "writers.h"
#include "../src/internal.h"

/* ---- dropped_bounded and unlink_bounded: stress, threads ----------------- */

#define CAP	1000

/* The bound the cache documents (docs/design.md, "Bounded memory"), as
 * dcbench memstorm checks it: two entries' worth of bytes per capped
 * entry (evicted ones may wait for a grace period), the buckets, and
 * 4 MiB of slack for slab chunks and the allocator. */
static uint64_t bound_bytes(uint64_t cap)
{
	uint64_t buckets = 16;

	while (buckets < cap / 2)
		buckets *= 2;
	return cap * 128 * 2 + buckets * 8 + (4u << 20);
}

struct storm {
	struct dc_cache *c;
	struct dc_memfs *fs;
	struct dc_dentry *dir;
	uint64_t dir_ino;
	int id, n;
	uint64_t peak_entries, peak_bytes, peak_negative;
};

static void sample(struct storm *s)
{
	struct dc_stats st;

	dc_get_stats(s->c, &st);
	if (st.entries > s->peak_entries)
		s->peak_entries = st.entries;
	if (st.bytes > s->peak_bytes)
		s->peak_bytes = st.bytes;
	if (st.negative > s->peak_negative)
		s->peak_negative = st.negative;
}

static void *dropped_worker(void *arg)
{
	struct storm *s = arg;
	char name[32];
	int i;

	for (i = 0; i < s->n; i++) {
		struct dc_dentry *d = NULL;
		int err;

		snprintf(name, sizeof(name), "t%d-n%d", s->id, i);
		err = dc_lookup(s->c, s->dir, name, strlen(name), &d);
		if (i % 2 == 0) {	/* even names exist */
			CHECK_EQ(err, 0);
			if (!err)
				dc_put(s->c, d);
		} else {
			CHECK_EQ(err, -ENOENT);
		}
		if (i % 50 == 0)
			sample(s);
	}
	sample(s);
	return NULL;
}

static void test_dropped_bounded(enum dc_mode mode)
{
	struct storm s[2];
	struct dc_memfs *fs;
	struct dc_inode d, in;
	struct dc_dentry *hd;
	struct dc_stats st;
	struct dc_cache *c;
	struct hooked k;
	pthread_t t[2];
	char name[32];
	int i, j, n = 50000;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "d", S_IFDIR | 0755, NULL, &d), 0);
	for (j = 0; j < 2; j++)
		for (i = 0; i < n; i += 2) {
			snprintf(name, sizeof(name), "t%d-n%d", j, i);
			CHECK_EQ(dc_memfs_add(fs, d.ino, name, S_IFREG | 0644, NULL, &in), 0);
		}
	c = new_cache(fs, &k, mode, CAP, 0);
	CHECK_EQ(dc_walk(c, NULL, "d", 0, &hd), 0);
	CHECK_EQ(dc_invalidate(c, hd), 0);	/* dropped, still held */
	for (j = 0; j < 2; j++) {
		s[j] = (struct storm){ .c = c, .fs = fs, .dir = hd, .id = j, .n = n };
		CHECK_EQ(pthread_create(&t[j], NULL, dropped_worker, &s[j]), 0);
	}
	for (j = 0; j < 2; j++)
		pthread_join(t[j], NULL);
	dc_get_stats(c, &st);
	CHECK(st.misses >= (uint64_t)2 * n);	/* nothing below hd was cached */
	for (j = 0; j < 2; j++) {
		/* the cap, an eighth over it at most (plus an entry a thread) */
		CHECK_EQ(s[j].peak_entries > CAP + CAP / 8 + 2 ? s[j].peak_entries : 0, 0);
		CHECK(s[j].peak_bytes <= bound_bytes(CAP));
	}
	dc_put(c, hd);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

static void *unlink_worker(void *arg)
{
	struct storm *s = arg;
	char name[32];
	int i;

	for (i = 0; i < s->n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(dc_memfs_remove(s->fs, s->dir_ino, name, 0), 0);
		CHECK_EQ(dc_unlink(s->c, s->dir, name), 0);
		if (i % 50 == 0)
			sample(s);
	}
	sample(s);
	return NULL;
}

static void test_unlink_bounded(enum dc_mode mode)
{
	enum { MAXNEG = 100, FILES = 5000 };
	struct dc_memfs *fs;
	struct dc_inode d[2], in;
	struct dc_dentry *hd[2];
	struct dc_stats st;
	struct dc_cache *c;
	struct storm s[2];
	struct hooked k;
	pthread_t t[2];
	char name[64];
	int i, j;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	c = NULL;
	for (j = 0; j < 2; j++) {
		snprintf(name, sizeof(name), "d%d", j);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFDIR | 0755, NULL, &d[j]), 0);
		for (i = 0; i < FILES; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			CHECK_EQ(dc_memfs_add(fs, d[j].ino, name, S_IFREG | 0644, NULL, &in), 0);
		}
	}
	c = new_cache(fs, &k, mode, 100000, MAXNEG);
	for (j = 0; j < 2; j++) {
		snprintf(name, sizeof(name), "d%d", j);
		CHECK_EQ(dc_walk(c, NULL, name, 0, &hd[j]), 0);
		for (i = 0; i < FILES; i++) {	/* every file cached, positive */
			snprintf(name, sizeof(name), "d%d/f%d", j, i);
			CHECK_EQ(resolve(c, name, 0, NULL), 0);
		}
	}
	for (j = 0; j < 2; j++) {
		s[j] = (struct storm){ .c = c, .fs = fs, .dir = hd[j], .dir_ino = d[j].ino,
				       .id = j, .n = FILES };
		CHECK_EQ(pthread_create(&t[j], NULL, unlink_worker, &s[j]), 0);
	}
	for (j = 0; j < 2; j++)
		pthread_join(t[j], NULL);
	/* once the shrinker thread has run */
	CHECK(h_within_caps(c, UINT64_MAX, MAXNEG));
	/* the shrinker counts its evictions just after it dropped the
	 * entries (the count above fell first): give it the moment */
	for (i = 0; i < 10000; i++) {
		dc_get_stats(c, &st);
		if (st.evictions >= 2 * FILES - MAXNEG)
			break;
		h_sleep_ms(1);
	}
	CHECK(st.evictions >= 2 * FILES - MAXNEG);
	for (j = 0; j < 2; j++)
		CHECK_EQ(s[j].peak_negative > MAXNEG + MAXNEG / 8 + 2 ?
			 s[j].peak_negative : 0, 0);
	/* and every answer is still the truth */
	for (i = 0; i < FILES; i += 97) {
		snprintf(name, sizeof(name), "d1/f%d", i);
		CHECK_EQ(resolve(c, name, 0, NULL), -ENOENT);
	}
	for (j = 0; j < 2; j++)
		dc_put(c, hd[j]);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

/* ---- flooding ------------------------------------------------------------ */

/*
 * n names that share a bucket in directory dir of cache c, found by trying
 * names against its own hash: what an attacker who could watch the
 * table would find.
 */
static void craft_bucket(struct dc_cache *c, struct dc_dentry *dir,
			 char (*names)[9], int n)
{
	size_t want = dc__bucket_index(dc__hash_name(c, dir, "base0000", 8), c->shift);
	uint64_t t;
	int i = 0;

	for (t = 0; i < n; t++) {
		char name[9];

		snprintf(name, sizeof(name), "%08llx", (unsigned long long)t);
		if (dc__bucket_index(dc__hash_name(c, dir, name, 8), c->shift) == want)
			memcpy(names[i++], name, 9);
	}
}

/*
 * The keyed hash of whole paths takes long inputs 16 bytes per product:
 * inputs that differ only in the order of their words must still hash
 * apart, whatever the key (a product commutes; the masks must not).
 */
static void test_hash_word_order(void)
{
	char a[96], b[96];
	struct dc_hkey k;
	uint64_t t = 0x1234567;

	for (int round = 0; round < 64; round++) {
		k.k0 = (t = t * 6364136223846793005ull + 1442695040888963407ull);
		k.k1 = (t = t * 6364136223846793005ull + 1442695040888963407ull);
		for (size_t i = 0; i < sizeof(a); i++)
			a[i] = (char)('a' + (t = t * 6364136223846793005ull + 1) % 26);
		for (size_t len = 32; len <= sizeof(a); len += 16) {
			/* swap each pair of adjacent words in turn */
			for (size_t w = 0; w + 16 <= len; w += 8) {
				memcpy(b, a, len);
				memcpy(b + w, a + w + 8, 8);
				memcpy(b + w + 8, a + w, 8);
				if (!memcmp(a, b, len))
					continue;
				CHECK(dc__hash_bytes(&k, a, len) != dc__hash_bytes(&k, b, len));
			}
		}
	}
}

static uint64_t longest_chain(struct dc_cache *c)
{
	uint64_t i, n, most = 0;
	struct dc_dentry *d;

	for (i = 0; i < c->nbuckets; i++) {
		for (n = 0, d = c->buckets[i]; d; d = d->hnext)
			n++;
		if (n > most)
			most = n;
	}
	return most;
}

/* Add every name (size bytes apart) to directory path (ino dino) and
 * cache it. */
static void add_all(struct dc_memfs *fs, struct dc_cache *c, uint64_t dino,
		    const char *path, const char *names, size_t size, int n)
{
	struct dc_dentry *dir;
	struct dc_inode in;
	char p[300];
	int i;

	CHECK_EQ(dc_walk(c, NULL, path, 0, &dir), 0);
	for (i = 0; i < n; i++) {
		const char *name = names + (size_t)i * size;

		if (dc_memfs_lookup(fs, dino, name, &in) != 0)	/* another cache's */
			CHECK_EQ(dc_memfs_add(fs, dino, name, S_IFREG | 0644, NULL, &in), 0);
		CHECK_EQ(dc_create(c, dir, name, &in), 0);
		snprintf(p, sizeof(p), "%s/%s", path, name);
		CHECK_EQ(resolve(c, p, 0, NULL), 0);
	}
	dc_put(c, dir);
}

static void test_flooding(void)
{
	enum { N = 2000, ND = 2048, NB = 400 };
	static char names[N][DCB_FLOOD_SHORT + 1], diff[ND][DCB_FLOOD_LONG + 1];
	static char mates[NB][9];
	struct dc_memfs *fs;
	struct dc_inode a, b, e;
	struct dc_dentry *de;
	struct dc_cache *c, *c2;
	struct hooked k, k2;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL, &a), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "b", S_IFDIR | 0755, NULL, &b), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "e", S_IFDIR | 0755, NULL, &e), 0);
	c = new_cache(fs, &k, DC_MODE_RCU, 1 << 16, 0);
	c2 = new_cache(fs, &k2, DC_MODE_RCU, 1 << 16, 0);

	/* names computed ahead of time: no chain longer than chance makes
	 * (about 4,000 names over 32,768 buckets: 8 is already rare) */
	dcb_flood_unkeyed(names[0], N);
	add_all(fs, c, a.ino, "a", names[0], sizeof(names[0]), N);
	CHECK(longest_chain(c) <= 8);
	dcb_flood_differential(diff[0], ND);
	add_all(fs, c, b.ino, "b", diff[0], sizeof(diff[0]), ND);
	CHECK(longest_chain(c) <= 8);

	/* names found to share a bucket in directory e of c: they do there
	 * (the search worked), and not in the same directory of another cache */
	CHECK_EQ(dc_walk(c, NULL, "e", 0, &de), 0);
	craft_bucket(c, de, mates, NB);
	dc_put(c, de);
	add_all(fs, c2, e.ino, "e", mates[0], sizeof(mates[0]), NB);
	CHECK(longest_chain(c2) <= 8);
	add_all(fs, c, e.ino, "e", mates[0], sizeof(mates[0]), NB);
	CHECK(longest_chain(c) >= NB);
	CHECK(memcmp(&c->hkey, &c2->hkey, sizeof(c->hkey)) != 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_cache_destroy(c2);
	dc_memfs_free(fs);
}

/* ---- forget_cost: forgetting a directory costs O(1) ------------------------ */

static uint64_t hashed_entries(struct dc_cache *c)
{
	uint64_t i, n = 0;
	struct dc_dentry *d;

	for (i = 0; i < c->nbuckets; i++)
		for (d = c->buckets[i]; d; d = d->hnext)
			n++;
	return n;
}

/*
 * dc_invalidate of a directory with 5,000 names cached below it, one of
 * them a directory held: only the directory itself is unhashed (no pass
 * over the table or the subtree); what is below is an orphan, and every
 * answer through the held handle is still the backend's.
 */
static void test_forget_cost(enum dc_mode mode)
{
	struct dc_memfs *fs;
	struct dc_inode d, s, in;
	struct dc_dentry *hd, *hs, *hr;
	struct dc_inode st;
	struct dc_cache *c;
	struct hooked k;
	char name[32];
	uint64_t before;
	int i;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "d", S_IFDIR | 0755, NULL, &d), 0);
	CHECK_EQ(dc_memfs_add(fs, d.ino, "s", S_IFDIR | 0755, NULL, &s), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(dc_memfs_add(fs, s.ino, name, S_IFREG | 0644, NULL, &in), 0);
	}
	c = new_cache(fs, &k, mode, 8000, 0);
	CHECK_EQ(dc_walk(c, NULL, "d", 0, &hd), 0);
	CHECK_EQ(dc_walk(c, NULL, "d/s", 0, &hs), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "d/s/f%d", i);
		CHECK_EQ(resolve(c, name, 0, NULL), 0);
	}
	before = hashed_entries(c);
	CHECK_EQ(dc_invalidate(c, hd), 0);
	CHECK_EQ(hashed_entries(c), before - 1);
	CHECK_EQ(dc_debug_check(c), 0);
	/* the held subdirectory learns nothing from its orphaned children */
	CHECK_EQ(dc_memfs_remove(fs, s.ino, "f7", 0), 0);
	CHECK_EQ(dc_resolve(c, hs, "f7", 0, &st), -ENOENT);
	CHECK_EQ(dc_resolve(c, hs, "f8", 0, &st), 0);
	CHECK_EQ(resolve(c, "d/s/f7", 0, NULL), -ENOENT);
	/* an update through it reaches the directory cached anew by path */
	CHECK_EQ(resolve(c, "d/s/f9", 0, NULL), 0);	/* cached anew */
	CHECK_EQ(dc_memfs_remove(fs, s.ino, "f9", 0), 0);
	CHECK_EQ(dc_unlink(c, hs, "f9"), 0);
	CHECK_EQ(resolve(c, "d/s/f9", 0, NULL), -ENOENT);
	CHECK_EQ(dc_resolve(c, hs, "f9", 0, &st), -ENOENT);
	dc_put(c, hs);
	dc_put(c, hd);
	CHECK_EQ(dc_shrink(c, 0) > 0, 1);	/* the orphans go like any entry */
	CHECK_EQ(dc_debug_check(c), 0);

	/* the root too: a new root, nothing unhashed, every answer true */
	for (i = 0; i < 5000; i += 10) {
		snprintf(name, sizeof(name), "d/s/f%d", i);
		resolve(c, name, 0, NULL);
	}
	hr = dc_root(c);
	CHECK_EQ(resolve(c, "top", 0, NULL), -ENOENT);	/* cached negative */
	before = hashed_entries(c);
	CHECK_EQ(dc_invalidate(c, hr), 0);
	CHECK_EQ(hashed_entries(c), before);
	CHECK(c->root != hr);
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "top", S_IFREG | 0644, NULL, &in), 0);
	CHECK_EQ(resolve(c, "top", 0, NULL), 0);	/* asked again */
	CHECK_EQ(dc_memfs_remove(fs, s.ino, "f20", 0), 0);
	CHECK_EQ(resolve(c, "d/s/f20", 0, NULL), -ENOENT);
	/* the former root's handle walks and updates from the new root */
	CHECK_EQ(dc_resolve(c, hr, "d/s/f30", 0, &st), 0);
	CHECK_EQ(dc_resolve(c, hr, "top", 0, &st), 0);
	CHECK_EQ(dc_memfs_remove(fs, DC_MEMFS_ROOT, "top", 0), 0);
	CHECK_EQ(dc_unlink(c, hr, "top"), 0);
	CHECK_EQ(resolve(c, "top", 0, NULL), -ENOENT);
	CHECK_EQ(dc_dentry_path(c, hr, name, sizeof(name)), 1);
	CHECK_EQ(dc_resolve(c, hr, "..", 0, &st), 0);	/* ".." at a root */
	CHECK_EQ(st.ino, DC_MEMFS_ROOT);
	dc_put(c, hr);
	CHECK_EQ(dc_debug_check(c), 0);
	/* the former root goes like any entry once unused, released once */
	CHECK(dc_shrink(c, 0) > 0);
	rcu_barrier();				/* the frees after grace periods */
	/* atomic loads: the callback thread counted them */
	CHECK_EQ(__atomic_load_n(&k.root_releases, __ATOMIC_ACQUIRE),
		 __atomic_load_n(&k.roots, __ATOMIC_ACQUIRE) - 1);	/* all but the root's */
	CHECK_EQ(dc_debug_check(c), 0);
	/* invalidated again and again, the root stays within the cap */
	for (i = 0; i < 10000; i++)
		CHECK_EQ(dc_invalidate(c, c->root), 0);
	{
		struct dc_stats sts;

		dc_get_stats(c, &sts);
		CHECK(sts.entries <= 8000 + 8000 / 8 + 1);	/* this cache's cap */
	}
	CHECK_EQ(dc_debug_check(c), 0);
	/* without memory for a new root, the pass over the table, and the
	 * caller told */
	dc_debug_fail_alloc(1, 0);
	CHECK_EQ(dc_invalidate(c, c->root), -ENOMEM);
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(hashed_entries(c), 0);
	CHECK_EQ(resolve(c, "d/s/f30", 0, NULL), 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	CHECK_EQ(__atomic_load_n(&k.root_releases, __ATOMIC_ACQUIRE),
		 __atomic_load_n(&k.roots, __ATOMIC_ACQUIRE));	/* each root() released once */
	dc_memfs_free(fs);
}

/* ---- held_isolated: the shrinker passes a held entry once ----------------- */

/* The entries on the lists, and into *isolated those held off them:
 * under lru_lock, since the shrinker thread may still be in a pass. */
static uint64_t listed_entries(struct dc_cache *c, uint64_t *isolated)
{
	struct dc_dentry *d;
	uint64_t n = 0;

	pthread_mutex_lock(&c->lru_lock);
	for (d = c->lru_pos.head; d; d = d->lru_next)
		n++;
	for (d = c->lru_neg.head; d; d = d->lru_next)
		n++;
	*isolated = c->nr_isolated;
	pthread_mutex_unlock(&c->lru_lock);
	return n;
}

static void test_held_isolated(enum dc_mode mode)
{
	enum { HELD = 1000 };
	static struct dc_dentry *held[HELD];
	struct dc_memfs *fs;
	struct dc_inode in;
	struct dc_cache *c;
	struct hooked k;
	uint64_t listed, isolated;
	char name[32];
	int i;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	for (i = 0; i < 3 * HELD; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFREG | 0644, NULL, &in), 0);
	}
	c = new_cache(fs, &k, mode, 2 * HELD, 0);
	for (i = 0; i < HELD; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(dc_walk(c, NULL, name, 0, &held[i]), 0);
	}
	/* fill past the cap: the shrinker meets every held entry once, and
	 * leaves it off the lists */
	for (i = HELD; i < 3 * HELD; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK_EQ(resolve(c, name, 0, NULL), 0);
	}
	/* within the cap: the held entries, met first, are all off the
	 * lists (the shrinker may still be evicting others) */
	CHECK(h_within_caps(c, 2 * HELD, 0));
	CHECK_EQ(dc_debug_check(c), 0);
	listed = listed_entries(c, &isolated);
	CHECK_EQ(isolated, HELD);
	CHECK(listed <= 2 * HELD - HELD);
	for (i = 0; i < HELD; i++)
		CHECK(!(dc__flags(held[i]) & DC_F_LISTED));
	CHECK_EQ(dc_debug_check(c), 0);
	/* unused again: back on a list, and evictable */
	for (i = 0; i < HELD; i++)
		dc_put(c, held[i]);
	(void)listed_entries(c, &isolated);
	CHECK_EQ(isolated, 0);
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(dc_shrink(c, 0) >= HELD, 1);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

/* ---- check_explains ------------------------------------------------------ */

static void test_check_explains(void)
{
	struct dc_memfs *fs;
	struct dc_inode in;
	struct dc_cache *c;
	struct hooked k;
	char why[256];

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &in), 0);
	c = new_cache(fs, &k, DC_MODE_RCU, 100, 0);
	CHECK_EQ(resolve(c, "f", 0, NULL), 0);
	why[0] = 'x';
	CHECK_EQ(dc_debug_check_why(c, why, sizeof(why)), 0);
	CHECK_EQ(why[0], 0);
	/* a negative on the positive list that nobody counted */
	c->nr_neg_astray++;
	CHECK_EQ(dc_debug_check_why(c, why, sizeof(why)), -EUCLEAN);
	CHECK(strstr(why, "0 negatives on the positive list, nr_neg_astray 1") != NULL);
	CHECK_EQ(dc_debug_check(c), -EUCLEAN);
	CHECK_EQ(dc_debug_check_why(c, NULL, 0), -EUCLEAN);
	c->nr_neg_astray--;
	/* an entry counted off the lists that is not: the first count off,
	 * cut to the buffer */
	c->nr_isolated++;
	CHECK_EQ(dc_debug_check_why(c, why, 8), -EUCLEAN);
	CHECK_EQ(strlen(why), 7);
	CHECK_EQ(dc_debug_check_why(c, why, sizeof(why)), -EUCLEAN);
	CHECK(strstr(why, "1 listed + 1 isolated + the root != 2 entries") != NULL);
	c->nr_isolated--;
	CHECK_EQ(dc_debug_check_why(c, why, sizeof(why)), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

/* ---- negative_kept -------------------------------------------------------- */

static void test_negative_kept(void)
{
	enum { MAXNEG = 100 };
	struct dc_memfs *fs;
	struct dc_cache *c;
	struct hooked k;
	char name[32];
	int i;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	c = new_cache(fs, &k, DC_MODE_RCU, 100000, MAXNEG);
	k.count_name = "hot";
	CHECK_EQ(resolve(c, "hot", 0, NULL), -ENOENT);
	/* 2,000 other negatives through a cap of 100; "hot" is probed
	 * between every 20 of them, as a PATH search probes */
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "cold%d", i);
		CHECK_EQ(resolve(c, name, 0, NULL), -ENOENT);
		if (i % 20 == 0)
			CHECK_EQ(resolve(c, "hot", 0, NULL), -ENOENT);
	}
	CHECK_EQ(k.named, 1);	/* asked once: kept as used all along */
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

/* ---- shrinker_thread ----------------------------------------------------- */

static void test_shrinker_thread(enum dc_mode mode)
{
	enum { SCAP = 200, EXTRA = 10 };
	struct dc_memfs *fs;
	struct dc_inode in;
	struct dc_stats st;
	struct dc_cache *c;
	struct hooked k;
	char name[16];
	int i;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	for (i = 0; i < SCAP + EXTRA; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFREG | 0644, NULL, &in), 0);
	}
	c = new_cache(fs, &k, mode, SCAP, 0);
	/* a little over the cap (within the eighth past which a lookup
	 * evicts itself), then no call at all but the stats */
	for (i = 0; i < SCAP + EXTRA; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		CHECK_EQ(resolve(c, name, 0, NULL), 0);
	}
	CHECK(h_within_caps(c, SCAP, SCAP));
	/* the thread counts its evictions just after it dropped the entries:
	 * give it the moment */
	for (i = 0; i < 10000; i++) {
		dc_get_stats(c, &st);
		if (st.evictions > 0)
			break;
		h_sleep_ms(1);
	}
	CHECK(st.evictions > 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
	CHECK_EQ(dc_debug_live_entries(), 0);	/* the thread freed nothing late */
}

int main(void)
{
	static const enum dc_mode modes[] = { DC_MODE_RCU, DC_MODE_GLOBAL, DC_MODE_RWLOCK };
	unsigned m;

	for (m = 0; m < 3; m++) {
		test_dropped_bounded(modes[m]);
		test_unlink_bounded(modes[m]);
		test_forget_cost(modes[m]);
		test_held_isolated(modes[m]);
		test_shrinker_thread(modes[m]);
	}
	test_flooding();
	test_hash_word_order();
	test_negative_kept();
	test_check_explains();
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_bounds");
}
