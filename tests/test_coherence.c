/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_coherence.c - changes made behind the cache: expiry, revalidation
 * and the push calls (dcache.h, "Coherence").  memfs calls change the
 * namespace without telling the cache, so each is a change made behind
 * it; a scriptable backend stands in where a call must hang or be counted.
 * In each mode:
 *
 *  - ttl: with TTLs on, positive and negative answers two levels deep
 *    that changed behind (added, removed, renamed) give the new truth once
 *    their TTL is past; a cache without TTLs still gives the old ones
 *    after the same wait;
 *  - revalidation keeps what did not change: the same entry after expiry,
 *    one backend call per expired component, held references still good;
 *  - the revalidate hook: called instead of lookup; 1 keeps the entry,
 *    0 and an error make the cache look the name up again;
 *  - single flight: four threads on one expired entry make one backend
 *    call, and all get its answer;
 *  - dc_invalidate_child: a created, removed or retyped name shows at
 *    once; a directory the cache does not hold, or another gen, costs
 *    nothing; bad names and a NULL cache are refused;
 *  - dc_invalidate_inode: every hard link of a file, a directory with all
 *    cached below it (not its siblings), the root (everything); an unknown
 *    inode and a symlink: nothing;
 *  - dc_invalidate_all and dc_set_ttl (on: forgets, answers expire; off:
 *    answers never expire);
 *  - a backend lookup in flight across a push is answered, not cached;
 *  - stress: readers against a writer changing memfs behind and pushing,
 *    toggling TTLs; afterwards every path answers memfs's truth, the cache
 *    is consistent and nothing is leaked.
 * Expiry needs real time to pass (sleeps a little over each TTL); no test
 * asserts that anything happens within a bounded time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcache-debug.h"
#include "harness.h"
#include "memfs_tree.h"

static struct dc_cache *open_cache(enum dc_mode mode, struct dc_backend be,
				   uint32_t ttl, uint32_t neg_ttl)
{
	struct dc_options o = { .mode = mode, .backend = be, .ttl_ms = ttl,
				.neg_ttl_ms = neg_ttl };
	struct dc_cache *c = NULL;

	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

static struct dc_cache *open_memfs(enum dc_mode mode, uint32_t ttl, uint32_t neg_ttl)
{
	return open_cache(mode, dc_memfs_backend(fs), ttl, neg_ttl);
}

/* The answer for path: its inode number, or -errno. */
static int64_t res_flags(struct dc_cache *c, const char *path, unsigned flags)
{
	struct dc_inode st;
	int err = dc_resolve(c, NULL, path, flags, &st);

	return err ? err : (int64_t)st.ino;
}

static int64_t res(struct dc_cache *c, const char *path)
{
	return res_flags(c, path, 0);
}

/* Answers the one-probe table gave (path.c). */
static uint64_t path_hits(struct dc_cache *c)
{
	struct dc_stats st;

	dc_get_stats(c, &st);
	return st.path_hits;
}

/* The same through dc_walk and the reference it returns. */
static int64_t walk_ino(struct dc_cache *c, const char *path)
{
	struct dc_dentry *d;
	struct dc_inode st;
	int err = dc_walk(c, NULL, path, 0, &d);

	if (err)
		return err;
	err = dc_dentry_stat(d, &st);
	dc_put(c, d);
	return err ? err : (int64_t)st.ino;
}

static uint64_t misses(struct dc_cache *c)
{
	struct dc_stats st;

	dc_get_stats(c, &st);
	return st.misses;
}

/* ---- a scriptable backend ------------------------------------------------
 *
 * The root (ino 1) holds "sub", a directory (ino 2), and names "n0".."n99";
 * so does sub, from the same table.  Lookups of a name can be made to hang
 * until released; the revalidate hook (one ops table has it) answers what
 * the test says and records what it was asked.
 */

struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned long calls[100];	/* lookups of each name */
	bool hold[100];
	int inflight[100];		/* lookups waiting in hold */
	uint64_t ino[100];		/* 0: no such name */
	unsigned long reval_calls;
	int reval_answer;
	struct dc_inode reval_cached;	/* what the last revalidate was asked */
	char reval_name[8];
	uint32_t sub_mode;		/* "sub"'s mode (chmod behind) */
	unsigned long sub_calls;	/* lookups of "sub" */
};

static struct fake fk;

static int f_root(void *ctx, struct dc_inode *out)
{
	(void)ctx;
	*out = (struct dc_inode){ 1, 1, DIR_M, 0 };
	return 0;
}

