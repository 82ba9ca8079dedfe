/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_faults.c - a backend that fails, hangs and changes its answers.
 *
 *  - errors reach the caller and are never cached; the root's, when it
 *    is invalidated, too;
 *  - concurrent misses on one name call the backend once, and every
 *    waiter gets the one answer (or the one error);
 *  - a slow miss never blocks lookups of other names, in the same
 *    directory or elsewhere (no lock is held across the backend call);
 *  - an answer that changes behind the cache shows after invalidation;
 *  - allocation failures injected at random while threads look up and
 *    update: every call works or says -ENOMEM, and afterwards every
 *    answer is right.
 * Nothing here measures time: "slow" is a backend call that waits for an
 * event the test makes happen, with a generous safety timeout.
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

/* ---- a scriptable backend: a flat root of names "n0".."n99" ---------------- */

struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned long calls[100];
	int err[100];		/* lookup answers this error */
	bool hold[100];		/* lookup waits until released */
	int inflight[100];	/* calls waiting in hold */
	uint64_t ino[100];	/* 0: no such name */
	bool lnk[100];		/* the name is a symlink (no readlink op) */
	int root_err;		/* root answers this error */
	uint32_t root_mode;	/* and this mode (0: a directory) */
};

static int f_root(void *ctx, struct dc_inode *out)
{
	struct fake *f = ctx;
	uint32_t mode = f->root_mode ? f->root_mode : S_IFDIR | 0755;

	*out = (struct dc_inode){ 1, 1, mode, 0 };
	return f->root_err;
}

static int f_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		    size_t len, struct dc_inode *out)
{
	struct fake *f = ctx;
	struct timespec until;
	int i = h_name_index(name, len), err;

	if (dir->ino != 1 || i < 0)
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
	err = f->err[i];
	if (!err && !f->ino[i])
		err = -ENOENT;
	if (!err)
		*out = (struct dc_inode){ f->ino[i], f->ino[i],
					  f->lnk[i] ? S_IFLNK | 0777 : S_IFREG | 0644, 0 };
	pthread_mutex_unlock(&f->lock);
	return err;
}

static const struct dc_backend_ops fake_ops = { .root = f_root, .lookup = f_lookup };

static struct fake fk;
static struct dc_cache *cache;

static void fake_set(int i, uint64_t ino, int err, bool hold)
{
	pthread_mutex_lock(&fk.lock);
	fk.ino[i] = ino;
	fk.err[i] = err;
	fk.hold[i] = hold;
	pthread_cond_broadcast(&fk.cv);
	pthread_mutex_unlock(&fk.lock);
}

/* Wait (bounded) until n calls for name i sit in the backend. */
static bool wait_inflight(int i, int n)
{
	return h_wait_at_least(&fk.lock, &fk.cv, &fk.inflight[i], n);
}

static void open_cache(enum dc_mode mode)
{
	struct dc_options o = { .mode = mode };

	memset(fk.calls, 0, sizeof(fk.calls));
	memset(fk.err, 0, sizeof(fk.err));
	memset(fk.hold, 0, sizeof(fk.hold));
	memset(fk.ino, 0, sizeof(fk.ino));
	memset(fk.lnk, 0, sizeof(fk.lnk));
	fk.root_err = 0;
	fk.root_mode = 0;
	o.backend.ops = &fake_ops;
	o.backend.ctx = &fk;
	CHECK_EQ(dc_cache_create(&o, &cache), 0);
}

static int64_t res(const char *path)
{
	struct dc_inode st;
	int err = dc_resolve(cache, NULL, path, 0, &st);

	return err ? err : (int64_t)st.ino;
}

struct job {
	const char *path;
	int64_t result;
	bool done;
};

