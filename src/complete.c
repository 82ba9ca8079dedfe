/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * complete.c - complete directories: a directory whose whole listing the
 * cache holds answers a name that is not in it (-ENOENT) without asking
 * the backend, until any of its names changes.
 *
 * Compilers probe many include directories for names that are not there;
 * each probe of a new name is a backend lookup that answers -ENOENT.  After
 * complete_after such answers in one directory, the thread
 * whose miss made the count lists the directory with the backend's
 * readdir, once; from then on lookup_slow answers any name the listing
 * lacks with a settled negative entry, as if the backend had said -ENOENT.
 * A directory's record is told of every change of its names the cache is
 * told of (dc__dir_name_changed, dc__dir_changed), under the write lock.
 *
 * A record per directory (struct dc_list) holds the count or the listing:
 * the sorted keyed hashes of its names (8 bytes a name).  A hash that is
 * in the listing but whose name is not (a collision) only costs a backend
 * lookup; a name absent from the listing is absent from the directory as
 * it was listed, which is all the answer claims.
 *
 * When is a listing true?  Every change of the directory's names that the
 * cache is told of -- an update, an invalidation by name or by inode, a
 * directory's attribute change -- or that a revalidation learns, reaches
 * its record under the write lock, and forgetting the directory makes it
 * orphaned.  A change while readdir runs (from the miss that made the
 * count on) marks the record, and that listing is not installed; a
 * change of one name keeps an installed listing, with the name taken in
 * (it may exist now); any other change drops it.  A name a miss finds
 * while readdir runs (the backend says it exists, though nothing told
 * the cache) is taken into that listing when it is installed, or at
 * once into one installed while the miss asked.  A listing is used only
 * while the directory is not orphaned (lookup_slow checks first), not
 * suspect, and with TTLs on, not older than the negative TTL, counted
 * from the asking.  So an answer from a listing is never older than the
 * last invalidation the cache was told of, the same promise a cached
 * negative entry makes.
 *
 * Locking: records are found, changed and used under c->list_lock, which
 * nests inside the write lock and inside its miss side.  Changes of names
 * reach records under the write lock; dc__lookup_slow (miss.c) calls in,
 * and dc__list_dir installs a listing, with the miss side held, which
 * keeps out every update, so the changed mark and the orphan test hold
 * still; list_lock orders a record's state among misses and the lister
 * (only the lister ends LS_LISTING).  An entry with a record carries
 * DC_F_HASLIST; dc__free_now drops the record (list_lock alone) before
 * the entry's memory goes, so a record's dir pointer always names a live
 * entry and is never reused while the record exists.  The lister holds a
 * reference on the directory (its lookup's caller does), and a record
 * being listed (LS_LISTING) is never evicted.
 * Nothing here is lock-free: the rcu-walk never reads a record; it meets
 * the negative entries lookup_slow makes from them.
 */
#include <stdlib.h>

#include "internal.h"

#define DC_LIST_BUCKETS	256	/* record chains */
#define DC_LIST_MAX	1024	/* records; past it one is evicted per new one */
#define DC_LIST_FIRST	64	/* keys allocated for a listing at first */
#define DC_LIST_FOUND	4	/* names found while listing, kept for it */

enum {
	LS_COUNTING,	/* counting -ENOENT answers */
	LS_LISTING,	/* one thread is asking readdir */
	LS_COMPLETE,	/* keys hold the listing, kept up to date */
	LS_UNLISTED,	/* more than complete_max names, or readdir said it
			 * cannot list it all: until the names change */
};

struct dc_list {
	struct dc_list *next;		/* chain in c->lists */
	struct dc_dentry *dir;		/* live while the record exists */
	uint32_t misses;		/* -ENOENT answers counted (COUNTING) */
	uint16_t state;
	uint16_t changed;		/* names changed while LISTING */
	uint32_t n;			/* names listed (COMPLETE) */
	uint64_t asked;			/* dc__now() before readdir; 0: TTLs off */
	uint64_t *keys;			/* n sorted keys (COMPLETE) */
	uint32_t nfound;		/* keys in found (LISTING) */
	uint64_t found[DC_LIST_FOUND];	/* names misses found (LISTING) */
};

int dc__lists_init(struct dc_cache *c)
{
	c->lists = dc__calloc(c, DC_LIST_BUCKETS * sizeof(*c->lists));
	return c->lists ? 0 : -ENOMEM;
}

static struct dc_list **chain_of(struct dc_cache *c, const struct dc_dentry *d)
{
	uintptr_t p = (uintptr_t)d;

	/* entries are 128-byte slab objects: the low bits say nothing */
	return &c->lists[(p >> 7 ^ p >> 15) % DC_LIST_BUCKETS];
}

/* The link that points at dir's record, or at the NULL ending its chain. */
static struct dc_list **slot_of(struct dc_cache *c, const struct dc_dentry *dir)
{
	struct dc_list **pp = chain_of(c, dir);

	while (*pp && (*pp)->dir != dir)
		pp = &(*pp)->next;
	return pp;
}

static void drop_keys(struct dc_cache *c, struct dc_list *l)
{
	if (l->keys)
		dc__free(c, l->keys, (size_t)l->n * sizeof(*l->keys));
	l->keys = NULL;
	l->n = 0;
}

/* Unlink the record *pp points at and free it.  list_lock held. */
static void list_remove(struct dc_cache *c, struct dc_list **pp)
{
	struct dc_list *l = *pp;

	*pp = l->next;
	dc__flags_clear(l->dir, DC_F_HASLIST);
	drop_keys(c, l);
	dc__free(c, l, sizeof(*l));
	__atomic_sub_fetch(&c->nr_lists, 1, __ATOMIC_RELAXED);
}

void dc__lists_free(struct dc_cache *c)
{
	if (!c->lists)
		return;
	for (unsigned i = 0; i < DC_LIST_BUCKETS; i++)
		while (c->lists[i])
			list_remove(c, &c->lists[i]);
	dc__free(c, c->lists, DC_LIST_BUCKETS * sizeof(*c->lists));
	c->lists = NULL;
}

/* d is being freed: its record goes first (see the locking rules). */
void dc__list_forget(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_list **pp;

	pthread_mutex_lock(&c->list_lock);
	pp = slot_of(c, d);
	if (*pp)
		list_remove(c, pp);
	pthread_mutex_unlock(&c->list_lock);
}

/* Make room for one more record: evict the first one not being listed,
 * from the buckets in turn.  list_lock held. */
static void evict_one(struct dc_cache *c)
{
	for (unsigned i = 0; i < DC_LIST_BUCKETS; i++) {
		struct dc_list **pp = &c->lists[c->list_hand++ % DC_LIST_BUCKETS];

		for (; *pp; pp = &(*pp)->next)
			if ((*pp)->state != LS_LISTING) {
				list_remove(c, pp);
				return;
			}
	}
}

/* Start the record over for the directory's names as they are now. */
static void restart(struct dc_cache *c, struct dc_list *l)
{
	drop_keys(c, l);
	l->misses = 0;
	l->changed = 0;
	l->nfound = 0;
	l->state = LS_COUNTING;
}

/* dir's record, made if there is none (NULL: no memory).  Write lock (or
 * its miss side) and list_lock held. */
static struct dc_list *record_of(struct dc_cache *c, struct dc_dentry *dir)
{
	struct dc_list **pp = slot_of(c, dir), *l = *pp;

	if (l)
		return l;
	if (__atomic_load_n(&c->nr_lists, __ATOMIC_RELAXED) >= DC_LIST_MAX)
		evict_one(c);
	l = dc__calloc(c, sizeof(*l));
	if (!l)
		return NULL;
	l->dir = dir;
	restart(c, l);
	/* the bucket may have changed under an eviction: find it again */
	pp = chain_of(c, dir);
	l->next = *pp;
	*pp = l;
	__atomic_add_fetch(&c->nr_lists, 1, __ATOMIC_RELAXED);
	dc__flags_set(dir, DC_F_HASLIST);
	return l;
}

static bool is_dot_or_dotdot(const char *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/* Where key is in l's sorted keys, or where it would go: true when it
 * is there (at *at). */
static bool find_key(const struct dc_list *l, uint64_t key, size_t *at)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->keys[mid] < key) {
			lo = mid + 1;
		} else if (l->keys[mid] > key) {
			hi = mid;
		} else {
			lo = mid;
			break;
		}
	}
	*at = lo;
	return lo < hi;
}

