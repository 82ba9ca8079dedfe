/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_writers.c - the writer paths never lie, never free what a reader can
 * still reach, and stay bounded.  One staged case per way they can fail,
 * each forcing its interleaving from outside the library (call_rcu
 * interposed, the backend's release() and lookup() hooked):
 *
 *  text_freed       an in-place change of a symlink must queue its old
 *                   text for freeing only after the seq write that hides
 *                   it.  At the moment the text is queued, every grace
 *                   period is let run out and a new reader resolves the
 *                   link: it must get the new answer (under ASan, a read
 *                   of the freed text is a use after free).
 *  held_changed     a reference taken from inside the backend's release()
 *                   of the old inode must hold an entry that never
 *                   changes, and a miss there must not wait for the write
 *                   lock (release() runs after it).
 *  held_stress      the same race at full speed: readers holding "f"
 *                   against a writer replacing it in place.
 *  two_dirs         a directory cached under both names of a rename (a
 *                   lookup between the backend's rename and dc_rename),
 *                   with an unlink through a handle on one of them.
 *  dropped_bounded  lookups in a dropped directory, which allocate an entry
 *                   each, within the cap and the byte bound.
 *  unlink_bounded   an unlink storm (entries turning negative in place, on
 *                   the positive list) within max_negative.
 *  flooding         names made to share a chain -- against an unkeyed
 *                   hash, through a 64-bit multiply under any key, and by
 *                   search in one directory of one cache -- share none
 *                   anywhere else.
 *  same_number      two directories with one inode number on two devices.
 *  forget_cost      forgetting a directory, and the root, unhashes no more
 *                   than itself; handles below and on a former root still
 *                   answer the backend's truth.
 *  held_isolated    the shrinker takes held entries off its lists, and
 *                   dc_put puts them back.
 *  orphan_miss      a miss in flight while its directory's parent is
 *                   forgotten is not cached; invalidating through a
 *                   forgotten file's handle forgets the file.
 *  long_target      a backend's readlink that fills the whole buffer, as
 *                   readlink(2) does when it truncates; an inode with no
 *                   type.
 *  negative_kept    a negative answered by the rcu-walk counts as used.
 *  waiters_woken    threads waiting for pending names, one name or many
 *                   at once: each is woken by its own name's settle (a
 *                   settle that woke another name's slot would leave
 *                   them asleep, and the test fails on its timeout).
 *  shrinker_thread  a cache left a little over its cap is brought back
 *                   under it by its own thread, with no call to make it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "dcache-debug.h"
#include "flood.h"
#include "harness.h"
#include "../src/internal.h"

/* ---- call_rcu, interposed ------------------------------------------------ */

static void (*stall_hook)(void);	/* run once at the next call_rcu */

/* The executable's definition wins over liburcu's: every call_rcu of the
 * statically linked library comes here first. */
void urcu_memb_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
	static void (*real)(struct rcu_head *, void (*)(struct rcu_head *));
	void (*hook)(void) = __atomic_exchange_n(&stall_hook, NULL, __ATOMIC_ACQ_REL);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "urcu_memb_call_rcu");
	real(head, fn);
	if (hook)
		hook();
}

/* ---- a memfs backend with hooks ------------------------------------------ */

/* A gate the hooked lookups wait at until the test opens it. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void gate_pass(void)
{
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cv, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

static void gate_set(bool open)
{
	pthread_mutex_lock(&gate_lock);
	gate_open = open;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_lock);
}

struct hooked {
	struct dc_backend inner;
	pthread_mutex_t *fs_lock;	/* when set, around every memfs call */
	void (*on_release)(const struct dc_inode *in);
	unsigned long lookups;		/* backend lookups made */
	const char *count_name;		/* ... of this name, into named */
	unsigned long named;
	void (*on_lookup)(const char *name, size_t len);	/* once */
	bool gated;			/* lookups wait for the gate (waiters_woken) */
	unsigned long roots, root_releases;	/* root() calls, releases of it */
};

static int h_root(void *ctx, struct dc_inode *out)
{
	struct hooked *k = ctx;

	__atomic_add_fetch(&k->roots, 1, __ATOMIC_RELAXED);
	return k->inner.ops->root(k->inner.ctx, out);
}