static int f_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		    size_t len, struct dc_inode *out)
{
	struct fake *f = ctx;
	struct timespec until;
	int i = h_name_index(name, len), err = 0;

	if (dir->ino == 1 && len == 3 && !memcmp(name, "sub", 3)) {
		pthread_mutex_lock(&f->lock);
		f->sub_calls++;
		*out = (struct dc_inode){ 2, 2, f->sub_mode, 0 };
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	if ((dir->ino != 1 && dir->ino != 2) || i < 0)
		return -ENOENT;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;	/* safety only: the test releases holds itself */
	pthread_mutex_lock(&f->lock);
	f->calls[i]++;
	f->inflight[i]++;
	pthread_cond_broadcast(&f->cv);
	while (f->hold[i])
		if (pthread_cond_timedwait(&f->cv, &f->lock, &until) == ETIMEDOUT)
			break;
	f->inflight[i]--;
	if (!f->ino[i])
		err = -ENOENT;
	else
		*out = (struct dc_inode){ f->ino[i], f->ino[i], REG_M, 0 };
	pthread_mutex_unlock(&f->lock);
	return err;
}

static int f_revalidate(void *ctx, const struct dc_inode *dir, const char *name,
			size_t len, const struct dc_inode *cached)
{
	struct fake *f = ctx;
	int answer;

	(void)dir;
	pthread_mutex_lock(&f->lock);
	f->reval_calls++;
	f->reval_cached = *cached;
	snprintf(f->reval_name, sizeof(f->reval_name), "%.*s", (int)len, name);
	answer = f->reval_answer;
	pthread_mutex_unlock(&f->lock);
	return answer;
}

static const struct dc_backend_ops fake_ops = { .root = f_root, .lookup = f_lookup };
static const struct dc_backend_ops fake_reval_ops = {
	.root = f_root, .lookup = f_lookup, .revalidate = f_revalidate,
};

static struct dc_cache *open_fake(enum dc_mode mode, bool hook, uint32_t ttl)
{
	struct dc_backend be = { hook ? &fake_reval_ops : &fake_ops, &fk };

	pthread_mutex_lock(&fk.lock);
	memset(fk.calls, 0, sizeof(fk.calls));
	memset(fk.hold, 0, sizeof(fk.hold));
	memset(fk.ino, 0, sizeof(fk.ino));
	fk.reval_calls = 0;
	fk.reval_answer = 1;
	fk.sub_mode = DIR_M;
	fk.sub_calls = 0;
	pthread_mutex_unlock(&fk.lock);
	return open_cache(mode, be, ttl, ttl);
}

static void fake_set(int i, uint64_t ino, bool hold)
{
	pthread_mutex_lock(&fk.lock);
	fk.ino[i] = ino;
	fk.hold[i] = hold;
	pthread_cond_broadcast(&fk.cv);
	pthread_mutex_unlock(&fk.lock);
}

static unsigned long fake_calls(int i)
{
	unsigned long n;

	pthread_mutex_lock(&fk.lock);
	n = fk.calls[i];
	pthread_mutex_unlock(&fk.lock);
	return n;
}

/* Wait (bounded: a safety net, not a measure) until n lookups of name i
 * sit in the backend. */
static bool wait_inflight(int i, int n)
{
	return h_wait_at_least(&fk.lock, &fk.cv, &fk.inflight[i], n);
}

struct job {
	struct dc_cache *c;
	const char *path;
	int64_t result;
};

static void *resolver(void *arg)
{
	struct job *j = arg;

	j->result = res(j->c, j->path);
	return NULL;
}

/* ---- expiry ---------------------------------------------------------------- */

/*
 * Two caches over one memfs, one with TTLs of 200 ms and one without; both
 * learn the same answers, then memfs changes behind them.  After 250 ms the
 * first gives the new truth everywhere, the second still the old answers.
 * The answers are asked three times before the change, so that in rcu
 * mode the one-probe table holds them (made by the second, used by the
 * third): a path node must not outlive the TTLs of the entries it rests
 * on.
 */
static void test_ttl(enum dc_mode mode)
{
	static const char *const paths[] = {
		"/a/b/f", "/a/b/n", "/a/b/h", "/a/b/h2", "/a/x", "/a/b/f/y",
	};
	struct dc_cache *ttl, *plain;
	uint64_t a, b, f, h, n, x;
	int64_t old[6];
	size_t i;

	fresh_fs();
	a = add(DC_MEMFS_ROOT, "a", DIR_M, NULL);
	b = add(a, "b", DIR_M, NULL);
	f = add(b, "f", REG_M, NULL);
	h = add(b, "h", REG_M, NULL);
	ttl = open_memfs(mode, 200, 200);
	plain = open_memfs(mode, 0, 0);
	for (i = 0; i < 6; i++) {
		old[i] = res(ttl, paths[i]);
		CHECK_EQ(res(plain, paths[i]), old[i]);
	}
	for (int k = 0; k < 2; k++)
		for (i = 0; i < 6; i++)
			CHECK_EQ(res(ttl, paths[i]), old[i]);
	if (mode == DC_MODE_RCU)	/* nodes for f, n, h, h2 and x */
		CHECK_EQ(path_hits(ttl), 5);
	CHECK_EQ(old[0], f);
	CHECK_EQ(old[1], -ENOENT);
	CHECK_EQ(old[2], h);
	CHECK_EQ(old[3], -ENOENT);
	CHECK_EQ(old[4], -ENOENT);
	CHECK_EQ(old[5], -ENOTDIR);

	/* behind the caches: positive gone, negative created, a rename, a
	 * name one level up created, a file turned into a directory */
	CHECK_EQ(dc_memfs_remove(fs, b, "f", 0), 0);
	f = add(b, "f", DIR_M, NULL);
	add(f, "y", REG_M, NULL);
	n = add(b, "n", REG_M, NULL);
	CHECK_EQ(dc_memfs_rename(fs, b, "h", b, "h2", 0), 0);
	x = add(a, "x", DIR_M, NULL);
	h_sleep_ms(250);

	CHECK_EQ(res(ttl, "/a/b/f"), f);
	CHECK_EQ(walk_ino(ttl, "/a/b/n"), n);
	CHECK_EQ(res(ttl, "/a/b/h"), -ENOENT);
	CHECK_EQ(res(ttl, "/a/b/h2"), h);
	CHECK_EQ(walk_ino(ttl, "/a/x"), x);
	CHECK(res(ttl, "/a/b/f/y") > 0);
	/* without TTLs nothing told the cache: the old answers stand */
	for (i = 0; i < 6; i++)
		CHECK_EQ(res(plain, paths[i]), old[i]);
	close_cache(ttl);
	close_cache(plain);
}

/*
 * An expired answer that is still true is kept: the same entry, one
 * backend call per expired component (the root does not count), and a
 * reference held across it still answers.
 */
static void test_reval_keeps(enum dc_mode mode)
{
	struct dc_dentry *held, *d1, *d2;
	struct dc_cache *c;
	struct dc_inode st;
	uint64_t p, q, m0;

	fresh_fs();
	p = add(DC_MEMFS_ROOT, "p", DIR_M, NULL);
	q = add(p, "q", DIR_M, NULL);
	c = open_memfs(mode, 30, 30);
	CHECK_EQ(dc_walk(c, NULL, "/p/q", 0, &held), 0);
	CHECK_EQ(dc_walk(c, NULL, "/p/q", 0, &d1), 0);
	dc_put(c, d1);
	CHECK(d1 == held);
	CHECK_EQ(res(c, "/p/q/nope"), -ENOENT);
	h_sleep_ms(50);

	m0 = misses(c);
	CHECK_EQ(dc_walk(c, NULL, "/p/q", 0, &d2), 0);
	CHECK(d2 == d1);			/* revalidated, not replaced */
	CHECK_EQ(misses(c), m0 + 2);		/* p and q */
	dc_put(c, d2);
	CHECK_EQ(dc_dentry_stat(held, &st), 0);
	CHECK_EQ(st.ino, q);

	h_sleep_ms(50);
	m0 = misses(c);
	CHECK_EQ(res(c, "/p/q/nope"), -ENOENT);	/* a negative is kept too */
	CHECK_EQ(misses(c), m0 + 3);

	/* changed behind: the held entry keeps its inode, the path moves on */
	h_sleep_ms(50);
	CHECK_EQ(dc_memfs_rename(fs, p, "q", DC_MEMFS_ROOT, "q", 0), 0);
	q = add(p, "q", DIR_M, NULL);
	CHECK_EQ(walk_ino(c, "/p/q"), q);
	CHECK_EQ(dc_dentry_stat(held, &st), 0);
	CHECK(st.ino != q);
	dc_put(c, held);
	close_cache(c);
}

/* The backend's revalidate hook decides: 1 keeps, 0 or an error looks again. */
static void test_hook(enum dc_mode mode)
{
	struct dc_cache *c = open_fake(mode, true, 30);
	struct dc_dentry *d1, *d2;

	fake_set(1, 11, false);
	CHECK_EQ(dc_walk(c, NULL, "n1", 0, &d1), 0);
	dc_put(c, d1);
	CHECK_EQ(res(c, "n2"), -ENOENT);
	CHECK_EQ(fake_calls(1), 1);
	CHECK_EQ(fake_calls(2), 1);
	CHECK_EQ(fk.reval_calls, 0);		/* nothing expired yet */
	h_sleep_ms(50);

	/* 1: still true, no lookup, the same entry */
	CHECK_EQ(dc_walk(c, NULL, "n1", 0, &d2), 0);
	CHECK(d2 == d1);
	dc_put(c, d2);
	CHECK_EQ(fk.reval_calls, 1);
	CHECK_EQ(fake_calls(1), 1);
	CHECK_EQ(fk.reval_cached.ino, 11);
	CHECK_EQ(fk.reval_cached.mode, REG_M);
	CHECK(!strcmp(fk.reval_name, "n1"));
	CHECK_EQ(res(c, "n2"), -ENOENT);	/* a negative: asked with mode 0 */
	CHECK_EQ(fk.reval_calls, 2);
	CHECK_EQ(fake_calls(2), 1);
	CHECK_EQ(fk.reval_cached.mode, 0);
	CHECK(!strcmp(fk.reval_name, "n2"));

	/* 0: changed, the name is looked up again */
	h_sleep_ms(50);
	fake_set(1, 12, false);
	fake_set(2, 22, false);
	fk.reval_answer = 0;
	CHECK_EQ(res(c, "n1"), 12);
	CHECK_EQ(fk.reval_calls, 3);
	CHECK_EQ(fake_calls(1), 2);
	CHECK_EQ(res(c, "n2"), 22);
	CHECK_EQ(fk.reval_calls, 4);
	CHECK_EQ(fake_calls(2), 2);

	/* an error: the entry is forgotten and the name looked up again */
	h_sleep_ms(50);
	fake_set(1, 13, false);
	fk.reval_answer = -EIO;
	CHECK_EQ(res(c, "n1"), 13);
	CHECK_EQ(fk.reval_calls, 5);
	CHECK_EQ(fake_calls(1), 3);
	close_cache(c);
}

/* Four threads on one expired entry: one backend call, one answer. */
static void test_reval_single_flight(enum dc_mode mode)
{
	struct dc_cache *c = open_fake(mode, false, 30);
	struct job jobs[4];
	pthread_t t[4];
	unsigned long held_calls;
	int i;

	fake_set(3, 33, false);
	CHECK_EQ(res(c, "n3"), 33);
	h_sleep_ms(50);
	fake_set(3, 33, true);
	for (i = 0; i < 4; i++) {
		jobs[i] = (struct job){ c, "n3", 0 };
		pthread_create(&t[i], NULL, resolver, &jobs[i]);
	}
	CHECK(wait_inflight(3, 1));
	/* give the others every chance to (wrongly) call the backend too */
	usleep(100 * 1000);
	held_calls = fake_calls(3) - 1;
	fake_set(3, 33, false);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(jobs[i].result, 33);
	}
	CHECK_EQ(held_calls, 1);
	close_cache(c);
}

