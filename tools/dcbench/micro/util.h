/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.h - the general helpers dcbench micro uses: allocation that exits
 * on failure (the suite has a mount to undo), and reading a whole file
 * that may be xz-compressed (through common/logreader.h).  Its seeded
 * random numbers (common/rng.h) come with it.
 */
#ifndef DCBENCH_MICRO_UTIL_H
#define DCBENCH_MICRO_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"

/* malloc, calloc, realloc that never return NULL: out of memory, they
 * print the size and exit(1) (an atexit handler unmounts). */
void oom(size_t n) __attribute__((noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);

/* The least power of two >= n, at least 16. */
uint64_t pow2_at_least(uint64_t n);

/*
 * The whole of file into a malloc'd buffer (*out, *outlen), decompressed
 * if it is xz.  0, or -1 with a message on stderr.
 */
int slurp(const char *file, char **out, size_t *outlen);

#endif /* DCBENCH_MICRO_UTIL_H */