static int h_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		    size_t len, struct dc_inode *out)
{
	struct hooked *k = ctx;

	int err;

	__atomic_add_fetch(&k->lookups, 1, __ATOMIC_RELAXED);
	if (k->count_name && strlen(k->count_name) == len &&
	    !memcmp(k->count_name, name, len))
		__atomic_add_fetch(&k->named, 1, __ATOMIC_RELAXED);
	if (k->gated)
		gate_pass();
	if (k->on_lookup) {
		void (*hook)(const char *, size_t) = k->on_lookup;

		k->on_lookup = NULL;
		hook(name, len);
	}
	if (k->fs_lock)
		pthread_mutex_lock(k->fs_lock);
	err = k->inner.ops->lookup(k->inner.ctx, dir, name, len, out);
	if (k->fs_lock)
		pthread_mutex_unlock(k->fs_lock);
	return err;
}

static int h_getattr(void *ctx, struct dc_inode *in)
{
	struct hooked *k = ctx;

	return k->inner.ops->getattr(k->inner.ctx, in);
}

static int h_readlink(void *ctx, const struct dc_inode *in, char *buf, size_t size)
{
	struct hooked *k = ctx;

	return k->inner.ops->readlink(k->inner.ctx, in, buf, size);
}

static void h_release(void *ctx, const struct dc_inode *in)
{
	struct hooked *k = ctx;
	void (*hook)(const struct dc_inode *) = k->on_release;

	if (hook) {
		k->on_release = NULL;
		hook(in);
	}
	if (in->ino == DC_MEMFS_ROOT)	/* release: read after rcu_barrier */
		__atomic_add_fetch(&k->root_releases, 1, __ATOMIC_RELEASE);
	if (k->inner.ops->release)
		k->inner.ops->release(k->inner.ctx, in);
}

static const struct dc_backend_ops hooked_ops = {
	.root = h_root, .lookup = h_lookup, .getattr = h_getattr,
	.readlink = h_readlink, .release = h_release,
};

static struct dc_cache *new_cache(struct dc_memfs *fs, struct hooked *k,
				  enum dc_mode mode, uint64_t max, uint64_t maxneg)
{
	struct dc_options o = { .mode = mode, .max_entries = max, .max_negative = maxneg };
	struct dc_cache *c = NULL;

	memset(k, 0, sizeof(*k));
	k->inner = dc_memfs_backend(fs);
	o.backend.ops = &hooked_ops;
	o.backend.ctx = k;
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

static int resolve(struct dc_cache *c, const char *path, unsigned flags, uint64_t *ino)
{
	struct dc_inode st;
	int err = dc_resolve(c, NULL, path, flags, &st);

	if (ino)
		*ino = err ? 0 : st.ino;
	return err;
}

/* Run fn in a thread of its own (a reader that began after the writer
 * stalled) and wait for it, or fail loudly if it blocks. */
static void run_reader(void *(*fn)(void *), void *arg)
{
	struct timespec ts;
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, fn, arg), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	if (pthread_timedjoin_np(t, NULL, &ts) != 0) {
		fprintf(stderr, "a reader blocked on the stalled writer\n");
		exit(1);
	}
}

/* ---- text_freed ---------------------------------------------------------- */

static struct dc_cache *tf_cache;
static uint64_t tf_ino;
static int tf_err;

static void *tf_reader(void *arg)
{
	(void)arg;
	tf_err = resolve(tf_cache, "l", 0, &tf_ino);
	return NULL;
}

/* The old text was just queued: let every grace period run out, as a
 * preempted writer would, then let a new reader in. */
static void tf_stall(void)
{
	rcu_barrier();
	run_reader(tf_reader, NULL);
}