/* ---- push ------------------------------------------------------------------ */

static void test_push_child(enum dc_mode mode)
{
	char big[DC_NAME_MAX + 2];
	struct dc_cache *c;
	uint64_t d, u, x, z, r, y, w, m0;

	fresh_fs();
	d = add(DC_MEMFS_ROOT, "d", DIR_M, NULL);
	u = add(DC_MEMFS_ROOT, "u", DIR_M, NULL);
	x = add(d, "x", REG_M, NULL);
	z = add(d, "z", REG_M, NULL);
	add(u, "k", REG_M, NULL);
	c = open_memfs(mode, 0, 0);
	CHECK_EQ(res(c, "/d/x"), x);
	CHECK_EQ(res(c, "/d/y"), -ENOENT);
	CHECK_EQ(res(c, "/d/z/w"), -ENOTDIR);
	CHECK_EQ(res(c, "/r"), -ENOENT);

	CHECK_EQ(dc_memfs_remove(fs, d, "x", 0), 0);
	y = add(d, "y", REG_M, NULL);
	CHECK_EQ(dc_memfs_remove(fs, d, "z", 0), 0);
	z = add(d, "z", DIR_M, NULL);
	w = add(z, "w", REG_M, NULL);
	r = add(DC_MEMFS_ROOT, "r", REG_M, NULL);
	/* nothing told the cache yet; another gen is another directory */
	CHECK_EQ(dc_invalidate_child(c, d, 1, "x", 1), 0);
	CHECK_EQ(res(c, "/d/x"), x);
	CHECK_EQ(res(c, "/d/y"), -ENOENT);
	CHECK_EQ(res(c, "/d/z/w"), -ENOTDIR);

	CHECK_EQ(dc_invalidate_child(c, d, 0, "x", 1), 0);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "y", 1), 0);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "z", 1), 0);
	CHECK_EQ(dc_invalidate_child(c, DC_MEMFS_ROOT, 0, "r", 1), 0);
	CHECK_EQ(res(c, "/d/x"), -ENOENT);
	CHECK_EQ(res(c, "/d/y"), y);
	CHECK_EQ(res(c, "/d/z/w"), w);
	CHECK_EQ(res(c, "/r"), r);

	/* a directory the cache does not hold, an inode nobody has: nothing */
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_child(c, u, 0, "k", 1), 0);
	CHECK_EQ(dc_invalidate_child(c, 123456, 0, "y", 1), 0);
	CHECK_EQ(misses(c), m0);
	CHECK_EQ(res(c, "/d/y"), y);
	CHECK_EQ(res(c, "/d/z/w"), w);
	CHECK_EQ(misses(c), m0);

	/* bad names; "..." and a name of DC_NAME_MAX bytes are good */
	CHECK_EQ(dc_invalidate_child(NULL, d, 0, "y", 1), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, NULL, 1), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "", 0), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "a/b", 3), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, ".", 1), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "..", 2), -EINVAL);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "y\0b", 3), -EINVAL);
	memset(big, 'a', sizeof(big));
	CHECK_EQ(dc_invalidate_child(c, d, 0, big, DC_NAME_MAX + 1), -ENAMETOOLONG);
	CHECK_EQ(dc_invalidate_child(c, d, 0, big, DC_NAME_MAX), 0);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "...", 3), 0);
	/* the len counts: "yy" cut to one byte is "y" */
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_child(c, d, 0, "yy", 1), 0);
	CHECK_EQ(res(c, "/d/y"), y);
	CHECK_EQ(misses(c), m0 + 1);
	close_cache(c);
}

