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
 * Writers (holding wlock) publish with release stores; readers follow
 * chains with acquire loads under rcu_read_lock.  Removing an entry keeps
 * its hnext intact, so a reader standing on it walks on into the rest of
 * the chain.  An entry MOVED to another chain (rename) can lead a reader
 * into the wrong chain: c->rename_seq is odd across every move, and a
 * reader that missed re-checks it (dc_lookup_cached in walk.c).
 *
 * The stored hash is of the name alone; the bucket mixes in the parent's
 * address, so "Makefile" in 5,000 directories lands in 5,000 buckets.
 * Component hashing finds the component's end and hashes it in the same
 * pass, a word at a time (Linux's hash_name does the same).
 */
#include <string.h>

#include "internal.h"

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull
#define SLASHES	0x2f2f2f2f2f2f2f2full	/* '/' in every byte */

/* Bytes before the first '/' in w (8 when none): a zero byte of w ^ '/'s.
 * The borrow trick can mark bytes above a true zero, never below one. */
static inline unsigned slash_at(uint64_t w)
{
	uint64_t x = w ^ SLASHES;
	uint64_t z = (x - ONES) & ~x & HIGHS;

	return z ? (unsigned)__builtin_ctzll(z) / 8 : 8;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/*
 * Length and hash of the component at s, in one pass, eight bytes at a
 * time (little-endian loads; the final partial word is copied, never read
 * past end, so ASan and the page after the string have nothing to say).
 */
size_t dc__hash_component(const char *s, const char *end, uint32_t *hash)
{
	const char *p = s;
	uint64_t h = 0x243f6a8885a308d3ull, w;
	unsigned n;

	for (;;) {
		size_t left = (size_t)(end - p);

		if (left >= 8) {
			memcpy(&w, p, 8);
		} else {
			w = 0;
			memcpy(&w, p, left);
		}
		n = slash_at(w);
		if (n > left)
			n = (unsigned)left;
		if (n < 8) {
			/* keep the n name bytes only */
			if (n)
				h = mix(h, w & (~0ull >> (64 - 8 * n)));
			p += n;
			break;
		}
		h = mix(h, w);
		p += 8;
	}
	h = mix(h, (uint64_t)(p - s));
	*hash = (uint32_t)(h ^ (h >> 32));
	return (size_t)(p - s);
}

uint32_t dc__hash_name(const char *s, size_t len)
{
	uint32_t hash;

	dc__hash_component(s, s + len, &hash);
	return hash;
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
	return c->buckets ? 0 : -ENOMEM;
}

struct dc_dentry **dc__bucket(struct dc_cache *c, const struct dc_dentry *dir,
			      uint32_t hash)
{
	uint64_t k = ((uint64_t)hash << 32 | hash) ^ ((uintptr_t)dir >> 3);

	return &c->buckets[(k * 0x9e3779b97f4a7c15ull) >> c->shift];
}

bool dc__name_eq(const struct dc_name *n, const char *s, size_t len)
{
	return n->len == len && memcmp(n->s, s, len) == 0;
}

/*
 * Find a settled, hashed entry for (dir, name) without any lock.  Returns it
 * with its sequence snapshot in *seqp; NULL when there is none, or when the
 * match was being changed under us (the caller cannot tell the two apart
 * and must fall back to a slower path either way; it never answers ENOENT
 * from a NULL here).  Caller holds rcu_read_lock.
 */
struct dc_dentry *dc__find_rcu(struct dc_cache *c, struct dc_dentry *dir,
			       const char *s, size_t len, uint32_t hash,
			       uint32_t *seqp)
{
	struct dc_dentry *d;
	uint32_t seq;

	/* acquire on each link: the entry's fields were written before the
	 * release store that published it (dc__hash_insert) */
	for (d = LOAD_ACQ(*dc__bucket(c, dir, hash)); d; d = LOAD_ACQ(d->hnext)) {
		if (LOAD(d->hash) != hash || LOAD(d->parent) != dir)
			continue;
		seq = seq_begin(&d->seq);
		if (dflags(d) & (DC_F_DEAD | DC_F_PENDING))
			continue;
		if (!dc__name_eq(LOAD_ACQ(d->name), s, len))
			continue;
		/* the parent, hash and name we matched belong together */
		if (seq_retry(&d->seq, seq) || LOAD(d->parent) != dir)
			return NULL;
		*seqp = seq;
		return d;
	}
	return NULL;
}

/* The same under the write lock (or a lock mode's read lock): no races,
 * and pending entries are found too. */
struct dc_dentry *dc__find_locked(struct dc_cache *c, struct dc_dentry *dir,
				  const char *s, size_t len, uint32_t hash)
{
	struct dc_dentry *d;

	for (d = LOAD(*dc__bucket(c, dir, hash)); d; d = LOAD(d->hnext))
		if (d->hash == hash && d->parent == dir &&
		    !(dflags(d) & DC_F_DEAD) && dc__name_eq(d->name, s, len))
			return d;
	return NULL;
}

/* Publish d at the head of its chain.  wlock held; d fully initialized. */
void dc__hash_insert(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **b = dc__bucket(c, d->parent, d->hash);

	STORE(d->hnext, LOAD(*b));
	/* release: d's fields before the pointer that makes d reachable */
	STORE_REL(*b, d);
}

/* Unlink d from its chain, leaving d->hnext for readers on it.  wlock. */
void dc__hash_remove(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_dentry **pp = dc__bucket(c, d->parent, d->hash);

	while (*pp && *pp != d)
		pp = &(*pp)->hnext;
	if (*pp)
		/* release: the successor's publication carries over to readers
		 * that now reach it through this link */
		STORE_REL(*pp, LOAD(d->hnext));
}
