/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scenario.c - what each scenario looks up: its tree, its paths with the
 * answer each must get, and the caches' and tables' sizes for it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "micro/micro.h"
#include "micro/util.h"

const char *const sc_names[SC_NR] = {
	"hot", "small", "negative", "deep", "longnames", "cold",
	"mixed-1", "mixed-10", "samefile", "depth2", "depth4", "depth8", "depth16",
	"storm",
};

unsigned sc_depth(int sc)
{
	switch (sc) {
	case SC_DEPTH2:
		return 2;
	case SC_DEPTH4:
		return 4;
	case SC_DEPTH8:
		return 8;
	case SC_DEPTH16:
		return 16;
	}
	return 0;
}

static void tg_add(struct targets *g, const char *p, size_t len, int32_t expect,
		   unsigned ncomp)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->off = xrealloc(g->off, g->cap * sizeof(*g->off));
		g->expect = xrealloc(g->expect, g->cap * sizeof(*g->expect));
		g->ncomp = xrealloc(g->ncomp, g->cap);
	}
	if (g->plen + len + 1 > g->pcap) {
		g->pcap = (g->plen + len + 1) * 2;
		g->pool = xrealloc(g->pool, g->pcap);
	}
	memcpy(g->pool + g->plen, p, len + 1);
	g->off[g->n] = g->plen;
	g->plen += len + 1;
	g->expect[g->n] = expect;
	g->ncomp[g->n] = (uint8_t)ncomp;
	g->n++;
}

static void tg_finish(struct targets *g)
{
	g->path = xmalloc((g->n + 1) * sizeof(*g->path));
	for (uint32_t i = 0; i < g->n; i++)
		g->path[i] = g->pool + g->off[i];
	free(g->off);
	g->off = NULL;
}

static void tg_free(struct targets *g)
{
	free(g->pool);
	free(g->off);
	free(g->path);
	free(g->expect);
	free(g->ncomp);
	memset(g, 0, sizeof(*g));
}

static void add_file_targets(struct scen *s)
{
	char path[PBUF];

	for (uint32_t i = 1; i < s->t->nn; i++) {
		long len;

		if (s->t->n[i].type != 'f')
			continue;
		len = tree_path(s->t, i, path, sizeof(path));
		if (len > 0)
			tg_add(&s->tg, path, (size_t)len, (int32_t)i, s->t->n[i].depth);
	}
}

int scen_build(struct bench *b, struct scen *s, int id)
{
	char path[PBUF];

	memset(s, 0, sizeof(*s));
	s->id = id;
	switch (id) {
	case SC_HOT:
	case SC_NEGATIVE:
	case SC_MIXED1:
	case SC_MIXED10:
	case SC_SAMEFILE:
		s->t = b->hot;
		break;
	case SC_SMALL:
		s->t = tree_subset(b->hot, 2000, "small", b->seed ^ 0x5a11);
		break;
	case SC_DEEP:
		s->t = tree_deep();
		break;
	case SC_LONGNAMES:
		s->t = tree_longnames(b->seed ^ 0x10c6);
		break;
	case SC_DEPTH2:
	case SC_DEPTH4:
	case SC_DEPTH8:
	case SC_DEPTH16:
		s->t = tree_depth(sc_depth(id));
		break;
	case SC_COLD:
		progress("generating the cold tree (%" PRIu64 " entries)", b->cold_entries);
		s->t = tree_cold(b->cold_entries, b->seed ^ 0xc01d);
		break;
	}
	s->mixed_pct = id == SC_MIXED1 ? 1 : id == SC_MIXED10 ? 10 : 0;
	if (s->mixed_pct && !s->t->ndirs)
		return -2;	/* its updates go in directories below the root */
	if (id == SC_SAMEFILE) {
		static const char *const pref[] = { "include/linux/fs.h", "Makefile" };
		int32_t pick = -1;

		for (unsigned k = 0; k < 2 && pick < 0; k++)
			for (uint32_t i = 1; i < s->t->nn && pick < 0; i++)
				if (s->t->n[i].type == 'f' &&
				    tree_path(s->t, i, path, sizeof(path)) > 0 &&
				    !strcmp(path, pref[k]))
					pick = (int32_t)i;
		for (uint32_t i = 1; i < s->t->nn && pick < 0; i++)
			if (s->t->n[i].type == 'f' && s->t->n[i].depth >= 3)
				pick = (int32_t)i;
		if (pick < 0)
			return -1;
		tree_path(s->t, (uint32_t)pick, path, sizeof(path));
		tg_add(&s->tg, path, strlen(path), pick, s->t->n[pick].depth);
		s->samefile = true;
	} else {
		add_file_targets(s);
	}
	if (id == SC_NEGATIVE) {
		uint32_t n = s->tg.n;

		/* the same paths with the last component changed: misses */
		for (uint32_t i = 0; i < n; i++) {
			const char *p = s->tg.pool + s->tg.off[i];
			size_t len = strlen(p);

			if (len + 4 >= sizeof(path))
				continue;
			memcpy(path, p, len);
			memcpy(path + len, "#nx", 4);
			tg_add(&s->tg, path, len + 3, -1, s->tg.ncomp[i]);
			s->negatives++;
		}
	}
	tg_finish(&s->tg);
	if (s->tg.n == 0)
		return -1;
	{
		uint64_t need = (uint64_t)s->t->nn + s->negatives;

		s->max_entries = need + need / 2 + 65536;
		s->max_negative = (uint64_t)s->negatives * 2 + 65536;
		/* libdcache sizes its own buckets from max_entries; the
		 * references get the textbook pre-size for what they hold */
		s->nbuckets = pow2_at_least(s->t->nn);
	}
	s->ref_node_bytes = b->ref_node_bytes;
	s->ttl_ms = b->ttl_ms;
	s->cred = b->as ? &b->cred : NULL;
	return 0;
}

void scen_free(struct bench *b, struct scen *s)
{
	tg_free(&s->tg);
	if (s->t != b->hot)
		tree_free(s->t);
	s->t = NULL;
}

uint64_t tg_comps(const struct targets *g)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < g->n; i++)
		n += g->ncomp[i];
	return n;
}
