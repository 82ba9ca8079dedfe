/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_stress.c - lookups racing renames, unlinks, creates, mkdirs,
 * symlinks, invalidations and evictions, in every mode; each answer is
 * checked against the history of what the namespace held.
 *
 * The namespace: directories /d0../d3, each with 6 stable files (never
 * touched: a lookup of one must always succeed, whatever moves around it)
 * and 6 volatile slots; and one directory that writer 0 keeps renaming
 * between /m0 and /m1, holding a stable file "inner".
 *
 * History: every slot has a version, odd while a writer changes it, and a
 * ring of the values (inode number, or -ENOENT) it had at each even
 * version.  A reader notes the version before and after its lookup; the
 * answer must be one of the values in between.  A writer owns its slots,
 * so each slot's history is a simple sequence.
 *
 * Duration: DC_TEST_SECONDS per mode (default 2).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"
#include "harness.h"

#define NDIRS		4
#define NSTABLE		6
#define NVOL		6
#define NSLOTS		(NDIRS * NVOL + 2)	/* + m0, m1 */
#define RING		256
#define NWRITERS	2
#define NREADERS	3

struct slot {
	uint64_t ver;
	int64_t hist[RING];
	uint64_t dir;		/* memfs ino of its directory */
	int d;			/* index of its directory, or -1 for m0/m1 */
	char name[16];
	char path[32];
	int kind;		/* what is there now: 0 none, 1 file, 2 dir, 3 link */
};

static struct dc_memfs *fs;
static struct dc_cache *cache;
static struct dc_dentry *dirs[NDIRS];
static uint64_t dir_ino[NDIRS], stable_ino[NDIRS][NSTABLE], inner_ino;
static struct slot slots[NSLOTS];
static int stop;
static unsigned long violations, checks, skipped, nops[NWRITERS];

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- writer side ---------------------------------------------------------- */

static void slot_begin(struct slot *s, int64_t newval)
{
	uint64_t v = __atomic_load_n(&s->ver, __ATOMIC_RELAXED);

	__atomic_store_n(&s->hist[(v + 2) % RING], newval, __ATOMIC_RELAXED);
	/* release: the new value is in the ring before anyone sees v+1 */
	__atomic_store_n(&s->ver, v + 1, __ATOMIC_RELEASE);
}

static void slot_end(struct slot *s)
{
	__atomic_store_n(&s->ver, s->ver + 1, __ATOMIC_RELEASE);
}

static int64_t slot_now(struct slot *s)
{
	return s->hist[s->ver % RING];
}

static struct dc_dentry *slot_dir(struct slot *s)
{
	return s->d >= 0 ? dirs[s->d] : NULL;
}

/*
 * Each change opens the slot's transition (odd version) before the backend
 * changes and closes it after the cache was told: in between, a lookup
 * may see either state, through a miss or through the cache.
 */
static void w_create(struct slot *s, uint64_t r)
{
	struct dc_inode in;
	int kind = 1 + (int)(r % 3), err;

	/* inode numbers are not known before the add: a file or directory's
	 * new value is "whatever ino memfs gives next", read back below */
	slot_begin(s, kind == 3 ? (int64_t)stable_ino[0][1] : 0);
	if (kind == 1)
		err = dc_memfs_add(fs, s->dir, s->name, S_IFREG | 0644, NULL, &in);
	else if (kind == 2)
		err = dc_memfs_add(fs, s->dir, s->name, S_IFDIR | 0755, NULL, &in);
	else
		err = dc_memfs_add(fs, s->dir, s->name, S_IFLNK | 0777, "../d0/s1", &in);
	CHECK_EQ(err, 0);
	if (kind != 3)
		__atomic_store_n(&s->hist[(s->ver + 1) % RING], (int64_t)in.ino,
				 __ATOMIC_RELAXED);
	if (kind == 1)
		err = dc_create(cache, slot_dir(s), s->name, &in);
	else if (kind == 2)
		err = dc_mkdir(cache, slot_dir(s), s->name, &in);
	else
		err = dc_symlink(cache, slot_dir(s), s->name, &in, "../d0/s1");
	CHECK_EQ(err, 0);
	slot_end(s);
	s->kind = kind;
}

static void w_remove(struct slot *s)
{
	int err;

	slot_begin(s, -ENOENT);
	err = dc_memfs_remove(fs, s->dir, s->name, s->kind == 2);
	CHECK_EQ(err, 0);
	err = s->kind == 2 ? dc_rmdir(cache, slot_dir(s), s->name) :
			     dc_unlink(cache, slot_dir(s), s->name);
	CHECK_EQ(err, 0);
	slot_end(s);
	s->kind = 0;
}

/* Move a full slot onto another (empty, or full with a non-directory). */
static void w_rename(struct slot *a, struct slot *b, unsigned flags)
{
	int64_t va = slot_now(a), vb = slot_now(b);
	int err;

	slot_begin(a, flags & DC_RENAME_EXCHANGE ? vb : -ENOENT);
	slot_begin(b, va);
	err = dc_memfs_rename(fs, a->dir, a->name, b->dir, b->name, flags);
	CHECK_EQ(err, 0);
	err = dc_rename(cache, slot_dir(a), a->name, slot_dir(b), b->name, flags);
	CHECK_EQ(err, 0);
	slot_end(a);
	slot_end(b);
	if (flags & DC_RENAME_EXCHANGE) {
		int k = a->kind;

		a->kind = b->kind;
		b->kind = k;
	} else {
		b->kind = a->kind;
		a->kind = 0;
	}
}

