/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ref.h - what the two in-memory references (ref_lfht.c, ref_mutex.c)
 * share: libdcache's own component hash, keyed from --seed, so that every
 * implementation hashes a name with the same code, a word at a time; and
 * the build loop that gives each tree node its table node.
 */
#ifndef DCBENCH_MICRO_REF_H
#define DCBENCH_MICRO_REF_H

/* first (it maps liburcu's names): libdcache's component hash, the same
 * code (static inline) for every table */
#include "../../../src/internal.h"
#include <urcu/urcu-memb.h>

#include "micro/micro.h"

extern struct dc_hkey g_hkey;	/* the references' key, from --seed */

/*
 * The length of the component at s (up to a '/' or end) and its hash
 * salted with dir: libdcache's dc__hash_component and dc__hash_salt, so
 * that every implementation hashes a name with the same code, a word at
 * a time.
 */
static inline uint32_t comp_hash(const char *s, const char *end, const void *dir,
				 uint32_t *len)
{
	uint64_t key;

	*len = (uint32_t)dc__hash_component(s, end, &g_hkey, &key);
	return dc__hash_salt(key, dir);
}

static inline uint32_t name_hash(const char *name, size_t len, const void *dir)
{
	uint32_t l;

	return comp_hash(name, name + len, dir, &l);
}

/* A node of head bytes and a name of len bytes with its NUL, padded to
 * node_bytes. */
static inline size_t ref_node_size(size_t head, size_t len, size_t node_bytes)
{
	size_t sz = head + len + 1;

	return sz > node_bytes ? sz : node_bytes;
}

/*
 * Give every node of t, parents first, a table node: add(im, t, i,
 * parent's table node or NULL for the root, node_bytes) makes and
 * inserts it.  The root's table node.
 */
void *ref_build(struct impl *im, const struct tree *t, size_t node_bytes,
		void *(*add)(struct impl *im, const struct tree *t, uint32_t i,
			     void *parent, size_t node_bytes));

/*
 * The node of path p below root: find(im, dir, name, len) looks one
 * component up (the caller holds what find needs held).  NULL if a
 * component is missing.
 */
void *ref_walk(struct impl *im, void *root, const char *p,
	       void *(*find)(struct impl *im, void *dir, const char *name,
			     size_t len));

#endif /* DCBENCH_MICRO_REF_H */
