/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cache.c - creating and destroying a cache, statistics, and the checks
 * and helpers that look at the cache as a whole.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "internal.h"

static uint64_t next_cache_id = 1;

static const char *const mode_names[] = {
	[DC_MODE_RCU] = "rcu",
	[DC_MODE_GLOBAL] = "global",
	[DC_MODE_RWLOCK] = "rwlock",
};

DC_API const char *dc_version(void)
{
	return DC_VERSION_STRING;
}

DC_API int dc_version_number(void)
{
	return DC_VERSION_NUMBER;
}

const char *dc__enum_name(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : NULL;
}

int dc__enum_parse(const char *const *names, size_t n, const char *name)
{
	size_t i;

	if (name)
		for (i = 0; i < n; i++)
			if (!strcmp(name, names[i]))
				return (int)i;
	return -EINVAL;
}

DC_API const char *dc_mode_name(enum dc_mode mode)
{
	return dc__enum_name(mode_names, DC_ARRAY_SIZE(mode_names), (unsigned)mode);
}

DC_API int dc_mode_parse(const char *name, enum dc_mode *out)
{
	int v = out ? dc__enum_parse(mode_names, DC_ARRAY_SIZE(mode_names), name)
		    : -EINVAL;

	if (v < 0)
		return v;
	*out = (enum dc_mode)v;
	return 0;
}

/*
 * The name hash's key.  From the kernel's random pool; should that fail
 * (no getrandom, a sandbox refusing it) the clock, the cache's address and
 * its id still make it differ per cache and per run.
 */
static void hash_key(struct dc_cache *c)
{
	struct timespec ts;
	uint64_t x;

	if (getrandom(&c->hkey, sizeof(c->hkey), GRND_NONBLOCK) ==
	    (ssize_t)sizeof(c->hkey))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
	    (uint64_t)(uintptr_t)c ^ (c->id << 48);
	c->hkey.k0 = dc__mum(x, 0x9e3779b97f4a7c15ull);
	c->hkey.k1 = dc__mum(x ^ 0xd6e8feb86659fd93ull, 0xbf58476d1ce4e5b9ull);
}

/* ---- expiry ------------------------------------------------------------- */

uint64_t dc__now(const struct dc_cache *c)
{
	struct timespec ts;

	clock_gettime(dc__load(c->ttl_clock) ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE,
		      &ts);
	/* never 0, which means "no deadline" and "no clock read" */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
}

