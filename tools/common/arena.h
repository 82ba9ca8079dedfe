/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arena.h - a bump allocator: many small objects that live and die
 * together (a replay's strings, a reference implementation's nodes),
 * packed 8-byte aligned into chunks of at least a mebibyte and freed all
 * at once.  Not thread-safe: one owner allocates.
 */
#ifndef DC_TOOLS_ARENA_H
#define DC_TOOLS_ARENA_H

#include <stddef.h>

struct arena {
	void *chunks;		/* linked through their first word */
	char *p, *end;		/* the free part of the newest chunk */
	size_t used;		/* bytes handed out, alignment included */
	size_t held;		/* bytes of all chunks */
};				/* all zero: an empty arena */

/* n bytes, 8-byte aligned; NULL when no memory is left (a is unchanged). */
void *arena_alloc(struct arena *a, size_t n);

/* A copy of s[0..n) with a NUL after it; NULL when no memory is left. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

/* Frees every chunk; a is empty again. */
void arena_free(struct arena *a);

#endif