static void test_text_freed(bool to_file)
{
	struct dc_memfs *fs;
	struct dc_inode a, b, l, n;
	struct hooked k;
	uint64_t ino;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFREG | 0644, NULL, &a), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "b", S_IFREG | 0644, NULL, &b), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "l", S_IFLNK | 0777, "a", &l), 0);
	tf_cache = new_cache(fs, &k, DC_MODE_RCU, 0, 0);
	CHECK_EQ(resolve(tf_cache, "l", 0, &ino), 0);	/* caches l and its text */
	CHECK_EQ(ino, a.ino);
	resolve(tf_cache, "b", 0, NULL);

	/* l becomes a file, or a symlink to b: an in-place change either way */
	CHECK_EQ(dc_memfs_remove(fs, DC_MEMFS_ROOT, "l", 0), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "l", to_file ? S_IFREG | 0600 : S_IFLNK | 0777,
			      to_file ? NULL : "b", &n), 0);
	tf_ino = 0;
	tf_err = 1;
	__atomic_store_n(&stall_hook, tf_stall, __ATOMIC_RELEASE);
	if (to_file)
		CHECK_EQ(dc_create(tf_cache, tf_cache->root, "l", &n), 0);
	else
		CHECK_EQ(dc_symlink(tf_cache, tf_cache->root, "l", &n, "b"), 0);
	CHECK(stall_hook == NULL);		/* the text was queued */
	CHECK_EQ(tf_err, 0);
	CHECK_EQ(tf_ino, to_file ? n.ino : b.ino);	/* never a's: that text was freed */
	CHECK_EQ(resolve(tf_cache, "l", 0, &ino), 0);
	CHECK_EQ(ino, to_file ? n.ino : b.ino);
	CHECK_EQ(dc_debug_check(tf_cache), 0);
	dc_cache_destroy(tf_cache);
	dc_memfs_free(fs);
}

/* ---- held_changed -------------------------------------------------------- */

static struct dc_cache *hc_cache;
static struct dc_dentry *hc_held;
static struct dc_inode hc_seen;

static void *hc_reader(void *arg)
{
	(void)arg;
	hc_held = NULL;
	if (dc_lookup(hc_cache, hc_cache->root, "f", 1, &hc_held) == 0)
		CHECK_EQ(dc_dentry_stat(hc_held, &hc_seen), 0);
	else
		hc_held = NULL;
	/* a miss takes the write lock: release() runs without it */
	CHECK_EQ(resolve(hc_cache, "nothing", 0, NULL), -ENOENT);
	return NULL;
}

/* The backend is told to let the old inode go: a reader takes "f" now. */
static void hc_stall(const struct dc_inode *in)
{
	(void)in;
	run_reader(hc_reader, NULL);
}

static void test_held_changed(enum dc_mode mode, bool recreate)
{
	struct dc_memfs *fs;
	struct dc_inode f, g;
	struct dc_inode st;
	struct hooked k;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &f), 0);
	hc_cache = new_cache(fs, &k, mode, 0, 0);
	CHECK_EQ(resolve(hc_cache, "f", 0, NULL), 0);

	CHECK_EQ(dc_memfs_remove(fs, DC_MEMFS_ROOT, "f", 0), 0);
	if (recreate)
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "f", S_IFREG | 0600, NULL, &g), 0);
	k.on_release = hc_stall;
	if (recreate)
		CHECK_EQ(dc_create(hc_cache, hc_cache->root, "f", &g), 0);
	else
		CHECK_EQ(dc_unlink(hc_cache, hc_cache->root, "f"), 0);
	CHECK(k.on_release == NULL);		/* the old inode was released */
	if (hc_held) {
		/* what a reference holds never changes under it, and is never
		 * an inode the backend was told to let go */
		CHECK_EQ(dc_dentry_stat(hc_held, &st), 0);
		CHECK_EQ(st.ino, hc_seen.ino);
		CHECK(recreate && hc_seen.ino == g.ino);
		dc_put(hc_cache, hc_held);
	} else {
		CHECK(!recreate);	/* a negative answer is the only other */
	}
	CHECK_EQ(resolve(hc_cache, "f", 0, NULL), recreate ? 0 : -ENOENT);
	CHECK_EQ(dc_debug_check(hc_cache), 0);
	dc_cache_destroy(hc_cache);
	dc_memfs_free(fs);
}

/* ---- held_stress: references against in-place changes, at full speed ----- */

static struct dc_cache *hs_cache;
static int hs_stop;

static void *hs_reader(void *arg)
{
	unsigned long *taken = arg;

	while (!__atomic_load_n(&hs_stop, __ATOMIC_ACQUIRE)) {
		struct dc_dentry *d;
		struct dc_inode a, b;
		int i;

		if (dc_lookup(hs_cache, hs_cache->root, "f", 1, &d) != 0)
			continue;
		CHECK_EQ(dc_dentry_stat(d, &a), 0);
		for (i = 0; i < 50; i++)	/* let the writer run */
			__asm__ __volatile__("" ::: "memory");
		CHECK_EQ(dc_dentry_stat(d, &b), 0);
		CHECK_EQ(a.ino, b.ino);		/* what is held never changes */
		dc_put(hs_cache, d);
		(*taken)++;
	}
	return NULL;
}

