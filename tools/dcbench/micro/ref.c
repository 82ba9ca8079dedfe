/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ref.c - what the references share (ref.h): the node arena, the hash
 * key, the build loop.
 */
#include <stdlib.h>
#include <string.h>

#include "micro/ref.h"
#include "micro/util.h"

struct dc_hkey g_hkey;

void ref_hash_init(uint64_t seed)
{
	/* drawn per run, as libdcache draws one per cache, but from --seed */
	uint64_t ks = seed ^ 0x4a5b;

	g_hkey.k0 = rng_next(&ks);
	g_hkey.k1 = rng_next(&ks);
}

/* An arena allocation, or exit: the suite has no use for a half-built reference. */
void *ref_alloc(struct arena *a, size_t n)
{
	void *p = arena_alloc(a, n);

	if (!p)
		oom(n);
	return p;
}

void *ref_build(struct impl *im, const struct tree *t, size_t node_bytes,
		void *(*add)(struct impl *im, const struct tree *t, uint32_t i,
			     void *parent, size_t node_bytes))
{
	void **tmp = xmalloc(t->nn * sizeof(*tmp)), *root;

	for (uint32_t i = 0; i < t->nn; i++)
		tmp[i] = add(im, t, i, i ? tmp[t->n[i].parent] : NULL, node_bytes);
	root = tmp[0];
	free(tmp);
	return root;
}

void *ref_walk(struct impl *im, void *root, const char *p,
	       void *(*find)(struct impl *im, void *dir, const char *name,
			     size_t len))
{
	void *cur = root;

	while (cur && *p) {
		size_t len = strcspn(p, "/");

		cur = find(im, cur, p, len);
		p += len;
		while (*p == '/')
			p++;
	}
	return cur;
}