static bool has_key(const struct dc_list *l, uint64_t key)
{
	size_t at;

	return find_key(l, key, &at);
}

/* key joins l's sorted keys.  false: no memory, or past complete_max
 * names (l is as it was). */
static bool add_key(struct dc_cache *c, struct dc_list *l, uint64_t key)
{
	uint32_t n = l->n + 1;
	uint64_t *keys;
	size_t at;

	if (find_key(l, key, &at))
		return true;
	if (l->n >= c->complete_max)	/* grown too big: list it again */
		return false;
	keys = dc__malloc(c, (size_t)n * sizeof(*keys));
	if (!keys)
		return false;
	if (l->n) {
		memcpy(keys, l->keys, at * sizeof(*keys));
		memcpy(keys + at + 1, l->keys + at, (l->n - at) * sizeof(*keys));
	}
	keys[at] = key;
	drop_keys(c, l);
	l->keys = keys;
	l->n = n;
	return true;
}

/* A change of dir's names reaches its record: of the name keyed *key,
 * or of names unknown (key NULL).  list_lock held. */
static void note_change(struct dc_cache *c, struct dc_list *l, const uint64_t *key)
{
	switch (l->state) {
	case LS_LISTING:
		l->changed = 1;		/* that listing may have missed it */
		break;
	case LS_COMPLETE:
		/* the name may exist now, so it goes to the backend; every
		 * other name is as listed (one no longer there only costs a
		 * lookup) */
		if (key && add_key(c, l, *key))
			break;
		restart(c, l);
		break;
	case LS_UNLISTED:
		restart(c, l);
		break;
	}
}