/*
 * Readers take "f" and check that what they hold never changes, while a
 * writer replaces and unlinks it (in place whenever nobody holds it).  A
 * stress, not a staging: it would catch a claim that is not atomic with
 * the reference takers, without knowing where the window is.
 */
static void test_held_stress(enum dc_mode mode)
{
	pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned long taken[2] = { 0, 0 };
	struct dc_memfs *fs;
	struct dc_inode in;
	struct timespec t0, t;
	struct hooked k;
	pthread_t th[2];
	unsigned long rounds = 0;
	int j;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &in), 0);
	hs_cache = new_cache(fs, &k, mode, 0, 0);
	k.fs_lock = &fs_lock;
	hs_stop = 0;
	for (j = 0; j < 2; j++)
		CHECK_EQ(pthread_create(&th[j], NULL, hs_reader, &taken[j]), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pthread_mutex_lock(&fs_lock);
		CHECK_EQ(dc_memfs_remove(fs, DC_MEMFS_ROOT, "f", 0), 0);
		pthread_mutex_unlock(&fs_lock);
		CHECK_EQ(dc_unlink(hs_cache, hs_cache->root, "f"), 0);
		pthread_mutex_lock(&fs_lock);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL, &in), 0);
		pthread_mutex_unlock(&fs_lock);
		CHECK_EQ(dc_create(hs_cache, hs_cache->root, "f", &in), 0);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 <
		 h_seconds() / 4);
	__atomic_store_n(&hs_stop, 1, __ATOMIC_RELEASE);
	for (j = 0; j < 2; j++)
		pthread_join(th[j], NULL);
	CHECK(rounds > 0 && taken[0] + taken[1] > 0);
	CHECK_EQ(dc_debug_check(hs_cache), 0);
	dc_cache_destroy(hs_cache);
	dc_memfs_free(fs);
}

/* ---- two_dirs ------------------------------------------------------------ */

static void test_two_dirs(enum dc_mode mode)
{
	struct dc_memfs *fs;
	struct dc_inode a, x;
	struct dc_dentry *ha;
	struct dc_cache *c;
	struct hooked k;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL, &a), 0);
	CHECK_EQ(dc_memfs_add(fs, a.ino, "x", S_IFREG | 0644, NULL, &x), 0);
	c = new_cache(fs, &k, mode, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "a", 0, &ha), 0);	/* the caller's handle */
	CHECK_EQ(resolve(c, "a/x", 0, NULL), 0);

	/* the backend renames a to b; before dc_rename, a lookup caches b */
	CHECK_EQ(dc_memfs_rename(fs, DC_MEMFS_ROOT, "a", DC_MEMFS_ROOT, "b", 0), 0);
	CHECK_EQ(resolve(c, "b/x", 0, NULL), 0);
	/* an unlink through the handle on a, before the rename is told */
	CHECK_EQ(dc_memfs_remove(fs, a.ino, "x", 0), 0);
	CHECK_EQ(dc_unlink(c, ha, "x"), 0);
	CHECK_EQ(dc_rename(c, c->root, "a", c->root, "b", 0), 0);

	CHECK_EQ(resolve(c, "b/x", 0, NULL), -ENOENT);
	CHECK_EQ(resolve(c, "a", 0, NULL), -ENOENT);
	CHECK_EQ(resolve(c, "b", 0, NULL), 0);
	dc_put(c, ha);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

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
	pthread_mutex_t *fs_lock;	/* memfs is not thread-safe (its writers) */
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
		pthread_mutex_lock(s->fs_lock);
		CHECK_EQ(dc_memfs_remove(s->fs, s->dir_ino, name, 0), 0);
		pthread_mutex_unlock(s->fs_lock);
		CHECK_EQ(dc_unlink(s->c, s->dir, name), 0);
		if (i % 50 == 0)
			sample(s);
	}
	sample(s);
	return NULL;
}

static void test_unlink_bounded(enum dc_mode mode)
{
	pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
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
				       .id = j, .n = FILES, .fs_lock = &fs_lock };
		CHECK_EQ(pthread_create(&t[j], NULL, unlink_worker, &s[j]), 0);
	}
	for (j = 0; j < 2; j++)
		pthread_join(t[j], NULL);
	/* once the shrinker thread has run */
	CHECK(h_within_caps(c, UINT64_MAX, MAXNEG));
	dc_get_stats(c, &st);
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

