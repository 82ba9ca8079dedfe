/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_misslock.c - in rcu mode misses of different names do not wait for
 * each other: a miss stopped inside its locked section, as a preempted
 * thread would be, keeps out the updates (they change what it reads) and
 * a miss of the same name (single flight), and no miss of a name in
 * another bucket stripe, nor the listing of a directory that a miss
 * starts (complete directories).
 *
 * A debug hook (dc_debug_on_miss) stops the first miss of "a" in the root
 * just after it hashed its pending entry, with its chain stripe held.
 * Meanwhile:
 *  - misses of other names in the root, chosen (by reaching into the
 *    table) to fall in other chain stripes, must all be answered;
 *  - so must a miss in directory "e" that the backend answers -ENOENT,
 *    which lists "e" (the first such answer does) and installs the
 *    listing: later names missing there are answered from it;
 *  - an update (dc_create, in another directory) must not finish;
 *  - a second lookup of "a" must not finish.
 * Then the stopped miss goes on, and every answer must be right, with one
 * backend lookup of "a".  Each staging runs in a new cache, so in caches
 * with new hash keys; the global and rwlock modes, where a miss takes the
 * one write lock, are checked to keep misses out while one is stopped.
 * Waits for what must finish give up after 10 s and fail the check.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcache-debug.h"
#include "harness.h"
#include "../src/internal.h"

#define OTHERS	8	/* misses of other names while "a"'s is stopped */

struct stop {
	int armed;	/* the next miss stops */
	int stopped;	/* a miss is stopped in the hook */
	int go;		/* it may go on */
};

