/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cache.c - unit tests of every libdcache operation and error, in each
 * mode, on a memfs backend wrapped to count backend calls.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "dcache-debug.h"
#include "harness.h"

/* ---- a memfs backend that counts the calls made to it ----------------- */

struct counting {
	struct dc_backend inner;
	unsigned long lookups, readlinks;
	int fail_lookup;	/* when set, every lookup returns it */
	int empty_link;		/* readlink returns "" */
};

static int c_root(void *ctx, struct dc_inode *out)
{
	struct counting *k = ctx;

	return k->inner.ops->root(k->inner.ctx, out);
}

static int c_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		    size_t len, struct dc_inode *out)
{
	struct counting *k = ctx;

	__atomic_add_fetch(&k->lookups, 1, __ATOMIC_RELAXED);
	if (k->fail_lookup)
		return k->fail_lookup;
	return k->inner.ops->lookup(k->inner.ctx, dir, name, len, out);
}

static int c_getattr(void *ctx, struct dc_inode *in)
{
	struct counting *k = ctx;

	return k->inner.ops->getattr(k->inner.ctx, in);
}

static int c_readlink(void *ctx, const struct dc_inode *in, char *buf, size_t size)
{
	struct counting *k = ctx;

	k->readlinks++;
	if (k->empty_link) {
		buf[0] = '\0';
		return 0;
	}
	return k->inner.ops->readlink(k->inner.ctx, in, buf, size);
}

static const struct dc_backend_ops counting_ops = {
	.root = c_root, .lookup = c_lookup, .getattr = c_getattr,
	.readlink = c_readlink,
};

/* ---- fixtures ---------------------------------------------------------- */

struct fx {
	struct dc_memfs *fs;
	struct counting k;
	struct dc_cache *c;
	struct dc_dentry *root;
};

static uint64_t add(struct dc_memfs *fs, uint64_t dir, const char *name,
		    uint32_t mode, const char *target)
{
	struct dc_inode in;
	int err = dc_memfs_add(fs, dir, name, mode, target, &in);

	CHECK_EQ(err, 0);
	return err ? 0 : in.ino;
}

/*
 *  /a/            dir
 *  /a/f           file
 *  /a/b/          dir
 *  /a/b/g         file
 *  /l  -> a/b     relative link to dir
 *  /abs -> /a/f   absolute link to file
 *  /dang -> nope  dangling
 *  /up -> ../../a link climbing above the root
 *  /loop -> loop
 */
static struct { uint64_t a, f, b, g, l, abs, dang, up, loop; } I;

static void fx_open(struct fx *x, enum dc_mode mode, uint64_t max, uint64_t maxneg)
{
	struct dc_options o = { .mode = mode, .max_entries = max, .max_negative = maxneg };

	memset(x, 0, sizeof(*x));
	CHECK_EQ(dc_memfs_new(&x->fs), 0);
	I.a = add(x->fs, DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL);
	I.f = add(x->fs, I.a, "f", S_IFREG | 0644, NULL);
	I.b = add(x->fs, I.a, "b", S_IFDIR | 0755, NULL);
	I.g = add(x->fs, I.b, "g", S_IFREG | 0644, NULL);
	I.l = add(x->fs, DC_MEMFS_ROOT, "l", S_IFLNK | 0777, "a/b");
	I.abs = add(x->fs, DC_MEMFS_ROOT, "abs", S_IFLNK | 0777, "/a/f");
	I.dang = add(x->fs, DC_MEMFS_ROOT, "dang", S_IFLNK | 0777, "nope");
	I.up = add(x->fs, DC_MEMFS_ROOT, "up", S_IFLNK | 0777, "../../a");
	I.loop = add(x->fs, DC_MEMFS_ROOT, "loop", S_IFLNK | 0777, "loop");
	x->k.inner = dc_memfs_backend(x->fs);
	o.backend.ops = &counting_ops;
	o.backend.ctx = &x->k;
	CHECK_EQ(dc_cache_create(&o, &x->c), 0);
	x->root = dc_root(x->c);
}

static void fx_close(struct fx *x)
{
	CHECK_EQ(dc_debug_check(x->c), 0);
	dc_put(x->c, x->root);
	dc_cache_destroy(x->c);
	CHECK_EQ(dc_debug_live_entries(), 0);
	dc_memfs_free(x->fs);
}

static int64_t res(struct fx *x, const char *path, unsigned flags)
{
	struct dc_inode st;
	int err = dc_resolve(x->c, NULL, path, flags, &st);

	return err ? err : (int64_t)st.ino;
}

/* ---- the tests ------------------------------------------------------------ */

