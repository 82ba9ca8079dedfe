/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash.c - the (parent, name) hash table.
 *
 * One array of bucket heads, each a singly linked chain through hnext,
 * sized once at creation: the next power of two at or above max_entries/2,
 * so a full cache averages at most two entries per chain and the table
 * costs at most 8 bytes per cached entry (4 to 8 when full).  (The cache never holds more than max_entries, so it
 * never needs to grow; see docs/design.md for why we chose this over a
 * resizable table.)
 *
 * Writers (holding wlock, or a miss its chain's stripe) publish with
 * release stores -- every store of a chain link, hnext included -- and
 * readers follow chains with acquire loads under rcu_read_lock.
 * Removing an entry keeps
 * its hnext intact, so a reader standing on it walks on into the rest of
 * the chain.  An entry MOVED to another chain (rename) can lead a reader
 * into the wrong chain: c->rename_seq is odd across every move, and a
 * reader that missed re-checks it (lookup_cached in walk.c).
 *
 * The stored hash is of the name keyed with the cache's random key (a
 * 128-bit multiply per word, both factors depending on the key, so that
 * no difference between names survives it in a way known without the
 * key) and salted with the parent's address (dc__hash_salt): "Makefile"
 * in 5,000 directories lands in 5,000 buckets, and names made to share a
 * chain cannot be computed without the key, nor carried from one
 * directory to another.  Component hashing finds the component's end and
 * hashes it in the same pass, a word at a time (Linux's hash_name does
 * the same); the salt is applied per directory, so the rcu-walk can hash
 * the next component before it knows which entry it will stand in.
 */
#include <string.h>

#include "internal.h"

uint64_t dc__hash_key(const struct dc_cache *c, const char *s, size_t len)
{
	uint64_t key;

	dc__hash_component(s, s + len, &c->hkey, &key);
	return key;
}

/*
 * Inputs of 32 bytes or more (deep paths) are taken 32 bytes a step, as
 * two lanes of one product per 16 bytes, each word pair folded together
 * before its product (as wyhash does): the products of a step do not
 * wait for each other, and a lane's chain has one product per step, so
 * a 150-byte path waits for 7 products in a row instead of 20.  The two
 * words of a pair are masked by different values (a key half, and the
 * lane's state, which starts from the other half), or the product,
 * which commutes, would not tell them apart when swapped.
 */
uint64_t dc__hash_bytes(const struct dc_hkey *k, const void *p, size_t len)
{
	const char *s = p;
	uint64_t h = k->k1, w;
	size_t left = len;

	if (left >= 32) {
		uint64_t a = k->k0, b = k->k1 ^ 0x9e3779b97f4a7c15ull, w0, w1, w2, w3;

		for (; left >= 32; s += 32, left -= 32) {
			memcpy(&w0, s, 8);
			memcpy(&w1, s + 8, 8);
			memcpy(&w2, s + 16, 8);
			memcpy(&w3, s + 24, 8);
			a = dc__mum(w0 ^ k->k1, w1 ^ a);
			b = dc__mum(w2 ^ k->k0, w3 ^ b);
		}
		h = dc__mix(k, a, b);
	}
	for (; left >= 8; s += 8, left -= 8) {
		memcpy(&w, s, 8);
		h = dc__mix(k, h, w);
	}
	if (left)
		h = dc__mix(k, h, dc__load_tail(s, left));
	return dc__hash_finish(k, h, len);
}

uint32_t dc__hash_name(const struct dc_cache *c, const struct dc_dentry *dir,
		       const char *s, size_t len)
{
	return dc__hash_salt(dc__hash_key(c, s, len), dir);
}

int dc__hash_init(struct dc_cache *c, uint64_t max_entries)
{
	unsigned bits = 4;

	/* half as many buckets as the cap: at most two entries per chain on
	 * average when full, and at most 8 bytes of bucket per entry */
	while (bits < 40 && (1ull << bits) < max_entries / 2)
		bits++;
	c->nbuckets = 1ull << bits;
	c->shift = 64 - bits;
	c->buckets = dc__calloc(c, c->nbuckets * sizeof(*c->buckets));
	/* the inode index (below) */
	c->inodes_shift = c->shift + 1;
	c->inodes = dc__calloc(c, dc__inodes_size(c));
	return c->buckets && c->inodes ? 0 : -ENOMEM;
}