static void stop_here(void *arg)
{
	struct stop *s = arg;

	if (!__atomic_exchange_n(&s->armed, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&s->stopped, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		h_sleep_ms(1);
}

struct job {
	struct dc_cache *c;
	struct dc_dentry *root;	/* where name is */
	char name[16];
	bool update;		/* dc_create name, else resolve it */
	char path[32];		/* resolve this, if set, not name */
	struct dc_inode in;	/* the backend's inode of name */
	int err;
	struct dc_inode got;
	int done;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	if (j->update)
		j->err = dc_create(j->c, j->root, j->name, &j->in);
	else
		j->err = dc_resolve(j->c, j->root, j->path[0] ? j->path : j->name, 0,
				    &j->got);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to 10 s for *flag; true when it was set. */
static bool wait_for(int *flag)
{
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return true;
		h_sleep_ms(1);
	}
	return false;
}

static unsigned stripe_of(struct dc_cache *c, struct dc_dentry *dir, const char *name)
{
	return dc__bucket_index(dc__hash_name(c, dir, name, strlen(name)), c->shift) %
	       DC_CHAIN_LOCKS;
}

static void start(struct job *j, pthread_t *t)
{
	CHECK_EQ(pthread_create(t, NULL, run_job, j), 0);
}

static void stage(enum dc_mode mode)
{
	struct dc_options o = { .mode = mode, .max_entries = 4096 };
	struct job a = { 0 }, a2 = { 0 }, up = { 0 }, lister = { 0 }, other[OTHERS];
	pthread_t ta, ta2, tup, tlister, tother[OTHERS];
	struct stop s = { .armed = 1 };
	struct dc_memfs *fs;
	struct dc_cache *c;
	struct dc_dentry *root, *d = NULL, *e = NULL;
	struct dc_inode din, ein, f;
	struct dc_stats st;
	unsigned sa;
	int n = 0;

	if (dc_memfs_new(&fs) || (o.backend = dc_memfs_backend(fs),
				  dc_cache_create(&o, &c))) {
		CHECK(!"cannot create the cache");
		return;
	}
	root = dc_root(c);
	memset(other, 0, sizeof(other));
	snprintf(a.name, sizeof(a.name), "a");
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "a", S_IFREG | 0644, NULL, &a.in), 0);
	a2 = a;
	sa = stripe_of(c, root, "a");
	for (int i = 0; n < OTHERS && i < 10000; i++) {
		struct job *j = &other[n];

		snprintf(j->name, sizeof(j->name), "o%d", i);
		if (stripe_of(c, root, j->name) == sa)
			continue;
		CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, j->name, S_IFREG | 0644, NULL,
				      &j->in), 0);
		n++;
	}
	CHECK_EQ(n, OTHERS);
	/* the update is in a directory of its own: one in the root would
	 * overtake the stopped miss, which then asks again */
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "d", S_IFDIR | 0755, NULL, &din), 0);
	CHECK_EQ(dc_mkdir(c, root, "d", &din), 0);
	CHECK_EQ(dc_lookup(c, root, "d", 1, &d), 0);
	snprintf(up.name, sizeof(up.name), "new");
	up.update = true;
	CHECK_EQ(dc_memfs_add(fs, din.ino, "new", S_IFREG | 0644, NULL, &up.in), 0);
	/* "e" is cached, unlisted (a lookup, not dc_mkdir, which lists at
	 * once), with one name; the lister's missing name, like the others,
	 * falls in another stripe than "a" */
	CHECK_EQ(dc_memfs_add(fs, DC_MEMFS_ROOT, "e", S_IFDIR | 0755, NULL, &ein), 0);
	CHECK_EQ(dc_memfs_add(fs, ein.ino, "f", S_IFREG | 0644, NULL, &f), 0);
	CHECK_EQ(dc_lookup(c, root, "e", 1, &e), 0);
	for (int i = 0; e && !lister.path[0] && i < 10000; i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%d", i);
		if (stripe_of(c, e, name) != sa)
			snprintf(lister.path, sizeof(lister.path), "e/%s", name);
	}
	CHECK(lister.path[0]);
	lister.c = c;
	lister.root = root;
	a.c = a2.c = up.c = c;
	a.root = a2.root = root;
	up.root = d;
	for (int i = 0; i < n; i++) {
		other[i].c = c;
		other[i].root = root;
	}

	dc_debug_on_miss(c, stop_here, &s);
	start(&a, &ta);
	CHECK(wait_for(&s.stopped));
	for (int i = 0; i < n; i++)
		start(&other[i], &tother[i]);
	start(&lister, &tlister);
	if (mode == DC_MODE_RCU) {
		/* every other name is answered while "a"'s miss is stopped,
		 * and "e" is listed */
		for (int i = 0; i < n; i++)
			CHECK(wait_for(&other[i].done));
		CHECK(wait_for(&lister.done));
		dc_get_stats(c, &st);	/* "d", listed when made, and "e" */
		CHECK_EQ(st.readdirs, 2);
	} else {
		h_sleep_ms(50);
		for (int i = 0; i < n; i++)
			CHECK(!__atomic_load_n(&other[i].done, __ATOMIC_ACQUIRE));
		CHECK(!__atomic_load_n(&lister.done, __ATOMIC_ACQUIRE));
	}
	/* a miss of the same name waits for it: on its chain stripe, as no
	 * writer is in yet (given time to be wrong) */
	start(&a2, &ta2);
	h_sleep_ms(50);
	CHECK(!__atomic_load_n(&a2.done, __ATOMIC_ACQUIRE));
	/* and so does an update, started last, as a writer waiting for the
	 * misses inside keeps new ones out */
	start(&up, &tup);
	h_sleep_ms(50);
	CHECK(!__atomic_load_n(&up.done, __ATOMIC_ACQUIRE));
	CHECK(!__atomic_load_n(&a2.done, __ATOMIC_ACQUIRE));
	__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);

	pthread_join(ta, NULL);
	pthread_join(ta2, NULL);
	pthread_join(tup, NULL);
	pthread_join(tlister, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(tother[i], NULL);
	dc_debug_on_miss(c, NULL, NULL);
	CHECK_EQ(a.err, 0);
	CHECK_EQ(a.got.ino, a.in.ino);
	CHECK_EQ(a2.err, 0);
	CHECK_EQ(a2.got.ino, a.in.ino);
	CHECK_EQ(up.err, 0);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(other[i].err, 0);
		CHECK_EQ(other[i].got.ino, other[i].in.ino);
	}
	CHECK_EQ(lister.err, -ENOENT);
	/* "a" was asked once: the second lookup took the first one's
	 * answer; beside the others, "e" and the lister's name were asked */
	dc_get_stats(c, &st);
	CHECK_EQ(st.misses, (uint64_t)n + 3);
	/* the listing was installed: another missing name in "e" is
	 * answered from it, and "f" is still found */
	CHECK_EQ(dc_resolve(c, root, "e/absent", 0, &a.got), -ENOENT);
	CHECK_EQ(dc_resolve(c, root, "e/f", 0, &a.got), 0);
	CHECK_EQ(a.got.ino, f.ino);
	dc_get_stats(c, &st);
	CHECK_EQ(st.misses, (uint64_t)n + 4);
	CHECK_EQ(st.complete_answers, 1);
	CHECK_EQ(st.readdirs, 2);
	CHECK_EQ(dc_resolve(c, root, "d/new", 0, &a.got), 0);
	CHECK_EQ(a.got.ino, up.in.ino);
	CHECK_EQ(dc_debug_check(c), 0);
	if (d)
		dc_put(c, d);
	if (e)
		dc_put(c, e);
	dc_put(c, root);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		stage(DC_MODE_RCU);
	stage(DC_MODE_GLOBAL);
	stage(DC_MODE_RWLOCK);
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_misslock");
}