static void test_paths(enum dc_mode mode)
{
	char long_name[300], long_path[DC_PATH_MAX + 10], buf[64];
	struct fx x;
	int i;

	fx_open(&x, mode, 0, 0);
	for (i = 0; i < 2; i++) {	/* cold, then from the cache */
		struct dc_stats st0, st1;

		dc_get_stats(x.c, &st0);
		CHECK_EQ(res(&x, "/", 0), DC_MEMFS_ROOT);
		CHECK_EQ(res(&x, ".", 0), DC_MEMFS_ROOT);
		CHECK_EQ(res(&x, "a", 0), I.a);
		CHECK_EQ(res(&x, "/a/f", 0), I.f);
		CHECK_EQ(res(&x, "//a///b//g", 0), I.g);
		CHECK_EQ(res(&x, "a/./b/../f", 0), I.f);
		CHECK_EQ(res(&x, "..", 0), DC_MEMFS_ROOT);
		CHECK_EQ(res(&x, "/../../a/../../a/f", 0), I.f);
		CHECK_EQ(res(&x, "a/", 0), I.a);
		CHECK_EQ(res(&x, "a/f/", 0), -ENOTDIR);
		CHECK_EQ(res(&x, "a/f/.", 0), -ENOTDIR);
		CHECK_EQ(res(&x, "a/f/..", 0), -ENOTDIR);
		CHECK_EQ(res(&x, "a/f/x", 0), -ENOTDIR);
		CHECK_EQ(res(&x, "missing", 0), -ENOENT);
		CHECK_EQ(res(&x, "missing/..", 0), -ENOENT);
		CHECK_EQ(res(&x, "missing/x", 0), -ENOENT);
		CHECK_EQ(res(&x, "", 0), -ENOENT);
		/* symlinks */
		CHECK_EQ(res(&x, "l", 0), I.b);
		CHECK_EQ(res(&x, "l", DC_NOFOLLOW), I.l);
		CHECK_EQ(res(&x, "l/", DC_NOFOLLOW), I.b);
		CHECK_EQ(res(&x, "l/g", DC_NOFOLLOW), I.g);
		CHECK_EQ(res(&x, "l/..", 0), I.a);	/* physical, not lexical */
		CHECK_EQ(res(&x, "abs", 0), I.f);
		CHECK_EQ(res(&x, "abs/", DC_NOFOLLOW), -ENOTDIR);
		CHECK_EQ(res(&x, "abs", DC_NOFOLLOW), I.abs);
		CHECK_EQ(res(&x, "dang", 0), -ENOENT);
		CHECK_EQ(res(&x, "dang", DC_NOFOLLOW), I.dang);
		CHECK_EQ(res(&x, "dang/", DC_NOFOLLOW), -ENOENT);
		CHECK_EQ(res(&x, "up/f", 0), I.f);	/* .. stops at the root */
		CHECK_EQ(res(&x, "loop", 0), -ELOOP);
		CHECK_EQ(res(&x, "loop", DC_NOFOLLOW), I.loop);
		CHECK_EQ(res(&x, "loop/", DC_NOFOLLOW), -ELOOP);
		/*
		 * From the cache, rcu-walk answers every one of them itself:
		 * the look-ahead hashing (hash_ahead) and the symlink stack,
		 * not ref-walk, are what the answers above checked.
		 */
		dc_get_stats(x.c, &st1);
		if (i == 1 && mode == DC_MODE_RCU) {
			CHECK_EQ(st1.restarts, st0.restarts);
			CHECK_EQ(st1.misses, st0.misses);
		}
	}
	/* a component of 256 bytes: ENAMETOOLONG when reached, not before */
	memset(long_name, 'n', 256);
	long_name[256] = '\0';
	snprintf(long_path, sizeof(long_path), "a/%s", long_name);
	CHECK_EQ(res(&x, long_path, 0), -ENAMETOOLONG);
	snprintf(long_path, sizeof(long_path), "missing/%s", long_name);
	CHECK_EQ(res(&x, long_path, 0), -ENOENT);
	snprintf(long_path, sizeof(long_path), "a/f/%s", long_name);
	CHECK_EQ(res(&x, long_path, 0), -ENOTDIR);
	/* paths of 4096 bytes or more */
	for (i = 0; i + 2 < DC_PATH_MAX; i += 2)
		memcpy(long_path + i, "./", 2);
	strcpy(long_path + i, "a");	/* 4095 bytes */
	CHECK_EQ((long)strlen(long_path), DC_PATH_MAX - 1);
	CHECK_EQ(res(&x, long_path, 0), I.a);
	strcat(long_path, "/");
	CHECK_EQ(res(&x, long_path, 0), -ENAMETOOLONG);
	/* bad arguments */
	CHECK_EQ(dc_resolve(NULL, NULL, "a", 0, (struct dc_inode *)buf), -EINVAL);
	CHECK_EQ(dc_resolve(x.c, NULL, NULL, 0, (struct dc_inode *)buf), -EINVAL);
	CHECK_EQ(dc_resolve(x.c, NULL, "a", 0, NULL), -EINVAL);
	CHECK_EQ(dc_resolve(x.c, NULL, "a", 0x80, (struct dc_inode *)buf), -EINVAL);
	fx_close(&x);
}

/* 40 links resolve, the 41st is ELOOP, nested or chained. */
static void test_symlink_limit(enum dc_mode mode)
{
	char name[16], target[16];
	struct fx x;
	int i;

	fx_open(&x, mode, 0, 0);
	add(x.fs, DC_MEMFS_ROOT, "c0", S_IFREG | 0644, NULL);
	for (i = 1; i <= 41; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		snprintf(target, sizeof(target), "c%d", i - 1);
		add(x.fs, DC_MEMFS_ROOT, name, S_IFLNK | 0777, target);
	}
	CHECK(res(&x, "c40", 0) > 0);
	CHECK_EQ(res(&x, "c41", 0), -ELOOP);
	CHECK(res(&x, "c40", 0) > 0);		/* cached now */
	CHECK_EQ(res(&x, "c41", 0), -ELOOP);
	CHECK_EQ(res(&x, "c41", DC_NOFOLLOW) > 0, 1);
	x.k.empty_link = 1;
	add(x.fs, DC_MEMFS_ROOT, "empty", S_IFLNK | 0777, "x");
	CHECK_EQ(res(&x, "empty", 0), -ENOENT);
	CHECK_EQ(res(&x, "empty", 0), -ENOENT);
	fx_close(&x);
}