static void test_push_inode(enum dc_mode mode)
{
	static const char *const kept[] = { "/t/o", "/t2/k", "/t", "/h1/f" };
	struct dc_dentry *held;
	struct dc_cache *c;
	struct dc_inode in;
	struct dc_inode st;
	uint64_t h1, h2, f, t, s, sf, o, t2, k, l, m0, nw;
	size_t i;

	fresh_fs();
	h1 = add(DC_MEMFS_ROOT, "h1", DIR_M, NULL);
	h2 = add(DC_MEMFS_ROOT, "h2", DIR_M, NULL);
	f = add(h1, "f", REG_M, NULL);
	CHECK_EQ(dc_memfs_link(fs, f, h2, "g", &in), 0);
	t = add(DC_MEMFS_ROOT, "t", DIR_M, NULL);
	s = add(t, "s", DIR_M, NULL);
	sf = add(s, "f", REG_M, NULL);
	o = add(t, "o", REG_M, NULL);
	t2 = add(DC_MEMFS_ROOT, "t2", DIR_M, NULL);
	k = add(t2, "k", REG_M, NULL);
	l = add(DC_MEMFS_ROOT, "l", S_IFLNK | 0777, "t2/k");
	c = open_memfs(mode, 0, 0);
	CHECK_EQ(dc_walk(c, NULL, "/h1/f", 0, &held), 0);
	CHECK_EQ(res(c, "/h2/g"), f);
	CHECK_EQ(res(c, "/t/s/f"), sf);
	CHECK_EQ(res(c, "/t/s/new"), -ENOENT);
	CHECK_EQ(res(c, "/t/o"), o);
	CHECK_EQ(res(c, "/t2/k"), k);
	CHECK_EQ(res_flags(c, "/l", DC_NOFOLLOW), l);
	CHECK_EQ(res(c, "/l"), k);

	/* a file: both of its names, one miss each; another gen: nothing */
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_inode(c, f, 1), 0);
	CHECK_EQ(res(c, "/h1/f"), f);
	CHECK_EQ(misses(c), m0);
	CHECK_EQ(dc_invalidate_inode(c, f, 0), 0);
	CHECK_EQ(res(c, "/h1/f"), f);
	CHECK_EQ(misses(c), m0 + 1);
	CHECK_EQ(res(c, "/h2/g"), f);
	CHECK_EQ(misses(c), m0 + 2);
	CHECK_EQ(dc_dentry_stat(held, &st), 0);	/* a held one still answers */
	CHECK_EQ(st.ino, f);
	dc_put(c, held);

	/* a directory's attributes: checked again, nothing below it lost */
	CHECK(res(c, "/t/s/f") > 0);
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_inode(c, s, 0), 0);
	CHECK(res(c, "/t/s/f") > 0);
	CHECK_EQ(misses(c), m0 + 1);		/* s asked again, f kept */
	CHECK(res(c, "/t/s/f") > 0);
	CHECK_EQ(misses(c), m0 + 1);		/* and s is settled again */

	/* a directory whose contents changed behind: it and all below it */
	nw = add(s, "new", REG_M, NULL);
	CHECK_EQ(res(c, "/t/s/new"), -ENOENT);
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_dir(c, s, 0), 0);
	for (i = 0; i < 3; i++)			/* not its siblings or parent */
		CHECK(res(c, kept[i]) > 0);
	CHECK_EQ(misses(c), m0);
	CHECK_EQ(res(c, "/t/s/new"), nw);
	CHECK_EQ(misses(c), m0 + 2);		/* s and new */
	CHECK_EQ(res(c, "/t/s/f"), sf);
	CHECK_EQ(misses(c), m0 + 3);		/* f was below the old s */

	/* a symlink is not indexed, an unknown inode is nobody: nothing */
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_inode(c, l, 0), 0);
	CHECK_EQ(dc_invalidate_inode(c, 999999, 0), 0);
	CHECK_EQ(res_flags(c, "/l", DC_NOFOLLOW), l);
	CHECK_EQ(res(c, "/l"), k);
	for (i = 0; i < 4; i++)
		CHECK(res(c, kept[i]) > 0);
	CHECK_EQ(res(c, "/t/s/f"), sf);
	CHECK_EQ(misses(c), m0);

	/* the root: everything */
	CHECK_EQ(dc_invalidate_inode(c, DC_MEMFS_ROOT, 0), 0);
	CHECK_EQ(res(c, "/t2/k"), k);
	CHECK_EQ(misses(c), m0 + 2);
	CHECK_EQ(res(c, "/h2/g"), f);
	CHECK_EQ(misses(c), m0 + 4);
	CHECK_EQ(dc_invalidate_inode(NULL, f, 0), -EINVAL);
	(void)h2;
	close_cache(c);
}