static void tell_record(struct dc_cache *c, struct dc_dentry *dir, const uint64_t *key)
{
	struct dc_list *l;

	if (!(dc__flags(dir) & DC_F_HASLIST))
		return;
	pthread_mutex_lock(&c->list_lock);
	l = *slot_of(c, dir);
	if (l)
		note_change(c, l, key);
	pthread_mutex_unlock(&c->list_lock);
}

/*
 * Tell the record of every cached name of dir's inode: a directory seen
 * under two names (a bind mount inside the tree) changes under both, and
 * an update names one.  Directories are always in the inode index (the
 * root is not indexed: it is checked apart).  Records are made under the
 * write lock or its miss side, which the write lock we hold keeps out, so
 * none means none will appear meanwhile.  Write lock held.
 */
static void tell_records(struct dc_cache *c, struct dc_dentry *dir, const uint64_t *key)
{
	struct dc_dentry *d;

	if (!__atomic_load_n(&c->nr_lists, __ATOMIC_RELAXED))
		return;
	tell_record(c, dir, key);
	if (c->root != dir && c->root->ino == dir->ino && c->root->gen == dir->gen)
		tell_record(c, c->root, key);
	for (d = dc__inodes_first(c, dir->ino, dir->gen); d;
	     d = (struct dc_dentry *)d->aux)
		if (d != dir && d->ino == dir->ino && d->gen == dir->gen &&
		    dc__is_dir(d->mode))
			tell_record(c, d, key);
}

/*
 * The name keyed key in dir changed, or may have, and the cache was told.
 * A complete listing stays complete with the name taken in: so a
 * directory that the program fills through the cache, a build's output
 * directory, is not listed again after each file.  Write lock held.
 */
void dc__dir_name_changed(struct dc_cache *c, struct dc_dentry *dir, uint64_t key)
{
	dc__bump_dirgen(c, dir);
	tell_records(c, dir, &key);
}

/* Names in dir changed, which unknown: its listing goes.  Write lock held. */
void dc__dir_changed(struct dc_cache *c, struct dc_dentry *dir)
{
	dc__bump_dirgen(c, dir);
	tell_records(c, dir, NULL);
}

/* Is the listing still what dir holds?  Write lock (or its miss side) and
 * list_lock held. */
static bool listing_holds(struct dc_cache *c, const struct dc_list *l)
{
	uint64_t ttl = dc__load(c->ttl_neg), now;

	if (l->state != LS_COMPLETE || (dc__flags(l->dir) & DC_F_SUSPECT))
		return false;
	if (!ttl || !l->asked)
		return true;
	now = dc__walk_clock(c);
	return !now || now < l->asked + ttl;
}

