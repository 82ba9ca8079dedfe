/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.c - error messages and growing arrays for the trace pipeline.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace/util.h"

void dct_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int dct_grow(void *pa, size_t *cap, size_t need, size_t sz)
{
	void **ap = pa;
	size_t n = *cap ? *cap : 16;
	void *b;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	b = realloc(*ap, n * sz);
	if (!b)
		return -1;
	*ap = b;
	*cap = n;
	return 0;
}