static void *resolver(void *arg)
{
	struct job *j = arg;

	j->result = res(j->path);
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- the tests ------------------------------------------------------------ */

static void test_errors(enum dc_mode mode)
{
	open_cache(mode);
	fake_set(1, 0, -EIO, false);
	CHECK_EQ(res("n1"), -EIO);
	CHECK_EQ(res("n1"), -EIO);
	CHECK_EQ(fk.calls[1], 2);		/* errors are not cached */
	fake_set(1, 11, 0, false);
	CHECK_EQ(res("n1"), 11);
	CHECK_EQ(res("n1"), 11);
	CHECK_EQ(fk.calls[1], 3);
	fake_set(2, 0, -EACCES, false);
	CHECK_EQ(res("n2/x"), -EACCES);
	dc_cache_destroy(cache);
}

/*
 * The root invalidated while the backend cannot say what it is: the
 * caller hears why, everything below is forgotten all the same, and the
 * next invalidation that the backend answers works.
 */
static void test_root_error(enum dc_mode mode)
{
	struct dc_dentry *r;
	struct dc_inode st;

	open_cache(mode);
	fake_set(1, 11, 0, false);
	CHECK_EQ(res("n1"), 11);
	r = dc_root(cache);
	fk.root_err = -EIO;
	CHECK_EQ(dc_invalidate(cache, r), -EIO);
	CHECK_EQ(res("n1"), 11);
	CHECK_EQ(fk.calls[1], 2);		/* forgotten all the same */
	CHECK_EQ(dc_invalidate_all(cache), -EIO);
	fk.root_err = 0;
	fk.root_mode = S_IFREG | 0644;
	CHECK_EQ(dc_invalidate(cache, r), -ENOTDIR);
	CHECK_EQ(dc_resolve(cache, NULL, "/", 0, &st), 0);
	CHECK(S_ISDIR(st.mode));		/* the old root stays */
	fk.root_mode = 0;
	CHECK_EQ(dc_invalidate_all(cache), 0);
	CHECK_EQ(res("n1"), 11);
	CHECK_EQ(fk.calls[1], 3);
	dc_put(cache, r);
	dc_cache_destroy(cache);
}

/*
 * Answers the contract forbids, and a symlink that cannot be read: a
 * positive value from lookup or root is -EIO (not a success with nothing
 * filled in), and following a link without readlink is -EOPNOTSUPP (not
 * -EINVAL, the caller's mistake).
 */
static void test_bad_answers(enum dc_mode mode)
{
	struct dc_options o = { .mode = mode };
	struct dc_inode st;
	struct dc_cache *c2;

	open_cache(mode);
	fake_set(3, 0, 5, false);
	CHECK_EQ(res("n3"), -EIO);
	CHECK_EQ(res("n3/x"), -EIO);
	fake_set(3, 13, 0, false);
	CHECK_EQ(res("n3"), 13);
	fk.lnk[4] = true;
	fake_set(4, 14, 0, false);
	CHECK_EQ(res("n4"), -EOPNOTSUPP);
	CHECK_EQ(res("n4/x"), -EOPNOTSUPP);
	CHECK_EQ(dc_resolve(cache, NULL, "n4", DC_NOFOLLOW, &st), 0);
	CHECK(S_ISLNK(st.mode) && st.ino == 14);
	dc_cache_destroy(cache);

	fk.root_err = 1;
	o.backend.ops = &fake_ops;
	o.backend.ctx = &fk;
	CHECK_EQ(dc_cache_create(&o, &c2), -EIO);
	fk.root_err = 0;
}

/*
 * Wait (bounded) until the cache counts n lookups waiting for a backend
 * call in flight; false, saying so, if they never come.
 */
static bool wait_miss_waits(uint64_t n)
{
	struct dc_stats st;
	int ms;

	for (ms = 0; ms < 20 * 1000; ms++) {
		dc_get_stats(cache, &st);
		if (st.miss_waits >= n)
			return true;
		usleep(1000);
	}
	fprintf(stderr, "test_single_flight: after 20 s, %llu of %llu lookups wait "
		"on the miss in flight\n", (unsigned long long)st.miss_waits,
		(unsigned long long)n);
	return false;
}

/*
 * Threads miss on one name at once: one backend call, one answer (or one
 * error) for all.  The backend holds the first call until the cache counts
 * every other thread waiting on it, so no thread can pass by arriving
 * after the answer was cached: all of them are concurrent with the miss.
 */
#define FLIGHT	4

static void test_single_flight(enum dc_mode mode, int err)
{
	struct job jobs[FLIGHT];
	pthread_t t[FLIGHT];
	struct dc_stats st;
	int i;

	open_cache(mode);
	fake_set(3, 33, err, true);
	for (i = 0; i < FLIGHT; i++) {
		jobs[i] = (struct job){ "n3", 0, false };
		pthread_create(&t[i], NULL, resolver, &jobs[i]);
	}
	CHECK(wait_inflight(3, 1));
	CHECK(wait_miss_waits(FLIGHT - 1));
	fake_set(3, 33, err, false);
	for (i = 0; i < FLIGHT; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(jobs[i].result, err ? err : 33);
	}
	/* one call: the waiters take the owner's answer, an error as well
	 * as an inode (they once each asked the backend again after a
	 * failed miss, because settling it marked it overtaken) */
	CHECK_EQ(fk.calls[3], 1);
	dc_get_stats(cache, &st);
	CHECK_EQ(st.misses, 1);
	CHECK_EQ(st.miss_waits, FLIGHT - 1);
	if (!err)
		CHECK_EQ(res("n3"), 33);
	dc_cache_destroy(cache);
}

/*
 * Misses that fail, racing: each caller gets the error or (having waited
 * on another's miss and been told to ask again) the error of its own
 * miss -- never the failed entry taken for a negative one.  "Still
 * pending?" must be asked under the lock: asked after it is dropped, a
 * miss settled with an error just then would answer -ENOENT.
 */
struct err_race {
	int64_t enoent, other;
	int rounds;
};

static void *err_racer(void *arg)
{
	struct err_race *e = arg;
	int i;

	for (i = 0; i < e->rounds; i++) {
		int64_t r = res("n10");

		if (r == -ENOENT)
			e->enoent++;
		else if (r != -EIO)
			e->other++;
	}
	return NULL;
}

static void test_error_race(enum dc_mode mode)
{
	struct err_race e[4];
	pthread_t t[4];
	int i;

	open_cache(mode);
	fake_set(10, 100, -EIO, false);
	for (i = 0; i < 4; i++) {
		e[i] = (struct err_race){ 0, 0, 10000 };
		pthread_create(&t[i], NULL, err_racer, &e[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(e[i].enoent, 0);
		CHECK_EQ(e[i].other, 0);
	}
	dc_cache_destroy(cache);
}

/* While n4's miss hangs, other names still resolve, cached or not. */
static void test_slow_miss(enum dc_mode mode)
{
	struct job slow = { "n4", 0, false };
	pthread_t t;

	open_cache(mode);
	fake_set(5, 55, 0, false);
	CHECK_EQ(res("n5"), 55);			/* cached */
	fake_set(4, 44, 0, true);
	fake_set(6, 66, 0, false);
	pthread_create(&t, NULL, resolver, &slow);
	CHECK(wait_inflight(4, 1));
	CHECK_EQ(res("n5"), 55);			/* hit */
	CHECK_EQ(res("n6"), 66);			/* another miss */
	CHECK_EQ(res("n7"), -ENOENT);			/* a negative miss */
	CHECK(!__atomic_load_n(&slow.done, __ATOMIC_ACQUIRE));	/* still held */
	fake_set(4, 44, 0, false);
	pthread_join(t, NULL);
	CHECK_EQ(slow.result, 44);
	dc_cache_destroy(cache);
}

/* The backend's answer changes: cached until invalidated, then the new one. */
static void test_changing(enum dc_mode mode)
{
	struct dc_dentry *root;

	open_cache(mode);
	root = dc_root(cache);
	fake_set(8, 80, 0, false);
	CHECK_EQ(res("n8"), 80);
	fake_set(8, 81, 0, false);
	CHECK_EQ(res("n8"), 80);
	CHECK_EQ(dc_invalidate_name(cache, root, "n8"), 0);
	CHECK_EQ(res("n8"), 81);
	fake_set(8, 0, 0, false);
	CHECK_EQ(dc_invalidate(cache, root), 0);
	CHECK_EQ(res("n8"), -ENOENT);
	/* a miss in flight across an update is answered, but not cached */
	fake_set(9, 90, 0, true);
	{
		struct job j = { "n9", 0, false };
		pthread_t t;

		pthread_create(&t, NULL, resolver, &j);
		CHECK(wait_inflight(9, 1));
		fake_set(9, 91, 0, true);	/* the "file system" changes... */
		CHECK_EQ(dc_invalidate_name(cache, root, "n9"), 0);	/* ...and says so */
		fake_set(9, 91, 0, false);
		pthread_join(t, NULL);
		CHECK(j.result == 91);	/* the held call read the new value */
		CHECK_EQ(res("n9"), 91);
	}
	dc_put(cache, root);
	dc_cache_destroy(cache);
}

/* ---- random allocation failures under concurrency ------------------------ */

static struct dc_memfs *mfs;
#define NK	64		/* names, against a cap of 16 entries */
static uint64_t mino[NK];	/* current ino of /d/kK, 0 when absent */
static int stop;

static void *fail_reader(void *arg)
{
	char path[16];
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct dc_inode st;
		int k = (int)(rand_r(&seed) % NK), err;

		snprintf(path, sizeof(path), "/d/k%d", k);
		err = dc_resolve(cache, NULL, path, 0, &st);
		CHECK(err == 0 || err == -ENOENT || err == -ENOMEM);
	}
	return NULL;
}

static void test_alloc_failures(enum dc_mode mode)
{
	struct dc_options o = { .mode = mode, .max_entries = 16, .max_negative = 4 };
	struct dc_dentry *d;
	struct dc_inode in;
	pthread_t r[2];
	char name[8], path[16];
	unsigned seed = 7;
	int i, k, err;

	CHECK_EQ(dc_memfs_new(&mfs), 0);
	CHECK_EQ(dc_memfs_add(mfs, DC_MEMFS_ROOT, "d", S_IFDIR | 0755, NULL, &in), 0);
	o.backend = dc_memfs_backend(mfs);
	CHECK_EQ(dc_cache_create(&o, &cache), 0);
	CHECK_EQ(dc_walk(cache, NULL, "d", 0, &d), 0);
	memset(mino, 0, sizeof(mino));
	stop = 0;
	dc_debug_fail_alloc(-3, 12345);		/* one allocation in 3 fails */
	for (i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, fail_reader, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < 20000; i++) {
		k = (int)(rand_r(&seed) % NK);
		snprintf(name, sizeof(name), "k%d", k);
		if (mino[k]) {
			CHECK_EQ(dc_memfs_remove(mfs, in.ino, name, 0), 0);
			err = dc_unlink(cache, d, name);
			mino[k] = 0;
		} else {
			struct dc_inode f;

			CHECK_EQ(dc_memfs_add(mfs, in.ino, name, S_IFREG | 0644, NULL, &f), 0);
			err = dc_create(cache, d, name, &f);
			mino[k] = f.ino;
		}
		CHECK(err == 0 || err == -ENOMEM);
		{	/* the writer's own view must be right */
			struct dc_inode st;

			snprintf(path, sizeof(path), "/d/k%d", k);
			err = dc_resolve(cache, NULL, path, 0, &st);
			CHECK(err == -ENOMEM || (mino[k] ? err == 0 && st.ino == mino[k]
							 : err == -ENOENT));
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	printf("%s: %llu allocations failed on purpose\n", dc_mode_name(mode),
	       (unsigned long long)dc_debug_failed_allocs());
	CHECK(dc_debug_failed_allocs() > 0);
	dc_debug_fail_alloc(0, 0);
	for (k = 0; k < NK; k++) {	/* nothing the cache says is wrong */
		struct dc_inode st;

		snprintf(path, sizeof(path), "/d/k%d", k);
		err = dc_resolve(cache, NULL, path, 0, &st);
		CHECK(mino[k] ? err == 0 && st.ino == mino[k] : err == -ENOENT);
	}
	CHECK_EQ(dc_debug_check(cache), 0);
	dc_put(cache, d);
	dc_cache_destroy(cache);
	CHECK_EQ(dc_debug_live_entries(), 0);
	dc_memfs_free(mfs);
}

int main(void)
{
	enum dc_mode m;

	pthread_mutex_init(&fk.lock, NULL);
	pthread_cond_init(&fk.cv, NULL);
	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		test_errors(m);
		test_root_error(m);
		test_bad_answers(m);
		test_single_flight(m, 0);
		test_single_flight(m, -EIO);
		test_error_race(m);
		test_slow_miss(m);
		test_changing(m);
		test_alloc_failures(m);
	}
	return h_done("test_faults");
}