/* Hits are answered without the backend; negative entries too. */
static void test_hits_and_stats(enum dc_mode mode)
{
	struct dc_stats st;
	unsigned long before;
	struct fx x;

	fx_open(&x, mode, 0, 0);
	CHECK_EQ(res(&x, "a/b/g", 0), I.g);
	CHECK_EQ(x.k.lookups, 3);
	CHECK_EQ(res(&x, "a/nothere", 0), -ENOENT);
	before = x.k.lookups;
	CHECK_EQ(res(&x, "a/b/g", 0), I.g);
	CHECK_EQ(res(&x, "a/nothere", 0), -ENOENT);
	CHECK_EQ(x.k.lookups, before);
	dc_get_stats(x.c, &st);
	CHECK_EQ(st.lookups, 4);
	CHECK_EQ(st.misses, 4);
	CHECK(st.hits >= 1);
	CHECK_EQ(st.negative_hits, 1);
	CHECK_EQ(st.negative, 1);
	CHECK_EQ(st.entries, 5);	/* root, a, b, g, nothere */
	CHECK(st.bytes > 0);
	if (mode == DC_MODE_RCU)
		CHECK(st.restarts >= 2);	/* the two cold walks */
	/* a backend error reaches the caller and is not cached */
	x.k.fail_lookup = -EIO;
	CHECK_EQ(res(&x, "a/other", 0), -EIO);
	CHECK_EQ(res(&x, "a/b/g", 0), I.g);
	x.k.fail_lookup = 0;
	CHECK_EQ(res(&x, "a/other", 0), -ENOENT);
	fx_close(&x);
}

static void test_lookup_and_refs(enum dc_mode mode)
{
	struct dc_dentry *a, *f, *d;
	struct dc_inode st;
	char buf[64];
	struct fx x;

	fx_open(&x, mode, 0, 0);
	CHECK_EQ(dc_lookup(x.c, x.root, "a", 1, &a), 0);
	CHECK_EQ(dc_dentry_stat(a, &st), 0);
	CHECK_EQ(st.ino, I.a);
	CHECK(S_ISDIR(st.mode));
	CHECK_EQ(dc_lookup(x.c, a, "f", 1, &f), 0);
	CHECK_EQ(dc_dentry_path(x.c, f, buf, sizeof(buf)), 4);
	CHECK(!strcmp(buf, "/a/f"));
	CHECK_EQ(dc_dentry_path(x.c, f, buf, 4), -ERANGE);
	CHECK_EQ(dc_dentry_path(x.c, x.root, buf, sizeof(buf)), 1);
	CHECK(!strcmp(buf, "/"));
	CHECK_EQ(dc_lookup(x.c, f, "x", 1, &d), -ENOTDIR);
	CHECK_EQ(dc_lookup(x.c, a, "zz", 2, &d), -ENOENT);
	CHECK_EQ(dc_lookup(x.c, a, "a/b", 3, &d), -EINVAL);
	CHECK_EQ(dc_lookup(x.c, a, "", 0, &d), -EINVAL);
	CHECK_EQ(dc_lookup(x.c, a, "f\0g", 3, &d), -EINVAL);
	CHECK_EQ(dc_lookup(x.c, NULL, "f", 1, &d), -EINVAL);
	CHECK_EQ(dc_lookup(x.c, a, "..", 2, &d), 0);
	CHECK(d == x.root);
	dc_put(x.c, d);
	/* relative resolution from a held base */
	CHECK_EQ(dc_resolve(x.c, a, "b/g", 0, &st), 0);
	CHECK_EQ(st.ino, I.g);
	CHECK_EQ(dc_resolve(x.c, a, "../abs", 0, &st), 0);
	CHECK_EQ(st.ino, I.f);
	CHECK_EQ(dc_resolve(x.c, a, "/l/g", 0, &st), 0);
	CHECK_EQ(st.ino, I.g);
	CHECK_EQ(dc_walk(x.c, a, "b", 0, &d), 0);
	CHECK_EQ(dc_dentry_path(x.c, d, buf, sizeof(buf)), 4);
	CHECK(!strcmp(buf, "/a/b"));
	/* held entries survive a shrink to nothing */
	CHECK(dc_shrink(x.c, 0) >= 0);
	CHECK_EQ(dc_dentry_stat(d, &st), 0);
	CHECK_EQ(st.ino, I.b);
	dc_put(x.c, d);
	dc_put(x.c, f);
	dc_put(x.c, a);
	fx_close(&x);
}

