/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * alloc.c - every byte libdcache allocates goes through here.
 *
 * Two reasons: the cache reports the bytes it holds (c->bytes, measured,
 * not computed), and tests can make allocations fail on purpose
 * (dc_debug_fail_alloc) to prove every error path.
 *
 * Entries come from a slab of fixed-size objects carved from 64 KiB chunks:
 * glibc would round a 120-byte entry up to a 128-byte chunk, and the entry
 * budget (128 bytes with its hash bucket) leaves no room for that.
 * Chunks are returned only at dc_cache_destroy; freed objects are reused.
 *
 * Locking: slab->lock guards the free list and the chunk list.  Objects
 * are freed here only after an RCU grace period (see dentry.c), so no
 * reader can still see an object handed out again.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SLAB_CHUNK	(64 * 1024)

/*
 * Under AddressSanitizer a freed object is poisoned until it is handed out
 * again, so a use after free (a reader outliving the grace period, a
 * count dropped twice) is caught even though the memory stays in the slab.
 */
#if defined(__SANITIZE_ADDRESS__)
#define DC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DC_ASAN 1
#endif
#endif
#ifdef DC_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define poison(p, n)	__asan_poison_memory_region((p), (n))
#define unpoison(p, n)	__asan_unpoison_memory_region((p), (n))
#else
#define poison(p, n)	((void)(p), (void)(n))
#define unpoison(p, n)	((void)(p), (void)(n))
#endif

struct slab_chunk {
	struct slab_chunk *next;
};

struct dc_slab {
	pthread_mutex_t lock;
	size_t objsize;
	void *free;			/* free objects, linked through word 0 */
	struct slab_chunk *chunks;
	char *bump, *bump_end;		/* uncarved rest of the newest chunk */
};

/* ---- failure injection ------------------------------------------------- */

static long fail_every;			/* see dc_debug_fail_alloc */
static uint64_t live_entries;		/* slab objects handed out, all caches */
static uint64_t live_bytes;		/* dc__malloc'd and not freed, all caches */
static uint64_t fail_counter, fail_rng, fail_count;

DC_API void dc_debug_fail_alloc(long every, uint64_t seed)
{
	dc__store(fail_counter, 0);
	dc__store(fail_rng, seed * 2 + 1);
	dc__store(fail_count, 0);
	dc__store(fail_every, every);
}

DC_API uint64_t dc_debug_failed_allocs(void)
{
	return dc__load(fail_count);
}

static bool should_fail(void)
{
	long every = dc__load(fail_every);
	uint64_t n;

	if (every == 0)
		return false;
	if (every > 0) {
		n = __atomic_add_fetch(&fail_counter, 1, __ATOMIC_RELAXED);
		if (n % (uint64_t)every)
			return false;
	} else {
		/* xorshift; racing threads may share a draw, which is fine */
		uint64_t x = dc__load(fail_rng);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		dc__store(fail_rng, x);
		if (x % (uint64_t)(-every))
			return false;
	}
	__atomic_add_fetch(&fail_count, 1, __ATOMIC_RELAXED);
	return true;
}

/* ---- general allocations ----------------------------------------------- */

void *dc__malloc(struct dc_cache *c, size_t size)
{
	void *p;

	if (should_fail())
		return NULL;
	p = malloc(size);
	if (!p)
		return NULL;
	if (c)
		__atomic_add_fetch(&c->bytes, size, __ATOMIC_RELAXED);
	__atomic_add_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	return p;
}

void *dc__calloc(struct dc_cache *c, size_t size)
{
	void *p = dc__malloc(c, size);

	if (p)
		memset(p, 0, size);
	return p;
}

void *dc__calloc_aligned(size_t size)
{
	void *p;

	if (should_fail() || posix_memalign(&p, 64, size))
		return NULL;
	__atomic_add_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	memset(p, 0, size);
	return p;
}

void dc__free(struct dc_cache *c, void *p, size_t size)
{
	if (!p)
		return;
	if (c)
		__atomic_sub_fetch(&c->bytes, size, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	free(p);
}

/* ---- the slab ---------------------------------------------------------- */

int dc__slab_new(struct dc_slab **out, size_t objsize)
{
	struct dc_slab *s;

	if (should_fail() || !(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->objsize = (objsize + 7) & ~(size_t)7;
	*out = s;
	return 0;
}

/* Carve a new chunk; called with the lock held. */
static int slab_grow(struct dc_cache *c, struct dc_slab *s)
{
	struct slab_chunk *ch = dc__malloc(c, SLAB_CHUNK);

	if (!ch)
		return -ENOMEM;
	ch->next = s->chunks;
	s->chunks = ch;
	/* objects follow the 8-byte header, so they stay 8-byte aligned */
	s->bump = (char *)(ch + 1);
	s->bump_end = (char *)ch + SLAB_CHUNK;
	return 0;
}

void *dc__slab_alloc(struct dc_cache *c)
{
	struct dc_slab *s = c->slab;
	void *obj = NULL;

	if (should_fail())
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (s->free) {
		obj = s->free;
		unpoison(obj, s->objsize);
		s->free = *(void **)obj;
	} else if ((size_t)(s->bump_end - s->bump) >= s->objsize || slab_grow(c, s) == 0) {
		obj = s->bump;
		s->bump += s->objsize;
	}
	pthread_mutex_unlock(&s->lock);
	if (obj) {
		memset(obj, 0, s->objsize);
		__atomic_add_fetch(&live_entries, 1, __ATOMIC_RELAXED);
	}
	return obj;
}

void dc__slab_free(struct dc_cache *c, void *obj)
{
	struct dc_slab *s = c->slab;

	pthread_mutex_lock(&s->lock);
	*(void **)obj = s->free;
	s->free = obj;
	/* the free-list link stays readable; the rest is off limits */
	poison((char *)obj + sizeof(void *), s->objsize - sizeof(void *));
	pthread_mutex_unlock(&s->lock);
	__atomic_sub_fetch(&live_entries, 1, __ATOMIC_RELAXED);
}

DC_API uint64_t dc_debug_live_entries(void)
{
	return dc__load(live_entries);
}

DC_API uint64_t dc_debug_live_bytes(void)
{
	return dc__load(live_bytes);
}

void dc__slab_destroy(struct dc_cache *c)
{
	struct dc_slab *s = c->slab;
	struct slab_chunk *ch, *next;

	if (!s)
		return;
	for (ch = s->chunks; ch; ch = next) {
		next = ch->next;
		unpoison(ch, SLAB_CHUNK);
		dc__free(c, ch, SLAB_CHUNK);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
	c->slab = NULL;
}