/* ---- same_number: two directories, one inode number, two devices ---------- */

/*
 * root holds v1 and v2, both directory 256 (btrfs subvolume roots), told
 * apart by gen as hostfs tells devices apart.  Each holds what it was
 * given with add().
 */
struct twovol {
	pthread_mutex_t lock;
	char names[2][8][16];
	int n[2];
};

static int tv_root(void *ctx, struct dc_inode *out)
{
	(void)ctx;
	*out = (struct dc_inode){ 2, 0, S_IFDIR | 0755, 0 };
	return 0;
}

static int tv_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *out)
{
	struct twovol *v = ctx;
	int i, vol = (int)dir->gen - 1, err = -ENOENT;

	if (dir->ino == 2) {
		if (len == 2 && name[0] == 'v' && (name[1] == '1' || name[1] == '2')) {
			*out = (struct dc_inode){ 256, 0, S_IFDIR | 0755,
						  (uint32_t)(name[1] - '0') };
			return 0;
		}
		return -ENOENT;
	}
	pthread_mutex_lock(&v->lock);
	for (i = 0; i < v->n[vol]; i++)
		if (strlen(v->names[vol][i]) == len && !memcmp(v->names[vol][i], name, len)) {
			*out = (struct dc_inode){ 1000 + (uint64_t)i, 0, S_IFREG | 0644,
						  (uint32_t)vol + 1 };
			err = 0;
		}
	pthread_mutex_unlock(&v->lock);
	return err;
}

static const struct dc_backend_ops twovol_ops = { .root = tv_root, .lookup = tv_lookup };

static void test_same_number(enum dc_mode mode)
{
	struct twovol v = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct dc_options o = { .mode = mode, .backend = { &twovol_ops, &v } };
	struct dc_inode in = { 1000, 0, S_IFREG | 0644, 1 };
	struct dc_dentry *h1;
	struct dc_cache *c;

	snprintf(v.names[0][v.n[0]++], 16, "f");
	snprintf(v.names[1][v.n[1]++], 16, "f");
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	CHECK_EQ(dc_walk(c, NULL, "v1", 0, &h1), 0);
	CHECK_EQ(resolve(c, "v1/f", 0, NULL), 0);
	CHECK_EQ(resolve(c, "v2/f", 0, NULL), 0);
	CHECK_EQ(resolve(c, "v2/new", 0, NULL), -ENOENT);
	CHECK_EQ(dc_invalidate_name(c, c->root, "v1"), 0);	/* h1 is dropped */
	/* a file created in v1, told through the dropped handle */
	snprintf(v.names[0][v.n[0]++], 16, "new");
	in.ino = 1001;
	CHECK_EQ(dc_create(c, h1, "new", &in), 0);
	CHECK_EQ(resolve(c, "v2/new", 0, NULL), -ENOENT);	/* not in v2 */
	CHECK_EQ(resolve(c, "v1/new", 0, NULL), 0);
	dc_put(c, h1);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);

	/* hostfs's gen is the kernel's encoding of st_dev */
	CHECK_EQ(dc_hostfs_gen(makedev(8, 1)), 8u << 20 | 1);
	CHECK_EQ(dc_hostfs_gen(makedev(259, 1048575)), 259u << 20 | 1048575);
	CHECK(dc_hostfs_gen(makedev(0, 256)) != dc_hostfs_gen(makedev(0, 257)));
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
	/* without memory for a new root, the pass over the table */
	dc_debug_fail_alloc(1, 0);
	CHECK_EQ(dc_invalidate(c, c->root), 0);
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(hashed_entries(c), 0);
	CHECK_EQ(resolve(c, "d/s/f30", 0, NULL), 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	CHECK_EQ(__atomic_load_n(&k.root_releases, __ATOMIC_ACQUIRE),
		 __atomic_load_n(&k.roots, __ATOMIC_ACQUIRE));	/* each root() released once */
	dc_memfs_free(fs);
}

/* ---- orphan_miss: a miss in flight as its directory is orphaned ----------- */

static struct dc_cache *om_cache;
static struct dc_dentry *om_a;

