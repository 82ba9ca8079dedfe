/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * writers.h - what the tests of the writer paths (test_writers.c,
 * test_bounds.c) share: a memfs backend with hooks (a release() and a
 * lookup() to stage an interleaving in, a gate its lookups can wait at,
 * counts of its calls), a cache over it, and resolving a path from the
 * root.  Included once per test program.
 */
#ifndef DC_WRITERS_H
#define DC_WRITERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dcache-debug.h"
#include "harness.h"

/* ---- a memfs backend with hooks ------------------------------------------ */

/* A gate the hooked lookups wait at until the test opens it. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static inline void gate_pass(void)
{
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cv, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

static inline void gate_set(bool open)
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

static inline struct dc_cache *new_cache(struct dc_memfs *fs, struct hooked *k,
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

static inline int resolve(struct dc_cache *c, const char *path, unsigned flags,
			  uint64_t *ino)
{
	struct dc_inode st;
	int err = dc_resolve(c, NULL, path, flags, &st);

	if (ino)
		*ino = err ? 0 : st.ino;
	return err;
}

#endif
