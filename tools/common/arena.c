// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arena.c - a bump allocator in chunks, freed all at once (arena.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"

#define CHUNK_MIN	(1u << 20)
#define CHUNK_HEAD	16	/* the link, rounded up to keep 16-byte alignment */

void *arena_alloc(struct arena *a, size_t n)
{
	void *r;

	n = (n + 7) & ~(size_t)7;
	if ((size_t)(a->end - a->p) < n) {
		size_t sz = n + CHUNK_HEAD > CHUNK_MIN ? n + CHUNK_HEAD : CHUNK_MIN;
		char *c = malloc(sz);

		if (!c)
			return NULL;
		*(void **)c = a->chunks;
		a->chunks = c;
		a->p = c + CHUNK_HEAD;
		a->end = c + sz;
		a->held += sz;
	}
	r = a->p;
	a->p += n;
	a->used += n;
	return r;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

void arena_free(struct arena *a)
{
	while (a->chunks) {
		void *next = *(void **)a->chunks;

		free(a->chunks);
		a->chunks = next;
	}
	memset(a, 0, sizeof(*a));
}