/* The m0 <-> m1 directory: rename whichever exists to the other name. */
static void w_move_m(void)
{
	struct slot *from = slots[NSLOTS - 2].kind ? &slots[NSLOTS - 2] : &slots[NSLOTS - 1];
	struct slot *to = from == &slots[NSLOTS - 2] ? &slots[NSLOTS - 1] : &slots[NSLOTS - 2];
	struct dc_dentry *root = dc_root(cache);
	int64_t v = slot_now(from);
	int err;

	slot_begin(from, -ENOENT);
	slot_begin(to, v);
	err = dc_memfs_rename(fs, DC_MEMFS_ROOT, from->name, DC_MEMFS_ROOT, to->name, 0);
	CHECK_EQ(err, 0);
	CHECK_EQ(dc_rename(cache, root, from->name, root, to->name, 0), 0);
	slot_end(from);
	slot_end(to);
	to->kind = 2;
	from->kind = 0;
	dc_put(cache, root);
}

/*
 * Right after its own change a writer must see exactly what it made: no
 * one else changes its slots, and other threads' misses and invalidations
 * can only cache the truth or forget it.
 */
static void check_own(struct slot *s)
{
	struct dc_stat st;
	int err = dc_resolve(cache, NULL, s->path, 0, &st);
	int64_t got = err ? err : (int64_t)st.ino;

	if (s->d >= 0 && got != slot_now(s)) {
		__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "violation: writer sees %s -> %lld, made %lld\n",
			s->path, (long long)got, (long long)slot_now(s));
	}
}

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (w + 1);
	struct slot *mine[NSLOTS];
	int n = 0, i;

	for (i = 0; i < NDIRS * NVOL; i++)
		if (i % NWRITERS == w)
			mine[n++] = &slots[i];
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t r = rnd(&seed);
		struct slot *a = mine[r % n], *b = mine[(r >> 8) % n];
		unsigned op = (unsigned)(r >> 16) % 16;

		if (op < 5) {
			if (a->kind)
				w_remove(a);
			else
				w_create(a, r >> 24);
		} else if (op < 9) {
			if (a != b && a->kind && b->kind != 2 &&
			    !(a->kind == 2 && b->kind))
				w_rename(a, b, b->kind ? 0 : DC_RENAME_NOREPLACE);
		} else if (op < 11) {
			if (a != b && a->kind && b->kind)
				w_rename(a, b, DC_RENAME_EXCHANGE);
		} else if (op < 13) {
			if (w == 0)
				w_move_m();
		} else if (op == 13) {
			/* forgetting is always allowed; answers must stay right */
			CHECK_EQ(dc_invalidate_name(cache, slot_dir(a), a->name), 0);
		} else if (op == 14) {
			dc_shrink(cache, r % 8);
		} else {
			CHECK_EQ(dc_invalidate(cache, dirs[(r >> 24) % NDIRS]), 0);
		}
		nops[w]++;
		check_own(a);
		if (b != a)
			check_own(b);
	}
	return NULL;
}

/* ---- reader side --------------------------------------------------------- */

/* Did slot s hold got at some even version in [before, after]? */
static bool slot_allows(struct slot *s, uint64_t before, uint64_t after,
			int64_t got, bool inner)
{
	uint64_t v;

	for (v = before & ~1ull; v <= ((after + 1) & ~1ull); v += 2) {
		int64_t want = __atomic_load_n(&s->hist[v % RING], __ATOMIC_RELAXED);

		if (inner && want > 0)
			want = (int64_t)inner_ino;
		if (got == want)
			return true;
	}
	return false;
}