/* Update calls, each mirrored on memfs first. */
static void test_updates(enum dc_mode mode)
{
	struct dc_dentry *a, *b;
	struct dc_inode in;
	unsigned long before;
	struct fx x;

	fx_open(&x, mode, 0, 0);
	CHECK_EQ(dc_walk(x.c, NULL, "a", 0, &a), 0);
	CHECK_EQ(dc_walk(x.c, NULL, "a/b", 0, &b), 0);
	CHECK_EQ(res(&x, "a/b/g", 0), I.g);

	/* create over a cached negative: no backend call afterwards */
	CHECK_EQ(res(&x, "a/new", 0), -ENOENT);
	CHECK_EQ(dc_memfs_add(x.fs, I.a, "new", S_IFREG | 0600, NULL, &in), 0);
	CHECK_EQ(dc_create(x.c, a, "new", &in), 0);
	before = x.k.lookups;
	CHECK_EQ(res(&x, "a/new", 0), in.ino);
	CHECK_EQ(x.k.lookups, before);

	/* unlink: negative answer from the cache */
	CHECK_EQ(dc_memfs_remove(x.fs, I.a, "new", 0), 0);
	CHECK_EQ(dc_unlink(x.c, a, "new"), 0);
	CHECK_EQ(res(&x, "a/new", 0), -ENOENT);
	CHECK_EQ(x.k.lookups, before);

	/* mkdir, symlink, link */
	CHECK_EQ(dc_memfs_add(x.fs, I.a, "d", S_IFDIR | 0700, NULL, &in), 0);
	CHECK_EQ(dc_mkdir(x.c, a, "d", &in), 0);
	CHECK_EQ(res(&x, "a/d", 0), in.ino);
	CHECK_EQ(dc_memfs_add(x.fs, I.a, "s", S_IFLNK | 0777, "b/g", &in), 0);
	CHECK_EQ(dc_symlink(x.c, a, "s", &in, "b/g"), 0);
	CHECK_EQ(res(&x, "a/s", 0), I.g);
	CHECK_EQ(res(&x, "a/s", DC_NOFOLLOW), in.ino);
	CHECK_EQ(dc_memfs_link(x.fs, I.f, I.b, "hard", &in), 0);
	CHECK_EQ(dc_link(x.c, b, "hard", &in), 0);
	CHECK_EQ(res(&x, "a/b/hard", 0), I.f);
	CHECK_EQ(x.k.lookups, before);
	CHECK_EQ(dc_mkdir(x.c, a, "x", &(struct dc_inode){ 99, 99, S_IFREG, 0 }), -EINVAL);
	CHECK_EQ(dc_link(x.c, a, "x", &(struct dc_inode){ 99, 99, S_IFDIR, 0 }), -EPERM);

	/* rename within a directory and across */
	CHECK_EQ(dc_memfs_rename(x.fs, I.a, "f", I.a, "f2", 0), 0);
	CHECK_EQ(dc_rename(x.c, a, "f", a, "f2", 0), 0);
	CHECK_EQ(res(&x, "a/f", 0), -ENOENT);
	CHECK_EQ(res(&x, "a/f2", 0), I.f);
	CHECK_EQ(res(&x, "abs", 0), -ENOENT);
	CHECK_EQ(dc_memfs_rename(x.fs, I.a, "f2", I.b, "a-long-name-over-thirty-two-bytes-long", 0), 0);
	CHECK_EQ(dc_rename(x.c, a, "f2", b, "a-long-name-over-thirty-two-bytes-long", 0), 0);
	CHECK_EQ(res(&x, "l/a-long-name-over-thirty-two-bytes-long", 0), I.f);
	CHECK_EQ(res(&x, "a/f2", 0), -ENOENT);
	/* rename over an existing name */
	CHECK_EQ(dc_memfs_rename(x.fs, I.b, "a-long-name-over-thirty-two-bytes-long", I.b, "g", 0), 0);
	CHECK_EQ(dc_rename(x.c, b, "a-long-name-over-thirty-two-bytes-long", b, "g", 0), 0);
	CHECK_EQ(res(&x, "a/b/g", 0), I.f);
	/* a directory with cached children, moved */
	CHECK_EQ(dc_memfs_rename(x.fs, I.a, "b", DC_MEMFS_ROOT, "b", 0), 0);
	CHECK_EQ(dc_rename(x.c, a, "b", x.root, "b", 0), 0);
	CHECK_EQ(res(&x, "b/g", 0), I.f);
	CHECK_EQ(res(&x, "a/b/g", 0), -ENOENT);
	CHECK_EQ(res(&x, "l", 0), -ENOENT);
	/* into its own subtree */
	CHECK_EQ(dc_rename(x.c, x.root, "a", a, "x", 0), -EINVAL);
	CHECK_EQ(dc_rename(x.c, x.root, "b", b, "x", 0), -EINVAL);
	CHECK_EQ(res(&x, "b/g", 0), I.f);
	/* ... as the cache's stale tree has it: the backend moved p/q out of
	 * p behind its back, then p into q.  Told of the second, the cache
	 * refuses it, and forgets the names it can no longer trust */
	{
		struct dc_inode p, q;
		struct dc_dentry *qd;

		CHECK_EQ(dc_memfs_add(x.fs, DC_MEMFS_ROOT, "p", S_IFDIR | 0755, NULL, &p), 0);
		CHECK_EQ(dc_memfs_add(x.fs, p.ino, "q", S_IFDIR | 0755, NULL, &q), 0);
		CHECK_EQ(dc_walk(x.c, NULL, "p/q", 0, &qd), 0);
		CHECK_EQ(dc_memfs_rename(x.fs, p.ino, "q", DC_MEMFS_ROOT, "q", 0), 0);
		CHECK_EQ(dc_memfs_rename(x.fs, DC_MEMFS_ROOT, "p", q.ino, "p", 0), 0);
		CHECK_EQ(dc_rename(x.c, x.root, "p", qd, "p", 0), -EINVAL);
		CHECK_EQ(res(&x, "p", 0), -ENOENT);
		CHECK_EQ(res(&x, "q/p", 0), (int64_t)p.ino);
		dc_put(x.c, qd);
	}
	/* exchange */
	CHECK_EQ(dc_memfs_rename(x.fs, DC_MEMFS_ROOT, "a", DC_MEMFS_ROOT, "b", DC_RENAME_EXCHANGE), 0);
	CHECK_EQ(dc_rename(x.c, x.root, "a", x.root, "b", DC_RENAME_EXCHANGE), 0);
	CHECK_EQ(res(&x, "a/g", 0), I.f);
	CHECK_EQ(res(&x, "b/d", 0) > 0, 1);
	CHECK_EQ(res(&x, "a", 0), I.b);
	/* noreplace: like a plain rename */
	CHECK_EQ(dc_memfs_add(x.fs, DC_MEMFS_ROOT, "nr", S_IFREG | 0644, NULL, &in), 0);
	CHECK_EQ(res(&x, "nr", 0), in.ino);
	CHECK_EQ(res(&x, "nr2", 0), -ENOENT);
	CHECK_EQ(dc_memfs_rename(x.fs, DC_MEMFS_ROOT, "nr", DC_MEMFS_ROOT, "nr2", DC_RENAME_NOREPLACE), 0);
	CHECK_EQ(dc_rename(x.c, x.root, "nr", x.root, "nr2", DC_RENAME_NOREPLACE), 0);
	CHECK_EQ(res(&x, "nr2", 0), in.ino);
	CHECK_EQ(res(&x, "nr", 0), -ENOENT);
	CHECK_EQ(dc_rename(x.c, x.root, "a", x.root, "b", 3), -EINVAL);
	CHECK_EQ(dc_rename(x.c, x.root, "a", x.root, "a", 0), 0);

	/* rmdir of a directory with cached children */
	CHECK_EQ(res(&x, "b/d", 0) > 0, 1);
	CHECK_EQ(dc_memfs_remove(x.fs, I.a, "d", 1), 0);
	CHECK_EQ(dc_rmdir(x.c, a, "d"), 0);	/* a's directory is named b now */
	CHECK_EQ(res(&x, "b/d", 0), -ENOENT);

	/* bad names */
	CHECK_EQ(dc_create(x.c, a, NULL, &in), -EINVAL);
	CHECK_EQ(dc_create(x.c, a, "", &in), -EINVAL);
	CHECK_EQ(dc_create(x.c, a, "x/y", &in), -EINVAL);
	CHECK_EQ(dc_create(x.c, a, ".", &in), -EINVAL);
	CHECK_EQ(dc_create(x.c, a, "..", &in), -EINVAL);
	CHECK_EQ(dc_create(x.c, a, NULL, NULL), -EINVAL);
	CHECK_EQ(dc_unlink(NULL, a, "x"), -EINVAL);
	CHECK_EQ(dc_unlink(x.c, NULL, "x"), -EINVAL);
	{
		char n256[257];

		memset(n256, 'x', 256);
		n256[256] = '\0';
		CHECK_EQ(dc_create(x.c, a, n256, &in), -ENAMETOOLONG);
		CHECK_EQ(dc_unlink(x.c, a, n256), -ENAMETOOLONG);
	}
	dc_put(x.c, b);
	dc_put(x.c, a);
	fx_close(&x);
}