/* The coarse clock's tick: it moves a tick at a time (1-10 ms). */
static uint64_t coarse_tick(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return 10000000u;
	return (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
}

/*
 * TTLs to deadlines.  The coarse clock costs a few ns a read where
 * CLOCK_MONOTONIC costs tens, but it moves a tick at a time and, read
 * when a deadline passes, may still show up to a tick (a little more on a
 * loaded machine) before it.  So with the coarse clock every deadline is
 * put two ticks early, and the coarse clock is used only when every TTL
 * spans at least four ticks; shorter TTLs read CLOCK_MONOTONIC, exact.
 * Either way no answer is used past its TTL, and none expires more than
 * two ticks early.
 */
static void set_ttl(struct dc_cache *c, uint32_t pos_ms, uint32_t neg_ms)
{
	uint64_t tick = coarse_tick(), pos = (uint64_t)pos_ms * 1000000u;
	uint64_t neg = (uint64_t)neg_ms * 1000000u;
	bool exact = (pos && pos < 4 * tick) || (neg && neg < 4 * tick);

	if (!exact) {
		pos = pos ? pos - 2 * tick : 0;
		neg = neg ? neg - 2 * tick : 0;
	}
	dc__store(c->ttl_clock, (uint32_t)exact);
	dc__store(c->ttl_pos, pos);
	dc__store(c->ttl_neg, neg);
	dc__store(c->ttl_on, (uint32_t)(pos_ms || neg_ms));
}

DC_API int dc_set_ttl(struct dc_cache *c, uint32_t ttl_ms, uint32_t neg_ttl_ms)
{
	if (!c)
		return -EINVAL;
	dc__thread_enter();
	/* under the write lock: callers (an owner, a watcher's fall-back)
	 * never mix their values, and stamps read one setting whole */
	dc__write_lock(c);
	set_ttl(c, ttl_ms, neg_ttl_ms);
	dc__write_unlock(c);
	/* what is cached carries the old deadlines, or none: start again.
	 * Everything below the root is forgotten whatever the backend's
	 * root() answers, and the setting holds: its error is not ours */
	if (ttl_ms || neg_ttl_ms)
		dc_invalidate_all(c);
	return 0;
}

static void locks_init(struct dc_cache *c)
{
	pthread_mutex_init(&c->wlock, NULL);
	pthread_rwlock_init(&c->rwlock, NULL);
	for (unsigned i = 0; i < DC_WAIT_SLOTS; i++) {
		pthread_mutex_init(&c->waitq[i].lock, NULL);
		pthread_cond_init(&c->waitq[i].cv, NULL);
	}
	pthread_mutex_init(&c->lru_lock, NULL);
	pthread_mutex_init(&c->shrink_lock, NULL);
	pthread_cond_init(&c->shrink_cv, NULL);
	pthread_mutex_init(&c->stat_lock, NULL);
	pthread_mutex_init(&c->list_lock, NULL);
	pthread_mutex_init(&c->ptab_lock, NULL);
	for (unsigned i = 0; i < DC_CHAIN_LOCKS; i++)
		pthread_mutex_init(&c->chain_lock[i], NULL);
	for (unsigned i = 0; i < DC_INDEX_LOCKS; i++)
		pthread_mutex_init(&c->index_lock[i], NULL);
}

static void locks_destroy(struct dc_cache *c)
{
	pthread_mutex_destroy(&c->wlock);
	pthread_rwlock_destroy(&c->rwlock);
	for (unsigned i = 0; i < DC_WAIT_SLOTS; i++) {
		pthread_mutex_destroy(&c->waitq[i].lock);
		pthread_cond_destroy(&c->waitq[i].cv);
	}
	pthread_mutex_destroy(&c->lru_lock);
	pthread_mutex_destroy(&c->shrink_lock);
	pthread_cond_destroy(&c->shrink_cv);
	pthread_mutex_destroy(&c->stat_lock);
	pthread_mutex_destroy(&c->list_lock);
	pthread_mutex_destroy(&c->ptab_lock);
	for (unsigned i = 0; i < DC_CHAIN_LOCKS; i++)
		pthread_mutex_destroy(&c->chain_lock[i]);
	for (unsigned i = 0; i < DC_INDEX_LOCKS; i++)
		pthread_mutex_destroy(&c->index_lock[i]);
}

static int root_init(struct dc_cache *c)
{
	struct dc_inode in;
	int err;

	memset(&in, 0, sizeof(in));
	err = dc__be_err(c->be.ops->root(c->be.ctx, &in));
	if (err)
		return err;
	if (!dc__is_dir(in.mode) || !dc__mode_ok(in.mode)) {
		if (c->be.ops->release)
			c->be.ops->release(c->be.ctx, &in);
		return dc__is_dir(in.mode) ? -EIO : -ENOTDIR;
	}
	c->root = dc__alloc(c, NULL, "", 0, 0, DC_F_ROOT, &in, NULL);
	if (!c->root) {
		if (c->be.ops->release)
			c->be.ops->release(c->be.ctx, &in);
		return -ENOMEM;
	}
	c->root->count = 1;	/* the cache's own: the root is never evicted */
	return 0;
}

/* Everything but the backend; safe on a half-built cache. */
static void cache_free(struct dc_cache *c)
{
	/* callbacks queued by evictions and updates free into our slab */
	rcu_barrier();
	dc__tsan_acquire(c);	/* every callback's work happened before */
	dc__lru_free_all(c);
	if (c->root)
		dc__free_now(c, c->root);
	dc__lists_free(c);	/* the entries took theirs; none are left */
	dc__paths_free(c);	/* no reader is left either */
	dc__free(c, c->buckets, c->nbuckets * sizeof(*c->buckets));
	dc__free(c, c->inodes, dc__inodes_size(c));
	dc__stat_free(c);
	dc__slab_destroy(c);
	locks_destroy(c);
	dc__free(NULL, c, sizeof(*c));
}

/* Reserved space must be zero: a later version gives it a meaning. */
static bool options_valid(const struct dc_options *opt)
{
	const struct dc_backend_ops *ops = opt->backend.ops;

	if (!dc__zeroed(opt->reserved, sizeof(opt->reserved)))
		return false;
	for (size_t i = 0; i < sizeof(ops->reserved) / sizeof(ops->reserved[0]); i++)
		if (ops->reserved[i])
			return false;
	return ops->root && ops->lookup && (unsigned)opt->mode <= DC_MODE_RWLOCK;
}

DC_API int dc_cache_create(const struct dc_options *opt, struct dc_cache **out)
{
	const struct dc_backend_ops *ops = opt ? opt->backend.ops : NULL;
	struct dc_cache *c;
	int err = -ENOMEM;

	if (!opt || !out || !ops || !options_valid(opt)) {
		err = -EINVAL;
		goto fail_backend;
	}
	dc__thread_enter();
	c = dc__calloc_aligned(sizeof(*c));	/* counted in live bytes, not c->bytes */
	if (!c)
		goto fail_backend;
	c->mode = opt->mode;
	c->id = __atomic_fetch_add(&next_cache_id, 1, __ATOMIC_RELAXED);
	hash_key(c);
	c->be = opt->backend;
	c->max_entries = opt->max_entries ? opt->max_entries : DC_DEFAULT_MAX_ENTRIES;
	c->max_negative = opt->max_negative ? opt->max_negative : c->max_entries / 4;
	if (c->max_negative > c->max_entries)
		c->max_negative = c->max_entries;
	set_ttl(c, opt->ttl_ms, opt->neg_ttl_ms);
	c->complete_after = opt->complete_after ? opt->complete_after :
			    DC_DEFAULT_COMPLETE_AFTER;
	c->complete_max = opt->complete_max ? opt->complete_max :
			  DC_DEFAULT_COMPLETE_MAX;
	locks_init(c);
	err = dc__slab_new(&c->slab, sizeof(struct dc_dentry));
	if (!err)
		err = dc__hash_init(c, c->max_entries);
	if (!err)
		err = dc__lists_init(c);
	if (!err && c->mode == DC_MODE_RCU)	/* read lock-free, as the walk */
		err = dc__paths_init(c);
	if (!err)
		err = root_init(c);
	if (!err)	/* last: nothing after it can fail, so no stop to undo */
		err = dc__shrinker_start(c);
	if (err) {
		cache_free(c);
		goto fail_backend;
	}
	*out = c;
	return 0;

fail_backend:
	if (ops && ops->destroy)
		ops->destroy(opt->backend.ctx);
	return err;
}

DC_API void dc_cache_destroy(struct dc_cache *c)
{
	struct dc_backend be;

	if (!c)
		return;
	dc__thread_enter();
	be = c->be;
	/* before cache_free's rcu_barrier: the thread's last frees are
	 * queued by then, and it queues no more */
	dc__shrinker_stop(c);
	cache_free(c);
	if (be.ops->destroy)
		be.ops->destroy(be.ctx);
}

DC_API void dc_get_stats(struct dc_cache *c, struct dc_stats *st)
{
	uint64_t v[DC_ST_NR];

	if (!c || !st)
		return;
	dc__stat_sum(c, v);
	memset(st, 0, sizeof(*st));
	/* a one-probe answer is counted once, as a path hit of its sign */
	st->lookups = v[DC_ST_LOOKUPS] + v[DC_ST_PATH_HITS] + v[DC_ST_PATH_NEG_HITS];
	st->hits = v[DC_ST_HITS] + v[DC_ST_PATH_HITS];
	st->negative_hits = v[DC_ST_NEG_HITS] + v[DC_ST_PATH_NEG_HITS];
	st->misses = v[DC_ST_MISSES];
	st->restarts = v[DC_ST_RESTARTS];
	st->evictions = v[DC_ST_EVICTIONS];
	st->lock_waits = v[DC_ST_LOCK_WAITS];
	st->miss_waits = v[DC_ST_MISS_WAITS];
	st->negative_misses = v[DC_ST_NEG_MISSES];
	st->complete_answers = v[DC_ST_COMPLETE];
	st->readdirs = v[DC_ST_READDIRS];
	st->path_hits = v[DC_ST_PATH_HITS] + v[DC_ST_PATH_NEG_HITS];
	st->entries = dc__load(c->nr_entries);
	st->negative = dc__load(c->nr_negative);
	st->bytes = dc__load(c->bytes);
}

/* ---- paths of entries ---------------------------------------------------- */

/* Build d's path backwards into buf; caller holds the read lock. */
static int build_path(struct dc_cache *c, struct dc_dentry *d, char *buf,
		      size_t size)
{
	struct dc_dentry *root = dc__load_acq(c->root);	/* see swap_root */
	size_t pos = size;
	struct dc_name *n;

	buf[--pos] = '\0';
	if (!dc__load_acq(d->parent))	/* a root, this one or a former one */
		d = root;
	/* acquire: pairs with move_entry's release of parent; a former root
	 * is DEAD, so a climb from below it stops there */
	for (; d != root; d = dc__load_acq(d->parent)) {
		if (dc__flags(d) & DC_F_DEAD)
			return -ENOENT;
		n = dc__load_acq(d->name);
		if (n->len + 1 > pos)
			return -ERANGE;
		pos -= n->len;
		memcpy(buf + pos, n->s, n->len);
		buf[--pos] = '/';
	}
	if (pos == size - 1) {
		if (pos == 0)
			return -ERANGE;
		buf[--pos] = '/';
	}
	memmove(buf, buf + pos, size - pos);
	return (int)(size - pos - 1);
}

DC_API int dc_dentry_path(struct dc_cache *c, struct dc_dentry *d, char *buf,
			  size_t size)
{
	uint32_t rseq;
	int err;

	if (!c || !d || !buf || size == 0)
		return -EINVAL;
	dc__thread_enter();
	do {
		/* a rename anywhere may have mixed two states of the chain */
		rseq = dc__seq_begin(&c->rename_seq);
		dc__read_lock(c);
		err = build_path(c, d, buf, size);
		dc__read_unlock(c);
	} while (c->mode == DC_MODE_RCU && dc__seq_retry(&c->rename_seq, rseq));
	return err;
}

/* ---- consistency check (tests) ------------------------------------------- */

/* What is wrong with hashed entry d, in chain bucket, or NULL. */
static const char *check_entry(struct dc_cache *c, struct dc_dentry *d, uint64_t bucket)
{
	struct dc_name *n = d->name;

	if (dc__flags(d) & DC_F_DEAD || dc__load(d->count) < 0)
		return "dead, or claimed, but hashed";
	if (!d->parent)
		return "hashed without a parent";
	if (d->seq & 1)
		return "its seq odd at rest";
	if (dc__hash_name(c, d->parent, n->s, n->len) != d->hash ||
	    dc__bucket(c, d->hash) != &c->buckets[bucket])
		return "its hash is not of its name, or not of its chain";
	if (!dc__is_dir(d->parent->mode) && !(dc__flags(d->parent) & DC_F_DEAD))
		return "its parent is not a directory";
	/* a hashed positive but a symlink is in the inode index (hash.c) */
	if (dc__indexed(d->mode) && !(dc__flags(d) & DC_F_UNINDEXED)) {
		struct dc_dentry *e = dc__inodes_first(c, d->ino, d->gen);
		uint64_t steps = 0;

		while (e && e != d && steps++ <= c->nr_entries)
			e = (struct dc_dentry *)e->aux;
		if (!e)
			return "not in the inode index";
		if (e != d)
			return "its inode index chain loops";
	}
	/* a hashed child holds a count on its parent */
	return dc__load(d->parent->count) > 0 ? NULL : "its parent's count is 0";
}

/* The first invariant found broken, said into a caller's buffer. */
struct verdict {
	char *buf;
	size_t size;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void fail(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->failed)
		return;
	v->failed = true;
	if (v->size) {
		va_start(ap, fmt);
		vsnprintf(v->buf, v->size, fmt, ap);
		va_end(ap);
	}
}

DC_API void dc_debug_on_miss(struct dc_cache *c, void (*fn)(void *arg), void *arg)
{
	c->dbg_miss_arg = arg;
	c->dbg_miss = fn;
}

DC_API void dc_debug_on_path_add(struct dc_cache *c, void (*fn)(void *arg),
				 void *arg)
{
	c->dbg_padd_arg = arg;
	c->dbg_padd = fn;
}

DC_API int dc_debug_check_why(struct dc_cache *c, char *why, size_t size)
{
	struct verdict v = { why, why ? size : 0, false };
	struct dc_dentry *d;
	uint64_t i, hashed = 0, listed = 0, neg = 0, astray = 0, nidx = 0, indexed = 0;
	uint64_t steps;
	const char *bad;

	if (v.size)
		why[0] = '\0';
	if (!c)
		return -EINVAL;
	dc__write_lock(c);
	pthread_mutex_lock(&c->lru_lock);
	for (i = 0; i < c->nbuckets && !v.failed; i++)
		for (d = c->buckets[i]; d && !v.failed; d = d->hnext, hashed++) {
			struct dc_dentry *e;

			/* every walk here is bounded: a loop fails, not hangs */
			if (hashed > c->nr_entries) {
				fail(&v, "more hashed than the %llu entries (chain %llu loops?)",
				     (unsigned long long)c->nr_entries, (unsigned long long)i);
				break;
			}
			bad = check_entry(c, d, i);
			if (bad)
				fail(&v, "entry \"%.*s\" (chain %llu): %s", (int)d->name->len,
				     d->name->s, (unsigned long long)i, bad);
			nidx += dc__indexed(d->mode) && !(dc__flags(d) & DC_F_UNINDEXED);
			/* one hashed entry per (parent, name) */
			steps = 0;
			for (e = d->hnext; e && !v.failed && steps++ <= c->nr_entries; e = e->hnext)
				if (e->parent == d->parent && e->hash == d->hash &&
				    dc__name_eq(e->name, d->name->s, d->name->len))
					fail(&v, "entry \"%.*s\" hashed twice",
					     (int)d->name->len, d->name->s);
		}
	/* and the index holds hashed indexed entries only, each once: as
	 * many as the table holds */
	for (i = 0; i < dc__inodes_size(c) / sizeof(*c->inodes) && !v.failed; i++)
		for (d = c->inodes[i]; d && !v.failed; d = (struct dc_dentry *)d->aux)
			if (dc__flags(d) & DC_F_DEAD || !dc__indexed(d->mode))
				fail(&v, "the inode index holds a dead or unindexed entry");
			else if (++indexed > nidx)	/* a cycle ends here too */
				fail(&v, "the inode index holds more than the table's %llu indexed entries",
				     (unsigned long long)nidx);
	if (indexed != nidx)
		fail(&v, "the inode index holds %llu entries, the table %llu indexed ones",
		     (unsigned long long)indexed, (unsigned long long)nidx);
	/* listed entries carry LISTED and ONNEG as their list says; with the
	 * held ones taken off (nr_isolated) and the root, they are all */
	for (d = c->lru_pos.head; d && listed <= c->nr_entries; d = d->lru_next) {
		listed++, neg += dc__is_negative(d), astray += dc__is_negative(d);
		if ((dc__flags(d) & (DC_F_LISTED | DC_F_ONNEG)) != DC_F_LISTED)
			fail(&v, "an entry on the positive list has flags %#x",
			     (unsigned)dc__flags(d));
	}
	for (d = c->lru_neg.head; d && listed <= c->nr_entries; d = d->lru_next) {
		listed++, neg += dc__is_negative(d);
		if ((dc__flags(d) & (DC_F_LISTED | DC_F_ONNEG)) != (DC_F_LISTED | DC_F_ONNEG))
			fail(&v, "an entry on the negative list has flags %#x",
			     (unsigned)dc__flags(d));
	}
	if (listed + c->nr_isolated + 1 != c->nr_entries)
		fail(&v, "%llu listed + %llu isolated + the root != %llu entries",
		     (unsigned long long)listed, (unsigned long long)c->nr_isolated,
		     (unsigned long long)c->nr_entries);
	if (neg > c->nr_negative)
		fail(&v, "%llu negatives listed > nr_negative %llu",
		     (unsigned long long)neg, (unsigned long long)c->nr_negative);
	if (hashed > listed + c->nr_isolated)
		fail(&v, "%llu hashed > %llu listed + %llu isolated",
		     (unsigned long long)hashed, (unsigned long long)listed,
		     (unsigned long long)c->nr_isolated);
	if (astray != c->nr_neg_astray)
		fail(&v, "%llu negatives on the positive list, nr_neg_astray %llu",
		     (unsigned long long)astray, (unsigned long long)c->nr_neg_astray);
	pthread_mutex_unlock(&c->lru_lock);
	dc__write_unlock(c);
	return v.failed ? -EUCLEAN : 0;
}

DC_API int dc_debug_check(struct dc_cache *c)
{
	return dc_debug_check_why(c, NULL, 0);
}
