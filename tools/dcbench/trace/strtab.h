/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strtab.h - a table of distinct strings, each with an id (0, 1, ... in
 * the order first interned), stored back to back in blob: the trace
 * file's string table as it is written.  Zero-initialised, it is empty.
 */
#ifndef DCBENCH_TRACE_STRTAB_H
#define DCBENCH_TRACE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	char *blob;
	size_t len, cap;
	size_t *off;		/* per id */
	uint32_t *hash;		/* per id, to rehash without re-reading */
	uint32_t n, ncap;
	uint32_t *slot;		/* id + 1, 0 empty */
	uint32_t nslots;	/* power of two */
};

/* The id of s (NUL-terminated, n bytes), adding it; DCT_NONE if out of memory. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t n);
void strtab_free(struct strtab *t);

#endif /* DCBENCH_TRACE_STRTAB_H */