/* ---- the inode index ----------------------------------------------------
 *
 * Every hashed positive entry but a symlink is on one chain of c->inodes,
 * keyed by its inode (ino, gen) and linked through its aux, which no
 * lock-free reader reads unless the entry is a symlink.  Two users: an
 * update through a handle the cache has dropped finds the live entry for
 * the same directory here, when the name no longer leads to it (after an
 * exchange or an invalidation); and a watcher that knows only an inode
 * (dc_invalidate_child, dc_invalidate_inode) finds every cached name of
 * it.  Walked and changed under the write lock, and added to by misses
 * in its miss side under the chain's index stripe (dc__inodes_add); the
 * heads are stored as relaxed atomics because dc__prefetch_inode reads
 * one without a lock.
 */

/* Bytes of the index: a head per two hash buckets (at most 4 bytes per
 * capped entry; chains stay short as most names are distinct inodes). */
size_t dc__inodes_size(const struct dc_cache *c)
{
	return (size_t)(c->nbuckets >> 1) * sizeof(*c->inodes);
}

static struct dc_dentry **inodes_head(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	uint64_t k = (ino ^ ((uint64_t)gen << 40 | (uint64_t)gen >> 24)) *
		     0x9e3779b97f4a7c15ull;

	return &c->inodes[k >> c->inodes_shift];
}

unsigned dc__inval_slot(uint64_t ino, uint32_t gen)
{
	return (unsigned)(((ino ^ ((uint64_t)gen << 32)) * 0x9e3779b97f4a7c15ull) >> 58);
}

/*
 * Bring the lines a locked find (or an index insert) of hash's chain (or
 * of inode (ino, gen)'s) will read into the cache before the write lock
 * is taken, so that the holder does not wait on memory.  No lock held:
 * the head is read as a relaxed atomic (writers store heads so), and a
 * prefetch of an entry being freed is harmless (it is only a hint;
 * nothing is dereferenced).
 */
void dc__prefetch_chain(struct dc_cache *c, uint32_t hash)
{
	__builtin_prefetch(dc__load(*dc__bucket(c, hash)));
}

void dc__prefetch_inode(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	__builtin_prefetch(dc__load(*inodes_head(c, ino, gen)));
}

/* Is directory d another entry for a directory already cached: the
 * root's inode, or a directory on the index chain from e? */
static bool dir_alias_of(const struct dc_cache *c, const struct dc_dentry *e,
			 const struct dc_dentry *d)
{
	if (c->root->ino == d->ino && c->root->gen == d->gen)
		return true;
	for (; e; e = (const struct dc_dentry *)e->aux)
		if (e != d && dc__is_dir(e->mode) && e->ino == d->ino &&
		    e->gen == d->gen)
			return true;
	return false;
}

/*
 * Link d in.  A file with more than DC_INDEX_MAX cached names (a farm of
 * hard links) has the rest left out, so a chain (walked to unlink an
 * entry) stays short; dc_invalidate_inode forgets everything when its
 * inode's slot has names left out.  Directories (no hard links) always go
 * in: updates find them here.
 */
