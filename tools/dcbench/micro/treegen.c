/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * treegen.c - the scenarios' other trees: derived from the listing (a
 * random subset, the short names alone) or generated (deep chains, chains
 * of one length each for the depth scenarios, long names, a cold tree of
 * millions of entries), all from a seed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "micro/micro.h"
#include "micro/util.h"

/* A subset of about `want` entries: random files and their ancestors. */
struct tree *tree_subset(const struct tree *src, uint32_t want,
			 const char *label, uint64_t seed)
{
	uint32_t *files = xmalloc(src->nfiles * sizeof(*files)), nf = 0, have = 0;
	uint32_t *map = xcalloc(src->nn, sizeof(*map));	/* new index + 1 */
	bool *in = xcalloc(src->nn, sizeof(*in));
	struct tree *t = tree_new(label);

	for (uint32_t i = 1; i < src->nn; i++)
		if (src->n[i].type == 'f')
			files[nf++] = i;
	for (uint32_t i = nf; i > 1; i--) {
		uint32_t j = rng_below(&seed, i), x = files[i - 1];

		files[i - 1] = files[j];
		files[j] = x;
	}
	in[0] = true;
	for (uint32_t k = 0; k < nf && have < want; k++) {
		uint32_t need = 0;

		for (uint32_t a = files[k]; !in[a]; a = src->n[a].parent)
			need++;
		if (have + need > want)
			continue;
		for (uint32_t a = files[k]; !in[a]; a = src->n[a].parent)
			in[a] = true;
		have += need;
	}
	map[0] = 1;
	for (uint32_t i = 1; i < src->nn; i++) {
		const struct tnode *x = &src->n[i];

		if (!in[i])
			continue;
		map[i] = 1 + tree_add(t, map[x->parent] - 1, x->type, tname(src, i),
				      x->len, NULL, 0);
	}
	free(files);
	free(map);
	free(in);
	tree_index_dirs(t);
	return t;
}

/* The tree without symlinks and without any name over max bytes; at most
 * limit entries (the root included), taken in order. */
struct tree *tree_filter(const struct tree *src, size_t max, uint32_t limit,
			 const char *label)
{
	uint32_t *map = xcalloc(src->nn, sizeof(*map));
	struct tree *t = tree_new(label);

	map[0] = 1;
	for (uint32_t i = 1; i < src->nn && t->nn < limit; i++) {
		const struct tnode *x = &src->n[i];

		if (x->type == 'l' || x->len > max || !map[x->parent])
			continue;
		map[i] = 1 + tree_add(t, map[x->parent] - 1, x->type, tname(src, i),
				      x->len, NULL, 0);
	}
	free(map);
	tree_index_dirs(t);
	return t;
}

/* deep: 1,024 chains of 29 directories (binary branching over the first
 * ten levels), four files at the end of each: every path 30 components. */
struct tree *tree_deep(void)
{
	struct tree *t = tree_new("deep");
	uint32_t *lev = xmalloc(30 * 1024 * sizeof(*lev));
	char name[32];

	for (uint32_t k = 0; k < 1024; k++) {
		uint32_t parent = 0;

		for (unsigned j = 0; j < 29; j++) {
			uint32_t bits = j < 10 ? k >> (9 - j) : k;
			uint32_t *s = &lev[j * 1024 + bits];
			bool exists = j < 10 ? (k & ((1u << (9 - j)) - 1)) != 0 : false;

			if (!exists) {
				int n = snprintf(name, sizeof(name), "d%02u_%x", j, bits);

				*s = tree_add(t, parent, 'd', name, (size_t)n, NULL, 0);
			}
			parent = *s;
		}
		for (unsigned f = 0; f < 4; f++) {
			int n = snprintf(name, sizeof(name), "file%u.c", f);

			tree_add(t, parent, 'f', name, (size_t)n, NULL, 0);
		}
	}
	free(lev);
	tree_index_dirs(t);
	return t;
}

/*
 * depthN: 64 directories under the root, each the head of a chain of
 * depth - 2 directories with one child each, 64 files at the end of each
 * chain: DEPTH_LEAVES files, every path `depth` components, every name 8
 * bytes.  Between two depths only the chains' length differs: the same
 * fan-out at the top and at the leaves, the same names, so a lookup's
 * extra cost is the extra components alone.
 */