/* Changes behind the cache's back show after invalidation. */
static void test_invalidate(enum dc_mode mode)
{
	struct dc_dentry *a;
	struct dc_inode in;
	struct fx x;

	fx_open(&x, mode, 0, 0);
	CHECK_EQ(dc_walk(x.c, NULL, "a", 0, &a), 0);
	CHECK_EQ(res(&x, "a/hidden", 0), -ENOENT);
	CHECK_EQ(dc_memfs_add(x.fs, I.a, "hidden", S_IFREG | 0644, NULL, &in), 0);
	CHECK_EQ(res(&x, "a/hidden", 0), -ENOENT);	/* cached negative */
	CHECK_EQ(dc_invalidate_name(x.c, a, "hidden"), 0);
	CHECK_EQ(res(&x, "a/hidden", 0), in.ino);
	CHECK_EQ(dc_memfs_remove(x.fs, I.a, "hidden", 0), 0);
	CHECK_EQ(res(&x, "a/hidden", 0), in.ino);	/* stale until told */
	CHECK_EQ(dc_invalidate(x.c, a), 0);
	CHECK_EQ(res(&x, "a/hidden", 0), -ENOENT);
	CHECK_EQ(res(&x, "a/b/g", 0), I.g);
	/* the held, now unhashed, a still answers truthfully */
	{
		struct dc_inode st;

		CHECK_EQ(dc_resolve(x.c, a, "b/g", 0, &st), 0);
		CHECK_EQ(st.ino, I.g);
		CHECK_EQ(dc_resolve(x.c, a, "hidden", 0, &st), -ENOENT);
	}
	CHECK_EQ(res(&x, "a/b/h2", 0), -ENOENT);
	CHECK_EQ(dc_memfs_add(x.fs, I.b, "h2", S_IFREG | 0644, NULL, &in), 0);
	CHECK_EQ(res(&x, "a/b/h2", 0), -ENOENT);
	CHECK_EQ(dc_invalidate(x.c, x.root), 0);
	CHECK_EQ(res(&x, "a/b/h2", 0), in.ino);
	CHECK_EQ(dc_invalidate(NULL, a), -EINVAL);
	CHECK_EQ(dc_invalidate_name(x.c, a, "a/b"), -EINVAL);
	dc_put(x.c, a);
	fx_close(&x);
}