/*
 * A directory's attributes changed behind (a chmod): dc_invalidate_inode
 * stores its new mode in place, asking the backend once, and keeps the
 * entry (a held handle is the same entry) and everything cached below.
 */
static void test_dir_attr(enum dc_mode mode)
{
	struct dc_cache *c = open_fake(mode, true, 0);
	struct dc_dentry *h, *h2;
	struct dc_inode st;

	fake_set(3, 33, false);
	CHECK_EQ(res(c, "sub/n3"), 33);
	CHECK_EQ(dc_walk(c, NULL, "sub", 0, &h), 0);
	CHECK_EQ(fake_calls(3), 1);
	pthread_mutex_lock(&fk.lock);
	fk.sub_mode = S_IFDIR | 0700;
	fk.sub_calls = 0;
	pthread_mutex_unlock(&fk.lock);
	CHECK_EQ(dc_invalidate_inode(c, 2, 0), 0);
	CHECK_EQ(dc_resolve(c, NULL, "sub", 0, &st), 0);
	CHECK_EQ(st.mode, S_IFDIR | 0700);
	CHECK_EQ(fk.sub_calls, 1);		/* a lookup, not the hook */
	CHECK_EQ(fk.reval_calls, 0);
	CHECK_EQ(res(c, "sub/n3"), 33);
	CHECK_EQ(fake_calls(3), 1);		/* kept below it */
	CHECK_EQ(dc_walk(c, NULL, "sub", 0, &h2), 0);
	CHECK(h2 == h);				/* the same entry */
	CHECK_EQ(dc_dentry_stat(h, &st), 0);
	CHECK_EQ(st.mode, S_IFDIR | 0700);
	CHECK_EQ(fk.sub_calls, 1);		/* settled again */
	dc_put(c, h2);
	dc_put(c, h);
	CHECK_EQ(dc_debug_check(c), 0);
	close_cache(c);
}