static void check_slot(struct slot *s, uint64_t *seed)
{
	uint64_t before, after;
	struct dc_stat st;
	char path[48];
	int64_t got;
	int err, ok = 0;
	bool inner = s->d < 0;

	snprintf(path, sizeof(path), inner ? "%s/inner" : "%s", s->path);
	before = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE);
	if (rnd(seed) % 4 == 0) {
		struct dc_dentry *d;

		err = dc_walk(cache, NULL, path, 0, &d);
		if (!err) {
			err = dc_dentry_stat(d, &st);
			dc_put(cache, d);
		}
	} else {
		err = dc_resolve(cache, NULL, path, 0, &st);
	}
	after = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE);
	got = err ? err : (int64_t)st.ino;
	if (after - before > RING - 8) {
		__atomic_add_fetch(&skipped, 1, __ATOMIC_RELAXED);
		return;
	}
	/* a create's value is stored just after the backend made the inode,
	 * so a lookup may see it first: then wait for the change to end */
	if (!slot_allows(s, before, after, got, inner) && (after & 1)) {
		uint64_t now;

		while ((now = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE)) == after)
			sched_yield();
		if (now - before > RING - 8) {	/* the ring moved on meanwhile */
			__atomic_add_fetch(&skipped, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	ok = slot_allows(s, before, after, got, inner);
	/* a ring entry read above may have been reused meanwhile: only trust
	 * the verdict if the slot is still within the ring's reach */
	if (!ok && __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE) - before > RING - 8) {
		__atomic_add_fetch(&skipped, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
	if (!ok) {
		__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "violation: %s -> %lld, versions %llu..%llu\n", path,
			(long long)got, (unsigned long long)before,
			(unsigned long long)after);
	}
}

static void *reader(void *arg)
{
	uint64_t seed = 0x1234567ull * ((uintptr_t)arg + 7);
	struct dc_stat st;
	char path[48];

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t r = rnd(&seed);

		if (r % 3 == 0) {
			/* a name that exists throughout is never missing */
			int d = (int)((r >> 8) % NDIRS), f = (int)((r >> 16) % NSTABLE);
			int err;

			snprintf(path, sizeof(path), "/d%d/s%d", d, f);
			err = dc_resolve(cache, NULL, path, 0, &st);
			__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
			if (err || st.ino != stable_ino[d][f]) {
				__atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
				fprintf(stderr, "violation: stable %s -> %d\n", path, err);
			}
		} else {
			check_slot(&slots[(r >> 8) % NSLOTS], &seed);
		}
	}
	return NULL;
}

/* ---- set-up -------------------------------------------------------------- */

static void build(void)
{
	struct dc_inode in;
	char name[16];
	int d, i;

	CHECK_EQ(dc_memfs_new(&fs), 0);
	for (d = 0; d < NDIRS; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, name, S_IFDIR | 0755, NULL, &in), 0);
		dir_ino[d] = in.ino;
		for (i = 0; i < NSTABLE; i++) {
			snprintf(name, sizeof(name), "s%d", i);
			CHECK_EQ(dc_memfs_add(fs, dir_ino[d], name, S_IFREG | 0644, NULL, &in), 0);
			stable_ino[d][i] = in.ino;
		}
		for (i = 0; i < NVOL; i++) {
			struct slot *s = &slots[d * NVOL + i];

			s->dir = dir_ino[d];
			s->d = d;
			snprintf(s->name, sizeof(s->name), "v%d", i);
			snprintf(s->path, sizeof(s->path), "/d%d/v%d", d, i);
			s->hist[0] = -ENOENT;
		}
	}
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "m0", S_IFDIR | 0755, NULL, &in), 0);
	CHECK_EQ(dc_memfs_add(fs, in.ino, "inner", S_IFREG | 0644, NULL, &in), 0);
	inner_ino = in.ino;
	for (i = 0; i < 2; i++) {
		struct slot *s = &slots[NDIRS * NVOL + i];

		s->dir = DC_MEMFS_ROOT;
		s->d = -1;
		snprintf(s->name, sizeof(s->name), "m%d", i);
		snprintf(s->path, sizeof(s->path), "/m%d", i);
		s->hist[0] = i == 0 ? 1 : -ENOENT;	/* > 0: "inner is there" */
		s->kind = i == 0 ? 2 : 0;
	}
}

static void run_mode(enum dc_mode mode, double seconds)
{
	struct dc_options o = { .mode = mode, .max_entries = 48, .max_negative = 12 };
	pthread_t w[NWRITERS], r[NREADERS];
	struct dc_stats st;
	char name[16];
	int i;

	memset(slots, 0, sizeof(slots));
	memset(nops, 0, sizeof(nops));
	violations = checks = skipped = 0;
	stop = 0;
	build();
	o.backend = dc_memfs_backend(fs);
	CHECK_EQ(dc_cache_create(&o, &cache), 0);
	for (i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		CHECK_EQ(dc_walk(cache, NULL, name, 0, &dirs[i]), 0);
	}
	for (i = 0; i < NWRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
	for (i = 0; i < NREADERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i);
	usleep((useconds_t)(seconds * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NWRITERS; i++)
		pthread_join(w[i], NULL);
	for (i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);
	dc_get_stats(cache, &st);
	printf("%-6s: %lu updates, %lu answers checked, %lu skipped, %lu violations; "
	       "%llu evictions, %llu rcu-walk restarts\n", dc_mode_name(mode),
	       nops[0] + nops[1], checks, skipped, violations,
	       (unsigned long long)st.evictions, (unsigned long long)st.restarts);
	CHECK_EQ(violations, 0);
	CHECK(checks > 100);
	CHECK(nops[0] + nops[1] > 100);
	CHECK(st.evictions > 0);
	CHECK_EQ(dc_debug_check(cache), 0);
	for (i = 0; i < NDIRS; i++)
		dc_put(cache, dirs[i]);
	dc_cache_destroy(cache);
	CHECK_EQ(dc_debug_live_entries(), 0);
	dc_memfs_free(fs);
}

int main(void)
{
	double secs = h_seconds();
	enum dc_mode m;

	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++)
		run_mode(m, secs);
	return h_done("test_stress");
}