void dc__inodes_add(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **h = inodes_head(c, d->ino, d->gen), *e;
	/* misses settle side by side (the miss side of the write lock), so
	 * in rcu mode a chain's adds take its stripe; the index's other
	 * users hold the write lock, which keeps the misses out */
	pthread_mutex_t *stripe = c->mode == DC_MODE_RCU ?
		&c->index_lock[(size_t)(h - c->inodes) % DC_INDEX_LOCKS] : NULL;
	unsigned same = 0;

	if (stripe)
		pthread_mutex_lock(stripe);
	if (!dc__is_dir(d->mode))
		for (e = *h; e && same < DC_INDEX_MAX; e = (struct dc_dentry *)e->aux)
			same += e->ino == d->ino && e->gen == d->gen;
	else if (!dc__load(c->dir_aliases) && dir_alias_of(c, *h, d))
		/* relaxed: writers, who read it, keep misses out, and take
		 * over what misses did through the miss side's handoff */
		dc__store(c->dir_aliases, true);
	if (same >= DC_INDEX_MAX) {
		dc__flags_set(d, DC_F_UNINDEXED);
		/* atomic: two stripes' chains may share the slot */
		__atomic_add_fetch(&c->unindexed[dc__inval_slot(d->ino, d->gen)], 1,
				   __ATOMIC_RELAXED);
	} else {
		/* relaxed atomic: a reader that saw this entry as a symlink
		 * may load aux meanwhile (its seq check then fails before it
		 * uses it) */
		dc__store(d->aux, (uintptr_t)*h);
		dc__store(*h, d);	/* atomic: dc__prefetch_inode reads heads unlocked */
	}
	if (stripe)
		pthread_mutex_unlock(stripe);
}

void dc__inodes_del(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **h = inodes_head(c, d->ino, d->gen), *e, *prev = NULL;

	if (dc__flags(d) & DC_F_UNINDEXED) {
		dc__flags_clear(d, DC_F_UNINDEXED);
		__atomic_sub_fetch(&c->unindexed[dc__inval_slot(d->ino, d->gen)], 1,
				   __ATOMIC_RELAXED);
		return;
	}
	for (e = *h; e && e != d; e = (struct dc_dentry *)e->aux)
		prev = e;
	if (e && prev)
		dc__store(prev->aux, d->aux);
	else if (e)
		dc__store(*h, (struct dc_dentry *)d->aux);
	dc__store(d->aux, 0);
}

/* The first entry on (ino, gen)'s chain; walk on through aux (the chain
 * holds other inodes too: compare). */
struct dc_dentry *dc__inodes_first(struct dc_cache *c, uint64_t ino, uint32_t gen)
{
	return *inodes_head(c, ino, gen);
}

/* The same under the write lock, a miss's chain stripe for hash (lock.c),
 * or a lock mode's read lock: no races, and pending entries are found
 * too. */
struct dc_dentry *dc__find_locked(struct dc_cache *c, struct dc_dentry *dir,
				  const char *s, size_t len, uint32_t hash)
{
	struct dc_dentry *d;

	for (d = dc__load(*dc__bucket(c, hash)); d; d = dc__load(d->hnext))
		if (d->hash == hash && d->parent == dir &&
		    !(dc__flags(d) & DC_F_DEAD) && dc__name_eq(d->name, s, len))
			return d;
	return NULL;
}

/* Publish d at the head of its chain.  wlock held, or the miss side and
 * d's chain stripe (dc__chain_lock); d fully initialized. */
void dc__hash_insert(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **b = dc__bucket(c, d->hash);

	/*
	 * release: a rename re-links d while readers may stand on it
	 * (move_entry), and they follow this pointer into the new chain, to
	 * entries they never reached through a bucket head; we saw those
	 * entries' initialisation through the write lock (a miss's entry
	 * through the miss side: its count's release, our acquire in
	 * shut_misses; and a miss inserting sees the chain's earlier
	 * entries through the stripe), and this passes it
	 * on to the readers' acquire of d->hnext (tests/test_relink.c).
	 */
	dc__store_rel(d->hnext, dc__load(*b));
	/* release: d's fields before the pointer that makes d reachable */
	dc__store_rel(*b, d);
	if (dc__indexed(d->mode))
		dc__inodes_add(c, d);
}

/* Unlink d from its chain, leaving d->hnext for readers on it.  wlock, or
 * the miss side and d's chain stripe. */
void dc__hash_remove(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **pp = dc__bucket(c, d->hash);

	while (*pp && *pp != d)
		pp = &(*pp)->hnext;
	if (*pp)
		/* release: the successor's publication carries over to readers
		 * that now reach it through this link */
		dc__store_rel(*pp, dc__load(d->hnext));
	if (dc__indexed(d->mode))
		dc__inodes_del(c, d);
}