/* Caps hold; answers stay right while entries come and go. */
static void test_lru(enum dc_mode mode)
{
	struct dc_stats st;
	char name[32];
	struct fx x;
	uint64_t ino[2000];
	int i, round;

	fx_open(&x, mode, 200, 50);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ino[i] = add(x.fs, I.b, name, S_IFREG | 0644, NULL);
	}
	for (round = 0; round < 2; round++)
		for (i = 0; i < 2000; i++) {
			snprintf(name, sizeof(name), "a/b/n%d", i);
			CHECK_EQ(res(&x, name, 0), ino[i]);
			snprintf(name, sizeof(name), "a/b/m%d", i);
			CHECK_EQ(res(&x, name, 0), -ENOENT);
		}
	/* within an eighth of the caps at once (the adders see to that);
	 * within them once the shrinker thread has run */
	dc_get_stats(x.c, &st);
	CHECK(st.entries <= 200 + 200 / 8 + 1);
	CHECK(st.negative <= 50 + 50 / 8 + 1);
	CHECK(h_within_caps(x.c, 200 + 1, 50 + 1));
	dc_get_stats(x.c, &st);
	CHECK(st.evictions >= 3500);
	CHECK_EQ(dc_debug_check(x.c), 0);
	/* shrink to nothing leaves only the root, in one call */
	CHECK(dc_shrink(x.c, 0) > 0);
	dc_get_stats(x.c, &st);
	CHECK_EQ(st.entries, 1);
	CHECK_EQ(st.negative, 0);
	CHECK_EQ(res(&x, "a/b/n7", 0), ino[7]);
	CHECK_EQ(dc_shrink(NULL, 0), -EINVAL);
	fx_close(&x);
}

/*
 * One dc_shrink(c, 0) takes every unused entry, whichever list the
 * scans find it on: a directory whose last child is taken after the
 * positive list was scanned (others: a/b/nope and a/b/g cached too), and
 * an entry listed negative (a lookup's, while PENDING) that is positive
 * now and used since, so that the scan that finds it only clears its
 * mark and moves it.  Without the others, that move is all the first
 * round does.
 */
static void test_shrink_all(enum dc_mode mode, bool others)
{
	struct dc_stats st;
	struct dc_dentry *a;
	struct dc_inode in;
	struct fx x;

	fx_open(&x, mode, 0, 0);
	if (others) {
		CHECK_EQ(res(&x, "a/b/nope", 0), -ENOENT);
		CHECK_EQ(res(&x, "a/b/g", 0), I.g);
	}
	CHECK_EQ(res(&x, "a/late", 0), -ENOENT);
	CHECK_EQ(dc_walk(x.c, NULL, "a", 0, &a), 0);
	CHECK_EQ(dc_memfs_add(x.fs, I.a, "late", S_IFREG | 0600, NULL, &in), 0);
	CHECK_EQ(dc_create(x.c, a, "late", &in), 0);
	dc_put(x.c, a);
	CHECK_EQ(res(&x, "a/late", 0), in.ino);
	CHECK_EQ(res(&x, "a/late", 0), in.ino);
	dc_get_stats(x.c, &st);
	/* /, a, late; and b, nope, g */
	CHECK_EQ(st.entries, others ? 6 : 3);
	CHECK_EQ(dc_shrink(x.c, 0), others ? 5 : 2);
	dc_get_stats(x.c, &st);
	CHECK_EQ(st.entries, 1);
	CHECK_EQ(st.negative, 0);
	CHECK_EQ(res(&x, "a/late", 0), in.ino);
	fx_close(&x);
}

/*
 * Allocation failures, counted: what dc_debug_failed_allocs() says failed
 * since the last call, and what the calls under injection answered.
 */
struct injected {
	struct fx *x;
	uint64_t seen;		/* dc_debug_failed_allocs() after the last call */
	unsigned hit_calls;	/* calls that had an allocation fail */
	unsigned nomem;		/* calls that returned -ENOMEM */
};

/*
 * After one call under injection that returned r: did an allocation fail
 * in it?  -ENOMEM without one would be the cache inventing the error; with
 * one, the cache must still pass its own check (it may forget, not lie).
 */
static bool injected_call(struct injected *s, int64_t r)
{
	uint64_t now = dc_debug_failed_allocs();
	bool failed = now > s->seen;

	s->seen = now;
	CHECK(r != -ENOMEM || failed);
	if (failed) {
		s->hit_calls++;
		CHECK_EQ(dc_debug_check(s->x->c), 0);
	}
	s->nomem += r == -ENOMEM;
	return failed;
}

