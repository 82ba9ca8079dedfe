/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.h - the two helpers every part of the trace pipeline uses: an
 * error message into a caller's buffer, and a growing array.
 */
#ifndef DCBENCH_TRACE_UTIL_H
#define DCBENCH_TRACE_UTIL_H

#include <stddef.h>

/* Format a one-line message into err (errlen bytes; err may be NULL). */
void dct_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Make room for need elements of size sz in the array *pa points at
 * (capacity *cap, doubled as needed).  0, or -1 with the array unchanged.
 */
int dct_grow(void *pa, size_t *cap, size_t need, size_t sz);

#endif /* DCBENCH_TRACE_UTIL_H */