/*
 * Does dir's listing say name is not there?  Then *asked is when the
 * listing was asked (the negative entry's TTL counts from it).  The miss
 * side of the write lock held; dir not orphaned.
 */
bool dc__listed_absent(struct dc_cache *c, struct dc_dentry *dir,
		       const char *name, size_t len, uint64_t *asked)
{
	struct dc_list *l;
	bool absent = false;

	if (!(dc__flags(dir) & DC_F_HASLIST) || is_dot_or_dotdot(name, len))
		return false;
	pthread_mutex_lock(&c->list_lock);
	l = *slot_of(c, dir);
	if (l && listing_holds(c, l)) {
		absent = !has_key(l, dc__hash_key(c, name, len));
		*asked = l->asked;
	} else if (l && l->state == LS_COMPLETE) {
		restart(c, l);	/* too old: count again */
	}
	pthread_mutex_unlock(&c->list_lock);
	return absent;
}

/*
 * A miss found name in dir: the backend said it exists.  A listing read
 * before the name was made (behind the cache, with nothing told) would
 * deny it once the name's entry is evicted.  One being read takes the
 * name in when it is installed (past DC_LIST_FOUND such names, it is not
 * installed); one installed while the miss asked the backend takes it in
 * now (a key too many only costs a lookup).  The miss side of the write
 * lock held.
 */
void dc__note_found(struct dc_cache *c, struct dc_dentry *dir,
		    const char *name, size_t len)
{
	struct dc_list *l;
	uint64_t key;

	if (!(dc__flags(dir) & DC_F_HASLIST) || is_dot_or_dotdot(name, len))
		return;
	key = dc__hash_key(c, name, len);
	pthread_mutex_lock(&c->list_lock);
	l = *slot_of(c, dir);
	if (l && l->state == LS_LISTING) {
		if (l->nfound < DC_LIST_FOUND)
			l->found[l->nfound++] = key;
		else
			l->changed = 1;
	} else if (l && l->state == LS_COMPLETE && !add_key(c, l, key)) {
		restart(c, l);
	}
	pthread_mutex_unlock(&c->list_lock);
}

/*
 * Count one more reason to list dir (misses more of them: 1 for each
 * -ENOENT answer; a directory just made counts as all it needs), and
 * start listing it when the count is made.  true: the caller is to list
 * dir now (dc__list_dir), with no lock held.  Write lock or its miss
 * side held.
 */
static bool count_toward_listing(struct dc_cache *c, struct dc_dentry *dir,
				 uint32_t more)
{
	struct dc_list *l;
	bool list = false;

	if (c->complete_after == DC_COMPLETE_OFF || !c->be.ops->readdir)
		return false;
	pthread_mutex_lock(&c->list_lock);
	l = record_of(c, dir);
	if (l && l->state == LS_COUNTING)	/* saturating: never wraps to 0 */
		l->misses = more > UINT32_MAX - l->misses ? UINT32_MAX : l->misses + more;
	if (l && l->state == LS_COUNTING && l->misses >= c->complete_after) {
		l->state = LS_LISTING;	/* changes from now on mark it */
		l->changed = 0;
		l->nfound = 0;
		list = true;
	}
	pthread_mutex_unlock(&c->list_lock);
	return list;
}

/* The backend answered -ENOENT for a name in dir, and nothing in dir
 * changed while it was asked.  The miss side held; dir not orphaned. */
bool dc__note_negative(struct dc_cache *c, struct dc_dentry *dir)
{
	return count_toward_listing(c, dir, 1);
}

/*
 * dir was just made through the cache: list it now, as it will be probed
 * soon (a build's output directory) and is empty or nearly.  On true the
 * reference taken here is the caller's, to drop after dc__list_dir.
 * Write lock held.
 */
bool dc__list_new(struct dc_cache *c, struct dc_dentry *dir)
{
	if (!count_toward_listing(c, dir, UINT32_MAX))
		return false;
	__atomic_add_fetch(&dir->count, 1, __ATOMIC_RELAXED);
	return true;
}