/*
 * A farm of hard links: past DC_INDEX_MAX (32) names of one file the
 * index leaves the rest out (so unlinking one stays cheap), and an inode
 * invalidation must still reach them: every name forgotten, the removed
 * one gone.
 */
static void test_many_links(enum dc_mode mode)
{
	struct dc_cache *c;
	struct dc_inode in;
	char path[32];
	uint64_t d, f;
	int i;

	fresh_fs();
	c = open_memfs(mode, 0, 0);
	d = add(DC_MEMFS_ROOT, "farm", DIR_M, NULL);
	f = add(d, "l0", REG_M, NULL);
	for (i = 1; i < 40; i++) {
		snprintf(path, sizeof(path), "l%d", i);
		CHECK_EQ(dc_memfs_link(fs, f, d, path, &in), 0);
	}
	for (i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "/farm/l%d", i);
		CHECK_EQ(res(c, path), f);
	}
	CHECK_EQ(dc_debug_check(c), 0);
	CHECK_EQ(dc_memfs_remove(fs, d, "l39", 0), 0);	/* behind */
	CHECK_EQ(dc_invalidate_inode(c, f, 0), 0);
	CHECK_EQ(res(c, "/farm/l39"), -ENOENT);
	CHECK_EQ(res(c, "/farm/l0"), f);
	CHECK_EQ(dc_shrink(c, 0) >= 0, 1);
	close_cache(c);
}

static void test_all_and_set_ttl(enum dc_mode mode)
{
	struct dc_cache *c;
	uint64_t a, b, f, n, g, m0;

	fresh_fs();
	a = add(DC_MEMFS_ROOT, "a", DIR_M, NULL);
	b = add(a, "b", DIR_M, NULL);
	f = add(b, "f", REG_M, NULL);
	c = open_memfs(mode, 0, 0);
	CHECK_EQ(res(c, "/a/b/f"), f);
	CHECK_EQ(res(c, "/a/b/n"), -ENOENT);
	CHECK_EQ(dc_memfs_remove(fs, b, "f", 0), 0);
	n = add(b, "n", REG_M, NULL);
	CHECK_EQ(res(c, "/a/b/f"), f);		/* not told yet */
	m0 = misses(c);
	CHECK_EQ(dc_invalidate_all(c), 0);
	CHECK_EQ(res(c, "/a/b/f"), -ENOENT);
	CHECK_EQ(misses(c), m0 + 3);
	CHECK_EQ(res(c, "/a/b/n"), n);
	CHECK_EQ(misses(c), m0 + 4);

	/* TTLs on: what is cached is forgotten, new answers expire */
	m0 = misses(c);
	CHECK_EQ(dc_set_ttl(c, 50, 50), 0);
	CHECK_EQ(res(c, "/a/b/n"), n);
	CHECK_EQ(misses(c), m0 + 3);
	CHECK_EQ(res(c, "/a/b/f"), -ENOENT);
	CHECK_EQ(dc_memfs_remove(fs, b, "n", 0), 0);
	f = add(b, "f", REG_M, NULL);
	h_sleep_ms(70);
	CHECK_EQ(res(c, "/a/b/n"), -ENOENT);
	CHECK_EQ(res(c, "/a/b/f"), f);

	/* off: nothing is forgotten, and new answers never expire */
	m0 = misses(c);
	CHECK_EQ(dc_set_ttl(c, 0, 0), 0);
	CHECK_EQ(res(c, "/a/b/f"), f);
	CHECK_EQ(misses(c), m0);
	CHECK_EQ(res(c, "/a/b/g"), -ENOENT);
	CHECK_EQ(res(c, "/a/b/m"), -ENOENT);
	g = add(b, "g", REG_M, NULL);
	add(b, "m", REG_M, NULL);
	h_sleep_ms(70);
	CHECK_EQ(res(c, "/a/b/g"), -ENOENT);
	CHECK_EQ(res(c, "/a/b/m"), -ENOENT);
	CHECK_EQ(dc_invalidate_child(c, b, 0, "g", 1), 0);
	CHECK_EQ(res(c, "/a/b/g"), g);
	CHECK_EQ(dc_set_ttl(NULL, 1, 1), -EINVAL);
	CHECK_EQ(dc_invalidate_all(NULL), -EINVAL);
	close_cache(c);
}