/* The backend is asked for a name below a: forget a meanwhile. */
static void om_forget(const char *name, size_t len)
{
	(void)name;
	(void)len;
	CHECK_EQ(dc_invalidate(om_cache, om_a), 0);
}

static void test_orphan_miss(enum dc_mode mode)
{
	struct dc_memfs *fs;
	struct dc_inode a, x, g, f;
	struct dc_dentry *hx, *hf, *e;
	struct hooked k;
	struct dc_inode st;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL, &a), 0);
	CHECK_EQ(dc_memfs_add(fs, a.ino, "x", S_IFDIR | 0755, NULL, &x), 0);
	CHECK_EQ(dc_memfs_add(fs, x.ino, "g", S_IFREG | 0644, NULL, &g), 0);
	CHECK_EQ(dc_memfs_add(fs, a.ino, "f", S_IFREG | 0644, NULL, &f), 0);
	om_cache = new_cache(fs, &k, mode, 0, 0);
	CHECK_EQ(dc_walk(om_cache, NULL, "a", 0, &om_a), 0);
	CHECK_EQ(dc_walk(om_cache, NULL, "a/x", 0, &hx), 0);
	CHECK_EQ(dc_walk(om_cache, NULL, "a/f", 0, &hf), 0);
	/* x/g misses; while the backend answers, a is forgotten */
	k.on_lookup = om_forget;
	CHECK_EQ(dc_resolve(om_cache, hx, "g", 0, &st), 0);
	CHECK_EQ(st.ino, g.ino);
	CHECK(k.on_lookup == NULL);
	dc__write_lock(om_cache);
	e = dc__find_locked(om_cache, hx, "g", 1, dc__hash_name(om_cache, hx, "g", 1));
	dc__write_unlock(om_cache);
	CHECK(e == NULL);	/* the answer was not cached under the orphan */
	CHECK_EQ(dc_debug_check(om_cache), 0);

	/* a handle on a forgotten file still names it: invalidating through
	 * it forgets the file cached anew by path */
	CHECK_EQ(resolve(om_cache, "a/f", 0, NULL), 0);
	k.count_name = "f";
	k.named = 0;
	CHECK_EQ(resolve(om_cache, "a/f", 0, NULL), 0);
	CHECK_EQ(k.named, 0);			/* cached */
	CHECK_EQ(dc_invalidate(om_cache, hf), 0);
	CHECK_EQ(resolve(om_cache, "a/f", 0, NULL), 0);
	CHECK_EQ(k.named, 1);			/* forgotten, asked again */
	dc_put(om_cache, hf);
	dc_put(om_cache, hx);
	dc_put(om_cache, om_a);
	CHECK_EQ(dc_debug_check(om_cache), 0);
	dc_cache_destroy(om_cache);
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

/* ---- long_target ---------------------------------------------------------- */

/* A symlink "l" whose text is longer than any path: readlink truncates to
 * the buffer, as readlink(2) does, without a NUL. */
static int lt_root(void *ctx, struct dc_inode *out)
{
	(void)ctx;
	*out = (struct dc_inode){ 1, 0, S_IFDIR | 0755, 0 };
	return 0;
}

static int lt_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *out)
{
	(void)ctx;
	(void)dir;
	if (len == 1 && name[0] == 'z') {	/* an answer with no type */
		*out = (struct dc_inode){ 3, 0, 0644, 0 };
		return 0;
	}
	if (len != 1 || name[0] != 'l')
		return -ENOENT;
	*out = (struct dc_inode){ 2, 0, S_IFLNK | 0777, 0 };
	return 0;
}

static int lt_readlink(void *ctx, const struct dc_inode *in, char *buf, size_t size)
{
	size_t i, full = 5000;

	(void)ctx;
	(void)in;
	for (i = 0; i < size && i < full; i++)
		buf[i] = i % 2 ? '/' : 'x';
	return (int)i;
}

static const struct dc_backend_ops longtarget_ops = {
	.root = lt_root, .lookup = lt_lookup, .readlink = lt_readlink,
};