struct collect {
	struct dc_cache *c;
	uint64_t *keys;
	uint32_t n, cap, max;
};

/* readdir's emit: one name's key, or -E2BIG past the cap, or -ENOMEM. */
static int collect_name(void *arg, const char *name, size_t len)
{
	struct collect *k = arg;
	uint64_t *keys;

	if (!name || !len || is_dot_or_dotdot(name, len))
		return 0;
	if (k->n == k->max)
		return -E2BIG;
	if (k->n == k->cap) {
		/* 64 bits: twice a cap past 2^31 (complete_max may be) */
		uint64_t cap = k->cap ? (uint64_t)k->cap * 2 : DC_LIST_FIRST;

		if (cap > k->max)
			cap = k->max;
		keys = dc__malloc(k->c, (size_t)cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		if (k->n)
			memcpy(keys, k->keys, (size_t)k->n * sizeof(*keys));
		if (k->keys)
			dc__free(k->c, k->keys, (size_t)k->cap * sizeof(*keys));
		k->keys = keys;
		k->cap = (uint32_t)cap;
	}
	k->keys[k->n++] = dc__hash_key(k->c, name, len);
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The collected keys, sorted, in an array of exactly n (the record's
 * size accounting frees n keys).  false: no memory. */
static bool settle_keys(struct collect *k)
{
	uint64_t *keys;

	if (k->n)	/* an empty directory has no array at all */
		qsort(k->keys, k->n, sizeof(*k->keys), cmp_key);
	if (k->n == k->cap)
		return true;
	keys = k->n ? dc__malloc(k->c, (size_t)k->n * sizeof(*keys)) : NULL;
	if (k->n && !keys)
		return false;
	if (k->n)
		memcpy(keys, k->keys, (size_t)k->n * sizeof(*keys));
	if (k->keys)
		dc__free(k->c, k->keys, (size_t)k->cap * sizeof(*keys));
	k->keys = keys;
	k->cap = k->n;
	return true;
}

/*
 * List dir (its record is LS_LISTING, set by this thread through
 * dc__note_negative) and install the listing if dir's names did not
 * change meanwhile.  No lock held; the caller holds a reference on dir.
 */
void dc__list_dir(struct dc_cache *c, struct dc_dentry *dir)
{
	struct collect k = { .c = c, .max = c->complete_max };
	struct dc_inode din;
	struct dc_list *l;
	uint64_t asked;
	int err;

	/* the miss side: dir's inode data changes only under the write
	 * lock, which it keeps out */
	dc__miss_begin(c);
	din = dc__inode_of(dir);
	dc__miss_end(c);
	asked = dc__walk_clock(c);	/* the TTL counts from the asking */
	dc__stat_inc(c, DC_ST_READDIRS);
	err = dc__be_err(c->be.ops->readdir(c->be.ctx, &din, collect_name, &k));
	if (!err && !settle_keys(&k))
		err = -ENOMEM;

	/* the miss side again: what marks the record changed or dir
	 * orphaned holds the write lock, so either it is done and seen here
	 * (changed: the listing is dropped) or it waits for this install and
	 * then reaches the installed record; list_lock orders the install
	 * with other misses' use of the record */
	dc__miss_begin(c);
	pthread_mutex_lock(&c->list_lock);
	l = *slot_of(c, dir);	/* never evicted while LS_LISTING */
	if (!err && !l->changed && !dc__orphaned(dir)) {
		l->state = LS_COMPLETE;
		l->keys = k.keys;
		l->n = k.n;
		l->asked = asked;
		k.keys = NULL;
		/* names found meanwhile exist, listed or not */
		for (uint32_t i = 0; i < l->nfound; i++)
			if (!add_key(c, l, l->found[i])) {
				restart(c, l);
				break;
			}
		l->nfound = 0;
	} else if ((err == -E2BIG || err == -EOPNOTSUPP) && !l->changed) {
		l->state = LS_UNLISTED;	/* until the names change */
	} else {
		restart(c, l);
	}
	pthread_mutex_unlock(&c->list_lock);
	dc__miss_end(c);
	if (k.keys)
		dc__free(c, k.keys, (size_t)k.cap * sizeof(*k.keys));
}
