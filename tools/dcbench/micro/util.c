/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.c - dcbench micro's general helpers (util.h): allocation that
 * exits, and a whole listing read into memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/logreader.h"
#include "micro/util.h"

void oom(size_t n)
{
	fprintf(stderr, "dcbench micro: out of memory (%zu bytes)\n", n);
	exit(1);	/* the atexit handler unmounts */
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

/* Read a whole file, decompressing it if it is xz. */
int slurp(const char *file, char **out, size_t *outlen)
{
	struct logreader r;
	char err[256], *buf = NULL;
	size_t len = 0, cap = 0;
	long n;

	if (lr_open(&r, file, err, sizeof(err))) {
		fprintf(stderr, "dcbench micro: %s\n", err);
		lr_close(&r);
		return -1;
	}
	do {
		if (cap - len < READ_CHUNK) {
			cap = cap ? cap * 2 : 4 * READ_CHUNK;
			buf = xrealloc(buf, cap);
		}
		n = lr_read(&r, buf + len, cap - len, err, sizeof(err));
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	lr_close(&r);
	if (n < 0) {
		fprintf(stderr, "dcbench micro: %s: %s\n", file, err);
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}
