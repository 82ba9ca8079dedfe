/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strtab.c - the importer's string table: each distinct path once, by id
 * in the order first seen, in one blob laid out as the trace file stores
 * it; an open-addressing hash finds a path's id.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "trace/strtab.h"
#include "trace/trace.h"
#include "trace/util.h"

static uint32_t hash_str(const char *s, size_t n)
{
	uint64_t h = hash_fnv1a(s, n, HASH_FNV_OFFSET);

	return (uint32_t)(h ^ (h >> 32));
}

static bool strtab_rehash(struct strtab *t)
{
	uint32_t ns = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return false;
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t i = t->hash[id] & (ns - 1);

		while (slot[i])
			i = (i + 1) & (ns - 1);
		slot[i] = id + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslots = ns;
	return true;
}

static bool strtab_add(struct strtab *t, const char *s, size_t n, uint32_t h)
{
	if (t->n == t->ncap) {
		size_t c = t->ncap ? (size_t)t->ncap * 2 : 1024;
		size_t *off = realloc(t->off, c * sizeof(*off));
		uint32_t *hash;

		if (!off)
			return false;
		t->off = off;
		hash = realloc(t->hash, c * sizeof(*hash));
		if (!hash)
			return false;
		t->hash = hash;
		t->ncap = (uint32_t)c;
	}
	if (dct_grow(&t->blob, &t->cap, t->len + n + 1, 1))
		return false;
	memcpy(t->blob + t->len, s, n + 1);
	t->off[t->n] = t->len;
	t->hash[t->n] = h;
	t->len += n + 1;
	t->n++;
	return true;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t n)
{
	uint32_t h = hash_str(s, n), i;

	if ((uint64_t)(t->n + 1) * 2 > t->nslots && !strtab_rehash(t))
		return DCT_NONE;
	for (i = h & (t->nslots - 1); t->slot[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = t->slot[i] - 1;

		if (t->hash[id] == h && strcmp(t->blob + t->off[id], s) == 0)
			return id;
	}
	if (t->n >= UINT32_MAX - 1 || !strtab_add(t, s, n, h))
		return DCT_NONE;
	t->slot[i] = t->n;
	return t->n - 1;
}

void strtab_free(struct strtab *t)
{
	free(t->blob);
	free(t->off);
	free(t->hash);
	free(t->slot);
}