static void test_long_target(enum dc_mode mode)
{
	struct dc_options o = { .mode = mode, .backend = { &longtarget_ops, NULL } };
	struct dc_cache *c;

	CHECK_EQ(dc_cache_create(&o, &c), 0);
	/* the link is there; following it fails, every time */
	CHECK_EQ(resolve(c, "l", 0, NULL), -ENAMETOOLONG);
	CHECK_EQ(resolve(c, "l/y", 0, NULL), -ENAMETOOLONG);
	CHECK_EQ(resolve(c, "l", DC_NOFOLLOW, NULL), 0);
	CHECK_EQ(resolve(c, "l", 0, NULL), -ENAMETOOLONG);
	/* an inode needs a type, from the backend as from a caller */
	CHECK_EQ(resolve(c, "z", 0, NULL), -EIO);
	{
		struct dc_inode none = { 9, 0, 0644, 0 };

		CHECK_EQ(dc_create(c, c->root, "y", &none), -EINVAL);
	}
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
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

/* ---- waiters_woken ---------------------------------------------------------- */

enum { WW_PER = 4, WW_MAXNAMES = 24 };

struct ww_arg {
	struct dc_cache *c;
	int name;
	uint64_t ino;
	int err;
};

static void *ww_lookup(void *p)
{
	struct ww_arg *a = p;
	char name[16];

	snprintf(name, sizeof(name), "w%d", a->name);
	a->err = resolve(a->c, name, 0, &a->ino);
	return NULL;
}

static uint64_t miss_waits(struct dc_cache *c)
{
	struct dc_stats st;

	dc_get_stats(c, &st);
	return st.miss_waits;
}

/*
 * names names, WW_PER threads each, all behind the gate: one owner per
 * name asks the backend, the others wait for its entry.  Once every
 * waiter is counted (and given time to fall asleep), the gate opens and
 * every thread must come back with its name's answer.  One name alone
 * first: then no other settle can wake its waiters by chance.
 */
static void waiters_round(enum dc_mode mode, int names)
{
	static struct ww_arg a[WW_MAXNAMES * WW_PER];
	static pthread_t t[WW_MAXNAMES * WW_PER];
	uint64_t ino[WW_MAXNAMES];
	struct timespec ts, ms = { 0, 1000000 };
	struct dc_memfs *fs;
	struct dc_inode in;
	struct dc_cache *c;
	struct hooked k;
	char name[16];
	int i, n = names * WW_PER, spins;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	for (i = 0; i < names; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFREG | 0644, NULL, &in), 0);
		ino[i] = in.ino;
	}
	c = new_cache(fs, &k, mode, 100000, 0);
	gate_set(false);
	k.gated = true;
	for (i = 0; i < n; i++) {
		a[i] = (struct ww_arg){ .c = c, .name = i % names };
		CHECK_EQ(pthread_create(&t[i], NULL, ww_lookup, &a[i]), 0);
	}
	/* every thread but the owners counted as waiting (counted before it
	 * sleeps: give it time to) */
	for (spins = 0; spins < 30000 && miss_waits(c) < (uint64_t)(n - names); spins++)
		nanosleep(&ms, NULL);
	CHECK_EQ(miss_waits(c), n - names);
	ms.tv_nsec = 50000000;
	nanosleep(&ms, NULL);
	gate_set(true);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	for (i = 0; i < n; i++) {
		if (pthread_timedjoin_np(t[i], NULL, &ts) != 0) {
			fprintf(stderr, "waiters_woken: a waiter for w%d was never woken "
				"(%d names)\n", a[i].name, names);
			exit(1);
		}
		CHECK_EQ(a[i].err, 0);
		CHECK_EQ(a[i].ino, ino[a[i].name]);
	}
	CHECK_EQ(k.lookups, names);	/* single flight: one ask per name */
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

static void test_waiters_woken(enum dc_mode mode)
{
	waiters_round(mode, 1);
	waiters_round(mode, WW_MAXNAMES);
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

	/* the lock-free reader and the stalled writer: rcu mode's race */
	test_text_freed(true);
	test_text_freed(false);
	for (m = 0; m < 3; m++) {
		test_held_changed(modes[m], false);
		test_held_changed(modes[m], true);
		test_held_stress(modes[m]);
		test_two_dirs(modes[m]);
		test_dropped_bounded(modes[m]);
		test_unlink_bounded(modes[m]);
		test_same_number(modes[m]);
		test_forget_cost(modes[m]);
		test_held_isolated(modes[m]);
		test_orphan_miss(modes[m]);
		test_long_target(modes[m]);
		test_waiters_woken(modes[m]);
		test_shrinker_thread(modes[m]);
	}
	test_flooding();
	test_negative_kept();
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_writers");
}