struct tree *tree_depth(unsigned depth)
{
	enum { FAN = 64 };	/* FAN * FAN == DEPTH_LEAVES */
	struct tree *t;
	char label[16], name[16];

	_Static_assert(FAN * FAN == DEPTH_LEAVES, "the leaves are FAN x FAN");
	snprintf(label, sizeof(label), "depth%u", depth);
	t = tree_new(label);
	for (unsigned a = 0; a < FAN; a++) {
		int n = snprintf(name, sizeof(name), "dir%05u", a);
		uint32_t d = tree_add(t, 0, 'd', name, (size_t)n, NULL, 0);

		for (unsigned j = 2; j < depth; j++) {
			n = snprintf(name, sizeof(name), "sub%05u", j);
			d = tree_add(t, d, 'd', name, (size_t)n, NULL, 0);
		}
		for (unsigned f = 0; f < FAN; f++) {
			n = snprintf(name, sizeof(name), "file%04u", f);
			tree_add(t, d, 'f', name, (size_t)n, NULL, 0);
		}
	}
	tree_index_dirs(t);
	return t;
}

static size_t random_name(uint64_t *rs, char *buf, size_t minlen, size_t maxlen,
			  unsigned long uniq)
{
	static const char cs[] = "abcdefghijklmnopqrstuvwxyz0123456789_-.";
	size_t n = minlen + rng_below(rs, (uint32_t)(maxlen - minlen + 1));
	size_t k = (size_t)snprintf(buf, 24, "%lx-", uniq);

	while (k < n)
		buf[k++] = cs[rng_below(rs, sizeof(cs) - 1)];
	buf[n] = '\0';
	return n;
}

/* longnames: 16 x 16 directories, 32 files in each; every name 40-200 bytes. */
struct tree *tree_longnames(uint64_t seed)
{
	struct tree *t = tree_new("longnames");
	char name[256];
	unsigned long u = 0;

	for (unsigned a = 0; a < 16; a++) {
		size_t n = random_name(&seed, name, 40, 200, u++);
		uint32_t da = tree_add(t, 0, 'd', name, n, NULL, 0);

		for (unsigned b = 0; b < 16; b++) {
			uint32_t db;

			n = random_name(&seed, name, 40, 200, u++);
			db = tree_add(t, da, 'd', name, n, NULL, 0);
			for (unsigned c = 0; c < 32; c++) {
				n = random_name(&seed, name, 40, 200, u++);
				tree_add(t, db, 'f', name, n, NULL, 0);
			}
		}
	}
	tree_index_dirs(t);
	return t;
}

/* cold: 100 directories of 100 directories, the rest files spread over
 * them, `entries` in all; file names 6-24 bytes. */
struct tree *tree_cold(uint64_t entries, uint64_t seed)
{
	static const char *const ext[] = { ".c", ".h", ".o", ".S", "", ".txt" };
	struct tree *t = tree_new("cold");
	uint32_t mids[10000];
	uint64_t nfiles;
	char name[64];

	if (entries < 20000)
		entries = 20000;
	nfiles = entries - 10100;
	t->cap = (uint32_t)entries + 2;
	t->n = xrealloc(t->n, t->cap * sizeof(*t->n));
	for (unsigned a = 0; a < 100; a++) {
		int n = snprintf(name, sizeof(name), "dir%02u", a);
		uint32_t da = tree_add(t, 0, 'd', name, (size_t)n, NULL, 0);

		for (unsigned b = 0; b < 100; b++) {
			n = snprintf(name, sizeof(name), "sub%02u", b);
			mids[a * 100 + b] = tree_add(t, da, 'd', name, (size_t)n, NULL, 0);
		}
	}
	for (uint64_t f = 0; f < nfiles; f++) {
		int n = snprintf(name, sizeof(name), "%" PRIx64 "_", f);
		unsigned extra = 2 + rng_below(&seed, 12);
		const char *e = ext[rng_below(&seed, 6)];

		while (extra--)
			name[n++] = (char)('a' + rng_below(&seed, 26));
		n += snprintf(name + n, sizeof(name) - (size_t)n, "%s", e);
		tree_add(t, mids[f % 10000], 'f', name, (size_t)n, NULL, 0);
	}
	tree_index_dirs(t);
	return t;
}