/* A resolve under injection: the right answer, or -ENOMEM if it failed. */
static void injected_res(struct injected *s, const char *path, int64_t want)
{
	int64_t r = res(s->x, path, 0);

	if (injected_call(s, r))
		CHECK(r == want || r == -ENOMEM);
	else
		CHECK_EQ(r, want);
}

/*
 * An update under injection: 0, or -ENOMEM.  An allocation can fail and
 * the call still return 0: one it did not need (the new name of a rename
 * whose source is not cached), or a hint (a negative entry).
 */
static void injected_update(struct injected *s, int err)
{
	injected_call(s, err);
	CHECK(err == 0 || err == -ENOMEM);
}

/*
 * Allocation failures: every every-th allocation fails.  Each scenario
 * must really fail some (an allocation that bypassed the injection, or an
 * injection that stopped, would make these tests vacuous); each call
 * answers right or says -ENOMEM, and only when one of its allocations
 * failed; and once injection stops every answer is right again (the cache
 * never lied).
 */
static void test_enomem(enum dc_mode mode)
{
	static const char *paths[] = { "a/b/g", "l/g", "abs", "a/zz", "up/b", "dang" };
	static const char *long_name = "renamed-to-a-name-longer-than-32-bytes";
	int64_t want[6];
	struct dc_dentry *a;
	struct dc_inode in;
	long every;
	unsigned p;
	int err;

	for (every = 1; every <= 12; every++) {
		struct fx x;
		struct injected s = { &x, 0, 0, 0 };

		fx_open(&x, mode, 0, 0);
		want[0] = I.g; want[1] = I.g; want[2] = I.f;
		want[3] = -ENOENT; want[4] = I.b; want[5] = -ENOENT;
		CHECK_EQ(dc_walk(x.c, NULL, "a", 0, &a), 0);
		dc_debug_fail_alloc(every, 0);
		/* with every allocation failing, every miss must fail (each
		 * path here needs one): none may allocate past the injection */
		for (p = 0; p < 6; p++)
			injected_res(&s, paths[p], every == 1 ? -ENOMEM : want[p]);
		CHECK_EQ(dc_memfs_add(x.fs, I.a, "zz", S_IFREG | 0644, NULL, &in), 0);
		err = dc_create(x.c, a, "zz", &in);
		injected_update(&s, err);
		if (every == 1)		/* nor may its new entry */
			CHECK_EQ(err, -ENOMEM);
		want[3] = in.ino;
		CHECK_EQ(dc_memfs_rename(x.fs, I.a, "f", I.a, long_name, 0), 0);
		injected_update(&s, dc_rename(x.c, a, "f", a, long_name, 0));
		want[2] = -ENOENT;
		CHECK_EQ(dc_memfs_remove(x.fs, I.b, "g", 0), 0);
		/* a name never seen; dc_unlink is documented to return 0
		 * whatever memory there is */
		err = dc_unlink(x.c, a, "x");
		injected_call(&s, err);
		CHECK_EQ(err, 0);
		dc_debug_fail_alloc(0, 0);
		if (s.hit_calls == 0 || s.nomem == 0)
			fprintf(stderr, "test_enomem: mode %s, every %ld: %u calls had an "
				"allocation fail, %u returned -ENOMEM\n", dc_mode_name(mode),
				every, s.hit_calls, s.nomem);
		CHECK(s.hit_calls > 0);
		CHECK(s.nomem > 0);
		/* g went away behind the cache: tell it, as a file system would */
		{
			struct dc_dentry *b;

			CHECK_EQ(dc_walk(x.c, NULL, "a/b", 0, &b), 0);
			CHECK_EQ(dc_unlink(x.c, b, "g"), 0);
			dc_put(x.c, b);
		}
		want[0] = want[1] = -ENOENT;
		for (p = 0; p < 6; p++)
			CHECK_EQ(res(&x, paths[p], 0), want[p]);
		CHECK_EQ(res(&x, "a/renamed-to-a-name-longer-than-32-bytes", 0), I.f);
		dc_put(x.c, a);
		fx_close(&x);
	}
}

/*
 * A handle held on a directory whose parent the cache forgot -- by an
 * invalidation, an exchange, or a rename that could not allocate its new
 * name: updates through the handle and lookups by path must agree, both
 * ways.  A forgotten directory's subtree left hashed would let the handle
 * feed a copy of the directory that no path reaches any more.
 */