/*
 * A lookup hangs in the backend while the name (or its directory, or
 * everything) is invalidated: its caller gets the answer, which is not
 * cached, so the next resolve asks the backend again.
 */
enum push { P_CHILD, P_DIR, P_INODE, P_ALL };

static void in_flight_round(enum dc_mode mode, const char *path, int i,
			    uint64_t dir, enum push how)
{
	struct dc_cache *c = open_fake(mode, false, 0);
	struct job j = { c, path, 0 };
	pthread_t t;
	char name[8];

	CHECK_EQ(res(c, "sub"), 2);		/* sub is cached */
	fake_set(i, 50, true);
	pthread_create(&t, NULL, resolver, &j);
	CHECK(wait_inflight(i, 1));
	fake_set(i, 51, true);			/* the backend changes... */
	snprintf(name, sizeof(name), "n%d", i);
	if (how == P_CHILD)			/* ...and says so */
		CHECK_EQ(dc_invalidate_child(c, dir, 0, name, strlen(name)), 0);
	else if (how == P_DIR)
		CHECK_EQ(dc_invalidate_dir(c, dir, 0), 0);
	else if (how == P_INODE)		/* the inode it will answer */
		CHECK_EQ(dc_invalidate_inode(c, 51, 0), 0);
	else
		CHECK_EQ(dc_invalidate_all(c), 0);
	fake_set(i, 51, false);
	pthread_join(t, NULL);
	CHECK_EQ(j.result, 51);
	CHECK_EQ(fake_calls(i), 1);
	CHECK_EQ(res(c, path), 51);
	CHECK_EQ(fake_calls(i), 2);		/* it was not cached */
	close_cache(c);
}

static void test_in_flight(enum dc_mode mode)
{
	in_flight_round(mode, "n5", 5, 1, P_CHILD);
	in_flight_round(mode, "n6", 6, 1, P_DIR);
	in_flight_round(mode, "n7", 7, 1, P_ALL);
	in_flight_round(mode, "sub/n8", 8, 2, P_CHILD);
	in_flight_round(mode, "sub/n9", 9, 2, P_DIR);
	in_flight_round(mode, "n10", 10, 1, P_INODE);
	in_flight_round(mode, "sub/n11", 11, 2, P_INODE);
}

/* ---- stress ------------------------------------------------------------------
 *
 * Fixed directories /s0../s2 and /sK/t; in each, volatile names k0..k5
 * that the writer makes files, empty directories or nothing, and renames
 * between directories, all behind the cache, then pushes (or not: TTLs
 * may be on).  Readers resolve and walk paths below them.
 */

#define NFIX	7		/* the root, s0..s2, s0/t..s2/t */
#define NK	6
#define NPATHS	(NFIX * NK * 2)

struct stress {
	struct dc_cache *c;
	uint64_t fix[NFIX];
	char fixpath[NFIX][8];
	char paths[NPATHS][24];
	int stop;
	unsigned long reads, writes;
};

/* The truth: path resolved in memfs, component by component. */
static int64_t truth(const char *path)
{
	char buf[64], *save = NULL, *p;
	struct dc_inode in = { DC_MEMFS_ROOT, DC_MEMFS_ROOT, DIR_M, 0 };
	int err;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
		if (!S_ISDIR(in.mode))
			return -ENOTDIR;
		err = dc_memfs_lookup(fs, in.ino, p, &in);
		if (err)
			return err;
	}
	return (int64_t)in.ino;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *stress_reader(void *arg)
{
	struct stress *s = arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;
	struct dc_dentry *base;

	CHECK_EQ(dc_walk(s->c, NULL, "/s0", 0, &base), 0);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		unsigned r = rnd(&seed);
		const char *path = s->paths[r % NPATHS];
		int64_t got;

		if (r & 0x100000) {
			got = walk_ino(s->c, path);
		} else if (r & 0x200000 && !strncmp(path, "/s0/", 4)) {
			struct dc_inode st;
			int err = dc_resolve(s->c, base, path + 4, 0, &st);

			got = err ? err : (int64_t)st.ino;
		} else {
			got = res(s->c, path);
		}
		CHECK(got > 0 || got == -ENOENT || got == -ENOTDIR);
		H_INC(s->reads);
	}
	dc_put(s->c, base);
	return NULL;
}

