/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_writers.c - the writer paths never lie and never free what a reader
 * can still reach.  One staged case per way they can fail, each forcing
 * its interleaving from outside the library (call_rcu interposed, the
 * backend's release() and lookup() hooked: writers.h).  That they stay
 * bounded is test_bounds.c's.
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
 *  same_number      two directories with one inode number on two devices.
 *  orphan_miss      a miss in flight while its directory's parent is
 *                   forgotten is not cached; invalidating through a
 *                   forgotten file's handle forgets the file.
 *  forgot_all       an update whose backend adopt() ran while the cache
 *                   forgot everything does not cache its name.
 *  long_target      a backend's readlink that fills the whole buffer, as
 *                   readlink(2) does when it truncates; an inode with no
 *                   type.
 *  waiters_woken    threads waiting for pending names, one name or many
 *                   at once: each is woken by its own name's settle (a
 *                   settle that woke another name's slot would leave
 *                   them asleep, and the test fails on its timeout).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "dcache-debug.h"
#include "harness.h"
#include "writers.h"
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

/* ---- forgot_all: everything forgotten while an update's adopt runs -------
 * A backend's adopt may do what is only right for the cache as it is then
 * (hostfs hands a new directory to its watcher, which may not have
 * attached yet); when everything is forgotten before the update takes the
 * lock (a watcher attaching forgets all), the name is learnt anew. */

static struct dc_cache *fa_cache;
static bool fa_armed;

static int fa_adopt(void *ctx, const struct dc_inode *dir, const char *name,
		    size_t len, struct dc_inode *inode)
{
	struct hooked *k = ctx;

	if (fa_armed) {
		fa_armed = false;
		CHECK_EQ(dc_invalidate_all(fa_cache), 0);
	}
	return k->inner.ops->adopt(k->inner.ctx, dir, name, len, inode);
}

static void test_forgot_all(enum dc_mode mode)
{
	static struct dc_backend_ops ops;
	struct dc_options o = { .mode = mode };
	struct dc_inode a, b;
	struct dc_dentry *root;
	struct dc_memfs *fs;
	struct hooked k;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	memset(&k, 0, sizeof(k));
	k.inner = dc_memfs_backend(fs);
	ops = hooked_ops;
	ops.adopt = fa_adopt;
	o.backend.ops = &ops;
	o.backend.ctx = &k;
	CHECK_EQ(dc_cache_create(&o, &fa_cache), 0);
	root = dc_root(fa_cache);
	/* as it should be: a directory made through the cache is cached */
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL, &a), 0);
	CHECK_EQ(dc_mkdir(fa_cache, root, "a", &a), 0);
	k.count_name = "a";
	CHECK_EQ(resolve(fa_cache, "a", 0, NULL), 0);
	CHECK_EQ(k.named, 0);
	/* everything forgotten during the adopt: asked again */
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "b", S_IFDIR | 0755, NULL, &b), 0);
	fa_armed = true;
	CHECK_EQ(dc_mkdir(fa_cache, root, "b", &b), 0);
	CHECK(!fa_armed);
	k.count_name = "b";
	CHECK_EQ(resolve(fa_cache, "b", 0, NULL), 0);
	CHECK_EQ(k.named, 1);
	dc_put(fa_cache, root);
	CHECK_EQ(dc_debug_check(fa_cache), 0);
	dc_cache_destroy(fa_cache);
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

/*
 * Threads that miss on the same names at the same moments: each of
 * LS_THREADS threads resolves w0, w1, ... in the same order from one
 * barrier, so that two of them often ask for one name at once.  Single
 * flight holds only if finding the name and hashing its PENDING entry are
 * one step among misses: one backend lookup per name, no name hashed
 * twice (dc_debug_check), and every answer right.
 */
#define LS_NAMES	20000
#define LS_THREADS	4

static struct dc_cache *ls_cache;
static pthread_barrier_t ls_bar;
static uint64_t ls_ino[LS_NAMES];
static unsigned long ls_wrong;

static void *ls_thread(void *arg)
{
	char name[16];
	uint64_t ino;

	(void)arg;
	pthread_barrier_wait(&ls_bar);
	for (int i = 0; i < LS_NAMES; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		if (resolve(ls_cache, name, 0, &ino) != 0 || ino != ls_ino[i])
			__atomic_add_fetch(&ls_wrong, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_lockstep_misses(enum dc_mode mode)
{
	pthread_t t[LS_THREADS];
	struct dc_memfs *fs;
	struct dc_inode in;
	struct hooked k;
	char name[16];

	CHECK_EQ(dc_memfs_new(&fs), 0);
	for (int i = 0; i < LS_NAMES; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFREG | 0644, NULL, &in), 0);
		ls_ino[i] = in.ino;
	}
	ls_cache = new_cache(fs, &k, mode, 4 * LS_NAMES, 0);
	ls_wrong = 0;
	CHECK_EQ(pthread_barrier_init(&ls_bar, NULL, LS_THREADS), 0);
	for (int i = 0; i < LS_THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, ls_thread, NULL), 0);
	for (int i = 0; i < LS_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&ls_bar);
	CHECK_EQ(ls_wrong, 0);
	CHECK_EQ(k.lookups, LS_NAMES);	/* single flight: one ask per name */
	CHECK_EQ(dc_debug_check(ls_cache), 0);
	dc_cache_destroy(ls_cache);
	dc_memfs_free(fs);
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
		test_same_number(modes[m]);
		test_orphan_miss(modes[m]);
		test_forgot_all(modes[m]);
		test_long_target(modes[m]);
		test_waiters_woken(modes[m]);
		test_lockstep_misses(modes[m]);
	}
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_writers");
}