static void test_forgotten_parent(enum dc_mode mode)
{
	int how;

	for (how = 0; how < 3; how++) {
		struct dc_dentry *a, *b, *b2;
		struct dc_inode in, in2, c;
		const char *path = "c/b/x", *dir = "c/b";
		struct dc_inode st;
		struct fx x;

		fx_open(&x, mode, 0, 0);
		CHECK_EQ(dc_walk(x.c, NULL, "a", 0, &a), 0);
		CHECK_EQ(dc_walk(x.c, NULL, "a/b", 0, &b), 0);
		CHECK_EQ(res(&x, "a/b/g", 0), I.g);
		if (how == 0) {
			CHECK_EQ(dc_invalidate(x.c, a), 0);
			path = "a/b/x";
			dir = "a/b";
		} else if (how == 1) {
			CHECK_EQ(dc_memfs_rename(x.fs, DC_MEMFS_ROOT, "a", DC_MEMFS_ROOT,
						 "c", 0), 0);
			dc_debug_fail_alloc(1, 0);
			CHECK_EQ(dc_rename(x.c, x.root, "a", x.root, "c", 0), -ENOMEM);
			dc_debug_fail_alloc(0, 0);
		} else {
			CHECK_EQ(dc_memfs_add(x.fs, DC_MEMFS_ROOT, "c", S_IFDIR | 0755,
					      NULL, &c), 0);
			CHECK_EQ(dc_mkdir(x.c, x.root, "c", &c), 0);
			CHECK_EQ(dc_memfs_rename(x.fs, DC_MEMFS_ROOT, "a", DC_MEMFS_ROOT,
						 "c", DC_RENAME_EXCHANGE), 0);
			CHECK_EQ(dc_rename(x.c, x.root, "a", x.root, "c",
					   DC_RENAME_EXCHANGE), 0);
		}
		CHECK_EQ(dc_debug_check(x.c), 0);
		/* through the handle, then by path (a negative entry cached) */
		CHECK_EQ(dc_resolve(x.c, b, "x", 0, &st), -ENOENT);
		CHECK_EQ(res(&x, path, 0), -ENOENT);
		CHECK_EQ(dc_memfs_add(x.fs, I.b, "x", S_IFREG | 0644, NULL, &in), 0);
		CHECK_EQ(dc_create(x.c, b, "x", &in), 0);
		CHECK_EQ(res(&x, path, 0), in.ino);
		CHECK_EQ(dc_resolve(x.c, b, "x", 0, &st), 0);
		CHECK_EQ(st.ino, in.ino);
		CHECK_EQ(dc_memfs_remove(x.fs, I.b, "x", 0), 0);
		CHECK_EQ(dc_unlink(x.c, b, "x"), 0);
		CHECK_EQ(res(&x, path, 0), -ENOENT);
		CHECK_EQ(dc_resolve(x.c, b, "x", 0, &st), -ENOENT);
		/* the other way: an update through the directory found by path */
		CHECK_EQ(dc_walk(x.c, NULL, dir, 0, &b2), 0);
		CHECK_EQ(dc_resolve(x.c, b, "y", 0, &st), -ENOENT);
		CHECK_EQ(dc_memfs_add(x.fs, I.b, "y", S_IFREG | 0644, NULL, &in2), 0);
		CHECK_EQ(dc_create(x.c, b2, "y", &in2), 0);
		CHECK_EQ(dc_resolve(x.c, b, "y", 0, &st), 0);
		CHECK_EQ(st.ino, in2.ino);
		CHECK_EQ(dc_resolve(x.c, b, "g", 0, &st), 0);
		CHECK_EQ(st.ino, I.g);
		CHECK_EQ(dc_debug_check(x.c), 0);
		dc_put(x.c, b2);
		dc_put(x.c, b);
		dc_put(x.c, a);
		fx_close(&x);
	}
}

static void test_create_errors(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_backend_ops noroot = { 0 };
	struct dc_cache *c;
	struct dc_memfs *fs;
	enum dc_mode m;

	CHECK_EQ(dc_cache_create(NULL, &c), -EINVAL);
	CHECK_EQ(dc_cache_create(&o, &c), -EINVAL);
	o.backend.ops = &noroot;
	CHECK_EQ(dc_cache_create(&o, &c), -EINVAL);
	CHECK_EQ(dc_memfs_new(&fs), 0);
	o.backend = dc_memfs_backend(fs);
	o.mode = (enum dc_mode)7;
	CHECK_EQ(dc_cache_create(&o, &c), -EINVAL);
	o.mode = DC_MODE_RWLOCK;
	dc_debug_fail_alloc(1, 0);
	CHECK_EQ(dc_cache_create(&o, &c), -ENOMEM);
	dc_debug_fail_alloc(0, 0);
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	dc_cache_destroy(c);
	dc_cache_destroy(NULL);
	dc_memfs_free(fs);
	CHECK_EQ(dc_mode_parse("global", &m), 0);
	CHECK_EQ(m, DC_MODE_GLOBAL);
	CHECK_EQ(dc_mode_parse("nope", &m), -EINVAL);
	CHECK(!strcmp(dc_mode_name(DC_MODE_RCU), "rcu"));
	CHECK(dc_mode_name((enum dc_mode)9) == NULL);
	CHECK_EQ(dc_debug_live_entries(), 0);
	{
		struct dc_backend be;

		CHECK_EQ(dc_hostfs_backend("/nonexistent-dir-for-test", &be), -ENOENT);
		CHECK_EQ(dc_hostfs_backend("/etc/passwd", &be), -ENOTDIR);
	}
}

int main(void)
{
	enum dc_mode m;

	test_create_errors();
	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		test_paths(m);
		test_symlink_limit(m);
		test_hits_and_stats(m);
		test_lookup_and_refs(m);
		test_updates(m);
		test_invalidate(m);
		test_lru(m);
		test_shrink_all(m, true);
		test_shrink_all(m, false);
		test_enomem(m);
		test_forgotten_parent(m);
	}
	return h_done("test_cache");
}