/* Tell the cache that name in dir changed, one way or another. */
static void push(struct stress *s, unsigned r, uint64_t dir, const char *name)
{
	struct dc_inode in;

	switch (r % 16) {
	case 0:		/* not told: only a TTL, if one is on, catches it */
		break;
	case 1:
		CHECK_EQ(dc_invalidate_dir(s->c, dir, 0), 0);
		break;
	case 2:
		if (!dc_memfs_lookup(fs, dir, name, &in))
			CHECK_EQ(dc_invalidate_inode(s->c, in.ino, 0), 0);
		CHECK_EQ(dc_invalidate_child(s->c, dir, 0, name, strlen(name)), 0);
		break;
	case 3:
		if (r % 64 == 3)
			CHECK_EQ(dc_invalidate_all(s->c), 0);
		break;
	default:
		CHECK_EQ(dc_invalidate_child(s->c, dir, 0, name, strlen(name)), 0);
		break;
	}
}

static void *stress_writer(void *arg)
{
	struct stress *s = arg;
	unsigned seed = 12345;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		unsigned r = rnd(&seed);
		uint64_t dir = s->fix[1 + r % (NFIX - 1)];
		uint64_t dir2 = s->fix[1 + (r >> 4) % (NFIX - 1)];
		char name[4], name2[4];
		struct dc_inode in;

		snprintf(name, sizeof(name), "k%u", (r >> 8) % NK);
		snprintf(name2, sizeof(name2), "k%u", (r >> 12) % NK);
		switch ((r >> 16) % 8) {
		case 0: case 1: case 2:		/* create or remove */
			if (dc_memfs_lookup(fs, dir, name, &in))
				dc_memfs_add(fs, dir, name, r & 1 ? DIR_M : REG_M,
					     NULL, NULL);
			else
				dc_memfs_remove(fs, dir, name, S_ISDIR(in.mode));
			push(s, r >> 20, dir, name);
			break;
		case 3: case 4:			/* rename, perhaps over another */
			dc_memfs_rename(fs, dir, name, dir2, name2, 0);
			push(s, r >> 20, dir, name);
			push(s, r >> 24, dir2, name2);
			break;
		case 5:
			if (r % 32 == 0)
				CHECK_EQ(dc_set_ttl(s->c, 1 + r % 5, 1 + (r >> 3) % 5), 0);
			else if (r % 32 == 1)
				CHECK_EQ(dc_set_ttl(s->c, 0, 0), 0);
			break;
		default:
			push(s, r >> 20, dir, name);
			break;
		}
		H_INC(s->writes);
	}
	return NULL;
}

static void test_stress(enum dc_mode mode)
{
	static const char *const fix[NFIX] = {
		"", "/s0", "/s1", "/s2", "/s0/t", "/s1/t", "/s2/t",
	};
	struct stress *s = calloc(1, sizeof(*s));
	pthread_t t[3];
	struct timespec t0, now;
	int i, k, n = 0, wrong = 0;

	fresh_fs();
	s->fix[0] = DC_MEMFS_ROOT;
	for (i = 1; i < NFIX; i++) {
		uint64_t parent = i < 4 ? DC_MEMFS_ROOT : s->fix[i - 3];

		s->fix[i] = add(parent, i < 4 ? fix[i] + 1 : "t", DIR_M, NULL);
	}
	for (i = 0; i < NFIX; i++)
		for (k = 0; k < NK; k++) {
			snprintf(s->paths[n++], sizeof(s->paths[0]), "%s/k%d", fix[i], k);
			snprintf(s->paths[n++], sizeof(s->paths[0]), "%s/k%d/k0", fix[i], k);
		}
	s->c = open_memfs(mode, 3, 2);
	pthread_create(&t[0], NULL, stress_writer, s);
	for (i = 1; i < 3; i++)
		pthread_create(&t[i], NULL, stress_reader, s);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		h_sleep_ms(20);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 <
		 h_seconds() * 0.75);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(s->reads > 0 && s->writes > 0);

	/* quiescent: told that anything may have changed, the cache agrees */
	CHECK_EQ(dc_invalidate_all(s->c), 0);
	for (i = 0; i < NPATHS; i++)
		for (k = 0; k < 2; k++) {	/* cold, then cached */
			int64_t want = truth(s->paths[i]);
			int64_t got = k ? walk_ino(s->c, s->paths[i]) : res(s->c, s->paths[i]);

			if (got != want && wrong++ < 10)
				fprintf(stderr, "%s: %s -> %lld, memfs says %lld\n",
					dc_mode_name(mode), s->paths[i],
					(long long)got, (long long)want);
		}
	CHECK_EQ(wrong, 0);
	printf("%s: stress %lu reads, %lu writes\n", dc_mode_name(mode),
	       s->reads, s->writes);
	close_last_cache(s->c);
	free(s);
}

int main(void)
{
	enum dc_mode m;

	pthread_mutex_init(&fk.lock, NULL);
	pthread_cond_init(&fk.cv, NULL);
	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		test_ttl(m);
		test_reval_keeps(m);
		test_hook(m);
		test_reval_single_flight(m);
		test_push_child(m);
		test_push_inode(m);
		test_dir_attr(m);
		test_many_links(m);
		test_all_and_set_ttl(m);
		test_in_flight(m);
		test_stress(m);
	}
	dc_memfs_free(fs);
	return h_done("test_coherence");
}
